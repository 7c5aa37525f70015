//! Linux's own scheduler as a baseline: the Thundering Herd (SPR paper, attack A1) against
//! plain SCHED_FIFO threads that arm their own timers, with no Bulwark dispatcher.
//!
//! A victim thread at SCHED_FIFO priority 90 sleeps with `clock_nanosleep(TIMER_ABSTIME)`
//! until each planned release `origin + k * period` and measures its wake-up latency (the
//! clock on waking minus the planned release), then runs for a while. N attacker threads at
//! priority 10 on the same core sleep until exactly the same instants and spin briefly, so at
//! every release the kernel expires N + 1 timers at once, in hard-IRQ context, before the
//! victim can run. The same safety rules as the runtime hold: privileges checked first, every
//! thread restored by a drop guard, and the calling thread (off the managed core) demotes every
//! thread if the victim has not finished well after its planned end.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::thread;

use bulwark_core::Duration;

use crate::runtime::ThreadGuard;
use crate::{check_privileges, sys, CoreLock, HostConfig, HostError};

/// The victim's priority and the attackers'.
const VICTIM_PRIORITY: i32 = 90;
const ATTACKER_PRIORITY: i32 = 10;
/// Attacker threads need little stack.
const ATTACKER_STACK: usize = 64 << 10;
/// Lead time between set-up and the first release.
const LEAD_NS: u64 = 20_000_000;
/// Slack after the planned end before the guard demotes every thread.
const GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// One Thundering Herd run on Linux's scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Herd {
    /// Attackers (N).
    pub attackers: usize,
    /// Time between releases, the victim's and the attackers'.
    pub period: Duration,
    /// Victim activations measured.
    pub activations: usize,
    /// The victim's work per activation.
    pub victim_run: Duration,
    /// Each attacker's work per activation.
    pub attacker_run: Duration,
}

/// Runs `herd` on `config.core`; returns the victim's wake-up latency of every activation,
/// in nanoseconds.
pub fn herd(config: &HostConfig, herd: &Herd) -> Result<Vec<u64>, HostError> {
    check_privileges(config)?;
    let _lock = CoreLock::acquire(config.core)?;
    let stop = AtomicBool::new(false);
    let go = AtomicU32::new(0);
    let origin = std::sync::atomic::AtomicU64::new(0);
    let tids: Vec<AtomicI32> = (0..=herd.attackers).map(|_| AtomicI32::new(0)).collect();
    let period = herd.period.as_nanos();
    let wait_go = || {
        while go.load(Ordering::Acquire) == 0 {
            sys::futex_wait(&go, 0, None);
        }
        origin.load(Ordering::Acquire)
    };
    let demote_all = || {
        stop.store(true, Ordering::Release);
        for tid in &tids {
            let tid = tid.load(Ordering::Acquire);
            if tid != 0 {
                let _ = sys::set_other(tid);
            }
        }
    };
    thread::scope(|scope| {
        let victim = scope.spawn(|| {
            let _restore = ThreadGuard;
            tids[0].store(sys::gettid(), Ordering::Release);
            let _ = sys::least_timer_slack();
            let origin = wait_go();
            let mut latencies = Vec::with_capacity(herd.activations);
            for k in 1..=herd.activations as u64 {
                if stop.load(Ordering::Acquire) {
                    break;
                }
                let planned = origin + k * period;
                sys::sleep_until(planned);
                latencies.push(sys::monotonic_ns().saturating_sub(planned));
                crate::work::spin_cpu(herd.victim_run.as_nanos(), &stop);
            }
            latencies
        });
        for index in 1..=herd.attackers {
            let (tids, stop) = (&tids, &stop);
            let spawned = thread::Builder::new()
                .stack_size(ATTACKER_STACK)
                .spawn_scoped(scope, move || {
                    let _restore = ThreadGuard;
                    tids[index].store(sys::gettid(), Ordering::Release);
                    let _ = sys::least_timer_slack();
                    let origin = wait_go();
                    let mut k = 1;
                    while !stop.load(Ordering::Acquire) {
                        sys::sleep_until(origin + k * period);
                        crate::work::spin_cpu(herd.attacker_run.as_nanos(), stop);
                        k += 1;
                    }
                });
            if spawned.is_err() {
                stop.store(true, Ordering::Release);
                break;
            }
        }
        let configured = (|| {
            let start = std::time::Instant::now();
            for (index, tid) in tids.iter().enumerate() {
                let tid = loop {
                    let tid = tid.load(Ordering::Acquire);
                    if tid != 0 || stop.load(Ordering::Acquire) {
                        break tid;
                    }
                    if start.elapsed() > GRACE {
                        return Err(HostError::Unsupported(
                            "a baseline thread did not start within 2 s".into(),
                        ));
                    }
                    thread::sleep(std::time::Duration::from_micros(100));
                };
                if tid == 0 {
                    return Err(HostError::Unsupported(
                        "could not start every thread".into(),
                    ));
                }
                let priority = if index == 0 {
                    VICTIM_PRIORITY
                } else {
                    ATTACKER_PRIORITY
                };
                sys::pin(tid, config.core).map_err(|error| HostError::System {
                    call: "sched_setaffinity",
                    error,
                })?;
                sys::set_fifo(tid, priority).map_err(|error| HostError::System {
                    call: "sched_setscheduler",
                    error,
                })?;
            }
            Ok(())
        })();
        if configured.is_err() {
            demote_all();
        }
        origin.store(sys::monotonic_ns() + LEAD_NS, Ordering::Release);
        go.store(1, Ordering::Release);
        sys::futex_wake(&go, i32::MAX);
        // The guard: this thread is not pinned to the managed core.
        let planned_end = std::time::Duration::from_nanos(
            LEAD_NS + period.saturating_mul(herd.activations as u64 + 1),
        );
        let start = std::time::Instant::now();
        while !victim.is_finished() {
            if start.elapsed() > planned_end + GRACE {
                demote_all();
            }
            thread::sleep(std::time::Duration::from_millis(5));
        }
        demote_all();
        let latencies = victim
            .join()
            .map_err(|_| HostError::Unsupported("the victim thread panicked".into()))?;
        configured.map(|()| latencies)
    })
}
