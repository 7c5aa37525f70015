//! SPR servers on a cluster of two fixed-priority cores (`scenarios/spr-servers-two-cores.toml`):
//! the SPR paper's sporadic servers in the MC-IPC paper's clustered scheduler, a rogue that
//! never stops computing at the top, a client that needs two budgets a job, and two tasks in
//! section III's sporadic reservations.
//!
//! Theory: an SPR server's budget comes back in chunks, each `p` after it became available
//! to the active server, so its chunks may start up to its `R` apart; Bertogna and Cirinei's
//! analysis counts its workload from `R + e` in place of `R`
//! ([`bulwark_analysis::global_fp`]). A task that needs `k` budgets a job, released `k p` or
//! more apart, completes within `(k - 1) p + R`. The file's comments work the bounds and the
//! run out by hand; the checks compare the analysis and the run with them, and show the
//! rogue's flood held to its budget: exactly `e` of every `p`.

use bulwark_analysis::cluster::{self, ClusterAnalysis, ClusterVerdict};
use bulwark_sim::{Kept, Options, Outcome, SliceKind};
use bulwark_spec::Scenario;

use super::outcomes::{
    bound_of, built_in_scenario, member_bound, ms_text, named_values, verdict_name,
};
use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport};

pub const EXPERIMENT: Experiment = Experiment {
    name: "spr-servers-two-cores",
    title: "SPR servers on two fixed-priority cores: a rogue held to its budget, a client \
            needing two budgets a job, and each server's workload from R + e",
    run,
};

const MS: u64 = 1_000_000;
/// By hand: each reservation's R, ns.
const BOUNDS: [(&str, u64); 4] = [
    ("rogue", 2 * MS),
    ("v", 3 * MS),
    ("w", 6 * MS),
    ("low", 13 * MS),
];
/// By hand: the job bounds, `(k - 1) p + R`, ns.
const JOB_BOUNDS: [(&str, u64); 3] = [("v", 13 * MS), ("w", 6 * MS), ("low", 13 * MS)];
/// By hand: the run's worst responses, ns.
const WORST: [(&str, u64); 3] = [("v", 12 * MS), ("w", 6 * MS), ("low", 9 * MS)];
/// The rogue's budget and period, ns.
const ROGUE: (u64, u64) = (2 * MS, 10 * MS);

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario(EXPERIMENT.name)?;
    let analysis = cluster::analyse(&scenario).into_iter().next();
    let options = Options {
        record_trace: true,
        ..Options::default()
    };
    let mut records = Kept::default();
    let outcome = bulwark_sim::run_recorded(&scenario, &options, &mut records, &mut |_| {})?;
    let checks = vec![
        bounds(analysis.as_ref()),
        job_bounds(analysis.as_ref()),
        rogue_held(&scenario, &outcome),
        responses(&scenario, &records, analysis.as_ref()),
    ];
    Ok(ExperimentReport {
        source: "SPR paper, section IV (the sporadic server's replenishment rule), in the \
                 MC-IPC paper's clustered reservation scheduler (section III); Bertogna and \
                 Cirinei's global fixed-priority response-time analysis (RTSS 2007)"
            .into(),
        summary: format!(
            "`scenarios/spr-servers-two-cores.toml`: cluster `k` (cores 0 and 1, fixed \
             priority) holds rogue (SPR server, 2 per 10 ms, one endless job), v (SPR server, \
             3 per 10 ms, jobs of 5 ms every 20 ms), w (sporadic, 4 per 20 ms) and low \
             (sporadic, 6 per 40 ms), priorities in that order. One machine runs it for {} \
             with no kernel costs.",
            scenario.duration
        ),
        checks,
        ..EXPERIMENT.blank_report()
    })
}

fn bounds(analysis: Option<&ClusterAnalysis>) -> Check {
    Check {
        claim: "by hand: Bertogna and Cirinei's analysis with each SPR server's workload from \
                R + e gives R = 2, 3, 6 and 13 ms, the cluster schedulable"
            .into(),
        expected: format!(
            "{}; schedulable (global-fp-rta)",
            named_values(&BOUNDS, |_, ns| Some(ns))
        ),
        measured: format!(
            "{}; {}",
            named_values(&BOUNDS, |name, _| member_bound(analysis, name)),
            analysis.map_or("no cluster".into(), |a| format!(
                "{} ({})",
                verdict_name(&a.verdict),
                a.verdict.test_name().unwrap_or("no test")
            ))
        ),
        pass: BOUNDS
            .iter()
            .all(|&(name, ns)| member_bound(analysis, name) == Some(ns))
            && analysis.is_some_and(|a| matches!(a.verdict, ClusterVerdict::RtaSchedulable(_))),
    }
}

fn job_bounds(analysis: Option<&ClusterAnalysis>) -> Check {
    Check {
        claim: "by hand: v needs k = 2 budgets a job and is released k p = 20 ms apart, so its \
                jobs complete within (k - 1) p + R = 13 ms; w and low fit their reservations \
                (6 and 13 ms)"
            .into(),
        expected: named_values(&JOB_BOUNDS, |_, ns| Some(ns)),
        measured: named_values(&JOB_BOUNDS, |name, _| {
            bound_of(analysis, name, |m| m.job_response)
        }),
        pass: JOB_BOUNDS
            .iter()
            .all(|&(name, ns)| bound_of(analysis, name, |m| m.job_response) == Some(ns)),
    }
}

/// The rogue's executed time in each period-long window `[j p, (j + 1) p)` of the run.
fn rogue_per_period(scenario: &Scenario, outcome: &Outcome) -> Vec<u64> {
    let (_, period) = ROGUE;
    let windows = (scenario.duration.as_nanos() / period) as usize;
    let rogue = scenario.tasks.iter().position(|t| t.name == "rogue");
    let mut per_window = vec![0u64; windows];
    let slices = outcome.trace.iter().flat_map(|trace| &trace.slices);
    for slice in slices.filter(|s| s.kind == SliceKind::Task && s.task.map(|t| t.index()) == rogue)
    {
        let (start, end) = (slice.start.as_nanos(), slice.end.as_nanos());
        for (index, time) in per_window.iter_mut().enumerate() {
            let (from, to) = (index as u64 * period, (index as u64 + 1) * period);
            *time += end.min(to).saturating_sub(start.max(from));
        }
    }
    per_window
}

fn rogue_held(scenario: &Scenario, outcome: &Outcome) -> Check {
    let (budget, _) = ROGUE;
    let per_window = rogue_per_period(scenario, outcome);
    let held = per_window.iter().filter(|&&time| time == budget).count();
    Check {
        claim: "the rogue computes without end, and its SPR server holds it to its budget: \
                exactly 2 ms in each 10 ms period of the run"
            .into(),
        expected: format!("2ms in each of the {} periods", per_window.len()),
        measured: format!(
            "2ms in {held} of {} periods (most {})",
            per_window.len(),
            ms_text(per_window.iter().copied().max().unwrap_or(0))
        ),
        pass: !per_window.is_empty() && held == per_window.len(),
    }
}

fn responses(scenario: &Scenario, records: &Kept, analysis: Option<&ClusterAnalysis>) -> Check {
    let end = scenario.duration.as_nanos();
    let mut measured = Vec::new();
    let mut pass = true;
    for &(name, worst) in &WORST {
        let task = scenario.tasks.iter().position(|t| t.name == name);
        let jobs: Vec<_> = (records.jobs.iter())
            .filter(|j| Some(j.task.index()) == task && j.release.as_nanos() < end)
            .collect();
        let responses: Vec<Option<u64>> = jobs
            .iter()
            .map(|j| {
                Some(
                    j.completion?
                        .saturating_duration_since(j.release)
                        .as_nanos(),
                )
            })
            .collect();
        let longest = responses.iter().flatten().max().copied().unwrap_or(0);
        let bound = bound_of(analysis, name, |m| m.job_response).unwrap_or(0);
        pass &= !jobs.is_empty()
            && jobs.iter().all(|j| !j.missed)
            && responses.iter().all(|r| r.is_some_and(|ns| ns <= bound))
            && longest == worst;
        measured.push(format!(
            "{name} {} jobs, worst {} (bound {})",
            jobs.len(),
            ms_text(longest),
            ms_text(bound)
        ));
    }
    Check {
        claim: "every job of v, w and low completes within its bound; the worst are 12, 6 and \
                9 ms, as worked by hand"
            .into(),
        expected: format!(
            "all within their bounds, worst {}",
            named_values(&WORST, |_, ns| Some(ns))
        ),
        measured: measured.join("; "),
        pass,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::{MemberKind, Replenishment};

    #[test]
    fn every_check_passes() {
        super::super::assert_every_check_passes(&run().expect("the experiment runs"), 4);
    }

    /// With the servers under section III's sporadic rule instead (each a sporadic task),
    /// low's bound falls below 13 ms and the bounds check fails.
    #[test]
    fn the_bounds_check_fails_with_the_servers_as_sporadic_tasks() {
        let mut scenario = built_in_scenario(EXPERIMENT.name).expect("valid");
        for member in &mut scenario.clusters[0].members {
            if let MemberKind::Sporadic { replenishment, .. } = &mut member.kind {
                *replenishment = Replenishment::Sporadic;
            }
        }
        let analysis = cluster::analyse(&scenario).into_iter().next();
        assert!(member_bound(analysis.as_ref(), "low").is_some_and(|ns| ns < 13 * MS));
        assert!(!bounds(analysis.as_ref()).pass);
    }
}
