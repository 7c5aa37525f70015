//! MC-IPC, FIFO-IPC and PRIO-IPC bounds in each phase of an MC-IPC system (MC-IPC paper,
//! section VI-C): the system's reservations meet the phase's floods and added tasks.
//!
//! Section VI-B's FIFO-IPC and PRIO-IPC bounds hold "only while every client behaves as
//! described"; a phase says how clients misbehave, so each bound can be worked out again for
//! it:
//!
//! - **MC-IPC** (Theorem 1): `(1 + 2 m_k K) L_q` depends on the clusters alone, so it is the
//!   system's own in every phase. `K` is the server's declared `K^X_q` (every cluster when
//!   not given), plus each cluster the phase invokes it from and the system's reservations
//!   do not (at most every cluster).
//! - **FIFO-IPC**: `n L_q`, where `n` counts every client that can have a request
//!   outstanding: each task a phase adds is one more, a best-effort one too. A flooding client
//!   is still one: its request is synchronous, and a new one queues behind the waiting ones.
//! - **PRIO-IPC**: `(h + 1 + b) L_q`, where each added task of higher or equal priority that
//!   can overlap adds its requests per job to `h`, and a lower-priority one (a best-effort task
//!   is below every reservation) makes `b` 1. A flooding client of higher or equal priority
//!   that can overlap comes first again after every other operation: one such flooder alone
//!   gives `(2h + 2b + 2) L_q` ([`prio_ipc_single_flooder_bound`](crate::mc_ipc::prio_ipc_single_flooder_bound): the server takes its next
//!   request at the instant it replies, before the flooder's next arrives); two or more can
//!   keep the server busy by turns, so the phase has **no** PRIO-IPC bound (`None`: the
//!   bound is gone, not reached). A flooder whose slots never overlap the client's still
//!   leaves one request outstanding when its slot ends, which the server takes before the
//!   client's: it adds 1 to `h` (found by the case study's run, where T3 drained 4.57 ms
//!   against 4 ms while T4 flooded from the other half of the cycle).
//!
//! The clients reported are the system's reservations and, apart, the new sporadic
//! reservations a phase adds (one entry per addition and cluster: its copies there are alike),
//! each copy a rival of every other client. A phase's tasks added into an existing reservation
//! share its budget: the budget that reservation needs in the phase is its own task's plus,
//! for each added copy, its jobs per replenishment period (the cycle, for a time partition)
//! times what one job needs, worked out as a client with the reservation's priority and
//! slots. Best-effort copies have no budget to size and are rivals only. A copy's execution
//! time is its script's computations at their longest. Indices a validated file cannot hold
//! out of range are skipped.

use bulwark_core::criticality::PerCriticality;
use bulwark_core::Duration;
use bulwark_core::Priority;
use bulwark_spec::mc_ipc_toml::{
    AddedReservation, Addition, Criticality, Invocation, McIpcSystem, Phase, Reservation,
    ReservationKind, ScriptStep,
};

use crate::mc_ipc::{
    cluster_of, fifo_ipc_invocation_bound, invocation_budget_bound, invocations_of,
    reservation_rivals, Contention, GateProtocol, McIpcError, Rival,
};

/// One client's per-invocation bounds on one server in a phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseServerBounds {
    /// The server's name.
    pub server: String,
    /// `N_iq`: the client's invocations per job.
    pub invocations: u64,
    /// Theorem 1's `(1 + 2 m_k K) L_q` at the client's level.
    pub mc_ipc: Duration,
    /// `n L_q` with the phase's clients.
    pub fifo_ipc: Duration,
    /// `(h + 1 + b) L_q` with the phase's clients, `(2h + 2b + 2) L_q` when one client
    /// that can precede floods; `None` when two or more do.
    pub prio_ipc: Option<Duration>,
}

impl PhaseServerBounds {
    /// The bound of `protocol`; `None` where it has none.
    pub fn of(&self, protocol: GateProtocol) -> Option<Duration> {
        match protocol {
            GateProtocol::McIpc => Some(self.mc_ipc),
            GateProtocol::FifoIpc => Some(self.fifo_ipc),
            GateProtocol::PrioIpc => self.prio_ipc,
        }
    }
}

/// One reservation's bounds in a phase, one entry per server it invokes, in server order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseClientBounds {
    /// The reservation's name.
    pub client: String,
    /// Its task's worst-case execution time at its own level (`e^L_i` or `e^H_i`).
    pub execution: Duration,
    /// Its bounds on each server it invokes.
    pub servers: Vec<PhaseServerBounds>,
    /// The tasks the phase adds into its reservation, which its budget serves too.
    pub shared: Vec<SharedTasks>,
}

/// Tasks a phase adds into an existing reservation: their jobs drain its budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedTasks {
    /// The addition, an index into the phase's additions.
    pub addition: usize,
    /// Their jobs per replenishment period of the reservation, all copies together.
    pub jobs: u64,
    /// One job's bounds as a client of the reservation (`shared` empty).
    pub each: PhaseClientBounds,
}

impl PhaseClientBounds {
    /// One copy of a phase's added task, as `subject` with bounds `servers`: unnamed (the CLI
    /// names it), sharing its reservation with no one.
    fn of_copy(subject: &Reservation, servers: Vec<PhaseServerBounds>) -> PhaseClientBounds {
        PhaseClientBounds {
            client: String::new(),
            execution: subject.execution.at(subject.criticality),
            servers,
            shared: Vec::new(),
        }
    }

    /// The jobs per period of the tasks a phase adds into its reservation, all additions
    /// together.
    pub fn added_jobs(&self) -> u64 {
        self.shared.iter().map(|shared| shared.jobs).sum()
    }

    /// The budget it needs in the phase under `protocol`, sized as section VII sizes it at
    /// its own level: `e_i + sum_q N_iq B_iq`, `B_iq` the phase's bound. This is the system's
    /// [`ClientBounds::provisioned_budget`](crate::mc_ipc::ClientBounds::provisioned_budget)
    /// with the phase's clients. `None` where a bound is none (or the sum overflows).
    pub fn budget(&self, protocol: GateProtocol) -> Option<Duration> {
        let own = self
            .servers
            .iter()
            .try_fold(self.execution, |budget, server| {
                budget.checked_add(server.of(protocol)?.checked_mul(server.invocations)?)
            })?;
        // The tasks added into the reservation: each job as much as its own bounds need.
        self.shared.iter().try_fold(own, |budget, shared| {
            budget.checked_add(shared.each.budget(protocol)?.checked_mul(shared.jobs)?)
        })
    }
}

/// The bounds of the new sporadic reservations one addition of a phase puts on one cluster,
/// each copy's alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedClientBounds {
    /// The addition, an index into the phase's additions.
    pub addition: usize,
    /// The cluster, an index into [`McIpcSystem::clusters`].
    pub cluster: usize,
    /// How many copies it has there.
    pub copies: u32,
    /// Each copy's budget per period.
    pub budget: Duration,
    /// One copy's bounds; `client` is empty (the CLI names it).
    pub bounds: PhaseClientBounds,
}

/// Every reservation's bounds in one phase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseBounds {
    /// The phase's name.
    pub phase: String,
    /// One entry per reservation, in [`McIpcSystem::reservations`] order.
    pub clients: Vec<PhaseClientBounds>,
    /// The new sporadic reservations the phase adds, by addition and then cluster, in file
    /// order.
    pub added: Vec<AddedClientBounds>,
}

/// The bounds of every phase of `system`, in file order.
pub fn analyse_phases(system: &McIpcSystem) -> Result<Vec<PhaseBounds>, McIpcError> {
    (system.phases.iter())
        .map(|phase| analyse_phase(system, phase))
        .collect()
}

/// The tasks a phase adds, as rivals of the system's reservations.
#[derive(Clone, Copy)]
struct Added<'a> {
    /// Which of the phase's additions they are.
    addition: usize,
    /// Their rival description on a server (every copy on every cluster), requests left at
    /// zero.
    rival: Rival<'a>,
    /// The clusters they run on.
    clusters: &'a [usize],
    /// Each copy's script (one job).
    script: &'a [ScriptStep],
}

/// The bounds of `system`'s reservations in `phase`.
pub fn analyse_phase(system: &McIpcSystem, phase: &Phase) -> Result<PhaseBounds, McIpcError> {
    let added: Vec<Added<'_>> = phase
        .additions
        .iter()
        .enumerate()
        .filter_map(|(index, addition)| {
            let (priority, slots) = match &addition.reservation {
                AddedReservation::Existing(index) => {
                    let reservation = system.reservations.get(*index)?;
                    (Some(reservation.priority), reservation.slots())
                }
                AddedReservation::Sporadic { priority, .. } => (Some(*priority), &[][..]),
                AddedReservation::BestEffort => (None, &[][..]),
            };
            let clusters = u64::try_from(addition.clusters.len()).unwrap_or(u64::MAX);
            Some(Added {
                addition: index,
                rival: Rival {
                    copies: u64::from(addition.count).saturating_mul(clusters),
                    priority,
                    slots,
                    requests: 0,
                    floods: false,
                },
                clusters: &addition.clusters,
                script: &addition.task.script,
            })
        })
        .collect();
    let all_clusters = u64::try_from(system.clusters.len()).unwrap_or(u64::MAX);
    // What the phase does to each server, whichever client looks: the reservations that
    // flood it, and the clusters it newly invokes it from.
    let per_server: Vec<(Vec<bool>, u64)> = (0..system.servers.len())
        .map(|id| {
            let flooding: Vec<bool> = (0..system.reservations.len())
                .map(|reservation| floods_on(system, phase, reservation, id))
                .collect();
            let new = new_invoking_clusters(system, &flooding, &added, id);
            (flooding, new)
        })
        .collect();
    let bounding = Bounding {
        system,
        per_server: &per_server,
        all_clusters,
    };
    let mut clients = Vec::with_capacity(system.reservations.len());
    for (index, client) in system.reservations.iter().enumerate() {
        let overflow = McIpcError::Overflow { client: index };
        let cluster = cluster_of(system, index)?;
        let servers = bounding
            .servers(client, cluster.cores, |id| {
                let floods = |other: usize| per_server[id].0[other];
                let mut rivals = reservation_rivals(system, index, id, floods)?;
                // Each copy is a client of its own.
                rivals.extend(added.iter().map(|added| added.on(id)));
                Some(rivals)
            })
            .ok_or(overflow)?;
        clients.push(PhaseClientBounds {
            client: client.name.clone(),
            execution: client.execution.at(client.criticality),
            servers,
            shared: Vec::new(),
        });
    }
    // Copies added into an existing reservation: one job's needs, as a client of it.
    for (addition_index, addition) in phase.additions.iter().enumerate() {
        let AddedReservation::Existing(index) = addition.reservation else {
            continue;
        };
        let (Some(owner), Some(own)) = (
            system.reservations.get(index),
            added.iter().position(|a| a.addition == addition_index),
        ) else {
            continue;
        };
        let overflow = McIpcError::Overflow { client: index };
        let cluster = cluster_of(system, index)?;
        let (criticality, priority) = (owner.criticality, owner.priority);
        let subject = copy_in(
            addition,
            owner.cluster,
            criticality,
            priority,
            owner.kind.clone(),
        );
        // The reservation's own task is a rival too.
        let servers = bounding
            .copy_servers(&subject, cluster.cores, &added, own)
            .ok_or(overflow)?;
        let period = match owner.kind {
            ReservationKind::Sporadic { period, .. } => period,
            ReservationKind::TableDriven { .. } => system.cycle.unwrap_or(Duration::ZERO),
        };
        // Jobs of one copy released in a replenishment period, at most.
        let per_copy = period
            .as_nanos()
            .div_ceil(addition.task.period.as_nanos().max(1))
            .max(1);
        let jobs = per_copy.saturating_mul(u64::from(addition.count));
        clients[index].shared.push(SharedTasks {
            addition: addition_index,
            jobs,
            each: PhaseClientBounds::of_copy(&subject, servers),
        });
    }
    let mut added_clients = Vec::new();
    for (addition_index, addition) in phase.additions.iter().enumerate() {
        let Some(own) = added.iter().position(|a| a.addition == addition_index) else {
            continue;
        };
        for &cluster_index in &addition.clusters {
            let (Some(cluster), Some(subject)) = (
                system.clusters.get(cluster_index),
                new_reservation(addition, cluster_index),
            ) else {
                continue;
            };
            let overflow = McIpcError::Overflow {
                client: system.reservations.len(),
            };
            let servers = bounding
                .copy_servers(&subject, cluster.cores, &added, own)
                .ok_or(overflow)?;
            let ReservationKind::Sporadic { budget, .. } = subject.kind else {
                continue;
            };
            added_clients.push(AddedClientBounds {
                addition: addition_index,
                cluster: cluster_index,
                copies: addition.count,
                budget,
                bounds: PhaseClientBounds::of_copy(&subject, servers),
            });
        }
    }
    Ok(PhaseBounds {
        phase: phase.name.clone(),
        clients,
        added: added_clients,
    })
}

impl<'a> Added<'a> {
    /// This addition's copies as rivals on the server at index `server`.
    fn on(self, server: usize) -> Rival<'a> {
        Rival {
            requests: invokes(self.script, server),
            ..self.rival
        }
    }
}

/// What a phase does to the system's servers, for working out any client's bounds in it.
struct Bounding<'s> {
    system: &'s McIpcSystem,
    /// Per server: the reservations that flood it (by index), and the clusters the phase
    /// newly invokes it from.
    per_server: &'s [(Vec<bool>, u64)],
    all_clusters: u64,
}

impl Bounding<'_> {
    /// The bounds of one copy of the `own`-th of the phase's `added` tasks, as `subject` (on
    /// a cluster of `cores` cores): its rivals are every system reservation and every copy
    /// but itself.
    fn copy_servers(
        &self,
        subject: &Reservation,
        cores: u64,
        added: &[Added<'_>],
        own: usize,
    ) -> Option<Vec<PhaseServerBounds>> {
        self.servers(subject, cores, |id| {
            let floods = |other: usize| self.per_server[id].0[other];
            let mut rivals = reservation_rivals(self.system, usize::MAX, id, floods)?;
            rivals.extend(added.iter().enumerate().map(|(k, added)| {
                let mut rival = added.on(id);
                if k == own {
                    rival.copies = rival.copies.saturating_sub(1);
                }
                rival
            }));
            Some(rivals)
        })
    }

    /// The bounds of `client` (on a cluster of `cores` cores) on each server it invokes, in
    /// server order, against the rivals `rivals_on` gives per server; `None` on overflow.
    fn servers<'r>(
        &self,
        client: &Reservation,
        cores: u64,
        rivals_on: impl Fn(usize) -> Option<Vec<Rival<'r>>>,
    ) -> Option<Vec<PhaseServerBounds>> {
        let mut servers = Vec::new();
        for (id, server) in self.system.servers.iter().enumerate() {
            let invocations = invocations_of(client, id)?;
            if invocations == 0 {
                continue;
            }
            let contention = Contention::among(client, rivals_on(id)?)?;
            let level = client.criticality;
            let operation_length = server.operation_length.at(level);
            let declared = server
                .invoking_clusters
                .at(level)
                .unwrap_or(self.all_clusters);
            let invoking = declared
                .saturating_add(self.per_server[id].1)
                .min(self.all_clusters);
            let mc_ipc = invocation_budget_bound(cores, invoking, operation_length)?;
            let fifo_ipc = fifo_ipc_invocation_bound(contention.clients, operation_length)?;
            let prio_ipc = contention.prio_ipc(operation_length)?;
            servers.push(PhaseServerBounds {
                server: server.name.clone(),
                invocations,
                mc_ipc,
                fifo_ipc,
                prio_ipc,
            });
        }
        Some(servers)
    }
}

/// One copy of `addition` as a reservation of its own on cluster `cluster`, when the
/// addition gives each copy a new sporadic reservation.
fn new_reservation(addition: &Addition, cluster: usize) -> Option<Reservation> {
    let AddedReservation::Sporadic {
        criticality,
        priority,
        budget,
        period,
        replenishment,
    } = addition.reservation
    else {
        return None;
    };
    let kind = ReservationKind::Sporadic {
        budget,
        period,
        replenishment,
    };
    Some(copy_in(addition, cluster, criticality, priority, kind))
}

/// One copy of `addition`'s task as a client in a reservation on `cluster` of that
/// criticality, priority and kind: its execution time is its script's computations at their
/// longest, and its invocations its script's.
fn copy_in(
    addition: &Addition,
    cluster: usize,
    criticality: Criticality,
    priority: Priority,
    kind: ReservationKind,
) -> Reservation {
    let script = &addition.task.script;
    let execution = script
        .iter()
        .filter_map(|step| match step {
            ScriptStep::Compute(execution) => Some(execution.worst_case()),
            _ => None,
        })
        .fold(Duration::ZERO, Duration::saturating_add);
    let mut invocations: Vec<Invocation> = Vec::new();
    for step in script {
        if let ScriptStep::Invoke { server, .. } = *step {
            match invocations.iter_mut().find(|i| i.server == server) {
                Some(invocation) => invocation.count += 1,
                None => invocations.push(Invocation { server, count: 1 }),
            }
        }
    }
    Reservation {
        name: String::new(),
        cluster,
        criticality,
        priority,
        kind,
        execution: PerCriticality::uniform(execution),
        invocations,
    }
}

/// How many times `script` invokes the server at index `server` in one job.
fn invokes(script: &[ScriptStep], server: usize) -> u64 {
    let count = script
        .iter()
        .filter(|step| matches!(step, ScriptStep::Invoke { server: s, .. } if *s == server))
        .count();
    count as u64
}

/// Whether a task of reservation `reservation` floods the server at index `server` in
/// `phase` (a flooding task invokes its script's servers back to back).
fn floods_on(system: &McIpcSystem, phase: &Phase, reservation: usize, server: usize) -> bool {
    phase.floods.iter().any(|&task| {
        system.tasks.get(task).is_some_and(|task| {
            task.reservation == reservation && invokes(&task.script, server) > 0
        })
    })
}

/// How many clusters the server at index `server` is invoked from in a phase and not by the
/// system's own reservations: a reservation `flooding` it (by index) that declares no
/// invocation of it, or `added` tasks.
fn new_invoking_clusters(
    system: &McIpcSystem,
    flooding: &[bool],
    added: &[Added<'_>],
    server: usize,
) -> u64 {
    // Per cluster: invoked from by the system (Some(false)) or only in the phase (Some(true)).
    let mut invoked: Vec<Option<bool>> = vec![None; system.clusters.len()];
    let mut mark = |cluster: usize, new: bool| {
        if let Some(seen) = invoked.get_mut(cluster) {
            *seen = Some(seen.map_or(new, |was_new| was_new && new));
        }
    };
    for (index, reservation) in system.reservations.iter().enumerate() {
        if invocations_of(reservation, server).is_some_and(|n| n > 0) {
            mark(reservation.cluster, false);
        } else if flooding[index] {
            mark(reservation.cluster, true);
        }
    }
    for added in added {
        if invokes(added.script, server) > 0 {
            added
                .clusters
                .iter()
                .for_each(|&cluster| mark(cluster, true));
        }
    }
    invoked.iter().filter(|seen| **seen == Some(true)).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in case study (section VI): R1..R4 high-criticality partitions (R3 in the
    /// second half of the cycle, the rest in the first; priorities R1 < R2 < R3 < R4), R5..R14
    /// low-criticality sporadic reservations sharing priority 0; one key server, L = 2 ms,
    /// four single-core clusters; each task invokes it once per job.
    fn case_study() -> McIpcSystem {
        let text = include_str!("../../../scenarios/mcipc/case-study.toml");
        bulwark_spec::parse_mc_ipc(text, "case-study.toml").unwrap_or_else(|d| panic!("{d:?}"))
    }

    /// `(MC-IPC, FIFO-IPC, PRIO-IPC)` of reservation `name` in phase `phase` (1-based).
    fn bounds(phases: &[PhaseBounds], phase: usize, name: &str) -> (u64, u64, Option<u64>) {
        let client = phases[phase - 1]
            .clients
            .iter()
            .find(|client| client.client == name)
            .unwrap();
        let key = &client.servers[0];
        let millis = |bound: Duration| bound.as_nanos() / 1_000_000;
        (
            millis(key.mc_ipc),
            millis(key.fifo_ipc),
            key.prio_ipc.map(millis),
        )
    }

    /// Every figure worked by hand from section VI-B's formulas. Base: R1 has `h = 2` (R2 and
    /// R4 overlap it, R3 does not) and `b = 1`: (2 + 1 + 1) 2 = 8 ms; R4 has `h = 0`, `b = 1`:
    /// 4 ms; R5 has `h = 13` (R1..R4 and its nine peers), `b = 0`: 28 ms; `n = 14`: 28 ms.
    #[test]
    fn each_phase_rebounds_the_clients_as_its_floods_and_additions_say() {
        let phases = analyse_phases(&case_study()).unwrap();
        assert_eq!(phases.len(), 8);
        // Phase 1, normal operation: section VI-B's bounds.
        assert_eq!(bounds(&phases, 1, "R1"), (18, 28, Some(8)));
        // Phase 2, T10 (priority 0) floods: below R1; R5 shares its priority, so the flooder
        // leaves R5 h = 12 others and b = 0: (2 x 12 + 0 + 2) 2 = 52 ms.
        assert_eq!(bounds(&phases, 2, "R1"), (18, 28, Some(8)));
        assert_eq!(bounds(&phases, 2, "R5"), (18, 28, Some(52)));
        // The flooder itself waits for none of its own requests: its peers' 13 as before.
        assert_eq!(bounds(&phases, 2, "R10"), (18, 28, Some(28)));
        // Phase 3, 64 more clients at priority 0: n = 78 (156 ms); R1's h unchanged, R5's
        // h = 13 + 64 = 77: (77 + 1) 2 = 156 ms.
        assert_eq!(bounds(&phases, 3, "R1"), (18, 156, Some(8)));
        assert_eq!(bounds(&phases, 3, "R5"), (18, 156, Some(156)));
        // Phase 4, T4 (the highest) floods: R1 and R2 overlap it. R1 keeps h = 1 (R2) and
        // b = 1: (2 + 2 + 2) 2 = 12 ms; R2 has h = 0, b = 1: (0 + 2 + 2) 2. R3's slot (the
        // second half) does not overlap R4's, but the flood leaves a request of T4's
        // outstanding at its slot's end: h = 1, b = 1, (1 + 1 + 1) 2 = 6 ms.
        assert_eq!(bounds(&phases, 4, "R1"), (18, 28, Some(12)));
        assert_eq!(bounds(&phases, 4, "R2"), (18, 28, Some(8)));
        assert_eq!(bounds(&phases, 4, "R3"), (18, 28, Some(6)));
        // Phase 5, T2 and T4 flood: two flooders above R1 can keep the server busy by turns.
        // For R3 (priority 3), T2 is lower (b = 1 already) and T4 leaves one request
        // outstanding: (1 + 1 + 1) 2 = 6 ms.
        assert_eq!(bounds(&phases, 5, "R1"), (18, 28, None));
        assert_eq!(bounds(&phases, 5, "R3"), (18, 28, Some(6)));
        // Phase 6, 15 more tasks in R4: the paper's (15 + 2 + 1 + 1) 2 = 38 ms for R1; n = 29;
        // R4's own h = 15: (15 + 1 + 1) 2 = 34 ms.
        assert_eq!(bounds(&phases, 6, "R1"), (18, 58, Some(38)));
        assert_eq!(bounds(&phases, 6, "R4"), (18, 58, Some(34)));
        // Phase 7, phase 6 and T2 floods: h = 16 (R4 and its copies), b = 1:
        // (32 + 2 + 2) 2 = 72 ms.
        assert_eq!(bounds(&phases, 7, "R1"), (18, 58, Some(72)));
        // Phase 8, 80 best-effort tasks: n = 94 (188 ms); below every reservation, they give
        // R5 the b it lacked: (13 + 1 + 1) 2 = 30 ms.
        assert_eq!(bounds(&phases, 8, "R1"), (18, 188, Some(8)));
        assert_eq!(bounds(&phases, 8, "R5"), (18, 188, Some(30)));
    }

    /// With no phase's changes the budgets are the system's own, for every client and
    /// protocol; phase 3 under FIFO-IPC needs e + 156 ms, and phase 5's two flooders leave
    /// none.
    #[test]
    fn a_phases_budgets_are_the_systems_with_its_bounds() {
        use crate::mc_ipc::analyse;
        let system = case_study();
        let phases = analyse_phases(&system).unwrap();
        for protocol in GateProtocol::ALL {
            let own = analyse(&system, protocol).unwrap();
            for (own, phase) in own.clients.iter().zip(&phases[0].clients) {
                assert_eq!(phase.budget(protocol), Some(own.provisioned_budget()));
            }
        }
        // e = 2 ms for every task of the file.
        let r1 = &phases[2].clients[0];
        assert_eq!(r1.execution, Duration::from_millis(2));
        assert_eq!(
            r1.budget(GateProtocol::FifoIpc),
            Some(Duration::from_millis(158))
        );
        assert_eq!(
            r1.budget(GateProtocol::McIpc),
            Some(Duration::from_millis(20))
        );
        assert_eq!(phases[4].clients[0].budget(GateProtocol::PrioIpc), None);
    }

    /// A server declared to be invoked from fewer clusters (`K^L_q`) than a phase's additions
    /// invoke it from: Theorem 1 counts the clusters the phase adds.
    /// Phases 6 and 7 add 15 tasks (period 100 ms, each job computing at most 1.5 + 0.5 ms
    /// around one invocation) into R4, whose slot recurs every 100 ms cycle: 15 jobs per
    /// period share its budget. Under MC-IPC each needs 2 + 18 = 20 ms, so R4 needs 20 + 15 x
    /// 20 = 320 ms; under FIFO-IPC (n = 29 in phase 6) 2 + 58 = 60 ms each, 16 x 60 = 960 ms.
    #[test]
    fn tasks_added_into_a_reservation_share_its_budget() {
        let phases = analyse_phases(&case_study()).unwrap();
        let r4 = &phases[5].clients[3];
        assert_eq!(r4.client, "R4");
        assert_eq!(r4.shared.len(), 1);
        assert_eq!(r4.shared[0].jobs, 15);
        assert_eq!(r4.shared[0].each.execution, Duration::from_millis(2));
        let ms = Duration::from_millis;
        assert_eq!(r4.budget(GateProtocol::McIpc), Some(ms(320)));
        assert_eq!(r4.budget(GateProtocol::FifoIpc), Some(ms(960)));
        // Nobody else shares a reservation, in any phase but 6 and 7.
        for (number, phase) in (1..).zip(&phases) {
            for client in &phase.clients {
                let shares = client.client == "R4" && (number == 6 || number == 7);
                assert_eq!(!client.shared.is_empty(), shares, "phase {number}");
            }
        }
    }

    /// Phase 3 adds 16 sporadic reservations per cluster (100 ms per 3000 ms, priority 0,
    /// low criticality), each copy's job computing at most 300 + 300 us around one
    /// invocation of the key server. One copy on any cluster: Theorem 1 is (1 + 2 * 1 * 4) 2
    /// = 18 ms; FIFO-IPC counts the 14 reservations and the 63 other copies, (1 + 14 + 63) 2
    /// = 156 ms; PRIO-IPC has every one of those at priority 0 or above, h = 77 and b = 0,
    /// (77 + 1) 2 = 156 ms. So each copy needs 18.6 ms of its 100 ms under MC-IPC, and
    /// 156.6 ms under the other two. Phases 6 and 7 add into R4 and phase 8 best-effort
    /// tasks, which have no budget of their own: no entry.
    #[test]
    fn a_phase_s_new_reservations_are_bounded_as_clients_too() {
        let phases = analyse_phases(&case_study()).unwrap();
        let added = &phases[2].added;
        assert_eq!(
            added.iter().map(|a| a.cluster).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        let ms = Duration::from_millis;
        for copy in added {
            assert_eq!((copy.addition, copy.copies, copy.budget), (0, 16, ms(100)));
            assert_eq!(copy.bounds.execution, Duration::from_micros(600));
            let key = &copy.bounds.servers[0];
            assert_eq!(key.invocations, 1);
            assert_eq!((key.mc_ipc, key.fifo_ipc), (ms(18), ms(156)));
            assert_eq!(key.prio_ipc, Some(ms(156)));
            let need = |protocol| copy.bounds.budget(protocol).unwrap();
            assert_eq!(need(GateProtocol::McIpc), Duration::from_micros(18_600));
            assert_eq!(need(GateProtocol::FifoIpc), Duration::from_micros(156_600));
            assert_eq!(need(GateProtocol::PrioIpc), Duration::from_micros(156_600));
        }
        for phase in [0, 1, 3, 4, 5, 6, 7] {
            assert!(phases[phase].added.is_empty(), "phase {}", phase + 1);
        }
    }

    #[test]
    fn a_phase_that_invokes_from_new_clusters_raises_k() {
        let mut system = case_study();
        // Only R5 (on C3) invokes the key server; K^L = 1 declared.
        for reservation in &mut system.reservations[1..] {
            if reservation.name != "R5" {
                reservation.invocations.clear();
            }
        }
        system.reservations[0].invocations.clear();
        system.servers[0].invoking_clusters.low = Some(1);
        let phases = analyse_phases(&system).unwrap();
        // Phase 1 adds nothing: (1 + 2 x 1 x 1) 2 = 6 ms, as the system's own analysis.
        assert_eq!(bounds(&phases, 1, "R5").0, 6);
        // Phase 2: T10 floods from C4, where nothing declared invokes: K = 2, (1 + 4) 2.
        assert_eq!(bounds(&phases, 2, "R5").0, 10);
        // Phase 3 adds invokers on all four clusters, three of them new: K = 4, (1 + 8) 2.
        assert_eq!(bounds(&phases, 3, "R5").0, 18);
        // Phase 6 adds tasks in R4 on C3, R5's own cluster: K stays 1.
        assert_eq!(bounds(&phases, 6, "R5").0, 6);
    }

    mod random {
        use super::*;
        use crate::mc_ipc::{analyse, Criticality, Reservation, ReservationKind, Slot};
        use bulwark_core::Priority;
        use bulwark_spec::mc_ipc_toml::{Addition, Cluster, Server, Task, TaskTemplate};
        use bulwark_spec::model::Execution;
        use proptest::prelude::*;

        const L: Duration = Duration::from_millis(1);

        const fn ms(millis: u64) -> Duration {
            Duration::from_millis(millis)
        }

        /// A reservation: cluster, priority, slot (None: sporadic; 0 or 1: a half cycle),
        /// invocations of server 0 and of server 1 per job.
        type Drawn = (usize, u8, Option<u8>, u64, u64);
        /// An addition: kind (0 existing reservation 0, 1 sporadic, 2 best effort), priority,
        /// copies, clusters (bit set), invokes server 0, invokes server 1.
        type DrawnAddition = (u8, u8, u32, u8, bool, bool);

        fn script(invokes: [u64; 2]) -> Vec<ScriptStep> {
            let mut steps = vec![ScriptStep::Compute(Execution::Fixed(L))];
            for (server, &count) in invokes.iter().enumerate() {
                for _ in 0..count {
                    steps.push(ScriptStep::Invoke {
                        server,
                        length: Execution::Fixed(L),
                    });
                }
            }
            steps.push(ScriptStep::SleepUntilNextPeriod);
            steps
        }

        /// A system of three clusters, two servers (L = 1 ms) and the drawn reservations,
        /// one task each invoking what its reservation declares, and one phase.
        fn system(drawn: &[Drawn], floods: &[bool], additions: &[DrawnAddition]) -> McIpcSystem {
            let halves = [Slot::new(Duration::ZERO, ms(5)), Slot::new(ms(5), ms(10))];
            let reservations = (drawn.iter().enumerate())
                .map(|(index, &(cluster, priority, slot, first, second))| {
                    let kind = match slot {
                        Some(half) => ReservationKind::table_driven(&[halves[half as usize]]),
                        None => ReservationKind::sporadic(ms(5), ms(10)),
                    };
                    let reservation = Reservation::new(
                        format!("R{index}"),
                        cluster,
                        Criticality::Low,
                        Priority(priority),
                        kind,
                        L,
                    );
                    reservation.invoking(0, first).invoking(1, second)
                })
                .collect();
            let clusters = (0..3).map(|k| Cluster::new(format!("C{k}"), 1)).collect();
            let servers = vec![Server::new("a", L), Server::new("b", L)];
            let mut system = McIpcSystem::new(clusters, servers, reservations);
            system.tasks = (drawn.iter().enumerate())
                .map(|(index, &(_, _, _, first, second))| Task {
                    name: format!("T{index}"),
                    reservation: index,
                    period: ms(10),
                    offset: Duration::ZERO,
                    script: script([first, second]),
                })
                .collect();
            let additions = (additions.iter())
                .map(|&(kind, priority, count, clusters, first, second)| {
                    let reservation = match kind {
                        0 => AddedReservation::Existing(0),
                        1 => AddedReservation::Sporadic {
                            criticality: Criticality::Low,
                            priority: Priority(priority),
                            budget: ms(5),
                            period: ms(10),
                            replenishment: Default::default(),
                        },
                        _ => AddedReservation::BestEffort,
                    };
                    let clusters = match reservation {
                        AddedReservation::Existing(index) => vec![drawn[index].0],
                        _ => (0..3).filter(|k| clusters & (1 << k) != 0).collect(),
                    };
                    Addition {
                        clusters,
                        count,
                        reservation,
                        task: TaskTemplate {
                            period: ms(10),
                            offset: Duration::ZERO,
                            stagger: Duration::ZERO,
                            script: script([u64::from(first), u64::from(second)]),
                        },
                    }
                })
                .collect();
            system.phases = vec![Phase {
                name: "drawn".into(),
                floods: (0..drawn.len()).filter(|&t| floods[t]).collect(),
                additions,
            }];
            system
        }

        fn drawn() -> impl Strategy<Value = (Vec<Drawn>, Vec<bool>, Vec<DrawnAddition>)> {
            let reservation = (
                0..3usize,
                0..4u8,
                prop::option::of(0..2u8),
                0..3u64,
                0..3u64,
            );
            let addition = (
                0..3u8,
                0..4u8,
                1..4u32,
                1..8u8,
                any::<bool>(),
                any::<bool>(),
            );
            (
                prop::collection::vec(reservation, 1..7),
                prop::collection::vec(any::<bool>(), 7),
                prop::collection::vec(addition, 0..3),
            )
        }

        proptest! {
            /// Against the system's own bounds, counted another way: FIFO-IPC gains L for
            /// each added copy that invokes the server and each flooder that declared no
            /// invocation of it; PRIO-IPC is none exactly when a flooder of higher or equal
            /// priority whose slots overlap invokes it, and never below the system's
            /// otherwise; Theorem 1 never drops, and a phase without changes is the system.
            #[test]
            fn a_phases_bounds_count_its_clients_and_floods(
                (drawn, floods, additions) in drawn()
            ) {
                let system = system(&drawn, &floods, &additions);
                let own = analyse(&system, GateProtocol::McIpc).unwrap();
                let phase = analyse_phase(&system, &system.phases[0]).unwrap();
                let floods_server = |index: usize, server: usize| {
                    floods[index] && invokes(&system.tasks[index].script, server) > 0
                };
                for (index, (own, bounds)) in own.clients.iter().zip(&phase.clients).enumerate() {
                    let client = &system.reservations[index];
                    prop_assert_eq!(own.servers.len(), bounds.servers.len());
                    for (own, bounds) in own.servers.iter().zip(&bounds.servers) {
                        let server = usize::from(bounds.server == "b");
                        let copies: u64 = (system.phases[0].additions.iter())
                            .filter(|added| invokes(&added.task.script, server) > 0)
                            .map(|added| u64::from(added.count) * added.clusters.len() as u64)
                            .sum();
                        let undeclared = (0..drawn.len())
                            .filter(|&other| other != index && floods_server(other, server))
                            .filter(|&other| invocations_of(&system.reservations[other], server) == Some(0))
                            .count() as u64;
                        prop_assert_eq!(bounds.fifo_ipc, own.fifo_ipc.saturating_add(L.saturating_mul(copies + undeclared)));
                        let flooders = (0..drawn.len()).filter(|&other| {
                            let rival = &system.reservations[other];
                            let overlap = client.slots().is_empty()
                                || rival.slots().is_empty()
                                || client.slots() == rival.slots();
                            other != index
                                && floods_server(other, server)
                                && rival.priority >= client.priority
                                && overlap
                        }).count();
                        prop_assert_eq!(bounds.prio_ipc.is_none(), flooders >= 2);
                        match (flooders, bounds.prio_ipc) {
                            // Its own operation and the flooder's, at least.
                            (1, Some(prio)) => prop_assert!(prio >= L.saturating_mul(2)),
                            (0, Some(prio)) => prop_assert!(prio >= own.prio_ipc),
                            _ => {}
                        }
                        prop_assert!(bounds.mc_ipc >= own.mc_ipc);
                        if additions.is_empty() && !floods.iter().any(|f| *f) {
                            prop_assert_eq!(
                                (bounds.mc_ipc, bounds.fifo_ipc, bounds.prio_ipc),
                                (own.mc_ipc, own.fifo_ipc, Some(own.prio_ipc))
                            );
                        }
                    }
                }
                // One entry per new sporadic reservation's addition and cluster.
                let entries: usize = (additions.iter())
                    .filter(|added| added.0 == 1)
                    .map(|added| added.3.count_ones() as usize)
                    .sum();
                prop_assert_eq!(phase.added.len(), entries);
                for copy in &phase.added {
                    prop_assert_eq!(copy.bounds.execution, L);
                    for bounds in &copy.bounds.servers {
                        let server = usize::from(bounds.server == "b");
                        // FIFO-IPC counts every client of the server once, the copy too.
                        let copies: u64 = (system.phases[0].additions.iter())
                            .filter(|added| invokes(&added.task.script, server) > 0)
                            .map(|added| u64::from(added.count) * added.clusters.len() as u64)
                            .sum();
                        let reservations = (0..drawn.len())
                            .filter(|&other| {
                                invocations_of(&system.reservations[other], server) != Some(0)
                                    || floods_server(other, server)
                            })
                            .count() as u64;
                        prop_assert_eq!(bounds.fifo_ipc, L.saturating_mul(copies + reservations));
                        // Theorem 1 depends on the clusters alone (here of one core each).
                        for client in &phase.clients {
                            for other in client.servers.iter().filter(|o| o.server == bounds.server) {
                                prop_assert_eq!(bounds.mc_ipc, other.mc_ipc);
                            }
                        }
                    }
                }
            }
        }
    }
}
