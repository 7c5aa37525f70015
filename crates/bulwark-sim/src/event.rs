//! The event queue: ordered by (time, rank, sequence number), so every run is deterministic.
//!
//! At one instant, executions that end are handled first, then kernel exits, then timer
//! interrupts; within a rank, first in first out. Ending executions first means a task whose
//! work ends exactly when a timer fires completes then, instead of being preempted with no
//! work left and completing only when it next runs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bulwark_core::Instant;

/// Something that happens to a core at a time. Generations let a core ignore events that a
/// later decision made stale (a reprogrammed timer, a preempted execution).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// The core's one-shot timer fires.
    Timer {
        /// The core.
        core: u16,
        /// The timer programming this firing belongs to.
        generation: u32,
    },
    /// The running task finishes what it was executing.
    ExecutionDone {
        /// The core.
        core: u16,
        /// The dispatch this belongs to.
        generation: u32,
    },
    /// The kernel finishes its work and hands the core to the chosen task.
    KernelExit {
        /// The core.
        core: u16,
        /// The kernel entry this belongs to.
        generation: u32,
    },
}

/// A min-queue of events by (time, insertion order).
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Instant, u8, u64, EventKind)>>,
    sequence: u64,
}

impl EventQueue {
    /// Schedules `kind` at `at`, after every event already scheduled at `at`.
    pub fn push(&mut self, at: Instant, kind: EventKind) {
        self.sequence += 1;
        let rank = match kind {
            EventKind::ExecutionDone { .. } => 0,
            EventKind::KernelExit { .. } => 1,
            EventKind::Timer { .. } => 2,
        };
        self.heap.push(Reverse((at, rank, self.sequence, kind)));
    }

    /// Takes the earliest event if it is due by `limit`.
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, EventKind)> {
        let Reverse((at, ..)) = self.heap.peek()?;
        if *at > limit {
            return None;
        }
        self.heap.pop().map(|Reverse((at, _, _, kind))| (at, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_come_out_first_in_first_out() {
        let mut q = EventQueue::default();
        let t = Instant::from_nanos(5);
        let timer = |g| EventKind::Timer {
            core: 0,
            generation: g,
        };
        q.push(t, timer(3));
        q.push(Instant::from_nanos(1), timer(9));
        q.push(t, timer(1));
        q.push(t, timer(2));
        assert_eq!(
            q.pop_until(Instant::NEVER),
            Some((Instant::from_nanos(1), timer(9)))
        );
        assert_eq!(q.pop_until(Instant::from_nanos(4)), None);
        assert_eq!(q.pop_until(t), Some((t, timer(3))));
        assert_eq!(q.pop_until(t), Some((t, timer(1))));
        assert_eq!(q.pop_until(t), Some((t, timer(2))));
        assert_eq!(q.pop_until(Instant::NEVER), None);
    }

    #[test]
    fn an_execution_ending_at_an_instant_comes_before_that_instant_s_timer() {
        let mut q = EventQueue::default();
        let t = Instant::from_nanos(5);
        let timer = EventKind::Timer {
            core: 0,
            generation: 1,
        };
        let done = EventKind::ExecutionDone {
            core: 0,
            generation: 1,
        };
        q.push(t, timer);
        q.push(t, done);
        assert_eq!(q.pop_until(t), Some((t, done)));
        assert_eq!(q.pop_until(t), Some((t, timer)));
    }
}
