//! `simulate` of an MC-IPC file: the size checks before its phases run. Each phase's run keeps
//! every job and answered invocation until its summary is made, and a drawn run (`--trace`,
//! `--svg`) keeps every phase's trace to the end to lay them end to end; a run that would not
//! fit in memory is refused instead of being killed part-way.

use std::process::ExitCode;

use bulwark_core::Duration;
use bulwark_lab::experiments::mcipc_case_study::SEED;
use bulwark_sim::{Estimate, Options};
use bulwark_spec::mc_ipc_toml::{GateProtocol, McIpcSystem};

use super::simulate::{
    available_memory, count, megabytes, report_size_warnings, size_warnings, Keeping,
};
use crate::cli::SimulateArgs;

/// Memory per job of one phase's kept records: `scenarios/mcipc/one-core.toml` peaked at
/// 11,532 kB RSS over `--until 200s` (its largest phase 9,807 jobs estimated) and at
/// 135,816 kB over 8000 s (392,007): 333 bytes a job, rounded up for the vectors' growth.
const RECORD_BYTES: u64 = 400;

/// Memory per job, over every phase, of a trace kept to the end: the same file peaked at
/// 112,044 kB with `--trace` over 200 s (32,014 jobs in its 4 phases): 3,216 bytes a job
/// (3,271 over 800 s). The phases' servers and partitions draw more than their jobs count.
const TRACE_BYTES: u64 = 3_300;

/// What the warnings speak of: a trace kept to the end, no job list for an output.
const KEEPING: Keeping = Keeping {
    job_bytes: 0,
    trace_bytes: TRACE_BYTES,
    streams: false,
};

/// Warns about what the phases of `length` will produce and refuses a run whose kept records
/// and trace (when `drawn`) would not fit in memory: `Some` (the command's result) when the
/// command must stop before the run.
pub fn check(
    study: &McIpcSystem,
    length: Duration,
    drawn: bool,
    args: &SimulateArgs,
) -> Option<Result<ExitCode, String>> {
    let (one_protocol, largest) = phase_jobs(study, length, args.seed.unwrap_or(SEED));
    let phases = study.phases.len().max(1);
    // A file naming no protocol runs its phases under each, one run after another.
    let protocols = match study.protocol {
        Some(_) => 1,
        None => GateProtocol::ALL.len() as u64,
    };
    let total = Estimate {
        jobs: one_protocol.jobs.saturating_mul(protocols),
        trace_events: one_protocol.trace_events.saturating_mul(protocols),
    };
    let options = Options {
        until: Some(length.saturating_mul(phases as u64)),
        record_trace: drawn,
        ..Options::default()
    };
    let runs = match phases {
        1 => format!("{length} (--until)"),
        _ => format!("{phases} phases of {length} (--until)"),
    };
    let over = match protocols {
        1 => runs,
        _ => format!("{runs} under each of {protocols} protocols"),
    };
    let location = args.file.display().to_string();
    let warnings = size_warnings(args, &options, &total, (&over, &location), KEEPING);
    if report_size_warnings(&warnings, args.deny_warnings) {
        return Some(Ok(crate::exit::bad_input()));
    }
    let records = match phases {
        1 => "the run's records",
        _ => "a phase's records",
    };
    refusal(
        args,
        drawn,
        (total.jobs, largest),
        records,
        available_memory(),
    )
    .map(Err)
}

/// The jobs estimated over every phase, and in the largest one, as the runs lower them (the
/// gate does not change which jobs are released).
fn phase_jobs(study: &McIpcSystem, length: Duration, seed: u64) -> (Estimate, u64) {
    let protocol = study.protocol.unwrap_or(GateProtocol::McIpc);
    let phases: Vec<Option<usize>> = match study.phases.len() {
        0 => vec![None],
        count => (0..count).map(Some).collect(),
    };
    let options = Options {
        until: Some(length),
        ..Options::default()
    };
    let mut total = Estimate {
        jobs: 0,
        trace_events: 0,
    };
    let mut largest = 0;
    for phase in phases {
        let scenario = study.scenario(phase, protocol, true, seed, length);
        let one = bulwark_sim::estimate(&scenario, &options);
        total.jobs = total.jobs.saturating_add(one.jobs);
        total.trace_events = total.trace_events.saturating_add(one.trace_events);
        largest = largest.max(one.jobs);
    }
    (total, largest)
}

/// Why the run is refused: one phase's `records` (`largest` jobs) and, when `drawn`, the
/// trace of all `jobs` would need more than the `available` bytes.
fn refusal(
    args: &SimulateArgs,
    drawn: bool,
    (jobs, largest): (u64, u64),
    records: &str,
    available: Option<u64>,
) -> Option<String> {
    let mut needed = largest.saturating_mul(RECORD_BYTES);
    let mut kept = format!("{records} ({} jobs)", count(largest));
    if drawn {
        needed = needed.saturating_add(jobs.saturating_mul(TRACE_BYTES));
        let output = if args.trace.is_some() {
            "--trace"
        } else {
            "--svg"
        };
        kept.push_str(&format!(" and {output} ({} jobs)", count(jobs)));
    }
    let available = available?;
    (needed > available).then(|| {
        format!(
            "{}: the run would keep about {} in memory for {kept}, more than the {} this \
             machine has available; not run (a shorter --until keeps fewer)",
            args.file.display(),
            megabytes(needed),
            megabytes(available),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(trace: bool) -> SimulateArgs {
        use clap::Parser;
        let mut argv = vec!["bulwark", "simulate", "study.toml"];
        if trace {
            argv.extend(["--trace", "trace.json"]);
        }
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Simulate(args) => args,
            _ => unreachable!("a simulate command line"),
        }
    }

    const PHASE: &str = "a phase's records";

    #[test]
    fn records_and_trace_are_weighed_against_the_memory_available() {
        // 1,000 jobs in the largest phase keep 400,000 bytes; 4,000 drawn keep 13,200,000 more.
        assert_eq!(
            refusal(&args(false), false, (4_000, 1_000), PHASE, Some(400_000)),
            None
        );
        let refused =
            refusal(&args(false), false, (4_000, 1_000), PHASE, Some(399_999)).expect("refused");
        assert!(refused.contains("about 0 MB in memory for a phase's records (1,000 jobs)"));
        assert_eq!(
            refusal(&args(true), true, (4_000, 1_000), PHASE, Some(13_600_000)),
            None
        );
        let refused =
            refusal(&args(true), true, (4_000, 1_000), PHASE, Some(13_599_999)).expect("refused");
        assert!(
            refused.contains(
                "about 13 MB in memory for a phase's records (1,000 jobs) and --trace (4,000 jobs)"
            ),
            "{refused}"
        );
        // Unknown memory refuses nothing.
        assert_eq!(
            refusal(&args(true), true, (u64::MAX, u64::MAX), PHASE, None),
            None
        );
    }
}
