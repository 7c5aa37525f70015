//! VBS on the machine: a scenario of VBS processes (scripts of actions) run with no kernel
//! costs gives exactly the schedule of `bulwark_core`'s own one-CPU driver (`vbs::run::run`)
//! with loads hidden from the scheduler, as the machine hides them, for every plugin and both
//! release strategies. The core's tests check that schedule against the paper (Fig. 1, P(0.5),
//! Eq. (1)); this checks that the machine drives the policy the same way.

use bulwark_core::bandwidth::vbs::run::{run, ProcessScript, RunOptions};
use bulwark_core::bandwidth::vbs::{
    Action, ArrayQueue, BandwidthCap, ListQueue, ReleaseStrategy, Resource, TreeQueue, Vbs,
    VbsConfig, VbsQueue,
};
use bulwark_core::{Duration, Instant, TaskId};
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

/// The core driver's slices for the same processes, loads hidden.
fn driver_slices<Q: VbsQueue>(
    ps: &[(u64, Actions)],
    strategy: ReleaseStrategy,
) -> Vec<(u32, u64, u64)> {
    let config = VbsConfig::new(strategy)
        .with_quantum(ms(1))
        .with_horizon_bits(10);
    let mut vbs = Vbs::<Q>::with_capacity(ps.len(), config).unwrap();
    let actions: Vec<Vec<Action>> = ps
        .iter()
        .map(|(_, a)| {
            a.iter()
                .map(|&(l, lambda, pi)| Action::new(ms(l), Resource::new(ms(lambda), ms(pi))))
                .collect()
        })
        .collect();
    let scripts: Vec<ProcessScript<'_>> = ps
        .iter()
        .enumerate()
        .map(|(i, (share, _))| ProcessScript {
            task: TaskId(i as u32),
            cap: BandwidthCap::from_ratio(1, *share).unwrap(),
            arrival: Instant::ZERO,
            actions: &actions[i],
        })
        .collect();
    let options = RunOptions {
        disclose_loads: false,
        check_invariants: true,
        until: Instant::from_nanos(1_000_000_000),
    };
    let result = run(&mut vbs, &scripts, options).unwrap();
    let mut slices: Vec<(u32, u64, u64)> = result
        .slices
        .iter()
        .map(|s| {
            (
                s.task.0,
                s.start.as_nanos() / 1_000_000,
                s.end.as_nanos() / 1_000_000,
            )
        })
        .collect();
    slices.sort_by_key(|s| (s.1, s.0));
    merge(slices)
}

/// Merges a task's back-to-back slices (the driver splits them at action boundaries).
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_machine_schedules_vbs_processes_as_the_core_driver_does(ps in processes()) {
        for (name, strategy) in [("early", ReleaseStrategy::Early), ("late", ReleaseStrategy::Late)] {
            let expected = driver_slices::<TreeQueue>(&ps, strategy);
            prop_assert!(!expected.is_empty());
            prop_assert_eq!(&machine_slices(&ps, name, "tree"), &expected, "{} tree", name);
            prop_assert_eq!(&machine_slices(&ps, name, "list"), &driver_slices::<ListQueue>(&ps, strategy));
            prop_assert_eq!(&machine_slices(&ps, name, "array"), &driver_slices::<ArrayQueue>(&ps, strategy));
        }
    }
}

/// The machine's records and the core driver's for the same processes arriving at
/// `arrivals` (ms), loads disclosed or not: (actions, periods) as plain tuples.
type Records = (
    Vec<(u32, usize, u64, u64, u64)>,
    Vec<(u32, usize, u64, u64, u64)>,
);

fn machine_records(
    ps: &[(u64, Actions)],
    arrivals: &[u64],
    strategy: ReleaseStrategy,
    disclose: bool,
) -> Records {
    let mut system = VbsSystem::new(strategy, ms(1), 10, Duration::from_secs(1));
    system.plugin = VbsPlugin::Tree;
    for (i, (share, a)) in ps.iter().enumerate() {
        system.processes.push(VbsProcess {
            cap: BandwidthCap::from_ratio(1, *share).unwrap(),
            arrival: ms(arrivals[i]),
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
    (
        records
            .actions
            .iter()
            .map(|r| {
                (
                    r.task.0,
                    r.action,
                    m(r.arrival),
                    m(r.completion),
                    m(r.termination),
                )
            })
            .collect(),
        records
            .periods
            .iter()
            .map(|r| {
                (
                    r.task.0,
                    r.action,
                    m(r.release),
                    m(r.deadline),
                    r.executed.as_nanos() / 1_000_000,
                )
            })
            .collect(),
    )
}

fn driver_records(
    ps: &[(u64, Actions)],
    arrivals: &[u64],
    strategy: ReleaseStrategy,
    disclose: bool,
) -> Records {
    let config = VbsConfig::new(strategy)
        .with_quantum(ms(1))
        .with_horizon_bits(10);
    let mut vbs = Vbs::<TreeQueue>::with_capacity(ps.len(), config).unwrap();
    let actions: Vec<Vec<Action>> = ps
        .iter()
        .map(|(_, a)| {
            a.iter()
                .map(|&(l, lambda, pi)| Action::new(ms(l), Resource::new(ms(lambda), ms(pi))))
                .collect()
        })
        .collect();
    let scripts: Vec<ProcessScript<'_>> = ps
        .iter()
        .enumerate()
        .map(|(i, (share, _))| ProcessScript {
            task: TaskId(i as u32),
            cap: BandwidthCap::from_ratio(1, *share).unwrap(),
            arrival: Instant::from_nanos(arrivals[i] * 1_000_000),
            actions: &actions[i],
        })
        .collect();
    let options = RunOptions {
        disclose_loads: disclose,
        check_invariants: true,
        until: Instant::from_nanos(1_000_000_000),
    };
    let run = run(&mut vbs, &scripts, options).unwrap();
    let m = |i: Instant| i.as_nanos() / 1_000_000;
    (
        run.actions
            .iter()
            .map(|r| {
                (
                    r.task.0,
                    r.action,
                    m(r.arrival),
                    m(r.completion),
                    m(r.termination),
                )
            })
            .collect(),
        run.periods
            .iter()
            .map(|r| {
                (
                    r.task.0,
                    r.action,
                    m(r.release),
                    m(r.deadline),
                    r.executed.as_nanos() / 1_000_000,
                )
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_machine_records_what_the_core_driver_records(
        ps in processes(),
        arrivals in proptest::collection::vec(0u64..=20, 4),
    ) {
        for strategy in [ReleaseStrategy::Early, ReleaseStrategy::Late] {
            for disclose in [false, true] {
                let expected = driver_records(&ps, &arrivals, strategy, disclose);
                prop_assert_eq!(
                    machine_records(&ps, &arrivals, strategy, disclose),
                    expected,
                    "{:?} disclose {}", strategy, disclose
                );
            }
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
