//! The engine behind [`run`](super::run): state, the per-instant processing and the dispatch.
//!
//! Between two instants the machine's state is constant: each core runs one task, one server
//! or nothing, and each cluster's selection holds (the machine never steps past a scheduler's
//! next event). So time moves from instant to instant: the earliest of a computation's or an
//! operation's end, a job release, a scheduler event, or the end of the run.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bulwark_core::ipc::mc_ipc::{Aborted, Client, GateError};
use bulwark_core::ipc::Gate;
use bulwark_core::kernel::{
    Abort, GateId, InvokeGate, Reissue, ReplyGate, StoreError, SyscallError, TransferToBackground,
    Wait,
};
use bulwark_core::reclaim::ReclaimError;
use bulwark_core::reservation::clustered::{ClusteredScheduler, Mode, ReservationId};
use bulwark_core::{
    ClusterScheduler, CoreDecision, Duration, Event, Instant, Notice, Notices, SchedulerError,
    TaskId, Wake, Work,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::behaviour::draw;
use crate::record::OpenSlices;
use crate::trace::{Mark, MarkKind, Slice, SliceKind, Trace};
use crate::Timing;

use crate::kernel_objects::KernelObjects;

use super::{
    AbortRecord, AllocationRecord, ClusterOutcome, ClusterSimError, Config, GateKind,
    InvocationRecord, JobRecord, MaskRecord, ModeRecord, PrunedRequests, ScriptStep,
};

/// What a task is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    /// Waiting for its next release.
    Sleeping,
    /// Needs `remaining` of processor time before its next step; zero means its next step is
    /// due as soon as it has a core.
    Ready { remaining: Duration },
    /// Waiting for the reply of the server it invoked (its request is queued, transferred to
    /// the background queue, or in service).
    Waiting,
    /// Its request was pruned; it reissues it when its reservation has budget again.
    AwaitingReissue,
    /// Its process was terminated: it never runs again.
    Terminated,
}

/// The invocation a task has under way.
#[derive(Clone, Copy, Debug)]
struct Request {
    server: usize,
    length: Duration,
    invoked: Instant,
    drained_at_invoke: Duration,
    issued: Instant,
    drained_at_issue: Duration,
    /// The reservation's count of aborting notices when the request was last issued.
    aborting_at_issue: u64,
    reissues: u32,
    exhausted: bool,
    /// Already aborted for the exhaustion since it was last issued (pruned, transferred, or
    /// in service and left to complete): not aborted again until reissued.
    settled: bool,
    /// Pruned and waiting in the MC-IPC gate's background queue.
    transferred: bool,
}

struct TaskRun {
    cluster: usize,
    reservation: ReservationId,
    period: Duration,
    script: Vec<ScriptStep>,
    /// The next step to take.
    step: usize,
    state: TaskState,
    rng: ChaCha8Rng,
    /// The nominal release time of the current (or last) job.
    nominal: Instant,
    /// The current job's index in the job records.
    job: Option<usize>,
    request: Option<Request>,
}

/// A server; its gate is the kernel's gate of the same index.
struct ServerRun {
    /// The request in service and the operation time it still needs.
    serving: Option<(TaskId, Duration)>,
    /// The core it ran on during the last interval.
    core: Option<(usize, usize)>,
}

/// What a core runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Running {
    Idle,
    Task(usize),
    Server(usize),
}

pub(super) struct Machine {
    now: Instant,
    /// Per cluster: its scheduler, driven only through [`ClusterScheduler`] (events, then a
    /// decision); its other methods are read for what gates ask (urgency, eligibility).
    schedulers: Vec<ClusteredScheduler>,
    /// Per cluster: the last decision, one entry per core; core 0's timer is the cluster's
    /// next event.
    decisions: Vec<Vec<CoreDecision>>,
    /// Per cluster: the notices of the call under way (cleared after each).
    notices: Vec<Notices>,
    /// Per cluster and reservation: how many calls noticed its budget exhausted or its
    /// priority changed with the mode, which abort its clients' requests (section IV-A,
    /// section VII).
    aborting: Vec<Vec<u64>>,
    /// Per cluster and reservation: budget drained so far (time selected, A2).
    drained: Vec<Vec<Duration>>,
    /// Per cluster and reservation: its tasks, in order.
    members: Vec<Vec<Vec<usize>>>,
    /// Per cluster: its tasks, in order.
    cluster_tasks: Vec<Vec<usize>>,
    tasks: Vec<TaskRun>,
    servers: Vec<ServerRun>,
    /// Per cluster and core: what runs there until the next instant.
    cores: Vec<Vec<Running>>,
    /// Per cluster and core: what ran there during the last stretch of time (idle included,
    /// as the idle thread is a thread).
    loaded: Vec<Vec<Running>>,
    /// The time of one context switch (zero under reported timing, where the platform's own
    /// switches take their real time).
    switch_cost: Duration,
    context_switches: u64,
    /// Per cluster and core: the task whose termination call masks it, until when.
    masked: Vec<Vec<Option<(usize, Instant)>>>,
    /// The kernel objects: the servers' gates and the store behind `allocate` and
    /// `terminate`.
    objects: KernelObjects,
    masks: Vec<MaskRecord>,
    allocations: Vec<AllocationRecord>,
    /// Per task: processor time used on its behalf so far.
    executed: Vec<Duration>,
    /// Job releases: (time, sequence number, task).
    releases: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    sequence: u64,
    transfer: bool,
    seed: u64,
    steps: u64,
    invocations: Vec<InvocationRecord>,
    jobs: Vec<JobRecord>,
    aborts: Vec<AbortRecord>,
    /// Per cluster: its mode as last seen.
    modes: Vec<Mode>,
    mode_records: Vec<ModeRecord>,
    /// The trace, when asked for; cores are numbered across clusters in order.
    trace: Option<Trace>,
    /// Per cluster: the number of its first core in the trace.
    first_core: Vec<u16>,
    /// Per trace core, the slice that may still grow.
    open: OpenSlices,
    /// How a stretch of work ends: time runs it down, or the platform reports it.
    timing: Timing,
    /// Which stretch each task and server is in.
    serials: Serials,
}

/// Counts of the stretches each worker started: a platform whose threads do the work tells
/// a new stretch from one resumed after a preemption.
#[derive(Clone, Debug, Default)]
struct Serials {
    tasks: Vec<u64>,
    servers: Vec<u64>,
}

/// Who does a stretch of work on a core: a task computing, or a server's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Worker {
    /// Task `i` of [`Config::tasks`](super::Config::tasks).
    Task(usize),
    /// Server `q` of [`Config::servers`](super::Config::servers).
    Server(usize),
}

/// A core's stretch of work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// Who works.
    pub worker: Worker,
    /// Its work left (simulated timing: the time to the stretch's end; reported timing: the
    /// whole stretch).
    pub remaining: Duration,
    /// Which of the worker's stretches it is.
    pub serial: u64,
}

/// The end of reservation `r`'s current job: its thread sleeps into its next job, which the
/// machine releases itself (the clustered scheduler keeps no activation timers).
fn complete(r: ReservationId) -> Event {
    Event::Sleep {
        task: TaskId(r.0),
        until: Instant::NEVER,
        wake: Wake::NextJob {
            deadline: Instant::NEVER,
        },
    }
}

impl Machine {
    /// The machine at time zero; `config` has been validated.
    pub(super) fn new(config: &Config) -> Result<Self, ClusterSimError> {
        let cores: Vec<usize> = config.clusters.iter().map(|c| c.cores).collect();
        let capacity = config.tasks.len();
        let mut schedulers = Vec::with_capacity(config.clusters.len());
        for (cluster, c) in config.clusters.iter().enumerate() {
            schedulers.push(
                ClusteredScheduler::new(c)
                    .map_err(|error| ClusterSimError::Cluster { cluster, error })?,
            );
        }
        let mut members: Vec<Vec<Vec<usize>>> = schedulers
            .iter()
            .map(|s| vec![Vec::new(); s.reservation_count()])
            .collect();
        let mut cluster_tasks = vec![Vec::new(); schedulers.len()];
        let mut tasks = Vec::with_capacity(capacity);
        let mut releases = BinaryHeap::with_capacity(capacity);
        for (i, t) in config.tasks.iter().enumerate() {
            members[t.cluster][t.reservation.index()].push(i);
            cluster_tasks[t.cluster].push(i);
            let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
            // One stream per task: a task's draws do not depend on any other task's.
            rng.set_stream(i as u64);
            let first = Instant::ZERO.saturating_add(t.offset);
            releases.push(Reverse((first, i as u64, i)));
            tasks.push(TaskRun {
                cluster: t.cluster,
                reservation: t.reservation,
                period: t.period,
                script: t.script.clone(),
                step: 0,
                state: TaskState::Sleeping,
                rng,
                nominal: first,
                job: None,
                request: None,
            });
        }
        let group_of = config.tasks.iter().map(|t| t.group).collect();
        let quotas: Vec<Duration> = config.groups.iter().map(|g| g.quota).collect();
        let gates = config
            .servers
            .iter()
            .map(|s| match s.gate {
                GateKind::Protocol(protocol) => Gate::new(protocol, capacity, &cores),
                GateKind::Custom(build) => Gate::Other(build(capacity, &cores)),
            })
            .collect();
        let objects = KernelObjects::with_groups(
            config.cost.reclaim_per_unit,
            config.cost.clock_hz,
            &quotas,
            group_of,
            gates,
        )
        .map_err(|refused| match refused {
            StoreError::Group(group, error) => ClusterSimError::Group {
                group,
                reason: error.to_string(),
            },
            StoreError::Thread(task, error) => ClusterSimError::Task {
                task,
                reason: match error {
                    ReclaimError::QuotaExceeded => {
                        "its process does not fit in its reclamation group's quota"
                    }
                    _ => "its process could not be created",
                },
            },
        })?;
        let servers = config
            .servers
            .iter()
            .map(|_| ServerRun {
                serving: None,
                core: None,
            })
            .collect();
        Ok(Machine {
            now: Instant::ZERO,
            decisions: schedulers
                .iter()
                .map(|s| vec![CoreDecision::default(); s.core_count()])
                .collect(),
            notices: schedulers
                .iter()
                .map(|s| Notices::with_capacity(s.notice_capacity()))
                .collect(),
            aborting: schedulers
                .iter()
                .map(|s| vec![0; s.reservation_count()])
                .collect(),
            drained: schedulers
                .iter()
                .map(|s| vec![Duration::ZERO; s.reservation_count()])
                .collect(),
            members,
            cluster_tasks,
            cores: cores.iter().map(|&m| vec![Running::Idle; m]).collect(),
            loaded: cores.iter().map(|&m| vec![Running::Idle; m]).collect(),
            switch_cost: config.cost.time_of(config.cost.context_switch),
            context_switches: 0,
            masked: cores.iter().map(|&m| vec![None; m]).collect(),
            objects,
            masks: Vec::new(),
            allocations: Vec::new(),
            executed: vec![Duration::ZERO; capacity],
            schedulers,
            tasks,
            servers,
            sequence: capacity as u64,
            releases,
            transfer: config.pruned == PrunedRequests::TransferToBackground,
            seed: config.seed,
            steps: 0,
            invocations: Vec::new(),
            jobs: Vec::new(),
            aborts: Vec::new(),
            modes: vec![Mode::Low; config.clusters.len()],
            mode_records: Vec::new(),
            trace: None,
            first_core: cores
                .iter()
                .scan(0u16, |next, &m| {
                    let first = *next;
                    *next = next.saturating_add(u16::try_from(m).unwrap_or(u16::MAX));
                    Some(first)
                })
                .collect(),
            open: OpenSlices::default(),
            timing: Timing::Simulated,
            serials: Serials {
                tasks: vec![0; config.tasks.len()],
                servers: vec![0; config.servers.len()],
            },
        })
    }

    /// The same machine, recording a trace.
    /// Stretches end when the platform reports them ([`Timing::Reported`]).
    pub(super) fn timed(mut self, timing: Timing) -> Self {
        self.timing = timing;
        if timing == Timing::Reported {
            self.switch_cost = Duration::ZERO;
        }
        self
    }

    pub(super) fn recording(mut self) -> Self {
        self.trace = Some(Trace::default());
        self
    }

    /// What ran on each core from now to `next`: a task's computation is its slice, a
    /// server's operation is drawn as its client's (the time it spends for that task).
    fn record_slices(&mut self, next: Instant) {
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        for (k, cores) in self.cores.iter().enumerate() {
            for (c, running) in cores.iter().enumerate() {
                let task = match *running {
                    Running::Task(i) => match self.tasks[i].state {
                        TaskState::Ready { remaining } if !remaining.is_zero() => i,
                        _ => continue,
                    },
                    Running::Server(q) => match self.servers[q].serving {
                        Some((client, left)) if !left.is_zero() => client.index(),
                        _ => continue,
                    },
                    Running::Idle => continue,
                };
                // Reclamation with interrupts masked is kernel time on the caller's behalf.
                let kind = if self.masked[k][c].is_some() {
                    SliceKind::Kernel
                } else {
                    SliceKind::Task
                };
                let piece = Slice {
                    core: self.first_core[k].saturating_add(c as u16),
                    task: Some(TaskId(task as u32)),
                    kind,
                    start: self.now,
                    end: next,
                };
                trace.slices.extend(self.open.push(&piece));
            }
        }
    }

    /// Each job's release and completion, in time order, on its cluster's first core.
    fn job_marks(&self) -> Vec<Mark> {
        let mut seen = vec![0u64; self.tasks.len()];
        let mut marks = Vec::new();
        for job in &self.jobs {
            let index = seen[job.task];
            seen[job.task] += 1;
            let core = self.first_core[self.tasks[job.task].cluster];
            let mark = |kind, at| Mark {
                task: TaskId(job.task as u32),
                core,
                kind,
                at,
                job: index,
            };
            marks.push(mark(MarkKind::Release, job.release));
            if let Some(done) = job.completion {
                marks.push(mark(MarkKind::Completion, done));
            }
        }
        marks.sort_by_key(|m| m.at);
        marks
    }

    /// Does everything due at the current instant, round after round, until time must pass;
    /// `None` once `until` is reached (or nothing can happen any more). `rounds` counts the
    /// rounds at one instant across calls, against a livelock.
    pub(super) fn settle(
        &mut self,
        until: Instant,
        rounds: &mut u64,
    ) -> Result<Option<Instant>, ClusterSimError> {
        // Each round at one instant either lets time pass or has a task take a step that
        // blocks, sleeps or starts a computation; a bounded backlog of late releases aside,
        // that ends quickly.
        let limit = 1_000 + 16 * self.tasks.len() as u64;
        loop {
            if self.now >= until {
                return Ok(None);
            }
            self.process_instant()?;
            self.dispatch();
            self.steps += 1;
            if self.stepping_now() {
                *rounds += 1;
                if *rounds > limit {
                    return Err(ClusterSimError::Livelock { at: self.now });
                }
                continue;
            }
            *rounds = 0;
            self.switch_contexts();
            let next = self.next_instant().min(until);
            if next <= self.now {
                if self.close_instant()? {
                    *rounds += 1;
                    if *rounds > limit {
                        return Err(ClusterSimError::Livelock { at: self.now });
                    }
                    continue;
                }
                return Ok(None);
            }
            return Ok(Some(next));
        }
    }

    /// The stretch core `core` (numbered across clusters in order) runs now, if any.
    pub(super) fn stretch_on(&self, core: usize) -> Option<Stretch> {
        match *self.cores.iter().flatten().nth(core)? {
            Running::Task(i) => match self.tasks[i].state {
                TaskState::Ready { remaining } if !remaining.is_zero() => Some(Stretch {
                    worker: Worker::Task(i),
                    remaining,
                    serial: self.serials.tasks[i],
                }),
                _ => None,
            },
            Running::Server(q) => self.servers[q].serving.map(|(_, left)| Stretch {
                worker: Worker::Server(q),
                remaining: left,
                serial: self.serials.servers[q],
            }),
            Running::Idle => None,
        }
    }

    /// Reported timing: `worker`'s stretch `serial` is done. Ignored for any other stretch.
    pub(super) fn stretch_done(&mut self, worker: Worker, serial: u64) {
        match worker {
            Worker::Task(i) => {
                if self.serials.tasks.get(i) == Some(&serial) {
                    if let TaskState::Ready { remaining } = &mut self.tasks[i].state {
                        *remaining = Duration::ZERO;
                    }
                }
            }
            Worker::Server(q) => {
                if self.serials.servers.get(q) == Some(&serial) {
                    if let Some((_, left)) = &mut self.servers[q].serving {
                        *left = Duration::ZERO;
                    }
                }
            }
        }
    }

    pub(super) fn now(&self) -> Instant {
        self.now
    }

    /// The run's record, up to `until`.
    pub(super) fn finish(mut self, until: Instant) -> ClusterOutcome {
        for job in &mut self.jobs {
            job.response = job
                .completion
                .map(|c| c.saturating_duration_since(job.release));
        }
        let marks = self.job_marks();
        let open = &mut self.open;
        let trace = self.trace.take().map(|mut trace| {
            trace.slices.extend(open.drain());
            trace.marks = marks;
            trace
        });
        ClusterOutcome {
            trace,
            seed: self.seed,
            until,
            steps: self.steps,
            invocations: self.invocations,
            jobs: self.jobs,
            aborts: self.aborts,
            modes: self.mode_records,
            masks: self.masks,
            allocations: self.allocations,
            executed: self.executed,
            drained: self.drained,
            context_switches: self.context_switches,
        }
    }

    /// A scheduler whose next event is now waits for the instant to be closed (a switch to
    /// high mode, section VII): every call for this instant has been made, so close it.
    /// True if one did.
    fn close_instant(&mut self) -> Result<bool, ClusterSimError> {
        let now = self.now;
        let mut closed = false;
        for k in 0..self.schedulers.len() {
            if self.next_event(k) <= now {
                // The timer at the instant already reached closes it.
                self.drive(k, now, Event::Timer)?;
                closed = true;
            }
        }
        Ok(closed)
    }

    /// Cluster `k`'s next event: its decision's timer.
    fn next_event(&self, k: usize) -> Instant {
        self.decisions[k]
            .first()
            .and_then(|d| d.timer)
            .unwrap_or(Instant::NEVER)
    }

    /// The reservation selected on core `c` of cluster `k`, if any.
    fn selected(&self, k: usize, c: usize) -> Option<ReservationId> {
        self.decisions[k]
            .get(c)
            .and_then(|d| d.next)
            .map(|task| ReservationId(task.0))
    }

    /// Reports `event` at `now` to cluster `k`'s scheduler, then asks it for a decision, and
    /// counts the notices that abort requests. Reservation `r` is the interface's thread `r`.
    fn drive(&mut self, k: usize, now: Instant, event: Event) -> Result<(), ClusterSimError> {
        let at = self.now;
        let error = |error: SchedulerError| ClusterSimError::Scheduler {
            cluster: k,
            at,
            error,
        };
        let scheduler = &mut self.schedulers[k];
        let notices = &mut self.notices[k];
        scheduler
            .handle(now, event, notices, &mut Work::default())
            .map_err(error)?;
        scheduler
            .decide(now, &mut self.decisions[k], notices, &mut Work::default())
            .map_err(error)?;
        if notices.is_empty() {
            return Ok(());
        }
        for notice in notices.iter() {
            if let Notice::BudgetExhausted { task } | Notice::ModeChange { task } = notice {
                if let Some(count) = self.aborting[k].get_mut(task.index()) {
                    *count += 1;
                }
            }
        }
        notices.clear();
        Ok(())
    }

    /// The refusal of a call on server `server`'s gate. The machine names only gates it has,
    /// so a refusal is the gate's own.
    fn gate_error(&self, server: usize) -> impl Fn(SyscallError) -> ClusterSimError {
        let at = self.now;
        move |error| ClusterSimError::Gate {
            server,
            at,
            error: match error {
                SyscallError::Gate(error) => error,
                _ => GateError::Unknown,
            },
        }
    }

    /// Time is about to pass: a core that runs a task or server other than what ran there
    /// during the last stretch of time (an idle core ran nothing) switches first, at the cost
    /// of one context switch added to the work of the switched-to occupant, before it
    /// progresses. This is the scenario machine's rule, and ARCHITECTURE.md's: after `now`,
    /// charged to the next thread's context, here the selected reservation, which drains
    /// meanwhile. Charged once time passes, so that a choice replaced at the same instant
    /// costs nothing. A masked core holds the task whose termination call masked it.
    fn switch_contexts(&mut self) {
        for k in 0..self.cores.len() {
            for c in 0..self.cores[k].len() {
                let running = self.cores[k][c];
                if running == self.loaded[k][c] {
                    continue;
                }
                self.loaded[k][c] = running;
                if running == Running::Idle {
                    continue;
                }
                if self.masked[k][c].is_some() {
                    continue;
                }
                self.context_switches += 1;
                let cost = self.switch_cost;
                match running {
                    Running::Task(i) => {
                        if let TaskState::Ready { remaining } = &mut self.tasks[i].state {
                            *remaining = remaining.saturating_add(cost);
                        }
                    }
                    Running::Server(q) => {
                        if let Some((_, left)) = &mut self.servers[q].serving {
                            *left = left.saturating_add(cost);
                        }
                    }
                    Running::Idle => {}
                }
            }
        }
    }

    /// True when a task on a core has a step due now (it takes it in another round at this
    /// instant).
    fn stepping_now(&self) -> bool {
        self.cores.iter().flatten().any(|r| match *r {
            Running::Task(i) => {
                self.tasks[i].state
                    == TaskState::Ready {
                        remaining: Duration::ZERO,
                    }
            }
            _ => false,
        })
    }

    /// The next instant something happens.
    fn next_instant(&self) -> Instant {
        let mut next = self.next_kernel_event();
        for running in self.cores.iter().flatten() {
            let left = match *running {
                Running::Task(i) => match self.tasks[i].state {
                    TaskState::Ready { remaining } => remaining,
                    _ => Duration::MAX,
                },
                Running::Server(q) => self.servers[q].serving.map_or(Duration::MAX, |(_, l)| l),
                Running::Idle => Duration::MAX,
            };
            next = next.min(self.now.saturating_add(left));
        }
        next
    }

    /// The next instant the kernel must act whatever runs: a scheduler event, the end of a
    /// masked interval, a release.
    pub(super) fn next_kernel_event(&self) -> Instant {
        let mut next = Instant::NEVER;
        for k in 0..self.schedulers.len() {
            next = next.min(self.next_event(k));
        }
        for (_, until) in self.masked.iter().flatten().flatten() {
            next = next.min(*until);
        }
        if let Some(Reverse((at, _, _))) = self.releases.peek() {
            next = next.min(*at);
        }
        next
    }

    /// Moves time to `next`: what runs progresses, selected reservations drain (A2).
    pub(super) fn advance(&mut self, next: Instant) -> Result<(), ClusterSimError> {
        let elapsed = next.saturating_duration_since(self.now);
        if !elapsed.is_zero() {
            self.record_slices(next);
        }
        for running in self.cores.iter().flatten() {
            match *running {
                Running::Task(i) => {
                    if let TaskState::Ready { remaining } = &mut self.tasks[i].state {
                        // Reported timing: the stretch lasts until the platform says so.
                        let ran = match self.timing {
                            Timing::Simulated => elapsed.min(*remaining),
                            Timing::Reported if remaining.is_zero() => Duration::ZERO,
                            Timing::Reported => elapsed,
                        };
                        self.executed[i] = self.executed[i].saturating_add(ran);
                        if self.timing == Timing::Simulated {
                            *remaining = remaining.saturating_sub(elapsed);
                        }
                    }
                }
                Running::Server(q) => {
                    // A server's operation is time spent on its client's behalf.
                    if let Some((client, left)) = &mut self.servers[q].serving {
                        let ran = match self.timing {
                            Timing::Simulated => elapsed.min(*left),
                            Timing::Reported if left.is_zero() => Duration::ZERO,
                            Timing::Reported => elapsed,
                        };
                        let spent = &mut self.executed[client.index()];
                        *spent = spent.saturating_add(ran);
                        if self.timing == Timing::Simulated {
                            *left = left.saturating_sub(elapsed);
                        }
                    }
                }
                Running::Idle => {}
            }
        }
        for k in 0..self.schedulers.len() {
            for decision in &self.decisions[k] {
                if let Some(task) = decision.next {
                    let d = &mut self.drained[k][task.index()];
                    *d = d.saturating_add(elapsed);
                }
            }
            self.drive(k, next, Event::Timer)?;
        }
        self.now = next;
        Ok(())
    }

    /// Everything due at `now`, in the order the module documentation gives.
    fn process_instant(&mut self) -> Result<(), ClusterSimError> {
        // Operations that end: reply, then take the next request (as L4's reply-and-wait).
        for q in 0..self.servers.len() {
            if let Some((_, left)) = self.servers[q].serving {
                if left.is_zero() {
                    self.reply(q)?;
                    self.serve(q)?;
                }
            }
        }
        // Tasks on a core with a step due take it.
        for k in 0..self.cores.len() {
            for c in 0..self.cores[k].len() {
                if self.masked[k][c].is_some_and(|(_, until)| until <= self.now) {
                    self.masked[k][c] = None;
                }
                if let Running::Task(i) = self.cores[k][c] {
                    if self.tasks[i].state
                        == (TaskState::Ready {
                            remaining: Duration::ZERO,
                        })
                    {
                        self.take_step(i, c)?;
                    }
                }
            }
        }
        // Releases.
        while let Some(&Reverse((at, _, i))) = self.releases.peek() {
            if at > self.now {
                break;
            }
            self.releases.pop();
            self.release(i)?;
        }
        self.abort_and_reissue()?;
        for q in 0..self.servers.len() {
            if self.servers[q].serving.is_none() {
                self.serve(q)?;
            }
        }
        Ok(())
    }

    fn release(&mut self, i: usize) -> Result<(), ClusterSimError> {
        if self.tasks[i].state == TaskState::Terminated {
            return Ok(());
        }
        let (k, r) = (self.tasks[i].cluster, self.tasks[i].reservation);
        // A release is the activation of the reservation's thread with a new job.
        self.drive(
            k,
            self.now,
            Event::Activate {
                task: TaskId(r.0),
                wake: Wake::NextJob {
                    deadline: Instant::NEVER,
                },
            },
        )?;
        self.tasks[i].job = Some(self.jobs.len());
        self.jobs.push(JobRecord {
            task: i,
            release: self.now,
            completion: None,
            response: None,
            killed: false,
        });
        self.tasks[i].state = TaskState::Ready {
            remaining: Duration::ZERO,
        };
        Ok(())
    }

    /// Task `i`, on core `core` of its cluster, takes its next step.
    fn take_step(&mut self, i: usize, core: usize) -> Result<(), ClusterSimError> {
        let task = &mut self.tasks[i];
        let Some(&step) = task.script.get(task.step) else {
            return Ok(());
        };
        task.step = (task.step + 1) % task.script.len();
        match step {
            ScriptStep::Compute(time) => {
                task.state = TaskState::Ready {
                    remaining: draw(&time, &mut task.rng),
                };
                self.serials.tasks[i] += 1;
            }
            ScriptStep::Invoke { server, length } => {
                let length = draw(&length, &mut task.rng);
                let drained = self.drained[task.cluster][task.reservation.index()];
                let aborting = self.aborting[task.cluster][task.reservation.index()];
                task.request = Some(Request {
                    server,
                    length,
                    invoked: self.now,
                    drained_at_invoke: drained,
                    issued: self.now,
                    drained_at_issue: drained,
                    aborting_at_issue: aborting,
                    reissues: 0,
                    exhausted: false,
                    settled: false,
                    transferred: false,
                });
                task.state = TaskState::Waiting;
                let client = self.client(i);
                // Fig. 1, lines 7-20: enqueue; the server inherits from now on (line 19).
                let invoke = InvokeGate {
                    gate: GateId(server as u32),
                    task: TaskId(i as u32),
                    client,
                };
                self.objects
                    .call(invoke, &mut Work::default())
                    .map_err(self.gate_error(server))?;
            }
            ScriptStep::SleepUntilNextPeriod => {
                let (k, r) = (task.cluster, task.reservation);
                task.state = TaskState::Sleeping;
                task.nominal = task.nominal.saturating_add(task.period);
                let next = task.nominal.max(self.now);
                if let Some(job) = task.job.take() {
                    self.jobs[job].completion = Some(self.now);
                }
                self.releases.push(Reverse((next, self.sequence, i)));
                self.sequence += 1;
                self.drive(k, self.now, complete(r))?;
            }
            ScriptStep::Allocate { count, object } => {
                // The system calls run as the task's own execution; entering the kernel is at
                // least one unit, even when every object is refused.
                let made = self.objects.allocate(i, count, object);
                let time = Duration::from_nanos(self.objects.nanos(made.units.max(1)));
                self.tasks[i].state = TaskState::Ready { remaining: time };
                self.allocations.push(AllocationRecord {
                    at: self.now,
                    task: i,
                    created: made.created,
                    refused: made.refused,
                });
            }
            ScriptStep::Terminate { task: target } => {
                let reclaimed = self.objects.terminate(target, None);
                // At least one unit: terminating a task already gone still enters the kernel.
                let time = Duration::from_nanos(self.objects.nanos(reclaimed.units.max(1)));
                let k = self.tasks[i].cluster;
                let until = self.now.saturating_add(time);
                self.masks.push(MaskRecord {
                    cluster: k,
                    core,
                    task: i,
                    target,
                    units: reclaimed.units,
                    from: self.now,
                    until,
                });
                for killed in reclaimed.killed {
                    self.kill(killed)?;
                }
                if self.tasks[i].state != TaskState::Terminated {
                    // The kernel reclaims with interrupts masked: the caller keeps the core.
                    self.tasks[i].state = TaskState::Ready { remaining: time };
                    if !time.is_zero() {
                        self.masked[k][core] = Some((i, until));
                    }
                }
            }
        }
        Ok(())
    }

    /// Task `i`'s process is gone: its job ends (killed), its request is withdrawn from its
    /// gate (one in service completes, its reply dropped), its reservation loses the job,
    /// and it is never released again.
    fn kill(&mut self, i: usize) -> Result<(), ClusterSimError> {
        let previous = self.tasks[i].state;
        if previous == TaskState::Terminated {
            return Ok(());
        }
        self.tasks[i].state = TaskState::Terminated;
        if let Some(request) = self.tasks[i].request {
            if previous == TaskState::Waiting {
                let q = request.server;
                let abort = Abort {
                    gate: GateId(q as u32),
                    task: TaskId(i as u32),
                };
                match self.objects.call(abort, &mut Work::default()) {
                    Ok(outcome) => self.aborts.push(AbortRecord {
                        at: self.now,
                        task: i,
                        server: q,
                        pruned: outcome == Aborted::Pruned,
                    }),
                    Err(SyscallError::Gate(GateError::NotWaiting)) => {}
                    Err(error) => return Err(self.gate_error(q)(error)),
                }
            }
        }
        self.tasks[i].request = None;
        if let Some(job) = self.tasks[i].job.take() {
            self.jobs[job].killed = true;
            let (k, r) = (self.tasks[i].cluster, self.tasks[i].reservation);
            self.drive(k, self.now, complete(r))?;
        }
        Ok(())
    }

    /// Task `i` as its gates see it: its cluster, and its reservation's current priority.
    fn client(&self, i: usize) -> Client {
        let (k, r) = (self.tasks[i].cluster, self.tasks[i].reservation);
        let scheduler = &self.schedulers[k];
        if scheduler.is_best_effort(r) {
            Client::Background { cluster: k }
        } else {
            Client::RealTime {
                cluster: k,
                urgency: scheduler.urgency(r).unwrap_or(u64::MAX),
            }
        }
    }

    /// Fig. 1, lines 32-42: the request in service is done; its client resumes.
    fn reply(&mut self, q: usize) -> Result<(), ClusterSimError> {
        let reply = ReplyGate {
            gate: GateId(q as u32),
        };
        let task = self
            .objects
            .call(reply, &mut Work::default())
            .map_err(self.gate_error(q))?;
        self.servers[q].serving = None;
        let i = task.index();
        let t = &mut self.tasks[i];
        if t.state == TaskState::Terminated {
            // The client is gone: the reply goes nowhere.
            return Ok(());
        }
        if let Some(request) = t.request.take() {
            let drained = self.drained[t.cluster][t.reservation.index()];
            self.invocations.push(InvocationRecord {
                task: i,
                server: q,
                cluster: t.cluster,
                reservation: t.reservation,
                length: request.length,
                invoked: request.invoked,
                issued: request.issued,
                replied: self.now,
                delay: self.now.saturating_duration_since(request.invoked),
                drained: drained.saturating_sub(request.drained_at_invoke),
                drained_since_issue: drained.saturating_sub(request.drained_at_issue),
                reissues: request.reissues,
                exhausted: request.exhausted,
            });
        }
        t.state = TaskState::Ready {
            remaining: Duration::ZERO,
        };
        Ok(())
    }

    /// Fig. 1, lines 22-30: an idle server takes the next request, if any.
    fn serve(&mut self, q: usize) -> Result<(), ClusterSimError> {
        let wait = Wait {
            gate: GateId(q as u32),
        };
        let next = self
            .objects
            .call(wait, &mut Work::default())
            .map_err(self.gate_error(q))?;
        if let Some(task) = next {
            let length = self.tasks[task.index()]
                .request
                .map_or(Duration::ZERO, |r| r.length);
            if let Some(request) = &mut self.tasks[task.index()].request {
                request.transferred = false;
            }
            self.servers[q].serving = Some((task, length));
            self.serials.servers[q] += 1;
        }
        Ok(())
    }

    /// Section IV-A: a waiting client whose reservation ran out of budget since it issued its
    /// request (or had none when it did) is aborted (`mc_abort`); so is one whose reservation
    /// was demoted or restored by a mode change (section VII: "aborted as if the reservations
    /// had exhausted their budget"). A pruned request is reissued once the reservation has
    /// budget again, with its priority of then.
    fn abort_and_reissue(&mut self) -> Result<(), ClusterSimError> {
        for (k, scheduler) in self.schedulers.iter().enumerate() {
            if scheduler.mode() != self.modes[k] {
                self.modes[k] = scheduler.mode();
                self.mode_records.push(ModeRecord {
                    at: self.now,
                    cluster: k,
                    mode: scheduler.mode(),
                });
            }
        }
        for i in 0..self.tasks.len() {
            let t = &self.tasks[i];
            let Some(request) = t.request else { continue };
            if t.state != TaskState::Waiting || request.settled {
                continue;
            }
            let scheduler = &self.schedulers[t.cluster];
            let exhausted =
                self.aborting[t.cluster][t.reservation.index()] > request.aborting_at_issue;
            if !exhausted && scheduler.is_eligible(t.reservation) {
                continue;
            }
            let q = request.server;
            let abort = Abort {
                gate: GateId(q as u32),
                task: TaskId(i as u32),
            };
            let outcome = self
                .objects
                .call(abort, &mut Work::default())
                .map_err(self.gate_error(q))?;
            self.aborts.push(AbortRecord {
                at: self.now,
                task: i,
                server: q,
                pruned: outcome == Aborted::Pruned,
            });
            let cluster = self.tasks[i].cluster;
            let t = &mut self.tasks[i];
            let Some(request) = &mut t.request else {
                continue;
            };
            request.exhausted = true;
            request.settled = true;
            match outcome {
                Aborted::InService => {}
                Aborted::Pruned => {
                    let transfer = TransferToBackground {
                        gate: GateId(q as u32),
                        task: TaskId(i as u32),
                        cluster,
                    };
                    // A refusal leaves the request where it is: it waits to be reissued.
                    let transferred = self.transfer
                        && self
                            .objects
                            .call(transfer, &mut Work::default())
                            .unwrap_or(false);
                    if transferred {
                        request.transferred = true;
                    } else {
                        t.state = TaskState::AwaitingReissue;
                    }
                }
            }
        }
        for i in 0..self.tasks.len() {
            let t = &self.tasks[i];
            let Some(request) = t.request else { continue };
            let waiting_to_reissue = t.state == TaskState::AwaitingReissue || request.transferred;
            if !waiting_to_reissue || !self.schedulers[t.cluster].is_eligible(t.reservation) {
                continue;
            }
            let q = request.server;
            let client = self.client(i);
            let task = TaskId(i as u32);
            let reissued = if request.transferred {
                // Section V: "when R_j's budget is replenished, then its request, if it is
                // still pending, is automatically reissued with its proper priority".
                let reissue = Reissue {
                    gate: GateId(q as u32),
                    task,
                    client,
                };
                self.objects
                    .call(reissue, &mut Work::default())
                    .unwrap_or(false)
            } else {
                let invoke = InvokeGate {
                    gate: GateId(q as u32),
                    task,
                    client,
                };
                self.objects
                    .call(invoke, &mut Work::default())
                    .map_err(self.gate_error(q))?;
                true
            };
            let (k, r) = (self.tasks[i].cluster, self.tasks[i].reservation);
            let drained = self.drained[k][r.index()];
            let aborting = self.aborting[k][r.index()];
            let now = self.now;
            let t = &mut self.tasks[i];
            if let Some(request) = &mut t.request {
                request.transferred = false;
                if reissued {
                    request.issued = now;
                    request.drained_at_issue = drained;
                    request.aborting_at_issue = aborting;
                    request.reissues += 1;
                    request.exhausted = false;
                    request.settled = false;
                }
            }
            t.state = TaskState::Waiting;
        }
        Ok(())
    }

    /// What reservation `r` of cluster `k` dispatches: its first ready task not running
    /// elsewhere, or else a server one of its waiting tasks invoked that is serving and not
    /// running elsewhere (bandwidth inheritance, section III).
    fn choice(&self, k: usize, r: ReservationId, taken: &[Running]) -> Running {
        let members = &self.members[k][r.index()];
        for &i in members {
            if matches!(self.tasks[i].state, TaskState::Ready { .. })
                && !taken.contains(&Running::Task(i))
            {
                return Running::Task(i);
            }
        }
        for &i in members {
            if let Some(q) = self.inheriting_server(i) {
                if !taken.contains(&Running::Server(q)) {
                    return Running::Server(q);
                }
            }
        }
        Running::Idle
    }

    /// The server task `i` waits on, if it is serving a request (so it can run).
    fn inheriting_server(&self, i: usize) -> Option<usize> {
        let t = &self.tasks[i];
        let request = t.request?;
        (t.state == TaskState::Waiting && self.servers[request.server].serving.is_some())
            .then_some(request.server)
    }

    /// Chooses what each core runs until the next instant.
    fn dispatch(&mut self) {
        let mut taken: Vec<Running> = Vec::new();
        for cores in &mut self.cores {
            cores.iter_mut().for_each(|c| *c = Running::Idle);
        }
        // A masked core keeps the task whose termination call masked it.
        for (k, cores) in self.masked.iter().enumerate() {
            for (c, mask) in cores.iter().enumerate() {
                if let Some((i, _)) = *mask {
                    self.cores[k][c] = Running::Task(i);
                    taken.push(Running::Task(i));
                }
            }
        }
        // A server keeps the core it ran on while that core's reservation dispatches it.
        for q in 0..self.servers.len() {
            let Some((k, c)) = self.servers[q].core else {
                continue;
            };
            if self.masked[k][c].is_some() {
                continue;
            }
            let Some(r) = self.selected(k, c) else {
                continue;
            };
            let members = &self.members[k][r.index()];
            let ready = members
                .iter()
                .any(|&i| matches!(self.tasks[i].state, TaskState::Ready { .. }));
            let inherits = members
                .iter()
                .any(|&i| self.inheriting_server(i) == Some(q));
            if !ready && inherits {
                self.cores[k][c] = Running::Server(q);
                taken.push(Running::Server(q));
            }
        }
        // Each selected reservation dispatches.
        for k in 0..self.cores.len() {
            for c in 0..self.cores[k].len() {
                if self.cores[k][c] != Running::Idle {
                    continue;
                }
                if let Some(r) = self.selected(k, c) {
                    let running = self.choice(k, r, &taken);
                    self.cores[k][c] = running;
                    taken.push(running);
                }
            }
        }
        // Slack reclamation: an idle core runs the most urgent ready task of a reservation of
        // its cluster that has budget but is not selected (best-effort ones included).
        for k in 0..self.cores.len() {
            for c in 0..self.cores[k].len() {
                if self.cores[k][c] != Running::Idle {
                    continue;
                }
                let scheduler = &self.schedulers[k];
                let best = self.cluster_tasks[k]
                    .iter()
                    .copied()
                    .filter(|&i| {
                        let r = self.tasks[i].reservation;
                        matches!(self.tasks[i].state, TaskState::Ready { .. })
                            && !taken.contains(&Running::Task(i))
                            && scheduler.is_eligible(r)
                            && scheduler.core_of(r).is_none()
                    })
                    .min_by_key(|&i| (scheduler.urgency(self.tasks[i].reservation), i));
                if let Some(i) = best {
                    self.cores[k][c] = Running::Task(i);
                    taken.push(Running::Task(i));
                }
            }
        }
        for server in &mut self.servers {
            server.core = None;
        }
        for (k, cores) in self.cores.iter().enumerate() {
            for (c, running) in cores.iter().enumerate() {
                if let Running::Server(q) = *running {
                    self.servers[q].core = Some((k, c));
                }
            }
        }
    }
}
