//! How much a run will produce, estimated before it starts, so a command can warn before it
//! writes a trace of gigabytes or keeps millions of jobs in memory.
//!
//! Jobs are counted from the scenario: a periodic task releases `floor((H - offset) / T) + 1`
//! jobs in a horizon `H` (the horizon is inclusive, so a release at `H` counts), a sporadic
//! one at most as many with its minimum inter-arrival time as `T`. A script that ends in one
//! endless loop closed by a sleep to a grid (`sleep-until-next-release` or
//! `sleep-until-aligned`, period `T`) counts as a periodic task from its offset; any other
//! script counts one job (its later jobs depend on its steps, so they are not counted: the
//! estimate is a floor).

use bulwark_core::Duration;
use bulwark_spec::{Behaviour, Scenario, Step};

use crate::Options;

/// Trace events (slices and marks) per job, a floor: the kernel entry that releases it and its
/// execution (two slices each), the kernel exit at its completion (one slice), and its release,
/// completion and suspend marks; a slice with a task is drawn on its core's and its task's
/// track, so 2 + 2 + 2 + 3 = 9 events. Preemptions and cache refills add more.
pub const TRACE_EVENTS_PER_JOB: u64 = 9;

/// What a run is expected to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Jobs released in the run (a floor when the scenario has scripts).
    pub jobs: u64,
    /// Trace events for those jobs.
    pub trace_events: u64,
}

/// The estimate for running `scenario` with `options` (only the horizon matters).
pub fn estimate(scenario: &Scenario, options: &Options) -> Estimate {
    let horizon = options.until.unwrap_or(scenario.duration);
    let jobs = scenario
        .tasks
        .iter()
        .map(|task| match &task.behaviour {
            Behaviour::Periodic { period, offset, .. } => releases(horizon, *offset, *period),
            Behaviour::Sporadic {
                min_interarrival,
                offset,
                ..
            } => releases(horizon, *offset, *min_interarrival),
            Behaviour::Script { offset, steps } => script_releases(horizon, *offset, steps),
        })
        .fold(0u64, u64::saturating_add);
    Estimate {
        jobs,
        trace_events: jobs.saturating_mul(TRACE_EVENTS_PER_JOB),
    }
}

/// A script's jobs: one per grid period when its last step is an endless loop closed by a
/// sleep to a grid (a backlog behind a late job still counts every release), else one.
fn script_releases(horizon: Duration, offset: Duration, steps: &[Step]) -> u64 {
    if let Some(Step::Loop { count: None, body }) = steps.last() {
        if let Some(Step::SleepUntilNextRelease(period) | Step::SleepUntilAligned(period)) =
            body.last()
        {
            return releases(horizon, offset, *period);
        }
    }
    u64::from(offset <= horizon)
}

/// Releases at `offset`, `offset + separation`, ... up to and including `horizon`.
fn releases(horizon: Duration, offset: Duration, separation: Duration) -> u64 {
    if offset > horizon {
        return 0;
    }
    let span = horizon.saturating_sub(offset).as_nanos();
    // Validation makes periods positive; a zero would mean one release per nanosecond.
    (span / separation.as_nanos().max(1)).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(text: &str) -> Scenario {
        bulwark_spec::parse(text, "estimate.toml").expect("a valid scenario")
    }

    #[test]
    fn periodic_and_sporadic_tasks_count_their_releases_within_the_inclusive_horizon() {
        // 10 ms horizon: a 1 ms period releases at 0, 1, ..., 10 ms (11 jobs); a 3 ms
        // minimum inter-arrival from offset 2 ms at 2, 5, 8 ms (3 jobs); an offset after the
        // horizon releases none.
        let s = scenario(
            r#"
name = "e"
policy = "fixed-priority"
duration = "10ms"
[[task]]
name = "a"
period = "1ms"
execution = "100us"
priority = 1
[[task]]
name = "b"
min-interarrival = "3ms"
offset = "2ms"
execution = "100us"
priority = 2
"#,
        );
        let e = estimate(&s, &Options::default());
        assert_eq!(e.jobs, 14);
        assert_eq!(e.trace_events, 14 * TRACE_EVENTS_PER_JOB);
        let longer = Options {
            until: Some(Duration::from_millis(100)),
            ..Options::default()
        };
        // 101 + (98 / 3 + 1 = 33).
        assert_eq!(estimate(&s, &longer).jobs, 134);
    }

    #[test]
    fn a_script_closed_by_a_grid_sleep_counts_as_periodic_and_any_other_as_one_job() {
        // 10 ms horizon: `grid` releases at 1, 3, ..., 9 ms (5 jobs); `aligned` at 0, 4, 8 ms
        // (3); `relative` sleeps for a time after each job, so only its first job counts;
        // `late` starts after the horizon (none).
        let s = scenario(
            r#"
name = "e"
policy = "fixed-priority"
duration = "10ms"
[[task]]
name = "grid"
priority = 1
offset = "1ms"
script = [{ loop = "forever", body = [{ run = "100us" }, { sleep-until-next-release = "2ms" }] }]
[[task]]
name = "aligned"
priority = 2
script = [{ loop = "forever", body = [{ run = "100us" }, { sleep-until-aligned = "4ms" }] }]
[[task]]
name = "relative"
priority = 3
script = [{ loop = "forever", body = [{ run = "100us" }, { sleep-for = "1ms" }] }]
[[task]]
name = "late"
priority = 4
offset = "11ms"
script = [{ loop = "forever", body = [{ run = "100us" }, { sleep-until-next-release = "1ms" }] }]
"#,
        );
        assert_eq!(estimate(&s, &Options::default()).jobs, 5 + 3 + 1);
    }
}
