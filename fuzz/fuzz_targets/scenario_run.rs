//! Fuzz target: any bytes that parse as a scenario, its component systems composed, run on
//! the one machine for a short horizon without a panic (a run may stop with an error: a
//! livelock, a script spinning, a backlog, ...), and run the same again (determinism). The
//! outcome keeps its own arithmetic: per task no more completions or misses than jobs, and
//! per core no more busy time than the run. Its clusters are analysed too, without a panic,
//! and a cluster shown schedulable has no reservation whose bound is not within its period.
#![no_main]

use bulwark_analysis::global_fp::Response;
use bulwark_core::Duration;
use bulwark_fuzz::text_or_checked_error;
use bulwark_sim::Options;
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.toml";
/// The horizon: short, so that a run of the smallest periods and steps stays within the
/// fuzzer's per-input time limit.
const HORIZON: Duration = Duration::from_micros(20);
/// Scenarios estimated to release more jobs than this over the horizon are left out.
const MOST_JOBS: u64 = 20_000;
/// Scenarios of more tasks than this are left out (an event's cost grows with them).
const MOST_TASKS: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_or_checked_error(data, FILE) else {
        return;
    };
    let Ok((scenario, _)) = bulwark_spec::parse_checked(&text, FILE) else {
        return;
    };
    let Ok(scenario) = bulwark_lab::component_system::compose(scenario) else {
        return;
    };
    if scenario.tasks.len() > MOST_TASKS {
        return;
    }
    for cluster in bulwark_analysis::cluster::analyse(&scenario) {
        if cluster.verdict.schedulable() == Some(true) {
            for member in &cluster.members {
                let bounded = |r: &Response| matches!(r, Response::Bounded(_));
                assert!(
                    member.response.as_ref().is_none_or(bounded),
                    "{}: {member:?} in a cluster shown schedulable",
                    cluster.name
                );
            }
        }
    }
    let options = Options {
        until: Some(HORIZON.min(scenario.duration)),
        seed: None,
        record_trace: true,
        record_jobs: true,
    };
    if bulwark_sim::estimate(&scenario, &options).jobs > MOST_JOBS {
        return;
    }
    let first = bulwark_sim::run(&scenario, &options);
    let again = bulwark_sim::run(&scenario, &options);
    assert_eq!(first, again, "the same file runs the same twice");
    let Ok(outcome) = first else {
        return;
    };
    let run = outcome.until.as_nanos();
    for task in &outcome.tasks {
        assert!(task.completed <= task.jobs, "{}: {task:?}", task.name);
        assert!(task.misses <= task.jobs, "{}: {task:?}", task.name);
    }
    for (core, metrics) in outcome.cores.iter().enumerate() {
        assert!(metrics.busy_ns <= run, "core {core}: {metrics:?}");
    }
});
