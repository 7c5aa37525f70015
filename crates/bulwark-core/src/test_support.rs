//! Builders the unit tests of several modules share, so that each test reads in its own
//! terms (milliseconds, priorities) without a copy of the conversions.

use crate::ipc::{Effect, Request};
use crate::{Duration, Instant, Priority, TaskId, Wake};

/// `n` milliseconds.
pub(crate) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The instant `n` milliseconds after zero.
pub(crate) fn at(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000_000)
}

/// A wake into the next job, with no deadline of its own: the policies under test take
/// theirs from the reservation.
pub(crate) const JOB: Wake = Wake::NextJob {
    deadline: Instant::NEVER,
};

/// A request of task `requestor` at `priority`.
pub(crate) fn req(priority: u8, requestor: u32) -> Request {
    Request {
        priority: Priority(priority),
        requestor: TaskId(requestor),
    }
}

/// The effect that sets `thread`'s priority to `priority`.
pub(crate) fn set_priority(thread: u32, priority: u8) -> Effect {
    Effect::SetPriority {
        thread,
        priority: Priority(priority),
    }
}
