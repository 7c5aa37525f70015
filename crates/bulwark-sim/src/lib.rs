//! Bulwark's machine: a deterministic discrete-event simulation of cores with one-shot timers
//! and a cost model, driving `bulwark-core` policies through the calls a kernel makes.
//!
//! The same scenario and seed always give the same outcome, byte for byte: events are ordered
//! by (time, sequence number), and every random draw comes from a per-task stream seeded by
//! the scenario's seed.

pub mod metrics;
pub mod trace;

use bulwark_core::Instant;
pub use metrics::{CoreMetrics, JobRecord, Stats, TaskMetrics};
use serde::Serialize;
pub use trace::{Mark, MarkKind, Slice, SliceKind, Trace};

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The scenario's name.
    pub scenario: String,
    /// The policy's name.
    pub policy: &'static str,
    /// The seed used.
    pub seed: u64,
    /// Where the run stopped.
    pub until: Instant,
    /// Events the machine processed.
    pub events: u64,
    /// Per-task aggregates, indexed by task id.
    pub tasks: Vec<TaskMetrics>,
    /// Per-core aggregates, indexed by core.
    pub cores: Vec<CoreMetrics>,
    /// Every job, when asked for.
    pub jobs: Option<Vec<JobRecord>>,
    /// The trace, when asked for.
    pub trace: Option<Trace>,
}
