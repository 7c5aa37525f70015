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
//! The layout keeps what one invocation reads in few cache lines, whatever the number of
//! tasks:
//! - a task's place in the heaps, its [`TimerSlot`] (its level and its position in that
//!   level's heap), lives in the caller's own per-task record ([`TimerLinked`]; intrusive, like
//!   the run queue's links), and the heap keeps it current as entries move;
//! - the per-level table (where a level's heap lies, its length, and a copy of its top entry)
//!   is inline, so the sweep reads the tops without touching the heaps;
//! - all levels' heaps share one array, a region per level sized at registration.
//!
//! So arming or cancelling a task's timeout reads no table indexed by task, the sweep reads
//! none at all, and cancelling the last entry of a heap (the only one, for a level of one
//! task) writes only the task's record and the level's line.
//!
//! Invariants (checked by [`PriorityTimeouts::check`]): a level's bit is set exactly when its
//! heap is non-empty; a non-empty heap's cached top is its first entry; every entry's task
//! records that entry's level and position; every registered task's slot names its own level.

use alloc::vec::Vec;

use crate::bitmap::PriorityBitmap;
use crate::timeouts::{key_time, order_key};
use crate::{Instant, Priority, TaskId, Work};

/// The position of a task that has no timeout.
const NONE: u32 = u32::MAX;

/// Children per heap entry (as [`crate::heap`]: half the depth of a binary heap).
const ARITY: usize = 4;

/// A task's place in the timer heaps, kept in the caller's record: its level and, while it has
/// a timeout, the position of its entry in that level's heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerSlot {
    position: u32,
    priority: Priority,
    registered: bool,
}

impl TimerSlot {
    /// The slot of a task not registered.
    pub const UNREGISTERED: TimerSlot = TimerSlot {
        position: NONE,
        priority: Priority::MIN,
        registered: false,
    };

    /// True when the task has a pending timeout.
    pub fn is_armed(&self) -> bool {
        self.position != NONE
    }

    /// True when the task is registered at `priority`.
    pub fn is_registered_at(&self, priority: Priority) -> bool {
        self.registered && self.priority == priority
    }
}

/// A per-task record that holds its task's [`TimerSlot`], indexed by task id.
pub trait TimerLinked {
    /// The record's timer slot.
    fn timer(&self) -> &TimerSlot;
    /// The record's timer slot, to change.
    fn timer_mut(&mut self) -> &mut TimerSlot;
}

/// A heap entry: the timeout's key ([`order_key`]) and its task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cell {
    key: u128,
    task: u32,
}

/// One level's heap: its region `cells[base..base + capacity]`, of which the first `len` are
/// the heap, and a copy of its top entry's time and task (valid while `len > 0`).
#[derive(Clone, Copy, Debug)]
struct Level {
    top_at: Instant,
    top_task: u32,
    base: u32,
    len: u32,
    capacity: u32,
    registered: u32,
}

impl Level {
    const EMPTY: Level = Level {
        top_at: Instant::NEVER,
        top_task: NONE,
        base: 0,
        len: 0,
        capacity: 0,
        registered: 0,
    };
}

/// Per-priority timeout heaps over records that hold their [`TimerSlot`]s.
///
/// Starts a cache line (`repr(C)`, aligned), which the bitmap the sweeps read and the arm
/// counter share; the heaps' array and the per-level table follow.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct PriorityTimeouts {
    nonempty: PriorityBitmap,
    armed: u64,
    /// Every level's heap region, one after another (a level's region is placed at its first
    /// registration and grows by doubling, moving the regions after it).
    cells: Vec<Cell>,
    levels: [Level; Priority::LEVELS],
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
            nonempty: PriorityBitmap::default(),
            armed: 0,
            cells: Vec::new(),
            levels: [Level::EMPTY; Priority::LEVELS],
        }
    }

    /// Registers `task` at `priority` (configuration time: may allocate), setting its record's
    /// slot. Registering a task again changes nothing.
    pub fn register<R: TimerLinked>(
        &mut self,
        records: &mut [R],
        task: TaskId,
        priority: Priority,
    ) {
        let Some(record) = records.get_mut(task.index()) else {
            return;
        };
        if record.timer().registered {
            return;
        }
        let l = priority.0 as usize;
        if self.levels[l].capacity == 0 {
            self.levels[l].base = self.cells.len() as u32;
        }
        let level = self.levels[l];
        if level.registered == level.capacity {
            // Grow the region by doubling, keeping what is queued; positions are relative to
            // the region, so the records need no change.
            let extra = level.capacity.max(4);
            let end = (level.base + level.capacity) as usize;
            let filler = Cell { key: 0, task: NONE };
            self.cells
                .splice(end..end, core::iter::repeat_n(filler, extra as usize));
            for other in self.levels.iter_mut() {
                if other.capacity > 0 && other.base as usize >= end {
                    other.base += extra;
                }
            }
            self.levels[l].capacity += extra;
        }
        self.levels[l].registered += 1;
        *record.timer_mut() = TimerSlot {
            position: NONE,
            priority,
            registered: true,
        };
    }

    /// Arms (or moves) `task`'s timeout to `at`. False if the task is not registered.
    pub fn arm<R: TimerLinked>(
        &mut self,
        records: &mut [R],
        task: TaskId,
        at: Instant,
        work: &mut Work,
    ) -> bool {
        let Some(&slot) = records.get(task.index()).map(|r| r.timer()) else {
            return false;
        };
        if !slot.registered {
            return false;
        }
        self.armed += 1;
        work.heap_operations += 1;
        let key = order_key(at, self.armed);
        let l = slot.priority.0 as usize;
        if slot.position == NONE {
            let at = self.levels[l].len as usize;
            self.levels[l].len += 1;
            self.sift_up(records, l, at, Cell { key, task: task.0 });
            self.nonempty.set(slot.priority);
        } else {
            let at = slot.position as usize;
            let base = self.levels[l].base as usize;
            let old = self.cells[base + at].key;
            let cell = Cell { key, task: task.0 };
            if key < old {
                self.sift_up(records, l, at, cell);
            } else {
                self.sift_down(records, l, at, cell);
            }
        }
        true
    }

    /// Cancels `task`'s timeout; returns when it was due.
    pub fn cancel<R: TimerLinked>(
        &mut self,
        records: &mut [R],
        task: TaskId,
        work: &mut Work,
    ) -> Option<Instant> {
        let slot = *records.get(task.index())?.timer();
        if slot.position == NONE {
            return None;
        }
        work.heap_operations += 1;
        let l = slot.priority.0 as usize;
        let at = slot.position as usize;
        records[task.index()].timer_mut().position = NONE;
        let level = &mut self.levels[l];
        level.len -= 1;
        let len = level.len as usize;
        let base = level.base as usize;
        let due = if at == 0 {
            level.top_at
        } else {
            key_time(self.cells[base + at].key)
        };
        if len == 0 {
            self.nonempty.clear(slot.priority);
        } else if at != len {
            self.fill(records, l, at, len);
        }
        Some(due)
    }

    /// When `task`'s timeout is due, if it has one.
    pub fn timeout<R: TimerLinked>(&self, records: &[R], task: TaskId) -> Option<Instant> {
        let slot = records.get(task.index())?.timer();
        if slot.position == NONE {
            return None;
        }
        let level = &self.levels[slot.priority.0 as usize];
        let cell = self.cells.get((level.base + slot.position) as usize)?;
        Some(key_time(cell.key))
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
            let (task, at) = self.top(p, work);
            if at <= now {
                return Some(task);
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
            let (_, at) = self.top(p, work);
            earliest = Some(earliest.map_or(at, |e| e.min(at)));
            level = self.nonempty.highest_below(p);
        }
        earliest
    }

    /// The top of non-empty level `p`, from the level's own line.
    fn top(&self, p: Priority, work: &mut Work) -> (TaskId, Instant) {
        work.timeouts_examined += 1;
        let level = &self.levels[p.0 as usize];
        (TaskId(level.top_task), level.top_at)
    }

    /// Writes `cell` at position `at` of level `l`'s heap and records the position in its
    /// task's slot (and, at the top, in the level's copy).
    fn place<R: TimerLinked>(&mut self, records: &mut [R], l: usize, at: usize, cell: Cell) {
        let level = &mut self.levels[l];
        if at == 0 {
            level.top_at = key_time(cell.key);
            level.top_task = cell.task;
        }
        self.cells[level.base as usize + at] = cell;
        records[cell.task as usize].timer_mut().position = at as u32;
    }

    /// Moves `cell`, whose place is `at` (empty or its old one), up to where it belongs; each
    /// level costs one entry write (the "hole" technique), not a swap.
    fn sift_up<R: TimerLinked>(&mut self, records: &mut [R], l: usize, mut at: usize, cell: Cell) {
        let base = self.levels[l].base as usize;
        while at > 0 {
            let parent = (at - 1) / ARITY;
            let above = self.cells[base + parent];
            if cell.key >= above.key {
                break;
            }
            self.place(records, l, at, above);
            at = parent;
        }
        self.place(records, l, at, cell);
    }

    /// Moves `cell`, whose place is `at`, down to where it belongs.
    fn sift_down<R: TimerLinked>(
        &mut self,
        records: &mut [R],
        l: usize,
        mut at: usize,
        cell: Cell,
    ) {
        let len = self.levels[l].len as usize;
        while let Some(child) = self.smaller_child(l, at, len) {
            let below = self.cells[self.levels[l].base as usize + child];
            if below.key >= cell.key {
                break;
            }
            self.place(records, l, at, below);
            at = child;
        }
        self.place(records, l, at, cell);
    }

    /// Closes the hole at `at` of level `l`'s heap, now `len` long, with its former last entry
    /// (at `len`), by Floyd's bottom-up removal as in [`crate::heap`]: the hole sinks along
    /// the smallest children to a leaf, then the last entry fills it and rises as far as it
    /// must.
    fn fill<R: TimerLinked>(&mut self, records: &mut [R], l: usize, at: usize, len: usize) {
        let base = self.levels[l].base as usize;
        let last = self.cells[base + len];
        let mut hole = at;
        while let Some(child) = self.smaller_child(l, hole, len) {
            let below = self.cells[base + child];
            self.place(records, l, hole, below);
            hole = child;
        }
        self.sift_up(records, l, hole, last);
    }

    /// The child of `at` with the least key among the first `len` entries of level `l`'s
    /// heap, if it has one (the first of equal keys).
    #[inline]
    fn smaller_child(&self, l: usize, at: usize, len: usize) -> Option<usize> {
        let first = ARITY * at + 1;
        if first >= len {
            return None;
        }
        let base = self.levels[l].base as usize;
        if first + ARITY <= len {
            // All four children exist: a tournament of three comparisons.
            let four = &self.cells[base + first..base + first + ARITY];
            let left = if four[1].key < four[0].key { 1 } else { 0 };
            let right = if four[3].key < four[2].key { 3 } else { 2 };
            let least = if four[right].key < four[left].key {
                right
            } else {
                left
            };
            return Some(first + least);
        }
        let mut least = first;
        for child in first + 1..len {
            if self.cells[base + child].key < self.cells[base + least].key {
                least = child;
            }
        }
        Some(least)
    }

    /// Checks the invariants stated at the top of this module, against the records.
    pub fn check<R: TimerLinked>(&self, records: &[R]) -> Result<(), &'static str> {
        self.nonempty.check()?;
        let mut regions: Vec<(u32, u32)> = Vec::new();
        let mut queued = 0usize;
        for (l, level) in self.levels.iter().enumerate() {
            let p = Priority(l as u8);
            if (level.len > 0) != self.nonempty.contains(p) {
                return Err("a timer level is marked exactly when its heap is non-empty");
            }
            if level.len > level.registered || level.registered > level.capacity {
                return Err("a timer heap holds at most its registered tasks, within its region");
            }
            if level.capacity > 0 {
                regions.push((level.base, level.capacity));
            }
            let base = level.base as usize;
            for i in 0..level.len as usize {
                let cell = self.cells[base + i];
                let Some(record) = records.get(cell.task as usize) else {
                    return Err("a timer entry's task is beyond the records");
                };
                let slot = record.timer();
                if slot.priority != p || slot.position != i as u32 || !slot.registered {
                    return Err("a timer entry's task records its level and position");
                }
                for child in ARITY * i + 1..=ARITY * i + ARITY {
                    if child < level.len as usize && self.cells[base + child].key < cell.key {
                        return Err("timer heap property broken");
                    }
                }
                if i == 0 && (level.top_task != cell.task || level.top_at != key_time(cell.key)) {
                    return Err("a timer level's copy of its top is its first entry");
                }
            }
            queued += level.len as usize;
        }
        regions.sort_unstable();
        let mut end = 0;
        for (base, capacity) in regions {
            if base != end {
                return Err("the timer levels' regions tile the entries");
            }
            end = base + capacity;
        }
        if end as usize != self.cells.len() {
            return Err("the timer levels' regions tile the entries");
        }
        if records.iter().filter(|r| r.timer().is_armed()).count() != queued {
            return Err("every task with a timer position is in its level's heap");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn at(n: u64) -> Instant {
        Instant::from_nanos(n)
    }

    /// The layout the type's docs promise, and SPR's layout test counts on: the bitmap and the
    /// counter in an aligned line, the array after them, then 32 bytes a level from byte 72.
    #[test]
    fn the_per_level_table_follows_one_line() {
        use core::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<PriorityTimeouts>(), 64);
        assert!(offset_of!(PriorityTimeouts, nonempty) + size_of::<PriorityBitmap>() <= 64);
        assert!(offset_of!(PriorityTimeouts, armed) + size_of::<u64>() <= 64);
        assert!(offset_of!(PriorityTimeouts, levels) <= 72);
        assert_eq!(size_of::<Level>(), 32);
    }

    impl TimerLinked for TimerSlot {
        fn timer(&self) -> &TimerSlot {
            self
        }
        fn timer_mut(&mut self) -> &mut TimerSlot {
            self
        }
    }

    /// Fig. 7: l1 and m3 have expired, h1 and max have not. The sweep from the top skips h1
    /// and max (not due) and picks m3, never l1; above m3's level nothing is due.
    #[test]
    fn the_sweep_finds_the_most_important_expired_timeout() {
        let (max, hi, mid, lo) = (Priority(40), Priority(30), Priority(20), Priority(10));
        let mut q = PriorityTimeouts::new();
        let mut slots = vec![TimerSlot::UNREGISTERED; 5];
        let tasks = [(0, max), (1, hi), (2, mid), (3, mid), (4, lo)];
        for &(t, p) in &tasks {
            q.register(&mut slots, TaskId(t), p);
        }
        let mut w = Work::default();
        q.arm(&mut slots, TaskId(4), at(5), &mut w); // l1: expired
        q.arm(&mut slots, TaskId(3), at(7), &mut w); // m3: expired
        q.arm(&mut slots, TaskId(1), at(12), &mut w); // h1
        q.arm(&mut slots, TaskId(0), at(15), &mut w); // max
        let now = at(10);
        let mut w = Work::default();
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(3)));
        assert_eq!(w.timeouts_examined, 3, "max, hi, then mid's top");
        assert_eq!(q.expired_above(now, Some(mid), &mut w), None);
        assert_eq!(q.expired_above(now, Some(lo), &mut w), Some(TaskId(3)));
        assert_eq!(q.earliest_above(Some(mid), &mut w), Some(at(12)));
        assert_eq!(q.earliest_above(Some(hi), &mut w), Some(at(15)));
        assert_eq!(q.earliest_above(None, &mut w), Some(at(5)));
        assert_eq!(q.cancel(&mut slots, TaskId(3), &mut w), Some(at(7)));
        assert_eq!(q.cancel(&mut slots, TaskId(3), &mut w), None);
        assert_eq!(q.expired_above(now, None, &mut w), Some(TaskId(4)));
        q.check(&slots).unwrap();
    }

    /// Regions grow as tasks register, keeping their queued timeouts, and so do the regions
    /// placed after them.
    #[test]
    fn registration_grows_a_level() {
        let mut q = PriorityTimeouts::new();
        let mut w = Work::default();
        let mut slots = vec![TimerSlot::UNREGISTERED; 201];
        q.register(&mut slots, TaskId(200), Priority(3));
        q.arm(&mut slots, TaskId(200), at(2000), &mut w);
        for t in 0..100 {
            q.register(&mut slots, TaskId(t), Priority(5));
            q.arm(&mut slots, TaskId(t), at(1000 - t as u64), &mut w);
            q.register(&mut slots, TaskId(100 + t), Priority(3));
            q.arm(&mut slots, TaskId(100 + t), at(3000 + t as u64), &mut w);
            q.check(&slots).unwrap();
        }
        assert_eq!(q.expired_above(at(901), None, &mut w), Some(TaskId(99)));
        assert_eq!(q.timeout(&slots, TaskId(0)), Some(at(1000)));
        assert_eq!(q.earliest_above(Some(Priority(4)), &mut w), Some(at(901)));
        assert_eq!(q.cancel(&mut slots, TaskId(200), &mut w), Some(at(2000)));
        for t in 0..100 {
            q.cancel(&mut slots, TaskId(t), &mut w);
        }
        assert_eq!(q.expired_above(at(3000), None, &mut w), Some(TaskId(100)));
        q.check(&slots).unwrap();
    }

    proptest::proptest! {
        /// One level's heap agrees with a reference model (keys in arming order) after every
        /// arm and cancel, including the re-arming of queued tasks.
        #[test]
        fn a_level_matches_a_model(ops in proptest::collection::vec((0u32..40, 0u64..50, proptest::bool::ANY), 0..300)) {
            let mut q = PriorityTimeouts::new();
            let mut slots = vec![TimerSlot::UNREGISTERED; 40];
            for t in 0..40 {
                q.register(&mut slots, TaskId(t), Priority((t % 3) as u8));
            }
            let mut model: alloc::collections::BTreeMap<u32, (u64, u64)> = Default::default();
            let mut order = 0;
            let mut w = Work::default();
            for (t, time, arm) in ops {
                if arm {
                    order += 1;
                    proptest::prop_assert!(q.arm(&mut slots, TaskId(t), at(time), &mut w));
                    model.insert(t, (time, order));
                } else {
                    let expect = model.remove(&t).map(|(time, _)| at(time));
                    proptest::prop_assert_eq!(q.cancel(&mut slots, TaskId(t), &mut w), expect);
                }
                proptest::prop_assert!(q.check(&slots).is_ok(), "{:?}", q.check(&slots));
                // Every level is due at the end of time: the sweep answers with the top of the
                // highest non-empty level above the floor.
                for floor in [None, Some(0u32), Some(1)] {
                    let highest = (0..3u32).rev().filter(|&p| floor.is_none_or(|f| p > f)).find(|&p| model.keys().any(|t| t % 3 == p));
                    let expect = highest.and_then(|p| {
                        model.iter().filter(|(t, _)| *t % 3 == p).min_by_key(|(_, k)| **k).map(|(t, _)| TaskId(*t))
                    });
                    let floor = floor.map(|f| Priority(f as u8));
                    proptest::prop_assert_eq!(q.expired_above(at(u64::MAX - 1), floor, &mut w), expect);
                }
                for t in 0..40 {
                    proptest::prop_assert_eq!(q.timeout(&slots, TaskId(t)), model.get(&t).map(|(time, _)| at(*time)));
                }
            }
        }
    }
}
