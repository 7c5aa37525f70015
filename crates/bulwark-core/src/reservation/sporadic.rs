//! The sporadic server (Sprunt, Sha and Lehoczky) under fixed priorities, with the POSIX
//! defects corrected as Stanovich et al. describe, implemented the way real systems do: the
//! baseline the SPR paper attacks (A2).
//!
//! Budget follows the same replenishment queue as SPR ([`ReplenishmentQueue`], Fig. 8): what a
//! task consumes from an activation returns one period after that activation; a full queue
//! merges into its last entry and postpones it; an overrun is deducted from the next
//! replenishment; budget is never created, so it cannot be amplified.
//!
//! What makes it naive is its timers, as in the paper's baseline: every pending replenishment
//! of every task has its own timer, armed whatever the task's state or priority, and each
//! scheduler invocation processes every expired timer (replenishments and activations). A
//! depleted task's wake-up fires at the time it asked for, although it cannot run; a running
//! task is interrupted at each of its own replenishments (no early replenishment). So the
//! work of one invocation grows with the number of timers that expire together, and
//! low-priority tasks can fill a high-priority task's execution with interrupts.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - a task in the run queue is ready;
//! - a task has a replenishment timer exactly when its queue has an entry later than the last
//!   one its timers fired for, and the timer is that entry's time;
//! - every replenishment queue holds 1 to `S` entries summing to `b`.

use alloc::vec;
use alloc::vec::Vec;

use super::replenishment::ReplenishmentQueue;
use super::{charge_running, Reservation};
use crate::runqueue::PriorityRunqueue;
use crate::suspension::{Suspensions, TaskState};
use crate::timeouts::TimeoutQueue;
use crate::{
    CoreError, Decision, Duration, Instant, Notice, Notices, Policy, Priority, TaskId, Wake, Work,
};

/// Fixed-priority scheduling with a sporadic server per task and eager timers, for one core.
#[derive(Clone, Debug)]
pub struct SporadicServer {
    priority: Vec<Priority>,
    reservation: Vec<Reservation>,
    queue: Vec<Option<ReplenishmentQueue>>,
    /// The used budget `u` of the queue's head.
    used: Vec<Duration>,
    /// The time up to which the task's replenishment timers have fired.
    fired_through: Vec<Instant>,
    replenishment_timers: TimeoutQueue,
    runqueue: PriorityRunqueue,
    tasks: Suspensions,
    running: Option<(TaskId, Instant)>,
    /// Budget notices not yet taken ([`Policy::take_notices`]).
    notices: Notices,
}

impl SporadicServer {
    /// A scheduler for task ids `0..capacity`, with no tasks yet.
    pub fn with_capacity(capacity: usize) -> Self {
        SporadicServer {
            priority: vec![Priority::MIN; capacity],
            reservation: vec![Reservation::new(Duration::ZERO, Duration::ZERO); capacity],
            queue: vec![None; capacity],
            used: vec![Duration::ZERO; capacity],
            fired_through: vec![Instant::ZERO; capacity],
            replenishment_timers: TimeoutQueue::with_capacity(capacity),
            runqueue: PriorityRunqueue::with_capacity(capacity),
            tasks: Suspensions::with_capacity(capacity),
            running: None,
            notices: Notices::with_capacity(capacity),
        }
    }

    /// Adds `task` blocked, with its whole budget available from its first activation.
    pub fn add_task(
        &mut self,
        task: TaskId,
        priority: Priority,
        reservation: Reservation,
    ) -> Result<(), CoreError> {
        reservation.validate()?;
        let queue = ReplenishmentQueue::new(
            reservation.replenishments as usize,
            reservation.budget,
            Instant::ZERO,
        )?;
        self.tasks.add(task)?;
        let t = task.index();
        self.priority[t] = priority;
        self.reservation[t] = reservation;
        self.queue[t] = Some(queue);
        Ok(())
    }

    /// The budget `task` can use from `now` (the replenishments that have arrived, less what
    /// it used), or `None` if it is not added.
    pub fn remaining(&self, task: TaskId, now: Instant) -> Option<Duration> {
        let queue = self.queue.get(task.index())?.as_ref()?;
        Some(arrived(queue, now).saturating_sub(self.used[task.index()]))
    }

    /// The replenishment queue of `task`, for inspection.
    pub fn replenishments(&self, task: TaskId) -> Option<&ReplenishmentQueue> {
        self.queue.get(task.index())?.as_ref()
    }

    fn account(&mut self, now: Instant) {
        charge_running(&mut self.running, &self.tasks, &mut self.used, now);
    }

    /// Algorithm 1, lines 1-4 (shared with SPR): plan full replenishments for the consumed
    /// heads. True when budget remains at `now`.
    fn consume(&mut self, task: TaskId, now: Instant, work: &mut Work) -> bool {
        let t = task.index();
        let period = self.reservation[t].period;
        let Some(queue) = self.queue[t].as_mut() else {
            return false;
        };
        queue.consume(&mut self.used[t], period, work);
        let has_budget = queue.head().at <= now;
        self.arm_replenishment(task, now, work);
        has_budget
    }

    /// Arms `task`'s timer at its first replenishment after `now` (what is due by `now` is
    /// available already, and the caller has just looked at it).
    fn arm_replenishment(&mut self, task: TaskId, now: Instant, work: &mut Work) {
        let t = task.index();
        let Some(queue) = self.queue[t].as_ref() else {
            return;
        };
        self.fired_through[t] = self.fired_through[t].max(now);
        let after = self.fired_through[t];
        match queue.iter().map(|r| r.at).find(|&at| at > after) {
            Some(at) if self.replenishment_timers.timeout(task) != Some(at) => {
                self.replenishment_timers.arm(task, at, work);
            }
            Some(_) => {}
            None => {
                self.replenishment_timers.cancel(task, work);
            }
        }
    }

    /// The task suspends: the consumed budget is split off and planned one period after the
    /// head (Algorithm 1, lines 10-13, the Stanovich correction).
    fn suspend(&mut self, task: TaskId, now: Instant, work: &mut Work) {
        if self.runqueue.remove(task) {
            work.queue_entries_moved += 1;
        }
        if self.consume(task, now, work) {
            let t = task.index();
            let period = self.reservation[t].period;
            if let Some(queue) = self.queue[t].as_mut() {
                queue.split(&mut self.used[t], period, work);
            }
            self.arm_replenishment(task, now, work);
        }
    }

    /// The task activates: expired replenishments merge into the head, restarted at this
    /// activation (Algorithm 3, lines 1-5, the sporadic-server rule itself); with budget it
    /// joins the run queue.
    fn wake(&mut self, task: TaskId, now: Instant, work: &mut Work) {
        let t = task.index();
        let Some(queue) = self.queue[t].as_mut() else {
            return;
        };
        let has_budget = queue.activate(now, now, work);
        self.arm_replenishment(task, now, work);
        if has_budget && self.runqueue.push_back(task, self.priority[t]) {
            work.queue_entries_moved += 1;
        }
    }
}

/// The budget of the entries due by `now`.
fn arrived(queue: &ReplenishmentQueue, now: Instant) -> Duration {
    queue
        .iter()
        .take_while(|r| r.at <= now)
        .fold(Duration::ZERO, |sum, r| sum.saturating_add(r.amount))
}

impl Policy for SporadicServer {
    fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        self.remaining(task, now)
    }

    fn notice_capacity(&self) -> usize {
        self.notices.capacity()
    }

    fn take_notices(&mut self, notices: &mut Notices) {
        self.notices.move_into(notices);
    }

    fn name(&self) -> &'static str {
        "sporadic-server"
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
        self.wake(task, now, work);
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
        if until <= now {
            if self.tasks.state(task) == TaskState::Blocked {
                self.tasks.make_ready(task, work);
                self.wake(task, now, work);
            }
            return Ok(());
        }
        if self.tasks.state(task) == TaskState::Ready {
            self.suspend(task, now, work);
        }
        // No pruning: the wake-up timer is armed for the time asked, budget or not.
        self.tasks.sleep(now, task, until, wake, work);
        Ok(())
    }

    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.account(now);
        self.suspend(task, now, work);
        self.tasks.block(task);
        Ok(())
    }

    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        self.account(now);
        if let Some((task, _)) = self.running {
            if self.tasks.state(task) == TaskState::Ready && !self.consume(task, now, work) {
                // Depleted: out of the run queue until a replenishment timer fires.
                if self.runqueue.remove(task) {
                    work.queue_entries_moved += 1;
                    self.notices.note(Notice::BudgetExhausted { task });
                }
            }
        }
        // Eager timer handling: every expired replenishment, whatever its task's priority or
        // state, then every expired activation, in this one invocation.
        while let Some((task, _)) = self.replenishment_timers.pop_expired(now, work) {
            let t = task.index();
            work.replenishments_processed += 1;
            self.arm_replenishment(task, now, work);
            let due = self.queue[t].as_ref().is_some_and(|q| q.head().at <= now);
            if self.tasks.state(task) == TaskState::Ready
                && due
                && self.runqueue.push_back(task, self.priority[t])
            {
                // A ready task out of budget until now.
                work.queue_entries_moved += 1;
                self.notices.note(Notice::Replenished { task });
            }
        }
        while let Some((task, _)) = self.tasks.wake_expired(now, work) {
            self.wake(task, now, work);
        }
        let next = self.runqueue.highest();
        self.running = next.map(|task| (task, now));
        // Interrupt at depletion of the budget that has arrived: no early replenishment.
        let depletion = next.map(|task| {
            let t = task.index();
            let queue = self.queue[t].as_ref();
            let left = queue.map_or(Duration::ZERO, |q| arrived(q, now));
            work.replenishments_processed += queue.map_or(0, |q| q.len() as u32);
            now.saturating_add(left.saturating_sub(self.used[t]))
        });
        let timer = self
            .tasks
            .next_timer(&self.replenishment_timers, depletion, work);
        Decision { next, timer }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.runqueue.check()?;
        self.tasks.check()?;
        self.replenishment_timers.check()?;
        for t in 0..self.priority.len() {
            let task = TaskId(t as u32);
            let state = self.tasks.state(task);
            let Some(queue) = self.queue[t].as_ref() else {
                continue;
            };
            queue.check()?;
            if queue.len() > self.reservation[t].replenishments as usize {
                return Err("a replenishment queue holds at most S entries");
            }
            let queued = self.runqueue.contains(task);
            if queued && state != TaskState::Ready {
                return Err("a task in the run queue is ready");
            }
            let pending = queue
                .iter()
                .map(|r| r.at)
                .find(|&at| at > self.fired_through[t]);
            if self.replenishment_timers.timeout(task) != pending {
                return Err("a task's replenishment timer is its first unfired replenishment");
            }
        }
        Ok(())
    }
}
