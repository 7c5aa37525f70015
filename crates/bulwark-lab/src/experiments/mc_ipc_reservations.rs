//! An MC-IPC key server invoked by tasks in per-core reservations
//! (`scenarios/mc-ipc-reservations.toml`): the MC-IPC paper's gate (Fig. 1) composed with SPR
//! reservations on one core and hard-CBS servers on another. The cores' schedulers report
//! when a caller's budget runs out and comes back; the gate aborts (prunes) a waiting request
//! on the first and reissues it on the second. The file's comments work the schedules out by
//! hand; the checks compare the runs, and copies with PRIO-IPC and FIFO-IPC gates (bandwidth
//! inheritance kept), with them:
//!
//! - SPR core, mc-ipc: three rogues whose budgets cannot pay for one 2 ms operation invoke it
//!   for ever; the two whose requests wait when their budgets run out are pruned, so the
//!   victim's context pays for the rest of the one request in service and its own: 2.5 ms per
//!   request, within Theorem 1's `(1 + 2 m K) L` = 6 ms, and it meets every deadline;
//! - the same core with PRIO-IPC or FIFO-IPC: nothing is pruned, the victim's context serves
//!   every rogue request queued ahead of it, 6.5 ms per request, and it misses every deadline;
//! - hard-CBS core: the first period is the SPR core's (2.5 ms, complete at 5 ms; FIFO-IPC:
//!   complete at 9 ms), and no request drains more than Theorem 1's bound;
//! - cores 2 to 4, one server called from three cores (three clusters of one): a waiting
//!   caller spins while the operation runs on another core, so a rogue's budget runs out
//!   while it waits and its request is pruned; the victim drains 3.9 ms per request, within
//!   Theorem 1's 14 ms, where FIFO-IPC makes it 5.9 ms and a deadline miss per period.

use bulwark_core::ipc::GateProtocol;
use bulwark_core::Duration;
use bulwark_sim::{Outcome, TaskMetrics};
use bulwark_spec::Scenario;

use super::outcomes::{built_in_scenario, first_job, recording_jobs, requests_aborted, task};
use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport};

pub const EXPERIMENT: Experiment = Experiment {
    name: "mc-ipc-reservations",
    title: "An MC-IPC gate on SPR reservations and hard-CBS servers: requests aborted when a \
            budget runs out",
    run,
};

/// The operation `L`.
const OPERATION: Duration = Duration::from_millis(2);
/// Theorem 1's `(1 + 2 m_k K) L` for one core (`m_k = 1`) and one cluster (`K = 1`).
const THEOREM_1: Duration = Duration::from_nanos(3 * OPERATION.as_nanos());
/// By hand, per request: the victim's drain with mc-ipc (the in-service request's last
/// 0.5 ms and its own 2 ms) and without pruning (also two queued rogue requests).
const DRAIN_MC_IPC: Duration = Duration::from_micros(2_500);
const DRAIN_QUEUED: Duration = Duration::from_micros(6_500);
/// By hand: the victim's wait (1.5 to 2 ms into each period) and its completions, 5 ms into
/// each period with mc-ipc and 9 ms without pruning.
const WAIT_MC_IPC: Duration = Duration::from_micros(500);
const RESPONSE_MC_IPC: Duration = Duration::from_millis(5);
const RESPONSE_QUEUED: Duration = Duration::from_millis(9);

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario("mc-ipc-reservations")?;
    let options = recording_jobs();
    let mc_ipc = bulwark_sim::run(&scenario, &options)?;
    let prio = bulwark_sim::run(&with_gate(&scenario, GateProtocol::PrioIpc), &options)?;
    let fifo = bulwark_sim::run(&with_gate(&scenario, GateProtocol::FifoIpc), &options)?;
    let victim = task(&mc_ipc, "victim");
    let periods = victim.jobs - 1;
    let mut checks = vec![
        drained(
            "SPR core, mc-ipc: the victim's context pays for the rest of the one request in \
             service and its own, 0.5 + 2 ms per request, within Theorem 1's (1 + 2 m K) L = 6 ms",
            victim,
            DRAIN_MC_IPC,
            periods,
        ),
        Check {
            claim: "SPR core, mc-ipc: the victim waits 0.5 ms per request and completes 5 ms into \
                    every period: no deadline missed"
                .into(),
            expected: format!("waits of {WAIT_MC_IPC}, max response {RESPONSE_MC_IPC}, no miss"),
            measured: format!(
                "waits of at most {}, max response {}, {} misses",
                Duration::from_nanos(victim.gate_wait.max_ns),
                Duration::from_nanos(victim.response.max_ns),
                victim.misses
            ),
            pass: victim.gate_wait.max_ns == WAIT_MC_IPC.as_nanos()
                && victim.response.max_ns == RESPONSE_MC_IPC.as_nanos()
                && victim.misses == 0,
        },
        aborted(&mc_ipc, periods),
    ];
    for (name, outcome) in [("PRIO-IPC", &prio), ("FIFO-IPC", &fifo)] {
        let victim = task(outcome, "victim");
        let mut check = drained_and_done(
            &format!(
                "SPR core, {name} with bandwidth inheritance: nothing is aborted, so the victim's \
                 context also serves the two rogue requests queued ahead of it, 6.5 ms per \
                 request, beyond Theorem 1's 6 ms, and it misses every deadline"
            ),
            victim,
            (DRAIN_QUEUED, periods),
            (RESPONSE_QUEUED, periods),
        );
        check.pass &= victim.request_drain.max_ns > THEOREM_1.as_nanos();
        checks.push(check);
    }
    checks.extend(hard_cbs(&mc_ipc, &fifo));
    checks.extend(across_cores(&mc_ipc, &fifo));
    Ok(ExperimentReport {
        source: "MC-IPC paper, Fig. 1 (mc_abort), section IV-A and Theorem 1; SPR paper \
                 (sporadic rule); hard CBS"
            .into(),
        summary: "`scenarios/mc-ipc-reservations.toml`: on each of two cores, a key server \
                  behind an mc-ipc gate, three rogues whose budgets cannot pay for one \
                  operation and invoke it for ever, and a victim with a deadline. Core 0 runs \
                  SPR, core 1 hard CBS; their schedulers report every budget exhaustion and \
                  replenishment, and the gate acts on them: a waiting request whose caller's \
                  budget ran out is pruned, so no other caller's budget serves it, and issued \
                  again when the budget is back. A waiting caller lends its budget to the \
                  request in service (bandwidth inheritance), so the victim pays for at most the \
                  rest of one rogue request besides its own. Cores 2 to 4 share a third \
                  server across cores: a waiting caller dispatched while the operation runs on \
                  another core spins, its budget draining (assumption A2), and takes the \
                  operation over when that core lets it go. The same file with PRIO-IPC or \
                  FIFO-IPC gates, inheritance kept, makes the victims pay for every queued \
                  rogue request and miss their deadlines."
            .into(),
        checks,
        tables: vec![
            super::textbook::summary_table(&mc_ipc),
            super::textbook::summary_table(&fifo),
        ],
        ..EXPERIMENT.blank_report()
    })
}

/// `scenario` with every server's gate switched to `gate`, bandwidth inheritance kept.
pub(super) fn with_gate(scenario: &Scenario, gate: GateProtocol) -> Scenario {
    let mut copy = scenario.clone();
    for server in &mut copy.servers {
        server.gate = gate;
        server.bandwidth_inheritance = true;
    }
    copy
}

/// The victim drained exactly `each` for each of its `requests` requests.
pub(super) fn drained(claim: &str, victim: &TaskMetrics, each: Duration, requests: u64) -> Check {
    let drain = &victim.request_drain;
    Check {
        claim: claim.into(),
        expected: format!("{requests} requests, each draining {each}"),
        measured: format!(
            "{} requests, draining {} to {}",
            drain.count,
            Duration::from_nanos(drain.min_ns),
            Duration::from_nanos(drain.max_ns)
        ),
        pass: drain.count == requests
            && drain.min_ns == each.as_nanos()
            && drain.max_ns == each.as_nanos(),
    }
}

/// The victim drained exactly `drain` for each of its `requests` requests, its longest
/// response was `response`, and it missed `misses` deadlines.
fn drained_and_done(
    claim: &str,
    victim: &TaskMetrics,
    (drain, requests): (Duration, u64),
    (response, misses): (Duration, u64),
) -> Check {
    let mut check = drained(claim, victim, drain, requests);
    check.expected += &format!(", max response {response}, {misses} misses");
    check.measured += &format!(
        ", max response {}, {} misses",
        Duration::from_nanos(victim.response.max_ns),
        victim.misses
    );
    check.pass &= victim.response.max_ns == response.as_nanos() && victim.misses == misses;
    check
}

/// The SPR core's aborts by hand: every period, rogue2's and rogue3's waiting requests are
/// pruned, rogue1's, in service, never is.
fn aborted(outcome: &Outcome, periods: u64) -> Check {
    let counts = requests_aborted(outcome, &["rogue1", "rogue2", "rogue3"]);
    Check {
        claim: "SPR core, mc-ipc: each period the two waiting rogue requests are aborted when \
                their budgets run out, and reissued at the replenishment; the one in service is \
                left to complete"
            .into(),
        expected: format!("aborted requests per rogue: [0, {periods}, {periods}]"),
        measured: format!("aborted requests per rogue: {counts:?}"),
        pass: counts == [0, periods, periods],
    }
}

/// Core 1, hard CBS: the first period by hand (the SPR core's order), then Theorem 1's bound
/// over the run.
fn hard_cbs(mc_ipc: &Outcome, fifo: &Outcome) -> Vec<Check> {
    let victim = task(mc_ipc, "cbs-victim");
    let first = |outcome: &Outcome| first_job(outcome, "cbs-victim").and_then(|job| job.completion);
    let (mc_first, fifo_first) = (first(mc_ipc), first(fifo));
    let ms = |at: Option<bulwark_core::Instant>| at.map_or("none".into(), |at| at.to_string());
    vec![
        Check {
            claim: "hard-CBS core, mc-ipc: no request of the victim drains more than Theorem 1's \
                    6 ms, and it misses no deadline"
                .into(),
            expected: format!("drains of at most {THEOREM_1}, no miss"),
            measured: format!(
                "drains of at most {}, {} misses",
                Duration::from_nanos(victim.request_drain.max_ns),
                victim.misses
            ),
            pass: victim.request_drain.count > 0
                && victim.request_drain.max_ns <= THEOREM_1.as_nanos()
                && victim.misses == 0,
        },
        Check {
            claim: "hard-CBS core, first period by hand (the SPR core's order): the victim \
                    completes at 5 ms with mc-ipc, at 9 ms with FIFO-IPC"
                .into(),
            expected: "5 ms and 9 ms".into(),
            measured: format!("{} and {}", ms(mc_first), ms(fifo_first)),
            pass: mc_first.map(|at| at.as_nanos()) == Some(RESPONSE_MC_IPC.as_nanos())
                && fifo_first.map(|at| at.as_nanos()) == Some(RESPONSE_QUEUED.as_nanos()),
        },
    ]
}

/// Theorem 1's bound for cores 2 to 4: three clusters of one core, `(1 + 2 * 1 * 3) L`.
const THEOREM_1_THREE_CLUSTERS: Duration = Duration::from_nanos(7 * OPERATION.as_nanos());
/// By hand, per request of the cross-victim: 0.4 ms spinning, the 1.5 ms rest of rogue-a's
/// request and its own 2 ms; with FIFO-IPC also rogue-b's 2 ms.
const DRAIN_ACROSS: Duration = Duration::from_micros(3_900);
const DRAIN_ACROSS_QUEUED: Duration = Duration::from_micros(5_900);
/// Its completions, from its 0.1 ms wake-up: 5 ms and, with FIFO-IPC, 7 ms into the period.
const RESPONSE_ACROSS: Duration = Duration::from_micros(4_900);
const RESPONSE_ACROSS_QUEUED: Duration = Duration::from_micros(6_900);

/// Cores 2 to 4: one server called from three cores, each a cluster of one; the waiting
/// callers spin while the operation runs elsewhere, by hand in the file's comments.
fn across_cores(mc_ipc: &Outcome, fifo: &Outcome) -> Vec<Check> {
    let victim = task(mc_ipc, "cross-victim");
    let mut mc_check = drained_and_done(
        "cores 2-4, mc-ipc across cores: the victim spins 0.1..0.5 ms while rogue-a's request \
         runs on another core, then runs its rest and its own: 0.4 + 1.5 + 2 ms per request, \
         within Theorem 1's (1 + 2 m K) L = 14 ms for three clusters; it completes 4.9 ms \
         after waking, every deadline met",
        victim,
        (DRAIN_ACROSS, 3),
        (RESPONSE_ACROSS, 0),
    );
    mc_check.pass &= victim.request_drain.max_ns <= THEOREM_1_THREE_CLUSTERS.as_nanos();
    let pruned = task(mc_ipc, "rogue-b").requests_aborted;
    let fifo_check = drained_and_done(
        "cores 2-4, FIFO-IPC: rogue-b's request, queued when its budget ran out while it spun, \
         is served on the victim's context too: 5.9 ms per request, complete 6.9 ms after \
         waking, past the 6 ms deadline in every period",
        task(fifo, "cross-victim"),
        (DRAIN_ACROSS_QUEUED, 3),
        (RESPONSE_ACROSS_QUEUED, 3),
    );
    vec![
        mc_check,
        Check {
            claim: "cores 2-4, mc-ipc: rogue-b's waiting request is aborted every period, when \
                    its budget runs out while it spins"
                .into(),
            expected: "3 aborted requests".into(),
            measured: format!("{pruned} aborted requests"),
            pass: pruned == 3,
        },
        fifo_check,
    ]
}

/// The built-in scenario `name` run with every rogue's budget at 3 ms, enough to pay for a
/// whole 2 ms operation: what the experiments' "break it" tests run.
#[cfg(test)]
pub(super) fn with_rich_rogues(name: &str) -> Outcome {
    let mut scenario = built_in_scenario(name).expect("valid");
    for task in &mut scenario.tasks {
        if task.name.contains("rogue") {
            let reservation = task.reservation.as_mut().expect("reserved");
            reservation.budget = Duration::from_millis(3);
        }
    }
    bulwark_sim::run(&scenario, &bulwark_sim::Options::default()).expect("runs")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound the checks use is the analysis's Theorem 1 for one core and one cluster.
    #[test]
    fn the_bound_is_theorem_1() {
        let bound = bulwark_analysis::mc_ipc::invocation_budget_bound(1, 1, OPERATION);
        assert_eq!(bound, Some(THEOREM_1));
        let three = bulwark_analysis::mc_ipc::invocation_budget_bound(1, 3, OPERATION);
        assert_eq!(three, Some(THEOREM_1_THREE_CLUSTERS));
    }

    #[test]
    fn every_check_holds() {
        let report = run().expect("runs");
        crate::test_support::assert_every_check_passes(&report.checks);
    }

    /// The checks can fail: with budgets that pay for a whole operation the rogues are never
    /// pruned, and the aborted-requests check fails.
    #[test]
    fn rogues_with_enough_budget_are_never_aborted() {
        let outcome = with_rich_rogues("mc-ipc-reservations");
        let check = aborted(&outcome, 3);
        assert!(!check.pass, "{}", check.measured);
        assert_eq!(task(&outcome, "rogue2").requests_aborted, 0);
    }
}
