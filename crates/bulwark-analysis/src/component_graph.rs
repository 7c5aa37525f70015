//! The configuration analyzer of the CAmkES paper (Sudvarg et al., section 5): per CPI its
//! priority ceiling, minimum priority and thread-pool size; cycles in the connection graph;
//! and the CAmkES configuration lines it computes, ready to paste back.
//!
//! [`analyze`] returns plain data ([`ComponentAnalysis`]); [`render`] and
//! [`camkes_configuration`] turn it into text. Nothing here prints.
//!
//! # The rules, from the paper
//!
//! - **Who runs in a CPI.** A task executes in every CPI its request chains reach: over the
//!   connections of its component, then over those of each CPI's procedure, transitively.
//!   A procedure with a body (`<cpi>_body`) requests exactly what its body says; one without
//!   may request over every connection of its component (a CAmkES connection names a
//!   component, not a CPI: the paper's second caveat, reported as
//!   [`Warning::Overestimate`]).
//! - **Priorities arriving at a CPI.** A request carries its task's priority through
//!   `propagated` and `inherited` CPIs (PIP passes the inherited priority, which is one of
//!   the priorities arriving there). A `fixed` CPI passes its *thread's* priority instead
//!   (section 4.1): the configured one, 255 for NPCS, else its ceiling (IPCP). The CPI's
//!   priority ceiling `p_max(c)` is the highest arriving priority, its minimum priority
//!   `p_min(c)` the lowest (section 3.2, Eqs. 5 and 6 use both).
//! - **Thread pools** (section 4.2, Fig. 3). A `fixed` CPI has one thread. Any other has one
//!   thread per request that can be in it at once, so every requester finds a waiting
//!   thread: a task's job is one control flow, so at most one request per task; an exclusive
//!   CPI upstream (`inherited` or `fixed`) runs one request at a time, so it sends at most
//!   one nested request at a time ("a CPI encapsulating a locking protocol cannot send
//!   multiple concurrent nested requests"). Each source of requests is a *requester*: a
//!   task, or an exclusive CPI carrying any of the tasks that reach it; the number of
//!   requests at once is the largest set of requesters that can each carry a different task
//!   (a maximum bipartite matching; it is at most the number of requesters and at most the
//!   number of tasks). Pools have at least one thread.
//! - **`nest`** (sections 4.2 and 4.3). A non-`fixed` CPI in a nested request chain
//!   downstream of a PIP CPI, reached through non-`fixed` CPIs only (a fixed CPI stops
//!   nested inheritance), provides the `nest` method and needs one more thread.
//! - **Cycles** (section 4.1). A cycle in the connection digraph risks deadlock: a request
//!   chain that comes back to a CPI waits for a lock, thread or reply its own chain holds.
//!   Cycles are looked for among CPIs (procedure to CPI, using bodies) and among components
//!   (connections only). With the paper's first caveat: a cycle among components whose
//!   request paths use distinct CPIs is not a call loop ([`CycleKind::ConnectionsOnly`]);
//!   one that relies on procedures without bodies is only possible
//!   ([`CycleKind::PossibleCallLoop`]).
//!
//! Fig. 3, for example: tasks 1 and 2 request CPI `A.a`, whose procedure requests `B.b`,
//! which task 3 also requests. `A.a` has 2 threads; `B.b` has 3 (tasks 1, 2 and 3 when `A.a`
//! propagates; or `A.a`'s lock holder, task 3 and `nest` when `A.a` is PIP).

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use bulwark_core::{Duration, Priority};
use bulwark_spec::component::{
    ComponentSystem, CpiId, CpiProtocol, Procedure, ProcedureStep, TaskRef,
};

use crate::text_table::{self, Columns};

/// The first caveat of section 5 (and footnote 7), shown with every cycle.
pub const CAVEAT_DISTINCT_CPIS: &str = "a cycle in the connection digraph need not be a call \
     loop: CAmkES connections go from components to CPIs, so when a component has several \
     CPIs, each request path may go through distinct CPIs of the same components, and such \
     paths cannot deadlock (the paper's footnote 7)";

/// The second caveat of section 5, shown with every over-estimate.
pub const CAVEAT_OVERESTIMATE: &str = "a component on the from side of a connection that has \
     several CPIs does not necessarily send requests from all of them, so priority ceilings and \
     thread counts downstream may be over-estimated";

/// Everything the analyzer computes: plain data, for [`render`], [`camkes_configuration`],
/// JSON or the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentAnalysis {
    /// One report per CPI, in component order.
    pub cpis: Vec<CpiReport>,
    /// One report per task, in component order.
    pub tasks: Vec<TaskReport>,
    /// Cycles: CPI-level loops first, then component-level ones with no loop among CPIs.
    pub cycles: Vec<Cycle>,
    /// Everything else worth a look, in CPI order.
    pub warnings: Vec<Warning>,
}

/// What the analyzer found for one CPI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpiReport {
    /// The CPI.
    pub id: CpiId,
    /// Its component's name.
    pub component: String,
    /// Its name (the interface name).
    pub interface: String,
    /// Its protocol.
    pub protocol: CpiProtocol,
    /// The tasks it may execute for, by name, in task order.
    pub tasks: Vec<String>,
    /// Who sends it requests, each at most one at a time.
    pub requesters: Vec<Requester>,
    /// `p_min(c)`: the lowest priority a request arrives with; `None` if never requested.
    pub minimum: Option<Priority>,
    /// `p_max(c)`, its priority ceiling: the highest; `None` if never requested.
    pub ceiling: Option<Priority>,
    /// The priority its threads wait at (run at, for `fixed`): as configured, else 255 for
    /// NPCS, else the ceiling; `None` if neither is known (never requested).
    pub priority: Option<Priority>,
    /// The most requests that can be in it at once.
    pub concurrent: usize,
    /// True when it needs the `nest` method (and a thread for it).
    pub nest: bool,
    /// The pool size it needs: 1 for `fixed`; else `max(concurrent, 1)`, plus 1 for `nest`.
    pub threads: u32,
    /// The pool size the file gives, if any.
    pub configured_threads: Option<u32>,
    /// The priority the file gives, if any.
    pub configured_priority: Option<Priority>,
}

impl CpiReport {
    /// `component.interface`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.component, self.interface)
    }
}

/// A source of requests to a CPI, which sends at most one at a time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Requester {
    /// A task, from its component or through propagating CPIs.
    Task(String),
    /// An exclusive CPI (`inherited` or `fixed`) upstream, `component.cpi`, carrying any of
    /// the tasks that reach it.
    Exclusive(String),
}

/// What the analyzer found for one task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskReport {
    /// The task's name.
    pub name: String,
    /// Its priority.
    pub priority: Priority,
    /// Its period.
    pub period: Duration,
    /// Its requestor identifier.
    pub requestor: u32,
    /// The CPIs it may execute in (`c-hat_i`), `component.cpi`, in CPI order.
    pub cpis: Vec<String>,
    /// Its execution time along its whole request tree, protocol overheads excluded (Eq. 1
    /// without the `C_prop` terms): `None` unless every procedure it reaches has a body and
    /// no request chain loops.
    pub execution: Option<Duration>,
}

/// A cycle in the connection graph, with how sure the analyzer is that it is a call loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycle {
    /// The components on it, in order (the first is not repeated at the end).
    pub components: Vec<String>,
    /// The CPIs on it in call order, `component.cpi` (each requests the next, the last the
    /// first); for [`CycleKind::ConnectionsOnly`], the CPIs the connections go to.
    pub cpis: Vec<String>,
    /// How sure.
    pub kind: CycleKind,
}

/// How sure the analyzer is that a cycle is a call loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleKind {
    /// Every request on it is known from bodies, from connections that name their sender,
    /// or from single-CPI components: a request chain can come back to where it was.
    CallLoop,
    /// A loop only if procedures without bodies send the requests they may send.
    PossibleCallLoop,
    /// The components' connections form a cycle, but the CPIs' bodies show that no request
    /// chain goes round it.
    ConnectionsOnly,
}

impl Cycle {
    /// The warning for people: what the cycle is, the deadlock risk, and the caveat.
    pub fn warning(&self) -> String {
        let mut cpis = self.cpis.clone();
        if let Some(first) = self.cpis.first() {
            cpis.push(first.clone());
        }
        let path = cpis.join(" -> ");
        let components = self.components.join(", ");
        match self.kind {
            CycleKind::CallLoop => format!(
                "call loop {path} (components {components}): a request chain can come back to \
                 a CPI it is already in, and then waits for a lock, a thread or a reply its own \
                 chain holds: deadlock. Remove a connection or a request on the loop; caveat: \
                 {CAVEAT_DISTINCT_CPIS}"
            ),
            CycleKind::PossibleCallLoop => format!(
                "possible call loop {path} (components {components}): if the procedures on it \
                 send these requests, a request chain comes back to a CPI it is already in and \
                 deadlocks. Caveat: {CAVEAT_DISTINCT_CPIS}; give the CPIs bodies \
                 (<cpi>_body) to decide"
            ),
            CycleKind::ConnectionsOnly => format!(
                "the connections of components {components} form a cycle (through {}), but the \
                 procedure bodies show that no request chain goes round it, so it cannot \
                 deadlock: {CAVEAT_DISTINCT_CPIS}",
                self.cpis.join(", ")
            ),
        }
    }
}

/// Something else worth a look.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Warning {
    /// A passive component with several CPIs sends over connections without saying which
    /// CPI's procedure sends: every CPI of it is assumed to (the second caveat).
    Overestimate {
        /// The component.
        component: String,
        /// The connections (by name) whose senders are assumed.
        connections: Vec<String>,
        /// The CPIs assumed to send (those without bodies).
        cpis: Vec<String>,
    },
    /// The file gives a pool smaller than the analyzer computes.
    TooFewThreads {
        /// `component.cpi`.
        cpi: String,
        /// The pool the file gives.
        configured: u32,
        /// The pool needed.
        needed: u32,
    },
    /// The file gives a priority below the CPI's ceiling.
    PriorityBelowCeiling {
        /// `component.cpi`.
        cpi: String,
        /// Its protocol.
        protocol: CpiProtocol,
        /// The priority the file gives.
        configured: Priority,
        /// The ceiling.
        ceiling: Priority,
    },
    /// No request chain reaches this CPI.
    NeverRequested {
        /// `component.cpi`.
        cpi: String,
    },
}

impl Warning {
    /// One line for people.
    pub fn message(&self) -> String {
        match self {
            Warning::Overestimate {
                component,
                connections,
                cpis,
            } => format!(
                "`{component}` has several CPIs, and {} of them ({}) may send over {} (no body \
                 says otherwise): {CAVEAT_OVERESTIMATE}; give them bodies (<cpi>_body) to be exact",
                if cpis.len() == 1 { "one" } else { "each" },
                cpis.join(", "),
                connections.join(", ")
            ),
            Warning::TooFewThreads {
                cpi,
                configured,
                needed,
            } => format!(
                "`{cpi}` has {configured} thread{} but needs {needed}: a request could find no \
                 thread waiting on the endpoint and block behind unrelated work",
                if *configured == 1 { "" } else { "s" }
            ),
            Warning::PriorityBelowCeiling {
                cpi,
                protocol,
                configured,
                ceiling,
            } => match protocol {
                CpiProtocol::Ipcp | CpiProtocol::Npcs => format!(
                    "`{cpi}` is fixed at priority {}, below its ceiling {}: requests of higher \
                     priority can be blocked by lower-priority tasks' work in it (IPCP runs at \
                     the ceiling)",
                    configured.0, ceiling.0
                ),
                _ => format!(
                    "`{cpi}`'s threads wait at priority {}, below its ceiling {}: a request of \
                     higher priority may not get to run the protocol's steps at once (the \
                     paper's threads wait at the ceiling)",
                    configured.0, ceiling.0
                ),
            },
            Warning::NeverRequested { cpi } => {
                format!("no task's requests reach `{cpi}`; it keeps one thread")
            }
        }
    }
}

/// A requester of a CPI, as the analysis tracks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Lane {
    /// A task (global index).
    Task(usize),
    /// An exclusive CPI (flat index).
    Exclusive(usize),
}

/// The system flattened: tasks and CPIs by dense index, and who may request whom.
struct Graph<'s> {
    system: &'s ComponentSystem,
    tasks: Vec<TaskRef>,
    cpis: Vec<CpiId>,
    /// Per task: (CPI, known) for each connection it may send on.
    task_edges: Vec<Vec<(usize, bool)>>,
    /// Per CPI: (CPI, known) for each connection its procedure may send on.
    cpi_edges: Vec<Vec<(usize, bool)>>,
    protocol: Vec<CpiProtocol>,
}

impl<'s> Graph<'s> {
    fn new(system: &'s ComponentSystem) -> Graph<'s> {
        let tasks: Vec<TaskRef> = system.tasks().into_iter().map(|(r, _)| r).collect();
        let cpis: Vec<CpiId> = system.cpis().into_iter().map(|(id, _)| id).collect();
        let flat: HashMap<CpiId, usize> = cpis.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let requests = system.requests();
        let edges = |procedure: Procedure| -> Vec<(usize, bool)> {
            (requests
                .get(&procedure)
                .map_or(&[][..], Vec::as_slice)
                .iter())
            .map(|&(connection, known)| (flat[&system.connection(connection).to], known))
            .collect()
        };
        let task_edges = tasks.iter().map(|&t| edges(Procedure::Task(t))).collect();
        let cpi_edges = cpis.iter().map(|&c| edges(Procedure::Cpi(c))).collect();
        let protocol = cpis.iter().map(|&c| system.cpi(c).protocol).collect();
        Graph {
            system,
            tasks,
            cpis,
            task_edges,
            cpi_edges,
            protocol,
        }
    }

    fn task_priority(&self, task: usize) -> u8 {
        self.system.task(self.tasks[task]).priority.0
    }

    fn configured_priority(&self, cpi: usize) -> Option<u8> {
        self.system.cpi(self.cpis[cpi]).priority.map(|p| p.0)
    }

    fn cpi_name(&self, cpi: usize) -> String {
        self.system.cpi_name(self.cpis[cpi])
    }
}

/// Runs the configuration analyzer on a system.
pub fn analyze(system: &ComponentSystem) -> ComponentAnalysis {
    let graph = Graph::new(system);
    let (reach, lanes) = tasks_and_lanes(&graph);
    let ceilings = ceilings(&graph, &reach);
    let arrivals = arrivals(&graph, &reach, &ceilings);
    let nest = nest(&graph, &reach);

    let mut cpis = Vec::new();
    let mut warnings = Vec::new();
    for (c, &id) in graph.cpis.iter().enumerate() {
        let cpi = system.cpi(id);
        let name = graph.cpi_name(c);
        let protocol = graph.protocol[c];
        let minimum = arrivals[c].first().map(|&p| Priority(p));
        let ceiling = arrivals[c].last().map(|&p| Priority(p));
        let priority = match protocol {
            CpiProtocol::Npcs => Some(Priority::MAX),
            _ => cpi.priority.or(ceiling),
        };
        let concurrent = largest_matching(&lanes[c], &reach);
        let threads = if protocol.is_fixed() {
            1
        } else {
            u32::try_from(concurrent.max(1)).unwrap_or(u32::MAX) + u32::from(nest[c])
        };
        if reach[c].is_empty() {
            warnings.push(Warning::NeverRequested { cpi: name.clone() });
        }
        if let Some(configured) = cpi.threads.filter(|&t| t < threads) {
            warnings.push(Warning::TooFewThreads {
                cpi: name.clone(),
                configured,
                needed: threads,
            });
        }
        let npcs = protocol == CpiProtocol::Npcs;
        if let (Some(configured), Some(ceiling), false) = (cpi.priority, ceiling, npcs) {
            if configured < ceiling {
                warnings.push(Warning::PriorityBelowCeiling {
                    cpi: name.clone(),
                    protocol,
                    configured,
                    ceiling,
                });
            }
        }
        cpis.push(CpiReport {
            id,
            component: system.components[id.component].name.clone(),
            interface: cpi.name.clone(),
            protocol,
            tasks: reach[c]
                .iter()
                .map(|&t| system.task(graph.tasks[t]).name.clone())
                .collect(),
            requesters: lanes[c]
                .iter()
                .map(|lane| match *lane {
                    Lane::Task(t) => Requester::Task(system.task(graph.tasks[t]).name.clone()),
                    Lane::Exclusive(u) => Requester::Exclusive(graph.cpi_name(u)),
                })
                .collect(),
            minimum,
            ceiling,
            priority,
            concurrent,
            nest: nest[c],
            threads,
            configured_threads: cpi.threads,
            configured_priority: cpi.priority,
        });
    }
    warnings.extend(overestimates(system));
    ComponentAnalysis {
        cpis,
        tasks: task_reports(&graph, &reach),
        cycles: cycles(&graph),
        warnings,
    }
}

/// Per CPI, the tasks that reach it and its requesters: a fixpoint, as both only grow.
fn tasks_and_lanes(graph: &Graph<'_>) -> (Vec<BTreeSet<usize>>, Vec<BTreeSet<Lane>>) {
    let n = graph.cpis.len();
    let mut reach = vec![BTreeSet::new(); n];
    let mut lanes = vec![BTreeSet::new(); n];
    for (t, edges) in graph.task_edges.iter().enumerate() {
        for &(c, _) in edges {
            reach[c].insert(t);
            lanes[c].insert(Lane::Task(t));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..n {
            if reach[u].is_empty() {
                continue;
            }
            let carried = reach[u].clone();
            let sent: BTreeSet<Lane> = if graph.protocol[u].is_exclusive() {
                BTreeSet::from([Lane::Exclusive(u)])
            } else {
                lanes[u].clone()
            };
            for &(c, _) in &graph.cpi_edges[u] {
                let before = (reach[c].len(), lanes[c].len());
                reach[c].extend(carried.iter().copied());
                lanes[c].extend(sent.iter().copied());
                changed |= before != (reach[c].len(), lanes[c].len());
            }
        }
    }
    (reach, lanes)
}

/// Per CPI, its priority ceiling: the highest priority arriving, where a `fixed` CPI sends
/// its thread's priority. A fixpoint: ceilings only rise.
fn ceilings(graph: &Graph<'_>, reach: &[BTreeSet<usize>]) -> Vec<Option<u8>> {
    let n = graph.cpis.len();
    let mut ceiling: Vec<Option<u8>> = vec![None; n];
    for (t, edges) in graph.task_edges.iter().enumerate() {
        for &(c, _) in edges {
            ceiling[c] = ceiling[c].max(Some(graph.task_priority(t)));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..n {
            if reach[u].is_empty() {
                continue;
            }
            let sent = match graph.protocol[u] {
                CpiProtocol::Ipcp | CpiProtocol::Npcs => {
                    graph.configured_priority(u).or(ceiling[u])
                }
                _ => ceiling[u],
            };
            for &(c, _) in &graph.cpi_edges[u] {
                if sent > ceiling[c] {
                    ceiling[c] = sent;
                    changed = true;
                }
            }
        }
    }
    ceiling
}

/// Per CPI, every priority a request may arrive with (sorted), once the fixed CPIs' thread
/// priorities are known.
fn arrivals(
    graph: &Graph<'_>,
    reach: &[BTreeSet<usize>],
    ceilings: &[Option<u8>],
) -> Vec<BTreeSet<u8>> {
    let n = graph.cpis.len();
    let mut arrivals = vec![BTreeSet::new(); n];
    for (t, edges) in graph.task_edges.iter().enumerate() {
        for &(c, _) in edges {
            arrivals[c].insert(graph.task_priority(t));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..n {
            if reach[u].is_empty() {
                continue;
            }
            let sent: BTreeSet<u8> = match graph.protocol[u] {
                CpiProtocol::Ipcp | CpiProtocol::Npcs => graph
                    .configured_priority(u)
                    .or(ceilings[u])
                    .into_iter()
                    .collect(),
                _ => arrivals[u].clone(),
            };
            for &(c, _) in &graph.cpi_edges[u] {
                let before = arrivals[c].len();
                arrivals[c].extend(sent.iter().copied());
                changed |= before != arrivals[c].len();
            }
        }
    }
    arrivals
}

/// Per CPI, whether it needs `nest`: not `fixed`, and reached from a requested PIP CPI
/// through non-`fixed` CPIs only.
fn nest(graph: &Graph<'_>, reach: &[BTreeSet<usize>]) -> Vec<bool> {
    let n = graph.cpis.len();
    let mut nest = vec![false; n];
    let mut stack: Vec<usize> = (0..n)
        .filter(|&u| graph.protocol[u] == CpiProtocol::Inherited && !reach[u].is_empty())
        .collect();
    let mut expanded = vec![false; n];
    while let Some(u) = stack.pop() {
        if std::mem::replace(&mut expanded[u], true) {
            continue;
        }
        for &(c, _) in &graph.cpi_edges[u] {
            if !graph.protocol[c].is_fixed() {
                nest[c] = true;
                stack.push(c);
            }
        }
    }
    nest
}

/// The most requesters that can each carry a different task at once: a maximum bipartite
/// matching (augmenting paths, Kuhn's algorithm) between requesters and tasks.
fn largest_matching(lanes: &BTreeSet<Lane>, reach: &[BTreeSet<usize>]) -> usize {
    let carried: Vec<Vec<usize>> = lanes
        .iter()
        .map(|lane| match *lane {
            Lane::Task(t) => vec![t],
            Lane::Exclusive(u) => reach[u].iter().copied().collect(),
        })
        .collect();
    let mut owner: HashMap<usize, usize> = HashMap::new();
    let mut matched = 0;
    for lane in 0..carried.len() {
        let mut visited = BTreeSet::new();
        if augment(lane, &carried, &mut owner, &mut visited) {
            matched += 1;
        }
    }
    matched
}

/// Finds a task for `lane`, moving other lanes to other tasks if need be.
fn augment(
    lane: usize,
    carried: &[Vec<usize>],
    owner: &mut HashMap<usize, usize>,
    visited: &mut BTreeSet<usize>,
) -> bool {
    for &task in &carried[lane] {
        if !visited.insert(task) {
            continue;
        }
        let free = match owner.get(&task) {
            None => true,
            Some(&other) => augment(other, carried, owner, visited),
        };
        if free {
            owner.insert(task, lane);
            return true;
        }
    }
    false
}

/// Passive components with several CPIs whose connections' senders are only assumed.
fn overestimates(system: &ComponentSystem) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for (index, component) in system.components.iter().enumerate() {
        if component.cpis().len() < 2 {
            continue;
        }
        let mut connections = Vec::new();
        let mut cpis = BTreeSet::new();
        for (k, connection) in system.connections.iter().enumerate() {
            if connection.from != index {
                continue;
            }
            let assumed: Vec<Procedure> = system
                .senders(bulwark_spec::component::ConnectionId(k))
                .into_iter()
                .filter(|s| !s.known)
                .map(|s| s.procedure)
                .collect();
            if !assumed.is_empty() {
                connections.push(connection.name.clone());
                cpis.extend(assumed);
            }
        }
        if !connections.is_empty() {
            warnings.push(Warning::Overestimate {
                component: component.name.clone(),
                connections,
                cpis: cpis.into_iter().map(|p| system.procedure_name(p)).collect(),
            });
        }
    }
    warnings
}

fn task_reports(graph: &Graph<'_>, reach: &[BTreeSet<usize>]) -> Vec<TaskReport> {
    let mut times = HashMap::new();
    graph
        .tasks
        .iter()
        .enumerate()
        .map(|(t, &task_ref)| {
            let task = graph.system.task(task_ref);
            TaskReport {
                name: task.name.clone(),
                priority: task.priority,
                period: task.period,
                requestor: task.requestor,
                cpis: (0..graph.cpis.len())
                    .filter(|&c| reach[c].contains(&t))
                    .map(|c| graph.cpi_name(c))
                    .collect(),
                execution: execution(graph.system, Procedure::Task(task_ref), &mut times),
            }
        })
        .collect()
}

/// A procedure's time while `execution` works it out: on the search path (a request back
/// to it is a loop), or done.
#[derive(Clone, Copy)]
enum Timed {
    OnPath,
    Done(Option<Duration>),
}

/// A procedure's execution time including its nested requests, or `None` when a body is
/// missing or the request chain loops. Each procedure is worked out once (`times`, shared by
/// the calls for one system: a procedure's time does not depend on who requests it), depth
/// first with an explicit stack, so a chain of many thousand nested requests takes linear
/// time and cannot overflow the thread's stack.
fn execution(
    system: &ComponentSystem,
    procedure: Procedure,
    times: &mut HashMap<Procedure, Timed>,
) -> Option<Duration> {
    let add = |total: Option<Duration>, part: Option<Duration>| total?.checked_add(part?);
    match times.get(&procedure) {
        Some(Timed::Done(time)) => return *time,
        Some(Timed::OnPath) => return None,
        None => {}
    }
    times.insert(procedure, Timed::OnPath);
    // The search path: each procedure with its next step and its time so far.
    let mut path = vec![(procedure, 0, Some(Duration::ZERO))];
    while let Some(frame) = path.last_mut() {
        let (current, at) = (frame.0, frame.1);
        // A procedure without a body has no known time.
        let step = match system.body(current) {
            Some(body) => body.get(at),
            None => {
                frame.2 = None;
                None
            }
        };
        if let Some(step) = step {
            frame.1 += 1;
            match *step {
                ProcedureStep::Execute(time) => frame.2 = add(frame.2, Some(time)),
                ProcedureStep::Request(k) => {
                    let target = Procedure::Cpi(system.connection(k).to);
                    match times.get(&target).copied() {
                        Some(Timed::Done(time)) => frame.2 = add(frame.2, time),
                        // A request back into the path: the chain loops.
                        Some(Timed::OnPath) => frame.2 = None,
                        None => {
                            times.insert(target, Timed::OnPath);
                            path.push((target, 0, Some(Duration::ZERO)));
                        }
                    }
                }
            }
            continue;
        }
        let total = frame.2;
        path.pop();
        times.insert(current, Timed::Done(total));
        match path.last_mut() {
            Some(caller) => caller.2 = add(caller.2, total),
            None => return total,
        }
    }
    None
}

/// Strongly connected groups with a cycle (more than one node, or a node with an edge to
/// itself), each sorted, in order of their smallest node. Tarjan's algorithm, linear in the
/// graph (a system of many thousand components has as many nodes), with an explicit stack of
/// frames so that a long chain of calls cannot overflow the thread's own.
fn cyclic_groups(edges: &[Vec<(usize, bool)>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let nodes = edges.len();
    // Each node's discovery order and the least order it reaches back to.
    let mut order = vec![UNSEEN; nodes];
    let mut low = vec![0; nodes];
    let mut on_stack = vec![false; nodes];
    let mut stack: Vec<usize> = Vec::new();
    let mut discovered = 0;
    let mut groups = Vec::new();
    // The search path: each node with the next of its edges to follow.
    let mut frames: Vec<(usize, usize)> = Vec::new();
    for root in 0..nodes {
        if order[root] != UNSEEN {
            continue;
        }
        frames.push((root, 0));
        while let Some(frame) = frames.last_mut() {
            let node = frame.0;
            if order[node] == UNSEEN {
                // A node is discovered when its frame is first on top.
                order[node] = discovered;
                low[node] = discovered;
                discovered += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&(next, _)) = edges[node].get(frame.1) {
                frame.1 += 1;
                if order[next] == UNSEEN {
                    frames.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(order[next]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] != order[node] {
                continue;
            }
            // `node` roots a strongly connected group: the stack down to it.
            let mut group = Vec::new();
            while let Some(member) = stack.pop() {
                on_stack[member] = false;
                group.push(member);
                if member == node {
                    break;
                }
            }
            let cyclic = group.len() > 1 || edges[node].iter().any(|&(to, _)| to == node);
            if cyclic {
                group.sort_unstable();
                groups.push(group);
            }
        }
    }
    groups.sort_unstable_by_key(|group| group[0]);
    groups
}

/// A shortest cycle through some node of `group`, using only edges inside it (and only
/// known ones when `known_only`), as the list of its nodes from the smallest possible start.
fn witness(edges: &[Vec<(usize, bool)>], group: &[usize], known_only: bool) -> Option<Vec<usize>> {
    let mut best: Option<Vec<usize>> = None;
    for &start in group {
        // Breadth-first from `start` back to `start`.
        let mut previous: HashMap<usize, usize> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut found = None;
        while let Some(u) = queue.pop_front() {
            for &(v, known) in &edges[u] {
                if !group.contains(&v) || (known_only && !known) {
                    continue;
                }
                if v == start {
                    found = Some(u);
                    break;
                }
                if let std::collections::hash_map::Entry::Vacant(e) = previous.entry(v) {
                    e.insert(u);
                    queue.push_back(v);
                }
            }
            if found.is_some() {
                break;
            }
        }
        let Some(mut last) = found else { continue };
        let mut path = vec![last];
        while last != start {
            last = previous[&last];
            path.push(last);
        }
        path.reverse();
        if best.as_ref().is_none_or(|b| path.len() < b.len()) {
            best = Some(path);
        }
    }
    best
}

/// CPI-level loops, then component-level cycles that hold no CPI-level loop.
fn cycles(graph: &Graph<'_>) -> Vec<Cycle> {
    let system = graph.system;
    let mut cycles = Vec::new();
    let mut looping_components: BTreeSet<usize> = BTreeSet::new();
    for group in cyclic_groups(&graph.cpi_edges) {
        let (path, kind) = match witness(&graph.cpi_edges, &group, true) {
            Some(path) => (path, CycleKind::CallLoop),
            None => match witness(&graph.cpi_edges, &group, false) {
                Some(path) => (path, CycleKind::PossibleCallLoop),
                None => continue,
            },
        };
        let mut components = Vec::new();
        for &c in &path {
            let component = graph.cpis[c].component;
            looping_components.insert(component);
            let name = system.components[component].name.clone();
            if !components.contains(&name) {
                components.push(name);
            }
        }
        cycles.push(Cycle {
            components,
            cpis: path.iter().map(|&c| graph.cpi_name(c)).collect(),
            kind,
        });
    }
    // Components: an edge per connection, to the CPI's component.
    let mut component_edges: Vec<Vec<(usize, bool)>> = vec![Vec::new(); system.components.len()];
    for connection in &system.connections {
        component_edges[connection.from].push((connection.to.component, true));
    }
    for group in cyclic_groups(&component_edges) {
        if group.iter().any(|c| looping_components.contains(c)) {
            continue;
        }
        let Some(path) = witness(&component_edges, &group, false) else {
            continue;
        };
        let targets = path
            .iter()
            .enumerate()
            .filter_map(|(i, &from)| {
                let to = path[(i + 1) % path.len()];
                system
                    .connections
                    .iter()
                    .find(|k| k.from == from && k.to.component == to)
                    .map(|k| system.cpi_name(k.to))
            })
            .collect();
        cycles.push(Cycle {
            components: path
                .iter()
                .map(|&c| system.components[c].name.clone())
                .collect(),
            cpis: targets,
            kind: CycleKind::ConnectionsOnly,
        });
    }
    cycles
}

/// The analysis as text for people: a table of CPIs, the tasks, then cycles and warnings.
pub fn render(analysis: &ComponentAnalysis) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 7]> = analysis
        .cpis
        .iter()
        .map(|c| {
            let priority =
                |p: Option<Priority>| p.map_or_else(|| "-".to_owned(), |p| p.0.to_string());
            let threads = match (c.protocol.is_fixed(), c.nest) {
                (true, _) => "1 (fixed)".to_owned(),
                (false, true) => format!("{} ({} at once + nest)", c.threads, c.concurrent),
                (false, false) => format!("{} ({} at once)", c.threads, c.concurrent),
            };
            [
                c.name(),
                c.protocol.label().to_owned(),
                if c.tasks.is_empty() {
                    "-".to_owned()
                } else {
                    c.tasks.join(", ")
                },
                priority(c.minimum),
                priority(c.ceiling),
                priority(c.priority),
                threads,
            ]
        })
        .collect();
    let header = [
        "CPI", "protocol", "tasks", "min", "ceiling", "priority", "threads",
    ];
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    out.push_str(&text_table::render(&header, &rows, Columns::Text));
    if !analysis.tasks.is_empty() {
        out.push_str("\ntasks:\n");
        for t in &analysis.tasks {
            let execution = t
                .execution
                .map_or_else(|| "unknown".to_owned(), |d| d.to_string());
            let _ = writeln!(
                out,
                "  {} (priority {}, period {}, requestor {}): runs in {}; execution {execution}",
                t.name,
                t.priority.0,
                t.period,
                t.requestor,
                if t.cpis.is_empty() {
                    "its own component only".to_owned()
                } else {
                    t.cpis.join(", ")
                }
            );
        }
    }
    if !analysis.cycles.is_empty() {
        out.push_str("\ncycles:\n");
        for cycle in &analysis.cycles {
            let level = match cycle.kind {
                CycleKind::ConnectionsOnly => "note",
                _ => "warning",
            };
            let _ = writeln!(out, "  {level}: {}", cycle.warning());
        }
    }
    if !analysis.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for warning in &analysis.warnings {
            let _ = writeln!(out, "  warning: {}", warning.message());
        }
    }
    out
}

/// The attributes the analyzer computes, as CAmkES configuration lines to paste into the
/// assembly's `configuration` block: `<cpi>_priority` (the ceiling; 255 for NPCS) and
/// `<cpi>_num_threads`, for every CPI.
pub fn camkes_configuration(analysis: &ComponentAnalysis) -> String {
    let mut out = String::from(
        "/* Computed by the Bulwark configuration analyzer: priority ceilings and thread pools. */\n",
    );
    for c in &analysis.cpis {
        let name = c.name();
        match (c.protocol, c.ceiling) {
            (CpiProtocol::Npcs, _) => {
                let _ = writeln!(out, "{name}_priority = 255; /* NPCS */");
            }
            (_, Some(ceiling)) => {
                let minimum = c.minimum.map_or(ceiling.0, |p| p.0);
                let what = if c.protocol.is_fixed() {
                    "IPCP at the priority ceiling"
                } else {
                    "threads wait at the priority ceiling"
                };
                let _ = writeln!(
                    out,
                    "{name}_priority = {}; /* {what}; minimum priority {minimum} */",
                    ceiling.0
                );
            }
            (_, None) => {
                let _ = writeln!(
                    out,
                    "/* {name} is never requested: no priority to compute */"
                );
            }
        }
        let requests = if c.concurrent == 1 {
            "1 request".to_owned()
        } else {
            format!("{} requests", c.concurrent)
        };
        let why = if c.protocol.is_fixed() {
            "one thread: fixed".to_owned()
        } else if c.nest {
            format!("{requests} at once + 1 for nest")
        } else {
            format!("{requests} at once")
        };
        let _ = writeln!(out, "{name}_num_threads = {}; /* {why} */", c.threads);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matching_gives_each_request_a_different_task() {
        // Tasks 0, 1, 2; exclusive CPIs 0 (carries task 0), 1 (task 0), 2 (tasks 1 and 2).
        let reach = vec![
            BTreeSet::from([0]),
            BTreeSet::from([0]),
            BTreeSet::from([1, 2]),
        ];
        // Three requesters, but CPIs 0 and 1 both carry only task 0: two at once.
        let lanes = BTreeSet::from([Lane::Exclusive(0), Lane::Exclusive(1), Lane::Exclusive(2)]);
        assert_eq!(largest_matching(&lanes, &reach), 2);
        // Task 1 directly and CPI 2 (tasks 1 or 2): CPI 2 moves to task 2.
        let lanes = BTreeSet::from([Lane::Exclusive(2), Lane::Task(1)]);
        assert_eq!(largest_matching(&lanes, &reach), 2);
        assert_eq!(largest_matching(&BTreeSet::new(), &reach), 0);
    }

    /// The groups of mutually reachable nodes, by search from every node: quadratic, the
    /// definition itself, against which Tarjan's groups are checked.
    fn groups_by_reachability(edges: &[Vec<(usize, bool)>]) -> Vec<Vec<usize>> {
        let nodes = edges.len();
        let reaches: Vec<Vec<bool>> = (0..nodes)
            .map(|start| {
                let mut row = vec![false; nodes];
                let mut stack = vec![start];
                while let Some(node) = stack.pop() {
                    for &(next, _) in &edges[node] {
                        if !row[next] {
                            row[next] = true;
                            stack.push(next);
                        }
                    }
                }
                row
            })
            .collect();
        let mut grouped = vec![false; nodes];
        let mut groups = Vec::new();
        for node in 0..nodes {
            if grouped[node] || !reaches[node][node] {
                continue;
            }
            let group: Vec<usize> = (0..nodes)
                .filter(|&other| reaches[node][other] && reaches[other][node])
                .collect();
            for &member in &group {
                grouped[member] = true;
            }
            groups.push(group);
        }
        groups
    }

    proptest::proptest! {
        /// On random graphs (self-loops, parallel edges and isolated nodes included), the
        /// cyclic groups are exactly the groups of mutually reachable nodes that hold a cycle.
        #[test]
        fn cyclic_groups_are_the_mutually_reachable_ones(
            edges in proptest::collection::vec(
                proptest::collection::vec((0usize..12, proptest::bool::ANY), 0..4),
                1..12,
            )
        ) {
            let nodes = edges.len();
            let edges: Vec<Vec<(usize, bool)>> = edges
                .into_iter()
                .map(|out| out.into_iter().map(|(to, known)| (to % nodes, known)).collect())
                .collect();
            proptest::prop_assert_eq!(cyclic_groups(&edges), groups_by_reachability(&edges));
        }
    }

    /// A chain of 200,000 calls ending in a loop to its start: one group of every node, found
    /// without recursion (a recursive search would overflow the test thread's stack).
    #[test]
    fn a_long_chain_is_grouped_without_recursion() {
        let nodes = 200_000;
        let edges: Vec<Vec<(usize, bool)>> = (0..nodes)
            .map(|node| vec![((node + 1) % nodes, true)])
            .collect();
        let groups = cyclic_groups(&edges);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].len(), nodes);
        let open: Vec<Vec<(usize, bool)>> = (0..nodes)
            .map(|node| {
                if node + 1 < nodes {
                    vec![(node + 1, true)]
                } else {
                    vec![]
                }
            })
            .collect();
        assert!(cyclic_groups(&open).is_empty());
    }

    #[test]
    fn witnesses_are_shortest_and_can_be_limited_to_known_edges() {
        // 0 -> 1 -> 2 -> 0 known; 0 -> 2 assumed; 2 -> 2 assumed.
        let edges = vec![
            vec![(1, true), (2, false)],
            vec![(2, true)],
            vec![(0, true), (2, false)],
        ];
        assert_eq!(cyclic_groups(&edges), vec![vec![0, 1, 2]]);
        assert_eq!(witness(&edges, &[0, 1, 2], true), Some(vec![0, 1, 2]));
        assert_eq!(witness(&edges, &[0, 1, 2], false), Some(vec![2]));
        let acyclic = vec![vec![(1, true)], vec![]];
        assert!(cyclic_groups(&acyclic).is_empty());
    }
}
