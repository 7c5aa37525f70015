//! The TOML form of an MC-IPC system: the paper's case study and the module's example read
//! into the exact system they describe; every file in `tests/invalid_mc_ipc/` is rejected with
//! exactly the diagnostics written beside it.
//!
//! Each `NAME.toml` there has a `NAME.expected` holding one `file:line:column: message` line
//! per error, in file order, worked out by hand from the file (lines and columns count from 1,
//! columns in characters).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use bulwark_core::reclaim::ObjectKind;
use bulwark_core::{Duration, Priority};
use bulwark_spec::mc_ipc_toml::{
    AddedReservation, Addition, Cluster, Criticality, Execution, GateProtocol, Invocation,
    McIpcSystem, PerCriticality, Phase, Replenishment, Reservation, ReservationKind, ScriptStep,
    Server, Slot, Task, TaskTemplate, DEFAULT_FLOOD_GAP,
};
use bulwark_spec::{parse_mc_ipc, CostModel, Diagnostics, GroupSpec};
use common::mc_ipc::{errors, read};
use common::*;
use proptest::prelude::*;

fn compute(min: Duration, max: Duration) -> ScriptStep {
    ScriptStep::Compute(Execution::between(min, max))
}

fn invoke(server: usize, min: Duration, max: Duration) -> ScriptStep {
    ScriptStep::Invoke {
        server,
        length: Execution::between(min, max),
    }
}

/// Compute, sign with the key server (1.5-2 ms), compute, sleep: the case study's jobs.
fn acquisition(before: (Duration, Duration), after: (Duration, Duration)) -> Vec<ScriptStep> {
    vec![
        compute(before.0, before.1),
        invoke(0, us(1500), ms(2)),
        compute(after.0, after.1),
        ScriptStep::SleepUntilNextPeriod,
    ]
}

fn high_criticality_job() -> Vec<ScriptStep> {
    acquisition((us(500), us(1500)), (us(200), us(500)))
}

fn low_criticality_job() -> Vec<ScriptStep> {
    acquisition((ms(1), us(1500)), (us(200), us(500)))
}

fn short_job() -> Vec<ScriptStep> {
    acquisition((us(100), us(300)), (us(100), us(300)))
}

fn invalid_dir() -> PathBuf {
    crate_path("tests/invalid_mc_ipc")
}

fn case_study_path() -> PathBuf {
    crate_path("../../scenarios/mcipc/case-study.toml")
}

fn diagnostics_of(path: &Path) -> Diagnostics {
    rejection(path, parse_mc_ipc)
}

#[test]
fn every_fixture_gives_exactly_its_expected_diagnostics() {
    assert_expected_diagnostics(fixtures(&invalid_dir(), "toml"), diagnostics_of);
}

#[test]
fn every_fixture_is_rejected_with_located_helpful_errors() {
    let paths = fixtures(&invalid_dir(), "toml");
    assert_fixtures_rejected_helpfully(paths, 25, diagnostics_of);
}

/// The help of the only (or first) error in a fixture.
fn first_help(name: &str) -> String {
    let diagnostics = diagnostics_of(&invalid_dir().join(name));
    diagnostics.errors()[0].help().to_owned()
}

#[test]
fn helps_say_what_is_allowed() {
    assert_eq!(
        first_help("unknown_protocol.toml"),
        "allowed: mc-ipc, fifo-ipc, prio-ipc"
    );
    assert_eq!(first_help("unknown_criticality.toml"), "allowed: low, high");
    assert_eq!(
        first_help("unknown_key.toml"),
        "allowed: `name`, `cluster`, `criticality`, `priority`, `slots`, `budget`, `period`, \
         `replenishment`, `replenishments`, `execution`, `invokes`"
    );
    assert_eq!(
        first_help("unknown_level_key.toml"),
        "allowed: `low` or `high`"
    );
    assert_eq!(first_help("unknown_cluster.toml"), "allowed: C1, C2");
    assert_eq!(first_help("unknown_server.toml"), "allowed: key, log");
    assert_eq!(
        first_help("priority_out_of_range.toml"),
        "allowed: 0..=255, larger is more important"
    );
    assert_eq!(
        first_help("budget_larger_than_period.toml"),
        "a reservation's budget must be at most its period"
    );
    assert_eq!(
        first_help("missing_key.toml"),
        "add priority = ... to this table"
    );
    assert!(first_help("slots_without_cycle.toml").contains("cycle = \"100ms\""));
    assert!(first_help("overlapping_slots.toml").contains("section III"));
    assert!(first_help("bad_times.toml").contains("ns, us (or \u{b5}s), ms, s"));
    assert_eq!(
        first_help("unknown_script_steps.toml"),
        "allowed: { compute = [\"min\", \"max\"] }, { invoke = \"key\", length = [\"min\", \
         \"max\"] } (length optional), { allocate = 1000, object = \"semaphore\" } (object \
         optional), { terminate = \"task\" } or \"sleep\""
    );
    assert_eq!(
        first_help("existing_reservation_on_other_clusters.toml"),
        "allowed: clusters = [\"C1\"], the existing reservation's cluster"
    );
    assert_eq!(
        first_help("invoke_length_above_server.toml"),
        "allowed: lengths up to the server's high operation length L^H = 2ms"
    );
    assert_eq!(first_help("unknown_task_references.toml"), "allowed: R1");
    assert!(first_help("flood_without_invoke.toml").contains("invoke"));
    assert!(first_help("sleep_only_script.toml")
        .contains("at least one computing, invoking, allocating or terminating"));
    assert_eq!(
        first_help("unknown_replenishment.toml"),
        "allowed: sporadic (the default), cbs, spr"
    );
    let cbs_help = first_help("cbs_high_criticality.toml");
    assert!(cbs_help.contains("section VII") && cbs_help.contains("per-job budget"));
    assert!(first_help("replenishment_with_slots.toml").contains("budget and period"));
    assert_eq!(
        first_help("unknown_group.toml"),
        "allowed: services, drivers"
    );
    assert_eq!(
        first_help("terminate_itself.toml"),
        "allowed: another task: rogue"
    );
    assert_eq!(
        first_help("terminate_unknown_task.toml"),
        "allowed: guard, rogue"
    );
    assert_eq!(
        first_help("allocate_bad_object.toml"),
        "allowed: semaphore, mapping, endpoint"
    );
    assert_eq!(
        first_help("allocate_zero.toml"),
        "allowed: how many kernel objects to allocate, 1 or more"
    );
    assert_eq!(
        first_help("unknown_cost_key.toml"),
        "allowed: `clock`, `context-switch` and `reclaim-per-unit`"
    );
    for name in [
        "group_without_reclaim_cost.toml",
        "reclaim_steps_without_cost.toml",
    ] {
        assert_eq!(
            first_help(name),
            "add reclaim-per-unit = ... (cycles, above zero) to [cost]"
        );
    }
    assert_eq!(
        first_help("duplicate_group_names.toml"),
        "allowed: a name no other group in this system has"
    );
    let plain = diagnostics_of(&invalid_dir().join("unknown_protocol.toml")).plain();
    assert_eq!(
        plain,
        "unknown_protocol.toml:1:12: unknown protocol `mcipc` (allowed: mc-ipc, fifo-ipc, \
         prio-ipc)\n"
    );
}

/// Section VI-A, as `scenarios/mcipc/case-study.toml` writes it.
fn case_study() -> McIpcSystem {
    let key = vec![Invocation {
        server: 0,
        count: 1,
    }];
    let partition = |name: &str, cluster: usize, priority: u8, from: u64, to: u64| Reservation {
        name: name.into(),
        cluster,
        criticality: Criticality::High,
        priority: Priority(priority),
        kind: ReservationKind::TableDriven {
            slots: vec![Slot::new(ms(from), ms(to))],
        },
        execution: PerCriticality::uniform(ms(2)),
        invocations: key.clone(),
    };
    let mut reservations = vec![
        partition("R1", 0, 1, 0, 50),
        partition("R2", 1, 2, 0, 50),
        partition("R3", 1, 3, 50, 100),
        partition("R4", 2, 4, 0, 50),
    ];
    for (cluster, first) in [(2, 5), (3, 10)] {
        for (number, period) in (first..).zip([100, 150, 250, 500, 1000]) {
            reservations.push(Reservation {
                name: format!("R{number}"),
                cluster,
                criticality: Criticality::Low,
                priority: Priority(0),
                kind: ReservationKind::Sporadic {
                    budget: ms(20),
                    period: ms(period),
                    replenishment: Replenishment::Sporadic,
                },
                execution: PerCriticality::uniform(ms(2)),
                invocations: key.clone(),
            });
        }
    }
    let task = |number: usize, reservation: usize, period: u64, offset: u64, script| Task {
        name: format!("T{number}"),
        reservation,
        period: ms(period),
        offset: ms(offset),
        script,
    };
    // T1..T4 in the partitions, T3 at 50 ms.
    let mut tasks: Vec<Task> = [0, 0, 50, 0]
        .into_iter()
        .enumerate()
        .map(|(i, offset)| task(i + 1, i, 100, offset, high_criticality_job()))
        .collect();
    // T5..T14: offsets (7 + 13 (k + 5 c)) mod period, as bulwark-lab builds them.
    for c in 0..2 {
        for (k, period) in [100, 150, 250, 500, 1000].into_iter().enumerate() {
            let i = 4 + 5 * c + k;
            let offset = (7 + 13 * (k as u64 + 5 * c as u64)) % period;
            tasks.push(task(i + 1, i, period, offset, low_criticality_job()));
        }
    }
    let every_core = vec![0, 1, 2, 3];
    let extra_in_r4 = Addition {
        clusters: vec![2],
        count: 15,
        reservation: AddedReservation::Existing(3),
        task: TaskTemplate {
            period: ms(100),
            offset: us(20),
            stagger: us(20),
            script: high_criticality_job(),
        },
    };
    let phase = |name: &str, floods: Vec<usize>, additions: Vec<Addition>| Phase {
        name: name.into(),
        floods,
        additions,
    };
    let phases = vec![
        phase("normal operation", vec![], vec![]),
        phase("a low-criticality task on C4 floods", vec![9], vec![]),
        phase(
            "16 extra low-criticality reservations per core",
            vec![],
            vec![Addition {
                clusters: every_core.clone(),
                count: 16,
                reservation: AddedReservation::Sporadic {
                    criticality: Criticality::Low,
                    priority: Priority(0),
                    budget: ms(100),
                    period: ms(3000),
                    replenishment: Replenishment::Sporadic,
                },
                task: TaskTemplate {
                    period: ms(3000),
                    offset: ms(90),
                    stagger: us(20),
                    script: short_job(),
                },
            }],
        ),
        phase("the task in R4 (highest priority) floods", vec![3], vec![]),
        phase("the tasks in R2 and R4 flood", vec![1, 3], vec![]),
        phase(
            "R4 launches 15 extra correct tasks",
            vec![],
            vec![extra_in_r4.clone()],
        ),
        phase(
            "15 extra tasks in R4, and the task in R2 floods",
            vec![1],
            vec![extra_in_r4],
        ),
        phase(
            "20 best-effort tasks per core",
            vec![],
            vec![Addition {
                clusters: every_core,
                count: 20,
                reservation: AddedReservation::BestEffort,
                task: TaskTemplate {
                    period: ms(100),
                    offset: ms(90),
                    stagger: us(20),
                    script: short_job(),
                },
            }],
        ),
    ];
    McIpcSystem {
        protocol: Some(GateProtocol::McIpc),
        cycle: Some(ms(100)),
        clusters: (1..=4)
            .map(|k| Cluster {
                name: format!("C{k}"),
                cores: 1,
            })
            .collect(),
        servers: vec![Server {
            name: "key".into(),
            operation_length: PerCriticality::uniform(ms(2)),
            invoking_clusters: PerCriticality::uniform(None),
        }],
        reservations,
        tasks,
        phases,
        flood_gap: us(10),
        groups: vec![],
        cost: CostModel::default(),
    }
}

#[test]
fn the_case_study_reads_into_the_papers_system() {
    let text = fs::read_to_string(case_study_path()).expect("the case study file is readable");
    let system = read(&text);
    assert_eq!(system, case_study());
    assert_eq!(system.reservations.len(), 14);
}

/// A few values of the case study worked out by hand from section VI and `bulwark-lab`'s
/// `mcipc_case_study`, independently of the model built above.
#[test]
fn the_case_study_has_its_tasks_and_phases() {
    let text = fs::read_to_string(case_study_path()).expect("the case study file is readable");
    let system = read(&text);
    assert_eq!(system.flood_gap, us(10));
    assert_eq!(system.tasks.len(), 14);
    // Every reservation has exactly one task, the one of its number.
    for (i, task) in system.tasks.iter().enumerate() {
        assert_eq!(task.name, format!("T{}", i + 1));
        assert_eq!(task.reservation, i);
        assert_eq!(
            system.reservations[task.reservation].name,
            format!("R{}", i + 1)
        );
    }
    // T3 starts with its slot; T10 is the first (k = 0) of C4's (c = 1): (7 + 13 * 5) % 100.
    assert_eq!(system.tasks[2].offset, ms(50));
    let t10 = &system.tasks[9];
    assert_eq!((t10.period, t10.offset), (ms(100), ms(72)));
    // T14: (7 + 13 * 9) % 1000 = 124; T8: (7 + 13 * 3) % 500 = 46.
    assert_eq!(system.tasks[13].offset, ms(124));
    assert_eq!(system.tasks[7].offset, ms(46));
    assert_eq!(
        t10.script,
        [
            ScriptStep::Compute(Execution::between(ms(1), us(1500))),
            ScriptStep::Invoke {
                server: 0,
                length: Execution::between(us(1500), ms(2))
            },
            ScriptStep::Compute(Execution::between(us(200), us(500))),
            ScriptStep::SleepUntilNextPeriod,
        ]
    );

    let names: Vec<&str> = system.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 8);
    assert_eq!(names[0], "normal operation");
    assert_eq!(names[7], "20 best-effort tasks per core");
    let floods: Vec<&[usize]> = system.phases.iter().map(|p| p.floods.as_slice()).collect();
    assert_eq!(floods, [&[][..], &[9], &[], &[3], &[1, 3], &[], &[1], &[]]);

    // Phase 3: on every core 16 new sporadic reservations of 100 ms per 3 s.
    let [third] = system.phases[2].additions.as_slice() else {
        panic!("phase 3 adds once: {:?}", system.phases[2].additions);
    };
    assert_eq!(third.clusters, [0, 1, 2, 3]);
    assert_eq!(third.count, 16);
    assert_eq!(
        third.reservation,
        AddedReservation::Sporadic {
            criticality: Criticality::Low,
            priority: Priority(0),
            budget: ms(100),
            period: ms(3000),
            replenishment: Replenishment::Sporadic,
        }
    );
    assert_eq!(third.task.period, ms(3000));
    // Copy k at 90 ms + 20 us k: the last, k = 15, at 90.3 ms.
    assert_eq!(third.task.offset, ms(90));
    assert_eq!(third.task.stagger, us(20));
    let last = third
        .task
        .offset
        .saturating_add(third.task.stagger.saturating_mul(15));
    assert_eq!(last, us(90_300));
    assert_eq!(third.task.script[0], compute(us(100), us(300)));

    // Phase 6: 15 tasks in R4 itself, on C3, copy k at 20 us (k + 1).
    let [sixth] = system.phases[5].additions.as_slice() else {
        panic!("phase 6 adds once: {:?}", system.phases[5].additions);
    };
    assert_eq!(sixth.reservation, AddedReservation::Existing(3));
    assert_eq!(system.reservations[3].name, "R4");
    assert_eq!(sixth.clusters, [system.reservations[3].cluster]);
    assert_eq!(sixth.count, 15);
    assert_eq!(
        (sixth.task.period, sixth.task.offset, sixth.task.stagger),
        (ms(100), us(20), us(20))
    );
    assert_eq!(sixth.task.script, system.tasks[0].script);
    // Phase 7 is phase 6's addition with T2 flooding.
    assert_eq!(system.phases[6].additions, system.phases[5].additions);
    assert_eq!(
        system.phases[7].additions[0].reservation,
        AddedReservation::BestEffort
    );
}

/// The ```toml example of the module documentation, so that it stays valid.
fn documented_example() -> String {
    let source = include_str!("../src/mc_ipc_toml.rs");
    let mut lines = source
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.strip_prefix("//! ").unwrap_or(""))
        .skip_while(|line| *line != "```toml")
        .skip(1);
    let example: Vec<&str> = lines.by_ref().take_while(|line| *line != "```").collect();
    assert!(example.len() > 20, "no example found");
    example.join("\n") + "\n"
}

#[test]
fn the_documented_example_reads_into_its_system() {
    let system = read(&documented_example());
    let key = |min, max| invoke(0, min, max);
    let expected = McIpcSystem {
        protocol: Some(GateProtocol::McIpc),
        cycle: Some(ms(100)),
        clusters: vec![
            Cluster {
                name: "C1".into(),
                cores: 1,
            },
            Cluster {
                name: "C2".into(),
                cores: 2,
            },
        ],
        servers: vec![Server {
            name: "key".into(),
            operation_length: PerCriticality::uniform(ms(2)),
            invoking_clusters: PerCriticality {
                low: Some(1),
                high: Some(2),
            },
        }],
        reservations: vec![
            Reservation {
                name: "R1".into(),
                cluster: 0,
                criticality: Criticality::High,
                priority: Priority(2),
                kind: ReservationKind::TableDriven {
                    slots: vec![Slot::new(ms(0), ms(50))],
                },
                execution: PerCriticality {
                    low: ms(2),
                    high: ms(3),
                },
                invocations: vec![Invocation {
                    server: 0,
                    count: 1,
                }],
            },
            Reservation {
                name: "R2".into(),
                cluster: 1,
                criticality: Criticality::Low,
                priority: Priority(1),
                kind: ReservationKind::Sporadic {
                    budget: ms(20),
                    period: ms(100),
                    replenishment: Replenishment::ConstantBandwidth,
                },
                execution: PerCriticality::uniform(ms(5)),
                invocations: vec![Invocation {
                    server: 0,
                    count: 2,
                }],
            },
        ],
        tasks: vec![
            Task {
                name: "T1".into(),
                reservation: 0,
                period: ms(100),
                offset: ms(0),
                script: vec![
                    compute(us(500), us(1500)),
                    key(us(1500), ms(2)),
                    compute(us(200), us(200)),
                    ScriptStep::SleepUntilNextPeriod,
                ],
            },
            Task {
                name: "T2".into(),
                reservation: 1,
                period: ms(100),
                offset: ms(0),
                // The length left out: exactly the server's L^H.
                script: vec![
                    compute(ms(1), ms(1)),
                    key(ms(2), ms(2)),
                    ScriptStep::SleepUntilNextPeriod,
                ],
            },
            Task {
                name: "T3".into(),
                reservation: 1,
                period: ms(100),
                offset: ms(0),
                script: vec![
                    ScriptStep::Allocate {
                        count: 1000,
                        object: ObjectKind::MemoryMapping,
                    },
                    ScriptStep::Terminate { task: 1 },
                    ScriptStep::SleepUntilNextPeriod,
                ],
            },
        ],
        phases: vec![
            Phase {
                name: "normal operation".into(),
                floods: vec![],
                additions: vec![],
            },
            Phase {
                name: "T2 floods".into(),
                floods: vec![1],
                additions: vec![],
            },
            Phase {
                name: "extra tasks".into(),
                floods: vec![],
                additions: vec![
                    Addition {
                        clusters: vec![0, 1],
                        count: 4,
                        reservation: AddedReservation::Sporadic {
                            criticality: Criticality::Low,
                            priority: Priority(0),
                            budget: ms(10),
                            period: ms(1000),
                            replenishment: Replenishment::Sporadic,
                        },
                        task: TaskTemplate {
                            period: ms(1000),
                            offset: ms(90),
                            stagger: us(20),
                            script: vec![
                                compute(us(100), us(100)),
                                ScriptStep::SleepUntilNextPeriod,
                            ],
                        },
                    },
                    Addition {
                        clusters: vec![0],
                        count: 2,
                        reservation: AddedReservation::Existing(0),
                        task: TaskTemplate {
                            period: ms(100),
                            offset: ms(0),
                            stagger: ms(0),
                            script: vec![key(ms(1), ms(1)), ScriptStep::SleepUntilNextPeriod],
                        },
                    },
                    Addition {
                        clusters: vec![1],
                        count: 3,
                        reservation: AddedReservation::BestEffort,
                        task: TaskTemplate {
                            period: ms(100),
                            offset: ms(0),
                            stagger: ms(0),
                            script: vec![compute(ms(1), ms(1)), ScriptStep::SleepUntilNextPeriod],
                        },
                    },
                ],
            },
        ],
        flood_gap: us(10),
        // T2 (task 1) names the group.
        groups: vec![GroupSpec {
            name: "services".into(),
            quota: ms(1),
            members: vec![1],
        }],
        cost: CostModel {
            clock_hz: 1_000_000_000,
            reclaim_per_unit: 13,
            ..CostModel::default()
        },
    };
    assert_eq!(system, expected);
}

#[test]
fn tasks_and_phases_are_optional() {
    let system = read(SMALL);
    assert!(system.tasks.is_empty() && system.phases.is_empty());
    assert_eq!(system.flood_gap, DEFAULT_FLOOD_GAP);
    assert_eq!(DEFAULT_FLOOD_GAP, us(10));
}

#[test]
fn script_steps_and_additions_are_judged() {
    let task = |script: &str| {
        format!("{SMALL}\n[[task]]\nname = \"T\"\nreservation = \"A\"\nperiod = \"10ms\"\nscript = {script}\n")
    };
    // The script is on line 56; its `[` at column 10.
    assert_eq!(
        read(&task(
            "[{ invoke = \"log\" }, { compute = [\"1ms\", \"1ms\"] }]"
        ))
        .tasks[0]
            .script,
        [invoke(1, us(500), us(500)), compute(ms(1), ms(1))]
    );
    assert_eq!(
        errors(&task("[\"sleep\", \"sleep\"]")),
        ["f.toml:56:10: this script only sleeps: with nothing to compute, invoke, allocate or terminate, its task would spin"]
    );
    assert_eq!(
        errors(&task("[{ compute = \"1ms\", invoke = \"key\" }]")),
        ["f.toml:56:39: a script step either computes or invokes, not both"]
    );
    assert_eq!(
        errors(&task("[{ length = \"1ms\" }]")),
        ["f.toml:56:22: `length` is an invocation's, but this step has no `invoke`"]
    );
    assert_eq!(
        errors(&task("[{ compute = \"1ms\", length = \"1ms\" }]")),
        ["f.toml:56:39: `length` is an invocation's, but this step computes"]
    );
    assert_eq!(
        errors(&task("[{}]")),
        ["f.toml:56:11: this script step is empty"]
    );
    assert_eq!(
        errors(&task("[{ compute = [\"1ms\"] }]")),
        ["f.toml:56:23: a range needs two times, [min, max], but has 1"]
    );
    assert_eq!(
        errors(&task("[3]")),
        ["f.toml:56:11: invalid type: integer `3`"]
    );
    // An invalid flood gap; a cluster listed twice; an addition without clusters.
    let gap = format!("flood-gap = \"0us\"\n{SMALL}");
    assert_eq!(errors(&gap), ["f.toml:1:13: flood gap cannot be zero"]);
    let add = |clusters: &str| {
        format!("{SMALL}\n[[phase]]\nname = \"P\"\n[[phase.add]]\nclusters = {clusters}\ncount = 1\n\
                 reservation = \"best-effort\"\ntask = {{ period = \"1ms\", script = [{{ compute = \"1us\" }}] }}\n")
    };
    assert_eq!(
        read(&add("[\"C2\", \"C1\"]")).phases[0].additions[0].clusters,
        [1, 0]
    );
    assert_eq!(
        errors(&add("[\"C1\", \"C1\"]")),
        ["f.toml:55:19: cluster `C1` is listed twice"]
    );
    assert_eq!(
        errors(&add("[]")),
        ["f.toml:55:12: an addition needs at least one cluster"]
    );
}

const SMALL: &str = r#"
cycle = "100ms"

[[cluster]]
name = "C1"
cores = 1

[[cluster]]
name = "C2"
cores = 2

[[server]]
name = "key"
operation = "2ms"

[[server]]
name = "log"
operation = "500us"

[[reservation]]
name = "A"
cluster = "C1"
priority = 5
slots = [["50ms", "100ms"], ["0ms", "20ms"]]
execution = "1ms"

[[reservation]]
name = "B"
cluster = "C1"
priority = 6
slots = [["20ms", "50ms"]]
execution = "1ms"

[reservation.invokes]
log = 3
key = 1

[[reservation]]
name = "C"
cluster = "C2"
priority = 5
slots = [["0ms", "60ms"]]
execution = "1ms"

[[reservation]]
name = "D"
cluster = "C2"
priority = 5
slots = [["10ms", "100ms"]]
execution = "1ms"
"#;

#[test]
fn defaults_slot_order_and_invocation_order() {
    let system = read(SMALL);
    assert_eq!(system.protocol, None);
    let a = &system.reservations[0];
    assert_eq!(a.criticality, Criticality::Low);
    assert!(a.invocations.is_empty());
    // Slots stay in file order; slots that touch do not overlap.
    assert_eq!(
        a.kind,
        ReservationKind::TableDriven {
            slots: vec![Slot::new(ms(50), ms(100)), Slot::new(ms(0), ms(20))]
        }
    );
    // Invocations in file order, by server index.
    assert_eq!(
        system.reservations[1].invocations,
        [
            Invocation {
                server: 1,
                count: 3
            },
            Invocation {
                server: 0,
                count: 1
            },
        ]
    );
    // Two slots of a two-core cluster may overlap; a third may not.
    let third = SMALL.to_owned()
        + "\n[[reservation]]\nname = \"E\"\ncluster = \"C2\"\npriority = 7\n\
           slots = [[\"55ms\", \"56ms\"]]\nexecution = \"1ms\"\n";
    assert_eq!(
        errors(&third),
        ["f.toml:56:10: slot [55ms, 56ms) of `E` makes 3 slots overlap at 55ms on cluster `C2` (2 cores)"]
    );
    let after = third.replace("\"55ms\", \"56ms\"", "\"60ms\", \"61ms\"");
    assert_eq!(read(&after).reservations.len(), 5);
}

#[test]
fn one_clusters_value_is_both_levels_and_the_cycle_is_optional_without_slots() {
    let text = r#"
protocol = "prio-ipc"

[[cluster]]
name = "C1"
cores = 4

[[server]]
name = "key"
operation = { low = "1ms", high = "1ms" }
clusters = 1

[[reservation]]
name = "R"
cluster = "C1"
criticality = "high"
priority = 255
budget = "1ms"
period = "1ms"
execution = "1ms"
invokes = { key = 0 }
"#;
    let system = read(text);
    assert_eq!(system.protocol, Some(GateProtocol::PrioIpc));
    assert_eq!(system.cycle, None);
    assert_eq!(
        system.servers[0].invoking_clusters,
        PerCriticality::uniform(Some(1))
    );
    assert_eq!(
        system.reservations[0].invocations,
        [Invocation {
            server: 0,
            count: 0
        }]
    );
    assert_eq!(system.reservations[0].priority, Priority(255));
    assert_eq!(
        PerCriticality { low: 1, high: 2 }.at(Criticality::High),
        2,
        "at() picks the level"
    );
    for protocol in [
        GateProtocol::McIpc,
        GateProtocol::FifoIpc,
        GateProtocol::PrioIpc,
    ] {
        assert_eq!(GateProtocol::from_name(protocol.name()), Some(protocol));
    }
    for level in [Criticality::Low, Criticality::High] {
        assert_eq!(Criticality::from_name(level.name()), Some(level));
    }
}

#[test]
fn errors_are_collected_across_tables_in_file_order() {
    let text = r#"
protocol = "fifo"
cycle = "100ms"

[[cluster]]
name = "C1"
cores = 0

[[server]]
name = "key"
operation = "0ms"

[[reservation]]
name = "R1"
cluster = "C9"
criticality = "mid"
priority = 300
slots = [["60ms", "50ms"]]
execution = { low = "2ms", high = "1ms" }
invokes = { nope = 1 }
"#;
    assert_eq!(
        errors(text),
        [
            "f.toml:2:12: unknown protocol `fifo`",
            "f.toml:7:9: cores 0 is outside 1..=1024",
            "f.toml:11:13: operation length cannot be zero",
            "f.toml:15:11: no cluster is called `C9`",
            "f.toml:16:15: unknown criticality `mid`",
            "f.toml:17:12: priority 300 is outside 0..=255",
            "f.toml:18:10: slot [60ms, 50ms) ends before it starts",
            "f.toml:19:21: low execution 2ms is above high execution 1ms",
            "f.toml:20:13: no server is called `nope`",
        ]
    );
}

/// A blank cluster name is refused at its table, and is no name to offer the reservations
/// that name another cluster: with no other, they are told to add one.
#[test]
fn a_blank_name_is_not_offered() {
    let text = "protocol = \"mc-ipc\"\n\n[[cluster]]\nname = \"\"\ncores = 1\n\n\
                [[server]]\nname = \"key\"\noperation = \"1ms\"\n\n\
                [[reservation]]\nname = \"R1\"\ncluster = \"C1\"\npriority = 1\nbudget = \"2ms\"\n\
                period = \"10ms\"\nexecution = \"1ms\"\n";
    let help = help_of(parse_mc_ipc(text, "f.toml"), "no cluster is called `C1`");
    assert_eq!(help, "add a [[cluster]] table with this name");
}

/// What a parsed system promises, checked from the outside.
fn invariant_violation(system: &McIpcSystem) -> Option<String> {
    let k = system.clusters.len() as u64;
    if k == 0 || system.reservations.is_empty() {
        return Some("no clusters or no reservations".into());
    }
    if system
        .clusters
        .iter()
        .any(|c| !(1..=1024).contains(&c.cores))
    {
        return Some("cores out of range".into());
    }
    for server in &system.servers {
        let l = server.operation_length;
        if l.low.is_zero() || l.low > l.high {
            return Some(format!("operation lengths of {}", server.name));
        }
        let c = server.invoking_clusters;
        if c.low.is_some() != c.high.is_some()
            || c.low > c.high
            || [c.low, c.high]
                .iter()
                .flatten()
                .any(|&n| !(1..=k).contains(&n))
        {
            return Some(format!("invoking clusters of {}", server.name));
        }
    }
    for r in &system.reservations {
        if r.cluster >= system.clusters.len()
            || r.invocations
                .iter()
                .any(|i| i.server >= system.servers.len())
            || r.execution.low.is_zero()
            || r.execution.low > r.execution.high
        {
            return Some(format!("reservation {}", r.name));
        }
        match &r.kind {
            ReservationKind::TableDriven { slots } => {
                let cycle = system.cycle?;
                if slots.is_empty() || slots.iter().any(|s| s.start >= s.end || s.end > cycle) {
                    return Some(format!("slots of {}", r.name));
                }
            }
            ReservationKind::Sporadic {
                budget,
                period,
                replenishment,
            } => {
                if budget.is_zero() || budget > period {
                    return Some(format!("budget of {}", r.name));
                }
                // Vestal's monitor needs the sporadic rule at high criticality.
                if *replenishment == Replenishment::ConstantBandwidth
                    && r.criticality == Criticality::High
                {
                    return Some(format!("a high-criticality server {}", r.name));
                }
            }
        }
    }
    // Every member is a task, and no task is in two groups.
    let mut members: Vec<usize> = system
        .groups
        .iter()
        .flat_map(|g| g.members.clone())
        .collect();
    let listed = members.len();
    members.sort_unstable();
    members.dedup();
    if members.len() != listed || members.iter().any(|&m| m >= system.tasks.len()) {
        return Some("group members".into());
    }
    if system.groups.iter().any(|g| g.quota.is_zero()) || system.cost.clock_hz == 0 {
        return Some("a group without quota, or no clock".into());
    }
    let reclaims = |script: &[ScriptStep]| {
        script.iter().any(|s| {
            matches!(
                s,
                ScriptStep::Allocate { .. } | ScriptStep::Terminate { .. }
            )
        })
    };
    let scripts_reclaim = system.tasks.iter().any(|t| reclaims(&t.script))
        || system
            .phases
            .iter()
            .flat_map(|p| &p.additions)
            .any(|a| reclaims(&a.task.script));
    if (scripts_reclaim || !system.groups.is_empty()) && system.cost.reclaim_per_unit == 0 {
        return Some("reclamation work without a cost".into());
    }
    let servers = &system.servers;
    let reservations = system.reservations.len();
    let script_valid = |script: &[ScriptStep]| {
        !script.is_empty()
            && script
                .iter()
                .any(|s| *s != ScriptStep::SleepUntilNextPeriod)
            && script.iter().all(|step| match *step {
                ScriptStep::Compute(time) => {
                    !time.best_case().is_zero() && time.best_case() <= time.worst_case()
                }
                ScriptStep::Invoke { server, length } => {
                    let (min, max) = (length.best_case(), length.worst_case());
                    server < servers.len()
                        && !min.is_zero()
                        && min <= max
                        && max <= servers[server].operation_length.high
                }
                ScriptStep::SleepUntilNextPeriod => true,
                ScriptStep::Allocate { count, .. } => count > 0,
                ScriptStep::Terminate { task } => task < system.tasks.len(),
            })
    };
    if system.flood_gap.is_zero() {
        return Some("flood gap".into());
    }
    for (index, t) in system.tasks.iter().enumerate() {
        let terminates_itself = t.script.contains(&ScriptStep::Terminate { task: index });
        if t.reservation >= reservations
            || t.period.is_zero()
            || !script_valid(&t.script)
            || terminates_itself
        {
            return Some(format!("task {}", t.name));
        }
    }
    for p in &system.phases {
        let floods_invoke = p.floods.iter().all(|&i| {
            i < system.tasks.len()
                && system.tasks[i]
                    .script
                    .iter()
                    .any(|s| matches!(s, ScriptStep::Invoke { .. }))
        });
        let additions_valid = p.additions.iter().all(|a| {
            let reservation = match a.reservation {
                AddedReservation::Existing(r) => {
                    r < reservations && a.clusters == [system.reservations[r].cluster]
                }
                AddedReservation::Sporadic {
                    budget,
                    period,
                    criticality,
                    replenishment,
                    ..
                } => {
                    !budget.is_zero()
                        && budget <= period
                        && !(criticality == Criticality::High
                            && replenishment == Replenishment::ConstantBandwidth)
                }
                AddedReservation::BestEffort => true,
            };
            !a.clusters.is_empty()
                && a.clusters.iter().all(|&c| c < system.clusters.len())
                && a.count > 0
                && reservation
                && !a.task.period.is_zero()
                && script_valid(&a.task.script)
        });
        if !floods_invoke || !additions_valid {
            return Some(format!("phase {}", p.name));
        }
    }
    None
}

/// `text` with its line `line` (modulo the line count) replaced by its line `with`, or removed
/// where `with` is past the last line, judged: never a panic; what the parser accepts keeps
/// every promise, what it rejects is located and helped.
fn judge_edit(text: &str, line: usize, with: usize) -> Result<(), TestCaseError> {
    let lines: Vec<&str> = text.lines().collect();
    let line = line % lines.len();
    let mut edited = lines.clone();
    if with >= lines.len() {
        edited.remove(line);
    } else {
        edited[line] = lines[with];
    }
    match parse_mc_ipc(&edited.join("\n"), "f.toml") {
        Ok(system) => prop_assert_eq!(invariant_violation(&system), None),
        Err(d) => {
            for e in &d {
                prop_assert!(e.line().is_some() && !e.help().is_empty(), "{}", e);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_text_makes_the_parser_panic(text in "\\PC{0,200}") {
        let _ = parse_mc_ipc(&text, "f.toml");
    }

    /// Any one line of the documented example (which has every key) replaced by another of
    /// its lines (or removed): never a panic; what is accepted keeps every promise, what is
    /// rejected is located.
    #[test]
    fn edits_of_the_documented_example_are_judged(line in 0usize..200, with in 0usize..210) {
        judge_edit(&documented_example(), line, with)?;
    }

    /// Any one line of the case study replaced by another of its lines (or removed): the
    /// parser never panics, what it accepts keeps every promise, what it rejects is located.
    #[test]
    fn edits_of_the_case_study_are_judged(line in 0usize..500, with in 0usize..520) {
        judge_edit(&fs::read_to_string(case_study_path()).unwrap(), line, with)?;
    }
}
