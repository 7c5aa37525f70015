//! Classic analysis (fixed-priority RTA, priority assignment, EDF with QPA) on textbook
//! examples worked out by hand, and against brute force on small integer task sets.

use bulwark_analysis::classic::edf::{self, EdfOutcome};
use bulwark_analysis::classic::fixed_point::{Interferes, RateSums};
use bulwark_analysis::classic::fixed_priority::{
    response_time, response_time_among, response_times, Outcome,
};
use bulwark_analysis::classic::priority_assignment::{
    audsley, deadline_monotonic, ordered, rate_monotonic, Unassignable,
};
use bulwark_analysis::classic::Task;
use proptest::prelude::*;

fn task(name: &str, wcet: u64, period: u64) -> Task {
    Task::new(name, wcet, period)
}

/// Liu and Layland's / Buttazzo's two tasks (2, 5), (4, 7) under rate monotonic:
/// R1 = 2; for t2, w = 4 + ceil(w / 5) 2: 4 -> 6 -> 8 > 7: t2 misses its first deadline.
#[test]
fn textbook_rate_monotonic_pair() {
    let set = [task("t1", 2, 5), task("t2", 4, 7)];
    let r = response_times(&set);
    assert_eq!(r[0].response, 2);
    assert!(r[0].schedulable());
    assert_eq!(r[0].jobs_examined, 1);
    assert_eq!(r[0].busy_window, Some(2));
    assert_eq!(r[1].outcome, Outcome::Misses { job: 0 });
    assert!(r[1].response > 7);
}

/// Buttazzo, Hard Real-Time Computing Systems (3rd ed., section 4.5.2, response time
/// analysis example): (C, T) = (1, 4), (2, 6), (3, 10), D = T, RM order.
/// R1 = 1; R2: 2 -> 2 + 1 = 3 -> 3; R3: 3 -> 3 + 1 + 2 = 6 -> 3 + 2 + 2 = 7 -> 3 + 2 + 4 = 9
/// -> 3 + 3 + 4 = 10 -> 10 <= 10. All schedulable, one job each.
#[test]
fn buttazzo_response_time_example() {
    let set = [task("t1", 1, 4), task("t2", 2, 6), task("t3", 3, 10)];
    let r = response_times(&set);
    let responses: Vec<u64> = r.iter().map(|a| a.response).collect();
    assert_eq!(responses, vec![1, 3, 10]);
    assert!(r.iter().all(|a| a.schedulable() && a.jobs_examined == 1));
}

/// Tindell's arbitrary-deadline example (Tindell, Burns and Wellings 1994; also Burns and
/// Wellings, Real-Time Systems and Programming Languages, "arbitrary deadlines"): a = (C 26,
/// T 70, D 70) above b = (C 62, T 100, D 118). By hand, w(q) = (q+1) 62 + ceil(w / 70) 26:
/// q0: 62 -> 88 -> 114 -> 114, R = 114; q1: 124 -> 176 -> 202 -> 202, R = 102;
/// q2: 186 -> 264 -> 290 -> 316 -> 316, R = 116; q3: 248 -> 352 -> 404 -> 404, R = 104;
/// q4: 310 -> 440 -> 492 -> 518 -> 518, R = 118; q5: 372 -> 528 -> 580 -> 606 -> 606, R = 106;
/// q6: 434 -> 616 -> 668 -> 694 -> 694 <= 700, the window ends, R = 94.
/// So R_b = 118 <= 118 at job 4, 7 jobs in a window of 694. One unit less of deadline misses.
#[test]
fn tindell_arbitrary_deadlines() {
    let set = [task("a", 26, 70), task("b", 62, 100).with_deadline(118)];
    let b = response_time(&set, 1).unwrap();
    assert!(b.schedulable(), "{b:?}");
    assert_eq!(b.response, 118);
    assert_eq!(b.worst_job, 4);
    assert_eq!(b.jobs_examined, 7);
    assert_eq!(b.busy_window, Some(694));
    let tight = [task("a", 26, 70), task("b", 62, 100).with_deadline(117)];
    let b = response_time(&tight, 1).unwrap();
    assert_eq!(b.outcome, Outcome::Misses { job: 4 });
}

/// Jitter and blocking (Tindell, Burns and Wellings 1994, Eq. for R = J + w): hp (1, 4) with
/// J = 2 above (2, 10) with J = 1, B = 1. w = 1 + 2 + ceil((w + 2) / 4) 1: 3 -> 3 + 2 = 5 ->
/// 3 + 2 = 5; R = w + J = 6. Window: w = 5 <= 10 - 1, one job.
#[test]
fn jitter_and_blocking_by_hand() {
    let set = [
        task("hp", 1, 4).with_jitter(2),
        task("lp", 2, 10).with_jitter(1).with_blocking(1),
    ];
    let lp = response_time(&set, 1).unwrap();
    assert_eq!((lp.response, lp.blocking, lp.jobs_examined), (6, 1, 1));
    // The hp task itself: w = 1 (nothing above), R = 1 + 2 = 3.
    assert_eq!(response_time(&set, 0).unwrap().response, 3);
}

/// Final non-preemptive region (Bril, Lukkien and Verhaegh 2009, Eq. 14) by hand: t1 (2, 5)
/// fully preemptive above t2 (4, 7) wholly non-preemptive (F = 4).
/// t2: active period L = ceil(L/5) 2 + ceil(L/7) 4: 6 -> 8 -> 12 -> 14 -> 14, so
/// ceil(14 / 7) = 2 jobs. Job 0: S = 0 + (floor(S/5) + 1) 2: 2 -> 2, ends 6, R = 6.
/// Job 1: S = 4 + (floor(S/5) + 1) 2: 6 -> 8 -> 8, ends 12, R = 12 - 7 = 5. R2 = 6 (job 0).
/// t1: blocked by F2 = 4 (continuous-time bound): w = 4 + 2 = 6 > 5, a miss.
#[test]
fn limited_preemptive_by_hand() {
    let set = [task("t1", 2, 5), task("t2", 4, 7).with_final_region(4)];
    let t2 = response_time(&set, 1).unwrap();
    assert!(t2.schedulable(), "{t2:?}");
    assert_eq!(
        (t2.response, t2.worst_job, t2.jobs_examined, t2.busy_window),
        (6, 0, 2, Some(14))
    );
    let t1 = response_time(&set, 0).unwrap();
    assert_eq!(t1.blocking, 4);
    assert!(!t1.schedulable());
}

/// U = 1 with blocking: the level-i busy window never ends, but its jobs repeat every
/// hyperperiod. (2, 4) above (3, 6) with B = 1, H = 12, k = H / 6 = 2 jobs decide:
/// job 0: w = 1 + 3 + ceil(w / 4) 2: 6 -> 8 -> 8, R = 8;
/// job 1: w = 1 + 6 + ceil(w / 4) 2: 8 -> 11 -> 13 -> 15 -> 15, R = 15 - 6 = 9;
/// job 2: w = 1 + 9 + ceil(w / 4) 2: 15 -> 18 -> 20 -> 20 = w(0) + 12, R = 8 again.
/// So R = 9 (job 1): D = 9 is schedulable and D = 8 misses at job 1, where job 0 alone
/// (R = 8) would have passed.
#[test]
fn endless_busy_window_by_hand() {
    let set = |deadline| {
        [
            task("hi", 2, 4),
            task("lo", 3, 6).with_blocking(1).with_deadline(deadline),
        ]
    };
    let met = response_time(&set(9), 1).unwrap();
    assert_eq!(met.outcome, Outcome::Schedulable, "{met:?}");
    assert_eq!(
        (
            met.response,
            met.worst_job,
            met.jobs_examined,
            met.busy_window
        ),
        (9, 1, 2, None)
    );
    let missed = response_time(&set(8), 1).unwrap();
    assert_eq!(missed.outcome, Outcome::Misses { job: 1 }, "{missed:?}");
    // The same set with a final non-preemptive region of 1 on "lo":
    // S(q) = 1 + 3q + 2 + (floor(S / 4) + 1) 2: S(0): 5 -> 7 -> 7, ends 8, R = 8;
    // S(1): 8 -> 12 -> 14 -> 14, ends 15, R = 9; two jobs, as above.
    let region = [
        task("hi", 2, 4),
        task("lo", 3, 6)
            .with_blocking(1)
            .with_final_region(1)
            .with_deadline(9),
    ];
    let limited = response_time(&region, 1).unwrap();
    assert_eq!(limited.outcome, Outcome::Schedulable, "{limited:?}");
    assert_eq!(
        (limited.response, limited.jobs_examined, limited.busy_window),
        (9, 2, None)
    );
}

/// Rate monotonic fails the (2, 5), (4, 7) pair however it is ordered, and so does OPA:
/// t1 below t2 gives w = 2 + ceil(w/7) 4 = 6 > 5, t2 below t1 misses as above.
/// Deadline monotonic beats rate monotonic on (C 3, T 6, D 6), (C 2, T 10, D 4) (by hand: DM
/// puts the second first, R = 2 and 3 + 2 = 5 <= 6; RM gives R2 = 2 + 3 = 5 > 4), and OPA
/// finds the DM order.
#[test]
fn priority_assignment_by_hand() {
    let pair = [task("t1", 2, 5), task("t2", 4, 7)];
    assert_eq!(rate_monotonic(&pair), vec![0, 1]);
    assert_eq!(audsley(&pair), Err(Unassignable::NoTaskFits { level: 0 }));
    let set = [task("a", 3, 6), task("b", 2, 10).with_deadline(4)];
    assert_eq!(rate_monotonic(&set), vec![0, 1]);
    assert_eq!(deadline_monotonic(&set), vec![1, 0]);
    let rm = response_times(&ordered(&set, &rate_monotonic(&set)));
    assert!(!rm[1].schedulable());
    let opa = audsley(&set).unwrap();
    assert_eq!(opa, vec![1, 0]);
    assert!(response_times(&ordered(&set, &opa))
        .iter()
        .all(|a| a.schedulable()));
    let lp = [task("a", 1, 5).with_final_region(1)];
    assert!(matches!(
        audsley(&lp),
        Err(Unassignable::NotOpaCompatible { .. })
    ));
}

/// Blocking feeds the RTA: Buttazzo's set (1, 4), (2, 6), (3, 10) where the lowest task holds
/// a semaphore shared with the highest for 1. Under PCP (ceiling = task 0) tasks 0 and 1 can
/// each be blocked once for 1, the lowest not at all: R0 = 1 + 1 = 2; R1: 1 + 2 + ceil(w/4) 1:
/// 4 -> 4, R1 = 4; R2 = 10 as without blocking. Under NPCS the same here (one section).
#[test]
fn critical_sections_feed_the_response_times() {
    use bulwark_analysis::classic::resource_sharing::{with_blocking, CriticalSection, Protocol};
    let set = [task("t1", 1, 4), task("t2", 2, 6), task("t3", 3, 10)];
    let sections = [
        CriticalSection {
            task: 0,
            resource: 0,
            length: 1,
        },
        CriticalSection {
            task: 2,
            resource: 0,
            length: 1,
        },
    ];
    for protocol in [Protocol::Pcp, Protocol::Pip, Protocol::Npcs] {
        let blocked = with_blocking(&set, &sections, protocol);
        let r: Vec<(u64, u64)> = response_times(&blocked)
            .iter()
            .map(|a| (a.blocking, a.response))
            .collect();
        assert_eq!(r, vec![(1, 2), (1, 4), (0, 10)], "{protocol:?}");
    }
}

/// EDF on (2, 5), (4, 7): implicit deadlines, U = 2/5 + 4/7 = 34/35 <= 1, schedulable.
#[test]
fn textbook_edf_pair() {
    let a = edf::analyse(&[task("t1", 2, 5), task("t2", 4, 7)]);
    assert_eq!(a.outcome, EdfOutcome::UtilisationAtMostOne);
    let u = edf::utilisation(&[task("t1", 2, 5), task("t2", 4, 7)]);
    assert_eq!((u.total.numerator, u.total.denominator), (34, 35));
}

/// Constrained deadlines by hand: (C 2, D 3, T 4), (C 3, D 5, T 8): U = 7/8; busy period
/// 5 -> 2*2 + 3 = 7 -> 7 = L; deadlines up to 7: h(3) = 2, h(5) = 5, h(7) = 4 + 3 = 7:
/// all met. With (C 2, D 2, T 4), (C 2, D 3, T 6): h(2) = 2, h(3) = 4 > 3: the first miss is
/// at 3 with demand 4.
#[test]
fn edf_constrained_by_hand() {
    let ok = edf::analyse(&[
        task("a", 2, 4).with_deadline(3),
        task("b", 3, 8).with_deadline(5),
    ]);
    assert!(
        matches!(ok.outcome, EdfOutcome::DemandMet { bound: 7, .. }),
        "{ok:?}"
    );
    let late = edf::analyse(&[
        task("a", 2, 4).with_deadline(2),
        task("b", 2, 6).with_deadline(3),
    ]);
    assert_eq!(
        late.outcome,
        EdfOutcome::DemandExceeds {
            deadline: 3,
            demand: 4
        }
    );
    let over = edf::analyse(&[task("a", 3, 4), task("b", 2, 6).with_deadline(12)]);
    assert_eq!(over.outcome, EdfOutcome::UtilisationAboveOne);
}

/// A processor that may lose `M` in all: the test is `h(t) + M <= t` at every deadline, with
/// the busy period `L = M + sum ceil(L / T_i) C_i`. Worked by hand:
/// - (2, 5), (4, 7), U = 34/35. M = 1: L goes 7, 9, 13, 15, 19, 21, 23, 27, 29, 33, 35 = L;
///   h(t) + 1 at the deadlines 5, 7, 10, 14, 15, 20, 21, 25, 28, 30, 35 is 3, 7, 9, 13, 15,
///   17, 21, 23, 27, 29, 35: met (7, 15, 21 and 35 exactly). M = 2: h(7) + 2 = 8 > 7, and
///   h(5) + 2 = 4 <= 5, so the first miss is at 7, h = 6.
/// - (C 2, D 3, T 4), (C 3, D 5, T 8), met with M = 0 above; M = 1: h(3) + 1 = 3 <= 3, h(5)
///   + 1 = 6 > 5: the first miss is at 5, h = 5.
#[test]
fn edf_with_a_mask_by_hand() {
    let pair = [task("t1", 2, 5), task("t2", 4, 7)];
    let met = edf::analyse_masked(&pair, 1);
    assert!(
        matches!(met.outcome, EdfOutcome::DemandMet { bound: 35, .. }),
        "{met:?}"
    );
    assert_eq!(met.masked, 1);
    assert_eq!(
        edf::analyse_masked(&pair, 2).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 7,
            demand: 6
        }
    );
    let constrained = [
        task("a", 2, 4).with_deadline(3),
        task("b", 3, 8).with_deadline(5),
    ];
    assert_eq!(
        edf::analyse_masked(&constrained, 1).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 5,
            demand: 5
        }
    );
    // M = 0 is the plain test.
    assert_eq!(edf::analyse_masked(&pair, 0), edf::analyse(&pair));
}

/// At U = 1 a mask never lets the busy period end; the slack `t - h(t)` repeats every H from
/// D_max on. (C 10, T 10, D 20): h(20 + 10k) = 10 + 10k, a slack of 10 at every deadline, so
/// M = 10 is met (up to D_max + H = 30) and M = 11 misses at 20 (h = 10). Implicit deadlines
/// at U = 1 always miss with a mask: (1, 2), (1, 2) with M = 1 at t = 2, h = 2.
#[test]
fn edf_at_full_utilisation_with_a_mask() {
    let late = [task("late", 10, 10).with_deadline(20)];
    assert!(
        matches!(
            edf::analyse_masked(&late, 10).outcome,
            EdfOutcome::DemandMet { bound: 30, .. }
        ),
        "{:?}",
        edf::analyse_masked(&late, 10)
    );
    assert_eq!(
        edf::analyse_masked(&late, 11).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 20,
            demand: 10
        }
    );
    // U = 2/3 + 1/6 + 1/6 = 1, whose terms each round down in 2^-64 units, so the busy-period
    // search must see U = 1 exactly (taken for U < 1 with M = 1, it jumped to near 2^63 and
    // then crawled one unit a step). (2, 3, D 6), (1, 6, D 12) twice: at the deadlines 6, 9,
    // 12, 15, 18 = D_max + H, h = 2, 4, 8, 10, 14, a least slack of 4, so M = 1 and M = 4 are
    // met and M = 5 misses at 6 (h = 2).
    let thirds = [
        task("a", 2, 3).with_deadline(6),
        task("b", 1, 6).with_deadline(12),
        task("c", 1, 6).with_deadline(12),
    ];
    for masked in [1, 4] {
        let met = edf::analyse_masked(&thirds, masked);
        assert!(
            matches!(met.outcome, EdfOutcome::DemandMet { bound: 18, .. }),
            "{met:?}"
        );
    }
    assert_eq!(
        edf::analyse_masked(&thirds, 5).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 6,
            demand: 2
        }
    );
    let implicit = [task("a", 1, 2), task("b", 1, 2)];
    assert_eq!(
        edf::analyse_masked(&implicit, 1).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 2,
            demand: 2
        }
    );
    // U = 1 with coprime periods near 2^33 (gcd of two odd numbers 8 apart is 1): H passes
    // u64, so no verdict rather than a guess.
    let coprime = [
        task("p", (1 << 33) - 9, (1 << 33) - 9).with_deadline(1 << 34),
        task("q", 0, (1 << 33) - 1),
    ];
    let endless = edf::analyse_masked(&coprime, 1);
    assert_eq!(endless.outcome, EdfOutcome::EndlessBusyPeriod);
    assert!(!endless.schedulable(), "{endless:?}");
}

/// Jobs released once (scripts run once through) add their work to the demand of windows at
/// least as long as their deadline, not to every window. By hand:
/// - a (C 4, T 10, D 5), b (9, 20) and a job of 5 due within 40: U = 17/20, the busy period L
///   = 5 + ceil(L / 10) 4 + ceil(L / 20) 9 goes 18, 22, 35, 39 = L, and h at the deadlines 5,
///   15, 20, 25, 35 is 4, 8, 17, 21, 25: met (the job's deadline, 40, is past L). As a lump
///   in every window (`M = 5`) the same set misses at 5, h = 4;
/// - a and a job of 3 due within 6: h(6) = 4 + 3 = 7 > 6, a true miss (released with a's
///   job, the job runs after a's 4 and ends at 7);
/// - at U = 1 the jobs' work counts in every window: (1, 2) twice and a job of 1 due within
///   100 miss at 2 as they do with M = 1 (h(2) + 1 = 3 > 2).
#[test]
fn edf_with_jobs_released_once_by_hand() {
    let pair = [task("a", 4, 10).with_deadline(5), task("b", 9, 20)];
    let job = |work, deadline| edf::OneShot { work, deadline };
    let met = edf::analyse_with_one_shots(&pair, &[job(5, 40)], 0);
    assert!(
        matches!(met.outcome, EdfOutcome::DemandMet { bound: 39, .. }),
        "{met:?}"
    );
    assert_eq!(
        edf::analyse_masked(&pair, 5).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 5,
            demand: 4
        }
    );
    assert_eq!(
        edf::analyse_with_one_shots(&pair[..1], &[job(3, 6)], 0).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 6,
            demand: 7
        }
    );
    let full = [task("f", 1, 2), task("g", 1, 2)];
    let lumped = edf::analyse_with_one_shots(&full, &[job(1, 100)], 0);
    assert_eq!(lumped, edf::analyse_masked(&full, 1));
    assert_eq!(
        lumped.outcome,
        EdfOutcome::DemandExceeds {
            deadline: 2,
            demand: 2
        }
    );
    assert_eq!(
        edf::analyse_with_one_shots(&pair, &[], 3),
        edf::analyse_masked(&pair, 3)
    );
}

/// Release jitter under EDF (Spuri): a job released up to J after its arrival is still due
/// D after it, so it has D - J. By hand, a (C 2, T 5, D 5, J 2) and b (2, 5): U = 4/5, the
/// busy period is 4, and h at the one deadline below it, 3 (a's), is 2: met. With J = 4 a
/// is due 1 after its latest release: h(1) = 2 > 1. With J = 7 > D a job that arrived 7
/// before 0 and was released at 0 is due by then: h(0) = 2 > 0, the first failure at 0.
#[test]
fn edf_with_release_jitter_by_hand() {
    let with_jitter = |jitter| {
        let mut a = task("a", 2, 5);
        a.jitter = jitter;
        vec![a, task("b", 2, 5)]
    };
    let met = edf::analyse(&with_jitter(2));
    assert!(
        matches!(met.outcome, EdfOutcome::DemandMet { bound: 4, .. }),
        "{met:?}"
    );
    assert_eq!(
        edf::analyse(&with_jitter(4)).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 1,
            demand: 2
        }
    );
    assert_eq!(
        edf::analyse(&with_jitter(7)).outcome,
        EdfOutcome::DemandExceeds {
            deadline: 0,
            demand: 2
        }
    );
    // a's jobs due by 3: floor((3 + 7 - 5) / 5) + 1 = 2; by 5, 2 as well, and b's first.
    assert_eq!(edf::demand(&with_jitter(7), 3), 4);
    assert_eq!(edf::demand(&with_jitter(7), 5), 6);
}

/// What the QPA properties check against: the first `t` of `window` with `demand(t) + masked
/// > t` is `a`'s first miss, with its demand, and without one `a` is schedulable.
fn first_miss_agrees(
    a: &edf::EdfAnalysis,
    window: std::ops::RangeInclusive<u64>,
    masked: u64,
    demand: impl Fn(u64) -> u128,
) -> Result<(), TestCaseError> {
    match window
        .into_iter()
        .find(|&t| demand(t) + masked as u128 > t as u128)
    {
        None => prop_assert!(a.schedulable(), "{:?}", a),
        Some(t) => prop_assert_eq!(
            a.outcome,
            EdfOutcome::DemandExceeds {
                deadline: t,
                demand: demand(t) as u64
            }
        ),
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn hyperperiod(tasks: &[Task]) -> u64 {
    tasks.iter().fold(1, |h, t| h / gcd(h, t.period) * t.period)
}

/// U <= 1 exactly: sum C_i H / T_i <= H.
fn fits(tasks: &[Task]) -> bool {
    let h = hyperperiod(tasks);
    tasks.iter().map(|t| t.wcet * (h / t.period)).sum::<u64>() <= h
}

/// A reference simulator: preemptive fixed priority (index 0 most important), synchronous
/// release at 0, unit time steps, jobs of one task in release order; a job that gets the
/// processor with at most its final region left runs to completion; a lower-priority critical
/// section holds the processor for the first `blocking` units. Returns each task's worst
/// response over the jobs released in the first hyperperiod.
fn simulate_fixed_priority(tasks: &[Task], blocking: u64) -> Vec<u64> {
    let h = hyperperiod(tasks);
    // Per task: remaining work of pending jobs (with release times), in order.
    let mut pending: Vec<std::collections::VecDeque<(u64, u64)>> =
        vec![Default::default(); tasks.len()];
    let mut worst = vec![0u64; tasks.len()];
    let mut locked: Option<usize> = None;
    let mut time = 0u64;
    loop {
        let outstanding = pending
            .iter()
            .any(|q| q.iter().any(|&(release, _)| release < h));
        if time >= h && !outstanding {
            return worst;
        }
        // Releases go on while they can still delay a job of the first hyperperiod.
        for (i, t) in tasks.iter().enumerate() {
            if time.is_multiple_of(t.period) {
                pending[i].push_back((time, t.wcet));
            }
        }
        // The blocker, then a job in its final non-preemptive region, keep the processor.
        let chosen = if time < blocking {
            None
        } else {
            locked.or_else(|| pending.iter().position(|q| !q.is_empty()))
        };
        if let Some(i) = chosen {
            let job = pending[i].front_mut().unwrap();
            if job.1 <= tasks[i].final_region {
                locked = Some(i);
            }
            job.1 -= 1;
            if job.1 == 0 {
                locked = None;
                let (release, _) = pending[i].pop_front().unwrap();
                if release < h {
                    worst[i] = worst[i].max(time + 1 - release);
                }
            }
        }
        time += 1;
    }
}

fn small_set() -> impl Strategy<Value = Vec<Task>> {
    let periods = prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]);
    prop::collection::vec((periods, 1u64..6), 1..5).prop_map(|raw| {
        raw.iter()
            .enumerate()
            .map(|(i, &(period, c))| task(&format!("t{i}"), c.min(period), period))
            .collect()
    })
}

proptest! {
    /// RTA's worst response equals the worst the simulator sees from the synchronous release
    /// over the hyperperiod, for any order, whenever U <= 1 (responses may exceed periods:
    /// the arbitrary-deadline busy window). Deadlines are set far out so RTA never stops early.
    #[test]
    fn rta_equals_simulation(mut tasks in small_set()) {
        // Keep U <= 1 by dropping the last tasks (one task always fits: C <= T).
        while !fits(&tasks) {
            tasks.pop();
        }
        let far: Vec<Task> = tasks.iter().map(|t| t.clone().with_deadline(10_000)).collect();
        let simulated = simulate_fixed_priority(&far, 0);
        for (i, sim) in simulated.iter().enumerate() {
            let a = response_time(&far, i).unwrap();
            prop_assert!(a.schedulable());
            prop_assert_eq!(a.response, *sim, "task {}", i);
        }
        // And the verdict against constrained deadlines D = R and D = R - 1.
        for i in 0..tasks.len() {
            let r = simulated[i];
            let mut at = far.clone();
            at[i].deadline = r;
            prop_assert!(response_time(&at, i).unwrap().schedulable());
            if r > 1 {
                at[i].deadline = r - 1;
                prop_assert!(!response_time(&at, i).unwrap().schedulable());
            }
        }
    }

    /// At level utilisation exactly 1 with blocking the busy window never ends; RTA examines
    /// one hyperperiod's jobs of the lowest task, which must give the worst response the
    /// simulator sees with the blocker at the start, and refute a deadline one below it. The
    /// lowest task `(H / d, S / d)` fills the slack `S` of the others over their hyperperiod
    /// `H` (`d = gcd(S, H)`), so `d` of its jobs decide.
    #[test]
    fn endless_window_rta_equals_simulation(mut tasks in small_set(), blocking in 1u64..4) {
        while !fits(&tasks) {
            tasks.pop();
        }
        let h = hyperperiod(&tasks);
        let used: u64 = tasks.iter().map(|t| t.wcet * (h / t.period)).sum();
        prop_assume!(used < h);
        let jobs = gcd(h - used, h);
        tasks.push(
            task("fill", (h - used) / jobs, h / jobs)
                .with_blocking(blocking)
                .with_deadline(10_000),
        );
        let last = tasks.len() - 1;
        let simulated = simulate_fixed_priority(&tasks, blocking);
        let a = response_time(&tasks, last).unwrap();
        prop_assert_eq!(a.outcome, Outcome::Schedulable);
        prop_assert_eq!((a.busy_window, a.jobs_examined), (None, jobs));
        prop_assert_eq!(a.response, simulated[last]);
        tasks[last].deadline = a.response - 1;
        let refuted = response_time(&tasks, last).unwrap();
        prop_assert!(matches!(refuted.outcome, Outcome::Misses { .. }), "{:?}", refuted);
    }

    /// With a final non-preemptive region on the lowest task only (its blocking is 0, so the
    /// synchronous release is its critical instant), the limited-preemptive RTA of that task
    /// equals the simulated worst over the hyperperiod; every other task's RTA (blocked by the
    /// region's whole length, the continuous-time bound) is at least what the simulator sees.
    #[test]
    fn limited_preemptive_rta_against_simulation(mut tasks in small_set(), region in 1u64..6) {
        while !fits(&tasks) {
            tasks.pop();
        }
        let last = tasks.len() - 1;
        let q = region.min(tasks[last].wcet);
        tasks[last].final_region = q;
        let far: Vec<Task> = tasks.iter().map(|t| t.clone().with_deadline(10_000)).collect();
        let simulated = simulate_fixed_priority(&far, 0);
        let lowest = response_time(&far, last).unwrap();
        prop_assert!(lowest.schedulable());
        prop_assert_eq!(lowest.response, simulated[last]);
        for (i, sim) in simulated.iter().enumerate().take(last) {
            let a = response_time(&far, i).unwrap();
            prop_assert!(a.response >= *sim, "task {}: {} < {}", i, a.response, sim);
        }
    }

    /// QPA agrees with the demand criterion checked at every integer t up to H + max D.
    #[test]
    fn qpa_equals_exhaustive_demand(
        raw in prop::collection::vec(
            (prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]), 1u64..6, 1u64..25),
            1..5,
        )
    ) {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(period, c, d))| task(&format!("t{i}"), c.min(period), period).with_deadline(d))
            .collect();
        let a = edf::analyse(&tasks);
        if !fits(&tasks) {
            prop_assert_eq!(a.outcome, EdfOutcome::UtilisationAboveOne);
            return Ok(());
        }
        let horizon = hyperperiod(&tasks) + tasks.iter().map(|t| t.deadline).max().unwrap();
        first_miss_agrees(&a, 1..=horizon, 0, |t| edf::demand(&tasks, t))?;
    }

    /// With a mask M, the verdict and the first miss are those of `h(t) + M <= t` checked at
    /// every integer t from the first deadline up to H + max D (U = 1 included).
    #[test]
    fn masked_qpa_equals_exhaustive_demand(
        raw in prop::collection::vec(
            (prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]), 1u64..6, 1u64..25),
            1..5,
        ),
        masked in 0u64..6,
    ) {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(period, c, d))| task(&format!("t{i}"), c.min(period), period).with_deadline(d))
            .collect();
        let a = edf::analyse_masked(&tasks, masked);
        if !fits(&tasks) {
            prop_assert_eq!(a.outcome, EdfOutcome::UtilisationAboveOne);
            return Ok(());
        }
        let d_min = tasks.iter().map(|t| t.deadline).min().unwrap();
        let horizon = hyperperiod(&tasks) + tasks.iter().map(|t| t.deadline).max().unwrap();
        first_miss_agrees(&a, d_min..=horizon, masked, |t| edf::demand(&tasks, t))?;
    }

    /// With release jitter, the verdict and the first miss are those of the demand criterion
    /// with `h(t) = sum max(0, floor((t + J - D) / T) + 1) C` checked at every integer t from
    /// the first deadline up to H + max D (the deadlines D - J from the latest release; U = 1
    /// included), with and without a mask.
    #[test]
    fn qpa_with_jitter_equals_exhaustive_demand(
        raw in prop::collection::vec(
            (prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]), 1u64..6, 1u64..25, 0u64..12),
            1..5,
        ),
        masked in prop::sample::select(vec![0u64, 0, 1, 3]),
    ) {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(period, c, d, jitter))| {
                let mut t = task(&format!("t{i}"), c.min(period), period).with_deadline(d);
                t.jitter = jitter;
                t
            })
            .collect();
        let a = edf::analyse_masked(&tasks, masked);
        if !fits(&tasks) {
            prop_assert_eq!(a.outcome, EdfOutcome::UtilisationAboveOne);
            return Ok(());
        }
        let demand = |t: u64| -> u128 {
            tasks
                .iter()
                .filter(|x| t + x.jitter >= x.deadline)
                .map(|x| ((t + x.jitter - x.deadline) / x.period + 1) as u128 * x.wcet as u128)
                .sum()
        };
        prop_assert_eq!(edf::demand(&tasks, 7), demand(7));
        let horizon = hyperperiod(&tasks) + tasks.iter().map(|t| t.deadline).max().unwrap();
        // From the first instant a job may be due (a mask alone fails nothing before it).
        let d_min = tasks.iter().map(|t| t.deadline.saturating_sub(t.jitter)).min().unwrap();
        first_miss_agrees(&a, d_min..=horizon, masked, demand)?;
    }

    /// With jobs released once, the verdict and the first miss are those of
    /// `h(t) + sum_{D_j <= t} W_j + M <= t` checked at every integer t from the first
    /// deadline up to the bound past which no miss can lie when U < 1,
    /// `(sum C_i + sum W_j + M) / (1 - U)` (as `h(t) <= U t + sum C_i`); at U = 1 the jobs'
    /// work counts as a mask.
    #[test]
    fn one_shot_qpa_equals_exhaustive_demand(
        raw in prop::collection::vec(
            (prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]), 1u64..6, 1u64..25),
            1..4,
        ),
        jobs in prop::collection::vec((0u64..8, 1u64..40), 1..4),
        masked in 0u64..4,
    ) {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(period, c, d))| task(&format!("t{i}"), c.min(period), period).with_deadline(d))
            .collect();
        let jobs: Vec<edf::OneShot> = jobs
            .iter()
            .map(|&(work, deadline)| edf::OneShot { work, deadline })
            .collect();
        let a = edf::analyse_with_one_shots(&tasks, &jobs, masked);
        if !fits(&tasks) {
            prop_assert_eq!(a.outcome, EdfOutcome::UtilisationAboveOne);
            return Ok(());
        }
        let h = hyperperiod(&tasks);
        let load: u64 = tasks.iter().map(|t| t.wcet * (h / t.period)).sum();
        let work: u64 = jobs.iter().map(|j| j.work).sum();
        if load == h {
            prop_assert_eq!(a, edf::analyse_masked(&tasks, masked + work));
            return Ok(());
        }
        // (sum C + W + M) / (1 - U) with U = load / h.
        let wcets: u64 = tasks.iter().map(|t| t.wcet).sum();
        let horizon = (wcets + work + masked) * h / (h - load) + 1;
        prop_assume!(horizon <= 50_000);
        let demand = |t: u64| {
            edf::demand(&tasks, t)
                + jobs.iter().filter(|j| j.deadline <= t).map(|j| j.work as u128).sum::<u128>()
        };
        let d_min = tasks
            .iter()
            .map(|t| t.deadline)
            .chain(jobs.iter().map(|j| j.deadline))
            .min()
            .unwrap();
        first_miss_agrees(&a, d_min..=horizon, masked, demand)?;
    }

    /// A task's analysis against the terms of the tasks above it summed by rate (as the CLI
    /// keeps them, level by level) is its analysis against those tasks one by one: the same
    /// response, verdict, busy window and jobs, with jitter, blocking, final regions,
    /// constrained and arbitrary deadlines and utilisation up to and past 1.
    #[test]
    fn summed_terms_give_the_same_analysis(
        raw in prop::collection::vec(
            (
                prop::sample::select(vec![2u64, 3, 4, 6, 12]),
                1u64..5,
                1u64..30,
                0u64..3,
                0u64..3,
            ),
            1..6,
        ),
        blocking in 0u64..4,
    ) {
        let mut tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(period, c, d, jitter, region))| {
                let mut t = task(&format!("t{i}"), c.min(period), period).with_deadline(d);
                t.jitter = jitter;
                t.final_region = region.min(t.wcet);
                t
            })
            .collect();
        let last = tasks.len() - 1;
        tasks[last].blocking = blocking;
        // Lower regions are the caller's to fold into B: only the last task is compared.
        let one_by_one = response_time(&tasks, last).unwrap();
        let mut sums = RateSums::default();
        for higher in &tasks[..last] {
            sums.add(higher.term());
        }
        let summed = response_time_among(&tasks[last], sums.terms());
        prop_assert_eq!(summed, one_by_one);
    }

    /// OPA finds an order whenever an exhaustive search over all orders does.
    #[test]
    fn opa_is_optimal(tasks in small_set(), deadlines in prop::collection::vec(1u64..12, 4)) {
        let tasks: Vec<Task> = tasks
            .into_iter()
            .zip(&deadlines)
            .map(|(t, &d)| { let d = d.max(t.wcet); t.with_deadline(d) })
            .collect();
        let n = tasks.len();
        let mut order: Vec<usize> = (0..n).collect();
        let mut any = false;
        permute(&mut order, 0, &mut |o| {
            any |= response_times(&ordered(&tasks, o)).iter().all(|a| a.schedulable());
        });
        match audsley(&tasks) {
            Ok(o) => {
                prop_assert!(any);
                prop_assert!(response_times(&ordered(&tasks, &o)).iter().all(|a| a.schedulable()));
            }
            Err(_) => prop_assert!(!any),
        }
    }
}

fn permute(order: &mut Vec<usize>, k: usize, visit: &mut dyn FnMut(&[usize])) {
    if k == order.len() {
        visit(order);
        return;
    }
    for i in k..order.len() {
        order.swap(k, i);
        permute(order, k + 1, visit);
        order.swap(k, i);
    }
}

proptest! {
    /// No input panics: zero periods, deadlines and costs, huge values, jitter and regions
    /// longer than the job (which `validate` refuses) all get an answer.
    #[test]
    fn any_input_gets_an_answer(
        raw in prop::collection::vec(
            (
                prop_oneof![Just(0u64), 0u64..20, Just(u64::MAX)],
                prop_oneof![Just(0u64), 1u64..20, Just(u64::MAX)],
                prop_oneof![Just(0u64), 0u64..40, Just(u64::MAX)],
                0u64..5,
                0u64..5,
            ),
            0..4,
        )
    ) {
        let tasks: Vec<Task> = raw
            .iter()
            .enumerate()
            .map(|(i, &(c, t, d, j, q))| Task {
                name: format!("t{i}"),
                wcet: c,
                period: t,
                deadline: d,
                jitter: j,
                blocking: j,
                final_region: q,
            })
            .collect();
        let _ = response_times(&tasks);
        let _ = edf::analyse(&tasks);
        let _ = audsley(&tasks);
    }
}
