//! Passive servers on the machine. An `invoke` step donates the caller's scheduling context
//! to the server for one operation (seL4 MCS's passive server): the core's scheduler goes on
//! seeing the caller, ready or running at its own priority and on its own budget, while the
//! server's operation executes. The gate orders the callers that find the server busy
//! (FIFO-IPC or PRIO-IPC, the MC-IPC paper's section VI queues), and the reply hands the
//! server to the next request.
//!
//! What a waiting caller's context does depends on the server:
//! - without bandwidth inheritance the caller blocks: the request in service progresses only
//!   while its own caller's context is scheduled and has budget;
//! - with it (MC-IPC paper, section III: the server "is dispatched using R_j's budget whenever
//!   T_i would have been dispatched"; Fig. 1, line 19) the caller stays ready, and whenever the
//!   core's scheduler dispatches its context, that context runs the operation in service,
//!   charged to its own budget.
//!
//! An mc-ipc gate (which always inherits) also acts on the core scheduler's budget notices
//! (every policy with budgets reports them): when a caller's budget runs out, `mc_abort`
//! (Fig. 1, lines 44-59) prunes its waiting request, so no other caller's budget serves it,
//! or, if it is in service, lets it complete; when the budget is back, the pruned request is
//! issued again (section IV-A). With `pruned_to_background` (section V) the pruned request
//! waits in the gate's background queue meanwhile, where the server may take it when no
//! real-time request waits (lenders then run it; its caller lends again with its budget);
//! one still there at the replenishment is reissued from it. A best-effort member's request
//! always waits there (Fig. 1, lines 8-9). FIFO-IPC and PRIO-IPC gates abort nothing.
//!
//! An operation runs on one core at a time. With inheritance, callers on several cores may
//! lend at once: the first dispatched runs the operation, and a lender dispatched on another
//! core meanwhile spins, its budget draining with nothing to run (the MC-IPC paper's
//! assumption A2, a dispatched reservation drains whether or not anything runs in it; each
//! core outside every `[[cluster]]` is a cluster of one at an mc-ipc gate, and each
//! `[[cluster]]` one of its m cores). When the running context stops (preempted,
//! out of budget, the reply), the cores where lenders spin take an interrupt, and the first
//! to take it runs the operation on. Without inheritance only the request's own caller runs
//! it, and a reply that hands the server to a caller on another core raises an interrupt
//! there, which wakes it on its own core.

use bulwark_core::ipc::mc_ipc::{Aborted, Client};
use bulwark_core::ipc::GateProtocol;
use bulwark_core::kernel::{
    Abort, GateId, InvokeGate, Reissue, ReplyGate, Syscall, TransferToBackground, Wait,
};
use bulwark_core::reservation::clustered::{deadline_urgency, fixed_priority_urgency};
use bulwark_core::{Duration, Event, Instant, Notice, Priority, TaskId, Wake, Work};

use bulwark_spec::ServerStep;

use crate::kernel_objects::gate_cluster;

use super::{Entry, Machine, Occupant, Step};
use crate::behaviour::draw;
use crate::event::EventKind;
use crate::record::InvocationRecord;
use crate::SimError;

/// The request a server is serving: where its body stands (the index of the next step, and
/// what is left of the run in progress), and the server whose body made it, for a nested
/// call, whose reply returns the context there.
#[derive(Clone, Copy, Debug)]
pub(super) struct InService {
    next: usize,
    /// What is left of the operation's current run.
    pub(super) left: Duration,
    parent: Option<usize>,
    /// The core whose context runs the operation now, if one does.
    pub(super) runner: Option<u16>,
}

/// A call not answered yet, kept for its [`InvocationRecord`].
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenInvocation {
    server: usize,
    invoked: Instant,
    issued: Instant,
    reissues: u32,
    exhausted: bool,
    drained_at_invoke: Duration,
    drained_at_issue: Duration,
}

impl Machine<'_> {
    /// `task` invokes `server` at `now`, in the kernel on `core`. True when `task` blocks at
    /// the gate (the server is busy and does not inherit bandwidth).
    #[cold]
    #[inline(never)]
    pub(super) fn invoke(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<bool, SimError> {
        let t = &mut self.tasks[task.index()];
        t.metrics.invocations += 1;
        // A call from a server's body: the context stops running that body until the reply.
        t.lends_to = None;
        if self.recording_invocations() {
            let drained = self.context_drained(task, now);
            self.open_invocations[task.index()] = Some(OpenInvocation {
                server,
                invoked: now,
                issued: now,
                reissues: 0,
                exhausted: false,
                drained_at_invoke: drained,
                drained_at_issue: drained,
            });
        }
        if self.issue(core, task, server, now, work)? {
            return Ok(false);
        }
        let inherits = self.scenario.servers[server].bandwidth_inheritance;
        let t = &mut self.tasks[task.index()];
        t.waiting = Some((server, now));
        if inherits {
            // Fig. 1, line 19: the server may consume this caller's budget from now on.
            t.lends_to = Some(server);
            return Ok(false);
        }
        if self.member_of[task.index()].is_none() {
            self.tell(core, now, "block", task, Event::Block { task }, work)?;
        }
        // A cluster member's reservation stays active with its job: selected, it drains
        // while its thread waits (A2), which the kernel resolves to nothing to run.
        Ok(true)
    }

    /// `server`'s operation in service ended at `now` on `task`'s context: the server replies
    /// to the request's caller and takes the next request, if one waits.
    #[cold]
    #[inline(never)]
    pub(super) fn reply(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let gate = GateId(server as u32);
        let caller = self.gate_call(ReplyGate { gate }, "reply", task, now, work)?;
        self.answered_in_cluster(core);
        if self.recording_invocations() {
            self.record_invocation(caller, now);
        }
        // A nested request's reply returns the context to the body that made it.
        let parent = self.in_service[server]
            .take()
            .and_then(|request| request.parent);
        if self.scenario.servers[server].bandwidth_inheritance {
            self.answer_spinner(core, caller, now);
            self.tasks[caller.index()].end_drain();
        }
        let t = &mut self.tasks[caller.index()];
        t.serving = parent;
        t.lends_to = parent;
        if self.scenario.servers[server].priority.is_some() {
            // Back from the server's priority to its own (validated: a fixed-priority core).
            let own = t.spec.priority.unwrap_or(Priority::MIN);
            let event = Event::SetPriority {
                task: caller,
                priority: own,
            };
            self.tell(core, now, "set-priority", caller, event, work)?;
        }
        self.serve_next(core, task, server, now, work)
    }

    /// The reply on `core` answers `caller`, which may be spinning on its own core, another
    /// one, while a context there ran its request: its spin is charged up to `now` (so its
    /// drain counts it) and its core takes an interrupt, so that it goes on with its job.
    fn answer_spinner(&mut self, core: u16, caller: TaskId, now: Instant) {
        let Some(home) = self.home(caller) else {
            return;
        };
        if home == core {
            return;
        }
        let Occupant::Running { task, since } = self.cores[usize::from(home)].occupant else {
            return;
        };
        if task != caller {
            return;
        }
        self.charge(home, caller, since, now);
        self.cores[usize::from(home)].occupant = Occupant::Running { task, since: now };
        self.interrupt(home, now);
    }

    /// The idle `server` takes its next request, if one waits (`mc_wait`, made by `task`'s
    /// call), and draws its first run: the caller's context runs it from now. A caller that
    /// blocked is woken for it, continuing its job.
    fn serve_next(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let gate = GateId(server as u32);
        let next = self.gate_call(Wait { gate }, "wait", task, now, work)?;
        let Some(caller) = next else {
            return Ok(());
        };
        let t = &mut self.tasks[caller.index()];
        // The first run is drawn now, from the caller's stream, as every later one is.
        let mut request = InService {
            next: 0,
            left: Duration::ZERO,
            parent: t.serving,
            runner: None,
        };
        // The operation the call asked for, if any, is the body's one run (validated).
        let first = match self.requested[caller.index()].as_ref() {
            Some(asked) => Some(asked),
            None => match self.scenario.servers[server].body.first() {
                Some(ServerStep::Run(run)) => Some(run),
                _ => None,
            },
        };
        if let Some(run) = first {
            request.next = 1;
            request.left = draw(run, &mut t.rng);
        }
        self.in_service[server] = Some(request);
        if self.reported {
            // A new request is a new stretch for the server's thread, whatever it drew.
            self.serials[self.tasks.len() + server] += 1;
        }
        // The lenders spinning elsewhere may run the new request.
        self.kick_spinners(core, server, now);
        let t = &mut self.tasks[caller.index()];
        t.serving = Some(server);
        // A pruned request served from the background queue (section V) has a caller that
        // never blocked: it lends again once its budget is back, and its drain starts now.
        let from_background = std::mem::take(&mut t.pruned);
        t.in_background = false;
        if from_background {
            t.drain_from = t.metrics.executed_ns;
        }
        let blocked = t.lends_to.is_none() && !from_background;
        t.lends_to = Some(server);
        let Some((_, since)) = t.waiting.take() else {
            // It has just invoked, and runs: at the server's priority, if it has one.
            return self.raise(core, server, caller, now, work);
        };
        t.metrics
            .gate_wait
            .record(now.saturating_duration_since(since));
        if !blocked {
            return Ok(());
        }
        if let Some(cluster) = self.member_of[caller.index()] {
            // Its reservation never stopped: the core selecting it runs it again.
            self.wake_member(core, cluster, caller, now);
            return Ok(());
        }
        let home = t.spec.core;
        if home != core {
            // The caller's core takes an interrupt and wakes it there (its scheduler is that
            // core's): at its next kernel entry, which the interrupt makes now (or when its
            // kernel returns), charged as a timer interrupt.
            self.cores[home as usize].woken.push(caller);
            self.interrupt(home, now);
            return Ok(());
        }
        self.raise(core, server, caller, now, work)?;
        let event = Event::Activate {
            task: caller,
            wake: Wake::SameJob,
        };
        self.tell(core, now, "activate", caller, event, work)
    }

    /// `caller`'s request to `server` is taken: its thread takes the server's priority, if
    /// the server has one (an seL4 MCS passive server's own priority, the IPCP ceiling).
    fn raise(
        &mut self,
        core: u16,
        server: usize,
        caller: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let Some(priority) = self.scenario.servers[server].priority else {
            return Ok(());
        };
        let event = Event::SetPriority {
            task: caller,
            priority,
        };
        self.tell(core, now, "set-priority", caller, event, work)
    }

    /// `core`'s scheduler reported budget notices at `now` (there are mc-ipc gates): a
    /// caller's exhausted budget aborts its request, a replenished one reissues it.
    #[cold]
    #[inline(never)]
    pub(super) fn act_on_notices(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let mut notices = std::mem::take(&mut self.notices);
        self.scheduler_take_notices(core, &mut notices);
        // By task, an exhaustion before a replenishment: a soft CBS server's request is
        // aborted and issued again at once, with its postponed deadline. A mode change is
        // taken as an exhaustion, and the request is issued again at once, at its new
        // urgency, if the reservation still has budget (MC-IPC paper, section VII).
        let acted = notices.iter().try_for_each(|&notice| match notice {
            Notice::BudgetExhausted { task } => self.abort_request(core, task, now, work),
            Notice::Replenished { task } => self.reissue_request(core, task, now, work),
            Notice::ModeChange { task } => {
                self.abort_request(core, task, now, work)?;
                if self.member_is_eligible(task) {
                    self.reissue_request(core, task, now, work)?;
                }
                Ok(())
            }
            Notice::ModeSwitch => Ok(()),
        });
        notices.clear();
        self.notices = notices;
        acted
    }

    /// `mc_abort` (Fig. 1, lines 44-59) for `task`, whose budget ran out, if its request is
    /// at an mc-ipc gate: a waiting request is pruned (no caller's budget serves it until it
    /// is reissued); one in service is left to complete (local wait, line 56).
    fn abort_request(
        &mut self,
        core: u16,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let t = &self.tasks[task.index()];
        let server = match (t.waiting, t.serving) {
            (Some((server, _)), _) if !t.pruned => server,
            (None, Some(server)) => server,
            _ => return Ok(()),
        };
        if self.scenario.servers[server].gate != GateProtocol::McIpc {
            return Ok(());
        }
        let gate = GateId(server as u32);
        let aborted = self.gate_call(Abort { gate, task }, "abort", task, now, work)?;
        if let Some(open) = self
            .open_invocations
            .get_mut(task.index())
            .and_then(Option::as_mut)
        {
            open.exhausted = true;
        }
        if aborted == Aborted::Pruned {
            if let Some(cluster) = self.member_of[task.index()] {
                // Its context runs nothing now: a core of its cluster that runs it stops
                // (the cluster's decision, made before this notice, is taken anew there).
                self.take_off_other_cores(cluster, core, task, now);
            }
            self.stop_lending(task, now);
            let t = &mut self.tasks[task.index()];
            t.pruned = true;
            t.metrics.requests_aborted += 1;
            t.end_drain();
            if self.scenario.servers[server].pruned_to_background {
                // Section V: the pruned request waits in the background queue meanwhile.
                let cluster = self.gate_cluster_of(task);
                let transfer = TransferToBackground {
                    gate,
                    task,
                    cluster,
                };
                let moved = self.gate_call(transfer, "transfer", task, now, work)?;
                self.tasks[task.index()].in_background = moved;
            }
        }
        Ok(())
    }

    /// `task`'s budget is back: its pruned request is issued again (section IV-A), and its
    /// context lends to the server from now on; an idle server takes it at once.
    fn reissue_request(
        &mut self,
        core: u16,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let t = &mut self.tasks[task.index()];
        let Some((server, _)) = t.waiting.filter(|_| t.pruned) else {
            return Ok(());
        };
        t.pruned = false;
        t.lends_to = Some(server);
        if self.recording_invocations() {
            let drained = self.context_drained(task, now);
            if let Some(open) = self.open_invocations[task.index()].as_mut() {
                open.issued = now;
                open.reissues += 1;
                open.exhausted = false;
                open.drained_at_issue = drained;
            }
        }
        self.issue(core, task, server, now, work)?;
        if let Some(cluster) = self.member_of[task.index()] {
            // It can run again: on the core selecting its reservation.
            self.wake_member(core, cluster, task, now);
        }
        Ok(())
    }

    /// `task`'s request goes to `server`'s gate at `now` (`mc_invoke`), from its core's
    /// cluster and at its urgency; with inheritance its drain counts from here. True when the
    /// server was idle and takes it at once.
    fn issue(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<bool, SimError> {
        if self.scenario.servers[server].bandwidth_inheritance {
            let t = &mut self.tasks[task.index()];
            t.drain_from = t.metrics.executed_ns;
        }
        let gate = GateId(server as u32);
        let cluster = self.gate_cluster_of(task);
        // Fig. 1, lines 8-9: a best-effort client's request joins the background queue.
        let client = if self.member_is_best_effort(task) {
            Client::Background { cluster }
        } else {
            Client::RealTime {
                cluster,
                urgency: self.urgency(task),
            }
        };
        if std::mem::take(&mut self.tasks[task.index()].in_background) {
            // Section V: out of the background queue, at its proper urgency.
            self.gate_call(Reissue { gate, task, client }, "reissue", task, now, work)?;
        } else {
            self.gate_call(InvokeGate { gate, task, client }, "invoke", task, now, work)?;
        }
        if self.objects.kernel().served(gate).is_some() {
            return Ok(false);
        }
        if self.out_of_budget(core, task, server, now) {
            // An exhaustion at this instant comes before anything else then: the kernel acts
            // on it (pruning this request) before the idle server takes a request.
            self.deferred_wait = Some((server, task));
            return Ok(false);
        }
        self.serve_next(core, task, server, now, work)?;
        Ok(true)
    }

    /// True when `task` calls `server`'s mc-ipc gate with a context whose budget is out at
    /// `now` (a best-effort context has none to run out).
    fn out_of_budget(&self, core: u16, task: TaskId, server: usize, now: Instant) -> bool {
        self.scenario.servers[server].gate == GateProtocol::McIpc
            && !self.member_is_best_effort(task)
            && self.remaining_budget(core, task, now) == Some(Duration::ZERO)
    }

    /// The server whose request was deferred ([`Machine::deferred_wait`]) takes its next
    /// request, if it is still idle, now that the kernel has acted on the instant's notices.
    pub(super) fn take_deferred_request(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let Some((server, task)) = self.deferred_wait.take() else {
            return Ok(());
        };
        if self.in_service[server].is_some() {
            return Ok(());
        }
        self.serve_next(core, task, server, now, work)
    }

    /// Some recorder wants invocation records: the open calls are kept, one slot per task.
    fn recording_invocations(&self) -> bool {
        !self.open_invocations.is_empty()
    }

    /// What `task`'s scheduling context has drained by `now`: for a cluster member, the time
    /// its reservation has been selected (A2); else what it executed.
    fn context_drained(&self, task: TaskId, now: Instant) -> Duration {
        match self.member_of[task.index()] {
            Some(cluster) => self.clusters[cluster as usize].drained(task, now),
            None => Duration::from_nanos(self.tasks[task.index()].metrics.executed_ns),
        }
    }

    /// `caller`'s call is answered at `now`: its record goes to the recorder.
    #[cold]
    #[inline(never)]
    fn record_invocation(&mut self, caller: TaskId, now: Instant) {
        let Some(open) = self.open_invocations[caller.index()].take() else {
            return;
        };
        let drained = self.context_drained(caller, now);
        let record = InvocationRecord {
            task: caller,
            server: open.server,
            invoked: open.invoked,
            issued: open.issued,
            replied: now,
            reissues: open.reissues,
            drained: drained.saturating_sub(open.drained_at_invoke),
            drained_since_issue: drained.saturating_sub(open.drained_at_issue),
            exhausted: open.exhausted,
        };
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.invocation(&record);
        }
    }

    /// The gate cluster `task` calls from: its core's, or its `[[cluster]]`'s.
    fn gate_cluster_of(&self, task: TaskId) -> usize {
        let member_of = self.member_of[task.index()];
        gate_cluster(self.scenario, self.tasks[task.index()].spec.core, member_of)
    }

    /// `core` is in its kernel with wake-ups another core raised: the threads become ready.
    #[cold]
    #[inline(never)]
    pub(super) fn take_wake_ups(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        for task in std::mem::take(&mut self.cores[core as usize].woken) {
            if let Some(server) = self.tasks[task.index()].serving {
                self.raise(core, server, task, now, work)?;
            }
            let event = Event::Activate {
                task,
                wake: Wake::SameJob,
            };
            self.tell(core, now, "activate", task, event, work)?;
        }
        Ok(())
    }

    /// The killed `task` leaves the server serving its request (the request ends unanswered
    /// and the server takes the next one) or the gate its request waits at (pruned).
    #[cold]
    #[inline(never)]
    pub(super) fn leave_server(
        &mut self,
        core: u16,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        self.stop_lending(task, now);
        let t = &mut self.tasks[task.index()];
        // A pruned request is in no queue of its gate, unless it moved to the background.
        let pruned = std::mem::take(&mut t.pruned) && !std::mem::take(&mut t.in_background);
        if let Some((server, _)) = t.waiting.take().filter(|_| !pruned) {
            let gate = GateId(server as u32);
            self.gate_call(Abort { gate, task }, "abort", task, now, work)?;
        }
        // Every request it holds, innermost first: each reply returns to its parent's.
        while let Some(server) = self.tasks[task.index()].serving {
            self.reply(core, task, server, now, work)?;
        }
        Ok(())
    }

    /// `task`'s context, running, goes on with `server`'s operation at `now`: an event when
    /// it ends, or, ended, the reply.
    #[cold]
    #[inline(never)]
    pub(super) fn run_operation(
        &mut self,
        core: u16,
        now: Instant,
        task: TaskId,
        server: usize,
    ) -> Option<Step> {
        let refill = self.tasks[task.index()].refill_left;
        let mut progress = self.in_service[server]?;
        match progress.runner {
            // Running on another core: this lender spins until an interrupt.
            Some(other) if other != core => return None,
            Some(_) => {}
            None => {
                progress.runner = Some(core);
                self.in_service[server] = Some(progress);
                // Lenders elsewhere now spin: their cores may reclaim slack instead.
                self.reclaim_slack_again(core, now);
            }
        }
        if progress.left.is_zero() {
            // The body's next step: a run (drawn from the request's caller's stream), a
            // nested call, or the end and the reply.
            match self.scenario.servers[server].body.get(progress.next) {
                None => return Some(Step::Enter(Entry::Reply { task, server })),
                Some(ServerStep::Invoke(callee)) => {
                    progress.next += 1;
                    self.in_service[server] = Some(progress);
                    let server = *callee;
                    // A server's call asks for the callee's own operation.
                    self.requested[task.index()] = None;
                    return Some(Step::Enter(Entry::Invoke { task, server }));
                }
                Some(ServerStep::Run(run)) => {
                    let caller = self
                        .objects
                        .kernel()
                        .served(GateId(server as u32))
                        .unwrap_or(task);
                    progress.next += 1;
                    progress.left = draw(run, &mut self.tasks[caller.index()].rng);
                    self.in_service[server] = Some(progress);
                    if self.reported {
                        self.serials[self.tasks.len() + server] += 1;
                    }
                }
            }
        }
        let end = if self.reported {
            // The platform says when the operation's stretch is done (see `continue_task`).
            Instant::NEVER
        } else {
            now.saturating_add(refill).saturating_add(progress.left)
        };
        self.queue.set(end, EventKind::ExecutionDone { core });
        None
    }

    /// Charges `own` nanoseconds of execution of `task`'s context on `core` to `server`'s
    /// operation, if it ran the operation rather than spin for it.
    #[cold]
    #[inline(never)]
    pub(super) fn charge_operation(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        own: Duration,
    ) {
        if !self.runs_operation(core, server) {
            return;
        }
        self.tasks[task.index()].metrics.server_ns += own.as_nanos();
        if self.reported {
            // The stretch lasts until the platform says it is done.
            return;
        }
        if let Some(operation) = self.in_service[server].as_mut() {
            operation.left = operation.left.saturating_sub(own);
        }
    }

    /// True when `server` has an operation in service that no core but `core` runs.
    pub(super) fn operation_free_for(&self, server: usize, core: u16) -> bool {
        self.in_service[server]
            .is_some_and(|operation| operation.runner.is_none_or(|runner| runner == core))
    }

    /// True when `core` runs `server`'s operation.
    pub(super) fn runs_operation(&self, core: u16, server: usize) -> bool {
        self.in_service[server].is_some_and(|operation| operation.runner == Some(core))
    }

    /// `task`, lending on `core`, is no longer dispatched there at `now`: if it ran its
    /// server's operation, the operation stops, and lenders spinning on other cores are
    /// interrupted to take it over.
    #[cold]
    #[inline(never)]
    pub(super) fn leave_operation(&mut self, core: u16, task: TaskId, now: Instant) {
        let Some(server) = self.tasks[task.index()].lends_to else {
            return;
        };
        if !self.runs_operation(core, server) {
            return;
        }
        if let Some(operation) = self.in_service[server].as_mut() {
            operation.runner = None;
        }
        self.kick_spinners(core, server, now);
    }

    /// `task` lends no more (its request was pruned, or it was killed): the operation leaves
    /// its core if it ran there.
    fn stop_lending(&mut self, task: TaskId, now: Instant) {
        if let Some(home) = self.home(task) {
            self.leave_operation(home, task, now);
        }
        self.tasks[task.index()].lends_to = None;
    }

    /// The core `task` runs on: its own, or, in a cluster, the one running it now (or about
    /// to), if any.
    pub(super) fn home(&self, task: TaskId) -> Option<u16> {
        match self.member_of[task.index()] {
            Some(cluster) => self.member_core(cluster, task),
            None => Some(self.tasks[task.index()].spec.core),
        }
    }

    /// Interrupts at `now` every core but `core` whose running context lends to `server`
    /// while no core runs its operation: the first to take the interrupt runs it.
    fn kick_spinners(&mut self, core: u16, server: usize, now: Instant) {
        // A core running slack while its lender had nothing to run may take the operation.
        self.reclaim_slack_again(core, now);
        for other in 0..self.cores.len() {
            let Occupant::Running { task, .. } = self.cores[other].occupant else {
                continue;
            };
            if other != usize::from(core) && self.tasks[task.index()].lends_to == Some(server) {
                self.interrupt(other as u16, now);
            }
        }
    }

    /// An inter-processor interrupt to `core` at `now`: the core enters its kernel then (or
    /// when its kernel returns), taken and charged as a timer interrupt; its scheduler then
    /// programs its timer again. One for a core in its kernel is marked pending there at
    /// once, so that it does not take the core's timer source: a cluster's timer held there
    /// must stay programmed while that core is masked.
    pub(super) fn interrupt(&mut self, core: u16, now: Instant) {
        let c = &mut self.cores[usize::from(core)];
        if matches!(c.occupant, Occupant::Kernel { .. }) {
            // Masked there: taken when its kernel returns. Its timer source stays free for
            // its programmed timer (a cluster's, which another core may take meanwhile).
            c.irq_pending = true;
            return;
        }
        self.queue.set(now, EventKind::Timer { core });
    }

    /// How urgent `task`'s request is to a gate (smaller first), on the clustered
    /// scheduler's scale: a cluster member's reservation's; a task on a core in no cluster
    /// ranks as a sporadic reservation at its priority, or, without one, at its job's
    /// absolute deadline (among such tasks the order of `255 - priority`, then of deadlines).
    fn urgency(&self, task: TaskId) -> u64 {
        if let Some(cluster) = self.member_of[task.index()] {
            return self.clusters[cluster as usize].urgency(task);
        }
        let t = &self.tasks[task.index()];
        match t.spec.priority {
            Some(priority) => fixed_priority_urgency(priority),
            None => deadline_urgency(
                t.job
                    .as_ref()
                    .and_then(|job| job.deadline)
                    .unwrap_or(Instant::NEVER),
            ),
        }
    }

    /// Makes the gate call `call` for `task` at `now`; a refusal (a bug in the gate or the
    /// machine) is the run's error, naming the call `name`.
    fn gate_call<S: Syscall>(
        &mut self,
        call: S,
        name: &'static str,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<S::Outcome, SimError> {
        self.objects
            .call(call, work)
            .map_err(|error| SimError::Gate {
                call: name,
                task: self
                    .scenario
                    .tasks
                    .get(task.index())
                    .map_or_else(String::new, |spec| spec.name.clone()),
                at: now,
                error: format!("{error:?}"),
            })
    }
}
