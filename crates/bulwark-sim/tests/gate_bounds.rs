//! What a request drains at a server's gate, on the scenario machine, beyond Theorem 1 under
//! MC-IPC (a property of `cluster_servers.rs`): FIFO-IPC's own bound of `n L_q` (the MC-IPC
//! paper, section VI-B) on random clustered systems, and a flood of clients that pushes a
//! FIFO-IPC victim past Theorem 1's `(1 + 2 m_k K) L_q` while MC-IPC and PRIO-IPC keep it
//! within. Also: the recorded trace draws exactly the time each task is charged on such
//! systems, and a platform with real threads is refused a scenario whose kernel time or
//! reclamation steps are the simulator's model.

use bulwark_core::ipc::GateProtocol;
use bulwark_core::reservation::clustered::Replenishment;
use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::trace::SliceKind;
use bulwark_sim::{InvocationRecord, Kept, Machine, Options, Outcome, SimError};
use bulwark_spec::{
    Behaviour, ClusterMember, ClusterSpec, Execution, MemberKind, PolicyKind, Scenario, ServerSpec,
    ServerStep, SporadicOrder, Step, TaskSpec,
};
use proptest::prelude::*;

mod common;
use common::ms;

/// The longest operation, `L_q`, in ms.
const LONGEST: u64 = 3;

/// A client, in ms: its reservation `(e, p)` (unused if best-effort), of high criticality
/// with `e^L` if `low_budget` (and sporadic), replenished by `kind` (0 sporadic, 1 constant bandwidth under
/// EDF or SPR under fixed priority); its job computes `before`, invokes the server for
/// `operation`, computes `after` and sleeps until its next release, or, a flooder, invokes
/// again at once.
#[derive(Clone, Copy, Debug)]
struct Client {
    best_effort: bool,
    budget: u64,
    server_period: u64,
    low_budget: Option<u64>,
    kind: u8,
    before: u64,
    operation: u64,
    after: u64,
    period: u64,
    offset: u64,
    priority: u8,
    flooder: bool,
}

fn client() -> impl Strategy<Value = Client> {
    (
        (
            1u64..=4,
            4u64..=12,
            proptest::option::weighted(0.2, 1u64..=4),
        ),
        (0u64..=2, 1u64..=LONGEST, 0u64..=2),
        (3u64..=15, 0u64..=6, 1u8..=4),
        (
            0u8..=1,
            proptest::bool::weighted(0.2),
            proptest::bool::weighted(0.1),
        ),
    )
        .prop_map(
            |(
                (budget, server_period, low_budget),
                (before, operation, after),
                (period, offset, priority),
                (kind, best_effort, flooder),
            )| {
                let budget = budget.min(server_period);
                Client {
                    best_effort,
                    budget,
                    server_period,
                    low_budget: low_budget.map(|low| low.min(budget)),
                    kind,
                    before,
                    operation,
                    after,
                    period,
                    offset,
                    priority,
                    flooder,
                }
            },
        )
}

/// One or two clusters of one or two cores, by fixed priority or EDF, each of one to three
/// clients, and up to two clients on an SPR core of their own; all clients of one server.
#[derive(Clone, Debug)]
struct System {
    clusters: Vec<(u16, Vec<Client>)>,
    core_clients: Vec<Client>,
    edf: bool,
}

fn system() -> impl Strategy<Value = System> {
    let cluster = (1u16..=2, proptest::collection::vec(client(), 1..=3));
    (
        proptest::collection::vec(cluster, 1..=2),
        proptest::collection::vec(client(), 0..=2),
        any::<bool>(),
    )
        .prop_map(|(clusters, core_clients, edf)| System {
            clusters,
            core_clients,
            edf,
        })
}

/// A client's task on `core`: its script loops forever; a cluster member's kind.
fn task(name: String, core: u16, client: &Client, edf: bool) -> (TaskSpec, MemberKind) {
    let mut body = Vec::new();
    if client.before > 0 {
        body.push(Step::Run(Execution::Fixed(ms(client.before))));
    }
    body.push(Step::Invoke {
        server: 0,
        operation: Some(Execution::Fixed(ms(client.operation))),
    });
    if client.after > 0 {
        body.push(Step::Run(Execution::Fixed(ms(client.after))));
    }
    if !client.flooder {
        body.push(Step::SleepUntilNextRelease(ms(client.period)));
    }
    let (reservation, priority, kind) = if client.best_effort {
        (None, None, MemberKind::BestEffort)
    } else {
        let replenishment = match (client.kind, edf) {
            (0, _) => Replenishment::Sporadic,
            (_, true) => Replenishment::ConstantBandwidth,
            (_, false) => Replenishment::Spr {
                slots: u16::from(client.priority),
            },
        };
        // Vestal's high criticality for plain sporadic reservations only.
        let low_budget = (replenishment == Replenishment::Sporadic)
            .then_some(client.low_budget)
            .flatten();
        let kind = MemberKind::Sporadic {
            replenishment,
            low_budget: low_budget.map(ms),
        };
        let reservation = Reservation::new(ms(client.budget), ms(client.server_period));
        let priority = (!edf).then_some(Priority(client.priority));
        (Some(reservation), priority, kind)
    };
    let spec = TaskSpec {
        name,
        core,
        priority,
        reservation,
        deadline: None,
        behaviour: Behaviour::Script {
            offset: ms(client.offset),
            steps: vec![Step::Loop { count: None, body }],
        },
    };
    (spec, kind)
}

/// The system as a 200 ms scenario whose server has a `gate` gate.
fn scenario(system: &System, gate: GateProtocol) -> Scenario {
    let order = if system.edf {
        SporadicOrder::EarliestDeadlineFirst
    } else {
        SporadicOrder::FixedPriority
    };
    let (mut tasks, mut clusters, mut next_core) = (Vec::new(), Vec::new(), 0u16);
    for (k, (cores, clients)) in system.clusters.iter().enumerate() {
        let ids: Vec<u16> = (next_core..next_core + cores).collect();
        next_core += cores;
        let mut members = Vec::new();
        for client in clients {
            let (spec, kind) = task(format!("c{}", tasks.len()), ids[0], client, system.edf);
            members.push(ClusterMember {
                task: tasks.len(),
                kind,
            });
            tasks.push(spec);
        }
        clusters.push(ClusterSpec {
            slack_reclamation: k == 0,
            name: format!("k{k}"),
            cores: ids,
            order,
            cycle: Duration::ZERO,
            members,
        });
    }
    let mut core_policies = Vec::new();
    if !system.core_clients.is_empty() {
        let core = next_core;
        next_core += 1;
        core_policies.push((core, PolicyKind::Spr));
        for client in &system.core_clients {
            // A core of its own schedules by fixed priority, with plain reservations.
            let plain = Client {
                best_effort: false,
                ..*client
            };
            tasks.push(task(format!("spr{}", tasks.len()), core, &plain, false).0);
        }
    }
    let count = tasks.len();
    Scenario {
        seed: 5,
        core_policies,
        clusters,
        servers: vec![ServerSpec {
            pruned_to_background: false,
            name: "S".into(),
            gate,
            body: vec![ServerStep::Run(Execution::Fixed(ms(LONGEST)))],
            bandwidth_inheritance: true,
            priority: None,
            clients: (0..count).collect(),
        }],
        ..Scenario::new(
            "gate-bounds",
            PolicyKind::FixedPriority,
            next_core,
            ms(200),
            tasks,
        )
    }
}

/// Runs `scenario` with every scheduler's invariants checked after every call, then again
/// for its invocation records.
fn run(scenario: &Scenario, options: &Options) -> (Outcome, Vec<InvocationRecord>) {
    let outcome = common::run_checked(scenario, options);
    let mut records = Kept::default();
    bulwark_sim::run_recorded(scenario, options, &mut records, &mut |_| {})
        .unwrap_or_else(|error| panic!("{error}"));
    (outcome, records.invocations)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// FIFO-IPC's bound (section VI-B): each client has at most one request at the gate, so
    /// a request waits behind at most one of every other client's, and its client drains at
    /// most `n L_q` from its issue to its reply, `n` the server's clients. A FIFO gate never
    /// aborts a request, whatever the budgets and mode switches, so every request counts.
    /// (In the 64 drawn cases, 51 had a budgeted request drain more than `L_q`, 18 more than
    /// half its bound.)
    #[test]
    fn fifo_ipc_bounds_a_request_by_the_number_of_clients(system in system()) {
        let scenario = scenario(&system, GateProtocol::FifoIpc);
        let (outcome, records) = run(&scenario, &Options::default());
        let clients = scenario.servers[0].clients.len() as u64;
        let bound = ms(LONGEST).saturating_mul(clients);
        prop_assert!(!records.is_empty(), "some request is answered in 200 ms");
        for record in &records {
            prop_assert!(!record.exhausted && record.reissues == 0, "aborted: {:?}", record);
            if scenario.tasks[record.task.index()].reservation.is_none() {
                // A best-effort member has no budget to drain.
                continue;
            }
            prop_assert!(
                record.drained_since_issue <= bound,
                "{:?} drained more than n L = {:?}",
                record,
                bound
            );
        }
        for task in &outcome.tasks {
            prop_assert_eq!(task.requests_aborted, 0, "{}", task.name);
        }
    }

    /// On the same systems under any gate, with context switches of up to 20 us: each task's
    /// executed and cache-refill time is what the trace draws for it (its own code, the
    /// servers' operations on its context and its context's spins, A2's drain while an
    /// operation it lends to runs on another core, all hold a core) and its kernel time at
    /// least that; no core's slices overlap, and so the trace hands out no more time than
    /// the cores have.
    #[test]
    fn executed_time_matches_the_trace(
        system in system(),
        gate in prop_oneof![
            Just(GateProtocol::FifoIpc),
            Just(GateProtocol::PrioIpc),
            Just(GateProtocol::McIpc)
        ],
        switch in 0u64..=20_000,
    ) {
        let mut scenario = scenario(&system, gate);
        // Cycles at the default 1 GHz: nanoseconds.
        scenario.cost.context_switch = switch;
        let options = Options { record_trace: true, ..Options::default() };
        let outcome = bulwark_sim::run(&scenario, &options).unwrap_or_else(|error| panic!("{error}"));
        let trace = outcome.trace.as_ref().expect("recorded");
        let tasks = scenario.tasks.len();
        let (mut executed, mut kernel, mut refill) = (vec![0; tasks], vec![0; tasks], vec![0; tasks]);
        for slice in &trace.slices {
            let Some(task) = slice.task else { continue };
            let length = slice.end.saturating_duration_since(slice.start).as_nanos();
            match slice.kind {
                SliceKind::Task | SliceKind::Server | SliceKind::Spin => {
                    executed[task.index()] += length
                }
                SliceKind::Kernel => kernel[task.index()] += length,
                SliceKind::CacheRefill => refill[task.index()] += length,
            }
        }
        for (at, metrics) in outcome.tasks.iter().enumerate() {
            prop_assert_eq!(metrics.executed_ns, executed[at], "{} executed", &metrics.name);
            // The trace stops at the run's end; the charge for a kernel entry made there
            // does not (a switch at the horizon is charged, its slice clipped away).
            prop_assert!(kernel[at] <= metrics.kernel_ns, "{} in the kernel", &metrics.name);
            prop_assert_eq!(metrics.refill_ns, refill[at], "{} refilling", &metrics.name);
        }
        let mut per_core: Vec<Vec<(Instant, Instant)>> = vec![Vec::new(); usize::from(scenario.cores)];
        for slice in &trace.slices {
            per_core[usize::from(slice.core)].push((slice.start, slice.end));
        }
        for spans in &mut per_core {
            spans.sort();
            for pair in spans.windows(2) {
                prop_assert!(pair[0].1 <= pair[1].0, "overlap {:?}", pair);
            }
        }
        let used: u64 = executed.iter().chain(&kernel).chain(&refill).sum();
        let capacity = outcome.until.as_nanos() * u64::from(scenario.cores);
        prop_assert!(used <= capacity, "{used} ns > {capacity} ns");
    }
}

/// The scenario `text` as file `file`, which must be valid.
fn parsed(text: &str, file: &str) -> Scenario {
    bulwark_spec::parse(text, file).unwrap_or_else(|e| panic!("{}", e.plain()))
}

/// A flood, fixed priorities, every operation exactly `L_q = 10` ms, every budget ample
/// (100 or 200 ms per second). Cluster `far` (one core) holds X, which invokes at 0.
/// Cluster `flooded` (one core, slack reclaimed) holds eight flooders F1..F8 (priorities 8
/// down to 1), which invoke at 1, and the victim V (priority 20), which invokes at 2. So
/// `K = 2`, `m = 1` and Theorem 1's bound is `(1 + 2 * 1 * 2) * 10 = 50` ms. At 1, F1 is
/// selected and its request waits (the server runs X's, on `far`'s core), so its core idles
/// and F2..F8, ready though not selected, take it as slack one after another and invoke:
/// all eight requests arrive before V's. Returns the victim's record, and all of them.
fn flood(gate: &str) -> (InvocationRecord, Vec<InvocationRecord>) {
    let client = |name: &str, cluster: &str, priority: u8, budget: u64, at: u64| {
        format!(
            "[[task]]\nname = \"{name}\"\ncluster = \"{cluster}\"\npriority = {priority}\n\
             reservation = {{ budget = \"{budget}ms\", period = \"1000ms\" }}\n\
             script = [{{ sleep-until = \"{at}ms\" }}, {{ invoke = \"S\", operation = \"10ms\" }}]\n\n"
        )
    };
    let mut text = format!(
        "name = \"flood\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"500ms\"\n\n\
         [[cluster]]\nname = \"flooded\"\ncores = [0]\norder = \"fixed-priority\"\n\
         slack-reclamation = true\n\n\
         [[cluster]]\nname = \"far\"\ncores = [1]\norder = \"fixed-priority\"\n\n\
         [[server]]\nname = \"S\"\ngate = \"{gate}\"\noperation = \"10ms\"\n\n"
    );
    text += &client("X", "far", 1, 100, 0);
    for flooder in 1..=8u8 {
        text += &client(&format!("F{flooder}"), "flooded", 9 - flooder, 100, 1);
    }
    text += &client("V", "flooded", 20, 200, 2);
    let scenario = parsed(&text, "flood.toml");
    let victim = scenario.tasks.iter().position(|task| task.name == "V");
    let (_, records) = run(&scenario, &Options::default());
    let record = *records
        .iter()
        .find(|record| Some(record.task.index()) == victim)
        .expect("the victim's request is answered");
    assert_eq!((record.reissues, record.exhausted), (0, false));
    assert_eq!(record.drained, record.drained_since_issue);
    (record, records)
}

/// Theorem 1's bound for the flood's victim: `(1 + 2 m K) L_q` with `m = 1`, `K = 2`.
const FLOOD_BOUND: u64 = 50;

/// The bound can fail: under FIFO-IPC the victim waits behind every flooder. X is served
/// 0..10 on its own reservation; F1..F8, queued at 1, are served 10..90 on V's reservation
/// (selected, its task waiting, the server on no other core), and V's own operation
/// 90..100. V's reservation, selected throughout, drains 100 - 2 = 98 > 50; by 100 all ten
/// requests are answered.
#[test]
fn fifo_ipc_exceeds_the_bound_when_many_clients_share_a_server() {
    let (victim, records) = flood("fifo-ipc");
    assert_eq!(victim.replied, Instant::ZERO.saturating_add(ms(100)));
    assert_eq!(victim.drained_since_issue, ms(98));
    assert!(victim.drained_since_issue > ms(FLOOD_BOUND));
    let by_100 = records.iter().filter(|r| r.replied <= victim.replied);
    assert_eq!(by_100.count(), 10);
}

/// The same flood under MC-IPC: F1 becomes `flooded`'s local head and enters the global
/// queue behind X; F2..F8 and V go to the tail queue (one core: no head queue), where V is
/// the most urgent. X's reply at 10 lets F1 be served 10..20; F1's reply promotes V, served
/// 20..30: V drains 30 - 2 = 28 <= 50. Under PRIO-IPC the server takes the most urgent
/// request at X's reply, V's, served 10..20: V drains 18.
#[test]
fn mc_ipc_and_prio_ipc_keep_the_victim_within_the_bound() {
    for (gate, replied, drained) in [("mc-ipc", 30, 28), ("prio-ipc", 20, 18)] {
        let (victim, _) = flood(gate);
        assert_eq!(
            (victim.replied, victim.drained_since_issue),
            (Instant::ZERO.saturating_add(ms(replied)), ms(drained)),
            "{gate}"
        );
        assert!(victim.drained_since_issue <= ms(FLOOD_BOUND), "{gate}");
    }
}

/// One task `t` of a fixed-priority core with `script`, and `cost` (a `[cost]` section or
/// nothing).
fn lone_task(script: &str, cost: &str) -> Scenario {
    let text = format!(
        "name = \"lone\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"10ms\"\n\n\
         {cost}[[task]]\nname = \"t\"\ncore = 0\npriority = 1\nscript = {script}\n"
    );
    parsed(&text, "lone.toml")
}

/// Only the simulator runs reclamation steps and charges kernel time: a platform stepping
/// the machine with real threads is refused a scenario with an `allocate` step (saying
/// which task has it) or a cost model that is not zero, which the simulator runs.
#[test]
fn reported_timing_refuses_reclamation_steps_and_kernel_costs() {
    let allocating = lone_task("[{ allocate = 1 }, { run = \"1ms\" }]", "");
    let costed = lone_task(
        "[{ run = \"1ms\" }]",
        "[cost]\nclock = \"1GHz\"\nscheduler = 1000\n\n",
    );
    for (scenario, names) in [
        (&allocating, "`t`"),
        (&costed, "charges `scheduler` cycles"),
    ] {
        let options = Options::default();
        assert!(
            bulwark_sim::run(scenario, &options).is_ok(),
            "the simulator runs it"
        );
        match Machine::stepped(scenario, &options, None) {
            Err(SimError::NotSteppable { reason }) => assert!(reason.contains(names), "{reason}"),
            Err(error) => panic!("refused for another reason: {error}"),
            Ok(_) => panic!("a platform may step {}", scenario.name),
        }
    }
    // A clock alone charges nothing: such a scenario is stepped.
    let clocked = lone_task("[{ run = \"1ms\" }]", "[cost]\nclock = \"2GHz\"\n\n");
    assert!(Machine::stepped(&clocked, &Options::default(), None).is_ok());
}
