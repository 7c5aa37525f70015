//! Time partitions inside clusters of two cores (`scenarios/partitions-two-cores.toml`): the
//! MC-IPC paper's clustered reservation scheduler (section III) with a table-driven partition
//! on one core of each cluster, one cluster by fixed priority and one by EDF, and a rogue in
//! each that needs ten times its budget.
//!
//! Theory: a partition holds its core during its slots, at most `L - sbf(L)` of any window of
//! length `L`; the global tests count it as one more interfering entity, as they count a
//! termination's mask (`bulwark_analysis::global_fp::rta_partitioned`,
//! `global_edf::bcl_partitioned`). The file's comments work the bounds and the first period
//! of the run out by hand; the checks compare the analysis and the run with them, and show
//! that the test without the partition's term would be broken by the run.

use bulwark_analysis::cluster::{self, ClusterAnalysis, ClusterVerdict};
use bulwark_analysis::global_fp::{self, FpTask, Response};
use bulwark_core::{Duration, Priority};
use bulwark_sim::Outcome;
use bulwark_spec::Scenario;

use super::outcomes::{built_in_scenario, jobs, member_bound, recording_jobs, task, verdict_name};
use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport};

pub const EXPERIMENT: Experiment = Experiment {
    name: "partitions-two-cores",
    title: "Time partitions inside clusters of two cores, by fixed priority and by EDF, with a \
            rogue in each",
    run,
};

const MS: u64 = 1_000_000;
/// By hand: Bertogna and Cirinei's bounds with the partition as an entity, ns.
const FIXED_BOUNDS: [(&str, u64); 3] = [("hi", 2 * MS), ("mid", 5 * MS), ("rogue-f", 5_500_000)];
/// By hand: the worst responses of the run (synchronous releases every period), ns.
const WORST: [(&str, u64); 4] = [
    ("hi", 2 * MS),
    ("mid", 5 * MS),
    ("a", 3 * MS),
    ("b", 8 * MS),
];
/// The EDF cluster's members with a job bound of their period.
const EDF_MEMBERS: [&str; 2] = ["a", "b"];
/// The rogues, each 1 ms per 10 ms.
const ROGUES: [&str; 2] = ["rogue-f", "rogue-e"];
const ROGUE_BUDGET: u64 = MS;
const PERIOD: u64 = 10 * MS;
/// The partitions, each [0, 4) ms of every 10 ms, and their jobs of 4 ms.
const PARTITIONS: [&str; 2] = ["table-f", "table-e"];
const SLOT: u64 = 4 * MS;

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario(EXPERIMENT.name)?;
    let analyses = cluster::analyse(&scenario);
    let outcome = bulwark_sim::run(&scenario, &recording_jobs())?;
    let fixed = analyses.iter().find(|a| a.name == "fixed");
    let deadline = analyses.iter().find(|a| a.name == "deadline");
    let checks = vec![
        fixed_bounds(fixed),
        edf_test(deadline),
        within_bounds(&outcome, fixed),
        without_the_partition(&scenario, &outcome),
        rogues_contained(&outcome, scenario.duration.as_nanos()),
        partitions_in_their_slots(&outcome),
    ];
    Ok(ExperimentReport {
        source: "MC-IPC paper, section III (clustered reservations, time partitions); \
                 Bertogna and Cirinei's global fixed-priority response-time analysis (RTSS \
                 2007) and Bertogna, Cirinei and Lipari's global EDF test, each partition one \
                 more interfering entity"
            .into(),
        summary: format!(
            "`scenarios/partitions-two-cores.toml`: cluster `fixed` (cores 0 and 1, fixed \
             priority) holds hi (2, 10), mid (3, 10) and rogue-f (1, 10) beside the partition \
             table-f on core 1 in [0, 4) ms of every 10 ms; cluster `deadline` (cores 2 and \
             3, EDF) holds a (3, 10), b (5, 10) and rogue-e (1, 10) beside table-e on core 3. \
             The rogues' jobs need 10 ms each. One machine runs both clusters for {} with no \
             kernel costs.",
            scenario.duration
        ),
        checks,
        tables: vec![super::textbook::summary_table(&outcome)],
        ..EXPERIMENT.blank_report()
    })
}

fn fixed_bounds(fixed: Option<&ClusterAnalysis>) -> Check {
    let measured: Vec<String> = FIXED_BOUNDS
        .iter()
        .map(|&(name, _)| {
            let bound = member_bound(fixed, name);
            format!(
                "{name} {}",
                bound.map_or("none".into(), |ns| Duration::from_nanos(ns).to_string())
            )
        })
        .collect();
    let expected: Vec<String> = FIXED_BOUNDS
        .iter()
        .map(|&(name, ns)| format!("{name} {}", Duration::from_nanos(ns)))
        .collect();
    Check {
        claim: "by hand: Bertogna and Cirinei's analysis with the partition as one more \
                interfering entity gives R = 2, 5 and 5.5 ms, and the cluster is schedulable"
            .into(),
        expected: expected.join(", "),
        measured: format!(
            "{}; {}",
            measured.join(", "),
            fixed.map_or("no cluster", |f| verdict_name(&f.verdict))
        ),
        pass: FIXED_BOUNDS
            .iter()
            .all(|&(name, ns)| member_bound(fixed, name) == Some(ns))
            && fixed.is_some_and(|f| matches!(f.verdict, ClusterVerdict::RtaSchedulable(_))),
    }
}

fn edf_test(deadline: Option<&ClusterAnalysis>) -> Check {
    Check {
        claim: "by hand: Bertogna, Cirinei and Lipari's test with the partition as an entity \
                holds for a (10 < 2 (7 ms + 1 ns)), b (8 < 2 (5 ms + 1 ns)) and rogue-e (12 < \
                2 (9 ms + 1 ns))"
            .into(),
        expected: "schedulable (global-edf-bcl)".into(),
        measured: deadline.map_or("no cluster".into(), |d| {
            format!(
                "{} ({})",
                verdict_name(&d.verdict),
                d.verdict.test_name().unwrap_or("none")
            )
        }),
        pass: deadline.is_some_and(|d| matches!(d.verdict, ClusterVerdict::BclSchedulable(_))),
    }
}

/// The worst response of the task called `name`, ns.
fn worst(outcome: &Outcome, name: &str) -> u64 {
    task(outcome, name).response.max_ns
}

fn within_bounds(outcome: &Outcome, fixed: Option<&ClusterAnalysis>) -> Check {
    let measured: Vec<String> = WORST
        .iter()
        .map(|&(name, _)| format!("{name} {}", Duration::from_nanos(worst(outcome, name))))
        .collect();
    let fixed_within = FIXED_BOUNDS[..2]
        .iter()
        .all(|&(name, _)| member_bound(fixed, name).is_some_and(|b| worst(outcome, name) <= b));
    let edf_within = EDF_MEMBERS
        .iter()
        .all(|&name| worst(outcome, name) <= PERIOD);
    let no_misses = ["hi", "mid", "a", "b"]
        .iter()
        .all(|&name| task(outcome, name).misses == 0 && task(outcome, name).jobs >= 20);
    Check {
        claim: "every job of hi and mid completes within its R, of a and b within p; the worst \
                responses are the file's by hand (mid's is its bound: the synchronous release \
                is the worst case here)"
            .into(),
        expected: WORST
            .iter()
            .map(|&(name, ns)| format!("{name} {}", Duration::from_nanos(ns)))
            .collect::<Vec<_>>()
            .join(", "),
        measured: measured.join(", "),
        pass: fixed_within
            && edf_within
            && no_misses
            && WORST.iter().all(|&(name, ns)| worst(outcome, name) == ns),
    }
}

/// The same analysis of `fixed`'s reservations with the partition left out.
fn without_the_partition(scenario: &Scenario, outcome: &Outcome) -> Check {
    let reservation = |name: &str| {
        let spec = scenario.tasks.iter().find(|t| t.name == name)?;
        let reservation = spec.reservation?;
        Some(FpTask {
            budget: reservation.budget,
            period: reservation.period,
            priority: spec.priority.unwrap_or(Priority(0)),
            sporadic_server: false,
        })
    };
    let tasks: Vec<FpTask> = FIXED_BOUNDS
        .iter()
        .filter_map(|&(name, _)| reservation(name))
        .collect();
    let blind = global_fp::rta(&tasks, 2);
    let blind_mid = blind
        .responses
        .get(1)
        .and_then(Response::bound)
        .map(Duration::as_nanos);
    let observed = worst(outcome, "mid");
    Check {
        claim: "without the partition's term the analysis would give mid R = 3 ms (fewer \
                than m reservations above it), which the run breaks: the term is needed"
            .into(),
        expected: "R = 3ms < observed 5ms".into(),
        measured: format!(
            "R = {} against observed {}",
            blind_mid.map_or("none".into(), |ns| Duration::from_nanos(ns).to_string()),
            Duration::from_nanos(observed)
        ),
        pass: tasks.len() == 3 && blind_mid == Some(3 * MS) && observed > 3 * MS,
    }
}

fn rogues_contained(outcome: &Outcome, horizon: u64) -> Check {
    let periods = horizon.div_ceil(PERIOD);
    let allowed = periods * ROGUE_BUDGET;
    let executed: Vec<u64> = ROGUES
        .iter()
        .map(|&name| task(outcome, name).executed_ns)
        .collect();
    Check {
        claim: "each rogue gets its e = 1 ms per 10 ms and no more, however much its jobs need"
            .into(),
        expected: format!(
            "each executes {} in {periods} periods",
            Duration::from_nanos(allowed)
        ),
        measured: ROGUES
            .iter()
            .zip(&executed)
            .map(|(name, &ns)| format!("{name} {}", Duration::from_nanos(ns)))
            .collect::<Vec<_>>()
            .join(", "),
        pass: executed.iter().all(|&ns| ns == allowed),
    }
}

fn partitions_in_their_slots(outcome: &Outcome) -> Check {
    let mut late = 0;
    let mut counted = 0;
    for name in PARTITIONS {
        for job in jobs(outcome, name) {
            if job.release >= outcome.until {
                continue;
            }
            counted += 1;
            let on_time = job.first_start == Some(job.release)
                && job.completion.is_some_and(|done| {
                    done.saturating_duration_since(job.release).as_nanos() == SLOT
                });
            late += usize::from(!on_time);
        }
    }
    Check {
        claim: "each partition's job of 4 ms starts as its slot opens and fills it: the \
                clusters' reservations never take the partition's core in its slots"
            .into(),
        expected: "0 jobs off their slots".into(),
        measured: format!("{late} of {counted} jobs off their slots"),
        pass: late == 0 && counted >= 40,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes() {
        super::super::assert_every_check_passes(&run().expect("the experiment runs"), 6);
    }

    /// The partition's bound made larger by hand: mid's check against 5 ms must fail if the
    /// analysis gave anything else.
    #[test]
    fn the_bounds_check_fails_on_another_bound() {
        let scenario = built_in_scenario(EXPERIMENT.name).expect("valid");
        let mut wider = scenario.clone();
        for spec in &mut wider.clusters {
            for member in &mut spec.members {
                if let bulwark_spec::MemberKind::Partition { slots, .. } = &mut member.kind {
                    slots[0].1 = Duration::from_millis(5);
                }
            }
        }
        let analyses = cluster::analyse(&wider);
        let fixed = analyses.iter().find(|a| a.name == "fixed");
        assert!(!fixed_bounds(fixed).pass);
        let analyses = cluster::analyse(&scenario);
        assert!(fixed_bounds(analyses.iter().find(|a| a.name == "fixed")).pass);
    }
}
