//! The record of work one scheduler invocation did, which the cost model turns into time.

/// Counts of the bounded steps a policy took in one invocation (event handling plus
/// `schedule`). The papers' bounds are stated in these units: SPR, for one, promises at most
/// one timeout processed per invocation however many have expired.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Work {
    /// Timeouts (activation or replenishment) looked at, whether or not they were due.
    pub timeouts_examined: u32,
    /// Timeouts acted upon: a sleeping task woken or a budget replenished.
    pub timeouts_processed: u32,
    /// Replenishment-queue entries consumed, merged or queued.
    pub replenishments_processed: u32,
    /// Insertions, removals and key updates on a heap (timer queue or EDF ready queue).
    pub heap_operations: u32,
    /// Entries moved between or within run queues.
    pub queue_entries_moved: u32,
    /// Distinct reservations whose budget or timeout the invocation read or changed. A
    /// measure for the SPR bound (at most two), not a cost: [`Work::units`] leaves it out,
    /// since touching a reservation costs the steps counted above.
    pub reservations_touched: u32,
}

impl Work {
    /// Total units of work, each of which the cost model charges the same.
    pub const fn units(&self) -> u64 {
        self.timeouts_examined as u64
            + self.timeouts_processed as u64
            + self.replenishments_processed as u64
            + self.heap_operations as u64
            + self.queue_entries_moved as u64
    }
}
