//! Bulwark's mechanisms, written as a kernel runs them.
//!
//! Everything here is `no_std` + `alloc`: integer nanosecond time, capacities fixed when a
//! policy is configured, no allocation on the paths a scheduler invocation takes, no I/O and no
//! panics on any sequence of calls. A kernel links this crate; so do Bulwark's simulator, its
//! benchmarks and its property tests, which is why they all exercise the same code.
//!
//! The entry points are [`Policy`] (one trait, one file per per-core scheduling policy),
//! [`ClusterScheduler`], the one interface for a cluster of cores that per-core policies meet
//! through [`PerCore`] and the clustered reservation scheduler implements directly, and
//! [`kernel::Kernel`], the one syscall layer over the kernel objects (CPIs, gates, the object
//! store and scheduling contexts).
#![no_std]
#![deny(missing_docs)]

extern crate alloc;

pub mod bandwidth;
pub mod bitmap;
pub mod criticality;
pub mod edf;
pub mod error;
pub mod fixed_priority;
pub mod heap;
pub mod ipc;
pub mod kernel;
pub mod policy;
pub mod reclaim;
pub mod reservation;
pub mod runqueue;
pub mod scheduler;
pub mod suspension;
pub mod task;
pub mod time;
pub mod timeouts;
pub mod work;

#[cfg(test)]
mod test_support;

pub use edf::Edf;
pub use error::CoreError;
pub use fixed_priority::FixedPriority;
pub use policy::{ContextChange, Decision, Policy, Wake};
pub use scheduler::{
    ClusterScheduler, CoreDecision, Event, Notice, Notices, PerCore, SchedulerError,
};
pub use task::{Priority, TaskId};
pub use time::{Duration, Instant};
pub use work::Work;
