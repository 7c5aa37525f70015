//! Vestal's model with MC-IPC (MC-IPC paper, section VII): a high-criticality reservation
//! that overruns its low-assurance budget switches its cluster to high mode, demoting the
//! low-criticality reservations and aborting their requests, and the cluster returns to low
//! mode at an idle instant; the high-criticality task keeps its deadlines and its requests
//! stay within Theorem 1's bound.
//!
//! **The system**, on the cluster machine: two one-core clusters (`K = 2`, `m_k = 1`) and a
//! server `S` with `L^H = 2 ms` (operations of 0.5-1 ms: `L^L = 1 ms`). Cluster 0 holds `H`,
//! of high criticality (fixed priority 20, period 50 ms, `e^L = 12 ms`, `e^H = 30 ms`), and
//! `L1`, of low criticality (priority 10, budget 10 ms per 25 ms), whose task invokes `S`
//! just before each release of `H`. Cluster 1 holds `L2` and
//! `L3`, of low criticality (budgets 10 ms per 20 and 40 ms). Every task invokes `S` once per
//! job; `H`'s jobs compute 2-4 ms around it, and every fifth computes 14 ms: more than `e^L`,
//! the overrun Vestal's model plans for. The run lasts [`LENGTH`].
//!
//! **What is checked**: cluster 0 switches to high mode exactly once per overrunning job of
//! `H`, and back to low mode before the next; cluster 1 never switches (the mode is per
//! cluster); `L1`'s requests pending at a switch are aborted; `H` meets every deadline; and
//! every invocation of `H` drains at most `(1 + 2 m_k K) L^H = 10 ms` (Theorem 1 at the high
//! level, the bound section VII sizes `e^H` with).

use bulwark_analysis::mc_ipc::{invocation_budget_bound, GateProtocol};
use bulwark_core::reservation::clustered::{
    ClusterConfig, Mode, ReservationId, ReservationKind, Sporadic, SporadicOrder,
};
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::cluster::{
    run as run_cluster, ClusterOutcome, Config, Execution, GateKind, PrunedRequests, ScriptStep,
    ServerConfig, TaskConfig,
};

use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "vestal-mode-switch",
    title: "MC-IPC with Vestal's model: overruns of the low budget switch a cluster to high \
            mode, demote and abort low-criticality requests, and return at an idle instant",
    run,
};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// How long the system runs.
pub const LENGTH: Duration = Duration::from_secs(5);
/// `H`'s period.
pub const H_PERIOD: Duration = ms(50);
/// `e^L` of `H`.
pub const LOW_BUDGET: Duration = ms(12);
/// `L^H` of the server.
pub const L_HIGH: Duration = ms(2);
/// Every this many jobs of `H`, one overruns `e^L`.
pub const OVERRUN_EVERY: u64 = 5;

/// Task indices.
pub const H: usize = 0;
/// `L1`, in `H`'s cluster.
pub const L1: usize = 1;

fn invoke() -> ScriptStep {
    ScriptStep::Invoke {
        server: 0,
        length: Execution::between(us(500), ms(1)),
    }
}

fn compute(min: Duration, max: Duration) -> ScriptStep {
    ScriptStep::Compute(Execution::between(min, max))
}

fn job(before: (Duration, Duration)) -> Vec<ScriptStep> {
    vec![
        compute(before.0, before.1),
        invoke(),
        compute(us(500), ms(1)),
        ScriptStep::SleepUntilNextPeriod,
    ]
}

/// The system of the module documentation.
pub fn system(seed: u64) -> Config {
    let sporadic = |budget: u64, period: u64, priority: u8| {
        ReservationKind::Sporadic(
            Sporadic::new(ms(budget), ms(period)).with_priority(Priority(priority)),
        )
    };
    let high = ReservationKind::Sporadic(
        Sporadic::new(ms(30), H_PERIOD)
            .with_priority(Priority(20))
            .with_high_criticality(LOW_BUDGET),
    );
    let cluster = |reservations| ClusterConfig {
        cores: 1,
        cycle: Duration::ZERO,
        order: SporadicOrder::FixedPriority,
        reservations,
    };
    // H's script: four normal jobs, then one that computes past e^L.
    let mut h_script = Vec::new();
    for _ in 1..OVERRUN_EVERY {
        h_script.extend(job((ms(2), ms(4))));
    }
    h_script.extend(job((ms(14), ms(14))));
    let task = |cluster, reservation: u32, offset, period, script| TaskConfig {
        cluster,
        reservation: ReservationId(reservation),
        offset,
        period,
        script,
        group: None,
    };
    Config {
        clusters: vec![
            cluster(vec![high, sporadic(10, 25, 10)]),
            cluster(vec![sporadic(10, 20, 10), sporadic(10, 40, 5)]),
        ],
        servers: vec![ServerConfig {
            gate: GateKind::Protocol(GateProtocol::McIpc),
            max_operation: L_HIGH,
        }],
        tasks: vec![
            task(0, 0, Duration::ZERO, H_PERIOD, h_script),
            // L1 invokes just before each release of H (its releases at 49.5 + 25k ms meet
            // H's at 50 m - 0.5 ms), so its request is in service or queued when H runs.
            task(0, 1, us(49_500), ms(25), job((us(100), us(200)))),
            task(1, 0, ms(2), ms(20), job((ms(1), ms(2)))),
            task(1, 1, ms(3), ms(40), job((ms(1), ms(3)))),
        ],
        pruned: PrunedRequests::Reissue,
        groups: Vec::new(),
        cost: Default::default(),
        seed,
    }
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
}

/// Runs the system and summarises it.
pub fn evaluate(seed: u64) -> Result<(Summary, ClusterOutcome), LabError> {
    let config = system(seed);
    let outcome = run_cluster(&config, Instant::ZERO.saturating_add(LENGTH))
        .map_err(|e| LabError::McIpc(e.to_string()))?;
    let h_jobs: Vec<_> = outcome.jobs.iter().filter(|j| j.task == H).collect();
    // Job k of H (0-based) overruns when k % 5 == 4; count those released in the run.
    let overruns = (0..h_jobs.len() as u64)
        .filter(|k| k % OVERRUN_EVERY == OVERRUN_EVERY - 1)
        .count();
    let mine: Vec<_> = outcome.modes.iter().filter(|m| m.cluster == 0).collect();
    let alternating = mine
        .iter()
        .enumerate()
        .all(|(i, m)| m.mode == if i % 2 == 0 { Mode::High } else { Mode::Low });
    let high_at: Vec<Instant> = mine
        .iter()
        .filter(|m| m.mode == Mode::High)
        .map(|m| m.at)
        .collect();
    let bound = invocation_budget_bound(1, 2, L_HIGH).unwrap_or(Duration::MAX);
    let summary = Summary {
        h_jobs: h_jobs.iter().filter(|j| j.completion.is_some()).count(),
        overruns,
        h_misses: h_jobs
            .iter()
            .filter(|j| j.response.is_some_and(|r| r > H_PERIOD))
            .count(),
        h_response: h_jobs
            .iter()
            .filter_map(|j| j.response)
            .max()
            .unwrap_or(Duration::ZERO),
        switches: (
            high_at.len(),
            mine.iter().filter(|m| m.mode == Mode::Low).count(),
        ),
        alternating,
        other_cluster_changes: outcome.modes.iter().filter(|m| m.cluster == 1).count(),
        aborted_at_switch: outcome
            .aborts
            .iter()
            .filter(|a| a.task == L1 && high_at.contains(&a.at))
            .count(),
        h_drain: (
            outcome
                .invocations
                .iter()
                .filter(|r| r.task == H)
                .map(|r| r.drained_since_issue)
                .max()
                .unwrap_or(Duration::ZERO),
            bound,
        ),
        l1_invocations: outcome.invocations.iter().filter(|r| r.task == L1).count(),
    };
    Ok((summary, outcome))
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
    ]
}

/// The report of a summary.
pub fn report(s: &Summary) -> ExperimentReport {
    ExperimentReport {
        name: EXPERIMENT.name.into(),
        title: EXPERIMENT.title.into(),
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
            header: ["measure", "value"].map(String::from).to_vec(),
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
        figures: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_passes_on_the_real_run() {
        let (summary, _) = evaluate(SEED).unwrap();
        let failing: Vec<String> = checks(&summary)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| format!("{}: {}", c.claim, c.measured))
            .collect();
        assert!(failing.is_empty(), "{failing:?}\n{summary:?}");
        // 5 s of 50 ms periods: 100 jobs of H, every fifth past e^L.
        assert_eq!(summary.overruns, 20);
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
        ];
        for (i, summary) in bad.iter().enumerate() {
            assert!(!checks(summary)[i].pass, "check {i}");
        }
    }
}
