//! The VBS scheduler of section IV as a kernel policy: EDF over period instances, three preemption causes, a timer at min(t_c, t_l, t_r).
//!
//! See the [parent module](super) for the model, the mapping of the paper's steps onto the
//! [`Policy`] entry points and the invariants.

use alloc::vec::Vec;

use super::process::{
    late, period_end, release_for, scaled_limit, Action, BandwidthCap, Budget, Periodic,
    ReleaseStrategy, Resource,
};
use super::queue::{Key, VbsQueue};
use crate::timeouts::TimeoutQueue;
use crate::{
    ContextChange, CoreError, Decision, Duration, Instant, Notice, Notices, Policy, TaskId, Wake,
    Work,
};

/// A VBS scheduler's configuration: the release strategy and the time representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VbsConfig {
    /// Early or late release of actions arriving within a period (section III-C).
    pub strategy: ReleaseStrategy,
    /// The length of one instant of the paper's discrete time: every limit, period and
    /// known load must be a whole number of instants.
    pub quantum: Duration,
    /// The queues tell `2^horizon_bits` instants apart (circular time); periods may be at
    /// most a quarter of that.
    pub horizon_bits: u32,
}

impl VbsConfig {
    /// One instant is a microsecond unless configured otherwise.
    pub const DEFAULT_QUANTUM: Duration = Duration::from_micros(1);
    /// `2^14` instants, as in the paper's experiments.
    pub const DEFAULT_HORIZON_BITS: u32 = 14;

    /// The default time representation with `strategy`.
    pub const fn new(strategy: ReleaseStrategy) -> Self {
        VbsConfig {
            strategy,
            quantum: Self::DEFAULT_QUANTUM,
            horizon_bits: Self::DEFAULT_HORIZON_BITS,
        }
    }

    /// The same configuration with instants of `quantum`.
    pub const fn with_quantum(mut self, quantum: Duration) -> Self {
        self.quantum = quantum;
        self
    }

    /// The same configuration telling `2^bits` instants apart.
    pub const fn with_horizon_bits(mut self, bits: u32) -> Self {
        self.horizon_bits = bits;
        self
    }

    /// The horizon in instants (`2^horizon_bits`), saturating.
    pub const fn horizon_instants(&self) -> u64 {
        if self.horizon_bits >= 64 {
            u64::MAX
        } else {
            1 << self.horizon_bits
        }
    }

    /// The longest period the scheduler accepts: a quarter of the horizon.
    pub const fn longest_period(&self) -> Duration {
        self.quantum.saturating_mul(self.horizon_instants() / 4)
    }
}

impl Default for VbsConfig {
    fn default() -> Self {
        Self::new(ReleaseStrategy::default())
    }
}

/// A process's kernel-visible state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    Absent,
    /// Runnable as far as the kernel knows (the scheduler may still hold it back).
    Ready,
    /// Suspended until a timeout the policy keeps.
    Sleeping,
    /// Suspended until an activation.
    Blocked,
}

/// Where a process is in the scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No action in progress: never given one, or the last one completed.
    Idle,
    /// In the queues: Blocked (release ahead) or Ready.
    Queued,
    /// Chosen by the last invocation.
    Running,
    /// Its action is in progress but the process suspended itself (block or sleep).
    Suspended,
}

/// The last completed action, while the process is idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Completed {
    /// `c`: completion.
    at: u64,
    /// `f`: termination, the end of the period of the completion.
    termination: u64,
    /// True when the process was running right up to the completion.
    continuous: bool,
}

/// One process's record: the paper's tuple `(i, j, d_i, r_i, l^c_i, λ^c_i)` and what the
/// kernel interface adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Process {
    cap: u64,
    kernel: Kernel,
    phase: Phase,
    wake: Wake,
    /// The current action (or, while idle, the last one), as given.
    action: Option<Action>,
    /// Its resource and full load, in instants.
    resource: Periodic,
    action_load: Option<u64>,
    /// `j + 1`: the actions started so far.
    actions: u64,
    /// `l^c`: the load left, if known.
    load: Option<u64>,
    /// `λ^c`: the limit left in the current period.
    limit: u64,
    /// `r_i`: the release of the current period instance.
    release: u64,
    /// `d_i`: the current deadline.
    deadline: u64,
    /// The process's key in the queues (equal to `(r_i, d_i)` except that a process which
    /// continues within its period is queued as released now).
    key: Key,
    completed: Option<Completed>,
    suspended_at: u64,
    suspended_running: bool,
}

const ABSENT: Process = Process {
    cap: 0,
    kernel: Kernel::Absent,
    phase: Phase::Idle,
    wake: Wake::SameJob,
    action: None,
    resource: Periodic {
        limit: 0,
        period: 0,
    },
    action_load: None,
    actions: 0,
    load: None,
    limit: 0,
    release: 0,
    deadline: 0,
    key: Key {
        release: 0,
        deadline: 0,
    },
    completed: None,
    suspended_at: 0,
    suspended_running: false,
};

/// Where a process is, as [`Vbs::process_state`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessPhase {
    /// No action in progress (never given one, or the last one completed and the next has
    /// not been marked yet).
    Idle,
    /// In the paper's Blocked set: waiting for its release.
    Blocked,
    /// In the Ready set.
    Ready,
    /// Chosen by the last invocation.
    Running,
    /// Suspended by the kernel (blocked or sleeping) in the middle of an action.
    Suspended,
}

/// A snapshot of one process, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessState {
    /// Where the process is.
    pub phase: ProcessPhase,
    /// True while the kernel holds it suspended (blocked or sleeping).
    pub suspended: bool,
    /// Its bandwidth cap.
    pub cap: BandwidthCap,
    /// The current action, or the last one while idle.
    pub action: Option<Action>,
    /// How many actions it has started.
    pub actions_started: u64,
    /// `l^c`: the load left, if known, as of the last invocation.
    pub load_left: Option<Duration>,
    /// `λ^c`: the limit left in the current period, as of the last invocation.
    pub limit_left: Duration,
    /// `r_i`: the release of the current period instance.
    pub release: Instant,
    /// `d_i`: the current deadline.
    pub deadline: Instant,
    /// The termination of the last completed action, while idle.
    pub termination: Option<Instant>,
}

/// The VBS scheduler for one core, with queue plugin `Q`.
#[derive(Clone, Debug)]
pub struct Vbs<Q: VbsQueue> {
    config: VbsConfig,
    /// Nanoseconds per instant.
    quantum: u64,
    /// A quarter of the horizon, in instants: the longest period.
    quarter: u64,
    processes: Vec<Process>,
    queue: Q,
    sleepers: TimeoutQueue,
    running: Option<TaskId>,
    /// `t_s`: the instant of the last invocation.
    last: u64,
    /// A lower bound of every deadline a ready process can have at the next invocation.
    floor: u64,
    /// The sum of the admitted caps, in parts.
    admitted: u64,
    /// Per process: its limit ran out and it has not run since (its budget comes back with
    /// its next period instance).
    exhausted: Vec<bool>,
    /// Budget notices not yet taken ([`Policy::take_notices`]).
    notices: Notices,
}

impl<Q: VbsQueue> Vbs<Q> {
    /// A scheduler for task ids `0..capacity`, with no processes yet.
    pub fn with_capacity(capacity: usize, config: VbsConfig) -> Result<Self, CoreError> {
        if config.quantum.is_zero() || capacity >= u32::MAX as usize {
            return Err(CoreError::InvalidParameter);
        }
        let queue = Q::new(capacity, config.horizon_bits)?;
        let mut processes = Vec::new();
        processes
            .try_reserve_exact(capacity)
            .map_err(|_| CoreError::InvalidParameter)?;
        processes.resize(capacity, ABSENT);
        Ok(Vbs {
            config,
            quantum: config.quantum.as_nanos(),
            quarter: config.horizon_instants() / 4,
            processes,
            queue,
            sleepers: TimeoutQueue::with_capacity(capacity),
            running: None,
            last: 0,
            floor: u64::MAX,
            admitted: 0,
            exhausted: alloc::vec![false; capacity],
            notices: Notices::with_capacity(capacity),
        })
    }

    /// The configuration.
    pub fn config(&self) -> VbsConfig {
        self.config
    }

    /// The queue plugin (for its memory and statistics).
    pub fn queue(&self) -> &Q {
        &self.queue
    }

    /// The bytes the scheduler holds, queues included.
    pub fn memory_bytes(&self) -> usize {
        core::mem::size_of::<Self>() - core::mem::size_of::<Q>()
            + self.queue.memory_bytes()
            + self.processes.capacity() * core::mem::size_of::<Process>()
    }

    /// The sum of the admitted bandwidth caps, in parts of [`BandwidthCap::SCALE`].
    pub fn admitted_parts(&self) -> u64 {
        self.admitted
    }

    /// The process chosen by the last invocation.
    pub fn running(&self) -> Option<TaskId> {
        self.running
    }

    /// Admits `task` as a VBS process with bandwidth cap `cap` if the caps still sum to at
    /// most one (Eq. 2, the constant-time admission test). The process starts idle, with no
    /// action: [`switch_action`](Self::switch_action) gives it its first.
    pub fn add_process(&mut self, task: TaskId, cap: BandwidthCap) -> Result<(), CoreError> {
        let p = self
            .processes
            .get(task.index())
            .ok_or(CoreError::UnknownTask)?;
        if p.kernel != Kernel::Absent {
            return Err(CoreError::AlreadyAdded);
        }
        let admitted = self.admitted.saturating_add(cap.parts());
        if cap.parts() == 0 || admitted > BandwidthCap::SCALE {
            return Err(CoreError::InvalidParameter);
        }
        self.admitted = admitted;
        self.processes[task.index()] = Process {
            cap: cap.parts(),
            kernel: Kernel::Blocked,
            ..ABSENT
        };
        Ok(())
    }

    /// Removes `task` (a zombie process, or one leaving the system) and frees its cap.
    pub fn remove_process(
        &mut self,
        now: Instant,
        task: TaskId,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        self.known(task)?;
        self.sync(now, work);
        let p = self.processes[task.index()];
        if p.phase == Phase::Queued {
            self.queue.remove(task.0, work);
        }
        if p.kernel == Kernel::Sleeping {
            self.sleepers.cancel(task, work);
        }
        self.admitted = self.admitted.saturating_sub(p.cap);
        self.processes[task.index()] = ABSENT;
        Ok(())
    }

    /// The process marks the switch to its next action at `now` (section IV: "marking a change
    /// of action forces a scheduler invocation"): its current action, if any, completes at
    /// `now` (the completion case of step 1), and `action` arrives, to be released by the
    /// termination and release strategies. The kernel then calls
    /// [`schedule`](Policy::schedule).
    ///
    /// Allowed for a process the kernel considers ready, and for an idle process (a new
    /// one: this gives it its first action). `action` must use a resource whose utilization
    /// is within the process's cap, whose period is at most a quarter of the horizon, and
    /// whose limit, period and known load are whole instants.
    pub fn switch_action(
        &mut self,
        now: Instant,
        task: TaskId,
        action: Action,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let p = self.known(task)?;
        let (resource, load) = self.instants(action, p.cap)?;
        let allowed =
            p.kernel == Kernel::Ready || (p.kernel == Kernel::Blocked && p.phase == Phase::Idle);
        if !allowed {
            return Err(CoreError::NotReady);
        }
        let was_running = self.running == Some(task);
        let now = self.sync(now, work);
        if self.processes[task.index()].phase == Phase::Queued {
            self.queue.remove(task.0, work);
            self.complete(task, now, was_running);
        }
        self.processes[task.index()].kernel = Kernel::Ready;
        self.start_action(task, now, action, resource, load, work);
        Ok(())
    }

    /// The process marks the completion of its current action at `now` with no next action
    /// yet (an action of unknown load ends, or the process is about to stop). It stays idle
    /// until [`switch_action`](Self::switch_action) or an activation.
    pub fn complete_action(
        &mut self,
        now: Instant,
        task: TaskId,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let p = self.known(task)?;
        if p.kernel != Kernel::Ready || !matches!(p.phase, Phase::Queued | Phase::Running) {
            return Err(CoreError::NotReady);
        }
        let was_running = self.running == Some(task);
        let now = self.sync(now, work);
        if self.processes[task.index()].phase == Phase::Queued {
            self.queue.remove(task.0, work);
            self.complete(task, now, was_running);
        }
        Ok(())
    }

    /// A snapshot of `task`.
    pub fn process_state(&self, task: TaskId) -> Option<ProcessState> {
        let p = self.processes.get(task.index())?;
        if p.kernel == Kernel::Absent {
            return None;
        }
        let phase = match p.phase {
            Phase::Idle => ProcessPhase::Idle,
            Phase::Running => ProcessPhase::Running,
            Phase::Suspended => ProcessPhase::Suspended,
            Phase::Queued if p.key.release > self.last => ProcessPhase::Blocked,
            Phase::Queued => ProcessPhase::Ready,
        };
        let duration = |i: u64| Duration::from_nanos(i.saturating_mul(self.quantum));
        Some(ProcessState {
            phase,
            suspended: matches!(p.kernel, Kernel::Sleeping | Kernel::Blocked)
                && p.phase != Phase::Idle,
            cap: BandwidthCap(p.cap),
            action: p.action,
            actions_started: p.actions,
            load_left: p.load.map(duration),
            limit_left: duration(p.limit),
            release: self.instant(p.release),
            deadline: self.instant(p.deadline),
            termination: p.completed.map(|c| self.instant(c.termination)),
        })
    }

    fn known(&self, task: TaskId) -> Result<Process, CoreError> {
        match self.processes.get(task.index()) {
            Some(p) if p.kernel != Kernel::Absent => Ok(*p),
            _ => Err(CoreError::UnknownTask),
        }
    }

    fn instant(&self, instants: u64) -> Instant {
        Instant::from_nanos(instants.saturating_mul(self.quantum))
    }

    /// Whole instants in `d`, if `d` is a whole number of them.
    fn whole(&self, d: Duration) -> Option<u64> {
        d.as_nanos()
            .is_multiple_of(self.quantum)
            .then(|| d.as_nanos() / self.quantum)
    }

    /// Validates `action` for a process of cap `cap` and converts it to instants.
    fn instants(&self, action: Action, cap: u64) -> Result<(Periodic, Option<u64>), CoreError> {
        let r = action.resource;
        r.validate()?;
        let (Some(limit), Some(period)) = (self.whole(r.limit), self.whole(r.period)) else {
            return Err(CoreError::InvalidParameter);
        };
        if period > self.quarter || !BandwidthCap(cap).admits(r) {
            return Err(CoreError::InvalidParameter);
        }
        let load = match action.load {
            None => None,
            Some(l) => match self.whole(l) {
                Some(l) if l > 0 => Some(l),
                _ => return Err(CoreError::InvalidParameter),
            },
        };
        Ok((Periodic { limit, period }, load))
    }

    /// Brings the scheduler to `now`: step 1 (the running process's preemption cause),
    /// step 2 (releases), and the horizon upkeep. Every entry point starts with it, so an
    /// event is a scheduler invocation as the paper's algorithm has it. Returns `now` in
    /// instants (never before the last invocation).
    ///
    /// The queues are released up to `now` before step 1 as well as after it, so that step
    /// 1's new keys are placed relative to `now` even after a late invocation (the horizon
    /// requirement). The order this gives is the paper's: everything released before step 1
    /// has a later release than the running process, which is requeued ahead of it either
    /// way, and a limit case due at `now` is released after step 1, behind everything queued
    /// before it, as it would be in step 2.
    fn sync(&mut self, now: Instant, work: &mut Work) -> u64 {
        let now = (now.as_nanos() / self.quantum).max(self.last);
        self.queue.release(now, work);
        if let Some(task) = self.running.take() {
            self.preempt(task, now, work);
            self.queue.release(now, work);
        }
        self.last = now;
        self.keep_horizon(now, work);
        now
    }

    /// Step 1: the running process is preempted at `now` (section IV). The cause is the
    /// first of completion (its known load is done, at `t_s + l^c`; it takes precedence over
    /// a limit reached at the same instant), limit (its current limit is used up), and
    /// release (anything else: another process is released or an event happened, and the
    /// priorities are established anew).
    fn preempt(&mut self, task: TaskId, now: u64, work: &mut Work) {
        work.reservations_touched += 1;
        let elapsed = now - self.last;
        let t_s = self.last;
        let p = &mut self.processes[task.index()];
        match p.load {
            Some(load) if load <= elapsed => {
                // Completion. With a late invocation the load may also exceed the limit:
                // the process overran, and its limit is spent.
                p.limit = p.limit.saturating_sub(load);
                p.load = Some(0);
                self.complete(task, t_s.saturating_add(load), true);
            }
            _ if p.limit <= elapsed => {
                // Limit: l^c -= (t - t_s); λ^c = λ, r = kπ, d = (k + 1)π, t ∈ ((k-1)π, kπ].
                p.load = p.load.map(|l| l.saturating_sub(elapsed));
                let budget = late(now, p.resource);
                self.enqueue(task, budget, budget.release, work);
                self.exhausted[task.index()] = true;
                self.notices.note(Notice::BudgetExhausted { task });
            }
            _ => {
                // Release: l^c -= (t - t_s), λ^c -= (t - t_s), d unchanged.
                //
                // Reading chosen: the paper sets d = kπ with t ∈ ((k-1)π, kπ], the end of
                // the current period. That is the process's current deadline whenever
                // t > r_i; at t = r_i (a zero-length run, two invocations at one instant)
                // the formula would give d = r_i, an empty window. Keeping d_i gives the
                // paper's value in every other case and never an empty window.
                p.load = p.load.map(|l| l - elapsed);
                p.limit -= elapsed;
                p.phase = Phase::Queued;
                let key = p.key;
                self.queue.requeue_front(task.0, key, work);
            }
        }
    }

    /// The current action of `task` completes at `at`; the process becomes idle until its
    /// next action arrives. Termination strategy (section III-B): the action terminates at
    /// the end of the period in which it completed.
    fn complete(&mut self, task: TaskId, at: u64, continuous: bool) {
        let p = &mut self.processes[task.index()];
        p.completed = Some(Completed {
            at,
            termination: period_end(at, p.resource.period),
            continuous,
        });
        p.phase = Phase::Idle;
    }

    /// The next action arrives at `now` for the idle `task` (section IV, completion case).
    fn start_action(
        &mut self,
        task: TaskId,
        now: u64,
        action: Action,
        resource: Periodic,
        load: Option<u64>,
        work: &mut Work,
    ) {
        let strategy = self.config.strategy;
        let p = &mut self.processes[task.index()];
        let previous = p.completed.take();
        let same = p.action.is_some() && p.resource == resource;
        p.action = Some(action);
        p.resource = resource;
        p.action_load = load;
        p.load = load;
        p.actions += 1;
        work.reservations_touched += 1;
        let (budget, queued_release) = match previous {
            // R_{j+1} = R_j: "P_i is moved to Ready, its deadline d_i and release time r_i
            // remain unchanged", with the limit left.
            Some(c) if same && now < p.deadline => {
                if p.key.release > now {
                    // Still waiting for its period (it completed right at its limit).
                    (
                        Budget {
                            release: p.release,
                            deadline: p.deadline,
                            limit: p.limit,
                        },
                        p.key.release,
                    )
                } else {
                    // Reading chosen for a switch that is not immediate (the process was
                    // suspended or another process ran since the completion): the limit
                    // left is capped by the bandwidth of the rest of the period, as CBS
                    // does on wake-up, so the gap cannot concentrate demand before d_i.
                    let limit = if c.continuous && now == c.at {
                        p.limit
                    } else {
                        p.limit.min(scaled_limit(now, p.deadline, resource))
                    };
                    if limit > 0 {
                        let budget = Budget {
                            release: p.release,
                            deadline: p.deadline,
                            limit,
                        };
                        (budget, now)
                    } else {
                        let budget = late(now, resource);
                        (budget, budget.release)
                    }
                }
            }
            // R_{j+1} != R_j (or the period is over): released from the termination time
            // m π_j by the strategy, or from `now` if the process marks the switch later.
            Some(c) => {
                let budget = release_for(strategy, now.max(c.termination), resource);
                (budget, budget.release)
            }
            // The first action arrives now.
            None => {
                let budget = release_for(strategy, now, resource);
                (budget, budget.release)
            }
        };
        self.enqueue(task, budget, queued_release, work);
    }

    /// A suspended process resumes its action at `now`.
    ///
    /// Not in the paper (its processes do not suspend). Reading chosen to keep Eq. (1)'s
    /// premises, the capacity per period and the EDF density: a process whose period has not
    /// begun keeps it; one resuming inside its period keeps its deadline with the limit left
    /// capped by the bandwidth of the rest of the period (CBS's wake-up rule); one resuming
    /// after its deadline arrives afresh under the release strategy.
    fn resume(&mut self, task: TaskId, now: u64, work: &mut Work) {
        let strategy = self.config.strategy;
        let p = self.processes[task.index()];
        work.reservations_touched += 1;
        let (budget, queued_release) = if now < p.deadline {
            if p.key.release > now {
                let budget = Budget {
                    release: p.release,
                    deadline: p.deadline,
                    limit: p.limit,
                };
                (budget, p.key.release)
            } else {
                let limit = p.limit.min(scaled_limit(now, p.deadline, p.resource));
                let budget = if limit > 0 {
                    Budget {
                        release: now,
                        deadline: p.deadline,
                        limit,
                    }
                } else {
                    late(now, p.resource)
                };
                (budget, budget.release)
            }
        } else {
            let budget = release_for(strategy, now, p.resource);
            (budget, budget.release)
        };
        self.enqueue(task, budget, queued_release, work);
    }

    /// Queues `task` with the period instance `budget`, keyed by `queued_release`.
    fn enqueue(&mut self, task: TaskId, budget: Budget, queued_release: u64, work: &mut Work) {
        let p = &mut self.processes[task.index()];
        p.release = budget.release;
        p.deadline = budget.deadline;
        p.limit = budget.limit;
        p.key = Key {
            release: queued_release,
            deadline: budget.deadline,
        };
        p.phase = Phase::Queued;
        let key = p.key;
        self.queue.insert_blocked(task.0, key, work);
        self.floor = self.floor.min(key.release);
    }

    /// Takes a process out of the queues into self-suspension.
    fn suspend(&mut self, task: TaskId, now: u64, was_running: bool, work: &mut Work) {
        let p = &mut self.processes[task.index()];
        if p.phase == Phase::Queued {
            p.phase = Phase::Suspended;
            p.suspended_at = now;
            p.suspended_running = was_running;
            self.queue.remove(task.0, work);
        }
    }

    /// A suspended process wakes at `now` as `wake` says: the same action resumes, or
    /// (`NextJob`) the action completes as of the suspension and a new one like it arrives.
    /// An idle process starts a new action like its last.
    fn wake(&mut self, task: TaskId, wake: Wake, now: u64, work: &mut Work) {
        let p = self.processes[task.index()];
        self.processes[task.index()].kernel = Kernel::Ready;
        match (p.phase, wake) {
            (Phase::Suspended, Wake::SameJob) => self.resume(task, now, work),
            (Phase::Suspended, Wake::NextJob { .. }) | (Phase::Idle, _) => {
                if p.phase == Phase::Suspended {
                    self.complete(task, p.suspended_at, p.suspended_running);
                }
                if let Some(action) = p.action {
                    self.start_action(task, now, action, p.resource, p.action_load, work);
                }
            }
            (Phase::Queued | Phase::Running, _) => {}
        }
    }

    /// Keeps every queued deadline within the horizon (the circular-time requirement).
    ///
    /// Normally a no-op: ready deadlines are at least `floor`, and invocations come at most
    /// a quarter horizon apart while a process runs. If the platform invoked the scheduler
    /// too late (a missed timer, an overload of overheads), a deadline may have fallen more
    /// than a quarter horizon behind: then every overdue queued process (deadline before
    /// `now`) is re-keyed as released now with deadline now, in task order, which keeps them
    /// ahead of every process still in time. This costs `O(n)` queue operations, and only
    /// after a guarantee was already lost.
    fn keep_horizon(&mut self, now: u64, work: &mut Work) {
        if self.floor.saturating_add(self.quarter) >= now {
            return;
        }
        // Two passes: every overdue key leaves the queues before any fresh one enters, so a
        // fresh key never shares a circular slot with a stale one.
        for (i, p) in self.processes.iter().enumerate() {
            if p.phase == Phase::Queued && p.key.deadline < now {
                self.queue.remove(i as u32, work);
            }
        }
        for i in 0..self.processes.len() {
            let p = self.processes[i];
            if p.phase != Phase::Queued || self.queue.key(i as u32).is_some() {
                continue;
            }
            let budget = Budget {
                release: now,
                deadline: now,
                limit: p.limit,
            };
            self.enqueue(TaskId(i as u32), budget, now, work);
            work.reservations_touched += 1;
        }
        self.queue.release(now, work);
        self.floor = now;
    }

    /// Checks one process's record against the queues and the configuration.
    fn check_process(&self, i: usize, p: &Process) -> Result<(), &'static str> {
        let task = TaskId(i as u32);
        let queued = self.queue.key(task.0);
        if (p.phase == Phase::Queued) != queued.is_some() {
            return Err("a process is queued exactly when its phase says so");
        }
        if let Some(key) = queued {
            if key != p.key {
                return Err("a queued process is keyed as its record says");
            }
        }
        if (p.phase == Phase::Running) != (self.running == Some(task)) {
            return Err("exactly the chosen process is running");
        }
        if (p.kernel == Kernel::Sleeping) != self.sleepers.contains(task) {
            return Err("a process has a timeout exactly when it sleeps");
        }
        match (p.phase, p.kernel) {
            (Phase::Queued | Phase::Running, Kernel::Ready) => {}
            (Phase::Queued | Phase::Running, _) => {
                return Err("only a process the kernel deems ready is queued or running")
            }
            (Phase::Suspended, Kernel::Ready) => {
                return Err("a suspended process is blocked or sleeping")
            }
            _ => {}
        }
        let Some(action) = p.action else {
            if p.phase != Phase::Idle || p.actions != 0 {
                return Err("a process with no action is idle");
            }
            return Ok(());
        };
        if !BandwidthCap(p.cap).admits(action.resource) || p.resource.period > self.quarter {
            return Err("every resource is within the cap and the horizon");
        }
        if matches!(p.phase, Phase::Queued | Phase::Running) {
            let key = p.key;
            if p.limit == 0 || p.limit > p.resource.limit || p.load == Some(0) {
                return Err("a competing process has limit and load left, limit at most λ");
            }
            if key.deadline != p.deadline
                || key.release > key.deadline
                || key.deadline - key.release > p.resource.period
                || p.release > p.deadline
            {
                return Err("a period instance has r <= d <= r + π");
            }
            if key.deadline.saturating_add(self.quarter) < self.last
                || key.deadline >= self.last.saturating_add(self.quarter.saturating_mul(3))
                || (key.release > self.last
                    && key.release >= self.last.saturating_add(self.quarter.saturating_mul(2)))
            {
                return Err("queued keys are within the horizon");
            }
            if self.floor > key.deadline || (key.release > self.last && self.floor > key.release) {
                return Err("the floor bounds every queued deadline and pending release");
            }
        }
        Ok(())
    }
}

impl<Q: VbsQueue> Policy for Vbs<Q> {
    fn name(&self) -> &'static str {
        Q::POLICY_NAME
    }

    fn notice_capacity(&self) -> usize {
        self.notices.capacity()
    }

    /// A process whose current limit ran out while it ran (step 1's limit case), and its
    /// next dispatch, on the limit of its next period instance.
    fn take_notices(&mut self, notices: &mut Notices) {
        self.notices.move_into(notices);
    }

    /// A suspended process wakes (`SameJob`: its action resumes; `NextJob`: the action
    /// completes as of the suspension and a new one like it arrives), or an idle process
    /// starts a new action like its last (the kernel's way to say "the next action, same
    /// as before"; [`Vbs::switch_action`] names a different one). The deadline in `wake` is
    /// not used: VBS deadlines come from the resources.
    fn activate(
        &mut self,
        now: Instant,
        task: TaskId,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let p = self.known(task)?;
        if p.kernel == Kernel::Ready {
            return Err(CoreError::AlreadyReady);
        }
        if p.action.is_none() {
            return Err(CoreError::InvalidParameter);
        }
        let now = self.sync(now, work);
        if p.kernel == Kernel::Sleeping {
            self.sleepers.cancel(task, work);
        }
        self.wake(task, wake, now, work);
        Ok(())
    }

    /// The process suspends until `until`, then wakes as `wake` says (see
    /// [`activate`](Policy::activate)). A blocked process may be given a timeout, which is
    /// how a process whose next action arrives later is set up; a process that never had an
    /// action has nothing to wake into and is refused.
    fn sleep(
        &mut self,
        now: Instant,
        task: TaskId,
        until: Instant,
        wake: Wake,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let p = self.known(task)?;
        if p.kernel == Kernel::Sleeping {
            return Err(CoreError::NotReady);
        }
        if p.action.is_none() {
            return Err(CoreError::InvalidParameter);
        }
        let was_running = self.running == Some(task);
        let now_instants = self.sync(now, work);
        if p.kernel == Kernel::Ready {
            if until <= now && wake == Wake::SameJob {
                // An absolute sleep into the past returns at once: nothing to do.
                return Ok(());
            }
            self.suspend(task, now_instants, was_running, work);
        }
        if until <= now {
            self.wake(task, wake, now_instants, work);
        } else {
            let p = &mut self.processes[task.index()];
            p.kernel = Kernel::Sleeping;
            p.wake = wake;
            self.sleepers.arm(task, until, work);
        }
        Ok(())
    }

    /// The process suspends until an activation; its action stays in progress.
    fn block(&mut self, now: Instant, task: TaskId, work: &mut Work) -> Result<(), CoreError> {
        let p = self.known(task)?;
        if p.kernel != Kernel::Ready {
            return Err(CoreError::NotReady);
        }
        let was_running = self.running == Some(task);
        let now = self.sync(now, work);
        self.suspend(task, now, was_running, work);
        self.processes[task.index()].kernel = Kernel::Blocked;
        Ok(())
    }

    /// Steps 1 and 2 (see `sync`), the sleepers that are due, then step 3: the earliest
    /// deadline runs, until `min(t_c, t_l, t_r)` or the next sleeper's timeout.
    fn schedule(&mut self, now: Instant, work: &mut Work) -> Decision {
        let t = self.sync(now, work);
        let mut woke = false;
        while let Some((task, _)) = self.sleepers.pop_expired(now, work) {
            let wake = self.processes[task.index()].wake;
            self.wake(task, wake, t, work);
            woke = true;
        }
        if woke {
            self.queue.release(t, work);
        }
        let next = self.queue.earliest_ready(work).map(|(m, _)| TaskId(m));
        let t_r = self.queue.next_release(work);
        let mut timer = t_r;
        self.floor = t_r.unwrap_or(u64::MAX);
        if let Some(task) = next {
            if core::mem::take(&mut self.exhausted[task.index()]) {
                // Its next period instance gave it a limit again: noticed when it runs, as
                // SPR notices a deferred replenishment.
                self.notices.note(Notice::Replenished { task });
            }
            self.queue.remove(task.0, work);
            let p = &mut self.processes[task.index()];
            p.phase = Phase::Running;
            let t_l = t.saturating_add(p.limit);
            let t_c = p.load.map(|l| t.saturating_add(l));
            timer = [Some(t_l), t_c, t_r].into_iter().flatten().min();
            self.floor = self.floor.min(p.key.deadline);
        }
        self.running = next;
        let timer = timer.map(|i| self.instant(i));
        let sleeper = self.sleepers.earliest(work).map(|(_, at)| at);
        let timer = [timer, sleeper].into_iter().flatten().min();
        Decision { next, timer }
    }

    /// An action switch: the next action runs on `(budget, period)` as its resource.
    fn reconfigure(
        &mut self,
        now: Instant,
        task: TaskId,
        context: ContextChange,
        work: &mut Work,
    ) -> Result<(), CoreError> {
        let action = Action {
            load: context.load,
            resource: Resource::new(context.budget, context.period),
        };
        Vbs::switch_action(self, now, task, action, work)
    }

    /// `(r_i, d_i)` of the process's current period instance (see [`ProcessState`]).
    fn scheduling_window(&self, task: TaskId) -> Option<(Instant, Instant)> {
        self.process_state(task)
            .map(|state| (state.release, state.deadline))
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.queue.check()?;
        self.sleepers.check()?;
        let mut admitted = 0u64;
        let mut queued = 0;
        for (i, p) in self.processes.iter().enumerate() {
            if p.kernel == Kernel::Absent {
                if *p != ABSENT || self.queue.key(i as u32).is_some() {
                    return Err("an absent process holds no state");
                }
                continue;
            }
            admitted += p.cap;
            queued += usize::from(p.phase == Phase::Queued);
            self.check_process(i, p)?;
        }
        if admitted != self.admitted || admitted > BandwidthCap::SCALE {
            return Err("the admitted caps sum to at most one");
        }
        if queued != self.queue.len() {
            return Err("the queues hold exactly the queued processes");
        }
        if self
            .running
            .is_some_and(|t| self.processes.get(t.index()).map(|p| p.phase) != Some(Phase::Running))
        {
            return Err("the running process is known and running");
        }
        Ok(())
    }
}
