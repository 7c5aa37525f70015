//! The CAmkES paper's schedulability analysis (section 3.2, Appendix A): every equation on an
//! example worked by hand, textbook results, a brute-force schedule, and properties on random
//! task sets and component systems.

use bulwark_analysis::blocking::{
    analyse, ceiling_blocking, hyperbolic, hyperbolic_non_unique, inherited_overhead, liu_layland,
    request_overhead, response_time, response_times, schedulable, BlockingRule, CallReply, Cpi,
    CpiId, CpiProtocol, Inapplicable, ModelError, Overheads, Requester, System, Task, TaskTiming,
    Verdict,
};
use bulwark_analysis::generate::{uunisort_task_set, PeriodDistribution, PPB};
use bulwark_core::{Duration, Priority};
use proptest::prelude::*;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// `(C, T)` in whole units of `unit`, at priority `p`, no blocking.
fn task(c: u64, t: u64, p: u8, unit: fn(u64) -> Duration) -> TaskTiming {
    TaskTiming::new(unit(c), unit(t), Priority(p))
}

fn verdicts(tasks: &[TaskTiming]) -> Vec<Verdict> {
    response_times(tasks).iter().map(|r| r.verdict).collect()
}

fn responses(tasks: &[TaskTiming]) -> Vec<Duration> {
    response_times(tasks).iter().map(|r| r.response).collect()
}

// ---------------------------------------------------------------------------------------------
// WCET composition and blocking on component systems
// ---------------------------------------------------------------------------------------------

/// Eq. 1 and the propagated blocking term. C_prop = 2 + 1 = 3 us.
///
/// CPIs: A (propagated, 100 us) requests B (propagated, 50 us).
/// Tasks: t1 (1 ms, 10 ms, p3) requests A; t2 (2 ms, 20 ms, p2) requests A and B;
/// t3 (3 ms, 40 ms, p1) requests B.
///
/// - One request to B: 3 + 50 = 53; to A: 3 + 100 + 53 = 156.
/// - C_1 = 1000 + 156 = 1156 (Eq. 1: 1000 + (100 + 50) + 2 * 3).
/// - C_2 = 2000 + 156 + 53 = 2209 (B requested twice: directly and through A).
/// - C_3 = 3000 + 53 = 3053.
/// - Ceilings: A = max(3, 2) = 3; B = max(2, 1, ceiling(A) = 3) = 3.
/// - p_min: A = 2 (t1, t2); B = 1 (t1 through A, t2, t3).
/// - B(c) = max(2, 1) = 2 for both.
/// - B_1 (p3): A (2 < 3 <= 3) and B (1 < 3 <= 3): 2. B_2 (p2): A no (2 < 2 fails), B yes:
///   2. B_3 (p1): nothing lower: 0.
#[test]
fn eq_1_propagated_wcet_and_blocking_by_hand() {
    let overheads = Overheads {
        propagated: CallReply::new(us(2), us(1)),
        ..Overheads::ZERO
    };
    let system = System {
        cpis: vec![
            Cpi::new("A", us(100), CpiProtocol::Propagated).requesting(&[CpiId(1)]),
            Cpi::new("B", us(50), CpiProtocol::Propagated),
        ],
        tasks: vec![
            Task::new("t1", ms(1), ms(10), Priority(3)).requesting(&[CpiId(0)]),
            Task::new("t2", ms(2), ms(20), Priority(2)).requesting(&[CpiId(0), CpiId(1)]),
            Task::new("t3", ms(3), ms(40), Priority(1)).requesting(&[CpiId(1)]),
        ],
    };
    let a = analyse(&system, &overheads).unwrap();
    let timings = a.timings();
    assert_eq!(
        timings.iter().map(|t| t.execution).collect::<Vec<_>>(),
        [us(1156), us(2209), us(3053)]
    );
    assert_eq!(a.cpis[0].request, us(156));
    assert_eq!(a.cpis[1].request, us(53));
    assert_eq!(a.cpis[0].ceiling, Priority(3));
    assert_eq!(a.cpis[1].ceiling, Priority(3));
    assert_eq!(
        (a.cpis[0].lowest, a.cpis[0].highest),
        (Some(Priority(2)), Some(Priority(3)))
    );
    assert_eq!(a.cpis[1].lowest, Some(Priority(1)));
    assert_eq!(a.cpis[0].blocking, us(2));
    assert_eq!(
        timings.iter().map(|t| t.blocking).collect::<Vec<_>>(),
        [us(2), us(2), us(0)]
    );
    assert_eq!(
        a.tasks.iter().map(|t| t.rule).collect::<Vec<_>>(),
        [
            BlockingRule::Ceiling,
            BlockingRule::Ceiling,
            BlockingRule::None
        ]
    );
}

/// Eq. 7 with IPCP and NPCS, Eq. 5 and Eq. 6. Overheads: propagated (2, 1), fixed (3, 2):
/// C_prop = 3, C_fix = 5 us.
///
/// CPIs: F (IPCP, 200 us) requests P (propagated, 40 us); N (NPCS, 300 us).
/// Tasks: h (500 us, 5 ms, p5) requests F; m (1 ms, 10 ms, p4) requests P;
/// l (2 ms, 20 ms, p2) requests F and N; z (1 ms, 40 ms, p1) requests nothing.
///
/// - Requests: P = 3 + 40 = 43; F = 5 + 200 + 43 = 248; N = 5 + 300 = 305.
/// - C_h = 500 + 248 = 748; C_m = 1000 + 43 = 1043; C_l = 2000 + 248 + 305 = 2553 (Eq. 7:
///   2000 + (200 + 40 + 300) + 1 * 3 + 2 * 5); C_z = 1000.
/// - Ceilings: F = max(5, 2) = 5; P = max(4, ceiling(F) = 5) = 5; N = 255.
/// - p_min: F = 2, P = 2 (l through F), N = 2.
/// - B(c): F = 248 (whole request, nested P included), P = max(2, 1) = 2, N = 305.
/// - B_h (p5) = max(248, 2, 305) = 305: N blocks h although h never requests it (Eq. 6).
/// - B_m (p4) = 305; B_l (p2) = 0 (p_min = 2 is not below 2); B_z = 0.
/// - Were N IPCP instead, its ceiling would be 2 and B_h = B_m = max(248, 2) = 248 (Eq. 5).
#[test]
fn eq_5_6_7_fixed_priority_cpis_by_hand() {
    let overheads = Overheads {
        propagated: CallReply::new(us(2), us(1)),
        fixed: CallReply::new(us(3), us(2)),
        ..Overheads::ZERO
    };
    let system = |n: CpiProtocol| System {
        cpis: vec![
            Cpi::new("F", us(200), CpiProtocol::Ipcp).requesting(&[CpiId(1)]),
            Cpi::new("P", us(40), CpiProtocol::Propagated),
            Cpi::new("N", us(300), n),
        ],
        tasks: vec![
            Task::new("h", us(500), ms(5), Priority(5)).requesting(&[CpiId(0)]),
            Task::new("m", ms(1), ms(10), Priority(4)).requesting(&[CpiId(1)]),
            Task::new("l", ms(2), ms(20), Priority(2)).requesting(&[CpiId(0), CpiId(2)]),
            Task::new("z", ms(1), ms(40), Priority(1)),
        ],
    };
    let a = analyse(&system(CpiProtocol::Npcs), &overheads).unwrap();
    let t = a.timings();
    assert_eq!(
        t.iter().map(|t| t.execution).collect::<Vec<_>>(),
        [us(748), us(1043), us(2553), us(1000)]
    );
    assert_eq!(
        a.cpis.iter().map(|c| c.ceiling).collect::<Vec<_>>(),
        [Priority(5), Priority(5), Priority::MAX]
    );
    assert_eq!(
        a.cpis.iter().map(|c| c.blocking).collect::<Vec<_>>(),
        [us(248), us(2), us(305)]
    );
    assert_eq!(
        t.iter().map(|t| t.blocking).collect::<Vec<_>>(),
        [us(305), us(305), us(0), us(0)]
    );
    assert_eq!(ceiling_blocking(&a.cpis, Priority(5)), us(305));

    let ipcp = analyse(&system(CpiProtocol::Ipcp), &overheads).unwrap();
    assert_eq!(ipcp.cpis[2].ceiling, Priority(2));
    assert_eq!(
        ipcp.timings()
            .iter()
            .map(|t| t.blocking)
            .collect::<Vec<_>>(),
        [us(248), us(248), us(0), us(0)]
    );
}

/// Eq. 8 by hand. C^unlocked = 4 + 3 = 7, C^locked = 5 + 3 = 8, C^locked(c) = 1, C_up = 2:
///
/// - l(c) = 0: max(7, 8 + 1 + 0) = 9; l(c) = 1: max(7, 11) = 11; l(c) = 2: max(7, 13) = 13.
/// - With C^unlocked = 10 + 5 = 15 instead: max(15, 9) = 15 for l(c) = 0.
#[test]
fn eq_8_inherited_overhead_by_hand() {
    let o = Overheads {
        inherited_unlocked: CallReply::new(us(4), us(3)),
        inherited_locked: CallReply::new(us(5), us(3)),
        queue: us(1),
        nest: us(2),
        ..Overheads::ZERO
    };
    assert_eq!(inherited_overhead(&o, 0), us(9));
    assert_eq!(inherited_overhead(&o, 1), us(11));
    assert_eq!(inherited_overhead(&o, 2), us(13));
    let unlocked_worse = Overheads {
        inherited_unlocked: CallReply::new(us(10), us(5)),
        ..o
    };
    assert_eq!(inherited_overhead(&unlocked_worse, 0), us(15));
    assert_eq!(request_overhead(CpiProtocol::Inherited, &o, 2), us(13));
    let with_prop = Overheads {
        propagated: CallReply::new(us(2), us(1)),
        fixed: CallReply::new(us(6), us(4)),
        ..o
    };
    assert_eq!(
        request_overhead(CpiProtocol::Propagated, &with_prop, 5),
        us(3)
    );
    assert_eq!(request_overhead(CpiProtocol::Npcs, &with_prop, 5), us(10));
}

/// Nested PIP (Eq. 8 in the WCET) and the once-per-lower-task PIP blocking.
///
/// Overheads as in `eq_8_inherited_overhead_by_hand`, plus propagated (2, 1).
/// CPIs: X (PIP, 100 us) requests Y (PIP, 50 us), which requests Z (propagated, 10 us).
/// Tasks: a (1 ms, 10 ms, p3) requests X; b (1 ms, 20 ms, p2) requests Y;
/// c (1 ms, 40 ms, p1) requests X.
///
/// - l: Z = 0, Y = 1, X = 2. Overheads: Z = 3, Y = max(7, 11) = 11, X = max(7, 13) = 13.
/// - Requests: Z = 3 + 10 = 13; Y = 11 + 50 + 13 = 74; X = 13 + 100 + 74 = 187.
/// - C_a = 1187, C_b = 1074, C_c = 1187.
/// - Ceilings: X = max(3, 1) = 3; Y = max(2, ceiling(X) = 3) = 3; Z = 3.
/// - B(c): X = 187, Y = 74, Z = max(2, 1) = 2.
/// - B_a (p3): X is PIP and can block (1 < 3 <= 3): once per lower task. b reaches Y, Z (both
///   ceiling 3): 74; c reaches X, Y, Z: 187. B_a = 74 + 187 = 261 (c holds X and waits for Y
///   held by b; a waits for both). Eq. 5's single maximum would say 187.
/// - B_b (p2): Y can block (1 < 2 <= 3); only c is lower: max(187, 74, 2) = 187 (push-through
///   when a makes c inherit p3 in X).
/// - B_c = 0.
#[test]
fn nested_inheritance_by_hand() {
    let overheads = Overheads {
        propagated: CallReply::new(us(2), us(1)),
        inherited_unlocked: CallReply::new(us(4), us(3)),
        inherited_locked: CallReply::new(us(5), us(3)),
        queue: us(1),
        nest: us(2),
        ..Overheads::ZERO
    };
    let system = System {
        cpis: vec![
            Cpi::new("X", us(100), CpiProtocol::Inherited).requesting(&[CpiId(1)]),
            Cpi::new("Y", us(50), CpiProtocol::Inherited).requesting(&[CpiId(2)]),
            Cpi::new("Z", us(10), CpiProtocol::Propagated),
        ],
        tasks: vec![
            Task::new("a", ms(1), ms(10), Priority(3)).requesting(&[CpiId(0)]),
            Task::new("b", ms(1), ms(20), Priority(2)).requesting(&[CpiId(1)]),
            Task::new("c", ms(1), ms(40), Priority(1)).requesting(&[CpiId(0)]),
        ],
    };
    let a = analyse(&system, &overheads).unwrap();
    assert_eq!(
        a.cpis.iter().map(|c| c.chain).collect::<Vec<_>>(),
        [2, 1, 0]
    );
    assert_eq!(
        a.cpis.iter().map(|c| c.overhead).collect::<Vec<_>>(),
        [us(13), us(11), us(3)]
    );
    assert_eq!(
        a.cpis.iter().map(|c| c.request).collect::<Vec<_>>(),
        [us(187), us(74), us(13)]
    );
    let t = a.timings();
    assert_eq!(
        t.iter().map(|t| t.execution).collect::<Vec<_>>(),
        [us(1187), us(1074), us(1187)]
    );
    assert_eq!(
        t.iter().map(|t| t.blocking).collect::<Vec<_>>(),
        [us(261), us(187), us(0)]
    );
    assert_eq!(a.tasks[0].rule, BlockingRule::Inheritance);
    assert_eq!(ceiling_blocking(&a.cpis, Priority(3)), us(187));

    // RTA, in us: R_a = 1187 + 261 = 1448 <= 10000.
    // R_b = 1074 + 187 + ceil(R / 10000) * 1187 = 2448 <= 20000.
    // R_c = 1187 + ceil(R / 10000) 1187 + ceil(R / 20000) 1074 = 3448 <= 40000.
    assert_eq!(responses(&t), [us(1448), us(2448), us(3448)]);
}

/// Per-task procedure times (the evaluation's subtasks): one PIP CPI `A` with `C(A)` = 1 ms,
/// but the high task's requests run 2 ms in it and the low task's 3 ms. No overheads.
/// - high (p 20): `C = 1 + 2 = 3` ms; `B` = the low task's one request = 3 ms (PIP, once per
///   lower task).
/// - low (p 10): `C = 1 + 3 = 4` ms; nothing lower, `B = 0`.
/// - `A`'s longest request is the low task's, 3 ms; the 1 ms default is nobody's.
///
/// With IPCP the same numbers hold (one lower section, 3 ms); a middle task (p 15) that
/// reaches nothing is blocked by the low task's section (ceiling 20 >= 15), 3 ms.
#[test]
fn per_task_procedure_times_by_hand() {
    let a = CpiId(0);
    for protocol in [CpiProtocol::Inherited, CpiProtocol::Ipcp] {
        let system = System {
            cpis: vec![Cpi::new("A", ms(1), protocol)],
            tasks: vec![
                Task::new("high", ms(1), ms(10), Priority(20))
                    .requesting(&[a])
                    .with_procedure_time(a, ms(2)),
                Task::new("middle", ms(1), ms(15), Priority(15)),
                Task::new("low", ms(1), ms(20), Priority(10))
                    .requesting(&[a])
                    .with_procedure_time(a, ms(5))
                    .with_procedure_time(a, ms(3)),
            ],
        };
        let analysis = analyse(&system, &Overheads::ZERO).unwrap();
        let t = analysis.timings();
        assert_eq!(
            t.iter().map(|t| t.execution).collect::<Vec<_>>(),
            [ms(3), ms(1), ms(4)]
        );
        assert_eq!(
            t.iter().map(|t| t.blocking).collect::<Vec<_>>(),
            [ms(3), ms(3), Duration::ZERO]
        );
        assert_eq!(analysis.cpis[0].request, ms(3));
    }
}

#[test]
fn malformed_systems_are_errors() {
    let unknown = System {
        cpis: vec![Cpi::new("A", us(1), CpiProtocol::Propagated).requesting(&[CpiId(4)])],
        tasks: vec![Task::new("t", us(1), ms(1), Priority(1)).requesting(&[CpiId(0)])],
    };
    assert_eq!(
        analyse(&unknown, &Overheads::ZERO),
        Err(ModelError::UnknownCpi {
            requester: Requester::Cpi(CpiId(0)),
            cpi: CpiId(4)
        })
    );
    let self_loop = System {
        cpis: vec![Cpi::new("A", us(1), CpiProtocol::Ipcp).requesting(&[CpiId(0)])],
        tasks: vec![],
    };
    assert_eq!(
        analyse(&self_loop, &Overheads::ZERO),
        Err(ModelError::Cycle { cpi: CpiId(0) })
    );
}

// ---------------------------------------------------------------------------------------------
// The bounds by hand and textbook results
// ---------------------------------------------------------------------------------------------

/// (1, 4), (1, 5), (2, 10), rate-monotonic, no blocking.
///
/// - Hyperbolic: 1.25; 1.25 * 1.2 = 1.5; 1.25 * 1.2 * 1.2 = 1.8, all <= 2.
/// - Liu and Layland: U = 0.25 + 0.2 + 0.2 = 0.65 <= 3(2^(1/3) - 1) = 0.7798.
/// - RTA: R = 1; 1 + 1 = 2; 2 + ceil(R/4) + ceil(R/5): 4 -> 2 + 1 + 1 = 4.
#[test]
fn a_set_every_test_admits() {
    let set = [task(1, 4, 3, ms), task(1, 5, 2, ms), task(2, 10, 1, ms)];
    let h = hyperbolic(&set);
    assert_eq!(h.verdict, Verdict::Admitted);
    let products: Vec<f64> = h.terms.iter().map(|t| t.product).collect();
    for (got, want) in products.iter().zip([1.25, 1.5, 1.8]) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    let ll = liu_layland(&set);
    assert_eq!(ll.verdict, Verdict::Admitted);
    assert!((ll.utilisation - 0.65).abs() < 1e-12);
    assert!((ll.bound - 0.779_763).abs() < 1e-6);
    assert_eq!(responses(&set), [ms(1), ms(2), ms(4)]);
}

/// Bini et al.'s point: (1, 2), (1, 3) has U = 5/6 = 0.8333 > 2(sqrt 2 - 1) = 0.8284, so
/// Liu and Layland reject it, but (1 + 1/2)(1 + 1/3) = 2 exactly, so the hyperbolic bound
/// admits it (decided in integers: (2 + 1)(3 + 1) = 12 <= 2 * 2 * 3 = 12). RTA: R_2 = 1 +
/// ceil(R/2): 1 -> 2 -> 2.
#[test]
fn hyperbolic_admits_what_liu_layland_rejects_exactly_at_two() {
    let set = [task(1, 2, 2, ms), task(1, 3, 1, ms)];
    let ll = liu_layland(&set);
    assert!((ll.bound - 0.828_427_124_746_190_1).abs() < 1e-15);
    assert_eq!(ll.verdict, Verdict::Rejected);
    let h = hyperbolic(&set);
    assert_eq!(h.verdict, Verdict::Admitted);
    assert!(h.terms[1].admitted);
    assert_eq!(responses(&set), [ms(1), ms(2)]);
    // One more nanosecond of work and the product passes 2.
    let over = [
        set[0],
        TaskTiming::new(Duration::from_nanos(1_000_001), ms(3), Priority(1)),
    ];
    assert_eq!(hyperbolic(&over).verdict, Verdict::Rejected);
}

/// Buttazzo (Hard Real-Time Computing Systems, the RTA example): (1, 4), (2, 6), (3, 10).
///
/// - R_1 = 1. R_2: 2 -> 2 + ceil(2/4) = 3 -> 3. R_3: 3 -> 3 + 1 + 2 = 6 -> 3 + 2 + 2 = 7 ->
///   3 + 2 + 4 = 9 -> 3 + 3 + 4 = 10 -> 10, exactly the deadline.
/// - Both bounds reject it: U = 0.25 + 0.3333 + 0.3 = 0.8833 > 0.7798, and
///   1.25 * 1.3333 * 1.3 = 2.1667 > 2.
#[test]
fn buttazzo_response_times() {
    let set = [task(1, 4, 3, ms), task(2, 6, 2, ms), task(3, 10, 1, ms)];
    assert_eq!(responses(&set), [ms(1), ms(3), ms(10)]);
    assert!(schedulable(&set));
    assert_eq!(liu_layland(&set).verdict, Verdict::Rejected);
    let h = hyperbolic(&set);
    assert_eq!(h.verdict, Verdict::Rejected);
    assert!((h.terms[2].product - 1.25 * (4.0 / 3.0) * 1.3).abs() < 1e-12);
    // One more unit for the last task and it misses: 4 -> 4 + 1 + 2 = 7 -> 4 + 2 + 4 = 10 ->
    // 4 + 3 + 4 = 11 > 10 (reported as the first iterate above the deadline).
    let over = [set[0], set[1], task(4, 10, 1, ms)];
    let r = response_time(&over, 2).unwrap();
    assert_eq!((r.verdict, r.response), (Verdict::Rejected, ms(11)));
}

/// Eq. 2 with blocking, on (1, 4), (1, 5), (2, 10) with B = (1, B_2, 0):
///
/// - tau_1: (1 + 1)/4 + 1 = 1.5.
/// - B_2 = 1: 1.25 * (1 + 2/5) = 1.75; B_2 = 2: 1.25 * 1.6 = 2 (admitted, exactly);
///   B_2 = 3: 1.25 * 1.8 = 2.25 (rejected).
/// - RTA for tau_2: B_2 = 2: 3 -> 3 + 1 = 4 -> 4 <= 5; B_2 = 3: 4 -> 5 -> 4 + 2 = 6 > 5.
#[test]
fn eq_2_hyperbolic_with_blocking_by_hand() {
    let set = |b2: u64| {
        [
            task(1, 4, 3, ms).with_blocking(ms(1)),
            task(1, 5, 2, ms).with_blocking(ms(b2)),
            task(2, 10, 1, ms),
        ]
    };
    let products = |b2| -> Vec<f64> {
        hyperbolic(&set(b2))
            .terms
            .iter()
            .map(|t| t.product)
            .collect()
    };
    assert!((products(1)[0] - 1.5).abs() < 1e-12);
    assert!((products(1)[1] - 1.75).abs() < 1e-12);
    assert_eq!(hyperbolic(&set(2)).verdict, Verdict::Admitted);
    assert_eq!(hyperbolic(&set(3)).verdict, Verdict::Rejected);
    assert_eq!(response_time(&set(2), 1).unwrap().response, ms(4));
    assert_eq!(
        response_time(&set(3), 1).unwrap().verdict,
        Verdict::Rejected
    );
}

/// Eq. 3 in us: (1000, 4000), (1000, 5000), (2000, 10000), U = 0.65, bound 0.779763.
///
/// - B_2 = 500: max B/T = 0.1, 0.75 <= 0.7798: admitted.
/// - B_2 = 700: 0.14, 0.79 > 0.7798: rejected.
/// - B_1 = 1000: 0.25, 0.9: rejected.
#[test]
fn eq_3_liu_layland_with_blocking_by_hand() {
    let set = |b: [u64; 3]| {
        [
            task(1000, 4000, 3, us).with_blocking(us(b[0])),
            task(1000, 5000, 2, us).with_blocking(us(b[1])),
            task(2000, 10000, 1, us).with_blocking(us(b[2])),
        ]
    };
    let ll = liu_layland(&set([0, 500, 0]));
    assert_eq!(ll.verdict, Verdict::Admitted);
    assert!((ll.blocking_ratio - 0.1).abs() < 1e-12);
    assert_eq!(liu_layland(&set([0, 700, 0])).verdict, Verdict::Rejected);
    let ll = liu_layland(&set([1000, 0, 0]));
    assert!((ll.blocking_ratio - 0.25).abs() < 1e-12);
    assert_eq!(ll.verdict, Verdict::Rejected);
    // Equal priorities with equal periods are allowed: (1, 10) twice, U = 0.2.
    let ties = [task(1, 10, 1, ms), task(1, 10, 1, ms)];
    assert_eq!(liu_layland(&ties).verdict, Verdict::Admitted);
}

/// Eq. 4 and the equal-priority RTA: hp (1, 5) at p2, a (2, 10) and b (3, 10) at p1.
///
/// - Eq. 4: hp: 1.2; a: (1 + 0.2)(1 + 0.3) * (1 + 0.2) = 1.872; b: 1.2 * 1.2 * 1.3 = 1.872.
///   Admitted. Eq. 2 does not apply (shared priority).
/// - RTA for a (equal priorities count like higher ones, here one job each since R <= 10):
///   R = 2 + ceil(R/10) 3 + ceil(R/5) 1: 2 -> 6 -> 7 -> 7. Same for b. (Schedule with a
///   first: hp 0-1, a 1-3, b 3-5, hp 5-6, b 6-7.)
/// - With B_a = 1: Eq. 4 for a is 1.2 * 1.3 * (1 + 3/10) = 2.028 > 2, rejected; RTA:
///   R_a = 1 + 2 + ceil(R/10) 3 + ceil(R/5): 3 -> 7 -> 8 -> 8 <= 10, admitted.
#[test]
fn eq_4_non_unique_priorities_by_hand() {
    let set = [task(1, 5, 2, ms), task(2, 10, 1, ms), task(3, 10, 1, ms)];
    let h = hyperbolic_non_unique(&set);
    assert_eq!(h.verdict, Verdict::Admitted);
    for (got, want) in h.terms.iter().zip([1.2, 1.872, 1.872]) {
        assert!((got.product - want).abs() < 1e-12);
    }
    assert_eq!(
        hyperbolic(&set).verdict,
        Verdict::NotApplicable(Inapplicable::SharedPriority)
    );
    let r = response_times(&set);
    assert_eq!(
        r.iter().map(|r| r.response).collect::<Vec<_>>(),
        [ms(1), ms(7), ms(7)]
    );
    assert_eq!(
        simulate(&[(1, 5, 2), (2, 10, 1), (3, 10, 1)], 20)[2],
        Some(7)
    );

    let blocked = [set[0], set[1].with_blocking(ms(1)), set[2]];
    let h = hyperbolic_non_unique(&blocked);
    assert_eq!(h.verdict, Verdict::Rejected);
    assert!((h.terms[1].product - 2.028).abs() < 1e-12);
    assert_eq!(response_time(&blocked, 1).unwrap().response, ms(8));
}

/// The rate-monotonic precondition. (4, 10) above (1, 4): Eq. 2's product for the low task is
/// 1.4 * 1.25 = 1.75 <= 2, but R = 1 + 4 = 5 > 4. The bounds say "not applicable".
#[test]
fn the_bounds_refuse_non_rate_monotonic_priorities() {
    let set = [task(4, 10, 2, ms), task(1, 4, 1, ms)];
    let h = hyperbolic(&set);
    assert_eq!(
        h.verdict,
        Verdict::NotApplicable(Inapplicable::NotRateMonotonic)
    );
    assert!((h.terms[1].product - 1.75).abs() < 1e-12 && h.terms[1].admitted);
    assert_eq!(
        hyperbolic_non_unique(&set).verdict,
        Verdict::NotApplicable(Inapplicable::NotRateMonotonic)
    );
    assert_eq!(
        liu_layland(&set).verdict,
        Verdict::NotApplicable(Inapplicable::NotRateMonotonic)
    );
    let r = response_time(&set, 1).unwrap();
    assert_eq!((r.verdict, r.response), (Verdict::Rejected, ms(5)));
    // Equal priorities with different periods are not rate-monotonic either.
    let ties = [task(1, 4, 1, ms), task(1, 12, 1, ms)];
    assert_eq!(
        hyperbolic_non_unique(&ties).verdict,
        Verdict::NotApplicable(Inapplicable::NotRateMonotonic)
    );
}

/// Equal priorities with different periods, FIFO.
///
/// - a (1, 4), b (3, 12) at p1: R_a = 1 + ceil(R/12) 3: 1 -> 4 -> 4 <= 4 (b released with a
///   and run first); R_b = 3 + ceil(R/4): 3 -> 4 -> 4. One job of each other.
/// - a (1, 4), b (4, 12): R_a = 1 + ceil(R/12) 4: 1 -> 5 > 4, rejected, and really missed
///   when b is queued first (b 0-4, a 4-5). R_b = 4 + ceil(R/4): 4 -> 5 -> 6 -> 6 <= 12:
///   a's job released at 4 is counted although FIFO puts it behind b; the schedule with a
///   first gives a 0-1, b 1-5: 5 <= 6, safe but not exact.
#[test]
fn equal_priorities_with_different_periods() {
    let fits = [task(1, 4, 1, ms), task(3, 12, 1, ms)];
    assert_eq!(responses(&fits), [ms(4), ms(4)]);
    assert!(schedulable(&fits));

    let long = [task(1, 4, 1, ms), task(4, 12, 1, ms)];
    let r = response_times(&long);
    assert_eq!((r[0].verdict, r[0].response), (Verdict::Rejected, ms(5)));
    assert_eq!((r[1].verdict, r[1].response), (Verdict::Admitted, ms(6)));
    // In ticks: b queued first makes a miss; a queued first gives b its worst, 5.
    assert_eq!(simulate(&[(4, 12, 1), (1, 4, 1)], 24)[1], None);
    assert_eq!(simulate(&[(1, 4, 1), (4, 12, 1)], 24)[1], Some(5));
}

#[test]
fn degenerate_inputs_are_not_admitted_and_do_not_panic() {
    let zero = [task(1, 0, 2, ms), task(1, 10, 1, ms)];
    let why = Verdict::NotApplicable(Inapplicable::ZeroPeriod);
    assert_eq!(hyperbolic(&zero).verdict, why);
    assert_eq!(hyperbolic_non_unique(&zero).verdict, why);
    assert_eq!(liu_layland(&zero).verdict, why);
    assert_eq!(verdicts(&zero), [why, Verdict::Rejected]);
    assert_eq!(response_time(&zero, 2), None);
    // The empty set passes every test.
    assert_eq!(hyperbolic(&[]).verdict, Verdict::Admitted);
    assert_eq!(liu_layland(&[]).verdict, Verdict::Admitted);
    // Saturated durations are rejected, not wrapped: a demand of `Duration::MAX` is
    // unbounded, as in the classic fixed-priority test, whose search this is.
    let huge = [
        TaskTiming::new(Duration::MAX, Duration::MAX, Priority(2)),
        TaskTiming::new(Duration::MAX, Duration::MAX, Priority(1)).with_blocking(Duration::MAX),
    ];
    assert_eq!(verdicts(&huge), [Verdict::Rejected, Verdict::Rejected]);
    assert_eq!(response_times(&huge)[0].response, Duration::MAX);
    assert_eq!(hyperbolic(&huge).verdict, Verdict::Rejected);
}

// ---------------------------------------------------------------------------------------------
// A brute-force schedule to hold the response-time analysis to
// ---------------------------------------------------------------------------------------------

/// Simulates synchronous release in whole ticks until `horizon`: fixed priorities, equal
/// priorities first-in first-out to completion (earlier release first, then lower index), no
/// blocking. Returns each task's worst observed response, or `None` for a task with a job
/// still unfinished at its deadline.
fn simulate(tasks: &[(u64, u64, u8)], horizon: u64) -> Vec<Option<u64>> {
    // (task, release, remaining)
    let mut ready: Vec<(usize, u64, u64)> = Vec::new();
    let mut worst: Vec<Option<u64>> = vec![Some(0); tasks.len()];
    for now in 0..horizon {
        for (i, &(c, t, _)) in tasks.iter().enumerate() {
            if now % t == 0 {
                if c == 0 {
                    continue;
                }
                ready.push((i, now, c));
            }
        }
        for &(i, release, _) in &ready {
            if now >= release + tasks[i].1 {
                worst[i] = None;
            }
        }
        let pick = ready
            .iter()
            .enumerate()
            .max_by(|(_, a), (_, b)| {
                let key = |&(i, release, _): &(usize, u64, u64)| {
                    (tasks[i].2, std::cmp::Reverse(release), std::cmp::Reverse(i))
                };
                key(a).cmp(&key(b))
            })
            .map(|(k, _)| k);
        if let Some(k) = pick {
            ready[k].2 -= 1;
            if ready[k].2 == 0 {
                let (i, release, _) = ready.swap_remove(k);
                let response = now + 1 - release;
                if response > tasks[i].1 {
                    worst[i] = None;
                }
                worst[i] = worst[i].map(|w| w.max(response));
            }
        }
    }
    worst
}

fn lcm(a: u64, b: u64) -> u64 {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

/// The simulator on Buttazzo's set: responses 1, 3, 10.
#[test]
fn the_simulator_reproduces_buttazzo() {
    assert_eq!(
        simulate(&[(1, 4, 3), (2, 6, 2), (3, 10, 1)], 60),
        [Some(1), Some(3), Some(10)]
    );
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

/// Small integer task sets: (C, T, priority), C <= T, T in 1..=10.
fn small_set() -> impl Strategy<Value = Vec<(u64, u64, u8)>> {
    prop::collection::vec(
        (1u64..=10, 0u64..=10, 1u8..=4).prop_map(|(t, c, p)| (c.min(t), t, p)),
        1..=5,
    )
}

fn as_timings(set: &[(u64, u64, u8)]) -> Vec<TaskTiming> {
    set.iter()
        .map(|&(c, t, p)| {
            TaskTiming::new(
                Duration::from_nanos(c),
                Duration::from_nanos(t),
                Priority(p),
            )
        })
        .collect()
}

/// A rate-monotonic set from the paper's generator: periods harmonic (10 ms to 1 s) or
/// log-uniform (1 ms to 1 s), ties for equal periods, blocking as a fraction of each period.
fn generated_set() -> impl Strategy<Value = Vec<TaskTiming>> {
    (
        1usize..=7,
        50_000_000u64..=PPB,
        any::<u64>(),
        any::<bool>(),
        prop::collection::vec(0u64..=300, 7),
    )
        .prop_map(|(n, u, seed, harmonic, blocking_permille)| {
            let periods = if harmonic {
                PeriodDistribution::PAPER
            } else {
                PeriodDistribution::LogUniform {
                    min: ms(1),
                    max: Duration::from_secs(1),
                    granule: us(1),
                }
            };
            uunisort_task_set(n, u, periods, seed)
                .iter()
                .zip(blocking_permille)
                .map(|(g, b)| {
                    TaskTiming::new(g.task.execution, g.task.period, g.priority)
                        .with_blocking(Duration::from_nanos(g.task.period.as_nanos() / 1000 * b))
                })
                .collect()
        })
}

/// The same set with unique priorities: ties broken by position, still rate-monotonic.
fn unique_priorities(set: &[TaskTiming]) -> Vec<TaskTiming> {
    let mut order: Vec<usize> = (0..set.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(set[i].period), i));
    let mut out = set.to_vec();
    for (rank, &i) in order.iter().enumerate() {
        out[i].priority = Priority(rank as u8 + 1);
    }
    out
}

/// A random acyclic component system: CPI `k` may request only CPIs of larger index.
fn component_system() -> impl Strategy<Value = (System, Overheads)> {
    let cpi = (0u64..=5_000, 0u8..4, prop::collection::vec(0usize..6, 0..3));
    let task = (
        0u64..=20_000,
        1u64..=6,
        prop::collection::vec(0usize..6, 0..3),
    );
    let overheads = prop::collection::vec(0u64..=20, 9);
    (
        prop::collection::vec(cpi, 0..6),
        prop::collection::vec(task, 1..6),
        overheads,
    )
        .prop_map(|(cpis, tasks, o)| {
            let m = cpis.len();
            let protocols = [
                CpiProtocol::Propagated,
                CpiProtocol::Inherited,
                CpiProtocol::Ipcp,
                CpiProtocol::Npcs,
            ];
            let cpis: Vec<Cpi> = cpis
                .into_iter()
                .enumerate()
                .map(|(k, (c, p, calls))| {
                    let calls: Vec<CpiId> = calls
                        .into_iter()
                        .filter(|_| k + 1 < m)
                        .map(|d| CpiId(k + 1 + d % (m - k - 1).max(1)))
                        .collect();
                    Cpi::new(format!("c{k}"), us(c), protocols[p as usize]).requesting(&calls)
                })
                .collect();
            let tasks: Vec<Task> = tasks
                .into_iter()
                .enumerate()
                .map(|(i, (c, t, calls))| {
                    let calls: Vec<CpiId> = calls
                        .into_iter()
                        .filter(|_| m > 0)
                        .map(|d| CpiId(d % m.max(1)))
                        .collect();
                    // Period 10 ms * 2^t, rate-monotonic priority with ties.
                    Task::new(format!("t{i}"), us(c), ms(10 << t), Priority(10 - t as u8))
                        .requesting(&calls)
                })
                .collect();
            let overheads = Overheads {
                propagated: CallReply::new(us(o[0]), us(o[1])),
                fixed: CallReply::new(us(o[2]), us(o[3])),
                inherited_unlocked: CallReply::new(us(o[4]), us(o[5])),
                inherited_locked: CallReply::new(us(o[6]), us(o[7])),
                queue: us(o[8]),
                nest: us(o[8] / 2),
            };
            (System { tasks, cpis }, overheads)
        })
}

fn scaled(o: &Overheads, k: u64) -> Overheads {
    let s = |d: Duration| d.saturating_mul(k);
    let cr = |c: CallReply| CallReply::new(s(c.call), s(c.reply));
    Overheads {
        propagated: cr(o.propagated),
        fixed: cr(o.fixed),
        inherited_unlocked: cr(o.inherited_unlocked),
        inherited_locked: cr(o.inherited_locked),
        queue: s(o.queue),
        nest: s(o.nest),
    }
}

proptest! {
    /// Every job of the brute-force schedule finishes within the analysed response time, and
    /// with distinct priorities the analysis is exact for synchronous release.
    #[test]
    fn rta_bounds_the_brute_force_schedule(set in small_set()) {
        let horizon = set.iter().fold(1, |h, &(_, t, _)| lcm(h, t));
        let seen = simulate(&set, horizon * 2);
        let distinct = set.iter().enumerate().all(|(i, a)| set[i + 1..].iter().all(|b| a.2 != b.2));
        for (i, r) in response_times(&as_timings(&set)).iter().enumerate() {
            if r.verdict.admitted() {
                let observed = seen[i];
                prop_assert!(observed.is_some(), "task {} admitted but missed", i);
                prop_assert!(observed.unwrap() <= r.response.as_nanos());
                if distinct {
                    prop_assert_eq!(observed.unwrap(), r.response.as_nanos());
                }
            } else if distinct {
                prop_assert!(seen[i].is_none(), "task {} rejected but met its deadlines", i);
            }
        }
    }

    /// Hyperbolic (Eq. 2) => RTA, on unique rate-monotonic priorities.
    #[test]
    fn hyperbolic_implies_rta(set in generated_set()) {
        let set = unique_priorities(&set);
        if hyperbolic(&set).verdict.admitted() {
            prop_assert!(schedulable(&set));
        }
    }

    /// The non-unique bound (Eq. 4) => RTA with equal priorities FIFO.
    #[test]
    fn non_unique_bound_implies_rta(set in generated_set()) {
        if hyperbolic_non_unique(&set).verdict.admitted() {
            prop_assert!(schedulable(&set));
        }
    }

    /// Liu and Layland with blocking (Eq. 3) => RTA, with and without ties.
    #[test]
    fn liu_layland_implies_rta(set in generated_set()) {
        if liu_layland(&set).verdict.admitted() {
            prop_assert!(schedulable(&set));
        }
        let unique = unique_priorities(&set);
        if liu_layland(&unique).verdict.admitted() {
            prop_assert!(schedulable(&unique));
        }
    }

    /// With unique priorities Eq. 4 is Eq. 2: the same products and verdicts.
    #[test]
    fn non_unique_bound_reduces_to_hyperbolic(set in generated_set()) {
        let set = unique_priorities(&set);
        prop_assert_eq!(hyperbolic(&set), hyperbolic_non_unique(&set));
    }

    /// More blocking never turns a rejection into an admission, for any test, and never
    /// shortens a response time.
    #[test]
    fn more_blocking_never_helps(
        set in generated_set(),
        which in 0usize..7,
        extra_permille in 1u64..=300,
    ) {
        let k = which % set.len();
        let mut more = set.clone();
        more[k].blocking = more[k]
            .blocking
            .saturating_add(Duration::from_nanos(set[k].period.as_nanos() / 1000 * extra_permille));
        let unique = unique_priorities(&set);
        let unique_more = unique_priorities(&more);
        prop_assert!(!hyperbolic(&unique_more).verdict.admitted() || hyperbolic(&unique).verdict.admitted());
        prop_assert!(
            !hyperbolic_non_unique(&more).verdict.admitted()
                || hyperbolic_non_unique(&set).verdict.admitted()
        );
        prop_assert!(!liu_layland(&more).verdict.admitted() || liu_layland(&set).verdict.admitted());
        for (before, after) in response_times(&set).iter().zip(response_times(&more)) {
            prop_assert!(!after.verdict.admitted() || before.verdict.admitted());
            if after.verdict.admitted() {
                prop_assert!(before.response <= after.response);
            }
        }
    }

    /// On random component systems: the analysis succeeds on acyclic graphs, the lowest
    /// priority is never blocked, WCETs include the originating component's time, larger
    /// overheads never shrink a WCET or a blocking term, and the bounds still imply RTA.
    #[test]
    fn component_systems((system, overheads) in component_system(), k in 2u64..5) {
        let a = analyse(&system, &overheads).unwrap();
        let b = analyse(&system, &scaled(&overheads, k)).unwrap();
        let lowest = system.tasks.iter().map(|t| t.priority).min().unwrap();
        for ((task, x), y) in system.tasks.iter().zip(&a.tasks).zip(&b.tasks) {
            prop_assert!(x.timing.execution >= task.execution);
            prop_assert!(y.timing.execution >= x.timing.execution);
            prop_assert!(y.timing.blocking >= x.timing.blocking);
            if task.priority == lowest {
                prop_assert_eq!(x.timing.blocking, Duration::ZERO);
                prop_assert_eq!(x.rule, BlockingRule::None);
            }
            if task.requests.is_empty() {
                prop_assert_eq!(x.timing.execution, task.execution);
            }
        }
        for c in &a.cpis {
            prop_assert!(c.highest.is_none() || c.ceiling >= c.highest.unwrap());
            prop_assert!(c.request >= c.overhead);
        }
        let t = a.timings();
        for verdict in [
            hyperbolic_non_unique(&t).verdict,
            liu_layland(&t).verdict,
        ] {
            prop_assert!(!verdict.admitted() || schedulable(&t));
        }
    }
}

/// The analysis reads a lowered system's bodies, by hand: t's body executes 1 + 2 ms around
/// its request to A, so `C(c_t)` is 3 ms and it requests A; A's shared body executes 500 us
/// and requests B; B's shared body is empty, but t's own body in B executes 4 ms, so t's
/// procedure time in B is 4 ms while B's `C(c)` is 0.
#[test]
fn a_lowered_system_is_read_from_its_bodies() {
    use bulwark_spec::lowered::{LoweredCpi, LoweredTask, Step};
    let task = LoweredTask {
        name: "t".into(),
        priority: Priority(5),
        period: ms(10),
        offset: Duration::ZERO,
        body: vec![Step::Execute(ms(1)), Step::Request(0), Step::Execute(ms(2))],
        reservation: None,
    };
    let cpi = |name: &str, protocol, body, task_bodies| LoweredCpi {
        name: name.into(),
        protocol,
        ceiling: Priority(5),
        threads: 1,
        body,
        task_bodies,
    };
    let cpis = [
        cpi(
            "A",
            CpiProtocol::Inherited,
            vec![Step::Execute(us(500)), Step::Request(1)],
            vec![],
        ),
        cpi(
            "B",
            CpiProtocol::Propagated,
            vec![],
            vec![(0, vec![Step::Execute(ms(4))])],
        ),
    ];
    let system = System::lowered(&[task], &cpis);
    let expected = System {
        tasks: vec![Task::new("t", ms(3), ms(10), Priority(5))
            .requesting(&[CpiId(0)])
            .with_procedure_time(CpiId(1), ms(4))],
        cpis: vec![
            Cpi::new("A", us(500), CpiProtocol::Inherited).requesting(&[CpiId(1)]),
            Cpi::new("B", Duration::ZERO, CpiProtocol::Propagated),
        ],
    };
    assert_eq!(system, expected);
    // With no overheads, t's WCET is its own 3 ms, A's 500 us and its 4 ms in B.
    let analysis = analyse(&system, &Overheads::ZERO).unwrap();
    assert_eq!(
        analysis.tasks[0].timing.execution,
        Duration::from_micros(7_500)
    );
}
