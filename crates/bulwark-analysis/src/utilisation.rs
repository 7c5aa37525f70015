//! Utilisation-based admission: the EDF bound U <= 1 and Liu and Layland's rate-monotonic
//! bound U <= n(2^(1/n) - 1), both for implicit-deadline periodic tasks.

use bulwark_core::Duration;

/// Total utilisation of (execution, period) pairs.
pub fn utilisation(tasks: &[(Duration, Duration)]) -> f64 {
    tasks
        .iter()
        .map(|(c, t)| c.as_nanos() as f64 / t.as_nanos().max(1) as f64)
        .sum()
}

/// Liu and Layland's bound for `n` tasks under rate-monotonic priorities.
pub fn liu_layland_bound(n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    let n = n as f64;
    n * (2f64.powf(1.0 / n) - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_classic_bounds() {
        assert!((liu_layland_bound(1) - 1.0).abs() < 1e-12);
        assert!((liu_layland_bound(2) - 0.828_427).abs() < 1e-6);
        assert!((liu_layland_bound(1000) - core::f64::consts::LN_2).abs() < 1e-3);
        let ms = Duration::from_millis;
        assert!((utilisation(&[(ms(2), ms(5)), (ms(4), ms(7))]) - (0.4 + 4.0 / 7.0)).abs() < 1e-12);
    }
}
