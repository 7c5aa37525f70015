//! The other papers' admission tests on a sweep's plain task sets: each task mapped onto the
//! paper's mechanism, then the paper's own test.
//!
//! - `vbs-eq2` (VBS paper, section III-C): [`vbs_resources`] sizes one VBS resource per task
//!   by Eq. (1), [`vbs_eq2`] admits the caps by Eq. (2).
//! - `mcipc-budget` (MC-IPC paper, sections IV-C and V): [`mcipc_budgets`] sizes each task's
//!   reservation budget by Theorem 1, [`mcipc_budget`] admits the reservations by EDF.
//! - `component-eq2`, `component-eq3`, `component-eq4`, `component-rta` (CAmkES component
//!   paper, section 6 and Appendix A): [`component_timings`] maps each set onto the Fig. 7
//!   topology ([`crate::component_sets`]), [`component_test`] asks Eq. 2, Eq. 3, Eq. 4 or
//!   exact response-time analysis. As the paper does, these take `D = T`: on a set with a
//!   deadline shorter than its period the three utilisation bounds answer no (they hold for
//!   implicit deadlines only, as the sweep's `liu-layland` and `hyperbolic`), and
//!   `component-rta` compares each `R_i` with `D_i`. Overheads are zero: the sweep's `[cost]`
//!   table is the SPR kernel's cost model, not Table 2's protocol costs, so it does not apply.

use bulwark_core::Duration;
use bulwark_spec::sweep_toml::{ComponentSplit, Components, Criticality, McIpcServer};

use crate::amc::{self, McTask};
use crate::bandwidth;
use crate::blocking::{self, Overheads, TaskTiming};
use crate::classic::priority_assignment;
use crate::classic::{edf, Task};
use crate::component_sets::{self, ChainTask, Split, TABLE_3};
use crate::generate::rate_monotonic_priorities;
use crate::mc_ipc::{reservation_budget, ServerInvocations};
use crate::vbs::Action;

/// Cores per cluster in `mcipc-budget`: the paper's prototype schedules partitioned
/// (section IV-C closes on "partitioned scheduling (c = 1 and K = m)"; section V).
pub const MCIPC_CLUSTER_CORES: u64 = 1;

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
/// (one resource per process, so its cap is that resource's utilisation) sum to at most 1
/// (Eq. (2)). Decided exactly by [`bandwidth::sum_at_most_one`], the verdict of
/// [`crate::vbs::admit`] without its exact total: the total's lowest terms rarely fit 128 bits when
/// the periods are nanosecond counts, and [`crate::vbs::admit`] then sums big rationals, over 200
/// times slower per set in the sweep bench.
pub fn vbs_eq2(tasks: &[Task], periods_per_job: u64) -> bool {
    let Some(actions) = vbs_resources(tasks, periods_per_job) else {
        return false;
    };
    bandwidth::sum_at_most_one(actions.iter().map(|a| (a.limit, a.period)))
}

/// `amc-rtb-dm`: `tasks` made Vestal tasks by `criticality` (the first `high-fraction` of
/// them, rounded, of high criticality with `C^H = ceil(factor C)`; every `C^L = C`) and
/// analysed by AMC-rtb ([`crate::amc`]) under deadline-monotonic priorities (equal
/// deadlines in task order).
pub fn amc_rtb_dm(tasks: &[Task], criticality: Criticality) -> bool {
    amc::rtb(&vestal_tasks(tasks, criticality), &[]).schedulable
}

/// `global-amc-rtb-dm`: `tasks` made Vestal tasks as [`amc_rtb_dm`] makes them, on `cores`
/// identical cores under global deadline-monotonic priorities (equal deadlines in task
/// order), through AMC-rtb's argument on Bertogna and Cirinei's analysis
/// ([`amc::rtb_global`]). A set with a constrained deadline is not admitted: that analysis
/// takes `D = T`, as the other global tests do.
pub fn global_amc_rtb_dm(tasks: &[Task], criticality: Criticality, cores: u16) -> bool {
    tasks.iter().all(|t| t.deadline == t.period)
        && amc::rtb_global(&vestal_tasks(tasks, criticality), cores, &[], &[]).schedulable
}

/// `tasks` made Vestal tasks by `criticality` in deadline-monotonic order, all at one
/// priority level (the analyses order equal priorities by position).
fn vestal_tasks(tasks: &[Task], criticality: Criticality) -> Vec<McTask> {
    let nanos = Duration::from_nanos;
    priority_assignment::deadline_monotonic(tasks)
        .into_iter()
        .map(|index| {
            let task = &tasks[index];
            McTask {
                low_budget: nanos(task.wcet),
                high_budget: high_budget(tasks, index, criticality).map(nanos),
                period: nanos(task.period),
                deadline: nanos(task.deadline),
                priority: bulwark_core::Priority(0),
                sporadic_server: false,
            }
        })
        .collect()
}

/// `C^H = ceil(factor C)` of `tasks[index]` when it is of high criticality (one of the first
/// `high-fraction` of `tasks`, rounded); `None` when it is of low criticality.
fn high_budget(tasks: &[Task], index: usize, criticality: Criticality) -> Option<u64> {
    let high = (u128::from(criticality.high_ppb) * tasks.len() as u128 + PPB / 2) / PPB;
    let scaled = (u128::from(tasks[index].wcet) * u128::from(criticality.factor_ppb)).div_ceil(PPB);
    ((index as u128) < high).then(|| u64::try_from(scaled).unwrap_or(u64::MAX))
}

/// The worst-case reservations of `tasks` made Vestal tasks by `criticality` (as
/// [`amc_rtb_dm`] makes them): each high-criticality task at its `C^H`, each low one at its
/// `C`. What a cluster's analysis tests where AMC-rtb does not apply (EDF order, more cores):
/// the mode switch given no credit. `wcr-rta-dm` and `wcr-edf` run the plain tests on them.
pub fn worst_case_reservations(tasks: &[Task], criticality: Criticality) -> Vec<Task> {
    (0..tasks.len())
        .map(|index| Task {
            wcet: high_budget(tasks, index, criticality).unwrap_or(tasks[index].wcet),
            ..tasks[index].clone()
        })
        .collect()
}

/// Parts per billion, as the criticality parameters are given.
const PPB: u128 = 1_000_000_000;

/// Each task's reservation budget, `C_i + N (1 + 2 m K) L` (section IV-C: Theorem 1 bounds
/// the budget one invocation drains by `(1 + 2 m_k K) L_q`, and a job invokes the server
/// `N_iq = N` times), with `m = m_k =` [`MCIPC_CLUSTER_CORES`]; `None` (not admissible) on
/// overflow. Without a server (`None`) the budgets are the WCETs.
pub fn mcipc_budgets(tasks: &[Task], server: Option<&McIpcServer>) -> Option<Vec<u64>> {
    let servers: Vec<ServerInvocations> = server
        .map(|s| ServerInvocations {
            invocations: s.invocations,
            operation_length: Duration::from_nanos(s.operation_length),
            clusters: s.clusters,
        })
        .into_iter()
        .collect();
    tasks
        .iter()
        .map(|task| {
            reservation_budget(
                Duration::from_nanos(task.wcet),
                MCIPC_CLUSTER_CORES,
                &servers,
            )
            .map(Duration::as_nanos)
        })
        .collect()
}

/// `mcipc-budget`: every task in its own sporadic reservation of budget [`mcipc_budgets`] and
/// period `T_i` on one core. Theorem 1 holds "assuming the set of admitted reservations in
/// `C_k` is schedulable (i.e., `R_j` can always consume its entire budget by its deadline)"
/// (section IV-C), and the prototype's sporadic reservations on each core take EDF priorities
/// (section V; section III: `Y_j = t + p_i`). So the set is admitted when every budget is at
/// most its deadline and EDF's exact processor-demand test (QPA, [`edf::analyse`]) admits the
/// reservations as sporadic tasks `(budget, T_i, D_i)`. With `D_i = T_i` that is section
/// III's reservation exactly; with `D_i < T_i` the reservation takes the task's deadline as
/// its EDF deadline, `Y_j = t + D_i`, so that consuming its budget by then meets `D_i`.
pub fn mcipc_budget(tasks: &[Task], server: Option<&McIpcServer>) -> bool {
    let Some(budgets) = mcipc_budgets(tasks, server) else {
        return false;
    };
    if budgets.iter().zip(tasks).any(|(&b, t)| b > t.deadline) {
        return false;
    }
    let reservations: Vec<Task> = tasks
        .iter()
        .zip(budgets)
        .map(|(task, budget)| Task {
            wcet: budget,
            ..task.clone()
        })
        .collect();
    edf::analyse(&reservations).schedulable()
}

/// The sweep's split as the component sets name it.
fn split_of(split: ComponentSplit) -> Split {
    match split {
        ComponentSplit::Equal => Split::Equal,
        ComponentSplit::ShortSections => Split::ShortSections,
    }
}

/// `tasks` on the Fig. 7 topology under `components`, as the paper's tests see them (`C_i`,
/// `T_i`, `p_i`, `B_i`), with zero protocol overheads; `None` for a configuration outside
/// Table 3 (the file checks refuse it) or a system the analysis cannot read.
///
/// Task `i` of `n` goes through A-C-E when `i < ceil(n / 2)`, else B-D-E
/// ([`component_sets::chain`]), at its rate-monotonic priority by
/// [`rate_monotonic_priorities`] (equal periods share one, as in the paper); its `C` is divided among its own
/// component, the first CPI, the second and E by the split's percentages, the rounding
/// remainder in its own component ([`Split::divide`], as the lab's generated sets).
pub fn component_timings(tasks: &[Task], components: Components) -> Option<Vec<TaskTiming>> {
    let configuration = *TABLE_3
        .iter()
        .find(|c| c.number == components.configuration)?;
    let split = split_of(components.split);
    let periods: Vec<Duration> = tasks
        .iter()
        .map(|t| Duration::from_nanos(t.period))
        .collect();
    let priorities = rate_monotonic_priorities(&periods);
    let chain_tasks: Vec<ChainTask> = tasks
        .iter()
        .zip(periods.iter().zip(&priorities))
        .map(|(task, (&period, &priority))| ChainTask {
            period,
            priority,
            work: split.divide(Duration::from_nanos(task.wcet)),
        })
        .collect();
    let set = component_sets::build(
        &chain_tasks,
        component_sets::protocols(configuration),
        &Overheads::ZERO,
    )
    .ok()?;
    Some(set.analysis.timings())
}

/// Whether the component test `test` (`component-eq2`, `-eq3`, `-eq4` or `-rta`) admits
/// `tasks` mapped onto the topology by [`component_timings`]; an unknown name admits nothing.
pub fn component_test(test: &str, tasks: &[Task], components: Components) -> bool {
    let Some(timings) = component_timings(tasks, components) else {
        return false;
    };
    // The paper's bounds take D = T (section 3.2): implicit deadlines only.
    let implicit = tasks.iter().all(|t| t.deadline >= t.period);
    match test {
        "component-eq2" => implicit && blocking::hyperbolic(&timings).verdict.admitted(),
        "component-eq3" => implicit && blocking::liu_layland(&timings).verdict.admitted(),
        "component-eq4" => implicit && blocking::hyperbolic_non_unique(&timings).verdict.admitted(),
        // R_i by the fixed point of the paper's RTA (admitted means R_i <= T_i), then R_i <= D_i.
        "component-rta" => blocking::response_times(&timings)
            .iter()
            .zip(tasks)
            .all(|(r, task)| r.verdict.admitted() && r.response.as_nanos() <= task.deadline),
        _ => false,
    }
}

#[cfg(test)]
mod tests {

    /// Two thirds of a set's tasks of high criticality, `C^H = factor C`.
    fn two_thirds_high(factor_ppb: u64) -> Criticality {
        Criticality {
            factor_ppb,
            high_ppb: 666_666_667,
        }
    }

    /// Tasks `(C, T, D as a percentage of T)`, the deadline kept within `[C, T]`.
    fn constrained(shapes: &[(u64, u64, u64)]) -> Vec<Task> {
        shapes
            .iter()
            .enumerate()
            .map(|(i, &(c, t, d))| {
                let deadline = c.max(t * d / 100).max(1).min(t);
                Task::new(format!("t{i}"), c, t).with_deadline(deadline)
            })
            .collect()
    }

    /// By hand, C = (2, 3, 4) ms, T = D = (10, 20, 40) ms, the first two of high
    /// criticality (two thirds of three, rounded) with factor 2: C^H = 4 and 6. R^L: 2,
    /// 3 + 2 = 5, 4 + 2 + 3 = 9; R^*: 4, and 6 + ceil(R/10) 4 = 10 <= 20. With factor 3
    /// (C^H = 6 and 9): 9 + ceil(R/10) 6 = 21 > 20, not shown.
    #[test]
    fn amc_rtb_dm_by_hand() {
        let tasks = [
            Task::new("a", 2_000_000, 10_000_000),
            Task::new("b", 3_000_000, 20_000_000),
            Task::new("c", 4_000_000, 40_000_000),
        ];
        assert!(amc_rtb_dm(&tasks, two_thirds_high(2_000_000_000)));
        assert!(!amc_rtb_dm(&tasks, two_thirds_high(3_000_000_000)));
        // No task of high criticality: the plain response-time analysis of C^L.
        let none = Criticality {
            factor_ppb: 3_000_000_000,
            high_ppb: 0,
        };
        assert!(amc_rtb_dm(&tasks, none));
    }

    /// Worst-case reservations by hand, C = (2, 3, 4) ms, T = D = (10, 20, 30) ms, the first
    /// two of high criticality with factor 2.5: C^H = 5 and 7.5 ms.
    /// - AMC-rtb: a's R^* = 5; b's R^L = 3 + 2 = 5 and R^* = 7.5 + ceil(5/10) 5 = 12.5; c
    ///   (low) R^L = 4 + 2 + 3 = 9 <= 30: accepted.
    /// - wcr-rta-dm, every high task at C^H: c's R = 4 + 5 + 7.5 = 16.5 -> 4 + 2 * 5 + 7.5 =
    ///   21.5 -> 4 + 3 * 5 + 2 * 7.5 = 34 > 30: not accepted.
    /// - wcr-edf: U = 5/10 + 7.5/20 + 4/30 = 0.5 + 0.375 + 0.1333 > 1: not accepted; with
    ///   factor 1.5 (C^H = 3 and 4.5 ms) U = 0.3 + 0.225 + 0.1333 <= 1: accepted.
    #[test]
    fn worst_case_reservations_by_hand() {
        let tasks = [
            Task::new("a", 2_000_000, 10_000_000),
            Task::new("b", 3_000_000, 20_000_000),
            Task::new("c", 4_000_000, 30_000_000),
        ];
        let wcr: Vec<u64> = worst_case_reservations(&tasks, two_thirds_high(2_500_000_000))
            .iter()
            .map(|t| t.wcet)
            .collect();
        assert_eq!(wcr, [5_000_000, 7_500_000, 4_000_000]);
        let overheads = |factor_ppb| crate::sweep::verdict::Overheads {
            criticality: Some(two_thirds_high(factor_ppb)),
            ..Default::default()
        };
        let accepts = |test, factor_ppb| {
            crate::sweep::verdict::accepts_with(test, &tasks, &overheads(factor_ppb))
        };
        assert!(accepts("amc-rtb-dm", 2_500_000_000));
        assert!(!accepts("wcr-rta-dm", 2_500_000_000));
        assert!(!accepts("wcr-edf", 2_500_000_000));
        assert!(accepts("wcr-edf", 1_500_000_000));
        // No [criticality] table: nothing accepted.
        assert!(!crate::sweep::verdict::accepts("wcr-edf", &tasks));
    }

    /// On two cores, in ms: the first of (1, 10), (2, 5) and (2, 5) of high criticality
    /// with factor 7 (C^H = 7). Deadline-monotonic: the two (2, 5) first, R = 2 each (fewer
    /// than two above). The high task: R^L = 3 (both terms capped at x = 0 and 1, then W(3)
    /// = 2 < 2 ms + 1 ns: 1 + floor(4 / 2)); R^* over the constants W(3) = 2: 7 + 2 = 9 <=
    /// 10, accepted. At C^H in every window its iterates reach x = 6 at R = 13 (W(13) = 4 +
    /// min(2, 3) = 6 each): 13 > 10, worst-case reservations refused; at C^L, accepted.
    #[test]
    fn global_amc_rtb_by_hand() {
        let tasks = [
            Task::new("h", 1_000_000, 10_000_000),
            Task::new("a", 2_000_000, 5_000_000),
            Task::new("b", 2_000_000, 5_000_000),
        ];
        let overheads = crate::sweep::verdict::Overheads {
            criticality: Some(Criticality {
                factor_ppb: 7_000_000_000,
                high_ppb: 333_333_333,
            }),
            cores: Some(2),
            ..Default::default()
        };
        let accepts = |test| crate::sweep::verdict::accepts_with(test, &tasks, &overheads);
        assert!(accepts("global-amc-rtb-dm"));
        assert!(!accepts("global-wcr-rta-dm"));
        assert!(accepts("global-fp-rta-dm"));
        // Without [multiprocessor] (or [criticality]) nothing is accepted.
        let one_table = crate::sweep::verdict::Overheads {
            cores: None,
            ..overheads
        };
        assert!(!crate::sweep::verdict::accepts_with(
            "global-amc-rtb-dm",
            &tasks,
            &one_table
        ));
    }

    proptest::proptest! {
        /// On more cores too: `global-amc-rtb-dm` accepts every set `global-wcr-rta-dm`
        /// accepts, and at factor 1 `global-wcr-rta-dm` is `global-fp-rta-dm`.
        #[test]
        fn global_amc_rtb_dominates_worst_case_reservations(
            shapes in proptest::collection::vec((1u64..10, 5u64..60), 1..7),
            high_ppb in 0u64..=1_000_000_000,
            factor_ppb in 1_000_000_000u64..4_000_000_000,
            cores in 1u16..4,
        ) {
            let tasks: Vec<Task> = shapes
                .iter()
                .map(|&(wcet, period)| Task::new("t", wcet.min(period), period))
                .collect();
            let with = |factor_ppb| crate::sweep::verdict::Overheads {
                criticality: Some(Criticality { factor_ppb, high_ppb }),
                cores: Some(cores),
                ..Default::default()
            };
            let accepts = |test, factor_ppb| {
                crate::sweep::verdict::accepts_with(test, &tasks, &with(factor_ppb))
            };
            proptest::prop_assert!(
                !accepts("global-wcr-rta-dm", factor_ppb)
                    || accepts("global-amc-rtb-dm", factor_ppb)
            );
            proptest::prop_assert_eq!(
                accepts("global-wcr-rta-dm", 1_000_000_000),
                accepts("global-fp-rta-dm", 1_000_000_000)
            );
        }

        /// AMC-rtb credits the switch, worst-case reservations do not: `amc-rtb-dm` accepts
        /// every set `wcr-rta-dm` accepts (a low task's R^L counts every C^L, a high task's
        /// R^* no more than its worst-case R), and at factor 1 `wcr-rta-dm` is `fp-rta-dm`
        /// and `wcr-edf` is `edf-qpa`.
        #[test]
        fn amc_rtb_dominates_worst_case_reservations(
            shapes in proptest::collection::vec((1u64..10, 5u64..60, 0u64..100), 1..7),
            high_ppb in 0u64..=1_000_000_000,
            factor_ppb in 1_000_000_000u64..4_000_000_000,
        ) {
            let tasks = constrained(&shapes);
            let with = |factor_ppb| crate::sweep::verdict::Overheads {
                criticality: Some(Criticality { factor_ppb, high_ppb }),
                ..Default::default()
            };
            let accepts = |test, factor_ppb| {
                crate::sweep::verdict::accepts_with(test, &tasks, &with(factor_ppb))
            };
            proptest::prop_assert!(
                !accepts("wcr-rta-dm", factor_ppb) || accepts("amc-rtb-dm", factor_ppb)
            );
            proptest::prop_assert_eq!(
                accepts("wcr-rta-dm", 1_000_000_000),
                crate::sweep::verdict::accepts("fp-rta-dm", &tasks)
            );
            proptest::prop_assert_eq!(
                accepts("wcr-edf", 1_000_000_000),
                crate::sweep::verdict::accepts("edf-qpa", &tasks)
            );
        }

        /// With factor 1 (C^H = C^L) AMC-rtb is the plain response-time analysis whatever
        /// the tasks' criticality (R^L solves the R^* equation, and nothing below it does),
        /// so `amc-rtb-dm` accepts exactly what `fp-rta-dm` accepts; with a larger factor it
        /// accepts no more.
        #[test]
        fn at_factor_one_it_is_fp_rta_dm(
            shapes in proptest::collection::vec((1u64..10, 5u64..60, 0u64..100), 1..7),
            high_ppb in 0u64..=1_000_000_000,
        ) {
            let tasks = constrained(&shapes);
            let plain = crate::sweep::verdict::accepts("fp-rta-dm", &tasks);
            let at = |factor_ppb| amc_rtb_dm(&tasks, Criticality { factor_ppb, high_ppb });
            proptest::prop_assert_eq!(at(1_000_000_000), plain);
            proptest::prop_assert!(!at(2_500_000_000) || plain);
        }
    }
    use super::*;
    use crate::sweep::verdict::accepts;
    use crate::vbs;
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

    fn server(invocations: u64, operation_length: u64, clusters: u64) -> McIpcServer {
        McIpcServer {
            invocations,
            operation_length,
            clusters,
        }
    }

    /// N = 2 invocations of L = 1 from K = 3 clusters on one-core clusters: each costs
    /// (1 + 2 * 1 * 3) L = 7, a job 14. t1 = (C 10, T 50): budget 24; t2 = (C 20, T 100):
    /// budget 34. Implicit deadlines: EDF by utilisation, 24/50 + 34/100 = 0.82 <= 1:
    /// admitted. With t2 = (C 40, T 100): budget 54, 0.48 + 0.54 = 1.02 > 1: refused, though
    /// the unsized set (0.2 + 0.4) is far below 1.
    #[test]
    fn budgets_by_theorem_1_by_hand() {
        let tasks = [Task::new("t1", 10, 50), Task::new("t2", 20, 100)];
        let s = server(2, 1, 3);
        assert_eq!(mcipc_budgets(&tasks, Some(&s)).unwrap(), [24, 34]);
        assert!(mcipc_budget(&tasks, Some(&s)));
        let heavier = [Task::new("t1", 10, 50), Task::new("t2", 40, 100)];
        assert_eq!(mcipc_budgets(&heavier, Some(&s)).unwrap(), [24, 54]);
        assert!(!mcipc_budget(&heavier, Some(&s)));
        assert!(accepts("edf-qpa", &heavier));
    }

    /// A budget beyond its deadline, and EDF's demand test on constrained deadlines.
    /// (C 5, T 100, D 18) with N = 1, L = 2, K = 6: budget 5 + 13 * 2 = 31 > 18: refused
    /// alone. With K = 2: budget 5 + 5 * 2 = 15 <= 18. Beside it (C 3, T 100, D 16):
    /// budget 13; at t = 18 (a's deadline) the demand is 15 + 13 = 28 > 18: refused by QPA,
    /// though the unsized demand 5 + 3 = 8 fits.
    #[test]
    fn budgets_against_deadlines_by_hand() {
        let a = Task::new("a", 5, 100).with_deadline(18);
        assert_eq!(
            mcipc_budgets(std::slice::from_ref(&a), Some(&server(1, 2, 6))).unwrap(),
            [31]
        );
        assert!(!mcipc_budget(
            std::slice::from_ref(&a),
            Some(&server(1, 2, 6))
        ));
        assert!(mcipc_budget(
            std::slice::from_ref(&a),
            Some(&server(1, 2, 2))
        ));
        let pair = [a, Task::new("b", 3, 100).with_deadline(16)];
        assert_eq!(
            mcipc_budgets(&pair, Some(&server(1, 2, 2))).unwrap(),
            [15, 13]
        );
        assert!(!mcipc_budget(&pair, Some(&server(1, 2, 2))));
        assert!(accepts("edf-qpa", &pair));
        // Overflow is refused, not wrapped: (1 + 2 * 4096) * 2^60 does not fit in 64 bits.
        let huge = server(1, 1 << 60, 4_096);
        assert_eq!(mcipc_budgets(&[Task::new("c", 1, 100)], Some(&huge)), None);
        assert!(!mcipc_budget(&[Task::new("c", 1, 100)], Some(&huge)));
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
            // The fast verdict is Eq. (2) as vbs::admit decides it.
            let caps: Option<Vec<(Duration, Duration)>> = vbs_resources(&tasks, k).map(|actions| {
                actions
                    .iter()
                    .map(|a| (Duration::from_nanos(a.limit), Duration::from_nanos(a.period)))
                    .collect()
            });
            prop_assert_eq!(
                vbs_eq2(&tasks, k),
                caps.is_some_and(|caps| vbs::admit(&caps).admitted)
            );
            if vbs_eq2(&tasks, k) {
                prop_assert!(accepts("edf-utilisation", &tasks));
                prop_assert!(accepts("edf-qpa", &tasks));
            }
        }

        /// Sized budgets are at least the WCETs and EDF's demand grows with the WCETs, so
        /// mcipc-budget admits only what edf-qpa admits; with L = 0 (or N = 0) the budgets
        /// are the WCETs and the verdicts are edf-qpa's.
        #[test]
        fn mcipc_budget_is_edf_qpa_with_larger_budgets(
            tasks in task_set(),
            invocations in 0u64..5,
            length in 0u64..500,
            clusters in 1u64..8,
        ) {
            let s = server(invocations, length, clusters);
            if mcipc_budget(&tasks, Some(&s)) {
                prop_assert!(accepts("edf-qpa", &tasks));
            }
            prop_assert_eq!(
                mcipc_budget(&tasks, Some(&server(invocations, 0, clusters))),
                accepts("edf-qpa", &tasks)
            );
            prop_assert_eq!(
                mcipc_budget(&tasks, Some(&server(0, length, clusters))),
                accepts("edf-qpa", &tasks)
            );
        }
    }

    const MS: u64 = 1_000_000;

    fn components(configuration: u8, split: ComponentSplit) -> Components {
        Components {
            configuration,
            split,
        }
    }

    /// Two tasks, t1 = (C 5 ms, T 10 ms) on A-C-E and t2 = (C 10 ms, T 20 ms) on B-D-E,
    /// U = 1. Configuration 2 (C PIP, D and E propagated): the only locked CPIs the two
    /// share are none (A, C are t1's alone, B is t2's, D and E are reentrant), so
    /// `B_1 = B_2 = 0`. Eq. 2: (1 + 5/10)(1 + 10/20) = 2.25 > 2, refused; Eq. 3:
    /// 1 > 2 (sqrt 2 - 1) = 0.83, refused; Eq. 4 the same product (unique priorities).
    /// RTA (t1 priority 2 by rate monotonic, t2 priority 1): R_1 = 5 <= 10;
    /// R_2 = 10 + ceil(R/10) 5: 10 -> 15 -> 20 -> 20 <= 20, admitted.
    #[test]
    fn rta_admits_what_eq2_refuses_by_hand() {
        let tasks = [
            Task::new("t1", 5 * MS, 10 * MS),
            Task::new("t2", 10 * MS, 20 * MS),
        ];
        let topology = components(2, ComponentSplit::Equal);
        let timings = component_timings(&tasks, topology).unwrap();
        let blocking: Vec<u64> = timings.iter().map(|t| t.blocking.as_nanos()).collect();
        assert_eq!(blocking, [0, 0]);
        let execution: Vec<u64> = timings.iter().map(|t| t.execution.as_nanos()).collect();
        assert_eq!(execution, [5 * MS, 10 * MS]);
        let responses: Vec<u64> = blocking::response_times(&timings)
            .iter()
            .map(|r| r.response.as_nanos())
            .collect();
        assert_eq!(responses, [5 * MS, 20 * MS]);
        assert!(component_test("component-rta", &tasks, topology));
        for bound in ["component-eq2", "component-eq3", "component-eq4"] {
            assert!(!component_test(bound, &tasks, topology), "{bound}");
        }
    }

    /// The same two tasks under configuration 1 (E under PIP): t2's 2.5 ms in E (a quarter
    /// of its 10 ms) can block t1, `B_1 = 2.5 ms`, so R_1 = 5 + 2.5 = 7.5 ms. With a
    /// constrained deadline D_1 = 7 ms RTA refuses (7.5 > 7), with D_1 = 8 ms it admits,
    /// and the utilisation bounds answer no on either constrained set (implicit only).
    #[test]
    fn blocking_and_constrained_deadlines_by_hand() {
        let t2 = Task::new("t2", 10 * MS, 20 * MS);
        let topology = components(1, ComponentSplit::Equal);
        let implicit = [Task::new("t1", 5 * MS, 10 * MS), t2.clone()];
        let timings = component_timings(&implicit, topology).unwrap();
        assert_eq!(timings[0].blocking.as_nanos(), 2_500_000);
        assert_eq!(
            blocking::response_times(&timings)[0].response.as_nanos(),
            7_500_000
        );
        let with_deadline = |deadline: u64| {
            let mut t1 = Task::new("t1", 5 * MS, 10 * MS);
            t1.deadline = deadline;
            [t1, t2.clone()]
        };
        assert!(!component_test(
            "component-rta",
            &with_deadline(7 * MS),
            topology
        ));
        assert!(component_test(
            "component-rta",
            &with_deadline(8 * MS),
            topology
        ));
        // A light set every bound admits with D = T, refused by the bounds once constrained.
        let light = |deadline: u64| {
            let mut t1 = Task::new("t1", MS, 10 * MS);
            t1.deadline = deadline;
            [t1, Task::new("t2", MS, 20 * MS)]
        };
        for bound in ["component-eq2", "component-eq3", "component-eq4"] {
            assert!(component_test(bound, &light(10 * MS), topology), "{bound}");
            assert!(!component_test(bound, &light(9 * MS), topology), "{bound}");
        }
        assert!(component_test("component-rta", &light(9 * MS), topology));
    }

    fn component_set() -> impl Strategy<Value = (Vec<Task>, Components)> {
        (
            proptest::collection::vec((1u64..=400, 0u32..6), 1..9),
            1u8..=4,
            any::<bool>(),
        )
            .prop_map(|(drawn, configuration, short)| {
                let tasks = drawn
                    .iter()
                    .enumerate()
                    .map(|(i, &(per_mille, k))| {
                        // Harmonic periods 10 ms .. 320 ms, utilisation up to 0.4 each.
                        let period = (10 * MS) << k;
                        Task::new(format!("t{i}"), period / 1000 * per_mille, period)
                    })
                    .collect();
                let split = if short {
                    ComponentSplit::ShortSections
                } else {
                    ComponentSplit::Equal
                };
                (tasks, components(configuration, split))
            })
    }

    proptest! {
        /// The theory relations the lab's camkes-sweep checks: the three bounds are
        /// sufficient for exact RTA; with unique priorities Eq. 3 implies Eq. 2 (AM-GM: a sum
        /// within `i (2^(1/i) - 1)` keeps the product within 2) and Eq. 4 is Eq. 2 (its
        /// product counts equal-priority tasks, and there are none); with shared ones Eq. 2
        /// does not apply and refuses.
        #[test]
        fn the_component_tests_keep_the_theory_relations((tasks, topology) in component_set()) {
            let verdict = |test| component_test(test, &tasks, topology);
            let [eq2, eq3, eq4, rta] = ["component-eq2", "component-eq3", "component-eq4", "component-rta"]
                .map(verdict);
            prop_assert!(!eq2 || rta);
            prop_assert!(!eq3 || rta);
            prop_assert!(!eq4 || rta);
            let periods: Vec<u64> = tasks.iter().map(|t| t.period).collect();
            let unique = (1..periods.len()).all(|i| !periods[..i].contains(&periods[i]));
            if unique {
                prop_assert!(!eq3 || eq2);
                prop_assert_eq!(eq4, eq2);
            } else {
                prop_assert!(!eq2, "Eq. 2 needs unique priorities");
            }
            // The same verdicts through the sweep's dispatcher, with the table in its overheads.
            let with_table = crate::sweep::verdict::Overheads {
                components: Some(topology),
                ..crate::sweep::verdict::Overheads::default()
            };
            prop_assert_eq!(
                crate::sweep::verdict::accepts_with("component-rta", &tasks, &with_table),
                rta
            );
            prop_assert!(!accepts("component-rta", &tasks), "no table, no admission");
        }
    }
}
