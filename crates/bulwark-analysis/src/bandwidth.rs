//! Admission of EDF bandwidth servers (CBS, and VBS caps): the servers of a core are
//! schedulable exactly when their bandwidths sum to at most 1 (Abeni and Buttazzo, Theorem 1;
//! the VBS paper's O(1) admission test is the same sum over the caps).
//!
//! The sum is kept as an exact fraction, so a set that fills the processor exactly is
//! admitted and one that exceeds it by a nanosecond in a year is not. The fraction lives in
//! `u128` while its denominator fits; past that (long, pairwise coprime periods make the
//! common denominator the product of up to 64 bits per server) the verdict is still decided
//! exactly, by a big-integer rational sum (`num-rational` over `num-bigint`): its size grows
//! by at most 64 bits per server, so the work is polynomial in the number of servers.

use std::cmp::Ordering;

use bulwark_core::Duration;
use num_bigint::BigUint;
use num_rational::Ratio;
use num_traits::{One, ToPrimitive, Zero};

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
    /// False when the exact total, in lowest terms, does not fit in 128 bits and `total` is a
    /// safe upper bound instead (each term rounded up to a multiple of 2^-64). The verdict
    /// `admitted` is exact either way.
    pub exact: bool,
    /// Total at most 1, decided exactly.
    pub admitted: bool,
}

/// The EDF test `sum Q_i / T_i <= 1` over `(budget, period)` pairs. Zero periods are
/// refused by validation before this is called; here they count as a full processor.
pub fn admit(servers: &[(Duration, Duration)]) -> Admission {
    let exact = servers.iter().try_fold(Bandwidth::ZERO, |sum, &(q, t)| {
        Bandwidth::of(q, t).and_then(|b| sum.checked_add(b))
    });
    if let Some(total) = exact {
        return Admission {
            total,
            exact: true,
            admitted: total.at_most_one(),
        };
    }
    // The u128 sum overflowed: sum again as big-integer rationals, which cannot overflow.
    let big = big_total(servers);
    let admitted = big <= Ratio::one();
    if let (Some(numerator), Some(denominator)) = (big.numer().to_u128(), big.denom().to_u128()) {
        // Lowest terms fit after all (e.g. a total of exactly 1).
        return Admission {
            total: Bandwidth {
                numerator,
                denominator,
            },
            exact: true,
            admitted,
        };
    }
    // For the report only: fixed point with 64 fractional bits, each term rounded up, so the
    // shown total is never below the exact one.
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
        admitted,
    }
}

/// Whether `sum C_i / T_i <= 1` over `(C, T)` pairs of integers, exactly, without building
/// the fraction: the sum is bracketed between its terms rounded down and rounded up to
/// multiples of 2^-64 (one division per term), and only a sum within `n * 2^-64` of 1 falls
/// back to the exact sum. A zero period counts as a full processor, as in [`admit`].
pub fn sum_at_most_one<I>(terms: I) -> bool
where
    I: Iterator<Item = (u64, u64)> + Clone,
{
    sum_against_one(terms) != Ordering::Greater
}

/// Whether `sum C_i / T_i < 1` exactly, as [`sum_at_most_one`] decides `<= 1`.
pub fn sum_below_one<I>(terms: I) -> bool
where
    I: Iterator<Item = (u64, u64)> + Clone,
{
    sum_against_one(terms) == Ordering::Less
}

/// `sum C_i / T_i` compared with 1, exactly (see [`sum_at_most_one`]).
fn sum_against_one<I>(terms: I) -> Ordering
where
    I: Iterator<Item = (u64, u64)> + Clone,
{
    const ONE: u128 = 1 << 64;
    let (mut low, mut high) = (0u128, 0u128);
    for (work, period) in terms.clone() {
        if period == 0 {
            low = low.saturating_add(ONE);
            high = high.saturating_add(ONE);
            continue;
        }
        let scaled = (work as u128) << 64;
        let floor = scaled / period as u128;
        let exact = floor * period as u128 == scaled;
        low = low.saturating_add(floor);
        high = high.saturating_add(floor + u128::from(!exact));
    }
    if high < ONE {
        return Ordering::Less;
    }
    if low > ONE {
        return Ordering::Greater;
    }
    if low == high {
        // Every term exact in 2^-64 units: the bracket is the sum.
        return low.cmp(&ONE);
    }
    let pairs: Vec<(Duration, Duration)> = terms
        .map(|(work, period)| (Duration::from_nanos(work), Duration::from_nanos(period)))
        .collect();
    big_total(&pairs).cmp(&Ratio::one())
}

/// `sum Q_i / T_i` exactly, as a big-integer fraction in lowest terms (a zero period counts
/// as a full processor, as in [`admit`]). Summed pairwise, as a balanced tree: each addition
/// reduces by a gcd whose cost grows with the square of its operands' size, so adding each
/// term to one running total cost O(n^3) limb steps (14 s for 10,000 coprime periods), and
/// the tree, whose operands only grow large near its root, O(n^2).
fn big_total(servers: &[(Duration, Duration)]) -> Ratio<BigUint> {
    let mut level: Vec<Ratio<BigUint>> = servers.iter().map(|&(q, t)| big_term(q, t)).collect();
    while level.len() > 1 {
        let mut sums = Vec::with_capacity(level.len().div_ceil(2));
        let mut terms = level.into_iter();
        while let Some(first) = terms.next() {
            sums.push(match terms.next() {
                Some(second) => first + second,
                None => first,
            });
        }
        level = sums;
    }
    level.pop().unwrap_or_else(Ratio::zero)
}

/// `Q / T` as a big-integer fraction; a zero period is a full processor.
fn big_term(budget: Duration, period: Duration) -> Ratio<BigUint> {
    if period.is_zero() {
        Ratio::one()
    } else {
        Ratio::new(
            BigUint::from(budget.as_nanos()),
            BigUint::from(period.as_nanos()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;
    use proptest::prelude::*;

    proptest! {
        /// The pairwise tree sums to the same fraction as adding one term at a time, for any
        /// count of terms (odd levels carry their last term up), zero periods included.
        #[test]
        fn tree_sum_is_the_running_sum(
            pairs in prop::collection::vec((0u64..=u64::MAX / 2, 0u64..=u64::MAX / 2), 0..24)
        ) {
            let servers: Vec<(Duration, Duration)> = pairs
                .iter()
                .map(|&(q, t)| (Duration::from_nanos(q), Duration::from_nanos(if t % 5 == 0 { 0 } else { t })))
                .collect();
            let running = servers
                .iter()
                .fold(Ratio::zero(), |sum: Ratio<BigUint>, &(q, t)| sum + big_term(q, t));
            prop_assert_eq!(big_total(&servers), running);
        }
    }

    /// `sum_below_one` and `sum_at_most_one` at and beside 1, where every term is inexact in
    /// 2^-64 units (thirds, sixths), exact (halves, quarters), or a zero period.
    #[test]
    fn sums_against_one_at_the_boundary() {
        let thirds = [(2, 3), (1, 6), (1, 6)];
        assert!(sum_at_most_one(thirds.into_iter()) && !sum_below_one(thirds.into_iter()));
        let short = [(2, 3), (1, 6), (1, 7)];
        assert!(sum_below_one(short.into_iter()));
        let over = [(2, 3), (1, 6), (1, 5)];
        assert!(!sum_at_most_one(over.into_iter()) && !sum_below_one(over.into_iter()));
        let halves = [(1, 2), (1, 4), (1, 4)];
        assert!(sum_at_most_one(halves.into_iter()) && !sum_below_one(halves.into_iter()));
        assert!(sum_below_one([(1, 2), (1, 4)].into_iter()));
        assert!(!sum_below_one([(0, 0)].into_iter()));
        assert!(sum_below_one(std::iter::empty()));
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

    /// Three pairwise coprime p, q, r near 2^50 and 2^51 (coprime to 3 too), periods 3p, 3q,
    /// 3r: the terms 1/(3p) + (p-1)/(3p) + ... add up to 1/3 + 1/3 + 1/3 = 1 exactly, by hand,
    /// but the common denominator of the first three terms is 3pqr, about 2^153, which
    /// overflows u128. The set fills the processor exactly and must be admitted; one more
    /// nanosecond of budget must not be.
    #[test]
    fn a_total_of_exactly_one_is_admitted_past_128_bits() {
        let (p, q, r) = (
            (1u64 << 50) - 3,
            (1u64 << 50) + 1,
            2_251_799_813_685_247u64, // 2^51 - 1, coprime to p, q and 3
        );
        let ns = Duration::from_nanos;
        let mut servers = vec![
            (ns(1), ns(3 * p)),
            (ns(1), ns(3 * q)),
            (ns(1), ns(3 * r)),
            (ns(p - 1), ns(3 * p)),
            (ns(q - 1), ns(3 * q)),
            (ns(r - 1), ns(3 * r)),
        ];
        let full = admit(&servers);
        assert!(full.admitted, "{full:?}");
        assert!(full.exact);
        assert_eq!(
            full.total,
            Bandwidth {
                numerator: 1,
                denominator: 1
            }
        );
        servers[5].0 = ns(r);
        let over = admit(&servers);
        assert!(!over.admitted, "1 + 1/(3r) > 1: {over:?}");
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
