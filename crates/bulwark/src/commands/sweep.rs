//! `bulwark sweep`: run a schedulability-sweep experiment (whole or one shard), or merge the
//! shards' counts; write the CSV, JSON and the acceptance-ratio plot. With `simulate = true`
//! every set is also simulated (module `simulate`), and a test that admitted a set which then
//! missed a deadline makes the sweep exit 1.

mod simulate;

use std::path::Path;
use std::process::ExitCode;

use bulwark_analysis::sweep::run::{self, Counts, Shard, Simulator};
use bulwark_lab::plot::{line_plot_scaled, Scale, Series};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{SweepArgs, SweepCommand, SweepMergeArgs};
use crate::diagnostics;
use crate::output::out;

pub fn run(args: &SweepArgs) -> Result<ExitCode, String> {
    if let Some(SweepCommand::Merge(merge)) = &args.command {
        return run_merge(merge);
    }
    let Some(path) = &args.file else {
        return Err(
            "give an experiment file: bulwark sweep FILE (or bulwark sweep merge FILES...)".into(),
        );
    };
    let shard = match &args.shard {
        None => Shard::WHOLE,
        Some(text) => Shard::parse(text)?,
    };
    let file_name = path.display().to_string();
    let experiment = match bulwark_spec::read_text(path, "a readable UTF-8 sweep experiment file")
        .and_then(|text| bulwark_spec::parse_sweep(&text, &file_name))
    {
        Ok(experiment) => experiment,
        Err(d) => {
            eprint!("{}", diagnostics::render(&d));
            return Ok(crate::exit::bad_input());
        }
    };
    let grid = (run::points(&experiment).len() as u64).saturating_mul(experiment.sets_per_point);
    let owned = grid / shard.count + u64::from(grid % shard.count > shard.index);
    // Drawn on stderr, and only when it is a terminal (indicatif hides it otherwise).
    let bar = ProgressBar::new(owned).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} sets {eta}")
            .map_err(|e| e.to_string())?,
    );
    let machine = simulate::SimulatedCore;
    let simulator = experiment.simulate.then_some(&machine as &dyn Simulator);
    let counts = run::run_simulated(&experiment, shard, &|n| bar.inc(n), simulator);
    bar.finish_and_clear();
    if shard.count > 1 {
        let json = counts.to_json();
        match &args.out {
            Some(dir) => {
                let file = format!("shard-{}-of-{}.json", shard.index, shard.count);
                write(dir, &file, &json)?;
            }
            None => out!("{json}"),
        }
        return Ok(soundness(&counts));
    }
    results(&counts, args.out.as_deref(), args.json)
}

/// 1 (with a line per test on stderr) when a simulated sweep found a test that admitted a set
/// which then missed a deadline; else 0.
fn soundness(counts: &Counts) -> ExitCode {
    let unsound: Vec<(String, u64)> = counts
        .admitted_but_missed_totals()
        .into_iter()
        .filter(|(_, missed)| *missed > 0)
        .collect();
    for (test, missed) in &unsound {
        eprintln!("{test} admitted {missed} set(s) that missed a deadline in simulation");
    }
    if unsound.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn run_merge(args: &SweepMergeArgs) -> Result<ExitCode, String> {
    let mut parts = Vec::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let part = Counts::from_json(&text).map_err(|e| {
            format!(
                "{}: not a shard file written by `bulwark sweep --shard`: {e}",
                path.display()
            )
        })?;
        parts.push(part);
    }
    let merged = run::merge(&parts)?;
    if !merged.complete() {
        let missing: Vec<String> = (0..merged.shard_count)
            .filter(|i| !merged.shards.contains(i))
            .map(|i| format!("{i}/{}", merged.shard_count))
            .collect();
        return Err(format!("shards missing: {}", missing.join(", ")));
    }
    results(&merged, args.out.as_deref(), args.json)
}

/// The CSV (or JSON) on stdout, and with `out` the three files.
fn results(counts: &Counts, out: Option<&Path>, json: bool) -> Result<ExitCode, String> {
    let (csv, document) = (counts.csv(), counts.results_json());
    if let Some(dir) = out {
        write(dir, "results.csv", &csv)?;
        write(dir, "results.json", &document)?;
        write(dir, "acceptance.svg", &plot(counts))?;
    }
    out!("{}", if json { &document } else { &csv });
    Ok(soundness(counts))
}

fn plot(counts: &Counts) -> String {
    let series: Vec<Series> = counts
        .curves()
        .into_iter()
        .map(|(name, points)| Series::new(name, points))
        .collect();
    line_plot_scaled(
        &format!("{}: acceptance ratio", counts.name),
        "utilisation",
        "acceptance ratio",
        &series,
        Scale::Linear,
        Scale::Linear,
    )
}

fn write(dir: &Path, file: &str, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(file);
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}
