//! The joint demand of several tasks bound to one sporadic reservation of a cluster (MC-IPC
//! paper, section III: "a reservation contains one or more sporadic tasks"): a fixed-priority
//! response-time analysis of the tasks inside the reservation against the least supply the
//! reservation gives them.
//!
//! The reservation runs the first of its threads, in file order, whose job is pending and
//! ready, so inside it the tasks are scheduled by preemptive fixed priority in file order.
//! What it supplies them is bounded below by a supply bound function `sbf(t)`, and a task's
//! jobs complete within the least `R` with `C_k + sum_{j<k} ceil(R / T_j) C_j <= sbf(R)` (the
//! hierarchical response-time test of Shin and Lee, and of Davis and Burns for fixed-priority
//! servers), taken as a fixed point of `R = tbf(W_k(R))`, where `tbf` is the inverse of `sbf`.
//!
//! The supply of section III's rule, which is not the periodic resource's: the budget `e` is
//! set at an activation no sooner than `p` after the last replenishment, and *discarded* when
//! the last pending job completes. So a task released just after another task's job used a
//! sliver of a fresh budget and completed waits up to `p` for the next replenishment, and that
//! budget may be served at the end of its window: the blackout is `p + r - e`, where `r <= p`
//! bounds how long a replenished budget takes to be served (the period under Goossens, Funk
//! and Baruah's test, the reservation's response under the response-time analysis), not the
//! `2 (p - e)` of a periodic resource that keeps its budget. After the blackout, a chunk of
//! `e` comes every `p`: while the reservation stays active, it is replenished `p` after the
//! last replenishment (its budget is exhausted by then, since it is served within `r`).

use bulwark_core::Duration;

use crate::global_fp::Response;

/// The least supply a sporadic reservation `(e, p)` gives the threads bound to it, in any
/// window in which some of them always have a pending job: nothing for `blackout`, then `e`
/// at the end of every `p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Supply {
    /// The budget `e`.
    pub budget: Duration,
    /// The period `p`.
    pub period: Duration,
    /// The longest time with no supply at the start of a window: `p + r - e`.
    pub blackout: Duration,
}

impl Supply {
    /// The supply of a section III sporadic reservation `(e, p)` whose replenished budget is
    /// served within `served_within` (`r <= p`) of the replenishment whenever it stays active.
    pub fn sporadic(budget: Duration, period: Duration, served_within: Duration) -> Supply {
        Supply {
            budget,
            period,
            // The window starts just after a job completed on a sliver of a fresh budget: the
            // next budget comes `p` later and is served last within its `r`.
            blackout: period.saturating_add(served_within).saturating_sub(budget),
        }
    }

    /// `tbf(w)`: the shortest window that surely supplies `demand` (the inverse of `sbf`):
    /// the blackout, then `ceil(w / e) - 1` whole chunks of `e` each a period apart, then the
    /// rest. Saturates at the largest duration; with no budget, nothing is ever supplied.
    pub fn time_to_supply(&self, demand: Duration) -> Duration {
        if demand.is_zero() {
            return Duration::ZERO;
        }
        let budget = self.budget.as_nanos();
        if budget == 0 {
            return Duration::from_nanos(u64::MAX);
        }
        let whole_chunks = (demand.as_nanos() - 1) / budget;
        let rest = demand.as_nanos() - whole_chunks * budget;
        self.blackout
            .saturating_add(self.period.saturating_mul(whole_chunks))
            .saturating_add(Duration::from_nanos(rest))
    }
}

/// One task bound to the reservation: its jobs' worst-case execution `C`, least release
/// spacing `T` and relative deadline `D`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharer {
    /// `C`.
    pub execution: Duration,
    /// `T`.
    pub spacing: Duration,
    /// `D`.
    pub deadline: Duration,
}

/// The response-time bound of each of `sharers`, given in file order (the reservation's
/// priority order, first highest), against `supply`. A job must complete before its
/// deadline and before the task's next release (a job released behind an unfinished one
/// waits for it), so the limit of each iteration is `min(D, T)`; a task whose iteration
/// passes it is [`Response::Exceeds`], and the tasks after it are [`Response::NotComputed`]
/// (their interference terms would need its jobs to stay within `T`).
pub fn responses(supply: &Supply, sharers: &[Sharer]) -> Vec<Response> {
    let mut out = Vec::with_capacity(sharers.len());
    for (k, sharer) in sharers.iter().enumerate() {
        if matches!(
            out.last(),
            Some(Response::Exceeds(_) | Response::NotComputed)
        ) {
            out.push(Response::NotComputed);
            continue;
        }
        out.push(response(supply, &sharers[..k], sharer));
    }
    out
}

/// `R_k = tbf(C_k + sum_{j<k} ceil(R_k / T_j) C_j)`, iterated from `tbf(sum_{j<=k} C_j)`.
fn response(supply: &Supply, higher: &[Sharer], sharer: &Sharer) -> Response {
    let limit = sharer.deadline.min(sharer.spacing);
    let demand = |window: Duration| {
        higher.iter().fold(sharer.execution, |sum, other| {
            let jobs = window.as_nanos().div_ceil(other.spacing.as_nanos().max(1));
            sum.saturating_add(other.execution.saturating_mul(jobs))
        })
    };
    let mut window = supply.time_to_supply(demand(Duration::from_nanos(1)));
    loop {
        if window > limit {
            return Response::Exceeds(window);
        }
        let next = supply.time_to_supply(demand(window));
        if next == window {
            return Response::Bounded(window);
        }
        window = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;

    fn sharer(execution: Duration, spacing: Duration) -> Sharer {
        Sharer {
            execution,
            spacing,
            deadline: spacing,
        }
    }

    /// `(e, p) = (2, 10)` served within 10: blackout 18; 2 more needs one more chunk, 10 later.
    #[test]
    fn the_supply_waits_a_blackout_then_comes_a_chunk_a_period() {
        let supply = Supply::sporadic(ms(2), ms(10), ms(10));
        assert_eq!(supply.blackout, ms(18));
        assert_eq!(supply.time_to_supply(Duration::ZERO), Duration::ZERO);
        assert_eq!(supply.time_to_supply(ms(1)), ms(19));
        assert_eq!(supply.time_to_supply(ms(2)), ms(20));
        assert_eq!(supply.time_to_supply(ms(3)), ms(29));
        assert_eq!(supply.time_to_supply(ms(4)), ms(30));
        // Served within its response 4 under the response-time analysis: 10 + 4 - 2.
        assert_eq!(Supply::sporadic(ms(2), ms(10), ms(4)).blackout, ms(12));
    }

    /// R = (4, 10) served within 10 (blackout 16) carries A (1 every 40) and B (2 every 40),
    /// both due at 40. A: tbf(1) = 17. B: tbf(2 + 1) = 19, and A has one job in 19. A third
    /// task C (1 every 20): tbf(1 + 1 + 2) = 20; in 20, A and B have one job each: R = 20.
    #[test]
    fn each_task_waits_for_the_ones_before_it_in_file_order() {
        let supply = Supply::sporadic(ms(4), ms(10), ms(10));
        let sharers = [
            sharer(ms(1), ms(40)),
            sharer(ms(2), ms(40)),
            sharer(ms(1), ms(20)),
        ];
        assert_eq!(
            responses(&supply, &sharers),
            vec![
                Response::Bounded(ms(17)),
                Response::Bounded(ms(19)),
                Response::Bounded(ms(20)),
            ]
        );
    }

    /// A's jobs come every 25 and need 3 each of a (2, 10) budget: tbf(3) = 18 + 10 + 1 = 29
    /// > 25, so A's jobs may pile up and B's bound is not computed.
    #[test]
    fn a_task_past_its_deadline_leaves_the_later_ones_uncomputed() {
        let supply = Supply::sporadic(ms(2), ms(10), ms(10));
        let sharers = [sharer(ms(3), ms(25)), sharer(ms(1), ms(100))];
        assert_eq!(
            responses(&supply, &sharers),
            vec![Response::Exceeds(ms(29)), Response::NotComputed]
        );
    }

    /// The iteration grows the window while more jobs of the tasks before fall into it:
    /// (5, 10) within 10 (blackout 15) for A (2 every 20) and B (4 every 60): A gets
    /// tbf(2) = 17; B tbf(4 + 2) = 26, in which A has 2 jobs: tbf(8) = 28, still 2: R = 28.
    #[test]
    fn the_iteration_counts_the_jobs_released_in_the_window() {
        let supply = Supply::sporadic(ms(5), ms(10), ms(10));
        let sharers = [sharer(ms(2), ms(20)), sharer(ms(4), ms(60))];
        assert_eq!(
            responses(&supply, &sharers),
            vec![Response::Bounded(ms(17)), Response::Bounded(ms(28))]
        );
    }

    /// No budget: nothing is ever supplied, and the bound saturates past every deadline.
    #[test]
    fn no_budget_supplies_nothing() {
        let supply = Supply::sporadic(Duration::ZERO, ms(10), ms(10));
        assert_eq!(
            responses(&supply, &[sharer(ms(1), ms(10))]),
            vec![Response::Exceeds(Duration::from_nanos(u64::MAX))]
        );
    }
}
