//! A fixed-priority run queue: one FIFO list per priority and a two-level bitmap, so finding
//! the highest non-empty priority is O(1) (two leading-zero counts), as in seL4 and Linux's
//! `rt` class.
//!
//! The lists ([`RunLists`]) are doubly linked through a [`Link`] per task, which lives in the
//! caller's own per-task record (intrusive, as seL4 keeps `tcbSchedNext` in the TCB): queueing
//! or removing a task touches its record and its neighbours', not a table of its own. Callers
//! with no record of their own use [`PriorityRunqueue`], which keeps the links in a table.
//!
//! Invariants: level p of the bitmap is set exactly when list p is non-empty; every queued task
//! is in exactly one list, that of its priority, linked through its `Link`. Capacity is fixed
//! at construction.

use alloc::vec;
use alloc::vec::Vec;

use crate::bitmap::PriorityBitmap;
use crate::{Priority, TaskId};

const NONE: u32 = u32::MAX;

/// A task's place in the lists.
#[derive(Clone, Copy, Debug)]
pub struct Link {
    next: u32,
    prev: u32,
    /// The priority the task is queued at, or `None` when it is not queued.
    queued_at: Option<Priority>,
}

impl Link {
    /// The link of a task in no list.
    pub const UNLINKED: Link = Link {
        next: NONE,
        prev: NONE,
        queued_at: None,
    };

    /// True when the task is queued.
    pub fn is_queued(&self) -> bool {
        self.queued_at.is_some()
    }
}

/// A per-task record that holds its task's [`Link`].
pub trait Linked {
    /// The record's link.
    fn link(&self) -> &Link;
    /// The record's link, to change.
    fn link_mut(&mut self) -> &mut Link;
}

impl Linked for Link {
    fn link(&self) -> &Link {
        self
    }
    fn link_mut(&mut self) -> &mut Link {
        self
    }
}

/// The two ends of one priority's list, side by side so that queueing at a level reads one
/// cache line of the lists.
#[derive(Clone, Copy, Debug)]
struct Ends {
    head: u32,
    tail: u32,
}

/// Per-priority FIFO lists over task records indexed by task id, with O(1) insertion, removal
/// and highest lookup. Every method takes the records the links live in.
///
/// The bitmap comes first (`repr(C)`), so that a caller can lay it out next to its own hot
/// fields.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct RunLists {
    levels: PriorityBitmap,
    ends: [Ends; Priority::LEVELS],
}

impl Default for RunLists {
    fn default() -> Self {
        RunLists {
            levels: PriorityBitmap::default(),
            ends: [Ends {
                head: NONE,
                tail: NONE,
            }; Priority::LEVELS],
        }
    }
}

impl RunLists {
    /// True when `task` is queued.
    pub fn contains<R: Linked>(records: &[R], task: TaskId) -> bool {
        records
            .get(task.index())
            .is_some_and(|r| r.link().is_queued())
    }

    /// Appends `task` at the tail of `priority`'s list. Returns false (and changes nothing) if
    /// the id is beyond the records or already queued.
    pub fn push_back<R: Linked>(
        &mut self,
        records: &mut [R],
        task: TaskId,
        priority: Priority,
    ) -> bool {
        let t = task.index();
        if records.get(t).is_none_or(|r| r.link().is_queued()) {
            return false;
        }
        let ends = &mut self.ends[priority.0 as usize];
        *records[t].link_mut() = Link {
            next: NONE,
            prev: ends.tail,
            queued_at: Some(priority),
        };
        match ends.tail {
            NONE => ends.head = task.0,
            old => records[old as usize].link_mut().next = task.0,
        }
        ends.tail = task.0;
        self.levels.set(priority);
        true
    }

    /// Puts `task` at the head of `priority`'s list: a preempted thread resumes before the
    /// others of its priority (seL4's `tcbSchedEnqueue`, SCHED_FIFO). Returns false (and
    /// changes nothing) if the id is beyond the records or already queued.
    pub fn push_front<R: Linked>(
        &mut self,
        records: &mut [R],
        task: TaskId,
        priority: Priority,
    ) -> bool {
        let t = task.index();
        if records.get(t).is_none_or(|r| r.link().is_queued()) {
            return false;
        }
        let ends = &mut self.ends[priority.0 as usize];
        *records[t].link_mut() = Link {
            next: ends.head,
            prev: NONE,
            queued_at: Some(priority),
        };
        match ends.head {
            NONE => ends.tail = task.0,
            old => records[old as usize].link_mut().prev = task.0,
        }
        ends.head = task.0;
        self.levels.set(priority);
        true
    }

    /// Removes `task` from its list; returns false if it was not queued.
    pub fn remove<R: Linked>(&mut self, records: &mut [R], task: TaskId) -> bool {
        let t = task.index();
        let Some(&Link {
            next,
            prev,
            queued_at: Some(priority),
        }) = records.get(t).map(|r| r.link())
        else {
            return false;
        };
        let ends = &mut self.ends[priority.0 as usize];
        match prev {
            NONE => ends.head = next,
            prev => records[prev as usize].link_mut().next = next,
        }
        match next {
            NONE => ends.tail = prev,
            next => records[next as usize].link_mut().prev = prev,
        }
        *records[t].link_mut() = Link::UNLINKED;
        if ends.head == NONE {
            self.levels.clear(priority);
        }
        true
    }

    /// The head of the highest-priority non-empty list.
    pub fn highest(&self) -> Option<TaskId> {
        let p = self.highest_priority()?;
        Some(TaskId(self.ends[p.0 as usize].head))
    }

    /// The highest priority with a queued task.
    pub fn highest_priority(&self) -> Option<Priority> {
        self.levels.highest()
    }

    /// Checks the bitmap and list invariants.
    pub fn check<R: Linked>(&self, records: &[R]) -> Result<(), &'static str> {
        let mut linked = 0usize;
        for p in 0..Priority::LEVELS {
            let marked = self.levels.contains(Priority(p as u8));
            if marked != (self.ends[p].head != NONE) {
                return Err("run-queue bitmap disagrees with its lists");
            }
            let mut at = self.ends[p].head;
            let mut before = NONE;
            while at != NONE {
                let Some(link) = records.get(at as usize).map(|r| r.link()) else {
                    return Err("run-queue member beyond the records");
                };
                if link.queued_at != Some(Priority(p as u8)) {
                    return Err("run-queue member listed at the wrong priority");
                }
                if link.prev != before {
                    return Err("run-queue back link broken");
                }
                linked += 1;
                if linked > records.len() {
                    return Err("run-queue list has a cycle");
                }
                before = at;
                at = link.next;
            }
            if self.ends[p].tail != before {
                return Err("run-queue tail is not the last member");
            }
        }
        self.levels.check()?;
        if linked != records.iter().filter(|r| r.link().is_queued()).count() {
            return Err("run-queue member not linked");
        }
        Ok(())
    }
}

/// [`RunLists`] with the links in a table of their own, for callers with no per-task record.
#[derive(Clone, Debug)]
pub struct PriorityRunqueue {
    lists: RunLists,
    links: Vec<Link>,
}

impl PriorityRunqueue {
    /// An empty run queue for task ids `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        PriorityRunqueue {
            lists: RunLists::default(),
            links: vec![Link::UNLINKED; capacity],
        }
    }

    /// True when `task` is queued.
    #[inline]
    pub fn contains(&self, task: TaskId) -> bool {
        RunLists::contains(&self.links, task)
    }

    /// See [`RunLists::push_back`].
    #[inline]
    pub fn push_back(&mut self, task: TaskId, priority: Priority) -> bool {
        self.lists.push_back(&mut self.links, task, priority)
    }

    /// See [`RunLists::push_front`].
    #[inline]
    pub fn push_front(&mut self, task: TaskId, priority: Priority) -> bool {
        self.lists.push_front(&mut self.links, task, priority)
    }

    /// See [`RunLists::remove`].
    #[inline]
    pub fn remove(&mut self, task: TaskId) -> bool {
        self.lists.remove(&mut self.links, task)
    }

    /// The head of the highest-priority non-empty list.
    #[inline]
    pub fn highest(&self) -> Option<TaskId> {
        self.lists.highest()
    }

    /// The highest priority with a queued task.
    #[inline]
    pub fn highest_priority(&self) -> Option<Priority> {
        self.lists.highest_priority()
    }

    /// Checks the bitmap and list invariants.
    pub fn check(&self) -> Result<(), &'static str> {
        self.lists.check(&self.links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The layout the type's docs promise (SPR's layout test counts on it).
    #[test]
    fn the_bitmap_comes_first() {
        assert_eq!(core::mem::offset_of!(RunLists, levels), 0);
    }

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
