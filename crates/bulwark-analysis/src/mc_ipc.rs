//! MC-IPC budget bounds (MC-IPC paper): Theorem 1, budget sizing, Vestal's levels, baselines.
//!
//! The MC-IPC paper's system (section III) has `K` clusters `C_1, ..., C_K` of `m_k` cores,
//! reservations assigned to clusters, and resource servers `S_q`, each serving one request at a
//! time. `L_q`, the maximum operation length of `S_q`, bounds the budget one request makes the
//! server consume. Under bandwidth inheritance a waiting client's reservation pays for the
//! server, and (Assumption A2) drains budget whenever it is selected, even while it waits.
//!
//! # Equations
//!
//! - **Theorem 1** (section IV-B): one invocation of `S_q` by a client in cluster `C_k` drains
//!   at most `(1 + 2 m_k K) L_q` of its reservation's budget: `L_q` for a request in service
//!   when it arrives (Lemma 3), then `m_k K L_q` in the tail queue (Lemma 2) and `m_k K L_q`
//!   in the head and global queues (Lemma 1). See [`invocation_budget_bound`].
//! - **Budget sizing** (section IV-C): a reservation of a task with worst-case execution time
//!   `e_i` that invokes each `S_q` at most `N_iq` times per job needs a budget of at least
//!   `e_i + sum_q N_iq (1 + 2 m_k K) L_q`. See [`reservation_budget`].
//! - **Vestal's model** (section VII): with two criticality levels, each task has `e^L_i <=
//!   e^H_i`, each server `L^L_q <= L^H_q`, and `K^L_q <= K^H_q` bounds the clusters `S_q` is
//!   invoked from (`K^H_q = K` is the safe choice). A low-criticality reservation gets
//!   `e^L_i + sum_q N_iq (1 + 2 K^L_q m_k) L^L_q`; a high-criticality one is provisioned with
//!   `e^H_i + sum_q N_iq (1 + 2 K^H_q m_k) L^H_q` and expected to use only the low-assurance
//!   amount. See [`criticality_budgets`].
//! - **Case study baselines** (section VI-B), per invocation and valid only while every
//!   client behaves as described: FIFO-IPC waits for every client that can have a request
//!   outstanding, itself included, `n L_q` ([`fifo_ipc_invocation_bound`]); PRIO-IPC waits
//!   for every higher-priority request that can precede, its own operation, and one
//!   lower-priority operation already in service, `(h + 1 + 1) L_q`
//!   ([`prio_ipc_invocation_bound`]). The paper's numbers for task `T_1` (four single-core
//!   clusters, `L_key = 2 ms`, 14 clients): 18 ms, 28 ms and 8 ms.
//!
//! [`analyse`] applies all of them to a system file's model ([`McIpcSystem`], whose
//! reservations are the clients) and reports an [`McIpcBounds`].
//!
//! # Readings written down here
//!
//! - **Criticality of the bounds.** Per-invocation bounds in the report use the client's own
//!   criticality level (`L^L_q` and `K^L_q` for a low-criticality client, `L^H_q` and `K^H_q`
//!   for a high-criticality one), as section VII sizes each reservation at its own level.
//! - **Low-criticality high budget.** Section VII gives a low-criticality reservation only the
//!   low-assurance budget; it is demoted, not re-provisioned, in high-criticality mode. Its
//!   `(low, high)` pair is therefore `(low, low)`.
//! - **PRIO-IPC overlap.** Section VI-B counts only the higher-priority tasks that can run
//!   while `T_1` waits: "since only the tasks in two higher-priority reservations can overlap
//!   with `R^H_1`". `R^H_3`'s slot `[50 ms, 100 ms)` is disjoint from `R^H_1`'s
//!   `[0 ms, 50 ms)`. A client's [`Reservation`] may be table-driven, with [`Slot`]s; two clients can
//!   overlap unless both list slots and no two of them intersect.
//!   Equal priorities count as higher (a priority queue may put an equal request first), which
//!   is how EDF-ordered reservations are described: give them one shared priority.
//! - **PRIO-IPC blocking.** The one lower-priority operation is counted whenever another
//!   lower-priority client invokes the server, whatever its slots: a request in service when
//!   the slot starts may have been issued before it.
//! - **FIFO-IPC count.** `n` is every described client that invokes the server, slots ignored,
//!   as the paper counts all 14 tasks: a request of a reservation whose slot ended stays queued.
//! - **Best-effort tasks** are not described: they do not change the MC-IPC or PRIO-IPC bound
//!   of a real-time client, and each one would add `L_q` to the FIFO-IPC bound.
//!
//! # Arithmetic
//!
//! Durations are `u64` nanoseconds; every function here uses checked arithmetic and returns
//! `None` (or [`McIpcError::Overflow`]) when a product or sum leaves that range.

pub use bulwark_core::criticality::{Criticality, PerCriticality};
pub use bulwark_core::ipc::GateProtocol;
pub use bulwark_core::reservation::clustered::Slot;
use bulwark_core::{Duration, Priority};
/// The file's clusters and servers are the analysis's: `C_k` with `m_k`, and `S_q` with
/// `L_q` and `K_q` per level.
pub use bulwark_spec::mc_ipc_toml::{Cluster, Server};
/// The system the analysis reads is the file's own model: its clients are the reservations,
/// one task each.
pub use bulwark_spec::mc_ipc_toml::{Invocation, McIpcSystem, Reservation, ReservationKind};

/// Theorem 1 (section IV-B): the budget a reservation in a cluster of `cluster_cores` (`m_k`)
/// cores drains for one invocation of a server of operation length `operation_length` (`L_q`)
/// when clients sit in `clusters` (`K`) clusters: `(1 + 2 m_k K) L_q`. `None` on overflow.
pub fn invocation_budget_bound(
    cluster_cores: u64,
    clusters: u64,
    operation_length: Duration,
) -> Option<Duration> {
    // Theorem 1: Lemma 3's L_q, plus Lemma 2's and Lemma 1's m_k K L_q each.
    let operations = cluster_cores
        .checked_mul(clusters)?
        .checked_mul(2)?
        .checked_add(1)?;
    operation_length.checked_mul(operations)
}

/// The FIFO-IPC bound of section VI-B for one invocation: `n L_q`, where `clients` (`n`) counts
/// every client that can have a request outstanding, the invoking one included. Valid only if
/// no more than `n` clients exist. `None` on overflow.
pub fn fifo_ipc_invocation_bound(clients: u64, operation_length: Duration) -> Option<Duration> {
    // Section VI-B: "since there are n = 14 tasks in total, ... at most n L_key".
    operation_length.checked_mul(clients)
}

/// The PRIO-IPC bound of section VI-B for one invocation: `(h + 1 + b) L_q`, where
/// `preceding_requests` (`h`) counts the higher-priority requests that can be served first,
/// `1` is the invocation's own operation and `b` is 1 when `lower_priority_blocking` (a
/// lower-priority operation may be in service when the request arrives). Valid only if
/// higher-priority clients issue no more than `h` requests. `None` on overflow.
pub fn prio_ipc_invocation_bound(
    preceding_requests: u64,
    lower_priority_blocking: bool,
    operation_length: Duration,
) -> Option<Duration> {
    // Section VI-B: "(2 + 1 + 1) L_key = 8 ms (including T_1's own request and one blocking
    // lower-priority request)".
    let operations = preceding_requests.checked_add(1 + u64::from(lower_priority_blocking))?;
    operation_length.checked_mul(operations)
}

/// The PRIO-IPC bound for one invocation while one client that can precede it floods (section
/// VI-C): `(2h + 2b + 2) L_q`, with `h` and `b` as in [`prio_ipc_invocation_bound`] for the
/// clients that behave as described. The server takes its next request at the instant it
/// replies, and a flooder computes for a time above zero between two requests (the system
/// call section VI-C says keeps a single flooder from starving others), so each operation
/// served before the invocation's own, and the one in service when it arrives, lets the
/// flooder's next request in first once: `h + b` others, `h + b + 1` of the flooder's, and
/// its own. `None` on overflow.
pub fn prio_ipc_single_flooder_bound(
    preceding_requests: u64,
    lower_priority_blocking: bool,
    operation_length: Duration,
) -> Option<Duration> {
    let others = preceding_requests.checked_add(u64::from(lower_priority_blocking))?;
    let operations = others.checked_mul(2)?.checked_add(2)?;
    operation_length.checked_mul(operations)
}

/// One server's share of a reservation's budget at one level of assurance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerInvocations {
    /// `N_iq`: the most invocations of the server one job makes.
    pub invocations: u64,
    /// `L_q`: the server's maximum operation length.
    pub operation_length: Duration,
    /// `K` (section IV-C), or `K^L_q` or `K^H_q` (section VII): the clusters the server is
    /// invoked from.
    pub clusters: u64,
}

/// Budget sizing (section IV-C): `e_i + sum_q N_iq (1 + 2 m_k K) L_q` for a reservation with
/// execution `execution` (`e_i`) in a cluster of `cluster_cores` (`m_k`) cores, each term
/// using its server's own cluster count. `None` on overflow.
pub fn reservation_budget(
    execution: Duration,
    cluster_cores: u64,
    servers: &[ServerInvocations],
) -> Option<Duration> {
    sized_budget(execution, cluster_cores, servers.iter().copied())
}

/// `e_i + sum_q N_iq (1 + 2 m_k K) L_q` over `servers`; `None` on overflow.
fn sized_budget(
    execution: Duration,
    cluster_cores: u64,
    mut servers: impl Iterator<Item = ServerInvocations>,
) -> Option<Duration> {
    servers.try_fold(execution, |budget, server| {
        // Section IV-C: N_iq invocations, each bounded by Theorem 1.
        let bound =
            invocation_budget_bound(cluster_cores, server.clusters, server.operation_length)?;
        budget.checked_add(bound.checked_mul(server.invocations)?)
    })
}

/// One server's share of a reservation's budget under Vestal's model (section VII).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CriticalityInvocations {
    /// `N_iq`: the most invocations of the server one job makes.
    pub invocations: u64,
    /// `L^L_q` and `L^H_q`: the server's maximum operation length at each level.
    pub operation_length: PerCriticality<Duration>,
    /// `K^L_q` and `K^H_q`: the clusters the server is invoked from at each level.
    pub clusters: PerCriticality<u64>,
}

impl CriticalityInvocations {
    /// The term at one level, as [`reservation_budget`] takes it.
    pub fn at(&self, criticality: Criticality) -> ServerInvocations {
        ServerInvocations {
            invocations: self.invocations,
            operation_length: self.operation_length.at(criticality),
            clusters: self.clusters.at(criticality),
        }
    }
}

/// Section VII: the `(low, high)` budgets of a reservation of `criticality` with execution
/// `e^L_i`, `e^H_i` in a cluster of `cluster_cores` (`m_k`) cores.
///
/// `low` is `e^L_i + sum_q N_iq (1 + 2 K^L_q m_k) L^L_q`: a low-criticality reservation's
/// budget, and what a high-criticality one is expected to use. `high` is
/// `e^H_i + sum_q N_iq (1 + 2 K^H_q m_k) L^H_q` for a high-criticality reservation, the budget
/// it is provisioned with; a low-criticality reservation is never provisioned beyond `low`, so
/// its `high` is `low`. `None` on overflow.
pub fn criticality_budgets(
    criticality: Criticality,
    execution: PerCriticality<Duration>,
    cluster_cores: u64,
    servers: &[CriticalityInvocations],
) -> Option<PerCriticality<Duration>> {
    let at = |level: Criticality| {
        let terms = servers.iter().map(|server| server.at(level));
        sized_budget(execution.at(level), cluster_cores, terms)
    };
    // Section VII: the low-criticality budget with e^L, K^L_q, L^L_q ...
    let low = at(Criticality::Low)?;
    // ... and the high-criticality budget with e^H, K^H_q, L^H_q.
    let high = match criticality {
        Criticality::Low => low,
        Criticality::High => at(Criticality::High)?,
    };
    Some(PerCriticality { low, high })
}

/// `N_iq`: a client's invocations of the server at index `server` per job (the sum, should a
/// system built in code list the server twice); `None` on overflow.
pub(crate) fn invocations_of(client: &Reservation, server: usize) -> Option<u64> {
    client
        .invocations
        .iter()
        .filter(|invocation| invocation.server == server)
        .try_fold(0u64, |sum, invocation| sum.checked_add(invocation.count))
}

/// True unless both clients are table-driven with disjoint slots.
fn slots_overlap(mine: &[Slot], theirs: &[Slot]) -> bool {
    mine.is_empty()
        || theirs.is_empty()
        || mine
            .iter()
            .any(|&slot| theirs.iter().any(|&other_slot| slot.overlaps(other_slot)))
}

/// Why a system cannot be analysed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McIpcError {
    /// The client at this index of [`McIpcSystem::reservations`] names a cluster that does
    /// not exist.
    UnknownCluster {
        /// The client's index.
        client: usize,
        /// The missing cluster index.
        cluster: usize,
    },
    /// The client at this index of [`McIpcSystem::reservations`] invokes a server that does
    /// not exist.
    UnknownServer {
        /// The client's index.
        client: usize,
        /// The missing server index.
        server: usize,
    },
    /// A bound or budget of the client at this index exceeds [`Duration::MAX`].
    Overflow {
        /// The client's index.
        client: usize,
    },
}

/// The per-invocation bounds of one client on one server it invokes, at the client's own
/// criticality level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerBounds {
    /// The server's name.
    pub server: String,
    /// `N_iq`: the client's invocations per job.
    pub invocations: u64,
    /// `L_q` at the client's level.
    pub operation_length: Duration,
    /// Theorem 1's `(1 + 2 m_k K_q) L_q`, with `K_q` at the client's level.
    pub mc_ipc: Duration,
    /// The FIFO-IPC bound `n L_q`.
    pub fifo_ipc: Duration,
    /// The PRIO-IPC bound `(h + 1 + b) L_q`.
    pub prio_ipc: Duration,
}

/// One client's bounds and budgets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientBounds {
    /// The client's name.
    pub client: String,
    /// Its cluster's name.
    pub cluster: String,
    /// Its criticality.
    pub criticality: Criticality,
    /// Its bounds on each server it invokes, in server order.
    pub servers: Vec<ServerBounds>,
    /// Its budgets under the analysed protocol at each level, as [`criticality_budgets`]
    /// forms them with that protocol's per-invocation bound.
    pub budgets: PerCriticality<Duration>,
}

impl ClientBounds {
    /// The budget its reservation is provisioned with: `low` for a low-criticality client,
    /// `high` for a high-criticality one (section VII).
    pub fn provisioned_budget(&self) -> Duration {
        self.budgets.at(self.criticality)
    }
}

/// What [`analyse`] reports: every client's per-invocation bounds under MC-IPC, FIFO-IPC and
/// PRIO-IPC, and its budgets sized for `protocol`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McIpcBounds {
    /// The protocol the budgets are sized for.
    pub protocol: GateProtocol,
    /// One entry per client, in [`McIpcSystem::reservations`] order.
    pub clients: Vec<ClientBounds>,
}

/// Other clients of a server, alike, as one client's FIFO-IPC and PRIO-IPC bounds see them.
#[derive(Clone, Copy)]
pub(crate) struct Rival<'a> {
    /// How many clients this stands for (a phase adds copies of one task).
    pub(crate) copies: u64,
    /// Their priority; `None` for best-effort tasks, below every reservation.
    pub(crate) priority: Option<Priority>,
    /// Their reservation's slots (none: they may run at any time).
    pub(crate) slots: &'a [Slot],
    /// `N`: each one's requests on the server per job.
    pub(crate) requests: u64,
    /// They flood (section VI-C): their requests come back to back, as many as they like.
    pub(crate) floods: bool,
}

/// What the other clients of a server contribute to one client's FIFO-IPC and PRIO-IPC
/// bounds.
pub(crate) struct Contention {
    /// `n`: the clients that invoke the server, the client itself included.
    pub(crate) clients: u64,
    /// `h`: the requests of higher- or equal-priority clients that can overlap with it, and
    /// one per flooding such client that cannot (the request its slot leaves outstanding).
    pub(crate) preceding_requests: u64,
    /// `b`: whether a lower-priority client invokes the server.
    pub(crate) lower_priority_blocking: bool,
    /// The higher- or equal-priority clients that can overlap with it and flood (not in `h`).
    pub(crate) flooders: u64,
}

impl Contention {
    /// The PRIO-IPC bound for one invocation against this contention: `(h + 1 + b) L_q`
    /// ([`prio_ipc_invocation_bound`]); with one flooder that can precede it, `(2h + 2b + 2)
    /// L_q` ([`prio_ipc_single_flooder_bound`]); `Some(None)` with two or more, which can keep
    /// the server busy by turns. `None` on overflow.
    pub(crate) fn prio_ipc(&self, operation_length: Duration) -> Option<Option<Duration>> {
        let (preceding, lower) = (self.preceding_requests, self.lower_priority_blocking);
        match self.flooders {
            0 => prio_ipc_invocation_bound(preceding, lower, operation_length).map(Some),
            1 => prio_ipc_single_flooder_bound(preceding, lower, operation_length).map(Some),
            _ => Some(None),
        }
    }

    /// The contention `client` meets from `rivals` on one server; `None` on overflow.
    pub(crate) fn among<'a>(
        client: &Reservation,
        rivals: impl IntoIterator<Item = Rival<'a>>,
    ) -> Option<Contention> {
        let mut contention = Contention {
            clients: 1,
            preceding_requests: 0,
            lower_priority_blocking: false,
            flooders: 0,
        };
        for rival in rivals {
            if rival.copies == 0 || (rival.requests == 0 && !rival.floods) {
                continue;
            }
            // A synchronous client has one request outstanding at a time, flooding or not.
            contention.clients = contention.clients.checked_add(rival.copies)?;
            match rival.priority {
                Some(priority) if priority >= client.priority => {
                    if !slots_overlap(client.slots(), rival.slots) {
                        // A flooder always has a request outstanding when its slot ends,
                        // which the server takes before the client's in the client's slot:
                        // one operation per copy (it cannot issue another outside its slot).
                        if rival.floods {
                            contention.preceding_requests =
                                contention.preceding_requests.checked_add(rival.copies)?;
                        }
                        continue;
                    }
                    if rival.floods {
                        contention.flooders = contention.flooders.checked_add(rival.copies)?;
                    } else {
                        let requests = rival.requests.checked_mul(rival.copies)?;
                        contention.preceding_requests =
                            contention.preceding_requests.checked_add(requests)?;
                    }
                }
                _ => contention.lower_priority_blocking = true,
            }
        }
        Some(contention)
    }

    /// The contention `system.reservations[index]` meets on the server at index `server`;
    /// `None` on overflow.
    fn of(system: &McIpcSystem, index: usize, server: usize) -> Option<Contention> {
        let rivals = reservation_rivals(system, index, server, |_| false)?;
        Contention::among(&system.reservations[index], rivals)
    }
}

/// The system's other reservations as rivals of `system.reservations[index]` on the server at
/// index `server`, each flooding where `floods` says so (by reservation index); `None` on
/// overflow.
pub(crate) fn reservation_rivals(
    system: &McIpcSystem,
    index: usize,
    server: usize,
    floods: impl Fn(usize) -> bool,
) -> Option<Vec<Rival<'_>>> {
    let mut rivals = Vec::with_capacity(system.reservations.len());
    for (other_index, other) in system.reservations.iter().enumerate() {
        if other_index != index {
            rivals.push(Rival {
                copies: 1,
                priority: Some(other.priority),
                slots: other.slots(),
                requests: invocations_of(other, server)?,
                floods: floods(other_index),
            });
        }
    }
    Some(rivals)
}

/// The cluster of `system.reservations[index]`, or the error naming the missing one.
pub(crate) fn cluster_of(system: &McIpcSystem, index: usize) -> Result<&Cluster, McIpcError> {
    let cluster = system.reservations[index].cluster;
    (system.clusters.get(cluster)).ok_or(McIpcError::UnknownCluster {
        client: index,
        cluster,
    })
}

/// The three per-invocation bounds for one client, server and level.
struct InvocationBounds {
    mc_ipc: Duration,
    fifo_ipc: Duration,
    prio_ipc: Duration,
}

impl InvocationBounds {
    /// The bounds at `level`; `None` on overflow.
    fn at(
        server: &Server,
        level: Criticality,
        cluster_cores: u64,
        clusters: u64,
        contention: &Contention,
    ) -> Option<InvocationBounds> {
        let operation_length = server.operation_length.at(level);
        let invoking_clusters = server.invoking_clusters.at(level).unwrap_or(clusters);
        Some(InvocationBounds {
            mc_ipc: invocation_budget_bound(cluster_cores, invoking_clusters, operation_length)?,
            fifo_ipc: fifo_ipc_invocation_bound(contention.clients, operation_length)?,
            // The system's clients do not flood, so PRIO-IPC has a bound.
            prio_ipc: contention.prio_ipc(operation_length)??,
        })
    }

    /// The bound of `protocol`.
    fn of(&self, protocol: GateProtocol) -> Duration {
        match protocol {
            GateProtocol::McIpc => self.mc_ipc,
            GateProtocol::FifoIpc => self.fifo_ipc,
            GateProtocol::PrioIpc => self.prio_ipc,
        }
    }
}

/// Every client's per-invocation bounds under the three protocols, and its `(low, high)`
/// budgets sized for `protocol` as section VII sizes them for MC-IPC:
/// `e^X_i + sum_q N_iq B^X_iq` at each level `X`, where `B^X_iq` is `protocol`'s
/// per-invocation bound at level `X` (`high` is `low` for a low-criticality client).
pub fn analyse(system: &McIpcSystem, protocol: GateProtocol) -> Result<McIpcBounds, McIpcError> {
    // K; a count beyond u64 (impossible on 64-bit targets) saturates and then overflows below.
    let clusters = u64::try_from(system.clusters.len()).unwrap_or(u64::MAX);
    let mut clients = Vec::with_capacity(system.reservations.len());
    for (index, client) in system.reservations.iter().enumerate() {
        let cluster = cluster_of(system, index)?;
        if let Some(invocation) = client
            .invocations
            .iter()
            .find(|invocation| invocation.server >= system.servers.len())
        {
            return Err(McIpcError::UnknownServer {
                client: index,
                server: invocation.server,
            });
        }
        let overflow = McIpcError::Overflow { client: index };
        let mut servers = Vec::new();
        let mut budgets = PerCriticality {
            low: client.execution.low,
            high: client.execution.high,
        };
        for (id, server) in system.servers.iter().enumerate() {
            let invocations = invocations_of(client, id).ok_or(overflow)?;
            if invocations == 0 {
                continue;
            }
            let contention = Contention::of(system, index, id).ok_or(overflow)?;
            let bounds_at = |level| {
                InvocationBounds::at(server, level, cluster.cores, clusters, &contention)
                    .ok_or(overflow)
            };
            let low = bounds_at(Criticality::Low)?;
            let high = bounds_at(Criticality::High)?;
            // Section IV-C / VII: add N_iq times the per-invocation bound at each level.
            let add = |budget: Duration, bounds: &InvocationBounds| {
                bounds
                    .of(protocol)
                    .checked_mul(invocations)
                    .and_then(|term| budget.checked_add(term))
                    .ok_or(overflow)
            };
            budgets.low = add(budgets.low, &low)?;
            budgets.high = add(budgets.high, &high)?;
            let own = match client.criticality {
                Criticality::Low => low,
                Criticality::High => high,
            };
            servers.push(ServerBounds {
                server: server.name.clone(),
                invocations,
                operation_length: server.operation_length.at(client.criticality),
                mc_ipc: own.mc_ipc,
                fifo_ipc: own.fifo_ipc,
                prio_ipc: own.prio_ipc,
            });
        }
        // Section VII: a low-criticality reservation is provisioned with the low budget only.
        if client.criticality == Criticality::Low {
            budgets.high = budgets.low;
        }
        clients.push(ClientBounds {
            client: client.name.clone(),
            cluster: cluster.name.clone(),
            criticality: client.criticality,
            servers,
            budgets,
        });
    }
    Ok(McIpcBounds { protocol, clients })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    /// Section VI-A: `m = 4` single-core clusters (partitioned, `K = 4`, `m_k = 1`), one key
    /// server with `L_key = 2 ms`, a cycle `H = 100 ms` and 14 reservations of one task each,
    /// every job invoking the key server once:
    /// - `R^H_1` on `C_1` in `[0, 50)`; `R^H_2` on `C_2` in `[0, 50)`, `R^H_3` on `C_2` in
    ///   `[50, 100)`; `R^H_4` on `C_3` in `[0, 50)`; priorities `R^H_1 < R^H_2 < R^H_3 <
    ///   R^H_4`, above every low-criticality reservation;
    /// - `R^L_5 .. R^L_9` on `C_3` and `R^L_10 .. R^L_14` on `C_4`, EDF-ordered (one shared
    ///   priority below the high-criticality ones).
    ///
    /// The paper does not give the tasks' execution times: 10 ms (high) and 2 ms (low) are
    /// placeholders for the budget checks.
    fn case_study() -> McIpcSystem {
        let key = 0;
        let first_half = [Slot::new(ms(0), ms(50))];
        let second_half = [Slot::new(ms(50), ms(100))];
        let high = |name: &str, cluster: usize, priority: u8, slots: &[Slot]| {
            Reservation::new(
                name,
                cluster,
                Criticality::High,
                Priority(priority),
                ReservationKind::table_driven(slots),
                ms(10),
            )
            .invoking(key, 1)
        };
        let mut clients = vec![
            high("R1", 0, 10, &first_half),
            high("R2", 1, 11, &first_half),
            high("R3", 1, 12, &second_half),
            high("R4", 2, 13, &first_half),
        ];
        for (cluster, first) in [(2, 5), (3, 10)] {
            for number in first..first + 5 {
                clients.push(
                    Reservation::new(
                        format!("R{number}"),
                        cluster,
                        Criticality::Low,
                        Priority(1),
                        low_budget(),
                        ms(2),
                    )
                    .invoking(key, 1),
                );
            }
        }
        McIpcSystem::new(
            (1..=4).map(|k| Cluster::new(format!("C{k}"), 1)).collect(),
            vec![Server::new("key", ms(2))],
            clients,
        )
    }

    /// A low-criticality client's sporadic reservation. Its budget is not an input of the
    /// bounds (the analysis sizes budgets), so any will do.
    fn low_budget() -> ReservationKind {
        ReservationKind::sporadic(ms(20), ms(100))
    }

    /// Section VI-B's three bounds for `T_1`, by hand:
    /// - MC-IPC, Theorem 1 with `m_k = 1`, `K = 4`: `(1 + 2 * 1 * 4) * 2 ms = 9 * 2 ms = 18 ms`
    ///   (the paper writes `(1 + 2m) L_key` with `m = 4`);
    /// - FIFO-IPC, "since there are n = 14 tasks in total": `14 * 2 ms = 28 ms`;
    /// - PRIO-IPC, "only the tasks in two higher-priority reservations can overlap with
    ///   `R^H_1`" (`R^H_2` and `R^H_4`; `R^H_3`'s slot is `[50, 100)`), one request each, plus
    ///   `T_1`'s own and one blocking lower-priority one: `(2 + 1 + 1) * 2 ms = 8 ms`.
    #[test]
    fn the_papers_case_study_bounds() {
        assert_eq!(invocation_budget_bound(1, 4, ms(2)), Some(ms(18)));
        assert_eq!(fifo_ipc_invocation_bound(14, ms(2)), Some(ms(28)));
        assert_eq!(prio_ipc_invocation_bound(2, true, ms(2)), Some(ms(8)));

        let report = analyse(&case_study(), GateProtocol::McIpc).unwrap();
        let first = &report.clients[0];
        assert_eq!(first.client, "R1");
        assert_eq!(
            first.servers,
            [ServerBounds {
                server: "key".into(),
                invocations: 1,
                operation_length: ms(2),
                mc_ipc: ms(18),
                fifo_ipc: ms(28),
                prio_ipc: ms(8),
            }]
        );
        // Budget sized for MC-IPC: 10 ms + 1 * 18 ms = 28 ms at both levels (no separate
        // estimates), within R^H_1's 50 ms slot.
        assert_eq!(first.budgets, PerCriticality::uniform(ms(28)));
        assert_eq!(first.provisioned_budget(), ms(28));
    }

    /// The other clients of the case study, by hand. MC-IPC: 18 ms for everyone (every
    /// cluster has one core). FIFO-IPC: 28 ms for everyone. PRIO-IPC:
    /// - `R^H_4` (highest): no higher request, one lower blocking: `(0 + 1 + 1) 2 = 4 ms`;
    /// - `R^H_3` in `[50, 100)`: `R^H_4`'s slot is disjoint, so `(0 + 1 + 1) 2 = 4 ms`;
    /// - `R^H_2` in `[0, 50)`: `R^H_4` overlaps, `R^H_3` does not: `(1 + 1 + 1) 2 = 6 ms`;
    /// - a low-criticality client (sporadic, overlapping everything): the four
    ///   high-criticality requests and the nine other EDF-ordered ones, nothing lower:
    ///   `(4 + 9 + 1 + 0) 2 = 28 ms`.
    #[test]
    fn the_case_studys_other_clients() {
        let report = analyse(&case_study(), GateProtocol::PrioIpc).unwrap();
        let prio: Vec<Duration> = report
            .clients
            .iter()
            .map(|client| client.servers[0].prio_ipc)
            .collect();
        assert_eq!(prio[..4], [ms(8), ms(6), ms(4), ms(4)]);
        assert!(prio[4..].iter().all(|&bound| bound == ms(28)));
        for client in &report.clients {
            assert_eq!(client.servers[0].mc_ipc, ms(18));
            assert_eq!(client.servers[0].fifo_ipc, ms(28));
        }
        // Budgets sized for PRIO-IPC: R^H_1 10 + 8 = 18 ms; a low-criticality 2 + 28 = 30 ms.
        assert_eq!(report.clients[0].budgets, PerCriticality::uniform(ms(18)));
        assert_eq!(report.clients[4].budgets, PerCriticality::uniform(ms(30)));
        // Sized for FIFO-IPC: 10 + 28 = 38 ms.
        let fifo = analyse(&case_study(), GateProtocol::FifoIpc).unwrap();
        assert_eq!(fifo.clients[0].provisioned_budget(), ms(38));
    }

    /// Phase 6: "R^H_4 launches 15 additional (correctly operating) tasks ... actually up to
    /// (15 + 2 + 1 + 1) L_key = 38 ms delay could be possible" under PRIO-IPC. FIFO-IPC:
    /// `(14 + 15) 2 = 58 ms`. MC-IPC stays at 18 ms: it depends on `m_k`, `K` and `L_q` only.
    #[test]
    fn phase_6_extra_tasks_break_prio_ipc_but_not_mc_ipc() {
        let mut system = case_study();
        let extra = system.reservations[3].clone();
        for number in 0..15 {
            let mut task = extra.clone();
            task.name = format!("R4 extra {number}");
            system.reservations.push(task);
        }
        let first = &analyse(&system, GateProtocol::McIpc).unwrap().clients[0];
        assert_eq!(first.servers[0].prio_ipc, ms(38));
        assert_eq!(first.servers[0].fifo_ipc, ms(58));
        assert_eq!(first.servers[0].mc_ipc, ms(18));
        assert_eq!(first.budgets, PerCriticality::uniform(ms(28)));
    }

    /// Phase 3: 16 more low-criticality reservations on each of the four cores. FIFO-IPC:
    /// `(14 + 64) 2 = 156 ms`; PRIO-IPC unchanged at 8 ms (they are lower-priority, and one
    /// blocking request was already counted); MC-IPC unchanged at 18 ms.
    #[test]
    fn phase_3_flood_breaks_fifo_ipc_only() {
        let mut system = case_study();
        for cluster in 0..4 {
            for number in 0..16 {
                system.reservations.push(
                    Reservation::new(
                        format!("flood {cluster} {number}"),
                        cluster,
                        Criticality::Low,
                        Priority(1),
                        low_budget(),
                        ms(100),
                    )
                    .invoking(0, 1),
                );
            }
        }
        let first = &analyse(&system, GateProtocol::McIpc).unwrap().clients[0];
        assert_eq!(first.servers[0].fifo_ipc, ms(156));
        assert_eq!(first.servers[0].prio_ipc, ms(8));
        assert_eq!(first.servers[0].mc_ipc, ms(18));
    }

    /// Section IV-C by hand: `e_i = 5 ms`, `m_k = 2`, `K = 3`, so `1 + 2 * 2 * 3 = 13`;
    /// `N_i1 = 2` with `L_1 = 1 ms` and `N_i2 = 1` with `L_2 = 500 us`:
    /// `5 + 2 * 13 * 1 + 1 * 13 * 0.5 = 5 + 26 + 6.5 = 37.5 ms`.
    #[test]
    fn budget_sizing_by_hand() {
        let servers = [
            ServerInvocations {
                invocations: 2,
                operation_length: ms(1),
                clusters: 3,
            },
            ServerInvocations {
                invocations: 1,
                operation_length: Duration::from_micros(500),
                clusters: 3,
            },
        ];
        assert_eq!(
            reservation_budget(ms(5), 2, &servers),
            Some(Duration::from_micros(37_500))
        );
        assert_eq!(reservation_budget(ms(5), 2, &[]), Some(ms(5)));
        // Uniform clusters of c cores, K = m / c: the factor is 1 + 2m. m = 6, c = 2, K = 3
        // gives 13 = 1 + 2 * 6, as above.
        assert_eq!(invocation_budget_bound(2, 3, ms(1)), Some(ms(13)));
    }

    /// Section VII by hand: `m_k = 1`, `e^L = 3 ms`, `e^H = 5 ms`, one server invoked
    /// `N = 2` times with `L^L = 1 ms`, `L^H = 2 ms`, `K^L = 2`, `K^H = 4`:
    /// - low: `3 + 2 * (1 + 2 * 2 * 1) * 1 = 3 + 2 * 5 = 13 ms`;
    /// - high: `5 + 2 * (1 + 2 * 4 * 1) * 2 = 5 + 2 * 18 = 41 ms`.
    ///
    /// A low-criticality reservation with the same parameters gets `(13 ms, 13 ms)`.
    #[test]
    fn criticality_budgets_by_hand() {
        let servers = [CriticalityInvocations {
            invocations: 2,
            operation_length: PerCriticality {
                low: ms(1),
                high: ms(2),
            },
            clusters: PerCriticality { low: 2, high: 4 },
        }];
        let execution = PerCriticality {
            low: ms(3),
            high: ms(5),
        };
        assert_eq!(
            criticality_budgets(Criticality::High, execution, 1, &servers),
            Some(PerCriticality {
                low: ms(13),
                high: ms(41),
            })
        );
        assert_eq!(
            criticality_budgets(Criticality::Low, execution, 1, &servers),
            Some(PerCriticality::uniform(ms(13)))
        );

        // The same through `analyse`, with four single-core clusters.
        let client = |name, cluster, criticality, priority| {
            Reservation::new(
                name,
                cluster,
                criticality,
                Priority(priority),
                low_budget(),
                ms(3),
            )
            .with_executions(ms(3), ms(5))
        };
        // H lists the server twice (a file cannot, a system built in code can): the
        // analysis adds the counts.
        let mut high = client("H", 0, Criticality::High, 2).invoking(0, 1);
        high.invocations.push(Invocation {
            server: 0,
            count: 1,
        });
        let system = McIpcSystem::new(
            (0..4).map(|k| Cluster::new(format!("C{k}"), 1)).collect(),
            vec![Server::new("S", ms(1))
                .with_operation_lengths(ms(1), ms(2))
                .invoked_from(2, 4)],
            vec![high, client("L", 1, Criticality::Low, 1).invoking(0, 2)],
        );
        let report = analyse(&system, GateProtocol::McIpc).unwrap();
        assert_eq!(report.clients[0].budgets.low, ms(13));
        assert_eq!(report.clients[0].budgets.high, ms(41));
        assert_eq!(report.clients[0].provisioned_budget(), ms(41));
        // Bounds at the client's own level: H uses (1 + 2 * 4) * 2 = 18 ms, L uses
        // (1 + 2 * 2) * 1 = 5 ms.
        assert_eq!(report.clients[0].servers[0].mc_ipc, ms(18));
        assert_eq!(report.clients[0].servers[0].invocations, 2);
        assert_eq!(report.clients[1].servers[0].mc_ipc, ms(5));
        assert_eq!(report.clients[1].budgets, PerCriticality::uniform(ms(13)));
    }

    #[test]
    fn overflow_and_dangling_references_are_reported() {
        assert_eq!(invocation_budget_bound(1, 1, Duration::MAX), None);
        assert_eq!(invocation_budget_bound(u64::MAX, 2, ms(1)), None);
        assert_eq!(fifo_ipc_invocation_bound(2, Duration::MAX), None);
        assert_eq!(prio_ipc_invocation_bound(u64::MAX, true, ms(1)), None);
        let huge = [ServerInvocations {
            invocations: 1,
            operation_length: ms(1),
            clusters: 1,
        }];
        assert_eq!(reservation_budget(Duration::MAX, 1, &huge), None);

        let mut system = case_study();
        system.reservations[1].cluster = 9;
        assert_eq!(
            analyse(&system, GateProtocol::McIpc),
            Err(McIpcError::UnknownCluster {
                client: 1,
                cluster: 9,
            })
        );
        let mut system = case_study();
        system.reservations[2] = system.reservations[2].clone().invoking(1, 1);
        assert_eq!(
            analyse(&system, GateProtocol::McIpc),
            Err(McIpcError::UnknownServer {
                client: 2,
                server: 1,
            })
        );
        let mut system = case_study();
        system.servers[0] = Server::new("key", Duration::MAX);
        assert_eq!(
            analyse(&system, GateProtocol::McIpc),
            Err(McIpcError::Overflow { client: 0 })
        );
    }

    /// `None` (overflow) orders above every duration.
    fn at_most(smaller: Option<Duration>, larger: Option<Duration>) -> bool {
        match (smaller, larger) {
            (_, None) => true,
            (None, Some(_)) => false,
            (Some(a), Some(b)) => a <= b,
        }
    }

    proptest! {
        #[test]
        fn theorem_1_is_monotone(
            cores in 0u64..1_000,
            clusters in 0u64..1_000,
            nanos in 0u64..1_000_000_000_000,
            more_cores in 0u64..1_000,
            more_clusters in 0u64..1_000,
            more_nanos in 0u64..1_000_000_000_000,
        ) {
            let length = Duration::from_nanos(nanos);
            let bound = invocation_budget_bound(cores, clusters, length);
            let more = invocation_budget_bound(cores + more_cores, clusters, length);
            prop_assert!(at_most(bound, more));
            let more = invocation_budget_bound(cores, clusters + more_clusters, length);
            prop_assert!(at_most(bound, more));
            prop_assert!(at_most(
                bound,
                invocation_budget_bound(cores, clusters, Duration::from_nanos(nanos + more_nanos)),
            ));
            // At least the request's own operation, L_q.
            prop_assert!(at_most(Some(length), bound));
        }

        #[test]
        fn one_cluster_of_one_core_is_three_operations(nanos in 0u64..=u64::MAX / 3) {
            let length = Duration::from_nanos(nanos);
            let three_operations = Duration::from_nanos(3 * nanos);
            prop_assert_eq!(invocation_budget_bound(1, 1, length), Some(three_operations));
        }

        #[test]
        fn uniform_clusters_give_one_plus_two_m(
            cluster_size in 1u64..64,
            clusters in 1u64..64,
            nanos in 0u64..1_000_000_000,
        ) {
            // Section IV-C: m_k = c and K = m / c give (1 + 2m) L_q.
            let cores = cluster_size * clusters;
            prop_assert_eq!(
                invocation_budget_bound(cluster_size, clusters, Duration::from_nanos(nanos)),
                Some(Duration::from_nanos((1 + 2 * cores) * nanos)),
            );
        }

        #[test]
        fn budgets_are_at_least_the_execution(
            execution in 0u64..1_000_000_000_000,
            cores in 0u64..64,
            terms in proptest::collection::vec((0u64..100, 0u64..1_000_000_000, 0u64..64), 0..8),
        ) {
            let servers: Vec<ServerInvocations> = terms
                .iter()
                .map(|&(invocations, nanos, clusters)| ServerInvocations {
                    invocations,
                    operation_length: Duration::from_nanos(nanos),
                    clusters,
                })
                .collect();
            let execution = Duration::from_nanos(execution);
            let budget = reservation_budget(execution, cores, &servers).unwrap();
            prop_assert!(budget >= execution);
            // Each term is N_iq times Theorem 1's bound.
            let expected = servers.iter().fold(execution, |sum, server| {
                sum.checked_add(
                    invocation_budget_bound(cores, server.clusters, server.operation_length)
                        .unwrap()
                        .checked_mul(server.invocations)
                        .unwrap(),
                )
                .unwrap()
            });
            prop_assert_eq!(budget, expected);
        }

        #[test]
        fn the_high_budget_is_at_least_the_low_one(
            high_criticality: bool,
            execution_low in 0u64..1_000_000_000,
            extra_execution in 0u64..1_000_000_000,
            cores in 1u64..16,
            terms in proptest::collection::vec(
                (0u64..50, 0u64..10_000_000, 0u64..10_000_000, 0u64..16, 0u64..16),
                0..6,
            ),
        ) {
            let servers: Vec<CriticalityInvocations> = terms
                .iter()
                .map(|&(invocations, length_low, extra_length, clusters_low, extra_clusters)| {
                    CriticalityInvocations {
                        invocations,
                        operation_length: PerCriticality {
                            low: Duration::from_nanos(length_low),
                            high: Duration::from_nanos(length_low + extra_length),
                        },
                        clusters: PerCriticality {
                            low: clusters_low,
                            high: clusters_low + extra_clusters,
                        },
                    }
                })
                .collect();
            let execution = PerCriticality {
                low: Duration::from_nanos(execution_low),
                high: Duration::from_nanos(execution_low + extra_execution),
            };
            let criticality = if high_criticality { Criticality::High } else { Criticality::Low };
            let budgets = criticality_budgets(criticality, execution, cores, &servers).unwrap();
            prop_assert!(budgets.high >= budgets.low);
            prop_assert!(budgets.low >= execution.low);
            if criticality == Criticality::Low {
                prop_assert_eq!(budgets.high, budgets.low);
            } else {
                prop_assert!(budgets.high >= execution.high);
            }
        }

        /// Isolation (section IV-C): under MC-IPC, adding clients anywhere changes neither an
        /// existing client's MC-IPC bound nor its budget, while FIFO-IPC's bound grows.
        #[test]
        fn mc_ipc_budgets_ignore_other_clients(
            extra in proptest::collection::vec((0usize..4, 0u8..20, 1u64..5), 1..30),
        ) {
            let before = analyse(&case_study(), GateProtocol::McIpc).unwrap();
            let mut system = case_study();
            for (index, &(cluster, priority, count)) in extra.iter().enumerate() {
                system.reservations.push(
                    Reservation::new(
                        format!("extra {index}"),
                        cluster,
                        Criticality::Low,
                        Priority(priority),
                        low_budget(),
                        ms(1),
                    )
                    .invoking(0, count),
                );
            }
            let after = analyse(&system, GateProtocol::McIpc).unwrap();
            for (old, new) in before.clients.iter().zip(&after.clients) {
                prop_assert_eq!(old.budgets, new.budgets);
                prop_assert_eq!(old.servers[0].mc_ipc, new.servers[0].mc_ipc);
                prop_assert!(new.servers[0].fifo_ipc > old.servers[0].fifo_ipc);
                prop_assert!(new.servers[0].prio_ipc >= old.servers[0].prio_ipc);
            }
        }
    }
}
