//! Vestal's model with MC-IPC (MC-IPC paper, section VII): a high-criticality reservation
//! that overruns its low-assurance budget switches its cluster to high mode, demoting the
//! low-criticality reservations and aborting their requests, and the cluster returns to low
//! mode at an idle instant; the high-criticality task keeps its deadlines and its requests
//! stay within Theorem 1's bound.
//!
//! **The system**, `scenarios/vestal-mode-switch.toml` on the one machine: two one-core
//! clusters (`K = 2`, `m_k = 1`) and a server `S` behind an mc-ipc gate with `L^H = 2 ms`
//! (operations of 0.5-1 ms: `L^L = 1 ms`). Cluster 0 holds `H`, of high criticality (fixed
//! priority 20, period 50 ms, `e^L = 12 ms`, `e^H = 30 ms`), and `L1`, of low criticality
//! (priority 10, budget 10 ms per 25 ms), whose task invokes `S` just before each release of
//! `H`. Cluster 1 holds `L2` and `L3`, of low criticality (budgets 10 ms per 20 and 40 ms).
//! Every task invokes `S` once per job; `H`'s jobs compute 2-4 ms around it, and every fifth
//! computes 14 ms: more than `e^L`, the overrun Vestal's model plans for. The run lasts
//! [`LENGTH`].
//!
//! **What is checked**: cluster 0 switches to high mode exactly once per overrunning job of
//! `H`, and back to low mode before the next; cluster 1 never switches (the mode is per
//! cluster); `L1`'s requests pending at a switch are aborted; `H` meets every deadline; every
//! invocation of `H` drains at most `(1 + 2 m_k K) L^H = 10 ms` (Theorem 1 at the high
//! level, the bound section VII sizes `e^H` with); and AMC-rtb ([`bulwark_analysis::amc`],
//! what `bulwark analyze` runs on cluster 0) shows cluster 0 schedulable, `H`'s longest
//! response within its bound `R^* = 30 ms` (its jobs are released with its replenishments
//! and need less than `e^H`, so each completes within `R^*` of its release).
//!
//! **How it is measured**: the machine's records. Each change of a cluster's mode is a
//! [`ModeSwitchRecord`]. A request aborted at a switch shows in its [`InvocationRecord`]: one
//! waiting is pruned and, its reservation still having budget, issued again at once at its
//! demoted urgency (`issued` is the switch's instant, `reissues` above zero); one in service
//! completes, marked `exhausted`.

use bulwark_analysis::cluster::{self, ClusterVerdict};
use bulwark_analysis::mc_ipc::invocation_budget_bound;
use bulwark_core::reservation::clustered::Mode;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{InvocationRecord, JobRecord, ModeSwitchRecord, Options};

use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::report::{headings, Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "vestal-mode-switch",
    title: "MC-IPC with Vestal's model: overruns of the low budget switch a cluster to high \
            mode, demote and abort low-criticality requests, and return at an idle instant",
    run,
};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// How long the system runs (the file's `duration`).
pub const LENGTH: Duration = Duration::from_secs(5);
/// `H`'s period (and deadline).
pub const H_PERIOD: Duration = ms(50);
/// `e^L` of `H`.
pub const LOW_BUDGET: Duration = ms(12);
/// `L^H` of the server.
pub const L_HIGH: Duration = ms(2);
/// Every this many jobs of `H`, one overruns `e^L`.
pub const OVERRUN_EVERY: u64 = 5;

/// Task indices, in the file's order.
pub const H: usize = 0;
/// `L1`, in `H`'s cluster.
pub const L1: usize = 1;
/// `H`'s cluster.
const CLUSTER_OF_H: usize = 0;
/// The cluster without a high-criticality reservation.
const OTHER_CLUSTER: usize = 1;

/// What a run keeps: every job, every answered invocation and every change of mode.
pub type Records = bulwark_sim::Kept;

/// The system of the module documentation.
pub fn system() -> Result<bulwark_spec::Scenario, LabError> {
    built_in_scenario(EXPERIMENT.name)
}

/// Runs the system with `seed` and keeps its records.
pub fn simulate(seed: u64) -> Result<Records, LabError> {
    simulate_system(&system()?, seed)
}

/// Runs `scenario` (the system, or a variant of it) with `seed` for [`LENGTH`] and keeps its
/// records.
pub fn simulate_system(scenario: &bulwark_spec::Scenario, seed: u64) -> Result<Records, LabError> {
    let options = Options {
        seed: Some(seed),
        until: Some(LENGTH),
        ..Options::default()
    };
    let mut records = Records::default();
    bulwark_sim::run_recorded(scenario, &options, &mut records, &mut |_| {})?;
    Ok(records)
}

/// What the run showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// `H`'s jobs released and completed.
    pub h_jobs: usize,
    /// `H`'s jobs that computed past `e^L` and started before the end.
    pub overruns: usize,
    /// `H`'s deadline misses.
    pub h_misses: usize,
    /// `H`'s longest response.
    pub h_response: Duration,
    /// Cluster 0's switches to high mode and returns to low mode.
    pub switches: (usize, usize),
    /// True when cluster 0's switches alternate high, low, high, ...
    pub alternating: bool,
    /// Cluster 1's mode changes.
    pub other_cluster_changes: usize,
    /// `L1`'s requests aborted at an instant of a switch to high mode.
    pub aborted_at_switch: usize,
    /// The most one of `H`'s invocations drained, and the bound.
    pub h_drain: (Duration, Duration),
    /// Invocations of `L1` completed, in all.
    pub l1_invocations: usize,
    /// `H`'s `R^*` when AMC-rtb shows cluster 0 schedulable; `None` when it does not.
    pub amc_bound: Option<Duration>,
}

/// `H`'s `R^*` when AMC-rtb shows `scenario`'s cluster 0 schedulable.
fn amc_bound(scenario: &bulwark_spec::Scenario) -> Option<Duration> {
    let clusters = cluster::analyse(scenario);
    let analysis = clusters.get(CLUSTER_OF_H)?;
    if !matches!(analysis.verdict, ClusterVerdict::AmcSchedulable(_)) {
        return None;
    }
    let h = analysis.members.iter().find(|m| m.name == "H")?;
    h.response?.bound()
}

/// True when `record`'s request was pending at the switch to high mode at `switch` and
/// aborted there, "as if the reservations had exhausted their budget" (section VII): pruned
/// and issued again at once, at its demoted urgency, or left to complete in service.
fn aborted_at(record: &InvocationRecord, switch: Instant) -> bool {
    let pending = record.invoked < switch && switch < record.replied;
    let pruned_and_reissued = record.reissues > 0 && record.issued == switch;
    pending && (pruned_and_reissued || record.exhausted)
}

/// Summarises a run of `scenario` from its records.
pub fn summarise(scenario: &bulwark_spec::Scenario, records: &Records) -> Summary {
    let h_jobs: Vec<&JobRecord> = (records.jobs.iter())
        .filter(|j| j.task.index() == H)
        .collect();
    // Job k of H (0-based) overruns when k % 5 == 4; count those that started in the run.
    let overruns = h_jobs
        .iter()
        .filter(|j| j.first_start.is_some() && j.job % OVERRUN_EVERY == OVERRUN_EVERY - 1)
        .count();
    let mine: Vec<&ModeSwitchRecord> = (records.modes.iter())
        .filter(|m| m.cluster == CLUSTER_OF_H)
        .collect();
    let alternating = mine
        .iter()
        .enumerate()
        .all(|(i, m)| m.mode == if i % 2 == 0 { Mode::High } else { Mode::Low });
    let high_at: Vec<Instant> = (mine.iter())
        .filter(|m| m.mode == Mode::High)
        .map(|m| m.at)
        .collect();
    let of = |task: usize| (records.invocations.iter()).filter(move |r| r.task.index() == task);
    let bound = invocation_budget_bound(1, 2, L_HIGH).unwrap_or(Duration::MAX);
    Summary {
        h_jobs: h_jobs.iter().filter(|j| j.completion.is_some()).count(),
        overruns,
        h_misses: h_jobs.iter().filter(|j| j.missed).count(),
        h_response: (h_jobs.iter())
            .filter_map(|j| Some(j.completion?.saturating_duration_since(j.release)))
            .max()
            .unwrap_or(Duration::ZERO),
        switches: (high_at.len(), mine.len() - high_at.len()),
        alternating,
        other_cluster_changes: (records.modes.iter())
            .filter(|m| m.cluster == OTHER_CLUSTER)
            .count(),
        aborted_at_switch: of(L1)
            .filter(|r| high_at.iter().any(|&switch| aborted_at(r, switch)))
            .count(),
        h_drain: (
            of(H)
                .map(|r| r.drained_since_issue)
                .max()
                .unwrap_or(Duration::ZERO),
            bound,
        ),
        l1_invocations: of(L1).count(),
        amc_bound: amc_bound(scenario),
    }
}

/// Runs the system and summarises it.
pub fn evaluate(seed: u64) -> Result<(Summary, Records), LabError> {
    let scenario = system()?;
    let records = simulate_system(&scenario, seed)?;
    Ok((summarise(&scenario, &records), records))
}

/// The seed of the run.
pub const SEED: u64 = 0x7E57A1;

fn run() -> Result<ExperimentReport, LabError> {
    let (summary, _) = evaluate(SEED)?;
    Ok(report(&summary))
}

/// The checks of a summary.
pub fn checks(s: &Summary) -> Vec<Check> {
    vec![
        Check {
            claim: "Cluster 0 switches to high mode once per job of H that overruns e^L, and \
                    returns to low mode before the next switch"
                .into(),
            expected: format!("{} switches, alternating with returns", s.overruns),
            measured: format!(
                "{} switches, {} returns, {}",
                s.switches.0,
                s.switches.1,
                if s.alternating {
                    "alternating"
                } else {
                    "not alternating"
                }
            ),
            pass: s.switches.0 == s.overruns
                && s.alternating
                && s.switches.0.abs_diff(s.switches.1) <= 1,
        },
        Check {
            claim: "The mode is per cluster: cluster 1, with no high-criticality reservation, \
                    never switches"
                .into(),
            expected: "0 mode changes".into(),
            measured: s.other_cluster_changes.to_string(),
            pass: s.other_cluster_changes == 0,
        },
        Check {
            claim: "Requests of the demoted low-criticality reservation pending at a switch \
                    are aborted"
                .into(),
            expected: "at least one abort of L1 at a switch".into(),
            measured: s.aborted_at_switch.to_string(),
            pass: s.aborted_at_switch > 0,
        },
        Check {
            claim: "H meets every deadline, overruns included".into(),
            expected: "0 misses".into(),
            measured: format!(
                "{} misses in {} jobs; longest response {}",
                s.h_misses, s.h_jobs, s.h_response
            ),
            pass: s.h_misses == 0 && s.h_jobs > 0,
        },
        Check {
            claim: "Every invocation of H drains at most (1 + 2 m_k K) L^H (Theorem 1 at the \
                    high level)"
                .into(),
            expected: format!("at most {}", s.h_drain.1),
            measured: s.h_drain.0.to_string(),
            pass: s.h_drain.0 <= s.h_drain.1,
        },
        Check {
            claim: "AMC-rtb (Baruah, Burns and Davis) shows cluster 0 schedulable, and H's \
                    responses stay within its high-mode bound R^*"
                .into(),
            expected: match s.amc_bound {
                Some(bound) => format!("schedulable; longest response at most R^* = {bound}"),
                None => "schedulable".into(),
            },
            measured: match s.amc_bound {
                Some(_) => format!("schedulable; longest response {}", s.h_response),
                None => "not shown schedulable".into(),
            },
            pass: s.amc_bound.is_some_and(|bound| s.h_response <= bound),
        },
    ]
}

/// The report of a summary.
pub fn report(s: &Summary) -> ExperimentReport {
    ExperimentReport {
        source: "Brandenburg, A Synchronous IPC Protocol for Predictable Access to Shared \
                 Resources in Mixed-Criticality Systems, section VII"
            .into(),
        summary: format!(
            "{} s: H ran {} jobs, {} of them past e^L = {}; cluster 0 switched to high mode \
             {} times and back {} times; {} requests of L1 were aborted at a switch; H's \
             longest response was {} (period {}); its invocations drained at most {} (bound \
             {}).",
            LENGTH.as_nanos() / 1_000_000_000,
            s.h_jobs,
            s.overruns,
            LOW_BUDGET,
            s.switches.0,
            s.switches.1,
            s.aborted_at_switch,
            s.h_response,
            H_PERIOD,
            s.h_drain.0,
            s.h_drain.1
        ),
        checks: checks(s),
        tables: vec![Table {
            caption: "The run at a glance".into(),
            header: headings(["measure", "value"]),
            rows: vec![
                vec!["jobs of H (completed)".into(), s.h_jobs.to_string()],
                vec!["of them past e^L".into(), s.overruns.to_string()],
                vec!["switches to high mode".into(), s.switches.0.to_string()],
                vec!["returns to low mode".into(), s.switches.1.to_string()],
                vec![
                    "L1 requests aborted at a switch".into(),
                    s.aborted_at_switch.to_string(),
                ],
                vec![
                    "L1 invocations completed".into(),
                    s.l1_invocations.to_string(),
                ],
                vec!["H's longest response".into(), s.h_response.to_string()],
                vec![
                    "H's largest drain per invocation".into(),
                    s.h_drain.0.to_string(),
                ],
            ],
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes_on_the_real_run() {
        let (summary, _) = evaluate(SEED).unwrap();
        // By hand: H alone above L1, R^L = e^L = 12 ms and R^* = e^H = 30 ms; L1's
        // R^L = 10 + ceil(R / 50) 12 = 22 ms <= 25 ms.
        assert_eq!(summary.amc_bound, Some(ms(30)));
        let failing: Vec<String> = checks(&summary)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| format!("{}: {}", c.claim, c.measured))
            .collect();
        assert!(failing.is_empty(), "{failing:?}\n{summary:?}");
        // 5 s of 50 ms periods: 100 jobs of H, every fifth past e^L.
        assert_eq!(summary.overruns, 20);
    }

    /// Break it: with `e^L = e^H`, `H`'s long jobs stay within their low budget, the cluster
    /// never switches, nothing is aborted, and the run fails the checks of the switches and
    /// the aborts (the others still hold).
    #[test]
    fn a_low_budget_never_overrun_fails_the_switch_checks() {
        use bulwark_spec::MemberKind;
        let mut scenario = system().unwrap();
        let member = &mut scenario.clusters[CLUSTER_OF_H].members[0];
        assert_eq!(member.task, H);
        let MemberKind::Sporadic { low_budget, .. } = &mut member.kind else {
            panic!("H is sporadic");
        };
        *low_budget = scenario.tasks[H].reservation.map(|r| r.budget);
        let summary = summarise(&scenario, &simulate_system(&scenario, SEED).unwrap());
        assert_eq!((summary.switches, summary.aborted_at_switch), ((0, 0), 0));
        // AMC-rtb fails too: with e^L = 30 ms, L1's R^L = 10 + 30 = 40 ms > 25 ms.
        assert_eq!(summary.amc_bound, None);
        let passing: Vec<bool> = checks(&summary).iter().map(|c| c.pass).collect();
        assert_eq!(
            passing,
            [false, true, false, true, true, false],
            "{summary:?}"
        );
    }

    /// The constants the summary reads with are the file's.
    #[test]
    fn the_file_is_the_system_the_constants_describe() {
        use bulwark_spec::MemberKind;
        let scenario = system().unwrap();
        assert_eq!(scenario.duration, LENGTH);
        assert_eq!(scenario.tasks[H].name, "H");
        assert_eq!(scenario.tasks[L1].name, "L1");
        let operation = &scenario.servers[0].body;
        assert!(
            matches!(operation[..], [bulwark_spec::ServerStep::Run(run)] if run.worst_case() == L_HIGH)
        );
        let (cluster, kind) = scenario.cluster_of_task(H).unwrap();
        assert_eq!(cluster, CLUSTER_OF_H);
        assert!(matches!(
            kind,
            MemberKind::Sporadic { low_budget: Some(e), .. } if *e == LOW_BUDGET
        ));
        let period = scenario.tasks[H].reservation.map(|r| r.period);
        assert_eq!(period, Some(H_PERIOD));
    }

    /// The checks fail on a run that does not behave.
    #[test]
    fn the_checks_can_fail() {
        let good = Summary {
            h_jobs: 100,
            overruns: 20,
            h_misses: 0,
            h_response: ms(20),
            switches: (20, 20),
            alternating: true,
            other_cluster_changes: 0,
            aborted_at_switch: 3,
            h_drain: (ms(4), ms(10)),
            l1_invocations: 150,
            amc_bound: Some(ms(30)),
        };
        assert!(checks(&good).iter().all(|c| c.pass));
        let bad = [
            Summary {
                switches: (19, 19),
                ..good.clone()
            },
            Summary {
                other_cluster_changes: 1,
                ..good.clone()
            },
            Summary {
                aborted_at_switch: 0,
                ..good.clone()
            },
            Summary {
                h_misses: 1,
                ..good.clone()
            },
            Summary {
                h_drain: (ms(11), ms(10)),
                ..good.clone()
            },
            Summary {
                h_response: ms(31),
                ..good.clone()
            },
        ];
        for (i, summary) in bad.iter().enumerate() {
            assert!(!checks(summary)[i].pass, "check {i}");
        }
    }
}
