//! `bulwark sweep`: run a schedulability-sweep experiment (whole or one shard), or merge the
//! shards' counts; write the CSV, JSON and the acceptance-ratio plot; or write the Slurm
//! scripts that run the shards as an array job. With `simulate = true` every set is also
//! simulated (module `simulate`), and a test that admitted a set which then missed a deadline
//! makes the sweep exit 1.

mod simulate;

use std::path::Path;
use std::process::ExitCode;

use bulwark_analysis::sweep::run::{self, Counts, Shard, Simulator};
use bulwark_lab::plot::{line_plot_scaled, Scale, Series};
use bulwark_spec::SystemFile;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{SweepArgs, SweepCommand, SweepMergeArgs, SweepSlurmArgs};
use crate::output::{out, outln};

pub fn run(args: &SweepArgs) -> Result<ExitCode, String> {
    match &args.command {
        Some(SweepCommand::Merge(merge)) => return run_merge(merge),
        Some(SweepCommand::Slurm(slurm)) => return run_slurm(slurm),
        None => {}
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
    let experiment = match super::load_system(path) {
        None => return Ok(crate::exit::bad_input()),
        Some(SystemFile::Sweep(experiment)) => experiment,
        Some(other) => {
            return Ok(super::wrong_kind(
                path,
                other.kind(),
                "sweep",
                "a sweep experiment",
            ))
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

/// The most array tasks `sweep slurm` writes scripts for. The merge job names every shard file
/// on one command line (about 30 bytes each): 100000 of them stay far below Linux's 2 MiB
/// argument limit. (Slurm's own default MaxArraySize is 1001; sites raise it.)
const MAX_SLURM_SHARDS: u64 = 100_000;

fn run_slurm(args: &SweepSlurmArgs) -> Result<ExitCode, String> {
    if !(1..=MAX_SLURM_SHARDS).contains(&args.shards) {
        return Err(format!(
            "--shards {} is out of range (allowed: 1 to {MAX_SLURM_SHARDS})",
            args.shards
        ));
    }
    let bulwark = match &args.bulwark {
        // The merge job runs in DIR/shards: a relative path would point elsewhere there.
        Some(command) if command.contains('/') && !command.starts_with('/') => {
            return Err(format!(
                "--bulwark {command} is a relative path (allowed: an absolute path, or a bare \
                 command name found on the nodes' PATH)"
            ));
        }
        Some(command) if command.is_empty() => {
            return Err(
                "--bulwark is empty (allowed: an absolute path, or a bare command name)".into(),
            );
        }
        Some(command) => command.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this bulwark binary's path ({e}); give --bulwark"))?
            .display()
            .to_string(),
    };
    // `#SBATCH --output=PATH` is not shell-quoted: Slurm splits it at blanks and expands `%`.
    let dir_text = std::path::absolute(&args.out)
        .map_err(|e| format!("{}: {e}", args.out.display()))?
        .display()
        .to_string();
    if let Some(bad) = dir_text
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || *c == '%')
    {
        return Err(format!(
            "--out {dir_text}: the directory's path has {bad:?}, which Slurm's #SBATCH --output \
             cannot hold (allowed: a path without blanks, control characters or %)"
        ));
    }
    // Checked now, not on the cluster after the job waited in the queue.
    match super::load_system(&args.file) {
        None => return Ok(crate::exit::bad_input()),
        Some(SystemFile::Sweep(_)) => {}
        Some(other) => {
            return Ok(super::wrong_kind(
                &args.file,
                other.kind(),
                "sweep slurm",
                "a sweep experiment",
            ))
        }
    }
    // Array tasks start in the submission directory, maybe on another node: absolute paths.
    let file =
        std::fs::canonicalize(&args.file).map_err(|e| format!("{}: {e}", args.file.display()))?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let dir =
        std::fs::canonicalize(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let scripts = SlurmScripts {
        bulwark: &bulwark,
        file: &file.display().to_string(),
        dir: &dir.display().to_string(),
        shards: args.shards,
    };
    write(&dir, "sweep.sbatch", &scripts.array())?;
    write(&dir, "merge.sbatch", &scripts.merge())?;
    write(&dir, "submit.sh", &scripts.submit())?;
    outln!(
        "bash {}",
        quote(&dir.join("submit.sh").display().to_string())
    );
    Ok(ExitCode::SUCCESS)
}

/// The three scripts of a Slurm run of one sweep.
struct SlurmScripts<'a> {
    bulwark: &'a str,
    file: &'a str,
    dir: &'a str,
    shards: u64,
}

impl SlurmScripts<'_> {
    /// The array job: task i runs shard i and writes DIR/shards/shard-i-of-N.json.
    fn array(&self) -> String {
        let n = self.shards;
        format!(
            "#!/bin/bash\n\
             #SBATCH --job-name=bulwark-sweep\n\
             #SBATCH --array=0-{last}\n\
             #SBATCH --ntasks=1\n\
             #SBATCH --output={log}\n\
             # Array task i runs shard i of {n}; merge.sbatch sums the {n} shards.\n\
             set -euo pipefail\n\
             : \"${{SLURM_ARRAY_TASK_ID:?is not set: submit with sbatch, or run one shard \
             here with SLURM_ARRAY_TASK_ID=i bash sweep.sbatch}}\"\n\
             {bulwark} sweep {file_quoted} --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --out {shards}\n",
            last = n - 1,
            log = self.path("logs/shard-%a.out"),
            bulwark = quote(self.bulwark),
            file_quoted = quote(self.file),
            shards = quote(&self.path("shards")),
        )
    }

    /// The merge job: every shard's counts into DIR/results.csv, results.json, acceptance.svg.
    /// It names the N shard files relative to DIR/shards (short names, one command line) and
    /// by brace expansion, so a missing shard is an error, not silently left out by a glob.
    fn merge(&self) -> String {
        let n = self.shards;
        format!(
            "#!/bin/bash\n\
             #SBATCH --job-name=bulwark-sweep-merge\n\
             #SBATCH --ntasks=1\n\
             #SBATCH --output={log}\n\
             set -euo pipefail\n\
             cd {shards}\n\
             {bulwark} sweep merge shard-{{0..{last}}}-of-{n}.json --out {dir}\n",
            log = self.path("logs/merge.out"),
            bulwark = quote(self.bulwark),
            shards = quote(&self.path("shards")),
            last = n - 1,
            dir = quote(self.dir),
        )
    }

    /// Submits the array, then the merge once every array task has succeeded.
    fn submit(&self) -> String {
        format!(
            "#!/bin/bash\n\
             set -euo pipefail\n\
             mkdir -p {logs}\n\
             array=$(sbatch --parsable {array})\n\
             sbatch --dependency=afterok:\"${{array%%;*}}\" {merge}\n",
            logs = quote(&self.path("logs")),
            array = quote(&self.path("sweep.sbatch")),
            merge = quote(&self.path("merge.sbatch")),
        )
    }

    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.dir.trim_end_matches('/'))
    }
}

/// `text` as one bash word: single-quoted, each `'` written `'\''`.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
