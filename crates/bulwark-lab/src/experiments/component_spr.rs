//! The component paper's Fig. 7 system with every task in an SPR reservation
//! (`scenarios/components/fig7-spr.camkes`): two papers' mechanisms in one system, analysed
//! and simulated.
//!
//! Each task's reservation is its scheduling context: its own thread and every server
//! thread serving its requests spend its budget (the context travels with the request). The
//! reservations grant `b = 5 ms` per period with `eta = 500 us` against jobs of 4 ms of work
//! plus the protocols' overheads.
//!
//! The analysis composes the two papers' terms:
//! - SPR Eq. 1 admits the reservations themselves (`R_i <= p_i` over `(b, p, eta)`);
//! - the component paper's `C_i` (with Table 2's overheads) must fit the budget, `C_i <= b_i`,
//!   so no job waits for a replenishment;
//! - a job's priority inversion is bounded by the component paper's `B_i` plus SPR's
//!   `I_i = max eta` of the lower-priority reservations (Eq. 1's blocking term): one
//!   non-preemptive region, met when the job is released during it. A region defers only
//!   activations that come during it (section III-F), and belongs to the context: a server
//!   thread that takes a context with a request continues its region, and a thread that was
//!   ready before a region began, or that a call, reply or lock hand-over woke, preempts the
//!   region's thread as soon as it outranks it. So no job meets a second region, whatever
//!   its requests and waits (the property `a_job_meets_at_most_one_lower_region` checks it
//!   on random systems);
//! - the response-time analysis with blocking `B_i + I_i` bounds each task's response.
//!
//! The same system without reservations (`fig7.camkes`) runs beside it, for the inversion the
//! regions add.

use bulwark_analysis::blocking::{self, TaskTiming};
use bulwark_analysis::component_graph;
use bulwark_core::{Duration, Instant};
use bulwark_sim::components::{run as run_machine, ComponentOutcome, ProtocolCosts, RunOptions};
use bulwark_spec::component::ComponentSystem;

use super::{Experiment, LabError};
use crate::component_system::{lower, reservation_terms, schedulability};
use crate::report::{headings, Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "component-spr",
    title: "The component paper's Fig. 7 system with its tasks in SPR reservations",
    run,
};

const FIG7_SPR: &str = include_str!("../../../../scenarios/components/fig7-spr.camkes");
const FIG7: &str = include_str!("../../../../scenarios/components/fig7.camkes");

/// Ten hyperperiods of the 10, 20, 40 and 80 ms periods.
const HORIZON: Duration = Duration::from_millis(800);

/// One task's figures: analysis and run.
struct Row {
    name: String,
    execution: Duration,
    budget: Duration,
    blocking: Duration,
    regions: Duration,
    bound: Option<Duration>,
    response: Duration,
    inversion: Duration,
    plain_inversion: Duration,
    misses: u64,
    exhaustions: u64,
}

fn parse(text: &str, file: &str) -> Result<ComponentSystem, LabError> {
    Ok(bulwark_spec::camkes::parse_camkes(text, file)?)
}

fn simulate(system: &ComponentSystem) -> Result<(ComponentOutcome, Vec<TaskTiming>), LabError> {
    let analysis = component_graph::analyze(system);
    let lowered = lower(system, &analysis, ProtocolCosts::xeon_gold_6130_max())
        .map_err(|e| LabError::Components(e.to_string()))?;
    let outcome = run_machine(
        &lowered.machine,
        RunOptions {
            until: Instant::ZERO.saturating_add(HORIZON),
            record_jobs: false,
            record_trace: false,
        },
    )
    .map_err(|e| LabError::Components(e.to_string()))?;
    let timings = schedulability(&lowered)
        .ok_or_else(|| LabError::Components("the blocking analysis refused Fig. 7".into()))?
        .timings();
    Ok((outcome, timings))
}

fn run() -> Result<ExperimentReport, LabError> {
    let system = parse(FIG7_SPR, "fig7-spr.camkes")?;
    let (outcome, timings) = simulate(&system)?;
    let (plain, _) = simulate(&parse(FIG7, "fig7.camkes")?)?;
    let tasks: Vec<_> = system.tasks().into_iter().map(|(_, t)| t.clone()).collect();

    let terms = reservation_terms(&system)
        .ok_or_else(|| LabError::Components("fig7-spr.camkes has no reservation".into()))?;
    let eq1 = terms.eq1.clone().unwrap_or_default();
    let admitted = eq1.len() == tasks.len() && eq1.iter().all(|r| r.admitted());
    // RTA with blocking B_i + I_i.
    let responses = blocking::response_times(&terms.with_regions(&timings));

    let rows: Vec<Row> = tasks
        .iter()
        .enumerate()
        .map(|(i, task)| Row {
            name: task.name.clone(),
            execution: timings[i].execution,
            budget: task.reservation.map_or(Duration::ZERO, |r| r.budget),
            blocking: timings[i].blocking,
            regions: terms.regions[i],
            bound: responses
                .get(i)
                .filter(|r| r.verdict == blocking::Verdict::Admitted)
                .map(|r| r.response),
            response: outcome.tasks[i].max_response,
            inversion: outcome.tasks[i].max_inversion,
            plain_inversion: plain.tasks[i].max_inversion,
            misses: outcome.tasks[i].misses,
            exhaustions: outcome.tasks[i].budget_exhaustions,
        })
        .collect();

    let list = |f: &dyn Fn(&Row) -> String| rows.iter().map(f).collect::<Vec<_>>().join(", ");
    let checks = vec![
        Check {
            claim: "SPR Eq. 1 admits the four reservations (5 ms per period, eta = 500 us)".into(),
            expected: "R_i <= p_i for t1..t4".into(),
            measured: eq1
                .iter()
                .zip(&tasks)
                .map(|(r, t)| format!("{} R = {}", t.name, r.response))
                .collect::<Vec<_>>()
                .join(", "),
            pass: admitted,
        },
        Check {
            claim: "every job's demand, overheads included, fits its budget (C_i <= b_i), and \
                    no reservation ran out"
                .into(),
            expected: "C_i <= 5 ms and 0 exhaustions for every task".into(),
            measured: list(&|r| format!("{} C = {}, {} out", r.name, r.execution, r.exhaustions)),
            pass: rows
                .iter()
                .all(|r| r.execution <= r.budget && r.exhaustions == 0),
        },
        Check {
            claim: "every task is schedulable with blocking B_i + I_i, and no job misses or \
                    exceeds that response bound"
                .into(),
            expected: "max response <= R_i <= T_i, 0 misses".into(),
            measured: list(&|r| {
                format!(
                    "{} {} <= {}",
                    r.name,
                    r.response,
                    r.bound.map_or("none".into(), |b| b.to_string())
                )
            }),
            pass: rows
                .iter()
                .all(|r| r.misses == 0 && r.bound.is_some_and(|b| r.response <= b)),
        },
        Check {
            claim: "each task's worst priority inversion is within B_i plus SPR's blocking \
                    term I_i (the lower reservations' longest eta)"
                .into(),
            expected: "inversion <= B_i + I_i".into(),
            measured: list(&|r| {
                format!(
                    "{} {} <= {} + {}",
                    r.name, r.inversion, r.blocking, r.regions
                )
            }),
            pass: rows
                .iter()
                .all(|r| r.inversion <= r.blocking.saturating_add(r.regions)),
        },
        // Here no job is released while a lower-priority region runs: a region starts only
        // when a reservation is dispatched after another ran, not when its server thread
        // takes or gives back the context, so the regions add no inversion in this system
        // (the property `a_job_meets_at_most_one_lower_region` meets systems where they do).
        Check {
            claim: "the regions add at most one lower region to a job: no task's worst \
                    inversion grows over the same system without reservations by more than \
                    its I_i"
                .into(),
            expected: "every growth <= I_i".into(),
            measured: list(&|r| format!("{} {} -> {}", r.name, r.plain_inversion, r.inversion)),
            pass: rows
                .iter()
                .all(|r| r.inversion.saturating_sub(r.plain_inversion) <= r.regions),
        },
    ];
    let table = Table {
        caption: "Per task: the analysis (C_i with Table 2's maximal overheads, B_i, I_i, R_i \
                  with blocking B_i + I_i) beside 800 ms on the machine"
            .into(),
        header: headings([
            "task",
            "C",
            "budget",
            "B",
            "I",
            "R bound",
            "max response",
            "max inversion",
            "without reservations",
            "misses",
        ]),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.execution.to_string(),
                    r.budget.to_string(),
                    r.blocking.to_string(),
                    r.regions.to_string(),
                    r.bound.map_or("-".into(), |b| b.to_string()),
                    r.response.to_string(),
                    r.inversion.to_string(),
                    r.plain_inversion.to_string(),
                    r.misses.to_string(),
                ]
            })
            .collect(),
    };
    Ok(ExperimentReport {
        source: "CAmkES component paper (Fig. 7, Eqs. 5-8, Table 2) and SPR paper (Eq. 1, \
                 section III-F), composed"
            .into(),
        summary: "The Fig. 7 task and component system of the component paper, configuration 1 \
                  (C: PIP, D: propagation, E: PIP), with every task in an SPR sporadic-server \
                  reservation of 5 ms per period and a 500 us non-preemptive region. A task's \
                  reservation is its scheduling context: the server threads serving its \
                  requests spend its budget. The component paper's blocking analysis and SPR's \
                  Eq. 1 together bound what the machine shows, with Table 2's maximal \
                  overheads."
            .into(),
        checks,
        tables: vec![table],
        ..EXPERIMENT.blank_report()
    })
}
