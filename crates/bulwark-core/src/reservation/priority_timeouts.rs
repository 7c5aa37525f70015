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
//! A task's place in these heaps, its [`TimerSlot`], is handed out at registration and kept by
//! the caller in its own per-task record (intrusive, like the run queue's links), so arming or
//! cancelling a task's timeout reads no table indexed by task. A heap entry carries its task's
//! id beside the slot index, so the sweep learns the task from the top entry it reads already:
//! no second table is chased on the way from an expired timeout to its task's record.
//!
//! Invariants (checked by [`PriorityTimeouts::check`]): a level's bit is set exactly when its
//! heap is non-empty; every registered task has one slot, in the heap of its own level.

use alloc::vec::Vec;

use crate::bitmap::PriorityBitmap;
use crate::heap::{IndexedHeap, Member};
use crate::timeouts::{key_time, order_key};
use crate::{Instant, Priority, TaskId, Work};

const NO_HEAP: u16 = u16::MAX;

/// A registered task's level, its index inside that level's heap, and the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerSlot {
    priority: Priority,
    entry: Entry,
}

/// What a level's heap holds per timeout: the task's index inside the level (which the heap
/// indexes its positions by) and the task itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    local: u32,
    task: TaskId,
}

impl Member for Entry {
    fn index(self) -> usize {
        self.local as usize
    }
}

/// Per-priority timeout heaps.
#[derive(Clone, Debug)]
pub struct PriorityTimeouts {
    /// How many tasks each heap has registered: the next task's index inside it.
    registered: Vec<u32>,
    heaps: Vec<IndexedHeap<u128, Entry>>,
    heap_of_level: [u16; Priority::LEVELS],
    nonempty: PriorityBitmap,
    armed: u64,
}

impl Default for PriorityTimeouts {
    fn default() -> Self {
        Self::new()
    }
}

impl PriorityTimeouts {
    /// No task registered.
    pub fn new() -> Self {
        PriorityTimeouts {
            registered: Vec::new(),
            heaps: Vec::new(),
            heap_of_level: [NO_HEAP; Priority::LEVELS],
            nonempty: PriorityBitmap::default(),
            armed: 0,
        }
    }

    /// Registers `task` at `priority` (configuration time: may allocate) and returns its slot.
    /// Registering a task twice gives it two slots: the caller registers each task once.
    pub fn register(&mut self, task: TaskId, priority: Priority) -> TimerSlot {
        let level = priority.0 as usize;
        if self.heap_of_level[level] == NO_HEAP {
            self.heap_of_level[level] = self.heaps.len() as u16;
            self.heaps.push(IndexedHeap::with_capacity(4));
            self.registered.push(0);
        }
        let h = self.heap_of_level[level] as usize;
        let local = self.registered[h];
        self.registered[h] += 1;
        if local as usize >= self.heaps[h].capacity() {
            // Grow by doubling, keeping whatever is queued.
            let mut bigger = IndexedHeap::with_capacity(2 * self.heaps[h].capacity());
            while let Some((m, k)) = self.heaps[h].pop() {
                bigger.upsert(m, k);
            }
            self.heaps[h] = bigger;
        }
        TimerSlot {
            priority,
            entry: Entry { local, task },
        }
    }

    fn heap(&self, slot: TimerSlot) -> usize {
        self.heap_of_level[slot.priority.0 as usize] as usize
    }

    /// Arms (or moves) the timeout of the task in `slot` to `at`. False if `slot` was not
    /// handed out by this queue.
    pub fn arm(&mut self, slot: TimerSlot, at: Instant, work: &mut Work) -> bool {
        let h = self.heap(slot);
        let Some(heap) = self.heaps.get_mut(h) else {
            return false;
        };
        self.armed += 1;
        work.heap_operations += 1;
        if !heap.upsert(slot.entry, order_key(at, self.armed)) {
            return false;
        }
        self.nonempty.set(slot.priority);
        true
    }

    /// Cancels the timeout of the task in `slot`; returns when it was due.
    pub fn cancel(&mut self, slot: TimerSlot, work: &mut Work) -> Option<Instant> {
        let h = self.heap(slot);
        let heap = self.heaps.get_mut(h)?;
        let key = heap.remove(slot.entry)?;
        work.heap_operations += 1;
        if heap.is_empty() {
            self.nonempty.clear(slot.priority);
        }
        Some(key_time(key))
    }

    /// When the timeout of the task in `slot` is due, if it has one.
    pub fn timeout(&self, slot: TimerSlot) -> Option<Instant> {
        self.heaps
            .get(self.heap(slot))?
            .key(slot.entry)
            .map(key_time)
    }

    /// The task registered in `slot`, if this queue handed the slot out.
    pub fn task_of(&self, slot: TimerSlot) -> Option<TaskId> {
        let registered = *self.registered.get(self.heap(slot))?;
        (slot.entry.local < registered).then_some(slot.entry.task)
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
            let (entry, at) = self.top(p, work)?;
            if at <= now {
                return Some(entry.task);
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

    fn top(&self, p: Priority, work: &mut Work) -> Option<(Entry, Instant)> {
        work.timeouts_examined += 1;
        let h = self.heap_of_level[p.0 as usize] as usize;
        self.heaps
            .get(h)?
            .peek()
            .map(|(entry, key)| (entry, key_time(key)))
    }

    /// True when the task in `slot` has a pending timeout.
    pub fn contains(&self, slot: TimerSlot) -> bool {
        self.timeout(slot).is_some()
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
            if heap.capacity() < self.registered[h] as usize {
                return Err("every registered task has a slot in the heap of its own level");
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
        let mut q = PriorityTimeouts::new();
        let tasks = [(0, max), (1, hi), (2, mid), (3, mid), (4, lo)];
        let slots: Vec<TimerSlot> = tasks
            .iter()
            .map(|&(t, p)| q.register(TaskId(t), p))
            .collect();
        for (slot, (t, _)) in slots.iter().zip(tasks) {
            assert_eq!(q.task_of(*slot), Some(TaskId(t)));
        }
        let mut w = Work::default();
        q.arm(slots[4], at(5), &mut w); // l1: expired
        q.arm(slots[3], at(7), &mut w); // m3: expired
        q.arm(slots[1], at(12), &mut w); // h1
        q.arm(slots[0], at(15), &mut w); // max
        let now = at(10);
        let mut w = Work::default();
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(3)));
        assert_eq!(w.timeouts_examined, 3, "max, hi, then mid's top");
        assert_eq!(q.expired_above(now, Some(mid), &mut w), None);
        assert_eq!(q.expired_above(now, Some(lo), &mut w), Some(TaskId(3)));
        assert_eq!(q.earliest_above(Some(mid), &mut w), Some(at(12)));
        assert_eq!(q.earliest_above(Some(hi), &mut w), Some(at(15)));
        assert_eq!(q.earliest_above(None, &mut w), Some(at(5)));
        assert_eq!(q.cancel(slots[3], &mut w), Some(at(7)));
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(4)));
        q.check().unwrap();
    }

    /// Heaps grow as tasks register, keeping their queued timeouts.
    #[test]
    fn registration_grows_a_level() {
        let mut q = PriorityTimeouts::new();
        let mut w = Work::default();
        let mut slots = Vec::new();
        for t in 0..100 {
            let slot = q.register(TaskId(t), Priority(3));
            q.arm(slot, at(1000 - t as u64), &mut w);
            slots.push(slot);
        }
        assert_eq!(q.expired_above(at(901), None, &mut w), Some(TaskId(99)));
        assert_eq!(q.timeout(slots[0]), Some(at(1000)));
        q.check().unwrap();
    }
}
