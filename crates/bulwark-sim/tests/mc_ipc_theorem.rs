//! MC-IPC's Theorem 1 as a property test, and a FIFO-IPC scenario that breaks its bound.
//!
//! Under the MC-IPC gate, a request drains at most `(1 + 2 m_k K) L_q` of its client's
//! reservation budget, whatever the other clients do (MC-IPC paper, section IV-B). The bound
//! is not vacuous: under FIFO-IPC, enough clients queued ahead push a victim past it.

use bulwark_core::reclaim::ObjectKind;
use bulwark_core::reservation::clustered::{
    ClusterConfig, ReservationId, ReservationKind, Slot, Sporadic, SporadicOrder,
};
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::cluster::{
    run, run_traced, ClusterOutcome, ClusterSimError, Config, CostModel, Execution, GateKind,
    GateProtocol, GroupConfig, InvocationRecord, Kernel, PrunedRequests, ScriptStep, ServerConfig,
    Stretch, TaskConfig, Timing, Worker,
};
use proptest::prelude::*;
use std::collections::HashMap;

fn d(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// How long cores were masked by reclamation while `record`'s request was under way: its
/// client's reservation may be selected on a masked core, draining budget that the server
/// cannot use there (the masking is blocking the theorem does not count).
fn masked_during(outcome: &ClusterOutcome, record: &InvocationRecord) -> Duration {
    outcome
        .masks
        .iter()
        .map(|mask| {
            let from = mask.from.max(record.issued);
            let until = mask.until.min(record.replied);
            until.saturating_duration_since(from)
        })
        .fold(Duration::ZERO, Duration::saturating_add)
}

/// Runs `config` for 1.5 us; `None` if a process does not fit in its group's quota (the
/// random quotas may be too small for the group's members).
fn run_system(config: &Config) -> Option<ClusterOutcome> {
    match run(config, Instant::from_nanos(1_500)) {
        Ok(outcome) => Some(outcome),
        Err(ClusterSimError::Task { reason, .. }) if reason.contains("quota") => None,
        Err(error) => panic!("{error}"),
    }
}

/// Theorem 1's bound for `record`'s client.
fn bound(config: &Config, record: &InvocationRecord) -> Duration {
    let cores = config.clusters[record.cluster].cores as u64;
    let clusters = config.clusters.len() as u64;
    config.servers[record.server]
        .max_operation
        .saturating_mul(1 + 2 * cores * clusters)
}

fn is_best_effort(config: &Config, record: &InvocationRecord) -> bool {
    matches!(
        config.clusters[record.cluster].reservations[record.reservation.index()],
        ReservationKind::BestEffort
    )
}

/// A raw step: kind (0-1 compute, 2-4 invoke, 5 sleep, 6 allocate with server 0, terminate
/// with server 1), amount, server.
type RawStep = (u8, u64, usize);

/// A raw cluster: cores, EDF or not, an optional partition per core `(start, length)`,
/// sporadic reservations `(e, extra period, priority, low budget if high criticality)`, and
/// how many best-effort ones.
type RawCluster = (
    usize,
    bool,
    Vec<Option<(u64, u64)>>,
    Vec<(u64, u64, u8, Option<u64>)>,
    usize,
);

const CYCLE: u64 = 100;

fn raw_cluster() -> impl Strategy<Value = RawCluster> {
    (1usize..=3).prop_flat_map(|cores| {
        (
            Just(cores),
            any::<bool>(),
            proptest::collection::vec(proptest::option::of((0u64..80, 5u64..=20)), cores),
            proptest::collection::vec(
                (
                    prop_oneof![2u64..=10, 20u64..=80],
                    0u64..=60,
                    any::<u8>(),
                    proptest::option::weighted(0.15, 1u64..=10),
                ),
                1..=8,
            ),
            0usize..=2,
        )
    })
}

/// A raw task: offset, period, script.
fn raw_task() -> impl Strategy<Value = (u64, u64, Vec<RawStep>)> {
    (
        0u64..=30,
        20u64..=120,
        proptest::collection::vec((0u8..7, 1u64..=4, 0usize..2), 1..=4),
    )
}

/// Random clusters (K in 1..=3, m_k in 1..=3) of partitions, sporadic reservations with small
/// budgets (so they run out mid-request) or large ones (so they wait long), some of high
/// criticality (so clusters switch mode and demote the others), and best-effort reservations;
/// one client each, with scripts that may never sleep (request floods), allocate kernel
/// objects (some in reclamation groups) or terminate another client (masking their core
/// while reclaiming); one or two MC-IPC servers. A third of the low-criticality sporadic
/// reservations are constant-bandwidth servers.
fn system() -> impl Strategy<Value = Config> {
    (
        proptest::collection::vec(raw_cluster(), 1..=3),
        proptest::collection::vec(1u64..=8, 1..=2),
        proptest::collection::vec(raw_task(), 40),
        any::<bool>(),
        any::<u64>(),
        proptest::collection::vec(400u64..=4_000, 0..=2),
    )
        .prop_map(
            |(raw_clusters, lengths, raw_tasks, transfer, seed, quotas)| {
                let servers: Vec<ServerConfig> = lengths
                    .iter()
                    .map(|&l| ServerConfig {
                        gate: GateKind::Protocol(GateProtocol::McIpc),
                        max_operation: d(l),
                    })
                    .collect();
                let mut clusters = Vec::new();
                let mut tasks = Vec::new();
                let mut raw_tasks = raw_tasks.into_iter().cycle();
                for (k, (cores, edf, partitions, sporadics, best_effort)) in
                    raw_clusters.into_iter().enumerate()
                {
                    let mut reservations = Vec::new();
                    for (core, partition) in partitions.into_iter().enumerate() {
                        if let Some((start, length)) = partition {
                            reservations.push(ReservationKind::TimePartition {
                                core,
                                priority: Priority(core as u8),
                                slots: vec![Slot::new(d(start), d(start + length))],
                            });
                        }
                    }
                    for (e, extra, priority, low) in sporadics {
                        let mut sporadic =
                            Sporadic::new(d(e), d(e + extra)).with_priority(Priority(priority));
                        if let Some(low) = low {
                            sporadic = sporadic.with_high_criticality(d(low.min(e)));
                        } else if priority % 3 == 0 {
                            sporadic = sporadic.with_constant_bandwidth();
                        } else if priority % 3 == 1 && !edf {
                            // SPR servers, fixed-priority clusters only: S = 1..4.
                            sporadic = sporadic.with_spr(u16::from(priority % 4) + 1);
                        }
                        reservations.push(ReservationKind::Sporadic(sporadic));
                    }
                    reservations.extend((0..best_effort).map(|_| ReservationKind::BestEffort));
                    for r in 0..reservations.len() {
                        let (offset, period, raw_script) = raw_tasks.next().unwrap();
                        let script = raw_script
                            .into_iter()
                            .map(|(kind, amount, server)| match kind {
                                0 | 1 => ScriptStep::Compute(Execution::exact(d(amount))),
                                2..=4 => {
                                    let server = server % servers.len();
                                    ScriptStep::Invoke {
                                        server,
                                        length: Execution::between(
                                            d(1),
                                            servers[server].max_operation,
                                        ),
                                    }
                                }
                                5 => ScriptStep::SleepUntilNextPeriod,
                                _ if server == 0 => ScriptStep::Allocate {
                                    count: amount * 40,
                                    object: ObjectKind::Semaphore,
                                },
                                // The target is fixed below, once every task is known.
                                _ => ScriptStep::Terminate {
                                    task: (amount * 7 + offset) as usize,
                                },
                            })
                            .collect();
                        let group = (!quotas.is_empty() && period % 3 != 0)
                            .then(|| period as usize % quotas.len());
                        tasks.push(TaskConfig {
                            cluster: k,
                            reservation: ReservationId(r as u32),
                            offset: d(offset),
                            period: d(period),
                            script,
                            group,
                        });
                    }
                    clusters.push(ClusterConfig {
                        cores,
                        cycle: d(CYCLE),
                        order: if edf {
                            SporadicOrder::EarliestDeadlineFirst
                        } else {
                            SporadicOrder::FixedPriority
                        },
                        reservations,
                    });
                }
                let count = tasks.len();
                for (i, task) in tasks.iter_mut().enumerate() {
                    for step in &mut task.script {
                        if let ScriptStep::Terminate { task: target } = step {
                            *target %= count;
                            if *target == i {
                                *target = (i + 1) % count;
                            }
                            if *target == i {
                                *step = ScriptStep::Compute(Execution::exact(d(1)));
                            }
                        }
                    }
                }
                Config {
                    clusters,
                    servers,
                    tasks,
                    pruned: if transfer {
                        PrunedRequests::TransferToBackground
                    } else {
                        PrunedRequests::Reissue
                    },
                    groups: quotas
                        .iter()
                        .map(|&q| GroupConfig { quota: d(q) })
                        .collect(),
                    // One nanosecond per unit: a baseline termination masks for its objects.
                    cost: CostModel {
                        clock_hz: 1_000_000_000,
                        reclaim_per_unit: 1,
                        ..CostModel::default()
                    },
                    seed,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Theorem 1: every completed invocation of a real-time client whose reservation did not
    /// run out of budget (or change priority with a mode switch) since the request was
    /// (re)issued drained at most `(1 + 2 m_k K) L_q`, plus the time cores were masked by
    /// reclamation meanwhile. And no core is masked longer than a group's quota when it
    /// terminates a group; terminated tasks never run another job.
    #[test]
    fn mc_ipc_bounds_the_budget_a_request_drains(config in system()) {
        let Some(outcome) = run_system(&config) else { return Ok(()) };
        for record in &outcome.invocations {
            if record.exhausted || is_best_effort(&config, record) {
                continue;
            }
            let allowed = bound(&config, record).saturating_add(masked_during(&outcome, record));
            prop_assert!(
                record.drained_since_issue <= allowed,
                "{:?} drained more than {:?}",
                record,
                allowed
            );
        }
        for mask in &outcome.masks {
            if let Some(group) = config.tasks[mask.target].group {
                let masked = mask.until.saturating_duration_since(mask.from);
                prop_assert!(masked <= config.groups[group].quota, "{:?}", mask);
            }
            let later = outcome
                .jobs
                .iter()
                .filter(|j| j.task == mask.target && j.release > mask.from)
                .count();
            prop_assert_eq!(later, 0, "{:?}", mask);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// FIFO-IPC's bound (section VI-B), on the same random systems with FIFO gates: a request
    /// waits behind at most one request of every other client (each has at most one), so it
    /// drains at most `n L_q`, `n` the clients whose scripts invoke the server, plus the time
    /// cores were masked by reclamation meanwhile.
    #[test]
    fn fifo_ipc_bounds_a_request_by_the_number_of_clients(config in system()) {
        let mut config = config;
        for server in &mut config.servers {
            server.gate = GateKind::Protocol(GateProtocol::FifoIpc);
        }
        let Some(outcome) = run_system(&config) else { return Ok(()) };
        for record in &outcome.invocations {
            if record.exhausted || is_best_effort(&config, record) {
                continue;
            }
            let clients = config
                .tasks
                .iter()
                .filter(|t| {
                    t.script
                        .iter()
                        .any(|s| matches!(s, ScriptStep::Invoke { server, .. } if *server == record.server))
                })
                .count() as u64;
            let bound = config.servers[record.server]
                .max_operation
                .saturating_mul(clients)
                .saturating_add(masked_during(&outcome, record));
            prop_assert!(
                record.drained_since_issue <= bound,
                "{:?} drained more than n L = {:?}",
                record,
                bound
            );
        }
    }
}

/// Two one-core clusters (K = 2, m_0 = 1) and one server with `L_q = 10`, so Theorem 1's
/// bound is `(1 + 2 * 1 * 2) * 10 = 50`. Fixed priorities. Cluster 1: X invokes at 0. Cluster
/// 0: eight clients F1..F8 (priorities 8..1) invoke at 1, and the victim V (priority 20)
/// invokes at 2. Every operation takes exactly 10; every budget is ample.
fn flood(gate: GateKind) -> (ClusterOutcome, InvocationRecord) {
    let sporadic = |budget: u64, priority: u8| {
        ReservationKind::Sporadic(
            Sporadic::new(d(budget), d(1_000)).with_priority(Priority(priority)),
        )
    };
    let mut cluster_0: Vec<ReservationKind> = (0..8).map(|i| sporadic(100, 8 - i)).collect();
    cluster_0.push(sporadic(200, 20));
    let cluster = |reservations| ClusterConfig {
        cores: 1,
        cycle: Duration::ZERO,
        order: SporadicOrder::FixedPriority,
        reservations,
    };
    let client = |cluster: usize, reservation: u32, offset: u64| TaskConfig {
        cluster,
        reservation: ReservationId(reservation),
        offset: d(offset),
        period: d(1_000),
        script: vec![
            ScriptStep::Invoke {
                server: 0,
                length: Execution::exact(d(10)),
            },
            ScriptStep::SleepUntilNextPeriod,
        ],
        group: None,
    };
    let mut tasks = vec![client(1, 0, 0)];
    tasks.extend((0..8).map(|f| client(0, f, 1)));
    tasks.push(client(0, 8, 2));
    let config = Config {
        clusters: vec![cluster(cluster_0), cluster(vec![sporadic(100, 1)])],
        servers: vec![ServerConfig {
            gate,
            max_operation: d(10),
        }],
        tasks,
        pruned: PrunedRequests::Reissue,
        groups: Vec::new(),
        cost: CostModel::default(),
        seed: 0,
    };
    let outcome = run(&config, Instant::from_nanos(500)).unwrap();
    let victim = *outcome
        .invocations
        .iter()
        .find(|r| r.task == 9)
        .expect("the victim's request completes");
    assert_eq!(bound(&config, &victim), d(50));
    (outcome, victim)
}

/// The bound can fail: under FIFO-IPC the victim waits behind every flooder. X is served
/// 0..10 (on its own reservation in cluster 1); the flooders, which queued at 1 while F1's
/// reservation idled (the server ran in cluster 1) and lent its core, are served 10..90 on
/// V's reservation; V's own operation runs 90..100. V's reservation, selected throughout,
/// drains 100 - 2 = 98 > 50.
#[test]
fn fifo_ipc_exceeds_the_bound_when_many_clients_share_a_server() {
    let (outcome, victim) = flood(GateKind::Protocol(GateProtocol::FifoIpc));
    assert_eq!(outcome.invocations.len(), 10);
    assert_eq!(victim.replied, Instant::from_nanos(100));
    assert_eq!((victim.drained_since_issue, victim.delay), (d(98), d(98)));
    assert!(victim.drained_since_issue > d(50));
}

/// The same flood under MC-IPC: F1 becomes cluster 0's local head and enters the global queue
/// behind X; F2..F8 and V go to cluster 0's tail queue (one core: no head queue), where V is
/// the most urgent. X's reply at 10 lets F1 be served 10..20; F1's reply promotes V, served
/// 20..30. V drains 30 - 2 = 28 <= 50. Under PRIO-IPC, V is served right after X, 10..20: 18.
#[test]
fn mc_ipc_and_prio_ipc_keep_the_victim_within_the_bound() {
    let (_, victim) = flood(GateKind::Protocol(GateProtocol::McIpc));
    assert_eq!(
        (victim.replied, victim.drained_since_issue),
        (Instant::from_nanos(30), d(28))
    );
    let (_, victim) = flood(GateKind::Protocol(GateProtocol::PrioIpc));
    assert_eq!(
        (victim.replied, victim.drained_since_issue),
        (Instant::from_nanos(20), d(18))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The machine's per-task processor time is what its trace draws for the task, no core
    /// runs two things at once, and the machine hands out at most its cores' time, whatever a
    /// context switch costs.
    #[test]
    fn executed_time_matches_the_trace(config in system(), switch in 0u64..=20) {
        // Context switches of up to 20 ns (cycles at 1 GHz), added to the switched-to
        // occupant's work, are time on its client's behalf like any other.
        let mut config = config;
        config.cost.context_switch = switch;
        let until = Instant::from_nanos(1_500);
        let outcome = match run_traced(&config, until) {
            Ok(outcome) => outcome,
            Err(ClusterSimError::Task { reason, .. }) if reason.contains("quota") => {
                return Ok(())
            }
            Err(error) => panic!("{error}"),
        };
        let trace = outcome.trace.as_ref().expect("recorded");
        let mut drawn = vec![Duration::ZERO; config.tasks.len()];
        for slice in &trace.slices {
            if let Some(task) = slice.task {
                let length = slice.end.saturating_duration_since(slice.start);
                drawn[task.0 as usize] = drawn[task.0 as usize].saturating_add(length);
            }
        }
        prop_assert_eq!(&outcome.executed, &drawn);
        // A server's operation runs on its own core for a client of any cluster, so the
        // capacity is the machine's, and each core's slices never overlap.
        let cores: u64 = config.clusters.iter().map(|c| c.cores as u64).sum();
        let used = outcome
            .executed
            .iter()
            .fold(Duration::ZERO, |sum, e| sum.saturating_add(*e));
        let capacity = Duration::from_nanos(until.as_nanos() * cores);
        prop_assert!(used <= capacity, "{used:?} > {capacity:?}");
        let mut per_core: Vec<Vec<(Instant, Instant)>> = vec![Vec::new(); cores as usize];
        for slice in &trace.slices {
            per_core[slice.core as usize].push((slice.start, slice.end));
        }
        for spans in &mut per_core {
            spans.sort();
            for pair in spans.windows(2) {
                prop_assert!(pair[0].1 <= pair[1].0, "overlap {:?}", pair);
            }
        }
    }
}

/// `config` without its `allocate` and `terminate` steps (a script left empty computes 1 ns
/// and sleeps), which only the simulator runs.
fn without_reclamation(mut config: Config) -> Config {
    for task in &mut config.tasks {
        task.script.retain(|step| {
            !matches!(
                step,
                ScriptStep::Allocate { .. } | ScriptStep::Terminate { .. }
            )
        });
        if task.script.is_empty() {
            task.script = vec![
                ScriptStep::Compute(Execution::exact(d(1))),
                ScriptStep::SleepUntilNextPeriod,
            ];
        }
    }
    config
}

/// Drives the kernel as a platform with real threads does ([`Timing::Reported`]): the
/// platform knows when each computation and operation is done. This one plays the threads,
/// keeping each stretch's work itself, and reports a stretch done the instant its work
/// reaches its length, so it must give exactly the simulator's outcome.
fn run_reported(config: &Config, until: Instant) -> Result<ClusterOutcome, ClusterSimError> {
    let mut kernel = Kernel::new(config, until, Timing::Reported, true)?;
    let mut worked: HashMap<(Worker, u64), Duration> = HashMap::new();
    let cores: usize = config.clusters.iter().map(|c| c.cores).sum();
    while kernel.settle()?.is_some() {
        let now = kernel.now();
        let stretches: Vec<Stretch> = (0..cores).filter_map(|c| kernel.stretch_on(c)).collect();
        let left = |stretch: &Stretch, worked: &HashMap<(Worker, u64), Duration>| {
            let done = worked
                .get(&(stretch.worker, stretch.serial))
                .copied()
                .unwrap_or_default();
            stretch.remaining.saturating_sub(done)
        };
        let to = stretches
            .iter()
            .map(|stretch| now.saturating_add(left(stretch, &worked)))
            .fold(kernel.timer(), Instant::min);
        kernel.advance(to)?;
        for stretch in &stretches {
            let rest = left(stretch, &worked);
            let ran = to.saturating_duration_since(now);
            let done = worked.entry((stretch.worker, stretch.serial)).or_default();
            *done = done.saturating_add(ran);
            if ran >= rest {
                kernel.stretch_done(stretch.worker, stretch.serial);
            }
        }
    }
    Ok(kernel.finish())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A platform that reports each computation's and operation's end gets the simulator's
    /// outcome, trace included: the kernel's decisions depend on when stretches end, not on
    /// who measures it.
    #[test]
    fn reported_stretches_give_the_simulated_outcome(config in system()) {
        let config = without_reclamation(config);
        let until = Instant::from_nanos(1_500);
        let simulated = run_traced(&config, until);
        let reported = run_reported(&config, until);
        match (simulated, reported) {
            (Ok(simulated), Ok(reported)) => prop_assert_eq!(reported, simulated),
            (simulated, reported) => prop_assert_eq!(
                simulated.map(|_| ()).map_err(|e| e.to_string()),
                reported.map(|_| ()).map_err(|e| e.to_string())
            ),
        }
    }
}

/// Only the simulator runs reclamation steps: a reported-timing kernel refuses them, saying
/// which task has one.
#[test]
fn reported_timing_refuses_reclamation_steps() {
    let config = Config {
        clusters: vec![ClusterConfig {
            cores: 1,
            cycle: Duration::ZERO,
            order: SporadicOrder::FixedPriority,
            reservations: vec![ReservationKind::Sporadic(Sporadic::new(d(100), d(1_000)))],
        }],
        servers: Vec::new(),
        tasks: vec![TaskConfig {
            cluster: 0,
            reservation: ReservationId(0),
            offset: d(0),
            period: d(1_000),
            script: vec![
                ScriptStep::Allocate {
                    count: 1,
                    object: ObjectKind::Semaphore,
                },
                ScriptStep::SleepUntilNextPeriod,
            ],
            group: None,
        }],
        pruned: PrunedRequests::Reissue,
        groups: Vec::new(),
        cost: CostModel {
            clock_hz: 1_000_000_000,
            reclaim_per_unit: 1,
            ..CostModel::default()
        },
        seed: 0,
    };
    assert!(
        run(&config, Instant::from_nanos(100)).is_ok(),
        "the simulator runs it"
    );
    let error = Kernel::new(&config, Instant::from_nanos(100), Timing::Reported, false)
        .err()
        .expect("refused");
    assert!(
        matches!(error, ClusterSimError::Task { task: 0, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("only in the simulator"),
        "{error}"
    );
}
