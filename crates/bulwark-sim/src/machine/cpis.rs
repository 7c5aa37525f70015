//! Component procedure interfaces (CPIs) on the machine: the CAmkES paper's protocols
//! (section 4: priority propagation, PIP with `nest`, IPCP, NPCS) as kernel objects of
//! `bulwark_core::ipc`, reached through the syscall layer, and the threads of their pools as
//! threads of a fixed-priority core.
//!
//! A `call` step sends a request carrying the requester's priority and the originating task;
//! a waiting thread of the CPI's pool takes it at the ceiling, runs the protocol's call steps
//! there (Fig. 4 steps 1-13, Fig. 5 steps 1-5, at the cost of the paper's Table 2 row), drops
//! to the priority the protocol gives it, runs the procedure, runs the reply steps at the
//! ceiling, and the caller wakes. Every step that changes a priority is a kernel entry, so the
//! core's scheduler decides again there. The protocols' effects (priority changes, the lock
//! handed to a waiter, `nest` hops downstream, each at its Table 2 cost for the thread that
//! caused it) are carried out as the CPI returns them; none is dropped unseen (a refused step
//! counts as a protocol error). The per-job measures are `job_log.rs`'s, the scheduling
//! contexts `contexts.rs`'s.

use std::collections::{BTreeSet, VecDeque};

use bulwark_core::ipc::{CpiId, CpiProtocol, Effect, Effects, Invoked, Replied, Request};
use bulwark_core::kernel::{
    Donate, InvokeCpi, Nest, NestedReply, ReplyCpi, Return, SendNested, SyscallError,
};
use bulwark_core::{Duration, Event, Instant, Priority, TaskId, Wake, Work};
use bulwark_spec::lowered::Step as CpiStep;
use bulwark_spec::Scenario;

use super::job_index::JobIndex;
use super::job_log::JobLog;
use super::{Entry, Machine, Step as CoreStep};
use crate::components::ProtocolCosts;
use crate::SimError;

/// What a pool thread's kernel entry does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CpiOp {
    /// A `call` step (of a task's script or of a procedure) requests this CPI.
    Call(usize),
    /// The call steps are done: drop to the request's priority, or wait for the lock.
    EntryDone { waiting: bool },
    /// The procedure is done: up to the ceiling for the reply steps.
    BodyDone,
    /// The reply steps are done: reply, then wait for (or take) the next request.
    ExitDone,
    /// The reply to the thread's own nested request arrived (Fig. 4 steps 19-20, Fig. 5
    /// steps 11-12).
    AfterReply,
}

/// Whose thread it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// A task's own thread, running its script.
    Task,
    /// Thread `index` of a CPI's pool.
    Pool { cpi: usize, index: u32 },
}

/// What a pool thread does when its current stretch is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cont {
    /// Run its procedure from `pc`.
    Step,
    /// The `Execute` step at `pc` is done.
    StepDone,
    /// The call steps are done (then wait for the lock if it was held).
    EntryDone { waiting: bool },
    /// The reply steps are done.
    ExitDone,
    /// Its own request was answered.
    AfterReply,
}

/// The request a pool thread serves.
#[derive(Clone, Copy, Debug)]
pub(super) struct Serving {
    pub(super) request: Request,
    /// The thread that sent it, which the reply wakes.
    caller: usize,
    /// Sent by a thread of an inherited CPI (Table 2's "PIP to ..." rows).
    from_pip: bool,
}

/// A thread's protocol state (a task's thread's only its priorities).
#[derive(Clone, Copy, Debug)]
pub(super) struct Thread {
    pub(super) role: Role,
    /// The core its task is partitioned onto.
    pub(super) core: u16,
    /// The priority it waits at (ceiling, 255 for NPCS, or its task's).
    pub(super) home: Priority,
    /// Its TCB priority, as the protocols set it. Set with `in_protocol` through
    /// [`Components::set_priority`], which keeps the ready set in order.
    priority: Priority,
    /// Running protocol steps, which run at the ceiling.
    in_protocol: bool,
    /// Not ready in the scheduler. Set through [`Components::set_blocked`], which keeps the
    /// set of the ready ones.
    blocked: bool,
    /// Its scheduling context is out of budget: off the run queue until the replenishment.
    /// Set through [`Components::set_throttled`], which keeps the set of such threads.
    throttled: bool,
    /// When a timer (its job's release, its context's replenishment) last made it ready, if
    /// that was its last wake-up and it has not run since: the wake-ups a non-preemptive
    /// region defers.
    pub(super) timer_woken: Option<Instant>,
    pub(super) cont: Cont,
    pub(super) pc: usize,
    pub(super) serving: Option<Serving>,
}

impl Thread {
    /// Its TCB priority.
    pub(super) fn priority(&self) -> Priority {
        self.priority
    }

    /// Whether it runs protocol steps (at the ceiling).
    pub(super) fn in_protocol(&self) -> bool {
        self.in_protocol
    }

    /// Not ready in the scheduler.
    pub(super) fn is_blocked(&self) -> bool {
        self.blocked
    }

    /// Off the run queue until its context's replenishment.
    pub(super) fn is_throttled(&self) -> bool {
        self.throttled
    }

    /// The priority it is scheduled at: protocol steps run at the ceiling.
    pub(super) fn effective(&self) -> Priority {
        if self.in_protocol {
            self.home.max(self.priority)
        } else {
            self.priority
        }
    }
}

/// The machine's CPIs: their pools' threads and queues, and the periodic tasks' job logs.
pub(super) struct Components {
    costs: ProtocolCosts,
    /// Per task of the scenario (a pool thread is one): its protocol state.
    pub(super) threads: Vec<Thread>,
    /// Per CPI: its pool's threads (task indices), by pool index.
    pools: Vec<Vec<usize>>,
    /// Per CPI: its endpoint's waiting pool threads, first come first served.
    idle: Vec<VecDeque<u32>>,
    /// Per CPI: requests that found no waiting thread (a pool sized too small).
    overflow: Vec<VecDeque<(Request, usize, bool)>>,
    /// Per CPI: callers of the requests queued in a fixed CPI, in its queue's order.
    fixed_callers: Vec<VecDeque<(usize, bool)>>,
    /// Per task: its job log, if it is a periodic script.
    pub(super) logs: Vec<Option<JobLog>>,
    /// Per core: the logs with a job pending, and the quiet ones by next release.
    pub(super) index: JobIndex,
    /// The scheduling contexts out of budget, by id: those a replenishment can concern.
    pub(super) depleted: BTreeSet<u32>,
    /// The threads off the run queue for want of budget, by index.
    pub(super) throttled: BTreeSet<u32>,
    /// The threads ready in the scheduler (not blocked), by core, effective priority and
    /// index: a region's test of what outranks its thread looks at those above it only.
    pub(super) ready: BTreeSet<(u16, Priority, u32)>,
    pub(super) record_jobs: bool,
    pub(super) pool_exhausted: u64,
    pub(super) protocol_errors: u64,
    /// Some task has a scheduling context (a reservation on a fixed-priority core).
    pub(super) has_contexts: bool,
    /// The cores of the tasks with scheduling contexts (a component system's core): only
    /// their decisions go through the contexts, and each sees its own core's threads.
    context_cores: Vec<u16>,
    /// Per core: the non-preemptive region of the context on it (SPR section III-F). Every
    /// thread running on that context keeps the core until its end against what the region
    /// defers: a request that passes the context to a server thread does not end the region,
    /// nor start another, and neither does the reply.
    pub(super) regions: Vec<Option<Region>>,
    /// Per core: the context that ran last (its task's index, `None` for a thread without
    /// one) and until when: `tau_p` of Algorithm 2, line 5, when that was now (else the core
    /// idled).
    pub(super) ran: Vec<(Option<usize>, Instant)>,
}

/// A context's non-preemptive region.
#[derive(Clone, Copy, Debug)]
pub(super) struct Region {
    /// The context, by its task's index.
    pub(super) context: usize,
    /// Its first dispatch after another context ran (Algorithm 2, line 5).
    pub(super) start: Instant,
    /// `start + eta`.
    pub(super) end: Instant,
}

impl Components {
    /// The protocols' steps cost nothing (a platform's dispatcher takes their real time).
    pub(super) fn free_steps(&mut self) {
        self.costs = ProtocolCosts::ZERO;
    }

    /// `result`'s value; a refused step counts as a protocol error (no effect is dropped
    /// unseen), and gives nothing.
    fn counted<T>(&mut self, result: Result<T, SyscallError>) -> Option<T> {
        result.map_err(|_| self.protocol_errors += 1).ok()
    }

    /// Context `context` is out of budget (`depleted`) or not.
    pub(super) fn note_depleted(&mut self, context: u32, depleted: bool) {
        if depleted {
            self.depleted.insert(context);
        } else {
            self.depleted.remove(&context);
        }
    }

    /// Thread `t` is ready in the scheduler (`blocked` false) or not.
    pub(super) fn set_blocked(&mut self, t: usize, blocked: bool) {
        let Some(thread) = self.threads.get_mut(t) else {
            return;
        };
        thread.blocked = blocked;
        let key = (thread.core, thread.effective(), t as u32);
        if blocked {
            self.ready.remove(&key);
        } else {
            self.ready.insert(key);
        }
    }

    /// Thread `t`'s TCB priority and whether it runs protocol steps (at the ceiling), which
    /// make its effective priority; a ready thread moves to its new place among the ready.
    pub(super) fn set_priority(&mut self, t: usize, priority: Priority, in_protocol: bool) {
        let Some(thread) = self.threads.get_mut(t) else {
            return;
        };
        let was = (thread.core, thread.effective(), t as u32);
        thread.priority = priority;
        thread.in_protocol = in_protocol;
        let now = (thread.core, thread.effective(), t as u32);
        if !thread.blocked && was != now {
            self.ready.remove(&was);
            self.ready.insert(now);
        }
    }

    /// The threads ready on `core` whose effective priority is above `priority`.
    pub(super) fn ready_above(
        &self,
        core: u16,
        priority: Priority,
    ) -> impl Iterator<Item = usize> + '_ {
        let above = priority.0.checked_add(1).map(Priority);
        above
            .into_iter()
            .flat_map(move |low| {
                self.ready
                    .range((core, low, 0)..=(core, Priority(u8::MAX), u32::MAX))
            })
            .map(|&(_, _, t)| t as usize)
    }

    /// Thread `t` is off the run queue for want of budget (`throttled`) or not.
    pub(super) fn set_throttled(&mut self, t: usize, throttled: bool) {
        if let Some(thread) = self.threads.get_mut(t) {
            thread.throttled = throttled;
        }
        if throttled {
            self.throttled.insert(t as u32);
        } else {
            self.throttled.remove(&(t as u32));
        }
    }

    /// `core`'s decisions go through the scheduling contexts: some task on it has one.
    pub(super) fn decides(&self, core: u16) -> bool {
        self.context_cores.contains(&core)
    }

    /// The CPIs of `scenario`, their protocol steps at its cost table's IPC rows, and the
    /// job logs of its periodic tasks (each job's record kept when `record_jobs`).
    /// `has_contexts`: some task has a scheduling context ([`super::has_contexts`]).
    pub(super) fn build(
        scenario: &Scenario,
        record_jobs: bool,
        has_contexts: bool,
    ) -> Box<Components> {
        let mut threads: Vec<Thread> = scenario
            .tasks
            .iter()
            .map(|task| {
                let priority = task.priority.unwrap_or(Priority::MIN);
                Thread {
                    role: Role::Task,
                    core: task.core,
                    home: priority,
                    priority,
                    in_protocol: false,
                    blocked: true,
                    throttled: false,
                    timer_woken: None,
                    cont: Cont::Step,
                    pc: 0,
                    serving: None,
                }
            })
            .collect();
        let mut pools = Vec::new();
        let mut idle = Vec::new();
        for (c, spec) in scenario.cpis.iter().enumerate() {
            for (index, &t) in spec.pool.iter().enumerate() {
                if let Some(thread) = threads.get_mut(t) {
                    thread.role = Role::Pool {
                        cpi: c,
                        index: index as u32,
                    };
                }
            }
            pools.push(spec.pool.clone());
            idle.push((0..spec.pool.len() as u32).collect());
        }
        let logs: Vec<Option<JobLog>> = scenario
            .tasks
            .iter()
            .zip(&threads)
            .map(|(task, thread)| {
                let log = JobLog::of(&task.behaviour, thread.home, task.core)?;
                (thread.role == Role::Task).then_some(log)
            })
            .collect();
        let index = JobIndex::new(&logs, usize::from(scenario.cores));
        let n = scenario.cpis.len();
        let mut context_cores: Vec<u16> = (0..scenario.tasks.len())
            .filter(|&task| has_contexts && scenario.kernel_context(task).is_some())
            .map(|task| scenario.tasks[task].core)
            .collect();
        context_cores.sort_unstable();
        context_cores.dedup();
        Box::new(Components {
            costs: ProtocolCosts::of(&scenario.cost),
            threads,
            pools,
            idle,
            overflow: vec![VecDeque::new(); n],
            fixed_callers: vec![VecDeque::new(); n],
            logs,
            index,
            depleted: BTreeSet::new(),
            throttled: BTreeSet::new(),
            ready: BTreeSet::new(),
            record_jobs,
            pool_exhausted: 0,
            protocol_errors: 0,
            has_contexts,
            context_cores,
            regions: vec![None; usize::from(scenario.cores)],
            ran: vec![(None, Instant::ZERO); usize::from(scenario.cores)],
        })
    }
}

impl Machine<'_> {
    /// The protocols' steps cost nothing from now.
    pub(super) fn free_protocol_steps(&mut self) {
        if let Some(comps) = self.cpis.as_deref_mut() {
            comps.free_steps();
        }
    }

    /// The running pool thread `task` goes on at `now`: runs its procedure up to the next
    /// stretch of time, or makes the kernel entry its next protocol step needs.
    pub(super) fn continue_pool(
        &mut self,
        core: u16,
        now: Instant,
        task: TaskId,
    ) -> Result<Option<CoreStep>, SimError> {
        let t = task.index();
        loop {
            if self.stretch_pending(core, now, task) {
                return Ok(None);
            }
            let Some(comps) = self.cpis.as_deref_mut() else {
                return Ok(None);
            };
            let thread = &mut comps.threads[t];
            let op = match thread.cont {
                Cont::Step => {
                    let Role::Pool { cpi, .. } = thread.role else {
                        return Ok(None);
                    };
                    let body = match thread.serving {
                        Some(s) => self.scenario.cpis[cpi]
                            .cpi
                            .body_for(s.request.requestor.index()),
                        None => &[],
                    };
                    match body.get(thread.pc) {
                        None => CpiOp::BodyDone,
                        Some(CpiStep::Execute(d)) if d.is_zero() => {
                            thread.pc += 1;
                            continue;
                        }
                        Some(CpiStep::Execute(d)) => {
                            thread.cont = Cont::StepDone;
                            self.start_stretch(task, *d, None);
                            continue;
                        }
                        Some(CpiStep::Request(c)) => CpiOp::Call(*c),
                    }
                }
                Cont::StepDone => {
                    thread.pc += 1;
                    thread.cont = Cont::Step;
                    continue;
                }
                Cont::EntryDone { waiting } => CpiOp::EntryDone { waiting },
                Cont::ExitDone => CpiOp::ExitDone,
                Cont::AfterReply => CpiOp::AfterReply,
            };
            return Ok(Some(CoreStep::Enter(Entry::Cpi { task, op })));
        }
    }

    /// The kernel entry of `op` by `task` on `core` at `now`: returns the thread it suspends,
    /// if any.
    #[cold]
    #[inline(never)]
    pub(super) fn cpi_entry(
        &mut self,
        core: u16,
        now: Instant,
        task: TaskId,
        op: CpiOp,
        work: &mut Work,
    ) -> Result<Option<TaskId>, SimError> {
        let Some(mut comps) = self.cpis.take() else {
            return Ok(None);
        };
        let mut at = At { core, now, work };
        let result = self.cpi_op(&mut comps, &mut at, task.index(), op);
        self.cpis = Some(comps);
        result
    }

    fn cpi_op(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        r: usize,
        op: CpiOp,
    ) -> Result<Option<TaskId>, SimError> {
        match op {
            CpiOp::Call(c) => {
                self.call(comps, at, r, c)?;
                Ok(Some(TaskId(r as u32)))
            }
            CpiOp::EntryDone { waiting } => {
                self.set_in_protocol(comps, at, r, false)?;
                if waiting {
                    // Fig. 4 step 6: wait for the signal.
                    self.block(comps, at, r)?;
                    return Ok(Some(TaskId(r as u32)));
                }
                // Out of the protocol steps, down to the request's priority (Fig. 4 step
                // 13, Fig. 5 step 5): the kernel reschedules here, so the procedure starts
                // only when nothing higher is ready.
                let thread = &mut comps.threads[r];
                thread.pc = 0;
                thread.cont = Cont::Step;
                Ok(None)
            }
            CpiOp::BodyDone => {
                let cost = self.reply_cost(comps, r);
                comps.threads[r].cont = Cont::ExitDone;
                self.start_stretch(TaskId(r as u32), cost, None);
                self.set_in_protocol(comps, at, r, true)?;
                Ok(None)
            }
            CpiOp::ExitDone => self.exit_done(comps, at, r),
            CpiOp::AfterReply => {
                if let Role::Pool { cpi, index } = comps.threads[r].role {
                    let reply = NestedReply {
                        cpi: CpiId(cpi as u32),
                        thread: index,
                    };
                    let effects = self.objects.call(reply, at.work);
                    self.apply_or_count(comps, at, cpi, effects)?;
                }
                // Back at the (inherited) priority (Fig. 4 step 20, Fig. 5 step 12): a
                // reschedule point, as for any priority drop.
                comps.threads[r].cont = Cont::StepDone;
                Ok(None)
            }
        }
    }

    /// The Table 2 reply row's cost of the request pool thread `r` serves: the "PIP to ..."
    /// row when an inherited CPI's thread sent it, the locked one when the reply hands the
    /// lock over.
    fn reply_cost(&self, comps: &Components, r: usize) -> Duration {
        let Role::Pool { cpi, index } = comps.threads[r].role else {
            return Duration::ZERO;
        };
        let Some(state) = self.objects.kernel().cpi(CpiId(cpi as u32)) else {
            return Duration::ZERO;
        };
        let from_pip = comps.threads[r].serving.is_some_and(|s| s.from_pip);
        let row = comps
            .costs
            .row(state.protocol(), from_pip, state.reply_hands_over(index));
        row.reply
    }

    /// Thread `r` sends a request to CPI `c` and waits for the reply.
    fn call(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        r: usize,
        c: usize,
    ) -> Result<(), SimError> {
        let sent = match comps.threads[r].role {
            Role::Task => Ok((
                Request {
                    priority: comps.threads[r].home,
                    requestor: TaskId(r as u32),
                },
                false,
            )),
            Role::Pool { cpi, index } => {
                let from_pip = self.cpi_protocol(cpi) == Some(CpiProtocol::Inherited);
                let send = SendNested {
                    cpi: CpiId(cpi as u32),
                    thread: index,
                    downstream: CpiId(c as u32),
                };
                match self.objects.call(send, at.work) {
                    Ok((request, effects)) => {
                        let mut extra = Duration::ZERO;
                        self.apply(comps, at, cpi, effects, &mut extra)?;
                        Ok((request, from_pip))
                    }
                    Err(error) => Err(error),
                }
            }
        };
        if comps.threads[r].role == Role::Task {
            // A task's thread calls while it runs, so it is ready in the scheduler (its
            // flag only follows it between a call and the reply).
            comps.set_blocked(r, false);
        }
        self.block(comps, at, r)?;
        let Some((request, from_pip)) = comps.counted(sent) else {
            return Ok(());
        };
        self.deliver(comps, at, c, request, r, from_pip)
    }

    fn cpi_protocol(&self, c: usize) -> Option<CpiProtocol> {
        let cpi = self.objects.kernel().cpi(CpiId(c as u32))?;
        Some(cpi.protocol())
    }

    /// A request reaches CPI `c`'s endpoint: a waiting pool thread takes it and runs the
    /// protocol's call steps at the ceiling.
    fn deliver(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        c: usize,
        request: Request,
        caller: usize,
        from_pip: bool,
    ) -> Result<(), SimError> {
        let Some(state) = self.objects.kernel().cpi(CpiId(c as u32)) else {
            comps.protocol_errors += 1;
            return Ok(());
        };
        let (pooled, protocol) = (state.is_pooled(), state.protocol());
        let idle = comps.idle[c].front().copied();
        if pooled && idle.is_none() {
            comps.pool_exhausted += 1;
            comps.overflow[c].push_back((request, caller, from_pip));
            return Ok(());
        }
        let invoke = InvokeCpi {
            cpi: CpiId(c as u32),
            idle,
            request,
        };
        match self.objects.call(invoke, at.work) {
            Ok(Invoked::Served {
                thread: k,
                effects,
                waits,
                contended,
            }) => {
                // A pool thread waits at most once; usually it is the one offered, the first.
                if let Some(at) = comps.idle[c].iter().position(|&i| i == k) {
                    comps.idle[c].remove(at);
                }
                let Some(&t) = comps.pools[c].get(k as usize) else {
                    comps.protocol_errors += 1;
                    return Ok(());
                };
                comps.threads[t].serving = Some(Serving {
                    request,
                    caller,
                    from_pip,
                });
                self.donate(at, caller, t);
                let mut extra = Duration::ZERO;
                self.apply(comps, at, c, effects, &mut extra)?;
                let call = comps.costs.row(protocol, from_pip, contended).call;
                self.start_entry(comps, at, t, call.saturating_add(extra), waits)
            }
            // Queued on the endpoint behind the request being served (FIFO).
            Ok(Invoked::Queued) => {
                comps.fixed_callers[c].push_back((caller, from_pip));
                Ok(())
            }
            refused => {
                comps.counted(refused);
                Ok(())
            }
        }
    }

    /// Pool thread `t` took a request: it runs the call steps (`cost`) at the ceiling.
    fn start_entry(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
        cost: Duration,
        waiting: bool,
    ) -> Result<(), SimError> {
        comps.threads[t].cont = Cont::EntryDone { waiting };
        self.start_stretch(TaskId(t as u32), cost, None);
        self.set_in_protocol(comps, at, t, true)?;
        self.make_ready(comps, at, t)
    }

    /// The reply steps are done: release the CPI, reply to the caller, and wait for (or take)
    /// the next request.
    fn exit_done(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        r: usize,
    ) -> Result<Option<TaskId>, SimError> {
        let Role::Pool { cpi: c, index } = comps.threads[r].role else {
            return Ok(None);
        };
        let serving = comps.threads[r].serving.take();
        self.give_back(at, r);
        let reply = ReplyCpi {
            cpi: CpiId(c as u32),
            thread: index,
        };
        let mut next_fixed = None;
        match self.objects.call(reply, at.work) {
            // A fixed CPI's one effect then wakes this very thread for the queued request,
            // which it takes below.
            Ok(Replied {
                next: Some(next), ..
            }) => next_fixed = Some(next),
            Ok(Replied { effects, .. }) => self.apply_or_count(comps, at, c, Ok(effects))?,
            Err(_) => comps.protocol_errors += 1,
        }
        if let Some(s) = serving {
            self.answer(comps, at, s.caller)?;
        }
        if let Some(request) = next_fixed {
            // The fixed thread takes the next queued request at once, still at the ceiling.
            let (caller, from_pip) = comps.fixed_callers[c].pop_front().unwrap_or((r, false));
            comps.threads[r].serving = Some(Serving {
                request,
                caller,
                from_pip,
            });
            self.donate(at, caller, r);
            comps.threads[r].cont = Cont::EntryDone { waiting: false };
            let cost = comps.costs.fixed.call;
            self.start_stretch(TaskId(r as u32), cost, None);
            return Ok(None);
        }
        self.set_in_protocol(comps, at, r, false)?;
        self.block(comps, at, r)?;
        comps.idle[c].push_back(index);
        if let Some((request, caller, from_pip)) = comps.overflow[c].pop_front() {
            self.deliver(comps, at, c, request, caller, from_pip)?;
        }
        Ok(Some(TaskId(r as u32)))
    }

    /// The reply reaches thread `caller`, which sent the request.
    fn answer(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        caller: usize,
    ) -> Result<(), SimError> {
        comps.threads[caller].cont = Cont::AfterReply;
        self.make_ready(comps, at, caller)
    }

    fn apply_or_count(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        c: usize,
        effects: Result<Effects, SyscallError>,
    ) -> Result<(), SimError> {
        let Some(effects) = comps.counted(effects) else {
            return Ok(());
        };
        // A reply's `nest` hops are charged to no thread: only a call's are, to its server.
        let mut unspent = Duration::ZERO;
        self.apply(comps, at, c, effects, &mut unspent)
    }

    /// Carries out the effects of a step of CPI `c`; `extra` collects the cost of the `nest`
    /// hops, which the thread that caused them spends.
    fn apply(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        c: usize,
        effects: Effects,
        extra: &mut Duration,
    ) -> Result<(), SimError> {
        for effect in effects.iter() {
            match effect {
                Effect::SetPriority { thread, priority } => {
                    match comps.pools[c].get(thread as usize).copied() {
                        Some(t) => {
                            let in_protocol = comps.threads[t].in_protocol();
                            comps.set_priority(t, priority, in_protocol);
                            self.requeue(comps, at, t)?;
                        }
                        None => comps.protocol_errors += 1,
                    }
                }
                Effect::Wake { thread } => match comps.pools[c].get(thread as usize).copied() {
                    Some(t) => self.wake_holder(comps, at, t)?,
                    None => comps.protocol_errors += 1,
                },
                Effect::Nest {
                    cpi,
                    priority,
                    requestor,
                } => {
                    let Some(downstream) = self.cpi_protocol(cpi.0 as usize) else {
                        // No effect is dropped unseen: a hop to no CPI is an error.
                        comps.protocol_errors += 1;
                        continue;
                    };
                    let hop = match downstream {
                        CpiProtocol::Inherited => comps.costs.nest.to_inherited,
                        _ => comps.costs.nest.to_propagated,
                    };
                    let nest = Nest {
                        cpi,
                        priority,
                        requestor,
                    };
                    // Nested inheritance stops at a fixed CPI (section 4.2): no hop.
                    if let Ok(Some(more)) = self.objects.call(nest, at.work) {
                        *extra = extra.saturating_add(hop);
                        self.apply(comps, at, cpi.0 as usize, more, extra)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A waiter of an inherited CPI got the lock: it wakes at the ceiling, where it runs Fig.
    /// 4 steps 7-9 itself (section 4.2: "the signaled thread ... proceed[s] through steps
    /// (7)-(9)" at the priority ceiling), then drops to its request's priority to run the
    /// procedure, as a thread leaving its call steps does.
    fn wake_holder(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
    ) -> Result<(), SimError> {
        let thread = &mut comps.threads[t];
        if thread.cont == (Cont::EntryDone { waiting: true }) && !thread.is_blocked() {
            // Still spending its call steps: it will not wait after all.
            thread.cont = Cont::EntryDone { waiting: false };
            return Ok(());
        }
        thread.cont = Cont::EntryDone { waiting: false };
        self.tasks[t].executing = None;
        self.set_in_protocol(comps, at, t, true)?;
        self.make_ready(comps, at, t)
    }

    /// Thread `to` takes a request from thread `from`: it runs on `from`'s context until it
    /// replies. The machine names only its own threads, so the kernel cannot refuse.
    fn donate(&mut self, at: &mut At<'_>, from: usize, to: usize) {
        let donate = Donate {
            from: TaskId(from as u32),
            to: TaskId(to as u32),
        };
        let donated = self.objects.call(donate, at.work);
        debug_assert!(donated.is_ok(), "both threads are the machine's");
    }

    /// Thread `t` is done with the request it served: the context goes back with the reply
    /// (a pool thread has none of its own).
    fn give_back(&mut self, at: &mut At<'_>, t: usize) {
        let returned = self.objects.call(
            Return {
                thread: TaskId(t as u32),
            },
            at.work,
        );
        debug_assert!(returned.is_ok(), "the thread is the machine's");
    }

    // ----- the core's scheduler -------------------------------------------------------------

    pub(super) fn make_ready(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
    ) -> Result<(), SimError> {
        comps.threads[t].timer_woken = None;
        if comps.has_contexts && self.context_depleted(t) {
            // Algorithm 1, lines 7-9: no budget, so it waits for the replenishment.
            comps.set_throttled(t, true);
            return Ok(());
        }
        if !comps.threads[t].is_blocked() {
            return Ok(());
        }
        comps.set_blocked(t, false);
        let task = TaskId(t as u32);
        let event = Event::Activate {
            task,
            wake: Wake::SameJob,
        };
        self.tell(at.core, at.now, "activate", task, event, at.work)
    }

    pub(super) fn block(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
    ) -> Result<(), SimError> {
        comps.set_throttled(t, false);
        if comps.threads[t].is_blocked() {
            return Ok(());
        }
        comps.set_blocked(t, true);
        let task = TaskId(t as u32);
        self.tell(
            at.core,
            at.now,
            "block",
            task,
            Event::Block { task },
            at.work,
        )
    }

    pub(super) fn set_in_protocol(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
        in_protocol: bool,
    ) -> Result<(), SimError> {
        let priority = comps.threads[t].priority();
        comps.set_priority(t, priority, in_protocol);
        self.requeue(comps, at, t)
    }

    /// `seL4_TCB_SetPriority` with the thread's effective priority: a queued thread moves to
    /// the tail of it, the running one stays at its head.
    pub(super) fn requeue(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        t: usize,
    ) -> Result<(), SimError> {
        let priority = comps.threads[t].effective();
        let task = TaskId(t as u32);
        let event = Event::SetPriority { task, priority };
        self.tell(at.core, at.now, "set-priority", task, event, at.work)
    }
}

/// Where a kernel entry is: its core, its instant and the scheduler's work record.
pub(super) struct At<'w> {
    pub(super) core: u16,
    pub(super) now: Instant,
    pub(super) work: &'w mut Work,
}
