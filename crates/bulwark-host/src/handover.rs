//! The platform half of a dispatcher, whatever kernel it runs: giving the managed core to one
//! thread (priorities, gates, the preemption signal), waiting for the next kernel entry (a
//! request, the kernel's one timer, the end), and supervising a run (thread set-up, the
//! dispatcher's start, the watchdog, restoring every thread however the run ends).
//!
//! The scenario dispatcher (a `Policy`) and the component dispatcher (the component kernel)
//! both sit on it, so a thread is given the core, stopped and watched the same way under both.

use std::sync::atomic::Ordering;
use std::thread;

use bulwark_core::{Duration, Instant};

use crate::runtime::{
    setup_thread, wait_for, watchdog_main, RestoreGuard, Shared, ThreadGuard, GATE_OPEN,
};
use crate::sys::{self, GATE_CLOSED};
use crate::{Clock, HostConfig, HostError, PRIORITY_READY, PRIORITY_RUN};

/// The dispatcher wakes at least this often, to prove to the watchdog that it lives.
const HEARTBEAT_NS: u64 = 5_000_000;
/// How early the dispatcher of an idle core wakes before the kernel's timer, to spin the rest
/// of the way to it. A kernel timer wakes a thread late by the platform's timer-interrupt
/// latency (on a virtual machine tens of microseconds, varying from one wake-up to the next),
/// and every release made at that timer would inherit it. Spinning costs no thread anything
/// when the core is idle; while a thread runs the dispatcher sleeps to the timer itself, so
/// that no thread loses its time to the spin (its budget timer may then be late by the
/// platform's latency, which is charged to it as the simulator charges interrupt entry).
const IDLE_TIMER_ADVANCE_NS: u64 = 200_000;
/// The longest a stalled dispatcher (a test fault) keeps the core before giving up itself.
const STALL_LIMIT_NS: u64 = 3_000_000_000;

/// Why the dispatcher woke.
pub(crate) enum Entry {
    /// The thread of this slot posted a request.
    Request(usize),
    /// The kernel's timer is due.
    Timer,
    /// Nothing happened for a heartbeat period.
    Heartbeat,
    /// The run is over (its end, Ctrl-C, the watchdog or the stall fault).
    End,
}

/// What [`Handover::give`] changed.
pub(crate) struct Handed {
    /// The thread stopped in its own code (lowered and signalled), if any.
    pub preempted: Option<usize>,
    /// The core went to another thread than before.
    pub switched: bool,
}

/// The managed core's owner: which thread has it, the kernel's one timer, and the means to
/// hand the core over.
pub(crate) struct Handover<'a> {
    pub shared: &'a Shared,
    pub clock: Clock,
    until: Instant,
    stall_at: Option<Instant>,
    /// The slot whose thread has the core.
    pub current: Option<usize>,
    /// Per slot: whether its thread is at [`PRIORITY_RUN`] (so that raising it again is no
    /// system call).
    raised: Vec<bool>,
    /// When the kernel must be entered next, whatever the threads do.
    pub timer: Option<Instant>,
    /// Preemption signals sent.
    pub preempt_signals: u64,
}

impl<'a> Handover<'a> {
    pub fn new(shared: &'a Shared, config: &HostConfig, until: Instant) -> Self {
        Handover {
            shared,
            clock: Clock { origin: 0 },
            until,
            stall_at: config
                .stall_dispatcher_at
                .map(|d| Instant::ZERO.saturating_add(d)),
            current: None,
            raised: vec![false; shared.tasks.len()],
            timer: None,
            preempt_signals: 0,
        }
    }

    /// Starts the run's clock: time zero is now.
    pub fn boot(&mut self) -> Clock {
        let origin = sys::monotonic_ns();
        self.clock = Clock { origin };
        self.shared.origin.store(origin, Ordering::Release);
        self.clock
    }

    /// Gives the core to `next`: the previous thread lowered and stopped (unless it suspended
    /// itself by its request, `suspended`), the chosen one raised and let through its gate.
    pub fn give(
        &mut self,
        next: Option<usize>,
        suspended: Option<usize>,
    ) -> Result<Handed, HostError> {
        let previous = self.current;
        let mut handed = Handed {
            preempted: None,
            switched: false,
        };
        if next == previous && suspended.is_none() {
            return Ok(handed);
        }
        let system = |call| move |error| HostError::System { call, error };
        if let Some(p) = previous.filter(|&p| Some(p) != next) {
            let slot = &self.shared.tasks[p];
            let tid = slot.tid.load(Ordering::Acquire);
            // Never over the run's end: the watchdog (or the end) may have opened every gate
            // for good (GATE_STOP) from its own thread while this dispatcher was late.
            let _ = slot.gate.compare_exchange(
                GATE_OPEN,
                GATE_CLOSED,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            // A thread that suspended itself closed its gate before asking and is parked on
            // it (or runs only the few instructions to get there): it keeps its priority,
            // and its next dispatch costs no priority change. A preempted thread still runs
            // its own code: lowered below the chosen one first, then told to park.
            if suspended != Some(p) {
                sys::set_fifo(tid, PRIORITY_READY).map_err(system("sched_setscheduler"))?;
                self.raised[p] = false;
                // Preempted in its own code: the signal's handler parks it on its gate.
                sys::send_preempt(tid).map_err(system("tgkill"))?;
                self.preempt_signals += 1;
                handed.preempted = Some(p);
            }
        }
        if let Some(n) = next {
            let slot = &self.shared.tasks[n];
            if previous != next {
                if !self.raised[n] {
                    let tid = slot.tid.load(Ordering::Acquire);
                    sys::set_fifo(tid, PRIORITY_RUN).map_err(system("sched_setscheduler"))?;
                    self.raised[n] = true;
                }
                handed.switched = true;
            }
            // A stopped gate stays stopped: the thread runs on and sees the end.
            let _ = slot.gate.compare_exchange(
                GATE_CLOSED,
                GATE_OPEN,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            sys::futex_wake(&slot.gate, 1);
        }
        self.current = next;
        Ok(handed)
    }

    /// Sleeps until a request, the kernel's timer, the end of the run or the next heartbeat.
    pub fn wait(&mut self) -> Result<Entry, HostError> {
        loop {
            let seen = self.shared.doorbell.load(Ordering::Acquire);
            let now = self.clock.now();
            self.shared
                .heartbeat
                .store(sys::monotonic_ns(), Ordering::Release);
            // The end comes first: a thread that keeps making requests (sleeps into the past)
            // must not keep the run, or the heartbeat, going.
            if self.shared.abandoned.load(Ordering::Acquire)
                || self.shared.stop_requested.load(Ordering::Acquire)
                || self.shared.objects_over_limit.load(Ordering::Acquire)
                || now >= self.until
            {
                return Ok(Entry::End);
            }
            if self.stall_at.is_some_and(|at| now >= at) {
                self.stall();
                return Ok(Entry::End);
            }
            let posted = self.shared.posted.swap(0, Ordering::AcqRel);
            if posted != 0 {
                return Ok(Entry::Request(posted as usize - 1));
            }
            if self.timer.is_some_and(|t| now >= t) {
                return Ok(Entry::Timer);
            }
            let beat = now.saturating_add(Duration::from_nanos(HEARTBEAT_NS));
            let deadline = self
                .timer
                .unwrap_or(Instant::NEVER)
                .min(self.until)
                .min(beat);
            let idle_timer = self.current.is_none() && self.timer == Some(deadline);
            let wake_at = if idle_timer {
                deadline.saturating_sub(Duration::from_nanos(IDLE_TIMER_ADVANCE_NS))
            } else {
                deadline
            };
            if idle_timer && now >= wake_at {
                // Within the advance: spin to the timer (bounded by the advance), watching
                // the doorbell for a request or the end.
                while self.clock.now() < deadline
                    && self.shared.doorbell.load(Ordering::Acquire) == seen
                {
                    std::hint::spin_loop();
                }
                continue;
            }
            let woke = sys::futex_wait(
                &self.shared.doorbell,
                seen,
                Some(self.clock.absolute(wake_at)),
            );
            if woke == sys::Woken::TimedOut && wake_at == beat {
                return Ok(Entry::Heartbeat);
            }
        }
    }

    /// The testing fault: keep the core at the top priority and stop answering, until the
    /// watchdog notices (or a bound passes).
    fn stall(&self) {
        let start = sys::monotonic_ns();
        while !self.shared.abandoned.load(Ordering::Acquire)
            && sys::monotonic_ns().saturating_sub(start) < STALL_LIMIT_NS
        {
            std::hint::spin_loop();
        }
    }
}

/// Starts one managed thread of a run in `scope`, with a stack of `stack` bytes (the
/// platform's default when `None`).
pub(crate) fn spawn_managed<'scope, 'env, Body>(
    scope: &'scope thread::Scope<'scope, 'env>,
    stack: Option<usize>,
    body: Body,
) -> Result<(), HostError>
where
    Body: FnOnce() + Send + 'scope,
{
    let mut builder = thread::Builder::new();
    if let Some(bytes) = stack {
        builder = builder.stack_size(bytes);
    }
    builder
        .spawn_scoped(scope, body)
        .map(drop)
        .map_err(|error| HostError::System {
            call: "pthread_create",
            error,
        })
}

/// Runs one dispatched run: `spawn` starts one thread per slot of `shared` (each stores its
/// kernel id in its slot and waits on its gate), every one is pinned to the managed core at
/// [`PRIORITY_READY`], then `dispatch` runs on a dispatcher thread at the core's top
/// priority while a watchdog on `config.watchdog_core` watches its heartbeat. Every thread is
/// put back under SCHED_OTHER however the run ends; Ctrl-C ends it cleanly.
pub(crate) fn supervise<'env, T, Spawn, Dispatch>(
    shared: &'env Shared,
    config: &HostConfig,
    spawn: Spawn,
    dispatch: Dispatch,
) -> Result<T, HostError>
where
    T: Send + 'env,
    Spawn: for<'scope> FnOnce(&'scope thread::Scope<'scope, 'env>) -> Result<(), HostError>,
    Dispatch: FnOnce() -> Result<T, HostError> + Send + 'env,
{
    let saved_interrupt = sys::catch_interrupt();
    let interrupts_before = sys::interrupts();
    let result = thread::scope(|scope| {
        let guard = RestoreGuard(shared);
        if let Err(e) = spawn(scope) {
            drop(guard);
            return Err(e);
        }
        let configure = || -> Result<(), HostError> {
            let tids = wait_for(|| {
                let tids: Vec<i32> = shared
                    .tasks
                    .iter()
                    .map(|s| s.tid.load(Ordering::Acquire))
                    .collect();
                tids.iter().all(|&t| t != 0).then_some(tids)
            })?;
            for tid in tids {
                setup_thread(tid, config.core, PRIORITY_READY)?;
            }
            Ok(())
        };
        if let Err(e) = configure() {
            drop(guard);
            return Err(e);
        }
        let dispatcher = scope.spawn(move || {
            shared
                .dispatcher_tid
                .store(sys::gettid(), Ordering::Release);
            let _restore = ThreadGuard;
            let _ = sys::least_timer_slack();
            while shared.go.load(Ordering::Acquire) == 0 {
                sys::futex_wait(&shared.go, 0, None);
            }
            if shared.stopping.load(Ordering::Acquire) {
                return Ok(None);
            }
            let result = dispatch();
            shared.release_all();
            shared.dispatcher_done.store(true, Ordering::Release);
            result.map(Some)
        });
        let started = wait_for(|| {
            let tid = shared.dispatcher_tid.load(Ordering::Acquire);
            (tid != 0).then_some(tid)
        })
        .and_then(|tid| setup_thread(tid, config.core, sys::fifo_max()));
        if let Err(e) = started {
            drop(guard);
            return Err(e);
        }
        // The first heartbeat is stored before the watchdog can look at it.
        shared
            .heartbeat
            .store(sys::monotonic_ns(), Ordering::Release);
        let watchdog_core = config.watchdog_core;
        let timeout = config.watchdog_timeout.as_nanos();
        let watchdog = scope.spawn(move || {
            let _ = sys::pin(sys::gettid(), watchdog_core);
            watchdog_main(shared, timeout, interrupts_before)
        });
        shared.go.store(1, Ordering::Release);
        sys::futex_wake(&shared.go, 1);
        let dispatched = dispatcher
            .join()
            .unwrap_or_else(|_| Err(HostError::Unsupported("the dispatcher panicked".into())));
        shared.dispatcher_done.store(true, Ordering::Release);
        let fired = watchdog.join().ok().flatten();
        drop(guard);
        if let Some(fired) = fired {
            return Err(HostError::WatchdogFired {
                silent_for: Duration::from_nanos(fired.silent_for),
                demoted: fired.demoted,
                still_real_time: fired.still_real_time,
            });
        }
        if shared.stop_requested.load(Ordering::Acquire) {
            return Err(HostError::Interrupted);
        }
        dispatched?.ok_or(HostError::Interrupted)
    });
    if let Some(saved) = saved_interrupt {
        sys::restore_interrupt(saved);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{Slot, GATE_STOP};

    /// Two slots; slot 0's thread has the core and its gate is `gate`.
    fn shared_with(gate: u32) -> Shared {
        let shared = Shared {
            tasks: vec![Slot::default(), Slot::default()],
            ..Shared::default()
        };
        shared.tasks[0].gate.store(gate, Ordering::Relaxed);
        shared
    }

    /// A watchdog that looks before the dispatcher's first heartbeat (still zero) counts the
    /// silence from its own start, not from the clock's origin: it stays quiet while the
    /// dispatcher finishes within the timeout. Counting from zero, it fired at once, having
    /// "seen" a dispatcher silent since boot.
    #[test]
    fn a_watchdog_started_before_the_first_heartbeat_does_not_fire() {
        let shared = shared_with(GATE_OPEN);
        assert_eq!(shared.heartbeat.load(Ordering::Relaxed), 0);
        let fired = std::thread::scope(|scope| {
            let watchdog = scope.spawn(|| watchdog_main(&shared, 2_000_000_000, sys::interrupts()));
            std::thread::sleep(std::time::Duration::from_millis(30));
            shared.dispatcher_done.store(true, Ordering::Release);
            watchdog.join().expect("the watchdog returns")
        });
        assert!(
            fired.is_none(),
            "the watchdog fired: {:?}",
            fired.map(|f| f.silent_for)
        );
    }

    /// Taking the core from a thread closes its gate, but never over the run's end: a gate the
    /// watchdog stopped from its own thread while the dispatcher was late stays stopped, or
    /// its thread would park for good. (The thread suspended itself here, so no system call
    /// is made.)
    #[test]
    fn taking_the_core_closes_an_open_gate_and_leaves_a_stopped_one() {
        for (before, after) in [(GATE_OPEN, GATE_CLOSED), (GATE_STOP, GATE_STOP)] {
            let shared = shared_with(before);
            let mut handover = Handover::new(&shared, &HostConfig::default(), Instant::NEVER);
            handover.current = Some(0);
            let handed = handover
                .give(None, Some(0))
                .expect("no system call to fail");
            assert_eq!(shared.tasks[0].gate.load(Ordering::Relaxed), after);
            assert!(handed.preempted.is_none() && !handed.switched);
            assert_eq!(handover.current, None);
        }
    }
}
