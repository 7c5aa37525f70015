//! Schedules checked by hand: every job's release, first start and completion is asserted
//! against the timeline worked out in the comments.

mod common;

use bulwark_core::{Duration, Instant};
use bulwark_sim::Outcome;
use bulwark_spec::{Execution, PolicyKind, Step, TaskSpec};
use common::*;

/// Runs `tasks` on one core under `policy` until `horizon`, recording every job.
fn run_one_core(policy: PolicyKind, horizon: Duration, tasks: Vec<TaskSpec>) -> Outcome {
    run_jobs(&scenario(policy, 1, horizon, tasks))
}

/// A job released at `release` that first ran at `start` and completed by its deadline at `end`.
fn done(release: u64, start: u64, end: u64) -> Row {
    (release, Some(start), Some(end), false)
}

/// A job that completed at `end`, after its deadline.
fn late(release: u64, start: u64, end: u64) -> Row {
    (release, Some(start), Some(end), true)
}

/// A job still running at the horizon, its deadline not yet passed.
fn started(release: u64, start: u64) -> Row {
    (release, Some(start), None, false)
}

/// A job released but never started, its deadline not yet passed.
fn pending(release: u64) -> Row {
    (release, None, None, false)
}

/// Checks every job of task `i` against `expected[i]` (release, first start, completion,
/// missed, in ms), for every task in the scenario.
fn assert_timelines(o: &Outcome, expected: &[&[Row]]) {
    for (task, rows) in expected.iter().enumerate() {
        assert_eq!(rows_ms(o, task as u32), *rows, "jobs of task {task}");
    }
}

/// Liu & Layland's classic (C, T) = (2, 5), (4, 7), U = 0.971, under rate-monotonic priorities.
///
/// ```text
/// t:   0   2   5   7  8  10  12  14  15  17  20
/// t1:  [0,2]   [5,7]     [10,12]     [15,17] [20..
/// t2:      [2,5]    [7,8](misses 7) [8,10] [12,14] [14,15] [17,20]
/// ```
/// t2's first job runs 2-5 (3 units), is preempted by t1 at 5, resumes at 7 and completes at 8,
/// after its deadline 7: the first miss is at 7. Its second job (released 7) starts at 8, runs
/// 8-10 and 12-14 and meets deadline 14 exactly; its third (released 14) runs 14-15 and 17-20.
#[test]
fn rate_monotonic_misses_where_edf_does_not() {
    let o = run_one_core(
        PolicyKind::FixedPriority,
        ms(20),
        vec![
            periodic("t1", 0, Some(2), ms(2), ms(5), ms(0)),
            periodic("t2", 0, Some(1), ms(4), ms(7), ms(0)),
        ],
    );
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 2),
                done(5, 5, 7),
                done(10, 10, 12),
                done(15, 15, 17),
                started(20, 20),
            ],
            &[late(0, 2, 8), done(7, 8, 14), done(14, 14, 20)],
        ],
    );
    assert_eq!(o.tasks[1].misses, 1);
    assert_eq!(o.tasks[1].first_miss, Some(Instant::from_nanos(7_000_000)));
    assert_eq!(o.tasks[1].preemptions, 3, "preempted at 5, 10 and 15");
}

/// The same set under EDF (ties to the earlier activation):
///
/// ```text
/// t1: [0,2]  [6,8]  [12,14]  [15,17]  [20..
/// t2: [2,6]  [8,12]  [14,15] [17,20]
/// ```
/// At 5 t1's second job (deadline 10) does not preempt t2 (deadline 7); at 10 t1's third
/// (deadline 15) does not preempt t2's second (deadline 14); at 15 t1 (deadline 20) preempts
/// t2's third (deadline 21). No deadline is missed.
#[test]
fn edf_schedules_the_same_set_without_a_miss() {
    let o = run_one_core(
        PolicyKind::Edf,
        ms(20),
        vec![
            periodic("t1", 0, None, ms(2), ms(5), ms(0)),
            periodic("t2", 0, None, ms(4), ms(7), ms(0)),
        ],
    );
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 2),
                done(5, 6, 8),
                done(10, 12, 14),
                done(15, 15, 17),
                started(20, 20),
            ],
            &[done(0, 2, 6), done(7, 8, 12), done(14, 14, 20)],
        ],
    );
    assert_eq!(o.tasks[0].misses + o.tasks[1].misses, 0);
}

/// Harmonic set at utilisation exactly 1.0 under fixed priority: (2,4), (2,8), (4,16).
///
/// ```text
/// t:  0  2  4  6  8  10 12 14 16
/// t1: [0,2] [4,6] [8,10] [12,14] [16..
/// t2:    [2,4]         [10,12]
/// t3:          [6,8]           [14,16]
/// ```
/// t3 gets the slots 6-8 and 14-16 and completes at 16, exactly its deadline: no miss, and the
/// processor never idles.
#[test]
fn fixed_priority_at_full_utilisation_meets_every_deadline() {
    let o = run_one_core(
        PolicyKind::FixedPriority,
        ms(16),
        vec![
            periodic("t1", 0, Some(3), ms(2), ms(4), ms(0)),
            periodic("t2", 0, Some(2), ms(2), ms(8), ms(0)),
            periodic("t3", 0, Some(1), ms(4), ms(16), ms(0)),
        ],
    );
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 2),
                done(4, 4, 6),
                done(8, 8, 10),
                done(12, 12, 14),
                started(16, 16),
            ],
            &[done(0, 2, 4), done(8, 10, 12), pending(16)],
            &[done(0, 6, 16), pending(16)],
        ],
    );
    assert_eq!(o.cores[0].busy_ns, 16_000_000, "never idle at U = 1");
}

/// EDF at utilisation exactly 1.0 with a deadline tie: (2,4), (3,6).
///
/// ```text
/// t:  0  2  5  7  10 12
/// t1: [0,2]  [5,7]  [10,12]
/// t2:    [2,5]  [7,10]
/// ```
/// At 8, t1's third job (deadline 12) ties with the running t2 (deadline 12, activated at 6):
/// the earlier activation keeps the processor, so t2 completes at 10 and t1 at 12.
#[test]
fn edf_at_full_utilisation_keeps_the_earlier_of_equal_deadlines() {
    let o = run_one_core(
        PolicyKind::Edf,
        ms(12),
        vec![
            periodic("t1", 0, None, ms(2), ms(4), ms(0)),
            periodic("t2", 0, None, ms(3), ms(6), ms(0)),
        ],
    );
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 2),
                done(4, 5, 7),
                done(8, 10, 12),
                started(12, 12),
            ],
            &[done(0, 2, 5), done(6, 7, 10), pending(12)],
        ],
    );
    assert_eq!(o.tasks[1].preemptions, 0);
}

/// Two cores under fixed priority, partitioned; core 1 has an offset task and a script.
///
/// ```text
/// core 0: a (2,5) prio 2; b (3,10) prio 1
///   a: [0,2] [5,7] [10,12] [15..     b: [2,5] [12,15]
/// core 1: c (4,8) offset 1, prio 5; d script prio 6, deadline 2: run 1, sleep-for 2, run 1
///   d: [0,1] sleeps to 3, [3,4], exits   c: [1,3] [4,6] [9,13]
/// ```
#[test]
fn two_cores_run_their_partitions_independently() {
    let o = run_jobs(&scenario(
        PolicyKind::FixedPriority,
        2,
        ms(15),
        vec![
            periodic("a", 0, Some(2), ms(2), ms(5), ms(0)),
            periodic("b", 0, Some(1), ms(3), ms(10), ms(0)),
            periodic("c", 1, Some(5), ms(4), ms(8), ms(1)),
            script(
                "d",
                1,
                Some(6),
                Some(ms(2)),
                vec![
                    Step::Run(Execution::Fixed(ms(1))),
                    Step::SleepFor(ms(2)),
                    Step::Run(Execution::Fixed(ms(1))),
                ],
            ),
        ],
    ));
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 2),
                done(5, 5, 7),
                done(10, 10, 12),
                started(15, 15),
            ],
            &[done(0, 2, 5), done(10, 12, 15)],
            &[done(1, 1, 6), done(9, 9, 13)],
            &[done(0, 0, 1), done(3, 3, 4)],
        ],
    );
    assert_eq!(o.tasks[2].preemptions, 1, "c is preempted once, by d at 3");
    assert_eq!(o.cores[0].busy_ns, 12_000_000, "a: 2+2+2, b: 3+3");
    assert_eq!(o.cores[1].busy_ns, 10_000_000);
}

/// Overloaded EDF, U = 0.6 + 0.5 = 1.1: (3,5), (3,6).
///
/// ```text
/// t:  0  3  6  9  12 15 18 21 24
/// t1: [0,3]  [6,9]  [12,15]  [18,21]x  [24..
/// t2:    [3,6]  [9,12]  [15,18]  [21,24]
/// ```
/// Every job meets its deadline until t1's fourth (released 15, deadline 20) which waits behind
/// t2's third (deadline 18) and completes at 21: the first miss is at 20.
#[test]
fn overloaded_edf_first_misses_at_twenty() {
    let o = run_one_core(
        PolicyKind::Edf,
        ms(24),
        vec![
            periodic("t1", 0, None, ms(3), ms(5), ms(0)),
            periodic("t2", 0, None, ms(3), ms(6), ms(0)),
        ],
    );
    assert_timelines(
        &o,
        &[
            &[
                done(0, 0, 3),
                done(5, 6, 9),
                done(10, 12, 15),
                late(15, 18, 21),
                started(20, 24),
            ],
            &[
                done(0, 3, 6),
                done(6, 9, 12),
                done(12, 15, 18),
                done(18, 21, 24),
                pending(24),
            ],
        ],
    );
    assert_eq!(o.tasks[0].first_miss, Some(Instant::from_nanos(20_000_000)));
    assert_eq!(o.tasks[0].misses, 1);
}

/// An overloaded task, C = 3 ms every T = D = 2 ms, alone for 10 ms. Releases are on plan at
/// 0, 2, 4, 6, 8 and 10 (a release at the horizon counts, as it always has); each job waits
/// for its predecessor:
///
/// ```text
/// job:        0      1      2      3       4      5
/// release:    0      2      4      6       8      10
/// runs:     [0,3)  [3,6)  [6,9)  [9,10..  never  never
/// deadline:   2      4      6      8       10     12
/// ```
/// Jobs 0-2 complete late (3 > 2, 6 > 4, 9 > 6). Job 3 is unfinished with its deadline 8
/// inside the run; jobs 4 and 5 are queued behind it and never start. Job 4's deadline 10 is
/// the horizon itself (missed, as for any unfinished job); job 5's (12) is beyond the run.
/// So 6 jobs, 3 completed, 5 misses: the jobs queued behind an unfinished one are counted.
#[test]
fn jobs_queued_behind_an_unfinished_one_count_at_the_end() {
    let o = run_one_core(
        PolicyKind::FixedPriority,
        ms(10),
        vec![periodic("overloaded", 0, Some(1), ms(3), ms(2), ms(0))],
    );
    assert_timelines(
        &o,
        &[&[
            late(0, 0, 3),
            late(2, 3, 6),
            late(4, 6, 9),
            (6, Some(9), None, true),
            (8, None, None, true),
            pending(10),
        ]],
    );
    assert_eq!(o.tasks[0].jobs, 6);
    assert_eq!(o.tasks[0].completed, 3);
    assert_eq!(o.tasks[0].misses, 5);
}

/// The same overload written as a script: a loop that runs 25 ms and sleeps until its next
/// release, every 10 ms, deadline 10 ms, over 50 ms. A job due behind a late one is released
/// at its plan, so its response and deadline count from there.
///
/// ```text
/// job:        0       1       2       3       4       5
/// release:    0       10      20      30      40      50
/// runs:     [0,25)  [25,50)  [50..   never   never   never
/// deadline:   10      20      30      40      50      60
/// ```
/// Job 0 completes at 25 (> 10) and job 1 at 50 (> 20), the horizon, which is handled. Job 2
/// is unfinished, and jobs 3 to 5 are due behind it: the script's sleep plans them, so they
/// count as released. Deadlines 30, 40 and 50 are within the run; 60 is not. So 6 jobs, 2
/// completed, 5 misses (released at the call, it would be 3 jobs and 2 misses).
#[test]
fn a_periodic_scripts_late_jobs_are_released_on_plan_and_counted_at_the_end() {
    let overloaded = script(
        "overloaded",
        0,
        Some(1),
        Some(ms(10)),
        vec![Step::Loop {
            count: None,
            body: vec![
                Step::Run(Execution::Fixed(ms(25))),
                Step::SleepUntilNextRelease(ms(10)),
            ],
        }],
    );
    let o = run_one_core(PolicyKind::FixedPriority, ms(50), vec![overloaded]);
    assert_timelines(
        &o,
        &[&[
            late(0, 0, 25),
            late(10, 25, 50),
            (20, Some(50), None, true),
            (30, None, None, true),
            (40, None, None, true),
            pending(50),
        ]],
    );
    assert_eq!(o.tasks[0].jobs, 6);
    assert_eq!(o.tasks[0].completed, 2);
    assert_eq!(o.tasks[0].misses, 5);
}

/// A task that sleeps for no time for ever never lets time pass: its core enters the kernel
/// again and again at time zero. The run ends with a livelock error at that instant, not a
/// hang, once the core has entered its kernel more times at one instant than the machine
/// allows (kernel entries are what is counted: every cycle of a core's steps has one).
#[test]
fn a_core_that_never_lets_time_pass_is_reported_as_a_livelock() {
    let spinner = script(
        "spinner",
        0,
        Some(1),
        None,
        vec![Step::Loop {
            count: None,
            body: vec![Step::SleepFor(Duration::ZERO)],
        }],
    );
    let scenario = scenario(PolicyKind::FixedPriority, 1, ms(1), vec![spinner]);
    let machine =
        bulwark_sim::Machine::new(&scenario, &bulwark_sim::Options::default()).expect("builds");
    let Err(error) = machine.run(&mut |_: Instant| {}) else {
        panic!("a run that never lets time pass ended");
    };
    assert_eq!(
        error,
        bulwark_sim::SimError::Livelock {
            core: 0,
            at: Instant::ZERO
        }
    );
}
