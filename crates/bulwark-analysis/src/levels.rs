//! Priority levels, highest first: the order in which the level-wise analyses (SPR Eq. 1 for a
//! core, the hyperbolic bounds) take a set, so the levels above a task are one running value
//! kept from level to level rather than a scan of the whole set per task.

use core::cmp::Reverse;

use bulwark_core::{Duration, Priority};

use crate::classic::fixed_point::{Interference, RateSums};

/// The indices `0..count`, grouped by priority, the highest level first; within a level in
/// index order (the sort is stable).
pub struct Levels {
    order: Vec<usize>,
    priority: Vec<Priority>,
}

impl Levels {
    /// The levels of `count` items whose priorities `priority_of` gives.
    pub fn new(count: usize, priority_of: impl Fn(usize) -> Priority) -> Levels {
        let priority: Vec<Priority> = (0..count).map(priority_of).collect();
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| Reverse(priority[i]));
        Levels { order, priority }
    }

    /// Each level's indices, the highest level first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[usize]> {
        self.order
            .chunk_by(|&a, &b| self.priority[a] == self.priority[b])
    }

    /// For each index, the largest `value` of a strictly lower level (zero at the lowest):
    /// one running maximum from the lowest level up, e.g. SPR Eq. 1's blocking term, the
    /// longest `eta` below.
    pub fn longest_below(&self, value: impl Fn(usize) -> Duration) -> Vec<Duration> {
        let mut below = vec![Duration::ZERO; self.order.len()];
        let mut longest = Duration::ZERO;
        for level in self.iter().rev() {
            for &i in level {
                below[i] = longest;
            }
            longest = level.iter().map(|&i| value(i)).fold(longest, Duration::max);
        }
        below
    }

    /// Visits every index, the highest level first, with the interference terms of
    /// everything that delays it in a fixed-priority response-time test: every other index
    /// at its priority or above (`term` gives each one's, `None` for one that demands
    /// nothing). The levels above are kept summed by rate from level to level and a
    /// level's peers are its sums less the index's own term, so a set of many tasks on few
    /// periods costs its periods per search, not its tasks.
    pub fn with_interference(
        &self,
        term: impl Fn(usize) -> Option<Interference>,
        mut visit: impl FnMut(usize, &[Interference]),
    ) {
        let mut above = RateSums::default();
        let mut peers = RateSums::default();
        for level in self.iter() {
            peers.clear();
            for &j in level {
                if let Some(demand) = term(j) {
                    peers.add(demand);
                }
            }
            for &i in level {
                visit(i, above.followed_by(peers.without(term(i))));
            }
            above.merge(&peers);
        }
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

    #[test]
    fn the_longest_below_skips_the_own_level() {
        let priorities = [2, 5, 2, 7, 5, 2];
        let eta = [4, 1, 6, 9, 3, 0];
        let levels = Levels::new(priorities.len(), |i| Priority(priorities[i]));
        let below = levels.longest_below(|i| Duration::from_nanos(eta[i]));
        // Level 2 has nothing below; level 5 sees level 2's longest (6); level 7 sees 6 and
        // level 5's 1 and 3.
        let expected: Vec<Duration> = [0, 6, 0, 6, 6, 0].map(Duration::from_nanos).to_vec();
        assert_eq!(below, expected);
    }

    #[test]
    fn each_index_is_delayed_by_its_level_and_the_levels_above() {
        let priorities = [2, 5, 2, 7, 5, 2];
        let periods = [10, 20, 10, 20, 20, 30];
        let levels = Levels::new(priorities.len(), |i| Priority(priorities[i]));
        let term = |i: usize| {
            Some(Interference {
                cost: i as u64 + 1,
                period: periods[i],
                jitter: 0,
            })
        };
        let mut seen = Vec::new();
        levels.with_interference(term, |i, terms| {
            let mut terms: Vec<(u64, u64)> = terms.iter().map(|t| (t.cost, t.period)).collect();
            terms.sort_unstable();
            seen.push((i, terms));
        });
        // Index 3 (priority 7) alone; 1 and 4 (priority 5) each 3's term (the level above,
        // cost 4) and the other's; the lowest level the rest of its own level beside the
        // three above summed at period 20 (2 + 4 + 5).
        assert_eq!(
            seen,
            [
                (3, vec![]),
                (1, vec![(4, 20), (5, 20)]),
                (4, vec![(2, 20), (4, 20)]),
                (0, vec![(3, 10), (6, 30), (11, 20)]),
                (2, vec![(1, 10), (6, 30), (11, 20)]),
                (5, vec![(4, 10), (11, 20)]),
            ]
        );
    }
}
