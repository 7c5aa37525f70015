//! The component machine's loop: threads, the run queue, protocol steps and their effects.

use std::collections::VecDeque;

use bulwark_core::ipc::{Cpi, CpiId, Effect, Effects, Invoked, Replied, Request};
use bulwark_core::kernel::{
    ContextId, Contexts, Donate, InvokeCpi, Kernel as KernelObjects, Nest, NestedReply,
    ObjectStore, ReplyCpi, Return, SendNested, SyscallError,
};
use bulwark_core::{Duration, Event, FixedPriority, Instant, Priority, TaskId, Wake, Work};

use crate::core_scheduler::CoreScheduler;
use crate::record::OpenSlices;
use crate::trace::{Mark, MarkKind, Slice, SliceKind, Trace};

use super::{
    ComponentJob, ComponentOutcome, ComponentSystemConfig, ComponentTaskOutcome, CpiProtocol,
    ProtocolCosts, RunOptions, Step,
};
use bulwark_core::reservation::SchedContext;

use crate::Timing;

/// Why a configuration cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ComponentConfigError {
    /// A step requests a CPI that does not exist.
    #[error("{owner} requests CPI #{cpi}, but there are only {count} CPIs")]
    UnknownCpi {
        /// The task or CPI whose body it is.
        owner: String,
        /// The index it names.
        cpi: usize,
        /// How many CPIs there are.
        count: usize,
    },
    /// A task body given for a task that does not exist.
    #[error("CPI {cpi} has a body for task #{task}, but there are only {count} tasks")]
    UnknownTask {
        /// The CPI.
        cpi: String,
        /// The index it names.
        task: usize,
        /// How many tasks there are.
        count: usize,
    },
    /// A task with period zero.
    #[error("task {task} has period zero; a period must be positive")]
    ZeroPeriod {
        /// The task.
        task: String,
    },
    /// A CPI with an empty pool.
    #[error("CPI {cpi} has no threads; a pool needs at least one")]
    EmptyPool {
        /// The CPI.
        cpi: String,
    },
    /// A reservation with no budget or no replenishment slot.
    #[error("task {task} has a reservation with a zero budget or zero replenishment slots")]
    EmptyReservation {
        /// The task.
        task: String,
    },
}

/// Whose thread it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A task's control thread.
    Task(usize),
    /// Thread `index` of a CPI's pool.
    Pool { cpi: usize, index: u32 },
}

/// What a thread does when its current stretch of execution is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cont {
    /// Run its body from `pc`.
    Step,
    /// The `Execute` step at `pc` is done.
    StepDone,
    /// The call's protocol steps are done; then wait for the lock if it was held.
    EntryDone { waiting: bool },
    /// The reply's protocol steps are done: finish, reply, serve the next request.
    ExitDone,
    /// The reply to its own request arrived (Fig. 4 steps 19-20, Fig. 5 steps 11-12).
    AfterReply,
}

/// The request a pool thread serves.
#[derive(Clone, Copy, Debug)]
struct Serving {
    request: Request,
    caller: usize,
    /// Sent by a thread of an inherited CPI (Table 2's "PIP to ..." rows).
    from_pip: bool,
}

#[derive(Clone, Debug)]
struct Thread {
    role: Role,
    /// The priority it waits at (ceiling, fixed or task priority).
    home: Priority,
    /// Its TCB priority, as the protocols set it.
    priority: Priority,
    /// Running protocol steps, which run at the ceiling.
    in_protocol: bool,
    /// Not runnable: waiting for a release, a request, a reply or the lock.
    blocked: bool,
    /// Runnable, but its scheduling context is out of budget: off the run queue until the
    /// replenishment.
    throttled: bool,
    remaining: Duration,
    /// Counts the `Execute` stretches it started: a platform whose threads do the work tells
    /// a new stretch from one resumed after a preemption by it.
    stretch: u64,
    cont: Cont,
    pc: usize,
    serving: Option<Serving>,
    /// When a timer (its job's release, its context's replenishment) last made it ready, if
    /// that was its last wake-up and it has not run since: the wake-ups a non-preemptive
    /// region defers.
    timer_woken: Option<Instant>,
}

impl Thread {
    fn new(role: Role, home: Priority) -> Thread {
        Thread {
            role,
            home,
            priority: home,
            in_protocol: false,
            blocked: true,
            throttled: false,
            remaining: Duration::ZERO,
            stretch: 0,
            cont: Cont::Step,
            pc: 0,
            serving: None,
            timer_woken: None,
        }
    }

    /// The priority it is scheduled at: protocol steps run at the ceiling.
    fn effective(&self) -> Priority {
        if self.in_protocol {
            self.home.max(self.priority)
        } else {
            self.priority
        }
    }
}

/// A context's non-preemptive region (SPR section III-F).
#[derive(Clone, Copy, Debug)]
struct Region {
    /// The context, by its task's index.
    context: usize,
    /// When it started: its first dispatch after another context ran (Algorithm 2, line 5).
    start: Instant,
    /// `start + eta`.
    end: Instant,
}

/// A pending job.
#[derive(Clone, Debug)]
struct Job {
    release: Instant,
    seq: u64,
    inversion: Duration,
    lower: Vec<(usize, u64)>,
}

#[derive(Clone, Debug)]
struct TaskState {
    thread: usize,
    next_release: Instant,
    released: u64,
    jobs: VecDeque<Job>,
    outcome: ComponentTaskOutcome,
}

struct Machine<'a> {
    config: &'a ComponentSystemConfig,
    /// The protocol overheads charged: the configuration's, or none when the platform's
    /// own kernel work takes real time ([`Timing::Reported`]).
    costs: ProtocolCosts,
    /// How an `Execute` stretch ends.
    timing: Timing,
    now: Instant,
    threads: Vec<Thread>,
    /// The core's scheduler, a cluster of one driven through the scheduler interface (events
    /// in, a decision out), as every machine drives its cores: every thread is a task
    /// of it (by thread index) at its effective priority; a throttled thread is blocked
    /// there.
    scheduler: CoreScheduler<FixedPriority>,
    /// No event reached the scheduler since its last decision, which therefore still
    /// stands: the engine never hands it a timeout, so only an event changes its answer.
    decided: bool,
    running: Option<usize>,
    last_dispatched: Option<usize>,
    /// The CPIs, as kernel objects reached through the syscall layer; CPI `c` is `CpiId(c)`.
    objects: KernelObjects,
    /// Global thread ids of each CPI's pool, by pool index.
    pools: Vec<Vec<usize>>,
    /// Each CPI's endpoint: pool threads waiting for a request, first come first served.
    idle: Vec<VecDeque<u32>>,
    /// Requests that found no waiting thread (a pool sized too small).
    overflow: Vec<VecDeque<(Request, usize, bool)>>,
    /// Callers of the requests queued in a fixed CPI, in its queue's order.
    fixed_callers: Vec<VecDeque<(usize, bool)>>,
    tasks: Vec<TaskState>,
    /// The earliest of the tasks' next releases, kept so that an instant with no release due
    /// costs one comparison rather than a scan of every task.
    next_release: Instant,
    /// The non-preemptive region of the context on the core: the context (its task's index),
    /// when the region started and when it ends. Every thread running on that context keeps
    /// the core until then against what the region defers
    /// ([`Machine::defers_all_above`]): a request that passes the context to a server thread
    /// does not end the region, nor start another, and neither does the reply.
    region: Option<Region>,
    /// The context that ran when time last passed (its task's index; `None` after an idle
    /// stretch or a thread without one): `tau_p` of Algorithm 2, line 5.
    ran_on: Option<usize>,
    work: Work,
    outcome: ComponentOutcome,
    record_jobs: bool,
    trace: Option<Trace>,
    /// The slice that may still grow, merged as the scenario machine's recorders merge.
    open: OpenSlices,
}

/// Where the kernel stands once it has done everything due at its current instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// The thread that runs from now, if any ([`Kernel::threads`] index).
    pub thread: Option<usize>,
    /// Its work left in the current stretch (simulated timing: the time to its end).
    pub remaining: Duration,
    /// Which of the thread's `Execute` stretches it is (see [`Kernel::threads`]).
    pub serial: u64,
    /// The next instant the kernel must be entered whatever the threads do: a release, a
    /// depletion, the end of a non-preemptive region or a replenishment ([`Instant::NEVER`]
    /// for none).
    pub timer: Instant,
}

/// A thread of the system, for a platform that gives each one a real thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    /// `t1`, or `E.work#0` for thread 0 of CPI `E.work`'s pool.
    pub name: String,
    /// The priority it waits at.
    pub home: Priority,
}

/// The component kernel, driven step by step by a platform: the simulator's loop in [`run`],
/// or a runtime whose real threads do each `Execute` stretch on a real clock.
///
/// A platform alternates [`settle`](Kernel::settle), which does every kernel action due at
/// the current instant and says who runs and until when, with [`advance`](Kernel::advance),
/// which lets time pass with that thread running.
pub struct Kernel<'a> {
    machine: Machine<'a>,
    until: Instant,
}

impl<'a> Kernel<'a> {
    /// A kernel at time zero for `config`, which it validates.
    pub fn new(
        config: &'a ComponentSystemConfig,
        options: RunOptions,
        timing: Timing,
    ) -> Result<Kernel<'a>, ComponentConfigError> {
        validate(config)?;
        let mut machine = Machine::new(config, options.record_jobs, timing);
        if options.record_trace {
            machine.trace = Some(Trace::default());
        }
        Ok(Kernel {
            machine,
            until: options.until,
        })
    }

    /// The kernel's current instant.
    pub fn now(&self) -> Instant {
        self.machine.now
    }

    /// The threads: every task's control thread by task index, then each CPI's pool in
    /// order. A [`Stretch`]'s `thread` indexes this.
    pub fn threads(&self) -> Vec<ThreadInfo> {
        let config = self.machine.config;
        self.machine
            .threads
            .iter()
            .map(|thread| ThreadInfo {
                name: match thread.role {
                    Role::Task(i) => config.tasks[i].name.clone(),
                    Role::Pool { cpi, index } => format!("{}#{index}", config.cpis[cpi].name),
                },
                home: thread.home,
            })
            .collect()
    }

    /// Does everything due at the current instant (dispatch, the running thread's next
    /// action once its stretch is over, a depletion, releases, replenishments) and says who
    /// runs from now; `None` once the run's end is reached.
    pub fn settle(&mut self) -> Option<Stretch> {
        let machine = &mut self.machine;
        loop {
            machine.dispatch();
            // What a thread does at the end of a stretch happens at that instant, before jobs
            // released at the same instant can preempt it: a job whose last step ends at `t`
            // completes at `t`.
            if let Some(r) = machine.running {
                if machine.threads[r].remaining.is_zero() {
                    machine.continue_thread(r);
                    continue;
                }
            }
            if machine.exhaust_running() {
                continue;
            }
            // The horizon is inclusive, as on the scenario machine (bulwark-sim's "Ties", 6):
            // jobs released at the end of the run count as released.
            if machine.release_due() || machine.replenish_due() {
                continue;
            }
            if machine.now >= self.until {
                return None;
            }
            let timer = machine.next_release.min(machine.next_context_event());
            let running = machine.running.map(|r| &machine.threads[r]);
            return Some(Stretch {
                thread: machine.running,
                remaining: running.map_or(Duration::ZERO, |t| t.remaining),
                serial: running.map_or(0, |t| t.stretch),
                timer,
            });
        }
    }

    /// Time passes to `to` (no earlier than now, no later than the end of the run) with the
    /// settled thread running: its work, its context's budget and the priority inversion it
    /// causes are charged.
    pub fn advance(&mut self, to: Instant) {
        let to = to.max(self.machine.now).min(self.until);
        self.machine.advance(to);
    }

    /// Reported timing: `thread`'s `Execute` stretch `serial` is done (its real thread did
    /// the work). A thread preempted after its last instruction but before its report is
    /// continued when next dispatched. Ignored for any stretch but the thread's latest.
    pub fn stretch_done(&mut self, thread: usize, serial: u64) {
        if let Some(t) = self.machine.threads.get_mut(thread) {
            if t.stretch == serial {
                t.remaining = Duration::ZERO;
            }
        }
    }

    /// Ends the run: unfinished jobs are counted, the record handed over.
    pub fn finish(self) -> ComponentOutcome {
        self.machine.finish(self.until)
    }
}

/// Runs `config` from time zero until `options.until`.
pub fn run(
    config: &ComponentSystemConfig,
    options: RunOptions,
) -> Result<ComponentOutcome, ComponentConfigError> {
    let mut kernel = Kernel::new(config, options, Timing::Simulated)?;
    while let Some(stretch) = kernel.settle() {
        let mut next = stretch.timer.min(options.until);
        if stretch.thread.is_some() {
            next = next.min(kernel.now().saturating_add(stretch.remaining));
        }
        kernel.advance(next);
    }
    Ok(kernel.finish())
}

fn validate(config: &ComponentSystemConfig) -> Result<(), ComponentConfigError> {
    let count = config.cpis.len();
    let check = |owner: &str, body: &[Step]| {
        for step in body {
            if let Step::Request(cpi) = *step {
                if cpi >= count {
                    return Err(ComponentConfigError::UnknownCpi {
                        owner: owner.to_string(),
                        cpi,
                        count,
                    });
                }
            }
        }
        Ok(())
    };
    for task in &config.tasks {
        if task.period.is_zero() {
            return Err(ComponentConfigError::ZeroPeriod {
                task: task.name.clone(),
            });
        }
        check(&task.name, &task.body)?;
        if task
            .reservation
            .is_some_and(|r| r.budget.is_zero() || r.replenishments == 0)
        {
            return Err(ComponentConfigError::EmptyReservation {
                task: task.name.clone(),
            });
        }
    }
    for cpi in &config.cpis {
        if cpi.threads == 0 {
            return Err(ComponentConfigError::EmptyPool {
                cpi: cpi.name.clone(),
            });
        }
        check(&cpi.name, &cpi.body)?;
        for (task, body) in &cpi.task_bodies {
            if *task >= config.tasks.len() {
                return Err(ComponentConfigError::UnknownTask {
                    cpi: cpi.name.clone(),
                    task: *task,
                    count: config.tasks.len(),
                });
            }
            check(&cpi.name, body)?;
        }
    }
    Ok(())
}

impl<'a> Machine<'a> {
    fn new(config: &'a ComponentSystemConfig, record_jobs: bool, timing: Timing) -> Machine<'a> {
        let mut threads = Vec::new();
        let mut tasks = Vec::new();
        for (i, task) in config.tasks.iter().enumerate() {
            tasks.push(TaskState {
                thread: threads.len(),
                next_release: Instant::ZERO.saturating_add(task.offset),
                released: 0,
                jobs: VecDeque::new(),
                outcome: ComponentTaskOutcome::default(),
            });
            threads.push(Thread::new(Role::Task(i), task.priority));
        }
        // Room for every request that can be outstanding at once: one per task.
        let capacity = config.tasks.len().max(1);
        let mut cpis = Vec::new();
        let mut pools = Vec::new();
        let mut idle = Vec::new();
        for (c, cpi) in config.cpis.iter().enumerate() {
            let state = Cpi::new(cpi.protocol, cpi.ceiling, cpi.threads, capacity);
            let home = state.waiting_priority();
            let size = if state.is_pooled() { cpi.threads } else { 1 };
            cpis.push(state);
            let ids: Vec<usize> = (0..size)
                .map(|index| {
                    threads.push(Thread::new(Role::Pool { cpi: c, index }, home));
                    threads.len() - 1
                })
                .collect();
            pools.push(ids);
            idle.push((0..size).collect());
        }
        let n = config.cpis.len();
        // Validation refused the reservations `SchedContext::new` cannot build. Task `i`'s
        // context is `ContextId(i)`, bound to its own thread; pool threads have none of their
        // own and run on the contexts donated to them with requests.
        let contexts = Contexts::new(
            config
                .tasks
                .iter()
                .map(|task| task.reservation.and_then(|r| SchedContext::new(r).ok()))
                .collect(),
            threads
                .iter()
                .map(|thread| match thread.role {
                    Role::Task(i) => Some(context_id(i)),
                    Role::Pool { .. } => None,
                })
                .collect(),
        );
        Machine {
            config,
            costs: match timing {
                Timing::Simulated => config.costs,
                Timing::Reported => ProtocolCosts::ZERO,
            },
            timing,
            now: Instant::ZERO,
            scheduler: Self::scheduler_for(&threads),
            decided: false,
            threads,
            running: None,
            last_dispatched: None,
            objects: KernelObjects::new(cpis, Vec::new(), ObjectStore::default())
                .with_contexts(contexts),
            pools,
            idle,
            overflow: vec![VecDeque::new(); n],
            fixed_callers: vec![VecDeque::new(); n],
            next_release: earliest_release(&tasks),
            tasks,
            region: None,
            ran_on: None,
            work: Work::default(),
            outcome: ComponentOutcome::default(),
            record_jobs,
            trace: None,
            open: OpenSlices::default(),
        }
    }

    // ----- scheduling ------------------------------------------------------------------------

    /// Fixed priority for `threads`, each added blocked at its home priority.
    fn scheduler_for(threads: &[Thread]) -> CoreScheduler<FixedPriority> {
        let mut scheduler = FixedPriority::with_capacity(threads.len());
        for (t, thread) in threads.iter().enumerate() {
            let added = scheduler.add_task(task_id(t), thread.home);
            debug_assert!(added.is_ok(), "thread ids are distinct and within capacity");
        }
        CoreScheduler::new(scheduler)
    }

    /// The engine keeps every thread's state and calls the scheduler only in the states
    /// each call accepts, so a refusal is a bug here: tests fail on it in debug builds, and
    /// every build counts it with the protocol errors.
    fn tell_scheduler(&mut self, event: Event) {
        let result = self.scheduler.handle(self.now, event, &mut self.work);
        debug_assert_eq!(result, Ok(()), "the scheduler refused {event:?}");
        self.decided = false;
        if result.is_err() {
            self.outcome.protocol_errors += 1;
        }
    }

    /// Picks the thread to run: the running one keeps the core unless a strictly higher
    /// priority is ready (equal priorities run to completion); a preempted thread stays at
    /// the head of its priority (the scheduler's `SCHED_FIFO` rule).
    fn dispatch(&mut self) {
        if let Some(r) = self.running {
            // Algorithm 2, line 6: inside its context's non-preemptive region the dispatched
            // thread keeps the core against every thread that outranks it only by a wake-up
            // the region defers.
            if self.in_region(r) && self.defers_all_above(r) {
                return;
            }
        }
        if self.decided {
            return;
        }
        self.decided = true;
        // A cluster of one, given its one-entry slice, cannot refuse.
        let decision = self.scheduler.decide(self.now, &mut self.work);
        debug_assert!(decision.is_ok(), "one core, one decision");
        let next = decision.unwrap_or_default().next.map(TaskId::index);
        if next == self.running {
            return;
        }
        self.running = next;
        if let Some(t) = next {
            self.threads[t].timer_woken = None;
            if self.last_dispatched != Some(t) {
                self.outcome.context_switches += 1;
                let cost = self.costs.context_switch;
                let thread = &mut self.threads[t];
                thread.remaining = thread.remaining.saturating_add(cost);
            }
            self.last_dispatched = Some(t);
            // Algorithm 2, line 5: if tau_p != tau_n then x_n <- t_now. The reservation is
            // the context, not the thread: a thread of the context that ran last (a server
            // taking its caller's context with a request, the caller taking it back with
            // the reply) continues its region; a thread of another context, or of any after
            // an idle stretch, starts a region of its own.
            let context = self.context_of(t);
            if context.is_none() || context != self.ran_on {
                let now = self.now;
                self.region = context.and_then(|i| {
                    let eta = self.objects.context(context_id(i))?.non_preemptive();
                    (!eta.is_zero()).then(|| Region {
                        context: i,
                        start: now,
                        end: now.saturating_add(eta),
                    })
                });
            }
        }
    }

    /// True while thread `t` runs inside its context's non-preemptive region.
    fn in_region(&self, t: usize) -> bool {
        self.region.is_some_and(|region| {
            self.context_of(t) == Some(region.context) && self.now < region.end
        })
    }

    /// True when the region defers every ready thread that outranks `r`. Section III-F: a
    /// region defers "any higher-priority activations and replenishments until the end of
    /// the non-preemptive region", that is, threads a timer made ready since it started. A
    /// thread that was ready before (which a thread raised to a ceiling was dispatched ahead
    /// of), or that `r`'s own call or reply woke, is no activation: once it outranks `r`
    /// (when `r`'s priority drops at the end of its protocol steps) it preempts as usual.
    fn defers_all_above(&self, r: usize) -> bool {
        let Some(region) = self.region else {
            return false;
        };
        let priority = self.threads[r].effective();
        self.threads.iter().enumerate().all(|(t, thread)| {
            t == r
                || thread.blocked
                || thread.throttled
                || thread.effective() <= priority
                || thread.timer_woken.is_some_and(|at| at >= region.start)
        })
    }

    /// A timer (a job's release, a context's replenishment) makes thread `t` ready: a wake-up
    /// a non-preemptive region defers.
    fn wake_by_timer(&mut self, t: usize) {
        self.make_ready(t);
        self.threads[t].timer_woken = Some(self.now);
    }

    fn make_ready(&mut self, t: usize) {
        self.threads[t].timer_woken = None;
        let depleted = self
            .context_of(t)
            .and_then(|i| self.objects.context(context_id(i)))
            .is_some_and(SchedContext::is_depleted);
        let thread = &mut self.threads[t];
        thread.blocked = false;
        if depleted {
            // Algorithm 1, lines 7-9: no budget, so it waits for the replenishment.
            thread.throttled = true;
            return;
        }
        if self.running != Some(t) {
            self.tell_scheduler(Event::Activate {
                task: task_id(t),
                wake: Wake::SameJob,
            });
        }
    }

    fn block(&mut self, t: usize) {
        let thread = &mut self.threads[t];
        // Only a runnable thread is ready in the scheduler.
        let ready = !thread.blocked && !thread.throttled;
        thread.blocked = true;
        thread.throttled = false;
        if ready {
            self.tell_scheduler(Event::Block { task: task_id(t) });
        }
        if self.running == Some(t) {
            self.running = None;
        }
    }

    /// `seL4_TCB_SetPriority`: a queued thread moves to the tail of its new priority.
    fn set_priority(&mut self, t: usize, priority: Priority) {
        self.threads[t].priority = priority;
        self.requeue(t);
    }

    fn set_in_protocol(&mut self, t: usize, in_protocol: bool) {
        self.threads[t].in_protocol = in_protocol;
        self.requeue(t);
    }

    /// `seL4_TCB_SetPriority` with the thread's effective priority: a queued thread moves to
    /// the tail of it, the running one stays at its head.
    fn requeue(&mut self, t: usize) {
        let priority = self.threads[t].effective();
        self.tell_scheduler(Event::SetPriority {
            task: task_id(t),
            priority,
        });
    }

    // ----- time ------------------------------------------------------------------------------

    /// Runs the running thread up to `to`, charging priority inversion to every pending job
    /// of a strictly higher-priority task.
    fn advance(&mut self, to: Instant) {
        let dt = to.saturating_duration_since(self.now);
        if let (Some(r), false) = (self.running, dt.is_zero()) {
            self.record_slice(r, to);
        }
        if !dt.is_zero() {
            self.ran_on = self.running.and_then(|r| self.context_of(r));
        }
        if self.running.is_none() && !dt.is_zero() {
            // The core idled: whoever runs next is switched to, as from the idle thread.
            self.last_dispatched = None;
        }
        if let Some(r) = self.running {
            if let Some(i) = self.context_of(r) {
                if let Some(context) = self.objects.context_mut(context_id(i)) {
                    context.charge(to, dt, &mut self.work);
                }
            }
            let thread = &mut self.threads[r];
            if self.timing == Timing::Simulated {
                thread.remaining = thread.remaining.saturating_sub(dt);
            }
            self.outcome.busy = self.outcome.busy.saturating_add(dt);
            if let Some((owner, seq)) = self.owner(r) {
                let p = self.config.tasks[owner].priority;
                for (i, task) in self.tasks.iter_mut().enumerate() {
                    if self.config.tasks[i].priority <= p {
                        continue;
                    }
                    for job in task.jobs.iter_mut() {
                        job.inversion = job.inversion.saturating_add(dt);
                        if !job.lower.contains(&(owner, seq)) {
                            job.lower.push((owner, seq));
                        }
                    }
                }
            }
        }
        self.now = to;
    }

    /// Thread `r` ran from now to `to`: a piece of the task whose job it worked for (a pool
    /// thread's time is its caller's task's), kernel time while it ran protocol steps.
    fn record_slice(&mut self, r: usize, to: Instant) {
        let owner = self.owner(r).map(|(task, _)| task_id(task));
        let Some(trace) = self.trace.as_mut() else {
            return;
        };
        let kind = if self.threads[r].in_protocol || owner.is_none() {
            SliceKind::Kernel
        } else {
            SliceKind::Task
        };
        let piece = Slice {
            core: 0,
            task: owner,
            kind,
            start: self.now,
            end: to,
        };
        trace.slices.extend(self.open.push(&piece));
    }

    fn mark(&mut self, task: usize, kind: MarkKind, at: Instant, job: u64) {
        if let Some(trace) = self.trace.as_mut() {
            trace.marks.push(Mark {
                task: task_id(task),
                core: 0,
                kind,
                at,
                job,
            });
        }
    }

    /// The task, and its job, the thread works for.
    fn owner(&self, t: usize) -> Option<(usize, u64)> {
        let task = match self.threads[t].role {
            Role::Task(i) => i,
            Role::Pool { .. } => self.threads[t].serving?.request.requestor.index(),
        };
        let seq = self.tasks[task].jobs.front()?.seq;
        Some((task, seq))
    }

    /// The task whose scheduling context thread `t` runs on, if that task has one: its own
    /// task for a control thread; for a serving pool thread, the request's originator, whose
    /// context came with the request (donated along every nested request).
    fn context_of(&self, t: usize) -> Option<usize> {
        let held = self.objects.context_of(task_id(t))?;
        Some(held.0 as usize)
    }

    /// Thread `to` takes a request from thread `from`: it runs on `from`'s context until it
    /// replies. The machine names only its own threads, so the kernel cannot refuse.
    fn donate(&mut self, from: usize, to: usize) {
        let donate = Donate {
            from: task_id(from),
            to: task_id(to),
        };
        let donated = self.objects.call(donate, &mut self.work);
        debug_assert!(donated.is_ok(), "both threads are the machine's");
    }

    /// Thread `t` is done with the request it served: the context goes back with the reply
    /// (a pool thread has none of its own). The machine names only its own threads, so the
    /// kernel cannot refuse.
    fn give_back(&mut self, t: usize) {
        let returned = self
            .objects
            .call(Return { thread: task_id(t) }, &mut self.work);
        debug_assert!(returned.is_ok(), "the thread is the machine's");
    }

    /// The running thread's context is out of budget at now: off the core until the
    /// replenishment (Algorithm 1, lines 7-9). True if that happened.
    fn exhaust_running(&mut self) -> bool {
        let Some(r) = self.running else {
            return false;
        };
        let Some(i) = self.context_of(r) else {
            return false;
        };
        let now = self.now;
        let Some(context) = self.objects.context_mut(context_id(i)) else {
            return false;
        };
        if context.charge(now, Duration::ZERO, &mut self.work) {
            return false;
        }
        context.deplete();
        self.tasks[i].outcome.budget_exhaustions += 1;
        self.threads[r].throttled = true;
        self.running = None;
        self.tell_scheduler(Event::Block { task: task_id(r) });
        true
    }

    /// Gives back the budget of every depleted context whose replenishment is due (Algorithm
    /// 3), and its threads the run queue; true if there was one.
    fn replenish_due(&mut self) -> bool {
        let mut replenished = false;
        for index in 0..self.objects.context_ids().len() {
            let i = self.objects.context_ids()[index].0 as usize;
            let now = self.now;
            let Some(context) = self.objects.context_mut(context_id(i)) else {
                continue;
            };
            if !context.is_depleted() || context.replenishment_time() > now {
                continue;
            }
            context.activate(now, &mut self.work);
            replenished = true;
            for t in 0..self.threads.len() {
                if self.threads[t].throttled && self.context_of(t) == Some(i) {
                    self.threads[t].throttled = false;
                    self.wake_by_timer(t);
                }
            }
        }
        replenished
    }

    /// The next instant a context changes the schedule: the running thread's depletion,
    /// the end of its non-preemptive region, a depleted context's replenishment.
    fn next_context_event(&mut self) -> Instant {
        let mut next = Instant::NEVER;
        if let Some(r) = self.running {
            if let Some(i) = self.context_of(r) {
                if let Some(context) = self.objects.context(context_id(i)) {
                    next = next.min(context.depletion_time(self.now, &mut self.work));
                }
            }
            if let Some(region) = self.region.filter(|_| self.in_region(r)) {
                next = next.min(region.end);
            }
        }
        for &id in self.objects.context_ids() {
            let Some(context) = self.objects.context(id) else {
                continue;
            };
            if context.is_depleted() {
                next = next.min(context.replenishment_time());
            }
        }
        next
    }

    /// Releases every job due by now; true if there was one.
    fn release_due(&mut self) -> bool {
        if self.next_release > self.now {
            return false;
        }
        let mut released = false;
        for i in 0..self.tasks.len() {
            while self.tasks[i].next_release <= self.now {
                let period = self.config.tasks[i].period;
                let task = &mut self.tasks[i];
                let release = task.next_release;
                task.jobs.push_back(Job {
                    release,
                    seq: task.released,
                    inversion: Duration::ZERO,
                    lower: Vec::new(),
                });
                task.released += 1;
                task.outcome.jobs += 1;
                let seq = task.released - 1;
                released = true;
                task.next_release = release.checked_add(period).unwrap_or(Instant::NEVER);
                if task.jobs.len() == 1 {
                    let t = task.thread;
                    // Algorithm 3: the context activates with its task's job.
                    if let Some(context) = self.objects.context_mut(context_id(i)) {
                        context.activate(self.now, &mut self.work);
                    }
                    self.threads[t].pc = 0;
                    self.threads[t].cont = Cont::Step;
                    self.wake_by_timer(t);
                }
                self.mark(i, MarkKind::Release, release, seq);
            }
        }
        self.next_release = earliest_release(&self.tasks);
        released
    }

    // ----- threads ---------------------------------------------------------------------------

    /// The running thread `r` finished its stretch: take its next action.
    fn continue_thread(&mut self, r: usize) {
        match self.threads[r].cont {
            Cont::Step => self.step(r),
            Cont::StepDone => {
                self.threads[r].pc += 1;
                self.step(r);
            }
            Cont::EntryDone { waiting } => {
                self.set_in_protocol(r, false);
                if waiting {
                    // Fig. 4 step 6: wait for the signal.
                    self.block(r);
                } else {
                    // Out of the protocol steps, down to the request's priority (Fig. 4 step
                    // 13, Fig. 5 step 5): the kernel reschedules here, so the procedure starts
                    // only when nothing higher is ready.
                    self.threads[r].pc = 0;
                    self.threads[r].cont = Cont::Step;
                }
            }
            Cont::ExitDone => self.exit_done(r),
            Cont::AfterReply => {
                if let Role::Pool { cpi, index } = self.threads[r].role {
                    let reply = NestedReply {
                        cpi: CpiId(cpi as u32),
                        thread: index,
                    };
                    let effects = self.objects.call(reply, &mut self.work);
                    self.apply_or_count(cpi, effects);
                }
                // Back at the (inherited) priority (Fig. 4 step 20, Fig. 5 step 12): a
                // reschedule point, as for any priority drop.
                self.threads[r].cont = Cont::StepDone;
            }
        }
    }

    fn body(&self, t: usize) -> &'a [Step] {
        let config = self.config;
        match self.threads[t].role {
            Role::Task(i) => &config.tasks[i].body,
            Role::Pool { cpi, .. } => match self.threads[t].serving {
                Some(s) => config.cpis[cpi].body_for(s.request.requestor.index()),
                None => &[],
            },
        }
    }

    /// Runs thread `r`'s body from its `pc` up to the next stretch of time or request.
    fn step(&mut self, r: usize) {
        let body = self.body(r);
        loop {
            let pc = self.threads[r].pc;
            match body.get(pc) {
                None => return self.body_done(r),
                Some(Step::Execute(d)) if d.is_zero() => self.threads[r].pc += 1,
                Some(Step::Execute(d)) => {
                    self.threads[r].remaining = *d;
                    self.threads[r].stretch += 1;
                    self.threads[r].cont = Cont::StepDone;
                    return;
                }
                Some(Step::Request(c)) => return self.call(r, *c),
            }
        }
    }

    fn body_done(&mut self, r: usize) {
        match self.threads[r].role {
            Role::Task(i) => self.job_done(i, r),
            Role::Pool { cpi, index } => {
                let cost = self.reply_cost(cpi, index, r);
                let thread = &mut self.threads[r];
                thread.remaining = cost;
                thread.cont = Cont::ExitDone;
                self.set_in_protocol(r, true);
            }
        }
    }

    fn job_done(&mut self, i: usize, r: usize) {
        let now = self.now;
        let period = self.config.tasks[i].period;
        let record_jobs = self.record_jobs;
        let task = &mut self.tasks[i];
        let mut marks = Vec::new();
        if let Some(job) = task.jobs.pop_front() {
            let out = &mut task.outcome;
            let response = now.saturating_duration_since(job.release);
            out.max_response = out.max_response.max(response);
            marks.push((MarkKind::Completion, now, job.seq));
            if response > period {
                out.misses += 1;
                // Stamped at the deadline, as the scenario machine stamps a miss.
                marks.push((
                    MarkKind::DeadlineMiss,
                    job.release.saturating_add(period),
                    job.seq,
                ));
            }
            out.max_inversion = out.max_inversion.max(job.inversion);
            out.max_lower_jobs = out.max_lower_jobs.max(job.lower.len() as u32);
            if record_jobs {
                out.job_records.push(ComponentJob {
                    release: job.release,
                    completion: Some(now),
                    inversion: job.inversion,
                    lower_jobs: job.lower.len() as u32,
                });
            }
        }
        let idle = task.jobs.is_empty();
        for (kind, at, seq) in marks {
            self.mark(i, kind, at, seq);
        }
        if idle {
            // Algorithm 1, lines 10-13: the context suspends with its task.
            if let Some(context) = self.objects.context_mut(context_id(i)) {
                context.suspend(now, &mut self.work);
            }
            self.block(r);
        } else {
            self.threads[r].pc = 0;
            self.threads[r].cont = Cont::Step;
        }
    }

    /// Thread `r` sends a request to CPI `c` and waits for the reply.
    fn call(&mut self, r: usize, c: usize) {
        let sent = match self.threads[r].role {
            Role::Task(i) => Ok((
                Request {
                    priority: self.config.tasks[i].priority,
                    requestor: TaskId(i as u32),
                },
                false,
            )),
            Role::Pool { cpi, index } => {
                let from_pip = self.cpi(cpi).protocol() == CpiProtocol::Inherited;
                let send = SendNested {
                    cpi: CpiId(cpi as u32),
                    thread: index,
                    downstream: CpiId(c as u32),
                };
                let sent = self.objects.call(send, &mut self.work);
                sent.map(|(request, effects)| {
                    let mut extra = Duration::ZERO;
                    self.apply(cpi, effects, &mut extra);
                    (request, from_pip)
                })
            }
        };
        self.block(r);
        match sent {
            Ok((request, from_pip)) => self.deliver(c, request, r, from_pip),
            Err(_) => self.outcome.protocol_errors += 1,
        }
    }

    /// A request reaches CPI `c`'s endpoint: a waiting pool thread takes it and runs the
    /// protocol's call steps at the ceiling.
    fn deliver(&mut self, c: usize, request: Request, caller: usize, from_pip: bool) {
        let costs = self.costs;
        let serving = Serving {
            request,
            caller,
            from_pip,
        };
        let mut extra = Duration::ZERO;
        let idle = self.idle[c].front().copied();
        if self.cpi(c).is_pooled() && idle.is_none() {
            return self.queue_overflow(c, request, caller, from_pip);
        }
        let protocol = self.cpi(c).protocol();
        let invoke = InvokeCpi {
            cpi: CpiId(c as u32),
            idle,
            request,
        };
        match self.objects.call(invoke, &mut self.work) {
            Ok(Invoked::Served {
                thread: k,
                effects,
                waits,
                contended,
            }) => {
                self.idle[c].retain(|&i| i != k);
                let t = self.pools[c][k as usize];
                self.threads[t].serving = Some(serving);
                self.donate(caller, t);
                self.apply(c, effects, &mut extra);
                let call = costs.row(protocol, from_pip, contended).call;
                self.start_entry(t, call.saturating_add(extra), waits);
            }
            // Queued on the endpoint behind the request being served (FIFO).
            Ok(Invoked::Queued) => self.fixed_callers[c].push_back((caller, from_pip)),
            Err(_) => self.outcome.protocol_errors += 1,
        }
    }

    fn queue_overflow(&mut self, c: usize, request: Request, caller: usize, from_pip: bool) {
        self.outcome.pool_exhausted += 1;
        self.overflow[c].push_back((request, caller, from_pip));
    }

    fn start_entry(&mut self, t: usize, cost: Duration, waiting: bool) {
        let thread = &mut self.threads[t];
        thread.remaining = cost;
        thread.cont = Cont::EntryDone { waiting };
        self.set_in_protocol(t, true);
        self.make_ready(t);
    }

    fn reply_cost(&self, c: usize, index: u32, t: usize) -> Duration {
        let costs = self.costs;
        let from_pip = self.threads[t].serving.is_some_and(|s| s.from_pip);
        let cpi = self.cpi(c);
        costs
            .row(cpi.protocol(), from_pip, cpi.reply_hands_over(index))
            .reply
    }

    /// The reply's protocol steps are done: release the CPI, reply to the caller, and wait
    /// for (or take) the next request.
    fn exit_done(&mut self, r: usize) {
        let Role::Pool { cpi: c, index } = self.threads[r].role else {
            return;
        };
        let serving = self.threads[r].serving.take();
        self.give_back(r);
        let mut next_fixed = None;
        let reply = ReplyCpi {
            cpi: CpiId(c as u32),
            thread: index,
        };
        match self.objects.call(reply, &mut self.work) {
            // A fixed CPI's one effect then wakes this very thread for the queued request,
            // which it takes below.
            Ok(Replied {
                next: Some(next), ..
            }) => next_fixed = Some(next),
            Ok(Replied { effects, .. }) => self.apply_or_count(c, Ok(effects)),
            Err(_) => self.outcome.protocol_errors += 1,
        }
        if let Some(s) = serving {
            self.reply(s.caller);
        }
        if let Some(request) = next_fixed {
            // The fixed thread takes the next queued request at once.
            let (caller, from_pip) = self.fixed_callers[c].pop_front().unwrap_or((r, false));
            self.threads[r].serving = Some(Serving {
                request,
                caller,
                from_pip,
            });
            self.donate(caller, r);
            let cost = self.costs.fixed.call;
            let thread = &mut self.threads[r];
            thread.remaining = cost;
            thread.cont = Cont::EntryDone { waiting: false };
            return;
        }
        self.set_in_protocol(r, false);
        self.block(r);
        self.idle[c].push_back(index);
        if let Some((request, caller, from_pip)) = self.overflow[c].pop_front() {
            self.deliver(c, request, caller, from_pip);
        }
    }

    /// The reply reaches the thread that sent the request.
    fn reply(&mut self, caller: usize) {
        let thread = &mut self.threads[caller];
        thread.cont = Cont::AfterReply;
        thread.remaining = Duration::ZERO;
        self.make_ready(caller);
    }

    // ----- effects ---------------------------------------------------------------------------

    fn apply_or_count(&mut self, c: usize, effects: Result<Effects, SyscallError>) {
        match effects {
            Ok(effects) => {
                let mut extra = Duration::ZERO;
                self.apply(c, effects, &mut extra);
            }
            Err(_) => self.outcome.protocol_errors += 1,
        }
    }

    /// CPI `c`, to read. The machine names only the CPIs it configured, one per lowered CPI.
    fn cpi(&self, c: usize) -> &Cpi {
        self.objects
            .cpi(CpiId(c as u32))
            .expect("the machine names only the CPIs it configured")
    }

    /// The machine's thread for thread `index` of CPI `c`'s pool.
    fn pool_thread(&self, c: usize, index: u32) -> Option<usize> {
        self.pools[c].get(index as usize).copied()
    }

    /// Carries out the effects of a step of CPI `c`; `extra` collects the cost of the `nest`
    /// hops, which the thread that caused them spends.
    fn apply(&mut self, c: usize, effects: Effects, extra: &mut Duration) {
        for effect in effects.iter() {
            match effect {
                Effect::SetPriority { thread, priority } => match self.pool_thread(c, thread) {
                    Some(t) => self.set_priority(t, priority),
                    None => self.outcome.protocol_errors += 1,
                },
                Effect::Wake { thread } => match self.pool_thread(c, thread) {
                    Some(t) => self.wake_holder(t),
                    None => self.outcome.protocol_errors += 1,
                },
                Effect::Nest {
                    cpi,
                    priority,
                    requestor,
                } => {
                    let d = cpi.0 as usize;
                    let costs = self.costs.nest;
                    let Some(downstream) = self.objects.cpi(cpi) else {
                        // No effect is dropped unseen: a hop to no CPI is an error.
                        self.outcome.protocol_errors += 1;
                        continue;
                    };
                    let hop = match downstream.protocol() {
                        CpiProtocol::Inherited => costs.to_inherited,
                        _ => costs.to_propagated,
                    };
                    let nest = Nest {
                        cpi,
                        priority,
                        requestor,
                    };
                    // Nested inheritance stops at a fixed CPI (section 4.2): no hop.
                    if let Ok(Some(more)) = self.objects.call(nest, &mut self.work) {
                        *extra = extra.saturating_add(hop);
                        self.apply(d, more, extra);
                    }
                }
            }
        }
    }

    /// A waiter of an inherited CPI got the lock: it wakes at the ceiling, where it runs Fig.
    /// 4 steps 7-9 itself (section 4.2: "the signaled thread ... proceed[s] through steps
    /// (7)-(9)" at the priority ceiling), then drops to its request's priority to run the
    /// procedure, as a thread leaving its call steps does.
    fn wake_holder(&mut self, t: usize) {
        let thread = &mut self.threads[t];
        if thread.cont == (Cont::EntryDone { waiting: true }) && !thread.blocked {
            // Still spending its call steps: it will not wait after all.
            thread.cont = Cont::EntryDone { waiting: false };
            return;
        }
        thread.cont = Cont::EntryDone { waiting: false };
        thread.remaining = Duration::ZERO;
        self.set_in_protocol(t, true);
        self.make_ready(t);
    }

    // ----- results ---------------------------------------------------------------------------

    fn finish(mut self, until: Instant) -> ComponentOutcome {
        for (i, task) in self.tasks.iter_mut().enumerate() {
            let period = self.config.tasks[i].period;
            for job in &task.jobs {
                let deadline = job.release.saturating_add(period);
                if deadline <= until {
                    task.outcome.misses += 1;
                    if let Some(trace) = self.trace.as_mut() {
                        trace.marks.push(Mark {
                            task: task_id(i),
                            core: 0,
                            kind: MarkKind::DeadlineMiss,
                            at: deadline,
                            job: job.seq,
                        });
                    }
                }
                task.outcome.max_inversion = task.outcome.max_inversion.max(job.inversion);
                task.outcome.max_lower_jobs =
                    task.outcome.max_lower_jobs.max(job.lower.len() as u32);
                if self.record_jobs {
                    task.outcome.job_records.push(ComponentJob {
                        release: job.release,
                        completion: None,
                        inversion: job.inversion,
                        lower_jobs: job.lower.len() as u32,
                    });
                }
            }
        }
        self.outcome.until = until;
        if let Some(trace) = self.trace.as_mut() {
            trace.slices.extend(self.open.drain());
        }
        self.outcome.trace = self.trace;
        self.outcome.tasks = self.tasks.into_iter().map(|t| t.outcome).collect();
        self.outcome
    }
}

/// The earliest of `tasks`' next releases.
fn earliest_release(tasks: &[TaskState]) -> Instant {
    tasks
        .iter()
        .map(|t| t.next_release)
        .min()
        .unwrap_or(Instant::NEVER)
}

/// Task `i`'s scheduling context.
fn context_id(i: usize) -> ContextId {
    ContextId(i as u32)
}

fn task_id(thread: usize) -> TaskId {
    TaskId(thread as u32)
}
