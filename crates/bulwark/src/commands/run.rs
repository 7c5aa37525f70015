//! `bulwark run`: execute a scenario for real on this machine's managed core, optionally
//! beside the simulator.

use std::process::ExitCode;

use bulwark_core::{Duration, TaskId};
use bulwark_host::{HostConfig, HostOutcome, HostStats};
use bulwark_sim::{JobRecord, Outcome, Stats};
use bulwark_spec::SystemFile;

use crate::cli::RunArgs;
use crate::output::{out, outln};
use crate::{diagnostics, table};

pub fn run(args: &RunArgs) -> Result<ExitCode, String> {
    let scenario = match super::load_system(&args.file) {
        None => return Ok(crate::exit::bad_input()),
        Some(SystemFile::Scenario(scenario, warnings)) => {
            diagnostics::report_warnings(&warnings, false);
            scenario
        }
        Some(SystemFile::Components(located)) => {
            return super::components::run_on_host(&located, args);
        }
        Some(SystemFile::McIpc(system)) => {
            return super::mcipc_run::run_on_host(&system, args);
        }
        Some(other) => {
            return Ok(super::wrong_kind(
                &args.file,
                other.kind(),
                "run",
                "a scenario, a component system or an MC-IPC system",
            ))
        }
    };
    let config = HostConfig {
        core: args.core,
        watchdog_core: args.watchdog_core,
        until: args.until,
        seed: args.seed,
        record_trace: args.trace.is_some(),
        record_jobs: args.json || args.compare,
        ..HostConfig::default()
    };
    // Before any thread runs: a bad --trace path would lose the whole run at its end.
    super::exports::check_writable(args.trace.as_deref())?;
    let host = bulwark_host::run(&scenario, &config)
        .map_err(|e| format!("{}: {e}", args.file.display()))?;
    let simulated = if args.compare {
        let options = bulwark_sim::Options {
            until: args.until,
            seed: args.seed,
            record_trace: false,
            record_jobs: true,
        };
        Some(
            bulwark_sim::run(&scenario, &options)
                .map_err(|e| format!("{}: {e}", args.file.display()))?,
        )
    } else {
        None
    };
    if let Some(path) = &args.trace {
        let json = bulwark_lab::chrome::chrome_trace_json(&host.outcome).unwrap_or_default();
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.json {
        outln!("{}", json(&scenario, &host, simulated.as_ref()));
    } else {
        out!("{}", summary(&host));
        if let Some(sim) = &simulated {
            out!("\n{}", compare(&host.outcome, sim));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A sample's summary in `--json`: count, least, mean and largest (null when empty).
pub(super) fn stats(sample: &Stats) -> serde_json::Value {
    serde_json::json!({
        "count": sample.count,
        "min_ns": (sample.count > 0).then_some(sample.min_ns),
        "mean_ns": sample.mean_ns(),
        "max_ns": (sample.count > 0).then_some(sample.max_ns),
    })
}

/// `simulate --json`'s document with a `host` object, and the simulated run's document as
/// `simulated` when compared.
fn json(
    scenario: &bulwark_spec::Scenario,
    host: &HostOutcome,
    simulated: Option<&Outcome>,
) -> String {
    let document = |o: &Outcome| {
        let document = bulwark_lab::metrics_json::scenario_metrics_document(scenario, o);
        serde_json::to_value(document).unwrap_or(serde_json::Value::Null)
    };
    let mut root = document(&host.outcome);
    let h = &host.host;
    if let Some(map) = root.as_object_mut() {
        map.insert(
            "host".to_owned(),
            serde_json::json!({
                "core": h.core,
                "entries": h.entries,
                "timer_lateness": stats(&h.timer_lateness),
                "late_timers": h.late_timers,
                "preempt_signals": h.preempt_signals,
                "rt_runtime_us": h.rt_runtime_us,
                "rt_period_us": h.rt_period_us,
                "nominal_load_ppm": h.nominal_load_ppm,
                "throttling_suspected": h.throttling_suspected,
                "matmul_ns": h.matmul_ns,
            }),
        );
        if let Some(sim) = simulated {
            map.insert("simulated".to_owned(), document(sim));
        }
    }
    serde_json::to_string_pretty(&root).unwrap_or_default()
}

fn time(ns: u64) -> String {
    Duration::from_nanos(ns).to_string()
}

fn summary(host: &HostOutcome) -> String {
    let o = &host.outcome;
    let stats = crate::table::min_mean_max;
    let rows: Vec<Vec<String>> = o
        .tasks
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.jobs.to_string(),
                t.misses.to_string(),
                stats(&t.response),
                stats(&t.wakeup_latency),
                time(t.executed_ns),
                time(t.kernel_ns),
                t.preemptions.to_string(),
                t.work_units.to_string(),
            ]
        })
        .collect();
    let mut out = format!(
        "{} ({}, seed {}): {} on core {} of this machine, {} kernel entries\n",
        o.scenario,
        o.policy,
        o.seed,
        Duration::from_nanos(o.until.as_nanos()),
        host.host.core,
        host.host.entries
    );
    out.push_str(&table::render(
        &[
            "task",
            "jobs",
            "misses",
            "response min / mean / max",
            "wakeup latency min / mean / max",
            "executed",
            "kernel",
            "preemptions",
            "units",
        ],
        &rows,
    ));
    out.push_str(&reclamation_note(host));
    out.push_str(&host_note(&host.host));
    out
}

/// The kernel objects the tasks' `allocate` steps created and the terminations the
/// dispatcher ran: one line per task that allocated or was killed, one per termination.
fn reclamation_note(host: &HostOutcome) -> String {
    let o = &host.outcome;
    let name = |task: TaskId| o.tasks.get(task.index()).map_or("?", |t| t.name.as_str());
    let mut out = String::new();
    for t in &o.tasks {
        if t.objects_allocated + t.allocations_refused + t.killed_jobs > 0 {
            out.push_str(&format!(
                "{}: {} objects created, {} refused by its group's quota, {} job(s) killed\n",
                t.name, t.objects_allocated, t.allocations_refused, t.killed_jobs
            ));
        }
    }
    for r in &host.host.reclamations {
        out.push_str(&format!(
            "at {}: {} terminated {}: reclamation took {} (measured, core held), {} units, {} \
             process(es) killed\n",
            time(r.start.as_nanos()),
            name(r.by),
            name(r.target),
            time(r.duration().as_nanos()),
            r.units,
            r.killed
        ));
    }
    out
}

fn host_note(h: &HostStats) -> String {
    let mut out = format!(
        "timer lateness min / mean / max: {}; preemption signals: {}\n",
        match h.timer_lateness.mean_ns() {
            None => "-".to_owned(),
            Some(mean) => format!(
                "{} / {} / {}",
                time(h.timer_lateness.min_ns),
                time(mean),
                time(h.timer_lateness.max_ns)
            ),
        },
        h.preempt_signals
    );
    let limit = match (h.rt_runtime_us, h.rt_period_us) {
        (Some(runtime), Some(period)) if runtime >= 0 && period > 0 => {
            Some(runtime as u64 * 1_000_000 / period as u64)
        }
        _ => None,
    };
    out.push_str(&format!(
        "real-time limit: sched_rt_runtime_us {} of sched_rt_period_us {}; nominal load {:.1}%\n",
        h.rt_runtime_us.map_or("?".to_owned(), |v| v.to_string()),
        h.rt_period_us.map_or("?".to_owned(), |v| v.to_string()),
        h.nominal_load_ppm as f64 / 10_000.0
    ));
    if limit.is_some_and(|l| h.nominal_load_ppm >= l) {
        out.push_str(
            "warning: the nominal load reaches the real-time limit: if the tasks use it, Linux \
             throttles every real-time thread of the core (dispatcher included) for the rest of \
             each period\n",
        );
    }
    if h.throttling_suspected {
        out.push_str(&format!(
            "warning: {} timer wake-ups came more than 1 ms late: real-time throttling or \
             interference from outside the managed core\n",
            h.late_timers
        ));
    }
    out
}

/// Median of `values` (the lower one of an even count), `None` when empty.
fn median(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    values.get(values.len().saturating_sub(1) / 2).copied()
}

fn job_medians(jobs: &[JobRecord], task: usize) -> (Option<u64>, Option<u64>) {
    let mine = || jobs.iter().filter(move |j| j.task == TaskId(task as u32));
    let response = mine()
        .filter_map(|j| j.completion.map(|c| c.saturating_duration_since(j.release)))
        .map(|d| d.as_nanos())
        .collect();
    let wakeup = mine()
        .filter_map(|j| {
            j.first_start
                .map(|s| s.saturating_duration_since(j.release))
        })
        .map(|d| d.as_nanos())
        .collect();
    (median(response), median(wakeup))
}

/// Host beside simulator, per task: jobs, misses, median and worst response and wake-up.
fn compare(host: &Outcome, sim: &Outcome) -> String {
    let opt = |v: Option<u64>| v.map_or("-".to_owned(), time);
    let worst = |s: &Stats| (s.count > 0).then_some(s.max_ns);
    let pair = |a: String, b: String| format!("{a} / {b}");
    let empty = Vec::new();
    let host_jobs = host.jobs.as_ref().unwrap_or(&empty);
    let sim_jobs = sim.jobs.as_ref().unwrap_or(&empty);
    let rows: Vec<Vec<String>> = host
        .tasks
        .iter()
        .zip(&sim.tasks)
        .enumerate()
        .map(|(i, (h, s))| {
            let (h_resp, h_wake) = job_medians(host_jobs, i);
            let (s_resp, s_wake) = job_medians(sim_jobs, i);
            vec![
                h.name.clone(),
                pair(h.jobs.to_string(), s.jobs.to_string()),
                pair(h.misses.to_string(), s.misses.to_string()),
                pair(opt(h_resp), opt(s_resp)),
                pair(opt(worst(&h.response)), opt(worst(&s.response))),
                pair(opt(h_wake), opt(s_wake)),
                pair(opt(worst(&h.wakeup_latency)), opt(worst(&s.wakeup_latency))),
            ]
        })
        .collect();
    let mut out = "host / simulator:\n".to_owned();
    out.push_str(&table::render(
        &[
            "task",
            "jobs",
            "misses",
            "median response",
            "worst response",
            "median wake-up",
            "worst wake-up",
        ],
        &rows,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_is_the_middle_value() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![7]), Some(7));
        assert_eq!(median(vec![9, 1, 5]), Some(5));
        // Even count: the lower of the two middle values.
        assert_eq!(median(vec![4, 1, 3, 2]), Some(2));
    }
}
