//! Bulwark's hosted runtime: the same `bulwark-core` policies that drive the simulator, here
//! scheduling real Linux threads against the real clock on one managed core.
//!
//! A system with kernel objects beyond a core's policy (servers behind gates, clusters, a
//! component system's CPIs) runs its kernel as the dispatcher instead, stepped with reported
//! timing, its threads spinning the stretches the kernel gives them ([`run_machine`], the
//! simulator's machine; [`run_components`]; both through one dispatcher loop). The design
//! below is the scenario runtime's; the stepped kernels share its hand-over and watchdog.
//!
//! # Design
//!
//! **Dispatcher.** The managed core (core 1 unless configured) gets one dispatcher thread,
//! pinned to it at the highest SCHED_FIFO priority. It is the kernel of the model: it drives
//! the core's [`Policy`](bulwark_core::Policy), as a cluster of one through the one scheduler
//! interface ([`ClusterScheduler`](bulwark_core::ClusterScheduler) over
//! [`PerCore`](bulwark_core::PerCore)), through exactly the simulator's kernel-entry sequence
//! (one event — a task's request, or the timer — then one decision), and it is the only thread
//! that ever calls the policy.
//!
//! **Giving the core away.** Task threads are pinned to the same core under SCHED_FIFO. The
//! policy's choice is raised to priority 2, every other task thread sits at priority 1 (a
//! thread that suspended itself keeps its priority while parked: it runs nothing until its
//! gate opens, and dispatching it again then needs no priority change). Raising
//! alone is not enough: a lowered thread would still run whenever the chosen one suspends or
//! the policy idles the core (an exhausted reservation), which is exactly when it must not. So
//! a thread also has a *gate*, a futex word only the dispatcher opens: a thread that suspends
//! through the runtime waits on its closed gate, and a thread preempted in the middle of its
//! own code is sent a signal (SIGURG) whose handler parks it on its gate. The handler runs
//! before any more of the thread's code, so a preempted thread executes nothing until the
//! dispatcher opens its gate again; the priorities make the chosen thread run first, before
//! the preempted one even takes its signal.
//!
//! **One timer per core, owned by the policy.** The dispatcher waits on a futex with an
//! absolute CLOCK_MONOTONIC timeout (`FUTEX_WAIT_BITSET`): the kernel's one-shot hrtimer, the
//! same one `clock_nanosleep(TIMER_ABSTIME)` arms, programmed to the policy's next timer after
//! every `schedule`; one wait covers both that timer and the task threads' requests. A task's
//! timed sleep is a request: the thread hands the wake-up time to the dispatcher, which hands
//! it to the policy, and parks on its gate. No task thread ever arms a kernel timer, so
//! however many tasks sleep, the core takes at most one timer interrupt at a time, when the
//! policy says so. An overrunning thread is preempted when the policy's budget timer fires.
//! When the core is idle, the dispatcher sleeps to 200 us before the timer and spins the rest
//! of the way, so that releases do not inherit the platform's timer-interrupt latency (tens of
//! microseconds on a virtual machine, varying from one wake-up to the next); while a task runs
//! it sleeps to the timer itself, so that no task loses time to a spin. For a run, the runtime
//! also requests zero CPU wake-up latency through PM QoS (`/dev/cpu_dma_latency`, as latency
//! tools such as cyclictest do; root only, skipped otherwise), which keeps the idle core out of
//! deep idle states; the request ends with the run.
//!
//! **VBS actions.** Under the VBS policy a task is a process of actions. Its first action,
//! its script's first step, arrives at time zero: the dispatcher hands it to the policy
//! (`reconfigure`) at boot, as the simulator boots a VBS process, and the thread starts in
//! its load. Each later action is one more kind of request, a switch
//! ([`TaskContext::switch_action`]; a script's `action` step makes it, then spins the load):
//! the dispatcher hands the new resource to the policy, which completes the current action
//! there (the paper's marked switch, the load unknown to the scheduler until then), and the
//! job goes on, as in the simulator. The switch answers the scheduler's `now`, from which
//! the caller can place the action's termination as the scheduler does.
//!
//! **Kernel objects and their reclamation.** A run keeps the simulator's object store
//! ([`bulwark_sim::KernelObjects`]: one process per task, in its reclamation group when it has
//! one, over `bulwark_core::reclaim`'s capability tree, reached through the core's syscall
//! layer), so `allocate` and `terminate` steps run the same code as in the simulator. An `allocate` step runs on the task's own thread,
//! on its own time and budget, under the store's lock, in batches with the preemption signal
//! held back (a thread parked while holding the lock would stall the dispatcher); the objects
//! created and refused are the task's `objects_allocated` and `allocations_refused`. A
//! `terminate` step is a request: the dispatcher, at the top priority of the core so that no
//! task runs meanwhile (the paper's reclamation with interrupts masked), reclaims the target's
//! process or group (a step of it at a time when the step says so, the scheduler running
//! between steps), measures the reclamation on the monotonic clock ([`Reclaimed`], the core's
//! `reclaim_ns`, inside the entry's kernel slice) and kills the processes it ended: each one's
//! job ends as killed (neither completed nor missed) and the policy never dispatches it
//! again. Its thread stays parked on its closed gate until the run ends, then returns like
//! every other and is joined and restored.
//!
//! **Measured kernel work.** The dispatcher reads the clock when it wakes (`now`, handed to
//! the policy) and again when it has made its changes (priorities, gates, signals, the futex
//! wake of the chosen thread); the stretch between is recorded as a kernel slice charged to
//! the chosen task, as the simulator records its cost model. Task slices run from the end of
//! one kernel slice to the next wake-up. Each job's first start is read by the task thread
//! itself when it passes its gate.
//!
//! **Safety.** [`check_privileges`] refuses a run, saying what is missing and how to grant
//! it, when the process may not use SCHED_FIFO at the priorities needed (CAP_SYS_NICE or
//! RLIMIT_RTPRIO) or may not run on the managed core. A watchdog thread pinned to another core,
//! under the ordinary time-sharing policy, checks the dispatcher's heartbeat (it wakes at least
//! every few milliseconds even with no timer due): when it stays silent longer than the
//! watchdog timeout, the watchdog demotes every managed thread to SCHED_OTHER, opens every gate
//! and ends the run with [`HostError::WatchdogFired`]. Ctrl-C is caught during a run and ends
//! it cleanly. Every thread puts itself back under SCHED_OTHER when it ends, by a drop guard
//! that also runs on panic, and the run's own guard demotes every thread it created. Runs are
//! bounded ([`HostConfig::max_run`]); script steps stop spinning when the run ends. Runs on
//! one core exclude each other, across processes too, by a lock file named after the core.
//!
//! **Real-time throttling.** Linux lets real-time threads use only `sched_rt_runtime_us` of
//! every `sched_rt_period_us` (950 ms of 1 s by default) on a core; past that it stops them,
//! dispatcher included, for the rest of the period. The runtime does not fight it: it reads
//! both values into [`HostStats`], reports the scenario's nominal load on the core beside the
//! limit, and measures every timer wake-up's lateness. A run whose timers came more than
//! [`THROTTLE_SUSPECT_NS`] late is flagged `throttling_suspected`; keep the managed core's load
//! below the limit (a reservation's budget over its period is its load) for meaningful runs.
//!
//! # Your own code under a reservation
//!
//! ```no_run
//! use bulwark_core::{Duration, Instant};
//! use bulwark_host::{Body, HostConfig};
//!
//! // The scenario gives the policy and each task's parameters; the closure replaces the
//! // behaviour of the task it names.
//! let scenario = bulwark_spec::parse(
//!     r#"
//! name = "mine"
//! policy = "spr"
//! duration = "1s"
//!
//! [[task]]
//! name = "control"
//! priority = 1
//! reservation = { budget = "2ms", period = "10ms" }
//! script = [{ run = "1ms" }]
//! "#,
//!     "mine.toml",
//! )
//! .expect("a valid scenario");
//! let body: Body = Box::new(|ctx| {
//!     let mut release = Instant::ZERO;
//!     loop {
//!         // ... one job of real work; the reservation preempts it past 2 ms a period ...
//!         if ctx.run_for(Duration::from_micros(500)).is_err() {
//!             return;
//!         }
//!         release = release.saturating_add(Duration::from_millis(10));
//!         // Ends the job; the wake-up time goes to the policy, no kernel timer is armed.
//!         if ctx.sleep_until(release).is_err() {
//!             return;
//!         }
//!     }
//! });
//! let outcome = bulwark_host::run_with(
//!     &scenario,
//!     &HostConfig::default(),
//!     vec![("control".into(), body)],
//! )?;
//! println!("{} jobs", outcome.outcome.tasks[0].completed);
//! # Ok::<(), bulwark_host::HostError>(())
//! ```

mod components;
mod handover;
pub mod linux;
mod machine;
mod probe;
mod runtime;
mod stretches;
pub mod sys;
mod task;
pub mod work;

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::{Outcome, Stats};
use bulwark_spec::{Behaviour, PolicyKind, Scenario, Step};

pub use components::{run_components, HostComponentOutcome};
pub use machine::{run_machine, DEFAULT_RUN};
pub use probe::{probe_platform, PlatformProbe};
pub use stretches::HostRun;
pub use task::{Stopped, TaskContext};

/// A timer wake-up later than this (1 ms) counts as a sign of real-time throttling.
pub const THROTTLE_SUSPECT_NS: u64 = 1_000_000;

/// Priority of the task thread the policy chose.
pub(crate) const PRIORITY_RUN: i32 = 2;
/// Priority of every other task thread.
pub(crate) const PRIORITY_READY: i32 = 1;

/// How to run a scenario on this machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// The core the runtime manages (dispatcher and every task thread).
    pub core: usize,
    /// The core of the watchdog thread; must differ from `core`.
    pub watchdog_core: usize,
    /// Time to run; the scenario's `duration` when `None`.
    pub until: Option<Duration>,
    /// The longest run allowed.
    pub max_run: Duration,
    /// Seed for random draws; the scenario's `seed` when `None`.
    pub seed: Option<u64>,
    /// Record a trace.
    pub record_trace: bool,
    /// Keep a record of every job.
    pub record_jobs: bool,
    /// How long the dispatcher may stay silent before the watchdog demotes every thread.
    pub watchdog_timeout: Duration,
    /// Testing aid: at this time the dispatcher stops answering (spins at its top priority
    /// without a heartbeat), as a hung kernel would, so that the watchdog must step in.
    #[doc(hidden)]
    pub stall_dispatcher_at: Option<Duration>,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            core: 1,
            watchdog_core: 0,
            until: None,
            max_run: Duration::from_secs(10),
            seed: None,
            record_trace: false,
            record_jobs: false,
            watchdog_timeout: Duration::from_millis(200),
            stall_dispatcher_at: None,
        }
    }
}

/// Why a run could not start or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The process lacks a privilege the runtime needs.
    #[error("missing privilege: {what}\n  how to grant it: {how}")]
    MissingPrivilege {
        /// What is missing.
        what: String,
        /// How to grant it.
        how: String,
    },
    /// The configuration or scenario cannot run on the host.
    #[error("{0}")]
    Unsupported(String),
    /// The policy refused the scenario or a call.
    #[error(transparent)]
    Policy(#[from] bulwark_sim::SimError),
    /// A system call failed during the run.
    #[error("`{call}` failed: {error}")]
    System {
        /// The call.
        call: &'static str,
        /// The kernel's answer.
        error: std::io::Error,
    },
    /// The dispatcher stopped answering and the watchdog demoted every managed thread.
    #[error(
        "the dispatcher was silent for {silent_for}; the watchdog demoted {demoted} threads to \
         SCHED_OTHER ({still_real_time} still real-time afterwards)"
    )]
    WatchdogFired {
        /// How long it had been silent.
        silent_for: Duration,
        /// Threads demoted.
        demoted: usize,
        /// Threads the watchdog found still under a real-time policy after demoting them.
        still_real_time: usize,
    },
    /// Ctrl-C ended the run; every thread was restored.
    #[error("interrupted (Ctrl-C); every managed thread was restored")]
    Interrupted,
}

/// What the host measured about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// The managed core.
    pub core: usize,
    /// Kernel entries (dispatcher invocations that called the policy).
    pub entries: u64,
    /// Lateness of every timer wake-up (wake-up minus the policy's timer).
    pub timer_lateness: Stats,
    /// Timer wake-ups later than [`THROTTLE_SUSPECT_NS`].
    pub late_timers: u64,
    /// Preemption signals sent.
    pub preempt_signals: u64,
    /// `sched_rt_runtime_us` (-1 means no limit; `None` when unreadable).
    pub rt_runtime_us: Option<i64>,
    /// `sched_rt_period_us`.
    pub rt_period_us: Option<i64>,
    /// The scenario's nominal load on the managed core, in parts per million (periodic
    /// execution over period, reservation budget over period; scripts count as full load).
    pub nominal_load_ppm: u64,
    /// True when some timer woke more than [`THROTTLE_SUSPECT_NS`] late.
    pub throttling_suspected: bool,
    /// CPU time of one `compute` matrix multiply on this core, calibrated at start.
    pub matmul_ns: u64,
    /// Every termination (or step of one) the dispatcher ran, in order.
    pub reclamations: Vec<Reclaimed>,
}

/// One termination, or one step of a stepwise one, as the dispatcher ran it: the real time
/// of the object store's reclamation alone, read on the monotonic clock around it. The core
/// ran no task meanwhile (the dispatcher holds it at the top priority), as the paper's kernel
/// reclaims with interrupts masked; the kernel slice of the entry contains this stretch.
impl HostStats {
    /// The kernel's timer planned for `planned` woke the dispatcher at `now`: its lateness
    /// is recorded, and one over [`THROTTLE_SUSPECT_NS`] counted as a late timer.
    pub(crate) fn timer_fired(&mut self, planned: Instant, now: Instant) {
        let late = now.saturating_duration_since(planned);
        self.timer_lateness.record(late);
        if late.as_nanos() > THROTTLE_SUSPECT_NS {
            self.late_timers += 1;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reclaimed {
    /// The task whose `terminate` step asked.
    pub by: TaskId,
    /// The task whose process (or group) was terminated.
    pub target: TaskId,
    /// When the reclamation started.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// Work units the store reports for it (the simulator's measure of the same call).
    pub units: u64,
    /// Tasks whose processes it ended (every member of a group, on its first step).
    pub killed: u64,
}

impl Reclaimed {
    /// The measured real time of the reclamation.
    pub fn duration(&self) -> Duration {
        self.end.saturating_duration_since(self.start)
    }
}

/// A host run's outputs: the simulator's own outcome type, so that every exporter works on
/// it, and what the host measured about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostOutcome {
    /// Per-task metrics, jobs and trace, as the simulator reports them.
    pub outcome: Outcome,
    /// The host's own measurements.
    pub host: HostStats,
}

/// A task's code: a closure run in the task's thread under its policy. It should return
/// when a [`TaskContext`] call answers [`Stopped`] (the run is over).
pub type Body<'s> = Box<dyn FnOnce(&TaskContext) + Send + 's>;

/// Checks that this process may run the runtime on `config.core`; the error names what is
/// missing and how to grant it.
pub fn check_privileges(config: &HostConfig) -> Result<(), HostError> {
    let needed = sys::fifo_max();
    let limit = sys::rtprio_limit();
    if !sys::has_cap_sys_nice() && limit < needed.max(0) as u64 {
        return Err(HostError::MissingPrivilege {
            what: format!(
                "SCHED_FIFO priority {needed}: the process has no CAP_SYS_NICE and its \
                 RLIMIT_RTPRIO is {limit}"
            ),
            how: format!(
                "run as root, or give the program the capability (`sudo setcap cap_sys_nice+ep \
                 <program>`), or raise the limit to {needed} (`ulimit -r {needed}` in a shell \
                 allowed to, or `<user> - rtprio {needed}` in /etc/security/limits.conf); in a \
                 container, add CAP_SYS_NICE (`docker run --cap-add SYS_NICE`)"
            ),
        });
    }
    let allowed = sys::allowed_cores().map_err(|error| HostError::System {
        call: "sched_getaffinity",
        error,
    })?;
    for (role, core) in [("managed", config.core), ("watchdog", config.watchdog_core)] {
        if !allowed.contains(&core) {
            return Err(HostError::MissingPrivilege {
                what: format!(
                    "the {role} core {core} is not in this process's CPU affinity {allowed:?}"
                ),
                how: "run without a restricting `taskset`/cpuset, or choose cores from the \
                      affinity (`--core`)"
                    .to_owned(),
            });
        }
    }
    if config.core == config.watchdog_core {
        return Err(HostError::Unsupported(format!(
            "the watchdog must run on another core than the managed core {}",
            config.core
        )));
    }
    Ok(())
}

/// Runs `scenario`'s scripts for real on the managed core. A system with servers or clusters
/// runs on the simulator's machine stepped by real threads ([`run_machine`]): its gates,
/// contexts and clusters are the kernel's objects.
pub fn run(scenario: &Scenario, config: &HostConfig) -> Result<HostOutcome, HostError> {
    if kernel_objects(scenario) {
        let run = run_machine(scenario, config, &mut bulwark_sim::Discard)?;
        return Ok(HostOutcome {
            outcome: run.outcome,
            host: run.host,
        });
    }
    run_with(scenario, config, Vec::new())
}

/// `scenario` has servers or clusters, which the scenario runtime's per-core policy does not
/// dispatch.
fn kernel_objects(scenario: &Scenario) -> bool {
    !scenario.servers.is_empty() || !scenario.clusters.is_empty() || !scenario.cpis.is_empty()
}

/// Runs `scenario` with some tasks' behaviour replaced by user code: `bodies` pairs a task's
/// name with its closure. The scenario still gives every task's policy parameters (priority,
/// reservation) and its first release (its behaviour's offset).
pub fn run_with<'s>(
    scenario: &'s Scenario,
    config: &HostConfig,
    bodies: Vec<(String, Body<'s>)>,
) -> Result<HostOutcome, HostError> {
    check_privileges(config)?;
    let scenario_core = validate(scenario, config, &bodies)?;
    let _lock = CoreLock::acquire(config.core)?;
    runtime::run(scenario, scenario_core, config, bodies)
}

/// How long a run waits for another run on the same core to finish.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Exclusive use of a managed core among every process that runs the runtime on it (two
/// dispatchers at the top priority on one core would each wreck the other's run): an
/// advisory lock on a file named after the core, released when the run ends, even by a crash.
/// The lock also holds the run's idle-latency request ([`IdleLatency`]).
pub(crate) struct CoreLock {
    /// Held for its lock; closing it releases the lock.
    _file: std::fs::File,
    /// Held for the run; `None` where the request could not be made.
    _idle: Option<IdleLatency>,
}

/// A PM QoS request for zero CPU wake-up latency, held while a run measures: written to
/// `/dev/cpu_dma_latency` and withdrawn by the kernel when the file is closed (by drop, or by
/// the process's end, even a crash). Without it a core that idles between releases sleeps in
/// a deep idle state (on a virtual machine, a halt that exits to the hypervisor), and the time
/// to leave it, tens of microseconds and varying from run to run, is added to every wake-up
/// latency measured, under every scheduler alike. Latency tools make the same request
/// (cyclictest's `--latency`, 0 by default). Needs root; without it the run goes on without.
pub(crate) struct IdleLatency {
    /// Held open: closing it withdraws the request.
    _file: std::fs::File,
}

impl IdleLatency {
    /// Requests zero wake-up latency; `None` when the system refuses (no permission, no
    /// PM QoS interface).
    pub(crate) fn request() -> Option<Self> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .ok()?;
        // The interface takes a native-endian 32-bit count of microseconds.
        file.write_all(&0i32.to_ne_bytes()).ok()?;
        Some(IdleLatency { _file: file })
    }
}

impl CoreLock {
    pub(crate) fn acquire(core: usize) -> Result<Self, HostError> {
        let path = std::env::temp_dir().join(format!("bulwark-host-core{core}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|error| HostError::System {
                call: "open (core lock)",
                error,
            })?;
        let start = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => {
                    return Ok(CoreLock {
                        _file: file,
                        _idle: IdleLatency::request(),
                    })
                }
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(_) => {
                    return Err(HostError::Unsupported(format!(
                        "core {core} is in use by another run of the host runtime (lock {})",
                        path.display()
                    )))
                }
            }
        }
    }
}

/// Checks what the host can run; returns the scenario core whose tasks it runs.
fn validate(
    scenario: &Scenario,
    config: &HostConfig,
    bodies: &[(String, Body<'_>)],
) -> Result<u16, HostError> {
    for task in &scenario.tasks {
        let vbs = scenario.policy_of(task.core) == PolicyKind::Vbs;
        // A VBS process exists through its actions: its first arrives at time zero, given
        // by its script's first step (as the simulator's validation requires).
        if vbs && runtime::first_action(&task.behaviour).is_none() {
            return Err(HostError::Unsupported(format!(
                "task `{}`: under vbs a task's script must start with an `action` step (its \
                 first action, arriving at time zero)",
                task.name
            )));
        }
        if !vbs {
            if let Behaviour::Script { steps, .. } = &task.behaviour {
                if has_action(steps) {
                    return Err(HostError::Unsupported(format!(
                        "task `{}`: `action` steps need the vbs policy",
                        task.name
                    )));
                }
            }
        }
    }
    if kernel_objects(scenario) {
        // Such a system's tasks run their scripts ([`run`]): their threads spin the
        // stretches its kernel gives them.
        return Err(HostError::Unsupported(
            "code cannot replace a task's behaviour in a system with servers or clusters; \
             `run` runs its scripts"
                .to_owned(),
        ));
    }
    let Some(first) = scenario.tasks.first() else {
        return Err(HostError::Unsupported(
            "the scenario has no task".to_owned(),
        ));
    };
    if let Some(other) = scenario.tasks.iter().find(|t| t.core != first.core) {
        return Err(HostError::Unsupported(format!(
            "the host runtime manages one core, but task `{}` is on core {} and task `{}` on \
             core {}",
            first.name, first.core, other.name, other.core
        )));
    }
    for (name, _) in bodies {
        if !scenario.tasks.iter().any(|t| &t.name == name) {
            return Err(HostError::Unsupported(format!(
                "no task `{name}` in the scenario for the given code"
            )));
        }
    }
    let until = config.until.unwrap_or(scenario.duration);
    if until > config.max_run {
        return Err(HostError::Unsupported(format!(
            "a host run of {until} is longer than the {} allowed; pass a shorter --until",
            config.max_run
        )));
    }
    Ok(first.core)
}

fn has_action(steps: &[Step]) -> bool {
    steps.iter().any(|step| match step {
        Step::Loop { body, .. } => has_action(body),
        Step::Action { .. } => true,
        _ => false,
    })
}

/// The time base of a run: policy instants are nanoseconds since `origin` on CLOCK_MONOTONIC.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    pub origin: u64,
}

impl Clock {
    pub fn now(self) -> Instant {
        Instant::from_nanos(sys::monotonic_ns().saturating_sub(self.origin))
    }

    pub fn absolute(self, at: Instant) -> u64 {
        self.origin.saturating_add(at.as_nanos())
    }
}
