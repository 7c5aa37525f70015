//! A fixed-capacity indexed 4-ary min-heap over small dense ids (task ids, or a platform's
//! own slots).
//!
//! Four children per slot rather than two halve the depth, so a removal or an insertion moves
//! half as many slots; the extra comparisons per level read one cache line of neighbouring
//! keys. Slot `i`'s children are `4i + 1 ..= 4i + 4` and its parent is `(i - 1) / 4`.
//!
//! Invariants: `position[m]` is `i` exactly when `slots[i]` holds member `m` (else `ABSENT`); every
//! slot's key is no greater than its children's keys. Keys live inline in the slots so a sift
//! compares neighbouring memory. The capacity is fixed at construction, so no operation
//! allocates. Each operation is O(log n) and counts as one heap operation in the
//! [`Work`](crate::Work) record.

use alloc::vec;
use alloc::vec::Vec;

use crate::TaskId;

/// The position of a member that is not in the heap.
const ABSENT: u32 = u32::MAX;

/// Children per slot.
const ARITY: usize = 4;

/// A small dense id a heap can index by.
pub trait Member: Copy + Eq {
    /// The id as an array index.
    fn index(self) -> usize;
}

impl Member for TaskId {
    fn index(self) -> usize {
        TaskId::index(self)
    }
}

impl Member for u32 {
    fn index(self) -> usize {
        self as usize
    }
}

/// A min-heap of members keyed by `K`, with removal and key update of any member.
#[derive(Debug)]
pub struct IndexedHeap<K, M = TaskId> {
    slots: Vec<(K, M)>,
    position: Vec<u32>,
}

/// A clone keeps the fixed capacity, so a cloned heap (a policy's saved state, a benchmark's
/// prepared one) never allocates on insertion either; `Vec::clone` would shrink it to fit.
impl<K: Clone, M: Clone> Clone for IndexedHeap<K, M> {
    fn clone(&self) -> Self {
        let mut slots = Vec::with_capacity(self.slots.capacity());
        slots.extend_from_slice(&self.slots);
        IndexedHeap {
            slots,
            position: self.position.clone(),
        }
    }
}

impl<K: Ord + Copy, M: Member> IndexedHeap<K, M> {
    /// An empty heap for members with index `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        IndexedHeap {
            slots: Vec::with_capacity(capacity),
            position: vec![ABSENT; capacity],
        }
    }

    /// How many distinct members (ids `0..capacity`) the heap can hold.
    pub fn capacity(&self) -> usize {
        self.position.len()
    }

    /// The number of members.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when the heap has no members.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// True when `member` is in the heap. Ids beyond the capacity never are.
    pub fn contains(&self, member: M) -> bool {
        self.position
            .get(member.index())
            .is_some_and(|&at| at != ABSENT)
    }

    /// The key of `member`, if it is in the heap.
    pub fn key(&self, member: M) -> Option<K> {
        let at = *self.position.get(member.index())?;
        self.slots.get(at as usize).map(|slot| slot.0)
    }

    /// The member with the least key, and that key.
    pub fn peek(&self) -> Option<(M, K)> {
        self.slots.first().map(|&(k, m)| (m, k))
    }

    /// Inserts `member` with `key`, or updates its key if already in. Returns false (and
    /// changes nothing) if the id is beyond the capacity.
    pub fn upsert(&mut self, member: M, key: K) -> bool {
        let m = member.index();
        if m >= self.position.len() {
            return false;
        }
        match self.position[m] {
            ABSENT => {
                self.slots.push((key, member));
                let at = self.slots.len() - 1;
                self.position[m] = at as u32;
                self.sift_up(at);
            }
            at => {
                let at = at as usize;
                let old = core::mem::replace(&mut self.slots[at].0, key);
                if key < old {
                    self.sift_up(at);
                } else {
                    self.sift_down(at);
                }
            }
        }
        true
    }

    /// Removes `member`; returns its key if it was in the heap.
    pub fn remove(&mut self, member: M) -> Option<K> {
        let at = *self.position.get(member.index())?;
        let &(key, _) = self.slots.get(at as usize)?;
        self.take(at as usize);
        Some(key)
    }

    /// Removes and returns the member with the least key.
    pub fn pop(&mut self) -> Option<(M, K)> {
        let &(key, member) = self.slots.first()?;
        self.take(0);
        Some((member, key))
    }

    /// Empties slot `at` and closes the gap by Floyd's bottom-up removal: the hole sinks along
    /// the smallest children to a leaf, three comparisons per level, then the former last slot
    /// fills it and rises as far as it must (past `at` too, when it is smaller than `at`'s
    /// parent). A top-down sift pays a second comparison per level against the moving slot,
    /// and the last slot of a heap of deadlines or timeouts is usually a late one that sinks to
    /// the bottom anyway.
    fn take(&mut self, at: usize) {
        self.position[self.slots[at].1.index()] = ABSENT;
        let Some(last) = self.slots.pop() else {
            return;
        };
        let len = self.slots.len();
        if at == len {
            // The removed slot was the last one: nothing to fill.
            return;
        }
        let mut hole = at;
        while let Some(child) = self.smaller_child(hole, len) {
            self.place(hole, self.slots[child]);
            hole = child;
        }
        while hole > 0 {
            let parent = (hole - 1) / ARITY;
            if last.0 >= self.slots[parent].0 {
                break;
            }
            self.place(hole, self.slots[parent]);
            hole = parent;
        }
        self.place(hole, last);
    }

    /// Checks the heap property and the position index.
    pub fn check(&self) -> Result<(), &'static str> {
        for (i, (key, member)) in self.slots.iter().enumerate() {
            if self.position.get(member.index()).copied() != Some(i as u32) {
                return Err("heap position index disagrees with slot");
            }
            for child in ARITY * i + 1..=ARITY * i + ARITY {
                if self.slots.get(child).is_some_and(|c| c.0 < *key) {
                    return Err("heap property broken");
                }
            }
        }
        let members = self.position.iter().filter(|&&p| p != ABSENT).count();
        if members != self.slots.len() {
            return Err("heap position index has stale entries");
        }
        Ok(())
    }

    /// Moves the slot at `at` up to its place; each level costs one slot write (the "hole"
    /// technique), not a swap. Always inlined: as a call it cost an insertion more than its
    /// usual one step up (1 % of the 100-task EDF run).
    #[inline(always)]
    fn sift_up(&mut self, mut at: usize) {
        let start = at;
        let moving = self.slots[at];
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if moving.0 >= self.slots[parent].0 {
                break;
            }
            self.place(at, self.slots[parent]);
            at = parent;
        }
        if at != start {
            self.place(at, moving);
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        let start = at;
        let len = self.slots.len();
        let moving = self.slots[at];
        while let Some(child) = self.smaller_child(at, len) {
            if self.slots[child].0 >= moving.0 {
                break;
            }
            self.place(at, self.slots[child]);
            at = child;
        }
        if at != start {
            self.place(at, moving);
        }
    }

    /// The child of `at` with the least key among the first `len` slots, if it has one (the
    /// first of equal keys).
    #[inline]
    fn smaller_child(&self, at: usize, len: usize) -> Option<usize> {
        let first = ARITY * at + 1;
        if first >= len {
            return None;
        }
        if first + ARITY <= len {
            // All four children exist: a tournament of three comparisons, no bounds to test.
            let four = &self.slots[first..first + ARITY];
            let left = if four[1].0 < four[0].0 { 1 } else { 0 };
            let right = if four[3].0 < four[2].0 { 3 } else { 2 };
            let least = if four[right].0 < four[left].0 {
                right
            } else {
                left
            };
            return Some(first + least);
        }
        let mut least = first;
        for child in first + 1..len {
            if self.slots[child].0 < self.slots[least].0 {
                least = child;
            }
        }
        Some(least)
    }

    fn place(&mut self, at: usize, slot: (K, M)) {
        self.slots[at] = slot;
        self.position[slot.1.index()] = at as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Upsert(u32, u16),
        Remove(u32),
        Pop,
    }

    /// Room for three full levels and part of a fourth (1 + 4 + 16 + 27), so sifts cross
    /// full and partial sets of children; ids up to `MEMBERS` include some beyond it.
    const CAPACITY: u32 = 48;
    const MEMBERS: u32 = 56;

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..MEMBERS, any::<u16>()).prop_map(|(t, k)| Op::Upsert(t, k)),
            (0u32..MEMBERS).prop_map(Op::Remove),
            Just(Op::Pop),
        ]
    }

    proptest! {
        /// The heap agrees with a sorted reference model after every operation.
        #[test]
        fn matches_a_reference_model(ops in proptest::collection::vec(op(), 0..400)) {
            let mut heap = IndexedHeap::<(u16, u32)>::with_capacity(CAPACITY as usize);
            let mut model: alloc::collections::BTreeMap<u32, u16> = Default::default();
            for op in ops {
                match op {
                    Op::Upsert(t, k) => {
                        let accepted = heap.upsert(TaskId(t), (k, t));
                        prop_assert_eq!(accepted, t < CAPACITY);
                        if accepted { model.insert(t, k); }
                    }
                    Op::Remove(t) => {
                        prop_assert_eq!(heap.remove(TaskId(t)).map(|k| k.0), model.remove(&t));
                    }
                    Op::Pop => {
                        let expect = model.iter().map(|(t, k)| (*k, *t)).min();
                        let got = heap.pop().map(|(_, k)| k);
                        prop_assert_eq!(got, expect);
                        if let Some((_, t)) = expect { model.remove(&t); }
                    }
                }
                prop_assert!(heap.check().is_ok());
                prop_assert_eq!(heap.len(), model.len());
                for (t, k) in &model {
                    prop_assert_eq!(heap.key(TaskId(*t)), Some((*k, *t)));
                }
            }
        }
    }
}
