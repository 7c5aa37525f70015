//! The machine: cores with one-shot timers, the cost model, and the kernel entry sequence
//! that drives each core's scheduler exactly as a kernel would, through the one scheduler
//! interface ([`ClusterScheduler`](bulwark_core::ClusterScheduler), each core a cluster of
//! one: [`CoreScheduler`]).
//!
//! A kernel entry at `now` (timer interrupt or a task's system call) goes:
//! 1. charge the task that was running up to `now`;
//! 2. hand the event to the scheduler (`Timer`, `Sleep`, `Block`, `Reconfigure`);
//! 3. ask for its decision once, and program the one-shot timer as it says;
//! 4. spend the kernel's cost (interrupt entry, scheduler, its reported work, a context switch
//!    if the task changes) after `now`, charged to the chosen task; then the task runs, first
//!    refilling its cache if it was preempted, or if another task on its core flushed the cache
//!    since it last ran (then the larger of the two refills, not both).
//!
//! Interrupts stay masked in the kernel: a timer that fires during kernel time is taken when
//! the kernel would return to the task. Configuration before time zero is free.

use bulwark_core::bandwidth::vbs::Resource;
use bulwark_core::ipc::GateProtocol;
use bulwark_core::{
    ContextChange, Duration, Event, Instant, Notice, SchedulerError, TaskId, Wake, Work,
};
use bulwark_spec::{CostModel, PolicyKind, Scenario, TaskSpec};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::behaviour::{Action, Program};
use crate::core_scheduler::CoreScheduler;
use crate::event::{EventKind, EventQueue};
use crate::kernel_objects::KernelObjects;
use crate::metrics::{CoreMetrics, JobRecord, TaskMetrics};
use crate::record::{BudgetSample, Memory, Recorder};
use crate::trace::{Mark, MarkKind, Slice, SliceKind};
use crate::vbs::records::VbsLog;
use crate::vbs::{VbsOptions, VbsRecords, VbsRun};
use crate::{Options, Outcome, SimError};

mod calls;
mod cluster;
mod contexts;
mod cpis;
mod extras;
mod job_index;
mod job_log;
mod servers;
mod stepped;
use cluster::{ClusterRun, Membership};
use cpis::{Components, CpiOp};
use extras::vbs_action;
pub use stepped::{Stretch, Worker};

/// How many times a core may enter its kernel at one instant before the run is declared a
/// livelock.
const MAX_ENTRIES_PER_INSTANT: u32 = 4_000_000;
/// How often (in events) the progress callback hears of the current time.
const PROGRESS_EVERY: u64 = 1 << 16;

/// What a core is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Occupant {
    Idle,
    /// In the kernel since `entered`; `next` runs when it leaves.
    Kernel {
        next: Option<TaskId>,
        entered: Instant,
    },
    Running {
        task: TaskId,
        since: Instant,
    },
    /// The kernel was returning to `task` when a masked interrupt (or one due at that very
    /// instant) was taken: its context is loaded, but it has not executed, so it cannot have
    /// been preempted.
    Dispatching {
        task: TaskId,
    },
}

/// Why the kernel was entered.
#[derive(Clone, Copy, Debug)]
enum Entry {
    Boot,
    Timer,
    Sleep {
        task: TaskId,
        until: Instant,
        release: Instant,
    },
    Exit {
        task: TaskId,
    },
    /// `task` gives its scheduling context new parameters (a VBS action switch): a scheduler
    /// invocation.
    Reconfigure {
        task: TaskId,
        context: ContextChange,
    },
    /// `task` calls `server` (an index into the scenario's servers).
    Invoke {
        task: TaskId,
        server: usize,
    },
    /// `task`'s context has run `server`'s operation to its end: the server replies.
    Reply {
        task: TaskId,
        server: usize,
    },
    /// `task` (a task's thread or a CPI's pool thread) takes a step of a CPI's protocol.
    Cpi {
        task: TaskId,
        op: CpiOp,
    },
    /// `task` terminates `target`'s process (or group), all at once or one step of it.
    Reclaim {
        task: TaskId,
        target: usize,
        step: Option<Duration>,
    },
}

/// The next thing a core does at the same instant; the core's loop runs these until one
/// leaves the core busy, so no chain of zero-time steps can recurse.
#[derive(Clone, Copy, Debug)]
enum Step {
    Enter(Entry),
    Dispatch(Option<TaskId>),
    Continue(TaskId),
}

struct Core {
    /// Its own scheduler (a core of a cluster: an idle one, never asked).
    scheduler: CoreScheduler,
    /// Its cluster, if it is in one: that cluster's scheduler decides for it.
    membership: Option<Membership>,
    occupant: Occupant,
    timer: Option<Instant>,
    irq_pending: bool,
    /// Threads of this core that a server on another core took a request of: the interrupt
    /// that core raised wakes them here.
    woken: Vec<TaskId>,
    entries_at: (Instant, u32),
    metrics: CoreMetrics,
}

/// How a job ends.
#[derive(Clone, Copy, Debug)]
enum Completion {
    /// It completed at this time.
    At(Instant),
    /// The run ended first.
    Unfinished,
    /// Another task terminated its process: neither completed nor missed.
    Killed,
}

/// What a task is executing right now.
#[derive(Clone, Copy, Debug)]
struct Execution {
    left: Duration,
    each: Option<Duration>,
    done: Duration,
}

struct Job {
    index: u64,
    release: Instant,
    deadline: Option<Instant>,
    first_start: Option<Instant>,
}

struct TaskRun<'a> {
    spec: &'a TaskSpec,
    program: Program<'a>,
    /// Boxed: the generator's block buffer is large and only draws touch it, so the fields
    /// every event touches stay on fewer cache lines.
    rng: Box<ChaCha8Rng>,
    executing: Option<Execution>,
    refill_left: Duration,
    needs_refill: bool,
    /// Another task on this core flushed the cache since this one last ran: at its next
    /// dispatch its refill is at least the flush refill.
    flushed: bool,
    job: Option<Job>,
    metrics: TaskMetrics,
    /// Its process was terminated: at its next dispatch it exits.
    killed: bool,
    /// A thread of a CPI's pool: it runs the procedures of the requests it takes, not a
    /// behaviour of its own.
    pooled: bool,
    /// A stepwise termination it started and has not finished: (target, step).
    reclaiming: Option<(usize, Option<Duration>)>,
    /// The server serving its request.
    serving: Option<usize>,
    /// The server at whose gate its request waits, and since when.
    waiting: Option<(usize, Instant)>,
    /// The server whose operation its context runs when dispatched: its own request's, or,
    /// waiting at a gate with bandwidth inheritance, the request in service.
    lends_to: Option<usize>,
    /// Its request waiting at an mc-ipc gate was aborted: it is reissued when its budget is
    /// back (`waiting` still names the server).
    pruned: bool,
    /// Its pruned request waits in the gate's background queue (section V).
    in_background: bool,
    /// Its `executed_ns` when its request to a server with bandwidth inheritance was issued:
    /// while the request is pending its context runs operations or spins, nothing else.
    drain_from: u64,
}

impl TaskRun<'_> {
    /// True if it has a stretch (or a cache refill) left as it runs on `core` at `now`: the
    /// stretch's end is then pending in `queue`, untimed when the platform `reported` it.
    /// A finished stretch is cleared.
    #[inline(always)]
    fn pend_stretch(
        &mut self,
        queue: &mut EventQueue,
        reported: bool,
        core: u16,
        now: Instant,
    ) -> bool {
        let Some(e) = self.executing else {
            return false;
        };
        if e.left.is_zero() && self.refill_left.is_zero() {
            self.executing = None;
            return false;
        }
        let end = if reported {
            // The platform says when the stretch is done: the end is pending, in its place
            // among the instant's events, but not timed.
            Instant::NEVER
        } else {
            now.saturating_add(self.refill_left).saturating_add(e.left)
        };
        queue.set(end, EventKind::ExecutionDone { core });
        true
    }

    /// Its pending request to a server with bandwidth inheritance is answered or aborted:
    /// what its context executed since the request was issued is one drain.
    fn end_drain(&mut self) {
        let drained = self.metrics.executed_ns.saturating_sub(self.drain_from);
        self.metrics
            .request_drain
            .record(Duration::from_nanos(drained));
    }
}

/// True if some task has a scheduling context as a kernel object
/// ([`Scenario::kernel_context`]).
fn has_contexts(scenario: &Scenario) -> bool {
    (0..scenario.tasks.len()).any(|task| scenario.kernel_context(task).is_some())
}

/// One run of a scenario.
pub struct Machine<'a> {
    cost: CostModel,
    /// The cache refill a preempted task pays, converted from cycles once.
    refill: Duration,
    /// The cache refill a task pays after another task on its core flushed the cache.
    flush: Duration,
    until: Instant,
    queue: EventQueue,
    cores: Vec<Core>,
    /// The clusters of cores scheduled together (`[[cluster]]`), by index.
    clusters: Vec<ClusterRun>,
    /// Per task: the cluster it is a member of, if any.
    member_of: Vec<Option<u16>>,
    /// The decision under way is a core's boot entry's: every core makes one, so none
    /// interrupts another.
    booting: bool,
    tasks: Vec<TaskRun<'a>>,
    /// The outcome's own trace and job list, when `Options` asks for them.
    memory: Memory,
    /// A recorder the caller gave, told everything as it happens.
    recorder: Option<&'a mut dyn Recorder>,
    /// Some recorder wants trace events: slices, marks and budget samples.
    tracing: bool,
    /// Some recorder wants job records.
    keeping_jobs: bool,
    /// Some recorder wants the clusters' changes of criticality mode.
    recording_mode_switches: bool,
    /// Per task, the budget last sampled, so a sample is recorded only when it changed.
    budget_seen: Vec<Option<Duration>>,
    events: u64,
    scenario: &'a Scenario,
    seed: u64,
    objects: KernelObjects,
    /// Per server: the request in service, if any.
    in_service: Vec<Option<servers::InService>>,
    /// Per task: the operation its last call from its script asked for, if it named one.
    requested: Vec<Option<bulwark_spec::Execution>>,
    /// Some server has an mc-ipc gate, which acts on the schedulers' budget notices.
    mc_ipc: bool,
    /// The notices being acted on, kept to reuse its allocation.
    notices: Vec<Notice>,
    /// Per task, when some recorder wants invocation records (else empty): its call not
    /// answered yet.
    open_invocations: Vec<Option<servers::OpenInvocation>>,
    /// An mc-ipc request issued to an idle server by a caller whose budget ran out at that
    /// very instant, as (server, caller): the server takes a request only once the kernel
    /// has acted on the instant's exhaustion, which prunes it.
    deferred_wait: Option<(usize, TaskId)>,
    /// VBS first arrivals and records, when some core runs VBS.
    vbs: Option<Box<VbsLog>>,
    /// VBS schedulers are told each action's load.
    disclose_vbs_loads: bool,
    /// Check the schedulers' invariants after every call.
    check_invariants: bool,
    /// `vbs` is kept, invariants are checked, or some server inherits bandwidth (its lenders
    /// may spin on other cores, and mc-ipc gates act on budget notices): the kernel is
    /// entered with its extras.
    extras: bool,
    /// Stepped by a platform whose real threads do the work ([`Timing::Reported`]): a
    /// stretch of work ends when the platform reports it, not when time has run it down.
    reported: bool,
    /// Per worker (tasks, then servers), when `reported` (else empty): its current
    /// stretch's serial, so a report of an earlier stretch is told apart.
    serials: Vec<u64>,
    /// The platform's clock when `reported`: events due by it are handled at it.
    clock: Instant,
    /// The boot entries were made (a stepped run boots at its first settle).
    booted: bool,
    /// The CPIs' pools and the periodic tasks' job logs, when the scenario has CPIs.
    cpis: Option<Box<Components>>,
    /// A charge has more to do than the machine's own accounts: record the trace, or charge
    /// the component records and contexts.
    charge_hooks: bool,
}

impl<'a> Machine<'a> {
    /// A machine configured for `scenario`, at time zero.
    pub fn new(scenario: &'a Scenario, options: &Options) -> Result<Self, SimError> {
        Machine::build(scenario, options, None, None)
    }

    /// A machine that keeps a record of every VBS action and period instance
    /// ([`run_vbs`](Machine::run_vbs) returns them).
    pub fn recording_vbs(
        scenario: &'a Scenario,
        options: &Options,
        vbs: VbsOptions,
    ) -> Result<Self, SimError> {
        Machine::build(scenario, options, None, Some(vbs))
    }

    /// A machine that also tells `recorder` every job and trace event as the run goes (the
    /// outcome still holds what `options` asks it to keep).
    pub fn with_recorder(
        scenario: &'a Scenario,
        options: &Options,
        recorder: &'a mut dyn Recorder,
    ) -> Result<Self, SimError> {
        Machine::build(scenario, options, Some(recorder), None)
    }

    fn build(
        scenario: &'a Scenario,
        options: &Options,
        recorder: Option<&'a mut dyn Recorder>,
        record_vbs: Option<VbsOptions>,
    ) -> Result<Self, SimError> {
        if scenario
            .components
            .iter()
            .any(|part| part.lowered.is_none())
        {
            return Err(SimError::Uncomposed);
        }
        let vbs_options = record_vbs.unwrap_or_default();
        let seed = options.seed.unwrap_or(scenario.seed);
        let until = Instant::ZERO.saturating_add(options.until.unwrap_or(scenario.duration));
        let count = scenario.tasks.len();
        let recording_invocations = recorder.as_ref().is_some_and(|r| r.wants_invocations());
        let mut cores = Vec::with_capacity(scenario.cores as usize);
        let mc_ipc = scenario
            .servers
            .iter()
            .any(|server| server.gate == GateProtocol::McIpc);
        let clusters = scenario
            .clusters
            .iter()
            .map(|spec| ClusterRun::build(scenario, spec, mc_ipc))
            .collect::<Result<Vec<_>, _>>()?;
        let member_of = scenario
            .clusters_by_task()
            .into_iter()
            .map(|member| member.map(|(cluster, _)| cluster as u16))
            .collect();
        for core in 0..scenario.cores {
            let membership = scenario.cluster_of(core).map(|cluster| Membership {
                cluster: cluster as u16,
                position: scenario.clusters[cluster]
                    .cores
                    .iter()
                    .position(|&c| c == core)
                    .unwrap_or_default() as u16,
            });
            let scheduler = match membership {
                Some(_) => cluster::idle_scheduler(),
                None => CoreScheduler::build(scenario, core)?,
            };
            cores.push(Core {
                scheduler,
                membership,
                occupant: Occupant::Idle,
                timer: None,
                irq_pending: false,
                woken: Vec::new(),
                entries_at: (Instant::ZERO, 0),
                metrics: CoreMetrics::default(),
            });
        }
        let mut tasks = Vec::with_capacity(count);
        for (i, spec) in scenario.tasks.iter().enumerate() {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // One stream per task: a task's draws do not depend on any other task's.
            rng.set_stream(i as u64);
            tasks.push(TaskRun {
                spec,
                program: Program::new(&spec.behaviour),
                rng: Box::new(rng),
                executing: None,
                refill_left: Duration::ZERO,
                needs_refill: false,
                flushed: false,
                job: None,
                metrics: TaskMetrics {
                    name: spec.name.clone(),
                    core: spec.core,
                    ..TaskMetrics::default()
                },
                killed: false,
                pooled: false,
                reclaiming: None,
                serving: None,
                waiting: None,
                lends_to: None,
                pruned: false,
                in_background: false,
                drain_from: 0,
            });
        }
        for spec in &scenario.cpis {
            for &t in &spec.pool {
                if let Some(task) = tasks.get_mut(t) {
                    task.pooled = true;
                }
            }
        }
        // CPIs or scheduling contexts: the kernel's entries carry their steps out as extras.
        let contexts = has_contexts(scenario);
        let components = !scenario.cpis.is_empty() || contexts;
        let recording_trace = recorder.as_ref().is_some_and(|r| r.wants_trace());
        let vbs = (0..scenario.cores)
            .any(|core| scenario.policy_of(core) == PolicyKind::Vbs)
            .then(|| {
                Box::new(VbsLog::new(
                    count,
                    scenario.cores as usize,
                    record_vbs.is_some(),
                ))
            });
        Ok(Machine {
            // A run with clusters enters the kernel with its extras, which ask the clusters'
            // schedulers, so the per-core entry never tests for one.
            extras: vbs.is_some()
                || !scenario.clusters.is_empty()
                || vbs_options.check_invariants
                || scenario.servers.iter().any(|s| s.bandwidth_inheritance)
                || components,
            cost: scenario.cost,
            refill: scenario.cost.time_of(scenario.cost.cache_refill),
            flush: scenario.cost.time_of(scenario.cost.cache_flush),
            until,
            queue: EventQueue::new(scenario.cores),
            cores,
            clusters,
            member_of,
            booting: false,
            tasks,
            memory: Memory::new(options.record_trace, options.record_jobs),
            tracing: options.record_trace || recording_trace,
            keeping_jobs: options.record_jobs || recorder.as_ref().is_some_and(|r| r.wants_jobs()),
            recording_mode_switches: recorder.as_ref().is_some_and(|r| r.wants_mode_switches()),
            recorder,
            budget_seen: vec![None; count],
            events: 0,
            scenario,
            seed,
            objects: KernelObjects::new(scenario)?,
            in_service: vec![None; scenario.servers.len()],
            requested: vec![None; count],
            mc_ipc,
            notices: Vec::new(),
            deferred_wait: None,
            open_invocations: if recording_invocations {
                vec![None; count]
            } else {
                Vec::new()
            },
            vbs,
            disclose_vbs_loads: vbs_options.disclose_loads,
            check_invariants: vbs_options.check_invariants,
            reported: false,
            serials: Vec::new(),
            clock: Instant::ZERO,
            booted: false,
            charge_hooks: components || options.record_trace || recording_trace,
            cpis: components.then(|| Components::build(scenario, options.record_jobs, contexts)),
        })
    }

    /// The same machine keeping the component paper's per-job measures (priority inversion
    /// and the lower jobs it came from) of its periodic tasks, as a machine with CPIs does.
    pub fn measuring_inversion(mut self, record_jobs: bool) -> Self {
        if self.cpis.is_none() {
            // No task has a context: a machine with some built its components already.
            self.cpis = Some(Components::build(self.scenario, record_jobs, false));
            self.extras = true;
            self.charge_hooks = true;
            if self.reported {
                self.free_protocol_steps();
            }
        }
        self
    }

    /// Runs to the end, calling `progress` now and then with the simulated time reached.
    pub fn run(mut self, progress: &mut dyn FnMut(Instant)) -> Result<Outcome, SimError> {
        self.drive(progress)?;
        Ok(self.finish())
    }

    /// Boots and handles every event to the end.
    fn drive(&mut self, progress: &mut dyn FnMut(Instant)) -> Result<(), SimError> {
        self.boot()?;
        while let Some((now, kind)) = self.queue.pop_until(self.until) {
            self.handle(now, kind)?;
            if self.events.is_multiple_of(PROGRESS_EVERY) {
                self.check_bounds()?;
                progress(now);
            }
        }
        self.check_bounds()?;
        progress(self.until);
        Ok(())
    }

    /// Stops the run once a component task's log had no room for a job due (its measures
    /// would be wrong from then on), or once an `allocate` step would have taken the kernel
    /// objects alive past [`MAX_OBJECTS`](crate::kernel_objects::MAX_OBJECTS). Checked every
    /// [`PROGRESS_EVERY`] events and at the end; the log stops growing when full and the
    /// step creates no object, so the memory stays bounded meanwhile.
    fn check_bounds(&self) -> Result<(), SimError> {
        if let Some(over) = self.objects.over_limit() {
            return Err(over.error(self.scenario));
        }
        let Some((task, pending, at)) = self.cpis.as_ref().and_then(|c| c.backlog_full()) else {
            return Ok(());
        };
        Err(SimError::Backlog {
            task: self.scenario.tasks[task].name.clone(),
            pending,
            at,
        })
    }

    /// Runs to the end as [`run`](Machine::run) does, with the VBS records (empty unless
    /// built by [`recording_vbs`](Machine::recording_vbs) with a core running VBS).
    pub fn run_vbs(mut self, progress: &mut dyn FnMut(Instant)) -> Result<VbsRun, SimError> {
        self.drive(progress)?;
        let (outcome, records) = self.finish_with_vbs();
        Ok(VbsRun {
            outcome,
            records: records.unwrap_or_default(),
        })
    }

    fn boot(&mut self) -> Result<(), SimError> {
        self.booted = true;
        for i in 0..self.tasks.len() {
            if self.tasks[i].pooled {
                // A pool thread waits, blocked, for its first request.
                continue;
            }
            let id = TaskId(i as u32);
            let release = Program::first_release(&self.tasks[i].spec.behaviour);
            let wake = self.open_job(id, 0, release);
            let core = self.tasks[i].spec.core as usize;
            let mut work = Work::default();
            if self.scenario.policy_of(core as u16) == PolicyKind::Vbs {
                // A VBS process exists through its actions: its first action arrives at its
                // script's offset (zero in scenario files) and is its activation.
                match self.vbs.as_deref_mut() {
                    Some(vbs) if release > Instant::ZERO => {
                        vbs.arrive_later(core as u16, id, release)
                    }
                    _ => self.first_action(core as u16, id, Instant::ZERO, &mut work)?,
                }
                continue;
            }
            let event = if release == Instant::ZERO {
                Event::Activate { task: id, wake }
            } else {
                Event::Sleep {
                    task: id,
                    until: release,
                    wake,
                }
            };
            let result =
                self.scheduler_handle::<true>(core as u16, Instant::ZERO, event, &mut work);
            result.map_err(|error| self.refused("activate", id, Instant::ZERO, error))?;
        }
        for core in 0..self.cores.len() {
            self.run_core(core as u16, Instant::ZERO, Step::Enter(Entry::Boot))?;
        }
        Ok(())
    }

    /// Handles one event at `now`. Inlined into both its loops, the simulator's
    /// ([`drive`](Machine::drive)) and a platform's ([`settle`](Machine::settle)): as a call
    /// it cost the simulator's loop 2 % more instructions.
    #[inline(always)]
    fn handle(&mut self, now: Instant, kind: EventKind) -> Result<(), SimError> {
        self.events += 1;
        match kind {
            EventKind::Timer { core } => {
                let c = &mut self.cores[core as usize];
                let programmed = c.timer == Some(now);
                c.timer = None;
                if matches!(c.occupant, Occupant::Kernel { .. }) {
                    // Masked here: a cluster's timer goes to another of its cores, if one can
                    // take it; anything else waits for this kernel to return.
                    let taker = programmed.then(|| self.cluster_timer_taker(core)).flatten();
                    if let Some(other) = taker {
                        return self.run_core(other, now, Step::Enter(Entry::Timer));
                    }
                    self.cores[core as usize].irq_pending = true;
                    return Ok(());
                }
                self.run_core(core, now, Step::Enter(Entry::Timer))
            }
            EventKind::ExecutionDone { core } => match self.cores[core as usize].occupant {
                Occupant::Running { task, .. } => self.run_core(core, now, Step::Continue(task)),
                _ => Ok(()),
            },
            EventKind::KernelExit { core } => {
                let Occupant::Kernel { next, entered } = self.cores[core as usize].occupant else {
                    return Ok(());
                };
                self.record_slice(core, next, SliceKind::Kernel, entered, now);
                let step = self.leave_kernel(core, now, next);
                self.run_core(core, now, step)
            }
        }
    }

    /// Runs a core's steps at `now` until it is left busy (running, in the kernel or idle).
    fn run_core(&mut self, core: u16, now: Instant, first: Step) -> Result<(), SimError> {
        let mut step = Some(first);
        while let Some(s) = step.take() {
            step = match s {
                Step::Enter(entry) => {
                    self.count_entry(core, now)?;
                    // A run with extras enters the kernel through their own copy of the
                    // entry, so a run without them pays nothing for them there.
                    if self.extras {
                        self.enter_kernel_extras(core, now, entry)?
                    } else {
                        self.enter_kernel::<false>(core, now, entry)?
                    }
                }
                Step::Dispatch(next) => self.dispatch(core, now, next),
                Step::Continue(task) => self.continue_task(core, now, task)?,
            };
        }
        Ok(())
    }

    /// Counts a kernel entry of `core` at `now`. Only entries are counted: every cycle of a
    /// core's steps passes through one (a dispatch leads to the task's next step, which ends
    /// busy or enters the kernel), so a livelock is still caught, and the steps between
    /// entries cost nothing for it.
    #[inline(always)]
    fn count_entry(&mut self, core: u16, now: Instant) -> Result<(), SimError> {
        let c = &mut self.cores[core as usize];
        if c.entries_at.0 == now {
            c.entries_at.1 += 1;
            if c.entries_at.1 > MAX_ENTRIES_PER_INSTANT {
                return Err(SimError::Livelock { core, at: now });
            }
        } else {
            c.entries_at = (now, 1);
        }
        Ok(())
    }

    /// The kernel entry with its extras, out of line.
    #[inline(never)]
    fn enter_kernel_extras(
        &mut self,
        core: u16,
        now: Instant,
        entry: Entry,
    ) -> Result<Option<Step>, SimError> {
        self.enter_kernel::<true>(core, now, entry)
    }

    /// With `EXTRAS`, the kernel entry also runs its extras (VBS first arrivals and records,
    /// invariant checks, lenders leaving an operation, mc-ipc gates acting on budget notices).
    fn enter_kernel<const EXTRAS: bool>(
        &mut self,
        core: u16,
        now: Instant,
        entry: Entry,
    ) -> Result<Option<Step>, SimError> {
        let (previous, ran) = match self.cores[core as usize].occupant {
            Occupant::Running { task, since } => {
                self.charge(core, task, since, now);
                (Some(task), true)
            }
            Occupant::Dispatching { task } => (Some(task), false),
            _ => (None, false),
        };
        // Whatever the processor was doing is interrupted: its pending end no longer holds.
        self.queue.cancel_processor(core);
        let c = &mut self.cores[core as usize];
        let mut work = Work::default();
        let mut cycles = self.cost.scheduler;
        let mut suspended = None;
        match entry {
            Entry::Boot => cycles = 0,
            Entry::Timer => {
                cycles = cycles.saturating_add(self.cost.timer_interrupt);
                c.metrics.timer_interrupts += 1;
                self.scheduler_handle::<EXTRAS>(core, now, Event::Timer, &mut work)
                    .map_err(|error| SimError::Scheduler {
                        core,
                        call: "timer",
                        at: now,
                        error,
                    })?;
                if EXTRAS {
                    self.extras_timer(core, now, &mut work)?;
                }
            }
            Entry::Sleep {
                task,
                until,
                release,
            } => {
                suspended = Some(task);
                if EXTRAS && self.cpis.is_some() {
                    self.job_done_components(task, now);
                }
                let next_index = self.close_job(task, Completion::At(now)) + 1;
                let wake = self.open_job(task, next_index, release);
                self.scheduler_handle::<EXTRAS>(
                    core,
                    now,
                    Event::Sleep { task, until, wake },
                    &mut work,
                )
                .map_err(|error| self.refused("sleep", task, now, error))?;
            }
            Entry::Exit { task } => {
                suspended = Some(task);
                self.close_job(task, Completion::At(now));
                self.scheduler_handle::<EXTRAS>(core, now, Event::Block { task }, &mut work)
                    .map_err(|error| self.refused("block", task, now, error))?;
            }
            Entry::Reconfigure { .. }
            | Entry::Invoke { .. }
            | Entry::Reply { .. }
            | Entry::Cpi { .. }
            | Entry::Reclaim { .. } => {
                let (extra, blocked) = self.system_call(core, now, entry, &mut work)?;
                cycles = cycles.saturating_add(extra);
                suspended = blocked;
            }
        }
        // Wake-ups another core raised are taken by whichever entry comes first: the
        // interrupt's own, or one at the same instant that reprograms the timer over it.
        if !self.cores[core as usize].woken.is_empty() {
            self.take_wake_ups(core, now, &mut work)?;
        }
        if EXTRAS {
            self.extras_called(core, entry.call(), now)?;
        }
        if EXTRAS {
            // Only the boot entry's own decision: the steps a core then takes at time zero
            // tell the other cores as any later entry does.
            self.booting = matches!(entry, Entry::Boot);
        }
        let mut decision = if EXTRAS && self.cpis.as_deref().is_some_and(|c| c.decides(core)) {
            self.decide_with_contexts(core, now, previous, &mut work)?
        } else {
            self.scheduler_decide::<EXTRAS>(core, now, &mut work)
                .map_err(|error| SimError::Scheduler {
                    core,
                    call: "schedule",
                    at: now,
                    error,
                })?
        };
        if let Some(p) = previous.filter(|&p| EXTRAS && decision.next != Some(p)) {
            if self.tasks[p.index()].lends_to.is_some() {
                // It no longer runs an operation here: a context spinning for it elsewhere
                // takes the operation over.
                self.leave_operation(core, p, now);
            }
        }
        if EXTRAS
            && self.mc_ipc
            && (self.scheduler_has_notices(core) || self.deferred_wait.is_some())
        {
            self.act_on_notices(core, now, &mut work)?;
            self.take_deferred_request(core, now, &mut work)?;
            if let Some(member) = self.cores[core as usize].membership {
                // An abort or a reissue changes whether the selected reservation's thread
                // can run: the decision's reservation stands, its thread is resolved anew.
                decision.next = self.resolve(member.cluster, member.position);
            }
        }
        let c = &mut self.cores[core as usize];
        let units = work.units();
        cycles = cycles.saturating_add(self.cost.per_work_unit.saturating_mul(units));
        if decision.next.is_some() && decision.next != previous {
            cycles = cycles.saturating_add(self.cost.context_switch);
            c.metrics.context_switches += 1;
        }
        c.metrics.invocations += 1;
        c.metrics.work_units += units;
        c.metrics.max_work_units = c.metrics.max_work_units.max(units);
        if self.tracing {
            // The policy has just accounted and scheduled: the budgets of the task that ran
            // and the one chosen are exact at `now`.
            self.sample_budget(core, now, previous);
            if decision.next != previous {
                self.sample_budget(core, now, decision.next);
            }
        }
        let c = &mut self.cores[core as usize];
        if decision.timer != c.timer {
            c.timer = decision.timer;
            match decision.timer {
                Some(at) => self.queue.set(at.max(now), EventKind::Timer { core }),
                None => self.queue.cancel_timer(core),
            }
        }
        if let Some(p) = previous.filter(|_| ran) {
            if suspended != Some(p) && decision.next != Some(p) {
                let task = &mut self.tasks[p.index()];
                task.needs_refill = true;
                task.metrics.preemptions += 1;
            }
        }
        let overhead = if matches!(entry, Entry::Boot) {
            Duration::ZERO
        } else {
            self.cost.time_of(cycles)
        };
        if EXTRAS {
            self.extras_scheduled(core, now, decision.next, decision.timer, overhead)?;
        }
        if overhead.is_zero() {
            // Returning at once: a timer due now is taken first only if nothing else due now
            // (another core's completion, say) comes before it in the queue's order.
            if self.queue.timer_is_next(core, now) {
                return Ok(Some(self.leave_kernel(core, now, decision.next)));
            }
            return Ok(Some(Step::Dispatch(decision.next)));
        }
        let c = &mut self.cores[core as usize];
        c.metrics.kernel_ns += overhead.as_nanos();
        c.occupant = Occupant::Kernel {
            next: decision.next,
            entered: now,
        };
        if let Some(next) = decision.next {
            self.tasks[next.index()].metrics.kernel_ns += overhead.as_nanos();
        }
        self.queue
            .set(now.saturating_add(overhead), EventKind::KernelExit { core });
        Ok(None)
    }

    /// The kernel returns at `now` to run `next`. A timer or inter-processor interrupt due at
    /// that very instant is taken first, before `next` runs a cycle, as a masked one is
    /// ("Ties", 1), whether the kernel took time or none; its event is handled here, not from
    /// the queue.
    fn leave_kernel(&mut self, core: u16, now: Instant, next: Option<TaskId>) -> Step {
        let due = self.queue.timer_due(core, now);
        let c = &mut self.cores[core as usize];
        if due {
            c.timer = None;
            self.queue.cancel_timer(core);
            self.events += 1;
        }
        if c.irq_pending || due {
            c.irq_pending = false;
            c.occupant = match next {
                Some(task) => Occupant::Dispatching { task },
                None => Occupant::Idle,
            };
            return Step::Enter(Entry::Timer);
        }
        Step::Dispatch(next)
    }

    fn dispatch(&mut self, core: u16, now: Instant, next: Option<TaskId>) -> Option<Step> {
        let Some(task) = next else {
            self.cores[core as usize].occupant = Occupant::Idle;
            return None;
        };
        self.cores[core as usize].occupant = Occupant::Running { task, since: now };
        let (refill, flush) = (self.refill, self.flush);
        let t = &mut self.tasks[task.index()];
        if t.needs_refill {
            t.needs_refill = false;
            t.refill_left = refill;
        }
        if t.flushed {
            // One refill of the emptied cache, whichever is larger: not one after the other.
            t.flushed = false;
            t.refill_left = t.refill_left.max(flush);
        }
        if let Some(job) = t.job.as_mut() {
            if job.first_start.is_none() {
                job.first_start = Some(now);
                t.metrics
                    .wakeup_latency
                    .record(now.saturating_duration_since(job.release));
            }
        }
        Some(Step::Continue(task))
    }

    /// The running `task` goes on at `now`: finishes what it executed, then either keeps
    /// executing (an event when that ends) or makes a system call.
    fn continue_task(
        &mut self,
        core: u16,
        now: Instant,
        task: TaskId,
    ) -> Result<Option<Step>, SimError> {
        if let Occupant::Running { since, .. } = self.cores[core as usize].occupant {
            self.charge(core, task, since, now);
            self.cores[core as usize].occupant = Occupant::Running { task, since: now };
        }
        loop {
            let t = &mut self.tasks[task.index()];
            if t.killed {
                return Ok(Some(Step::Enter(Entry::Exit { task })));
            }
            if let Some((target, step)) = t.reclaiming {
                // The next step of a stepwise termination: the scheduler ran in between.
                return Ok(Some(Step::Enter(Entry::Reclaim { task, target, step })));
            }
            if let Some(server) = t.lends_to {
                return Ok(self.run_operation(core, now, task, server));
            }
            // `TaskRun::pend_stretch` and `start_stretch` below, written out in this loop:
            // called here they cost the 100-task EDF run 0.28 % more instructions (callgrind,
            // 868.5 M -> 870.9 M -> 871.9 M).
            if let Some(e) = t.executing {
                if !e.left.is_zero() || !t.refill_left.is_zero() {
                    let end = if self.reported {
                        // The platform says when the stretch is done: the end is pending,
                        // in its place among the instant's events, but not timed.
                        Instant::NEVER
                    } else {
                        now.saturating_add(t.refill_left).saturating_add(e.left)
                    };
                    self.queue.set(end, EventKind::ExecutionDone { core });
                    return Ok(None);
                }
                t.executing = None;
            }
            if t.pooled {
                // A pool thread's next step is its protocol's or its procedure's.
                return self.continue_pool(core, now, task);
            }
            let action =
                t.program
                    .next_action(now, &mut t.rng)
                    .map_err(|_| SimError::Spinning {
                        task: t.spec.name.clone(),
                        at: now,
                    })?;
            match action {
                Action::Execute { time, each } => {
                    t.executing = Some(Execution {
                        left: time,
                        each,
                        done: Duration::ZERO,
                    });
                    if self.reported {
                        self.serials[task.index()] += 1;
                    }
                }
                Action::Sleep { until, release } => {
                    return Ok(Some(Step::Enter(Entry::Sleep {
                        task,
                        until,
                        release,
                    })))
                }
                Action::FlushCache => {
                    // Takes no time: every other task on this core will refill when it next
                    // runs, and this one goes on at once.
                    for (i, other) in self.tasks.iter_mut().enumerate() {
                        if other.spec.core == core && i != task.index() {
                            other.flushed = true;
                        }
                    }
                }
                Action::Switch {
                    load,
                    limit,
                    period,
                } => {
                    // The switch is a system call; the load runs when the task is dispatched
                    // again.
                    let context = self.start_action(task, now, load, Resource::new(limit, period));
                    return Ok(Some(Step::Enter(Entry::Reconfigure { task, context })));
                }
                Action::Allocate { count, object } => {
                    // The system calls run as the task's own execution.
                    // Past the objects a run holds it creates none, and the run stops at
                    // its next check of its bounds (`check_bounds`), naming this step.
                    let made =
                        (self.objects).allocate_within_limit(task.index(), count, object, now);
                    let time = self.cost.time_of(self.objects.cycles(made.units));
                    let t = &mut self.tasks[task.index()];
                    t.metrics.objects_allocated += made.created;
                    t.metrics.allocations_refused += made.refused;
                    t.executing = Some(Execution {
                        left: time,
                        each: None,
                        done: Duration::ZERO,
                    });
                }
                Action::Terminate { task: name, step } => {
                    // Validation guarantees the name.
                    let target = self
                        .scenario
                        .tasks
                        .iter()
                        .position(|s| s.name == name)
                        .unwrap_or(task.index());
                    return Ok(Some(Step::Enter(Entry::Reclaim { task, target, step })));
                }
                Action::Invoke { server, operation } => {
                    self.requested[task.index()] = operation.copied();
                    return Ok(Some(Step::Enter(Entry::Invoke { task, server })));
                }
                Action::Call { cpi } => {
                    let op = CpiOp::Call(cpi);
                    return Ok(Some(Step::Enter(Entry::Cpi { task, op })));
                }
                Action::Exit => {
                    if let Some(vbs) = self.vbs.as_deref_mut() {
                        vbs.complete(task, now);
                    }
                    return Ok(Some(Step::Enter(Entry::Exit { task })));
                }
            }
        }
    }

    /// `task` starts a stretch of `time` (every `each` of it a unit of useful work, for a
    /// `compute` step); a platform reporting stretches tells it from the last by its serial.
    #[inline(always)]
    fn start_stretch(&mut self, task: TaskId, time: Duration, each: Option<Duration>) {
        self.tasks[task.index()].executing = Some(Execution {
            left: time,
            each,
            done: Duration::ZERO,
        });
        if self.reported {
            self.serials[task.index()] += 1;
        }
    }

    /// True if `task`, running on `core`, has a stretch (or a cache refill) left: its end is
    /// then pending ([`TaskRun::pend_stretch`]).
    fn stretch_pending(&mut self, core: u16, now: Instant, task: TaskId) -> bool {
        let t = &mut self.tasks[task.index()];
        t.pend_stretch(&mut self.queue, self.reported, core, now)
    }

    /// `task` starts a VBS action of `load` on `resource` at `now`: it will execute the load,
    /// the records note the switch, and the returned change tells the scheduler, with the
    /// load when the run discloses loads (else the next switch, or the end of the script,
    /// marks the completion).
    fn start_action(
        &mut self,
        task: TaskId,
        now: Instant,
        load: Duration,
        resource: Resource,
    ) -> ContextChange {
        self.start_stretch(task, load, None);
        if let Some(vbs) = self.vbs.as_deref_mut() {
            vbs.switch(task, now, load, resource);
        }
        vbs_action(
            load,
            resource.limit,
            resource.period,
            self.disclose_vbs_loads,
        )
    }

    /// Charges `task` for running on `core` from `since` to `now`: cache refill first, then
    /// its own execution. Always inlined: it runs at every event, and as a call it saved and
    /// restored the whole loop's registers around a few additions (3 % of the 100-task run).
    #[inline(always)]
    fn charge(&mut self, core: u16, task: TaskId, since: Instant, now: Instant) {
        let elapsed = now.saturating_duration_since(since);
        if elapsed.is_zero() {
            return;
        }
        let t = &mut self.tasks[task.index()];
        let refill = t.refill_left.min(elapsed);
        t.refill_left = t.refill_left.saturating_sub(refill);
        t.metrics.refill_ns += refill.as_nanos();
        let own = elapsed.saturating_sub(refill);
        t.metrics.executed_ns += own.as_nanos();
        if let Some(server) = t.lends_to {
            self.charge_operation(core, task, server, own);
        } else if let Some(e) = t.executing.as_mut() {
            let own = own.min(e.left);
            // Reported timing: the stretch lasts until the platform says it is done.
            if !self.reported {
                e.left = e.left.saturating_sub(own);
            }
            if let Some(each) = e.each {
                let before = e.done.as_nanos() / each.as_nanos().max(1);
                e.done = e.done.saturating_add(own);
                let after = e.done.as_nanos() / each.as_nanos().max(1);
                t.metrics.work_units += after - before;
            }
        }
        self.cores[core as usize].metrics.busy_ns += elapsed.as_nanos();
        if self.charge_hooks {
            self.charge_extras(core, task, since, since.saturating_add(refill), now);
        }
    }

    /// What a charge does beside the machine's own accounts (out of line: most runs do
    /// neither): the component records and contexts, and the trace's two slices, the cache
    /// refill up to `split`, then the task's own code or the server's operation its context
    /// runs.
    #[cold]
    #[inline(never)]
    fn charge_extras(
        &mut self,
        core: u16,
        task: TaskId,
        since: Instant,
        split: Instant,
        now: Instant,
    ) {
        if self.cpis.is_some() {
            self.charge_components(task, since, now);
        }
        if !self.tracing {
            return;
        }
        if let Some(components) = self
            .cpis
            .as_deref_mut()
            .filter(|c| c.attributes(task.index()))
        {
            // A thread's time is its task's, a pool thread's its caller's task's, and protocol
            // steps are kernel time.
            let (owner, kernel) = components.slice_owner(task.index(), since);
            let kind = if kernel {
                SliceKind::Kernel
            } else {
                SliceKind::Task
            };
            let owner = owner.map(|t| TaskId(t as u32));
            self.record_slice(core, owner, kind, since, now);
            return;
        }
        let kind = match self.tasks[task.index()].lends_to {
            Some(server) if self.runs_operation(core, server) => SliceKind::Server,
            // Lending to an operation that runs on another core: the budget drains idle.
            Some(_) => SliceKind::Spin,
            None => SliceKind::Task,
        };
        self.record_slice(core, Some(task), SliceKind::CacheRefill, since, split);
        self.record_slice(core, Some(task), kind, split, now);
    }

    /// Starts job `index` of `task`, released at `release`; returns the wake-up the policy
    /// needs for it.
    fn open_job(&mut self, task: TaskId, index: u64, release: Instant) -> Wake {
        let t = &mut self.tasks[task.index()];
        let deadline = t.spec.deadline.map(|d| release.saturating_add(d));
        t.job = Some(Job {
            index,
            release,
            deadline,
            first_start: None,
        });
        let core = t.spec.core;
        if release <= self.until {
            self.mark(task, core, MarkKind::Release, release, index);
        }
        Wake::NextJob {
            deadline: deadline.unwrap_or(Instant::NEVER),
        }
    }

    /// Ends `task`'s current job at `now` (`now` past the horizon means unfinished); returns
    /// its index.
    fn close_job(&mut self, task: TaskId, completion: Completion) -> u64 {
        let t = &mut self.tasks[task.index()];
        let Some(job) = t.job.take() else {
            return 0;
        };
        let core = t.spec.core;
        let m = &mut t.metrics;
        m.jobs += 1;
        let (finished, now) = match completion {
            Completion::At(now) => (true, now),
            Completion::Unfinished | Completion::Killed => (false, self.until),
        };
        if matches!(completion, Completion::Killed) {
            m.killed_jobs += 1;
        }
        // A job completing exactly at its deadline meets it. An unfinished one misses if its
        // deadline is within the run: a completion at the horizon itself was processed.
        let missed = job.deadline.is_some_and(|d| match completion {
            Completion::At(now) => now > d,
            Completion::Unfinished => d <= self.until,
            Completion::Killed => false,
        });
        if finished {
            m.completed += 1;
            m.response
                .record(now.saturating_duration_since(job.release));
            self.mark(task, core, MarkKind::Completion, now, job.index);
            self.mark(task, core, MarkKind::Suspend, now, job.index);
        }
        if missed {
            let deadline = job.deadline.unwrap_or(Instant::NEVER);
            let m = &mut self.tasks[task.index()].metrics;
            m.misses += 1;
            m.first_miss.get_or_insert(deadline);
            self.mark(task, core, MarkKind::DeadlineMiss, deadline, job.index);
        }
        if self.keeping_jobs {
            self.record_job(JobRecord {
                task,
                job: job.index,
                release: job.release,
                first_start: job.first_start,
                completion: finished.then_some(now),
                deadline: job.deadline,
                missed,
            });
        }
        job.index
    }

    /// Keeps a finished job's record. Out of line: most runs keep none, and the call's code
    /// would otherwise make every job's close save registers it never uses.
    #[cold]
    #[inline(never)]
    fn record_job(&mut self, record: JobRecord) {
        self.memory.job(&record);
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.job(&record);
        }
    }

    fn record_slice(
        &mut self,
        core: u16,
        task: Option<TaskId>,
        kind: SliceKind,
        start: Instant,
        end: Instant,
    ) {
        if !self.tracing {
            return;
        }
        let end = end.min(self.until);
        if end <= start {
            return;
        }
        let piece = Slice {
            core,
            task,
            kind,
            start,
            end,
        };
        // Each recorder merges the pieces that continue a core's last slice.
        self.memory.slice(&piece);
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.slice(&piece);
        }
    }

    #[inline]
    fn mark(&mut self, task: TaskId, core: u16, kind: MarkKind, at: Instant, job: u64) {
        if self.tracing {
            self.record_mark(Mark {
                task,
                core,
                kind,
                at,
                job,
            });
        }
    }

    /// Records a mark in the trace; out of line, as [`Machine::record_job`] is.
    #[cold]
    #[inline(never)]
    fn record_mark(&mut self, mark: Mark) {
        self.memory.mark(&mark);
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.mark(&mark);
        }
    }

    /// Records `task`'s budget at `now` if its policy has one and it changed since the last
    /// sample. Only a caller's recorder hears of it: the outcome's trace has no budgets.
    fn sample_budget(&mut self, core: u16, now: Instant, task: Option<TaskId>) {
        let Some(task) = task.filter(|_| self.recorder.is_some()) else {
            return;
        };
        let Some(remaining) = self.remaining_budget(core, task, now) else {
            return;
        };
        let Some(seen) = self.budget_seen.get_mut(task.index()) else {
            return;
        };
        if *seen == Some(remaining) {
            return;
        }
        *seen = Some(remaining);
        let Some(recorder) = self.recorder.as_mut() else {
            return;
        };
        recorder.budget(&BudgetSample {
            task,
            core,
            at: now,
            remaining,
        });
    }

    fn refused(
        &self,
        call: &'static str,
        task: TaskId,
        at: Instant,
        error: impl Into<SchedulerError>,
    ) -> SimError {
        SimError::refused(self.scenario, call, task, at, error)
    }

    fn finish(self) -> Outcome {
        self.finish_with_vbs().0
    }

    /// The outcome, and the VBS records if kept.
    fn finish_with_vbs(mut self) -> (Outcome, Option<VbsRecords>) {
        let until = self.until;
        for core in 0..self.cores.len() {
            match self.cores[core].occupant {
                Occupant::Running { task, since } => self.charge(core as u16, task, since, until),
                Occupant::Kernel { next, entered } => {
                    self.record_slice(core as u16, next, SliceKind::Kernel, entered, until)
                }
                Occupant::Idle | Occupant::Dispatching { .. } => {}
            }
        }
        for i in 0..self.tasks.len() {
            let released = self.tasks[i]
                .job
                .as_ref()
                .is_some_and(|job| job.release <= until);
            if !released {
                continue;
            }
            // Unfinished at the end: it still counts as released, and so does every job
            // released on plan behind it that never started.
            let id = TaskId(i as u32);
            let mut index = self.close_job(id, Completion::Unfinished);
            loop {
                let task = &mut self.tasks[i];
                let Some(release) = task.program.next_queued_release(until, &mut task.rng) else {
                    break;
                };
                index += 1;
                self.open_job(id, index, release);
                self.close_job(id, Completion::Unfinished);
            }
        }
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.finish();
        }
        let vbs = self.vbs.take().and_then(|v| v.finish(until));
        let components = self.cpis.take().map(|c| Box::new(c.finish(until)));
        let outcome = Outcome {
            scenario: self.scenario.name.clone(),
            policy: self.scenario.policy_label(),
            seed: self.seed,
            until,
            events: self.events,
            tasks: self.tasks.into_iter().map(|t| t.metrics).collect(),
            cores: self.cores.iter().map(|c| c.metrics).collect(),
            jobs: self.memory.jobs,
            trace: self.memory.trace,
            clusters: (self.scenario.clusters.iter())
                .zip(&self.clusters)
                .map(|(cluster, run)| crate::ClusterMembers {
                    name: cluster.name.clone(),
                    cores: cluster.cores.clone(),
                    tasks: cluster.members.iter().map(|m| m.task).collect(),
                    drained_ns: (cluster.members.iter())
                        .map(|m| run.drained(TaskId(m.task as u32), until).as_nanos())
                        .collect(),
                })
                .collect(),
            components,
        };
        (outcome, vbs)
    }
}
