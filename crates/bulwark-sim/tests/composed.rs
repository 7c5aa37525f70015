//! Random composed scenarios: every per-core policy, a different one per core, tasks
//! that call servers (one with bandwidth inheritance, called from every core, behind an
//! mc-ipc gate when every core's policy reports budget notices, one without,
//! called from every core, and one whose body calls that one), allocate in reclamation groups, terminate each other, flush the
//! cache, all with random kernel costs. Whatever the mix, the machine never fails: no policy
//! refuses a call or breaks an invariant after any call, the same scenario and seed give the
//! same trace, and what the records say adds up (each task's server slices are its
//! `server_ns`, within its execution). A task of a VBS core runs its steps within an action
//! it switches to at the start of each round, inside the cap its core's processes share.

use bulwark_core::ipc::GateProtocol;
use bulwark_core::reclaim::ObjectKind;
use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::{Options, SliceKind, VbsOptions};
use bulwark_spec::{
    Behaviour, CostModel, Execution, GroupSpec, PolicyKind, ReleaseStrategy, Reservation, Scenario,
    ServerSpec, ServerStep, Step, TaskSpec, VbsPlugin, VbsSpec,
};
use proptest::prelude::*;

mod common;

/// How many policies a core may draw: every one.
const POLICIES: usize = PolicyKind::ALL.len();
/// A VBS action's period, and the resources' period of every other policy's reservation.
const PERIOD_US: u64 = 5_000;

/// What a random step may be; a `Terminate` and an `Invoke` are resolved against the task's
/// core once the tasks are known.
#[derive(Clone, Debug)]
enum Drawn {
    Run(u64),
    Sleep(u64),
    Flush,
    Allocate(u64),
    Invoke(usize),
    Terminate(usize, bool),
}

fn drawn() -> impl Strategy<Value = Drawn> {
    prop_oneof![
        4 => (1u64..800).prop_map(Drawn::Run),
        3 => (1u64..3_000).prop_map(Drawn::Sleep),
        1 => Just(Drawn::Flush),
        1 => (1u64..2_000).prop_map(Drawn::Allocate),
        3 => (0usize..6).prop_map(Drawn::Invoke),
        1 => (0usize..8, any::<bool>()).prop_map(|(t, s)| Drawn::Terminate(t, s)),
    ]
}

#[derive(Clone, Debug)]
struct Plan {
    cores: u16,
    policies: Vec<usize>,
    tasks: Vec<(u16, u8, u64, Vec<Drawn>, bool)>,
    operations: (u64, u64),
    prio_gate: bool,
    costs: [u64; 5],
    seed: u64,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        1u16..4,
        proptest::collection::vec(0usize..POLICIES, 3),
        proptest::collection::vec(
            (
                0u16..3,
                1u8..30,
                200u64..3_000,
                proptest::collection::vec(drawn(), 1..6),
                any::<bool>(),
            ),
            1..8,
        ),
        (50u64..1_500, 50u64..1_500),
        any::<bool>(),
        proptest::array::uniform5(0u64..2_000),
        any::<u64>(),
    )
        .prop_map(
            |(cores, policies, tasks, operations, prio_gate, costs, seed)| Plan {
                cores,
                policies,
                tasks,
                operations,
                prio_gate,
                costs,
                seed,
            },
        )
}

/// The scenario a plan describes, made valid as validation would demand: every task has
/// what its core's policy needs, a terminate names another task of its core outside its
/// group (with `step` only for a target in a group).
fn scenario(plan: &Plan) -> Scenario {
    let policy_of = |core: u16| PolicyKind::ALL[plan.policies[core as usize]].0;
    let core_of: Vec<u16> = plan.tasks.iter().map(|t| t.0 % plan.cores).collect();
    // The processes of a VBS core share its bandwidth equally: each a cap of 1/k, and
    // actions whose limit per period stays within it (VBS paper, Eq. 2).
    let vbs_share = |core: u16| {
        let sharing = core_of.iter().filter(|&&c| c == core).count() as u64;
        (policy_of(core) == PolicyKind::Vbs).then_some(sharing.max(1))
    };
    // Odd tasks are in the one group; a terminate from a group member targets a non-member.
    let in_group = |task: usize| task % 2 == 1;
    let tasks = plan
        .tasks
        .iter()
        .enumerate()
        .map(|(index, (_, priority, budget, steps, _))| {
            let core = core_of[index];
            let policy = policy_of(core);
            let mut body: Vec<Step> = steps
                .iter()
                .filter_map(|step| match *step {
                    Drawn::Run(us) => Some(Step::Run(Execution::Fixed(Duration::from_micros(us)))),
                    Drawn::Sleep(us) => Some(Step::SleepFor(Duration::from_micros(us))),
                    Drawn::Flush => Some(Step::FlushCache),
                    Drawn::Allocate(count) => Some(Step::Allocate {
                        count,
                        object: ObjectKind::Semaphore,
                    }),
                    // Every core may call all three servers.
                    Drawn::Invoke(pick) => Some(Step::Invoke {
                        server: pick % 3,
                        operation: None,
                    }),
                    Drawn::Terminate(pick, step) => {
                        let target = (0..plan.tasks.len())
                            .cycle()
                            .skip(pick)
                            .take(plan.tasks.len())
                            .find(|&t| {
                                t != index
                                    && core_of[t] == core
                                    && !(in_group(t) && in_group(index))
                            })?;
                        Some(Step::Terminate {
                            task: format!("t{target}"),
                            step: (step && in_group(target)).then(|| Duration::from_micros(20)),
                        })
                    }
                })
                .collect();
            body.push(Step::Run(Execution::Fixed(Duration::from_micros(10))));
            if let Some(sharing) = vbs_share(core) {
                // The round runs in an action: its load first, then the drawn steps, on a
                // limit within the process's cap (whole 10 us quanta).
                let limit = (*budget).min(PERIOD_US / sharing) / 10 * 10;
                body.insert(
                    0,
                    Step::Action {
                        load: Duration::from_micros(limit / 2),
                        limit: Duration::from_micros(limit.max(10)),
                        period: Duration::from_micros(PERIOD_US),
                    },
                );
            }
            TaskSpec {
                name: format!("t{index}"),
                core,
                priority: policy.has_priorities().then_some(Priority(*priority)),
                reservation: (!matches!(
                    policy,
                    PolicyKind::FixedPriority | PolicyKind::Edf | PolicyKind::Vbs
                ))
                .then(|| {
                    Reservation::new(
                        Duration::from_micros(*budget),
                        Duration::from_micros(PERIOD_US),
                    )
                }),
                deadline: Some(Duration::from_micros(PERIOD_US)),
                behaviour: Behaviour::Script {
                    offset: Duration::ZERO,
                    steps: vec![Step::Loop { count: None, body }],
                },
            }
        })
        .collect::<Vec<_>>();
    let server = |name: &str, inherits: bool, gate: GateProtocol, operation: u64| ServerSpec {
        pruned_to_background: false,
        name: name.into(),
        gate,
        body: vec![ServerStep::Run(Execution::Fixed(Duration::from_micros(
            operation,
        )))],
        bandwidth_inheritance: inherits,
        priority: None,
        clients: Vec::new(),
    };
    // The inheriting server is behind an mc-ipc gate when every core's policy reports budget
    // notices (every other seed), so aborts and reissues mix with the rest.
    let noticing = (0..plan.cores).all(|core| policy_of(core).reports_budget_notices());
    let first_gate = if noticing && plan.seed.is_multiple_of(2) {
        GateProtocol::McIpc
    } else {
        GateProtocol::FifoIpc
    };
    let second_gate = if plan.prio_gate {
        GateProtocol::PrioIpc
    } else {
        GateProtocol::FifoIpc
    };
    let vbs = (0..plan.cores)
        .any(|core| vbs_share(core).is_some())
        .then(|| VbsSpec {
            strategy: ReleaseStrategy::Early,
            plugin: VbsPlugin::Tree,
            // Periods of 5 ms within a quarter of the scheduler's horizon (2^14 quanta).
            quantum: Duration::from_micros(10),
            resolution_bits: 14,
            caps: core_of
                .iter()
                .map(|&core| vbs_share(core).map(|sharing| (1, sharing)))
                .collect(),
        });
    Scenario {
        seed: plan.seed,
        vbs,
        core_policies: (1..plan.cores)
            .map(|core| (core, policy_of(core)))
            .collect(),
        cost: CostModel {
            timer_interrupt: plan.costs[0],
            scheduler: plan.costs[1],
            context_switch: plan.costs[2],
            cache_refill: plan.costs[3],
            cache_flush: plan.costs[4],
            reclaim_per_unit: 20,
            ..CostModel::FREE
        },
        groups: vec![GroupSpec {
            name: "group".into(),
            quota: Duration::from_micros(500),
            members: (0..tasks.len()).filter(|&t| in_group(t)).collect(),
        }],
        servers: vec![
            server("inherits", true, first_gate, plan.operations.0),
            server("shared", false, second_gate, plan.operations.1),
            ServerSpec {
                pruned_to_background: false,
                body: vec![
                    ServerStep::Run(Execution::Fixed(Duration::from_micros(plan.operations.0))),
                    ServerStep::Invoke(1),
                    ServerStep::Run(Execution::Fixed(Duration::from_micros(20))),
                ],
                ..server("front", false, GateProtocol::FifoIpc, 0)
            },
        ],
        ..Scenario::new(
            "composed",
            policy_of(0),
            plan.cores,
            Duration::from_millis(40),
            tasks,
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn composed_scenarios_run_and_add_up(plan in plan()) {
        let scenario = scenario(&plan);
        let options = Options { record_trace: true, record_jobs: true, ..Options::default() };
        let checked = VbsOptions { check_invariants: true, ..VbsOptions::default() };
        let first = bulwark_sim::run_vbs(&scenario, &options, checked).expect("runs");
        let again = bulwark_sim::run_vbs(&scenario, &options, checked).expect("runs again");
        prop_assert_eq!(&first.outcome, &again.outcome, "same scenario and seed, same run");
        let outcome = &first.outcome;
        let trace = outcome.trace.as_ref().expect("recorded");
        for (index, task) in outcome.tasks.iter().enumerate() {
            prop_assert!(task.server_ns <= task.executed_ns, "{}", task.name);
            let server = trace.time_in(TaskId(index as u32), SliceKind::Server, Instant::ZERO, Instant::NEVER);
            prop_assert_eq!(server, task.server_ns, "{}", &task.name);
            // A request's drain is server time of its context; only an mc-ipc gate aborts.
            prop_assert!(task.request_drain.sum_ns <= u128::from(task.executed_ns), "{}", task.name);
            if scenario.servers[0].gate != GateProtocol::McIpc {
                prop_assert_eq!(task.requests_aborted, 0, "{}", &task.name);
            }
        }
    }
}

/// `scenario` as a platform can step it: no kernel costs, no `allocate` or `terminate` steps
/// (their time is the simulator's reclamation model).
fn steppable(mut scenario: Scenario) -> Scenario {
    fn keep(steps: &mut Vec<Step>) {
        steps.retain(|step| !matches!(step, Step::Allocate { .. } | Step::Terminate { .. }));
        for step in steps.iter_mut() {
            if let Step::Loop { body, .. } = step {
                keep(body);
            }
        }
    }
    scenario.cost = CostModel::FREE;
    for task in &mut scenario.tasks {
        if let Behaviour::Script { steps, .. } = &mut task.behaviour {
            keep(steps);
        }
    }
    scenario
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every per-core policy, servers and gates, stepped by a platform that reports each
    /// stretch done the instant its length has run: the simulated run's outcome, job by job.
    #[test]
    fn reported_stretches_give_the_simulated_outcome(plan in plan()) {
        let scenario = steppable(scenario(&plan));
        let options = Options { record_jobs: true, ..Options::default() };
        let simulated = bulwark_sim::run(&scenario, &options).expect("runs");
        prop_assert_eq!(common::run_reported(&scenario, &options), simulated);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever a platform does (timers taken late, stretches reported early or long after
    /// they ended, time passing in arbitrary amounts), the stepped machine never fails or
    /// panics, ends at the horizon, and its records add up: no task executes more than the
    /// run's length, completes more jobs than were released, or serves more than it executed.
    #[test]
    fn any_platform_behaviour_is_taken(
        plan in plan(),
        moves in common::platform_moves(),
    ) {
        let scenario = steppable(scenario(&plan));
        let outcome = common::run_jittered(&scenario, &moves);
        let length = scenario.duration.as_nanos();
        for task in &outcome.tasks {
            prop_assert!(task.executed_ns <= length, "{}", task.name);
            prop_assert!(task.completed <= task.jobs, "{}", task.name);
            prop_assert!(task.server_ns <= task.executed_ns, "{}", task.name);
        }
        let busy: u64 = outcome.cores.iter().map(|core| core.busy_ns).sum();
        prop_assert!(busy <= length * u64::from(scenario.cores));
    }
}
