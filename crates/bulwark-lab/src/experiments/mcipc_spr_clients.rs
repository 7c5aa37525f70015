//! A composed MC-IPC system (`scenarios/mcipc/spr-clients.toml`): the MC-IPC case study with
//! its ten low-criticality reservations as SPR servers (SPR paper, section IV) at
//! rate-monotonic priorities, so the key server is invoked by clients in SPR reservations.
//!
//! What it shows, each as a check, over the case study's eight phases of failures under
//! MC-IPC:
//! - T1 stays within Theorem 1's `(1 + 2 m K) L_key = 18 ms` in every phase, and no lone
//!   budgeted client's invocation drains more than its own Theorem 1 bound: an SPR server's
//!   priority never moves (A1) and it drains while selected (A2), which is all the theorem
//!   asks of a reservation;
//! - the SPR rule bounds a flooding client: in phase 2 the flooder on C4 runs back to back,
//!   yet by any time `t` its server has drained at most `e (1 + floor((t - 1) / p))` (each
//!   chunk of budget comes back a period after the activation it was used from), and, since
//!   its budget does come back, most of that: the flood is contained, not starved. (What the
//!   flooder's requests get from the server can be more: other clients' reservations help
//!   the operation in service, within their own Theorem 1 bound.)
//! - the flooder's exhaustions abort its pending requests, as MC-IPC's platform must.

use bulwark_analysis::mc_ipc::GateProtocol;
use bulwark_core::Duration;
use bulwark_spec::mc_ipc_toml::{McIpcSystem, ReservationKind};

use super::mcipc_case_study::{
    bounds, paper_bound, run_scenario, scenario_phase_result, PhaseResult, ScenarioRun,
};
use super::{Experiment, LabError};
use crate::report::{headings, Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "mcipc-spr-clients",
    title: "MC-IPC composed: the key server invoked by clients in SPR reservations",
    run,
};

/// Where the file is, for messages.
pub const FILE: &str = "scenarios/mcipc/spr-clients.toml";

const TEXT: &str = include_str!("../../../../scenarios/mcipc/spr-clients.toml");

/// How long each phase runs: 100 cycles, as the case study.
pub const LENGTH: Duration = Duration::from_secs(10);

/// The seed of every run.
pub const SEED: u64 = 0x5EC0;

/// The phase whose flooder the SPR checks follow (1-based): a low-criticality task on C4.
const FLOOD_PHASE: usize = 2;

/// The built-in system.
pub fn study() -> Result<McIpcSystem, LabError> {
    Ok(bulwark_spec::parse_mc_ipc(TEXT, FILE)?)
}

/// One phase's summary and what its flooder (if any) received.
pub struct PhaseRun {
    /// T1's summary.
    pub result: PhaseResult,
    /// The run itself, on the scenario machine.
    pub run: ScenarioRun,
}

impl PhaseRun {
    /// Requests an exhaustion aborted, over all clients: those pruned, and those answered
    /// after an abort (see [`Flood::answered_after_abort`]; one served from the background
    /// queue is in both).
    pub fn aborts(&self) -> (u64, usize) {
        let pruned = self.run.outcome.tasks.iter().map(|t| t.requests_aborted);
        let exhausted = self.run.records.invocations.iter().filter(|r| r.exhausted);
        (pruned.sum(), exhausted.count())
    }
}

/// A flooder's reservation `(e, p)` and what its client ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flood {
    /// The task, an index into the file's tasks.
    pub task: usize,
    /// Its SPR server's budget `e`.
    pub budget: Duration,
    /// Its period `p`.
    pub period: Duration,
    /// The budget its reservation drained (the time it was selected, A2: spinning, running
    /// operations or lending its core to slack included).
    pub drained: Duration,
    /// Its requests an exhaustion aborted. The scenario machine counts the pruned ones
    /// (`requests_aborted`, each reissued or moved to the background queue) ...
    pub aborts: u64,
    /// ... and marks an answered request `exhausted` when an abort came after its last issue:
    /// in service then (left to complete, Fig. 1 line 56), or served from the background
    /// queue (then also among `aborts`).
    pub answered_after_abort: u64,
}

impl Flood {
    /// The SPR rule's most by the end of a run of `length`: `e (1 + floor((L - 1) / p))`.
    pub fn allowed(&self, length: Duration) -> Duration {
        let periods = length.as_nanos().saturating_sub(1) / self.period.as_nanos().max(1);
        self.budget.saturating_mul(1 + periods)
    }
}

/// Every phase of `study` under MC-IPC, [`LENGTH`] each, on the scenario machine.
pub fn run_phases(study: &McIpcSystem, seed: u64) -> Result<Vec<PhaseRun>, LabError> {
    let bounds = bounds(study)?;
    (1..=study.phases.len())
        .map(|phase| {
            let run = run_scenario(study, phase, GateProtocol::McIpc, LENGTH, seed, false)
                .map_err(|e| LabError::McIpc(format!("{FILE}: {e}")))?;
            let result = scenario_phase_result(study, &bounds, phase, GateProtocol::McIpc, &run);
            Ok(PhaseRun { result, run })
        })
        .collect()
}

/// The first flooder of phase `phase` (1-based) in an SPR-or-sporadic reservation.
pub fn flood(study: &McIpcSystem, runs: &[PhaseRun], phase: usize) -> Option<Flood> {
    let task = *study.phases.get(phase - 1)?.floods.first()?;
    let reservation = &study.reservations[study.tasks.get(task)?.reservation];
    let ReservationKind::Sporadic { budget, period, .. } = reservation.kind else {
        return None;
    };
    // The file's task `task` is the scenario's task `task`.
    let run = &runs.get(phase - 1)?.run;
    let metrics = run.outcome.tasks.get(task)?;
    let cluster = (run.outcome.clusters.iter()).find(|c| c.tasks.contains(&task))?;
    let member = cluster.tasks.iter().position(|&t| t == task)?;
    let answered_after_abort = (run.records.invocations.iter())
        .filter(|r| r.task.index() == task && r.exhausted)
        .count() as u64;
    Some(Flood {
        task,
        budget,
        period,
        drained: Duration::from_nanos(*cluster.drained_ns.get(member)?),
        aborts: metrics.requests_aborted,
        answered_after_abort,
    })
}

fn run() -> Result<ExperimentReport, LabError> {
    let study = study()?;
    let bound = bounds(&study)?.of(GateProtocol::McIpc);
    let runs = run_phases(&study, SEED)?;
    let flooder = flood(&study, &runs, FLOOD_PHASE);
    Ok(report(bound, &runs, flooder))
}

/// 90% of `d`, rounded down.
fn nine_tenths(d: Duration) -> Duration {
    Duration::from_nanos(d.as_nanos() / 10 * 9)
}

fn millis(d: Duration) -> String {
    format!("{:.3} ms", d.as_nanos() as f64 / 1e6)
}

/// The checks of the eight runs.
pub fn checks(bound: Duration, runs: &[PhaseRun], flooder: Option<Flood>) -> Vec<Check> {
    let worst = runs
        .iter()
        .map(|r| r.result.max_delay())
        .max()
        .unwrap_or(Duration::ZERO);
    let over: usize = runs.iter().map(|r| r.result.over(bound)).sum();
    let over_theorem: usize = runs.iter().map(|r| r.result.over_theorem).sum();
    let unfinished = runs
        .iter()
        .filter(|r| r.result.unfinished.is_some())
        .count();
    let allowed = flooder.map(|f| f.allowed(LENGTH));
    vec![
        Check {
            claim: "Theorem 1 holds with SPR clients: T1 drains at most (1 + 2 m K) L_key in \
                    every phase, and no lone budgeted client exceeds its bound"
                .into(),
            expected: format!(
                "T1 <= {} (the paper's {}) in all 8 phases; 0 invocations over",
                millis(bound),
                millis(paper_bound(GateProtocol::McIpc))
            ),
            measured: format!(
                "{} phases, T1 worst {}, {over} over, {unfinished} unfinished; {over_theorem} \
                 invocations over Theorem 1",
                runs.len(),
                millis(worst)
            ),
            pass: runs.len() == 8
                && bound == paper_bound(GateProtocol::McIpc)
                && over == 0
                && unfinished == 0
                && over_theorem == 0,
        },
        Check {
            claim: "The SPR rule bounds the phase-2 flooder: by the end its server drained at \
                    most e (1 + floor((L - 1) / p)), and at least 90% of it (its budget comes \
                    back)"
                .into(),
            expected: allowed.map_or("a flooder in an SPR server".into(), |a| {
                format!("{} <= drained <= {}", millis(nine_tenths(a)), millis(a))
            }),
            measured: flooder.map_or("no flooder".into(), |f| {
                format!(
                    "drained {} (e {}, p {})",
                    millis(f.drained),
                    f.budget,
                    f.period
                )
            }),
            pass: flooder
                .zip(allowed)
                .is_some_and(|(f, a)| f.drained <= a && f.drained >= nine_tenths(a)),
        },
        Check {
            claim: "The flooder's exhaustions abort its pending requests (MC-IPC's platform \
                    rule)"
                .into(),
            expected: "at least one abort".into(),
            measured: flooder.map_or("no flooder".into(), |f| {
                format!(
                    "{} pruned, {} answered after an abort",
                    f.aborts, f.answered_after_abort
                )
            }),
            pass: flooder.is_some_and(|f| f.aborts + f.answered_after_abort > 0),
        },
    ]
}

/// The report of the eight runs.
pub fn report(bound: Duration, runs: &[PhaseRun], flooder: Option<Flood>) -> ExperimentReport {
    let rows = runs
        .iter()
        .map(|r| {
            vec![
                format!("{}: {}", r.result.phase, r.result.name),
                millis(r.result.max_delay()),
                r.result.over(bound).to_string(),
                r.result.over_theorem.to_string(),
                {
                    let (pruned, answered) = r.aborts();
                    format!("{pruned} + {answered}")
                },
            ]
        })
        .collect();
    ExperimentReport {
        source: "MC-IPC paper (Brandenburg), section VI, with the SPR servers of the SPR \
                 paper, section IV"
            .into(),
        summary: format!(
            "The case study's system from `{FILE}`: four one-core clusters, the key server, \
             the high-criticality partitions R1..R4 and the ten low-criticality reservations \
             as SPR servers (S = 8) at rate-monotonic priorities, through the case study's \
             eight phases of failures, {LENGTH} each under MC-IPC, seed {SEED:#x}."
        ),
        checks: checks(bound, runs, flooder),
        tables: vec![Table {
            caption: format!(
                "Per phase: T1's worst delay at the key server (Theorem 1: {}), its delays \
                 over it, invocations over their own Theorem 1 bound, and requests aborted \
                 by an exhaustion",
                millis(bound)
            ),
            header: headings([
                "phase",
                "T1 worst delay",
                "over",
                "over Theorem 1",
                "aborts (pruned + answered after one)",
            ]),
            rows,
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file is the case study with R5..R14 as SPR servers at rate-monotonic priorities.
    #[test]
    fn the_file_puts_the_low_criticality_reservations_on_spr_servers() {
        use bulwark_spec::mc_ipc_toml::Replenishment;
        let study = study().unwrap();
        let spr = study.replenished_by(Replenishment::Spr { replenishments: 8 });
        assert_eq!(
            spr,
            ["R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13", "R14"]
        );
        assert_eq!(study.phases.len(), 8);
        assert_eq!(study.phases[FLOOD_PHASE - 1].floods.len(), 1);
    }

    /// The bound of the SPR rule, by hand: e = 20 ms, p = 100 ms over 10 s gives
    /// 20 ms * (1 + floor((10 s - 1 ns) / 100 ms)) = 20 ms * 100 = 2 s.
    #[test]
    fn the_spr_allowance_is_one_budget_per_period_begun() {
        let flood = Flood {
            task: 0,
            budget: Duration::from_millis(20),
            period: Duration::from_millis(100),
            drained: Duration::ZERO,
            aborts: 0,
            answered_after_abort: 0,
        };
        assert_eq!(flood.allowed(LENGTH), Duration::from_secs(2));
        assert_eq!(
            flood.allowed(Duration::from_millis(100)),
            Duration::from_millis(20)
        );
        assert_eq!(
            flood.allowed(Duration::from_nanos(100_000_001)),
            Duration::from_millis(40)
        );
    }

    /// Every check passes on the built-in file, and each fails on results that break it.
    #[test]
    fn the_checks_hold_and_can_fail() {
        let study = study().unwrap();
        let bound = bounds(&study).unwrap().of(GateProtocol::McIpc);
        let runs = run_phases(&study, SEED).unwrap();
        let flooder = flood(&study, &runs, FLOOD_PHASE);
        let passed = checks(bound, &runs, flooder);
        assert!(passed.iter().all(|c| c.pass), "{passed:#?}");
        let greedy = flooder.map(|f| Flood {
            drained: f.allowed(LENGTH).saturating_add(Duration::from_nanos(1)),
            ..f
        });
        assert!(!checks(bound, &runs, greedy)[1].pass);
        let starved = flooder.map(|f| Flood {
            drained: Duration::ZERO,
            aborts: 0,
            answered_after_abort: 0,
            ..f
        });
        let failed = checks(bound, &runs, starved);
        assert!(!failed[1].pass && !failed[2].pass);
        assert!(!checks(Duration::from_millis(4), &runs, flooder)[0].pass);
    }
}
