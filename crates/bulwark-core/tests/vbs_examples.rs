//! The VBS scheduler's steps worked by hand from sections III-IV, through its own calls, for
//! every queue plugin. The paper's examples run as a kernel runs them (Fig. 1, P(0.5),
//! Eq. (1)) are in `bulwark-sim`'s `tests/vbs_examples.rs`, on the scenario machine.

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

/// The budget notices an MC-IPC gate acts on: a process with load 5 on (2, 4), alone, from 0.
/// Its limit runs out at 2 (step 1's limit case: the timer the decision at 0 set at t_l = 2),
/// so the decision at 2 reports the exhaustion and idles until its next period instance at 4;
/// the decision at 4 dispatches it on the new limit and reports the replenishment.
fn limit_notices<Q: VbsQueue>() {
    use bulwark_core::{Notice, Notices};
    let mut vbs = Vbs::<Q>::with_capacity(1, seconds(EARLY)).unwrap();
    let a = TaskId(0);
    vbs.add_process(a, half()).unwrap();
    vbs.switch_action(at(0), a, action(5, 2, 4), &mut Work::default())
        .unwrap();
    let mut notices = Notices::with_capacity(vbs.notice_capacity());
    let mut decide = |now: u64| {
        notices.clear();
        let decision = vbs.schedule(at(now), &mut Work::default());
        vbs.take_notices(&mut notices);
        (decision.next, notices.iter().collect::<Vec<Notice>>())
    };
    assert_eq!(decide(0), (Some(a), vec![]));
    assert_eq!(decide(2), (None, vec![Notice::BudgetExhausted { task: a }]));
    assert_eq!(decide(4), (Some(a), vec![Notice::Replenished { task: a }]));
}

#[test]
fn a_limit_run_out_and_back_is_noticed_with_every_plugin() {
    limit_notices::<ListQueue>();
    limit_notices::<ArrayQueue>();
    limit_notices::<MatrixQueue>();
    limit_notices::<TreeQueue>();
}
