//! A scenario's component systems (its `[[component]]` tables, one
//! [`ComponentPart`](bulwark_spec::ComponentPart) per core) lowered onto their cores, so that
//! components run beside the other cores' policies in one machine.
//!
//! The configuration analyzer settles each CPI's ceiling and pool and the lowering resolves
//! the bodies (both in bulwark-analysis; `bulwark_lab::component_system::compose` runs them
//! and then this), and [`scenario`](super::scenario) turns the lowered system into tasks and
//! CPIs of one fixed-priority core, exactly as for a component file.
//! Here those tasks move to the part's core and join the scenario's after its own, part by
//! part, so every index the file gave (tasks, servers' clients, groups' members) keeps its
//! meaning; their CPIs join the scenario's CPIs, part by part, with every request shifted to
//! match. The protocol steps are charged by the scenario's cost table, at its clock.

use bulwark_spec::lowered::Step as CpiStep;
use bulwark_spec::{Behaviour, Scenario, Step, TaskSpec};

use super::{validate, ComponentConfigError, ComponentSystemConfig};

/// `scenario` with its component systems, lowered as `configs` gives them (one per part of
/// [`Scenario::components`], in its order; each with its tasks and CPIs in the system's
/// orders, as `bulwark_analysis::component_lowering::lower` gives them), each placed on its
/// core; unchanged when it has none or they are placed already.
pub fn compose_with(
    mut scenario: Scenario,
    configs: &[ComponentSystemConfig],
) -> Result<Scenario, ComponentConfigError> {
    if scenario.components.iter().all(|p| p.lowered.is_some()) {
        return Ok(scenario);
    }
    if configs.len() != scenario.components.len() {
        return Err(ComponentConfigError::Machine {
            reason: format!(
                "{} lowered systems for {} component systems",
                configs.len(),
                scenario.components.len()
            ),
        });
    }
    if !scenario.cpis.is_empty() {
        return Err(ComponentConfigError::Machine {
            reason: "a scenario with CPIs of its own cannot take a component system too".into(),
        });
    }
    for (part, config) in configs.iter().enumerate() {
        let core = scenario.components[part].core;
        let lowered = compose_lowered(&mut scenario, core, config)?;
        scenario.components[part].lowered = Some(lowered);
    }
    Ok(scenario)
}

/// Lowers the system `config` onto `core` of `scenario`: its tasks (in `config`'s order) and
/// its pool threads join the scenario's after its own, on `core`, and its CPIs join the
/// scenario's after its own (a component system lowered before on another core keeps its
/// CPIs). Returns the indices they took in [`Scenario::tasks`].
pub fn compose_lowered(
    scenario: &mut Scenario,
    core: u16,
    config: &ComponentSystemConfig,
) -> Result<std::ops::Range<usize>, ComponentConfigError> {
    validate(config)?;
    let lowered = super::scenario(config, scenario.duration);
    let first = scenario.tasks.len();
    // The system numbers its CPIs and tasks from 0: shift them past the scenario's.
    let cpi_offset = scenario.cpis.len();
    scenario
        .tasks
        .extend(lowered.tasks.into_iter().map(|mut task| {
            if let Behaviour::Script { steps, .. } = &mut task.behaviour {
                shift_calls(steps, cpi_offset);
            }
            TaskSpec { core, ..task }
        }));
    scenario
        .cpis
        .extend(lowered.cpis.into_iter().map(|mut cpi| {
            cpi.pool.iter_mut().for_each(|thread| *thread += first);
            shift_requests(&mut cpi.cpi.body, cpi_offset);
            for (task, body) in &mut cpi.cpi.task_bodies {
                *task += first;
                shift_requests(body, cpi_offset);
            }
            cpi
        }));
    Ok(first..scenario.tasks.len())
}

/// A script's `call` steps, to CPIs numbered from `offset`.
fn shift_calls(steps: &mut [Step], offset: usize) {
    for step in steps {
        match step {
            Step::Call(cpi) => *cpi += offset,
            Step::Loop { body, .. } => shift_calls(body, offset),
            _ => {}
        }
    }
}

/// A procedure's requests, to CPIs numbered from `offset`.
fn shift_requests(body: &mut [CpiStep], offset: usize) {
    for step in body {
        if let CpiStep::Request(cpi) = step {
            *cpi += offset;
        }
    }
}

/// The indices in [`Scenario::tasks`] of a composed scenario's component tasks, part by part
/// of [`Scenario::components`], each in the order of its system's tasks (empty before
/// [`compose_with`] or without components).
pub fn component_tasks(scenario: &Scenario) -> Vec<std::ops::Range<usize>> {
    scenario
        .components
        .iter()
        .filter_map(|part| {
            let start = part.lowered.as_ref()?.start;
            Some(start..start + part.system.tasks().len())
        })
        .collect()
}
