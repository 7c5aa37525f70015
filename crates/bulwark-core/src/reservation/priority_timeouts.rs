//! SPR's timer queues (section IV-A, Fig. 7): one min-heap of timeouts per priority level, so
//! the scheduler can find the most important expired timeout, and the earliest timeout of any
//! higher-priority task, with a sweep of the heaps' tops in decreasing priority.
//!
//! Each task has at most one timeout: its next replenishment (when depleted) or its next
//! activation (when it sleeps). Heaps exist only for the levels that have tasks, and a bitmap
//! of the non-empty heaps lets the sweep skip empty levels, so a sweep examines at most one
//! top per non-empty level: linear in the (constant) number of priorities, whatever the number
//! of tasks.
//!
//! Invariants (checked by [`PriorityTimeouts::check`]): a level's bit is set exactly when its
//! heap is non-empty; every queued task is in the heap of its own level.

use alloc::vec;
use alloc::vec::Vec;

use crate::bitmap::PriorityBitmap;
use crate::heap::IndexedHeap;
use crate::timeouts::{key_time, order_key};
use crate::{Instant, Priority, TaskId, Work};

const NO_HEAP: u16 = u16::MAX;

/// Per-priority timeout heaps.
#[derive(Clone, Debug)]
pub struct PriorityTimeouts {
    /// Each registered task's level and its index inside that level's heap.
    member: Vec<Option<(Priority, u32)>>,
    /// The tasks of each heap, by index inside the heap.
    tasks: Vec<Vec<TaskId>>,
    heaps: Vec<IndexedHeap<u128, u32>>,
    heap_of_level: [u16; Priority::LEVELS],
    nonempty: PriorityBitmap,
    armed: u64,
}

impl PriorityTimeouts {
    /// Room for task ids `0..capacity`, none registered.
    pub fn with_capacity(capacity: usize) -> Self {
        PriorityTimeouts {
            member: vec![None; capacity],
            tasks: Vec::new(),
            heaps: Vec::new(),
            heap_of_level: [NO_HEAP; Priority::LEVELS],
            nonempty: PriorityBitmap::default(),
            armed: 0,
        }
    }

    /// Registers `task` at `priority` (configuration time: may allocate). False if the id is
    /// beyond the capacity or already registered.
    pub fn register(&mut self, task: TaskId, priority: Priority) -> bool {
        if !matches!(self.member.get(task.index()), Some(None)) {
            return false;
        }
        let level = priority.0 as usize;
        if self.heap_of_level[level] == NO_HEAP {
            self.heap_of_level[level] = self.heaps.len() as u16;
            self.heaps.push(IndexedHeap::with_capacity(4));
            self.tasks.push(Vec::new());
        }
        let h = self.heap_of_level[level] as usize;
        let local = self.tasks[h].len();
        self.tasks[h].push(task);
        if local >= self.heaps[h].capacity() {
            // Grow by doubling, keeping whatever is queued.
            let mut bigger = IndexedHeap::with_capacity(2 * self.heaps[h].capacity());
            while let Some((m, k)) = self.heaps[h].pop() {
                bigger.upsert(m, k);
            }
            self.heaps[h] = bigger;
        }
        self.member[task.index()] = Some((priority, local as u32));
        true
    }

    fn slot(&self, task: TaskId) -> Option<(Priority, usize, u32)> {
        let (p, local) = (*self.member.get(task.index())?)?;
        Some((p, self.heap_of_level[p.0 as usize] as usize, local))
    }

    /// Arms (or moves) `task`'s timeout to `at`. False if `task` is not registered.
    pub fn arm(&mut self, task: TaskId, at: Instant, work: &mut Work) -> bool {
        let Some((p, h, local)) = self.slot(task) else {
            return false;
        };
        self.armed += 1;
        work.heap_operations += 1;
        self.heaps[h].upsert(local, order_key(at, self.armed));
        self.nonempty.set(p);
        true
    }

    /// Cancels `task`'s timeout; returns when it was due.
    pub fn cancel(&mut self, task: TaskId, work: &mut Work) -> Option<Instant> {
        let (p, h, local) = self.slot(task)?;
        let key = self.heaps[h].remove(local)?;
        work.heap_operations += 1;
        if self.heaps[h].is_empty() {
            self.nonempty.clear(p);
        }
        Some(key_time(key))
    }

    /// When `task`'s timeout is due, if it has one.
    pub fn timeout(&self, task: TaskId) -> Option<Instant> {
        let (_, h, local) = self.slot(task)?;
        self.heaps[h].key(local).map(key_time)
    }

    /// The most important task whose timeout is due by `now`, among the levels strictly
    /// above `floor` (all levels when `None`): the sweep of Fig. 7, in decreasing priority,
    /// one top examined per non-empty level. The timeout stays queued.
    pub fn expired_above(
        &self,
        now: Instant,
        floor: Option<Priority>,
        work: &mut Work,
    ) -> Option<TaskId> {
        let mut level = self.nonempty.highest();
        while let Some(p) = level {
            if floor.is_some_and(|f| p <= f) {
                return None;
            }
            let (local, at) = self.top(p, work)?;
            if at <= now {
                let h = self.heap_of_level[p.0 as usize] as usize;
                return Some(self.tasks[h][local as usize]);
            }
            level = self.nonempty.highest_below(p);
        }
        None
    }

    /// The earliest timeout of the levels strictly above `floor` (all levels when `None`):
    /// `t_hp` of Algorithm 2 when `floor` is the next task's priority.
    pub fn earliest_above(&self, floor: Option<Priority>, work: &mut Work) -> Option<Instant> {
        let mut earliest: Option<Instant> = None;
        let mut level = self.nonempty.highest();
        while let Some(p) = level {
            if floor.is_some_and(|f| p <= f) {
                break;
            }
            if let Some((_, at)) = self.top(p, work) {
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
            level = self.nonempty.highest_below(p);
        }
        earliest
    }

    fn top(&self, p: Priority, work: &mut Work) -> Option<(u32, Instant)> {
        work.timeouts_examined += 1;
        let h = self.heap_of_level[p.0 as usize] as usize;
        self.heaps
            .get(h)?
            .peek()
            .map(|(local, key)| (local, key_time(key)))
    }

    /// True when `task` has a pending timeout.
    pub fn contains(&self, task: TaskId) -> bool {
        self.timeout(task).is_some()
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        self.nonempty.check()?;
        for level in 0..Priority::LEVELS {
            let p = Priority(level as u8);
            let h = self.heap_of_level[level];
            let nonempty = h != NO_HEAP && !self.heaps[h as usize].is_empty();
            if nonempty != self.nonempty.contains(p) {
                return Err("a timer level is marked exactly when its heap is non-empty");
            }
        }
        for (h, heap) in self.heaps.iter().enumerate() {
            heap.check()?;
            for (local, task) in self.tasks[h].iter().enumerate() {
                match self.member.get(task.index()).copied().flatten() {
                    Some((p, l))
                        if l as usize == local
                            && self.heap_of_level[p.0 as usize] as usize == h => {}
                    _ => return Err("a queued task is in the heap of its own level"),
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(n: u64) -> Instant {
        Instant::from_nanos(n)
    }

    /// Fig. 7: l1 and m3 have expired, h1 and max have not. The sweep from the top skips h1
    /// and max (not due) and picks m3, never l1; above m3's level nothing is due.
    #[test]
    fn the_sweep_finds_the_most_important_expired_timeout() {
        let (max, hi, mid, lo) = (Priority(40), Priority(30), Priority(20), Priority(10));
        let mut q = PriorityTimeouts::with_capacity(8);
        let tasks = [(0, max), (1, hi), (2, mid), (3, mid), (4, lo)];
        for (t, p) in tasks {
            assert!(q.register(TaskId(t), p));
        }
        let mut w = Work::default();
        q.arm(TaskId(4), at(5), &mut w); // l1: expired
        q.arm(TaskId(3), at(7), &mut w); // m3: expired
        q.arm(TaskId(1), at(12), &mut w); // h1
        q.arm(TaskId(0), at(15), &mut w); // max
        let now = at(10);
        let mut w = Work::default();
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(3)));
        assert_eq!(w.timeouts_examined, 3, "max, hi, then mid's top");
        assert_eq!(q.expired_above(now, Some(mid), &mut w), None);
        assert_eq!(q.expired_above(now, Some(lo), &mut w), Some(TaskId(3)));
        assert_eq!(q.earliest_above(Some(mid), &mut w), Some(at(12)));
        assert_eq!(q.earliest_above(Some(hi), &mut w), Some(at(15)));
        assert_eq!(q.earliest_above(None, &mut w), Some(at(5)));
        assert_eq!(q.cancel(TaskId(3), &mut w), Some(at(7)));
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(4)));
        q.check().unwrap();
    }

    /// Heaps grow as tasks register, keeping their queued timeouts.
    #[test]
    fn registration_grows_a_level() {
        let mut q = PriorityTimeouts::with_capacity(100);
        let mut w = Work::default();
        for t in 0..100 {
            assert!(q.register(TaskId(t), Priority(3)));
            q.arm(TaskId(t), at(1000 - t as u64), &mut w);
        }
        assert!(!q.register(TaskId(5), Priority(3)), "registered twice");
        assert!(!q.register(TaskId(100), Priority(3)), "beyond capacity");
        assert_eq!(q.expired_above(at(901), None, &mut w), Some(TaskId(99)));
        assert_eq!(q.timeout(TaskId(0)), Some(at(1000)));
        q.check().unwrap();
    }
}
