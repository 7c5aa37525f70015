//! From an MC-IPC system file's model to the cluster machine: clusters, reservations, servers
//! and the tasks of one phase, as [`Config::from_system`] builds them (the analysis,
//! `bulwark_analysis::mc_ipc`, reads the same model as it is).
//!
//! A file (`bulwark_spec::mc_ipc_toml`) describes the system and its phases; the cluster
//! machine (`bulwark_sim::cluster`) runs one phase of it under one IPC protocol. The mapping:
//! - each `[[cluster]]` is a cluster; a partition's slots go to the lowest-numbered core
//!   where they overlap no slot already there (one core per cluster: core 0);
//! - sporadic reservations of one cluster that all share one priority are EDF-ordered (the
//!   paper's "EDF-ordered" low-criticality reservations); otherwise they keep their fixed
//!   priorities. A high-criticality sporadic reservation is monitored against the budget it
//!   is given, so it never switches its cluster's mode here. One declared `replenishment =
//!   "cbs"` is a constant-bandwidth server;
//! - tasks keep their reclamation groups, and the file's `[cost]` prices reclamation work
//!   and context switches; `allocate` and `terminate` steps are the machine's own;
//! - a phase's additions append, on each of their clusters, `count` new sporadic
//!   reservations (one per task), one best-effort reservation shared by the copies, or tasks
//!   in an existing reservation; copy `k` is first released at `offset + k * stagger`;
//! - a flooding task invokes its first invocation's server back to back, computing the
//!   file's `flood-gap` between two invocations, and never sleeps.

use super::{
    Config, Execution, GateKind, GroupConfig, PrunedRequests, ScriptStep, ServerConfig, TaskConfig,
};
use bulwark_core::reservation::clustered::{
    ClusterConfig, Replenishment as MachineReplenishment, ReservationId,
    ReservationKind as MachineReservation, Slot, Sporadic, SporadicOrder,
};
use bulwark_core::{Duration, Priority};
use bulwark_spec::mc_ipc_toml::{
    AddedReservation, Criticality, McIpcSystem, Replenishment, ReservationKind, TaskTemplate,
};

/// The machine's reservation for a file's sporadic one, replenished as the file says.
fn budgeted(
    budget: Duration,
    period: Duration,
    priority: Priority,
    replenishment: Replenishment,
) -> Sporadic {
    let sporadic = Sporadic::new(budget, period).with_priority(priority);
    match replenishment {
        Replenishment::Sporadic => sporadic,
        Replenishment::ConstantBandwidth => sporadic.with_constant_bandwidth(),
        Replenishment::Spr { replenishments } => sporadic.with_spr(replenishments),
    }
}

/// A flooding version of `steps`: `gap` of computation, then the first invocation, forever.
fn flood(steps: &[ScriptStep], gap: Duration) -> Option<Vec<ScriptStep>> {
    let invoke = steps
        .iter()
        .find(|step| matches!(step, ScriptStep::Invoke { .. }))?;
    Some(vec![ScriptStep::Compute(Execution::exact(gap)), *invoke])
}

/// Where each file reservation goes on the machine, in file order: (cluster, index among
/// that cluster's reservations). A cluster's reservations keep the file's order, so a
/// reservation's index counts the file's earlier ones on its cluster.
pub fn placements(system: &McIpcSystem) -> Vec<(usize, usize)> {
    let mut per_cluster = vec![0usize; system.clusters.len()];
    system
        .reservations
        .iter()
        .map(|r| {
            let index = per_cluster[r.cluster];
            per_cluster[r.cluster] += 1;
            (r.cluster, index)
        })
        .collect()
}

impl Config {
    /// The cluster machine's configuration of `system`'s phase `phase` (0-based index into
    /// `system.phases`; `None` for the system without any phase's changes), its servers
    /// behind `gate`, pruned requests handled as `pruned`, its draws from `seed`.
    pub fn from_system(
        system: &McIpcSystem,
        phase: Option<usize>,
        gate: GateKind,
        pruned: PrunedRequests,
        seed: u64,
    ) -> Config {
        let cycle = system.cycle.unwrap_or(Duration::ZERO);
        let mut clusters: Vec<Vec<MachineReservation>> = vec![Vec::new(); system.clusters.len()];
        let placed = placements(system);
        let mut core_slots: Vec<Vec<Vec<Slot>>> = system
            .clusters
            .iter()
            .map(|c| vec![Vec::new(); c.cores as usize])
            .collect();
        for r in &system.reservations {
            let kind = match &r.kind {
                ReservationKind::TableDriven { slots } => {
                    let cores = &mut core_slots[r.cluster];
                    let free = |taken: &Vec<Slot>| {
                        slots
                            .iter()
                            .all(|slot| taken.iter().all(|other| !slot.overlaps(*other)))
                    };
                    let core = cores.iter().position(free).unwrap_or(0);
                    if let Some(taken) = cores.get_mut(core) {
                        taken.extend(slots.iter().copied());
                    }
                    MachineReservation::TimePartition {
                        core,
                        priority: r.priority,
                        slots: slots.clone(),
                    }
                }
                ReservationKind::Sporadic {
                    budget,
                    period,
                    replenishment,
                } => MachineReservation::Sporadic(budgeted(
                    *budget,
                    *period,
                    r.priority,
                    *replenishment,
                )),
            };
            clusters[r.cluster].push(kind);
        }

        let groups = system.groups_of_tasks();
        let mut tasks: Vec<TaskConfig> = system
            .tasks
            .iter()
            .zip(groups)
            .map(|(t, group)| {
                let (cluster, index) = placed[t.reservation];
                TaskConfig {
                    cluster,
                    reservation: ReservationId(index as u32),
                    offset: t.offset,
                    period: t.period,
                    script: t.script.clone(),
                    group,
                }
            })
            .collect();

        if let Some(phase) = phase.and_then(|p| system.phases.get(p)) {
            for &task in &phase.floods {
                if let Some(steps) = flood(&system.tasks[task].script, system.flood_gap) {
                    tasks[task].script = steps;
                }
            }
            for addition in &phase.additions {
                for &cluster in &addition.clusters {
                    let mut shared = None;
                    for copy in 0..addition.count {
                        let reservation = match addition.reservation {
                            AddedReservation::Existing(r) => placed[r].1,
                            AddedReservation::Sporadic {
                                criticality,
                                priority,
                                budget,
                                period,
                                replenishment,
                            } => {
                                let mut sporadic =
                                    budgeted(budget, period, priority, replenishment);
                                if criticality == Criticality::High {
                                    sporadic = sporadic.with_high_criticality(budget);
                                }
                                clusters[cluster].push(MachineReservation::Sporadic(sporadic));
                                clusters[cluster].len() - 1
                            }
                            AddedReservation::BestEffort => *shared.get_or_insert_with(|| {
                                clusters[cluster].push(MachineReservation::BestEffort);
                                clusters[cluster].len() - 1
                            }),
                        };
                        tasks.push(copy_of(&addition.task, cluster, reservation, copy));
                    }
                }
            }
        }

        Config {
            clusters: clusters
                .into_iter()
                .zip(&system.clusters)
                .map(|(reservations, c)| ClusterConfig {
                    cores: c.cores as usize,
                    cycle,
                    order: order_of(&reservations),
                    reservations,
                })
                .collect(),
            servers: system
                .servers
                .iter()
                .map(|s| ServerConfig {
                    gate,
                    max_operation: s.operation_length.high,
                })
                .collect(),
            tasks,
            pruned,
            groups: system
                .groups
                .iter()
                .map(|g| GroupConfig { quota: g.quota })
                .collect(),
            cost: system.cost,
            seed,
        }
    }
}

/// Copy `copy` of a template, in `reservation` of `cluster`.
fn copy_of(template: &TaskTemplate, cluster: usize, reservation: usize, copy: u32) -> TaskConfig {
    TaskConfig {
        cluster,
        reservation: ReservationId(reservation as u32),
        offset: template
            .offset
            .saturating_add(template.stagger.saturating_mul(copy as u64)),
        period: template.period,
        script: template.script.clone(),
        group: None,
    }
}

/// EDF when the cluster's sporadic reservations all share one priority, else fixed
/// priorities; fixed priorities whenever one is an SPR server (a fixed-priority server).
fn order_of(reservations: &[MachineReservation]) -> SporadicOrder {
    let spr = reservations.iter().any(|r| {
        matches!(
            r,
            MachineReservation::Sporadic(s) if matches!(s.replenishment, MachineReplenishment::Spr { .. })
        )
    });
    if spr {
        return SporadicOrder::FixedPriority;
    }
    let mut priorities = reservations.iter().filter_map(|r| match r {
        MachineReservation::Sporadic(s) => Some(s.priority),
        _ => None,
    });
    let first: Option<Priority> = priorities.next();
    if priorities.all(|p| Some(p) == first) {
        SporadicOrder::EarliestDeadlineFirst
    } else {
        SporadicOrder::FixedPriority
    }
}
