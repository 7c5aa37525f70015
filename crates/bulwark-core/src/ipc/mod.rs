//! Component IPC with priority protocols (CAmkES paper, section 4): the state each component
//! procedure interface (CPI) keeps for its protocol, and the steps its threads take.
//!
//! A CPI is served by a pool of threads that wait on its endpoint at its priority ceiling. A
//! request carries the requester's priority and the id of the task it originates from. The
//! protocols:
//! - [`propagate`]: requests run at the requester's priority, concurrently (Fig. 5);
//! - [`inherit`]: the priority inheritance protocol over one lock, with the notification
//!   manager of [`notification`] (Fig. 4), and nested inheritance through `nest`;
//! - [`fixed`]: one thread at a fixed priority: the ceiling (IPCP) or the maximum (NPCS);
//! - [`mc_ipc`]: the MC-IPC gate of a resource server shared across clusters (MC-IPC paper),
//!   and the FIFO-IPC and PRIO-IPC baselines.
//!
//! Each call returns the [`Effect`]s on other threads the platform must carry out (a priority
//! change, a wake-up, a `nest` call to a downstream CPI), so the same code serves a kernel,
//! the simulator and the tests. Nothing here blocks or allocates after construction.

pub mod cpi;
pub mod fixed;
pub mod gate;
pub mod inherit;
pub mod mc_ipc;
pub mod notification;
pub mod propagate;
pub mod protocol;

pub use cpi::{Cpi, Invoked, Replied};
pub use fixed::FixedCpi;
pub use gate::Gate;
pub use inherit::InheritCpi;
pub use mc_ipc::{FifoGate, IpcGate, McIpcGate, PrioGate};
pub use notification::NotificationManager;
pub use propagate::PropagateCpi;
pub use protocol::{CpiProtocol, GateProtocol};

use crate::{Duration, Priority, TaskId};

/// A request to a CPI: the priority it is served at and the task it originates from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Request {
    /// The requesting thread's priority (for a nested request, the sender's inherited one).
    pub priority: Priority,
    /// The unique id of the originating task.
    pub requestor: TaskId,
}

/// The cost of sending a request and of replying to it: one row of the component paper's
/// Table 2 in time, as the machine charges it and the analysis bounds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallReply {
    /// Sending the request (the paper's `C_*_send`).
    pub call: Duration,
    /// Replying (`C_*_reply`).
    pub reply: Duration,
}

impl CallReply {
    /// No cost.
    pub const ZERO: CallReply = CallReply::new(Duration::ZERO, Duration::ZERO);

    /// `call` to send, `reply` to reply.
    pub const fn new(call: Duration, reply: Duration) -> Self {
        CallReply { call, reply }
    }

    /// `call + reply`: the overhead one request adds to a WCET.
    pub fn total(self) -> Duration {
        self.call.saturating_add(self.reply)
    }

    /// `max(call, reply)`: the longer of the two sections run at the ceiling.
    pub fn longer(self) -> Duration {
        self.call.max(self.reply)
    }
}

/// A downstream CPI, as the `nest` function pointer of Fig. 4 step 17 names it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CpiId(pub u32);

/// What the platform must do for a protocol step, besides the calling thread's own path.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Effect {
    /// Set a pool thread's scheduling priority (`seL4_TCB_SetPriority`).
    SetPriority {
        /// The pool thread.
        thread: u32,
        /// Its new priority.
        priority: Priority,
    },
    /// Wake a pool thread waiting in the notification manager (it now holds the lock).
    Wake {
        /// The pool thread.
        thread: u32,
    },
    /// Call `nest` on a downstream CPI: `requestor`'s outstanding request there now has
    /// `priority`.
    Nest {
        /// The downstream CPI.
        cpi: CpiId,
        /// The inherited priority to push down.
        priority: Priority,
        /// The originating task whose request chain it follows.
        requestor: TaskId,
    },
}

/// The effects of one protocol step. Their number is bounded by type: a step builds them
/// from a fixed-size array ([`Effects::of`]) whose length is checked against
/// [`Effects::CAPACITY`] at compile time, so no effect can ever be dropped. A fixed array, so
/// no step allocates.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Effects {
    items: [Option<Effect>; Effects::CAPACITY],
    len: usize,
}

impl Effects {
    /// The most effects one step produces: PIP's finish (the finisher back to the ceiling,
    /// the waiter woken, the waiter dropped to its request's priority).
    pub const CAPACITY: usize = 3;

    /// No effect.
    pub const fn none() -> Self {
        Effects {
            items: [None; Effects::CAPACITY],
            len: 0,
        }
    }

    /// One effect.
    pub const fn one(effect: Effect) -> Self {
        Effects::of([Some(effect)])
    }

    /// The effects present among `effects`, in order. `N` above [`Effects::CAPACITY`] does
    /// not compile:
    ///
    /// ```compile_fail
    /// use bulwark_core::ipc::Effects;
    /// let too_many = Effects::of([None; Effects::CAPACITY + 1]);
    /// ```
    pub const fn of<const N: usize>(effects: [Option<Effect>; N]) -> Self {
        const {
            assert!(
                N <= Effects::CAPACITY,
                "a step produces at most CAPACITY effects"
            )
        };
        let mut items = [None; Effects::CAPACITY];
        let mut len = 0;
        let mut at = 0;
        while at < N {
            if let Some(effect) = effects[at] {
                items[len] = Some(effect);
                len += 1;
            }
            at += 1;
        }
        Effects { items, len }
    }

    /// The effects, in order.
    pub fn iter(&self) -> impl Iterator<Item = Effect> + '_ {
        self.items[..self.len].iter().flatten().copied()
    }

    /// The number of effects.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Why a CPI refused a call; a refused call changed nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum IpcError {
    /// The thread index is beyond the CPI's pool.
    UnknownThread = 1,
    /// The thread is not in the state the step needs (say, finishing without the lock).
    WrongState = 2,
    /// Every thread of the pool is busy: the pool was sized too small for the system.
    PoolExhausted = 3,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    /// `of` keeps the effects present, in order, and drops only the absent ones.
    #[test]
    fn effects_keep_their_order_and_skip_absent_ones() {
        let wake = |thread| Effect::Wake { thread };
        let effects = Effects::of([Some(wake(1)), None, Some(wake(2))]);
        assert_eq!(effects.iter().collect::<Vec<_>>(), [wake(1), wake(2)]);
        assert_eq!(effects.len(), 2);
        assert!(Effects::of([None, None]).is_empty());
        assert_eq!(Effects::one(wake(3)).iter().collect::<Vec<_>>(), [wake(3)]);
        assert_eq!(Effects::none(), Effects::default());
    }
}
