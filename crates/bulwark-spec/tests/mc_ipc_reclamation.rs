//! MC-IPC files with constant-bandwidth servers and bounded resource reclamation: the
//! `replenishment` of sporadic reservations, `[[group]]` tables and a task's `group`, the
//! `[cost]` table and the `allocate` and `terminate` steps read into the exact model, and
//! their mistakes are located. Positions in the expected messages are counted by hand from
//! the texts below (lines and columns from 1).

mod common;

use bulwark_core::reclaim::ObjectKind;
use bulwark_core::Priority;
use bulwark_spec::mc_ipc_toml::{
    AddedReservation, Criticality, Replenishment, ReservationKind, ScriptStep,
};
use bulwark_spec::system::{kind_of, FileKind};
use bulwark_spec::{CostModel, GroupSpec};
use common::mc_ipc::{assert_first_error, errors, read};
use common::*;

/// Lines 2-16: one cluster, one server, one sporadic reservation. Line 1 is empty.
const BASE: &str = r#"
[[cluster]]
name = "C1"
cores = 1

[[server]]
name = "key"
operation = "2ms"

[[reservation]]
name = "R1"
cluster = "C1"
priority = 0
budget = "20ms"
period = "100ms"
execution = "2ms"
"#;

/// Lines 17-18: reclamation work at 13 cycles a unit.
const COST: &str = "[cost]\nreclaim-per-unit = 13\n";

/// BASE, COST and a task `T` in `R1` whose script, on line 24, starts at column 10.
fn task_with(script: &str) -> String {
    format!(
        "{BASE}{COST}\n[[task]]\nname = \"T\"\nreservation = \"R1\"\nperiod = \"10ms\"\nscript = \
         {script}\n"
    )
}

#[test]
fn replenishment_is_the_sporadic_rule_unless_a_low_criticality_reservation_asks_for_cbs() {
    let text = format!(
        r#"{BASE}
[[reservation]]
name = "R2"
cluster = "C1"
criticality = "high"
priority = 0
budget = "10ms"
period = "50ms"
replenishment = "sporadic"
execution = "1ms"

[[reservation]]
name = "R3"
cluster = "C1"
criticality = "low"
priority = 0
budget = "5ms"
period = "40ms"
replenishment = "cbs"
execution = "1ms"

[[phase]]
name = "more"

[[phase.add]]
clusters = ["C1"]
count = 2
reservation = {{ budget = "1ms", period = "10ms", priority = 0, replenishment = "cbs" }}
task = {{ period = "10ms", script = [{{ compute = "100us" }}, "sleep"] }}

[[phase.add]]
clusters = ["C1"]
count = 1
reservation = {{ budget = "2ms", period = "10ms", priority = 1, criticality = "high" }}
task = {{ period = "10ms", script = [{{ compute = "100us" }}, "sleep"] }}
"#
    );
    let system = read(&text);
    let kinds: Vec<&ReservationKind> = system.reservations.iter().map(|r| &r.kind).collect();
    assert_eq!(
        kinds,
        [
            // Left out: the sporadic rule.
            &ReservationKind::Sporadic {
                budget: ms(20),
                period: ms(100),
                replenishment: Replenishment::Sporadic,
            },
            // Written out, at high criticality.
            &ReservationKind::Sporadic {
                budget: ms(10),
                period: ms(50),
                replenishment: Replenishment::Sporadic,
            },
            &ReservationKind::Sporadic {
                budget: ms(5),
                period: ms(40),
                replenishment: Replenishment::ConstantBandwidth,
            },
        ]
    );
    let added: Vec<&AddedReservation> = system.phases[0]
        .additions
        .iter()
        .map(|a| &a.reservation)
        .collect();
    assert_eq!(
        added,
        [
            &AddedReservation::Sporadic {
                criticality: Criticality::Low,
                priority: Priority(0),
                budget: ms(1),
                period: ms(10),
                replenishment: Replenishment::ConstantBandwidth,
            },
            &AddedReservation::Sporadic {
                criticality: Criticality::High,
                priority: Priority(1),
                budget: ms(2),
                period: ms(10),
                replenishment: Replenishment::Sporadic,
            },
        ]
    );
    assert_eq!(Replenishment::default(), Replenishment::Sporadic);
    for name in Replenishment::NAMES {
        let rule = Replenishment::from_name(name).expect("a listed name is a rule");
        assert_eq!(rule.name(), name);
    }
    assert_eq!(Replenishment::from_name("CBS"), None);
}

/// `replenishment = "spr"` is an SPR server with the paper's default S = 8, or the
/// `replenishments` written, in a [[reservation]] and in a phase's new reservation.
#[test]
fn an_spr_server_takes_its_queue_capacity() {
    let text = format!(
        r#"{BASE}replenishment = "spr"

[[reservation]]
name = "R2"
cluster = "C1"
priority = 1
budget = "5ms"
period = "40ms"
replenishment = "spr"
replenishments = 2
execution = "1ms"

[[phase]]
name = "more"

[[phase.add]]
clusters = ["C1"]
count = 1
reservation = {{ budget = "1ms", period = "10ms", priority = 2, replenishment = "spr", replenishments = 256 }}
task = {{ period = "10ms", script = [{{ compute = "100us" }}, "sleep"] }}
"#
    );
    let system = read(&text);
    let rules: Vec<Replenishment> = system
        .reservations
        .iter()
        .map(|r| match r.kind {
            ReservationKind::Sporadic { replenishment, .. } => replenishment,
            _ => panic!("sporadic"),
        })
        .collect();
    assert_eq!(
        rules,
        [
            Replenishment::Spr { replenishments: 8 },
            Replenishment::Spr { replenishments: 2 },
        ]
    );
    assert!(matches!(
        system.phases[0].additions[0].reservation,
        AddedReservation::Sporadic {
            replenishment: Replenishment::Spr {
                replenishments: 256
            },
            ..
        }
    ));
}

/// The queue capacity belongs to an SPR server only, from 1 to 256, and SPR is low
/// criticality only. BASE's reservation ends on line 16; each case adds lines 17 and 18.
#[test]
fn spr_mistakes_are_located() {
    let cases = [
        (
            "replenishment = \"cbs\"\nreplenishments = 4\n",
            "f.toml:18:18: replenishments is an SPR server's queue capacity, but this \
             reservation is not an SPR server",
        ),
        (
            "replenishment = \"spr\"\nreplenishments = 0\n",
            "f.toml:18:18: replenishments = 0 is outside 1..=256",
        ),
        (
            "replenishment = \"spr\"\nreplenishments = 257\n",
            "f.toml:18:18: replenishments = 257 is outside 1..=256",
        ),
        (
            "replenishment = \"spr\"\ncriticality = \"high\"\n",
            "f.toml:17:17: an SPR server is low-criticality only, but this reservation is \
             high-criticality",
        ),
    ];
    for (lines, expected) in cases {
        assert_eq!(errors(&format!("{BASE}{lines}")), [expected], "{lines}");
    }
}

#[test]
fn a_replenishment_mistake_does_not_hide_the_budget_s() {
    // Line 14's budget becomes three lines: budget, replenishment, criticality.
    let text = BASE.replace(
        "budget = \"20ms\"\n",
        "budget = \"200ms\"\nreplenishment = \"cbs\"\ncriticality = \"high\"\n",
    );
    // budget on line 14 (value at column 10), replenishment on 15 (column 17).
    assert_eq!(
        errors(&text),
        [
            "f.toml:14:10: budget 200ms is larger than its period 100ms",
            "f.toml:15:17: a constant-bandwidth server is low-criticality only, but this \
             reservation is high-criticality",
        ]
    );
}

#[test]
fn groups_are_kept_in_file_order_and_tasks_name_them_anywhere() {
    let text = format!(
        r#"{BASE}{COST}
[[task]]
name = "T1"
reservation = "R1"
period = "100ms"
group = "drivers"
script = [{{ compute = "1ms" }}, "sleep"]

[[group]]
name = "services"
quota = "500us"

[[task]]
name = "T2"
reservation = "R1"
period = "100ms"
script = [{{ compute = "1ms" }}, "sleep"]

[[task]]
name = "T3"
reservation = "R1"
period = "100ms"
group = "services"
script = [{{ compute = "1ms" }}, "sleep"]

[[group]]
name = "drivers"
quota = "2ms"
"#
    );
    let system = read(&text);
    assert_eq!(
        system.groups,
        [
            // T3 (task 2) names "services", T1 (task 0) "drivers", T2 neither.
            GroupSpec {
                name: "services".into(),
                quota: us(500),
                members: vec![2],
            },
            GroupSpec {
                name: "drivers".into(),
                quota: ms(2),
                members: vec![0],
            },
        ]
    );
    assert_eq!(
        system.cost,
        CostModel {
            clock_hz: 1_000_000_000,
            reclaim_per_unit: 13,
            ..CostModel::default()
        }
    );
    // A file with groups is still an MC-IPC system.
    assert_eq!(kind_of(&text, "f.toml").ok(), Some(FileKind::McIpc));
}

#[test]
fn a_group_name_without_groups_says_how_to_add_one() {
    let text = format!(
        "{BASE}{COST}\n[[task]]\nname = \"T\"\nreservation = \"R1\"\nperiod = \"10ms\"\n\
         group = \"g\"\nscript = [{{ compute = \"1ms\" }}]\n"
    );
    // `group` on line 24, its value at column 9.
    assert_first_error(
        &text,
        "f.toml:24:9: no group is called `g`",
        "add a [[group]] table with this name",
    );
}

#[test]
fn the_cost_has_a_scenario_s_clock_and_defaults() {
    let system = read(BASE);
    assert_eq!(system.cost, CostModel::default());
    assert_eq!(
        CostModel::default(),
        CostModel {
            clock_hz: 1_000_000_000,
            reclaim_per_unit: 0,
            ..CostModel::default()
        }
    );
    assert!(system.groups.is_empty());
    assert_eq!(read(&format!("{BASE}[cost]\n")).cost, CostModel::default());
    let cost = |table: &str| read(&format!("{BASE}[cost]\n{table}\n")).cost;
    assert_eq!(
        cost("clock = \"2GHz\"\nreclaim-per-unit = 13"),
        CostModel {
            clock_hz: 2_000_000_000,
            reclaim_per_unit: 13,
            ..CostModel::default()
        }
    );
    assert_eq!(cost("clock = \"500MHz\"").clock_hz, 500_000_000);
    assert_eq!(cost("reclaim-per-unit = 0").reclaim_per_unit, 0);
    // `[cost]` on line 17, its first key on line 18.
    let cost_errors = |table: &str| errors(&format!("{BASE}[cost]\n{table}\n"));
    assert_eq!(
        cost_errors("reclaim-per-unit = -1"),
        ["f.toml:18:20: reclaim-per-unit -1 is negative"]
    );
    assert_eq!(
        cost_errors("clock = \"0GHz\""),
        ["f.toml:18:9: clock cannot be zero"]
    );
    let bare = cost_errors("clock = 3");
    assert_eq!(bare.len(), 1);
    assert!(bare[0].starts_with("f.toml:18:9: "), "{bare:?}");
    assert_eq!(cost("context-switch = 500").context_switch, 500);
    // Every cost but reclamation's and the context switch's is refused, each where it is
    // written.
    assert_eq!(
        cost_errors("timer-interrupt = 5\nclock = \"1GHz\"\nscheduler = 7"),
        [
            "f.toml:18:1: `timer-interrupt` is not a cost of an MC-IPC system: its machine \
             charges only reclamation work and context switches",
            "f.toml:20:1: `scheduler` is not a cost of an MC-IPC system: its machine charges \
             only reclamation work and context switches",
        ]
    );
}

#[test]
fn allocate_and_terminate_steps_read_as_in_a_scenario() {
    let text = format!(
        r#"{BASE}{COST}
[[task]]
name = "T1"
reservation = "R1"
period = "100ms"
script = [
  {{ allocate = 1000000 }},
  {{ allocate = 3, object = "mapping" }},
  {{ object = "endpoint", allocate = 1 }},
  {{ allocate = 2, object = "semaphore" }},
  {{ terminate = "T2" }},
  "sleep",
]

[[task]]
name = "T2"
reservation = "R1"
period = "100ms"
script = [{{ terminate = "T1" }}]

[[phase]]
name = "more"

[[phase.add]]
clusters = ["C1"]
count = 1
reservation = "best-effort"
task = {{ period = "10ms", script = [{{ terminate = "T2" }}, {{ allocate = 5 }}, "sleep"] }}
"#
    );
    let system = read(&text);
    assert_eq!(
        system.tasks[0].script,
        [
            // `object` left out: a semaphore.
            ScriptStep::Allocate {
                count: 1_000_000,
                object: ObjectKind::Semaphore,
            },
            ScriptStep::Allocate {
                count: 3,
                object: ObjectKind::MemoryMapping,
            },
            ScriptStep::Allocate {
                count: 1,
                object: ObjectKind::Endpoint,
            },
            ScriptStep::Allocate {
                count: 2,
                object: ObjectKind::Semaphore,
            },
            // T2 is defined later in the file.
            ScriptStep::Terminate { task: 1 },
            ScriptStep::SleepUntilNextPeriod,
        ]
    );
    // A script that only terminates does something, so it is no spinning script.
    assert_eq!(system.tasks[1].script, [ScriptStep::Terminate { task: 0 }]);
    assert_eq!(
        system.phases[0].additions[0].task.script,
        [
            ScriptStep::Terminate { task: 1 },
            ScriptStep::Allocate {
                count: 5,
                object: ObjectKind::Semaphore,
            },
            ScriptStep::SleepUntilNextPeriod,
        ]
    );
}

#[test]
fn step_tables_do_one_thing_with_their_own_companions() {
    // `{` of the first step at column 11, its first key at 13; each error at the value.
    assert_eq!(
        errors(&task_with("[{ compute = \"1ms\", allocate = 3 }]")),
        ["f.toml:24:41: a script step either computes or allocates, not both"]
    );
    assert_eq!(
        errors(&task_with("[{ allocate = 3, length = \"1ms\" }]")),
        ["f.toml:24:36: `length` is an invocation's, but this step allocates"]
    );
    assert_eq!(
        errors(&task_with("[{ invoke = \"key\", object = \"mapping\" }]")),
        ["f.toml:24:38: `object` is an allocation's, but this step invokes"]
    );
    // A scenario's `step` (reclamation in steps) is no key of an MC-IPC step; the target is
    // judged too.
    assert_eq!(
        errors(&task_with("[{ terminate = \"T\", step = \"20us\" }]")),
        [
            "f.toml:24:25: task `T` terminates itself",
            "f.toml:24:30: unknown script step key `step`",
        ]
    );
    assert_first_error(
        &task_with("[{ terminate = \"T\" }]"),
        "f.toml:24:25: task `T` terminates itself",
        "allowed: another [[task]]; this system has no other",
    );
    assert_eq!(
        read(&task_with("[{ allocate = 2 }, \"sleep\"]")).tasks[0].script,
        [
            ScriptStep::Allocate {
                count: 2,
                object: ObjectKind::Semaphore,
            },
            ScriptStep::SleepUntilNextPeriod,
        ]
    );
}

#[test]
fn a_flooding_task_must_still_invoke_a_server() {
    let text = format!(
        "{}\n[[phase]]\nname = \"flood\"\nfloods = [\"T\"]\n",
        task_with("[{ allocate = 2 }, \"sleep\"]")
    );
    // `floods` on line 28, the name at column 11.
    assert_eq!(
        errors(&text),
        ["f.toml:28:11: task `T` cannot flood: its script invokes no server"]
    );
}

#[test]
fn a_template_terminates_a_task_of_the_file() {
    let text = format!(
        "{BASE}{COST}\n[[phase]]\nname = \"p\"\n\n[[phase.add]]\nclusters = [\"C1\"]\ncount = \
         1\nreservation = \"best-effort\"\ntask = {{ period = \"10ms\", script = [{{ terminate \
         = \"nobody\" }}] }}\n"
    );
    // `task` on line 27: `{ terminate` at column 37, its value at 51.
    assert_first_error(
        &text,
        "f.toml:27:51: no task is called `nobody`",
        "add a [[task]] table with this name",
    );
}
