//! The matrix plugin: a deadline-by-release matrix of FIFO queues with bitmaps (`Θ(t)` time, `O(t^2 + n)` space).
//!
//! Complexity (Table I): every queued process sits in cell `(deadline mod t, release mod t)`
//! of a `t x t` matrix of FIFO queues, whether blocked or ready. Blocked and Ready are not
//! moved between: a cell is *released* once its release time is at or before the last
//! release instant. Bitmaps keep the order:
//! - per row (deadline), the non-empty cells by release; per column (release), the non-empty
//!   cells by deadline;
//! - `pending`: the columns whose release is still to come;
//! - `ready_rows`: the rows holding a released cell.
//!
//! Releasing every process due at an instant is one bitwise OR of a column's bitmap into
//! `ready_rows`, `t/64` words however many processes it releases; finding the earliest
//! deadline is a circular scan of `ready_rows` and one of the row; each is `Θ(t)` word
//! operations, independent of `n`: an `O(1)` scheduler for a fixed resolution. Space is
//! `t^2` cell heads (4 bytes each: 1 GiB at `t = 2^14`, as in the paper), two `t^2`-bit
//! bitmaps, and `O(t + n)` more.
//!
//! Invariants (checked by [`VbsQueue::check`]):
//! - a member is linked exactly when it sits in the cell of its key;
//! - a row's (column's) bit for a column (row) is set exactly when that cell is non-empty;
//! - all members of a column share one absolute release time (`column_release`), which is
//!   after the last release instant exactly when the column's `pending` bit is set;
//! - a row's `ready_rows` bit is set exactly when its first non-empty cell in release order
//!   (circular from a quarter horizon before the row's deadline) is released.
//!
//! Order: by deadline (rows, circular from a quarter horizon before the last release
//! instant), then release (cells, circular from a quarter horizon before the deadline: every
//! key has `deadline - q <= release <= deadline`), then first in, first out within a cell.

use alloc::vec::Vec;

use super::{
    bit_clear, bit_set, bit_test, filled, first_set_circular, vec_bytes, words_for, Key, Links,
    VbsQueue, NIL,
};
use crate::{CoreError, Work};

/// Blocked and Ready as one time-slot matrix of FIFO queues.
#[derive(Clone, Debug)]
pub struct MatrixQueue {
    horizon: usize,
    mask: u64,
    quarter: u64,
    /// Words per row or column bitmap.
    words: usize,
    links: Links,
    keys: Vec<Key>,
    /// Cell heads, row-major: `cells[deadline_slot * t + release_slot]`.
    cells: Vec<u32>,
    /// `t` bitmaps of `t` bits: row d's non-empty cells, by release slot.
    row_bits: Vec<u64>,
    /// `t` bitmaps of `t` bits: column r's non-empty cells, by deadline slot.
    column_bits: Vec<u64>,
    column_members: Vec<u32>,
    column_release: Vec<u64>,
    pending: Vec<u64>,
    ready_rows: Vec<u64>,
    base: u64,
    len: usize,
}

impl MatrixQueue {
    fn slot(&self, instant: u64) -> usize {
        (instant & self.mask) as usize
    }

    fn accepts(&self, member: u32) -> bool {
        (member as usize) < self.keys.len() && !self.links.is_linked(member)
    }

    fn row(&self, d: usize) -> &[u64] {
        &self.row_bits[d * self.words..(d + 1) * self.words]
    }

    /// Links `m` into the cell of `key` and marks the bitmaps.
    fn link(&mut self, m: u32, key: Key, front: bool, work: &mut Work) {
        self.keys[m as usize] = key;
        let (d, r) = (self.slot(key.deadline), self.slot(key.release));
        let w = self.words;
        let head = &mut self.cells[d * self.horizon + r];
        if front {
            self.links.push_front(head, m);
        } else {
            self.links.push_back(head, m);
        }
        bit_set(&mut self.row_bits[d * w..(d + 1) * w], r);
        bit_set(&mut self.column_bits[r * w..(r + 1) * w], d);
        work.timeouts_examined += 2;
        self.column_members[r] += 1;
        self.column_release[r] = key.release;
        if key.release > self.base {
            bit_set(&mut self.pending, r);
        } else {
            bit_set(&mut self.ready_rows, d);
        }
        work.queue_entries_moved += 1;
        self.len += 1;
    }

    /// The first non-empty cell of row `d` in release order, and its head.
    fn first_in_row(&self, d: usize, deadline: u64, work: &mut Work) -> Option<(usize, u32)> {
        let start = self.slot(deadline.wrapping_sub(self.quarter));
        let r = first_set_circular(self.row(d), start, work)?;
        Some((r, self.cells[d * self.horizon + r]))
    }

    /// Whether row `d` (of absolute deadline `deadline`) holds a released cell.
    fn row_is_ready(&self, d: usize, deadline: u64, work: &mut Work) -> bool {
        self.first_in_row(d, deadline, work)
            .is_some_and(|(_, head)| self.keys[head as usize].release <= self.base)
    }
}

impl VbsQueue for MatrixQueue {
    const NAME: &'static str = "matrix";
    const POLICY_NAME: &'static str = "vbs-matrix";
    /// 2^14 instants: 1 GiB of cells, the paper's configuration.
    const MAX_HORIZON_BITS: u32 = 14;

    fn new(capacity: usize, horizon_bits: u32) -> Result<Self, CoreError> {
        super::check_horizon(horizon_bits, Self::MAX_HORIZON_BITS)?;
        if capacity > NIL as usize {
            return Err(CoreError::InvalidParameter);
        }
        let t = 1usize << horizon_bits;
        let words = words_for(t);
        Ok(MatrixQueue {
            horizon: t,
            mask: (t - 1) as u64,
            quarter: (t / 4) as u64,
            words,
            links: Links::new(capacity)?,
            keys: filled(capacity, Key::default())?,
            cells: filled(t * t, NIL)?,
            row_bits: filled(t * words, 0u64)?,
            column_bits: filled(t * words, 0u64)?,
            column_members: filled(t, 0u32)?,
            column_release: filled(t, 0u64)?,
            pending: filled(words, 0u64)?,
            ready_rows: filled(words, 0u64)?,
            base: 0,
            len: 0,
        })
    }

    fn memory_bytes_for(capacity: usize, horizon_bits: u32) -> usize {
        let t = 1usize << horizon_bits.min(Self::MAX_HORIZON_BITS);
        let words = words_for(t);
        core::mem::size_of::<Self>()
            + Links::bytes_for(capacity)
            + capacity * core::mem::size_of::<Key>()
            + t * t * 4
            + 2 * t * words * 8
            + t * (4 + 8)
            + 2 * words * 8
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.links.heap_bytes()
            + vec_bytes(&self.keys)
            + vec_bytes(&self.cells)
            + vec_bytes(&self.row_bits)
            + vec_bytes(&self.column_bits)
            + vec_bytes(&self.column_members)
            + vec_bytes(&self.column_release)
            + vec_bytes(&self.pending)
            + vec_bytes(&self.ready_rows)
    }

    fn capacity(&self) -> usize {
        self.keys.len()
    }

    fn insert_blocked(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.link(member, key, false, work);
        true
    }

    fn requeue_front(&mut self, member: u32, key: Key, work: &mut Work) -> bool {
        if !self.accepts(member) {
            return false;
        }
        self.link(member, key, true, work);
        true
    }

    fn remove(&mut self, member: u32, work: &mut Work) -> Option<Key> {
        if !self.links.is_linked(member) {
            return None;
        }
        let key = self.keys[member as usize];
        let (d, r) = (self.slot(key.deadline), self.slot(key.release));
        let w = self.words;
        let cell = d * self.horizon + r;
        self.links.unlink(&mut self.cells[cell], member);
        work.queue_entries_moved += 1;
        self.len -= 1;
        self.column_members[r] = self.column_members[r].saturating_sub(1);
        if self.cells[cell] == NIL {
            bit_clear(&mut self.row_bits[d * w..(d + 1) * w], r);
            bit_clear(&mut self.column_bits[r * w..(r + 1) * w], d);
            work.timeouts_examined += 2;
            if self.column_members[r] == 0 {
                bit_clear(&mut self.pending, r);
            }
        }
        if bit_test(&self.ready_rows, d) && !self.row_is_ready(d, key.deadline, work) {
            bit_clear(&mut self.ready_rows, d);
        }
        Some(key)
    }

    fn release(&mut self, now: u64, work: &mut Work) {
        if now <= self.base {
            return;
        }
        // Pending columns have releases in (base, base + t): circular order from base + 1.
        let start = self.slot(self.base.wrapping_add(1));
        let w = self.words;
        while let Some(r) = first_set_circular(&self.pending, start, work) {
            if self.column_release[r] > now {
                break;
            }
            // One OR of the column's deadline bitmap releases all its processes.
            for (ready, column) in self
                .ready_rows
                .iter_mut()
                .zip(&self.column_bits[r * w..(r + 1) * w])
            {
                *ready |= *column;
            }
            work.timeouts_examined += w as u32;
            work.replenishments_processed += 1;
            bit_clear(&mut self.pending, r);
        }
        self.base = now;
    }

    fn earliest_ready(&self, work: &mut Work) -> Option<(u32, Key)> {
        // Ready deadlines lie in [base - t/4, base + 3t/4).
        let origin = self.base.wrapping_sub(self.quarter);
        let d = first_set_circular(&self.ready_rows, self.slot(origin), work)?;
        let offset = (d as u64).wrapping_sub(origin) & self.mask;
        let deadline = origin.wrapping_add(offset);
        let (_, head) = self.first_in_row(d, deadline, work)?;
        Some((head, self.keys[head as usize]))
    }

    fn next_release(&self, work: &mut Work) -> Option<u64> {
        let r = first_set_circular(&self.pending, self.slot(self.base.wrapping_add(1)), work)?;
        Some(self.column_release[r])
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
        let mut total = 0;
        let mut members = alloc::vec![0u32; self.horizon];
        let mut row_min_release = alloc::vec![u64::MAX; self.horizon];
        for (d, row_min) in row_min_release.iter_mut().enumerate() {
            for (r, column_count) in members.iter_mut().enumerate() {
                let head = self.cells[d * self.horizon + r];
                let len = self.links.check_list(head)?;
                if bit_test(self.row(d), r) != (len > 0)
                    || bit_test(&self.column_bits[r * self.words..(r + 1) * self.words], d)
                        != (len > 0)
                {
                    return Err("a cell's bits disagree with its queue");
                }
                let mut m = head;
                for _ in 0..len {
                    let key = self.keys[m as usize];
                    if self.slot(key.deadline) != d || self.slot(key.release) != r {
                        return Err("a member sits in the wrong cell");
                    }
                    if key.release != self.column_release[r] {
                        return Err("a column mixes absolute releases (horizon exceeded)");
                    }
                    *row_min = (*row_min).min(key.release);
                    m = self.links.next(m);
                }
                *column_count += len as u32;
                total += len;
            }
        }
        if total != self.len || self.links.linked() != self.len {
            return Err("cell lengths disagree with the linked members");
        }
        for s in 0..self.horizon {
            if members[s] != self.column_members[s] {
                return Err("a column's member count is wrong");
            }
            let pending = members[s] > 0 && self.column_release[s] > self.base;
            if bit_test(&self.pending, s) != pending {
                return Err("a column's pending bit disagrees with its release");
            }
            let ready = row_min_release[s] <= self.base;
            if bit_test(&self.ready_rows, s) != ready {
                return Err("a row's ready bit disagrees with its cells");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::vbs::queue::tests as suite;

    suite::conformance_tests!(MatrixQueue, configuration: {
        assert_eq!(
            MatrixQueue::memory_bytes_for(750, 14) >> 30,
            1,
            "about 1 GiB at 2^14, as in the paper"
        );
    });

    /// Releasing any number of processes at one instant costs one column OR: the work does
    /// not grow with the number released.
    #[test]
    fn release_work_does_not_grow_with_processes() {
        let mut costs = alloc::vec![];
        for k in [1u32, 8, 64] {
            let mut q = MatrixQueue::new(64, 8).unwrap();
            let mut w = Work::default();
            for m in 0..k {
                let key = Key {
                    release: 1,
                    deadline: 60 - u64::from(m % 50),
                };
                q.insert_blocked(m, key, &mut w);
            }
            let mut w = Work::default();
            q.release(1, &mut w);
            assert_eq!(w.replenishments_processed, 1, "one column");
            assert_eq!(w.queue_entries_moved, 0, "no entry moves");
            costs.push(w.timeouts_examined);
            q.check().unwrap();
            let mut ready = 0;
            while let Some((m, _)) = q.earliest_ready(&mut w) {
                q.remove(m, &mut w);
                ready += 1;
            }
            assert_eq!(ready, k, "all released");
        }
        assert!(costs.iter().all(|&c| c == costs[0]), "{costs:?}");
    }
}
