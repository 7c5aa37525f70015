//! `bulwark mcipc-case-study`: the MC-IPC paper's eight-phase case study (or any MC-IPC file
//! with tasks and phases), T1's delay per phase and protocol against each protocol's bound.

use std::process::ExitCode;

use bulwark_analysis::mc_ipc::GateProtocol;
use bulwark_core::Duration;
use bulwark_lab::experiments::mcipc_case_study::{
    bounds, case_study, expected_over, figures, run_phase_with, PhaseResult, CASE_STUDY_FILE,
    PROTOCOLS, SEED,
};
use bulwark_sim::trace::Trace;
use bulwark_spec::mc_ipc_toml::McIpcSystem;
use serde_json::json;

use crate::cli::CaseStudyArgs;
use crate::diagnostics;
use crate::output::{out, outln};
use crate::table;

pub fn run(args: &CaseStudyArgs) -> Result<ExitCode, String> {
    run_drawing(args, None, Sizing::Refuse)
}

/// The phases a run of `study` goes through when none is chosen: each in turn (1-based), or
/// a system without phases once, as given (phase 0).
pub fn every_phase(study: &McIpcSystem) -> Vec<usize> {
    match study.phases.len() {
        0 => vec![0],
        count => (1..=count).collect(),
    }
}

/// Whether [`run_drawing`] checks the size of its runs itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sizing {
    /// It refuses phases whose records would not fit in memory (`mcipc-case-study`).
    Refuse,
    /// The caller has checked them, with its own outputs and options (`simulate`).
    CheckedByCaller,
}

/// What draws a traced run: the system and each phase's trace, in phase order.
pub type Drawing<'a> = &'a mut dyn FnMut(&McIpcSystem, Vec<Trace>) -> Result<(), String>;

/// [`run`], and when `drawing` is given, each phase traced in the same run and handed to it
/// (the caller asks for one protocol).
pub fn run_drawing(
    args: &CaseStudyArgs,
    drawing: Option<Drawing>,
    sizing: Sizing,
) -> Result<ExitCode, String> {
    if let Some(dir) = &args.svg {
        // The plots are written after the runs: a folder that cannot take them fails first.
        bulwark_lab::report::prepare_report_dir(dir).map_err(|e| {
            format!(
                "{}: cannot write the plots here: {e} (allowed: a folder this user can create \
                 and write)",
                dir.display()
            )
        })?;
    }
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
    let protocols: Vec<GateProtocol> = match args.protocol {
        None => PROTOCOLS.to_vec(),
        Some(protocol) => vec![protocol],
    };
    let phases: Vec<usize> = match args.phase {
        None => every_phase(&study),
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
    let file = args
        .file
        .as_deref()
        .map_or_else(|| CASE_STUDY_FILE.into(), |path| path.display().to_string());
    let bounds = bounds(&study).map_err(|e| format!("{file}: {e}"))?;
    let traced = drawing.is_some();
    let seed = args.seed.unwrap_or(SEED);
    if sizing == Sizing::Refuse {
        let length = args.phase_length;
        if let Some(refusal) =
            super::mcipc_size::refuse_case_study(&study, &phases, length, seed, &file)
        {
            return Err(refusal);
        }
    }
    let mut results = Vec::new();
    let mut traces = Vec::new();
    for &protocol in &protocols {
        for &phase in &phases {
            let (result, trace) = run_phase_with(
                &study,
                &bounds,
                phase,
                protocol,
                args.phase_length,
                seed,
                traced,
            )
            .map_err(|e| e.to_string())?;
            results.push(result);
            traces.extend(trace);
        }
    }
    if let Some(draw) = drawing {
        draw(&study, traces)?;
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
                    "protocol": r.protocol.label(),
                    "phase": r.phase,
                    "name": r.name,
                    "bound_ns": r.bound.as_nanos(),
                    "phase_bound_ns": r.phase_bound.map(|b| b.as_nanos()),
                    "jobs": r.jobs,
                    "completed": r.completed,
                    "delays_ns": r.delays.iter().map(|d| d.as_nanos()).collect::<Vec<_>>(),
                    "unfinished_at_least_ns": r.unfinished.map(|d| d.as_nanos()),
                    "objects_created": r.reclaimed.created,
                    "allocations_refused": r.reclaimed.refused,
                    "terminations": r.reclaimed.terminations,
                    "masked_ns": r.reclaimed.masked.as_nanos(),
                    "longest_mask_ns": r.reclaimed.longest_mask.as_nanos(),
                    "context_switches": r.context_switches,
                })
            })
            .collect();
        outln!("{:#}", json!({ "seed": seed, "runs": runs }));
    } else {
        let vantage = study.tasks.first().map_or("T1", |t| t.name.as_str());
        out!(
            "{}",
            render(
                &results,
                &protocols,
                &phases,
                (args.phase_length, seed),
                vantage
            )
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
    let mean = r.mean_delay();
    let worst = match r.unfinished {
        Some(_) => format!(">{}", millis(r.max_delay())),
        None => millis(r.max_delay()),
    };
    format!("{worst} (mean {}, {over} over)", millis(mean))
}

/// The table of `results`, whose delays are those of task `vantage` (the file's first), for
/// phases of `length` run with `seed`.
fn render(
    results: &[PhaseResult],
    protocols: &[GateProtocol],
    phases: &[usize],
    (length, seed): (Duration, u64),
    vantage: &str,
) -> String {
    let mut header = vec!["phase".to_string()];
    for &p in protocols {
        let bound = results
            .iter()
            .find(|r| r.protocol == p)
            .map_or(Duration::MAX, |r| r.bound);
        header.push(format!("{} (bound {})", p.label(), millis(bound)));
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
        "MC-IPC: {vantage}'s worst delay at its server, {length} per phase (seed {seed}); \
         '>' marks a request still waiting when the phase ended\n"
    );
    out.push_str(&table::render(&headers, &rows));
    out.push_str(&phase_bounds(results, protocols, phases, vantage));
    if results.iter().any(|r| r.reclaimed != Default::default()) {
        out.push_str(&reclamation(results));
    }
    out
}

/// Each run's bound with its phase's own clients and floods, and how many delays exceed it.
fn phase_bounds(
    results: &[PhaseResult],
    protocols: &[GateProtocol],
    phases: &[usize],
    vantage: &str,
) -> String {
    let cell = |r: &PhaseResult| match r.phase_bound {
        Some(bound) => format!("{} ({} over)", millis(bound), r.over(bound)),
        None => "none".into(),
    };
    let rows: Vec<Vec<String>> = (phases.iter())
        .map(|&phase| {
            let mut row = vec![phase.to_string()];
            for &p in protocols {
                let run = results.iter().find(|r| r.protocol == p && r.phase == phase);
                row.push(run.map_or("-".into(), cell));
            }
            row
        })
        .collect();
    let mut header = vec!["phase".to_string()];
    header.extend(protocols.iter().map(|p| p.label().to_string()));
    let headers: Vec<&str> = header.iter().map(String::as_str).collect();
    format!(
        "\n{vantage}'s bound with each phase's own clients and floods (`analyze` lists every \
         reservation's; none: two or more that can precede {vantage} flood)\n{}",
        table::render(&headers, &rows)
    )
}

/// Per run with reclamation work: objects made and refused, and how long cores were masked.
fn reclamation(results: &[PhaseResult]) -> String {
    let rows: Vec<Vec<String>> = results
        .iter()
        .filter(|r| r.reclaimed != Default::default())
        .map(|r| {
            let done = r.reclaimed;
            vec![
                r.protocol.label().to_string(),
                format!("{}: {}", r.phase, r.name),
                done.created.to_string(),
                done.refused.to_string(),
                done.terminations.to_string(),
                done.masked.to_string(),
                done.longest_mask.to_string(),
            ]
        })
        .collect();
    format!(
        "\nReclamation: objects allocated and refused by a group's quota, and the time \
         terminations masked a core\n{}",
        table::render(
            &[
                "protocol",
                "phase",
                "created",
                "refused",
                "terminations",
                "masked",
                "longest mask",
            ],
            &rows,
        )
    )
}
