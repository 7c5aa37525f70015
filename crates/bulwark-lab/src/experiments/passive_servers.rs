//! Passive servers composed with per-core policies (`scenarios/passive-servers.toml` and
//! `scenarios/shared-server.toml`): an `invoke` step donates the caller's scheduling context
//! to the server for one operation, as seL4 MCS does, behind the MC-IPC paper's gate queues
//! (FIFO-IPC, PRIO-IPC, section VI). Without bandwidth inheritance a waiting caller blocks;
//! with it, its context runs the request in service. The files' comments work out every
//! schedule by hand; the checks compare the runs with them:
//!
//! - core 0, SPR: the rogue's context runs out of budget 1 ms into a 2 ms operation, so the
//!   server waits for its replenishment at 20 ms; the victim, blocked at the gate since 0.5 ms,
//!   waits `(20 - 0.5) + (2 - 1) = 20.5 ms` and misses its deadline. The rogue's context still
//!   gets exactly its budget per period: the donation does not lift the reservation;
//! - core 1, fixed priority: the server runs at `low`'s priority, so `mid` (released at 1 ms,
//!   4 ms) runs ahead of it while `high` waits: `high` waits `2 - 0.5 + 4 = 5.5 ms`, 4 of them
//!   for a task it outranks. With `log1` at priority 9, its callers' ceiling (the component
//!   paper's IPCP), `low`'s operation runs at 9 and `high`'s blocking is the 1.5 ms rest of
//!   one operation: it completes 4.5 ms after its release instead of 8.5;
//! - core 2, core 0 with bandwidth inheritance (the MC-IPC paper, section III): the waiting
//!   victim's context runs the rogue's request, so each of its waits is within one operation
//!   (1.5, 1.5 and 1 ms by hand), no deadline is missed, and its budget pays those 4 ms; the
//!   rogue's context still gets exactly its budget per period;
//! - `scenarios/shared-server.toml`: one server without inheritance shared by an SPR core and a
//!   CBS core; the rogue's exhaustion on core 0 becomes the client's 20.5 ms wait on core 1,
//!   whom the reply wakes with an interrupt at 21 ms.

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::{Options, Outcome, SliceKind, TaskMetrics};

use super::outcomes::{built_in_scenario, task};
use super::{Experiment, LabError};
use crate::gantt::gantt_svg;
use crate::report::{Check, ExperimentReport, Figure};

pub const EXPERIMENT: Experiment = Experiment {
    name: "passive-servers",
    title: "Passive servers on SPR and fixed-priority cores: donation, with and without \
            bandwidth inheritance",
    run,
};

const fn ms_tenths(tenths: u64) -> Duration {
    Duration::from_micros(tenths * 100)
}

/// Core 0's numbers, from the file (rogue's budget and period, the operation).
const ROGUE_BUDGET: Duration = Duration::from_millis(1);
const ROGUE_PERIOD: Duration = Duration::from_millis(20);
/// The victim's wait by hand: until the rogue's replenishment, then the operation's rest.
const VICTIM_WAIT: Duration = ms_tenths(205);
/// The victim's first job: released at 0.5 ms, complete at 24 ms.
const VICTIM_RESPONSE: Duration = ms_tenths(235);
/// Core 1's numbers by hand: high's wait, mid's part of it, and high's first response.
const HIGH_WAIT: Duration = ms_tenths(55);
const MID_EXECUTION: Duration = Duration::from_millis(4);
const HIGH_RESPONSE: Duration = ms_tenths(85);
/// Core 2's numbers by hand: the operation `L`, victim2's three waits and worst response.
const OPERATION: Duration = Duration::from_millis(2);
const VICTIM2_WAITS: [Duration; 3] = [ms_tenths(15), ms_tenths(15), ms_tenths(10)];
const VICTIM2_RESPONSE: Duration = ms_tenths(45);

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario("passive-servers")?;
    let options = super::recording();
    let outcome = bulwark_sim::run(&scenario, &options)?;
    let task = |name: &str| {
        outcome
            .tasks
            .iter()
            .position(|t| t.name == name)
            .expect("the file names its tasks")
    };
    let (rogue, victim, mid, high) = (task("rogue"), task("victim"), task("mid"), task("high"));
    let (rogue2, victim2) = (task("rogue2"), task("victim2"));
    let metrics = |index: usize| &outcome.tasks[index];
    let periods = scenario.duration.as_nanos() / ROGUE_PERIOD.as_nanos();
    let per_period = |task: usize| -> Vec<u64> {
        (0..periods)
            .map(|k| {
                let start = k * ROGUE_PERIOD.as_nanos();
                let end = start + ROGUE_PERIOD.as_nanos();
                time_in(&outcome, task, SliceKind::Server, start, end)
            })
            .collect()
    };
    let rogue_server = per_period(rogue);
    let rogue2_server = per_period(rogue2);
    let v2 = metrics(victim2);
    let v2_waits: Duration = VICTIM2_WAITS
        .iter()
        .fold(Duration::ZERO, |sum, w| sum.saturating_add(*w));
    // victim2's context ran its three jobs' operations and, waiting, the rogue's rests (its
    // fourth call, at the horizon, has not run).
    let v2_server = OPERATION.saturating_mul(3).saturating_add(v2_waits);
    // `high` waits from 0.5 ms for HIGH_WAIT.
    let wait_start = ms_tenths(5).as_nanos();
    let mid_in_wait = time_in(
        &outcome,
        mid,
        SliceKind::Task,
        wait_start,
        wait_start + HIGH_WAIT.as_nanos(),
    );
    let mut checks = vec![
        waited(
            "core 0 (SPR, FIFO-IPC): the victim waits for the rogue's replenishment, then the \
             rest of its operation: (20 - 0.5) + (2 - 1) ms",
            metrics(victim),
            VICTIM_WAIT,
        ),
        Check {
            claim: "core 0: the victim's first job, released at 0.5 ms, completes at 24 ms and \
                    misses its 10 ms deadline"
                .into(),
            expected: format!("max response {VICTIM_RESPONSE}, first miss at 10.5 ms"),
            measured: format!(
                "max response {}, first miss at {}",
                Duration::from_nanos(metrics(victim).response.max_ns),
                metrics(victim)
                    .first_miss
                    .map_or("none".into(), |at| at.to_string())
            ),
            pass: metrics(victim).response.max_ns == VICTIM_RESPONSE.as_nanos()
                && metrics(victim).first_miss == Some(Instant::ZERO.saturating_add(ms_tenths(105))),
        },
        Check {
            claim: "core 0: the donated context keeps its reservation: the server runs for the \
                    rogue exactly its budget in each period"
                .into(),
            expected: format!("{ROGUE_BUDGET} in each of the {periods} periods"),
            measured: format!("{:?} ms", millis(&rogue_server)),
            pass: rogue_server.len() == periods as usize
                && rogue_server.iter().all(|&ns| ns == ROGUE_BUDGET.as_nanos()),
        },
        waited(
            "core 1 (fixed priority, PRIO-IPC): high waits for low's operation, which runs at \
             low's priority: 2 - 0.5 + 4 ms",
            metrics(high),
            HIGH_WAIT,
        ),
        Check {
            claim: "core 1: mid, below high, runs its whole job while high waits (priority \
                    inversion)"
                .into(),
            expected: format!("{MID_EXECUTION} of mid in high's wait [0.5, 6) ms"),
            measured: Duration::from_nanos(mid_in_wait).to_string(),
            pass: mid_in_wait == MID_EXECUTION.as_nanos(),
        },
        Check {
            claim: "core 1: high's first job completes at 9 ms (its request runs 6..8 ms)".into(),
            expected: format!("max response {HIGH_RESPONSE}, no miss"),
            measured: format!(
                "max response {}, {} misses",
                Duration::from_nanos(metrics(high).response.max_ns),
                metrics(high).misses
            ),
            pass: metrics(high).response.max_ns == HIGH_RESPONSE.as_nanos()
                && metrics(high).misses == 0,
        },
        Check {
            claim: "core 2 (SPR, FIFO-IPC with bandwidth inheritance): victim2's context runs the \
                    rogue's request while it waits, so each wait is within one operation L"
                .into(),
            expected: format!(
                "3 waits, at most {OPERATION}: {} at most, {} in all",
                VICTIM2_WAITS[0], v2_waits
            ),
            measured: format!(
                "{} waits, the longest {}, {} in all",
                v2.gate_wait.count,
                Duration::from_nanos(v2.gate_wait.max_ns),
                Duration::from_nanos(u64::try_from(v2.gate_wait.sum_ns).unwrap_or(u64::MAX))
            ),
            pass: v2.gate_wait.count == 3
                && v2.gate_wait.max_ns == VICTIM2_WAITS[0].as_nanos()
                && v2.gate_wait.sum_ns == u128::from(v2_waits.as_nanos())
                && v2.gate_wait.max_ns <= OPERATION.as_nanos(),
        },
        Check {
            claim: "core 2: the waits are paid from victim2's own budget, which covers them: \
                    every deadline met"
                .into(),
            expected: format!(
                "{v2_server} of server time on victim2's context (3 x {OPERATION} of its own, \
                 {v2_waits} of the rogue's), max response {VICTIM2_RESPONSE}, no miss"
            ),
            measured: format!(
                "{} of server time, max response {}, {} misses",
                Duration::from_nanos(v2.server_ns),
                Duration::from_nanos(v2.response.max_ns),
                v2.misses
            ),
            pass: v2.server_ns == v2_server.as_nanos()
                && v2.response.max_ns == VICTIM2_RESPONSE.as_nanos()
                && v2.misses == 0,
        },
        Check {
            claim: "core 2: the rogue's context still runs the server exactly its budget per \
                    period"
                .into(),
            expected: format!("{ROGUE_BUDGET} in each of the {periods} periods"),
            measured: format!("{:?} ms", millis(&rogue2_server)),
            pass: rogue2_server.len() == periods as usize
                && rogue2_server
                    .iter()
                    .all(|&ns| ns == ROGUE_BUDGET.as_nanos()),
        },
    ];
    checks.push(ceiling(&scenario)?);
    let (shared, shared_checks) = shared_server(&options)?;
    checks.extend(shared_checks);
    let span = Instant::ZERO.saturating_add(Duration::from_millis(30));
    let figures = gantt_svg(&outcome, Instant::ZERO, span)
        .map(|svg| Figure {
            file: "passive-servers-gantt.svg".into(),
            caption: "The first 30 ms: servers' operations (purple) on the contexts that ran \
                      them; core 2's victim2 runs rogue2's request while it waits"
                .into(),
            svg,
        })
        .into_iter()
        .collect();
    Ok(ExperimentReport {
        source: "seL4 MCS passive servers; MC-IPC paper, sections III (bandwidth inheritance) \
                 and VI (FIFO-IPC, PRIO-IPC); SPR paper (sporadic rule)"
            .into(),
        summary: "Two system files, `scenarios/passive-servers.toml` (three cores) and \
                  `scenarios/shared-server.toml` (two cores), whose tasks call servers with \
                  `invoke` steps. A call donates the caller's scheduling context to the server \
                  for the operation, so the operation runs on the caller's budget (at its \
                  priority, or at the server's ceiling), and the gate queues the callers that \
                  find the server busy. Without bandwidth inheritance a caller out of budget \
                  holds the server until its replenishment, on its own core or, through a \
                  shared server, on another; and a middle-priority task delays a server working \
                  for a low caller while a high caller waits, unless the server has a ceiling. \
                  With it (core 2), the waiting caller's own context finishes the request in \
                  service: while its budget lasts, it waits only for the operations ahead of \
                  it, and pays for them."
            .into(),
        checks,
        tables: vec![
            super::textbook::summary_table(&outcome),
            super::textbook::summary_table(&shared),
        ],
        figures,
        ..EXPERIMENT.blank_report()
    })
}

/// The file again with `log1` at priority 9, the IPCP ceiling of its callers: `low`'s
/// operation runs at 9, so `mid` no longer runs inside `high`'s blocking, which is the 1.5 ms
/// rest of one operation. By hand: `high` calls the idle server at 2 ms, runs 2..4 ms and its
/// own 1 ms, and completes at 5 ms, 4.5 ms after its release.
fn ceiling(scenario: &bulwark_spec::Scenario) -> Result<Check, LabError> {
    let mut ceiling = scenario.clone();
    for server in &mut ceiling.servers {
        if server.name == "log1" {
            server.priority = Some(bulwark_core::Priority(9));
        }
    }
    let outcome = bulwark_sim::run(&ceiling, &Options::default())?;
    let high = task(&outcome, "high");
    let expected = ms_tenths(45);
    Ok(Check {
        claim: "core 1 with log1 at priority 9 (its callers' ceiling, the component paper's \
                IPCP): high is blocked only by the rest of low's operation, 1.5 ms"
            .into(),
        expected: format!("max response {expected} (against {HIGH_RESPONSE}), no gate wait"),
        measured: format!(
            "max response {}, {} gate waits",
            Duration::from_nanos(high.response.max_ns),
            high.gate_wait.count
        ),
        pass: high.response.max_ns == expected.as_nanos() && high.gate_wait.count == 0,
    })
}

/// `scenarios/shared-server.toml`, run, and its checks: the server shared by an SPR core and
/// a CBS core carries the rogue's exhaustion on core 0 to the client on core 1.
fn shared_server(options: &Options) -> Result<(Outcome, Vec<Check>), LabError> {
    let scenario = built_in_scenario("shared-server")?;
    let outcome = bulwark_sim::run(&scenario, options)?;
    let client = outcome
        .tasks
        .iter()
        .position(|t| t.name == "client")
        .expect("the file has a client");
    let metrics = &outcome.tasks[client];
    // The client's request runs on core 1 from the reply on core 0 at 21 ms, for 2 ms.
    let on_core_1: Vec<(u64, u64)> = outcome
        .trace
        .iter()
        .flat_map(|trace| &trace.slices)
        .filter(|s| s.kind == SliceKind::Server && s.core == 1)
        .map(|s| (s.start.as_nanos(), s.end.as_nanos()))
        .collect();
    let expected_run = (ms_tenths(210).as_nanos(), ms_tenths(230).as_nanos());
    let checks = vec![
        waited(
            "shared-server.toml: the client on the CBS core waits for the rogue's \
             replenishment on the SPR core, then the rest of its operation: (20 - 0.5) + \
             (2 - 1) ms",
            metrics,
            VICTIM_WAIT,
        ),
        Check {
            claim: "shared-server.toml: the reply on core 0 wakes the client on core 1 at once: \
                    its request runs 21..23 ms there, and its first job misses"
                .into(),
            expected: format!(
                "server time on core 1 in [21, 23) ms only; max response {VICTIM_RESPONSE}, \
                 first miss at 10.5 ms"
            ),
            measured: format!(
                "{:?} ms; max response {}, first miss at {}",
                on_core_1
                    .iter()
                    .map(|&(a, b)| (a as f64 / 1e6, b as f64 / 1e6))
                    .collect::<Vec<_>>(),
                Duration::from_nanos(metrics.response.max_ns),
                metrics
                    .first_miss
                    .map_or("none".into(), |at| at.to_string())
            ),
            pass: on_core_1 == [expected_run]
                && metrics.response.max_ns == VICTIM_RESPONSE.as_nanos()
                && metrics.first_miss == Some(Instant::ZERO.saturating_add(ms_tenths(105))),
        },
    ];
    Ok((outcome, checks))
}

/// The check that `task` waited at its gate once, for `expected`.
fn waited(claim: &str, task: &TaskMetrics, expected: Duration) -> Check {
    Check {
        claim: claim.into(),
        expected: format!("one wait of {expected}"),
        measured: format!(
            "{} waits, the longest {}",
            task.gate_wait.count,
            Duration::from_nanos(task.gate_wait.max_ns)
        ),
        pass: task.gate_wait.count == 1 && task.gate_wait.max_ns == expected.as_nanos(),
    }
}

/// Nanoseconds of `kind` slices charged to task `task` within `[start, end)` ns.
fn time_in(outcome: &Outcome, task: usize, kind: SliceKind, start: u64, end: u64) -> u64 {
    outcome.trace.as_ref().map_or(0, |trace| {
        trace.time_in(
            TaskId(task as u32),
            kind,
            Instant::from_nanos(start),
            Instant::from_nanos(end),
        )
    })
}

fn millis(nanos: &[u64]) -> Vec<f64> {
    nanos.iter().map(|&ns| ns as f64 / 1e6).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn the_file() -> bulwark_spec::Scenario {
        built_in_scenario("passive-servers").expect("valid")
    }

    #[test]
    fn every_check_holds() {
        let report = run().expect("runs");
        crate::test_support::assert_every_check_passes(&report.checks);
    }

    /// The checks can fail: with a budget that covers the operation, the rogue's context
    /// finishes it at 2 ms and the victim waits 1.5 ms, not 20.5.
    #[test]
    fn a_budget_that_covers_the_operation_releases_the_server() {
        let mut scenario = the_file();
        let rogue = scenario
            .tasks
            .iter_mut()
            .find(|t| t.name == "rogue")
            .expect("rogue");
        let reservation = rogue.reservation.as_mut().expect("reserved");
        reservation.budget = Duration::from_millis(3);
        let outcome = bulwark_sim::run(&scenario, &Options::default()).expect("runs");
        let victim = task(&outcome, "victim");
        let check = waited("victim", victim, VICTIM_WAIT);
        assert!(!check.pass, "{}", check.measured);
        assert_eq!(victim.gate_wait.max_ns, ms_tenths(15).as_nanos());
        assert_eq!(victim.misses, 0);
    }

    /// And with bandwidth inheritance switched off on core 2, victim2 waits as core 0's
    /// victim does, for the rogue's replenishment: (20 - 0.5) + (2 - 1) ms, and misses.
    #[test]
    fn without_inheritance_core_2_waits_for_the_replenishment() {
        let mut scenario = the_file();
        let log2 = scenario
            .servers
            .iter_mut()
            .find(|s| s.name == "log2")
            .expect("log2");
        log2.bandwidth_inheritance = false;
        let outcome = bulwark_sim::run(&scenario, &Options::default()).expect("runs");
        let victim2 = task(&outcome, "victim2");
        assert_eq!(victim2.gate_wait.max_ns, VICTIM_WAIT.as_nanos());
        assert_eq!(victim2.misses, 1);
    }
}
