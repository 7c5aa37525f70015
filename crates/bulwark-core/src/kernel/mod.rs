//! The kernel's objects behind one syscall layer: component CPIs (CAmkES paper), resource
//! servers' gates (MC-IPC paper), the object store with its reclamation groups (reclamation
//! paper) and the scheduling contexts threads run on (SPR paper; donated with requests),
//! reached through [`Kernel::call`].
//!
//! A platform (the simulator, the hosted runtime, a kernel) owns one [`Kernel`] with the
//! objects its system declares and calls it as a thread traps: every call is a value of a
//! type implementing [`Syscall`] ([`calls`] for IPC, [`store`] for allocation and
//! termination, [`context`] for donation), its outcome is typed, and the effects it returns
//! on other threads are bounded by type ([`Effects`](crate::ipc::Effects)), so none is
//! dropped.
//!
//! Validate, then commit (seL4's decode/invoke split): a call first resolves the object it
//! names, and a name that resolves to nothing is refused with
//! [`SyscallError::UnknownObject`] before any state changes; the objects themselves refuse a
//! call in the wrong state without changing anything. Every call adds the work it did to the
//! caller's [`Work`]; allocation and termination report their reclamation work in
//! their outcome, in the reclamation paper's units (a creation the quota refuses is counted
//! there as refused, not as an error).
//!
//! Invariants (checked by [`Kernel::check`]): every CPI's, gate's, context's and the store's
//! own.

pub mod calls;
pub mod context;
pub mod store;

use alloc::vec::Vec;

use crate::ipc::mc_ipc::GateError;
use crate::ipc::{Cpi, CpiId, Gate, IpcError, IpcGate};
use crate::{TaskId, Work};

pub use calls::{
    Abort, InvokeCpi, InvokeGate, Nest, NestedReply, Reissue, ReplyCpi, ReplyGate, SendNested,
    TransferToBackground, Wait,
};
pub use context::{ContextId, Contexts, Donate, Return};
pub use store::{Allocate, Allocation, Ended, ObjectStore, StoreError, Terminate, Termination};

/// A resource server's gate, by index in the kernel's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GateId(pub u32);

/// Why a call was refused; a refused call changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyscallError {
    /// The call names a CPI, gate or thread the kernel does not have.
    UnknownObject,
    /// The CPI refused it.
    Ipc(IpcError),
    /// The gate refused it.
    Gate(GateError),
}

/// One system call: what it names, and the step it takes on the kernel's objects.
pub trait Syscall {
    /// What the caller learns.
    type Outcome;

    /// Carries the call out, adding its work to `work`. A refused call changes nothing.
    fn commit(self, kernel: &mut Kernel, work: &mut Work) -> Result<Self::Outcome, SyscallError>;
}

/// The kernel objects of one system.
#[derive(Default)]
pub struct Kernel {
    cpis: Vec<Cpi>,
    gates: Vec<Gate>,
    store: ObjectStore,
    contexts: Contexts,
}

impl Kernel {
    /// A kernel with the given objects (configuration time: this is where they allocate).
    pub fn new(cpis: Vec<Cpi>, gates: Vec<Gate>, store: ObjectStore) -> Self {
        Kernel {
            cpis,
            gates,
            store,
            contexts: Contexts::default(),
        }
    }

    /// The same kernel with scheduling contexts (configuration time).
    pub fn with_contexts(self, contexts: Contexts) -> Self {
        Kernel { contexts, ..self }
    }

    /// The same kernel with component procedure interfaces, CPI `c` as `CpiId(c)`
    /// (configuration time).
    pub fn with_cpis(self, cpis: Vec<Cpi>) -> Self {
        Kernel { cpis, ..self }
    }

    /// The one entry point: carries out `call`.
    #[inline]
    pub fn call<S: Syscall>(
        &mut self,
        call: S,
        work: &mut Work,
    ) -> Result<S::Outcome, SyscallError> {
        call.commit(self, work)
    }

    /// CPI `id`, to read.
    #[inline]
    pub fn cpi(&self, id: CpiId) -> Option<&Cpi> {
        self.cpis.get(id.0 as usize)
    }

    /// The request gate `id` is serving, if any (`None` too for a gate the kernel lacks).
    #[inline]
    pub fn served(&self, id: GateId) -> Option<TaskId> {
        self.gates.get(id.0 as usize).and_then(IpcGate::served)
    }

    /// The object store, to read.
    pub fn store(&self) -> &ObjectStore {
        &self.store
    }

    #[inline]
    fn cpi_mut(&mut self, id: CpiId) -> Result<&mut Cpi, SyscallError> {
        self.cpis
            .get_mut(id.0 as usize)
            .ok_or(SyscallError::UnknownObject)
    }

    #[inline]
    fn gate_mut(&mut self, id: GateId) -> Result<&mut Gate, SyscallError> {
        self.gates
            .get_mut(id.0 as usize)
            .ok_or(SyscallError::UnknownObject)
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        for cpi in &self.cpis {
            cpi.check()?;
        }
        for gate in &self.gates {
            gate.check()?;
        }
        self.store.check()?;
        self.contexts.check()
    }
}

#[cfg(test)]
mod tests;
