//! The CAmkES subset and the TOML form of component systems: valid files read into exactly
//! the system they describe; every file in `tests/invalid_camkes/` is rejected with exactly
//! the diagnostics written beside it (`NAME.expected`: one `file:line:column: message` line
//! per error, in file order, worked out by hand); and no input makes either parser panic.

mod common;

use std::path::{Path, PathBuf};

use bulwark_core::{Duration, Priority};
use bulwark_spec::camkes::load_camkes;
use bulwark_spec::component::{
    Component, ComponentKind, ComponentSystem, Connection, ConnectionId, Cpi, CpiId, CpiProtocol,
    ProcedureStep, Task,
};
use bulwark_spec::{parse_camkes, parse_components, Diagnostics};
use common::*;
use proptest::prelude::*;

/// Every key of the subset, and every kind of item it skips.
const COMPLETE: &str = r#"/* Every key of the CAmkES subset. */
import <std_connector.camkes>;
import "local.camkes";

procedure Lock {
    include "types.h";
    void take(in int priority, in int requestor);
    void nest(in int priority, in int requestor);
};

component Sensor {
    control;
    uses Lock out;
    maybe uses Lock spare;
    attribute int requestor;
}

component Store {
    provides Lock read;
    provides Lock write;
    uses Lock log;
    attribute string note = "skipped";
};

component Logger {
    provides Lock append;
}

assembly {
    composition {
        component Sensor fast;
        component Sensor slow;
        component Store store;
        component Logger logger;

        // Two `from` ends: one connection per end in the model.
        connection seL4RPCCallPrioritized to_store(from fast.out, from slow.out, to store.write);
        connection seL4RPCCall store_log(from store.log, to logger.append);
    };

    configuration {
        fast._priority = 0x14;          /* 20 */
        fast._period = "10ms";
        fast.requestor = __COUNTER__;   // 0
        fast._body = "execute 1ms; request out; execute 500us;";
        slow._priority = 10;
        slow._period = "1s";
        slow.requestor = 5;

        store.read_priority_protocol = "propagated";
        store.write_priority_protocol = "inherited";
        store.write_priority = 30;
        store.write_num_threads = 3;
        store.write_body = "execute 2ms; request log";
        store.read_body = "execute 250us";
        logger.append_priority_protocol = "fixed";
        logger.append_priority = 255;
    }
}
"#;

fn complete_system() -> ComponentSystem {
    let cpi = |name: &str, protocol, priority, threads, body| Cpi {
        name: name.into(),
        protocol,
        priority,
        threads,
        body,
    };
    ComponentSystem {
        cost: bulwark_spec::CostModel::FREE,
        components: vec![
            Component {
                name: "fast".into(),
                kind: ComponentKind::Active {
                    tasks: vec![Task {
                        name: "fast".into(),
                        priority: Priority(20),
                        period: ms(10),
                        requestor: 0,
                        body: Some(vec![
                            ProcedureStep::Execute(ms(1)),
                            ProcedureStep::Request(ConnectionId(0)),
                            ProcedureStep::Execute(us(500)),
                        ]),
                        reservation: None,
                    }],
                },
            },
            Component {
                name: "slow".into(),
                kind: ComponentKind::Active {
                    tasks: vec![Task {
                        name: "slow".into(),
                        priority: Priority(10),
                        period: ms(1000),
                        requestor: 5,
                        body: None,
                        reservation: None,
                    }],
                },
            },
            Component {
                name: "store".into(),
                kind: ComponentKind::Passive {
                    cpis: vec![
                        cpi(
                            "read",
                            CpiProtocol::Propagated,
                            None,
                            None,
                            Some(vec![ProcedureStep::Execute(us(250))]),
                        ),
                        cpi(
                            "write",
                            CpiProtocol::Inherited,
                            Some(Priority(30)),
                            Some(3),
                            Some(vec![
                                ProcedureStep::Execute(ms(2)),
                                ProcedureStep::Request(ConnectionId(2)),
                            ]),
                        ),
                    ],
                },
            },
            Component {
                name: "logger".into(),
                kind: ComponentKind::Passive {
                    cpis: vec![cpi(
                        "append",
                        CpiProtocol::Npcs,
                        Some(Priority::MAX),
                        None,
                        None,
                    )],
                },
            },
        ],
        connections: vec![
            Connection {
                name: "to_store".into(),
                from: 0,
                interface: Some("out".into()),
                procedure: None,
                to: CpiId {
                    component: 2,
                    cpi: 1,
                },
            },
            Connection {
                name: "to_store".into(),
                from: 1,
                interface: Some("out".into()),
                procedure: None,
                to: CpiId {
                    component: 2,
                    cpi: 1,
                },
            },
            Connection {
                name: "store_log".into(),
                from: 2,
                interface: Some("log".into()),
                procedure: None,
                to: CpiId {
                    component: 3,
                    cpi: 0,
                },
            },
        ],
    }
}

fn read_camkes(text: &str) -> ComponentSystem {
    match parse_camkes(text, "test.camkes") {
        Ok(system) => system,
        Err(diagnostics) => panic!("{}", diagnostics.plain()),
    }
}

#[test]
fn every_key_reads_into_the_exact_system() {
    let system = read_camkes(COMPLETE);
    assert_eq!(system, complete_system());
    assert_eq!(system.invariant_violation(), None);
    // The first task's body executes 1.5 ms in all.
    let body = system
        .task(system.tasks()[0].0)
        .body
        .clone()
        .unwrap_or_default();
    let executed = body.iter().fold(Duration::ZERO, |sum, step| match step {
        ProcedureStep::Execute(time) => sum.saturating_add(*time),
        ProcedureStep::Request(_) => sum,
    });
    assert_eq!(executed, us(1500));
    assert_eq!(system.cpi_name(system.connections[2].to), "logger.append");
}

#[test]
fn requestors_not_given_take_the_smallest_unused_identifier() {
    let text = COMPLETE
        .replace("fast.requestor = __COUNTER__;", "")
        .replace("slow.requestor = 5;", "slow.requestor = 0;");
    let system = read_camkes(&text);
    let requestors: Vec<u32> = system.tasks().iter().map(|(_, t)| t.requestor).collect();
    assert_eq!(requestors, vec![1, 0]);
}

/// The TOML form of [`COMPLETE`]: the same system, but for connection names and `uses`
/// interfaces, which TOML does not have.
const COMPLETE_TOML: &str = r#"
[[component]]
name = "fast"
kind = "active"

[[component.task]]
name = "fast"
priority = 20
period = "10ms"
requestor = 0
body = [{ execute = "1ms" }, { request = "store.write" }, { execute = "500us" }]

[[component]]
name = "slow"
kind = "active"

[[component.task]]
name = "slow"
priority = 10
period = "1s"
requestor = 5

[[component]]
name = "store"
kind = "passive"

[[component.cpi]]
name = "read"
protocol = "propagated"
body = [{ execute = "250us" }]

[[component.cpi]]
name = "write"
protocol = "inherited"
priority = 30
threads = 3
body = [{ execute = "2ms" }, { request = "logger.append" }]

[[component]]
name = "logger"
kind = "passive"

[[component.cpi]]
name = "append"
protocol = "fixed"
priority = 255

[[connection]]
name = "to_store"
from = "fast"
to = "store.write"

[[connection]]
name = "to_store"
from = "slow"
to = "store.write"

[[connection]]
from = "store"
to = "logger.append"
"#;

#[test]
fn the_toml_form_reads_into_the_same_system() {
    let system = match parse_components(COMPLETE_TOML, "complete.toml") {
        Ok(s) => s,
        Err(d) => panic!("{}", d.plain()),
    };
    let mut expected = complete_system();
    for connection in &mut expected.connections {
        connection.interface = None;
    }
    expected.connections[2].name = "store->logger.append".into();
    assert_eq!(system, expected);
}

#[test]
fn toml_connections_can_name_the_sending_cpi() {
    let text = COMPLETE_TOML.replace(
        "from = \"store\"\nto = \"logger.append\"",
        "from = \"store.write\"\nto = \"logger.append\"",
    );
    let system = parse_components(&text, "f.toml").unwrap();
    assert_eq!(system.connections[2].procedure, Some(1));
    let senders = system.senders(ConnectionId(2));
    assert_eq!(senders.len(), 1);
    assert!(senders[0].known);
}

fn toml_errors(text: &str) -> Vec<String> {
    match parse_components(text, "f.toml") {
        Ok(system) => panic!("accepted: {system:#?}"),
        Err(d) => d.errors().iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn toml_errors_are_located_and_collected() {
    // Unknown keys and mistyped values are serde's, with the allowed keys.
    let unknown = parse_components(
        "[[component]]\nname = \"a\"\nkind = \"active\"\nperiod = 3\n",
        "f.toml",
    )
    .unwrap_err();
    assert_eq!(
        unknown.errors()[0].to_string(),
        "f.toml:4:1: unknown field `period`"
    );
    assert_eq!(
        unknown.errors()[0].help(),
        "allowed: `name`, `kind`, `task`, `cpi`, `core`"
    );
    // `core` is known, but places a component only in a scenario file.
    let placed = toml_errors(
        "[[component]]\nname = \"a\"\nkind = \"passive\"\ncore = 1\n\
         [[component.cpi]]\nname = \"i\"\nprotocol = \"propagated\"\n",
    );
    assert_eq!(
        placed,
        ["f.toml:4:8: `core` in a component file, which describes one core's system"]
    );
    // Meaning: every error, in file order.
    let text = "\
[[component]]
name = \"a\"
kind = \"activ\"

[[component]]
name = \"b\"
kind = \"passive\"

[[component.cpi]]
name = \"i\"
protocol = \"pip\"
threads = 0
body = [{ execute = \"1ms\", request = \"b.i\" }, {}, { request = \"b.j\" }]

[[connection]]
from = \"a.x\"
to = \"b\"
";
    assert_eq!(
        toml_errors(text),
        [
            "f.toml:3:8: unknown component kind `activ`",
            "f.toml:11:12: unknown priority protocol `pip`",
            "f.toml:12:11: threads 0 is outside 1..=1024",
            "f.toml:13:38: a step does one thing, but this one has both execute and request",
            "f.toml:13:47: this step does nothing",
            "f.toml:13:63: component `b` has no CPI `j`",
            "f.toml:16:8: active component `a` has no CPI `x`",
            "f.toml:17:6: `b` names no CPI",
        ]
    );
    let missing_connection = COMPLETE_TOML.replace(
        "[[connection]]\nfrom = \"store\"\nto = \"logger.append\"\n",
        "",
    );
    assert_eq!(
        toml_errors(&missing_connection),
        ["f.toml:37:42: no connection from `store.write` to `logger.append`"]
    );
    let reused = COMPLETE_TOML.replace("requestor = 5", "requestor = 0");
    assert_eq!(
        toml_errors(&reused),
        ["f.toml:21:13: requestor 0 is already used by `fast`"]
    );
    let active_cpi = COMPLETE_TOML.replace(
        "name = \"slow\"\nkind = \"active\"\n",
        "name = \"slow\"\nkind = \"active\"\n[[component.cpi]]\nname = \"z\"\nprotocol = \"fixed\"\n",
    );
    assert_eq!(
        toml_errors(&active_cpi),
        ["f.toml:17:8: active component `slow` provides CPI `z`"]
    );
}

fn invalid_dir() -> PathBuf {
    crate_path("tests/invalid_camkes")
}

fn diagnostics_of(path: &Path) -> Diagnostics {
    rejection(path, parse_camkes)
}

#[test]
fn every_invalid_file_gives_exactly_its_expected_diagnostics() {
    assert_expected_diagnostics(fixtures(&invalid_dir(), "camkes"), diagnostics_of);
}

#[test]
fn every_invalid_file_is_rejected_with_located_helpful_errors() {
    let paths = fixtures(&invalid_dir(), "camkes");
    assert!(paths.len() >= 50, "only {} fixtures", paths.len());
    for path in paths {
        assert_located_in_file_order(&diagnostics_of(&path), &file_name(&path));
    }
}

fn first_help(name: &str) -> String {
    diagnostics_of(&invalid_dir().join(name)).errors()[0]
        .help()
        .to_owned()
}

#[test]
fn helps_say_what_is_allowed() {
    assert_eq!(
        first_help("unknown_protocol.camkes"),
        "allowed: \"propagated\", \"inherited\", \"fixed\" (fixed with <interface>_priority = 255 is NPCS)"
    );
    assert_eq!(
        first_help("unknown_active_attribute.camkes"),
        "allowed: _priority, _period, requestor, _body, _budget, _eta"
    );
    assert_eq!(
        first_help("unknown_passive_attribute.camkes"),
        "allowed: for each interface it provides (serve): <interface>_priority_protocol, \
         <interface>_priority, <interface>_num_threads, <interface>_body"
    );
    assert_eq!(
        first_help("unknown_type.camkes"),
        "allowed: Client, Server (the component types in this file)"
    );
    assert_eq!(
        first_help("unknown_end_interface.camkes"),
        "allowed: serve (the provides interfaces of component type `Server`)"
    );
    assert_eq!(
        first_help("missing_protocol.camkes"),
        "add server.serve_priority_protocol = \"propagated\"; (or \"inherited\", \"fixed\") to the configuration"
    );
    assert_eq!(
        first_help("body_unconnected_interface.camkes"),
        "add connection seL4RPCCall <name>(from client.spare, to <instance>.<interface>); or remove this request"
    );
    assert_eq!(
        first_help("preprocessor.camkes"),
        "run the C preprocessor first (cpp -P), or write the values out"
    );
    assert_eq!(
        first_help("priority_out_of_range.camkes"),
        "allowed: 0..=255, larger is more important"
    );
    assert!(first_help("body_unknown_step.camkes")
        .contains("execute <time> and request <uses interface>"));
}

#[test]
fn load_reads_by_path_and_names_an_unreadable_file() {
    let diagnostics = load_camkes(&invalid_dir().join("missing_period.camkes")).unwrap_err();
    assert!(diagnostics.errors()[0].to_string().ends_with(
        "missing_period.camkes:5:26: active component `client` has no `client._period`"
    ));
    let missing = invalid_dir().join("there_is_no_such_file.camkes");
    let diagnostics = load_camkes(&missing).unwrap_err();
    assert_eq!(diagnostics.errors()[0].line(), None);
    assert!(diagnostics.errors()[0]
        .to_string()
        .contains("cannot read this file"));
}

/// A system the CAmkES subset can express: one task per active component, connections
/// from distinct uses interfaces, none naming its sending procedure.
fn camkes_system() -> impl Strategy<Value = ComponentSystem> {
    let tasks = prop::collection::vec((any::<u8>(), 1u64..=1000, any::<bool>()), 1..=3);
    let passives = prop::collection::vec(
        prop::collection::vec(
            (
                0u8..3,
                prop::option::of(any::<u8>()),
                prop::option::of(1u32..=1024),
                any::<bool>(),
            ),
            1..=3,
        ),
        1..=3,
    );
    let wiring = prop::collection::vec((any::<u16>(), any::<u16>(), any::<u16>()), 0..=8);
    (tasks, passives, wiring).prop_map(|(tasks, passives, wiring)| {
        let mut components: Vec<Component> = Vec::new();
        for (i, &(priority, period, _)) in tasks.iter().enumerate() {
            components.push(Component {
                name: format!("task{i}"),
                kind: ComponentKind::Active {
                    tasks: vec![Task {
                        name: format!("task{i}"),
                        priority: Priority(priority),
                        period: us(period * 10),
                        requestor: (i * 3) as u32,
                        body: None,
                        reservation: None,
                    }],
                },
            });
        }
        let first_passive = components.len();
        for (p, cpis) in passives.iter().enumerate() {
            let cpis = cpis
                .iter()
                .enumerate()
                .map(|(j, &(protocol, priority, threads, _))| {
                    let priority = priority.map(Priority);
                    let protocol = match protocol {
                        0 => CpiProtocol::Propagated,
                        1 => CpiProtocol::Inherited,
                        _ => CpiProtocol::Ipcp,
                    };
                    Cpi {
                        name: format!("i{j}"),
                        protocol: protocol.with_priority(priority),
                        priority,
                        threads,
                        body: None,
                    }
                })
                .collect();
            components.push(Component {
                name: format!("server{p}"),
                kind: ComponentKind::Passive { cpis },
            });
        }
        let mut connections = Vec::new();
        for &(from, to, cpi) in &wiring {
            let from = usize::from(from) % components.len();
            let to = first_passive + usize::from(to) % (components.len() - first_passive);
            let cpi = usize::from(cpi) % components[to].cpis().len();
            connections.push(Connection {
                name: format!("k{}", connections.len()),
                from,
                interface: Some(format!("o{}", connections.len())),
                procedure: None,
                to: CpiId { component: to, cpi },
            });
        }
        // Bodies: request each connection of the component once, between two executions.
        for (index, component) in components.iter_mut().enumerate() {
            let requests: Vec<ProcedureStep> = (0..connections.len())
                .filter(|&k| connections[k].from == index)
                .map(|k| ProcedureStep::Request(ConnectionId(k)))
                .collect();
            let body = |n: u64| {
                let mut steps = vec![ProcedureStep::Execute(us(n))];
                steps.extend(requests.iter().copied());
                steps
            };
            match &mut component.kind {
                ComponentKind::Active { tasks: list } => {
                    if tasks[index].2 {
                        list[0].body = Some(body(1 + index as u64));
                    }
                }
                ComponentKind::Passive { cpis } => {
                    let flags = &passives[index - first_passive];
                    for (j, cpi) in cpis.iter_mut().enumerate() {
                        if flags[j].3 {
                            cpi.body = Some(body(1 + j as u64));
                        }
                    }
                }
            }
        }
        ComponentSystem {
            cost: bulwark_spec::CostModel::FREE,
            components,
            connections,
        }
    })
}

/// `system` written in the CAmkES subset: one component type per instance.
fn to_camkes(system: &ComponentSystem) -> String {
    let body = |steps: &[ProcedureStep]| {
        steps
            .iter()
            .map(|step| match step {
                ProcedureStep::Execute(d) => format!("execute {d}"),
                ProcedureStep::Request(k) => format!(
                    "request {}",
                    system.connections[k.0].interface.as_deref().unwrap_or("?")
                ),
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut text = String::from("import <std_connector.camkes>;\nprocedure P { void f(); };\n");
    for (index, c) in system.components.iter().enumerate() {
        text.push_str(&format!("component T{index} {{\n"));
        if c.is_active() {
            text.push_str("    control;\n");
        }
        for cpi in c.cpis() {
            text.push_str(&format!("    provides P {};\n", cpi.name));
        }
        for k in system.connections.iter().filter(|k| k.from == index) {
            text.push_str(&format!(
                "    uses P {};\n",
                k.interface.as_deref().unwrap_or("?")
            ));
        }
        text.push_str("}\n");
    }
    text.push_str("assembly {\n  composition {\n");
    for (index, c) in system.components.iter().enumerate() {
        text.push_str(&format!("    component T{index} {};\n", c.name));
    }
    for k in &system.connections {
        text.push_str(&format!(
            "    connection seL4RPCCall {}(from {}.{}, to {});\n",
            k.name,
            system.components[k.from].name,
            k.interface.as_deref().unwrap_or("?"),
            system.cpi_name(k.to)
        ));
    }
    text.push_str("  }\n  configuration {\n");
    for c in &system.components {
        let name = &c.name;
        for t in c.tasks() {
            text.push_str(&format!(
                "    {name}._priority = {};\n    {name}._period = \"{}\";\n    {name}.requestor = {};\n",
                t.priority.0, t.period, t.requestor
            ));
            if let Some(steps) = &t.body {
                text.push_str(&format!("    {name}._body = \"{}\";\n", body(steps)));
            }
        }
        for cpi in c.cpis() {
            let i = &cpi.name;
            text.push_str(&format!(
                "    {name}.{i}_priority_protocol = \"{}\";\n",
                cpi.protocol.name()
            ));
            if let Some(p) = cpi.priority {
                text.push_str(&format!("    {name}.{i}_priority = {};\n", p.0));
            }
            if let Some(n) = cpi.threads {
                text.push_str(&format!("    {name}.{i}_num_threads = {n};\n"));
            }
            if let Some(steps) = &cpi.body {
                text.push_str(&format!("    {name}.{i}_body = \"{}\";\n", body(steps)));
            }
        }
    }
    text.push_str("  }\n}\n");
    text
}

proptest! {
    #[test]
    fn writing_a_system_as_camkes_and_reading_it_back_gives_it_again(system in camkes_system()) {
        prop_assert_eq!(system.invariant_violation(), None);
        let text = to_camkes(&system);
        match parse_camkes(&text, "round.camkes") {
            Ok(read) => prop_assert_eq!(read, system),
            Err(d) => prop_assert!(false, "{}\n{}", d.plain(), text),
        }
    }

    #[test]
    fn no_text_makes_the_camkes_parser_panic(text in "\\PC{0,200}") {
        let _ = parse_camkes(&text, "any.camkes");
    }

    #[test]
    fn no_edit_of_a_valid_file_makes_it_panic_and_what_it_accepts_is_valid(
        at in 0usize..COMPLETE.len(),
        cut in 0usize..12,
        insert in "[a-z_.;{}()\"=0-9 ]{0,6}",
    ) {
        let start = (0..=at).rev().find(|&i| COMPLETE.is_char_boundary(i)).unwrap_or(0);
        let end = (start + cut).min(COMPLETE.len());
        let end = (end..=COMPLETE.len()).find(|&i| COMPLETE.is_char_boundary(i)).unwrap_or(COMPLETE.len());
        let text = format!("{}{insert}{}", &COMPLETE[..start], &COMPLETE[end..]);
        match parse_camkes(&text, "edited.camkes") {
            Ok(system) => prop_assert_eq!(system.invariant_violation(), None),
            Err(d) => {
                for e in &d {
                    prop_assert!(e.line().is_some() && !e.help().is_empty());
                }
            }
        }
    }

    #[test]
    fn no_text_makes_the_toml_parser_panic(text in "\\PC{0,200}") {
        let _ = parse_components(&text, "any.toml");
    }
}

/// A blank component name is refused at its table, and is no name to offer a connection
/// that names another component.
#[test]
fn a_blank_component_name_is_not_offered() {
    let text = "[[component]]\nname = \"\"\nkind = \"passive\"\n\
                [[component.cpi]]\nname = \"i\"\nprotocol = \"inherited\"\n\
                [[component]]\nname = \"client\"\nkind = \"active\"\n\
                [[component.task]]\nname = \"t\"\npriority = 1\nperiod = \"10ms\"\n\
                [[connection]]\nfrom = \"client\"\nto = \"server.i\"\n";
    let help = help_of(
        parse_components(text, "f.toml"),
        "no component is called `server`",
    );
    assert_eq!(help, "allowed: client");
}
