//! The machine's passive servers against an independent reference: one or two cores, one
//! server, and
//! periodic callers whose job runs `before`, invokes the server (an operation of `operation`),
//! runs `after` and sleeps until its next period (`sleep-until-aligned`). Every job's release,
//! first start, completion and miss, and per task its invocations, server time, execution,
//! gate waits, request drains and aborts must be those of a plain millisecond-by-millisecond
//! simulation written here from the documented rules (the module doc of
//! `machine/servers.rs`, the README's "Passive servers", the MC-IPC paper's sections III, IV
//! and VI, lib.rs "Ties"), sharing no code with the machine or `bulwark-core`.
//!
//! Rules covered:
//! - an invoke of an idle server is served at once on the caller's context; of a busy one,
//!   it waits at the gate: FIFO-IPC in arrival order, PRIO-IPC by priority (ties in arrival
//!   order), MC-IPC as Fig. 1 on one cluster of one core (no head queue: the first request
//!   to find no local head becomes it and is served next; the rest wait in the tail queue by
//!   priority, ties in arrival order, and the reply of the local head's request, or an abort
//!   of the local head, makes the tail's best the local head);
//! - without bandwidth inheritance a waiting caller blocks, the request in service progresses
//!   only while its own caller runs, and the reply wakes the next caller (it joins the tail of
//!   its priority); with it a waiting caller stays ready, keeps its place, and when dispatched
//!   runs the request in service, charged to its own budget and server time;
//! - the reply is made by the context that ran the operation to its end; the caller goes on
//!   with its script when next dispatched (a completion may wait for a preemption);
//! - fixed priority, distinct or tied (lib.rs "Ties" 1-3, 5, 6: equal priorities first come,
//!   first served; the running task's step at an instant before the releases there);
//! - SPR with the sporadic-server rule (the SPR paper's Algorithms 1 and 3, through
//!   `replenishment_queue`), distinct priorities, on one core or on each of two cores (each
//!   core its own SPR scheduler): a caller blocked at the gate is suspended and activated by
//!   the reply, so a caller out of budget holds the server until its replenishment; each
//!   decision processes at most one expired timeout of the core (a sleeper's wake-up or a
//!   depleted task's replenishment), the most important, and only when it is more important
//!   than every ready task there (section IV-B); the core's one-shot timer is the chosen
//!   task's budget exhaustion (Algorithm 2, lines 1-4: the replenishments queued at the
//!   decision that fall due by then extend it) or the earliest timeout of a more important
//!   task of the core, with none chosen the earliest timeout; a job is released at its
//!   nominal time whether or not its core decides then (it counts by the horizon);
//! - the MC-IPC gate's budget notices: an exhaustion prunes a waiting request (counted, its
//!   drain ended) or leaves one in service to complete; the replenishment reissues a pruned
//!   one (a new arrival, its drain counted afresh, its wait still from the invoke);
//! - two cores, fixed priority or SPR on each, distinct priorities, FIFO-IPC and PRIO-IPC,
//!   with and without inheritance, callers homed on either: without inheritance the reply
//!   that hands the server to a blocked caller on the other core interrupts that core, which
//!   wakes it at its next kernel entry; with it, the first lender dispatched runs the
//!   operation (the core it runs on is kept), a lender dispatched on the other core meanwhile
//!   spins (executed, no server time, and under SPR its own budget drained, A2, so it may
//!   run out while spinning), and when the running context stops (not chosen again at a
//!   decision, or the reply taking the next request) every other core whose dispatched
//!   context lends takes an interrupt, and the first to take it runs the operation on.
//!   Across cores, one instant goes as the machine's event queue: executions ending, first
//!   set first (set at each core's last decision), then timer interrupts (a core's one-shot
//!   timer: its next release under fixed priority, SPR's timer above; or an interrupt
//!   another core raised, which replaces it) first set first; a core's decision at an
//!   instant releases its jobs due by then and takes the wake-ups raised for it.
//!
//! Readings where the rules leave a choice, each following the machine's documentation or
//! code comments:
//! - SPR processes a depleted task's replenishment, and so reports it, only once the task is
//!   more important than every ready one on its core (section IV-B's deferred timeouts), so
//!   a pruned request is reissued then, not at the replenishment's nominal time;
//! - the notices of one decision (the running task's exhaustion, one replenishment) are
//!   acted on by task id, per task an exhaustion first (lib.rs "Ties", 7);
//! - a task whose execution and budget end at one instant takes its step there first (an
//!   invoke, a reply, a sleep; "Ties" 1), then is charged: a request it issued then is
//!   aborted at once (pruned if it waits);
//! - on two cores, a reply to a caller whose context spins on the other core interrupts
//!   that core ("the running context stops ... the reply"): the caller goes on at once.
//!
//! Five hand-worked schedules pin the reference and the machine (inheritance on and off,
//! a caller out of budget holding the server, prune and reissue, two cores woken or
//! spinning, a caller spinning elsewhere answered), and one case found at 20,000 cases pins
//! the notices' order.
//!
//! Not covered: MC-IPC and tied priorities on several cores, more than two cores; SPR's
//! non-preemptive regions (zero here) and deferrable rule; several servers and nested calls,
//! server priorities, other policies, random operation times, terminations, costs. Every
//! parameter is whole milliseconds and costs are zero, so stepping one millisecond at a time
//! is exact.

mod common;
mod replenishment_queue;

use bulwark_core::ipc::GateProtocol;
use bulwark_core::reservation::Reservation;
use bulwark_core::Priority;
use bulwark_sim::{Outcome, Stats};
use bulwark_spec::{Behaviour, Execution, PolicyKind, ServerSpec, ServerStep, Step, TaskSpec};
use common::{ms, rows, run_jobs, scenario};
use proptest::prelude::*;
use replenishment_queue::Queue;

const MS: u64 = 1_000_000;

/// One periodic caller, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Caller {
    period: u64,
    offset: u64,
    before: u64,
    after: u64,
    priority: u8,
    /// Its SPR budget per period (policy `spr` only).
    budget: u64,
    core: usize,
}

/// A drawn system: the callers of one server on `cores` cores.
#[derive(Clone, Debug)]
struct System {
    callers: Vec<Caller>,
    cores: usize,
    operation: u64,
    gate: GateProtocol,
    inheritance: bool,
    /// SPR reservations; fixed priority otherwise.
    spr: bool,
    horizon: u64,
}

impl System {
    fn inherits(&self) -> bool {
        self.inheritance || self.gate == GateProtocol::McIpc
    }
}

/// (release, first start, completion, missed), in nanoseconds.
type JobRow = (u64, Option<u64>, Option<u64>, bool);

/// Where a caller's job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Between jobs, until the next release.
    Asleep { release: u64 },
    /// Running its code before the invoke, `left` ms to go.
    Before { left: u64 },
    /// Its request waits at the gate since `since`.
    Waiting { since: u64 },
    /// Its request is in service.
    Served,
    /// Running its code after the reply.
    After { left: u64 },
}

/// A task as SPR sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    Ready,
    /// Out of budget until the replenishment queue's head is due.
    Depleted,
    /// Suspended until `Some(at)` (its timeout), or blocked at the gate (`None`).
    Suspended(Option<u64>),
}

/// One gate. `waiting` holds (urgency, arrival, task): FIFO-IPC's queue (urgency 0), PRIO-IPC's
/// queue and MC-IPC's tail queue. MC-IPC on one cluster of one core has a head queue of
/// `m - 1 = 0` entries, so its waiting requests are the local head and the tail queue. Its
/// global queue and local wait are left out: only an idle server reads the global queue
/// (which then holds the local head, if any), and the reply that makes it idle ends local
/// wait, so neither can be observed on one core.
#[derive(Clone, Debug)]
struct Gate {
    protocol: GateProtocol,
    waiting: Vec<(u64, u64, usize)>,
    local_head: Option<usize>,
    arrivals: u64,
}

impl Gate {
    fn new(protocol: GateProtocol) -> Self {
        Gate {
            protocol,
            waiting: Vec::new(),
            local_head: None,
            arrivals: 0,
        }
    }

    fn mc(&self) -> bool {
        self.protocol == GateProtocol::McIpc
    }

    /// `mc_invoke` (Fig. 1, lines 7-18), or a FIFO/PRIO enqueue.
    fn invoke(&mut self, task: usize, priority: u8) {
        if self.mc() && self.local_head.is_none() {
            self.local_head = Some(task);
            return;
        }
        let urgency = match self.protocol {
            GateProtocol::FifoIpc => 0,
            _ => 255 - u64::from(priority),
        };
        self.waiting.push((urgency, self.arrivals, task));
        self.arrivals += 1;
    }

    /// The most urgent waiting request, taken out.
    fn pop_best(&mut self) -> Option<usize> {
        let best = (0..self.waiting.len()).min_by_key(|&i| self.waiting[i])?;
        Some(self.waiting.remove(best).2)
    }

    /// `mc_wait`: the request the idle server takes next. MC-IPC's local head stays the
    /// local head while it is served.
    fn wait(&mut self) -> Option<usize> {
        if self.mc() {
            self.local_head
        } else {
            self.pop_best()
        }
    }

    /// `mc_reply` (lines 33-40) for the request of `caller`: a new local head from the tail,
    /// unless an abort chose one already.
    fn reply(&mut self, caller: usize) {
        if self.mc() && self.local_head == Some(caller) {
            self.local_head = self.pop_best();
        }
    }

    /// `mc_abort` (lines 44-59) for `task`: a request in the tail queue, or the local head, is
    /// pruned (true); one in service completes. Either way a local head that was `task` is
    /// replaced by the tail's best at once.
    fn abort(&mut self, task: usize, in_service: bool) -> bool {
        if let Some(at) = self.waiting.iter().position(|w| w.2 == task) {
            self.waiting.remove(at);
            return true;
        }
        if self.local_head == Some(task) {
            self.local_head = self.pop_best();
        }
        !in_service
    }
}

/// What the reference expects of one task besides its jobs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Counts {
    invocations: u64,
    server: u64,
    executed: u64,
    /// Samples, in ms.
    gate_waits: Vec<u64>,
    drains: Vec<u64>,
    aborted: u64,
}

struct TaskState {
    stage: Stage,
    /// Waiting at a gate without inheritance.
    blocked: bool,
    /// Its waiting request was aborted and not yet reissued.
    pruned: bool,
    /// SPR's view of it, and its replenishment queue.
    standing: Standing,
    queue: Queue,
    /// Its execution when its request to an inheriting server was last issued.
    drain_from: u64,
    jobs: Vec<JobRow>,
    counts: Counts,
}

struct Reference<'a> {
    system: &'a System,
    tasks: Vec<TaskState>,
    gate: Gate,
    /// The request in service: its caller and the ms of operation left.
    in_service: Option<(usize, u64)>,
    /// The core whose context runs the operation, if one does.
    runner: Option<usize>,
    /// Per core: the task dispatched; when its execution's end was set (an event sequence
    /// number: executions ending at one instant are handled first set first); its timer as
    /// programmed, and the timer source's pending event (time, sequence), which an
    /// interrupt replaces; callers another core's reply woke, taken at its next entry.
    running: Vec<Option<usize>>,
    end_set: Vec<u64>,
    programmed: Vec<Option<u64>>,
    timer: Vec<Option<(u64, u64)>>,
    wake_ups: Vec<Vec<usize>>,
    events: u64,
    /// Ready tasks in the order they last woke (equal priorities: first come, first served).
    woken: Vec<usize>,
    /// When each task armed its release timer (tasks released together wake in this order).
    armed: Vec<u64>,
    sequence: u64,
}

impl<'a> Reference<'a> {
    fn new(system: &'a System) -> Self {
        let tasks = system
            .callers
            .iter()
            .map(|caller| TaskState {
                stage: Stage::Asleep {
                    release: caller.offset,
                },
                blocked: false,
                pruned: false,
                standing: Standing::Suspended(Some(caller.offset)),
                queue: Queue::new(caller.budget, Reservation::DEFAULT_REPLENISHMENTS),
                drain_from: 0,
                jobs: Vec::new(),
                counts: Counts::default(),
            })
            .collect();
        let count = system.callers.len() as u64;
        Reference {
            system,
            tasks,
            gate: Gate::new(system.gate),
            in_service: None,
            runner: None,
            running: vec![None; system.cores],
            end_set: vec![0; system.cores],
            programmed: vec![None; system.cores],
            timer: vec![None; system.cores],
            wake_ups: vec![Vec::new(); system.cores],
            events: 0,
            woken: Vec::new(),
            armed: (0..count).collect(),
            sequence: count,
        }
    }

    fn caller(&self, task: usize) -> &Caller {
        &self.system.callers[task]
    }

    fn eligible(&self, task: usize) -> bool {
        let t = &self.tasks[task];
        let awake = !matches!(t.stage, Stage::Asleep { .. }) && !t.blocked;
        awake && (!self.system.spr || t.standing == Standing::Ready)
    }

    /// The most important eligible task on `core`; equal priorities, the first woken.
    fn choose(&self, core: usize) -> Option<usize> {
        (0..self.tasks.len())
            .filter(|&task| self.caller(task).core == core && self.eligible(task))
            .max_by_key(|&task| {
                let place = self.woken.iter().position(|&t| t == task);
                (self.caller(task).priority, std::cmp::Reverse(place))
            })
    }

    /// The task, dispatched, has a step that takes no time (a kernel entry) due: a lender
    /// only when its core ran the operation to its end.
    fn step_due(&self, task: usize) -> bool {
        match self.tasks[task].stage {
            Stage::Before { left } | Stage::After { left } => left == 0,
            Stage::Served | Stage::Waiting { .. } => {
                self.runner == Some(self.caller(task).core)
                    && self.in_service.is_some_and(|s| s.1 == 0)
            }
            Stage::Asleep { .. } => false,
        }
    }

    /// The task's context, dispatched, runs (or spins for) the request in service.
    fn lends(&self, task: usize) -> bool {
        let t = &self.tasks[task];
        match t.stage {
            Stage::Served => true,
            Stage::Waiting { .. } => self.system.inherits() && !t.blocked && !t.pruned,
            _ => false,
        }
    }

    /// An interrupt to `core` at `now`: its timer source's event, replacing the pending one.
    fn interrupt(&mut self, core: usize, now: u64) {
        self.events += 1;
        self.timer[core] = Some((now, self.events));
    }

    /// The operation stopped on `core`: every other core whose dispatched context lends
    /// (spins) takes an interrupt.
    fn kick_spinners(&mut self, core: usize, now: u64) {
        for other in 0..self.system.cores {
            if other != core && self.running[other].is_some_and(|task| self.lends(task)) {
                self.interrupt(other, now);
            }
        }
    }

    fn wake(&mut self, task: usize, now: u64, wanted: u64) {
        self.woken.retain(|&t| t != task);
        self.woken.push(task);
        if self.system.spr {
            // Algorithm 3 (a gate wake-up asks for `now`; a timeout for its time).
            let ready = self.tasks[task].queue.activate(now, wanted);
            self.tasks[task].standing = if ready {
                Standing::Ready
            } else {
                Standing::Depleted
            };
        }
    }

    /// The task's step due at `now` on `core`: invoke, reply or sleep.
    fn take_step(&mut self, task: usize, core: usize, now: u64) {
        match self.tasks[task].stage {
            Stage::Before { .. } => self.invoke(task, now),
            Stage::After { .. } => self.sleep(task, now),
            Stage::Served | Stage::Waiting { .. } => self.reply(core, now),
            Stage::Asleep { .. } => unreachable!("an asleep task takes no step"),
        }
    }

    fn invoke(&mut self, task: usize, now: u64) {
        let inherits = self.system.inherits();
        let t = &mut self.tasks[task];
        t.counts.invocations += 1;
        if inherits {
            t.drain_from = t.counts.executed;
        }
        t.stage = Stage::Waiting { since: now };
        let priority = self.caller(task).priority;
        self.gate.invoke(task, priority);
        if self.in_service.is_none() {
            let next = self.gate.wait();
            assert_eq!(next, Some(task), "an idle server's gate is empty");
            self.tasks[task].stage = Stage::Served;
            self.in_service = Some((task, self.system.operation));
        } else if !inherits {
            self.tasks[task].blocked = true;
            self.woken.retain(|&t| t != task);
            if self.system.spr {
                // Algorithm 1 for a suspension with no wake-up asked for.
                let period = self.caller(task).period;
                self.tasks[task].queue.suspend(now, period);
                self.tasks[task].standing = Standing::Suspended(None);
            }
        }
    }

    /// The operation in service ended at `now` on `core`: the reply, and the next request
    /// is taken.
    fn reply(&mut self, core: usize, now: u64) {
        let (caller, _) = self.in_service.take().expect("a request in service");
        self.runner = None;
        // A caller spinning elsewhere is a lender the reply stops: its core is interrupted.
        let home = self.caller(caller).core;
        if home != core && self.running[home] == Some(caller) {
            self.interrupt(home, now);
        }
        self.gate.reply(caller);
        let after = self.caller(caller).after;
        let inherits = self.system.inherits();
        let t = &mut self.tasks[caller];
        if inherits {
            t.counts.drains.push(t.counts.executed - t.drain_from);
        }
        t.stage = Stage::After { left: after };
        self.serve_next(core, now);
    }

    /// The idle server takes its next request at `now`, made on `core`. Spinning lenders
    /// elsewhere take an interrupt; a blocked caller homed elsewhere is woken there, by one.
    fn serve_next(&mut self, core: usize, now: u64) {
        let Some(next) = self.gate.wait() else {
            return;
        };
        self.in_service = Some((next, self.system.operation));
        self.runner = None;
        self.kick_spinners(core, now);
        let home = self.caller(next).core;
        let t = &mut self.tasks[next];
        let Stage::Waiting { since } = t.stage else {
            unreachable!("the gate serves waiting requests")
        };
        t.counts.gate_waits.push(now - since);
        t.stage = Stage::Served;
        if t.blocked && home != core {
            self.wake_ups[home].push(next);
            self.interrupt(home, now);
        } else if std::mem::take(&mut t.blocked) {
            self.wake(next, now, now);
        }
    }

    /// The job completes at `now`; the task sleeps until the next multiple of its period.
    fn sleep(&mut self, task: usize, now: u64) {
        let period = self.caller(task).period;
        let release = (now / period + 1) * period;
        let t = &mut self.tasks[task];
        t.jobs.last_mut().expect("a job").2 = Some(now * MS);
        t.stage = Stage::Asleep { release };
        self.woken.retain(|&t| t != task);
        self.sequence += 1;
        self.armed[task] = self.sequence;
        if self.system.spr {
            // Algorithm 1: a head not due postpones the wake-up to it.
            let t = &mut self.tasks[task];
            t.queue.suspend(now, period);
            t.standing = Standing::Suspended(Some(release.max(t.queue.head_time())));
        }
    }

    /// SPR charged the task that ran up to `now` and it is still ready: out of budget, it is
    /// depleted. True when it was.
    fn charge(&mut self, task: usize, now: u64) -> bool {
        let t = &self.tasks[task];
        if !self.system.spr || t.standing != Standing::Ready || t.queue.head_time() <= now {
            return false;
        }
        self.tasks[task].standing = Standing::Depleted;
        self.woken.retain(|&t| t != task);
        true
    }

    /// SPR on `core` processes at most one expired timeout per decision, the most important
    /// one, if its task is more important than every ready one there (section IV-B): a
    /// depleted task's replenishment, or a sleeper's wake-up (its job was released on time).
    /// Returns the task replenished.
    fn replenish(&mut self, core: usize, now: u64) -> Option<usize> {
        if !self.system.spr {
            return None;
        }
        let mine = |task: &usize| self.caller(*task).core == core;
        let floor = (0..self.tasks.len())
            .filter(mine)
            .filter(|&task| self.eligible(task))
            .map(|task| self.caller(task).priority)
            .max();
        let task = (0..self.tasks.len())
            .filter(mine)
            .filter(|&task| {
                let t = &self.tasks[task];
                match t.standing {
                    Standing::Depleted => t.queue.head_time() <= now,
                    Standing::Suspended(Some(at)) => at <= now,
                    _ => false,
                }
            })
            .max_by_key(|&task| self.caller(task).priority)
            .filter(|&task| Some(self.caller(task).priority) > floor)?;
        let Standing::Suspended(Some(at)) = self.tasks[task].standing else {
            self.tasks[task].standing = Standing::Ready;
            self.woken.push(task);
            return Some(task);
        };
        self.wake(task, now, at);
        None
    }

    /// An mc-ipc gate acts on one decision's budget notices, by task id and, per task, an
    /// exhaustion before a replenishment (the machine's `act_on_notices`): an exhaustion
    /// prunes a waiting request or leaves one in service to complete; a replenishment
    /// reissues a pruned request, which an idle server takes at once.
    fn act_on_notices(&mut self, exhausted: Option<usize>, replenished: Option<usize>, now: u64) {
        if !self.gate.mc() {
            return;
        }
        let mut notices: Vec<(usize, bool)> =
            exhausted.map(|task| (task, false)).into_iter().collect();
        notices.extend(replenished.map(|task| (task, true)));
        notices.sort();
        for (task, replenished) in notices {
            let priority = self.caller(task).priority;
            let t = &mut self.tasks[task];
            match t.stage {
                Stage::Waiting { .. } if replenished && t.pruned => {
                    t.pruned = false;
                    t.drain_from = t.counts.executed;
                    self.gate.invoke(task, priority);
                    if self.in_service.is_none() {
                        self.serve_next(self.caller(task).core, now);
                    }
                }
                Stage::Waiting { .. } if !replenished && !t.pruned => {
                    // A waiting request is the local head or in the tail queue: pruned.
                    let pruned = self.gate.abort(task, false);
                    assert!(pruned, "a waiting request is pruned");
                    t.pruned = true;
                    t.counts.aborted += 1;
                    t.counts.drains.push(t.counts.executed - t.drain_from);
                }
                Stage::Served if !replenished => {
                    self.gate.abort(task, true);
                }
                _ => {}
            }
        }
    }

    /// The one-shot timer `core`'s scheduler programs at `now`, `next` chosen: under fixed
    /// priority its next release; under SPR (section IV-B) the chosen task's budget
    /// exhaustion or the earliest timeout (a wake-up, a depleted task's replenishment) of a
    /// more important task of the core, whichever is first; with none chosen, the earliest
    /// timeout.
    fn timer_at(&self, core: usize, next: Option<usize>, now: u64) -> Option<u64> {
        let mine = (0..self.tasks.len()).filter(|&task| self.caller(task).core == core);
        if !self.system.spr {
            return mine
                .filter_map(|task| match self.tasks[task].stage {
                    Stage::Asleep { release } => Some(release),
                    _ => None,
                })
                .min();
        }
        let floor = next.map(|task| self.caller(task).priority);
        let timeout = mine
            .filter(|&task| Some(self.caller(task).priority) > floor)
            .filter_map(|task| match self.tasks[task].standing {
                Standing::Suspended(at) => at,
                Standing::Depleted => Some(self.tasks[task].queue.head_time()),
                Standing::Ready => None,
            })
            .min();
        let Some(task) = next else {
            return timeout;
        };
        // Its budget runs out when, running on, its head is no longer due, counting the
        // replenishments planned now that fall due by then (Algorithm 2, lines 1-4), not the
        // ones its run will plan: those are planned out of reach. (The queue, at most 6
        // entries of 8, never merges.)
        let mut queue = self.tasks[task].queue.clone();
        let mut at = now;
        while queue.head_time() <= at && at <= self.system.horizon {
            queue.run(u64::MAX / 4);
            at += 1;
        }
        let exhaustion = (at <= self.system.horizon).then_some(at);
        timeout.into_iter().chain(exhaustion).min()
    }

    /// Jobs of `core` released by `now` (an SPR core may enter after a less important task's
    /// release), at their release; without SPR woken in the order their timers were armed
    /// (SPR wakes them in `replenish`).
    fn release(&mut self, core: usize, now: u64) {
        let mut due: Vec<(usize, u64)> = (0..self.tasks.len())
            .filter(|&task| self.caller(task).core == core)
            .filter_map(|task| match self.tasks[task].stage {
                Stage::Asleep { release } if release <= now => Some((task, release)),
                _ => None,
            })
            .collect();
        due.sort_by_key(|&(task, _)| self.armed[task]);
        for (task, release) in due {
            let before = self.caller(task).before;
            let t = &mut self.tasks[task];
            t.jobs.push((release * MS, None, None, false));
            t.stage = Stage::Before { left: before };
            if !self.system.spr {
                self.woken.push(task);
            }
        }
    }

    /// `task` runs for one millisecond: a lender runs the operation if its core does, and
    /// spins otherwise, its budget draining.
    fn run(&mut self, task: usize) {
        let period = self.caller(task).period;
        let runs = self.runner == Some(self.caller(task).core);
        let t = &mut self.tasks[task];
        t.counts.executed += 1;
        if self.system.spr {
            t.queue.run(period);
        }
        match &mut t.stage {
            Stage::Before { left } | Stage::After { left } => *left -= 1,
            Stage::Served | Stage::Waiting { .. } => {
                assert!(!t.blocked && !t.pruned, "only lenders run operations");
                if runs {
                    t.counts.server += 1;
                    self.in_service.as_mut().expect("in service").1 -= 1;
                }
            }
            Stage::Asleep { .. } => unreachable!("an asleep task does not run"),
        }
    }

    /// `core` enters its kernel at `now`: for its dispatched task's step (`step`), or a timer
    /// interrupt (`timer`: its one-shot timer, or another core's interrupt). Each step
    /// that takes no time is a kernel entry, after which the scheduler chooses again ("Ties"
    /// 6: at the horizon too).
    fn enter(&mut self, core: usize, now: u64, step: bool, timer: bool) {
        if timer {
            self.timer[core] = None;
            self.programmed[core] = None;
        }
        let mut previous = self.running[core];
        let mut exhausted = None;
        if let Some(task) = previous {
            if step {
                self.take_step(task, core, now);
            }
            exhausted = self.charge(task, now).then_some(task);
        }
        for task in std::mem::take(&mut self.wake_ups[core]) {
            self.tasks[task].blocked = false;
            self.wake(task, now, now);
        }
        // "Ties" 1: the execution that ends is handled before the instant's releases.
        self.release(core, now);
        self.running[core] = loop {
            let replenished = self.replenish(core, now);
            self.act_on_notices(exhausted.take(), replenished, now);
            let next = self.choose(core);
            let release = self.timer_at(core, next, now);
            if release != self.programmed[core] {
                self.programmed[core] = release;
                self.events += 1;
                self.timer[core] = release.map(|at| (at, self.events));
            }
            // A context that ran the operation and is not chosen again leaves it.
            if previous.is_some_and(|p| next != Some(p) && self.lends(p))
                && self.runner == Some(core)
            {
                self.runner = None;
                self.kick_spinners(core, now);
            }
            let Some(task) = next else {
                break None;
            };
            self.tasks[task]
                .jobs
                .last_mut()
                .expect("a job")
                .1
                .get_or_insert(now * MS);
            if self.lends(task) && self.runner.is_none() {
                self.runner = Some(core);
            }
            if !self.step_due(task) {
                break Some(task);
            }
            self.take_step(task, core, now);
            previous = Some(task);
        };
        self.events += 1;
        self.end_set[core] = self.events;
    }

    fn schedule(mut self) -> (Vec<Vec<JobRow>>, Vec<Counts>) {
        let horizon = self.system.horizon;
        let cores = self.system.cores;
        for core in 0..cores {
            self.enter(core, 0, false, false);
        }
        for now in 0..=horizon {
            // Executions ending at `now`, first set first; then timer interrupts, first set
            // first (an entry may raise more).
            let mut ending: Vec<usize> = (0..cores)
                .filter(|&core| self.running[core].is_some_and(|task| self.step_due(task)))
                .collect();
            ending.sort_by_key(|&core| self.end_set[core]);
            for core in ending {
                self.enter(core, now, true, false);
            }
            loop {
                let due = (0..cores)
                    .filter_map(|core| Some((self.timer[core]?, core)))
                    .filter(|&((at, _), _)| at <= now)
                    .min_by_key(|&((_, set), _)| set);
                let Some((_, core)) = due else {
                    break;
                };
                self.enter(core, now, false, true);
            }
            for core in 0..cores {
                match self.running[core] {
                    Some(task) if now < horizon => self.run(task),
                    _ => self.running[core] = None,
                }
            }
        }
        let mut jobs = Vec::new();
        let mut counts = Vec::new();
        for (task, state) in self.tasks.into_iter().enumerate() {
            let deadline = self.system.callers[task].period * MS;
            let mut rows = state.jobs;
            // A job released on time whose core took no decision since (SPR) counts too.
            match state.stage {
                Stage::Asleep { release } if release <= horizon => {
                    rows.push((release * MS, None, None, false));
                }
                _ => {}
            }
            for job in &mut rows {
                job.3 = match job.2 {
                    Some(done) => done > job.0 + deadline,
                    None => job.0 + deadline <= horizon * MS,
                };
            }
            jobs.push(rows);
            counts.push(state.counts);
        }
        (jobs, counts)
    }
}

fn reference(system: &System) -> (Vec<Vec<JobRow>>, Vec<Counts>) {
    Reference::new(system).schedule()
}

/// The same system on the machine, built from model values.
fn machine(system: &System) -> Outcome {
    let tasks: Vec<TaskSpec> = system
        .callers
        .iter()
        .enumerate()
        .map(|(i, caller)| {
            let mut body = Vec::new();
            if caller.before > 0 {
                body.push(Step::Run(Execution::Fixed(ms(caller.before))));
            }
            body.push(Step::Invoke {
                server: 0,
                operation: None,
            });
            if caller.after > 0 {
                body.push(Step::Run(Execution::Fixed(ms(caller.after))));
            }
            body.push(Step::SleepUntilAligned(ms(caller.period)));
            TaskSpec {
                name: format!("t{i}"),
                core: caller.core as u16,
                priority: Some(Priority(caller.priority)),
                reservation: system
                    .spr
                    .then(|| Reservation::new(ms(caller.budget), ms(caller.period))),
                deadline: Some(ms(caller.period)),
                behaviour: Behaviour::Script {
                    offset: ms(caller.offset),
                    steps: vec![Step::Loop { count: None, body }],
                },
            }
        })
        .collect();
    let policy = if system.spr {
        PolicyKind::Spr
    } else {
        PolicyKind::FixedPriority
    };
    let mut scenario = scenario(policy, system.cores as u16, ms(system.horizon), tasks);
    scenario.servers = vec![ServerSpec {
        pruned_to_background: false,
        name: "server".into(),
        gate: system.gate,
        body: vec![ServerStep::Run(Execution::Fixed(ms(system.operation)))],
        bandwidth_inheritance: system.inherits(),
        priority: None,
        clients: (0..system.callers.len()).collect(),
    }];
    run_jobs(&scenario)
}

/// (count, min, max, sum) of samples in ms, as the machine's `Stats` in ns.
fn stats(samples: &[u64]) -> (u64, u64, u64, u128) {
    let ns = samples.iter().map(|s| s * MS);
    (
        samples.len() as u64,
        ns.clone().min().unwrap_or(0),
        ns.clone().max().unwrap_or(0),
        ns.map(u128::from).sum(),
    )
}

fn of(stats: &Stats) -> (u64, u64, u64, u128) {
    (stats.count, stats.min_ns, stats.max_ns, stats.sum_ns)
}

fn agree(system: &System) -> Result<(), TestCaseError> {
    let (expected, counts) = reference(system);
    let outcome = machine(system);
    let got = rows(&outcome, system.callers.len());
    for (task, (got, expected)) in got.iter().zip(&expected).enumerate() {
        prop_assert_eq!(got, expected, "jobs of task {}", task);
        let m = &outcome.tasks[task];
        let c = &counts[task];
        let misses = expected.iter().filter(|j| j.3).count() as u64;
        let completed = expected.iter().filter(|j| j.2.is_some()).count() as u64;
        prop_assert_eq!(
            (m.jobs, m.completed, m.misses),
            (expected.len() as u64, completed, misses),
            "task {}",
            task
        );
        let got = (
            m.invocations,
            m.server_ns,
            m.executed_ns,
            m.requests_aborted,
        );
        let want = (c.invocations, c.server * MS, c.executed * MS, c.aborted);
        prop_assert_eq!(
            got,
            want,
            "invocations, server, executed, aborts of task {}",
            task
        );
        prop_assert_eq!(
            of(&m.gate_wait),
            stats(&c.gate_waits),
            "gate waits of task {}",
            task
        );
        prop_assert_eq!(
            of(&m.request_drain),
            stats(&c.drains),
            "drains of task {}",
            task
        );
    }
    Ok(())
}

/// Two to four callers: periods 4-12 ms, code before and after the call 0-3 ms, offsets
/// 0-3 ms, budgets 1-6 ms (at most the period); one operation of 1-4 ms. Callers contend for
/// the server most of the time, and overloads and budget exhaustions are common.
fn callers(tied: bool) -> impl Strategy<Value = Vec<Caller>> {
    let caller = (4u64..=12, 0u64..=3, 0u64..=3, 0u64..=3, 1u64..=6, 1u8..=2).prop_map(
        |(period, offset, before, after, budget, priority)| Caller {
            period,
            offset,
            before,
            after,
            priority,
            budget: budget.min(period),
            core: 0,
        },
    );
    proptest::collection::vec(caller, 2..=4).prop_flat_map(move |callers| {
        let distinct: Vec<u8> = (1..=callers.len() as u8).collect();
        (Just(callers), Just(distinct).prop_shuffle()).prop_map(move |(callers, order)| {
            callers
                .into_iter()
                .zip(order)
                .map(|(caller, priority)| Caller {
                    priority: if tied { caller.priority } else { priority },
                    ..caller
                })
                .collect()
        })
    })
}

fn system(spr: bool, tied: bool, gates: Vec<GateProtocol>) -> impl Strategy<Value = System> {
    (
        callers(tied),
        1u64..=4,
        prop::sample::select(gates),
        any::<bool>(),
        1u64..=60,
    )
        .prop_map(
            move |(callers, operation, gate, inheritance, horizon)| System {
                callers,
                operation,
                gate,
                inheritance,
                spr,
                horizon,
                cores: 1,
            },
        )
}

const FIFO_PRIO: [GateProtocol; 2] = [GateProtocol::FifoIpc, GateProtocol::PrioIpc];

/// A system on two cores (SPR or fixed priority on each), each caller homed on either,
/// priorities distinct.
fn two_cores(spr: bool, inheritance: bool) -> impl Strategy<Value = System> {
    let homes = proptest::collection::vec(0usize..=1, 4);
    (system(spr, false, FIFO_PRIO.to_vec()), homes).prop_map(move |(system, homes)| {
        let mut callers = system.callers;
        for (caller, home) in callers.iter_mut().zip(homes) {
            caller.core = home;
        }
        System {
            callers,
            cores: 2,
            inheritance,
            ..system
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_priority_callers_are_served_as_the_reference(
        system in system(false, false, FIFO_PRIO.to_vec()),
    ) {
        agree(&system)?;
    }

    #[test]
    fn tied_callers_are_served_as_the_reference(
        system in system(false, true, FIFO_PRIO.to_vec()),
    ) {
        agree(&system)?;
    }

    #[test]
    fn spr_callers_are_served_as_the_reference(
        system in system(true, false, FIFO_PRIO.to_vec()),
    ) {
        agree(&system)?;
    }

    #[test]
    fn two_cores_without_inheritance_are_served_as_the_reference(
        system in two_cores(false, false),
    ) {
        agree(&system)?;
    }

    #[test]
    fn two_cores_with_inheritance_are_served_as_the_reference(system in two_cores(false, true)) {
        agree(&system)?;
    }

    #[test]
    fn spr_on_two_cores_is_served_as_the_reference(
        system in any::<bool>().prop_flat_map(|inheritance| two_cores(true, inheritance)),
    ) {
        agree(&system)?;
    }

    #[test]
    fn mc_ipc_prunes_and_reissues_as_the_reference(
        system in system(true, false, vec![GateProtocol::McIpc]),
    ) {
        agree(&system)?;
    }
}

/// Checks the reference against a schedule worked by hand, then the machine against both:
/// per task its jobs as (release, first start, completion, missed) in ms, and its counts as
/// (invocations, server ms, executed ms, gate waits, drains, aborts).
#[allow(clippy::type_complexity)]
fn hand_worked(
    system: &System,
    jobs: &[&[(u64, Option<u64>, Option<u64>, bool)]],
    counts: &[(u64, u64, u64, &[u64], &[u64], u64)],
) {
    let (got_jobs, got_counts) = reference(system);
    for (task, (got, want)) in got_jobs.iter().zip(jobs).enumerate() {
        let want: Vec<JobRow> = want
            .iter()
            .map(|&(release, start, done, missed)| {
                (
                    release * MS,
                    start.map(|s| s * MS),
                    done.map(|d| d * MS),
                    missed,
                )
            })
            .collect();
        assert_eq!(got, &want, "jobs of task {task}");
    }
    for (task, (got, want)) in got_counts.iter().zip(counts).enumerate() {
        let (invocations, server, executed, waits, drains, aborted) = *want;
        let want = Counts {
            invocations,
            server,
            executed,
            gate_waits: waits.to_vec(),
            drains: drains.to_vec(),
            aborted,
        };
        assert_eq!(got, &want, "counts of task {task}");
    }
    agree(system).expect("the machine agrees");
}

fn caller(priority: u8, offset: u64, before: u64, after: u64, budget: u64) -> Caller {
    Caller {
        period: 20,
        offset,
        before,
        after,
        priority,
        budget,
        core: 0,
    }
}

/// Fixed priority, one FIFO-IPC server of 3 ms, every period 20 ms. `low` (priority 1) calls
/// at 0; `high` (3) is released at 1 and calls at once, then runs 1 ms; `mid` (2) is released
/// at 1, runs 3 ms, then calls. One column per millisecond: `S` the operation on that
/// task's context, `r` its own code, `i` its invoke at the column's start, `|` its completion.
///
/// Without inheritance, waiting callers block; the request in service runs only on `low`:
/// ```text
///        0  1  2  3  4  5  6  7  8  9 10 11 12 13
/// low    S  .  .  .  S  S  .  .  .  .  .  .  .  |
/// high   .  i  .  .  .  .  S  S  S  r  |
/// mid    .  r  r  r  i  .  .  .  .  .  S  S  S  |
/// ```
/// `high` waits 1..6 and `mid` 4..9 (taken at high's reply, it runs once high completes);
/// `low`'s completion (its sleep, after the reply at 6) waits for the core until 13.
///
/// With inheritance, `high` stays ready and runs `low`'s request (1..3), then its own (3..6),
/// waiting 2 ms; `mid` finds the server idle at 10:
/// ```text
///        0  1  2  3  4  5  6  7  8  9 10 11 12 13
/// low    S  .  .  .  .  .  .  .  .  .  .  .  .  |
/// high   .  S  S  S  S  S  r  |
/// mid    .  .  .  .  .  .  .  r  r  r  S  S  S  |
/// ```
#[test]
fn inheritance_lets_a_waiting_caller_run_the_request_ahead() {
    let mut system = System {
        callers: vec![
            caller(1, 0, 0, 0, 20),
            caller(3, 1, 0, 1, 20),
            caller(2, 1, 3, 0, 20),
        ],
        operation: 3,
        gate: GateProtocol::FifoIpc,
        inheritance: false,
        spr: false,
        horizon: 19,
        cores: 1,
    };
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(13), false)],
            &[(1, Some(1), Some(10), false)],
            &[(1, Some(1), Some(13), false)],
        ],
        &[
            (1, 3, 3, &[], &[], 0),
            (1, 3, 4, &[5], &[], 0),
            (1, 3, 6, &[5], &[], 0),
        ],
    );
    system.inheritance = true;
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(13), false)],
            &[(1, Some(1), Some(7), false)],
            &[(1, Some(7), Some(13), false)],
        ],
        &[
            (1, 1, 1, &[], &[1], 0),
            (1, 5, 6, &[2], &[5], 0),
            (1, 3, 6, &[], &[3], 0),
        ],
    );
}

/// SPR, one FIFO-IPC server of 2 ms, no inheritance (the README's "the victim waits"):
/// `rogue` (priority 1, budget 1 ms per 20) calls at 0 and runs out of budget at 1 with 1 ms
/// of its operation left; `victim` (2, budget 4) is released at 1, calls and blocks. The
/// server waits for rogue's replenishment at 20: rogue finishes at 21, out of budget again
/// (its completion waits for 40), and the victim's request runs 21..23, its own code 23..24.
/// ```text
///         0  1 .. 20 21 22 23 24     x: out of budget from here
/// rogue   S  x     S  x
/// victim  .  i     .  S  S  r  |
/// ```
#[test]
fn a_caller_out_of_budget_holds_the_server_until_its_replenishment() {
    let system = System {
        callers: vec![caller(1, 0, 0, 0, 1), caller(2, 1, 0, 1, 4)],
        operation: 2,
        gate: GateProtocol::FifoIpc,
        inheritance: false,
        spr: true,
        horizon: 30,
        cores: 1,
    };
    hand_worked(
        &system,
        &[&[(0, Some(0), None, true)], &[(1, Some(1), Some(24), true)]],
        &[(1, 2, 2, &[], &[], 0), (1, 2, 3, &[20], &[], 0)],
    );
}

/// SPR, an mc-ipc server of 3 ms, periods 20: `rogue1` (priority 3, budget 1) and `rogue2`
/// (2, budget 1) are released at 0, `victim` (1, budget 10) at 1.
/// - 0..1: rogue1's request runs on its context; out of budget at 1, in service, it is left
///   to complete, and stops being the local head (the tail queue is empty: no local head);
/// - 1..2: rogue2 calls, becomes the local head, and runs rogue1's request until its budget
///   runs out at 2: its waiting request is pruned;
/// - 2..3: the victim calls, becomes the local head, and finishes rogue1's request; its own
///   runs 3..6;
/// - 20: rogue1 and rogue2 are replenished (most important first, both above the victim,
///   ready again at 20): rogue1 completes, rogue2's request is reissued to the idle server
///   (a wait of 19 from its invoke at 1) and runs 20..21, when its budget runs out in service;
///   the victim calls at 21 and finishes it (21..23), then its own (23..26). rogue2 completes
///   only at 40, after the run: a miss.
/// ```text
///          0  1  2  3  4  5  6 .. 20 21 22 23 24 25 26
/// rogue1   S  x                   |
/// rogue2   .  S  x                 S  x
/// victim   .  .  S  S  S  S  |     .  S  S  S  S  S  |
/// ```
#[test]
fn mc_ipc_prunes_a_waiting_request_and_reissues_it_at_the_replenishment() {
    let system = System {
        callers: vec![
            caller(3, 0, 0, 0, 1),
            caller(2, 0, 0, 0, 1),
            caller(1, 1, 0, 0, 10),
        ],
        operation: 3,
        gate: GateProtocol::McIpc,
        inheritance: true,
        spr: true,
        horizon: 30,
        cores: 1,
    };
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(20), false)],
            &[(0, Some(1), None, true)],
            &[
                (1, Some(2), Some(6), false),
                (20, Some(21), Some(26), false),
            ],
        ],
        &[
            (1, 1, 1, &[], &[1], 0),
            (1, 2, 2, &[19], &[1, 1], 1),
            (2, 9, 9, &[1, 2], &[4, 5], 0),
        ],
    );
}

/// The case that fixed the notices' order (found at 20,000 cases), SPR and mc-ipc, an
/// operation of 4 ms. At 10 `t1` (priority 4) finishes `t3`'s request on its own budget, its
/// own request is taken, and its budget runs out in service; in the same decision `t0` (3),
/// pruned at 7 and replenished at 8 but deferred behind `t1`, is processed. By task id,
/// `t0`'s request is reissued first, so `t1`'s abort makes `t0` the local head, ahead of `t2`
/// (2) waiting since 8: `t0`'s request is served at 14, 8 ms after its invoke at 6, and its job
/// completes at 20. Acting in event order (the abort first) would make `t2` the local head.
#[test]
fn one_decisions_notices_are_acted_on_by_task() {
    let periodic = |period, offset, before, after, priority, budget| Caller {
        period,
        ..caller(priority, offset, before, after, budget)
    };
    let system = System {
        callers: vec![
            periodic(6, 2, 3, 0, 3, 4),
            periodic(7, 1, 2, 1, 4, 2),
            periodic(7, 2, 1, 1, 2, 5),
            periodic(6, 0, 0, 2, 1, 2),
        ],
        operation: 4,
        gate: GateProtocol::McIpc,
        inheritance: true,
        spr: true,
        horizon: 36,
        cores: 1,
    };
    let (jobs, counts) = reference(&system);
    assert_eq!(jobs[0][0].2, Some(20 * MS));
    assert_eq!(counts[0].gate_waits[0], 8);
    agree(&system).expect("the machine agrees");
}

/// Two cores, fixed priority, one FIFO-IPC server of 3 ms, periods 20. On core 0, `low`
/// (priority 1) calls at 0 and runs 1 ms after the reply; `high` (3) is released at 2, runs
/// 1 ms and calls. On core 1, `far` (2) runs 1 ms, calls, and runs 1 ms after its reply.
/// `S` the operation on that context, `s` spinning for it, `r` own code, `|` a completion.
///
/// Without inheritance, the blocked callers are woken on their own cores by the reply's
/// interrupt (far at 4 by low's reply on core 0, high at 7 by far's on core 1):
/// ```text
///        0  1  2  3  4  5  6  7  8  9 10
/// low    S  S  .  S  r  |                    core 0
/// high   .  .  r  .  .  .  .  S  S  S  |     core 0
/// far    r  .  .  .  S  S  S  r  |           core 1
/// ```
/// With inheritance, far spins from 1 while core 0 runs the operation; high's release at 2
/// stops low's context, so core 1 takes an interrupt and far runs low's request on (2..3).
/// At 3 high calls and spins (its execution's end was set at 2, before far's: core 0 is
/// handled first); far's reply at 3 hands the server to far's own request, which core 1 runs
/// on while high spins; far's reply at 6 interrupts core 0, where high runs its own (6..9):
/// ```text
///        0  1  2  3  4  5  6  7  8  9 10
/// low    S  S  .  .  .  .  .  .  .  r  |     core 0
/// high   .  .  r  s  s  s  S  S  S  |        core 0
/// far    r  s  S  S  S  S  r  |              core 1
/// ```
#[test]
fn callers_on_two_cores_are_woken_or_spin_then_take_over() {
    let mut system = System {
        callers: vec![
            caller(1, 0, 0, 1, 20),
            caller(3, 2, 1, 0, 20),
            Caller {
                core: 1,
                ..caller(2, 0, 1, 1, 20)
            },
        ],
        cores: 2,
        operation: 3,
        gate: GateProtocol::FifoIpc,
        inheritance: false,
        spr: false,
        horizon: 19,
    };
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(5), false)],
            &[(2, Some(2), Some(10), false)],
            &[(0, Some(0), Some(8), false)],
        ],
        &[
            (1, 3, 4, &[], &[], 0),
            (1, 3, 4, &[4], &[], 0),
            (1, 3, 5, &[3], &[], 0),
        ],
    );
    system.inheritance = true;
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(10), false)],
            &[(2, Some(2), Some(9), false)],
            &[(0, Some(0), Some(7), false)],
        ],
        &[
            (1, 2, 3, &[], &[2], 0),
            (1, 3, 7, &[3], &[6], 0),
            (1, 4, 7, &[2], &[5], 0),
        ],
    );
}

/// A caller spinning on another core goes on after its reply (found by the two-core
/// property, reduced by hand). Two cores, fixed priority, a PRIO-IPC server of 3 ms with inheritance,
/// periods 20: on core 0 `low` (priority 1) calls at 0 and `mid` (3) is released at 1 and
/// calls at once; on core 1 `far` (4) runs 2 ms, calls, and runs 1 ms after its reply.
/// - 1: mid waits and, dispatched, runs low's request on (1..3);
/// - 2: far calls; the operation runs on core 0, so far spins;
/// - 3: mid's reply to low hands the server to far's request (PRIO: 4 before 3); core 1 is
///   interrupted, but core 0's scheduler has already dispatched mid, which runs far's
///   request (3..6) while far spins;
/// - 6: the reply to far stops far's context lending, so its core takes an interrupt
///   ("when the running context stops ... the reply"), and far runs its own code 6..7;
///   mid's request runs 6..9.
/// ```text
///        0  1  2  3  4  5  6  7  8  9
/// low    S  .  .  .  .  .  .  .  .  |        core 0
/// mid    .  S  S  S  S  S  S  S  S  |        core 0
/// far    r  r  s  s  s  s  r  |              core 1
/// ```
/// The machine used to interrupt only the cores whose context still lent after the reply,
/// so core 1 got no interrupt and, with no timer due, far never resumed: its job never
/// completed. Its drain was also recorded without the spin in progress.
#[test]
fn a_caller_spinning_elsewhere_goes_on_after_its_reply() {
    let system = System {
        callers: vec![
            caller(1, 0, 0, 0, 20),
            caller(3, 1, 0, 0, 20),
            Caller {
                core: 1,
                ..caller(4, 0, 2, 1, 20)
            },
        ],
        cores: 2,
        operation: 3,
        gate: GateProtocol::PrioIpc,
        inheritance: true,
        spr: false,
        horizon: 12,
    };
    hand_worked(
        &system,
        &[
            &[(0, Some(0), Some(9), false)],
            &[(1, Some(1), Some(9), false)],
            &[(0, Some(0), Some(7), false)],
        ],
        &[
            (1, 1, 1, &[], &[1], 0),
            (1, 8, 8, &[5], &[8], 0),
            (1, 0, 7, &[1], &[4], 0),
        ],
    );
}
