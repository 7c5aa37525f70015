//! Component systems on real threads: the one machine (the simulator's, stepped with
//! reported timing) as the dispatcher's kernel, running the system's scenario
//! ([`bulwark_sim::components::scenario`]), and one real thread per kernel thread (every
//! task's thread, every thread of every CPI's pool) doing its stretches for real.
//!
//! # How it runs
//!
//! The dispatcher owns the kernel: releases, the CPIs' protocol steps (priority changes,
//! propagation, inheritance with `nest`, waking a lock's next holder), the run queue, the
//! scheduling contexts' budgets and non-preemptive regions all happen inside it, at kernel
//! entries, exactly as the simulator runs them. A real thread only works: it spins the CPU
//! time of the stretch the kernel gave it (`spin_cpu`, so time it is preempted does not
//! count) and reports the stretch done, a request that parks it on its gate
//! ([`crate::stretches`], shared with every stepped system).
//!
//! # What is measured, and what differs from the simulator
//!
//! The kernel runs on the real clock: a stretch ends when its thread says so, a job completes
//! at that instant, and priority inversion is charged for the real time a lower task's thread
//! ran. The protocol steps cost nothing in the model: their real cost is the dispatcher's own
//! time, which is charged to the thread it chooses (its accounting starts at the entry), as
//! the scheduler's work is in the scenario runtime. So the host's responses exceed the
//! simulator's (with zero costs) by the dispatcher's entries and the platform's latencies.

use bulwark_core::Instant;
use bulwark_sim::components::{
    self, ComponentOutcome, ComponentSystemConfig, ProtocolCosts, RunOptions,
};
use bulwark_sim::Machine;

use crate::machine::{refused, Stepped};
use crate::stretches::{self, HostRun};
use crate::{HostConfig, HostError};

/// A component system's run on this machine.
pub type HostComponentOutcome = HostRun<ComponentOutcome>;

/// Runs `config` on the managed core, with its threads real and its kernel the dispatcher,
/// for `host.until` (ten of its longest periods when `None`, as `simulate` runs it; bounded
/// by `host.max_run`). The configuration's protocol costs are not charged: the dispatcher's
/// real time is. `host.seed` is not read: nothing in a component system is drawn.
pub fn run_components(
    config: &ComponentSystemConfig,
    host: &HostConfig,
) -> Result<HostComponentOutcome, HostError> {
    components::validate(config).map_err(|error| {
        HostError::Unsupported(format!("the component system cannot run: {error}"))
    })?;
    let until = host
        .until
        .unwrap_or(config.longest_period().saturating_mul(10))
        .min(host.max_run);
    let free = ComponentSystemConfig {
        costs: ProtocolCosts::ZERO,
        ..config.clone()
    };
    let scenario = components::scenario(&free, until);
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(until),
        record_jobs: host.record_jobs,
        record_trace: host.record_trace,
    }
    .machine_options();
    let workers: Vec<String> = scenario.tasks.iter().map(|t| t.name.clone()).collect();
    let run = stretches::run(host, &workers, Instant::ZERO.saturating_add(until), || {
        Machine::stepped(&scenario, &options, None)
            .map(|machine| Stepped::new(machine.measuring_inversion(host.record_jobs), 0))
            .map_err(refused)
    })?;
    Ok(HostRun {
        outcome: components::outcome(config, run.outcome),
        host: run.host,
        entry_cost: run.entry_cost,
    })
}
