//! A fixed-priority run queue: one FIFO list per priority and a two-level bitmap, so finding
//! the highest non-empty priority is O(1) (two leading-zero counts), as in seL4 and Linux's
//! `rt` class.
//!
//! Invariants: level p of the bitmap is set exactly when list p is non-empty; every queued task is in exactly one list,
//! that of its priority, linked through its `Link`. Capacity is fixed at construction.

use alloc::vec;
use alloc::vec::Vec;

use crate::bitmap::PriorityBitmap;
use crate::{Priority, TaskId};

const NONE: u32 = u32::MAX;

/// A task's place in the lists, kept in one record so that queueing or removing a task
/// touches one cache line of its own (plus its neighbours').
#[derive(Clone, Copy, Debug)]
struct Link {
    next: u32,
    prev: u32,
    /// The priority the task is queued at, or `None` when it is not queued.
    queued_at: Option<Priority>,
}

const UNLINKED: Link = Link {
    next: NONE,
    prev: NONE,
    queued_at: None,
};

/// Per-priority FIFO lists of task ids with O(1) insertion, removal and highest lookup.
#[derive(Clone, Debug)]
pub struct PriorityRunqueue {
    levels: PriorityBitmap,
    head: [u32; Priority::LEVELS],
    tail: [u32; Priority::LEVELS],
    links: Vec<Link>,
}

impl PriorityRunqueue {
    /// An empty run queue for task ids `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        PriorityRunqueue {
            levels: PriorityBitmap::default(),
            head: [NONE; Priority::LEVELS],
            tail: [NONE; Priority::LEVELS],
            links: vec![UNLINKED; capacity],
        }
    }

    /// True when `task` is queued.
    pub fn contains(&self, task: TaskId) -> bool {
        self.links
            .get(task.index())
            .is_some_and(|l| l.queued_at.is_some())
    }

    /// Appends `task` at the tail of `priority`'s list. Returns false (and changes nothing) if
    /// the id is beyond the capacity or already queued.
    pub fn push_back(&mut self, task: TaskId, priority: Priority) -> bool {
        let t = task.index();
        if self.links.get(t).is_none_or(|l| l.queued_at.is_some()) {
            return false;
        }
        let p = priority.0 as usize;
        self.links[t] = Link {
            next: NONE,
            prev: self.tail[p],
            queued_at: Some(priority),
        };
        match self.tail[p] {
            NONE => self.head[p] = task.0,
            old => self.links[old as usize].next = task.0,
        }
        self.tail[p] = task.0;
        self.levels.set(priority);
        true
    }

    /// Puts `task` at the head of `priority`'s list: a preempted thread resumes before the
    /// others of its priority (seL4's `tcbSchedEnqueue`, SCHED_FIFO). Returns false (and
    /// changes nothing) if the id is beyond the capacity or already queued.
    pub fn push_front(&mut self, task: TaskId, priority: Priority) -> bool {
        let t = task.index();
        if self.links.get(t).is_none_or(|l| l.queued_at.is_some()) {
            return false;
        }
        let p = priority.0 as usize;
        self.links[t] = Link {
            next: self.head[p],
            prev: NONE,
            queued_at: Some(priority),
        };
        match self.head[p] {
            NONE => self.tail[p] = task.0,
            old => self.links[old as usize].prev = task.0,
        }
        self.head[p] = task.0;
        self.levels.set(priority);
        true
    }

    /// Removes `task` from its list; returns false if it was not queued.
    pub fn remove(&mut self, task: TaskId) -> bool {
        let t = task.index();
        let Some(&Link {
            next,
            prev,
            queued_at: Some(priority),
        }) = self.links.get(t)
        else {
            return false;
        };
        let p = priority.0 as usize;
        match prev {
            NONE => self.head[p] = next,
            prev => self.links[prev as usize].next = next,
        }
        match next {
            NONE => self.tail[p] = prev,
            next => self.links[next as usize].prev = prev,
        }
        self.links[t] = UNLINKED;
        if self.head[p] == NONE {
            self.levels.clear(priority);
        }
        true
    }

    /// The head of the highest-priority non-empty list.
    pub fn highest(&self) -> Option<TaskId> {
        let p = self.highest_priority()?;
        Some(TaskId(self.head[p.0 as usize]))
    }

    /// The highest priority with a queued task.
    pub fn highest_priority(&self) -> Option<Priority> {
        self.levels.highest()
    }

    /// Checks the bitmap and list invariants.
    pub fn check(&self) -> Result<(), &'static str> {
        let mut linked = 0usize;
        for p in 0..Priority::LEVELS {
            let marked = self.levels.contains(Priority(p as u8));
            if marked != (self.head[p] != NONE) {
                return Err("run-queue bitmap disagrees with its lists");
            }
            let mut at = self.head[p];
            let mut before = NONE;
            while at != NONE {
                let a = at as usize;
                if self.links.get(a).and_then(|l| l.queued_at) != Some(Priority(p as u8)) {
                    return Err("run-queue member listed at the wrong priority");
                }
                if self.links[a].prev != before {
                    return Err("run-queue back link broken");
                }
                linked += 1;
                if linked > self.links.len() {
                    return Err("run-queue list has a cycle");
                }
                before = at;
                at = self.links[a].next;
            }
            if self.tail[p] != before {
                return Err("run-queue tail is not the last member");
            }
        }
        self.levels.check()?;
        if linked != self.links.iter().filter(|l| l.queued_at.is_some()).count() {
            return Err("run-queue member not linked");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fifo_within_a_priority_and_highest_first() {
        let mut rq = PriorityRunqueue::with_capacity(8);
        assert!(rq.push_back(TaskId(1), Priority(3)));
        assert!(rq.push_back(TaskId(2), Priority(200)));
        assert!(rq.push_back(TaskId(3), Priority(200)));
        assert!(
            !rq.push_back(TaskId(3), Priority(7)),
            "double insert refused"
        );
        assert_eq!(rq.highest(), Some(TaskId(2)));
        assert!(rq.remove(TaskId(2)));
        assert_eq!(rq.highest(), Some(TaskId(3)));
        assert!(rq.remove(TaskId(3)));
        assert_eq!(rq.highest(), Some(TaskId(1)));
        assert_eq!(rq.highest_priority(), Some(Priority(3)));
        assert!(rq.remove(TaskId(1)));
        assert_eq!(rq.highest(), None);
        assert!(!rq.push_back(TaskId(8), Priority(0)), "beyond capacity");
        rq.check().unwrap();
    }

    proptest! {
        /// `highest` always agrees with a linear scan of a reference model (both ends).
        #[test]
        fn highest_matches_a_scan(ops in proptest::collection::vec((0u32..12, any::<u8>(), 0u8..3), 0..300)) {
            let mut rq = PriorityRunqueue::with_capacity(10);
            // Queue order: `push_front` goes first, `push_back` last; the scan takes the first
            // of the highest priority.
            let mut model: Vec<(u32, u8)> = Vec::new();
            for (t, p, op) in ops {
                if op < 2 {
                    let ok = if op == 0 {
                        rq.push_back(TaskId(t), Priority(p))
                    } else {
                        rq.push_front(TaskId(t), Priority(p))
                    };
                    let expect = t < 10 && !model.iter().any(|m| m.0 == t);
                    prop_assert_eq!(ok, expect);
                    if ok {
                        if op == 0 { model.push((t, p)) } else { model.insert(0, (t, p)) }
                    }
                } else {
                    let ok = rq.remove(TaskId(t));
                    let idx = model.iter().position(|m| m.0 == t);
                    prop_assert_eq!(ok, idx.is_some());
                    if let Some(i) = idx { model.remove(i); }
                }
                let best = model.iter().map(|m| m.1).max();
                let expect = best.and_then(|b| model.iter().find(|m| m.1 == b)).map(|m| TaskId(m.0));
                prop_assert_eq!(rq.highest(), expect);
                prop_assert!(rq.check().is_ok());
            }
        }
    }
}
