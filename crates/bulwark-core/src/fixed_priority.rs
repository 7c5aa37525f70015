//! Preemptive fixed-priority scheduling with per-priority FIFO run queues.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - a task is in the run queue exactly when it is ready, at its own priority;
//! - the task chosen to run is the head of the highest non-empty priority list. A preempted
//!   task stays at the head of its list (POSIX `SCHED_FIFO`), so it resumes before its peers;
//!   a task that wakes joins the tail.
//!
//! Timeouts are processed eagerly: every `schedule` wakes all sleepers that are due.

use alloc::vec;
use alloc::vec::Vec;

use crate::runqueue::PriorityRunqueue;
use crate::suspension::{Suspensions, TaskState};
use crate::{CoreError, Decision, Instant, Policy, Priority, TaskId, Wake, Work};

/// A preemptive fixed-priority scheduler for one core.
#[derive(Clone, Debug)]
pub struct FixedPriority {
    priority: Vec<Priority>,
    runqueue: PriorityRunqueue,
    tasks: Suspensions,
}

impl FixedPriority {
    /// A scheduler for task ids `0..capacity`, with no tasks yet.
    pub fn with_capacity(capacity: usize) -> Self {
        FixedPriority {
            priority: vec![Priority::MIN; capacity],
            runqueue: PriorityRunqueue::with_capacity(capacity),
            tasks: Suspensions::with_capacity(capacity),
        }
    }

    /// Adds `task` at `priority`, blocked until its first activation or sleep timeout.
    pub fn add_task(&mut self, task: TaskId, priority: Priority) -> Result<(), CoreError> {
        self.tasks.add(task)?;
        self.priority[task.index()] = priority;
        Ok(())
    }

    /// Queues a woken task at the tail of its priority; fixed priority ignores deadlines.
    fn enqueue(&mut self, task: TaskId, work: &mut Work) {
        self.runqueue.push_back(task, self.priority[task.index()]);
        work.queue_entries_moved += 1;
    }
}

impl Policy for FixedPriority {
    fn name(&self) -> &'static str {
        "fixed-priority"
    }

    fn activate(
        &mut self,
        _now: Instant,
        task: TaskId,
        _wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.tasks.expect_suspended(task)?;
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
        if self.runqueue.remove(task) {
            work.queue_entries_moved += 1;
        }
        if self.tasks.sleep(now, task, until, wake, work) {
            // Back at once, behind the task's peers.
            self.enqueue(task, work);
        }
        Ok(())
    }

    fn block(&mut self, _now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.runqueue.remove(task);
        work.queue_entries_moved += 1;
        self.tasks.block(task);
        Ok(())
    }

    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        while let Some((task, _)) = self.tasks.wake_expired(now, work) {
            self.enqueue(task, work);
        }
        Decision {
            next: self.runqueue.highest(),
            timer: self.tasks.next_timeout(work),
        }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.runqueue.check()?;
        self.tasks.check()?;
        for (i, _) in self.priority.iter().enumerate() {
            let task = TaskId(i as u32);
            if self.runqueue.contains(task) != (self.tasks.state(task) == TaskState::Ready) {
                return Err("a task is in the run queue exactly when it is ready");
            }
        }
        Ok(())
    }
}
