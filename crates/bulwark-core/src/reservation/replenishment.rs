//! A reservation's replenishment queue (SPR paper, section IV-A and Fig. 8): a fixed-capacity
//! circular buffer of `(t, b)` entries, each granting `b` units of budget at time `t`.
//!
//! Invariants (checked by [`ReplenishmentQueue::check`]):
//! - `1 <= len <= capacity`: the head always exists, since it holds the budget in use;
//! - entries are in non-decreasing time order from the head;
//! - every entry's amount is positive;
//! - the amounts sum to the reservation's budget `b`: budget is moved between entries and
//!   postponed, never created or lost. This is what rules out budget amplification.
//!
//! The queue implements the queue steps of the paper's algorithms; the policy owns the task
//! states, the used budget `u` and the timers around them.

use alloc::vec;
use alloc::vec::Vec;

use crate::{CoreError, Duration, Instant, Work};

/// `b` units of budget that become available at `t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replenishment {
    /// When the budget becomes available.
    pub at: Instant,
    /// How much budget.
    pub amount: Duration,
}

/// Entries held inside the queue itself, up to this capacity (the default `S` is 8): the
/// replenishments then live in their reservation's record, so an invocation that touches a
/// reservation touches a few adjacent cache lines, whatever the number of tasks. Larger
/// capacities spill to one allocation made at configuration.
const INLINE: usize = 8;

/// The queue's storage: `capacity` slots (the queue's header says how many), inline or
/// spilled.
#[derive(Clone, Debug)]
enum Slots {
    Inline([Replenishment; INLINE]),
    Spilled(Vec<Replenishment>),
}

impl Slots {
    fn as_slice(&self, capacity: usize) -> &[Replenishment] {
        match self {
            Slots::Inline(slots) => &slots[..capacity],
            Slots::Spilled(slots) => slots,
        }
    }

    fn as_mut_slice(&mut self, capacity: usize) -> &mut [Replenishment] {
        match self {
            Slots::Inline(slots) => &mut slots[..capacity],
            Slots::Spilled(slots) => slots,
        }
    }
}

/// The replenishment queue `R_i` of one reservation.
///
/// Laid out header first (`repr(C)`): the head's index, the length and the capacity, then the
/// slots, so a queue whose head is in its first slots is read in one cache line.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct ReplenishmentQueue {
    head: u16,
    len: u16,
    capacity: u16,
    budget: Duration,
    storage: Slots,
}

impl ReplenishmentQueue {
    /// A queue of capacity `S = capacity` holding the whole budget `b` at the reservation's
    /// first activation (Fig. 8a). An invalid parameter: a zero capacity or budget, or a
    /// capacity beyond `u16::MAX` (a reservation's `S` is a `u16`).
    pub fn new(capacity: usize, budget: Duration, activation: Instant) -> Result<Self, CoreError> {
        if capacity == 0 || budget.is_zero() {
            return Err(CoreError::InvalidParameter);
        }
        let first = Replenishment {
            at: activation,
            amount: budget,
        };
        let Ok(capacity) = u16::try_from(capacity) else {
            return Err(CoreError::InvalidParameter);
        };
        let storage = if capacity as usize <= INLINE {
            Slots::Inline([first; INLINE])
        } else {
            Slots::Spilled(vec![first; capacity as usize])
        };
        Ok(ReplenishmentQueue {
            head: 0,
            len: 1,
            capacity,
            budget,
            storage,
        })
    }

    /// The number of entries (at least one).
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Always false: the head always exists.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The head `(t_head, b_head)`: the next replenishment to be used.
    pub fn head(&self) -> Replenishment {
        self.slots()[self.head as usize]
    }

    /// The entries, head first.
    pub fn iter(&self) -> impl Iterator<Item = Replenishment> + '_ {
        (0..self.len()).map(move |i| self.slots()[self.index(i)])
    }

    /// Algorithm 1, lines 1-4: while the used budget `u` covers the head, consume the head and
    /// plan its full replenishment at `t_head + p`. What remains in `used` is less than the
    /// new head's amount: an overrun if the new head is not yet due, deducted from it later.
    ///
    /// The loop runs at most `len` times. The paper writes "enqueue, then dequeue"; this
    /// dequeues first, so the head's own slot is free for its replenishment and a full queue
    /// never merges the head into itself (with `S = 1` that would double the budget).
    pub fn consume(&mut self, used: &mut Duration, period: Duration, work: &mut Work) {
        for _ in 0..self.len {
            let head = self.head();
            if head.amount > *used {
                return;
            }
            *used = used.saturating_sub(head.amount);
            self.dequeue();
            self.enqueue(
                Replenishment {
                    at: head.at.saturating_add(period),
                    amount: head.amount,
                },
                work,
            );
        }
    }

    /// Algorithm 1, lines 10-13: the task blocks with budget left, so the budget is split. The
    /// consumed part `u` is planned for `t_head + p`, the head keeps the rest, and `u` becomes
    /// zero. Call after [`consume`](Self::consume), so `used < b_head`.
    pub fn split(&mut self, used: &mut Duration, period: Duration, work: &mut Work) {
        let head = self.head();
        if used.is_zero() || *used >= head.amount {
            return;
        }
        self.enqueue(
            Replenishment {
                at: head.at.saturating_add(period),
                amount: *used,
            },
            work,
        );
        // A full queue may have merged into the last entry; with S = 1 that is the head,
        // which now holds b + u and is postponed: taking u off keeps the sum at b.
        let h = self.head as usize;
        let head = &mut self.slots_mut()[h];
        head.amount = head.amount.saturating_sub(*used);
        *used = Duration::ZERO;
    }

    /// Algorithm 3, lines 1-5: on activation at `now`, merge every expired replenishment into
    /// one new head (Fig. 8c); if that head is due, restart it at
    /// `max(min(now, timeout), t_head)` so later replenishments are planned from this
    /// activation, and return true (budget is available). `timeout` is the wake-up the task
    /// asked for, or [`Instant::NEVER`] when it was woken by an event.
    ///
    /// "Expired" is read at the activation the task asked for, `min(now, timeout)`, as line 5
    /// reads it, not at `now` as line 1's text does. SPR defers a lower-priority wake-up until
    /// the task can run (section III-D: such timers are "safely delayed"); merging the entries
    /// that came due while it waited would plan their budget one period after the head's time
    /// instead of their own, so deferral would take budget from the task. Left apart, they
    /// are due anyway and serve as early replenishments, as on a wake-up processed on time.
    pub fn activate(&mut self, now: Instant, timeout: Instant, work: &mut Work) -> bool {
        let activation = now.min(timeout);
        while self.len > 1 {
            let next = self.index(1);
            if self.slots()[next].at > activation {
                break;
            }
            let head = self.head();
            let merged = &mut self.slots_mut()[next];
            merged.amount = merged.amount.saturating_add(head.amount);
            self.dequeue();
            work.replenishments_processed += 1;
        }
        let h = self.head as usize;
        let head = &mut self.slots_mut()[h];
        if head.at > now {
            return false;
        }
        head.at = head.at.max(now.min(timeout));
        true
    }

    /// Algorithm 2, lines 1-4: the depletion time of a task starting to run at `now` with
    /// `used` of its head consumed, counting every later replenishment that will be due
    /// before the budget runs out (early replenishment). The loop stops at the first
    /// replenishment that is not, since the queue is sorted by time.
    pub fn depletion_time(&self, now: Instant, used: Duration, work: &mut Work) -> Instant {
        let head = self.head();
        let mut depletion = now.saturating_add(head.amount.saturating_sub(used));
        for r in self.iter().skip(1) {
            work.replenishments_processed += 1;
            if depletion < r.at {
                break;
            }
            depletion = depletion.saturating_add(r.amount);
        }
        depletion
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.len == 0 || self.len() > self.capacity() {
            return Err("a replenishment queue holds between 1 and S entries");
        }
        let mut sum = Duration::ZERO;
        let mut last = Instant::ZERO;
        for r in self.iter() {
            if r.amount.is_zero() {
                return Err("every replenishment grants some budget");
            }
            if r.at < last {
                return Err("replenishments are in time order");
            }
            last = r.at;
            sum = sum.saturating_add(r.amount);
        }
        if sum != self.budget {
            return Err("replenishments sum to the budget");
        }
        Ok(())
    }

    /// Where the first slot lies from the start of the queue, in bytes (for layout tests).
    #[cfg(test)]
    pub(crate) fn first_slot_offset(&self) -> usize {
        self.slots().as_ptr() as usize - self as *const Self as usize
    }

    fn slots(&self) -> &[Replenishment] {
        self.storage.as_slice(self.capacity as usize)
    }

    fn slots_mut(&mut self) -> &mut [Replenishment] {
        self.storage.as_mut_slice(self.capacity as usize)
    }

    /// `S`.
    fn capacity(&self) -> usize {
        self.capacity as usize
    }

    /// The slot of the `i`-th entry from the head, for `i < S`: a wrap by one subtraction,
    /// since `head + i < 2 S` (a `%` would compile to a division).
    fn index(&self, i: usize) -> usize {
        let at = self.head as usize + i;
        let capacity = self.capacity();
        if at >= capacity {
            at - capacity
        } else {
            at
        }
    }

    fn dequeue(&mut self) {
        self.head = self.index(1) as u16;
        self.len -= 1;
    }

    /// Appends `r`; a full queue instead merges it into the last entry, postponing that entry
    /// to `r.at` (Stanovich et al., as the paper's section IV-A adopts): no undue interference
    /// to others, at the price of delaying this reservation's own budget.
    fn enqueue(&mut self, r: Replenishment, work: &mut Work) {
        work.replenishments_processed += 1;
        if self.len() < self.capacity() {
            let tail = self.index(self.len());
            self.slots_mut()[tail] = r;
            self.len += 1;
        } else {
            let last = self.index(self.len() - 1);
            let merged = &mut self.slots_mut()[last];
            merged.at = merged.at.max(r.at);
            merged.amount = merged.amount.saturating_add(r.amount);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn at(t: u64) -> Instant {
        Instant::from_nanos(t)
    }

    fn d(n: u64) -> Duration {
        Duration::from_nanos(n)
    }

    fn entries(q: &ReplenishmentQueue) -> Vec<(u64, u64)> {
        q.iter()
            .map(|r| (r.at.as_nanos(), r.amount.as_nanos()))
            .collect()
    }

    /// A wake-up asked for at 21 and processed at 22 (deferred) merges only what expired by
    /// 21: (22, 2) stays apart, as it would had the wake-up been processed at 21, and the
    /// head restarts at 21. Merging it would plan all three units for 22 + p.
    #[test]
    fn a_deferred_activation_merges_what_expired_by_its_wake_up() {
        let mut w = Work::default();
        // b = 4 in three entries: (20, 1), (22, 2), (24, 1).
        let mut asleep = ReplenishmentQueue::new(4, d(1), at(20)).unwrap();
        for (t, b) in [(22, 2), (24, 1)] {
            let r = Replenishment {
                at: at(t),
                amount: d(b),
            };
            asleep.enqueue(r, &mut w);
        }
        asleep.budget = d(4);
        asleep.check().unwrap();

        let mut deferred = asleep.clone();
        assert!(deferred.activate(at(22), at(21), &mut w));
        assert_eq!(entries(&deferred), [(21, 1), (22, 2), (24, 1)]);
        // Woken by an event at 22 (no wake-up asked for), (22, 2) has expired: it merges.
        let mut by_event = asleep;
        assert!(by_event.activate(at(22), Instant::NEVER, &mut w));
        assert_eq!(entries(&by_event), [(22, 3), (24, 1)]);
        deferred.check().unwrap();
        by_event.check().unwrap();
    }

    /// Fig. 8's transitions on a reservation with b = 10, p = 50, S = 4:
    /// (a) initial state; a split when the task blocks after using 3; (b) a depletion that
    /// queues the consumed head; (c) a merge of expired entries on activation.
    #[test]
    fn figure_8_transitions() {
        let mut w = Work::default();
        let p = d(50);
        // (a) The whole budget at the first activation.
        let mut q = ReplenishmentQueue::new(4, d(10), at(0)).unwrap();
        assert_eq!(entries(&q), [(0, 10)]);
        // The task runs 3 and blocks: 3 is planned at 0 + 50, the head keeps 7.
        let mut used = d(3);
        q.consume(&mut used, p, &mut w);
        q.split(&mut used, p, &mut w);
        assert_eq!((entries(&q), used), (vec![(0, 7), (50, 3)], d(0)));
        // It wakes at 10 (asked for 10): nothing expired, the head restarts at 10.
        assert!(q.activate(at(10), at(10), &mut w));
        assert_eq!(entries(&q), [(10, 7), (50, 3)]);
        // (b) It runs 7 and depletes: a new entry (10 + 50, 7); the head is now (50, 3), in
        // the future, so the task has no budget until 50.
        let mut used = d(7);
        q.consume(&mut used, p, &mut w);
        assert_eq!((entries(&q), used), (vec![(50, 3), (60, 7)], d(0)));
        assert!(
            !q.activate(at(40), Instant::NEVER, &mut w),
            "nothing due at 40"
        );
        // (c) It activates at 70: both expired entries merge into one head, restarted at 70.
        assert!(q.activate(at(70), Instant::NEVER, &mut w));
        assert_eq!(entries(&q), [(70, 10)]);
        q.check().unwrap();
    }

    /// When the queue is full, a new replenishment merges into the last entry and postpones it.
    #[test]
    fn a_full_queue_merges_into_its_last_entry() {
        let mut w = Work::default();
        let p = d(50);
        let mut q = ReplenishmentQueue::new(2, d(10), at(0)).unwrap();
        let mut used = d(2);
        q.split(&mut used, p, &mut w);
        assert_eq!(entries(&q), [(0, 8), (50, 2)]);
        assert!(q.activate(at(5), at(5), &mut w));
        let mut used = d(3);
        q.split(&mut used, p, &mut w);
        // (5 + 50, 3) does not fit: the last entry becomes (55, 2 + 3); the head keeps 5.
        assert_eq!(entries(&q), [(5, 5), (55, 5)]);
        q.check().unwrap();
    }

    /// With S = 1 the head is the last entry: a split postpones the whole budget, and a
    /// depletion replenishes it in full one period later; the sum stays b either way.
    #[test]
    fn a_single_entry_queue_never_amplifies_the_budget() {
        let mut w = Work::default();
        let p = d(50);
        let mut q = ReplenishmentQueue::new(1, d(10), at(0)).unwrap();
        let mut used = d(4);
        q.split(&mut used, p, &mut w);
        assert_eq!(entries(&q), [(50, 10)]);
        assert!(q.activate(at(60), at(60), &mut w));
        let mut used = d(10);
        q.consume(&mut used, p, &mut w);
        assert_eq!(entries(&q), [(110, 10)]);
        q.check().unwrap();
    }

    /// Early replenishment: replenishments due before the depletion time extend it, in order,
    /// until one is not due.
    #[test]
    fn depletion_time_counts_replenishments_due_before_it() {
        let mut w = Work::default();
        let mut q = ReplenishmentQueue::new(4, d(17), at(0)).unwrap();
        // Build (0, 10), (8, 5), (14, 2) by splitting off 7 then 2 after a restart.
        let mut used = d(7);
        q.split(&mut used, d(8), &mut w);
        assert_eq!(entries(&q), [(0, 10), (8, 7)]);
        let mut used = d(2);
        q.split(&mut used, d(14), &mut w);
        assert_eq!(entries(&q), [(0, 8), (8, 7), (14, 2)]);
        // From 0 with nothing used: 8, reaches 8 so +7 = 15, reaches 14 so +2 = 17.
        assert_eq!(q.depletion_time(at(0), d(0), &mut w), at(17));
        // From 0 with 1 used: 7 < 8, so no early replenishment.
        assert_eq!(q.depletion_time(at(0), d(1), &mut w), at(7));
    }

    #[test]
    fn a_zero_budget_or_capacity_is_refused() {
        assert!(ReplenishmentQueue::new(0, d(1), at(0)).is_err());
        assert!(ReplenishmentQueue::new(1, d(0), at(0)).is_err());
    }

    #[derive(Clone, Debug)]
    enum Op {
        Run(u64),
        Block,
        Wake(u64, bool),
    }

    proptest! {
        /// Any sequence of running (with overruns), blocking and waking keeps the invariants:
        /// at most S entries, in time order, all positive, summing to b.
        #[test]
        fn invariants_hold_under_any_sequence(
            capacity in 1usize..6,
            budget in 1u64..100,
            period in 1u64..200,
            ops in proptest::collection::vec(prop_oneof![
                (0u64..120).prop_map(Op::Run),
                Just(Op::Block),
                (0u64..300, any::<bool>()).prop_map(|(t, timed)| Op::Wake(t, timed)),
            ], 0..80),
        ) {
            let mut w = Work::default();
            let mut q = ReplenishmentQueue::new(capacity, d(budget), at(0)).unwrap();
            let (mut now, mut used) = (at(0), d(0));
            for op in ops {
                match op {
                    Op::Run(n) => {
                        used = used.saturating_add(d(n));
                        now = now.saturating_add(d(n));
                        q.consume(&mut used, d(period), &mut w);
                    }
                    Op::Block => {
                        q.consume(&mut used, d(period), &mut w);
                        q.split(&mut used, d(period), &mut w);
                    }
                    Op::Wake(dt, timed) => {
                        now = now.saturating_add(d(dt));
                        let timeout = if timed { now.saturating_sub(d(dt / 2)) } else { Instant::NEVER };
                        q.activate(now, timeout, &mut w);
                    }
                }
                prop_assert_eq!(q.check(), Ok(()));
                prop_assert!(q.len() <= capacity);
            }
        }
    }
}
