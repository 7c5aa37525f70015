//! Component systems on several cores of a scenario file: each `[[component]]` placed by its
//! own `core` or by `component-core`, the components of one core (and the connections
//! between them) read into that core's [`ComponentPart`](bulwark_spec::ComponentPart), and
//! each wrong placement refused with the error and the place worked out by hand (lines and
//! columns count from 1).

use bulwark_spec::{parse, Scenario};

/// Three cores: core 2 edf with one task; on core 0 (the default) a client `c0` calling
/// `s0.i`, on core 1 (`core = 1`) a client `c1` calling `s1.i`. Line numbers in the comments.
const FILE: &str = "name = \"cores\"\n\
    policy = \"fixed-priority\"\n\
    cores = 3\n\
    duration = \"100ms\"\n\
    [[core]]\n\
    id = 2\n\
    policy = \"edf\"\n\
    [[task]]\n\
    name = \"plain\"\n\
    core = 2\n\
    period = \"10ms\"\n\
    execution = \"1ms\"\n\
    [[component]]\n\
    name = \"c0\"\n\
    kind = \"active\"\n\
    [[component.task]]\n\
    name = \"a\"\n\
    priority = 10\n\
    period = \"10ms\"\n\
    body = [{ execute = \"1ms\" }, { request = \"s0.i\" }]\n\
    [[component]]\n\
    name = \"s0\"\n\
    kind = \"passive\"\n\
    [[component.cpi]]\n\
    name = \"i\"\n\
    protocol = \"inherited\"\n\
    body = [{ execute = \"2ms\" }]\n\
    [[component]]\n\
    name = \"c1\"\n\
    kind = \"active\"\n\
    core = 1\n\
    [[component.task]]\n\
    name = \"b\"\n\
    priority = 20\n\
    period = \"20ms\"\n\
    body = [{ request = \"s1.i\" }]\n\
    [[component]]\n\
    name = \"s1\"\n\
    kind = \"passive\"\n\
    core = 1\n\
    [[component.cpi]]\n\
    name = \"i\"\n\
    protocol = \"propagated\"\n\
    body = [{ execute = \"3ms\" }]\n\
    [[connection]]\n\
    from = \"c0\"\n\
    to = \"s0.i\"\n\
    [[connection]]\n\
    from = \"c1\"\n\
    to = \"s1.i\"\n";

fn valid(text: &str) -> Scenario {
    parse(text, "c.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
}

/// Every error of a wrong file, as `file:line:column: message`.
fn errors(text: &str) -> Vec<String> {
    match parse(text, "c.toml") {
        Ok(scenario) => panic!("accepted: {scenario:#?}"),
        Err(diagnostics) => diagnostics.errors().iter().map(|e| e.to_string()).collect(),
    }
}

fn names(part: &bulwark_spec::ComponentPart) -> Vec<&str> {
    let components = &part.system.components;
    components.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn each_core_s_components_are_a_system_of_their_own() {
    let scenario = valid(FILE);
    let cores: Vec<u16> = scenario.components.iter().map(|p| p.core).collect();
    assert_eq!(cores, [0, 1], "one system per core, by core");
    let (first, second) = (&scenario.components[0], &scenario.components[1]);
    assert_eq!(names(first), ["c0", "s0"]);
    assert_eq!(names(second), ["c1", "s1"]);
    assert_eq!(first.system.connections.len(), 1);
    assert_eq!(second.system.connections.len(), 1);
    assert_eq!(second.system.connections[0].name, "c1->s1.i");
    // Each system keeps where its own connections are declared: c1's is on line 48.
    let span = second.declarations.connections[0].clone();
    assert_eq!(&FILE[span.clone()], "[[connection]]");
    assert_eq!(FILE[..span.start].lines().count() + 1, 48);
    // The file's own task is not a component task.
    assert_eq!(scenario.tasks.len(), 1);
}

#[test]
fn a_connection_never_joins_two_cores() {
    let crossing = FILE
        .replacen(
            "body = [{ request = \"s1.i\" }]",
            "body = [{ request = \"s0.i\" }]",
            1,
        )
        .replacen(
            "from = \"c1\"\nto = \"s1.i\"",
            "from = \"c1\"\nto = \"s0.i\"",
            1,
        );
    // Both the connection and the request in b's body (line 36) are refused.
    assert_eq!(
        errors(&crossing),
        vec![
            "c.toml:36:21: component `s0` runs on core 0, not on core 1 with these",
            "c.toml:50:6: the connection from `c1` (on core 1) to `s0` (on core 0) joins two cores",
        ]
    );
}

#[test]
fn a_component_s_core_runs_fixed_priority_and_nothing_else() {
    let on_edf = FILE.replacen(
        "kind = \"active\"\ncore = 1\n",
        "kind = \"active\"\ncore = 2\n",
        1,
    );
    assert_eq!(
        errors(&on_edf),
        vec!["c.toml:31:8: component `c1`'s core 2 is core 2, which runs edf"]
    );
    let outside = FILE.replacen(
        "kind = \"passive\"\ncore = 1\n",
        "kind = \"passive\"\ncore = 3\n",
        1,
    );
    assert_eq!(
        errors(&outside),
        vec!["c.toml:40:8: component `s1`'s core 3 is not a core of this scenario"]
    );
    let beside = FILE.replacen("core = 2\nperiod", "core = 1\npriority = 1\nperiod", 1);
    assert_eq!(
        errors(&beside),
        vec!["c.toml:10:8: task `plain` is on core 1, which runs the component system"]
    );
}

#[test]
fn names_are_unique_across_cores() {
    let task = FILE.replacen("name = \"b\"", "name = \"a\"", 1);
    assert_eq!(
        errors(&task),
        vec!["c.toml:33:8: task name `a` is already used on line 17, on core 0"]
    );
}

#[test]
fn component_core_is_checked_only_when_a_component_takes_it() {
    // Core 0 runs edf and every component names core 1: the default is never used.
    let all_on_one = FILE
        .replacen(
            "[[core]]\nid = 2\n",
            "[[core]]\nid = 0\npolicy = \"edf\"\n[[core]]\nid = 2\n",
            1,
        )
        .replace(
            "kind = \"active\"\n[[component.task]]",
            "kind = \"active\"\ncore = 1\n[[component.task]]",
        )
        .replacen(
            "kind = \"passive\"\n[[component.cpi]]",
            "kind = \"passive\"\ncore = 1\n[[component.cpi]]",
            1,
        )
        .replacen("name = \"b\"", "name = \"b2\"", 1);
    let scenario = valid(&all_on_one);
    assert_eq!(scenario.components.len(), 1);
    assert_eq!(scenario.components[0].core, 1);
    assert_eq!(names(&scenario.components[0]), ["c0", "s0", "c1", "s1"]);
    // Written, `component-core` is checked even so (line 4 after the insertion).
    let written = all_on_one.replacen("cores = 3\n", "cores = 3\ncomponent-core = 0\n", 1);
    assert_eq!(
        errors(&written),
        vec!["c.toml:4:18: component-core 0 is core 0, which runs edf"]
    );
}

#[test]
fn components_alone_need_no_task_of_the_file() {
    let start = FILE.find("[[task]]").unwrap();
    let end = FILE.find("[[component]]").unwrap();
    let no_task = format!("{}{}", &FILE[..start], &FILE[end..]);
    let scenario = valid(&no_task);
    assert!(scenario.tasks.is_empty());
    assert_eq!(scenario.components.len(), 2);
    // Without components either, a scenario still needs a task.
    let nothing = &FILE[..start];
    let found = errors(nothing);
    assert_eq!(found, vec!["c.toml:1:1: this scenario has no tasks"]);
}
