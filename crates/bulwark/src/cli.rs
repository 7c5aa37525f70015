//! The command line: subcommands, arguments and their help with examples.

use std::path::PathBuf;

use bulwark_core::Duration;
use clap::{Args, Parser, Subcommand};

/// Temporal isolation you can attack, measure and admit: simulate scheduling policies on a
/// deterministic machine, check scenario files, and reproduce published results.
#[derive(Parser, Debug)]
#[command(name = "bulwark", version, propagate_version = true)]
#[command(after_help = "Examples:
  bulwark check scenarios/textbook-rm.toml
  bulwark simulate scenarios/textbook-edf.toml --svg edf.svg --trace edf.json
  bulwark analyze scenarios/table-i.toml
  bulwark reproduce")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate scenario files; print every error with its file, line and column.
    #[command(after_help = "Exit status: 0 when every file is valid, 1 otherwise.

Examples:
  bulwark check scenarios/*.toml")]
    Check(CheckArgs),
    /// Run a scenario on the simulated machine and summarise every task.
    #[command(
        after_help = "Times carry a unit (ns, us, ms, s): 150us, 2ms, 1.5ms, 3s.

Examples:
  bulwark simulate scenarios/kernel-costs.toml
  bulwark simulate scenarios/textbook-rm.toml --until 70ms --svg rm.svg
  bulwark simulate scenarios/textbook-edf.toml --json > edf.json
  bulwark simulate scenarios/kernel-costs.toml --trace trace.json   # open in ui.perfetto.dev"
    )]
    Simulate(SimulateArgs),
    /// Admission test (SPR Eq. 1) and overhead bound (Eq. 2) of every reservation.
    #[command(
        long_about = "Admission test (SPR paper, Eq. 1) and overhead bound (Eq. 2) of every reservation.

Per core, each reservation's response bound R is the least fixed point of
R = I + b + sum of the higher-priority request-bound functions RBF(R), where I is the longest
non-preemptive region (eta) of a lower-priority reservation; a reservation is admitted when
R <= p. Reservations of equal priority count as interfering with each other. The overhead
columns: O_pre (one timer interrupt, one scheduler invocation with its work bound W, one
context switch) and L = ceil(b / eta) * O_pre, the budget lost per period; `unbounded` when
eta = 0 or when W has no bound (naive servers handle every expired timer at once).

Needs a reservation-server policy: deferrable-server, sporadic-server, spr, spr-deferrable.",
        after_help = "Times print with their unit; --json gives integer nanoseconds, null for unbounded.

Exit status: 0 when every reservation is admitted, 1 when one is not (or the file is invalid),
2 when the scenario's policy has no reservation servers.

Examples:
  bulwark analyze scenarios/table-i.toml
  bulwark analyze scenarios/deferrable-double-hit.toml
  bulwark analyze scenarios/table-i.toml --json > admission.json"
    )]
    Analyze(AnalyzeArgs),
    /// Run the built-in experiments and write a report (Markdown, HTML, SVG).
    #[command(after_help = "Exit status: 0 when every check holds, 1 when one fails.

Examples:
  bulwark reproduce
  bulwark reproduce textbook-fp-edf --out /tmp/report
  bulwark reproduce --list")]
    Reproduce(ReproduceArgs),
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Simulated time to run (default: the scenario's `duration`).
    #[arg(long, value_parser = parse_time)]
    pub until: Option<Duration>,
    /// Seed for every random draw (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write a Chrome trace (JSON) that opens in ui.perfetto.dev and chrome://tracing.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write an SVG Gantt chart of the run.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Print metrics and every job as JSON (integer nanoseconds) instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// Print the analysis as JSON (integer nanoseconds, null for unbounded) instead of tables.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Run only this experiment (see --list).
    pub name: Option<String>,
    /// Where to write the report.
    #[arg(long, default_value = "report", value_name = "DIR")]
    pub out: PathBuf,
    /// List the experiments and exit.
    #[arg(long)]
    pub list: bool,
}

fn parse_time(text: &str) -> Result<Duration, String> {
    bulwark_spec::parse_duration(text)
}
