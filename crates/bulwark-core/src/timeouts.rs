//! A timer queue: each task has at most one pending timeout, kept in a min-heap ordered by
//! (time, arming order) so equal timeouts fire first-armed first.
//!
//! Invariant: a task is in the queue exactly when it has a pending timeout. Capacity is fixed.
//! Keys pack (time, arming order) into one `u128`, so ordering is the tuple's and a comparison
//! is a single wide compare.

use crate::heap::IndexedHeap;
use crate::{Instant, TaskId, Work};

/// A heap key ordering by `at`, then by `order`.
pub const fn order_key(at: Instant, order: u64) -> u128 {
    ((at.as_nanos() as u128) << 64) | order as u128
}

/// The time of a key made by [`order_key`].
pub const fn key_time(key: u128) -> Instant {
    Instant::from_nanos((key >> 64) as u64)
}

/// Pending timeouts of a set of tasks, earliest first.
#[derive(Clone, Debug)]
pub struct TimeoutQueue {
    heap: IndexedHeap<u128>,
    armed: u64,
}

impl TimeoutQueue {
    /// An empty queue for task ids `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        TimeoutQueue {
            heap: IndexedHeap::with_capacity(capacity),
            armed: 0,
        }
    }

    /// Arms (or re-arms) `task`'s timeout at `at`.
    pub fn arm(&mut self, task: TaskId, at: Instant, work: &mut Work) -> bool {
        self.armed += 1;
        work.heap_operations += 1;
        self.heap.upsert(task, order_key(at, self.armed))
    }

    /// Cancels `task`'s timeout; returns when it was due.
    pub fn cancel(&mut self, task: TaskId, work: &mut Work) -> Option<Instant> {
        let key = self.heap.remove(task)?;
        work.heap_operations += 1;
        Some(key_time(key))
    }

    /// The earliest pending timeout. Counts as one timeout examined.
    #[inline]
    pub fn earliest(&self, work: &mut Work) -> Option<(TaskId, Instant)> {
        work.timeouts_examined += 1;
        self.heap.peek().map(|(t, k)| (t, key_time(k)))
    }

    /// Removes and returns the earliest timeout if it is due at or before `now`.
    #[inline]
    pub fn pop_expired(&mut self, now: Instant, work: &mut Work) -> Option<(TaskId, Instant)> {
        let (task, at) = self.earliest(work)?;
        if at > now {
            return None;
        }
        self.heap.pop();
        work.heap_operations += 1;
        work.timeouts_processed += 1;
        Some((task, at))
    }

    /// When `task`'s timeout is due, if it has one.
    pub fn timeout(&self, task: TaskId) -> Option<Instant> {
        self.heap.key(task).map(key_time)
    }

    /// True when `task` has a pending timeout.
    pub fn contains(&self, task: TaskId) -> bool {
        self.heap.contains(task)
    }

    /// Checks the heap invariants.
    pub fn check(&self) -> Result<(), &'static str> {
        self.heap.check()
    }
}
