//! The other papers' admission tests on a sweep's plain task sets: each task mapped onto the
//! paper's mechanism, then the paper's own test.
//!
//! - `vbs-eq2` (VBS paper, section III-C): [`vbs_resources`] sizes one VBS resource per task
//!   by Eq. (1), [`vbs_eq2`] admits the caps by Eq. (2).

use bulwark_core::Duration;

use crate::classic::Task;
use crate::vbs::{self, Action};

/// The VBS resource `(lambda_i, pi_i)` of each task (in the sweep's nanoseconds as the
/// paper's instants), spreading each job's load over `k` resource periods; `None` when some
/// task has no such resource (the set is then refused).
///
/// Each task is a VBS process whose jobs are its actions, each of load `l = C_i` (section
/// III-A: a process is a sequence of actions; a job's action arrives at its release and
/// terminates by the end of the period in which it completes). Eq. (1) bounds an action's
/// response by `b = ceil(l / lambda) pi + pi - 1`. With `lambda = ceil(C / k)`,
/// `ceil(C / lambda) <= k` (since `k lambda >= C`), so `b <= k pi + pi - 1 = (k + 1) pi - 1`,
/// and `b <= D` holds whenever `(k + 1) pi <= D + 1`: the longest such period is
/// `pi = floor((D + 1) / (k + 1))`. Of the resources whose Eq. (1) bound over `k` periods
/// meets `D`, this one has the longest period and the least limit for it, so the least cap
/// `lambda / pi` among them (a shorter `pi` only raises the cap for the same `lambda`, and a
/// lower `lambda` would need more than `k` periods). The task is infeasible when
/// `lambda > pi` (the resource would exceed one processor, which VBS forbids: `lambda <= pi`)
/// or `pi = 0` (`D < k`: not even one instant per period).
///
/// The bound aimed at is `min(D, T)`, not `D` alone: every action then terminates before the
/// next job's release, so a process's actions never queue behind each other and Eq. (1) is
/// each job's response time. The sweep's sets have `D <= T`, where this is `D`.
///
/// Why the cap is at least the task's density: `lambda >= C / k` and `pi <= (D + 1) / (k + 1)`
/// give `lambda / pi >= C (k + 1) / (k (D + 1))`, which is at least `C / D` when `D >= k`,
/// and a feasible `pi >= 1` needs `D + 1 >= k + 1`.
pub fn vbs_resources(tasks: &[Task], periods_per_job: u64) -> Option<Vec<Action>> {
    let k = periods_per_job.max(1);
    tasks
        .iter()
        .map(|task| {
            let target = task.deadline.min(task.period);
            let period = target.checked_add(1)? / k.checked_add(1)?;
            let limit = task.wcet.div_ceil(k);
            // Action::new refuses `lambda > pi`, `pi = 0` (through `lambda >= 1 > pi`) and a
            // load of 0.
            let action = Action::new(task.wcet, limit, period)?;
            // Eq. (1) on the resource found: met by construction, checked by the module that
            // owns it.
            (action.response_bound() <= target).then_some(action)
        })
        .collect()
}

/// `vbs-eq2`: every task has a resource ([`vbs_resources`]) and their caps `lambda_i / pi_i`
/// (one resource per process, so its cap is that resource's utilisation) sum to at most 1,
/// decided exactly (Eq. (2), [`vbs::admit`]).
pub fn vbs_eq2(tasks: &[Task], periods_per_job: u64) -> bool {
    let Some(actions) = vbs_resources(tasks, periods_per_job) else {
        return false;
    };
    let caps: Vec<(Duration, Duration)> = actions
        .iter()
        .map(|a| {
            (
                Duration::from_nanos(a.limit),
                Duration::from_nanos(a.period),
            )
        })
        .collect();
    vbs::admit(&caps).admitted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::verdict::accepts;
    use proptest::prelude::*;

    /// Two implicit-deadline tasks, k = 4. t1 = (C 8, T 19): pi = floor(20 / 5) = 4,
    /// lambda = ceil(8 / 4) = 2; Eq. (1): ceil(8/2) 4 + 3 = 19 <= 19. t2 = (C 3, T 24):
    /// pi = floor(25 / 5) = 5, lambda = ceil(3 / 4) = 1; Eq. (1): 3 * 5 + 4 = 19 <= 24.
    /// Caps 2/4 + 1/5 = 0.7 <= 1: admitted.
    #[test]
    fn a_set_admitted_by_hand() {
        let tasks = [Task::new("t1", 8, 19), Task::new("t2", 3, 24)];
        let actions = vbs_resources(&tasks, 4).unwrap();
        assert_eq!(
            actions,
            [Action::new(8, 2, 4).unwrap(), Action::new(3, 1, 5).unwrap()]
        );
        assert_eq!(actions[0].response_bound(), 19);
        assert_eq!(actions[1].response_bound(), 19);
        assert!(vbs_eq2(&tasks, 4));
    }

    /// Each task feasible, the caps too large. t1 = (C 8, T 19) has cap 2/4 as above;
    /// t2 = (C 12, T 24): pi = 5, lambda = ceil(12 / 4) = 3, Eq. (1): 4 * 5 + 4 = 24 <= 24,
    /// cap 3/5. 1/2 + 3/5 = 1.1 > 1: refused by Eq. (2), though U = 8/19 + 12/24 = 0.92
    /// (EDF would admit it).
    #[test]
    fn a_set_refused_by_eq2_by_hand() {
        let tasks = [Task::new("t1", 8, 19), Task::new("t2", 12, 24)];
        let actions = vbs_resources(&tasks, 4).unwrap();
        assert_eq!(actions[1], Action::new(12, 3, 5).unwrap());
        assert_eq!(actions[1].response_bound(), 24);
        assert!(!vbs_eq2(&tasks, 4));
        assert!(accepts("edf-utilisation", &tasks));
    }

    /// A task with no resource meeting Eq. (1). (C 9, T 19), k = 4: pi = 4, lambda =
    /// ceil(9 / 4) = 3 <= 4, fine; but (C 17, T 19): lambda = ceil(17 / 4) = 5 > pi = 4.
    /// With k = 1 instead: pi = floor(20 / 2) = 10, lambda = 17 > 10, infeasible too. And
    /// D = 3 < k = 4: pi = floor(4 / 5) = 0.
    #[test]
    fn a_set_refused_by_eq1_by_hand() {
        assert!(vbs_eq2(&[Task::new("a", 9, 19)], 4));
        assert_eq!(vbs_resources(&[Task::new("b", 17, 19)], 4), None);
        assert_eq!(vbs_resources(&[Task::new("b", 17, 19)], 1), None);
        assert!(!vbs_eq2(
            &[Task::new("a", 9, 19), Task::new("b", 17, 19)],
            4
        ));
        assert_eq!(vbs_resources(&[Task::new("c", 1, 3)], 4), None);
        // A constrained deadline: (C 2, T 100, D 9), k = 2: pi = floor(10 / 3) = 3,
        // lambda = 1, Eq. (1): 2 * 3 + 2 = 8 <= 9.
        let constrained = [Task::new("d", 2, 100).with_deadline(9)];
        assert_eq!(
            vbs_resources(&constrained, 2).unwrap(),
            [Action::new(2, 1, 3).unwrap()]
        );
    }

    fn task_set() -> impl Strategy<Value = Vec<Task>> {
        proptest::collection::vec((1u64..5_000, 1u64..50_000, 0u64..=100), 1..6).prop_map(
            |triples| {
                triples
                    .into_iter()
                    .enumerate()
                    .map(|(i, (c, t, cut))| {
                        let (c, t) = (c.min(t), t.max(c));
                        // D from C to T: `cut` percent of the slack taken away.
                        let d = t - (t - c) * cut / 100;
                        Task::new(format!("t{i}"), c, t).with_deadline(d)
                    })
                    .collect()
            },
        )
    }

    proptest! {
        /// Every resource found meets Eq. (1) within min(D, T), has a cap at least the
        /// task's density C / D (see vbs_resources), and uses at most k periods of load.
        /// Hence whatever vbs-eq2 admits has sum C / D <= 1, so EDF's density test admits
        /// it, and so do edf-utilisation (C / T <= C / D) and the exact edf-qpa.
        #[test]
        fn vbs_eq2_admits_only_what_edf_admits(tasks in task_set(), k in 1u64..10) {
            if let Some(actions) = vbs_resources(&tasks, k) {
                for (action, task) in actions.iter().zip(&tasks) {
                    prop_assert!(action.response_bound() <= task.deadline.min(task.period));
                    prop_assert!(action.load.div_ceil(action.limit) <= k);
                    // lambda / pi >= C / D  <=>  lambda D >= C pi.
                    prop_assert!(
                        u128::from(action.limit) * u128::from(task.deadline)
                            >= u128::from(task.wcet) * u128::from(action.period)
                    );
                }
            }
            if vbs_eq2(&tasks, k) {
                prop_assert!(accepts("edf-utilisation", &tasks));
                prop_assert!(accepts("edf-qpa", &tasks));
            }
        }
    }
}
