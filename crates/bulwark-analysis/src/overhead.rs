//! The budget a reservation loses to scheduling overhead (SPR paper, section III-G, Eq. 2).
//!
//! `L_i = ceil(b_i / eta_i) * O_pre`: at most `ceil(b/eta) - 1` involuntary preemptions per
//! period (section III-F) plus the initial dispatch, each paying `O_pre` = one timer interrupt,
//! one scheduler invocation with all of its work, and one context switch. The cache-related
//! preemption delay is bounded "analogously" and reported on its own: `ceil(b/eta)` refills.
//!
//! Both bounds need two things to exist at all, and `None` (unbounded) says which is missing:
//!
//! - `eta > 0`, or the number of preemptions per period is up to the higher-priority servers'
//!   (possibly malicious) activation patterns;
//! - a bound `W` on the work units of one scheduler invocation. SPR processes at most the
//!   timeouts of the task it dispatches, so `W` is
//!   [`work_bound`]`(S, priority levels)`. A naive
//!   deferrable or sporadic server handles every expired timer in the interrupt that finds it,
//!   so in an open system `W` has no bound.
//!
//! Times are integer nanoseconds; products saturate (a saturated bound is still an upper
//! bound's stand-in, reported as `u64::MAX` nanoseconds, never wrapped).

use bulwark_core::reservation::spr::work_bound;
use bulwark_core::reservation::Reservation;
use bulwark_core::Duration;
use bulwark_spec::{CostModel, PolicyKind};

use crate::admission::Server;

/// How much work one scheduler invocation can do on a core, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkBound {
    /// `W` in work units; `None` when it has no bound.
    pub units: Option<u64>,
    /// Where the number comes from, for people.
    pub reason: String,
}

/// The reason given for the naive servers' unbounded `W`.
pub const EAGER_TIMERS: &str = "eager timer handling: grows with the number of expired timers";

/// `W` for `policy` on a core holding `servers`; `None` for a policy without reservation
/// servers. SPR (either rule): `work_bound(max S, number of distinct priorities)`. The
/// deferrable rule keeps no replenishment queue, but its reservations still carry an `S` (the
/// default unless set), which is passed as given. Naive servers: unbounded ([`EAGER_TIMERS`]).
pub fn work_per_invocation(policy: PolicyKind, servers: &[Server]) -> Option<WorkBound> {
    match policy {
        PolicyKind::Spr | PolicyKind::SprDeferrable => {
            let replenishments = servers
                .iter()
                .map(|s| usize::from(s.reservation.replenishments))
                .max()
                .unwrap_or(0);
            let mut priorities: Vec<u8> = servers.iter().map(|s| s.priority.0).collect();
            priorities.sort_unstable();
            priorities.dedup();
            let levels = priorities.len();
            Some(WorkBound {
                units: Some(work_bound(replenishments, levels)),
                reason: format!(
                    "SPR: work_bound(S = {replenishments}, {levels} priority level{})",
                    if levels == 1 { "" } else { "s" }
                ),
            })
        }
        PolicyKind::DeferrableServer | PolicyKind::SporadicServer => Some(WorkBound {
            units: None,
            reason: EAGER_TIMERS.to_owned(),
        }),
        PolicyKind::FixedPriority
        | PolicyKind::Edf
        | PolicyKind::Cbs
        | PolicyKind::HardCbs
        | PolicyKind::Vbs => None,
    }
}

/// `ceil(b / eta)`: dispatches per period, the initial one included; `None` when `eta = 0`.
pub fn dispatches_per_period(reservation: Reservation) -> Option<u64> {
    let eta = reservation.non_preemptive.as_nanos();
    (eta != 0).then(|| reservation.budget.as_nanos().div_ceil(eta))
}

/// `O_pre = time_of(timer interrupt + scheduler + per_work_unit * W + context switch)`;
/// `None` when `W` is unbounded.
pub fn preemption_overhead(cost: &CostModel, work_units: Option<u64>) -> Option<Duration> {
    let units = work_units?;
    let cycles = cost
        .timer_interrupt
        .saturating_add(cost.scheduler)
        .saturating_add(cost.per_work_unit.saturating_mul(units))
        .saturating_add(cost.context_switch);
    Some(cost.time_of(cycles))
}

/// Eq. 2: `L_i = ceil(b / eta) * O_pre`; `None` when `eta = 0` or `O_pre` is unbounded.
pub fn lost_budget(reservation: Reservation, preemption: Option<Duration>) -> Option<Duration> {
    Some(preemption?.saturating_mul(dispatches_per_period(reservation)?))
}

/// The cache-related bound: `ceil(b / eta) * time_of(refill)`; `None` when `eta = 0`. Like
/// Eq. 2 it counts the initial dispatch, whose cache another task may have evicted. `refill` is
/// the larger of `cache_refill` and `cache_flush`: a task resuming after another task flushed
/// the cache pays the larger of the two (never both), so that is the worst one dispatch pays.
pub fn cache_delay(reservation: Reservation, cost: &CostModel) -> Option<Duration> {
    let refill = cost.cache_refill.max(cost.cache_flush);
    Some(
        cost.time_of(refill)
            .saturating_mul(dispatches_per_period(reservation)?),
    )
}

/// Eq. 2 and the cache bound for one reservation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overhead {
    /// `O_pre`; `None` when `W` is unbounded.
    pub preemption: Option<Duration>,
    /// `L_i`; `None` when unbounded.
    pub lost_budget: Option<Duration>,
    /// The cache-related preemption delay per period; `None` when unbounded.
    pub cache_delay: Option<Duration>,
}

/// [`Overhead`] for `reservation` under `cost`, with `W = work_units`.
pub fn overhead(reservation: Reservation, cost: &CostModel, work_units: Option<u64>) -> Overhead {
    let preemption = preemption_overhead(cost, work_units);
    Overhead {
        preemption,
        lost_budget: lost_budget(reservation, preemption),
        cache_delay: cache_delay(reservation, cost),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// timer 1000 + scheduler 2000 + 100 * 10 units + switch 3000 = 7000 cycles: 7 us at
    /// 1 GHz, 3.5 us at 2 GHz; with W unbounded there is no O_pre.
    #[test]
    fn preemption_overhead_by_hand() {
        let mut cost = CostModel {
            timer_interrupt: 1000,
            scheduler: 2000,
            per_work_unit: 100,
            context_switch: 3000,
            ..CostModel::default()
        };
        assert_eq!(
            preemption_overhead(&cost, Some(10)),
            Some(Duration::from_micros(7))
        );
        cost.clock_hz = 2_000_000_000;
        assert_eq!(
            preemption_overhead(&cost, Some(10)),
            Some(Duration::from_nanos(3500))
        );
        assert_eq!(preemption_overhead(&cost, None), None);
    }

    /// Saturation instead of overflow: u64::MAX work units of u64::MAX cycles.
    #[test]
    fn huge_costs_saturate() {
        let cost = CostModel {
            per_work_unit: u64::MAX,
            cache_refill: u64::MAX,
            clock_hz: 1,
            ..CostModel::default()
        };
        let r = Reservation::new(Duration::MAX, Duration::MAX)
            .with_non_preemptive(Duration::from_nanos(1));
        let o = overhead(r, &cost, Some(u64::MAX));
        assert_eq!(o.preemption, Some(Duration::MAX));
        assert_eq!(o.lost_budget, Some(Duration::MAX));
        assert_eq!(o.cache_delay, Some(Duration::MAX));
    }
}
