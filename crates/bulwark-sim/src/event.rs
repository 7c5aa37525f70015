//! The event queue. Each core has two event sources, its one-shot timer and its processor (an
//! execution ending, or the kernel returning to a task), and each source holds at most one
//! pending event, as hardware does: reprogramming a timer replaces its deadline. So the queue
//! is a tournament (winner) tree over `2 * cores` sources: setting, cancelling or taking an
//! event replays the matches on one leaf-to-root path, and the root is the earliest event.
//! With one core that path is a single comparison.
//!
//! Order is (time, rank, sequence number), so every run is deterministic. At one instant,
//! executions that end are handled first, then kernel exits, then timer interrupts; within a
//! rank, first set first out. Ending executions first means a task whose work ends exactly when
//! a timer fires completes then, instead of being preempted with no work left.

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
    fn source(self) -> usize {
        match self {
            EventKind::Timer { core } => core as usize * 2,
            EventKind::ExecutionDone { core } | EventKind::KernelExit { core } => {
                core as usize * 2 + 1
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

/// The key of a source with nothing pending: after every real key.
const NOTHING: u128 = u128::MAX;

/// Pending events, one per source, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    /// Per source, keyed by time (high 64 bits), rank (2 bits) and sequence number (62 bits)
    /// in one `u128`, so ordering is the tuple's and a match is one wide compare; [`NOTHING`]
    /// when the source has no event.
    keys: Vec<u128>,
    /// `winner[node]` is the source with the smallest key below internal node `node` (the
    /// root is node 1; node `i` has children `2i` and `2i + 1`; leaf `leaves + s` is source
    /// `s`). Node 0 is unused.
    winner: Vec<u32>,
    /// Leaves: the number of sources rounded up to a power of two, at least 2.
    leaves: usize,
    sequence: u64,
}

impl EventQueue {
    /// An empty queue for `cores` cores.
    pub fn new(cores: u16) -> Self {
        let sources = cores as usize * 2;
        let leaves = sources.max(2).next_power_of_two();
        let mut queue = EventQueue {
            keys: vec![NOTHING; leaves],
            winner: vec![0; leaves],
            leaves,
            sequence: 0,
        };
        // Every node's winner is its leftmost leaf while all keys are NOTHING.
        for node in (1..leaves).rev() {
            queue.winner[node] = queue.champion(2 * node).0;
        }
        queue
    }

    /// Sets `kind`'s source to happen at `at`, replacing what that source had pending.
    pub fn set(&mut self, at: Instant, kind: EventKind) {
        self.sequence += 1;
        let source = kind.source();
        self.keys[source] = ((at.as_nanos() as u128) << 64)
            | ((kind.rank() as u128) << 62)
            | (self.sequence as u128 & ((1 << 62) - 1));
        self.replay(source);
    }

    /// Cancels whatever the timer of `core` had pending.
    pub fn cancel_timer(&mut self, core: u16) {
        self.clear(EventKind::Timer { core }.source());
    }

    /// Cancels whatever the processor of `core` had pending.
    pub fn cancel_processor(&mut self, core: u16) {
        self.clear(EventKind::ExecutionDone { core }.source());
    }

    /// Takes the earliest event if it is due by `limit`.
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, EventKind)> {
        let source = self.winner[1] as usize;
        let key = self.keys[source];
        if key == NOTHING {
            return None;
        }
        let at = Instant::from_nanos((key >> 64) as u64);
        if at > limit {
            return None;
        }
        self.clear(source);
        // The source says which core and whether timer or processor; the rank, which of the
        // processor's two events it is.
        let core = (source / 2) as u16;
        let kind = match (key >> 62) & 0b11 {
            0 => EventKind::ExecutionDone { core },
            1 => EventKind::KernelExit { core },
            _ => EventKind::Timer { core },
        };
        Some((at, kind))
    }

    fn clear(&mut self, source: usize) {
        if self.keys[source] != NOTHING {
            self.keys[source] = NOTHING;
            self.replay(source);
        }
    }

    /// The winning source and its key at `node`, a leaf or an internal node.
    fn champion(&self, node: usize) -> (u32, u128) {
        let source = if node >= self.leaves {
            node - self.leaves
        } else {
            self.winner[node] as usize
        };
        (source as u32, self.keys[source])
    }

    /// Replays the matches from `source`'s leaf up to the root. Equal keys cannot happen
    /// between two pending events (sequence numbers differ); between empty sources the left
    /// one wins, which is harmless.
    fn replay(&mut self, source: usize) {
        let mut node = (self.leaves + source) / 2;
        while node >= 1 {
            let left = self.champion(2 * node);
            let right = self.champion(2 * node + 1);
            self.winner[node] = if right.1 < left.1 { right.0 } else { left.0 };
            node /= 2;
        }
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
