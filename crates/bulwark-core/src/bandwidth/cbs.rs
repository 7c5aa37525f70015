//! The constant-bandwidth server (CBS; Abeni and Buttazzo, 1998) and its hard variant: each
//! task is served by a server of budget `Q` per period `T`, and EDF schedules the servers by
//! their scheduling deadlines, so an overrunning task only postpones its own deadline.
//!
//! The rules, as the VBS paper (section II) and the CBS paper state them:
//! - **wake-up**: a job arriving at `r` to an idle server keeps the server's `(c, d)` if the
//!   remaining budget can be used before `d` at the server's bandwidth,
//!   `c < (d - r) * Q / T`; otherwise the server starts afresh, `d = r + T`, `c = Q`. A job
//!   arriving while the server is active (its predecessor pending) is queued, and served
//!   with the server's `(c, d)` as they are;
//! - **depletion (soft CBS)**: when `c` reaches zero the deadline is postponed, `d = d + T`,
//!   and the budget recharged, `c = Q`; the server stays active and EDF decides whether it
//!   keeps the processor;
//! - **depletion (hard CBS)**: the server is throttled until `d`, then recharged with
//!   `c = Q` and `d = d + T`, so it never runs ahead of its own periods;
//! - **overrun**: a server charged past `c` (a late timer) pays the excess from its next
//!   budgets: `k` whole budgets of `Q` cost `k` more postponements, the rest is deducted from
//!   the budget it resumes with.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - an `Active` server is in the ready heap, keyed by its deadline; nothing else is;
//! - a `Throttled` server (hard CBS only) has a replenishment timeout at its deadline, no
//!   budget, and a debt below `Q`; nothing else has a replenishment timeout;
//! - an `Idle` server's task sleeps or is blocked, and `0 <= c <= Q` always.

use alloc::vec;
use alloc::vec::Vec;

use crate::heap::IndexedHeap;
use crate::suspension::{Suspensions, TaskState};
use crate::timeouts::{key_time, order_key, TimeoutQueue};
use crate::{CoreError, Decision, Duration, Instant, Notice, Notices, Policy, TaskId, Wake, Work};

/// A server's parameters: `budget` (`Q`) per `period` (`T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbsServer {
    /// `Q`, non-zero and at most the period.
    pub budget: Duration,
    /// `T`, non-zero.
    pub period: Duration,
    /// Hard CBS: throttle on depletion until the deadline instead of postponing it.
    pub hard: bool,
}

impl CbsServer {
    /// A soft CBS of `budget` per `period`.
    pub const fn new(budget: Duration, period: Duration) -> Self {
        CbsServer {
            budget,
            period,
            hard: false,
        }
    }

    /// The same server as a hard CBS.
    pub const fn hard(mut self) -> Self {
        self.hard = true;
        self
    }

    /// Checks `0 < Q <= T`.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.budget.is_zero() || self.period.is_zero() || self.budget > self.period {
            return Err(CoreError::InvalidParameter);
        }
        Ok(())
    }
}

/// Where a server is in its life cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Absent,
    /// No pending job: its task sleeps or is blocked.
    Idle,
    /// A pending job and budget: competes under EDF.
    Active,
    /// Hard CBS: a pending job, no budget until the deadline.
    Throttled,
}

/// One server's state, in one record (a kernel keeps it in the task's control block).
#[derive(Clone, Copy, Debug)]
struct ServerRecord {
    server: CbsServer,
    phase: Phase,
    /// `c`: the budget left.
    remaining: Duration,
    /// `d`: the scheduling deadline.
    deadline: Instant,
    /// Overrun still to be deducted from the next recharge (hard CBS), below `Q`.
    debt: Duration,
}

const ABSENT: ServerRecord = ServerRecord {
    server: CbsServer::new(Duration::ZERO, Duration::ZERO),
    phase: Phase::Absent,
    remaining: Duration::ZERO,
    deadline: Instant::ZERO,
    debt: Duration::ZERO,
};

/// EDF over constant-bandwidth servers, one task per server, for one core.
#[derive(Clone, Debug)]
pub struct Cbs {
    servers: Vec<ServerRecord>,
    /// Active servers keyed by (deadline, order of deadline assignment): equal deadlines run
    /// in the order they were assigned, so a postponed server goes behind its peers.
    ready: IndexedHeap<u128>,
    assignments: u64,
    /// Hard CBS: throttled servers, due at their deadlines.
    replenishments: TimeoutQueue,
    tasks: Suspensions,
    /// The server chosen at the last invocation and when its accounting last advanced.
    running: Option<(TaskId, Instant)>,
    /// Budget notices not yet taken ([`Policy::take_notices`]).
    notices: Notices,
}

impl Cbs {
    /// A scheduler for task ids `0..capacity`, with no servers yet.
    pub fn with_capacity(capacity: usize) -> Self {
        Cbs {
            servers: vec![ABSENT; capacity],
            ready: IndexedHeap::with_capacity(capacity),
            assignments: 0,
            replenishments: TimeoutQueue::with_capacity(capacity),
            tasks: Suspensions::with_capacity(capacity),
            running: None,
            notices: Notices::with_capacity(capacity),
        }
    }

    /// Adds `task` with its own `server`, idle (blocked) until its first job arrives.
    pub fn add_server(&mut self, task: TaskId, server: CbsServer) -> Result<(), CoreError> {
        server.validate()?;
        self.tasks.add(task)?;
        self.servers[task.index()] = ServerRecord {
            server,
            phase: Phase::Idle,
            remaining: Duration::ZERO,
            deadline: Instant::ZERO,
            debt: Duration::ZERO,
        };
        Ok(())
    }

    /// The server's budget left and scheduling deadline, as of its last accounting.
    pub fn server_state(&self, task: TaskId) -> Option<(Duration, Instant)> {
        let s = self.servers.get(task.index())?;
        (s.phase != Phase::Absent).then_some((s.remaining, s.deadline))
    }

    /// True when `task`'s server has a pending job (active or throttled).
    pub fn is_backlogged(&self, task: TaskId) -> bool {
        self.servers
            .get(task.index())
            .is_some_and(|s| matches!(s.phase, Phase::Active | Phase::Throttled))
    }

    /// True when `task`'s server is throttled (hard CBS, out of budget until its deadline).
    pub fn is_throttled(&self, task: TaskId) -> bool {
        self.servers
            .get(task.index())
            .is_some_and(|s| s.phase == Phase::Throttled)
    }

    /// Queues an active server under its current deadline.
    fn enqueue(&mut self, task: TaskId, work: &mut Work) {
        self.assignments += 1;
        let d = self.servers[task.index()].deadline;
        self.ready.upsert(task, order_key(d, self.assignments));
        work.heap_operations += 1;
    }

    /// The wake-up rule: a job arrives at `now` to the idle server of `task`.
    fn wake_up(&mut self, now: Instant, task: TaskId, work: &mut Work) {
        let s = &mut self.servers[task.index()];
        let q = s.server.budget.as_nanos() as u128;
        let t = s.server.period.as_nanos() as u128;
        // c >= (d - r) Q / T, in integers: c T >= (d - r) Q. A deadline at or before r makes
        // the right side zero or negative.
        let lead = s.deadline.saturating_duration_since(now).as_nanos() as u128;
        if now >= s.deadline || (s.remaining.as_nanos() as u128) * t >= lead * q {
            s.deadline = now.saturating_add(s.server.period);
            // Overrun not yet paid is deducted here (it is below Q).
            s.remaining = s.server.budget.saturating_sub(s.debt);
            s.debt = Duration::ZERO;
        }
        if s.remaining.is_zero() {
            // Hard CBS exhausted, resumed before its deadline: it waits for the recharge.
            self.throttle(task, work);
        } else {
            s.phase = Phase::Active;
            self.enqueue(task, work);
        }
    }

    /// Hard CBS: no budget until the deadline.
    fn throttle(&mut self, task: TaskId, work: &mut Work) {
        let s = &mut self.servers[task.index()];
        s.phase = Phase::Throttled;
        s.remaining = Duration::ZERO;
        let at = s.deadline;
        self.replenishments.arm(task, at, work);
    }

    /// Charges the running server for the time since its last accounting, and applies the
    /// depletion rule if that used its budget up.
    fn account(&mut self, now: Instant, work: &mut Work) {
        let Some((task, since)) = self.running else {
            return;
        };
        self.running = Some((task, now));
        let s = &mut self.servers[task.index()];
        if s.phase != Phase::Active {
            return;
        }
        let elapsed = now.saturating_duration_since(since);
        if elapsed < s.remaining {
            s.remaining = s.remaining.saturating_sub(elapsed);
            return;
        }
        // Depleted. The excess beyond c is `k` whole budgets and a rest `r < Q`.
        let excess = elapsed.saturating_sub(s.remaining).as_nanos();
        let q = s.server.budget.as_nanos();
        let (k, rest) = (excess / q, Duration::from_nanos(excess % q));
        let forfeited = s.server.period.as_nanos().saturating_mul(k);
        work.replenishments_processed += 1;
        self.notices.note(Notice::BudgetExhausted { task });
        if s.server.hard {
            // Throttled until d, pushed by the k budgets the overrun already used.
            s.deadline = s.deadline.saturating_add(Duration::from_nanos(forfeited));
            s.debt = rest;
            self.ready.remove(task);
            work.heap_operations += 1;
            self.throttle(task, work);
        } else {
            // Postponed once for the budget used, k more times for the overrun.
            // Recharged at once (with a later deadline).
            self.notices.note(Notice::Replenished { task });
            let postpone = forfeited.saturating_add(s.server.period.as_nanos());
            s.deadline = s.deadline.saturating_add(Duration::from_nanos(postpone));
            s.remaining = s.server.budget.saturating_sub(rest);
            self.enqueue(task, work);
        }
    }

    /// Takes an active or throttled server out of competition: its task suspends.
    fn retire(&mut self, task: TaskId, work: &mut Work) {
        let s = &mut self.servers[task.index()];
        match s.phase {
            Phase::Active => {
                self.ready.remove(task);
                work.heap_operations += 1;
            }
            Phase::Throttled => {
                self.replenishments.cancel(task, work);
            }
            Phase::Idle | Phase::Absent => {}
        }
        if s.phase != Phase::Absent {
            s.phase = Phase::Idle;
        }
    }

    /// Hard CBS: recharges the throttled server whose deadline has come.
    fn recharge(&mut self, task: TaskId, work: &mut Work) {
        work.replenishments_processed += 1;
        self.notices.note(Notice::Replenished { task });
        let s = &mut self.servers[task.index()];
        s.deadline = s.deadline.saturating_add(s.server.period);
        s.remaining = s.server.budget.saturating_sub(s.debt);
        s.debt = Duration::ZERO;
        s.phase = Phase::Active;
        self.enqueue(task, work);
    }
}

impl Policy for Cbs {
    fn remaining_budget(&self, task: TaskId, _now: Instant) -> Option<Duration> {
        // As of the last accounting (every entry point accounts first).
        self.server_state(task).map(|(remaining, _)| remaining)
    }

    fn notice_capacity(&self) -> usize {
        self.notices.capacity()
    }

    /// A server whose budget runs out while its task runs (the depletion rule); a soft server
    /// is recharged in the same step, a hard one when its deadline comes.
    fn take_notices(&mut self, notices: &mut Notices) {
        self.notices.move_into(notices);
    }

    /// The server period `[d - T, d)` of a server with a pending job (active or throttled):
    /// EDF schedules it by `d`, and it may use `Q` in the period.
    fn scheduling_window(&self, task: TaskId) -> Option<(Instant, Instant)> {
        let s = self.servers.get(task.index())?;
        matches!(s.phase, Phase::Active | Phase::Throttled)
            .then(|| (s.deadline.saturating_sub(s.server.period), s.deadline))
    }

    fn name(&self) -> &'static str {
        "cbs"
    }

    /// A job arrives: the wake-up rule decides the server's deadline. The task's own
    /// deadline in `wake` is not used: the server's deadline is what EDF sees.
    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        _wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.tasks.expect_suspended(task)?;
        self.account(now, work);
        self.tasks.make_ready(task, work);
        self.wake_up(now, task, work);
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
        self.account(now, work);
        if until < now && self.is_backlogged(task) {
            // The next job arrived before this one completed: the CBS paper queues it at
            // the active server, which serves it with the budget and deadline it has (the
            // wake-up rule is for a job arriving at an idle server). A job arriving exactly
            // now finds the server idle: the completion comes first (lib.rs of bulwark-sim,
            // "Ties", 1). The task is ready and stays so.
            return Ok(());
        }
        self.retire(task, work);
        if self.tasks.sleep(now, task, until, wake, work) {
            // A sleep to now: the next job arrives at once, at an idle server.
            self.wake_up(now, task, work);
        }
        Ok(())
    }

    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.account(now, work);
        self.retire(task, work);
        self.tasks.block(task);
        Ok(())
    }

    /// Accounting of the running server, arrivals of due jobs, recharges of throttled
    /// servers, then EDF over the active servers; the timer fires at the chosen server's
    /// depletion or the next arrival or recharge, whichever comes first.
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        self.account(now, work);
        while let Some((task, _)) = self.tasks.wake_expired(now, work) {
            self.wake_up(now, task, work);
        }
        while let Some((task, _)) = self.replenishments.pop_expired(now, work) {
            self.recharge(task, work);
        }
        let next = self.ready.peek().map(|(task, _)| task);
        let depletion = next.map(|t| now.saturating_add(self.servers[t.index()].remaining));
        let timer = self.tasks.next_timer(&self.replenishments, depletion, work);
        self.running = next.map(|task| (task, now));
        Decision { next, timer }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.ready.check()?;
        self.replenishments.check()?;
        self.tasks.check()?;
        for (i, s) in self.servers.iter().enumerate() {
            let task = TaskId(i as u32);
            let state = self.tasks.state(task);
            let queued = self.ready.key(task);
            let throttled = self.replenishments.timeout(task);
            match s.phase {
                Phase::Absent => continue,
                Phase::Active => {
                    if state != TaskState::Ready || queued.map(key_time) != Some(s.deadline) {
                        return Err("an active server is queued under its deadline");
                    }
                    if throttled.is_some() {
                        return Err("only a throttled server waits for a recharge");
                    }
                }
                Phase::Throttled => {
                    if state != TaskState::Ready || queued.is_some() {
                        return Err("a throttled server's task is ready but not queued");
                    }
                    if !s.server.hard || throttled != Some(s.deadline) || !s.remaining.is_zero() {
                        return Err("a throttled hard server has no budget until its deadline");
                    }
                }
                Phase::Idle => {
                    if state == TaskState::Ready || queued.is_some() || throttled.is_some() {
                        return Err("an idle server's task is suspended and not queued");
                    }
                }
            }
            if s.remaining > s.server.budget || s.debt >= s.server.budget {
                return Err("a server's budget is at most Q and its debt below Q");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{at, ms, JOB};

    /// The notices of a server that keeps running, Q = 2, T = 10, arrival at 0: its budget
    /// runs out at 2. A soft server is recharged at once (d = 20), so the decision at 2
    /// reports the exhaustion and the replenishment together; a hard one is throttled until
    /// d = 10, where the recharge is reported.
    /// A job released while its predecessor is still pending is queued at the active server
    /// (the CBS paper), which keeps its budget and deadline. Task 1 (Q 8, T 9) has the
    /// earlier deadline and runs 0-8; task 0 (Q 2, T 10, d = 10) runs from 8 and completes
    /// at 9.5 with c = 0.5, its next job released at 5. The wake-up rule for an idle server
    /// would have renewed it, since c T = 5 >= (d - r) Q = 1 (d = 19.5, c = 2); queued at
    /// the active server, the job keeps c = 0.5 and d = 10.
    #[test]
    fn a_job_released_during_its_predecessor_keeps_the_servers_deadline() {
        let mut cbs = Cbs::with_capacity(2);
        let mut w = Work::default();
        cbs.add_server(TaskId(0), CbsServer::new(ms(2), ms(10)))
            .unwrap();
        cbs.add_server(TaskId(1), CbsServer::new(ms(8), ms(9)))
            .unwrap();
        cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        cbs.activate(at(0), TaskId(1), JOB, &mut w).unwrap();
        assert_eq!(cbs.schedule(at(0), &mut w).next, Some(TaskId(1)));
        assert_eq!(cbs.schedule(at(8), &mut w).next, Some(TaskId(0)));
        let done = Instant::from_nanos(9_500_000);
        cbs.sleep(done, TaskId(0), at(5), JOB, &mut w).unwrap();
        assert_eq!(
            cbs.server_state(TaskId(0)),
            Some((Duration::from_micros(500), at(10)))
        );
        assert_eq!(cbs.schedule(done, &mut w).next, Some(TaskId(0)));
        cbs.check_invariants().unwrap();
        // The next job completes at 9.75 with c = 0.25. Released exactly then, the job after
        // it finds the server idle and the rule renews it (c T = 2.5 >= (d - r) Q = 0.5):
        // d = 19.75, c = 2. Released before, it keeps c = 0.25 and d = 10.
        let later = Instant::from_nanos(9_750_000);
        let mut at_completion = cbs.clone();
        at_completion
            .sleep(later, TaskId(0), later, JOB, &mut w)
            .unwrap();
        assert_eq!(
            at_completion.server_state(TaskId(0)),
            Some((ms(2), Instant::from_nanos(19_750_000)))
        );
        cbs.sleep(later, TaskId(0), at(6), JOB, &mut w).unwrap();
        assert_eq!(
            cbs.server_state(TaskId(0)),
            Some((Duration::from_micros(250), at(10)))
        );
    }

    #[test]
    fn depletion_and_recharge_are_noticed() {
        use crate::Notice;
        let task = TaskId(0);
        for hard in [false, true] {
            let server = CbsServer::new(ms(2), ms(10));
            let mut cbs = Cbs::with_capacity(1);
            cbs.add_server(task, if hard { server.hard() } else { server })
                .unwrap();
            let mut w = Work::default();
            let mut notices = Notices::with_capacity(cbs.notice_capacity());
            cbs.activate(at(0), task, JOB, &mut w).unwrap();
            cbs.schedule(at(0), &mut w);
            cbs.take_notices(&mut notices);
            assert!(notices.is_empty());
            let at_2 = cbs.schedule(at(2), &mut w);
            cbs.take_notices(&mut notices);
            let exhausted = Notice::BudgetExhausted { task };
            let replenished = Notice::Replenished { task };
            assert!(notices.contains(exhausted));
            assert_eq!(notices.contains(replenished), !hard, "hard: {hard}");
            assert_eq!(at_2.next, (!hard).then_some(task));
            notices.clear();
            if hard {
                assert_eq!(cbs.schedule(at(10), &mut w).next, Some(task));
                cbs.take_notices(&mut notices);
                assert_eq!(notices.iter().collect::<Vec<_>>(), [replenished]);
            }
        }
    }

    /// The wake-up rule, both branches, by hand: Q = 2, T = 10 (bandwidth 0.2).
    #[test]
    fn wake_up_keeps_or_renews_the_deadline() {
        let mut cbs = Cbs::with_capacity(2);
        let mut w = Work::default();
        cbs.add_server(TaskId(0), CbsServer::new(ms(2), ms(10)))
            .unwrap();
        // Arrival at 0: the server has nothing, deadline 0 <= r: d = 10, c = 2.
        cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        assert_eq!(cbs.server_state(TaskId(0)), Some((ms(2), at(10))));
        let d = cbs.schedule(at(0), &mut w);
        assert_eq!(d.next, Some(TaskId(0)));
        assert_eq!(d.timer, Some(at(2)), "depletion at 0 + c");
        // Runs 1 ms and blocks: c = 1, d = 10.
        cbs.block(at(1), TaskId(0), &mut w).unwrap();
        assert_eq!(cbs.server_state(TaskId(0)), Some((ms(1), at(10))));
        // Arrival at 6: (d - r) Q / T = 4 * 0.2 = 0.8 <= c = 1: renewed, d = 16, c = 2.
        cbs.activate(at(6), TaskId(0), JOB, &mut w).unwrap();
        assert_eq!(cbs.server_state(TaskId(0)), Some((ms(2), at(16))));
        cbs.schedule(at(6), &mut w);
        // Runs 1.5 ms, blocks: c = 0.5.
        cbs.block(Instant::from_nanos(7_500_000), TaskId(0), &mut w)
            .unwrap();
        // Arrival at 8: (16 - 8) * 0.2 = 1.6 > 0.5: kept, d = 16, c = 0.5.
        cbs.activate(at(8), TaskId(0), JOB, &mut w).unwrap();
        assert_eq!(
            cbs.server_state(TaskId(0)),
            Some((Duration::from_micros(500), at(16)))
        );
        cbs.check_invariants().unwrap();
    }

    /// Soft CBS postpones: an endless job on (2, 10) beside (5, 10). At 0 both have
    /// deadline 10; the overrunning server runs first (assigned first), depletes at 2 and
    /// gets d = 20, so the other runs [2, 7) and meets its deadline 10.
    #[test]
    fn depletion_postpones_the_deadline() {
        let mut cbs = Cbs::with_capacity(2);
        let mut w = Work::default();
        cbs.add_server(TaskId(0), CbsServer::new(ms(2), ms(10)))
            .unwrap();
        cbs.add_server(TaskId(1), CbsServer::new(ms(5), ms(10)))
            .unwrap();
        cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        cbs.activate(at(0), TaskId(1), JOB, &mut w).unwrap();
        let d = cbs.schedule(at(0), &mut w);
        assert_eq!((d.next, d.timer), (Some(TaskId(0)), Some(at(2))));
        let d = cbs.schedule(at(2), &mut w);
        assert_eq!(cbs.server_state(TaskId(0)), Some((ms(2), at(20))));
        assert_eq!((d.next, d.timer), (Some(TaskId(1)), Some(at(7))));
        cbs.block(at(7), TaskId(1), &mut w).unwrap();
        let d = cbs.schedule(at(7), &mut w);
        assert_eq!((d.next, d.timer), (Some(TaskId(0)), Some(at(9))));
        cbs.check_invariants().unwrap();
    }

    /// The scheduling window is the server period `[d - T, d)` while a job is pending, none
    /// otherwise: (2, 10) activated at 3 gets d = 13, window [3, 13); soft CBS postpones it on
    /// depletion at 5 to [13, 23); once its task blocks, no window; an unknown task, none.
    #[test]
    fn the_scheduling_window_is_the_server_period() {
        let mut cbs = Cbs::with_capacity(1);
        let mut w = Work::default();
        cbs.add_server(TaskId(0), CbsServer::new(ms(2), ms(10)))
            .unwrap();
        assert_eq!(cbs.scheduling_window(TaskId(0)), None, "idle");
        cbs.activate(at(3), TaskId(0), JOB, &mut w).unwrap();
        assert_eq!(cbs.scheduling_window(TaskId(0)), Some((at(3), at(13))));
        cbs.schedule(at(3), &mut w);
        cbs.schedule(at(5), &mut w);
        assert_eq!(cbs.scheduling_window(TaskId(0)), Some((at(13), at(23))));
        cbs.block(at(6), TaskId(0), &mut w).unwrap();
        assert_eq!(cbs.scheduling_window(TaskId(0)), None, "blocked");
        assert_eq!(cbs.scheduling_window(TaskId(7)), None, "unknown");
    }

    /// Hard CBS throttles: the same endless job on (2, 10) alone depletes at 2 and is idle
    /// until 10, then gets c = 2, d = 20.
    #[test]
    fn hard_depletion_throttles_until_the_deadline() {
        let mut cbs = Cbs::with_capacity(1);
        let mut w = Work::default();
        cbs.add_server(TaskId(0), CbsServer::new(ms(2), ms(10)).hard())
            .unwrap();
        cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        cbs.schedule(at(0), &mut w);
        let d = cbs.schedule(at(2), &mut w);
        assert!(cbs.is_throttled(TaskId(0)));
        assert_eq!((d.next, d.timer), (None, Some(at(10))));
        cbs.check_invariants().unwrap();
        let d = cbs.schedule(at(10), &mut w);
        assert_eq!((d.next, d.timer), (Some(TaskId(0)), Some(at(12))));
        assert_eq!(cbs.server_state(TaskId(0)), Some((ms(2), at(20))));
    }

    /// An overrun of 2.5 budgets past depletion (a timer 5 ms late on Q = 2, T = 10): two
    /// whole budgets forfeited and 1 ms deducted. Soft: d = 10 + 3 * 10 = 40, c = 1. Hard:
    /// throttled until 10 + 2 * 10 = 30, then c = 1, d = 40.
    #[test]
    fn overruns_are_paid_from_later_budgets() {
        for hard in [false, true] {
            let mut server = CbsServer::new(ms(2), ms(10));
            if hard {
                server = server.hard();
            }
            let mut cbs = Cbs::with_capacity(1);
            let mut w = Work::default();
            cbs.add_server(TaskId(0), server).unwrap();
            cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
            cbs.schedule(at(0), &mut w);
            let d = cbs.schedule(at(7), &mut w);
            if hard {
                assert_eq!((d.next, d.timer), (None, Some(at(30))));
                let d = cbs.schedule(at(30), &mut w);
                assert_eq!(d.next, Some(TaskId(0)));
            }
            assert_eq!(cbs.server_state(TaskId(0)), Some((ms(1), at(40))), "{hard}");
            cbs.check_invariants().unwrap();
        }
    }

    /// Bad parameters and calls are refused without changing anything.
    #[test]
    fn refusals() {
        let mut cbs = Cbs::with_capacity(1);
        let mut w = Work::default();
        let zero = CbsServer::new(Duration::ZERO, ms(10));
        assert_eq!(
            cbs.add_server(TaskId(0), zero),
            Err(CoreError::InvalidParameter)
        );
        let over = CbsServer::new(ms(11), ms(10));
        assert_eq!(
            cbs.add_server(TaskId(0), over),
            Err(CoreError::InvalidParameter)
        );
        let ok = CbsServer::new(ms(1), ms(10));
        assert_eq!(cbs.add_server(TaskId(1), ok), Err(CoreError::UnknownTask));
        cbs.add_server(TaskId(0), ok).unwrap();
        assert_eq!(cbs.add_server(TaskId(0), ok), Err(CoreError::AlreadyAdded));
        assert_eq!(
            cbs.block(at(0), TaskId(0), &mut w),
            Err(CoreError::NotReady)
        );
        cbs.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
        assert_eq!(
            cbs.activate(at(0), TaskId(0), JOB, &mut w),
            Err(CoreError::AlreadyReady)
        );
        cbs.check_invariants().unwrap();
    }
}
