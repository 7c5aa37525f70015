//! A composed scenario's component systems measured against themselves and their analysis,
//! core by core: what the experiments with `[[component]]` tables in a scenario file check.
//!
//! Partitioned cores share nothing, so each component system's core must run exactly as the
//! system does alone (lowered as a component file is, on a core of its own), and each of its
//! tasks must keep the component paper's bounds: worst priority inversion within `B_i` (plus
//! SPR's `I_i`, the longest lower-priority `eta`, for tasks in reservations), and worst
//! response within the response-time bound with that blocking, with no miss and no
//! reservation run out.

use bulwark_analysis::component_graph;
use bulwark_core::Duration;
use bulwark_sim::components::{component_tasks, ComponentTaskOutcome, ProtocolCosts};
use bulwark_sim::Outcome;
use bulwark_spec::{ComponentPart, Scenario};

use super::LabError;
use crate::component_system::{admitted_responses, lower, timings_with_regions, TASK_COLUMNS};
use crate::report::{headings, Check, Table};

pub(super) fn components_error(e: impl ToString) -> LabError {
    LabError::Components(e.to_string())
}

/// One component system of a composed run: its tasks as measured there, beside its analysis.
pub(super) struct PartRun {
    /// The core it runs on.
    pub(super) core: u16,
    /// Its tasks' names, in the system's order.
    pub(super) names: Vec<String>,
    /// Its tasks' measures in the composed run, in the same order.
    pub(super) measured: Vec<ComponentTaskOutcome>,
    /// Per task, `B_i + I_i`.
    pub(super) blocking: Vec<Duration>,
    /// Per task, the response-time bound with that blocking, if the analysis admits it.
    pub(super) response: Vec<Option<Duration>>,
    /// Its core's slices in the composed run are the system's run alone, slice for slice.
    pub(super) same_as_alone: bool,
}

/// A component system on a core of its own, and its analysis.
struct Alone {
    /// The system lowered as a component file is.
    scenario: Scenario,
    /// Per task, `B_i + I_i`.
    blocking: Vec<Duration>,
    /// Per task, the response-time bound with that blocking, if the analysis admits it.
    response: Vec<Option<Duration>>,
}

/// The component system `part` of `composed` lowered as a component file is (one core of its
/// own), and its analysis with the scenario's protocol costs.
fn alone_and_bounds(composed: &Scenario, part: &ComponentPart) -> Result<Alone, LabError> {
    let analysis = component_graph::analyze(&part.system);
    let lowered = lower(&part.system, &analysis, ProtocolCosts::of(&composed.cost))
        .map_err(components_error)?;
    let timings = timings_with_regions(&part.system, &lowered)
        .ok_or_else(|| components_error("the blocking analysis refused the system"))?;
    let response = admitted_responses(&timings);
    let blocking = timings.iter().map(|t| t.blocking).collect();
    let scenario = bulwark_sim::components::scenario(&lowered.machine, composed.duration);
    Ok(Alone {
        scenario,
        blocking,
        response,
    })
}

/// Every component system of `composed` (lowered), measured in `whole`, the composed run
/// (with a trace and inversion measured), beside its analysis and its run alone.
pub(super) fn part_runs(composed: &Scenario, whole: &Outcome) -> Result<Vec<PartRun>, LabError> {
    if composed.components.is_empty() {
        return Err(components_error("the file declares no component system"));
    }
    let records = whole.components.as_ref();
    let options = super::recording();
    let ranges = component_tasks(composed);
    composed
        .components
        .iter()
        .zip(ranges)
        .map(|(part, range)| {
            let Alone {
                scenario: alone,
                blocking,
                response,
            } = alone_and_bounds(composed, part)?;
            let alone_run = bulwark_sim::run(&alone, &options)?;
            let measured = range
                .map(|i| {
                    let task = records.and_then(|records| records.tasks.get(i)?.as_ref());
                    task.cloned().unwrap_or_default()
                })
                .collect();
            let names = (part.system.tasks().iter())
                .map(|(_, task)| task.name.clone())
                .collect();
            let composed_slices = super::slices_by_name(whole, composed, part.core);
            // Non-empty and equal: an empty trace would compare equal to another.
            let same_as_alone = !composed_slices.is_empty()
                && composed_slices == super::slices_by_name(&alone_run, &alone, 0);
            Ok(PartRun {
                core: part.core,
                names,
                measured,
                blocking,
                response,
                same_as_alone,
            })
        })
        .collect()
}

impl PartRun {
    fn each(&self, f: impl Fn(usize) -> String) -> String {
        (0..self.names.len()).map(f).collect::<Vec<_>>().join(", ")
    }

    fn jobs_ran(&self) -> bool {
        self.measured.len() == self.names.len() && self.measured.iter().all(|t| t.jobs > 0)
    }

    /// The check that its core runs as the system does alone.
    pub(super) fn schedule_check(&self) -> Check {
        let word = if self.same_as_alone {
            "identical"
        } else {
            "different"
        };
        Check {
            claim: format!(
                "core {}'s schedule is the component system's run alone (lowered as a \
                 component file), slice for slice",
                self.core
            ),
            expected: "identical".into(),
            measured: word.into(),
            pass: self.same_as_alone,
        }
    }

    /// The check that every task's worst inversion is within `B_i + I_i`.
    pub(super) fn inversion_check(&self) -> Check {
        Check {
            claim: format!(
                "each component task's worst priority inversion on core {} stays within \
                 B_i + I_i (the component paper's blocking plus SPR's lower-priority eta)",
                self.core
            ),
            expected: format!("inversion <= B_i + I_i, for {}", self.names.join(", ")),
            measured: self.each(|i| {
                format!(
                    "{} {} <= {}",
                    self.names[i], self.measured[i].max_inversion, self.blocking[i]
                )
            }),
            pass: self.jobs_ran()
                && (0..self.names.len())
                    .all(|i| self.measured[i].max_inversion <= self.blocking[i]),
        }
    }

    /// The check that every job meets its deadline within its response bound, and no
    /// reservation runs out.
    pub(super) fn response_check(&self) -> Check {
        Check {
            claim: format!(
                "every component job on core {} meets its deadline, within the response-time \
                 bound with blocking B_i + I_i, and no reservation runs out",
                self.core
            ),
            expected: "0 misses, 0 exhaustions, max response <= R_i".into(),
            measured: self.each(|i| {
                let task = &self.measured[i];
                let bound = self.response[i].map_or("none".into(), |b| b.to_string());
                format!(
                    "{} {} <= {bound} ({} misses, {} out)",
                    self.names[i], task.max_response, task.misses, task.budget_exhaustions
                )
            }),
            pass: self.jobs_ran()
                && (0..self.names.len()).all(|i| {
                    let task = &self.measured[i];
                    task.misses == 0
                        && task.budget_exhaustions == 0
                        && self.response[i].is_some_and(|b| task.max_response <= b)
                }),
        }
    }

    /// Its tasks in the composed run beside the analysis, under `caption`.
    pub(super) fn table(&self, caption: String) -> Table {
        let rows = (0..self.names.len())
            .map(|i| {
                let task = &self.measured[i];
                vec![
                    self.names[i].clone(),
                    task.jobs.to_string(),
                    task.misses.to_string(),
                    task.max_response.to_string(),
                    self.response[i].map_or("-".into(), |b| b.to_string()),
                    task.max_inversion.to_string(),
                    self.blocking[i].to_string(),
                ]
            })
            .collect();
        Table {
            caption,
            header: headings(TASK_COLUMNS),
            rows,
        }
    }
}

/// The check that no protocol step was refused and no pool ran out in `whole`.
pub(super) fn protocol_check(whole: &Outcome) -> Check {
    let (errors, exhausted) = (whole.components.as_ref()).map_or((0, 0), |records| {
        (records.protocol_errors, records.pool_exhausted)
    });
    Check {
        claim: "no protocol step refused and no pool exhausted".into(),
        expected: "0 errors, 0 exhausted pools".into(),
        measured: format!("{errors} errors, {exhausted} exhausted pools"),
        pass: errors == 0 && exhausted == 0,
    }
}
