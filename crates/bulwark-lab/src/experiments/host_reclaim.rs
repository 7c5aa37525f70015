//! Bounded resource reclamation on this machine (host group): `scenarios/faas-reclaim.toml`
//! run by Bulwark's hosted runtime, beside the simulator. A rogue function allocates a
//! million semaphores for real in the object store (`bulwark_core::reclaim`'s capability
//! tree, the simulator's own), and at 50 ms the controller terminates it: the dispatcher
//! reclaims at the core's top priority, so that no task runs meanwhile (the paper's kernel
//! with interrupts masked), and the reclamation's real time is read on the monotonic clock.
//!
//! - **baseline** (the rogue in no group): the store frees every object one by one, 3 units
//!   each and 1 for the process, which the simulator costs at 13 ns each: 39 ms for a
//!   million; the sensor (1 ms every 5 ms) cannot run meanwhile. On the host the rogue
//!   creates its objects for real, on its own time, so it holds as many as it could create by
//!   the 50 ms kill (a quarter to half a million here, 70 to 170 ns each with page faults on
//!   fresh memory); the simulator creates all of them in one step and charges the time after.
//! - **grouped** (a 1 ms quota): the rogue gets 19,230 semaphores and its termination
//!   releases the group's arena in one unit (13 ns in the simulator); the sensor misses
//!   nothing.
//!
//! Both variants run in [`ROUNDS`] interleaved rounds. The checks are ratios and counts, robust
//! to a noisy shared machine: the group's reclamation under 1% of the baseline's, no sensor
//! miss with the group, a sensor job released during the baseline's reclamation waiting
//! for its end (from the reclamation's measured start and end), the quota's count and the
//! store's units (the simulator's code). Without the privileges the
//! experiment is skipped, with the reason, and checks nothing.

use bulwark_host::HostConfig;
use bulwark_spec::{Behaviour, Scenario};

use super::faas_reclaim::{name, show, with, Variant, GROUP_ADMITS, PER_UNIT_NS, ROGUE, SENSOR};
use super::host_rounds::{interleaved, median, Rounds};
use super::{Experiment, LabError};
use crate::report::{headings, Check, ExperimentReport, Table};
use crate::scenarios::built_in;

pub const EXPERIMENT: Experiment = Experiment {
    name: "host-reclaim",
    title: "Host reclamation: a rogue function's real termination, with and without a group",
    run,
};

/// Where the results come from, for the report.
const SOURCE: &str = "Bounded resource reclamation paper, Fig. 1, on this machine";

/// Semaphores the rogue asks for: the scenario file's million.
const OBJECTS: u64 = 1_000_000;
/// Rounds per variant (each a 120 ms host run).
pub const ROUNDS: usize = 3;
/// The group's reclamation must take under this fraction of the baseline's (1%): the store
/// does 3,000,001 units against 1, so even a noisy machine leaves orders of magnitude.
const GROUP_FRACTION: f64 = 0.01;

const VARIANTS: [Variant; 2] = [Variant::Baseline, Variant::Grouped];

/// One host run's numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Round {
    /// Objects the rogue created before it was killed.
    pub allocated: u64,
    /// The longest measured reclamation, ns.
    pub reclaim_ns: u64,
    /// Work units the store reported for the reclamation.
    pub reclaim_units: u64,
    /// The sensor's deadline misses.
    pub sensor_misses: u64,
    /// The sensor's worst wake-up latency, ns.
    pub sensor_latency_ns: u64,
    /// Host only: how long the longest reclamation owes the sensor, ns: from the first
    /// sensor release inside it to its end (0 when none falls inside). No task runs while
    /// the dispatcher reclaims, so that job's wake-up latency is at least this.
    pub sensor_held_off_ns: u64,
    /// The rogue's jobs ended by its termination.
    pub killed_jobs: u64,
}

/// One variant: its host rounds and the simulator's run.
#[derive(Clone, Debug)]
struct Side {
    variant: Variant,
    host: Rounds<Round>,
    sim: Round,
}

fn scenario(variant: Variant) -> Result<Scenario, LabError> {
    let base = built_in("faas-reclaim")
        .ok_or_else(|| LabError::Components("no built-in faas-reclaim scenario".into()))?
        .scenario()?;
    Ok(with(&base, OBJECTS, variant))
}

/// A run's numbers; `reclaim_units` as `units` says.
fn round_of(outcome: &bulwark_sim::Outcome, units: u64) -> Round {
    Round {
        allocated: outcome.tasks[ROGUE].objects_allocated,
        reclaim_ns: outcome.cores[0].max_reclaim_ns,
        reclaim_units: units,
        sensor_misses: outcome.tasks[SENSOR].misses,
        sensor_latency_ns: outcome.tasks[SENSOR].wakeup_latency.max_ns,
        sensor_held_off_ns: 0,
        killed_jobs: outcome.tasks[ROGUE].killed_jobs,
    }
}

/// From the first release of a periodic task (`period`, first at `offset`) at or after
/// `start` to `end`; zero when none falls in `[start, end)`.
fn held_off(start: u64, end: u64, period: u64, offset: u64) -> u64 {
    let since = start.saturating_sub(offset);
    let first = offset + since.div_ceil(period.max(1)) * period;
    end.saturating_sub(first)
}

fn host_round(scenario: &Scenario) -> Result<Round, String> {
    let outcome = bulwark_host::run(scenario, &HostConfig::default()).map_err(|e| e.to_string())?;
    let units = outcome.host.reclamations.iter().map(|r| r.units).sum();
    let mut round = round_of(&outcome.outcome, units);
    if let (Some(longest), Behaviour::Periodic { period, offset, .. }) = (
        outcome
            .host
            .reclamations
            .iter()
            .max_by_key(|r| r.duration()),
        &scenario.tasks[SENSOR].behaviour,
    ) {
        round.sensor_held_off_ns = held_off(
            longest.start.as_nanos(),
            longest.end.as_nanos(),
            period.as_nanos(),
            offset.as_nanos(),
        );
    }
    Ok(round)
}

fn run() -> Result<ExperimentReport, LabError> {
    super::host_rounds::run_host(&EXPERIMENT, SOURCE, super::host_rounds::ATTEMPTS, measure)
}

/// One measurement of the whole experiment.
fn measure() -> Result<ExperimentReport, LabError> {
    let scenarios = VARIANTS
        .iter()
        .map(|&v| scenario(v))
        .collect::<Result<Vec<_>, _>>()?;
    let host = interleaved(&scenarios, ROUNDS, host_round);
    let mut sides = Vec::new();
    for ((variant, scenario), host) in VARIANTS.into_iter().zip(&scenarios).zip(host) {
        let sim = bulwark_sim::run(scenario, &bulwark_sim::Options::default())?;
        sides.push(Side {
            variant,
            host,
            // The simulator's clock is 1 GHz: its reclamation time is units x 13 ns.
            sim: round_of(&sim, sim.cores[0].max_reclaim_ns / PER_UNIT_NS),
        });
    }
    Ok(report(&sides))
}

/// The median measured reclamation of a side's rounds.
fn median_reclaim(side: &Side) -> Option<u64> {
    let rounds = side.host.as_ref().ok()?;
    median(&rounds.iter().map(|r| r.reclaim_ns).collect::<Vec<_>>())
}

/// A side's host rounds; none when the host run failed.
fn rounds_of(side: &Side) -> &[Round] {
    side.host.as_deref().unwrap_or_default()
}

/// Each round's (objects created, units reclaimed).
fn objects_and_units(rounds: &[Round]) -> String {
    let pairs: Vec<(u64, u64)> = rounds
        .iter()
        .map(|r| (r.allocated, r.reclaim_units))
        .collect();
    format!("{pairs:?}")
}

fn checks(sides: &[Side]) -> Vec<Check> {
    let of = |v: Variant| sides.iter().find(|s| s.variant == v);
    let mut checks = Vec::new();
    let ran: Vec<String> = sides
        .iter()
        .map(|s| match &s.host {
            Ok(rounds) => format!("{}: {} rounds", name(s.variant), rounds.len()),
            Err(e) => format!("{}: failed ({e})", name(s.variant)),
        })
        .collect();
    checks.push(Check {
        claim: "every round ran on this machine and killed the rogue (its job ended as killed)"
            .into(),
        expected: format!("{ROUNDS} rounds per variant, 1 killed job each"),
        measured: ran.join("; "),
        pass: sides.len() == VARIANTS.len()
            && sides.iter().all(|s| {
                s.host.as_ref().is_ok_and(|rounds| {
                    rounds.len() == ROUNDS && rounds.iter().all(|r| r.killed_jobs == 1)
                })
            }),
    });
    if let Some(grouped) = of(Variant::Grouped) {
        // The group admits (floor(1 ms / 13 ns) - 3) / 4 = 19,230 semaphores, as in the
        // simulator (the same store), and its termination releases the arena: 1 unit.
        let rounds = rounds_of(grouped);
        checks.push(Check {
            claim: "with the group: the quota's semaphores created for real, as in the \
                    simulator, and the arena released in one unit"
                .into(),
            expected: format!(
                "{GROUP_ADMITS} objects, 1 unit (simulator: {}, {})",
                grouped.sim.allocated, grouped.sim.reclaim_units
            ),
            measured: objects_and_units(rounds),
            pass: !rounds.is_empty()
                && grouped.sim.allocated == GROUP_ADMITS
                && rounds
                    .iter()
                    .all(|r| r.allocated == GROUP_ADMITS && r.reclaim_units == 1),
        });
    }
    if let Some(baseline) = of(Variant::Baseline) {
        // Every object the rogue created before its kill is freed one by one: 3 units each
        // (unlink its capability, free the capability and the object) and 1 for the process.
        let rounds = rounds_of(baseline);
        checks.push(Check {
            claim: "without the group: every object created for real is reclaimed one by one, \
                    3n + 1 units"
                .into(),
            expected: format!(
                "0 < n <= {OBJECTS}, 3n + 1 units (simulator: n = {}, {} units)",
                baseline.sim.allocated, baseline.sim.reclaim_units
            ),
            measured: objects_and_units(rounds),
            pass: !rounds.is_empty()
                && rounds.iter().all(|r| {
                    r.allocated > 0
                        && r.allocated <= OBJECTS
                        && r.reclaim_units == 3 * r.allocated + 1
                }),
        });
    }
    if let (Some(baseline), Some(grouped)) = (of(Variant::Baseline), of(Variant::Grouped)) {
        let (b, g) = (median_reclaim(baseline), median_reclaim(grouped));
        checks.push(Check {
            claim: "the group's real reclamation takes a tiny fraction of the baseline's".into(),
            expected: format!(
                "group median < {:.0}% of the baseline median (simulator: {} against {})",
                GROUP_FRACTION * 100.0,
                show(grouped.sim.reclaim_ns),
                show(baseline.sim.reclaim_ns)
            ),
            measured: match (b, g) {
                (Some(b), Some(g)) => format!(
                    "{} against {} ({:.4}%)",
                    show(g),
                    show(b),
                    g as f64 * 100.0 / b.max(1) as f64
                ),
                _ => "failed".into(),
            },
            pass: matches!((b, g), (Some(b), Some(g)) if (g as f64) < GROUP_FRACTION * b as f64),
        });
        let misses = |side: &Side| -> Option<Vec<u64>> {
            side.host
                .as_ref()
                .ok()
                .map(|rounds| rounds.iter().map(|r| r.sensor_misses).collect())
        };
        let grouped_misses = misses(grouped);
        checks.push(Check {
            claim: "with the group, the sensor misses no deadline in any round".into(),
            expected: format!("0 (simulator: {})", grouped.sim.sensor_misses),
            measured: grouped_misses
                .as_ref()
                .map_or("failed".into(), |m| format!("{m:?}")),
            pass: grouped_misses.is_some_and(|m| !m.is_empty() && m.iter().all(|&x| x == 0)),
        });
        // No task runs while the dispatcher reclaims: a sensor release inside the
        // reclamation waits for its end. Which releases fall inside depends on when the
        // reclamation started and how long it took, both measured in the round.
        let rounds = rounds_of(baseline);
        checks.push(Check {
            claim: "without the group, a sensor job released during the reclamation waits for \
                    its end"
                .into(),
            expected: "worst wake-up latency >= end of reclamation - first sensor release in \
                       it, in every round"
                .into(),
            measured: format!(
                "{} of {} rounds with a release inside: ",
                rounds.iter().filter(|r| r.sensor_held_off_ns > 0).count(),
                rounds.len()
            ) + &rounds
                .iter()
                .map(|r| {
                    format!(
                        "{} for {} owed of a {} reclamation ({} misses)",
                        show(r.sensor_latency_ns),
                        show(r.sensor_held_off_ns),
                        show(r.reclaim_ns),
                        r.sensor_misses
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            pass: !rounds.is_empty()
                && rounds
                    .iter()
                    .all(|r| r.sensor_latency_ns >= r.sensor_held_off_ns),
        });
    }
    checks
}

fn report(sides: &[Side]) -> ExperimentReport {
    let rows = sides
        .iter()
        .map(|side| {
            let host = match &side.host {
                Ok(rounds) => {
                    let reclaim: Vec<String> = rounds.iter().map(|r| show(r.reclaim_ns)).collect();
                    let misses: Vec<String> =
                        rounds.iter().map(|r| r.sensor_misses.to_string()).collect();
                    let allocated: Vec<String> =
                        rounds.iter().map(|r| r.allocated.to_string()).collect();
                    (allocated.join(", "), reclaim.join(", "), misses.join(", "))
                }
                Err(e) => (format!("failed: {e}"), String::new(), String::new()),
            };
            vec![
                name(side.variant).to_owned(),
                host.0,
                side.sim.allocated.to_string(),
                host.1,
                show(side.sim.reclaim_ns),
                host.2,
                side.sim.sensor_misses.to_string(),
            ]
        })
        .collect();
    let median_of = |v: Variant| {
        sides
            .iter()
            .find(|s| s.variant == v)
            .and_then(median_reclaim)
            .map_or("-".into(), show)
    };
    let summary = format!(
        "scenarios/faas-reclaim.toml on this machine's core 1, {ROUNDS} interleaved rounds per \
         variant: the rogue allocates {OBJECTS} semaphores for real in the simulator's object \
         store, and the controller's termination at 50 ms is reclaimed by the dispatcher at the \
         core's top priority, timed on the monotonic clock. Median real reclamation: {} \
         without a group, {} with one (the simulator's cost model: 39 ms and 13 ns).",
        median_of(Variant::Baseline),
        median_of(Variant::Grouped),
    );
    ExperimentReport {
        source: SOURCE.into(),
        summary,
        checks: checks(sides),
        tables: vec![Table {
            caption: "Per variant and round: objects created before the kill, the measured \
                      reclamation and the sensor's misses, host beside simulator"
                .into(),
            header: headings([
                "variant",
                "host objects",
                "sim objects",
                "host reclamation (per round)",
                "sim reclamation",
                "host sensor misses",
                "sim sensor misses",
            ]),
            rows,
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::failing_claims;

    fn side(variant: Variant, round: Round, sim: Round) -> Side {
        Side {
            variant,
            host: Ok(vec![round; ROUNDS]),
            sim,
        }
    }

    fn good() -> Vec<Side> {
        // The simulator's values by hand: a million semaphores, 3,000,001 units of 13 ns; the
        // group's 19,230 and one unit. The host's: half a million created before the kill,
        // 1,500,001 units in 8 ms, the sensor's next job waiting 3 ms of it.
        let baseline = Round {
            allocated: OBJECTS,
            reclaim_ns: 39_000_013,
            reclaim_units: 3_000_001,
            sensor_misses: 7,
            sensor_latency_ns: 34_000_013,
            sensor_held_off_ns: 0,
            killed_jobs: 1,
        };
        let grouped = Round {
            allocated: GROUP_ADMITS,
            reclaim_ns: 13,
            reclaim_units: 1,
            sensor_misses: 0,
            sensor_latency_ns: 1_000_000,
            sensor_held_off_ns: 0,
            killed_jobs: 1,
        };
        vec![
            side(
                Variant::Baseline,
                Round {
                    allocated: 500_000,
                    reclaim_ns: 8_000_000,
                    reclaim_units: 1_500_001,
                    sensor_latency_ns: 3_000_000,
                    sensor_held_off_ns: 3_000_000,
                    ..baseline
                },
                baseline,
            ),
            side(
                Variant::Grouped,
                Round {
                    reclaim_ns: 2_000,
                    ..grouped
                },
                grouped,
            ),
        ]
    }

    #[test]
    fn the_checks_fail_when_the_mechanism_does() {
        assert_eq!(GROUP_ADMITS, 19_230);
        assert!(failing_claims(&checks(&good())).is_empty());
        // A group whose reclamation is 1% of the baseline's or more fails the ratio.
        let mut slow = good();
        if let Ok(rounds) = slow[1].host.as_mut() {
            rounds[0].reclaim_ns = 300_000;
            rounds[1].reclaim_ns = 300_000;
        }
        let failed = failing_claims(&checks(&slow));
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].contains("fraction"));
        // A sensor miss with the group, and a rogue not killed.
        let mut missed = good();
        if let Ok(rounds) = missed[1].host.as_mut() {
            rounds[2].sensor_misses = 1;
            rounds[2].killed_jobs = 0;
        }
        assert_eq!(failing_claims(&checks(&missed)).len(), 2);
        // A baseline whose units are not 3n + 1, and a sensor that ran during the
        // reclamation (its worst latency shorter than what the reclamation owed it).
        let mut odd = good();
        if let Ok(rounds) = odd[0].host.as_mut() {
            rounds[1].reclaim_units = 1_500_000;
            rounds[2].sensor_latency_ns = 2_000_000;
        }
        let failed = failing_claims(&checks(&odd));
        assert_eq!(failed.len(), 2, "{failed:?}");
        // A failed round fails every check that needs it: the rounds, the baseline's units,
        // the ratio and the baseline's sensor.
        let mut broken = good();
        broken[0].host = Err("the watchdog fired".into());
        assert_eq!(failing_claims(&checks(&broken)).len(), 4);
    }

    /// By hand, the sensor's releases every 5 ms from 0: a reclamation over [51, 56) ms owes
    /// the job of 55 ms 1 ms; one over [51, 54) ms owes nothing; one starting on a release
    /// (50 ms) owes that job all of it.
    #[test]
    fn a_reclamation_owes_the_first_release_inside_it_its_remainder() {
        let ms = |n: u64| n * 1_000_000;
        assert_eq!(held_off(ms(51), ms(56), ms(5), 0), ms(1));
        assert_eq!(held_off(ms(51), ms(54), ms(5), 0), 0);
        assert_eq!(held_off(ms(50), ms(56), ms(5), 0), ms(6));
        assert_eq!(held_off(ms(51), ms(56), ms(5), ms(2)), ms(4));
    }

    /// A real run of each variant, when privileged: the counts the machine's speed does not
    /// move (the quota's, the kill) and the ratio.
    #[test]
    fn a_real_termination_is_bounded_by_the_group() {
        if let Err(e) = bulwark_host::check_privileges(&HostConfig::default()) {
            let report = super::super::host_rounds::skipped(&EXPERIMENT, SOURCE, e.to_string());
            assert!(report.title.ends_with("(skipped)"));
            assert!(report.checks.is_empty());
            return;
        }
        let grouped = host_round(&scenario(Variant::Grouped).expect("scenario")).expect("run");
        assert_eq!(grouped.allocated, GROUP_ADMITS);
        assert_eq!(grouped.killed_jobs, 1);
    }
}
