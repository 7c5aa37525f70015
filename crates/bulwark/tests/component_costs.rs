//! A component system's protocol costs come from its file's `[cost]`, unless `--overheads`
//! names others; `--overheads` on a file without components is refused, not ignored.

mod common;

use common::{json_of, output_of, stdout_of, text};

/// A client requesting an inherited CPI that requests a propagated one (so a call pays the
/// "PIP to propagated" row and a `nest` hop can happen), with `cost` appended.
fn system(cost: &str) -> String {
    format!(
        r#"[[component]]
name = "client"
kind = "active"

[[component.task]]
name = "high"
priority = 20
period = "10ms"
body = [{{ execute = "1ms" }}, {{ request = "server.work" }}]

[[component.task]]
name = "low"
priority = 10
period = "20ms"
body = [{{ request = "server.work" }}, {{ execute = "2ms" }}]

[[component]]
name = "server"
kind = "passive"

[[component.cpi]]
name = "work"
protocol = "inherited"
body = [{{ execute = "1ms" }}, {{ request = "store.put" }}]

[[component]]
name = "store"
kind = "passive"

[[component.cpi]]
name = "put"
protocol = "propagated"
body = [{{ execute = "500us" }}]

[[connection]]
from = "client"
to = "server.work"

[[connection]]
from = "server.work"
to = "store.put"

{cost}"#
    )
}

/// Table 2 of the component paper, as a file writes it.
const XEON_TABLE: &str = r#"[cost]
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
"#;

#[test]
fn the_file_s_table_2_is_what_overheads_xeon_names() {
    let dir = tempfile::tempdir().unwrap();
    let with_table = dir.path().join("with-table.toml");
    let plain = dir.path().join("plain.toml");
    std::fs::write(&with_table, system(XEON_TABLE)).unwrap();
    std::fs::write(&plain, system("")).unwrap();
    let (with_table, plain) = (with_table.to_str().unwrap(), plain.to_str().unwrap());
    for command in ["simulate", "analyze"] {
        let from_file = stdout_of(&[command, with_table, "--json"], 0);
        let from_flag = stdout_of(&[command, plain, "--json", "--overheads", "xeon"], 0);
        let free = stdout_of(&[command, plain, "--json"], 0);
        assert_eq!(from_file, from_flag, "{command}");
        // The costs change the outcome: a free system is not the same run.
        assert_ne!(from_file, free, "{command}");
        // The flag overrides the file.
        let overridden = stdout_of(&[command, with_table, "--json", "--overheads", "none"], 0);
        assert_eq!(overridden, free, "{command}");
    }
}

#[test]
fn overheads_on_a_file_without_components_is_refused() {
    for (file, kind) in [
        ("scenarios/textbook-edf.toml", "a scenario"),
        ("scenarios/mcipc/case-study.toml", "an MC-IPC system"),
    ] {
        for command in ["simulate", "analyze"] {
            let out = output_of(&[command, file, "--overheads", "xeon"], 2);
            let stderr = text(&out.stderr);
            assert!(
                stderr.contains(&format!(
                    "--overheads prices the IPC of a component system, and this file is {kind}"
                )),
                "{command} {file}: {stderr}"
            );
        }
    }
}

/// A context-switch cost is charged by the machine but is not in the section 3.2 bounds:
/// `analyze` says so (a note, and `costs_not_in_bounds` in `--json`) instead of admitting
/// with response times that leave it out unsaid. The bounds themselves do not move, and the
/// simulated responses do.
#[test]
fn a_context_switch_cost_is_named_as_outside_the_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let costly = dir.path().join("costly.toml");
    let free = dir.path().join("free.toml");
    // 1 ms per switch at the default 1 GHz clock.
    std::fs::write(&costly, system("[cost]\ncontext-switch = 1000000\n")).unwrap();
    std::fs::write(&free, system("")).unwrap();
    let (costly, free) = (costly.to_str().unwrap(), free.to_str().unwrap());
    let json = |args: &[&str]| json_of(args, 0);
    let analysed_costly = json(&["analyze", costly, "--json"]);
    let analysed_free = json(&["analyze", free, "--json"]);
    assert_eq!(
        analysed_costly["schedulability"]["costs_not_in_bounds"],
        serde_json::json!(["context-switch"])
    );
    assert_eq!(
        analysed_free["schedulability"]["costs_not_in_bounds"],
        serde_json::json!([])
    );
    assert_eq!(
        analysed_costly["schedulability"]["tasks"],
        analysed_free["schedulability"]["tasks"]
    );
    let note = "note: the bounds leave out the `context-switch` cost";
    assert!(stdout_of(&["analyze", costly], 0).contains(note));
    assert!(!stdout_of(&["analyze", free], 0).contains(note));
    // The machine charges it: the high task's worst response grows.
    let response = |file: &str| {
        json(&["simulate", file, "--json"])["tasks"][0]["max_response_ns"]
            .as_u64()
            .unwrap()
    };
    assert!(response(costly) > response(free));
}
