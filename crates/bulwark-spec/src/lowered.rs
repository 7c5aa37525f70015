//! A component system lowered for running and bounding: its tasks and CPIs by index, each
//! body a list of steps, each CPI's ceiling and pool as the configuration analyzer settled
//! them. The machine runs it as it is (`bulwark_sim::components` lowers it to a scenario), and the blocking
//! analysis (`bulwark_analysis::blocking::System::lowered`) reads its execution times and
//! requests from the same bodies, so the two cannot describe different systems.

use bulwark_core::ipc::CpiProtocol;
use bulwark_core::{Duration, Priority};

/// One step of a task's job or of a procedure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Execute for this long.
    Execute(Duration),
    /// Call the CPI at this index of the system's CPIs and wait for the reply.
    Request(usize),
}

/// A periodic task originating in an active component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweredTask {
    /// Its name, for reports.
    pub name: String,
    /// Its priority (larger is more important).
    pub priority: Priority,
    /// Its period, also its relative deadline.
    pub period: Duration,
    /// Its first release.
    pub offset: Duration,
    /// What a job does in its own component.
    pub body: Vec<Step>,
    /// Its scheduling context's reservation (sporadic-server rule): every thread working for
    /// it runs on the context ([`SchedContext`](bulwark_core::reservation::SchedContext));
    /// `None`: unlimited budget and no non-preemptive region.
    pub reservation: Option<bulwark_core::reservation::Reservation>,
}

/// A CPI of a passive component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweredCpi {
    /// Its name, for reports.
    pub name: String,
    /// Its protocol.
    pub protocol: CpiProtocol,
    /// The priority its pool waits at: its ceiling (ignored for NPCS, which runs at 255).
    pub ceiling: Priority,
    /// Its pool size (1 for IPCP and NPCS, whatever is given).
    pub threads: u32,
    /// What the procedure does per request.
    pub body: Vec<Step>,
    /// What it does for requests originating from the task at this index, where that
    /// differs from `body` (the evaluation's per-task subtasks).
    pub task_bodies: Vec<(usize, Vec<Step>)>,
}

impl LoweredCpi {
    /// The procedure run for a request of task `task`.
    pub fn body_for(&self, task: usize) -> &[Step] {
        self.task_bodies
            .iter()
            .find(|(t, _)| *t == task)
            .map_or(&self.body, |(_, b)| b)
    }
}
