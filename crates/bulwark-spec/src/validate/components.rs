//! The component systems in a scenario file: its `[[component]]` and `[[connection]]` tables
//! (read as in a component file, `component_toml.rs`), each component placed on a core by its
//! own `core` key or by `component-core` (default 0). The components on one core, with the
//! connections between them, are that core's component system. Such a core must run
//! `fixed-priority`, the component paper's platform, and carry no `[[task]]` of its own: the
//! component analysis (`B_i`, with SPR's `I_i`) covers the component system's tasks and pool
//! threads, and nothing else may share their core. The paper's platform is one processor, so
//! a connection never joins components on two cores.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use toml::Spanned;

use super::Checker;
use crate::component::Declarations;
use crate::component_toml::{check_part, RawComponent, RawConnection};
use crate::model::{ComponentPart, CostModel, PolicyKind};
use crate::raw::RawScenario;

/// The components and connections placed on one core, by index into the file's tables.
#[derive(Default)]
struct Placed {
    components: Vec<usize>,
    connections: Vec<usize>,
}

impl Checker<'_> {
    /// The scenario's component systems, one per core that runs components, by core: empty
    /// when the file declares none, `None` when something is wrong (reported). `cost` is the
    /// scenario's cost table (`None` when wrong), which charges the component systems too.
    pub(super) fn component_parts(
        &mut self,
        raw: &RawScenario,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
        cost: Option<&CostModel>,
    ) -> Option<Vec<ComponentPart>> {
        let Some(first) = raw.component.first() else {
            return self.no_component_system(raw);
        };
        let placement = self.placement(raw, first.span(), policy, cores);
        self.component_task_names(raw);
        self.component_task_bodies(raw);
        let placement = placement?;
        let mut by_core: BTreeMap<u16, Placed> = BTreeMap::new();
        for (index, &core) in placement.iter().enumerate() {
            by_core.entry(core).or_default().components.push(index);
        }
        for &core in by_core.keys() {
            self.tasks_beside_components(raw, core);
        }
        self.names_across_cores(&raw.component, &placement);
        // A connection naming no component joins the first one's system, which reports it.
        let default_core = placement[0];
        let mut all_valid = true;
        // Each name's first component (a repeated name is reported by its system).
        let mut index_of: HashMap<&str, usize> = HashMap::new();
        for (index, component) in raw.component.iter().enumerate() {
            index_of
                .entry(component.get_ref().name.get_ref().as_str())
                .or_insert(index);
        }
        for (index, connection) in raw.connection.iter().enumerate() {
            match self.connection_core(&index_of, &placement, connection.get_ref()) {
                Some(core) => {
                    let core = core.unwrap_or(default_core);
                    by_core.entry(core).or_default().connections.push(index);
                }
                None => all_valid = false,
            }
        }
        let cost = cost.copied().unwrap_or_default();
        let mut parts = Vec::new();
        for (core, placed) in by_core {
            // The components on the other cores, by name, for requests that cross cores.
            let elsewhere: HashMap<&str, u16> = (raw.component.iter().zip(&placement))
                .filter(|(_, &on)| on != core)
                .map(|(component, &on)| (component.get_ref().name.get_ref().as_str(), on))
                .collect();
            let components: Vec<Spanned<RawComponent>> = (placed.components.iter())
                .map(|&c| raw.component[c].clone())
                .collect();
            let connections: Vec<Spanned<RawConnection>> = (placed.connections.iter())
                .map(|&c| raw.connection[c].clone())
                .collect();
            let system = check_part(
                self.source,
                (&components, &connections),
                cost,
                (core, &elsewhere),
                &mut self.errors,
            );
            let Some(system) = system else {
                all_valid = false;
                continue;
            };
            parts.push(ComponentPart {
                core,
                system,
                lowered: None,
                declarations: Declarations {
                    components: components.iter().map(Spanned::span).collect(),
                    connections: connections.iter().map(Spanned::span).collect(),
                },
            });
        }
        all_valid.then_some(parts)
    }

    /// Without `[[component]]` tables, `[[connection]]` and `component-core` mean nothing.
    fn no_component_system(&mut self, raw: &RawScenario) -> Option<Vec<ComponentPart>> {
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
        Some(Vec::new())
    }

    /// The core of each `[[component]]`, in file order: its `core`, else `component-core`
    /// (default 0); `None` when one is wrong (reported). `component-core` is checked when
    /// written or when some component takes it; an error about the default is put at the
    /// first `[[component]]`.
    fn placement(
        &mut self,
        raw: &RawScenario,
        first: Range<usize>,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
    ) -> Option<Vec<u16>> {
        let cores = cores?;
        let defaulted = raw.component.iter().any(|c| c.get_ref().core.is_none());
        let default_core = match &raw.component_core {
            Some(core) => {
                let named = format!("component-core {}", core.get_ref());
                self.component_core(*core.get_ref(), core.span(), &named, policy, cores)
            }
            None if defaulted => {
                let named = "the component system's core (`component-core`, default 0)";
                self.component_core(0, first, named, policy, cores)
            }
            None => Some(0),
        };
        let mut placement = Some(Vec::with_capacity(raw.component.len()));
        for component in &raw.component {
            let component = component.get_ref();
            let core = match &component.core {
                Some(core) => {
                    let named = format!(
                        "component `{}`'s core {}",
                        component.name.get_ref(),
                        core.get_ref()
                    );
                    self.component_core(*core.get_ref(), core.span(), &named, policy, cores)
                }
                None => default_core,
            };
            match (placement.as_mut(), core) {
                (Some(placement), Some(core)) => placement.push(core),
                _ => placement = None,
            }
        }
        placement
    }

    /// Core `value` (written as `named`, at `span`) for components: a core of the scenario, in
    /// no cluster, that runs `fixed-priority`.
    fn component_core(
        &mut self,
        value: i64,
        span: Range<usize>,
        named: &str,
        policy: Option<PolicyKind>,
        cores: u16,
    ) -> Option<u16> {
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
        let on_core = self.policy_of_core(core, policy)?;
        if on_core != PolicyKind::FixedPriority {
            let message = format!("{named} is core {core}, which runs {}", on_core.name());
            let help = "allowed: a core that runs fixed-priority (the component paper's \
                        platform): the scenario's policy, or a [[core]] table for it";
            self.report(span, message, help);
            return None;
        }
        Some(core)
    }

    /// The core of the component system `connection` belongs to (`index_of`: each component
    /// name's index in the file): `Some(None)` when it names a component the file lacks (the
    /// system it joins reports that), `None` when its two
    /// ends are on different cores (reported).
    fn connection_core(
        &mut self,
        index_of: &HashMap<&str, usize>,
        placement: &[u16],
        connection: &RawConnection,
    ) -> Option<Option<u16>> {
        let core_of = |end: &Spanned<String>| {
            let text = end.get_ref();
            let name = text.split_once('.').map_or(text.as_str(), |(c, _)| c);
            let index = *index_of.get(name)?;
            Some((name.to_string(), placement[index]))
        };
        match (core_of(&connection.from), core_of(&connection.to)) {
            (Some((from, from_core)), Some((to, to_core))) if from_core != to_core => {
                let message = format!(
                    "the connection from `{from}` (on core {from_core}) to `{to}` (on core \
                     {to_core}) joins two cores"
                );
                let help = "allowed: a connection between components on one core (the \
                            component paper's platform is one processor)";
                self.report(connection.to.span(), message, help);
                None
            }
            (from, to) => Some(from.or(to).map(|(_, core)| core)),
        }
    }

    /// Component and component task names are unique in the file: each core's system checks
    /// its own, so this reports only a name taken on another core.
    fn names_across_cores(&mut self, components: &[Spanned<RawComponent>], placement: &[u16]) {
        // By name: the core and line of its first use (a map keeps validation linear).
        let mut component_names: HashMap<&str, (u16, usize)> = HashMap::new();
        let mut task_names: HashMap<&str, (u16, usize)> = HashMap::new();
        for (component, &core) in components.iter().zip(placement) {
            let component = component.get_ref();
            self.first_use_on_core(&component.name, core, "component", &mut component_names);
            for task in &component.task {
                let name = &task.get_ref().name;
                self.first_use_on_core(name, core, "task", &mut task_names);
            }
        }
    }

    /// Records `name`'s first use, on `core`, or reports it when that was on another core.
    fn first_use_on_core<'r>(
        &mut self,
        name: &'r Spanned<String>,
        core: u16,
        what: &str,
        first: &mut HashMap<&'r str, (u16, usize)>,
    ) {
        let line = self.source.line(name.span().start);
        match first.get(name.get_ref().as_str()) {
            Some(&(other, first_line)) if other != core => {
                let message = format!(
                    "{what} name `{}` is already used on line {first_line}, on core {other}",
                    name.get_ref()
                );
                let help = format!("allowed: a {what} name no other core's components use");
                self.report(name.span(), message, help);
            }
            Some(_) => {}
            None => {
                first.insert(name.get_ref().as_str(), (core, line));
            }
        }
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
