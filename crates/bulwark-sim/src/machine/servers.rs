//! Passive servers on the machine. An `invoke` step donates the caller's scheduling context
//! to the server for one operation (seL4 MCS's passive server): the core's scheduler goes on
//! seeing the caller, ready or running at its own priority and on its own budget, while the
//! server's operation executes. A caller that finds the server busy blocks at the gate, which
//! orders the waiting callers (FIFO-IPC or PRIO-IPC, the MC-IPC paper's section VI
//! baselines); the reply hands the server, with the next caller's context, to the next
//! request. No context is lent to another caller's request, so a request progresses only
//! while its own caller's context is scheduled and has budget.

use bulwark_core::ipc::mc_ipc::Client;
use bulwark_core::kernel::{GateId, InvokeGate, ReplyGate, Wait};
use bulwark_core::{Event, Instant, TaskId, Wake, Work};

use super::{Execution, Machine};
use crate::behaviour::draw;
use crate::SimError;

impl Machine<'_> {
    /// `task` invokes `server` at `now`, in the kernel on `core`. True when the server is
    /// busy and `task` blocks at its gate; false when the server takes the request and
    /// `task`'s context runs the operation from now.
    pub(super) fn invoke(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<bool, SimError> {
        let gate = GateId(server as u32);
        let client = Client::RealTime {
            cluster: 0,
            urgency: self.urgency(task),
        };
        self.tasks[task.index()].metrics.invocations += 1;
        let call = InvokeGate { gate, task, client };
        self.objects
            .call(call, work)
            .map_err(|error| self.gate_refused("invoke", task, now, error))?;
        if self.objects.kernel().served(gate).is_some() {
            let t = &mut self.tasks[task.index()];
            t.waiting = Some((server, now));
            self.cores[core as usize]
                .scheduler
                .handle(now, Event::Block { task }, work)
                .map_err(|error| self.refused("block", task, now, error))?;
            return Ok(true);
        }
        self.serve_next(core, server, now, work)?;
        Ok(false)
    }

    /// `task`'s context finished `server`'s operation at `now`: the server replies, and
    /// takes the next request if one waits.
    pub(super) fn reply(
        &mut self,
        core: u16,
        task: TaskId,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        self.tasks[task.index()].serving = None;
        let gate = GateId(server as u32);
        self.objects
            .call(ReplyGate { gate }, work)
            .map_err(|error| self.gate_refused("reply", task, now, error))?;
        self.serve_next(core, server, now, work)
    }

    /// The idle `server` takes its next request, if one waits (`mc_wait`): the caller's
    /// context now runs the operation. A caller that waited is woken for it, continuing its
    /// job; one that has just invoked is running already.
    fn serve_next(
        &mut self,
        core: u16,
        server: usize,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let gate = GateId(server as u32);
        let next = self
            .objects
            .call(Wait { gate }, work)
            .map_err(|error| self.gate_refused("wait", TaskId(0), now, error))?;
        let Some(caller) = next else {
            return Ok(());
        };
        let operation = self.scenario.servers[server].operation;
        let t = &mut self.tasks[caller.index()];
        t.serving = Some(server);
        t.executing = Some(Execution {
            left: draw(&operation, &mut t.rng),
            each: None,
            done: bulwark_core::Duration::ZERO,
        });
        if let Some((_, since)) = t.waiting.take() {
            t.metrics
                .gate_wait
                .record(now.saturating_duration_since(since));
            let event = Event::Activate {
                task: caller,
                wake: Wake::SameJob,
            };
            self.cores[core as usize]
                .scheduler
                .handle(now, event, work)
                .map_err(|error| self.refused("activate", caller, now, error))?;
        }
        Ok(())
    }

    /// The killed `task` leaves the server it waits at (its request is pruned) or is served
    /// by (the request ends unanswered and the server takes the next one).
    pub(super) fn leave_server(
        &mut self,
        core: u16,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let t = &mut self.tasks[task.index()];
        if let Some(server) = t.serving.take() {
            return self.reply(core, task, server, now, work);
        }
        if let Some((server, _)) = t.waiting.take() {
            let call = bulwark_core::kernel::Abort {
                gate: GateId(server as u32),
                task,
            };
            self.objects
                .call(call, work)
                .map_err(|error| self.gate_refused("abort", task, now, error))?;
        }
        Ok(())
    }

    /// How urgent `task`'s request is to a PRIO-IPC gate (smaller first): `255 - priority`
    /// for a task with a priority, else its job's absolute deadline.
    fn urgency(&self, task: TaskId) -> u64 {
        let t = &self.tasks[task.index()];
        match t.spec.priority {
            Some(priority) => 255 - u64::from(priority.0),
            None => t
                .job
                .as_ref()
                .and_then(|job| job.deadline)
                .unwrap_or(Instant::NEVER)
                .as_nanos(),
        }
    }

    fn gate_refused(
        &self,
        call: &'static str,
        task: TaskId,
        at: Instant,
        error: bulwark_core::kernel::SyscallError,
    ) -> SimError {
        SimError::Gate {
            call,
            task: self
                .scenario
                .tasks
                .get(task.index())
                .map_or_else(String::new, |spec| spec.name.clone()),
            at,
            error: format!("{error:?}"),
        }
    }
}
