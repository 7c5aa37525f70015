//! The component paper's Fig. 7 system and the VBS paper's processes in one system file
//! (`scenarios/components-beside-vbs.toml`): the components, each task in an SPR reservation
//! (5 ms per period, `eta = 500 us`), on a fixed-priority core 0; variable-bandwidth servers
//! on core 1.
//!
//! The file's `[[component]]` tables are the system of `components/fig7-spr.camkes`. The
//! configuration analyzer settles its CPIs' ceilings and pools and the system is lowered onto
//! core 0 beside core 1's processes, in one machine. Partitioned cores share nothing, so:
//! - core 0's schedule is the component system's run alone (lowered as a component file is),
//!   slice for slice, and core 1's is `vbs-processes.toml`'s run alone;
//! - each component task's worst priority inversion stays within the component paper's
//!   `B_i` plus SPR's `I_i` (the longest lower-priority `eta`, Eq. 1's blocking term), and
//!   its worst response within the response-time bound with that blocking;
//! - no job misses and no reservation runs out (4 ms of work against a 5 ms budget).

use super::component_parts::{components_error, part_runs, protocol_check};
use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::component_system::compose;
use crate::report::{Check, ExperimentReport};
use bulwark_sim::Machine;

pub const EXPERIMENT: Experiment = Experiment {
    name: "components-beside-vbs",
    title: "Components in SPR reservations on one core, variable-bandwidth servers on the \
            other, in one system file",
    run,
};

fn run() -> Result<ExperimentReport, LabError> {
    let file = built_in_scenario(EXPERIMENT.name)?;
    let composed = compose(file).map_err(components_error)?;
    let mut vbs_alone = built_in_scenario("vbs-processes")?;
    vbs_alone.duration = composed.duration;

    let options = super::recording();
    let whole = Machine::new(&composed, &options)?
        .measuring_inversion(true)
        .run(&mut |_| {})?;
    let vbs_run = bulwark_sim::run(&vbs_alone, &options)?;
    let [part] = &part_runs(&composed, &whole)?[..] else {
        return Err(components_error("the file declares one component system"));
    };
    let core = part.core;
    // Non-empty and equal: an empty trace would compare equal to another.
    let vbs_slices = super::slices_by_name(&whole, &composed, 1 - core);
    let vbs_same =
        !vbs_slices.is_empty() && vbs_slices == super::slices_by_name(&vbs_run, &vbs_alone, 0);
    let checks = vec![
        part.schedule_check(),
        Check {
            claim: "core 1's schedule is vbs-processes.toml's run alone (same horizon), slice \
                    for slice"
                .into(),
            expected: "identical".into(),
            measured: if vbs_same { "identical" } else { "different" }.into(),
            pass: vbs_same,
        },
        part.inversion_check(),
        part.response_check(),
        protocol_check(&whole),
    ];
    Ok(ExperimentReport {
        source: "CAmkES component paper (Fig. 7, section 3.2), SPR paper (Eq. 1) and VBS paper \
                 (Eq. 2), composed per core"
            .into(),
        summary: format!(
            "One system file, `scenarios/components-beside-vbs.toml`: the component paper's \
             Fig. 7 system ([[component]] and [[connection]] tables, configuration 1, each task \
             in an SPR reservation of 5 ms per period with eta = 500 us) on fixed-priority core \
             {core}, and the processes of `vbs-processes.toml` on core 1 under vbs. The \
             configuration analyzer settles the CPIs' ceilings and pools, the system is lowered \
             onto its core, and one machine runs both cores for {} with no kernel costs.",
            composed.duration
        ),
        checks,
        tables: vec![
            part.table(
                "The component tasks in the composed run, beside the analysis: the R bound and \
                 B_i + I_i"
                    .into(),
            ),
            super::textbook::summary_table(&whole),
        ],
        ..EXPERIMENT.blank_report()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes() {
        let report = run().expect("the experiment runs");
        super::super::assert_every_check_passes(&report, 5);
        // t1..t4 of Fig. 7.
        assert_eq!(report.tables[0].rows.len(), 4);
    }
}
