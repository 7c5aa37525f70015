//! `--trace` and `--svg` for the machines that record a whole trace (component systems and
//! MC-IPC files): their run shown as a scenario run, written by the same Chrome trace and
//! Gantt exporters as a scenario's.

use std::path::Path;

use bulwark_core::Instant;
use bulwark_sim::trace::Trace;
use bulwark_sim::{CoreMetrics, Outcome, TaskMetrics};

/// Checks, before a run, that each of `outputs` (the paths `--trace`, `--svg` or `--jobs`
/// name) can be written, so that a long run is not lost to a bad path at its end. Leaves no
/// trace: a file that was not there is removed again, one that was is opened without
/// being changed.
pub fn check_writable<'a>(outputs: impl IntoIterator<Item = &'a Path>) -> Result<(), String> {
    for path in outputs {
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| {
                format!(
                    "{}: cannot write this output: {e} (allowed: a file path in a folder that \
                     exists and this user can write)",
                    path.display()
                )
            })?;
        if !existed {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}

/// A recorded run as the exporters read it: `tasks` are (name, core) rows.
pub struct Recorded {
    pub policy: String,
    pub seed: u64,
    pub until: Instant,
    pub tasks: Vec<(String, u16)>,
    pub cores: usize,
    pub trace: Trace,
}

/// Writes the Chrome trace to `trace` and the Gantt chart (from 0 to the end) to `svg` of
/// `run` of `file`, named after the file's stem, each when given.
pub fn write_to(
    file: &Path,
    trace: Option<&Path>,
    svg: Option<&Path>,
    run: Recorded,
) -> Result<(), String> {
    if trace.is_none() && svg.is_none() {
        return Ok(());
    }
    let view = Outcome {
        scenario: file
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
        policy: run.policy,
        seed: run.seed,
        until: run.until,
        events: 0,
        tasks: run
            .tasks
            .into_iter()
            .map(|(name, core)| TaskMetrics {
                name,
                core,
                ..TaskMetrics::default()
            })
            .collect(),
        cores: vec![CoreMetrics::default(); run.cores.max(1)],
        jobs: None,
        trace: Some(run.trace),
        clusters: Vec::new(),
        components: None,
    };
    let save = |path: &Path, text: String| {
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    if let Some(path) = trace {
        save(
            path,
            bulwark_lab::chrome::chrome_trace_json(&view).unwrap_or_default(),
        )?;
    }
    if let Some(path) = svg {
        save(
            path,
            bulwark_lab::gantt::gantt_svg(&view, Instant::ZERO, view.until).unwrap_or_default(),
        )?;
    }
    Ok(())
}
