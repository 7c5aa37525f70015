//! The least fixed point of a request-bound recurrence
//! `t = constant + sum_h cost_h * ceil((t + jitter_h) / period_h)`, the core of every
//! response-time test here (Joseph and Pandya 1986; Audsley et al. 1993; SPR Eq. 1), exact and
//! in time that does not grow with the size of the numbers.
//!
//! The plain iteration `t <- f(t)` is exact but crawls when the interfering utilisation `U` is
//! close to 1: the steps shrink roughly by the factor `U` each time, so a long budget behind a
//! 0.99999 load needs about a million steps. Here every step may also jump to a lower bound of
//! the least fixed point `t*`, which keeps the answer exact (every iterate stays `<= t*`):
//!
//! - for `t' >= t`, `ceil((t' + J_h) / T_h) >= max(k_h, t' / T_h)` with
//!   `k_h = ceil((t + J_h) / T_h)`; keeping `k_h` for some terms (set `A`) and the linear part
//!   for the others (set `S`) gives a lower bound `g(t') <= f(t')`, so
//!   `t* >= (constant + sum_A C_h k_h) / (1 - sum_S C_h / T_h)`;
//! - `S` is the set of terms whose ceiling steps before the plain iterate `f(t)`; the division
//!   is done in fixed point with 64 fractional bits, the utilisation rounded down, so the jump
//!   never passes `t*`.
//!
//! The first [`PLAIN_STEPS`] steps are plain, so the iterates of every small example (and the
//! "first iterate above the bound" that reports show for a rejected task) are the textbook
//! ones; the jumps start after that.
//!
//! Why the time is bounded: (1) the first jump (all terms linear) lands within
//! `sum C_h / (1 - U)` of `t*`, whatever the constant; (2) every step that does not end the
//! search crosses at least one release point `k T_h - J_h` (otherwise `f` would not change
//! and the iterate would be a fixed point), so the steps are at most the release points
//! between the first iterate and `min(t*, limit)`; (3) the linear jumps skip runs of such
//! points, so the near-1 cases take a handful of steps (see the tests). When `U >= 1` and the
//! constant is positive there is no fixed point at all (`f(t) >= constant + t`): once the
//! plain steps are spent, the answer is "unbounded" at once. The iterates are `u128`; a demand of `u64::MAX` or more is
//! reported as unbounded.

/// One interfering term `cost * ceil((t + jitter) / period)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interference {
    /// `C_h`: the work of each release.
    pub cost: u64,
    /// `T_h`: the least time between releases (zero is read as 1).
    pub period: u64,
    /// `J_h`: release jitter, or any other shift of the first release forwards.
    pub jitter: u64,
}

/// Anything that interferes as an [`Interference`] term (the analysis passes its tasks
/// directly, with no copy).
pub trait Interferes {
    /// The term.
    fn term(&self) -> Interference;
}

impl Interferes for Interference {
    fn term(&self) -> Interference {
        *self
    }
}

impl Interferes for super::Task {
    fn term(&self) -> Interference {
        Interference {
            cost: self.wcet,
            period: self.period,
            jitter: self.jitter,
        }
    }
}

/// Interference terms summed by rate: terms of equal period and jitter add up exactly
/// (`C_a ceil((t + J) / T) + C_b ceil((t + J) / T) = (C_a + C_b) ceil((t + J) / T)`), so a
/// search over many tasks that share few periods costs the distinct periods, not the tasks.
/// The sums are kept in 128 bits; a term's cost saturates at `u64::MAX`, which the search
/// reads as unbounded exactly as it would the separate terms.
#[derive(Clone, Debug, Default)]
pub struct RateSums {
    /// One term per rate, then (from `sums.len()` on) the extra terms of the last
    /// [`followed_by`](RateSums::followed_by).
    terms: Vec<Interference>,
    sums: Vec<u128>,
    slot: std::collections::HashMap<(u64, u64), usize>,
}

impl RateSums {
    /// Empty again, its memory kept for the next set.
    pub fn clear(&mut self) {
        self.terms.clear();
        self.sums.clear();
        self.slot.clear();
    }

    /// `term` added to the sum of its rate.
    pub fn add(&mut self, term: Interference) {
        self.add_sum(term, u128::from(term.cost));
    }

    fn add_sum(&mut self, term: Interference, cost: u128) {
        use std::collections::hash_map::Entry;
        self.terms.truncate(self.sums.len());
        match self.slot.entry((term.period, term.jitter)) {
            Entry::Occupied(entry) => {
                let at = *entry.get();
                self.sums[at] += cost;
                self.terms[at].cost = saturated(self.sums[at]);
            }
            Entry::Vacant(entry) => {
                entry.insert(self.terms.len());
                self.terms.push(Interference {
                    cost: saturated(cost),
                    ..term
                });
                self.sums.push(cost);
            }
        }
    }

    /// Every rate of `other` added to this one's.
    pub fn merge(&mut self, other: &RateSums) {
        for (term, &sum) in other.terms.iter().zip(&other.sums) {
            self.add_sum(*term, sum);
        }
    }

    /// One term per rate.
    pub fn terms(&self) -> &[Interference] {
        &self.terms[..self.sums.len()]
    }

    /// One term per rate followed by `extra`, laid out after them in its own buffer: a
    /// search's terms with no copy of the sums (a task's own level after the levels above).
    pub fn followed_by(
        &mut self,
        extra: impl IntoIterator<Item = Interference>,
    ) -> &[Interference] {
        self.terms.truncate(self.sums.len());
        self.terms.extend(extra);
        &self.terms
    }

    /// The terms with `own` (one of the terms added) taken out of its rate's sum, a rate
    /// left with nothing dropped: what the others of a level put on one of them.
    pub fn without(&self, own: Option<Interference>) -> impl Iterator<Item = Interference> + '_ {
        let at = own.and_then(|own| self.slot.get(&(own.period, own.jitter)).copied());
        self.terms
            .iter()
            .zip(&self.sums)
            .enumerate()
            .filter_map(move |(i, (term, &sum))| {
                let sum = match (at == Some(i), own) {
                    (true, Some(own)) => sum - u128::from(own.cost),
                    _ => sum,
                };
                (sum > 0).then_some(Interference {
                    cost: saturated(sum),
                    ..*term
                })
            })
    }
}

fn saturated(sum: u128) -> u64 {
    u64::try_from(sum).unwrap_or(u64::MAX)
}

/// How the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedPoint {
    /// The least fixed point `>= start`, at most `limit`.
    Found {
        /// The fixed point.
        value: u64,
        /// Iterations taken.
        steps: u64,
    },
    /// Every fixed point `>= start` exceeds `limit`.
    Exceeds {
        /// The first iterate above `limit` (a lower bound on the fixed point), or `u64::MAX`
        /// when there is no fixed point or it is beyond `u64::MAX`.
        value: u64,
        /// Iterations taken.
        steps: u64,
    },
}

const ONE: u128 = 1 << 64;

/// Plain iterations before the jumps start.
pub const PLAIN_STEPS: u64 = 32;

/// `floor(C * 2^64 / T)`: a term's utilisation rounded down, in units of 2^-64.
fn utilisation_low(term: &Interference) -> u128 {
    ((term.cost as u128) << 64) / term.period.max(1) as u128
}

/// `f(t)`, saturating far above `u64::MAX`.
fn demand<H: Interferes>(constant: u64, terms: &[H], t: u128) -> u128 {
    terms.iter().fold(constant as u128, |sum, h| {
        let h = h.term();
        // When the window fits 64 bits (the common case): no division for a window within one
        // period (one release), else a 64-bit one, and a 64 x 64-bit product that cannot
        // overflow 128 bits; a saturating 128-bit product only past that (a saturating
        // multiplication on every term was most of a 50,000-task `analyze`).
        let period = h.period.max(1);
        let work = match u64::try_from(t).ok().and_then(|t| t.checked_add(h.jitter)) {
            Some(0) => 0,
            Some(window) if window <= period => u128::from(h.cost),
            Some(window) => u128::from(window.div_ceil(period)) * u128::from(h.cost),
            None => (t + h.jitter as u128)
                .div_ceil(period as u128)
                .saturating_mul(h.cost as u128),
        };
        sum.saturating_add(work)
    })
}

/// `floor(numerator / (1 - u))` with `u = utilisation / 2^64 < 1`.
fn linear_root(numerator: u128, utilisation: u128) -> u128 {
    // numerator < 2^64 by the callers, so the shift cannot overflow.
    (numerator << 64) / (ONE - utilisation)
}

/// The least fixed point of `t = constant + sum_h C_h ceil((t + J_h) / T_h)` that is at least
/// `start`, searched up to `limit`. The caller guarantees `f(start) >= start` (for instance
/// `start = constant + sum C_h` when every term counts at least one release).
pub fn least_fixed_point<H: Interferes>(
    constant: u64,
    terms: &[H],
    start: u64,
    limit: u64,
) -> FixedPoint {
    search(constant, terms, start, limit, PLAIN_STEPS)
}

/// [`least_fixed_point`] with `plain_steps` plain iterations before the jumps (tests use 0
/// to exercise the jumps on small inputs).
fn search<H: Interferes>(
    constant: u64,
    terms: &[H],
    start: u64,
    limit: u64,
    plain_steps: u64,
) -> FixedPoint {
    let unbounded = |steps| FixedPoint::Exceeds {
        value: u64::MAX,
        steps,
    };
    let mut t = start as u128;
    let mut steps = 0u64;
    loop {
        if t > limit as u128 {
            return match u64::try_from(t) {
                Ok(value) if value < u64::MAX => FixedPoint::Exceeds { value, steps },
                _ => unbounded(steps),
            };
        }
        steps += 1;
        let next = demand(constant, terms, t);
        if next >= u64::MAX as u128 {
            return unbounded(steps);
        }
        if next == t {
            return FixedPoint::Found {
                value: t as u64,
                steps,
            };
        }
        if steps < plain_steps {
            t = next;
            continue;
        }
        if steps == plain_steps {
            let total_low: u128 = terms.iter().map(|h| utilisation_low(&h.term())).sum();
            let shifted = terms.iter().any(|h| {
                let h = h.term();
                h.cost > 0 && h.jitter > 0
            });
            // U >= 1 exactly: the rounded-down sum already reaches 1, or falls short of it
            // only by the rounding of its terms (thirds and sixths summing to 1) and the exact
            // sum does not.
            let full = total_low >= ONE
                || (total_low.saturating_add(terms.len() as u128) >= ONE
                    && !crate::bandwidth::sum_below_one(terms.iter().map(|h| {
                        let h = h.term();
                        (h.cost, h.period.max(1))
                    })));
            if full && (constant > 0 || shifted) {
                // f(t) >= constant + t + sum C_h J_h / T_h > t: no fixed point at all.
                return unbounded(steps);
            }
            if total_low < ONE && constant > 0 {
                // First jump: t* >= constant / (1 - U) (all terms linear).
                t = next.max(linear_root(constant as u128, total_low));
                continue;
            }
        }
        // Jump: terms whose ceiling steps up before `next` count linearly (set S).
        let mut kept = constant as u128;
        let mut linear = 0u128;
        for h in terms {
            let h = h.term();
            let period = h.period.max(1) as u128;
            let releases = (t + h.jitter as u128).div_ceil(period);
            if releases * period < next + h.jitter as u128 {
                linear += utilisation_low(&h);
            } else {
                kept += releases * h.cost as u128;
            }
        }
        let jump = if linear < ONE && kept < ONE {
            linear_root(kept, linear)
        } else {
            0
        };
        // `next > t`: f(t) >= t below the least fixed point, and `next != t`.
        t = next.max(jump);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(cost: u64, period: u64) -> Interference {
        Interference {
            cost,
            period,
            jitter: 0,
        }
    }

    /// `f(t)` as the search reads it: anything from `u64::MAX` up is unbounded.
    fn seen(terms: &[Interference], t: u128) -> u128 {
        demand(3, terms, t).min(u64::MAX as u128)
    }

    /// The plain iteration, for comparison (small inputs only).
    fn plain(constant: u64, terms: &[Interference], limit: u64) -> Option<u64> {
        let mut t = constant as u128;
        loop {
            if t > limit as u128 {
                return None;
            }
            let next = demand(constant, terms, t);
            if next == t {
                return Some(t as u64);
            }
            t = next;
        }
    }

    /// Buttazzo, Hard Real-Time Computing Systems, RTA example: tasks (1, 4), (2, 6) above a
    /// task of C = 3: 3 -> 3 + 1 + 2 = 6 -> 3 + 2 + 2 = 7 -> 3 + 2 + 4 = 9 -> 3 + 3 + 4 = 10
    /// -> 3 + 3 + 4 = 10. R = 10.
    #[test]
    fn a_hand_worked_fixed_point() {
        let terms = [term(1, 4), term(2, 6)];
        assert!(matches!(
            least_fixed_point(3, &terms, 3, 100),
            FixedPoint::Found { value: 10, .. }
        ));
        assert!(matches!(
            least_fixed_point(3, &terms, 3, 9),
            FixedPoint::Exceeds { .. }
        ));
    }

    /// A 0.99999 load (C = 99 999 in T = 100 000) in front of a budget of 10^7: the leftover is
    /// 1 per 100 000, so by hand the fixed point is b + k C with k = ceil(b / (T - C)) = 10^7:
    /// 10^7 + 10^7 * 99 999 = 10^12. The plain iteration needs about 1.6 million steps; the
    /// jumps take a handful.
    #[test]
    fn a_utilisation_near_one_converges_in_few_steps() {
        let terms = [term(99_999, 100_000)];
        match least_fixed_point(10_000_000, &terms, 10_000_000, u64::MAX - 1) {
            FixedPoint::Found { value, steps } => {
                assert_eq!(value, 1_000_000_000_000);
                assert!(steps <= PLAIN_STEPS + 4, "{steps} steps");
            }
            other => panic!("{other:?}"),
        }
    }

    /// U >= 1 with a positive constant has no fixed point: unbounded at once.
    #[test]
    fn a_full_load_has_no_fixed_point() {
        assert_eq!(
            least_fixed_point(1, &[term(5, 5)], 1, u64::MAX - 1),
            FixedPoint::Exceeds {
                value: u64::MAX,
                steps: PLAIN_STEPS
            }
        );
    }

    /// A full load whose terms do not sum to 1 in 2^-64 units (2/3 + 1/6 + 1/6: each rounded
    /// down, their sum falls 2^-63 short) is still U = 1 exactly, so unbounded at once. Read
    /// as U < 1, the first jump lands near 2^63 and each later step gains one unit: the search
    /// ran for ever.
    #[test]
    fn a_full_load_in_thirds_has_no_fixed_point() {
        let terms = [term(2, 3), term(1, 6), term(1, 6)];
        assert_eq!(
            least_fixed_point(1, &terms, 5, u64::MAX - 1),
            FixedPoint::Exceeds {
                value: u64::MAX,
                steps: PLAIN_STEPS
            }
        );
        // Without the constant the level's hyperperiod is a fixed point: f(6) = 4 + 1 + 1.
        assert_eq!(
            least_fixed_point(0, &terms, 4, u64::MAX - 1),
            FixedPoint::Found { value: 6, steps: 2 }
        );
    }

    proptest::proptest! {
        /// `f(t)` against the formula in plain 128-bit arithmetic: windows of zero, within one
        /// period, over several, and past 64 bits (near `u64::MAX`, or with a jitter).
        #[test]
        fn demand_is_the_request_bound(
            constant in 0u64..1_000,
            raw in proptest::collection::vec((0u64..=u64::MAX, 0u64..1_000, 0u64..3), 0..5),
            t in proptest::prop_oneof![0u128..3, 0u128..5_000, (u64::MAX as u128 - 3)..(u64::MAX as u128 + 3)],
        ) {
            let terms: Vec<Interference> = raw
                .iter()
                .map(|&(cost, period, jitter)| Interference { cost, period, jitter })
                .collect();
            let expected = terms.iter().fold(constant as u128, |sum, h| {
                let releases = (t + h.jitter as u128).div_ceil(h.period.max(1) as u128);
                sum.saturating_add(releases.saturating_mul(h.cost as u128))
            });
            proptest::prop_assert_eq!(demand(constant, &terms, t), expected);
        }

        /// The jumps never change the answer of the plain iteration.
        #[test]
        fn jumps_agree_with_the_plain_iteration(
            constant in 1u64..50,
            raw in proptest::collection::vec((1u64..20, 1u64..60, 0u64..30), 0..5),
            limit in 1u64..3000,
        ) {
            let terms: Vec<Interference> = raw
                .iter()
                .map(|&(c, t, jitter)| Interference { cost: c.min(t), period: t, jitter })
                .collect();
            let expected = plain(constant, &terms, limit);
            for plain_steps in [PLAIN_STEPS, 0, 1] {
                match search(constant, &terms, constant, limit, plain_steps) {
                    FixedPoint::Found { value, .. } => {
                        proptest::prop_assert_eq!(Some(value), expected)
                    }
                    FixedPoint::Exceeds { .. } => proptest::prop_assert_eq!(None, expected),
                }
            }
        }

        /// Summed by rate, with or without one of the terms, the demand is the separate
        /// terms' at every window, up to `u64::MAX`, where the search reads either as
        /// unbounded: few periods, so most terms share one.
        #[test]
        fn rate_sums_are_the_separate_terms(
            raw in proptest::collection::vec(
                (proptest::prop_oneof![0u64..20, (u64::MAX - 3)..=u64::MAX], 1u64..4, 0u64..2),
                1..8,
            ),
            left_out in 0usize..8,
            t in proptest::prop_oneof![0u128..20, (u64::MAX as u128 - 3)..(u64::MAX as u128 + 3)],
        ) {
            let terms: Vec<Interference> = raw
                .iter()
                .map(|&(cost, period, jitter)| Interference { cost, period, jitter })
                .collect();
            let mut sums = RateSums::default();
            for term in &terms {
                sums.add(*term);
            }
            let distinct: std::collections::HashSet<_> =
                terms.iter().map(|h| (h.period, h.jitter)).collect();
            proptest::prop_assert_eq!(sums.terms().len(), distinct.len());
            proptest::prop_assert_eq!(seen(sums.terms(), t), seen(&terms, t));
            let left_out = left_out % terms.len();
            let others: Vec<Interference> = terms
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != left_out)
                .map(|(_, h)| *h)
                .collect();
            let without: Vec<Interference> = sums.without(Some(terms[left_out])).collect();
            proptest::prop_assert_eq!(seen(&without, t), seen(&others, t));
            // The others after all the terms, in the sums' own buffer, which the next sum
            // then ignores.
            let after: Vec<Interference> = sums.followed_by(others.iter().copied()).to_vec();
            let all_and_others: Vec<Interference> = terms.iter().chain(&others).copied().collect();
            proptest::prop_assert_eq!(seen(&after, t), seen(&all_and_others, t));
            proptest::prop_assert_eq!(seen(sums.terms(), t), seen(&terms, t));
            // A new rate added after that (the periods here are 1 to 3).
            let new_rate = Interference { cost: 1, period: 5, jitter: 0 };
            let mut grown = sums.clone();
            grown.add(new_rate);
            let with_new: Vec<Interference> = terms.iter().copied().chain([new_rate]).collect();
            proptest::prop_assert_eq!(seen(grown.terms(), t), seen(&with_new, t));
            let mut merged = RateSums::default();
            merged.merge(&sums);
            merged.merge(&sums);
            let twice: Vec<Interference> = terms.iter().chain(&terms).copied().collect();
            proptest::prop_assert_eq!(seen(merged.terms(), t), seen(&twice, t));
        }
    }
}
