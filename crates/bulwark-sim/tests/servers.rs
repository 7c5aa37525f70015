//! Passive servers (`[[server]]`, `invoke` steps): hand-worked schedules for the gates'
//! orders, with and without bandwidth inheritance, a termination in service, and the trace's
//! server slices; and properties over random callers: in SPR reservations a caller's own
//! execution plus the operations its context runs never exceed its budget in a period, and
//! under every per-core policy but VBS the policy's invariants hold after every call.

use bulwark_core::ipc::GateProtocol;
use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::{Options, Outcome, SliceKind};
use bulwark_spec::{
    Behaviour, Execution, PolicyKind, Reservation, Scenario, ServerSpec, ServerStep, Step, TaskSpec,
};
use proptest::prelude::*;

mod common;

fn run(source: &str) -> Outcome {
    let scenario = bulwark_spec::parse(source, "servers.toml").expect("valid");
    let options = Options {
        record_trace: true,
        record_jobs: true,
        ..Options::default()
    };
    bulwark_sim::run(&scenario, &options).expect("runs")
}

/// Three callers of one 2 ms operation on a fixed-priority core: `a` (priority 1) calls at 0,
/// `b` (5) at 0.1 ms and `c` (9) at 0.2 ms; each arrival preempts and blocks. `a`'s context
/// finishes the operation at 2 ms (0.3 ms of it before the arrivals' preemptions, which take
/// no time here). Then FIFO-IPC serves `b` (2..4 ms) before `c` (4..6 ms); PRIO-IPC serves `c`
/// first (2..4 ms), then `b` (4..6 ms).
fn three_callers(gate: &str) -> String {
    three_callers_with(gate, false)
}

fn three_callers_with(gate: &str, inheritance: bool) -> String {
    format!(
        r#"
name = "three-callers"
policy = "fixed-priority"
duration = "20ms"

[[server]]
name = "store"
gate = "{gate}"
operation = "2ms"
bandwidth-inheritance = {inheritance}

[[task]]
name = "a"
priority = 1
script = [{{ invoke = "store" }}, {{ sleep-until = "20ms" }}]

[[task]]
name = "b"
priority = 5
script = [{{ sleep-until = "100us" }}, {{ invoke = "store" }}, {{ sleep-until = "20ms" }}]

[[task]]
name = "c"
priority = 9
script = [{{ sleep-until = "200us" }}, {{ invoke = "store" }}, {{ sleep-until = "20ms" }}]
"#
    )
}

fn wait_of(outcome: &Outcome, name: &str) -> (u64, u64) {
    let task = outcome.tasks.iter().find(|t| t.name == name).expect(name);
    (task.gate_wait.count, task.gate_wait.max_ns)
}

#[test]
fn fifo_serves_in_arrival_order() {
    let outcome = run(&three_callers("fifo-ipc"));
    assert_eq!(wait_of(&outcome, "a"), (0, 0));
    // b waits from 0.1 to 2 ms, c from 0.2 to 4 ms.
    assert_eq!(wait_of(&outcome, "b"), (1, 1_900_000));
    assert_eq!(wait_of(&outcome, "c"), (1, 3_800_000));
    for task in &outcome.tasks {
        assert_eq!(task.invocations, 1, "{}", task.name);
        assert_eq!(task.server_ns, 2_000_000, "{}", task.name);
        assert_eq!(task.executed_ns, task.server_ns, "{}", task.name);
    }
}

#[test]
fn prio_serves_the_most_urgent_first() {
    let outcome = run(&three_callers("prio-ipc"));
    // c waits from 0.2 to 2 ms, b from 0.1 to 4 ms.
    assert_eq!(wait_of(&outcome, "c"), (1, 1_800_000));
    assert_eq!(wait_of(&outcome, "b"), (1, 3_900_000));
}

/// The trace's server slices as (core, task, start ns, end ns), in the order recorded.
fn server_slices(outcome: &Outcome) -> Vec<(u16, u32, u64, u64)> {
    let trace = outcome.trace.as_ref().expect("recorded");
    trace
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Server)
        .map(|s| {
            let task = s.task.expect("charged").0;
            (s.core, task, s.start.as_nanos(), s.end.as_nanos())
        })
        .collect()
}

/// Server slices as (task, start ns, end ns), those that continue one another on the same
/// task's context joined (a preemption splits one stretch into several slices).
fn joined(slices: &[(u16, u32, u64, u64)]) -> Vec<(u32, u64, u64)> {
    let mut out: Vec<(u32, u64, u64)> = Vec::new();
    for &(_, task, start, end) in slices {
        match out.last_mut() {
            Some(last) if last.0 == task && last.2 == start => last.2 = end,
            _ => out.push((task, start, end)),
        }
    }
    out
}

fn server_ns(outcome: &Outcome) -> Vec<u64> {
    outcome.tasks.iter().map(|t| t.server_ns).collect()
}

/// With bandwidth inheritance the waiting callers stay ready, and the most important one's
/// context runs the request in service. FIFO: `a`'s operation runs 0..0.1 ms on `a`, 0.1..0.2
/// on `b`, 0.2..2 on `c`; then `b`'s request (2..4) and `c`'s own (4..6) both on `c`, the
/// most important caller throughout. The waits are as without inheritance (`c` was the one
/// running anyway); the budgets spent are not.
#[test]
fn inheritance_runs_the_request_in_service_on_the_waiting_callers() {
    let outcome = run(&three_callers_with("fifo-ipc", true));
    assert_eq!(server_ns(&outcome), [100_000, 100_000, 5_800_000]);
    assert_eq!(wait_of(&outcome, "b"), (1, 1_900_000));
    assert_eq!(wait_of(&outcome, "c"), (1, 3_800_000));
    // PRIO: after a's request, c's own (2..4 ms, on c), then b's (4..6 ms, on b).
    let outcome = run(&three_callers_with("prio-ipc", true));
    assert_eq!(server_ns(&outcome), [100_000, 2_100_000, 3_800_000]);
    assert_eq!(wait_of(&outcome, "c"), (1, 1_800_000));
    assert_eq!(wait_of(&outcome, "b"), (1, 3_900_000));
}

/// The trace shows each operation as server time on its caller's context, and the server
/// slices of every caller add up to its `server_ns`.
#[test]
fn operations_are_server_slices_charged_to_the_caller() {
    let outcome = run(&three_callers("fifo-ipc"));
    let trace = outcome.trace.as_ref().expect("recorded");
    // a: [0, 0.1), [0.1, 0.2), [0.2, 2) (the preemptions split it); then b and c.
    let merged = joined(&server_slices(&outcome));
    assert_eq!(
        merged,
        vec![
            (0, 0, 2_000_000),
            (1, 2_000_000, 4_000_000),
            (2, 4_000_000, 6_000_000)
        ]
    );
    assert!(!trace.slices.iter().any(|s| s.kind == SliceKind::Task));
}

/// A caller terminated while its context runs the operation: the request ends unanswered
/// and the server takes the next one at once. `a` (priority 1) calls at 0 (a 5 ms
/// operation), `b` (5) calls at 1 ms and blocks, `k` (9) terminates `a` at 2 ms: `b`'s request
/// runs 2..7 ms, so `b` waited 1 ms and completes at 7 ms.
#[test]
fn a_terminated_caller_hands_the_server_on() {
    let outcome = run(r#"
name = "terminated-caller"
policy = "fixed-priority"
duration = "20ms"

[[server]]
name = "store"
gate = "fifo-ipc"
operation = "5ms"

[[task]]
name = "a"
priority = 1
script = [{ invoke = "store" }, { sleep-until = "20ms" }]

[[task]]
name = "b"
priority = 5
script = [{ sleep-until = "1ms" }, { invoke = "store" }, { sleep-until = "20ms" }]

[[task]]
name = "k"
priority = 9
script = [{ sleep-until = "2ms" }, { terminate = "a" }, { sleep-until = "20ms" }]
"#);
    let a = &outcome.tasks[0];
    assert_eq!((a.killed_jobs, a.server_ns), (1, 2_000_000));
    assert_eq!(wait_of(&outcome, "b"), (1, 1_000_000));
    let jobs = outcome.jobs.as_ref().expect("recorded");
    let b_done: Vec<Option<Instant>> = jobs
        .iter()
        .filter(|j| j.task.0 == 1 && j.job == 1)
        .map(|j| j.completion)
        .collect();
    assert_eq!(b_done, vec![Some(Instant::from_nanos(7_000_000))]);
}

/// Two cores sharing `store` (2 ms, FIFO-IPC, no inheritance): `a` (core 0, priority 1)
/// calls it at 0, `b` (core 1, priority `b`) at 0.5 ms; `extra` adds tasks.
fn two_cores(b: u8, extra: &str) -> String {
    format!(
        r#"
name = "two-cores"
policy = "fixed-priority"
cores = 2
duration = "10ms"

[[server]]
name = "store"
gate = "fifo-ipc"
operation = "2ms"

[[task]]
name = "a"
core = 0
priority = 1
script = [{{ invoke = "store" }}, {{ sleep-until = "10ms" }}]

[[task]]
name = "b"
core = 1
priority = {b}
script = [{{ sleep-until = "500us" }}, {{ invoke = "store" }}, {{ sleep-until = "10ms" }}]
{extra}"#
    )
}

/// A server without bandwidth inheritance may have callers on two cores: `a` (core 0) calls
/// at 0 and its context runs the 2 ms operation; `b` (core 1) calls at 0.5 ms and blocks. The
/// reply at 2 ms hands the server to `b`, whose core takes an interrupt and wakes it: its
/// request runs 2..4 ms on core 1, after a wait of 1.5 ms.
#[test]
fn a_reply_wakes_the_next_caller_on_its_own_core() {
    let outcome = run(&two_cores(1, ""));
    assert_eq!(wait_of(&outcome, "b"), (1, 1_500_000));
    assert_eq!(
        server_slices(&outcome),
        vec![(0, 0, 0, 2_000_000), (1, 1, 2_000_000, 4_000_000)]
    );
}

/// The wake-up survives the woken core's own kernel entry at the same instant: on core 1,
/// `c` (below `b`) runs 0.5..2 ms while `b` waits, and sleeps at 2 ms, just as the reply on
/// core 0 hands the server to `b`. Its sleep programs core 1's timer for 10 ms; `b` must
/// still wake at 2 ms (a wait of 1.5 ms), not at 10.
#[test]
fn a_wake_up_from_another_core_is_not_lost_to_a_timer_reprogrammed_at_the_same_instant() {
    let c = r#"
[[task]]
name = "c"
core = 1
priority = 1
script = [{ sleep-until = "500us" }, { run = "1500us" }, { sleep-until = "10ms" }]
"#;
    let outcome = run(&two_cores(5, c));
    assert_eq!(wait_of(&outcome, "b"), (1, 1_500_000));
    let on_core_1: Vec<_> = server_slices(&outcome)
        .into_iter()
        .filter(|s| s.0 == 1)
        .collect();
    assert_eq!(on_core_1, vec![(1, 1, 2_000_000, 4_000_000)]);
}

/// A server's priority is a ceiling the caller's thread runs its operation at. Core 1 of
/// `scenarios/passive-servers.toml` with `log1` at priority 9: `low`'s operation (from 0)
/// runs at 9, so neither `high` (9, ready at 0.5 ms, behind it in FIFO order) nor `mid` (5,
/// at 1 ms) preempts it. At 2 ms the reply drops `low` back to 1: `high` calls the idle server
/// and runs 2..4 ms, then its own 1 ms, completing at 5 ms (4.5 ms after its release, against
/// 8.5 without the ceiling: its blocking is the 1.5 ms rest of one operation); `mid` runs 5..9.
#[test]
fn a_server_priority_is_a_ceiling_that_bounds_blocking_to_one_operation() {
    let outcome = run(r#"
name = "ceiling"
policy = "fixed-priority"
duration = "20ms"

[[server]]
name = "log1"
gate = "prio-ipc"
operation = "2ms"
priority = 9

[[task]]
name = "low"
priority = 1
script = [{ invoke = "log1" }, { sleep-until = "20ms" }]

[[task]]
name = "mid"
priority = 5
offset = "1ms"
period = "20ms"
execution = "4ms"

[[task]]
name = "high"
priority = 9
script = [
  { sleep-until = "500us" },
  { loop = "forever", body = [{ invoke = "log1" }, { run = "1ms" }, { sleep-until-aligned = "20ms" }] },
]
"#);
    let task = |name: &str| outcome.tasks.iter().find(|t| t.name == name).expect(name);
    assert_eq!(task("high").response.max_ns, 4_500_000);
    assert_eq!(
        task("high").gate_wait.count,
        0,
        "it never found the server busy"
    );
    assert_eq!(task("mid").response.max_ns, 8_000_000);
    assert_eq!(task("low").response.max_ns, 9_000_000);
}

/// A nested call: `front`'s body runs 1 ms, calls `db` (2 ms) and runs 1 ms more, all on its
/// caller's context. `a` (priority 1) calls `front` at 0: its context runs front 0..1 ms, then
/// db from 1 ms. `b` (5) calls `db` at 1.5 ms, finds it busy (a's nested request) and blocks;
/// a's context finishes db at 3 ms, and the reply wakes `b`, which outranks `a`: b's request
/// runs 3..5 ms. Then a's context returns to front's body, 5..6 ms, and front replies.
#[test]
fn a_server_body_calls_another_server_on_the_same_context() {
    let outcome = run(r#"
name = "nested"
policy = "fixed-priority"
duration = "20ms"

[[server]]
name = "front"
gate = "fifo-ipc"
body = [{ run = "1ms" }, { invoke = "db" }, { run = "1ms" }]

[[server]]
name = "db"
gate = "fifo-ipc"
operation = "2ms"

[[task]]
name = "a"
priority = 1
script = [{ invoke = "front" }, { sleep-until = "20ms" }]

[[task]]
name = "b"
priority = 5
script = [{ sleep-until = "1500us" }, { invoke = "db" }, { sleep-until = "20ms" }]
"#);
    assert_eq!(wait_of(&outcome, "b"), (1, 1_500_000));
    let (a, b) = (&outcome.tasks[0], &outcome.tasks[1]);
    assert_eq!((a.invocations, a.server_ns), (2, 4_000_000));
    assert_eq!((b.invocations, b.server_ns), (1, 2_000_000));
    let merged = joined(&server_slices(&outcome));
    assert_eq!(
        merged,
        vec![
            (0, 0, 3_000_000),
            (1, 3_000_000, 5_000_000),
            (0, 5_000_000, 6_000_000)
        ]
    );
    // a's job ends when front replies, at 6 ms.
    assert_eq!(a.response.max_ns, 6_000_000);
}

const PERIOD_US: u64 = 5_000;

/// A caller's script: a loop of runs, sleeps and calls to one of two servers.
fn caller_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..600).prop_map(|d| Step::Run(Execution::Fixed(Duration::from_micros(d)))),
        (1u64..3_000).prop_map(|d| Step::SleepFor(Duration::from_micros(d))),
        (0usize..2).prop_map(|server| Step::Invoke {
            server,
            operation: None
        }),
    ]
}

fn callers() -> impl Strategy<Value = Scenario> {
    let caller = (
        1u8..20,
        100u64..2_000,
        proptest::collection::vec(caller_step(), 1..5),
    );
    let gate = prop::sample::select(vec![
        GateProtocol::FifoIpc,
        GateProtocol::PrioIpc,
        GateProtocol::McIpc,
    ]);
    (
        proptest::collection::vec(caller, 1..6),
        gate,
        (50u64..1_500, 50u64..3_000),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(|(tasks, gate, (op0, op1), seed, inherit)| Scenario {
            seed,
            servers: vec![
                ServerSpec {
                    pruned_to_background: false,
                    name: "s0".into(),
                    gate,
                    body: vec![ServerStep::Run(Execution::Fixed(Duration::from_micros(
                        op0,
                    )))],
                    // An mc-ipc gate always inherits (validation sets it).
                    bandwidth_inheritance: inherit || gate == GateProtocol::McIpc,
                    priority: None,
                    clients: Vec::new(),
                },
                ServerSpec {
                    pruned_to_background: false,
                    name: "s1".into(),
                    gate: GateProtocol::FifoIpc,
                    body: vec![ServerStep::Run(Execution::Uniform {
                        min: Duration::from_micros(op1 / 2 + 1),
                        max: Duration::from_micros(op1),
                    })],
                    bandwidth_inheritance: inherit,
                    priority: None,
                    clients: Vec::new(),
                },
            ],
            ..Scenario::new(
                "callers",
                PolicyKind::Spr,
                1,
                Duration::from_millis(60),
                tasks
                    .into_iter()
                    .enumerate()
                    .map(|(i, (priority, budget, mut body))| {
                        // A loop for ever must let time pass.
                        body.push(Step::Run(Execution::Fixed(Duration::from_micros(10))));
                        TaskSpec {
                            name: format!("t{i}"),
                            core: 0,
                            priority: Some(Priority(priority)),
                            reservation: Some(Reservation::new(
                                Duration::from_micros(budget),
                                Duration::from_micros(PERIOD_US),
                            )),
                            deadline: None,
                            behaviour: Behaviour::Script {
                                offset: Duration::ZERO,
                                steps: vec![Step::Loop { count: None, body }],
                            },
                        }
                    })
                    .collect(),
            )
        })
}

/// Fails if `slices` run more than `limit` in a window of length `period` starting at any
/// slice start (where the maximum is reached), or, `aligned`, in any period `[kp, (k+1)p)`.
fn check_budget(
    slices: &[(u64, u64)],
    limit: u64,
    period: u64,
    aligned: bool,
) -> Result<(), String> {
    for &(start, _) in slices {
        let from = if aligned {
            start - start % period
        } else {
            start
        };
        let to = from + period;
        let used: u64 = slices
            .iter()
            .map(|&(a, z)| z.min(to).saturating_sub(a.max(from)))
            .sum();
        if used > limit {
            return Err(format!("ran {used} > {limit} in [{from}, {to})"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the callers do, SPR's invariants hold after every call (blocking at a gate
    /// and waking for the operation included), and a caller's context runs at most its
    /// budget, its own code and servers' operations together: in every period under the
    /// deferrable rule; under the sporadic rule in any window of a period for the one task at
    /// the top priority (a task kept waiting by more important work may run its backlog, as
    /// `bulwark-core`'s reservation properties state).
    #[test]
    fn donated_contexts_keep_their_budgets(mut scenario in callers(), deferrable in any::<bool>()) {
        if deferrable {
            scenario.policy = PolicyKind::SprDeferrable;
        }
        let outcome = common::run_checked(&scenario, &Options { record_trace: true, ..Options::default() });
        let trace = outcome.trace.as_ref().expect("recorded");
        let top = scenario.tasks.iter().filter_map(|t| t.priority).max();
        let at_top = scenario.tasks.iter().filter(|t| t.priority == top).count();
        for (index, task) in scenario.tasks.iter().enumerate() {
            let slices: Vec<(u64, u64, SliceKind)> = trace
                .slices
                .iter()
                .filter(|s| s.task.is_some_and(|t| t.index() == index))
                .filter(|s| matches!(s.kind, SliceKind::Task | SliceKind::Server))
                .map(|s| (s.start.as_nanos(), s.end.as_nanos(), s.kind))
                .collect();
            let server: u64 = slices
                .iter()
                .filter(|s| s.2 == SliceKind::Server)
                .map(|s| s.1 - s.0)
                .sum();
            prop_assert_eq!(server, outcome.tasks[index].server_ns);
            if !deferrable && (task.priority != top || at_top > 1) {
                continue;
            }
            let reservation = task.reservation.expect("reserved");
            let spans: Vec<(u64, u64)> = slices.iter().map(|s| (s.0, s.1)).collect();
            let checked = check_budget(
                &spans,
                reservation.budget.as_nanos(),
                reservation.period.as_nanos(),
                deferrable,
            );
            prop_assert!(checked.is_ok(), "{}: {:?}", task.name, checked);
        }
    }

    /// Under every per-core policy but VBS (whose tasks run actions), random callers of both
    /// servers, with and without inheritance, never make a policy refuse a call or break an
    /// invariant (blocking at a gate, waking for the operation, lending a context), and every
    /// caller's server time in the trace is what its metrics say.
    #[test]
    fn every_policy_takes_gate_blocking_and_lending(
        mut scenario in callers(),
        policy in prop::sample::select(per_core_policies_but_vbs()),
    ) {
        scenario.policy = policy;
        if !policy.reports_budget_notices() && scenario.servers[0].gate == GateProtocol::McIpc {
            // Validation refuses an mc-ipc gate whose callers' budgets report no exhaustion.
            scenario.servers[0].gate = GateProtocol::FifoIpc;
        }
        // On a fixed-priority core a server may run at its callers' ceiling.
        if policy == PolicyKind::FixedPriority && !scenario.servers[1].bandwidth_inheritance {
            scenario.servers[1].priority = Some(Priority(30));
        }
        for task in &mut scenario.tasks {
            if !policy.has_priorities() {
                task.priority = None;
            }
            if matches!(policy, PolicyKind::FixedPriority | PolicyKind::Edf) {
                task.reservation = None;
            }
            task.deadline = Some(Duration::from_micros(PERIOD_US));
        }
        let outcome = common::run_checked(&scenario, &Options { record_trace: true, ..Options::default() });
        let trace = outcome.trace.as_ref().expect("recorded");
        for (index, metrics) in outcome.tasks.iter().enumerate() {
            let server = trace.time_in(TaskId(index as u32), SliceKind::Server, Instant::ZERO, Instant::NEVER);
            prop_assert_eq!(server, metrics.server_ns);
            prop_assert!(metrics.server_ns <= metrics.executed_ns);
        }
    }

    /// Callers of one server spread over two SPR cores, with and without inheritance, at
    /// every gate: no policy refuses a call or breaks an invariant, and the operation never
    /// runs on both cores at once (a lender on the other core spins meanwhile).
    #[test]
    fn one_server_runs_on_one_core_at_a_time(mut scenario in callers()) {
        scenario.cores = 2;
        for (index, task) in scenario.tasks.iter_mut().enumerate() {
            task.core = (index % 2) as u16;
            if let Behaviour::Script { steps, .. } = &mut task.behaviour {
                to_first_server(steps);
            }
        }
        let outcome = common::run_checked(&scenario, &Options { record_trace: true, ..Options::default() });
        let trace = outcome.trace.as_ref().expect("recorded");
        let on = |core: u16| -> Vec<(u64, u64)> {
            trace
                .slices
                .iter()
                .filter(|s| s.kind == SliceKind::Server && s.core == core)
                .map(|s| (s.start.as_nanos(), s.end.as_nanos()))
                .collect()
        };
        for (a, b) in on(0) {
            for (c, d) in on(1) {
                prop_assert!(b <= c || d <= a, "[{a}, {b}) on core 0 and [{c}, {d}) on core 1");
            }
        }
        for task in &outcome.tasks {
            prop_assert!(task.request_drain.sum_ns <= u128::from(task.executed_ns), "{}", task.name);
        }
    }
}

/// Every policy a scenario can name but VBS, whose tasks run actions.
fn per_core_policies_but_vbs() -> Vec<PolicyKind> {
    PolicyKind::ALL
        .iter()
        .map(|&(policy, _)| policy)
        .filter(|&policy| policy != PolicyKind::Vbs)
        .collect()
}

/// Every `invoke` in `steps` calls server 0.
fn to_first_server(steps: &mut [Step]) {
    for step in steps {
        match step {
            Step::Invoke { server, .. } => *server = 0,
            Step::Loop { body, .. } => to_first_server(body),
            _ => {}
        }
    }
}

/// Two rogues and a victim share a 2 ms operation on one SPR core, zero costs, every budget
/// per 20 ms: `rogue1` (priority 9, budget 0.5 ms) and `rogue2` (8, 0.5 ms) invoke at 0, the
/// victim (5, budget 10 ms) at 0.1 ms, when it wakes; every waiting caller lends its budget.
///
/// - 0..0.5: `rogue1`'s request is served on its context, until its budget runs out;
/// - 0.5..1: `rogue2` invokes, waits, and its context runs `rogue1`'s request until its own
///   budget runs out;
/// - 1..2: the victim invokes, waits, and runs the last 1 ms of `rogue1`'s request; the reply
///   at 2 hands the server to the next request.
///
/// With an mc-ipc gate, `rogue2`'s exhaustion at 1 aborted its waiting request (pruned:
/// `mc_abort`, Fig. 1), while `rogue1`'s, in service, was left to complete. So at 2 the
/// victim's own request is next: served 2..4, a 1 ms wait, and its context drains 1 + 2 = 3 ms,
/// within Theorem 1's (1 + 2 m K) L = 3 * 2 ms for one core and one cluster. `rogue2` drained
/// 0.5 ms before it was pruned; its budget is back at 20 ms, after the run, so it is never
/// reissued. With a PRIO-IPC gate nothing is aborted: `rogue2` (priority 8) is next at 2, and
/// the victim's context serves it, 2..4, before its own request, 4..6: a 3 ms wait and a 5 ms
/// drain.
fn rogues_and_victim(gate: &str) -> Outcome {
    rogues_and_victim_under("spr", gate, "10ms", "20ms")
}

fn rogues_and_victim_under(policy: &str, gate: &str, duration: &str, sleep: &str) -> Outcome {
    run(&format!(
        r#"
name = "aborted"
policy = "{policy}"
duration = "{duration}"

[[server]]
name = "keys"
gate = "{gate}"
operation = "2ms"
bandwidth-inheritance = true

[[task]]
name = "rogue1"
priority = 9
reservation = {{ budget = "500us", period = "20ms" }}
script = [{{ invoke = "keys" }}, {{ sleep-until = "{sleep}" }}]

[[task]]
name = "rogue2"
priority = 8
reservation = {{ budget = "500us", period = "20ms" }}
script = [{{ invoke = "keys" }}, {{ sleep-until = "{sleep}" }}]

[[task]]
name = "victim"
priority = 5
reservation = {{ budget = "10ms", period = "20ms" }}
script = [{{ sleep-until = "100us" }}, {{ invoke = "keys" }}, {{ sleep-until = "{sleep}" }}]
"#
    ))
}

fn drain_of(outcome: &Outcome, name: &str) -> (u64, u64, u64) {
    let task = outcome.tasks.iter().find(|t| t.name == name).expect(name);
    let drain = &task.request_drain;
    (drain.count, drain.max_ns, task.requests_aborted)
}

#[test]
fn an_mc_ipc_gate_prunes_a_request_whose_budget_ran_out() {
    let mc_ipc = rogues_and_victim("mc-ipc");
    assert_eq!(wait_of(&mc_ipc, "victim"), (1, 1_000_000));
    assert_eq!(drain_of(&mc_ipc, "victim"), (1, 3_000_000, 0));
    assert_eq!(drain_of(&mc_ipc, "rogue2"), (1, 500_000, 1));
    // In service when its budget ran out: completed on the others' budgets, not aborted.
    assert_eq!(drain_of(&mc_ipc, "rogue1"), (1, 500_000, 0));
    let served: Vec<(u32, u64, u64)> = joined(&server_slices(&mc_ipc));
    assert_eq!(
        served,
        [
            (0, 0, 500_000),
            (1, 500_000, 1_000_000),
            (2, 1_000_000, 4_000_000)
        ]
    );

    let prio = rogues_and_victim("prio-ipc");
    assert_eq!(wait_of(&prio, "victim"), (1, 3_000_000));
    assert_eq!(drain_of(&prio, "victim"), (1, 5_000_000, 0));
    assert_eq!(drain_of(&prio, "rogue2").2, 0, "PRIO-IPC aborts nothing");
}

/// The same system run to 30 ms, every task sleeping past the run once its request is
/// answered. `rogue2`'s budget comes back at 20 ms (SPR: the 0.5 ms it used from its
/// activation at 0 return at 0 + 20), and its pruned request is issued again: the server is
/// idle, so it is served at once, 19.5 ms after the invoke at 0.5. Its context runs it
/// 20..20.5, until the budget is out again; in service now, the request is left to complete
/// and nobody lends, so the run ends with it unanswered and one abort counted.
#[test]
fn a_pruned_request_is_reissued_when_its_budget_is_back() {
    let outcome = rogues_and_victim_under("spr", "mc-ipc", "30ms", "40ms");
    assert_eq!(wait_of(&outcome, "rogue2"), (1, 19_500_000));
    assert_eq!(drain_of(&outcome, "rogue2"), (1, 500_000, 1));
    let served = joined(&server_slices(&outcome));
    assert_eq!(served.last(), Some(&(1, 20_000_000, 20_500_000)));
    assert_eq!(served.len(), 4);
}

/// The first 10 ms of the same system under the eager sporadic and deferrable servers: no
/// budget comes back before 20 ms under either rule, so the schedule, the abort and the
/// victim's 1 ms wait and 3 ms drain are SPR's.
#[test]
fn the_eager_servers_notice_the_exhaustion_as_spr_does() {
    for policy in ["sporadic-server", "deferrable-server"] {
        let outcome = rogues_and_victim_under(policy, "mc-ipc", "10ms", "20ms");
        assert_eq!(wait_of(&outcome, "victim"), (1, 1_000_000), "{policy}");
        assert_eq!(drain_of(&outcome, "victim"), (1, 3_000_000, 0), "{policy}");
        assert_eq!(drain_of(&outcome, "rogue2"), (1, 500_000, 1), "{policy}");
    }
}

/// VBS processes calling an mc-ipc server (L = 2 ms): two rogues whose limit, 0.5 ms per
/// 10 ms, cannot pay for one operation, and a victim (8 ms per 20 ms) that calls once per
/// 20 ms. VBS reports a limit run out (step 1's limit case) and its next period instance, so
/// the gate aborts a rogue's waiting request and reissues it; the victim's context never pays
/// more than Theorem 1's 3 L per request. Behind a FIFO-IPC gate nothing is aborted and the
/// victim pays more.
#[test]
fn vbs_processes_call_an_mc_ipc_server() {
    let source = |gate: &str| {
        format!(
            r#"
name = "vbs-mc-ipc"
policy = "vbs"
duration = "100ms"

[vbs]
strategy = "early"
plugin = "tree"
quantum = "10us"

[[server]]
name = "keys"
gate = "{gate}"
operation = "2ms"
bandwidth-inheritance = true

[[task]]
name = "rogue1"
cap = "1/10"
script = [{{ action = "100us", limit = "500us", period = "10ms" }}, {{ loop = "forever", body = [{{ invoke = "keys" }}] }}]

[[task]]
name = "rogue2"
cap = "1/10"
script = [{{ action = "100us", limit = "500us", period = "10ms" }}, {{ loop = "forever", body = [{{ invoke = "keys" }}] }}]

[[task]]
name = "victim"
cap = "1/2"
script = [{{ action = "100us", limit = "8ms", period = "20ms" }}, {{ loop = "forever", body = [{{ invoke = "keys" }}, {{ sleep-until-aligned = "20ms" }}] }}]
"#
        )
    };
    let mc_ipc = run(&source("mc-ipc"));
    let fifo = run(&source("fifo-ipc"));
    let aborted =
        |outcome: &Outcome| -> u64 { outcome.tasks.iter().map(|t| t.requests_aborted).sum() };
    let victim_drain = |outcome: &Outcome| drain_of(outcome, "victim").1;
    assert!(aborted(&mc_ipc) > 0);
    assert_eq!(aborted(&fifo), 0);
    assert!(
        drain_of(&mc_ipc, "victim").0 >= 4,
        "the victim's requests are answered"
    );
    assert!(victim_drain(&mc_ipc) <= 6_000_000);
    assert!(victim_drain(&fifo) > victim_drain(&mc_ipc));
}

/// Callers on two SPR cores lend to one mc-ipc server (L = 2 ms, zero costs; each core a
/// cluster of one): `rogue` on core 0 (budget 0.5 ms per 20 ms) invokes at 0, the victim on
/// core 1 (10 ms per 20 ms) at 0.1 ms.
///
/// - 0..0.5: the rogue's context runs its request on core 0, until its budget runs out;
/// - 0.1..0.5: the victim waits and lends, but the operation runs on core 0: its context
///   spins on core 1, its budget draining (assumption A2);
/// - 0.5: core 0 idles, so core 1 takes an interrupt and the victim's context runs the rest of
///   the rogue's request, 0.5..2, then its own, 2..4.
///
/// So the victim waits 1.9 ms and drains 0.4 + 1.5 + 2 = 3.9 ms, within Theorem 1's
/// (1 + 2 m K) L = 5 L = 10 ms for two clusters of one core; it runs operations for 3.5 ms.
#[test]
fn a_lender_on_another_core_spins_then_takes_the_operation_over() {
    let outcome = run(r#"
name = "two-core-lending"
policy = "spr"
cores = 2
duration = "10ms"

[[server]]
name = "keys"
gate = "mc-ipc"
operation = "2ms"

[[task]]
name = "rogue"
priority = 9
reservation = { budget = "500us", period = "20ms" }
script = [{ invoke = "keys" }, { sleep-until = "40ms" }]

[[task]]
name = "victim"
core = 1
priority = 5
reservation = { budget = "10ms", period = "20ms" }
script = [{ sleep-until = "100us" }, { invoke = "keys" }, { sleep-until = "40ms" }]
"#);
    assert_eq!(wait_of(&outcome, "victim"), (1, 1_900_000));
    assert_eq!(drain_of(&outcome, "victim"), (1, 3_900_000, 0));
    assert_eq!(drain_of(&outcome, "rogue"), (1, 500_000, 0));
    let victim = outcome
        .tasks
        .iter()
        .find(|t| t.name == "victim")
        .expect("victim");
    assert_eq!(victim.server_ns, 3_500_000);
    let served = joined(&server_slices(&outcome));
    assert_eq!(served, [(0, 0, 500_000), (1, 500_000, 4_000_000)]);
    let trace = outcome.trace.as_ref().expect("recorded");
    let spins: Vec<(u16, u64, u64)> = trace
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Spin)
        .map(|s| (s.core, s.start.as_nanos(), s.end.as_nanos()))
        .collect();
    assert_eq!(spins, [(1, 100_000, 500_000)]);
}

/// "Ties", 1, for an inter-processor interrupt: one raised for the very instant a core's
/// kernel returns is taken before the chosen task runs. 1 GHz, a scheduler call of 1 us,
/// no other cost. `x` (core 0) invokes the 2 ms operation at 0: its system call runs
/// [0, 1 us), the operation [1 us, 2.001 ms). `y` (core 1) runs 0.5 ms and invokes: the
/// server is busy, so it blocks. `r` (core 1, priority 9) is released at 2 ms: core 1's
/// kernel runs [2, 2.001 ms) and chooses it. At 2.001 ms `x`'s reply hands the server to
/// `y`, whose core takes an interrupt then, exactly as its kernel returns to `r`: the
/// interrupt comes first, so `r` has not started: its first start is 2.002 ms, after the
/// interrupt's 1 us (it used to be dispatched at 2.001 ms and interrupted at once).
#[test]
fn an_interrupt_at_a_kernel_return_is_taken_before_the_task_runs() {
    let outcome = run(r#"
name = "interrupt-at-return"
policy = "fixed-priority"
cores = 2
duration = "5ms"

[cost]
clock = "1GHz"
scheduler = 1000

[[server]]
name = "store"
gate = "fifo-ipc"
operation = "2ms"

[[task]]
name = "x"
core = 0
priority = 1
script = [{ invoke = "store" }, { sleep-until = "5ms" }]

[[task]]
name = "y"
core = 1
priority = 1
script = [{ run = "500us" }, { invoke = "store" }, { sleep-until = "5ms" }]

[[task]]
name = "r"
core = 1
priority = 9
period = "10ms"
offset = "2ms"
execution = "1ms"
"#);
    let r = outcome.tasks.iter().find(|t| t.name == "r").expect("r");
    assert_eq!(r.preemptions, 0, "r ran nothing before the interrupt");
    let jobs = outcome.jobs.as_ref().expect("jobs");
    let job = jobs.iter().find(|j| j.task == TaskId(2)).expect("r's job");
    assert_eq!(job.first_start, Some(Instant::from_nanos(2_002_000)));
    assert_eq!(job.completion, Some(Instant::from_nanos(3_002_000)));
}
