//! `simulate --trace/--svg` of an MC-IPC file: its phases laid end to end on one timeline
//! (phase k from `(k - 1) x --until`), under the protocol the file names, one row per task
//! and a track per core across clusters; a server's operation is drawn as its client's time.

use std::path::Path;

use bulwark_core::{Duration, Instant};
use bulwark_lab::experiments::mcipc_case_study::SEED;
use bulwark_sim::trace::Trace;
use bulwark_spec::mc_ipc_toml::{GateProtocol, McIpcSystem};

use crate::cli::SimulateArgs;

/// Lays `traces` (one per phase, in order, from the run that also made the table) end to end
/// and writes `--trace` and `--svg`.
pub fn write(
    study: &McIpcSystem,
    traces: Vec<Trace>,
    protocol: GateProtocol,
    args: &SimulateArgs,
) -> Result<(), String> {
    let length = args.until.unwrap_or(Duration::from_secs(10));
    let files = (args.trace.as_deref(), args.svg.as_deref());
    let run = (length, args.seed.unwrap_or(SEED));
    write_to(study, traces, protocol, run, &args.file, files)
}

/// Lays `traces` (one per phase of `length`, in order, run with `seed`) of `file`'s system
/// end to end and writes the Chrome trace and the Gantt chart to `files` (each when given):
/// what `simulate` draws of the simulator's phases, and `run` of the host's.
pub fn write_to(
    study: &McIpcSystem,
    traces: Vec<Trace>,
    protocol: GateProtocol,
    (length, seed): (Duration, u64),
    file: &Path,
    files: (Option<&Path>, Option<&Path>),
) -> Result<(), String> {
    let phases = traces.len();
    let mut trace = Trace::default();
    // Jobs are numbered on across phases, per task.
    let mut jobs_before = vec![0u64; study.tasks.len()];
    for (index, part) in traces.into_iter().enumerate() {
        let start = length.saturating_mul(index as u64);
        let shift = |at: Instant| at.saturating_add(start);
        trace
            .slices
            .extend(part.slices.into_iter().map(|mut slice| {
                slice.start = shift(slice.start);
                slice.end = shift(slice.end);
                slice
            }));
        let mut jobs_here = vec![0u64; study.tasks.len()];
        for mut mark in part.marks {
            let task = mark.task.index();
            if let (Some(before), Some(here)) = (jobs_before.get(task), jobs_here.get_mut(task)) {
                *here = (*here).max(mark.job + 1);
                mark.job += before;
            }
            mark.at = shift(mark.at);
            trace.marks.push(mark);
        }
        for (before, here) in jobs_before.iter_mut().zip(jobs_here) {
            *before += here;
        }
    }
    let until = Instant::ZERO.saturating_add(length.saturating_mul(phases as u64));
    let cores: u64 = study.clusters.iter().map(|c| c.cores).sum();
    let first_core: Vec<u16> = study
        .clusters
        .iter()
        .scan(0u64, |next, cluster| {
            let first = *next;
            *next += cluster.cores;
            Some(u16::try_from(first).unwrap_or(u16::MAX))
        })
        .collect();
    super::exports::write_to(
        file,
        files.0,
        files.1,
        super::exports::Recorded {
            policy: format!("clustered reservations ({})", protocol.label()),
            seed,
            until,
            // A task's row sits under its cluster's first core: it runs on any of them.
            tasks: study
                .tasks
                .iter()
                .map(|task| {
                    let core = study
                        .reservations
                        .get(task.reservation)
                        .and_then(|r| first_core.get(r.cluster))
                        .copied()
                        .unwrap_or(0);
                    (task.name.clone(), core)
                })
                .collect(),
            cores: cores as usize,
            trace,
        },
    )
}
