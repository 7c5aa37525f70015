//! From a component system file to the component machine and to the schedulability analysis.
//!
//! A [`ComponentSystem`] (read from a `.camkes` file or TOML) says who requests what; the
//! configuration analyzer ([`component_graph`]) settles each CPI's priority and pool. With
//! the bodies of every task and of every CPI a task reaches, [`lower`] builds the lowered
//! model (`bulwark_spec::lowered`) once: the component machine runs it
//! ([`ComponentSystemConfig`]) and the blocking analysis reads the same bodies
//! ([`System::lowered`]), with the same protocol overheads ([`analysis_overheads`]).

use std::collections::HashMap;

use bulwark_analysis::admission::{self, Server};
use bulwark_analysis::blocking::{self, analyse, CallReply, Overheads, System, TaskTiming};
use bulwark_analysis::component_graph::{self, ComponentAnalysis, CycleKind};
use bulwark_analysis::rbf::ServerKind;
use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Priority};
use bulwark_sim::components::{
    ComponentSystemConfig, LoweredCpi, LoweredTask, ProtocolCosts, Step,
};
use bulwark_spec::component::{ComponentSystem, CpiId, ProcedureStep, Task, RESERVATION_SLOTS};

/// Why a component system cannot be simulated or analysed for schedulability.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// A task without a body: its execution time is unknown.
    #[error(
        "task `{0}` has no body, so its execution time is unknown; give it one (CAmkES \
         `{0}._body = \"execute 1ms; request out\";`, TOML `body = [...]`)"
    )]
    TaskWithoutBody(String),
    /// A CPI some task reaches without a body.
    #[error(
        "CPI `{0}` is requested but has no body, so its execution time is unknown; give it \
         one (CAmkES `<component>.<interface>_body = \"execute 1ms\";`)"
    )]
    CpiWithoutBody(String),
    /// A request chain loops: the system would deadlock.
    #[error("request chains loop through {0}: the system would deadlock")]
    CallLoop(String),
}

/// The system lowered for the machine and for the analysis.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// What the component machine runs.
    pub machine: ComponentSystemConfig,
    /// What the blocking analysis reads (tasks and CPIs in the same order).
    pub system: System,
    /// The analysis's overheads for the machine's costs.
    pub overheads: Overheads,
}

fn larger(a: CallReply, b: CallReply) -> CallReply {
    CallReply::new(a.call.max(b.call), a.reply.max(b.reply))
}

/// The analysis's worst-case overheads for a machine's costs: for each protocol the larger
/// of the direct and the nested ("PIP to ...") rows of Table 2. The notification manager's
/// cost is inside Table 2's locked rows, so `queue` is zero.
pub fn analysis_overheads(costs: &ProtocolCosts) -> Overheads {
    Overheads {
        propagated: larger(costs.propagated, costs.pip_to_propagated),
        fixed: costs.fixed,
        inherited_unlocked: larger(costs.inherited_unlocked, costs.pip_to_pip),
        inherited_locked: larger(costs.inherited_locked, costs.pip_to_pip),
        queue: Duration::ZERO,
        nest: costs.nest.to_inherited.max(costs.nest.to_propagated),
    }
}

/// Lowers `system`, whose configuration analysis is `analysis`, with protocol costs `costs`.
/// Each CPI's threads wait at the priority the analyzer settled (configured, 255 for NPCS,
/// else its ceiling) and its pool is the configured size, else the analyzer's.
pub fn lower(
    system: &ComponentSystem,
    analysis: &ComponentAnalysis,
    costs: ProtocolCosts,
) -> Result<Lowered, LowerError> {
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
    for (_, task) in system.tasks() {
        let body = task
            .body
            .as_deref()
            .ok_or_else(|| LowerError::TaskWithoutBody(task.name.clone()))?;
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
            (None, true) => return Err(LowerError::CpiWithoutBody(name)),
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
    Ok(Lowered {
        system: System::lowered(&machine_tasks, &machine_cpis),
        machine: ComponentSystemConfig {
            tasks: machine_tasks,
            cpis: machine_cpis,
            costs,
        },
        overheads: analysis_overheads(&costs),
    })
}

/// What the tasks' SPR reservations add to the component analysis, task by task in the
/// order of [`ComponentSystem::tasks`].
#[derive(Clone, Debug)]
pub struct ReservationTerms {
    /// Each task's reservation, if it has one.
    pub reservations: Vec<Option<Reservation>>,
    /// `I_i`, SPR Eq. 1's blocking term: the longest non-preemptive region `eta` of a
    /// strictly lower-priority task's reservation (zero if none). A job meets one such region
    /// when it is released or woken while a lower-priority thread was just dispatched.
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
    let regions = tasks
        .iter()
        .map(|task| {
            tasks
                .iter()
                .zip(&reservations)
                .filter(|(lower, _)| lower.priority < task.priority)
                .filter_map(|(_, r)| r.map(|r| r.non_preemptive))
                .max()
                .unwrap_or(Duration::ZERO)
        })
        .collect();
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

/// The blocking analysis of a lowered system; `None` only if its requests loop, which
/// [`lower`] already refuses.
pub fn schedulability(lowered: &Lowered) -> Option<blocking::Analysis> {
    analyse(&lowered.system, &lowered.overheads).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_core::Instant;
    use bulwark_sim::components::{run, RunOptions};

    const FIG7: &str = include_str!("../../../scenarios/components/fig7.camkes");

    fn fig7() -> ComponentSystem {
        bulwark_spec::camkes::parse_camkes(FIG7, "fig7.camkes").unwrap()
    }

    /// The built-in Fig. 7 file has every body, so it lowers; its pools are the analyzer's
    /// and the machine runs it without running out of threads.
    #[test]
    fn fig_7_lowers_and_runs() {
        let system = fig7();
        let analysis = component_graph::analyze(&system);
        let lowered = lower(&system, &analysis, ProtocolCosts::xeon_gold_6130_max()).unwrap();
        assert_eq!(lowered.machine.tasks.len(), 4);
        assert_eq!(lowered.machine.cpis.len(), 5);
        let outcome = run(
            &lowered.machine,
            RunOptions {
                until: Instant::ZERO.saturating_add(Duration::from_millis(800)),
                record_jobs: false,
                record_trace: false,
            },
        )
        .unwrap();
        assert_eq!(outcome.pool_exhausted, 0);
        assert_eq!(outcome.protocol_errors, 0);
        let timings = schedulability(&lowered).unwrap().timings();
        for (t, o) in timings.iter().zip(&outcome.tasks) {
            assert!(o.max_inversion <= t.blocking);
        }
    }

    #[test]
    fn missing_bodies_and_loops_are_named() {
        let mut system = fig7();
        let analysis = component_graph::analyze(&system);
        if let bulwark_spec::component::ComponentKind::Active { tasks } =
            &mut system.components[0].kind
        {
            tasks[0].body = None;
        }
        let err = lower(&system, &analysis, ProtocolCosts::ZERO).unwrap_err();
        assert_eq!(err, LowerError::TaskWithoutBody("t1".into()));
        assert!(err.to_string().contains("t1._body"));
    }
}
