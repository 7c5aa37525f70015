//! The TOML form of a component system: the same model as the CAmkES subset
//! ([`crate::camkes`]), read into raw serde types and then validated.
//!
//! ```toml
//! [[component]]
//! name = "client"
//! kind = "active"                 # "active" (originates tasks) or "passive" (provides CPIs)
//!
//! [[component.task]]              # one or more, for an active component
//! name = "tau1"
//! priority = 10                   # 0..=255, larger is more important
//! period = "10ms"
//! requestor = 1                   # optional, unique; default: the smallest unused
//! body = [{ execute = "1ms" }, { request = "server.i" }, { execute = "500us" }]  # optional
//! budget = "3ms"                  # optional: an SPR reservation of 3 ms every period
//! eta = "1ms"                     # optional, with budget: its non-preemptive region
//!
//! [[component]]
//! name = "server"
//! kind = "passive"
//!
//! [[component.cpi]]               # one or more, for a passive component
//! name = "i"
//! protocol = "inherited"          # "propagated", "inherited" or "fixed"
//! priority = 20                   # optional; "fixed" at 255 is NPCS
//! threads = 2                     # optional: the pool size (the analyzer computes one)
//! body = [{ execute = "2ms" }]    # optional: what the procedure does per request
//!
//! [[connection]]
//! from = "client"                 # a component, or "server.i": sent by that CPI's procedure
//! to = "server.i"                 # a CPI
//! name = "c1"                     # optional, for messages
//!
//! [cost]                          # optional: what the machine charges, in cycles
//! clock = "2.1GHz"                # optional, default 1GHz
//! context-switch = 0              # optional, default 0
//!
//! [cost.ipc]                      # optional: the component paper's Table 2, each row
//! propagated = { call = 6830, reply = 3960 }          # default { call = 0, reply = 0 }
//! fixed = { call = 4810, reply = 3342 }
//! inherited-unlocked = { call = 6834, reply = 4028 }
//! inherited-locked = { call = 6282, reply = 3788 }
//! pip-to-pip = { call = 6878, reply = 6300 }
//! pip-to-propagated = { call = 6306, reply = 5318 }
//! nest-to-inherited = 6720                            # one `nest` hop; default 0
//! nest-to-propagated = 7530
//! ```
//!
//! `[cost]` is the cost table of every Bulwark file; the machine charges its clock,
//! context switches and `[cost.ipc]` only, so any other cost is refused. `--overheads` on the
//! command line replaces it. A `.camkes` file has no place for it: its costs are free unless
//! `--overheads` names others.
//!
//! A body's `request` names the CPI it calls; a connection from the body's component (or
//! from the body's own CPI) to that CPI must exist. Without a body, a procedure may request
//! over every connection from its component.

use std::collections::HashMap;
use std::ops::Range;

use bulwark_core::{Duration, Priority};
use serde::Deserialize;
use toml::Spanned;

use crate::component::{
    self, assign_requestors, Component, ComponentKind, ComponentSystem, Connection, ConnectionId,
    Cpi, CpiId, CpiProtocol, Declarations, LocatedSystem, ProcedureStep, ReservationField, Task,
    TaskReservation, MAX_REQUESTOR, MAX_THREADS,
};
use crate::diagnostic::{names_help, Diagnostics, Source, SpecError};
use crate::model::CostModel;
use crate::raw::{RawCost, RawQuantity, RawTime};
use crate::validate::PRIORITY_HELP;
use crate::{toml_error, units};

const STEP_HELP: &str = "allowed: { execute = \"1ms\" } or { request = \"component.cpi\" }";

/// Reads a component system from TOML `source`, naming it `file` in diagnostics.
pub fn parse_components(source: &str, file: &str) -> Result<ComponentSystem, Diagnostics> {
    parse_components_located(source, file).map(|located| located.system)
}

/// [`parse_components`], keeping where each connection is declared, for problems found later.
pub fn parse_components_located(source: &str, file: &str) -> Result<LocatedSystem, Diagnostics> {
    let located = Source::new(file, source);
    let raw: RawSystem = toml::from_str(source)
        .map_err(|e| Diagnostics::new(file, vec![toml_error::located(&located, &e)]))?;
    let mut checker = Checker {
        source: &located,
        errors: Vec::new(),
        elsewhere: None,
    };
    let cost = checker.cost(raw.cost.as_ref());
    checker.no_cores(&raw.component);
    let system = checker.system(&raw.component, &raw.connection, cost);
    let errors = checker.errors;
    let system = located
        .finish(system, errors)
        .map_err(|errors| Diagnostics::new(file, errors))?;
    // A valid system has one component per [[component]] table and one connection per
    // [[connection]] table, in file order.
    let declarations = Declarations {
        components: raw.component.iter().map(Spanned::span).collect(),
        connections: raw.connection.iter().map(Spanned::span).collect(),
    };
    Ok(LocatedSystem::new(system, located, declarations))
}

/// A scenario file's components on one core (`core`) and the connections between them,
/// charged by the scenario's `cost`: that core's component system, or `None` when wrong, with
/// the errors added to `errors`. `elsewhere` names the components on the file's other cores,
/// each with its core, so that a request of one of them is refused as crossing cores.
pub(crate) fn check_part(
    source: &Source,
    (components, connections): (&[Spanned<RawComponent>], &[Spanned<RawConnection>]),
    cost: CostModel,
    (core, elsewhere): (u16, &HashMap<&str, u16>),
    errors: &mut Vec<SpecError>,
) -> Option<ComponentSystem> {
    let mut checker = Checker {
        source,
        errors: Vec::new(),
        elsewhere: Some((core, elsewhere)),
    };
    let system = checker.system(components, connections, Some(cost));
    errors.append(&mut checker.errors);
    system
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a component system: [[component]] and [[connection]] tables"
)]
struct RawSystem {
    #[serde(default)]
    component: Vec<Spanned<RawComponent>>,
    #[serde(default)]
    connection: Vec<Spanned<RawConnection>>,
    cost: Option<Spanned<RawCost>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[component]] table, like { name = \"server\", kind = \"passive\" }"
)]
pub(crate) struct RawComponent {
    pub(crate) name: Spanned<String>,
    kind: Spanned<String>,
    #[serde(default)]
    pub(crate) task: Vec<Spanned<RawTask>>,
    #[serde(default)]
    cpi: Vec<Spanned<RawCpi>>,
    /// In a scenario file only: the fixed-priority core the component runs on (default
    /// `component-core`).
    pub(crate) core: Option<Spanned<i64>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[component.task]] table"
)]
pub(crate) struct RawTask {
    pub(crate) name: Spanned<String>,
    priority: Spanned<i64>,
    period: Spanned<RawTime>,
    requestor: Option<Spanned<i64>>,
    pub(crate) body: Option<Spanned<Vec<Spanned<RawStep>>>>,
    /// The SPR reservation's budget: the task then runs in a reservation of this budget
    /// every period.
    budget: Option<Spanned<RawTime>>,
    /// The reservation's non-preemptive region (needs `budget`).
    eta: Option<Spanned<RawTime>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[component.cpi]] table"
)]
struct RawCpi {
    name: Spanned<String>,
    protocol: Spanned<String>,
    priority: Option<Spanned<i64>>,
    threads: Option<Spanned<i64>>,
    body: Option<Spanned<Vec<Spanned<RawStep>>>>,
}

/// One body step; both keys optional so that validation can say which is missing or extra.
#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a step, like { execute = \"1ms\" } or { request = \"server.i\" }"
)]
pub(crate) struct RawStep {
    execute: Option<Spanned<RawTime>>,
    request: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[connection]] table, like { from = \"client\", to = \"server.i\" }"
)]
pub(crate) struct RawConnection {
    name: Option<Spanned<String>>,
    pub(crate) from: Spanned<String>,
    pub(crate) to: Spanned<String>,
}

struct Checker<'a> {
    source: &'a Source,
    errors: Vec<SpecError>,
    /// In a scenario file: the core these components run on, and the components on its
    /// other cores by name, with their cores.
    elsewhere: Option<(u16, &'a HashMap<&'a str, u16>)>,
}

/// What the first pass learnt of a component: enough to resolve connections.
struct Shape<'r> {
    name: &'r str,
    active: bool,
    cpis: Vec<&'r str>,
}

/// Every component's [`Shape`], in file order, and each name's first component, so that a
/// name resolves in constant time however many components the system has.
struct Shapes<'r> {
    all: Vec<Shape<'r>>,
    by_name: HashMap<&'r str, usize>,
}

impl<'r> std::ops::Deref for Shapes<'r> {
    type Target = [Shape<'r>];

    fn deref(&self) -> &[Shape<'r>] {
        &self.all
    }
}

/// The connections (`None` where one did not resolve, reported) and, for a request, the one
/// from a sender to a CPI by its sending procedure, in constant time.
struct Links {
    all: Vec<Option<Connection>>,
    /// `(from, to, procedure)` to the connection's index.
    by_ends: HashMap<(usize, CpiId, Option<usize>), usize>,
    /// Some connection did not resolve.
    unresolved: bool,
}

impl Links {
    fn new(all: Vec<Option<Connection>>) -> Links {
        let mut by_ends = HashMap::new();
        for (index, connection) in all.iter().enumerate() {
            if let Some(c) = connection {
                by_ends.entry((c.from, c.to, c.procedure)).or_insert(index);
            }
        }
        let unresolved = all.iter().any(Option::is_none);
        Links {
            all,
            by_ends,
            unresolved,
        }
    }

    /// The connection from `from`'s procedure `procedure` (`None`: its task) to `to`.
    fn find(&self, from: usize, to: CpiId, procedure: Option<usize>) -> Option<usize> {
        self.by_ends.get(&(from, to, procedure)).copied()
    }
}

impl Checker<'_> {
    fn report(&mut self, span: Range<usize>, message: impl Into<String>, help: impl Into<String>) {
        let error = self.source.error(span, message, help);
        self.errors.push(error);
    }

    /// A component file is one core's system: `core` places a component only in a scenario
    /// file, which has cores.
    fn no_cores(&mut self, components: &[Spanned<RawComponent>]) {
        for core in components.iter().filter_map(|c| c.get_ref().core.as_ref()) {
            self.report(
                core.span(),
                "`core` in a component file, which describes one core's system",
                "allowed: `core` in a [[component]] of a scenario file, which places component \
                 systems on its cores",
            );
        }
    }

    /// `[cost]`: the machine charges a component system's clock, context switches and
    /// `[cost.ipc]` only; free when absent. `None` when wrong (reported).
    fn cost(&mut self, raw: Option<&Spanned<RawCost>>) -> Option<CostModel> {
        let Some(cost) = raw else {
            return Some(CostModel::FREE);
        };
        let charged = &crate::validate::cost::COMPONENTS;
        let text = self.source.text();
        crate::validate::cost::cost_model(cost.get_ref(), charged, text, &mut |span, m, help| {
            self.report(span, m, help)
        })
    }

    /// The components and connections, with `cost` (already checked: `None` when wrong).
    fn system(
        &mut self,
        raw_components: &[Spanned<RawComponent>],
        raw_connections: &[Spanned<RawConnection>],
        cost: Option<CostModel>,
    ) -> Option<ComponentSystem> {
        let shapes = self.shapes(raw_components);
        let connections = Links::new(self.connections(raw_connections, &shapes));
        let mut components = Vec::new();
        let mut task_names: HashMap<&str, usize> = HashMap::new();
        let mut requestors: HashMap<i64, &str> = HashMap::new();
        let mut all_valid = true;
        for (index, component) in raw_components.iter().enumerate() {
            let c = component.get_ref();
            // Tasks must be unique in the whole system.
            for task in &c.task {
                let t = task.get_ref();
                let name = t.name.get_ref().as_str();
                if let Some(error) = self.source.long_name(t.name.span(), name, "a task name") {
                    self.errors.push(error);
                    all_valid = false;
                }
                match task_names.get(name) {
                    Some(line) => {
                        self.report(
                            t.name.span(),
                            format!("task name `{name}` is already used on line {line}"),
                            "allowed: a name no other task in this system has",
                        );
                        all_valid = false;
                    }
                    None => {
                        task_names.insert(name, self.source.line(t.name.span().start));
                    }
                }
                if let Some(r) = &t.requestor {
                    match requestors.get(r.get_ref()) {
                        Some(owner) => {
                            self.report(
                                r.span(),
                                format!("requestor {} is already used by `{owner}`", r.get_ref()),
                                "allowed: an identifier no other task has",
                            );
                            all_valid = false;
                        }
                        None => {
                            requestors.insert(*r.get_ref(), name);
                        }
                    }
                }
            }
            match self.component(index, c, &shapes, &connections) {
                Some(built) => components.push(built),
                None => all_valid = false,
            }
        }
        let connections: Option<Vec<Connection>> = connections.all.into_iter().collect();
        if !all_valid || !self.errors.is_empty() {
            return None;
        }
        assign_requestors(&mut components);
        Some(ComponentSystem {
            components,
            connections: connections?,
            cost: cost?,
        })
    }

    /// Names, kinds and CPI names, with their uniqueness checked.
    fn shapes<'r>(&mut self, raw: &'r [Spanned<RawComponent>]) -> Shapes<'r> {
        let mut shapes: Vec<Shape<'r>> = Vec::new();
        let mut by_name: HashMap<&'r str, usize> = HashMap::new();
        let mut first_line: HashMap<&str, usize> = HashMap::new();
        for component in raw {
            let c = component.get_ref();
            let name = c.name.get_ref().as_str();
            self.plain_name(&c.name, "a component name");
            if let Some(line) = first_line.get(name) {
                self.report(
                    c.name.span(),
                    format!("component name `{name}` is already used on line {line}"),
                    "allowed: a name no other component in this system has",
                );
            } else {
                first_line.insert(name, self.source.line(c.name.span().start));
            }
            let active = match c.kind.get_ref().as_str() {
                "active" => true,
                "passive" => false,
                other => {
                    self.report(
                        c.kind.span(),
                        format!("unknown component kind `{other}`"),
                        "allowed: active (originates tasks), passive (provides CPIs)",
                    );
                    // Judged by its tables, so that its connections still resolve.
                    c.cpi.is_empty()
                }
            };
            let mut cpi_line: HashMap<&str, usize> = HashMap::new();
            let mut cpis = Vec::new();
            for cpi in &c.cpi {
                let n = &cpi.get_ref().name;
                self.plain_name(n, "a CPI name");
                if let Some(line) = cpi_line.get(n.get_ref().as_str()) {
                    self.report(
                        n.span(),
                        format!(
                            "CPI `{name}.{}` is already declared on line {line}",
                            n.get_ref()
                        ),
                        "allowed: a name no other CPI of this component has",
                    );
                } else {
                    cpi_line.insert(n.get_ref(), self.source.line(n.span().start));
                }
                cpis.push(n.get_ref().as_str());
            }
            by_name.entry(name).or_insert(shapes.len());
            shapes.push(Shape { name, active, cpis });
        }
        Shapes {
            all: shapes,
            by_name,
        }
    }

    /// Names that connections write as `component.cpi` must not contain a `.`.
    fn plain_name(&mut self, name: &Spanned<String>, what: &str) {
        let text = name.get_ref();
        if text.trim().is_empty() {
            self.report(
                name.span(),
                format!("{what} is empty"),
                "allowed: a name with at least one visible character, like \"server\"",
            );
        } else if let Some(error) = self.source.long_name(name.span(), text, what) {
            self.errors.push(error);
        } else if text.contains('.') {
            self.report(
                name.span(),
                format!("{what} `{text}` contains a `.`"),
                "allowed: a name without `.` (connections write component.cpi)",
            );
        }
    }

    /// Each connection, or `None` where it did not resolve (reported).
    fn connections(
        &mut self,
        raw: &[Spanned<RawConnection>],
        shapes: &Shapes<'_>,
    ) -> Vec<Option<Connection>> {
        let mut out: Vec<Option<Connection>> = Vec::new();
        let mut first_line: HashMap<(usize, Option<usize>, CpiId), usize> = HashMap::new();
        for connection in raw {
            let c = connection.get_ref();
            let from = self.sending_end(&c.from, shapes);
            let to = self.receiving_end(&c.to, shapes);
            let (Some((from, procedure)), Some(to)) = (from, to) else {
                out.push(None);
                continue;
            };
            let key = (from, procedure, to);
            if let Some(line) = first_line.get(&key) {
                self.report(
                    c.to.span(),
                    format!(
                        "a connection from `{}` to `{}` is already declared on line {line}",
                        c.from.get_ref(),
                        c.to.get_ref()
                    ),
                    "allowed: one connection per sender and CPI; a body may request it many times",
                );
                out.push(None);
                continue;
            }
            first_line.insert(key, self.source.line(c.from.span().start));
            let name = c.name.as_ref().map_or_else(
                || format!("{}->{}", c.from.get_ref(), c.to.get_ref()),
                |n| n.get_ref().clone(),
            );
            out.push(Some(Connection {
                name,
                from,
                interface: None,
                procedure,
                to,
            }));
        }
        out
    }

    /// `"a"` or `"a.i"`: the component, and the CPI whose procedure sends, if named.
    fn sending_end(
        &mut self,
        raw: &Spanned<String>,
        shapes: &Shapes<'_>,
    ) -> Option<(usize, Option<usize>)> {
        let text = raw.get_ref();
        let (component, cpi) = match text.split_once('.') {
            Some((c, i)) => (c, Some(i)),
            None => (text.as_str(), None),
        };
        let index = self.component_named(component, raw.span(), shapes)?;
        let Some(cpi) = cpi else {
            return Some((index, None));
        };
        let shape = &shapes[index];
        if shape.active {
            self.report(
                raw.span(),
                format!("active component `{component}` has no CPI `{cpi}`"),
                format!("allowed: from = \"{component}\" (an active component's task sends)"),
            );
            return None;
        }
        let position = self.cpi_named(shape, cpi, raw.span())?;
        Some((index, Some(position)))
    }

    /// `"b.j"`: a CPI of a passive component.
    fn receiving_end(&mut self, raw: &Spanned<String>, shapes: &Shapes<'_>) -> Option<CpiId> {
        let text = raw.get_ref();
        let Some((component, cpi)) = text.split_once('.') else {
            self.report(
                raw.span(),
                format!("`{text}` names no CPI"),
                format!("allowed: component.cpi, like \"{text}.i\""),
            );
            return None;
        };
        let index = self.component_named(component, raw.span(), shapes)?;
        let shape = &shapes[index];
        if shape.active {
            self.report(
                raw.span(),
                format!("`{component}` is an active component, which provides no CPI"),
                "allowed: a CPI of a passive component",
            );
            return None;
        }
        let position = self.cpi_named(shape, cpi, raw.span())?;
        Some(CpiId {
            component: index,
            cpi: position,
        })
    }

    fn component_named(
        &mut self,
        name: &str,
        span: Range<usize>,
        shapes: &Shapes<'_>,
    ) -> Option<usize> {
        let found = shapes.by_name.get(name).copied();
        let other_core = self
            .elsewhere
            .and_then(|(core, others)| Some((core, *others.get(name)?)));
        if let (None, Some((core, other))) = (found, other_core) {
            self.report(
                span,
                format!("component `{name}` runs on core {other}, not on core {core} with these"),
                format!(
                    "allowed: a component on core {core} (the component paper's platform is one \
                     processor, so no request crosses cores)"
                ),
            );
        } else if found.is_none() {
            self.report(
                span,
                format!("no component is called `{name}`"),
                names_help(
                    shapes.iter().map(|s| s.name),
                    "add a [[component]] table with this name",
                ),
            );
        }
        found
    }

    fn cpi_named(&mut self, shape: &Shape<'_>, cpi: &str, span: Range<usize>) -> Option<usize> {
        let found = shape.cpis.iter().position(|c| *c == cpi);
        if found.is_none() {
            let names: Vec<String> = shape
                .cpis
                .iter()
                .map(|c| format!("{}.{c}", shape.name))
                .collect();
            self.report(
                span,
                format!("component `{}` has no CPI `{cpi}`", shape.name),
                format!("allowed: {}", names.join(", ")),
            );
        }
        found
    }

    fn component(
        &mut self,
        index: usize,
        raw: &RawComponent,
        shapes: &Shapes<'_>,
        connections: &Links,
    ) -> Option<Component> {
        let name = raw.name.get_ref().clone();
        let kind = raw.kind.get_ref().as_str();
        if kind == "active" {
            if let Some(cpi) = raw.cpi.first() {
                self.report(
                    cpi.get_ref().name.span(),
                    format!(
                        "active component `{name}` provides CPI `{}`",
                        cpi.get_ref().name.get_ref()
                    ),
                    "an active component originates tasks and provides no CPI; move it to a \
                     passive component",
                );
            }
            if raw.task.is_empty() {
                self.report(
                    raw.kind.span(),
                    format!("active component `{name}` has no task"),
                    "add a [[component.task]] table after it",
                );
            }
        } else if kind == "passive" {
            if let Some(task) = raw.task.first() {
                self.report(
                    task.get_ref().name.span(),
                    format!("passive component `{name}` has task `{}`", task.get_ref().name.get_ref()),
                    "a passive component has no thread of its own; tasks originate in active components",
                );
            }
            if raw.cpi.is_empty() {
                self.report(
                    raw.kind.span(),
                    format!("passive component `{name}` provides no CPI"),
                    "add a [[component.cpi]] table after it",
                );
            }
        }
        let mut all_valid = kind == "active" || kind == "passive";
        let mut tasks = Vec::new();
        for task in &raw.task {
            match self.task(index, task.get_ref(), shapes, connections) {
                Some(t) => tasks.push(t),
                None => all_valid = false,
            }
        }
        let mut cpis = Vec::new();
        for (position, cpi) in raw.cpi.iter().enumerate() {
            match self.cpi(index, position, cpi.get_ref(), shapes, connections) {
                Some(c) => cpis.push(c),
                None => all_valid = false,
            }
        }
        if !all_valid {
            return None;
        }
        let kind = if kind == "active" {
            ComponentKind::Active { tasks }
        } else {
            ComponentKind::Passive { cpis }
        };
        Some(Component { name, kind })
    }

    fn task(
        &mut self,
        component: usize,
        raw: &RawTask,
        shapes: &Shapes<'_>,
        connections: &Links,
    ) -> Option<Task> {
        let priority = self.priority(&raw.priority);
        let period = self.period(&raw.period);
        let requestor = match &raw.requestor {
            None => Some(u32::MAX),
            Some(r) => {
                let id = u32::try_from(*r.get_ref())
                    .ok()
                    .filter(|&id| id <= MAX_REQUESTOR);
                if id.is_none() {
                    self.report(
                        r.span(),
                        format!("requestor {} is outside 0..={MAX_REQUESTOR}", r.get_ref()),
                        format!("allowed: 0..={MAX_REQUESTOR}, unique per task"),
                    );
                }
                id
            }
        };
        let body = match &raw.body {
            None => Some(None),
            Some(body) => self
                .body(body, component, None, shapes, connections)
                .map(Some),
        };
        let reservation = self.reservation(raw, period);
        Some(Task {
            name: raw.name.get_ref().clone(),
            priority: priority?,
            period: period?,
            requestor: requestor?,
            body: body?,
            reservation: reservation?,
        })
    }

    fn cpi(
        &mut self,
        component: usize,
        position: usize,
        raw: &RawCpi,
        shapes: &Shapes<'_>,
        connections: &Links,
    ) -> Option<Cpi> {
        let protocol = CpiProtocol::from_name(raw.protocol.get_ref());
        if protocol.is_none() {
            self.report(
                raw.protocol.span(),
                format!("unknown priority protocol `{}`", raw.protocol.get_ref()),
                "allowed: propagated, inherited, fixed (fixed with priority = 255 is NPCS)",
            );
        }
        let priority = match &raw.priority {
            None => Some(None),
            Some(p) => self.priority(p).map(Some),
        };
        let threads = match &raw.threads {
            None => Some(None),
            Some(t) => {
                let n = *t.get_ref();
                let valid = u32::try_from(n)
                    .ok()
                    .filter(|t| (1..=MAX_THREADS).contains(t));
                if valid.is_none() {
                    self.report(
                        t.span(),
                        format!("threads {n} is outside 1..={MAX_THREADS}"),
                        format!("allowed: 1..={MAX_THREADS}; leave it out and the analyzer sizes the pool"),
                    );
                }
                valid.map(Some)
            }
        };
        let body = match &raw.body {
            None => Some(None),
            Some(body) => self
                .body(body, component, Some(position), shapes, connections)
                .map(Some),
        };
        let priority = priority?;
        Some(Cpi {
            name: raw.name.get_ref().clone(),
            protocol: protocol?.with_priority(priority),
            priority,
            threads: threads?,
            body: body?,
        })
    }

    fn priority(&mut self, raw: &Spanned<i64>) -> Option<Priority> {
        crate::validate::priority_of(*raw.get_ref())
            .map_err(|message| self.report(raw.span(), message, PRIORITY_HELP))
            .ok()
    }

    /// The task's reservation from `budget` and `eta`: `Some(None)` without either, `None`
    /// (reported) when a value is wrong or `eta` comes without `budget`.
    fn reservation(
        &mut self,
        raw: &RawTask,
        period: Option<Duration>,
    ) -> Option<Option<TaskReservation>> {
        let Some(budget_raw) = &raw.budget else {
            if let Some(eta) = &raw.eta {
                self.report(
                    eta.span(),
                    "eta without a budget",
                    "allowed: eta only beside budget = \"2ms\", which puts the task in an SPR \
                     reservation",
                );
                return None;
            }
            return Some(None);
        };
        let budget = self.time(budget_raw);
        let eta = match &raw.eta {
            Some(eta) => self.time(eta),
            None => Some(Duration::ZERO),
        };
        let (budget, eta, period) = (budget?, eta?, period?);
        match component::reservation(budget, eta, period) {
            Ok(reservation) => Some(Some(reservation)),
            Err((field, message, help)) => {
                let span = match (field, &raw.eta) {
                    (ReservationField::NonPreemptive, Some(eta)) => eta.span(),
                    _ => budget_raw.span(),
                };
                self.report(span, message, help);
                None
            }
        }
    }

    fn period(&mut self, raw: &Spanned<RawTime>) -> Option<Duration> {
        let time = self.time(raw)?;
        if time.is_zero() {
            self.report(
                raw.span(),
                "period cannot be zero",
                "allowed: a time longer than zero, like \"10ms\"",
            );
            return None;
        }
        Some(time)
    }

    fn time(&mut self, raw: &Spanned<RawTime>) -> Option<Duration> {
        let result = match &raw.get_ref().0 {
            RawQuantity::Text(text) => units::parse_time(text),
            RawQuantity::Integer(n) => Err(units::time_without_unit(&n.to_string())),
            RawQuantity::Float(x) => Err(units::time_without_unit(&x.to_string())),
        };
        match result {
            Ok(time) => Some(time),
            Err(e) => {
                self.report(raw.span(), e.message, e.help);
                None
            }
        }
    }

    /// A body: its steps, each request resolved to a connection from `component` (preferring
    /// one sent by this CPI's own procedure, `cpi`).
    fn body(
        &mut self,
        raw: &Spanned<Vec<Spanned<RawStep>>>,
        component: usize,
        cpi: Option<usize>,
        shapes: &Shapes<'_>,
        connections: &Links,
    ) -> Option<Vec<ProcedureStep>> {
        if raw.get_ref().is_empty() {
            self.report(
                raw.span(),
                "a body needs at least one step",
                "allowed: body = [{ execute = \"1ms\" }, { request = \"server.i\" }]",
            );
            return None;
        }
        let mut steps = Vec::new();
        let mut all_valid = true;
        for step in raw.get_ref() {
            let s = step.get_ref();
            let built = match (&s.execute, &s.request) {
                (Some(_), Some(request)) => {
                    self.report(
                        request.span(),
                        "a step does one thing, but this one has both execute and request",
                        STEP_HELP,
                    );
                    None
                }
                (None, None) => {
                    self.report(step.span(), "this step does nothing", STEP_HELP);
                    None
                }
                (Some(time), None) => match self.time(time) {
                    Some(t) if t.is_zero() => {
                        self.report(
                            time.span(),
                            "execute time cannot be zero",
                            "allowed: a time longer than zero, like \"1ms\"",
                        );
                        None
                    }
                    Some(t) => Some(ProcedureStep::Execute(t)),
                    None => None,
                },
                (None, Some(target)) => self.request(target, component, cpi, shapes, connections),
            };
            match built {
                Some(b) => steps.push(b),
                None => all_valid = false,
            }
        }
        all_valid.then_some(steps)
    }

    fn request(
        &mut self,
        target: &Spanned<String>,
        component: usize,
        cpi: Option<usize>,
        shapes: &Shapes<'_>,
        connections: &Links,
    ) -> Option<ProcedureStep> {
        let to = self.receiving_end(target, shapes)?;
        let found = cpi
            .and_then(|c| connections.find(component, to, Some(c)))
            .or_else(|| connections.find(component, to, None));
        if let Some(id) = found {
            return Some(ProcedureStep::Request(ConnectionId(id)));
        }
        // A connection that did not resolve was reported; do not report its requests again.
        let unresolved = connections.unresolved;
        let from = shapes[component].name;
        let sender = match cpi {
            Some(c) => format!("{from}.{}", shapes[component].cpis[c]),
            None => from.to_owned(),
        };
        if !unresolved {
            self.report(
                target.span(),
                format!("no connection from `{sender}` to `{}`", target.get_ref()),
                format!(
                    "add [[connection]] from = \"{from}\", to = \"{}\"",
                    target.get_ref()
                ),
            );
        }
        None
    }
}
