//! Random task sets: UUniFast utilisations (Bini and Buttazzo, 2005) and log-uniform periods.
//!
//! Utilisations are kept in parts per billion so that sets are exact integers end to end:
//! a task's execution time is `period * u / 10^9`, rounded down to a nanosecond.

use bulwark_core::Duration;
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
        fn periods_stay_in_range_on_the_grid(seed: u64) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (min, max) = (Duration::from_millis(10), Duration::from_millis(100));
            let p = log_uniform_period(min, max, Duration::from_micros(1), &mut rng);
            prop_assert!(p >= min && p <= max);
            prop_assert_eq!(p.as_nanos() % 1_000, 0);
        }
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
