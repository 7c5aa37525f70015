//! A platform probe: what the platform takes from a managed core right now, seen by a
//! real-time thread that does nothing but read the clock (the hiccup detector latency tools
//! run). Its time can only go to the platform: the hypervisor running another guest, an
//! interrupt storm, a thread of another program at a higher real-time priority. A gap
//! between two consecutive readings longer than [`THROTTLE_SUSPECT_NS`] is time taken.
//!
//! The experiments read it when a run's timers came late: a late timer may be the platform's
//! doing or the dispatcher's own, and only the platform's excuses a missed timing claim.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bulwark_core::Duration;

use crate::runtime::ThreadGuard;
use crate::{sys, CoreLock, HostConfig, HostError, PRIORITY_RUN, THROTTLE_SUSPECT_NS};

/// What the platform took from the core while the probe spun.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlatformProbe {
    /// How long the probe read the clock.
    pub spun: Duration,
    /// Gaps between consecutive readings over [`THROTTLE_SUSPECT_NS`].
    pub gaps: u64,
    /// Their total length.
    pub lost: Duration,
    /// The longest.
    pub longest: Duration,
}

impl PlatformProbe {
    /// Accounts the readings `previous` then `now` (monotonic nanoseconds).
    fn reading(&mut self, previous: u64, now: u64) {
        let gap = now.saturating_sub(previous);
        if gap > THROTTLE_SUSPECT_NS {
            self.gaps += 1;
            self.lost = self.lost.saturating_add(Duration::from_nanos(gap));
            self.longest = self.longest.max(Duration::from_nanos(gap));
        }
    }

    /// Whether the platform took the core at all.
    pub fn disturbed(&self) -> bool {
        self.gaps > 0
    }
}

/// Spins a thread pinned to `config.core` at the dispatcher's real-time priority for
/// `length` (at most one second), reading the clock, and says what the platform took. Holds
/// the core's lock as a run does; the thread is put back under SCHED_OTHER when it ends, and
/// the caller stops it after `length` and a second more whatever happens (the watchdog).
pub fn probe_platform(config: &HostConfig, length: Duration) -> Result<PlatformProbe, HostError> {
    crate::check_privileges(config)?;
    let _core = CoreLock::acquire(config.core)?;
    let length = length.min(Duration::from_secs(1));
    let stop = Arc::new(AtomicBool::new(false));
    let core = config.core;
    let spinning = Arc::clone(&stop);
    let probe = std::thread::Builder::new()
        .name("bulwark-probe".into())
        .spawn(move || -> Result<PlatformProbe, HostError> {
            let _restore = ThreadGuard;
            let tid = sys::gettid();
            let system = |call| move |error| HostError::System { call, error };
            sys::pin(tid, core).map_err(system("sched_setaffinity"))?;
            sys::set_fifo(tid, PRIORITY_RUN).map_err(system("sched_setscheduler"))?;
            let start = sys::monotonic_ns();
            let end = start.saturating_add(length.as_nanos());
            let mut probe = PlatformProbe::default();
            let mut previous = start;
            while previous < end && !spinning.load(Ordering::Relaxed) {
                let now = sys::monotonic_ns();
                probe.reading(previous, now);
                previous = now;
            }
            probe.spun = Duration::from_nanos(previous.saturating_sub(start));
            Ok(probe)
        })
        .map_err(|error| HostError::System {
            call: "spawn (probe)",
            error,
        })?;
    // The watchdog: the probe ends by its own clock; past a second more it is told to stop.
    let deadline = std::time::Instant::now()
        + std::time::Duration::from_nanos(length.as_nanos())
        + std::time::Duration::from_secs(1);
    while !probe.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    probe
        .join()
        .map_err(|_| HostError::Unsupported("the platform probe panicked".into()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: readings 10 us apart take nothing; a 3 ms gap and a 2 ms gap are two
    /// gaps, 5 ms lost, the longest 3 ms; exactly 1 ms is not over the threshold.
    #[test]
    fn only_gaps_over_a_millisecond_count() {
        let mut probe = PlatformProbe::default();
        for (previous, now) in [
            (0, 10_000),
            (10_000, 3_010_000),
            (3_010_000, 4_010_000),
            (4_010_000, 6_010_000),
        ] {
            probe.reading(previous, now);
        }
        assert_eq!(probe.gaps, 2);
        assert_eq!(probe.lost, Duration::from_millis(5));
        assert_eq!(probe.longest, Duration::from_millis(3));
        assert!(probe.disturbed());
        assert!(!PlatformProbe::default().disturbed());
    }
}
