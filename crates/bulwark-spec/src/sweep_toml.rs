//! Schedulability-sweep experiment files (`bulwark sweep EXPERIMENT.toml`): which random task
//! sets to draw, over which axes, and which schedulability tests to compare on them.
//!
//! ```
//! let text = r#"
//! name = "fp-vs-edf"
//! seed = 7
//! sets-per-point = 100
//! generator = "uunifast"
//! tasks = [4, 8]
//! tests = ["fp-rta-rm", "edf-qpa"]
//!
//! [periods]
//! kind = "log-uniform"
//! min = "10ms"
//! max = "1s"
//!
//! [utilisation]
//! from = 0.5
//! to = 1.0
//! step = 0.25
//! "#;
//! let experiment = bulwark_spec::parse_sweep(text, "fp-vs-edf.toml").unwrap();
//! assert_eq!(experiment.task_counts, vec![4, 8]);
//! assert_eq!(experiment.utilisations_ppb, vec![500_000_000, 750_000_000, 1_000_000_000]);
//!
//! let wrong = text.replace("\"edf-qpa\"", "\"edf-exact\"");
//! let errors = bulwark_spec::parse_sweep(&wrong, "fp-vs-edf.toml").unwrap_err();
//! assert_eq!(
//!     errors.errors()[0].to_string(),
//!     "fp-vs-edf.toml:7:23: unknown test `edf-exact`"
//! );
//! ```

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::{Diagnostics, Source, SpecError};
use crate::model::CostModel;
use crate::raw::RawCost;
use crate::{toml_error, units};

/// The tests on plain task sets a sweep can compare, by their names in experiment files (the
/// reservation tests are [`SERVER_TESTS`]).
pub const SWEEP_TESTS: [&str; 7] = [
    "fp-rta-rm",
    "fp-rta-dm",
    "fp-audsley",
    "edf-qpa",
    "edf-utilisation",
    "liu-layland",
    "hyperbolic",
];

/// The tests on reservation servers rather than plain task sets: `spr-eq1` puts each task in
/// its own SPR sporadic-server reservation and admits the set by the SPR paper's Eq. 1, with
/// the overheads of Eq. 2 when the file has a `[cost]` table.
pub const SERVER_TESTS: [&str; 1] = ["spr-eq1"];

/// The other papers' admission tests, each on the sweep's sets mapped onto that paper's
/// mechanism:
///
/// - `vbs-eq2` (VBS paper, section III-C): each task a VBS process whose jobs are actions of
///   load `C`, on the least resource `(lambda, pi)` whose Eq. (1) bound spans
///   `vbs-periods-per-job` periods and meets the deadline; the set admitted when every task
///   has such a resource and the caps `lambda / pi` pass Eq. (2), `sum <= 1`.
/// - `mcipc-budget` (MC-IPC paper, sections IV-C and V): each task a client in its own
///   EDF-scheduled sporadic reservation on a cluster of one core, invoking the shared server
///   of the `[mcipc-server]` table `N` times per job; its budget sized by Theorem 1 to
///   `C + N (1 + 2 m K) L` with `m = 1`, and the set admitted when every budget fits its
///   deadline and EDF's exact processor-demand test admits the budgets.
/// - [`COMPONENT_TESTS`] (CAmkES component paper, section 6 and Appendix A): each set mapped
///   onto the Fig. 7 topology with the `[components]` table's Table 3 configuration and
///   work split, then the paper's Eq. 2, Eq. 3, Eq. 4 or exact response-time analysis.
pub const PAPER_TESTS: [&str; 6] = [
    "vbs-eq2",
    "mcipc-budget",
    "component-eq2",
    "component-eq3",
    "component-eq4",
    "component-rta",
];

/// The CAmkES component paper's four tests, each needing the `[components]` table: the
/// hyperbolic bound with blocking (Eq. 2), Liu and Layland with blocking (Eq. 3), the bound
/// for non-unique priorities (Eq. 4) and exact response-time analysis.
pub const COMPONENT_TESTS: [&str; 4] = [
    "component-eq2",
    "component-eq3",
    "component-eq4",
    "component-rta",
];

/// The paper tests `simulate = true` cannot check besides every one of [`MC_TESTS`] and
/// [`GLOBAL_TESTS`] ([`unsimulated_tests`] lists them all).
const UNSIMULATED_PAPER_TESTS: [&str; 6] = [
    "vbs-eq2",
    "mcipc-budget",
    "component-eq2",
    "component-eq3",
    "component-eq4",
    "component-rta",
];

/// The tests `simulate = true` cannot check: the sweep's simulation runs each set on one
/// core under fixed priorities, EDF or SPR, not under these tests' mechanisms (the
/// mixed-criticality and global tests, `vbs-eq2`, `mcipc-budget` and the component tests),
/// so a file asking for both is refused rather than counted as if checked. Each name once.
pub fn unsimulated_tests() -> Vec<&'static str> {
    MC_TESTS
        .iter()
        .chain(GLOBAL_TESTS.iter().filter(|name| !MC_TESTS.contains(name)))
        .chain(&UNSIMULATED_PAPER_TESTS)
        .copied()
        .collect()
}

/// The mixed-criticality tests, on the sweep's sets made Vestal tasks by the `[criticality]`
/// table: `amc-rtb-dm`, Baruah, Burns and Davis's AMC-rtb under deadline-monotonic
/// priorities, which credits the mode switch; and the worst-case reservations a cluster's
/// analysis uses where AMC-rtb does not apply, every high-criticality task at `C^H` and the
/// switch given no credit: `wcr-rta-dm`, the response-time analysis under deadline-monotonic
/// priorities, and `wcr-edf`, the EDF demand test. The first `high-fraction` of each set's
/// tasks (rounded; the generators draw tasks in no particular order) are of high
/// criticality, `C^H = factor * C` (rounded up), the others low; every task's `C^L` is its
/// drawn `C`, so the utilisation axis is the low-mode utilisation. The last two are global
/// tests too: `global-amc-rtb-dm`, AMC-rtb's argument on Bertogna and Cirinei's analysis
/// (what a fixed-priority cluster of more cores gets), and `global-wcr-rta-dm`, that analysis
/// of the worst-case reservations; they read both `[criticality]` and `[multiprocessor]`.
pub const MC_TESTS: [&str; 5] = [
    "amc-rtb-dm",
    "wcr-rta-dm",
    "wcr-edf",
    "global-amc-rtb-dm",
    "global-wcr-rta-dm",
];

/// The global multiprocessor tests, on the sweep's sets as implicit-deadline sporadic tasks
/// on the `[multiprocessor]` table's `cores` identical cores (a set with constrained
/// deadlines is not admitted): `global-edf-gfb`, Goossens, Funk and Baruah's bound `U <= m -
/// (m - 1) U_max`; `global-edf-bcl`, Bertogna, Cirinei and Lipari's interference test; and
/// `global-fp-rta-dm`, Bertogna and Cirinei's response-time analysis under
/// deadline-monotonic priorities; `global-spr-rta-dm`, the same with every task in an SPR
/// server of its `(C, T)`, each server's workload counted from `R + e`. With randfixedsum the
/// utilisation axis may pass 1. The last two are mixed-criticality tests too ([`MC_TESTS`]).
pub const GLOBAL_TESTS: [&str; 6] = [
    "global-edf-gfb",
    "global-edf-bcl",
    "global-fp-rta-dm",
    "global-spr-rta-dm",
    "global-amc-rtb-dm",
    "global-wcr-rta-dm",
];

/// Most cores of `[multiprocessor]`.
pub const MAX_CORES: u64 = 1_024;

/// Every test name a file may list: [`SWEEP_TESTS`], [`SERVER_TESTS`], [`PAPER_TESTS`],
/// [`MC_TESTS`], then the rest of [`GLOBAL_TESTS`] (each name once).
pub fn test_names() -> Vec<&'static str> {
    SWEEP_TESTS
        .iter()
        .chain(&SERVER_TESTS)
        .chain(&PAPER_TESTS)
        .chain(&MC_TESTS)
        .chain(GLOBAL_TESTS.iter().filter(|name| !MC_TESTS.contains(name)))
        .copied()
        .collect()
}

/// `vbs-periods-per-job` when the file does not give it: each job's Eq. (1) bound spans 4
/// resource periods (plus the period of its arrival).
pub const DEFAULT_VBS_PERIODS_PER_JOB: u64 = 4;
/// How the component tests divide each task's execution time among its subtasks
/// (`[components]` `split`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComponentSplit {
    /// `"equal"`: a quarter in its own component and in each CPI of its chain.
    Equal,
    /// `"short-sections"`: 85 % in its own component, 5 % in each CPI.
    ShortSections,
}

/// The CAmkES topology the component tests map each set onto (`[components]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Components {
    /// Table 3's configuration, 1 to 4 (`configuration`, required): the protocols of C, D
    /// and E.
    pub configuration: u8,
    /// The work split (`split`; default [`ComponentSplit::Equal`]).
    pub split: ComponentSplit,
}

/// Most `vbs-periods-per-job`: at a 1 s deadline, 10^6 periods per job are 1 us each; finer
/// resources than that only lose admissions (each needs `pi >= lambda >= 1` ns).
pub const MAX_VBS_PERIODS_PER_JOB: u64 = 1_000_000;
/// Most invocations of the server per job in `[mcipc-server]`.
pub const MAX_SERVER_INVOCATIONS: u64 = 1_000_000;
/// Most clusters the server may be invoked from in `[mcipc-server]` (the paper's `K`).
pub const MAX_SERVER_CLUSTERS: u64 = 4_096;

/// How `amc-rtb-dm` makes a set mixed-criticality (`[criticality]`), in parts per billion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Criticality {
    /// `C^H / C^L` of a high-criticality task (`factor`, 1 to 100; default 2).
    pub factor_ppb: u64,
    /// The fraction of each set's tasks of high criticality (`high-fraction`, 0 to 1;
    /// default 0.5).
    pub high_ppb: u64,
}

/// The shared server every `mcipc-budget` client invokes (`[mcipc-server]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct McIpcServer {
    /// `N`: invocations per job (`invocations`, 0 to [`MAX_SERVER_INVOCATIONS`]; default 1).
    pub invocations: u64,
    /// `L`: the server's longest operation, ns (`operation-length`, required).
    pub operation_length: u64,
    /// `K`: the clusters the server is invoked from (`clusters`, 1 to
    /// [`MAX_SERVER_CLUSTERS`]; default 1, only this task's own).
    pub clusters: u64,
}

/// Most sets per point, points and tasks per set a file may ask for: bounds that keep a
/// mistyped number from asking for years of work or all the memory.
pub const MAX_SETS_PER_POINT: u64 = 100_000_000;
/// Most points on the utilisation axis.
pub const MAX_UTILISATION_POINTS: usize = 100_000;
/// Most tasks in one set.
pub const MAX_TASKS: u64 = 10_000;
/// Most tasks in one set drawn by randfixedsum: its probability table takes `n * min(U + 2, n)`
/// numbers per set (8 MB at 1,000 tasks), so a set of 10,000 tasks above U = 5,000 would take
/// 400 MB per thread.
pub const MAX_RANDFIXEDSUM_TASKS: u64 = 1_000;
/// Most tasks in one set when the sets are also simulated (`simulate = true`): the simulator
/// gives each task its own fixed priority, and priorities are 1 to 254.
pub const MAX_SIMULATED_TASKS: u64 = 254;

/// How the task utilisations of one set are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtilisationGenerator {
    /// UUniFast (Bini and Buttazzo 2005).
    UUniFast,
    /// UUniSort (Bini and Buttazzo 2005).
    UUniSort,
    /// Stafford's randfixedsum (Emberson, Stafford and Davis 2010): each share at most 1, so
    /// the total may exceed one processor, up to the task count.
    RandFixedSum,
}

impl UtilisationGenerator {
    /// Whether sets above one processor (`U > 1`) can be drawn.
    pub fn beyond_one_processor(self) -> bool {
        self == UtilisationGenerator::RandFixedSum
    }
}

/// How task periods are drawn, in nanoseconds, within `min..=max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodKind {
    /// Log-uniform (Emberson, Stafford and Davis 2010).
    LogUniform,
    /// Uniform.
    Uniform,
    /// Uniform over the harmonic chain `min, 2 min, 4 min, ...` up to `max`.
    Harmonic,
}

/// A whole experiment, valid by construction.
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// For reports.
    pub name: String,
    /// The experiment's seed; each set's generator is seeded from it, the point and the set.
    pub seed: u64,
    /// Task sets drawn at each point.
    pub sets_per_point: u64,
    /// How utilisations are split among tasks.
    pub generator: UtilisationGenerator,
    /// How periods are drawn.
    pub period_kind: PeriodKind,
    /// Shortest period, ns (positive).
    pub period_min: u64,
    /// Longest period, ns (at least `period_min`).
    pub period_max: u64,
    /// The fraction of sets (in `[0, 1]`) given constrained deadlines, `D` uniform in
    /// `[C, T]`; the others have implicit deadlines.
    pub constrained_fraction: f64,
    /// The task-count axis (one value for a fixed count).
    pub task_counts: Vec<usize>,
    /// The utilisation axis, in parts per billion, increasing.
    pub utilisations_ppb: Vec<u64>,
    /// The tests to compare, names from [`SWEEP_TESTS`], each once.
    pub tests: Vec<String>,
    /// Whether every set is also simulated, to count the sets a test admitted that then
    /// missed a deadline (`simulate = true`; default false).
    pub simulate: bool,
    /// The kernel costs `spr-eq1` pays per dispatch (Eq. 2), from a `[cost]` table written as
    /// in scenario files; `None` for zero overheads.
    pub cost: Option<CostModel>,
    /// `eta`, the non-preemptive region of every `spr-eq1` server, in ns (0: fully
    /// preemptive; required above 0 with a `[cost]` table).
    pub non_preemptive: u64,
    /// `k`, the resource periods each job's load is spread over by `vbs-eq2`
    /// (`vbs-periods-per-job`, 1 to [`MAX_VBS_PERIODS_PER_JOB`]; default
    /// [`DEFAULT_VBS_PERIODS_PER_JOB`]; only with `vbs-eq2` listed).
    pub vbs_periods_per_job: u64,
    /// The shared server of `mcipc-budget` (`[mcipc-server]`): `Some` exactly when that test
    /// is listed.
    pub mcipc_server: Option<McIpcServer>,
    /// The topology of the component tests (`[components]`): `Some` exactly when one of
    /// [`COMPONENT_TESTS`] is listed.
    pub components: Option<Components>,
    /// The criticality of [`MC_TESTS`] (`[criticality]`): `Some` exactly when one is listed.
    pub criticality: Option<Criticality>,
    /// The cores of [`GLOBAL_TESTS`] (`[multiprocessor]` `cores`, 1 to [`MAX_CORES`]): `Some`
    /// exactly when one is listed.
    pub cores: Option<u16>,
}

/// Reads an experiment from `text`, naming it `file` in diagnostics.
pub fn parse_sweep(text: &str, file: &str) -> Result<Experiment, Diagnostics> {
    let source = Source::new(file, text);
    let raw: RawExperiment = toml::from_str(text)
        .map_err(|e| Diagnostics::new(file, vec![toml_error::located(&source, &e)]))?;
    let mut errors = Vec::new();
    let experiment = check(&source, raw, &mut errors);
    source
        .finish(experiment, errors)
        .map_err(|errors| Diagnostics::new(file, errors))
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a sweep experiment: name, seed, sets-per-point, generator, tasks, tests, \
                 [periods], [utilisation] and optionally simulate, non-preemptive, \
                 vbs-periods-per-job, [deadlines], [cost], [mcipc-server], [components], \
                 [criticality] and [multiprocessor]"
)]
struct RawExperiment {
    name: Spanned<String>,
    seed: u64,
    sets_per_point: Spanned<u64>,
    generator: Spanned<String>,
    tasks: Spanned<RawTaskCounts>,
    tests: Spanned<Vec<Spanned<String>>>,
    periods: RawPeriods,
    utilisation: RawAxis,
    deadlines: Option<RawDeadlines>,
    simulate: Option<Spanned<bool>>,
    non_preemptive: Option<Spanned<String>>,
    cost: Option<Spanned<RawCost>>,
    vbs_periods_per_job: Option<Spanned<i64>>,
    mcipc_server: Option<Spanned<RawServer>>,
    components: Option<Spanned<RawComponents>>,
    criticality: Option<Spanned<RawCriticality>>,
    multiprocessor: Option<Spanned<RawMultiprocessor>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "the platform of the global tests: cores"
)]
struct RawMultiprocessor {
    cores: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "the criticality of amc-rtb-dm: optionally factor and high-fraction"
)]
struct RawCriticality {
    factor: Option<Spanned<f64>>,
    high_fraction: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "the topology of the component tests: configuration and optionally split"
)]
struct RawComponents {
    configuration: Spanned<i64>,
    split: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "the shared server of mcipc-budget: operation-length and optionally \
                 invocations and clusters"
)]
struct RawServer {
    invocations: Option<Spanned<i64>>,
    operation_length: Spanned<String>,
    clusters: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "a task count: a whole number like 8, or an array like [4, 8, 16]"
)]
enum RawTaskCounts {
    One(u64),
    Many(Vec<u64>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPeriods {
    kind: Spanned<String>,
    min: Spanned<String>,
    max: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawAxis {
    from: Spanned<f64>,
    to: Spanned<f64>,
    step: Spanned<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDeadlines {
    constrained_fraction: Spanned<f64>,
}

fn check(source: &Source, raw: RawExperiment, errors: &mut Vec<SpecError>) -> Option<Experiment> {
    let mut fail = |span: Range<usize>, message: String, help: &str| {
        errors.push(source.error(span, message, help));
    };
    if let Some(e) = source.long_name(raw.name.span(), raw.name.get_ref(), "the name") {
        fail(e.span().unwrap_or(0..0), e.message().to_owned(), e.help());
    }
    let sets_per_point = *raw.sets_per_point.get_ref();
    if sets_per_point == 0 || sets_per_point > MAX_SETS_PER_POINT {
        fail(
            raw.sets_per_point.span(),
            format!("sets-per-point is {sets_per_point}"),
            &format!("allowed: 1 to {MAX_SETS_PER_POINT}"),
        );
    }
    let generator = match raw.generator.get_ref().as_str() {
        "uunifast" => Some(UtilisationGenerator::UUniFast),
        "uunisort" => Some(UtilisationGenerator::UUniSort),
        "randfixedsum" => Some(UtilisationGenerator::RandFixedSum),
        other => {
            fail(
                raw.generator.span(),
                format!("unknown generator `{other}`"),
                "allowed: uunifast, uunisort, randfixedsum",
            );
            None
        }
    };
    let counts = match raw.tasks.get_ref() {
        RawTaskCounts::One(n) => vec![*n],
        RawTaskCounts::Many(ns) => ns.clone(),
    };
    if counts.is_empty() || counts.iter().any(|&n| n == 0 || n > MAX_TASKS) {
        fail(
            raw.tasks.span(),
            format!("tasks is {counts:?}"),
            &format!("allowed: one or more task counts, each 1 to {MAX_TASKS}"),
        );
    }
    let simulate = raw.simulate.as_ref().is_some_and(|s| *s.get_ref());
    if let Some(flag) = raw.simulate.as_ref().filter(|s| *s.get_ref()) {
        if let Some(&largest) = counts.iter().filter(|&&n| n > MAX_SIMULATED_TASKS).max() {
            fail(
                flag.span(),
                format!("simulate = true with sets of {largest} tasks"),
                &format!(
                    "allowed: simulate = true with at most {MAX_SIMULATED_TASKS} tasks per set \
                     (one fixed priority each), or simulate = false"
                ),
            );
        }
    }
    let mut tests = Vec::new();
    for test in raw.tests.get_ref() {
        let name = test.get_ref();
        if !test_names().contains(&name.as_str()) {
            fail(
                test.span(),
                format!("unknown test `{name}`"),
                &format!("allowed: {}", test_names().join(", ")),
            );
        } else if tests.contains(name) {
            fail(
                test.span(),
                format!("test `{name}` is listed twice"),
                "allowed: each test once",
            );
        } else {
            tests.push(name.clone());
        }
    }
    if simulate {
        let unsimulated = unsimulated_tests();
        for test in raw.tests.get_ref() {
            if unsimulated.contains(&test.get_ref().as_str()) {
                fail(
                    test.span(),
                    format!("test `{}` cannot be simulated", test.get_ref()),
                    &format!(
                        "allowed: simulate = true with tests the simulation runs (every test \
                         but {}), or simulate = false",
                        unsimulated.join(", ")
                    ),
                );
            }
        }
    }
    if raw.tests.get_ref().is_empty() {
        fail(
            raw.tests.span(),
            "no tests listed".to_owned(),
            &format!("allowed: one or more of {}", test_names().join(", ")),
        );
    }
    let period_kind = match raw.periods.kind.get_ref().as_str() {
        "log-uniform" => Some(PeriodKind::LogUniform),
        "uniform" => Some(PeriodKind::Uniform),
        "harmonic" => Some(PeriodKind::Harmonic),
        other => {
            fail(
                raw.periods.kind.span(),
                format!("unknown period kind `{other}`"),
                "allowed: log-uniform, uniform, harmonic",
            );
            None
        }
    };
    let mut time = |field: &Spanned<String>| match units::parse_time(field.get_ref()) {
        Ok(d) if d.as_nanos() > 0 => Some(d.as_nanos()),
        Ok(_) => {
            fail(
                field.span(),
                "a period of 0".to_owned(),
                "allowed: a positive time like \"10ms\"",
            );
            None
        }
        Err(e) => {
            fail(field.span(), e.message, &e.help);
            None
        }
    };
    let (period_min, period_max) = (time(&raw.periods.min), time(&raw.periods.max));
    if let (Some(min), Some(max)) = (period_min, period_max) {
        if min > max {
            fail(
                raw.periods.max.span(),
                format!("max period {max}ns is below min period {min}ns"),
                "allowed: max at least min",
            );
        }
    }
    if generator == Some(UtilisationGenerator::RandFixedSum) {
        if let Some(&largest) = counts.iter().filter(|&&n| n > MAX_RANDFIXEDSUM_TASKS).max() {
            fail(
                raw.tasks.span(),
                format!("randfixedsum with sets of {largest} tasks"),
                &format!(
                    "allowed: at most {MAX_RANDFIXEDSUM_TASKS} tasks per set with randfixedsum \
                     (its table grows with the tasks times the utilisation)"
                ),
            );
        }
    }
    // randfixedsum draws each share in [0, 1], so a set of n tasks reaches U = n at most.
    let ceiling = match generator {
        Some(g) if g.beyond_one_processor() => Ceiling::Tasks(counts.iter().copied().min()),
        _ => Ceiling::OneProcessor,
    };
    let utilisations = axis(&raw.utilisation, ceiling, &mut fail);
    let constrained_fraction = match &raw.deadlines {
        None => 0.0,
        Some(d) => {
            let f = *d.constrained_fraction.get_ref();
            if !(0.0..=1.0).contains(&f) {
                fail(
                    d.constrained_fraction.span(),
                    format!("constrained-fraction is {}", shown(f)),
                    "allowed: a fraction from 0.0 to 1.0",
                );
            }
            f
        }
    };
    let servers = tests.iter().any(|t| SERVER_TESTS.contains(&t.as_str()));
    let non_preemptive = match &raw.non_preemptive {
        None => Some(0),
        Some(field) => match units::parse_time(field.get_ref()) {
            Ok(eta) => Some(eta.as_nanos()),
            Err(e) => {
                fail(field.span(), e.message, &e.help);
                None
            }
        },
    };
    let cost = raw
        .cost
        .as_ref()
        .map(|table| cost(table.get_ref(), source.text(), &mut fail));
    for (span, what) in [
        (
            raw.non_preemptive.as_ref().map(|f| f.span()),
            "non-preemptive",
        ),
        (raw.cost.as_ref().map(|t| t.span()), "a [cost] table"),
    ] {
        if let (Some(span), false) = (span, servers) {
            fail(
                span,
                format!("{what} without a reservation test"),
                &format!(
                    "allowed: {what} with tests = [..., \"spr-eq1\"], the test that \
                     runs each task in a reservation"
                ),
            );
        }
    }
    if let (Some(table), Some(0), true) = (&raw.cost, non_preemptive, servers) {
        fail(
            table.span(),
            "a [cost] table with non-preemptive regions of 0".to_owned(),
            "allowed: [cost] with non-preemptive above 0, like non-preemptive = \"500us\" \
             (Eq. 2 bounds the dispatches per period by ceil(b / eta))",
        );
    }
    let vbs_periods_per_job = vbs_periods_per_job(&raw, &tests, &mut fail);
    let mcipc_server = mcipc_server(&raw, &tests, &mut fail);
    let components = components(&raw, &tests, &mut fail);
    let criticality = criticality(&raw, &tests, &mut fail);
    let cores = multiprocessor(&raw, &tests, &mut fail);
    Some(Experiment {
        name: raw.name.get_ref().clone(),
        seed: raw.seed,
        sets_per_point,
        generator: generator?,
        period_kind: period_kind?,
        period_min: period_min?,
        period_max: period_max?,
        constrained_fraction,
        task_counts: counts.into_iter().map(|n| n as usize).collect(),
        utilisations_ppb: utilisations?,
        tests,
        simulate,
        cost: match cost {
            None => None,
            Some(checked) => Some(checked?),
        },
        non_preemptive: non_preemptive?,
        vbs_periods_per_job: vbs_periods_per_job?,
        mcipc_server: mcipc_server?,
        components: components?,
        criticality: criticality?,
        cores: cores?,
    })
}

/// `[multiprocessor]`: required exactly when a test of [`GLOBAL_TESTS`] is listed, refused
/// without one.
fn multiprocessor(
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Option<u16>> {
    let rule = TableRule {
        header: "[multiprocessor]",
        needed_by: &GLOBAL_TESTS,
        needed_name: "a global test",
        missing_help: "allowed: a global test with a table like [multiprocessor] cores = 4 \
                       (the identical cores the sets are scheduled on)",
        orphan_help: "allowed: [multiprocessor] with tests = [..., \"global-edf-bcl\"] (or \
                      another global test), the tests that read it",
    };
    let Some(table) = table_for_tests(raw.multiprocessor.as_ref(), &rule, raw, tests, fail)? else {
        return Some(None);
    };
    let cores = *table.cores.get_ref();
    match u16::try_from(cores) {
        Ok(m) if m >= 1 && u64::from(m) <= MAX_CORES => Some(Some(m)),
        _ => {
            fail(
                table.cores.span(),
                format!("cores is {cores}"),
                &format!("allowed: a whole number of cores from 1 to {MAX_CORES}"),
            );
            None
        }
    }
}

/// `[criticality]`: required exactly when a test of [`MC_TESTS`] is listed, refused without
/// one.
fn criticality(
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Option<Criticality>> {
    let rule = TableRule {
        header: "[criticality]",
        needed_by: &MC_TESTS,
        needed_name: "a mixed-criticality test",
        missing_help: "allowed: a mixed-criticality test (amc-rtb-dm, wcr-rta-dm, wcr-edf, \
                       global-amc-rtb-dm, global-wcr-rta-dm) with a table like \
                       [criticality] factor = 2.0 (C^H / C^L, default 2) \
                       and high-fraction = 0.5 (the share of each set's tasks of high \
                       criticality, default 0.5)",
        orphan_help: "allowed: [criticality] with tests = [..., \"amc-rtb-dm\"] (or \
                      wcr-rta-dm or wcr-edf), the tests that read it",
    };
    let table = table_for_tests(raw.criticality.as_ref(), &rule, raw, tests, fail)?;
    let Some(table) = table else {
        return Some(None);
    };
    let mut ppb = |field: &Option<Spanned<f64>>, what: &str, low: f64, high: f64, default| {
        let Some(field) = field else {
            return Some(default);
        };
        let value = *field.get_ref();
        if value.is_finite() && (low..=high).contains(&value) {
            return Some((value * 1e9).round() as u64);
        }
        fail(
            field.span(),
            format!("{what} is {value}"),
            &format!("allowed: a number from {low} to {high}"),
        );
        None
    };
    let factor = ppb(&table.factor, "factor", 1.0, 100.0, 2_000_000_000);
    let high = ppb(&table.high_fraction, "high-fraction", 0.0, 1.0, 500_000_000);
    Some(Some(Criticality {
        factor_ppb: factor?,
        high_ppb: high?,
    }))
}

/// A table that only some tests read, and what to say when it and they do not come together.
struct TableRule<'r> {
    /// As written, e.g. `[components]`.
    header: &'r str,
    /// The tests that read it.
    needed_by: &'r [&'r str],
    /// Those tests in a sentence, e.g. "a component test".
    needed_name: &'r str,
    /// The help when a test is listed without the table.
    missing_help: &'r str,
    /// The help when the table comes without any of its tests.
    orphan_help: &'r str,
}

/// `rule`'s table: required when one of its tests is listed (the error points at the first
/// such test's name), refused when none is (it would silently mean nothing; the error points
/// at the table). `Some(None)`: no table and no such test; `None`: an error was reported.
fn table_for_tests<'a, T>(
    table: Option<&'a Spanned<T>>,
    rule: &TableRule<'_>,
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Option<&'a T>> {
    let needed = |name: &str| rule.needed_by.contains(&name);
    let listed = raw.tests.get_ref().iter().find(|t| needed(t.get_ref()));
    match (table, listed) {
        (None, None) => Some(None),
        (None, Some(test)) => {
            fail(
                test.span(),
                format!("test `{}` without a {} table", test.get_ref(), rule.header),
                rule.missing_help,
            );
            None
        }
        (Some(table), _) if !tests.iter().any(|t| needed(t)) => {
            fail(
                table.span(),
                format!("a {} table without {}", rule.header, rule.needed_name),
                rule.orphan_help,
            );
            None
        }
        (Some(table), _) => Some(Some(table.get_ref())),
    }
}

/// `[components]`: required when any of [`COMPONENT_TESTS`] is listed (the error then points
/// at the first such test's name), refused without one (it would silently mean nothing).
fn components(
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Option<Components>> {
    let orphan_help = format!(
        "allowed: [components] with tests = [..., \"component-rta\"], one of {}",
        COMPONENT_TESTS.join(", ")
    );
    let rule = TableRule {
        header: "[components]",
        needed_by: &COMPONENT_TESTS,
        needed_name: "a component test",
        missing_help: "allowed: the component tests with a table like [components] \
                       configuration = 1 (Table 3's configuration, 1 to 4) and optionally \
                       split = \"equal\" or \"short-sections\"",
        orphan_help: &orphan_help,
    };
    let table = table_for_tests(raw.components.as_ref(), &rule, raw, tests, fail)?;
    let Some(table) = table else {
        return Some(None);
    };
    let number = *table.configuration.get_ref();
    let configuration = match u8::try_from(number) {
        Ok(n) if (1..=4).contains(&n) => Some(n),
        _ => {
            fail(
                table.configuration.span(),
                format!("configuration is {number}"),
                "allowed: a configuration of the paper's Table 3, 1, 2, 3 or 4",
            );
            None
        }
    };
    let split = match table.split.as_ref() {
        None => Some(ComponentSplit::Equal),
        Some(name) => match name.get_ref().as_str() {
            "equal" => Some(ComponentSplit::Equal),
            "short-sections" => Some(ComponentSplit::ShortSections),
            other => {
                fail(
                    name.span(),
                    format!("unknown split `{other}`"),
                    "allowed: \"equal\" (a quarter of each task's work in its own component \
                     and in each CPI of its chain) or \"short-sections\" (85 % in its own \
                     component, 5 % in each CPI)",
                );
                None
            }
        },
    };
    Some(Some(Components {
        configuration: configuration?,
        split: split?,
    }))
}

/// `[mcipc-server]`: required exactly when `mcipc-budget` is listed (the error then points at
/// the test's name), refused without it (it would silently mean nothing).
fn mcipc_server(
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Option<McIpcServer>> {
    let rule = TableRule {
        header: "[mcipc-server]",
        needed_by: &["mcipc-budget"],
        needed_name: "the mcipc-budget test",
        missing_help: "allowed: mcipc-budget with a table like [mcipc-server] operation-length = \
         \"50us\" (and optionally invocations = N per job, default 1, and clusters = \
         K, default 1)",
        orphan_help: "allowed: [mcipc-server] with tests = [..., \"mcipc-budget\"], the test \
                      whose clients invoke it",
    };
    let table = table_for_tests(raw.mcipc_server.as_ref(), &rule, raw, tests, fail)?;
    let Some(table) = table else {
        return Some(None);
    };
    let mut whole = |field: &Option<Spanned<i64>>, what: &str, low: u64, high: u64, default| {
        let Some(field) = field else {
            return Some(default);
        };
        let value = *field.get_ref();
        match u64::try_from(value) {
            Ok(v) if (low..=high).contains(&v) => Some(v),
            _ => {
                fail(
                    field.span(),
                    format!("{what} is {value}"),
                    &format!("allowed: a whole number from {low} to {high}"),
                );
                None
            }
        }
    };
    let invocations = whole(
        &table.invocations,
        "invocations",
        0,
        MAX_SERVER_INVOCATIONS,
        1,
    );
    let clusters = whole(&table.clusters, "clusters", 1, MAX_SERVER_CLUSTERS, 1);
    let operation_length = match units::parse_time(table.operation_length.get_ref()) {
        Ok(length) => Some(length.as_nanos()),
        Err(e) => {
            fail(table.operation_length.span(), e.message, &e.help);
            None
        }
    };
    Some(Some(McIpcServer {
        invocations: invocations?,
        operation_length: operation_length?,
        clusters: clusters?,
    }))
}

/// `vbs-periods-per-job`: 1 to [`MAX_VBS_PERIODS_PER_JOB`], and only with `vbs-eq2` listed
/// (elsewhere it would silently mean nothing).
fn vbs_periods_per_job(
    raw: &RawExperiment,
    tests: &[String],
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<u64> {
    let Some(field) = &raw.vbs_periods_per_job else {
        return Some(DEFAULT_VBS_PERIODS_PER_JOB);
    };
    let k = *field.get_ref();
    if !tests.iter().any(|t| t == "vbs-eq2") {
        fail(
            field.span(),
            "vbs-periods-per-job without the vbs-eq2 test".to_owned(),
            "allowed: vbs-periods-per-job with tests = [..., \"vbs-eq2\"], the test that \
             sizes each task's VBS resource",
        );
        return None;
    }
    match u64::try_from(k) {
        Ok(k) if (1..=MAX_VBS_PERIODS_PER_JOB).contains(&k) => Some(k),
        _ => {
            fail(
                field.span(),
                format!("vbs-periods-per-job is {k}"),
                &format!(
                    "allowed: a whole number of resource periods per job, 1 to \
                     {MAX_VBS_PERIODS_PER_JOB}"
                ),
            );
            None
        }
    }
}

/// A `[cost]` table as scenario files write it, checked as they are.
fn cost(
    raw: &RawCost,
    text: &str,
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<CostModel> {
    let charged = &crate::validate::cost::SCENARIO;
    crate::validate::cost::cost_model(raw, charged, text, &mut |span, message, help: String| {
        fail(span, message, &help)
    })
}

/// The largest utilisation the axis may reach.
#[derive(Clone, Copy, Debug)]
enum Ceiling {
    /// 1.0: the uniprocessor generators (UUniFast, UUniSort).
    OneProcessor,
    /// The smallest task count (randfixedsum); `None` when the counts are unreadable.
    Tasks(Option<u64>),
}

/// The points `from, from + step, ...` up to `to` (in ppb; an end within a ppb is kept), each
/// at most `ceiling`.
fn axis(
    raw: &RawAxis,
    ceiling: Ceiling,
    fail: &mut impl FnMut(Range<usize>, String, &str),
) -> Option<Vec<u64>> {
    let ppb = |x: f64| (x * 1e9).round();
    let (from, to, step) = (*raw.from.get_ref(), *raw.to.get_ref(), *raw.step.get_ref());
    let limit = match ceiling {
        Ceiling::OneProcessor => 1.0,
        // A sensible count is at most MAX_TASKS; a wrong one has its own error.
        Ceiling::Tasks(n) => n.unwrap_or(1).clamp(1, MAX_TASKS) as f64,
    };
    let mut ok = true;
    for (value, span, what) in [
        (from, raw.from.span(), "from"),
        (to, raw.to.span(), "to"),
        (step, raw.step.span(), "step"),
    ] {
        if value.is_finite() && value > 0.0 && value <= limit {
            continue;
        }
        ok = false;
        let help = match ceiling {
            Ceiling::OneProcessor if value.is_finite() && value > 1.0 => {
                "allowed: a utilisation above 0.0 and at most 1.0 (one processor) with \
                 uunifast and uunisort; generator = \"randfixedsum\" draws sets above 1.0"
                    .to_owned()
            }
            Ceiling::OneProcessor => {
                "allowed: a utilisation above 0.0 and at most 1.0 (one processor)".to_owned()
            }
            Ceiling::Tasks(_) => format!(
                "allowed with randfixedsum: a utilisation above 0.0 and at most {limit} \
                 (the smallest task count: each task takes at most one processor)"
            ),
        };
        fail(
            span,
            format!("utilisation {what} is {}", shown(value)),
            &help,
        );
    }
    if !ok {
        return None;
    }
    if from > to {
        fail(
            raw.to.span(),
            format!("utilisation to ({to}) is below from ({from})"),
            "allowed: to at least from",
        );
        return None;
    }
    // The axis counts in billionths (an end within a billionth is kept): a value that rounds
    // to none would be read as another (a `from` as utilisation 0, a `step` as 1e-9).
    for (value, span, what) in [
        (from, raw.from.span(), "from"),
        (to, raw.to.span(), "to"),
        (step, raw.step.span(), "step"),
    ] {
        if ppb(value) < 1.0 {
            ok = false;
            fail(
                span,
                format!("utilisation {what} is {}", shown(value)),
                "allowed: at least 0.000000001 (the utilisation axis counts in billionths)",
            );
        }
    }
    if !ok {
        return None;
    }
    // Integer steps from integer ends: no float drift along the axis.
    let (from, to, step) = (ppb(from) as u64, ppb(to) as u64, ppb(step) as u64);
    let count = (to - from) / step + 1;
    if count > MAX_UTILISATION_POINTS as u64 {
        fail(
            raw.step.span(),
            format!("the axis has {count} points"),
            &format!("allowed: at most {MAX_UTILISATION_POINTS} points"),
        );
        return None;
    }
    Some((0..count).map(|k| from + k * step).collect())
}

/// A number as a message shows it: as written for the usual ones, in exponent form where
/// the plain form runs long (`1e300`, not three hundred digits).
fn shown(value: f64) -> String {
    let plain = value.to_string();
    if plain.len() > 20 {
        format!("{value:e}")
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"name = "multi"
seed = 1
sets-per-point = 10
generator = "randfixedsum"
tasks = [4, 8]
tests = ["edf-qpa"]

[periods]
kind = "uniform"
min = "1ms"
max = "10ms"

[utilisation]
from = 0.5
to = 3.5
step = 1.5
"#;

    fn only_error(text: &str) -> (String, String) {
        let errors = parse_sweep(text, "m.toml").unwrap_err();
        assert_eq!(errors.errors().len(), 1, "{}", errors.plain());
        let error = &errors.errors()[0];
        (error.to_string(), error.help().to_owned())
    }

    #[test]
    fn randfixedsum_reads_utilisations_above_one_processor() {
        let experiment = parse_sweep(FILE, "m.toml").unwrap();
        assert_eq!(experiment.generator, UtilisationGenerator::RandFixedSum);
        assert_eq!(
            experiment.utilisations_ppb,
            vec![500_000_000, 2_000_000_000, 3_500_000_000]
        );
        // Up to the smallest task count (4 tasks of at most 1.0 each) exactly.
        let four = FILE
            .replace("to = 3.5", "to = 4.0")
            .replace("from = 0.5", "from = 1");
        assert_eq!(
            parse_sweep(&four, "m.toml").unwrap().utilisations_ppb,
            vec![1_000_000_000, 2_500_000_000, 4_000_000_000]
        );
    }

    /// Line 15 is `to = ...`; its value starts at column 6.
    #[test]
    fn a_huge_utilisation_is_shown_short() {
        let (message, _) = only_error(&FILE.replace("to = 3.5", "to = 1e300"));
        assert_eq!(message, "m.toml:15:6: utilisation to is 1e300");
        let (message, _) = only_error(&FILE.replace("to = 3.5", "to = 4.5"));
        assert_eq!(message, "m.toml:15:6: utilisation to is 4.5");
    }

    #[test]
    fn simulate_is_optional_and_bounded_by_the_priorities() {
        assert!(!parse_sweep(FILE, "m.toml").unwrap().simulate);
        let simulated = FILE.replace("seed = 1\n", "seed = 1\nsimulate = true\n");
        assert!(parse_sweep(&simulated, "m.toml").unwrap().simulate);
        // Line 3 is `simulate = true`; the value starts at column 12.
        let (message, help) = only_error(&simulated.replace("[4, 8]", "[4, 300]"));
        assert_eq!(
            message,
            "m.toml:3:12: simulate = true with sets of 300 tasks"
        );
        assert!(help.contains("at most 254 tasks"), "{help}");
    }

    #[test]
    fn randfixedsum_sets_are_bounded() {
        // Line 5 is `tasks = [4, 8]`; the value starts at column 9.
        let (message, help) = only_error(&FILE.replace("[4, 8]", "[4, 1001]"));
        assert_eq!(message, "m.toml:5:9: randfixedsum with sets of 1001 tasks");
        assert!(help.contains("at most 1000 tasks"), "{help}");
    }

    #[test]
    fn randfixedsum_stops_at_the_smallest_task_count() {
        // Line 15 is `to = 4.5`; the value starts at column 6.
        let (message, help) = only_error(&FILE.replace("to = 3.5", "to = 4.5"));
        assert_eq!(message, "m.toml:15:6: utilisation to is 4.5");
        assert!(
            help.contains("at most 4 (the smallest task count"),
            "{help}"
        );
    }

    #[test]
    fn the_uniprocessor_generators_refuse_utilisations_above_one() {
        for generator in ["uunifast", "uunisort"] {
            let text = FILE.replace("randfixedsum", generator);
            let fixed = text.replace("step = 1.5", "step = 0.5");
            let (message, help) = only_error(&fixed);
            assert_eq!(message, "m.toml:15:6: utilisation to is 3.5");
            assert!(help.contains("randfixedsum"), "{help}");
            assert!(help.contains("at most 1.0 (one processor)"), "{help}");
        }
        // Not positive: the message it always had.
        let (message, help) = only_error(
            &FILE
                .replace("randfixedsum", "uunifast")
                .replace("to = 3.5\nstep = 1.5", "to = 0.75\nstep = -0.25"),
        );
        assert_eq!(message, "m.toml:16:8: utilisation step is -0.25");
        assert_eq!(
            help,
            "allowed: a utilisation above 0.0 and at most 1.0 (one processor)"
        );
    }

    #[test]
    fn spr_eq1_reads_a_cost_table_and_a_region() {
        let text = FILE
            .replace("[\"edf-qpa\"]", "[\"edf-qpa\", \"spr-eq1\"]")
            .replace("seed = 1\n", "seed = 1\nnon-preemptive = \"500us\"\n")
            + "\n[cost]\nclock = \"2GHz\"\ncontext-switch = 400\ncache-refill = 100\n";
        let experiment = parse_sweep(&text, "m.toml").unwrap();
        assert_eq!(experiment.tests, ["edf-qpa", "spr-eq1"]);
        assert_eq!(experiment.non_preemptive, 500_000);
        let cost = experiment.cost.unwrap();
        assert_eq!(
            (cost.clock_hz, cost.context_switch, cost.cache_refill),
            (2_000_000_000, 400, 100)
        );
        assert_eq!((cost.timer_interrupt, cost.scheduler), (0, 0));
        // Without the table and the region: zero overheads, eta = 0.
        let plain = parse_sweep(&FILE.replace("[\"edf-qpa\"]", "[\"spr-eq1\"]"), "m.toml").unwrap();
        assert_eq!((plain.cost, plain.non_preemptive), (None, 0));
    }

    #[test]
    fn costs_need_the_reservation_test_and_a_region() {
        let costly = format!("{FILE}\n[cost]\ncontext-switch = 400\n");
        // The [cost] header is on line 18 (after the blank line 17).
        let (message, help) = only_error(&costly);
        assert_eq!(
            message,
            "m.toml:18:1: a [cost] table without a reservation test"
        );
        assert!(help.contains("spr-eq1"), "{help}");
        let with_test = costly.replace("[\"edf-qpa\"]", "[\"spr-eq1\"]");
        let (message, help) = only_error(&with_test);
        assert_eq!(
            message,
            "m.toml:18:1: a [cost] table with non-preemptive regions of 0"
        );
        assert!(help.contains("ceil(b / eta)"), "{help}");
        let negative = with_test
            .replace("seed = 1\n", "seed = 1\nnon-preemptive = \"1ms\"\n")
            .replace("context-switch = 400", "context-switch = -4");
        let (message, help) = only_error(&negative);
        assert_eq!(message, "m.toml:20:18: context-switch -4 is negative");
        assert_eq!(help, "allowed: 0 or more cycles");
    }
}
