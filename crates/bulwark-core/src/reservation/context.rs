//! A scheduling context: one SPR reservation `(b, p, S, eta)` under the sporadic-server rule
//! (SPR paper, sections III and IV), as a kernel object of its own, separate from the threads
//! that run on it.
//!
//! A platform binds threads to a context and charges it for their execution; a thread that
//! serves another's request runs on the requester's context (the context is donated with the
//! request, as an seL4 MCS passive server runs on its caller's). The context decides only
//! whether its threads may run (budget) and how long a dispatched one keeps the core (`eta`);
//! which thread runs is the platform's scheduling.
//!
//! The budget is a [`ReplenishmentQueue`] driven by the steps of the paper's algorithms:
//! consumption (Algorithm 1, lines 1-4), the split when the owner suspends (lines 10-13),
//! activation with merging (Algorithm 3) and the depletion time with early replenishment
//! (Algorithm 2, lines 1-4). So from each activation its threads run at most `b` in the next
//! `p`.

use super::replenishment::ReplenishmentQueue;
use super::Reservation;
use crate::{CoreError, Duration, Instant, Work};

/// A scheduling context's state.
#[derive(Clone, Debug)]
pub struct SchedContext {
    reservation: Reservation,
    queue: ReplenishmentQueue,
    /// `u`: budget consumed from the head and not yet planned for replenishment.
    used: Duration,
    /// Out of budget: its threads wait for the head's replenishment.
    depleted: bool,
}

impl SchedContext {
    /// A context with its whole budget available from time zero; an error for a zero budget
    /// or a zero queue capacity.
    pub fn new(reservation: Reservation) -> Result<SchedContext, CoreError> {
        let queue = ReplenishmentQueue::new(
            usize::from(reservation.replenishments),
            reservation.budget,
            Instant::ZERO,
        )?;
        Ok(SchedContext {
            reservation,
            queue,
            used: Duration::ZERO,
            depleted: false,
        })
    }

    /// Its reservation.
    pub fn reservation(&self) -> Reservation {
        self.reservation
    }

    /// The non-preemptive region `eta` a dispatch on it grants (with the budget left).
    pub fn non_preemptive(&self) -> Duration {
        self.reservation.non_preemptive
    }

    /// True while its threads wait for a replenishment.
    pub fn is_depleted(&self) -> bool {
        self.depleted
    }

    /// Charges `ran` of execution at `now` and plans the replenishment of every head it used
    /// up (Algorithm 1, lines 1-4). True while budget is left at `now` (line 15: `t_head <=
    /// t_now`, with `u` below the head's amount).
    pub fn charge(&mut self, now: Instant, ran: Duration, work: &mut Work) -> bool {
        self.used = self.used.saturating_add(ran);
        self.queue
            .consume(&mut self.used, self.reservation.period, work);
        self.queue.head().at <= now
    }

    /// The running thread found no budget left at `now` (after [`charge`](Self::charge)):
    /// the context waits for its replenishment (Algorithm 1, lines 7-9).
    pub fn deplete(&mut self) {
        self.depleted = true;
    }

    /// Its owner becomes active at `now` (a job arrives with none pending, or the
    /// replenishment of a depleted context is due): expired replenishments merge into the
    /// head, which restarts at `now` if due (Algorithm 3). True when budget is available.
    pub fn activate(&mut self, now: Instant, work: &mut Work) -> bool {
        let available = self.queue.activate(now, Instant::NEVER, work);
        self.depleted = !available;
        available
    }

    /// Its owner's last pending job completed at `now` (Algorithm 1, lines 10-13): with
    /// budget left, what it used is split off and planned one period after the head.
    pub fn suspend(&mut self, now: Instant, work: &mut Work) {
        if self.charge(now, Duration::ZERO, work) {
            self.queue
                .split(&mut self.used, self.reservation.period, work);
        }
    }

    /// When a thread dispatched on it at `now` runs out of budget, counting the
    /// replenishments due before then (Algorithm 2, lines 1-4).
    pub fn depletion_time(&self, now: Instant, work: &mut Work) -> Instant {
        self.queue.depletion_time(now, self.used, work)
    }

    /// When the next budget arrives: the head's time.
    pub fn replenishment_time(&self) -> Instant {
        self.queue.head().at
    }

    /// The queue's invariants: 1 to `S` entries in time order summing to `b`.
    pub fn check(&self) -> Result<(), &'static str> {
        self.queue.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at, ms};

    /// b = 2 ms every 10 ms, activated at 0: 2 ms of running depletes it until 10 ms (the
    /// used head comes back one period after the activation); at 10 ms it activates again
    /// with the whole budget.
    #[test]
    fn a_used_budget_comes_back_one_period_after_the_activation() {
        let mut work = Work::default();
        let mut context = SchedContext::new(Reservation::new(ms(2), ms(10))).unwrap();
        assert!(context.activate(at(0), &mut work));
        assert_eq!(context.depletion_time(at(0), &mut work), at(2));
        assert!(context.charge(at(1), ms(1), &mut work));
        assert!(!context.charge(at(2), ms(1), &mut work));
        context.deplete();
        assert!(context.is_depleted());
        assert_eq!(context.replenishment_time(), at(10));
        assert!(!context.activate(at(9), &mut work));
        assert!(context.activate(at(10), &mut work));
        assert!(!context.is_depleted());
        assert_eq!(context.depletion_time(at(10), &mut work), at(12));
        assert!(context.check().is_ok());
    }

    /// Activated at 0, it runs 0.5 ms of its 2 ms and suspends at 1 ms: the used 0.5 ms is
    /// split off and planned at the head's time plus a period, 10 ms, and the head keeps
    /// 1.5 ms. Reactivated at 3 ms (nothing expired to merge), the head restarts at 3 ms and
    /// lasts until 4.5 ms, before the 10 ms replenishment.
    #[test]
    fn a_suspension_splits_off_what_was_used() {
        let mut work = Work::default();
        let mut context = SchedContext::new(Reservation::new(ms(2), ms(10))).unwrap();
        assert!(context.activate(at(0), &mut work));
        assert!(context.charge(at(1), Duration::from_micros(500), &mut work));
        context.suspend(at(1), &mut work);
        assert!(context.activate(at(3), &mut work));
        assert_eq!(
            context.depletion_time(at(3), &mut work),
            Instant::ZERO.saturating_add(Duration::from_micros(4_500))
        );
        assert!(context.check().is_ok());
    }

    #[test]
    fn an_empty_reservation_is_refused() {
        assert!(SchedContext::new(Reservation::new(Duration::ZERO, ms(10))).is_err());
        assert!(SchedContext::new(Reservation::new(ms(1), ms(10)).with_replenishments(0)).is_err());
    }
}
