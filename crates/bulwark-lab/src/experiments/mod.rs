//! Experiments that reproduce published results, one module each; `bulwark reproduce` runs
//! them and writes their reports.

pub mod a1_thundering_herd;
pub mod a2_timer_interference;
pub mod a3_preemption_storm;
mod camkes_sweep;
pub mod camkes_synthetic;
mod cluster_rogue;
mod component_parts;
mod component_spr;
mod components_beside_vbs;
mod components_two_cores;
mod double_hit;
mod faas_reclaim;
mod global_reservations;
pub mod host_a1;
pub mod host_a2;
pub mod host_a3;
pub mod host_components;
pub mod host_mcipc;
pub mod host_reclaim;
mod host_rounds;
pub mod host_vbs;
mod key_server_cluster;
mod mc_ipc_reservations;
pub mod mcipc_case_study;
pub mod mcipc_cbs_rogue;
pub mod mcipc_spr_clients;
mod mixed_criticality_two_cores;
mod outcomes;
mod partitions_two_cores;
mod passive_servers;
pub mod platform;
mod reclaim_latency;
mod spr_servers_two_cores;
mod spr_vbs_cores;
mod textbook;
mod vbs_isolation;
mod vbs_overhead;
mod vbs_strategies;
pub mod vestal_mode_switch;

use crate::report::ExperimentReport;

/// Why an experiment could not run (a broken built-in scenario or a failed run); a check that
/// does not hold is not an error, it is a failing check in the report.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A built-in scenario did not validate.
    #[error("built-in scenario: {0}")]
    Scenario(#[from] bulwark_spec::Diagnostics),
    /// A simulation stopped early.
    #[error("simulation: {0}")]
    Simulation(#[from] bulwark_sim::SimError),
    /// A component system the machine refused.
    #[error("component system: {0}")]
    Components(String),
    /// An MC-IPC system the machine or its analysis refused.
    #[error("MC-IPC system: {0}")]
    McIpc(String),
}

/// A reproducible experiment.
#[derive(Clone, Copy)]
pub struct Experiment {
    /// Kebab-case id, used on the command line and as the report's directory.
    pub name: &'static str,
    /// One line saying what it shows.
    pub title: &'static str,
    /// Runs it.
    pub run: fn() -> Result<ExperimentReport, LabError>,
}

/// Simulation options that keep the trace and every job's record, for the experiments that
/// draw or inspect them.
fn recording() -> bulwark_sim::Options {
    bulwark_sim::Options {
        record_trace: true,
        record_jobs: true,
        ..bulwark_sim::Options::default()
    }
}

impl Experiment {
    /// Its report before anything is in it: its name and title, and no source, summary,
    /// checks, tables or figures yet.
    pub fn blank_report(&self) -> ExperimentReport {
        ExperimentReport {
            name: self.name.into(),
            title: self.title.into(),
            ..ExperimentReport::default()
        }
    }
}

/// Every experiment, in report order.
pub const ALL: &[Experiment] = &[
    textbook::EXPERIMENT,
    double_hit::EXPERIMENT,
    a1_thundering_herd::EXPERIMENT,
    a2_timer_interference::EXPERIMENT,
    a3_preemption_storm::EXPERIMENT,
    reclaim_latency::EXPERIMENT,
    faas_reclaim::EXPERIMENT,
    vbs_strategies::EXPERIMENT,
    vbs_overhead::EXPERIMENT,
    vbs_isolation::EXPERIMENT,
    camkes_synthetic::EXPERIMENT,
    camkes_sweep::EXPERIMENT,
    component_spr::EXPERIMENT,
    mcipc_case_study::EXPERIMENT,
    mcipc_cbs_rogue::EXPERIMENT,
    mcipc_spr_clients::EXPERIMENT,
    spr_vbs_cores::EXPERIMENT,
    components_beside_vbs::EXPERIMENT,
    components_two_cores::EXPERIMENT,
    global_reservations::EXPERIMENT,
    passive_servers::EXPERIMENT,
    mc_ipc_reservations::EXPERIMENT,
    key_server_cluster::EXPERIMENT,
    cluster_rogue::EXPERIMENT,
    partitions_two_cores::EXPERIMENT,
    vestal_mode_switch::EXPERIMENT,
    mixed_criticality_two_cores::EXPERIMENT,
    spr_servers_two_cores::EXPERIMENT,
    host_a1::EXPERIMENT,
    host_a2::EXPERIMENT,
    host_a3::EXPERIMENT,
    host_vbs::EXPERIMENT,
    host_reclaim::EXPERIMENT,
    host_components::EXPERIMENT,
    host_mcipc::EXPERIMENT,
];

/// The experiment called `name`.
pub fn find(name: &str) -> Option<&'static Experiment> {
    ALL.iter().find(|e| e.name == name)
}

/// Core `core`'s task slices as (task name, start ns, end ns), in time order: what the
/// composition experiments compare between a whole file and a part of it run alone.
pub(super) fn slices_by_name(
    o: &bulwark_sim::Outcome,
    scenario: &bulwark_spec::Scenario,
    core: u16,
) -> Vec<(String, u64, u64)> {
    let Some(trace) = o.trace.as_ref() else {
        return Vec::new();
    };
    trace
        .slices
        .iter()
        .filter(|s| s.kind == bulwark_sim::SliceKind::Task && s.core == core)
        .filter_map(|s| {
            let name = scenario.tasks.get(s.task?.index())?.name.clone();
            Some((name, s.start.as_nanos(), s.end.as_nanos()))
        })
        .collect()
}

/// Asserts that every check of `report` passes and that there are `checks` of them (a test
/// names the failing claims when one does not).
#[cfg(test)]
fn assert_every_check_passes(report: &ExperimentReport, checks: usize) {
    let failing = crate::report::failing_claims(&report.checks);
    assert!(failing.is_empty(), "{failing:?}\n{report:#?}");
    assert_eq!(report.checks.len(), checks);
}
