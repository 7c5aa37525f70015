//! The `bulwark` binary, run as users run it.

mod common;

use common::{assert_contains, bulwark, json_of, output_of, root, stdout_of, temp_file, text};

use std::path::PathBuf;
use std::process::Command;

#[test]
fn check_accepts_the_built_in_scenarios() {
    let out = bulwark(&[
        "check",
        "scenarios/textbook-rm.toml",
        "scenarios/textbook-edf.toml",
        "scenarios/kernel-costs.toml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().filter(|l| l.contains(": ok (")).count(),
        3,
        "{stdout}"
    );
}

/// Every invalid fixture fails `check` with exit status 2 (bad input), and each expected
/// diagnostic line (`file:line:column: message`) appears on standard error, with its help
/// after it.
#[test]
fn check_reports_every_invalid_fixture_with_its_location() {
    let dir = root().join("crates/bulwark-spec/tests/invalid");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 16);
    for fixture in fixtures {
        let relative = fixture
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let out = output_of(&["check", &relative], 2);
        let stderr = text(&out.stderr);
        let expected = std::fs::read_to_string(fixture.with_extension("expected")).unwrap();
        for line in expected.lines().filter(|l| !l.is_empty()) {
            // The fixture's expected lines name the file as the spec tests load it.
            let name = fixture.file_name().unwrap().to_str().unwrap();
            let message = line.split_once(name).map_or(line, |(_, rest)| rest);
            let wanted = format!("{relative}{message} (");
            assert!(
                stderr.contains(&wanted),
                "{relative}: missing `{wanted}` in\n{stderr}"
            );
        }
    }
}

#[test]
fn check_names_a_missing_file() {
    let out = output_of(&["check", "no/such/file.toml"], 2);
    assert!(text(&out.stderr).contains("no/such/file.toml: cannot read this file"));
}

/// The JSON output carries every job in integer nanoseconds: rate monotonic's t2 completes its
/// first job at 8 ms, after its 7 ms deadline (see the hand-checked tests in bulwark-sim).
#[test]
fn simulate_json_lists_every_job_in_nanoseconds() {
    let out = bulwark(&[
        "simulate",
        "scenarios/textbook-rm.toml",
        "--json",
        "--until",
        "14ms",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["until_ns"], 14_000_000);
    let jobs = doc["jobs"].as_array().unwrap();
    let t2_first = jobs
        .iter()
        .find(|j| j["task"] == "t2" && j["job"] == 0)
        .unwrap();
    assert_eq!(t2_first["release_ns"], 0);
    assert_eq!(t2_first["first_start_ns"], 2_000_000);
    assert_eq!(t2_first["completion_ns"], 8_000_000);
    assert_eq!(t2_first["deadline_ns"], 7_000_000);
    assert_eq!(t2_first["missed"], true);
}

/// Same scenario and seed: byte-identical trace files. Another seed changes the random
/// execution times of kernel-costs' sporadic task, and so the trace.
#[test]
fn traces_are_byte_identical_for_the_same_seed() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    for (name, seed) in [("a.json", "7"), ("b.json", "7"), ("c.json", "8")] {
        let out = bulwark(&[
            "simulate",
            "scenarios/kernel-costs.toml",
            "--seed",
            seed,
            "--trace",
            &path(name),
        ]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let read = |n: &str| std::fs::read(path(n)).unwrap();
    assert!(read("a.json").len() > 1000);
    assert_eq!(read("a.json"), read("b.json"));
    assert_ne!(read("a.json"), read("c.json"));
    let doc: serde_json::Value = serde_json::from_slice(&read("a.json")).unwrap();
    assert!(doc["traceEvents"].as_array().unwrap().len() > 100);
}

#[test]
fn simulate_refuses_a_time_without_unit() {
    let out = output_of(
        &["simulate", "scenarios/textbook-rm.toml", "--until", "35"],
        2,
    );
    assert!(
        text(&out.stderr).contains("--until"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn reproduce_writes_a_passing_report() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("report");
    // One experiment: the whole set is CI's main job, run after the tests.
    let out = bulwark(&[
        "reproduce",
        "textbook-fp-edf",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("textbook-fp-edf          5 of 5 checks pass"));
    assert!(!text(&out.stdout).contains("deferrable-double-hit"));
    let html = std::fs::read_to_string(out_dir.join("index.html")).unwrap();
    assert!(html.contains("textbook-fp-edf/rm-gantt.svg"));
    assert!(out_dir.join("textbook-fp-edf/edf-gantt.svg").exists());
}

/// `--out` naming a file, not a folder: refused, exit 2, with the check made before any
/// experiment runs (its message; the write after the run said only "File exists").
#[test]
fn reproduce_refuses_an_output_it_cannot_write_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "a file, not a folder").unwrap();
    let out = output_of(&["reproduce", "--out", file.to_str().unwrap()], 2);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}: cannot write the report here:",
            file.display()
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// The attack's plot and the case study's plots in a folder that cannot exist (under a
/// file): refused before anything runs, exit 2, nothing on stdout.
#[test]
fn plots_that_cannot_be_written_are_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, "a file, not a folder").unwrap();
    let plot = file.join("a1.svg");
    let out = output_of(&["attack", "a1", "--svg", plot.to_str().unwrap()], 2);
    assert!(
        text(&out.stderr).contains(&format!("{}: cannot write this output:", plot.display())),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let plots = file.join("plots");
    let out = output_of(&["mcipc-case-study", "--svg", plots.to_str().unwrap()], 2);
    assert!(
        text(&out.stderr).contains(&format!(
            "{}: cannot write the plots here:",
            plots.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

/// `--list` runs nothing and writes nothing: an experiment or an `--out` beside it is a usage
/// error, not silently ignored.
#[test]
fn reproduce_list_refuses_what_it_would_ignore() {
    for args in [
        &["reproduce", "--list", "textbook-fp-edf"][..],
        &["reproduce", "--list", "--out", "elsewhere"],
    ] {
        let out = output_of(args, 2);
        assert_contains(&text(&out.stderr), "cannot be used with");
    }
    assert_contains(&stdout_of(&["reproduce", "--list"], 0), "textbook-fp-edf");
}

#[test]
fn reproduce_names_the_experiments_it_knows() {
    let out = output_of(&["reproduce", "no-such-experiment"], 2);
    assert!(text(&out.stderr).contains("known: textbook-fp-edf"));
}

/// A reader that stops early (`bulwark simulate ... --json | head -1`) ends the program with
/// the SIGPIPE status, quietly: no panic on the closed pipe. The output (every job of a 10 us
/// timer flood, megabytes) is far larger than a pipe's buffer, so it must meet the closed end.
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args([
            "simulate",
            "scenarios/attack-a3.toml",
            "--json",
            "--until",
            "100ms",
        ])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bulwark runs");
    let mut first = [0u8; 1];
    child
        .stdout
        .take()
        .expect("piped")
        .read_exact(&mut first)
        .expect("some output");
    // The read end is dropped here: the rest of the output meets a closed pipe.
    let out = child.wait_with_output().expect("bulwark ends");
    assert_eq!(first[0], b'{');
    assert_eq!(out.status.code(), Some(141), "{}", text(&out.stderr));
    assert!(!text(&out.stderr).contains("panicked"));
}

/// The MC-IPC case study from the command line: PRIO-IPC in phase 6 (15 extra tasks in the
/// highest-priority partition) breaks its 8 ms bound, as the paper reports, so the run agrees
/// with the paper and exits 0; JSON lists every delay of T1 (one job per 100 ms cycle).
#[test]
fn the_mcipc_case_study_runs_one_phase() {
    let stdout = stdout_of(
        &[
            "mcipc-case-study",
            "--protocol",
            "prio-ipc",
            "--phase",
            "6",
            "--phase-length",
            "2s",
        ],
        0,
    );
    assert_contains(&stdout, "PRIO-IPC (bound 8.00ms)");
    assert_contains(&stdout, "6: R4 launches 15 extra correct tasks");
    // With phase 6's own clients, (15 + 2 + 1 + 1) 2 = 38 ms: the delays stay within it.
    let own = &stdout[stdout.find("each phase's own clients").unwrap()..];
    let row: Vec<&str> = own.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row, ["6", "38.00ms", "(0", "over)"]);

    let out = bulwark(&[
        "mcipc-case-study",
        "--protocol",
        "mc-ipc",
        "--phase",
        "1",
        "--phase-length",
        "1s",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &json["runs"][0];
    assert_eq!(run["protocol"], "MC-IPC");
    assert_eq!(run["bound_ns"], 18_000_000);
    assert_eq!(run["phase_bound_ns"], 18_000_000);
    let delays = run["delays_ns"].as_array().unwrap();
    assert_eq!(delays.len(), 10);
    assert!(delays.iter().all(|d| d.as_u64().unwrap() <= 18_000_000));

    let out = output_of(&["mcipc-case-study", "--phase", "9"], 2);
    assert!(text(&out.stderr).contains("9"), "{}", text(&out.stderr));
}

/// A user's MC-IPC system with tasks and phases: one core, a server with L = 1 ms, T1 in a
/// partition [0, 10) of a 10 ms cycle and T2 in a sporadic reservation. Phase 1 is normal:
/// T1 invokes at 0.5 ms and, alone at the server, waits just its own 1 ms. Phase 2: T2 floods.
/// The bounds are the file's own (one cluster of one core: MC-IPC (1 + 2) * 1 = 3 ms), and T1
/// stays within it in both phases.
#[test]
fn the_case_study_runs_a_users_file() {
    let (_dir, file) = temp_file(
        "tiny.toml",
        r#"cycle = "10ms"

[[cluster]]
name = "C"
cores = 1

[[server]]
name = "s"
operation = "1ms"

[[reservation]]
name = "R1"
cluster = "C"
criticality = "high"
priority = 1
slots = [["0ms", "10ms"]]
execution = "2ms"
invokes = { s = 1 }

[[reservation]]
name = "R2"
cluster = "C"
priority = 0
budget = "5ms"
period = "10ms"
execution = "2ms"
invokes = { s = 1 }

[[task]]
name = "T1"
reservation = "R1"
period = "10ms"
script = [{ compute = "500us" }, { invoke = "s" }, "sleep"]

[[task]]
name = "T2"
reservation = "R2"
period = "10ms"
script = [{ compute = "100us" }, { invoke = "s" }, "sleep"]

[[phase]]
name = "normal"

[[phase]]
name = "T2 floods"
floods = ["T2"]
"#,
    );
    let json = json_of(
        &[
            "mcipc-case-study",
            "--file",
            file.to_str().unwrap(),
            "--protocol",
            "mc-ipc",
            "--phase-length",
            "100ms",
            "--json",
        ],
        0,
    );
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["name"], "normal");
    assert_eq!(runs[1]["name"], "T2 floods");
    for run in runs {
        assert_eq!(run["bound_ns"], 3_000_000);
        // Ten jobs answered, and the one released at 100 ms: the scenario machine's horizon
        // is inclusive.
        assert_eq!(
            (run["jobs"].as_u64(), run["completed"].as_u64()),
            (Some(11), Some(10))
        );
        let delays = run["delays_ns"].as_array().unwrap();
        assert_eq!(delays.len(), 10);
        assert!(
            delays.iter().all(|d| d.as_u64().unwrap() <= 3_000_000),
            "{run}"
        );
    }
    assert_eq!(runs[0]["delays_ns"][0], 1_000_000);

    let out = output_of(
        &["mcipc-case-study", "--file", "scenarios/textbook-rm.toml"],
        2,
    );
    assert!(text(&out.stderr).contains("not an MC-IPC system"));
}

/// The table's first-miss column: under rate monotonic t2's first job misses its deadline at
/// 7 ms (R2 = 4 + 2 x ceil(8 / 5) = 8 ms > 7 ms); t1 never misses.
#[test]
fn simulate_prints_each_tasks_first_miss() {
    let out = bulwark(&["simulate", "scenarios/textbook-rm.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines().skip(1);
    let header: Vec<&str> = lines.next().unwrap().split("  ").map(str::trim).collect();
    let column = header
        .iter()
        .filter(|h| !h.is_empty())
        .position(|h| *h == "first miss")
        .expect("a first miss column");
    assert_eq!(column, 4, "{header:?}");
    let cells =
        |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_owned).collect() };
    let t1 = cells(lines.next().unwrap());
    let t2 = cells(lines.next().unwrap());
    assert_eq!((t1[0].as_str(), t1[4].as_str()), ("t1", "-"));
    assert_eq!((t2[0].as_str(), t2[4].as_str()), ("t2", "@7ms"));
}
