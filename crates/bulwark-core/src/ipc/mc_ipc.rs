//! The MC-IPC gate of one resource server (MC-IPC paper, section IV, Fig. 1), and the two
//! baselines of its case study: FIFO-IPC (one FIFO queue) and PRIO-IPC (one priority queue).
//!
//! The gate of server `S_q` has, per cluster `C_k` of `m_k` cores: a *local head*, a *head
//! queue* (FIFO, at most `m_k - 1` tasks), a *tail queue* (by reservation priority) and a
//! *local wait* flag; and globally a FIFO *global queue* (at most one task per cluster: its
//! local head) and a *background queue* for best-effort tasks, served only when no real-time
//! request waits. A reservation whose budget runs out has its request aborted (pruned) and
//! reissued on replenishment. Theorem 1: a request drains at most `(1 + 2 m_k K) L_q` of its
//! reservation's budget, whatever the other clients do. Comments cite Fig. 1's line numbers.
//!
//! Two readings where the extracted pseudo-code is ambiguous (its indentation is lost), each
//! chosen so that no request can wait forever:
//! - `mc_reply`, lines 39-40: the local head enters the global queue whether or not line 36
//!   promoted it, unless it is already there. After a best-effort request or an aborted one
//!   in service, the cluster's local head (set meanwhile, blocked by local wait at line 13)
//!   would otherwise never enter the global queue;
//! - `mc_abort`, lines 57-59: the head queue is refilled from the tail queue *before* its head
//!   becomes the local head, as `mc_reply` does at lines 37-38; in the extracted order, an
//!   empty head queue (always so with one core per cluster) would leave the tail's best task
//!   in the head queue with no local head. The new local head enters the global queue at
//!   once unless local wait is set, as at line 13; otherwise nothing would ever put it there.
//!
//! Priorities are *urgencies*: smaller is served first (an EDF deadline, or `255 - p` for a
//! fixed priority); equal urgencies are served in arrival order.
//!
//! Invariants (checked by [`McIpcGate::check`]): every waiting client is in exactly one
//! place; a head queue holds at most `m_k - 1` tasks; the global queue holds only local heads,
//! at most one per cluster; a non-empty head or tail queue implies a local head.

use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;

use crate::heap::IndexedHeap;
use crate::{TaskId, Work};

/// A client's kind and cluster, as `mc_invoke` needs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// A real-time task in a reservation of current priority `urgency` in cluster `cluster`.
    RealTime {
        /// The cluster `k`.
        cluster: usize,
        /// The reservation's current priority `Y_j` (smaller is more urgent).
        urgency: u64,
    },
    /// A best-effort task in cluster `cluster`.
    Background {
        /// The cluster `k`.
        cluster: usize,
    },
}

impl Client {
    fn cluster(self) -> usize {
        match self {
            Client::RealTime { cluster, .. } | Client::Background { cluster } => cluster,
        }
    }
}

/// Why a gate refused a call; a refused call changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum GateError {
    /// The client id is beyond the gate's capacity, or the cluster does not exist.
    Unknown = 1,
    /// The client already has a request at this gate.
    AlreadyWaiting = 2,
    /// The client has no request at this gate (or, for `reply`, none is being served).
    NotWaiting = 3,
    /// The server is already serving a request.
    Busy = 4,
}

/// What `mc_abort` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aborted {
    /// Pruned from a queue: the server no longer inherits the reservation's budget (lines
    /// 47, 51, and the global-queue case).
    Pruned,
    /// Already being served, so it could not be pruned: local wait is set instead (line 56)
    /// and the request completes normally.
    InService,
}

/// The operations every IPC gate of the case study offers, so one platform drives all three.
pub trait IpcGate {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// `mc_invoke`: `task` submits a request (lines 7-20). The server may consume the
    /// client's reservation budget from now on (bandwidth inheritance, line 19).
    fn invoke(&mut self, task: TaskId, client: Client, work: &mut Work) -> Result<(), GateError>;
    /// `mc_wait`: the server takes the next request, or `None` if none waits (lines 22-30).
    fn wait(&mut self, work: &mut Work) -> Result<Option<TaskId>, GateError>;
    /// `mc_reply`: the request being served is done; returns its client (lines 32-42).
    fn reply(&mut self, work: &mut Work) -> Result<TaskId, GateError>;
    /// `mc_abort`: `task`'s reservation ran out of budget (lines 44-59).
    fn abort(&mut self, task: TaskId, work: &mut Work) -> Result<Aborted, GateError>;
    /// The request being served.
    fn served(&self) -> Option<TaskId>;
    /// Checks the gate's invariants.
    fn check(&self) -> Result<(), &'static str>;
}

/// Where a client's request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Idle,
    Background,
    /// The local head of its cluster, not (yet) in the global queue.
    LocalHead,
    Global,
    Head,
    Tail,
    Served,
}

#[derive(Clone, Debug)]
struct Cluster {
    cores: usize,
    local_head: Option<TaskId>,
    head_queue: VecDeque<TaskId>,
    tail_queue: IndexedHeap<u128>,
    local_wait: bool,
}

/// The MC-IPC gate of one server.
#[derive(Clone, Debug)]
pub struct McIpcGate {
    clusters: Vec<Cluster>,
    global_queue: VecDeque<TaskId>,
    background_queue: VecDeque<TaskId>,
    currently_served: Option<TaskId>,
    place: Vec<Place>,
    cluster_of: Vec<usize>,
    arrivals: u64,
}

/// Removes `task` from a FIFO queue, reporting the work as it is: the entries the scan
/// examines (up to and including `task`, or all of them if it is absent) plus the entries
/// `VecDeque::remove` shifts to close the gap (those on the shorter side).
fn remove(queue: &mut VecDeque<TaskId>, task: TaskId, work: &mut Work) -> bool {
    let len = queue.len();
    match queue.iter().position(|&t| t == task) {
        Some(at) => {
            queue.remove(at);
            let shifted = at.min(len - 1 - at);
            work.queue_entries_moved += (at + 1 + shifted) as u32;
            true
        }
        None => {
            work.queue_entries_moved += len as u32;
            false
        }
    }
}

impl McIpcGate {
    /// A gate for client ids `0..capacity` over clusters of `cores[k]` cores each.
    pub fn new(capacity: usize, cores: &[usize]) -> Self {
        McIpcGate {
            clusters: cores
                .iter()
                .map(|&m| Cluster {
                    cores: m.max(1),
                    local_head: None,
                    head_queue: VecDeque::with_capacity(m.saturating_sub(1)),
                    tail_queue: IndexedHeap::with_capacity(capacity),
                    local_wait: false,
                })
                .collect(),
            global_queue: VecDeque::with_capacity(cores.len()),
            background_queue: VecDeque::with_capacity(capacity),
            currently_served: None,
            place: vec![Place::Idle; capacity],
            cluster_of: vec![0; capacity],
            arrivals: 0,
        }
    }

    /// Cluster `k`'s local head.
    pub fn local_head(&self, k: usize) -> Option<TaskId> {
        self.clusters.get(k)?.local_head
    }

    /// Cluster `k`'s local wait flag.
    pub fn local_wait(&self, k: usize) -> bool {
        self.clusters.get(k).is_some_and(|c| c.local_wait)
    }

    /// Cluster `k`'s head queue, in order.
    pub fn head_queue(&self, k: usize) -> Vec<TaskId> {
        self.clusters
            .get(k)
            .map_or_else(Vec::new, |c| c.head_queue.iter().copied().collect())
    }

    /// The number of tasks in cluster `k`'s tail queue.
    pub fn tail_len(&self, k: usize) -> usize {
        self.clusters.get(k).map_or(0, |c| c.tail_queue.len())
    }

    /// The global queue, in order.
    pub fn global_queue(&self) -> Vec<TaskId> {
        self.global_queue.iter().copied().collect()
    }

    /// The background queue, in order.
    pub fn background_queue(&self) -> Vec<TaskId> {
        self.background_queue.iter().copied().collect()
    }

    /// `move_head_to_tail(tail_queue[k], head_queue[k])`: the most urgent task of the tail
    /// queue moves to the end of the head queue.
    fn promote_tail(&mut self, k: usize, work: &mut Work) {
        let c = &mut self.clusters[k];
        if let Some((task, _)) = c.tail_queue.pop() {
            work.heap_operations += 1;
            c.head_queue.push_back(task);
            self.place[task.index()] = Place::Head;
        }
    }

    /// `local_head[k] <- dequeue_head_or_null(head_queue[k])`.
    fn next_local_head(&mut self, k: usize) {
        let next = self.clusters[k].head_queue.pop_front();
        self.clusters[k].local_head = next;
        if let Some(t) = next {
            self.place[t.index()] = Place::LocalHead;
        }
    }

    /// Puts cluster `k`'s local head in the global queue if it is not there (see the module
    /// note on lines 39-40 and 57-59).
    fn enter_global(&mut self, k: usize, work: &mut Work) {
        if let Some(t) = self.clusters[k].local_head {
            if self.place[t.index()] == Place::LocalHead {
                self.global_queue.push_back(t);
                self.place[t.index()] = Place::Global;
                work.queue_entries_moved += 1;
            }
        }
    }

    fn waiting(&self, task: TaskId) -> Result<Place, GateError> {
        match self.place.get(task.index()) {
            None => Err(GateError::Unknown),
            Some(Place::Idle) => Err(GateError::NotWaiting),
            Some(&p) => Ok(p),
        }
    }

    /// The implementation's opportunistic transfer (section V): a pruned request is moved to
    /// the background queue instead of being cancelled, and may be served if the server runs
    /// out of real-time clients. Returns false (nothing changed) if `task` is waiting or being
    /// served already.
    pub fn transfer_to_background(&mut self, task: TaskId, cluster: usize) -> bool {
        if cluster >= self.clusters.len() || self.place.get(task.index()) != Some(&Place::Idle) {
            return false;
        }
        self.background_queue.push_back(task);
        self.place[task.index()] = Place::Background;
        self.cluster_of[task.index()] = cluster;
        true
    }

    /// On replenishment, a request still pending in the background queue is reissued with its
    /// proper priority: taken out of the background queue and invoked anew. False if it was
    /// not pending there (served meanwhile, or never transferred).
    pub fn reissue(&mut self, task: TaskId, client: Client, work: &mut Work) -> bool {
        if self.place.get(task.index()) != Some(&Place::Background) {
            return false;
        }
        remove(&mut self.background_queue, task, work);
        self.place[task.index()] = Place::Idle;
        self.invoke(task, client, work).is_ok()
    }
}

impl IpcGate for McIpcGate {
    fn name(&self) -> &'static str {
        "mc-ipc"
    }

    fn invoke(&mut self, task: TaskId, client: Client, work: &mut Work) -> Result<(), GateError> {
        let k = client.cluster();
        match self.place.get(task.index()) {
            None => return Err(GateError::Unknown),
            Some(Place::Idle) => {}
            Some(_) => return Err(GateError::AlreadyWaiting),
        }
        if k >= self.clusters.len() {
            return Err(GateError::Unknown);
        }
        self.cluster_of[task.index()] = k;
        work.queue_entries_moved += 1;
        match client {
            // Lines 8-9.
            Client::Background { .. } => {
                self.background_queue.push_back(task);
                self.place[task.index()] = Place::Background;
            }
            Client::RealTime { urgency, .. } => {
                let c = &mut self.clusters[k];
                if c.local_head.is_none() {
                    // Lines 11-14.
                    c.local_head = Some(task);
                    self.place[task.index()] = Place::LocalHead;
                    if !c.local_wait {
                        self.global_queue.push_back(task);
                        self.place[task.index()] = Place::Global;
                    }
                } else if c.head_queue.len() < c.cores - 1 {
                    // Lines 15-16.
                    c.head_queue.push_back(task);
                    self.place[task.index()] = Place::Head;
                } else {
                    // Lines 17-18: by priority, then arrival.
                    let key = (urgency as u128) << 64 | self.arrivals as u128;
                    self.arrivals += 1;
                    c.tail_queue.upsert(task, key);
                    work.heap_operations += 1;
                    self.place[task.index()] = Place::Tail;
                }
            }
        }
        // Lines 19-20 (bandwidth inheritance, suspension) are the platform's.
        Ok(())
    }

    fn wait(&mut self, work: &mut Work) -> Result<Option<TaskId>, GateError> {
        if self.currently_served.is_some() {
            return Err(GateError::Busy);
        }
        // Lines 24-29: real-time requests first; a best-effort one blocks its cluster.
        let served = match self.global_queue.pop_front() {
            Some(t) => t,
            None => match self.background_queue.pop_front() {
                Some(t) => {
                    let k = self.cluster_of[t.index()];
                    self.clusters[k].local_wait = true;
                    t
                }
                None => return Ok(None),
            },
        };
        work.queue_entries_moved += 1;
        self.place[served.index()] = Place::Served;
        self.currently_served = Some(served);
        Ok(Some(served))
    }

    fn reply(&mut self, work: &mut Work) -> Result<TaskId, GateError> {
        // Line 33.
        let task = self.currently_served.ok_or(GateError::NotWaiting)?;
        let k = self.cluster_of[task.index()];
        // Line 35.
        self.currently_served = None;
        self.place[task.index()] = Place::Idle;
        self.clusters[k].local_wait = false;
        // Lines 36-38.
        if self.clusters[k].local_head == Some(task) {
            self.promote_tail(k, work);
            self.next_local_head(k);
        }
        // Lines 39-40.
        self.enter_global(k, work);
        // Lines 41-42 (stop inheritance, resume the client) are the platform's.
        Ok(task)
    }

    fn abort(&mut self, task: TaskId, work: &mut Work) -> Result<Aborted, GateError> {
        let place = self.waiting(task)?;
        let k = self.cluster_of[task.index()];
        let outcome = match place {
            Place::Idle => return Err(GateError::NotWaiting),
            Place::Background => {
                // Best-effort tasks have no budget to exhaust; a transferred request is
                // simply withdrawn.
                remove(&mut self.background_queue, task, work);
                Aborted::Pruned
            }
            // Lines 45-47.
            Place::Tail => {
                self.clusters[k].tail_queue.remove(task);
                work.heap_operations += 1;
                Aborted::Pruned
            }
            // Lines 48-51.
            Place::Head => {
                remove(&mut self.clusters[k].head_queue, task, work);
                self.promote_tail(k, work);
                Aborted::Pruned
            }
            // Lines 52-59.
            Place::Global | Place::LocalHead | Place::Served => {
                let outcome = if place == Place::Served {
                    // Line 56.
                    self.clusters[k].local_wait = true;
                    Aborted::InService
                } else {
                    // Lines 53-54.
                    remove(&mut self.global_queue, task, work);
                    Aborted::Pruned
                };
                // Lines 57-59, refilling the head queue before taking its head, as mc_reply
                // does (lines 37-38; see the module note).
                if self.clusters[k].local_head == Some(task) {
                    self.promote_tail(k, work);
                    self.next_local_head(k);
                    if !self.clusters[k].local_wait {
                        self.enter_global(k, work);
                    }
                }
                outcome
            }
        };
        if outcome == Aborted::Pruned {
            self.place[task.index()] = Place::Idle;
        }
        Ok(outcome)
    }

    fn served(&self) -> Option<TaskId> {
        self.currently_served
    }

    fn check(&self) -> Result<(), &'static str> {
        let mut count = vec![0u32; self.place.len()];
        let mut seen = |t: TaskId| {
            if let Some(c) = count.get_mut(t.index()) {
                *c += 1;
            }
        };
        self.global_queue.iter().copied().for_each(&mut seen);
        self.background_queue.iter().copied().for_each(&mut seen);
        if let Some(t) = self.currently_served {
            seen(t);
        }
        for (k, c) in self.clusters.iter().enumerate() {
            if c.head_queue.len() > c.cores - 1 {
                return Err("a head queue holds at most m_k - 1 tasks");
            }
            if (!c.head_queue.is_empty() || !c.tail_queue.is_empty()) && c.local_head.is_none() {
                return Err("a non-empty head or tail queue implies a local head");
            }
            c.head_queue.iter().copied().for_each(&mut seen);
            c.tail_queue.check()?;
            if let Some(h) = c.local_head {
                if self.place[h.index()] == Place::LocalHead {
                    seen(h);
                }
                if self.cluster_of[h.index()] != k {
                    return Err("a local head belongs to its cluster");
                }
            }
            if self
                .global_queue
                .iter()
                .filter(|&&t| self.cluster_of[t.index()] == k)
                .count()
                > 1
            {
                return Err("the global queue holds at most one task per cluster");
            }
        }
        for (i, place) in self.place.iter().enumerate() {
            let in_tail = self
                .clusters
                .iter()
                .any(|c| c.tail_queue.contains(TaskId(i as u32)));
            let expected = u32::from(*place != Place::Idle && *place != Place::Tail);
            if count[i] != expected || in_tail != (*place == Place::Tail) {
                return Err("every waiting client is in exactly one place");
            }
        }
        for &t in &self.global_queue {
            if self.clusters[self.cluster_of[t.index()]].local_head != Some(t) {
                return Err("the global queue holds only local heads");
            }
        }
        Ok(())
    }
}

/// FIFO-IPC: one FIFO queue for every client, real-time or not (the MBWI-like baseline).
#[derive(Clone, Debug)]
pub struct FifoGate {
    queue: VecDeque<TaskId>,
    waiting: Vec<bool>,
    served: Option<TaskId>,
}

impl FifoGate {
    /// A gate for client ids `0..capacity`.
    pub fn new(capacity: usize) -> Self {
        FifoGate {
            queue: VecDeque::with_capacity(capacity),
            waiting: vec![false; capacity],
            served: None,
        }
    }
}

impl IpcGate for FifoGate {
    fn name(&self) -> &'static str {
        "fifo-ipc"
    }

    fn invoke(&mut self, task: TaskId, _client: Client, work: &mut Work) -> Result<(), GateError> {
        match self.waiting.get(task.index()) {
            None => Err(GateError::Unknown),
            Some(true) => Err(GateError::AlreadyWaiting),
            Some(false) => {
                self.waiting[task.index()] = true;
                self.queue.push_back(task);
                work.queue_entries_moved += 1;
                Ok(())
            }
        }
    }

    fn wait(&mut self, work: &mut Work) -> Result<Option<TaskId>, GateError> {
        if self.served.is_some() {
            return Err(GateError::Busy);
        }
        self.served = self.queue.pop_front();
        work.queue_entries_moved += u32::from(self.served.is_some());
        Ok(self.served)
    }

    fn reply(&mut self, _work: &mut Work) -> Result<TaskId, GateError> {
        let task = self.served.take().ok_or(GateError::NotWaiting)?;
        self.waiting[task.index()] = false;
        Ok(task)
    }

    fn abort(&mut self, task: TaskId, work: &mut Work) -> Result<Aborted, GateError> {
        match self.waiting.get(task.index()) {
            None => return Err(GateError::Unknown),
            Some(false) => return Err(GateError::NotWaiting),
            Some(true) => {}
        }
        if self.served == Some(task) {
            return Ok(Aborted::InService);
        }
        remove(&mut self.queue, task, work);
        self.waiting[task.index()] = false;
        Ok(Aborted::Pruned)
    }

    fn served(&self) -> Option<TaskId> {
        self.served
    }

    fn check(&self) -> Result<(), &'static str> {
        let queued = self.queue.len() + usize::from(self.served.is_some());
        if queued != self.waiting.iter().filter(|&&w| w).count() {
            return Err("every waiting client is queued or served once");
        }
        Ok(())
    }
}

/// PRIO-IPC: one priority queue by reservation urgency (as Fiasco.OC's IPC), best-effort
/// clients last.
#[derive(Clone, Debug)]
pub struct PrioGate {
    queue: IndexedHeap<u128>,
    served: Option<TaskId>,
    arrivals: u64,
}

impl PrioGate {
    /// A gate for client ids `0..capacity`.
    pub fn new(capacity: usize) -> Self {
        PrioGate {
            queue: IndexedHeap::with_capacity(capacity),
            served: None,
            arrivals: 0,
        }
    }
}

impl IpcGate for PrioGate {
    fn name(&self) -> &'static str {
        "prio-ipc"
    }

    fn invoke(&mut self, task: TaskId, client: Client, work: &mut Work) -> Result<(), GateError> {
        if task.index() >= self.queue.capacity() {
            return Err(GateError::Unknown);
        }
        if self.queue.contains(task) || self.served == Some(task) {
            return Err(GateError::AlreadyWaiting);
        }
        let urgency = match client {
            Client::RealTime { urgency, .. } => urgency,
            Client::Background { .. } => u64::MAX,
        };
        self.queue
            .upsert(task, (urgency as u128) << 64 | self.arrivals as u128);
        self.arrivals += 1;
        work.heap_operations += 1;
        Ok(())
    }

    fn wait(&mut self, work: &mut Work) -> Result<Option<TaskId>, GateError> {
        if self.served.is_some() {
            return Err(GateError::Busy);
        }
        self.served = self.queue.pop().map(|(t, _)| t);
        work.heap_operations += u32::from(self.served.is_some());
        Ok(self.served)
    }

    fn reply(&mut self, _work: &mut Work) -> Result<TaskId, GateError> {
        self.served.take().ok_or(GateError::NotWaiting)
    }

    fn abort(&mut self, task: TaskId, work: &mut Work) -> Result<Aborted, GateError> {
        if self.served == Some(task) {
            return Ok(Aborted::InService);
        }
        if task.index() >= self.queue.capacity() {
            return Err(GateError::Unknown);
        }
        self.queue.remove(task).ok_or(GateError::NotWaiting)?;
        work.heap_operations += 1;
        Ok(Aborted::Pruned)
    }

    fn served(&self) -> Option<TaskId> {
        self.served
    }

    fn check(&self) -> Result<(), &'static str> {
        self.queue.check()?;
        if self.served.is_some_and(|t| self.queue.contains(t)) {
            return Err("the served client is not queued");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn rt(cluster: usize, urgency: u64) -> Client {
        Client::RealTime { cluster, urgency }
    }

    fn ids(v: &[u32]) -> Vec<TaskId> {
        v.iter().map(|&i| TaskId(i)).collect()
    }

    /// Two clusters: cluster 0 of 2 cores (head queue of 1), cluster 1 of 1 core (no head
    /// queue). Every branch of mc_invoke, mc_wait and mc_reply, in order.
    #[test]
    fn invoke_wait_and_reply_follow_fig_1() {
        let mut g = McIpcGate::new(8, &[2, 1]);
        let mut w = Work::default();
        let t = TaskId;
        // Lines 11-14: first of cluster 0 becomes its local head and enters the global queue.
        g.invoke(t(0), rt(0, 30), &mut w).unwrap();
        assert_eq!((g.local_head(0), g.global_queue()), (Some(t(0)), ids(&[0])));
        // Lines 15-16: the second fits in the head queue (m_0 - 1 = 1).
        g.invoke(t(1), rt(0, 40), &mut w).unwrap();
        assert_eq!(g.head_queue(0), ids(&[1]));
        // Lines 17-18: the rest go to the tail queue by priority.
        g.invoke(t(2), rt(0, 50), &mut w).unwrap();
        g.invoke(t(3), rt(0, 10), &mut w).unwrap();
        assert_eq!(g.tail_len(0), 2);
        // Cluster 1 (one core): a local head, then straight to the tail queue.
        g.invoke(t(4), rt(1, 99), &mut w).unwrap();
        g.invoke(t(5), rt(1, 1), &mut w).unwrap();
        assert_eq!((g.head_queue(1), g.tail_len(1)), (Vec::new(), 1));
        // Lines 8-9: best effort.
        g.invoke(t(6), Client::Background { cluster: 1 }, &mut w)
            .unwrap();
        assert_eq!(g.background_queue(), ids(&[6]));
        assert_eq!(
            g.invoke(t(6), rt(1, 1), &mut w),
            Err(GateError::AlreadyWaiting)
        );
        assert_eq!(g.invoke(t(8), rt(1, 1), &mut w), Err(GateError::Unknown));
        assert_eq!(g.invoke(t(7), rt(2, 1), &mut w), Err(GateError::Unknown));
        g.check().unwrap();
        // Line 29: the global queue first, round-robin over clusters.
        assert_eq!(g.wait(&mut w), Ok(Some(t(0))));
        assert_eq!(g.wait(&mut w), Err(GateError::Busy));
        // Lines 36-40: tail's most urgent (3) to the head queue, head (1) becomes local head
        // and enters the global queue behind cluster 1's.
        assert_eq!(g.reply(&mut w), Ok(t(0)));
        assert_eq!((g.local_head(0), g.head_queue(0)), (Some(t(1)), ids(&[3])));
        assert_eq!(g.global_queue(), ids(&[4, 1]));
        let order: Vec<TaskId> = core::iter::from_fn(|| {
            let s = g.wait(&mut w).ok().flatten()?;
            assert_eq!(g.reply(&mut w), Ok(s));
            g.check().unwrap();
            Some(s)
        })
        .collect();
        // Real-time requests before the best-effort one; within cluster 0, FIFO head queue
        // then priority (3 before 2); clusters alternate.
        assert_eq!(order, ids(&[4, 1, 5, 3, 2, 6]));
        assert_eq!(g.reply(&mut w), Err(GateError::NotWaiting));
    }

    /// Lines 24-27 and 35-40: while a best-effort request is served its cluster is blocked
    /// (local wait), so a real-time request arriving then becomes local head without entering
    /// the global queue; the reply lets it in.
    #[test]
    fn a_best_effort_request_blocks_its_cluster_until_replied() {
        let mut g = McIpcGate::new(4, &[1, 1]);
        let mut w = Work::default();
        g.invoke(TaskId(0), Client::Background { cluster: 0 }, &mut w)
            .unwrap();
        assert_eq!(g.wait(&mut w), Ok(Some(TaskId(0))));
        assert!(g.local_wait(0));
        g.invoke(TaskId(1), rt(0, 5), &mut w).unwrap();
        assert_eq!(
            (g.local_head(0), g.global_queue()),
            (Some(TaskId(1)), Vec::new())
        );
        g.invoke(TaskId(2), rt(1, 5), &mut w).unwrap();
        assert_eq!(
            g.global_queue(),
            ids(&[2]),
            "other clusters are not blocked"
        );
        g.reply(&mut w).unwrap();
        assert!(!g.local_wait(0));
        assert_eq!(g.global_queue(), ids(&[2, 1]));
        g.check().unwrap();
    }

    /// Every branch of mc_abort: tail (45-47), head with a promotion (48-51), global with a
    /// new local head (53-54, 57-59), and in service (56): local wait until the reply.
    #[test]
    fn abort_prunes_from_each_queue() {
        let mut g = McIpcGate::new(8, &[2]);
        let mut w = Work::default();
        for (i, u) in [(0, 9), (1, 9), (2, 7), (3, 3)] {
            g.invoke(TaskId(i), rt(0, u), &mut w).unwrap();
        }
        // 0 local head (global), 1 head queue, 3 and 2 in the tail queue.
        assert_eq!(g.abort(TaskId(2), &mut w), Ok(Aborted::Pruned));
        assert_eq!(g.tail_len(0), 1);
        assert_eq!(g.abort(TaskId(1), &mut w), Ok(Aborted::Pruned));
        assert_eq!((g.head_queue(0), g.tail_len(0)), (ids(&[3]), 0));
        // Aborting the local head in the global queue: 3 becomes local head and enters.
        assert_eq!(g.abort(TaskId(0), &mut w), Ok(Aborted::Pruned));
        assert_eq!(
            (g.local_head(0), g.global_queue()),
            (Some(TaskId(3)), ids(&[3]))
        );
        g.check().unwrap();
        // In service: cannot be pruned; local wait blocks the cluster.
        g.invoke(TaskId(4), rt(0, 1), &mut w).unwrap();
        assert_eq!(g.wait(&mut w), Ok(Some(TaskId(3))));
        assert_eq!(g.abort(TaskId(3), &mut w), Ok(Aborted::InService));
        assert!(g.local_wait(0));
        assert_eq!(
            (g.local_head(0), g.global_queue()),
            (Some(TaskId(4)), Vec::new())
        );
        assert_eq!(g.reply(&mut w), Ok(TaskId(3)));
        assert_eq!(g.global_queue(), ids(&[4]));
        assert_eq!(g.abort(TaskId(3), &mut w), Err(GateError::NotWaiting));
        g.check().unwrap();
    }

    /// The opportunistic transfer: a pruned request waits in the background queue and is
    /// reissued with its priority on replenishment if still pending.
    /// A linear removal reports its real length. Five clients queue at a FIFO gate, the
    /// server takes client 0, so the queue holds 1, 2, 3, 4. Aborting client 4 (the last)
    /// examines all 4 entries and shifts none; aborting client 1 (now first of 1, 2, 3)
    /// examines 1 and shifts none (nothing before it); aborting client 3 (last of 2, 3)
    /// examines 2. Aborting client 2 when it is alone examines 1.
    #[test]
    fn a_linear_removal_reports_its_length() {
        let mut g = FifoGate::new(5);
        let mut w = Work::default();
        for client in 0..5 {
            g.invoke(TaskId(client), rt(0, 1), &mut w).unwrap();
        }
        assert_eq!(g.wait(&mut w), Ok(Some(TaskId(0))));
        let moved = |g: &mut FifoGate, client: u32| {
            let mut w = Work::default();
            assert_eq!(g.abort(TaskId(client), &mut w), Ok(Aborted::Pruned));
            w.queue_entries_moved
        };
        assert_eq!(moved(&mut g, 4), 4);
        assert_eq!(moved(&mut g, 1), 1);
        assert_eq!(moved(&mut g, 3), 2);
        assert_eq!(moved(&mut g, 2), 1);
        g.check().unwrap();
    }

    #[test]
    fn pruned_requests_wait_in_the_background_and_are_reissued() {
        let mut g = McIpcGate::new(4, &[1]);
        let mut w = Work::default();
        g.invoke(TaskId(0), rt(0, 5), &mut w).unwrap();
        g.invoke(TaskId(1), rt(0, 6), &mut w).unwrap();
        g.abort(TaskId(1), &mut w).unwrap();
        assert!(g.transfer_to_background(TaskId(1), 0));
        assert!(
            !g.transfer_to_background(TaskId(0), 0),
            "0 is still waiting"
        );
        assert_eq!(g.background_queue(), ids(&[1]));
        assert!(g.reissue(TaskId(1), rt(0, 6), &mut w));
        assert_eq!((g.background_queue(), g.tail_len(0)), (Vec::new(), 1));
        assert!(!g.reissue(TaskId(1), rt(0, 6), &mut w));
        g.check().unwrap();
    }

    #[test]
    fn the_baselines_serve_in_fifo_and_priority_order() {
        let mut w = Work::default();
        let mut fifo = FifoGate::new(4);
        let mut prio = PrioGate::new(4);
        for (i, u) in [(0, 9), (1, 3), (2, 5)] {
            fifo.invoke(TaskId(i), rt(0, u), &mut w).unwrap();
            prio.invoke(TaskId(i), rt(0, u), &mut w).unwrap();
        }
        prio.invoke(TaskId(3), Client::Background { cluster: 0 }, &mut w)
            .unwrap();
        let drain = |g: &mut dyn IpcGate, w: &mut Work| -> Vec<TaskId> {
            core::iter::from_fn(|| {
                let s = g.wait(w).ok().flatten()?;
                g.reply(w).ok()?;
                Some(s)
            })
            .collect()
        };
        assert_eq!(drain(&mut fifo, &mut w), ids(&[0, 1, 2]));
        assert_eq!(drain(&mut prio, &mut w), ids(&[1, 2, 0, 3]));
        fifo.check().unwrap();
        prio.check().unwrap();
    }

    #[derive(Clone, Debug)]
    enum Op {
        Invoke(u32, usize, u64, bool),
        Wait,
        Reply,
        Abort(u32),
        Transfer(u32, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..10, 0usize..3, 0u64..5, any::<bool>())
                .prop_map(|(t, k, u, b)| Op::Invoke(t, k, u, b)),
            Just(Op::Wait),
            Just(Op::Reply),
            (0u32..10).prop_map(Op::Abort),
            (0u32..10, 0usize..3).prop_map(|(t, k)| Op::Transfer(t, k)),
        ]
    }

    proptest! {
        /// Any sequence of gate operations: no panic, invariants after each, a refused call
        /// changes nothing, and a request never waits while the server idles (after a wait
        /// that returns None, no request is pending).
        #[test]
        fn the_gate_stays_consistent(ops in proptest::collection::vec(op(), 0..300)) {
            let mut g = McIpcGate::new(9, &[1, 2, 3]);
            let mut w = Work::default();
            for op in ops {
                let before = format!("{g:?}");
                let refused = match op {
                    Op::Invoke(t, k, u, b) => {
                        let client = if b { Client::Background { cluster: k } } else { rt(k, u) };
                        g.invoke(TaskId(t), client, &mut w).is_err()
                    }
                    Op::Wait => match g.wait(&mut w) {
                        Ok(None) => {
                            prop_assert!(g.global_queue().is_empty() && g.background_queue().is_empty());
                            for k in 0..3 {
                                prop_assert_eq!(g.local_head(k), None, "a waiting local head would starve");
                            }
                            false
                        }
                        Ok(Some(_)) => false,
                        Err(_) => true,
                    },
                    Op::Reply => g.reply(&mut w).is_err(),
                    Op::Abort(t) => g.abort(TaskId(t), &mut w).is_err(),
                    Op::Transfer(t, k) => !g.transfer_to_background(TaskId(t), k),
                };
                if refused {
                    prop_assert_eq!(before, format!("{g:?}"));
                }
                prop_assert!(g.check().is_ok(), "{:?}", g.check());
            }
        }
    }
}
