//! The cost model, checked by hand: kernel time after `now` is charged to the task chosen,
//! a timer interrupt costs more than a system call, and a preempted task pays a cache refill.

mod common;

use bulwark_core::{Instant, TaskId};
use bulwark_sim::{Outcome, Slice, SliceKind};
use bulwark_spec::{CostModel, PolicyKind, TaskSpec};
use common::*;

/// 1 GHz (1 cycle = 1 ns); timer interrupt 200, scheduler 100, context switch 50, refill 300.
const COSTS: CostModel = CostModel {
    reclaim_per_unit: 0,
    clock_hz: 1_000_000_000,
    timer_interrupt: 200,
    scheduler: 100,
    per_work_unit: 0,
    context_switch: 50,
    cache_refill: 300,
    cache_flush: 0,
    ..CostModel::FREE
};

/// Runs `tasks` for 20 us on one fixed-priority core with [`COSTS`], recording the trace.
fn run_with_costs(tasks: Vec<TaskSpec>) -> Outcome {
    let mut s = scenario(PolicyKind::FixedPriority, 1, us(20), tasks);
    s.cost = COSTS;
    run_jobs(&s)
}

/// A slice of core 0, times in nanoseconds.
fn slice(task: Option<u32>, kind: SliceKind, start: u64, end: u64) -> Slice {
    Slice {
        core: 0,
        task: task.map(TaskId),
        kind,
        start: Instant::from_nanos(start),
        end: Instant::from_nanos(end),
    }
}

/// With [`COSTS`]: lo = (10us, 100us) priority 1 from 0; hi = (2us, 100us) priority 2 from 5us.
///
/// ```text
/// 0      lo runs (configuration before time zero is free)
/// 5000   timer: 200 + 100 + 50 = 350 ns of kernel, charged to hi      [5000, 5350)
/// 5350   hi runs 2 us                                                  [5350, 7350)
/// 7350   hi ends its job: 100 + 50 = 150 ns, charged to lo             [7350, 7500)
/// 7500   lo refills its cache 300 ns, then runs its last 5 us          [7500, 7800) [7800, 12800)
/// 12800  lo ends its job: 100 ns, then the core idles                  [12800, 12900)
/// ```
#[test]
fn kernel_time_is_charged_to_the_task_chosen() {
    let o = run_with_costs(vec![
        periodic("lo", 0, Some(1), us(10), us(100), us(0)),
        periodic("hi", 0, Some(2), us(2), us(100), us(5)),
    ]);
    assert_eq!(
        o.trace.as_ref().unwrap().slices,
        vec![
            slice(Some(0), SliceKind::Task, 0, 5000),
            slice(Some(1), SliceKind::Kernel, 5000, 5350),
            slice(Some(1), SliceKind::Task, 5350, 7350),
            slice(Some(0), SliceKind::Kernel, 7350, 7500),
            slice(Some(0), SliceKind::CacheRefill, 7500, 7800),
            slice(Some(0), SliceKind::Task, 7800, 12800),
            slice(None, SliceKind::Kernel, 12800, 12900),
        ]
    );
    let (lo, hi) = (&o.tasks[0], &o.tasks[1]);
    assert_eq!((lo.response.max_ns, hi.response.max_ns), (12800, 2350));
    assert_eq!(hi.wakeup_latency.max_ns, 350);
    assert_eq!((lo.kernel_ns, hi.kernel_ns), (150, 350));
    assert_eq!(
        (lo.refill_ns, lo.executed_ns, lo.preemptions),
        (300, 10_000, 1)
    );
    let core = &o.cores[0];
    assert_eq!((core.kernel_ns, core.busy_ns), (600, 12_300));
    assert_eq!((core.timer_interrupts, core.context_switches), (1, 3));
}

/// Cycles convert to time at the scenario's clock, rounding up: 3 cycles at 2 GHz is 1.5 ns,
/// charged as 2 ns.
#[test]
fn cycles_round_up_to_whole_nanoseconds() {
    let cost = CostModel {
        clock_hz: 2_000_000_000,
        ..CostModel::default()
    };
    assert_eq!(cost.time_of(3).as_nanos(), 2);
    assert_eq!(cost.time_of(4).as_nanos(), 2);
    assert_eq!(cost.time_of(0).as_nanos(), 0);
}

/// A timer that fires during kernel time is taken when the kernel would return to the task,
/// and the task it was returning to, which never executed, is not preempted and pays no refill.
/// Costs as above; lo (10us) priority 1 from 0, hi1 (2us) priority 2 from 5us, hi2 (1us)
/// priority 3 from 5.1us.
///
/// ```text
/// 5000   timer for hi1: 350 ns kernel, charged to hi1             [5000, 5350)
/// 5100   timer for hi2 fires inside the kernel: held pending
/// 5350   pending interrupt: 200 + 100 + 50 = 350 ns, charged to hi2 [5350, 5700)
/// 5700   hi2 runs 1 us                                             [5700, 6700)
/// 6700   hi2 ends its job: 150 ns, charged to hi1                  [6700, 6850)
/// 6850   hi1 runs 2 us, no refill (it never ran before)            [6850, 8850)
/// 8850   hi1 ends its job: 150 ns, charged to lo                   [8850, 9000)
/// 9000   lo refills 300 ns, runs its last 5 us                     [9000, 9300) [9300, 14300)
/// 14300  lo ends its job: 100 ns, idle                             [14300, 14400)
/// ```
#[test]
fn a_timer_during_kernel_time_is_taken_on_the_way_out() {
    let o = run_with_costs(vec![
        periodic("lo", 0, Some(1), us(10), us(100), us(0)),
        periodic("hi1", 0, Some(2), us(2), us(100), us(5)),
        periodic(
            "hi2",
            0,
            Some(3),
            us(1),
            us(100),
            bulwark_core::Duration::from_nanos(5100),
        ),
    ]);
    assert_eq!(
        o.trace.as_ref().unwrap().slices,
        vec![
            slice(Some(0), SliceKind::Task, 0, 5000),
            slice(Some(1), SliceKind::Kernel, 5000, 5350),
            slice(Some(2), SliceKind::Kernel, 5350, 5700),
            slice(Some(2), SliceKind::Task, 5700, 6700),
            slice(Some(1), SliceKind::Kernel, 6700, 6850),
            slice(Some(1), SliceKind::Task, 6850, 8850),
            slice(Some(0), SliceKind::Kernel, 8850, 9000),
            slice(Some(0), SliceKind::CacheRefill, 9000, 9300),
            slice(Some(0), SliceKind::Task, 9300, 14300),
            slice(None, SliceKind::Kernel, 14300, 14400),
        ]
    );
    let (lo, hi1, hi2) = (&o.tasks[0], &o.tasks[1], &o.tasks[2]);
    assert_eq!(
        (hi1.preemptions, hi1.refill_ns),
        (0, 0),
        "hi1 never ran before hi2"
    );
    assert_eq!((lo.preemptions, lo.refill_ns), (1, 300));
    assert_eq!(
        (hi1.wakeup_latency.max_ns, hi2.wakeup_latency.max_ns),
        (1850, 600)
    );
    assert_eq!(
        (lo.response.max_ns, hi1.response.max_ns, hi2.response.max_ns),
        (14300, 3850, 1600)
    );
    let core = &o.cores[0];
    assert_eq!((core.kernel_ns, core.busy_ns), (1100, 13_300));
    assert_eq!((core.timer_interrupts, core.context_switches), (2, 5));
}
