//! Validated scenario types: valid by construction, so the simulator never re-checks them.
//!
//! Everything here comes out of [`crate::parse`]; the raw serde types live in `raw.rs`.

use bulwark_core::{Duration, Instant, Priority};

pub use bulwark_core::reclaim::ObjectKind;

pub use bulwark_core::reservation::clustered::{Replenishment, SporadicOrder};
pub use bulwark_core::reservation::Reservation;

/// The longest name (of a task, group, component, CPI, reservation, server, ...) in
/// characters: names are printed in table columns and reports, so they stay readable.
pub const MAX_NAME_CHARS: usize = 256;

/// A whole scenario: the machine, its policy, its cost model and its tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Short name used in reports and outputs.
    pub name: String,
    /// Free text for people.
    pub description: String,
    /// Seed for every random draw (execution times, jitter); recorded in every output.
    pub seed: u64,
    /// How long to simulate unless the user says otherwise.
    pub duration: Duration,
    /// Number of cores; tasks are partitioned onto cores `0..cores`.
    pub cores: u16,
    /// The scheduling policy of every core without an entry in `core_policies`.
    pub policy: PolicyKind,
    /// Cores that run another policy (`[[core]]` tables): core index, its policy. Sorted by
    /// core, each core once.
    pub core_policies: Vec<(u16, PolicyKind)>,
    /// What kernel work costs.
    pub cost: CostModel,
    /// The tasks, in file order; a task's index here is its `TaskId`.
    pub tasks: Vec<TaskSpec>,
    /// Reclamation groups (`[[group]]`), in file order.
    pub groups: Vec<GroupSpec>,
    /// Passive servers (`[[server]]`) that `invoke` steps call, in file order.
    pub servers: Vec<ServerSpec>,
    /// The variable-bandwidth servers' configuration, shared by every vbs core: `Some`
    /// exactly when some core runs vbs.
    pub vbs: Option<VbsSpec>,
    /// Clusters of cores scheduled together (`[[cluster]]`), in file order; a core is in at
    /// most one, and a core in a cluster has no policy of its own.
    pub clusters: Vec<ClusterSpec>,
    /// Component procedure interfaces (the component paper's CPIs) that `call` steps
    /// request, each with the threads of its pool; empty unless a component system was
    /// lowered here.
    pub cpis: Vec<CpiSpec>,
    /// The component systems declared in the scenario file (`[[component]]` and
    /// `[[connection]]`), one per fixed-priority core that runs components, by core, beside
    /// the other cores' tasks. Empty when the file declares none.
    pub components: Vec<ComponentPart>,
}

/// One of a scenario's component systems (the component paper's tasks, CPIs and connections:
/// the components placed on one core, and the connections between them) and that core. The file gives its tasks and CPIs; the configuration analyzer settles
/// each CPI's ceiling and pool, and the system is lowered onto its core
/// (`bulwark_lab::component_system::compose`) before the machine runs: its tasks and pool threads
/// join [`Scenario::tasks`] after the file's own, its CPIs join [`Scenario::cpis`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentPart {
    /// The core its tasks and pool threads run on: a fixed-priority core with no other
    /// tasks, as on the component paper's platform.
    pub core: u16,
    /// The system as the file declares it, charged by the scenario's cost table.
    pub system: crate::component::ComponentSystem,
    /// Once lowered: the indices in [`Scenario::tasks`] of its tasks (in the order of
    /// [`ComponentSystem::tasks`](crate::component::ComponentSystem::tasks)), then of its
    /// pool threads; `None` before.
    pub lowered: Option<std::ops::Range<usize>>,
    /// Where its `[[component]]` and `[[connection]]` tables are declared in the file, for
    /// problems found after validation (a call loop, a task without a body).
    pub declarations: crate::component::Declarations,
}

impl ComponentPart {
    /// The system with where its components and connections are declared in `text`, the
    /// scenario file `file`'s text, so that a call loop is reported at a line and column.
    pub fn located(&self, file: &str, text: &str) -> crate::component::LocatedSystem {
        let source = crate::diagnostic::Source::new(file, text);
        crate::component::LocatedSystem::new(self.system.clone(), source, self.declarations.clone())
    }
}

/// A CPI of a passive component (the component paper, section 4): its protocol, ceiling and
/// procedure bodies, and the threads of its pool, which wait for requests at its ceiling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpiSpec {
    /// Protocol, ceiling, pool size and bodies, as the configuration analyzer settled them.
    pub cpi: crate::lowered::LoweredCpi,
    /// Its pool's threads, by pool index: indices into [`Scenario::tasks`] of tasks with no
    /// behaviour of their own, on a fixed-priority core, which run the procedure for the
    /// request each takes (one thread for IPCP and NPCS).
    pub pool: Vec<usize>,
}

/// Cores scheduled together by the MC-IPC paper's clustered reservation scheduler (section
/// III): at each instant the `m` most important active reservations with budget run, on any
/// of the cluster's `m` cores, after the time partitions in their slots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSpec {
    /// Unique among the clusters.
    pub name: String,
    /// The scenario's cores it schedules, distinct, in file order (its core `0` first: the
    /// one whose timer the cluster's scheduler programs).
    pub cores: Vec<u16>,
    /// How its sporadic reservations are ordered: by the tasks' fixed priorities or by EDF.
    pub order: SporadicOrder,
    /// `H`, the cycle the time partitions' slots repeat with (section III); zero when no
    /// member is a partition.
    pub cycle: Duration,
    /// Slack reclamation (section III, `slack-reclamation = true`): a core whose decision runs
    /// nothing (no reservation selected, or the selected one's thread waits at a gate without
    /// lending) runs the most urgent ready member whose reservation has budget but is not
    /// selected, best-effort ones included, on no one's budget. Off by default.
    pub slack_reclamation: bool,
    /// Its tasks, in file order, each in a reservation of its own or sharing an earlier
    /// member's ([`MemberKind::Shared`]).
    pub members: Vec<ClusterMember>,
}

/// A task of a cluster and its reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterMember {
    /// The task, an index into [`Scenario::tasks`]. Its `core` is the cluster's first core.
    pub task: usize,
    /// Its reservation.
    pub kind: MemberKind,
}

/// A cluster member's reservation (MC-IPC paper, section III and VII).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberKind {
    /// A sporadic reservation `(e, p)`, the task's `reservation` (and its `priority` under
    /// fixed priority), replenished as given.
    Sporadic {
        /// How its budget comes back.
        replenishment: Replenishment,
        /// Of high criticality (Vestal's model, section VII) with this low budget `e^L`
        /// (its budget being `e^H`); `None`: low criticality.
        low_budget: Option<Duration>,
    },
    /// A best-effort reservation (`reservation = "best-effort"`): below every other level of
    /// its cluster, with no budget; the task has no `reservation` and no `priority`.
    BestEffort,
    /// The reservation of an earlier member of the same cluster, named there
    /// (`reservation = "R4"` beside its `name = "R4"`): the two tasks are threads bound to one
    /// scheduling context, which runs the first of them that is ready. The task has no
    /// `reservation` and no `priority` of its own: both are the owner's.
    Shared {
        /// The owner, an index into [`Scenario::tasks`].
        owner: usize,
    },
    /// A table-driven time partition pinned to one of the cluster's cores, running during
    /// its slots `[start, end)` of every cycle; the task has no `reservation`.
    Partition {
        /// The scenario core it runs on, one of the cluster's.
        core: u16,
        /// Its slots within the cycle, sorted, disjoint.
        slots: Vec<(Duration, Duration)>,
    },
}

impl Scenario {
    /// `tasks` on `cores` cores under `policy` for `duration`, and nothing more: no
    /// description, seed 0, the default cost model, and no core policies, clusters, groups,
    /// servers, VBS or CPIs. A scenario built in code sets what it needs on top of this.
    pub fn new(
        name: impl Into<String>,
        policy: PolicyKind,
        cores: u16,
        duration: Duration,
        tasks: Vec<TaskSpec>,
    ) -> Scenario {
        Scenario {
            name: name.into(),
            description: String::new(),
            seed: 0,
            duration,
            cores,
            policy,
            core_policies: Vec::new(),
            cost: CostModel::default(),
            tasks,
            groups: Vec::new(),
            servers: Vec::new(),
            vbs: None,
            clusters: Vec::new(),
            cpis: Vec::new(),
            components: Vec::new(),
        }
    }

    /// The cluster `core` belongs to, if any (an index into [`Scenario::clusters`]).
    pub fn cluster_of(&self, core: u16) -> Option<usize> {
        self.clusters.iter().position(|c| c.cores.contains(&core))
    }

    /// The cluster task `task` (an index into [`Scenario::tasks`]) runs in, if any, and its
    /// reservation there.
    pub fn cluster_of_task(&self, task: usize) -> Option<(usize, &MemberKind)> {
        self.clusters.iter().enumerate().find_map(|(k, c)| {
            c.members
                .iter()
                .find(|member| member.task == task)
                .map(|member| (k, &member.kind))
        })
    }

    /// The policy core `core` runs (a core of a cluster: the scenario's, unused).
    pub fn policy_of(&self, core: u16) -> PolicyKind {
        self.core_policies
            .iter()
            .find(|(c, _)| *c == core)
            .map_or(self.policy, |(_, policy)| *policy)
    }

    /// How many of [`Scenario::tasks`] the file gave: a composed scenario's component tasks
    /// and pool threads follow them (all of them, before lowering).
    pub fn file_tasks(&self) -> usize {
        (self.components.first())
            .and_then(|part| part.lowered.as_ref())
            .map_or(self.tasks.len(), |lowered| lowered.start)
    }

    /// The scheduling context task `task` is bound to as a kernel object, if any: a
    /// reservation on a fixed-priority core outside every cluster (a component system's task;
    /// scenario files give reservations only to the policies that schedule them).
    pub fn kernel_context(&self, task: usize) -> Option<Reservation> {
        let spec = self.tasks.get(task)?;
        let fixed = self.policy_of(spec.core) == PolicyKind::FixedPriority;
        spec.reservation
            .filter(|_| fixed && self.cluster_of(spec.core).is_none())
    }

    /// True when some core runs another policy than the scenario's.
    pub fn is_mixed(&self) -> bool {
        self.core_policies.iter().any(|(_, p)| *p != self.policy)
    }

    /// The cores outside every cluster, in order: each schedules the tasks partitioned onto
    /// it by its own policy.
    pub fn partitioned_cores(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.cores).filter(|&core| self.cluster_of(core).is_none())
    }

    /// For every task (by index into [`Scenario::tasks`]), the cluster it runs in and its
    /// reservation there, or `None` for a task partitioned onto its `core`: one pass over
    /// the clusters, for callers that ask of every task ([`Scenario::cluster_of_task`] scans
    /// them each time).
    pub fn clusters_by_task(&self) -> Vec<Option<(usize, &MemberKind)>> {
        let mut by_task = vec![None; self.tasks.len()];
        for (cluster, spec) in self.clusters.iter().enumerate() {
            for member in &spec.members {
                if let Some(slot) = by_task.get_mut(member.task) {
                    *slot = Some((cluster, &member.kind));
                }
            }
        }
        by_task
    }

    /// The scenario cut into one scenario per policy, each with the tasks of the cores that
    /// run it (cores keep their indices, tasks their names and order); one part, the scenario
    /// itself, when every core runs the same policy and there is no cluster. Partitioned
    /// cores share nothing a per-core analysis sees, so each part can be analysed alone.
    /// Clusters are in no part: their cores have no policy of their own and their members
    /// are scheduled globally, so neither appears in any part (the parts keep no cluster).
    pub fn parts_by_policy(&self) -> Vec<Scenario> {
        if !self.is_mixed() && self.clusters.is_empty() {
            return vec![self.clone()];
        }
        let mut policies: Vec<PolicyKind> = Vec::new();
        for core in self.partitioned_cores() {
            let policy = self.policy_of(core);
            if !policies.contains(&policy) {
                policies.push(policy);
            }
        }
        let by_task = self.clusters_by_task();
        policies
            .into_iter()
            .map(|policy| {
                let keep = |i: &usize| {
                    by_task[*i].is_none() && self.policy_of(self.tasks[*i].core) == policy
                };
                let kept: Vec<usize> = (0..self.tasks.len()).filter(keep).collect();
                // Task indices of the whole scenario, as this part numbers them (those of
                // other parts dropped).
                let renumber = |indices: &[usize]| -> Vec<usize> {
                    indices
                        .iter()
                        .filter_map(|i| kept.iter().position(|k| k == i))
                        .collect()
                };
                Scenario {
                    policy,
                    core_policies: Vec::new(),
                    clusters: Vec::new(),
                    tasks: kept.iter().map(|&i| self.tasks[i].clone()).collect(),
                    // Groups name tasks by index: each keeps the members in this part,
                    // renumbered (so a termination's mask there is still its quota).
                    groups: self
                        .groups
                        .iter()
                        .map(|group| GroupSpec {
                            members: renumber(&group.members),
                            ..group.clone()
                        })
                        .collect(),
                    // A server's callers share a core, so they are all in one part.
                    servers: self
                        .servers
                        .iter()
                        .map(|server| ServerSpec {
                            clients: renumber(&server.clients),
                            ..server.clone()
                        })
                        .collect(),
                    // Caps are by task index too: a vbs part keeps its tasks' caps in order.
                    vbs: self
                        .vbs
                        .as_ref()
                        .filter(|_| policy == PolicyKind::Vbs)
                        .map(|spec| VbsSpec {
                            caps: kept.iter().map(|&i| spec.caps[i]).collect(),
                            ..spec.clone()
                        }),
                    ..self.clone()
                }
            })
            .collect()
    }

    /// The policies as people read them: `spr`, or `spr (core 1: edf)` when cores differ.
    pub fn policy_label(&self) -> String {
        if !self.is_mixed() {
            return self.policy.name().to_owned();
        }
        let others: Vec<String> = self
            .core_policies
            .iter()
            .filter(|(_, p)| *p != self.policy)
            .map(|(core, p)| format!("core {core}: {}", p.name()))
            .collect();
        format!("{} ({})", self.policy.name(), others.join(", "))
    }
}

/// How a `vbs` scenario's scheduler is built (`[vbs]`) and every process's bandwidth cap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VbsSpec {
    /// Early or late release of actions (VBS paper, section III-C).
    pub strategy: ReleaseStrategy,
    /// The queue plugin of the Blocked and Ready sets.
    pub plugin: VbsPlugin,
    /// One instant of the scheduler's discrete time.
    pub quantum: Duration,
    /// The scheduler tells `2^resolution_bits` instants apart.
    pub resolution_bits: u32,
    /// Each task's cap `u = numerator / denominator`, by task index; `None` for the tasks
    /// of cores that run another policy.
    pub caps: Vec<Option<(u64, u64)>>,
}

/// The VBS queue plugins (VBS paper, section V).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VbsPlugin {
    /// Doubly-linked lists.
    List,
    /// A time-slot array of FIFO queues.
    Array,
    /// A time-slot matrix of FIFO queues with bitmaps.
    Matrix,
    /// The matrix as radix trees: O(1) time in far less memory.
    Tree,
}

pub use bulwark_core::bandwidth::vbs::ReleaseStrategy;

/// A reclamation group (bounded resource reclamation, section III): its member tasks'
/// processes, children and objects are reclaimed together, within `quota`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// Unique name.
    pub name: String,
    /// The reclamation time the group may commit: every allocation charges its anticipated
    /// reclamation time, and is refused when the quota would be exceeded.
    pub quota: Duration,
    /// The tasks whose processes are spawned into it (indices into `Scenario::tasks`).
    pub members: Vec<usize>,
}

/// A passive server (`[[server]]`): a thread with no scheduling context of its own, behind an
/// IPC gate. An `invoke` step donates the caller's context to it for one operation (seL4
/// MCS's passive server), so the operation runs at the caller's priority and on its budget;
/// the gate orders the callers that wait while it serves another, and with bandwidth
/// inheritance their contexts run the request in service too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// Unique name.
    pub name: String,
    /// The gate's queueing rule: FIFO-IPC or PRIO-IPC (MC-IPC paper, section VI).
    pub gate: bulwark_core::ipc::GateProtocol,
    /// What it does per request, in order (`operation = "2ms"` is one run).
    pub body: Vec<ServerStep>,
    /// Callers waiting at the gate lend their scheduling contexts to the request in service
    /// (bandwidth inheritance, the MC-IPC paper's section III) instead of blocking.
    pub bandwidth_inheritance: bool,
    /// The priority its operation runs at, as an seL4 MCS passive server's thread has its
    /// own (the component paper's IPCP ceiling: at least every caller's); `None`: the
    /// caller's. Only on fixed-priority cores, and not with bandwidth inheritance.
    pub priority: Option<bulwark_core::Priority>,
    /// An mc-ipc gate's pruned request moves to the gate's background queue, where it may be
    /// served when no real-time request waits, until its caller's budget is back (the MC-IPC
    /// paper's section V, `pruned = "background"`); `false`: it waits in no queue until then
    /// (section IV-A, `pruned = "reissue"`, the default).
    pub pruned_to_background: bool,
    /// The tasks whose scripts invoke it (indices into `Scenario::tasks`), in task order.
    pub clients: Vec<usize>,
}

impl ServerSpec {
    /// The most one request's body runs when it calls no other server: its runs at their
    /// longest (`None` with a nested call, or past `u64` nanoseconds).
    pub fn operation_time(&self) -> Option<Duration> {
        self.body
            .iter()
            .try_fold(Duration::ZERO, |total, step| match step {
                ServerStep::Run(execution) => total.checked_add(execution.worst_case()),
                ServerStep::Invoke(_) => None,
            })
    }
}

/// One step of a server's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerStep {
    /// Execute for this long, on the context running the request.
    Run(Execution),
    /// Call the server with this index in `Scenario::servers` and wait for its reply: the
    /// same context runs that server's body (a nested call).
    Invoke(usize),
}

/// The scheduling policies a scenario can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// Preemptive fixed priority (`"fixed-priority"`).
    FixedPriority,
    /// Preemptive earliest deadline first (`"edf"`).
    Edf,
    /// Fixed priority with a deferrable server per task (`"deferrable-server"`): every task
    /// has a priority and a reservation.
    DeferrableServer,
    /// Fixed priority with a POSIX sporadic server per task, corrected as Stanovich et al.
    /// describe, with eager timer handling (`"sporadic-server"`).
    SporadicServer,
    /// Shielded processor reservations with the sporadic-server rule (`"spr"`).
    Spr,
    /// Shielded processor reservations with the deferrable-server rule (`"spr-deferrable"`).
    SprDeferrable,
    /// EDF over constant-bandwidth servers (`"cbs"`): every task has a server whose
    /// reservation is its budget `Q` and period `T`; depletion postpones the deadline.
    Cbs,
    /// EDF over hard constant-bandwidth servers (`"hard-cbs"`): depletion throttles the
    /// server until its deadline.
    HardCbs,
    /// Variable-bandwidth servers (`"vbs"`): every task is a VBS process with a bandwidth
    /// `cap`, running a script of actions.
    Vbs,
}

impl PolicyKind {
    /// Every policy, with the name a scenario file uses for it.
    pub const ALL: [(PolicyKind, &'static str); 9] = [
        (PolicyKind::FixedPriority, "fixed-priority"),
        (PolicyKind::Edf, "edf"),
        (PolicyKind::DeferrableServer, "deferrable-server"),
        (PolicyKind::SporadicServer, "sporadic-server"),
        (PolicyKind::Spr, "spr"),
        (PolicyKind::SprDeferrable, "spr-deferrable"),
        (PolicyKind::Cbs, "cbs"),
        (PolicyKind::HardCbs, "hard-cbs"),
        (PolicyKind::Vbs, "vbs"),
    ];

    /// True when every task needs a fixed priority.
    pub fn has_priorities(self) -> bool {
        !matches!(
            self,
            PolicyKind::Edf | PolicyKind::Cbs | PolicyKind::HardCbs | PolicyKind::Vbs
        )
    }

    /// True when every task needs a reservation.
    pub fn has_reservations(self) -> bool {
        !matches!(
            self,
            PolicyKind::FixedPriority | PolicyKind::Edf | PolicyKind::Vbs
        )
    }

    /// True when reservations keep a replenishment queue of capacity `S` (sporadic-server
    /// rules).
    pub fn has_replenishment_queue(self) -> bool {
        matches!(self, PolicyKind::SporadicServer | PolicyKind::Spr)
    }

    /// True when the policy reports each budget's exhaustion and replenishment (the notices
    /// an mc-ipc gate aborts and reissues requests on): every policy with budgets, that is
    /// all but fixed priority and EDF.
    pub fn reports_budget_notices(self) -> bool {
        !matches!(self, PolicyKind::FixedPriority | PolicyKind::Edf)
    }

    /// True when reservations may have non-preemptive regions `eta` (SPR only).
    pub fn has_non_preemptive_regions(self) -> bool {
        matches!(self, PolicyKind::Spr | PolicyKind::SprDeferrable)
    }

    /// The name a scenario file uses.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }
}

/// The cost of kernel work, in cycles of a clock of `clock_hz`: one cost table for every
/// machine, each charging the costs of the work it models. All zero unless set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostModel {
    /// Processor clock in Hz (default 1 GHz, so one cycle is one nanosecond).
    pub clock_hz: u64,
    /// Entering and leaving the kernel for a timer interrupt.
    pub timer_interrupt: u64,
    /// One scheduler invocation, before counting its work.
    pub scheduler: u64,
    /// One unit of policy work (see `bulwark_core::Work::units`).
    pub per_work_unit: u64,
    /// Switching a core to a task (or server thread) other than what it ran last; an idle
    /// core ran none, so the task after an idle stretch is switched to. Every machine
    /// follows this rule.
    pub context_switch: u64,
    /// Cache refill a task pays when it resumes after being preempted.
    pub cache_refill: u64,
    /// Cache refill a task pays when it next runs after another task on its core flushed the
    /// cache (`{ flush-cache = true }`); it pays the larger of this and `cache_refill`, not both.
    pub cache_flush: u64,
    /// One unit of reclamation work (an object slot taken or freed, a link set or cut, an
    /// arena released; see `bulwark_core::reclaim::ReclaimWork`). Turns group quotas into
    /// units, allocations into their creator's time and terminations into kernel time.
    pub reclaim_per_unit: u64,
    /// Each step of component IPC (the component paper's Table 2).
    pub ipc: IpcCosts,
}

/// The cycles a call through a CPI and its reply take: one row of the component paper's
/// Table 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallReplyCycles {
    /// The call: from the requester's send to the server thread running the request.
    pub call: u64,
    /// The reply: from the server thread's reply to the requester running again.
    pub reply: u64,
}

impl CallReplyCycles {
    /// A row of `call` and `reply` cycles.
    pub const fn new(call: u64, reply: u64) -> Self {
        CallReplyCycles { call, reply }
    }
}

/// Component IPC costs, by the rows of the component paper's Table 2, in cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IpcCosts {
    /// "Call / Reply, propagated".
    pub propagated: CallReplyCycles,
    /// "Call / Reply, fixed" (IPCP and NPCS).
    pub fixed: CallReplyCycles,
    /// "Call / Reply, inherited, unlocked".
    pub inherited_unlocked: CallReplyCycles,
    /// "Call / Reply, inherited, locked".
    pub inherited_locked: CallReplyCycles,
    /// "Call / Reply, PIP to PIP": a nested request from an inherited CPI to another.
    pub pip_to_pip: CallReplyCycles,
    /// "Call / Reply, PIP to propagated".
    pub pip_to_propagated: CallReplyCycles,
    /// "Nest, PIP to PIP": one `nest` hop reaching an inherited CPI.
    pub nest_to_inherited: u64,
    /// "Nest, PIP to propagated": one `nest` hop reaching a propagated CPI.
    pub nest_to_propagated: u64,
}

impl IpcCosts {
    /// Free IPC.
    pub const ZERO: IpcCosts = IpcCosts {
        propagated: CallReplyCycles::new(0, 0),
        fixed: CallReplyCycles::new(0, 0),
        inherited_unlocked: CallReplyCycles::new(0, 0),
        inherited_locked: CallReplyCycles::new(0, 0),
        pip_to_pip: CallReplyCycles::new(0, 0),
        pip_to_propagated: CallReplyCycles::new(0, 0),
        nest_to_inherited: 0,
        nest_to_propagated: 0,
    };

    /// The maxima of Table 2, measured on the paper's Intel Xeon Gold 6130 at 2.1 GHz.
    pub const XEON_GOLD_6130_MAX: IpcCosts = IpcCosts {
        propagated: CallReplyCycles::new(6830, 3960),
        fixed: CallReplyCycles::new(4810, 3342),
        inherited_unlocked: CallReplyCycles::new(6834, 4028),
        inherited_locked: CallReplyCycles::new(6282, 3788),
        pip_to_pip: CallReplyCycles::new(6878, 6300),
        pip_to_propagated: CallReplyCycles::new(6306, 5318),
        nest_to_inherited: 6720,
        nest_to_propagated: 7530,
    };
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel::FREE
    }
}

impl CostModel {
    /// A 1 GHz clock (one cycle is one nanosecond) and no cost at all: what a file without
    /// `[cost]` gets.
    pub const FREE: CostModel = CostModel {
        clock_hz: 1_000_000_000,
        timer_interrupt: 0,
        scheduler: 0,
        per_work_unit: 0,
        context_switch: 0,
        cache_refill: 0,
        cache_flush: 0,
        reclaim_per_unit: 0,
        ipc: IpcCosts::ZERO,
    };

    /// The component paper's platform: its Intel Xeon Gold 6130's clock (2.1 GHz) and the
    /// maxima of its Table 2; every other cost zero, as the paper's simulation has them.
    pub const XEON_GOLD_6130_MAX: CostModel = CostModel {
        clock_hz: 2_100_000_000,
        ipc: IpcCosts::XEON_GOLD_6130_MAX,
        ..CostModel::FREE
    };

    /// The most time an `allocate` of `count` objects takes its task: every object created
    /// (refused ones cost nothing), each `ReclaimWork::OBJECT_CREATED`'s units at
    /// `reclaim_per_unit` cycles. `None` past `u64` cycles.
    pub fn allocation_time(&self, count: u64) -> Option<Duration> {
        let units = bulwark_core::reclaim::ReclaimWork::OBJECT_CREATED.units();
        let cycles = count
            .checked_mul(units)?
            .checked_mul(self.reclaim_per_unit)?;
        Some(self.time_of(cycles))
    }

    /// The time `cycles` take at this clock, rounded up to whole nanoseconds.
    pub fn time_of(&self, cycles: u64) -> Duration {
        if cycles == 0 {
            return Duration::ZERO;
        }
        let hz = self.clock_hz.max(1) as u128;
        let nanos = (cycles as u128 * 1_000_000_000).div_ceil(hz);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
}

/// One task: where it runs, how it is scheduled and what it does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskSpec {
    /// Unique name.
    pub name: String,
    /// The core it is partitioned onto (`< Scenario::cores`).
    pub core: u16,
    /// Its fixed priority: `Some` exactly when the policy has priorities.
    pub priority: Option<Priority>,
    /// Its reservation: `Some` exactly when the policy has reservations.
    pub reservation: Option<Reservation>,
    /// Relative deadline of each job. Periodic tasks default to their period, sporadic tasks
    /// to their minimum inter-arrival time; scripts have none unless given (and EDF requires
    /// one).
    pub deadline: Option<Duration>,
    /// What the task does.
    pub behaviour: Behaviour,
}

impl TaskSpec {
    /// Its jobs' relative deadline: its own, else its period (or minimum inter-arrival time),
    /// as validation fills it in; a script has none unless given. Scenarios built in code may
    /// leave `deadline` empty for a periodic task, so the default is read here too.
    pub fn relative_deadline(&self) -> Option<Duration> {
        let spacing = self.behaviour.spacing_and_execution();
        self.deadline.or(spacing.map(|(spacing, _)| spacing))
    }
}

/// What a task does over time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// A job every `period`, the first at `offset`.
    Periodic {
        /// Time between releases.
        period: Duration,
        /// First release.
        offset: Duration,
        /// Each job's execution time.
        execution: Execution,
    },
    /// Jobs at least `min_interarrival` apart, plus a seeded uniform extra delay in
    /// `0..=jitter`; the first at `offset`.
    Sporadic {
        /// Minimum time between releases.
        min_interarrival: Duration,
        /// Largest extra delay added to each inter-arrival time.
        jitter: Duration,
        /// First release.
        offset: Duration,
        /// Each job's execution time.
        execution: Execution,
    },
    /// A script of steps, started at `offset`. Every timed sleep ends a job; the wake-up
    /// releases the next one. When the script ends, the task exits.
    Script {
        /// When the script starts (its first job's release).
        offset: Duration,
        /// The steps, run in order.
        steps: Vec<Step>,
    },
}

impl Behaviour {
    /// `(T, C)` of a periodic or sporadic task: the least time between releases (a sporadic
    /// task's extra delay only spaces them further apart) and the worst-case execution of a
    /// job; `None` for a script, which has neither.
    pub fn spacing_and_execution(&self) -> Option<(Duration, Duration)> {
        match self {
            Behaviour::Periodic {
                period, execution, ..
            } => Some((*period, execution.worst_case())),
            Behaviour::Sporadic {
                min_interarrival,
                execution,
                ..
            } => Some((*min_interarrival, execution.worst_case())),
            Behaviour::Script { .. } => None,
        }
    }
}

/// A job's execution time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Execution {
    /// Always this long.
    Fixed(Duration),
    /// Drawn uniformly from `min..=max` (nanosecond granularity) with the scenario's seed.
    Uniform {
        /// Shortest.
        min: Duration,
        /// Longest (`>= min`).
        max: Duration,
    },
}

impl Execution {
    /// Always `length`.
    pub const fn exact(length: Duration) -> Execution {
        Execution::Fixed(length)
    }

    /// Uniform in `min..=max`; `Fixed` when the two are equal, so that nothing is drawn.
    pub const fn between(min: Duration, max: Duration) -> Execution {
        if min.as_nanos() == max.as_nanos() {
            Execution::Fixed(min)
        } else {
            Execution::Uniform { min, max }
        }
    }

    /// The shortest execution time this can produce.
    pub fn best_case(&self) -> Duration {
        match *self {
            Execution::Fixed(d) => d,
            Execution::Uniform { min, .. } => min,
        }
    }

    /// The longest execution time this can produce.
    pub fn worst_case(&self) -> Duration {
        match *self {
            Execution::Fixed(d) => d,
            Execution::Uniform { max, .. } => max,
        }
    }
}

/// One step of a script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Execute for this long (`{ run = "2ms" }`), or for a time drawn uniformly from `[min,
    /// max]` (`{ run = ["1ms", "1500us"] }`, `0 < min <= max`) with the task's seeded stream,
    /// as an invocation's `operation` is drawn; a fixed time draws nothing.
    Run(Execution),
    /// Execute `count` units of useful work of `each` long, counting the units finished
    /// (`{ compute = 50, each = "100us" }`).
    Compute {
        /// Units of work.
        count: u64,
        /// Execution time of one unit (non-zero).
        each: Duration,
    },
    /// Sleep for this long from the moment of the call (`{ sleep-for = "1ms" }`).
    SleepFor(Duration),
    /// Sleep until this absolute time (`{ sleep-until = "25ms" }`); a time already past
    /// returns at once.
    SleepUntil(Instant),
    /// Sleep until the next multiple of this period strictly after now, so that many tasks
    /// wake at the same instants (`{ sleep-until-aligned = "1ms" }`).
    SleepUntilAligned(Duration),
    /// End the job; the next is released this period after the job's planned release, and
    /// if that has passed it is due at once, its release still the plan
    /// (`{ sleep-until-next-release = "20ms" }`): a periodic task's releases
    /// `offset + j * period`, none queued behind a job that overruns. A job opened by another
    /// sleep is planned at its release.
    SleepUntilNextRelease(Duration),
    /// Evict the cache of the task's core (`{ flush-cache = true }`): every other task on the
    /// core pays the cost model's `cache_flush` refill the next time it runs. Takes no time.
    FlushCache,
    /// Create `count` kernel objects of one kind in the task's process
    /// (`{ allocate = 1000, object = "semaphore" }`). In a reclamation group each is charged
    /// to the quota, and those that do not fit are refused. The task spends the work as its
    /// own execution (`reclaim-per-unit` cycles per unit).
    Allocate {
        /// How many.
        count: u64,
        /// Of which kind.
        object: ObjectKind,
    },
    /// Terminate another task's process (`{ terminate = "rogue" }`): the whole reclamation
    /// group when it has one, else its process and what it holds, one object at a time (the
    /// baseline). The reclamation runs as kernel time on the caller's core, with interrupts
    /// masked; with `step` (groups only), in steps of at most that much kernel time, so the
    /// scheduler runs between them.
    Terminate {
        /// The task to terminate (validated: another task on the same core).
        task: String,
        /// Preemptible reclamation: the most kernel time per step.
        step: Option<Duration>,
    },
    /// A VBS action (`{ action = "5ms", limit = "2ms", period = "4ms" }`): the process marks
    /// a switch to `load` of work on the virtual periodic resource `(limit, period)`, then
    /// executes it. The scheduler is not told the load (the paper's marked switches).
    Action {
        /// The work `l`.
        load: Duration,
        /// `lambda`: processor time per period.
        limit: Duration,
        /// `pi`: the resource's period.
        period: Duration,
    },
    /// Call the server with this index in `Scenario::servers` and wait for its reply
    /// (`{ invoke = "log" }`): the task's scheduling context runs the server's operation, or,
    /// for a server whose body is one run, the `operation` the call asks for
    /// (`{ invoke = "log", operation = "1ms" }`).
    Invoke {
        /// The server, an index into `Scenario::servers`.
        server: usize,
        /// The operation asked for, instead of the server's one run.
        operation: Option<Execution>,
    },
    /// Request the CPI with this index in `Scenario::cpis` and wait for its reply (the
    /// component paper's Figs. 4 and 5): a thread of its pool runs the procedure.
    Call(usize),
    /// Repeat `body` `count` times, or forever when `count` is `None`
    /// (`{ loop = 3, body = [...] }`, `{ loop = "forever", body = [...] }`).
    Loop {
        /// Repetitions, `None` for ever.
        count: Option<u64>,
        /// The repeated steps (non-empty).
        body: Vec<Step>,
    },
}

/// Calls `found` with the operation each `invoke` of `server` in `steps` asks for (`None`:
/// the server's own), loops' bodies included.
pub fn visit_invocations(
    steps: &[Step],
    server: usize,
    found: &mut impl FnMut(Option<&Execution>),
) {
    for step in steps {
        match step {
            Step::Invoke {
                server: called,
                operation,
            } if *called == server => found(operation.as_ref()),
            Step::Loop { body, .. } => visit_invocations(body, server, found),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MC-IPC `[min, max]` with equal ends is a fixed time, so nothing is drawn for it
    /// (the seeded draws of every other step stay where they were); distinct ends are uniform.
    #[test]
    fn between_is_fixed_when_its_ends_meet() {
        let ms = Duration::from_millis;
        assert_eq!(Execution::between(ms(2), ms(2)), Execution::Fixed(ms(2)));
        assert_eq!(Execution::exact(ms(2)), Execution::Fixed(ms(2)));
        let uniform = Execution::between(ms(1), ms(3));
        assert_eq!(
            uniform,
            Execution::Uniform {
                min: ms(1),
                max: ms(3)
            }
        );
        assert_eq!((uniform.best_case(), uniform.worst_case()), (ms(1), ms(3)));
    }
}
