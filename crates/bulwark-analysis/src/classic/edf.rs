//! Exact EDF schedulability of sporadic tasks on one processor.
//!
//! - **Implicit deadlines** (`D = T` for every task): `sum C_i / T_i <= 1` (Liu and Layland
//!   1973, Theorem 7), decided exactly by [`crate::bandwidth::admit`].
//! - **Constrained and arbitrary deadlines**: the processor-demand criterion
//!   `h(t) <= t` for every `t` (Baruah, Rosier and Howell 1990), with
//!   `h(t) = sum_i max(0, floor((t + J_i - D_i) / T_i) + 1) C_i`, checked by QPA (Zhang and Burns
//!   2009, "Schedulability analysis for real-time systems with EDF scheduling", IEEE Trans.
//!   Computers 58(9), Theorem 5 and its algorithm): if `U > 1` the set is not schedulable;
//!   otherwise every violation lies before `L`, the synchronous busy period
//!   `L = sum_i ceil(L / T_i) C_i` (their Eq. 7; valid for `U <= 1` and any deadlines), and
//!   QPA walks down from the last deadline before `L`: `t <- h(t)` while `h(t) < t`, `t <- the
//!   last deadline before t` when `h(t) = t`, until `h(t) <= d_min` (schedulable) or
//!   `h(t) > t` (a violation).
//!
//! **Release jitter** `J_i` (Spuri 1996): a job that arrives at `a` may be released up to
//! `J_i` later and is still due at `a + D_i`, so it has `D_i - J_i` from its latest release:
//! the demand above is that of deadlines `D_i - J_i` (a task with `J_i >= D_i` fails at 0),
//! and the synchronous busy period, which depends on `C` and `T` alone, still bounds where a
//! violation can lie (the demand criterion of the deadlines `D_i - J_i`). Without jitter
//! and with `D = T` the utilisation test decides.
//!
//! A violation found by QPA need not be the first; the first is then found by a binary search
//! over the end of the checked interval, one QPA run per probe (at most 64 probes).
//! Demand sums are `u128`; no float decides anything.
//!
//! **A processor that loses time** ([`analyse_masked`]): when something outside the tasks may
//! take the processor for up to `M` in all over a run (a reclamation with interrupts masked,
//! `crate::reclamation`), every window of length `t` supplies at least `t - M`, and EDF meets
//! every deadline if `h(t) + M <= t` at every deadline `t` (the supply-bound form of the
//! demand criterion, as in Shin and Lee 2003, with `sbf(t) = t - M`). QPA holds as it is for
//! `h + M`, which is as non-decreasing and as piecewise constant as `h`; the synchronous busy
//! period becomes `L = M + sum_i ceil(L / T_i) C_i`. At `U = 1` that has no fixed point, but
//! `t - h(t)` repeats with the hyperperiod `H` once `t >= D_max`, so the deadlines up to
//! `D_max + H` decide; QPA walks them within a budget of demand evaluations, and the verdict is
//! withheld when `H` or the walk is too long.
//!
//! **Work released once** ([`analyse_with_one_shots`]): work `W` due `D` after a release
//! that may fall anywhere adds at most `W` to the demand of a window `[t1, t2]` of length
//! `t >= D`, and nothing to a shorter one, as long as every part of it in the window was
//! released in it and is due `D` after a release no earlier. That holds for one job, and for
//! a chain of jobs each released no earlier than the one before and runnable only once it is
//! done (a script's jobs, `W` their total): at `t1`, the start of the busy interval before a
//! missed deadline `t2`, no job due by `t2` is pending, so the chain's first job in the window
//! was released in it (its predecessor was done before `t1`) and its last is due `D` after a
//! release no earlier. So the criterion becomes `h(t) + sum_{D_j <= t} W_j + M <= t`: each is
//! a task of one release (period `u64::MAX`), which keeps `h` non-decreasing and piecewise
//! constant, changing at deadlines, as QPA needs. Sufficient, not exact: the jobs' own sleeps
//! may keep them from the worst alignment.

use super::fixed_point::{least_fixed_point, FixedPoint, Interference};
use super::{hyperperiod, Task};
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
    /// `h(deadline) + M = demand + M > deadline`, at the first deadline where this happens
    /// (`M` the analysis's `masked`, 0 unless the processor loses time).
    DemandExceeds {
        /// The absolute deadline (from a synchronous release).
        deadline: u64,
        /// `h(deadline)`, the tasks' demand alone.
        demand: u64,
    },
    /// `U = 1` and the processor loses time (`M > 0`): the busy period never ends, and the
    /// deadlines up to `D_max + H` were too many to check (`H` past `u64`, or more than
    /// [`STEP_BUDGET`] demand evaluations). No verdict.
    EndlessBusyPeriod,
}

/// The demand evaluations [`analyse_masked`] may spend at `U = 1` with a mask, where the
/// deadlines to check reach `D_max + H`.
pub const STEP_BUDGET: u64 = 1 << 22;

/// The EDF analysis of one processor's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdfAnalysis {
    /// The verdict with its reason.
    pub outcome: EdfOutcome,
    /// `M`: the time the processor may lose in all (0 for [`analyse`]).
    pub masked: u64,
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
            EdfOutcome::DemandMet { bound, steps } if self.masked > 0 => format!(
                "{u} <= 1; processor demand h(t) + M <= t with M = {} lost at every deadline \
                 up to {bound}, by QPA in {steps} steps",
                self.masked
            ),
            EdfOutcome::DemandMet { bound, steps } => format!(
                "{u} <= 1; processor demand h(t) <= t at every deadline up to L = {bound} (the \
                 synchronous busy period), by QPA in {steps} steps"
            ),
            EdfOutcome::UtilisationAboveOne => format!("{u} > 1"),
            EdfOutcome::DemandExceeds { deadline, demand } if self.masked > 0 => format!(
                "{u}; the first deadline where demand exceeds supply is t = {deadline}: \
                 h(t) + M = {demand} + {} > {deadline}",
                self.masked
            ),
            EdfOutcome::DemandExceeds { deadline, demand } => format!(
                "{u}; the first deadline where demand exceeds supply is t = {deadline}: \
                 h(t) = {demand} > {deadline}"
            ),
            EdfOutcome::EndlessBusyPeriod => format!(
                "{u} and M = {} lost: the busy period never ends, and the deadlines up to \
                 D_max + H are too many to check: no verdict",
                self.masked
            ),
        }
    }
}

/// The first instant `t >= 0` at which a job of `task` is due from a synchronous latest
/// release, `D - J`; 0 when the jitter reaches the deadline (a job that arrived before 0 and
/// was released at 0 is already due).
fn first_due(task: &Task) -> u64 {
    task.deadline.saturating_sub(task.jitter)
}

/// The last instant strictly before `t` at which `task`'s demand steps up, if any: its
/// deadlines `D - J + k T` from the synchronous latest release, and 0 when `J > D` (jobs due
/// before 0 count from 0).
fn last_step_before(task: &Task, t: u64) -> Option<u64> {
    let period = task.period.max(1);
    let first = if task.jitter <= task.deadline {
        first_due(task)
    } else {
        // The first step after 0 of the deadlines `D - J + k T`, which start below 0.
        (period - (task.jitter - task.deadline) % period) % period
    };
    if first < t {
        Some(first + (t - 1 - first) / period * period)
    } else {
        (task.jitter > task.deadline && t > 0).then_some(0)
    }
}

/// `h(t) = sum_i max(0, floor((t + J_i - D_i) / T_i) + 1) C_i`.
pub fn demand(tasks: &[Task], t: u64) -> u128 {
    tasks
        .iter()
        .map(|task| {
            let reach = t as u128 + task.jitter as u128;
            match reach.checked_sub(task.deadline as u128) {
                Some(past) => {
                    (past / task.period.max(1) as u128 + 1).saturating_mul(task.wcet as u128)
                }
                None => 0,
            }
        })
        .fold(0u128, u128::saturating_add)
}

/// The last absolute deadline strictly before `t`, if any (from a synchronous latest
/// release).
fn last_deadline_before(tasks: &[Task], t: u64) -> Option<u64> {
    tasks
        .iter()
        .filter_map(|task| last_step_before(task, t))
        .max()
}

/// The synchronous busy period `L = M + sum ceil(L / T_i) C_i`, `None` when unbounded.
fn busy_period(tasks: &[Task], masked: u64) -> Option<u64> {
    let terms: Vec<Interference> = tasks
        .iter()
        .map(|t| Interference {
            cost: t.wcet,
            period: t.period.max(1),
            jitter: 0,
        })
        .collect();
    let total = terms.iter().map(|h| h.cost as u128).sum::<u128>() + masked as u128;
    let start = u64::try_from(total).ok()?;
    match least_fixed_point(masked, &terms, start, u64::MAX - 1) {
        FixedPoint::Found { value, .. } => Some(value),
        FixedPoint::Exceeds { .. } => None,
    }
}

/// Where QPA stopped short of a proof.
enum Stop {
    /// `h(t) + M > t` at this deadline (the largest violating one it met).
    Violation(u64),
    /// The budget of demand evaluations ran out.
    Budget,
}

/// QPA on `[d_min, below)` for the demand `h + masked`: `Ok` when `h(t) + masked <= t`
/// everywhere there, each demand evaluation taken from `budget`.
fn qpa(tasks: &[Task], below: u64, d_min: u64, masked: u64, budget: &mut u64) -> Result<(), Stop> {
    let Some(mut t) = last_deadline_before(tasks, below) else {
        return Ok(());
    };
    loop {
        *budget = budget.checked_sub(1).ok_or(Stop::Budget)?;
        let h = demand(tasks, t) + masked as u128;
        if h > t as u128 {
            // h changes only at deadlines: the last deadline <= t violates too.
            let at = last_deadline_before(tasks, t.saturating_add(1)).unwrap_or(t);
            return Err(Stop::Violation(at));
        }
        if h <= d_min as u128 {
            return Ok(());
        }
        if h < t as u128 {
            t = h as u64;
        } else {
            match last_deadline_before(tasks, t) {
                Some(d) => t = d,
                None => return Ok(()),
            }
        }
    }
}

/// The exact EDF test of `tasks` (run on one processor).
pub fn analyse(tasks: &[Task]) -> EdfAnalysis {
    analyse_masked(tasks, 0)
}

/// The EDF test of `tasks` on one processor that may lose up to `masked` of its time in all:
/// `h(t) + M <= t` at every deadline. Exact for `M = 0`; for `M > 0` sufficient, and
/// necessary too when the loss may fall at the start of a synchronous release.
pub fn analyse_masked(tasks: &[Task], masked: u64) -> EdfAnalysis {
    let with = |outcome| EdfAnalysis { outcome, masked };
    if !bandwidth::sum_at_most_one(tasks.iter().map(|t| (t.wcet, t.period))) {
        return with(EdfOutcome::UtilisationAboveOne);
    }
    if masked == 0
        && tasks
            .iter()
            .all(|t| t.deadline == t.period && t.jitter == 0)
    {
        return with(EdfOutcome::UtilisationAtMostOne);
    }
    demand_test(tasks, masked)
}

/// A job released once, wherever its release falls: `work` due within `deadline` of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneShot {
    /// `W`: its work.
    pub work: u64,
    /// `D`: its relative deadline (positive).
    pub deadline: u64,
}

/// The EDF test of `tasks` beside `jobs` released once each (see the module's docs), on one
/// processor that may lose up to `masked` of its time: `h(t) + sum_{D_j <= t} W_j + M <= t`
/// at every deadline, the jobs' deadlines among them. Sufficient only when `jobs` is not
/// empty. At `U = 1` exactly there is no slack to spare in the long run, so the jobs' work
/// counts in every window instead (`M + sum W_j`, as [`analyse_masked`] takes it).
pub fn analyse_with_one_shots(tasks: &[Task], jobs: &[OneShot], masked: u64) -> EdfAnalysis {
    if jobs.is_empty() {
        return analyse_masked(tasks, masked);
    }
    if !bandwidth::sum_below_one(tasks.iter().map(|t| (t.wcet, t.period))) {
        let work = jobs
            .iter()
            .fold(0u64, |sum, job| sum.saturating_add(job.work));
        return analyse_masked(tasks, masked.saturating_add(work));
    }
    let mut all = tasks.to_vec();
    all.extend(jobs.iter().map(|job| {
        // One release within any window the analysis reaches (every bound it computes is
        // below `u64::MAX`).
        Task::new("one-shot", job.work, u64::MAX).with_deadline(job.deadline)
    }));
    demand_test(&all, masked)
}

/// QPA over the synchronous busy period (or, at `U = 1` with a mask, up to `D_max + H`), and
/// the first violation when there is one. The caller has checked `U <= 1`.
fn demand_test(tasks: &[Task], masked: u64) -> EdfAnalysis {
    let with = |outcome| EdfAnalysis { outcome, masked };
    let d_min = tasks.iter().map(first_due).min().unwrap_or(0);
    // U <= 1, so the busy period is finite unless U = 1 and M > 0 (or past u64::MAX); then
    // the slack t - h(t) repeats every H from D_max on, and D_max + H bounds the search.
    let (bound, mut budget) = match busy_period(tasks, masked) {
        Some(bound) => (bound, u64::MAX),
        None if masked == 0 => (u64::MAX, u64::MAX),
        None => {
            let d_max = tasks.iter().map(first_due).max().unwrap_or(0);
            match hyperperiod(tasks).and_then(|h| h.checked_add(d_max)) {
                Some(bound) => (bound, STEP_BUDGET),
                None => return with(EdfOutcome::EndlessBusyPeriod),
            }
        }
    };
    let initial = budget;
    let found = match qpa(tasks, bound.saturating_add(1), d_min, masked, &mut budget) {
        Ok(()) => {
            let steps = initial - budget;
            return with(EdfOutcome::DemandMet { bound, steps });
        }
        Err(Stop::Budget) => return with(EdfOutcome::EndlessBusyPeriod),
        Err(Stop::Violation(found)) => found,
    };
    // The first violation: binary search on X for the least X such that some deadline <= X
    // violates (a monotone property; each probe is one QPA run on [d_min, X]), at most 64
    // probes.
    let (mut low, mut high) = (d_min.min(found), found);
    while low < high {
        let middle = low + (high - low) / 2;
        match qpa(tasks, middle.saturating_add(1), d_min, masked, &mut budget) {
            Err(Stop::Violation(_)) => high = middle,
            Ok(()) => low = middle + 1,
            Err(Stop::Budget) => return with(EdfOutcome::EndlessBusyPeriod),
        }
    }
    with(EdfOutcome::DemandExceeds {
        deadline: low,
        demand: u64::try_from(demand(tasks, low)).unwrap_or(u64::MAX),
    })
}
