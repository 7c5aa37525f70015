//! A CPI with the priority inheritance protocol (CAmkES paper, section 4.2, Fig. 4): one lock,
//! the thread holding it, the priority it inherits, the task it serves, and the `nest`
//! pointer set while the holder waits on a downstream request. The comments number the
//! steps as Fig. 4 does.
//!
//! Protocol steps run at the CPI's priority ceiling, so under fixed-priority preemptive
//! scheduling no request can interleave with them: each method here is one such atomic
//! stretch. Only the procedure itself (steps 14-15 and 21) runs below the ceiling.
//!
//! Invariants (checked by [`InheritCpi::check`]): the lock is held exactly when there is a
//! holder and a requestor; the inherited priority is at least every waiter's; waiters and
//! the holder are distinct pool threads; `nest` is set only while the lock is held.

use super::notification::{NotificationManager, Waiter};
use super::{CpiId, Effect, Effects, IpcError, Request};
use crate::{Priority, TaskId, Work};

/// What became of a request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Admission {
    /// The lock was free: the thread holds it and runs the procedure (State Unlocked).
    Acquired,
    /// The lock was held: the thread waits in the notification manager (State Locked).
    Waiting,
}

/// The PIP state of one CPI.
#[derive(Clone, Debug)]
pub struct InheritCpi {
    ceiling: Priority,
    threads: u32,
    locked: bool,
    holder: Option<u32>,
    inherited: Priority,
    requestor: Option<TaskId>,
    nest: Option<CpiId>,
    waiters: NotificationManager,
}

impl InheritCpi {
    /// A CPI whose pool of `threads` threads waits at `ceiling`.
    pub fn new(ceiling: Priority, threads: u32) -> Self {
        InheritCpi {
            ceiling,
            threads,
            locked: false,
            holder: None,
            inherited: Priority::MIN,
            requestor: None,
            nest: None,
            waiters: NotificationManager::with_threads(threads as usize),
        }
    }

    /// The priority ceiling (PC).
    pub fn ceiling(&self) -> Priority {
        self.ceiling
    }

    /// The thread holding the lock.
    pub fn holder(&self) -> Option<u32> {
        self.holder
    }

    /// The holder's inherited priority.
    pub fn inherited(&self) -> Priority {
        self.inherited
    }

    /// The task the holder serves.
    pub fn requestor(&self) -> Option<TaskId> {
        self.requestor
    }

    /// The downstream CPI the holder waits on, if any.
    pub fn nest_target(&self) -> Option<CpiId> {
        self.nest
    }

    /// The threads waiting for the lock.
    pub fn waiters(&self) -> &NotificationManager {
        &self.waiters
    }

    fn known(&self, thread: u32) -> Result<(), IpcError> {
        if thread < self.threads {
            Ok(())
        } else {
            Err(IpcError::UnknownThread)
        }
    }

    fn holds(&self, thread: u32) -> Result<(), IpcError> {
        self.known(thread)?;
        if self.holder == Some(thread) {
            Ok(())
        } else {
            Err(IpcError::WrongState)
        }
    }

    /// Steps 2-5: `priority` is inherited by the holder if higher, and pushed down its
    /// outstanding nested request.
    fn inherit(&mut self, priority: Priority) -> Effects {
        let (Some(holder), Some(requestor)) = (self.holder, self.requestor) else {
            return Effects::none();
        };
        // (2) compare with the inherited priority.
        if priority <= self.inherited {
            return Effects::none();
        }
        // (3) update it, (4) elevate the holder's TCB; unless it waits downstream, where it
        // runs at the ceiling from step 15 until step 20 drops it to the inherited priority
        // (section 4.2: steps 16-20 run at the ceiling), so its TCB is left there.
        self.inherited = priority;
        let elevate = self.nest.is_none().then_some(Effect::SetPriority {
            thread: holder,
            priority,
        });
        // (5) the holder waits downstream: propagate through the nest pointer.
        let propagate = self.nest.map(|cpi| Effect::Nest {
            cpi,
            priority,
            requestor,
        });
        Effects::of([elevate, propagate])
    }

    /// Steps 9-13: `thread` takes the free lock for `request` and drops to its priority.
    fn acquire(&mut self, thread: u32, request: Request) -> Effect {
        // (9) lock, (10) inherited = request priority, (11) holder = self, (12) requestor.
        self.locked = true;
        self.inherited = request.priority;
        self.holder = Some(thread);
        self.requestor = Some(request.requestor);
        // (13) demote to the request priority to run the procedure (14).
        Effect::SetPriority {
            thread,
            priority: request.priority,
        }
    }

    /// A request arrives at pool thread `thread` (step 1 checks the lock).
    pub fn request(
        &mut self,
        thread: u32,
        request: Request,
        work: &mut Work,
    ) -> Result<(Admission, Effects), IpcError> {
        self.known(thread)?;
        if self.holder == Some(thread) {
            return Err(IpcError::WrongState);
        }
        if self.locked {
            // (6) wait for the signal; validated first so a refusal changes nothing.
            self.waiters
                .wait(thread, request, work)
                .map_err(|_| IpcError::WrongState)?;
            Ok((Admission::Waiting, self.inherit(request.priority)))
        } else {
            let demote = self.acquire(thread, request);
            Ok((Admission::Acquired, Effects::one(demote)))
        }
    }

    /// Steps 15-18: the holder sends a nested request to `downstream`; returns the request
    /// to send (at the inherited priority, for the task it serves).
    pub fn begin_nested(
        &mut self,
        thread: u32,
        downstream: CpiId,
    ) -> Result<(Request, Effects), IpcError> {
        self.holds(thread)?;
        let requestor = self.requestor.ok_or(IpcError::WrongState)?;
        // (15) elevate to the PC while the pointer is set.
        let effects = Effects::one(Effect::SetPriority {
            thread,
            priority: self.ceiling,
        });
        // (16) request priority = inherited, (17) set the nest pointer, (18) send.
        self.nest = Some(downstream);
        let request = Request {
            priority: self.inherited,
            requestor,
        };
        Ok((request, effects))
    }

    /// Steps 19-20: the reply came back: clear the pointer, drop to the inherited priority.
    pub fn end_nested(&mut self, thread: u32) -> Result<Effects, IpcError> {
        self.holds(thread)?;
        if self.nest.is_none() {
            return Err(IpcError::WrongState);
        }
        // (19) clear the function pointer, (20) demote to the inherited priority.
        self.nest = None;
        Ok(Effects::one(Effect::SetPriority {
            thread,
            priority: self.inherited,
        }))
    }

    /// Steps 21-24 (State Finished), then 7-13 for the waiter it wakes: the holder finishes
    /// the procedure, releases the lock and signals; the highest-priority waiter takes it.
    pub fn finish(
        &mut self,
        thread: u32,
        work: &mut Work,
    ) -> Result<(Option<Waiter>, Effects), IpcError> {
        self.holds(thread)?;
        if self.nest.is_some() {
            return Err(IpcError::WrongState);
        }
        // (21) back to the ceiling, (22) unlock.
        let to_ceiling = Effect::SetPriority {
            thread,
            priority: self.ceiling,
        };
        self.locked = false;
        self.holder = None;
        self.requestor = None;
        self.inherited = Priority::MIN;
        // (23) signal the head; the woken thread (7) returns from wait, (8) pops its object
        // and (9) proceeds as if the lock were free. (24) the finisher replies.
        let woken = self.waiters.signal(work);
        let wake = woken.map(|w| Effect::Wake { thread: w.thread });
        let demote = woken.map(|w| self.acquire(w.thread, w.request));
        Ok((woken, Effects::of([Some(to_ceiling), wake, demote])))
    }

    /// `nest` (step 25): the request of `requestor`, outstanding here, now has `priority`.
    /// If it holds the lock, steps 2-5 apply to it; if it waits, its notification object is
    /// raised and sifted up, and then steps 2-5 raise the holder.
    pub fn nest(&mut self, priority: Priority, requestor: TaskId, work: &mut Work) -> Effects {
        if self.requestor != Some(requestor) && !self.waiters.raise(requestor, priority, work) {
            // Not outstanding here (already replied): nothing to raise.
            return Effects::none();
        }
        self.inherit(priority)
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        self.waiters.check()?;
        if self.locked != (self.holder.is_some() && self.requestor.is_some()) {
            return Err("the lock is held exactly when there is a holder serving a task");
        }
        if let Some(head) = self.waiters.peek() {
            if !self.locked {
                return Err("threads wait only while the lock is held");
            }
            if head.request.priority > self.inherited {
                return Err("the holder inherits at least every waiter's priority");
            }
            if Some(head.thread) == self.holder {
                return Err("the holder does not wait for its own lock");
            }
        }
        if self.nest.is_some() && !self.locked {
            return Err("the nest pointer is set only by the holder");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{req, set_priority};
    use alloc::format;
    use alloc::vec;
    use alloc::vec::Vec;

    fn effects(e: &Effects) -> Vec<Effect> {
        e.iter().collect()
    }

    /// Fig. 4, walked: ceiling 10, pool of 3. Task 1 (priority 2) takes the lock; task 2
    /// (priority 5) waits and the holder inherits 5; task 3 (priority 8) waits and the holder
    /// inherits 8; a fourth request at priority 5 is refused (pool exhausted, nothing
    /// changes). When the holder finishes, task 3's thread is woken first and holds the lock
    /// at priority 8 (then task 2's at 5).
    #[test]
    fn the_steps_of_fig_4() {
        let mut cpi = InheritCpi::new(Priority(10), 3);
        let mut w = Work::default();
        // (1) unlocked: (9)-(12), (13) demote thread 0 to 2.
        let (a, e) = cpi.request(0, req(2, 1), &mut w).unwrap();
        assert_eq!(a, Admission::Acquired);
        assert_eq!(effects(&e), [set_priority(0, 2)]);
        assert_eq!(
            (cpi.holder(), cpi.inherited(), cpi.requestor()),
            (Some(0), Priority(2), Some(TaskId(1)))
        );
        // (1) locked: (2) 5 > 2, (3) inherited = 5, (4) raise thread 0, (6) wait.
        let (a, e) = cpi.request(1, req(5, 2), &mut w).unwrap();
        assert_eq!(a, Admission::Waiting);
        assert_eq!(effects(&e), [set_priority(0, 5)]);
        let (_, e) = cpi.request(2, req(8, 3), &mut w).unwrap();
        assert_eq!(effects(&e), [set_priority(0, 8)]);
        assert_eq!(cpi.inherited(), Priority(8));
        let before = format!("{cpi:?}");
        assert_eq!(
            cpi.request(3, req(5, 4), &mut w),
            Err(IpcError::UnknownThread)
        );
        assert_eq!(cpi.request(0, req(5, 4), &mut w), Err(IpcError::WrongState));
        assert_eq!(before, format!("{cpi:?}"), "a refused call changes nothing");
        cpi.check().unwrap();
        // (21) ceiling, (22) unlock, (23) signal: task 3's thread 2 wakes, (7)-(9) takes it.
        let (woken, e) = cpi.finish(0, &mut w).unwrap();
        assert_eq!(woken.map(|x| x.thread), Some(2));
        assert_eq!(
            effects(&e),
            [
                set_priority(0, 10),
                Effect::Wake { thread: 2 },
                set_priority(2, 8)
            ]
        );
        assert_eq!(
            (cpi.holder(), cpi.inherited(), cpi.requestor()),
            (Some(2), Priority(8), Some(TaskId(3)))
        );
        let (woken, _) = cpi.finish(2, &mut w).unwrap();
        assert_eq!(
            woken.map(|x| (x.thread, x.request.requestor)),
            Some((1, TaskId(2)))
        );
        assert_eq!(cpi.inherited(), Priority(5));
        let (woken, e) = cpi.finish(1, &mut w).unwrap();
        assert_eq!((woken, effects(&e)), (None, vec![set_priority(1, 10)]));
        assert_eq!(cpi.holder(), None);
        cpi.check().unwrap();
    }

    /// Nested PIP to PIP (steps 15-20 and 25): A's holder (task 1, priority 2) sends a nested
    /// request to B at its inherited priority; B's lock is held by task 4 (priority 1), so it
    /// waits there and B's holder inherits 2. Then task 3 (priority 9) requests A: A's holder
    /// inherits 9 but, waiting on B, stays at the ceiling (its TCB is not touched until step
    /// 20), and `nest` is called on B, which raises its waiting notification object and B's
    /// holder to 9.
    #[test]
    fn nested_inheritance_through_a_chain() {
        let (a_id, mut a) = (CpiId(0), InheritCpi::new(Priority(10), 2));
        let mut b = InheritCpi::new(Priority(10), 3);
        let mut w = Work::default();
        b.request(0, req(1, 4), &mut w).unwrap(); // task 4 holds B
        a.request(0, req(2, 1), &mut w).unwrap(); // task 1 holds A
                                                  // (15) A's thread to the PC, (16)-(18) send at inherited 2 for task 1.
        let (nested, e) = a.begin_nested(0, CpiId(1)).unwrap();
        assert_eq!(nested, req(2, 1));
        assert_eq!(effects(&e), [set_priority(0, 10)]);
        let (adm, e) = b.request(1, nested, &mut w).unwrap();
        assert_eq!(adm, Admission::Waiting);
        assert_eq!(effects(&e), [set_priority(0, 2)], "B's holder inherits 2");
        // Task 3 at 9 requests A: (2)-(3) A inherits 9, its holder stays at the PC, (5) nest
        // on B.
        let (_, e) = a.request(1, req(9, 3), &mut w).unwrap();
        assert_eq!(a.inherited(), Priority(9));
        assert_eq!(
            effects(&e),
            [Effect::Nest {
                cpi: CpiId(1),
                priority: Priority(9),
                requestor: TaskId(1)
            }]
        );
        // B's nest (25): task 1 waits in B, so its object is raised; then B's holder to 9.
        let e = b.nest(Priority(9), TaskId(1), &mut w);
        assert_eq!(effects(&e), [set_priority(0, 9)]);
        assert_eq!(b.waiters().peek().unwrap().request.priority, Priority(9));
        // B's holder finishes: task 1's request takes B at 9.
        let (woken, _) = b.finish(0, &mut w).unwrap();
        assert_eq!(woken.map(|x| x.request), Some(req(9, 1)));
        // ... replies; A's holder (19) clears the pointer, (20) drops to inherited 9.
        b.finish(1, &mut w).unwrap();
        let e = a.end_nested(0).unwrap();
        assert_eq!(effects(&e), [set_priority(0, 9)]);
        assert_eq!(a.nest_target(), None);
        let _ = a_id;
        a.check().unwrap();
        b.check().unwrap();
    }
}
