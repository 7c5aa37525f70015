//! Task identities and fixed priorities.

/// A task (thread) known to a policy. Ids are small dense integers chosen by the platform, so
/// a policy can index its per-task arrays with them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct TaskId(pub u32);

impl TaskId {
    /// The id as an array index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// A fixed priority. Larger is more important, as in seL4 and CAmkES: 255 is the highest.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Priority(pub u8);

impl Priority {
    /// The number of distinct priorities (0 through 255).
    pub const LEVELS: usize = 256;
    /// The least important priority.
    pub const MIN: Priority = Priority(0);
    /// The most important priority.
    pub const MAX: Priority = Priority(u8::MAX);
}
