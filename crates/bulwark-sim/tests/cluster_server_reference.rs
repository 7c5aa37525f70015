//! The scenario machine against an independent reference *with a shared resource server*:
//! one sequential server `S` reached through an IPC gate (FIFO-IPC, PRIO-IPC or MC-IPC),
//! clients in sporadic (low- or high-criticality) and best-effort reservations of one or two
//! clusters of one or two cores, by fixed priority or by EDF. The reference is a plain
//! millisecond-by-millisecond simulation written here from the MC-IPC paper (sections
//! III-VII) and the documented rules of the earlier MC-IPC machine that this machine replaced,
//! sharing no code with the machine, the clustered scheduler or the gates; it gives every
//! job's release and completion, every completed invocation, every abort, every
//! reservation's drained budget and every change of a cluster's mode. Checked here: the
//! reference itself on cases worked by hand; the scenario machine's jobs, invocations and
//! drains on those cases (it records no aborts nor mode changes); and how often its jobs are
//! the reference's on random systems (a ratchet, until they always are).
//!
//! A reservation holds one or more periodic tasks (a client that `shares` joins the
//! reservation of the client before it), each of whose jobs computes `a`, invokes `S` for an
//! operation of `b`, computes `c` and sleeps until its next period (`a`, `c` may be 0).
//! Rules covered:
//!
//! - sporadic reservations (section III): a reservation is active while one of its tasks has
//!   a pending job; `B_j` is set to `e` when a job is released while `R_j` is inactive, no
//!   sooner than `p` after the last replenishment; what is left is discarded when its last
//!   pending job completes; an active reservation out of budget is replenished then, or `p`
//!   after its last replenishment if later (a replenishment at the instant its last job
//!   completes is moot: completions come first). Each cluster selects its `m_k` most urgent
//!   active reservations with budget (fixed priority or EDF deadline `t + p`, ties by id); a
//!   selected reservation keeps its core, newcomers take the lowest free cores in id order;
//! - best-effort reservations (section III): no budget, so never exhausted nor aborted;
//!   eligible while active, selected after every sporadic reservation (ties by id); the time
//!   one is selected counts as drained (the machine's A2 accounting);
//! - A2: a selected reservation drains at unit speed whatever it dispatches, even nothing;
//! - dispatch and bandwidth inheritance (section III): a selected reservation dispatches its
//!   first ready task in task order; if none, it dispatches `S` with its budget when one of
//!   its tasks waits for `S`, `S` is serving a request (any client's) and is not "already
//!   executing on another processor"; `S` keeps the core it ran on while the reservation
//!   selected there has no ready task and one of its tasks waits on it; otherwise the
//!   reservation idles;
//! - slack (section III: "tasks from other reservations may be dispatched instead"): an idle
//!   core runs the most urgent ready task (ties in task order) of a reservation of its
//!   cluster that is eligible (best-effort ones included) but not selected, so never another
//!   task of a selected reservation; that time is charged to nobody. Modelled, not avoided;
//! - the gates: FIFO-IPC serves in arrival order, PRIO-IPC by the client reservation's
//!   urgency at (re)issue (best-effort clients last; ties in arrival order), MC-IPC as in
//!   Fig. 1 (local head, head queue of at most `m_k - 1`, tail queue by urgency, local wait,
//!   global FIFO queue) with the gate's two documented readings of lines 39-40 and 57-59,
//!   and its FIFO background queue (lines 8-9, 24-27): best-effort requests, served only when
//!   the global queue is empty, setting the client's cluster's local wait until the reply;
//! - mc_abort (section IV): a waiting request is aborted when its reservation exhausts its
//!   budget or changes priority with its cluster's mode after the request was issued, or has
//!   no budget when the instant's steps, releases and completions are done; a queued one is
//!   pruned, one in service completes normally (MC-IPC sets local wait); a pruned request is
//!   reissued, with its urgency of then, as soon as the reservation has budget again
//!   (`PrunedRequests::Reissue`, and with FIFO-IPC or PRIO-IPC, which have no background
//!   queue, `TransferToBackground` too);
//! - `PrunedRequests::TransferToBackground` with MC-IPC (section V): a pruned request moves
//!   to the end of the background queue, its task still waiting; served from there, it
//!   completes, exhausted, never reissued; otherwise, as soon as the reservation has budget,
//!   it leaves the background queue and is reissued with its urgency of then;
//! - Vestal's mode switch (section VII), per cluster: a high-criticality sporadic reservation
//!   counts the budget it consumes since the later of the release that activated it and its
//!   last replenishment. Once nothing more is due at an instant (the machine closes it), a
//!   cluster in low mode where such a reservation is active and has consumed its `e^L`
//!   switches to high mode: its low-criticality sporadic reservations rank below every other
//!   sporadic one and above best-effort ones, keeping budget and deadline (their gate urgency
//!   too, behind every other real-time client of any cluster); their waiting requests are
//!   aborted as above (so reissued at once, demoted, if they have budget), and the instant's
//!   processing runs again. A completion that leaves no sporadic reservation of the cluster
//!   active returns it to low mode at once, before the instant's later releases;
//! - the machine's order at one instant: the stretches that end then, in the order their
//!   ends were set ("Ties", rule 1: first set first), ties in (cluster, core) order: an
//!   operation's (the reply, then the next request is taken) or a task's computation (its
//!   due step); a stretch's end is set when it begins on its core, and again on a cluster's
//!   first core whenever the cluster's timer fires there (a release, an exhaustion or a
//!   replenishment), as the interrupt there does; then jobs are released in (time,
//!   sequence) order, aborts then reissues (tasks in order), an idle
//!   server takes a request (one left waiting); then the dispatch, in (cluster, core) order.
//!   A request issued (or reissued) while the server is idle is taken at once, before the
//!   instant's later steps and issues (Fig. 1: `mc_invoke` notifies the server waiting in
//!   `mc_wait`, each operation atomic; the machine's server takes a call at the call), unless
//!   it is to be pruned at once (an MC-IPC request of a reservation with no budget left, as
//!   "Ties", rule 8 says). A task needs a core
//!   to take any step, even one that takes no time, so the instant repeats while a
//!   dispatched task has a step due, and after a switch to high mode.
//!
//! Readings where the paper leaves a choice, each following the machine's documentation:
//!
//! - an exhaustion happens at the end of the millisecond that empties the budget, before
//!   anything else at that instant; so a request issued at that instant is not aborted for
//!   it, but is aborted (pruned) at once if the reservation then has no budget; except a
//!   call made as the budget runs out (the step of a task that was on a core), which comes
//!   before the exhaustion is acted on: it is aborted for it, as "Ties", rule 8 says, even
//!   if the budget is replenished at once, and then reissued with the instant's other
//!   pruned requests, in task order (rule 7);
//! - a reservation exhausted when `p` has already passed is replenished at once, yet its
//!   queued request is still pruned and reissued at the same instant, behind the others;
//! - a client resumes from a reply (or a task from its release) only once it has a core: its
//!   reservation's, or a lent one, on which it may take its steps (even invoke the server);
//! - a pruned task is not ready, so it is never lent a core; a client whose request is in
//!   service keeps lending its reservation's budget to `S` after an abort;
//! - a transferred request served from the background queue keeps `issued` and `reissues`
//!   and is recorded `exhausted`;
//! - no switch happens for a job that completes at the instant it has consumed `e^L`, nor
//!   for one whose reservation is replenished then (the count starts again); the return to
//!   low mode, a change of priority too, finds no low-criticality request waiting (none of
//!   their reservations is active).
//!
//! Not covered: time partitions, CBS and SPR servers, several servers, random execution
//! times, reclamation and costs, and the machine's executed time and context switches. Every parameter is whole milliseconds and costs are zero, so
//! stepping one millisecond at a time is exact. The run is exclusive of its end: nothing
//! happens at the horizon, but the last millisecond's drain counts.

use std::collections::VecDeque;

use bulwark_core::ipc::GateProtocol;
use bulwark_core::reservation::clustered::SporadicOrder;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_spec as spec;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// `L_q`: no operation is longer.
const MAX_OPERATION: u64 = 5;

/// The server's IPC gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    Fifo,
    Prio,
    McIpc,
}

/// What a client's reservation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    /// Sporadic, of low criticality: demoted in high mode (section VII).
    Low,
    /// Sporadic, of high criticality, expected to stay within this `e^L` (`0 < e^L <= e`).
    High(u64),
    /// Best-effort: lowest tier, no budget (`budget`, its period and `priority` unused).
    BestEffort,
}

/// A reservation (a sporadic one `(e, p)` of fixed priority `priority`, or best-effort), and
/// its one task, in ms: the task is released at `offset + j * period` and computes `before`,
/// invokes the server for `operation`, computes `after`, then sleeps.
#[derive(Clone, Copy, Debug)]
struct Client {
    /// The task runs in the reservation of the cluster's previous client, whose parameters
    /// hold (its own `tier` to `priority` are unused); ignored for a cluster's first client.
    shares: bool,
    tier: Tier,
    budget: u64,
    replenishment_period: u64,
    priority: u8,
    offset: u64,
    period: u64,
    before: u64,
    operation: u64,
    after: u64,
}

/// A cluster: its cores and its clients; each client that does not share opens the next
/// reservation (ids in order), whose tasks are that client's and the sharing ones after it.
#[derive(Clone, Debug)]
struct ClusterSpec {
    cores: usize,
    clients: Vec<Client>,
}

impl ClusterSpec {
    /// Per client, its reservation.
    fn reservation_of(&self) -> Vec<usize> {
        let opens = |(at, client): (usize, &Client)| at == 0 || !client.shares;
        let opened = self.clients.iter().enumerate().map(opens);
        opened
            .scan(0, |count, opens| {
                *count += usize::from(opens);
                Some(*count - 1)
            })
            .collect()
    }

    /// The reservations: the client that opens each.
    fn reservations(&self) -> Vec<Client> {
        let opens = |(at, client): &(usize, &Client)| *at == 0 || !client.shares;
        let opened = self.clients.iter().enumerate().filter(opens);
        opened.map(|(_, client)| *client).collect()
    }
}

/// The system: tasks are numbered cluster by cluster, in reservation order.
#[derive(Clone, Debug)]
struct System {
    clusters: Vec<ClusterSpec>,
    edf: bool,
    protocol: Protocol,
    /// `PrunedRequests::TransferToBackground` rather than `Reissue`.
    transfer: bool,
}

/// One completed invocation, in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Invocation {
    task: usize,
    invoked: u64,
    issued: u64,
    replied: u64,
    reissues: u32,
    drained: u64,
    drained_since_issue: u64,
    exhausted: bool,
}

/// One abort, in ms: pruned, or left in service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Abort {
    at: u64,
    task: usize,
    pruned: bool,
}

/// An abort at `at` of `task`'s request, waiting in the queue.
fn pruned(at: u64, task: usize) -> Abort {
    Abort {
        at,
        task,
        pruned: true,
    }
}

/// An abort at `at` of `task`'s request, left in service.
fn in_service(at: u64, task: usize) -> Abort {
    Abort {
        at,
        task,
        pruned: false,
    }
}

/// What a run gives, in ms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Outcome {
    /// Per task: (release, completion) of each job.
    jobs: Vec<Vec<(u64, Option<u64>)>>,
    /// In order of reply.
    invocations: Vec<Invocation>,
    /// In order.
    aborts: Vec<Abort>,
    /// Per cluster, per reservation.
    drained: Vec<Vec<u64>>,
    /// Each change of a cluster's mode: (when, cluster, to high mode), by (time, cluster).
    modes: Vec<(u64, usize, bool)>,
}

/// A reservation's current priority as a key: smaller is more urgent. Fixed priority:
/// `(255 - priority, id)`; EDF: `(deadline, id)`; `DEMOTED` added to the key of a demoted
/// reservation; every best-effort reservation is `BEST_EFFORT` (ties in arrival order).
type Urgency = (u64, usize);

/// Added to a demoted reservation's key: below every sporadic one, above best effort.
const DEMOTED: u64 = 1 << 40;

const BEST_EFFORT: Urgency = (u64::MAX, usize::MAX);

// ---------------------------------------------------------------------------------------
// The gates, written from Fig. 1 and section VI. The reference itself decides whether an
// aborted request is in service; a gate only keeps its queues.
// ---------------------------------------------------------------------------------------

trait Queueing {
    /// mc_invoke: `task` of cluster `cluster`, its reservation at `urgency`, enqueues.
    fn invoke(&mut self, task: usize, cluster: usize, urgency: Urgency);
    /// mc_wait: the next request to serve, if any.
    fn take(&mut self) -> Option<usize>;
    /// mc_reply: `task`'s request, the one in service, is done.
    fn reply(&mut self, task: usize);
    /// mc_abort: `task`'s reservation is exhausted; its request is in service or queued.
    fn abort(&mut self, task: usize, in_service: bool);
    /// Section V: `task`'s pruned request moves to the background queue; false if the gate
    /// has none (it is then reissued on replenishment instead).
    fn to_background(&mut self, _task: usize) -> bool {
        false
    }
    /// The replenished `task`'s request leaves the background queue, to be invoked anew.
    fn leave_background(&mut self, _task: usize) {}
}

/// FIFO-IPC: one FIFO queue (the MBWI-like baseline).
#[derive(Default)]
struct FifoQueue {
    queue: VecDeque<usize>,
}

impl Queueing for FifoQueue {
    fn invoke(&mut self, task: usize, _cluster: usize, _urgency: Urgency) {
        self.queue.push_back(task);
    }

    fn take(&mut self) -> Option<usize> {
        self.queue.pop_front()
    }

    fn reply(&mut self, _task: usize) {}

    fn abort(&mut self, task: usize, in_service: bool) {
        if !in_service {
            self.queue.retain(|&queued| queued != task);
        }
    }
}

/// PRIO-IPC: one priority queue by urgency, ties in arrival order (Fiasco.OC-like).
#[derive(Default)]
struct PriorityQueue {
    /// (urgency, arrival, task).
    queue: Vec<(Urgency, u64, usize)>,
    arrivals: u64,
}

/// Takes the most urgent entry (earliest arrival among equals) out of `queue`.
fn pop_most_urgent(queue: &mut Vec<(Urgency, u64, usize)>) -> Option<usize> {
    let best = (0..queue.len()).min_by_key(|&at| (queue[at].0, queue[at].1))?;
    Some(queue.remove(best).2)
}

impl Queueing for PriorityQueue {
    fn invoke(&mut self, task: usize, _cluster: usize, urgency: Urgency) {
        self.queue.push((urgency, self.arrivals, task));
        self.arrivals += 1;
    }

    fn take(&mut self) -> Option<usize> {
        pop_most_urgent(&mut self.queue)
    }

    fn reply(&mut self, _task: usize) {}

    fn abort(&mut self, task: usize, in_service: bool) {
        if !in_service {
            self.queue.retain(|entry| entry.2 != task);
        }
    }
}

/// One cluster's part of an MC-IPC gate.
struct LocalQueues {
    cores: usize,
    local_head: Option<usize>,
    /// FIFO, at most `m_k - 1` tasks.
    head_queue: VecDeque<usize>,
    /// (urgency, arrival, task), served most urgent first.
    tail_queue: Vec<(Urgency, u64, usize)>,
    local_wait: bool,
}

/// MC-IPC (Fig. 1).
struct McIpcQueues {
    clusters: Vec<LocalQueues>,
    global_queue: VecDeque<usize>,
    /// Best-effort requests and transferred ones, FIFO (line 9).
    background_queue: VecDeque<usize>,
    cluster_of: Vec<usize>,
    arrivals: u64,
}

impl McIpcQueues {
    fn new(system: &System) -> Self {
        let cluster_of = (system.clusters.iter().enumerate())
            .flat_map(|(cluster, spec)| spec.clients.iter().map(move |_| cluster))
            .collect();
        McIpcQueues {
            clusters: (system.clusters.iter())
                .map(|spec| LocalQueues {
                    cores: spec.cores,
                    local_head: None,
                    head_queue: VecDeque::new(),
                    tail_queue: Vec::new(),
                    local_wait: false,
                })
                .collect(),
            global_queue: VecDeque::new(),
            background_queue: VecDeque::new(),
            cluster_of,
            arrivals: 0,
        }
    }

    /// `move_head_to_tail(tail_queue[k], head_queue[k])`.
    fn promote_tail(&mut self, cluster: usize) {
        let local = &mut self.clusters[cluster];
        if let Some(task) = pop_most_urgent(&mut local.tail_queue) {
            local.head_queue.push_back(task);
        }
    }

    /// `local_head[k] <- dequeue_head_or_null(head_queue[k])`.
    fn next_local_head(&mut self, cluster: usize) {
        let local = &mut self.clusters[cluster];
        local.local_head = local.head_queue.pop_front();
    }

    /// The local head enters the global queue unless it is there already.
    fn enter_global(&mut self, cluster: usize) {
        if let Some(head) = self.clusters[cluster].local_head {
            if !self.global_queue.contains(&head) {
                self.global_queue.push_back(head);
            }
        }
    }
}

impl Queueing for McIpcQueues {
    fn invoke(&mut self, task: usize, cluster: usize, urgency: Urgency) {
        let local = &mut self.clusters[cluster];
        if urgency == BEST_EFFORT {
            // Lines 8-9.
            self.background_queue.push_back(task);
        } else if local.local_head.is_none() {
            // Lines 11-14.
            local.local_head = Some(task);
            if !local.local_wait {
                self.global_queue.push_back(task);
            }
        } else if local.head_queue.len() < local.cores - 1 {
            // Lines 15-16.
            local.head_queue.push_back(task);
        } else {
            // Lines 17-18.
            local.tail_queue.push((urgency, self.arrivals, task));
            self.arrivals += 1;
        }
    }

    fn take(&mut self) -> Option<usize> {
        // Line 29, or lines 24-27: the background queue only when no real-time request
        // waits, its client's cluster then blocked by local wait.
        self.global_queue.pop_front().or_else(|| {
            let task = self.background_queue.pop_front()?;
            self.clusters[self.cluster_of[task]].local_wait = true;
            Some(task)
        })
    }

    fn reply(&mut self, task: usize) {
        let cluster = self.cluster_of[task];
        // Line 35.
        self.clusters[cluster].local_wait = false;
        // Lines 36-38.
        if self.clusters[cluster].local_head == Some(task) {
            self.promote_tail(cluster);
            self.next_local_head(cluster);
        }
        // Lines 39-40, read as: the local head enters the global queue whether or not line
        // 36 promoted it (the gate's first documented reading).
        self.enter_global(cluster);
    }

    fn abort(&mut self, task: usize, in_service: bool) {
        let cluster = self.cluster_of[task];
        let local = &mut self.clusters[cluster];
        if let Some(at) = local.tail_queue.iter().position(|entry| entry.2 == task) {
            // Lines 45-47.
            local.tail_queue.remove(at);
            return;
        }
        if let Some(at) = local.head_queue.iter().position(|&queued| queued == task) {
            // Lines 48-51.
            local.head_queue.remove(at);
            self.promote_tail(cluster);
            return;
        }
        if in_service {
            // Line 56.
            local.local_wait = true;
        } else {
            // Lines 53-54.
            self.global_queue.retain(|&queued| queued != task);
        }
        // Lines 57-59, the head queue refilled before its head is taken, the new local head
        // entering the global queue unless local wait blocks it (the second reading).
        if self.clusters[cluster].local_head == Some(task) {
            self.promote_tail(cluster);
            self.next_local_head(cluster);
            if !self.clusters[cluster].local_wait {
                self.enter_global(cluster);
            }
        }
    }

    fn to_background(&mut self, task: usize) -> bool {
        self.background_queue.push_back(task);
        true
    }

    fn leave_background(&mut self, task: usize) {
        self.background_queue.retain(|&queued| queued != task);
    }
}

// ---------------------------------------------------------------------------------------
// The reference.
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Compute(u64),
    Invoke,
    Sleep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Sleeping,
    /// Computing, with this much (non-zero) left.
    Computing(u64),
    /// Its next step is due as soon as it has a core.
    StepDue,
    /// Its request is queued or in service.
    Waiting,
    /// Its request was pruned; it waits for budget to reissue it.
    Pruned,
}

#[derive(Clone, Copy, Debug)]
struct Request {
    invoked: u64,
    issued: u64,
    reissues: u32,
    drained_at_invoke: u64,
    drained_at_issue: u64,
    aborting_at_issue: u64,
    /// Aborted since it was last issued (then in service, or transferred: it completes,
    /// exhausted).
    aborted: bool,
    /// Pruned into the background queue and not yet served or reissued.
    transferred: bool,
}

struct TaskRun {
    cluster: usize,
    reservation: usize,
    client: Client,
    steps: Vec<Step>,
    next_step: usize,
    phase: Phase,
    /// The nominal release of the current (or last) job.
    nominal: u64,
    request: Option<Request>,
}

/// A sporadic reservation's budget (section III).
#[derive(Clone, Copy, Debug, Default)]
struct Budget {
    left: u64,
    /// Jobs released and not completed: active while there is one.
    pending: u32,
    replenished: Option<u64>,
    /// The replenishment before `replenished`, to undo one its instant's completion makes
    /// moot.
    replenished_before: Option<u64>,
    /// Exhaustions and changes of priority with the mode, which abort requests.
    aborting: u64,
    /// The instant the budget last ran out.
    ran_out: Option<u64>,
    /// Section VII's monitor: consumed since the later of the release and the last
    /// replenishment.
    consumed: u64,
    drained: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Occupant {
    Idle,
    Task(usize),
    Server,
}

struct Reference<'a> {
    system: &'a System,
    now: u64,
    tasks: Vec<TaskRun>,
    /// Per cluster and reservation: its parameters (the client that opens it).
    reservations: Vec<Vec<Client>>,
    /// Per cluster and reservation: its tasks, in order.
    members: Vec<Vec<Vec<usize>>>,
    /// Per cluster and reservation.
    budgets: Vec<Vec<Budget>>,
    /// Per cluster and core: the reservation the top-level scheduler selected there.
    selected: Vec<Vec<Option<usize>>>,
    /// Per cluster and core: what it runs.
    running: Vec<Vec<Occupant>>,
    /// Per cluster: in high mode (section VII).
    high_mode: Vec<bool>,
    /// The request in service: its client and the operation time left.
    serving: Option<(usize, u64)>,
    /// The instant's first steps are being taken: those of the tasks that were on a core,
    /// whose last stretch ended at the instant ("Ties", rule 8).
    first_steps: bool,
    /// Per task, when the end of the stretch it runs on a core (a computation, resumed or
    /// not) was last set; the server's likewise, and the request it served at the last
    /// dispatch.
    began: Vec<u64>,
    server_began: u64,
    served_at_dispatch: Option<usize>,
    /// Per cluster: the last instant its scheduler's timer fired (a release, an exhaustion
    /// or a replenishment was due).
    timer_fired: Vec<Option<u64>>,
    /// Where the server ran during the last dispatch.
    server_core: Option<(usize, usize)>,
    gate: Box<dyn Queueing>,
    /// Pending releases: (time, sequence, task).
    releases: Vec<(u64, u64, usize)>,
    sequence: u64,
    outcome: Outcome,
    /// Requests through a FIFO-IPC or PRIO-IPC gate are aborted as through an MC-IPC one
    /// (the earlier MC-IPC machine's reading); `false`: only an MC-IPC gate aborts (`mc_abort` is
    /// MC-IPC's, section IV; the baseline gates of section VI have none), the scenario
    /// machine's reading.
    baseline_aborts: bool,
}

impl<'a> Reference<'a> {
    fn new(system: &'a System, baseline_aborts: bool) -> Self {
        let mut tasks = Vec::new();
        let mut members = Vec::new();
        let mut releases = Vec::new();
        for (cluster, spec) in system.clusters.iter().enumerate() {
            members.push(vec![Vec::new(); spec.reservations().len()]);
            for (&client, reservation) in spec.clients.iter().zip(spec.reservation_of()) {
                members[cluster][reservation].push(tasks.len());
                let mut steps = Vec::new();
                if client.before > 0 {
                    steps.push(Step::Compute(client.before));
                }
                steps.push(Step::Invoke);
                if client.after > 0 {
                    steps.push(Step::Compute(client.after));
                }
                steps.push(Step::Sleep);
                // The first releases come in task order.
                releases.push((client.offset, tasks.len() as u64, tasks.len()));
                tasks.push(TaskRun {
                    cluster,
                    reservation,
                    client,
                    steps,
                    next_step: 0,
                    phase: Phase::Sleeping,
                    nominal: client.offset,
                    request: None,
                });
            }
        }
        let gate: Box<dyn Queueing> = match system.protocol {
            Protocol::Fifo => Box::<FifoQueue>::default(),
            Protocol::Prio => Box::<PriorityQueue>::default(),
            Protocol::McIpc => Box::new(McIpcQueues::new(system)),
        };
        let clusters = &system.clusters;
        Reference {
            system,
            now: 0,
            sequence: tasks.len() as u64,
            began: vec![0; tasks.len()],
            server_began: 0,
            served_at_dispatch: None,
            timer_fired: vec![None; system.clusters.len()],
            outcome: Outcome {
                jobs: vec![Vec::new(); tasks.len()],
                ..Outcome::default()
            },
            tasks,
            reservations: clusters.iter().map(ClusterSpec::reservations).collect(),
            budgets: (members.iter())
                .map(|reservations| vec![Budget::default(); reservations.len()])
                .collect(),
            members,
            selected: clusters.iter().map(|spec| vec![None; spec.cores]).collect(),
            running: (clusters.iter())
                .map(|spec| vec![Occupant::Idle; spec.cores])
                .collect(),
            high_mode: vec![false; clusters.len()],
            serving: None,
            server_core: None,
            first_steps: false,
            gate,
            releases,
            baseline_aborts,
        }
    }

    fn run(mut self, horizon: u64) -> Outcome {
        for now in 0..horizon {
            if now > 0 {
                self.advance(now);
            }
            self.settle();
        }
        // Nothing happens at the horizon, but the last millisecond drains.
        self.advance(horizon);
        self.outcome.drained = (self.budgets.iter())
            .map(|cluster| cluster.iter().map(|budget| budget.drained).collect())
            .collect();
        self.outcome.modes.sort_unstable();
        self.outcome
    }

    fn budget(&self, task: usize) -> &Budget {
        let run = &self.tasks[task];
        &self.budgets[run.cluster][run.reservation]
    }

    fn tier(&self, cluster: usize, reservation: usize) -> Tier {
        self.reservations[cluster][reservation].tier
    }

    /// Active with budget (a best-effort reservation: active).
    fn eligible(&self, cluster: usize, reservation: usize) -> bool {
        let budget = &self.budgets[cluster][reservation];
        let best_effort = self.tier(cluster, reservation) == Tier::BestEffort;
        budget.pending > 0 && (best_effort || budget.left > 0)
    }

    fn urgency(&self, cluster: usize, reservation: usize) -> Urgency {
        let client = &self.reservations[cluster][reservation];
        let key = if client.tier == Tier::BestEffort {
            return BEST_EFFORT;
        } else if self.system.edf {
            let replenished = self.budgets[cluster][reservation].replenished;
            replenished.map_or(0, |at| at + client.replenishment_period)
        } else {
            255 - u64::from(client.priority)
        };
        let demoted = self.high_mode[cluster] && client.tier == Tier::Low;
        (key + if demoted { DEMOTED } else { 0 }, reservation)
    }

    /// Section VII: a cluster's mode changes; its low-criticality reservations change
    /// priority, which aborts their requests as an exhaustion does.
    fn change_mode(&mut self, cluster: usize, high: bool) {
        self.high_mode[cluster] = high;
        self.outcome.modes.push((self.now, cluster, high));
        for reservation in 0..self.budgets[cluster].len() {
            if self.tier(cluster, reservation) == Tier::Low {
                self.budgets[cluster][reservation].aborting += 1;
            }
        }
        self.select(cluster);
    }

    /// Closing the instant: a cluster in low mode switches to high mode when a pending job
    /// of a high-criticality reservation has consumed its `e^L`. True if one did.
    fn switch_modes(&mut self) -> bool {
        let mut switched = false;
        for cluster in 0..self.budgets.len() {
            let overran = (0..self.budgets[cluster].len()).any(|reservation| {
                let budget = &self.budgets[cluster][reservation];
                let tier = self.tier(cluster, reservation);
                matches!(tier, Tier::High(low) if budget.pending > 0 && budget.consumed >= low)
            });
            if !self.high_mode[cluster] && overran {
                self.change_mode(cluster, true);
                switched = true;
            }
        }
        switched
    }

    /// Section III: an active reservation out of budget is replenished once `p` has passed
    /// since its last replenishment.
    fn replenish_if_due(&mut self, cluster: usize, reservation: usize) {
        let period = self.reservations[cluster][reservation].replenishment_period;
        let budget = self.reservations[cluster][reservation].budget;
        let now = self.now;
        let best_effort = self.tier(cluster, reservation) == Tier::BestEffort;
        let state = &mut self.budgets[cluster][reservation];
        let allowed = state.replenished.is_none_or(|last| now >= last + period);
        if state.pending > 0 && state.left == 0 && allowed && !best_effort {
            state.left = budget;
            state.consumed = 0;
            state.replenished_before = state.replenished;
            state.replenished = Some(now);
            self.timer_fired[cluster] = Some(now);
        }
    }

    /// The top-level scheduler: the `m_k` most urgent active reservations with budget; those
    /// selected already keep their cores, newcomers take the lowest free ones in id order.
    fn select(&mut self, cluster: usize) {
        let count = self.reservations[cluster].len();
        let mut candidates: Vec<usize> = (0..count)
            .filter(|&reservation| self.eligible(cluster, reservation))
            .collect();
        candidates.sort_by_key(|&reservation| self.urgency(cluster, reservation));
        candidates.truncate(self.system.clusters[cluster].cores);
        let cores = &mut self.selected[cluster];
        for core in cores.iter_mut() {
            if core.is_some_and(|reservation| !candidates.contains(&reservation)) {
                *core = None;
            }
        }
        candidates.sort_unstable();
        for reservation in candidates {
            if !cores.contains(&Some(reservation)) {
                let free = cores.iter().position(Option::is_none).expect("a free core");
                cores[free] = Some(reservation);
            }
        }
    }

    /// Time passes from `now` to `to` (one millisecond): what runs progresses, and every
    /// selected reservation drains (A2), running something or not.
    fn advance(&mut self, to: u64) {
        let elapsed = to - self.now;
        for occupant in self.running.iter().flatten() {
            match *occupant {
                Occupant::Task(task) => {
                    if let Phase::Computing(left) = self.tasks[task].phase {
                        self.tasks[task].phase = match left - elapsed {
                            0 => Phase::StepDue,
                            left => Phase::Computing(left),
                        };
                    }
                }
                Occupant::Server => {
                    let serving = self.serving.as_mut().expect("a request in service");
                    serving.1 -= elapsed;
                }
                Occupant::Idle => {}
            }
        }
        for (cluster, cores) in self.selected.iter().enumerate() {
            for &reservation in cores.iter().flatten() {
                let best_effort = self.tier(cluster, reservation) == Tier::BestEffort;
                let budget = &mut self.budgets[cluster][reservation];
                budget.drained += elapsed;
                if best_effort {
                    continue;
                }
                budget.left -= elapsed;
                budget.consumed += elapsed;
                if budget.left == 0 {
                    budget.aborting += 1;
                    budget.ran_out = Some(to);
                    self.timer_fired[cluster] = Some(to);
                }
            }
        }
        self.now = to;
        for cluster in 0..self.system.clusters.len() {
            for reservation in 0..self.reservations[cluster].len() {
                self.replenish_if_due(cluster, reservation);
            }
            self.select(cluster);
        }
    }

    /// Everything due at `now`, round after round while a dispatched task has a step due.
    fn settle(&mut self) {
        self.first_steps = true;
        loop {
            if self.first_steps {
                self.end_stretches();
            } else {
                self.step_tasks_on_cores();
            }
            self.first_steps = false;
            self.release_due_jobs();
            self.abort_and_reissue();
            if self.serving.is_none() {
                self.serve_next();
            }
            self.dispatch();
            let step_due = |occupant: &Occupant| match *occupant {
                Occupant::Task(task) => self.tasks[task].phase == Phase::StepDue,
                Occupant::Idle | Occupant::Server => false,
            };
            // Once nothing more is due, the instant is closed: a mode switch may happen,
            // and the instant's processing runs again.
            if !self.running.iter().flatten().any(step_due) && !self.switch_modes() {
                return;
            }
        }
    }

    /// The stretches that end at `now`, in the order their ends were set, ties in (cluster,
    /// core) order ("Ties", rule 1: executions ending come first, and among them the first
    /// set first): an operation's end is `mc_reply`, then `mc_wait`; a task's computation's
    /// end is its next step.
    fn end_stretches(&mut self) {
        let mut ending = Vec::new();
        for (at, &occupant) in self.running.iter().flatten().enumerate() {
            match occupant {
                Occupant::Task(task) if self.tasks[task].phase == Phase::StepDue => {
                    ending.push((self.began[task], at, Some(task)));
                }
                Occupant::Server if self.serving.is_some_and(|(_, left)| left == 0) => {
                    ending.push((self.server_began, at, None));
                }
                Occupant::Task(_) | Occupant::Server | Occupant::Idle => {}
            }
        }
        ending.sort_unstable();
        for (_, _, task) in ending {
            match task {
                Some(task) => self.take_step(task),
                None => self.finish_operation(),
            }
        }
    }

    /// mc_reply: the operation in service is done; its client resumes; then mc_wait.
    fn finish_operation(&mut self) {
        let Some((task, 0)) = self.serving else {
            return;
        };
        self.serving = None;
        let drained = self.budget(task).drained;
        let request = self.tasks[task].request.take().expect("a request");
        self.outcome.invocations.push(Invocation {
            task,
            invoked: request.invoked,
            issued: request.issued,
            replied: self.now,
            reissues: request.reissues,
            drained: drained - request.drained_at_invoke,
            drained_since_issue: drained - request.drained_at_issue,
            exhausted: request.aborted,
        });
        self.tasks[task].phase = Phase::StepDue;
        self.gate.reply(task);
        self.serve_next();
    }

    /// mc_wait: the server takes the next request, if any.
    fn serve_next(&mut self) {
        if let Some(task) = self.gate.take() {
            self.serving = Some((task, self.tasks[task].client.operation));
            self.tasks[task]
                .request
                .as_mut()
                .expect("a request")
                .transferred = false;
        }
    }

    /// Tasks that were on a core with a step due take it, cores in order.
    fn step_tasks_on_cores(&mut self) {
        let occupants: Vec<Occupant> = self.running.iter().flatten().copied().collect();
        for occupant in occupants {
            if let Occupant::Task(task) = occupant {
                if self.tasks[task].phase == Phase::StepDue {
                    self.take_step(task);
                }
            }
        }
    }

    fn take_step(&mut self, task: usize) {
        let run = &mut self.tasks[task];
        let step = run.steps[run.next_step];
        run.next_step = (run.next_step + 1) % run.steps.len();
        let (cluster, reservation) = (run.cluster, run.reservation);
        match step {
            Step::Compute(time) => run.phase = Phase::Computing(time),
            Step::Invoke => {
                run.phase = Phase::Waiting;
                let budget = self.budgets[cluster][reservation];
                // A call made as the budget runs out (the step after a stretch that ended
                // then) is issued before that exhaustion is acted on, so it is aborted for it
                // ("Ties", rule 8), even if the budget is replenished at once.
                let ran_out = budget.ran_out == Some(self.now) && self.first_steps;
                self.tasks[task].request = Some(Request {
                    invoked: self.now,
                    issued: self.now,
                    reissues: 0,
                    drained_at_invoke: budget.drained,
                    drained_at_issue: budget.drained,
                    aborting_at_issue: budget.aborting - u64::from(ran_out),
                    aborted: false,
                    transferred: false,
                });
                let urgency = self.urgency(cluster, reservation);
                self.gate.invoke(task, cluster, urgency);
                self.take_call_if_idle(task);
            }
            Step::Sleep => {
                run.nominal += run.client.period;
                let nominal = run.nominal;
                let job = self.outcome.jobs[task].last_mut().expect("a job");
                job.1 = Some(self.now);
                if nominal < self.now {
                    // Pending since its plan: the reservation stays active with its budget,
                    // and the task takes that job at the cluster's timer at this instant.
                    self.outcome.jobs[task].push((nominal, None));
                    self.tasks[task].phase = Phase::StepDue;
                    self.timer_fired[cluster] = Some(self.now);
                    return;
                }
                self.tasks[task].phase = Phase::Sleeping;
                self.releases.push((nominal, self.sequence, task));
                self.sequence += 1;
                self.complete(cluster, reservation);
            }
        }
    }

    /// A job completes; the last pending one leaves the reservation inactive, discarding its
    /// budget, and undoes a replenishment at this very instant (the completion came first). A
    /// cluster in high mode with no sporadic reservation active any more (an idle instant)
    /// returns to low mode.
    fn complete(&mut self, cluster: usize, reservation: usize) {
        let now = self.now;
        let budget = &mut self.budgets[cluster][reservation];
        budget.pending -= 1;
        if budget.pending == 0 {
            budget.left = 0;
            if budget.replenished == Some(now) {
                budget.replenished = budget.replenished_before;
            }
        }
        let busy = (0..self.budgets[cluster].len()).any(|reservation| {
            self.budgets[cluster][reservation].pending > 0
                && self.tier(cluster, reservation) != Tier::BestEffort
        });
        if self.high_mode[cluster] && !busy {
            self.change_mode(cluster, false);
        }
        self.select(cluster);
    }

    /// `task`'s request, just issued: an idle server takes it at once (Fig. 1, lines 20-23),
    /// unless it is about to be aborted (at a gate that aborts: its reservation has no budget,
    /// or ran out of it at this instant), which comes first ("Ties", rule 8).
    fn take_call_if_idle(&mut self, task: usize) {
        let (cluster, reservation) = (self.tasks[task].cluster, self.tasks[task].reservation);
        let request = self.tasks[task].request.expect("a request");
        let aborts = self.system.protocol == Protocol::McIpc || self.baseline_aborts;
        let exhausted = self.budgets[cluster][reservation].aborting > request.aborting_at_issue;
        let pruned = aborts && (exhausted || !self.eligible(cluster, reservation));
        if self.serving.is_none() && !pruned {
            self.serve_next();
        }
    }

    fn release_due_jobs(&mut self) {
        loop {
            let due = (0..self.releases.len())
                .filter(|&at| self.releases[at].0 <= self.now)
                .min_by_key(|&at| (self.releases[at].0, self.releases[at].1));
            let Some(at) = due else {
                return;
            };
            let (_, _, task) = self.releases.remove(at);
            let (cluster, reservation) = (self.tasks[task].cluster, self.tasks[task].reservation);
            let budget = &mut self.budgets[cluster][reservation];
            if budget.pending == 0 {
                budget.consumed = 0;
            }
            budget.pending += 1;
            self.replenish_if_due(cluster, reservation);
            self.select(cluster);
            self.timer_fired[cluster] = Some(self.now);
            // Recorded at its plan: a job due behind a late predecessor waited for it.
            let nominal = self.tasks[task].nominal;
            self.outcome.jobs[task].push((nominal, None));
            self.tasks[task].phase = Phase::StepDue;
        }
    }

    /// mc_abort for every waiting client whose reservation ran out of budget or changed
    /// priority with its cluster's mode since it issued its request, or has no budget now;
    /// a pruned request goes to the background queue if asked and the gate has one; then
    /// every pruned or transferred request whose reservation has budget again is reissued.
    fn abort_and_reissue(&mut self) {
        if self.system.protocol != Protocol::McIpc && !self.baseline_aborts {
            return;
        }
        for task in 0..self.tasks.len() {
            let run = &self.tasks[task];
            let (cluster, reservation) = (run.cluster, run.reservation);
            let Some(request) = run.request else {
                continue;
            };
            if run.phase != Phase::Waiting || request.aborted {
                continue;
            }
            let exhausted = self.budgets[cluster][reservation].aborting > request.aborting_at_issue;
            if !exhausted && self.eligible(cluster, reservation) {
                continue;
            }
            // Section IV-C: a request in service is not aborted; it completes normally.
            let in_service = self.serving.is_some_and(|(served, _)| served == task);
            self.gate.abort(task, in_service);
            self.outcome.aborts.push(Abort {
                at: self.now,
                task,
                pruned: !in_service,
            });
            // Section V: a transferred request stays at the gate, its task waiting, until it
            // is served from the background queue or reissued.
            let transferred = !in_service && self.system.transfer && self.gate.to_background(task);
            let request = self.tasks[task].request.as_mut().expect("a request");
            request.aborted = true;
            request.transferred = transferred;
            if !in_service && !transferred {
                self.tasks[task].phase = Phase::Pruned;
            }
        }
        for task in 0..self.tasks.len() {
            let (cluster, reservation) = (self.tasks[task].cluster, self.tasks[task].reservation);
            let transferred = self.tasks[task].request.is_some_and(|r| r.transferred);
            let pruned = self.tasks[task].phase == Phase::Pruned || transferred;
            if !pruned || !self.eligible(cluster, reservation) {
                continue;
            }
            if transferred {
                self.gate.leave_background(task);
            }
            let budget = self.budgets[cluster][reservation];
            let urgency = self.urgency(cluster, reservation);
            self.gate.invoke(task, cluster, urgency);
            let request = self.tasks[task].request.as_mut().expect("a request");
            request.issued = self.now;
            request.drained_at_issue = budget.drained;
            request.aborting_at_issue = budget.aborting;
            request.reissues += 1;
            request.aborted = false;
            request.transferred = false;
            self.tasks[task].phase = Phase::Waiting;
            self.take_call_if_idle(task);
        }
    }

    fn ready(&self, task: usize) -> bool {
        matches!(self.tasks[task].phase, Phase::Computing(_) | Phase::StepDue)
    }

    /// Bandwidth inheritance: `task` waits for the server, which serves a request (so it
    /// can run on `task`'s reservation's budget).
    fn inherits(&self, task: usize) -> bool {
        self.tasks[task].phase == Phase::Waiting && self.serving.is_some()
    }

    /// What each core runs until the next instant, in (cluster, core) order.
    fn dispatch(&mut self) {
        let before = self.running.clone();
        for cores in &mut self.running {
            cores.fill(Occupant::Idle);
        }
        let mut server_placed = false;
        // The server stays where it ran while the reservation selected there waits on it
        // (and has no ready task).
        if let Some((cluster, core)) = self.server_core {
            if let Some(reservation) = self.selected[cluster][core] {
                let members = &self.members[cluster][reservation];
                let ready = members.iter().any(|&task| self.ready(task));
                if !ready && members.iter().any(|&task| self.inherits(task)) {
                    self.running[cluster][core] = Occupant::Server;
                    server_placed = true;
                }
            }
        }
        for cluster in 0..self.running.len() {
            for core in 0..self.running[cluster].len() {
                if self.running[cluster][core] != Occupant::Idle {
                    continue;
                }
                let Some(reservation) = self.selected[cluster][core] else {
                    continue;
                };
                // Its first ready task in task order, or the server one of its tasks waits on.
                let members = &self.members[cluster][reservation];
                if let Some(&task) = members.iter().find(|&&task| self.ready(task)) {
                    self.running[cluster][core] = Occupant::Task(task);
                } else if members.iter().any(|&task| self.inherits(task)) && !server_placed {
                    self.running[cluster][core] = Occupant::Server;
                    server_placed = true;
                }
                // Otherwise the reservation idles, still draining (A2).
            }
        }
        // Slack: an idle core runs the most urgent ready task of a reservation of its cluster
        // with budget that is not selected.
        for cluster in 0..self.running.len() {
            for core in 0..self.running[cluster].len() {
                if self.running[cluster][core] != Occupant::Idle {
                    continue;
                }
                let lent = (self.tasks.iter().enumerate())
                    .filter(|&(task, run)| {
                        run.cluster == cluster
                            && self.ready(task)
                            && self.eligible(cluster, run.reservation)
                            && !self.selected[cluster].contains(&Some(run.reservation))
                            && !self.running[cluster].contains(&Occupant::Task(task))
                    })
                    .min_by_key(|&(task, run)| (self.urgency(cluster, run.reservation), task));
                if let Some((task, _)) = lent {
                    self.running[cluster][core] = Occupant::Task(task);
                }
            }
        }
        self.note_stretches(&before);
        self.server_core = None;
        for (cluster, cores) in self.running.iter().enumerate() {
            if let Some(core) = cores
                .iter()
                .position(|&occupant| occupant == Occupant::Server)
            {
                self.server_core = Some((cluster, core));
            }
        }
    }

    /// After a dispatch: a stretch's end is set now on each core whose occupant changed from
    /// `before`, or whose task takes a step now (then computes), or whose server serves a
    /// request it did not at the last dispatch; and on the first core of a cluster whose
    /// scheduler's timer fired now, which holds that timer: its interrupt there sets the
    /// end of the stretch that core goes on with again.
    fn note_stretches(&mut self, before: &[Vec<Occupant>]) {
        let served = self.serving.map(|(task, _)| task);
        for (cluster, was) in before.iter().enumerate() {
            let fired = self.timer_fired[cluster] == Some(self.now);
            for (core, &was) in was.iter().enumerate() {
                let occupant = self.running[cluster][core];
                let changed = (core == 0 && fired) || occupant != was;
                match occupant {
                    Occupant::Task(task) => {
                        if changed || self.tasks[task].phase == Phase::StepDue {
                            self.began[task] = self.now;
                        }
                    }
                    Occupant::Server => {
                        if changed || served != self.served_at_dispatch {
                            self.server_began = self.now;
                        }
                    }
                    Occupant::Idle => {}
                }
            }
        }
        self.served_at_dispatch = served;
    }
}

/// The reference with FIFO-IPC and PRIO-IPC requests aborted as MC-IPC ones are: the
/// reading the cases below were worked by hand in.
fn reference(system: &System, horizon: u64) -> Outcome {
    Reference::new(system, true).run(horizon)
}

/// The reference as the scenario machine reads the paper: only an MC-IPC gate aborts.
fn scenario_reference(system: &System, horizon: u64) -> Outcome {
    Reference::new(system, false).run(horizon)
}

// ---------------------------------------------------------------------------------------
// Milliseconds.
// ---------------------------------------------------------------------------------------

fn ms(n: u64) -> Duration {
    Duration::from_nanos(n * MS)
}

fn to_ms(time: Instant) -> u64 {
    assert_eq!(time.as_nanos() % MS, 0, "every event is on a millisecond");
    time.as_nanos() / MS
}

// ---------------------------------------------------------------------------------------
// The scenario machine, given the same system as a scenario: `[[cluster]]`s whose clients
// are members (sharing a reservation where the system's clients do), and the server.
// ---------------------------------------------------------------------------------------

/// The system as a scenario of `horizon` ms.
fn as_scenario(system: &System, horizon: u64) -> spec::Scenario {
    let order = if system.edf {
        SporadicOrder::EarliestDeadlineFirst
    } else {
        SporadicOrder::FixedPriority
    };
    let (mut tasks, mut clusters, mut next_core) = (Vec::new(), Vec::new(), 0u16);
    for (k, cluster) in system.clusters.iter().enumerate() {
        let cores: Vec<u16> = (next_core..next_core + cluster.cores as u16).collect();
        next_core += cluster.cores as u16;
        let mut members = Vec::new();
        let mut opener = 0;
        for (at, client) in cluster.clients.iter().enumerate() {
            let shares = at > 0 && client.shares;
            if !shares {
                opener = tasks.len();
            }
            let best_effort = !shares && client.tier == Tier::BestEffort;
            let kind = match client.tier {
                _ if shares => spec::MemberKind::Shared { owner: opener },
                Tier::BestEffort => spec::MemberKind::BestEffort,
                Tier::Low | Tier::High(_) => spec::MemberKind::Sporadic {
                    replenishment: spec::Replenishment::Sporadic,
                    low_budget: match client.tier {
                        Tier::High(low) => Some(ms(low)),
                        _ => None,
                    },
                },
            };
            members.push(spec::ClusterMember {
                task: tasks.len(),
                kind,
            });
            let own = !shares && !best_effort;
            let mut body = Vec::new();
            if client.before > 0 {
                body.push(spec::Step::Run(spec::Execution::Fixed(ms(client.before))));
            }
            body.push(spec::Step::Invoke {
                server: 0,
                operation: Some(spec::Execution::Fixed(ms(client.operation))),
            });
            if client.after > 0 {
                body.push(spec::Step::Run(spec::Execution::Fixed(ms(client.after))));
            }
            body.push(spec::Step::SleepUntilNextRelease(ms(client.period)));
            tasks.push(spec::TaskSpec {
                name: format!("t{}", tasks.len()),
                core: cores[0],
                priority: (own && !system.edf).then_some(Priority(client.priority)),
                reservation: own.then(|| {
                    spec::Reservation::new(ms(client.budget), ms(client.replenishment_period))
                }),
                deadline: None,
                behaviour: spec::Behaviour::Script {
                    offset: ms(client.offset),
                    steps: vec![spec::Step::Loop { count: None, body }],
                },
            });
        }
        clusters.push(spec::ClusterSpec {
            name: format!("k{k}"),
            cores,
            order,
            cycle: Duration::ZERO,
            // The reference lends idle cores to ready members, as MC-IPC clusters do (slack reclamation).
            slack_reclamation: true,
            members,
        });
    }
    let clients = (0..tasks.len()).collect();
    spec::Scenario {
        seed: 1,
        clusters,
        servers: vec![spec::ServerSpec {
            name: "S".into(),
            gate: match system.protocol {
                Protocol::Fifo => GateProtocol::FifoIpc,
                Protocol::Prio => GateProtocol::PrioIpc,
                Protocol::McIpc => GateProtocol::McIpc,
            },
            // One run, as long as each invocation asks.
            body: vec![spec::ServerStep::Run(spec::Execution::Fixed(ms(
                MAX_OPERATION,
            )))],
            bandwidth_inheritance: true,
            priority: None,
            // Only an MC-IPC gate has a background queue; the others reissue.
            pruned_to_background: system.transfer && system.protocol == Protocol::McIpc,
            clients,
        }],
        ..spec::Scenario::new(
            "reference",
            spec::PolicyKind::FixedPriority,
            next_core,
            ms(horizon),
            tasks,
        )
    }
}

/// Per task, (release, completion) of each job on the scenario machine, in ms, read as the
/// reference reads its run: nothing happens at the horizon (the scenario machine takes the
/// events due at its end, so a job released then, or due behind one completing then, is
/// left out, and one completing then is unfinished).
fn scenario_machine_jobs(system: &System, horizon: u64) -> Vec<Vec<(u64, Option<u64>)>> {
    let scenario = as_scenario(system, horizon);
    let options = bulwark_sim::Options {
        record_jobs: true,
        ..bulwark_sim::Options::default()
    };
    let outcome = bulwark_sim::run(&scenario, &options).expect("a valid scenario");
    let mut jobs = vec![Vec::new(); scenario.tasks.len()];
    let mut records = outcome.jobs.expect("recorded");
    records.sort_by_key(|j| (j.task, j.job));
    // A job starts when its predecessor completes, so one whose predecessor did not complete
    // before the horizon never started in the reference's run.
    let mut started = vec![true; scenario.tasks.len()];
    for job in &records {
        let task = job.task.index();
        let completion = job.completion.map(to_ms).filter(|&at| at < horizon);
        if to_ms(job.release) < horizon && started[task] {
            jobs[task].push((to_ms(job.release), completion));
        }
        started[task] = started[task] && completion.is_some();
    }
    jobs
}

/// What the scenario machine reports of the reference's [`Outcome`]: jobs, completed
/// invocations and drains. It records no aborts (a pruned request shows in its invocation's
/// `reissues`, `issued` and `exhausted`) and no mode changes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reported {
    jobs: Vec<Vec<(u64, Option<u64>)>>,
    invocations: Vec<Invocation>,
    drained: Vec<Vec<u64>>,
}

impl Reported {
    /// The part of `outcome` the scenario machine reports.
    fn of(outcome: &Outcome) -> Self {
        Reported {
            jobs: outcome.jobs.clone(),
            invocations: outcome.invocations.clone(),
            drained: outcome.drained.clone(),
        }
    }
}

/// Keeps every answered invocation, in order of reply.
#[derive(Default)]
struct Invocations(Vec<bulwark_sim::InvocationRecord>);

impl bulwark_sim::Recorder for Invocations {
    fn wants_invocations(&self) -> bool {
        true
    }

    fn invocation(&mut self, record: &bulwark_sim::InvocationRecord) {
        self.0.push(*record);
    }
}

/// The scenario machine's run of `system`, read as the reference reads its own: jobs as
/// [`scenario_machine_jobs`] reads them, invocations answered before the horizon, and per
/// cluster each reservation's drain (the one its first client's member shows).
fn scenario_machine(system: &System, horizon: u64) -> Reported {
    let scenario = as_scenario(system, horizon);
    let mut records = Invocations::default();
    let options = bulwark_sim::Options::default();
    let outcome = bulwark_sim::run_recorded(&scenario, &options, &mut records, &mut |_| {})
        .expect("a valid scenario");
    let whole_ms = |length: Duration| {
        let nanos = length.as_nanos();
        assert_eq!(nanos % MS, 0, "every drain is whole milliseconds");
        nanos / MS
    };
    let invocations = (records.0.iter())
        .filter(|record| to_ms(record.replied) < horizon)
        .map(|record| {
            assert_eq!(record.server, 0);
            Invocation {
                task: record.task.index(),
                invoked: to_ms(record.invoked),
                issued: to_ms(record.issued),
                replied: to_ms(record.replied),
                reissues: record.reissues,
                drained: whole_ms(record.drained),
                drained_since_issue: whole_ms(record.drained_since_issue),
                exhausted: record.exhausted,
            }
        })
        .collect();
    let drained = (system.clusters.iter().zip(&outcome.clusters))
        .map(|(cluster, members)| {
            let reservation_of = cluster.reservation_of();
            let opens = |at: &usize| *at == 0 || reservation_of[*at] != reservation_of[*at - 1];
            (0..cluster.clients.len())
                .filter(opens)
                .map(|at| whole_ms(Duration::from_nanos(members.drained_ns[at])))
                .collect()
        })
        .collect();
    Reported {
        jobs: scenario_machine_jobs(system, horizon),
        invocations,
        drained,
    }
}

// ---------------------------------------------------------------------------------------
// Random systems.
// ---------------------------------------------------------------------------------------

/// A client: budgets 1 ms up to the replenishment period (3-16 ms), task periods 3-16 ms,
/// offsets up to 6 ms, computations of 0-3 ms around an operation of 1-5 ms. Small budgets
/// and short periods overload the cluster, so exhaustions, prunes and reissues are common.
/// Of low criticality, or with `best_effort` one in four best-effort, with `high` one in
/// four of high criticality with `e^L` of 1 ms up to `e`; with `shared`, one in three
/// shares the previous client's reservation.
fn client(best_effort: bool, high: bool, shared: bool) -> impl Strategy<Value = Client> {
    (
        (1u64..=16, 3u64..=16, 1u8..=3),
        (0u64..=6, 3u64..=16),
        (0u64..=3, 1u64..=MAX_OPERATION, 0u64..=3),
        (0u8..4, 1u64..=16, 0u8..3),
    )
        .prop_map(
            move |(
                (budget, replenishment_period, priority),
                (offset, period),
                (before, operation, after),
                (tier, low_budget, share),
            )| {
                let budget = budget.min(replenishment_period);
                Client {
                    shares: shared && share == 0,
                    tier: match tier {
                        0 if best_effort => Tier::BestEffort,
                        1 if high => Tier::High(low_budget.min(budget)),
                        _ => Tier::Low,
                    },
                    budget,
                    replenishment_period,
                    priority,
                    offset,
                    period,
                    before,
                    operation,
                    after,
                }
            },
        )
}

/// A cluster of 1-2 cores and 1-4 clients, some best-effort, of high criticality or sharing
/// a reservation as [`client`] says.
fn cluster_with(best_effort: bool, high: bool, shared: bool) -> impl Strategy<Value = ClusterSpec> {
    let clients = proptest::collection::vec(client(best_effort, high, shared), 1..=4);
    (1usize..=2, clients).prop_map(|(cores, clients)| ClusterSpec { cores, clients })
}

fn protocol() -> impl Strategy<Value = Protocol> {
    prop_oneof![
        Just(Protocol::Fifo),
        Just(Protocol::Prio),
        Just(Protocol::McIpc)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The scenario machine gives every job the reference's release and completion, for
    /// reservations of one or several tasks, best-effort clients, both criticalities, one or
    /// two clusters, any gate and either fate of pruned requests, read as the scenario machine
    /// reads the paper (only an MC-IPC gate aborts: `mc_abort` is MC-IPC's): the target for
    /// running MC-IPC files on the one machine. Not yet met: see the ratchet below for how
    /// often it agrees. Orders at one instant fixed for it: a call made as the budget runs
    /// out is pruned before the idle server takes it, even if the budget is back at once; a
    /// release at a reply's instant comes before the caller's next step, a sibling's too; an
    /// idle server takes the first call of an instant; the stretches ending at an instant go
    /// in the order their ends were set. Nearly all the disagreements left are of one class:
    /// the order in which the cores of the machine act at one instant, each running its chain
    /// of steps that take no time to its end before the next core's event, the events in the
    /// order they were set (a stretch's end set again at every kernel entry on its core, by
    /// a reply's interrupt or a wake-up there, say), where the reference takes one step per
    /// core in (cluster, core) order.
    #[test]
    #[ignore = "the scenario machine's same-instant order is not yet the reference's"]
    fn the_scenario_machine_matches_the_reference(
        clusters in proptest::collection::vec(cluster_with(true, true, true), 1..=2),
        edf in any::<bool>(),
        protocol in protocol(),
        transfer in any::<bool>(),
        horizon in 1u64..=80,
    ) {
        let system = System { clusters, edf, protocol, transfer };
        prop_assert_eq!(
            scenario_machine_jobs(&system, horizon),
            scenario_reference(&system, horizon).jobs
        );
    }
}

// ---------------------------------------------------------------------------------------
// Cases worked by hand from the rules above.
// ---------------------------------------------------------------------------------------

/// A client with a budget of `budget` per 20 ms, released every 20 ms from `offset`.
fn hand_client(budget: u64, priority: u8, offset: u64, script: (u64, u64, u64)) -> Client {
    let (before, operation, after) = script;
    Client {
        shares: false,
        tier: Tier::Low,
        budget,
        replenishment_period: 20,
        priority,
        offset,
        period: 20,
        before,
        operation,
        after,
    }
}

/// The setting of most cases worked by hand: one cluster of `cores` cores holding `clients`,
/// by fixed priority, behind `protocol`, pruned requests reissued.
fn hand_system(cores: usize, protocol: Protocol, clients: Vec<Client>) -> System {
    System {
        clusters: vec![ClusterSpec { cores, clients }],
        edf: false,
        protocol,
        transfer: false,
    }
}

/// The reference gives `expected` for `system` up to `horizon`, and the scenario machine the
/// part of it that it reports; a failure names the system, so a case run for several gates
/// or settings says which.
fn assert_both_give(system: &System, horizon: u64, expected: &Outcome) {
    assert_eq!(reference(system, horizon), *expected, "{system:?}");
    let reported = scenario_machine(system, horizon);
    assert_eq!(reported, Reported::of(expected), "{system:?}");
}

fn invocation(task: usize, invoked: u64, issued: u64, replied: u64, drained: u64) -> Invocation {
    Invocation {
        task,
        invoked,
        issued,
        replied,
        reissues: 0,
        drained,
        drained_since_issue: drained,
        exhausted: false,
    }
}

/// One core, fixed priorities, `e = 10` each. L (priority 1) invokes 3 at 0; M (2) invokes 2
/// at 1, then computes 1; H (3) invokes 2 at 2, then computes 1. Each newly released, more
/// urgent reservation is selected and, its task waiting, runs the server on its own budget
/// (inheritance), so L's operation ends at 3 whatever the gate:
///
/// ```text
///            0   1   2   3   4   5   6   7   8   9
/// FIFO-IPC   S:L S:L S:L S:M S:M S:H S:H H   M   .     L, M and H done at 9, 9, 8
///   selected L   M   H   H   H   H   H   H   M   L
/// PRIO-IPC   S:L S:L S:L S:H S:H H   S:M S:M M   .     L, M and H done at 9, 9, 6
///   selected L   M   H   H   H   H   M   M   M   L
/// ```
///
/// (`S:X` is the server serving X's request.) At 3 FIFO-IPC serves M, who asked first, on
/// H's budget; PRIO-IPC serves H. Under PRIO-IPC, M's request is taken at 5 but waits for a
/// selected reservation to inherit from until H completes at 6. L, replied at 3, has no core
/// until 9 (no core is idle), when it sleeps at once.
#[test]
fn fifo_and_prio_gates_order_a_hand_worked_queue() {
    let clients = vec![
        hand_client(10, 1, 0, (0, 3, 0)),
        hand_client(10, 2, 1, (0, 2, 1)),
        hand_client(10, 3, 2, (0, 2, 1)),
    ];
    let system = |protocol| hand_system(1, protocol, clients.clone());
    let fifo = Outcome {
        jobs: vec![vec![(0, Some(9))], vec![(1, Some(9))], vec![(2, Some(8))]],
        invocations: vec![
            invocation(0, 0, 0, 3, 1),
            invocation(1, 1, 1, 5, 1),
            invocation(2, 2, 2, 7, 5),
        ],
        drained: vec![vec![1, 2, 6]],
        ..Outcome::default()
    };
    let prio = Outcome {
        jobs: vec![vec![(0, Some(9))], vec![(1, Some(9))], vec![(2, Some(6))]],
        invocations: vec![
            invocation(0, 0, 0, 3, 1),
            invocation(2, 2, 2, 5, 3),
            invocation(1, 1, 1, 8, 3),
        ],
        drained: vec![vec![1, 4, 4]],
        ..Outcome::default()
    };
    for (protocol, expected) in [(Protocol::Fifo, fifo), (Protocol::Prio, prio)] {
        assert_both_give(&system(protocol), 12, &expected);
    }
}

/// Two cores, FIFO-IPC, fixed priorities. A (priority 3, `e = 5`) invokes 4 at 0; B (2,
/// `e = 10`) invokes 1 at 1; C (1, `e = 10`) computes 3 from 0, then invokes 1.
///
/// ```text
///              0   1   2   3   4   5   6
/// core 0       S:A S:A S:A S:A A|  S:C C|     A sleeps at 4, C at 6
///   selected   A   A   A   A   A,C C   C
/// core 1       C   C*  C*  .   S:B B|
///   selected   C   B   B   B   B   B
/// ```
///
/// (`X|`: X's sleep, which takes no time, at that instant; the core then idles.) At 1, B
/// outranks C and takes core 1; its request queues behind A's, and the server is already
/// executing on core 0 (A's), so B idles, draining (A2), and lends core 1 to C, whose
/// reservation has budget but is not selected (`C*`: slack, charged to nobody). C invokes at
/// 3, still on slack. At 4 the server replies to A, who sleeps at once; B's request follows
/// on B's core, C's on C's at 5. Drained: A 4, B 4 for an operation of 1, C 3.
#[test]
fn a_waiting_reservation_drains_and_lends_its_core_while_the_server_runs_elsewhere() {
    let system = hand_system(
        2,
        Protocol::Fifo,
        vec![
            hand_client(5, 3, 0, (0, 4, 0)),
            hand_client(10, 2, 1, (0, 1, 0)),
            hand_client(10, 1, 0, (3, 1, 0)),
        ],
    );
    let expected = Outcome {
        jobs: vec![vec![(0, Some(4))], vec![(1, Some(5))], vec![(0, Some(6))]],
        invocations: vec![
            invocation(0, 0, 0, 4, 4),
            invocation(1, 1, 1, 5, 4),
            invocation(2, 3, 3, 6, 2),
        ],
        drained: vec![vec![4, 4, 3]],
        ..Outcome::default()
    };
    assert_both_give(&system, 12, &expected);
}

/// One core, MC-IPC, fixed priorities. X (priority 1, `e = 2`, `p = 30`) invokes 5 at 0;
/// Y (priority 2, `e = 2`, `p = 10`) is released at 1 and every 10 ms, and invokes 2.
///
/// ```text
///            0   1   2   3   4 .. 11  12  13 .. 21  22  23 .. 30
/// server     S:X S:X S:X S:X .    S:X S:Y .    S:Y S:Y .
/// selected   X   Y   Y   X   -    Y   Y   -    Y   Y   -
/// ```
///
/// - 1: Y's request goes to the tail queue (X is the local head, in service); Y's
///   reservation runs the server on its budget and is exhausted at 3: its queued request is
///   pruned;
/// - 4: X's budget is exhausted with its request in service: not pruned (local wait is set,
///   and the local head X is replaced by nobody); the server has no one to inherit from
///   until 11;
/// - 11: Y's budget is back (`p` after 1): its request is reissued and becomes the local
///   head, kept out of the global queue by local wait; Y's budget runs the server, X's
///   operation ends at 12; the reply clears local wait and puts Y in the global queue;
/// - 12: Y is served, and exhausted at 13 in service: aborted but not pruned;
/// - 21: Y's budget is back, its operation ends at 22 and its first job completes; its
///   second, pending since 11, goes on at once with the 1 ms left (the reservation stays
///   active): the idle server takes its call at 22, and it is aborted in service at 23, when
///   the budget runs out (back at 31, past the horizon); X has none until 30 (the horizon).
#[test]
fn an_exhausted_request_is_pruned_when_queued_and_completes_when_in_service() {
    let client_x = Client {
        replenishment_period: 30,
        period: 30,
        ..hand_client(2, 1, 0, (0, 5, 0))
    };
    let client_y = Client {
        replenishment_period: 10,
        period: 10,
        ..hand_client(2, 2, 1, (0, 2, 0))
    };
    let system = hand_system(1, Protocol::McIpc, vec![client_x, client_y]);
    let expected = Outcome {
        jobs: vec![vec![(0, None)], vec![(1, Some(22)), (11, None)]],
        invocations: vec![
            Invocation {
                exhausted: true,
                ..invocation(0, 0, 0, 12, 2)
            },
            Invocation {
                task: 1,
                invoked: 1,
                issued: 11,
                replied: 22,
                reissues: 1,
                drained: 5,
                drained_since_issue: 3,
                exhausted: true,
            },
        ],
        aborts: vec![
            pruned(3, 1),
            in_service(4, 0),
            in_service(13, 1),
            in_service(23, 1),
        ],
        drained: vec![vec![2, 6]],
        ..Outcome::default()
    };
    assert_both_give(&system, 30, &expected);
}

/// One core, MC-IPC, fixed priorities, `p = 20`. A (priority 3, `e = 2`) invokes 4 at 0; C
/// (priority 2, `e = 1`) invokes 1; B is best-effort and invokes 1. All are released at 0.
///
/// ```text
///                 0    1    2    3    4    5    6 .. 20
/// transfer        S:A  S:A  S:A  S:A  S:C  S:B  .          B sleeps at 6
///   selected      A    A    C    B    B    B    -
/// reissue         S:A  S:A  S:A  S:A  S:B  .               B sleeps at 5
///   selected      A    A    C    B    B    -
/// ```
///
/// - 2: A is exhausted in service: aborted, not pruned; local wait is set and the local head
///   A is replaced by nobody. C is selected, invokes, and becomes the local head, kept out
///   of the global queue by local wait; its reservation runs the server (A's operation);
/// - 3: C is exhausted with its request queued: pruned. Transferred, it waits in the
///   background queue; reissued instead, it waits for budget (until 20). B, selected at
///   last, invokes into the background queue (behind C's if transferred) and runs the
///   server on its selection (a best-effort reservation drains nothing but is charged the
///   time it is selected);
/// - 4: A's operation ends (A has no core until 20); no real-time request waits, so the
///   background queue is served: C's transferred request, on B's selection, then B's;
///   served, C's request is not reissued and completes exhausted.
#[test]
fn pruned_requests_are_served_from_the_background_queue_when_no_real_time_request_waits() {
    let best_effort = Client {
        tier: Tier::BestEffort,
        ..hand_client(0, 1, 0, (0, 1, 0))
    };
    let clients = vec![
        hand_client(2, 3, 0, (0, 4, 0)),
        hand_client(1, 2, 0, (0, 1, 0)),
        best_effort,
    ];
    let system = |transfer| System {
        transfer,
        ..hand_system(1, Protocol::McIpc, clients.clone())
    };
    let request_a = Invocation {
        exhausted: true,
        ..invocation(0, 0, 0, 4, 2)
    };
    let aborts = vec![in_service(2, 0), pruned(3, 1)];
    let transferred = Outcome {
        jobs: vec![vec![(0, None)], vec![(0, None)], vec![(0, Some(6))]],
        invocations: vec![
            request_a,
            Invocation {
                exhausted: true,
                ..invocation(1, 2, 2, 5, 1)
            },
            invocation(2, 3, 3, 6, 3),
        ],
        aborts: aborts.clone(),
        drained: vec![vec![2, 1, 3]],
        ..Outcome::default()
    };
    let reissued = Outcome {
        jobs: vec![vec![(0, None)], vec![(0, None)], vec![(0, Some(5))]],
        invocations: vec![request_a, invocation(2, 3, 3, 5, 2)],
        aborts,
        drained: vec![vec![2, 1, 2]],
        ..Outcome::default()
    };
    for (transfer, expected) in [(true, transferred), (false, reissued)] {
        assert_both_give(&system(transfer), 20, &expected);
    }
}

/// Two cores, PRIO-IPC, fixed priorities, `p = 20`, all released at 0. H (priority 3, high
/// criticality, `e = 6`, `e^L = 2`) invokes 3; L (2, low, `e = 6`) invokes 1; G (1, high,
/// `e = e^L = 4`) invokes 1. H and L are selected; G, not selected, invokes at 0 on the core
/// L idles (slack, `G*`: a step that takes no time), so the queue holds L then G behind H's
/// request in service.
///
/// ```text
///                 0    1    2    3    4    5
/// core 0          S:H  S:H  S:H  H|   S:L  L|     H, G, L sleep at 3, 4, 5
///   selected      H    H    H    H,L  L    L
/// core 1          G*   .    .    S:G  G|
///   selected      L    L    G    G    G
/// mode            low       high           low
/// ```
///
/// At 2, H's pending job has consumed `e^L`: once the instant is done the cluster switches
/// to high mode and demotes L below G, which takes L's core. L's queued request is aborted
/// as on an exhaustion and, L still having budget, reissued at once with its demoted
/// priority: the server, replying to H at 3, takes G's request before L's. L is selected
/// again at 3 (H done). At 5 L completes: no sporadic reservation is active, so the cluster
/// returns to low mode. With `e^L = 3`, H's job completes at 3 having consumed exactly
/// `e^L`: no switch, and L (priority 2) is served before G:
///
/// ```text
///                 0    1    2    3    4    5
/// core 0          S:H  S:H  S:H  H|   S:G  G|     H, L, G sleep at 3, 4, 5
///   selected      H    H    H    H,G  G    G
/// core 1          G*   .    .    S:L  L|
///   selected      L    L    L    L    L
/// ```
#[test]
fn a_mode_switch_aborts_and_reissues_demoted_requests_until_an_idle_instant() {
    let high = |low_budget, client| Client {
        tier: Tier::High(low_budget),
        ..client
    };
    let system = |low_budget| {
        hand_system(
            2,
            Protocol::Prio,
            vec![
                high(low_budget, hand_client(6, 3, 0, (0, 3, 0))),
                hand_client(6, 2, 0, (0, 1, 0)),
                high(4, hand_client(4, 1, 0, (0, 1, 0))),
            ],
        )
    };
    let switched = Outcome {
        jobs: vec![vec![(0, Some(3))], vec![(0, Some(5))], vec![(0, Some(4))]],
        invocations: vec![
            invocation(0, 0, 0, 3, 3),
            invocation(2, 0, 0, 4, 2),
            Invocation {
                issued: 2,
                reissues: 1,
                drained_since_issue: 2,
                ..invocation(1, 0, 0, 5, 4)
            },
        ],
        aborts: vec![pruned(2, 1)],
        drained: vec![vec![3, 4, 2]],
        modes: vec![(2, 0, true), (5, 0, false)],
    };
    let not_switched = Outcome {
        jobs: vec![vec![(0, Some(3))], vec![(0, Some(4))], vec![(0, Some(5))]],
        invocations: vec![
            invocation(0, 0, 0, 3, 3),
            invocation(1, 0, 0, 4, 4),
            invocation(2, 0, 0, 5, 2),
        ],
        drained: vec![vec![3, 4, 2]],
        ..Outcome::default()
    };
    let unswitched_run = Reported::of(&not_switched);
    for (low_budget, expected) in [(2, switched), (3, not_switched)] {
        let system = system(low_budget);
        assert_eq!(reference(&system, 20), expected, "e^L = {low_budget}");
    }
    // The scenario machine reads `mc_abort` as MC-IPC's alone: at this PRIO-IPC gate L's
    // queued request is not aborted by the switch, so it keeps its place and its priority of
    // issue and is served before G's, which the switched run above does not do. Without a
    // switch nothing is aborted and the two readings agree.
    assert_eq!(scenario_machine(&system(3), 20), unswitched_run);
}

/// Two cores, FIFO-IPC, fixed priorities, `e = 10`, `p = 20`, all released at 0. R
/// (priority 2) holds two tasks: T0 invokes 3; T1 computes 2, then invokes 1. Q (priority 1)
/// holds U, which invokes 1, then computes 1.
///
/// ```text
///                 0    1    2    3    4    5
/// core 0          T1   T1   .    T0|  S:T1 T1|    T0, U, T1 done at 3, 5, 5
///   selected      R    R    R    R    R    R
/// core 1          S:T0 S:T0 S:T0 S:U  U    U|
///   selected      Q    Q    Q    Q    Q    Q
/// ```
///
/// At 0 R dispatches T0, its first ready task, and Q dispatches U; both invoke (T0 first,
/// core order). R's next ready task, T1, then runs on R's core while T0 waits; Q, whose task
/// waits, runs the server (T0's operation) on Q's budget. At 2 T1 invokes too and R, no task
/// of it ready, idles: the server is already executing on core 1, where it stays while Q has
/// no ready task. At 3 R dispatches T0, which sleeps (R stays active for T1); at 4 U is ready
/// again, so the server moves to R's core for T1's request.
#[test]
fn a_reservation_dispatches_its_first_ready_task_or_the_server_its_tasks_wait_on() {
    let system = hand_system(
        2,
        Protocol::Fifo,
        vec![
            hand_client(10, 2, 0, (0, 3, 0)),
            Client {
                shares: true,
                ..hand_client(10, 2, 0, (2, 1, 0))
            },
            hand_client(10, 1, 0, (0, 1, 1)),
        ],
    );
    let expected = Outcome {
        jobs: vec![vec![(0, Some(3))], vec![(0, Some(5))], vec![(0, Some(5))]],
        invocations: vec![
            invocation(0, 0, 0, 3, 3),
            invocation(2, 0, 0, 4, 4),
            invocation(1, 2, 2, 5, 3),
        ],
        drained: vec![vec![5, 5]],
        ..Outcome::default()
    };
    assert_both_give(&system, 20, &expected);
}

/// Two cores, PRIO-IPC, fixed priorities, all released at 0 with `p = 20`: B (best-effort)
/// and H (priority 1, `e = 10`) each compute 1, then invoke 1. Both are selected, B's
/// reservation (the first) on core 0, H's on core 1.
///
/// ```text
///                 0    1    2    3
/// core 0          B    S:B  B|         B sleeps at 2, H at 3
/// core 1          H    H~   S:H  H|
/// ```
///
/// At 1 both invoke, B first (core 0): the idle server takes B's call at once (Fig. 1, lines
/// 20-23), though H's, issued at the same instant, is more urgent; H's waits, its core
/// spinning (`H~`: the server runs on core 0). At 2 the reply takes H's request, which runs
/// on H's core. Drained: B's reservation 2 (selected 0..2), H's 3.
#[test]
fn an_idle_server_takes_the_first_call_of_an_instant() {
    let best_effort = Client {
        tier: Tier::BestEffort,
        ..hand_client(0, 1, 0, (1, 1, 0))
    };
    let system = hand_system(
        2,
        Protocol::Prio,
        vec![best_effort, hand_client(10, 1, 0, (1, 1, 0))],
    );
    let expected = Outcome {
        jobs: vec![vec![(0, Some(2))], vec![(0, Some(3))]],
        invocations: vec![invocation(0, 1, 1, 2, 1), invocation(1, 1, 1, 3, 2)],
        drained: vec![vec![2, 3]],
        ..Outcome::default()
    };
    assert_both_give(&system, 10, &expected);
}

/// Two cores, FIFO-IPC, best-effort reservations, `p = 20`. R holds X (released at 1,
/// computes 1, then invokes 1) and A (released at 0, invokes 1); Q holds Y (released at 0,
/// invokes 1). R is selected on core 0, Q on core 1.
///
/// ```text
///                 0    1    2    3
/// core 0          S:A  X    S:X  X|      A sleeps at 2 (on core 0, before S:X), Y at 2
/// core 1          Y~   S:Y  Y|
/// ```
///
/// At 0 A's call is taken at once and Y's waits, Y's context spinning (`Y~`). At 1 the reply
/// to A hands the server to Y's request, which core 1 runs, and X's release is due: it is
/// made before A, the caller the reply answers, takes any step ("Ties", rules 1 and 8; the
/// reply's interrupt to core 1 does not delay it), so R dispatches its first ready task, X,
/// and A waits for a core. At 2 X invokes and lends R's core, where A, ready, sleeps first;
/// X's operation then runs 2..3. Drained: R 3, Q 2.
#[test]
fn a_siblings_release_at_a_replys_instant_comes_before_the_callers_step() {
    let best_effort = |offset, script| Client {
        tier: Tier::BestEffort,
        ..hand_client(0, 1, offset, script)
    };
    let sibling = Client {
        shares: true,
        ..best_effort(0, (0, 1, 0))
    };
    let system = hand_system(
        2,
        Protocol::Fifo,
        vec![
            best_effort(1, (1, 1, 0)),
            sibling,
            best_effort(0, (0, 1, 0)),
        ],
    );
    let expected = Outcome {
        jobs: vec![vec![(1, Some(3))], vec![(0, Some(2))], vec![(0, Some(2))]],
        invocations: vec![
            invocation(1, 0, 0, 1, 1),
            invocation(2, 0, 0, 2, 2),
            invocation(0, 2, 2, 3, 1),
        ],
        drained: vec![vec![3, 2]],
        ..Outcome::default()
    };
    assert_both_give(&system, 10, &expected);
}

/// One core, MC-IPC, fixed priorities, all released at 0. Q (priority 2, `e = 1`) holds U,
/// which invokes 2; R (priority 1, `e = 2`, `p = 2`) holds T0, which invokes 1, and T1,
/// which computes 2, then invokes 1.
///
/// ```text
///            0    1    2    3    4    5    6
/// core       S:U  T0|T1 T1  S:U  S:T0 S:T1 T1|    T0 sleeps at 5, T1 at 6
///   selected Q    R    R    R    R    R
/// ```
///
/// - 1: Q is exhausted with U's request in service: aborted, not pruned (local wait). R is
///   selected; T0 invokes and becomes the local head, kept out of the global queue by local
///   wait; T1 computes;
/// - 3: R's budget runs out as T1 invokes, and is replenished at once (`p` after 1). T1's
///   call, made as the budget runs out, is aborted for it as T0's queued request is ("Ties",
///   rule 8): both are pruned and reissued, in task order (rule 7), so T0 is the local head
///   again and T1 waits in the tail queue. R, no task of it ready, runs U's operation;
/// - 4: the reply to U clears local wait and puts T0 in the global queue: T0 is served, on
///   R's budget; 5: the reply to T0 promotes T1, which is served at once as R's budget runs
///   out again (aborted in service, not pruned) and is replenished; T0 sleeps; 6: T1 is
///   answered and sleeps. Drained: R 5 (selected 1..6), Q 1.
#[test]
fn a_call_made_as_the_budget_runs_out_is_reissued_with_the_pruned_ones_in_task_order() {
    let first = Client {
        replenishment_period: 2,
        ..hand_client(2, 1, 0, (0, 1, 0))
    };
    let second = Client {
        shares: true,
        ..hand_client(2, 1, 0, (2, 1, 0))
    };
    let system = hand_system(
        1,
        Protocol::McIpc,
        vec![first, second, hand_client(1, 2, 0, (0, 2, 0))],
    );
    let reissued = |task, invoked, replied, drained, drained_since_issue, exhausted| Invocation {
        task,
        invoked,
        issued: 3,
        replied,
        reissues: 1,
        drained,
        drained_since_issue,
        exhausted,
    };
    let expected = Outcome {
        jobs: vec![vec![(0, Some(5))], vec![(0, Some(6))], vec![(0, None)]],
        invocations: vec![
            Invocation {
                exhausted: true,
                ..invocation(2, 0, 0, 4, 1)
            },
            reissued(0, 1, 5, 4, 2, false),
            reissued(1, 3, 6, 3, 3, true),
        ],
        aborts: vec![
            in_service(1, 2),
            pruned(3, 0),
            pruned(3, 1),
            in_service(5, 1),
        ],
        drained: vec![vec![5, 1]],
        ..Outcome::default()
    };
    assert_both_give(&system, 12, &expected);
}

/// PRIO-IPC, fixed priorities, `e = 10`. Y (priority 4) computes 6 from 0, then invokes 1;
/// X (3) computes 3 from 0, then invokes 1; A (2) invokes 2 at 1; W (1) invokes 1 at 2. On
/// four cores each has its own:
///
/// ```text
///            0    1    2    3    4    5    6    7
/// core 0     Y    Y    Y    Y    Y    Y    S:Y  Y|    A, X, W and Y sleep at 3, 4, 5, 7
/// core 1     X    X    X    S:X  X|
/// core 2     .    S:A  S:A  A|
/// core 3     .    .    W~   W~   S:W  W|
/// ```
///
/// A's call is taken at once; W's waits, its core spinning (`W~`). At 3 X's computation and
/// A's operation both end: X's was set first (at 0, A's at 1), so X takes its step first
/// ("Ties", rule 1: among executions ending, the first set first) and calls while A's
/// request is still in service; the reply to A then takes X's request, the more urgent,
/// before W's.
///
/// On three cores (no Y), X runs on core 0, which holds the cluster's timer: the releases
/// of A and W at 1 and 2 interrupt it there, and its computation's end is set again at
/// each. At 3 A's operation's end, set at 1, now comes first: the reply takes W's request
/// (3..4, on W's core), A sleeps, and X's call waits for it (served 4..5).
#[test]
fn the_stretches_ending_at_an_instant_are_taken_in_the_order_they_were_set() {
    let system = |clients: &[Client]| hand_system(clients.len(), Protocol::Prio, clients.to_vec());
    let (x, a, w) = (
        hand_client(10, 3, 0, (3, 1, 0)),
        hand_client(10, 2, 1, (0, 2, 0)),
        hand_client(10, 1, 2, (0, 1, 0)),
    );
    let four = system(&[hand_client(10, 4, 0, (6, 1, 0)), x, a, w]);
    let expected = Outcome {
        jobs: vec![
            vec![(0, Some(7))],
            vec![(0, Some(4))],
            vec![(1, Some(3))],
            vec![(2, Some(5))],
        ],
        invocations: vec![
            invocation(2, 1, 1, 3, 2),
            invocation(1, 3, 3, 4, 1),
            invocation(3, 2, 2, 5, 3),
            invocation(0, 6, 6, 7, 1),
        ],
        drained: vec![vec![7, 4, 2, 3]],
        ..Outcome::default()
    };
    assert_both_give(&four, 10, &expected);

    let three = system(&[x, a, w]);
    let expected = Outcome {
        jobs: vec![vec![(0, Some(5))], vec![(1, Some(3))], vec![(2, Some(4))]],
        invocations: vec![
            invocation(1, 1, 1, 3, 2),
            invocation(2, 2, 2, 4, 2),
            invocation(0, 3, 3, 5, 2),
        ],
        drained: vec![vec![5, 2, 2]],
        ..Outcome::default()
    };
    assert_both_give(&three, 10, &expected);
}

/// The scenario machine's agreement with the reference (read as the scenario machine reads
/// the paper: only an MC-IPC gate aborts), measured on 600 systems drawn as the property
/// above draws them, from proptest's deterministic seed: a ratchet while the ignored
/// property is not met. 508 agree now (515 before a job due behind its late predecessor kept
/// its reservation active, in both the machine and the reference: 21 systems agree that did
/// not and 28 no longer do; the ones traced differ in which waiting lender's core runs the
/// server after an instant at which two cores call it, the order the ignored property is
/// about; 488 before the reference took the stretches ending
/// at an instant in the order their ends were set, rather than the operation's first and
/// then cores in order; 486 before a call made as the budget runs out was
/// aborted for it in the reference too, even with the budget replenished at once; 485
/// before a cluster's timer due at a reply's instant
/// kept its place, so that a sibling's release then comes before the caller's step; 482 before the reference's idle server took the first call of an instant
/// at once, as the machine's does; 433 before the scenario machine's
/// slack went to cores whose lender waits on another core's operation); a change that agrees
/// less fails here.
#[test]
fn the_scenario_machine_agrees_with_the_reference_at_least_as_often_as_before() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let strategy = (
        proptest::collection::vec(cluster_with(true, true, true), 1..=2),
        any::<bool>(),
        protocol(),
        any::<bool>(),
        1u64..=80,
    );
    let mut runner = TestRunner::deterministic();
    let mut agreed = 0;
    for _ in 0..600 {
        let tree = strategy.new_tree(&mut runner).expect("a system");
        let (clusters, edf, protocol, transfer, horizon) = tree.current();
        let system = System {
            clusters,
            edf,
            protocol,
            transfer,
        };
        let jobs = scenario_machine_jobs(&system, horizon);
        agreed += usize::from(jobs == scenario_reference(&system, horizon).jobs);
    }
    assert!(
        agreed >= 508,
        "{agreed} of 600 systems agree, fewer than 508"
    );
}
