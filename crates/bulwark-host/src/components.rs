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
//! count) and reports the stretch done, a request that parks it on its gate. The kernel's
//! next timer (a release, a depletion, the end of a region, a replenishment) is the core's one
//! timer. The core is handed over as in the scenario runtime ([`crate::handover`]): the chosen
//! thread raised, the preempted one lowered and parked by the preemption signal.
//!
//! # What is measured, and what differs from the simulator
//!
//! The kernel runs on the real clock: a stretch ends when its thread says so, a job completes
//! at that instant, and priority inversion is charged for the real time a lower task's thread
//! ran. The protocol steps cost nothing in the model: their real cost is the dispatcher's own
//! time, which is charged to the thread it chooses (its accounting starts at the entry), as
//! the scheduler's work is in the scenario runtime. So the host's responses exceed the
//! simulator's (with zero costs) by the dispatcher's entries and the platform's latencies.

use std::sync::atomic::Ordering;
use std::thread;

use bulwark_core::Instant;
use bulwark_sim::components::{
    ComponentConfigError, ComponentOutcome, ComponentSystemConfig, Kernel, RunOptions, Timing,
};
use bulwark_sim::Stats;

use crate::handover::{supervise, Entry, Handover};
use crate::runtime::{Request, Shared, Slot, ThreadGuard};
use crate::sys;
use crate::task::TaskContext;
use crate::work::spin_cpu;
use crate::{check_privileges, CoreLock, HostConfig, HostError, HostStats};

/// Stack of an executor thread: it only spins and asks.
const EXECUTOR_STACK: usize = 64 << 10;

/// A component system's run on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostComponentOutcome {
    /// The run in the simulator's record.
    pub outcome: ComponentOutcome,
    /// The host's own figures.
    pub host: HostStats,
    /// The dispatcher's time per kernel entry (scheduler, protocol steps, handover).
    pub entry_cost: Stats,
}

/// Runs `config` on the managed core, with its threads real and its kernel the dispatcher,
/// for `host.until` (ten of its longest periods when `None`, as `simulate` runs it; bounded
/// by `host.max_run`). The configuration's protocol costs are not charged: the dispatcher's
/// real time is. `host.seed` is not read: nothing in a component system is drawn.
pub fn run_components(
    config: &ComponentSystemConfig,
    host: &HostConfig,
) -> Result<HostComponentOutcome, HostError> {
    check_privileges(host)?;
    let until = host
        .until
        .unwrap_or(config.longest_period().saturating_mul(10))
        .min(host.max_run);
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(until),
        record_jobs: host.record_jobs,
        record_trace: host.record_trace,
    };
    let threads = Kernel::new(config, options, Timing::Reported)
        .map_err(refused)?
        .threads();
    sys::install_park_handler().map_err(|error| HostError::System {
        call: "sigaction",
        error,
    })?;
    let _lock = CoreLock::acquire(host.core)?;
    let shared = Shared {
        tasks: threads.iter().map(|_| Slot::default()).collect(),
        names: threads.iter().map(|t| t.name.clone()).collect(),
        ..Shared::default()
    };
    let shared = &shared;
    supervise(
        shared,
        host,
        |scope| {
            for index in 0..threads.len() {
                thread::Builder::new()
                    .stack_size(EXECUTOR_STACK)
                    .spawn_scoped(scope, move || executor_main(shared, index))
                    .map_err(|error| HostError::System {
                        call: "pthread_create",
                        error,
                    })?;
            }
            Ok(())
        },
        move || {
            let kernel = Kernel::new(config, options, Timing::Reported).map_err(refused)?;
            let mut dispatcher = ComponentDispatcher {
                kernel,
                handover: Handover::new(shared, host, options.until),
                stats: HostStats {
                    core: host.core,
                    ..HostStats::default()
                },
                entry_cost: Stats::default(),
            };
            dispatcher.run()?;
            shared.release_all();
            Ok(dispatcher.finish())
        },
    )
}

fn refused(error: ComponentConfigError) -> HostError {
    HostError::Unsupported(format!("the component system cannot run: {error}"))
}

/// One kernel thread's real thread: it does each stretch it is given and reports it done.
fn executor_main(shared: &Shared, index: usize) {
    let slot = &shared.tasks[index];
    sys::set_thread_gate(Some(&slot.gate));
    let _restore = ThreadGuard;
    slot.tid.store(sys::gettid(), Ordering::Release);
    let ctx = TaskContext { shared, index };
    if ctx.wait_granted().is_err() {
        return;
    }
    let mut done = 0;
    loop {
        let serial = slot.stretch_serial.load(Ordering::Acquire);
        // A stretch reported done that the kernel had not taken yet (the thread was
        // preempted between its last instruction and its report) is reported again, not
        // done twice.
        if serial != done {
            let length = slot.stretch_ns.load(Ordering::Relaxed);
            if !spin_cpu(length, &shared.stopping) {
                return;
            }
            done = serial;
        }
        if ctx.stretch_done(serial).is_err() {
            return;
        }
    }
}

/// The dispatcher of a component system: kernel entries until the end of the run.
struct ComponentDispatcher<'a> {
    kernel: Kernel<'a>,
    handover: Handover<'a>,
    stats: HostStats,
    entry_cost: Stats,
}

impl ComponentDispatcher<'_> {
    fn run(&mut self) -> Result<(), HostError> {
        let clock = self.handover.boot();
        let shared = self.handover.shared;
        let mut now = clock.now();
        self.kernel.advance(now);
        let mut suspended = None;
        while let Some(stretch) = self.kernel.settle() {
            if let Some(thread) = stretch.thread {
                let slot = &shared.tasks[thread];
                if slot.stretch_serial.load(Ordering::Relaxed) != stretch.serial {
                    // A new stretch: its length first, then the serial that announces it.
                    slot.stretch_ns
                        .store(stretch.remaining.as_nanos(), Ordering::Relaxed);
                    slot.stretch_serial.store(stretch.serial, Ordering::Release);
                }
            }
            self.handover.give(stretch.thread, suspended)?;
            self.handover.timer = (stretch.timer != Instant::NEVER).then_some(stretch.timer);
            self.stats.entries += 1;
            self.entry_cost
                .record(clock.now().saturating_duration_since(now));
            let entry = loop {
                match self.handover.wait()? {
                    Entry::Heartbeat => continue,
                    entry => break entry,
                }
            };
            now = clock.now();
            suspended = None;
            match entry {
                Entry::End | Entry::Heartbeat => break,
                Entry::Timer => {
                    let planned = self.handover.timer.unwrap_or(now);
                    self.stats.timer_fired(planned, now);
                    self.handover.timer = None;
                    self.kernel.advance(now);
                }
                Entry::Request(index) => {
                    let slot = &shared.tasks[index];
                    let kind = slot.request.swap(0, Ordering::Acquire);
                    suspended = Some(index);
                    if kind == Request::StretchDone as u32 {
                        // The stretch ended when the thread asked, before this entry: the
                        // kernel takes it then, and the entry's own time is charged to the
                        // thread it chooses.
                        let at = Instant::from_nanos(slot.at.load(Ordering::Relaxed));
                        self.kernel.advance(at.min(now));
                        let serial = slot.until.load(Ordering::Relaxed);
                        self.kernel.stretch_done(index, serial);
                    } else {
                        self.kernel.advance(now);
                    }
                }
            }
        }
        self.kernel.advance(now);
        Ok(())
    }

    fn finish(self) -> HostComponentOutcome {
        let mut stats = self.stats;
        stats.preempt_signals = self.handover.preempt_signals;
        stats.throttling_suspected = stats.late_timers > 0;
        stats.rt_runtime_us = crate::runtime::read_proc("/proc/sys/kernel/sched_rt_runtime_us");
        stats.rt_period_us = crate::runtime::read_proc("/proc/sys/kernel/sched_rt_period_us");
        HostComponentOutcome {
            outcome: self.kernel.finish(),
            host: stats,
            entry_cost: self.entry_cost,
        }
    }
}
