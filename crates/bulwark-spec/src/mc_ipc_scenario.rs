//! An MC-IPC system file's phase as a [`Scenario`]: the one model the scenario machine
//! (`bulwark_sim::run`) runs, with `[[cluster]]`s of members and passive servers.
//!
//! The mapping is what an MC-IPC file means, in the scenario's terms:
//! - file cluster `k` is [`ClusterSpec`] `k`, over the scenario cores that follow cluster
//!   `k - 1`'s (cluster 0 on cores `0..m_0`); every member task's `core` is its cluster's first;
//! - a table-driven reservation is a [`MemberKind::Partition`] on the lowest core of its
//!   cluster where its slots overlap none placed there before (in file order of the
//!   reservations), else the cluster's first core;
//! - a sporadic reservation is a [`MemberKind::Sporadic`] whose `(e, p)` is its task's
//!   `reservation` (an SPR server's `S` its queue too), replenished as the file says, of low
//!   criticality (`low_budget: None`) even when the file says high: a file reservation is
//!   monitored against the budget it is given, so it never switches its cluster's mode; one a
//!   phase adds at high criticality has `low_budget: Some(budget)`;
//! - a cluster is ordered by EDF when its sporadic reservations (the file's, taskless ones
//!   included, and the phase's) all share one priority and none is an SPR server, else by
//!   fixed priority; its `cycle` is the file's when one of its members is a partition, else
//!   zero (as a scenario file must have it; the clustered scheduler reads the cycle only for
//!   partitions); it reclaims slack, as every MC-IPC cluster does (a core whose selected
//!   reservation runs nothing runs the most urgent ready member that has budget but is not
//!   selected, or a best-effort one);
//! - the first task of a reservation owns it; later ones (and copies added into it with
//!   `reservation = "R4"`) are [`MemberKind::Shared`] on that owner;
//! - a task's `priority` and `reservation` are what a scenario file's validation gives the
//!   member, but for one thing: a sporadic owner has its reservation, and its priority under
//!   fixed-priority order; a best-effort or sharing member has neither; a partition has no
//!   reservation and has the file's priority under either order. A scenario file gives a
//!   member no priority under `order = "edf"`, but the clustered scheduler ranks partitions
//!   among themselves by their priorities at a gate (`ClusteredScheduler::urgency`), under
//!   either order, and an MC-IPC file gives them its own: with none, the case study's four
//!   partitions (priorities 1 to 4, in EDF-ordered clusters) would rank by their index in
//!   their cluster instead, and a prio-ipc gate would serve them in another order. So a
//!   lowered system with a partition in an EDF-ordered cluster is a scenario no file can
//!   write (the scenario machine runs it: it reads a partition's priority whatever the order);
//! - a task's script runs cyclically: a `loop = "forever"`
//!   around its steps, `"sleep"` being `sleep-until-next-release` of its period (the next job
//!   planned a period after this one's plan, due at once if that has passed, its release
//!   still the plan); a script that ends
//!   without a sleep wraps into the same job;
//! - a flooding task runs `flood-gap`, then its script's first invocation, for ever;
//! - a phase's additions follow the file's tasks, in file order, each on its clusters in the
//!   order listed: copy `k` (from 0) of an addition is first released at `offset + k *
//!   stagger` and is named `+<cluster>.<n>`, `n` counting from 0 the copies the phase adds on
//!   that cluster over all its additions (`+C1.0`, `+C1.1`, ...); each gets a new sporadic
//!   reservation, or all of an addition's copies on a cluster share one new best-effort
//!   reservation (the first copy's, [`MemberKind::BestEffort`]), or they join an existing
//!   reservation;
//! - every server is a [`ServerSpec`] behind the one gate asked for, inheriting bandwidth,
//!   whose one run is `L^H_q` (each call asks for its drawn operation length), its clients the
//!   tasks whose scripts invoke it; pruned requests go to an mc-ipc gate's background queue
//!   when asked (the other gates have none);
//! - groups and the cost table are the file's (copies are in no group).
//!
//! What a scenario cannot say, and a file can: a reservation no task runs in (it is left
//! out: a taskless partition does not hold its core in its slots, though later partitions
//! are still placed around them, and a taskless
//! sporadic reservation still counts in its cluster's order).

use bulwark_core::reservation::clustered::{Replenishment as ClusterReplenishment, SporadicOrder};
use bulwark_core::{Duration, Priority};

use crate::mc_ipc_toml::{
    AddedReservation, Criticality, GateProtocol, McIpcSystem, Replenishment as FileReplenishment,
    ReservationKind, ScriptStep, Slot, Task, TaskTemplate,
};
use crate::model::{
    visit_invocations, Behaviour, ClusterMember, ClusterSpec, Execution, MemberKind, PolicyKind,
    Reservation, Scenario, ServerSpec, ServerStep, Step, TaskSpec,
};

/// A reservation of a cluster as the lowering builds it.
#[derive(Clone, Debug)]
struct Placed {
    /// The member kind its owner gets.
    kind: MemberKind,
    /// `(e, p)` of a sporadic one (its owner's `reservation`), with its queue capacity.
    reservation: Option<Reservation>,
    /// Its priority: the file's.
    priority: Priority,
    /// Its owner, a scenario task index, once a task runs in it.
    owner: Option<usize>,
}

/// The core's replenishment rule of a file's, and the queue capacity of its reservation.
fn replenishment(rule: FileReplenishment) -> (ClusterReplenishment, u16) {
    match rule {
        FileReplenishment::Sporadic => (
            ClusterReplenishment::Sporadic,
            Reservation::DEFAULT_REPLENISHMENTS,
        ),
        FileReplenishment::ConstantBandwidth => (
            ClusterReplenishment::ConstantBandwidth,
            Reservation::DEFAULT_REPLENISHMENTS,
        ),
        FileReplenishment::Spr { replenishments } => (
            ClusterReplenishment::Spr {
                slots: replenishments,
            },
            replenishments,
        ),
    }
}

/// A sporadic reservation `(budget, period)` replenished by `rule`, with `low_budget`.
fn sporadic(
    budget: Duration,
    period: Duration,
    priority: Priority,
    rule: FileReplenishment,
    low_budget: Option<Duration>,
) -> Placed {
    let (replenishment, queue) = replenishment(rule);
    Placed {
        kind: MemberKind::Sporadic {
            replenishment,
            low_budget,
        },
        reservation: Some(Reservation::new(budget, period).with_replenishments(queue)),
        priority,
        owner: None,
    }
}

/// A cluster's order from its reservations (taskless ones included): EDF
/// when the sporadic ones all share one priority, fixed priority otherwise, and whenever one
/// is an SPR server.
fn order_of(reservations: &[Placed]) -> SporadicOrder {
    let sporadic: Vec<(Priority, bool)> = (reservations.iter())
        .filter_map(|r| match r.kind {
            MemberKind::Sporadic { replenishment, .. } => Some((
                r.priority,
                matches!(replenishment, ClusterReplenishment::Spr { .. }),
            )),
            _ => None,
        })
        .collect();
    if sporadic.iter().any(|(_, spr)| *spr) {
        return SporadicOrder::FixedPriority;
    }
    match sporadic.first() {
        Some((first, _)) if sporadic.iter().any(|(p, _)| p != first) => {
            SporadicOrder::FixedPriority
        }
        _ => SporadicOrder::EarliestDeadlineFirst,
    }
}

/// One MC-IPC step as a scenario step: `"sleep"` plans the next job a `period` later.
fn step(system: &McIpcSystem, script: &ScriptStep, period: Duration) -> Step {
    match *script {
        ScriptStep::Compute(time) => Step::Run(time),
        ScriptStep::Invoke { server, length } => Step::Invoke {
            server,
            operation: Some(length),
        },
        ScriptStep::SleepUntilNextPeriod => Step::SleepUntilNextRelease(period),
        ScriptStep::Allocate { count, object } => Step::Allocate { count, object },
        ScriptStep::Terminate { task } => Step::Terminate {
            task: system.tasks[task].name.clone(),
            step: None,
        },
    }
}

/// A script run cyclically, one job per pass.
fn cyclic(system: &McIpcSystem, script: &[ScriptStep], period: Duration) -> Vec<Step> {
    vec![Step::Loop {
        count: None,
        body: script.iter().map(|s| step(system, s, period)).collect(),
    }]
}

/// A flood: `gap` of computation, then the script's first invocation, for
/// ever; `None` for a script without one (it then runs as written).
fn flood(system: &McIpcSystem, task: &Task) -> Option<Vec<Step>> {
    let invoke = (task.script.iter()).find(|s| matches!(s, ScriptStep::Invoke { .. }))?;
    Some(vec![Step::Loop {
        count: None,
        body: vec![
            Step::Run(Execution::Fixed(system.flood_gap)),
            step(system, invoke, task.period),
        ],
    }])
}

/// A task being lowered, before its priority and reservation are known (they depend on its
/// cluster's order, known once the phase's reservations are).
struct Lowered {
    name: String,
    cluster: usize,
    /// Its reservation, an index into its cluster's.
    reservation: usize,
    offset: Duration,
    steps: Vec<Step>,
}

impl McIpcSystem {
    /// Phase `phase` (None: the system without any phase's changes) as a scenario of `duration`,
    /// every server behind `gate`, pruned requests to the background queue when `pruned_to_background`.
    ///
    /// See the module documentation for the mapping and what a scenario cannot say; `phase`
    /// out of range is the system without any phase's changes. The file's tasks keep their
    /// indices; a phase's copies follow them.
    pub fn scenario(
        &self,
        phase: Option<usize>,
        gate: GateProtocol,
        pruned_to_background: bool,
        seed: u64,
        duration: Duration,
    ) -> Scenario {
        let phase = phase.and_then(|p| self.phases.get(p));
        // Each cluster's cores, following the previous cluster's.
        let mut next_core = 0u16;
        let cores: Vec<Vec<u16>> = self
            .clusters
            .iter()
            .map(|c| {
                let count = u16::try_from(c.cores).unwrap_or(u16::MAX);
                let own = (next_core..next_core.saturating_add(count)).collect();
                next_core = next_core.saturating_add(count);
                own
            })
            .collect();

        // The file's reservations, per cluster, in file order; each partition on the lowest
        // core where its slots overlap none placed there before.
        let mut reservations: Vec<Vec<Placed>> = vec![Vec::new(); self.clusters.len()];
        let mut core_slots: Vec<Vec<Vec<Slot>>> = self
            .clusters
            .iter()
            .map(|c| vec![Vec::new(); c.cores as usize])
            .collect();
        // Where each file reservation is: (cluster, index among its cluster's).
        let mut placed = Vec::with_capacity(self.reservations.len());
        for r in &self.reservations {
            let reservation = match &r.kind {
                ReservationKind::TableDriven { slots } => {
                    let on_cores = &mut core_slots[r.cluster];
                    let free = |taken: &Vec<Slot>| {
                        slots
                            .iter()
                            .all(|slot| taken.iter().all(|other| !slot.overlaps(*other)))
                    };
                    let core = on_cores.iter().position(free).unwrap_or(0);
                    if let Some(taken) = on_cores.get_mut(core) {
                        taken.extend(slots.iter().copied());
                    }
                    let mut sorted: Vec<(Duration, Duration)> =
                        slots.iter().map(|s| (s.start, s.end)).collect();
                    sorted.sort();
                    Placed {
                        kind: MemberKind::Partition {
                            core: cores[r.cluster][core],
                            slots: sorted,
                        },
                        reservation: None,
                        priority: r.priority,
                        owner: None,
                    }
                }
                ReservationKind::Sporadic {
                    budget,
                    period,
                    replenishment,
                } => sporadic(*budget, *period, r.priority, *replenishment, None),
            };
            placed.push((r.cluster, reservations[r.cluster].len()));
            reservations[r.cluster].push(reservation);
        }

        let mut tasks: Vec<Lowered> = self
            .tasks
            .iter()
            .map(|t| {
                let (cluster, reservation) = placed[t.reservation];
                Lowered {
                    name: t.name.clone(),
                    cluster,
                    reservation,
                    offset: t.offset,
                    steps: cyclic(self, &t.script, t.period),
                }
            })
            .collect();

        if let Some(phase) = phase {
            for &task in &phase.floods {
                if let Some(steps) = flood(self, &self.tasks[task]) {
                    tasks[task].steps = steps;
                }
            }
            let mut copies_on = vec![0usize; self.clusters.len()];
            // The best-effort reservation an addition's copies share on the cluster.
            let mut shared = None;
            for (index, cluster, copy) in phase.copies() {
                let addition = &phase.additions[index];
                if copy == 0 {
                    shared = None;
                }
                let reservation = match addition.reservation {
                    AddedReservation::Existing(r) => placed[r].1,
                    AddedReservation::Sporadic {
                        criticality,
                        priority,
                        budget,
                        period,
                        replenishment,
                    } => {
                        let low = (criticality == Criticality::High).then_some(budget);
                        reservations[cluster].push(sporadic(
                            budget,
                            period,
                            priority,
                            replenishment,
                            low,
                        ));
                        reservations[cluster].len() - 1
                    }
                    AddedReservation::BestEffort => *shared.get_or_insert_with(|| {
                        reservations[cluster].push(Placed {
                            kind: MemberKind::BestEffort,
                            reservation: None,
                            priority: Priority(0),
                            owner: None,
                        });
                        reservations[cluster].len() - 1
                    }),
                };
                let name = format!("+{}.{}", self.clusters[cluster].name, copies_on[cluster]);
                copies_on[cluster] += 1;
                tasks.push(copy_of(
                    self,
                    &addition.task,
                    name,
                    cluster,
                    reservation,
                    copy,
                ));
            }
        }

        let orders: Vec<SporadicOrder> = reservations.iter().map(|r| order_of(r)).collect();
        let mut members: Vec<Vec<ClusterMember>> = vec![Vec::new(); self.clusters.len()];
        let mut specs = Vec::with_capacity(tasks.len());
        for (index, task) in tasks.into_iter().enumerate() {
            let r = &mut reservations[task.cluster][task.reservation];
            let fixed_priority = orders[task.cluster] == SporadicOrder::FixedPriority;
            let (kind, priority, reservation) = match r.owner {
                Some(owner) => (MemberKind::Shared { owner }, None, None),
                None => {
                    r.owner = Some(index);
                    let priority = match r.kind {
                        MemberKind::Sporadic { .. } => fixed_priority.then_some(r.priority),
                        // Under either order: partitions rank among themselves by it.
                        MemberKind::Partition { .. } => Some(r.priority),
                        MemberKind::BestEffort | MemberKind::Shared { .. } => None,
                    };
                    (r.kind.clone(), priority, r.reservation)
                }
            };
            members[task.cluster].push(ClusterMember { task: index, kind });
            specs.push(TaskSpec {
                name: task.name,
                core: cores[task.cluster].first().copied().unwrap_or(0),
                priority,
                reservation,
                deadline: None,
                behaviour: Behaviour::Script {
                    offset: task.offset,
                    steps: task.steps,
                },
            });
        }

        let cycle = self.cycle.unwrap_or(Duration::ZERO);
        let clusters = self
            .clusters
            .iter()
            .zip(members)
            .zip(cores)
            .zip(&orders)
            .map(|(((c, members), cores), order)| {
                let partitioned = members
                    .iter()
                    .any(|m| matches!(m.kind, MemberKind::Partition { .. }));
                ClusterSpec {
                    name: c.name.clone(),
                    cores,
                    order: *order,
                    cycle: if partitioned { cycle } else { Duration::ZERO },
                    // An MC-IPC cluster always reclaims slack.
                    slack_reclamation: true,
                    members,
                }
            })
            .collect();

        let servers = self
            .servers
            .iter()
            .enumerate()
            .map(|(q, s)| ServerSpec {
                name: s.name.clone(),
                gate,
                body: vec![ServerStep::Run(Execution::Fixed(s.operation_length.high))],
                bandwidth_inheritance: true,
                priority: None,
                pruned_to_background: pruned_to_background && gate == GateProtocol::McIpc,
                clients: specs
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| invokes(&t.behaviour, q))
                    .map(|(i, _)| i)
                    .collect(),
            })
            .collect();

        let (name, description) = match phase {
            Some(p) => (
                p.name.clone(),
                format!(
                    "An MC-IPC system's phase `{}`, servers behind {}",
                    p.name,
                    gate.name()
                ),
            ),
            None => (
                "system".to_owned(),
                format!(
                    "An MC-IPC system without any phase's changes, servers behind {}",
                    gate.name()
                ),
            ),
        };
        Scenario {
            name,
            description,
            seed,
            duration,
            cores: next_core,
            policy: PolicyKind::FixedPriority,
            core_policies: Vec::new(),
            cost: self.cost,
            tasks: specs,
            // The file's tasks keep their indices, so the members do too.
            groups: self.groups.clone(),
            servers,
            vbs: None,
            clusters,
            cpis: Vec::new(),
            components: Vec::new(),
        }
    }
}

/// Copy `copy` of `template`, called `name`, in `reservation` of `cluster`.
fn copy_of(
    system: &McIpcSystem,
    template: &TaskTemplate,
    name: String,
    cluster: usize,
    reservation: usize,
    copy: u32,
) -> Lowered {
    Lowered {
        name,
        cluster,
        reservation,
        offset: template
            .offset
            .saturating_add(template.stagger.saturating_mul(u64::from(copy))),
        steps: cyclic(system, &template.script, template.period),
    }
}

/// True when `behaviour`'s script invokes server `server` somewhere.
fn invokes(behaviour: &Behaviour, server: usize) -> bool {
    let mut found = false;
    if let Behaviour::Script { steps, .. } = behaviour {
        visit_invocations(steps, server, &mut |_| found = true);
    }
    found
}
