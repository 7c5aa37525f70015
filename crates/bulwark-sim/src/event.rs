//! The event queue. Each core has two event sources, its one-shot timer and its processor (an
//! execution ending, or the kernel returning to a task), and each source holds at most one
//! pending event, as hardware does: reprogramming a timer replaces its deadline. So the queue
//! is a tournament (winner) tree over `2 * cores` sources: setting, cancelling or taking an
//! event writes its source's leaf, and the matches on that leaf-to-root path are replayed by
//! the next pop (or sooner, when another core's source changes first), so the root is the
//! earliest event whenever it is read. With one core that path is a single comparison.
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

/// Bits of a key that hold its source (up to 2,048 sources: 1,024 cores).
const SOURCE_BITS: u32 = 11;
/// Bits of a key that hold its sequence number: 2^51 events set, years of simulated events
/// at ten million a second, before two keys could tie.
const SEQUENCE_BITS: u32 = 62 - SOURCE_BITS;

/// Pending events, one per source, earliest first.
#[derive(Debug)]
pub struct EventQueue {
    /// The tournament tree: the root is node 1, node `i` has children `2i` and `2i + 1`, and
    /// leaf `leaves + s` holds source `s`'s key; an inner node holds the smaller key below
    /// it. A key is time (high 64 bits), rank (2 bits), sequence number (51 bits) and source
    /// (11 bits) in one `u128`, so ordering is the tuple's (the sequence number is unique, so
    /// the source never decides), a match is one wide compare, and the winner carries its
    /// source; [`NOTHING`] when the source has no event. Node 0 is unused.
    nodes: Vec<u128>,
    /// Leaves: the number of sources rounded up to a power of two, at least 2.
    leaves: usize,
    sequence: u64,
    /// A source whose leaf changed (set, taken or cancelled) but whose path to the root was
    /// not replayed yet, or [`SETTLED`]; every other inner node is up to date. The replay
    /// waits for the next pop, the only reader of a winner: a core changes its two sources
    /// several times between pops, and as they are siblings (one path above the leaves), one
    /// replay then settles both. Changing another core's source replays the stale one first.
    stale: usize,
}

/// No source awaits its replay.
const SETTLED: usize = usize::MAX;

impl EventQueue {
    /// An empty queue for `cores` cores (at most 1,024).
    pub fn new(cores: u16) -> Self {
        let sources = cores as usize * 2;
        debug_assert!(sources <= 1 << SOURCE_BITS, "at most 1,024 cores");
        let leaves = sources.max(2).next_power_of_two();
        EventQueue {
            nodes: vec![NOTHING; 2 * leaves],
            leaves,
            sequence: 0,
            stale: SETTLED,
        }
    }

    /// Sets `kind`'s source to happen at `at`, replacing what that source had pending.
    pub fn set(&mut self, at: Instant, kind: EventKind) {
        self.sequence += 1;
        let source = kind.source();
        let key = ((at.as_nanos() as u128) << 64)
            | ((kind.rank() as u128) << 62)
            | ((self.sequence as u128 & ((1 << SEQUENCE_BITS) - 1)) << SOURCE_BITS)
            | source as u128;
        self.write(source, key);
    }

    /// True when `core`'s timer source holds an event due at or before `at`: its one-shot
    /// timer, or an interrupt another core raised.
    pub fn timer_due(&self, core: u16, at: Instant) -> bool {
        let key = self.nodes[self.leaves + EventKind::Timer { core }.source()];
        key != NOTHING && (key >> 64) as u64 <= at.as_nanos()
    }

    /// True when `core`'s timer holds the earliest pending event, due by `at`: nothing else
    /// (another core's execution ending or kernel returning, an earlier-set timer) comes
    /// before it.
    pub fn timer_is_next(&mut self, core: u16, at: Instant) -> bool {
        if !self.timer_due(core, at) {
            return false;
        }
        if self.stale != SETTLED {
            self.replay(self.stale);
            self.stale = SETTLED;
        }
        let source = EventKind::Timer { core }.source();
        self.nodes[1] == self.nodes[self.leaves + source]
    }

    /// Cancels whatever the timer of `core` had pending.
    pub fn cancel_timer(&mut self, core: u16) {
        self.clear(EventKind::Timer { core }.source());
    }

    /// Cancels whatever the processor of `core` had pending.
    pub fn cancel_processor(&mut self, core: u16) {
        self.clear(EventKind::ExecutionDone { core }.source());
    }

    /// Moves `core`'s pending execution end to `at`, keeping its place among events of the
    /// same instant (its sequence number): a platform that reports when a stretch ends
    /// times an end set untimed. False when the processor has no execution end pending.
    pub fn time_execution_end(&mut self, core: u16, at: Instant) -> bool {
        let source = EventKind::ExecutionDone { core }.source();
        let key = self.nodes[self.leaves + source];
        if key == NOTHING
            || (key >> 62) & 0b11 != u128::from(EventKind::ExecutionDone { core }.rank())
        {
            return false;
        }
        let order = key & ((1u128 << 64) - 1);
        self.write(source, ((at.as_nanos() as u128) << 64) | order);
        true
    }

    /// When the earliest pending event is due, if any.
    pub fn next_at(&mut self) -> Option<Instant> {
        if self.stale != SETTLED {
            self.replay(self.stale);
            self.stale = SETTLED;
        }
        let key = self.nodes[1];
        (key != NOTHING).then(|| Instant::from_nanos((key >> 64) as u64))
    }

    /// Takes the earliest event if it is due by `limit`.
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, EventKind)> {
        if self.stale != SETTLED {
            self.replay(self.stale);
            self.stale = SETTLED;
        }
        let key = self.nodes[1];
        if key == NOTHING {
            return None;
        }
        let at = Instant::from_nanos((key >> 64) as u64);
        if at > limit {
            return None;
        }
        let source = (key & ((1 << SOURCE_BITS) - 1)) as usize;
        self.write(source, NOTHING);
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
        if self.nodes[self.leaves + source] != NOTHING {
            self.write(source, NOTHING);
        }
    }

    /// Gives `source` the key `key`, leaving its path stale (see [`EventQueue::stale`]).
    #[inline]
    fn write(&mut self, source: usize, key: u128) {
        self.nodes[self.leaves + source] = key;
        if self.stale != SETTLED && self.stale | 1 != source | 1 {
            self.replay(self.stale);
        }
        self.stale = source;
    }

    /// Replays the matches on `source`'s path to the root, from its leaf's key. Out of line:
    /// inlined into every set and pop, it made the machine's loop 4 % more instructions.
    #[inline(never)]
    fn replay(&mut self, source: usize) {
        let mut node = self.leaves + source;
        let mut winner = self.nodes[node];
        while node > 1 {
            // The parent's winner: the one so far against the sibling (`node ^ 1`).
            winner = winner.min(self.nodes[node ^ 1]);
            node /= 2;
            self.nodes[node] = winner;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

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
    fn a_timer_is_due_at_or_after_its_time_and_not_once_cancelled() {
        let mut q = EventQueue::new(2);
        q.set(Instant::from_nanos(5), EventKind::Timer { core: 1 });
        q.set(Instant::from_nanos(3), EventKind::KernelExit { core: 1 });
        assert!(!q.timer_due(1, Instant::from_nanos(4)));
        assert!(q.timer_due(1, Instant::from_nanos(5)));
        assert!(
            !q.timer_due(0, Instant::from_nanos(9)),
            "core 0 has no timer"
        );
        q.cancel_timer(1);
        assert!(!q.timer_due(1, Instant::from_nanos(9)));
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

    /// The key packs the source into its low bits: the largest machine's last core comes
    /// back as itself, and equal times still go first set, first out across cores.
    #[test]
    fn the_last_core_of_the_largest_machine_keeps_its_events() {
        let mut q = EventQueue::new(1024);
        let t = Instant::from_nanos(7);
        q.set(t, EventKind::Timer { core: 1023 });
        q.set(t, EventKind::Timer { core: 0 });
        q.set(t, EventKind::KernelExit { core: 1023 });
        assert_eq!(
            q.pop_until(t),
            Some((t, EventKind::KernelExit { core: 1023 }))
        );
        assert_eq!(q.pop_until(t), Some((t, EventKind::Timer { core: 1023 })));
        assert_eq!(q.pop_until(t), Some((t, EventKind::Timer { core: 0 })));
        assert_eq!(q.pop_until(Instant::NEVER), None);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Set(u64, EventKind),
        CancelTimer(u16),
        CancelProcessor(u16),
        Pop(u64),
    }

    fn op(cores: u16) -> impl Strategy<Value = Op> {
        use proptest::prelude::*;
        let kind = (0..cores, 0u8..3).prop_map(|(core, k)| match k {
            0 => EventKind::Timer { core },
            1 => EventKind::ExecutionDone { core },
            _ => EventKind::KernelExit { core },
        });
        prop_oneof![
            (0u64..20, kind).prop_map(|(at, kind)| Op::Set(at, kind)),
            (0..cores).prop_map(Op::CancelTimer),
            (0..cores).prop_map(Op::CancelProcessor),
            (0u64..25).prop_map(Op::Pop),
        ]
    }

    proptest::proptest! {
        /// Against a model that keeps each source's latest event in a list and takes the least
        /// (time, rank, order of setting) by a linear scan: the documented order, checked
        /// without the tree.
        #[test]
        fn takes_events_in_the_documented_order(
            (cores, ops) in (1u16..6).prop_flat_map(|cores| {
                (proptest::strategy::Just(cores), proptest::collection::vec(op(cores), 0..200))
            })
        ) {
            let mut queue = EventQueue::new(cores);
            // Per source: (time, rank, when set, kind).
            let mut model: Vec<Option<(u64, u8, usize, EventKind)>> = vec![None; 2 * cores as usize];
            for (step, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Set(at, kind) => {
                        queue.set(Instant::from_nanos(at), kind);
                        model[kind.source()] = Some((at, kind.rank(), step, kind));
                    }
                    Op::CancelTimer(core) => {
                        queue.cancel_timer(core);
                        model[EventKind::Timer { core }.source()] = None;
                    }
                    Op::CancelProcessor(core) => {
                        queue.cancel_processor(core);
                        model[EventKind::ExecutionDone { core }.source()] = None;
                    }
                    Op::Pop(limit) => {
                        let earliest = model
                            .iter()
                            .enumerate()
                            .filter_map(|(source, e)| e.map(|e| (e, source)))
                            .min_by_key(|((at, rank, set, _), _)| (*at, *rank, *set));
                        let expected = earliest.filter(|((at, ..), _)| *at <= limit);
                        let got = queue.pop_until(Instant::from_nanos(limit));
                        proptest::prop_assert_eq!(
                            got,
                            expected.map(|((at, _, _, kind), _)| (Instant::from_nanos(at), kind))
                        );
                        if let Some((_, source)) = expected {
                            model[source] = None;
                        }
                    }
                }
            }
        }
    }
}
