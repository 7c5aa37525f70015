//! A component system in a scenario file (`[[component]]` and `[[connection]]` beside the
//! tasks, `component-core`): read into the scenario's [`ComponentPart`], and each wrong file
//! refused with the error and the place worked out by hand (lines and columns count from 1).

use bulwark_core::{Duration, Priority};
use bulwark_spec::component::{ComponentKind, CpiProtocol};
use bulwark_spec::system::{kind_of, FileKind};
use bulwark_spec::{parse, PolicyKind, Scenario};

/// Two cores: core 1 edf with one task; a client calling a server's CPI (lines 11 onwards).
const HEAD: &str = "name = \"mixed\"\n\
                    policy = \"fixed-priority\"\n\
                    cores = 2\n\
                    duration = \"100ms\"\n\
                    [[core]]\n\
                    id = 1\n\
                    policy = \"edf\"\n\
                    [[task]]\n\
                    name = \"plain\"\n\
                    core = 1\n";
const REST: &str = "period = \"10ms\"\n\
                    execution = \"1ms\"\n\
                    [[component]]\n\
                    name = \"client\"\n\
                    kind = \"active\"\n\
                    [[component.task]]\n\
                    name = \"t1\"\n\
                    priority = 10\n\
                    period = \"10ms\"\n\
                    body = [{ execute = \"1ms\" }, { request = \"server.i\" }]\n\
                    [[component]]\n\
                    name = \"server\"\n\
                    kind = \"passive\"\n\
                    [[component.cpi]]\n\
                    name = \"i\"\n\
                    protocol = \"inherited\"\n\
                    body = [{ execute = \"2ms\" }]\n\
                    [[connection]]\n\
                    from = \"client\"\n\
                    to = \"server.i\"\n";

fn file() -> String {
    format!("{HEAD}{REST}")
}

fn valid(text: &str) -> Scenario {
    parse(text, "m.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
}

/// Every error of a wrong file, as `file:line:column: message`.
fn errors(text: &str) -> Vec<String> {
    match parse(text, "m.toml") {
        Ok(scenario) => panic!("accepted: {scenario:#?}"),
        Err(diagnostics) => diagnostics.errors().iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn a_scenario_with_components_is_a_scenario_whichever_key_comes_first() {
    assert_eq!(kind_of(&file(), "m.toml").unwrap(), FileKind::Scenario);
    // A component key first (an inline array), the scenario keys after: still a scenario.
    let inline = "component = [{ name = \"c\", kind = \"passive\" }]\npolicy = \"edf\"\n";
    assert_eq!(kind_of(inline, "m.toml").unwrap(), FileKind::Scenario);
    // Without scenario keys, the same tables are a component system.
    let components = &REST[REST.find("[[component]]").unwrap()..];
    assert_eq!(kind_of(components, "m.toml").unwrap(), FileKind::Components);
    // A key of a third kind is still refused, named against the scenario key.
    let third = file().replacen("cores = 2\n", "cores = 2\nprotocol = \"mc-ipc\"\n", 1);
    let error = kind_of(&third, "m.toml").unwrap_err().errors()[0].to_string();
    assert!(
        error.contains("`protocol` belongs to an MC-IPC system, but `policy` (line 2)"),
        "{error}"
    );
    let help = kind_of(&third, "m.toml").unwrap_err().errors()[0]
        .help()
        .to_owned();
    assert!(help.contains("`component` and `connection` too"), "{help}");
}

#[test]
fn the_component_system_is_read_into_the_scenario_on_its_core() {
    let scenario = valid(&file());
    assert_eq!(
        scenario.tasks.len(),
        1,
        "the file's own tasks only, before lowering"
    );
    let part = scenario.components.first().expect("a component system");
    assert_eq!(part.core, 0, "component-core defaults to 0");
    assert_eq!(part.lowered, None);
    let system = &part.system;
    assert_eq!(system.components.len(), 2);
    assert_eq!(system.connections.len(), 1);
    let ComponentKind::Active { tasks } = &system.components[0].kind else {
        panic!("the client is active");
    };
    assert_eq!(tasks[0].name, "t1");
    assert_eq!(tasks[0].priority, Priority(10));
    assert_eq!(tasks[0].period, Duration::from_millis(10));
    let cpis = system.components[1].cpis();
    assert_eq!(cpis[0].protocol, CpiProtocol::Inherited);
    // The connection's span is its [[connection]] header's, for call-loop errors.
    let text = file();
    let span = part.declarations.connections[0].clone();
    assert_eq!(&text[span.clone()], "[[connection]]");
    assert_eq!(text[..span.start].lines().count() + 1, 28);
    // The scenario's cost table charges the component system too.
    assert_eq!(system.cost, scenario.cost);
}

#[test]
fn component_core_names_the_core_and_it_must_run_fixed_priority() {
    let on_one = file().replacen("cores = 2\n", "cores = 2\ncomponent-core = 1\n", 1);
    // Core 1 runs edf (line 8 after the insertion: `component-core` is line 4).
    assert_eq!(
        errors(&on_one),
        vec!["m.toml:4:18: component-core 1 is core 1, which runs edf"]
    );
    let outside = file().replacen("cores = 2\n", "cores = 2\ncomponent-core = 5\n", 1);
    assert_eq!(
        errors(&outside),
        vec!["m.toml:4:18: component-core 5 is not a core of this scenario"]
    );
    // The default core 0 under edf: the error is at the first [[component]].
    let edf = file().replacen("policy = \"fixed-priority\"", "policy = \"edf\"", 1);
    let found = errors(&edf);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("m.toml:13:1: the component system's core (`component-core`, default 0) is core 0, which runs edf"),
        "{found:?}"
    );
}

#[test]
fn no_task_shares_the_component_core_or_a_component_task_s_name() {
    let beside = file().replacen("core = 1\n", "core = 0\npriority = 1\n", 1);
    assert_eq!(
        errors(&beside),
        vec!["m.toml:10:8: task `plain` is on core 0, which runs the component system"]
    );
    let clash = file().replacen("name = \"plain\"", "name = \"t1\"", 1);
    assert_eq!(
        errors(&clash),
        vec!["m.toml:17:8: task name `t1` is already used by the [[task]] on line 9"]
    );
}

#[test]
fn a_component_task_needs_a_body_and_connections_need_components() {
    let bodiless = file().replacen(
        "body = [{ execute = \"1ms\" }, { request = \"server.i\" }]\n",
        "",
        1,
    );
    assert_eq!(
        errors(&bodiless),
        vec!["m.toml:17:8: component task `t1` has no body, so what its jobs do is unknown"]
    );
    let plain = format!("{HEAD}period = \"10ms\"\nexecution = \"1ms\"\n");
    assert_eq!(
        errors(&format!(
            "{plain}[[connection]]\nfrom = \"a\"\nto = \"b.i\"\n"
        )),
        vec!["m.toml:13:1: a [[connection]] without any [[component]]"]
    );
    assert_eq!(
        errors(&plain.replacen("cores = 2\n", "cores = 2\ncomponent-core = 0\n", 1)),
        vec!["m.toml:4:18: `component-core` without any [[component]]"]
    );
    // A plain scenario has no component system.
    assert!(valid(&plain).components.is_empty());
    assert_eq!(valid(&plain).policy_of(1), PolicyKind::Edf);
}

#[test]
fn the_component_tables_are_checked_as_in_a_component_file() {
    let unknown = file().replacen("to = \"server.i\"", "to = \"server.x\"", 1);
    let found = errors(&unknown);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("m.toml:30:6: "), "{found:?}");
    assert!(
        found[0].contains("server.x") || found[0].contains("`x`"),
        "{found:?}"
    );
}
