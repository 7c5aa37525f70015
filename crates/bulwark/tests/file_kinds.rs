//! One loader for every command: each file kind is told by its top-level keys, every command
//! accepts the kinds it can run and names the command for the others, and a file that mixes
//! kinds is refused where the second kind starts.

mod common;

use common::{output_of, temp_file, text};

/// The built-in file of each kind, and what `check` says it is.
const KINDS: [(&str, &str); 4] = [
    ("scenarios/spr-vbs-cores.toml", "ok (5 tasks on 2 cores"),
    ("scenarios/components/fig7.camkes", "ok (component system"),
    ("scenarios/mcipc/case-study.toml", "ok (MC-IPC system"),
    ("scenarios/sweeps/fp-vs-edf.toml", "ok (sweep experiment"),
];

#[test]
fn check_validates_every_kind() {
    for (file, said) in KINDS {
        let out = output_of(&["check", file], 0);
        assert!(
            text(&out.stdout).contains(said),
            "{file}: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn a_command_given_a_kind_it_does_not_run_names_the_one_that_does() {
    let sweep = "scenarios/sweeps/fp-vs-edf.toml";
    for command in ["simulate", "analyze", "run"] {
        let out = output_of(&[command, sweep], 2);
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("this file is a sweep experiment") && stderr.contains("bulwark sweep"),
            "{command}: {stderr}"
        );
    }
    for (file, _) in &KINDS[..3] {
        let out = output_of(&["sweep", file], 2);
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("`bulwark sweep` takes a sweep experiment"),
            "{file}: {stderr}"
        );
    }
    // run takes an MC-IPC system of one core; the four-core case study is refused with why.
    let out = output_of(&["run", "scenarios/mcipc/case-study.toml"], 2);
    assert!(text(&out.stderr).contains("one cluster of one core"));
}

/// A valid component system whose array-of-tables headers are written with blanks inside,
/// which TOML allows: a search for the text `[[component]]` does not find them, and such a
/// file used to be read as a scenario.
const SPACED_COMPONENTS: &str = r#"[[ component ]]
name = "client"
kind = "active"

[[ component.task ]]
name = "tau1"
priority = 10
period = "10ms"

[[ component ]]
name = "server"
kind = "passive"

[[ component.cpi ]]
name = "i"
protocol = "inherited"

[[ connection ]]
from = "client"
to = "server.i"
"#;

#[test]
fn a_kind_is_told_by_the_document_not_by_header_text() {
    let (_dir, file) = temp_file("spaced.toml", SPACED_COMPONENTS);
    let out = output_of(&["check", file.to_str().unwrap()], 0);
    assert!(
        text(&out.stdout).contains("ok (component system: 2 components, 1 connections)"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_file_that_mixes_kinds_is_refused_where_the_second_kind_starts() {
    let (_dir, file) = temp_file(
        "mixed.toml",
        "name = \"m\"\npolicy = \"edf\"\nduration = \"1s\"\n\n[[reservation]]\nname = \"R\"\n",
    );
    let path = file.to_str().unwrap();
    for command in ["check", "simulate", "analyze", "sweep"] {
        let out = output_of(&[command, path], 2);
        let stderr = text(&out.stderr);
        // Line 5, column 3: the `reservation` key inside `[[reservation]]` (`cluster` is
        // shared: scenarios have clusters too).
        assert!(
            stderr.contains(&format!("{path}:5:3:"))
                && stderr.contains("`reservation` belongs to an MC-IPC system")
                && stderr.contains("`policy` (line 2) makes this file a scenario"),
            "{command}: {stderr}"
        );
    }
}

/// A scenario with a component system beside its tasks (`[[component]]` tables on a
/// fixed-priority core): every command takes it.
const COMPOSED: &str = "scenarios/components-beside-vbs.toml";

#[test]
fn a_scenario_with_components_is_checked_simulated_and_analysed() {
    let out = output_of(&["check", COMPOSED], 0);
    common::assert_contains(
        &text(&out.stdout),
        "ok (3 tasks on 2 cores, fixed-priority (core 1: vbs), 400ms; component system on core \
         0: 9 components, 4 tasks, 5 CPIs, 8 connections)",
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let svg = dir.path().join("t.svg");
    let metrics = common::json_of(
        &[
            "simulate",
            COMPOSED,
            "--json",
            "--trace",
            trace.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
        0,
    );
    let tasks = metrics["tasks"].as_array().unwrap();
    let named = |name: &str| tasks.iter().find(|t| t["name"] == name).unwrap().clone();
    // Fig. 7's t1: 41 jobs in 400 ms (the end is inclusive), none missed; the VBS processes
    // run on core 1.
    assert_eq!(named("t1")["jobs"], 41);
    assert_eq!(named("t1")["misses"], 0);
    assert_eq!(named("t1")["core"], 0);
    assert_eq!(named("video")["core"], 1);
    // The pool threads follow the tasks, e.g. E.work's three.
    assert!(tasks.iter().any(|t| t["name"] == "E.work.2"));
    // Both cores' work is in the trace, under the tasks' names.
    let trace = std::fs::read_to_string(&trace).unwrap();
    assert!(trace.contains("\"name\":\"video\"") && trace.contains("\"name\":\"t4\""));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    // The component core by the component analysis (t1: B = 5 ms, I = 500 us, R = 9.5 ms
    // as in fig7-spr.camkes), core 1 by the VBS caps test.
    let analysis = common::json_of(&["analyze", COMPOSED, "--json"], 0);
    assert_eq!(analysis["components"]["core"], 0);
    let text_out = common::stdout_of(&["analyze", COMPOSED], 0);
    common::assert_contains(&text_out, "== core 0: components ==");
    common::assert_contains(&text_out, "t1      40  10ms  4ms  5ms  500us");
    common::assert_contains(&text_out, "sum of caps 9/10");
}

/// `file` with `body` made to request `to` too, and a connection from `from` to `to`
/// appended: check, simulate and analyze refuse the call loop at that connection (its
/// header, the last connection in the file).
fn assert_loop_refused_at_its_connection(file: &str, body: &str, from: &str, to: &str) {
    let looped = std::fs::read_to_string(common::root().join(file))
        .unwrap()
        .replace(
            body,
            &body.replace(" }]", &format!(" }}, {{ request = \"{to}\" }}]")),
        )
        + &format!("\n[[connection]]\nfrom = \"{from}\"\nto = \"{to}\"\n");
    let (_dir, temp) = temp_file("looped.toml", looped.as_str());
    let path = temp.to_str().unwrap();
    let lines = looped.lines().count();
    for command in ["check", "simulate", "analyze"] {
        let stderr = text(&output_of(&[command, path], 2).stderr);
        common::assert_contains(&stderr, &format!("{path}:{}:1: call loop", lines - 2));
    }
}

#[test]
fn a_call_loop_in_a_scenario_s_components_is_refused_at_its_connection() {
    // E.work requests A.work, which reaches E.work through C.
    let body = "body = [{ execute = \"1ms\" }]";
    assert_loop_refused_at_its_connection(COMPOSED, body, "E.work", "A.work");
}

/// Two component systems, one per core (`core = 1` on the second's `[[component]]`s).
const TWO_CORES: &str = "scenarios/components-two-cores.toml";

#[test]
fn component_systems_on_two_cores_are_checked_simulated_and_analysed_apart() {
    let out = output_of(&["check", TWO_CORES], 0);
    common::assert_contains(
        &text(&out.stdout),
        "ok (0 tasks on 2 cores, fixed-priority, 400ms; component system on core 0: 9 \
         components, 4 tasks, 5 CPIs, 8 connections; component system on core 1: 5 \
         components, 3 tasks, 2 CPIs, 4 connections)",
    );
    let metrics = common::json_of(&["simulate", TWO_CORES, "--json"], 0);
    let tasks = metrics["tasks"].as_array().unwrap();
    let named = |name: &str| tasks.iter().find(|t| t["name"] == name).unwrap().clone();
    assert_eq!(named("t1")["core"], 0);
    assert_eq!(named("one")["core"], 1);
    // The server's IPCP pool is one thread, on core 1.
    assert_eq!(named("server.b.0")["core"], 1);
    assert!(tasks.iter().all(|t| t["name"] != "server.b.1"));
    // One, 41 jobs in 400 ms: 500 us of inversion at most (client three in the server when
    // its second job comes), so 3.5 ms + 500 us.
    assert_eq!(named("one")["jobs"], 41);
    assert_eq!(named("one")["misses"], 0);
    let analysis = common::json_of(&["analyze", TWO_CORES, "--json"], 0);
    let systems = analysis["component_systems"].as_array().unwrap();
    let cores: Vec<_> = systems.iter().map(|s| s["core"].clone()).collect();
    assert_eq!(cores, [0, 1]);
    assert_eq!(analysis["components"], systems[0]);
    assert!(analysis["cores"].is_null(), "no core has [[task]]s");
    // Core 1 by its own analysis: one's C = 0.5 + (1 + 1 + 0.5) + 0.5 = 3.5 ms, B = 1 ms
    // (the server's one section, held by three), R = 4.5 ms; three's R = 4.5 + 3.5 + 3.5 +
    // 3.5 = 15 ms.
    let text_out = common::stdout_of(&["analyze", TWO_CORES], 0);
    common::assert_contains(&text_out, "== core 1: components ==");
    common::assert_contains(&text_out, "one      30  10ms  3.5ms  1ms");
    common::assert_contains(&text_out, "4.5ms  admitted");
    common::assert_contains(&text_out, "15ms  admitted");
}

#[test]
fn simulate_measures_each_component_task_beside_its_inversion_bound() {
    let metrics = common::json_of(&["simulate", TWO_CORES, "--json"], 0);
    let measures = metrics["components"].as_array().unwrap();
    let named = |name: &str| measures.iter().find(|m| m["task"] == name).unwrap().clone();
    // Core 1's one: client three enters the server at 9.5 ms (after one's 3.5 ms, two's
    // 3.5 ms and its own 2.5 ms) and runs its 1 ms section at the ceiling, one's priority,
    // when one's second job arrives at 10 ms: 500 us of inversion by one lower job, against
    // B = 1 ms (the server's section); 41 jobs, none missed, R = 3.5 ms + 500 us.
    let one = named("one");
    assert_eq!(one["core"], 1);
    assert_eq!(one["jobs"], 41);
    assert_eq!(one["misses"], 0);
    assert_eq!(one["max_inversion_ns"], 500_000);
    assert_eq!(one["max_lower_jobs"], 1);
    assert_eq!(one["inversion_bound_ns"], 1_000_000);
    assert_eq!(one["max_response_ns"], 4_000_000);
    // Core 0's t1 in its SPR reservation: B = 5 ms plus Eq. 1's I = 500 us (the lower
    // tasks' eta).
    assert_eq!(named("t1")["inversion_bound_ns"], 5_500_000);
    // Every task of both systems is measured, and none exceeds its bound.
    assert_eq!(measures.len(), 7);
    for measure in measures {
        let bound = measure["inversion_bound_ns"].as_u64().unwrap();
        assert!(
            measure["max_inversion_ns"].as_u64().unwrap() <= bound,
            "{measure}"
        );
    }
    let text_out = common::stdout_of(&["simulate", TWO_CORES], 0);
    common::assert_contains(&text_out, "component tasks (inversion:");
    common::assert_contains(
        &text_out,
        "one       1    41       0           4ms          500us",
    );
    // A scenario without [[component]] tables has no such measures.
    let plain = common::json_of(&["simulate", "scenarios/table-i.toml", "--json"], 0);
    assert!(plain.get("components").is_none());
}

#[test]
fn a_call_loop_in_the_second_core_s_system_is_refused_at_its_connection() {
    // The server (core 1, IPCP) requests the forwarder, which requests the server.
    let body = "protocol = \"fixed\"\nbody = [{ execute = \"1ms\" }]";
    assert_loop_refused_at_its_connection(TWO_CORES, body, "server.b", "forwarder.a");
}

/// Fig. 3 gives no bodies, so its tasks' execution times are unknown: `simulate` refuses
/// it at the declaration of the first task's component, `component Client one;` on line
/// 35, whose name starts in column 26 (eight spaces and `component Client `).
#[test]
fn a_task_without_a_body_is_refused_at_its_component() {
    let file = "scenarios/components/fig3.camkes";
    let stderr = text(&output_of(&["simulate", file], 2).stderr);
    common::assert_contains(
        &stderr,
        &format!("{file}:35:26: the component system cannot run: task `one` has no body"),
    );
}

/// A scenario whose component `E` loses its CPI's body, which `D` requests: `simulate`
/// refuses it at E's `[[component]]` header, the line before `name = "E"`.
#[test]
fn a_requested_cpi_without_a_body_is_refused_at_its_component() {
    let body = "body = [{ execute = \"1ms\" }]\n";
    let original = std::fs::read_to_string(common::root().join(COMPOSED)).unwrap();
    // E's CPI body is the only body of one 1 ms step in the file.
    assert_eq!(original.matches(body).count(), 1);
    let at = original.find(body).unwrap();
    let bodiless = format!("{}{}", &original[..at], &original[at + body.len()..]);
    let name_line = bodiless.lines().position(|l| l == "name = \"E\"").unwrap() + 1;
    assert_eq!(bodiless.lines().nth(name_line - 2), Some("[[component]]"));
    let (_dir, temp) = temp_file("bodiless.toml", bodiless.as_str());
    let path = temp.to_str().unwrap();
    let stderr = text(&output_of(&["simulate", path], 2).stderr);
    common::assert_contains(
        &stderr,
        &format!(
            "{path}:{}:1: the component system cannot run: CPI `E.work` is requested but has \
             no body",
            name_line - 1
        ),
    );
}

/// An output path in a folder that does not exist is refused before the run, for every
/// kind `simulate` takes (it used to be found when written, after the run): exit 2, no
/// summary, and the check leaves no file behind (the `--trace` file it could write is
/// removed again).
#[test]
fn an_unwritable_output_is_refused_before_the_run_for_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.json");
    let svg = dir.path().join("missing").join("gantt.svg");
    for file in [
        "scenarios/textbook-edf.toml",
        "scenarios/components/fig7.camkes",
        "scenarios/mcipc/case-study.toml",
    ] {
        let args = [
            "simulate",
            file,
            "--trace",
            trace.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ];
        let out = output_of(&args, 2);
        common::assert_contains(
            &text(&out.stderr),
            &format!("{}: cannot write this output:", svg.display()),
        );
        assert!(out.stdout.is_empty(), "{file}: nothing ran");
        assert!(!trace.exists(), "{file}: the check left no trace file");
    }
}

/// `--seed` reaches an MC-IPC file's runs (it was ignored): the document names it, the same
/// seed gives the same runs, and another seed other draws (the file's operations are drawn).
/// `mcipc-case-study --seed` takes the same path. A component system draws nothing, so
/// `simulate` refuses the flag there, as `run` does.
#[test]
fn a_seed_reaches_mc_ipc_runs_and_is_refused_where_nothing_is_drawn() {
    let file = "scenarios/mcipc/one-core.toml";
    let runs = |seed: Option<&str>| {
        let mut args = vec!["simulate", file, "--json", "--until", "1s"];
        args.extend(seed.iter().flat_map(|s| ["--seed", *s]));
        common::json_of(&args, 0)
    };
    let seeded = runs(Some("12345"));
    assert_eq!(seeded["seed"], 12345);
    assert_eq!(runs(Some("12345"))["runs"], seeded["runs"]);
    assert_ne!(runs(None)["runs"], seeded["runs"]);
    let study = common::json_of(
        &[
            "mcipc-case-study",
            "--file",
            file,
            // The protocol the file names, which `simulate` runs.
            "--protocol",
            "mc-ipc",
            "--json",
            "--phase-length",
            "1s",
            "--seed",
            "12345",
        ],
        0,
    );
    assert_eq!(study["runs"], seeded["runs"]);
    let out = output_of(
        &[
            "simulate",
            "scenarios/components/fig7.camkes",
            "--seed",
            "5",
        ],
        2,
    );
    common::assert_contains(
        &text(&out.stderr),
        "scenarios/components/fig7.camkes: --seed does not apply to a component system",
    );
}
