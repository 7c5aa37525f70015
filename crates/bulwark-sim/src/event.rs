//! The event queue. Each core has two event sources, its one-shot timer and its processor (an
//! execution ending, or the kernel returning to a task), and each source holds at most one
//! pending event, as hardware does: reprogramming a timer replaces its deadline. So the queue
//! is an indexed heap over `2 * cores` sources and never holds a stale event.
//!
//! Order is (time, rank, sequence number), so every run is deterministic. At one instant,
//! executions that end are handled first, then kernel exits, then timer interrupts; within a
//! rank, first set first out. Ending executions first means a task whose work ends exactly when
//! a timer fires completes then, instead of being preempted with no work left.

use bulwark_core::heap::IndexedHeap;
use bulwark_core::Instant;

/// Something that happens to a core at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The core's one-shot timer fires.
    Timer {
        /// The core.
        core: u16,
    },
    /// The running task finishes what it was executing.
    ExecutionDone {
        /// The core.
        core: u16,
    },
    /// The kernel finishes its work and hands the core to the chosen task.
    KernelExit {
        /// The core.
        core: u16,
    },
}

impl EventKind {
    /// The source slot: a core's timer, or its processor.
    fn source(self) -> u32 {
        match self {
            EventKind::Timer { core } => core as u32 * 2,
            EventKind::ExecutionDone { core } | EventKind::KernelExit { core } => {
                core as u32 * 2 + 1
            }
        }
    }

    fn rank(self) -> u8 {
        match self {
            EventKind::ExecutionDone { .. } => 0,
            EventKind::KernelExit { .. } => 1,
            EventKind::Timer { .. } => 2,
        }
    }
}

/// Pending events, one per source, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    /// Keyed by time (high 64 bits), rank (2 bits) and sequence number (62 bits) in one
    /// `u128`, so ordering is the tuple's and a comparison is one wide compare.
    heap: IndexedHeap<u128, u32>,
    kinds: Vec<Option<EventKind>>,
    sequence: u64,
}

impl EventQueue {
    /// An empty queue for `cores` cores.
    pub fn new(cores: u16) -> Self {
        let sources = cores as usize * 2;
        EventQueue {
            heap: IndexedHeap::with_capacity(sources),
            kinds: vec![None; sources],
            sequence: 0,
        }
    }

    /// Sets `kind`'s source to happen at `at`, replacing what that source had pending.
    pub fn set(&mut self, at: Instant, kind: EventKind) {
        self.sequence += 1;
        let source = kind.source();
        self.kinds[source as usize] = Some(kind);
        let key = ((at.as_nanos() as u128) << 64)
            | ((kind.rank() as u128) << 62)
            | (self.sequence as u128 & ((1 << 62) - 1));
        self.heap.upsert(source, key);
    }

    /// Cancels whatever the timer of `core` had pending.
    pub fn cancel_timer(&mut self, core: u16) {
        self.cancel(EventKind::Timer { core }.source());
    }

    /// Cancels whatever the processor of `core` had pending.
    pub fn cancel_processor(&mut self, core: u16) {
        self.cancel(EventKind::ExecutionDone { core }.source());
    }

    fn cancel(&mut self, source: u32) {
        self.heap.remove(source);
        self.kinds[source as usize] = None;
    }

    /// Takes the earliest event if it is due by `limit`.
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, EventKind)> {
        let (source, key) = self.heap.peek()?;
        let at = Instant::from_nanos((key >> 64) as u64);
        if at > limit {
            return None;
        }
        self.heap.pop();
        let kind = self.kinds[source as usize].take()?;
        Some((at, kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_and_ranks_come_out_first_set_first_out() {
        let mut q = EventQueue::new(3);
        let t = Instant::from_nanos(5);
        let timer = |core| EventKind::Timer { core };
        q.set(t, timer(2));
        q.set(Instant::from_nanos(1), timer(1));
        q.set(t, timer(0));
        assert_eq!(
            q.pop_until(Instant::NEVER),
            Some((Instant::from_nanos(1), timer(1)))
        );
        assert_eq!(q.pop_until(Instant::from_nanos(4)), None);
        assert_eq!(q.pop_until(t), Some((t, timer(2))));
        assert_eq!(q.pop_until(t), Some((t, timer(0))));
        assert_eq!(q.pop_until(Instant::NEVER), None);
    }

    #[test]
    fn an_execution_ending_at_an_instant_comes_before_that_instant_s_timer() {
        let mut q = EventQueue::new(1);
        let t = Instant::from_nanos(5);
        q.set(t, EventKind::Timer { core: 0 });
        q.set(t, EventKind::ExecutionDone { core: 0 });
        assert_eq!(
            q.pop_until(t),
            Some((t, EventKind::ExecutionDone { core: 0 }))
        );
        assert_eq!(q.pop_until(t), Some((t, EventKind::Timer { core: 0 })));
    }

    #[test]
    fn a_source_holds_only_its_latest_event() {
        let mut q = EventQueue::new(1);
        q.set(Instant::from_nanos(9), EventKind::Timer { core: 0 });
        q.set(Instant::from_nanos(7), EventKind::Timer { core: 0 });
        q.set(Instant::from_nanos(3), EventKind::ExecutionDone { core: 0 });
        q.set(Instant::from_nanos(4), EventKind::KernelExit { core: 0 });
        q.cancel_timer(0);
        assert_eq!(
            q.pop_until(Instant::NEVER),
            Some((Instant::from_nanos(4), EventKind::KernelExit { core: 0 }))
        );
        assert_eq!(q.pop_until(Instant::NEVER), None);
    }
}
