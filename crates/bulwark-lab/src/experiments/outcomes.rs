//! What the scenario experiments share: loading a built-in scenario, the options that keep
//! its jobs' records, finding a task's metrics and jobs in an outcome by name, and a cluster
//! member's bound in its analysis.

use bulwark_analysis::cluster::{ClusterAnalysis, ClusterVerdict, Member};
use bulwark_analysis::global_fp::Response;
use bulwark_core::Duration;
use bulwark_sim::metrics::JobRecord;
use bulwark_sim::{Options, Outcome, TaskMetrics};
use bulwark_spec::Scenario;

use super::LabError;
use crate::scenarios::built_in;

/// The built-in scenario `name`, validated.
pub(super) fn built_in_scenario(name: &str) -> Result<Scenario, LabError> {
    Ok(built_in(name).expect("built in").scenario()?)
}

/// Simulation options that keep every job's record (and no trace).
pub(super) fn recording_jobs() -> Options {
    Options {
        record_jobs: true,
        ..Options::default()
    }
}

/// The metrics of the task called `name`.
pub(super) fn task<'a>(outcome: &'a Outcome, name: &str) -> &'a TaskMetrics {
    outcome
        .tasks
        .iter()
        .find(|t| t.name == name)
        .expect("the file names its tasks")
}

/// Every recorded job of the task called `name`, in order.
pub(super) fn jobs<'a>(outcome: &'a Outcome, name: &str) -> Vec<&'a JobRecord> {
    let index = outcome
        .tasks
        .iter()
        .position(|t| t.name == name)
        .expect("the file names its tasks");
    let mut jobs: Vec<&JobRecord> = outcome
        .jobs
        .as_ref()
        .map(|jobs| jobs.iter().filter(|j| j.task.index() == index).collect())
        .unwrap_or_default();
    jobs.sort_by_key(|j| j.job);
    jobs
}

/// The record of the first job of the task called `name`, if it was recorded.
pub(super) fn first_job<'a>(outcome: &'a Outcome, name: &str) -> Option<&'a JobRecord> {
    jobs(outcome, name).into_iter().find(|job| job.job == 0)
}

/// How many requests each task of `names` had aborted, in the order of `names`.
pub(super) fn requests_aborted(outcome: &Outcome, names: &[&str]) -> Vec<u64> {
    names
        .iter()
        .map(|name| task(outcome, name).requests_aborted)
        .collect()
}

/// The response-time bound of the member called `name` in a cluster's `analysis`, ns: `None`
/// without the cluster, the member or a bound.
pub(super) fn member_bound(analysis: Option<&ClusterAnalysis>, name: &str) -> Option<u64> {
    bound_of(analysis, name, |member| member.response)
}

/// The bound `pick` takes of the member called `name` (its response, low-mode response or
/// job response), ns, when one is bounded.
pub(super) fn bound_of(
    analysis: Option<&ClusterAnalysis>,
    name: &str,
    pick: impl Fn(&Member) -> Option<Response>,
) -> Option<u64> {
    let member = analysis?.members.iter().find(|m| m.name == name)?;
    pick(member).and_then(|r| r.bound()).map(Duration::as_nanos)
}

/// A duration of `ns` nanoseconds in words, e.g. `3ms`.
pub(super) fn ms_text(ns: u64) -> String {
    Duration::from_nanos(ns).to_string()
}

/// `name value` per entry, joined by commas: the value `of(name, by hand)`, `none` when it
/// has none.
pub(super) fn named_values(
    entries: &[(&str, u64)],
    of: impl Fn(&str, u64) -> Option<u64>,
) -> String {
    entries
        .iter()
        .map(|&(name, ns)| format!("{name} {}", of(name, ns).map_or("none".into(), ms_text)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cluster's verdict in words, for a check's measurement.
pub(super) fn verdict_name(verdict: &ClusterVerdict) -> &'static str {
    match verdict.schedulable() {
        Some(true) => "schedulable",
        Some(false) => "not shown schedulable",
        None => "not analysed",
    }
}
