//! The schedulability tests a sweep compares, each a yes/no on one task set.
//!
//! The exact tests call [`crate::classic`]; the two utilisation bounds for rate monotonic
//! are sufficient only, and only for implicit deadlines: on a set with a deadline shorter
//! than its period they answer no (not shown schedulable).
//!
//! `spr-eq1` puts each task in its own sporadic-server reservation and asks the SPR paper's
//! Eq. 1 ([`crate::admission`]), with the overheads of Eq. 2 ([`crate::overhead`]) folded into
//! the budgets when the sweep file has a `[cost]` table (see [`spr_servers`]). The other
//! papers' tests (`vbs-eq2`, `mcipc-budget`, the four `component-*`) live in [`crate::sweep::papers`].

use bulwark_core::reservation::Reservation;
use bulwark_core::Duration;
use bulwark_spec::sweep_toml::{
    Components, Criticality, Experiment, McIpcServer, DEFAULT_VBS_PERIODS_PER_JOB,
};
use bulwark_spec::{CostModel, PolicyKind};
use num_bigint::BigUint;

use crate::admission::{response_times, Server};
use crate::bandwidth;
use crate::classic::{edf, fixed_priority, priority_assignment, Task};
use crate::generate::rate_monotonic_priorities;
use crate::overhead::{overhead, preemption_overhead, work_per_invocation};
use crate::rbf::ServerKind;
use crate::sweep::{multiprocessor, papers};

/// What the reservation and paper tests need from the sweep file besides the tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overheads {
    /// The `[cost]` table; `None` for zero overheads.
    pub cost: Option<CostModel>,
    /// `eta`, every server's non-preemptive region (`non-preemptive`; 0 when not given).
    pub non_preemptive: Duration,
    /// `k` of `vbs-eq2`: resource periods per job (`vbs-periods-per-job`).
    pub vbs_periods_per_job: u64,
    /// The shared server of `mcipc-budget` (`[mcipc-server]`); `None`: no invocations, the
    /// budgets are the WCETs.
    pub mcipc_server: Option<McIpcServer>,
    /// The topology of the component tests (`[components]`); `None`: they admit nothing.
    pub components: Option<Components>,
    /// How the mixed-criticality tests make a set mixed-criticality (`[criticality]`);
    /// `None`: they admit nothing.
    pub criticality: Option<Criticality>,
    /// The cores of the global tests (`[multiprocessor]`); `None`: they admit nothing.
    pub cores: Option<u16>,
}

impl Default for Overheads {
    /// Zero overheads, and the file's defaults for the paper tests.
    fn default() -> Overheads {
        Overheads {
            cost: None,
            non_preemptive: Duration::ZERO,
            vbs_periods_per_job: DEFAULT_VBS_PERIODS_PER_JOB,
            mcipc_server: None,
            components: None,
            criticality: None,
            cores: None,
        }
    }
}

impl Overheads {
    /// The overheads an experiment file asks for.
    pub fn of(experiment: &Experiment) -> Overheads {
        Overheads {
            cost: experiment.cost,
            non_preemptive: Duration::from_nanos(experiment.non_preemptive),
            vbs_periods_per_job: experiment.vbs_periods_per_job,
            mcipc_server: experiment.mcipc_server,
            components: experiment.components,
            criticality: experiment.criticality,
            cores: experiment.cores,
        }
    }
}

/// Whether the test named `test` (one of [`bulwark_spec::sweep_toml::SWEEP_TESTS`] or
/// [`bulwark_spec::sweep_toml::SERVER_TESTS`]) accepts `tasks`, with zero overheads; an
/// unknown name accepts nothing.
pub fn accepts(test: &str, tasks: &[Task]) -> bool {
    accepts_with(test, tasks, &Overheads::default())
}

/// [`accepts`] with the sweep file's overheads and paper-test parameters.
pub fn accepts_with(test: &str, tasks: &[Task], overheads: &Overheads) -> bool {
    match test {
        "spr-eq1" => spr_eq1(tasks, overheads),
        "vbs-eq2" => papers::vbs_eq2(tasks, overheads.vbs_periods_per_job),
        "mcipc-budget" => papers::mcipc_budget(tasks, overheads.mcipc_server.as_ref()),
        "component-eq2" | "component-eq3" | "component-eq4" | "component-rta" => overheads
            .components
            .is_some_and(|components| papers::component_test(test, tasks, components)),
        "fp-rta-rm" => fixed_priority_with(tasks, &priority_assignment::rate_monotonic(tasks)),
        "fp-rta-dm" => fixed_priority_with(tasks, &priority_assignment::deadline_monotonic(tasks)),
        "fp-audsley" => priority_assignment::audsley(tasks).is_ok(),
        "amc-rtb-dm" => overheads
            .criticality
            .is_some_and(|criticality| papers::amc_rtb_dm(tasks, criticality)),
        "wcr-rta-dm" => overheads.criticality.is_some_and(|criticality| {
            let reservations = papers::worst_case_reservations(tasks, criticality);
            // The deadlines are the tasks' own: the same deadline-monotonic order.
            fixed_priority_with(
                &reservations,
                &priority_assignment::deadline_monotonic(&reservations),
            )
        }),
        "wcr-edf" => overheads.criticality.is_some_and(|criticality| {
            edf::analyse(&papers::worst_case_reservations(tasks, criticality)).schedulable()
        }),
        "global-edf-gfb" | "global-edf-bcl" | "global-fp-rta-dm" | "global-spr-rta-dm" => overheads
            .cores
            .is_some_and(|cores| multiprocessor::accepts(test, tasks, cores)),
        "global-amc-rtb-dm" => {
            overheads
                .criticality
                .zip(overheads.cores)
                .is_some_and(|(criticality, cores)| {
                    papers::global_amc_rtb_dm(tasks, criticality, cores)
                })
        }
        "global-wcr-rta-dm" => {
            overheads
                .criticality
                .zip(overheads.cores)
                .is_some_and(|(criticality, cores)| {
                    let reservations = papers::worst_case_reservations(tasks, criticality);
                    multiprocessor::accepts("global-fp-rta-dm", &reservations, cores)
                })
        }
        "edf-qpa" => edf::analyse(tasks).schedulable(),
        // Exact for implicit deadlines only (Liu and Layland 1973, Theorem 7).
        "edf-utilisation" => bandwidth::sum_at_most_one(tasks.iter().map(|t| (t.wcet, t.period))),
        "liu-layland" => implicit(tasks) && liu_layland(tasks),
        "hyperbolic" => implicit(tasks) && hyperbolic(tasks),
        _ => false,
    }
}

/// The scheduler a test's verdict speaks for: what a simulation must run to check it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Preemptive fixed priorities: task indices, most important first.
    FixedPriority(Vec<usize>),
    /// Preemptive EDF.
    Edf,
    /// SPR: each task in its own sporadic-server reservation (`servers[i]` for task `i`, its
    /// priority and reservation), on a machine with these kernel costs.
    Spr {
        /// One server per task, in task order.
        servers: Vec<Server>,
        /// What kernel work costs (all zero without a `[cost]` table).
        cost: CostModel,
    },
}

/// The scheduler `test` claims schedules `tasks` when it admits them: the fixed-priority tests
/// their own order (rate monotonic, deadline monotonic, or Audsley's assignment), the two
/// utilisation bounds rate monotonic, the EDF tests EDF. `None` for an unknown test, for
/// fp-audsley when it finds no order (it then admits nothing either), and for the tests of
/// [`bulwark_spec::sweep_toml::unsimulated_tests`] (`vbs-eq2`, `mcipc-budget`), whose mechanisms the sweep's
/// simulation does not run: a file cannot ask to simulate them.
pub fn schedule(test: &str, tasks: &[Task]) -> Option<Schedule> {
    schedule_with(test, tasks, &Overheads::default())
}

/// [`schedule`] with the sweep file's overheads: `spr-eq1` speaks for SPR with the budgets
/// of [`spr_servers`] and the file's costs.
pub fn schedule_with(test: &str, tasks: &[Task], overheads: &Overheads) -> Option<Schedule> {
    match test {
        "spr-eq1" => Some(Schedule::Spr {
            servers: spr_servers(tasks, overheads)?,
            cost: overheads.cost.unwrap_or_default(),
        }),
        "fp-rta-rm" | "liu-layland" | "hyperbolic" => Some(Schedule::FixedPriority(
            priority_assignment::rate_monotonic(tasks),
        )),
        "fp-rta-dm" => Some(Schedule::FixedPriority(
            priority_assignment::deadline_monotonic(tasks),
        )),
        "fp-audsley" => priority_assignment::audsley(tasks)
            .ok()
            .map(Schedule::FixedPriority),
        "edf-qpa" | "edf-utilisation" => Some(Schedule::Edf),
        _ => None,
    }
}

/// The SPR test: every server of [`spr_servers`] admitted by Eq. 1 (`R_i <= min(D_i, p_i)`).
fn spr_eq1(tasks: &[Task], overheads: &Overheads) -> bool {
    spr_servers(tasks, overheads)
        .is_some_and(|servers| response_times(&servers).iter().all(|r| r.admitted()))
}

/// Each task in a sporadic-server reservation: period `p = T`, deadline `D`, queue capacity
/// the default `S`, non-preemptive region `eta`, rate-monotonic priorities (equal periods
/// share a level; [`rate_monotonic_priorities`]), and budget `b = C` with zero overheads.
///
/// With a `[cost]` table the budget must also pay what each dispatch costs the task: `O_pre`
/// (Eq. 2's timer interrupt, scheduler with its `W` work units and context switch, `W` from
/// [`work_per_invocation`] for SPR as `bulwark analyze` takes it) plus one cache refill, the
/// larger of `cache-refill` and `cache-flush` (the delay [`crate::overhead::cache_delay`]
/// bounds alongside). With `o` that per-dispatch cost and `m = ceil(b / eta)` dispatches per
/// period (Eq. 2), the least budget with `b - m o >= C` is
/// `b = C + m* o` with `m* = ceil(C / (eta - o))`: `m` dispatches give `m (eta - o)` of useful
/// time at most, and at `b = C + m* o`, `ceil(b / eta) = m*` exactly. `None` (not admissible)
/// when `o >= eta` (a dispatch's cost eats its whole region), when `eta = 0` with a `[cost]`
/// table (Eq. 2 is then unbounded), or when the budget overflows.
pub fn spr_servers(tasks: &[Task], overheads: &Overheads) -> Option<Vec<Server>> {
    let periods: Vec<Duration> = tasks
        .iter()
        .map(|t| Duration::from_nanos(t.period))
        .collect();
    let priorities = rate_monotonic_priorities(&periods);
    let eta = overheads.non_preemptive;
    let mut servers: Vec<Server> = tasks
        .iter()
        .zip(priorities)
        .map(|(task, priority)| {
            let reservation = Reservation::new(
                Duration::from_nanos(task.wcet),
                Duration::from_nanos(task.period),
            )
            .with_non_preemptive(eta);
            Server::new(
                task.name.clone(),
                priority,
                reservation,
                ServerKind::Sporadic,
            )
            .with_deadline(Some(Duration::from_nanos(task.deadline)))
        })
        .collect();
    let Some(cost) = overheads.cost else {
        return Some(servers);
    };
    // W depends on S and the priority levels only, not on the budgets.
    let work = work_per_invocation(PolicyKind::Spr, &servers)?;
    let per_dispatch = preemption_overhead(&cost, work.units)?
        .as_nanos()
        .checked_add(
            cost.time_of(cost.cache_refill.max(cost.cache_flush))
                .as_nanos(),
        )?;
    let eta = eta.as_nanos();
    if eta <= per_dispatch {
        return None;
    }
    for (server, task) in servers.iter_mut().zip(tasks) {
        let dispatches = task.wcet.div_ceil(eta - per_dispatch);
        let budget = task
            .wcet
            .checked_add(dispatches.checked_mul(per_dispatch)?)?;
        server.reservation.budget = Duration::from_nanos(budget);
        // Eq. 2 as overhead.rs computes it, on the budget found: what it loses is what was
        // added (the closed form above, checked against the module that owns Eq. 2).
        let lost = overhead(server.reservation, &cost, work.units);
        let paid = lost
            .lost_budget?
            .as_nanos()
            .checked_add(lost.cache_delay?.as_nanos())?;
        if budget.checked_sub(paid)? < task.wcet {
            return None;
        }
    }
    Some(servers)
}

fn implicit(tasks: &[Task]) -> bool {
    tasks.iter().all(|t| t.deadline == t.period)
}

/// Exact response-time analysis with the priorities `order` (most important first).
fn fixed_priority_with(tasks: &[Task], order: &[usize]) -> bool {
    let ordered = priority_assignment::ordered(tasks, order);
    fixed_priority::response_times(&ordered)
        .iter()
        .all(|a| a.schedulable())
}

/// Liu and Layland 1973, Theorem 5: `U <= n (2^(1/n) - 1)`. The bound is irrational, so the
/// comparison is in floating point, with a relative margin of 1e-12 against the bound so
/// that rounding can only make this sufficient test more cautious, never wrong.
fn liu_layland(tasks: &[Task]) -> bool {
    let n = tasks.len() as f64;
    if tasks.is_empty() {
        return true;
    }
    let utilisation: f64 = tasks.iter().map(|t| t.wcet as f64 / t.period as f64).sum();
    let bound = n * (2f64.powf(1.0 / n) - 1.0);
    utilisation <= bound * (1.0 - 1e-12)
}

/// The hyperbolic bound (Bini, Buttazzo and Buttazzo 2003, Theorem 1): `prod (U_i + 1) <= 2`,
/// decided exactly as `prod (C_i + T_i) <= 2 prod T_i` in big integers.
fn hyperbolic(tasks: &[Task]) -> bool {
    let mut left = BigUint::from(1u8);
    let mut right = BigUint::from(2u8);
    for task in tasks {
        left *= BigUint::from(task.wcet) + BigUint::from(task.period);
        right *= BigUint::from(task.period);
    }
    left <= right
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    /// Two tasks, t1 = (C 2 ms, T 5 ms) and t2 = (C 2.9 ms, T 7 ms), D = T, eta = 1 ms.
    /// Rate monotonic: t1 at priority 2, t2 at 1.
    fn pair() -> Vec<Task> {
        vec![
            Task::new("t1", 2 * MS, 5 * MS),
            Task::new("t2", 2_900 * US, 7 * MS),
        ]
    }

    /// A cost of 100 us per dispatch: W = work_bound(S = 8, L = 2), the sum of (8+3), (8+2),
    /// (2+8+3) and (8+2), is 44 units of 100 cycles = 4,400, plus timer 40,000, scheduler
    /// 15,600 and switch 40,000: 100,000 cycles at 1 GHz, no cache refill.
    fn hundred_microseconds() -> CostModel {
        CostModel {
            timer_interrupt: 40_000,
            scheduler: 15_600,
            per_work_unit: 100,
            context_switch: 40_000,
            ..CostModel::default()
        }
    }

    /// By hand, Eq. 1 with b = C (no [cost]): I_1 = eta_2 = 1 ms (t2 is below t1), so
    /// R_1 = I_1 + b_1 = 3 ms <= 5 ms. I_2 = 0; R_2 = 2.9 + ceil(R/5) 2: from 2.9 ms to
    /// 2.9 + 2 = 4.9, then ceil(4.9/5) = 1 gives 4.9 again, <= 7 ms. Admitted.
    ///
    /// With the cost o = 100 us per dispatch (Eq. 2) the budgets grow to b = C + m o,
    /// m = ceil(C / (eta - o)): b_1 = 2 + ceil(2 / 0.9) 0.1 = 2.3 ms and
    /// b_2 = 2.9 + ceil(2.9 / 0.9) 0.1 = 3.3 ms. R_1 = 1 + 2.3 = 3.3 <= 5, but
    /// R_2 = 3.3 + ceil(R/5) 2.3: 3.3, then 5.6, then ceil(5.6/5) = 2 gives 7.9 > 7.
    /// Not admitted.
    #[test]
    fn eq1_on_two_tasks_by_hand() {
        let eta = Duration::from_millis(1);
        let free = Overheads {
            cost: None,
            non_preemptive: eta,
            ..Overheads::default()
        };
        let servers = spr_servers(&pair(), &free).unwrap();
        assert_eq!(
            servers.iter().map(|s| s.priority.0).collect::<Vec<_>>(),
            [2, 1]
        );
        let responses = response_times(&servers);
        assert_eq!(responses[0].response, Duration::from_millis(3));
        assert_eq!(responses[1].response, Duration::from_micros(4_900));
        assert!(accepts_with("spr-eq1", &pair(), &free));

        let costly = Overheads {
            cost: Some(hundred_microseconds()),
            non_preemptive: eta,
            ..Overheads::default()
        };
        let servers = spr_servers(&pair(), &costly).unwrap();
        let budgets: Vec<u64> = servers
            .iter()
            .map(|s| s.reservation.budget.as_nanos())
            .collect();
        assert_eq!(budgets, [2_300 * US, 3_300 * US]);
        let responses = response_times(&servers);
        assert_eq!(responses[0].response, Duration::from_micros(3_300));
        assert!(responses[0].admitted());
        assert_eq!(responses[1].response, Duration::from_micros(7_900));
        assert!(!responses[1].admitted());
        assert!(!accepts_with("spr-eq1", &pair(), &costly));
    }

    /// Without overheads and eta = 0, SPR's Eq. 1 is the classic RTA under rate monotonic
    /// (sporadic servers of budget C behave as the tasks; Sprunt et al.): the same verdicts as
    /// fp-rta-rm when the periods are distinct.
    #[test]
    fn eq1_without_overheads_is_rate_monotonic_rta() {
        let sets = [
            pair(),
            vec![
                Task::new("a", 2 * MS, 5 * MS),
                Task::new("b", 4 * MS, 7 * MS),
            ],
            vec![
                Task::new("a", MS, 4 * MS),
                Task::new("b", 2 * MS, 6 * MS),
                Task::new("c", 3 * MS, 13 * MS).with_deadline(9 * MS),
            ],
        ];
        for tasks in sets {
            assert_eq!(
                accepts("spr-eq1", &tasks),
                accepts("fp-rta-rm", &tasks),
                "{tasks:?}"
            );
        }
    }

    /// A dispatch that costs its whole region leaves no useful time. With one task (one
    /// priority level) W = work_bound(8, 1) = 11 + 10 + 12 + 9 = 42 units, so
    /// o = 40,000 + 15,600 + 4,200 + 40,000 = 99,800 ns. With eta = o: no budget at all.
    /// With eta = o + 200 ns each dispatch leaves 200 ns of work, so C = 1 ms needs
    /// m = 5,000 dispatches and b = 1 ms + 5,000 * 99.8 us = 500 ms, above the 100 ms period.
    #[test]
    fn a_dispatch_costing_its_region_admits_nothing() {
        let tasks = vec![Task::new("t", MS, 100 * MS)];
        let with_eta = |eta: u64| Overheads {
            cost: Some(hundred_microseconds()),
            non_preemptive: Duration::from_nanos(eta),
            ..Overheads::default()
        };
        assert_eq!(spr_servers(&tasks, &with_eta(99_800)), None);
        assert!(!accepts_with("spr-eq1", &tasks, &with_eta(99_800)));
        let servers = spr_servers(&tasks, &with_eta(100_000)).unwrap();
        assert_eq!(servers[0].reservation.budget, Duration::from_millis(500));
        assert!(!accepts_with("spr-eq1", &tasks, &with_eta(100_000)));
    }

    proptest! {
        /// Budgets of at least C and a blocking term of at least 0 only lengthen Eq. 1's
        /// response times, and the bound is min(D, T) in both: whatever the overheads,
        /// spr-eq1 admits only sets the rate-monotonic RTA admits.
        #[test]
        fn spr_eq1_admits_only_what_rate_monotonic_rta_admits(
            wcets in proptest::collection::vec(1u64..3_000_000, 1..6),
            periods in proptest::collection::vec(1_000_000u64..20_000_000, 6),
            deadline_cut in 0u64..1_000_000,
            eta in 0u64..500_000,
            switch in 0u64..50_000,
        ) {
            let tasks: Vec<Task> = wcets
                .iter()
                .zip(&periods)
                .enumerate()
                .map(|(i, (&c, &t))| {
                    let c = c.min(t);
                    Task::new(format!("t{i}"), c, t).with_deadline((t - deadline_cut).max(c))
                })
                .collect();
            for cost in [None, Some(CostModel { context_switch: switch, ..CostModel::default() })] {
                let overheads = Overheads {
                    cost,
                    non_preemptive: Duration::from_nanos(eta),
                    ..Overheads::default()
                };
                prop_assert!(
                    !accepts_with("spr-eq1", &tasks, &overheads) || accepts("fp-rta-rm", &tasks)
                );
            }
        }

        /// The budget found is the least that pays for C and for every dispatch Eq. 2
        /// counts: b - m(b) o >= C with m(b) = ceil(b / eta), and b - 1 falls short.
        #[test]
        fn the_budget_is_the_least_that_covers_the_overheads(
            wcet in 1u64..50_000_000,
            eta in 1u64..5_000_000,
            cycles in 0u64..200_000,
        ) {
            let cost = CostModel { context_switch: cycles, ..CostModel::default() };
            let overheads = Overheads {
                cost: Some(cost),
                non_preemptive: Duration::from_nanos(eta),
                ..Overheads::default()
            };
            let tasks = vec![Task::new("t", wcet, 1_000_000_000)];
            let servers = spr_servers(&tasks, &overheads);
            // o = context switch + the work of W = work_bound(8, 1) at 0 cycles per unit.
            let o = cycles;
            let useful = |b: u64| b.saturating_sub(b.div_ceil(eta) * o);
            match servers {
                None => prop_assert!(o >= eta),
                Some(servers) => {
                    let b = servers[0].reservation.budget.as_nanos();
                    prop_assert!(useful(b) >= wcet);
                    prop_assert!(useful(b - 1) < wcet || b == wcet);
                }
            }
        }
    }
}
