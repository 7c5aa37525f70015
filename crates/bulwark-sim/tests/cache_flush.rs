//! `{ flush-cache = true }`, checked by hand: the flushing task takes no time, and every other
//! task on its core pays the flush refill the next time it runs, instead of the ordinary
//! cache refill when that is smaller (the larger of the two, never both).

mod common;

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::{Outcome, Slice, SliceKind};
use bulwark_spec::{Behaviour, CostModel, Execution, PolicyKind, Scenario, Step, TaskSpec};
use common::*;

/// A script task of priority `priority` on `core` whose first job starts at `offset`.
fn script_from(
    name: &str,
    core: u16,
    priority: u8,
    offset: Duration,
    steps: Vec<Step>,
) -> TaskSpec {
    TaskSpec {
        behaviour: Behaviour::Script { offset, steps },
        ..script(name, core, Some(priority), None, Vec::new())
    }
}

/// Completion of job `job` of `task`, in nanoseconds.
fn completion_ns(outcome: &Outcome, task: u32, job: u64) -> u64 {
    outcome
        .jobs
        .as_ref()
        .expect("jobs were recorded")
        .iter()
        .find(|j| j.task == TaskId(task) && j.job == job)
        .and_then(|j| j.completion)
        .expect("the job completed")
        .as_nanos()
}

fn slice(core: u16, task: Option<u32>, kind: SliceKind, start: u64, end: u64) -> Slice {
    Slice {
        core,
        task: task.map(TaskId),
        kind,
        start: Instant::from_nanos(start),
        end: Instant::from_nanos(end),
    }
}

/// Fixed priority on one core at 1 GHz (one cycle is one nanosecond), no kernel costs but the
/// refills: lo = (10ms, 100ms) priority 1 from 0; hi, priority 2 from 2ms, runs the script
/// `[run 1ms, flush-cache (when `flush`), sleep-for 10ms]`.
///
/// ```text
/// 0          lo runs                                        [0, 2ms)
/// 2ms        hi preempts lo (lo must refill), runs 1 ms     [2ms, 3ms)
/// 3ms        hi flushes (or not) and sleeps until 13ms; lo resumes, first refilling
///            max(cache-refill, cache-flush) if flushed, else cache-refill, in ns:
///                                                           [3ms, 3ms + refill)
/// 3ms+refill lo runs its last 8 ms and completes at 11ms + refill
/// 13ms       hi wakes, its script ends: it exits
/// ```
fn preempted_by(flush: bool, cache_refill: u64, cache_flush: u64) -> Scenario {
    let mut steps = vec![Step::Run(Execution::Fixed(ms(1)))];
    if flush {
        steps.push(Step::FlushCache);
    }
    steps.push(Step::SleepFor(ms(10)));
    let mut s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(20),
        vec![
            periodic("lo", 0, Some(1), ms(10), ms(100), ms(0)),
            script_from("hi", 0, 2, ms(2), steps),
        ],
    );
    s.cost = CostModel {
        clock_hz: 1_000_000_000,
        cache_refill,
        cache_flush,
        ..CostModel::default()
    };
    s
}

/// Without any refill cost lo completes at exactly 11 ms; every nanosecond past that is the
/// refill it paid, and lo pays exactly one refill.
#[test]
fn the_low_task_is_delayed_by_exactly_the_refill_it_pays() {
    const ELEVEN_MS: u64 = 11_000_000;
    let cases = [
        // (hi flushes, cache-refill, cache-flush, lo's refill in ns)
        (false, 0, 0, 0),
        // No flush step: the ordinary refill, whatever cache-flush is.
        (false, 300, 5_000, 300),
        // A flush larger than the ordinary refill replaces it: 5000, not 5300.
        (true, 300, 5_000, 5_000),
        // A flush smaller than the ordinary refill changes nothing: max(300, 100).
        (true, 300, 100, 300),
        // A flush alone, with no ordinary refill.
        (true, 0, 7_000, 7_000),
        // A flush step costs nothing when the cost model gives it no cycles.
        (true, 300, 0, 300),
    ];
    for (flush, refill, cache_flush, paid) in cases {
        let o = run_jobs(&preempted_by(flush, refill, cache_flush));
        let case = format!("flush {flush}, cache-refill {refill}, cache-flush {cache_flush}");
        assert_eq!(completion_ns(&o, 0, 0), ELEVEN_MS + paid, "{case}");
        let (lo, hi) = (&o.tasks[0], &o.tasks[1]);
        assert_eq!((lo.refill_ns, lo.preemptions), (paid, 1), "{case}");
        assert_eq!(lo.executed_ns, 10_000_000, "{case}");
        // The flush itself takes no time: hi's first job ends at 3 ms, its second (released
        // by the wake-up at 13 ms) ends at once; hi never pays for its own flush.
        assert_eq!(completion_ns(&o, 1, 0), 3_000_000, "{case}");
        assert_eq!(completion_ns(&o, 1, 1), 13_000_000, "{case}");
        assert_eq!((hi.refill_ns, hi.executed_ns), (0, 1_000_000), "{case}");
    }
}

/// The refill appears in the trace as one cache-refill slice of the flush's length.
#[test]
fn the_flush_refill_is_one_slice_before_the_task_runs_again() {
    let o = run_jobs(&preempted_by(true, 300, 5_000));
    assert_eq!(
        o.trace.as_ref().unwrap().slices,
        vec![
            slice(0, Some(0), SliceKind::Task, 0, 2_000_000),
            slice(0, Some(1), SliceKind::Task, 2_000_000, 3_000_000),
            slice(0, Some(0), SliceKind::CacheRefill, 3_000_000, 3_005_000),
            slice(0, Some(0), SliceKind::Task, 3_005_000, 11_005_000),
        ]
    );
}

/// With kernel costs too, as in `cost_model.rs`: timer interrupt 200, scheduler 100, context
/// switch 50, cache refill 300 and cache flush 1000 cycles at 1 GHz. lo = (10us, 100us)
/// priority 1 from 0; hi, priority 2 from 5us, runs `[run 2us, flush-cache, sleep-for 50us]`.
///
/// ```text
/// 0      lo runs                                                      [0, 5000)
/// 5000   timer: 200 + 100 + 50 = 350 ns of kernel, charged to hi      [5000, 5350)
/// 5350   hi runs 2 us                                                 [5350, 7350)
/// 7350   hi flushes (no time) and sleeps: 100 + 50 = 150 ns, to lo    [7350, 7500)
/// 7500   lo refills max(300, 1000) = 1000 ns, runs its last 5 us      [7500, 8500) [8500, 13500)
/// 13500  lo ends its job: 100 ns, then the core idles                 [13500, 13600)
/// ```
#[test]
fn the_flush_refill_follows_the_kernel_time_like_the_ordinary_refill() {
    let mut s = scenario(
        PolicyKind::FixedPriority,
        1,
        us(20),
        vec![
            periodic("lo", 0, Some(1), us(10), us(100), us(0)),
            script_from(
                "hi",
                0,
                2,
                us(5),
                vec![
                    Step::Run(Execution::Fixed(us(2))),
                    Step::FlushCache,
                    Step::SleepFor(us(50)),
                ],
            ),
        ],
    );
    s.cost = CostModel {
        reclaim_per_unit: 0,
        clock_hz: 1_000_000_000,
        timer_interrupt: 200,
        scheduler: 100,
        per_work_unit: 0,
        context_switch: 50,
        cache_refill: 300,
        cache_flush: 1000,
        ..CostModel::FREE
    };
    let o = run_jobs(&s);
    assert_eq!(
        o.trace.as_ref().unwrap().slices,
        vec![
            slice(0, Some(0), SliceKind::Task, 0, 5000),
            slice(0, Some(1), SliceKind::Kernel, 5000, 5350),
            slice(0, Some(1), SliceKind::Task, 5350, 7350),
            slice(0, Some(0), SliceKind::Kernel, 7350, 7500),
            slice(0, Some(0), SliceKind::CacheRefill, 7500, 8500),
            slice(0, Some(0), SliceKind::Task, 8500, 13500),
            slice(0, None, SliceKind::Kernel, 13500, 13600),
        ]
    );
    let lo = &o.tasks[0];
    assert_eq!(
        (lo.refill_ns, lo.executed_ns, lo.preemptions),
        (1000, 10_000, 1)
    );
    assert_eq!(lo.response.max_ns, 13_500);
    assert_eq!(completion_ns(&o, 1, 0), 7350);
}

/// A flush reaches every other task on the flusher's core, even one that was never preempted
/// and one that has not run yet, once however many flushes came before; tasks on other cores
/// never pay it. 1 GHz, cache refill 300, cache flush 2000 cycles, no kernel costs.
///
/// ```text
/// core 0  flusher (prio 3), from 0: run 1ms, flush, flush, exit at 1 ms
///         early   (prio 2) = (1ms, 5ms) from 0: waits [0, 1ms), then refills 2 us (it has
///                 not run since the flush), runs [1.002ms, 2.002ms); its job at 5 ms pays
///                 nothing and completes at 6 ms
///         late    (prio 1) = (1ms, 5ms) from 3ms: first run at 3 ms, never preempted, yet
///                 refills 2 us: completes at 4.002 ms; its job at 8 ms completes at 9 ms
/// core 1  other   (prio 1) = (1ms, 5ms) from 0: never refills; completes at 1 ms and 6 ms
/// ```
#[test]
fn a_flush_reaches_every_other_task_on_its_core_once() {
    let mut s = scenario(
        PolicyKind::FixedPriority,
        2,
        ms(10),
        vec![
            script_from(
                "flusher",
                0,
                3,
                ms(0),
                vec![
                    Step::Run(Execution::Fixed(ms(1))),
                    Step::FlushCache,
                    Step::FlushCache,
                ],
            ),
            periodic("early", 0, Some(2), ms(1), ms(5), ms(0)),
            periodic("late", 0, Some(1), ms(1), ms(5), ms(3)),
            periodic("other", 1, Some(1), ms(1), ms(5), ms(0)),
        ],
    );
    s.cost = CostModel {
        cache_refill: 300,
        cache_flush: 2000,
        ..CostModel::default()
    };
    let o = run_jobs(&s);
    assert_eq!(completion_ns(&o, 0, 0), 1_000_000);
    assert_eq!(completion_ns(&o, 1, 0), 2_002_000);
    assert_eq!(completion_ns(&o, 1, 1), 6_000_000);
    assert_eq!(completion_ns(&o, 2, 0), 4_002_000);
    assert_eq!(completion_ns(&o, 2, 1), 9_000_000);
    assert_eq!(completion_ns(&o, 3, 0), 1_000_000);
    assert_eq!(completion_ns(&o, 3, 1), 6_000_000);
    let refills: Vec<(u64, u64)> = o
        .tasks
        .iter()
        .map(|t| (t.refill_ns, t.preemptions))
        .collect();
    assert_eq!(refills, [(0, 0), (2000, 0), (2000, 0), (0, 0)]);
    // Deterministic: the same scenario gives the same outcome, trace and all.
    assert_eq!(run_jobs(&s), o);
}
