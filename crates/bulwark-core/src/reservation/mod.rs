//! Processor reservations: a budget `b` per period `p` for each task, enforced by the policy
//! that owns the task's timers.

pub mod deferrable;
pub mod replenishment;

pub use deferrable::DeferrableServer;

use crate::{CoreError, Duration};

/// A reservation's parameters: at most `budget` of processor time per `period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// The budget `b` (non-zero, at most the period).
    pub budget: Duration,
    /// The replenishment period `p` (non-zero).
    pub period: Duration,
}

impl Reservation {
    /// Checks `0 < budget <= period`.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.budget.is_zero() || self.period.is_zero() || self.budget > self.period {
            return Err(CoreError::InvalidParameter);
        }
        Ok(())
    }
}
