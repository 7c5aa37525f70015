//! The trait every scheduling policy implements: a kernel's scheduler entry points.
//!
//! A policy schedules the tasks of one core (partitioned scheduling: a multiprocessor runs one
//! policy instance per core). The kernel drives it with events and then asks it to schedule:
//!
//! 1. an event: [`Policy::activate`] (a suspended task becomes ready), [`Policy::sleep`] (the
//!    running task suspends until a time; ending a job and waiting for the next release is a
//!    sleep whose wake-up is [`Wake::NextJob`]), [`Policy::block`] (suspends with no timeout),
//!    or [`Policy::timer_interrupt`] (the one-shot timer fired);
//! 2. then exactly one [`Policy::schedule`] at the same `now`, which answers with a
//!    [`Decision`]: the task to run next on this core and when the one-shot timer must fire.
//!
//! `now` is read once per invocation, after interrupt entry. The previously chosen task has
//! run until `now`; whatever the kernel does after `now` (the scheduler's own work, the context
//! switch) is charged to the task the policy chooses, because its accounting starts at `now`.
//!
//! The policy owns every timer: the platform never wakes a task by itself. This is what lets
//! a policy defer or prune timeouts (SPR) or process them eagerly (naive servers).
//!
//! Every call reports the bounded work it did into a [`Work`] record; a kernel may ignore it,
//! the simulator charges it through its cost model, and tests assert the bounds on it.

#[cfg(doc)]
use crate::Notice;
use crate::{CoreError, Duration, Instant, Notices, Priority, TaskId, Work};

/// What a task's wake-up starts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wake {
    /// The same job continues (for example after blocking on a resource).
    SameJob,
    /// A new job is released with this absolute deadline; a sleep with this wake-up also ends
    /// the current job.
    NextJob {
        /// The new job's absolute deadline ([`Instant::NEVER`] when it has none).
        deadline: Instant,
    },
}

/// New parameters for a task's scheduling context ([`Policy::reconfigure`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ContextChange {
    /// The budget per period (VBS: the action's limit `lambda`).
    pub budget: Duration,
    /// The period (VBS: `pi`).
    pub period: Duration,
    /// The work the task will do under these parameters, when it is known in advance (VBS:
    /// the action's load `l`, which lets the scheduler plan its completion).
    pub load: Option<Duration>,
}

/// A scheduler invocation's answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The task to run on this core, or `None` to idle.
    pub next: Option<TaskId>,
    /// When the core's one-shot timer must fire, or `None` to leave it disarmed.
    pub timer: Option<Instant>,
}

/// A scheduling policy for one core, driven as a kernel drives its scheduler.
///
/// Every method validates before it changes anything: a call that returns `Err` has left the
/// policy as it was. No method panics, whatever the sequence of calls.
pub trait Policy {
    /// A short name for traces and reports, e.g. `"fixed-priority"`.
    fn name(&self) -> &'static str;

    /// A suspended task becomes ready at `now` (its job or a new one, as `wake` says). A task
    /// sleeping on a timeout has the timeout cancelled.
    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError>;

    /// The ready task `task` suspends until `until`, then wakes as `wake` says. An `until` at
    /// or before `now` makes it ready again at once (as an absolute-time sleep in the past).
    /// A blocked task may also be given a timeout: that is how a task whose first release
    /// lies in the future is set up.
    fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError>;

    /// The ready task `task` suspends with no timeout, until an [`activate`](Policy::activate).
    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError>;

    /// The one-shot timer fired at `now`. Policies that do all timeout processing in
    /// [`schedule`](Policy::schedule) keep this default, which does nothing.
    fn timer_interrupt(&mut self, now: Instant, work: &mut Work) {
        let _ = (now, work);
    }

    /// `task` gives its scheduling context new parameters at `now`, as seL4 MCS's
    /// `SchedControl_Configure` does; the call is a scheduler invocation. Under VBS this is an
    /// action switch (section IV: "marking a change of action forces a scheduler invocation"):
    /// the process's current action, if any, completes here and the next runs on the
    /// resource `(budget, period)`. Policies whose contexts are fixed at configuration keep
    /// this default, which refuses and changes nothing.
    fn reconfigure(
        &mut self,
        now: Instant,
        task: TaskId,
        context: ContextChange,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let _ = (now, task, context, work);
        Err(CoreError::InvalidParameter)
    }

    /// `task`'s priority becomes `priority` at `now`, as `seL4_TCB_SetPriority` sets it (the
    /// component protocols change their threads' priorities at every step). A ready task
    /// joins the tail of its new priority, except the one last chosen to run, which keeps
    /// its place at the head: it keeps the core unless a strictly higher priority is ready,
    /// and resumes before its new peers if preempted. Policies whose priorities are fixed at
    /// configuration keep this default, which refuses and changes nothing.
    fn set_priority(
        &mut self,
        now: Instant,
        task: TaskId,
        priority: Priority,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let _ = (now, task, priority, work);
        Err(CoreError::InvalidParameter)
    }

    /// Chooses the task to run from `now` and when to interrupt it.
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision;

    /// Checks the invariants stated at the top of the policy's module; tests call it after
    /// every operation. `Err` names the first invariant found broken.
    fn check_invariants(&self) -> Result<(), &'static str>;

    /// The budget `task` has left at `now`, for policies with reservations (SPR, the naive
    /// servers, CBS): traces draw it as a counter. Policies without budgets keep this default,
    /// `None`; so does a task the policy does not know. Reading it changes nothing.
    fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        let _ = (task, now);
        None
    }

    /// The window `(start, deadline)` by whose deadline the policy schedules `task` now, for
    /// policies that schedule a task in windows of their own: a CBS server's current server
    /// period `[d - T, d)` while it has a pending job, a VBS process's period instance
    /// `(r_i, d_i)` (the paper's tasks of Fig. 1); as of the last invocation. `None`
    /// otherwise, and for a task the policy does not know. A simulator records it beside the
    /// time the task ran. Reading it changes nothing.
    fn scheduling_window(&self, task: TaskId) -> Option<(Instant, Instant)> {
        let _ = task;
        None
    }

    /// The task ids `0..capacity` the policy reports budget notices of
    /// ([`take_notices`](Policy::take_notices)); policies without budgets keep this default,
    /// zero.
    fn notice_capacity(&self) -> usize {
        0
    }

    /// Moves the budget notices recorded since the last call into `notices`, which holds at
    /// least [`notice_capacity`](Policy::notice_capacity) ids: a task's budget ran out while
    /// it ran ([`Notice::BudgetExhausted`]), a depleted task's budget came back
    /// ([`Notice::Replenished`]). The MC-IPC gate aborts a waiting client's request on the
    /// first and reissues it on the second. Policies without budgets keep this default,
    /// which reports none.
    fn take_notices(&mut self, notices: &mut Notices) {
        let _ = notices;
    }
}

/// A boxed policy is a policy, so that `PerCore<Box<dyn Policy>>` (a policy chosen at run
/// time) is a cluster scheduler as a concrete policy is.
impl<P: Policy + ?Sized> Policy for alloc::boxed::Box<P> {
    #[inline]
    fn name(&self) -> &'static str {
        (**self).name()
    }

    #[inline]
    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        (**self).activate(now, task, wake, work)
    }

    #[inline]
    fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        (**self).sleep(now, task, until, wake, work)
    }

    #[inline]
    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        (**self).block(now, task, work)
    }

    #[inline]
    fn timer_interrupt(&mut self, now: Instant, work: &mut Work) {
        (**self).timer_interrupt(now, work)
    }

    #[inline]
    fn reconfigure(
        &mut self,
        now: Instant,
        task: TaskId,
        context: ContextChange,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        (**self).reconfigure(now, task, context, work)
    }

    #[inline]
    fn set_priority(
        &mut self,
        now: Instant,
        task: TaskId,
        priority: Priority,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        (**self).set_priority(now, task, priority, work)
    }

    #[inline]
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        (**self).schedule(now, work)
    }

    #[inline]
    fn check_invariants(&self) -> Result<(), &'static str> {
        (**self).check_invariants()
    }

    #[inline]
    fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        (**self).remaining_budget(task, now)
    }

    #[inline]
    fn scheduling_window(&self, task: TaskId) -> Option<(Instant, Instant)> {
        (**self).scheduling_window(task)
    }

    #[inline]
    fn notice_capacity(&self) -> usize {
        (**self).notice_capacity()
    }

    #[inline]
    fn take_notices(&mut self, notices: &mut Notices) {
        (**self).take_notices(notices)
    }
}
