//! The array plugin: one FIFO queue per time slot (`O(log(t) + n log(t))` time, `Θ(t + n)` space).
//!
//! Complexity (Table I): Blocked is an array of `t` FIFO queues indexed by release time mod
//! `t`, Ready one of `t` FIFO queues indexed by deadline mod `t`. A hierarchical bitmap over
//! each array (64-way, `log_64(t)` levels) finds the first non-empty slot in circular order
//! in `O(log(t))`, and marks or clears a slot in `O(log(t))`. Linking and unlinking are
//! `O(1)`. An invocation finds the earliest deadline or release in `O(log(t))` and moves up
//! to `n` released processes, each `O(log(t))`: `O(log(t) + n log(t))`. Space: two arrays of
//! `t` list heads and their bitmaps, plus links and a key per member, `Θ(t + n)`.
//!
//! Invariants (checked by [`VbsQueue::check`]):
//! - a slot's bit is set (at every level of its bitmap) exactly when its queue is non-empty;
//! - a blocked member sits in the slot of its release, a ready member in the slot of its
//!   deadline, and its place says which;
//! - all members of a slot share the same absolute key (the horizon requirement): the
//!   circular scan from the last release instant (Blocked) or a quarter horizon before it
//!   (Ready) meets them in time order.
//!
//! Within a deadline slot, order is the order of entry into Ready: releases arrive in release
//! order and the preempted process is requeued at the front, which is the
//! (deadline, release, first-in) order the other plugins keep (see the parent module).

use alloc::vec::Vec;

use super::{check_places, filled, vec_bytes, Key, Links, Place, VbsQueue, NIL};
use crate::{CoreError, Work};

/// A 64-way hierarchical bitmap: level 0 has one bit per slot, each higher level one bit per
/// non-zero word below.
///
/// Invariant: a bit of level `k + 1` is set exactly when word of level `k` it stands for is
/// non-zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LevelBitmap {
    levels: Vec<Vec<u64>>,
}

impl LevelBitmap {
    /// Word counts of the levels for `bits` bits, lowest level first.
    fn level_words(bits: usize) -> impl Iterator<Item = usize> {
        let mut words = Some(bits.div_ceil(64).max(1));
        core::iter::from_fn(move || {
            let w = words?;
            words = (w > 1).then(|| w.div_ceil(64));
            Some(w)
        })
    }

    pub(crate) fn new(bits: usize) -> Result<Self, CoreError> {
        let mut levels = Vec::new();
        levels
            .try_reserve_exact(Self::level_words(bits).count())
            .map_err(|_| CoreError::InvalidParameter)?;
        for w in Self::level_words(bits) {
            levels.push(filled(w, 0u64)?);
        }
        Ok(LevelBitmap { levels })
    }

    pub(crate) fn bytes_for(bits: usize) -> usize {
        let words: usize = Self::level_words(bits).sum();
        words * 8 + Self::level_words(bits).count() * core::mem::size_of::<Vec<u64>>()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.levels) + self.levels.iter().map(vec_bytes).sum::<usize>()
    }

    pub(crate) fn set(&mut self, mut i: usize, work: &mut Work) {
        for level in &mut self.levels {
            work.timeouts_examined += 1;
            let word = &mut level[i / 64];
            let was_empty = *word == 0;
            *word |= 1 << (i % 64);
            if !was_empty {
                return;
            }
            i /= 64;
        }
    }

    pub(crate) fn clear(&mut self, mut i: usize, work: &mut Work) {
        for level in &mut self.levels {
            work.timeouts_examined += 1;
            let word = &mut level[i / 64];
            *word &= !(1 << (i % 64));
            if *word != 0 {
                return;
            }
            i /= 64;
        }
    }

    pub(crate) fn test(&self, i: usize) -> bool {
        self.levels[0][i / 64] & (1 << (i % 64)) != 0
    }

    /// The first set bit at or after `pos`, in `O(levels)`.
    fn successor(&self, mut pos: usize, work: &mut Work) -> Option<usize> {
        let mut level = 0;
        loop {
            let words = &self.levels[level];
            let w = pos / 64;
            let word = *words.get(w)?;
            work.timeouts_examined += 1;
            let masked = word & (!0u64 << (pos % 64));
            if masked != 0 {
                pos = w * 64 + masked.trailing_zeros() as usize;
                break;
            }
            level += 1;
            if level == self.levels.len() {
                return None;
            }
            pos = w + 1;
        }
        while level > 0 {
            level -= 1;
            work.timeouts_examined += 1;
            let word = self.levels[level][pos];
            pos = pos * 64 + word.trailing_zeros() as usize;
        }
        Some(pos)
    }

    /// The first set bit in circular order from `start`.
    pub(crate) fn first_circular(&self, start: usize, work: &mut Work) -> Option<usize> {
        self.successor(start, work)
            .or_else(|| self.successor(0, work))
    }

    pub(crate) fn check(&self) -> Result<(), &'static str> {
        for pair in self.levels.windows(2) {
            for (i, word) in pair[0].iter().enumerate() {
                let bit = pair[1][i / 64] & (1 << (i % 64)) != 0;
                if bit != (*word != 0) {
                    return Err("a summary bit disagrees with its word");
                }
            }
        }
        Ok(())
    }
}

/// Blocked and Ready as time-slot arrays of FIFO queues.
#[derive(Clone, Debug)]
pub struct ArrayQueue {
    mask: u64,
    quarter: u64,
    links: Links,
    keys: Vec<Key>,
    place: Vec<Place>,
    /// Heads of the Blocked FIFOs, by release time mod t.
    blocked: Vec<u32>,
    blocked_bits: LevelBitmap,
    /// Heads of the Ready FIFOs, by deadline mod t.
    ready: Vec<u32>,
    ready_bits: LevelBitmap,
    base: u64,
    len: usize,
}

impl ArrayQueue {
    fn slot(&self, instant: u64) -> usize {
        (instant & self.mask) as usize
    }

    fn accepts(&self, member: u32) -> bool {
        (member as usize) < self.keys.len() && !self.links.is_linked(member)
    }

    fn link_ready(&mut self, m: u32, front: bool, work: &mut Work) {
        let s = self.slot(self.keys[m as usize].deadline);
        let head = &mut self.ready[s];
        let was_empty = *head == NIL;
        if front {
            self.links.push_front(head, m);
        } else {
            self.links.push_back(head, m);
        }
        if was_empty {
            self.ready_bits.set(s, work);
        }
        self.place[m as usize] = Place::Ready;
        work.queue_entries_moved += 1;
    }

    fn check_slots(
        &self,
        heads: &[u32],
        bits: &LevelBitmap,
        place: Place,
        of: fn(Key) -> u64,
    ) -> Result<usize, &'static str> {
        bits.check()?;
        let mut total = 0;
        for (s, &head) in heads.iter().enumerate() {
            if bits.test(s) != (head != NIL) {
                return Err("a slot's bit disagrees with its queue");
            }
            let len = self.links.check_list(head)?;
            let mut m = head;
            for _ in 0..len {
                let key = of(self.keys[m as usize]);
                if self.place[m as usize] != place || self.slot(key) != s {
                    return Err("a member sits in the wrong slot");
                }
                if key != of(self.keys[head as usize]) {
                    return Err("a slot mixes absolute times (horizon exceeded)");
                }
                m = self.links.next(m);
            }
            total += len;
        }
        Ok(total)
    }
}

impl VbsQueue for ArrayQueue {
    const NAME: &'static str = "array";
    const POLICY_NAME: &'static str = "vbs-array";
    const MAX_HORIZON_BITS: u32 = 24;

    fn new(capacity: usize, horizon_bits: u32) -> Result<Self, CoreError> {
        super::check_horizon(horizon_bits, Self::MAX_HORIZON_BITS)?;
        if capacity > NIL as usize {
            return Err(CoreError::InvalidParameter);
        }
        let t = 1usize << horizon_bits;
        Ok(ArrayQueue {
            mask: (t - 1) as u64,
            quarter: (t / 4) as u64,
            links: Links::new(capacity)?,
            keys: filled(capacity, Key::default())?,
            place: filled(capacity, Place::None)?,
            blocked: filled(t, NIL)?,
            blocked_bits: LevelBitmap::new(t)?,
            ready: filled(t, NIL)?,
            ready_bits: LevelBitmap::new(t)?,
            base: 0,
            len: 0,
        })
    }

    fn memory_bytes_for(capacity: usize, horizon_bits: u32) -> usize {
        let t = 1usize << horizon_bits.min(Self::MAX_HORIZON_BITS);
        core::mem::size_of::<Self>()
            + Links::bytes_for(capacity)
            + capacity * (core::mem::size_of::<Key>() + core::mem::size_of::<Place>())
            + 2 * t * 4
            + 2 * LevelBitmap::bytes_for(t)
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.links.heap_bytes()
            + vec_bytes(&self.keys)
            + vec_bytes(&self.place)
            + vec_bytes(&self.blocked)
            + vec_bytes(&self.ready)
            + self.blocked_bits.heap_bytes()
            + self.ready_bits.heap_bytes()
    }

    fn capacity(&self) -> usize {
        self.keys.len()
    }

    fn insert_blocked(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.keys[member as usize] = key;
        let s = self.slot(key.release);
        let was_empty = self.blocked[s] == NIL;
        self.links.push_back(&mut self.blocked[s], member);
        if was_empty {
            self.blocked_bits.set(s, work);
        }
        self.place[member as usize] = Place::Blocked;
        work.queue_entries_moved += 1;
        self.len += 1;
        true
    }

    fn requeue_front(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.keys[member as usize] = key;
        self.link_ready(member, true, work);
        self.len += 1;
        true
    }

    fn remove(&mut self, member: u32, work: &mut Work) -> Option<Key> {
        if !self.links.is_linked(member) {
            return None;
        }
        let key = self.keys[member as usize];
        let (heads, bits, s) = match self.place[member as usize] {
            Place::Blocked => (&mut self.blocked, &mut self.blocked_bits, key.release),
            _ => (&mut self.ready, &mut self.ready_bits, key.deadline),
        };
        let s = (s & self.mask) as usize;
        self.links.unlink(&mut heads[s], member);
        if heads[s] == NIL {
            bits.clear(s, work);
        }
        self.place[member as usize] = Place::None;
        self.len -= 1;
        work.queue_entries_moved += 1;
        Some(key)
    }

    fn release(&mut self, now: u64, work: &mut Work) {
        if now < self.base {
            return;
        }
        // Blocked releases lie in [base, base + t): circular order from base is time order.
        let start = self.slot(self.base);
        while let Some(s) = self.blocked_bits.first_circular(start, work) {
            let head = self.blocked[s];
            if self.keys[head as usize].release > now {
                break;
            }
            while self.blocked[s] != NIL {
                let m = self.blocked[s];
                self.links.unlink(&mut self.blocked[s], m);
                work.queue_entries_moved += 1;
                work.replenishments_processed += 1;
                self.link_ready(m, false, work);
            }
            self.blocked_bits.clear(s, work);
        }
        self.base = now;
    }

    fn earliest_ready(&self, work: &mut Work) -> Option<(u32, Key)> {
        // Ready deadlines lie in [base - t/4, base + 3t/4).
        let start = self.slot(self.base.wrapping_sub(self.quarter));
        let s = self.ready_bits.first_circular(start, work)?;
        let m = self.ready[s];
        Some((m, self.keys[m as usize]))
    }

    fn next_release(&self, work: &mut Work) -> Option<u64> {
        let s = self
            .blocked_bits
            .first_circular(self.slot(self.base), work)?;
        Some(self.keys[self.blocked[s] as usize].release)
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
        let blocked = self.check_slots(&self.blocked, &self.blocked_bits, Place::Blocked, |k| {
            k.release
        })?;
        let ready =
            self.check_slots(&self.ready, &self.ready_bits, Place::Ready, |k| k.deadline)?;
        if blocked + ready != self.len || self.links.linked() != self.len {
            return Err("slot lengths disagree with the linked members");
        }
        check_places(&self.links, &self.place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::vbs::queue::tests as suite;
    use proptest::prelude::*;

    suite::conformance_tests!(ArrayQueue);

    proptest! {
        /// The hierarchical bitmap's circular search agrees with a scan.
        #[test]
        fn level_bitmap_matches_a_scan(
            ops in proptest::collection::vec((0usize..5000, any::<bool>()), 0..200),
            start in 0usize..5000,
        ) {
            let mut b = LevelBitmap::new(5000).unwrap();
            let mut model = alloc::vec![false; 5000];
            let mut w = Work::default();
            for (i, set) in ops {
                if set { b.set(i, &mut w) } else { b.clear(i, &mut w) }
                model[i] = set;
                prop_assert!(b.check().is_ok());
            }
            let expect = (start..5000).chain(0..start).find(|&i| model[i]);
            prop_assert_eq!(b.first_circular(start, &mut w), expect);
        }
    }

    /// Releasing k processes costs `O(log t)` each, whatever the deadlines.
    #[test]
    fn release_work_is_linear_in_released_processes() {
        let w = suite::reverse_deadline_release_work(ArrayQueue::new(64, 14).unwrap());
        // Three levels for 2^14 slots: a few words per released process.
        assert!(w.timeouts_examined <= 64 * 4 + 16, "{w:?}");
    }
}
