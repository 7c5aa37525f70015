//! The sweep engine: generators stay in range, the tests keep the dominance relations the
//! theory proves, and the results do not depend on threads or shards.

use bulwark_analysis::classic::Task;
use bulwark_analysis::generate::{self, PPB};
use bulwark_analysis::sweep::run::{self, Shard};
use bulwark_analysis::sweep::{sets, verdict};
use bulwark_spec::sweep_toml::{Experiment, PeriodKind, UtilisationGenerator, SWEEP_TESTS};
use proptest::prelude::*;

fn experiment(fraction: f64, kind: PeriodKind) -> Experiment {
    Experiment {
        name: "test".into(),
        seed: 11,
        sets_per_point: 30,
        generator: UtilisationGenerator::UUniFast,
        period_kind: kind,
        period_min: 1_000_000,
        period_max: 1_000_000_000,
        constrained_fraction: fraction,
        task_counts: vec![3, 6],
        utilisations_ppb: vec![300_000_000, 600_000_000, 800_000_000, 950_000_000],
        tests: SWEEP_TESTS.iter().map(|s| s.to_string()).collect(),
        simulate: false,
        cost: None,
        non_preemptive: 0,
        vbs_periods_per_job: 4,
        mcipc_server: None,
        components: None,
        criticality: None,
        cores: None,
    }
}

fn accepts(test: &str, tasks: &[Task]) -> bool {
    verdict::accepts(test, tasks)
}

proptest! {
    /// UUniFast and UUniSort: every share in [0, U] (so in [0, 1]) and the shares sum to U
    /// up to the rounding of each share to a ppb (at most n/2 ppb away).
    #[test]
    fn shares_sum_to_the_utilisation(n in 1usize..40, total in 1u64..=PPB, seed: u64) {
        for sort in [false, true] {
            let mut rng = sets::set_rng(seed, 0, 0);
            let shares = if sort {
                generate::uunisort(n, total, &mut rng)
            } else {
                generate::uunifast(n, total, &mut rng)
            };
            prop_assert_eq!(shares.len(), n);
            prop_assert!(shares.iter().all(|&u| u <= total && u <= PPB));
            let sum: u64 = shares.iter().sum();
            prop_assert!(sum.abs_diff(total) <= n as u64, "sum {} vs {}", sum, total);
        }
    }

    /// Periods stay in [min, max]; harmonic ones are min times a power of 2.
    #[test]
    fn periods_stay_in_range(min in 1u64..1_000_000_000, factor in 1u64..1000, seed: u64) {
        let max = min.saturating_mul(factor);
        let mut rng = sets::set_rng(seed, 1, 2);
        for kind in [PeriodKind::LogUniform, PeriodKind::Uniform, PeriodKind::Harmonic] {
            let period = sets::period(kind, min, max, &mut rng);
            prop_assert!((min..=max).contains(&period), "{:?} {} not in [{}, {}]", kind, period, min, max);
            if kind == PeriodKind::Harmonic {
                prop_assert_eq!(period % min, 0);
                prop_assert!((period / min).is_power_of_two());
            }
        }
    }

    /// Dominance on implicit-deadline sets, by theory: Liu-Layland => hyperbolic (Bini et al.
    /// 2003 show the hyperbolic bound dominates it) => RM is schedulable (both are sufficient
    /// for RM); RM schedulable => EDF schedulable (EDF is optimal); EDF with implicit
    /// deadlines is exactly U <= 1.
    #[test]
    fn implicit_deadline_dominance(set: u64, n in 1usize..8, u in 50_000_000u64..=PPB) {
        let e = experiment(0.0, PeriodKind::LogUniform);
        let tasks = sets::draw(&e, 0, set, n, u);
        let verdicts: Vec<bool> = SWEEP_TESTS.iter().map(|t| accepts(t, &tasks)).collect();
        let [rm, dm, opa, qpa, edf_u, ll, hyp] = verdicts[..] else { unreachable!() };
        prop_assert!(!ll || hyp);
        prop_assert!(!hyp || rm);
        prop_assert!(!rm || qpa);
        prop_assert_eq!(edf_u, qpa);
        // D = T: DM is RM, and RM is optimal among fixed priorities (Liu and Layland).
        prop_assert_eq!(rm, dm);
        prop_assert_eq!(rm, opa);
    }

    /// Constrained deadlines: DM schedulable => Audsley finds an order (OPA is optimal for
    /// RTA), and any fixed-priority schedule => EDF schedulable; U <= 1 is necessary.
    #[test]
    fn constrained_deadline_dominance(set: u64, n in 1usize..8, u in 50_000_000u64..=PPB) {
        let e = experiment(1.0, PeriodKind::LogUniform);
        let tasks = sets::draw(&e, 3, set, n, u);
        prop_assert!(tasks.iter().all(|t| t.wcet <= t.deadline && t.deadline <= t.period));
        let rm = accepts("fp-rta-rm", &tasks);
        let dm = accepts("fp-rta-dm", &tasks);
        let opa = accepts("fp-audsley", &tasks);
        let qpa = accepts("edf-qpa", &tasks);
        prop_assert!(!rm || opa);
        prop_assert!(!dm || opa);
        prop_assert!(!opa || qpa);
        prop_assert!(!qpa || accepts("edf-utilisation", &tasks));
    }
}

/// By hand: (1, 2) and (1, 3) have U = 5/6 = 0.8333 > 2 (sqrt 2 - 1) = 0.8284, so the
/// Liu-Layland bound refuses them, while (1 + 1/2)(1 + 1/3) = 2 <= 2, so the hyperbolic bound
/// accepts them (exactly at the bound); RTA: R_2 = 1 + ceil(2/2) 1 = 2 <= 3.
#[test]
fn hyperbolic_accepts_what_liu_layland_refuses() {
    let tasks = [Task::new("a", 1, 2), Task::new("b", 1, 3)];
    assert!(!accepts("liu-layland", &tasks));
    assert!(accepts("hyperbolic", &tasks));
    assert!(accepts("fp-rta-rm", &tasks));
    // One more nanosecond of work: (3/2)(5/3) = 2.5 > 2, and U = 7/6 > 1.
    let heavier = [Task::new("a", 1, 2), Task::new("b", 2, 3)];
    assert!(!accepts("hyperbolic", &heavier));
    assert!(!accepts("edf-qpa", &heavier));
    // A constrained deadline makes both bounds answer no.
    let constrained = [Task::new("a", 1, 4).with_deadline(3)];
    assert!(!accepts("liu-layland", &constrained));
    assert!(!accepts("hyperbolic", &constrained));
    assert!(accepts("fp-rta-rm", &constrained));
}

/// At U = 0.3 every set of 3 or 6 implicit-deadline tasks is under the Liu-Layland bound
/// (0.7798 for 3, 0.7348 for 6; rounding C to the ns adds at most 6 * 0.5 ns / 1 ms), so
/// every test accepts every set there.
#[test]
fn low_utilisation_is_accepted_by_every_test() {
    let e = experiment(0.0, PeriodKind::LogUniform);
    let counts = run::run(&e, Shard::WHOLE, &|_| ());
    for p in counts
        .points
        .iter()
        .filter(|p| p.point.utilisation_ppb == 300_000_000)
    {
        assert_eq!(p.sets, 30);
        assert!(p.accepted.iter().all(|&a| a == 30), "{p:?}");
    }
    // Every point drew its sets.
    assert_eq!(counts.points.len(), 8);
    assert!(counts.points.iter().all(|p| p.sets == 30));
}

/// Four shards merged, in any order, give the single run's CSV and JSON byte for byte.
#[test]
fn shards_merge_to_the_single_run() {
    let e = experiment(0.5, PeriodKind::Uniform);
    let whole = run::run(&e, Shard::WHOLE, &|_| ());
    let mut parts: Vec<run::Counts> = (0..4)
        .map(|index| {
            let part = run::run(&e, Shard { index, count: 4 }, &|_| ());
            // Through the file format, as the CLI does.
            run::Counts::from_json(&part.to_json()).unwrap()
        })
        .collect();
    parts.reverse();
    let merged = run::merge(&parts).unwrap();
    assert!(merged.complete());
    assert_eq!(merged.csv(), whole.csv());
    assert_eq!(merged.results_json(), whole.results_json());
    // A shard given twice is refused.
    let twice = [parts[0].clone(), parts[0].clone()];
    assert!(run::merge(&twice).is_err());
    // Three of four shards are not complete.
    assert!(!run::merge(&parts[..3]).unwrap().complete());
}

/// One thread and two threads give the same results.
#[test]
fn thread_count_does_not_change_results() {
    let e = experiment(0.5, PeriodKind::Harmonic);
    let on = |threads| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| run::run(&e, Shard::WHOLE, &|_| ()))
    };
    let (one, two) = (on(1), on(2));
    assert_eq!(one.csv(), two.csv());
    assert_eq!(one.results_json(), two.results_json());
}

#[test]
fn shards_parse() {
    assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
    assert!(Shard::parse("4/4").is_err());
    assert!(Shard::parse("0/0").is_err());
    assert!(Shard::parse("x").is_err());
}

/// A shard file whose counts do not match its tests is refused, not indexed out of range.
#[test]
fn inconsistent_shard_files_are_refused() {
    let e = experiment(0.0, PeriodKind::Uniform);
    let part = run::run(&e, Shard { index: 0, count: 2 }, &|_| ());
    let mut short = part.clone();
    short.points[0].accepted.pop();
    assert!(run::Counts::from_json(&short.to_json()).is_err());
    let mut over = part.clone();
    over.points[0].accepted[0] = over.points[0].sets + 1;
    assert!(run::Counts::from_json(&over.to_json()).is_err());
    assert!(run::Counts::from_json(&part.to_json()).is_ok());
}

proptest! {
    /// Harmonic periods and implicit deadlines: RM is schedulable exactly when U <= 1 (Kuo
    /// and Mok 1991), so fp-rta-rm, edf-utilisation and edf-qpa agree on every such set.
    #[test]
    fn harmonic_rate_monotonic_is_exactly_utilisation_one(set: u64, n in 1usize..8, u in 800_000_000u64..=PPB) {
        let e = experiment(0.0, PeriodKind::Harmonic);
        let tasks = sets::draw(&e, 5, set, n, u);
        let rm = accepts("fp-rta-rm", &tasks);
        prop_assert_eq!(rm, accepts("edf-utilisation", &tasks));
        prop_assert_eq!(rm, accepts("edf-qpa", &tasks));
    }
}
