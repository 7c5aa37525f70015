//! Preemptive fixed-priority scheduling with per-priority FIFO run queues.
//!
//! Invariants (checked by [`Policy::check_invariants`]):
//! - a task is in the run queue exactly when it is ready, at its own priority;
//! - the task chosen to run is the head of the highest non-empty priority list. A preempted
//!   task stays at the head of its list (POSIX `SCHED_FIFO`), so it resumes before its peers;
//!   a task that wakes joins the tail; a task whose absolute sleep ends at or before `now`
//!   never suspends and keeps its place;
//! - a priority change (`seL4_TCB_SetPriority`) moves a ready task to the tail of its new
//!   priority, except the task last chosen, which moves to the head: seL4 puts the current
//!   thread back at the head of its queue when it reschedules;
//! - the task last chosen, if any, is ready.
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
    /// The task the last `schedule` chose, while it stays ready.
    chosen: Option<TaskId>,
}

impl FixedPriority {
    /// A scheduler for task ids `0..capacity`, with no tasks yet.
    pub fn with_capacity(capacity: usize) -> Self {
        FixedPriority {
            priority: vec![Priority::MIN; capacity],
            runqueue: PriorityRunqueue::with_capacity(capacity),
            tasks: Suspensions::with_capacity(capacity),
            chosen: None,
        }
    }

    /// `task` suspends: it is no longer the chosen one.
    fn forget_chosen(&mut self, task: TaskId) {
        if self.chosen == Some(task) {
            self.chosen = None;
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

    #[inline]
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
        if self.tasks.returns_at_once(now, task, until) {
            return Ok(());
        }
        self.forget_chosen(task);
        if self.runqueue.remove(task) {
            work.queue_entries_moved += 1;
        }
        if self.tasks.sleep(now, task, until, wake, work) {
            // A blocked task given a wake-up in the past wakes at once, behind its peers.
            self.enqueue(task, work);
        }
        Ok(())
    }

    #[inline]
    fn block(&mut self, _now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        self.tasks.expect_ready(task)?;
        self.forget_chosen(task);
        self.runqueue.remove(task);
        work.queue_entries_moved += 1;
        self.tasks.block(task);
        Ok(())
    }

    #[inline]
    fn set_priority(
        &mut self,
        _now: Instant,
        task: TaskId,
        priority: Priority,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        if self.tasks.state(task) == TaskState::Absent {
            return Err(CoreError::UnknownTask);
        }
        self.priority[task.index()] = priority;
        // A suspended task takes its new priority when it wakes.
        if self.runqueue.remove(task) {
            if self.chosen == Some(task) {
                self.runqueue.push_front(task, priority);
            } else {
                self.runqueue.push_back(task, priority);
            }
            work.queue_entries_moved += 2;
        }
        Ok(())
    }

    #[inline]
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        while let Some((task, _)) = self.tasks.wake_expired(now, work) {
            self.enqueue(task, work);
        }
        self.chosen = self.runqueue.highest();
        Decision {
            next: self.chosen,
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
        if self
            .chosen
            .is_some_and(|task| self.tasks.state(task) != TaskState::Ready)
        {
            return Err("the task last chosen is ready");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(nanos: u64) -> Instant {
        Instant::from_nanos(nanos)
    }

    fn next(fp: &mut FixedPriority, work: &mut Work) -> Option<TaskId> {
        let decision = fp.schedule(at(0), work);
        fp.check_invariants().unwrap();
        decision.next
    }

    /// Worked by hand from seL4's rules: `a` and `b` at 2, `c` at 1, activated c, a, b.
    /// `a` runs. `b` lowered to 1 joins the tail behind `c`; `a` lowered to 1 while chosen
    /// goes to the head, so it keeps the core (nothing is strictly higher). `c` raised to 3
    /// preempts it; when `c` blocks, `a` resumes before its peers, then `b` after `a`
    /// blocks. A blocked task's new priority holds when it wakes.
    #[test]
    fn a_priority_change_queues_at_the_tail_except_for_the_chosen_task() {
        let (a, b, c) = (TaskId(0), TaskId(1), TaskId(2));
        let mut fp = FixedPriority::with_capacity(3);
        let mut work = Work::default();
        fp.add_task(a, Priority(2)).unwrap();
        fp.add_task(b, Priority(2)).unwrap();
        fp.add_task(c, Priority(1)).unwrap();
        for task in [c, a, b] {
            fp.activate(at(0), task, Wake::SameJob, &mut work).unwrap();
        }
        assert_eq!(next(&mut fp, &mut work), Some(a));
        fp.set_priority(at(0), b, Priority(1), &mut work).unwrap();
        fp.set_priority(at(0), a, Priority(1), &mut work).unwrap();
        assert_eq!(next(&mut fp, &mut work), Some(a));
        fp.set_priority(at(0), c, Priority(3), &mut work).unwrap();
        assert_eq!(next(&mut fp, &mut work), Some(c));
        fp.block(at(0), c, &mut work).unwrap();
        assert_eq!(next(&mut fp, &mut work), Some(a), "a resumes before b");
        fp.block(at(0), a, &mut work).unwrap();
        assert_eq!(next(&mut fp, &mut work), Some(b));
        fp.block(at(0), b, &mut work).unwrap();
        fp.set_priority(at(0), a, Priority(4), &mut work).unwrap();
        fp.activate(at(0), c, Wake::SameJob, &mut work).unwrap();
        fp.activate(at(0), a, Wake::SameJob, &mut work).unwrap();
        assert_eq!(
            next(&mut fp, &mut work),
            Some(a),
            "woken at its new priority 4"
        );
    }

    #[test]
    fn a_priority_change_of_an_unknown_task_is_refused_and_changes_nothing() {
        let mut fp = FixedPriority::with_capacity(2);
        let mut work = Work::default();
        fp.add_task(TaskId(0), Priority(1)).unwrap();
        for unknown in [TaskId(1), TaskId(7)] {
            assert_eq!(
                fp.set_priority(at(0), unknown, Priority(5), &mut work),
                Err(CoreError::UnknownTask)
            );
        }
        assert_eq!(work, Work::default());
        fp.check_invariants().unwrap();
    }
}

#[cfg(test)]
mod model_tests {
    //! Fixed priority against a reference model of its queues, over any sequence of
    //! activations, blocks, priority changes and decisions (no timeouts, so the order is
    //! exactly the model's): FIFO within a priority, a preempted task at the head, and the
    //! seL4 rule for a priority change (tail, except the chosen task: head).

    use alloc::collections::VecDeque;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use super::*;

    const TASKS: u32 = 6;

    #[derive(Clone, Copy, Debug)]
    enum Call {
        Activate(u32),
        Block(u32),
        SetPriority(u32, u8),
        Schedule,
    }

    fn call() -> impl Strategy<Value = Call> {
        // Ids up to TASKS + 1, so unknown tasks are tried too.
        let task = 0..TASKS + 2;
        prop_oneof![
            2 => task.clone().prop_map(Call::Activate),
            1 => task.clone().prop_map(Call::Block),
            2 => (task, 0u8..4).prop_map(|(t, p)| Call::SetPriority(t, p)),
            2 => Just(Call::Schedule),
        ]
    }

    /// The queues kept the obvious way: one FIFO per priority.
    struct Model {
        priority: Vec<u8>,
        ready: Vec<bool>,
        queues: [VecDeque<u32>; 4],
        chosen: Option<u32>,
    }

    impl Model {
        fn unqueue(&mut self, task: u32) {
            for queue in &mut self.queues {
                queue.retain(|&t| t != task);
            }
        }

        fn highest(&self) -> Option<u32> {
            self.queues
                .iter()
                .rev()
                .find_map(|queue| queue.front().copied())
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn fixed_priority_decides_as_its_queue_model(
            priorities in proptest::collection::vec(0u8..4, TASKS as usize),
            calls in proptest::collection::vec(call(), 1..100),
        ) {
            let mut fp = FixedPriority::with_capacity(TASKS as usize);
            for (t, p) in priorities.iter().enumerate() {
                fp.add_task(TaskId(t as u32), Priority(*p)).unwrap();
            }
            let mut model = Model {
                priority: priorities.clone(),
                ready: alloc::vec![false; TASKS as usize],
                queues: Default::default(),
                chosen: None,
            };
            let now = Instant::ZERO;
            let mut work = Work::default();
            for call in calls {
                match call {
                    Call::Activate(t) => {
                        let result = fp.activate(now, TaskId(t), Wake::SameJob, &mut work);
                        let allowed = t < TASKS && !model.ready[t as usize];
                        prop_assert_eq!(result.is_ok(), allowed);
                        if allowed {
                            model.ready[t as usize] = true;
                            model.queues[model.priority[t as usize] as usize].push_back(t);
                        }
                    }
                    Call::Block(t) => {
                        let result = fp.block(now, TaskId(t), &mut work);
                        let allowed = t < TASKS && model.ready[t as usize];
                        prop_assert_eq!(result.is_ok(), allowed);
                        if allowed {
                            model.ready[t as usize] = false;
                            model.unqueue(t);
                            if model.chosen == Some(t) {
                                model.chosen = None;
                            }
                        }
                    }
                    Call::SetPriority(t, p) => {
                        let result = fp.set_priority(now, TaskId(t), Priority(p), &mut work);
                        prop_assert_eq!(result.is_ok(), t < TASKS);
                        if t < TASKS {
                            model.priority[t as usize] = p;
                            if model.ready[t as usize] {
                                model.unqueue(t);
                                let queue = &mut model.queues[p as usize];
                                if model.chosen == Some(t) {
                                    queue.push_front(t);
                                } else {
                                    queue.push_back(t);
                                }
                            }
                        }
                    }
                    Call::Schedule => {
                        let decision = fp.schedule(now, &mut work);
                        model.chosen = model.highest();
                        prop_assert_eq!(decision.next, model.chosen.map(TaskId));
                        prop_assert_eq!(decision.timer, None);
                    }
                }
                prop_assert_eq!(fp.check_invariants(), Ok(()));
            }
        }
    }
}
