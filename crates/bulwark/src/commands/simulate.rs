//! `bulwark simulate`: run a scenario and report per-task metrics.
//!
//! The Chrome trace (`--trace`) and the per-job JSON Lines (`--jobs`) stream to their files as
//! the run goes, so memory stays flat in simulated time; before the run, the command warns
//! when its outputs are estimated to be huge.

use crate::output::{out, outln};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bulwark_core::{Duration, Instant};
use bulwark_lab::chrome::ChromeStream;
use bulwark_lab::metrics_json::JobLines;
use bulwark_sim::{BudgetSample, Estimate, JobRecord, Mark, Options, Outcome, Recorder, Slice};
use bulwark_spec::mc_ipc_toml::McIpcSystem;
use bulwark_spec::{FileKind, Scenario, SystemFile};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::SimulateArgs;
use crate::{diagnostics, table};

/// A trace or kept job list estimated over this many bytes gets a warning before the run.
const LARGE_OUTPUT_BYTES: u64 = 100_000_000;
/// Job or trace-event counts from this one up get a warning: the run takes long.
const BILLIONS: u64 = 1_000_000_000;
/// Bytes of Chrome trace per event: 96 to 106 measured on the built-in scenarios and the
/// 1,000-task test scenario (an `X` event with its name, times and args).
const TRACE_BYTES_PER_EVENT: u64 = 100;

/// What a run keeps in memory until its end, and so what its size checks speak of.
#[derive(Clone, Copy, Debug)]
pub struct Keeping {
    /// Memory per job of a kept job list (--json without --jobs, or --svg).
    pub job_bytes: u64,
    /// Memory per job of a trace kept to the end; only where it does not stream.
    pub trace_bytes: u64,
    /// --trace and --jobs write as the run goes (a scenario); a component system keeps its
    /// trace to the end and has no --jobs.
    pub streams: bool,
}

/// A scenario's run: a kept job is its record, its document and its share of the JSON text,
/// 1,697,896 kB peak RSS for the 4,000,100 jobs of `tests/streaming/jobs-4m.toml`.
pub const SCENARIO_KEEPING: Keeping = Keeping {
    job_bytes: 424,
    trace_bytes: 0,
    streams: true,
};

pub fn run(args: &SimulateArgs) -> Result<ExitCode, String> {
    let Some((system, text)) = super::load_system_with_text(&args.file) else {
        return Ok(crate::exit::bad_input());
    };
    super::components::refuse_overheads(&args.file, args.overheads, &system)?;
    let (scenario, warnings) = match system {
        SystemFile::McIpc(system) => return mc_ipc(&system, args),
        SystemFile::Components(located) => {
            if args.jobs.is_some() {
                return Err(format!(
                    "{}: --jobs streams the jobs of a scenario; for a component system use --json",
                    args.file.display()
                ));
            }
            if args.seed.is_some() {
                return Err(format!(
                    "{}: --seed does not apply to a component system (nothing in it is \
                     drawn); leave it out",
                    args.file.display()
                ));
            }
            // A call loop deadlocks the machine: say where, before running anything; a
            // possible one is a warning, as `check` prints it.
            let (errors, warnings) = super::components::call_loops(&located);
            if !errors.is_empty() {
                eprint!("{}", diagnostics::render(&located.diagnostics(errors)));
                return Ok(crate::exit::bad_input());
            }
            if diagnostics::report_warnings(&warnings, args.deny_warnings) {
                return Ok(crate::exit::bad_input());
            }
            check_outputs(args)?;
            return super::components::simulate(&located, args);
        }
        SystemFile::Sweep(_) => {
            return Ok(super::wrong_kind(
                &args.file,
                FileKind::Sweep,
                "simulate",
                "a scenario, a component system or an MC-IPC system",
            ))
        }
        SystemFile::Scenario(scenario, warnings) => (scenario, warnings),
    };
    // Prints the warnings; true only when --deny-warnings stops the command.
    if diagnostics::report_warnings(&warnings, args.deny_warnings) {
        return Ok(crate::exit::bad_input());
    }
    check_outputs(args)?;
    // The trace and --jobs stream; only the Gantt chart and --json's job array stay in memory.
    let options = Options {
        until: args.until,
        seed: args.seed,
        record_trace: args.svg.is_some(),
        record_jobs: (args.json && args.jobs.is_none()) || args.svg.is_some(),
    };
    let (line, column) = key_location(&text, "duration");
    let location = format!("{}:{line}:{column}", args.file.display());
    if let Some(stop) = check_size(args, &scenario, &options, &location, SCENARIO_KEEPING) {
        return stop;
    }
    let mut streams = Streams {
        trace: match &args.trace {
            Some(path) => Some(ChromeStream::new(create(path)?, &scenario, &options)),
            None => None,
        },
        jobs: match &args.jobs {
            Some(path) => Some(JobLines::new(create(path)?, &scenario)),
            None => None,
        },
    };
    let horizon = args.until.unwrap_or(scenario.duration).as_nanos();
    // Hidden when standard error is not a terminal; ticks in simulated microseconds.
    let bar = ProgressBar::new(horizon / 1_000).with_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}% simulated, eta {eta}")
            .map_err(|e| e.to_string())?,
    );
    let run = bulwark_sim::run_recorded(&scenario, &options, &mut streams, &mut |now: Instant| {
        bar.set_position(now.as_nanos() / 1_000)
    });
    bar.finish_and_clear();
    let mut outcome = match run {
        Ok(outcome) => outcome,
        Err(e) => {
            // A stream cut short is not a trace or a job list: leave no half-written file.
            for path in args.trace.iter().chain(&args.jobs) {
                let _ = std::fs::remove_file(path);
            }
            return Err(format!("{}: {e}", args.file.display()));
        }
    };
    streams.close(args)?;
    if args.jobs.is_some() {
        // The jobs went to the --jobs file; the Gantt chart alone may have kept them.
        outcome.jobs = None;
    }
    if let Some(path) = &args.svg {
        let svg = bulwark_lab::gantt::gantt_svg(&outcome, Instant::ZERO, outcome.until)
            .unwrap_or_default();
        std::fs::write(path, svg).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if args.json {
        outln!(
            "{}",
            bulwark_lab::metrics_json::scenario_metrics_json(&scenario, &outcome)
        );
    } else {
        out!("{}", summary(&outcome));
        let measures = bulwark_lab::component_measures::component_measures(&scenario, &outcome);
        if let Some(measures) = measures {
            out!("{}", super::component_measures::render(&measures));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(o: &Outcome) -> String {
    let time = |ns: u64| Duration::from_nanos(ns).to_string();
    let stats = crate::table::min_mean_max;
    let rows: Vec<Vec<String>> = o
        .tasks
        .iter()
        .enumerate()
        .map(|(id, t)| {
            vec![
                t.name.clone(),
                // A cluster's member runs on any of its cores: the cluster names where.
                o.cluster_of(id)
                    .map_or_else(|| t.core.to_string(), str::to_owned),
                t.jobs.to_string(),
                t.misses.to_string(),
                t.first_miss
                    .map_or_else(|| "-".to_owned(), |at| at.to_string()),
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
            "first miss",
            "response min / mean / max",
            "wakeup latency min / mean / max",
            "kernel",
            "preemptions",
        ],
        &rows,
    ));
    out
}

/// The files the run writes (`--trace`, `--svg`, `--jobs`) can be written: checked once the
/// arguments are known to fit the file, before the run.
fn check_outputs(args: &SimulateArgs) -> Result<(), String> {
    let outputs = [&args.trace, &args.svg, &args.jobs];
    super::exports::check_writable(outputs.into_iter().flatten().map(|path| path.as_path()))
}

/// An MC-IPC system runs its phases on the scenario machine, as `mcipc-case-study --file`
/// does: under the protocol the file names (all three when it names none), each phase for
/// `--until` (default 10 s, that command's default phase length). An invalid file is reported
/// by that command, located.
fn mc_ipc(study: &McIpcSystem, args: &SimulateArgs) -> Result<ExitCode, String> {
    use crate::cli::CaseStudyArgs;
    let protocol = study.protocol;
    if args.jobs.is_some() {
        eprintln!(
            "error: {}: --jobs is not available for MC-IPC systems (their jobs are summarised \
             per phase); allowed: --until (each phase's length), --json, --trace, --svg",
            args.file.display()
        );
        return Ok(crate::exit::bad_input());
    }
    let drawn = args.trace.is_some() || args.svg.is_some();
    if drawn && protocol.is_none() {
        eprintln!(
            "error: {}: --trace and --svg draw one protocol's run, but the file names none; \
             allowed: protocol = {} in the file",
            args.file.display(),
            super::mcipc_run::protocol_choices()
        );
        return Ok(crate::exit::bad_input());
    }
    check_outputs(args)?;
    let phase_length = args.until.unwrap_or(Duration::from_secs(10));
    if let Some(stop) = super::mcipc_size::check(study, phase_length, drawn, args) {
        return stop;
    }
    let case_study = CaseStudyArgs {
        protocol,
        phase: None,
        file: Some(args.file.clone()),
        phase_length,
        svg: None,
        json: args.json,
        seed: args.seed,
    };
    // Sized above, with this command's outputs and --until.
    let sized = super::mcipc::Sizing::CheckedByCaller;
    let Some(drawn_protocol) = protocol.filter(|_| drawn) else {
        return super::mcipc::run_drawing(&case_study, None, sized);
    };
    let mut draw = |study: &bulwark_spec::mc_ipc_toml::McIpcSystem, traces| {
        super::mcipc_trace::write(study, traces, drawn_protocol, args)
    };
    super::mcipc::run_drawing(&case_study, Some(&mut draw), sized)
}

/// The streaming outputs of one run, told everything as the machine produces it.
struct Streams {
    trace: Option<ChromeStream<BufWriter<File>>>,
    jobs: Option<JobLines<BufWriter<File>>>,
}

impl Streams {
    /// Flushes both files; the first write error names its file.
    fn close(self, args: &SimulateArgs) -> Result<(), String> {
        let failed = |path: &Option<PathBuf>, e: std::io::Error| {
            let path = path.as_deref().unwrap_or(Path::new("-"));
            format!("{}: {e}", path.display())
        };
        if let Some(trace) = self.trace {
            trace.into_inner().map_err(|e| failed(&args.trace, e))?;
        }
        if let Some(jobs) = self.jobs {
            jobs.into_inner().map_err(|e| failed(&args.jobs, e))?;
        }
        Ok(())
    }
}

impl Recorder for Streams {
    fn wants_trace(&self) -> bool {
        self.trace.is_some()
    }

    fn wants_jobs(&self) -> bool {
        self.jobs.is_some()
    }

    fn job(&mut self, record: &JobRecord) {
        if let Some(jobs) = self.jobs.as_mut() {
            jobs.job(record);
        }
    }

    fn slice(&mut self, slice: &Slice) {
        if let Some(trace) = self.trace.as_mut() {
            trace.slice(slice);
        }
    }

    fn mark(&mut self, mark: &Mark) {
        if let Some(trace) = self.trace.as_mut() {
            trace.mark(mark);
        }
    }

    fn budget(&mut self, sample: &BudgetSample) {
        if let Some(trace) = self.trace.as_mut() {
            trace.budget(sample);
        }
    }

    fn finish(&mut self) {
        if let Some(trace) = self.trace.as_mut() {
            trace.finish();
        }
    }
}

/// An output file, created before the run so a bad path fails at once.
fn create(path: &Path) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A warning about the run's size, located at the scenario's `duration`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeWarning {
    /// `file:line:column`.
    pub location: String,
    /// What is expected.
    pub message: String,
    /// What to do about it.
    pub help: String,
}

impl SizeWarning {
    /// `file:line:column: message (help)`, as the scenario's own warnings print.
    pub fn plain(&self) -> String {
        format!("{}: {} ({})", self.location, self.message, self.help)
    }
}

/// Warns about what running `scenario` with these outputs will produce, and refuses a kept
/// job list that would not fit in memory: `Some` (the command's result) when the command
/// must stop before the run.
pub fn check_size(
    args: &SimulateArgs,
    scenario: &Scenario,
    options: &Options,
    location: &str,
    keeping: Keeping,
) -> Option<Result<ExitCode, String>> {
    let estimate = bulwark_sim::estimate(scenario, options);
    let horizon = options.until.unwrap_or(scenario.duration);
    let over = match options.until {
        Some(_) => format!("{horizon} (--until)"),
        None => horizon.to_string(),
    };
    let warnings = size_warnings(args, options, &estimate, (&over, location), keeping);
    if report_size_warnings(&warnings, args.deny_warnings) {
        return Some(Ok(crate::exit::bad_input()));
    }
    kept_refusal(args, options, keeping, estimate.jobs, available_memory()).map(Err)
}

/// The warnings about what a run with these outputs will produce, from the `estimate` of
/// its jobs over the run (see `bulwark_sim::estimate`), named `over`, each at `location`.
pub(super) fn size_warnings(
    args: &SimulateArgs,
    options: &Options,
    estimate: &Estimate,
    (over, location): (&str, &str),
    keeping: Keeping,
) -> Vec<SizeWarning> {
    let mut found = Vec::new();
    let mut warn = |message: String, help: &str| {
        found.push(SizeWarning {
            location: location.to_owned(),
            message,
            help: help.to_owned(),
        })
    };
    if estimate.jobs >= BILLIONS {
        warn(
            format!(
                "about {} jobs in {over}: the run will take long",
                count(estimate.jobs)
            ),
            "a shorter --until gives the same rates sooner",
        );
    }
    if args.trace.is_some() {
        let bytes = estimate.trace_events.saturating_mul(TRACE_BYTES_PER_EVENT);
        if bytes > LARGE_OUTPUT_BYTES || estimate.trace_events >= BILLIONS {
            warn(
                format!(
                    "the trace will be at least about {} ({} events for {} jobs in {over})",
                    megabytes(bytes),
                    count(estimate.trace_events),
                    count(estimate.jobs)
                ),
                if keeping.streams {
                    "it streams to the file, but a shorter --until keeps it small enough to open"
                } else {
                    "it is kept in memory until the run ends; a shorter --until keeps it small"
                },
            );
        }
    }
    if options.record_jobs {
        let bytes = estimate.jobs.saturating_mul(keeping.job_bytes);
        if bytes > LARGE_OUTPUT_BYTES {
            warn(
                format!(
                    "keeping every job for {} takes about {} of memory ({} jobs in {over})",
                    if args.svg.is_some() {
                        "--svg"
                    } else {
                        "--json"
                    },
                    megabytes(bytes),
                    count(estimate.jobs)
                ),
                if keeping.streams {
                    "--jobs FILE streams them as JSON Lines instead"
                } else {
                    "a shorter --until keeps fewer"
                },
            );
        }
    }
    found
}

/// Why a run is refused before it starts: what it keeps in memory to its end for its
/// outputs (`jobs` kept for --json or --svg, a trace kept where it does not stream) would
/// need more than the `available` bytes. Such a run would be killed part-way, after pushing
/// a shared machine into swap.
fn kept_refusal(
    args: &SimulateArgs,
    options: &Options,
    keeping: Keeping,
    jobs: u64,
    available: Option<u64>,
) -> Option<String> {
    let mut needed = 0u64;
    let mut outputs = Vec::new();
    if options.record_jobs {
        needed = needed.saturating_add(jobs.saturating_mul(keeping.job_bytes));
        outputs.push(if args.json { "--json" } else { "--svg" });
    }
    if options.record_trace && !keeping.streams {
        needed = needed.saturating_add(jobs.saturating_mul(keeping.trace_bytes));
        outputs.push(if args.trace.is_some() {
            "--trace"
        } else {
            "--svg"
        });
    }
    outputs.dedup();
    let available = available?;
    if needed <= available {
        return None;
    }
    let instead = if keeping.streams && args.json {
        "--jobs FILE streams the jobs as JSON Lines, or a shorter --until keeps fewer"
    } else {
        "a shorter --until keeps fewer"
    };
    Some(format!(
        "{}: the run would keep about {} in memory for {} ({} jobs), more than the {} this \
         machine has available; not run ({instead})",
        args.file.display(),
        megabytes(needed),
        outputs.join(" and "),
        count(jobs),
        megabytes(available),
    ))
}

/// The memory the kernel says can be taken without swapping (Linux's `MemAvailable`), or
/// `None` where it does not say.
pub(super) fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes.saturating_mul(1_024))
}

/// Prints `warnings` as `report_warnings` prints the file's (denied with --deny-warnings);
/// true when they must stop the command.
pub(super) fn report_size_warnings(warnings: &[SizeWarning], deny: bool) -> bool {
    for warning in warnings {
        if deny {
            eprintln!("{} [a warning, denied]", warning.plain());
        } else {
            eprintln!("warning: {}", warning.plain());
        }
    }
    deny && !warnings.is_empty()
}

/// The 1-based line and column of the top-level `key = ...` in a TOML text, or 1:1.
fn key_location(text: &str, key: &str) -> (usize, usize) {
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            // Past the top-level keys.
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                let column = line[..line.len() - trimmed.len()].chars().count() + 1;
                return (index + 1, column);
            }
        }
    }
    (1, 1)
}

/// A count with thousands separators: 4,000,000.
pub(super) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Bytes in decimal megabytes, rounded down.
pub(super) fn megabytes(bytes: u64) -> String {
    format!("{} MB", count(bytes / 1_000_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_sizes_read_like_the_help_says() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(4_000_000), "4,000,000");
        assert_eq!(count(1_234_567_890), "1,234,567,890");
        assert_eq!(megabytes(915_400_000), "915 MB");
    }

    #[test]
    fn kept_records_beyond_the_available_memory_are_refused() {
        use clap::Parser;
        let args = |extra: &[&str]| {
            let mut argv = vec!["bulwark", "simulate", "s.toml"];
            argv.extend_from_slice(extra);
            match crate::cli::Cli::parse_from(argv).command {
                crate::cli::Command::Simulate(args) => args,
                _ => unreachable!("a simulate command line"),
            }
        };
        let keeping = |record_jobs, record_trace| Options {
            record_jobs,
            record_trace,
            ..Options::default()
        };
        let json = args(&["--json"]);
        let jobs_only = keeping(true, false);
        // 1,000 jobs of 424 bytes: refused below 424,000 bytes, run at it and above.
        let refusal = kept_refusal(&json, &jobs_only, SCENARIO_KEEPING, 1_000, Some(423_999));
        assert_eq!(
            refusal.expect("refused"),
            "s.toml: the run would keep about 0 MB in memory for --json (1,000 jobs), more than \
             the 0 MB this machine has available; not run (--jobs FILE streams the jobs as JSON \
             Lines, or a shorter --until keeps fewer)"
        );
        let fits = kept_refusal(&json, &jobs_only, SCENARIO_KEEPING, 1_000, Some(424_000));
        assert_eq!(fits, None);
        // Where the system does not say, nothing is refused.
        let unknown = kept_refusal(&json, &jobs_only, SCENARIO_KEEPING, u64::MAX, None);
        assert_eq!(unknown, None);
        // Nothing kept, nothing refused.
        let streamed = kept_refusal(&json, &keeping(false, false), SCENARIO_KEEPING, 9, Some(0));
        assert_eq!(streamed, None);
        // A kept trace counts where it does not stream: 10^6 jobs of 1,000 + 500 bytes.
        let traced = args(&["--json", "--trace", "t.json"]);
        let components = Keeping {
            job_bytes: 1_000,
            trace_bytes: 500,
            streams: false,
        };
        let refusal = kept_refusal(
            &traced,
            &keeping(true, true),
            components,
            1_000_000,
            Some(1),
        );
        let refusal = refusal.expect("refused");
        assert!(
            refusal.contains("about 1,500 MB in memory for --json and --trace (1,000,000 jobs)"),
            "{refusal}"
        );
        assert!(
            refusal.ends_with("(a shorter --until keeps fewer)"),
            "{refusal}"
        );
        let streamed = kept_refusal(&traced, &keeping(false, true), SCENARIO_KEEPING, 9, Some(0));
        assert_eq!(streamed, None);
    }

    #[test]
    fn the_duration_key_is_located_among_the_top_level_keys_only() {
        let text = "name = \"x\"\n  duration = \"1s\"\n[[task]]\nduration = 3\n";
        assert_eq!(key_location(text, "duration"), (2, 3));
        // Not a prefix of another key, not inside a table.
        assert_eq!(key_location("durations = 1\n", "duration"), (1, 1));
        assert_eq!(key_location("[[task]]\nduration = 1\n", "duration"), (1, 1));
    }
}
