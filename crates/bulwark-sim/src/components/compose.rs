//! A scenario's component system (its `[[component]]` tables, [`ComponentPart`]) lowered
//! onto its core, so that components run beside the other cores' policies in one machine.
//!
//! The configuration analyzer settles each CPI's ceiling and pool and the lowering resolves
//! the bodies (both in bulwark-analysis; `bulwark_lab::component_system::compose` runs them
//! and then this), and [`scenario`](super::scenario) turns the lowered system into tasks and
//! CPIs of one fixed-priority core, exactly as for a component file.
//! Here those tasks move to the part's core and join the scenario's after its own, so every
//! index the file gave (tasks, servers' clients, groups' members) keeps its meaning. The
//! protocol steps are charged by the scenario's cost table, at its clock.

use bulwark_spec::{ComponentPart, Scenario, TaskSpec};

use super::{validate, ComponentConfigError, ComponentSystemConfig};

/// `scenario` with its component system, lowered as `config` (its tasks and CPIs in the
/// system's orders, as `bulwark_analysis::component_lowering::lower` gives them), placed on
/// its core; unchanged when it has none or it is placed already.
pub fn compose_with(
    mut scenario: Scenario,
    config: &ComponentSystemConfig,
) -> Result<Scenario, ComponentConfigError> {
    let Some(core) = scenario
        .components
        .as_ref()
        .filter(|p| p.lowered.is_none())
        .map(|p| p.core)
    else {
        return Ok(scenario);
    };
    let lowered = compose_lowered(&mut scenario, core, config)?;
    if let Some(part) = scenario.components.as_mut() {
        part.lowered = Some(lowered);
    }
    Ok(scenario)
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
/// order of the system's tasks (empty before [`compose_with`] or without components).
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
