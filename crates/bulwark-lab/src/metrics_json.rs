//! Metrics as JSON: a run's per-task, per-core and per-job numbers for scripts (`--json`).
//!
//! Every time is integer nanoseconds, keys appear in the order the structs below declare them,
//! and an empty statistic is `null` rather than a misleading zero.
//!
//! Per-job records can also stream as JSON Lines ([`JobLines`]): one job object per line,
//! written when the job ends, with the fields of the document's `jobs` entries.

use bulwark_core::Instant;
use bulwark_sim::{CoreMetrics, JobRecord, Outcome, Recorder, Stats, TaskMetrics};
use bulwark_spec::Scenario;
use serde::Serialize;
use std::io;

use crate::names::task_name;

/// The metrics document for one run; serialize it, or embed it in a larger document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MetricsDocument<'a> {
    /// The scenario's name.
    pub scenario: &'a str,
    /// The policy's name.
    pub policy: &'a str,
    /// The seed used.
    pub seed: u64,
    /// Where the run stopped.
    pub until_ns: u64,
    /// Events the machine processed.
    pub events: u64,
    /// Per task, in task-id order.
    pub tasks: Vec<TaskDocument<'a>>,
    /// Per core, in core order.
    pub cores: Vec<CoreDocument<'a>>,
    /// Every job, present only when the run kept job records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<Vec<JobDocument>>,
    /// The component paper's measures of a scenario's component tasks, present only when it
    /// has `[[component]]` tables ([`scenario_metrics_json`] fills it in: its bounds come
    /// from the analysis, which the outcome alone does not have).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<serde_json::Value>,
}

/// One task's aggregates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskDocument<'a> {
    /// The task's id (its index).
    pub id: u32,
    /// The task's name.
    pub name: &'a str,
    /// Its core (a cluster's member: the cluster's first core).
    pub core: u16,
    /// The cluster it runs in, if any (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<&'a str>,
    /// Jobs released.
    pub jobs: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Jobs that missed their deadline.
    pub misses: u64,
    /// The first missed deadline, if any.
    pub first_miss_ns: Option<u64>,
    /// Completion minus planned release, over completed jobs.
    pub response: StatsDocument,
    /// First start minus planned release, per job.
    pub wakeup_latency: StatsDocument,
    /// Time spent executing its own code.
    pub executed_ns: u64,
    /// Kernel time charged to it.
    pub kernel_ns: u64,
    /// Cache-refill time it paid.
    pub refill_ns: u64,
    /// Times it was preempted while ready.
    pub preemptions: u64,
    /// Units of useful work finished.
    pub work_units: u64,
    /// Kernel objects created by its `allocate` steps.
    pub objects_allocated: u64,
    /// Kernel objects its group's quota refused.
    pub allocations_refused: u64,
    /// Jobs cut short when another task terminated its process.
    pub killed_jobs: u64,
    /// Server operations its `invoke` steps asked for.
    pub invocations: u64,
    /// Time its scheduling context ran servers' operations (part of `executed_ns`).
    pub server_ns: u64,
    /// Per invocation that found its server busy, the time it waited at the gate.
    pub gate_wait: StatsDocument,
    /// Per issue of a request to a server with bandwidth inheritance, its context's execution
    /// until the reply or the abort: operations it ran, and spins while one ran elsewhere.
    pub request_drain: StatsDocument,
    /// Its requests an mc-ipc gate aborted when its budget ran out.
    pub requests_aborted: u64,
}

/// A duration statistic; `min_ns`, `mean_ns` and `max_ns` are `null` when `count` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StatsDocument {
    /// Smallest sample.
    pub min_ns: Option<u64>,
    /// Mean, rounded down.
    pub mean_ns: Option<u64>,
    /// Largest sample.
    pub max_ns: Option<u64>,
    /// Samples seen.
    pub count: u64,
}

/// One core's aggregates: its index, then the simulator's own fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoreDocument<'a> {
    /// The core's index.
    pub core: u16,
    /// Busy, kernel and idle time, invocations, interrupts, switches and work.
    #[serde(flatten)]
    pub metrics: &'a CoreMetrics,
}

/// One job's life.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobDocument {
    /// The task's name.
    pub task: String,
    /// The task's id.
    pub task_id: u32,
    /// The job's index within its task.
    pub job: u64,
    /// Planned release.
    pub release_ns: u64,
    /// When it first executed, if it did.
    pub first_start_ns: Option<u64>,
    /// When it completed, if it did.
    pub completion_ns: Option<u64>,
    /// Absolute deadline, if the task has one.
    pub deadline_ns: Option<u64>,
    /// True when the deadline passed before completion.
    pub missed: bool,
}

/// The run's metrics as a serializable document.
pub fn metrics_document(outcome: &Outcome) -> MetricsDocument<'_> {
    MetricsDocument {
        scenario: &outcome.scenario,
        policy: &outcome.policy,
        seed: outcome.seed,
        until_ns: outcome.until.as_nanos(),
        events: outcome.events,
        tasks: outcome
            .tasks
            .iter()
            .enumerate()
            .map(|(id, task)| task_document(outcome, id, task))
            .collect(),
        cores: outcome
            .cores
            .iter()
            .enumerate()
            .map(|(core, metrics)| core_document(core, metrics))
            .collect(),
        jobs: outcome
            .jobs
            .as_ref()
            .map(|jobs| jobs.iter().map(|job| job_document(outcome, job)).collect()),
        components: None,
    }
}

/// The run's metrics as pretty-printed JSON.
pub fn metrics_json(outcome: &Outcome) -> String {
    // Only strings, integers, booleans and nulls: serialization to a string cannot fail.
    serde_json::to_string_pretty(&metrics_document(outcome))
        .expect("a metrics document always serializes")
}

/// [`metrics_document`] of a run of `scenario` (composed), with its component tasks'
/// measures and bounds when it has `[[component]]` tables.
pub fn scenario_metrics_document<'a>(
    scenario: &bulwark_spec::Scenario,
    outcome: &'a Outcome,
) -> MetricsDocument<'a> {
    let mut document = metrics_document(outcome);
    document.components = crate::component_measures::component_measures(scenario, outcome)
        .map(|measures| crate::component_measures::measures_json(&measures));
    document
}

/// [`scenario_metrics_document`] as text: what `simulate --json` prints, and the Python
/// package's `simulate` returns.
pub fn scenario_metrics_json(scenario: &bulwark_spec::Scenario, outcome: &Outcome) -> String {
    serde_json::to_string_pretty(&scenario_metrics_document(scenario, outcome))
        .expect("a metrics document always serializes")
}

fn nanos(instant: Instant) -> u64 {
    instant.as_nanos()
}

fn stats_document(stats: &Stats) -> StatsDocument {
    let present = stats.count > 0;
    StatsDocument {
        min_ns: present.then_some(stats.min_ns),
        mean_ns: stats.mean_ns(),
        max_ns: present.then_some(stats.max_ns),
        count: stats.count,
    }
}

fn task_document<'a>(outcome: &'a Outcome, id: usize, task: &'a TaskMetrics) -> TaskDocument<'a> {
    TaskDocument {
        id: u32::try_from(id).unwrap_or(u32::MAX),
        name: &task.name,
        core: task.core,
        cluster: outcome.cluster_of(id),
        jobs: task.jobs,
        completed: task.completed,
        misses: task.misses,
        first_miss_ns: task.first_miss.map(nanos),
        response: stats_document(&task.response),
        wakeup_latency: stats_document(&task.wakeup_latency),
        executed_ns: task.executed_ns,
        kernel_ns: task.kernel_ns,
        refill_ns: task.refill_ns,
        preemptions: task.preemptions,
        work_units: task.work_units,
        objects_allocated: task.objects_allocated,
        allocations_refused: task.allocations_refused,
        killed_jobs: task.killed_jobs,
        invocations: task.invocations,
        server_ns: task.server_ns,
        gate_wait: stats_document(&task.gate_wait),
        request_drain: stats_document(&task.request_drain),
        requests_aborted: task.requests_aborted,
    }
}

fn core_document(core: usize, metrics: &CoreMetrics) -> CoreDocument<'_> {
    CoreDocument {
        core: u16::try_from(core).unwrap_or(u16::MAX),
        metrics,
    }
}

fn job_document(outcome: &Outcome, job: &JobRecord) -> JobDocument {
    job_named(task_name(outcome, job.task), job)
}

fn job_named(task: String, job: &JobRecord) -> JobDocument {
    JobDocument {
        task,
        task_id: job.task.0,
        job: job.job,
        release_ns: nanos(job.release),
        first_start_ns: job.first_start.map(nanos),
        completion_ns: job.completion.map(nanos),
        deadline_ns: job.deadline.map(nanos),
        missed: job.missed,
    }
}

/// The outcome's kept jobs as JSON Lines, exactly as [`JobLines`] streams them; `None` when
/// the run kept no job records.
pub fn job_lines(outcome: &Outcome) -> Option<String> {
    let jobs = outcome.jobs.as_ref()?;
    let mut text = String::new();
    for job in jobs {
        text.push_str(&job_line(&job_document(outcome, job)));
    }
    Some(text)
}

/// One job as one compact line.
fn job_line(job: &JobDocument) -> String {
    // Strings, integers, booleans and nulls only: serialization cannot fail.
    let mut line = serde_json::to_string(job).expect("a job document always serializes");
    line.push('\n');
    line
}

/// Per-job records written as JSON Lines while the run goes: give it to
/// `bulwark_sim::run_recorded`. Each job is written when it ends (completed, killed, or
/// unfinished at the end), as one object per line with the fields of the metrics document's
/// `jobs` entries; nothing is kept in memory.
///
/// Writes go straight to the writer, one per job: wrap a file in a `std::io::BufWriter`.
/// The first write error stops the stream; [`JobLines::into_inner`] returns it.
pub struct JobLines<W: io::Write> {
    writer: W,
    names: Vec<String>,
    written: u64,
    error: Option<io::Error>,
}

impl<W: io::Write> JobLines<W> {
    /// Lines for the jobs of `scenario`'s tasks.
    pub fn new(writer: W, scenario: &Scenario) -> JobLines<W> {
        JobLines {
            writer,
            names: scenario
                .tasks
                .iter()
                .map(|task| task.name.clone())
                .collect(),
            written: 0,
            error: None,
        }
    }

    /// Jobs written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The writer, flushed; the first write error, if any.
    pub fn into_inner(mut self) -> io::Result<W> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.writer.flush()?;
        Ok(self.writer)
    }
}

impl<W: io::Write> Recorder for JobLines<W> {
    fn wants_jobs(&self) -> bool {
        true
    }

    fn job(&mut self, record: &JobRecord) {
        if self.error.is_some() {
            return;
        }
        let name = self
            .names
            .get(record.task.index())
            .cloned()
            .unwrap_or_else(|| format!("task {}", record.task.0));
        let line = job_line(&job_named(name, record));
        match self.writer.write_all(line.as_bytes()) {
            Ok(()) => self.written += 1,
            Err(error) => self.error = Some(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::two_tasks_one_core;
    use serde_json::{json, Value};

    fn parsed(outcome: &Outcome) -> Value {
        serde_json::from_str(&metrics_json(outcome)).expect("valid JSON")
    }

    #[test]
    fn run_identity_and_core_numbers() {
        let document = parsed(&two_tasks_one_core());
        assert_eq!(document["scenario"], "two-tasks");
        assert_eq!(document["policy"], "fixed-priority");
        assert_eq!(document["seed"], 42);
        assert_eq!(document["until_ns"], 4_000_000);
        assert_eq!(document["events"], 17);
        assert_eq!(
            document["cores"],
            json!([{
                "core": 0, "busy_ns": 2_997_750, "kernel_ns": 3_050, "invocations": 3,
                "timer_interrupts": 1, "context_switches": 2, "work_units": 5,
                "max_work_units": 2, "reclaim_ns": 0, "max_reclaim_ns": 0, "reclaims": 0
            }])
        );
    }

    #[test]
    fn tasks_carry_every_aggregate() {
        let document = parsed(&two_tasks_one_core());
        assert_eq!(
            document["tasks"][1],
            json!({
                "id": 1, "name": "log", "core": 0, "jobs": 1, "completed": 1, "misses": 1,
                "first_miss_ns": 2_000_000,
                "response": {"min_ns": 3_000_000, "mean_ns": 3_000_000, "max_ns": 3_000_000, "count": 1},
                "wakeup_latency": {"min_ns": 1_002_250, "mean_ns": 1_002_250, "max_ns": 1_002_250, "count": 1},
                "executed_ns": 1_947_750, "kernel_ns": 750, "refill_ns": 50_000,
                "preemptions": 0, "work_units": 3, "objects_allocated": 0,
                "allocations_refused": 0, "killed_jobs": 0, "invocations": 0,
                "server_ns": 0,
                "gate_wait": {"min_ns": null, "mean_ns": null, "max_ns": null, "count": 0},
                "request_drain": {"min_ns": null, "mean_ns": null, "max_ns": null, "count": 0},
                "requests_aborted": 0
            })
        );
        assert_eq!(document["tasks"][0]["first_miss_ns"], Value::Null);
    }

    #[test]
    fn empty_statistics_are_null_and_means_round_down() {
        let mut outcome = two_tasks_one_core();
        outcome.tasks[0].response = Stats::default();
        let mut stats = Stats::default();
        for ns in [1, 2, 4] {
            stats.record(bulwark_core::Duration::from_nanos(ns));
        }
        outcome.tasks[1].response = stats;
        let document = parsed(&outcome);
        assert_eq!(
            document["tasks"][0]["response"],
            json!({"min_ns": null, "mean_ns": null, "max_ns": null, "count": 0})
        );
        assert_eq!(
            document["tasks"][1]["response"],
            json!({"min_ns": 1, "mean_ns": 2, "max_ns": 4, "count": 3})
        );
    }

    #[test]
    fn jobs_appear_only_when_recorded() {
        let outcome = two_tasks_one_core();
        let document = parsed(&outcome);
        assert_eq!(
            document["jobs"],
            json!([
                {"task": "ctl", "task_id": 0, "job": 0, "release_ns": 0, "first_start_ns": 1_500,
                 "completion_ns": 1_001_500, "deadline_ns": 2_000_000, "missed": false},
                {"task": "log", "task_id": 1, "job": 0, "release_ns": 0, "first_start_ns": 1_002_250,
                 "completion_ns": 3_000_000, "deadline_ns": 2_000_000, "missed": true}
            ])
        );
        let mut without = outcome;
        without.jobs = None;
        assert!(parsed(&without).get("jobs").is_none());
    }

    #[test]
    fn keys_keep_declaration_order_and_seeds_stay_exact() {
        let mut outcome = two_tasks_one_core();
        outcome.seed = u64::MAX;
        let text = metrics_json(&outcome);
        let position = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
        assert!(position("scenario") < position("policy"));
        assert!(position("until_ns") < position("events"));
        assert!(position("tasks") < position("cores"));
        // The job list, not a task's "jobs" count, which comes first.
        assert!(position("cores") < text.find("\"jobs\": [").unwrap());
        assert!(text.contains("\"seed\": 18446744073709551615"));
        assert_eq!(metrics_json(&outcome), text);
    }
}
