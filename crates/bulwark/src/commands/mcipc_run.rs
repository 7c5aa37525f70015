//! `bulwark run` on an MC-IPC system: each phase (or the system as given) on this machine's
//! managed core, every client task and server a real thread and the scenario machine the
//! dispatcher; with `--compare`, beside the simulator with the same seed; with `--trace`, the
//! host's phases end to end as a Chrome trace.

use std::process::ExitCode;

use bulwark_analysis::mc_ipc::GateProtocol;
use bulwark_core::Duration;
use bulwark_lab::experiments::mcipc_case_study::{
    bounds, run_scenario, run_scenario_on_host, scenario_phase_result, PhaseResult, SEED,
};
use bulwark_spec::mc_ipc_toml::McIpcSystem;
use serde_json::{json, Value};

use crate::cli::RunArgs;
use crate::output::{out, outln};
use crate::table;

/// Each phase's length when `--until` does not say.
const PHASE_LENGTH: Duration = Duration::from_secs(1);

/// A phase run on the host, and in the simulator when compared.
struct Phase {
    host: PhaseResult,
    simulated: Option<PhaseResult>,
    entries: u64,
    late_timers: u64,
}

/// What a file's `protocol` may be, for messages: `"mc-ipc", "fifo-ipc" or "prio-ipc"`.
pub fn protocol_choices() -> String {
    let quoted: Vec<String> = bulwark_core::ipc::GateProtocol::NAMES
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

pub fn run_on_host(study: &McIpcSystem, args: &RunArgs) -> Result<ExitCode, String> {
    let file = args.file.display();
    let Some(protocol) = study.protocol else {
        return Err(format!(
            "{file}: a run uses the file's protocol, and this file names none; allowed: \
             protocol = {} in the file",
            protocol_choices()
        ));
    };
    let cores: u64 = study.clusters.iter().map(|c| c.cores).sum();
    if cores != 1 {
        return Err(format!(
            "{file}: an MC-IPC system runs on this machine when it has one cluster of one core \
             (the runtime manages one core, core {}); this one has {} clusters and {cores} \
             cores: `bulwark simulate` runs it",
            args.core,
            study.clusters.len()
        ));
    }
    let seed = args.seed.unwrap_or(SEED);
    let length = args.until.unwrap_or(PHASE_LENGTH);
    let bounds = bounds(study).map_err(|e| format!("{file}: {e}"))?;
    let phases: Vec<usize> = if study.phases.is_empty() {
        vec![0]
    } else {
        (1..=study.phases.len()).collect()
    };
    let config = bulwark_host::HostConfig {
        core: args.core,
        watchdog_core: args.watchdog_core,
        until: Some(length),
        record_trace: args.trace.is_some(),
        ..bulwark_host::HostConfig::default()
    };
    super::exports::check_writable(args.trace.as_deref())?;
    let mut runs = Vec::new();
    let mut traces = Vec::new();
    for &phase in &phases {
        let mut host = run_scenario_on_host(study, phase, protocol, seed, &config)
            .map_err(|e| format!("{file}: phase {phase}: {e}"))?;
        traces.extend(host.outcome.outcome.trace.take());
        let simulated = if args.compare {
            let run = run_scenario(study, phase, protocol, length, seed, false)
                .map_err(|e| format!("{file}: phase {phase}: {e}"))?;
            Some(scenario_phase_result(study, &bounds, phase, protocol, &run))
        } else {
            None
        };
        runs.push(Phase {
            host: scenario_phase_result(study, &bounds, phase, protocol, &host.outcome),
            simulated,
            entries: host.host.entries,
            late_timers: host.host.late_timers,
        });
    }
    if args.trace.is_some() {
        // The host's phases end to end, as `simulate --trace` draws the simulator's.
        let files = (args.trace.as_deref(), None);
        let run = (length, seed);
        super::mcipc_trace::write_to(study, traces, protocol, run, &args.file, files)?;
    }
    if args.json {
        let summary = |r: &PhaseResult| {
            json!({
                "jobs": r.jobs,
                "completed": r.completed,
                "delays_ns": r.delays.iter().map(|d| d.as_nanos()).collect::<Vec<_>>(),
                "unfinished_at_least_ns": r.unfinished.map(|d| d.as_nanos()),
                "invocations": r.invocations,
                "over_theorem": r.over_theorem,
            })
        };
        let documents: Vec<Value> = runs
            .iter()
            .map(|run| {
                let mut document = json!({
                    "protocol": protocol.label(),
                    "phase": run.host.phase,
                    "name": run.host.name,
                    "bound_ns": run.host.bound.as_nanos(),
                    "host": summary(&run.host),
                    "entries": run.entries,
                    "late_timers": run.late_timers,
                });
                if let (Some(map), Some(sim)) = (document.as_object_mut(), &run.simulated) {
                    map.insert("simulated".to_owned(), summary(sim));
                }
                document
            })
            .collect();
        outln!(
            "{:#}",
            json!({ "seed": seed, "core": args.core, "runs": documents })
        );
    } else {
        out!("{}", render(&runs, protocol, length, args.core));
    }
    Ok(ExitCode::SUCCESS)
}

fn worst(result: &PhaseResult) -> String {
    let unfinished = if result.unfinished.is_some() { ">" } else { "" };
    format!("{unfinished}{}", result.max_delay())
}

fn render(runs: &[Phase], protocol: GateProtocol, length: Duration, core: usize) -> String {
    let compared = runs.iter().any(|r| r.simulated.is_some());
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            let mut row = vec![
                format!("{}: {}", run.host.phase, run.host.name),
                worst(&run.host),
            ];
            if let Some(sim) = &run.simulated {
                row.push(worst(sim));
            }
            row.extend([
                run.host.over(run.host.bound).to_string(),
                format!("{}/{}", run.host.completed, run.host.jobs),
                run.host.invocations.to_string(),
                run.entries.to_string(),
                run.late_timers.to_string(),
            ]);
            row
        })
        .collect();
    let mut header = vec!["phase", "T1 worst delay (host)"];
    if compared {
        header.push("simulated");
    }
    header.extend([
        "over bound",
        "T1 jobs done",
        "invocations",
        "dispatcher entries",
        "late timers",
    ]);
    let bound = runs.first().map_or(Duration::ZERO, |r| r.host.bound);
    let mut out = format!(
        "MC-IPC system on core {core} of this machine under {}: T1's delay at its server \
         (bound {bound}), {length} per phase; '>' marks a request still waiting when the phase \
         ended\n",
        protocol.label()
    );
    out.push_str(&table::render(&header, &rows));
    out
}
