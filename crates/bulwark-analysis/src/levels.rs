//! Priority levels, highest first: the order in which the level-wise analyses (SPR Eq. 1 for a
//! core, the hyperbolic bounds) take a set, so the levels above a task are one running value
//! kept from level to level rather than a scan of the whole set per task.

use core::cmp::Reverse;

use bulwark_core::Priority;

/// The indices `0..count`, grouped by priority, the highest level first; within a level in
/// index order (the sort is stable).
pub(crate) struct Levels {
    order: Vec<usize>,
    priority: Vec<Priority>,
}

impl Levels {
    /// The levels of `count` items whose priorities `priority_of` gives.
    pub(crate) fn new(count: usize, priority_of: impl Fn(usize) -> Priority) -> Levels {
        let priority: Vec<Priority> = (0..count).map(priority_of).collect();
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| Reverse(priority[i]));
        Levels { order, priority }
    }

    /// Each level's indices, the highest level first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = &[usize]> {
        self.order
            .chunk_by(|&a, &b| self.priority[a] == self.priority[b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_come_highest_first_each_in_index_order() {
        let priorities = [2, 5, 2, 7, 5, 2];
        let levels = Levels::new(priorities.len(), |i| Priority(priorities[i]));
        let got: Vec<&[usize]> = levels.iter().collect();
        assert_eq!(got, [&[3][..], &[1, 4], &[0, 2, 5]]);
        assert_eq!(levels.iter().next_back(), Some(&[0, 2, 5][..]));
        assert_eq!(Levels::new(0, |_| Priority(0)).iter().count(), 0);
    }
}
