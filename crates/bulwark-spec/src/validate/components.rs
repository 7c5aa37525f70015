//! A component system in a scenario file: its `[[component]]` and `[[connection]]` tables
//! (read as in a component file, `component_toml.rs`) and `component-core`, the core it runs
//! on. That core must run `fixed-priority`, the component paper's platform, and carry no
//! `[[task]]` of its own: the component analysis (`B_i`, with SPR's `I_i`) covers the
//! component system's tasks and pool threads, and nothing else may share their core.

use std::collections::HashMap;

use toml::Spanned;

use super::Checker;
use crate::component_toml::check_part;
use crate::model::{ComponentPart, CostModel, PolicyKind};
use crate::raw::RawScenario;

impl Checker<'_> {
    /// The scenario's component system and its core: `Some(None)` when the file declares
    /// none, `None` when something is wrong (reported). `cost` is the scenario's cost table
    /// (`None` when wrong), which charges the component system too.
    pub(super) fn component_part(
        &mut self,
        raw: &RawScenario,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
        cost: Option<&CostModel>,
    ) -> Option<Option<Box<ComponentPart>>> {
        let Some(first) = raw.component.first() else {
            return self.no_component_system(raw);
        };
        let core = self.component_core(raw, first.span(), policy, cores);
        if let Some(core) = core {
            self.tasks_beside_components(raw, core);
        }
        self.component_task_names(raw);
        self.component_task_bodies(raw);
        let cost = cost.cloned().unwrap_or_default();
        let system = check_part(
            self.source,
            &raw.component,
            &raw.connection,
            cost,
            &mut self.errors,
        );
        Some(Some(Box::new(ComponentPart {
            core: core?,
            system: system?,
            lowered: None,
            connection_spans: raw.connection.iter().map(Spanned::span).collect(),
        })))
    }

    /// Without `[[component]]` tables, `[[connection]]` and `component-core` mean nothing.
    fn no_component_system(&mut self, raw: &RawScenario) -> Option<Option<Box<ComponentPart>>> {
        let help = "allowed: with [[component]] tables only (a component system beside the tasks)";
        if let Some(connection) = raw.connection.first() {
            let span = connection.span();
            self.report(span, "a [[connection]] without any [[component]]", help);
            return None;
        }
        if let Some(core) = &raw.component_core {
            self.report(
                core.span(),
                "`component-core` without any [[component]]",
                help,
            );
            return None;
        }
        Some(None)
    }

    /// `component-core` (default 0): a core of the scenario, in no cluster, that runs
    /// `fixed-priority`. An error about the default is put at the first `[[component]]`.
    fn component_core(
        &mut self,
        raw: &RawScenario,
        first: std::ops::Range<usize>,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
    ) -> Option<u16> {
        let (value, span, written) = match &raw.component_core {
            Some(core) => (*core.get_ref(), core.span(), true),
            None => (0, first, false),
        };
        let cores = cores?;
        let named = if written {
            format!("component-core {value}")
        } else {
            "the component system's core (`component-core`, default 0)".to_string()
        };
        let Some(core) = u16::try_from(value).ok().filter(|&c| c < cores) else {
            let allowed = format!("allowed: a core of this scenario, 0..={}", cores - 1);
            self.report(
                span,
                format!("{named} is not a core of this scenario"),
                allowed,
            );
            return None;
        };
        if let Some(cluster) = self.cluster_with(core) {
            let message = format!(
                "{named} is core {core}, which is in cluster `{}`",
                self.cluster_name(cluster)
            );
            let help = "allowed: a core in no cluster, running fixed-priority";
            self.report(span, message, help);
            return None;
        }
        let on_core = self
            .core_policies
            .iter()
            .find(|(on, _)| *on == core)
            .map(|(_, p)| *p)
            .or(policy)?;
        if on_core != PolicyKind::FixedPriority {
            let message = format!("{named} is core {core}, which runs {}", on_core.name());
            let help = "allowed: a core that runs fixed-priority (the component paper's \
                        platform): the scenario's policy, or a [[core]] table for it";
            self.report(span, message, help);
            return None;
        }
        Some(core)
    }

    /// No `[[task]]` on the component system's core.
    fn tasks_beside_components(&mut self, raw: &RawScenario, core: u16) {
        for task in &raw.task {
            let task = task.get_ref();
            let on = task.core.as_ref().map_or(0, |c| *c.get_ref());
            if task.cluster.is_some() || on != i64::from(core) {
                continue;
            }
            let span = task.core.as_ref().map_or(task.name.span(), Spanned::span);
            let message = format!(
                "task `{}` is on core {core}, which runs the component system",
                task.name.get_ref()
            );
            let help = "allowed: another core, or the task as a [[component.task]] of an \
                        active component";
            self.report(span, message, help);
        }
    }

    /// A component task's name is no `[[task]]`'s: they share the machine's task list.
    fn component_task_names(&mut self, raw: &RawScenario) {
        // By name, the line of its `[[task]]` (a map keeps validation linear).
        let lines: HashMap<&str, usize> = raw
            .task
            .iter()
            .map(|t| {
                let name = &t.get_ref().name;
                (name.get_ref().as_str(), self.source.line(name.span().start))
            })
            .collect();
        for component in &raw.component {
            for task in &component.get_ref().task {
                let name = &task.get_ref().name;
                let Some(line) = lines.get(name.get_ref().as_str()) else {
                    continue;
                };
                let message = format!(
                    "task name `{}` is already used by the [[task]] on line {line}",
                    name.get_ref()
                );
                let help = "allowed: a name no [[task]] and no other component task has";
                self.report(name.span(), message, help);
            }
        }
    }

    /// Every component task has a body: in a scenario the system runs, and a body is what
    /// a job does.
    fn component_task_bodies(&mut self, raw: &RawScenario) {
        for component in &raw.component {
            for task in &component.get_ref().task {
                let task = task.get_ref();
                if task.body.is_some() {
                    continue;
                }
                let message = format!(
                    "component task `{}` has no body, so what its jobs do is unknown",
                    task.name.get_ref()
                );
                let help = "allowed: a body, like body = [{ execute = \"1ms\" }, { request = \
                            \"server.i\" }]";
                self.report(task.name.span(), message, help);
            }
        }
    }
}
