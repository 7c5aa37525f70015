//! Bertogna, Cirinei and Lipari's global EDF test with masked cores
//! (`bulwark_analysis::global_edf::bcl`), checked against a discrete-time simulation of global
//! EDF written here from scratch, sharing no code with the analysis: every task released at 0
//! and then every `T` (implicit deadlines), over the hyperperiod, with one core masked over a
//! random stretch. Synchronous release is not the worst case for global EDF, so only one
//! direction is checked: a set the test shows schedulable with a mask misses no deadline in
//! the simulation with that mask.
//!
//! Periods come from {4, 5, 6, 8, 10, 12} units (hyperperiod at most 120), one unit being a
//! nanosecond for the analysis.

mod common;

use std::collections::VecDeque;

use common::{draw_set, hyperperiod, SplitMix, PERIODS};

use bulwark_analysis::global_edf::bcl;
use bulwark_core::Duration;
use proptest::prelude::*;

/// `(C, T)`, `D = T`, in units.
type Task = (u64, u64);

/// Global EDF on `m` cores, `m - 1` over `[start, start + length)` of `mask`: in each unit
/// the pending jobs with the earliest deadlines (ties: the lower task index) run one unit
/// each. True when no job misses its deadline within the hyperperiod (a job pending at its
/// deadline has missed it; every deadline falls within the hyperperiod).
fn meets_every_deadline(tasks: &[Task], m: usize, mask: Option<(u64, u64)>) -> bool {
    let hyperperiod = hyperperiod(tasks.iter().map(|task| task.1));
    // Per task: pending jobs as (deadline, remaining), oldest first.
    let mut pending: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); tasks.len()];
    for now in 0..hyperperiod {
        for (i, &(c, t)) in tasks.iter().enumerate() {
            if now % t == 0 {
                if !pending[i].is_empty() {
                    return false;
                }
                pending[i].push_back((now + t, c));
            }
        }
        let masked = mask.is_some_and(|(start, length)| (start..start + length).contains(&now));
        let free = if masked { m - 1 } else { m };
        let mut ready: Vec<(u64, usize)> = pending
            .iter()
            .enumerate()
            .filter_map(|(i, jobs)| jobs.front().map(|&(deadline, _)| (deadline, i)))
            .collect();
        ready.sort_unstable();
        for &(_, i) in ready.iter().take(free) {
            let job = pending[i].front_mut().expect("a pending job");
            job.1 -= 1;
            if job.1 == 0 {
                pending[i].pop_front();
            }
        }
    }
    pending.iter().all(VecDeque::is_empty)
}

fn as_pairs(tasks: &[Task]) -> Vec<(Duration, Duration)> {
    tasks
        .iter()
        .map(|&(c, t)| (Duration::from_nanos(c), Duration::from_nanos(t)))
        .collect()
}

/// 1 to 3 cores and 1 to 6 tasks, `T` from [`PERIODS`], `C` in `1..=ceil(T / 2)`.
fn task_set() -> impl Strategy<Value = (Vec<Task>, usize)> {
    let task = (0..PERIODS.len()).prop_flat_map(|period| {
        let t = PERIODS[period];
        (1..=t.div_ceil(2)).prop_map(move |budget| (budget, t))
    });
    (proptest::collection::vec(task, 1..=6), 1usize..=3)
}

proptest! {
    /// What the test shows schedulable with a mask of `length` (or none) meets every deadline
    /// in the simulation with one core masked that long from `start`.
    #[test]
    fn what_the_test_shows_the_masked_simulation_meets(
        (tasks, m) in task_set(),
        start in 0u64..120,
        length in 0u64..=6,
    ) {
        let hyperperiod = hyperperiod(tasks.iter().map(|task| task.1));
        let masks = if length == 0 { vec![] } else { vec![Duration::from_nanos(length)] };
        let test = bcl(&as_pairs(&tasks), m as u16, &masks);
        if test.schedulable {
            let mask = (length > 0).then_some((start % hyperperiod, length));
            prop_assert!(meets_every_deadline(&tasks, m, mask), "{:?}", test);
        }
    }
}

/// The property is not vacuous: over a fixed sweep of sets with a mask of 2, a good share is
/// shown schedulable and the rest not.
#[test]
fn the_property_sees_both_verdicts() {
    let mut shown = [0usize; 2];
    let mut rng = SplitMix::new(0x2545_f491_4f6c_dd1d);
    for _ in 0..2000 {
        let (m, drawn) = draw_set(&mut rng);
        let tasks: Vec<Task> = drawn.iter().map(|&(c, t, _)| (c, t)).collect();
        let test = bcl(&as_pairs(&tasks), m as u16, &[Duration::from_nanos(2)]);
        if test.schedulable {
            for start in 0..12 {
                assert!(
                    meets_every_deadline(&tasks, m, Some((start, 2))),
                    "{tasks:?} on {m}"
                );
            }
        }
        shown[usize::from(test.schedulable)] += 1;
    }
    eprintln!("shown schedulable / not: {} / {}", shown[1], shown[0]);
    assert!(shown[0] > 200 && shown[1] > 200, "{shown:?}");
}

/// By hand. Two cores, (3, 10) twice: for either, slack D - C + 1 = 8 and the other's W(10)
/// = 1 * 3 + min(3, 10 - 10) = 3, so 3 < 16; one mask of 20 adds min(20, 8): 11 < 16; two
/// add 16: 19 >= 16, not shown (both cores may be masked over the whole window). One core,
/// (2, 5) twice: slack 4, the other's W(5) = 2; a mask of 1 gives 3 < 4, one of 2 gives 4,
/// not shown, and the simulation agrees: masked over [0, 2) the second job ends at 6 > 5.
#[test]
fn the_test_by_hand() {
    let ns = Duration::from_nanos;
    let pair = as_pairs(&[(3, 10), (3, 10)]);
    assert!(bcl(&pair, 2, &[]).schedulable);
    assert!(bcl(&pair, 2, &[ns(20)]).schedulable);
    let two = bcl(&pair, 2, &[ns(20), ns(20)]);
    assert_eq!((two.schedulable, two.failing), (false, Some(0)));
    let tight = [(2, 5), (2, 5)];
    assert!(bcl(&as_pairs(&tight), 1, &[ns(1)]).schedulable);
    assert!(!bcl(&as_pairs(&tight), 1, &[ns(2)]).schedulable);
    assert!(meets_every_deadline(&tight, 1, Some((0, 1))));
    assert!(!meets_every_deadline(&tight, 1, Some((0, 2))));
    // An unbounded mask on one core leaves none; on two, one.
    assert!(!bcl(&as_pairs(&[(1, 4)]), 1, &[Duration::MAX]).schedulable);
    assert!(bcl(&as_pairs(&[(1, 4)]), 2, &[Duration::MAX]).schedulable);
    assert!(!bcl(&pair, 0, &[]).schedulable);
}
