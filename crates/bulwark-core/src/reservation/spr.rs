//! Shielded processor reservations (SPR; Kökten, Parmer and Brandenburg), sections III and IV
//! of the paper: fixed-priority reservations whose management work per scheduler invocation
//! is bounded, whatever the other tasks do.
//!
//! What makes it shielded, and where the code does it:
//! - budget accounting of the previous task only (Algorithm 1, `Spr::charge_previous` and
//!   `Spr::suspend`);
//! - early replenishment: a replenishment due before the running task's budget runs out is
//!   counted at dispatch instead of interrupting it (Algorithm 2, lines 1-4);
//! - pruning: a suspended task gets no replenishment timer, and a depleted task's wake-up is
//!   postponed to its replenishment (Algorithm 1, lines 7-9); replenishments that expired
//!   meanwhile are merged when it activates (Algorithm 3);
//! - deferral and bounded processing: per-priority timer heaps ([`PriorityTimeouts`]) and **at
//!   most one timeout processed per invocation**, that of a task more important than every
//!   ready task, which therefore runs next (section IV-B, "Timeout processing"). So one
//!   invocation touches at most two reservations: the previous task's and the next one's;
//! - non-preemptive regions: a dispatched task runs `min(eta, remaining budget)` before any
//!   higher-priority timeout may preempt it (section III-F, Algorithm 2 line 6).
//!
//! Two replenishment rules share all of that ([`ReplenishmentRule`]): the sporadic-server
//! rule (the paper's SPR, with the replenishment queue of Fig. 8) and the deferrable-server
//! rule (the variant of the paper's Fig. 12).
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - exactly the `Ready` tasks are in the run queue, and they have no timeout;
//! - a `Depleted` task has a timeout (its replenishment);
//! - a `Suspended` task has a timeout exactly when it asked for a wake-up, never earlier than
//!   the wake-up it asked for;
//! - every replenishment queue holds 1 to `S` entries summing to `b` (no amplification).

use alloc::vec;
use alloc::vec::Vec;

use super::priority_timeouts::{PriorityTimeouts, TimerLinked, TimerSlot};
use super::replenishment::ReplenishmentQueue;
use super::Reservation;
use crate::runqueue::{Link, Linked, RunLists};
use crate::{
    CoreError, Decision, Duration, Instant, Notice, Notices, Policy, Priority, TaskId, Wake, Work,
};

/// Which replenishment rule an SPR reservation follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplenishmentRule {
    /// Sporadic server (Sprunt et al., corrected by Stanovich et al.): budget consumed from
    /// an activation comes back one period after it, through the replenishment queue.
    Sporadic,
    /// Deferrable server: the budget is reset to `b` at every multiple of `p`.
    Deferrable,
}

/// The most work units (see [`Work::units`]) one SPR invocation, event included, can take
/// for reservations of at most `replenishments` entries (`S`) on a core whose tasks use
/// `priority_levels` distinct priorities. It does not depend on the number of tasks: that is
/// the point of SPR. Derived from the code, step by step:
///
/// - the event: an activation merges up to `S - 1` entries, cancels one timeout and queues
///   the task, or arms its timeout (`S + 1`); a suspension consumes up to `S` entries
///   (Algorithm 1, lines 1-4), splits once and arms one timeout, plus one run-queue removal
///   (`S + 3`);
/// - accounting of the previous task: up to `S` consumed entries, one run-queue removal, one
///   timeout armed (`S + 2`);
/// - timeout processing: one examined top per level in the sweep, one cancel, one processed
///   timeout, and an activation as above (`L + S + 3`);
/// - dispatch: up to `S - 1` entries for early replenishment, and a sweep for `t_hp`
///   (`S + L`).
pub const fn work_bound(replenishments: usize, priority_levels: usize) -> u64 {
    let s = replenishments as u64;
    let l = priority_levels as u64;
    (s + 3) + (s + 2) + (l + s + 3) + (s + l)
}

/// A task's state as SPR sees it (section IV-A, "Per-task data").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Absent,
    /// Activated and with budget: in the run queue.
    Ready,
    /// Activated but out of budget: waits for its replenishment timeout.
    Depleted,
    /// Self-suspended (sleeping or blocked).
    Suspended,
}

/// The budget bookkeeping of one task, per the replenishment rule.
#[derive(Clone, Debug)]
enum Budget {
    /// The replenishment queue `R_i`.
    Sporadic(ReplenishmentQueue),
    /// The start of the deferrable-server period that `used` belongs to.
    Deferrable { period_start: Instant },
}

/// One task's SPR data (section IV-A, "Per-task data"), kept together so that an invocation,
/// which touches at most two reservations, touches two records, whatever the number of tasks.
/// The record is intrusive: it holds the task's run-queue link, its timer slot and (for `S` up
/// to 8) its replenishment entries, so no table indexed by task is read besides this one.
///
/// It is laid out for the cache (`repr(C)`, aligned to a 64-byte line): the first line holds
/// what every invocation reads of a task it touches (link, timer slot, state, priority, the
/// wake-up, used budget, dispatch time, period and non-preemptive region); the budget's
/// bookkeeping follows, the replenishment queue's header and first entries in the second
/// line. So a task whose queue head is in its first slots costs two lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct TaskRecord {
    /// Its place in the run queue's lists.
    link: Link,
    /// Its place in the timer heaps (registered when the task is added).
    timer: TimerSlot,
    state: State,
    priority: Priority,
    /// `tau.timeout`: the wake-up the task asked for (postponed to its replenishment when it
    /// suspended out of budget, Algorithm 1 line 8), or `NEVER` when it blocked.
    wanted: Instant,
    /// The used budget `u_i` (so that the current budget is `b_head - u_i`).
    used: Duration,
    /// `x_i`: when the task was last dispatched by a context switch.
    started: Instant,
    /// The reservation's period `p`.
    period: Duration,
    /// The reservation's non-preemptive region `eta`.
    non_preemptive: Duration,
    /// The reservation's budget `b`.
    limit: Duration,
    /// The reservation's replenishment-queue capacity `S`.
    replenishments: u16,
    budget: Option<Budget>,
}

impl TaskRecord {
    const ABSENT: TaskRecord = TaskRecord {
        link: Link::UNLINKED,
        timer: TimerSlot::UNREGISTERED,
        state: State::Absent,
        priority: Priority::MIN,
        wanted: Instant::NEVER,
        used: Duration::ZERO,
        started: Instant::ZERO,
        period: Duration::ZERO,
        non_preemptive: Duration::ZERO,
        limit: Duration::ZERO,
        replenishments: 0,
        budget: None,
    };
}

impl Linked for TaskRecord {
    fn link(&self) -> &Link {
        &self.link
    }
    fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }
}

impl TimerLinked for TaskRecord {
    fn timer(&self) -> &TimerSlot {
        &self.timer
    }
    fn timer_mut(&mut self) -> &mut TimerSlot {
        &mut self.timer
    }
}

/// Fixed-priority scheduling with shielded processor reservations, for one core.
///
/// Laid out (`repr(C)`) so that what every invocation reads of it comes first: the records'
/// address, `running`, `touched` and the run queue's bitmap in two lines, the run queue's
/// lists, then the timer heaps' bitmap and per-level table, all within its first 4 KiB for
/// priorities below 57. Left to the compiler, these lay across 8.5 KiB, so an invocation read
/// one more page of it and one more line.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Spr {
    tasks: Vec<TaskRecord>,
    /// `tau_p`, the task chosen at the last invocation, and when its accounting last advanced.
    running: Option<(TaskId, Instant)>,
    /// The reservations this invocation has touched so far (at most three slots are needed:
    /// an external activation, the previous task and the next one).
    touched: [Option<TaskId>; 3],
    runqueue: RunLists,
    timeouts: PriorityTimeouts,
    /// Budget notices not yet taken ([`Policy::take_notices`]).
    notices: Notices,
    rule: ReplenishmentRule,
}

impl Spr {
    /// A scheduler for task ids `0..capacity` following `rule`, with no tasks yet.
    pub fn with_capacity(capacity: usize, rule: ReplenishmentRule) -> Self {
        Spr {
            rule,
            tasks: vec![TaskRecord::ABSENT; capacity],
            runqueue: RunLists::default(),
            timeouts: PriorityTimeouts::new(),
            running: None,
            touched: [None; 3],
            notices: Notices::with_capacity(capacity),
        }
    }

    /// Adds `task` blocked, with its full budget available from its first activation (the
    /// queue of Fig. 8a; `t_act` is set by Algorithm 3, line 5, when it activates).
    pub fn add_task(
        &mut self,
        task: TaskId,
        priority: Priority,
        reservation: Reservation,
    ) -> Result<(), CoreError> {
        reservation.validate()?;
        match self.tasks.get(task.index()).map(|r| r.state) {
            None => return Err(CoreError::UnknownTask),
            Some(State::Absent) => {}
            Some(_) => return Err(CoreError::AlreadyAdded),
        }
        let budget = match self.rule {
            ReplenishmentRule::Sporadic => Budget::Sporadic(ReplenishmentQueue::new(
                reservation.replenishments as usize,
                reservation.budget,
                Instant::ZERO,
            )?),
            ReplenishmentRule::Deferrable => Budget::Deferrable {
                period_start: Instant::ZERO,
            },
        };
        self.timeouts.register(&mut self.tasks, task, priority);
        let record = &mut self.tasks[task.index()];
        record.priority = priority;
        record.period = reservation.period;
        record.non_preemptive = reservation.non_preemptive;
        record.limit = reservation.budget;
        record.replenishments = reservation.replenishments;
        record.state = State::Suspended;
        record.budget = Some(budget);
        Ok(())
    }

    /// The budget `task` could use from `now` without waiting for a replenishment (counting
    /// no early replenishment), or `None` if it is not added.
    pub fn remaining(&self, task: TaskId, now: Instant) -> Option<Duration> {
        let t = task.index();
        match self.tasks.get(t)?.budget.as_ref()? {
            Budget::Sporadic(queue) => {
                let due: Duration = queue
                    .iter()
                    .take_while(|r| r.at <= now)
                    .fold(Duration::ZERO, |sum, r| sum.saturating_add(r.amount));
                Some(due.saturating_sub(self.tasks[t].used))
            }
            Budget::Deferrable { period_start } => {
                let record = &self.tasks[t];
                if now >= period_start.saturating_add(record.period) {
                    return Some(record.limit);
                }
                Some(record.limit.saturating_sub(record.used))
            }
        }
    }

    /// The replenishment queue of `task` (sporadic rule only), for inspection.
    pub fn replenishments(&self, task: TaskId) -> Option<&ReplenishmentQueue> {
        match self.tasks.get(task.index())?.budget.as_ref()? {
            Budget::Sporadic(queue) => Some(queue),
            Budget::Deferrable { .. } => None,
        }
    }

    /// Arms `task`'s timeout at `at`, through the slot its record holds.
    fn arm_timeout(&mut self, task: TaskId, at: Instant, work: &mut Work) {
        self.timeouts.arm(&mut self.tasks, task, at, work);
    }

    /// Cancels `task`'s timeout, if it has one.
    fn cancel_timeout(&mut self, task: TaskId, work: &mut Work) {
        self.timeouts.cancel(&mut self.tasks, task, work);
    }

    fn touch(&mut self, task: TaskId, work: &mut Work) {
        if self.touched.contains(&Some(task)) {
            return;
        }
        if let Some(slot) = self.touched.iter_mut().find(|s| s.is_none()) {
            *slot = Some(task);
        }
        work.reservations_touched += 1;
    }

    /// Advances the running task's used budget to `now`.
    fn account(&mut self, now: Instant) {
        let Some((task, since)) = self.running else {
            return;
        };
        let t = task.index();
        self.running = Some((task, now));
        if self.tasks[t].state == State::Suspended {
            // It suspended at its last accounting and has not run since.
            return;
        }
        let elapsed = now.saturating_duration_since(since);
        let record = &mut self.tasks[t];
        match record.budget.as_mut() {
            Some(Budget::Deferrable { period_start }) => {
                let p = record.period;
                if now >= period_start.saturating_add(p) {
                    // It ran across a period boundary (early replenishment): what it used
                    // before belongs to a budget that is gone; what it used since is charged
                    // to the new one.
                    let start = align_down(now, p);
                    *period_start = start;
                    record.used = now.saturating_duration_since(start.max(since));
                } else {
                    record.used = record.used.saturating_add(elapsed);
                }
            }
            _ => record.used = record.used.saturating_add(elapsed),
        }
    }

    /// Algorithm 1, lines 1-4 for the sporadic rule (plan full replenishments for every
    /// consumed head), or the period reset of the deferrable rule; then whether the task has
    /// budget at `now` (`t_head <= t_now`, line 15, or `u < b`).
    fn settle(&mut self, task: TaskId, now: Instant, work: &mut Work) -> bool {
        let record = &mut self.tasks[task.index()];
        let period = record.period;
        match record.budget.as_mut() {
            Some(Budget::Sporadic(queue)) => {
                queue.consume(&mut record.used, period, work);
                queue.head().at <= now
            }
            Some(Budget::Deferrable { period_start }) => {
                if now >= period_start.saturating_add(period) {
                    *period_start = align_down(now, period);
                    record.used = Duration::ZERO;
                    work.replenishments_processed += 1;
                }
                record.used < record.limit
            }
            None => false,
        }
    }

    /// When `task`'s next budget arrives: `t_head`, or the next period boundary.
    fn replenishment_time(&self, task: TaskId) -> Instant {
        let t = task.index();
        match &self.tasks[t].budget {
            Some(Budget::Sporadic(queue)) => queue.head().at,
            Some(Budget::Deferrable { period_start }) => {
                period_start.saturating_add(self.tasks[t].period)
            }
            None => Instant::NEVER,
        }
    }

    /// Algorithm 3: `task` activates at `now` (its wake-up, asked for at `wanted`, or an
    /// event). Expired replenishments are merged (lines 1-3); with budget it becomes ready
    /// (lines 4-7), without it waits depleted for its replenishment (lines 8-11).
    fn activate_task(&mut self, now: Instant, task: TaskId, work: &mut Work) {
        self.touch(task, work);
        let t = task.index();
        let wanted = core::mem::replace(&mut self.tasks[t].wanted, Instant::NEVER);
        let has_budget = match self.tasks[t].budget.as_mut() {
            Some(Budget::Sporadic(queue)) => queue.activate(now, wanted, work),
            _ => self.settle(task, now, work),
        };
        if has_budget {
            self.tasks[t].state = State::Ready;
            let priority = self.tasks[t].priority;
            if self.runqueue.push_back(&mut self.tasks, task, priority) {
                work.queue_entries_moved += 1;
            }
        } else {
            self.tasks[t].state = State::Depleted;
            let at = self.replenishment_time(task);
            self.arm_timeout(task, at, work);
        }
    }

    /// Algorithm 1 for a task that suspends at `now` until `wanted` (`NEVER`: blocked). If
    /// it is out of budget its wake-up is postponed to its replenishment (lines 7-9: no
    /// premature activation timer); otherwise the used budget is split off and planned one
    /// period after the head (lines 10-13).
    fn suspend(&mut self, now: Instant, task: TaskId, wanted: Instant, work: &mut Work) {
        self.touch(task, work);
        let t = task.index();
        if self.runqueue.remove(&mut self.tasks, task) {
            work.queue_entries_moved += 1;
        }
        let has_budget = self.settle(task, now, work);
        self.tasks[t].state = State::Suspended;
        let record = &mut self.tasks[t];
        if has_budget {
            if let Some(Budget::Sporadic(queue)) = record.budget.as_mut() {
                queue.split(&mut record.used, record.period, work);
            }
        }
        // The split itself may leave no budget due: a full queue merges the split-off part
        // into its last entry, which with S = 1 is the head, postponed by a period. So the
        // pruning of line 7 is decided after it: never wake before the budget is back.
        let due = match &self.tasks[t].budget {
            Some(Budget::Sporadic(queue)) => queue.head().at <= now,
            _ => has_budget,
        };
        let timeout = if due {
            wanted
        } else {
            wanted.max(self.replenishment_time(task))
        };
        // Line 8: the postponed wake-up is the task's timeout from now on, so its activation
        // (Algorithm 3) reads expired entries at it, not at the earlier one (NEVER stays NEVER).
        self.tasks[t].wanted = timeout;
        if wanted != Instant::NEVER {
            self.arm_timeout(task, timeout, work);
        } else {
            self.cancel_timeout(task, work);
        }
    }

    /// Algorithm 1, lines 14-18: the previous task is still ready; if it has run out of
    /// budget it leaves the run queue and waits for its replenishment.
    fn charge_previous(&mut self, now: Instant, work: &mut Work) {
        let Some((task, _)) = self.running else {
            return;
        };
        if self.tasks[task.index()].state != State::Ready {
            return;
        }
        self.touch(task, work);
        if !self.settle(task, now, work) {
            if self.runqueue.remove(&mut self.tasks, task) {
                work.queue_entries_moved += 1;
            }
            self.notices.note(Notice::BudgetExhausted { task });
            self.tasks[task.index()].state = State::Depleted;
            let at = self.replenishment_time(task);
            self.arm_timeout(task, at, work);
        }
    }

    /// Section IV-B, timeout processing: of all expired timeouts, process only that of the
    /// most important task, and only if it is more important than every ready task (so it
    /// runs next). Everything else stays deferred, however much has expired.
    fn process_one_timeout(&mut self, now: Instant, work: &mut Work) {
        let floor = self.runqueue.highest_priority();
        let Some(task) = self.timeouts.expired_above(now, floor, work) else {
            return;
        };
        self.cancel_timeout(task, work);
        work.timeouts_processed += 1;
        match self.tasks[task.index()].state {
            // An activation (Algorithm 3 with the wake-up it asked for).
            State::Suspended => self.activate_task(now, task, work),
            // A replenishment of a ready task.
            State::Depleted => {
                self.touch(task, work);
                work.replenishments_processed += 1;
                if self.settle(task, now, work) {
                    self.notices.note(Notice::Replenished { task });
                    self.tasks[task.index()].state = State::Ready;
                    let priority = self.tasks[task.index()].priority;
                    if self.runqueue.push_back(&mut self.tasks, task, priority) {
                        work.queue_entries_moved += 1;
                    }
                } else {
                    let at = self.replenishment_time(task);
                    self.arm_timeout(task, at, work);
                }
            }
            State::Ready | State::Absent => {}
        }
    }

    /// Algorithm 2, lines 1-4: when `task`, dispatched at `now`, runs out of budget, counting
    /// every replenishment that will have arrived by then (early replenishment).
    fn depletion_time(&mut self, task: TaskId, now: Instant, work: &mut Work) -> Instant {
        let record = &self.tasks[task.index()];
        let (budget, period) = (record.limit, record.period);
        match &record.budget {
            Some(Budget::Sporadic(queue)) => queue.depletion_time(now, record.used, work),
            Some(Budget::Deferrable { period_start }) => {
                let depletion = now.saturating_add(budget.saturating_sub(record.used));
                let boundary = period_start.saturating_add(period);
                if depletion < boundary {
                    depletion
                } else if budget >= period {
                    // b = p: the budget never runs out.
                    Instant::NEVER
                } else {
                    // The reset at the boundary is a foregone conclusion.
                    boundary.saturating_add(budget)
                }
            }
            None => now,
        }
    }
}

/// The latest multiple of `period` at or before `at`.
fn align_down(at: Instant, period: Duration) -> Instant {
    let p = period.as_nanos().max(1);
    Instant::from_nanos(at.as_nanos() - at.as_nanos() % p)
}

impl Policy for Spr {
    fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        self.remaining(task, now)
    }

    fn notice_capacity(&self) -> usize {
        self.notices.capacity()
    }

    /// A task that runs out of budget while it runs (Algorithm 1, lines 14-18) and the
    /// replenishment that makes a depleted task ready again (section IV-B's timeout
    /// processing, so no earlier than SPR processes it).
    fn take_notices(&mut self, notices: &mut Notices) {
        self.notices.move_into(notices);
    }

    fn name(&self) -> &'static str {
        match self.rule {
            ReplenishmentRule::Sporadic => "spr",
            ReplenishmentRule::Deferrable => "spr-deferrable",
        }
    }

    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        _wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        match self.tasks.get(task.index()).map(|r| r.state) {
            None | Some(State::Absent) => return Err(CoreError::UnknownTask),
            Some(State::Ready | State::Depleted) => return Err(CoreError::AlreadyReady),
            Some(State::Suspended) => {}
        }
        self.account(now);
        self.cancel_timeout(task, work);
        self.activate_task(now, task, work);
        Ok(())
    }

    fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        _wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let state = match self.tasks.get(task.index()).map(|r| r.state) {
            None | Some(State::Absent) => return Err(CoreError::UnknownTask),
            Some(s) => s,
        };
        let asleep = state == State::Suspended && self.tasks[task.index()].wanted != Instant::NEVER;
        if asleep {
            return Err(CoreError::NotReady);
        }
        self.account(now);
        if until <= now {
            // A sleep into the past returns at once: a blocked task activates, a ready one
            // carries on.
            if state == State::Suspended {
                self.tasks[task.index()].wanted = until;
                self.activate_task(now, task, work);
            }
            return Ok(());
        }
        self.suspend(now, task, until, work);
        Ok(())
    }

    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        match self.tasks.get(task.index()).map(|r| r.state) {
            None | Some(State::Absent) => return Err(CoreError::UnknownTask),
            Some(State::Suspended) => return Err(CoreError::NotReady),
            Some(_) => {}
        }
        self.account(now);
        self.suspend(now, task, Instant::NEVER, work);
        Ok(())
    }

    /// Section IV-B: budget accounting, timeout processing, next-task selection and the
    /// one-shot timer, in that order.
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        self.account(now);
        self.charge_previous(now, work);
        self.process_one_timeout(now, work);
        // Next task selection: the previous task keeps the processor inside its
        // non-preemptive region (`t_now < x_p + eta_p`), else the run queue's head.
        let previous = self.running.map(|(task, _)| task);
        let in_region = previous.filter(|&p| {
            let t = p.index();
            self.tasks[t].state == State::Ready
                && now
                    < self.tasks[t]
                        .started
                        .saturating_add(self.tasks[t].non_preemptive)
        });
        let next = in_region.or_else(|| self.runqueue.highest());
        let timer = match next {
            Some(n) => {
                self.touch(n, work);
                let t = n.index();
                if previous != Some(n) {
                    // Algorithm 2, line 5 (errata): x_n <- t_now on a context switch.
                    self.tasks[t].started = now;
                }
                // A ready task that waited across a period boundary (deferrable rule) has a
                // fresh budget; under the sporadic rule this changes nothing.
                self.settle(n, now, work);
                let depletion = self.depletion_time(n, now, work);
                // t_hp: a more important task already ready must run as soon as allowed;
                // otherwise the earliest more important timeout.
                let hp = if self.runqueue.highest_priority() > Some(self.tasks[t].priority) {
                    Some(now)
                } else {
                    self.timeouts
                        .earliest_above(Some(self.tasks[t].priority), work)
                };
                // Algorithm 2, line 6 (errata): min(t_d, max(t_hp, x_n + eta_n)).
                let region_end = self.tasks[t]
                    .started
                    .saturating_add(self.tasks[t].non_preemptive);
                let preempt = hp.map(|hp| hp.max(region_end));
                let at = preempt.map_or(depletion, |p| p.min(depletion));
                (at != Instant::NEVER).then_some(at)
            }
            None => self.timeouts.earliest_above(None, work),
        };
        self.running = next.map(|task| (task, now));
        self.touched = [None; 3];
        Decision { next, timer }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.runqueue.check(&self.tasks)?;
        self.timeouts.check(&self.tasks)?;
        for (t, record) in self.tasks.iter().enumerate() {
            let state = record.state;
            let task = TaskId(t as u32);
            let queued = RunLists::contains(&self.tasks, task);
            let timeout = self.timeouts.timeout(&self.tasks, task);
            if state != State::Absent && !record.timer.is_registered_at(record.priority) {
                return Err("a task's timer slot is its own, in the heap of its level");
            }
            match state {
                State::Absent => continue,
                State::Ready if !queued || timeout.is_some() => {
                    return Err("exactly the ready tasks are queued, and without a timeout")
                }
                State::Depleted if queued || timeout.is_none() => {
                    return Err("a depleted task waits for its replenishment timeout")
                }
                State::Suspended => {
                    if queued {
                        return Err("a suspended task is not queued");
                    }
                    let wants = self.tasks[t].wanted != Instant::NEVER;
                    if wants != timeout.is_some()
                        || timeout.is_some_and(|at| at < self.tasks[t].wanted)
                    {
                        return Err("a sleeping task's timeout is its wake-up or later");
                    }
                }
                _ => {}
            }
            if let Some(Budget::Sporadic(queue)) = &self.tasks[t].budget {
                queue.check()?;
                if queue.len() > self.tasks[t].replenishments as usize {
                    return Err("a replenishment queue holds at most S entries");
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout [`Spr`]'s docs promise: the records' address, `running`, `touched` and the
    /// run queue's bitmap in the first two lines, and the timer heaps' table of priority 56
    /// still within 4 KiB of the start.
    #[test]
    fn the_scheduler_is_laid_out_for_the_cache() {
        use crate::bitmap::PriorityBitmap;
        use core::mem::{offset_of, size_of};
        assert_eq!(offset_of!(Spr, tasks), 0);
        // The run queue's bitmap comes first in it (see its own test).
        assert!(offset_of!(Spr, runqueue) + size_of::<PriorityBitmap>() <= 128);
        // The timer heaps' bitmap, counter and array take 72 bytes; then 32 bytes a level.
        assert!(offset_of!(Spr, timeouts) + 72 + 57 * 32 <= 4096);
    }

    /// The layout the record's docs promise: one aligned line of hot fields, then the budget's
    /// bookkeeping with the replenishment queue's header and head slot in the second line.
    #[test]
    fn a_record_is_laid_out_for_the_cache() {
        use core::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<TaskRecord>(), 64);
        assert!(offset_of!(TaskRecord, non_preemptive) + size_of::<Duration>() <= 64);
        let mut spr = Spr::with_capacity(2, ReplenishmentRule::Sporadic);
        let r = Reservation::new(Duration::from_nanos(1), Duration::from_nanos(2));
        spr.add_task(TaskId(1), Priority(1), r).unwrap();
        let record = &spr.tasks[1];
        let base = record as *const TaskRecord as usize;
        let Some(Budget::Sporadic(queue)) = &record.budget else {
            panic!("sporadic");
        };
        let queue_at = queue as *const ReplenishmentQueue as usize - base;
        assert!(queue_at + queue.first_slot_offset() + 2 * size_of::<u64>() <= 128);
        assert!(offset_of!(TaskRecord, limit) >= 64 && offset_of!(TaskRecord, limit) < 128 - 8);
        let mut deferrable = Spr::with_capacity(2, ReplenishmentRule::Deferrable);
        deferrable.add_task(TaskId(1), Priority(1), r).unwrap();
        let record = &deferrable.tasks[1];
        let base = record as *const TaskRecord as usize;
        let Some(Budget::Deferrable { period_start }) = &record.budget else {
            panic!("deferrable");
        };
        assert!(period_start as *const Instant as usize - base < 128 - 8);
    }
}
