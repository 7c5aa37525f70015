//! From a component system file to the machine and to the schedulability analysis.
//!
//! A [`ComponentSystem`] (read from a `.camkes` file or TOML) says who requests what; the
//! configuration analyzer ([`bulwark_analysis::component_graph`]) settles each CPI's priority and pool, and
//! [`component_lowering::lower`] builds the lowered model (`bulwark_spec::lowered`) once.
//! Here it meets a cost table: the machine runs it ([`ComponentSystemConfig`]) and
//! the blocking analysis reads the same bodies ([`System::lowered`]), with the same protocol
//! overheads ([`analysis_overheads`]).

use bulwark_analysis::blocking::{self, analyse, CallReply, Overheads, System, TaskTiming};
use bulwark_analysis::component_graph;
use bulwark_analysis::component_graph::ComponentAnalysis;
use bulwark_analysis::component_lowering;
pub use bulwark_analysis::component_lowering::{reservation_terms, LowerError, ReservationTerms};
use bulwark_core::Duration;
use bulwark_sim::components::{ComponentConfigError, ComponentSystemConfig, ProtocolCosts};
use bulwark_spec::component::ComponentSystem;
use bulwark_spec::Scenario;

/// The system lowered for the machine and for the analysis.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// What the machine runs.
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

/// Lowers `system`, whose configuration analysis is `analysis`, with protocol costs `costs`:
/// the lowered model ([`component_lowering::lower`]) for the machine, and the analysis's
/// system and overheads for the same bodies and costs.
pub fn lower(
    system: &ComponentSystem,
    analysis: &ComponentAnalysis,
    costs: ProtocolCosts,
) -> Result<Lowered, LowerError> {
    let (tasks, cpis) = component_lowering::lower(system, analysis)?;
    Ok(Lowered {
        system: System::lowered(&tasks, &cpis),
        machine: ComponentSystemConfig { tasks, cpis, costs },
        overheads: analysis_overheads(&costs),
    })
}

/// Why a scenario's component system cannot join its machine.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// Its `part`th system (in [`Scenario::components`]) cannot be lowered: a request loop, or
    /// a task or requested CPI without a body.
    #[error("{error}")]
    Lowering {
        /// The system's index in [`Scenario::components`].
        part: usize,
        /// Why it cannot be lowered.
        error: LowerError,
    },
    /// The lowered system does not fit the machine.
    #[error(transparent)]
    Machine(#[from] ComponentConfigError),
}

/// `scenario` with its component systems (`[[component]]` tables, one per core) lowered onto
/// their cores, as every front end runs them: the configuration analyzer settles each CPI's
/// ceiling and pool, the lowering resolves the bodies, and the machine's
/// [`compose_with`](bulwark_sim::components::compose_with) appends the tasks and pool threads
/// after the file's own, system by system. Unchanged (and not copied) when it has none or
/// they are lowered already.
pub fn compose(scenario: Scenario) -> Result<Scenario, ComposeError> {
    if scenario.components.iter().all(|p| p.lowered.is_some()) {
        return Ok(scenario);
    }
    let costs = ProtocolCosts::of(&scenario.cost);
    let configs = scenario
        .components
        .iter()
        .enumerate()
        .map(|(at, part)| {
            let analysis = component_graph::analyze(&part.system);
            let (tasks, cpis) = component_lowering::lower(&part.system, &analysis)
                .map_err(|error| ComposeError::Lowering { part: at, error })?;
            Ok(ComponentSystemConfig { tasks, cpis, costs })
        })
        .collect::<Result<Vec<_>, ComposeError>>()?;
    Ok(bulwark_sim::components::compose_with(scenario, &configs)?)
}

/// The blocking analysis of a lowered system; `None` only if its requests loop, which
/// [`lower`] already refuses.
pub fn schedulability(lowered: &Lowered) -> Option<blocking::Analysis> {
    analyse(&lowered.system, &lowered.overheads).ok()
}

/// Per task of `system` (lowered as `lowered`): its timing with blocking `B_i` plus, for
/// tasks in SPR reservations, `I_i` (the longest lower-priority eta, SPR Eq. 1's blocking
/// term); `None` if the blocking analysis refuses the system.
pub fn timings_with_regions(
    system: &ComponentSystem,
    lowered: &Lowered,
) -> Option<Vec<TaskTiming>> {
    Some(with_regions(system, schedulability(lowered)?.timings()))
}

/// `timings` (the blocking analysis's, per task of `system`) with `I_i` added to the
/// blocking of each task in an SPR reservation: [`timings_with_regions`] for a caller that
/// has the analysis already.
pub fn with_regions(system: &ComponentSystem, timings: Vec<TaskTiming>) -> Vec<TaskTiming> {
    match reservation_terms(system) {
        Some(terms) => terms.with_regions(&timings),
        None => timings,
    }
}

/// The columns of a table of component tasks measured beside their analysis.
pub const TASK_COLUMNS: [&str; 7] = [
    "task",
    "jobs",
    "misses",
    "max response",
    "R bound",
    "max inversion",
    "B + I",
];

/// Per task: its response-time bound over `timings`, if the analysis admits it.
pub fn admitted_responses(timings: &[TaskTiming]) -> Vec<Option<Duration>> {
    blocking::response_times(timings)
        .iter()
        .map(|r| (r.verdict == blocking::Verdict::Admitted).then_some(r.response))
        .collect()
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
        assert_eq!(
            err,
            LowerError::TaskWithoutBody {
                task: "t1".into(),
                component: 0
            }
        );
        assert!(err.to_string().contains("t1._body"));
    }

    /// The built-in composed scenario: Fig. 7's components on core 0 beside three VBS
    /// processes on core 1.
    const BESIDE_VBS: &str = include_str!("../../../scenarios/components-beside-vbs.toml");

    fn scenario(text: &str) -> Scenario {
        bulwark_spec::parse(text, "beside.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
    }

    /// The system's four tasks join after the file's three, on core 0, then one pool thread
    /// per CPI requester; A's CPI, requested by t1 (40) and t2 (30) directly, gets two
    /// threads and the ceiling 40.
    #[test]
    fn compose_settles_lowers_and_places_the_system() {
        let composed = compose(scenario(BESIDE_VBS)).expect("composes");
        let names: Vec<&str> = composed.tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names[..7],
            ["control", "video", "logger", "t1", "t2", "t3", "t4"]
        );
        assert!(composed.tasks[3..].iter().all(|t| t.core == 0));
        let range = composed.components[0].lowered.clone().unwrap();
        // The file's own three tasks, before lowering and after.
        assert_eq!(scenario(BESIDE_VBS).file_tasks(), 3);
        assert_eq!(composed.file_tasks(), 3);
        assert_eq!((range.start, range.end), (3, composed.tasks.len()));
        let a = &composed.cpis[0];
        assert_eq!(a.pool.len(), 2);
        assert!(a.pool.iter().all(|&thread| thread >= 7));
        assert_eq!(a.cpi.ceiling, bulwark_core::Priority(40));
        // Composing again changes nothing.
        assert_eq!(compose(composed.clone()), Ok(composed));
    }

    #[test]
    fn a_call_loop_or_a_bodiless_cpi_is_refused_when_composing() {
        // E.work requests A.work, which reaches E.work through C: a loop.
        let looping = BESIDE_VBS.replacen(
            "body = [{ execute = \"1ms\" }]\n",
            "body = [{ execute = \"1ms\" }, { request = \"A.work\" }]\n",
            1,
        ) + "[[connection]]\nfrom = \"E.work\"\nto = \"A.work\"\n";
        let error = compose(scenario(&looping)).unwrap_err();
        assert!(
            matches!(&error, ComposeError::Lowering { part: 0, error: LowerError::CallLoop(cpis) } if cpis.contains("A.work")),
            "{error}"
        );
        let bodiless = BESIDE_VBS.replacen("body = [{ execute = \"1ms\" }]\n", "", 1);
        let error = compose(scenario(&bodiless)).unwrap_err();
        assert_eq!(
            error,
            ComposeError::Lowering {
                part: 0,
                // E is the ninth [[component]]: after the four tasks' and A to D.
                error: LowerError::CpiWithoutBody {
                    cpi: "E.work".into(),
                    component: 8
                }
            }
        );
        assert!(error.to_string().contains("CPI `E.work`"), "{error}");
    }
}
