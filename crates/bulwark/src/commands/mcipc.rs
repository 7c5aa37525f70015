//! `bulwark mcipc-case-study`: the MC-IPC paper's eight-phase case study (or any MC-IPC file
//! with tasks and phases), T1's delay per phase and protocol against each protocol's bound.

use std::process::ExitCode;

use bulwark_analysis::mc_ipc::Protocol;
use bulwark_core::Duration;
use bulwark_lab::experiments::mcipc_case_study::{
    bounds, case_study, expected_over, figures, protocol_name, run_phase, PhaseResult, PROTOCOLS,
    SEED,
};
use serde_json::json;

use crate::cli::{CaseStudyArgs, IpcProtocol};
use crate::diagnostics;
use crate::output::{out, outln};
use crate::table;

pub fn run(args: &CaseStudyArgs) -> Result<ExitCode, String> {
    let study = match &args.file {
        None => case_study().map_err(|e| e.to_string())?,
        Some(path) => match super::mcipc_analyze::load(path) {
            Some(Ok(system)) => system,
            Some(Err(d)) => {
                eprint!("{}", diagnostics::render(&d));
                return Ok(crate::exit::bad_input());
            }
            None => {
                return Err(format!(
                    "{}: not an MC-IPC system (its top-level keys have no [[cluster]], \
                     [[server]] or [[reservation]] tables)",
                    path.display()
                ));
            }
        },
    };
    let protocols: Vec<Protocol> = match args.protocol {
        None => PROTOCOLS.to_vec(),
        Some(IpcProtocol::Mc) => vec![Protocol::McIpc],
        Some(IpcProtocol::Fifo) => vec![Protocol::FifoIpc],
        Some(IpcProtocol::Prio) => vec![Protocol::PrioIpc],
    };
    let phases: Vec<usize> = match args.phase {
        // A system without phases runs once, as given (phase 0).
        None if study.phases.is_empty() => vec![0],
        None => (1..=study.phases.len()).collect(),
        Some(p) if (p as usize) <= study.phases.len() => vec![p as usize],
        Some(p) if study.phases.is_empty() => {
            return Err(format!(
                "phase {p}: the system has no [[phase]]; leave out --phase to run it as given"
            ))
        }
        Some(p) => {
            return Err(format!(
                "phase {p}: the system has phases 1 to {}",
                study.phases.len()
            ))
        }
    };
    let bounds = bounds(&study).map_err(|e| e.to_string())?;
    let mut results = Vec::new();
    for &protocol in &protocols {
        for &phase in &phases {
            results.push(
                run_phase(&study, &bounds, phase, protocol, args.phase_length, SEED)
                    .map_err(|e| e.to_string())?,
            );
        }
    }
    if let Some(dir) = &args.svg {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for figure in figures(&results) {
            let path = dir.join(&figure.file);
            std::fs::write(&path, figure.svg).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    if args.json {
        let runs: Vec<_> = results
            .iter()
            .map(|r| {
                json!({
                    "protocol": protocol_name(r.protocol),
                    "phase": r.phase,
                    "name": r.name,
                    "bound_ns": r.bound.as_nanos(),
                    "jobs": r.jobs,
                    "completed": r.completed,
                    "delays_ns": r.delays.iter().map(|d| d.as_nanos()).collect::<Vec<_>>(),
                    "unfinished_at_least_ns": r.unfinished.map(|d| d.as_nanos()),
                })
            })
            .collect();
        outln!("{:#}", json!({ "seed": SEED, "runs": runs }));
    } else {
        out!(
            "{}",
            render(&results, &protocols, &phases, args.phase_length)
        );
    }
    // The built-in study must behave as the paper reports; another file has no expectation.
    let as_paper = args.file.is_some()
        || results.iter().all(|r| {
            let over = r.over(r.bound) > 0;
            over == expected_over(r.protocol).contains(&r.phase)
        });
    Ok(if as_paper {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn millis(d: Duration) -> String {
    format!("{:.2}ms", d.as_nanos() as f64 / 1e6)
}

fn cell(r: &PhaseResult) -> String {
    let over = r.over(r.bound);
    let mean = if r.delays.is_empty() {
        Duration::ZERO
    } else {
        Duration::from_nanos(
            r.delays.iter().map(|d| d.as_nanos()).sum::<u64>() / r.delays.len() as u64,
        )
    };
    let worst = match r.unfinished {
        Some(_) => format!(">{}", millis(r.max_delay())),
        None => millis(r.max_delay()),
    };
    format!("{worst} (mean {}, {over} over)", millis(mean))
}

fn render(
    results: &[PhaseResult],
    protocols: &[Protocol],
    phases: &[usize],
    length: Duration,
) -> String {
    let mut header = vec!["phase".to_string()];
    for &p in protocols {
        let bound = results
            .iter()
            .find(|r| r.protocol == p)
            .map_or(Duration::MAX, |r| r.bound);
        header.push(format!("{} (bound {})", protocol_name(p), millis(bound)));
    }
    let rows: Vec<Vec<String>> = phases
        .iter()
        .map(|&phase| {
            let name = results
                .iter()
                .find(|r| r.phase == phase)
                .map_or("", |r| r.name.as_str());
            let mut row = vec![format!("{phase}: {name}")];
            for &p in protocols {
                row.push(
                    results
                        .iter()
                        .find(|r| r.protocol == p && r.phase == phase)
                        .map_or("-".into(), cell),
                );
            }
            row
        })
        .collect();
    let headers: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut out = format!(
        "MC-IPC case study: T1's worst delay at its server, {length} per phase (seed {SEED}); \
         '>' marks a request still waiting when the phase ended\n"
    );
    out.push_str(&table::render(&headers, &rows));
    out
}
