//! VBS processes on the machine: systems of them built as scenarios ([`system`]) and what
//! their actions and period instances did ([`records`]).

pub mod records;
pub mod system;

/// How [`run_vbs`](crate::run_vbs) runs, beyond [`Options`](crate::Options).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VbsOptions {
    /// Tell VBS schedulers each action's load at its switch (by default they are not told:
    /// the next switch, or the end of the script, marks the completion).
    pub disclose_loads: bool,
    /// Check the policies' invariants after every call, stopping at the first broken one
    /// ([`SimError::Invariant`](crate::SimError::Invariant)); for tests, it costs a walk of
    /// the policy's state per call.
    pub check_invariants: bool,
}

pub use records::{ActionRecord, ActionSlice, PeriodRecord, VbsRecords, VbsRun};
pub use system::{VbsProcess, VbsSystem, VbsSystemError};
