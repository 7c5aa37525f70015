//! Processor reservations: a budget `b` per period `p` for each task, enforced by the policy
//! that owns the task's timers.
//!
//! The contract is the SPR paper's `(b, p, sigma, eta)` (the priority is given beside it) plus
//! the capacity `S` of the replenishment queue that sporadic-server rules keep.

pub mod clustered;
pub mod context;
pub mod deferrable;
pub mod priority_timeouts;
pub mod replenishment;
pub mod sporadic;
pub mod spr;

pub use context::SchedContext;
pub use deferrable::DeferrableServer;
pub use sporadic::SporadicServer;
pub use spr::{ReplenishmentRule, Spr};

use crate::suspension::{Suspensions, TaskState};
use crate::{CoreError, Duration, Instant, TaskId};

/// A reservation's parameters: at most `budget` of processor time per `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The budget `b` (non-zero, at most the period).
    pub budget: Duration,
    /// The replenishment period `p` (non-zero).
    pub period: Duration,
    /// `S`: how many pending replenishments a sporadic-server rule tracks (at least one).
    /// Deferrable-server rules keep none and ignore it.
    pub replenishments: u16,
    /// `eta`: the non-preemptive region a dispatch grants, `min(eta, remaining budget)` (SPR,
    /// section III-F). Zero means fully preemptive.
    pub non_preemptive: Duration,
}

impl Reservation {
    /// The replenishment-queue capacity used when a scenario does not choose one.
    pub const DEFAULT_REPLENISHMENTS: u16 = 8;

    /// `(b, p)` with the default queue capacity and no non-preemptive region.
    pub const fn new(budget: Duration, period: Duration) -> Self {
        Reservation {
            budget,
            period,
            replenishments: Self::DEFAULT_REPLENISHMENTS,
            non_preemptive: Duration::ZERO,
        }
    }

    /// The same reservation with a replenishment queue of capacity `s`.
    pub const fn with_replenishments(mut self, s: u16) -> Self {
        self.replenishments = s;
        self
    }

    /// The same reservation with non-preemptive regions of length `eta`.
    pub const fn with_non_preemptive(mut self, eta: Duration) -> Self {
        self.non_preemptive = eta;
        self
    }

    /// Checks `0 < budget <= period` and `S >= 1`.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.budget.is_zero()
            || self.period.is_zero()
            || self.budget > self.period
            || self.replenishments == 0
        {
            return Err(CoreError::InvalidParameter);
        }
        Ok(())
    }
}

/// Charges the task chosen at the last invocation (`running`, with the time its accounting
/// last advanced) for the time up to `now`, and advances its accounting to `now`: the budget
/// use of the servers that count it per task in `used`, exact whatever the reason for the
/// invocation.
#[inline]
pub(crate) fn charge_running(
    running: &mut Option<(TaskId, Instant)>,
    tasks: &Suspensions,
    used: &mut [Duration],
    now: Instant,
) {
    if let Some((task, since)) = *running {
        // A task that suspended at its last accounting has not run since.
        if tasks.state(task) == TaskState::Ready {
            let t = task.index();
            used[t] = used[t].saturating_add(now.saturating_duration_since(since));
        }
        *running = Some((task, now));
    }
}
