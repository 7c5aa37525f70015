//! The IPC system calls: on a component CPI (CAmkES paper, section 4) and on a resource
//! server's gate (MC-IPC paper, Fig. 1). Each resolves the object it names, then takes the
//! protocol step the object's own code implements.

use super::{GateId, Kernel, Syscall, SyscallError};
use crate::ipc::mc_ipc::{Aborted, Client};
use crate::ipc::{CpiId, Effects, Invoked, IpcGate, Replied, Request};
use crate::{Priority, TaskId, Work};

/// `request` reaches CPI `cpi`'s endpoint, where `idle` is the pool thread waiting longest
/// (Fig. 5 steps 1-5, Fig. 4 steps 1-13, or the fixed thread's endpoint of section 4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvokeCpi {
    /// The CPI.
    pub cpi: CpiId,
    /// Its longest-waiting pool thread, if one waits.
    pub idle: Option<u32>,
    /// The request.
    pub request: Request,
}

impl Syscall for InvokeCpi {
    type Outcome = Invoked;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Invoked, SyscallError> {
        let cpi = kernel.cpi_mut(self.cpi)?;
        cpi.invoke(self.idle, self.request, work)
            .map_err(SyscallError::Ipc)
    }
}

/// Pool thread `thread` of CPI `cpi` calls `downstream` (Fig. 5 steps 7-10, Fig. 4 steps
/// 15-18): the request to deliver there, and the effects here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendNested {
    /// The CPI whose procedure calls.
    pub cpi: CpiId,
    /// Its pool thread.
    pub thread: u32,
    /// The CPI called.
    pub downstream: CpiId,
}

impl Syscall for SendNested {
    type Outcome = (Request, Effects);

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<(Request, Effects), SyscallError> {
        if kernel.cpi(self.downstream).is_none() {
            return Err(SyscallError::UnknownObject);
        }
        let cpi = kernel.cpi_mut(self.cpi)?;
        cpi.send_nested(self.thread, self.downstream)
            .map_err(SyscallError::Ipc)
    }
}

/// The reply to pool thread `thread`'s nested request came back (Fig. 5 steps 11-12, Fig. 4
/// steps 19-20).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NestedReply {
    /// The CPI whose procedure called.
    pub cpi: CpiId,
    /// Its pool thread.
    pub thread: u32,
}

impl Syscall for NestedReply {
    type Outcome = Effects;

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<Effects, SyscallError> {
        let cpi = kernel.cpi_mut(self.cpi)?;
        cpi.nested_reply(self.thread).map_err(SyscallError::Ipc)
    }
}

/// Pool thread `thread` finished the procedure and replies (Fig. 5 steps 13-15, Fig. 4
/// steps 21-24; a fixed CPI's thread takes its next queued request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyCpi {
    /// The CPI.
    pub cpi: CpiId,
    /// Its pool thread.
    pub thread: u32,
}

impl Syscall for ReplyCpi {
    type Outcome = Replied;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Replied, SyscallError> {
        let cpi = kernel.cpi_mut(self.cpi)?;
        cpi.reply(self.thread, work).map_err(SyscallError::Ipc)
    }
}

/// `nest` (Fig. 4 step 25, Fig. 5 steps 16-18): `requestor`'s request at CPI `cpi` now has
/// `priority`. `None` for a fixed CPI, where nested inheritance stops (section 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nest {
    /// The downstream CPI.
    pub cpi: CpiId,
    /// The inherited priority.
    pub priority: Priority,
    /// The originating task whose request chain it follows.
    pub requestor: TaskId,
}

impl Syscall for Nest {
    type Outcome = Option<Effects>;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Option<Effects>, SyscallError> {
        let cpi = kernel.cpi_mut(self.cpi)?;
        Ok(cpi.nest(self.priority, self.requestor, work))
    }
}

/// `mc_invoke` (Fig. 1 lines 7-20): `task` submits a request at gate `gate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvokeGate {
    /// The server's gate.
    pub gate: GateId,
    /// The client.
    pub task: TaskId,
    /// Its kind and cluster.
    pub client: Client,
}

impl Syscall for InvokeGate {
    type Outcome = ();

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<(), SyscallError> {
        let gate = kernel.gate_mut(self.gate)?;
        gate.invoke(self.task, self.client, work)
            .map_err(SyscallError::Gate)
    }
}

/// `mc_wait` (lines 22-30): the server takes the next request, if one waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The server's gate.
    pub gate: GateId,
}

impl Syscall for Wait {
    type Outcome = Option<TaskId>;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Option<TaskId>, SyscallError> {
        kernel
            .gate_mut(self.gate)?
            .wait(work)
            .map_err(SyscallError::Gate)
    }
}

/// `mc_reply` (lines 32-42): the request being served is done; its client is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplyGate {
    /// The server's gate.
    pub gate: GateId,
}

impl Syscall for ReplyGate {
    type Outcome = TaskId;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<TaskId, SyscallError> {
        kernel
            .gate_mut(self.gate)?
            .reply(work)
            .map_err(SyscallError::Gate)
    }
}

/// `mc_abort` (lines 44-59): `task`'s reservation ran out of budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Abort {
    /// The server's gate.
    pub gate: GateId,
    /// The client.
    pub task: TaskId,
}

impl Syscall for Abort {
    type Outcome = Aborted;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Aborted, SyscallError> {
        kernel
            .gate_mut(self.gate)?
            .abort(self.task, work)
            .map_err(SyscallError::Gate)
    }
}

/// Section V: `task`'s request moves to the gate's background queue while its cluster
/// `cluster` is in a mode that does not run it. False when the gate has no background queue
/// (FIFO-IPC, PRIO-IPC) or the request is not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferToBackground {
    /// The server's gate.
    pub gate: GateId,
    /// The client.
    pub task: TaskId,
    /// Its cluster.
    pub cluster: usize,
}

impl Syscall for TransferToBackground {
    type Outcome = bool;

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<bool, SyscallError> {
        let gate = kernel.gate_mut(self.gate)?;
        Ok(gate
            .mc_ipc()
            .is_some_and(|gate| gate.transfer_to_background(self.task, self.cluster)))
    }
}

/// Section V: a request in the background queue is issued again as `client`. False when the
/// gate has no background queue or `task` is not in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reissue {
    /// The server's gate.
    pub gate: GateId,
    /// The client.
    pub task: TaskId,
    /// Its kind and cluster now.
    pub client: Client,
}

impl Syscall for Reissue {
    type Outcome = bool;

    #[inline]
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<bool, SyscallError> {
        let gate = kernel.gate_mut(self.gate)?;
        Ok(gate
            .mc_ipc()
            .is_some_and(|gate| gate.reissue(self.task, self.client, work)))
    }
}
