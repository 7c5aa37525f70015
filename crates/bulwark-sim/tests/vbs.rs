//! VBS on the machine: a scenario file of VBS processes (scripts of actions) run with no
//! kernel costs schedules them as the same processes built as a `VbsSystem`, loads hidden or
//! disclosed, for the plugins and both release strategies, and as an independent
//! millisecond-stepped reference written from the VBS paper's section IV; and one process by
//! hand.

use bulwark_core::bandwidth::vbs::{Action, BandwidthCap, ReleaseStrategy, Resource};
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Options, SliceKind, VbsOptions, VbsProcess, VbsSystem};
use bulwark_spec::VbsPlugin;
use proptest::prelude::*;

/// Times in milliseconds: (load, limit, period) per action.
type Actions = Vec<(u64, u64, u64)>;

/// A process: its cap as 1/share and its actions.
fn process() -> impl Strategy<Value = (u64, Actions)> {
    (2u64..=4).prop_flat_map(|share| {
        let action = (1u64..=6, 1u64..=4).prop_flat_map(move |(load, period)| {
            // limit / period <= 1 / share: limit <= period / share, at least one instant.
            let most = (period * 4 / share).max(1);
            (Just(load), 1..=most, Just(period * 4))
        });
        (Just(share), proptest::collection::vec(action, 1..=3))
    })
}

/// Processes whose caps 1/share sum to at most 1.
fn processes() -> impl Strategy<Value = Vec<(u64, Actions)>> {
    proptest::collection::vec(process(), 1..=4).prop_map(|ps| {
        let mut total = 0.0;
        ps.into_iter()
            .filter(|(share, _)| {
                total += 1.0 / *share as f64;
                total <= 1.0 + 1e-9
            })
            .collect()
    })
}

fn scenario_text(ps: &[(u64, Actions)], strategy: &str, plugin: &str) -> String {
    let mut s = format!(
        "name = \"vbs\"\npolicy = \"vbs\"\nduration = \"1s\"\n\n[vbs]\nstrategy = \"{strategy}\"\n\
         plugin = \"{plugin}\"\nquantum = \"1ms\"\nresolution-bits = 10\n"
    );
    for (i, (share, actions)) in ps.iter().enumerate() {
        let steps: Vec<String> = actions
            .iter()
            .map(|(l, lambda, pi)| {
                format!("{{ action = \"{l}ms\", limit = \"{lambda}ms\", period = \"{pi}ms\" }}")
            })
            .collect();
        s.push_str(&format!(
            "\n[[task]]\nname = \"p{i}\"\ncap = \"1/{share}\"\nscript = [{}]\n",
            steps.join(", ")
        ));
    }
    s
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The machine's task slices, (task, start ms, end ms), merged and sorted.
fn machine_slices(ps: &[(u64, Actions)], strategy: &str, plugin: &str) -> Vec<(u32, u64, u64)> {
    let text = scenario_text(ps, strategy, plugin);
    let scenario = bulwark_spec::parse(&text, "vbs.toml").expect("valid");
    let options = Options {
        record_trace: true,
        ..Options::default()
    };
    let outcome = bulwark_sim::run(&scenario, &options).expect("runs");
    let mut slices: Vec<(u32, u64, u64)> = outcome
        .trace
        .unwrap()
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Task)
        .map(|s| {
            (
                s.task.unwrap().0,
                s.start.as_nanos() / 1_000_000,
                s.end.as_nanos() / 1_000_000,
            )
        })
        .collect();
    slices.sort_by_key(|s| (s.1, s.0));
    slices
}

/// The same processes built as a `VbsSystem`, loads disclosed to the scheduler or not:
/// their action slices as (task, start ms, end ms), merged per task and sorted.
fn system_slices(
    ps: &[(u64, Actions)],
    strategy: ReleaseStrategy,
    plugin: VbsPlugin,
    disclose: bool,
) -> Vec<(u32, u64, u64)> {
    let mut system = VbsSystem::new(strategy, ms(1), 10, Duration::from_secs(1));
    system.plugin = plugin;
    for (share, a) in ps {
        system.processes.push(VbsProcess {
            cap: BandwidthCap::from_ratio(1, *share).unwrap(),
            arrival: Duration::ZERO,
            actions: a
                .iter()
                .map(|&(l, lambda, pi)| Action::new(ms(l), Resource::new(ms(lambda), ms(pi))))
                .collect(),
        });
    }
    let options = VbsOptions {
        disclose_loads: disclose,
        check_invariants: true,
    };
    let records = bulwark_sim::run_vbs(&system.scenario().unwrap(), &Options::default(), options)
        .expect("runs")
        .records;
    let m = |i: Instant| i.as_nanos() / 1_000_000;
    let mut slices: Vec<(u32, u64, u64)> = records
        .slices
        .iter()
        .map(|s| (s.task.0, m(s.start), m(s.end)))
        .collect();
    slices.sort_by_key(|s| (s.1, s.0));
    merge(slices)
}

/// Merges a task's back-to-back slices (the records split them at action boundaries).
fn merge(slices: Vec<(u32, u64, u64)>) -> Vec<(u32, u64, u64)> {
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    for s in slices {
        match out.last_mut() {
            Some(last) if last.0 == s.0 && last.2 == s.1 => last.2 = s.2,
            _ => out.push(s),
        }
    }
    out
}

/// One VBS process as the reference steps it (VBS paper, section IV), in milliseconds.
#[derive(Clone, Debug)]
struct Stepped {
    actions: Actions,
    /// The action being served; `actions.len()` once the script is done.
    action: usize,
    load: u64,
    /// `d` and `λ^c` of its current period instance.
    deadline: u64,
    limit: u64,
    /// When it last entered the queues: its period's release `r`, or the instant it went on
    /// within its period with a new action. It runs from then; ties between equal deadlines
    /// go to the earlier.
    queued: u64,
    /// Its place among equal (deadline, queued): smaller first.
    place: i64,
}

/// The end of the period of `period` in which `t` falls, `kπ` with `t ∈ ((k-1)π, kπ]`.
fn period_end(t: u64, period: u64) -> u64 {
    t.div_ceil(period) * period
}

/// `(r, d, λ^c)` of an action `(λ, π)` arriving at `base` (section IV): late `r = kπ`,
/// `d = (k + 1)π`, `λ`; early `r = base`, `d = kπ`, `floor((d - r) λ / π)`, with
/// `base ∈ ((k-1)π, kπ]`, or the late values when that limit is zero.
fn released(base: u64, limit: u64, period: u64, early: bool) -> (u64, u64, u64) {
    let end = period_end(base, period);
    let scaled = (end - base) * limit / period;
    if early && scaled > 0 {
        (base, end, scaled)
    } else {
        (end, end + period, limit)
    }
}

/// The reference schedule of `ps` over `horizon` ms: each process's run slices, merged.
///
/// Each millisecond the released process with the earliest deadline runs; ties go to the one
/// that entered the queues earlier (its period's release, or when it went on within its
/// period), then to the first in, and a process that ran stays ahead of its equals (it is
/// requeued at their front). When its load is done the action completes (ahead
/// of a limit reached at the same time) and the next one arrives at once, behind its equals
/// ("moved to Ready"): with the same resource inside the current period it keeps `r`, `d`
/// and the limit left (a limit left of zero is the limit case below); otherwise it is
/// released from the termination, the end of the period in which the action completed, by
/// the strategy. A used-up limit moves the process to its next period, `late` from now.
fn reference_slices(ps: &[(u64, Actions)], early: bool, horizon: u64) -> Vec<(u32, u64, u64)> {
    let mut next_place = 0i64;
    let mut processes: Vec<Stepped> = ps
        .iter()
        .map(|(_, actions)| {
            let (_, limit, period) = actions[0];
            let (release, deadline, limit) = released(0, limit, period, early);
            next_place += 1;
            Stepped {
                actions: actions.clone(),
                action: 0,
                load: actions[0].0,
                deadline,
                limit,
                queued: release,
                place: next_place,
            }
        })
        .collect();
    let mut front = 0i64;
    let mut slices = Vec::new();
    for now in 0..horizon {
        let chosen = (0..processes.len())
            .filter(|&i| {
                let p = &processes[i];
                p.action < p.actions.len() && p.queued <= now
            })
            .min_by_key(|&i| {
                let p = &processes[i];
                (p.deadline, p.queued, p.place)
            });
        let Some(i) = chosen else { continue };
        slices.push((i as u32, now, now + 1));
        front -= 1;
        let p = &mut processes[i];
        p.place = front;
        p.load -= 1;
        p.limit -= 1;
        let t = now + 1;
        if p.load == 0 {
            let (_, limit, period) = p.actions[p.action];
            let termination = period_end(t, period);
            p.action += 1;
            let Some(&(load, next_limit, next_period)) = p.actions.get(p.action) else {
                continue;
            };
            p.load = load;
            let within = (next_limit, next_period) == (limit, period) && t < p.deadline;
            if within && p.limit > 0 {
                // "Moved to Ready" as an arrival, now: behind its equals.
                next_place += 1;
                (p.queued, p.place) = (t, next_place);
                continue;
            }
            let (release, deadline, limit) = if within {
                // The limit left is zero: the limit case.
                released(t, limit, period, false)
            } else {
                released(termination, next_limit, next_period, early)
            };
            next_place += 1;
            (p.deadline, p.limit) = (deadline, limit);
            (p.queued, p.place) = (release, next_place);
        } else if p.limit == 0 {
            // The limit case: the late values from now.
            let (_, limit, period) = p.actions[p.action];
            let (release, deadline, limit) = released(t, limit, period, false);
            next_place += 1;
            (p.deadline, p.limit) = (deadline, limit);
            (p.queued, p.place) = (release, next_place);
        }
    }
    merge(slices)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A scenario file's processes (loads hidden, as the file format has it) are scheduled
    /// as the same processes built as a system, and telling the scheduler the loads changes
    /// nothing: the process marks each completion at the instant the scheduler would have
    /// computed. The schedules themselves are checked against the paper by hand in
    /// `vbs_examples.rs` and against its guarantees in `vbs_properties.rs`.
    #[test]
    fn scenario_files_and_systems_schedule_alike(ps in processes()) {
        for (name, strategy) in [("early", ReleaseStrategy::Early), ("late", ReleaseStrategy::Late)] {
            for (plugin_name, plugin) in
                [("tree", VbsPlugin::Tree), ("list", VbsPlugin::List), ("array", VbsPlugin::Array)]
            {
                let from_file = machine_slices(&ps, name, plugin_name);
                prop_assert!(!from_file.is_empty());
                let hidden = system_slices(&ps, strategy, plugin, false);
                let disclosed = system_slices(&ps, strategy, plugin, true);
                prop_assert_eq!(&from_file, &hidden, "{} {}", name, plugin_name);
                prop_assert_eq!(&hidden, &disclosed, "{} {} disclosed", name, plugin_name);
            }
        }
    }
}

/// Two to four processes of cap 1/4 whose resources are (1, 4), (1, 8) or (2, 8): equal
/// deadlines are the rule, so the tie rules decide most schedules.
fn contended() -> impl Strategy<Value = Vec<(u64, Actions)>> {
    let action = (
        1u64..=6,
        prop_oneof![Just((1, 4)), Just((1, 8)), Just((2, 8))],
    )
        .prop_map(|(load, (limit, period))| (load, limit, period));
    let process = proptest::collection::vec(action, 1..=3).prop_map(|actions| (4, actions));
    proptest::collection::vec(process, 2..=4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The machine schedules as the reference, under both release strategies.
    #[test]
    fn scenario_files_schedule_as_the_reference(
        ps in prop_oneof![processes(), contended()],
    ) {
        for (name, early) in [("early", true), ("late", false)] {
            let expected = reference_slices(&ps, early, 1000);
            prop_assert_eq!(machine_slices(&ps, name, "tree"), expected, "{}", name);
        }
    }
}

/// By hand, one process alone: (5, (2, 4)) then (2, (1, 2)) with cap 1/2, early. The first
/// action is released at 0 with deadline 4 and runs 2 per period of 4: [0, 2), [4, 6),
/// [8, 9); it completes at 9 and terminates at 12, the end of that period, when the second
/// action is released (12 is a period boundary of 2 too) and runs [12, 13), [14, 15).
#[test]
fn one_process_by_hand() {
    let ps = vec![(2, vec![(5, 2, 4), (2, 1, 2)])];
    let slices = machine_slices(&ps, "early", "tree");
    assert_eq!(
        slices,
        [(0, 0, 2), (0, 4, 6), (0, 8, 9), (0, 12, 13), (0, 14, 15)]
    );
}
