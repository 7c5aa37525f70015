//! The deferrable server (Strosnider, Lehoczky and Sha, 1995) under fixed priorities, as real
//! systems implement it.
//!
//! Each task has a reservation `(b, p)` and a priority. Its budget is reset to `b` at every
//! multiple of `p`, used or not. A task that suspends keeps what is left of its budget; it may
//! spend it at the end of one period and a full budget again at the start of the next: the
//! "double hit" that the admission test's RBF accounts for. A task out of budget is depleted
//! and leaves the run queue until its next replenishment.
//!
//! Timers are handled eagerly, as the SPR paper's baselines do: every task's replenishment
//! timer is always armed, and each scheduler invocation processes every expired timeout,
//! replenishments and activations alike, whatever their priority. That is the unbounded work
//! per invocation that the Thundering Herd attack exploits.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - a task in the run queue is ready; a ready task with budget left is in the run queue;
//! - every task has a pending replenishment timeout, at a multiple of its period;
//! - a task has a pending activation timeout exactly when it sleeps.

use alloc::vec;
use alloc::vec::Vec;

use super::{charge_running, Reservation};
use crate::runqueue::PriorityRunqueue;
use crate::suspension::{Suspensions, TaskState};
use crate::timeouts::TimeoutQueue;
use crate::{
    CoreError, Decision, Duration, Instant, Notice, Notices, Policy, Priority, TaskId, Wake, Work,
};

/// Fixed-priority scheduling with a deferrable server per task, for one core.
#[derive(Clone, Debug)]
pub struct DeferrableServer {
    priority: Vec<Priority>,
    reservation: Vec<Reservation>,
    /// Budget used in the current period; may exceed `b` by an overrun until the next reset.
    used: Vec<Duration>,
    runqueue: PriorityRunqueue,
    tasks: Suspensions,
    replenishments: TimeoutQueue,
    /// The task chosen at the last invocation and when its accounting last advanced.
    running: Option<(TaskId, Instant)>,
    /// Budget notices not yet taken ([`Policy::take_notices`]).
    notices: Notices,
}

impl DeferrableServer {
    /// A scheduler for task ids `0..capacity`, with no tasks yet.
    pub fn with_capacity(capacity: usize) -> Self {
        DeferrableServer {
            priority: vec![Priority::MIN; capacity],
            reservation: vec![Reservation::new(Duration::ZERO, Duration::ZERO); capacity],
            used: vec![Duration::ZERO; capacity],
            runqueue: PriorityRunqueue::with_capacity(capacity),
            tasks: Suspensions::with_capacity(capacity),
            replenishments: TimeoutQueue::with_capacity(capacity),
            running: None,
            notices: Notices::with_capacity(capacity),
        }
    }

    /// Adds `task` with a full budget at time zero, blocked until its first activation; its
    /// first replenishment is due at `p`.
    pub fn add_task(
        &mut self,
        task: TaskId,
        priority: Priority,
        reservation: Reservation,
    ) -> Result<(), CoreError> {
        reservation.validate()?;
        self.tasks.add(task)?;
        let t = task.index();
        self.priority[t] = priority;
        self.reservation[t] = reservation;
        let first = Instant::ZERO.saturating_add(reservation.period);
        self.replenishments.arm(task, first, &mut Work::default());
        Ok(())
    }

    /// Budget `task` has left in the current period.
    pub fn remaining(&self, task: TaskId) -> Option<Duration> {
        (self.tasks.state(task) != TaskState::Absent).then(|| {
            let t = task.index();
            self.reservation[t].budget.saturating_sub(self.used[t])
        })
    }

    /// Charges the running task up to `now`: every entry point calls this first, so budget
    /// use is exact whatever the reason for the invocation.
    fn account(&mut self, now: Instant) {
        charge_running(&mut self.running, &self.tasks, &mut self.used, now);
    }

    fn has_budget(&self, task: TaskId) -> bool {
        self.used[task.index()] < self.reservation[task.index()].budget
    }

    /// Makes a ready `task` runnable if it has budget; deadlines play no part here.
    fn enqueue(&mut self, task: TaskId, work: &mut Work) {
        if self.has_budget(task) && self.runqueue.push_back(task, self.priority[task.index()]) {
            work.queue_entries_moved += 1;
        }
    }

    fn dequeue(&mut self, task: TaskId, work: &mut Work) {
        if self.runqueue.remove(task) {
            work.queue_entries_moved += 1;
        }
    }

    /// Processes every expired replenishment: the budget is reset to full and the next one is
    /// armed at the next multiple of the period. A ready task that was out of budget is
    /// noticed replenished.
    fn replenish_expired(&mut self, now: Instant, work: &mut Work) {
        while let Some((task, _)) = self.replenishments.pop_expired(now, work) {
            let t = task.index();
            if !self.has_budget(task) && self.tasks.state(task) == TaskState::Ready {
                self.notices.note(Notice::Replenished { task });
            }
            self.used[t] = Duration::ZERO;
            work.replenishments_processed += 1;
            let period = self.reservation[t].period.as_nanos().max(1);
            let next = (now.as_nanos() / period)
                .saturating_add(1)
                .saturating_mul(period);
            self.replenishments
                .arm(task, Instant::from_nanos(next), work);
            if self.tasks.state(task) == TaskState::Ready {
                self.enqueue(task, work);
            }
        }
    }
}

impl Policy for DeferrableServer {
    fn remaining_budget(&self, task: TaskId, _now: Instant) -> Option<Duration> {
        // As of the last accounting: every entry point charges the running task first.
        self.remaining(task)
    }

    fn notice_capacity(&self) -> usize {
        self.notices.capacity()
    }

    fn take_notices(&mut self, notices: &mut Notices) {
        self.notices.move_into(notices);
    }

    fn name(&self) -> &'static str {
        "deferrable-server"
    }

    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        _wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.tasks.expect_suspended(task)?;
        self.account(now);
        self.tasks.make_ready(task, work);
        self.enqueue(task, work);
        Ok(())
    }

    fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.tasks.expect_sleepable(task)?;
        self.account(now);
        if self.tasks.returns_at_once(now, task, until) {
            // It keeps its place (or, out of budget, waits for its replenishment as before).
            return Ok(());
        }
        self.dequeue(task, work);
        if self.tasks.sleep(now, task, until, wake, work) {
            self.enqueue(task, work);
        }
        Ok(())
    }

    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.account(now);
        self.dequeue(task, work);
        self.tasks.block(task);
        Ok(())
    }

    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        self.account(now);
        if let Some((task, _)) = self.running {
            if !self.has_budget(task) && self.runqueue.remove(task) {
                // Depleted while it ran: out of the run queue until its next replenishment.
                work.queue_entries_moved += 1;
                self.notices.note(Notice::BudgetExhausted { task });
            }
        }
        // Eager timer handling: every expired replenishment and activation, whatever its
        // priority, in this one invocation.
        self.replenish_expired(now, work);
        while let Some((task, _)) = self.tasks.wake_expired(now, work) {
            self.enqueue(task, work);
        }
        let next = self.runqueue.highest();
        self.running = next.map(|task| (task, now));
        let depletion = next.map(|task| {
            let t = task.index();
            now.saturating_add(self.reservation[t].budget.saturating_sub(self.used[t]))
        });
        let timer = self.tasks.next_timer(&self.replenishments, depletion, work);
        Decision { next, timer }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.runqueue.check()?;
        self.tasks.check()?;
        self.replenishments.check()?;
        for t in 0..self.priority.len() {
            let task = TaskId(t as u32);
            let state = self.tasks.state(task);
            if state == TaskState::Absent {
                continue;
            }
            let queued = self.runqueue.contains(task);
            if queued && state != TaskState::Ready {
                return Err("a task in the run queue is ready");
            }
            if state == TaskState::Ready && self.has_budget(task) && !queued {
                return Err("a ready task with budget left is in the run queue");
            }
            if !self.replenishments.contains(task) {
                return Err("every task has a pending replenishment");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at, ms, JOB};

    /// A task with b = 2, p = 5 that keeps running: it depletes at 2, is replenished at 5.
    #[test]
    fn budget_is_enforced_and_reset_at_multiples_of_the_period() {
        let mut ds = DeferrableServer::with_capacity(1);
        let mut w = Work::default();
        let r = Reservation::new(ms(2), ms(5));
        ds.add_task(TaskId(0), Priority(1), r).unwrap();
        ds.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        let d = ds.schedule(at(0), &mut w);
        assert_eq!(
            d,
            Decision {
                next: Some(TaskId(0)),
                timer: Some(at(2))
            }
        );
        let d = ds.schedule(at(2), &mut w);
        assert_eq!(
            d,
            Decision {
                next: None,
                timer: Some(at(5))
            },
            "depleted until 5"
        );
        assert_eq!(ds.remaining(TaskId(0)), Some(Duration::ZERO));
        let d = ds.schedule(at(5), &mut w);
        assert_eq!(
            d,
            Decision {
                next: Some(TaskId(0)),
                timer: Some(at(7))
            }
        );
        ds.check_invariants().unwrap();
    }

    /// Every expired replenishment is processed in one invocation: the work grows with the
    /// number of timers that expire together, whatever the tasks' priorities or states.
    #[test]
    fn one_invocation_processes_every_expired_timer() {
        for n in [1u32, 16, 256] {
            let mut ds = DeferrableServer::with_capacity(n as usize);
            let r = Reservation::new(ms(1), ms(10));
            for t in 0..n {
                ds.add_task(TaskId(t), Priority((t % 200) as u8), r)
                    .unwrap();
            }
            let mut w = Work::default();
            ds.schedule(at(10), &mut w);
            assert_eq!(w.replenishments_processed, n);
            assert!(w.timeouts_processed >= n);
            ds.check_invariants().unwrap();
        }
    }

    #[test]
    fn invalid_reservations_are_refused() {
        let mut ds = DeferrableServer::with_capacity(1);
        let over = Reservation::new(ms(6), ms(5));
        assert_eq!(
            ds.add_task(TaskId(0), Priority(1), over),
            Err(CoreError::InvalidParameter)
        );
        let zero = Reservation::new(ms(0), ms(5));
        assert_eq!(
            ds.add_task(TaskId(0), Priority(1), zero),
            Err(CoreError::InvalidParameter)
        );
        ds.check_invariants().unwrap();
    }
}
