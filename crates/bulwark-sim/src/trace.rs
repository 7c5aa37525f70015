//! The trace a run records when asked: what ran where, kernel time, and job events.
//!
//! A trace is plain data in time order of recording; exporters (Chrome trace JSON, SVG Gantt)
//! live in `bulwark-lab`. Recording is off unless requested, so memory does not grow with
//! simulated time in ordinary runs.

use bulwark_core::{Instant, TaskId};
use serde::Serialize;

/// What occupied a core during a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SliceKind {
    /// The task executed its own code.
    Task,
    /// The kernel ran (interrupt entry, scheduler, context switch) on behalf of `task`, whose
    /// budget it is charged to; `task` is `None` when the core then idles.
    Kernel,
    /// The task refilled its cache after a preemption: it executes, but does no useful work.
    CacheRefill,
    /// A server's operation ran on the task's scheduling context (an `invoke` step).
    Server,
    /// The task's context, lending its budget to a server's operation that ran on another
    /// core, drained its budget with nothing to run (the MC-IPC paper's assumption A2: a
    /// dispatched reservation drains whether or not anything runs in it).
    Spin,
}

/// A span of time a core spent on one thing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Slice {
    /// The core.
    pub core: u16,
    /// The task executing or charged.
    pub task: Option<TaskId>,
    /// What kind of time this was.
    pub kind: SliceKind,
    /// Start (inclusive).
    pub start: Instant,
    /// End (exclusive).
    pub end: Instant,
}

/// A point event in a task's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkKind {
    /// A job was released (the planned wake-up time).
    Release,
    /// A job completed.
    Completion,
    /// A job's deadline passed before it completed (stamped at the deadline).
    DeadlineMiss,
    /// The task suspended (sleep, job end or exit).
    Suspend,
}

/// A point event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Mark {
    /// The task.
    pub task: TaskId,
    /// The task's core.
    pub core: u16,
    /// What happened.
    pub kind: MarkKind,
    /// When.
    pub at: Instant,
    /// The job's index (0 for the first job).
    pub job: u64,
}

/// A recorded run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// Core occupancy, in the order the slices ended.
    pub slices: Vec<Slice>,
    /// Point events, in the order they were observed (not necessarily time order: a miss is
    /// stamped at its deadline but observed later).
    pub marks: Vec<Mark>,
}

impl Trace {
    /// Nanoseconds of `kind` slices charged to `task` within `[start, end)`.
    pub fn time_in(&self, task: TaskId, kind: SliceKind, start: Instant, end: Instant) -> u64 {
        self.slices
            .iter()
            .filter(|s| s.kind == kind && s.task == Some(task))
            .map(|s| {
                s.end
                    .min(end)
                    .saturating_duration_since(s.start.max(start))
                    .as_nanos()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slices [0, 4) and [6, 10) of task 0's server time and [4, 6) of its own code: within
    /// [2, 8) its server time is 2 + 2 ns, its own 2 ns; task 1 has none.
    #[test]
    fn time_in_clips_to_the_window_and_sums_one_task_and_kind() {
        let at = Instant::from_nanos;
        let slice = |kind, start, end| Slice {
            core: 0,
            task: Some(TaskId(0)),
            kind,
            start: at(start),
            end: at(end),
        };
        let trace = Trace {
            slices: vec![
                slice(SliceKind::Server, 0, 4),
                slice(SliceKind::Task, 4, 6),
                slice(SliceKind::Server, 6, 10),
            ],
            marks: Vec::new(),
        };
        assert_eq!(trace.time_in(TaskId(0), SliceKind::Server, at(2), at(8)), 4);
        assert_eq!(trace.time_in(TaskId(0), SliceKind::Task, at(2), at(8)), 2);
        assert_eq!(
            trace.time_in(TaskId(1), SliceKind::Server, at(0), at(10)),
            0
        );
        assert_eq!(trace.time_in(TaskId(0), SliceKind::Server, at(4), at(6)), 0);
    }
}
