//! A key server shared by clients in clusters and on a core of their own, on the scenario
//! machine: the MC-IPC paper's Theorem 1 as a property of composed systems.
//!
//! One server behind an MC-IPC gate, operations of at most `L`; rogue clients in small
//! sporadic reservations (fixed priority or EDF clusters, and an SPR core) whose budgets run
//! out while their requests wait or are in service, so requests are pruned, reissued and
//! finished on other clients' budgets; and one victim whose reservation never runs out. The
//! gate's clusters are the `[[cluster]]`s and the core (a cluster of one), `K` of them. Under
//! MC-IPC a request drains at most `(1 + 2 m K) L` of its client's budget, `m` the cores of
//! the client's cluster (section IV-B), whatever the rogues do. Every scheduler's invariants
//! are checked after every call. A quarter of the clusters' rogues are best-effort (their
//! requests wait in the gate's background queue, served only when no real-time request
//! waits, and their contexts lend without a budget), and half the systems move pruned
//! requests to that queue (section V): the bound still holds. (In 1,000 drawn cases, 502
//! had best-effort rogues and in 501 of them a best-effort context ran operations.)

use bulwark_core::ipc::GateProtocol;
use bulwark_core::reservation::clustered::Replenishment;
use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Priority};
use bulwark_sim::{Options, Outcome};
use bulwark_spec::{
    Behaviour, ClusterMember, ClusterSpec, Execution, MemberKind, PolicyKind, Scenario, ServerSpec,
    ServerStep, SporadicOrder, Step, TaskSpec,
};
use proptest::prelude::*;

mod common;
use common::{ms, run_checked};

/// The longest operation, `L`, in ms.
const LONGEST: u64 = 3;

/// A rogue: its reservation `(e, p)`, its job's `(before, operation, after)` and period, its
/// offset and priority, in ms; in a cluster, a quarter are best-effort instead (no budget,
/// their requests in the gate's background queue).
#[derive(Clone, Copy, Debug)]
struct Rogue {
    best_effort: bool,
    budget: u64,
    server_period: u64,
    before: u64,
    operation: u64,
    after: u64,
    period: u64,
    offset: u64,
    priority: u8,
}

fn rogue() -> impl Strategy<Value = Rogue> {
    (
        (1u64..=3, 4u64..=10),
        (0u64..=2, 1u64..=LONGEST, 0u64..=2),
        (3u64..=12, 0u64..=6, 1u8..=4),
        proptest::bool::weighted(0.25),
    )
        .prop_map(
            |(
                (budget, server_period),
                (before, operation, after),
                (period, offset, priority),
                best_effort,
            )| {
                Rogue {
                    best_effort,
                    budget,
                    server_period,
                    before,
                    operation,
                    after,
                    period,
                    offset,
                    priority,
                }
            },
        )
}

/// The system: per cluster, its core count and rogues; the rogues of the SPR core, if any
/// (empty: no such core); the victim's cluster (0 or 1), offset and operation; the
/// clusters' order; and whether pruned requests move to the gate's background queue. Under fixed priority the victim is the most important (priority 5), so
/// that it gets a core; the theorem bounds what it drains once it has one.
#[derive(Clone, Debug)]
struct System {
    clusters: Vec<(u16, Vec<Rogue>)>,
    core_rogues: Vec<Rogue>,
    victim: (usize, u64, u64),
    edf: bool,
    background: bool,
}

fn system() -> impl Strategy<Value = System> {
    let cluster = (1u16..=2, proptest::collection::vec(rogue(), 1..=3));
    (
        proptest::collection::vec(cluster, 1..=2),
        proptest::collection::vec(rogue(), 0..=2),
        (0usize..=1, 0u64..=10, 1u64..=LONGEST),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(clusters, core_rogues, victim, edf, background)| {
            let victim = (victim.0 % clusters.len(), victim.1, victim.2);
            System {
                clusters,
                core_rogues,
                victim,
                edf,
                background,
            }
        })
}

/// A client's looping script: compute, call the key server, compute, sleep until the next
/// release.
fn script(offset: u64, before: u64, operation: u64, after: u64, period: u64) -> Behaviour {
    let mut body = Vec::new();
    if before > 0 {
        body.push(Step::Run(Execution::Fixed(ms(before))));
    }
    body.push(Step::Invoke {
        server: 0,
        operation: Some(Execution::Fixed(ms(operation))),
    });
    if after > 0 {
        body.push(Step::Run(Execution::Fixed(ms(after))));
    }
    body.push(Step::SleepUntilNextRelease(ms(period)));
    Behaviour::Script {
        offset: ms(offset),
        steps: vec![Step::Loop { count: None, body }],
    }
}

fn client(name: String, core: u16, rogue: &Rogue, edf: bool) -> TaskSpec {
    TaskSpec {
        name,
        core,
        priority: (!edf).then_some(Priority(rogue.priority)),
        reservation: Some(Reservation::new(ms(rogue.budget), ms(rogue.server_period))),
        deadline: None,
        behaviour: script(
            rogue.offset,
            rogue.before,
            rogue.operation,
            rogue.after,
            rogue.period,
        ),
    }
}

/// The scenario, and the victim's task index.
fn scenario(system: &System) -> (Scenario, usize) {
    let order = if system.edf {
        SporadicOrder::EarliestDeadlineFirst
    } else {
        SporadicOrder::FixedPriority
    };
    let mut tasks = Vec::new();
    let mut clusters = Vec::new();
    let mut next_core = 0u16;
    let mut victim = 0;
    for (k, (cores, rogues)) in system.clusters.iter().enumerate() {
        let ids: Vec<u16> = (next_core..next_core + cores).collect();
        next_core += cores;
        let mut members = Vec::new();
        let mut join = |task: TaskSpec, tasks: &mut Vec<TaskSpec>| {
            let kind = if task.reservation.is_some() {
                MemberKind::Sporadic {
                    replenishment: Replenishment::Sporadic,
                    low_budget: None,
                }
            } else {
                MemberKind::BestEffort
            };
            members.push(ClusterMember {
                task: tasks.len(),
                kind,
            });
            tasks.push(task);
        };
        for rogue in rogues {
            let name = format!("rogue{}", tasks.len());
            let mut task = client(name, ids[0], rogue, system.edf);
            if rogue.best_effort {
                task.reservation = None;
                task.priority = None;
            }
            join(task, &mut tasks);
        }
        if k == system.victim.0 {
            let (_, offset, operation) = system.victim;
            // 60 ms per 100 ms: a job computes 2 ms and drains at most 13 L = 39 ms.
            let generous = Rogue {
                best_effort: false,
                budget: 60,
                server_period: 100,
                before: 1,
                operation,
                after: 1,
                period: 100,
                offset,
                priority: 5,
            };
            victim = tasks.len();
            join(
                client("victim".into(), ids[0], &generous, system.edf),
                &mut tasks,
            );
        }
        clusters.push(ClusterSpec {
            slack_reclamation: false,
            name: format!("k{k}"),
            cores: ids,
            order,
            cycle: Duration::ZERO,
            members,
        });
    }
    let mut core_policies = Vec::new();
    if !system.core_rogues.is_empty() {
        // The rogues of an SPR core of their own: one more cluster of one at the gate.
        let core = next_core;
        next_core += 1;
        core_policies.push((core, PolicyKind::Spr));
        for rogue in &system.core_rogues {
            let name = format!("spr{}", tasks.len());
            tasks.push(client(name, core, rogue, false));
        }
    }
    let count = tasks.len();
    let scenario = Scenario {
        seed: 3,
        core_policies,
        clusters,
        servers: vec![ServerSpec {
            pruned_to_background: system.background,
            name: "key".into(),
            gate: GateProtocol::McIpc,
            body: vec![ServerStep::Run(Execution::Fixed(ms(LONGEST)))],
            bandwidth_inheritance: true,
            priority: None,
            clients: (0..count).collect(),
        }],
        ..Scenario::new(
            "key-server",
            PolicyKind::FixedPriority,
            next_core,
            ms(300),
            tasks,
        )
    };
    (scenario, victim)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Theorem 1 for the victim, whatever the rogues in its cluster, in another cluster and
    /// on the SPR core do; and the rogues' requests really are pruned now and then.
    #[test]
    fn an_mc_ipc_request_drains_at_most_theorem_1s_bound(system in system()) {
        let (scenario, victim) = scenario(&system);
        let outcome = run_checked(&scenario, &Options::default());
        let gate_clusters = system.clusters.len() as u64 + u64::from(!system.core_rogues.is_empty());
        let cores = u64::from(system.clusters[system.victim.0].0);
        let bound = ms(LONGEST).saturating_mul(1 + 2 * cores * gate_clusters);
        for task in &outcome.tasks {
            // Each prune and each reply ends one drain; a job completes only after its reply.
            let replies = task.request_drain.count - task.requests_aborted;
            prop_assert!(task.completed <= replies, "{} completed a job unanswered", task.name);
            prop_assert!(task.server_ns <= task.executed_ns, "{}", task.name);
        }
        // The server is sequential: its operations never overlap.
        let served: u64 = outcome.tasks.iter().map(|task| task.server_ns).sum();
        prop_assert!(served <= scenario.duration.as_nanos(), "{} ns served in 300 ms", served);
        let v = &outcome.tasks[victim];
        prop_assert_eq!(v.requests_aborted, 0, "the victim's budget never runs out");
        prop_assert!(v.request_drain.count >= 2, "the victim made requests: {:?}", v.request_drain);
        prop_assert!(
            v.request_drain.max_ns <= bound.as_nanos(),
            "a request drained {} ns, above (1 + 2 m K) L = {:?}",
            v.request_drain.max_ns,
            bound
        );
        // The same run's invocation records: every answered request of a budgeted client
        // whose reservation did not run out drained (A2: time selected, spinning or not) at
        // most the bound since it was last issued, and the victim's were never aborted.
        let mut records = bulwark_sim::Kept::default();
        bulwark_sim::run_recorded(&scenario, &Options::default(), &mut records, &mut |_| {})
            .unwrap_or_else(|error| panic!("{error}"));
        let victims: Vec<_> = records.invocations.iter().filter(|r| r.task.index() == victim).collect();
        prop_assert_eq!(victims.len() as u64, v.request_drain.count);
        prop_assert!(victims.iter().all(|r| !r.exhausted && r.reissues == 0));
        for record in &records.invocations {
            let budgeted = scenario.tasks[record.task.index()].reservation.is_some();
            if budgeted && !record.exhausted {
                prop_assert!(
                    record.drained_since_issue <= bound,
                    "{:?} drained above (1 + 2 m K) L = {:?}",
                    record,
                    bound
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The machine stepped by a platform that reports each stretch done the instant its
    /// length has run (the hosted runtime's protocol with an exact clock) gives the simulated
    /// run's outcome: stepping changes who ends a stretch, not the kernel.
    #[test]
    fn reported_stretches_give_the_simulated_outcome(system in system()) {
        let (scenario, _) = scenario(&system);
        let options = Options { record_jobs: true, ..Options::default() };
        let simulated = bulwark_sim::run(&scenario, &options).unwrap_or_else(|error| panic!("{error}"));
        prop_assert_eq!(common::run_reported(&scenario, &options), simulated);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Key-server clusters stepped by a careless platform (timers late, stretches reported
    /// early or stale, time passing in arbitrary amounts): the machine never fails or
    /// panics, and the server stays sequential (its operations add up to at most the run).
    #[test]
    fn any_platform_behaviour_is_taken(
        system in system(),
        moves in common::platform_moves(),
    ) {
        let (scenario, _) = scenario(&system);
        let outcome = common::run_jittered(&scenario, &moves);
        let served: u64 = outcome.tasks.iter().map(|task| task.server_ns).sum();
        prop_assert!(served <= scenario.duration.as_nanos());
        for task in &outcome.tasks {
            prop_assert!(task.completed <= task.jobs, "{}", task.name);
            prop_assert!(task.server_ns <= task.executed_ns, "{}", task.name);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Cases worked by hand, from scenario files (no kernel costs).
// ---------------------------------------------------------------------------------------

/// A two-core fixed-priority cluster and key server `S` (an MC-IPC gate), then `tasks`.
fn pair(tasks: &str) -> Scenario {
    let text = format!(
        "name = \"pair\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"30ms\"\n\n\
         [[cluster]]\nname = \"pair\"\ncores = [0, 1]\norder = \"fixed-priority\"\n\n\
         [[server]]\nname = \"S\"\ngate = \"mc-ipc\"\noperation = \"5ms\"\n\n{tasks}"
    );
    parsed(&text, "pair.toml")
}

/// A two-core fixed-priority cluster of 15 ms, reclaiming slack or not, a server `S` with a
/// `gate` gate, then `tasks` (members of cluster `pair`).
fn slack_pair(gate: &str, slack: bool, tasks: &str) -> Scenario {
    let slack = if slack {
        "slack-reclamation = true\n"
    } else {
        ""
    };
    let text = format!(
        "name = \"slack\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"15ms\"\n\n\
         [[cluster]]\nname = \"pair\"\ncores = [0, 1]\norder = \"fixed-priority\"\n{slack}\n\
         [[server]]\nname = \"S\"\ngate = \"{gate}\"\noperation = \"5ms\"\n\n{tasks}"
    );
    parsed(&text, "slack.toml")
}

/// The scenario `text` as file `file`, which must be valid.
fn parsed(text: &str, file: &str) -> Scenario {
    bulwark_spec::parse(text, file).unwrap_or_else(|e| panic!("{}", e.plain()))
}

/// (release, completion) of each job of `task`, in ms (to the microsecond).
fn jobs_of(outcome: &Outcome, task: usize) -> Vec<(f64, Option<f64>)> {
    let in_ms = |t: bulwark_core::Instant| t.as_nanos() as f64 / 1e6;
    let jobs = outcome.jobs.as_ref().expect("jobs were recorded");
    jobs.iter()
        .filter(|job| job.task.index() == task)
        .map(|job| (in_ms(job.release), job.completion.map(in_ms)))
        .collect()
}

fn run_with_jobs(scenario: &Scenario) -> Outcome {
    let options = Options {
        record_jobs: true,
        ..Options::default()
    };
    run_checked(scenario, &options)
}

/// `r` (priority 1, 1 ms per 10 ms) calls for 3 ms at 0 on core 1 (`v`, more important,
/// took core 0 for its first job, which only sleeps). `v` (6 ms per 10 ms) calls for 1 ms at
/// 0.5 ms: `S` is running `r`'s request on core 1, so `v`'s context spins on core 0 (its
/// budget drains, A2). At 1 ms `r`'s budget is out: its request, in service, is not pruned,
/// and `v`'s context runs it on core 0, 1..3 ms; then `v`'s own, 3..4 ms; `v` computes
/// 4..5 ms and completes. So `v`'s request waited 2.5 ms at the gate and drained 3.5 ms, of
/// which its context ran 3 ms of operations. At 10 ms `r` is replenished and calls again;
/// `v`, released at 10.5 ms, repeats the same 4.5 ms: completion at 15 ms.
/// The pair of `a_lender_on_another_core_takes_over_an_operation_whose_runner_ran_out`:
/// `r` (1 ms per 10 ms) calls for 3 ms at once, `v` (6 ms per 10 ms) for 1 ms at 0.5 ms.
fn lender_takes_over() -> Scenario {
    pair(
        "[[task]]\nname = \"r\"\ncluster = \"pair\"\npriority = 1\n\
         reservation = { budget = \"1ms\", period = \"10ms\" }\n\
         script = [{ loop = \"forever\", body = [{ invoke = \"S\", operation = \"3ms\" }] }]\n\n\
         [[task]]\nname = \"v\"\ncluster = \"pair\"\npriority = 2\n\
         reservation = { budget = \"6ms\", period = \"10ms\" }\n\
         script = [{ sleep-until = \"500us\" }, { loop = \"forever\", body = [\
         { invoke = \"S\", operation = \"1ms\" }, { run = \"1ms\" }, \
         { sleep-until-next-release = \"10ms\" }] }]\n",
    )
}

#[test]
fn a_lender_on_another_core_takes_over_an_operation_whose_runner_ran_out() {
    let scenario = lender_takes_over();
    let outcome = run_with_jobs(&scenario);
    assert_eq!(
        jobs_of(&outcome, 1),
        [
            (0.0, Some(0.0)),
            (0.5, Some(5.0)),
            (10.5, Some(15.0)),
            (20.5, Some(25.0))
        ]
    );
    let v = &outcome.tasks[1];
    assert_eq!(v.gate_wait.max_ns, 2_500_000);
    assert_eq!(v.request_drain.max_ns, 3_500_000);
    assert_eq!(v.requests_aborted, 0);
    // Per job: 2 ms of `r`'s operation and 1 ms of its own.
    assert_eq!(v.server_ns, 9_000_000);
    let r = &outcome.tasks[0];
    assert_eq!(r.requests_aborted, 0);
    assert_eq!(r.completed, 0);
}

/// `a` (priority 3, 6 ms per 10 ms) calls for 4 ms at 0 on core 0 and is served; `r`
/// (priority 1, 1 ms per 10 ms) calls for 1 ms at 0 on core 1 and spins behind it. At 1 ms
/// `r`'s budget is out while its request waits: pruned. `a` is answered at 4 ms and completes.
/// At 10 ms the cluster's timer releases `a`'s next job and replenishes `r`, whose request is
/// issued again at once and taken by the idle server (before `a`, dispatched after that
/// entry, calls): `r`'s context runs it 10..11 ms while `a` spins, then `a`'s request runs
/// 11..15 ms (5 of `a`'s 6 ms). `r`, answered at 11 ms with its budget out (the reply comes
/// before that instant's exhaustion; the step after it needs a core), takes its sleep step
/// only at its replenishment at 20 ms, which completes its first job; its next job, planned at
/// 10 ms, is released at once and calls at 20 ms, behind `a`'s new request (`a` called first,
/// on core 0, whose entry made the instant's releases), so `r` spins 20..21 ms and is pruned a
/// second time.
#[test]
fn a_request_waiting_when_its_budget_runs_out_is_pruned_and_issued_again() {
    let scenario = pair(
        "[[task]]\nname = \"a\"\ncluster = \"pair\"\npriority = 3\n\
         reservation = { budget = \"6ms\", period = \"10ms\" }\n\
         script = [{ loop = \"forever\", body = [{ invoke = \"S\", operation = \"4ms\" }, \
         { sleep-until-next-release = \"10ms\" }] }]\n\n\
         [[task]]\nname = \"r\"\ncluster = \"pair\"\npriority = 1\n\
         reservation = { budget = \"1ms\", period = \"10ms\" }\n\
         script = [{ loop = \"forever\", body = [{ invoke = \"S\", operation = \"1ms\" }, \
         { sleep-until-next-release = \"10ms\" }] }]\n",
    );
    let outcome = run_with_jobs(&scenario);
    assert_eq!(
        jobs_of(&outcome, 0)[..2],
        [(0.0, Some(4.0)), (10.0, Some(15.0))]
    );
    assert_eq!(jobs_of(&outcome, 1)[0], (0.0, Some(20.0)));
    assert_eq!(outcome.tasks[1].requests_aborted, 2);
    assert_eq!(outcome.tasks[0].requests_aborted, 0);
    assert_eq!(outcome.tasks[0].gate_wait.max_ns, 1_000_000);
}

/// Members of cluster `pair` that call `S` at 0: `a` (priority 2, 5 ms per 10 ms) for 3 ms and
/// `b` (priority 1, 2 ms per 10 ms) for 1 ms.
const BLOCKED_AT_A_GATE: &str = "[[task]]\nname = \"a\"\ncluster = \"pair\"\npriority = 2\n\
    reservation = { budget = \"5ms\", period = \"10ms\" }\n\
    script = [{ invoke = \"S\", operation = \"3ms\" }]\n\n\
    [[task]]\nname = \"b\"\ncluster = \"pair\"\npriority = 1\n\
    reservation = { budget = \"2ms\", period = \"10ms\" }\n\
    script = [{ invoke = \"S\", operation = \"1ms\" }]\n";

/// Without bandwidth inheritance (a FIFO-IPC gate) a member that waits blocks, but its
/// reservation stays active: selected, it drains with nothing to run (A2). `a` (priority 2)
/// calls for 3 ms at 0 and is served on core 0; `b` (priority 1, 2 ms per 10 ms) calls for
/// 1 ms at 0 on core 1 and blocks, core 1 idle while `b`'s budget drains 0..2 ms. Served at
/// 3 ms, `b` has no budget until its replenishment at 10 ms: its context runs the operation
/// 10..11 ms and its job completes at 11 ms, having executed 1 ms in all.
#[test]
fn a_member_blocked_at_a_gate_drains_its_selected_reservation() {
    let scenario = slack_pair("fifo-ipc", false, BLOCKED_AT_A_GATE);
    assert!(!scenario.servers[0].bandwidth_inheritance);
    let outcome = run_with_jobs(&scenario);
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(3.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(11.0))]);
    let b = &outcome.tasks[1];
    assert_eq!(b.executed_ns, 1_000_000);
    assert_eq!(b.gate_wait.max_ns, 3_000_000);
    assert_eq!(b.requests_aborted, 0);
}

/// Slack reclamation (`slack-reclamation = true`) in the FIFO-IPC case above, with a third
/// member `c` (priority 0, 4 ms per 10 ms, a 6 ms job at 0): at 0 `a` and `b` are selected,
/// `c` is not. `b` blocks on core 1, whose selected reservation then runs nothing: the core
/// runs `c` on slack, on no budget, while `b`'s budget drains (A2). At 2 ms `b`'s budget is
/// out and `c` is selected there: its budget drains from 2 ms, and its job, with 4 ms left,
/// completes at 6 ms as its budget runs out. `a` and `b` are as without `c`. Without slack
/// reclamation `c` runs only once selected, 2..6 ms, and, out of budget with 2 ms left, after
/// its replenishment at 10 ms: it completes at 12 ms.
#[test]
fn an_idle_core_reclaims_slack_for_a_member_that_is_not_selected() {
    let tasks = &format!(
        "{BLOCKED_AT_A_GATE}\n\
        [[task]]\nname = \"c\"\ncluster = \"pair\"\npriority = 0\n\
        reservation = {{ budget = \"4ms\", period = \"10ms\" }}\n\
        script = [{{ run = \"6ms\" }}]\n"
    );
    let slack = slack_pair("fifo-ipc", true, tasks);
    assert!(slack.clusters[0].slack_reclamation);
    let outcome = run_with_jobs(&slack);
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(3.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(11.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(0.0, Some(6.0))]);
    assert_eq!(outcome.tasks[2].executed_ns, 6_000_000);

    let without = slack_pair("fifo-ipc", false, tasks);
    assert!(!without.clusters[0].slack_reclamation);
    let outcome = run_with_jobs(&without);
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(3.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(11.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(0.0, Some(12.0))]);
}

/// A best-effort member's request joins the MC-IPC gate's background queue (Fig. 1, lines
/// 8-9), served only when no real-time request waits. Cores 0 and 1 are a fixed-priority
/// cluster (gate cluster 4), cores 2 and 3 SPR cores (gate clusters 2 and 3); key server `S`
/// (mc-ipc): `holder` (core 3) calls for 2 ms at 0 and is served 0..2 ms; `be` (best-effort,
/// in the cluster) calls for 1 ms at 0.2 ms and `r` (core 2) for 2 ms at 0.5 ms, both wait,
/// lending their contexts. At 2 ms the server takes `r`'s request, run by `be`'s context on
/// core 0 (2..4 ms), before `be`'s own (4..5 ms), though `be` called first. Were `be` a
/// real-time client of the lowest urgency, it would head its cluster's queue, and the global
/// queue's round robin after cluster 3 (`holder`'s) would reach cluster 4 before cluster 2:
/// `be` served 2..3 ms and `r` 3..5 ms.
#[test]
fn a_best_effort_members_request_waits_in_the_background_queue() {
    let text = "name = \"bg\"\npolicy = \"spr\"\ncores = 4\nduration = \"10ms\"\n\n\
        [[cluster]]\nname = \"pair\"\ncores = [0, 1]\norder = \"fixed-priority\"\n\n\
        [[server]]\nname = \"S\"\ngate = \"mc-ipc\"\noperation = \"5ms\"\n\n\
        [[task]]\nname = \"holder\"\ncore = 3\npriority = 2\n\
        reservation = { budget = \"10ms\", period = \"20ms\" }\n\
        script = [{ invoke = \"S\", operation = \"2ms\" }]\n\n\
        [[task]]\nname = \"be\"\ncluster = \"pair\"\noffset = \"200us\"\n\
        reservation = \"best-effort\"\nscript = [{ invoke = \"S\", operation = \"1ms\" }]\n\n\
        [[task]]\nname = \"r\"\ncore = 2\npriority = 1\noffset = \"500us\"\n\
        reservation = { budget = \"5ms\", period = \"20ms\" }\n\
        script = [{ invoke = \"S\", operation = \"2ms\" }]\n";
    let scenario = parsed(text, "bg.toml");
    let outcome = run_with_jobs(&scenario);
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(2.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(0.5, Some(4.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.2, Some(5.0))]);
    // `be`'s context ran `r`'s operation and its own.
    assert_eq!(outcome.tasks[1].server_ns, 3_000_000);
}

/// An mc-ipc gate whose pruned requests move to its background queue (`pruned =
/// "background"`, the MC-IPC paper's section V). A fixed-priority cluster of cores 0 and 1;
/// key server `S`: `holder` (priority 3) calls for 2 ms at 0 and is served 0..2 ms on core 0;
/// `rogue` (priority 2, 0.5 ms per 20 ms) calls for 1 ms at 0 on core 1, waits, spins, and is
/// pruned at 0.5 ms, its budget out. Its request moves to the background queue, and at 2 ms,
/// no real-time request waiting, the server takes it, though its caller has no budget: it
/// stalls until a context lends. `late` (priority 1, 5 ms per 20 ms) calls for 1 ms at
/// 2.5 ms on core 0: it waits, and its context runs the rogue's operation (2.5..3.5 ms), then
/// its own (3.5..4.5 ms). The rogue, answered at 3.5 ms, takes its last step at its
/// replenishment, 20 ms. With `pruned = "reissue"` the pruned request is in no queue: `late`
/// is served at once (2.5..3.5 ms), and the rogue's request is issued again at 20 ms, runs
/// 20..20.5 ms, its budget out in service (left to complete), and 40..40.5 ms, which leaves
/// the rogue no budget for its last step before the run ends at 50 ms.
#[test]
fn a_pruned_request_in_the_background_queue_is_served_by_a_later_lender() {
    let text = |pruned: &str| {
        format!(
            "name = \"bg\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"50ms\"\n\n\
             [[cluster]]\nname = \"pair\"\ncores = [0, 1]\norder = \"fixed-priority\"\n\n\
             [[server]]\nname = \"S\"\ngate = \"mc-ipc\"\noperation = \"5ms\"\npruned = \"{pruned}\"\n\n\
             [[task]]\nname = \"holder\"\ncluster = \"pair\"\npriority = 3\n\
             reservation = {{ budget = \"10ms\", period = \"100ms\" }}\n\
             script = [{{ invoke = \"S\", operation = \"2ms\" }}]\n\n\
             [[task]]\nname = \"rogue\"\ncluster = \"pair\"\npriority = 2\n\
             reservation = {{ budget = \"500us\", period = \"20ms\" }}\n\
             script = [{{ invoke = \"S\", operation = \"1ms\" }}]\n\n\
             [[task]]\nname = \"late\"\ncluster = \"pair\"\npriority = 1\noffset = \"2500us\"\n\
             reservation = {{ budget = \"5ms\", period = \"100ms\" }}\n\
             script = [{{ invoke = \"S\", operation = \"1ms\" }}]\n"
        )
    };
    let parse = |text: &str| parsed(text, "bg.toml");
    let background = parse(&text("background"));
    assert!(background.servers[0].pruned_to_background);
    let outcome = run_with_jobs(&background);
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(2.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(20.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(2.5, Some(4.5))]);
    assert_eq!(outcome.tasks[1].requests_aborted, 1);
    assert_eq!(outcome.tasks[2].server_ns, 2_000_000);

    let reissue = parse(&text("reissue"));
    assert!(!reissue.servers[0].pruned_to_background);
    let outcome = run_with_jobs(&reissue);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, None)]);
    assert_eq!(outcome.tasks[1].server_ns, 1_000_000);
    assert_eq!(jobs_of(&outcome, 2), [(2.5, Some(3.5))]);
    assert_eq!(outcome.tasks[1].requests_aborted, 1);
}

/// One core, a fixed-priority cluster and an idle key server `S`; `head` is a member, `rest`
/// the other tasks of the file.
fn one_core(gate: &str, tasks: &str) -> Scenario {
    let text = format!(
        "name = \"one\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"20ms\"\n\n\
         [[cluster]]\nname = \"one\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
         [[server]]\nname = \"S\"\ngate = \"{gate}\"\noperation = \"5ms\"\n\n{tasks}"
    );
    parsed(&text, "one.toml")
}

/// "Ties", rule 1, for a kernel that takes no time: a release due at the instant the kernel
/// returns is made before the chosen thread takes a step, even one that takes no time. Two
/// best-effort members (ties go to the earlier one), every 3 ms: `a` calls `S` for 1 ms and
/// sleeps; `b` runs 1 ms, calls for 1 ms and sleeps. `a` is served 0..1 and completes at 1;
/// `b` runs 1..2 and is served 2..3. At 3 the reply and `a`'s release coincide: `a` is chosen
/// before `b` takes its sleep step, is served 3..4 and completes at 4, and only then `b`
/// completes (its first job) at 4; its next job is due at once, released at its plan, 3.
#[test]
fn a_release_at_a_replys_instant_comes_before_the_callers_next_step() {
    let scenario = one_core(
        "fifo-ipc",
        "[[task]]\nname = \"a\"\ncluster = \"one\"\nreservation = \"best-effort\"\n\
         script = [{ loop = \"forever\", body = [{ invoke = \"S\", operation = \"1ms\" }, \
         { sleep-until-next-release = \"3ms\" }] }]\n\n\
         [[task]]\nname = \"b\"\ncluster = \"one\"\nreservation = \"best-effort\"\n\
         script = [{ loop = \"forever\", body = [{ run = \"1ms\" }, \
         { invoke = \"S\", operation = \"1ms\" }, { sleep-until-next-release = \"3ms\" }] }]\n",
    );
    let outcome = run_with_jobs(&scenario);
    assert_eq!(
        jobs_of(&outcome, 0)[..2],
        [(0.0, Some(1.0)), (3.0, Some(4.0))]
    );
    assert_eq!(jobs_of(&outcome, 1)[0], (0.0, Some(4.0)));
    assert_eq!(jobs_of(&outcome, 1)[1].0, 3.0);
}

/// An exhaustion comes before anything else at its instant: a call made then with no budget
/// left is pruned before the idle server takes a request. `r` (1 ms per 10 ms) runs 0..1 and
/// calls `S` (an MC-IPC gate) at 1, when its budget runs out: the request is pruned, not
/// served on no one's budget. `b`, best-effort, is chosen at 1, calls for 1 ms, is served
/// 1..2 and completes at 2. `r`'s request is issued again at its replenishment at 10 and
/// served 10..11 on its budget, which that empties: its sleep step waits for the next
/// replenishment, at 20 (the horizon, inclusive), which completes its first job; the next is
/// due at once and released at its plan, 10, and the one planned at 20, the horizon, is due
/// behind it.
#[test]
fn a_call_made_as_the_budget_runs_out_is_pruned_before_the_server_takes_it() {
    let scenario = one_core(
        "mc-ipc",
        "[[task]]\nname = \"r\"\ncluster = \"one\"\npriority = 1\n\
         reservation = { budget = \"1ms\", period = \"10ms\" }\n\
         script = [{ loop = \"forever\", body = [{ run = \"1ms\" }, \
         { invoke = \"S\", operation = \"1ms\" }, { sleep-until-next-release = \"10ms\" }] }]\n\n\
         [[task]]\nname = \"b\"\ncluster = \"one\"\nreservation = \"best-effort\"\n\
         script = [{ invoke = \"S\", operation = \"1ms\" }, { sleep-for = \"100ms\" }]\n",
    );
    let outcome = run_with_jobs(&scenario);
    assert_eq!(jobs_of(&outcome, 1)[0], (0.0, Some(2.0)));
    assert_eq!(outcome.tasks[0].requests_aborted, 1);
    assert_eq!(
        jobs_of(&outcome, 0),
        [(0.0, Some(20.0)), (10.0, None), (20.0, None)]
    );
}

/// Slack goes to a core whose selected thread lends its context to a server running on
/// another core: the paper dispatches the server "unless ... already executing on another
/// processor", so that core has nothing to run. Two cores, slack reclaimed, an MC-IPC gate
/// (bandwidth inheritance): `a` (priority 3) calls for 4 ms at 0 and runs its operation on
/// core 0; `b` (priority 2) calls for 1 ms at 0 and waits behind it, lending to an operation
/// core 0 runs; `c` (priority 1, not selected) runs 2 ms on core 1 meanwhile, completing at 2.
/// From 2 `b`'s context spins on core 1 (no member is left to take the slack); at 4 `a` is
/// answered and completes, and `b`'s request runs on core 1, 4..5. Without slack, `c` waits
/// for a core until `a` completes: 4..6.
#[test]
fn a_core_whose_lender_waits_on_another_cores_operation_reclaims_slack() {
    let tasks = "[[task]]\nname = \"a\"\ncluster = \"pair\"\npriority = 3\n\
        reservation = { budget = \"10ms\", period = \"20ms\" }\n\
        script = [{ invoke = \"S\", operation = \"4ms\" }]\n\n\
        [[task]]\nname = \"b\"\ncluster = \"pair\"\npriority = 2\n\
        reservation = { budget = \"10ms\", period = \"20ms\" }\n\
        script = [{ invoke = \"S\", operation = \"1ms\" }]\n\n\
        [[task]]\nname = \"c\"\ncluster = \"pair\"\npriority = 1\n\
        reservation = { budget = \"10ms\", period = \"20ms\" }\n\
        script = [{ run = \"2ms\" }]\n";
    let outcome = run_with_jobs(&slack_pair("mc-ipc", true, tasks));
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(4.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(5.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(0.0, Some(2.0))]);

    let outcome = run_with_jobs(&slack_pair("mc-ipc", false, tasks));
    assert_eq!(jobs_of(&outcome, 0), [(0.0, Some(4.0))]);
    assert_eq!(jobs_of(&outcome, 1), [(0.0, Some(5.0))]);
    assert_eq!(jobs_of(&outcome, 2), [(0.0, Some(6.0))]);
}

/// The invocation records of the schedule worked out for
/// `a_lender_on_another_core_takes_over_an_operation_whose_runner_ran_out`, first 10 ms: `r`
/// calls at 0 and is answered at 3, its request aborted in service at 1 when its budget ran
/// out (so outside Theorem 1's premise), its reservation selected 0..1 only; `v` calls at
/// 0.5 and is answered at 4, its reservation selected (spinning, then running operations)
/// all the while: 3.5 ms drained, never aborted.
#[test]
fn invocation_records_give_each_answered_calls_delay_and_drain() {
    let scenario = lender_takes_over();
    let mut records = bulwark_sim::Kept::default();
    let options = Options {
        until: Some(ms(9)),
        ..Options::default()
    };
    let outcome = bulwark_sim::run_recorded(&scenario, &options, &mut records, &mut |_| {})
        .unwrap_or_else(|error| panic!("{error}"));
    // Over the 9 ms: `r`'s reservation is selected 0..1, `v`'s 0.5..5 (its first job, at 0,
    // only sleeps; its next is released at 10.5).
    assert_eq!(outcome.clusters[0].drained_ns, [1_000_000, 4_500_000]);
    let at = |t: f64| bulwark_core::Instant::from_nanos((t * 1e6) as u64);
    let summary: Vec<_> = (records.invocations.iter())
        .map(|r| (r.task.index(), r.invoked, r.replied, r.drained, r.exhausted))
        .collect();
    assert_eq!(
        summary,
        [
            (0, at(0.0), at(3.0), ms(1), true),
            (1, at(0.5), at(4.0), Duration::from_micros(3500), false),
        ]
    );
    assert!(records
        .invocations
        .iter()
        .all(|r| r.reissues == 0 && r.issued == r.invoked));
    assert_eq!(
        records.invocations[1].drained_since_issue,
        Duration::from_micros(3500)
    );
}
