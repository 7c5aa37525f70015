//! Streaming outputs: the Chrome trace and the per-job JSON Lines written while the run goes
//! hold the same records as the in-memory exporters, keep nothing in memory, and the CLI
//! warns before huge outputs.

mod common;

use common::{assert_contains, bulwark, root};

use bulwark_core::Duration;
use bulwark_lab::chrome::{chrome_trace_json, ChromeStream};
use bulwark_lab::metrics_json::{job_lines, JobLines};
use bulwark_sim::{BudgetSample, JobRecord, Mark, Options, Recorder, Slice};
use bulwark_spec::Scenario;
use serde_json::Value;

fn load(path: &str) -> Scenario {
    bulwark_spec::load(&root().join(path)).expect("a valid scenario")
}

/// Both streams into memory buffers, and the most slices the trace held back at once.
struct Both {
    trace: ChromeStream<Vec<u8>>,
    jobs: JobLines<Vec<u8>>,
    most_held: usize,
}

impl Recorder for Both {
    fn wants_trace(&self) -> bool {
        true
    }
    fn wants_jobs(&self) -> bool {
        true
    }
    fn job(&mut self, record: &JobRecord) {
        self.jobs.job(record);
    }
    fn slice(&mut self, slice: &Slice) {
        self.trace.slice(slice);
        self.most_held = self.most_held.max(self.trace.held_slices());
    }
    fn mark(&mut self, mark: &Mark) {
        self.trace.mark(mark);
    }
    fn budget(&mut self, sample: &BudgetSample) {
        self.trace.budget(sample);
    }
    fn finish(&mut self) {
        self.trace.finish();
    }
}

/// Runs `scenario` keeping everything in memory and streaming at once; returns the outcome,
/// the streamed trace and JSON Lines, and the most slices held back.
fn run_both(
    scenario: &Scenario,
    options: &Options,
) -> (bulwark_sim::Outcome, String, String, usize) {
    let mut both = Both {
        trace: ChromeStream::new(Vec::new(), scenario, options),
        jobs: JobLines::new(Vec::new(), scenario),
        most_held: 0,
    };
    let outcome = bulwark_sim::run_recorded(scenario, options, &mut both, &mut |_| {})
        .expect("the scenario runs");
    let most_held = both.most_held;
    let trace = String::from_utf8(both.trace.into_inner().expect("memory")).expect("UTF-8");
    let jobs = String::from_utf8(both.jobs.into_inner().expect("memory")).expect("UTF-8");
    (outcome, trace, jobs, most_held)
}

/// Every event of a trace document as its JSON text, sorted (the order differs by design).
fn sorted_events(document: &Value, keep: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut events: Vec<String> = document["traceEvents"]
        .as_array()
        .expect("an event array")
        .iter()
        .filter(|event| keep(event))
        .map(Value::to_string)
        .collect();
    events.sort();
    events
}

#[test]
fn streamed_outputs_hold_what_the_in_memory_exporters_write() {
    for path in [
        "scenarios/kernel-costs.toml",
        "scenarios/textbook-edf.toml",
        "scenarios/cbs-isolation.toml",
        "scenarios/table-i.toml",
        "scenarios/faas-reclaim.toml",
    ] {
        let scenario = load(path);
        let options = Options {
            record_trace: true,
            record_jobs: true,
            ..Options::default()
        };
        let (outcome, trace, jobs, most_held) = run_both(&scenario, &options);
        // A recorder watching does not change the run.
        assert_eq!(
            outcome,
            bulwark_sim::run(&scenario, &options).expect("runs"),
            "{path}"
        );
        // The JSON Lines are byte for byte the kept jobs, and each line parses.
        assert_eq!(Some(jobs.clone()), job_lines(&outcome), "{path}");
        assert_eq!(jobs.lines().count(), outcome.jobs.as_ref().unwrap().len());
        for line in jobs.lines() {
            let job: Value = serde_json::from_str(line).expect("a JSON object per line");
            assert!(job["release_ns"].is_u64(), "{path}: {line}");
        }
        // The streamed trace is one valid document with the in-memory export's events (in
        // another order) and its identity; the counters are its own.
        let streamed: Value = serde_json::from_str(&trace).expect("valid JSON");
        let text = chrome_trace_json(&outcome).expect("a trace was kept");
        let kept: Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(
            sorted_events(&streamed, |event| event["ph"] != "C"),
            sorted_events(&kept, |_| true),
            "{path}"
        );
        assert_eq!(streamed["otherData"], kept["otherData"], "{path}");
        assert_eq!(streamed["displayTimeUnit"], "ns");
        // The track names come first, in the same order.
        let metadata = |document: &Value| -> Vec<Value> {
            document["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .take_while(|event| event["ph"] == "M")
                .cloned()
                .collect()
        };
        assert_eq!(metadata(&streamed), metadata(&kept), "{path}");
        // At most one slice per core is ever held back.
        assert!(most_held <= usize::from(scenario.cores), "{path}");
        // Same file and seed, same bytes.
        let (_, again, jobs_again, _) = run_both(&scenario, &options);
        assert_eq!(again, trace, "{path}");
        assert_eq!(jobs_again, jobs, "{path}");
    }
}

#[test]
fn streaming_keeps_no_job_or_trace_in_memory() {
    // The 1,000-task scenario on 8 cores for 100 ms: 1,000 x 2 + 8 jobs (releases at 0 and
    // 50 ms for every task, and at 100 ms for the 8 with offset 0; the others' offsets put
    // their third release past the horizon).
    let scenario = load("crates/bulwark/tests/streaming/trace-1000.toml");
    let options = Options {
        until: Some(Duration::from_millis(100)),
        ..Options::default()
    };
    let (outcome, trace, jobs, most_held) = run_both(&scenario, &options);
    assert_eq!(outcome.jobs, None);
    assert_eq!(outcome.trace, None);
    let released: u64 = outcome.tasks.iter().map(|task| task.jobs).sum();
    assert_eq!(released, 2_008);
    assert_eq!(jobs.lines().count(), 2_008);
    assert!((1..=8).contains(&most_held), "held {most_held}");
    let document: Value = serde_json::from_str(&trace).expect("valid JSON");
    // Every job has its release mark.
    let releases = document["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["name"] == "release")
        .count();
    assert_eq!(releases, 2_008);
    // The estimate counts the same jobs: floor(horizon - offset) / period + 1 per task.
    assert_eq!(bulwark_sim::estimate(&scenario, &options).jobs, 2_008);
}

#[test]
fn budget_counters_follow_an_spr_reservation_worked_by_hand() {
    // One SPR reservation (1 ms every 10 ms) whose task runs 300 us every 10 ms, no kernel
    // costs. The budget is full (1 ms) at each release at 0, 10 and 20 ms; at each completion
    // 300 us later 700 us is left; the sporadic replenishment of those 300 us arrives at the
    // next release (activation + period), so the counter alternates.
    let scenario = bulwark_spec::parse(
        r#"
name = "one-reservation"
policy = "spr"
duration = "25ms"
[[task]]
name = "r"
priority = 1
period = "10ms"
execution = "300us"
reservation = { budget = "1ms", period = "10ms" }
"#,
        "one-reservation.toml",
    )
    .expect("valid");
    let options = Options::default();
    let (_, trace, _, _) = run_both(&scenario, &options);
    let document: Value = serde_json::from_str(&trace).expect("valid JSON");
    let counters: Vec<(String, u64)> = document["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["ph"] == "C")
        .map(|event| {
            assert_eq!(event["name"], "budget r");
            assert_eq!(event["tid"], 0);
            (
                event["ts"].to_string(),
                event["args"]["remaining_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [
        ("0.0", 1_000_000),
        ("300.0", 700_000),
        ("10000.0", 1_000_000),
        ("10300.0", 700_000),
        ("20000.0", 1_000_000),
        ("20300.0", 700_000),
    ]
    .iter()
    .map(|(ts, ns)| (ts.to_string(), *ns))
    .collect();
    assert_eq!(counters, expected);
    // Fixed priority has no budgets: no counters.
    let (_, plain, _, _) = run_both(&load("scenarios/kernel-costs.toml"), &options);
    assert!(!plain.contains("\"ph\":\"C\""));
}

#[test]
fn simulate_streams_jobs_and_trace_and_drops_the_jobs_array() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("trace.json");
    let jobs = dir.path().join("jobs.jsonl");
    let out = bulwark(&[
        "simulate",
        "scenarios/textbook-edf.toml",
        "--json",
        "--trace",
        trace.to_str().unwrap(),
        "--jobs",
        jobs.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let document: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(document.get("jobs").is_none());
    let released: u64 = document["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| task["jobs"].as_u64().unwrap())
        .sum();
    let lines = std::fs::read_to_string(&jobs).expect("the jobs file");
    assert_eq!(lines.lines().count() as u64, released);
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).expect("a JSON trace");
    assert_eq!(trace["otherData"]["scenario"], "textbook-edf");

    // --json alone keeps its jobs array, as before.
    let out = bulwark(&["simulate", "scenarios/textbook-edf.toml", "--json"]);
    let document: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        document["jobs"].as_array().map(Vec::len),
        Some(released as usize)
    );
}

#[test]
fn a_huge_trace_is_warned_about_before_the_run_and_denied_on_request() {
    // trace-1000 over 10 s: 200,008 jobs (see the file) x 9 events x 100 bytes = 180 MB,
    // over the 100 MB line. `duration` is on line 10, column 1.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("trace.json");
    let out = bulwark(&[
        "simulate",
        "crates/bulwark/tests/streaming/trace-1000.toml",
        "--trace",
        trace.to_str().unwrap(),
        "--deny-warnings",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(&stderr, "trace-1000.toml:10:1: the trace will be at least about 180 MB (1,800,072 events for 200,008 jobs in 10s)"
        );
    assert_contains(&stderr, "[a warning, denied]");
    // Denied before the run: nothing written.
    assert!(!trace.exists());
    // A short run is not warned about.
    let out = bulwark(&[
        "simulate",
        "crates/bulwark/tests/streaming/trace-1000.toml",
        "--until",
        "100ms",
        "--trace",
        trace.to_str().unwrap(),
        "--deny-warnings",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Peak resident memory of this process, from Linux's /proc (kB).
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A recorder streaming to nowhere, counting what went through.
#[derive(Default)]
struct Count {
    jobs: u64,
    events: u64,
}

impl Recorder for Count {
    fn wants_trace(&self) -> bool {
        true
    }
    fn wants_jobs(&self) -> bool {
        true
    }
    fn job(&mut self, _: &JobRecord) {
        self.jobs += 1;
    }
    fn slice(&mut self, _: &Slice) {
        self.events += 1;
    }
    fn mark(&mut self, _: &Mark) {
        self.events += 1;
    }
}

#[test]
#[ignore = "4 million jobs and a 10 s, 1,000-task trace: run with --release -- --ignored"]
fn memory_stays_flat_at_scale() {
    // 4,000,100 jobs (see jobs-4m.toml) streamed as JSON Lines to nowhere, then the full
    // 10 s of trace-1000 streamed as a Chrome trace: the peak stays under 50 MB, where
    // keeping them took 1.7 GB and 590 MB.
    let jobs = load("crates/bulwark/tests/streaming/jobs-4m.toml");
    let mut lines = JobLines::new(std::io::sink(), &jobs);
    let outcome = bulwark_sim::run_recorded(&jobs, &Options::default(), &mut lines, &mut |_| {})
        .expect("runs");
    assert_eq!(lines.written(), 4_000_100);
    assert_eq!(outcome.jobs, None);

    let long = load("crates/bulwark/tests/streaming/trace-1000.toml");
    let mut trace = ChromeStream::new(std::io::sink(), &long, &Options::default());
    let outcome = bulwark_sim::run_recorded(&long, &Options::default(), &mut trace, &mut |_| {})
        .expect("runs");
    assert_eq!(outcome.trace, None);
    let mut count = Count::default();
    bulwark_sim::run_recorded(&long, &Options::default(), &mut count, &mut |_| {}).expect("runs");
    assert_eq!(count.jobs, 200_008);
    assert!(count.events > 1_000_000);
    if let Some(peak) = peak_rss_kb() {
        assert!(peak < 50_000, "peak RSS {peak} kB");
    }
}

#[test]
fn kept_jobs_beyond_the_machine_memory_are_refused_before_the_run() {
    // textbook-edf's two tasks (5 ms and 7 ms) over 10^7 s: 3.4 * 10^9 jobs, 1.45 TB at 424
    // bytes each, more than any machine this runs on has available.
    let out = bulwark(&[
        "simulate",
        "scenarios/textbook-edf.toml",
        "--json",
        "--until",
        "10000000s",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // 2 * 10^9 + 1 and floor(10^10 / 7) + 1 = 1,428,571,429 jobs; 1,453,714,286,320 bytes.
    assert_contains(
        &stderr,
        "error: scenarios/textbook-edf.toml: the run would keep about 1,453,714 MB in memory \
         for --json (3,428,571,430 jobs), more than the ",
    );
    assert_contains(
        &stderr,
        " this machine has available; not run (--jobs FILE streams the jobs as JSON Lines, or \
         a shorter --until keeps fewer)",
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn a_component_system_is_warned_about_and_refused_as_a_scenario_is() {
    // fig7's tasks (periods 10, 20, 40 and 80 ms) over 10^7 s release 10^9 + 5 * 10^8 +
    // 2.5 * 10^8 + 1.25 * 10^8 + 4 jobs, and its 11 server threads count one each:
    // 1,875,000,015 jobs, at 1,644 + 1,434 bytes each for the kept jobs and trace.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("trace.json");
    let out = bulwark(&[
        "simulate",
        "scenarios/components/fig7.camkes",
        "--json",
        "--trace",
        trace.to_str().unwrap(),
        "--until",
        "10000000s",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(
        &stderr,
        "warning: scenarios/components/fig7.camkes: about 1,875,000,015 jobs in 10000000s \
         (--until): the run will take long",
    );
    assert_contains(
        &stderr,
        "(it is kept in memory until the run ends; a shorter --until keeps it small)",
    );
    assert_contains(
        &stderr,
        "error: scenarios/components/fig7.camkes: the run would keep about 5,771,250 MB in \
         memory for --json and --trace (1,875,000,015 jobs)",
    );
    assert!(out.stdout.is_empty(), "nothing ran");
    assert!(!trace.exists(), "no trace written");
    // Denied warnings stop it too; the default horizon (800 ms) is not warned about.
    let out = bulwark(&[
        "simulate",
        "scenarios/components/fig7.camkes",
        "--json",
        "--until",
        "100000s",
        "--deny-warnings",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(&stderr, "[a warning, denied]");
    let out = bulwark(&[
        "simulate",
        "scenarios/components/fig7.camkes",
        "--json",
        "--deny-warnings",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The stderr of a command refused before anything ran: exit 2, nothing on stdout.
fn refused(args: &[&str]) -> String {
    let out = bulwark(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing ran");
    stderr
}

#[test]
fn an_mc_ipc_file_is_refused_before_its_phases_would_outgrow_memory() {
    // one-core.toml's tasks over 10^7 s per phase: T1 (100 ms) 10^8 + 1 jobs, T2 and T5
    // (100 ms, offsets 40 and 7 ms) 10^8 each, T6 (150 ms) 66,666,667, T7 (250 ms) 4 * 10^7,
    // T8 (500 ms) 2 * 10^7, T9 (1 s) 10^7: 436,666,668 a phase. Phase 2 floods T5 and phase 4
    // T2 (a flood counts one job); phase 3 adds 16 tasks of 3,333,334 jobs (3 s from 90 ms).
    // The largest phase keeps 490,000,012 jobs' records at 400 bytes (196,000 MB); the trace
    // of all 1,600,000,018 jobs adds 3,500 bytes each (5,796,000 MB in all).
    let dir = tempfile::tempdir().expect("a temporary directory");
    let trace = dir.path().join("trace.json");
    let file = "scenarios/mcipc/one-core.toml";
    let long = ["simulate", file, "--until", "10000000s"];
    let stderr = refused(&[&long[..], &["--trace", trace.to_str().unwrap()]].concat());
    assert_contains(
        &stderr,
        "warning: scenarios/mcipc/one-core.toml: about 1,600,000,018 jobs in 4 phases of \
         10000000s (--until): the run will take long",
    );
    assert_contains(
        &stderr,
        "error: scenarios/mcipc/one-core.toml: the run would keep about 5,796,000 MB in memory \
         for a phase's records (490,000,012 jobs) and --trace (1,600,000,018 jobs), more than \
         the ",
    );
    assert!(!trace.exists(), "no trace written");
    // Undrawn, each phase's records are still kept until its summary.
    let stderr = refused(&long);
    assert_contains(
        &stderr,
        "the run would keep about 196,000 MB in memory for a phase's records (490,000,012 \
         jobs), more than the ",
    );
    // mcipc-case-study refuses the same records: phase 3 alone is one run.
    let stderr = refused(&[
        "mcipc-case-study",
        "--file",
        file,
        "--phase",
        "3",
        "--phase-length",
        "10000000s",
    ]);
    assert_contains(
        &stderr,
        "error: scenarios/mcipc/one-core.toml: the run would keep about 196,000 MB in memory \
         for the run's records (490,000,012 jobs), more than the ",
    );
    assert_contains(&stderr, "not run (a shorter --phase-length keeps fewer)");
    // A file naming no protocol runs its phases under each of the three: 3 x 1,600,000,018.
    let unnamed = dir.path().join("unnamed.toml");
    let text = std::fs::read_to_string(root().join(file)).expect("reads");
    let without: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("protocol"))
        .collect();
    std::fs::write(&unnamed, without.join("\n")).expect("writes");
    let stderr = refused(&[
        "simulate",
        unnamed.to_str().unwrap(),
        "--until",
        "10000000s",
    ]);
    assert_contains(
        &stderr,
        "about 4,800,000,054 jobs in 4 phases of 10000000s (--until) under each of 3 protocols",
    );
    // Denied warnings stop a long run; the default 10 s phases are not warned about.
    let stderr = refused(&[&long[..], &["--deny-warnings"]].concat());
    assert_contains(&stderr, "[a warning, denied]");
    let out = bulwark(&["simulate", file, "--deny-warnings"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One component task released every 100 ns, each job 1 ms of work (`body`).
fn flood(body: &str) -> String {
    format!(
        "[[component]]\nname = \"client\"\nkind = \"active\"\n\n[[component.task]]\n\
         name = \"flood\"\npriority = 10\nperiod = \"100ns\"\nbody = [{{ execute = \"{body}\" }}]\n"
    )
}

/// Jobs of 1 ms released every 100 ns: the kernel is entered at each completion, k ms, when
/// 10,000 k + 1 jobs have been released and k - 1 or k completed. At 838 ms that leaves
/// fewer than 2^23 = 8,388,608 waiting, at 839 ms more: the run stops there, naming the task.
/// Until 838 ms it runs: 8,380,001 jobs, all but the last (due after the end) missed, the
/// worst response job 837's, released at 83.7 us and done at 838 ms.
#[test]
fn an_overloaded_component_task_stops_the_run_when_its_backlog_is_full() {
    let (_dir, file) = common::temp_file("flood.toml", flood("1ms"));
    let file = file.to_str().unwrap();
    let out = bulwark(&["simulate", file, "--until", "1s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_contains(
        &stderr,
        &format!("error: {file}: task `flood` had 8388608 jobs pending at @839ms"),
    );
    assert!(out.stdout.is_empty(), "no summary of a run stopped early");
    let out = bulwark(&["simulate", file, "--until", "838ms"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_contains(&stdout, "flood    10  8380001  8380000    837.9163ms");
}

/// Jobs of 1 s released every 100 ns, run until 999 ms: no job completes, so no kernel entry
/// releases any after the first, and the end of the run finds 9,990,001 due (0 to 999 ms
/// inclusive), more than a task may keep waiting. They are counted and closed as they are
/// released, so the run ends: all missed but the last, whose deadline is after the end.
#[test]
fn jobs_due_at_the_end_of_a_run_are_counted_without_being_kept() {
    let (_dir, file) = common::temp_file("flood.toml", flood("1s"));
    let out = bulwark(&["simulate", file.to_str().unwrap(), "--until", "999ms"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_contains(&stdout, "flood    10  9990001  9990000");
}

/// A task outside any reclamation group asks for 2^24 + 1 semaphores at 0: more kernel
/// objects than a run holds (2^24, about 1.5 GB), so the run stops before creating any,
/// naming the file, the task and the counts; with 2^24 - 1 fewer it runs.
#[test]
fn an_allocation_past_the_kernel_objects_a_run_holds_stops_the_run() {
    let source = |count: u64| {
        format!(
            "name = \"allocator\"\npolicy = \"fixed-priority\"\nduration = \"1ms\"\n\n\
             [[task]]\nname = \"hoarder\"\npriority = 1\n\
             script = [{{ allocate = {count} }}, {{ run = \"100us\" }}]\n"
        )
    };
    let (_dir, file) = common::temp_file("hoarder.toml", source((1 << 24) + 1));
    let file = file.to_str().unwrap();
    let stderr = refused(&["simulate", file]);
    assert_contains(
        &stderr,
        &format!(
            "error: {file}: task `hoarder` would take the kernel objects alive past 16777216 \
             at @0ns (0 alive, 16777217 more asked for)"
        ),
    );
    let (_dir, file) = common::temp_file("hoarder.toml", source(2));
    let out = bulwark(&["simulate", file.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
