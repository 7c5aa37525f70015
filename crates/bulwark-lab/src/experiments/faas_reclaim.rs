//! Bounded resource reclamation on the simulated machine (the paper's Fig. 1 and the third
//! row of Fig. 2): a function-as-a-service node where a controller kills a rogue function
//! that allocated n semaphores and starts the next function, while a sensor task runs beside.
//!
//! `scenarios/faas-reclaim.toml`, with the rogue's allocation set to n, run three ways:
//! - **baseline**: the rogue in no group, so termination frees its objects one by one, in the
//!   kernel with interrupts masked: (3n + 1) units of `reclaim-per-unit` = 13 ns;
//! - **grouped**: the rogue in a reclamation group with a 1 ms quota, so it gets at most
//!   19,230 semaphores (4 units each out of floor(1 ms / 13 ns) - 3 = 76,920) and
//!   termination releases the arena in one unit;
//! - **quiet**: no termination at all, the reference for the next function's runtime.
//!
//! Measured from the simulation: the longest masked reclamation, the sensor's misses and
//! worst wake-up latency, the next function's start latency and its runtime relative to the
//! quiet run (the paper's "relative runtime of a concurrent workload"). Analysed beside it:
//! the sensor's response-time bound with the terminations' mask as blocking (what `bulwark
//! analyze` prints), which the run must stay within and which is late exactly when the
//! sensor misses.

use bulwark_analysis::classic::{fixed_priority, Task};
use bulwark_analysis::reclamation::{masks_by_place, scenario_terminations, Masked};
use bulwark_core::Duration;
use bulwark_sim::Outcome;
use bulwark_spec::{Behaviour, Scenario, Step};

use super::outcomes::{built_in_scenario, recording_jobs};
use super::{Experiment, LabError};
use crate::plot::{line_plot_scaled, Scale, Series};
use crate::report::{headings, Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "faas-reclaim",
    title: "A rogue function's termination stalls the node, unless a reclamation group bounds it",
    run,
};

/// The rogue's allocation counts.
const OBJECTS: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// Task indices in the scenario file.
pub(super) const SENSOR: usize = 0;
const CONTROLLER: usize = 1;
const NEXT: usize = 2;
pub(super) const ROGUE: usize = 3;

/// Cycles per unit in the scenario (1 GHz, so nanoseconds) and the group's quota in units.
pub(super) const PER_UNIT_NS: u64 = 13;
const QUOTA_UNITS: u64 = 1_000_000 / PER_UNIT_NS;
/// Semaphores a group of that quota admits: the arena (1) and the process (2) are charged
/// first, then 4 units per semaphore (its object and its capability).
pub(super) const GROUP_ADMITS: u64 = (QUOTA_UNITS - 3) / 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Variant {
    Baseline,
    Grouped,
}

/// One run's numbers.
#[derive(Clone, Copy, Debug)]
struct Point {
    objects: u64,
    variant: Variant,
    allocated: u64,
    reclaim_ns: u64,
    sensor_misses: u64,
    sensor_latency_ns: u64,
    /// The sensor's worst response in the run.
    sensor_response_ns: u64,
    /// Its response bound with the mask as blocking, and its deadline.
    sensor_bound: SensorBound,
    start_latency_ns: u64,
    relative_runtime: f64,
}

/// The sensor's fixed-priority response bound on a core the termination masks.
#[derive(Clone, Copy, Debug)]
struct SensorBound {
    /// `R = C + B` (the sensor has the top priority): `u64::MAX` when the mask is unbounded.
    response_ns: u64,
    deadline_ns: u64,
}

/// The sensor's bound in `scenario`: its `C`, `T` and `D`, and the mask the analysis gives
/// core 0 as its blocking.
fn sensor_bound(scenario: &Scenario) -> SensorBound {
    let sensor = &scenario.tasks[SENSOR];
    let (period, execution) = sensor
        .behaviour
        .spacing_and_execution()
        .expect("the sensor is periodic");
    let deadline = sensor.deadline.unwrap_or(period).as_nanos();
    let mask = masks_by_place(&scenario_terminations(scenario))
        .into_iter()
        .find(|(place, _)| *place == Masked::Core(0))
        .map_or(Some(0), |(_, mask)| mask.map(Duration::as_nanos));
    let response = mask.and_then(|mask| {
        let task = Task::new("sensor", execution.as_nanos(), period.as_nanos())
            .with_deadline(deadline)
            .with_blocking(mask);
        fixed_priority::response_time(&[task], 0).map(|a| a.response)
    });
    SensorBound {
        response_ns: response.unwrap_or(u64::MAX),
        deadline_ns: deadline,
    }
}

fn run() -> Result<ExperimentReport, LabError> {
    let base = built_in_scenario("faas-reclaim")?;
    let quiet = simulate(&quiet(&base))?;
    let reference = response_of_next(&quiet);
    let mut points = Vec::new();
    for n in OBJECTS {
        for variant in [Variant::Baseline, Variant::Grouped] {
            let scenario = with(&base, n, variant);
            let outcome = simulate(&scenario)?;
            points.push(measure(
                &outcome,
                n,
                variant,
                reference,
                sensor_bound(&scenario),
            ));
        }
    }
    Ok(report(&points, reference))
}

fn simulate(scenario: &Scenario) -> Result<Outcome, LabError> {
    Ok(bulwark_sim::run(scenario, &recording_jobs())?)
}

/// The scenario with the rogue allocating `n`, in its group or not.
pub(super) fn with(base: &Scenario, n: u64, variant: Variant) -> Scenario {
    let mut s = base.clone();
    if let Behaviour::Script { steps, .. } = &mut s.tasks[ROGUE].behaviour {
        for step in steps.iter_mut() {
            if let Step::Allocate { count, .. } = step {
                *count = n;
            }
        }
    }
    if variant == Variant::Baseline {
        for g in &mut s.groups {
            g.members.clear();
        }
    }
    s
}

/// The scenario with the controller only sleeping: nothing is terminated.
fn quiet(base: &Scenario) -> Scenario {
    let mut s = base.clone();
    if let Behaviour::Script { steps, .. } = &mut s.tasks[CONTROLLER].behaviour {
        steps.retain(|step| !matches!(step, Step::Terminate { .. }));
    }
    s
}

/// The next function's job that the controller starts (its second: the first ends at once
/// with its sleep): completion minus release.
fn response_of_next(outcome: &Outcome) -> Duration {
    Duration::from_nanos(outcome.tasks[NEXT].response.max_ns)
}

fn measure(
    outcome: &Outcome,
    objects: u64,
    variant: Variant,
    reference: Duration,
    sensor_bound: SensorBound,
) -> Point {
    let response = response_of_next(outcome).as_nanos() as f64;
    Point {
        objects,
        variant,
        allocated: outcome.tasks[ROGUE].objects_allocated,
        reclaim_ns: outcome.cores[0].max_reclaim_ns,
        sensor_misses: outcome.tasks[SENSOR].misses,
        sensor_latency_ns: outcome.tasks[SENSOR].wakeup_latency.max_ns,
        sensor_response_ns: outcome.tasks[SENSOR].response.max_ns,
        sensor_bound,
        start_latency_ns: outcome.tasks[NEXT].wakeup_latency.max_ns,
        relative_runtime: response / reference.as_nanos().max(1) as f64,
    }
}

/// A variant's name in tables.
pub(super) fn name(variant: Variant) -> &'static str {
    match variant {
        Variant::Baseline => "baseline (no group)",
        Variant::Grouped => "reclamation group, 1 ms quota",
    }
}

/// A variant's short name in a check.
fn short(variant: Variant) -> &'static str {
    match variant {
        Variant::Baseline => "baseline",
        Variant::Grouped => "grouped",
    }
}

/// Nanoseconds as a duration.
pub(super) fn show(ns: u64) -> String {
    Duration::from_nanos(ns).to_string()
}

fn checks(points: &[Point]) -> Vec<Check> {
    let of = |v: Variant| points.iter().filter(move |p| p.variant == v);
    let mut checks = Vec::new();
    for p in of(Variant::Baseline) {
        let expected = (3 * p.objects + 1) * PER_UNIT_NS;
        checks.push(Check {
            claim: format!(
                "Baseline, n = {}: the kernel frees every object, (3n + 1) units of 13 ns",
                p.objects
            ),
            expected: show(expected),
            measured: show(p.reclaim_ns),
            pass: p.reclaim_ns == expected && p.allocated == p.objects,
        });
    }
    for p in of(Variant::Grouped) {
        let admitted = p.objects.min(GROUP_ADMITS);
        checks.push(Check {
            claim: format!(
                "Grouped, n = {}: the quota admits {admitted} semaphores and the group is \
                 released in one unit",
                p.objects
            ),
            expected: format!("{admitted} objects, {}", show(PER_UNIT_NS)),
            measured: format!("{} objects, {}", p.allocated, show(p.reclaim_ns)),
            pass: p.allocated == admitted && p.reclaim_ns == PER_UNIT_NS,
        });
    }
    let grouped_worst = of(Variant::Grouped)
        .map(|p| (p.sensor_misses, p.start_latency_ns, p.relative_runtime))
        .fold((0, 0, 0.0f64), |a, b| {
            (a.0 + b.0, a.1.max(b.1), a.2.max(b.2))
        });
    checks.push(Check {
        claim: "With groups, at every n: no sensor miss, the next function starts within 1 ms \
                (the sensor's job), and runs no slower than without a termination"
            .into(),
        expected: "0 misses, start <= 1ms, relative runtime 1.00".into(),
        measured: format!(
            "{} misses, start <= {}, relative runtime {:.3}",
            grouped_worst.0,
            show(grouped_worst.1),
            grouped_worst.2
        ),
        pass: grouped_worst.0 == 0
            && grouped_worst.1 <= 1_000_000 + PER_UNIT_NS
            && grouped_worst.2 <= 1.001,
    });
    // The analysis beside the run: R = C + B bounds the sensor, and is late (R > D) exactly
    // where the sensor misses.
    let within = points
        .iter()
        .all(|p| p.sensor_response_ns <= p.sensor_bound.response_ns);
    let agrees = points.iter().all(|p| {
        (p.sensor_misses > 0) == (p.sensor_bound.response_ns > p.sensor_bound.deadline_ns)
    });
    let late: Vec<String> = points
        .iter()
        .filter(|p| p.sensor_bound.response_ns > p.sensor_bound.deadline_ns)
        .map(|p| format!("n = {} {}", p.objects, short(p.variant)))
        .collect();
    let worst = points
        .iter()
        .map(|p| (p.sensor_response_ns, p.sensor_bound.response_ns))
        .max_by_key(|&(measured, _)| measured)
        .unwrap_or((0, 0));
    checks.push(Check {
        claim: "At every n, both ways: the sensor's worst response is within its \
                response-time bound with the terminations' mask as blocking (R = C + B, B the \
                analysed mask), and R > D exactly where it misses"
            .into(),
        expected: "response <= R everywhere; R > D only where the sensor misses".into(),
        measured: format!(
            "worst response {} (R = {}); R > D at {}",
            show(worst.0),
            show(worst.1),
            if late.is_empty() {
                "none".to_owned()
            } else {
                late.join(", ")
            }
        ),
        pass: within && agrees,
    });
    if let Some(p) = of(Variant::Baseline).max_by_key(|p| p.objects) {
        checks.push(Check {
            claim: format!(
                "Without groups, at n = {}: the sensor misses and the next function waits for \
                 the whole reclamation",
                p.objects
            ),
            expected: format!("misses > 0, start >= {}", show(p.reclaim_ns)),
            measured: format!(
                "{} misses, start {}",
                p.sensor_misses,
                show(p.start_latency_ns)
            ),
            pass: p.sensor_misses > 0 && p.start_latency_ns >= p.reclaim_ns,
        });
    }
    checks
}

fn report(points: &[Point], reference: Duration) -> ExperimentReport {
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.objects.to_string(),
                name(p.variant).to_owned(),
                p.allocated.to_string(),
                show(p.reclaim_ns),
                p.sensor_misses.to_string(),
                show(p.sensor_latency_ns),
                show(p.sensor_response_ns),
                show(p.sensor_bound.response_ns),
                show(p.start_latency_ns),
                format!("{:.3}", p.relative_runtime),
            ]
        })
        .collect();
    let series: Vec<Series> = [Variant::Baseline, Variant::Grouped]
        .into_iter()
        .map(|v| {
            let points = points
                .iter()
                .filter(|p| p.variant == v)
                .map(|p| (p.objects as f64, p.start_latency_ns as f64 / 1e6))
                .collect();
            Series::new(name(v), points)
        })
        .collect();
    // Log-log: n spans three decades; the baseline's latency grows in proportion to n, a
    // line of slope one, while the group's stays flat.
    let svg = line_plot_scaled(
        "Start latency of the next function after killing a rogue one (cf. paper Fig. 1)",
        "semaphores the rogue function asked for (log scale)",
        "next function's start latency (ms, log scale)",
        &series,
        Scale::Log,
        Scale::Log,
    );
    let at = |v: Variant, n: u64| {
        points
            .iter()
            .find(|p| p.variant == v && p.objects == n)
            .map_or(0.0, |p| p.relative_runtime)
    };
    let summary = format!(
        "A sensor (1 ms every 5 ms, top priority), a controller that kills a rogue function at \
         50 ms, and the next function (10 ms of work) that starts at 50 ms, on one core under \
         fixed priorities. Termination is kernel work with interrupts masked, costed at 13 ns \
         per unit of reclamation work (our own code's cost, measured by the reclaim \
         benchmarks; see also the reclaim-latency experiment). Without a group, killing a function that holds n = 1,000,000 semaphores \
         masks the core for {} and the next function runs {:.2}x as long as on a quiet node; \
         in a group with a 1 ms quota it can hold at most {GROUP_ADMITS} semaphores, is \
         reclaimed in {}, and the next function runs {:.3}x as long. The quiet run's next \
         function takes {reference}.",
        show((3 * 1_000_000 + 1) * PER_UNIT_NS),
        at(Variant::Baseline, 1_000_000),
        show(PER_UNIT_NS),
        at(Variant::Grouped, 1_000_000),
    );
    ExperimentReport {
        source: "Bounded resource reclamation paper, Fig. 1 and Fig. 2 (third row)".into(),
        summary,
        checks: checks(points),
        tables: vec![Table {
            caption: "Killing a rogue function that asked for n semaphores".into(),
            header: headings([
                "n",
                "variant",
                "allocated",
                "masked reclamation",
                "sensor misses",
                "sensor worst latency",
                "sensor worst response",
                "sensor bound R = C + B",
                "next function start latency",
                "next function relative runtime",
            ]),
            rows,
        }],
        figures: vec![Figure {
            file: "start-latency.svg".into(),
            caption: "The next function's start latency vs. the rogue's semaphores, both \
                      axes logarithmic: it grows with n without a group and stays flat with one"
                .into(),
            svg,
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_holds() {
        let report = run().expect("runs");
        assert_eq!(report.checks.len(), 2 * OBJECTS.len() + 3);
        crate::test_support::assert_every_check_passes(&report.checks);
    }

    #[test]
    fn the_quota_arithmetic() {
        // floor(1 ms / 13 ns) = 76,923 units; (76,923 - 3) / 4 = 19,230.
        assert_eq!(QUOTA_UNITS, 76_923);
        assert_eq!(GROUP_ADMITS, 19_230);
    }

    /// A baseline that reclaimed nothing, or a group that took the baseline's time, fails.
    #[test]
    fn the_checks_fail_on_wrong_numbers() {
        let bad = [
            Point {
                objects: 1_000,
                variant: Variant::Baseline,
                allocated: 1_000,
                reclaim_ns: PER_UNIT_NS,
                sensor_misses: 0,
                sensor_latency_ns: 0,
                sensor_response_ns: 1_000_000,
                sensor_bound: SensorBound {
                    response_ns: 1_000_013,
                    deadline_ns: 5_000_000,
                },
                start_latency_ns: 0,
                relative_runtime: 1.0,
            },
            Point {
                objects: 1_000,
                variant: Variant::Grouped,
                allocated: 1_000,
                reclaim_ns: 3_001 * PER_UNIT_NS,
                sensor_misses: 1,
                sensor_latency_ns: 0,
                // Over its bound, and missing though the bound is met.
                sensor_response_ns: 6_000_000,
                sensor_bound: SensorBound {
                    response_ns: 2_000_000,
                    deadline_ns: 5_000_000,
                },
                start_latency_ns: 0,
                relative_runtime: 1.5,
            },
        ];
        assert!(checks(&bad).iter().all(|c| !c.pass));
    }
}
