//! Hand-worked timelines of the cluster machine.

use super::*;
use bulwark_core::reclaim::ObjectKind;
use bulwark_core::reservation::clustered::{ReservationKind, Sporadic, SporadicOrder};
use bulwark_core::Priority;

fn d(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn at(n: u64) -> Instant {
    Instant::from_nanos(n)
}

fn compute(n: u64) -> ScriptStep {
    ScriptStep::Compute(Execution::exact(d(n)))
}

fn invoke(length: u64) -> ScriptStep {
    ScriptStep::Invoke {
        server: 0,
        length: Execution::exact(d(length)),
    }
}

/// A one-core cluster of fixed-priority sporadic reservations `(e, p, priority)`.
fn cluster(reservations: &[(u64, u64, u8)]) -> ClusterConfig {
    ClusterConfig {
        cores: 1,
        cycle: Duration::ZERO,
        order: SporadicOrder::FixedPriority,
        reservations: reservations
            .iter()
            .map(|&(e, p, priority)| {
                ReservationKind::Sporadic(
                    Sporadic::new(d(e), d(p)).with_priority(Priority(priority)),
                )
            })
            .collect(),
    }
}

fn task(
    cluster: usize,
    reservation: u32,
    offset: u64,
    period: u64,
    script: Vec<ScriptStep>,
) -> TaskConfig {
    TaskConfig {
        cluster,
        reservation: ReservationId(reservation),
        offset: d(offset),
        period: d(period),
        script,
        group: None,
    }
}

fn server(gate: GateKind, max_operation: u64) -> ServerConfig {
    ServerConfig {
        gate,
        max_operation: d(max_operation),
    }
}

fn config(clusters: Vec<ClusterConfig>, gate: GateKind, tasks: Vec<TaskConfig>) -> Config {
    Config {
        clusters,
        servers: vec![server(gate, 10)],
        tasks,
        pruned: PrunedRequests::Reissue,
        groups: Vec::new(),
        cost: CostModel::default(),
        seed: 7,
    }
}

/// One task alone: compute 3, invoke (2), compute 1, sleep; period 10, budget 8.
fn lone_client() -> Config {
    lone_client_with_budget(8)
}

/// [`lone_client`] with budget `budget`.
fn lone_client_with_budget(budget: u64) -> Config {
    config(
        vec![cluster(&[(budget, 10, 1)])],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![task(
            0,
            0,
            0,
            10,
            vec![
                compute(3),
                invoke(2),
                compute(1),
                ScriptStep::SleepUntilNextPeriod,
            ],
        )],
    )
}

/// The lone client's timeline.
#[test]
fn a_lone_client_computes_invokes_and_sleeps() {
    let c = lone_client();
    let out = run(&c, at(20)).unwrap();
    // Job 1: computes 0..3, invokes at 3, the server runs on its reservation 3..5, computes
    // 5..6 and sleeps: response 6. Job 2 the same, 10 later.
    assert_eq!(out.invocations.len(), 2);
    let first = out.invocations[0];
    assert_eq!(
        (first.invoked, first.replied, first.delay, first.drained),
        (at(3), at(5), d(2), d(2))
    );
    assert_eq!(out.invocations[1].replied, at(15));
    let responses: Vec<_> = out.jobs.iter().map(|j| (j.release, j.response)).collect();
    assert_eq!(responses, vec![(at(0), Some(d(6))), (at(10), Some(d(6)))]);
    assert!(out.aborts.is_empty());
    // Two jobs of 3 + 1 computed and 2 served on the task's behalf.
    assert_eq!(out.executed, vec![d(12)]);
}

/// Bandwidth inheritance, idling (A2) and slack. Cluster 0 (one core): A in R0 (e 20, p 100,
/// priority 2) invokes at its release 1; C in R1 (e 20, p 100, priority 1) computes 10 from 0.
/// Cluster 1 (one core): X in its R0 (e 20, p 100) invokes an operation of 5 at 0.
#[test]
fn a_waiting_reservation_idles_and_lends_its_core() {
    let c = config(
        vec![
            cluster(&[(20, 100, 2), (20, 100, 1)]),
            cluster(&[(20, 100, 1)]),
        ],
        GateKind::Protocol(GateProtocol::FifoIpc),
        vec![
            task(
                0,
                0,
                1,
                100,
                vec![invoke(4), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                0,
                1,
                0,
                100,
                vec![compute(10), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                1,
                0,
                0,
                100,
                vec![invoke(5), ScriptStep::SleepUntilNextPeriod],
            ),
        ],
    );
    let out = run(&c, at(50)).unwrap();
    // X: served 0..5 on its own reservation in cluster 1.
    // A: invokes at 1 behind X; its reservation is selected but the server runs in cluster 1
    // (it stays where it executes), so R0 idles and drains while C runs on the slack 1..5.
    // At 5 the server moves to A's reservation and runs 5..9: delay 9-1 = 8, and A's
    // reservation drained all of [1, 9): 8.
    let by_task = |t: usize| {
        out.invocations
            .iter()
            .find(|r| r.task == t)
            .copied()
            .unwrap()
    };
    assert_eq!((by_task(2).replied, by_task(2).drained), (at(5), d(5)));
    let a = by_task(0);
    assert_eq!(
        (a.invoked, a.replied, a.delay, a.drained),
        (at(1), at(9), d(8), d(8))
    );
    // C: 0..1 selected, 1..5 on slack, preempted 5..9, then 9..14 for its last 10-1-4 = 5.
    let completion = |t: usize| {
        out.jobs
            .iter()
            .find(|j| j.task == t)
            .and_then(|j| j.completion)
    };
    assert_eq!(completion(1), Some(at(14)));
    assert_eq!(completion(0), Some(at(9)));
    assert_eq!(completion(2), Some(at(5)));
}

/// Exhaustion while queued. Cluster 0: X in (e 30, p 100) invokes an operation of 10 at 0.
/// Cluster 1: Y in (e 3, p 20) invokes an operation of 2 at 1, behind X.
fn exhaustion_scenario(pruned: PrunedRequests) -> ClusterOutcome {
    let mut c = config(
        vec![cluster(&[(30, 100, 1)]), cluster(&[(3, 20, 1)])],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![
            task(
                0,
                0,
                0,
                100,
                vec![invoke(10), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                1,
                0,
                1,
                100,
                vec![invoke(2), ScriptStep::SleepUntilNextPeriod],
            ),
        ],
    );
    c.pruned = pruned;
    run(&c, at(60)).unwrap()
}

#[test]
fn an_exhausted_client_is_pruned_and_reissued_on_replenishment() {
    let out = exhaustion_scenario(PrunedRequests::Reissue);
    // Y's reservation idles 1..4 (the server runs X in cluster 0) and is exhausted at 1+3 = 4:
    // pruned. Replenished at 1+20 = 21, Y reissues; the server, idle since X's reply at 10,
    // serves it 21..23 on Y's reservation.
    assert_eq!(
        out.aborts,
        vec![AbortRecord {
            at: at(4),
            task: 1,
            server: 0,
            pruned: true
        }]
    );
    let y = out
        .invocations
        .iter()
        .find(|r| r.task == 1)
        .copied()
        .unwrap();
    assert_eq!(
        (y.invoked, y.issued, y.replied, y.reissues, y.exhausted),
        (at(1), at(21), at(23), 1, false)
    );
    // Drained: 3 before the prune, 2 after the reissue.
    assert_eq!(
        (y.drained, y.drained_since_issue, y.delay),
        (d(5), d(2), d(22))
    );
}

#[test]
fn a_pruned_request_may_be_served_from_the_background_queue() {
    let out = exhaustion_scenario(PrunedRequests::TransferToBackground);
    // Pruned at 4 and moved to the background queue. At 10 X's reply leaves the global queue
    // empty, so the server takes Y from the background queue; but no reservation it inherits
    // from has budget until Y's replenishment at 21, so it runs 21..23. Served before the
    // replenishment, the request is not reissued: issued at 1, drained 3 + 2 = 5, exhausted.
    assert_eq!(out.aborts.len(), 1);
    let y = out
        .invocations
        .iter()
        .find(|r| r.task == 1)
        .copied()
        .unwrap();
    assert_eq!(
        (y.invoked, y.issued, y.replied, y.reissues, y.exhausted),
        (at(1), at(1), at(23), 0, true)
    );
    assert_eq!((y.drained, y.drained_since_issue), (d(5), d(5)));
}

#[test]
fn runs_are_deterministic() {
    let mut c = config(
        vec![cluster(&[(6, 20, 2), (6, 15, 1)]), cluster(&[(9, 30, 1)])],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![
            task(
                0,
                0,
                0,
                20,
                vec![
                    ScriptStep::Compute(Execution::between(d(1), d(3))),
                    ScriptStep::Invoke {
                        server: 0,
                        length: Execution::between(d(1), d(10)),
                    },
                    ScriptStep::SleepUntilNextPeriod,
                ],
            ),
            task(
                0,
                1,
                2,
                15,
                vec![ScriptStep::Invoke {
                    server: 0,
                    length: Execution::between(d(1), d(10)),
                }],
            ),
            task(
                1,
                0,
                1,
                30,
                vec![
                    ScriptStep::Compute(Execution::between(d(1), d(5))),
                    ScriptStep::Invoke {
                        server: 0,
                        length: Execution::between(d(1), d(10)),
                    },
                    ScriptStep::SleepUntilNextPeriod,
                ],
            ),
        ],
    );
    c.pruned = PrunedRequests::TransferToBackground;
    let first = run(&c, at(2_000)).unwrap();
    assert_eq!(first, run(&c, at(2_000)).unwrap());
    assert_eq!(
        format!("{first:?}"),
        format!("{:?}", run(&c, at(2_000)).unwrap())
    );
    assert!(first.invocations.len() > 10);
}

#[test]
fn configurations_are_checked() {
    let good = || {
        config(
            vec![cluster(&[(3, 10, 1)])],
            GateKind::Protocol(GateProtocol::PrioIpc),
            vec![task(0, 0, 0, 10, vec![invoke(2)])],
        )
    };
    let task_error = |c: Config| match run(&c, at(10)) {
        Err(ClusterSimError::Task { reason, .. }) => reason,
        other => panic!("{other:?}"),
    };
    let mut c = good();
    c.tasks[0].reservation = ReservationId(1);
    assert_eq!(task_error(c), "no such reservation");
    let mut c = good();
    c.tasks[0].script = vec![invoke(11)];
    assert_eq!(
        task_error(c),
        "an operation is longer than the server's L_q"
    );
    let mut c = good();
    c.tasks[0].script = vec![compute(0)];
    assert_eq!(task_error(c), "a computation needs 0 < min <= max");
    let mut c = good();
    c.tasks[0].period = Duration::ZERO;
    assert_eq!(task_error(c), "the period must be non-zero");
    let mut c = good();
    c.clusters[0].cores = 0;
    assert_eq!(
        run(&c, at(10)).unwrap_err().to_string(),
        "cluster 0: a cluster needs at least one core"
    );
    assert!(run(&good(), at(10)).is_ok());
}

/// Vestal's mode switch. Cluster 1: X invokes an operation of 10 at 0 (the server is busy
/// 0..10). Cluster 0 (one core, fixed priorities): L, low criticality (e 30, p 100, priority
/// 20), released at 1, invokes an operation of 10; H, high criticality (e^H 20, e^L 2, p 100,
/// priority 30), released at 2, computes 5.
#[test]
fn a_mode_switch_aborts_and_reissues_the_requests_of_demoted_reservations() {
    let h = Sporadic::new(d(20), d(100))
        .with_priority(Priority(30))
        .with_high_criticality(d(2));
    let mut cluster_0 = cluster(&[(30, 100, 20)]);
    cluster_0.reservations.push(ReservationKind::Sporadic(h));
    let c = config(
        vec![cluster_0, cluster(&[(30, 100, 1)])],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![
            task(
                1,
                0,
                0,
                100,
                vec![invoke(10), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                0,
                0,
                1,
                100,
                vec![invoke(10), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                0,
                1,
                2,
                100,
                vec![compute(5), ScriptStep::SleepUntilNextPeriod],
            ),
        ],
    );
    let out = run(&c, at(60)).unwrap();
    // L invokes at 1 (local head, in the global queue behind X) and idles. H runs from 2 and
    // has consumed e^L = 2 at 4 with its job pending: high mode. L's request is pruned and
    // reissued at once with L's demoted priority (L still has 30 - 1 of budget).
    assert_eq!(
        out.modes,
        vec![
            ModeRecord {
                at: at(4),
                cluster: 0,
                mode: Mode::High
            },
            // L completes at 20 (below): no partition or sporadic reservation is active.
            ModeRecord {
                at: at(20),
                cluster: 0,
                mode: Mode::Low
            },
        ]
    );
    assert_eq!(
        out.aborts,
        vec![AbortRecord {
            at: at(4),
            task: 1,
            server: 0,
            pruned: true
        }]
    );
    // H completes at 2+5 = 7. L, selected again from 7, idles until X's reply at 10, then the
    // server serves L's request on L's reservation 10..20.
    let completion = |t: usize| {
        out.jobs
            .iter()
            .find(|j| j.task == t)
            .and_then(|j| j.completion)
    };
    assert_eq!((completion(2), completion(1)), (Some(at(7)), Some(at(20))));
    let l = out
        .invocations
        .iter()
        .find(|r| r.task == 1)
        .copied()
        .unwrap();
    assert_eq!(
        (l.invoked, l.issued, l.replied, l.reissues, l.exhausted),
        (at(1), at(4), at(20), 1, false)
    );
    // Drained: 1..2 and 7..20 = 1 + 13 = 14; since the reissue at 4, 13. Delay 20-1 = 19.
    assert_eq!(
        (l.drained, l.drained_since_issue, l.delay),
        (d(14), d(13), d(19))
    );
}

/// The trace of the lone client above: its computation 0..3, the server's operation on its
/// behalf 3..5 and its computation 5..6 are one stretch of its time on core 0, then 10..16;
/// releases at 0 and 10, completions at 6 and 16. Tracing changes nothing in the run.
#[test]
fn the_trace_draws_operations_as_the_clients_time() {
    let c = lone_client();
    let mut traced = run_traced(&c, at(20)).unwrap();
    let trace = traced.trace.take().expect("recorded");
    assert_eq!(traced, run(&c, at(20)).unwrap());
    let slices: Vec<(u16, Option<u32>, u64, u64)> = trace
        .slices
        .iter()
        .map(|s| {
            (
                s.core,
                s.task.map(|t| t.0),
                s.start.as_nanos(),
                s.end.as_nanos(),
            )
        })
        .collect();
    assert_eq!(slices, [(0, Some(0), 0, 6), (0, Some(0), 10, 16)]);
    let marks: Vec<(crate::trace::MarkKind, u64, u64)> = trace
        .marks
        .iter()
        .map(|m| (m.kind, m.at.as_nanos(), m.job))
        .collect();
    use crate::trace::MarkKind::{Completion, Release};
    assert_eq!(
        marks,
        [
            (Release, 0, 0),
            (Completion, 6, 0),
            (Release, 10, 1),
            (Completion, 16, 1)
        ]
    );
}

/// One core, cycle 100 us: partition R0 in [50, 100) us runs T0 (10 us per cycle from 50
/// us); R1 (e 40 us, p 100 us, priority 1) runs a rogue that allocates 1,000 semaphores and
/// then computes; R2 (e 10 us, p 1 ms, priority 2) runs a watchdog that terminates the rogue
/// at 40 us. Reclamation costs 10 cycles per unit at 1 GHz. `quota` puts the rogue in a
/// reclamation group.
fn rogue_on_a_partitioned_core(quota: Option<u64>) -> Config {
    let partition = ReservationKind::TimePartition {
        core: 0,
        priority: Priority(9),
        slots: vec![bulwark_core::reservation::clustered::Slot::new(
            d(50_000),
            d(100_000),
        )],
    };
    let mut clusters = vec![cluster(&[(40_000, 100_000, 1), (10_000, 1_000_000, 2)])];
    clusters[0].cycle = d(100_000);
    clusters[0].reservations.insert(0, partition);
    let mut rogue = task(
        0,
        1,
        0,
        1_000_000,
        vec![
            ScriptStep::Allocate {
                count: 1_000,
                object: ObjectKind::Semaphore,
            },
            compute(10_000_000),
        ],
    );
    rogue.group = quota.map(|_| 0);
    let tasks = vec![
        task(
            0,
            0,
            50_000,
            100_000,
            vec![compute(10_000), ScriptStep::SleepUntilNextPeriod],
        ),
        rogue,
        task(
            0,
            2,
            40_000,
            1_000_000,
            vec![
                ScriptStep::Terminate { task: 1 },
                ScriptStep::SleepUntilNextPeriod,
            ],
        ),
    ];
    let mut c = config(clusters, GateKind::Protocol(GateProtocol::McIpc), tasks);
    c.groups = quota.map_or_else(Vec::new, |q| vec![GroupConfig { quota: d(q) }]);
    c.cost = CostModel {
        clock_hz: 1_000_000_000,
        reclaim_per_unit: 10,
        ..CostModel::default()
    };
    c
}

/// Without a group the kernel frees the rogue's 1,000 semaphores one by one: 3 units each
/// plus one for the process (the baseline's cost, `bulwark_core::reclaim`), 3,001 units of 10
/// ns, so the core is masked over [40, 70.01) us. The partition's slot opens at 50 us but
/// T0 gets the core only at 70.01 us: its response is 30.01 us instead of 10.
#[test]
fn terminating_without_a_group_masks_the_core_into_a_partitions_slot() {
    let out = run(&rogue_on_a_partitioned_core(None), at(100_000)).unwrap();
    assert_eq!(out.allocations.len(), 1);
    assert_eq!(
        (out.allocations[0].created, out.allocations[0].refused),
        (1_000, 0)
    );
    assert_eq!(out.masks.len(), 1);
    let mask = out.masks[0];
    assert_eq!((mask.task, mask.target, mask.units), (2, 1, 3_001));
    assert_eq!((mask.from, mask.until), (at(40_000), at(70_010)));
    let t0: Vec<_> = out.jobs.iter().filter(|j| j.task == 0).collect();
    assert_eq!(t0[0].response, Some(d(30_010)));
    let rogue: Vec<_> = out.jobs.iter().filter(|j| j.task == 1).collect();
    assert_eq!(rogue.len(), 1);
    assert!(rogue[0].killed && rogue[0].completion.is_none());
    // T0 its 10 us; the rogue the core from 0 until the watchdog's release at 40 us (its
    // budget is 40 us); the watchdog the masked 30.01 us it spent reclaiming.
    assert_eq!(out.executed, vec![d(10_000), d(40_000), d(30_010)]);
}

/// In a group with a 5 us quota (500 units), the rogue's allocations stop at the quota, and
/// terminating the group releases its arena in one unit: masked for 10 ns, and T0 runs its
/// slot untouched (response 10 us).
#[test]
fn terminating_a_group_masks_the_core_for_at_most_its_quota() {
    let out = run(&rogue_on_a_partitioned_core(Some(5_000)), at(100_000)).unwrap();
    let made = out.allocations[0];
    assert!(made.created > 0 && made.refused > 0);
    assert_eq!(made.created + made.refused, 1_000);
    let mask = out.masks[0];
    assert!(mask.until.saturating_duration_since(mask.from) <= d(5_000));
    assert_eq!(mask.units, bulwark_core::reclaim::ARENA_RELEASE_UNITS);
    let t0: Vec<_> = out.jobs.iter().filter(|j| j.task == 0).collect();
    assert_eq!(t0[0].response, Some(d(10_000)));
    // The rogue never runs again: nothing of it after 40 us.
    assert!(out.jobs.iter().filter(|j| j.task == 1).all(|j| j.killed));
}

/// A terminated client's request is withdrawn from its gate; the server serves the others.
#[test]
fn a_terminated_clients_request_leaves_the_gate() {
    // Two cores: A in R0 (priority 2) and B in R1 (priority 1) both invoke an operation of 5
    // at 0; the server takes A's, B's waits. W in R2 (priority 3) terminates B at 2: B's
    // request is pruned from the gate then (recorded as an abort), and A is served at once
    // both times.
    let mut two_cores = cluster(&[(50, 100, 2), (50, 100, 1), (50, 1_000, 3)]);
    two_cores.cores = 2;
    let mut c = config(
        vec![two_cores],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![
            task(
                0,
                0,
                0,
                100,
                vec![invoke(5), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                0,
                1,
                0,
                100,
                vec![invoke(5), ScriptStep::SleepUntilNextPeriod],
            ),
            task(
                0,
                2,
                2,
                1_000,
                vec![
                    ScriptStep::Terminate { task: 1 },
                    ScriptStep::SleepUntilNextPeriod,
                ],
            ),
        ],
    );
    c.cost.reclaim_per_unit = 1;
    let out = run(&c, at(200)).unwrap();
    let served: Vec<(usize, Instant, Instant)> = out
        .invocations
        .iter()
        .map(|r| (r.task, r.invoked, r.replied))
        .collect();
    assert_eq!(served, vec![(0, at(0), at(5)), (0, at(100), at(105))]);
    assert_eq!(
        out.aborts,
        vec![AbortRecord {
            at: at(2),
            task: 1,
            server: 0,
            pruned: true,
        }]
    );
    assert!(out.jobs.iter().filter(|j| j.task == 1).all(|j| j.killed));
}

/// A lone client as in [`a_lone_client_computes_invokes_and_sleeps`], budget 9, with a
/// context switch of 1 ns (1 cycle at 1 GHz) added to the work of whoever a core switches
/// to. Job 1: switch to the task, which computes 0..4; it invokes at 4, the core switches to
/// the server, which serves 4..7; back to the task, which computes 7..9: response 9, three
/// switches. Job 2 at 10, after the core idled, the same 10 later.
#[test]
fn a_context_switch_is_added_to_the_work_of_whom_the_core_switches_to() {
    let mut c = lone_client_with_budget(9);
    let free = run(&c, at(20)).unwrap();
    assert_eq!(free.context_switches, 6, "counted even when free");
    c.cost.context_switch = 1;
    let out = run(&c, at(20)).unwrap();
    assert_eq!(out.context_switches, 6);
    let served: Vec<_> = out
        .invocations
        .iter()
        .map(|r| (r.invoked, r.replied, r.delay, r.drained))
        .collect();
    assert_eq!(
        served,
        vec![(at(4), at(7), d(3), d(3)), (at(14), at(17), d(3), d(3))]
    );
    let responses: Vec<_> = out.jobs.iter().map(|j| (j.release, j.response)).collect();
    assert_eq!(responses, vec![(at(0), Some(d(9))), (at(10), Some(d(9)))]);
    // The switches are time on the task's behalf: 9 + 9.
    assert_eq!(out.executed, vec![d(18)]);
    assert!(out.aborts.is_empty());
}

/// A preempted task pays a switch again when it resumes. One core: L in R1 (priority 1)
/// computes 10 from 0; H in R0 (priority 2) computes 2 from its release at 5. Switches of
/// 1 ns: L runs 0..5 (1 of switch, 4 of work), H 5..8, L resumes 8..15 (1 of switch, its 6
/// left). Free switches: H 5..7, L done at 12.
#[test]
fn a_preempted_task_pays_a_switch_when_it_resumes() {
    let lone = |work: u64| vec![compute(work), ScriptStep::SleepUntilNextPeriod];
    let mut c = config(
        vec![cluster(&[(50, 100, 2), (50, 100, 1)])],
        GateKind::Protocol(GateProtocol::McIpc),
        vec![task(0, 0, 5, 100, lone(2)), task(0, 1, 0, 100, lone(10))],
    );
    let responses = |out: &ClusterOutcome| -> Vec<_> {
        out.jobs
            .iter()
            .map(|j| (j.task, j.release, j.response))
            .collect()
    };
    let free = run(&c, at(50)).unwrap();
    assert_eq!(
        responses(&free),
        vec![(1, at(0), Some(d(12))), (0, at(5), Some(d(2)))]
    );
    c.cost.context_switch = 1;
    let out = run(&c, at(50)).unwrap();
    assert_eq!(
        responses(&out),
        vec![(1, at(0), Some(d(15))), (0, at(5), Some(d(3)))]
    );
    assert_eq!((free.context_switches, out.context_switches), (3, 3));
    assert_eq!(out.executed, vec![d(3), d(12)]);
}
