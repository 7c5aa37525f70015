//! The MC-IPC paper's case study (section VI): a key server shared by fourteen reservations
//! on four cores, eight phases of failures, and the delay task T1 suffers under MC-IPC,
//! FIFO-IPC and PRIO-IPC beside each protocol's predicted bound.
//!
//! **The platform** (section VI-A), on the scenario machine: four cores, partitioned (four
//! clusters of one core, so `m_k = 1`, `K = 4`), cycle `H = 100 ms`, a key server `S_key`
//! whose operations take up to `L_key = 2 ms` (drawn in 1.5-2 ms). Fourteen reservations:
//! on C1 the high-criticality partition `R1` in `[0, 50)`; on C2 `R2` in `[0, 50)` and `R3` in
//! `[50, 100)`; on C3 `R4` in `[0, 50)` and five low-criticality sporadic reservations of
//! budget 20 ms and periods 100, 150, 250, 500 and 1000 ms (`R5..R9`); on C4 five more
//! (`R10..R14`). Partition priorities `R1 < R2 < R3 < R4`; sporadic reservations are
//! EDF-ordered; best-effort work is lowest. One task per reservation: each job computes
//! (acquire and process a sample), invokes `S_key` once, computes (assemble the packet) and
//! sleeps until its next period (100 ms for the partitions' tasks, the reservation's period
//! for the others). Offsets of the low-criticality tasks are spread over their periods.
//!
//! The whole study, system, tasks and phases, is the built-in file
//! `scenarios/mcipc/case-study.toml`; [`McIpcSystem::scenario`] lowers each phase into the
//! scenario machine's model ([`run_scenario`]), whose job and invocation records give T1's
//! figures ([`summarise_scenario`]); the tests check each lowered phase against the paper's
//! description built by hand, and the hosted runtime runs the same scenario on real threads
//! ([`run_scenario_on_host`]). FIFO-IPC and PRIO-IPC gates never abort a request (only MC-IPC
//! prunes), so a request of T1 left queued when its slot ends is served later instead of
//! being reissued at the back.
//!
//! **The phases** (section VI-C), each run on its own for [`PHASE`] (100 jobs of T1):
//! 1. normal operation;
//! 2. the 100 ms low-criticality task on C4 floods `S_key` (it invokes back to back);
//! 3. 16 extra low-criticality reservations per core (budget 100 ms, period 3 s), each with
//!    a correct task, launched together 10 ms before a cycle starts;
//! 4. the task in `R4` (highest priority) floods;
//! 5. the tasks in `R2` and `R4` flood;
//! 6. `R4` launches 15 extra correct tasks;
//! 7. those 15 extra tasks, and the task in `R2` floods again (the text: "a combination of
//!    phases 4 and 6 ... the task in R2 malfunctions again");
//! 8. 20 correct best-effort tasks per core, launched together 10 ms before a cycle starts.
//!
//! A flooding task separates two requests by 10 us of computation: the system call that the
//! paper says keeps a single flooder from starving others under PRIO-IPC. Launching the
//! extra tasks together just before a cycle is our choice of *when* they arrive (the paper
//! does not say); it is what makes a queue of unexpected clients meet T1's request.
//!
//! **The bounds** (section VI-B), from `bulwark_analysis::mc_ipc` on the same file: MC-IPC `(1 + 2 m K) L_key =
//! 18 ms` (Theorem 1); FIFO-IPC `n L_key = 28 ms` for the `n = 14` expected tasks; PRIO-IPC
//! `(2 + 1 + 1) L_key = 8 ms` (the two higher-priority partitions that overlap `R1`, T1's own
//! request, one lower-priority request in service). T1's partition is never preempted in its
//! slot, so its delay (invoke to reply) is the budget it drains. Each phase's own bounds
//! (`bulwark_analysis::mc_ipc_phases`: its added tasks and floods in the same formulas) say
//! why a bound breaks, and T1's delay stays within every one the phase has.

use bulwark_analysis::gates;
use bulwark_analysis::mc_ipc::{
    analyse, fifo_ipc_invocation_bound, invocation_budget_bound, prio_ipc_invocation_bound,
    GateProtocol,
};
use bulwark_analysis::mc_ipc_phases::{analyse_phases, PhaseBounds, PhaseClientBounds};
use bulwark_core::{Duration, Instant};
use bulwark_host::{HostConfig, HostError, HostRun};
use bulwark_sim::trace::Trace;
use bulwark_sim::{run_recorded, Options, Outcome};
use bulwark_spec::mc_ipc_toml::{McIpcSystem, Phase};
use bulwark_spec::model::{MemberKind, Scenario};

use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "mcipc-case-study",
    title: "MC-IPC case study: a key server shared across criticalities through eight phases \
            of failures; T1's delay under MC-IPC, FIFO-IPC and PRIO-IPC against their bounds",
    run,
};

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// The cycle `H`.
pub const CYCLE: Duration = ms(100);
/// `L_key`.
pub const L_KEY: Duration = ms(2);
/// How long each phase runs: 100 jobs of T1.
pub const PHASE: Duration = Duration::from_secs(10);
/// Cores, each its own cluster.
pub const CORES: usize = 4;
/// The low-criticality reservations' periods, per core.
pub const LOW_PERIODS: [u64; 5] = [100, 150, 250, 500, 1000];
/// The three protocols, in report order.
pub const PROTOCOLS: [GateProtocol; 3] = GateProtocol::ALL;

/// The bound the paper predicts for T1 under `protocol` (section VI-B), from its formulas.
pub fn paper_bound(protocol: GateProtocol) -> Duration {
    let bound = match protocol {
        // Theorem 1 with m_k = 1 core per cluster and K = 4 clusters.
        GateProtocol::McIpc => invocation_budget_bound(1, CORES as u64, L_KEY),
        // n = 14 expected tasks.
        GateProtocol::FifoIpc => fifo_ipc_invocation_bound(14, L_KEY),
        // R2 and R4 overlap R1's slot, one request each; one lower request in service.
        GateProtocol::PrioIpc => prio_ipc_invocation_bound(2, true, L_KEY),
    };
    bound.unwrap_or(Duration::MAX)
}

/// Where the built-in case study is, for messages.
pub const CASE_STUDY_FILE: &str = "scenarios/mcipc/case-study.toml";

const CASE_STUDY: &str = include_str!("../../../../scenarios/mcipc/case-study.toml");

/// The built-in case study: the system of section VI-A, its tasks and its eight phases.
pub fn case_study() -> Result<McIpcSystem, LabError> {
    Ok(bulwark_spec::parse_mc_ipc(CASE_STUDY, CASE_STUDY_FILE)?)
}

/// Index of T1, the vantage point: the file's first task.
pub const T1: usize = 0;

/// T1's predicted per-invocation bounds, at the first server it invokes: the system's, and
/// each phase's with its own clients and floods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The system's, under each of [`PROTOCOLS`].
    pub system: [Duration; 3],
    /// Each phase's, in file order, under each of [`PROTOCOLS`]; `None` where the phase
    /// leaves the protocol without bound (two or more flooders that can precede T1).
    pub phases: Vec<[Option<Duration>; 3]>,
    /// Each phase's bounds for every client, in file order (`mc_ipc_phases`).
    pub clients: Vec<PhaseBounds>,
}

impl Bounds {
    /// The system's bound under `protocol`.
    pub fn of(&self, protocol: GateProtocol) -> Duration {
        self.system[protocol_index(protocol)]
    }

    /// The bound under `protocol` in phase `phase` (1-based; 0, or one past the file's, is
    /// the system as given).
    pub fn in_phase(&self, phase: usize, protocol: GateProtocol) -> Option<Duration> {
        match self.phases.get(phase.wrapping_sub(1)) {
            Some(bounds) => bounds[protocol_index(protocol)],
            None => Some(self.of(protocol)),
        }
    }
}

/// Where `protocol` is among [`PROTOCOLS`].
fn protocol_index(protocol: GateProtocol) -> usize {
    // PROTOCOLS is GateProtocol::ALL: every protocol is there.
    PROTOCOLS.iter().position(|&p| p == protocol).unwrap_or(0)
}

/// T1's [`Bounds`] from the analysis of `study` (`bulwark_analysis::mc_ipc` for the system,
/// `mc_ipc_phases` for its phases), worked out once for every run.
pub fn bounds(study: &McIpcSystem) -> Result<Bounds, LabError> {
    let t1 = study.tasks.get(vantage(study)).ok_or_else(|| {
        LabError::McIpc(
            "the system has no [[task]], so nothing to simulate; add [[task]] tables with \
             scripts (the task named `T1`, else the first, is the one whose invocations are \
             measured)"
                .into(),
        )
    })?;
    let no_bound = || {
        LabError::McIpc(format!(
            "task `{}`, the vantage (named `T1`, else the first), invokes no server, and its \
             invocations are what is measured; allowed: a vantage whose script has an \
             `invoke` step",
            t1.name
        ))
    };
    let analysis_error = |e| LabError::McIpc(format!("analysis: {e:?}"));
    let server = invoked_server(t1).ok_or_else(no_bound)?;
    let name = &study.servers[server].name;
    // The per-invocation bounds do not depend on the protocol budgets are sized for.
    let analysed = analyse(study, GateProtocol::McIpc).map_err(analysis_error)?;
    let own = (analysed.clients[t1.reservation].servers.iter())
        .find(|b| &b.server == name)
        .ok_or_else(no_bound)?;
    let system = PROTOCOLS.map(|protocol| match protocol {
        GateProtocol::McIpc => own.mc_ipc,
        GateProtocol::FifoIpc => own.fifo_ipc,
        GateProtocol::PrioIpc => own.prio_ipc,
    });
    let clients = analyse_phases(study).map_err(analysis_error)?;
    let mut phases = Vec::with_capacity(study.phases.len());
    for phase in &clients {
        let in_phase = (phase.clients[t1.reservation].servers.iter())
            .find(|b| &b.server == name)
            .ok_or_else(no_bound)?;
        phases.push(PROTOCOLS.map(|protocol| in_phase.of(protocol)));
    }
    Ok(Bounds {
        system,
        phases,
        clients,
    })
}

/// The first server `task`'s script invokes: the one whose bounds are T1's.
fn invoked_server(task: &bulwark_spec::mc_ipc_toml::Task) -> Option<usize> {
    task.script.iter().find_map(|step| match *step {
        bulwark_spec::mc_ipc_toml::ScriptStep::Invoke { server, .. } => Some(server),
        _ => None,
    })
}

/// What one phase under one protocol gave for T1.
#[derive(Clone, Debug)]
pub struct PhaseResult {
    /// 1-based, in the file's order.
    pub phase: usize,
    /// The phase's name in the file.
    pub name: String,
    /// T1's predicted bound under this protocol.
    pub bound: Duration,
    /// The protocol.
    pub protocol: GateProtocol,
    /// The protocol's bound for T1 with this phase's own clients and floods in section
    /// VI-B's formulas (`n`, `h` and `b` counted again, one flooder that can precede T1
    /// counted after every other operation); `None` where two or more flood, so PRIO-IPC
    /// has none.
    pub phase_bound: Option<Duration>,
    /// T1's delay (invoke to reply) per completed invocation, in order.
    pub delays: Vec<Duration>,
    /// For a job of T1 still unfinished when the phase ends, a lower bound on its delay: from
    /// its release plus the longest computation before the request to the end of the phase.
    pub unfinished: Option<Duration>,
    /// T1's jobs released.
    pub jobs: usize,
    /// T1's jobs that completed.
    pub completed: usize,
    /// T1's jobs still pending a period after their release (completed later, or not by the
    /// end): each holds back the next release, as jobs of one task do not overlap.
    pub late: usize,
    /// Under MC-IPC: invocations that drained more than Theorem 1 allows while their
    /// reservation had budget (must be none). Only clients alone in a budgeted reservation
    /// count: the theorem's premise (section IV) is one task per reservation.
    pub over_theorem: usize,
    /// Invocations of all clients.
    pub invocations: usize,
    /// In a phase: the invocations of clients alone in a budgeted reservation (the phase's
    /// new ones included), answered while their budget lasted, that had a bound under the
    /// protocol with the phase's clients and floods; and how many of them drained more.
    pub drains_bounded: (usize, usize),
    /// What `allocate` and `terminate` steps did in the phase.
    pub reclaimed: Reclaimed,
    /// Context switches on all cores (each charged the file's `context-switch` cycles).
    pub context_switches: u64,
}

/// The reclamation work of one run: objects made and refused, and the time cores were masked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reclaimed {
    /// Objects created by every `allocate` step.
    pub created: u64,
    /// Objects refused by a group's quota.
    pub refused: u64,
    /// Terminations, each one masked span (a preemptible one's steps count apart).
    pub terminations: u64,
    /// The masked time of all terminations.
    pub masked: Duration,
    /// The longest one masked span.
    pub longest_mask: Duration,
}

impl PhaseResult {
    /// The result named after its phase of `study` and judged against its protocol's bound
    /// among `bounds`.
    fn named(mut self, study: &McIpcSystem, bounds: &Bounds) -> PhaseResult {
        self.name = phase_name(study, self.phase);
        self.bound = bounds.of(self.protocol);
        self.phase_bound = bounds.in_phase(self.phase, self.protocol);
        self
    }

    /// The longest delay, counting an unfinished request's lower bound.
    pub fn max_delay(&self) -> Duration {
        self.delays
            .iter()
            .copied()
            .chain(self.unfinished)
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// The mean delay of the completed invocations (zero without any).
    pub fn mean_delay(&self) -> Duration {
        let total: u64 = self.delays.iter().map(|d| d.as_nanos()).sum();
        Duration::from_nanos(total / (self.delays.len().max(1) as u64))
    }

    /// Delays above `bound`, an unfinished request's lower bound included.
    pub fn over(&self, bound: Duration) -> usize {
        self.delays
            .iter()
            .chain(&self.unfinished)
            .filter(|d| **d > bound)
            .count()
    }
}

/// Runs `study`'s phase `phase` (1-based) under `protocol` for `length`; `bounds` are T1's
/// ([`bounds`]).
pub fn run_phase(
    study: &McIpcSystem,
    bounds: &Bounds,
    phase: usize,
    protocol: GateProtocol,
    length: Duration,
    seed: u64,
) -> Result<PhaseResult, LabError> {
    run_phase_with(study, bounds, phase, protocol, length, seed, false).map(|(result, _)| result)
}

/// [`run_phase`], also returning the run's trace when `traced`: one run gives both the
/// summary and what `simulate --trace` draws.
///
/// The run is [`run_scenario`]'s, on the scenario machine.
pub fn run_phase_with(
    study: &McIpcSystem,
    bounds: &Bounds,
    phase: usize,
    protocol: GateProtocol,
    length: Duration,
    seed: u64,
    traced: bool,
) -> Result<(PhaseResult, Option<Trace>), LabError> {
    let mut run = run_scenario(study, phase, protocol, length, seed, traced)?;
    let result = scenario_phase_result(study, bounds, phase, protocol, &run);
    Ok((result, run.outcome.trace.take()))
}

/// [`summarise_scenario`] of `run`, a scenario-machine run of `study`'s phase `phase` (0: the
/// system as given) under `protocol`, named after the phase and judged against the vantage
/// task's bound among `bounds`.
pub fn scenario_phase_result(
    study: &McIpcSystem,
    bounds: &Bounds,
    phase: usize,
    protocol: GateProtocol,
    run: &ScenarioRun,
) -> PhaseResult {
    let mut result = summarise_scenario(study, phase, protocol, run).named(study, bounds);
    let index = phase.wrapping_sub(1);
    if let (Some(spec), Some(analysed)) = (study.phases.get(index), bounds.clients.get(index)) {
        result.drains_bounded = drains_within_phase_bounds(study, spec, analysed, protocol, run);
    }
    result
}

/// Of the invocations of `run` (a run of `study`'s phase `phase`, analysed as `analysed`,
/// under `protocol`) by clients alone in a budgeted reservation and answered while their
/// budget lasted: how many have a bound under `protocol` in the phase, and how many of those
/// drained more than it since they were last issued. The scenario's tasks are the file's,
/// then the phase's copies ([`Phase::copies`]); a copy is bounded when its addition gives it
/// a new sporadic reservation.
fn drains_within_phase_bounds(
    study: &McIpcSystem,
    phase: &Phase,
    analysed: &PhaseBounds,
    protocol: GateProtocol,
    run: &ScenarioRun,
) -> (usize, usize) {
    // Per scenario task: its bounds in the phase, where it has its own.
    let copies = phase.copies().map(|(index, cluster, _)| {
        (analysed.added.iter())
            .find(|added| added.addition == index && added.cluster == cluster)
            .map(|added| &added.bounds)
    });
    let client_of: Vec<Option<&PhaseClientBounds>> = (study.tasks.iter())
        .map(|task| analysed.clients.get(task.reservation))
        .chain(copies)
        .collect();
    let lone = lone_budgeted(&run.scenario);
    let bound_of = |task: usize, server: usize| {
        let client = client_of.get(task).copied().flatten()?;
        let name = &study.servers.get(server)?.name;
        let bounds = client.servers.iter().find(|b| &b.server == name)?;
        bounds.of(protocol)
    };
    let bounded: Vec<(Duration, Duration)> = (run.records.invocations.iter())
        .filter(|r| !r.exhausted && lone(r.task.index()))
        .filter_map(|r| Some((r.drained_since_issue, bound_of(r.task.index(), r.server)?)))
        .collect();
    let over = bounded
        .iter()
        .filter(|(drained, bound)| drained > bound)
        .count();
    (bounded.len(), over)
}

/// Whether each task of `scenario` is alone in a budgeted reservation of its cluster (a
/// [`MemberKind::Sporadic`] or [`MemberKind::Partition`] member that no
/// [`MemberKind::Shared`] member joins): the clients the per-invocation bounds cover
/// (section IV's premise is one task per reservation).
fn lone_budgeted(scenario: &Scenario) -> impl Fn(usize) -> bool + '_ {
    move |task| {
        let Some((k, kind)) = scenario.cluster_of_task(task) else {
            return false;
        };
        let budgeted = matches!(
            kind,
            MemberKind::Sporadic { .. } | MemberKind::Partition { .. }
        );
        let shared = (scenario.clusters[k].members.iter())
            .any(|m| m.kind == MemberKind::Shared { owner: task });
        budgeted && !shared
    }
}

/// What a run on the scenario machine keeps for [`summarise_scenario`]: every job and every
/// answered invocation, as the machine hands them over.
pub type Records = bulwark_sim::Kept;

/// One run of a phase on the scenario machine: the lowered scenario, the machine's outcome
/// and its records.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    /// `study`'s phase as the scenario machine's model ([`McIpcSystem::scenario`]).
    pub scenario: Scenario,
    /// The aggregates, and the trace when asked for.
    pub outcome: Outcome,
    /// Every job and answered invocation.
    pub records: Records,
}

/// Runs `study`'s phase `phase` (1-based; 0 for the system without any phase's changes) under
/// `protocol` for `length` on the scenario machine, its servers behind `protocol`'s gate (an
/// MC-IPC gate moves pruned requests to its background queue, as the prototype does, section
/// V; the other gates never abort a request), recording the trace when `traced`.
pub fn run_scenario(
    study: &McIpcSystem,
    phase: usize,
    protocol: GateProtocol,
    length: Duration,
    seed: u64,
    traced: bool,
) -> Result<ScenarioRun, LabError> {
    let scenario = lowered(study, phase, protocol, seed, length);
    let options = Options {
        record_trace: traced,
        ..Options::default()
    };
    let mut records = Records::default();
    let outcome = run_recorded(&scenario, &options, &mut records, &mut |_| {})
        .map_err(|e| LabError::McIpc(format!("phase {phase}: {e}")))?;
    Ok(ScenarioRun {
        scenario,
        outcome,
        records,
    })
}

/// `study`'s phase `phase` (1-based; 0: the system as given) under `protocol` for `length`,
/// as both platforms run it: an MC-IPC gate moves pruned requests to its background queue,
/// as the prototype does (section V).
fn lowered(
    study: &McIpcSystem,
    phase: usize,
    protocol: GateProtocol,
    seed: u64,
    length: Duration,
) -> Scenario {
    study.scenario(phase.checked_sub(1), protocol, true, seed, length)
}

/// [`run_scenario`] on this machine's managed core: the same lowered phase, its tasks and
/// servers real threads and the scenario machine, stepped with reported timing, the
/// dispatcher ([`bulwark_host::run_machine`]), for `host.until`. The error is the host's (no
/// privileges, or a system it cannot run).
pub fn run_scenario_on_host(
    study: &McIpcSystem,
    phase: usize,
    protocol: GateProtocol,
    seed: u64,
    host: &HostConfig,
) -> Result<HostRun<ScenarioRun>, HostError> {
    let length = host.until.unwrap_or(bulwark_host::DEFAULT_RUN);
    let scenario = lowered(study, phase, protocol, seed, length);
    let mut records = Records::default();
    let run = bulwark_host::run_machine(&scenario, host, &mut records)?;
    Ok(HostRun {
        outcome: ScenarioRun {
            scenario,
            outcome: run.outcome,
            records,
        },
        host: run.host,
        entry_cost: run.entry_cost,
    })
}

/// The vantage task: the file's task named `T1`, else its first task (the one [`bounds`]
/// and `--file` document as measured).
pub fn vantage(study: &McIpcSystem) -> usize {
    study
        .tasks
        .iter()
        .position(|t| t.name == "T1")
        .unwrap_or(T1)
}

/// The name of `study`'s phase `phase` (1-based; 0: the system as given).
fn phase_name(study: &McIpcSystem, phase: usize) -> String {
    study
        .phases
        .get(phase.wrapping_sub(1))
        .map_or_else(|| "the system as given".into(), |p| p.name.clone())
}

/// The invocations of a scenario run that drained more than Theorem 1 allows (plus `slack`:
/// a host run passes what its dispatcher and wake-ups may add) since they were last issued
/// while their client's reservation had budget (not `exhausted`), counting only
/// clients alone in a budgeted reservation, which the theorem covers: a member that is
/// [`MemberKind::Sporadic`] or [`MemberKind::Partition`] with no [`MemberKind::Shared`]
/// member on it. Each client's bound is the one [`gates`] reads from the scenario,
/// `(1 + 2 m_k K) L_q`, as `analyze` prints it.
pub fn scenario_over_theorem(run: &ScenarioRun, slack: Duration) -> usize {
    let scenario = &run.scenario;
    // Per server, per task: the bound of a lone budgeted client (None for any other).
    let lone = lone_budgeted(scenario);
    let bounds: Vec<Vec<Option<Duration>>> = gates::analyse(scenario)
        .into_iter()
        .zip(&scenario.servers)
        .map(|(gate, spec)| {
            let mut per_task = vec![None; scenario.tasks.len()];
            for (client, &task) in gate.clients.iter().zip(&spec.clients) {
                per_task[task] = client.bound.clone().ok().filter(|_| lone(task));
            }
            per_task
        })
        .collect();
    run.records
        .invocations
        .iter()
        .filter(|r| !r.exhausted)
        .filter(|r| {
            let bound = bounds.get(r.server).and_then(|b| b[r.task.index()]);
            bound.is_some_and(|bound| r.drained_since_issue > bound.saturating_add(slack))
        })
        .count()
}

/// The vantage task's figures from `run`, a scenario-machine run of `study`'s phase `phase`
/// under `protocol`: what [`summarise`] gives for a cluster-machine run; `name` and `bound`
/// are left unset.
///
/// The scenario machine's horizon is inclusive: a job released at the end of the run counts
/// as released (and, with no completion, as unfinished, its delay so far zero, so no lower
/// bound is drawn for it). Its terminations, masked time and longest mask are the cores'
/// reclamation entries (`reclaims`), kernel time (`reclaim_ns`, summed) and longest stretch
/// (`max_reclaim_ns`).
pub fn summarise_scenario(
    study: &McIpcSystem,
    phase: usize,
    protocol: GateProtocol,
    run: &ScenarioRun,
) -> PhaseResult {
    let t1 = vantage(study);
    let until = Instant::ZERO.saturating_add(run.scenario.duration);
    let jobs = || {
        run.records
            .jobs
            .iter()
            .filter(move |j| j.task.index() == t1 && j.release <= until)
    };
    let outcome = &run.outcome;
    PhaseResult {
        phase,
        name: String::new(),
        bound: Duration::MAX,
        protocol,
        phase_bound: None,
        delays: run
            .records
            .invocations
            .iter()
            .filter(|r| r.task.index() == t1)
            .map(|r| r.replied.saturating_duration_since(r.invoked))
            .collect(),
        // A job released by the end and not completed whose request is not answered gives a
        // lower bound on that request's delay, from its release. One whose request was
        // answered (its delay among `delays`) gives none: under FIFO-IPC and PRIO-IPC a
        // request answered after R1's slot closed leaves its job's last computation to the
        // next slot (phase 8 under FIFO-IPC, 5 under PRIO-IPC), which is no delay of a request.
        unfinished: jobs()
            .find(|j| j.completion.is_none())
            .filter(|j| {
                !(run.records.invocations.iter())
                    .any(|r| r.task.index() == t1 && r.invoked >= j.release)
            })
            .and_then(|j| until.checked_duration_since(j.release.saturating_add(BEFORE_REQUEST)))
            .filter(|d| !d.is_zero()),
        jobs: jobs().count(),
        completed: jobs().filter(|j| j.completion.is_some()).count(),
        late: late_jobs(
            jobs().map(|j| (j.release, j.completion)),
            study.tasks[t1].period,
            until,
        ),
        over_theorem: if protocol == GateProtocol::McIpc {
            scenario_over_theorem(run, Duration::ZERO)
        } else {
            0
        },
        invocations: run.records.invocations.len(),
        drains_bounded: (0, 0),
        reclaimed: Reclaimed {
            created: outcome.tasks.iter().map(|t| t.objects_allocated).sum(),
            refused: outcome.tasks.iter().map(|t| t.allocations_refused).sum(),
            terminations: outcome.cores.iter().map(|c| c.reclaims).sum(),
            masked: Duration::from_nanos(outcome.cores.iter().map(|c| c.reclaim_ns).sum()),
            longest_mask: Duration::from_nanos(
                outcome
                    .cores
                    .iter()
                    .map(|c| c.max_reclaim_ns)
                    .max()
                    .unwrap_or(0),
            ),
        },
        context_switches: outcome.cores.iter().map(|c| c.context_switches).sum(),
    }
}

/// The longest computation before T1's request.
const BEFORE_REQUEST: Duration = us(1500);

/// How many of `jobs` (release, completion) were still pending `period` after their
/// release: completed later, or not completed by `until` more than `period` after it.
fn late_jobs(
    jobs: impl Iterator<Item = (Instant, Option<Instant>)>,
    period: Duration,
    until: Instant,
) -> usize {
    jobs.filter(|&(release, completion)| {
        completion
            .unwrap_or(until)
            .saturating_duration_since(release)
            > period
    })
    .count()
}

/// The seed of every run.
pub const SEED: u64 = 0x5EC0;

/// Every phase of `study` under every protocol, `length` each.
pub fn run_all(
    study: &McIpcSystem,
    length: Duration,
    seed: u64,
) -> Result<Vec<PhaseResult>, LabError> {
    let bounds = bounds(study)?;
    let mut results = Vec::new();
    for protocol in PROTOCOLS {
        for phase in 1..=study.phases.len() {
            results.push(run_phase(study, &bounds, phase, protocol, length, seed)?);
        }
    }
    Ok(results)
}

fn run() -> Result<ExperimentReport, LabError> {
    let study = case_study()?;
    Ok(report(&run_all(&study, PHASE, SEED)?))
}

fn millis(d: Duration) -> String {
    format!("{:.2}", d.as_nanos() as f64 / 1e6)
}

/// The paper's expectation: which phases exceed each protocol's bound.
pub fn expected_over(protocol: GateProtocol) -> &'static [usize] {
    match protocol {
        GateProtocol::McIpc => &[],
        GateProtocol::FifoIpc => &[3, 8],
        GateProtocol::PrioIpc => &[5, 6, 7],
    }
}

/// The report of `results`.
pub fn report(results: &[PhaseResult]) -> ExperimentReport {
    let find = |protocol: GateProtocol, phase: usize| {
        results
            .iter()
            .find(|r| r.protocol == protocol && r.phase == phase)
    };
    let mut phases: Vec<(usize, &str)> =
        results.iter().map(|r| (r.phase, r.name.as_str())).collect();
    phases.sort();
    phases.dedup();
    let mut rows = Vec::new();
    for (phase, description) in phases {
        let mut row = vec![phase.to_string(), description.to_string()];
        for protocol in PROTOCOLS {
            row.push(match find(protocol, phase) {
                Some(r) => match r.unfinished {
                    Some(_) if r.completed + 1 < r.jobs.max(1) || r.completed < 100 => format!(
                        "> {} (T1 starved: {} of {} jobs done)",
                        millis(r.max_delay()),
                        r.completed,
                        r.jobs
                    ),
                    _ => millis(r.max_delay()),
                },
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut header = vec!["phase".to_string(), "what happens".to_string()];
    for protocol in PROTOCOLS {
        header.push(format!(
            "{} max (bound {} ms)",
            protocol.label(),
            millis(bound(results, protocol))
        ));
    }
    let checks = checks(results);
    let summary = format!(
        "Four cores, fourteen reservations and a key server with L = 2 ms, eight phases of \
         {} s each ({} jobs of T1), under each protocol. T1's worst delay: MC-IPC {} ms \
         (bound 18), FIFO-IPC {} ms (bound 28), PRIO-IPC {} ms (bound 8). MC-IPC stays \
         within Theorem 1 in every phase; FIFO-IPC breaks its bound when unexpected tasks \
         arrive, PRIO-IPC when higher-priority tasks flood or multiply.",
        PHASE.as_nanos() / 1_000_000_000,
        results.first().map_or(0, |r| r.jobs),
        worst(results, GateProtocol::McIpc),
        worst(results, GateProtocol::FifoIpc),
        worst(results, GateProtocol::PrioIpc),
    );
    ExperimentReport {
        source: "Brandenburg, A Synchronous IPC Protocol for Predictable Access to Shared \
                 Resources in Mixed-Criticality Systems, section VI, Fig. 2"
            .into(),
        summary,
        checks,
        tables: vec![
            Table {
                caption: "T1's longest delay (ms) invoking the key server, per phase and \
                          protocol, beside each protocol's predicted bound"
                    .into(),
                header,
                rows,
            },
            phase_bounds_table(results),
        ],
        figures: figures(results),
        ..EXPERIMENT.blank_report()
    }
}

/// T1's bound per phase and protocol with the phase's own clients and floods.
fn phase_bounds_table(results: &[PhaseResult]) -> Table {
    let mut phases: Vec<usize> = results.iter().map(|r| r.phase).collect();
    phases.sort_unstable();
    phases.dedup();
    let rows = (phases.into_iter())
        .map(|phase| {
            let mut row = vec![phase.to_string()];
            for protocol in PROTOCOLS {
                let result = (results.iter()).find(|r| r.protocol == protocol && r.phase == phase);
                row.push(match result {
                    Some(r) => r.phase_bound.map_or_else(|| "none".into(), millis),
                    None => "-".into(),
                });
            }
            row
        })
        .collect();
    let mut header = vec!["phase".to_string()];
    header.extend(PROTOCOLS.iter().map(|p| format!("{} bound", p.label())));
    Table {
        caption: "T1's bound (ms) per phase with the phase's own clients and floods \
                  (`bulwark analyze` lists every reservation's); none: two or more clients \
                  that can precede T1 flood"
            .into(),
        header,
        rows,
    }
}

/// The bound `results` carry for `protocol` (the same in every phase).
fn bound(results: &[PhaseResult], protocol: GateProtocol) -> Duration {
    results
        .iter()
        .find(|r| r.protocol == protocol)
        .map_or(Duration::MAX, |r| r.bound)
}

fn worst(results: &[PhaseResult], protocol: GateProtocol) -> String {
    millis(
        results
            .iter()
            .filter(|r| r.protocol == protocol)
            .map(PhaseResult::max_delay)
            .max()
            .unwrap_or(Duration::ZERO),
    )
}

/// One scatter plot per protocol in `results`, like the paper's Fig. 2: a point per job of
/// T1, phases side by side, log scale, the predicted bound as a line.
pub fn figures(results: &[PhaseResult]) -> Vec<Figure> {
    use crate::plot::{scatter_plot, Series};
    PROTOCOLS
        .iter()
        .map(|&protocol| {
            let bound = bound(results, protocol);
            let last = results.iter().map(|r| r.phase).max().unwrap_or(0);
            // Within its phase, the k-th of a phase's n points is drawn at (k + 1) / (n + 1),
            // so no point sits on a boundary line, under the phase's label.
            let spread = |phase: usize, k: usize, n: usize| {
                (phase - 1) as f64 + (k + 1) as f64 / (n + 1) as f64
            };
            let mut series: Vec<Series> = (1..=last)
                .map(|phase| {
                    let points = results
                        .iter()
                        .filter(|r| r.protocol == protocol && r.phase == phase)
                        .flat_map(|r| {
                            let n = r.delays.len() + usize::from(r.unfinished.is_some());
                            r.delays
                                .iter()
                                .enumerate()
                                .map(move |(k, d)| (spread(phase, k, n), d.as_nanos() as f64 / 1e6))
                        })
                        .collect();
                    Series::new(format!("phase {phase}"), points)
                })
                .collect();
            // A request still waiting at the end of its phase is drawn with its delay so far,
            // a lower bound: starvation shows as a point far above, in a series of its own so
            // that the legend names it.
            let unfinished: Vec<(f64, f64)> = results
                .iter()
                .filter(|r| r.protocol == protocol)
                .flat_map(|r| {
                    let n = r.delays.len() + usize::from(r.unfinished.is_some());
                    r.unfinished.iter().map(move |d| {
                        (
                            spread(r.phase, r.delays.len(), n),
                            d.as_nanos() as f64 / 1e6,
                        )
                    })
                })
                .collect();
            if !unfinished.is_empty() {
                series.push(
                    Series::new("still waiting at phase end (delay so far)", unfinished)
                        .emphasised(),
                );
            }
            let boundaries: Vec<(f64, String)> = (1..last)
                .map(|p| (p as f64, format!("{}", p + 1)))
                .collect();
            Figure {
                file: format!("{}.svg", protocol.label().to_lowercase()),
                caption: format!(
                    "Delay of T1 invoking the key server under {}, one point per job, phases \
                     side by side, y axis logarithmic, against the predicted bound ({} ms); a \
                     request still waiting when its phase ends is drawn with its delay so far \
                     and named in the legend",
                    protocol.label(),
                    millis(bound)
                ),
                svg: scatter_plot(
                    &format!(
                        "T1's delay under {} (bound {} ms)",
                        protocol.label(),
                        millis(bound)
                    ),
                    "phase",
                    "delay (ms)",
                    &series,
                    true,
                    &[(
                        bound.as_nanos() as f64 / 1e6,
                        format!("bound {} ms", millis(bound)),
                    )],
                    &boundaries,
                ),
            }
        })
        .collect()
}

fn checks(results: &[PhaseResult]) -> Vec<Check> {
    let mut checks = Vec::new();
    let theorem: usize = results.iter().map(|r| r.over_theorem).sum();
    let mc_invocations: usize = results
        .iter()
        .filter(|r| r.protocol == GateProtocol::McIpc)
        .map(|r| r.invocations)
        .sum();
    checks.push(Check {
        claim: "Under MC-IPC no invocation of any client drains more than Theorem 1's \
                (1 + 2 m_k K) L_q = 18 ms while its reservation has budget"
            .into(),
        expected: "0 invocations over".into(),
        measured: format!("{theorem} of {mc_invocations}"),
        pass: theorem == 0,
    });
    let last = results.iter().map(|r| r.phase).max().unwrap_or(0);
    for protocol in PROTOCOLS {
        let bound = bound(results, protocol);
        let over: Vec<usize> = (1..=last)
            .filter(|&phase| {
                results
                    .iter()
                    .any(|r| r.protocol == protocol && r.phase == phase && r.over(bound) > 0)
            })
            .collect();
        let expected = expected_over(protocol);
        let list = |phases: &[usize]| {
            if phases.is_empty() {
                "none".to_string()
            } else {
                phases
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        checks.push(Check {
            claim: format!(
                "{}: T1's delay exceeds the predicted {} ms exactly in the phases the paper \
                 reports",
                protocol.label(),
                millis(bound)
            ),
            expected: format!("phases over: {}", list(expected)),
            measured: format!("phases over: {}", list(&over)),
            pass: over == expected,
        });
    }
    checks.push(phase_bounds_check(results));
    checks.push(phase_drains_check(results));
    // A job of T1 still pending a period after its release holds back the next release
    // (jobs of one task do not overlap): a phase with late jobs has fewer, all the others at
    // least 100.
    let short = results
        .iter()
        .filter(|r| r.jobs < 100 && r.late == 0)
        .count();
    checks.push(Check {
        claim: "Every phase runs at least 100 jobs of T1, unless T1's jobs run late (a job \
                still pending a period after its release holds back the next)"
            .into(),
        expected: "0 phases short".into(),
        measured: format!("{short} of {} short", results.len()),
        pass: short == 0,
    });
    checks
}

/// Every client's drain per invocation within its own bound in its phase, under each
/// protocol: the phases' bounds checked for every client, not T1 alone.
fn phase_drains_check(results: &[PhaseResult]) -> Check {
    let (checked, over) = (results.iter())
        .map(|r| r.drains_bounded)
        .fold((0, 0), |(checked, over), (c, o)| (checked + c, over + o));
    let runs_over: Vec<String> = (results.iter())
        .filter(|r| r.drains_bounded.1 > 0)
        .map(|r| format!("{} phase {}", r.protocol.label(), r.phase))
        .collect();
    Check {
        claim: "Every client alone in a budgeted reservation, the phases' new reservations \
                included, drains per invocation (answered while its budget lasted) at most its \
                bound under the run's protocol with its phase's clients and floods"
            .into(),
        expected: "0 invocations over their bound".into(),
        measured: format!(
            "{over} of {checked} invocations with a bound over{}",
            if runs_over.is_empty() {
                String::new()
            } else {
                format!(" ({})", runs_over.join(", "))
            }
        ),
        pass: over == 0 && checked > 0,
    }
}

/// T1's delay within each phase's own bound wherever the phase has one.
fn phase_bounds_check(results: &[PhaseResult]) -> Check {
    let bounded: Vec<(&PhaseResult, Duration)> = (results.iter())
        .filter_map(|r| r.phase_bound.map(|bound| (r, bound)))
        .collect();
    let over: Vec<String> = (bounded.iter())
        .filter(|(r, bound)| r.over(*bound) > 0)
        .map(|(r, _)| format!("{} phase {}", r.protocol.label(), r.phase))
        .collect();
    Check {
        claim: "With each phase's own clients and floods in section VI-B's formulas (added \
                tasks counted in n and h; one flooder that can precede T1 counted again after every \
                other operation, (2h + 2b + 2) L, and two leaving PRIO-IPC without bound), \
                T1's delay stays within every bound its phase has"
            .into(),
        expected: "0 runs over their phase's bound".into(),
        measured: format!(
            "{} of {} runs with a bound over{}",
            over.len(),
            bounded.len(),
            if over.is_empty() {
                String::new()
            } else {
                format!(": {}", over.join(", "))
            }
        ),
        pass: over.is_empty() && !bounded.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::Priority;
    use bulwark_spec::model::{Behaviour, Execution, ServerStep, Step};

    // ---- The paper's description, built by hand (section VI), to check the file against,
    // in the terms of the scenario the file lowers to.

    /// One task as the paper describes it: its cluster, its reservation, its first release
    /// and its cyclic job.
    #[derive(Clone, Debug, PartialEq)]
    struct Described {
        cluster: usize,
        reservation: Kind,
        offset: Duration,
        job: Vec<Step>,
    }

    /// A task's reservation.
    #[derive(Clone, Debug, PartialEq)]
    enum Kind {
        /// A time partition of this priority with one slot `[from, to)` in the cycle.
        Partition(Priority, Duration, Duration),
        /// A sporadic reservation `(e, p)`.
        Sporadic(Duration, Duration),
        BestEffort,
        /// The reservation of the task with this index.
        Shares(usize),
    }

    fn operation() -> Step {
        Step::Invoke {
            server: 0,
            operation: Some(Execution::between(us(1500), L_KEY)),
        }
    }

    fn compute(min: Duration, max: Duration) -> Step {
        Step::Run(Execution::between(min, max))
    }

    /// A correct data-acquisition job: compute, sign, assemble, sleep until the next period.
    fn acquisition(
        before: (Duration, Duration),
        after: (Duration, Duration),
        period: Duration,
    ) -> Vec<Step> {
        vec![
            compute(before.0, before.1),
            operation(),
            compute(after.0, after.1),
            Step::SleepUntilNextRelease(period),
        ]
    }

    /// A malfunctioning task: requests back to back, 10 us of system call between them.
    fn flood() -> Vec<Step> {
        vec![compute(us(10), us(10)), operation()]
    }

    fn high_criticality_job() -> Vec<Step> {
        acquisition((us(500), us(1500)), (us(200), us(500)), CYCLE)
    }

    /// At most 2 ms, like the high-criticality jobs: with Theorem 1's 18 ms for its one
    /// invocation, exactly the paper's 20 ms budget (`scenarios/mcipc/case-study.toml`).
    fn low_criticality_job(period: Duration) -> Vec<Step> {
        acquisition((ms(1), us(1500)), (us(200), us(500)), period)
    }

    /// The short jobs of the extra tasks of phases 3 and 8.
    fn short_job(period: Duration) -> Vec<Step> {
        acquisition((us(100), us(300)), (us(100), us(300)), period)
    }

    fn partition(priority: u8, from: u64, to: u64) -> Kind {
        Kind::Partition(Priority(priority), ms(from), ms(to))
    }

    /// The tasks of `phase` (1 to 8), in the file's order, then the phase's copies.
    fn hand_built(phase: usize) -> Vec<Described> {
        let task = |cluster, reservation, offset, job| Described {
            cluster,
            reservation,
            offset,
            job,
        };
        // T1..T4 in the partitions; T3's slot starts at 50 ms.
        let mut tasks = vec![
            task(0, partition(1, 0, 50), ms(0), high_criticality_job()),
            task(1, partition(2, 0, 50), ms(0), high_criticality_job()),
            task(1, partition(3, 50, 100), ms(50), high_criticality_job()),
            task(2, partition(4, 0, 50), ms(0), high_criticality_job()),
        ];
        // T5..T14 in sporadic reservations of 20 ms, offsets spread over their periods.
        for c in [2, 3] {
            for (k, p) in LOW_PERIODS.iter().enumerate() {
                let offset = ms((7 + 13 * (k as u64 + 5 * (c as u64 - 2))) % p);
                let reservation = Kind::Sporadic(ms(20), ms(*p));
                tasks.push(task(c, reservation, offset, low_criticality_job(ms(*p))));
            }
        }
        // Task indices: T1 = 0, T2 = 1 (R2), T3 = 2 (R3), T4 = 3 (R4), T5.. = 4.., T10 = 9.
        let flooding = |tasks: &mut Vec<Described>, index: usize| tasks[index].job = flood();
        match phase {
            2 => flooding(&mut tasks, 9),
            3 => {
                for c in 0..4 {
                    for k in 0..16 {
                        let reservation = Kind::Sporadic(ms(100), ms(3000));
                        let offset = ms(90).saturating_add(us(20 * k));
                        tasks.push(task(c, reservation, offset, short_job(ms(3000))));
                    }
                }
            }
            4 => flooding(&mut tasks, 3),
            5 => {
                flooding(&mut tasks, 1);
                flooding(&mut tasks, 3);
            }
            6 | 7 => {
                for k in 0..15 {
                    let offset = us(20 * (k + 1));
                    tasks.push(task(2, Kind::Shares(3), offset, high_criticality_job()));
                }
                if phase == 7 {
                    flooding(&mut tasks, 1);
                }
            }
            8 => {
                for c in 0..4 {
                    // The first copy on a cluster owns the cluster's best-effort reservation.
                    let owner = tasks.len();
                    for k in 0..20 {
                        let reservation = if k == 0 {
                            Kind::BestEffort
                        } else {
                            Kind::Shares(owner)
                        };
                        let offset = ms(90).saturating_add(us(20 * k));
                        tasks.push(task(c, reservation, offset, short_job(CYCLE)));
                    }
                }
            }
            _ => {}
        }
        tasks
    }

    /// The tasks of `scenario` as [`hand_built`] describes them.
    fn described(scenario: &Scenario) -> Vec<Described> {
        (scenario.tasks.iter().enumerate())
            .map(|(index, spec)| {
                let (cluster, kind) = scenario.cluster_of_task(index).expect("a member");
                let reservation = match kind {
                    MemberKind::Partition { slots, .. } => {
                        let [(from, to)] = slots[..] else {
                            panic!("{}: one slot, not {slots:?}", spec.name)
                        };
                        Kind::Partition(spec.priority.expect("a partition's"), from, to)
                    }
                    MemberKind::Sporadic { .. } => {
                        let r = spec.reservation.expect("a sporadic owner's");
                        Kind::Sporadic(r.budget, r.period)
                    }
                    MemberKind::BestEffort => Kind::BestEffort,
                    MemberKind::Shared { owner } => Kind::Shares(*owner),
                };
                let Behaviour::Script { offset, steps } = &spec.behaviour else {
                    panic!("{}: a script", spec.name)
                };
                let [Step::Loop { count: None, body }] = &steps[..] else {
                    panic!("{}: one job for ever, not {steps:?}", spec.name)
                };
                Described {
                    cluster,
                    reservation,
                    offset: *offset,
                    job: body.clone(),
                }
            })
            .collect()
    }

    fn study() -> McIpcSystem {
        case_study().unwrap()
    }

    fn lowered(study: &McIpcSystem, phase: usize) -> Scenario {
        study.scenario(Some(phase - 1), GateProtocol::McIpc, true, SEED, PHASE)
    }

    /// The file lowers, phase by phase, to exactly the system the paper describes (built by
    /// hand above): the same clusters of one core, reservations, tasks, jobs and offsets, and
    /// one key server whose operations take up to `L_key`.
    #[test]
    fn the_file_is_the_papers_case_study() {
        let study = study();
        assert_eq!(study.phases.len(), 8);
        for phase in 1..=8 {
            let scenario = lowered(&study, phase);
            assert_eq!(described(&scenario), hand_built(phase), "phase {phase}");
            assert!(scenario.clusters.iter().all(|c| c.cores.len() == 1));
            assert!(scenario.clusters.iter().all(|c| c.order
                == bulwark_core::reservation::clustered::SporadicOrder::EarliestDeadlineFirst));
            assert_eq!(scenario.servers.len(), 1);
            let server = &scenario.servers[0];
            assert_eq!(server.body, [ServerStep::Run(Execution::Fixed(L_KEY))]);
            assert!(server.bandwidth_inheritance && server.pruned_to_background);
        }
    }

    /// The fourteen reservations of section VI-A, and what each phase adds.
    #[test]
    fn the_phases_build_the_paper_systems() {
        let study = study();
        let members = |scenario: &Scenario| -> Vec<usize> {
            scenario.clusters.iter().map(|c| c.members.len()).collect()
        };
        let flood = |scenario: &Scenario, task: usize| described(scenario)[task].job == flood();
        let normal = lowered(&study, 1);
        assert_eq!(members(&normal), [1, 2, 6, 5]);
        assert!((0..14).all(|t| !flood(&normal, t)));
        assert!(flood(&lowered(&study, 2), 9));
        assert_eq!(members(&lowered(&study, 3)), [17, 18, 22, 21]);
        assert!(flood(&lowered(&study, 4), 3));
        let five = lowered(&study, 5);
        assert!(flood(&five, 1) && flood(&five, 3));
        let six = lowered(&study, 6);
        assert_eq!(six.tasks.len(), 29);
        assert_eq!(members(&six), [1, 2, 21, 5]);
        let seven = lowered(&study, 7);
        assert!(flood(&seven, 1) && !flood(&seven, 3));
        let eight = lowered(&study, 8);
        assert_eq!(members(&eight), [21, 22, 26, 25]);
        assert_eq!(eight.tasks.len(), 14 + 80);
    }

    /// Section VI-B's numbers: (1 + 2 * 1 * 4) * 2 = 18 ms, 14 * 2 = 28 ms, (2 + 1 + 1) * 2 =
    /// 8 ms.
    #[test]
    fn the_predicted_bounds_are_the_papers() {
        assert_eq!(paper_bound(GateProtocol::McIpc), ms(18));
        assert_eq!(paper_bound(GateProtocol::FifoIpc), ms(28));
        assert_eq!(paper_bound(GateProtocol::PrioIpc), ms(8));
        // The analysis of the file gives T1 the same.
        assert_eq!(bounds(&study()).unwrap().system, [ms(18), ms(28), ms(8)]);
    }

    /// A short normal phase: T1 runs one job per cycle and every delay is at least its own
    /// operation (1.5 ms) and within 18 ms.
    #[test]
    fn a_normal_second() {
        let study = study();
        let bounds = bounds(&study).unwrap();
        let r = run_phase(
            &study,
            &bounds,
            1,
            GateProtocol::McIpc,
            Duration::from_secs(1),
            SEED,
        )
        .unwrap();
        assert_eq!((r.name.as_str(), r.bound), ("normal operation", ms(18)));
        // The scenario machine's horizon is inclusive: the job released at 1 s counts, not
        // finished, with no delay so far (so no lower bound).
        assert_eq!((r.jobs, r.completed), (11, 10));
        assert_eq!(r.delays.len(), 10);
        assert!(r.delays.iter().all(|d| *d >= us(1500) && *d <= ms(18)));
        assert_eq!(r.unfinished, None);
    }

    /// Theorem 1's count on the scenario machine takes lone budgeted clients only: in phase
    /// 6, T1 (alone in R1) is counted over 18 ms and not at it, T4 (R4's owner, which the 15
    /// copies share) and a copy are not, nor is an invocation whose budget ran out.
    #[test]
    fn theorem_1_counts_lone_budgeted_clients_only() {
        let study = study();
        let mut run = run_scenario(&study, 6, GateProtocol::McIpc, ms(100), SEED, false).unwrap();
        assert_eq!(scenario_over_theorem(&run, Duration::ZERO), 0);
        let copy = run.scenario.tasks.len() - 1;
        let record =
            |task: usize, drained: Duration, exhausted: bool| bulwark_sim::InvocationRecord {
                task: bulwark_core::TaskId(task as u32),
                server: 0,
                invoked: Instant::ZERO,
                issued: Instant::ZERO,
                replied: Instant::ZERO.saturating_add(drained),
                reissues: 0,
                drained,
                drained_since_issue: drained,
                exhausted,
            };
        let over = ms(18).saturating_add(Duration::from_nanos(1));
        run.records.invocations = vec![
            record(vantage(&study), ms(18), false),
            record(vantage(&study), over, true),
            record(3, over, false),
            record(copy, over, false),
        ];
        assert_eq!(scenario_over_theorem(&run, Duration::ZERO), 0);
        run.records
            .invocations
            .push(record(vantage(&study), over, false));
        assert_eq!(scenario_over_theorem(&run, Duration::ZERO), 1);
    }

    fn result(protocol: GateProtocol, phase: usize, delay: Duration) -> PhaseResult {
        PhaseResult {
            phase,
            name: format!("phase {phase}"),
            bound: paper_bound(protocol),
            protocol,
            phase_bound: Some(paper_bound(protocol)),
            delays: vec![delay; 100],
            unfinished: None,
            jobs: 100,
            completed: 100,
            late: 0,
            over_theorem: 0,
            invocations: 100,
            drains_bounded: (100, 0),
            reclaimed: Reclaimed::default(),
            context_switches: 0,
        }
    }

    /// The checks pass on results shaped as the paper reports and fail otherwise.
    #[test]
    fn the_checks_follow_the_paper() {
        let shaped = checks_shaped();
        assert!(checks(&shaped).iter().all(|c| c.pass));
        let mut broken = shaped.clone();
        broken[0].delays[0] = ms(19);
        assert!(!checks(&broken)[1].pass, "MC-IPC over 18 ms in phase 1");
        let mut theorem = shaped.clone();
        theorem[2].over_theorem = 1;
        assert!(!checks(&theorem)[0].pass);
        let mut starved = shaped;
        starved[8 + 3].delays = vec![ms(5)]; // FIFO phase 4 ... fine
        starved[16 + 4].delays = vec![];
        starved[16 + 4].unfinished = None; // PRIO phase 5 no longer over
        assert!(!checks(&starved)[3].pass);
        // A phase of 62 jobs is short unless some job ran late (FIFO-IPC's phase 8 on the
        // scenario machine: T1's requests wait behind the best-effort wave past its period).
        let mut short = checks_shaped();
        short[8 + 7].jobs = 62;
        assert!(!checks(&short)[6].pass);
        short[8 + 7].late = 1;
        assert!(checks(&short)[6].pass);
        // Every client's drain within its phase's bound: one over fails, and so does a run
        // with no bounded invocation at all.
        let mut drained = checks_shaped();
        assert!(checks(&drained)[5].pass);
        drained[16 + 3].drains_bounded = (100, 1);
        assert!(!checks(&drained)[5].pass);
        drained.iter_mut().for_each(|r| r.drains_bounded = (0, 0));
        assert!(!checks(&drained)[5].pass);
        // The phases' own bounds: one delay above its phase's bound fails the check, and so
        // do runs with no bound at all.
        let within = checks_shaped();
        assert!(checks(&within)[4].pass);
        let mut over = within.clone();
        over[8 + 2].delays[3] = ms(201); // FIFO-IPC phase 3, its own bound 200 ms
        assert!(!checks(&over)[4].pass);
        let mut unbounded = within;
        unbounded.iter_mut().for_each(|r| r.phase_bound = None);
        assert!(!checks(&unbounded)[4].pass);
    }

    /// Results shaped as the paper reports: over the bound exactly in its phases.
    fn checks_shaped() -> Vec<PhaseResult> {
        PROTOCOLS
            .iter()
            .flat_map(|&p| {
                (1..=8).map(move |phase| {
                    let over = expected_over(p).contains(&phase);
                    let mut shaped = result(p, phase, if over { ms(100) } else { ms(5) });
                    // Over the paper's bound, within the phase's own (none under the floods
                    // of phases 5 and 7).
                    if over {
                        shaped.phase_bound = (phase != 5 && phase != 7).then_some(ms(200));
                    }
                    shaped
                })
            })
            .collect()
    }

    #[test]
    fn every_check_passes_on_the_real_runs() {
        let results = run_all(&study(), PHASE, SEED).unwrap();
        let failing: Vec<String> = checks(&results)
            .into_iter()
            .filter(|c| !c.pass)
            .map(|c| format!("{}: {}", c.claim, c.measured))
            .collect();
        assert!(failing.is_empty(), "{failing:?}");
    }
}
