//! Global EDF on `m` identical cores: Goossens, Funk and Baruah's utilisation test for
//! implicit-deadline sporadic tasks ("Priority-driven scheduling of periodic task systems on
//! multiprocessors", Real-Time Systems 25(2-3), 2003): the set is schedulable if
//! `U <= m - (m - 1) U_max`, with `U` the total and `U_max` the largest utilisation. The test
//! is sufficient only: a set that fails it may still be schedulable.
//!
//! A cluster of the MC-IPC paper (section III) orders its sporadic reservations by EDF, each
//! reservation `(e, p)` with deadline replenishment time + `p`: as a task set, implicit-deadline
//! sporadic tasks `(e, p)`, which is what the test takes.
//!
//! The verdict is decided exactly, over big-integer fractions, so a set exactly on the bound
//! passes and one a nanosecond over it does not.
//!
//! **Cores that lose time** ([`bcl`]): a reclamation with interrupts masked takes one core for
//! up to `M`, and GFB has no term for that. Bertogna, Cirinei and Lipari's interference test
//! ("Improved schedulability analysis of EDF on multiprocessor platforms", ECRTS 2005; in
//! discrete time as in `crate::global_fp`) has one: a job of `k` misses only if, in more than
//! `D_k - C_k` of its window, every core runs something else; a task `i` can take at most its
//! EDF workload in that window, `W_i(D_k) = N_i C_i + min(C_i, max(0, D_k - N_i T_i))` with
//! `N_i = max(0, floor((D_k - D_i) / T_i) + 1)` (only jobs with deadlines in the window
//! precede it), and a termination's stretches, one core at a time, at most `M`. So the set
//! is schedulable if for every `k`
//!
//! ```text
//! sum_{i != k} min(W_i(D_k), D_k - C_k + 1) + sum_masks min(M, D_k - C_k + 1) < m (D_k - C_k + 1)
//! ```
//!
//! Sufficient only, and neither it nor GFB dominates the other; the cluster analysis runs it
//! where masks are to be counted.

use bulwark_core::Duration;
use num_bigint::BigUint;
use num_rational::Ratio;
use num_traits::Zero;

use crate::bandwidth::{self, Bandwidth};
use crate::slot_supply::SlotSupply;

/// The test's inputs and verdict for one set on `m` cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gfb {
    /// The cores, `m`.
    pub cores: u16,
    /// `U`, the total bandwidth (exact when `total_exact`, else a safe upper bound; see
    /// [`bandwidth::Admission`]).
    pub total: Bandwidth,
    /// False when `U` in lowest terms does not fit in 128 bits (the verdict is exact anyway).
    pub total_exact: bool,
    /// `U_max`, the largest single bandwidth (zero for an empty set).
    pub largest: Bandwidth,
    /// The bound `m - (m - 1) U_max` as `bound_numerator / largest.denominator`; negative
    /// when `U_max` exceeds `m / (m - 1)`.
    pub bound_numerator: i128,
    /// `U <= m - (m - 1) U_max`, decided exactly.
    pub schedulable: bool,
}

impl Gfb {
    /// The bound `m - (m - 1) U_max` as a float, for reports only.
    pub fn bound_as_f64(&self) -> f64 {
        self.bound_numerator as f64 / self.largest.denominator as f64
    }
}

/// One `(budget, period)`'s bandwidth; a zero period counts as a full core, as in
/// [`bandwidth::admit`] (validation refuses it before this is called).
fn share(budget: Duration, period: Duration) -> Bandwidth {
    Bandwidth::of(budget, period).unwrap_or(Bandwidth {
        numerator: 1,
        denominator: 1,
    })
}

/// True when `a < b`. Numerators and denominators come from nanosecond counts (at most
/// 2^64), so the cross products fit in `u128`.
fn less(a: Bandwidth, b: Bandwidth) -> bool {
    a.numerator * b.denominator < b.numerator * a.denominator
}

/// Goossens, Funk and Baruah's test for the implicit-deadline sporadic tasks `(e, p)` of
/// `tasks` on `cores` cores (`m >= 1`: no set passes on none).
pub fn gfb(tasks: &[(Duration, Duration)], cores: u16) -> Gfb {
    let admission = bandwidth::admit(tasks);
    let largest = tasks
        .iter()
        .map(|&(budget, period)| share(budget, period))
        .fold(Bandwidth::ZERO, |max, b| if less(max, b) { b } else { max });
    let m = i128::from(cores);
    // m - (m - 1) n / d = (m d - (m - 1) n) / d, with n, d < 2^64 and m < 2^16.
    let bound_numerator = m * largest.denominator as i128 - (m - 1) * largest.numerator as i128;
    // U + (m - 1) U_max <= m, exactly, so that no negative fraction is needed.
    let total: Ratio<BigUint> = tasks.iter().fold(Ratio::zero(), |sum, &(budget, period)| {
        let term = share(budget, period);
        sum + Ratio::new(
            BigUint::from(term.numerator),
            BigUint::from(term.denominator),
        )
    });
    let schedulable = cores > 0
        && total
            + Ratio::new(
                BigUint::from(largest.numerator) * BigUint::from(cores - 1),
                BigUint::from(largest.denominator),
            )
            <= Ratio::from_integer(BigUint::from(cores));
    Gfb {
        cores,
        total: admission.total,
        total_exact: admission.exact,
        largest,
        bound_numerator,
        schedulable,
    }
}

/// Bertogna, Cirinei and Lipari's test's verdict for one set on `m` cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bcl {
    /// The cores, `m`.
    pub cores: u16,
    /// The first task (index into the set) whose condition fails, if one does.
    pub failing: Option<usize>,
    /// Every task's condition holds (false on no cores).
    pub schedulable: bool,
}

/// EDF's workload bound of the implicit-deadline task `(C_i, T_i)` in a window of length `d`
/// that ends at the deadline of the job it delays: `N C_i + min(C_i, max(0, d - N T_i))`,
/// `N = max(0, floor((d - T_i) / T_i) + 1)`.
fn edf_workload(d: u128, (c, t): (u128, u128)) -> u128 {
    let jobs = if d >= t { (d - t) / t + 1 } else { 0 };
    jobs.saturating_mul(c)
        .saturating_add(c.min(d.saturating_sub(jobs.saturating_mul(t))))
}

/// A job's window in [`bcl_beside`]: its length `D_k` and slack `D_k - C_k + 1`, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// `D_k`.
    pub length: u128,
    /// `D_k - C_k + 1`, the most of one entity's work that counts.
    pub slack: u128,
}

/// Bertogna, Cirinei and Lipari's test of the implicit-deadline sporadic tasks `(e, p)` of
/// `tasks` on `cores` cores that terminations may mask, each of `masks` one core at a time
/// (`Duration::MAX` when unbounded).
pub fn bcl(tasks: &[(Duration, Duration)], cores: u16, masks: &[Duration]) -> Bcl {
    bcl_beside(tasks, cores, masks, |_| 0)
}

/// [`bcl_beside`] with time partitions as the entities, each at most `L - sbf(L)` of its
/// slots in a window of length `L` ([`SlotSupply::most_busy`]).
pub fn bcl_partitioned(
    tasks: &[(Duration, Duration)],
    cores: u16,
    masks: &[Duration],
    partitions: &[SlotSupply],
) -> Bcl {
    bcl_beside(tasks, cores, masks, |window| {
        partitions
            .iter()
            .map(|slots| slots.most_busy(window.length).min(window.slack))
            .fold(0u128, u128::saturating_add)
    })
}

/// [`bcl`] beside other entities that each run on one core at a time, such as time
/// partitions: `beside(window)` is the sum over them of `min(W(D_k), D_k - C_k + 1)`, `W(L)`
/// the most each runs in a window of length `L`. An entity interferes as a mask does: it
/// runs while the job waits, on one core at a time, so at most the window's slack of it
/// counts.
pub fn bcl_beside(
    tasks: &[(Duration, Duration)],
    cores: u16,
    masks: &[Duration],
    beside: impl Fn(Window) -> u128,
) -> Bcl {
    let pairs: Vec<(u128, u128)> = tasks
        .iter()
        .map(|&(c, t)| (u128::from(c.as_nanos()), u128::from(t.as_nanos())))
        .collect();
    let masks: Vec<u128> = masks.iter().map(|m| u128::from(m.as_nanos())).collect();
    let m = u128::from(cores);
    let holds = |k: usize| {
        let (c, d) = pairs[k];
        if c == 0 {
            return true;
        }
        if c > d || m == 0 {
            return false;
        }
        // More than D_k - C_k units of interference make the job late.
        let slack = d - c + 1;
        let others = pairs
            .iter()
            .enumerate()
            .filter(|&(i, &(c_i, t_i))| i != k && c_i > 0 && t_i > 0)
            .map(|(_, &task)| edf_workload(d, task).min(slack));
        let masked = masks.iter().map(|&mask| mask.min(slack));
        let entities = beside(Window { length: d, slack });
        let sum = others.chain(masked).fold(entities, u128::saturating_add);
        sum < m.saturating_mul(slack)
    };
    let failing = (0..pairs.len()).find(|&k| !holds(k));
    Bcl {
        cores,
        failing,
        schedulable: cores > 0 && failing.is_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;

    fn fraction(numerator: u128, denominator: u128) -> Bandwidth {
        Bandwidth {
            numerator,
            denominator,
        }
    }

    /// Two reservations (3, 10) on 2 cores: U = 6/10 = 3/5, U_max = 3/10, bound
    /// 2 - 3/10 = 17/10 >= 3/5.
    #[test]
    fn a_light_set_passes() {
        let test = gfb(&[(ms(3), ms(10)), (ms(3), ms(10))], 2);
        assert_eq!(test.total, fraction(3, 5));
        assert!(test.total_exact);
        assert_eq!(test.largest, fraction(3, 10));
        assert_eq!((test.bound_numerator, test.largest.denominator), (17, 10));
        assert!(test.schedulable);
    }

    /// Dhall's effect: (9, 10), (9, 10), (1, 10) on 2 cores: U = 19/10, U_max = 9/10, bound
    /// 2 - 9/10 = 11/10 < 19/10: violated, though U < m.
    #[test]
    fn a_heavy_task_violates_the_bound_below_m() {
        let test = gfb(&[(ms(9), ms(10)), (ms(9), ms(10)), (ms(1), ms(10))], 2);
        assert_eq!(test.total, fraction(19, 10));
        assert_eq!(test.largest, fraction(9, 10));
        assert_eq!((test.bound_numerator, test.largest.denominator), (11, 10));
        assert!(!test.schedulable);
    }

    /// Three (5, 10) on 2 cores: U = 3/2 and bound 2 - 1/2 = 3/2, exactly on the bound:
    /// schedulable. One nanosecond more budget on one: U and U_max both grow, violated.
    #[test]
    fn the_bound_itself_passes_and_a_nanosecond_more_fails() {
        let mut set = vec![(ms(5), ms(10)); 3];
        let test = gfb(&set, 2);
        assert_eq!(test.total, fraction(3, 2));
        assert_eq!((test.bound_numerator, test.largest.denominator), (3, 2));
        assert!(test.schedulable);
        set[0].0 = Duration::from_nanos(5_000_001);
        assert!(!gfb(&set, 2).schedulable);
    }

    /// On one core the test is Liu and Layland's U <= 1: 1/3 + 2/6 + 3/9 = 1 passes.
    #[test]
    fn one_core_is_the_uniprocessor_edf_bound() {
        let set = [(ms(1), ms(3)), (ms(2), ms(6)), (ms(3), ms(9))];
        let test = gfb(&set, 1);
        assert_eq!(test.total, fraction(1, 1));
        // 1 - 0 * 1/3, over U_max's denominator.
        assert_eq!((test.bound_numerator, test.largest.denominator), (3, 3));
        assert!(test.schedulable);
        assert!(!gfb(&[(ms(1), ms(3)), (ms(3), ms(4))], 1).schedulable);
    }

    /// (2, 5) twice and (1, 4) four times on 3 cores: U = 4/5 + 1 = 9/5, U_max = 2/5, bound
    /// 3 - 2 * 2/5 = 11/5 >= 9/5.
    #[test]
    fn three_cores_by_hand() {
        let mut set = vec![(ms(2), ms(5)); 2];
        set.extend([(ms(1), ms(4)); 4]);
        let test = gfb(&set, 3);
        assert_eq!(test.total, fraction(9, 5));
        assert_eq!(test.largest, fraction(2, 5));
        assert_eq!((test.bound_numerator, test.largest.denominator), (11, 5));
        assert!(test.schedulable);
    }

    /// A budget above its period (U_max = 5/2) on 3 cores: bound 3 - 2 * 5/2 = -2.
    #[test]
    fn a_budget_above_its_period_makes_the_bound_negative() {
        let test = gfb(&[(ms(25), ms(10))], 3);
        assert_eq!((test.bound_numerator, test.largest.denominator), (-4, 2));
        assert!((test.bound_as_f64() + 2.0).abs() < 1e-12);
        assert!(!test.schedulable);
    }

    #[test]
    fn an_empty_set_is_schedulable() {
        let test = gfb(&[], 2);
        assert_eq!(test.total, Bandwidth::ZERO);
        assert_eq!((test.bound_numerator, test.largest.denominator), (2, 1));
        assert!(test.schedulable);
    }
}
