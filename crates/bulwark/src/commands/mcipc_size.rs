//! The size checks before an MC-IPC file's phases run (`simulate`, `mcipc-case-study`). Each
//! phase's run keeps every job and answered invocation until its summary is made, and a drawn
//! run (`simulate --trace`, `--svg`) keeps every phase's trace to the end to lay them end to
//! end; a run that would not fit in memory is refused instead of being killed part-way.

use std::process::ExitCode;

use bulwark_core::Duration;
use bulwark_lab::experiments::mcipc_case_study::SEED;
use bulwark_sim::{Estimate, Options};
use bulwark_spec::mc_ipc_toml::{GateProtocol, McIpcSystem};

use super::simulate::{
    available_memory, count, megabytes, report_size_warnings, size_warnings, Keeping,
};
use crate::cli::SimulateArgs;

/// Memory per job of one phase's kept records. Peak RSS (KiB) of `simulate` over `--until`
/// 100 s and 400 s, per job the largest phase gains: `one-core.toml` 380 bytes (49 jobs a
/// second in its largest phase; 333 bytes a job at 8000 s), `case-study.toml` 192 (887 a
/// second), `spr-clients.toml` 146, `cbs-rogue.toml` 142: the largest, rounded up for the
/// vectors' growth.
const RECORD_BYTES: u64 = 400;

/// Memory per job, over every phase, of a trace kept to the end. Peak RSS with `--trace`
/// over 50 s and 200 s, per job all phases gain (records included): `one-core.toml` 3,385
/// bytes (160 jobs a second; 3,370 between 400 s and 800 s, where 439 MB was reached),
/// `spr-clients.toml` 2,452, `case-study.toml` 2,364, `cbs-rogue.toml` 2,124. The phases'
/// servers and partitions draw more than their jobs count. 3,300 bytes, what `one-core.toml`
/// alone had given, left the estimate 0.3 % under its peak at 800 s; 3,500 leaves room.
const TRACE_BYTES: u64 = 3_500;

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
    let phases = super::mcipc::every_phase(study);
    let seed = args.seed.unwrap_or(SEED);
    let (one_protocol, largest) = phase_jobs(study, &phases, length, seed);
    // A file naming no protocol runs its phases under each, one run after another.
    let protocols = match study.protocol {
        Some(_) => 1,
        None => GateProtocol::ALL.len() as u64,
    };
    let total = Estimate {
        jobs: one_protocol.jobs.saturating_mul(protocols),
        trace_events: one_protocol.trace_events.saturating_mul(protocols),
    };
    // No job list is kept for an output: the warnings speak of the jobs and the trace.
    let options = Options::default();
    let runs = match phases.len() {
        1 => format!("{length} (--until)"),
        count => format!("{count} phases of {length} (--until)"),
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
    let kept = Kept {
        records: match phases.len() {
            1 => "the run's records",
            _ => "a phase's records",
        },
        drawn: drawn.then_some(match args.trace {
            Some(_) => "--trace",
            None => "--svg",
        }),
        shorter: "--until",
    };
    refusal(&location, &kept, (total.jobs, largest), available_memory()).map(Err)
}

/// The jobs estimated over `phases` (1-based; 0: the system as given), and in the largest one,
/// as the runs lower them (the gate does not change which jobs are released).
fn phase_jobs(
    study: &McIpcSystem,
    phases: &[usize],
    length: Duration,
    seed: u64,
) -> (Estimate, u64) {
    let protocol = study.protocol.unwrap_or(GateProtocol::McIpc);
    let options = Options {
        until: Some(length),
        ..Options::default()
    };
    let mut total = Estimate {
        jobs: 0,
        trace_events: 0,
    };
    let mut largest = 0;
    for &phase in phases {
        let scenario = study.scenario(phase.checked_sub(1), protocol, true, seed, length);
        let one = bulwark_sim::estimate(&scenario, &options);
        total.jobs = total.jobs.saturating_add(one.jobs);
        total.trace_events = total.trace_events.saturating_add(one.trace_events);
        largest = largest.max(one.jobs);
    }
    (total, largest)
}

/// `mcipc-case-study`'s refusal: the largest of `phases`' records (see [`phase_jobs`]) over
/// `length` would need more than the memory available (it draws no trace, and warns of
/// nothing: its runs are the paper's, their length the user's choice).
pub fn refuse_case_study(
    study: &McIpcSystem,
    phases: &[usize],
    length: Duration,
    seed: u64,
    file: &str,
) -> Option<String> {
    let (total, largest) = phase_jobs(study, phases, length, seed);
    let records = match phases.len() {
        1 => "the run's records",
        _ => "a phase's records",
    };
    let kept = Kept {
        records,
        drawn: None,
        shorter: "--phase-length",
    };
    refusal(file, &kept, (total.jobs, largest), available_memory())
}

/// What a run keeps, as its refusal names it.
struct Kept<'a> {
    /// The records kept until each run's summary.
    records: &'a str,
    /// The output that keeps every phase's trace (`--trace`, `--svg`), when drawn.
    drawn: Option<&'a str>,
    /// The option that makes the runs shorter.
    shorter: &'a str,
}

/// Why the run of `file` is refused: one phase's records (`largest` jobs) and, when drawn,
/// the trace of all `jobs` would need more than the `available` bytes.
fn refusal(
    file: &str,
    kept: &Kept,
    (jobs, largest): (u64, u64),
    available: Option<u64>,
) -> Option<String> {
    let mut needed = largest.saturating_mul(RECORD_BYTES);
    let mut what = format!("{} ({} jobs)", kept.records, count(largest));
    if let Some(output) = kept.drawn {
        needed = needed.saturating_add(jobs.saturating_mul(TRACE_BYTES));
        what.push_str(&format!(" and {output} ({} jobs)", count(jobs)));
    }
    let available = available?;
    (needed > available).then(|| {
        format!(
            "{file}: the run would keep about {} in memory for {what}, more than the {} this \
             machine has available; not run (a shorter {} keeps fewer)",
            megabytes(needed),
            megabytes(available),
            kept.shorter,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHASES: Kept = Kept {
        records: "a phase's records",
        drawn: None,
        shorter: "--until",
    };
    const TRACED: Kept = Kept {
        drawn: Some("--trace"),
        ..PHASES
    };

    #[test]
    fn records_and_trace_are_weighed_against_the_memory_available() {
        // 1,000 jobs in the largest phase keep 400,000 bytes; 4,000 drawn keep 14,000,000 more.
        let jobs = (4_000, 1_000);
        assert_eq!(refusal("s.toml", &PHASES, jobs, Some(400_000)), None);
        let refused = refusal("s.toml", &PHASES, jobs, Some(399_999)).expect("refused");
        assert!(
            refused.starts_with(
                "s.toml: the run would keep about 0 MB in memory for a phase's \
                 records (1,000 jobs), more than the 0 MB"
            ),
            "{refused}"
        );
        assert_eq!(refusal("s.toml", &TRACED, jobs, Some(14_400_000)), None);
        let refused = refusal("s.toml", &TRACED, jobs, Some(14_399_999)).expect("refused");
        assert!(
            refused.contains(
                "about 14 MB in memory for a phase's records (1,000 jobs) and --trace (4,000 jobs)"
            ),
            "{refused}"
        );
        assert!(
            refused.ends_with("(a shorter --until keeps fewer)"),
            "{refused}"
        );
        // Unknown memory refuses nothing.
        let most = (u64::MAX, u64::MAX);
        assert_eq!(refusal("s.toml", &TRACED, most, None), None);
    }
}
