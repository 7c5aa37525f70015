//! Where a run's per-job records and trace events go while the run goes.
//!
//! The machine hands every finished job, every piece of core occupancy, every job event and
//! every budget change to a [`Recorder`] as it happens. The in-memory recorder behind
//! [`crate::Options`] keeps them in the [`crate::Outcome`] (memory grows with simulated time);
//! a streaming recorder writes them out at once, so memory stays flat however long the run.
//!
//! Slices arrive in pieces: the machine reports what a core did between two of its own
//! events, and adjacent pieces of the same kind for the same task form one slice. A recorder
//! that wants whole slices merges them; [`OpenSlices`] holds back only the last slice of each
//! core, the only one that can still grow.

use bulwark_core::reservation::clustered::Mode;
use bulwark_core::{Duration, Instant, TaskId};
use serde::Serialize;

use crate::metrics::JobRecord;
use crate::trace::{Mark, Slice, Trace};

/// A reservation's budget left, read from the policy at a kernel entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BudgetSample {
    /// The task whose reservation it is.
    pub task: TaskId,
    /// The task's core.
    pub core: u16,
    /// When it was read.
    pub at: Instant,
    /// Budget left at `at`.
    pub remaining: Duration,
}

/// Receives a run's records as the machine produces them, in a deterministic order.
///
/// Every method has a default that ignores its argument, so a recorder implements only what
/// it keeps. The machine skips the work of producing trace events unless a recorder
/// [`wants_trace`](Recorder::wants_trace), and job records unless one
/// [`wants_jobs`](Recorder::wants_jobs).
pub trait Recorder {
    /// True when slices, marks and budget samples are wanted.
    fn wants_trace(&self) -> bool {
        false
    }

    /// True when per-job records are wanted.
    fn wants_jobs(&self) -> bool {
        false
    }

    /// A job ended (completed, killed, or unfinished at the end of the run).
    fn job(&mut self, record: &JobRecord) {
        let _ = record;
    }

    /// A piece of core occupancy, clipped to the run and never empty. It may continue the
    /// core's previous piece (same task, same kind, starting where that one ended).
    fn slice(&mut self, slice: &Slice) {
        let _ = slice;
    }

    /// A job event, in the order observed.
    fn mark(&mut self, mark: &Mark) {
        let _ = mark;
    }

    /// A reservation's budget changed since the last sample of its task.
    fn budget(&mut self, sample: &BudgetSample) {
        let _ = sample;
    }

    /// True when a record of every answered server invocation is wanted.
    fn wants_invocations(&self) -> bool {
        false
    }

    /// A server answered an invocation.
    fn invocation(&mut self, record: &InvocationRecord) {
        let _ = record;
    }

    /// True when a record of every change of a cluster's criticality mode is wanted.
    fn wants_mode_switches(&self) -> bool {
        false
    }

    /// A cluster switched to high mode, or returned to low mode.
    fn mode_switch(&mut self, record: &ModeSwitchRecord) {
        let _ = record;
    }

    /// The run ended: nothing more will come. Recorders holding slices back write them now.
    fn finish(&mut self) {}
}

/// A recorder that keeps every job, every answered invocation and every change of a
/// cluster's mode, as the machine hands them over (no trace): what an experiment judges a
/// run of servers and clusters by.
#[derive(Clone, Debug, Default)]
pub struct Kept {
    /// Every job of every task, completed or not (one unfinished at the end included).
    pub jobs: Vec<JobRecord>,
    /// Every answered invocation of every client.
    pub invocations: Vec<InvocationRecord>,
    /// Every change of a cluster's criticality mode, in order.
    pub modes: Vec<ModeSwitchRecord>,
}

impl Recorder for Kept {
    fn wants_jobs(&self) -> bool {
        true
    }

    fn job(&mut self, record: &JobRecord) {
        self.jobs.push(*record);
    }

    fn wants_invocations(&self) -> bool {
        true
    }

    fn invocation(&mut self, record: &InvocationRecord) {
        self.invocations.push(*record);
    }

    fn wants_mode_switches(&self) -> bool {
        true
    }

    fn mode_switch(&mut self, record: &ModeSwitchRecord) {
        self.modes.push(*record);
    }
}

/// A recorder that keeps nothing: runs that need only the aggregates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard;

impl Recorder for Discard {}

/// The last slice of each core, held back until it can no longer grow.
#[derive(Clone, Debug, Default)]
pub struct OpenSlices {
    open: Vec<Option<Slice>>,
}

impl OpenSlices {
    /// Adds a piece; returns the core's previous slice when this piece does not continue it
    /// (that slice is then final).
    pub fn push(&mut self, piece: &Slice) -> Option<Slice> {
        let core = usize::from(piece.core);
        if self.open.len() <= core {
            self.open.resize(core + 1, None);
        }
        let slot = &mut self.open[core];
        if let Some(last) = slot.as_mut() {
            if last.task == piece.task && last.kind == piece.kind && last.end == piece.start {
                last.end = piece.end;
                return None;
            }
        }
        slot.replace(*piece)
    }

    /// Every slice still open, in core order, leaving none.
    pub fn drain(&mut self) -> impl Iterator<Item = Slice> + '_ {
        self.open.drain(..).flatten()
    }

    /// How many slices are held back (at most one per core).
    pub fn held(&self) -> usize {
        self.open.iter().flatten().count()
    }
}

/// The in-memory recorder behind [`crate::Options`]: the trace and job list of the outcome.
#[derive(Clone, Debug, Default)]
pub(crate) struct Memory {
    pub(crate) trace: Option<Trace>,
    pub(crate) jobs: Option<Vec<JobRecord>>,
    /// Per core, the index in `trace.slices` of its last slice, the one a piece may extend.
    last_slice: Vec<Option<usize>>,
}

impl Memory {
    pub(crate) fn new(record_trace: bool, record_jobs: bool) -> Memory {
        Memory {
            trace: record_trace.then(Trace::default),
            jobs: record_jobs.then(Vec::new),
            last_slice: Vec::new(),
        }
    }
}

impl Recorder for Memory {
    fn wants_trace(&self) -> bool {
        self.trace.is_some()
    }

    fn wants_jobs(&self) -> bool {
        self.jobs.is_some()
    }

    fn job(&mut self, record: &JobRecord) {
        if let Some(jobs) = self.jobs.as_mut() {
            jobs.push(*record);
        }
    }

    fn slice(&mut self, piece: &Slice) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        let core = usize::from(piece.core);
        if self.last_slice.len() <= core {
            self.last_slice.resize(core + 1, None);
        }
        // Slices stay in the order they started; the last one of the core grows in place.
        if let Some(last) = self.last_slice[core].and_then(|i| trace.slices.get_mut(i)) {
            if last.task == piece.task && last.kind == piece.kind && last.end == piece.start {
                last.end = piece.end;
                return;
            }
        }
        self.last_slice[core] = Some(trace.slices.len());
        trace.slices.push(*piece);
    }

    fn mark(&mut self, mark: &Mark) {
        if let Some(trace) = self.trace.as_mut() {
            trace.marks.push(*mark);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::SliceKind;

    fn piece(core: u16, task: Option<u32>, kind: SliceKind, start: u64, end: u64) -> Slice {
        Slice {
            core,
            task: task.map(TaskId),
            kind,
            start: Instant::from_nanos(start),
            end: Instant::from_nanos(end),
        }
    }

    #[test]
    fn open_slices_merge_adjacent_pieces_and_close_on_change() {
        let mut open = OpenSlices::default();
        // Core 0: task 0 runs 0..10 in two pieces, then the kernel 10..12.
        assert_eq!(open.push(&piece(0, Some(0), SliceKind::Task, 0, 4)), None);
        assert_eq!(open.push(&piece(0, Some(0), SliceKind::Task, 4, 10)), None);
        // Another core does not close core 0's slice.
        assert_eq!(open.push(&piece(1, None, SliceKind::Kernel, 3, 5)), None);
        assert_eq!(open.held(), 2);
        assert_eq!(
            open.push(&piece(0, Some(0), SliceKind::Kernel, 10, 12)),
            Some(piece(0, Some(0), SliceKind::Task, 0, 10))
        );
        // A gap closes the slice even for the same task and kind.
        assert_eq!(
            open.push(&piece(0, Some(0), SliceKind::Kernel, 13, 14)),
            Some(piece(0, Some(0), SliceKind::Kernel, 10, 12))
        );
        let rest: Vec<_> = open.drain().collect();
        assert_eq!(
            rest,
            [
                piece(0, Some(0), SliceKind::Kernel, 13, 14),
                piece(1, None, SliceKind::Kernel, 3, 5)
            ]
        );
        assert_eq!(open.held(), 0);
    }

    #[test]
    fn memory_keeps_slices_in_start_order_and_grows_the_last_of_each_core() {
        let mut memory = Memory::new(true, false);
        memory.slice(&piece(0, Some(0), SliceKind::Task, 0, 5));
        memory.slice(&piece(1, Some(1), SliceKind::Task, 2, 3));
        memory.slice(&piece(0, Some(0), SliceKind::Task, 5, 9));
        let trace = memory.trace.expect("recording");
        assert_eq!(
            trace.slices,
            [
                piece(0, Some(0), SliceKind::Task, 0, 9),
                piece(1, Some(1), SliceKind::Task, 2, 3)
            ]
        );
        assert!(memory.jobs.is_none());
    }
}

/// One invocation of a server, answered: what the MC-IPC paper's case study plots (the delay
/// from invocation to reply) and what its Theorem 1 bounds (the budget drained since the
/// request was last issued, while the client's reservation did not run out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct InvocationRecord {
    /// The client: the task whose context made the call (a server's nested call is its
    /// caller's).
    pub task: TaskId,
    /// The server, an index into the scenario's servers.
    pub server: usize,
    /// When the client called.
    pub invoked: Instant,
    /// When the request was last issued: the call, or its last reissue after a prune.
    pub issued: Instant,
    /// When the server answered.
    pub replied: Instant,
    /// How many times the request was pruned and issued again.
    pub reissues: u32,
    /// The budget the client's scheduling context drained from `invoked` to `replied`: for a
    /// cluster member, the time its reservation was selected (A2), else what the context
    /// executed.
    pub drained: Duration,
    /// The same from `issued` to `replied`.
    pub drained_since_issue: Duration,
    /// The request was aborted after it was last issued (its client's budget ran out, or its
    /// priority changed with its cluster's mode) yet answered: it was in service then, or
    /// served from the background queue. Outside Theorem 1's premise.
    pub exhausted: bool,
}

/// A cluster's change of criticality mode in Vestal's model (MC-IPC paper, section VII): to
/// high mode when a high-criticality job has consumed its low budget `e^L` and is still
/// pending, back to low mode at the cluster's next idle instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ModeSwitchRecord {
    /// The cluster, an index into the scenario's clusters.
    pub cluster: usize,
    /// The instant of the machine's call to the cluster's scheduler that made the change:
    /// the switch's own instant, as the cluster's timer is programmed for it.
    pub at: Instant,
    /// The mode the cluster is in from `at`.
    pub mode: Mode,
}
