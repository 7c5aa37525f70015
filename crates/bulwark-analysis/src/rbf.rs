//! Request-bound functions of servers under fixed priority (SPR paper, Eq. 1): the most
//! processor time a server can take in any window of length `delta`.
//!
//! `RBF(delta) = alpha(delta) * b`, with `alpha = ceil(delta / p)` for a sporadic server and
//! `alpha = ceil((delta + (p - b)) / p)` for a deferrable server, whose extra term is the
//! "double hit" (the errata in the seeds' README restore this formula).

use bulwark_core::reservation::Reservation;
use bulwark_core::Duration;

/// How a server replenishes its budget, which decides its request-bound function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    /// Sporadic server: each consumed chunk comes back one period after its activation.
    Sporadic,
    /// Deferrable server: the full budget comes back at every multiple of the period.
    Deferrable,
}

/// `alpha(delta)`: how many budgets a server can use in a window of length `delta`.
pub fn alpha(kind: ServerKind, delta: Duration, r: Reservation) -> u64 {
    let p = r.period.as_nanos().max(1) as u128;
    let d = delta.as_nanos() as u128;
    let span = match kind {
        ServerKind::Sporadic => d,
        // Eq. 1, deferrable server: (delta + (p - b)) / p, rounded up.
        ServerKind::Deferrable => d + (p - (r.budget.as_nanos() as u128).min(p)),
    };
    u64::try_from(span.div_ceil(p)).unwrap_or(u64::MAX)
}

/// `RBF(delta) = alpha(delta) * b`.
pub fn rbf(kind: ServerKind, delta: Duration, r: Reservation) -> Duration {
    r.budget.saturating_mul(alpha(kind, delta, r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;

    /// b = 2, p = 5 by hand: sporadic ceil(d/5) * 2; deferrable ceil((d + 3)/5) * 2. Eq. 1's
    /// deferrable formula gives b at delta = 0; the response-time iteration only uses delta > 0.
    #[test]
    fn hand_computed_values() {
        let r = Reservation::new(ms(2), ms(5));
        let cases = [
            (0, 0, 2),
            (1, 2, 2),
            (2, 2, 2),
            (3, 2, 4),
            (5, 2, 4),
            (7, 4, 4),
            (8, 4, 6),
            (14, 6, 8),
        ];
        for (d, sporadic, deferrable) in cases {
            assert_eq!(
                rbf(ServerKind::Sporadic, ms(d), r),
                ms(sporadic),
                "sporadic, delta {d}"
            );
            assert_eq!(
                rbf(ServerKind::Deferrable, ms(d), r),
                ms(deferrable),
                "deferrable, delta {d}"
            );
        }
    }

    /// The double hit costs at most one extra budget, and nothing when b = p.
    #[test]
    fn the_double_hit_is_at_most_one_budget() {
        for (b, p) in [(1u64, 10u64), (3, 7), (5, 5)] {
            let r = Reservation::new(ms(b), ms(p));
            for d in 0..40 {
                let s = alpha(ServerKind::Sporadic, ms(d), r);
                let df = alpha(ServerKind::Deferrable, ms(d), r);
                assert!(df == s || df == s + 1, "b {b} p {p} delta {d}");
                if b == p {
                    assert_eq!(df, s);
                }
            }
        }
    }
}
