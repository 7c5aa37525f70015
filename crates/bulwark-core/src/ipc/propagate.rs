//! A CPI with priority propagation (CAmkES paper, section 4.3, Fig. 5): reentrant, each
//! request served by its own pool thread at the requester's priority, tracked by the thread
//! manager, and `nest` for CPIs downstream of a PIP CPI. Comments number the steps as Fig. 5.
//!
//! The thread manager keeps a node per pool thread: free, or in use with the priority,
//! thread, requestor and `nest` pointer of the request it serves. The paper keeps free and
//! in-use singly-linked lists; here the node of a thread is its pool index, so finding a free
//! one is a scan of a fixed-size pool and finding a requestor's node for `nest` likewise.
//!
//! Invariants (checked by [`PropagateCpi::check`]): a requestor has at most one node in use
//! (a second request of a task already served here is refused: `nest` must find one node);
//! a `nest` pointer is set only on a node in use.

use alloc::vec;
use alloc::vec::Vec;

use super::{CpiId, Effect, Effects, IpcError, Request};
use crate::{Priority, TaskId, Work};

/// One thread-manager node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    priority: Priority,
    requestor: TaskId,
    nest: Option<CpiId>,
}

/// The priority-propagation state of one CPI.
#[derive(Clone, Debug)]
pub struct PropagateCpi {
    ceiling: Priority,
    nodes: Vec<Option<Node>>,
}

impl PropagateCpi {
    /// A CPI whose pool of `threads` threads waits at `ceiling`.
    pub fn new(ceiling: Priority, threads: u32) -> Self {
        PropagateCpi {
            ceiling,
            nodes: vec![None; threads as usize],
        }
    }

    /// The priority ceiling.
    pub fn ceiling(&self) -> Priority {
        self.ceiling
    }

    /// The priority thread `thread` serves its request at, if it serves one.
    pub fn priority_of(&self, thread: u32) -> Option<Priority> {
        self.nodes
            .get(thread as usize)
            .copied()
            .flatten()
            .map(|n| n.priority)
    }

    /// The threads serving requests.
    pub fn in_use(&self) -> usize {
        self.nodes.iter().flatten().count()
    }

    /// A request arrives: steps 1-5, then the thread runs the procedure (6). Returns the
    /// pool thread that serves it.
    pub fn request(
        &mut self,
        request: Request,
        work: &mut Work,
    ) -> Result<(u32, Effects), IpcError> {
        // (1) a free node from the thread manager. The same scan of the whole pool, counted,
        // refuses a second request of a requestor already served here: a task has one
        // outstanding request, and the node `nest` finds must be unique.
        work.queue_entries_moved += self.nodes.len() as u32;
        let mut free = None;
        for (at, node) in self.nodes.iter().enumerate() {
            match node {
                Some(node) if node.requestor == request.requestor => {
                    return Err(IpcError::WrongState);
                }
                Some(_) => {}
                None => {
                    free.get_or_insert(at);
                }
            }
        }
        let thread = free.ok_or(IpcError::PoolExhausted)? as u32;
        // (2) priority, (3) thread, (4) requestor.
        self.nodes[thread as usize] = Some(Node {
            priority: request.priority,
            requestor: request.requestor,
            nest: None,
        });
        // (5) run at the requester's priority.
        let effects = Effects::one(Effect::SetPriority {
            thread,
            priority: request.priority,
        });
        Ok((thread, effects))
    }

    fn node(&mut self, thread: u32) -> Result<&mut Node, IpcError> {
        match self.nodes.get_mut(thread as usize) {
            None => Err(IpcError::UnknownThread),
            Some(None) => Err(IpcError::WrongState),
            Some(Some(node)) => Ok(node),
        }
    }

    /// Steps 7-10: a nested request to `downstream` at the node's (inherited) priority.
    pub fn begin_nested(
        &mut self,
        thread: u32,
        downstream: CpiId,
    ) -> Result<(Request, Effects), IpcError> {
        let ceiling = self.ceiling;
        let node = self.node(thread)?;
        if node.nest.is_some() {
            return Err(IpcError::WrongState);
        }
        // (7) to the PC, (8) the request carries the node's priority, (9) set the pointer.
        let effects = Effects::one(Effect::SetPriority {
            thread,
            priority: ceiling,
        });
        node.nest = Some(downstream);
        // (10) send.
        Ok((
            Request {
                priority: node.priority,
                requestor: node.requestor,
            },
            effects,
        ))
    }

    /// Steps 11-12: the reply came back: clear the pointer, back to the node's priority.
    pub fn end_nested(&mut self, thread: u32) -> Result<Effects, IpcError> {
        let node = self.node(thread)?;
        if node.nest.take().is_none() {
            return Err(IpcError::WrongState);
        }
        Ok(Effects::one(Effect::SetPriority {
            thread,
            priority: node.priority,
        }))
    }

    /// Steps 13-15: the procedure is done: back to the ceiling, the node freed, reply.
    pub fn finish(&mut self, thread: u32) -> Result<Effects, IpcError> {
        if self.node(thread)?.nest.is_some() {
            return Err(IpcError::WrongState);
        }
        self.nodes[thread as usize] = None;
        Ok(Effects::one(Effect::SetPriority {
            thread,
            priority: self.ceiling,
        }))
    }

    /// `nest` (steps 16-18): `requestor`'s request here now has `priority` if higher; its
    /// thread is raised, and the update goes further down if it waits on a nested request.
    pub fn nest(&mut self, priority: Priority, requestor: TaskId, work: &mut Work) -> Effects {
        // (16) find the node serving the requestor: a scan of the pool, counted as it goes.
        let found = self
            .nodes
            .iter()
            .position(|n| n.is_some_and(|n| n.requestor == requestor));
        work.queue_entries_moved += found.map_or(self.nodes.len(), |at| at + 1) as u32;
        let Some(thread) = found else {
            return Effects::none();
        };
        let Some(node) = self.nodes[thread].as_mut() else {
            return Effects::none();
        };
        if priority <= node.priority {
            return Effects::none();
        }
        // (17) elevate. While it waits downstream it sits at the ceiling; step 12 will drop it
        // to this priority, so only a thread running its procedure changes now.
        node.priority = priority;
        Effects::one(match node.nest {
            None => Effect::SetPriority {
                thread: thread as u32,
                priority,
            },
            // (18) blocked downstream: pass it on.
            Some(cpi) => Effect::Nest {
                cpi,
                priority,
                requestor,
            },
        })
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        let used: Vec<TaskId> = self.nodes.iter().flatten().map(|n| n.requestor).collect();
        for (i, r) in used.iter().enumerate() {
            if used[..i].contains(r) {
                return Err("a requestor has at most one node in use");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{req, set_priority};
    use alloc::vec;

    /// Fig. 5, walked: two concurrent requests run at their requesters' priorities on
    /// distinct threads (1-6); a nested request goes out at the node's priority (7-10) and
    /// comes back (11-12); finishing frees the node (13-15); a third request finds a free
    /// node; with the pool full a request is refused, and so is a second request of a task
    /// already served. A request's scan covers the whole pool of 2 (a free node, and no
    /// node of the same requestor); `nest`'s scan stops at the node it finds.
    #[test]
    fn the_steps_of_fig_5() {
        let mut cpi = PropagateCpi::new(Priority(20), 2);
        let mut w = Work::default();
        let scanned = |w: &mut Work| core::mem::take(&mut w.queue_entries_moved);
        let (t0, e) = cpi.request(req(3, 1), &mut w).unwrap();
        assert_eq!(
            (t0, e.iter().collect::<Vec<_>>()),
            (0, vec![set_priority(0, 3)])
        );
        assert_eq!(
            scanned(&mut w),
            2,
            "the whole pool: node 0 free, no node of task 1"
        );
        let (t1, e) = cpi.request(req(7, 2), &mut w).unwrap();
        assert_eq!(
            (t1, e.iter().collect::<Vec<_>>()),
            (1, vec![set_priority(1, 7)])
        );
        assert_eq!(
            scanned(&mut w),
            2,
            "the whole pool: node 0 busy, node 1 free"
        );
        // Task 2 asking again while served here is refused, and changes nothing.
        assert_eq!(
            cpi.request(req(8, 2), &mut w).map(|x| x.0),
            Err(IpcError::WrongState)
        );
        assert_eq!((cpi.in_use(), scanned(&mut w)), (2, 2));
        assert_eq!(
            cpi.request(req(9, 3), &mut w).map(|x| x.0),
            Err(IpcError::PoolExhausted)
        );
        assert_eq!(scanned(&mut w), 2, "the whole pool, in vain");
        let (nested, e) = cpi.begin_nested(0, CpiId(4)).unwrap();
        assert_eq!(
            (nested, e.iter().collect::<Vec<_>>()),
            (req(3, 1), vec![set_priority(0, 20)])
        );
        // A PIP CPI upstream pushes 9 for task 1: its thread waits downstream, so pass it on.
        let e = cpi.nest(Priority(9), TaskId(1), &mut w);
        assert_eq!(
            e.iter().collect::<Vec<_>>(),
            [Effect::Nest {
                cpi: CpiId(4),
                priority: Priority(9),
                requestor: TaskId(1)
            }]
        );
        assert_eq!(scanned(&mut w), 1, "task 1 is on node 0");
        // The reply: back to the (raised) node priority 9.
        let e = cpi.end_nested(0).unwrap();
        assert_eq!(e.iter().collect::<Vec<_>>(), [set_priority(0, 9)]);
        assert_eq!(
            cpi.finish(0).unwrap().iter().collect::<Vec<_>>(),
            [set_priority(0, 20)]
        );
        assert_eq!(cpi.in_use(), 1);
        let (t, _) = cpi.request(req(1, 5), &mut w).unwrap();
        assert_eq!(t, 0, "the freed node serves the next request");
        // nest on a running thread raises it directly; a lower priority changes nothing.
        assert_eq!(
            cpi.nest(Priority(8), TaskId(2), &mut w)
                .iter()
                .collect::<Vec<_>>(),
            [set_priority(1, 8)]
        );
        assert!(cpi.nest(Priority(2), TaskId(2), &mut w).is_empty());
        assert_eq!(
            scanned(&mut w),
            2 + 2 + 2,
            "the whole pool for the request; task 2 on node 1, twice"
        );
        assert_eq!(cpi.finish(1).map(|e| e.len()), Ok(1));
        assert_eq!(cpi.finish(1), Err(IpcError::WrongState));
        cpi.check().unwrap();
    }
}
