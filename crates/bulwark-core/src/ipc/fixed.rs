//! A CPI with a fixed priority (CAmkES paper, section 4.1): one thread listening on the
//! endpoint at the CPI's priority ceiling (the immediate priority ceiling protocol, IPCP) or
//! at the maximum priority (non-preemptive critical sections, NPCS). With one thread no lock
//! is needed: requests queue on the endpoint (FIFO, as seL4's endpoints) and are served one
//! at a time. A nested request carries the thread's priority, not the originating task's.
//!
//! Invariant: the queue is empty when the thread is idle.

use alloc::collections::VecDeque;

use super::{Effect, Effects, IpcError, Request};
use crate::Priority;

/// The state of one fixed-priority CPI.
#[derive(Clone, Debug)]
pub struct FixedCpi {
    priority: Priority,
    serving: Option<Request>,
    queue: VecDeque<Request>,
    capacity: usize,
}

impl FixedCpi {
    /// IPCP at `ceiling`, with room for `capacity` queued requests (the possible concurrent
    /// requesters, fixed at configuration).
    pub fn ipcp(ceiling: Priority, capacity: usize) -> Self {
        FixedCpi {
            priority: ceiling,
            serving: None,
            queue: VecDeque::with_capacity(capacity),
            capacity,
        }
    }

    /// NPCS: the thread runs at the maximum priority.
    pub fn npcs(capacity: usize) -> Self {
        Self::ipcp(Priority::MAX, capacity)
    }

    /// The thread's fixed priority.
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// The request being served.
    pub fn serving(&self) -> Option<Request> {
        self.serving
    }

    /// A request arrives: served at once (true) or queued behind the one being served.
    pub fn request(&mut self, request: Request) -> Result<bool, IpcError> {
        if self.serving.is_none() {
            self.serving = Some(request);
            return Ok(true);
        }
        if self.queue.len() >= self.capacity {
            return Err(IpcError::PoolExhausted);
        }
        self.queue.push_back(request);
        Ok(false)
    }

    /// The priority a nested request from this CPI carries: the thread's.
    pub fn nested_priority(&self) -> Priority {
        self.priority
    }

    /// The request is done; the next queued one, if any, is served.
    pub fn finish(&mut self) -> Result<(Option<Request>, Effects), IpcError> {
        if self.serving.take().is_none() {
            return Err(IpcError::WrongState);
        }
        self.serving = self.queue.pop_front();
        let wake = self.serving.map(|_| Effect::Wake { thread: 0 });
        Ok((self.serving, Effects::of([wake])))
    }

    /// Checks the invariant stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.serving.is_none() && !self.queue.is_empty() {
            return Err("requests queue only while one is served");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TaskId;

    #[test]
    fn one_at_a_time_in_arrival_order() {
        let mut cpi = FixedCpi::ipcp(Priority(12), 2);
        let r = |p, t| Request {
            priority: Priority(p),
            requestor: TaskId(t),
        };
        assert_eq!(cpi.request(r(3, 1)), Ok(true));
        assert_eq!(cpi.request(r(9, 2)), Ok(false));
        assert_eq!(cpi.request(r(5, 3)), Ok(false));
        assert_eq!(cpi.request(r(5, 4)), Err(IpcError::PoolExhausted));
        assert_eq!(cpi.nested_priority(), Priority(12));
        assert_eq!(cpi.finish().unwrap().0, Some(r(9, 2)));
        assert_eq!(cpi.finish().unwrap().0, Some(r(5, 3)));
        assert_eq!(cpi.finish().unwrap().0, None);
        assert_eq!(cpi.finish().map(|x| x.0), Err(IpcError::WrongState));
        assert_eq!(FixedCpi::npcs(1).priority(), Priority::MAX);
        cpi.check().unwrap();
    }
}
