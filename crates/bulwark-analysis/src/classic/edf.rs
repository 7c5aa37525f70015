//! Exact EDF schedulability of sporadic tasks on one processor.
//!
//! - **Implicit deadlines** (`D = T` for every task): `sum C_i / T_i <= 1` (Liu and Layland
//!   1973, Theorem 7), decided exactly by [`crate::bandwidth::admit`].
//! - **Constrained and arbitrary deadlines**: the processor-demand criterion
//!   `h(t) <= t` for every `t` (Baruah, Rosier and Howell 1990), with
//!   `h(t) = sum_i max(0, floor((t - D_i) / T_i) + 1) C_i`, checked by QPA (Zhang and Burns
//!   2009, "Schedulability analysis for real-time systems with EDF scheduling", IEEE Trans.
//!   Computers 58(9), Theorem 5 and its algorithm): if `U > 1` the set is not schedulable;
//!   otherwise every violation lies before `L`, the synchronous busy period
//!   `L = sum_i ceil(L / T_i) C_i` (their Eq. 7; valid for `U <= 1` and any deadlines), and
//!   QPA walks down from the last deadline before `L`: `t <- h(t)` while `h(t) < t`, `t <- the
//!   last deadline before t` when `h(t) = t`, until `h(t) <= d_min` (schedulable) or
//!   `h(t) > t` (a violation).
//!
//! A violation found by QPA need not be the first; the first is then found by a binary search
//! over the end of the checked interval, one QPA run per probe (at most 64 probes).
//! Demand sums are `u128`; no float decides anything.

use super::fixed_point::{least_fixed_point, FixedPoint, Interference};
use super::Task;
use crate::bandwidth;
use bulwark_core::Duration;

/// The verdict and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdfOutcome {
    /// Implicit deadlines and `U <= 1`.
    UtilisationAtMostOne,
    /// Demand met at every deadline before `bound` (the synchronous busy period), checked by
    /// QPA in `steps` demand evaluations.
    DemandMet {
        /// `L`.
        bound: u64,
        /// Demand evaluations.
        steps: u64,
    },
    /// `U > 1`.
    UtilisationAboveOne,
    /// `h(deadline) = demand > deadline`, at the first deadline where this happens.
    DemandExceeds {
        /// The absolute deadline (from a synchronous release).
        deadline: u64,
        /// `h(deadline)`.
        demand: u64,
    },
}

/// The EDF analysis of one processor's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdfAnalysis {
    /// The verdict with its reason.
    pub outcome: EdfOutcome,
}

/// `U = sum C_i / T_i` as an exact fraction when it fits in 128 bits (see
/// [`bandwidth::admit`]), for reports.
pub fn utilisation(tasks: &[Task]) -> bandwidth::Admission {
    let pairs: Vec<(Duration, Duration)> = tasks
        .iter()
        .map(|t| (Duration::from_nanos(t.wcet), Duration::from_nanos(t.period)))
        .collect();
    bandwidth::admit(&pairs)
}

impl EdfAnalysis {
    /// True when every deadline is met.
    pub fn schedulable(&self) -> bool {
        matches!(
            self.outcome,
            EdfOutcome::UtilisationAtMostOne | EdfOutcome::DemandMet { .. }
        )
    }

    /// One sentence with the numbers; `utilisation` from [`utilisation`].
    pub fn explain(&self, utilisation: &bandwidth::Admission) -> String {
        let (n, d) = (utilisation.total.numerator, utilisation.total.denominator);
        let u = format!(
            "U = {}{n}/{d} = {:.4}",
            if utilisation.exact { "" } else { "at most " },
            utilisation.total.as_f64()
        );
        match self.outcome {
            EdfOutcome::UtilisationAtMostOne => {
                format!("implicit deadlines and {u} <= 1 (Liu and Layland)")
            }
            EdfOutcome::DemandMet { bound, steps } => format!(
                "{u} <= 1; processor demand h(t) <= t at every deadline up to L = {bound} (the \
                 synchronous busy period), by QPA in {steps} steps"
            ),
            EdfOutcome::UtilisationAboveOne => format!("{u} > 1"),
            EdfOutcome::DemandExceeds { deadline, demand } => format!(
                "{u}; the first deadline where demand exceeds supply is t = {deadline}: \
                 h(t) = {demand} > {deadline}"
            ),
        }
    }
}

/// `h(t) = sum_i max(0, floor((t - D_i) / T_i) + 1) C_i`.
pub fn demand(tasks: &[Task], t: u64) -> u128 {
    tasks
        .iter()
        .filter(|task| t >= task.deadline)
        .map(|task| {
            let jobs = (t - task.deadline) / task.period.max(1) + 1;
            jobs as u128 * task.wcet as u128
        })
        .sum()
}

/// The last absolute deadline strictly before `t`, if any.
fn last_deadline_before(tasks: &[Task], t: u64) -> Option<u64> {
    tasks
        .iter()
        .filter(|task| task.deadline < t)
        .map(|task| {
            let period = task.period.max(1);
            task.deadline + (t - 1 - task.deadline) / period * period
        })
        .max()
}

/// The synchronous busy period `L = sum ceil(L / T_i) C_i`, `None` when unbounded.
fn busy_period(tasks: &[Task]) -> Option<u64> {
    let terms: Vec<Interference> = tasks
        .iter()
        .map(|t| Interference {
            cost: t.wcet,
            period: t.period.max(1),
            jitter: 0,
        })
        .collect();
    let start = u64::try_from(terms.iter().map(|h| h.cost as u128).sum::<u128>()).ok()?;
    match least_fixed_point(0, &terms, start, u64::MAX - 1) {
        FixedPoint::Found { value, .. } => Some(value),
        FixedPoint::Exceeds { .. } => None,
    }
}

/// QPA on `[d_min, below)`: `Ok(steps)` when `h(t) <= t` everywhere there, else the largest
/// violating deadline it meets.
fn qpa(tasks: &[Task], below: u64, d_min: u64) -> Result<u64, u64> {
    let mut steps = 0;
    let Some(mut t) = last_deadline_before(tasks, below) else {
        return Ok(steps);
    };
    loop {
        steps += 1;
        let h = demand(tasks, t);
        if h > t as u128 {
            // h changes only at deadlines: the last deadline <= t violates too.
            let at = last_deadline_before(tasks, t.saturating_add(1)).unwrap_or(t);
            return Err(at);
        }
        if h <= d_min as u128 {
            return Ok(steps);
        }
        if h < t as u128 {
            t = h as u64;
        } else {
            match last_deadline_before(tasks, t) {
                Some(d) => t = d,
                None => return Ok(steps),
            }
        }
    }
}

/// The exact EDF test of `tasks` (run on one processor).
pub fn analyse(tasks: &[Task]) -> EdfAnalysis {
    let with = |outcome| EdfAnalysis { outcome };
    if !bandwidth::sum_at_most_one(tasks.iter().map(|t| (t.wcet, t.period))) {
        return with(EdfOutcome::UtilisationAboveOne);
    }
    if tasks.iter().all(|t| t.deadline == t.period) {
        return with(EdfOutcome::UtilisationAtMostOne);
    }
    let d_min = tasks.iter().map(|t| t.deadline).min().unwrap_or(0);
    // U <= 1, so the busy period is finite; `None` only past u64::MAX.
    let bound = busy_period(tasks).unwrap_or(u64::MAX);
    match qpa(tasks, bound.saturating_add(1), d_min) {
        Ok(steps) => with(EdfOutcome::DemandMet { bound, steps }),
        Err(found) => {
            // The first violation: binary search on X for the least X such that some
            // deadline <= X violates (a monotone property; each probe is one QPA run on
            // [d_min, X]), at most 64 probes.
            let (mut low, mut high) = (d_min.min(found), found);
            while low < high {
                let middle = low + (high - low) / 2;
                if qpa(tasks, middle.saturating_add(1), d_min).is_err() {
                    high = middle;
                } else {
                    low = middle + 1;
                }
            }
            let first = low;
            with(EdfOutcome::DemandExceeds {
                deadline: first,
                demand: u64::try_from(demand(tasks, first)).unwrap_or(u64::MAX),
            })
        }
    }
}
