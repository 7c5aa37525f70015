//! One component procedure interface as a kernel object (CAmkES paper, section 4): whatever
//! its [`CpiProtocol`], a platform invokes it, sends nested requests from it, replies through
//! it and pushes `nest` updates into it with the same calls, and carries out the
//! [`Effects`] each call returns. The protocols' own steps stay in [`propagate`], [`inherit`]
//! and [`fixed`]; this object only routes a call to the step its protocol takes.
//!
//! The calls, as a thread of the CPI's pool sees them:
//! - [`Cpi::invoke`]: a request reaches the endpoint (Fig. 5 steps 1-5, Fig. 4 steps 1-13,
//!   or the fixed thread's FIFO endpoint, section 4.1);
//! - [`Cpi::send_nested`] and [`Cpi::nested_reply`]: the procedure calls downstream and the
//!   reply comes back (Fig. 5 steps 7-12, Fig. 4 steps 15-20; a fixed CPI's nested request
//!   carries its thread's priority);
//! - [`Cpi::reply`]: the procedure is done (Fig. 5 steps 13-15, Fig. 4 steps 21-24; the
//!   fixed thread takes the next queued request);
//! - [`Cpi::nest`]: a downstream CPI's request inherits a higher priority (Fig. 4 step 25,
//!   Fig. 5 steps 16-18; nested inheritance stops at a fixed CPI, section 4.2).
//!
//! [`propagate`]: super::propagate
//! [`inherit`]: super::inherit
//! [`fixed`]: super::fixed

use super::inherit::Admission;
use super::{CpiId, CpiProtocol, Effects, FixedCpi, InheritCpi, IpcError, PropagateCpi, Request};
use crate::{Priority, TaskId, Work};

/// A CPI's protocol state.
#[derive(Clone, Debug)]
pub enum Cpi {
    /// Priority propagation (Fig. 5): reentrant, a pool thread per request.
    Propagated(PropagateCpi),
    /// The priority inheritance protocol with nesting (Fig. 4): one request at a time.
    Inherited(InheritCpi),
    /// One thread at a fixed priority (IPCP or NPCS), requests queued on its endpoint.
    Fixed(FixedCpi),
}

/// How an invocation was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invoked {
    /// Pool thread `thread` serves it.
    Served {
        /// The pool thread.
        thread: u32,
        /// The priority changes and `nest` hops of the call steps.
        effects: Effects,
        /// The thread must wait for the lock before running the procedure (Fig. 4 step 6).
        waits: bool,
        /// The lock was held when the request arrived (Fig. 4's State Locked), which
        /// costs the longer call path.
        contended: bool,
    },
    /// Queued on the fixed CPI's endpoint behind the request being served.
    Queued,
}

/// What a reply did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replied {
    /// The effects of the reply steps. For a fixed CPI with a queued request, its one
    /// effect wakes the fixed thread for [`Replied::next`].
    pub effects: Effects,
    /// The queued request a fixed CPI's thread serves next, if any.
    pub next: Option<Request>,
}

impl Cpi {
    /// A CPI of `protocol` whose pool threads wait at `ceiling`: `threads` of them for
    /// propagation and PIP; one for IPCP (at `ceiling`) and NPCS (at the maximum priority),
    /// whose endpoint queues up to `capacity` requests.
    pub fn new(protocol: CpiProtocol, ceiling: Priority, threads: u32, capacity: usize) -> Cpi {
        match protocol {
            CpiProtocol::Propagated => Cpi::Propagated(PropagateCpi::new(ceiling, threads)),
            CpiProtocol::Inherited => Cpi::Inherited(InheritCpi::new(ceiling, threads)),
            CpiProtocol::Ipcp => Cpi::Fixed(FixedCpi::ipcp(ceiling, capacity)),
            CpiProtocol::Npcs => Cpi::Fixed(FixedCpi::npcs(capacity)),
        }
    }

    /// The protocol it follows.
    pub fn protocol(&self) -> CpiProtocol {
        match self {
            Cpi::Propagated(_) => CpiProtocol::Propagated,
            Cpi::Inherited(_) => CpiProtocol::Inherited,
            Cpi::Fixed(fixed) if fixed.priority() == Priority::MAX => CpiProtocol::Npcs,
            Cpi::Fixed(_) => CpiProtocol::Ipcp,
        }
    }

    /// The priority its idle threads wait at: the ceiling, or the fixed thread's priority.
    pub fn waiting_priority(&self) -> Priority {
        match self {
            Cpi::Propagated(cpi) => cpi.ceiling(),
            Cpi::Inherited(cpi) => cpi.ceiling(),
            Cpi::Fixed(cpi) => cpi.priority(),
        }
    }

    /// True when each request takes a free pool thread (propagation, PIP); a fixed CPI's one
    /// thread serves its queue instead.
    pub fn is_pooled(&self) -> bool {
        !matches!(self, Cpi::Fixed(_))
    }

    /// `request` reaches the endpoint. `idle` is the pool thread waiting longest on it (PIP
    /// gives the request to that thread; propagation takes a free node from its thread
    /// manager, and a fixed CPI its one thread or its queue).
    pub fn invoke(
        &mut self,
        idle: Option<u32>,
        request: Request,
        work: &mut Work,
    ) -> Result<Invoked, IpcError> {
        match self {
            // Fig. 5 steps 1-5.
            Cpi::Propagated(cpi) => {
                let (thread, effects) = cpi.request(request, work)?;
                Ok(Invoked::Served {
                    thread,
                    effects,
                    waits: false,
                    contended: false,
                })
            }
            // Fig. 4 step 1, then 2-6 (locked) or 9-13 (unlocked).
            Cpi::Inherited(cpi) => {
                let thread = idle.ok_or(IpcError::PoolExhausted)?;
                let contended = cpi.holder().is_some();
                let (admission, effects) = cpi.request(thread, request, work)?;
                Ok(Invoked::Served {
                    thread,
                    effects,
                    waits: admission == Admission::Waiting,
                    contended,
                })
            }
            // Section 4.1: the one thread serves it at once, or it queues (FIFO).
            Cpi::Fixed(cpi) => Ok(match cpi.request(request)? {
                true => Invoked::Served {
                    thread: 0,
                    effects: Effects::none(),
                    waits: false,
                    contended: false,
                },
                false => Invoked::Queued,
            }),
        }
    }

    /// Pool thread `thread`'s procedure sends a request to `downstream`: the request to
    /// deliver there, and the effects here.
    pub fn send_nested(
        &mut self,
        thread: u32,
        downstream: CpiId,
    ) -> Result<(Request, Effects), IpcError> {
        match self {
            // Fig. 5 steps 7-10.
            Cpi::Propagated(cpi) => cpi.begin_nested(thread, downstream),
            // Fig. 4 steps 15-18.
            Cpi::Inherited(cpi) => cpi.begin_nested(thread, downstream),
            // Section 4.1: a nested request carries the thread's fixed priority, for the task
            // whose request it serves.
            Cpi::Fixed(cpi) => {
                let served = cpi.serving().ok_or(IpcError::WrongState)?;
                let request = Request {
                    priority: cpi.nested_priority(),
                    requestor: served.requestor,
                };
                Ok((request, Effects::none()))
            }
        }
    }

    /// The reply to pool thread `thread`'s nested request came back.
    pub fn nested_reply(&mut self, thread: u32) -> Result<Effects, IpcError> {
        match self {
            // Fig. 5 steps 11-12.
            Cpi::Propagated(cpi) => cpi.end_nested(thread),
            // Fig. 4 steps 19-20.
            Cpi::Inherited(cpi) => cpi.end_nested(thread),
            // The fixed thread never left its priority.
            Cpi::Fixed(_) => Ok(Effects::none()),
        }
    }

    /// True when pool thread `thread`'s reply hands the lock to a waiter (Fig. 4's locked
    /// exit path, which costs more).
    pub fn reply_hands_over(&self, thread: u32) -> bool {
        match self {
            Cpi::Inherited(cpi) => cpi.holder() == Some(thread) && !cpi.waiters().is_empty(),
            Cpi::Propagated(_) | Cpi::Fixed(_) => false,
        }
    }

    /// Pool thread `thread` finished the procedure and replies.
    pub fn reply(&mut self, thread: u32, work: &mut Work) -> Result<Replied, IpcError> {
        let (effects, next) = match self {
            // Fig. 5 steps 13-15.
            Cpi::Propagated(cpi) => (cpi.finish(thread)?, None),
            // Fig. 4 steps 21-24, and 7-13 for the waiter it wakes.
            Cpi::Inherited(cpi) => (cpi.finish(thread, work)?.1, None),
            // The fixed thread takes the next queued request, if any.
            Cpi::Fixed(cpi) => {
                let (next, effects) = cpi.finish()?;
                (effects, next)
            }
        };
        Ok(Replied { effects, next })
    }

    /// `nest`: `requestor`'s request here now has `priority`. `None` for a fixed CPI, where
    /// nested inheritance stops (section 4.2).
    pub fn nest(
        &mut self,
        priority: Priority,
        requestor: TaskId,
        work: &mut Work,
    ) -> Option<Effects> {
        match self {
            // Fig. 5 steps 16-18.
            Cpi::Propagated(cpi) => Some(cpi.nest(priority, requestor, work)),
            // Fig. 4 step 25.
            Cpi::Inherited(cpi) => Some(cpi.nest(priority, requestor, work)),
            Cpi::Fixed(_) => None,
        }
    }

    /// Checks the invariants of its protocol's state.
    pub fn check(&self) -> Result<(), &'static str> {
        match self {
            Cpi::Propagated(cpi) => cpi.check(),
            Cpi::Inherited(cpi) => cpi.check(),
            Cpi::Fixed(cpi) => cpi.check(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::Effect;
    use crate::test_support::req;

    #[test]
    fn each_protocol_builds_the_object_that_reports_it() {
        for protocol in CpiProtocol::ALL {
            let cpi = Cpi::new(protocol, Priority(9), 2, 4);
            assert_eq!(cpi.protocol(), protocol);
            assert_eq!(cpi.is_pooled(), !protocol.is_fixed());
        }
        assert_eq!(
            Cpi::new(CpiProtocol::Npcs, Priority(9), 2, 4).waiting_priority(),
            Priority::MAX
        );
        assert_eq!(
            Cpi::new(CpiProtocol::Ipcp, Priority(9), 2, 4).waiting_priority(),
            Priority(9)
        );
    }

    /// Fig. 4 by hand: thread 0 takes the free lock and drops to the request's priority 3;
    /// a request at 7 finds it held, so thread 1 waits and the holder inherits 7; the
    /// holder's reply hands the lock over: back to the ceiling 9, thread 1 woken and
    /// dropped to 7.
    #[test]
    fn pip_hands_its_lock_to_the_waiter_through_the_uniform_calls() {
        let mut work = Work::default();
        let mut cpi = Cpi::new(CpiProtocol::Inherited, Priority(9), 2, 4);
        let first = cpi.invoke(Some(0), req(3, 0), &mut work).unwrap();
        assert_eq!(
            first,
            Invoked::Served {
                thread: 0,
                effects: Effects::one(Effect::SetPriority {
                    thread: 0,
                    priority: Priority(3)
                }),
                waits: false,
                contended: false,
            }
        );
        let second = cpi.invoke(Some(1), req(7, 1), &mut work).unwrap();
        assert_eq!(
            second,
            Invoked::Served {
                thread: 1,
                effects: Effects::one(Effect::SetPriority {
                    thread: 0,
                    priority: Priority(7)
                }),
                waits: true,
                contended: true,
            }
        );
        assert!(cpi.reply_hands_over(0) && !cpi.reply_hands_over(1));
        let replied = cpi.reply(0, &mut work).unwrap();
        assert_eq!(replied.next, None);
        let effects: alloc::vec::Vec<Effect> = replied.effects.iter().collect();
        assert_eq!(
            effects,
            [
                Effect::SetPriority {
                    thread: 0,
                    priority: Priority(9)
                },
                Effect::Wake { thread: 1 },
                Effect::SetPriority {
                    thread: 1,
                    priority: Priority(7)
                },
            ]
        );
        assert_eq!(
            cpi.invoke(None, req(1, 2), &mut work),
            Err(IpcError::PoolExhausted)
        );
        cpi.check().unwrap();
    }

    /// Section 4.1 by hand: the fixed thread serves the first request, queues the second,
    /// sends nested requests at its own priority for the task it serves, and after its reply
    /// serves the queued one; `nest` stops at it.
    #[test]
    fn a_fixed_cpi_queues_and_nests_at_its_own_priority() {
        let mut work = Work::default();
        let mut cpi = Cpi::new(CpiProtocol::Ipcp, Priority(6), 1, 4);
        assert!(matches!(
            cpi.invoke(None, req(2, 0), &mut work),
            Ok(Invoked::Served { thread: 0, .. })
        ));
        assert_eq!(cpi.invoke(None, req(5, 1), &mut work), Ok(Invoked::Queued));
        let (nested, _) = cpi.send_nested(0, CpiId(3)).unwrap();
        assert_eq!(nested, req(6, 0));
        assert_eq!(cpi.nest(Priority(8), TaskId(0), &mut work), None);
        let replied = cpi.reply(0, &mut work).unwrap();
        assert_eq!(replied.next, Some(req(5, 1)));
        assert_eq!(replied.effects, Effects::one(Effect::Wake { thread: 0 }));
        assert_eq!(cpi.reply(0, &mut work).unwrap().next, None);
        assert_eq!(cpi.reply(0, &mut work), Err(IpcError::WrongState));
    }

    /// Fig. 5 by hand: each request gets its own thread at the requester's priority; a
    /// nested request rises to the ceiling and carries the request's priority.
    #[test]
    fn propagation_serves_each_request_on_its_own_thread() {
        let mut work = Work::default();
        let mut cpi = Cpi::new(CpiProtocol::Propagated, Priority(9), 2, 4);
        for (thread, task) in [(0u32, 0u32), (1, 1)] {
            let invoked = cpi.invoke(None, req(4 + task as u8, task), &mut work);
            assert!(
                matches!(invoked, Ok(Invoked::Served { thread: t, waits: false, .. }) if t == thread)
            );
        }
        let (nested, effects) = cpi.send_nested(1, CpiId(0)).unwrap();
        assert_eq!(nested, req(5, 1));
        assert_eq!(
            effects,
            Effects::one(Effect::SetPriority {
                thread: 1,
                priority: Priority(9)
            })
        );
        assert_eq!(
            cpi.nested_reply(1).unwrap(),
            Effects::one(Effect::SetPriority {
                thread: 1,
                priority: Priority(5)
            })
        );
        assert_eq!(
            cpi.invoke(None, req(1, 2), &mut work),
            Err(IpcError::PoolExhausted)
        );
        cpi.check().unwrap();
    }
}
