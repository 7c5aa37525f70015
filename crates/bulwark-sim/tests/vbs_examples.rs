//! The VBS paper's worked examples, computed by hand from sections III-IV, against the
//! scheduler run by the scenario machine as a kernel drives it (no kernel costs), for every
//! queue plugin, with the scheduler's invariants checked after every call.

use bulwark_core::bandwidth::vbs::{Action, BandwidthCap, ReleaseStrategy, Resource};
use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::{ActionRecord, Options, VbsOptions, VbsProcess, VbsRecords, VbsSystem};
use bulwark_spec::VbsPlugin;

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
/// the matrix plugin. Runs for at most 1,000 s.
fn seconds(strategy: ReleaseStrategy) -> VbsSystem {
    VbsSystem::new(strategy, secs(1), 5, secs(1000))
}

/// One instant per millisecond and the paper's 2^14 instants (periods up to 4.096 s).
fn milliseconds(strategy: ReleaseStrategy) -> VbsSystem {
    VbsSystem::new(strategy, Duration::from_millis(1), 14, secs(1000))
}

/// A process of cap 1/2 whose first action arrives at `arrival` seconds.
fn process(arrival: u64, actions: &[Action]) -> VbsProcess {
    VbsProcess {
        cap: half(),
        arrival: secs(arrival),
        actions: actions.to_vec(),
    }
}

/// Runs `processes` on `system` with `plugin`, invariants checked after every call.
fn run_with(
    plugin: VbsPlugin,
    mut system: VbsSystem,
    processes: &[VbsProcess],
    disclose: bool,
) -> VbsRecords {
    system.plugin = plugin;
    system.processes = processes.to_vec();
    let options = VbsOptions {
        disclose_loads: disclose,
        check_invariants: true,
    };
    let scenario = system.scenario().unwrap();
    bulwark_sim::run_vbs(&scenario, &Options::default(), options)
        .unwrap()
        .records
}

/// (release, deadline, executed) in seconds.
fn periods(run: &VbsRecords, task: u32) -> Vec<(u64, u64, u64)> {
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
fn slices(run: &VbsRecords, task: u32) -> Vec<(u64, u64)> {
    let s = |t: Instant| t.as_nanos() / 1_000_000_000;
    run.slices
        .iter()
        .filter(|x| x.task == TaskId(task))
        .map(|x| (s(x.start), s(x.end)))
        .collect()
}

fn actions(run: &VbsRecords, task: u32) -> Vec<ActionRecord> {
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
fn figure_one(plugin: VbsPlugin, config: fn(ReleaseStrategy) -> VbsSystem) {
    let alpha = [action(5, 2, 4)];
    let processes = [process(10, &alpha)];
    for disclose in [true, false] {
        let early = run_with(plugin, config(EARLY), &processes, disclose);
        assert_eq!(
            periods(&early, 0),
            [(10, 12, 1), (12, 16, 2), (16, 20, 2)],
            "{plugin:?}"
        );
        assert_eq!(slices(&early, 0), [(10, 11), (12, 14), (16, 18)]);
        let late = run_with(plugin, config(LATE), &processes, disclose);
        assert_eq!(
            periods(&late, 0),
            [(12, 16, 2), (16, 20, 2), (20, 24, 1)],
            "{plugin:?}"
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
    figure_one(VbsPlugin::List, seconds);
    figure_one(VbsPlugin::Array, seconds);
    figure_one(VbsPlugin::Matrix, seconds);
    figure_one(VbsPlugin::Tree, seconds);
}

#[test]
fn figure_one_at_the_papers_resolution() {
    // The matrix at 2^14 instants needs 1 GiB: only the other plugins run here.
    figure_one(VbsPlugin::List, milliseconds);
    figure_one(VbsPlugin::Array, milliseconds);
    figure_one(VbsPlugin::Tree, milliseconds);
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
fn process_p(plugin: VbsPlugin, with_competitor: bool) {
    let p = [
        action(3, 1, 2),
        action(2, 1, 4),
        action(1, 1, 3),
        action(2, 1, 2),
    ];
    let hog = [action(30, 1, 2)];
    let mut processes = vec![process(0, &p)];
    if with_competitor {
        processes.push(process(0, &hog));
    }
    for strategy in [EARLY, LATE] {
        let run = run_with(plugin, seconds(strategy), &processes, true);
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
    process_p(VbsPlugin::List, false);
    process_p(VbsPlugin::Array, false);
    process_p(VbsPlugin::Matrix, false);
    process_p(VbsPlugin::Tree, false);
}

/// P(0.5) beside a CPU hog H(0.5) = (30, (1,2)), both arriving at 0 (P first in line). By
/// hand: P and H alternate in [0,5) (equal deadlines: P was queued first) and α0 completes
/// at 5; α1 is released at 8 with deadline 12, after H's (8,10) period: P runs [9,10) and,
/// in (12,16), [13,14): completes 14, terminates 16; α2 (18,21) runs [19,20) after H's
/// (18,20): completes 20, terminates 21; α3 runs [22,23) and [24,25) (queued before H each
/// time): terminates 26.
#[test]
fn paper_process_with_a_competitor() {
    process_p(VbsPlugin::List, true);
    process_p(VbsPlugin::Array, true);
    process_p(VbsPlugin::Matrix, true);
    process_p(VbsPlugin::Tree, true);
}
