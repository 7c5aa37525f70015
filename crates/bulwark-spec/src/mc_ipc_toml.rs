//! The TOML form of an MC-IPC system (the MC-IPC paper, sections III-VII): clusters of cores,
//! resource servers, the reservations whose tasks invoke them, the tasks that run in the
//! reservations and the phases of a case study (section VI-C), read into raw serde types and
//! then validated into an [`McIpcSystem`]. `bulwark-analysis` (`mc_ipc`) computes the bounds
//! from the clusters, servers and reservations; a simulator runs the tasks through the
//! phases. This crate depends on neither.
//!
//! ```toml
//! protocol = "mc-ipc"             # optional: budgets sized for "mc-ipc", "fifo-ipc" or "prio-ipc"
//! cycle = "100ms"                 # H, the table's length; needed once a reservation has slots
//! flood-gap = "10us"              # optional, default 10us: what a flooding task computes
//!                                 # between two invocations
//!
//! [cost]                          # optional: the machine charges only reclamation work
//!                                 # and context switches
//! clock = "1GHz"                  # optional, default 1GHz, above zero
//! context-switch = 0              # optional, default 0: cycles per switch of a core to
//!                                 # another task or server, added to its work
//! reclaim-per-unit = 13           # optional, default 0: cycles per unit of reclamation
//!                                 # work; above zero once there is a [[group]], an
//!                                 # allocate or a terminate
//!
//! [[cluster]]                     # one or more: C_k
//! name = "C1"
//! cores = 1                       # m_k, 1..=1024
//!
//! [[cluster]]
//! name = "C2"
//! cores = 2
//!
//! [[server]]                      # S_q
//! name = "key"
//! operation = "2ms"               # L_q; or { low = "1ms", high = "2ms" } for L^L_q, L^H_q
//! clusters = { low = 1, high = 2 } # optional: K^L_q, K^H_q (1..=K); a count for both levels;
//!                                  # default: every cluster, K
//!
//! [[reservation]]                 # one or more: R_j, with one task T_i
//! name = "R1"
//! cluster = "C1"                  # C(R_j), a [[cluster]] name
//! criticality = "high"            # "low" (default) or "high"
//! priority = 2                    # Y_j, 0..=255, larger is more important
//! slots = [["0ms", "50ms"]]       # table-driven: [start, end) slots, start < end <= cycle
//! execution = { low = "2ms", high = "3ms" } # e^L_i, e^H_i; or one time, like "2ms"
//! invokes = { key = 1 }           # optional: N_iq, invocations per job, by server name
//!
//! [[reservation]]
//! name = "R2"
//! cluster = "C2"
//! priority = 1                    # EDF-ordered sporadic reservations share one priority
//! budget = "20ms"                 # sporadic: budget <= period
//! period = "100ms"
//! replenishment = "cbs"           # optional: "sporadic" (default), "cbs", a constant-
//!                                 # bandwidth server, or "spr", an SPR sporadic server
//!                                 # (both low criticality only)
//! # replenishments = 8            # with "spr" only: S, its queue's capacity, 1 to 256
//! execution = "5ms"
//! invokes = { key = 2 }
//!
//! [[group]]                       # zero or more: a reclamation group
//! name = "services"
//! quota = "1ms"                   # the reclamation time it may commit, above zero
//!
//! [[task]]                        # zero or more: a task running in a reservation
//! name = "T1"
//! reservation = "R1"              # a [[reservation]] name
//! period = "100ms"                # above zero
//! offset = "0ms"                  # optional, default 0: its first release
//! script = [                      # what each job does, in order: one or more steps
//!   { compute = ["500us", "1500us"] },              # drawn in [min, max], 0 < min <= max
//!   { invoke = "key", length = ["1500us", "2ms"] }, # an operation of a [[server]]
//!   { compute = "200us" },        # one time: exactly that long
//!   "sleep",                      # the job completes; sleep until the next period
//! ]
//!
//! [[task]]
//! name = "T2"
//! reservation = "R2"
//! period = "100ms"
//! group = "services"              # optional: a [[group]] name, its reclamation group
//! script = [{ compute = "1ms" }, { invoke = "key" }, "sleep"] # length: default L^H, exact
//!
//! [[task]]
//! name = "T3"
//! reservation = "R2"
//! period = "100ms"
//! script = [
//!   { allocate = 1000, object = "mapping" }, # kernel objects, 1 or more; object optional
//!   { terminate = "T2" },         # another [[task]], whose objects are reclaimed
//!   "sleep",
//! ]
//!
//! [[phase]]                       # zero or more: the case study's phases, each run alone
//! name = "normal operation"
//!
//! [[phase]]
//! name = "T2 floods"
//! floods = ["T2"]                 # optional: tasks that invoke back to back, never sleeping
//!
//! [[phase]]
//! name = "extra tasks"
//!
//! [[phase.add]]                   # zero or more: `count` copies of a task on each cluster
//! clusters = ["C1", "C2"]         # [[cluster]] names
//! count = 4                       # 1 or more; a phase adds at most 10,000 tasks in all
//! reservation = { budget = "10ms", period = "1000ms", priority = 0 } # a new one per copy
//! task = { period = "1000ms", offset = "90ms", stagger = "20us", script = [
//!   { compute = "100us" }, "sleep",
//! ] }
//!
//! [[phase.add]]
//! clusters = ["C1"]               # exactly the existing reservation's cluster
//! count = 2
//! reservation = "R1"              # into an existing reservation
//! task = { period = "100ms", script = [{ invoke = "key", length = "1ms" }, "sleep"] }
//!
//! [[phase.add]]
//! clusters = ["C2"]
//! count = 3
//! reservation = "best-effort"     # one new best-effort reservation per cluster, shared
//! task = { period = "100ms", script = [{ compute = "1ms" }, "sleep"] }
//! ```
//!
//! A reservation is table-driven (`slots`) or sporadic (`budget` and `period`), never both.
//! The rules of section III that the file must keep:
//! - slots lie within the cycle, and a reservation's own slots are disjoint;
//! - slots of different table-driven reservations on one processor must not overlap: at no
//!   instant may more slots of a cluster's reservations be open than it has cores (with one
//!   core per cluster, as under partitioned scheduling, no two may overlap);
//! - a table-driven reservation's fixed priority is above every sporadic reservation's in its
//!   cluster.
//!
//! A cluster holds at most 4096 reservations and 4096 tasks, its own and one phase's added
//! ones together: the scheduler names each in 12 bits of an urgency.
//!
//! Section VII (Vestal's model) adds `low <= high` for every `{ low, high }` pair: `e^L_i <=
//! e^H_i`, `L^L_q <= L^H_q` and `K^L_q <= K^H_q`. A single value is both levels.
//!
//! **Tasks.** A `[[task]]` runs in a reservation; the analysis's one task per reservation is
//! the first task naming it. Its `script` is one job, step by step:
//! - `{ compute = ["min", "max"] }` computes for a time drawn uniformly in `[min, max]`, `0 <
//!   min <= max`; `{ compute = "1ms" }` for exactly that long;
//! - `{ invoke = "server", length = ["min", "max"] }` invokes a server for an operation drawn
//!   in `[min, max]`, `0 < min <= max <= L^H_q`; `length` is one time or left out (exactly
//!   `L^H_q`);
//! - `{ allocate = 1000, object = "semaphore" }` allocates that many kernel objects (1 or
//!   more) of one kind: `"semaphore"` (when left out), `"mapping"` or `"endpoint"`;
//! - `{ terminate = "T2" }` terminates another `[[task]]` (never the task itself; it may be
//!   defined later in the file), reclaiming its kernel objects;
//! - `"sleep"` completes the job; the task sleeps until its next period.
//!
//! A script has at least one step, and at least one `compute`, `invoke`, `allocate` or
//! `terminate` (a script of only sleeps would spin). A task may belong to one reclamation
//! group (`group = "name"`, a `[[group]]`).
//!
//! **Replenishment.** A sporadic reservation (here or added by a phase) is replenished by
//! section III's sporadic rule (`replenishment = "sporadic"`, the default: the budget is set
//! at a release and discarded at completion) or is a soft constant-bandwidth server
//! (`replenishment = "cbs"`, Abeni and Buttazzo: at depletion its deadline is postponed by
//! the period and its budget recharged) or an SPR sporadic server (`replenishment = "spr"`,
//! the SPR paper's section IV: each chunk of budget comes back a period after the activation
//! it was used from, through a queue of `replenishments = S` entries, 8 when left out, 1 to
//! 256). Constant-bandwidth and SPR servers are low-criticality only: Vestal's monitor of
//! section VII needs the sporadic rule's per-job budget. SPR is a fixed-priority server: a
//! cluster with one is ordered by fixed priority, whatever its reservations' priorities (a
//! cluster's sporadic reservations are otherwise ordered by EDF when they all share one
//! priority). A table-driven reservation has no `replenishment`.
//!
//! **Reclamation.** `[[group]]` tables (`name`, `quota` above zero) are reclamation groups, as
//! in a scenario. `[cost]` gives what kernel work costs: `clock` (as a scenario's),
//! `reclaim-per-unit` and `context-switch` (cycles, 0 or more); the machine charges an MC-IPC system
//! no other kernel work, so no other key is allowed. Theorem 1 takes each `L_q` as written:
//! it does not add context switches (see `bulwark analyze`). A `[[group]]`, an `allocate` or a `terminate` needs
//! `reclaim-per-unit` above zero.
//!
//! **Phases.** Each `[[phase]]` describes one run of the system, on its own: the tasks in
//! `floods` malfunction, invoking their scripts' servers back to back with `flood-gap` of
//! computation between two invocations and never sleeping (so each must invoke a server),
//! and each `[[phase.add]]` adds `count` copies of a task on each of `clusters`, copy `k`
//! (from 0) released first at `offset + k * stagger`. The copies go into a new sporadic
//! reservation each (`reservation = { budget, period, priority, criticality,
//! replenishment }`, `criticality` optional, default `"low"`, `replenishment` as for a
//! `[[reservation]]`), into one new best-effort reservation per cluster
//! (`reservation = "best-effort"`: lowest priority, no budget), or into an existing
//! reservation (`reservation = "R4"`, with `clusters` exactly that reservation's cluster).
//!
//! Names are unique among clusters, among servers, among reservations, among tasks, among
//! phases and among groups. Every error is reported, in file order, with its line, column,
//! what is wrong and what is allowed.
//!
//! `bulwark_analysis::mc_ipc::analyse` reads this model as it is: its clients are the
//! [`Reservation`]s (cluster and servers by index, the slots of a
//! [`ReservationKind::TableDriven`] reservation, none for a sporadic one). The file, the
//! analysis and the kernel share one [`Criticality`], [`PerCriticality`], [`Slot`] and
//! [`GateProtocol`] (from `bulwark_core`), so the values pass through unconverted. The sporadic
//! budgets and periods and the cycle are not inputs of the bounds: they say what the file
//! provisions, to set beside the budgets the analysis sizes. Nor are the replenishment rules,
//! tasks, phases, groups and reclamation costs: they say what a simulation of the case study
//! runs.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

pub use bulwark_core::criticality::{Criticality, PerCriticality};
pub use bulwark_core::ipc::GateProtocol;
use bulwark_core::reclaim::ObjectKind;
pub use bulwark_core::reservation::clustered::Slot;
use bulwark_core::reservation::clustered::{MAX_RESERVATIONS, MAX_THREADS};
use bulwark_core::{Duration, Priority};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::diagnostic::{names_help, Diagnostics, Source, SpecError};
/// A script step's time: drawn as a scenario's execution time is.
pub use crate::model::Execution;
use crate::model::{CostModel, GroupSpec};
use crate::raw::{RawCost, RawGroup, RawRun, RawTime};
use crate::toml_error;
use crate::validate::PRIORITY_HELP;

/// Most cores a cluster may have, as for a scenario.
pub const MAX_CORES: u64 = 1024;

/// Most tasks one phase may add, over all its `[[phase.add]]` tables (count times clusters):
/// each copy is a task and possibly a reservation on the machine, so a million of them would
/// take about a gigabyte before the phase ran; the paper's case study adds at most 80.
pub const MAX_ADDED_TASKS: u64 = 10_000;

const KIND_HELP: &str = "allowed: slots = [[\"0ms\", \"50ms\"]] for a table-driven reservation, \
                         or budget = \"20ms\" with period = \"100ms\" for a sporadic one";
const SCRIPT_HELP: &str = "allowed: one or more steps, at least one computing, invoking, \
                           allocating or terminating, like [{ compute = \"1ms\" }, { invoke = \
                           \"key\" }, \"sleep\"]";
const STEP_HELP: &str = "allowed: { compute = [\"min\", \"max\"] }, { invoke = \"key\", length = \
                         [\"min\", \"max\"] } (length optional), { allocate = 1000, object = \
                         \"semaphore\" } (object optional), { terminate = \"task\" } or \"sleep\"";
const OBJECT_HELP: &str = "allowed: { allocate = 1000, object = \"semaphore\" }, object one of \
                           semaphore, mapping, endpoint (semaphore when left out)";
const REPLENISHMENT_HELP: &str = "allowed: sporadic (the default), cbs, spr";
const RANGE_HELP: &str =
    "allowed: a time above zero like \"1ms\", or [min, max] with 0 < min <= max, \
                          like [\"500us\", \"1500us\"]";
const SLOT_HELP: &str = "allowed: [start, end] with start < end <= cycle, like [\"0ms\", \"50ms\"]";

/// A whole MC-IPC system: valid by construction (see the module documentation for the rules).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McIpcSystem {
    /// The protocol budgets are sized for, if the file names one.
    pub protocol: Option<GateProtocol>,
    /// `H`: the cycle every table-driven reservation's slots repeat in; `Some` whenever a
    /// reservation has slots.
    pub cycle: Option<Duration>,
    /// The clusters `C_1 .. C_K`, in file order; a cluster's index here is its id.
    pub clusters: Vec<Cluster>,
    /// The resource servers `S_1 .. S_nr`, in file order; a server's index here is its id.
    pub servers: Vec<Server>,
    /// The reservations, one task each, in file order.
    pub reservations: Vec<Reservation>,
    /// The tasks running in the reservations, in file order; a task's index here is its id.
    pub tasks: Vec<Task>,
    /// The case study's phases, in file order, each run on its own.
    pub phases: Vec<Phase>,
    /// What a flooding task computes between two invocations (`flood-gap`, default 10 us),
    /// above zero.
    pub flood_gap: Duration,
    /// The reclamation groups (`[[group]]`), in file order, as a scenario's are; a group's
    /// index here is its id, and its members are the tasks naming it, by index into
    /// [`McIpcSystem::tasks`].
    pub groups: Vec<GroupSpec>,
    /// What kernel work costs (`[cost]`), in the cost table every Bulwark file uses. An
    /// MC-IPC system is charged reclamation work and context switches only, so only the
    /// clock, `reclaim_per_unit` and `context_switch` can be set; every other cost is zero.
    pub cost: CostModel,
}

/// The `flood-gap` of a file that does not give one.
pub const DEFAULT_FLOOD_GAP: Duration = Duration::from_micros(10);

/// A task running in a reservation (the analysis's one task per reservation is the first
/// task naming it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Its name, unique among tasks.
    pub name: String,
    /// The reservation it runs in, an index into [`McIpcSystem::reservations`].
    pub reservation: usize,
    /// Its period, above zero: a job is released every period.
    pub period: Duration,
    /// Its first release (0 when not given).
    pub offset: Duration,
    /// What each job does, in order: one or more steps, not all of them sleeps.
    pub script: Vec<ScriptStep>,
}

/// One step of a task's job, as the file's script says it ([`McIpcSystem::scenario`] lowers
/// it to a scenario's [`Step`](crate::model::Step)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptStep {
    /// Compute for a time drawn uniformly from `[min, max]` (`0 < min <= max`), as a
    /// scenario's execution time is drawn.
    Compute(Execution),
    /// Invoke server `server` for an operation whose length is drawn from `length` (`0 < min
    /// <= max <=` that server's high operation length `L^H_q`), and wait for the reply.
    Invoke {
        /// The server, an index into [`McIpcSystem::servers`].
        server: usize,
        /// The operation's length, drawn once per invocation.
        length: Execution,
    },
    /// The job completes; the task sleeps until its next release (`"sleep"`).
    SleepUntilNextPeriod,
    /// Allocate `count` kernel objects of kind `object` (`{ allocate = 1000, object =
    /// "semaphore" }`), as in a scenario's script.
    Allocate {
        /// How many objects, 1 or more.
        count: u64,
        /// Their kind (`"semaphore"` when not given).
        object: ObjectKind,
    },
    /// Terminate another task and reclaim its kernel objects (`{ terminate = "rogue" }`).
    Terminate {
        /// The task terminated, an index into [`McIpcSystem::tasks`]; never the task whose
        /// script this is.
        task: usize,
    },
}

/// A phase of the case study (section VI-C): the system with some tasks flooding and some
/// tasks added, run on its own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Its name, unique among phases.
    pub name: String,
    /// The tasks that flood in this phase, indices into [`McIpcSystem::tasks`], in file
    /// order: each invokes its script's servers back to back, [`McIpcSystem::flood_gap`]
    /// between two invocations, never sleeping.
    pub floods: Vec<usize>,
    /// The tasks added in this phase, in file order.
    pub additions: Vec<Addition>,
}

impl Phase {
    /// Every copy the phase adds, as `(addition, cluster, copy)` (indices into
    /// [`Phase::additions`] and [`McIpcSystem::clusters`], and the copy's number on that
    /// cluster within its addition), addition by addition, then cluster by cluster: the order
    /// in which the phase's scenario lays its copies out after the file's tasks.
    pub fn copies(&self) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        (self.additions.iter().enumerate()).flat_map(|(index, addition)| {
            (addition.clusters.iter()).flat_map(move |&cluster| {
                (0..addition.count).map(move |copy| (index, cluster, copy))
            })
        })
    }
}

/// `count` copies, on each of `clusters`, of a task in a new reservation (or in an existing
/// one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addition {
    /// The clusters, indices into [`McIpcSystem::clusters`], in file order, one or more,
    /// each once.
    pub clusters: Vec<usize>,
    /// How many copies on each cluster, 1 or more.
    pub count: u32,
    /// Where the copies run.
    pub reservation: AddedReservation,
    /// The task each copy is.
    pub task: TaskTemplate,
}

/// The reservation the copies of an [`Addition`] run in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddedReservation {
    /// The tasks go into this existing reservation (index into reservations); `clusters` is
    /// then exactly its cluster.
    Existing(usize),
    /// Each copy gets its own new sporadic reservation.
    Sporadic {
        /// The new reservations' criticality (`"low"` when not given).
        criticality: Criticality,
        /// Their priority, larger is more important.
        priority: Priority,
        /// Their budget, above zero and at most `period`.
        budget: Duration,
        /// Their replenishment period, above zero.
        period: Duration,
        /// How their budgets are replenished (the sporadic rule when not given; a
        /// constant-bandwidth server only at low criticality).
        replenishment: Replenishment,
    },
    /// All copies on a cluster share one new best-effort reservation (lowest priority, no
    /// budget).
    BestEffort,
}

/// The task an [`Addition`] copies. Copy k (0-based) is released first at offset + k *
/// stagger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskTemplate {
    /// Each copy's period, above zero.
    pub period: Duration,
    /// The first copy's first release (0 when not given).
    pub offset: Duration,
    /// How much later each further copy is first released (0 when not given).
    pub stagger: Duration,
    /// What each job does, as for [`Task::script`].
    pub script: Vec<ScriptStep>,
}

/// A cluster `C_k` of identical cores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Its name, unique among clusters.
    pub name: String,
    /// `m_k`: its cores, 1..=[`MAX_CORES`].
    pub cores: u64,
}

/// A resource server `S_q`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// Its name, unique among servers.
    pub name: String,
    /// `L^L_q` and `L^H_q`: its maximum operation length at each level, above zero, `low <=
    /// high` (`operation = "2ms"` is both).
    pub operation_length: PerCriticality<Duration>,
    /// `K^L_q` and `K^H_q`: the most clusters it is invoked from at each level, each in
    /// `1..=K`, `low <= high`; `None` (the key left out) is every cluster, `K`.
    pub invoking_clusters: PerCriticality<Option<u64>>,
}

impl Cluster {
    /// A cluster of `cores` cores.
    pub fn new(name: impl Into<String>, cores: u64) -> Self {
        Cluster {
            name: name.into(),
            cores,
        }
    }
}

impl Server {
    /// A server of operation length `operation_length` at both levels, invoked from every
    /// cluster.
    pub fn new(name: impl Into<String>, operation_length: Duration) -> Self {
        Server {
            name: name.into(),
            operation_length: PerCriticality::uniform(operation_length),
            invoking_clusters: PerCriticality::uniform(None),
        }
    }

    /// The same server with operation lengths `low` (`L^L_q`) and `high` (`L^H_q`).
    pub fn with_operation_lengths(mut self, low: Duration, high: Duration) -> Self {
        self.operation_length = PerCriticality { low, high };
        self
    }

    /// The same server, invoked from at most `low` (`K^L_q`) and `high` (`K^H_q`) clusters.
    pub fn invoked_from(mut self, low: u64, high: u64) -> Self {
        self.invoking_clusters = PerCriticality {
            low: Some(low),
            high: Some(high),
        };
        self
    }
}

/// A reservation `R_j` and its one task `T_i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Its name, unique among reservations.
    pub name: String,
    /// `C(R_j)`: its cluster, an index into [`McIpcSystem::clusters`].
    pub cluster: usize,
    /// Its criticality (`"low"` when not given).
    pub criticality: Criticality,
    /// `Y_j`: its priority, larger is more important. EDF-ordered sporadic reservations share
    /// one; a table-driven reservation's is above every sporadic one's in its cluster.
    pub priority: Priority,
    /// Table-driven (slots) or sporadic (budget and period).
    pub kind: ReservationKind,
    /// `e^L_i` and `e^H_i`: its task's worst-case execution time at each level, above zero,
    /// `low <= high`.
    pub execution: PerCriticality<Duration>,
    /// `N_iq`: how often each job invokes each server, in file order, each server at most once.
    pub invocations: Vec<Invocation>,
}

impl McIpcSystem {
    /// A system of `clusters`, `servers` and `reservations` only, built in code (the analysis
    /// reads nothing else): no protocol, cycle, tasks, phases or groups, the default flood gap
    /// and free reclamation. It is not validated: the analysis reports a dangling index.
    pub fn new(
        clusters: Vec<Cluster>,
        servers: Vec<Server>,
        reservations: Vec<Reservation>,
    ) -> Self {
        McIpcSystem {
            protocol: None,
            cycle: None,
            clusters,
            servers,
            reservations,
            tasks: Vec::new(),
            phases: Vec::new(),
            flood_gap: DEFAULT_FLOOD_GAP,
            groups: Vec::new(),
            cost: CostModel::default(),
        }
    }

    /// The reclamation group each task is a member of, if any, by task index.
    pub fn groups_of_tasks(&self) -> Vec<Option<usize>> {
        let mut groups = vec![None; self.tasks.len()];
        for (index, group) in self.groups.iter().enumerate() {
            for &member in &group.members {
                if let Some(slot) = groups.get_mut(member) {
                    *slot = Some(index);
                }
            }
        }
        groups
    }

    /// The names of the budgeted reservations replenished by `rule`, in file order.
    pub fn replenished_by(&self, rule: Replenishment) -> Vec<&str> {
        self.reservations
            .iter()
            .filter(|r| match r.kind {
                ReservationKind::Sporadic { replenishment, .. } => replenishment == rule,
                ReservationKind::TableDriven { .. } => false,
            })
            .map(|r| r.name.as_str())
            .collect()
    }
}

impl Reservation {
    /// A reservation of `kind` on the cluster at index `cluster`, whose task executes for
    /// `execution` at both levels and invokes no server.
    pub fn new(
        name: impl Into<String>,
        cluster: usize,
        criticality: Criticality,
        priority: Priority,
        kind: ReservationKind,
        execution: Duration,
    ) -> Self {
        Reservation {
            name: name.into(),
            cluster,
            criticality,
            priority,
            kind,
            execution: PerCriticality::uniform(execution),
            invocations: Vec::new(),
        }
    }

    /// The same reservation with execution `low` (`e^L_i`) and `high` (`e^H_i`).
    pub fn with_executions(mut self, low: Duration, high: Duration) -> Self {
        self.execution = PerCriticality { low, high };
        self
    }

    /// The same reservation, its task invoking the server at index `server` `count` more
    /// times per job (added to the count it already has, so each server is listed once).
    pub fn invoking(mut self, server: usize, count: u64) -> Self {
        match self.invocations.iter_mut().find(|i| i.server == server) {
            Some(invocation) => invocation.count = invocation.count.saturating_add(count),
            None => self.invocations.push(Invocation { server, count }),
        }
        self
    }

    /// Its table-driven slots; none for a sporadic reservation, which may run at any time.
    pub fn slots(&self) -> &[Slot] {
        match &self.kind {
            ReservationKind::TableDriven { slots } => slots,
            ReservationKind::Sporadic { .. } => &[],
        }
    }
}

impl ReservationKind {
    /// A time partition open in `slots`.
    pub fn table_driven(slots: &[Slot]) -> Self {
        ReservationKind::TableDriven {
            slots: slots.to_vec(),
        }
    }

    /// A sporadic reservation of `budget` per `period`, replenished by the sporadic rule.
    pub fn sporadic(budget: Duration, period: Duration) -> Self {
        ReservationKind::Sporadic {
            budget,
            period,
            replenishment: Replenishment::Sporadic,
        }
    }
}

/// How a reservation is replenished (section III).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReservationKind {
    /// A time partition: open in each of its slots in every cycle `H`.
    TableDriven {
        /// One or more disjoint slots within `[0, H)`, in file order.
        slots: Vec<Slot>,
    },
    /// A sporadic reservation: `budget` per `period`.
    Sporadic {
        /// Its budget, above zero and at most `period`.
        budget: Duration,
        /// Its replenishment period, above zero.
        period: Duration,
        /// How its budget is replenished (the sporadic rule when not given; a
        /// constant-bandwidth server only at low criticality).
        replenishment: Replenishment,
    },
}

/// How a budgeted reservation is replenished (`replenishment = "sporadic" | "cbs"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Replenishment {
    /// Section III's sporadic rule (the default): budget set at a release, discarded at
    /// completion.
    #[default]
    Sporadic,
    /// A soft constant-bandwidth server (Abeni and Buttazzo): deadline postponed by the
    /// period and budget recharged at depletion.
    ConstantBandwidth,
    /// An SPR sporadic server (SPR paper, section IV) with a queue of `replenishments`
    /// entries (`S`).
    Spr {
        /// `S`, 1 to [`MAX_SPR_REPLENISHMENTS`].
        replenishments: u16,
    },
}

/// An SPR server's queue capacity when the file gives none (the SPR paper's default `S`).
pub const DEFAULT_SPR_REPLENISHMENTS: u16 = 8;
/// The largest queue an SPR server may ask for.
pub const MAX_SPR_REPLENISHMENTS: u16 = 256;

impl Replenishment {
    /// The values a file may use.
    pub const NAMES: [&'static str; 3] = ["sporadic", "cbs", "spr"];

    /// The rule a value names (an SPR server with the default queue).
    pub fn from_name(name: &str) -> Option<Replenishment> {
        match name {
            "sporadic" => Some(Replenishment::Sporadic),
            "cbs" => Some(Replenishment::ConstantBandwidth),
            "spr" => Some(Replenishment::Spr {
                replenishments: DEFAULT_SPR_REPLENISHMENTS,
            }),
            _ => None,
        }
    }

    /// The value a file writes.
    pub fn name(self) -> &'static str {
        match self {
            Replenishment::Sporadic => "sporadic",
            Replenishment::ConstantBandwidth => "cbs",
            Replenishment::Spr { .. } => "spr",
        }
    }
}

/// `N_iq`: a reservation's task invokes a server at most `count` times per job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Invocation {
    /// The server, an index into [`McIpcSystem::servers`].
    pub server: usize,
    /// The most invocations per job.
    pub count: u64,
}

/// Reads an MC-IPC system from TOML `text`, naming it `file` in diagnostics.
///
/// ```
/// let text = r#"
/// cycle = "100ms"
///
/// [[cluster]]
/// name = "C1"
/// cores = 1
///
/// [[server]]
/// name = "key"
/// operation = "2ms"
///
/// [[reservation]]
/// name = "R1"
/// cluster = "C1"
/// priority = 1
/// slots = [["0ms", "50ms"]]
/// execution = "2ms"
/// invokes = { key = 1 }
/// "#;
/// let system = bulwark_spec::parse_mc_ipc(text, "one.toml").unwrap();
/// assert_eq!(system.reservations[0].invocations[0].count, 1);
///
/// let wrong = text.replace("\"50ms\"", "\"150ms\"");
/// let errors = bulwark_spec::parse_mc_ipc(&wrong, "one.toml").unwrap_err();
/// assert_eq!(
///     errors.errors()[0].to_string(),
///     "one.toml:16:10: slot [0ns, 150ms) ends after the cycle 100ms"
/// );
/// ```
pub fn parse_mc_ipc(text: &str, file: &str) -> Result<McIpcSystem, Diagnostics> {
    let located = Source::new(file, text);
    let raw: RawSystem = toml::from_str(text)
        .map_err(|e| Diagnostics::new(file, vec![toml_error::located(&located, &e)]))?;
    let mut checker = Checker {
        source: &located,
        errors: Vec::new(),
        first_reclaim_step: None,
    };
    let system = checker.system(&raw);
    located
        .finish(system, checker.errors)
        .map_err(|errors| Diagnostics::new(file, errors))
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "an MC-IPC system: [[cluster]], [[server]], [[reservation]], [[task]], \
                 [[phase]] and [[group]] tables"
)]
struct RawSystem {
    protocol: Option<Spanned<String>>,
    cycle: Option<Spanned<RawTime>>,
    #[serde(default)]
    cluster: Vec<Spanned<RawCluster>>,
    #[serde(default)]
    server: Vec<Spanned<RawServer>>,
    #[serde(default)]
    reservation: Vec<Spanned<RawReservation>>,
    flood_gap: Option<Spanned<RawTime>>,
    #[serde(default)]
    task: Vec<Spanned<RawTask>>,
    #[serde(default)]
    phase: Vec<Spanned<RawPhase>>,
    #[serde(default)]
    group: Vec<Spanned<RawGroup>>,
    cost: Option<Spanned<RawCost>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[task]] table, like { name = \"T1\", reservation = \"R1\", period = \"100ms\", \
                 script = [{ compute = \"1ms\" }, \"sleep\"] }"
)]
struct RawTask {
    name: Spanned<String>,
    reservation: Spanned<String>,
    period: Spanned<RawTime>,
    offset: Option<Spanned<RawTime>>,
    script: Spanned<RawScript>,
    group: Option<Spanned<String>>,
}

/// `script = [{ compute = "1ms" }, { invoke = "key" }, "sleep"]`.
type RawScript = Vec<Spanned<RawStep>>;

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[phase]] table, like { name = \"normal operation\" }"
)]
struct RawPhase {
    name: Spanned<String>,
    floods: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    add: Vec<Spanned<RawAddition>>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[phase.add]] table, with clusters, count, reservation and task"
)]
struct RawAddition {
    clusters: Spanned<Vec<Spanned<String>>>,
    count: Spanned<i64>,
    reservation: Spanned<RawAddedReservation>,
    task: Spanned<RawTemplate>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a task, like { period = \"100ms\", script = [{ compute = \"1ms\" }, \"sleep\"] }"
)]
struct RawTemplate {
    period: Spanned<RawTime>,
    offset: Option<Spanned<RawTime>>,
    stagger: Option<Spanned<RawTime>>,
    script: Spanned<RawScript>,
}

/// `reservation = "R4"`, `"best-effort"` or `{ budget, period, priority, criticality,
/// replenishment }`.
#[derive(Debug)]
enum RawAddedReservation {
    /// `"best-effort"` or an existing reservation's name.
    Name(String),
    /// A new sporadic reservation per copy.
    New(RawNewReservation),
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a new sporadic reservation, like { budget = \"100ms\", period = \"3000ms\", \
                 priority = 0 }"
)]
struct RawNewReservation {
    criticality: Option<Spanned<String>>,
    priority: Spanned<i64>,
    budget: Spanned<RawTime>,
    period: Spanned<RawTime>,
    replenishment: Option<Spanned<String>>,
    replenishments: Option<Spanned<i64>>,
}

const ADDED_RESERVATION_EXPECTED: &str = "a reservation name, \"best-effort\", or a new sporadic \
                                          reservation, like { budget = \"100ms\", period = \
                                          \"3000ms\", priority = 0 }";

struct AddedReservationVisitor;

impl<'de> Visitor<'de> for AddedReservationVisitor {
    type Value = RawAddedReservation;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(ADDED_RESERVATION_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawAddedReservation, E> {
        Ok(RawAddedReservation::Name(v.to_owned()))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawAddedReservation, A::Error> {
        RawNewReservation::deserialize(de::value::MapAccessDeserializer::new(map))
            .map(RawAddedReservation::New)
    }
}

impl<'de> Deserialize<'de> for RawAddedReservation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AddedReservationVisitor)
    }
}

/// One script step as written: a word, or a table whose keys are all kept (unknown ones
/// too) so that validation can say what is wrong with each.
#[derive(Debug)]
enum RawStep {
    /// `"sleep"`, or a word that is not a step.
    Word(String),
    /// `{ compute = ... }`, `{ invoke = "key", length = ... }`, `{ allocate = ... }` or `{
    /// terminate = ... }`, as written (boxed: a table is much larger than a word).
    Table(Box<RawStepTable>),
}

#[derive(Debug, Default)]
struct RawStepTable {
    compute: Option<Spanned<RawRun>>,
    invoke: Option<Spanned<String>>,
    length: Option<Spanned<RawRun>>,
    allocate: Option<Spanned<i64>>,
    object: Option<Spanned<String>>,
    terminate: Option<Spanned<String>>,
    /// Keys that no step has.
    unknown: Vec<Spanned<String>>,
}

const STEP_EXPECTED: &str = "a script step: { compute = \"1ms\" }, { invoke = \"key\" }, { \
                             allocate = 1000 }, { terminate = \"task\" } or \"sleep\"";

struct StepVisitor;

impl<'de> Visitor<'de> for StepVisitor {
    type Value = RawStep;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(STEP_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawStep, E> {
        Ok(RawStep::Word(v.to_owned()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawStep, A::Error> {
        let mut table = RawStepTable::default();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            match key.get_ref().as_str() {
                "compute" => table.compute = Some(map.next_value()?),
                "invoke" => table.invoke = Some(map.next_value()?),
                "length" => table.length = Some(map.next_value()?),
                "allocate" => table.allocate = Some(map.next_value()?),
                "object" => table.object = Some(map.next_value()?),
                "terminate" => table.terminate = Some(map.next_value()?),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                    table.unknown.push(key);
                }
            }
        }
        Ok(RawStep::Table(Box::new(table)))
    }
}

impl<'de> Deserialize<'de> for RawStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StepVisitor)
    }
}

/// The key that says what a script step table does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepAction {
    Compute,
    Invoke,
    Allocate,
    Terminate,
}

impl StepAction {
    /// What a step with this key does, in messages.
    fn verb(self) -> &'static str {
        match self {
            StepAction::Compute => "computes",
            StepAction::Invoke => "invokes",
            StepAction::Allocate => "allocates",
            StepAction::Terminate => "terminates",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[cluster]] table, like { name = \"C1\", cores = 1 }"
)]
struct RawCluster {
    name: Spanned<String>,
    cores: Spanned<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[server]] table, like { name = \"key\", operation = \"2ms\" }"
)]
struct RawServer {
    name: Spanned<String>,
    operation: Spanned<RawLevels<RawTime>>,
    clusters: Option<Spanned<RawLevels<i64>>>,
}

/// One `[[reservation]]` table. `slots`, `budget` and `period` are all optional here so that
/// validation can say which kind is meant and what is missing or extra.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[reservation]] table"
)]
struct RawReservation {
    name: Spanned<String>,
    cluster: Spanned<String>,
    criticality: Option<Spanned<String>>,
    priority: Spanned<i64>,
    slots: Option<Spanned<RawSlots>>,
    budget: Option<Spanned<RawTime>>,
    period: Option<Spanned<RawTime>>,
    replenishment: Option<Spanned<String>>,
    replenishments: Option<Spanned<i64>>,
    execution: Spanned<RawLevels<RawTime>>,
    invokes: Option<Spanned<RawInvokes>>,
}

/// `slots = [["0ms", "50ms"], ...]`: each slot as written, its length judged later.
type RawSlots = Vec<Spanned<Vec<Spanned<RawTime>>>>;

/// `"2ms"` or `{ low = "1ms", high = "2ms" }`; `4` or `{ low = 2, high = 4 }`.
#[derive(Debug)]
enum RawLevels<T> {
    /// One value for both levels; its span is the whole value's.
    Same(T),
    /// A value per level.
    Split { low: Spanned<T>, high: Spanned<T> },
}

/// A value that may be given per criticality level.
trait LevelValue: for<'de> Deserialize<'de> {
    /// What a value or a `{ low, high }` table of them looks like.
    const EXPECTING: &'static str;
}

impl LevelValue for RawTime {
    const EXPECTING: &'static str = "a time like \"2ms\", or { low = \"1ms\", high = \"2ms\" }";
}

impl LevelValue for i64 {
    const EXPECTING: &'static str = "a count like 4, or { low = 2, high = 4 }";
}

struct LevelsVisitor<T>(PhantomData<T>);

impl<'de, T: LevelValue> Visitor<'de> for LevelsVisitor<T> {
    type Value = RawLevels<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawLevels<T>, E> {
        T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(RawLevels::Same)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawLevels<T>, E> {
        T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(RawLevels::Same)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawLevels<T>, E> {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(RawLevels::Same)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawLevels<T>, E> {
        T::deserialize(de::value::F64Deserializer::<E>::new(v)).map(RawLevels::Same)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawLevels<T>, A::Error> {
        const FIELDS: &[&str] = &["low", "high"];
        let (mut low, mut high) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            let slot = match key.as_str() {
                "low" => &mut low,
                "high" => &mut high,
                _ => return Err(de::Error::unknown_field(&key, FIELDS)),
            };
            if slot.is_some() {
                return Err(de::Error::custom("duplicate key"));
            }
            *slot = Some(map.next_value::<Spanned<T>>()?);
        }
        let low = low.ok_or_else(|| de::Error::missing_field("low"))?;
        let high = high.ok_or_else(|| de::Error::missing_field("high"))?;
        Ok(RawLevels::Split { low, high })
    }
}

impl<'de, T: LevelValue> Deserialize<'de> for RawLevels<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LevelsVisitor(PhantomData))
    }
}

/// `invokes = { key = 1, log = 2 }`: server names and counts, as written.
#[derive(Debug)]
struct RawInvokes(Vec<(Spanned<String>, Spanned<i64>)>);

struct InvokesVisitor;

impl<'de> Visitor<'de> for InvokesVisitor {
    type Value = RawInvokes;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invocations per job by server name, like { key = 1 }")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawInvokes, A::Error> {
        let mut pairs = Vec::new();
        while let Some(server) = map.next_key::<Spanned<String>>()? {
            pairs.push((server, map.next_value::<Spanned<i64>>()?));
        }
        // Tables may come in any order; report and keep them in file order.
        pairs.sort_by_key(|(server, _)| server.span().start);
        Ok(RawInvokes(pairs))
    }
}

impl<'de> Deserialize<'de> for RawInvokes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(InvokesVisitor)
    }
}

/// The names of the tables, in file order, for references by name.
struct Names<'r> {
    clusters: Vec<&'r str>,
    servers: Vec<&'r str>,
    reservations: Vec<&'r str>,
    tasks: Vec<&'r str>,
    groups: Vec<&'r str>,
}

struct Checker<'a> {
    source: &'a Source,
    errors: Vec<SpecError>,
    /// Where the first `allocate` or `terminate` step in the file is, for the check that
    /// reclamation work has a cost.
    first_reclaim_step: Option<Range<usize>>,
}

/// What the reservation checks learnt, for the checks across a cluster.
struct Seen<'r> {
    name: &'r str,
    cluster: Option<usize>,
    priority: Option<(Priority, Range<usize>)>,
    /// `Some(true)` table-driven, `Some(false)` sporadic, `None` unclear (reported).
    table_driven: Option<bool>,
    /// The valid, mutually disjoint slots, with their spans.
    slots: Vec<(Slot, Range<usize>)>,
}

impl Checker<'_> {
    fn report(&mut self, span: Range<usize>, message: impl Into<String>, help: impl Into<String>) {
        let error = self.source.error(span, message, help);
        self.errors.push(error);
    }

    fn system(&mut self, raw: &RawSystem) -> Option<McIpcSystem> {
        let protocol = match &raw.protocol {
            None => Some(None),
            Some(p) => self.protocol(p).map(Some),
        };
        let cycle = match &raw.cycle {
            None => Some(None),
            Some(c) => self.positive_time(c, "cycle").map(Some),
        };
        if raw.cluster.is_empty() {
            self.report(
                0..0,
                "this system has no clusters",
                "allowed: one or more [[cluster]] tables, like { name = \"C1\", cores = 1 }",
            );
        }
        if raw.reservation.is_empty() {
            self.report(
                0..0,
                "this system has no reservations",
                "allowed: one or more [[reservation]] tables",
            );
        }
        let cluster_names: Vec<&str> = raw
            .cluster
            .iter()
            .map(|c| name_of(&c.get_ref().name))
            .collect();
        let server_names: Vec<&str> = raw
            .server
            .iter()
            .map(|s| name_of(&s.get_ref().name))
            .collect();
        self.unique_names(raw.cluster.iter().map(|c| &c.get_ref().name), "cluster");
        self.unique_names(raw.server.iter().map(|s| &s.get_ref().name), "server");
        self.unique_names(
            raw.reservation.iter().map(|r| &r.get_ref().name),
            "reservation",
        );

        let clusters: Vec<Option<Cluster>> = raw
            .cluster
            .iter()
            .map(|c| self.cluster(c.get_ref()))
            .collect();
        let k = raw.cluster.len() as u64;
        let servers: Vec<Option<Server>> = raw
            .server
            .iter()
            .map(|s| self.server(s.get_ref(), k))
            .collect();

        // Slots need the cycle: said once, at the first reservation that has them.
        if raw.cycle.is_none() {
            if let Some(slots) = raw
                .reservation
                .iter()
                .find_map(|r| r.get_ref().slots.as_ref())
            {
                self.report(
                    slots.span(),
                    "slots repeat every cycle, but this file gives no cycle",
                    "add cycle = \"100ms\" (H, the length of the table) at the top of the file",
                );
            }
        }
        let cycle_for_slots = cycle.flatten();

        let mut reservations = Vec::with_capacity(raw.reservation.len());
        let mut seen = Vec::with_capacity(raw.reservation.len());
        for reservation in &raw.reservation {
            let (built, facts) =
                self.reservation(reservation, &cluster_names, &server_names, cycle_for_slots);
            reservations.push(built);
            seen.push(facts);
        }
        self.overlapping_slots(&seen, &clusters);
        self.table_priorities(&seen, &cluster_names);

        let flood_gap = match &raw.flood_gap {
            None => Some(DEFAULT_FLOOD_GAP),
            Some(gap) => self.non_zero(
                gap.get_ref(),
                gap.span(),
                "flood gap",
                "allowed: a time longer than zero, like \"10us\" (what a flooding task computes \
                 between two invocations)",
            ),
        };
        self.unique_names(raw.task.iter().map(|t| &t.get_ref().name), "task");
        self.unique_names(raw.phase.iter().map(|p| &p.get_ref().name), "phase");
        self.unique_names(raw.group.iter().map(|g| &g.get_ref().name), "group");
        let cost = match &raw.cost {
            None => Some(CostModel::default()),
            Some(cost) => self.reclaim_cost(cost.get_ref()),
        };
        let mut groups: Vec<Option<GroupSpec>> = raw
            .group
            .iter()
            .map(|g| {
                let g = g.get_ref();
                let quota = self.positive_time(&g.quota, "quota")?;
                Some(GroupSpec {
                    name: g.name.get_ref().clone(),
                    quota,
                    members: Vec::new(),
                })
            })
            .collect();
        let names = Names {
            clusters: cluster_names,
            servers: server_names,
            reservations: raw
                .reservation
                .iter()
                .map(|r| name_of(&r.get_ref().name))
                .collect(),
            tasks: raw
                .task
                .iter()
                .map(|t| name_of(&t.get_ref().name))
                .collect(),
            groups: raw
                .group
                .iter()
                .map(|g| name_of(&g.get_ref().name))
                .collect(),
        };
        let tasks_in_groups: Vec<Option<(Task, Option<usize>)>> = raw
            .task
            .iter()
            .enumerate()
            .map(|(index, t)| self.task(t.get_ref(), index, &names, &servers))
            .collect();
        // A group's members are the tasks naming it, in file order.
        for (index, entry) in tasks_in_groups.iter().enumerate() {
            if let Some((_, Some(group))) = entry {
                if let Some(Some(group)) = groups.get_mut(*group) {
                    group.members.push(index);
                }
            }
        }
        let tasks: Vec<Option<Task>> = tasks_in_groups
            .into_iter()
            .map(|entry| entry.map(|(task, _)| task))
            .collect();
        let phases: Vec<Option<Phase>> = raw
            .phase
            .iter()
            .map(|p| self.phase(p.get_ref(), &names, &servers, &reservations, &tasks))
            .collect();

        self.cluster_sizes(raw, &reservations, &tasks, &phases);

        let clusters: Option<Vec<Cluster>> = clusters.into_iter().collect();
        let servers: Option<Vec<Server>> = servers.into_iter().collect();
        let reservations: Option<Vec<Reservation>> = reservations.into_iter().collect();
        let tasks: Option<Vec<Task>> = tasks.into_iter().collect();
        let phases: Option<Vec<Phase>> = phases.into_iter().collect();
        let groups: Option<Vec<GroupSpec>> = groups.into_iter().collect();
        if let Some(cost) = cost {
            self.reclaim_has_a_cost(raw, cost);
        }
        if !self.errors.is_empty() {
            return None;
        }
        Some(McIpcSystem {
            protocol: protocol?,
            cycle: cycle?,
            clusters: clusters?,
            servers: servers?,
            reservations: reservations?,
            tasks: tasks?,
            phases: phases?,
            flood_gap: flood_gap?,
            groups: groups?,
            cost: cost?,
        })
    }

    /// `[cost]`: the cost table of every file kind, of which this machine charges only the
    /// clock and `reclaim-per-unit`; any other cost is refused.
    fn reclaim_cost(&mut self, raw: &RawCost) -> Option<CostModel> {
        let charged = &crate::validate::cost::MC_IPC;
        let text = self.source.text();
        crate::validate::cost::cost_model(raw, charged, text, &mut |span, message, help| {
            self.report(span, message, help)
        })
    }

    /// Reclamation needs its cost: a `[[group]]` (said at the first group's quota, as for a
    /// scenario) and an `allocate` or `terminate` step (said at the first one) need
    /// `reclaim-per-unit` above zero.
    fn reclaim_has_a_cost(&mut self, raw: &RawSystem, cost: CostModel) {
        if cost.reclaim_per_unit > 0 {
            return;
        }
        if let Some(first) = raw.group.first() {
            self.report(
                first.get_ref().quota.span(),
                "a quota of reclamation time needs the cost of a unit of reclamation work",
                "add reclaim-per-unit = ... (cycles, above zero) to [cost]",
            );
        }
        if let Some(step) = self.first_reclaim_step.clone() {
            self.report(
                step,
                "allocating and terminating are reclamation work, which needs the cost of a \
                 unit of it",
                "add reclaim-per-unit = ... (cycles, above zero) to [cost]",
            );
        }
    }

    /// A `[[task]]`: its reservation, a period above zero, an offset and a script; and the
    /// index of the group it names, if any.
    fn task(
        &mut self,
        raw: &RawTask,
        index: usize,
        names: &Names<'_>,
        servers: &[Option<Server>],
    ) -> Option<(Task, Option<usize>)> {
        let reservation = self.named(&raw.reservation, &names.reservations, "reservation");
        let period = self.positive_time(&raw.period, "period");
        let offset = self.optional_time(&raw.offset);
        let script = self.script(&raw.script, Some(index), names, servers);
        let group = match &raw.group {
            None => Some(None),
            Some(group) => self.named(group, &names.groups, "group").map(Some),
        };
        let task = Task {
            name: raw.name.get_ref().clone(),
            reservation: reservation?,
            period: period?,
            offset: offset?,
            script: script?,
        };
        Some((task, group?))
    }

    /// A time that is zero when not given.
    fn optional_time(&mut self, raw: &Option<Spanned<RawTime>>) -> Option<Duration> {
        match raw {
            None => Some(Duration::ZERO),
            Some(time) => self.time(time),
        }
    }

    /// A script: one or more valid steps, not all of them sleeps. `caller` is the `[[task]]`
    /// whose script it is (`None` for a phase's task template), which it may not terminate.
    fn script(
        &mut self,
        raw: &Spanned<RawScript>,
        caller: Option<usize>,
        names: &Names<'_>,
        servers: &[Option<Server>],
    ) -> Option<Vec<ScriptStep>> {
        if raw.get_ref().is_empty() {
            self.report(raw.span(), "a script needs at least one step", SCRIPT_HELP);
            return None;
        }
        let only_sleeps = raw
            .get_ref()
            .iter()
            .all(|step| matches!(step.get_ref(), RawStep::Word(word) if word == "sleep"));
        if only_sleeps {
            self.report(
                raw.span(),
                "this script only sleeps: with nothing to compute, invoke, allocate or \
                 terminate, its task would spin",
                SCRIPT_HELP,
            );
            return None;
        }
        let steps: Vec<Option<ScriptStep>> = raw
            .get_ref()
            .iter()
            .map(|step| self.step(step, caller, names, servers))
            .collect();
        steps.into_iter().collect()
    }

    /// `"sleep"`, or a table with one action: `{ compute = ... }`, `{ invoke = "key", length =
    /// ... }`, `{ allocate = 1000, object = "semaphore" }` or `{ terminate = "T" }`.
    fn step(
        &mut self,
        raw: &Spanned<RawStep>,
        caller: Option<usize>,
        names: &Names<'_>,
        servers: &[Option<Server>],
    ) -> Option<ScriptStep> {
        let table = match raw.get_ref() {
            RawStep::Word(word) if word == "sleep" => {
                return Some(ScriptStep::SleepUntilNextPeriod)
            }
            RawStep::Word(word) => {
                self.report(
                    raw.span(),
                    format!("unknown script step `{word}`"),
                    STEP_HELP,
                );
                return None;
            }
            RawStep::Table(table) => table,
        };
        for key in &table.unknown {
            self.report(
                key.span(),
                format!("unknown script step key `{}`", key.get_ref()),
                "allowed: `compute`; `invoke` with an optional `length`; `allocate` with an \
                 optional `object`; `terminate`",
            );
        }
        // The keys that say what a step does, in file order, each with what the step then
        // does.
        let mut actions: Vec<(Range<usize>, StepAction)> = [
            table
                .compute
                .as_ref()
                .map(|v| (v.span(), StepAction::Compute)),
            table
                .invoke
                .as_ref()
                .map(|v| (v.span(), StepAction::Invoke)),
            table
                .allocate
                .as_ref()
                .map(|v| (v.span(), StepAction::Allocate)),
            table
                .terminate
                .as_ref()
                .map(|v| (v.span(), StepAction::Terminate)),
        ]
        .into_iter()
        .flatten()
        .collect();
        actions.sort_by_key(|(span, _)| span.start);
        if let [(_, first), rest @ ..] = actions.as_slice() {
            for (span, other) in rest {
                self.report(
                    span.clone(),
                    format!(
                        "a script step either {} or {}, not both",
                        first.verb(),
                        other.verb()
                    ),
                    STEP_HELP,
                );
            }
        }
        let action = match actions.as_slice() {
            [(_, only)] => Some(*only),
            _ => None,
        };
        let mut companions_fit = true;
        if let (Some(length), None) = (&table.length, &table.invoke) {
            match action {
                Some(StepAction::Compute) => self.report(
                    length.span(),
                    "`length` is an invocation's, but this step computes",
                    "allowed: { compute = [\"min\", \"max\"] } alone; { invoke = \"key\", \
                     length = [\"min\", \"max\"] } for an operation's length",
                ),
                Some(other) => self.report(
                    length.span(),
                    format!(
                        "`length` is an invocation's, but this step {}",
                        other.verb()
                    ),
                    STEP_HELP,
                ),
                None => self.report(
                    length.span(),
                    "`length` is an invocation's, but this step has no `invoke`",
                    STEP_HELP,
                ),
            }
            companions_fit = false;
        }
        if let (Some(object), None) = (&table.object, &table.allocate) {
            let message = match action {
                Some(other) => format!(
                    "`object` is an allocation's, but this step {}",
                    other.verb()
                ),
                None => "`object` is an allocation's, but this step has no `allocate`".to_owned(),
            };
            self.report(object.span(), message, OBJECT_HELP);
            companions_fit = false;
        }
        if actions.is_empty() && companions_fit && table.unknown.is_empty() {
            self.report(raw.span(), "this script step is empty", STEP_HELP);
        }
        let step = match action? {
            StepAction::Compute => table
                .compute
                .as_ref()
                .and_then(|compute| self.range(compute, "compute time"))
                .map(|(min, max)| ScriptStep::Compute(Execution::between(min, max))),
            StepAction::Invoke => table
                .invoke
                .as_ref()
                .and_then(|invoke| self.invoke(invoke, &table.length, names, servers)),
            StepAction::Allocate => table
                .allocate
                .as_ref()
                .and_then(|count| self.allocate(count, &table.object)),
            StepAction::Terminate => table
                .terminate
                .as_ref()
                .and_then(|target| self.terminate(target, caller, names)),
        }?;
        (companions_fit && table.unknown.is_empty()).then_some(step)
    }

    /// `{ allocate = 1000, object = "semaphore" }`: a count of 1 or more, and the object's
    /// kind, a semaphore when not given (as in a scenario's script).
    fn allocate(
        &mut self,
        raw_count: &Spanned<i64>,
        raw_object: &Option<Spanned<String>>,
    ) -> Option<ScriptStep> {
        self.note_reclaim_step(raw_count.span());
        let n = *raw_count.get_ref();
        let count = u64::try_from(n).ok().filter(|&count| count > 0);
        if count.is_none() {
            self.report(
                raw_count.span(),
                format!("allocate count {n} is less than 1"),
                "allowed: how many kernel objects to allocate, 1 or more",
            );
        }
        let object = match raw_object {
            None => Some(ObjectKind::Semaphore),
            Some(raw) => {
                let kind = crate::validate::script::object_kind(raw.get_ref());
                if kind.is_none() {
                    self.report(
                        raw.span(),
                        format!("unknown kernel object `{}`", raw.get_ref()),
                        crate::validate::script::OBJECT_NAMES_HELP,
                    );
                }
                kind
            }
        };
        Some(ScriptStep::Allocate {
            count: count?,
            object: object?,
        })
    }

    /// `{ terminate = "T" }`: another `[[task]]`, named anywhere in the file.
    fn terminate(
        &mut self,
        raw: &Spanned<String>,
        caller: Option<usize>,
        names: &Names<'_>,
    ) -> Option<ScriptStep> {
        self.note_reclaim_step(raw.span());
        let task = self.named(raw, &names.tasks, "task")?;
        if Some(task) == caller {
            let others: Vec<&str> = names
                .tasks
                .iter()
                .enumerate()
                .filter(|&(index, _)| index != task)
                .map(|(_, name)| *name)
                .collect();
            self.report(
                raw.span(),
                format!("task `{}` terminates itself", raw.get_ref()),
                if others.is_empty() {
                    "allowed: another [[task]]; this system has no other".to_owned()
                } else {
                    format!("allowed: another task: {}", others.join(", "))
                },
            );
            return None;
        }
        Some(ScriptStep::Terminate { task })
    }

    /// Keeps the earliest `allocate` or `terminate` step in the file.
    fn note_reclaim_step(&mut self, span: Range<usize>) {
        if self
            .first_reclaim_step
            .as_ref()
            .is_none_or(|first| span.start < first.start)
        {
            self.first_reclaim_step = Some(span);
        }
    }

    /// `{ invoke = "key", length = ... }`: the length within `(0, L^H_q]`, `L^H_q` exactly
    /// when not given.
    fn invoke(
        &mut self,
        raw_server: &Spanned<String>,
        raw_length: &Option<Spanned<RawRun>>,
        names: &Names<'_>,
        servers: &[Option<Server>],
    ) -> Option<ScriptStep> {
        let server = self.named(raw_server, &names.servers, "server");
        let longest = server
            .and_then(|index| servers[index].as_ref())
            .map(|s| (s.name.clone(), s.operation_length.high));
        let length = match raw_length {
            None => longest.as_ref().map(|(_, high)| (*high, *high)),
            Some(raw) => self.range(raw, "operation length"),
        };
        let (min, max) = length?;
        let (name, high) = longest?;
        if max > high {
            let span = raw_length.as_ref().map_or(raw_server.span(), |l| l.span());
            self.report(
                span,
                format!("operation length {max} is above server `{name}`'s longest, {high}"),
                format!("allowed: lengths up to the server's high operation length L^H = {high}"),
            );
            return None;
        }
        Some(ScriptStep::Invoke {
            server: server?,
            length: Execution::between(min, max),
        })
    }

    /// `"1ms"` (both ends) or `["min", "max"]`, `0 < min <= max`.
    fn range(&mut self, raw: &Spanned<RawRun>, what: &str) -> Option<(Duration, Duration)> {
        match raw.get_ref() {
            RawRun::Fixed(time) => {
                let time = self.non_zero(time, raw.span(), what, RANGE_HELP)?;
                Some((time, time))
            }
            RawRun::Range(times) => {
                let [min, max] = times.as_slice() else {
                    self.report(
                        raw.span(),
                        format!(
                            "a range needs two times, [min, max], but has {}",
                            times.len()
                        ),
                        RANGE_HELP,
                    );
                    return None;
                };
                let shortest = format!("shortest {what}");
                let min_time = self.non_zero(min.get_ref(), min.span(), &shortest, RANGE_HELP);
                let max_time = self.time(max);
                let (min_time, max_time) = (min_time?, max_time?);
                if min_time > max_time {
                    self.report(
                        raw.span(),
                        format!(
                            "{what} range [{min_time}, {max_time}] has its minimum above its \
                             maximum"
                        ),
                        RANGE_HELP,
                    );
                    return None;
                }
                Some((min_time, max_time))
            }
        }
    }

    /// A `[[phase]]`: its flooding tasks, each invoking a server, and its additions.
    fn phase(
        &mut self,
        raw: &RawPhase,
        names: &Names<'_>,
        servers: &[Option<Server>],
        reservations: &[Option<Reservation>],
        tasks: &[Option<Task>],
    ) -> Option<Phase> {
        let mut floods = Some(Vec::new());
        for flood in raw.floods.iter().flatten() {
            let task = self.named(flood, &names.tasks, "task");
            let invokes = task.and_then(|index| tasks[index].as_ref()).map(|t| {
                t.script
                    .iter()
                    .any(|step| matches!(step, ScriptStep::Invoke { .. }))
            });
            if invokes == Some(false) {
                self.report(
                    flood.span(),
                    format!(
                        "task `{}` cannot flood: its script invokes no server",
                        flood.get_ref()
                    ),
                    "allowed: tasks whose script has an { invoke = ... } step, which a flooding \
                     task repeats back to back",
                );
            }
            match (task, invokes, floods.as_mut()) {
                (Some(task), Some(true), Some(floods)) => floods.push(task),
                _ => floods = None,
            }
        }
        let additions: Vec<Option<Addition>> = raw
            .add
            .iter()
            .map(|a| self.addition(a.get_ref(), names, servers, reservations))
            .collect();
        let additions: Option<Vec<Addition>> = additions.into_iter().collect();
        // The phase's total, reported at the addition that first takes it over the limit.
        let mut added: u64 = 0;
        for raw_addition in &raw.add {
            let a = raw_addition.get_ref();
            let copies = u64::try_from(*a.count.get_ref()).unwrap_or(0);
            let clusters = a.clusters.get_ref().len() as u64;
            let before = added;
            added = added.saturating_add(copies.saturating_mul(clusters));
            if before <= MAX_ADDED_TASKS && added > MAX_ADDED_TASKS {
                self.report(
                    a.count.span(),
                    format!(
                        "this phase adds {added} tasks, counting {copies} on each of \
                         {clusters} clusters here"
                    ),
                    format!("allowed: at most {MAX_ADDED_TASKS} added tasks per phase"),
                );
            }
        }
        if added > MAX_ADDED_TASKS {
            return None;
        }
        Some(Phase {
            name: raw.name.get_ref().clone(),
            floods: floods?,
            additions: additions?,
        })
    }

    /// Each cluster's reservations and threads (one a task) within the scheduler's limits
    /// ([`MAX_RESERVATIONS`], [`MAX_THREADS`]), the file's own and each phase's with its
    /// copies: past them the cluster could not be set up when the phase ran. Said at the
    /// reservation, task or addition that first takes a cluster past a limit.
    fn cluster_sizes(
        &mut self,
        raw: &RawSystem,
        reservations: &[Option<Reservation>],
        tasks: &[Option<Task>],
        phases: &[Option<Phase>],
    ) {
        let names: Vec<&str> = raw
            .cluster
            .iter()
            .map(|c| name_of(&c.get_ref().name))
            .collect();
        let mut own_reservations = vec![0usize; names.len()];
        for (built, raw) in reservations.iter().zip(&raw.reservation) {
            let Some(built) = built else { continue };
            own_reservations[built.cluster] += 1;
            if own_reservations[built.cluster] == MAX_RESERVATIONS + 1 {
                let span = raw.get_ref().cluster.span();
                self.too_many(span, names[built.cluster], "reservations", MAX_RESERVATIONS);
            }
        }
        let mut own_threads = vec![0usize; names.len()];
        for (task, raw) in tasks.iter().zip(&raw.task) {
            let Some(cluster) = task
                .as_ref()
                .and_then(|t| reservations.get(t.reservation)?.as_ref())
                .map(|r| r.cluster)
            else {
                continue;
            };
            own_threads[cluster] += 1;
            if own_threads[cluster] == MAX_THREADS + 1 {
                let span = raw.get_ref().reservation.span();
                self.too_many(span, names[cluster], "tasks", MAX_THREADS);
            }
        }
        for (phase, raw_phase) in phases.iter().zip(&raw.phase) {
            let Some(phase) = phase else { continue };
            let (mut reservations, mut threads) = (own_reservations.clone(), own_threads.clone());
            for (addition, raw_addition) in phase.additions.iter().zip(&raw_phase.get_ref().add) {
                let count = addition.count as usize;
                let new_reservations = match addition.reservation {
                    AddedReservation::Existing(_) => 0,
                    AddedReservation::Sporadic { .. } => count,
                    // The copies on a cluster share one best-effort reservation.
                    AddedReservation::BestEffort => 1,
                };
                let span = raw_addition.get_ref().count.span();
                for &cluster in &addition.clusters {
                    let before = (reservations[cluster], threads[cluster]);
                    reservations[cluster] += new_reservations;
                    threads[cluster] += count;
                    if before.0 <= MAX_RESERVATIONS && reservations[cluster] > MAX_RESERVATIONS {
                        let name = names[cluster];
                        self.too_many(span.clone(), name, "reservations", MAX_RESERVATIONS);
                    }
                    if before.1 <= MAX_THREADS && threads[cluster] > MAX_THREADS {
                        self.too_many(span.clone(), names[cluster], "tasks", MAX_THREADS);
                    }
                }
            }
        }
    }

    fn too_many(&mut self, span: Range<usize>, cluster: &str, what: &str, limit: usize) {
        self.report(
            span,
            format!("this takes cluster `{cluster}` past {limit} {what}"),
            format!(
                "allowed: at most {limit} {what} in one cluster, the file's own and one \
                 phase's added ones together"
            ),
        );
    }

    /// A `[[phase.add]]`: clusters, a count, a reservation and a task.
    fn addition(
        &mut self,
        raw: &RawAddition,
        names: &Names<'_>,
        servers: &[Option<Server>],
        reservations: &[Option<Reservation>],
    ) -> Option<Addition> {
        let clusters = self.addition_clusters(&raw.clusters, names);
        let n = *raw.count.get_ref();
        let count = u32::try_from(n).ok().filter(|&count| count > 0);
        if count.is_none() {
            self.report(
                raw.count.span(),
                format!("count {n} is outside 1..={}", u32::MAX),
                "allowed: how many copies of the task to add on each cluster, 1 or more",
            );
        }
        let reservation = match raw.reservation.get_ref() {
            RawAddedReservation::Name(name) if name == "best-effort" => {
                Some(AddedReservation::BestEffort)
            }
            RawAddedReservation::Name(name) => {
                let found = names.reservations.iter().position(|n| n == name);
                match found {
                    None => self.report(
                        raw.reservation.span(),
                        format!("no reservation is called `{name}`"),
                        format!(
                            "allowed: \"best-effort\", a new sporadic reservation like {{ budget \
                             = \"100ms\", period = \"3000ms\", priority = 0 }}, or one of {}",
                            names.reservations.join(", ")
                        ),
                    ),
                    Some(index) => {
                        let own = reservations[index].as_ref().map(|r| r.cluster);
                        if let (Some(own), Some(clusters)) = (own, &clusters) {
                            if clusters.as_slice() != [own] {
                                let cluster = names.clusters[own];
                                self.report(
                                    raw.clusters.span(),
                                    format!(
                                        "reservation `{name}` is on cluster `{cluster}`, but \
                                         these clusters are not exactly that one"
                                    ),
                                    format!(
                                        "allowed: clusters = [\"{cluster}\"], the existing \
                                         reservation's cluster"
                                    ),
                                );
                            }
                        }
                    }
                }
                found.map(AddedReservation::Existing)
            }
            RawAddedReservation::New(new) => {
                let criticality = self.criticality(&new.criticality);
                let priority = self.priority(&new.priority);
                let written = new.criticality.as_ref().map(|c| c.get_ref().as_str());
                let replenishment =
                    self.replenishment(&new.replenishment, &new.replenishments, written);
                let kind = self.sporadic(&new.budget, &new.period, replenishment);
                match (criticality, priority, kind) {
                    (
                        Some(criticality),
                        Some(priority),
                        Some(ReservationKind::Sporadic {
                            budget,
                            period,
                            replenishment,
                        }),
                    ) => Some(AddedReservation::Sporadic {
                        criticality,
                        priority,
                        budget,
                        period,
                        replenishment,
                    }),
                    _ => None,
                }
            }
        };
        let task = self.template(raw.task.get_ref(), names, servers);
        Some(Addition {
            clusters: clusters?,
            count: count?,
            reservation: reservation?,
            task: task?,
        })
    }

    /// An addition's clusters: one or more names, each once.
    fn addition_clusters(
        &mut self,
        raw: &Spanned<Vec<Spanned<String>>>,
        names: &Names<'_>,
    ) -> Option<Vec<usize>> {
        if raw.get_ref().is_empty() {
            self.report(
                raw.span(),
                "an addition needs at least one cluster",
                "allowed: [[cluster]] names, like clusters = [\"C1\", \"C2\"]",
            );
            return None;
        }
        let mut clusters = Vec::new();
        let mut all_valid = true;
        for name in raw.get_ref() {
            match self.named(name, &names.clusters, "cluster") {
                Some(index) if clusters.contains(&index) => {
                    self.report(
                        name.span(),
                        format!("cluster `{}` is listed twice", name.get_ref()),
                        "allowed: each cluster once; `count` says how many copies it gets",
                    );
                    all_valid = false;
                }
                Some(index) => clusters.push(index),
                None => all_valid = false,
            }
        }
        all_valid.then_some(clusters)
    }

    /// An addition's `task = { period, offset, stagger, script }`.
    fn template(
        &mut self,
        raw: &RawTemplate,
        names: &Names<'_>,
        servers: &[Option<Server>],
    ) -> Option<TaskTemplate> {
        let period = self.positive_time(&raw.period, "period");
        let offset = self.optional_time(&raw.offset);
        let stagger = self.optional_time(&raw.stagger);
        let script = self.script(&raw.script, None, names, servers);
        Some(TaskTemplate {
            period: period?,
            offset: offset?,
            stagger: stagger?,
            script: script?,
        })
    }

    fn protocol(&mut self, raw: &Spanned<String>) -> Option<GateProtocol> {
        let found = GateProtocol::from_name(raw.get_ref());
        if found.is_none() {
            self.report(
                raw.span(),
                format!("unknown protocol `{}`", raw.get_ref()),
                format!("allowed: {}", GateProtocol::NAMES.join(", ")),
            );
        }
        found
    }

    /// Names are not empty, and each is used once among the tables of `what`.
    fn unique_names<'r>(&mut self, names: impl Iterator<Item = &'r Spanned<String>>, what: &str) {
        let mut first_line: HashMap<&str, usize> = HashMap::new();
        for name in names {
            let text = name.get_ref().as_str();
            if text.trim().is_empty() {
                self.report(
                    name.span(),
                    format!("a {what} name is empty"),
                    "allowed: a name with at least one visible character, like \"C1\"",
                );
            } else if let Some(error) =
                self.source
                    .long_name(name.span(), text, &format!("a {what} name"))
            {
                self.errors.push(error);
            } else if let Some(line) = first_line.get(text) {
                self.report(
                    name.span(),
                    format!("{what} name `{text}` is already used on line {line}"),
                    format!("allowed: a name no other {what} in this system has"),
                );
            } else {
                first_line.insert(text, self.source.line(name.span().start));
            }
        }
    }

    fn cluster(&mut self, raw: &RawCluster) -> Option<Cluster> {
        let n = *raw.cores.get_ref();
        let cores = u64::try_from(n)
            .ok()
            .filter(|cores| (1..=MAX_CORES).contains(cores));
        if cores.is_none() {
            self.report(
                raw.cores.span(),
                format!("cores {n} is outside 1..={MAX_CORES}"),
                format!("allowed: 1..={MAX_CORES} cores (m_k)"),
            );
        }
        Some(Cluster {
            name: raw.name.get_ref().clone(),
            cores: cores?,
        })
    }

    /// A server; `k` is the number of clusters, `K`.
    fn server(&mut self, raw: &RawServer, k: u64) -> Option<Server> {
        let operation_length = self.time_levels(
            &raw.operation,
            "operation length",
            "allowed: a time longer than zero, like \"2ms\" (L_q, the longest operation)",
            "allowed: low <= high (L^L_q <= L^H_q: the high-assurance estimate is the more \
             pessimistic)",
        );
        let invoking_clusters = match &raw.clusters {
            None => Some(PerCriticality::uniform(None)),
            Some(clusters) => self.cluster_levels(clusters, k),
        };
        Some(Server {
            name: raw.name.get_ref().clone(),
            operation_length: operation_length?,
            invoking_clusters: invoking_clusters?,
        })
    }

    /// `clusters = 4` or `{ low = 2, high = 4 }`, each in `1..=k`.
    fn cluster_levels(
        &mut self,
        raw: &Spanned<RawLevels<i64>>,
        k: u64,
    ) -> Option<PerCriticality<Option<u64>>> {
        let mut count = |value: i64, span: Range<usize>| {
            let valid = u64::try_from(value)
                .ok()
                .filter(|count| (1..=k).contains(count));
            // With no clusters at all, that error says it; every count would be out of range.
            if valid.is_none() && k > 0 {
                self.report(
                    span,
                    format!("clusters {value} is outside 1..={k}"),
                    format!(
                        "allowed: 1..={k}, the clusters this system has (K_q); leave it out \
                         for all of them"
                    ),
                );
            }
            valid
        };
        match raw.get_ref() {
            RawLevels::Same(n) => count(*n, raw.span()).map(|n| PerCriticality::uniform(Some(n))),
            RawLevels::Split { low, high } => {
                let low_count = count(*low.get_ref(), low.span());
                let high_count = count(*high.get_ref(), high.span());
                let (low_count, high_count) = (low_count?, high_count?);
                if low_count > high_count {
                    self.report(
                        low.span(),
                        format!("low clusters {low_count} is above high clusters {high_count}"),
                        "allowed: low <= high (K^L_q <= K^H_q; K^H_q = K is the safe choice)",
                    );
                    return None;
                }
                Some(PerCriticality {
                    low: Some(low_count),
                    high: Some(high_count),
                })
            }
        }
    }

    /// A time, or a time per level: each above zero, `low <= high`.
    fn time_levels(
        &mut self,
        raw: &Spanned<RawLevels<RawTime>>,
        what: &str,
        zero_help: &str,
        order_help: &str,
    ) -> Option<PerCriticality<Duration>> {
        match raw.get_ref() {
            RawLevels::Same(time) => {
                let time = self.non_zero(time, raw.span(), what, zero_help)?;
                Some(PerCriticality::uniform(time))
            }
            RawLevels::Split { low, high } => {
                let low_time =
                    self.non_zero(low.get_ref(), low.span(), &format!("low {what}"), zero_help);
                let high_time = self.non_zero(
                    high.get_ref(),
                    high.span(),
                    &format!("high {what}"),
                    zero_help,
                );
                let (low_time, high_time) = (low_time?, high_time?);
                if low_time > high_time {
                    self.report(
                        low.span(),
                        format!("low {what} {low_time} is above high {what} {high_time}"),
                        order_help,
                    );
                    return None;
                }
                Some(PerCriticality {
                    low: low_time,
                    high: high_time,
                })
            }
        }
    }

    /// One reservation, and what the checks across its cluster need to know of it.
    fn reservation<'r>(
        &mut self,
        spanned: &'r Spanned<RawReservation>,
        cluster_names: &[&str],
        server_names: &[&str],
        cycle: Option<Duration>,
    ) -> (Option<Reservation>, Seen<'r>) {
        let raw = spanned.get_ref();
        let name = name_of(&raw.name);
        let cluster = self.named(&raw.cluster, cluster_names, "cluster");
        let criticality = self.criticality(&raw.criticality);
        let priority = self.priority(&raw.priority);
        let mut seen = Seen {
            name,
            cluster,
            priority: priority.map(|p| (p, raw.priority.span())),
            table_driven: None,
            slots: Vec::new(),
        };
        let kind = self.kind(raw, cycle, &mut seen);
        let execution = self.time_levels(
            &raw.execution,
            "execution",
            "allowed: a time longer than zero, like \"2ms\" (e_i, the task's worst case)",
            "allowed: low <= high (e^L_i <= e^H_i: the high-assurance estimate is the more \
             pessimistic)",
        );
        let invocations = match &raw.invokes {
            None => Some(Vec::new()),
            Some(invokes) => self.invocations(invokes.get_ref(), server_names),
        };
        let built = (|| {
            Some(Reservation {
                name: name.to_owned(),
                cluster: cluster?,
                criticality: criticality?,
                priority: priority?,
                kind: kind?,
                execution: execution?,
                invocations: invocations?,
            })
        })();
        (built, seen)
    }

    /// Table-driven or sporadic, from which of `slots`, `budget` and `period` are present.
    fn kind(
        &mut self,
        raw: &RawReservation,
        cycle: Option<Duration>,
        seen: &mut Seen<'_>,
    ) -> Option<ReservationKind> {
        let name = seen.name;
        match (&raw.slots, &raw.budget, &raw.period) {
            (Some(_), Some(sporadic), _) | (Some(_), None, Some(sporadic)) => {
                self.report(
                    sporadic.span(),
                    format!(
                        "reservation `{name}` has both slots (table-driven) and a budget or \
                         period (sporadic)"
                    ),
                    KIND_HELP,
                );
                None
            }
            (None, None, None) => {
                self.report(
                    raw.name.span(),
                    format!("reservation `{name}` has neither slots nor a budget and period"),
                    KIND_HELP,
                );
                None
            }
            (None, Some(budget), None) => {
                self.report(
                    budget.span(),
                    format!("sporadic reservation `{name}` has a budget but no period"),
                    "add period = \"100ms\" (its replenishment period, at least the budget)",
                );
                None
            }
            (None, None, Some(period)) => {
                self.report(
                    period.span(),
                    format!("sporadic reservation `{name}` has a period but no budget"),
                    "add budget = \"20ms\" (at most the period)",
                );
                None
            }
            (None, Some(budget), Some(period)) => {
                seen.table_driven = Some(false);
                let criticality = raw.criticality.as_ref().map(|c| c.get_ref().as_str());
                let replenishment =
                    self.replenishment(&raw.replenishment, &raw.replenishments, criticality);
                self.sporadic(budget, period, replenishment)
            }
            (Some(slots), None, None) => {
                seen.table_driven = Some(true);
                if let Some(queue) = &raw.replenishments {
                    self.report(
                        queue.span(),
                        format!(
                            "reservation `{name}` is table-driven (slots), but replenishments \
                             is an SPR server's queue capacity"
                        ),
                        "allowed: replenishments only with replenishment = \"spr\"",
                    );
                }
                if let Some(replenishment) = &raw.replenishment {
                    self.report(
                        replenishment.span(),
                        format!(
                            "reservation `{name}` is table-driven (slots), but replenishment \
                             is a budgeted reservation's"
                        ),
                        "allowed: replenishment only with budget and period; a table-driven \
                         reservation is open in its slots, with no budget to replenish",
                    );
                }
                let kind = self.slots(slots, cycle, seen);
                kind.filter(|_| raw.replenishment.is_none() && raw.replenishments.is_none())
            }
        }
    }

    fn sporadic(
        &mut self,
        raw_budget: &Spanned<RawTime>,
        raw_period: &Spanned<RawTime>,
        replenishment: Option<Replenishment>,
    ) -> Option<ReservationKind> {
        let budget = self.positive_time(raw_budget, "budget");
        let period = self.positive_time(raw_period, "period");
        let (budget, period) = (budget?, period?);
        if budget > period {
            self.report(
                raw_budget.span(),
                format!("budget {budget} is larger than its period {period}"),
                "a reservation's budget must be at most its period",
            );
            return None;
        }
        Some(ReservationKind::Sporadic {
            budget,
            period,
            replenishment: replenishment?,
        })
    }

    /// `replenishment = "sporadic" | "cbs"` (the sporadic rule when not given). A
    /// constant-bandwidth server postpones its deadline instead of keeping a job's budget, so
    /// it is refused at high criticality (`criticality` as written).
    fn replenishment(
        &mut self,
        raw: &Option<Spanned<String>>,
        queue: &Option<Spanned<i64>>,
        criticality: Option<&str>,
    ) -> Option<Replenishment> {
        let is_spr = raw.as_ref().is_some_and(|r| r.get_ref() == "spr");
        if let (Some(queue), false) = (queue, is_spr) {
            self.report(
                queue.span(),
                "replenishments is an SPR server's queue capacity, but this reservation is not \
                 an SPR server",
                "allowed: replenishments only with replenishment = \"spr\"",
            );
            return None;
        }
        let Some(raw) = raw else {
            return Some(Replenishment::Sporadic);
        };
        let Some(found) = Replenishment::from_name(raw.get_ref()) else {
            self.report(
                raw.span(),
                format!("unknown replenishment `{}`", raw.get_ref()),
                REPLENISHMENT_HELP,
            );
            return None;
        };
        if found != Replenishment::Sporadic && criticality == Some("high") {
            self.report(
                raw.span(),
                format!(
                    "{} server is low-criticality only, but this reservation is \
                     high-criticality",
                    if is_spr {
                        "an SPR"
                    } else {
                        "a constant-bandwidth"
                    }
                ),
                "allowed: replenishment = \"sporadic\" at high criticality: Vestal's monitor \
                 (section VII) needs the sporadic rule's per-job budget; or criticality = \"low\"",
            );
            return None;
        }
        let Some(queue) = queue else {
            return Some(found);
        };
        let capacity = *queue.get_ref();
        match u16::try_from(capacity) {
            Ok(replenishments) if (1..=MAX_SPR_REPLENISHMENTS).contains(&replenishments) => {
                Some(Replenishment::Spr { replenishments })
            }
            _ => {
                self.report(
                    queue.span(),
                    format!("replenishments = {capacity} is outside 1..=256"),
                    "allowed: S from 1 to 256, the most replenishments an SPR server keeps \
                     pending (8 when left out)",
                );
                None
            }
        }
    }

    /// A table-driven reservation's slots: each `[start, end]` with `start < end <= cycle`,
    /// disjoint from its others. The valid ones go into `seen` for the cluster's check.
    fn slots(
        &mut self,
        raw: &Spanned<RawSlots>,
        cycle: Option<Duration>,
        seen: &mut Seen<'_>,
    ) -> Option<ReservationKind> {
        if raw.get_ref().is_empty() {
            self.report(
                raw.span(),
                "a table-driven reservation needs at least one slot",
                KIND_HELP,
            );
            return None;
        }
        let mut slots = Vec::new();
        let mut all_valid = true;
        for slot in raw.get_ref() {
            let times: Vec<Option<Duration>> =
                slot.get_ref().iter().map(|t| self.time(t)).collect();
            let [start, end] = times.as_slice() else {
                self.report(
                    slot.span(),
                    format!(
                        "a slot needs two times, [start, end], but has {}",
                        times.len()
                    ),
                    SLOT_HELP,
                );
                all_valid = false;
                continue;
            };
            let (Some(start), Some(end)) = (*start, *end) else {
                all_valid = false;
                continue;
            };
            let this = Slot::new(start, end);
            if end <= start {
                let problem = if end == start {
                    "is empty"
                } else {
                    "ends before it starts"
                };
                self.report(slot.span(), format!("slot {this} {problem}"), SLOT_HELP);
                all_valid = false;
                continue;
            }
            if let Some(cycle) = cycle.filter(|&cycle| end > cycle) {
                self.report(
                    slot.span(),
                    format!("slot {this} ends after the cycle {cycle}"),
                    SLOT_HELP,
                );
                all_valid = false;
                continue;
            }
            if let Some((other, _)) = seen.slots.iter().find(|(other, _)| other.overlaps(this)) {
                self.report(
                    slot.span(),
                    format!("slot {this} overlaps this reservation's slot {other}"),
                    "allowed: disjoint slots, like [[\"0ms\", \"20ms\"], [\"50ms\", \"70ms\"]]",
                );
                all_valid = false;
                continue;
            }
            seen.slots.push((this, slot.span()));
            slots.push(this);
        }
        // Without a cycle (reported once) the slots cannot be placed.
        (all_valid && cycle.is_some()).then_some(ReservationKind::TableDriven { slots })
    }

    /// Section III: slots of table-driven reservations on one processor must not overlap, so
    /// at no instant may more slots of a cluster be open than it has cores. Each slot is
    /// judged against the earlier ones in the file that were accepted.
    fn overlapping_slots(&mut self, seen: &[Seen<'_>], clusters: &[Option<Cluster>]) {
        let mut open: Vec<Vec<(Slot, &str)>> = vec![Vec::new(); clusters.len()];
        for reservation in seen {
            let Some(index) = reservation.cluster else {
                continue;
            };
            let Some(cluster) = &clusters[index] else {
                continue;
            };
            for (slot, span) in &reservation.slots {
                let others: Vec<&(Slot, &str)> = open[index]
                    .iter()
                    .filter(|(other, _)| other.overlaps(*slot))
                    .collect();
                // The most slots open at once within this one: at its start or another's.
                let (at, most) = std::iter::once(slot.start)
                    .chain(others.iter().map(|(other, _)| other.start))
                    .filter(|&instant| instant >= slot.start)
                    .map(|instant| {
                        let count = others
                            .iter()
                            .filter(|(other, _)| other.start <= instant && instant < other.end)
                            .count();
                        (instant, count)
                    })
                    .fold(
                        (slot.start, 0),
                        |best, next| {
                            if next.1 > best.1 {
                                next
                            } else {
                                best
                            }
                        },
                    );
                if (most as u64) < cluster.cores {
                    open[index].push((*slot, reservation.name));
                    continue;
                }
                let help = "allowed: at no instant more open slots in a cluster than it has \
                            cores; on one core, slots must not overlap (section III)";
                let message = if cluster.cores == 1 {
                    let (other, owner) = others[0];
                    format!(
                        "slot {slot} of `{}` overlaps slot {other} of `{owner}` on cluster \
                         `{}` (1 core)",
                        reservation.name, cluster.name
                    )
                } else {
                    format!(
                        "slot {slot} of `{}` makes {} slots overlap at {at} on cluster `{}` \
                         ({} cores)",
                        reservation.name,
                        most + 1,
                        cluster.name,
                        cluster.cores
                    )
                };
                self.report(span.clone(), message, help);
            }
        }
    }

    /// Section III: a table-driven reservation's fixed priority is above every sporadic
    /// reservation's in its cluster. Each reservation is judged against the earlier ones.
    fn table_priorities(&mut self, seen: &[Seen<'_>], cluster_names: &[&str]) {
        for (index, reservation) in seen.iter().enumerate() {
            let (Some(cluster), Some(table_driven), Some((priority, span))) = (
                reservation.cluster,
                reservation.table_driven,
                &reservation.priority,
            ) else {
                continue;
            };
            let conflict = seen[..index].iter().find_map(|other| {
                let (other_priority, _) = other.priority.as_ref()?;
                let opposite = other.table_driven? != table_driven;
                let (table, sporadic) = if table_driven {
                    (priority, other_priority)
                } else {
                    (other_priority, priority)
                };
                (other.cluster == Some(cluster) && opposite && table <= sporadic)
                    .then_some((other.name, *other_priority))
            });
            let Some((other, other_priority)) = conflict else {
                continue;
            };
            let cluster = cluster_names[cluster];
            let message = if table_driven {
                format!(
                    "priority {} of table-driven `{}` is not above priority {} of sporadic \
                     `{other}` on cluster `{cluster}`",
                    priority.0, reservation.name, other_priority.0
                )
            } else {
                format!(
                    "priority {} of sporadic `{}` is not below priority {} of table-driven \
                     `{other}` on cluster `{cluster}`",
                    priority.0, reservation.name, other_priority.0
                )
            };
            self.report(
                span.clone(),
                message,
                "allowed: a table-driven reservation's priority above every sporadic \
                 reservation's in its cluster (section III)",
            );
        }
    }

    /// `invokes = { key = 1 }`: each name a server, each count 0 or more.
    fn invocations(&mut self, raw: &RawInvokes, server_names: &[&str]) -> Option<Vec<Invocation>> {
        let mut invocations = Vec::new();
        let mut all_valid = true;
        for (server, raw_count) in &raw.0 {
            let server = self.named(server, server_names, "server");
            let n = *raw_count.get_ref();
            let count = u64::try_from(n).ok();
            if count.is_none() {
                self.report(
                    raw_count.span(),
                    format!("invocation count {n} is negative"),
                    "allowed: how often each job invokes the server (N_iq), 0 or more",
                );
            }
            match (server, count) {
                (Some(server), Some(count)) => invocations.push(Invocation { server, count }),
                _ => all_valid = false,
            }
        }
        all_valid.then_some(invocations)
    }

    /// `"low"` (also when not given) or `"high"`.
    fn criticality(&mut self, raw: &Option<Spanned<String>>) -> Option<Criticality> {
        let Some(c) = raw else {
            return Some(Criticality::Low);
        };
        let found = Criticality::from_name(c.get_ref());
        if found.is_none() {
            self.report(
                c.span(),
                format!("unknown criticality `{}`", c.get_ref()),
                format!("allowed: {}", Criticality::NAMES.join(", ")),
            );
        }
        found
    }

    /// The index of the table of kind `what` called `raw`, or an error listing the names.
    fn named(&mut self, raw: &Spanned<String>, names: &[&str], what: &str) -> Option<usize> {
        let name = raw.get_ref().as_str();
        let found = names.iter().position(|n| *n == name);
        if found.is_none() {
            self.report(
                raw.span(),
                format!("no {what} is called `{name}`"),
                names_help(
                    names.iter().copied(),
                    &format!("add a [[{what}]] table with this name"),
                ),
            );
        }
        found
    }

    fn priority(&mut self, raw: &Spanned<i64>) -> Option<Priority> {
        crate::validate::priority_of(*raw.get_ref())
            .map_err(|message| self.report(raw.span(), message, PRIORITY_HELP))
            .ok()
    }

    fn time(&mut self, raw: &Spanned<RawTime>) -> Option<Duration> {
        self.time_at(raw.get_ref(), raw.span())
    }

    fn time_at(&mut self, raw: &RawTime, span: Range<usize>) -> Option<Duration> {
        crate::validate::time_of(raw)
            .map_err(|e| self.report(span, e.message, e.help))
            .ok()
    }

    fn non_zero(
        &mut self,
        raw: &RawTime,
        span: Range<usize>,
        what: &str,
        help: &str,
    ) -> Option<Duration> {
        let time = self.time_at(raw, span.clone())?;
        if time.is_zero() {
            self.report(span, format!("{what} cannot be zero"), help);
            return None;
        }
        Some(time)
    }

    fn positive_time(&mut self, raw: &Spanned<RawTime>, what: &str) -> Option<Duration> {
        self.non_zero(
            raw.get_ref(),
            raw.span(),
            what,
            "allowed: a time longer than zero, like \"20ms\"",
        )
    }
}

fn name_of(raw: &Spanned<String>) -> &str {
    raw.get_ref().as_str()
}
