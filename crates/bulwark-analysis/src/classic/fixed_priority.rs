//! Exact response-time analysis under preemptive fixed priorities, with release jitter,
//! blocking, and constrained or arbitrary deadlines; and its limited-preemptive variant with a
//! final non-preemptive region.
//!
//! Tasks are given most important first: `tasks[..i]` are the higher priorities of `tasks[i]`.
//!
//! **Fully preemptive** (Lehoczky 1990 for arbitrary deadlines; Tindell, Burns and Wellings
//! 1994 for jitter and blocking; the form of Davis, Burns, Bril and Lukkien 2007, Eqs. 13-16):
//! the critical instant releases every higher-priority task together with job 0 of `i`, each
//! after its largest jitter, and the lower-priority blocking starts just before. Job `q` of the
//! level-i busy window completes at the least fixed point of
//! `w(q) = B_i + (q + 1) C_i + sum_{j in hp(i)} ceil((w(q) + J_j) / T_j) C_j`, its response is
//! `R(q) = w(q) - q T_i + J_i`, and the window goes on while `w(q) > (q + 1) T_i - J_i` (the
//! next job arrives before the processor goes idle at level i). `R_i = max_q R(q)`.
//!
//! **Final non-preemptive region** `F_i` (fixed-priority scheduling with deferred preemption:
//! Bril, Lukkien and Verhaegh 2009, "Worst-case response time analysis of real-time tasks
//! under fixed-priority scheduling with deferred preemption", Real-Time Systems 42, Theorem 1
//! and Eq. 14; the same model as Yomsi and Sorel 2007): the final region of job `q` starts at
//! `S(q) = B_i + q C_i + (C_i - F_i) + sum_{j in hp(i)} (floor((S(q) + J_j) / T_j) + 1) C_j`
//! (a higher-priority release at the very instant the region starts still runs first) and the
//! job ends at `S(q) + F_i`. Every job of the level-i active period is examined: its length is
//! the least fixed point of `L = B_i + sum_{j <= i} ceil((L + J_j) / T_j) C_j` and it holds
//! `ceil((L + J_i) / T_i)` jobs (Bril et al. show that checking only job 0 is optimistic even
//! for constrained deadlines). Time is integer; a lower-priority region blocks for its whole
//! length `F_j`, the continuous-time bound, safe by at most one unit.
//!
//! Blocking: `B_i` is `max(task.blocking, max_{j lower} F_j)`; see
//! [`super::resource_sharing`] for blocking terms from critical sections.
//!
//! When the utilisation of levels `<= i` is exactly 1 and blocking or jitter keeps the level-i
//! processor busy, the window never closes; but with `f_q` the job-`q` equation and
//! `k = H / T_i` (`H` the level's hyperperiod), `f_{q+k}(w + H) = f_q(w) + H`, and no fixed
//! point of `f_{q+k}` lies below `H` (`w C_i / T_i >= B_i + (q + k + 1) C_i` there), so job
//! `q + k` completes exactly `H` after job `q` with the same response: jobs `0..k` decide
//! (up to [`REPEATING_JOBS`] of them; beyond, no verdict).
//!
//! When the utilisation of levels `<= i` exceeds 1 (decided exactly), task `i`'s backlog grows
//! without bound and it is not schedulable; this is checked once a busy window outlasts job 0
//! (a window that closes after job 0 is finite, which already rules it out). Otherwise every fixed
//! point is found by [`super::fixed_point::least_fixed_point`] and each search stops as soon
//! as a job's completion passes its deadline, which is then an exact "not schedulable".

use super::fixed_point::{least_fixed_point, FixedPoint, Interference, Interferes};
use super::Task;
use crate::bandwidth;

/// How the analysis of one task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every job of the busy window meets its deadline.
    Schedulable,
    /// Job `job` of the busy window (0 = the one released at the critical instant) misses.
    Misses {
        /// Index of the first job found to miss.
        job: u64,
    },
    /// The utilisation of this priority level and above exceeds 1: responses grow without
    /// bound.
    Overloaded,
    /// The utilisation of this level and above is exactly 1 and blocking or jitter keeps the
    /// level-i processor busy for ever, and one hyperperiod holds more than
    /// [`REPEATING_JOBS`] jobs of the task: no job examined missed, but the jobs that decide
    /// are too many, so this analysis gives no verdict (counted as not shown schedulable).
    EndlessBusyWindow,
}

/// The response-time analysis of one task, with what explains it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// `B_i` used.
    pub blocking: u64,
    /// `R_i`: the worst-case response time when schedulable; when a job misses, a lower bound
    /// on that job's response that already exceeds `D_i` (`u64::MAX` when unbounded).
    pub response: u64,
    /// The verdict.
    pub outcome: Outcome,
    /// The length of the level-i busy window examined (from the critical instant to the end
    /// of the last job examined, or of the active period for the limited-preemptive test);
    /// `None` when overloaded or when the window never ends (then the jobs examined are one
    /// hyperperiod's, whose responses repeat).
    pub busy_window: Option<u64>,
    /// How many jobs of the window were examined.
    pub jobs_examined: u64,
    /// The job whose response is `response`.
    pub worst_job: u64,
}

impl Analysis {
    /// True when every job meets its deadline.
    pub fn schedulable(&self) -> bool {
        self.outcome == Outcome::Schedulable
    }

    /// One sentence that says why, with the numbers.
    pub fn explain(&self, task: &Task) -> String {
        match self.outcome {
            Outcome::Schedulable => format!(
                "critical instant: all higher priorities released with job 0{}; {}; the worst is \
                 job {} with R = {} <= D = {}",
                if task.jitter > 0 { " (each after its largest jitter)" } else { "" },
                window_text(self.busy_window, self.jobs_examined, |t| t.to_string()),
                self.worst_job,
                self.response,
                task.deadline
            ),
            Outcome::Misses { job } => format!(
                "critical instant: all higher priorities released with job 0; job {job} of the \
                 busy window misses: its response reaches at least {} > D = {} ({} job(s) examined)",
                self.response, task.deadline, self.jobs_examined
            ),
            Outcome::Overloaded => {
                "the utilisation of this priority level and above exceeds 1: responses grow \
                 without bound"
                    .to_owned()
            }
            Outcome::EndlessBusyWindow => ENDLESS.to_owned(),
        }
    }
}

/// Why [`Outcome::EndlessBusyWindow`] has no verdict.
pub const ENDLESS: &str = "the utilisation of this priority level and above is exactly 1 and \
                           blocking or jitter keeps it busy for ever: the busy window never \
                           ends, and one hyperperiod holds too many of its jobs to examine, no \
                           verdict";

/// The most jobs examined when the busy window never ends: one hyperperiod's, `H / T_i`.
pub const REPEATING_JOBS: u64 = 1 << 16;

/// What a schedulable task's busy window was: its length and jobs, or (`None`) a window that
/// never ends, whose responses repeat every `jobs` jobs. `time` writes a length.
pub fn window_text(window: Option<u64>, jobs: u64, time: impl Fn(u64) -> String) -> String {
    match window {
        Some(length) => {
            format!(
                "the level-i busy window lasts {} and holds {jobs} job(s)",
                time(length)
            )
        }
        None => format!(
            "the level-i busy window never ends (utilisation exactly 1 with blocking or \
             jitter) and its responses repeat every {jobs} job(s), one hyperperiod"
        ),
    }
}

/// The jobs that decide a task whose level-i busy window never ends: `k = H / T_i`, the jobs
/// of one hyperperiod `H` of `level` (the task and those above it), whose responses repeat
/// (see the module's documentation). `None` when `H` passes `u64` or `k` passes
/// [`REPEATING_JOBS`].
fn repeating_jobs<H: Interferes>(level: &[H], task: &Task) -> Option<u64> {
    let jobs = super::hyperperiod_of(level.iter().map(|h| h.term().period))? / task.period.max(1);
    (jobs <= REPEATING_JOBS).then_some(jobs)
}

/// True when `sum_j C_j / T_j > 1` over `terms`, exactly.
fn overloaded<H: Interferes>(terms: &[H]) -> bool {
    !bandwidth::sum_at_most_one(terms.iter().map(|h| {
        let term = h.term();
        (term.cost, term.period)
    }))
}

/// `term` with a zero period read as 1 and `extra_jitter` more jitter.
fn shifted(term: Interference, extra_jitter: u64) -> Interference {
    Interference {
        period: term.period.max(1),
        jitter: term.jitter.saturating_add(extra_jitter),
        ..term
    }
}

/// `B_i`: the task's own blocking term or the longest final region of a lower priority.
pub fn blocking(tasks: &[Task], index: usize) -> u64 {
    let Some(task) = tasks.get(index) else {
        return 0;
    };
    tasks[index + 1..]
        .iter()
        .map(|t| t.final_region)
        .max()
        .unwrap_or(0)
        .max(task.blocking)
}

/// The latest completion `w` that meets job `q`'s deadline: `D + q T - J`, `None` when even
/// `w = 0` would be late; capped below `u64::MAX`.
fn completion_limit(task: &Task, job: u64) -> Option<u64> {
    let limit = task.deadline as u128 + job as u128 * task.period as u128;
    let limit = limit.checked_sub(task.jitter as u128)?;
    Some(
        u64::try_from(limit)
            .unwrap_or(u64::MAX - 1)
            .min(u64::MAX - 1),
    )
}

/// The analysis of `tasks[index]` (most important first); `None` for an index out of range.
/// Uses the limited-preemptive test when the task has a final non-preemptive region.
pub fn response_time(tasks: &[Task], index: usize) -> Option<Analysis> {
    let task = tasks.get(index)?;
    Some(level_response(
        task,
        &tasks[..=index],
        blocking(tasks, index),
    ))
}

/// The analysis of `task` below `higher`: the interference terms of every task at its
/// priority or above but itself, in any order, whole or summed by rate (the test reads only
/// their sum at each window, [`crate::classic::fixed_point::RateSums`]); `B` is the task's
/// own blocking term. The same analysis as [`response_time`] on the tasks those terms are
/// of, with the task last.
pub fn response_time_among(task: &Task, higher: &[Interference]) -> Analysis {
    let mut level = Vec::with_capacity(higher.len() + 1);
    level.extend_from_slice(higher);
    level.push(shifted(task.term(), 0));
    level_response(task, &level, task.blocking)
}

/// The analysis of `task`, the last of `level` (the terms of its priority level and above).
fn level_response<H: Interferes>(task: &Task, level: &[H], blocking: u64) -> Analysis {
    if task.final_region == 0 {
        preemptive(task, level, blocking)
    } else if overloaded(level) {
        overload(blocking)
    } else {
        limited_preemptive(task, level, blocking)
    }
}

fn endless(blocking: u64, worst: (u64, u64)) -> Analysis {
    Analysis {
        blocking,
        response: worst.0,
        outcome: Outcome::EndlessBusyWindow,
        busy_window: None,
        jobs_examined: 1,
        worst_job: worst.1,
    }
}

/// The analysis of a task whose level never idles: no response time bounds it.
fn overload(blocking: u64) -> Analysis {
    Analysis {
        blocking,
        response: u64::MAX,
        outcome: Outcome::Overloaded,
        busy_window: None,
        jobs_examined: 0,
        worst_job: 0,
    }
}

/// Every task's analysis, in the order given.
pub fn response_times(tasks: &[Task]) -> Vec<Analysis> {
    (0..tasks.len())
        .filter_map(|i| response_time(tasks, i))
        .collect()
}

/// A job's response from its completion `w`: `w - q T + J` (never negative: `w >= (q+1) C`
/// and job `q` cannot complete before its own release).
fn response_of(task: &Task, job: u64, completion: u64) -> u64 {
    let response = completion as u128 + task.jitter as u128;
    let release = job as u128 * task.period as u128;
    u64::try_from(response.saturating_sub(release)).unwrap_or(u64::MAX)
}

fn missed(
    blocking: u64,
    job: u64,
    response: u64,
    worst: (u64, u64),
    window: Option<u64>,
) -> Analysis {
    Analysis {
        blocking,
        response,
        outcome: Outcome::Misses { job },
        busy_window: window,
        jobs_examined: job + 1,
        worst_job: if response >= worst.0 { job } else { worst.1 },
    }
}

fn preemptive<H: Interferes>(task: &Task, level: &[H], blocking: u64) -> Analysis {
    let higher = &level[..level.len() - 1];
    let higher_work: u128 = higher.iter().map(|h| h.term().cost as u128).sum();
    let mut worst = (0u64, 0u64);
    let mut job = 0u64;
    let mut last_job = u64::MAX;
    let mut last_window = 0u64;
    // Set when the window never ends: the last job to examine then closes one hyperperiod.
    let mut endless_window = false;
    loop {
        // w(q) = B + (q+1) C + sum ceil((w + J_j) / T_j) C_j.
        let own = blocking as u128 + (job as u128 + 1) * task.wcet as u128;
        let Some(limit) = completion_limit(task, job) else {
            return missed(blocking, job, u64::MAX, worst, Some(0));
        };
        let Ok(constant) = u64::try_from(own) else {
            return missed(blocking, job, u64::MAX, worst, Some(u64::MAX));
        };
        // w(q) >= w(q-1): f_q >= f_{q-1} pointwise, so the last fixed point is a valid start.
        let start = u64::try_from(own + higher_work)
            .unwrap_or(u64::MAX)
            .max(last_window);
        match least_fixed_point(constant, higher, start, limit) {
            FixedPoint::Exceeds { value, .. } => {
                let response = response_of(task, job, value);
                return missed(blocking, job, response, worst, Some(value));
            }
            FixedPoint::Found { value, .. } => {
                let response = response_of(task, job, value);
                if response > worst.0 || job == 0 {
                    worst = (response, job);
                }
                last_window = value;
                // The window closes when job q ends before job q+1 arrives: w <= (q+1)T - J.
                let next_arrival =
                    ((job as u128 + 1) * task.period as u128).saturating_sub(task.jitter as u128);
                if value as u128 <= next_arrival {
                    return Analysis {
                        blocking,
                        response: worst.0,
                        outcome: Outcome::Schedulable,
                        busy_window: Some(value),
                        jobs_examined: job + 1,
                        worst_job: worst.1,
                    };
                }
            }
        }
        if job == 0 {
            // Only now are the utilisation and the busy period needed: a window that closes
            // after job 0 is a finite level-i busy period, which rules out U > 1 (L >= U L).
            if overloaded(level) {
                return overload(blocking);
            }
            // The level-i busy period L = B + sum_{j <= i} ceil((L + J_j) / T_j) C_j bounds
            // the jobs to examine: ceil((L + J_i) / T_i) (Davis et al. 2007, Eq. 15).
            let level_work: u128 = level.iter().map(|h| h.term().cost as u128).sum();
            let start = u64::try_from(blocking as u128 + level_work).unwrap_or(u64::MAX);
            match least_fixed_point(blocking, level, start, u64::MAX - 1) {
                FixedPoint::Found { value, .. } => {
                    let jobs =
                        (value as u128 + task.jitter as u128).div_ceil(task.period.max(1) as u128);
                    last_job = u64::try_from(jobs).unwrap_or(u64::MAX).saturating_sub(1);
                }
                // U = 1 exactly with blocking or jitter: the level-i processor never idles,
                // and one hyperperiod's jobs decide.
                FixedPoint::Exceeds { .. } => match repeating_jobs(level, task) {
                    Some(jobs) => {
                        last_job = jobs - 1;
                        endless_window = true;
                    }
                    None => return endless(blocking, worst),
                },
            }
        }
        if job >= last_job {
            // The window closes by the last job of the busy period (kept as a guard), or
            // never does and the jobs of one hyperperiod have been examined.
            return Analysis {
                blocking,
                response: worst.0,
                outcome: Outcome::Schedulable,
                busy_window: (!endless_window).then_some(last_window),
                jobs_examined: job + 1,
                worst_job: worst.1,
            };
        }
        job += 1;
    }
}

fn limited_preemptive<H: Interferes>(task: &Task, terms: &[H], blocking: u64) -> Analysis {
    // The level-i active period: L = B + sum_{j <= i} ceil((L + J_j) / T_j) C_j.
    let level: Vec<Interference> = terms.iter().map(|h| shifted(h.term(), 0)).collect();
    let level_work: u128 = level.iter().map(|h| h.cost as u128).sum();
    let start = u64::try_from(blocking as u128 + level_work).unwrap_or(u64::MAX);
    // `None`: the active period never ends (U = 1 exactly, checked by the caller, with
    // blocking or jitter); one hyperperiod's jobs then decide, as S(q + k) = S(q) + H.
    let (active, jobs) = match least_fixed_point(blocking, &level, start, u64::MAX - 1) {
        FixedPoint::Found { value, .. } => {
            let jobs = (value as u128 + task.jitter as u128).div_ceil(task.period.max(1) as u128);
            (Some(value), u64::try_from(jobs).unwrap_or(u64::MAX).max(1))
        }
        FixedPoint::Exceeds { .. } => match repeating_jobs(&level, task) {
            Some(jobs) => (None, jobs),
            None => return endless(blocking, (0, 0)),
        },
    };
    // floor((S + J_j) / T_j) + 1 = ceil((S + J_j + 1) / T_j) in integers.
    let higher: Vec<Interference> = level[..level.len() - 1]
        .iter()
        .map(|&h| shifted(h, 1))
        .collect();
    let higher_work: u128 = higher.iter().map(|h| h.cost as u128).sum();
    let mut worst = (0u64, 0u64);
    for job in 0..jobs {
        let own = blocking as u128
            + job as u128 * task.wcet as u128
            + task.wcet.saturating_sub(task.final_region) as u128;
        let Some(limit) = completion_limit(task, job) else {
            return missed(blocking, job, u64::MAX, worst, active);
        };
        // The region must start by limit - F for the job to end by limit.
        let Some(start_limit) = limit.checked_sub(task.final_region) else {
            return missed(blocking, job, u64::MAX, worst, active);
        };
        let Ok(constant) = u64::try_from(own) else {
            return missed(blocking, job, u64::MAX, worst, active);
        };
        let first = u64::try_from(own + higher_work).unwrap_or(u64::MAX);
        match least_fixed_point(constant, &higher, first, start_limit) {
            FixedPoint::Exceeds { value, .. } => {
                let end = value.saturating_add(task.final_region);
                return missed(blocking, job, response_of(task, job, end), worst, active);
            }
            FixedPoint::Found { value, .. } => {
                let response = response_of(task, job, value + task.final_region);
                if response > worst.0 || job == 0 {
                    worst = (response, job);
                }
            }
        }
    }
    Analysis {
        blocking,
        response: worst.0,
        outcome: Outcome::Schedulable,
        busy_window: active,
        jobs_examined: jobs,
        worst_job: worst.1,
    }
}
