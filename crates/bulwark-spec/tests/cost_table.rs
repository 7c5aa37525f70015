//! One `[cost]` table for every file kind: each kind may set only the costs its machine
//! charges, and a cost nothing would charge is refused at its key, never ignored.

mod common;

use bulwark_spec::{parse, parse_components, parse_mc_ipc, CallReplyCycles, CostModel, IpcCosts};
use common::{client_server_components, first_error};

/// A one-task component system (20 lines), then a blank line and `extra` (its `[cost]`).
fn components(extra: &str) -> String {
    client_server_components("", &format!("\n{extra}"))
}

#[test]
fn a_component_system_sets_its_clock_context_switch_and_table_2() {
    let text = components(
        r#"[cost]
clock = "2.1GHz"
context-switch = 400

[cost.ipc]
propagated = { call = 6830, reply = 3960 }
pip-to-pip = { call = 6878, reply = 6300 }
nest-to-propagated = 7530
"#,
    );
    let system = parse_components(&text, "c.toml").unwrap();
    // Rows not written are zero, as every cost left out is.
    let expected = CostModel {
        clock_hz: 2_100_000_000,
        context_switch: 400,
        ipc: IpcCosts {
            propagated: CallReplyCycles::new(6830, 3960),
            pip_to_pip: CallReplyCycles::new(6878, 6300),
            nest_to_propagated: 7530,
            ..IpcCosts::ZERO
        },
        ..CostModel::FREE
    };
    assert_eq!(system.cost, expected);
    // Without [cost], free; so is a .camkes file, which has no place for one.
    assert_eq!(
        parse_components(&components(""), "c.toml").unwrap().cost,
        CostModel::FREE
    );
}

#[test]
fn the_paper_s_table_2_in_a_file_is_the_built_in_xeon_table() {
    let text = components(
        r#"[cost]
clock = "2.1GHz"

[cost.ipc]
propagated = { call = 6830, reply = 3960 }
fixed = { call = 4810, reply = 3342 }
inherited-unlocked = { call = 6834, reply = 4028 }
inherited-locked = { call = 6282, reply = 3788 }
pip-to-pip = { call = 6878, reply = 6300 }
pip-to-propagated = { call = 6306, reply = 5318 }
nest-to-inherited = 6720
nest-to-propagated = 7530
"#,
    );
    let system = parse_components(&text, "c.toml").unwrap();
    assert_eq!(system.cost, CostModel::XEON_GOLD_6130_MAX);
}

#[test]
fn a_component_system_refuses_costs_its_machine_does_not_charge() {
    // The system's last line is 20 and a blank one follows: `[cost]` is on line 22, so
    // `scheduler` is on line 24, at column 1.
    let text = components("[cost]\nclock = \"1GHz\"\nscheduler = 300\n");
    let (error, help) = first_error(parse_components(&text, "c.toml"));
    assert_eq!(
        error,
        "c.toml:24:1: `scheduler` is not a cost of a component system: its machine charges \
         IPC steps and context switches only"
    );
    assert_eq!(help, "allowed: clock, context-switch and [cost.ipc]");
    // Every refused key is reported, in file order.
    let text = components("[cost]\nreclaim-per-unit = 13\ncache-flush = 5\n");
    let diagnostics = parse_components(&text, "c.toml").unwrap_err();
    let lines: Vec<usize> = diagnostics
        .errors()
        .iter()
        .filter_map(|e| e.line())
        .collect();
    assert_eq!(lines, [23, 24]);
}

#[test]
fn table_2_cycles_cannot_be_negative_nor_rows_unknown() {
    let text = components("[cost.ipc]\nfixed = { call = -1, reply = 5 }\n");
    let (error, help) = first_error(parse_components(&text, "c.toml"));
    // `[cost.ipc]` on line 22, `fixed` on line 23; `-1` at column 18.
    assert_eq!(error, "c.toml:23:18: fixed's call -1 is negative");
    assert_eq!(help, "allowed: 0 or more cycles");
    let text = components("[cost.ipc]\nunlocked = { call = 1, reply = 1 }\n");
    let (error, _) = first_error(parse_components(&text, "c.toml"));
    assert!(error.starts_with("c.toml:23:1: "), "{error}");
    assert!(error.contains("unknown field `unlocked`"), "{error}");
}

#[test]
fn a_scenario_and_an_mc_ipc_system_refuse_component_ipc_costs() {
    let scenario =
        "name = \"s\"\npolicy = \"edf\"\nduration = \"1s\"\n\n[cost]\nipc = { fixed = { call = \
                    1, reply = 1 } }\n\n[[task]]\nname = \"t\"\nperiod = \"10ms\"\n\
                    execution = \"1ms\"\n";
    let (error, help) = first_error(parse(scenario, "s.toml"));
    assert_eq!(
        error,
        "s.toml:6:1: `ipc` is not a cost of a scenario: this file has no [[component]] \
         tables, whose IPC steps it would price"
    );
    assert!(
        help.ends_with("[cost.ipc] with [[component]] tables"),
        "{help}"
    );

    let mc_ipc = "[[cluster]]\nname = \"C1\"\ncores = 1\n\n[[server]]\nname = \"key\"\n\
                  operation = \"2ms\"\n\n[cost]\ncache-refill = 5\n";
    // The system has no reservation either: that is reported too.
    let diagnostics = parse_mc_ipc(mc_ipc, "m.toml").unwrap_err();
    let refused = diagnostics
        .errors()
        .iter()
        .find(|e| e.message().contains("cache-refill"))
        .expect("the cost is refused");
    let (error, help) = (refused.to_string(), refused.help());
    assert_eq!(
        error,
        "m.toml:10:1: `cache-refill` is not a cost of an MC-IPC system: its machine charges \
         only reclamation work and context switches"
    );
    assert_eq!(
        help,
        "allowed: `clock`, `context-switch` and `reclaim-per-unit`"
    );
}
