//! The one machine's component systems (`bulwark_sim::components::run`, which lowers them to
//! a scenario) against an independent reference: random systems of two to four
//! tasks calling one to three CPIs (priority propagation, PIP with nesting, IPCP, NPCS) on
//! one core, with zero protocol costs. Every job's release and completion, every task's
//! misses and worst priority inversion (time and distinct lower jobs), the core's busy time
//! and its context switches must be those of a plain millisecond-by-millisecond simulation
//! written here from the CAmkES paper (sections 4.1-4.3, Figs. 4 and 5) and the rules the
//! machine documents (`machine/cpis.rs`, `lib.rs` "Ties"), sharing no code with
//! `bulwark_sim` or `bulwark_core::ipc`.
//!
//! The reference's rules:
//!
//! - **Threads.** Each task has a control thread at its priority; each CPI a pool of threads
//!   waiting at its ceiling (one thread at the ceiling for IPCP, at 255 for NPCS). A request
//!   carries a priority and the originating task: a control thread's priority; for a
//!   propagated or PIP server its current (possibly inherited) priority (Fig. 5 step 8,
//!   Fig. 4 step 16); for a fixed server its fixed priority (section 4.1).
//! - **Scheduling.** One FIFO list per priority; the head of the highest non-empty list runs.
//!   A thread that becomes ready joins the tail of its priority. A TCB priority change
//!   (`seL4_TCB_SetPriority`, also when the priority is unchanged) moves a ready thread to the
//!   tail of its new priority, except the running thread, which goes to the head. A preempted
//!   thread keeps its place, the head. So equal priorities run to completion, first come
//!   first served, thread by thread: a request's server and a caller woken by its reply join
//!   the tail like any other thread.
//! - **Protocol steps** run at the CPI's ceiling and take no time. A request is delivered at
//!   once: the protocol's state changes then (the lock is looked at, inheritance and `nest`
//!   happen), and a pool thread wakes at the ceiling to run the call steps; once dispatched it
//!   drops to its serving priority (the running thread: head of that list), or blocks to wait
//!   for the lock. A server's own nested request lifts it to the ceiling (Fig. 4 step 15,
//!   Fig. 5 step 7); when answered it wakes and, once dispatched, drops to its serving
//!   priority (steps 19-20, 11-12). When the procedure ends the thread runs the reply steps
//!   at the ceiling, then blocks; the caller wakes.
//! - **Propagation** (Fig. 5): each request on its own pool thread at the request's priority.
//! - **PIP** (Fig. 4): one lock. A request finding it held waits; the holder inherits the
//!   request's priority if higher (steps 2-4; a holder waiting downstream keeps its TCB at
//!   the ceiling until step 20 drops it to the inherited priority), and if the holder waits
//!   on a nested request the priority is pushed down the chain with `nest` (step 5): a propagated CPI raises the node of the
//!   originating task (its thread if it runs its procedure, else onward); a PIP CPI raises
//!   the waiting request of that task (keeping its arrival) and then its holder as in steps
//!   2-5; a fixed CPI stops the chain. At the end of the procedure the lock goes to the
//!   waiter with the highest priority, the earliest arrival among equals (the notification
//!   manager); it is woken at the ceiling before the finisher replies, and drops to its
//!   request's priority once dispatched (steps 7-13).
//! - **IPCP / NPCS** (section 4.1): one thread at the ceiling / 255; requests queue on the
//!   endpoint first come first served; the thread takes the next at once after replying.
//! - **Time.** Jobs are released at `offset + k * period`; a job released while its
//!   predecessor is pending waits for it, and its thread goes on in its place when that
//!   predecessor completes (also when the release is at that very instant). At an instant,
//!   the thread whose stretch ended then takes its next action first (a call, a protocol
//!   step, the end of its job: so a job whose last step ends at `t` completes at `t`); then
//!   the instant's releases, all before anything is dispatched (the machine's scheduler makes
//!   them in the decision of that first kernel entry; lib.rs, "Ties", 1); then dispatches and
//!   every later zero-time action. Releases at one instant wake their threads in the order
//!   their timers were armed: the first releases in task order, then each task's at the
//!   completion that left it waiting ("Ties", 2). The horizon is inclusive ("Ties", 6).
//! - **Measures.** A job misses when it completes after `release + period`, or is pending
//!   with that deadline at or before the horizon. Its priority inversion is the time during
//!   which it was pending and the core ran work of a strictly lower-priority task (that
//!   task's control thread, or a server on its request); the lower jobs are the distinct
//!   jobs that work was for (the owner task's oldest pending job). A context switch is a
//!   dispatch of a thread other than the last one dispatched, or any dispatch after the core
//!   idled.
//!
//! Two rules follow section 4.2's statement that every protocol step but the procedure runs
//! at the ceiling: a PIP holder blocked on its nested request stays at the ceiling when it
//! inherits (step 4 leaves its TCB alone until step 20), and the waiter the notification
//! manager wakes takes steps 7-13 itself, at the ceiling. The machine used to read both the
//! other way (hand-worked cases below show where that differs).
//!
//! Random systems: 2-4 tasks at priorities 1-4, ties drawn on purpose, periods 3-40 ms,
//! offsets 0-10 ms, overloads allowed; 1-3 CPIs of any protocol, calling only later CPIs;
//! ceilings the configuration analyzer's or one above it; horizons 100-200 ms. Two more
//! generators force nesting below a PIP CPI, where `nest` matters.
//!
//! Not covered: protocol costs and context-switch costs (each makes the protocol steps take
//! time), reservations and non-preemptive regions, per-task CPI bodies (`task_bodies`),
//! pools too small (`pool_exhausted`), ceilings below the priority of a request that can
//! reach the CPI, request loops, and reported timing. Times are whole milliseconds.

use std::collections::VecDeque;

use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::components::{
    run, ComponentOutcome, ComponentSystemConfig, CpiProtocol, LoweredCpi, LoweredTask,
    ProtocolCosts, RunOptions, Step,
};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// NPCS runs at the highest priority (255 in seL4).
const NPCS_PRIORITY: u8 = u8::MAX;

// ----- the system, in milliseconds ------------------------------------------------------------

/// One step of a body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Execute(u64),
    Request(usize),
}

#[derive(Clone, Debug)]
struct TaskSpec {
    priority: u8,
    period: u64,
    offset: u64,
    body: Vec<Action>,
}

#[derive(Clone, Debug)]
struct CpiSpec {
    protocol: CpiProtocol,
    ceiling: u8,
    body: Vec<Action>,
}

#[derive(Clone, Debug)]
struct System {
    tasks: Vec<TaskSpec>,
    cpis: Vec<CpiSpec>,
    horizon: u64,
}

/// One job: release, completion, inversion (all in ms) and distinct lower jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct JobRow {
    release: u64,
    completion: Option<u64>,
    inversion: u64,
    lower_jobs: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct TaskRow {
    jobs: Vec<JobRow>,
    misses: u64,
    max_inversion: u64,
    max_lower_jobs: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Outcome {
    tasks: Vec<TaskRow>,
    busy: u64,
    context_switches: u64,
}

// ----- the reference -------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Control(usize),
    Server(usize),
}

/// What a thread does next, once it has no time left in an `Execute`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// Go on with its body at `pc`.
    Body,
    /// The call steps of a request (Fig. 4 1-13, Fig. 5 1-5), then wait for the lock or run
    /// the procedure.
    CallSteps { wait: bool },
    /// The reply steps (Fig. 4 21-24, Fig. 5 13-15).
    ReplySteps,
    /// The reply to its own request came back (Fig. 4 19-20, Fig. 5 11-12).
    Answered,
}

/// A request being served: its priority and originating task, and the thread to answer.
#[derive(Clone, Copy, Debug)]
struct Served {
    priority: u8,
    requestor: usize,
    caller: usize,
}

#[derive(Clone, Debug)]
struct Thread {
    role: Role,
    /// Where it waits: its task's priority, or its CPI's ceiling.
    home: u8,
    /// Its TCB priority, as the protocols set it.
    tcb: u8,
    /// Running protocol steps, at the ceiling.
    in_steps: bool,
    ready: bool,
    next: Next,
    pc: usize,
    /// What is left of the `Execute` it is in, in ms.
    remaining: u64,
    serving: Option<Served>,
}

impl Thread {
    fn scheduled_at(&self) -> u8 {
        if self.in_steps {
            self.home
        } else {
            self.tcb
        }
    }
}

/// A propagated CPI's thread-manager node (Fig. 5): the thread serving a task's request,
/// the priority it serves at, and the downstream CPI it waits on.
#[derive(Clone, Copy, Debug)]
struct Node {
    thread: usize,
    priority: u8,
    requestor: usize,
    downstream: Option<usize>,
}

/// A thread waiting for a PIP lock in the notification manager.
#[derive(Clone, Copy, Debug)]
struct Waiter {
    thread: usize,
    priority: u8,
    requestor: usize,
    arrival: u64,
}

#[derive(Clone, Debug)]
enum Protocol {
    Propagation {
        nodes: Vec<Node>,
    },
    Pip {
        holder: Option<usize>,
        inherited: u8,
        requestor: usize,
        /// The `nest` pointer: the CPI the holder's nested request waits on.
        downstream: Option<usize>,
        waiters: Vec<Waiter>,
        arrivals: u64,
    },
    Fixed {
        busy: bool,
        queue: VecDeque<Served>,
    },
}

#[derive(Clone, Debug)]
struct PendingJob {
    release: u64,
    seq: u64,
    inversion: u64,
    lower: Vec<(usize, u64)>,
}

#[derive(Clone, Debug)]
struct TaskRun {
    thread: usize,
    next_release: u64,
    released: u64,
    pending: VecDeque<PendingJob>,
    rows: Vec<JobRow>,
    /// When its next release's timer was armed (a stamp): releases due at one instant wake
    /// their threads in this order.
    armed: u64,
}

impl TaskRun {
    /// Its next job is released: pending from its planned release.
    fn release_next(&mut self, period: u64) {
        self.pending.push_back(PendingJob {
            release: self.next_release,
            seq: self.released,
            inversion: 0,
            lower: Vec::new(),
        });
        self.released += 1;
        self.next_release += period;
    }
}

struct Reference<'a> {
    system: &'a System,
    now: u64,
    threads: Vec<Thread>,
    /// One FIFO list per priority.
    lists: Vec<VecDeque<usize>>,
    running: Option<usize>,
    last_dispatched: Option<usize>,
    cpis: Vec<Protocol>,
    /// Each CPI's idle pool threads.
    idle: Vec<Vec<usize>>,
    tasks: Vec<TaskRun>,
    busy: u64,
    context_switches: u64,
    /// The next arming stamp (the tasks' first releases took `0..tasks`).
    arming: u64,
}

impl<'a> Reference<'a> {
    fn new(system: &'a System) -> Self {
        let mut threads = Vec::new();
        let mut tasks = Vec::new();
        for (index, task) in system.tasks.iter().enumerate() {
            tasks.push(TaskRun {
                thread: threads.len(),
                next_release: task.offset,
                released: 0,
                pending: VecDeque::new(),
                rows: Vec::new(),
                armed: index as u64,
            });
            threads.push(Thread {
                role: Role::Control(index),
                home: task.priority,
                tcb: task.priority,
                in_steps: false,
                ready: false,
                next: Next::Body,
                pc: 0,
                remaining: 0,
                serving: None,
            });
        }
        let mut cpis = Vec::new();
        let mut idle = Vec::new();
        for (index, cpi) in system.cpis.iter().enumerate() {
            let (state, home, size) = match cpi.protocol {
                CpiProtocol::Propagated => (
                    Protocol::Propagation { nodes: Vec::new() },
                    cpi.ceiling,
                    system.tasks.len(),
                ),
                CpiProtocol::Inherited => (
                    Protocol::Pip {
                        holder: None,
                        inherited: 0,
                        requestor: 0,
                        downstream: None,
                        waiters: Vec::new(),
                        arrivals: 0,
                    },
                    cpi.ceiling,
                    system.tasks.len(),
                ),
                CpiProtocol::Ipcp | CpiProtocol::Npcs => {
                    let home = if cpi.protocol == CpiProtocol::Npcs {
                        NPCS_PRIORITY
                    } else {
                        cpi.ceiling
                    };
                    let state = Protocol::Fixed {
                        busy: false,
                        queue: VecDeque::new(),
                    };
                    (state, home, 1)
                }
            };
            cpis.push(state);
            let pool: Vec<usize> = (0..size)
                .map(|_| {
                    threads.push(Thread {
                        role: Role::Server(index),
                        home,
                        tcb: home,
                        in_steps: false,
                        ready: false,
                        next: Next::Body,
                        pc: 0,
                        remaining: 0,
                        serving: None,
                    });
                    threads.len() - 1
                })
                .collect();
            idle.push(pool);
        }
        Reference {
            system,
            now: 0,
            threads,
            lists: vec![VecDeque::new(); 256],
            running: None,
            last_dispatched: None,
            cpis,
            idle,
            tasks,
            busy: 0,
            context_switches: 0,
            arming: system.tasks.len() as u64,
        }
    }

    fn run(mut self) -> Outcome {
        let horizon = self.system.horizon;
        loop {
            self.settle();
            if self.now == horizon {
                break;
            }
            self.pass_one_ms();
        }
        self.finish()
    }

    // ----- scheduling ------------------------------------------------------------------------

    fn highest(&self) -> Option<usize> {
        self.lists
            .iter()
            .rev()
            .find_map(|list| list.front().copied())
    }

    /// The head of the highest list runs; the one it preempts keeps its place.
    fn dispatch(&mut self) {
        let next = self.highest();
        if next == self.running {
            return;
        }
        self.running = next;
        if let Some(thread) = next {
            if self.last_dispatched != Some(thread) {
                self.context_switches += 1;
            }
            self.last_dispatched = Some(thread);
        }
    }

    fn make_ready(&mut self, thread: usize) {
        let at = self.threads[thread].scheduled_at();
        self.threads[thread].ready = true;
        self.lists[at as usize].push_back(thread);
    }

    fn block(&mut self, thread: usize) {
        if self.threads[thread].ready {
            self.unlist(thread);
            self.threads[thread].ready = false;
        }
        if self.running == Some(thread) {
            self.running = None;
        }
    }

    fn unlist(&mut self, thread: usize) {
        for list in &mut self.lists {
            list.retain(|&t| t != thread);
        }
    }

    /// `seL4_TCB_SetPriority`: a ready thread goes to the tail of its new priority, the
    /// running one to the head.
    fn requeue(&mut self, thread: usize) {
        if !self.threads[thread].ready {
            return;
        }
        self.unlist(thread);
        let at = self.threads[thread].scheduled_at() as usize;
        if self.running == Some(thread) {
            self.lists[at].push_front(thread);
        } else {
            self.lists[at].push_back(thread);
        }
    }

    fn set_tcb(&mut self, thread: usize, priority: u8) {
        self.threads[thread].tcb = priority;
        self.requeue(thread);
    }

    fn set_in_steps(&mut self, thread: usize, in_steps: bool) {
        self.threads[thread].in_steps = in_steps;
        self.requeue(thread);
    }

    // ----- time ------------------------------------------------------------------------------

    /// Everything due at `now`: the next action of the thread whose stretch ended now (its
    /// kernel entry, whose decision makes the instant's releases), then the releases, then
    /// dispatches and every later zero-time action, until none is left.
    fn settle(&mut self) {
        if let Some(thread) = self.running {
            if self.threads[thread].remaining == 0 {
                self.act(thread);
            }
        }
        loop {
            self.release_due();
            self.dispatch();
            match self.running {
                Some(thread) if self.threads[thread].remaining == 0 => self.act(thread),
                _ => return,
            }
        }
    }

    fn release_due(&mut self) -> bool {
        let mut released = false;
        let mut due: Vec<usize> = (0..self.tasks.len())
            .filter(|&task| self.tasks[task].next_release <= self.now)
            .collect();
        due.sort_by_key(|&task| self.tasks[task].armed);
        for task in due {
            let period = self.system.tasks[task].period;
            while self.tasks[task].next_release <= self.now {
                let run = &mut self.tasks[task];
                run.release_next(period);
                released = true;
                if run.pending.len() == 1 {
                    let thread = run.thread;
                    self.threads[thread].pc = 0;
                    self.threads[thread].next = Next::Body;
                    self.make_ready(thread);
                }
            }
        }
        released
    }

    /// The running thread works one millisecond; the jobs of strictly higher-priority tasks
    /// pending meanwhile are inverted by it.
    fn pass_one_ms(&mut self) {
        match self.running {
            Some(thread) => {
                self.threads[thread].remaining -= 1;
                self.busy += 1;
                let owner = match self.threads[thread].role {
                    Role::Control(task) => task,
                    Role::Server(_) => self.threads[thread].serving.expect("serving").requestor,
                };
                let owner_job = self.tasks[owner].pending.front().expect("pending").seq;
                let owner_priority = self.system.tasks[owner].priority;
                for (task, run) in self.tasks.iter_mut().enumerate() {
                    if self.system.tasks[task].priority <= owner_priority {
                        continue;
                    }
                    for job in &mut run.pending {
                        job.inversion += 1;
                        if !job.lower.contains(&(owner, owner_job)) {
                            job.lower.push((owner, owner_job));
                        }
                    }
                }
            }
            // An idle core: whoever runs next is switched to.
            None => self.last_dispatched = None,
        }
        self.now += 1;
    }

    fn finish(mut self) -> Outcome {
        let horizon = self.system.horizon;
        let mut tasks = Vec::new();
        for (task, run) in self.tasks.iter_mut().enumerate() {
            let period = self.system.tasks[task].period;
            for job in run.pending.drain(..) {
                run.rows.push(JobRow {
                    release: job.release,
                    completion: None,
                    inversion: job.inversion,
                    lower_jobs: job.lower.len() as u32,
                });
            }
            let misses = run
                .rows
                .iter()
                .filter(|job| match job.completion {
                    Some(done) => done > job.release + period,
                    None => job.release + period <= horizon,
                })
                .count() as u64;
            tasks.push(TaskRow {
                jobs: run.rows.clone(),
                misses,
                max_inversion: run.rows.iter().map(|j| j.inversion).max().unwrap_or(0),
                max_lower_jobs: run.rows.iter().map(|j| j.lower_jobs).max().unwrap_or(0),
            });
        }
        Outcome {
            tasks,
            busy: self.busy,
            context_switches: self.context_switches,
        }
    }

    // ----- threads ---------------------------------------------------------------------------

    fn act(&mut self, thread: usize) {
        match self.threads[thread].next {
            Next::Body => self.step(thread),
            Next::CallSteps { wait } => {
                self.set_in_steps(thread, false);
                if wait {
                    // Fig. 4 step 6: wait for the signal.
                    self.block(thread);
                } else {
                    self.threads[thread].pc = 0;
                    self.threads[thread].next = Next::Body;
                }
            }
            Next::ReplySteps => self.reply_steps(thread),
            Next::Answered => {
                self.after_nested_reply(thread);
                self.threads[thread].next = Next::Body;
            }
        }
    }

    fn body(&self, thread: usize) -> &'a [Action] {
        let system = self.system;
        match self.threads[thread].role {
            Role::Control(task) => &system.tasks[task].body,
            Role::Server(cpi) => &system.cpis[cpi].body,
        }
    }

    /// Goes on with the body up to the next stretch of time, request or end.
    fn step(&mut self, thread: usize) {
        let body = self.body(thread);
        loop {
            let pc = self.threads[thread].pc;
            match body.get(pc) {
                None => return self.body_done(thread),
                Some(Action::Execute(0)) => self.threads[thread].pc += 1,
                Some(Action::Execute(millis)) => {
                    self.threads[thread].remaining = *millis;
                    self.threads[thread].pc += 1;
                    return;
                }
                Some(Action::Request(cpi)) => {
                    self.threads[thread].pc += 1;
                    return self.call(thread, *cpi);
                }
            }
        }
    }

    fn body_done(&mut self, thread: usize) {
        match self.threads[thread].role {
            Role::Control(task) => self.job_done(task, thread),
            Role::Server(_) => {
                self.threads[thread].next = Next::ReplySteps;
                self.set_in_steps(thread, true);
            }
        }
    }

    fn job_done(&mut self, task: usize, thread: usize) {
        let now = self.now;
        let run = &mut self.tasks[task];
        let job = run.pending.pop_front().expect("a pending job");
        run.rows.push(JobRow {
            release: job.release,
            completion: Some(now),
            inversion: job.inversion,
            lower_jobs: job.lower.len() as u32,
        });
        // A job due by now (at this very instant too) keeps the thread going: its sleep until
        // that release returns at once.
        let period = self.system.tasks[task].period;
        while run.next_release <= now {
            run.release_next(period);
        }
        if run.pending.is_empty() {
            run.armed = self.arming;
            self.arming += 1;
            self.block(thread);
        } else {
            // The next job was released meanwhile: the thread goes on, keeping its place.
            self.threads[thread].pc = 0;
            self.threads[thread].next = Next::Body;
        }
    }

    /// `thread` sends a request to `cpi` and blocks for the reply.
    fn call(&mut self, thread: usize, cpi: usize) {
        let (priority, requestor) = match self.threads[thread].role {
            Role::Control(task) => (self.system.tasks[task].priority, task),
            Role::Server(own) => {
                let requestor = self.threads[thread].serving.expect("serving").requestor;
                let ceiling = self.system.cpis[own].ceiling;
                let home = self.threads[thread].home;
                match &mut self.cpis[own] {
                    // Fig. 5 steps 7-10: to the ceiling, the node's priority goes with it.
                    Protocol::Propagation { nodes } => {
                        let node = nodes.iter_mut().find(|n| n.thread == thread).expect("node");
                        node.downstream = Some(cpi);
                        let priority = node.priority;
                        self.set_tcb(thread, ceiling);
                        (priority, requestor)
                    }
                    // Fig. 4 steps 15-18: to the ceiling, the inherited priority goes with it.
                    Protocol::Pip {
                        inherited,
                        downstream,
                        ..
                    } => {
                        *downstream = Some(cpi);
                        let priority = *inherited;
                        self.set_tcb(thread, ceiling);
                        (priority, requestor)
                    }
                    // Section 4.1: the thread's own fixed priority.
                    Protocol::Fixed { .. } => (home, requestor),
                }
            }
        };
        self.block(thread);
        let served = Served {
            priority,
            requestor,
            caller: thread,
        };
        self.deliver(cpi, served);
    }

    fn take_idle(&mut self, cpi: usize) -> usize {
        let idle = &mut self.idle[cpi];
        assert!(!idle.is_empty(), "pools are sized for every task");
        idle.remove(0)
    }

    /// A request reaches `cpi`: its state changes now; a pool thread wakes at the ceiling to
    /// run the call steps.
    fn deliver(&mut self, cpi: usize, served: Served) {
        match self.cpis[cpi] {
            Protocol::Propagation { .. } => {
                let thread = self.take_idle(cpi);
                if let Protocol::Propagation { nodes } = &mut self.cpis[cpi] {
                    nodes.push(Node {
                        thread,
                        priority: served.priority,
                        requestor: served.requestor,
                        downstream: None,
                    });
                }
                self.threads[thread].serving = Some(served);
                // Step 5: the requester's priority, once out of the call steps.
                self.set_tcb(thread, served.priority);
                self.start_call_steps(thread, false);
            }
            Protocol::Pip { holder, .. } => {
                let thread = self.take_idle(cpi);
                self.threads[thread].serving = Some(served);
                if holder.is_some() {
                    if let Protocol::Pip {
                        waiters, arrivals, ..
                    } = &mut self.cpis[cpi]
                    {
                        waiters.push(Waiter {
                            thread,
                            priority: served.priority,
                            requestor: served.requestor,
                            arrival: *arrivals,
                        });
                        *arrivals += 1;
                    }
                    // Steps 2-5 come first, so a holder re-queued by them is ahead of
                    // this thread when both end up at the same priority.
                    self.inherit(cpi, served.priority);
                    self.start_call_steps(thread, true);
                } else {
                    self.take_lock(cpi, thread, served.priority, served.requestor);
                    self.start_call_steps(thread, false);
                }
            }
            Protocol::Fixed { busy, .. } => {
                if busy {
                    if let Protocol::Fixed { queue, .. } = &mut self.cpis[cpi] {
                        queue.push_back(served);
                    }
                } else {
                    if let Protocol::Fixed { busy, .. } = &mut self.cpis[cpi] {
                        *busy = true;
                    }
                    let thread = self.idle[cpi][0];
                    self.threads[thread].serving = Some(served);
                    self.start_call_steps(thread, false);
                }
            }
        }
    }

    fn start_call_steps(&mut self, thread: usize, wait: bool) {
        self.threads[thread].next = Next::CallSteps { wait };
        self.threads[thread].remaining = 0;
        self.set_in_steps(thread, true);
        self.make_ready(thread);
    }

    /// Fig. 4 steps 9-13: `thread` holds the lock for `requestor` at `priority`.
    fn take_lock(&mut self, cpi: usize, thread: usize, priority: u8, requestor: usize) {
        if let Protocol::Pip {
            holder,
            inherited,
            requestor: holding,
            ..
        } = &mut self.cpis[cpi]
        {
            *holder = Some(thread);
            *inherited = priority;
            *holding = requestor;
        }
        self.set_tcb(thread, priority);
    }

    /// Fig. 4 steps 2-5: the holder of `cpi`'s lock inherits `priority` if higher, and
    /// pushes it down its nested request.
    fn inherit(&mut self, cpi: usize, priority: u8) {
        let Protocol::Pip {
            holder: Some(holder),
            inherited,
            requestor,
            downstream,
            ..
        } = &mut self.cpis[cpi]
        else {
            return;
        };
        if priority <= *inherited {
            return;
        }
        *inherited = priority;
        let (holder, requestor, downstream) = (*holder, *requestor, *downstream);
        // Waiting downstream, the holder runs at the ceiling (steps 15-20): its TCB is left
        // there until step 20.
        if downstream.is_none() {
            self.set_tcb(holder, priority);
        }
        if let Some(next) = downstream {
            self.nest(next, priority, requestor);
        }
    }

    /// `nest`: `requestor`'s request at `cpi` now has `priority` (Fig. 4 step 25, Fig. 5
    /// steps 16-18; a fixed CPI ends the chain).
    fn nest(&mut self, cpi: usize, priority: u8, requestor: usize) {
        match &mut self.cpis[cpi] {
            Protocol::Propagation { nodes } => {
                let Some(node) = nodes.iter_mut().find(|n| n.requestor == requestor) else {
                    return;
                };
                if priority <= node.priority {
                    return;
                }
                node.priority = priority;
                match node.downstream {
                    // It runs its procedure (or is about to): raise its thread.
                    None => {
                        let thread = node.thread;
                        self.set_tcb(thread, priority);
                    }
                    // It waits at the ceiling; step 12 will drop it to the new priority.
                    Some(next) => self.nest(next, priority, requestor),
                }
            }
            Protocol::Pip {
                requestor: holding,
                holder,
                waiters,
                ..
            } => {
                if !(holder.is_some() && *holding == requestor) {
                    let Some(waiter) = waiters.iter_mut().find(|w| w.requestor == requestor) else {
                        return;
                    };
                    waiter.priority = waiter.priority.max(priority);
                }
                self.inherit(cpi, priority);
            }
            Protocol::Fixed { .. } => {}
        }
    }

    /// The procedure is done: the reply steps, the reply, and the next request or the pool.
    fn reply_steps(&mut self, thread: usize) {
        let Role::Server(cpi) = self.threads[thread].role else {
            unreachable!("only servers reply");
        };
        let served = self.threads[thread].serving.take().expect("serving");
        let ceiling = self.system.cpis[cpi].ceiling;
        let mut next_fixed = None;
        match &mut self.cpis[cpi] {
            // Fig. 5 steps 13-15.
            Protocol::Propagation { nodes } => {
                nodes.retain(|n| n.thread != thread);
                self.set_tcb(thread, ceiling);
            }
            // Fig. 4 steps 21-24, and 7-13 for the waiter woken.
            Protocol::Pip {
                holder, waiters, ..
            } => {
                *holder = None;
                let best = waiters
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, w)| (w.priority, std::cmp::Reverse(w.arrival)))
                    .map(|(at, _)| at);
                let woken = best.map(|at| waiters.remove(at));
                self.set_tcb(thread, ceiling);
                // Step 23 before step 24: the waiter is queued before the caller.
                if let Some(waiter) = woken {
                    self.wake_waiter(waiter.thread);
                    self.take_lock(cpi, waiter.thread, waiter.priority, waiter.requestor);
                }
            }
            // Section 4.1: the one thread takes the next queued request at once.
            Protocol::Fixed { busy, queue } => {
                next_fixed = queue.pop_front();
                *busy = next_fixed.is_some();
            }
        }
        self.answer(served.caller);
        if let Some(next) = next_fixed {
            self.threads[thread].serving = Some(next);
            self.threads[thread].next = Next::CallSteps { wait: false };
            return;
        }
        self.set_in_steps(thread, false);
        self.block(thread);
        self.idle[cpi].push(thread);
    }

    /// The lock was handed to a waiter: it wakes at the ceiling to take steps 7-13 itself,
    /// then runs the procedure.
    fn wake_waiter(&mut self, thread: usize) {
        let waiter = &mut self.threads[thread];
        if waiter.ready && waiter.next == (Next::CallSteps { wait: true }) {
            // Not dispatched yet for its call steps: it will not wait after all.
            waiter.next = Next::CallSteps { wait: false };
            return;
        }
        waiter.next = Next::CallSteps { wait: false };
        waiter.in_steps = true;
        self.make_ready(thread);
    }

    /// The reply reaches the thread that sent the request.
    fn answer(&mut self, caller: usize) {
        self.threads[caller].next = Next::Answered;
        self.threads[caller].remaining = 0;
        self.make_ready(caller);
    }

    /// Fig. 4 steps 19-20, Fig. 5 steps 11-12: the pointer cleared, down to the priority it
    /// serves at. A fixed server never left its priority.
    fn after_nested_reply(&mut self, thread: usize) {
        let Role::Server(cpi) = self.threads[thread].role else {
            return;
        };
        let priority = match &mut self.cpis[cpi] {
            Protocol::Propagation { nodes } => {
                let node = nodes.iter_mut().find(|n| n.thread == thread).expect("node");
                node.downstream = None;
                node.priority
            }
            Protocol::Pip {
                downstream,
                inherited,
                ..
            } => {
                *downstream = None;
                *inherited
            }
            Protocol::Fixed { .. } => return,
        };
        self.set_tcb(thread, priority);
    }
}

fn reference(system: &System) -> Outcome {
    Reference::new(system).run()
}

// ----- the machine ---------------------------------------------------------------------------

fn ms(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

fn lowered(body: &[Action]) -> Vec<Step> {
    body.iter()
        .map(|action| match *action {
            Action::Execute(millis) => Step::Execute(ms(millis)),
            Action::Request(cpi) => Step::Request(cpi),
        })
        .collect()
}

fn config(system: &System) -> ComponentSystemConfig {
    ComponentSystemConfig {
        tasks: system
            .tasks
            .iter()
            .enumerate()
            .map(|(index, task)| LoweredTask {
                name: format!("t{index}"),
                priority: Priority(task.priority),
                period: ms(task.period),
                offset: ms(task.offset),
                body: lowered(&task.body),
                reservation: None,
            })
            .collect(),
        cpis: system
            .cpis
            .iter()
            .enumerate()
            .map(|(index, cpi)| LoweredCpi {
                name: format!("c{index}"),
                protocol: cpi.protocol,
                ceiling: Priority(cpi.ceiling),
                // One thread per task that may have a request outstanding.
                threads: system.tasks.len().max(1) as u32,
                body: lowered(&cpi.body),
                task_bodies: Vec::new(),
            })
            .collect(),
        costs: ProtocolCosts::ZERO,
    }
}

fn in_ms(duration: Duration) -> u64 {
    assert_eq!(duration.as_nanos() % MS, 0, "whole milliseconds");
    duration.as_nanos() / MS
}

fn at_ms(instant: Instant) -> u64 {
    in_ms(instant.saturating_duration_since(Instant::ZERO))
}

fn machine(system: &System) -> Outcome {
    let outcome: ComponentOutcome = run(
        &config(system),
        RunOptions {
            until: Instant::ZERO.saturating_add(ms(system.horizon)),
            record_jobs: true,
            record_trace: false,
        },
    )
    .expect("a valid configuration");
    assert_eq!(outcome.protocol_errors, 0, "no protocol step refused");
    assert_eq!(outcome.pool_exhausted, 0, "pools sized for every task");
    Outcome {
        tasks: outcome
            .tasks
            .iter()
            .map(|task| TaskRow {
                jobs: task
                    .job_records
                    .iter()
                    .map(|job| JobRow {
                        release: at_ms(job.release),
                        completion: job.completion.map(at_ms),
                        inversion: in_ms(job.inversion),
                        lower_jobs: job.lower_jobs,
                    })
                    .collect(),
                misses: task.misses,
                max_inversion: in_ms(task.max_inversion),
                max_lower_jobs: task.max_lower_jobs,
            })
            .collect(),
        busy: in_ms(outcome.busy),
        context_switches: outcome.context_switches,
    }
}

// ----- hand-worked cases ---------------------------------------------------------------------

fn task(priority: u8, period: u64, offset: u64, body: Vec<Action>) -> TaskSpec {
    TaskSpec {
        priority,
        period,
        offset,
        body,
    }
}

fn cpi(protocol: CpiProtocol, ceiling: u8, body: Vec<Action>) -> CpiSpec {
    CpiSpec {
        protocol,
        ceiling,
        body,
    }
}

/// First job's completion of each task, in ms.
fn first_completions(outcome: &Outcome) -> Vec<Option<u64>> {
    outcome.tasks.iter().map(|t| t.jobs[0].completion).collect()
}

fn first_inversions(outcome: &Outcome) -> Vec<u64> {
    outcome.tasks.iter().map(|t| t.jobs[0].inversion).collect()
}

/// Runs `system` on the machine and on the reference, checks they agree, and returns the
/// outcome.
fn both(system: &System) -> Outcome {
    let outcome = machine(system);
    assert_eq!(outcome, reference(system));
    outcome
}

/// A request's server wakes at the tail of its ceiling, so a ceiling equal to the caller's
/// priority serves it only after the caller's equal-priority peers; and the reply wakes the
/// caller at the tail of its own priority. `A` (2) runs 2 ms, calls `c` (2 ms) and runs 1 ms;
/// `B` (2, 3 ms) is released at 1 and queues behind `A`.
///
/// ```text
///            0  1  2  3  4  5  6  7  8
/// ceiling 2: A  A  B  B  B  c  c  A        c's thread joins the tail of 2 behind B
/// ceiling 3: A  A  c  c  B  B  B  A        c runs at once; A woken at 4 is behind B
/// ```
///
/// NPCS ignores the ceiling (255): always the second line. A done at 8 either way; B at 5 or 7.
#[test]
fn a_server_at_the_caller_s_priority_queues_behind_its_peers() {
    for protocol in CpiProtocol::ALL {
        for ceiling in [2, 3] {
            let system = System {
                tasks: vec![
                    task(
                        2,
                        100,
                        0,
                        vec![Action::Execute(2), Action::Request(0), Action::Execute(1)],
                    ),
                    task(2, 100, 1, vec![Action::Execute(3)]),
                ],
                cpis: vec![cpi(protocol, ceiling, vec![Action::Execute(2)])],
                horizon: 50,
            };
            let outcome = both(&system);
            let at_once = ceiling == 3 || protocol == CpiProtocol::Npcs;
            let b_done = if at_once { 7 } else { 5 };
            assert_eq!(
                first_completions(&outcome),
                [Some(8), Some(b_done)],
                "{protocol:?} at ceiling {ceiling}"
            );
        }
    }
}

/// NPCS blocks a task that never calls the CPI; IPCP at the ceiling 2, propagation and PIP do
/// not. `L` (1) calls `c` (4 ms) at 0; `H` (3, 1 ms, no request) arrives at 1; `M` (2) calls
/// `c` at 10, which sets the ceiling to 2.
///
/// ```text
///        0  1  2  3  4  5      10 11 12 13
/// IPCP:  c  H  c  c  c         c  c  c  c     H done at 2, L at 5
/// NPCS:  c  c  c  c  H         c  c  c  c     H done at 5 (3 ms inverted), L at 5
/// ```
#[test]
fn npcs_blocks_a_task_that_does_not_call_the_cpi() {
    for protocol in CpiProtocol::ALL {
        let system = System {
            tasks: vec![
                task(1, 100, 0, vec![Action::Request(0)]),
                task(3, 100, 1, vec![Action::Execute(1)]),
                task(2, 100, 10, vec![Action::Request(0)]),
            ],
            cpis: vec![cpi(protocol, 2, vec![Action::Execute(4)])],
            horizon: 50,
        };
        let outcome = both(&system);
        let npcs = protocol == CpiProtocol::Npcs;
        let (h_done, h_inverted) = if npcs { (5, 3) } else { (2, 0) };
        assert_eq!(
            first_completions(&outcome),
            [Some(5), Some(h_done), Some(14)],
            "{protocol:?}"
        );
        assert_eq!(
            first_inversions(&outcome),
            [0, h_inverted, 0],
            "{protocol:?}"
        );
    }
}

/// Nested PIP raises a request waiting downstream (Fig. 4 step 25): its notification object
/// moves ahead of a waiter it was behind. `a` (PIP, ceiling 4) calls `b` (PIP, ceiling 4,
/// 5 ms) and then runs 1 ms. `M` (1) takes `b` at 0. `L` (2) takes `a` at 1, and its request
/// in `b` waits there with priority 2; `M`'s section inherits 2. `N` (3) waits in `b` from 2,
/// with priority 3. `H` (4) waits in `a` from 3: `a`'s holder inherits 4 and `nest` raises
/// `L`'s request in `b` to 4, and `b`'s holder to 4. So at 5 `b` goes to `L` (4) before `N`
/// (3).
///
/// ```text
///      0    5    10   15   20   25
///      MMMMMLLLLLLNNNNNHHHHHHNL          M: M's section in b; L: L's in b, then in a (10)
///                                        N: N's in b; H: H's in a, in b, in a (21); then
///                                        N and L finish their own 1 ms
/// ```
///
/// Done: H at 22, N at 23, L and M at 24. Inverted: L by M 1-5 (4); N by M 2-5 and L 5-11
/// (9); H by M 3-5, L 5-11 and N 11-16 (13).
#[test]
fn nest_raises_a_request_waiting_downstream_above_its_peers() {
    let (cpi_a, cpi_b) = (0, 1);
    let system = System {
        tasks: vec![
            task(1, 100, 0, vec![Action::Request(cpi_b)]),
            task(2, 100, 1, vec![Action::Request(cpi_a), Action::Execute(1)]),
            task(3, 100, 2, vec![Action::Request(cpi_b), Action::Execute(1)]),
            task(4, 100, 3, vec![Action::Request(cpi_a)]),
        ],
        cpis: vec![
            cpi(
                CpiProtocol::Inherited,
                4,
                vec![Action::Request(cpi_b), Action::Execute(1)],
            ),
            cpi(CpiProtocol::Inherited, 4, vec![Action::Execute(5)]),
        ],
        horizon: 50,
    };
    let outcome = both(&system);
    assert_eq!(
        first_completions(&outcome),
        [Some(24), Some(24), Some(23), Some(22)]
    );
    assert_eq!(first_inversions(&outcome), [0, 4, 9, 13]);
    let lower: Vec<u32> = outcome.tasks.iter().map(|t| t.max_lower_jobs).collect();
    assert_eq!(lower, [0, 1, 2, 3]);
}

/// A PIP holder blocked on its nested request inherits; when the reply comes, where does it
/// wake? `a` (PIP, ceiling 3) calls `b` (propagated, ceiling 2, 3 ms) and runs 2 ms. `L` (1)
/// takes `a` at 0, its request runs in `b` 0-1; `M` (2) waits in `a` at 1: `a`'s holder
/// inherits 2 and `nest` raises `L`'s request in `b` to 2, which runs 1-3. `X` (2, 2 ms, no
/// request) arrives at 2, behind it. At 3 `b` replies to `a`'s holder.
///
/// ```text
///                       0  1  2  3  4  5  6  7  8  9 10 11 12 13
/// steps 19-20 at PC:    b  b  b  a  a  X  X  b  b  b  a  a  M      X done at 7
/// (step 4 as written:   b  b  b  X  X  a  a  b  b  b  a  a  M      X done at 5)
/// ```
///
/// (`b` and `a` work for `L` up to its reply, for `M` from 7.) The holder waits at the
/// ceiling (step 15), takes the reply at 3 there and drops to the head of 2 (step 20), ahead
/// of `X`. The machine used to set the blocked holder's TCB to the inherited 2 (step 4 as
/// written), so it woke at the tail of 2 behind `X`. `L` and `M` are done at 13 either way;
/// `X` is inverted 3 ms (2-5).
#[test]
fn a_holder_takes_its_nested_reply_at_the_ceiling() {
    let (cpi_a, cpi_b) = (0, 1);
    let system = System {
        tasks: vec![
            task(1, 100, 0, vec![Action::Request(cpi_a)]),
            task(2, 100, 1, vec![Action::Request(cpi_a), Action::Execute(1)]),
            task(2, 100, 2, vec![Action::Execute(2)]),
        ],
        cpis: vec![
            cpi(
                CpiProtocol::Inherited,
                3,
                vec![Action::Request(cpi_b), Action::Execute(2)],
            ),
            cpi(CpiProtocol::Propagated, 2, vec![Action::Execute(3)]),
        ],
        horizon: 50,
    };
    let outcome = both(&system);
    assert_eq!(first_completions(&outcome), [Some(13), Some(13), Some(7)]);
    assert_eq!(first_inversions(&outcome), [0, 4, 3]);
}

/// Where does the waiter the notification manager wakes go? `a` (PIP, ceiling 3, 3 ms). `L`
/// (1) takes `a` at 0; `M` (2) waits in `a` at 1 and `L`'s section inherits 2; `X` (2, 2
/// ms, no request) arrives at 2, behind it. At 3 the section ends and `M`'s thread gets the
/// lock.
///
/// ```text
///                               0  1  2  3  4  5  6  7  8  9
/// steps 7-13 at the ceiling:    a  a  a  a  a  a  X  X  M      X done at 8
/// (demoted by the finisher:     a  a  a  X  X  a  a  a  M      X done at 5)
/// ```
///
/// (`a`: `L`'s section until 3, then `M`'s.) Section 4.2: "the signaled thread ... proceed[s]
/// through steps (7)-(9)" at the priority ceiling, so the woken thread is dispatched first
/// and drops to the head of 2. The machine used to set its priority inside the finisher's
/// step, so it joined the tail of 2 behind `X`. `L` and `M` are done at 9 either way; `X` is
/// inverted 1 ms (2-3).
#[test]
fn a_woken_waiter_runs_its_steps_at_the_ceiling() {
    let system = System {
        tasks: vec![
            task(1, 100, 0, vec![Action::Request(0)]),
            task(2, 100, 1, vec![Action::Request(0), Action::Execute(1)]),
            task(2, 100, 2, vec![Action::Execute(2)]),
        ],
        cpis: vec![cpi(CpiProtocol::Inherited, 3, vec![Action::Execute(3)])],
        horizon: 50,
    };
    let outcome = both(&system);
    assert_eq!(first_completions(&outcome), [Some(9), Some(9), Some(8)]);
    assert_eq!(first_inversions(&outcome), [0, 2, 1]);
}

// ----- random systems ------------------------------------------------------------------------

/// Sets the ceilings as the configuration analyzer does, or `above` it by one: the highest
/// priority a request to the CPI can carry, from the tasks calling it, the propagated and PIP
/// CPIs calling it (whose requests carry at most the highest priority of their own requests),
/// and the IPCP and NPCS CPIs calling it (their fixed priority). CPIs call only later CPIs,
/// so one pass in order does.
fn set_ceilings(tasks: &[TaskSpec], cpis: &mut [CpiSpec], above: &[bool]) {
    let calls = |body: &[Action], callee: usize| body.contains(&Action::Request(callee));
    let mut highest = vec![1u8; cpis.len()];
    for callee in 0..cpis.len() {
        for task in tasks.iter().filter(|task| calls(&task.body, callee)) {
            highest[callee] = highest[callee].max(task.priority);
        }
        for caller in (0..callee).filter(|&caller| calls(&cpis[caller].body, callee)) {
            let sends = match cpis[caller].protocol {
                CpiProtocol::Npcs => NPCS_PRIORITY,
                CpiProtocol::Ipcp => cpis[caller].ceiling,
                _ => highest[caller],
            };
            highest[callee] = highest[callee].max(sends);
        }
        let raise = above[callee] && highest[callee] < NPCS_PRIORITY;
        cpis[callee].ceiling = highest[callee] + raise as u8;
    }
}

/// A drawn step: whether it requests, what it executes (0-3 ms) if not, and which CPI it
/// requests if it does ([`to_action`]).
fn raw_step() -> impl Strategy<Value = (bool, u64, usize)> {
    (prop::bool::weighted(0.45), 0u64..=3, 0usize..8)
}

/// The drawn step as a request of one of the CPIs `first..count` (so a CPI calls only later
/// ones), or an `Execute` when it does not request or there is none.
fn to_action((request, time, target): (bool, u64, usize), first: usize, count: usize) -> Action {
    if request && first < count {
        Action::Request(first + target % (count - first))
    } else {
        Action::Execute(time)
    }
}

/// 2-4 tasks at priorities 1-4 (ties drawn on purpose), periods 3-40 ms, offsets 0-10 ms,
/// bodies of 1-3 steps; 1-3 CPIs of any protocol whose bodies request only later CPIs
/// (nesting without loops); ceilings the analyzer's, or one above for a quarter of them;
/// horizons of 100-200 ms. Overloads are allowed.
fn system() -> impl Strategy<Value = System> {
    (2usize..=4, 1usize..=3).prop_flat_map(|(task_count, cpi_count)| {
        let task = (
            1u8..=4,
            3u64..=40,
            0u64..=10,
            proptest::collection::vec(raw_step(), 1..=3),
        );
        let cpi = (
            proptest::sample::select(CpiProtocol::ALL.to_vec()),
            prop::bool::weighted(0.25),
            proptest::collection::vec(raw_step(), 1..=3),
        );
        (
            proptest::collection::vec(task, task_count),
            proptest::collection::vec(cpi, cpi_count),
            100u64..=200,
        )
            .prop_map(move |(drawn_tasks, drawn_cpis, horizon)| {
                let tasks: Vec<TaskSpec> = drawn_tasks
                    .into_iter()
                    .map(|(priority, period, offset, body)| TaskSpec {
                        priority,
                        period,
                        offset,
                        body: body
                            .into_iter()
                            .map(|s| to_action(s, 0, cpi_count))
                            .collect(),
                    })
                    .collect();
                let mut specs: Vec<CpiSpec> = drawn_cpis
                    .iter()
                    .enumerate()
                    .map(|(index, (protocol, _, body))| CpiSpec {
                        protocol: *protocol,
                        ceiling: 1,
                        body: body
                            .iter()
                            .map(|&s| to_action(s, index + 1, cpi_count))
                            .collect(),
                    })
                    .collect();
                let above: Vec<bool> = drawn_cpis.iter().map(|d| d.1).collect();
                set_ceilings(&tasks, &mut specs, &above);
                System {
                    tasks,
                    cpis: specs,
                    horizon,
                }
            })
    })
}

/// Nested chains for `nest`: CPI 0 is PIP and calls CPI 1 (PIP or propagated) between two
/// stretches; CPI 1 may call CPI 2 (any protocol); 3-4 tasks at priorities 1-4, periods
/// 5-40 ms, each call one of the three (CPIs 0 and 1 twice as often as CPI 2), so requests of
/// one task wait in a CPI another holds through CPI 0.
fn chained_system() -> impl Strategy<Value = System> {
    let pooled = proptest::sample::select(vec![CpiProtocol::Inherited, CpiProtocol::Propagated]);
    let any_protocol = proptest::sample::select(CpiProtocol::ALL.to_vec());
    let task = (1u8..=4, 5u64..=40, 0u64..=10, 0u64..=2, 0usize..5, 0u64..=2);
    (
        proptest::collection::vec(task, 3..=4),
        (0u64..=2, 0u64..=2),
        (pooled, 0u64..=4, any::<bool>(), 0u64..=2),
        (any_protocol, 1u64..=3),
        proptest::collection::vec(prop::bool::weighted(0.25), 3),
        100u64..=200,
    )
        .prop_map(
            |(
                drawn,
                (a_before, a_after),
                (b_protocol, b_before, b_calls, b_after),
                (c_protocol, c_time),
                above,
                horizon,
            )| {
                let tasks: Vec<TaskSpec> = drawn
                    .into_iter()
                    .map(
                        |(priority, period, offset, before, target, after)| TaskSpec {
                            priority,
                            period,
                            offset,
                            body: vec![
                                Action::Execute(before),
                                // CPIs 0 and 1 twice as often as 2.
                                Action::Request([0, 0, 1, 1, 2][target]),
                                Action::Execute(after),
                            ],
                        },
                    )
                    .collect();
                let mut b_body = vec![Action::Execute(b_before)];
                if b_calls {
                    b_body.push(Action::Request(2));
                }
                b_body.push(Action::Execute(b_after));
                let mut cpis = vec![
                    cpi(
                        CpiProtocol::Inherited,
                        1,
                        vec![
                            Action::Execute(a_before),
                            Action::Request(1),
                            Action::Execute(a_after),
                        ],
                    ),
                    cpi(b_protocol, 1, b_body),
                    cpi(c_protocol, 1, vec![Action::Execute(c_time)]),
                ];
                set_ceilings(&tasks, &mut cpis, &above);
                System {
                    tasks,
                    cpis,
                    horizon,
                }
            },
        )
}

/// Two PIP levels: CPI 0 (PIP) calls CPI 1 (PIP) between two stretches; four tasks at
/// priorities 1-4 call CPI 1, 0, 1, 0 in turn, so a request that CPI 0's holder sends waits
/// in CPI 1 behind a direct caller and among others, where `nest` must raise it.
fn two_pip_levels() -> impl Strategy<Value = System> {
    let task = (1u8..=4, 6u64..=30, 0u64..=6, 0u64..=2, 0u64..=1);
    (
        proptest::collection::vec(task, 4),
        (0u64..=2, 1u64..=5, 0u64..=2),
        proptest::collection::vec(prop::bool::weighted(0.25), 2),
        100u64..=150,
    )
        .prop_map(|(drawn, (a_before, b_time, a_after), above, horizon)| {
            let (cpi_a, cpi_b) = (0, 1);
            let tasks: Vec<TaskSpec> = drawn
                .into_iter()
                .enumerate()
                .map(
                    |(index, (priority, period, offset, before, after))| TaskSpec {
                        priority,
                        period,
                        offset,
                        body: vec![
                            Action::Execute(before),
                            Action::Request(if index % 2 == 0 { cpi_b } else { cpi_a }),
                            Action::Execute(after),
                        ],
                    },
                )
                .collect();
            let mut cpis = vec![
                cpi(
                    CpiProtocol::Inherited,
                    1,
                    vec![
                        Action::Execute(a_before),
                        Action::Request(cpi_b),
                        Action::Execute(a_after),
                    ],
                ),
                cpi(CpiProtocol::Inherited, 1, vec![Action::Execute(b_time)]),
            ];
            set_ceilings(&tasks, &mut cpis, &above);
            System {
                tasks,
                cpis,
                horizon,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every job, miss, inversion, the busy time and the context switches are the
    /// reference's.
    #[test]
    fn random_systems_run_as_the_reference(system in system()) {
        let expected = reference(&system);
        prop_assert_eq!(machine(&system), expected);
    }

    /// The same below a PIP CPI, where `nest` pushes inherited priorities down.
    #[test]
    fn nested_chains_run_as_the_reference(system in chained_system()) {
        let expected = reference(&system);
        prop_assert_eq!(machine(&system), expected);
    }

    /// The same with requests waiting in a downstream PIP CPI, which `nest` raises.
    #[test]
    fn two_pip_levels_run_as_the_reference(system in two_pip_levels()) {
        let expected = reference(&system);
        prop_assert_eq!(machine(&system), expected);
    }
}
