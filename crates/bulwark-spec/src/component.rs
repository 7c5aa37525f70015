//! Component systems: active components originating tasks, passive components providing
//! component procedure interfaces (CPIs), and the RPC connections between them.
//!
//! This is the model of the CAmkES paper (Sudvarg et al., "Priority-based concurrency and
//! shared resource access mechanisms for nested intercomponent requests in CAmkES", section
//! 3.1): each task originates in an active component, whose thread runs it at the task's
//! priority; shared functionality sits behind CPIs of passive components, each tagged with a
//! priority protocol (`propagated`, `inherited` = PIP, `fixed` = IPCP, or NPCS when fixed at
//! the maximum priority); a connection goes from a component that uses a CPI to that CPI.
//!
//! Both front ends build it: [`crate::camkes::parse_camkes`] (the CAmkES ADL subset) and
//! [`crate::component_toml::parse_components`] (TOML). The configuration analyzer in
//! `bulwark-analysis` (`component_graph`) reads it.
//!
//! Invariants (valid by construction; [`ComponentSystem::invariant_violation`] checks them):
//! - component names are unique; task names are unique in the system; CPI names are unique
//!   within their component; requestor identifiers are unique in the system;
//! - an active component has at least one task and no CPIs; a passive one has at least one
//!   CPI and no tasks;
//! - a connection goes to a CPI (of a passive component); when it names the procedure that
//!   sends on it (`procedure`), that is a CPI of its `from` component;
//! - a `Request` step in a body names a connection from the body's own component, and if that
//!   connection names its sending procedure, it is this body's;
//! - a CPI is `Fixed { npcs: true }` exactly when it is fixed at priority 255.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::diagnostic::{Diagnostics, Source, SpecError};
use crate::model::CostModel;

pub use bulwark_core::ipc::CpiProtocol;
use bulwark_core::{Duration, Priority};

/// Largest thread pool a file may ask for (`<cpi>_num_threads`, `threads`).
pub const MAX_THREADS: u32 = 1024;

/// Largest requestor identifier a file may give; `u32::MAX` marks "not given" while a file
/// is read.
pub const MAX_REQUESTOR: u32 = u32::MAX - 1;

/// A whole component system: the components and the connections between them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentSystem {
    /// The components (instances), in file order; a component's index here is its id.
    pub components: Vec<Component>,
    /// The RPC connections, in file order; a connection's index here is its
    /// [`ConnectionId`].
    pub connections: Vec<Connection>,
    /// What the machine charges (`[cost]` of a TOML file: the clock, context
    /// switches and Table 2's IPC steps); free for a `.camkes` file, which has no place for
    /// it.
    pub cost: CostModel,
}

/// Where a system's components and connections are declared in its file: byte spans, in
/// the orders of [`ComponentSystem::components`] and [`ComponentSystem::connections`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declarations {
    /// Each component instance's declaration (its name).
    pub components: Vec<Range<usize>>,
    /// Each connection's declaration.
    pub connections: Vec<Range<usize>>,
}

/// A valid component system with where its components and connections are declared in its
/// file, so that a problem found after validation (a call loop the configuration analyzer
/// finds, a task the machine cannot run) is reported at a line and column like any other.
pub struct LocatedSystem {
    /// The system.
    pub system: ComponentSystem,
    source: Source,
    declarations: Declarations,
}

impl LocatedSystem {
    pub(crate) fn new(
        system: ComponentSystem,
        source: Source,
        declarations: Declarations,
    ) -> LocatedSystem {
        LocatedSystem {
            system,
            source,
            declarations,
        }
    }

    /// An error at the declaration of `connection` (the file's start if there is none).
    pub fn connection_error(
        &self,
        connection: usize,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> SpecError {
        let span = self.declarations.connections.get(connection);
        self.source
            .error(span.cloned().unwrap_or(0..0), message, help)
    }

    /// An error at the declaration of `component` (the file's start if there is none).
    pub fn component_error(
        &self,
        component: usize,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> SpecError {
        let span = self.declarations.components.get(component);
        self.source
            .error(span.cloned().unwrap_or(0..0), message, help)
    }

    /// `errors`, as the diagnostics of this system's file.
    pub fn diagnostics(&self, errors: Vec<SpecError>) -> Diagnostics {
        Diagnostics::new(self.source.file(), errors)
    }
}

/// One component instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    /// Unique name (the CAmkES instance name).
    pub name: String,
    /// Active (originates tasks) or passive (provides CPIs).
    pub kind: ComponentKind,
}

/// What a component does: originate tasks or provide CPIs, never both (the paper's
/// footnote 2: an originating component is the root of its request chains).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ComponentKind {
    /// Has a control thread per task (CAmkES `control;`: exactly one task).
    Active {
        /// The tasks it originates (at least one).
        tasks: Vec<Task>,
    },
    /// Has no thread of its own; its CPIs have thread pools.
    Passive {
        /// The interfaces it provides (at least one).
        cpis: Vec<Cpi>,
    },
}

/// A task `tau_i = (C_i, T_i, p_i)` and the identifier that tracks its control flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Unique name in the system (in CAmkES, the active component's instance name).
    pub name: String,
    /// Its fixed priority `p_i`; larger is more important, 255 the highest.
    pub priority: Priority,
    /// Minimum inter-arrival time `T_i` (implicit deadline).
    pub period: Duration,
    /// The paper's `requestor` attribute: a unique identifier of the task's control flow.
    pub requestor: u32,
    /// What a job does in its originating component, or `None` when not given: then it may
    /// request through every connection from its component, and its own execution time is
    /// unknown.
    pub body: Option<Vec<ProcedureStep>>,
    /// Its scheduling context, when it runs in an SPR reservation.
    pub reservation: Option<TaskReservation>,
}

/// A task's SPR reservation, its scheduling context: budget `b` every period `T_i`, with
/// [`RESERVATION_SLOTS`] replenishment slots and a non-preemptive region `eta`. Every thread
/// working for the task runs on it, servers serving its requests included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskReservation {
    /// The budget `b`: more than zero, at most the period.
    pub budget: Duration,
    /// The non-preemptive region `eta`: at most the budget (zero: fully preemptive).
    pub non_preemptive: Duration,
}

/// The replenishment queue capacity `S` of a component task's reservation (the scenario
/// files' default).
pub const RESERVATION_SLOTS: u16 = 8;

/// Which value of a reservation a check refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReservationField {
    Budget,
    NonPreemptive,
}

/// A reservation of `budget` and `eta` for a task of `period`, or the field that is wrong
/// with the message and help to report there (the same words from every front end).
pub(crate) fn reservation(
    budget: Duration,
    non_preemptive: Duration,
    period: Duration,
) -> Result<TaskReservation, (ReservationField, String, String)> {
    if budget.is_zero() || budget > period {
        return Err((
            ReservationField::Budget,
            format!("budget {budget} is not within the task's period {period}"),
            format!("allowed: a budget longer than zero and at most the period ({period})"),
        ));
    }
    if non_preemptive > budget {
        return Err((
            ReservationField::NonPreemptive,
            format!("eta {non_preemptive} is longer than the budget {budget}"),
            format!("allowed: a non-preemptive region from 0 up to the budget ({budget})"),
        ));
    }
    Ok(TaskReservation {
        budget,
        non_preemptive,
    })
}

/// A component procedure interface: an endpoint with a pool of threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpi {
    /// Unique within its component.
    pub name: String,
    /// The `<cpi>_priority_protocol` attribute.
    pub protocol: CpiProtocol,
    /// The `<cpi>_priority` attribute when set: the priority its threads wait at (the
    /// priority ceiling for `propagated` and `inherited`), or run at (`fixed`: 255 is NPCS).
    /// `None` leaves it to the analyzer, which computes the ceiling.
    pub priority: Option<Priority>,
    /// The `<cpi>_num_threads` attribute when set; `None` leaves it to the analyzer.
    pub threads: Option<u32>,
    /// What the procedure does per request, or `None` when not given: then it may request
    /// through every connection from its component (the over-estimate the paper warns of).
    pub body: Option<Vec<ProcedureStep>>,
}

/// One step of a procedure (or of a task's job in its originating component).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcedureStep {
    /// Execute for this long (non-zero).
    Execute(Duration),
    /// Send a request over this connection and wait for the reply: a nested request when
    /// the body is a CPI's.
    Request(ConnectionId),
}

/// An RPC connection from a component (one of its `uses` interfaces) to a CPI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// The connection's name, for messages (not necessarily unique: a CAmkES connection with
    /// several `from` ends becomes one `Connection` per end, all with its name).
    pub name: String,
    /// The component on the `from` end (an index into `ComponentSystem::components`).
    pub from: usize,
    /// The CAmkES `uses` interface on the `from` end, if the file names one.
    pub interface: Option<String>,
    /// The CPI of `from` whose procedure sends on this connection, when the file says so
    /// (TOML `from = "a.i"`); `None` when any procedure of `from` may (CAmkES connections
    /// name components, not procedures).
    pub procedure: Option<usize>,
    /// The CPI on the `to` end.
    pub to: CpiId,
}

/// A connection: its index in `ComponentSystem::connections`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionId(pub usize);

/// A CPI: its component's index and its index among that component's CPIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpiId {
    /// Index into `ComponentSystem::components`.
    pub component: usize,
    /// Index into that component's CPIs.
    pub cpi: usize,
}

/// A task: its component's index and its index among that component's tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskRef {
    /// Index into `ComponentSystem::components`.
    pub component: usize,
    /// Index into that component's tasks.
    pub task: usize,
}

/// Code that runs in a component: a task's job in its active component, or a CPI's
/// procedure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Procedure {
    /// A task's job in its originating component.
    Task(TaskRef),
    /// A CPI's procedure.
    Cpi(CpiId),
}

/// A procedure that may send on a connection, and how we know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sender {
    /// The procedure.
    pub procedure: Procedure,
    /// True when the file says this procedure sends on it (its body requests it, or the
    /// connection names it, or it is its component's only procedure); false when it is only
    /// assumed, because the procedure has no body and its component has other procedures
    /// (the paper's caveat: a connection names a component, not one of its CPIs).
    pub known: bool,
}

impl Component {
    /// True for an active component.
    pub fn is_active(&self) -> bool {
        matches!(self.kind, ComponentKind::Active { .. })
    }

    /// Its tasks (none for a passive component).
    pub fn tasks(&self) -> &[Task] {
        match &self.kind {
            ComponentKind::Active { tasks } => tasks,
            ComponentKind::Passive { .. } => &[],
        }
    }

    /// Its CPIs (none for an active component).
    pub fn cpis(&self) -> &[Cpi] {
        match &self.kind {
            ComponentKind::Active { .. } => &[],
            ComponentKind::Passive { cpis } => cpis,
        }
    }

    /// How many procedures run in it: its tasks or its CPIs.
    pub fn procedure_count(&self) -> usize {
        self.tasks().len() + self.cpis().len()
    }
}

impl ComponentSystem {
    /// Every task, in component order, with its reference.
    pub fn tasks(&self) -> Vec<(TaskRef, &Task)> {
        let mut all = Vec::new();
        for (component, c) in self.components.iter().enumerate() {
            for (task, t) in c.tasks().iter().enumerate() {
                all.push((TaskRef { component, task }, t));
            }
        }
        all
    }

    /// Every CPI, in component order, with its id.
    pub fn cpis(&self) -> Vec<(CpiId, &Cpi)> {
        let mut all = Vec::new();
        for (component, c) in self.components.iter().enumerate() {
            for (cpi, i) in c.cpis().iter().enumerate() {
                all.push((CpiId { component, cpi }, i));
            }
        }
        all
    }

    /// The task `task` refers to. Panics on a reference from another system.
    pub fn task(&self, task: TaskRef) -> &Task {
        &self.components[task.component].tasks()[task.task]
    }

    /// The CPI `id` refers to. Panics on an id from another system.
    pub fn cpi(&self, id: CpiId) -> &Cpi {
        &self.components[id.component].cpis()[id.cpi]
    }

    /// The connection `id` refers to. Panics on an id from another system.
    pub fn connection(&self, id: ConnectionId) -> &Connection {
        &self.connections[id.0]
    }

    /// `component.cpi`, as files write it.
    pub fn cpi_name(&self, id: CpiId) -> String {
        format!(
            "{}.{}",
            self.components[id.component].name,
            self.cpi(id).name
        )
    }

    /// A procedure's name: the task's name, or `component.cpi`.
    pub fn procedure_name(&self, procedure: Procedure) -> String {
        match procedure {
            Procedure::Task(t) => self.task(t).name.clone(),
            Procedure::Cpi(c) => self.cpi_name(c),
        }
    }

    /// The component a procedure runs in.
    pub fn component_of(procedure: Procedure) -> usize {
        match procedure {
            Procedure::Task(t) => t.component,
            Procedure::Cpi(c) => c.component,
        }
    }

    /// A procedure's body, `None` when the file gives none.
    pub fn body(&self, procedure: Procedure) -> Option<&[ProcedureStep]> {
        match procedure {
            Procedure::Task(t) => self.task(t).body.as_deref(),
            Procedure::Cpi(c) => self.cpi(c).body.as_deref(),
        }
    }

    /// The procedures of a component: its tasks, or its CPIs.
    pub fn procedures_of(&self, component: usize) -> Vec<Procedure> {
        let c = &self.components[component];
        let tasks = (0..c.tasks().len()).map(|task| Procedure::Task(TaskRef { component, task }));
        let cpis = (0..c.cpis().len()).map(|cpi| Procedure::Cpi(CpiId { component, cpi }));
        tasks.chain(cpis).collect()
    }

    /// Which procedures may send on a connection: the one it names; else every procedure of
    /// its `from` component whose body requests it, and every one without a body (assumed,
    /// unless it is the component's only procedure).
    pub fn senders(&self, id: ConnectionId) -> Vec<Sender> {
        let connection = self.connection(id);
        if let Some(cpi) = connection.procedure {
            let procedure = Procedure::Cpi(CpiId {
                component: connection.from,
                cpi,
            });
            return vec![Sender {
                procedure,
                known: true,
            }];
        }
        let only_one = self.components[connection.from].procedure_count() == 1;
        self.procedures_of(connection.from)
            .into_iter()
            .filter_map(|procedure| match self.body(procedure) {
                Some(body) => body
                    .contains(&ProcedureStep::Request(id))
                    .then_some(Sender {
                        procedure,
                        known: true,
                    }),
                None => Some(Sender {
                    procedure,
                    known: only_one,
                }),
            })
            .collect()
    }

    /// The connections a procedure may send on, each with whether that is known (see
    /// [`Sender::known`]), in connection order. It reads every connection: for many
    /// procedures, [`Self::requests`] answers all at once.
    pub fn requests_of(&self, procedure: Procedure) -> Vec<(ConnectionId, bool)> {
        self.requests().remove(&procedure).unwrap_or_default()
    }

    /// [`Self::requests_of`] for every procedure that sends, in one pass over the
    /// connections (a system of many thousand components has as many procedures).
    pub fn requests(&self) -> HashMap<Procedure, Vec<(ConnectionId, bool)>> {
        let mut requests: HashMap<Procedure, Vec<(ConnectionId, bool)>> = HashMap::new();
        for id in (0..self.connections.len()).map(ConnectionId) {
            for sender in self.senders(id) {
                requests
                    .entry(sender.procedure)
                    .or_default()
                    .push((id, sender.known));
            }
        }
        requests
    }

    /// The first broken invariant (see the module header), if any: a debug checker for
    /// tests and for systems built by hand.
    pub fn invariant_violation(&self) -> Option<String> {
        // Sets: a list per name made this check quadratic in a system of many components.
        let mut component_names = HashSet::new();
        let mut task_names = HashSet::new();
        let mut requestors = HashSet::new();
        for c in &self.components {
            if !component_names.insert(c.name.as_str()) {
                return Some(format!("component name `{}` is not unique", c.name));
            }
            match &c.kind {
                ComponentKind::Active { tasks } if tasks.is_empty() => {
                    return Some(format!("active component `{}` has no task", c.name));
                }
                ComponentKind::Passive { cpis } if cpis.is_empty() => {
                    return Some(format!("passive component `{}` has no CPI", c.name));
                }
                _ => {}
            }
            for t in c.tasks() {
                if !task_names.insert(t.name.as_str()) {
                    return Some(format!("task name `{}` is not unique", t.name));
                }
                if !requestors.insert(t.requestor) {
                    return Some(format!("requestor {} is not unique", t.requestor));
                }
            }
            let mut cpi_names = HashSet::new();
            for cpi in c.cpis() {
                if !cpi_names.insert(cpi.name.as_str()) {
                    return Some(format!("CPI `{}.{}` is not unique", c.name, cpi.name));
                }
                if cpi.protocol.with_priority(cpi.priority) != cpi.protocol {
                    return Some(format!(
                        "CPI `{}.{}`: NPCS iff fixed at 255",
                        c.name, cpi.name
                    ));
                }
            }
        }
        for (k, connection) in self.connections.iter().enumerate() {
            let Some(from) = self.components.get(connection.from) else {
                return Some(format!("connection {k} is from no component"));
            };
            let to_exists = self
                .components
                .get(connection.to.component)
                .is_some_and(|c| connection.to.cpi < c.cpis().len());
            if !to_exists {
                return Some(format!("connection {k} goes to no CPI"));
            }
            if connection.procedure.is_some_and(|p| p >= from.cpis().len()) {
                return Some(format!("connection {k} names a procedure `from` lacks"));
            }
        }
        for component in 0..self.components.len() {
            for procedure in self.procedures_of(component) {
                for step in self.body(procedure).unwrap_or(&[]) {
                    match *step {
                        ProcedureStep::Execute(d) if d.is_zero() => {
                            return Some(format!(
                                "`{}` executes for zero time",
                                self.procedure_name(procedure)
                            ));
                        }
                        ProcedureStep::Execute(_) => {}
                        ProcedureStep::Request(id) => {
                            let Some(connection) = self.connections.get(id.0) else {
                                return Some(format!("a request names connection {}", id.0));
                            };
                            let pinned_elsewhere = connection.procedure.is_some_and(|p| {
                                procedure != Procedure::Cpi(CpiId { component, cpi: p })
                            });
                            if connection.from != component || pinned_elsewhere {
                                return Some(format!(
                                    "`{}` requests over a connection that is not its own",
                                    self.procedure_name(procedure)
                                ));
                            }
                        }
                    }
                }
            }
        }
        None
    }
}

/// Gives every task whose requestor is still `u32::MAX` (not given) the smallest identifier
/// no task has, in file order.
pub(crate) fn assign_requestors(components: &mut [Component]) {
    // A set: a system of many thousand tasks asks it once per task.
    let mut used: HashSet<u32> = components
        .iter()
        .flat_map(|c| c.tasks())
        .map(|t| t.requestor)
        .filter(|&r| r != u32::MAX)
        .collect();
    let mut next = 0;
    for component in components.iter_mut() {
        if let ComponentKind::Active { tasks } = &mut component.kind {
            for task in tasks.iter_mut().filter(|t| t.requestor == u32::MAX) {
                while used.contains(&next) {
                    next += 1;
                }
                task.requestor = next;
                used.insert(next);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpi(name: &str, protocol: CpiProtocol, body: Option<Vec<ProcedureStep>>) -> Cpi {
        Cpi {
            name: name.into(),
            protocol,
            priority: None,
            threads: None,
            body,
        }
    }

    /// `client` -> `server.a`; `server` -> `other.x` from `server.b` (by body) only.
    fn system(server_bodies: bool) -> ComponentSystem {
        let body = |steps: Vec<ProcedureStep>| server_bodies.then_some(steps);
        ComponentSystem {
            cost: CostModel::FREE,
            components: vec![
                Component {
                    name: "client".into(),
                    kind: ComponentKind::Active {
                        tasks: vec![Task {
                            name: "client".into(),
                            priority: Priority(5),
                            period: Duration::from_millis(10),
                            requestor: 0,
                            body: None,
                            reservation: None,
                        }],
                    },
                },
                Component {
                    name: "server".into(),
                    kind: ComponentKind::Passive {
                        cpis: vec![
                            cpi("a", CpiProtocol::Propagated, body(vec![])),
                            cpi(
                                "b",
                                CpiProtocol::Inherited,
                                body(vec![ProcedureStep::Request(ConnectionId(1))]),
                            ),
                        ],
                    },
                },
                Component {
                    name: "other".into(),
                    kind: ComponentKind::Passive {
                        cpis: vec![cpi("x", CpiProtocol::Ipcp, None)],
                    },
                },
            ],
            connections: vec![
                Connection {
                    name: "c0".into(),
                    from: 0,
                    interface: Some("out".into()),
                    procedure: None,
                    to: CpiId {
                        component: 1,
                        cpi: 0,
                    },
                },
                Connection {
                    name: "c1".into(),
                    from: 1,
                    interface: Some("out".into()),
                    procedure: None,
                    to: CpiId {
                        component: 2,
                        cpi: 0,
                    },
                },
            ],
        }
    }

    #[test]
    fn bodies_decide_which_procedures_send() {
        let s = system(true);
        assert_eq!(s.invariant_violation(), None);
        let b = Procedure::Cpi(CpiId {
            component: 1,
            cpi: 1,
        });
        assert_eq!(
            s.senders(ConnectionId(1)),
            vec![Sender {
                procedure: b,
                known: true
            }]
        );
        assert_eq!(s.requests_of(b), vec![(ConnectionId(1), true)]);
        // The only procedure of `client` sends, known although it has no body.
        let client = Procedure::Task(TaskRef {
            component: 0,
            task: 0,
        });
        assert_eq!(s.requests_of(client), vec![(ConnectionId(0), true)]);
    }

    #[test]
    fn without_bodies_every_cpi_of_the_component_is_assumed_to_send() {
        let s = system(false);
        let senders = s.senders(ConnectionId(1));
        assert_eq!(senders.len(), 2);
        assert!(senders.iter().all(|s| !s.known));
    }

    /// Each name the checker keeps a set of, repeated: the repeat is named.
    #[test]
    fn the_checker_finds_each_repeated_name() {
        let after = |edit: &dyn Fn(&mut ComponentSystem)| {
            let mut s = system(true);
            edit(&mut s);
            s.invariant_violation()
        };
        let rename_cpi = |s: &mut ComponentSystem, component: usize, cpi: usize| {
            if let ComponentKind::Passive { cpis } = &mut s.components[component].kind {
                cpis[cpi].name = "a".into();
            }
        };
        // A second client: its component renamed, then its task too (the requestor repeats).
        let second_client = |s: &mut ComponentSystem, task_renamed: bool| {
            let mut client = s.components[0].clone();
            client.name = "client2".into();
            if let ComponentKind::Active { tasks } = &mut client.kind {
                if task_renamed {
                    tasks[0].name = "client2".into();
                }
            }
            s.components.push(client);
        };
        type Edit<'a> = &'a dyn Fn(&mut ComponentSystem);
        let cases: [(Edit, Option<&str>); 5] = [
            (
                &|s| s.components[2].name = "server".into(),
                Some("component name `server` is not unique"),
            ),
            (
                &|s| second_client(s, false),
                Some("task name `client` is not unique"),
            ),
            (
                &|s| second_client(s, true),
                Some("requestor 0 is not unique"),
            ),
            (
                &|s| rename_cpi(s, 1, 1),
                Some("CPI `server.a` is not unique"),
            ),
            // The same CPI name in two components is no repeat.
            (&|s| rename_cpi(s, 2, 0), None),
        ];
        for (edit, expected) in cases {
            assert_eq!(after(edit).as_deref(), expected);
        }
    }

    #[test]
    fn the_checker_finds_a_request_over_another_components_connection() {
        let mut s = system(true);
        if let ComponentKind::Passive { cpis } = &mut s.components[1].kind {
            cpis[0].body = Some(vec![ProcedureStep::Request(ConnectionId(0))]);
        }
        assert!(s.invariant_violation().unwrap().contains("not its own"));
    }
}
