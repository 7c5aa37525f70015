//! A scenario's component system (its `[[component]]` tables, [`ComponentPart`]) lowered
//! onto its core, so that components run beside the other cores' policies in one machine.
//!
//! The configuration analyzer settles each CPI's ceiling and pool
//! ([`component_graph::analyze`]), the lowering resolves the bodies
//! ([`component_lowering::lower`]), and [`scenario`](super::scenario) turns the lowered
//! system into tasks and CPIs of one fixed-priority core, exactly as for a component file.
//! Here those tasks move to the part's core and join the scenario's after its own, so every
//! index the file gave (tasks, servers' clients, groups' members) keeps its meaning. The
//! protocol steps are charged by the scenario's cost table, at its clock.

use bulwark_analysis::{component_graph, component_lowering};
use bulwark_spec::{ComponentPart, Scenario, TaskSpec};

use super::{validate, ComponentConfigError, ComponentSystemConfig, ProtocolCosts};

/// `scenario` with its component system lowered onto its core: unchanged when it has none
/// or it is lowered already. Refuses a system whose requests loop or whose tasks or
/// requested CPIs have no body (their execution time is unknown).
pub fn compose(scenario: &Scenario) -> Result<Scenario, ComponentConfigError> {
    let mut composed = scenario.clone();
    let Some(part) = composed.components.as_mut().filter(|p| p.lowered.is_none()) else {
        return Ok(composed);
    };
    let analysis = component_graph::analyze(&part.system);
    let (tasks, cpis) = component_lowering::lower(&part.system, &analysis)
        .map_err(|e| ComponentConfigError::Lowering(e.to_string()))?;
    let config = ComponentSystemConfig {
        tasks,
        cpis,
        costs: ProtocolCosts::of(&composed.cost),
    };
    let core = part.core;
    let lowered = compose_lowered(&mut composed, core, &config)?;
    if let Some(part) = composed.components.as_mut() {
        part.lowered = Some(lowered);
    }
    Ok(composed)
}

/// Lowers the system `config` onto `core` of `scenario`, which has no CPIs of its own: its
/// tasks (in `config`'s order) and its pool threads join the scenario's after its own, on
/// `core`, and its CPIs become the scenario's. Returns the indices they took in
/// [`Scenario::tasks`].
pub fn compose_lowered(
    scenario: &mut Scenario,
    core: u16,
    config: &ComponentSystemConfig,
) -> Result<std::ops::Range<usize>, ComponentConfigError> {
    if !scenario.cpis.is_empty() {
        return Err(ComponentConfigError::Machine {
            reason: "a scenario with CPIs of its own cannot take a component system too".into(),
        });
    }
    validate(config)?;
    let lowered = super::scenario(config, scenario.duration);
    let first = scenario.tasks.len();
    scenario.tasks.extend(
        lowered
            .tasks
            .into_iter()
            .map(|task| TaskSpec { core, ..task }),
    );
    // The CPIs' pool threads are indices into the lowered tasks: shift them past the file's.
    scenario.cpis = lowered
        .cpis
        .into_iter()
        .map(|mut cpi| {
            cpi.pool.iter_mut().for_each(|thread| *thread += first);
            cpi
        })
        .collect();
    Ok(first..scenario.tasks.len())
}

/// The indices in [`Scenario::tasks`] of a composed scenario's component tasks, in the
/// order of the system's tasks (empty before [`compose`] or without components).
pub fn component_tasks(scenario: &Scenario) -> std::ops::Range<usize> {
    match scenario.components.as_deref() {
        Some(ComponentPart {
            system,
            lowered: Some(range),
            ..
        }) => range.start..range.start + system.tasks().len(),
        _ => 0..0,
    }
}
