//! A fixed-capacity indexed binary min-heap over task ids.
//!
//! Invariants: `position[t]` is `Some(i)` exactly when `slots[i] == t`; every slot's key is no
//! greater than its children's keys. The capacity (the number of task ids) is fixed at
//! construction, so no operation allocates. Each operation is O(log n) and counts as one heap
//! operation in the [`Work`](crate::Work) record.

use alloc::vec;
use alloc::vec::Vec;

use crate::TaskId;

/// A min-heap of task ids keyed by `K`, with removal and key update of any member.
#[derive(Clone, Debug)]
pub struct IndexedHeap<K> {
    slots: Vec<TaskId>,
    keys: Vec<Option<K>>,
    position: Vec<Option<u32>>,
}

impl<K: Ord + Copy> IndexedHeap<K> {
    /// An empty heap for task ids `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Self {
        IndexedHeap {
            slots: Vec::with_capacity(capacity),
            keys: vec![None; capacity],
            position: vec![None; capacity],
        }
    }

    /// The number of task ids this heap can hold.
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

    /// True when `task` is a member. Ids beyond the capacity are never members.
    pub fn contains(&self, task: TaskId) -> bool {
        matches!(self.position.get(task.index()), Some(Some(_)))
    }

    /// The key of `task`, if it is a member.
    pub fn key(&self, task: TaskId) -> Option<K> {
        self.keys.get(task.index()).copied().flatten()
    }

    /// The member with the least key, and that key.
    pub fn peek(&self) -> Option<(TaskId, K)> {
        let top = *self.slots.first()?;
        self.key(top).map(|k| (top, k))
    }

    /// Inserts `task` with `key`, or updates its key if already a member. Returns false (and
    /// changes nothing) if the id is beyond the capacity.
    pub fn upsert(&mut self, task: TaskId, key: K) -> bool {
        let t = task.index();
        if t >= self.position.len() {
            return false;
        }
        self.keys[t] = Some(key);
        let at = match self.position[t] {
            Some(i) => i as usize,
            None => {
                self.slots.push(task);
                let i = self.slots.len() - 1;
                self.position[t] = Some(i as u32);
                i
            }
        };
        let at = self.sift_up(at);
        self.sift_down(at);
        true
    }

    /// Removes `task`; returns its key if it was a member.
    pub fn remove(&mut self, task: TaskId) -> Option<K> {
        let t = task.index();
        let at = (*self.position.get(t)?)? as usize;
        let key = self.keys[t].take();
        self.position[t] = None;
        let last = self.slots.len() - 1;
        if at != last {
            self.slots.swap(at, last);
            self.slots.pop();
            self.position[self.slots[at].index()] = Some(at as u32);
            let at = self.sift_up(at);
            self.sift_down(at);
        } else {
            self.slots.pop();
        }
        key
    }

    /// Removes and returns the member with the least key.
    pub fn pop(&mut self) -> Option<(TaskId, K)> {
        let (task, _) = self.peek()?;
        self.remove(task).map(|k| (task, k))
    }

    /// Checks the heap property and the position index.
    pub fn check(&self) -> Result<(), &'static str> {
        for (i, task) in self.slots.iter().enumerate() {
            if self.position.get(task.index()).copied().flatten() != Some(i as u32) {
                return Err("heap position index disagrees with slot");
            }
            let key = self.keys[task.index()].ok_or("heap member without key")?;
            for child in [2 * i + 1, 2 * i + 2] {
                if let Some(c) = self.slots.get(child) {
                    if self.keys[c.index()].is_none_or(|ck| ck < key) {
                        return Err("heap property broken");
                    }
                }
            }
        }
        let members = self.position.iter().filter(|p| p.is_some()).count();
        if members != self.slots.len() {
            return Err("heap position index has stale entries");
        }
        Ok(())
    }

    fn key_at(&self, i: usize) -> Option<K> {
        self.keys[self.slots[i].index()]
    }

    fn swap_slots(&mut self, a: usize, b: usize) {
        self.slots.swap(a, b);
        self.position[self.slots[a].index()] = Some(a as u32);
        self.position[self.slots[b].index()] = Some(b as u32);
    }

    fn sift_up(&mut self, mut at: usize) -> usize {
        while at > 0 {
            let parent = (at - 1) / 2;
            if self.key_at(at) < self.key_at(parent) {
                self.swap_slots(at, parent);
                at = parent;
            } else {
                break;
            }
        }
        at
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let mut least = at;
            for child in [2 * at + 1, 2 * at + 2] {
                if child < self.slots.len() && self.key_at(child) < self.key_at(least) {
                    least = child;
                }
            }
            if least == at {
                return;
            }
            self.swap_slots(at, least);
            at = least;
        }
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

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..20, any::<u16>()).prop_map(|(t, k)| Op::Upsert(t, k)),
            (0u32..20).prop_map(Op::Remove),
            Just(Op::Pop),
        ]
    }

    proptest! {
        /// The heap agrees with a sorted reference model after every operation.
        #[test]
        fn matches_a_reference_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut heap = IndexedHeap::<(u16, u32)>::with_capacity(16);
            let mut model: alloc::collections::BTreeMap<u32, u16> = Default::default();
            for op in ops {
                match op {
                    Op::Upsert(t, k) => {
                        let accepted = heap.upsert(TaskId(t), (k, t));
                        prop_assert_eq!(accepted, t < 16);
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
            }
        }
    }
}
