//! Scheduling contexts as kernel objects, apart from the threads that run on them (seL4
//! MCS): a context holds a reservation's budget ([`SchedContext`], the SPR paper's sporadic
//! server rule); a thread may be bound to one, its own, and at any time runs on the context
//! it holds: its own, one donated to it with a request, or none. A server thread that takes
//! a request runs on its caller's context until it replies (the CAmkES paper's section 4,
//! where "every thread working for a task runs on the task's context"; MC-IPC's bandwidth
//! inheritance is the same donation).
//!
//! [`Donate`] passes the context a thread holds to another (the caller's to the server's,
//! along a chain of nested requests); [`Return`] gives a thread its own back (none for a
//! passive server). Charging, depletion and replenishment are the context's own steps
//! ([`Kernel::context_mut`]); the platform drives them with its clock.
//!
//! Invariants (checked by [`Contexts::check`]): a thread holds only a context that exists;
//! every context's replenishment queue holds its whole budget.

use alloc::vec::Vec;

use super::{Kernel, Syscall, SyscallError};
use crate::reservation::SchedContext;
use crate::{TaskId, Work};

/// A scheduling context, by index in the kernel's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContextId(pub u32);

/// The contexts and which one each thread is bound to and holds.
#[derive(Clone, Debug, Default)]
pub struct Contexts {
    contexts: Vec<Option<SchedContext>>,
    /// The contexts that exist, in order: an index kept so that a platform's scan for
    /// replenishments skips the ids without one (a system without reservations scans none).
    ids: Vec<ContextId>,
    /// Each thread's own context.
    bound: Vec<Option<ContextId>>,
    /// The context each thread runs on now.
    held: Vec<Option<ContextId>>,
}

impl Contexts {
    /// `contexts` by id (`None`: no context at that id) and each thread's own context
    /// (configuration time: allocates). A binding to a context that does not exist binds
    /// the thread to none.
    pub fn new(contexts: Vec<Option<SchedContext>>, bound: Vec<Option<ContextId>>) -> Self {
        let exists = |id: &ContextId| contexts.get(id.0 as usize).is_some_and(Option::is_some);
        let bound: Vec<Option<ContextId>> = bound
            .into_iter()
            .map(|own| own.filter(|id| exists(id)))
            .collect();
        let ids = (0..contexts.len())
            .filter(|&index| contexts[index].is_some())
            .map(|index| ContextId(index as u32))
            .collect();
        Contexts {
            contexts,
            ids,
            held: bound.clone(),
            bound,
        }
    }

    /// The contexts that exist, in id order.
    pub fn ids(&self) -> &[ContextId] {
        &self.ids
    }

    /// The context `thread` runs on now.
    pub fn held_by(&self, thread: TaskId) -> Option<ContextId> {
        self.held.get(thread.index()).copied().flatten()
    }

    /// Context `id`.
    pub fn get(&self, id: ContextId) -> Option<&SchedContext> {
        self.contexts.get(id.0 as usize)?.as_ref()
    }

    fn get_mut(&mut self, id: ContextId) -> Option<&mut SchedContext> {
        self.contexts.get_mut(id.0 as usize)?.as_mut()
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        for held in self.held.iter().flatten() {
            if self.get(*held).is_none() {
                return Err("a thread holds a context that exists");
            }
        }
        for context in self.contexts.iter().flatten() {
            context.check()?;
        }
        Ok(())
    }
}

impl Kernel {
    /// The context `thread` runs on now.
    #[inline]
    pub fn context_of(&self, thread: TaskId) -> Option<ContextId> {
        self.contexts.held_by(thread)
    }

    /// Context `id`, to read.
    #[inline]
    pub fn context(&self, id: ContextId) -> Option<&SchedContext> {
        self.contexts.get(id)
    }

    /// Context `id`, for the platform's clock to charge, deplete and replenish.
    #[inline]
    pub fn context_mut(&mut self, id: ContextId) -> Option<&mut SchedContext> {
        self.contexts.get_mut(id)
    }

    /// The contexts that exist, in id order.
    #[inline]
    pub fn context_ids(&self) -> &[ContextId] {
        self.contexts.ids()
    }
}

/// `to` takes a request from `from` and runs on the context `from` holds (none if it holds
/// none) until it returns it. The outcome is the context `to` now holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Donate {
    /// The thread whose context goes with its request.
    pub from: TaskId,
    /// The thread that serves it.
    pub to: TaskId,
}

impl Syscall for Donate {
    type Outcome = Option<ContextId>;

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<Option<ContextId>, SyscallError> {
        let held = &mut kernel.contexts.held;
        let (Some(&context), true) = (held.get(self.from.index()), self.to.index() < held.len())
        else {
            return Err(SyscallError::UnknownObject);
        };
        held[self.to.index()] = context;
        Ok(context)
    }
}

/// `thread` is done with the context donated to it and runs on its own again (none for a
/// passive server). The outcome is the context it now holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Return {
    /// The thread.
    pub thread: TaskId,
}

impl Syscall for Return {
    type Outcome = Option<ContextId>;

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<Option<ContextId>, SyscallError> {
        let contexts = &mut kernel.contexts;
        let Some(&own) = contexts.bound.get(self.thread.index()) else {
            return Err(SyscallError::UnknownObject);
        };
        contexts.held[self.thread.index()] = own;
        Ok(own)
    }
}
