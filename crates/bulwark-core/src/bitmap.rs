//! A two-level bitmap over the 256 priorities: which levels are non-empty, with the highest
//! set level found in O(1) (two leading-zero counts), as in seL4 and Linux's `rt` class.
//!
//! Invariant: bit w of `summary` is set exactly when word w of `levels` is non-zero.

use crate::Priority;

const WORDS: usize = Priority::LEVELS / 64;

/// The set of non-empty priority levels of some per-priority structure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityBitmap {
    summary: u8,
    levels: [u64; WORDS],
}

impl PriorityBitmap {
    /// Marks level `p` non-empty.
    pub fn set(&mut self, p: Priority) {
        let p = p.0 as usize;
        self.levels[p / 64] |= 1 << (p % 64);
        self.summary |= 1 << (p / 64);
    }

    /// Marks level `p` empty.
    pub fn clear(&mut self, p: Priority) {
        let p = p.0 as usize;
        self.levels[p / 64] &= !(1 << (p % 64));
        if self.levels[p / 64] == 0 {
            self.summary &= !(1 << (p / 64));
        }
    }

    /// True when level `p` is marked.
    pub fn contains(&self, p: Priority) -> bool {
        let p = p.0 as usize;
        self.levels[p / 64] & (1 << (p % 64)) != 0
    }

    /// The highest marked level.
    pub fn highest(&self) -> Option<Priority> {
        if self.summary == 0 {
            return None;
        }
        let w = 7 - self.summary.leading_zeros() as usize;
        let bit = 63 - self.levels[w].leading_zeros() as usize;
        Some(Priority((w * 64 + bit) as u8))
    }

    /// The highest marked level strictly below `p`.
    pub fn highest_below(&self, p: Priority) -> Option<Priority> {
        let p = p.0 as usize;
        let (w, bit) = (p / 64, p % 64);
        let below = self.levels[w] & ((1u64 << bit) - 1);
        if below != 0 {
            return Some(Priority(
                (w * 64 + 63 - below.leading_zeros() as usize) as u8,
            ));
        }
        let lower_words = self.summary & ((1u8 << w) - 1);
        if lower_words == 0 {
            return None;
        }
        let w = 7 - lower_words.leading_zeros() as usize;
        let bit = 63 - self.levels[w].leading_zeros() as usize;
        Some(Priority((w * 64 + bit) as u8))
    }

    /// Checks the summary against the words.
    pub fn check(&self) -> Result<(), &'static str> {
        for w in 0..WORDS {
            if (self.summary & (1 << w) != 0) != (self.levels[w] != 0) {
                return Err("priority bitmap summary disagrees with its words");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `highest` and `highest_below` agree with a scan of a reference set.
        #[test]
        fn lookups_match_a_scan(ops in proptest::collection::vec((any::<u8>(), any::<bool>()), 0..200), probe in any::<u8>()) {
            let mut b = PriorityBitmap::default();
            let mut model = [false; 256];
            for (p, set) in ops {
                if set { b.set(Priority(p)) } else { b.clear(Priority(p)) }
                model[p as usize] = set;
                prop_assert!(b.check().is_ok());
            }
            let highest = (0..256).rev().find(|&p| model[p]).map(|p| Priority(p as u8));
            prop_assert_eq!(b.highest(), highest);
            let below = (0..probe as usize).rev().find(|&p| model[p]).map(|p| Priority(p as u8));
            prop_assert_eq!(b.highest_below(Priority(probe)), below);
            for p in 0..=255u8 {
                prop_assert_eq!(b.contains(Priority(p)), model[p as usize]);
            }
        }
    }
}
