//! Task names for outputs, robust to ids the metrics do not cover.

use bulwark_core::TaskId;
use bulwark_sim::Outcome;

/// The task's name, or `task N` when the outcome has no metrics entry for it (a trace from a
/// mismatched run should still export, not panic).
pub(crate) fn task_name(outcome: &Outcome, task: TaskId) -> String {
    outcome
        .tasks
        .get(task.index())
        .map(|metrics| metrics.name.clone())
        .unwrap_or_else(|| format!("task {}", task.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::two_tasks_one_core;

    #[test]
    fn known_ids_use_metrics_names_and_unknown_ids_are_numbered() {
        let outcome = two_tasks_one_core();
        assert_eq!(task_name(&outcome, TaskId(1)), "log");
        assert_eq!(task_name(&outcome, TaskId(7)), "task 7");
    }
}
