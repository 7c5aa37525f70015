//! A script's `run` drawn in `[min, max]` (`Step::Run(Execution::Uniform { .. })`): every
//! length drawn lies within its bounds, and a seed gives the same lengths every time.

mod common;

use bulwark_core::Duration;
use bulwark_spec::{Execution, PolicyKind, Scenario, Step};
use common::*;

/// One task alone on one fixed-priority core, free kernel: each job is released every 10 ms,
/// runs one drawn length in [1 ms, 2 ms] and sleeps to its next release, so its response time
/// (completion minus release) is exactly the length drawn for it.
fn alone(seed: u64) -> Scenario {
    let mut scenario = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(1000),
        vec![script(
            "drawn",
            0,
            Some(1),
            None,
            vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Run(Execution::Uniform {
                        min: ms(1),
                        max: ms(2),
                    }),
                    Step::SleepUntilNextRelease(ms(10)),
                ],
            }],
        )],
    );
    scenario.seed = seed;
    scenario
}

/// Each completed job's response time, in job order.
fn lengths(seed: u64) -> Vec<Duration> {
    let outcome = run_jobs(&alone(seed));
    let mut jobs = outcome.jobs.expect("recorded");
    jobs.sort_by_key(|j| j.job);
    jobs.iter()
        .filter_map(|j| j.completion.map(|c| c.saturating_duration_since(j.release)))
        .collect()
}

#[test]
fn drawn_runs_stay_within_their_bounds_and_repeat_for_a_seed() {
    let first = lengths(7);
    // Releases at 0, 10, ..., 990 ms, each job done within 2 ms: 100 jobs.
    assert_eq!(first.len(), 100);
    for length in &first {
        assert!(
            (ms(1)..=ms(2)).contains(length),
            "{length} outside [1ms, 2ms]"
        );
    }
    // Drawn, not fixed: nanosecond-granular lengths differ (100 equal draws out of 10^6 + 1
    // values would be a broken generator).
    assert!(first.iter().any(|l| *l != first[0]), "{first:?}");
    assert_eq!(lengths(7), first, "the same seed draws the same lengths");
    assert_ne!(lengths(8), first, "another seed draws others");
}

/// A `run` whose ends meet is fixed: no draw, every job exactly that long.
#[test]
fn a_fixed_run_draws_nothing() {
    let mut scenario = alone(7);
    if let bulwark_spec::Behaviour::Script { steps, .. } = &mut scenario.tasks[0].behaviour {
        steps[0] = Step::Loop {
            count: None,
            body: vec![
                Step::Run(Execution::between(ms(1), ms(1))),
                Step::SleepUntilNextRelease(ms(10)),
            ],
        };
    }
    let outcome = run_jobs(&scenario);
    let jobs = outcome.jobs.expect("recorded");
    let done: Vec<_> = jobs.iter().filter(|j| j.completion.is_some()).collect();
    assert_eq!(done.len(), 100);
    for job in done {
        let completion = job.completion.expect("completed");
        assert_eq!(completion.saturating_duration_since(job.release), ms(1));
    }
}
