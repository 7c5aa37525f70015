//! The global multiprocessor tests a sweep compares ([`bulwark_spec::sweep_toml::GLOBAL_TESTS`]):
//! each set's tasks as implicit-deadline sporadic tasks `(C, T)` on `m` identical cores,
//! through the same functions the cluster analysis uses ([`crate::global_edf`],
//! [`crate::global_fp`]). A set with a constrained deadline is not admitted: these tests
//! take `D = T`.

use bulwark_core::{Duration, Priority};

use crate::classic::{priority_assignment, Task};
use crate::global_edf;
use crate::global_fp::{self, FpTask};

/// Whether the global test `test` admits `tasks` on `cores` cores; `false` for another name.
pub fn accepts(test: &str, tasks: &[Task], cores: u16) -> bool {
    if !tasks.iter().all(|t| t.deadline == t.period) {
        return false;
    }
    let pairs: Vec<_> = tasks
        .iter()
        .map(|t| (Duration::from_nanos(t.wcet), Duration::from_nanos(t.period)))
        .collect();
    match test {
        "global-edf-gfb" => global_edf::gfb(&pairs, cores).schedulable,
        "global-edf-bcl" => global_edf::bcl(&pairs, cores, &[]).schedulable,
        // Every task in an SPR server of its (C, T), each server's workload from R + e.
        "global-fp-rta-dm" | "global-spr-rta-dm" => {
            // Deadline-monotonic order by position: equal priorities follow position, so a
            // set of any size keeps its order (priorities are only 256 levels).
            let ordered: Vec<FpTask> = priority_assignment::deadline_monotonic(tasks)
                .into_iter()
                .map(|i| FpTask {
                    budget: Duration::from_nanos(tasks[i].wcet),
                    period: Duration::from_nanos(tasks[i].period),
                    priority: Priority(0),
                    sporadic_server: test == "global-spr-rta-dm",
                })
                .collect();
            global_fp::rta(&ordered, cores).schedulable
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn implicit(wcet: u64, period: u64) -> Task {
        Task::new("t", wcet, period)
    }

    /// In ms, (9, 10) and two of (2, 10): U = 1.3, U_max = 0.9.
    /// - GFB: 1.3 > 2 - 0.9 = 1.1 on two cores, > 3 - 1.8 = 1.2 on three: refused.
    /// - BCL on two cores, for (9, 10): slack 1 ms + 1 ns; each (2, 10) has W(10) = 2 ms,
    ///   capped at the slack: 2 ms + 2 ns, not < 2 (1 ms + 1 ns): refused. On three cores
    ///   2 ms + 2 ns < 3 ms + 3 ns, and for a (2, 10) (slack 8 ms + 1 ns) 8 ms + 1 ns + 2 ms
    ///   < 24 ms + 3 ns: admitted.
    /// - BC07 on two cores, deadline-monotonic (equal periods: file order): the first two
    ///   have fewer than m above them, R = C. The third: at x = 0 both are capped at 1 ns,
    ///   the least W is 2 ms, so x = 2 ms (L = 4 ms): (9, 10) has W = 4 ms, capped at 2 ms
    ///   + 1 ns, (2, 10) has 2 ms: floor((4 ms + 1 ns) / 2) = 2 ms = x, R = 4 ms: admitted.
    #[test]
    fn the_three_tests_on_a_set_worked_by_hand() {
        let set = [
            implicit(9 * MS, 10 * MS),
            implicit(2 * MS, 10 * MS),
            implicit(2 * MS, 10 * MS),
        ];
        assert!(!accepts("global-edf-gfb", &set, 2));
        assert!(!accepts("global-edf-gfb", &set, 3));
        assert!(!accepts("global-edf-bcl", &set, 2));
        assert!(accepts("global-edf-bcl", &set, 3));
        assert!(accepts("global-fp-rta-dm", &set, 2));
        // (3, 10) twice on two cores: GFB 0.6 <= 1.7, BCL 3 < 2 (7 ms + 1 ns), BC07 R = C.
        let light = [implicit(3 * MS, 10 * MS), implicit(3 * MS, 10 * MS)];
        for test in GLOBAL {
            assert!(accepts(test, &light, 2), "{test}");
        }
        // Not a global test's name: nothing.
        assert!(!accepts("fp-rta-dm", &light, 2));
    }

    const GLOBAL: [&str; 4] = [
        "global-edf-gfb",
        "global-edf-bcl",
        "global-fp-rta-dm",
        "global-spr-rta-dm",
    ];

    /// In ms, two of (3, 10) above (5, 10) on two cores (deadline-monotonic, file order):
    /// as sporadic tasks the third's R = 5 + 3 = 8 <= 10; as SPR servers each workload
    /// reaches R + e = 6 back and its R = 11 > 10 (`global_fp`'s hand test works both).
    #[test]
    fn servers_are_refused_where_their_workload_widens_past_the_deadline() {
        let set = [
            implicit(3 * MS, 10 * MS),
            implicit(3 * MS, 10 * MS),
            implicit(5 * MS, 10 * MS),
        ];
        assert!(accepts("global-fp-rta-dm", &set, 2));
        assert!(!accepts("global-spr-rta-dm", &set, 2));
        assert!(accepts("global-spr-rta-dm", &set[..2], 2));
    }

    proptest::proptest! {
        /// The servers' workloads are never below the tasks': what `global-spr-rta-dm`
        /// accepts, `global-fp-rta-dm` accepts.
        #[test]
        fn servers_accept_no_more_than_tasks(
            shapes in proptest::collection::vec((1u64..10, 5u64..60), 1..7),
            cores in 1u16..4,
        ) {
            let set: Vec<Task> = shapes
                .iter()
                .map(|&(wcet, period)| implicit(wcet.min(period), period))
                .collect();
            proptest::prop_assert!(
                !accepts("global-spr-rta-dm", &set, cores) || accepts("global-fp-rta-dm", &set, cores)
            );
        }
    }

    #[test]
    fn a_constrained_deadline_is_not_admitted() {
        let set = [implicit(MS, 10 * MS).with_deadline(5 * MS)];
        for test in GLOBAL {
            assert!(!accepts(test, &set, 4), "{test}");
        }
    }

    /// Deadline-monotonic order for more tasks than the 256 priority levels, on one core:
    /// 299 tasks of (2 us, 1 s) and, last in the file, (1.5 ms, 2 ms). Taken first, as
    /// deadline-monotonic order has it, R = 1.5 ms (and the others stay far within 1 s);
    /// taken last, it would wait 1.5 ms + at least 598 us > 2 ms.
    #[test]
    fn more_tasks_than_priority_levels_keep_deadline_monotonic_order() {
        let mut set: Vec<Task> = (0..299).map(|_| implicit(2_000, 1_000 * MS)).collect();
        set.push(implicit(1_500_000, 2 * MS));
        assert!(accepts("global-fp-rta-dm", &set, 1));
        let in_file_order: Vec<FpTask> = set
            .iter()
            .map(|t| FpTask {
                budget: Duration::from_nanos(t.wcet),
                period: Duration::from_nanos(t.period),
                priority: Priority(0),
                sporadic_server: false,
            })
            .collect();
        assert!(!global_fp::rta(&in_file_order, 1).schedulable);
    }
}
