//! `bulwark simulate`: run a scenario and report per-task metrics.

use crate::output::{out, outln};
use std::process::ExitCode;

use bulwark_core::{Duration, Instant};
use bulwark_sim::{Options, Outcome, Stats};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SimulateArgs;
use crate::{diagnostics, table};

pub fn run(args: &SimulateArgs) -> Result<ExitCode, String> {
    if let Some(system) = super::mcipc_analyze::load(&args.file) {
        return mc_ipc(system.ok().and_then(|s| s.protocol), args);
    }
    if let Some(system) = super::components::load_located(&args.file) {
        return match system {
            Ok(located) => {
                // A call loop deadlocks the machine: say where, before running anything.
                let (errors, _) = super::components::call_loops(&located);
                if errors.is_empty() {
                    super::components::simulate(&located.system, args)
                } else {
                    eprint!("{}", diagnostics::render(&located.diagnostics(errors)));
                    Ok(crate::exit::bad_input())
                }
            }
            Err(d) => {
                eprint!("{}", diagnostics::render(&d));
                Ok(crate::exit::bad_input())
            }
        };
    }
    let scenario = match bulwark_spec::load_checked(&args.file) {
        // The guard prints the warnings; it holds only when --deny-warnings stops the command.
        Ok((_, warnings)) if diagnostics::report_warnings(&warnings, args.deny_warnings) => {
            return Ok(crate::exit::bad_input());
        }
        Ok((s, _)) => s,
        Err(d) => {
            eprint!("{}", diagnostics::render(&d));
            return Ok(crate::exit::bad_input());
        }
    };
    let options = Options {
        until: args.until,
        seed: args.seed,
        record_trace: args.trace.is_some() || args.svg.is_some(),
        record_jobs: args.json || args.svg.is_some(),
    };
    let horizon = args.until.unwrap_or(scenario.duration).as_nanos();
    // Hidden when standard error is not a terminal; ticks in simulated microseconds.
    let bar = ProgressBar::new(horizon / 1_000).with_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% simulated, eta {eta}")
            .map_err(|e| e.to_string())?,
    );
    let outcome = bulwark_sim::run_with_progress(&scenario, &options, &mut |now: Instant| {
        bar.set_position(now.as_nanos() / 1_000)
    })
    .map_err(|e| format!("{}: {e}", args.file.display()))?;
    bar.finish_and_clear();

    if let Some(path) = &args.trace {
        let json = bulwark_lab::chrome::chrome_trace_json(&outcome).unwrap_or_default();
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(path) = &args.svg {
        let svg = bulwark_lab::gantt::gantt_svg(&outcome, Instant::ZERO, outcome.until)
            .unwrap_or_default();
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.json {
        outln!("{}", bulwark_lab::metrics_json::metrics_json(&outcome));
    } else {
        out!("{}", summary(&outcome));
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(o: &Outcome) -> String {
    let time = |ns: u64| Duration::from_nanos(ns).to_string();
    let stats = |s: &Stats| match s.mean_ns() {
        None => "-".to_owned(),
        Some(mean) => format!("{} / {} / {}", time(s.min_ns), time(mean), time(s.max_ns)),
    };
    let rows: Vec<Vec<String>> = o
        .tasks
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.core.to_string(),
                t.jobs.to_string(),
                t.misses.to_string(),
                stats(&t.response),
                stats(&t.wakeup_latency),
                time(t.kernel_ns),
                t.preemptions.to_string(),
            ]
        })
        .collect();
    let mut out = format!(
        "{} ({}, seed {}): {} simulated, {} events\n",
        o.scenario,
        o.policy,
        o.seed,
        Duration::from_nanos(o.until.as_nanos()),
        o.events
    );
    out.push_str(&table::render(
        &[
            "task",
            "core",
            "jobs",
            "misses",
            "response min / mean / max",
            "wakeup latency min / mean / max",
            "kernel",
            "preemptions",
        ],
        &rows,
    ));
    out
}

/// An MC-IPC system runs its phases on the cluster machine, as `mcipc-case-study --file`
/// does: under the protocol the file names (all three when it names none), each phase for
/// `--until` (default 10 s, that command's default phase length). An invalid file is reported
/// by that command, located.
fn mc_ipc(
    protocol: Option<bulwark_spec::mc_ipc_toml::Protocol>,
    args: &SimulateArgs,
) -> Result<ExitCode, String> {
    use crate::cli::{CaseStudyArgs, IpcProtocol};
    use bulwark_spec::mc_ipc_toml::Protocol;
    for (flag, given) in [
        ("--trace", args.trace.is_some()),
        ("--svg", args.svg.is_some()),
    ] {
        if given {
            eprintln!(
                "error: {}: {flag} is not available for MC-IPC systems yet (their machine \
                 records no trace); allowed: --until (each phase's length), --json",
                args.file.display()
            );
            return Ok(crate::exit::bad_input());
        }
    }
    let protocol = protocol.map(|p| match p {
        Protocol::McIpc => IpcProtocol::Mc,
        Protocol::FifoIpc => IpcProtocol::Fifo,
        Protocol::PrioIpc => IpcProtocol::Prio,
    });
    super::mcipc::run(&CaseStudyArgs {
        protocol,
        phase: None,
        file: Some(args.file.clone()),
        phase_length: args.until.unwrap_or(Duration::from_secs(10)),
        svg: None,
        json: args.json,
    })
}
