//! Two component systems in one system file (`scenarios/components-two-cores.toml`): the
//! component paper's Fig. 7 system, each task in an SPR reservation (5 ms per period,
//! `eta = 500 us`), on fixed-priority core 0, and a system shaped like the paper's Fig. 3
//! (two clients call a forwarder, which propagates priority; its procedure, like a third
//! client, calls a server under IPCP) on fixed-priority core 1.
//!
//! The components on one core, with the connections between them, are that core's system:
//! the configuration analyzer settles each system's ceilings and pools, and both are lowered
//! into one machine. The paper's platform is one processor and the cores share nothing, so:
//! - each core's schedule is its system's run alone (lowered as a component file is), slice
//!   for slice;
//! - each task's worst priority inversion stays within its own system's `B_i` (plus SPR's
//!   `I_i` on core 0), and its worst response within the response-time bound with that
//!   blocking, with no miss and no reservation run out.

use bulwark_sim::Machine;

use super::component_parts::{components_error, part_runs, protocol_check};
use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::component_system::compose;
use crate::report::ExperimentReport;

pub const EXPERIMENT: Experiment = Experiment {
    name: "components-two-cores",
    title: "Two component systems, one per core, in one system file",
    run,
};

fn run() -> Result<ExperimentReport, LabError> {
    let file = built_in_scenario(EXPERIMENT.name)?;
    let composed = compose(file).map_err(components_error)?;
    let whole = Machine::new(&composed, &super::recording())?
        .measuring_inversion(true)
        .run(&mut |_| {})?;
    let parts = part_runs(&composed, &whole)?;
    if parts.len() != 2 {
        return Err(components_error("the file declares two component systems"));
    }
    let mut checks = Vec::new();
    for part in &parts {
        checks.extend([
            part.schedule_check(),
            part.inversion_check(),
            part.response_check(),
        ]);
    }
    checks.push(protocol_check(&whole));
    let mut tables: Vec<_> = parts
        .iter()
        .map(|part| {
            part.table(format!(
                "Core {}'s component tasks in the composed run, beside their system's \
                 analysis: the R bound and B_i + I_i",
                part.core
            ))
        })
        .collect();
    tables.push(super::textbook::summary_table(&whole));
    Ok(ExperimentReport {
        source: "CAmkES component paper (Figs. 3 and 7, sections 3.2 and 5) and SPR paper \
                 (Eq. 1), one component system per core"
            .into(),
        summary: format!(
            "One system file, `scenarios/components-two-cores.toml`: the component paper's \
             Fig. 7 system (configuration 1, each task in an SPR reservation of 5 ms per \
             period with eta = 500 us) on fixed-priority core 0, and a Fig. 3-shaped system \
             (clients one and two call the forwarder, which propagates priority; its procedure \
             and client three call the server, an IPCP CPI) on fixed-priority core 1, placed \
             by each \
             [[component]]'s `core`. Each core's components form a system of their own, \
             analysed and lowered apart; one machine runs both cores for {} with no kernel \
             costs.",
            composed.duration
        ),
        checks,
        tables,
        ..EXPERIMENT.blank_report()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::failing_claims;

    #[test]
    fn every_check_passes() {
        let report = run().expect("the experiment runs");
        assert!(failing_claims(&report.checks).is_empty(), "{report:#?}");
        // Three checks per core, and the protocol check.
        assert_eq!(report.checks.len(), 7);
        // t1..t4 of Fig. 7 on core 0; one, two and three on core 1.
        assert_eq!(report.tables[0].rows.len(), 4);
        assert_eq!(report.tables[1].rows.len(), 3);
    }
}
