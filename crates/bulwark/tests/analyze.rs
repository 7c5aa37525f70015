//! `bulwark analyze`, run as users run it: Eq. 1 and Eq. 2 on scenario files, with the
//! expected numbers worked out by hand.

mod common;

use common::{assert_contains, bulwark, json_of, output_of, root, stdout_of, temp_file, text};

use std::path::Path;
use std::process::Output;

use bulwark_core::reservation::spr::work_bound;

/// The table row of reservation `name`, split into cells (the verdict may be two words).
fn row<'a>(stdout: &'a str, name: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no row `{name}` in\n{stdout}"))
        .split_whitespace()
        .collect()
}

/// Table I under SPR (sporadic servers), by hand (see also the analysis crate's tests):
/// hi: R = 10; mid: 20 -> 20 + ceil(20/30)*10 = 30 -> 30, R = 30 <= 40;
/// lo: 10 -> 10 + 10 + 20 = 40 -> 10 + 2*10 + 20 = 50 -> 10 + 2*10 + 2*20 = 70 > 60.
/// No eta anywhere: I = 0, preemptions and L unbounded. O_pre = 2000 + 1000 + 100 * W + 2000
/// cycles at 1 GHz, with W = work_bound(S = 8 by default, 3 priorities).
#[test]
fn analyze_table_i() {
    let stdout = stdout_of(&["analyze", "scenarios/table-i.toml"], 1);
    let o_pre = format!(
        "{}",
        bulwark_core::Duration::from_nanos(5000 + 100 * work_bound(8, 3))
    );
    // name priority b p eta I R verdict... preemptions O_pre L cache
    let expected = [
        ("hi", "3", "10ms", "30ms", "10ms", "admitted"),
        ("mid", "2", "20ms", "40ms", "30ms", "admitted"),
        ("lo", "1", "10ms", "60ms", "70ms", "NOT"),
    ];
    for (name, priority, b, p, r, verdict) in expected {
        let cells = row(&stdout, name);
        assert_eq!(&cells[1..5], &[priority, b, p, "0ns"], "{name}: {stdout}");
        assert_eq!(cells[5], "0ns", "{name}: I");
        assert_eq!(cells[6], r, "{name}: R");
        assert_eq!(cells[7], verdict, "{name}: verdict");
        let tail = &cells[cells.len() - 4..];
        assert_eq!(
            tail,
            &["unbounded", o_pre.as_str(), "unbounded", "unbounded"],
            "{name}: {stdout}"
        );
    }
    assert_eq!(row(&stdout, "lo")[8], "admitted");
    assert_contains(
        &stdout,
        "summary: 2 of 3 reservations admitted; NOT admitted: lo",
    );
    // A job bound only where the reservation is admitted: hi (C = 9.5 ms <= b, T = p)
    // gets R = 10 ms; lo gets none.
    let json = json_of(&["analyze", "scenarios/table-i.toml", "--json"], 1);
    let reservations = &json["cores"][0]["reservations"];
    assert_eq!(reservations[0]["job_response_ns"], 10_000_000);
    assert_eq!(reservations[0]["job_bound"], "r");
    assert!(reservations[2]["job_response_ns"].is_null());
    assert_eq!(reservations[2]["job_bound"], "none");
    assert_contains(&stdout, "core 0: W = ");
}

/// The same numbers as JSON, in integer nanoseconds, null for unbounded.
#[test]
fn analyze_table_i_as_json() {
    let doc = json_of(&["analyze", "scenarios/table-i.toml", "--json"], 1);
    assert_eq!(doc["scenario"], "table-i");
    assert_eq!(doc["policy"], "spr");
    assert_eq!(doc["server_kind"], "sporadic");
    assert_eq!(doc["admitted"], false);
    let core = &doc["cores"][0];
    assert_eq!(core["core"], 0);
    assert_eq!(core["work_units"], work_bound(8, 3));
    let reservations = core["reservations"].as_array().unwrap();
    let names: Vec<&str> = reservations
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hi", "mid", "lo"]);
    let expected = [
        (10_000_000u64, true, "admitted"),
        (30_000_000, true, "admitted"),
        (70_000_000, false, "exceeds-period"),
    ];
    for (r, (response, admitted, verdict)) in reservations.iter().zip(expected) {
        assert_eq!(r["response_ns"], response, "{r}");
        assert_eq!(r["admitted"], admitted, "{r}");
        assert_eq!(r["verdict"], verdict, "{r}");
        assert_eq!(r["blocking_ns"], 0, "{r}");
        assert!(r["preemptions_per_period"].is_null(), "{r}");
        assert!(r["lost_budget_ns"].is_null(), "{r}");
        assert_eq!(
            r["preemption_overhead_ns"],
            5000 + 100 * work_bound(8, 3),
            "{r}"
        );
    }
    assert_eq!(reservations[2]["budget_ns"], 10_000_000);
    assert_eq!(reservations[2]["period_ns"], 60_000_000);
}

/// Everything admitted, with a non-preemptive region, so exit status 0. By hand:
/// hi (b 2, p 10), lo (b 5, p 20, eta 3): hi's I = 3, R = 3 + 2 = 5; lo: 5 -> 5 + 2 = 7 -> 7.
/// Costs (per-work-unit 0, so W does not matter): O_pre = 1000 + 2000 + 3000 = 6000 cycles =
/// 6 us at 1 GHz; lo dispatches ceil(5/3) = 2 times per period: L = 12 us, one preemption,
/// cache 2 * 10 us = 20 us. hi (eta 0): unbounded.
#[test]
fn analyze_admits_a_fitting_set_with_a_region() {
    let (_dir, path) = temp_file(
        "fits.toml",
        r#"name = "fits"
policy = "spr"
duration = "40ms"

[cost]
timer-interrupt = 1000
scheduler = 2000
context-switch = 3000
cache-refill = 10000

[[task]]
name = "hi"
priority = 9
period = "10ms"
execution = "2ms"
reservation = { budget = "2ms", period = "10ms" }

[[task]]
name = "lo"
priority = 4
period = "20ms"
execution = "5ms"
reservation = { budget = "5ms", period = "20ms", non-preemptive = "3ms" }
"#,
    );
    let file = path.to_str().unwrap();
    let stdout = stdout_of(&["analyze", file], 0);
    assert_eq!(
        row(&stdout, "hi"),
        [
            "hi",
            "9",
            "2ms",
            "10ms",
            "0ns",
            "3ms",
            "5ms",
            "admitted",
            // The sporadic rule: each job, its C within b and releases p apart, within R.
            "5ms",
            "unbounded",
            "6us",
            "unbounded",
            "unbounded"
        ]
    );
    assert_eq!(
        row(&stdout, "lo"),
        [
            "lo", "4", "5ms", "20ms", "3ms", "0ns", "7ms", "admitted", "7ms", "1", "6us", "12us",
            "20us"
        ]
    );
    assert_contains(&stdout, "summary: all 2 reservations admitted");

    let doc = json_of(&["analyze", file, "--json"], 0);
    assert_eq!(doc["admitted"], true);
    let lo = &doc["cores"][0]["reservations"][1];
    assert_eq!(lo["name"], "lo");
    assert_eq!(lo["non_preemptive_ns"], 3_000_000);
    assert_eq!(lo["preemptions_per_period"], 1);
    assert_eq!(lo["preemption_overhead_ns"], 6_000);
    assert_eq!(lo["lost_budget_ns"], 12_000);
    assert_eq!(lo["cache_delay_ns"], 20_000);
    let hi = &doc["cores"][0]["reservations"][0];
    assert_eq!(hi["blocking_ns"], 3_000_000);
    assert_eq!(hi["response_ns"], 5_000_000);
}

/// The naive deferrable server: the double hit, and W unbounded. hi (b 2, p 5) above lo
/// (b 5, p 5): lo's R0 = 5, 5 + ceil((5 + 3)/5) * 2 = 9 > 5, NOT admitted.
#[test]
fn analyze_a_naive_deferrable_server() {
    let stdout = stdout_of(&["analyze", "scenarios/deferrable-double-hit.toml"], 1);
    assert_contains(
        &stdout,
        "W unbounded (eager timer handling: grows with the number of expired timers)",
    );
    assert_eq!(row(&stdout, "hi")[6], "2ms");
    assert_eq!(row(&stdout, "lo")[6], "9ms");
    assert_eq!(row(&stdout, "lo")[7], "NOT");
}

/// Writes `body` as a scenario file and analyzes it (as JSON if `json`), which must exit with
/// `code`.
fn analyze_text(body: &str, json: bool, code: i32) -> Output {
    let (_dir, path) = temp_file("set.toml", body);
    let path = path.to_str().unwrap();
    let args = ["analyze", path, "--json"];
    output_of(if json { &args } else { &args[..2] }, code)
}

/// A command's standard output, read as JSON.
fn json_out(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The JSON file at `path`, such as a Chrome trace.
fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The repository's `file` with `edit` applied, written as `name` into a fresh directory:
/// the directory's guard and the copy's path.
fn edited_copy(
    name: &str,
    file: &str,
    edit: impl FnOnce(String) -> String,
) -> (tempfile::TempDir, String) {
    let source = std::fs::read_to_string(root().join(file)).unwrap();
    let (dir, path) = temp_file(name, edit(source));
    (dir, path.to_str().unwrap().to_owned())
}

/// Rate monotonic on (2, 5), (4, 7) (Liu and Layland; Buttazzo): R1 = 2 ms; for t2,
/// w = 4 + ceil(w / 5) 2: 4 -> 6 -> 8 > 7 ms, a miss at its first deadline. Exit 1.
#[test]
fn fixed_priority_textbook_set() {
    let stdout = stdout_of(&["analyze", "scenarios/textbook-rm.toml"], 1);
    // task priority C T D J B R verdict
    assert_eq!(
        row(&stdout, "t1"),
        [
            "t1",
            "2",
            "2ms",
            "5ms",
            "5ms",
            "0ns",
            "0ns",
            "2ms",
            "schedulable"
        ]
    );
    assert_eq!(
        &row(&stdout, "t2")[..7],
        ["t2", "1", "4ms", "7ms", "7ms", "0ns", "0ns"]
    );
    assert_eq!(&row(&stdout, "t2")[8..], ["NOT", "schedulable"]);
    assert!(
        stdout.contains("t2: critical instant")
            && stdout.contains("job 0 of the busy window misses"),
        "{stdout}"
    );
    let v = json_of(&["analyze", "scenarios/textbook-rm.toml", "--json"], 1);
    assert_eq!(v["schedulable"], false);
    let tasks = &v["cores"][0]["tasks"];
    assert_eq!(tasks[0]["response_ns"], 2_000_000);
    assert_eq!(tasks[0]["jobs_examined"], 1);
    assert_eq!(tasks[1]["verdict"], "misses-deadline");
}

/// EDF on the same pair: implicit deadlines, U = 2/5 + 4/7 = 34/35 = 0.9714 <= 1. Exit 0.
#[test]
fn edf_textbook_set() {
    let stdout = stdout_of(&["analyze", "scenarios/textbook-edf.toml"], 0);
    assert_contains(&stdout, "U = 34/35 = 0.9714 <= 1");
    assert_contains(&stdout, "summary: every core schedulable");
    let v = json_of(&["analyze", "scenarios/textbook-edf.toml", "--json"], 0);
    assert_eq!(v["schedulable"], true);
    assert_eq!(v["cores"][0]["edf"]["test"], "utilisation");
    assert_eq!(v["cores"][0]["edf"]["utilisation_numerator"], "34");
    assert_eq!(v["cores"][0]["edf"]["utilisation_denominator"], "35");
}

/// Constrained deadlines under EDF, by hand: a (C 2, T 4, D 2), b (C 2, T 6, D 3):
/// h(2 ms) = 2 ms, h(3 ms) = 4 ms > 3 ms: the first deadline where demand exceeds supply is
/// 3 ms. Exit 1. On a second core, Tindell's arbitrary-deadline pair under fixed priority
/// (a: C 26, T 70; b: C 62, T 100, D 118; see the analysis crate's tests): R_b = 118 ms at
/// job 4 of 7; as EDF it is checked by QPA and schedulable (U = 0.9914).
#[test]
fn edf_constrained_and_arbitrary_deadlines() {
    let out = analyze_text(
        r#"name = "constrained"
policy = "edf"
duration = "24ms"
cores = 2

[[task]]
name = "a"
period = "4ms"
deadline = "2ms"
execution = "2ms"

[[task]]
name = "b"
period = "6ms"
deadline = "3ms"
execution = "2ms"

[[task]]
name = "c"
core = 1
period = "70ms"
execution = "26ms"

[[task]]
name = "d"
core = 1
period = "100ms"
deadline = "118ms"
execution = "62ms"
"#,
        true,
        1,
    );
    let v = json_out(&out);
    assert_eq!(v["cores"][0]["edf"]["first_miss_ns"], 3_000_000);
    assert_eq!(v["cores"][0]["edf"]["demand_at_first_miss_ns"], 4_000_000);
    assert_eq!(v["cores"][0]["schedulable"], false);
    assert_eq!(v["cores"][1]["schedulable"], true);
    assert_eq!(v["cores"][1]["edf"]["test"], "qpa");
}

/// Tindell's pair under fixed priority, in ms: R_a = 26; R_b = 118 <= 118 at job 4, seven
/// jobs in a busy window of 694 ms (worked by hand in the analysis crate's tests). Exit 0.
#[test]
fn fixed_priority_arbitrary_deadlines() {
    let out = analyze_text(
        r#"name = "tindell"
policy = "fixed-priority"
duration = "700ms"

[[task]]
name = "a"
priority = 2
period = "70ms"
execution = "26ms"

[[task]]
name = "b"
priority = 1
period = "100ms"
deadline = "118ms"
execution = "62ms"
"#,
        false,
        0,
    );
    let stdout = text(&out.stdout);
    assert_eq!(row(&stdout, "a")[7], "26ms");
    assert_eq!(row(&stdout, "b")[7], "118ms");
    assert_contains(
        &stdout,
        "busy window lasts 694ms and holds 7 job(s); the worst is job 4",
    );
}

/// Fixed priority on a core that a termination masks: `faas-reclaim.toml`'s sensor (priority
/// 30, C = 1 ms, T = D = 5 ms) is above every script, so it is analysed, with the mask in its
/// blocking. By hand: in its group the rogue's mask is the 1 ms quota, so B = 1 ms and R = 1 +
/// 1 = 2 ms <= 5 ms; without the group, its million semaphores are 3,000,001 units of 13 ns,
/// B = 39.000013 ms and R = 40.000013 ms > 5 ms: NOT schedulable, exit 1 (the simulation
/// shows the sensor missing its deadlines then, and not with the group). The scripts run
/// once through and are analysed as their longest job: the controller's does no work but
/// needs the core for its step, 1 ns, so R = 1 + 1 ms + 1 ns with the sensor's job;
/// next-function's 10 ms job, w = 1 + 10 + ceil(w / 5) 1: 11 -> 14 -> 14, R = 14 ms <= 15 ms;
/// the rogue's, its million semaphores (at most 3,000,000 units of 13 ns, 39 ms, if none
/// were refused) and its 1 s run, with B = 1 + 10 ms: w = 1050 + ceil(w / 5) 1: 1260 ->
/// 1302 -> 1311 -> 1313 -> 1313 ms, without a deadline. So exit 0 with the group. A periodic
/// task below scripts is analysed with their work in its B when that work is bounded, and
/// not below one whose work is unknown.
#[test]
fn fixed_priority_counts_the_mask_of_a_termination() {
    let file = "scenarios/faas-reclaim.toml";
    let stdout = stdout_of(&["analyze", file], 0);
    assert_eq!(
        row(&stdout, "sensor"),
        [
            "sensor",
            "30",
            "1ms",
            "5ms",
            "5ms",
            "0ns",
            "1ms",
            "2ms",
            "schedulable"
        ]
    );
    assert_contains(
        &stdout,
        "the terminations' mask of at most 1ms is in every analysed task's B",
    );
    let json = json_of(&["analyze", file, "--json"], 0);
    let core = &json["cores"][0];
    assert_eq!(core["masked_ns"], 1_000_000);
    assert_eq!(core["tasks"][0]["blocking_ns"], 1_000_000);
    assert_eq!(core["tasks"][0]["response_ns"], 2_000_000);
    let scripts = [
        ("controller", 2_000_001u64),
        ("next-function", 14_000_000),
        ("rogue", 1_313_000_000),
    ];
    let run = json_of(&["simulate", file, "--json"], 0);
    for (task, (name, response)) in core["tasks"].as_array().unwrap()[1..].iter().zip(scripts) {
        assert_eq!(
            (&task["name"], &task["script_once"]),
            (&name.into(), &true.into())
        );
        assert_eq!(task["response_ns"], response, "{task}");
        assert_eq!(task["verdict"], "schedulable", "{task}");
        let ran = run["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|ran| ran["name"] == name)
            .unwrap();
        // The rogue is terminated before its run ends: no response.
        let worst = ran["response"]["max_ns"].as_u64().unwrap_or(0);
        assert!(worst <= response, "{ran}");
    }
    assert_eq!(core["tasks"][3]["wcet_ns"], 1_039_000_000);
    assert_eq!(core["tasks"][3]["blocking_ns"], 11_000_000);
    assert_eq!(core["not_analysable"], serde_json::json!([]));

    let (_dir, baseline) = edited_copy("baseline.toml", file, |source| {
        source.replace("group = \"rogue-function\"\n", "")
    });
    let stdout = stdout_of(&["analyze", &baseline], 1);
    assert_eq!(
        row(&stdout, "sensor")[6..9],
        ["39.000013ms", "40.000013ms", "NOT"]
    );
    let json = json_of(&["analyze", &baseline, "--json"], 1);
    assert_eq!(json["cores"][0]["tasks"][0]["response_ns"], 40_000_013);
    // The machine stays within both bounds, and misses without the group.
    let worst = |file: &str| {
        let run = json_of(&["simulate", file, "--json"], 0);
        let sensor = &run["tasks"][0];
        assert_eq!(sensor["name"], "sensor");
        (
            sensor["response"]["max_ns"].as_u64().unwrap(),
            sensor["misses"].as_u64().unwrap(),
        )
    };
    let (grouped, misses) = worst(file);
    assert!(grouped <= 2_000_000 && misses == 0, "{grouped} {misses}");
    let (alone, misses) = worst(&baseline);
    assert!(
        alone <= 40_000_013 && alone > 5_000_000 && misses > 0,
        "{alone} {misses}"
    );

    // A periodic task below the controller's and next-function's scripts (work 0 and 10 x
    // 1 ms over the run) has their 10 ms in its B with the mask: B = 11 ms, and
    // w = 11 + 1 + ceil(w / 5) 1: 13 -> 15 -> 15, R = 15 ms <= 20 ms. The rogue is below it.
    let (_dir, below) = edited_copy("below.toml", file, |source| {
        format!(
            "{source}\n[[task]]\nname = \"logger\"\npriority = 12\nperiod = \"20ms\"\n\
             execution = \"1ms\"\n"
        )
    });
    let stdout = stdout_of(&["analyze", &below], 0);
    assert_eq!(row(&stdout, "logger")[6..], ["11ms", "15ms", "schedulable"]);
    let json = json_of(&["analyze", &below, "--json"], 0);
    let logger = &json["cores"][0]["tasks"][3];
    assert_eq!(logger["name"], "logger");
    assert_eq!(logger["scripts_ns"], 10_000_000);
    assert_eq!(logger["blocking_ns"], 11_000_000);
    assert_eq!(logger["response_ns"], 15_000_000);
    let run = json_of(&["simulate", &below, "--json"], 0);
    let simulated = &run["tasks"][4];
    assert_eq!(simulated["name"], "logger");
    assert!(simulated["response"]["max_ns"].as_u64().unwrap() <= 15_000_000);
    // Below a rogue that runs in an endless loop, it is not analysed.
    let (_dir, lowest) = edited_copy("lowest.toml", file, |source| {
        format!(
            "{}\n[[task]]\nname = \"logger\"\npriority = 5\nperiod = \"20ms\"\n\
             execution = \"1ms\"\n",
            source.replace(
                "{ run = \"1s\" }",
                "{ loop = \"forever\", body = [{ run = \"1ms\" }] }"
            )
        )
    });
    let stdout = stdout_of(&["analyze", &lowest], 2);
    assert_contains(
        &stdout,
        "not analysable: task `logger` shares its core with script `rogue` at its priority or \
         above, whose work over the run is unbounded or unknown",
    );
    assert_eq!(row(&stdout, "logger")[7..], ["-", "not", "analysed"]);
    // A file without terminations has no mask.
    let json = json_of(&["analyze", "scenarios/textbook-rm.toml", "--json"], 1);
    assert_eq!(json["cores"][0]["masked_ns"], 0);
}

/// A mask at level utilisation exactly 1: `faas-reclaim.toml` with the sensor replaced by
/// (2, 3), (1, 6) and (1, 6) ms above the scripts. The mask is the group's 1 ms quota, so the
/// lowest has B = 1 ms and its busy window never ends (2/3 + 1/6 + 1/6 = 1); its responses
/// repeat every H / T = 1 job, and job 0 gives, by hand, w = 2 + ceil(w/3) 2 + ceil(w/6) 1:
/// 5 -> 7 -> 10 -> 12 -> 12 ms, so R = 12 ms: D = 12 ms is met and D = 11 ms is not. (Job 0
/// alone once gave "no verdict" for D = 12 ms.)
#[test]
fn a_mask_at_full_utilisation_gets_a_verdict() {
    let filled = |deadline: &str| {
        edited_copy("full.toml", "scenarios/faas-reclaim.toml", |source| {
            source.replace(
                "name = \"sensor\"\npriority = 30\nperiod = \"5ms\"\nexecution = \"1ms\"\n",
                &format!(
                    "name = \"a\"\npriority = 30\nperiod = \"3ms\"\nexecution = \"2ms\"\n\n\
                     [[task]]\nname = \"b\"\npriority = 29\nperiod = \"6ms\"\n\
                     execution = \"1ms\"\n\n[[task]]\nname = \"c\"\npriority = 28\n\
                     period = \"6ms\"\nexecution = \"1ms\"\ndeadline = \"{deadline}\"\n"
                ),
            )
        })
    };
    let (_dir, met) = filled("12ms");
    // The scripts keep the core without a verdict: exit 2.
    let json = json_of(&["analyze", &met, "--json"], 2);
    let lowest = &json["cores"][0]["tasks"][2];
    assert_eq!(lowest["name"], "c");
    assert_eq!(lowest["blocking_ns"], 1_000_000);
    assert_eq!(lowest["response_ns"], 12_000_000);
    assert_eq!(lowest["verdict"], "schedulable");
    assert_eq!(lowest["busy_window_ns"], serde_json::Value::Null);
    assert_eq!(lowest["jobs_examined"], 1);
    assert_contains(
        lowest["why"].as_str().unwrap(),
        "the level-i busy window never ends",
    );
    let (_dir, missed) = filled("11ms");
    let json = json_of(&["analyze", &missed, "--json"], 1);
    assert_eq!(json["cores"][0]["tasks"][2]["verdict"], "misses-deadline");
    // The machine stays within the bound.
    let run = json_of(&["simulate", &met, "--json"], 0);
    let simulated = &run["tasks"][2];
    assert_eq!(simulated["name"], "c");
    assert!(simulated["response"]["max_ns"].as_u64().unwrap() <= 12_000_000);
    assert_eq!(simulated["misses"], 0);
}

/// An EDF core with a terminator and the rogue it kills, both scripts: t1 (2, 10) and
/// t2 (3, 20) ms; the controller (deadline 5 ms) terminates the rogue's group (quota 1 ms,
/// so M = 1 ms) and does no work itself; the rogue runs `rogue_steps` once (deadline 50 ms).
fn edf_with_scripts(controller_deadline: &str, rogue_steps: &str) -> String {
    format!(
        "name = \"edf-terminator\"\npolicy = \"edf\"\nduration = \"100ms\"\n\n\
         [cost]\nclock = \"1GHz\"\nreclaim-per-unit = 13\n\n\
         [[group]]\nname = \"rogue-function\"\nquota = \"1ms\"\n\n\
         [[task]]\nname = \"t1\"\nperiod = \"10ms\"\nexecution = \"2ms\"\n\n\
         [[task]]\nname = \"t2\"\nperiod = \"20ms\"\nexecution = \"3ms\"\n\n\
         [[task]]\nname = \"controller\"\ndeadline = \"{controller_deadline}\"\n\
         script = [{{ sleep-until = \"30ms\" }}, {{ terminate = \"rogue\" }}, \
         {{ sleep-until = \"1s\" }}]\n\n\
         [[task]]\nname = \"rogue\"\ngroup = \"rogue-function\"\ndeadline = \"50ms\"\n\
         script = [{rogue_steps}, {{ sleep-until = \"1s\" }}]\n"
    )
}

/// Scripts of bounded work on an EDF core are analysed with its tasks: each is one job of its
/// work over the run, due at its deadline wherever its release falls, in the demand of every
/// window at least that long, h(t) + sum_{D_s <= t} W_s + M <= t. By hand, M = 1 ms:
/// - the rogue running 4 ms (due in 50 ms): the busy period L = 1 + 4 + ceil(L / 10) 2 +
///   ceil(L / 20) 3 is 10 ms, and h + M at the deadlines 5 (the controller's) and 10 is 1 and
///   3 ms: schedulable, exit 0, and the machine misses nothing. The same with the controller
///   due in 4 ms (h(4) + M = 1 ms): the rogue's later deadline never puts its work before the
///   controller's job (as one lump in every window it did, and gave no verdict);
/// - the rogue running 30 ms: L = 31 + ceil(L / 10) 2 + ceil(L / 20) 3 goes 36, 45, 50 = L,
///   and h + M at 10, 20, 30, 40 and 50 is 3, 8, 10, 15 and 47 ms (t1's 10, t2's 6, the
///   rogue's 30): schedulable, exit 0, and the machine misses nothing. With 45 ms, h(50) + M
///   = 62 ms > 50: not shown schedulable (the rogue's release may not reach that alignment),
///   exit 2;
/// - the controller due in 900 us, below the 1 ms it may lose: a late script, and no verdict
///   (exit 2), since the rogue's work is in the test.
///
/// With no rogue work (W = 0) a 500 us deadline is below the 1 ms mask the controller itself
/// waits through: NOT schedulable, exit 1. A rogue that allocates 10 semaphores does their 30
/// units of 13 ns, W = 390 ns: exit 0. One that runs in an endless loop has no known work:
/// not analysed, exit 2.
#[test]
fn edf_scripts_of_bounded_work_are_analysed() {
    let run = |ms: u64| format!("{{ run = \"{ms}ms\" }}");
    for (deadline, rogue_ms) in [("5ms", 4), ("4ms", 4), ("5ms", 30)] {
        let body = edf_with_scripts(deadline, &run(rogue_ms));
        let out = analyze_text(&body, true, 0);
        let core = &json_out(&out)["cores"][0];
        assert_eq!(core["masked_ns"], 1_000_000);
        assert_eq!(core["scripts_work_ns"], rogue_ms * 1_000_000);
        assert_eq!(core["late_scripts"], serde_json::json!([]));
        assert_eq!(core["schedulable"], true, "{deadline} {rogue_ms}");
        assert_eq!(core["not_analysable"], serde_json::json!([]));
        let (_dir, path) = temp_file("met.toml", body);
        let simulated = json_of(&["simulate", path.to_str().unwrap(), "--json"], 0);
        for task in simulated["tasks"].as_array().unwrap() {
            assert_eq!(task["misses"], 0, "{deadline} {rogue_ms}: {task}");
        }
    }
    let out = analyze_text(&edf_with_scripts("5ms", &run(30)), false, 0);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_contains(&stdout, "at every deadline up to 50ms");
    assert_contains(&stdout, "each script is in the demand h(t) as one job");
    // At U = 1 (a at 5 of 10 ms, b at 10 of 20 ms) no slack is left for the script's 1 ms:
    // it counts in every window, h(20) + 1 > 20, no verdict.
    let full = "name = \"full\"\npolicy = \"edf\"\nduration = \"100ms\"\n\n\
                [[task]]\nname = \"a\"\nperiod = \"10ms\"\nexecution = \"5ms\"\n\n\
                [[task]]\nname = \"b\"\nperiod = \"20ms\"\nexecution = \"10ms\"\n\n\
                [[task]]\nname = \"s\"\ndeadline = \"50ms\"\nscript = [{ run = \"1ms\" }]\n";
    let out = analyze_text(full, false, 2);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_contains(
        &stdout,
        "is in the demand's M as one lump (U = 1 leaves no slack",
    );

    let out = analyze_text(&edf_with_scripts("5ms", &run(45)), true, 2);
    let edf = &json_out(&out)["cores"][0]["edf"];
    assert_eq!(edf["first_miss_ns"], 50_000_000);
    assert_eq!(edf["demand_at_first_miss_ns"], 61_000_000);
    let out = analyze_text(&edf_with_scripts("5ms", &run(45)), false, 2);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        row(&stdout, "t1")[6..],
        ["-", "not", "shown", "schedulable"]
    );

    let out = analyze_text(&edf_with_scripts("900us", &run(4)), true, 2);
    let core = &json_out(&out)["cores"][0];
    assert_eq!(
        core["late_scripts"],
        serde_json::json!([{"name": "controller", "deadline_ns": 900_000}])
    );
    assert_eq!(core["schedulable"], serde_json::Value::Null);

    let idle = "{ sleep-for = \"1ms\" }";
    let out = analyze_text(&edf_with_scripts("500us", idle), true, 1);
    let core = &json_out(&out)["cores"][0];
    assert_eq!(core["scripts_work_ns"], 0);
    assert_eq!(core["schedulable"], false);

    let allocates = "{ allocate = 10, object = \"semaphore\" }";
    let out = analyze_text(&edf_with_scripts("5ms", allocates), true, 0);
    assert_eq!(json_out(&out)["cores"][0]["scripts_work_ns"], 390);
    let endless = "{ loop = \"forever\", body = [{ run = \"1ms\" }] }";
    let out = analyze_text(&edf_with_scripts("5ms", endless), false, 2);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_contains(
        &stdout,
        "not analysable: task `rogue` runs a script whose work over the run is unbounded or \
         unknown",
    );
}

/// A script below t1 (1, 5) run once through, its jobs cut at its sleeps: its longest is
/// 1 ms, so R = 1 + ceil(R / 5) 1 = 2 ms, schedulable (exit 0). A script whose job is ended by
/// `sleep-until-next-release` outside one endless loop may be due before its predecessor
/// ends, so it has neither a period nor jobs apart: the core gets no verdict, the message
/// says why, exit 2.
#[test]
fn a_script_run_once_is_analysed_as_its_longest_job() {
    let file = |steps: &str| {
        format!(
            "name = \"scripted\"\npolicy = \"fixed-priority\"\nduration = \"10ms\"\n\n\
             [[task]]\nname = \"t1\"\npriority = 2\nperiod = \"5ms\"\nexecution = \"1ms\"\n\n\
             [[task]]\nname = \"poller\"\npriority = 1\nscript = [{steps}]\n"
        )
    };
    let out = analyze_text(
        &file(r#"{ run = "1ms" }, { sleep-for = "4ms" }, { run = "500us" }"#),
        true,
        0,
    );
    let poller = &json_out(&out)["cores"][0]["tasks"][1];
    assert_eq!(poller["name"], "poller");
    assert_eq!(poller["script_once"], true);
    assert_eq!(poller["wcet_ns"], 1_000_000);
    assert_eq!(poller["response_ns"], 2_000_000);
    assert_eq!(poller["verdict"], "schedulable");
    let out = analyze_text(
        &file(r#"{ run = "1ms" }, { sleep-until-next-release = "4ms" }, { run = "1ms" }"#),
        false,
        2,
    );
    let stdout = text(&out.stdout);
    assert_contains(&stdout, "not analysable: task `poller` runs a script");
    assert!(text(&out.stderr).contains("task `poller` runs a script"));
}

/// Three scripts that are each one endless loop of work and a sleep, beside a periodic task,
/// by fixed priority, analysed as sporadic tasks. By hand:
/// - `s` (priority 3): 1 ms then `sleep-until-aligned = 4ms` from an offset of 3 ms, so
///   C = 1, T = 4, J = 3 (its first release up to 3 ms after the grid's). Its own job waits
///   for nothing above it, R = 1 <= D = 2 ms (its J delays the others only);
/// - `t` (priority 2, (4, 10)): w = 4 + ceil((w + 3) / 4) 1: 4 -> 6 -> 7 -> 7, R = 7 ms
///   (6 ms without the jitter);
/// - `p` (priority 1): 2 x 1 ms then `sleep-for = 6ms`: C = 2, T = 6 + 2 = 8, no deadline.
///   Its busy window: 9 -> 11 -> 16 -> 17 -> 19 -> 20 -> 20 ms, three jobs: job 0 ends at
///   2 + 2 + 4 = 8 -> 2 + 3 + 4 = 9, R = 9; job 1 (at 8) at 4 + 2 + 4 = 10 -> 12 -> 16 -> 17,
///   R = 9; job 2 (at 16) at 6 + 3 + 4 = 13 -> 18 -> 20 -> 20, R = 4. So R = 9 ms.
///
/// Exit 0, and the machine's responses are within these R.
#[test]
fn scripts_of_one_endless_job_are_sporadic_tasks() {
    let file = r#"name = "endless-scripts"
policy = "fixed-priority"
duration = "400ms"

[[task]]
name = "s"
priority = 3
offset = "3ms"
deadline = "2ms"
script = [{ loop = "forever", body = [{ run = "1ms" }, { sleep-until-aligned = "4ms" }] }]

[[task]]
name = "t"
priority = 2
period = "10ms"
execution = "4ms"

[[task]]
name = "p"
priority = 1
script = [{ loop = "forever", body = [{ compute = 2, each = "1ms" }, { sleep-for = "6ms" }] }]
"#;
    let ms = 1_000_000u64;
    let out = analyze_text(file, true, 0);
    let tasks = &json_out(&out)["cores"][0]["tasks"];
    let expected = [
        ("s", 1, 4, 2, 3, 1, Some("sleep-until-aligned")),
        ("t", 4, 10, 10, 0, 7, None),
        ("p", 2, 8, u64::MAX / ms, 0, 9, Some("sleep-for")),
    ];
    for (task, (name, wcet, period, deadline, jitter, response, sleep)) in
        tasks.as_array().unwrap().iter().zip(expected)
    {
        assert_eq!(task["name"], name);
        assert_eq!(task["wcet_ns"], wcet * ms, "{task}");
        assert_eq!(task["period_ns"], period * ms, "{task}");
        if name == "p" {
            assert_eq!(task["deadline_ns"], u64::MAX, "{task}");
        } else {
            assert_eq!(task["deadline_ns"], deadline * ms, "{task}");
        }
        assert_eq!(task["jitter_ns"], jitter * ms, "{task}");
        assert_eq!(task["response_ns"], response * ms, "{task}");
        assert_eq!(task["verdict"], "schedulable", "{task}");
        assert_eq!(task["script_sleep"].as_str(), sleep, "{task}");
    }
    let (_dir, path) = temp_file("endless.toml", file);
    let simulated = json_of(&["simulate", path.to_str().unwrap(), "--json"], 0);
    for task in simulated["tasks"].as_array().unwrap() {
        let bound = expected
            .iter()
            .find(|row| task["name"] == row.0)
            .map(|row| row.5 * ms)
            .unwrap();
        assert_eq!(task["misses"], 0, "{task}");
        assert!(
            task["response"]["max_ns"].as_u64().unwrap() <= bound,
            "{task}"
        );
    }
}

/// A script on a 4 ms grid started at 3.5 ms ends its first 200 us job at 3.7 ms and wakes
/// again at 4 ms, 500 us later: its first release is 3.5 ms off the grid, J = 3.5 ms. t,
/// released with it, runs 3.7-4, waits 4-4.2 and ends at 7.3 ms: R = 3.8 ms in the machine.
/// By hand, w = 3.4 + ceil((w + 3.5) / 4) 0.2: 3.6 -> 3.8 -> 3.8, R = 3.8 ms (without J,
/// 3.6 ms, which the machine exceeds).
#[test]
fn a_scripts_first_release_off_its_grid_is_jitter() {
    let file = r#"name = "off-grid"
policy = "fixed-priority"
duration = "120ms"

[[task]]
name = "s"
priority = 2
offset = "3500us"
deadline = "1ms"
script = [{ loop = "forever", body = [{ run = "200us" }, { sleep-until-aligned = "4ms" }] }]

[[task]]
name = "t"
priority = 1
offset = "3500us"
period = "100ms"
execution = "3400us"
"#;
    let out = analyze_text(file, true, 0);
    let tasks = &json_out(&out)["cores"][0]["tasks"];
    assert_eq!(tasks[0]["jitter_ns"], 3_500_000);
    assert_eq!(tasks[0]["response_ns"], 200_000);
    assert_eq!(tasks[1]["response_ns"], 3_800_000);
    let (_dir, path) = temp_file("off-grid.toml", file);
    let simulated = json_of(&["simulate", path.to_str().unwrap(), "--json"], 0);
    assert_eq!(simulated["tasks"][1]["name"], "t");
    assert_eq!(simulated["tasks"][1]["response"]["max_ns"], 3_800_000);
}

/// t (2, 10, D 5) below a script of 3 ms jobs every 4 ms: w = 2 + ceil(w / 4) 3: 5 -> 8 -> 8,
/// R = 8 > 5 ms. Ended by `sleep-until-next-release` the script is a periodic task and 0 its
/// critical instant: NOT schedulable, exit 1. Ended by `sleep-until-aligned` its releases
/// follow its jobs' ends, which the sporadic model only bounds: not shown schedulable, exit 2.
#[test]
fn only_a_periodic_script_refutes() {
    let file = |sleep: &str| {
        format!(
            "name = \"refuted\"\npolicy = \"fixed-priority\"\nduration = \"40ms\"\n\n\
             [[task]]\nname = \"s\"\npriority = 2\n\
             script = [{{ loop = \"forever\", body = [{{ run = \"3ms\" }}, \
             {{ {sleep} = \"4ms\" }}] }}]\n\n\
             [[task]]\nname = \"t\"\npriority = 1\nperiod = \"10ms\"\nexecution = \"2ms\"\n\
             deadline = \"5ms\"\n"
        )
    };
    let out = analyze_text(&file("sleep-until-next-release"), true, 1);
    let t = &json_out(&out)["cores"][0]["tasks"][1];
    assert_eq!(
        (t["response_ns"].as_u64(), t["verdict"].as_str()),
        (Some(8_000_000), Some("misses-deadline"))
    );
    let out = analyze_text(&file("sleep-until-aligned"), false, 2);
    let stdout = text(&out.stdout);
    assert_eq!(row(&stdout, "t")[8..], ["not", "shown", "schedulable"]);
    assert_contains(&stdout, "which the sporadic model bounds but may not reach");
}

/// Under EDF the demand test has no jitter, so a script on a grid whose first release is off
/// it counts its releases `T - J` apart: a 4 ms grid from 1 ms is a period of 3 ms. With t
/// (4, 10): U = 1/3 + 2/5 <= 1, demand 1 at 2 ms, 2 at 5, 3 at 8, 7 at 10: exit 0.
#[test]
fn edf_counts_a_script_off_its_grid_closer() {
    let out = analyze_text(
        r#"name = "edf-endless"
policy = "edf"
duration = "100ms"

[[task]]
name = "s"
offset = "1ms"
deadline = "2ms"
script = [{ loop = "forever", body = [{ run = "1ms" }, { sleep-until-aligned = "4ms" }] }]

[[task]]
name = "t"
period = "10ms"
execution = "4ms"
"#,
        true,
        0,
    );
    let core = &json_out(&out)["cores"][0];
    assert_eq!(core["tasks"][0]["period_ns"], 3_000_000);
    assert_eq!(core["tasks"][0]["jitter_ns"], 0);
    assert_eq!(core["tasks"][0]["script_sleep"], "sleep-until-aligned");
    assert_eq!(core["schedulable"], true);
}

/// A constrained deadline on a reserved task is the admission bound: Table I's mid has
/// R = 30 ms by hand (20 -> 20 + 10 = 30 -> 30); its task's deadline of 25 ms makes it NOT
/// admitted (exit 1) although R <= p = 40 ms.
#[test]
fn a_reserved_tasks_deadline_is_checked() {
    let out = analyze_text(
        r#"name = "deadline"
policy = "spr"
duration = "120ms"

[[task]]
name = "hi"
priority = 3
period = "30ms"
execution = "9ms"
reservation = { budget = "10ms", period = "30ms" }

[[task]]
name = "mid"
priority = 2
period = "40ms"
deadline = "25ms"
execution = "19ms"
reservation = { budget = "20ms", period = "40ms" }
"#,
        true,
        1,
    );
    let mid = &json_out(&out)["cores"][0]["reservations"][1];
    assert_eq!(mid["name"], "mid");
    assert_eq!(mid["admitted"], false);
    assert_eq!(mid["verdict"], "exceeds-deadline");
}

#[test]
fn analyze_reports_an_invalid_file_like_check() {
    let out = output_of(&["analyze", "no/such/file.toml"], 2);
    assert!(text(&out.stderr).contains("no/such/file.toml: cannot read this file"));
}

/// CBS: 2/10 + 10/40 + 4/10 = 0.2 + 0.25 + 0.4 = 17/20 <= 1, admitted (exit 0). Raising
/// hog's budget to 6 ms makes it 21/20: not admitted (exit 1), and the JSON says so. On the
/// admitted core control (C = Q = 2 ms, T = P = 10 ms) and video (10/40) get each job within
/// their server's period P, their deadline. Video's first job by hand (EDF on the servers'
/// deadlines, ties to the server queued first): control 0-2, the hog 2-6 (deadline 10 -> 20)
/// and 6-10 (-> 30), control 10-12, the hog 12-16 (-> 40), video 16-20, control 20-22, video
/// 22-28: 28 ms <= 40. The hog's script has no job bound.
#[test]
fn cbs_servers_are_admitted_by_their_exact_total_bandwidth() {
    let stdout = stdout_of(&["analyze", "scenarios/cbs-isolation.toml"], 0);
    assert_contains(&stdout, "total bandwidth 17/20 = 0.850000: admitted");
    assert_eq!(row(&stdout, "hog"), ["hog", "4ms", "10ms", "0.4000", "-"]);
    assert_eq!(
        row(&stdout, "control"),
        ["control", "2ms", "10ms", "0.2000", "10ms"]
    );
    assert_eq!(
        row(&stdout, "video"),
        ["video", "10ms", "40ms", "0.2500", "40ms"]
    );
    assert_contains(
        &stdout,
        "  hog: job response not checked: a script has no fixed",
    );
    let json = json_of(&["analyze", "scenarios/cbs-isolation.toml", "--json"], 0);
    let servers = &json["cores"][0]["servers"];
    assert_eq!(servers[0]["job_response_ns"], 10_000_000);
    assert_eq!(servers[0]["job_bound"], "p");
    assert!(servers[2]["job_response_ns"].is_null());
    assert_eq!(servers[2]["job_bound"], "none");
    let run = json_of(&["simulate", "scenarios/cbs-isolation.toml", "--json"], 0);
    let jobs = run["jobs"].as_array().unwrap();
    let first_video = jobs.iter().find(|job| job["task"] == "video").unwrap();
    assert_eq!(first_video["completion_ns"], 28_000_000);
    for (task, period) in [(0, 10_000_000u64), (1, 40_000_000)] {
        let worst = run["tasks"][task]["response"]["max_ns"].as_u64().unwrap();
        assert!(worst <= period, "{task}: {worst}");
        assert_eq!(run["tasks"][task]["misses"], 0);
    }

    let (_dir, over) = edited_copy("over.toml", "scenarios/cbs-isolation.toml", |source| {
        source.replace("budget = \"4ms\"", "budget = \"6ms\"")
    });
    let json = json_of(&["analyze", &over, "--json"], 1);
    assert_eq!(json["admitted"], false);
    assert_eq!(json["cores"][0]["total_numerator"], "21");
    assert_eq!(json["cores"][0]["total_denominator"], "20");
}

/// CBS on a core that a termination masks: cbs-isolation's servers (2/10, 10/40, 4/10) with
/// a rogue (1/40) in a group of quota `quota` and its controller (1/40), U = 9/10. The servers
/// as implicit-deadline tasks must pass `h(t) + M <= t`, M the quota. By hand, M = 4 ms: the
/// busy period 4 + 2 + 10 + 4 + 1 + 1 = 22 -> 4 + 6 + 10 + 12 + 2 = 34 -> 40 -> 40; h(t) + 4
/// at 10, 20, 30, 40 ms is 10, 16, 22, 40: admitted (exit 0), at 10 and 40 exactly. M = 5
/// ms: h(10) + 5 = 6 + 5 > 10: not admitted (exit 1), though the bandwidth alone is.
#[test]
fn cbs_servers_count_the_mask_of_a_termination() {
    let masked = |quota: &str| {
        edited_copy("masked.toml", "scenarios/cbs-isolation.toml", |source| {
            format!(
                "{source}\n[cost]\nreclaim-per-unit = 13\n\n[[group]]\nname = \"rogue\"\n\
                 quota = \"{quota}\"\n\n[[task]]\nname = \"rogue\"\ngroup = \"rogue\"\n\
                 reservation = {{ budget = \"1ms\", period = \"40ms\" }}\n\
                 script = [{{ allocate = 1000000, object = \"semaphore\" }}, {{ run = \"1s\" }}]\n\n\
                 [[task]]\nname = \"controller\"\n\
                 reservation = {{ budget = \"1ms\", period = \"40ms\" }}\n\
                 script = [{{ sleep-until = \"50ms\" }}, {{ terminate = \"rogue\" }}, \
                 {{ sleep-until = \"1s\" }}]\n"
            )
        })
    };
    let (_dir, four) = masked("4ms");
    let stdout = stdout_of(&["analyze", &four], 0);
    assert_contains(&stdout, "total bandwidth 9/10 = 0.900000: admitted");
    assert_contains(
        &stdout,
        "with the terminations' mask of at most 4ms (EDF demand, servers as (Q, T) tasks): \
         h(t) + 4ms <= t at every server deadline up to 40ms: admitted",
    );
    assert_contains(
        &stdout,
        "note: core 0: the admission above counts this mask (at most 4ms) in the CBS servers' \
         EDF demand",
    );
    let json = json_of(&["analyze", &four, "--json"], 0);
    assert_eq!(json["cores"][0]["masked_ns"], 4_000_000);
    assert_eq!(json["cores"][0]["mask_test"]["outcome"], "demand-met");
    assert_eq!(json["cores"][0]["mask_test"]["bound_ns"], 40_000_000);

    let (_dir, five) = masked("5ms");
    let stdout = stdout_of(&["analyze", &five], 1);
    assert_contains(&stdout, "total bandwidth 9/10 = 0.900000: admitted");
    assert_contains(
        &stdout,
        "h(t) + 5ms = 6ms + 5ms > t at t = 10ms: NOT admitted",
    );
    let json = json_of(&["analyze", &five, "--json"], 1);
    assert_eq!(json["admitted"], false);
    let test = &json["cores"][0]["mask_test"];
    assert_eq!(
        (&test["outcome"], &test["deadline_ns"], &test["demand_ns"]),
        (
            &"demand-exceeds".into(),
            &10_000_000.into(),
            &6_000_000.into()
        )
    );
    // The unmasked file has no mask test, and its mask is 0.
    let json = json_of(&["analyze", "scenarios/cbs-isolation.toml", "--json"], 0);
    assert_eq!(json["cores"][0]["masked_ns"], 0);
    assert!(json["cores"][0]["mask_test"].is_null());
}

/// VBS, by hand in instants of 10 us: control's first action (320 us, (320 us, 3550 us)) is
/// (32, (32, 355)): Eq. (1) gives ceil(32/32) 355 + 355 - 1 = 709 instants = 7.09 ms, and the
/// late strategy at least 355 = 3.55 ms. The caps 3/10 + 2/5 + 1/5 = 9/10: admitted.
#[test]
fn vbs_actions_get_their_response_bounds() {
    let stdout = stdout_of(&["analyze", "scenarios/vbs-processes.toml"], 0);
    assert_eq!(
        row(&stdout, "control"),
        ["control", "3/10", "0", "320us", "320us", "3.55ms", "7.09ms", "3.55ms"]
    );
    assert_contains(&stdout, "sum of caps 9/10 = 0.900000: admitted");
}

/// VBS on a core a termination masks: vbs-processes with control's cap 1/5, a rogue (1/20)
/// in a group of quota `quota` and its controller (1/20): caps 9/10, instants of 10 us. By
/// hand for control's first action (32, (32, 355)), Eq. (1) 709 instants. Quota 2 ms, M =
/// 200 in one stretch: the slack (1 - 9/10) 355 = 35.5 < 200; the charge min(1,
/// ceil(200/32)) = 1 job, 355; early, 1 + 1 + 1 = 3 jobs slip ceil(200/355) 355 = 355 each,
/// 1065: 709 + 355 + 1065 = 2129 = 21.29 ms (at most floor(200 (2 - 9/10) / ((1 - 9/10)
/// 355)) + 1 = 7 could be late, more than 3). video's (15000, (400, 1000)): Eq. (1) 38 *
/// 1000 + 999 = 38999, one charged job, 1000; of its 38 + 1 + 1 jobs at most floor(200 * 11 /
/// 1000) + 1 = 3 late, 1000 each: 42999 = 429.99 ms. Quota 30 us under the late strategy, M
/// = 3 <= 35.5: only the charge, 1 job: 709 + 355 = 1064 = 10.64 ms.
#[test]
fn vbs_actions_count_the_mask_of_a_termination() {
    let masked = |quota: &str, strategy: &str| {
        edited_copy("masked.toml", "scenarios/vbs-processes.toml", |source| {
            let source = source.replace("cap = \"3/10\"", "cap = \"1/5\"").replace(
                "strategy = \"early\"",
                &format!("strategy = \"{strategy}\""),
            );
            format!(
                "{source}\n[cost]\nreclaim-per-unit = 13\n\n[[group]]\nname = \"rogue\"\n\
                 quota = \"{quota}\"\n\n[[task]]\nname = \"rogue\"\ngroup = \"rogue\"\n\
                 cap = \"1/20\"\nscript = [{{ action = \"100us\", limit = \"1ms\", period = \
                 \"20ms\" }}, {{ allocate = 1000000, object = \"semaphore\" }}]\n\n\
                 [[task]]\nname = \"controller\"\ncap = \"1/20\"\nscript = [{{ action = \
                 \"100us\", limit = \"1ms\", period = \"20ms\" }}, {{ terminate = \"rogue\" }}]\n"
            )
        })
    };
    let (_dir, early) = masked("2ms", "early");
    let stdout = stdout_of(&["analyze", &early], 0);
    assert_eq!(
        row(&stdout, "control"),
        ["control", "1/5", "0", "320us", "320us", "3.55ms", "7.09ms", "3.55ms", "21.29ms"]
    );
    assert_eq!(row(&stdout, "video")[8], "429.99ms");
    assert_contains(
        &stdout,
        "with the terminations' mask of at most 2ms (M = 200 instants)",
    );
    assert_contains(
        &stdout,
        "note: core 0: the \"bound with mask\" column above counts this mask (at most 2ms)",
    );
    let json = json_of(&["analyze", &early, "--json"], 0);
    let core = &json["cores"][0];
    assert_eq!(core["masked_ns"], 2_000_000);
    assert_eq!(core["mask_within_slack"], false);
    let first = &core["processes"][0]["actions"][0];
    assert_eq!(first["response_bound_ns"], 7_090_000);
    assert_eq!(first["masked_response_bound_ns"], 21_290_000);

    let (_dir, late) = masked("30us", "late");
    let json = json_of(&["analyze", &late, "--json"], 0);
    let core = &json["cores"][0];
    assert_eq!(core["mask_within_slack"], true);
    let first = &core["processes"][0]["actions"][0];
    assert_eq!(first["masked_response_bound_ns"], 10_640_000);

    // Unmasked: no column, the bound with mask is Eq. (1)'s.
    let stdout = stdout_of(&["analyze", "scenarios/vbs-processes.toml"], 0);
    assert!(!stdout.contains("bound with mask"));
    let json = json_of(&["analyze", "scenarios/vbs-processes.toml", "--json"], 0);
    let core = &json["cores"][0];
    assert_eq!(core["masked_ns"], 0);
    assert!(core["mask_within_slack"].is_null());
    let first = &core["processes"][0]["actions"][0];
    assert_eq!(
        first["masked_response_bound_ns"],
        first["response_bound_ns"]
    );
}

/// A file of mixed policies analyses each policy's cores as a part of its own: the part keeps
/// its groups, so a termination there masks for the group's quota. spr-vbs-cores with the vbs
/// core's control at cap 1/5 and a rogue (in a 2 ms group) and its controller added on that
/// core: the same core as `vbs_actions_count_the_mask_of_a_termination`'s, so M = 200
/// instants and control's first action 21.29 ms (without its group the rogue's million
/// semaphores would be 39 ms).
#[test]
fn a_mixed_files_parts_keep_their_groups() {
    let (_dir, mixed) = edited_copy("mixed.toml", "scenarios/spr-vbs-cores.toml", |source| {
        format!(
            "{}\n[cost]\nreclaim-per-unit = 13\n\n[[group]]\nname = \"villain\"\n\
             quota = \"2ms\"\n\n[[task]]\nname = \"villain\"\ncore = 1\ngroup = \"villain\"\n\
             cap = \"1/20\"\nscript = [{{ action = \"100us\", limit = \"1ms\", period = \
             \"20ms\" }}, {{ allocate = 1000000, object = \"semaphore\" }}]\n\n\
             [[task]]\nname = \"controller\"\ncore = 1\ncap = \"1/20\"\nscript = \
             [{{ action = \"100us\", limit = \"1ms\", period = \"20ms\" }}, \
             {{ terminate = \"villain\" }}]\n",
            source.replace("cap = \"3/10\"", "cap = \"1/5\"")
        )
    });
    let stdout = stdout_of(&["analyze", &mixed], 0);
    assert_contains(
        &stdout,
        "with the terminations' mask of at most 2ms (M = 200 instants)",
    );
    assert_eq!(row(&stdout, "control")[8], "21.29ms");
}

/// `--camkes` prints a component system's configuration: on a scenario or an MC-IPC file, or
/// beside `--json` (which prints the analysis instead), it would be ignored, so it is a usage
/// error (exit 2) that names the file's kind.
#[test]
fn camkes_output_is_refused_where_it_would_be_ignored() {
    for (file, kind) in [
        ("scenarios/textbook-rm.toml", "this file is a scenario"),
        (
            "scenarios/mcipc/one-core.toml",
            "this file is an MC-IPC system",
        ),
    ] {
        let out = output_of(&["analyze", file, "--camkes"], 2);
        let stderr = text(&out.stderr);
        assert_contains(
            &stderr,
            "--camkes prints a component system's CAmkES configuration",
        );
        assert_contains(&stderr, kind);
        assert!(out.stdout.is_empty());
    }
    let both = [
        "analyze",
        "scenarios/components/fig3.camkes",
        "--camkes",
        "--json",
    ];
    assert_contains(&text(&output_of(&both, 2).stderr), "cannot be used with");
}

/// The configuration analyzer on the paper's Fig. 3 (`scenarios/components/fig3.camkes`):
/// A's CPI serves tasks one and two (2 threads), B's CPI tasks one, two and three (3
/// threads), both waiting at the highest requester priority, 30; `--camkes` prints the lines
/// to paste back. With a connection from B back to A, the analyzer flags a call loop and
/// exits 1.
#[test]
fn the_configuration_analyzer_on_fig_3() {
    let stdout = stdout_of(&["analyze", "scenarios/components/fig3.camkes"], 0);
    assert_eq!(
        row(&stdout, "A.a")[..6],
        ["A.a", "propagation", "one,", "two", "20", "30"]
    );
    assert!(
        row(&stdout, "A.a").ends_with(&["2", "(2", "at", "once)"]),
        "{stdout}"
    );
    assert!(
        row(&stdout, "B.b").ends_with(&["3", "(3", "at", "once)"]),
        "{stdout}"
    );
    let out = bulwark(&["analyze", "scenarios/components/fig3.camkes", "--camkes"]);
    let stdout = text(&out.stdout);
    assert_contains(&stdout, "A.a_num_threads = 2;");
    assert_contains(&stdout, "B.b_num_threads = 3;");
    assert_contains(&stdout, "B.b_priority = 30;");

    let (_dir, looped) = edited_copy(
        "loop.camkes",
        "scenarios/components/fig3.camkes",
        |source| {
            source
                .replace(
                    "provides Service b;",
                    "provides Service b;\n    uses Service out;",
                )
                .replace(
                    "three_to_b(from three.out, to B.b);",
                    "three_to_b(from three.out, to B.b);\n        \
             connection seL4RPCCallPrioritized b_to_a(from B.out, to A.a);",
                )
        },
    );
    let stdout = stdout_of(&["analyze", &looped], 1);
    assert_contains(&stdout, "cycles:");
}

/// Schedulability of the Fig. 7 file (bodies: 1 ms in each component of a chain, so every
/// C = 4 ms), without overheads, by hand. B under PIP is one section per lower task, its
/// longest request that can run at the task's priority or above:
/// - t1 (40): t2's request to A (A, C, E: 3 ms) + t3's to E (1 ms) + t4's to E (1 ms) = 5 ms;
///   R = 4 + 5 = 9 ms.
/// - t2 (30): t3 and t4 reach E (ceiling 40): 1 + 1 = 2 ms; R = 6 -> 6 + 4 = 10 -> 10 ms.
/// - t3 (20): t4's request to B (B, D, E: 3 ms); R = 7 -> 7 + 4 + 4 = 15 -> 7 + 8 + 4 = 19.
/// - t4 (10): B = 0; R = 4 -> 16 -> 20 -> 20 ms.
///
/// Eq. 2 admits (products 1.9, 1.82, 1.974, 1.9404 <= 2); Eq. 3 does not (U = 0.75 plus
/// max B/T = 0.5 is over 4(2^(1/4) - 1) = 0.757).
#[test]
fn component_schedulability_on_fig_7() {
    let stdout = stdout_of(&["analyze", "scenarios/components/fig7.camkes"], 0);
    let table = &stdout[stdout
        .find("schedulability (")
        .expect("a schedulability table")..];
    let cells = |name| {
        let r = row(table, name);
        [r[3], r[4], r[r.len() - 2], r[r.len() - 1]]
            .map(String::from)
            .to_vec()
    };
    assert_eq!(cells("t1"), ["4ms", "5ms", "9ms", "admitted"]);
    assert_eq!(cells("t2"), ["4ms", "2ms", "10ms", "admitted"]);
    assert_eq!(cells("t3"), ["4ms", "3ms", "19ms", "admitted"]);
    assert_eq!(cells("t4"), ["4ms", "0ns", "20ms", "admitted"]);
    assert!(stdout.contains("hyperbolic with blocking (Eq. 2): admitted"));
    assert!(stdout.contains("Liu-Layland with blocking (Eq. 3): not admitted"));

    // The simulation stays within those bounds: t4's worst response is its RTA bound, 20 ms
    // (the synchronous release is its critical instant); nothing misses. The run is 800 ms
    // with an inclusive horizon: t4 (80 ms) is released at 0, 80, ..., 800, 11 jobs, and t1
    // (10 ms) 81; the jobs released at 800 are unfinished, their deadlines after the end.
    let stdout = stdout_of(&["simulate", "scenarios/components/fig7.camkes"], 0);
    assert_eq!(row(&stdout, "t4")[2..5], ["11", "0", "20ms"]);
    assert_eq!(row(&stdout, "t1")[2..4], ["81", "0"]);

    // With Table 2's overheads every C and B grows; JSON carries the same analysis.
    let json = json_of(
        &[
            "analyze",
            "scenarios/components/fig7.camkes",
            "--overheads",
            "xeon",
            "--json",
        ],
        0,
    );
    let t1 = &json["schedulability"]["tasks"][0];
    assert!(t1["execution_ns"].as_u64().unwrap() > 4_000_000);
    assert!(t1["blocking_ns"].as_u64().unwrap() > 5_000_000);
    assert_eq!(json["schedulability"]["admitted"], true);

    // Without bodies there is nothing to analyse, and the analyzer says why.
    let out = bulwark(&["analyze", "scenarios/components/fig3.camkes"]);
    assert!(text(&out.stdout).contains("schedulability: not analysed: task `one` has no body"));
}

/// The MC-IPC case study file (`scenarios/mcipc/case-study.toml`), by hand (section VI-B):
/// MC-IPC (1 + 2 * 1 * 4) * 2 = 18 ms for everyone; FIFO-IPC 14 * 2 = 28 ms; PRIO-IPC
/// (h + 1 + b) * 2 with h the requests of higher (or equal) priority whose slots can overlap:
/// R1: R2 and R4 (R3's slot is [50, 100)), plus one lower: 8 ms; R2: R4 only, 6 ms; R3 and
/// R4: nothing above overlaps, 4 ms; a low-criticality reservation: the 4 partitions and the
/// 9 other EDF reservations (ties count), none lower: 28 ms. Budgets: 2 + 18 = 20 ms each,
/// which the 20 ms sporadic budgets and 50 ms slots provide. The exit status is 1 all the
/// same: in phases 6 and 7, R4 shares its slot with 15 added tasks (see below).
#[test]
fn mc_ipc_bounds_of_the_case_study() {
    let stdout = stdout_of(&["analyze", "scenarios/mcipc/case-study.toml"], 1);
    let bounds = |name| row(&stdout, name)[6..9].to_vec();
    assert_eq!(bounds("R1"), ["18ms", "28ms", "8ms"]);
    assert_eq!(bounds("R2"), ["18ms", "28ms", "6ms"]);
    assert_eq!(bounds("R3"), ["18ms", "28ms", "4ms"]);
    assert_eq!(bounds("R4"), ["18ms", "28ms", "4ms"]);
    assert_eq!(bounds("R9"), ["18ms", "28ms", "28ms"]);
    let budgets = &stdout[stdout.find("budgets sized").unwrap()..];
    assert_eq!(row(budgets, "R5"), ["R5", "20ms", "20ms", "20ms", "enough"]);

    // Sized for FIFO-IPC instead, every budget needs 2 + 28 = 30 ms: the sporadic
    // reservations' 20 ms are too small, and the exit status says so.
    let (_dir, fifo) = edited_copy("fifo.toml", "scenarios/mcipc/case-study.toml", |source| {
        source.replace("protocol = \"mc-ipc\"", "protocol = \"fifo-ipc\"")
    });
    let json = json_of(&["analyze", &fifo, "--json"], 1);
    let r5 = &json["reservations"][4];
    assert_eq!(r5["budget_low_ns"], 30_000_000);
    assert_eq!(r5["enough"], false);
    assert_eq!(json["reservations"][0]["enough"], true);
}

/// The case study's eight phases (section VI-C), by hand from section VI-B's formulas with
/// each phase's clients: phase 3 adds 64 clients, FIFO-IPC (14 + 64) 2 = 156 ms; phase 8 adds
/// 80 best-effort ones, 94 x 2 = 188 ms; phase 6 adds 15 tasks to R4, which precede R1:
/// PRIO-IPC (15 + 2 + 1 + 1) 2 = 38 ms (the paper's figure), FIFO-IPC 29 x 2 = 58 ms. In
/// phases 4 and 7 one reservation that overlaps R1 at a higher priority floods, so it comes
/// first again after every other operation: (2h + 2b + 2) 2 with the others' h = 1 (R2) and
/// h = 16 (R4 and its copies), b = 1: 12 ms and 72 ms; in phase 5 two do, so R1 has no
/// PRIO-IPC bound. MC-IPC stays at 18 ms throughout. Only the differing bounds are printed.
#[test]
fn mc_ipc_bounds_of_each_phase() {
    let json = json_of(&["analyze", "scenarios/mcipc/case-study.toml", "--json"], 1);
    let phases = json["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 8);
    let r1 = |phase: usize| &phases[phase - 1]["reservations"][0]["servers"][0];
    assert_eq!(phases[5]["phase"], "R4 launches 15 extra correct tasks");
    for phase in 1..=8 {
        assert_eq!(r1(phase)["mc_ipc_ns"], 18_000_000, "phase {phase}");
    }
    assert_eq!(r1(1)["prio_ipc_ns"], 8_000_000);
    assert_eq!(r1(3)["fifo_ipc_ns"], 156_000_000);
    assert_eq!(r1(8)["fifo_ipc_ns"], 188_000_000);
    assert_eq!(r1(6)["prio_ipc_ns"], 38_000_000);
    assert_eq!(r1(6)["fifo_ipc_ns"], 58_000_000);
    assert_eq!(r1(4)["prio_ipc_ns"], 12_000_000);
    assert_eq!(r1(7)["prio_ipc_ns"], 72_000_000);
    assert!(r1(5)["prio_ipc_ns"].is_null());
    // Sized for MC-IPC, every reservation's own task needs 2 + 18 = 20 ms, which it has in
    // every phase, except R4 in phases 6 and 7: it shares its 50 ms slot per 100 ms cycle
    // with 15 added tasks (period 100 ms), each job computing at most 1.5 + 0.5 ms around one
    // invocation of at most 18 ms, so it needs 20 + 15 x 20 = 320 ms.
    for (number, phase) in (1..).zip(phases) {
        for reservation in phase["reservations"].as_array().unwrap() {
            let shared = reservation["reservation"] == "R4" && (number == 6 || number == 7);
            let (budget, enough) = if shared { (320, false) } else { (20, true) };
            assert_eq!(
                reservation["budget_ns"],
                budget * 1_000_000,
                "phase {number}"
            );
            assert_eq!(reservation["enough"], enough, "phase {number}");
            assert_eq!(reservation["added_jobs"], if shared { 15 } else { 0 });
        }
    }

    let stdout = stdout_of(&["analyze", "scenarios/mcipc/case-study.toml"], 1);
    let section = &stdout[stdout.find("per phase:").unwrap()..];
    assert_contains(section, "phase 6: R4 launches 15 extra correct tasks");
    let rows: Vec<Vec<&str>> = (section.lines())
        .map(|line| line.split_whitespace().collect())
        .filter(|row: &Vec<&str>| row.len() == 6 && row[1] == "R1")
        .collect();
    // Phase 1 and phase 2 (a lower-priority flood) leave R1's bounds as they are.
    let expected: Vec<Vec<&str>> = vec![
        vec!["3", "R1", "key", "18ms", "156ms", "8ms"],
        vec!["4", "R1", "key", "18ms", "28ms", "12ms"],
        vec!["5", "R1", "key", "18ms", "28ms", "none"],
        vec!["6", "R1", "key", "18ms", "58ms", "38ms"],
        vec!["7", "R1", "key", "18ms", "58ms", "72ms"],
        vec!["8", "R1", "key", "18ms", "188ms", "8ms"],
    ];
    assert_eq!(rows, expected);
    assert_contains(section, "too small (exit 1)");
    assert_contains(section, "6      R4 (+15 added jobs)  320ms      50ms");
    assert_contains(section, "7      R4 (+15 added jobs)  320ms      50ms");

    // Sized for FIFO-IPC, phase 3 needs 2 + 156 = 158 ms of R1's 50 ms slot, and under
    // PRIO-IPC phase 5's two flooders leave R1 no bound at all: exit 1 either way.
    for (protocol, phase, budget) in [("fifo-ipc", 3, Some(158_000_000)), ("prio-ipc", 5, None)] {
        let (_dir, copy) = edited_copy("copy.toml", "scenarios/mcipc/case-study.toml", |text| {
            text.replace(
                "protocol = \"mc-ipc\"",
                &format!("protocol = \"{protocol}\""),
            )
        });
        let json = json_of(&["analyze", &copy, "--json"], 1);
        let r1 = &json["phases"][phase - 1]["reservations"][0];
        assert_eq!(
            r1["budget_ns"],
            budget.map_or(serde_json::Value::Null, |b| b.into())
        );
        assert_eq!(r1["enough"], false);
        // In the system as described R1's 50 ms slot is enough under both.
        assert_eq!(json["reservations"][0]["enough"], true);
    }
}

/// The new sporadic reservations of the case study's phase 3 (16 per cluster, 100 ms per
/// 3000 ms, priority 0): one copy's bounds are Theorem 1's (1 + 2 * 1 * 4) 2 = 18 ms, FIFO-IPC
/// (14 + 64) 2 = 156 ms and PRIO-IPC (77 + 1) 2 = 156 ms, so it needs 0.6 + 18 = 18.6 ms of its
/// 100 ms under MC-IPC, and 156.6 ms under FIFO-IPC: the FIFO-IPC copy of the file lists
/// them short. No other phase adds reservations of their own.
#[test]
fn a_phase_s_new_reservations_are_clients_with_budgets() {
    let json = json_of(&["analyze", "scenarios/mcipc/case-study.toml", "--json"], 1);
    let phases = json["phases"].as_array().unwrap();
    let counts: Vec<usize> = (phases.iter())
        .map(|phase| phase["added"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts, [0, 0, 4, 0, 0, 0, 0, 0]);
    for (added, cluster) in phases[2]["added"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["C1", "C2", "C3", "C4"])
    {
        assert_eq!(added["addition"], 1);
        assert_eq!(added["cluster"], cluster);
        assert_eq!(added["copies"], 16);
        assert_eq!(added["provisioned_ns"], 100_000_000);
        assert_eq!(added["budget_ns"], 18_600_000);
        assert_eq!(added["enough"], true);
        let key = &added["servers"][0];
        assert_eq!(
            (&key["mc_ipc_ns"], &key["fifo_ipc_ns"], &key["prio_ipc_ns"]),
            (&18_000_000.into(), &156_000_000.into(), &156_000_000.into())
        );
    }
    let stdout = stdout_of(&["analyze", "scenarios/mcipc/case-study.toml"], 1);
    assert_contains(
        &stdout,
        "3      addition 1 on C2 (16 copies)   100ms     key    18ms     156ms     156ms",
    );

    let (_dir, copy) = edited_copy("copy.toml", "scenarios/mcipc/case-study.toml", |text| {
        text.replace("protocol = \"mc-ipc\"", "protocol = \"fifo-ipc\"")
    });
    let json = json_of(&["analyze", &copy, "--json"], 1);
    let added = &json["phases"][2]["added"][3];
    assert_eq!(
        (&added["budget_ns"], &added["enough"]),
        (&156_600_000.into(), &false.into())
    );
    let stdout = stdout_of(&["analyze", &copy], 1);
    assert_contains(
        &stdout,
        "3      addition 1 on C4 (16 copies)  156.6ms     100ms",
    );
}

/// `--trace` and `--svg` on a component system: a Chrome trace that parses, with one track
/// per task and a slice event per stretch, and a Gantt chart with a row per task of Fig. 7.
#[test]
fn component_simulation_writes_its_trace_and_gantt_chart() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, svg) = (dir.path().join("fig7.json"), dir.path().join("fig7.svg"));
    output_of(
        &[
            "simulate",
            "scenarios/components/fig7.camkes",
            "--until",
            "60ms",
            "--trace",
            trace.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
        0,
    );
    let json = read_json(&trace);
    let events = json["traceEvents"].as_array().unwrap();
    let slices = events.iter().filter(|e| e["ph"] == "X").count();
    assert!(slices > 0, "no slice in {json}");
    assert_eq!(json["otherData"]["scenario"], "fig7");
    let svg = std::fs::read_to_string(&svg).unwrap();
    for task in ["t1", "t2", "t3", "t4"] {
        assert!(svg.contains(&format!(">{task}</text>")), "row {task}");
    }
    assert!(svg.contains("class=\"execution\""));
}

/// `simulate` runs an MC-IPC file's phases on the scenario machine under the protocol the file
/// names (the case study names mc-ipc): one row per phase, the bound of Theorem 1 (18 ms, as
/// `mc_ipc_bounds_of_the_case_study` derives) in the header.
#[test]
fn simulate_runs_an_mc_ipc_file() {
    let file = "scenarios/mcipc/case-study.toml";
    let stdout = stdout_of(&["simulate", file, "--until", "200ms"], 0);
    assert_contains(&stdout, "MC-IPC (bound 18.00ms)");
    assert!(
        !stdout.contains("FIFO-IPC"),
        "only the file's protocol: {stdout}"
    );
    for phase in 1..=8 {
        assert!(
            stdout.contains(&format!("\n{phase}: ")),
            "phase {phase}: {stdout}"
        );
    }
    // --trace: the phases end to end, 8 x 20 ms, every task's track named, slices inside.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("mcipc.json");
    output_of(
        &[
            "simulate",
            file,
            "--until",
            "20ms",
            "--trace",
            trace.to_str().unwrap(),
        ],
        0,
    );
    let json = read_json(&trace);
    assert_eq!(json["otherData"]["until_ns"], "160000000");
    let events = json["traceEvents"].as_array().unwrap();
    let slices: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert!(!slices.is_empty());
    for slice in &slices {
        let end = slice["ts"].as_f64().unwrap() + slice["dur"].as_f64().unwrap();
        assert!(end <= 160_000.0 + 1e-6, "{slice}");
    }
    // A file naming no protocol runs all three: one trace cannot show them, exit 2.
    let (_all_dir, all) = edited_copy("all.toml", file, |source| {
        source
            .lines()
            .filter(|l| !l.trim_start().starts_with("protocol ="))
            .map(|l| format!("{l}\n"))
            .collect()
    });
    let out = output_of(&["simulate", &all, "--svg", "/tmp/never.svg"], 2);
    assert!(text(&out.stderr).contains(
        "names none; allowed: protocol = \"mc-ipc\", \"fifo-ipc\" or \"prio-ipc\" in the file"
    ));
}

/// `simulate` of the composed MC-IPC file shows its reclamation, in the table and the JSON,
/// with the figures the file's comments derive by hand (and `mcipc_cbs_rogue`'s test checks
/// on the machine): 19,230 of the rogue's million semaphores fit its group's 1 ms quota at
/// 13 ns per unit, 980,770 are refused, and terminating the group is one arena release, 1
/// unit, 13 ns. With `--trace` the same run also draws that span as kernel time at 4.99 s.
#[test]
fn simulate_reports_the_reclamation_of_an_mc_ipc_file() {
    let file = "scenarios/mcipc/cbs-rogue.toml";
    let stdout = stdout_of(&["simulate", file, "--until", "6s"], 0);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("MC-IPC ") && l.contains("the system as given"))
        .unwrap_or_else(|| panic!("a reclamation row: {stdout}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // One termination of the group: one arena release, 13 ns masked.
    assert_eq!(
        cells[cells.len() - 5..],
        ["19230", "980770", "1", "13ns", "13ns"]
    );
    let doc = json_of(&["simulate", file, "--until", "6s", "--json"], 0);
    let run = &doc["runs"][0];
    assert_eq!(run["objects_created"], 19_230);
    assert_eq!(run["allocations_refused"], 980_770);
    assert_eq!(run["terminations"], 1);
    assert_eq!(run["masked_ns"], 13);
    assert_eq!(run["longest_mask_ns"], 13);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rogue.json");
    let out = output_of(
        &[
            "simulate",
            file,
            "--until",
            "6s",
            "--trace",
            trace.to_str().unwrap(),
        ],
        0,
    );
    assert!(text(&out.stdout).contains("980770"), "the table as well");
    let json = read_json(&trace);
    // The watchdog's termination at 4.99 s: 13 ns of kernel time.
    let kernel: Vec<&serde_json::Value> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "kernel")
        .collect();
    assert!(
        kernel
            .iter()
            .any(|e| (e["ts"].as_f64().unwrap() - 4_990_000.0).abs() < 1e-3),
        "{kernel:?}"
    );
}

/// `analyze` of the composed MC-IPC file bounds the watchdog's termination by the rogue's
/// group: at most its 1 ms quota on C1, so R1's 50 ms slot keeps 49 ms for its 20 ms budget.
/// Without the group, the rogue's process is reclaimed one object at a time, and its jobs
/// allocate a million semaphores each: by hand 3 units an object and 1 for the process, 3,000,001
/// units of 13 ns, 39,000,013 ns for the first job (what the simulator masks, see
/// `mcipc_cbs_rogue`), and nothing bounds the jobs after it: R1 may keep nothing of its slot,
/// too small, exit 1. The budgeted reservations of C1 (R15, R16) are not charged the mask.
#[test]
fn analyze_bounds_a_termination_by_its_group() {
    let file = "scenarios/mcipc/cbs-rogue.toml";
    let stdout = stdout_of(&["analyze", file], 0);
    let budgets = &stdout[stdout.find("budgets sized").unwrap()..];
    assert_eq!(
        row(budgets, "R1"),
        ["R1", "20ms", "20ms", "50ms", "1ms", "enough"]
    );
    assert_eq!(
        row(budgets, "R2"),
        ["R2", "20ms", "20ms", "50ms", "0ns", "enough"]
    );
    let json = json_of(&["analyze", file, "--json"], 0);
    let terminations = json["terminations"].as_array().unwrap();
    assert_eq!(terminations.len(), 1);
    assert_eq!(terminations[0]["terminator"], "T16");
    assert_eq!(terminations[0]["target"], "T15");
    assert_eq!(terminations[0]["group"], "rogue");
    assert_eq!(terminations[0]["cluster"], "C1");
    assert_eq!(terminations[0]["core"], serde_json::Value::Null);
    assert_eq!(terminations[0]["mask_ns"], 1_000_000);
    assert_eq!(json["reservations"][0]["masked_ns"], 1_000_000);
    assert_eq!(json["reservations"][1]["masked_ns"], 0);

    let (_dir, baseline) = edited_copy("baseline.toml", file, |source| {
        source.replace("group = \"rogue\"\n", "")
    });
    let json = json_of(&["analyze", &baseline, "--json"], 1);
    let t = &json["terminations"][0];
    assert_eq!(t["group"], serde_json::Value::Null);
    assert_eq!(t["objects"], 1_000_000);
    assert_eq!(t["repeats"], true);
    assert_eq!(t["mask_ns"], serde_json::Value::Null);
    assert_eq!(t["first_mask_ns"], 39_000_013);
    let r1 = &json["reservations"][0];
    assert_eq!(r1["masked_ns"], serde_json::Value::Null);
    assert_eq!(r1["enough"], false);
    let r15 = &json["reservations"][14];
    assert_eq!(r15["reservation"], "R15");
    assert_eq!(r15["enough"], true);
    let stdout = stdout_of(&["analyze", &baseline], 1);
    assert_contains(&stdout, "39.000013ms");
    assert_contains(&stdout, "lose no budget to the mask (without bound)");
}

/// A phase's addition that terminates is analysed with the file's tasks: its copy on C2
/// terminates the rogue T15 there too, so its group's quota masks C2 as well (1 ms, once),
/// and the table names the terminator for its phase and its place there.
#[test]
fn analyze_reads_a_phases_terminating_addition() {
    let file = "scenarios/mcipc/cbs-rogue.toml";
    let (_dir, phased) = edited_copy("phased.toml", file, |source| {
        format!(
            "{source}\n[[phase]]\nname = \"late kill\"\n\n[[phase.add]]\nclusters = [\"C2\"]\n\
             count = 1\nreservation = \"best-effort\"\ntask = {{ period = \"1s\", script = [\
             {{ terminate = \"T15\" }}, \"sleep\"] }}\n"
        )
    });
    let json = json_of(&["analyze", &phased, "--json"], 0);
    let terminations = json["terminations"].as_array().unwrap();
    assert_eq!(terminations.len(), 2, "{json:#}");
    assert_eq!(terminations[1]["terminator"], "late kill's addition 1");
    assert_eq!(terminations[1]["target"], "T15");
    assert_eq!(terminations[1]["group"], "rogue");
    assert_eq!(terminations[1]["cluster"], "C2");
    assert_eq!(terminations[1]["mask_ns"], 1_000_000);
    // R2's slot is on C2: it is now charged the quota too.
    assert_eq!(json["reservations"][1]["masked_ns"], 1_000_000);
    let stdout = stdout_of(&["analyze", &phased], 0);
    assert_contains(&stdout, "late kill's addition 1");
}

/// An SPR core with a termination: SPR's Eq. 1 counts the group's quota, the most the
/// reclamation masks the core, in every reservation's response, as time nothing else runs.
/// By hand, with M = 1 ms and no region (I = 0): hi R = 1 + 2 = 3; lo 1 + 3 = 4 -> 4 + 2 =
/// 6; the terminator 1 + 1 = 2 -> 2 + 2 + 3 = 7; the rogue 2 -> 2 + 2 + 3 + 1 = 8, all
/// within their periods (without the mask 2, 5, 6 and 7). A quota of 9 ms: hi's R = 11 >
/// 10, NOT admitted, exit 1.
#[test]
fn analyze_counts_a_reclamation_mask_in_spr_responses() {
    let scenario = |quota: &str| {
        format!(
            r#"name = "masked"
policy = "spr"
duration = "200ms"

[cost]
reclaim-per-unit = 13

[[group]]
name = "rogue-function"
quota = "{quota}"

[[task]]
name = "hi"
priority = 9
period = "10ms"
execution = "2ms"
reservation = {{ budget = "2ms", period = "10ms" }}

[[task]]
name = "lo"
priority = 4
period = "20ms"
execution = "3ms"
reservation = {{ budget = "3ms", period = "20ms" }}

[[task]]
name = "killer"
priority = 2
reservation = {{ budget = "1ms", period = "100ms" }}
script = [{{ sleep-until = "50ms" }}, {{ terminate = "rogue" }}, {{ sleep-until = "1s" }}]

[[task]]
name = "rogue"
priority = 1
group = "rogue-function"
reservation = {{ budget = "1ms", period = "100ms" }}
script = [{{ allocate = 1000, object = "semaphore" }}, {{ run = "1s" }}]
"#
        )
    };
    let out = analyze_text(&scenario("1ms"), false, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("reservation"))
        .unwrap();
    assert_eq!(
        header.split_whitespace().collect::<Vec<_>>()[5..8],
        ["I", "masked", "R"]
    );
    for (name, response) in [
        ("hi", "3ms"),
        ("lo", "6ms"),
        ("killer", "7ms"),
        ("rogue", "8ms"),
    ] {
        let row = row(&stdout, name);
        assert_eq!(row[6..9], ["1ms", response, "admitted"], "{name}");
    }
    assert_contains(
        &stdout,
        "note: core 0: the response bounds above count this mask (at most 1ms)",
    );
    let json = json_out(&analyze_text(&scenario("1ms"), true, 0));
    let hi = &json["cores"][0]["reservations"][0];
    assert_eq!(hi["masked_ns"], 1_000_000);
    assert_eq!(hi["response_ns"], 3_000_000);
    assert_eq!(json["terminations"][0]["mask_ns"], 1_000_000);

    let out = analyze_text(&scenario("9ms"), false, 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(row(&stdout, "hi")[6..9], ["9ms", "11ms", "NOT"]);
    assert_contains(&stdout, "NOT admitted: hi");
}

/// A scenario's terminations get the same table after the rest of its analysis, which
/// keeps its exit code (0 for `faas-reclaim.toml`, 1 without its group): its controller masks core 0 for at most the rogue
/// group's 1 ms quota; without the group the rogue's script allocates its million semaphores
/// once, so the mask is bounded, 39,000,013 ns by hand (3,000,001 units of 13 ns).
/// `cluster-rogue.toml`'s watchdog masks cluster C1.
#[test]
fn analyze_lists_a_scenarios_terminations() {
    let file = "scenarios/faas-reclaim.toml";
    let stdout = stdout_of(&["analyze", file], 0);
    let table = &stdout[stdout.find("terminations:").unwrap()..];
    assert_eq!(
        row(table, "controller"),
        [
            "controller",
            "rogue",
            "core",
            "0",
            "group",
            "`rogue-function`",
            "(quota",
            "1ms)",
            "1ms",
            "1ms"
        ]
    );
    assert_contains(
        &stdout,
        "note: core 0: the response bounds above count this mask (at most 1ms) in every \
         analysed task's blocking B",
    );
    let json = json_of(&["analyze", file, "--json"], 0);
    let t = &json["terminations"][0];
    assert_eq!(t["core"], 0);
    assert_eq!(t["cluster"], serde_json::Value::Null);
    assert_eq!(t["mask_ns"], 1_000_000);

    let (_dir, baseline) = edited_copy("baseline.toml", file, |source| {
        source.replace("group = \"rogue-function\"\n", "")
    });
    // The sensor's bound counts the 39 ms mask: NOT schedulable, exit 1.
    let json = json_of(&["analyze", &baseline, "--json"], 1);
    let t = &json["terminations"][0];
    assert_eq!(t["objects"], 1_000_000);
    assert_eq!(t["repeats"], false);
    assert_eq!(t["mask_ns"], 39_000_013);

    // C1 (one core: T1's partition [0, 50 ms) of a 100 ms cycle, CBS servers of 20 and 1 ms
    // per 100 ms) is tested against the 50 ms per cycle the slot leaves, by hand: the only
    // deadline in the hyperperiod, 100 ms, has 20 + 1 ms + the 1 ms mask = 22 ms of demand
    // <= sbf(100 ms) = 50 ms. C2 passes GFB: exit 0 (2 before, when C1 had no test).
    let json = json_of(&["analyze", "scenarios/cluster-rogue.toml", "--json"], 0);
    let c1 = &json["clusters"][0];
    assert_eq!(c1["test"], "edf-slot-supply");
    assert_eq!(c1["verdict"], "schedulable");
    assert_eq!(c1["supply_free_per_cycle_ns"], 50_000_000);
    assert_eq!(c1["masks_counted_ns"], serde_json::json!([1_000_000]));
    let t = &json["terminations"][0];
    assert_eq!(t["terminator"], "watchdog");
    assert_eq!(t["cluster"], "C1");
    assert_eq!(t["mask_ns"], 1_000_000);
    // The gate bounds are still there, beside it.
    assert!(json["servers"].as_array().is_some_and(|s| !s.is_empty()));
}

/// A file without `terminate` masks nothing: every `masked_ns` is 0, no termination is
/// listed, and the text has no mask column.
#[test]
fn analyze_of_a_file_without_terminations_masks_nothing() {
    // Exit 1: R4 is short in phases 6 and 7 (mc_ipc_bounds_of_each_phase).
    let file = "scenarios/mcipc/case-study.toml";
    let json = json_of(&["analyze", file, "--json"], 1);
    assert_eq!(json["terminations"].as_array().map(Vec::len), Some(0));
    let reservations = json["reservations"].as_array().unwrap();
    assert!(reservations.iter().all(|r| r["masked_ns"] == 0));
    let stdout = stdout_of(&["analyze", file], 1);
    assert!(!stdout.contains("masked"), "{stdout}");
}

/// Cores running different policies are analysed apart, each by its policy's own test: the
/// rate-monotonic core's t2 has R = 8 ms > 7 ms (exit 1), the EDF core's U = 34/35 passes.
#[test]
fn a_mixed_scenario_is_analysed_per_policy() {
    let stdout = stdout_of(&["analyze", "scenarios/mixed-policies.toml"], 1);
    assert_contains(&stdout, "== cores 0: fixed-priority ==");
    assert_contains(&stdout, "== cores 1: edf ==");
    let doc = json_of(&["analyze", "scenarios/mixed-policies.toml", "--json"], 1);
    let parts = doc["parts"].as_array().expect("parts");
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0]["policy"], "fixed-priority");
    assert_eq!(parts[0]["cores"], serde_json::json!([0]));
    assert_eq!(parts[1]["policy"], "edf");
    assert!(parts[0]["analysis"].is_object() && parts[1]["analysis"].is_object());
}

/// Fig. 7 with every task in a 5 ms reservation with eta = 500 us: each task's I is the
/// longest eta below it (500 us for t1-t3, none below t4), the response times count it
/// (t1: the plain file's 9.071724 ms + 0.5 ms), and SPR Eq. 1 over the reservations is, by
/// hand, t1: 0.5 + 5 = 5.5 ms; t2: 0.5 + 5 + 5 = 10.5 -> 0.5 + 5 + 2 * 5 = 15.5 ms (<= 20).
/// Without reservations the JSON's new fields are null.
#[test]
fn analyze_counts_the_reservations_of_a_component_system() {
    let file = "scenarios/components/fig7-spr.camkes";
    let stdout = stdout_of(&["analyze", file, "--overheads", "xeon"], 0);
    // The schedulability table, after the task list that also starts lines with t1..t4.
    let table = stdout
        .split("schedulability (")
        .nth(1)
        .expect("a schedulability table");
    let t1 = row(table, "t1");
    assert_eq!(
        &t1[..6],
        ["t1", "40", "10ms", "4.029586ms", "5.042138ms", "500us"]
    );
    assert!(t1.contains(&"9.571724ms"), "{t1:?}");
    assert_eq!(&row(table, "t4")[5], &"0ns");
    let doc = json_of(&["analyze", file, "--overheads", "xeon", "--json"], 0);
    let tasks = &doc["schedulability"]["tasks"];
    assert_eq!(tasks[0]["regions_ns"], 500_000);
    assert_eq!(tasks[0]["reservation"]["eq1_response_ns"], 5_500_000);
    assert_eq!(tasks[1]["reservation"]["eq1_response_ns"], 15_500_000);
    assert_eq!(tasks[1]["reservation"]["budget_ns"], 5_000_000);
    let doc = json_of(
        &["analyze", "scenarios/components/fig7.camkes", "--json"],
        0,
    );
    assert!(doc["schedulability"]["tasks"][0]["reservation"].is_null());
    assert!(doc["schedulability"]["tasks"][0]["regions_ns"].is_null());
}

/// `simulate` of the same file sets each task's inversion beside its bound, `B_i` plus the
/// reservation's `I_i`: t1's B is 5 ms (the analysis above, zero overheads), so 5.5 ms, and
/// t4, the lowest, has neither; the plain file's bound is B alone. The run's worst inversion
/// (500 us for t1, one lower job inside a CPI) stays within it.
#[test]
fn simulate_sets_each_component_task_s_inversion_beside_b_plus_i() {
    let doc = json_of(
        &["simulate", "scenarios/components/fig7-spr.camkes", "--json"],
        0,
    );
    let tasks = doc["tasks"].as_array().unwrap();
    assert_eq!(tasks[0]["blocking_ns"], 5_000_000);
    assert_eq!(tasks[0]["inversion_bound_ns"], 5_500_000);
    assert_eq!(tasks[3]["inversion_bound_ns"], 0);
    for task in tasks {
        let bound = task["inversion_bound_ns"].as_u64().unwrap();
        assert!(
            task["max_inversion_ns"].as_u64().unwrap() <= bound,
            "{task}"
        );
    }
    let plain = json_of(
        &["simulate", "scenarios/components/fig7.camkes", "--json"],
        0,
    );
    assert_eq!(plain["tasks"][0]["inversion_bound_ns"], 5_000_000);
    let stdout = stdout_of(&["simulate", "scenarios/components/fig7-spr.camkes"], 0);
    assert_eq!(row(&stdout, "t1").last(), Some(&"5.5ms"));
}

/// An MC-IPC file's `[cost] context-switch`: the scenario machine adds it to the work of each
/// task or server a core switches to, and the analysis says its bounds leave it out. One
/// task `client` (compute 1 ms, invoke 2 ms, compute 1 ms, sleep; period 100 ms) alone on one
/// core, over three jobs (and the one released at the horizon), each switching from the idle
/// core to the client: 4 switches. Each invocation waits for the switch to the server, 1 us at 1 GHz, then
/// the 2 ms operation. The table names the client, the file's first task.
#[test]
fn an_mc_ipc_context_switch_is_charged_and_left_out_of_the_bounds() {
    let free = "protocol = \"mc-ipc\"\n\n[[cluster]]\nname = \"C1\"\ncores = 1\n\n\
                [[server]]\nname = \"key\"\noperation = \"2ms\"\n\n\
                [[reservation]]\nname = \"R1\"\ncluster = \"C1\"\npriority = 1\n\
                budget = \"20ms\"\nperiod = \"100ms\"\nexecution = \"2ms\"\n\
                invokes = { key = 1 }\n\n\
                [[task]]\nname = \"client\"\nreservation = \"R1\"\nperiod = \"100ms\"\n\
                script = [{ compute = \"1ms\" }, { invoke = \"key\", length = \"2ms\" }, \
                { compute = \"1ms\" }, \"sleep\"]\n";
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        let path = path.to_str().unwrap().to_owned();
        let simulated = output_of(&["simulate", &path, "--json", "--until", "300ms"], 0);
        let analysed = output_of(&["analyze", &path, "--json"], 0);
        (json_out(&simulated)["runs"][0].clone(), json_out(&analysed))
    };
    let (run_free, bounds_free) = run("free.toml", free);
    let (run_costly, bounds_costly) = run(
        "costly.toml",
        &format!("{free}\n[cost]\ncontext-switch = 1000\n"),
    );
    // The scenario machine counts switches to a different task: the operation runs on the
    // client's scheduling context, so entering and leaving the server is none (its cost is
    // still charged, as the delays show); one switch from the idle core per job, the three
    // jobs and the one released at the 300 ms horizon (inclusive).
    assert_eq!(run_free["context_switches"], 4);
    assert_eq!(run_costly["context_switches"], 4);
    assert_eq!(
        run_free["delays_ns"],
        serde_json::json!([2_000_000, 2_000_000, 2_000_000])
    );
    assert_eq!(
        run_costly["delays_ns"],
        serde_json::json!([2_001_000, 2_001_000, 2_001_000])
    );
    assert_eq!(bounds_free["costs_not_in_bounds"], serde_json::json!([]));
    assert_eq!(
        bounds_costly["costs_not_in_bounds"],
        serde_json::json!(["context-switch"])
    );
    // The bounds themselves do not move: Theorem 1 reads L_q as written.
    assert_eq!(bounds_free["reservations"], bounds_costly["reservations"]);
    // The table names the task whose delays it gives: the file's first.
    let table = bulwark(&[
        "simulate",
        dir.path().join("free.toml").to_str().unwrap(),
        "--until",
        "300ms",
    ]);
    assert!(
        text(&table.stdout).starts_with("MC-IPC: client's worst delay at its server, 300ms"),
        "{}",
        text(&table.stdout)
    );
}

/// `simulate` of an MC-IPC file with no task says what is missing, naming the file.
#[test]
fn simulating_an_mc_ipc_file_without_tasks_says_what_to_add() {
    let (_dir, path) = temp_file(
        "bare.toml",
        "[[cluster]]\nname = \"C1\"\ncores = 1\n\n[[server]]\nname = \"key\"\n\
         operation = \"2ms\"\n\n[[reservation]]\nname = \"R1\"\ncluster = \"C1\"\n\
         priority = 1\nbudget = \"20ms\"\nperiod = \"100ms\"\nexecution = \"2ms\"\n",
    );
    let path = path.to_str().unwrap();
    let out = output_of(&["simulate", path], 2);
    let stderr = text(&out.stderr);
    assert_contains(
        &stderr,
        &format!("{path}: MC-IPC system: the system has no [[task]]"),
    );
}

/// The classic tests and the bandwidth admissions analyse execution times as written, while
/// the machine charges the file's kernel-entry and cache costs: each analysis names those
/// costs (a note, and `costs_not_in_bounds` in `--json`) rather than leave them out unsaid.
/// kernel-costs sets five of them; a file without `[cost]` has none to name.
#[test]
fn every_scenario_analysis_names_the_costs_its_bounds_leave_out() {
    let json = |file: &str| json_out(&bulwark(&["analyze", file, "--json"]));
    assert_eq!(
        json("scenarios/kernel-costs.toml")["costs_not_in_bounds"],
        serde_json::json!([
            "timer-interrupt",
            "scheduler",
            "per-work-unit",
            "context-switch",
            "cache-refill"
        ])
    );
    for free in [
        "scenarios/textbook-rm.toml",
        "scenarios/cbs-isolation.toml",
        "scenarios/vbs-processes.toml",
    ] {
        assert_eq!(
            json(free)["costs_not_in_bounds"],
            serde_json::json!([]),
            "{free}"
        );
    }
    let note = |file: &str| {
        text(&bulwark(&["analyze", file]).stdout).contains("note: the bounds leave out the file's")
    };
    assert!(note("scenarios/kernel-costs.toml"));
    assert!(!note("scenarios/textbook-rm.toml"));
    // A constant-bandwidth server with a context-switch cost: named, singular.
    let (_dir, costly) = edited_copy("cbs-costly.toml", "scenarios/cbs-isolation.toml", |cbs| {
        format!("{cbs}\n[cost]\ncontext-switch = 500\n")
    });
    assert_eq!(
        json(&costly)["costs_not_in_bounds"],
        serde_json::json!(["context-switch"])
    );
    assert!(text(&bulwark(&["analyze", &costly]).stdout)
        .contains("the file's `context-switch` cost, which the simulator charges"));
}

/// A fixed-priority core whose tasks call a passive server `log` (2 ms), with `rule` its
/// table's extra line: high (9, offset 0.5 ms, deadline `deadline`) calls it and runs 1 ms
/// every 20 ms; mid (5, offset 1 ms) runs 4 ms every 20 ms; low (1) calls it every 40 ms.
fn server_core(rule: &str, deadline: &str) -> String {
    format!(
        r#"name = "server-calls"
policy = "fixed-priority"
duration = "120ms"

[[server]]
name = "log"
gate = "fifo-ipc"
operation = "2ms"
{rule}

[[task]]
name = "high"
priority = 9
offset = "500us"
deadline = "{deadline}"
script = [{{ loop = "forever", body = [{{ invoke = "log" }}, {{ run = "1ms" }}, {{ sleep-until-next-release = "20ms" }}] }}]

[[task]]
name = "mid"
priority = 5
offset = "1ms"
period = "20ms"
execution = "4ms"

[[task]]
name = "low"
priority = 1
script = [{{ loop = "forever", body = [{{ invoke = "log" }}, {{ sleep-until-next-release = "40ms" }}] }}]
"#
    )
}

/// By hand, with bandwidth inheritance (high's context runs low's request ahead of its own)
/// or the server at priority 9 (a ceiling): each call runs 2 ms on its caller's context and
/// 1 ns for its reply's step, so high is (3 ms + 1 ns, 20), low (2 ms + 1 ns, 40); low's one
/// request may block high and mid (a caller above mid waits behind it, or it runs at the
/// ceiling): B = 2 ms. high: R = 3 + 2 = 5 ms (+ 1 ns); mid: w = 4 + 2 + 3 = 9 ms (+ 1 ns);
/// low: w = 2 + 3 + 4 = 9 ms (+ 2 ns). The machine: low's call runs 0..0.5 ms on
/// its own context; high, released at 0.5 ms, runs the rest of it to 2 ms (inheritance) or
/// waits for it at priority 9 (ceiling), then its own 2..4 ms and its run to 5 ms: 4.5 ms.
/// mid runs 5..9 ms (8 ms), and low's job ends when its context next runs, at 9 ms (R
/// reached). A 4 ms deadline for high fails with a wait in B: not shown schedulable, exit 2.
#[test]
fn fixed_priority_bounds_waits_for_lower_tasks_server_calls() {
    for rule in ["bandwidth-inheritance = true", "priority = 9"] {
        let file = server_core(rule, "10ms");
        let out = analyze_text(&file, true, 0);
        let json = json_out(&out);
        let tasks = &json["cores"][0]["tasks"];
        let by_name = |name: &str| {
            (0..3)
                .map(|at| &tasks[at])
                .find(|task| task["name"] == name)
                .unwrap_or_else(|| panic!("{name}: {tasks}"))
        };
        let ms = |n: u64, ns: u64| Some(n * 1_000_000 + ns);
        for (name, wcet, blocking, response) in [
            ("high", ms(3, 1), ms(2, 0), ms(5, 1)),
            ("mid", ms(4, 0), ms(2, 0), ms(9, 1)),
            ("low", ms(2, 1), ms(0, 0), ms(9, 2)),
        ] {
            let task = by_name(name);
            assert_eq!(task["wcet_ns"].as_u64(), wcet, "{rule}: {name}");
            assert_eq!(task["servers_ns"].as_u64(), blocking, "{rule}: {name}");
            assert_eq!(task["blocking_ns"].as_u64(), blocking, "{rule}: {name}");
            assert_eq!(task["response_ns"].as_u64(), response, "{rule}: {name}");
        }
        assert_eq!(json["gate_waits_not_in_bounds"], serde_json::json!([]));
        let (_dir, path) = temp_file("server-calls.toml", &file);
        let simulated = json_of(&["simulate", path.to_str().unwrap(), "--json"], 0);
        let worst: Vec<u64> = (0..3)
            .map(|at| {
                simulated["tasks"][at]["response"]["max_ns"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(worst, [4_500_000, 8_000_000, 9_000_000], "{rule}");
        let out = analyze_text(&server_core(rule, "4ms"), false, 2);
        let stdout = text(&out.stdout);
        assert_eq!(row(&stdout, "high")[8..], ["not", "shown", "schedulable"]);
        assert_contains(&stdout, "B holds the server operations of lower tasks");
    }
}

/// Without inheritance or a priority, high's wait for low's request runs at low's priority,
/// below mid: no bound, so neither high nor mid (between two callers) is analysed; low is.
#[test]
fn fixed_priority_refuses_a_priority_inversion_at_a_server() {
    let out = analyze_text(&server_core("", "10ms"), false, 2);
    let stdout = text(&out.stdout);
    assert_contains(&stdout, "task `high`: `high` may wait at server `log`");
    assert_contains(&stdout, "task `mid`:");
    assert_eq!(row(&stdout, "low")[8], "schedulable");
    assert_eq!(row(&stdout, "high")[8..], ["not", "analysed"]);
}

/// An EDF core whose scripts call a passive server `log` (2 ms, `rule`): a (deadline
/// `deadline`) calls it and runs 1 ms every 10 ms; b runs 4 ms every 20 ms; c calls it every
/// 40 ms (deadline 40 ms).
fn edf_server_core(rule: &str, deadline: &str) -> String {
    format!(
        r#"name = "edf-server-calls"
policy = "edf"
duration = "200ms"

[[server]]
name = "log"
gate = "fifo-ipc"
operation = "2ms"
{rule}

[[task]]
name = "a"
deadline = "{deadline}"
script = [{{ loop = "forever", body = [{{ invoke = "log" }}, {{ run = "1ms" }}, {{ sleep-until-next-release = "10ms" }}] }}]

[[task]]
name = "b"
period = "20ms"
execution = "4ms"

[[task]]
name = "c"
deadline = "40ms"
script = [{{ loop = "forever", body = [{{ invoke = "log" }}, {{ sleep-until-next-release = "40ms" }}] }}]
"#
    )
}

/// By hand, EDF with bandwidth inheritance: a is (3 ms + 1 ns, 10), c (2 ms + 1 ns, 40); a
/// window may lose one request of each task due after the first deadline that calls `log`
/// (c's 2 ms; b calls nothing): M = 2 ms. With a's deadline 6 ms: demand 3 ms + 1 ns + 2 <= 6
/// at 6, 6 ms + 2 ns + 4 + 2 <= 20 at 20, 12 ms + 4 ns + 8 + 2 ms + 1 ns + 2 <= 40 at 40:
/// met, exit 0, and the machine misses nothing. With 5 ms, 5 ms + 1 ns > 5 at 5, a failure
/// with a wait in M: not shown schedulable, exit 2. Without inheritance, a caller's wait for
/// a later deadline's request has no bound: no verdict.
#[test]
fn edf_counts_later_deadlines_server_calls_in_the_demand() {
    let file = edf_server_core("bandwidth-inheritance = true", "6ms");
    let out = analyze_text(&file, true, 0);
    let core = &json_out(&out)["cores"][0];
    assert_eq!(core["servers_ns"], 2_000_000, "{core}");
    assert_eq!(core["tasks"][0]["wcet_ns"], 3_000_001, "{core}");
    assert_eq!(core["schedulable"], true, "{core}");
    let (_dir, path) = temp_file("edf-server-calls.toml", &file);
    let simulated = json_of(&["simulate", path.to_str().unwrap(), "--json"], 0);
    let misses: Vec<u64> = (0..3)
        .map(|at| simulated["tasks"][at]["misses"].as_u64().unwrap())
        .collect();
    assert_eq!(misses, [0, 0, 0]);
    let out = analyze_text(
        &edf_server_core("bandwidth-inheritance = true", "5ms"),
        true,
        2,
    );
    let core = &json_out(&out)["cores"][0];
    assert_eq!(core["edf"]["first_miss_ns"], 5_000_000, "{core}");
    let out = analyze_text(&edf_server_core("", "6ms"), false, 2);
    assert_contains(&text(&out.stdout), "server `log` has callers on this core");
}

/// A deferrable reservation whose task is released off the multiples of its period, by hand.
/// hi (b = 1, p = 6 ms, released at 4 + 6k ms) is blocked by the non-preemptive regions of
/// lo1 (2 to 7 ms) and lo2 (11 to 16 ms): I = 5 ms, R = 6 ms <= 6 ms, admitted. Its job of
/// 4 ms waits to 7 and spends the budget of [6, 12); its job of 10 ms then waits for the reset
/// at 12, is blocked by lo2 to 16 and completes at 17: 7 ms > R, a miss at 16, and within
/// R + p = 12 ms, the bound the table gives. lo1 and lo2 (offsets 2 and 11 ms, p = 60 ms) are
/// off their grids too: R + p = 13 + 60 and 19 + 60 ms. With offsets on the grid the jobs get
/// R itself.
#[test]
fn a_deferrable_reservation_released_off_its_grid_bounds_its_jobs_by_r_plus_p() {
    let file = |hi_offset: &str, lo1_offset: &str, lo2_offset: &str| {
        format!(
            r#"name = "off-grid"
policy = "spr-deferrable"
duration = "600ms"

[[task]]
name = "hi"
priority = 3
period = "6ms"
execution = "1ms"
offset = "{hi_offset}"
reservation = {{ budget = "1ms", period = "6ms" }}

[[task]]
name = "lo1"
priority = 2
period = "60ms"
execution = "5ms"
offset = "{lo1_offset}"
reservation = {{ budget = "5ms", period = "60ms", non-preemptive = "5ms" }}

[[task]]
name = "lo2"
priority = 1
period = "60ms"
execution = "5ms"
offset = "{lo2_offset}"
reservation = {{ budget = "5ms", period = "60ms", non-preemptive = "5ms" }}
"#
        )
    };
    let (_dir, path) = temp_file("off-grid.toml", file("4ms", "2ms", "11ms"));
    let path = path.to_str().unwrap();
    // Admission is unchanged: exit 0.
    let stdout = stdout_of(&["analyze", path], 0);
    for (name, r, job) in [
        ("hi", "6ms", "12ms"),
        ("lo1", "13ms", "73ms"),
        ("lo2", "19ms", "79ms"),
    ] {
        let cells = row(&stdout, name);
        assert_eq!(&cells[6..9], &[r, "admitted", job], "{name}: {stdout}");
    }
    assert_contains(
        &stdout,
        "  hi: its releases are off the multiples of p = 6ms at which its deferrable budget is \
         reset, so a job may wait up to p for the next reset: R + p = 12ms > its deadline 6ms: \
         a job may miss it though the reservation is admitted\n",
    );
    let json = json_of(&["analyze", path, "--json"], 0);
    let hi = &json["cores"][0]["reservations"][0];
    assert_eq!(hi["name"], "hi");
    assert_eq!(hi["response_ns"], 6_000_000);
    assert_eq!(hi["job_response_ns"], 12_000_000);
    assert_eq!(hi["job_bound"], "r-plus-p");
    // The machine: hi's job of 10 ms completes at 17 ms, beyond R and within R + p.
    let run = json_of(&["simulate", path, "--json", "--until", "60ms"], 0);
    let late: Vec<_> = run["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|job| job["task"] == "hi" && job["missed"] == true)
        .map(|job| (job["release_ns"].clone(), job["completion_ns"].clone()))
        .collect();
    assert_eq!(late, [(10_000_000.into(), 17_000_000.into())]);

    // On the grid (offsets 0, 0, 0): every job within R.
    let (_dir, path) = temp_file("on-grid.toml", file("0ms", "0ms", "0ms"));
    let json = json_of(&["analyze", path.to_str().unwrap(), "--json"], 0);
    for reservation in json["cores"][0]["reservations"].as_array().unwrap() {
        assert_eq!(reservation["job_bound"], "r", "{reservation}");
        assert_eq!(reservation["job_response_ns"], reservation["response_ns"]);
    }
}

/// A core of one reservation is summarised in the singular: shared-server's SPR core holds
/// the rogue alone (admitted: 1 ms per 20 ms, R = 1 ms).
#[test]
fn one_reservation_is_summarised_in_the_singular() {
    let stdout = stdout_of(&["analyze", "scenarios/shared-server.toml"], 0);
    assert_contains(&stdout, "summary: the one reservation admitted\n");
}
