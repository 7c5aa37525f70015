//! Preemptive earliest-deadline-first scheduling.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - a task is in the ready heap exactly when it is ready, keyed by (absolute deadline,
//!   activation order);
//! - the task chosen is the heap's minimum: the earliest deadline, and among equal deadlines
//!   the one activated first, so a running job is never preempted by an equal deadline.
//!
//! Timeouts are processed eagerly: every `schedule` wakes all sleepers that are due.

use alloc::vec;
use alloc::vec::Vec;

use crate::heap::IndexedHeap;
use crate::suspension::{Suspensions, TaskState};
use crate::timeouts::{key_time, order_key};
use crate::{CoreError, Decision, Instant, Policy, TaskId, Wake, Work};

/// A preemptive EDF scheduler for one core.
#[derive(Clone, Debug)]
pub struct Edf {
    deadline: Vec<Instant>,
    /// Keyed by (deadline, activation order), packed by [`order_key`].
    ready: IndexedHeap<u128>,
    activations: u64,
    tasks: Suspensions,
}

impl Edf {
    /// A scheduler for task ids `0..capacity`, with no tasks yet.
    pub fn with_capacity(capacity: usize) -> Self {
        Edf {
            deadline: vec![Instant::NEVER; capacity],
            ready: IndexedHeap::with_capacity(capacity),
            activations: 0,
            tasks: Suspensions::with_capacity(capacity),
        }
    }

    /// Adds `task`, blocked until its first activation or sleep timeout.
    pub fn add_task(&mut self, task: TaskId) -> Result<(), CoreError> {
        self.tasks.add(task)
    }

    fn enqueue(&mut self, task: TaskId, wake: Wake, work: &mut Work) {
        if let Wake::NextJob { deadline } = wake {
            self.deadline[task.index()] = deadline;
        }
        self.activations += 1;
        self.ready.upsert(
            task,
            order_key(self.deadline[task.index()], self.activations),
        );
        work.heap_operations += 1;
    }

    fn dequeue(&mut self, task: TaskId, work: &mut Work) {
        self.ready.remove(task);
        work.heap_operations += 1;
    }
}

impl Policy for Edf {
    fn name(&self) -> &'static str {
        "edf"
    }

    fn activate(
        &mut self,
        _now: Instant,
        task: TaskId,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.tasks.expect_suspended(task)?;
        self.tasks.make_ready(task, work);
        self.enqueue(task, wake, work);
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
        if self.ready.contains(task) {
            self.dequeue(task, work);
        }
        if self.tasks.sleep(now, task, until, wake, work) {
            self.enqueue(task, wake, work);
        }
        Ok(())
    }

    fn block(&mut self, _now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.dequeue(task, work);
        self.tasks.block(task);
        Ok(())
    }

    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        while let Some((task, wake)) = self.tasks.wake_expired(now, work) {
            self.enqueue(task, wake, work);
        }
        Decision {
            next: self.ready.peek().map(|(task, _)| task),
            timer: self.tasks.next_timeout(work),
        }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.ready.check()?;
        self.tasks.check()?;
        for i in 0..self.deadline.len() {
            let task = TaskId(i as u32);
            let ready = self.tasks.state(task) == TaskState::Ready;
            if self.ready.contains(task) != ready {
                return Err("a task is in the ready heap exactly when it is ready");
            }
            if ready && self.ready.key(task).map(key_time) != Some(self.deadline[i]) {
                return Err("a ready task is keyed by its current deadline");
            }
        }
        Ok(())
    }
}
