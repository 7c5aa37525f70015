//! The cluster analysis on scenarios worked by hand.

use super::*;
use crate::bandwidth::Bandwidth;
use crate::test_support::{ms, periodic};
use bulwark_spec::{Behaviour, ClusterMember, ClusterSpec, PolicyKind, TaskSpec};

fn task(name: &str, core: u16, behaviour: Behaviour, budget: u64, period: u64) -> TaskSpec {
    TaskSpec {
        name: name.to_owned(),
        core,
        priority: Some(Priority(1)),
        reservation: Some(Reservation::new(ms(budget), ms(period))),
        deadline: None,
        behaviour,
    }
}

/// Core 0 partitioned (task `p`); cores 1 and 2 a cluster of `a` (3, 10), `b` (9, 10)
/// and `c` (9, 10), `c`'s jobs needing 10 ms each.
fn scenario(order: SporadicOrder) -> Scenario {
    let tasks = vec![
        task("p", 0, periodic(10, 1), 1, 10),
        task("a", 1, periodic(10, 2), 3, 10),
        task("b", 1, periodic(20, 9), 9, 10),
        task("c", 1, periodic(10, 10), 9, 10),
    ];
    Scenario {
        clusters: vec![ClusterSpec {
            slack_reclamation: false,
            name: "g".to_owned(),
            cores: vec![1, 2],
            order,
            cycle: Duration::ZERO,
            members: vec![
                sporadic(1, Replenishment::Sporadic, None),
                sporadic(2, Replenishment::Sporadic, None),
                sporadic(3, Replenishment::ConstantBandwidth, None),
            ],
        }],
        ..Scenario::new("global", PolicyKind::FixedPriority, 3, ms(100), tasks)
    }
}

fn sporadic(
    task: usize,
    replenishment: Replenishment,
    low_budget: Option<Duration>,
) -> ClusterMember {
    ClusterMember {
        task,
        kind: MemberKind::Sporadic {
            replenishment,
            low_budget,
        },
    }
}

/// U = 3/10 + 9/10 + 9/10 = 21/10 > 2 - 9/10 = 11/10: not shown schedulable; `a` and `b`
/// fit their reservations, `c` needs 10 ms of a 9 ms budget.
#[test]
fn an_edf_cluster_is_tested_by_gfb_and_its_members_checked() {
    let clusters = analyse(&scenario(SporadicOrder::EarliestDeadlineFirst));
    assert_eq!(clusters.len(), 1);
    let cluster = &clusters[0];
    assert_eq!(cluster.cores, [1, 2]);
    assert_eq!(
        (
            cluster.bandwidth.total.numerator,
            cluster.bandwidth.total.denominator
        ),
        (21, 10)
    );
    assert_eq!(cluster.verdict.schedulable(), Some(false));
    let names: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(cluster.members[0].fit, Fit::Carried);
    assert_eq!(cluster.members[1].fit, Fit::Carried);
    let Fit::Exceeds(why) = &cluster.members[2].fit else {
        panic!("c needs more than 9 ms: {:?}", cluster.members[2].fit);
    };
    assert!(
        why.starts_with("a job needs up to 10ms > budget 9ms:"),
        "{why}"
    );
    assert!(matches!(
        cluster.members[2].reservation,
        MemberReservation::Sporadic {
            replenishment: Replenishment::ConstantBandwidth,
            low_budget: None,
            ..
        }
    ));
}

/// `c` is a constant-bandwidth server (refused by validation under fixed priority): it never
/// waits for budget, so no response-time analysis covers it. As an SPR server it is analysed:
/// R_a = 3 and R_b = 9 ms (fewer than two above each); `c` exceeds its period at once (both
/// terms capped at x = 0, x skips to W_a = 3 ms, R = 12 ms > 10 ms).
#[test]
fn a_fixed_priority_cluster_with_a_constant_bandwidth_server_is_not_analysed() {
    let clusters = analyse(&scenario(SporadicOrder::FixedPriority));
    assert_eq!(
        clusters[0].verdict,
        ClusterVerdict::NotAnalysed(CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY)
    );
    assert_eq!(clusters[0].verdict.schedulable(), None);
    assert_eq!(clusters[0].verdict.test_name(), None);
    assert_eq!(clusters[0].bandwidth.total.as_f64(), 2.1);
    assert!(clusters[0].members.iter().all(|m| m.response.is_none()));
    let mut spr = scenario(SporadicOrder::FixedPriority);
    spr.clusters[0].members[2] = sporadic(3, Replenishment::Spr { slots: 4 }, None);
    let cluster = &analyse(&spr)[0];
    assert!(matches!(
        cluster.verdict,
        ClusterVerdict::RtaNotShownSchedulable(_)
    ));
    let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(
        responses,
        [
            Some(Response::Bounded(ms(3))),
            Some(Response::Bounded(ms(9))),
            Some(Response::Exceeds(ms(12)))
        ]
    );
}

/// Two fixed-priority cores: SPR servers `s1` and `s2` (3 ms per 10 ms) above `l` (5 ms per
/// 20 ms), each task needing its budget per period. Each server's workload reaches R + e =
/// 6 ms back (`global_fp`'s hand test works the iterations): R = 3, 3 and 11 ms, where two
/// sporadic-rule reservations in their place give `l` 8 ms. A client alone in its server
/// that needs at most e per p gets the server's R as its job bound, as on one core.
#[test]
fn spr_servers_on_two_fixed_priority_cores_count_from_r_plus_e() {
    let text = |rule: &str| {
        let server = |name: &str, priority: u8| {
            format!(
                "[[task]]\nname = \"{name}\"\ncluster = \"k\"\npriority = {priority}\n\
                 period = \"10ms\"\nexecution = \"3ms\"\nreservation = {{ budget = \"3ms\", \
                 period = \"10ms\", replenishment = \"{rule}\" }}\n\n"
            )
        };
        format!(
            "name = \"spr2\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"1s\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [0, 1]\norder = \"fixed-priority\"\n\n\
             {}{}[[task]]\nname = \"l\"\ncluster = \"k\"\npriority = 1\nperiod = \"20ms\"\n\
             execution = \"5ms\"\nreservation = {{ budget = \"5ms\", period = \"20ms\" }}\n",
            server("s1", 9),
            server("s2", 8)
        )
    };
    let responses = |rule: &str| {
        let scenario = bulwark_spec::parse(&text(rule), "spr2.toml").expect("valid");
        let cluster = analyse(&scenario).remove(0);
        assert_eq!(cluster.verdict.test_name(), Some(GLOBAL_FP_RTA_TEST));
        assert_eq!(cluster.verdict.schedulable(), Some(true));
        let jobs: Vec<Option<Response>> = cluster.members.iter().map(|m| m.job_response).collect();
        let bounds: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
        assert_eq!(jobs, bounds, "each member carries its task");
        bounds
    };
    let bounded = |values: [u64; 3]| values.map(|r| Some(Response::Bounded(ms(r))));
    assert_eq!(responses("spr"), bounded([3, 3, 11]));
    assert_eq!(responses("sporadic"), bounded([3, 3, 8]));
    // `l` of high criticality (e^L = 2 ms): AMC-rtb's argument on BC07, the servers reaching
    // R + e back in both equations. R^L_l: x = 0 -> 3 (both W(2) = 3 capped), W(5) = 3 < 3 ms
    // + 1 ns: 5 ms. R^*_l: each server a constant W(5) = 3 ms: 5 + 3 = 8 ms, where
    // worst-case reservations gave 11 ms.
    let high = text("spr").replace(
        "budget = \"5ms\", period = \"20ms\" }",
        "budget = \"5ms\", period = \"20ms\", criticality = \"high\", low-budget = \"2ms\" }",
    );
    let scenario = bulwark_spec::parse(&high, "spr2.toml").expect("valid");
    let cluster = analyse(&scenario).remove(0);
    assert_eq!(cluster.verdict.test_name(), Some(GLOBAL_AMC_RTB_TEST));
    assert_eq!(cluster.criticality(), Some(Criticality::AmcRtb));
    let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(responses, bounded([3, 3, 8]));
    assert_eq!(
        cluster.members[2].low_mode_response,
        Some(Response::Bounded(ms(5)))
    );
}

/// One core, `s` an SPR server (2 ms per 10 ms, S = 2) above `a` (3, 10) and `b` (4, 20):
/// the server counts as a sporadic task (e, p) in the exact uniprocessor analysis. By hand:
/// R_s = 2, R_a = 3 + 2 = 5, R_b = 4 + 2 + 3 = 9 ms, each member's job bound too (each
/// task needs at most e per p). As a constant-bandwidth server `s`
/// would never wait for budget: not analysed.
#[test]
fn an_spr_server_on_one_fixed_priority_core_counts_as_a_sporadic_task() {
    let text = "name = \"spr\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
                [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
                [[task]]\nname = \"s\"\ncluster = \"k\"\npriority = 9\nperiod = \"10ms\"\n\
                execution = \"2ms\"\nreservation = { budget = \"2ms\", period = \"10ms\", \
                replenishment = \"spr\", replenishments = 2 }\n\n\
                [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 5\nperiod = \"10ms\"\n\
                execution = \"3ms\"\nreservation = { budget = \"3ms\", period = \"10ms\" }\n\n\
                [[task]]\nname = \"b\"\ncluster = \"k\"\npriority = 1\nperiod = \"20ms\"\n\
                execution = \"4ms\"\nreservation = { budget = \"4ms\", period = \"20ms\" }\n";
    let scenario = bulwark_spec::parse(text, "spr.toml").expect("valid");
    let cluster = &analyse(&scenario)[0];
    assert!(matches!(cluster.verdict, ClusterVerdict::RtaSchedulable(_)));
    assert_eq!(cluster.verdict.test_name(), Some(FP_RTA_TEST));
    let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(
        responses,
        [ms(2), ms(5), ms(9)].map(|r| Some(Response::Bounded(r)))
    );
    // Each member carries its task (C <= e, T >= p), the server's client too: each of its
    // jobs finds the whole budget back at its release.
    let jobs: Vec<Option<Response>> = cluster.members.iter().map(|m| m.job_response).collect();
    assert_eq!(jobs, responses);
    // Validation refuses a constant-bandwidth server under fixed priority; the analysis does
    // not count on that.
    let mut cbs = scenario.clone();
    cbs.clusters[0].members[0] = sporadic(0, Replenishment::ConstantBandwidth, None);
    assert_eq!(
        analyse(&cbs)[0].verdict.reason(),
        Some(CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY)
    );
}

/// The one-core SPR cluster above (R = 2, 5 and 9 ms) with tasks that need several budgets:
/// `s`'s 5 ms per 30 ms takes k = 3 budgets of 2 ms, its releases k p = 30 ms apart, so a job
/// completes within 2 p + R = 22 ms; `a`'s 7 ms per 40 ms takes 3 budgets of 3 ms: 2 p + 5 =
/// 25 ms. With `a`'s releases 25 ms apart (< 3 p) a job may find the budget still out: no
/// bound. `b` (4 ms per 20 ms) fits: 9 ms.
#[test]
fn a_task_that_needs_several_budgets_gets_one_period_for_each_more() {
    let text = |a_period: &str| {
        format!(
            "name = \"spr\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
             [[task]]\nname = \"s\"\ncluster = \"k\"\npriority = 9\nperiod = \"30ms\"\n\
             execution = \"5ms\"\nreservation = {{ budget = \"2ms\", period = \"10ms\", \
             replenishment = \"spr\", replenishments = 2 }}\n\n\
             [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 5\nperiod = \"{a_period}\"\n\
             execution = \"7ms\"\nreservation = {{ budget = \"3ms\", period = \"10ms\" }}\n\n\
             [[task]]\nname = \"b\"\ncluster = \"k\"\npriority = 1\nperiod = \"20ms\"\n\
             execution = \"4ms\"\nreservation = {{ budget = \"4ms\", period = \"20ms\" }}\n"
        )
    };
    let jobs = |a_period: &str| -> Vec<Option<Response>> {
        let scenario = bulwark_spec::parse(&text(a_period), "spr.toml").expect("valid");
        let cluster = analyse(&scenario).remove(0);
        assert_eq!(cluster.verdict.schedulable(), Some(true));
        assert!(matches!(cluster.members[0].fit, Fit::Exceeds(_)));
        cluster.members.iter().map(|m| m.job_response).collect()
    };
    let bounded = |r: u64| Some(Response::Bounded(ms(r)));
    assert_eq!(jobs("40ms"), [bounded(22), bounded(25), bounded(9)]);
    assert_eq!(jobs("25ms"), [bounded(22), None, bounded(9)]);
}

/// One core with a time partition `P` holding [0, 40 ms) of every 100 ms, `a` an SPR server
/// (10 ms per 50 ms) above `b` (15 ms per 100 ms): the server counts as a sporadic task on the
/// slots' supply. By hand, a's R = 40 + 10 = 50 ms (its worst window starts at the slot), b's
/// 25 ms of work by 65 ms meet a's second release at 50 (10 more): 35 ms of supply by 75 ms,
/// R = 75 ms. With `b` of high criticality (e^L = 5 ms) the same test runs with `b` at its
/// e^H (worst-case reservations: AMC-rtb does not take SPR servers), the same bounds; the
/// exact analysis without the slots would have missed the partition (a's R = 10 ms).
#[test]
fn an_spr_server_beside_a_partition_counts_on_the_slots_supply() {
    let text = |b_reservation: &str| {
        format!(
            "name = \"spr-slots\"\npolicy = \"fixed-priority\"\ncores = 1\n\
             duration = \"1s\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\
             cycle = \"100ms\"\n\n\
             [[task]]\nname = \"P\"\ncluster = \"k\"\npriority = 9\n\
             reservation = {{ core = 0, slots = [[\"0ms\", \"40ms\"]] }}\n\
             period = \"100ms\"\nexecution = \"1ms\"\n\n\
             [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 5\n\
             reservation = {{ budget = \"10ms\", period = \"50ms\", replenishment = \"spr\" }}\n\
             period = \"50ms\"\nexecution = \"1ms\"\n\n\
             [[task]]\nname = \"b\"\ncluster = \"k\"\npriority = 4\n\
             reservation = {{ {b_reservation} }}\nperiod = \"100ms\"\nexecution = \"1ms\"\n"
        )
    };
    let plain = bulwark_spec::parse(&text("budget = \"15ms\", period = \"100ms\""), "s.toml")
        .expect("valid");
    let cluster = &analyse(&plain)[0];
    assert_eq!(cluster.verdict.test_name(), Some(SLOT_SUPPLY_RTA_TEST));
    assert_eq!(cluster.verdict.schedulable(), Some(true));
    let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(
        responses,
        [
            None,
            Some(Response::Bounded(ms(50))),
            Some(Response::Bounded(ms(75)))
        ]
    );
    let high = bulwark_spec::parse(
        &text(
            "budget = \"15ms\", period = \"100ms\", criticality = \"high\", \
             low-budget = \"5ms\"",
        ),
        "s.toml",
    )
    .expect("valid");
    let cluster = &analyse(&high)[0];
    assert_eq!(cluster.verdict.test_name(), Some(SLOT_SUPPLY_RTA_TEST));
    assert_eq!(
        cluster.criticality(),
        Some(Criticality::WorstCaseReservations)
    );
    let high_responses: Vec<Option<Response>> =
        cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(high_responses, responses);
}

/// `c` in a sporadic (1 ms, 10 ms) reservation at priority 3, `a` (3, 10) and `b`
/// (9, 10) at priority 1: the order c, a, b (a before b: the tie goes to the earlier
/// member, as the scheduler's to the lower reservation id). On m = 2, R_c = 1 ms and
/// R_a = 3 ms (fewer than m above them). b (C = 9 ms): at R = 9 ms both terms are
/// capped at 1 ns (W_c = min(1, 9) = 1 ms, W_a = min(3, 9) = 3 ms), the least is 1 ms, so
/// R = 10 ms; there W_c(10 ms) = 1 * 1 ms + min(1 ms, 0) = 1 ms < 1 ms + 1 ns, and
/// W_a(10 ms) = 3 ms is capped at 1 ms + 1 ns: R = 9 ms + floor((2 ms + 1 ns) / 2) =
/// 10 ms, converged, <= 10 ms: schedulable. b's budget 1 ns more: not shown, b named.
#[test]
fn a_fixed_priority_cluster_of_sporadic_reservations_gets_the_response_time_analysis() {
    let mut scenario = scenario(SporadicOrder::FixedPriority);
    scenario.tasks[3].reservation = Some(Reservation::new(ms(1), ms(10)));
    scenario.tasks[3].priority = Some(Priority(3));
    scenario.clusters[0].members[2] = sporadic(3, Replenishment::Sporadic, None);
    let cluster = &analyse(&scenario)[0];
    assert_eq!(
        cluster.verdict,
        ClusterVerdict::RtaSchedulable(FixedPriorityRta {
            cores: 2,
            not_shown: None
        })
    );
    assert_eq!(cluster.verdict.schedulable(), Some(true));
    assert_eq!(cluster.verdict.test_name(), Some(GLOBAL_FP_RTA_TEST));
    assert_eq!(cluster.verdict.test(), None);
    let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
    assert_eq!(
        responses,
        [
            Some(Response::Bounded(ms(3))),
            Some(Response::Bounded(ms(10))),
            Some(Response::Bounded(ms(1)))
        ]
    );
    scenario.tasks[2].reservation = Some(Reservation::new(Duration::from_nanos(9_000_001), ms(10)));
    let cluster = &analyse(&scenario)[0];
    assert_eq!(
        cluster.verdict,
        ClusterVerdict::RtaNotShownSchedulable(FixedPriorityRta {
            cores: 2,
            not_shown: Some(1)
        })
    );
    assert_eq!(cluster.verdict.schedulable(), Some(false));
    assert!(matches!(
        cluster.members[1].response,
        Some(Response::Exceeds(r)) if r > ms(10)
    ));
}

/// `b` becomes a partition on core 2 in [0, 2) and [5, 8) of a 10 ms cycle: share 5/10, so
/// U = 3/10 + 5/10 + 9/10 = 17/10; GFB does not apply, and Bertogna, Cirinei and
/// Lipari's test runs with the partition as an entity of at most 5 ms in any 10 ms. For
/// `a` (3, 10): slack 8, `c` min(9, 8) + the partition min(5, 8) = 13 < 2 * 8. For `c`
/// (9, 10): slack 2, `a` min(3, 2) + min(5, 2) = 4, not < 2 * 2: not shown, at `c`
/// (second of the sporadic reservations). The partition's own task (9 ms every
/// 20 ms) is checked against its slots: from a slot's end at 2 ms, 3 + 2 + 3 ms of slot by
/// 18 ms and the ninth at 21 ms, a window of 19 ms (from 8 ms too: 2 + 3 + 2 + 2 by 27):
/// R = 19 ms <= 20 ms, it fits.
#[test]
fn an_edf_cluster_with_a_partition_gets_bcl_with_the_partition_as_an_entity() {
    let mut scenario = scenario(SporadicOrder::EarliestDeadlineFirst);
    let slots = vec![(ms(5), ms(8)), (ms(0), ms(2))];
    scenario.tasks[2].reservation = None;
    scenario.clusters[0].cycle = ms(10);
    scenario.clusters[0].members[1].kind = MemberKind::Partition {
        core: 2,
        slots: slots.clone(),
    };
    let cluster = &analyse(&scenario)[0];
    assert_eq!(
        cluster.verdict,
        ClusterVerdict::BclNotShownSchedulable(Bcl {
            cores: 2,
            failing: Some(1),
            schedulable: false
        })
    );
    // With `c` lighter, (7, 10): slack 4, min(3, 4) + min(5, 4) = 7 < 8; `a`: slack 8,
    // min(7, 8) + min(5, 8) = 12 < 16.
    let mut lighter = scenario.clone();
    lighter.tasks[3].reservation = Some(Reservation::new(ms(7), ms(10)));
    assert!(matches!(
        analyse(&lighter)[0].verdict,
        ClusterVerdict::BclSchedulable(_)
    ));
    assert_eq!(
        (
            cluster.bandwidth.total.numerator,
            cluster.bandwidth.total.denominator
        ),
        (17, 10)
    );
    let partition = &cluster.members[1];
    assert_eq!(
        partition.reservation,
        MemberReservation::Partition {
            core: 2,
            slots,
            cycle: ms(10)
        }
    );
    assert_eq!(partition.reservation.share(), (ms(5), ms(10)));
    assert_eq!(partition.fit, Fit::Carried);
    assert_eq!(partition.job_response, Some(Response::Bounded(ms(19))));
    // Fixed priority, `c` a sporadic reservation (a server is not in the analysis), all
    // priorities equal so `a` is above `c`. `a`: one above it (the partition) on two
    // cores, R = C = 3 ms. `c` (9, 10): x = 0 finds `a`'s W(9) = 3 ms and the
    // partition's most slot time in 9 ms, 5 ms ([0, 9) or [5, 14)), both capped at 1 ns,
    // so x skips to the lesser, 3 ms: R = 12 ms > 10 ms, not shown.
    scenario.clusters[0].order = SporadicOrder::FixedPriority;
    scenario.clusters[0].members[2] = sporadic(3, Replenishment::Sporadic, None);
    let fixed = &analyse(&scenario)[0];
    assert_eq!(fixed.members[0].response, Some(Response::Bounded(ms(3))));
    assert_eq!(fixed.members[2].response, Some(Response::Exceeds(ms(12))));
    assert!(matches!(
        fixed.verdict,
        ClusterVerdict::RtaNotShownSchedulable(FixedPriorityRta {
            cores: 2,
            not_shown: Some(2)
        })
    ));
    // `c` (4, 10): x = 0 skips to 3 ms; at x = 3 ms (L = 7 ms) `a`'s W(7) = 3 ms is not
    // capped at 3 ms + 1 ns, the partition's 5 ms ([5, 12)) is: floor((6 ms + 1 ns) / 2)
    // = 3 ms, the fixed point, R = 7 ms <= 10 ms.
    let mut lighter = scenario.clone();
    lighter.tasks[3].reservation = Some(Reservation::new(ms(4), ms(10)));
    let lighter = &analyse(&lighter)[0];
    assert_eq!(lighter.members[2].response, Some(Response::Bounded(ms(7))));
    assert!(matches!(lighter.verdict, ClusterVerdict::RtaSchedulable(_)));
    // The partition has no response of the cluster's test, only its own task's bound.
    assert_eq!(lighter.members[1].response, None);
    assert_eq!(
        lighter.members[1].job_response,
        Some(Response::Bounded(ms(19)))
    );
}

/// `a` of high criticality, e^L = 1 ms of e^H = 3 ms, under EDF order: GFB with `a` at its
/// e^H (worst-case reservations), U = 3/10 + 9/10 + 9/10 = 21/10 > 2 - 9/10, not shown; the
/// bandwidth counts e^H. Fixed-priority order: `c`'s constant-bandwidth server keeps the
/// cluster out of the response-time analysis, whatever the criticalities.
#[test]
fn a_cluster_with_high_criticality_counts_its_high_budget() {
    let mut scenario = scenario(SporadicOrder::EarliestDeadlineFirst);
    scenario.clusters[0].members[0] = sporadic(1, Replenishment::Sporadic, Some(ms(1)));
    let cluster = &analyse(&scenario)[0];
    assert!(matches!(
        cluster.verdict,
        ClusterVerdict::NotShownSchedulable(_)
    ));
    assert_eq!(
        cluster.criticality(),
        Some(Criticality::WorstCaseReservations)
    );
    assert_eq!(cluster.bandwidth.total.as_f64(), 2.1);
    assert!(matches!(
        cluster.members[0].reservation,
        MemberReservation::Sporadic {
            low_budget: Some(low_budget),
            ..
        } if low_budget == ms(1)
    ));
    assert_eq!(cluster.members[0].fit, Fit::Carried);
    scenario.clusters[0].order = SporadicOrder::FixedPriority;
    let cluster = &analyse(&scenario)[0];
    assert_eq!(
        cluster.verdict.reason(),
        Some(CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY)
    );
    assert_eq!(cluster.criticality(), None);
}

/// One EDF core, `h` of high criticality (e^L = 2 ms, e^H = 6 ms per 10 ms) beside `l` (5 ms
/// per 10 ms): counted at e^H, U = 11/10 > 1, not shown (at e^L it would be 7/10). With
/// e^H = 5 ms, U = 1: schedulable, and `l`'s verdict is for low mode.
#[test]
fn an_edf_core_with_high_criticality_is_tested_at_the_high_budget() {
    let cluster = |high: u64| {
        let tasks = vec![
            task("h", 0, periodic(10, 1), high, 10),
            task("l", 0, periodic(10, 1), 5, 10),
        ];
        Scenario {
            clusters: vec![ClusterSpec {
                slack_reclamation: false,
                name: "k".to_owned(),
                cores: vec![0],
                order: SporadicOrder::EarliestDeadlineFirst,
                cycle: Duration::ZERO,
                members: vec![
                    sporadic(0, Replenishment::Sporadic, Some(ms(2))),
                    sporadic(1, Replenishment::Sporadic, None),
                ],
            }],
            ..Scenario::new("mixed", PolicyKind::Edf, 1, ms(100), tasks)
        }
    };
    let over = &analyse(&cluster(6))[0];
    assert!(matches!(
        over.verdict,
        ClusterVerdict::NotShownSchedulable(_)
    ));
    assert_eq!(over.bandwidth.total.as_f64(), 1.1);
    let fits = &analyse(&cluster(5))[0];
    assert!(matches!(fits.verdict, ClusterVerdict::Schedulable(_)));
    assert_eq!(fits.criticality(), Some(Criticality::WorstCaseReservations));
}

/// On two fixed-priority cores, a high-criticality reservation gets AMC-rtb's argument on
/// Bertogna and Cirinei's analysis (`a`, priority 9, e^H = 6 ms, e^L = 1 ms per 10 ms, above
/// `b` (9 ms) and `c` (3 ms)). By hand, in low mode every reservation at e^L: R^L_a = 1 and
/// R^L_b = 9 (fewer than two above); for `c`, at x = 0 both terms are capped and x skips to
/// W_a = 1 ms, where W_a(4) = 1 ms is not capped and W_b(4) = 4 ms is: R^L_c = 3 +
/// floor((1 ms + 1 ms + 1 ns) / 2) = 4 ms. `a`'s R^* = 6 ms (nothing above it). The same
/// cluster with `a` of low criticality at e^H (what worst-case reservations count) gives `c`
/// 9 ms; at e^L, the low-mode bounds.
#[test]
fn a_fixed_priority_cluster_of_two_cores_credits_the_mode_switch() {
    let build = |low_budget: Option<Duration>, budget: u64| {
        let mut scenario = scenario(SporadicOrder::FixedPriority);
        scenario.clusters[0].members[2] = sporadic(3, Replenishment::Sporadic, None);
        scenario.tasks[1].reservation = Some(Reservation::new(ms(budget), ms(10)));
        scenario.tasks[1].priority = Some(Priority(9));
        scenario.tasks[2].priority = Some(Priority(5));
        scenario.tasks[3].reservation = Some(Reservation::new(ms(3), ms(10)));
        scenario.clusters[0].members[0] = sporadic(1, Replenishment::Sporadic, low_budget);
        analyse(&scenario).remove(0)
    };
    let responses = |cluster: &ClusterAnalysis| -> Vec<Option<Response>> {
        cluster.members.iter().map(|m| m.response).collect()
    };
    let bounded = |values: [u64; 3]| values.map(|r| Some(Response::Bounded(ms(r)))).to_vec();
    let mixed = build(Some(ms(1)), 6);
    assert_eq!(mixed.verdict.test_name(), Some(GLOBAL_AMC_RTB_TEST));
    assert_eq!(mixed.verdict.schedulable(), Some(true));
    assert_eq!(mixed.criticality(), Some(Criticality::AmcRtb));
    assert_eq!(responses(&mixed), bounded([6, 9, 4]));
    assert_eq!(
        mixed.members[0].low_mode_response,
        Some(Response::Bounded(ms(1)))
    );
    assert_eq!(responses(&build(None, 6)), bounded([6, 9, 9]));
    assert_eq!(responses(&build(None, 1)), bounded([1, 9, 4]));
}

/// R (3 ms per 10 ms) carries a and b; c has 2 ms per 10 ms of its own. The cluster's
/// bandwidth is R's and c's once each: 5/10, not 8/10; b is listed as sharing a's, and
/// neither a's nor b's fit is judged against one task's jobs.
#[test]
fn a_shared_reservation_counts_once() {
    let scenario = bulwark_spec::parse(
        r#"
name = "shared"
policy = "edf"
cores = 1
duration = "1s"

[[cluster]]
name = "k"
cores = [0]
order = "edf"

[[task]]
name = "a"
cluster = "k"
reservation = { name = "R", budget = "3ms", period = "10ms" }
period = "10ms"
execution = "1ms"

[[task]]
name = "b"
cluster = "k"
reservation = "R"
period = "10ms"
execution = "1ms"

[[task]]
name = "c"
cluster = "k"
reservation = { budget = "2ms", period = "10ms" }
period = "10ms"
execution = "1ms"
"#,
        "shared.toml",
    )
    .expect("valid");
    let [cluster] = analyse(&scenario).try_into().expect("one cluster");
    assert_eq!(
        Some(cluster.bandwidth.total),
        Bandwidth::of(ms(5), ms(10)),
        "R and c once each"
    );
    assert_eq!(
        cluster.members[1].reservation,
        MemberReservation::Shared { owner: "a".into() }
    );
    assert!(!cluster.members[1].reservation.is_tested());
    // Jointly, a job of `a` may wait for R's blackout, 10 + 10 - 3 = 17 ms, and 1 ms
    // more: past its 10 ms deadline, so `b`'s bound is not computed.
    let Fit::Exceeds(why) = &cluster.members[0].fit else {
        panic!("a's fit: {:?}", cluster.members[0].fit);
    };
    assert!(why.contains("a job may take 18ms > 10ms"), "{why}");
    assert_eq!(
        cluster.members[0].job_response,
        Some(Response::Exceeds(ms(18)))
    );
    assert!(matches!(cluster.members[1].fit, Fit::Unchecked(_)));
    assert_eq!(cluster.members[1].job_response, Some(Response::NotComputed));
    assert_eq!(cluster.members[2].fit, Fit::Carried);
    // `c` alone in its own reservation, served within p under GFB.
    assert_eq!(
        cluster.members[2].job_response,
        Some(Response::Bounded(ms(10)))
    );
    assert!(matches!(cluster.verdict, ClusterVerdict::Schedulable(_)));
}

/// The same reservation `(3, 10)` carrying `a` and `b` with jobs every 40 ms fits them
/// both: `a` within the blackout 17 and its 1 ms, `b` behind one job of `a`, 19. Under
/// fixed priority the response-time analysis serves R's budget within 3 + 2 = 5 ms (c's
/// reservation is above it), so the blackout is 10 + 5 - 3 = 12: `a` 13, `b` 14. A script
/// sharing it is not checked, and neither is the task after it.
#[test]
fn tasks_sharing_a_reservation_fit_on_their_joint_demand() {
    let shared = |order: &str, script: &str| {
        // Priorities go on the reservations' owners, under fixed priority only.
        let priority = |level: u8| {
            if order == "edf" {
                String::new()
            } else {
                format!("priority = {level}")
            }
        };
        let (high, low) = (priority(2), priority(1));
        let source = format!(
            r#"
name = "shared"
policy = "{order}"
cores = 1
duration = "1s"

[[cluster]]
name = "k"
cores = [0]
order = "{order}"

[[task]]
name = "c"
cluster = "k"
{high}
reservation = {{ budget = "2ms", period = "10ms" }}
period = "10ms"
execution = "1ms"

[[task]]
name = "a"
cluster = "k"
{low}
reservation = {{ name = "R", budget = "3ms", period = "10ms" }}
period = "40ms"
execution = "1ms"

[[task]]
name = "b"
cluster = "k"
reservation = "R"
period = "40ms"
execution = "1ms"
{script}"#
        );
        let scenario = bulwark_spec::parse(&source, "shared.toml").expect("valid");
        let [cluster] = analyse(&scenario).try_into().expect("one cluster");
        cluster
    };
    let bounds = |cluster: &ClusterAnalysis| -> Vec<Option<Response>> {
        cluster.members.iter().map(|m| m.job_response).collect()
    };
    // `c`, alone in its reservation: served within p = 10 ms under EDF (GFB), within its
    // R = 2 ms at the top priority.
    let edf = shared("edf", "");
    assert_eq!(
        bounds(&edf),
        vec![
            Some(Response::Bounded(ms(10))),
            Some(Response::Bounded(ms(18))),
            Some(Response::Bounded(ms(19)))
        ]
    );
    assert!(edf.members.iter().all(|m| m.fit == Fit::Carried));
    let fixed = shared("fixed-priority", "");
    assert!(matches!(fixed.verdict, ClusterVerdict::RtaSchedulable(_)));
    assert_eq!(fixed.members[1].response, Some(Response::Bounded(ms(5))));
    assert_eq!(
        bounds(&fixed),
        vec![
            Some(Response::Bounded(ms(2))),
            Some(Response::Bounded(ms(13))),
            Some(Response::Bounded(ms(14)))
        ]
    );
    let script = r#"
[[task]]
name = "s"
cluster = "k"
reservation = "R"
script = [{ run = "1ms" }, { sleep-for = "30ms" }]

[[task]]
name = "d"
cluster = "k"
reservation = "R"
period = "40ms"
execution = "1ms"
"#;
    let with_script = shared("edf", script);
    assert_eq!(with_script.members[2].fit, Fit::Carried);
    let Fit::Unchecked(why) = &with_script.members[3].fit else {
        panic!("s: {:?}", with_script.members[3].fit);
    };
    assert!(why.contains("a script has no fixed"), "{why}");
    let Fit::Unchecked(why) = &with_script.members[4].fit else {
        panic!("d: {:?}", with_script.members[4].fit);
    };
    assert!(why.contains("`s`, before it"), "{why}");
    assert_eq!(with_script.members[4].job_response, None);
}
