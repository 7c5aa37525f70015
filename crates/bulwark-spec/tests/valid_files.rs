//! Valid files read into exactly the scenario they describe, built here by hand.

mod common;

use std::fs;
use std::path::PathBuf;

use bulwark_core::{Duration, Instant, Priority};
use bulwark_spec::{
    load, parse, Behaviour, CostModel, Execution, PolicyKind, Reservation, Scenario, Step, TaskSpec,
};
use common::*;

fn valid(name: &str) -> PathBuf {
    crate_path("tests/valid").join(name)
}

fn read(name: &str) -> Scenario {
    match load(&valid(name)) {
        Ok(scenario) => scenario,
        Err(diagnostics) => panic!("{}", diagnostics.plain()),
    }
}

/// A file's scenario without servers, core policies, clusters, VBS or groups, with the
/// defaults of the keys a file may leave out: no description, seed 0, one core, default costs.
fn scenario(name: &str, policy: PolicyKind, duration: Duration) -> Scenario {
    Scenario {
        name: name.into(),
        description: String::new(),
        seed: 0,
        duration,
        cores: 1,
        policy,
        cost: CostModel::default(),
        tasks: Vec::new(),
        servers: Vec::new(),
        core_policies: Vec::new(),
        clusters: Vec::new(),
        groups: Vec::new(),
        vbs: None,
        cpis: Vec::new(),
        components: Vec::new(),
    }
}

/// A task on core 0 without a reservation, released every `period` from 0 with that period as
/// its deadline, each job running a fixed `execution`.
fn periodic(name: &str, priority: Option<u8>, period: Duration, execution: Duration) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        core: 0,
        priority: priority.map(Priority),
        reservation: None,
        deadline: Some(period),
        behaviour: Behaviour::Periodic {
            period,
            offset: Duration::ZERO,
            execution: Execution::Fixed(execution),
        },
    }
}

#[test]
fn every_feature_reads_into_the_exact_scenario() {
    let expected = Scenario {
        description: "every key the format has".into(),
        seed: 42,
        cores: 2,
        cost: CostModel {
            reclaim_per_unit: 0,
            clock_hz: 2_500_000_000,
            timer_interrupt: 120,
            scheduler: 300,
            per_work_unit: 15,
            context_switch: 200,
            cache_refill: 1000,
            cache_flush: 40_000,
            ..CostModel::FREE
        },
        tasks: vec![
            periodic("tau1", Some(2), ms(5), ms(2)),
            TaskSpec {
                name: "tau2".into(),
                core: 1,
                priority: Some(Priority(1)),
                reservation: None,
                deadline: Some(ms(8)),
                behaviour: Behaviour::Periodic {
                    period: ms(10),
                    offset: us(250),
                    execution: Execution::Uniform {
                        min: ms(1),
                        max: us(2500),
                    },
                },
            },
            TaskSpec {
                name: "irq".into(),
                core: 1,
                priority: Some(Priority(255)),
                reservation: None,
                deadline: Some(ms(10)),
                behaviour: Behaviour::Sporadic {
                    min_interarrival: ms(10),
                    jitter: ms(2),
                    offset: Duration::from_nanos(7),
                    execution: Execution::Fixed(us(100)),
                },
            },
            TaskSpec {
                name: "phases".into(),
                core: 0,
                priority: Some(Priority(0)),
                reservation: None,
                deadline: Some(ms(20)),
                behaviour: Behaviour::Script {
                    offset: Duration::ZERO,
                    steps: vec![
                        Step::Run(Execution::Fixed(ms(1))),
                        Step::Compute {
                            count: 50,
                            each: us(100),
                        },
                        Step::SleepFor(ms(2)),
                        Step::SleepUntil(Instant::from_nanos(25_000_000)),
                        Step::SleepUntilAligned(ms(1)),
                        Step::FlushCache,
                        Step::Loop {
                            count: Some(3),
                            body: vec![
                                Step::Run(Execution::Fixed(us(500))),
                                Step::SleepFor(Duration::ZERO),
                            ],
                        },
                        Step::Loop {
                            count: None,
                            body: vec![
                                Step::Loop {
                                    count: Some(2),
                                    body: vec![Step::Run(Execution::Fixed(us(1)))],
                                },
                                Step::SleepUntilAligned(ms(10)),
                            ],
                        },
                    ],
                },
            },
        ],
        ..scenario("complete", PolicyKind::FixedPriority, ms(1500))
    };
    assert_eq!(read("complete.toml"), expected);
}

#[test]
fn omitted_keys_take_their_defaults() {
    let expected = Scenario {
        tasks: vec![periodic("only", Some(0), ms(5), ms(1))],
        ..scenario("minimal", PolicyKind::FixedPriority, ms(35))
    };
    assert_eq!(read("minimal.toml"), expected);
    assert_eq!(CostModel::default().clock_hz, 1_000_000_000);
}

#[test]
fn edf_tasks_have_no_priority_and_default_deadlines() {
    let expected = Scenario {
        description: "three tasks that fixed priority cannot schedule and edf can".into(),
        seed: 7,
        cost: CostModel {
            context_switch: 50,
            ..CostModel::default()
        },
        tasks: vec![
            periodic("tau1", None, ms(5), ms(2)),
            TaskSpec {
                name: "tau2".into(),
                core: 0,
                priority: None,
                reservation: None,
                deadline: Some(ms(7)),
                behaviour: Behaviour::Sporadic {
                    min_interarrival: ms(7),
                    jitter: Duration::ZERO,
                    offset: Duration::ZERO,
                    execution: Execution::Uniform {
                        min: ms(1),
                        max: ms(3),
                    },
                },
            },
            TaskSpec {
                name: "tau3".into(),
                core: 0,
                priority: None,
                reservation: None,
                deadline: Some(ms(10)),
                behaviour: Behaviour::Script {
                    offset: ms(1),
                    steps: vec![Step::Loop {
                        count: None,
                        body: vec![
                            Step::Run(Execution::Fixed(us(500))),
                            Step::SleepFor(us(4500)),
                        ],
                    }],
                },
            },
        ],
        ..scenario("rm-vs-edf", PolicyKind::Edf, ms(35))
    };
    assert_eq!(read("edf.toml"), expected);
}

#[test]
fn a_script_under_fixed_priority_needs_no_deadline() {
    let source = r#"
        name = "s"
        policy = "fixed-priority"
        duration = "1s"

        [[task]]
        name = "worker"
        priority = 4
        script = [{ sleep-until = "0ns" }, { loop = 2, body = [{ sleep-until = "1ms" }] }]
    "#;
    let scenario = parse(source, "inline.toml").expect("valid");
    let task = &scenario.tasks[0];
    assert_eq!(task.deadline, None);
    assert_eq!(
        task.behaviour,
        Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![
                Step::SleepUntil(Instant::ZERO),
                // A counted loop may take no time: it ends.
                Step::Loop {
                    count: Some(2),
                    body: vec![Step::SleepUntil(Instant::from_nanos(1_000_000))],
                },
            ],
        }
    );
}

#[test]
fn a_script_may_be_written_as_an_array_of_tables() {
    let source = r#"
        name = "tables"
        policy = "edf"
        duration = "1s"

        [[task]]
        name = "t"
        deadline = "3ms"

        [[task.script]]
        run = "1ms"

        [[task.script]]
        compute = 2
        each = "1ms"
    "#;
    let scenario = parse(source, "tables.toml").expect("valid");
    assert_eq!(
        scenario.tasks[0].behaviour,
        Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![
                Step::Run(Execution::Fixed(ms(1))),
                Step::Compute {
                    count: 2,
                    each: ms(1)
                }
            ],
        }
    );
}

#[test]
fn the_most_cores_and_the_last_core() {
    let source = r#"
        name = "big"
        cores = 1024
        policy = "edf"
        duration = "1s"

        [[task]]
        name = "last"
        core = 1023
        period = "1ms"
        execution = "1ns"
    "#;
    let scenario = parse(source, "big.toml").expect("valid");
    assert_eq!(scenario.cores, 1024);
    assert_eq!(scenario.tasks[0].core, 1023);
}

#[test]
fn every_valid_file_parses() {
    let dir = crate_path("tests/valid");
    let mut count = 0;
    for entry in fs::read_dir(dir).expect("tests/valid exists") {
        let path = entry.expect("entry").path();
        if let Err(d) = load(&path) {
            panic!("{}", d.plain());
        }
        count += 1;
    }
    assert_eq!(count, 4);
}

#[test]
fn spr_reservations_carry_their_queue_capacity_and_non_preemptive_region() {
    let expected = Scenario {
        cost: CostModel {
            cache_refill: 2000,
            cache_flush: 50_000,
            ..CostModel::default()
        },
        tasks: vec![
            TaskSpec {
                reservation: Some(
                    Reservation::new(ms(3), ms(10))
                        .with_replenishments(16)
                        .with_non_preemptive(us(500)),
                ),
                ..periodic("control", Some(10), ms(10), ms(2))
            },
            TaskSpec {
                // Neither field given: S = 8 and no non-preemptive region.
                reservation: Some(Reservation {
                    budget: ms(2),
                    period: ms(20),
                    replenishments: Reservation::DEFAULT_REPLENISHMENTS,
                    non_preemptive: Duration::ZERO,
                }),
                ..periodic("defaults", Some(5), ms(20), ms(1))
            },
            TaskSpec {
                name: "flusher".into(),
                core: 0,
                priority: Some(Priority(20)),
                reservation: Some(
                    Reservation::new(ms(1), ms(5))
                        .with_replenishments(1024)
                        .with_non_preemptive(Duration::ZERO),
                ),
                deadline: Some(ms(5)),
                behaviour: Behaviour::Script {
                    offset: Duration::ZERO,
                    steps: vec![Step::Loop {
                        count: None,
                        body: vec![
                            Step::Run(Execution::Fixed(us(100))),
                            Step::FlushCache,
                            Step::SleepUntilAligned(ms(5)),
                        ],
                    }],
                },
            },
        ],
        ..scenario("spr", PolicyKind::Spr, ms(100))
    };
    assert_eq!(read("spr.toml"), expected);
    assert_eq!(Reservation::DEFAULT_REPLENISHMENTS, 8);
}

/// Each reservation-server policy takes exactly the fields it has a use for.
#[test]
fn each_server_policy_maps_the_fields_it_allows() {
    let reservation_of = |policy: &str, fields: &str| {
        let source = format!(
            r#"
            name = "s"
            policy = "{policy}"
            duration = "1s"

            [[task]]
            name = "t"
            priority = 3
            period = "10ms"
            execution = "1ms"
            reservation = {{ budget = "4ms", period = "10ms"{fields} }}
            "#
        );
        match parse(&source, "inline.toml") {
            Ok(scenario) => scenario.tasks[0].reservation.expect("a reservation"),
            Err(d) => panic!("{policy}: {}", d.plain()),
        }
    };
    let plain = Reservation::new(ms(4), ms(10));
    assert_eq!(reservation_of("deferrable-server", ""), plain);
    assert_eq!(
        reservation_of("sporadic-server", ", replenishments = 1"),
        plain.with_replenishments(1)
    );
    assert_eq!(
        reservation_of("spr", ", non-preemptive = \"250us\", replenishments = 32"),
        plain.with_replenishments(32).with_non_preemptive(us(250))
    );
    assert_eq!(
        reservation_of("spr-deferrable", ", non-preemptive = \"1ms\""),
        plain.with_non_preemptive(ms(1))
    );
    // A region longer than the budget is allowed: a dispatch grants min(eta, remaining budget).
    assert_eq!(
        reservation_of("spr-deferrable", ", non-preemptive = \"5ms\""),
        plain.with_non_preemptive(ms(5))
    );
}
