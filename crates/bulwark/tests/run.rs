//! `bulwark run`: exit codes, errors and outputs of real runs on this machine's core 1. The
//! real runs are all in one test so that two never share the managed core.

mod common;

use common::{assert_contains, bulwark, json_of, output_of, stdout_of, temp_file};

use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_core_outside_the_affinity_is_a_missing_privilege_with_exit_2() {
    let out = output_of(&["run", "scenarios/textbook-rm.toml", "--core", "1000"], 2);
    let err = stderr(&out);
    assert_contains(&err, "core 1000 is not in this process's CPU affinity");
    assert_contains(&err, "how to grant it");
}

#[test]
fn an_invalid_file_exits_2_as_simulate_does() {
    let (_dir, path) = temp_file("bad.toml", "name = \"x\"\npolicy = \"nope\"\n");
    output_of(&["run", path.to_str().expect("utf-8 path")], 2);
}

#[test]
fn a_run_beside_the_simulator_prints_both_and_writes_its_trace() {
    if bulwark_privileged().is_err() {
        eprintln!("skipped: no SCHED_FIFO privilege");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("trace.json");
    let text = stdout_of(
        &[
            "run",
            "scenarios/textbook-edf.toml",
            "--until",
            "200ms",
            "--compare",
            "--trace",
            trace.to_str().expect("utf-8 path"),
        ],
        0,
    );
    assert_contains(&text, "host / simulator:");
    assert_contains(&text, "sched_rt_runtime_us");
    let chrome = std::fs::read_to_string(&trace).expect("trace written");
    assert_contains(&chrome, "traceEvents");

    let doc = json_of(
        &[
            "run",
            "scenarios/textbook-edf.toml",
            "--until",
            "200ms",
            "--json",
            "--compare",
        ],
        0,
    );
    assert!(
        doc["host"]["entries"].as_u64().is_some_and(|n| n > 0),
        "{doc}"
    );
    assert_eq!(doc["host"]["core"], 1);
    // The same task list on both sides.
    assert_eq!(
        doc["tasks"].as_array().map(Vec::len),
        doc["simulated"]["tasks"].as_array().map(Vec::len)
    );

    // Allocation and termination for real: the rogue in its group gets the quota's
    // semaphores, (floor(1 ms / 13 ns) - 3) / 4 = 19,230 (the file's comment), as in the
    // simulator, and the controller's termination kills it.
    let doc = json_of(
        &["run", "scenarios/faas-reclaim.toml", "--json", "--compare"],
        0,
    );
    let rogue = &doc["tasks"][3];
    assert_eq!(rogue["name"], "rogue");
    assert_eq!(rogue["objects_allocated"], 19_230, "{rogue}");
    assert_eq!(rogue["allocations_refused"], 1_000_000 - 19_230, "{rogue}");
    assert_eq!(rogue["killed_jobs"], 1, "{rogue}");
    assert_eq!(
        rogue["objects_allocated"],
        doc["simulated"]["tasks"][3]["objects_allocated"]
    );
    assert!(
        doc["cores"][0]["reclaim_ns"]
            .as_u64()
            .is_some_and(|ns| ns > 0),
        "{doc}"
    );
    // A server's gate on real threads: the scenario machine, stepped by them. `high` (every
    // 10 ms: 1 ms, then 2 ms of `S`) and `low` (every 20 ms: 2 ms of `S`) on one core, far
    // from overload, so both platforms complete the same jobs: all but the ones released at
    // the 100 ms horizon itself.
    let served = dir.path().join("served.toml");
    std::fs::write(&served, SERVED).expect("write");
    let doc = json_of(
        &[
            "run",
            served.to_str().expect("utf-8 path"),
            "--json",
            "--compare",
        ],
        0,
    );
    for (task, jobs) in [(0, 11), (1, 6)] {
        let host = &doc["tasks"][task];
        assert_eq!(host["jobs"], jobs, "{host}");
        assert_eq!(host["completed"], jobs - 1, "{host}");
        assert_eq!(
            host["completed"],
            doc["simulated"]["tasks"][task]["completed"]
        );
        assert!(
            host["server_ns"]
                .as_u64()
                .is_some_and(|ns| ns >= 10_000_000),
            "{host}"
        );
    }

    let text = stdout_of(&["run", "scenarios/faas-reclaim.toml"], 0);
    assert_contains(
        &text,
        "rogue: 19230 objects created, 980770 refused by its group's quota, 1 job(s) killed",
    );
    assert_contains(&text, "controller terminated rogue");

    // A component system on real threads: Fig. 7 for one hyperperiod (80 ms), beside the
    // simulator, its trace written. t1..t4 release 9, 5, 3 and 2 jobs (periods 10, 20, 40
    // and 80 ms, releases at 0 up to the inclusive end, 80 ms) on both sides.
    let doc = json_of(
        &[
            "run",
            "scenarios/components/fig7.camkes",
            "--until",
            "80ms",
            "--json",
            "--compare",
            "--trace",
            trace.to_str().expect("utf-8 path"),
        ],
        0,
    );
    for (side, tasks) in [
        ("host", &doc["tasks"]),
        ("simulated", &doc["simulated"]["tasks"]),
    ] {
        let jobs: Vec<u64> = (0..4)
            .map(|i| tasks[i]["jobs"].as_u64().unwrap_or(0))
            .collect();
        assert_eq!(jobs, [9, 5, 3, 2], "{side}: {doc}");
    }
    assert!(
        doc["host"]["entries"].as_u64().is_some_and(|n| n > 0),
        "{doc}"
    );
    assert_eq!(doc["pool_exhausted"], 0, "{doc}");
    let chrome = std::fs::read_to_string(&trace).expect("trace written");
    assert_contains(&chrome, "\"t4\"");
    let text = stdout_of(
        &["run", "scenarios/components/fig7.camkes", "--until", "40ms"],
        0,
    );
    assert_contains(&text, "40ms on core 1 of this machine");
    assert_contains(&text, "dispatcher entries");

    // A scenario's component system on real threads: core 0's half of
    // components-two-cores.toml (Fig. 7 in SPR reservations) on one core for 80 ms. Both
    // sides report the component tasks' measures beside the same bounds (t1: B = 5 ms plus
    // I = 500 us), and 9, 5, 3 and 2 jobs as above.
    let both = std::fs::read_to_string(common::root().join("scenarios/components-two-cores.toml"))
        .expect("read");
    let half = both
        .split("# Core 1")
        .next()
        .expect("core 0's part")
        .replace("cores = 2", "cores = 1");
    let composed = dir.path().join("composed.toml");
    std::fs::write(&composed, half).expect("write");
    let path = composed.to_str().expect("utf-8 path");
    let doc = json_of(&["run", path, "--until", "80ms", "--json", "--compare"], 0);
    for (side, measures) in [
        ("host", &doc["components"]),
        ("simulated", &doc["simulated"]["components"]),
    ] {
        let measures = measures.as_array().expect(side);
        let jobs: Vec<u64> = measures
            .iter()
            .map(|m| m["jobs"].as_u64().unwrap_or(0))
            .collect();
        assert_eq!(jobs, [9, 5, 3, 2], "{side}: {doc}");
        assert_eq!(measures[0]["task"], "t1", "{side}");
        assert_eq!(measures[0]["inversion_bound_ns"], 5_500_000, "{side}");
    }
    for measure in doc["simulated"]["components"].as_array().expect("measures") {
        let bound = measure["inversion_bound_ns"].as_u64().expect("a bound");
        assert!(
            measure["max_inversion_ns"].as_u64().expect("ns") <= bound,
            "{measure}"
        );
    }

    // An MC-IPC system of one core: its four phases for 200 ms each on real threads, beside
    // the simulator. T1 (period 100 ms) releases 3 jobs a phase on both sides (at 0, 100
    // and 200 ms: the horizon is inclusive, as in `simulate`), completes the first two, and
    // each of its invocations stays within Theorem 1's 6 ms (plus 1 ms on the host).
    let doc = json_of(
        &[
            "run",
            "scenarios/mcipc/one-core.toml",
            "--until",
            "200ms",
            "--json",
            "--compare",
        ],
        0,
    );
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4, "{doc}");
    for run in runs {
        assert_eq!(run["bound_ns"], 6_000_000, "{run}");
        assert_eq!(run["host"]["jobs"], 3, "{run}");
        assert_eq!(run["simulated"]["jobs"], 3, "{run}");
        assert_eq!(run["host"]["completed"], 2, "{run}");
        let delays = run["host"]["delays_ns"].as_array().expect("delays");
        assert!(!delays.is_empty(), "{run}");
        assert!(
            delays
                .iter()
                .all(|d| d.as_u64().is_some_and(|ns| ns <= 7_000_000)),
            "{run}"
        );
    }
    // Its Chrome trace: the host's four phases end to end, as `simulate --trace` lays the
    // simulator's, so the last phase's slices start at 600 ms (600,000 us).
    let mc_trace = dir.path().join("mcipc.json");
    output_of(
        &[
            "run",
            "scenarios/mcipc/one-core.toml",
            "--until",
            "200ms",
            "--trace",
            mc_trace.to_str().expect("utf-8 path"),
        ],
        0,
    );
    let chrome: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mc_trace).expect("trace written"))
            .expect("json");
    let events = chrome["traceEvents"].as_array().expect("events");
    let slices_from = |us: f64| {
        (events.iter())
            .filter(|e| e["ph"] == "X" && e["ts"].as_f64().is_some_and(|ts| ts >= us))
            .count()
    };
    assert!(slices_from(0.0) > slices_from(600_000.0), "{chrome}");
    assert!(slices_from(600_000.0) > 0, "{chrome}");
}

/// Nothing in a component system is drawn: a seed is refused, not ignored.
#[test]
fn a_seed_for_a_component_system_is_refused_with_exit_2() {
    let out = output_of(
        &["run", "scenarios/components/fig7.camkes", "--seed", "3"],
        2,
    );
    assert!(
        stderr(&out).contains("--seed does not apply to a component system"),
        "{}",
        stderr(&out)
    );
}

/// One core, a server behind a FIFO-IPC gate, two callers (see its use).
const SERVED: &str = r#"
name = "served"
policy = "fixed-priority"
duration = "100ms"

[[server]]
name = "S"
gate = "fifo-ipc"
operation = "2ms"

[[task]]
name = "high"
priority = 9
script = [{ loop = "forever", body = [{ run = "1ms" }, { invoke = "S" }, { sleep-until-next-release = "10ms" }] }]

[[task]]
name = "low"
priority = 1
script = [{ loop = "forever", body = [{ invoke = "S" }, { sleep-until-next-release = "20ms" }] }]
"#;

/// The privilege check of the runtime itself, for the default cores.
fn bulwark_privileged() -> Result<(), String> {
    let out = bulwark(&["run", "scenarios/textbook-edf.toml", "--until", "1ms"]);
    if stderr(&out).contains("missing privilege") {
        Err(stderr(&out))
    } else {
        Ok(())
    }
}
