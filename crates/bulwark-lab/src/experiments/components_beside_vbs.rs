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

use bulwark_analysis::component_graph;
use bulwark_core::Duration;
use bulwark_sim::components::{component_tasks, ComponentTaskOutcome, ProtocolCosts};
use bulwark_sim::Machine;
use bulwark_spec::Scenario;

use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::component_system::{
    admitted_responses, compose, lower, timings_with_regions, TASK_COLUMNS,
};
use crate::report::{headings, Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "components-beside-vbs",
    title: "Components in SPR reservations on one core, variable-bandwidth servers on the \
            other, in one system file",
    run,
};

/// The analysis of the component system: per task `B_i + I_i` and the response bound.
struct Bounds {
    blocking: Vec<Duration>,
    response: Vec<Option<Duration>>,
}

fn components_error(e: impl ToString) -> LabError {
    LabError::Components(e.to_string())
}

/// The component system of `composed` lowered as a component file is (one core of its own),
/// and its analysis with the scenario's protocol costs.
fn alone_and_bounds(composed: &Scenario) -> Result<(Scenario, Bounds), LabError> {
    let part = composed
        .components
        .as_ref()
        .ok_or_else(|| components_error("the file declares no component system"))?;
    let analysis = component_graph::analyze(&part.system);
    let lowered = lower(&part.system, &analysis, ProtocolCosts::of(&composed.cost))
        .map_err(components_error)?;
    let timings = timings_with_regions(&part.system, &lowered)
        .ok_or_else(|| components_error("the blocking analysis refused the system"))?;
    let response = admitted_responses(&timings);
    let bounds = Bounds {
        blocking: timings.iter().map(|t| t.blocking).collect(),
        response,
    };
    let alone = bulwark_sim::components::scenario(&lowered.machine, composed.duration);
    Ok((alone, bounds))
}

fn run() -> Result<ExperimentReport, LabError> {
    let file = built_in_scenario(EXPERIMENT.name)?;
    let composed = compose(file).map_err(components_error)?;
    let part = composed
        .components
        .as_ref()
        .expect("composed from a component system");
    let (alone, bounds) = alone_and_bounds(&composed)?;
    let mut vbs_alone = built_in_scenario("vbs-processes")?;
    vbs_alone.duration = composed.duration;

    let options = super::recording();
    let whole = Machine::new(&composed, &options)?
        .measuring_inversion(true)
        .run(&mut |_| {})?;
    let components_alone = bulwark_sim::run(&alone, &options)?;
    let vbs_run = bulwark_sim::run(&vbs_alone, &options)?;

    let records = whole.components.clone().unwrap_or_default();
    let measured: Vec<ComponentTaskOutcome> = component_tasks(&composed)
        .map(|i| records.tasks.get(i).cloned().flatten().unwrap_or_default())
        .collect();
    let names: Vec<String> = part
        .system
        .tasks()
        .iter()
        .map(|(_, t)| t.name.clone())
        .collect();
    // Non-empty and equal: an empty trace would compare equal to another.
    let same = |a: Vec<(String, u64, u64)>, b: Vec<(String, u64, u64)>| !a.is_empty() && a == b;
    let core = part.core;
    let components_same = same(
        super::slices_by_name(&whole, &composed, core),
        super::slices_by_name(&components_alone, &alone, 0),
    );
    let vbs_same = same(
        super::slices_by_name(&whole, &composed, 1 - core),
        super::slices_by_name(&vbs_run, &vbs_alone, 0),
    );
    let each = |f: &dyn Fn(usize) -> String| (0..names.len()).map(f).collect::<Vec<_>>().join(", ");
    let jobs_ran = measured.len() == names.len() && measured.iter().all(|t| t.jobs > 0);
    let checks = vec![
        Check {
            claim: format!(
                "core {core}'s schedule is the component system's run alone (lowered as a \
                 component file), slice for slice"
            ),
            expected: "identical".into(),
            measured: if components_same {
                "identical"
            } else {
                "different"
            }
            .into(),
            pass: components_same,
        },
        Check {
            claim: "core 1's schedule is vbs-processes.toml's run alone (same horizon), slice \
                    for slice"
                .into(),
            expected: "identical".into(),
            measured: if vbs_same { "identical" } else { "different" }.into(),
            pass: vbs_same,
        },
        Check {
            claim: "each component task's worst priority inversion stays within B_i + I_i (the \
                    component paper's blocking plus SPR's lower-priority eta)"
                .into(),
            expected: "inversion <= B_i + I_i, for t1..t4".into(),
            measured: each(&|i| {
                format!(
                    "{} {} <= {}",
                    names[i], measured[i].max_inversion, bounds.blocking[i]
                )
            }),
            pass: jobs_ran
                && (0..names.len()).all(|i| measured[i].max_inversion <= bounds.blocking[i]),
        },
        Check {
            claim: "every component job meets its deadline, within the response-time bound with \
                    blocking B_i + I_i, and no reservation runs out"
                .into(),
            expected: "0 misses, 0 exhaustions, max response <= R_i".into(),
            measured: each(&|i| {
                let t = &measured[i];
                let bound = bounds.response[i].map_or("none".into(), |b| b.to_string());
                format!(
                    "{} {} <= {bound} ({} misses, {} out)",
                    names[i], t.max_response, t.misses, t.budget_exhaustions
                )
            }),
            pass: jobs_ran
                && (0..names.len()).all(|i| {
                    let t = &measured[i];
                    t.misses == 0
                        && t.budget_exhaustions == 0
                        && bounds.response[i].is_some_and(|b| t.max_response <= b)
                }),
        },
        Check {
            claim: "no protocol step refused and no pool exhausted".into(),
            expected: "0 errors, 0 exhausted pools".into(),
            measured: format!(
                "{} errors, {} exhausted pools",
                records.protocol_errors, records.pool_exhausted
            ),
            pass: records.protocol_errors == 0 && records.pool_exhausted == 0,
        },
    ];
    let rows = (0..names.len())
        .map(|i| {
            let t = &measured[i];
            vec![
                names[i].clone(),
                t.jobs.to_string(),
                t.misses.to_string(),
                t.max_response.to_string(),
                bounds.response[i].map_or("-".into(), |b| b.to_string()),
                t.max_inversion.to_string(),
                bounds.blocking[i].to_string(),
            ]
        })
        .collect();
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
            Table {
                caption: "The component tasks in the composed run, beside the analysis: the R \
                          bound and B_i + I_i"
                    .into(),
                header: headings(TASK_COLUMNS),
                rows,
            },
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
        let failing: Vec<_> = report.checks.iter().filter(|c| !c.pass).collect();
        assert!(failing.is_empty(), "{failing:#?}");
        assert_eq!(report.checks.len(), 5);
        // t1..t4 of Fig. 7.
        assert_eq!(report.tables[0].rows.len(), 4);
    }
}
