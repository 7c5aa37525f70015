//! Component systems on real threads: the component kernel (the simulator's, with reported
//! timing) as the dispatcher's kernel, and one real thread per kernel thread (every task's
//! control thread, every thread of every CPI's pool) doing its `Execute` stretches for real.
//!
//! # How it runs
//!
//! The dispatcher owns the kernel: releases, the CPIs' protocol steps (priority changes,
//! propagation, inheritance with `nest`, waking a lock's next holder), the run queue, the
//! scheduling contexts' budgets and non-preemptive regions all happen inside it, at kernel
//! entries, exactly as the simulator runs them. A real thread only works: it spins the CPU
//! time of the stretch the kernel gave it (`spin_cpu`, so time it is preempted does not
//! count) and reports the stretch done, a request that parks it on its gate
//! ([`crate::stretches`], shared with the stepped scenario machine).
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
    ComponentConfigError, ComponentOutcome, ComponentSystemConfig, Kernel, RunOptions, Timing,
};

use crate::stretches::{self, HostRun, SteppedKernel, Turn};
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
    let until = host
        .until
        .unwrap_or(config.longest_period().saturating_mul(10))
        .min(host.max_run);
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(until),
        record_jobs: host.record_jobs,
        record_trace: host.record_trace,
    };
    let threads: Vec<String> = Kernel::new(config, options, Timing::Reported)
        .map_err(refused)?
        .threads()
        .into_iter()
        .map(|t| t.name)
        .collect();
    stretches::run(host, &threads, options.until, || {
        Kernel::new(config, options, Timing::Reported)
            .map(Components)
            .map_err(refused)
    })
}

fn refused(error: ComponentConfigError) -> HostError {
    HostError::Unsupported(format!("the component system cannot run: {error}"))
}

/// The component kernel as the dispatcher's: a worker is a kernel thread.
struct Components<'a>(Kernel<'a>);

impl SteppedKernel for Components<'_> {
    type Outcome = ComponentOutcome;

    fn settle(&mut self) -> Result<Option<Turn>, HostError> {
        Ok(self.0.settle().map(|stretch| Turn {
            worker: stretch
                .thread
                .map(|thread| (thread, stretch.remaining, stretch.serial)),
            timer: stretch.timer,
        }))
    }

    fn advance(&mut self, to: Instant) -> Result<(), HostError> {
        self.0.advance(to);
        Ok(())
    }

    fn stretch_done(&mut self, worker: usize, serial: u64) {
        self.0.stretch_done(worker, serial);
    }

    fn finish(self) -> ComponentOutcome {
        self.0.finish()
    }
}
