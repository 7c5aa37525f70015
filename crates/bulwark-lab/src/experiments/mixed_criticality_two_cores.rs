//! Vestal's model on clusters of two cores (`scenarios/mixed-criticality-two-cores.toml`):
//! the MC-IPC paper's mode switch (section VII) in a cluster by fixed priority and one by
//! EDF, each with a high-criticality reservation that overruns its low budget every fourth
//! job.
//!
//! Theory: the fixed-priority cluster gets AMC-rtb's argument on Bertogna and Cirinei's
//! analysis ([`bulwark_analysis::amc::rtb_global`]): the switch comes within a
//! high-criticality reservation's `R^L`, so low-criticality work counts only there. The EDF
//! cluster counts every high-criticality reservation at its `e^H` (worst-case reservations,
//! [`bulwark_analysis::cluster::Criticality`]): the switch changes no budget and only demotes
//! low-criticality reservations below every other one. Either way the verdict holds for a
//! high-criticality reservation in either mode and for a low-criticality one in low mode only.
//! The file's comments work the bounds and the run out by hand; the checks compare the
//! analysis and the run with them, and show the low-mode limit is real: the low-criticality
//! member's job that meets a switch passes its fixed-priority bound.

use bulwark_analysis::cluster::{self, ClusterAnalysis, ClusterVerdict, Criticality};
use bulwark_core::reservation::clustered::Mode;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{JobRecord, Kept, Options};
use bulwark_spec::Scenario;

use super::outcomes::{
    bound_of, built_in_scenario, member_bound, ms_text, named_values, verdict_name,
};
use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport};

pub const EXPERIMENT: Experiment = Experiment {
    name: "mixed-criticality-two-cores",
    title: "Vestal's mode switch on clusters of two cores, by fixed priority (AMC-rtb's \
            argument on Bertogna and Cirinei's analysis) and by EDF (worst-case reservations)",
    run,
};

const MS: u64 = 1_000_000;
/// Every reservation's period, and the EDF bound of each member.
const PERIOD: u64 = 10 * MS;
/// Every this many jobs of `h1`, one (the last) overruns `e^L`.
const OVERRUN_EVERY: u64 = 4;
/// `h1`'s low budget: a switch comes this long after an overrunning job's release.
const H1_LOW_BUDGET: u64 = 2 * MS;
/// The clusters, in file order, and the suffix of their members' names.
const CLUSTERS: [(&str, &str); 2] = [("fixed", "f"), ("deadline", "e")];
/// By hand: the bounds in cluster `fixed`, ns: `R^L` of `l`, `R^*` of `h1` and `h2`.
const FIXED_BOUNDS: [(&str, u64); 3] = [("l-f", 3 * MS), ("h1-f", 5 * MS), ("h2-f", 7 * MS)];
/// By hand: the low-mode bounds `R^L` of `h1` and `h2` in cluster `fixed`, ns.
const FIXED_LOW_MODE: [(&str, u64); 2] = [("h1-f", 2 * MS), ("h2-f", 5 * MS)];
/// By hand: the worst responses of `h1` and `h2` in either cluster (an overrunning period).
const HIGH_WORST: u64 = 5 * MS;
/// By hand: `l`'s response in an ordinary period, and in one that switches.
const LOW_IN_LOW_MODE: u64 = 3 * MS;
const LOW_ACROSS_A_SWITCH: u64 = 6 * MS;

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario(EXPERIMENT.name)?;
    let analyses = cluster::analyse(&scenario);
    let mut records = Kept::default();
    bulwark_sim::run_recorded(&scenario, &Options::default(), &mut records, &mut |_| {})?;
    let runs: Vec<ClusterRun> = (0..CLUSTERS.len())
        .map(|index| ClusterRun::of(&scenario, &records, index))
        .collect();
    let fixed = analyses.iter().find(|a| a.name == CLUSTERS[0].0);
    let deadline = analyses.iter().find(|a| a.name == CLUSTERS[1].0);
    let checks = vec![
        fixed_bounds(fixed),
        edf_test(deadline),
        switches(&runs),
        high_within_bounds(&runs, fixed),
        low_in_low_mode(&runs, fixed),
        low_across_a_switch(&runs, fixed),
    ];
    Ok(ExperimentReport {
        source: "MC-IPC paper, section VII (Vestal's model in the clustered reservation \
                 scheduler); AMC-rtb's argument (Baruah, Burns and Davis, RTSS 2011) on \
                 Bertogna and Cirinei's global fixed-priority response-time analysis (RTSS \
                 2007), and worst-case reservations in Goossens, Funk and Baruah's global EDF \
                 test"
            .into(),
        summary: format!(
            "`scenarios/mixed-criticality-two-cores.toml`: clusters `fixed` (cores 0 and 1, \
             priorities l 9 > h1 5 > h2 4) and `deadline` (cores 2 and 3, EDF) each hold l \
             (low, 3 per 10 ms), h1 (high, e^H 5, e^L 2 per 10 ms; every fourth job runs 5 \
             ms) and h2 (high, e^H 4, e^L 3 per 10 ms). One machine runs both for {} with no \
             kernel costs.",
            scenario.duration
        ),
        checks,
        ..EXPERIMENT.blank_report()
    })
}

/// What one cluster's run showed.
struct ClusterRun {
    /// Its high-mode stretches `[switch, return)` (`Instant::NEVER` when it never returned).
    high_modes: Vec<(Instant, Instant)>,
    /// True when its mode changes alternate high, low, high, ...
    alternating: bool,
    /// The instants at which an overrunning job of `h1` used its low budget.
    overruns_at: Vec<Instant>,
    /// The jobs released before the end, by member: `l`, `h1`, `h2`.
    low: Vec<JobRecord>,
    high: Vec<(String, Vec<JobRecord>)>,
}

impl ClusterRun {
    fn of(scenario: &Scenario, records: &Kept, index: usize) -> ClusterRun {
        let suffix = CLUSTERS[index].1;
        let jobs_of = |name: &str| -> Vec<JobRecord> {
            let task = scenario.tasks.iter().position(|t| t.name == name);
            (records.jobs.iter())
                .filter(|j| Some(j.task.index()) == task && j.release.as_nanos() < end(scenario))
                .copied()
                .collect()
        };
        let modes: Vec<_> = (records.modes.iter())
            .filter(|m| m.cluster == index)
            .collect();
        let alternating = modes
            .iter()
            .enumerate()
            .all(|(i, m)| m.mode == if i % 2 == 0 { Mode::High } else { Mode::Low });
        let high_modes = modes
            .chunks(2)
            .map(|pair| (pair[0].at, pair.get(1).map_or(Instant::NEVER, |m| m.at)))
            .collect();
        let h1 = jobs_of(&format!("h1-{suffix}"));
        let overruns_at = (h1.iter())
            .filter(|j| j.job % OVERRUN_EVERY == OVERRUN_EVERY - 1)
            .map(|j| {
                j.release
                    .saturating_add(Duration::from_nanos(H1_LOW_BUDGET))
            })
            .collect();
        ClusterRun {
            high_modes,
            alternating,
            overruns_at,
            low: jobs_of(&format!("l-{suffix}")),
            high: ["h1", "h2"]
                .map(|member| {
                    let name = format!("{member}-{suffix}");
                    let jobs = jobs_of(&name);
                    (name, jobs)
                })
                .to_vec(),
        }
    }

    /// True when `job` ran while the cluster was in high mode (from its release to its
    /// completion, or to the end when unfinished).
    fn meets_high_mode(&self, job: &JobRecord) -> bool {
        let done = job.completion.unwrap_or(Instant::NEVER);
        (self.high_modes.iter()).any(|&(from, to)| job.release < to && from < done)
    }
}

/// The end of the run, ns.
fn end(scenario: &Scenario) -> u64 {
    scenario.duration.as_nanos()
}

fn response(job: &JobRecord) -> Option<u64> {
    Some(
        job.completion?
            .saturating_duration_since(job.release)
            .as_nanos(),
    )
}

fn treats_the_switch(analysis: Option<&ClusterAnalysis>, criticality: Criticality) -> bool {
    analysis.is_some_and(|a| a.criticality() == Some(criticality))
}

/// The verdict and how it treats the mode switch, in words.
fn verdict_text(analysis: &ClusterAnalysis) -> String {
    format!(
        "{} ({}), mode switch: {}",
        verdict_name(&analysis.verdict),
        analysis.verdict.test_name().unwrap_or("no test"),
        analysis.criticality().map_or("none", Criticality::name)
    )
}

fn fixed_bounds(fixed: Option<&ClusterAnalysis>) -> Check {
    Check {
        claim: "by hand: AMC-rtb's argument on Bertogna and Cirinei's analysis gives R = 3, 5 \
                and 7 ms (l's R^L, h1's and h2's R^*) and R^L = 2 and 5 ms for h1 and h2, the \
                cluster schedulable with the switch credited"
            .into(),
        expected: format!(
            "{}; low mode {}; schedulable (global-amc-rtb), mode switch: amc-rtb",
            named_values(&FIXED_BOUNDS, |_, ns| Some(ns)),
            named_values(&FIXED_LOW_MODE, |_, ns| Some(ns)),
        ),
        measured: format!(
            "{}; low mode {}; {}",
            named_values(&FIXED_BOUNDS, |name, _| member_bound(fixed, name)),
            named_values(&FIXED_LOW_MODE, |name, _| bound_of(fixed, name, |m| m
                .low_mode_response)),
            fixed.map_or("no cluster".into(), verdict_text)
        ),
        pass: FIXED_BOUNDS
            .iter()
            .all(|&(name, ns)| member_bound(fixed, name) == Some(ns))
            && FIXED_LOW_MODE
                .iter()
                .all(|&(name, ns)| bound_of(fixed, name, |m| m.low_mode_response) == Some(ns))
            && fixed.is_some_and(|f| matches!(f.verdict, ClusterVerdict::AmcSchedulable(_)))
            && treats_the_switch(fixed, Criticality::AmcRtb),
    }
}

fn edf_test(deadline: Option<&ClusterAnalysis>) -> Check {
    let total = deadline.map(|d| d.bandwidth.total);
    Check {
        claim: "by hand: Goossens, Funk and Baruah's test with h1 and h2 at e^H: U = 6/5 <= 2 - \
                1/2, schedulable with worst-case reservations (at e^L, U would be 9/10)"
            .into(),
        expected: "U = 6/5, schedulable (gfb), mode switch: worst-case-reservations".into(),
        measured: deadline.map_or("no cluster".into(), |d| {
            format!(
                "U = {}/{}, {}",
                d.bandwidth.total.numerator,
                d.bandwidth.total.denominator,
                verdict_text(d)
            )
        }),
        pass: total.is_some_and(|t| t.numerator * 5 == t.denominator * 6)
            && deadline.is_some_and(|d| matches!(d.verdict, ClusterVerdict::Schedulable(_)))
            && treats_the_switch(deadline, Criticality::WorstCaseReservations),
    }
}

fn switches(runs: &[ClusterRun]) -> Check {
    let measured: Vec<String> = CLUSTERS
        .iter()
        .zip(runs)
        .map(|(&(name, _), run)| {
            format!(
                "{name}: {} switches, at {}; {} overruns",
                run.high_modes.len(),
                run.high_modes
                    .iter()
                    .map(|&(from, _)| ms_text(from.as_nanos()))
                    .collect::<Vec<_>>()
                    .join(" "),
                run.overruns_at.len()
            )
        })
        .collect();
    // Every switch at the instant its overrunning job used e^L, and back before the next.
    let paired = |run: &ClusterRun| {
        run.alternating
            && run.overruns_at.len() == 5
            && run.high_modes.len() == run.overruns_at.len()
            && (run.high_modes.iter())
                .zip(&run.overruns_at)
                .all(|(&(from, to), &at)| from == at && to != Instant::NEVER)
    };
    Check {
        claim: "each cluster switches to high mode as each fourth job of h1 uses its e^L = 2 \
                ms (at 32, 72, 112, 152 and 192 ms) and returns to low mode before the next"
            .into(),
        expected: "5 switches in each cluster, each at its overrun".into(),
        measured: measured.join("; "),
        pass: runs.iter().all(paired),
    }
}

fn high_within_bounds(runs: &[ClusterRun], fixed: Option<&ClusterAnalysis>) -> Check {
    let mut worst = Vec::new();
    let mut within = true;
    for (&(_, suffix), run) in CLUSTERS.iter().zip(runs) {
        for (name, jobs) in &run.high {
            // Cluster `fixed`: the analysis's R; cluster `deadline`: p.
            let bound = if suffix == "f" {
                member_bound(fixed, name).unwrap_or(0)
            } else {
                PERIOD
            };
            let responses: Vec<Option<u64>> = jobs.iter().map(response).collect();
            let longest = responses.iter().flatten().max().copied().unwrap_or(0);
            within &= jobs.len() == 20
                && jobs.iter().all(|j| !j.missed)
                && responses.iter().all(|r| r.is_some_and(|ns| ns <= bound));
            within &= longest == HIGH_WORST;
            worst.push(format!(
                "{name} {} (bound {})",
                ms_text(longest),
                ms_text(bound)
            ));
        }
    }
    Check {
        claim: "every job of h1 and h2, in either mode, completes within its bound (R under \
                fixed priority, p under EDF); the worst is 5 ms in each, as worked by hand"
            .into(),
        expected: "20 jobs each, all within their bounds, worst 5 ms".into(),
        measured: worst.join(", "),
        pass: within,
    }
}

fn low_in_low_mode(runs: &[ClusterRun], fixed: Option<&ClusterAnalysis>) -> Check {
    let bound = |suffix: &str| {
        if suffix == "f" {
            member_bound(fixed, "l-f").unwrap_or(0)
        } else {
            PERIOD
        }
    };
    let mut measured = Vec::new();
    let mut pass = true;
    for (&(name, suffix), run) in CLUSTERS.iter().zip(runs) {
        let low_mode: Vec<u64> = (run.low.iter())
            .filter(|j| !run.meets_high_mode(j))
            .filter_map(response)
            .collect();
        pass &= low_mode.len() == 15
            && low_mode
                .iter()
                .all(|&ns| ns == LOW_IN_LOW_MODE && ns <= bound(suffix));
        measured.push(format!(
            "{name}: {} jobs, worst {}",
            low_mode.len(),
            ms_text(low_mode.iter().max().copied().unwrap_or(0))
        ));
    }
    Check {
        claim: "every job of l wholly in low mode completes in 3 ms, within its bound (R = 3 \
                ms under fixed priority, p under EDF)"
            .into(),
        expected: "15 jobs in each cluster, each 3 ms".into(),
        measured: measured.join("; "),
        pass,
    }
}

fn low_across_a_switch(runs: &[ClusterRun], fixed: Option<&ClusterAnalysis>) -> Check {
    let bound = member_bound(fixed, "l-f");
    let mut measured = Vec::new();
    let mut pass = bound == Some(LOW_IN_LOW_MODE);
    for (&(name, _), run) in CLUSTERS.iter().zip(runs) {
        let across: Vec<u64> = (run.low.iter())
            .filter(|j| run.meets_high_mode(j))
            .filter_map(response)
            .collect();
        pass &= across.len() == 5 && across.iter().all(|&ns| ns == LOW_ACROSS_A_SWITCH);
        measured.push(format!(
            "{name}: {} jobs, {}",
            across.len(),
            across
                .iter()
                .map(|&ns| ms_text(ns))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    Check {
        claim: "a job of l that meets a switch is demoted behind h2 and completes in 6 ms: past \
                its fixed-priority R = 3 ms, which is a low-mode guarantee only (its EDF bound, \
                p = 10 ms, still holds)"
            .into(),
        expected: format!(
            "5 jobs in each cluster, each 6 ms > R = {}",
            ms_text(LOW_IN_LOW_MODE)
        ),
        measured: format!(
            "{}; R = {}",
            measured.join("; "),
            bound.map_or("none".into(), ms_text)
        ),
        pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes() {
        super::super::assert_every_check_passes(&run().expect("the experiment runs"), 6);
    }

    /// h1's reservation at its low budget (its overruns left out of the analysis): h2's
    /// bound falls below 7 ms, and the bounds check fails.
    #[test]
    fn the_bounds_check_fails_when_h1_counts_its_low_budget() {
        let scenario = built_in_scenario(EXPERIMENT.name).expect("valid");
        let mut credited = scenario.clone();
        for task in &mut credited.tasks {
            if task.name == "h1-f" {
                if let Some(reservation) = task.reservation.as_mut() {
                    reservation.budget = Duration::from_nanos(H1_LOW_BUDGET);
                }
            }
        }
        let analyses = cluster::analyse(&credited);
        let fixed = analyses.iter().find(|a| a.name == "fixed");
        assert!(member_bound(fixed, "h2-f").is_some_and(|ns| ns < 7 * MS));
        assert!(!fixed_bounds(fixed).pass);
    }
}
