//! Processor reservations: budgets replenished over time, as the sporadic server and SPR keep
//! them.

pub mod replenishment;
