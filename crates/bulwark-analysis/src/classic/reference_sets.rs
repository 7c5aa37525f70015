//! The reference pool of ten-task sets that the classic benchmarks and the Python binding's
//! overhead measurement share, built in one place so that the two measure the same work.
//!
//! Set `seed` of a pool: UUniFast at U = 0.8, log-uniform periods 1-100 ms, in rate-monotonic
//! order; with `constrained`, deadlines spread between `(C + T) / 2` (rounded down) and `T` by the task's
//! index, so an EDF demand test has points to walk.

use bulwark_core::Duration;

use super::priority_assignment::{ordered, rate_monotonic};
use super::Task;
use crate::generate::task_set;

/// `count` sets of ten tasks, seeds `0..count`.
pub fn pool(count: u64, constrained: bool) -> Vec<Vec<Task>> {
    (0..count)
        .map(|seed| {
            let raw = task_set(
                10,
                800_000_000,
                Duration::from_millis(1),
                Duration::from_millis(100),
                seed,
            );
            let tasks: Vec<Task> = raw
                .iter()
                .enumerate()
                .map(|(index, generated)| {
                    let (wcet, period) =
                        (generated.execution.as_nanos(), generated.period.as_nanos());
                    let task = Task::new(format!("t{index}"), wcet, period);
                    if constrained {
                        let slack = (period - wcet) / 2;
                        task.with_deadline(wcet + slack + slack * (index as u64 % 3) / 3)
                    } else {
                        task
                    }
                })
                .collect();
            ordered(&tasks, &rate_monotonic(&tasks))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constrained_deadlines_lie_between_the_midpoint_and_the_period() {
        for set in pool(8, true) {
            assert_eq!(set.len(), 10);
            for task in &set {
                let (wcet, period, deadline) = (task.wcet, task.period, task.deadline);
                // (T - C) / 2 rounds down, so D may fall half a nanosecond short of the
                // midpoint.
                assert!(
                    deadline <= period && 2 * deadline + 1 >= wcet + period,
                    "{task:?}"
                );
            }
        }
        assert!(pool(8, false)
            .iter()
            .flatten()
            .all(|t| t.deadline == t.period));
    }
}
