//! `McIpcSystem::scenario`: `scenarios/mcipc/one-core.toml` lowered to a scenario, every
//! expected value read by hand from that file (and the mapping in `mc_ipc_scenario.rs`).

mod common;

use std::fs;

use bulwark_core::ipc::GateProtocol;
use bulwark_core::{Duration, Priority};
use bulwark_spec::mc_ipc_toml::McIpcSystem;
use bulwark_spec::{
    parse, parse_mc_ipc, Behaviour, ClusterMember, CostModel, Execution, MemberKind, Replenishment,
    Reservation, Scenario, ServerStep, SporadicOrder, Step,
};
use common::*;

fn one_core() -> McIpcSystem {
    let path = crate_path("../../scenarios/mcipc/one-core.toml");
    let text = fs::read_to_string(&path).expect("one-core.toml is readable");
    parse_mc_ipc(&text, "one-core.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
}

fn lower(phase: Option<usize>, gate: GateProtocol) -> Scenario {
    one_core().scenario(phase, gate, true, 5, ms(1000))
}

fn uniform(min: Duration, max: Duration) -> Execution {
    Execution::Uniform { min, max }
}

fn steps_of(scenario: &Scenario, task: usize) -> &[Step] {
    match &scenario.tasks[task].behaviour {
        Behaviour::Script { steps, .. } => steps,
        other => panic!("not a script: {other:?}"),
    }
}

fn offset_of(scenario: &Scenario, task: usize) -> Duration {
    match &scenario.tasks[task].behaviour {
        Behaviour::Script { offset, .. } => *offset,
        other => panic!("not a script: {other:?}"),
    }
}

/// Compute 0.5-1.5 ms (T1, T2) or 1-1.5 ms (T5..T9), sign with the key (1.5-2 ms), compute
/// 0.2-0.5 ms, sleep to the next release: the file's scripts, cyclic.
fn acquisition(before: (Duration, Duration), period: Duration) -> Vec<Step> {
    vec![Step::Loop {
        count: None,
        body: vec![
            Step::Run(uniform(before.0, before.1)),
            Step::Invoke {
                server: 0,
                operation: Some(uniform(us(1500), ms(2))),
            },
            Step::Run(uniform(us(200), us(500))),
            Step::SleepUntilNextRelease(period),
        ],
    }]
}

/// One cluster C1 of one core (core 0), cycle 100 ms (two partitions): R1 [0, 40) and R2
/// [40, 50) touch but do not overlap, so both are on core 0. R5..R9 are sporadic at
/// priority 0, none SPR: EDF order, so their tasks have no priority; the partitions keep
/// theirs, 1 and 2, and have no reservation. R5..R9 have 20 ms per their period, the default
/// queue of 8, low criticality (the file says nothing of theirs; R1 and R2 are high, but
/// partitions).
#[test]
fn the_system_is_one_edf_cluster_of_two_partitions_and_five_sporadic_reservations() {
    let s = lower(None, GateProtocol::McIpc);
    assert_eq!(s.cores, 1);
    assert_eq!(s.clusters.len(), 1);
    let c = &s.clusters[0];
    assert_eq!(c.name, "C1");
    assert_eq!(c.cores, vec![0]);
    assert_eq!(c.order, SporadicOrder::EarliestDeadlineFirst);
    assert_eq!(c.cycle, ms(100));
    // An MC-IPC system's clusters always reclaim slack.
    assert!(c.slack_reclamation);
    let sporadic = MemberKind::Sporadic {
        replenishment: Replenishment::Sporadic,
        low_budget: None,
    };
    let mut expected = vec![
        ClusterMember {
            task: 0,
            kind: MemberKind::Partition {
                core: 0,
                slots: vec![(ms(0), ms(40))],
            },
        },
        ClusterMember {
            task: 1,
            kind: MemberKind::Partition {
                core: 0,
                slots: vec![(ms(40), ms(50))],
            },
        },
    ];
    expected.extend((2..7).map(|task| ClusterMember {
        task,
        kind: sporadic.clone(),
    }));
    assert_eq!(c.members, expected);

    let names: Vec<&str> = s.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["T1", "T2", "T5", "T6", "T7", "T8", "T9"]);
    let periods = [100, 150, 250, 500, 1000];
    for (i, task) in s.tasks.iter().enumerate() {
        assert_eq!(task.core, 0, "{}", task.name);
        let priority = match i {
            0 => Some(Priority(1)),
            1 => Some(Priority(2)),
            _ => None,
        };
        assert_eq!(task.priority, priority, "{}", task.name);
        assert_eq!(task.deadline, None, "{}", task.name);
        let reservation = (i >= 2).then(|| Reservation::new(ms(20), ms(periods[i - 2])));
        assert_eq!(task.reservation, reservation, "{}", task.name);
    }
    assert_eq!(Reservation::DEFAULT_REPLENISHMENTS, 8);
    let offsets = [0, 40, 7, 20, 33, 46, 59];
    for (i, offset) in offsets.iter().enumerate() {
        assert_eq!(offset_of(&s, i), ms(*offset), "{}", s.tasks[i].name);
    }
    assert_eq!(steps_of(&s, 0), acquisition((us(500), us(1500)), ms(100)));
    assert_eq!(steps_of(&s, 1), acquisition((us(500), us(1500)), ms(100)));
    for (i, period) in periods.iter().enumerate() {
        assert_eq!(
            steps_of(&s, i + 2),
            acquisition((ms(1), us(1500)), ms(*period))
        );
    }

    assert_eq!(s.servers.len(), 1);
    let key = &s.servers[0];
    assert_eq!(key.name, "key");
    assert_eq!(key.gate, GateProtocol::McIpc);
    assert_eq!(key.body, vec![ServerStep::Run(Execution::Fixed(ms(2)))]);
    assert!(key.bandwidth_inheritance);
    assert_eq!(key.priority, None);
    assert!(key.pruned_to_background);
    assert_eq!(key.clients, (0..7).collect::<Vec<_>>());

    assert_eq!(s.policy, bulwark_spec::PolicyKind::FixedPriority);
    assert!(s.core_policies.is_empty());
    assert!(s.groups.is_empty());
    assert_eq!(s.vbs, None);
    assert_eq!(s.cost, CostModel::default());
    assert_eq!((s.seed, s.duration), (5, ms(1000)));
}

/// Only an mc-ipc gate has a background queue.
#[test]
fn other_gates_reissue_pruned_requests() {
    for gate in [GateProtocol::FifoIpc, GateProtocol::PrioIpc] {
        let s = lower(Some(0), gate);
        assert_eq!(s.servers[0].gate, gate);
        assert!(!s.servers[0].pruned_to_background);
    }
}

/// Phase 2 (index 1): T5 floods, 10 us of flood-gap then its first invocation, for ever;
/// everything else as in the system.
#[test]
fn a_flooding_task_computes_the_gap_and_invokes_for_ever() {
    let s = lower(Some(1), GateProtocol::McIpc);
    assert_eq!(s.name, "the 100 ms low-criticality task floods");
    assert_eq!(
        steps_of(&s, 2),
        [Step::Loop {
            count: None,
            body: vec![
                Step::Run(Execution::Fixed(us(10))),
                Step::Invoke {
                    server: 0,
                    operation: Some(uniform(us(1500), ms(2))),
                },
            ],
        }]
    );
    let base = lower(None, GateProtocol::McIpc);
    for task in [0, 1, 3, 4, 5, 6] {
        assert_eq!(s.tasks[task], base.tasks[task]);
    }
    assert_eq!(s.clusters, base.clusters);
}

/// Phase 3 (index 2): 16 copies on C1, each in a new sporadic reservation of 100 ms per
/// 3000 ms at priority 0, low criticality; still EDF (every sporadic priority is 0). Copy k
/// is first released at 90 ms + k * 20 us.
#[test]
fn sixteen_copies_each_in_a_sporadic_reservation_of_their_own() {
    let s = lower(Some(2), GateProtocol::McIpc);
    assert_eq!(s.tasks.len(), 7 + 16);
    let c = &s.clusters[0];
    assert_eq!(c.order, SporadicOrder::EarliestDeadlineFirst);
    assert_eq!(c.members.len(), 23);
    let script = vec![Step::Loop {
        count: None,
        body: vec![
            Step::Run(uniform(us(100), us(300))),
            Step::Invoke {
                server: 0,
                operation: Some(uniform(us(1500), ms(2))),
            },
            Step::Run(uniform(us(100), us(300))),
            Step::SleepUntilNextRelease(ms(3000)),
        ],
    }];
    for k in 0..16u64 {
        let task = 7 + k as usize;
        let spec = &s.tasks[task];
        assert_eq!(spec.name, format!("+C1.{k}"));
        assert_eq!(spec.core, 0);
        assert_eq!(spec.priority, None);
        assert_eq!(spec.reservation, Some(Reservation::new(ms(100), ms(3000))));
        assert_eq!(offset_of(&s, task), us(90_000 + 20 * k));
        assert_eq!(steps_of(&s, task), script);
        assert_eq!(
            c.members[task],
            ClusterMember {
                task,
                kind: MemberKind::Sporadic {
                    replenishment: Replenishment::Sporadic,
                    low_budget: None,
                },
            }
        );
    }
    assert_eq!(s.servers[0].clients, (0..23).collect::<Vec<_>>());
}

/// The lowered system is what a scenario file saying the same reads into (written here by
/// hand from one-core.toml), so the lowering gives every member what the validator gives it,
/// but for the partitions' priorities: a file cannot give them under `order = "edf"`, and
/// the lowering keeps them (see `mc_ipc_scenario.rs`).
#[test]
fn the_lowering_is_what_a_scenario_file_reads_into() {
    let acquisition = |before: &str, period: &str| {
        format!(
            "[{{ loop = \"forever\", body = [{{ run = {before} }}, {{ invoke = \"key\", \
             operation = {{ uniform = [\"1500us\", \"2ms\"] }} }}, {{ run = [\"200us\", \
             \"500us\"] }}, {{ sleep-until-next-release = \"{period}\" }}] }}]"
        )
    };
    let mut text = String::from(
        "name = \"system\"\npolicy = \"fixed-priority\"\ncores = 1\nseed = 5\n\
         duration = \"1000ms\"\n\n[[cluster]]\nname = \"C1\"\ncores = [0]\norder = \"edf\"\n\
         cycle = \"100ms\"\nslack-reclamation = true\n\n[[server]]\nname = \"key\"\ngate = \"mc-ipc\"\n\
         operation = \"2ms\"\nbandwidth-inheritance = true\npruned = \"background\"\n",
    );
    let partitions = [("T1", "0ms", "0ms", "40ms"), ("T2", "40ms", "40ms", "50ms")];
    for (name, offset, start, end) in partitions {
        text += &format!(
            "\n[[task]]\nname = \"{name}\"\ncluster = \"C1\"\noffset = \"{offset}\"\n\
             reservation = {{ core = 0, slots = [[\"{start}\", \"{end}\"]] }}\nscript = {}\n",
            acquisition("[\"500us\", \"1500us\"]", "100ms")
        );
    }
    let sporadic = [
        ("T5", "7ms", "100ms"),
        ("T6", "20ms", "150ms"),
        ("T7", "33ms", "250ms"),
        ("T8", "46ms", "500ms"),
        ("T9", "59ms", "1000ms"),
    ];
    for (name, offset, period) in sporadic {
        text += &format!(
            "\n[[task]]\nname = \"{name}\"\ncluster = \"C1\"\noffset = \"{offset}\"\n\
             reservation = {{ budget = \"20ms\", period = \"{period}\" }}\nscript = {}\n",
            acquisition("[\"1ms\", \"1500us\"]", period)
        );
    }
    let file = parse(&text, "one-core-lowered.toml").unwrap_or_else(|d| panic!("{}", d.plain()));
    let mut lowered = lower(None, GateProtocol::McIpc);
    assert_eq!(lowered.tasks[0].priority, Some(Priority(1)));
    assert_eq!(lowered.tasks[1].priority, Some(Priority(2)));
    lowered.tasks[0].priority = None;
    lowered.tasks[1].priority = None;
    assert_eq!(
        Scenario {
            description: String::new(),
            ..lowered
        },
        file
    );
}

fn read_system(name: &str) -> McIpcSystem {
    let path = crate_path(&format!("../../scenarios/mcipc/{name}"));
    let text = fs::read_to_string(&path).expect("readable");
    parse_mc_ipc(&text, name).unwrap_or_else(|d| panic!("{}", d.plain()))
}

/// The case study: four one-core clusters on cores 0..3. C2 holds R2 [0, 50) and R3
/// [50, 100), which do not overlap: both on core 1. Phase 6 (index 5) adds 15 tasks into R4
/// (T4's, on C3, core 2): each shares T4's reservation, first released at 20 us + k * 20 us.
#[test]
fn copies_into_an_existing_reservation_share_its_owner() {
    let s =
        read_system("case-study.toml").scenario(Some(5), GateProtocol::PrioIpc, true, 1, ms(1000));
    let cores: Vec<Vec<u16>> = s.clusters.iter().map(|c| c.cores.clone()).collect();
    assert_eq!(cores, [vec![0], vec![1], vec![2], vec![3]]);
    assert_eq!(
        s.clusters[1]
            .members
            .iter()
            .map(|m| &m.kind)
            .collect::<Vec<_>>(),
        [
            &MemberKind::Partition {
                core: 1,
                slots: vec![(ms(0), ms(50))]
            },
            &MemberKind::Partition {
                core: 1,
                slots: vec![(ms(50), ms(100))]
            },
        ]
    );
    // The partitions keep their priorities 1..4; every cluster is EDF-ordered.
    for (task, priority) in [(0, 1), (1, 2), (2, 3), (3, 4)] {
        assert_eq!(s.tasks[task].priority, Some(Priority(priority)));
    }
    assert!(s
        .clusters
        .iter()
        .all(|c| c.order == SporadicOrder::EarliestDeadlineFirst));
    assert!(
        !s.servers[0].pruned_to_background,
        "prio-ipc has no background queue"
    );
    assert_eq!(s.tasks.len(), 14 + 15);
    let c3 = &s.clusters[2];
    for k in 0..15u64 {
        let task = 14 + k as usize;
        assert_eq!(s.tasks[task].name, format!("+C3.{k}"));
        assert_eq!(s.tasks[task].core, 2);
        assert_eq!(
            (s.tasks[task].priority, s.tasks[task].reservation),
            (None, None)
        );
        assert_eq!(offset_of(&s, task), us(20 + 20 * k));
        assert!(c3.members.contains(&ClusterMember {
            task,
            kind: MemberKind::Shared { owner: 3 },
        }));
    }
}

/// Phase 8 (index 7): 20 best-effort copies on each cluster, sharing one best-effort
/// reservation per cluster: the first copy's, the others `Shared` on it.
#[test]
fn best_effort_copies_share_one_reservation_per_cluster() {
    let s =
        read_system("case-study.toml").scenario(Some(7), GateProtocol::McIpc, false, 1, ms(1000));
    assert!(!s.servers[0].pruned_to_background, "not asked for");
    assert_eq!(s.tasks.len(), 14 + 4 * 20);
    for (k, cluster) in s.clusters.iter().enumerate() {
        let first = 14 + 20 * k;
        let copies: Vec<&ClusterMember> = cluster.members.iter().filter(|m| m.task >= 14).collect();
        assert_eq!(copies.len(), 20);
        assert_eq!(
            *copies[0],
            ClusterMember {
                task: first,
                kind: MemberKind::BestEffort
            }
        );
        for (n, member) in copies.iter().enumerate().skip(1) {
            assert_eq!(
                **member,
                ClusterMember {
                    task: first + n,
                    kind: MemberKind::Shared { owner: first },
                }
            );
        }
        assert_eq!(s.tasks[first + 3].name, format!("+C{}.3", k + 1));
        assert_eq!(offset_of(&s, first + 3), us(90_000 + 60));
    }
    assert_eq!(s.servers[0].clients, (0..94).collect::<Vec<_>>());
}

/// SPR servers (S = 8) at rate-monotonic priorities on C3 and C4: those clusters are ordered
/// by fixed priority, their tasks keep their priorities; C1 and C2 hold only partitions and
/// are EDF-ordered (no sporadic reservation to differ), their partitions at 11..13.
#[test]
fn spr_servers_order_their_clusters_by_fixed_priority() {
    let s = read_system("spr-clients.toml").scenario(None, GateProtocol::McIpc, true, 1, ms(1000));
    let orders: Vec<SporadicOrder> = s.clusters.iter().map(|c| c.order).collect();
    use SporadicOrder::{EarliestDeadlineFirst as Edf, FixedPriority as Fp};
    assert_eq!(orders, [Edf, Edf, Fp, Fp]);
    let priorities: Vec<Option<u8>> = s.tasks.iter().map(|t| t.priority.map(|p| p.0)).collect();
    let expected: Vec<Option<u8>> = [11, 12, 13, 14, 5, 4, 3, 2, 1, 5, 4, 3, 2, 1]
        .into_iter()
        .map(Some)
        .collect();
    assert_eq!(priorities, expected);
    // T5, in R5: 20 ms per 100 ms, an SPR server with a queue of 8.
    assert_eq!(
        s.tasks[4].reservation,
        Some(Reservation::new(ms(20), ms(100)).with_replenishments(8))
    );
    assert!(s.clusters[2].members.contains(&ClusterMember {
        task: 4,
        kind: MemberKind::Sporadic {
            replenishment: Replenishment::Spr { slots: 8 },
            low_budget: None,
        },
    }));
}

/// Constant-bandwidth servers keep EDF order; the rogue T15 is in group `rogue` (task 14),
/// and the watchdog T16 terminates it by name.
#[test]
fn cbs_servers_groups_and_terminations_carry_over() {
    let s = read_system("cbs-rogue.toml").scenario(None, GateProtocol::McIpc, true, 1, ms(1000));
    assert!(s
        .clusters
        .iter()
        .all(|c| c.order == SporadicOrder::EarliestDeadlineFirst));
    assert!(s.clusters[0].members.contains(&ClusterMember {
        task: 14,
        kind: MemberKind::Sporadic {
            replenishment: Replenishment::ConstantBandwidth,
            low_budget: None,
        },
    }));
    assert_eq!(s.groups.len(), 1);
    assert_eq!(
        (s.groups[0].name.as_str(), s.groups[0].quota),
        ("rogue", ms(1))
    );
    assert_eq!(s.groups[0].members, vec![14]);
    assert_eq!(s.tasks[15].name, "T16");
    assert_eq!(
        steps_of(&s, 15),
        [Step::Loop {
            count: None,
            body: vec![
                Step::Terminate {
                    task: "T15".to_owned(),
                    step: None
                },
                Step::SleepUntilNextRelease(ms(10_000)),
            ],
        }]
    );
    assert_eq!(s.cost.reclaim_per_unit, 13);
}
