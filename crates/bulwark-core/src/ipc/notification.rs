//! The notification manager of a PIP CPI (CAmkES paper, section 4.2): the threads waiting for
//! the CPI's lock, so that the one serving the highest-priority request gets it first, and
//! among equal priorities the one that waited first.
//!
//! One notification object per pool thread, so a thread's object is its pool index. The
//! waiters are a max-heap by request priority with ties broken by a 64-bit insertion counter
//! (the paper's footnote 6: it cannot overflow in practice). `nest` raises a waiter's
//! priority in place and sifts it up.
//!
//! Invariants (checked by [`NotificationManager::check`]): a thread is in the heap at most
//! once, with the requestor it waits for; the heap's order is (priority descending,
//! insertion ascending); the counter exceeds every key's insertion number.

use alloc::vec;
use alloc::vec::Vec;

use super::Request;
use crate::heap::IndexedHeap;
use crate::{Priority, TaskId, Work};

/// Why the notification manager refused a call; a refused call changed nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NotifyError {
    /// The thread index is beyond the pool.
    UnknownThread,
    /// The thread is already waiting.
    AlreadyWaiting,
}

/// A waiter woken by [`NotificationManager::signal`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Waiter {
    /// The pool thread that waited.
    pub thread: u32,
    /// The request it serves, with the priority it has now (raised by `nest` perhaps).
    pub request: Request,
}

/// The priority-ordered waiters of one CPI.
#[derive(Clone, Debug)]
pub struct NotificationManager {
    heap: IndexedHeap<u128, u32>,
    /// The requestor each waiting thread serves.
    requestor: Vec<Option<TaskId>>,
    inserted: u64,
}

/// Max-heap order in a min-heap: higher priority first, then earlier insertion.
fn key(priority: Priority, order: u64) -> u128 {
    ((u8::MAX - priority.0) as u128) << 64 | order as u128
}

fn priority_of(key: u128) -> Priority {
    Priority(u8::MAX - (key >> 64) as u8)
}

fn order_of(key: u128) -> u64 {
    key as u64
}

impl NotificationManager {
    /// A manager for a pool of `threads` threads (one notification object each).
    pub fn with_threads(threads: usize) -> Self {
        NotificationManager {
            heap: IndexedHeap::with_capacity(threads),
            requestor: vec![None; threads],
            inserted: 0,
        }
    }

    /// The number of waiting threads.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nobody waits.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// `wait`: `thread` waits for the lock on behalf of `request` (its notification object
    /// is inserted with the next insertion number).
    pub fn wait(
        &mut self,
        thread: u32,
        request: Request,
        work: &mut Work,
    ) -> Result<(), NotifyError> {
        match self.requestor.get(thread as usize) {
            None => return Err(NotifyError::UnknownThread),
            Some(Some(_)) => return Err(NotifyError::AlreadyWaiting),
            Some(None) => {}
        }
        self.heap
            .upsert(thread, key(request.priority, self.inserted));
        self.inserted += 1;
        self.requestor[thread as usize] = Some(request.requestor);
        work.heap_operations += 1;
        Ok(())
    }

    /// `signal` (State Wake) and the woken thread's pop (steps 7-8): the head, removed.
    pub fn signal(&mut self, work: &mut Work) -> Option<Waiter> {
        let (thread, k) = self.heap.pop()?;
        work.heap_operations += 1;
        let requestor = self.requestor[thread as usize].take()?;
        Some(Waiter {
            thread,
            request: Request {
                priority: priority_of(k),
                requestor,
            },
        })
    }

    /// The head without removing it.
    pub fn peek(&self) -> Option<Waiter> {
        let (thread, k) = self.heap.peek()?;
        Some(Waiter {
            thread,
            request: Request {
                priority: priority_of(k),
                requestor: self.requestor[thread as usize]?,
            },
        })
    }

    /// `nest`, step 25 for a waiter: the thread waiting on behalf of `requestor` gets
    /// `priority` if that is higher, keeping its insertion number, and is sifted up. Returns
    /// false if no thread waits for `requestor`. A scan of the pool: bounded by its size,
    /// which is fixed at configuration.
    pub fn raise(&mut self, requestor: TaskId, priority: Priority, work: &mut Work) -> bool {
        let found = self.requestor.iter().position(|r| *r == Some(requestor));
        // The scan is work too: every pool entry it examined.
        work.queue_entries_moved += found.map_or(self.requestor.len(), |at| at + 1) as u32;
        let Some(thread) = found else {
            return false;
        };
        let thread = thread as u32;
        if let Some(k) = self.heap.key(thread) {
            if priority > priority_of(k) {
                self.heap.upsert(thread, key(priority, order_of(k)));
                work.heap_operations += 1;
            }
        }
        true
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        self.heap.check()?;
        for (thread, requestor) in self.requestor.iter().enumerate() {
            let queued = self.heap.key(thread as u32);
            if queued.is_some() != requestor.is_some() {
                return Err("a thread waits in the heap exactly when it has a requestor");
            }
            if queued.is_some_and(|k| order_of(k) >= self.inserted) {
                return Err("insertion numbers are below the counter");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::req;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    #[test]
    fn highest_priority_first_then_first_come() {
        let mut m = NotificationManager::with_threads(4);
        let mut w = Work::default();
        m.wait(0, req(5, 10), &mut w).unwrap();
        m.wait(1, req(9, 11), &mut w).unwrap();
        m.wait(2, req(5, 12), &mut w).unwrap();
        m.wait(3, req(9, 13), &mut w).unwrap();
        assert_eq!(
            m.wait(3, req(1, 14), &mut w),
            Err(NotifyError::AlreadyWaiting)
        );
        assert_eq!(
            m.wait(4, req(1, 14), &mut w),
            Err(NotifyError::UnknownThread)
        );
        let order: Vec<u32> = core::iter::from_fn(|| m.signal(&mut w).map(|x| x.thread)).collect();
        assert_eq!(order, [1, 3, 0, 2]);
        m.check().unwrap();
    }

    /// nest raises a waiter above its equals of the new priority only if it waited first.
    #[test]
    fn raising_keeps_the_insertion_order() {
        let mut m = NotificationManager::with_threads(3);
        let mut w = Work::default();
        m.wait(0, req(7, 10), &mut w).unwrap();
        m.wait(1, req(3, 11), &mut w).unwrap();
        m.wait(2, req(7, 12), &mut w).unwrap();
        let mut w = Work::default();
        assert!(m.raise(TaskId(11), Priority(7), &mut w));
        // The scan examined threads 0 and 1; the raise is one heap operation.
        assert_eq!((w.queue_entries_moved, w.heap_operations), (2, 1));
        let mut w = Work::default();
        assert!(!m.raise(TaskId(99), Priority(7), &mut w));
        assert_eq!(
            w.queue_entries_moved, 3,
            "not waiting: the whole pool of 3 was scanned"
        );
        // Thread 1 now has priority 7 and inserted second: 0, 1, 2.
        let order: Vec<(u32, u8)> = core::iter::from_fn(|| m.signal(&mut w))
            .map(|x| (x.thread, x.request.priority.0))
            .collect();
        assert_eq!(order, [(0, 7), (1, 7), (2, 7)]);
        // A lower priority never lowers a waiter.
        m.wait(0, req(6, 10), &mut w).unwrap();
        m.raise(TaskId(10), Priority(2), &mut w);
        assert_eq!(m.peek().unwrap().request.priority, Priority(6));
    }

    proptest! {
        /// The manager always pops the maximum priority, and the earliest insertion among
        /// equals, against a reference that scans a list.
        #[test]
        fn always_pops_max_priority_earliest_insertion(
            ops in proptest::collection::vec((0u8..4, 0u32..6, 0u8..8), 1..200)
        ) {
            let mut m = NotificationManager::with_threads(6);
            let mut w = Work::default();
            // (thread, priority, order, requestor)
            let mut model: Vec<(u32, u8, u64, u32)> = Vec::new();
            let mut order = 0u64;
            for (op, thread, priority) in ops {
                match op {
                    0 | 1 => {
                        let r = req(priority, 100 + thread);
                        let ok = m.wait(thread, r, &mut w).is_ok();
                        prop_assert_eq!(ok, !model.iter().any(|x| x.0 == thread));
                        if ok { model.push((thread, priority, order, 100 + thread)); order += 1; }
                    }
                    2 => {
                        let expect = model.iter().copied()
                            .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)));
                        let got = m.signal(&mut w);
                        prop_assert_eq!(got.map(|x| (x.thread, x.request.priority.0)), expect.map(|x| (x.0, x.1)));
                        if let Some(e) = expect { model.retain(|x| x.0 != e.0); }
                    }
                    _ => {
                        m.raise(TaskId(100 + thread), Priority(priority), &mut w);
                        if let Some(x) = model.iter_mut().find(|x| x.3 == 100 + thread) {
                            x.1 = x.1.max(priority);
                        }
                    }
                }
                prop_assert!(m.check().is_ok());
            }
        }
    }
}
