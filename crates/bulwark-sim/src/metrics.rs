//! Metrics aggregated while the run goes: constant memory per task, whatever the run length.
//! Per-job records are kept only when asked for.

use bulwark_core::{Duration, Instant, TaskId};
use serde::Serialize;

/// Running minimum, maximum and mean of a duration, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Samples seen.
    pub count: u64,
    /// Smallest sample (0 when empty).
    pub min_ns: u64,
    /// Largest sample (0 when empty).
    pub max_ns: u64,
    /// Sum of samples.
    pub sum_ns: u128,
}

impl Stats {
    /// Adds one sample.
    pub fn record(&mut self, d: Duration) {
        let n = d.as_nanos();
        if self.count == 0 || n < self.min_ns {
            self.min_ns = n;
        }
        self.max_ns = self.max_ns.max(n);
        self.sum_ns += n as u128;
        self.count += 1;
    }

    /// Mean in nanoseconds, rounded down; `None` when empty.
    pub fn mean_ns(&self) -> Option<u64> {
        (self.count > 0).then(|| (self.sum_ns / self.count as u128) as u64)
    }
}

/// One job's life, all times in nanoseconds since start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    /// The task.
    pub task: TaskId,
    /// The job's index within its task (0 for the first).
    pub job: u64,
    /// Planned release.
    pub release: Instant,
    /// When it first executed, if it did.
    pub first_start: Option<Instant>,
    /// When it completed, if it did before the run ended.
    pub completion: Option<Instant>,
    /// Absolute deadline, if the task has one.
    pub deadline: Option<Instant>,
    /// True when the deadline passed before completion (including jobs unfinished at the end
    /// whose deadline had passed).
    pub missed: bool,
}

/// Per-task aggregates.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TaskMetrics {
    /// The task's name.
    pub name: String,
    /// Its core (a cluster's member: the cluster's first core; see [`crate::Outcome::clusters`]).
    pub core: u16,
    /// Jobs released.
    pub jobs: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Jobs that missed their deadline.
    pub misses: u64,
    /// The first deadline miss (the missed deadline).
    pub first_miss: Option<Instant>,
    /// Response time (completion minus planned release) of completed jobs.
    pub response: Stats,
    /// Wake-up latency: first start minus planned release, per job.
    pub wakeup_latency: Stats,
    /// Time spent executing its own code.
    pub executed_ns: u64,
    /// Kernel time charged to it.
    pub kernel_ns: u64,
    /// Cache-refill time it paid.
    pub refill_ns: u64,
    /// Times it was preempted while ready.
    pub preemptions: u64,
    /// Units of useful work finished by `compute` steps.
    pub work_units: u64,
    /// Kernel objects its `allocate` steps created.
    pub objects_allocated: u64,
    /// Kernel objects its `allocate` steps asked for and its group's quota refused.
    pub allocations_refused: u64,
    /// Jobs cut short because another task terminated its process.
    pub killed_jobs: u64,
    /// Server operations its `invoke` steps asked for.
    pub invocations: u64,
    /// Time its scheduling context ran servers' operations for it (part of `executed_ns`).
    pub server_ns: u64,
    /// Per invocation that found its server busy: the time it waited at the gate.
    pub gate_wait: Stats,
    /// Per issue of a request to a server with bandwidth inheritance (an invoke, or the
    /// reissue of an aborted request), until its reply or its abort: its context's
    /// execution meanwhile, the operations it ran (its own and those it lent its budget to)
    /// and its spins while the operation ran on another core (the MC-IPC paper's drain,
    /// bounded by Theorem 1 at an mc-ipc gate).
    pub request_drain: Stats,
    /// Its requests an mc-ipc gate aborted (pruned) because its budget ran out; each is
    /// reissued when the budget is back.
    pub requests_aborted: u64,
}

/// Per-core aggregates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoreMetrics {
    /// Time tasks executed (including cache refill).
    pub busy_ns: u64,
    /// Time in the kernel.
    pub kernel_ns: u64,
    /// Scheduler invocations.
    pub invocations: u64,
    /// Timer interrupts taken.
    pub timer_interrupts: u64,
    /// Switches to a different task.
    pub context_switches: u64,
    /// Policy work units, summed over invocations.
    pub work_units: u64,
    /// The most work units one invocation did.
    pub max_work_units: u64,
    /// Kernel time spent reclaiming terminated processes and groups (part of `kernel_ns`).
    pub reclaim_ns: u64,
    /// The longest single stretch of reclamation kernel time, interrupts masked.
    pub max_reclaim_ns: u64,
    /// Reclamation kernel entries, each one stretch masked: a termination, or one step of a
    /// preemptible one.
    pub reclaims: u64,
}
