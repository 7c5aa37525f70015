//! The MC-IPC machine against an independent reference: global scheduling of sporadic
//! reservations on one cluster of one to three cores, by fixed priority and by EDF, with one
//! periodic task per reservation and no server. Every job's release and completion must be
//! those of a plain millisecond-by-millisecond simulation written here from the MC-IPC
//! paper's section III rules, sharing no code with the machine or the clustered scheduler:
//!
//! - at each instant the `m` most important reservations that are active (a pending job) and
//!   have budget are selected, and each selected reservation's task runs (one task per
//!   reservation, so a selected reservation always has a ready task) and drains its budget;
//!   ties go to the lower reservation id;
//! - a reservation's budget is set to `e` when a job is released while it is inactive, at the
//!   earliest `p` after its last replenishment; what is left is discarded when the job
//!   completes; a reservation still active when its budget runs out is replenished then, or
//!   `p` after its last replenishment if that is later. Under EDF its deadline is the
//!   replenishment time plus `p`;
//! - a task's jobs never overlap: job `j` is released at `offset + j T`, or when job `j - 1`
//!   completes if that is later.
//!
//! Every parameter is whole milliseconds and costs are zero, so stepping one millisecond at a
//! time is exact. The machine's run is exclusive of its end: nothing happens at the horizon.

use bulwark_core::reservation::clustered::{
    ClusterConfig, ReservationId, ReservationKind, Sporadic, SporadicOrder,
};
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::cluster::{
    run, Config, CostModel, Execution, PrunedRequests, ScriptStep, TaskConfig,
};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// One reservation and its task, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Drawn {
    budget: u64,
    server_period: u64,
    period: u64,
    execution: u64,
    offset: u64,
}

/// One job: (release, completion), in milliseconds.
type JobRow = (u64, Option<u64>);

/// A reservation as the reference tracks it.
#[derive(Clone, Copy, Debug, Default)]
struct Reserve {
    /// Budget left (ms).
    budget: u64,
    /// The last replenishment, if any.
    replenished: Option<u64>,
    /// EDF: the last replenishment plus `p`.
    deadline: u64,
}

fn reference(
    sets: &[Drawn],
    priorities: &[u8],
    edf: bool,
    cores: usize,
    horizon: u64,
) -> Vec<Vec<JobRow>> {
    let n = sets.len();
    let mut jobs: Vec<Vec<JobRow>> = vec![Vec::new(); n];
    let mut left: Vec<Option<u64>> = vec![None; n];
    let mut next_release: Vec<u64> = sets.iter().map(|s| s.offset).collect();
    let mut reserves = vec![Reserve::default(); n];
    let replenish = |reserve: &mut Reserve, set: &Drawn, now: u64| {
        let allowed = reserve
            .replenished
            .is_none_or(|last| now >= last + set.server_period);
        if allowed {
            *reserve = Reserve {
                budget: set.budget,
                replenished: Some(now),
                deadline: now + set.server_period,
            };
        }
    };
    for now in 0..horizon {
        for i in 0..n {
            if left[i].is_none() && next_release[i] == now {
                // Released while inactive: the budget is set, if `p` has passed.
                jobs[i].push((now, None));
                left[i] = Some(sets[i].execution);
                replenish(&mut reserves[i], &sets[i], now);
            } else if left[i].is_some() && reserves[i].budget == 0 {
                // Active and out of budget: replenished once `p` has passed.
                replenish(&mut reserves[i], &sets[i], now);
            }
        }
        let mut ready: Vec<usize> = (0..n)
            .filter(|&i| left[i].is_some() && reserves[i].budget > 0)
            .collect();
        if edf {
            ready.sort_by_key(|&i| (reserves[i].deadline, i));
        } else {
            ready.sort_by_key(|&i| (std::cmp::Reverse(priorities[i]), i));
        }
        for &i in ready.iter().take(cores) {
            reserves[i].budget -= 1;
            let work = left[i].as_mut().expect("a pending job");
            *work -= 1;
            if *work == 0 {
                let done = now + 1;
                let job = jobs[i].len() as u64;
                jobs[i].last_mut().expect("its job").1 = Some(done);
                left[i] = None;
                // The budget is discarded with the job.
                reserves[i].budget = 0;
                next_release[i] = (sets[i].offset + job * sets[i].period).max(done);
            }
        }
    }
    // Nothing happens at the horizon: a job completing exactly then is not seen complete.
    for rows in &mut jobs {
        for row in rows.iter_mut() {
            if row.1 == Some(horizon) {
                row.1 = None;
            }
        }
    }
    jobs
}

fn machine(
    sets: &[Drawn],
    priorities: &[u8],
    edf: bool,
    cores: usize,
    horizon: u64,
) -> Vec<Vec<JobRow>> {
    let ms = |n: u64| Duration::from_nanos(n * MS);
    let cluster = ClusterConfig {
        cores,
        cycle: Duration::ZERO,
        order: if edf {
            SporadicOrder::EarliestDeadlineFirst
        } else {
            SporadicOrder::FixedPriority
        },
        reservations: sets
            .iter()
            .zip(priorities)
            .map(|(set, &priority)| {
                ReservationKind::Sporadic(
                    Sporadic::new(ms(set.budget), ms(set.server_period))
                        .with_priority(Priority(priority)),
                )
            })
            .collect(),
    };
    let tasks = sets
        .iter()
        .enumerate()
        .map(|(i, set)| TaskConfig {
            cluster: 0,
            reservation: ReservationId(i as u32),
            offset: ms(set.offset),
            period: ms(set.period),
            script: vec![
                ScriptStep::Compute(Execution::exact(ms(set.execution))),
                ScriptStep::SleepUntilNextPeriod,
            ],
            group: None,
        })
        .collect();
    let config = Config {
        clusters: vec![cluster],
        servers: Vec::new(),
        tasks,
        pruned: PrunedRequests::Reissue,
        groups: Vec::new(),
        cost: CostModel::default(),
        seed: 1,
    };
    let until = Instant::ZERO.saturating_add(ms(horizon));
    let outcome = run(&config, until).expect("a valid configuration");
    let mut rows = vec![Vec::new(); sets.len()];
    for job in &outcome.jobs {
        assert!(!job.killed, "nothing is terminated");
        let to_ms = |t: Instant| t.as_nanos() / MS;
        rows[job.task].push((to_ms(job.release), job.completion.map(to_ms)));
    }
    rows
}

/// Up to six reservations: budgets 1 ms to the server period, server periods and task
/// periods 2-12 ms, executions up to the task period (overloads included), offsets up to 6 ms.
fn drawn_sets() -> impl Strategy<Value = Vec<Drawn>> {
    let set = (1u64..=12, 2u64..=12, 2u64..=12, 1u64..=12, 0u64..=6).prop_map(
        |(budget, server_period, period, execution, offset)| Drawn {
            budget: budget.min(server_period),
            server_period,
            period,
            execution: execution.min(period),
            offset,
        },
    );
    proptest::collection::vec(set, 1..=6)
}

/// A set with priorities drawn from 1 to 3, so ties (broken by reservation id) are common.
fn prioritised_sets() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    drawn_sets().prop_flat_map(|sets| {
        let n = sets.len();
        (Just(sets), proptest::collection::vec(1u8..=3, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn global_fixed_priority_reservations_schedule_as_the_reference(
        (sets, priorities) in prioritised_sets(),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let expected = reference(&sets, &priorities, false, cores, horizon);
        prop_assert_eq!(machine(&sets, &priorities, false, cores, horizon), expected);
    }

    #[test]
    fn global_edf_reservations_schedule_as_the_reference(
        sets in drawn_sets(),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let priorities = vec![1; sets.len()];
        let expected = reference(&sets, &priorities, true, cores, horizon);
        prop_assert_eq!(machine(&sets, &priorities, true, cores, horizon), expected);
    }
}

/// A case worked by hand: two cores, three reservations of fixed priority 3, 2, 1 (A, B, C;
/// e = 2, p = 4 each), tasks with C = 3, T = 4, all released at 0. A and B run [0, 2) and
/// exhaust; C runs [2, 4) and exhausts too. At 4 all three are replenished (p after 0): A and
/// B finish their first jobs in [4, 5), and C in [5, 6). Their jobs due at 4 are released as
/// the first ones complete (5, 5, 6), and get no budget before 8 (p after 4): A and B run
/// [8, 10) and exhaust, C runs [10, 12) and exhausts; A and B, replenished at 12, complete at
/// 13, and C at 14. The next jobs (13, 13, 14) wait for budget until 16, the horizon.
#[test]
fn the_reference_and_the_machine_run_a_hand_worked_set() {
    let set = Drawn {
        budget: 2,
        server_period: 4,
        period: 4,
        execution: 3,
        offset: 0,
    };
    let high = [(0, Some(5)), (5, Some(13)), (13, None)];
    let low = [(0, Some(6)), (6, Some(14)), (14, None)];
    let expected = vec![high.to_vec(), high.to_vec(), low.to_vec()];
    assert_eq!(reference(&[set; 3], &[3, 2, 1], false, 2, 16), expected);
    assert_eq!(machine(&[set; 3], &[3, 2, 1], false, 2, 16), expected);
}

/// A job that ends as its budget runs out: e = p = 3, C = T = 3, released at 2, one core.
/// The job runs [2, 5) and completes at 5 just as the budget is exhausted. A completion comes
/// first at its instant, so the reservation is inactive at 5, and the job released at 5
/// finds its last replenishment (at 2) p ago: budget 3, so it runs [5, 8), and so on. The
/// machine used to replenish the reservation at 5 as still active, discard that budget with
/// the completed job, and make the next job wait until 8 (p after 5): one job per 6 ms.
#[test]
fn a_job_ending_with_its_budget_leaves_the_next_release_its_period() {
    let set = Drawn {
        budget: 3,
        server_period: 3,
        period: 3,
        execution: 3,
        offset: 2,
    };
    let expected = vec![vec![(2, Some(5)), (5, Some(8)), (8, Some(11)), (11, None)]];
    for edf in [false, true] {
        assert_eq!(reference(&[set], &[1], edf, 1, 12), expected);
        assert_eq!(machine(&[set], &[1], edf, 1, 12), expected, "edf: {edf}");
    }
}
