//! Bertogna and Cirinei's response-time analysis for global fixed priority
//! (`bulwark_analysis::global_fp`), checked by properties on small random task sets against
//! two things written here from scratch, sharing no code with the analysis:
//!
//! - a discrete-time simulation of global fixed priority under synchronous periodic release
//!   (every task released at 0 and then every `T`), over the hyperperiod. Synchronous release
//!   is not the worst case for global fixed priority, so only one direction is checked: a
//!   task the analysis bounds by `R` never takes longer than `R` in the simulation, and a set
//!   it shows schedulable misses no deadline there;
//! - the plain iteration of the analysis (one step at a time from `R = C`, no skipping), whose
//!   bounds the analysis must equal exactly.
//!
//! Periods come from {4, 5, 6, 8, 10, 12} units (hyperperiod at most 120), one unit being a
//! nanosecond for the analysis.

mod common;

use std::collections::VecDeque;

use common::{draw_set, hyperperiod, SplitMix, PERIODS};

use bulwark_analysis::global_fp::{rta, rta_masked, FpTask, Response};
use bulwark_core::{Duration, Priority};
use proptest::prelude::*;

/// `(C, T, priority)`, `D = T`, in units.
type Task = (u64, u64, u8);

/// Positions from the most important task to the least: larger priority first, then the
/// earlier position (the clustered scheduler's ties by reservation id).
fn by_priority(tasks: &[Task]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by(|&a, &b| tasks[b].2.cmp(&tasks[a].2).then(a.cmp(&b)));
    order
}

/// Global fixed priority on `m` cores, every task released at 0 and every `T` after, over
/// one hyperperiod: per task, its largest response time, or `None` if a job of it missed its
/// deadline. In each unit the (up to) `m` most important tasks with a pending job run their
/// oldest pending job for that unit; the schedule repeats after the hyperperiod when nothing
/// is pending then (a job still pending at the end has missed its deadline).
fn simulate(tasks: &[Task], m: usize) -> Vec<Option<u64>> {
    simulate_masked(tasks, m, None)
}

/// [`simulate`] with one core masked over `[start, start + length)` (`mask`): the tasks get
/// `m - 1` cores in those units.
fn simulate_masked(tasks: &[Task], m: usize, mask: Option<(u64, u64)>) -> Vec<Option<u64>> {
    let hyperperiod = hyperperiod(tasks.iter().map(|task| task.1));
    let order = by_priority(tasks);
    // Per task: pending jobs as (release, remaining).
    let mut pending: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); tasks.len()];
    let mut worst: Vec<Option<u64>> = vec![Some(0); tasks.len()];
    for now in 0..hyperperiod {
        for (i, &(c, t, _)) in tasks.iter().enumerate() {
            if now % t == 0 {
                if !pending[i].is_empty() {
                    // The previous job's deadline is now and it has work left.
                    worst[i] = None;
                }
                if c > 0 {
                    pending[i].push_back((now, c));
                }
            }
        }
        let masked = mask.is_some_and(|(start, length)| (start..start + length).contains(&now));
        let free = if masked { m - 1 } else { m };
        let mut running = 0;
        for &i in &order {
            if running == free {
                break;
            }
            let Some(job) = pending[i].front_mut() else {
                continue;
            };
            running += 1;
            job.1 -= 1;
            if job.1 == 0 {
                let (release, _) = pending[i].pop_front().expect("a job");
                let response = now + 1 - release;
                if response > tasks[i].1 {
                    worst[i] = None;
                }
                if let Some(w) = worst[i].as_mut() {
                    *w = (*w).max(response);
                }
            }
        }
    }
    for (i, jobs) in pending.iter().enumerate() {
        if !jobs.is_empty() {
            worst[i] = None;
        }
    }
    worst
}

/// What the plain iteration gives a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plain {
    Bounded(u64),
    Exceeds,
    NotComputed,
}

/// The analysis as the paper writes it, one step at a time: `R <- C + floor((1/m) sum over
/// hp of min(W_i(R), R - C + 1))` from `R = C`, `W_i(L) = N C_i + min(C_i, L + R_i - C_i -
/// N T_i)`, `N = floor((L + R_i - C_i) / T_i)`; a task with fewer than `m` above it has
/// `R = C`; the tasks below the first failure are not computed.
fn plain(tasks: &[Task], m: usize) -> Vec<Plain> {
    plain_masked(tasks, m, None)
}

/// [`plain`] with one termination's mask of `mask` units: one more term `min(M, R - C + 1)`,
/// and one more entity above every task for the `R = C` rule.
fn plain_masked(tasks: &[Task], m: usize, mask: Option<u64>) -> Vec<Plain> {
    let mut result = vec![Plain::NotComputed; tasks.len()];
    let mut above: Vec<(u64, u64, u64)> = Vec::new();
    for (rank, k) in by_priority(tasks).into_iter().enumerate() {
        let (c, d, _) = tasks[k];
        let mut r = c;
        let bounded = if rank + usize::from(mask.is_some()) < m {
            c <= d
        } else {
            loop {
                if r > d {
                    break false;
                }
                let mut sum = 0;
                for &(c_i, t_i, r_i) in &above {
                    let n = (r + r_i - c_i) / t_i;
                    let w = n * c_i + c_i.min(r + r_i - c_i - n * t_i);
                    sum += w.min(r - c + 1);
                }
                if let Some(mask) = mask {
                    sum += mask.min(r - c + 1);
                }
                let next = c + sum / m as u64;
                if next == r {
                    break true;
                }
                r = next;
            }
        };
        if !bounded {
            result[k] = Plain::Exceeds;
            break;
        }
        result[k] = Plain::Bounded(r);
        above.push((c, d, r));
    }
    result
}

fn as_fp_tasks(tasks: &[Task], scale: u64) -> Vec<FpTask> {
    tasks
        .iter()
        .map(|&(c, t, p)| FpTask {
            budget: Duration::from_nanos(c * scale),
            period: Duration::from_nanos(t * scale),
            priority: Priority(p),
            sporadic_server: false,
        })
        .collect()
}

/// 1 to 3 cores and 1 to 6 tasks, `T` from [`PERIODS`], `C` in `1..=ceil(T / 2)` (so that
/// about half the sets are shown schedulable), priorities 0 to 3 (so that ties are common).
fn task_set() -> impl Strategy<Value = (Vec<Task>, usize)> {
    let task = (0..PERIODS.len(), 0u8..4).prop_flat_map(|(period, priority)| {
        let t = PERIODS[period];
        (1..=t.div_ceil(2)).prop_map(move |budget| (budget, t, priority))
    });
    (proptest::collection::vec(task, 1..=6), 1usize..=3)
}

/// The checks of one set: the analysis equals the plain iteration, and what it bounds the
/// simulation respects.
fn check(tasks: &[Task], m: usize) -> Result<(), TestCaseError> {
    let analysis = rta(&as_fp_tasks(tasks, 1), m as u16);
    let reference = plain(tasks, m);
    let simulated = simulate(tasks, m);
    for (i, response) in analysis.responses.iter().enumerate() {
        match (response, reference[i]) {
            (Response::Bounded(r), Plain::Bounded(p)) => prop_assert_eq!(r.as_nanos(), p),
            (Response::Exceeds(r), Plain::Exceeds) => {
                prop_assert!(r.as_nanos() > tasks[i].1)
            }
            (Response::NotComputed, Plain::NotComputed) => {}
            (ours, theirs) => {
                prop_assert!(false, "task {}: {:?} against {:?}", i, ours, theirs)
            }
        }
        if let Response::Bounded(r) = response {
            // Lower-priority tasks never delay this one, so its bound holds whatever
            // happens below it.
            prop_assert!(
                simulated[i].is_some_and(|worst| worst <= r.as_nanos()),
                "task {} bounded by {} but simulated {:?}",
                i,
                r.as_nanos(),
                simulated[i]
            );
        }
    }
    if analysis.schedulable {
        prop_assert!(simulated.iter().all(Option::is_some), "{:?}", simulated);
    }
    // Scaled to milliseconds (the scale of real files, and where the analysis skips long
    // runs of one-nanosecond steps), the cap's `+ 1` is a nanosecond against units of a
    // million, so the analysis may show more; the scaled set's synchronous schedule is the
    // unit set's, scaled, so what it shows schedulable must still meet every deadline.
    let scaled = rta(&as_fp_tasks(tasks, 1_000_000), m as u16);
    if scaled.schedulable {
        prop_assert!(simulated.iter().all(Option::is_some), "{:?}", simulated);
    }
    Ok(())
}

proptest! {
    /// Any random set: the analysis's bounds equal the plain iteration's, each bound task's
    /// simulated responses stay within its bound, and a set shown schedulable (in units or
    /// scaled to milliseconds) misses no deadline in the simulation.
    #[test]
    fn what_the_analysis_shows_the_synchronous_simulation_meets((tasks, m) in task_set()) {
        check(&tasks, m)?;
    }
}

proptest! {
    /// A core masked for `M` units somewhere in the hyperperiod: the masked analysis equals
    /// the plain iteration with the mask's term, and bounds every task it bounds in the
    /// simulation with that mask (a set it shows schedulable misses nothing there).
    #[test]
    fn a_masked_core_stays_within_the_masked_analysis(
        (tasks, m) in task_set(),
        start in 0u64..120,
        length in 1u64..=6,
    ) {
        let hyperperiod = hyperperiod(tasks.iter().map(|task| task.1));
        let start = start % hyperperiod;
        let analysis = rta_masked(&as_fp_tasks(&tasks, 1), m as u16, &[Duration::from_nanos(length)]);
        let reference = plain_masked(&tasks, m, Some(length));
        let simulated = simulate_masked(&tasks, m, Some((start, length)));
        for (i, response) in analysis.responses.iter().enumerate() {
            match (response, reference[i]) {
                (Response::Bounded(r), Plain::Bounded(p)) => prop_assert_eq!(r.as_nanos(), p),
                (Response::Exceeds(_), Plain::Exceeds) => {}
                (Response::NotComputed, Plain::NotComputed) => {}
                (ours, theirs) => prop_assert!(false, "task {}: {:?} against {:?}", i, ours, theirs),
            }
            if let Response::Bounded(r) = response {
                prop_assert!(
                    simulated[i].is_some_and(|worst| worst <= r.as_nanos()),
                    "task {} bounded by {} but simulated {:?}", i, r.as_nanos(), simulated[i]
                );
            }
        }
        if analysis.schedulable {
            prop_assert!(simulated.iter().all(Option::is_some), "{:?}", simulated);
        }
    }
}

/// The masked analysis by hand, in units. One core, t1 (1, 4) above t2 (2, 6): unmasked R1 =
/// 1, R2 = 3. A mask of 2: t1 R = 1 + min(2, 1) = 2, then 1 + min(2, 2) = 3, fixed (3 <= 4);
/// t2: R = 2 + W1 + mask terms: at R = 2, cap 1: 1 + 1 = 2 -> 4; cap 3: W1(4) = 1 (N = 0,
/// min(1, 4 + 2 - 1)) -> 1, mask 2 -> 2 + 3 = 5; cap 4: W1(5) = N = floor(6/4) = 1, 1 +
/// min(1, 2) = 2 -> 2, mask 2 -> 2 + 4 = 6; cap 5: W1(6) = 1 + min(1, 3) = 2, mask 2 -> 6:
/// R2 = 6 <= 6. Two cores and one task (1, 4) with a mask: one entity above it on two cores,
/// so R = C = 1. With two masks of 2 (two terminations may mask both cores at once): cap 1,
/// 1 + 1 -> R = 2; cap 2, 2 + 2 -> R = 3; cap 3, still 2 + 2 -> R = 3. With two of 5: R
/// climbs 2, 3, 4, 5 > 4: not bounded (both cores masked for 5 at its release).
#[test]
fn the_masked_analysis_by_hand() {
    let units = |rta: bulwark_analysis::global_fp::Rta| -> Vec<Option<u64>> {
        rta.responses
            .iter()
            .map(|r| r.bound().map(Duration::as_nanos))
            .collect()
    };
    let pair = as_fp_tasks(&[(1, 4, 2), (2, 6, 1)], 1);
    assert_eq!(units(rta(&pair, 1)), [Some(1), Some(3)]);
    let two = [Duration::from_nanos(2)];
    assert_eq!(units(rta_masked(&pair, 1, &two)), [Some(3), Some(6)]);
    let alone = as_fp_tasks(&[(1, 4, 1)], 1);
    let five = Duration::from_nanos(5);
    assert_eq!(units(rta_masked(&alone, 2, &[five])), [Some(1)]);
    let two_of_two = [Duration::from_nanos(2); 2];
    assert_eq!(units(rta_masked(&alone, 2, &two_of_two)), [Some(3)]);
    assert_eq!(units(rta_masked(&alone, 2, &[five, five])), [None]);
    // Unbounded on one core: nothing is bounded; on two, one core is left.
    let lost = [Duration::MAX];
    assert!(!rta_masked(&alone, 1, &lost).schedulable);
    assert_eq!(units(rta_masked(&alone, 2, &lost)), [Some(1)]);
}

/// The property is not vacuous: over a fixed sweep of sets, a good share is shown
/// schedulable and the rest not, with ties and every core count among them.
#[test]
fn the_property_sees_both_verdicts() {
    let mut shown = [0usize; 2];
    let mut rng = SplitMix::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let (m, tasks) = draw_set(&mut rng);
        check(&tasks, m).unwrap_or_else(|e| panic!("{tasks:?} on {m}: {e}"));
        shown[usize::from(rta(&as_fp_tasks(&tasks, 1), m as u16).schedulable)] += 1;
    }
    eprintln!("shown schedulable / not: {} / {}", shown[1], shown[0]);
    assert!(shown[0] > 200 && shown[1] > 200, "{shown:?}");
}

/// The simulator itself, by hand: on 2 cores, (5, 6) twice above (3, 6): both cores run the
/// first two over [0, 5), the third gets [5, 6) only and misses at 6.
#[test]
fn the_simulator_by_hand() {
    let tasks = [(5, 6, 2), (5, 6, 2), (3, 6, 1)];
    assert_eq!(simulate(&tasks, 2), [Some(5), Some(5), None]);
    // One core, (1, 4) above (2, 4): responses 1 and 3 (run [1, 3)).
    assert_eq!(simulate(&[(1, 4, 1), (2, 4, 1)], 1), [Some(1), Some(3)]);
    // Equal priorities: the earlier first.
    assert_eq!(simulate(&[(2, 4, 1), (1, 4, 1)], 1), [Some(2), Some(3)]);
}
