//! A deterministic machine for MC-IPC: clustered reservations, client tasks, shared servers.
//!
//! The MC-IPC setting (MC-IPC paper, sections III-V): clusters of cores under
//! [`ClusteredScheduler`], client tasks in reservations, and sequential resource servers
//! reached through IPC gates with bandwidth inheritance.
//!
//! The system: `K` clusters, cluster `k` of `m_k` cores with its own top-level scheduler
//! ([`ClusterConfig`] from `bulwark-core`); client tasks, each bound to one reservation of one
//! cluster and running a cyclic script ([`ScriptStep`]); and servers, each sequential (one request at
//! a time) behind an [`IpcGate`]. Time is integer nanoseconds. The kernel's scheduling and
//! IPC take no time; scripts, operations and reclamation do, and so does a context switch
//! when the cost table gives one (added to the work of the task or server switched to).
//! [`Config::from_system`] builds a configuration from an MC-IPC file's model.
//!
//! Reclamation (the reclamation paper): each task is a process of `bulwark_core::reclaim`'s
//! capability tree, spawned into its reclamation group ([`TaskConfig::group`]) when it has
//! one. A [`ScriptStep::Allocate`] creates objects as the task's own execution, each charged to the
//! group's quota, those that do not fit refused. A [`ScriptStep::Terminate`] reclaims the target's
//! group (its arena and scrub list: at most the quota) or, without a group, its process
//! object by object; the work, at [`CostModel::reclaim_per_unit`], runs in the kernel on the
//! caller's core with interrupts masked, so that core keeps the caller, whatever its scheduler selects,
//! until the reclamation is done ([`MaskRecord`]). A selected reservation on a masked core
//! still drains (A2). Killed tasks' pending jobs end (`killed`), their requests leave their
//! gates, and they are never released again. Each such system call takes at least one unit of
//! work.
//!
//! Rules the machine follows, with the paper's words:
//! - a reservation selected by its cluster's scheduler dispatches its first ready task (in task
//!   order); if none is ready, the server that one of its waiting tasks invoked (bandwidth
//!   inheritance, section III: "S_q is dispatched using R_j's budget whenever T_i would have
//!   been dispatched ... unless S_q is suspended or already executing on another processor").
//!   A server keeps the core it is running on while that core's reservation still dispatches
//!   it (so it is "already executing" there, and other reservations idle);
//! - a selected reservation that dispatches nothing idles and still drains (A2); its core is
//!   then lent to the most urgent ready task of a reservation of the same cluster that has
//!   budget but is not selected, or of a best-effort reservation (slack reclamation, section
//!   III). Work done on slack is charged to nobody: only selected reservations drain;
//! - a server inherits from every client with a request at its gate, whatever queue it is in
//!   (Fig. 1, line 19), until the reply or a prune (lines 41, 47, 51). Servers never
//!   self-suspend here, so "suspended" only ever means "serving nothing";
//! - a client whose reservation is exhausted (or has no budget when it invokes) has its request
//!   aborted (section IV: "called by the top-level scheduler when the reservation of a waiting
//!   task exhausts its current budget"). A pruned request is reissued when the reservation has
//!   budget again, or, with [`PrunedRequests::TransferToBackground`] and an MC-IPC gate, moved to
//!   the background queue and reissued from there (section V); a request already in service
//!   completes normally;
//! - Vestal's mode switch (section VII) is each cluster's scheduler's: when one switches to
//!   high mode, the requests of its demoted (low-criticality) reservations are aborted as on
//!   an exhaustion and reissued at once with their demoted priority; the machine closes an
//!   instant (lets the switch happen) once everything due at it has been done;
//! - a task's job is released at `offset + j * period`, or when the previous job completes if
//!   that is later (jobs of one task never overlap); it runs the script from where the last job
//!   stopped until a [`ScriptStep::SleepUntilNextPeriod`]. A task needs its core to take any step,
//!   even one that takes no time (an invocation, or the step after a reply).
//!
//! Determinism: at one instant the machine finishes operations (servers in order), then steps
//! the tasks that were on a core (cores in order), then releases jobs in (time, sequence)
//! order, then aborts and reissues (tasks in order), then lets idle servers take a request; it
//! chooses the dispatch in (cluster, core) order. Random draws come from one ChaCha stream per
//! task seeded with [`Config::seed`]. So a configuration always gives the same outcome.

mod from_system;
mod machine;

pub use crate::Timing;
pub use from_system::placements;
pub use machine::{Stretch, Worker};

use bulwark_core::ipc::mc_ipc::GateError;
pub use bulwark_core::ipc::GateProtocol;
use bulwark_core::ipc::IpcGate;
use bulwark_core::reservation::clustered::{
    ClusterConfig, ClusteredScheduler, ConfigurationError, Mode, ReservationId,
};
use bulwark_core::{Duration, Instant};

/// A client task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskConfig {
    /// The cluster its reservation belongs to.
    pub cluster: usize,
    /// The reservation it runs in. Several tasks may share one; the analysis of section IV
    /// assumes one.
    pub reservation: ReservationId,
    /// The first release.
    pub offset: Duration,
    /// The time between releases (non-zero).
    pub period: Duration,
    /// The steps, run cyclically (non-empty).
    pub script: Vec<ScriptStep>,
    /// The reclamation group its process is spawned into (an index into
    /// [`Config::groups`]), if any.
    pub group: Option<usize>,
}

/// A reclamation group: its processes' objects live in one arena, and every allocation is
/// charged its anticipated reclamation time against `quota` (the reclamation paper, section
/// III), so terminating the group masks a core for at most `quota`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupConfig {
    /// The reclamation time the group may commit (non-zero).
    pub quota: Duration,
}

/// What kernel work costs: the cost table of every Bulwark file, of which this machine
/// charges, at a `clock_hz` clock, `reclaim_per_unit` cycles per unit of
/// `bulwark_core::reclaim` work and `context_switch` cycles per switch of a core to another
/// task or server (simulated timing only).
pub use bulwark_spec::CostModel;

/// A task's script: the MC-IPC file's own steps, run as they are.
pub use bulwark_spec::mc_ipc_toml::ScriptStep;
pub use bulwark_spec::Execution;

/// Which IPC protocol a server's gate implements.
#[derive(Clone, Copy, Debug)]
pub enum GateKind {
    /// The gate of one of the paper's protocols: [`McIpcGate`](bulwark_core::ipc::McIpcGate)
    /// (Fig. 1), [`FifoGate`](bulwark_core::ipc::FifoGate) or
    /// [`PrioGate`](bulwark_core::ipc::PrioGate).
    Protocol(GateProtocol),
    /// Any other gate, built from the number of tasks (the client ids are `0..tasks`) and the
    /// cores of each cluster.
    Custom(fn(usize, &[usize]) -> Box<dyn IpcGate + Send>),
}

/// A resource server.
#[derive(Clone, Copy, Debug)]
pub struct ServerConfig {
    /// Its gate.
    pub gate: GateKind,
    /// `L_q`, the maximum operation length (non-zero).
    pub max_operation: Duration,
}

/// What becomes of a request pruned because its client's reservation ran out of budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrunedRequests {
    /// It is reissued when the reservation has budget again (section IV-A).
    Reissue,
    /// It waits in the MC-IPC gate's background queue and is reissued with its priority on
    /// replenishment if still pending (the prototype's "opportunistic improvement", section
    /// V). Gates other than MC-IPC have no background queue and reissue instead.
    TransferToBackground,
}

/// A system to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The clusters, `C_1 .. C_K`.
    pub clusters: Vec<ClusterConfig>,
    /// The servers, `S_1 .. S_nr`.
    pub servers: Vec<ServerConfig>,
    /// The client tasks; task `i` is client id `TaskId(i)` at every gate.
    pub tasks: Vec<TaskConfig>,
    /// What becomes of pruned requests.
    pub pruned: PrunedRequests,
    /// The reclamation groups.
    pub groups: Vec<GroupConfig>,
    /// What kernel work costs; this machine charges reclamation work and context switches
    /// (the clock, `reclaim_per_unit` and `context_switch`).
    pub cost: CostModel,
    /// The seed of every random draw.
    pub seed: u64,
}

/// One completed invocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvocationRecord {
    /// The client task.
    pub task: usize,
    /// The server.
    pub server: usize,
    /// The client's cluster.
    pub cluster: usize,
    /// The client's reservation.
    pub reservation: ReservationId,
    /// The operation's length.
    pub length: Duration,
    /// When the client invoked the server.
    pub invoked: Instant,
    /// When the request was last issued: the invocation, or its last reissue after a prune.
    pub issued: Instant,
    /// When the server replied.
    pub replied: Instant,
    /// `replied - invoked`.
    pub delay: Duration,
    /// The budget the client's reservation drained from `invoked` to `replied` (time selected,
    /// A2).
    pub drained: Duration,
    /// The budget it drained from `issued` to `replied`: what Theorem 1 bounds when
    /// `exhausted` is false.
    pub drained_since_issue: Duration,
    /// How many times the request was pruned and reissued.
    pub reissues: u32,
    /// True if the client's reservation ran out of budget, or changed priority with its
    /// cluster's mode, between `issued` and `replied` (the request was in service, or served
    /// from the background queue): outside Theorem 1's premise ("R_j does not exhaust its
    /// budget during T_i's request").
    pub exhausted: bool,
}

/// One job of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The task.
    pub task: usize,
    /// When it was released.
    pub release: Instant,
    /// When it completed, if it did before the end of the run.
    pub completion: Option<Instant>,
    /// `completion - release`.
    pub response: Option<Duration>,
    /// True if the task was terminated before the job completed.
    pub killed: bool,
}

/// A span during which a core was masked, reclaiming a terminated task's objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskRecord {
    /// The cluster.
    pub cluster: usize,
    /// The core, within the cluster.
    pub core: usize,
    /// The task that terminated another.
    pub task: usize,
    /// The task it terminated.
    pub target: usize,
    /// Units of reclamation work done.
    pub units: u64,
    /// When the core was masked.
    pub from: Instant,
    /// When it was unmasked.
    pub until: Instant,
}

/// What one `allocate` step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationRecord {
    /// When.
    pub at: Instant,
    /// The task.
    pub task: usize,
    /// Objects created.
    pub created: u64,
    /// Objects refused by the group's quota.
    pub refused: u64,
}

/// One abort of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbortRecord {
    /// When.
    pub at: Instant,
    /// The client.
    pub task: usize,
    /// The server.
    pub server: usize,
    /// True if pruned; false if already in service (it then completes normally).
    pub pruned: bool,
}

/// A cluster's change of criticality mode (section VII).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeRecord {
    /// When.
    pub at: Instant,
    /// The cluster.
    pub cluster: usize,
    /// The new mode.
    pub mode: Mode,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterOutcome {
    /// The seed used.
    pub seed: u64,
    /// Where the run stopped.
    pub until: Instant,
    /// How many times the machine processed an instant.
    pub steps: u64,
    /// Every completed invocation, in order of reply.
    pub invocations: Vec<InvocationRecord>,
    /// Every job released, in order of release.
    pub jobs: Vec<JobRecord>,
    /// Every abort, in order.
    pub aborts: Vec<AbortRecord>,
    /// Every change of a cluster's criticality mode, in order.
    pub modes: Vec<ModeRecord>,
    /// Every masked span of reclamation, in order of start.
    pub masks: Vec<MaskRecord>,
    /// Every `allocate` step, in order.
    pub allocations: Vec<AllocationRecord>,
    /// Per task, in configuration order: the processor time used on its behalf (its own
    /// computation, masked reclamation it started, and servers' operations for its requests).
    pub executed: Vec<Duration>,
    /// Per cluster, per reservation: the budget it drained, i.e. the time it was selected
    /// (A2: a selected reservation drains whether or not anything runs in it).
    pub drained: Vec<Vec<Duration>>,
    /// How many times a core switched to another task or server than the last one it ran,
    /// each charged `cost.context_switch` cycles under simulated timing.
    pub context_switches: u64,
    /// What ran where, from [`run_traced`]: cores numbered across clusters in order, a
    /// server's operation drawn as its client task's time, each job's release and completion.
    pub trace: Option<crate::trace::Trace>,
}

/// Why a configuration could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClusterSimError {
    /// A cluster's scheduler refused its configuration.
    #[error("cluster {cluster}: {error}")]
    Cluster {
        /// The cluster.
        cluster: usize,
        /// The scheduler's reason.
        error: ConfigurationError,
    },
    /// A task's configuration is out of range.
    #[error("task {task}: {reason}")]
    Task {
        /// The task.
        task: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A server's configuration is out of range.
    #[error("server {server}: {reason}")]
    Server {
        /// The server.
        server: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A scheduler refused a call (a bug in the machine).
    #[error("the scheduler of cluster {cluster} refused a call at {at}: {error}")]
    Scheduler {
        /// The cluster.
        cluster: usize,
        /// When.
        at: Instant,
        /// Its reason.
        error: bulwark_core::SchedulerError,
    },
    /// A gate refused a call (a bug in the machine or the gate).
    #[error("the gate of server {server} refused a call at {at}: {error:?}")]
    Gate {
        /// The server.
        server: usize,
        /// When.
        at: Instant,
        /// Its reason.
        error: GateError,
    },
    /// The reclamation groups could not be built.
    #[error("reclamation group {group}: {reason}")]
    Group {
        /// The group.
        group: usize,
        /// What is wrong.
        reason: String,
    },
    /// The machine kept stepping at one instant.
    #[error("no progress at {at}")]
    Livelock {
        /// When.
        at: Instant,
    },
}

/// Checks `config` and runs it from time zero until `until` (exclusive).
pub fn run(config: &Config, until: Instant) -> Result<ClusterOutcome, ClusterSimError> {
    Kernel::new(config, until, Timing::Simulated, false)?.run()
}

/// [`run`], recording a trace (memory grows with simulated time); the run is the same.
pub fn run_traced(config: &Config, until: Instant) -> Result<ClusterOutcome, ClusterSimError> {
    Kernel::new(config, until, Timing::Simulated, true)?.run()
}

/// The cluster machine's kernel, stepped by a platform: the simulator's loop in [`run`], or a
/// runtime whose real threads do each task's computations and each server's operations.
///
/// A platform alternates [`settle`](Kernel::settle), which does everything due at the current
/// instant and says what each core runs, with [`advance`](Kernel::advance).
pub struct Kernel {
    machine: machine::Machine,
    until: Instant,
    /// Rounds taken at the current instant, against a livelock.
    rounds: u64,
}

impl Kernel {
    /// A kernel at time zero for `config`, which it validates, to run until `until`. Under
    /// [`Timing::Reported`] a script may not `allocate` or `terminate` (their work is the
    /// model's reclamation cost, which no real thread does yet).
    pub fn new(
        config: &Config,
        until: Instant,
        timing: Timing,
        record_trace: bool,
    ) -> Result<Kernel, ClusterSimError> {
        validate(config)?;
        if timing == Timing::Reported {
            let reclaims = |step: &ScriptStep| {
                matches!(
                    step,
                    ScriptStep::Allocate { .. } | ScriptStep::Terminate { .. }
                )
            };
            if let Some(task) = config
                .tasks
                .iter()
                .position(|t| t.script.iter().any(reclaims))
            {
                return Err(ClusterSimError::Task {
                    task,
                    reason: "allocate and terminate steps run only in the simulator",
                });
            }
        }
        let mut machine = machine::Machine::new(config)?.timed(timing);
        if record_trace {
            machine = machine.recording();
        }
        Ok(Kernel {
            machine,
            until,
            rounds: 0,
        })
    }

    /// The kernel's current instant.
    pub fn now(&self) -> Instant {
        self.machine.now()
    }

    /// Does everything due at the current instant; then says when the next thing happens,
    /// stretches' ends as the model times them included (what the simulator advances to), or
    /// `None` once the run's end is reached. A platform whose threads do the work reads
    /// [`stretch_on`](Kernel::stretch_on) and [`timer`](Kernel::timer) instead.
    pub fn settle(&mut self) -> Result<Option<Instant>, ClusterSimError> {
        self.machine.settle(self.until, &mut self.rounds)
    }

    /// The stretch core `core` (numbered across clusters in order) runs from now, if any.
    pub fn stretch_on(&self, core: usize) -> Option<Stretch> {
        self.machine.stretch_on(core)
    }

    /// The next instant the kernel must act whatever the workers do: a scheduler's event, the
    /// end of a masked interval or a release (no later than the end of the run).
    pub fn timer(&self) -> Instant {
        self.machine.next_kernel_event().min(self.until)
    }

    /// Time passes to `to` (no earlier than now, no later than the end) with the settled
    /// workers working and the selected reservations draining.
    pub fn advance(&mut self, to: Instant) -> Result<(), ClusterSimError> {
        let to = to.max(self.machine.now()).min(self.until);
        self.machine.advance(to)
    }

    /// Reported timing: `worker`'s stretch `serial` is done.
    pub fn stretch_done(&mut self, worker: Worker, serial: u64) {
        self.machine.stretch_done(worker, serial);
    }

    /// Ends the run and hands its record over.
    pub fn finish(self) -> ClusterOutcome {
        self.machine.finish(self.until)
    }

    fn run(mut self) -> Result<ClusterOutcome, ClusterSimError> {
        while let Some(next) = self.settle()? {
            self.advance(next)?;
        }
        Ok(self.finish())
    }
}

/// Every check that can fail, before anything runs.
fn validate(config: &Config) -> Result<(), ClusterSimError> {
    if config.tasks.len() > u32::MAX as usize {
        return Err(ClusterSimError::Task {
            task: u32::MAX as usize,
            reason: "too many tasks",
        });
    }
    if config.cost.clock_hz == 0 {
        return Err(ClusterSimError::Group {
            group: 0,
            reason: "the clock must be above zero".into(),
        });
    }
    if let Some(group) = config.groups.iter().position(|g| g.quota.is_zero()) {
        return Err(ClusterSimError::Group {
            group,
            reason: "the quota must be above zero".into(),
        });
    }
    for (server, s) in config.servers.iter().enumerate() {
        if s.max_operation.is_zero() {
            return Err(ClusterSimError::Server {
                server,
                reason: "the maximum operation length must be non-zero",
            });
        }
    }
    let mut reservations = Vec::with_capacity(config.clusters.len());
    for (cluster, c) in config.clusters.iter().enumerate() {
        let scheduler = ClusteredScheduler::new(c)
            .map_err(|error| ClusterSimError::Cluster { cluster, error })?;
        reservations.push(scheduler.reservation_count());
    }
    for (task, t) in config.tasks.iter().enumerate() {
        let refuse = |reason| Err(ClusterSimError::Task { task, reason });
        match reservations.get(t.cluster) {
            None => return refuse("no such cluster"),
            Some(&n) if t.reservation.index() >= n => return refuse("no such reservation"),
            Some(_) => {}
        }
        if t.period.is_zero() {
            return refuse("the period must be non-zero");
        }
        if t.script.is_empty() {
            return refuse("the script is empty");
        }
        if t.group.is_some_and(|g| g >= config.groups.len()) {
            return refuse("no such reclamation group");
        }
        let system_calls = t.script.iter().any(|s| {
            matches!(
                s,
                ScriptStep::Allocate { .. } | ScriptStep::Terminate { .. }
            )
        });
        if system_calls && config.cost.reclaim_per_unit == 0 {
            // Free system calls would let a script of them loop at one instant.
            return refuse("allocate and terminate need a cost per unit of reclamation work");
        }
        for step in &t.script {
            match *step {
                ScriptStep::Compute(time)
                    if time.best_case().is_zero() || time.best_case() > time.worst_case() =>
                {
                    return refuse("a computation needs 0 < min <= max");
                }
                ScriptStep::Invoke { server, length } => {
                    let Some(s) = config.servers.get(server) else {
                        return refuse("no such server");
                    };
                    if length.best_case().is_zero() || length.best_case() > length.worst_case() {
                        return refuse("an operation needs 0 < min <= max");
                    }
                    if length.worst_case() > s.max_operation {
                        return refuse("an operation is longer than the server's L_q");
                    }
                }
                ScriptStep::Allocate { count: 0, .. } => {
                    return refuse("an allocation needs a count")
                }
                ScriptStep::Terminate { task: target } if target == task => {
                    return refuse("a task cannot terminate itself");
                }
                ScriptStep::Terminate { task: target } if target >= config.tasks.len() => {
                    return refuse("no such task to terminate");
                }
                ScriptStep::Compute(_)
                | ScriptStep::SleepUntilNextPeriod
                | ScriptStep::Allocate { .. }
                | ScriptStep::Terminate { .. } => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
