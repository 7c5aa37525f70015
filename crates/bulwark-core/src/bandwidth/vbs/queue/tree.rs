//! The tree plugin: the matrix plugin with its `t x t` arrays kept in radix trees (`Θ(t)` time, `O(t + n log(t))` space).
//!
//! The matrix plugin spends `t^2` cells and two `t^2`-bit bitmaps on a matrix that holds at
//! most `n` non-empty cells. Here each row (deadline slot) is a radix tree over release slots
//! whose leaves name the row's cells, and each column (release slot) a radix tree over
//! deadline slots; all trees draw their nodes from one pool sized at construction.
//!
//! Complexity (Table I): a tree has 16-way nodes with a 16-bit occupancy mask and a fixed
//! depth of `ceil(log_16(t))` levels, so finding, adding or removing a cell, or the first
//! cell of a row in circular order, is `O(log(t))`: constant for a fixed resolution, like the
//! matrix's scans. Releasing a column ORs each of its leaf masks into the dense `ready_rows`
//! bitmap (at most `t/16` leaves) and the earliest deadline is a circular scan of
//! `ready_rows` (`t/64` words): `Θ(t)`, independent of `n`, as in the matrix. Space: dense
//! arrays of `t` row and column roots, column counts and releases (`O(t)`), `n` cells, and a
//! pool of `2 n ceil(log_16(t))` nodes of 68 bytes (`O(n log(t))`): about 1 MB for 750
//! processes at `t = 2^14`, where the matrix needs 1 GiB.
//!
//! Invariants (checked by [`VbsQueue::check`]):
//! - every node in a tree has a non-zero mask, and an interior node's child is present
//!   exactly when its bit is set; free nodes are on the free list, and the pool never runs
//!   out (every non-empty cell needs at most one path in its row tree and one in its column
//!   tree);
//! - a member is linked exactly when it sits in the cell its row tree names for its key, and
//!   a cell is in use exactly when it is non-empty;
//! - `pending`, `ready_rows`, `column_members` and `column_release` mean what they mean in the
//!   matrix plugin, whose order this plugin keeps exactly.

use alloc::vec::Vec;

use super::{
    bit_clear, bit_set, bit_test, filled, first_set_circular, vec_bytes, words_for, Key, Links,
    VbsQueue, NIL,
};
use crate::{CoreError, Work};

/// Bits of a key consumed per tree level.
const DIGIT_BITS: usize = 4;
/// Children per node.
const FANOUT: usize = 1 << DIGIT_BITS;
/// The deepest tree (24-bit keys).
const MAX_LEVELS: usize = 6;

/// A 16-way node: its occupancy mask and children (node ids inside the tree, payloads at the
/// leaf level). A free node links the free list through `child[0]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    mask: u16,
    child: [u32; FANOUT],
}

const EMPTY: Node = Node {
    mask: 0,
    child: [NIL; FANOUT],
};

/// Fixed-depth radix trees over `levels * 4`-bit keys, sharing one node pool.
#[derive(Clone, Debug)]
struct Forest {
    nodes: Vec<Node>,
    free: u32,
    free_count: usize,
    levels: usize,
}

impl Forest {
    fn new(nodes: usize, levels: usize) -> Result<Self, CoreError> {
        if nodes >= NIL as usize {
            return Err(CoreError::InvalidParameter);
        }
        let mut pool = filled(nodes, EMPTY)?;
        for (i, node) in pool.iter_mut().enumerate() {
            node.child[0] = if i + 1 < nodes { i as u32 + 1 } else { NIL };
        }
        Ok(Forest {
            nodes: pool,
            free: if nodes > 0 { 0 } else { NIL },
            free_count: nodes,
            levels,
        })
    }

    fn shift(&self, level: usize) -> usize {
        DIGIT_BITS * (self.levels - 1 - level)
    }

    fn digit(&self, key: usize, level: usize) -> usize {
        (key >> self.shift(level)) & (FANOUT - 1)
    }

    fn alloc(&mut self) -> u32 {
        let id = self.free;
        if id != NIL {
            self.free = self.nodes[id as usize].child[0];
            self.nodes[id as usize] = EMPTY;
            self.free_count -= 1;
        }
        id
    }

    fn dispose(&mut self, id: u32) {
        self.nodes[id as usize] = EMPTY;
        self.nodes[id as usize].child[0] = self.free;
        self.free = id;
        self.free_count += 1;
    }

    /// The payload stored under `key`.
    fn get(&self, root: u32, key: usize, work: &mut Work) -> Option<u32> {
        let mut node = root;
        for level in 0..self.levels {
            if node == NIL {
                return None;
            }
            work.timeouts_examined += 1;
            let n = &self.nodes[node as usize];
            let d = self.digit(key, level);
            if n.mask & (1 << d) == 0 {
                return None;
            }
            node = n.child[d];
        }
        Some(node)
    }

    /// Stores `payload` under `key`; false (changing nothing) if the pool cannot hold the
    /// path, which the plugin's sizing rules out.
    fn insert(&mut self, root: &mut u32, key: usize, payload: u32, work: &mut Work) -> bool {
        // Count the nodes the path lacks before taking any.
        let mut missing = self.levels;
        let mut node = *root;
        for level in 0..self.levels {
            if node == NIL {
                break;
            }
            missing -= 1;
            let n = &self.nodes[node as usize];
            let d = self.digit(key, level);
            node = if n.mask & (1 << d) != 0 && level + 1 < self.levels {
                n.child[d]
            } else {
                NIL
            };
        }
        if missing > self.free_count {
            return false;
        }
        if *root == NIL {
            *root = self.alloc();
        }
        let mut node = *root;
        for level in 0..self.levels {
            work.timeouts_examined += 1;
            let d = self.digit(key, level);
            let leaf = level + 1 == self.levels;
            let present = self.nodes[node as usize].mask & (1 << d) != 0;
            let next = if leaf {
                payload
            } else if present {
                self.nodes[node as usize].child[d]
            } else {
                self.alloc()
            };
            let n = &mut self.nodes[node as usize];
            n.mask |= 1 << d;
            n.child[d] = next;
            node = next;
        }
        true
    }

    /// Removes `key`, disposing of the nodes left empty.
    fn remove(&mut self, root: &mut u32, key: usize, work: &mut Work) {
        let mut path = [NIL; MAX_LEVELS];
        let mut node = *root;
        for (level, slot) in path.iter_mut().enumerate().take(self.levels) {
            if node == NIL {
                return;
            }
            *slot = node;
            work.timeouts_examined += 1;
            let n = &self.nodes[node as usize];
            let d = self.digit(key, level);
            if n.mask & (1 << d) == 0 {
                return;
            }
            node = if level + 1 < self.levels {
                n.child[d]
            } else {
                NIL
            };
        }
        for level in (0..self.levels).rev() {
            let id = path[level];
            let d = self.digit(key, level);
            let n = &mut self.nodes[id as usize];
            n.mask &= !(1 << d);
            n.child[d] = NIL;
            if n.mask != 0 {
                return;
            }
            self.dispose(id);
            if level == 0 {
                *root = NIL;
            }
        }
    }

    /// The least key in the subtree `node` (at `level`), given the digits above it in `key`.
    fn least(
        &self,
        mut key: usize,
        mut node: u32,
        mut level: usize,
        work: &mut Work,
    ) -> (usize, u32) {
        loop {
            work.timeouts_examined += 1;
            let n = &self.nodes[node as usize];
            let d = n.mask.trailing_zeros() as usize;
            key |= d << self.shift(level);
            if level + 1 == self.levels {
                return (key, n.child[d]);
            }
            node = n.child[d];
            level += 1;
        }
    }

    /// The least key at or after `from`, with its payload.
    fn successor(&self, root: u32, from: usize, work: &mut Work) -> Option<(usize, u32)> {
        if root == NIL {
            return None;
        }
        let mut path = [NIL; MAX_LEVELS];
        let mut node = root;
        let mut level = 0;
        // Follow `from`'s digits as deep as the tree has them.
        let mut upper = loop {
            path[level] = node;
            work.timeouts_examined += 1;
            let n = &self.nodes[node as usize];
            let d = self.digit(from, level);
            let mask = u32::from(n.mask);
            if level + 1 == self.levels {
                let at_or_after = mask & (!0u32 << d);
                if at_or_after != 0 {
                    let d = at_or_after.trailing_zeros() as usize;
                    let key = (from & !(FANOUT - 1)) | d;
                    return Some((key, n.child[d]));
                }
                // Nothing at or after here: a strictly greater digit above.
                break level.checked_sub(1)?;
            }
            if mask & (1 << d) == 0 {
                break level;
            }
            node = n.child[d];
            level += 1;
        };
        // A strictly greater digit at `upper` or above, then the least key below it.
        loop {
            let n = &self.nodes[path[upper] as usize];
            let d = self.digit(from, upper);
            let greater = u32::from(n.mask) & (!0u32 << (d + 1));
            if greater != 0 {
                let d = greater.trailing_zeros() as usize;
                let span = DIGIT_BITS * (self.levels - upper);
                let high = if span >= usize::BITS as usize {
                    0
                } else {
                    from & !((1usize << span) - 1)
                };
                let key = high | (d << self.shift(upper));
                if upper + 1 == self.levels {
                    return Some((key, n.child[d]));
                }
                return Some(self.least(key, n.child[d], upper + 1, work));
            }
            upper = upper.checked_sub(1)?;
        }
    }

    /// The first key in circular order from `from`, with its payload.
    fn first_circular(&self, root: u32, from: usize, work: &mut Work) -> Option<(usize, u32)> {
        self.successor(root, from, work)
            .or_else(|| self.successor(root, 0, work))
    }

    /// Calls `leaf(first_key, mask)` for every leaf, in key order.
    fn for_each_leaf<F: FnMut(usize, u16)>(&self, root: u32, mut leaf: F, work: &mut Work) {
        if root == NIL {
            return;
        }
        if self.levels == 1 {
            work.timeouts_examined += 1;
            leaf(0, self.nodes[root as usize].mask);
            return;
        }
        let mut stack = [(NIL, 0u16, 0usize); MAX_LEVELS];
        stack[0] = (root, self.nodes[root as usize].mask, 0);
        let mut depth = 0;
        loop {
            let (node, remaining, prefix) = stack[depth];
            if remaining == 0 {
                if depth == 0 {
                    return;
                }
                depth -= 1;
                continue;
            }
            let d = remaining.trailing_zeros() as usize;
            stack[depth].1 = remaining & !(1 << d);
            let child = self.nodes[node as usize].child[d];
            let child_prefix = prefix * FANOUT + d;
            work.timeouts_examined += 1;
            if depth + 2 == self.levels {
                leaf(child_prefix * FANOUT, self.nodes[child as usize].mask);
            } else {
                depth += 1;
                stack[depth] = (child, self.nodes[child as usize].mask, child_prefix);
            }
        }
    }

    /// Checks a tree's shape; returns (nodes, keys) in it.
    fn check_tree(&self, root: u32) -> Result<(usize, usize), &'static str> {
        if root == NIL {
            return Ok((0, 0));
        }
        let mut nodes = 0;
        let mut keys = 0;
        let mut stack = [(NIL, 0usize); MAX_LEVELS * FANOUT];
        let mut top = 1;
        stack[0] = (root, 0);
        while top > 0 {
            top -= 1;
            let (id, level) = stack[top];
            let n = self
                .nodes
                .get(id as usize)
                .ok_or("a tree names a node beyond the pool")?;
            nodes += 1;
            if n.mask == 0 {
                return Err("a tree keeps an empty node");
            }
            if level + 1 == self.levels {
                keys += n.mask.count_ones() as usize;
                continue;
            }
            for d in 0..FANOUT {
                let present = n.mask & (1 << d) != 0;
                if present != (n.child[d] != NIL) {
                    return Err("a node's mask disagrees with its children");
                }
                if present {
                    if top == stack.len() {
                        return Err("a tree is deeper than its levels");
                    }
                    stack[top] = (n.child[d], level + 1);
                    top += 1;
                }
            }
        }
        Ok((nodes, keys))
    }
}

/// Blocked and Ready as a time-slot matrix of FIFO queues kept in radix trees.
#[derive(Clone, Debug)]
pub struct TreeQueue {
    mask: u64,
    quarter: u64,
    links: Links,
    keys: Vec<Key>,
    /// The cell each queued member sits in.
    cell_of: Vec<u32>,
    /// Cell heads; a free cell links the free list instead.
    cells: Vec<u32>,
    free_cell: u32,
    /// Per deadline slot: a tree over release slots whose leaves are cell ids.
    rows: Vec<u32>,
    /// Per release slot: a tree over deadline slots.
    columns: Vec<u32>,
    column_members: Vec<u32>,
    column_release: Vec<u64>,
    pending: Vec<u64>,
    ready_rows: Vec<u64>,
    forest: Forest,
    base: u64,
    len: usize,
}

impl TreeQueue {
    fn levels_for(horizon_bits: u32) -> usize {
        (horizon_bits as usize).div_ceil(DIGIT_BITS)
    }

    fn slot(&self, instant: u64) -> usize {
        (instant & self.mask) as usize
    }

    fn accepts(&self, member: u32) -> bool {
        (member as usize) < self.keys.len()
            && !self.links.is_linked(member)
            && self.free_cell != NIL
            && self.forest.free_count >= 2 * self.forest.levels
    }

    fn link(&mut self, m: u32, key: Key, front: bool, work: &mut Work) {
        self.keys[m as usize] = key;
        let (d, r) = (self.slot(key.deadline), self.slot(key.release));
        let cell = match self.forest.get(self.rows[d], r, work) {
            Some(cell) => cell,
            None => {
                let cell = self.free_cell;
                self.free_cell = self.cells[cell as usize];
                self.cells[cell as usize] = NIL;
                self.forest.insert(&mut self.rows[d], r, cell, work);
                self.forest.insert(&mut self.columns[r], d, 0, work);
                cell
            }
        };
        let head = &mut self.cells[cell as usize];
        if front {
            self.links.push_front(head, m);
        } else {
            self.links.push_back(head, m);
        }
        self.cell_of[m as usize] = cell;
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

    /// The head of the first non-empty cell of row `d` in release order.
    fn first_in_row(&self, d: usize, deadline: u64, work: &mut Work) -> Option<u32> {
        let start = self.slot(deadline.wrapping_sub(self.quarter));
        let (_, cell) = self.forest.first_circular(self.rows[d], start, work)?;
        Some(self.cells[cell as usize])
    }
}

impl VbsQueue for TreeQueue {
    const NAME: &'static str = "tree";
    const POLICY_NAME: &'static str = "vbs-tree";
    const MAX_HORIZON_BITS: u32 = 24;

    fn new(capacity: usize, horizon_bits: u32) -> Result<Self, CoreError> {
        super::check_horizon(horizon_bits, Self::MAX_HORIZON_BITS)?;
        let levels = Self::levels_for(horizon_bits);
        let nodes = capacity
            .checked_mul(2 * levels)
            .ok_or(CoreError::InvalidParameter)?;
        if nodes >= NIL as usize {
            return Err(CoreError::InvalidParameter);
        }
        let t = 1usize << horizon_bits;
        let words = words_for(t);
        let mut cells = filled(capacity, NIL)?;
        for (i, next) in cells.iter_mut().enumerate() {
            *next = if i + 1 < capacity { i as u32 + 1 } else { NIL };
        }
        Ok(TreeQueue {
            mask: (t - 1) as u64,
            quarter: (t / 4) as u64,
            links: Links::new(capacity)?,
            keys: filled(capacity, Key::default())?,
            cell_of: filled(capacity, NIL)?,
            cells,
            free_cell: if capacity > 0 { 0 } else { NIL },
            rows: filled(t, NIL)?,
            columns: filled(t, NIL)?,
            column_members: filled(t, 0u32)?,
            column_release: filled(t, 0u64)?,
            pending: filled(words, 0u64)?,
            ready_rows: filled(words, 0u64)?,
            forest: Forest::new(nodes, levels)?,
            base: 0,
            len: 0,
        })
    }

    fn memory_bytes_for(capacity: usize, horizon_bits: u32) -> usize {
        let bits = horizon_bits.min(Self::MAX_HORIZON_BITS);
        let t = 1usize << bits;
        let nodes = capacity * 2 * Self::levels_for(bits);
        core::mem::size_of::<Self>()
            + Links::bytes_for(capacity)
            + capacity * (core::mem::size_of::<Key>() + 4 + 4)
            + t * (4 + 4 + 4 + 8)
            + 2 * words_for(t) * 8
            + nodes * core::mem::size_of::<Node>()
    }

    fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>()
            + self.links.heap_bytes()
            + vec_bytes(&self.keys)
            + vec_bytes(&self.cell_of)
            + vec_bytes(&self.cells)
            + vec_bytes(&self.rows)
            + vec_bytes(&self.columns)
            + vec_bytes(&self.column_members)
            + vec_bytes(&self.column_release)
            + vec_bytes(&self.pending)
            + vec_bytes(&self.ready_rows)
            + vec_bytes(&self.forest.nodes)
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
        let cell = self.cell_of[member as usize];
        self.links.unlink(&mut self.cells[cell as usize], member);
        self.cell_of[member as usize] = NIL;
        work.queue_entries_moved += 1;
        self.len -= 1;
        self.column_members[r] = self.column_members[r].saturating_sub(1);
        if self.cells[cell as usize] == NIL {
            self.forest.remove(&mut self.rows[d], r, work);
            self.forest.remove(&mut self.columns[r], d, work);
            self.cells[cell as usize] = self.free_cell;
            self.free_cell = cell;
            if self.column_members[r] == 0 {
                bit_clear(&mut self.pending, r);
            }
        }
        let released = |head: u32| self.keys[head as usize].release <= self.base;
        if bit_test(&self.ready_rows, d)
            && !self
                .first_in_row(d, key.deadline, work)
                .is_some_and(released)
        {
            bit_clear(&mut self.ready_rows, d);
        }
        Some(key)
    }

    fn release(&mut self, now: u64, work: &mut Work) {
        if now <= self.base {
            return;
        }
        let start = self.slot(self.base.wrapping_add(1));
        while let Some(r) = first_set_circular(&self.pending, start, work) {
            if self.column_release[r] > now {
                break;
            }
            let ready_rows = &mut self.ready_rows;
            self.forest.for_each_leaf(
                self.columns[r],
                |first, mask| ready_rows[first / 64] |= u64::from(mask) << (first % 64),
                work,
            );
            work.replenishments_processed += 1;
            bit_clear(&mut self.pending, r);
        }
        self.base = now;
    }

    fn earliest_ready(&self, work: &mut Work) -> Option<(u32, Key)> {
        let origin = self.base.wrapping_sub(self.quarter);
        let d = first_set_circular(&self.ready_rows, self.slot(origin), work)?;
        let offset = (d as u64).wrapping_sub(origin) & self.mask;
        let head = self.first_in_row(d, origin.wrapping_add(offset), work)?;
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
        let mut scratch = Work::default();
        let (mut nodes, mut row_keys, mut column_keys) = (0, 0, 0);
        for (&row, &column) in self.rows.iter().zip(&self.columns) {
            let (n, k) = self.forest.check_tree(row)?;
            nodes += n;
            row_keys += k;
            let (n, k) = self.forest.check_tree(column)?;
            nodes += n;
            column_keys += k;
        }
        if nodes + self.forest.free_count != self.forest.nodes.len() {
            return Err("tree nodes leak from the pool");
        }
        let mut free_cells = 0;
        let mut c = self.free_cell;
        while c != NIL {
            free_cells += 1;
            if free_cells > self.cells.len() {
                return Err("the free cell list does not end");
            }
            c = self.cells[c as usize];
        }
        if row_keys != column_keys || row_keys + free_cells != self.cells.len() {
            return Err("cells in use disagree with the trees");
        }
        let mut members = alloc::vec![0u32; self.rows.len()];
        let mut row_min_release = alloc::vec![u64::MAX; self.rows.len()];
        for m in 0..self.keys.len() as u32 {
            if !self.links.is_linked(m) {
                continue;
            }
            let key = self.keys[m as usize];
            let (d, r) = (self.slot(key.deadline), self.slot(key.release));
            let cell = self.cell_of[m as usize];
            if self.forest.get(self.rows[d], r, &mut scratch) != Some(cell)
                || self.forest.get(self.columns[r], d, &mut scratch).is_none()
            {
                return Err("a member's cell is not where its key says");
            }
            let head = self.cells[cell as usize];
            if self.keys[head as usize] != key {
                return Err("a cell mixes keys (horizon exceeded)");
            }
            if key.release != self.column_release[r] {
                return Err("a column mixes absolute releases (horizon exceeded)");
            }
            members[r] += 1;
            row_min_release[d] = row_min_release[d].min(key.release);
        }
        let mut total = 0;
        for (cell, &head) in self.cells.iter().enumerate() {
            if self.cell_of.get(head as usize) == Some(&(cell as u32)) {
                total += self.links.check_list(head)?;
            }
        }
        if total != self.len || self.links.linked() != self.len {
            return Err("cell lengths disagree with the linked members");
        }
        for s in 0..self.rows.len() {
            if members[s] != self.column_members[s] {
                return Err("a column's member count is wrong");
            }
            let pending = members[s] > 0 && self.column_release[s] > self.base;
            if bit_test(&self.pending, s) != pending {
                return Err("a column's pending bit disagrees with its release");
            }
            if bit_test(&self.ready_rows, s) != (row_min_release[s] <= self.base) {
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
    use crate::bandwidth::vbs::queue::MatrixQueue;
    use proptest::prelude::*;

    suite::conformance_tests!(TreeQueue, configuration: {
        let tree = TreeQueue::memory_bytes_for(750, 14);
        let matrix = MatrixQueue::memory_bytes_for(750, 14);
        assert!(tree < 2 << 20, "{tree} bytes");
        assert!(tree * 1000 < matrix, "far less memory than the matrix");
    });

    proptest! {
        /// The radix trees' circular successor agrees with a scan of a reference set, for key
        /// widths that are and are not multiples of the digit width.
        #[test]
        fn forest_matches_a_scan(
            bits in 4u32..11,
            ops in proptest::collection::vec((any::<u16>(), any::<bool>()), 0..120),
            start in any::<u16>(),
        ) {
            let size = 1usize << bits;
            let levels = (bits as usize).div_ceil(DIGIT_BITS);
            let mut forest = Forest::new(2 * 120 * levels, levels).unwrap();
            let mut root = NIL;
            let mut model = alloc::vec![false; size];
            let mut w = Work::default();
            for (key, add) in ops {
                let key = key as usize % size;
                if add {
                    if !model[key] {
                        prop_assert!(forest.insert(&mut root, key, key as u32, &mut w));
                    }
                } else {
                    forest.remove(&mut root, key, &mut w);
                }
                model[key] = add;
                let (_, keys) = forest.check_tree(root).unwrap();
                prop_assert_eq!(keys, model.iter().filter(|&&k| k).count());
            }
            let start = start as usize % size;
            let expect = (start..size).chain(0..start).find(|&k| model[k]);
            let got = forest.first_circular(root, start, &mut w);
            prop_assert_eq!(got.map(|g| g.0), expect);
            prop_assert_eq!(got.map(|g| g.1 as usize), expect);
            let mut leaves = alloc::vec![];
            forest.for_each_leaf(root, |first, mask| {
                for i in 0..FANOUT {
                    if mask & (1 << i) != 0 { leaves.push(first + i); }
                }
            }, &mut w);
            let all: alloc::vec::Vec<usize> = (0..size).filter(|&k| model[k]).collect();
            prop_assert_eq!(leaves, all);
        }
    }
}
