//! A composed MC-IPC system (`scenarios/mcipc/cbs-rogue.toml`): the MC-IPC case study with
//! its low-criticality reservations as constant-bandwidth servers and its high ones as
//! table-driven partitions, plus a rogue client in a reclamation group that a watchdog
//! terminates mid-run. Three papers' mechanisms in one system on the scenario machine.
//!
//! What it shows, each as a check:
//! - T1 (in the partition R1 on C1) stays within Theorem 1's `(1 + 2 m K) L_key = 18 ms`, and
//!   no lone budgeted client exceeds its own Theorem 1 bound: CBS servers keep A1 (priority
//!   changes only at exhaustion), so the MC-IPC analysis carries over unchanged;
//! - the group's quota limits the rogue's allocations, and terminating the group masks C1 for
//!   at most the quota (the reclamation paper's bound): R1's slot opens on time and every
//!   job of T1 completes within its 50 ms slot;
//! - a soft CBS server uses idle time instead of waiting for its period: the spinning rogue's
//!   R15 (20 ms per 100 ms) runs far more than 20% of C1, yet the watchdog's R16, with an
//!   earlier deadline, runs at its release;
//! - the same file without the group: the kernel frees a million semaphores one by one,
//!   `3 * 10^6 + 1` units of 13 ns, and C1 stays masked for 39 ms, 29 ms into R1's slot:
//!   T1's job of 5.0 s is late by as much;
//! - the reclamation analysis ([`bulwark_analysis::reclamation`]) predicts both: the group
//!   bounds the mask by its quota, and without it nothing bounds the mask (each of the
//!   rogue's jobs adds a million semaphores), its first job's 39,000,013 ns being what the
//!   baseline masks.

use bulwark_analysis::mc_ipc::GateProtocol;
use bulwark_analysis::reclamation::{terminations, Termination};
use bulwark_core::{Duration, Instant};
use bulwark_spec::mc_ipc_toml::McIpcSystem;

use super::mcipc_case_study::{
    bounds, paper_bound, run_scenario, summarise_scenario, vantage, PhaseResult, ScenarioRun,
};
use super::{Experiment, LabError};
use crate::report::{headings, Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "mcipc-cbs-rogue",
    title: "MC-IPC composed: low-criticality reservations as CBS servers, high ones as \
            partitions, and a rogue client in a reclamation group terminated mid-run",
    run,
};

/// Where the file is, for messages.
pub const FILE: &str = "scenarios/mcipc/cbs-rogue.toml";

const TEXT: &str = include_str!("../../../../scenarios/mcipc/cbs-rogue.toml");

/// How long each run lasts: 100 cycles.
pub const LENGTH: Duration = Duration::from_secs(10);

/// The seed of every run.
pub const SEED: u64 = 0x5EC0;

/// When the watchdog terminates the rogue, and when R1's slot opens next.
const TERMINATION: Instant = Instant::from_nanos(4_990_000_000);
const SLOT_OPENS: Instant = Instant::from_nanos(5_000_000_000);

/// R1's slot length: a job of T1 that completes within it was never pushed out of it.
const SLOT: Duration = Duration::from_millis(50);

/// The built-in system.
pub fn system() -> Result<McIpcSystem, LabError> {
    Ok(bulwark_spec::parse_mc_ipc(TEXT, FILE)?)
}

/// The file's task called `name`.
fn task(study: &McIpcSystem, name: &str) -> Result<usize, LabError> {
    study
        .tasks
        .iter()
        .position(|t| t.name == name)
        .ok_or_else(|| LabError::McIpc(format!("{FILE}: no task {name}")))
}

/// The rogue: the task the watchdog terminates.
fn rogue(study: &McIpcSystem) -> Result<usize, LabError> {
    task(study, "T15")
}

/// One run's figures.
pub struct RunResult {
    /// T1's delays and the Theorem 1 count, as for the case study.
    pub phase: PhaseResult,
    /// The run on the scenario machine: its scenario, outcome and records.
    pub run: ScenarioRun,
    /// T1, a scenario task index (the file's).
    pub t1: usize,
    /// The rogue.
    pub rogue: usize,
    /// The watchdog, whose job's first step terminates the rogue.
    pub watchdog: usize,
    /// The rogue's processor time (it runs no more once terminated).
    pub rogue_time: Duration,
}

impl RunResult {
    /// The longest masked span: the longest stretch of reclamation kernel time on any core
    /// (the phase result's, [`summarise_scenario`]'s reading of the cores).
    pub fn longest_mask(&self) -> Duration {
        self.phase.reclaimed.longest_mask
    }

    /// The reclamation kernel entries of all cores: one per termination (or step of one).
    pub fn terminations(&self) -> u64 {
        self.phase.reclaimed.terminations
    }

    /// The reclamation kernel time of all cores.
    pub fn masked(&self) -> Duration {
        self.phase.reclaimed.masked
    }

    /// The masked time in units of reclamation work (the file's `reclaim-per-unit` at its
    /// clock): the scenario machine reports the time, not the units.
    pub fn units(&self) -> u64 {
        let cost = &self.run.scenario.cost;
        let unit = cost.time_of(cost.reclaim_per_unit).as_nanos().max(1);
        self.masked().as_nanos() / unit
    }

    /// The rogue's objects created and refused by its group's quota.
    pub fn allocations(&self) -> (u64, u64) {
        self.run
            .outcome
            .tasks
            .get(self.rogue)
            .map_or((0, 0), |t| (t.objects_allocated, t.allocations_refused))
    }

    /// When the watchdog's first job started: its first step is the termination. The
    /// scenario machine records no termination instants; this is when the step ran.
    pub fn termination(&self) -> Option<Instant> {
        self.run
            .records
            .jobs
            .iter()
            .find(|j| j.task.index() == self.watchdog && j.job == 0)
            .and_then(|j| j.first_start)
    }

    /// T1's longest response (completion minus planned release) over its completed jobs.
    pub fn worst_response(&self) -> Duration {
        self.t1_jobs()
            .filter_map(|j| j.completion.map(|c| c.saturating_duration_since(j.release)))
            .max()
            .unwrap_or(Duration::ZERO)
    }

    /// T1's job released when R1's slot opens after the termination: `None` if there is no
    /// such job, `Some(None)` if it did not complete, else its response.
    pub fn response_after_termination(&self) -> Option<Option<Duration>> {
        self.t1_jobs()
            .find(|j| j.release == SLOT_OPENS)
            .map(|j| j.completion.map(|c| c.saturating_duration_since(j.release)))
    }

    fn t1_jobs(&self) -> impl Iterator<Item = &bulwark_sim::JobRecord> {
        self.run
            .records
            .jobs
            .iter()
            .filter(|j| j.task.index() == self.t1)
    }
}

/// Runs `study` under MC-IPC for [`LENGTH`] on the scenario machine.
pub fn run_study(study: &McIpcSystem, seed: u64) -> Result<RunResult, LabError> {
    let rogue = rogue(study)?;
    let watchdog = task(study, "T16")?;
    let run = run_scenario(study, 0, GateProtocol::McIpc, LENGTH, seed, false)
        .map_err(|e| LabError::McIpc(format!("{FILE}: {e}")))?;
    let phase = summarise_scenario(study, 0, GateProtocol::McIpc, &run);
    // Terminated at TERMINATION, the rogue runs no more after it.
    let rogue_time = run
        .outcome
        .tasks
        .get(rogue)
        .map_or(Duration::ZERO, |t| Duration::from_nanos(t.executed_ns));
    Ok(RunResult {
        phase,
        t1: vantage(study),
        rogue,
        watchdog,
        run,
        rogue_time,
    })
}

/// The same system with the rogue outside any group (the baseline).
pub fn without_group(study: &McIpcSystem) -> Result<McIpcSystem, LabError> {
    let mut baseline = study.clone();
    let rogue = rogue(&baseline)?;
    for group in &mut baseline.groups {
        group.members.retain(|&member| member != rogue);
    }
    Ok(baseline)
}

/// What the reclamation analysis says of the watchdog's termination, with the rogue in its
/// group and without it.
#[derive(Clone, Debug)]
pub struct AnalysedMasks {
    pub grouped: Termination,
    pub baseline: Termination,
}

impl AnalysedMasks {
    /// The analysis of `study` and of its baseline ([`without_group`]).
    pub fn of(study: &McIpcSystem) -> Result<AnalysedMasks, LabError> {
        let only = |system: &McIpcSystem| {
            let mut found = terminations(system);
            match found.len() {
                1 => Ok(found.remove(0)),
                n => Err(LabError::McIpc(format!(
                    "{FILE}: {n} terminations; the experiment reads one"
                ))),
            }
        };
        Ok(AnalysedMasks {
            grouped: only(study)?,
            baseline: only(&without_group(study)?)?,
        })
    }
}

fn run() -> Result<ExperimentReport, LabError> {
    let study = system()?;
    let bound = bounds(&study)?.of(GateProtocol::McIpc);
    let analysed = AnalysedMasks::of(&study)?;
    let grouped = run_study(&study, SEED)?;
    let baseline = run_study(&without_group(&study)?, SEED)?;
    let quota = study.groups.first().map_or(Duration::ZERO, |g| g.quota);
    Ok(report(bound, quota, &analysed, &grouped, &baseline))
}

fn millis(d: Duration) -> String {
    format!("{:.3} ms", d.as_nanos() as f64 / 1e6)
}

fn response_text(response: Option<Option<Duration>>) -> String {
    match response {
        None => "no such job".into(),
        Some(None) => "unfinished".into(),
        Some(Some(r)) => millis(r),
    }
}

fn percent(part: Duration, whole: Duration) -> f64 {
    100.0 * part.as_nanos() as f64 / whole.as_nanos().max(1) as f64
}

/// The checks of the two runs.
pub fn checks(
    bound: Duration,
    quota: Duration,
    analysed: &AnalysedMasks,
    grouped: &RunResult,
    baseline: &RunResult,
) -> Vec<Check> {
    let t1 = &grouped.phase;
    let (created, refused) = grouped.allocations();
    // One termination: one reclamation entry, all of the cores' reclamation time.
    let masked = grouped.masked();
    let one_span = grouped.terminations() == 1 && masked == grouped.longest_mask();
    let units = grouped.units();
    let termination = grouped.termination();
    let rogue_share = percent(
        grouped.rogue_time,
        TERMINATION.saturating_duration_since(Instant::ZERO),
    );
    let late = baseline.response_after_termination();
    let baseline_mask = baseline.longest_mask();
    vec![
        Check {
            claim: "Theorem 1 holds with CBS servers and the rogue: T1 drains at most \
                    (1 + 2 m K) L_key, and no lone budgeted client exceeds its bound"
                .into(),
            expected: format!(
                "T1 <= {} (the paper's {}); 0 invocations over",
                millis(bound),
                millis(paper_bound(GateProtocol::McIpc))
            ),
            measured: format!(
                "T1 worst {} over {} invocations; {} over",
                millis(t1.max_delay()),
                t1.delays.len(),
                t1.over_theorem
            ),
            pass: bound == paper_bound(GateProtocol::McIpc)
                && t1.max_delay() <= bound
                && t1.over_theorem == 0
                && t1.delays.len() + 1 >= t1.jobs,
        },
        Check {
            claim: "The group's quota limits the rogue's allocations".into(),
            expected: "some of the 1,000,000 semaphores refused".into(),
            measured: format!("{created} created, {refused} refused"),
            pass: created > 0 && refused > 0 && created + refused == 1_000_000,
        },
        Check {
            claim: "Terminating the group masks C1 for at most the group's quota".into(),
            expected: format!("one termination, masked <= {}", millis(quota)),
            measured: if masked.is_zero() {
                "no termination".into()
            } else {
                format!(
                    "{units} unit(s), masked {masked} in {}, from {}",
                    if one_span {
                        "one span"
                    } else {
                        "more than one span"
                    },
                    termination.map_or_else(|| "-".into(), |t| t.to_string())
                )
            },
            pass: one_span && grouped.longest_mask() <= quota && !quota.is_zero(),
        },
        Check {
            claim: "R1's slot opens on time: every job of T1 completes within its 50 ms slot"
                .into(),
            expected: format!("worst response <= {}", millis(SLOT)),
            measured: format!(
                "worst {} over {} jobs ({} completed)",
                millis(grouped.worst_response()),
                t1.jobs,
                t1.completed
            ),
            pass: grouped.worst_response() <= SLOT && t1.completed + 1 >= t1.jobs,
        },
        Check {
            claim: "A soft CBS uses idle time: the spinning rogue's R15 (20 ms per 100 ms) \
                    runs far more than 20% of C1, yet the watchdog runs at its release"
                .into(),
            expected: format!("rogue > 40% of C1 before {TERMINATION}; termination at it"),
            measured: format!(
                "rogue {rogue_share:.1}%; termination at {}",
                termination.unwrap_or(Instant::NEVER)
            ),
            pass: rogue_share > 40.0 && one_span && termination == Some(TERMINATION),
        },
        Check {
            claim: "Without the group, the kernel frees a million semaphores one by one: C1 \
                    stays masked 39 ms (3,000,001 units of 13 ns), 29 ms into R1's slot, \
                    and T1's job of 5.0 s is late by as much"
                .into(),
            expected: "masked >= 39 ms; that job's response >= 29 ms".into(),
            measured: format!(
                "masked {}; response {}",
                millis(baseline_mask),
                response_text(late)
            ),
            pass: baseline_mask >= Duration::from_millis(39)
                && late.is_some_and(|r| r.is_none_or(|r| r >= Duration::from_millis(29))),
        },
        Check {
            claim: "The reclamation analysis bounds the group's mask by its quota, and finds \
                    none without the group, whose first job alone masks what the baseline run \
                    masks"
                .into(),
            expected: format!(
                "grouped: masked <= {}; baseline: no bound, masked <= {} (its first job)",
                mask_text(analysed.grouped.mask),
                analysed.baseline.first_mask
            ),
            measured: format!(
                "grouped: masked {}; baseline: bound {}, masked {}",
                grouped.masked(),
                mask_text(analysed.baseline.mask),
                baseline.masked()
            ),
            pass: analysed.grouped.mask == Some(quota)
                && grouped.masked() <= quota
                && analysed.baseline.mask.is_none()
                && baseline.masked() <= analysed.baseline.first_mask,
        },
    ]
}

/// An analysed mask: its length to the nanosecond, or "none" when nothing bounds it.
fn mask_text(mask: Option<Duration>) -> String {
    mask.map_or_else(|| "none".into(), |mask| mask.to_string())
}

/// The report of the two runs.
pub fn report(
    bound: Duration,
    quota: Duration,
    analysed: &AnalysedMasks,
    grouped: &RunResult,
    baseline: &RunResult,
) -> ExperimentReport {
    let row = |name: &str, r: &RunResult| {
        let (created, refused) = r.allocations();
        vec![
            name.to_owned(),
            created.to_string(),
            refused.to_string(),
            r.longest_mask().to_string(),
            millis(r.phase.max_delay()),
            millis(r.worst_response()),
            response_text(r.response_after_termination()),
            r.phase.over_theorem.to_string(),
        ]
    };
    ExperimentReport {
        source: "MC-IPC paper (Brandenburg), section VI, with the CBS of Abeni and Buttazzo \
                 and the reclamation groups of the reclamation paper"
            .into(),
        summary: format!(
            "The case study's system from `{FILE}`: four one-core clusters, the key server, \
             the high-criticality partitions R1..R4 and the ten low-criticality reservations \
             as soft constant-bandwidth servers; on C1, beside R1, a rogue client (R15) that \
             allocates a million semaphores in a reclamation group with a {} quota, invokes \
             the key server and spins, and a watchdog (R16) that terminates it at {}. Each run \
             lasts {} under MC-IPC, seed {SEED:#x}; the baseline is the same file with the \
             rogue outside any group.",
            millis(quota),
            TERMINATION,
            millis(LENGTH),
        ),
        checks: checks(bound, quota, analysed, grouped, baseline),
        tables: vec![Table {
            caption: format!(
                "The two runs: the rogue's objects, C1's longest masked span, T1's worst \
                 delay (Theorem 1: {}), worst response, the response of its job at {}, and \
                 invocations over Theorem 1",
                millis(bound),
                SLOT_OPENS
            ),
            header: headings([
                "rogue",
                "created",
                "refused",
                "masked",
                "T1 worst delay",
                "T1 worst response",
                "T1 at 5.0 s",
                "over Theorem 1",
            ]),
            rows: vec![
                row("in its group", grouped),
                row("no group (baseline)", baseline),
            ],
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::mc_ipc_toml::{Replenishment, ReservationKind};

    #[test]
    fn the_file_makes_every_low_criticality_reservation_a_cbs_server() {
        let study = system().unwrap();
        let servers = study.replenished_by(Replenishment::ConstantBandwidth);
        let expected: Vec<String> = (5..=16).map(|i| format!("R{i}")).collect();
        assert_eq!(servers, expected);
        // The four partitions stay table-driven.
        assert!(study.reservations[..4]
            .iter()
            .all(|r| matches!(r.kind, ReservationKind::TableDriven { .. })));
        let rogue = rogue(&study).unwrap();
        assert_eq!(study.groups_of_tasks()[rogue], Some(0));
        assert_eq!(study.cost.reclaim_per_unit, 13);
    }

    /// The numbers the file's comments derive by hand: 19,230 semaphores fit a 1 ms quota at
    /// 13 ns per unit (as in faas-reclaim), the group's termination is one arena release, and
    /// the baseline frees 3,000,001 units: 39,000,013 ns masked from 4.99 s. Every check
    /// passes.
    #[test]
    fn the_runs_agree_with_the_hand_derived_figures() {
        let study = system().unwrap();
        let grouped = run_study(&study, SEED).unwrap();
        let baseline = run_study(&without_group(&study).unwrap(), SEED).unwrap();
        assert_eq!(grouped.allocations(), (19_230, 980_770));
        assert_eq!(grouped.units(), 1);
        assert_eq!(grouped.termination(), Some(TERMINATION));
        assert_eq!(grouped.longest_mask(), Duration::from_nanos(13));
        assert_eq!(grouped.masked(), Duration::from_nanos(13));
        assert_eq!(baseline.units(), 3_000_001);
        assert_eq!(baseline.termination(), Some(TERMINATION));
        // One span on C1 (core 0), from the termination.
        let core = baseline.run.outcome.cores[0];
        assert_eq!(
            (core.reclaim_ns, core.max_reclaim_ns),
            (39_000_013, 39_000_013)
        );
        assert_eq!(baseline.masked(), Duration::from_nanos(39_000_013));
        // The analysis: the quota with the group; without it, no bound, and its first job's
        // figure is exactly the run's, since the rogue's one job allocated all its objects.
        let analysed = AnalysedMasks::of(&study).unwrap();
        assert_eq!(analysed.grouped.mask, Some(Duration::from_millis(1)));
        assert_eq!(analysed.baseline.mask, None);
        assert_eq!(analysed.baseline.first_mask, baseline.masked());
        let bound = bounds(&study).unwrap().of(GateProtocol::McIpc);
        let quota = study.groups[0].quota;
        for check in checks(bound, quota, &analysed, &grouped, &baseline) {
            assert!(check.pass, "{check:?}");
        }
    }
}
