//! Priority assignment for fixed-priority scheduling: rate monotonic (Liu and Layland 1973),
//! deadline monotonic (Leung and Whitehead 1982), and Audsley's optimal priority assignment
//! (Audsley 2001, "On priority assignment in fixed priority scheduling", Inf. Proc. Letters).
//!
//! Every function returns an order: indices into the input, most important first, ready for
//! [`super::fixed_priority`].
//!
//! OPA is optimal for a schedulability test that is OPA-compatible (Davis and Burns 2011):
//! a task's verdict must not depend on the relative order of the higher priorities, nor of
//! the lower ones, and must not get worse when the task moves up. The exact response-time
//! analysis of [`super::fixed_priority`] is such a test for fully preemptive tasks with
//! blocking terms given per task (with jitter, and with constrained or arbitrary deadlines).
//! It is *not* OPA-compatible with final non-preemptive regions, whose blocking grows when a
//! task moves above another with a long region (Davis and Bertogna 2012); [`audsley`] refuses
//! such sets rather than give an answer that is not optimal.

use super::fixed_priority::response_time;
use super::Task;

/// Rate monotonic: shorter period first (ties in input order).
pub fn rate_monotonic(tasks: &[Task]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| tasks[i].period);
    order
}

/// Deadline monotonic: shorter relative deadline first (ties in input order).
pub fn deadline_monotonic(tasks: &[Task]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| tasks[i].deadline);
    order
}

/// Why [`audsley`] gave no order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unassignable {
    /// At this priority level (counted from the lowest, 0) no remaining task is schedulable
    /// with all the others above it: no priority order makes the set schedulable.
    NoTaskFits {
        /// The level, 0 being the lowest.
        level: usize,
    },
    /// A task has a final non-preemptive region: RTA is not OPA-compatible then.
    NotOpaCompatible {
        /// The task's name.
        task: String,
    },
}

/// `tasks` in the order `order`, as the analysis expects them.
pub fn ordered(tasks: &[Task], order: &[usize]) -> Vec<Task> {
    order
        .iter()
        .filter_map(|&i| tasks.get(i).cloned())
        .collect()
}

/// Audsley's OPA (Audsley 2001, Fig. 1): from the lowest priority up, give the level to the
/// first unassigned task (in input order) that the exact RTA finds schedulable with every
/// other unassigned task above it. Finds a schedulable order whenever one exists, with
/// `n (n + 1) / 2` RTA calls at most.
pub fn audsley(tasks: &[Task]) -> Result<Vec<usize>, Unassignable> {
    if let Some(task) = tasks.iter().find(|t| t.final_region > 0) {
        return Err(Unassignable::NotOpaCompatible {
            task: task.name.clone(),
        });
    }
    let mut unassigned: Vec<usize> = (0..tasks.len()).collect();
    let mut lowest_first = Vec::with_capacity(tasks.len());
    for level in 0..tasks.len() {
        let fits = unassigned.iter().position(|&candidate| {
            // The others above (any order: the test does not depend on it), candidate last.
            let mut trial: Vec<Task> = unassigned
                .iter()
                .filter(|&&i| i != candidate)
                .map(|&i| tasks[i].clone())
                .collect();
            trial.push(tasks[candidate].clone());
            response_time(&trial, trial.len() - 1).is_some_and(|a| a.schedulable())
        });
        let Some(position) = fits else {
            return Err(Unassignable::NoTaskFits { level });
        };
        lowest_first.push(unassigned.remove(position));
    }
    lowest_first.reverse();
    Ok(lowest_first)
}
