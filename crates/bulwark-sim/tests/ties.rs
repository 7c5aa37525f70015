//! The machine's tie-breaking rules, one hand-worked schedule each. The rules are stated in
//! one place, the "Ties" section of `bulwark_sim`'s crate documentation; every test here names
//! the rule it pins. Times are in milliseconds.

mod common;

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::Outcome;
use bulwark_spec::{CostModel, PolicyKind, TaskSpec};
use common::*;

/// A task on core 0: (name, priority, C, T = D, offset).
fn task(name: &str, priority: Option<u8>, execution: u64, period: u64, offset: u64) -> TaskSpec {
    periodic(name, 0, priority, ms(execution), ms(period), ms(offset))
}

/// One core under `policy` for `horizon` ms, with every job recorded.
fn run(policy: PolicyKind, horizon: u64, tasks: Vec<TaskSpec>) -> Outcome {
    run_jobs(&scenario(policy, 1, ms(horizon), tasks))
}

/// (release, first start, completion, missed) of the first job of task `index`.
fn first_job(outcome: &Outcome, index: u32) -> Row {
    rows_ms(outcome, index)[0]
}

/// Rule 1: an execution that ends exactly when a timer fires ends first. `low` (C = 2) ends at
/// 2, exactly when `high` (offset 2) is released: `low` completes at 2 and is not preempted
/// with no work left; `high` starts at 2.
#[test]
fn a_completion_at_a_release_completes_first() {
    let low = task("low", Some(1), 2, 10, 0);
    let o = run(
        PolicyKind::FixedPriority,
        10,
        vec![low, task("high", Some(2), 1, 10, 2)],
    );
    assert_eq!(first_job(&o, 0), (0, Some(0), Some(2), false));
    assert_eq!(first_job(&o, 1), (2, Some(2), Some(3), false));
    assert_eq!(o.tasks[0].preemptions, 0, "low was never preempted");
}

/// Rule 1, at a kernel return: a timer due at the very instant the kernel returns is taken
/// before the chosen task runs, as one that fires during the kernel's time is. One core at
/// 1 GHz, a scheduler call of 1 us, a cache refill of 500 ns, times in ns: `low` (C = 2 ms)
/// runs from 0; `mid` (1 ms) is released at 1,000,000 and the kernel, charged to it, returns
/// at 1,001,000, exactly when `high` (1 ms) is released. `mid` has run nothing, so it is
/// neither started nor preempted: the kernel runs [1,001,000, 1,002,000) for `high`, which
/// runs [1,002,000, 2,002,000); the kernel returns to `mid` at 2,003,000 and it runs its 1 ms
/// with no refill to 3,003,000. `low`, preempted at 1,000,000, refills 500 ns and completes
/// at 3,004,000 + 500 + 1,000,000.
#[test]
fn a_timer_at_a_kernel_return_is_taken_before_the_task_runs() {
    let nanos = Duration::from_nanos;
    let task = |name, priority, offset| {
        let execution = if name == "low" { ms(2) } else { ms(1) };
        periodic(name, 0, Some(priority), execution, ms(10), nanos(offset))
    };
    let mut scenario = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(6),
        vec![
            task("low", 1, 0),
            task("mid", 2, 1_000_000),
            task("high", 3, 1_001_000),
        ],
    );
    scenario.cost = CostModel {
        clock_hz: 1_000_000_000,
        scheduler: 1_000,
        cache_refill: 500,
        ..CostModel::FREE
    };
    let o = run_jobs(&scenario);
    let first = |task: u32| {
        let mut jobs = o.jobs.as_ref().expect("jobs were recorded").iter();
        let job = jobs.find(|j| j.task == TaskId(task)).expect("a job");
        let at = |t: Option<Instant>| t.map(Instant::as_nanos);
        (
            job.release.as_nanos(),
            at(job.first_start),
            at(job.completion),
        )
    };
    assert_eq!(first(2), (1_001_000, Some(1_002_000), Some(2_002_000)));
    assert_eq!(first(1), (1_000_000, Some(2_003_000), Some(3_003_000)));
    assert_eq!((o.tasks[1].preemptions, o.tasks[1].refill_ns), (0, 0));
    assert_eq!(first(0), (0, Some(0), Some(4_004_500)));
    assert_eq!((o.tasks[0].preemptions, o.tasks[0].refill_ns), (1, 500));
}

/// Rule 2: equal fixed priorities run first-come first-served; tasks released at the same
/// instant come in the order of the file. `a` and `b` share priority 1 and are released
/// together: `a` runs [0,2), then `b` [2,4).
#[test]
fn equal_priorities_released_together_run_in_file_order() {
    let (a, b) = (task("a", Some(1), 2, 10, 0), task("b", Some(1), 2, 10, 0));
    let o = run(PolicyKind::FixedPriority, 10, vec![a, b]);
    assert_eq!(first_job(&o, 0), (0, Some(0), Some(2), false));
    assert_eq!(first_job(&o, 1), (0, Some(2), Some(4), false));
}

/// Rule 3: a preempted task keeps the head of its priority (POSIX `SCHED_FIFO`). `a` runs
/// [0,1), `high` preempts it for [1,2), then `a` resumes before its peer `b`: [2,3), and `b`
/// runs [3,5).
#[test]
fn a_preempted_task_resumes_before_its_peers() {
    let (a, b) = (task("a", Some(1), 2, 10, 0), task("b", Some(1), 2, 10, 0));
    let o = run(
        PolicyKind::FixedPriority,
        10,
        vec![a, b, task("high", Some(2), 1, 10, 1)],
    );
    assert_eq!(first_job(&o, 0), (0, Some(0), Some(3), false));
    assert_eq!(first_job(&o, 1), (0, Some(3), Some(5), false));
    assert_eq!(first_job(&o, 2), (1, Some(1), Some(2), false));
}

/// Rule 3: a task whose next job was released before its current one completed never
/// suspends (its sleep until that release returns at once), so it keeps its place. `a`
/// (C = 5, T = D = 4) is overloaded; `b` shares its priority and is released at 1, behind
/// `a`. `a` runs job 0 [0,5), then job 1 (released at 4) [5,10), and at the horizon 10 is
/// dispatched for job 2 (released at 8): `b` never runs. Jobs 0 and 1 miss (5 > 4, 10 > 8);
/// job 2's deadline 12 is after the horizon.
#[test]
fn a_task_with_a_backlog_keeps_its_place() {
    let a = task("a", Some(1), 5, 4, 0);
    let b = task("b", Some(1), 1, 100, 1);
    let o = run(PolicyKind::FixedPriority, 10, vec![a, b]);
    assert_eq!(
        rows_ms(&o, 0),
        [
            (0, Some(0), Some(5), true),
            (4, Some(5), Some(10), true),
            (8, Some(10), None, false),
        ]
    );
    assert_eq!(rows_ms(&o, 1), [(1, None, None, false)]);
}

/// Rule 4: under EDF equal absolute deadlines go to the earlier activation, so a running job
/// is never preempted by an equal deadline. `a` (C = 3, D = 6) runs from 0; `b` is released at
/// 2 with D = 4, absolute deadline 6 as well: `a` keeps the core to 3, `b` runs [3,5).
#[test]
fn edf_equal_deadlines_go_to_the_earlier_activation() {
    let mut b = task("b", None, 2, 10, 2);
    b.deadline = Some(ms(4));
    let o = run(PolicyKind::Edf, 10, vec![task("a", None, 3, 6, 0), b]);
    assert_eq!(first_job(&o, 0), (0, Some(0), Some(3), false));
    assert_eq!(first_job(&o, 1), (2, Some(3), Some(5), false));
}

/// Rule 5: a job completing exactly at its deadline meets it. `a` (C = 2, T = D = 4) waits for
/// `high` (C = 2, released with it), runs [2,4) and completes at 4, its deadline.
#[test]
fn a_completion_at_the_deadline_meets_it() {
    let a = task("a", Some(1), 2, 4, 0);
    let o = run(
        PolicyKind::FixedPriority,
        8,
        vec![a, task("high", Some(2), 2, 8, 0)],
    );
    assert_eq!(first_job(&o, 0), (0, Some(2), Some(4), false));
    assert_eq!(o.tasks[0].misses, 0);
}

/// Rule 6: the horizon is inclusive. Events at the horizon are handled, a job released at the
/// horizon counts as released, and an unfinished job whose deadline is at or before the
/// horizon has missed it. `a` (C = 3, T = D = 5) over 10 ms: jobs released at 0, 5 and 10;
/// the third is unfinished with its deadline (15) beyond the run, so it is not a miss.
#[test]
fn the_horizon_is_inclusive() {
    let o = run(
        PolicyKind::FixedPriority,
        10,
        vec![task("a", Some(1), 3, 5, 0)],
    );
    let expected = vec![
        (0, Some(0), Some(3), false),
        (5, Some(5), Some(8), false),
        (10, Some(10), None, false),
    ];
    assert_eq!(rows_ms(&o, 0), expected);
    assert_eq!(o.tasks[0].jobs, 3);
    assert_eq!(o.until, Instant::from_nanos(10_000_000));
}
