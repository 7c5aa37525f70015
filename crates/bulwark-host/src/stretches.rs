//! Kernels whose real threads only work: a system whose kernel decides everything at kernel
//! entries (the component kernel, the simulator's machine stepped with reported timing) runs on the managed core with one
//! real thread per worker, each spinning the CPU time of the stretch the kernel gave it and
//! reporting it done, and the kernel, stepped with reported timing, as the dispatcher.
//!
//! The kernel's next timer (a release, a depletion, a replenishment, a slot's edge) is the
//! core's one timer; the core is handed over as in the scenario runtime
//! ([`crate::handover`]): the chosen thread raised, the preempted one lowered and parked by
//! the preemption signal. A stretch ends when its thread says so, and the kernel takes it at
//! that instant; the entry's own time is then charged to the thread it chooses (its
//! accounting starts at the entry), as the scheduler's work is in the scenario runtime.

use std::sync::atomic::Ordering;

use bulwark_core::{Duration, Instant};
use bulwark_sim::Stats;

use crate::handover::{spawn_managed, supervise, Entry, Handover};
use crate::runtime::{read_proc, Request, Shared, Slot, ThreadGuard};
use crate::sys;
use crate::task::TaskContext;
use crate::work::spin_cpu;
use crate::{check_privileges, CoreLock, HostConfig, HostError, HostStats};

/// Stack of a worker thread: it only spins and asks.
const WORKER_STACK: usize = 64 << 10;

/// Who works on the managed core from now, and when the kernel must be entered next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Turn {
    /// The worker (a slot index) and its stretch: its CPU time and serial.
    pub worker: Option<(usize, Duration, u64)>,
    /// The kernel's next event ([`Instant::NEVER`] for none).
    pub timer: Instant,
}

/// A kernel stepped with reported timing.
pub(crate) trait SteppedKernel {
    /// What the run produces.
    type Outcome;
    /// Everything due at the kernel's instant; `None` once the run is over.
    fn settle(&mut self) -> Result<Option<Turn>, HostError>;
    /// Time passes to `to` with the settled worker working.
    fn advance(&mut self, to: Instant) -> Result<(), HostError>;
    /// The worker's stretch `serial` is done.
    fn stretch_done(&mut self, worker: usize, serial: u64);
    /// The run's record.
    fn finish(self) -> Self::Outcome;
}

/// A stepped kernel's run on this machine: its record in the simulator's types, the host's
/// own figures, and the dispatcher's time per kernel entry (the kernel's work and the
/// handover).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRun<O> {
    /// The run in the simulator's record.
    pub outcome: O,
    /// The host's own figures.
    pub host: HostStats,
    /// The dispatcher's time per kernel entry.
    pub entry_cost: Stats,
}

/// Runs the kernel `build` makes on the managed core until `until`, with one real worker
/// thread per name in `workers` (the kernel's worker numbers are their indices).
pub(crate) fn run<K, Build>(
    host: &HostConfig,
    workers: &[String],
    until: Instant,
    build: Build,
) -> Result<HostRun<K::Outcome>, HostError>
where
    K: SteppedKernel,
    K::Outcome: Send,
    Build: FnOnce() -> Result<K, HostError> + Send,
{
    check_privileges(host)?;
    sys::install_park_handler().map_err(|error| HostError::System {
        call: "sigaction",
        error,
    })?;
    let _lock = CoreLock::acquire(host.core)?;
    let shared = Shared {
        tasks: workers.iter().map(|_| Slot::default()).collect(),
        names: workers.to_vec(),
        ..Shared::default()
    };
    let shared = &shared;
    supervise(
        shared,
        host,
        |scope| {
            for index in 0..workers.len() {
                spawn_managed(scope, Some(WORKER_STACK), move || {
                    worker_main(shared, index)
                })?;
            }
            Ok(())
        },
        move || {
            let mut dispatcher = Dispatcher {
                kernel: build()?,
                handover: Handover::new(shared, host, until),
                stats: HostStats {
                    core: host.core,
                    ..HostStats::default()
                },
                entry_cost: Stats::default(),
            };
            dispatcher.run()?;
            shared.release_all();
            let mut stats = dispatcher.stats;
            stats.preempt_signals = dispatcher.handover.preempt_signals;
            stats.throttling_suspected = stats.late_timers > 0;
            stats.rt_runtime_us = read_proc("/proc/sys/kernel/sched_rt_runtime_us");
            stats.rt_period_us = read_proc("/proc/sys/kernel/sched_rt_period_us");
            Ok(HostRun {
                outcome: dispatcher.kernel.finish(),
                host: stats,
                entry_cost: dispatcher.entry_cost,
            })
        },
    )
}

/// One worker's real thread: it does each stretch it is given and reports it done.
fn worker_main(shared: &Shared, index: usize) {
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

/// The dispatcher: kernel entries until the end of the run.
struct Dispatcher<'a, K> {
    kernel: K,
    handover: Handover<'a>,
    stats: HostStats,
    entry_cost: Stats,
}

impl<K: SteppedKernel> Dispatcher<'_, K> {
    fn run(&mut self) -> Result<(), HostError> {
        let clock = self.handover.boot();
        let shared = self.handover.shared;
        let mut now = clock.now();
        self.kernel.advance(now)?;
        let mut suspended = None;
        while let Some(turn) = self.kernel.settle()? {
            if let Some((worker, length, serial)) = turn.worker {
                let slot = &shared.tasks[worker];
                if slot.stretch_serial.load(Ordering::Relaxed) != serial {
                    // A new stretch: its length first, then the serial that announces it.
                    slot.stretch_ns.store(length.as_nanos(), Ordering::Relaxed);
                    slot.stretch_serial.store(serial, Ordering::Release);
                }
            }
            self.handover
                .give(turn.worker.map(|(worker, ..)| worker), suspended)?;
            self.handover.timer = (turn.timer != Instant::NEVER).then_some(turn.timer);
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
                    self.kernel.advance(now)?;
                }
                Entry::Request(index) => {
                    let slot = &shared.tasks[index];
                    let kind = slot.request.swap(0, Ordering::Acquire);
                    suspended = Some(index);
                    if kind == Request::StretchDone as u32 {
                        // The stretch ended when the thread asked, before this entry: the
                        // kernel takes it then.
                        let at = Instant::from_nanos(slot.at.load(Ordering::Relaxed));
                        self.kernel.advance(at.min(now))?;
                        let serial = slot.until.load(Ordering::Relaxed);
                        self.kernel.stretch_done(index, serial);
                    } else {
                        self.kernel.advance(now)?;
                    }
                }
            }
        }
        self.kernel.advance(now)?;
        // What is due at the end itself (jobs released at an inclusive horizon) is taken as
        // the simulator takes it; nothing runs after it.
        self.kernel.settle()?;
        Ok(())
    }
}
