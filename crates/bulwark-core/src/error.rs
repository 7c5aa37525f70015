//! The errors a policy reports. A call that returns an error has changed nothing.

use core::fmt;

/// Why a policy refused a call. Small and `repr(u8)` so a kernel can return it in a register.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum CoreError {
    /// The task id is beyond the capacity fixed at configuration, or was never added.
    UnknownTask = 1,
    /// The task was already added to this policy.
    AlreadyAdded = 2,
    /// The call needs a ready task, and this one is sleeping or blocked.
    NotReady = 3,
    /// The call needs a suspended task, and this one is ready.
    AlreadyReady = 4,
    /// A configuration value is out of range (a zero budget or capacity, say).
    InvalidParameter = 5,
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CoreError::UnknownTask => "unknown task",
            CoreError::AlreadyAdded => "task already added",
            CoreError::NotReady => "task is not ready",
            CoreError::AlreadyReady => "task is already ready",
            CoreError::InvalidParameter => "parameter out of range",
        })
    }
}
