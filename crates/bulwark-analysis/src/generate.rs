//! Random task sets: UUniFast and UUniSort utilisations (Bini and Buttazzo, 2005), Stafford's
//! randfixedsum (Emberson, Stafford and Davis, 2010) for totals above one processor, log-uniform
//! and harmonic periods, and the CAmkES paper's evaluation sets (section 6.2).
//!
//! Utilisations are kept in parts per billion so that sets are exact integers end to end:
//! a task's execution time is `period * u / 10^9`, rounded down to a nanosecond.
//!
//! Every generator draws from a `ChaCha8Rng`, and the set builders take a seed: the same seed
//! gives the same set on every machine.

use bulwark_core::{Duration, Priority};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One part per billion of a processor.
pub const PPB: u64 = 1_000_000_000;

/// A generated task: execution time and period (deadline = period).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratedTask {
    /// Worst-case (and actual) execution time.
    pub execution: Duration,
    /// Period and relative deadline.
    pub period: Duration,
}

/// `n` utilisations summing to `total` (in parts per billion), uniformly distributed over the
/// simplex, by UUniFast: u_i = s_i - s_{i+1} with s_{i+1} = s_i * r^(1/(n-i)).
pub fn uunifast(n: usize, total_ppb: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    let mut sum = total_ppb as f64;
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        out.push((sum - next).round() as u64);
        sum = next;
    }
    if n > 0 {
        // The last share takes the rounding remainder so the total is exact.
        let used: u64 = out.iter().sum();
        out.push(total_ppb.saturating_sub(used));
    }
    out
}

/// `n` fractions, each in `[0, 1]`, summing to `total`, uniformly distributed over that slice
/// of the unit cube (the simplex `{u : 0 <= u_i <= 1, sum u_i = total}`), by Roger Stafford's
/// randfixedsum (2006), as Emberson, Stafford and Davis (WATERS 2010, section 2) use it to draw
/// task utilisations: unlike UUniFast it also works for `total > 1` (each task on at most one
/// processor). `total` is clamped to `[0, n]`.
///
/// The bounds are `a = 0`, `b = 1`, so Stafford's first step (rescale `[a, b]` to the unit
/// cube) and last step (rescale back) are the identity. The steps below are numbered as in
/// his MATLAB function `randfixedsum(n, m, s, a, b)` with `m = 1`. Time and memory grow as
/// `n * min(floor(total) + 2, n)` (the table of step 2).
pub fn randfixedsum_fractions(n: usize, total: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let total = if total.is_nan() {
        0.0
    } else {
        total.clamp(0.0, n as f64)
    };
    if n == 1 {
        return vec![total];
    }
    // Step 1: the unit slab `k <= s <= k + 1` that the hyperplane `sum x = s` cuts, with
    // `0 <= k <= n - 1`. The polytope is a union of simplices of the cube's triangulation.
    let k = (total.floor() as usize).min(n - 1);
    let s = total.clamp(k as f64, (k + 1) as f64);
    // `s1[m] = s - (k - m)` and `s2[m] = (k + n - m) - s`, m = 0..n: distances from `s` to the
    // integer levels below and above; never negative.
    let s1: Vec<f64> = (0..n).map(|m| s - k as f64 + m as f64).collect();
    let s2: Vec<f64> = (0..n).map(|m| (k + n - m) as f64 - s).collect();
    let table = randfixedsum_table(n, k, &s1, &s2);
    // Step 3: the sampling walk, from the last row of the table back to the first: at each
    // dimension `i` choose with the table's probability whether to step down a level (`e`),
    // then place the point within the chosen simplex by the `i`-th root of a uniform.
    let mut out = vec![0.0; n];
    let mut remaining = s;
    // The table column (from 1, as in the MATLAB code): starts at `k + 1`.
    let mut column = k + 1;
    let mut sum = 0.0;
    let mut product = 1.0;
    for i in (1..n).rev() {
        let choose: f64 = rng.random();
        let place: f64 = rng.random();
        let probability = column
            .checked_sub(1)
            .and_then(|c| table.get(i - 1).and_then(|row| row.get(c)))
            .copied()
            .unwrap_or(0.0);
        // `choose` is in [0, 1), so `choose < p` has probability exactly `p`.
        let step_down = choose < probability;
        let root = place.powf(1.0 / i as f64);
        sum += (1.0 - root) * product * remaining / (i + 1) as f64;
        product *= root;
        out[n - i - 1] = sum + if step_down { product } else { 0.0 };
        if step_down {
            remaining -= 1.0;
            column = column.saturating_sub(1);
        }
    }
    out[n - 1] = sum + product * remaining;
    // Step 4: a uniformly random permutation of the coordinates (Stafford sorts `n` uniforms;
    // a Fisher-Yates shuffle gives the same distribution over permutations). Without it the
    // coordinates come out in the walk's order, not exchangeable.
    for last in (1..n).rev() {
        let other = rng.random_range(0..=last);
        out.swap(last, other);
    }
    // Rounding can push a coordinate a hair outside the cube.
    for x in &mut out {
        *x = x.clamp(0.0, 1.0);
    }
    out
}

/// Step 2 of [`randfixedsum_fractions`]: the transition probabilities `t(i, j)` between the
/// simplices of the subdivision, from the volumes `w(i, j)` of the cross-sections in `i`
/// dimensions (Stafford's recurrence `w(i, j+1) = (w(i-1, j+1) s1(j) + w(i-1, j) s2(n-i+j)) / i`).
///
/// Row `r` of the result is MATLAB's `t(r + 1, :)`. Only columns up to `k + 2` are kept: the
/// walk starts at column `k + 1` and only moves down, and column `c` of a row needs only
/// columns `c` and `c - 1` of the row before. MATLAB starts from `w(1, 2) = realmax` so the
/// volumes do not underflow for a few hundred dimensions; here each row is rescaled to a
/// maximum of 1 instead (the probabilities are ratios within a row, so they do not change),
/// which never underflows.
fn randfixedsum_table(n: usize, k: usize, s1: &[f64], s2: &[f64]) -> Vec<Vec<f64>> {
    let width = (k + 2).min(n);
    // `w` columns 0..=width, MATLAB's columns 1..=width+1; row 1 is `w(1, 2) = 1`.
    let mut previous = vec![0.0; width + 1];
    previous[1] = 1.0;
    let mut table = Vec::with_capacity(n - 1);
    for i in 2..=n {
        let mut row = vec![0.0; width + 1];
        let mut probabilities = vec![0.0; width];
        let scale = i as f64;
        for c in 1..=i.min(width) {
            // tmp1 and tmp2 of the MATLAB code: the two simplices the cross-section joins.
            let from_same = previous[c] * s1[c - 1] / scale;
            let from_below = previous[c - 1] * s2[n - i + c - 1] / scale;
            let volume = from_same + from_below;
            row[c] = volume;
            // tiny keeps 0/0 away: then t is 0 on the left of the diagonal and 1 on the right.
            let guarded = volume + f64::MIN_POSITIVE;
            probabilities[c - 1] = if s2[n - i + c - 1] > s1[c - 1] {
                from_below / guarded
            } else {
                1.0 - from_same / guarded
            };
        }
        let largest = row.iter().copied().fold(0.0, f64::max);
        if largest > 0.0 {
            for v in &mut row {
                *v /= largest;
            }
        }
        table.push(probabilities);
        previous = row;
    }
    table
}

/// [`randfixedsum_fractions`] in parts per billion: `n` shares, each at most [`PPB`], summing
/// exactly to `total_ppb` (clamped to `n * PPB`). Each fraction is rounded down to a ppb, and
/// the units lost to rounding go one each to the shares with the largest remainders (ties to
/// the first), never past [`PPB`].
pub fn randfixedsum(n: usize, total_ppb: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    let capacity = (n as u64).saturating_mul(PPB);
    let total_ppb = total_ppb.min(capacity);
    let fractions = randfixedsum_fractions(n, total_ppb as f64 / PPB as f64, rng);
    let scaled: Vec<f64> = fractions.iter().map(|x| x * PPB as f64).collect();
    let mut shares: Vec<u64> = scaled.iter().map(|x| (x.floor() as u64).min(PPB)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        let remainder = |i: usize| scaled[i] - scaled[i].floor();
        remainder(b).total_cmp(&remainder(a)).then(a.cmp(&b))
    });
    let mut sum: u64 = shares.iter().sum();
    // Each pass moves every share that can move by one unit; the total is within `n` of the
    // target after rounding down, so one pass is the rule, and the loops end because the
    // target is within [0, n * PPB].
    while sum < total_ppb {
        for &i in &order {
            if sum < total_ppb && shares[i] < PPB {
                shares[i] += 1;
                sum += 1;
            }
        }
    }
    while sum > total_ppb {
        for &i in order.iter().rev() {
            if sum > total_ppb && shares[i] > 0 {
                shares[i] -= 1;
                sum -= 1;
            }
        }
    }
    shares
}

/// A period drawn log-uniformly from `min..=max`, rounded down to a multiple of `granule`.
pub fn log_uniform_period(
    min: Duration,
    max: Duration,
    granule: Duration,
    rng: &mut ChaCha8Rng,
) -> Duration {
    let (lo, hi) = (min.as_nanos().max(1) as f64, max.as_nanos().max(1) as f64);
    let raw = (lo.ln() + rng.random::<f64>() * (hi.ln() - lo.ln())).exp() as u64;
    let g = granule.as_nanos().max(1);
    Duration::from_nanos((raw / g).max(1) * g).max(min)
}

/// `n` implicit-deadline tasks with total utilisation about `total_ppb` (exact before the
/// execution times are rounded down to whole nanoseconds), periods log-uniform in
/// `min..=max` on a 1 us grid, from `seed`.
pub fn task_set(
    n: usize,
    total_ppb: u64,
    min: Duration,
    max: Duration,
    seed: u64,
) -> Vec<GeneratedTask> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shares = uunifast(n, total_ppb, &mut rng);
    shares
        .into_iter()
        .map(|u| {
            let period = log_uniform_period(min, max, Duration::from_micros(1), &mut rng);
            let execution = (period.as_nanos() as u128 * u as u128 / PPB as u128) as u64;
            GeneratedTask {
                execution: Duration::from_nanos(execution.max(1)),
                period,
            }
        })
        .collect()
}

/// `n` utilisations summing exactly to `total` (in parts per billion), uniformly distributed
/// over the simplex, by UUniSort (Bini and Buttazzo, 2005): draw `n - 1` cut points uniformly
/// in `0..=total`, sort them, and take the gaps between `0`, the sorted points and `total`.
///
/// UUniSort is not "UUniFast, then sorted": it is the sorting-based alternative to UUniFast
/// (quasi-linear because of the sort, as footnote 11 of the CAmkES paper says), with the same
/// distribution. The shares come out in gap order, not sorted by size; the evaluation's own
/// sort (by increasing execution time) is step (4) of [`uunisort_task_set`].
pub fn uunisort(n: usize, total_ppb: u64, rng: &mut ChaCha8Rng) -> Vec<u64> {
    if n == 0 {
        return Vec::new();
    }
    let mut cuts: Vec<u64> = (1..n).map(|_| rng.random_range(0..=total_ppb)).collect();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(n);
    let mut previous = 0;
    for cut in cuts.into_iter().chain(core::iter::once(total_ppb)) {
        out.push(cut - previous);
        previous = cut;
    }
    out
}

/// The harmonic chain `min, min * ratio, min * ratio^2, ...` up to `max` inclusive: every
/// period divides every longer one. Empty when `min` is zero or above `max`; a `ratio` below 2
/// is taken as 2 (a ratio of 1 would repeat `min` forever).
///
/// The CAmkES paper draws "from a set of harmonic values from 10 ms to 1 s" without listing
/// it; [`harmonic_periods`]`(10 ms, 1 s, 2)` is 10, 20, 40, 80, 160, 320 and 640 ms, the
/// chain with the most distinct values (hence priority levels) in that range.
pub fn harmonic_periods(min: Duration, max: Duration, ratio: u64) -> Vec<Duration> {
    let ratio = ratio.max(2);
    let mut out = Vec::new();
    let mut period = min;
    while !period.is_zero() && period <= max {
        out.push(period);
        match period.checked_mul(ratio) {
            Some(next) => period = next,
            None => break,
        }
    }
    out
}

/// A period drawn uniformly from `periods`; `None` when the set is empty.
pub fn pick_period(periods: &[Duration], rng: &mut ChaCha8Rng) -> Option<Duration> {
    if periods.is_empty() {
        return None;
    }
    Some(periods[rng.random_range(0..periods.len())])
}

/// `n` periods drawn independently by [`log_uniform_period`].
pub fn log_uniform_periods(
    n: usize,
    min: Duration,
    max: Duration,
    granule: Duration,
    rng: &mut ChaCha8Rng,
) -> Vec<Duration> {
    (0..n)
        .map(|_| log_uniform_period(min, max, granule, rng))
        .collect()
}

/// Rate-monotonic priorities with ties: the shorter the period, the higher the priority, and
/// equal periods share a priority (the CAmkES paper, section 3.2.1, and Appendix A). The
/// longest period gets priority 1 and each shorter distinct period one more, up to 254:
/// priority 255 stays free for non-preemptive critical sections (section 4.1). Past 254
/// distinct periods the shortest ones share 254, which keeps the order but not the ties-only-
/// for-equal-periods property that the hyperbolic bounds need.
pub fn rate_monotonic_priorities(periods: &[Duration]) -> Vec<Priority> {
    let mut distinct: Vec<Duration> = periods.to_vec();
    distinct.sort_unstable_by(|a, b| b.cmp(a));
    distinct.dedup();
    periods
        .iter()
        .map(|p| {
            let rank = distinct.partition_point(|d| d > p);
            Priority((rank + 1).min(254) as u8)
        })
        .collect()
}

/// How [`uunisort_task_set`] draws periods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodDistribution {
    /// Uniformly from [`harmonic_periods`]`(min, max, ratio)` (the paper's choice).
    Harmonic {
        /// The shortest period.
        min: Duration,
        /// The longest period allowed.
        max: Duration,
        /// The factor between consecutive periods.
        ratio: u64,
    },
    /// Log-uniformly in `min..=max` on a `granule` grid (Emberson et al., 2010).
    LogUniform {
        /// The shortest period.
        min: Duration,
        /// The longest period.
        max: Duration,
        /// The grid periods are rounded down to.
        granule: Duration,
    },
}

impl PeriodDistribution {
    /// The paper's periods: harmonic, from 10 ms to 1 s, doubling.
    pub const PAPER: PeriodDistribution = PeriodDistribution::Harmonic {
        min: Duration::from_millis(10),
        max: Duration::from_secs(1),
        ratio: 2,
    };

    /// `n` periods from this distribution (`min` repeated when a harmonic set is empty).
    pub fn draw(self, n: usize, rng: &mut ChaCha8Rng) -> Vec<Duration> {
        match self {
            PeriodDistribution::Harmonic { min, max, ratio } => {
                let set = harmonic_periods(min, max, ratio);
                (0..n)
                    .map(|_| pick_period(&set, rng).unwrap_or(min))
                    .collect()
            }
            PeriodDistribution::LogUniform { min, max, granule } => {
                log_uniform_periods(n, min, max, granule, rng)
            }
        }
    }
}

/// A generated task with its fixed priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioritisedTask {
    /// Execution time and period.
    pub task: GeneratedTask,
    /// Its rate-monotonic priority (larger is more important).
    pub priority: Priority,
}

/// A task set built as in the CAmkES paper's evaluation (section 6.2), from `seed`:
/// (1) utilisations by [`uunisort`] summing to `total_ppb`; (2) periods from `periods`;
/// (3) execution times `period * u` (rounded down, at least 1 ns) and
/// [`rate_monotonic_priorities`]; (4) tasks sorted by increasing execution time (stable, so
/// equal execution times keep their draw order).
pub fn uunisort_task_set(
    n: usize,
    total_ppb: u64,
    periods: PeriodDistribution,
    seed: u64,
) -> Vec<PrioritisedTask> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shares = uunisort(n, total_ppb, &mut rng);
    let drawn = periods.draw(n, &mut rng);
    let priorities = rate_monotonic_priorities(&drawn);
    let mut set: Vec<PrioritisedTask> = shares
        .into_iter()
        .zip(drawn)
        .zip(priorities)
        .map(|((u, period), priority)| {
            let execution = period.as_nanos() as u128 * u as u128 / PPB as u128;
            let execution = u64::try_from(execution).unwrap_or(u64::MAX);
            PrioritisedTask {
                task: GeneratedTask {
                    execution: Duration::from_nanos(execution.max(1)),
                    period,
                },
                priority,
            }
        })
        .collect();
    set.sort_by_key(|t| t.task.execution);
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn uunifast_shares_sum_exactly_to_the_total(n in 1usize..200, total in 1u64..4 * PPB, seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let shares = uunifast(n, total, &mut rng);
            prop_assert_eq!(shares.len(), n);
            prop_assert_eq!(shares.iter().sum::<u64>(), total);
        }

        #[test]
        fn uunisort_shares_sum_exactly_and_each_is_a_fraction(
            n in 1usize..200,
            total in 0u64..=PPB,
            seed: u64,
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let shares = uunisort(n, total, &mut rng);
            prop_assert_eq!(shares.len(), n);
            prop_assert_eq!(shares.iter().sum::<u64>(), total);
            let as_fraction: f64 = shares.iter().map(|&u| u as f64 / PPB as f64).sum();
            prop_assert!((as_fraction - total as f64 / PPB as f64).abs() <= 1e-9);
            prop_assert!(shares.iter().all(|&u| u <= PPB));
        }

        #[test]
        fn uunifast_shares_are_fractions_of_one_processor(n in 1usize..200, total in 0u64..=PPB, seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let shares = uunifast(n, total, &mut rng);
            prop_assert!(shares.iter().all(|&u| u <= PPB));
            let as_fraction: f64 = shares.iter().map(|&u| u as f64 / PPB as f64).sum();
            prop_assert!((as_fraction - total as f64 / PPB as f64).abs() <= 1e-9);
        }

        #[test]
        fn harmonic_periods_divide_each_other_and_stay_in_range(
            min_us in 1u64..100_000,
            max_us in 1u64..10_000_000,
            ratio in 0u64..6,
        ) {
            let (min, max) = (Duration::from_micros(min_us), Duration::from_micros(max_us));
            let set = harmonic_periods(min, max, ratio);
            prop_assert_eq!(set.is_empty(), min > max);
            for (i, a) in set.iter().enumerate() {
                prop_assert!(*a >= min && *a <= max);
                for b in &set[i..] {
                    prop_assert_eq!(b.as_nanos() % a.as_nanos(), 0);
                }
            }
            // The chain stops only when the next multiple would pass `max`.
            if let Some(last) = set.last() {
                prop_assert!(last.as_nanos().saturating_mul(ratio.max(2)) > max.as_nanos());
            }
        }

        #[test]
        fn log_uniform_periods_stay_in_range(n in 0usize..50, seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (min, max) = (Duration::from_millis(1), Duration::from_secs(1));
            let periods = log_uniform_periods(n, min, max, Duration::from_micros(1), &mut rng);
            prop_assert_eq!(periods.len(), n);
            prop_assert!(periods.iter().all(|p| *p >= min && *p <= max));
        }

        #[test]
        fn the_same_seed_gives_the_same_set(n in 0usize..30, total in 0u64..=PPB, seed: u64) {
            let log = PeriodDistribution::LogUniform {
                min: Duration::from_millis(1),
                max: Duration::from_millis(500),
                granule: Duration::from_micros(1),
            };
            for periods in [PeriodDistribution::PAPER, log] {
                let a = uunisort_task_set(n, total, periods, seed);
                prop_assert_eq!(&a, &uunisort_task_set(n, total, periods, seed));
                prop_assert_eq!(a.len(), n);
            }
            let mut a = ChaCha8Rng::seed_from_u64(seed);
            let mut b = ChaCha8Rng::seed_from_u64(seed);
            prop_assert_eq!(uunisort(n, total, &mut a), uunisort(n, total, &mut b));
        }

        #[test]
        fn paper_sets_are_sorted_harmonic_and_rate_monotonic(n in 1usize..30, total in 1u64..=PPB, seed: u64) {
            let set = uunisort_task_set(n, total, PeriodDistribution::PAPER, seed);
            let allowed = harmonic_periods(Duration::from_millis(10), Duration::from_secs(1), 2);
            for pair in set.windows(2) {
                prop_assert!(pair[0].task.execution <= pair[1].task.execution);
            }
            for a in &set {
                prop_assert!(allowed.contains(&a.task.period));
                prop_assert!(a.task.execution <= a.task.period);
                for b in &set {
                    // Shorter period <=> higher priority; equal periods <=> equal priorities.
                    prop_assert_eq!(
                        a.task.period.cmp(&b.task.period),
                        b.priority.cmp(&a.priority)
                    );
                }
            }
        }

        #[test]
        fn periods_stay_in_range_on_the_grid(seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (min, max) = (Duration::from_millis(10), Duration::from_millis(100));
            let p = log_uniform_period(min, max, Duration::from_micros(1), &mut rng);
            prop_assert!(p >= min && p <= max);
            prop_assert_eq!(p.as_nanos() % 1_000, 0);
        }
    }

    proptest! {
        #[test]
        fn randfixedsum_draws_sum_to_the_total_inside_the_unit_cube(
            n in 2usize..=20,
            position in 0.001f64..0.999,
            seed: u64,
        ) {
            // U anywhere in (0, n): above one processor too.
            let total = position * n as f64;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let fractions = randfixedsum_fractions(n, total, &mut rng);
            prop_assert_eq!(fractions.len(), n);
            prop_assert!((fractions.iter().sum::<f64>() - total).abs() <= 1e-9);
            prop_assert!(fractions.iter().all(|u| (0.0..=1.0).contains(u)));
            let total_ppb = (total * PPB as f64).round() as u64;
            let shares = randfixedsum(n, total_ppb, &mut rng);
            prop_assert_eq!(shares.iter().sum::<u64>(), total_ppb);
            prop_assert!(shares.iter().all(|&u| u <= PPB));
        }

        #[test]
        fn randfixedsum_at_the_ends_of_the_cube(n in 1usize..=20, seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // Sum 0: every share 0; sum n: every share a whole processor.
            prop_assert!(randfixedsum(n, 0, &mut rng).iter().all(|&u| u == 0));
            prop_assert!(randfixedsum(n, n as u64 * PPB, &mut rng).iter().all(|&u| u == PPB));
        }
    }

    /// Mean and variance of the first coordinate over `rounds` draws.
    fn first_coordinate_moments(n: usize, total: f64, seed: u64, rounds: usize) -> (f64, f64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let draws: Vec<f64> = (0..rounds)
            .map(|_| randfixedsum_fractions(n, total, &mut rng)[0])
            .collect();
        let mean = draws.iter().sum::<f64>() / rounds as f64;
        let variance = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / rounds as f64;
        (mean, variance)
    }

    /// With two tasks the simplex is the segment `u_1 + u_2 = U`, `u_i in [0, 1]`, so `u_1` is
    /// uniform on `[max(0, U - 1), min(1, U)]`: mean the midpoint, variance width^2 / 12.
    #[test]
    fn randfixedsum_with_two_tasks_is_uniform_on_the_segment() {
        for (total, seed) in [(0.5, 1), (1.0, 2), (1.3, 3), (1.9, 4)] {
            let (low, high) = (f64::max(0.0, total - 1.0), f64::min(1.0, total));
            let (mean, variance) = first_coordinate_moments(2, total, seed, 20_000);
            let expected_variance = (high - low) * (high - low) / 12.0;
            assert!(
                (mean - (low + high) / 2.0).abs() < 0.01,
                "U {total}: mean {mean}"
            );
            assert!(
                (variance / expected_variance - 1.0).abs() < 0.1,
                "U {total}: variance {variance}, uniform {expected_variance}"
            );
        }
    }

    /// n = 3, U = 1: the cube's walls do not bind, so the draw is uniform on the standard
    /// simplex, Dirichlet(1, 1, 1), whose marginal is Beta(1, 2): mean 1/3, variance
    /// a b / ((a + b)^2 (a + b + 1)) = 2 / 36 = 1/18. With U = 2 the map u -> 1 - u takes the
    /// slice onto that simplex, so the marginal mean is 2/3 with the same variance.
    #[test]
    fn randfixedsum_with_three_tasks_has_the_dirichlet_marginal() {
        for (total, expected_mean, seed) in [(1.0, 1.0 / 3.0, 5), (2.0, 2.0 / 3.0, 6)] {
            let (mean, variance) = first_coordinate_moments(3, total, seed, 20_000);
            assert!(
                (mean - expected_mean).abs() < 0.01,
                "U {total}: mean {mean}"
            );
            assert!(
                (variance * 18.0 - 1.0).abs() < 0.1,
                "U {total}: variance {variance}, Beta(1, 2) 1/18"
            );
        }
    }

    #[test]
    fn randfixedsum_is_deterministic_from_the_seed() {
        let mut a = ChaCha8Rng::seed_from_u64(9);
        let mut b = ChaCha8Rng::seed_from_u64(9);
        assert_eq!(
            randfixedsum(10, 3_500_000_000, &mut a),
            randfixedsum(10, 3_500_000_000, &mut b)
        );
    }

    #[test]
    fn uunifast_is_uniform_enough_that_the_mean_share_is_total_over_n() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 10;
        let mut first = 0u64;
        let rounds = 20_000;
        for _ in 0..rounds {
            first += uunifast(n, PPB, &mut rng)[0];
        }
        let mean = first / rounds;
        // Each share has mean total/n = 0.1; 20 000 rounds put the sample mean within 2%.
        assert!(
            (98_000_000..=102_000_000).contains(&mean),
            "mean share {mean}"
        );
    }

    #[test]
    fn uunisort_is_uniform_enough_that_the_mean_share_is_total_over_n() {
        // Unlike a sorted UUniFast, the first share is not the smallest: its mean is total/n.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 10;
        let rounds = 20_000;
        let first: u64 = (0..rounds).map(|_| uunisort(n, PPB, &mut rng)[0]).sum();
        let mean = first / rounds;
        assert!(
            (98_000_000..=102_000_000).contains(&mean),
            "mean share {mean}"
        );
    }

    /// 10 ms doubling up to 1 s: 10, 20, 40, 80, 160, 320, 640 (1280 > 1000).
    #[test]
    fn the_paper_harmonic_set() {
        let ms = Duration::from_millis;
        assert_eq!(
            harmonic_periods(ms(10), Duration::from_secs(1), 2),
            [10, 20, 40, 80, 160, 320, 640].map(ms)
        );
        // Ratio 10: 10, 100, 1000 ms; a ratio of 1 is taken as 2.
        assert_eq!(
            harmonic_periods(ms(10), Duration::from_secs(1), 10),
            [10, 100, 1000].map(ms)
        );
        assert_eq!(harmonic_periods(ms(10), ms(45), 1), [10, 20, 40].map(ms));
        assert!(harmonic_periods(Duration::ZERO, ms(45), 2).is_empty());
        assert!(harmonic_periods(ms(50), ms(45), 2).is_empty());
    }

    /// Periods 40, 10, 40, 20 ms: distinct 40 > 20 > 10 get 1, 2, 3.
    #[test]
    fn rate_monotonic_priorities_by_hand() {
        let ms = Duration::from_millis;
        assert_eq!(
            rate_monotonic_priorities(&[ms(40), ms(10), ms(40), ms(20)]),
            [Priority(1), Priority(3), Priority(1), Priority(2)]
        );
        assert!(rate_monotonic_priorities(&[]).is_empty());
    }

    #[test]
    fn a_generated_set_has_the_requested_utilisation() {
        let set = task_set(
            100,
            900_000_000,
            Duration::from_millis(10),
            Duration::from_millis(100),
            1,
        );
        let u: f64 = set
            .iter()
            .map(|t| t.execution.as_nanos() as f64 / t.period.as_nanos() as f64)
            .sum();
        assert!((u - 0.9).abs() < 1e-4, "utilisation {u}");
    }
}
