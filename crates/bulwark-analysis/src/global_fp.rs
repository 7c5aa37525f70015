//! Global fixed priority on `m` identical cores: Bertogna and Cirinei's response-time analysis
//! ("Response-Time Analysis for Globally Scheduled Symmetric Multiprocessor Platforms", RTSS
//! 2007; BC07 below) for sporadic tasks `(C, T, D)` with constrained deadlines `D <= T`. The
//! test is sufficient only: a set it does not show schedulable may still be schedulable.
//!
//! For each task `k`, highest priority first, the bound `R_k` is the least fixed point of
//!
//! ```text
//! R_k = C_k + floor( (1/m) sum_{i in hp(k)} min( W_i(R_k), R_k - C_k + 1 ) )
//! W_i(L) = N_i(L) C_i + min( C_i, L + R_i - C_i - N_i(L) T_i )
//! N_i(L) = floor( (L + R_i - C_i) / T_i )
//! ```
//!
//! reached by iterating from `R_k = C_k`: `W_i(L)` bounds the work of task `i` in any window
//! of length `L` (its first job as late as its bound `R_i` allows, the others as early as
//! `T_i` allows), and a job of `k` is delayed only while all `m` cores run other work, so at
//! most `R_k - C_k + 1` of each `W_i` counts (BC07's bound on the interference one task can
//! cause). The iteration stops when `R_k` no longer grows (shown: `R_k <= D_k`) or passes
//! `D_k` (not shown; the lower-priority tasks are then not analysed, as their interference
//! terms need `R_k`). A task with fewer than `m` higher-priority tasks has `R_k = C_k`.
//!
//! Everything is exact integer arithmetic on nanoseconds (`u128`, which holds every sum and
//! product of two 64-bit nanosecond counts; the few that could pass even that saturate, and
//! they are then far above any deadline).
//!
//! Priorities are [`Priority`] values, larger more important. Equal priorities are ordered by
//! position, the earlier task first: the order of the MC-IPC clustered scheduler, which
//! breaks ties by reservation id (`ClusteredScheduler`'s rank `(255 - priority, id)`; a
//! cluster's reservation ids are its members in file order). So `hp(k)` is every task
//! before `k` in `(priority descending, position ascending)` order, a strict total order,
//! which is what BC07's global fixed-priority model assumes.
//!
//! **Cores that lose time** ([`rta_masked`]): a reclamation with interrupts masked takes one
//! core of the cluster for up to `M` (in all, for one termination). While the job of `k`
//! waits, every core runs higher-priority work or is masked, and one termination's stretches
//! hold one core at a time: it is one more interfering term, `min(M, R_k - C_k + 1)`, as a
//! higher-priority task whose workload in any window is at most `M`. So each termination adds
//! `min(M_j, R_k - C_k + 1)` to the sum, and counts among the "higher" entities of the
//! `R_k = C_k` shortcut. An unbounded mask is `M` past every deadline: one core lost for good.
//!
//! **Time partitions** ([`rta_beside`]): a partition takes one core during its slots, at
//! most `W(L)` of any window of length `L`; it is one more interfering term, `min(W(R_k),
//! R_k - C_k + 1)`, for the same reason as a mask.
//!
//! **SPR sporadic servers** ([`FpTask::sporadic_server`]): a server's budget comes back in
//! chunks, each `p` after the instant it became available to the active server (SPR paper,
//! Algorithms 1 and 3: a chunk used from the head is planned for `t_head + p`, and an
//! activation restarts the head at its instant), so the chunks of one period need not start
//! together, and a server is not a sporadic task. Its workload is still bounded. Follow one
//! unit of budget: it becomes available at `a_1 < a_2 < ...`, `a_{j+1} >= a_j + p`, and is
//! spent within `R` of each `a_j`, where `R` is the server's own fixed point for `C = e`
//! (from `a_j` on the server stays active with budget until that unit is spent, and it spends
//! at most `e` before it, the queue being first in, first out, so it waits only while `m`
//! higher entities run, as a job of `C = e` would). In a window `[t, t + L)` a unit is spent
//! only from `a_j` in `(t - R, t + L)`; split that range into `N = floor((L + R) / p)` spans of
//! `p` on the right, which hold at most `N` of a unit's `a_j` (at most `N e` of budget), and
//! what is left on the left, of length `r = L + R - N p < p`, which holds at most one `a_j`
//! of each unit, all spent within `[t, t + r)`, so at most `min(e, r)` by the sequential server.
//! So `W(L) <= N e + min(e, r)`: BC07's `W_i` with `R_i + e` in place of `R_i`, which is how
//! the analysis counts a server among the higher entities. The server's own bound is its
//! fixed point for `C = e`: every chunk is spent within it, and so is every job of a client
//! alone in it that needs at most `e` per `p`, finding the whole budget back at its release.
//!
//! The iteration steps one nanosecond at a time while `m` or more of the `min` terms are
//! capped at `R_k - C_k + 1`, which with millisecond parameters would take millions of
//! steps; its `response_time` skips such runs exactly (the argument is written there), so
//! the result is the same fixed point the plain iteration reaches.

use bulwark_core::{Duration, Priority};

use crate::slot_supply::SlotSupply;

/// One sporadic task as the analysis takes it: `C` = `budget`, `T` = `D` = `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FpTask {
    /// `C`, the execution bound (a reservation's budget `e`).
    pub budget: Duration,
    /// `T`, the minimum inter-arrival time, and `D`, the relative deadline (a reservation's
    /// period `p`).
    pub period: Duration,
    /// Its fixed priority (larger is more important).
    pub priority: Priority,
    /// An SPR sporadic server `(e, p)` rather than a sporadic task: its workload counts from
    /// `R + e` in place of `R` (see the module's docs).
    pub sporadic_server: bool,
}

/// What the analysis says of one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    /// The iteration converged at `R <= D`: every job completes within `R` of its release.
    Bounded(Duration),
    /// The iteration passed `D`: not shown schedulable. The value is the first iterate above
    /// `D`, a lower bound on the fixed point (so `R > D`); it saturates at the largest
    /// duration.
    Exceeds(Duration),
    /// Not computed: a higher-priority task's iteration passed its deadline (its `R_i`,
    /// which this task's terms need, is unknown), or there are no cores.
    NotComputed,
}

impl Response {
    /// The bound, when the iteration converged within the deadline.
    pub fn bound(&self) -> Option<Duration> {
        match self {
            Response::Bounded(r) => Some(*r),
            _ => None,
        }
    }
}

/// The analysis of one task set on `m` cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rta {
    /// The cores, `m`.
    pub cores: u16,
    /// Per task, in the order given.
    pub responses: Vec<Response>,
    /// The tasks' positions from the highest priority to the lowest: the order the analysis
    /// took them in (equal priorities by position).
    pub order: Vec<usize>,
    /// Every task [`Response::Bounded`] (false on no cores, even for an empty set, as
    /// [`crate::global_edf::gfb`]).
    pub schedulable: bool,
}

/// Bertogna and Cirinei's response-time analysis of `tasks` under global fixed priority on
/// `cores` cores.
pub fn rta(tasks: &[FpTask], cores: u16) -> Rta {
    rta_masked(tasks, cores, &[])
}

/// The same on cores that terminations may mask: `masks` holds each termination's mask (one
/// core at a time, up to that long in all; `Duration::MAX` when unbounded).
pub fn rta_masked(tasks: &[FpTask], cores: u16, masks: &[Duration]) -> Rta {
    rta_beside(tasks, cores, masks, &[])
}

/// [`rta_beside`] with time partitions as the entities, each at most `L - sbf(L)` of its
/// slots in a window of length `L` ([`SlotSupply::most_busy`]).
pub fn rta_partitioned(
    tasks: &[FpTask],
    cores: u16,
    masks: &[Duration],
    partitions: &[SlotSupply],
) -> Rta {
    with_partitions(partitions, |beside| rta_beside(tasks, cores, masks, beside))
}

/// Runs `analysis` with each time partition as an entity, at most `L - sbf(L)` of its slots
/// in a window of length `L` ([`SlotSupply::most_busy`]).
pub fn with_partitions<T>(partitions: &[SlotSupply], analysis: impl FnOnce(&[Entity]) -> T) -> T {
    let slot_time: Vec<_> = partitions
        .iter()
        .map(|slots| move |length| slots.most_busy(length))
        .collect();
    let beside: Vec<Entity> = slot_time.iter().map(|most| most as Entity).collect();
    analysis(&beside)
}

/// The most one interfering entity beside the tasks (a time partition) runs in any window of
/// the given length, ns; non-decreasing in the length.
pub type Entity<'a> = &'a dyn Fn(u128) -> u128;

/// [`rta_masked`] beside other entities that each run on one core at a time, such as time
/// partitions: like a mask, each adds `min(W(R_k), R_k - C_k + 1)` to every task's sum, its
/// `W` given by `beside`, and counts among the "higher" entities of the `R_k = C_k`
/// shortcut.
pub fn rta_beside(tasks: &[FpTask], cores: u16, masks: &[Duration], beside: &[Entity]) -> Rta {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    // Highest priority first; a stable sort keeps equal priorities in position order.
    order.sort_by_key(|&i| std::cmp::Reverse(tasks[i].priority));
    let mut responses = vec![Response::NotComputed; tasks.len()];
    if cores == 0 {
        return Rta {
            cores,
            responses,
            order,
            schedulable: false,
        };
    }
    let masking = masking(masks);
    // (C_i, T_i, R_i) of the tasks analysed so far, highest priority first.
    let mut higher: Vec<(u128, u128, u128)> = Vec::with_capacity(tasks.len());
    for (rank, &k) in order.iter().enumerate() {
        let task = tasks[k];
        let (c, d) = (
            u128::from(task.budget.as_nanos()),
            u128::from(task.period.as_nanos()),
        );
        let response = if rank + masking.len() + beside.len() < usize::from(cores) {
            // Fewer than m higher-priority tasks and masks: a core is always free for k,
            // R_k = C_k.
            if c <= d {
                Ok(c)
            } else {
                Err(c)
            }
        } else {
            response_time(c, d, &higher, &masking, beside, u128::from(cores))
        };
        match response {
            Ok(r) => {
                responses[k] = Response::Bounded(nanos(r));
                // A server's chunks start up to R apart: its workload reaches R + e back.
                let reach = if task.sporadic_server { r + c } else { r };
                higher.push((c, d, reach));
            }
            Err(at_least) => {
                responses[k] = Response::Exceeds(nanos(at_least));
                break;
            }
        }
    }
    let schedulable = responses.iter().all(|r| matches!(r, Response::Bounded(_)));
    Rta {
        cores,
        responses,
        order,
        schedulable,
    }
}

/// Each termination's mask as a task whose workload in any window of length L is min(M, L)
/// (one job, no period within reach): W(L) = min(C, L + R - C) with R = C.
pub(crate) fn masking(masks: &[Duration]) -> Vec<(u128, u128, u128)> {
    masks
        .iter()
        .map(|mask| u128::from(mask.as_nanos()))
        .filter(|&mask| mask > 0)
        .map(|mask| (mask, u128::MAX >> 2, mask))
        .collect()
}

pub(crate) fn nanos(value: u128) -> Duration {
    Duration::from_nanos(u64::try_from(value).unwrap_or(u64::MAX))
}

/// BC07's workload bound `W_i(L)` of a task `(C_i, T_i)` with response-time bound `R_i`:
/// `N_i(L) C_i + min(C_i, L + R_i - C_i - N_i(L) T_i)`, `N_i(L) = floor((L + R_i - C_i) /
/// T_i)`. `R_i >= C_i` and `T_i > 0` (a task with `C_i = 0` is never asked for).
pub(crate) fn workload(l: u128, (c, t, r): (u128, u128, u128)) -> u128 {
    // L + R_i - C_i: each term below 2^64, no overflow in u128.
    let reach = l + (r - c);
    let n = reach / t;
    // L + R_i - C_i - N_i T_i is the remainder. N_i C_i fits in u128 unless C_i > T_i,
    // which a valid reservation never has: saturate then.
    n.saturating_mul(c).saturating_add(c.min(reach % t))
}

/// The least fixed point `R_k` of BC07's iteration for a task `(C_k, D_k)` below the tasks
/// `higher` (each `(C_i, T_i, R_i)`) on `m` cores: `Ok(R_k)` when it is at most `D_k`, else
/// `Err` with the first iterate above `D_k`.
///
/// With `x = R_k - C_k`, the iteration is `x <- g(x) = floor(S(x) / m)`, `S(x) = sum_i
/// min(W_i(C_k + x), x + 1)`. `g` is non-decreasing (each `W_i` is), so from `x = 0` the
/// iterates stay at or below its least fixed point `x*` and strictly grow until they reach
/// it; each iteration either stops or increases `x` by at least one, and stops once `C_k + x`
/// passes `D_k`, so at most `D_k - C_k + 1` iterations run.
///
/// Skipping, exactly: call term `i` *capped* at `x` when `W_i(C_k + x) >= x + 1`. If `q >= m`
/// terms are capped at `x <= x*`, let `B` be the least of their `W_i(C_k + x)` (so `B >= x +
/// 1`). For any `y` in `[x, B - 1]`, each of those terms is still capped (`W_i(C_k + y) >=
/// W_i(C_k + x) >= B >= y + 1`), so `S(y) >= q (y + 1) >= m (y + 1)` and `g(y) >= y + 1 > y`:
/// no fixed point lies in `[x, B - 1]`, hence `x* >= B`, and the iteration may go on from
/// `max(g(x), B) <= x*`. Otherwise it would have climbed by as little as one nanosecond per
/// step up to `B`. The argument needs no more of a `W_i` than that it is non-decreasing, so
/// the `beside` entities' terms take part in it alike.
pub(crate) fn response_time(
    c: u128,
    d: u128,
    higher: &[(u128, u128, u128)],
    masking: &[(u128, u128, u128)],
    beside: &[Entity],
    m: u128,
) -> Result<u128, u128> {
    if c > d {
        return Err(c);
    }
    // A task with no budget interferes with nothing (and a zero period, refused by
    // validation, comes only with a zero budget here: any other failed its own deadline).
    let interfering: Vec<(u128, u128, u128)> = higher
        .iter()
        .chain(masking)
        .copied()
        .filter(|&(c_i, _, _)| c_i > 0)
        .collect();
    let mut x: u128 = 0;
    loop {
        let cap = x + 1;
        let mut sum: u128 = 0;
        let mut capped: u128 = 0;
        let mut least_capped = u128::MAX;
        let workloads = interfering
            .iter()
            .map(|&task| workload(c + x, task))
            .chain(beside.iter().map(|entity| entity(c + x)));
        for w in workloads {
            if w >= cap {
                capped += 1;
                least_capped = least_capped.min(w);
                sum = sum.saturating_add(cap);
            } else {
                sum = sum.saturating_add(w);
            }
        }
        // R_k <- C_k + floor((1/m) sum min(W_i(R_k), R_k - C_k + 1)).
        let mut next = sum / m;
        if capped >= m {
            next = next.max(least_capped);
        }
        if next <= x {
            // g(x) <= x with x <= x*: x is the least fixed point.
            return Ok(c + x);
        }
        x = next;
        let r = c.saturating_add(x);
        if r > d {
            return Err(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked sets are in nanosecond "units", so that `R - C + 1` is one unit.
    fn task(budget: u64, period: u64, priority: u8) -> FpTask {
        FpTask {
            budget: Duration::from_nanos(budget),
            period: Duration::from_nanos(period),
            priority: Priority(priority),
            sporadic_server: false,
        }
    }

    fn units(rta: &Rta) -> Vec<Option<u64>> {
        rta.responses
            .iter()
            .map(|r| r.bound().map(Duration::as_nanos))
            .collect()
    }

    /// m = 3 and three tasks: each has at most two higher-priority tasks, fewer than m, so
    /// R_k = C_k for all: (2, 5) -> 2, (3, 7) -> 3, (4, 10) -> 4, whatever the priorities.
    #[test]
    fn fewer_higher_priority_tasks_than_cores_means_r_equals_c() {
        let set = [task(2, 5, 9), task(3, 7, 9), task(4, 10, 1)];
        let rta = rta(&set, 3);
        assert_eq!(units(&rta), [Some(2), Some(3), Some(4)]);
        assert_eq!(rta.order, [0, 1, 2]);
        assert!(rta.schedulable);
        // Still checked against D: a budget above its period fails even alone.
        let rta = super::rta(&[task(6, 5, 1)], 2);
        assert_eq!(rta.responses, [Response::Exceeds(Duration::from_nanos(6))]);
        assert!(!rta.schedulable);
    }

    /// m = 2; t1 (2, 5) above t2 (3, 6) above t3 (4, 10). R1 = 2 and R2 = 3 (fewer than m
    /// higher). t3, the plain iteration (W_i(L) = N C + min(C, L + R - C - N T)):
    /// - R = 4, cap R - C + 1 = 1: W1(4): N = floor(4 / 5) = 0, W = min(2, 4) = 2 -> 1;
    ///   W2(4): N = floor(4 / 6) = 0, W = min(3, 4) = 3 -> 1; R = 4 + floor(2 / 2) = 5.
    /// - R = 5, cap 2: W1(5): N = 1, W = 2 + min(2, 0) = 2 -> 2; W2(5) = min(3, 5) = 3 -> 2;
    ///   R = 4 + floor(4 / 2) = 6.
    /// - R = 6, cap 3: W1(6): N = 1, W = 2 + min(2, 1) = 3 -> 3; W2(6): N = 1, W = 3 + 0 = 3
    ///   -> 3; R = 4 + 3 = 7.
    /// - R = 7, cap 4: W1(7) = 2 + min(2, 2) = 4 -> 4; W2(7) = 3 + min(3, 1) = 4 -> 4;
    ///   R = 4 + 4 = 8.
    /// - R = 8, cap 5: W1(8) = 2 + min(2, 3) = 4 -> 4; W2(8) = 3 + min(3, 2) = 5 -> 5;
    ///   R = 4 + floor(9 / 2) = 8: converged, 8 <= 10.
    ///
    /// (With the skip: at R = 4 both terms are capped, the least W is 2, so x goes 0 -> 2;
    /// then 2 -> 3 -> 4 as above, and 4 is the fixed point: the same R3 = 8.)
    #[test]
    fn a_set_worked_through_its_iterations() {
        let set = [task(4, 10, 1), task(2, 5, 3), task(3, 6, 2)];
        let rta = rta(&set, 2);
        assert_eq!(rta.order, [1, 2, 0]);
        assert_eq!(units(&rta), [Some(8), Some(2), Some(3)]);
        assert!(rta.schedulable);
    }

    /// m = 2; t1 (5, 6) and t2 (5, 6) above t3 (3, 6). R1 = R2 = 5. t3: R = 3, cap 1:
    /// W(3) = min(5, 3 + 5 - 5) = 3 -> 1 each, R = 3 + 1 = 4; R = 4, cap 2: W = 4 -> 2 each,
    /// R = 5; R = 5, cap 3: W = 5 -> 3 each, R = 6; R = 6, cap 4: N = floor(6 / 6) = 1,
    /// W = 5 + min(5, 0) = 5 -> 4 each, R = 7 > 6: not shown. (Synchronously released, both
    /// cores run t1 and t2 over [0, 5) and t3 gets one unit by 6: it really misses.) With the
    /// skip: at R = 3 both capped, least W 3 -> R = 6; at R = 6 both capped, least W 5 ->
    /// R = 3 + 5 = 8, the first iterate above 6 reported (the fixed point is at least 8).
    #[test]
    fn a_set_that_fails() {
        let set = [task(5, 6, 2), task(5, 6, 2), task(3, 6, 1)];
        let rta = rta(&set, 2);
        assert_eq!(
            rta.responses,
            [
                Response::Bounded(Duration::from_nanos(5)),
                Response::Bounded(Duration::from_nanos(5)),
                Response::Exceeds(Duration::from_nanos(8)),
            ]
        );
        assert!(!rta.schedulable);
    }

    /// A failure leaves the tasks below it not computed: on one core, t2 (3, 2) below
    /// t1 (1, 4) has C = 3 > D = 2 (R >= 3); t3 below it is not computed.
    #[test]
    fn tasks_below_a_failure_are_not_computed() {
        let set = [task(1, 4, 3), task(3, 2, 2), task(1, 100, 1)];
        let rta = rta(&set, 1);
        assert_eq!(rta.responses[0], Response::Bounded(Duration::from_nanos(1)));
        assert_eq!(rta.responses[1], Response::Exceeds(Duration::from_nanos(3)));
        assert_eq!(rta.responses[2], Response::NotComputed);
    }

    /// The cap min(W_i, R - C + 1) matters. m = 2; t1 (8, 10) above t2 (1, 10) above
    /// t3 (2, 3). R1 = 8, R2 = 1. t3: R = 2, cap 1: W1(2) = min(8, 2 + 0) = 2 -> 1,
    /// W2(2) = min(1, 2) = 1 -> 1; R = 2 + floor(2 / 2) = 3. R = 3, cap 2: W1(3) = 3 -> 2,
    /// W2(3) = 1 -> 1; R = 2 + floor(3 / 2) = 3: converged, 3 <= 3. Without the cap,
    /// R = 3 gives 2 + floor((3 + 1) / 2) = 4 > 3: t1's long job can delay t3 only while
    /// both cores are busy, at most R - C + 1 of it.
    #[test]
    fn the_cap_on_each_interference_term_matters() {
        let set = [task(8, 10, 3), task(1, 10, 2), task(2, 3, 1)];
        let rta = rta(&set, 2);
        assert_eq!(units(&rta), [Some(8), Some(1), Some(3)]);
        assert!(rta.schedulable);
    }

    /// Equal priorities follow position, as the clustered scheduler's ties by reservation id.
    /// m = 1, a (1, 4) and b (2, 4) at one priority. a first: R_a = 1; b: R = 2, cap 1,
    /// W_a(2) = min(1, 2) = 1 -> 1, R = 3; R = 3, cap 2: W_a(3) = 1 -> 1, R = 3: converged.
    /// b first: R_b = 2; a: R = 1, cap 1, W_b(1) = min(2, 1) = 1 -> 1, R = 2; R = 2, cap 2:
    /// W_b(2) = 2 -> 2, R = 3; R = 3, cap 3: W_b(3) = 2 -> 2, R = 3: converged.
    #[test]
    fn equal_priorities_follow_position() {
        let rta_ab = rta(&[task(1, 4, 7), task(2, 4, 7)], 1);
        assert_eq!(rta_ab.order, [0, 1]);
        assert_eq!(units(&rta_ab), [Some(1), Some(3)]);
        let rta_ba = rta(&[task(2, 4, 7), task(1, 4, 7)], 1);
        assert_eq!(units(&rta_ba), [Some(2), Some(3)]);
    }

    /// Dhall's set, (9, 10) twice and (1, 10) lowest, in milliseconds on 2 cores (GFB
    /// rejects it under EDF: U = 19/10 > 11/10). R1 = R2 = 9 ms. t3 (C = 1 ms): at
    /// R = 1 ms + x both terms are capped (W = min(9 ms, 1 ms + x) >= x + 1 ns) until
    /// x = 9 ms, where R = 10 ms: N = floor(10 / 10) = 1, W = 9 ms + min(9 ms, 0) = 9 ms
    /// < 9 ms + 1 ns, so R = 1 ms + floor(18 ms / 2) = 10 ms: converged, 10 <= 10. The skip
    /// gets there in ten steps where the plain iteration takes nine million.
    #[test]
    fn dhall_s_set_passes_with_the_light_task_lowest_in_milliseconds() {
        let ms = Duration::from_millis;
        let heavy = FpTask {
            budget: ms(9),
            period: ms(10),
            priority: Priority(5),
            sporadic_server: false,
        };
        let light = FpTask {
            budget: ms(1),
            period: ms(10),
            priority: Priority(1),
            sporadic_server: false,
        };
        let rta = rta(&[heavy, heavy, light], 2);
        assert_eq!(
            rta.responses
                .iter()
                .map(Response::bound)
                .collect::<Vec<_>>(),
            [Some(ms(9)), Some(ms(9)), Some(ms(10))]
        );
        assert!(rta.schedulable);
        // One nanosecond more for the light task: R = 10 ms + 1 ns > 10 ms.
        let light = FpTask {
            budget: Duration::from_nanos(1_000_001),
            ..light
        };
        assert!(!super::rta(&[heavy, heavy, light], 2).schedulable);
    }

    /// Nanosecond counts near 2^64 neither overflow nor loop long.
    #[test]
    fn huge_durations_are_exact_and_quick() {
        let max = u64::MAX;
        let set = [
            task(max / 2, max, 3),
            task(max / 2, max, 2),
            task(max / 4, max, 1),
        ];
        let rta = rta(&set, 2);
        // t3: both terms capped while W = min(C, R) grows with R; R = max/4 + x reaches
        // x = max/2 (the least capped W then stops growing), R = max/4 + max/2 <= max.
        assert_eq!(
            units(&rta),
            [Some(max / 2), Some(max / 2), Some(max / 4 + max / 2)]
        );
    }

    #[test]
    fn no_cores_and_empty_sets() {
        assert!(!rta(&[], 0).schedulable);
        assert_eq!(rta(&[task(1, 2, 0)], 0).responses, [Response::NotComputed]);
        assert!(rta(&[], 1).schedulable);
        // A zero budget interferes with nothing, even with a zero period.
        let set = [task(0, 0, 9), task(1, 1, 1)];
        assert_eq!(units(&rta(&set, 1)), [Some(0), Some(1)]);
    }

    /// m = 2; t1 (2, 10) above t2 (3, 10), beside an entity that runs at most 4 of any
    /// window (W(L) = min(L, 4)). R1 = 2: one entity above it, fewer than m. t2: at R = 3
    /// (x = 0, cap 1) W1(3) = 2 and W(3) = 3 are both capped, so x skips to the lesser, 2;
    /// at R = 5 (cap 3) W1(5) = 2 is not capped, W(5) = 4 is: R = 3 + floor((2 + 3) / 2)
    /// = 5, the fixed point. By hand: t1 runs [0, 2) on one core and the entity [0, 4) on
    /// the other, so t2 starts at 2 and ends at 5. Without the entity R2 = 3.
    #[test]
    fn an_entity_beside_the_tasks_interferes_as_its_workload_allows() {
        let set = [task(2, 10, 2), task(3, 10, 1)];
        let most = |length: u128| length.min(4);
        let rta = rta_beside(&set, 2, &[], &[&most]);
        assert_eq!(units(&rta), [Some(2), Some(5)]);
        assert_eq!(units(&rta_beside(&set, 2, &[], &[])), [Some(2), Some(3)]);
    }

    /// m = 2; `a` and `b` (3, 10) above `l` (5, 20). As sporadic tasks, R_a = R_b = 3 and
    /// for `l` both terms are capped at x = 0 (W = 3 >= 1), so x skips to 3, where W(8) = 3 <
    /// 4 each: R_l = 5 + floor(6 / 2) = 8. As SPR servers each workload reaches R + e = 6
    /// back: at x = 3, W(8) = floor(11 / 10) 3 + min(3, 1) = 4, capped (>= 4), so x = 4;
    /// W(9) = 3 + min(3, 2) = 5 >= 5, x = 5; W(10) = 6 >= 6, x = 6; W(11) = 3 + min(3, 4) = 6
    /// < 7: R_l = 5 + floor(12 / 2) = 11. The servers' own R stay 3. One server alone: at
    /// x = 3 its W = 4 is capped and the task's 3 is not, R_l = 5 + floor(7 / 2) = 8.
    #[test]
    fn an_spr_server_s_workload_reaches_r_plus_e_back() {
        let server = |task: FpTask| FpTask {
            sporadic_server: true,
            ..task
        };
        let (a, b, l) = (task(3, 10, 3), task(3, 10, 2), task(5, 20, 1));
        assert_eq!(units(&rta(&[a, b, l], 2)), [Some(3), Some(3), Some(8)]);
        assert_eq!(
            units(&rta(&[server(a), server(b), l], 2)),
            [Some(3), Some(3), Some(11)]
        );
        assert_eq!(
            units(&rta(&[server(a), b, l], 2)),
            [Some(3), Some(3), Some(8)]
        );
        // With D_l = 10 the servers take l past its deadline; the tasks do not.
        let tight = task(5, 10, 1);
        assert!(rta(&[a, b, tight], 2).schedulable);
        assert!(!rta(&[server(a), server(b), tight], 2).schedulable);
    }

    proptest::proptest! {
        /// Counting some reservations as SPR servers never lowers a bound: every response
        /// bounded with them is bounded without them, and no lower.
        #[test]
        fn servers_never_lower_a_bound(
            set in proptest::collection::vec((1u64..40, 40u64..120, 0u8..4, proptest::bool::ANY), 1..7),
            cores in 1u16..4,
        ) {
            let tasks: Vec<FpTask> = set.iter().map(|&(c, t, p, _)| task(c, t, p)).collect();
            let servers: Vec<FpTask> = set
                .iter()
                .map(|&(c, t, p, server)| FpTask { sporadic_server: server, ..task(c, t, p) })
                .collect();
            let (plain, with_servers) = (rta(&tasks, cores), rta(&servers, cores));
            for (tasks_r, servers_r) in plain.responses.iter().zip(&with_servers.responses) {
                if let Some(bound) = servers_r.bound() {
                    proptest::prop_assert!(tasks_r.bound().is_some_and(|r| r <= bound));
                }
            }
            proptest::prop_assert!(!with_servers.schedulable || plain.schedulable);
        }

        /// An entity whose workload in any window is `min(L, M)` is a mask of `M`: the same
        /// responses, task for task.
        #[test]
        fn an_entity_of_at_most_m_is_a_mask_of_m(
            set in proptest::collection::vec((1u64..40, 40u64..120, 0u8..4), 1..6),
            mask in 1u64..60,
            cores in 1u16..4,
        ) {
            let tasks: Vec<FpTask> = set.iter().map(|&(c, t, p)| task(c, t, p)).collect();
            let most = |length: u128| length.min(u128::from(mask));
            let beside = rta_beside(&tasks, cores, &[], &[&most]);
            let masked = rta_masked(&tasks, cores, &[Duration::from_nanos(mask)]);
            proptest::prop_assert_eq!(beside, masked);
        }
    }
}
