//! Bulwark's machine: a deterministic discrete-event simulation of cores with one-shot timers
//! and a cost model, driving `bulwark-core` policies through the calls a kernel makes.
//!
//! The same scenario and seed always give the same outcome, byte for byte: events are ordered
//! by (time, rank, sequence number), and every random draw comes from a per-task stream seeded
//! by the scenario's seed.
//!
//! # Ties
//!
//! Every rule by which the machine breaks a tie, in one place (each is pinned by a
//! hand-worked schedule in `tests/ties.rs`, or where it says):
//!
//! 1. **A completion and a release at the same instant**: the execution that ends is handled
//!    first (events at one instant go: executions ending, then kernel exits, then timer
//!    interrupts; within a rank, first set first), so the job completes and is not preempted
//!    with no work left. A core's timer, or an interrupt another core raised, due at the
//!    instant its kernel returns is taken before the chosen task runs, as one that fired
//!    during the kernel's time is, so that task has neither started nor been preempted (it
//!    owes no cache refill).
//!    A kernel that takes no time does the same when that timer is the next event in this
//!    order (no other core's completion at the instant is still to come), so a thread given a
//!    core by a reply takes no step, even one of no time, before that instant's releases.
//! 2. **Equal fixed priorities**: first come, first served. Tasks released at the same
//!    instant are activated in the order their timeouts were armed, which at time zero is the
//!    order of the file.
//! 3. **A preempted task** keeps the head of its priority list (POSIX `SCHED_FIFO`) and
//!    resumes before its peers; a task that wakes joins the tail. A task whose next job was
//!    released by the time its current one completed never suspends (its sleep until that
//!    release returns at once, as `clock_nanosleep` does), so it keeps its place; under CBS
//!    that job is queued at the active server, which keeps its budget and deadline.
//! 4. **Equal absolute deadlines under EDF** (and CBS): the earlier activation wins, so a
//!    running job is never preempted by an equal deadline. A task whose next job was
//!    released before its current one completed is activated again at that completion,
//!    with the next job's deadline. Under CBS a server is activated each time it is queued
//!    with a deadline (renewed, kept at a wake-up, postponed, recharged), so a postponed
//!    server goes behind its peers; at one instant an exhaustion is handled before job
//!    arrivals, and arrivals before hard-CBS recharges, which come in the order the servers
//!    were throttled.
//! 5. **A completion exactly at the deadline** meets it.
//! 6. **The horizon is inclusive**: events at the horizon are handled; a job released at the
//!    horizon counts as released; an unfinished job (the current one, and every job released
//!    on plan behind it) misses when its deadline is at or before the horizon. Component
//!    systems follow the same rule, and so does each phase of an MC-IPC file (a job released
//!    at a phase's end counts in that phase).
//! 7. **Budget notices of one scheduler decision** (which an mc-ipc gate acts on) are taken
//!    by task id, each task's exhaustion before its replenishment, not in the order the
//!    budgets ran out and came back: a task whose request is reissued in that decision can
//!    become the gate's local head ahead of one aborted in it. Pinned in
//!    `tests/server_reference.rs` (`one_decisions_notices_are_acted_on_by_task`).
//! 8. **In a cluster** (`[[cluster]]`), the scheduler decides for every core of the cluster
//!    at once, whichever core entered its kernel: the other cores whose thread changed take
//!    an interrupt at the same instant and follow the decision (so a core never runs a thread
//!    its cluster did not select for it after that instant's entries). The scheduler owns
//!    the members' release timers: releases due at an instant are made by the cluster's
//!    timer interrupt at that instant, so after every completion of the instant on every
//!    core (rule 1 across the cluster), in member order. A job due before its predecessor
//!    completes has been pending since then: the completion leaves its reservation active
//!    with its budget, and the thread takes the job at the cluster's timer at that instant
//!    too (not within the completion's own entry, as on a per-core policy: rule 3); one due
//!    at the very instant of the completion is released there, to a reservation the
//!    completion left inactive. Equal EDF deadlines and equal
//!    fixed priorities go to the earlier member; a selected reservation keeps its core, and
//!    a newcomer takes the lowest free one. Pinned in `tests/cluster_reference.rs`, which
//!    runs the same systems on this machine and on a millisecond reference. The cluster's timer is held on its first core; when it fires while that
//!    core is in its kernel, the first core of the cluster that is not takes it at that
//!    instant (an inter-processor interrupt raised for a masked core still waits for its
//!    kernel to return). An exhaustion comes before anything else at its instant: a member
//!    whose last step ends as its budget runs out may still call a server then, but at an
//!    mc-ipc gate that call is pruned before an idle server takes a request. Pinned in
//!    `tests/cluster_servers.rs` (`a_call_made_as_the_budget_runs_out_is_pruned_before_the_server_takes_it`,
//!    `a_release_at_a_replys_instant_comes_before_the_callers_next_step`),
//!    `tests/cluster_server_reference.rs` (`a_siblings_release_at_a_replys_instant_comes_before_the_callers_step`:
//!    also when the reply hands the server to a lender on another core) and `tests/reclaim.rs`
//!    (`a_member_terminates_a_member_running_on_another_core_of_its_cluster`) and by the
//!    budget bound of `tests/clusters.rs`.
//! 9. **Stepped by a platform** ([`Machine::stepped`]): every event due by the platform's
//!    clock is handled at that clock's time, in the order above, as a real kernel takes a late
//!    interrupt when it arrives; a stretch reported done keeps its place among the instant's
//!    ends (the order it would have had if time had run it down), so an exact platform gives
//!    the simulated run. Pinned by `reported_stretches_give_the_simulated_outcome` in
//!    `tests/cluster_servers.rs` and `tests/composed.rs`.
//! 10. **Component systems** (CPIs, [`components`]): every protocol step that changes a
//!     priority (a call, the end of the call or reply steps, a reply) is a kernel entry. At
//!     an instant the thread whose stretch ended takes its next step first; the scheduler's
//!     decision in that entry makes the instant's releases (rule 1), so a thread that step
//!     wakes (a caller, by the reply) joins its priority behind them; the releases wake their
//!     threads in the order their timers were armed (rule 2). Inside a non-preemptive region
//!     the scheduler is not asked: a release or replenishment wakes its thread at its
//!     instant and waits for the region's end. Pinned in `tests/component_reference.rs`
//!     (random systems against a millisecond reference) and `tests/component_contexts.rs`.

pub mod behaviour;
pub mod components;
mod core_scheduler;
mod estimate;
mod event;
pub mod kernel_objects;
mod machine;
pub mod metrics;
pub mod record;
mod timing;
pub mod trace;
pub mod vbs;

use bulwark_core::{CoreError, Duration, Instant, SchedulerError};
use bulwark_spec::Scenario;
pub use core_scheduler::CoreScheduler;
pub use estimate::{estimate, Estimate, TRACE_EVENTS_PER_JOB};
pub use kernel_objects::{Allocation, KernelObjects, Termination};
pub use machine::{Machine, Stretch, Worker};
pub use metrics::{CoreMetrics, JobRecord, Stats, TaskMetrics};
pub use record::{
    BudgetSample, Discard, InvocationRecord, Kept, ModeSwitchRecord, OpenSlices, Recorder,
};
use serde::Serialize;
pub use timing::Timing;
pub use trace::{Mark, MarkKind, Slice, SliceKind, Trace};
pub use vbs::{
    ActionRecord, ActionSlice, PeriodRecord, VbsOptions, VbsProcess, VbsRecords, VbsRun, VbsSystem,
    VbsSystemError,
};

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The scenario's name.
    pub scenario: String,
    /// The policy's name.
    pub policy: String,
    /// The seed used.
    pub seed: u64,
    /// Where the run stopped.
    pub until: Instant,
    /// Events the machine processed.
    pub events: u64,
    /// Per-task aggregates, indexed by task id.
    pub tasks: Vec<TaskMetrics>,
    /// Per-core aggregates, indexed by core.
    pub cores: Vec<CoreMetrics>,
    /// Every job, when asked for (`None` when they went only to a streaming recorder).
    pub jobs: Option<Vec<JobRecord>>,
    /// The trace, when asked for.
    pub trace: Option<Trace>,
    /// The clusters of cores scheduled together (`[[cluster]]`), in file order; empty (and
    /// absent from JSON) without any. Kept apart from the per-task aggregates, which the
    /// machine updates at every event, so that they stay as small as they were.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterMembers>,
    /// The component paper's per-job measures, when the scenario has CPIs (not in JSON: the
    /// component commands print their own).
    #[serde(skip)]
    pub components: Option<Box<components::ComponentRecords>>,
}

/// A cluster's name, cores and member tasks, as an [`Outcome`] lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterMembers {
    /// The cluster's name.
    pub name: String,
    /// Its cores.
    pub cores: Vec<u16>,
    /// Its member tasks, by task id.
    pub tasks: Vec<usize>,
    /// Per member (in the order of `tasks`): the time its reservation was selected over the
    /// run, what it drained under A2 whatever ran in it (threads sharing one reservation
    /// each show the reservation's).
    pub drained_ns: Vec<u64>,
}

impl Outcome {
    /// The name of the cluster task `task` (an index into [`Outcome::tasks`]) runs in, if any.
    pub fn cluster_of(&self, task: usize) -> Option<&str> {
        self.clusters
            .iter()
            .find(|cluster| cluster.tasks.contains(&task))
            .map(|cluster| cluster.name.as_str())
    }
}

/// How to run a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Simulated time to run; the scenario's `duration` when `None`.
    pub until: Option<Duration>,
    /// Seed for random draws; the scenario's `seed` when `None`.
    pub seed: Option<u64>,
    /// Record a trace (memory grows with simulated time).
    pub record_trace: bool,
    /// Keep a record of every job (memory grows with simulated time).
    pub record_jobs: bool,
}

/// Why a run stopped early. The scenario passed validation, so these are behaviours that
/// only show up when run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// A policy refused a task at configuration.
    #[error("the policy refused task `{task}` at configuration: {error}")]
    Configuration {
        /// The task.
        task: String,
        /// The policy's reason.
        error: CoreError,
    },
    /// A cluster's scheduler refused its configuration.
    #[error("cluster `{cluster}` could not be set up{}: {error}", task.as_ref().map(|t| format!(" (task `{t}`)")).unwrap_or_default())]
    Cluster {
        /// The cluster.
        cluster: String,
        /// The member task whose reservation was refused, if one was.
        task: Option<String>,
        /// The scheduler's reason.
        error: bulwark_core::reservation::clustered::ClusterError,
    },
    /// A policy refused a kernel call (a bug in the policy or the machine).
    #[error("the policy refused `{call}` for task `{task}` at {at}: {error}")]
    Refused {
        /// The call.
        call: &'static str,
        /// The task.
        task: String,
        /// When.
        at: Instant,
        /// The policy's reason.
        error: SchedulerError,
    },
    /// A core's scheduler refused an event that names no task, or a decision (a bug in the
    /// scheduler or the machine).
    #[error("the scheduler of core {core} refused `{call}` at {at}: {error}")]
    Scheduler {
        /// The core.
        core: u16,
        /// The call.
        call: &'static str,
        /// When.
        at: Instant,
        /// The scheduler's reason.
        error: SchedulerError,
    },
    /// A script kept stepping without executing or sleeping.
    #[error("task `{task}` loops without letting time pass at {at}")]
    Spinning {
        /// The task.
        task: String,
        /// When.
        at: Instant,
    },
    /// The kernel-object model refused a task's process or a group at configuration.
    #[error("reclamation: `{name}` could not be set up: {error}")]
    Reclamation {
        /// The task or group.
        name: String,
        /// The model's reason.
        error: bulwark_core::reclaim::ReclaimError,
    },
    /// A policy's invariant broke (with [`VbsOptions::check_invariants`]).
    #[error("core {core}: the policy broke an invariant after `{call}` at {at}: {what}")]
    Invariant {
        /// The core.
        core: u16,
        /// The call after which it broke.
        call: &'static str,
        /// When.
        at: Instant,
        /// The invariant.
        what: &'static str,
    },
    /// A server's gate refused a call (a bug in the gate or the machine).
    #[error("the gate refused `{call}` for task `{task}` at {at}: {error}")]
    Gate {
        /// The call.
        call: &'static str,
        /// The task.
        task: String,
        /// When.
        at: Instant,
        /// The gate's reason.
        error: String,
    },
    /// A core kept being invoked at one instant (for example a timer always in the past).
    #[error("core {core} made no progress at {at}: a livelock in the policy or the scenario")]
    Livelock {
        /// The core.
        core: u16,
        /// When.
        at: Instant,
    },
    /// A component task's jobs came faster than they completed until its log held as many
    /// pending jobs as a run keeps.
    #[error(
        "task `{task}` had {pending} jobs pending at {at}, each released behind an unfinished \
         one: its jobs come faster than they complete, and a run keeps at most that many of a \
         task's jobs waiting (each with its measures); shorten the run, or give the task less \
         work or a longer period"
    )]
    Backlog {
        /// The task.
        task: String,
        /// Its pending jobs.
        pending: usize,
        /// When a job was due that it had no room for.
        at: Instant,
    },
    /// A task's `allocate` step would take the kernel objects alive past what a run holds
    /// ([`kernel_objects::MAX_OBJECTS`]).
    #[error(
        "task `{task}` would take the kernel objects alive past {} at {at} ({live} alive, \
         {count} more asked for): a run holds at most that many (about 88 bytes each); \
         allocate fewer, terminate the processes that hold them, or allocate in a reclamation \
         group, whose quota bounds them",
        kernel_objects::MAX_OBJECTS
    )]
    Objects {
        /// The task.
        task: String,
        /// The objects its step asked for.
        count: u64,
        /// The objects alive when it asked (or when the limit was reached in its group).
        live: u64,
        /// When.
        at: Instant,
    },
    /// The scenario's component system is not lowered onto its core yet.
    #[error(
        "the scenario's component system is not lowered onto its core yet: run \
         `bulwark_lab::component_system::compose` on it first"
    )]
    Uncomposed,
    /// A platform cannot step this scenario with real threads doing its work.
    #[error("the scenario cannot run on real threads: {reason}")]
    NotSteppable {
        /// Why.
        reason: String,
    },
}

impl SimError {
    /// A scheduler refused `call` for `scenario`'s `task` at `at`.
    pub fn refused(
        scenario: &Scenario,
        call: &'static str,
        task: bulwark_core::TaskId,
        at: Instant,
        error: impl Into<SchedulerError>,
    ) -> SimError {
        SimError::Refused {
            call,
            task: scenario
                .tasks
                .get(task.index())
                .map_or_else(String::new, |spec| spec.name.clone()),
            at,
            error: error.into(),
        }
    }
}

/// Runs `scenario` to the end.
pub fn run(scenario: &Scenario, options: &Options) -> Result<Outcome, SimError> {
    run_with_progress(scenario, options, &mut |_| {})
}

/// Runs `scenario`, calling `progress` now and then with the simulated time reached (for a
/// progress bar; the simulator itself never prints).
pub fn run_with_progress(
    scenario: &Scenario,
    options: &Options,
    progress: &mut dyn FnMut(Instant),
) -> Result<Outcome, SimError> {
    Machine::new(scenario, options)?.run(progress)
}

/// Runs `scenario` keeping a record of every VBS action and period instance (memory grows
/// with simulated time; no records when no core runs VBS).
pub fn run_vbs(
    scenario: &Scenario,
    options: &Options,
    vbs: VbsOptions,
) -> Result<VbsRun, SimError> {
    Machine::recording_vbs(scenario, options, vbs)?.run_vbs(&mut |_| {})
}

/// Runs `scenario`, telling `recorder` every job and trace event as the run goes, so a
/// streaming recorder keeps memory flat; the outcome holds only what `options` asks it to
/// keep (nothing more when both `record_` flags are off).
pub fn run_recorded(
    scenario: &Scenario,
    options: &Options,
    recorder: &mut dyn Recorder,
    progress: &mut dyn FnMut(Instant),
) -> Result<Outcome, SimError> {
    Machine::with_recorder(scenario, options, recorder)?.run(progress)
}
