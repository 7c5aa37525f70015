//! A component system lowered for the machine and the blocking analysis: the
//! configuration analyzer's settlement ([`component_graph`]: each CPI's waiting priority and
//! pool) applied to the file's tasks and CPIs, their bodies resolved to CPI indices
//! ([`bulwark_spec::lowered`]). The machine runs the lowered model as it is, and
//! the blocking analysis reads the same bodies ([`crate::blocking::System::lowered`]).
//!
//! Also here: what the tasks' SPR reservations add to the analysis (SPR Eq. 1 and the
//! non-preemptive regions' blocking term), [`reservation_terms`].

use std::collections::HashMap;

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Priority};
use bulwark_spec::component::{ComponentSystem, CpiId, ProcedureStep, Task, RESERVATION_SLOTS};
use bulwark_spec::lowered::{LoweredCpi, LoweredTask, Step};

use crate::admission::{self, Server};
use crate::blocking::TaskTiming;
use crate::component_graph::{self, ComponentAnalysis, CycleKind};
use crate::levels::Levels;
use crate::rbf::ServerKind;

/// Why a component system cannot be simulated or analysed for schedulability.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// A task without a body: its execution time is unknown.
    #[error(
        "task `{task}` has no body, so its execution time is unknown; give it one (CAmkES \
         `{task}._body = \"execute 1ms; request out\";`, TOML `body = [...]`)"
    )]
    TaskWithoutBody {
        /// The task's name.
        task: String,
        /// Its component's index in [`ComponentSystem::components`].
        component: usize,
    },
    /// A CPI some task reaches without a body.
    #[error(
        "CPI `{cpi}` is requested but has no body, so its execution time is unknown; give it \
         one (CAmkES `<component>.<interface>_body = \"execute 1ms\";`)"
    )]
    CpiWithoutBody {
        /// The CPI's name, `<component>.<interface>`.
        cpi: String,
        /// Its component's index in [`ComponentSystem::components`].
        component: usize,
    },
    /// A request chain loops: the system would deadlock.
    #[error("request chains loop through {0}: the system would deadlock")]
    CallLoop(String),
}

impl LowerError {
    /// The component whose declaration the error is about, if it names one (a call loop
    /// names a path of CPIs instead).
    pub fn component(&self) -> Option<usize> {
        match self {
            LowerError::TaskWithoutBody { component, .. }
            | LowerError::CpiWithoutBody { component, .. } => Some(*component),
            LowerError::CallLoop(_) => None,
        }
    }
}

/// Lowers `system`, whose configuration analysis is `analysis`: its tasks, then its CPIs,
/// in the orders of [`ComponentSystem::tasks`] and [`ComponentSystem::cpis`]. Each CPI's
/// threads wait at the priority the analyzer settled (configured, 255 for NPCS, else its
/// ceiling) and its pool is the configured size, else the analyzer's.
pub fn lower(
    system: &ComponentSystem,
    analysis: &ComponentAnalysis,
) -> Result<(Vec<LoweredTask>, Vec<LoweredCpi>), LowerError> {
    if let Some(cycle) = analysis
        .cycles
        .iter()
        .find(|c| c.kind != CycleKind::ConnectionsOnly)
    {
        return Err(LowerError::CallLoop(cycle.cpis.join(" -> ")));
    }
    let cpis = system.cpis();
    let index: HashMap<CpiId, usize> = cpis
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let reports: HashMap<CpiId, &component_graph::CpiReport> =
        analysis.cpis.iter().map(|r| (r.id, r)).collect();
    let target = |step: &ProcedureStep| -> Step {
        match *step {
            ProcedureStep::Execute(d) => Step::Execute(d),
            ProcedureStep::Request(c) => Step::Request(index[&system.connections[c.0].to]),
        }
    };
    let mut machine_tasks = Vec::new();
    for (at, task) in system.tasks() {
        let body = task
            .body
            .as_deref()
            .ok_or_else(|| LowerError::TaskWithoutBody {
                task: task.name.clone(),
                component: at.component,
            })?;
        machine_tasks.push(LoweredTask {
            name: task.name.clone(),
            priority: task.priority,
            period: task.period,
            offset: Duration::ZERO,
            body: body.iter().map(target).collect(),
            // The task's scheduling context: an SPR reservation over its own period.
            reservation: task.reservation.map(|r| Reservation {
                budget: r.budget,
                period: task.period,
                replenishments: RESERVATION_SLOTS,
                non_preemptive: r.non_preemptive,
            }),
        });
    }
    let mut machine_cpis = Vec::new();
    for (id, cpi) in &cpis {
        let report = reports.get(id);
        let name = report.map_or_else(|| cpi.name.clone(), |r| r.name());
        let reached = report.is_some_and(|r| !r.tasks.is_empty());
        let body = match (&cpi.body, reached) {
            (Some(body), _) => body.as_slice(),
            (None, false) => &[],
            (None, true) => {
                return Err(LowerError::CpiWithoutBody {
                    cpi: name,
                    component: id.component,
                })
            }
        };
        machine_cpis.push(LoweredCpi {
            name,
            protocol: cpi.protocol,
            ceiling: report.and_then(|r| r.priority).unwrap_or(Priority::MIN),
            threads: report
                .map(|r| r.configured_threads.unwrap_or(r.threads))
                .unwrap_or(1)
                .max(1),
            body: body.iter().map(target).collect(),
            task_bodies: Vec::new(),
        });
    }
    Ok((machine_tasks, machine_cpis))
}

/// What the tasks' SPR reservations add to the component analysis, task by task in the
/// order of [`ComponentSystem::tasks`].
#[derive(Clone, Debug)]
pub struct ReservationTerms {
    /// Each task's reservation, if it has one.
    pub reservations: Vec<Option<Reservation>>,
    /// `I_i`, SPR Eq. 1's blocking term: the longest non-preemptive region `eta` of a
    /// strictly lower-priority task's reservation (zero if none). A job meets at most one
    /// such region, when it is released during it: the machine's regions defer
    /// only activations that come during them (SPR section III-F), and a request's server
    /// thread continues its caller's region rather than starting one.
    pub regions: Vec<Duration>,
    /// SPR Eq. 1 over the reservations, when every task has one (it assumes every task on the
    /// core is a reservation server); `None` otherwise.
    pub eq1: Option<Vec<admission::Response>>,
}

impl ReservationTerms {
    /// The timings with each task's blocking raised by its `I_i`: what the response-time
    /// analysis reads once non-preemptive regions can delay a job.
    pub fn with_regions(&self, timings: &[TaskTiming]) -> Vec<TaskTiming> {
        timings
            .iter()
            .zip(&self.regions)
            .map(|(t, region)| TaskTiming {
                blocking: t.blocking.saturating_add(*region),
                ..*t
            })
            .collect()
    }
}

/// The reservation terms of `system`, `None` when no task has a reservation.
pub fn reservation_terms(system: &ComponentSystem) -> Option<ReservationTerms> {
    let tasks: Vec<&Task> = system.tasks().into_iter().map(|(_, t)| t).collect();
    let reservations: Vec<Option<Reservation>> = tasks
        .iter()
        .map(|t| {
            t.reservation.map(|r| Reservation {
                budget: r.budget,
                period: t.period,
                replenishments: RESERVATION_SLOTS,
                non_preemptive: r.non_preemptive,
            })
        })
        .collect();
    if reservations.iter().all(Option::is_none) {
        return None;
    }
    // The longest eta of a lower priority: one running maximum, not a scan per task.
    let regions = Levels::new(tasks.len(), |i| tasks[i].priority)
        .longest_below(|i| reservations[i].map_or(Duration::ZERO, |r| r.non_preemptive));
    let servers: Option<Vec<Server>> = tasks
        .iter()
        .zip(&reservations)
        .map(|(t, r)| {
            Some(Server::new(
                t.name.clone(),
                t.priority,
                (*r)?,
                ServerKind::Sporadic,
            ))
        })
        .collect();
    Some(ReservationTerms {
        eq1: servers.map(|s| admission::response_times(&s)),
        regions,
        reservations,
    })
}
