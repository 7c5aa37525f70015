//! Passive servers through the CLI, as users script them: `simulate --json` counts each
//! task's calls, server time and gate waits (the values worked out in
//! `scenarios/passive-servers.toml`), `--trace` and `--svg` draw the operations as server
//! time, `analyze --json` names the callers whose waits its bounds leave out, and `run`
//! refuses a file with servers (exit 2) before touching the host.

mod common;

use common::{assert_contains, bulwark, output_of, text};
use serde_json::Value;

const FILE: &str = "scenarios/passive-servers.toml";

#[test]
fn simulate_reports_calls_server_time_and_gate_waits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("trace.json");
    let svg = dir.path().join("gantt.svg");
    let out = bulwark(&[
        "simulate",
        FILE,
        "--json",
        "--trace",
        trace.to_str().expect("utf-8"),
        "--svg",
        svg.to_str().expect("utf-8"),
    ]);
    // simulate gives no verdict: a missed deadline is output, not an exit status.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let task = |name: &str| {
        document["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .expect(name)
    };
    let victim = task("victim");
    assert_eq!(victim["gate_wait"]["max_ns"], 20_500_000, "{victim}");
    assert_eq!(victim["gate_wait"]["count"], 1, "{victim}");
    assert_eq!(victim["misses"], 1, "{victim}");
    // Three 20 ms periods of the rogue's 1 ms budget, all of it spent in the server.
    let rogue = task("rogue");
    assert_eq!(rogue["server_ns"], 3_000_000, "{rogue}");
    assert_eq!(rogue["executed_ns"], rogue["server_ns"], "{rogue}");
    assert_eq!(task("high")["gate_wait"]["max_ns"], 5_500_000);
    // With bandwidth inheritance, victim2's waits are the rogue's rests it ran: 1.5, 1.5, 1 ms.
    let victim2 = task("victim2");
    assert_eq!(victim2["gate_wait"]["max_ns"], 1_500_000, "{victim2}");
    assert_eq!(victim2["gate_wait"]["count"], 3, "{victim2}");
    assert_eq!(victim2["misses"], 0, "{victim2}");
    assert_eq!(task("mid")["invocations"], 0);
    let trace = std::fs::read_to_string(&trace).expect("trace written");
    assert!(trace.contains("\"cat\":\"server\""), "no server slices");
    let svg = std::fs::read_to_string(&svg).expect("svg written");
    assert!(svg.contains("<g class=\"server\""), "no server lane");
}

/// The SPR part's bounds leave out its four callers' gate waits. The fixed-priority part's
/// test holds `log1`'s (its callers are all on core 1): `low` waits for no lower request,
/// and `high` and `mid` are refused for the priority inversion `mid` causes, so it names none.
#[test]
fn analyze_names_the_callers_whose_waits_the_bounds_leave_out() {
    let out = bulwark(&["analyze", FILE, "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let callers: Vec<Value> = document["parts"]
        .as_array()
        .expect("one part per policy")
        .iter()
        .map(|part| part["analysis"]["gate_waits_not_in_bounds"].clone())
        .collect();
    assert_eq!(
        callers,
        vec![
            serde_json::json!(["rogue", "victim", "rogue2", "victim2"]),
            serde_json::json!([])
        ]
    );
    let fixed = &document["parts"][1]["analysis"]["cores"][0];
    assert_eq!(
        fixed["not_analysable"][0]
            .as_str()
            .map(|why| why.contains("priority inversion")),
        Some(true),
        "{fixed}"
    );
    let out = bulwark(&["analyze", "scenarios/textbook-rm.toml", "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(document["gate_waits_not_in_bounds"], serde_json::json!([]));
}

/// `scenarios/key-server-cluster.toml`: the `keys` server (mc-ipc, L = 2 ms) is called from
/// the two-core cluster `pair` and the SPR core 2 (K = 2). By Theorem 1, (1 + 2 m K) L is
/// (1 + 8) 2 ms = 18 ms for the pair's clients (m = 2) and (1 + 4) 2 ms = 10 ms for the SPR
/// core's (m = 1). `passive-servers.toml`'s `log0` has no bandwidth inheritance: no bound.
#[test]
fn analyze_gives_every_gate_client_its_bound() {
    let out = bulwark(&["analyze", "scenarios/key-server-cluster.toml", "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let [server] = document["servers"].as_array().expect("servers").as_slice() else {
        panic!("one server: {}", document["servers"]);
    };
    assert_eq!(
        (
            &server["name"],
            &server["gate"],
            &server["operation_ns"],
            &server["clusters"]
        ),
        (
            &serde_json::json!("keys"),
            &serde_json::json!("mc-ipc"),
            &serde_json::json!(2_000_000),
            &serde_json::json!(2)
        )
    );
    let bounds: Vec<(String, u64)> = server["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .map(|c| {
            let name = c["name"].as_str().expect("name").to_owned();
            (name, c["bound_ns"].as_u64().expect("a bound"))
        })
        .collect();
    let expected = [
        ("victim", 18_000_000),
        ("rogue1", 18_000_000),
        ("rogue2", 18_000_000),
        ("rogue-s", 10_000_000),
    ];
    let expected: Vec<(String, u64)> = expected.iter().map(|(n, b)| (n.to_string(), *b)).collect();
    assert_eq!(bounds, expected);
    let text_out = bulwark(&["analyze", "scenarios/key-server-cluster.toml"]);
    assert!(text(&text_out.stdout).contains("== server keys (mc-ipc gate, L = 2ms, K = 2)"));
    let out = bulwark(&["analyze", FILE, "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let log0 = &document["servers"][0];
    assert_eq!(log0["name"], "log0");
    assert!(log0["clients"][0]["bound_ns"].is_null());
    let why = log0["clients"][0]["why_none"].as_str().expect("a reason");
    assert_contains(why, "bandwidth inheritance");
}

/// The runtime manages one core: a system with servers whose tasks are on three cores is
/// refused, saying so, exit 2, before anything runs.
#[test]
fn run_refuses_servers_on_several_cores_with_exit_2() {
    let out = output_of(&["run", FILE, "--core", "1"], 2);
    let stderr = text(&out.stderr);
    assert_contains(&stderr, "the runtime manages one core (core 1)");
    assert_contains(&stderr, "`bulwark simulate` runs it");
    assert!(out.stdout.is_empty());
}

/// A caller's job bound counts what its calls drain, by hand. `log` (fifo-ipc with bandwidth
/// inheritance, L = 2 ms) has two clients: a request drains at most n L = 4 ms of its caller's
/// budget (the one ahead it lends to, and its own). victim's job, a call, the reply step and
/// 1 ms of its own, needs at most 4 ms + 1 ns + 1 ms <= b = 6 ms, one per p = 20 ms: within
/// R = 6 ms (the highest priority, no region). The machine: victim's first job takes the idle
/// server, 0-2 ms, and runs 2-3 ms; rogue then calls and spends its 1 ms budget in its own
/// request, 3-4 ms; victim's job at 20 ms lends to it, 20-21 ms, and then runs its own, 21-23
/// ms, and its 1 ms: 24 ms, a 4 ms response. rogue's endless job has no bound: only its waits
/// stay outside the bounds. In a cluster, the key server's victim needs the Theorem 1 bound
/// (18 ms, see above) + 1 ns + 1 ms > its 8 ms budget.
#[test]
fn a_callers_job_bound_counts_what_its_calls_drain() {
    let file = r#"name = "drain"
policy = "spr"
duration = "200ms"

[[server]]
name = "log"
gate = "fifo-ipc"
operation = "2ms"
bandwidth-inheritance = true

[[task]]
name = "victim"
priority = 9
reservation = { budget = "6ms", period = "20ms" }
script = [{ loop = "forever", body = [{ invoke = "log" }, { run = "1ms" }, { sleep-until-next-release = "20ms" }] }]

[[task]]
name = "rogue"
priority = 1
reservation = { budget = "1ms", period = "20ms" }
script = [{ loop = "forever", body = [{ invoke = "log" }] }]
"#;
    let (_dir, path) = common::temp_file("drain.toml", file);
    let path = path.to_str().unwrap();
    let out = output_of(&["analyze", path, "--json"], 0);
    let document: Value = serde_json::from_slice(&out.stdout).expect("json");
    let victim = &document["cores"][0]["reservations"][0];
    assert_eq!(victim["name"], "victim");
    assert_eq!(victim["response_ns"], 6_000_000);
    assert_eq!(victim["job_response_ns"], 6_000_000);
    assert_eq!(victim["job_bound"], "r");
    assert!(document["cores"][0]["reservations"][1]["job_response_ns"].is_null());
    assert_eq!(
        document["gate_waits_not_in_bounds"],
        serde_json::json!(["rogue"])
    );
    let out = output_of(&["simulate", path, "--json", "--until", "45ms"], 0);
    let run: Value = serde_json::from_slice(&out.stdout).expect("json");
    let completions: Vec<u64> = run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|job| job["task"] == "victim")
        .filter_map(|job| job["completion_ns"].as_u64())
        .collect();
    // The reply step takes no time here: the analysis counts 1 ns for it in case a release
    // at that instant takes the core first.
    assert_eq!(completions, [3_000_000, 24_000_000, 44_000_000]);

    let text = text(&output_of(&["analyze", "scenarios/key-server-cluster.toml"], 0).stdout);
    assert_contains(
        &text,
        "  victim: a job needs up to 19.000001ms > budget 8ms: the task's jobs need more than \
         its reservation gives",
    );
}
