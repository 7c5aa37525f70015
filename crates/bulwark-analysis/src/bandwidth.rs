//! Admission of EDF bandwidth servers (CBS, and VBS caps): the servers of a core are
//! schedulable exactly when their bandwidths sum to at most 1 (Abeni and Buttazzo, Theorem 1;
//! the VBS paper's O(1) admission test is the same sum over the caps).
//!
//! The sum is kept as an exact fraction, so a set that fills the processor exactly is
//! admitted and one that exceeds it by a nanosecond in a year is not.

use bulwark_core::Duration;

/// A fraction `numerator / denominator` with `denominator > 0`, in lowest terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    /// The numerator.
    pub numerator: u128,
    /// The denominator (positive).
    pub denominator: u128,
}

impl Bandwidth {
    /// Zero.
    pub const ZERO: Bandwidth = Bandwidth {
        numerator: 0,
        denominator: 1,
    };

    /// `budget / period`; `None` when the period is zero.
    pub fn of(budget: Duration, period: Duration) -> Option<Bandwidth> {
        (!period.is_zero()).then(|| reduced(budget.as_nanos() as u128, period.as_nanos() as u128))
    }

    /// The exact sum, or `None` if the common denominator does not fit in 128 bits.
    pub fn checked_add(self, other: Bandwidth) -> Option<Bandwidth> {
        let g = gcd(self.denominator, other.denominator);
        let denominator = (self.denominator / g).checked_mul(other.denominator)?;
        let numerator = self
            .numerator
            .checked_mul(denominator / self.denominator)?
            .checked_add(
                other
                    .numerator
                    .checked_mul(denominator / other.denominator)?,
            )?;
        Some(reduced(numerator, denominator))
    }

    /// True when at most 1.
    pub fn at_most_one(self) -> bool {
        self.numerator <= self.denominator
    }

    /// The value as a float, for reports only.
    pub fn as_f64(self) -> f64 {
        self.numerator as f64 / self.denominator as f64
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

fn reduced(numerator: u128, denominator: u128) -> Bandwidth {
    let g = gcd(numerator, denominator);
    Bandwidth {
        numerator: numerator / g,
        denominator: denominator / g,
    }
}

/// The verdict on one core's servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The total bandwidth, exact when `exact`.
    pub total: Bandwidth,
    /// False when the exact sum overflowed and `total` is a safe upper bound instead
    /// (each term rounded up to a multiple of 2^-64).
    pub exact: bool,
    /// Total at most 1.
    pub admitted: bool,
}

/// The EDF test `sum Q_i / T_i <= 1` over `(budget, period)` pairs. Zero periods are
/// refused by validation before this is called; here they count as a full processor.
pub fn admit(servers: &[(Duration, Duration)]) -> Admission {
    let exact = servers.iter().try_fold(Bandwidth::ZERO, |sum, &(q, t)| {
        Bandwidth::of(q, t).and_then(|b| sum.checked_add(b))
    });
    match exact {
        Some(total) => Admission {
            total,
            exact: true,
            admitted: total.at_most_one(),
        },
        None => {
            // Fixed point with 64 fractional bits, each term rounded up: never admits a set
            // the exact test would reject.
            const ONE: u128 = 1 << 64;
            let sum: u128 = servers
                .iter()
                .map(|&(q, t)| {
                    let t = t.as_nanos().max(1) as u128;
                    (q.as_nanos() as u128 * ONE).div_ceil(t)
                })
                .fold(0u128, u128::saturating_add);
            Admission {
                total: reduced(sum, ONE),
                exact: false,
                admitted: sum <= ONE,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn exact_sums_decide_the_boundary() {
        // 1/3 + 1/3 + 1/3 = 1 exactly: admitted, though 0.333.. in floats may not sum to 1.
        let full = admit(&[(ms(1), ms(3)), (ms(2), ms(6)), (ms(3), ms(9))]);
        assert_eq!(
            full.total,
            Bandwidth {
                numerator: 1,
                denominator: 1
            }
        );
        assert!(full.exact && full.admitted);
        // One nanosecond more over a 9 ms period: 1 + 1/9e6, not admitted.
        let over = admit(&[
            (ms(1), ms(3)),
            (ms(2), ms(6)),
            (Duration::from_nanos(3_000_001), ms(9)),
        ]);
        assert!(!over.admitted);
        assert_eq!(
            over.total,
            Bandwidth {
                numerator: 9_000_001,
                denominator: 9_000_000
            }
        );
        assert!(admit(&[]).admitted);
    }

    #[test]
    fn an_overflowing_sum_falls_back_to_a_safe_bound() {
        // Forty pairwise coprime-ish large periods: the common denominator overflows.
        let servers: Vec<(Duration, Duration)> = (0..40)
            .map(|i| {
                (
                    Duration::from_nanos(1),
                    Duration::from_nanos(1_000_000_007 + 2 * i),
                )
            })
            .collect();
        let a = admit(&servers);
        assert!(!a.exact);
        assert!(a.admitted, "40 ns per second is far below 1");
        let full: Vec<(Duration, Duration)> = (0..40)
            .map(|i| {
                (
                    Duration::from_nanos(1_000_000_007 + 2 * i),
                    Duration::from_nanos(1_000_000_007 + 2 * i),
                )
            })
            .collect();
        assert!(!admit(&full).admitted);
    }
}
