//! The runtime proper: thread set-up, the dispatcher (the kernel-entry loop around the
//! policy), the watchdog, and the restoration of every thread's scheduling on the way out.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;

use bulwark_core::{
    ContextChange, CoreDecision, Duration, Event, Instant, SchedulerError, TaskId, Wake, Work,
};
use bulwark_sim::behaviour::{Action, Program};
use bulwark_sim::{
    CoreMetrics, CoreScheduler, JobRecord, KernelObjects, Mark, MarkKind, Outcome, SimError, Slice,
    SliceKind, TaskMetrics, Trace,
};
use bulwark_spec::{Behaviour, Execution, PolicyKind, Scenario, Step};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::handover::{spawn_managed, supervise, Entry, Handover};
use crate::sys;
use crate::task::{run_script, ScriptTools, TaskContext};
use crate::work::{FlushBuffer, Matmul};
use crate::{Body, Clock, HostConfig, HostError, HostOutcome, HostStats, Reclaimed};

/// The gate is open: the thread was chosen.
pub(crate) const GATE_OPEN: u32 = 1;
/// The run is over: the gate stays open and every request answers at once.
pub(crate) const GATE_STOP: u32 = 2;
/// How often the watchdog looks.
const WATCHDOG_POLL: std::time::Duration = std::time::Duration::from_millis(2);
/// How long set-up may wait for a thread to start.
const START_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);
/// Stack of a thread running a scenario script.
const SCRIPT_STACK: usize = 256 << 10;
/// A task thread's request to the dispatcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Request {
    /// End the job and sleep (`until`, `release`).
    Sleep = 1,
    /// End the task.
    Exit = 2,
    /// Switch to the next VBS action (`limit`, `period`) without ending the job.
    Switch = 3,
    /// Terminate another task's process (`target`, `step_ns`) without ending the job.
    Terminate = 4,
    /// A component thread's `Execute` stretch is done (`until` carries its serial).
    StretchDone = 5,
}

/// A termination's `step_ns` when it is to be done in one call.
pub(crate) const WHOLE: u64 = u64::MAX;

/// What one task thread shares with the dispatcher.
#[derive(Default)]
pub(crate) struct Slot {
    /// `GATE_CLOSED`, `GATE_OPEN` or `GATE_STOP`.
    pub gate: AtomicU32,
    /// The thread's kernel id, 0 until it started.
    pub tid: AtomicI32,
    /// The posted request's kind (0 for none) and arguments.
    pub request: AtomicU32,
    pub until: AtomicU64,
    pub release: AtomicU64,
    /// A switch's resource: its limit and period, ns.
    pub limit: AtomicU64,
    pub period: AtomicU64,
    /// The time the dispatcher handled the thread's last switch (the scheduler's `now`).
    pub handled_at: AtomicU64,
    /// When the thread made the request (its job's completion).
    pub at: AtomicU64,
    /// The current job's sequence number, set by the dispatcher when it opens a job.
    pub job_seq: AtomicU64,
    /// The last job the thread started, and when (set by the thread as it passes its gate).
    pub started_job: AtomicU64,
    pub started_at: AtomicU64,
    /// `compute` units finished.
    pub work_units: AtomicU64,
    /// Objects the task's `allocate` steps created, and those its group's quota refused.
    pub objects_allocated: AtomicU64,
    pub allocations_refused: AtomicU64,
    /// A termination's target (a task index) and its step of kernel time, ns ([`WHOLE`] for
    /// none).
    pub target: AtomicU64,
    pub step_ns: AtomicU64,
    /// Set by the dispatcher when a stepwise termination has more to do.
    pub reclaim_pending: AtomicBool,
    /// A component thread's current stretch: its serial (published last) and its CPU time.
    pub stretch_serial: AtomicU64,
    pub stretch_ns: AtomicU64,
}

/// What every thread of a run shares.
#[derive(Default)]
pub(crate) struct Shared {
    /// Bumped by every request; the dispatcher's futex word.
    pub doorbell: AtomicU32,
    /// Index + 1 of the task whose request waits, 0 for none.
    pub posted: AtomicU32,
    /// The run is over.
    pub stopping: AtomicBool,
    /// Ctrl-C asked the run to end.
    pub stop_requested: AtomicBool,
    /// An `allocate` step would have taken the kernel objects past what a run holds
    /// (`bulwark_sim::MAX_OBJECTS`): the run ends at once, as the simulator's does.
    pub objects_over_limit: AtomicBool,
    /// The watchdog took over: the dispatcher must leave.
    pub abandoned: AtomicBool,
    /// The dispatcher has returned.
    pub dispatcher_done: AtomicBool,
    /// CLOCK_MONOTONIC of the dispatcher's last sign of life.
    pub heartbeat: AtomicU64,
    /// CLOCK_MONOTONIC at time zero.
    pub origin: AtomicU64,
    /// The dispatcher's kernel id and its start signal.
    pub dispatcher_tid: AtomicI32,
    pub go: AtomicU32,
    pub tasks: Vec<Slot>,
    /// Every task's name, to find a termination's target.
    pub names: Vec<String>,
    /// The run's kernel objects: one process per task, in its reclamation group. Task
    /// threads allocate in it (on their own time), the dispatcher reclaims from it.
    pub objects: Mutex<Option<KernelObjects>>,
}

impl Shared {
    pub fn now(&self) -> Instant {
        Clock {
            origin: self.origin.load(Ordering::Relaxed),
        }
        .now()
    }

    /// Marks that the kernel objects' limit was passed and rings the dispatcher, whose next
    /// wait ends the run.
    pub(crate) fn stop_at_object_limit(&self) {
        self.objects_over_limit.store(true, Ordering::Release);
        self.doorbell.fetch_add(1, Ordering::Release);
        sys::futex_wake(&self.doorbell, 1);
    }

    /// Ends the run for every task thread: demoted first, so that whatever they still do
    /// runs as ordinary threads, then every gate opened for good.
    pub(crate) fn release_all(&self) {
        self.stopping.store(true, Ordering::Release);
        for slot in &self.tasks {
            let tid = slot.tid.load(Ordering::Acquire);
            if tid != 0 {
                let _ = sys::set_other(tid);
            }
        }
        for slot in &self.tasks {
            slot.gate.store(GATE_STOP, Ordering::Release);
            sys::futex_wake(&slot.gate, i32::MAX);
        }
        self.go.store(GATE_STOP, Ordering::Release);
        sys::futex_wake(&self.go, 1);
        self.doorbell.fetch_add(1, Ordering::Release);
        sys::futex_wake(&self.doorbell, 1);
    }

    /// Every managed thread's id.
    fn tids(&self) -> Vec<i32> {
        self.tasks
            .iter()
            .map(|s| s.tid.load(Ordering::Acquire))
            .chain([self.dispatcher_tid.load(Ordering::Acquire)])
            .filter(|&tid| tid != 0)
            .collect()
    }
}

/// Puts every thread of the run back under SCHED_OTHER when the run ends, however it ends.
pub(crate) struct RestoreGuard<'a>(pub &'a Shared);

impl Drop for RestoreGuard<'_> {
    fn drop(&mut self) {
        self.0.release_all();
        for tid in self.0.tids() {
            let _ = sys::set_other(tid);
        }
    }
}

/// Puts the calling thread back under SCHED_OTHER when it ends, even by panic.
pub(crate) struct ThreadGuard;

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        let _ = sys::set_other(sys::gettid());
        sys::set_thread_gate(None);
    }
}

/// What the watchdog saw when it fired.
pub(crate) struct Fired {
    pub silent_for: u64,
    pub demoted: usize,
    pub still_real_time: usize,
}

pub(crate) fn run<'s>(
    scenario: &'s Scenario,
    scenario_core: u16,
    config: &HostConfig,
    mut bodies: Vec<(String, Body<'s>)>,
) -> Result<HostOutcome, HostError> {
    // The policy is built here once to report a refused configuration before any thread
    // starts; the dispatcher builds its own (a policy need not be `Send`).
    CoreScheduler::build(scenario, scenario_core)?;
    sys::install_park_handler().map_err(|error| HostError::System {
        call: "sigaction",
        error,
    })?;
    let mut matmul = Matmul::new();
    let matmul_ns = matmul.calibrate();
    let seed = config.seed.unwrap_or(scenario.seed);
    let until = Instant::ZERO.saturating_add(config.until.unwrap_or(scenario.duration));
    let shared = Shared {
        tasks: (0..scenario.tasks.len()).map(|_| Slot::default()).collect(),
        names: scenario.tasks.iter().map(|t| t.name.clone()).collect(),
        objects: Mutex::new(Some(KernelObjects::new(scenario)?)),
        ..Shared::default()
    };
    let shared = &shared;
    supervise(
        shared,
        config,
        |scope| {
            for (index, spec) in scenario.tasks.iter().enumerate() {
                let body = bodies
                    .iter()
                    .position(|(name, _)| *name == spec.name)
                    .map(|at| bodies.swap_remove(at).1);
                let needs_flush = has_flush(&spec.behaviour);
                let vbs = scenario.policy_of(spec.core) == PolicyKind::Vbs;
                let core = config.core;
                // Scripts need little stack, and a thousand attackers should not reserve 2 MiB
                // each; user code keeps the default.
                let stack = body.is_none().then_some(SCRIPT_STACK);
                spawn_managed(scope, stack, move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    // One stream per task, as the simulator draws them.
                    rng.set_stream(index as u64);
                    let mut tools = ScriptTools {
                        matmul: Matmul::new(),
                        matmul_ns,
                        flush: needs_flush.then(|| FlushBuffer::new(core)),
                    };
                    task_main(
                        shared,
                        index,
                        vbs,
                        body,
                        &spec.behaviour,
                        &mut rng,
                        &mut tools,
                    );
                })?;
            }
            Ok(())
        },
        move || {
            let mut dispatcher =
                Dispatcher::new(scenario, scenario_core, config, shared, until, seed);
            dispatcher.run()?;
            shared.release_all();
            let objects = (shared.objects.lock()).unwrap_or_else(|e| e.into_inner());
            if let Some(over) = objects.as_ref().and_then(KernelObjects::over_limit) {
                return Err(HostError::Policy(over.error(scenario)));
            }
            drop(objects);
            Ok(dispatcher.finish(scenario, scenario_core, matmul_ns))
        },
    )
}

fn has_flush(behaviour: &Behaviour) -> bool {
    fn any(steps: &[Step]) -> bool {
        steps.iter().any(|s| match s {
            Step::FlushCache => true,
            Step::Loop { body, .. } => any(body),
            _ => false,
        })
    }
    matches!(behaviour, Behaviour::Script { steps, .. } if any(steps))
}

/// Polls `probe` until it answers, for at most [`START_LIMIT`].
pub(crate) fn wait_for<T>(mut probe: impl FnMut() -> Option<T>) -> Result<T, HostError> {
    let start = std::time::Instant::now();
    loop {
        if let Some(value) = probe() {
            return Ok(value);
        }
        if start.elapsed() > START_LIMIT {
            return Err(HostError::Unsupported(
                "a managed thread did not start within 2 s".to_owned(),
            ));
        }
        thread::sleep(std::time::Duration::from_micros(200));
    }
}

pub(crate) fn setup_thread(tid: i32, core: usize, priority: i32) -> Result<(), HostError> {
    sys::pin(tid, core).map_err(|error| HostError::System {
        call: "sched_setaffinity",
        error,
    })?;
    sys::set_fifo(tid, priority).map_err(|error| {
        if error.raw_os_error() == Some(libc::EPERM) {
            HostError::MissingPrivilege {
                what: format!("SCHED_FIFO priority {priority} was refused (EPERM)"),
                how: "run as root or grant CAP_SYS_NICE (`sudo setcap cap_sys_nice+ep \
                      <program>`), or raise RLIMIT_RTPRIO (`ulimit -r 99`)"
                    .to_owned(),
            }
        } else {
            HostError::System {
                call: "sched_setscheduler",
                error,
            }
        }
    })
}

fn task_main(
    shared: &Shared,
    index: usize,
    vbs: bool,
    body: Option<Body<'_>>,
    behaviour: &Behaviour,
    rng: &mut ChaCha8Rng,
    tools: &mut ScriptTools,
) {
    let slot = &shared.tasks[index];
    sys::set_thread_gate(Some(&slot.gate));
    let _restore = ThreadGuard;
    slot.tid.store(sys::gettid(), Ordering::Release);
    let ctx = TaskContext { shared, index };
    if ctx.wait_granted().is_err() {
        return;
    }
    match body {
        Some(body) => {
            body(&ctx);
            ctx.exit();
        }
        None => run_script(&ctx, Program::new(behaviour), rng, tools, vbs),
    }
}

/// Watches the dispatcher's heartbeat and Ctrl-C; demotes every managed thread when the
/// dispatcher has been silent for `timeout_ns`. Silence is counted from the last heartbeat
/// or from the watchdog's own start, whichever is later: a watchdog that looks before the
/// first heartbeat is stored must not read the zero it starts from as a dispatcher silent
/// since boot.
pub(crate) fn watchdog_main(
    shared: &Shared,
    timeout_ns: u64,
    interrupts_before: usize,
) -> Option<Fired> {
    let started = sys::monotonic_ns();
    loop {
        if shared.dispatcher_done.load(Ordering::Acquire) {
            return None;
        }
        if sys::interrupts() != interrupts_before {
            shared.stop_requested.store(true, Ordering::Release);
        }
        let last_sign = shared.heartbeat.load(Ordering::Acquire).max(started);
        let silent = sys::monotonic_ns().saturating_sub(last_sign);
        if silent > timeout_ns {
            shared.abandoned.store(true, Ordering::Release);
            let tids = shared.tids();
            let demoted = tids
                .iter()
                .filter(|&&tid| sys::set_other(tid).is_ok())
                .count();
            shared.release_all();
            let still_real_time = tids
                .iter()
                .filter(|&&tid| {
                    sys::policy_of(tid).is_ok_and(|p| p == libc::SCHED_FIFO || p == libc::SCHED_RR)
                })
                .count();
            return Some(Fired {
                silent_for: silent,
                demoted,
                still_real_time,
            });
        }
        thread::sleep(WATCHDOG_POLL);
    }
}

/// A job the dispatcher tracks.
struct Job {
    index: u64,
    seq: u64,
    release: Instant,
    deadline: Option<Instant>,
}

/// How a job ends.
#[derive(Clone, Copy, Debug)]
enum Completion {
    /// It completed at this time.
    At(Instant),
    /// The run ended first.
    Unfinished,
    /// Another task terminated its process.
    Killed,
}

/// The kernel of the managed core.
pub(crate) struct Dispatcher<'a> {
    /// The core's policy as a cluster of one, driven through the one scheduler interface as
    /// the simulator drives it.
    scheduler: CoreScheduler,
    scenario: &'a Scenario,
    shared: &'a Shared,
    clock: Clock,
    until: Instant,
    seed: u64,
    core: u16,
    /// The core's owner and its one timer.
    handover: Handover<'a>,
    running_since: Instant,
    jobs: Vec<Option<Job>>,
    metrics: Vec<TaskMetrics>,
    core_metrics: CoreMetrics,
    records: Option<Vec<JobRecord>>,
    trace: Option<Trace>,
    stats: HostStats,
    next_seq: u64,
    /// Per task: its process was terminated. The policy never gets it back: when it would
    /// dispatch it, the task exits instead.
    killed: Vec<bool>,
}

impl<'a> Dispatcher<'a> {
    fn new(
        scenario: &'a Scenario,
        core: u16,
        config: &HostConfig,
        shared: &'a Shared,
        until: Instant,
        seed: u64,
    ) -> Self {
        let scheduler = CoreScheduler::build(scenario, core).unwrap_or_else(|_| {
            // Checked before any thread started; an empty fixed-priority policy never runs.
            CoreScheduler::new(Box::new(bulwark_core::FixedPriority::with_capacity(0)))
        });
        Dispatcher {
            scheduler,
            scenario,
            shared,
            clock: Clock { origin: 0 },
            until,
            seed,
            core,
            handover: Handover::new(shared, config, until),
            running_since: Instant::ZERO,
            jobs: scenario.tasks.iter().map(|_| None).collect(),
            metrics: scenario
                .tasks
                .iter()
                .map(|t| TaskMetrics {
                    name: t.name.clone(),
                    core: t.core,
                    ..TaskMetrics::default()
                })
                .collect(),
            core_metrics: CoreMetrics::default(),
            records: config.record_jobs.then(Vec::new),
            trace: config.record_trace.then(Trace::default),
            stats: HostStats {
                core: config.core,
                ..HostStats::default()
            },
            next_seq: 0,
            killed: vec![false; scenario.tasks.len()],
        }
    }

    /// Reports `event` to the core's scheduler.
    fn handle(
        &mut self,
        now: Instant,
        event: Event,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        self.scheduler.handle(now, event, work)
    }

    /// The scheduler's decision for the core at `now`.
    fn decide(&mut self, now: Instant) -> CoreDecision {
        // A cluster of one, given its one-entry slice, cannot refuse.
        self.scheduler
            .decide(now, &mut Work::default())
            .unwrap_or_default()
    }

    fn refused(
        &self,
        call: &'static str,
        task: TaskId,
        at: Instant,
        error: impl Into<SchedulerError>,
    ) -> HostError {
        HostError::Policy(SimError::refused(self.scenario, call, task, at, error))
    }

    /// Boot, then kernel entries until the end of the run.
    fn run(&mut self) -> Result<(), HostError> {
        self.clock = self.handover.boot();
        let mut work = Work::default();
        for index in 0..self.scenario.tasks.len() {
            let id = TaskId(index as u32);
            let scenario = self.scenario;
            let spec = &scenario.tasks[index];
            let release = Program::first_release(&spec.behaviour);
            let wake = self.open_job(id, 0, release);
            if scenario.policy_of(spec.core) == PolicyKind::Vbs {
                // As the simulator boots a VBS process: it exists through its actions, and
                // its first action (the script's first step, checked before the run) arrives
                // at time zero and is its activation. The task's thread starts in that
                // action's load.
                let (limit, period) = first_action(&spec.behaviour).unwrap_or_default();
                let change = unknown_load(limit, period);
                self.handle(
                    Instant::ZERO,
                    Event::Reconfigure { task: id, change },
                    &mut work,
                )
                .map_err(|e| self.refused("reconfigure", id, Instant::ZERO, e))?;
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
            let result = self.handle(Instant::ZERO, event, &mut work);
            result.map_err(|e| self.refused("activate", id, Instant::ZERO, e))?;
        }
        let mut now = self.clock.now();
        let mut suspended = None;
        loop {
            let mut decision = self.decide(now);
            while let Some(dead) = decision.next.filter(|n| self.killed[n.index()]) {
                // A killed task the policy still held (asleep when it was killed: its wake-up
                // was the policy's timer) exits when next dispatched, as in the simulator,
                // without running again. Blocking a ready task leaves the policy one task
                // fewer, so this ends.
                self.handle(now, Event::Block { task: dead }, &mut work)
                    .map_err(|e| self.refused("block", dead, now, e))?;
                decision = self.decide(now);
            }
            self.core_metrics.invocations += 1;
            self.stats.entries += 1;
            self.apply(decision.next, suspended)?;
            self.handover.timer = decision.timer;
            let exit = self.clock.now();
            self.record_slice(decision.next, SliceKind::Kernel, now, exit);
            self.charge_kernel(decision.next, now, exit);
            self.running_since = exit;
            // Wait for the next kernel entry.
            let entry = loop {
                match self.handover.wait()? {
                    Entry::Heartbeat => {
                        let woke = self.clock.now();
                        self.charge_running(woke);
                        let back = self.clock.now();
                        let current = self.current();
                        self.record_slice(current, SliceKind::Kernel, woke, back);
                        self.charge_kernel(current, woke, back);
                        self.running_since = back;
                    }
                    entry => break entry,
                }
            };
            now = self.clock.now();
            self.charge_running(now);
            suspended = None;
            match entry {
                Entry::End | Entry::Heartbeat => break,
                Entry::Timer => {
                    let planned = self.handover.timer.unwrap_or(now);
                    self.stats.timer_fired(planned, now);
                    self.core_metrics.timer_interrupts += 1;
                    self.handover.timer = None;
                    // A per-core policy cannot refuse the timer.
                    let _ = self.handle(now, Event::Timer, &mut work);
                }
                Entry::Request(index) => {
                    let id = TaskId(index as u32);
                    suspended = Some(id);
                    let slot = &self.shared.tasks[index];
                    let kind = slot.request.swap(0, Ordering::Acquire);
                    let at = Instant::from_nanos(slot.at.load(Ordering::Relaxed));
                    if kind == Request::Switch as u32 {
                        // A VBS action switch (section IV: "marking a change of action forces
                        // a scheduler invocation"), as the simulator's: the job goes on. The
                        // thread parked on its gate, as for any request.
                        let limit = Duration::from_nanos(slot.limit.load(Ordering::Relaxed));
                        let period = Duration::from_nanos(slot.period.load(Ordering::Relaxed));
                        slot.handled_at.store(now.as_nanos(), Ordering::Relaxed);
                        let change = unknown_load(limit, period);
                        self.handle(now, Event::Reconfigure { task: id, change }, &mut work)
                            .map_err(|e| self.refused("reconfigure", id, now, e))?;
                    } else if kind == Request::Terminate as u32 {
                        // The job goes on; the thread parked on its gate, as for any request.
                        let target = slot.target.load(Ordering::Relaxed) as usize;
                        let step = match slot.step_ns.load(Ordering::Relaxed) {
                            WHOLE => None,
                            ns => Some(Duration::from_nanos(ns)),
                        };
                        self.reclaim(now, id, target, step, &mut work);
                    } else if kind == Request::Sleep as u32 {
                        let next_index = self.close_job(id, Completion::At(at)) + 1;
                        let until = Instant::from_nanos(slot.until.load(Ordering::Relaxed));
                        let release = Instant::from_nanos(slot.release.load(Ordering::Relaxed));
                        let wake = self.open_job(id, next_index, release);
                        let event = Event::Sleep {
                            task: id,
                            until,
                            wake,
                        };
                        self.handle(now, event, &mut work)
                            .map_err(|e| self.refused("sleep", id, now, e))?;
                    } else {
                        self.close_job(id, Completion::At(at));
                        self.handle(now, Event::Block { task: id }, &mut work)
                            .map_err(|e| self.refused("block", id, now, e))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// `task` terminates `target`'s process (its whole group when it has one), all at once or
    /// one `step` of it, in this kernel entry: the dispatcher, at the top priority of the
    /// core, runs the store's reclamation with every task of the core held off (the paper's
    /// termination with interrupts masked). Its real time, read on the monotonic clock
    /// around the reclamation alone, is recorded; the kernel slice of this entry contains it.
    /// The processes it ended are killed.
    fn reclaim(
        &mut self,
        now: Instant,
        task: TaskId,
        target: usize,
        step: Option<Duration>,
        work: &mut Work,
    ) {
        // A task thread holds the lock only with its preemption signal held back, for one
        // bounded batch of allocations; while the dispatcher waits for it, the holder is the
        // only thread of the core that can run, so the wait is that batch's end.
        let mut objects = self
            .shared
            .objects
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Some(store) = objects.as_mut() else {
            return;
        };
        let start = self.clock.now();
        let reclaimed = store.terminate(target, step);
        let end = self.clock.now();
        drop(objects);
        let spent = end.saturating_duration_since(start).as_nanos();
        self.core_metrics.reclaim_ns += spent;
        self.core_metrics.max_reclaim_ns = self.core_metrics.max_reclaim_ns.max(spent);
        self.shared.tasks[task.index()]
            .reclaim_pending
            .store(!reclaimed.done, Ordering::Relaxed);
        self.stats.reclamations.push(Reclaimed {
            by: task,
            target: TaskId(target as u32),
            start,
            end,
            units: reclaimed.units,
            killed: reclaimed.killed.len() as u64,
        });
        for killed in reclaimed.killed {
            self.kill(now, TaskId(killed as u32), work);
        }
    }

    /// `task`'s process was terminated at `now`: its job ends (killed: neither completed nor
    /// missed), a ready task leaves the policy's run queue, and a suspended one exits when
    /// the policy would next dispatch it (`block` refuses a sleeping task, changing nothing),
    /// as in the simulator. Its thread stays parked on its closed gate until the run ends,
    /// when it returns [`Stopped`](crate::Stopped) and is joined like every other.
    fn kill(&mut self, now: Instant, task: TaskId, work: &mut Work) {
        self.close_job(task, Completion::Killed);
        self.killed[task.index()] = true;
        let _ = self.handle(now, Event::Block { task }, work);
    }

    /// The task whose thread has the core.
    fn current(&self) -> Option<TaskId> {
        self.handover.current.map(|slot| TaskId(slot as u32))
    }

    /// Gives the core to `next` (see [`Handover::give`]), counting the preemption and the
    /// context switch.
    fn apply(&mut self, next: Option<TaskId>, suspended: Option<TaskId>) -> Result<(), HostError> {
        let handed = self
            .handover
            .give(next.map(TaskId::index), suspended.map(TaskId::index))?;
        if let Some(preempted) = handed.preempted {
            self.metrics[preempted].preemptions += 1;
        }
        if handed.switched {
            self.core_metrics.context_switches += 1;
        }
        Ok(())
    }

    fn charge_running(&mut self, now: Instant) {
        let since = self.running_since;
        let Some(task) = self.current() else {
            return;
        };
        let elapsed = now.saturating_duration_since(since);
        self.metrics[task.index()].executed_ns += elapsed.as_nanos();
        self.core_metrics.busy_ns += elapsed.as_nanos();
        self.record_slice(Some(task), SliceKind::Task, since, now);
        self.running_since = now;
    }

    fn charge_kernel(&mut self, task: Option<TaskId>, start: Instant, end: Instant) {
        let spent = end.saturating_duration_since(start).as_nanos();
        self.core_metrics.kernel_ns += spent;
        if let Some(t) = task {
            self.metrics[t.index()].kernel_ns += spent;
        }
    }

    fn open_job(&mut self, task: TaskId, index: u64, release: Instant) -> Wake {
        let spec = &self.scenario.tasks[task.index()];
        let deadline = spec.deadline.map(|d| release.saturating_add(d));
        self.next_seq += 1;
        let seq = self.next_seq;
        self.shared.tasks[task.index()]
            .job_seq
            .store(seq, Ordering::Release);
        self.jobs[task.index()] = Some(Job {
            index,
            seq,
            release,
            deadline,
        });
        if release <= self.until {
            self.mark(task, MarkKind::Release, release, index);
        }
        Wake::NextJob {
            deadline: deadline.unwrap_or(Instant::NEVER),
        }
    }

    /// Ends `task`'s job as `completion` says; returns its index.
    fn close_job(&mut self, task: TaskId, completion: Completion) -> u64 {
        let Some(job) = self.jobs[task.index()].take() else {
            return 0;
        };
        let slot = &self.shared.tasks[task.index()];
        let first_start = (slot.started_job.load(Ordering::Acquire) == job.seq)
            .then(|| Instant::from_nanos(slot.started_at.load(Ordering::Relaxed)));
        let until = self.until;
        let m = &mut self.metrics[task.index()];
        m.jobs += 1;
        if let Some(start) = first_start {
            m.wakeup_latency
                .record(start.saturating_duration_since(job.release));
        }
        // A killed job neither completes nor misses (the simulator's rule).
        let missed = job.deadline.is_some_and(|d| match completion {
            Completion::At(at) => at > d,
            Completion::Unfinished => d <= until,
            Completion::Killed => false,
        });
        if matches!(completion, Completion::Killed) {
            m.killed_jobs += 1;
        }
        let completion = match completion {
            Completion::At(at) => Some(at),
            Completion::Unfinished | Completion::Killed => None,
        };
        if let Some(at) = completion {
            m.completed += 1;
            m.response.record(at.saturating_duration_since(job.release));
        }
        if missed {
            m.misses += 1;
            let deadline = job.deadline.unwrap_or(Instant::NEVER);
            m.first_miss.get_or_insert(deadline);
            self.mark(task, MarkKind::DeadlineMiss, deadline, job.index);
        }
        if let Some(at) = completion {
            self.mark(task, MarkKind::Completion, at, job.index);
            self.mark(task, MarkKind::Suspend, at, job.index);
        }
        if let Some(records) = self.records.as_mut() {
            records.push(JobRecord {
                task,
                job: job.index,
                release: job.release,
                first_start,
                completion,
                deadline: job.deadline,
                missed,
            });
        }
        job.index
    }

    fn mark(&mut self, task: TaskId, kind: MarkKind, at: Instant, job: u64) {
        let core = self.core;
        if let Some(trace) = self.trace.as_mut() {
            trace.marks.push(Mark {
                task,
                core,
                kind,
                at,
                job,
            });
        }
    }

    fn record_slice(
        &mut self,
        task: Option<TaskId>,
        kind: SliceKind,
        start: Instant,
        end: Instant,
    ) {
        let core = self.core;
        let end = end.min(self.until);
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        if end <= start {
            return;
        }
        if let Some(last) = trace.slices.last_mut() {
            if last.task == task && last.kind == kind && last.end == start {
                last.end = end;
                return;
            }
        }
        trace.slices.push(Slice {
            core,
            task,
            kind,
            start,
            end,
        });
    }

    /// The run's outcome in the simulator's types, and the host's own figures.
    fn finish(mut self, scenario: &Scenario, core: u16, matmul_ns: u64) -> HostOutcome {
        for index in 0..self.jobs.len() {
            let released = self.jobs[index]
                .as_ref()
                .is_some_and(|job| job.release <= self.until);
            if released {
                self.close_job(TaskId(index as u32), Completion::Unfinished);
            } else {
                self.jobs[index] = None;
            }
        }
        for (metrics, slot) in self.metrics.iter_mut().zip(&self.shared.tasks) {
            metrics.work_units = slot.work_units.load(Ordering::Acquire);
            metrics.objects_allocated = slot.objects_allocated.load(Ordering::Acquire);
            metrics.allocations_refused = slot.allocations_refused.load(Ordering::Acquire);
        }
        let mut cores = vec![CoreMetrics::default(); scenario.cores.max(core + 1) as usize];
        cores[core as usize] = self.core_metrics;
        let mut stats = self.stats;
        stats.preempt_signals = self.handover.preempt_signals;
        stats.rt_runtime_us = read_proc("/proc/sys/kernel/sched_rt_runtime_us");
        stats.rt_period_us = read_proc("/proc/sys/kernel/sched_rt_period_us");
        stats.nominal_load_ppm = nominal_load_ppm(scenario);
        stats.throttling_suspected = stats.late_timers > 0;
        stats.matmul_ns = matmul_ns;
        HostOutcome {
            outcome: Outcome {
                scenario: scenario.name.clone(),
                policy: scenario.policy_label(),
                seed: self.seed,
                until: self.until,
                events: stats.entries,
                tasks: self.metrics,
                cores,
                jobs: self.records,
                trace: self.trace,
                // The hosted runtime refuses clusters, and systems with CPIs run stepped.
                clusters: Vec::new(),
                components: None,
            },
            host: stats,
        }
    }
}

/// A VBS action on `(limit, period)` whose load the scheduler is not told, as the simulator
/// gives it: the next switch (or the end of the script) marks its completion.
fn unknown_load(limit: Duration, period: Duration) -> ContextChange {
    ContextChange {
        budget: limit,
        period,
        load: None,
    }
}

/// The resource `(limit, period)` of a script's first step when it is a VBS action.
pub(crate) fn first_action(behaviour: &Behaviour) -> Option<(Duration, Duration)> {
    // The first step of a script draws nothing: any generator will do.
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    match Program::new(behaviour).next_action(Instant::ZERO, &mut rng) {
        Ok(Action::Switch { limit, period, .. })
            if matches!(behaviour, Behaviour::Script { .. }) =>
        {
            Some((limit, period))
        }
        _ => None,
    }
}

pub(crate) fn read_proc(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// The scenario's nominal load in parts per million: a VBS process's bandwidth cap, a
/// reservation's budget over its period, else a periodic or sporadic task's (largest)
/// execution over its separation; a script without a reservation counts as a full core.
pub(crate) fn nominal_load_ppm(scenario: &Scenario) -> u64 {
    let ratio = |c: Duration, t: Duration| {
        (c.as_nanos() as u128 * 1_000_000 / t.as_nanos().max(1) as u128) as u64
    };
    scenario
        .tasks
        .iter()
        .enumerate()
        .map(|(index, task)| {
            let cap = scenario
                .vbs
                .as_ref()
                .filter(|_| scenario.policy_of(task.core) == PolicyKind::Vbs)
                .and_then(|spec| spec.caps.get(index).copied().flatten());
            if let Some((numerator, denominator)) = cap {
                return (u128::from(numerator) * 1_000_000 / u128::from(denominator.max(1))) as u64;
            }
            if let Some(r) = task.reservation {
                return ratio(r.budget, r.period);
            }
            let largest = |e: &Execution| match *e {
                Execution::Fixed(d) => d,
                Execution::Uniform { max, .. } => max,
            };
            match &task.behaviour {
                Behaviour::Periodic {
                    period, execution, ..
                } => ratio(largest(execution), *period),
                Behaviour::Sporadic {
                    min_interarrival,
                    execution,
                    ..
                } => ratio(largest(execution), *min_interarrival),
                Behaviour::Script { .. } => 1_000_000,
            }
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Scenario {
        bulwark_spec::parse(text, "test.toml").expect("a valid scenario")
    }

    const VBS: &str = r#"
name = "vbs"
policy = "vbs"
duration = "10ms"

[vbs]
quantum = "10us"

[[task]]
name = "a"
cap = "1/4"
script = [{ loop = "forever", body = [{ action = "1ms", limit = "1ms", period = "4ms" }] }]

[[task]]
name = "b"
cap = "3/10"
script = [{ action = "2ms", limit = "3ms", period = "10ms" }, { run = "1ms" }]
"#;

    #[test]
    fn a_vbs_processs_nominal_load_is_its_cap() {
        // 1/4 + 3/10 = 550,000 parts per million, whatever the scripts do.
        assert_eq!(nominal_load_ppm(&parse(VBS)), 550_000);
    }

    #[test]
    fn the_first_action_is_the_scripts_first_step_even_inside_a_loop() {
        let scenario = parse(VBS);
        let ms = Duration::from_millis;
        assert_eq!(
            first_action(&scenario.tasks[0].behaviour),
            Some((ms(1), ms(4)))
        );
        assert_eq!(
            first_action(&scenario.tasks[1].behaviour),
            Some((ms(3), ms(10)))
        );
        // A script that starts with anything else has none.
        let run_first = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![
                Step::Run(Execution::Fixed(ms(1))),
                Step::Action {
                    load: ms(1),
                    limit: ms(1),
                    period: ms(2),
                },
            ],
        };
        assert_eq!(first_action(&run_first), None);
    }
}
