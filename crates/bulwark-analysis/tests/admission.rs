//! SPR admission (Eq. 1) and overhead (Eq. 2), checked against values worked out by hand from
//! the paper's Table I and Fig. 6, and by properties on random server sets.

use bulwark_analysis::admission::{
    blocking, preemptions_per_period, response_time, response_times, Response, Server, Verdict,
};
use bulwark_analysis::overhead::{
    cache_delay, dispatches_per_period, lost_budget, overhead, preemption_overhead,
    work_per_invocation, EAGER_TIMERS,
};
use bulwark_analysis::rbf::ServerKind;
use bulwark_core::reservation::spr::work_bound;
use bulwark_core::{Duration, Priority};
use bulwark_spec::{CostModel, PolicyKind, Reservation};
use proptest::prelude::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Table I: tau_hi (p 30, b 10), tau_mid (p 40, b 20), tau_lo (p 60, b 10), in ms, with
/// sigma_hi > sigma_mid > sigma_lo; `eta_lo` is the low server's non-preemptive region.
fn table_i(kind: ServerKind, eta_lo: Duration) -> Vec<Server> {
    vec![
        Server::new("hi", Priority(3), Reservation::new(ms(10), ms(30)), kind),
        Server::new("mid", Priority(2), Reservation::new(ms(20), ms(40)), kind),
        Server::new(
            "lo",
            Priority(1),
            Reservation::new(ms(10), ms(60)).with_non_preemptive(eta_lo),
            kind,
        ),
    ]
}

fn admitted(blocking: Duration, response: Duration) -> Response {
    Response {
        blocking,
        masked: Some(Duration::ZERO),
        response,
        verdict: Verdict::Admitted,
    }
}

fn exceeds(blocking: Duration, response: Duration) -> Response {
    Response {
        blocking,
        masked: Some(Duration::ZERO),
        response,
        verdict: Verdict::ExceedsPeriod,
    }
}

/// Sporadic servers, alpha(D) = ceil(D / p), no non-preemptive regions (I = 0 for all):
///
/// - hi: nothing above it, R = 10 <= 30.
/// - mid: R0 = 20; 20 + ceil(20/30)*10 = 30; 20 + ceil(30/30)*10 = 30: R = 30 <= 40.
/// - lo: R0 = 10; 10 + ceil(10/30)*10 + ceil(10/40)*20 = 40;
///   10 + ceil(40/30)*10 + ceil(40/40)*20 = 50; 10 + ceil(50/30)*10 + ceil(50/40)*20 = 70,
///   above 60: NOT admitted, last iterate 70.
///
/// Sanity check: U = 10/30 + 20/40 + 10/60 = 4/12 + 6/12 + 2/12 = 1 exactly, and the periods
/// are not harmonic, so fixed priority cannot fit everything (at t = 60 the demand is
/// 10 + 2*10 + 2*20 = 70 > 60 too).
#[test]
fn table_i_under_sporadic_servers() {
    let set = table_i(ServerKind::Sporadic, Duration::ZERO);
    // U = 1 in whole numbers: sum b * 120 / p = 40 + 60 + 20 = 120.
    let scaled: u64 = set
        .iter()
        .map(|s| s.reservation.budget.as_nanos() * 120 / s.reservation.period.as_nanos())
        .sum();
    assert_eq!(scaled, 120);
    assert_eq!(
        response_times(&set),
        vec![
            admitted(ms(0), ms(10)),
            admitted(ms(0), ms(30)),
            exceeds(ms(0), ms(70)),
        ]
    );
}

/// Deferrable servers, alpha(D) = ceil((D + p - b) / p): hi's p - b = 20, mid's p - b = 20.
///
/// - hi: R = 10.
/// - mid: R0 = 20; 20 + ceil((20+20)/30)*10 = 20 + 2*10 = 40;
///   20 + ceil((40+20)/30)*10 = 20 + 2*10 = 40: R = 40 <= 40, admitted with no slack (the
///   double hit costs mid 10 more than under sporadic servers).
/// - lo: R0 = 10; 10 + ceil(30/30)*10 + ceil(30/40)*20 = 40;
///   10 + ceil(60/30)*10 + ceil(60/40)*20 = 10 + 20 + 40 = 70 > 60: NOT admitted.
#[test]
fn table_i_under_deferrable_servers() {
    let set = table_i(ServerKind::Deferrable, Duration::ZERO);
    assert_eq!(
        response_times(&set),
        vec![
            admitted(ms(0), ms(10)),
            admitted(ms(0), ms(40)),
            exceeds(ms(0), ms(70)),
        ]
    );
}

/// Fig. 6: eta_lo = 6 (sporadic servers). lo's region blocks everything above it once:
///
/// - hi: I = max(eta_mid = 0, eta_lo = 6) = 6; R = 6 + 10 = 16 <= 30.
/// - mid: I = 6; R0 = 26; 26 + ceil(26/30)*10 = 36; 26 + ceil(36/30)*10 = 46 > 40: the
///   inversion costs mid its admission.
/// - lo: I = 0 (nothing below it); R as without eta, 70, NOT admitted.
///
/// lo suffers at most ceil(10/6) - 1 = 2 - 1 = 1 involuntary preemption per period, as the
/// paper says; hi and mid (eta = 0) have no bound.
#[test]
fn table_i_with_fig_6_region() {
    let set = table_i(ServerKind::Sporadic, ms(6));
    assert_eq!(blocking(&set, 0), ms(6));
    assert_eq!(blocking(&set, 1), ms(6));
    assert_eq!(blocking(&set, 2), ms(0));
    assert_eq!(
        response_times(&set),
        vec![
            admitted(ms(6), ms(16)),
            exceeds(ms(6), ms(46)),
            exceeds(ms(0), ms(70)),
        ]
    );
    assert_eq!(preemptions_per_period(set[2].reservation), Some(1));
    assert_eq!(preemptions_per_period(set[0].reservation), None);
}

/// A small set that admits everything with a region: hi (b 2, p 10), lo (b 5, p 20, eta 3).
/// hi: I = 3, R = 3 + 2 = 5 <= 10. lo: R0 = 5; 5 + ceil(5/10)*2 = 7; 5 + ceil(7/10)*2 = 7:
/// R = 7 <= 20. lo: ceil(5/3) - 1 = 1 preemption per period.
#[test]
fn a_region_that_fits() {
    let set = vec![
        Server::new(
            "hi",
            Priority(9),
            Reservation::new(ms(2), ms(10)),
            ServerKind::Sporadic,
        ),
        Server::new(
            "lo",
            Priority(4),
            Reservation::new(ms(5), ms(20)).with_non_preemptive(ms(3)),
            ServerKind::Sporadic,
        ),
    ];
    assert_eq!(
        response_times(&set),
        vec![admitted(ms(3), ms(5)), admitted(ms(0), ms(7))]
    );
    assert_eq!(preemptions_per_period(set[1].reservation), Some(1));
}

/// Eq. 2 by hand with kernel-costs.toml's cost model: 2 GHz, timer 4000, scheduler 2000,
/// 100 per work unit, context switch 3000, cache refill 20000 cycles.
///
/// With W = 20: O_pre = 4000 + 2000 + 100*20 + 3000 = 11000 cycles = 5.5 us.
/// - lo of Fig. 6 (b 10 ms, eta 6 ms): ceil(10/6) = 2 dispatches, L = 2 * 5.5 = 11 us; cache:
///   20000 cycles = 10 us per refill, 2 * 10 = 20 us.
/// - b 10 ms, eta 1 ms: ceil(10/1) = 10, L = 55 us, cache 100 us.
/// - b 10 ms, eta 20 ms (longer than the budget): 1 dispatch, L = O_pre = 5.5 us.
/// - eta 0: unbounded (None), whatever W.
/// - W unbounded (naive servers): O_pre and L unbounded; the cache bound needs only eta.
#[test]
fn lost_budget_by_hand() {
    let cost = CostModel {
        clock_hz: 2_000_000_000,
        timer_interrupt: 4000,
        scheduler: 2000,
        per_work_unit: 100,
        context_switch: 3000,
        cache_refill: 20000,
        ..CostModel::default()
    };
    let o_pre = Duration::from_nanos(5500);
    assert_eq!(preemption_overhead(&cost, Some(20)), Some(o_pre));
    let b10 = |eta: Duration| Reservation::new(ms(10), ms(60)).with_non_preemptive(eta);

    assert_eq!(dispatches_per_period(b10(ms(6))), Some(2));
    assert_eq!(lost_budget(b10(ms(6)), Some(o_pre)), Some(us(11)));
    assert_eq!(cache_delay(b10(ms(6)), &cost), Some(us(20)));

    let o = overhead(b10(ms(1)), &cost, Some(20));
    assert_eq!(o.preemption, Some(o_pre));
    assert_eq!(o.lost_budget, Some(us(55)));
    assert_eq!(o.cache_delay, Some(us(100)));

    assert_eq!(lost_budget(b10(ms(20)), Some(o_pre)), Some(o_pre));

    let o = overhead(b10(Duration::ZERO), &cost, Some(20));
    assert_eq!((o.lost_budget, o.cache_delay), (None, None));

    let o = overhead(b10(ms(6)), &cost, None);
    assert_eq!(o.preemption, None);
    assert_eq!(o.lost_budget, None);
    assert_eq!(o.cache_delay, Some(us(20)));

    // A flush dearer than a refill (60000 cycles = 30 us) is what a dispatch can pay:
    // 2 * 30 = 60 us; a cheaper one changes nothing.
    let flushing = CostModel {
        cache_flush: 60000,
        ..cost
    };
    assert_eq!(cache_delay(b10(ms(6)), &flushing), Some(us(60)));
    let cheap = CostModel {
        cache_flush: 100,
        ..cost
    };
    assert_eq!(cache_delay(b10(ms(6)), &cheap), Some(us(20)));
}

/// W per policy: SPR passes the largest S and the number of distinct priorities on the core to
/// `work_bound` (here S = 2, 5, 3 and priorities 3, 3, 1: work_bound(5, 2)); the naive servers
/// have no bound; policies without servers have no W at all.
#[test]
fn work_per_invocation_per_policy() {
    let server = |p: u8, s: u16| {
        Server::new(
            "s",
            Priority(p),
            Reservation::new(ms(1), ms(10)).with_replenishments(s),
            ServerKind::Sporadic,
        )
    };
    let set = [server(3, 2), server(3, 5), server(1, 3)];
    for policy in [PolicyKind::Spr, PolicyKind::SprDeferrable] {
        let w = work_per_invocation(policy, &set).unwrap();
        assert_eq!(w.units, Some(work_bound(5, 2)));
        assert_eq!(w.reason, "SPR: work_bound(S = 5, 2 priority levels)");
    }
    for policy in [PolicyKind::DeferrableServer, PolicyKind::SporadicServer] {
        let w = work_per_invocation(policy, &set).unwrap();
        assert_eq!(w.units, None);
        assert_eq!(w.reason, EAGER_TIMERS);
    }
    assert_eq!(work_per_invocation(PolicyKind::Edf, &set), None);
    assert_eq!(work_per_invocation(PolicyKind::FixedPriority, &set), None);
}

// ---------------------------------------------------------------------------------------------
// Properties.

fn kind() -> impl Strategy<Value = ServerKind> {
    prop_oneof![Just(ServerKind::Sporadic), Just(ServerKind::Deferrable)]
}

/// Any values at all, including zero periods and budgets above their periods.
fn wild_server() -> impl Strategy<Value = Server> {
    (
        any::<u8>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u16>(),
        kind(),
    )
        .prop_map(|(p, b, period, eta, s, kind)| {
            Server::new(
                "w",
                Priority(p),
                Reservation::new(Duration::from_nanos(b), Duration::from_nanos(period))
                    .with_non_preemptive(Duration::from_nanos(eta))
                    .with_replenishments(s),
                kind,
            )
        })
}

/// Valid small servers (1 <= b <= p <= 60 ns, eta <= b): iterates grow by at least 1 and stop
/// above p, so every search ends within a few dozen steps.
fn small_server() -> impl Strategy<Value = Server> {
    (0u8..4, 1u64..=60, kind())
        .prop_flat_map(|(p, period, kind)| (Just((p, period, kind)), 1..=period))
        .prop_flat_map(|(t, b)| (Just(t), Just(b), 0..=b))
        .prop_map(|((p, period, kind), b, eta)| {
            Server::new(
                "s",
                Priority(p),
                Reservation::new(Duration::from_nanos(b), Duration::from_nanos(period))
                    .with_non_preemptive(Duration::from_nanos(eta)),
                kind,
            )
        })
}

/// Eq. 1's demand at `t`, written out independently of the crate (b <= p here).
fn demand_by_formula(set: &[Server], i: usize, t: u64) -> u64 {
    let me = &set[i];
    let inversion = set
        .iter()
        .filter(|l| l.priority < me.priority)
        .map(|l| l.reservation.non_preemptive.as_nanos())
        .max()
        .unwrap_or(0);
    let mut total = inversion + me.reservation.budget.as_nanos();
    for (j, h) in set.iter().enumerate() {
        if j == i || h.priority < me.priority {
            continue;
        }
        let (b, p) = (
            h.reservation.budget.as_nanos(),
            h.reservation.period.as_nanos(),
        );
        let alpha = match h.kind {
            ServerKind::Sporadic => t.div_ceil(p),
            ServerKind::Deferrable => (t + p - b).div_ceil(p),
        };
        total += alpha * b;
    }
    total
}

fn both_admitted_or_monotone(before: &Response, after: &Response) -> Result<(), TestCaseError> {
    if before.admitted() {
        // The least fixed point can only move up; or the server is no longer admitted, and
        // then its last iterate is above p >= the old R.
        prop_assert!(after.response >= before.response, "{before:?} -> {after:?}");
    } else {
        prop_assert!(!after.admitted(), "{before:?} -> {after:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No panic on anything; one response per server; R >= I + b; admitted implies R <= p and
    /// that R satisfies Eq. 1 with equality.
    #[test]
    fn never_panics_and_keeps_its_invariants(
        set in proptest::collection::vec(wild_server(), 0..5),
        cost in (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
        work in proptest::option::of(any::<u64>()),
    ) {
        let mut model = CostModel {
            clock_hz: cost.0,
            timer_interrupt: cost.1,
            scheduler: cost.2,
            per_work_unit: cost.3,
            context_switch: cost.4,
            cache_refill: cost.5,
            ..CostModel::default()
        };
        model.cache_flush = cost.4 ^ cost.5;
        let cost = model;
        let responses = response_times(&set);
        prop_assert_eq!(responses.len(), set.len());
        for (i, (s, r)) in set.iter().zip(&responses).enumerate() {
            prop_assert_eq!(r.blocking, blocking(&set, i));
            prop_assert!(r.response >= r.blocking.saturating_add(s.reservation.budget));
            if r.admitted() {
                prop_assert!(r.response <= s.reservation.period);
                let mut demand = r.blocking.as_nanos() as u128 + s.reservation.budget.as_nanos() as u128;
                for (j, h) in set.iter().enumerate() {
                    if j != i && h.priority >= s.priority {
                        demand += bulwark_analysis::rbf::rbf(h.kind, r.response, h.reservation).as_nanos() as u128;
                    }
                }
                prop_assert_eq!(demand, r.response.as_nanos() as u128);
            } else if r.verdict == Verdict::ExceedsPeriod {
                prop_assert!(r.response > s.reservation.period || r.response == Duration::MAX);
            }
            let _ = preemptions_per_period(s.reservation);
            let _ = overhead(s.reservation, &cost, work);
        }
        for policy in PolicyKind::ALL.map(|(k, _)| k) {
            let _ = work_per_invocation(policy, &set);
        }
        prop_assert_eq!(response_time(&set, set.len()), None);
    }

    /// Against a brute-force oracle on small values: admitted iff some t <= p has
    /// demand(t) <= t, and then R is the least such t.
    #[test]
    fn the_least_fixed_point_by_brute_force(set in proptest::collection::vec(small_server(), 1..5)) {
        for (i, r) in response_times(&set).iter().enumerate() {
            let p = set[i].reservation.period.as_nanos();
            let least = (0..=p).find(|&t| demand_by_formula(&set, i, t) <= t);
            match least {
                Some(t) => {
                    prop_assert!(r.admitted(), "server {i}: {r:?}, expected R = {t}");
                    prop_assert_eq!(r.response.as_nanos(), t);
                }
                None => prop_assert_eq!(r.verdict, Verdict::ExceedsPeriod),
            }
        }
    }

    /// Growing one budget never lowers an admitted server's R, nor admits a rejected one.
    /// Checked for the server's own budget under either kind and for any budget when the grown
    /// server is a sporadic server. Eq. 1's deferrable RBF is not monotone in b_h (b 9, p 10 at
    /// D 20: ceil(21/10) * 9 = 27, but b 10: ceil(20/10) * 10 = 20), so neither is R there.
    #[test]
    fn a_growing_budget_never_lowers_r(
        set in proptest::collection::vec(small_server(), 1..5),
        which in any::<prop::sample::Index>(),
        extra in 1u64..30,
    ) {
        let j = which.index(set.len());
        let before = response_times(&set);
        let mut grown = set.clone();
        let r = &mut grown[j].reservation;
        r.budget = r.budget.saturating_add(Duration::from_nanos(extra));
        let after = response_times(&grown);
        for i in 0..set.len() {
            if i == j || set[j].kind == ServerKind::Sporadic {
                both_admitted_or_monotone(&before[i], &after[i])?;
            }
        }
    }

    /// A new server strictly below some servers and without a non-preemptive region changes
    /// nothing for them, wherever it is inserted.
    #[test]
    fn a_lower_server_without_eta_changes_nothing_above_it(
        set in proptest::collection::vec(small_server(), 1..5),
        newcomer in small_server(),
        at in any::<prop::sample::Index>(),
    ) {
        let before = response_times(&set);
        let mut newcomer = newcomer;
        newcomer.reservation.non_preemptive = Duration::ZERO;
        let at = at.index(set.len() + 1);
        let mut bigger = set.clone();
        bigger.insert(at, newcomer.clone());
        let after = response_times(&bigger);
        for (i, s) in set.iter().enumerate() {
            if s.priority > newcomer.priority {
                let k = if i < at { i } else { i + 1 };
                prop_assert_eq!(&after[k], &before[i], "server {}", i);
            }
        }
    }

    /// The order servers are listed in does not matter.
    #[test]
    fn the_order_of_servers_does_not_matter(set in proptest::collection::vec(small_server(), 1..5)) {
        let mut reversed = set.clone();
        reversed.reverse();
        let mut back = response_times(&reversed);
        back.reverse();
        prop_assert_eq!(back, response_times(&set));
    }
}
