//! The list plugin: Blocked and Ready as sorted doubly-linked lists (`O(n^2)` time, `Θ(n)` space).
//!
//! Complexity (Table I): inserting into a sorted list walks it, `O(n)`; removing, reading the
//! first member and the next release are `O(1)`. One invocation may release up to `n`
//! processes, each inserted into Ready by a walk: `O(n^2)` time. Space is `Θ(n)`: two links and
//! a key per member, nothing per time instant. Keys are stored whole, so this plugin has no
//! horizon of its own (the scheduler's horizon still bounds the periods it accepts).
//!
//! Invariants (checked by [`VbsQueue::check`]):
//! - Blocked is sorted by release time, Ready by (deadline, release time); equal keys keep
//!   insertion order, except that `requeue_front` goes ahead of its equals;
//! - a member is linked exactly when its place is `Blocked` or `Ready`, and sits in that list.
//!
//! Insertions walk from the tail (new releases usually have the latest keys); the front
//! requeue walks from the head (the preempted process usually has the earliest deadline).

use alloc::vec::Vec;

use super::{check_places, filled, vec_bytes, Key, Links, Place, VbsQueue, NIL};
use crate::{CoreError, Work};

/// Blocked and Ready as sorted intrusive doubly-linked lists.
#[derive(Clone, Debug)]
pub struct ListQueue {
    links: Links,
    keys: Vec<Key>,
    place: Vec<Place>,
    blocked: u32,
    ready: u32,
    base: u64,
    len: usize,
}

impl ListQueue {
    fn ready_order(key: Key) -> (u64, u64) {
        (key.deadline, key.release)
    }

    /// Links `m` after the last member of the list at `*head` whose order is not after `of`.
    fn insert_sorted<F: Fn(Key) -> (u64, u64)>(
        &mut self,
        list: Place,
        m: u32,
        of: F,
        work: &mut Work,
    ) {
        let mut head = match list {
            Place::Blocked => self.blocked,
            _ => self.ready,
        };
        let new = of(self.keys[m as usize]);
        let tail = self.links.tail(head);
        let mut at = tail;
        // Walk back over members ordered after the new one.
        while at != NIL {
            work.timeouts_examined += 1;
            if of(self.keys[at as usize]) <= new {
                break;
            }
            at = if at == head { NIL } else { self.links.prev(at) };
        }
        if at == NIL {
            self.links.push_front(&mut head, m);
        } else {
            // After `at`: before its successor (before the head means at the tail).
            self.links.insert_before(self.links.next(at), m);
        }
        match list {
            Place::Blocked => self.blocked = head,
            _ => self.ready = head,
        }
        self.place[m as usize] = list;
        work.queue_entries_moved += 1;
    }

    fn accepts(&self, member: u32) -> bool {
        (member as usize) < self.keys.len() && !self.links.is_linked(member)
    }

    fn check_sorted<F: Fn(Key) -> (u64, u64)>(
        &self,
        head: u32,
        place: Place,
        of: F,
    ) -> Result<usize, &'static str> {
        let len = self.links.check_list(head)?;
        let mut m = head;
        for i in 0..len {
            if self.place[m as usize] != place {
                return Err("a list holds a member placed elsewhere");
            }
            let n = self.links.next(m);
            if i + 1 < len && of(self.keys[m as usize]) > of(self.keys[n as usize]) {
                return Err("a list is out of order");
            }
            m = n;
        }
        Ok(len)
    }
}

impl VbsQueue for ListQueue {
    const NAME: &'static str = "list";
    const POLICY_NAME: &'static str = "vbs-list";
    const MAX_HORIZON_BITS: u32 = 32;

    fn new(capacity: usize, horizon_bits: u32) -> Result<Self, CoreError> {
        super::check_horizon(horizon_bits, Self::MAX_HORIZON_BITS)?;
        if capacity > NIL as usize {
            return Err(CoreError::InvalidParameter);
        }
        Ok(ListQueue {
            links: Links::new(capacity)?,
            keys: filled(capacity, Key::default())?,
            place: filled(capacity, Place::None)?,
            blocked: NIL,
            ready: NIL,
            base: 0,
            len: 0,
        })
    }

    fn memory_bytes_for(capacity: usize, _horizon_bits: u32) -> usize {
        core::mem::size_of::<Self>()
            + Links::bytes_for(capacity)
            + capacity * (core::mem::size_of::<Key>() + core::mem::size_of::<Place>())
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.links.heap_bytes()
            + vec_bytes(&self.keys)
            + vec_bytes(&self.place)
    }

    fn capacity(&self) -> usize {
        self.keys.len()
    }

    fn insert_blocked(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.keys[member as usize] = key;
        self.insert_sorted(Place::Blocked, member, |k| (k.release, 0), work);
        self.len += 1;
        true
    }

    fn requeue_front(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.keys[member as usize] = key;
        let new = Self::ready_order(key);
        // Before the first member not ordered before the requeued one.
        let mut at = self.ready;
        while at != NIL {
            work.timeouts_examined += 1;
            if Self::ready_order(self.keys[at as usize]) >= new {
                break;
            }
            at = self.links.next(at);
            if at == self.ready {
                at = NIL;
            }
        }
        if at == self.ready {
            let mut head = self.ready;
            self.links.push_front(&mut head, member);
            self.ready = head;
        } else if at == NIL {
            let mut head = self.ready;
            self.links.push_back(&mut head, member);
            self.ready = head;
        } else {
            self.links.insert_before(at, member);
        }
        self.place[member as usize] = Place::Ready;
        work.queue_entries_moved += 1;
        self.len += 1;
        true
    }

    fn remove(&mut self, member: u32, work: &mut Work) -> Option<Key> {
        if !self.links.is_linked(member) {
            return None;
        }
        let m = member as usize;
        match self.place[m] {
            Place::Blocked => self.links.unlink(&mut self.blocked, member),
            _ => self.links.unlink(&mut self.ready, member),
        }
        self.place[m] = Place::None;
        self.len -= 1;
        work.queue_entries_moved += 1;
        Some(self.keys[m])
    }

    fn release(&mut self, now: u64, work: &mut Work) {
        if now < self.base {
            return;
        }
        self.base = now;
        while self.blocked != NIL {
            let m = self.blocked;
            work.timeouts_examined += 1;
            if self.keys[m as usize].release > now {
                break;
            }
            self.links.unlink(&mut self.blocked, m);
            work.queue_entries_moved += 1;
            work.replenishments_processed += 1;
            self.insert_sorted(Place::Ready, m, Self::ready_order, work);
        }
    }

    fn earliest_ready(&self, work: &mut Work) -> Option<(u32, Key)> {
        work.timeouts_examined += 1;
        (self.ready != NIL).then(|| (self.ready, self.keys[self.ready as usize]))
    }

    fn next_release(&self, work: &mut Work) -> Option<u64> {
        work.timeouts_examined += 1;
        (self.blocked != NIL).then(|| self.keys[self.blocked as usize].release)
    }

    fn key(&self, member: u32) -> Option<Key> {
        self.links
            .is_linked(member)
            .then(|| self.keys[member as usize])
    }

    fn len(&self) -> usize {
        self.len
    }

    fn check(&self) -> Result<(), &'static str> {
        self.links.check()?;
        let blocked = self.check_sorted(self.blocked, Place::Blocked, |k| (k.release, 0))?;
        let ready = self.check_sorted(self.ready, Place::Ready, Self::ready_order)?;
        if blocked + ready != self.len || self.links.linked() != self.len {
            return Err("list lengths disagree with the linked members");
        }
        check_places(&self.links, &self.place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::vbs::queue::tests as suite;

    suite::conformance_tests!(ListQueue);

    /// Releasing k processes in reverse deadline order walks the whole Ready list each time:
    /// the quadratic cost of Table I shows in the work record.
    #[test]
    fn release_work_is_quadratic_in_the_worst_case() {
        let w = suite::reverse_deadline_release_work(ListQueue::new(64, 8).unwrap());
        // Each insertion walks over every member already in Ready.
        assert!(w.timeouts_examined >= 64 * 63 / 2, "{w:?}");
    }
}
