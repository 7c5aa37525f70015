//! Which tasks are ready, sleeping or blocked, and the sleepers' timeouts: the bookkeeping
//! every policy without reservations shares.
//!
//! Invariants: a task is `Sleeping` exactly when it has a pending timeout; `wake[t]` is the
//! wake-up a sleeping or blocked task will get when its timeout expires.

use alloc::vec;
use alloc::vec::Vec;

use crate::timeouts::TimeoutQueue;
use crate::{CoreError, Instant, TaskId, Wake, Work};

/// A task's scheduling state as a policy sees it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TaskState {
    /// Not added to this policy.
    Absent,
    /// Ready to run (running or waiting for the processor).
    Ready,
    /// Suspended until a timeout.
    Sleeping,
    /// Suspended until an activation.
    Blocked,
}

/// Per-task states and the timer queue of the sleepers.
#[derive(Clone, Debug)]
pub struct Suspensions {
    state: Vec<TaskState>,
    wake: Vec<Wake>,
    timeouts: TimeoutQueue,
}

impl Suspensions {
    /// Room for task ids `0..capacity`, all absent.
    pub fn with_capacity(capacity: usize) -> Self {
        Suspensions {
            state: vec![TaskState::Absent; capacity],
            wake: vec![Wake::SameJob; capacity],
            timeouts: TimeoutQueue::with_capacity(capacity),
        }
    }

    /// The state of `task` (`Absent` for ids beyond the capacity).
    #[inline]
    pub fn state(&self, task: TaskId) -> TaskState {
        self.state
            .get(task.index())
            .copied()
            .unwrap_or(TaskState::Absent)
    }

    /// Adds `task` in the blocked state.
    pub fn add(&mut self, task: TaskId) -> Result<(), CoreError> {
        match self.state.get(task.index()) {
            None => Err(CoreError::UnknownTask),
            Some(TaskState::Absent) => {
                self.state[task.index()] = TaskState::Blocked;
                Ok(())
            }
            Some(_) => Err(CoreError::AlreadyAdded),
        }
    }

    /// Fails unless `task` is ready.
    #[inline]
    pub fn expect_ready(&self, task: TaskId) -> Result<(), CoreError> {
        match self.state(task) {
            TaskState::Absent => Err(CoreError::UnknownTask),
            TaskState::Ready => Ok(()),
            _ => Err(CoreError::NotReady),
        }
    }

    /// Fails unless `task` is sleeping or blocked.
    #[inline]
    pub fn expect_suspended(&self, task: TaskId) -> Result<(), CoreError> {
        match self.state(task) {
            TaskState::Absent => Err(CoreError::UnknownTask),
            TaskState::Ready => Err(CoreError::AlreadyReady),
            _ => Ok(()),
        }
    }

    /// Marks a suspended `task` ready, cancelling its timeout if it had one.
    #[inline]
    pub fn make_ready(&mut self, task: TaskId, work: &mut Work) {
        if self.state(task) == TaskState::Sleeping {
            self.timeouts.cancel(task, work);
        }
        self.state[task.index()] = TaskState::Ready;
    }

    /// Fails unless `task` is ready or blocked: the tasks that may be given a timeout. A
    /// blocked task given one is a task whose first release is in the future.
    pub fn expect_sleepable(&self, task: TaskId) -> Result<(), CoreError> {
        match self.state(task) {
            TaskState::Absent => Err(CoreError::UnknownTask),
            TaskState::Sleeping => Err(CoreError::NotReady),
            _ => Ok(()),
        }
    }

    /// True when `task` is ready and its absolute sleep until `until` ends at or before
    /// `now`: the sleep returns at once (POSIX `clock_nanosleep`), so the task never
    /// suspends and keeps its place in its policy's queue (bulwark-sim's "Ties", rule 3).
    #[inline]
    pub fn returns_at_once(&self, now: Instant, task: TaskId, until: Instant) -> bool {
        until <= now && self.state(task) == TaskState::Ready
    }

    /// Marks a ready or blocked `task` sleeping until `until`, to wake as `wake`; an `until`
    /// at or before `now` leaves it ready at once (an absolute sleep into the past returns
    /// immediately). Returns true in that case: the caller then queues it as woken.
    #[inline]
    pub fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        wake: Wake,
        work: &mut Work,
    ) -> bool {
        if until <= now {
            self.make_ready(task, work);
            return true;
        }
        self.state[task.index()] = TaskState::Sleeping;
        self.wake[task.index()] = wake;
        self.timeouts.arm(task, until, work);
        false
    }

    /// Marks a ready `task` blocked.
    #[inline]
    pub fn block(&mut self, task: TaskId) {
        self.state[task.index()] = TaskState::Blocked;
    }

    /// Wakes the earliest sleeper whose timeout is due by `now`: it becomes ready and is
    /// returned with the wake-up it asked for. Call repeatedly to drain every due timeout.
    #[inline]
    pub fn wake_expired(&mut self, now: Instant, work: &mut Work) -> Option<(TaskId, Wake)> {
        let (task, _) = self.timeouts.pop_expired(now, work)?;
        self.state[task.index()] = TaskState::Ready;
        Some((task, self.wake[task.index()]))
    }

    /// When the next sleeper wakes.
    #[inline]
    pub fn next_timeout(&self, work: &mut Work) -> Option<Instant> {
        self.timeouts.earliest(work).map(|(_, at)| at)
    }

    /// The timer of a policy that enforces budgets: the earliest of the next wake-up, the
    /// next of its `replenishments` and the chosen task's `depletion`.
    #[inline]
    pub(crate) fn next_timer(
        &self,
        replenishments: &TimeoutQueue,
        depletion: Option<Instant>,
        work: &mut Work,
    ) -> Option<Instant> {
        let wake_up = self.next_timeout(work);
        let replenishment = replenishments.earliest(work).map(|(_, at)| at);
        [wake_up, replenishment, depletion]
            .into_iter()
            .flatten()
            .min()
    }

    /// Checks that exactly the sleeping tasks have timeouts.
    pub fn check(&self) -> Result<(), &'static str> {
        self.timeouts.check()?;
        for (i, state) in self.state.iter().enumerate() {
            let armed = self.timeouts.contains(TaskId(i as u32));
            if armed != (*state == TaskState::Sleeping) {
                return Err("a task has a timeout exactly when it sleeps");
            }
        }
        Ok(())
    }
}
