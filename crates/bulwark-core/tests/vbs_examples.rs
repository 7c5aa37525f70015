//! The VBS paper's worked examples, computed by hand from sections III-IV, against the
//! scheduler driven as a kernel drives it, for every queue plugin.

use bulwark_core::bandwidth::vbs::run::{run, ActionRecord, ProcessScript, Run, RunOptions};
use bulwark_core::bandwidth::vbs::{
    Action, ArrayQueue, BandwidthCap, ListQueue, MatrixQueue, ProcessPhase, ReleaseStrategy,
    Resource, TreeQueue, Vbs, VbsConfig, VbsQueue,
};
use bulwark_core::{CoreError, Duration, Instant, Policy, TaskId, Wake, Work};

const EARLY: ReleaseStrategy = ReleaseStrategy::Early;
const LATE: ReleaseStrategy = ReleaseStrategy::Late;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn at(s: u64) -> Instant {
    Instant::from_nanos(s * 1_000_000_000)
}

fn resource(limit: u64, period: u64) -> Resource {
    Resource::new(secs(limit), secs(period))
}

fn action(load: u64, limit: u64, period: u64) -> Action {
    Action::new(secs(load), resource(limit, period))
}

fn half() -> BandwidthCap {
    BandwidthCap::from_ratio(1, 2).unwrap()
}

/// One instant per second and a horizon of 2^5 = 32 s (periods up to 8 s): small enough for
/// the matrix plugin.
fn seconds(strategy: ReleaseStrategy) -> VbsConfig {
    VbsConfig::new(strategy)
        .with_quantum(secs(1))
        .with_horizon_bits(5)
}

/// One instant per millisecond and the paper's 2^14 instants (periods up to 4.096 s).
fn milliseconds(strategy: ReleaseStrategy) -> VbsConfig {
    VbsConfig::new(strategy)
        .with_quantum(Duration::from_millis(1))
        .with_horizon_bits(14)
}

fn run_with<Q: VbsQueue>(config: VbsConfig, scripts: &[ProcessScript<'_>], disclose: bool) -> Run {
    let mut vbs = Vbs::<Q>::with_capacity(4, config).unwrap();
    let options = RunOptions {
        disclose_loads: disclose,
        check_invariants: true,
        until: at(1000),
    };
    run(&mut vbs, scripts, options).unwrap()
}

/// (release, deadline, executed) in seconds.
fn periods(run: &Run, task: u32) -> Vec<(u64, u64, u64)> {
    let s = |t: Instant| t.as_nanos() / 1_000_000_000;
    run.periods
        .iter()
        .filter(|p| p.task == TaskId(task))
        .map(|p| {
            (
                s(p.release),
                s(p.deadline),
                p.executed.as_nanos() / 1_000_000_000,
            )
        })
        .collect()
}

/// (start, end) of the slices of `task`, in seconds.
fn slices(run: &Run, task: u32) -> Vec<(u64, u64)> {
    let s = |t: Instant| t.as_nanos() / 1_000_000_000;
    run.slices
        .iter()
        .filter(|x| x.task == TaskId(task))
        .map(|x| (s(x.start), s(x.end)))
        .collect()
}

fn actions(run: &Run, task: u32) -> Vec<ActionRecord> {
    run.actions
        .iter()
        .filter(|a| a.task == TaskId(task))
        .copied()
        .collect()
}

/// Fig. 1: the action (5 s, (2 s, 4 s)) arriving at 10 s. Early: released at once with the
/// limit scaled to the 2 s left of the period, floor(2 * 2/4) = 1 s; then full periods.
/// Late: released at the next period instance, 12 s. Tasks (release, deadline, duration) as
/// the paper lists them.
fn figure_one<Q: VbsQueue>(config: fn(ReleaseStrategy) -> VbsConfig) {
    let alpha = [action(5, 2, 4)];
    let scripts = [ProcessScript {
        task: TaskId(0),
        cap: half(),
        arrival: at(10),
        actions: &alpha,
    }];
    for disclose in [true, false] {
        let early = run_with::<Q>(config(EARLY), &scripts, disclose);
        assert_eq!(
            periods(&early, 0),
            [(10, 12, 1), (12, 16, 2), (16, 20, 2)],
            "{}",
            Q::NAME
        );
        assert_eq!(slices(&early, 0), [(10, 11), (12, 14), (16, 18)]);
        let late = run_with::<Q>(config(LATE), &scripts, disclose);
        assert_eq!(
            periods(&late, 0),
            [(12, 16, 2), (16, 20, 2), (20, 24, 1)],
            "{}",
            Q::NAME
        );
        assert_eq!(slices(&late, 0), [(12, 14), (16, 18), (20, 21)]);
        // Completion at 18 (early) or 21 (late); termination at the end of that period.
        let (e, l) = (actions(&early, 0)[0], actions(&late, 0)[0]);
        assert_eq!((e.completion, e.termination), (at(18), at(20)));
        assert_eq!((l.completion, l.termination), (at(21), at(24)));
        // "The scheduled response time in the early release strategy is one period shorter."
        assert_eq!(e.response().saturating_add(secs(4)), l.response());
    }
}

#[test]
fn figure_one_every_plugin_in_seconds() {
    figure_one::<ListQueue>(seconds);
    figure_one::<ArrayQueue>(seconds);
    figure_one::<MatrixQueue>(seconds);
    figure_one::<TreeQueue>(seconds);
}

#[test]
fn figure_one_at_the_papers_resolution() {
    // The matrix at 2^14 instants needs 1 GiB: only the other plugins run here.
    figure_one::<ListQueue>(milliseconds);
    figure_one::<ArrayQueue>(milliseconds);
    figure_one::<TreeQueue>(milliseconds);
}

/// Eq. (1): b = ceil(l/λ) π + π - 1. The action executes at most λ per period, so it needs
/// ceil(l/λ) periods of its resource; arriving right after a period instance it may wait up
/// to π - 1 for the first one (the late strategy's release kπ <= a + π - 1; the early
/// strategy releases at once, then has the same periods left at most), and it terminates at
/// the end of the period in which it completes.
fn eq1_bound(a: &ActionRecord) -> Duration {
    let (l, lambda, pi) = (
        a.load.as_nanos(),
        a.resource.limit.as_nanos(),
        a.resource.period.as_nanos(),
    );
    Duration::from_nanos(l.div_ceil(lambda) * pi + pi - 1)
}

/// The paper's P(0.5) = (3,(1,2))(2,(1,4))(1,(1,3))(2,(1,2)) on a 1 s timeline, alone.
///
/// By hand (both strategies agree here: every arrival is at the end of a period of the
/// previous resource, where the early limit floor((d - r) λ/π) is 0, so the early strategy
/// falls back to the late release):
/// - α0 arrives 0: periods (0,2), (2,4), (4,6), one second each: runs [0,1) [2,3) [4,5),
///   completes at 5, terminates at 6 (the end of (4,6]): s0 = 6 <= b0 = 3*2 + 1 = 7;
/// - α1 arrives 6: released at 8 (next multiple of 4): runs [8,9) [12,13), completes 13,
///   terminates 16: s1 = 10 <= b1 = 2*4 + 3 = 11;
/// - α2 arrives 16: released at 18: runs [18,19), terminates 21: s2 = 5 <= b2 = 1*3 + 2 = 5;
/// - α3 arrives 21: released at 22: runs [22,23) [24,25), terminates 26: s3 = 5 <= b3 =
///   2*2 + 1 = 5.
fn process_p<Q: VbsQueue>(with_competitor: bool) {
    let p = [
        action(3, 1, 2),
        action(2, 1, 4),
        action(1, 1, 3),
        action(2, 1, 2),
    ];
    let hog = [action(30, 1, 2)];
    let mut scripts = vec![ProcessScript {
        task: TaskId(0),
        cap: half(),
        arrival: at(0),
        actions: &p,
    }];
    if with_competitor {
        scripts.push(ProcessScript {
            task: TaskId(1),
            cap: half(),
            arrival: at(0),
            actions: &hog,
        });
    }
    for strategy in [EARLY, LATE] {
        let run = run_with::<Q>(seconds(strategy), &scripts, true);
        let records = actions(&run, 0);
        let s = |t: Instant| t.as_nanos() / 1_000_000_000;
        let got: Vec<_> = records
            .iter()
            .map(|a| (s(a.arrival), s(a.completion), s(a.termination)))
            .collect();
        if with_competitor {
            // With a process of cap 0.5 on (1,2) competing (the total is exactly 1), EDF
            // interleaves them; P's actions still terminate at the same instants (worked out
            // in the comment of `paper_process_with_a_competitor`).
            assert_eq!(got, [(0, 5, 6), (6, 14, 16), (16, 20, 21), (21, 25, 26)]);
        } else {
            assert_eq!(got, [(0, 5, 6), (6, 13, 16), (16, 19, 21), (21, 25, 26)]);
            assert_eq!(
                slices(&run, 0),
                [
                    (0, 1),
                    (2, 3),
                    (4, 5),
                    (8, 9),
                    (12, 13),
                    (18, 19),
                    (22, 23),
                    (24, 25)
                ]
            );
        }
        for a in &records {
            let bound = eq1_bound(a);
            assert!(a.response() <= bound, "{a:?} exceeds {bound}");
        }
        let bounds: Vec<_> = records
            .iter()
            .map(|a| eq1_bound(a).as_nanos() / 1_000_000_000)
            .collect();
        assert_eq!(bounds, [7, 11, 5, 5]);
    }
}

#[test]
fn paper_process_alone() {
    process_p::<ListQueue>(false);
    process_p::<ArrayQueue>(false);
    process_p::<MatrixQueue>(false);
    process_p::<TreeQueue>(false);
}

/// P(0.5) beside a CPU hog H(0.5) = (30, (1,2)), both arriving at 0 (P first in line). By
/// hand: P and H alternate in [0,5) (equal deadlines: P was queued first) and α0 completes
/// at 5; α1 is released at 8 with deadline 12, after H's (8,10) period: P runs [9,10) and,
/// in (12,16), [13,14): completes 14, terminates 16; α2 (18,21) runs [19,20) after H's
/// (18,20): completes 20, terminates 21; α3 runs [22,23) and [24,25) (queued before H each
/// time): terminates 26.
#[test]
fn paper_process_with_a_competitor() {
    process_p::<ListQueue>(true);
    process_p::<ArrayQueue>(true);
    process_p::<MatrixQueue>(true);
    process_p::<TreeQueue>(true);
}

/// The three preemption causes of step 1, observed through the process state.
fn preemption_causes<Q: VbsQueue>() {
    let mut vbs = Vbs::<Q>::with_capacity(2, seconds(LATE)).unwrap();
    let mut w = Work::default();
    let (a, b) = (TaskId(0), TaskId(1));
    vbs.add_process(a, half()).unwrap();
    vbs.add_process(b, half()).unwrap();
    // A: load 3 on (2,4); B: unknown load on (1,2), arriving at 1 (released at 2).
    vbs.switch_action(at(0), a, action(3, 2, 4), &mut w)
        .unwrap();
    let d = vbs.schedule(at(0), &mut w);
    assert_eq!(d.next, Some(a));
    // t_c = 3, t_l = 2, no release pending: the timer is at 2.
    assert_eq!(d.timer, Some(at(2)));
    vbs.switch_action(at(1), b, Action::unknown_load(resource(1, 2)), &mut w)
        .unwrap();
    let d = vbs.schedule(at(1), &mut w);
    assert_eq!(d.next, Some(a));
    // B is released at 2 = t_r = t_l.
    assert_eq!(d.timer, Some(at(2)));
    // Limit: A used its 2 s; r = 4, d = 8, limit 2 again, load 1 left. B runs.
    let d = vbs.schedule(at(2), &mut w);
    assert_eq!(d.next, Some(b));
    let s = vbs.process_state(a).unwrap();
    assert_eq!(s.phase, ProcessPhase::Blocked);
    assert_eq!(
        (s.release, s.deadline, s.limit_left),
        (at(4), at(8), secs(2))
    );
    assert_eq!(s.load_left, Some(secs(1)));
    // B's limit is reached at 3; A is released at 4.
    assert_eq!(d.timer, Some(at(3)));
    assert_eq!(vbs.schedule(at(3), &mut w).next, None);
    let d = vbs.schedule(at(4), &mut w);
    // B's next period started at 4 too (deadline 6 < A's 8): B runs first, to its limit.
    assert_eq!(d.next, Some(b));
    vbs.check_invariants().unwrap();
    let d = vbs.schedule(at(5), &mut w);
    assert_eq!(d.next, Some(a));
    // A: load 1 left, limit 2: t_c = 6 before t_l = 7; B's release at 6 too.
    assert_eq!(d.timer, Some(at(6)));
    // Completion at 6: A has no next action: idle, terminating at the end of (4,8].
    let d = vbs.schedule(at(6), &mut w);
    assert_eq!(d.next, Some(b));
    let s = vbs.process_state(a).unwrap();
    assert_eq!((s.phase, s.termination), (ProcessPhase::Idle, Some(at(8))));
    // A's next action: (1,1) exceeds its cap of 0.5 and is refused; on (1,2) it is released
    // from the termination at 8 (late strategy: the next multiple of 2 from 8 is 8).
    assert_eq!(
        vbs.switch_action(at(6), a, action(1, 1, 1), &mut w),
        Err(CoreError::InvalidParameter)
    );
    vbs.switch_action(at(6), a, action(1, 1, 2), &mut w)
        .unwrap();
    let d = vbs.schedule(at(6), &mut w);
    assert_eq!(d.next, Some(b));
    let s = vbs.process_state(a).unwrap();
    assert_eq!(
        (s.phase, s.release, s.deadline),
        (ProcessPhase::Blocked, at(8), at(10))
    );
    vbs.check_invariants().unwrap();
}

#[test]
fn three_preemption_causes() {
    preemption_causes::<ListQueue>();
    preemption_causes::<ArrayQueue>();
    preemption_causes::<MatrixQueue>();
    preemption_causes::<TreeQueue>();
}

/// The release cause: a process released with an earlier deadline preempts the running one,
/// which goes back to Ready with its deadline and the limit it has left.
fn release_cause<Q: VbsQueue>() {
    let mut vbs = Vbs::<Q>::with_capacity(2, seconds(LATE)).unwrap();
    let mut w = Work::default();
    let (a, b) = (TaskId(0), TaskId(1));
    vbs.add_process(a, half()).unwrap();
    vbs.add_process(b, half()).unwrap();
    vbs.switch_action(at(0), a, action(8, 4, 8), &mut w)
        .unwrap();
    // A runs from 0 (period (0,8), limit 4); B arrives at 1, released at 2 with deadline 4.
    assert_eq!(vbs.schedule(at(0), &mut w).next, Some(a));
    vbs.switch_action(at(1), b, action(1, 1, 2), &mut w)
        .unwrap();
    let d = vbs.schedule(at(1), &mut w);
    assert_eq!((d.next, d.timer), (Some(a), Some(at(2))));
    let d = vbs.schedule(at(2), &mut w);
    assert_eq!(d.next, Some(b));
    let s = vbs.process_state(a).unwrap();
    assert_eq!(s.phase, ProcessPhase::Ready);
    assert_eq!(
        (s.deadline, s.limit_left, s.load_left),
        (at(8), secs(2), Some(secs(6)))
    );
    // B completes at 3 (load 1); A resumes with 2 s of limit: t_l = 5.
    let d = vbs.schedule(at(3), &mut w);
    assert_eq!((d.next, d.timer), (Some(a), Some(at(5))));
    vbs.check_invariants().unwrap();
}

#[test]
fn release_cause_keeps_the_deadline() {
    release_cause::<ListQueue>();
    release_cause::<ArrayQueue>();
    release_cause::<MatrixQueue>();
    release_cause::<TreeQueue>();
}

/// Same resource for the next action: deadline and release unchanged, the limit left goes on
/// (section IV, completion case with R_{j+1} = R_j).
#[test]
fn same_resource_continues_in_the_period() {
    let mut vbs = Vbs::<ArrayQueue>::with_capacity(1, seconds(EARLY)).unwrap();
    let mut w = Work::default();
    let a = TaskId(0);
    vbs.add_process(a, half()).unwrap();
    vbs.switch_action(at(0), a, action(1, 3, 8), &mut w)
        .unwrap();
    assert_eq!(vbs.schedule(at(0), &mut w).timer, Some(at(1)));
    vbs.switch_action(at(1), a, action(5, 3, 8), &mut w)
        .unwrap();
    let d = vbs.schedule(at(1), &mut w);
    // Limit 2 left in (0,8): t_l = 3.
    assert_eq!((d.next, d.timer), (Some(a), Some(at(3))));
    let s = vbs.process_state(a).unwrap();
    assert_eq!((s.release, s.deadline), (at(0), at(8)));
    // A different resource instead: released from the termination at 8.
    vbs.switch_action(at(2), a, action(1, 1, 4), &mut w)
        .unwrap();
    let d = vbs.schedule(at(2), &mut w);
    assert_eq!((d.next, d.timer), (None, Some(at(8))));
    let s = vbs.process_state(a).unwrap();
    // Early from 8, a boundary of 4 too: d = r, so the late values.
    assert_eq!(
        (s.release, s.deadline, s.limit_left),
        (at(8), at(12), secs(1))
    );
}

/// Admission (Eq. 2) and action validation refuse without changing anything.
#[test]
fn admission_and_validation() {
    let mut vbs = Vbs::<ListQueue>::with_capacity(4, seconds(EARLY)).unwrap();
    let mut w = Work::default();
    let third = BandwidthCap::from_ratio(1, 3).unwrap();
    for t in 0..3 {
        vbs.add_process(TaskId(t), third).unwrap();
    }
    assert_eq!(vbs.admitted_parts(), BandwidthCap::SCALE, "1/3 is exact");
    assert_eq!(
        vbs.add_process(TaskId(3), BandwidthCap::from_parts(1).unwrap()),
        Err(CoreError::InvalidParameter)
    );
    assert_eq!(
        vbs.add_process(TaskId(0), third),
        Err(CoreError::AlreadyAdded)
    );
    assert_eq!(
        vbs.add_process(TaskId(9), third),
        Err(CoreError::UnknownTask)
    );
    let before = format!("{vbs:?}");
    let bad = [
        action(1, 1, 2),                                          // 1/2 > 1/3
        action(1, 2, 9),                                          // period beyond 32/4 = 8
        Action::new(Duration::from_millis(1500), resource(1, 3)), // not whole instants
        Action::new(Duration::ZERO, resource(1, 3)),              // zero load
        action(1, 0, 3),                                          // zero limit
    ];
    for a in bad {
        assert_eq!(
            vbs.switch_action(at(0), TaskId(0), a, &mut w),
            Err(CoreError::InvalidParameter),
            "{a:?}"
        );
    }
    assert_eq!(
        vbs.activate(at(0), TaskId(0), Wake::SameJob, &mut w),
        Err(CoreError::InvalidParameter),
        "no action to wake into"
    );
    assert_eq!(
        vbs.block(at(0), TaskId(0), &mut w),
        Err(CoreError::NotReady)
    );
    assert_eq!(format!("{vbs:?}"), before, "refused calls change nothing");
    // Removing a process frees its cap.
    vbs.remove_process(at(0), TaskId(2), &mut w).unwrap();
    vbs.add_process(TaskId(3), third).unwrap();
    vbs.check_invariants().unwrap();
}

/// Self-suspension keeps the capacity: a process that blocks inside its period and resumes
/// gets at most the bandwidth of what is left of it (CBS's wake-up rule).
#[test]
fn resume_is_capped_by_the_rest_of_the_period() {
    let mut vbs = Vbs::<TreeQueue>::with_capacity(1, seconds(LATE)).unwrap();
    let mut w = Work::default();
    let a = TaskId(0);
    vbs.add_process(a, half()).unwrap();
    vbs.switch_action(at(0), a, Action::unknown_load(resource(4, 8)), &mut w)
        .unwrap();
    assert_eq!(vbs.schedule(at(0), &mut w).timer, Some(at(4)));
    vbs.block(at(1), a, &mut w).unwrap();
    assert_eq!(vbs.schedule(at(1), &mut w).next, None);
    // Resumes at 6: 3 left of its limit, but (8 - 6) * 4/8 = 1.
    vbs.activate(at(6), a, Wake::SameJob, &mut w).unwrap();
    let d = vbs.schedule(at(6), &mut w);
    assert_eq!((d.next, d.timer), (Some(a), Some(at(7))));
    assert_eq!(vbs.process_state(a).unwrap().deadline, at(8));
    // Limit at 7: next period (8,16).
    assert_eq!(vbs.schedule(at(7), &mut w).timer, Some(at(8)));
    vbs.check_invariants().unwrap();
}

/// A periodic task written with the kernel calls only: run, then sleep until the next
/// release with `NextJob` (the action completes; a new one like it arrives at the wake-up).
#[test]
fn periodic_process_through_the_policy_interface() {
    let mut vbs = Vbs::<ArrayQueue>::with_capacity(1, seconds(EARLY)).unwrap();
    let mut w = Work::default();
    let a = TaskId(0);
    vbs.add_process(a, half()).unwrap();
    vbs.switch_action(at(0), a, Action::unknown_load(resource(2, 4)), &mut w)
        .unwrap();
    for k in 0..5u64 {
        let release = 4 * k;
        let d = vbs.schedule(at(release), &mut w);
        assert_eq!(d.next, Some(a), "job {k}");
        assert_eq!(d.timer, Some(at(release + 2)), "limit of the period");
        let wake = Wake::NextJob {
            deadline: Instant::NEVER,
        };
        vbs.sleep(at(release + 1), a, at(release + 4), wake, &mut w)
            .unwrap();
        let d = vbs.schedule(at(release + 1), &mut w);
        assert_eq!((d.next, d.timer), (None, Some(at(release + 4))));
        vbs.check_invariants().unwrap();
    }
    // The first action and one per wake-up at 4, 8, 12 and 16.
    assert_eq!(vbs.process_state(a).unwrap().actions_started, 5);
}

/// The release of many processes at one instant: the list and array plugins move each
/// released process, the matrix and tree plugins release a whole column at once.
fn release_storm<Q: VbsQueue>() -> Work {
    let n = 32;
    // 2^8 instants of 1 s: periods up to 64 s.
    let config = VbsConfig::new(LATE)
        .with_quantum(secs(1))
        .with_horizon_bits(8);
    let mut vbs = Vbs::<Q>::with_capacity(n, config).unwrap();
    let mut w = Work::default();
    for t in 0..n as u32 {
        // Even: (1, 64), odd: (1, 32); the caps sum to 16/64 + 16/32 = 3/4.
        let period = if t % 2 == 0 { 64 } else { 32 };
        vbs.add_process(TaskId(t), BandwidthCap::from_ratio(1, period).unwrap())
            .unwrap();
        let a = Action::unknown_load(resource(1, period));
        vbs.switch_action(at(1), TaskId(t), a, &mut w).unwrap();
    }
    let d = vbs.schedule(at(1), &mut w);
    assert_eq!(d.timer, Some(at(32)));
    // The odd processes are released at 32; each runs its 1 s limit, then waits for 64.
    let mut now = 32;
    let mut d = vbs.schedule(at(now), &mut w);
    while d.next.is_some() {
        now += 1;
        d = vbs.schedule(at(now), &mut w);
    }
    assert_eq!((now, d.timer), (48, Some(at(64))));
    // At 64 every process is released at once.
    let mut storm = Work::default();
    let d = vbs.schedule(at(64), &mut storm);
    assert!(d.next.is_some());
    let ready = (0..n as u32)
        .filter(|&t| vbs.process_state(TaskId(t)).unwrap().phase == ProcessPhase::Ready)
        .count();
    assert_eq!(ready, n - 1, "all released, one dispatched");
    vbs.check_invariants().unwrap();
    storm
}

#[test]
fn release_storm_work_per_plugin() {
    let list = release_storm::<ListQueue>();
    let array = release_storm::<ArrayQueue>();
    let matrix = release_storm::<MatrixQueue>();
    let tree = release_storm::<TreeQueue>();
    // Moving 32 processes from Blocked to Ready is 64 link operations (+ the dispatch), one
    // release each.
    assert!(list.queue_entries_moved >= 64, "{list:?}");
    assert!(array.queue_entries_moved >= 64, "{array:?}");
    assert_eq!(
        (
            list.replenishments_processed,
            array.replenishments_processed
        ),
        (32, 32)
    );
    // The matrix and tree move no entry to release, they release one column: only the
    // dispatch unlinks an entry.
    assert!(matrix.queue_entries_moved <= 2, "{matrix:?}");
    assert!(tree.queue_entries_moved <= 2, "{tree:?}");
    assert_eq!(
        (
            matrix.replenishments_processed,
            tree.replenishments_processed
        ),
        (1, 1)
    );
}

/// A platform that invokes the scheduler far too late (a lost timer) leaves deadlines beyond
/// the horizon: the scheduler re-keys the overdue processes and carries on.
fn late_invocation<Q: VbsQueue>() {
    let mut vbs = Vbs::<Q>::with_capacity(3, seconds(EARLY)).unwrap();
    let mut w = Work::default();
    for t in 0..3 {
        vbs.add_process(TaskId(t), BandwidthCap::from_ratio(1, 3).unwrap())
            .unwrap();
        vbs.switch_action(
            at(0),
            TaskId(t),
            Action::unknown_load(resource(2, 6)),
            &mut w,
        )
        .unwrap();
    }
    assert_eq!(vbs.schedule(at(0), &mut w).next, Some(TaskId(0)));
    // The timer at 2 is lost; the next invocation comes at 100, far past every deadline.
    let d = vbs.schedule(at(100), &mut w);
    vbs.check_invariants().unwrap();
    // Task 0 overran its limit (its next period starts at 102); 1 and 2 are overdue and run
    // first, in task order.
    assert_eq!(d.next, Some(TaskId(1)));
    let d = vbs.schedule(at(102), &mut w);
    assert_eq!(d.next, Some(TaskId(2)));
    vbs.check_invariants().unwrap();
}

#[test]
fn late_invocations_keep_the_horizon() {
    late_invocation::<ListQueue>();
    late_invocation::<ArrayQueue>();
    late_invocation::<MatrixQueue>();
    late_invocation::<TreeQueue>();
}

#[test]
fn memory_against_resolution() {
    // Table I's space column: the matrix grows with t^2, the tree and array with t.
    let n = 750;
    let small = [
        ListQueue::memory_bytes_for(n, 8),
        ArrayQueue::memory_bytes_for(n, 8),
        MatrixQueue::memory_bytes_for(n, 8),
        TreeQueue::memory_bytes_for(n, 8),
    ];
    let large = [
        ListQueue::memory_bytes_for(n, 14),
        ArrayQueue::memory_bytes_for(n, 14),
        MatrixQueue::memory_bytes_for(n, 14),
        TreeQueue::memory_bytes_for(n, 14),
    ];
    assert_eq!(small[0], large[0], "the list does not depend on t");
    // 64 times the slots: the array's two slot arrays grow from 2 KB to 128 KB.
    assert!(large[1] - small[1] > 2 * 4 * (16384 - 256), "array ~ t");
    assert!(large[2] > 1000 * small[2], "matrix ~ t^2");
    assert!(large[3] < large[2] / 1000, "tree far below the matrix");
}

/// Time near the end of `u64` nanoseconds saturates instead of overflowing: no panic.
fn end_of_time<Q: VbsQueue>() {
    let config = VbsConfig::new(EARLY)
        .with_quantum(Duration::from_nanos(1))
        .with_horizon_bits(6);
    let mut vbs = Vbs::<Q>::with_capacity(2, config).unwrap();
    let mut w = Work::default();
    let r = Resource::new(Duration::from_nanos(4), Duration::from_nanos(8));
    for t in 0..2 {
        vbs.add_process(TaskId(t), half()).unwrap();
        let near = Instant::from_nanos(u64::MAX - 20 + u64::from(t) * 10);
        vbs.switch_action(
            near,
            TaskId(t),
            Action::new(Duration::from_nanos(8), r),
            &mut w,
        )
        .unwrap();
    }
    for k in 0..6 {
        let now = Instant::from_nanos(u64::MAX - 12 + k * 2);
        let d = vbs.schedule(now, &mut w);
        assert!(d.timer.is_none_or(|t| t >= now));
    }
    vbs.block(Instant::NEVER, TaskId(0), &mut w).ok();
    vbs.schedule(Instant::NEVER, &mut w);
}

#[test]
fn the_end_of_time_saturates() {
    end_of_time::<ListQueue>();
    end_of_time::<ArrayQueue>();
    end_of_time::<MatrixQueue>();
    end_of_time::<TreeQueue>();
}
