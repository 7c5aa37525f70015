//! Properties of VBS process sets run to completion on the scenario machine (no kernel
//! costs), over random inputs: random process sets with caps summing to at most one, random
//! first arrivals, under both release strategies and all four plugins, meet Eq. (1) for every
//! action, respect every resource's capacity in every period window, and produce one
//! identical schedule, whether the scheduler knows the loads or not.

use std::collections::BTreeMap;

use bulwark_core::bandwidth::vbs::{Action, BandwidthCap, ReleaseStrategy, Resource};
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Options, VbsOptions, VbsProcess, VbsRecords, VbsSystem};
use bulwark_spec::VbsPlugin;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// Random process sets run to completion.

/// 2^7 instants of 1 µs: periods up to 32 µs.
const BITS: u32 = 7;
const QUARTER: u64 = 32;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// A process: its cap in 64ths, first arrival, and actions (load, limit, period) in µs.
#[derive(Clone, Debug)]
struct Spec {
    weight: u64,
    arrival: u64,
    actions: Vec<(u64, u64, u64)>,
}

fn process_set() -> impl Strategy<Value = Vec<Spec>> {
    let raw_process = (
        2u64..=16,
        0u64..40,
        proptest::collection::vec((any::<u64>(), any::<u64>(), 1u64..=20), 1..=4),
    );
    (proptest::collection::vec(raw_process, 1..=5), any::<bool>())
        .prop_filter("caps sum to at most one", |(ps, _)| {
            ps.iter().map(|p| p.0).sum::<u64>() <= 64
        })
        .prop_map(|(ps, fill)| {
            let total: u64 = ps.iter().map(|p| p.0).sum();
            let n = ps.len();
            ps.into_iter()
                .enumerate()
                .map(|(i, (weight, arrival, raw))| {
                    // Optionally top the last process up so the caps sum to exactly one.
                    let weight = if fill && i + 1 == n {
                        weight + 64 - total
                    } else {
                        weight
                    };
                    let shortest = 64u64.div_ceil(weight);
                    let actions = raw
                        .into_iter()
                        .map(|(a, b, load)| {
                            let period = shortest + a % (QUARTER - shortest + 1);
                            let most = period * weight / 64;
                            (load, 1 + b % most, period)
                        })
                        .collect();
                    Spec {
                        weight,
                        arrival,
                        actions,
                    }
                })
                .collect()
        })
}

fn actions_of(specs: &[Spec]) -> Vec<Vec<Action>> {
    specs
        .iter()
        .map(|s| {
            s.actions
                .iter()
                .map(|&(l, lambda, pi)| Action::new(us(l), Resource::new(us(lambda), us(pi))))
                .collect()
        })
        .collect()
}

fn run_set(
    plugin: VbsPlugin,
    specs: &[Spec],
    actions: &[Vec<Action>],
    strategy: ReleaseStrategy,
    disclose: bool,
) -> VbsRecords {
    let mut system = VbsSystem::new(strategy, us(1), BITS, Duration::from_secs(1));
    system.plugin = plugin;
    system.processes = specs
        .iter()
        .zip(actions)
        .map(|(s, a)| VbsProcess {
            cap: BandwidthCap::from_ratio(s.weight, 64).unwrap(),
            arrival: us(s.arrival),
            actions: a.clone(),
        })
        .collect();
    let options = VbsOptions {
        disclose_loads: disclose,
        // The matrix's own check reads all t^2 cells; its invariants are checked after every
        // call in `bulwark-core`'s kernel-call property, on smaller horizons.
        check_invariants: plugin != VbsPlugin::Matrix,
    };
    let scenario = system.scenario().unwrap();
    bulwark_sim::run_vbs(&scenario, &Options::default(), options)
        .unwrap_or_else(|e| panic!("{plugin:?}: {e}"))
        .records
}

/// Eq. (1): ceil(l/λ) π + π - 1 (see `vbs_examples.rs` for its derivation).
fn eq1(l: u64, lambda: u64, pi: u64) -> u64 {
    l.div_ceil(lambda) * pi + pi - 1
}

/// Checks one run against the paper's guarantees.
fn check_run(
    specs: &[Spec],
    run: &VbsRecords,
    strategy: ReleaseStrategy,
) -> Result<(), TestCaseError> {
    let micros = |t: Instant| t.as_nanos() / 1000;
    let total: usize = specs.iter().map(|s| s.actions.len()).sum();
    prop_assert_eq!(run.actions.len(), total, "every action completes");
    for a in &run.actions {
        let (l, lambda, pi) = specs[a.task.0 as usize].actions[a.action];
        let s = micros(a.termination) - micros(a.arrival);
        prop_assert!(s <= eq1(l, lambda, pi), "{:?}: s = {} > Eq. (1)", a, s);
        // Termination: the end of the period of the completion.
        prop_assert_eq!(
            micros(a.termination),
            micros(a.completion).div_ceil(pi) * pi
        );
        let continues = a.action > 0 && {
            let prev = specs[a.task.0 as usize].actions[a.action - 1];
            (prev.1, prev.2) == (lambda, pi)
        };
        if !continues {
            if strategy == ReleaseStrategy::Late {
                // The late strategy's lower bound: ceil(l/λ) whole periods from a release
                // at or after arrival.
                prop_assert!(
                    s >= l.div_ceil(lambda) * pi,
                    "{:?}: s = {} below the late bound",
                    a,
                    s
                );
            }
            // Nothing of the action runs before its arrival (the previous termination).
            let first = run
                .slices
                .iter()
                .find(|x| x.task == a.task && x.action == a.action)
                .map(|x| x.start);
            prop_assert!(first.is_some_and(|f| f >= a.arrival), "{:?} ran early", a);
        }
    }
    // Capacity: a process uses a resource at most λ in every window [kπ, (k+1)π).
    let mut used: BTreeMap<(u32, u64, u64, u64), u64> = BTreeMap::new();
    for x in &run.slices {
        let (_, lambda, pi) = specs[x.task.0 as usize].actions[x.action];
        let (start, end) = (micros(x.start), micros(x.end));
        for k in start / pi..=(end - 1) / pi {
            let overlap = end.min((k + 1) * pi) - start.max(k * pi);
            *used.entry((x.task.0, lambda, pi, k)).or_default() += overlap;
        }
    }
    for ((task, lambda, pi, k), u) in used {
        prop_assert!(
            u <= lambda,
            "task {} used {} > {} in window {} of {}",
            task,
            u,
            lambda,
            k,
            pi
        );
    }
    // One processor: slices never overlap.
    let mut slices = run.slices.clone();
    slices.sort_by_key(|x| x.start);
    for w in slices.windows(2) {
        prop_assert!(w[0].end <= w[1].start, "overlapping slices {:?}", w);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn process_sets_meet_the_papers_guarantees(specs in process_set()) {
        let actions = actions_of(&specs);
        for strategy in [ReleaseStrategy::Early, ReleaseStrategy::Late] {
            let list = run_set(VbsPlugin::List, &specs, &actions, strategy, true);
            check_run(&specs, &list, strategy)?;
            let array = run_set(VbsPlugin::Array, &specs, &actions, strategy, true);
            let matrix = run_set(VbsPlugin::Matrix, &specs, &actions, strategy, true);
            let tree = run_set(VbsPlugin::Tree, &specs, &actions, strategy, true);
            prop_assert_eq!(&list.slices, &array.slices, "list vs array");
            prop_assert_eq!(&list.slices, &matrix.slices, "list vs matrix");
            prop_assert_eq!(&list.slices, &tree.slices, "list vs tree");
            prop_assert_eq!(&list.periods, &tree.periods);
            prop_assert_eq!(&list.actions, &matrix.actions);
            // Loads the scheduler does not know, completions marked by the processes: the
            // forced invocations give the same schedule.
            let hidden = run_set(VbsPlugin::Tree, &specs, &actions, strategy, false);
            prop_assert_eq!(&list.slices, &hidden.slices, "unknown loads");
        }
    }
}
