//! The configuration analyzer on the CAmkES paper's topologies (Figs. 1, 2, 3 and 7 with
//! Table 3, as `.camkes` files in `tests/components/`), every expected value worked out by
//! hand from the rules in `component_graph`'s header; and properties on random systems.

use bulwark_analysis::component_graph::{
    analyze, camkes_configuration, render, ComponentAnalysis, CpiReport, CycleKind, Requester,
    Warning, CAVEAT_DISTINCT_CPIS, CAVEAT_OVERESTIMATE,
};
use bulwark_core::{Duration, Priority};
use bulwark_spec::component::{
    Component, ComponentKind, ComponentSystem, Connection, ConnectionId, Cpi, CpiId, CpiProtocol,
    ProcedureStep, Task,
};
use bulwark_spec::parse_camkes;
use proptest::prelude::*;

fn figure(name: &str) -> String {
    let path = format!("{}/tests/components/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn analysis_of(text: &str) -> ComponentAnalysis {
    match parse_camkes(text, "figure.camkes") {
        Ok(system) => analyze(&system),
        Err(diagnostics) => panic!("{}", diagnostics.plain()),
    }
}

fn cpi<'a>(analysis: &'a ComponentAnalysis, name: &str) -> &'a CpiReport {
    analysis
        .cpis
        .iter()
        .find(|c| c.name() == name)
        .unwrap_or_else(|| panic!("no CPI {name}"))
}

/// (minimum priority, ceiling, threads, nest) of a CPI.
fn summary(analysis: &ComponentAnalysis, name: &str) -> (u8, u8, u32, bool) {
    let c = cpi(analysis, name);
    (
        c.minimum.expect("requested").0,
        c.ceiling.expect("requested").0,
        c.threads,
        c.nest,
    )
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn fig1_tasks_share_a_nested_chain_and_one_task_branches() {
    let a = analysis_of(&figure("fig1.camkes"));
    // Tasks one (30) and two (20) reach A.a and, nested, B.s; three (10) reaches C.s and D.s.
    assert_eq!(summary(&a, "A.a"), (20, 30, 2, false));
    assert_eq!(summary(&a, "B.s"), (20, 30, 2, false));
    assert_eq!(summary(&a, "C.s"), (10, 10, 1, false));
    assert_eq!(summary(&a, "D.s"), (10, 10, 1, false));
    assert_eq!(cpi(&a, "B.s").tasks, names(&["one", "two"]));
    assert_eq!(
        cpi(&a, "B.s").requesters,
        vec![Requester::Task("one".into()), Requester::Task("two".into())]
    );
    assert!(a.cycles.is_empty());
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    // Eq. 1 without overheads: one = 1 + (2 + 1) + 1, two = 2 + (2 + 1), three = 1 + 3 + 1.
    let executions: Vec<_> = a.tasks.iter().map(|t| t.execution).collect();
    assert_eq!(executions, vec![Some(ms(5)), Some(ms(5)), Some(ms(5))]);
    assert_eq!(a.tasks[2].cpis, names(&["C.s", "D.s"]));
    // __COUNTER__ numbers the requestors 0, 1, 2 in file order.
    let requestors: Vec<u32> = a.tasks.iter().map(|t| t.requestor).collect();
    assert_eq!(requestors, vec![0, 1, 2]);
}

#[test]
fn fig2_nested_locks_in_one_component_are_not_a_call_loop() {
    let a = analysis_of(&figure("fig2.camkes"));
    // The reentrant CPI propagates both tasks to lock A (2 threads); lock A's holder is lock
    // B's only requester, plus nest because lock A is PIP.
    assert_eq!(summary(&a, "resource.reentrant"), (10, 20, 2, false));
    assert_eq!(summary(&a, "resource.lock_a"), (10, 20, 2, false));
    assert_eq!(summary(&a, "resource.lock_b"), (10, 20, 2, true));
    assert_eq!(cpi(&a, "resource.lock_b").concurrent, 1);
    assert_eq!(
        cpi(&a, "resource.lock_b").requesters,
        vec![Requester::Exclusive("resource.lock_a".into())]
    );
    // The component's connections go to itself: a cycle, but not a call loop.
    assert_eq!(a.cycles.len(), 1);
    let cycle = &a.cycles[0];
    assert_eq!(cycle.kind, CycleKind::ConnectionsOnly);
    assert_eq!(cycle.components, names(&["resource"]));
    assert!(cycle.warning().contains("cannot deadlock"));
    assert!(cycle.warning().contains(CAVEAT_DISTINCT_CPIS));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    // one = 1 + reentrant (1 + lock A (1 + lock B 1 + 1)) = 5ms; two = 2 + 4 = 6ms.
    assert_eq!(a.tasks[0].execution, Some(ms(5)));
    assert_eq!(a.tasks[1].execution, Some(ms(6)));
}

#[test]
fn fig2_without_bodies_warns_with_both_caveats() {
    let text: String = figure("fig2.camkes")
        .lines()
        .filter(|line| !line.contains("resource.") || !line.contains("_body"))
        .map(|line| format!("{line}\n"))
        .collect();
    let a = analysis_of(&text);
    // Every CPI of `resource` may now send over both of its connections: a possible loop.
    assert_eq!(a.cycles.len(), 1);
    assert_eq!(a.cycles[0].kind, CycleKind::PossibleCallLoop);
    assert_eq!(a.cycles[0].components, names(&["resource"]));
    // The shortest loop: lock A requesting itself.
    assert_eq!(a.cycles[0].cpis, names(&["resource.lock_a"]));
    assert_eq!(
        a.warnings,
        vec![Warning::Overestimate {
            component: "resource".into(),
            connections: names(&["a", "b"]),
            cpis: names(&["resource.reentrant", "resource.lock_a", "resource.lock_b"]),
        }]
    );
    assert!(a.warnings[0].message().contains(CAVEAT_OVERESTIMATE));
    // And pools are over-estimated: lock A now also hears from lock A and lock B (both PIP,
    // so nest), lock B from the reentrant CPI's two tasks as well.
    assert_eq!(summary(&a, "resource.lock_a"), (10, 20, 3, true));
    assert_eq!(summary(&a, "resource.lock_b"), (10, 20, 3, true));
    assert_eq!(summary(&a, "resource.reentrant"), (10, 20, 2, false));
}

fn fig3(a_protocol: &str, b_protocol: &str, extra: &str) -> ComponentAnalysis {
    let text = figure("fig3.camkes")
        .replace(
            "A.a_priority_protocol = \"propagated\";",
            &format!("A.a_priority_protocol = \"{a_protocol}\";"),
        )
        .replace(
            "B.b_priority_protocol = \"propagated\";",
            &format!("B.b_priority_protocol = \"{b_protocol}\";\n{extra}"),
        );
    analysis_of(&text)
}

#[test]
fn fig3_gives_a_two_threads_and_b_three() {
    let a = fig3("propagated", "propagated", "");
    assert_eq!(summary(&a, "A.a"), (20, 30, 2, false));
    assert_eq!(summary(&a, "B.b"), (10, 30, 3, false));
    assert_eq!(cpi(&a, "B.b").tasks, names(&["one", "two", "three"]));
    assert!(a.cycles.is_empty() && a.warnings.is_empty());
    assert_eq!(
        camkes_configuration(&a),
        "/* Computed by the Bulwark configuration analyzer: priority ceilings and thread pools. */\n\
         A.a_priority = 30; /* threads wait at the priority ceiling; minimum priority 20 */\n\
         A.a_num_threads = 2; /* 2 requests at once */\n\
         B.b_priority = 30; /* threads wait at the priority ceiling; minimum priority 10 */\n\
         B.b_num_threads = 3; /* 3 requests at once */\n"
    );
    let text = render(&a);
    assert!(
        text.contains("B.b  propagation  one, two, three  10   30       30        3 (3 at once)"),
        "{text}"
    );
}

/// A tasks cell wider than `format!`'s widest padding (65,535) is padded, not a panic: a
/// CPI called by thousands of clients lists them all.
#[test]
fn a_tasks_cell_over_65535_characters_is_padded() {
    let mut a = fig3("propagated", "propagated", "");
    let wide = "t".repeat(70_000);
    a.cpis
        .iter_mut()
        .find(|c| c.name() == "B.b")
        .expect("B.b")
        .tasks = vec![wide.clone()];
    let text = render(&a);
    let lines: Vec<&str> = text.lines().collect();
    // Columns: "CPI" 3 wide, "protocol" 11 ("propagation"), then the tasks column.
    let tasks_at = 3 + 2 + 11 + 2;
    assert_eq!(&lines[0][tasks_at..tasks_at + 5], "tasks");
    assert_eq!(
        lines[0].find("min"),
        Some(tasks_at + 70_000 + 2),
        "{}",
        &lines[0][..40]
    );
    assert_eq!(&lines[2][tasks_at..tasks_at + 70_000], wide);
    assert_eq!(&lines[2][tasks_at + 70_000..tasks_at + 70_004], "  10");
    assert_eq!(&lines[1][tasks_at..tasks_at + 12], "one, two    ");
}

#[test]
fn fig3_with_pip_upstream_counts_the_lock_holder_once_plus_nest() {
    // A's lock holder is one requester of B (tasks 1 and 2 cannot both be in A's
    // procedure), task 3 the other, and B needs nest: still 3 threads, as the paper says.
    for b in ["propagated", "inherited"] {
        let a = fig3("inherited", b, "");
        assert_eq!(summary(&a, "A.a"), (20, 30, 2, false));
        assert_eq!(summary(&a, "B.b"), (10, 30, 3, true));
        assert_eq!(cpi(&a, "B.b").concurrent, 2);
        assert_eq!(
            cpi(&a, "B.b").requesters,
            vec![
                Requester::Task("three".into()),
                Requester::Exclusive("A.a".into())
            ]
        );
    }
}

#[test]
fn fig3_with_fixed_cpis() {
    // B fixed: one thread, IPCP at its ceiling.
    let a = fig3("propagated", "fixed", "");
    assert_eq!(summary(&a, "B.b"), (10, 30, 1, false));
    assert_eq!(cpi(&a, "B.b").protocol.label(), "IPCP");
    assert!(camkes_configuration(&a).contains(
        "B.b_priority = 30; /* IPCP at the priority ceiling; minimum priority 10 */\n\
         B.b_num_threads = 1; /* one thread: fixed */\n"
    ));
    // A fixed (IPCP at 30): its one thread sends at 30, not at the task's priority.
    let a = fig3("fixed", "propagated", "");
    assert_eq!(summary(&a, "A.a"), (20, 30, 1, false));
    assert_eq!(summary(&a, "B.b"), (10, 30, 2, false));
    // A fixed at 255 is NPCS, and B then hears requests at 255.
    let a = fig3("fixed", "propagated", "A.a_priority = 255;");
    assert_eq!(cpi(&a, "A.a").protocol, CpiProtocol::Npcs);
    assert_eq!(cpi(&a, "A.a").priority, Some(Priority(255)));
    assert_eq!(summary(&a, "B.b"), (10, 255, 2, false));
    assert!(camkes_configuration(&a).contains("A.a_priority = 255; /* NPCS */\n"));
    // A fixed below its ceiling: warned, and B hears 25.
    let a = fig3("fixed", "propagated", "A.a_priority = 25;");
    assert_eq!(summary(&a, "B.b"), (10, 25, 2, false));
    assert_eq!(
        a.warnings,
        vec![Warning::PriorityBelowCeiling {
            cpi: "A.a".into(),
            protocol: CpiProtocol::Ipcp,
            configured: Priority(25),
            ceiling: Priority(30),
        }]
    );
}

#[test]
fn configured_pools_that_are_too_small_are_warned() {
    let a = fig3(
        "propagated",
        "propagated",
        "B.b_num_threads = 2; A.a_num_threads = 5;",
    );
    assert_eq!(
        a.warnings,
        vec![Warning::TooFewThreads {
            cpi: "B.b".into(),
            configured: 2,
            needed: 3,
        }]
    );
    assert!(a.warnings[0]
        .message()
        .contains("has 2 threads but needs 3"));
    assert_eq!(cpi(&a, "A.a").configured_threads, Some(5));
    assert!(render(&a).contains("warning: `B.b` has 2 threads but needs 3"));
}

#[test]
fn an_injected_cycle_is_flagged_as_a_call_loop() {
    let text = figure("fig3.camkes")
        .replace(
            "provides Service b;",
            "provides Service b;\n    uses Service back;",
        )
        .replace(
            "connection seL4RPCCallPrioritized three_to_b",
            "connection seL4RPCCall b_to_a(from B.back, to A.a);\n        \
             connection seL4RPCCallPrioritized three_to_b",
        );
    let a = analysis_of(&text);
    assert_eq!(a.cycles.len(), 1);
    let cycle = &a.cycles[0];
    // Each component has one procedure, so its connections say who sends: a sure loop.
    assert_eq!(cycle.kind, CycleKind::CallLoop);
    assert_eq!(cycle.cpis, names(&["A.a", "B.b"]));
    assert_eq!(cycle.components, names(&["A", "B"]));
    let warning = cycle.warning();
    assert!(
        warning.starts_with("call loop A.a -> B.b -> A.a (components A, B)"),
        "{warning}"
    );
    assert!(warning.contains("deadlock") && warning.contains(CAVEAT_DISTINCT_CPIS));
    assert!(render(&a).contains("warning: call loop A.a -> B.b -> A.a"));
    // The analysis still ends: everyone reaches both CPIs.
    assert_eq!(cpi(&a, "A.a").tasks, names(&["one", "two", "three"]));
}

/// Table 3's four configurations of CPIs C, D and E on Fig. 7's topology, and what the
/// analyzer must give: (CPI, minimum, ceiling, threads, nest).
#[test]
fn fig7_table3_configurations() {
    type Expected = [(&'static str, u8, u8, u32, bool); 5];
    // A and B are PIP with two tasks each, never downstream of PIP: 2 threads each.
    let a_and_b = [("A.work", 30, 40, 2, false), ("B.work", 10, 20, 2, false)];
    let configurations: [([&str; 3], Expected); 4] = [
        (
            ["inherited", "propagated", "inherited"],
            [
                a_and_b[0],
                a_and_b[1],
                // C: A's lock holder + nest; D: B's lock holder (through nothing) + nest.
                ("C.work", 30, 40, 2, true),
                ("D.work", 10, 20, 2, true),
                // E: C's lock holder and B's (through D, which propagates) + nest.
                ("E.work", 10, 40, 3, true),
            ],
        ),
        (
            ["inherited", "propagated", "propagated"],
            [
                a_and_b[0],
                a_and_b[1],
                ("C.work", 30, 40, 2, true),
                ("D.work", 10, 20, 2, true),
                ("E.work", 10, 40, 3, true),
            ],
        ),
        (
            ["fixed", "inherited", "propagated"],
            [
                a_and_b[0],
                a_and_b[1],
                // C is IPCP at 40: one thread, and E hears 40 from it.
                ("C.work", 30, 40, 1, false),
                ("D.work", 10, 20, 2, true),
                ("E.work", 10, 40, 3, true),
            ],
        ),
        (
            ["fixed", "propagated", "inherited"],
            [
                a_and_b[0],
                a_and_b[1],
                ("C.work", 30, 40, 1, false),
                ("D.work", 10, 20, 2, true),
                ("E.work", 10, 40, 3, true),
            ],
        ),
    ];
    let base = figure("fig7.camkes");
    for (index, (protocols, expected)) in configurations.iter().enumerate() {
        let mut text = base.clone();
        for (cpi_name, protocol) in ["C", "D", "E"].iter().zip(protocols) {
            let line = |p: &str| format!("{cpi_name}.work_priority_protocol = \"{p}\";");
            let original = ["inherited", "propagated"]
                .iter()
                .map(|p| line(p))
                .find(|l| text.contains(l.as_str()))
                .expect("the file sets each protocol");
            text = text.replace(&original, &line(protocol));
        }
        let a = analysis_of(&text);
        for &(name, minimum, ceiling, threads, nest) in expected {
            assert_eq!(
                summary(&a, name),
                (minimum, ceiling, threads, nest),
                "configuration {}: {name}",
                index + 1
            );
        }
        assert!(a.cycles.is_empty());
        // E's arrivals: 40 and 30 from C (PIP passes them on) or 40 alone (IPCP), plus 20
        // and 10 from D.
        let e = cpi(&a, "E.work");
        assert_eq!(e.tasks, names(&["t1", "t2", "t3", "t4"]));
    }
}

/// A random component system: `active` one-task components, then passive components of
/// 1..=3 CPIs. Connections go only from a component to a CPI of a later component, so the
/// system is acyclic when `acyclic`; otherwise any component may connect to any CPI.
fn system_strategy(acyclic: bool) -> impl Strategy<Value = ComponentSystem> {
    let tasks = prop::collection::vec((any::<u8>(), 1u64..100), 1..=4);
    let passives =
        prop::collection::vec(prop::collection::vec((0u8..4, any::<bool>()), 1..=3), 1..=4);
    let wiring = prop::collection::vec((any::<u16>(), any::<u16>(), any::<u16>()), 0..=12);
    (tasks, passives, wiring).prop_map(move |(tasks, passives, wiring)| {
        build_system(&tasks, &passives, &wiring, acyclic)
    })
}

fn build_system(
    tasks: &[(u8, u64)],
    passives: &[Vec<(u8, bool)>],
    wiring: &[(u16, u16, u16)],
    acyclic: bool,
) -> ComponentSystem {
    let mut components = Vec::new();
    for (i, &(priority, period)) in tasks.iter().enumerate() {
        components.push(Component {
            name: format!("task{i}"),
            kind: ComponentKind::Active {
                tasks: vec![Task {
                    name: format!("task{i}"),
                    priority: Priority(priority),
                    period: ms(period),
                    requestor: i as u32,
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
            .map(|(j, &(protocol, with_body))| {
                let (protocol, priority) = match protocol {
                    0 => (CpiProtocol::Propagated, None),
                    1 => (CpiProtocol::Inherited, None),
                    2 => (CpiProtocol::Ipcp, None),
                    _ => (CpiProtocol::Npcs, Some(Priority::MAX)),
                };
                Cpi {
                    name: format!("i{j}"),
                    protocol,
                    priority,
                    threads: None,
                    // Filled in once the connections are known.
                    body: with_body.then(Vec::new),
                }
            })
            .collect();
        components.push(Component {
            name: format!("server{p}"),
            kind: ComponentKind::Passive { cpis },
        });
    }
    let mut connections: Vec<Connection> = Vec::new();
    for &(from, to, cpi) in wiring {
        let from = usize::from(from) % components.len();
        let targets: Vec<usize> = (first_passive..components.len())
            .filter(|&c| !acyclic || c > from)
            .collect();
        if targets.is_empty() {
            continue;
        }
        let to = targets[usize::from(to) % targets.len()];
        let to = CpiId {
            component: to,
            cpi: usize::from(cpi) % components[to].cpis().len(),
        };
        if connections.iter().any(|c| c.from == from && c.to == to) {
            continue;
        }
        connections.push(Connection {
            name: format!("k{}", connections.len()),
            from,
            interface: Some(format!("o{}", connections.len())),
            procedure: None,
            to,
        });
    }
    // A CPI with a body requests every other connection of its component, and executes.
    for (k, connection) in connections.iter().enumerate() {
        if let ComponentKind::Passive { cpis } = &mut components[connection.from].kind {
            for (j, cpi) in cpis.iter_mut().enumerate() {
                if let Some(body) = &mut cpi.body {
                    if (j + k) % 2 == 0 {
                        body.push(ProcedureStep::Request(ConnectionId(k)));
                    }
                }
            }
        }
    }
    for component in &mut components {
        if let ComponentKind::Passive { cpis } = &mut component.kind {
            for cpi in cpis.iter_mut() {
                if let Some(body) = &mut cpi.body {
                    body.push(ProcedureStep::Execute(ms(1)));
                }
            }
        }
    }
    ComponentSystem {
        cost: bulwark_spec::CostModel::FREE,
        components,
        connections,
    }
}

proptest! {
    #[test]
    fn random_acyclic_systems_have_no_cycles_and_bounded_pools(system in system_strategy(true)) {
        prop_assert_eq!(system.invariant_violation(), None);
        let a = analyze(&system);
        prop_assert!(a.cycles.is_empty(), "{:?}", a.cycles);
        prop_assert_eq!(a.cpis.len(), system.cpis().len());
        for c in &a.cpis {
            prop_assert!(c.threads >= 1);
            if c.protocol.is_fixed() {
                prop_assert_eq!(c.threads, 1);
                prop_assert!(!c.nest);
                continue;
            }
            // At most one thread per distinct requester, and per task, plus one for nest.
            let bound = c.requesters.len().min(c.tasks.len()).max(1) as u32;
            prop_assert!(c.threads <= bound + u32::from(c.nest), "{c:?}");
            prop_assert_eq!(c.threads, c.concurrent.max(1) as u32 + u32::from(c.nest));
            prop_assert_eq!(c.tasks.is_empty(), c.ceiling.is_none());
            prop_assert!(c.minimum <= c.ceiling);
        }
        // The text forms do not panic and name every CPI.
        let text = render(&a);
        let configuration = camkes_configuration(&a);
        for c in &a.cpis {
            prop_assert!(text.contains(&c.name()));
            let threads_line = format!("{}_num_threads = {};", c.name(), c.threads);
            prop_assert!(configuration.contains(&threads_line));
        }
    }

    #[test]
    fn with_propagation_only_pools_count_tasks_and_ceilings_are_task_priorities(
        system in system_strategy(true)
    ) {
        let mut system = system;
        for component in &mut system.components {
            if let ComponentKind::Passive { cpis } = &mut component.kind {
                for cpi in cpis.iter_mut() {
                    cpi.protocol = CpiProtocol::Propagated;
                    cpi.priority = None;
                }
            }
        }
        let a = analyze(&system);
        for c in &a.cpis {
            prop_assert!(!c.nest);
            prop_assert_eq!(c.threads as usize, c.tasks.len().max(1));
            let priorities: Vec<Priority> = system
                .tasks()
                .into_iter()
                .filter(|(_, t)| c.tasks.contains(&t.name))
                .map(|(_, t)| t.priority)
                .collect();
            prop_assert_eq!(c.ceiling, priorities.iter().copied().max());
            prop_assert_eq!(c.minimum, priorities.iter().copied().min());
        }
    }

    #[test]
    fn any_system_is_analyzed_and_its_cycles_are_real(system in system_strategy(false)) {
        let a = analyze(&system);
        for cycle in &a.cycles {
            prop_assert!(!cycle.cpis.is_empty() && !cycle.components.is_empty());
            prop_assert!(!cycle.warning().is_empty());
        }
        // A cycle among components exists exactly when the analyzer reports one.
        let n = system.components.len();
        let mut reach = vec![vec![false; n]; n];
        for k in &system.connections {
            reach[k.from][k.to.component] = true;
        }
        for m in 0..n {
            for i in 0..n {
                for j in 0..n {
                    reach[i][j] |= reach[i][m] && reach[m][j];
                }
            }
        }
        let has_cycle = (0..n).any(|i| reach[i][i]);
        prop_assert_eq!(has_cycle, !a.cycles.is_empty());
    }
}

/// A task whose request goes down a chain of `length` passive components, each CPI executing
/// 1 us and requesting the next (the last only executes), the task executing 1 us first.
fn chain(length: usize) -> ComponentSystem {
    let us = Duration::from_micros;
    let mut components = vec![Component {
        name: "client".to_owned(),
        kind: ComponentKind::Active {
            tasks: vec![Task {
                name: "a".to_owned(),
                priority: Priority(10),
                period: ms(1_000),
                requestor: 0,
                body: Some(vec![
                    ProcedureStep::Execute(us(1)),
                    ProcedureStep::Request(ConnectionId(0)),
                ]),
                reservation: None,
            }],
        },
    }];
    let mut connections = Vec::new();
    for link in 0..length {
        let mut body = vec![ProcedureStep::Execute(us(1))];
        if link + 1 < length {
            body.push(ProcedureStep::Request(ConnectionId(link + 1)));
        }
        components.push(Component {
            name: format!("s{link}"),
            kind: ComponentKind::Passive {
                cpis: vec![Cpi {
                    name: "i".to_owned(),
                    protocol: CpiProtocol::Inherited,
                    priority: None,
                    threads: None,
                    body: Some(body),
                }],
            },
        });
        connections.push(Connection {
            name: format!("k{link}"),
            from: link,
            interface: None,
            procedure: (link > 0).then_some(0),
            to: CpiId {
                component: link + 1,
                cpi: 0,
            },
        });
    }
    ComponentSystem {
        cost: bulwark_spec::CostModel::FREE,
        components,
        connections,
    }
}

/// 100,000 nested requests: the task's execution is its own 1 us and 1 us per CPI, and no
/// cycle. The analysis walks the chain without recursion (a recursive walk needs a frame per
/// nested request) and in linear time and memory (a reachability matrix of the CPIs would
/// hold 10^10 entries).
#[test]
fn a_chain_of_a_hundred_thousand_nested_requests_is_analysed() {
    let system = chain(100_000);
    let analysis = analyze(&system);
    assert!(analysis.cycles.is_empty(), "{:?}", analysis.cycles);
    assert_eq!(
        analysis.tasks[0].execution,
        Some(Duration::from_micros(100_001))
    );
}
