//! The machine against an independent reference: for random periodic task sets on one core
//! with zero kernel costs, every job's release, first start, completion and miss under fixed
//! priority, EDF and the deferrable-server rule (the eager deferrable server and SPR with
//! that rule) must be those of a plain millisecond-by-millisecond simulation written here
//! from the textbook rules, sharing no code with the machine or the policies.
//!
//! Every parameter is whole milliseconds and costs are zero, so every release, completion,
//! budget exhaustion and replenishment falls on a millisecond boundary, and stepping one
//! millisecond at a time is exact. Overloaded sets are drawn on purpose: they exercise jobs
//! queued behind an unfinished predecessor and the end-of-run rules (lib.rs, "Ties", 6).
//! Ties the documented rules would have to break are avoided by construction: fixed
//! priorities are distinct, and task `i`'s relative deadline is its period minus `i` ns, so
//! no two tasks' absolute deadlines are ever equal.

mod common;

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant};
use bulwark_sim::Outcome;
use bulwark_spec::{PolicyKind, TaskSpec};
use common::{ms, periodic, run_jobs, scenario};
use proptest::prelude::*;

/// One task of a drawn set, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Drawn {
    period: u64,
    execution: u64,
    offset: u64,
    /// Its budget per period under the deferrable-server rule.
    budget: u64,
    /// Nanoseconds its relative deadline falls short of its period: distinct per task to
    /// rule out equal deadlines, zero to have them.
    deadline_shift: u64,
}

/// One job as the reference sees it: (release, first start, completion, missed), with times
/// in nanoseconds.
type JobRow = (u64, Option<u64>, Option<u64>, bool);

/// Which rule the reference follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Preemptive fixed priority: the most important pending task runs.
    FixedPriority,
    /// Preemptive EDF: the pending job with the earliest absolute deadline runs; among
    /// equal deadlines, the task activated first ("Ties", 4): a task is activated when it
    /// wakes, and again when its job completes with the next one already released.
    Edf,
    /// Fixed priority, each task in a deferrable server: its budget is reset to `budget` at
    /// every multiple of its period, and it runs only while it has some left.
    Deferrable,
    /// EDF over soft constant-bandwidth servers (Abeni and Buttazzo, RTSS 1998), one per
    /// task, with budget `budget` and period [`server_period_ns`]: a job arriving at an idle
    /// server at `r` gets a new server deadline `r + T` and a full budget when the budget
    /// left is at least `(d - r) Q / T`; an exhausted budget is recharged at once and the
    /// deadline postponed by `T`.
    SoftCbs,
}

/// Task `i`'s server period under CBS, in nanoseconds: its period less a distinct prime
/// number of nanoseconds (none for task 0). A server deadline is a whole number of
/// milliseconds less `n` such primes, `n` the number of periods added to it (fewer than 200
/// here), so two servers' deadlines are never equal: no tie for the rules to break.
fn server_period_ns(task: &Drawn, i: usize) -> u64 {
    const SHIFTS: [u64; 5] = [0, 211, 223, 227, 229];
    task.period * MS - SHIFTS[i]
}

const MS: u64 = 1_000_000;

/// A task's relative deadline in nanoseconds.
fn deadline_ns(task: &Drawn) -> u64 {
    task.period * MS - task.deadline_shift
}

/// The reference schedule: every job of every task, in release order per task.
fn reference(rule: Rule, tasks: &[Drawn], priorities: &[u8], horizon: u64) -> Vec<Vec<JobRow>> {
    let mut jobs: Vec<Vec<JobRow>> = vec![Vec::new(); tasks.len()];
    // Per task: the index of its oldest unfinished job and the work it still needs (ms).
    let mut head: Vec<usize> = vec![0; tasks.len()];
    let mut left: Vec<Vec<u64>> = vec![Vec::new(); tasks.len()];
    let mut budget: Vec<u64> = tasks.iter().map(|t| t.budget).collect();
    // Per CBS server: its budget left and its deadline, in nanoseconds.
    let mut server: Vec<(u64, u64)> = vec![(0, 0); tasks.len()];
    // Equal priorities (lib.rs, "Ties", 2 and 3): the tasks not suspended, in the order they
    // last woke. A task suspends when its job completes before its next release, arming its
    // release timer then (at boot, in file order); tasks released together wake in the order
    // their timers were armed. A preempted task keeps its place, and so does one whose next
    // job was released by the time its job completed: it never suspends.
    let mut woken: Vec<usize> = Vec::new();
    let mut suspended = vec![true; tasks.len()];
    let mut armed: Vec<u64> = (0..tasks.len() as u64).collect();
    let mut arming = tasks.len() as u64;
    let mut activation: Vec<u64> = vec![0; tasks.len()];
    let mut activating = 0u64;
    for now in 0..=horizon {
        let mut waking: Vec<usize> = (0..tasks.len())
            .filter(|&i| {
                let task = &tasks[i];
                suspended[i]
                    && now >= task.offset
                    && (now - task.offset).is_multiple_of(task.period)
            })
            .collect();
        waking.sort_by_key(|&i| armed[i]);
        for i in waking {
            suspended[i] = false;
            woken.push(i);
            activation[i] = activating;
            activating += 1;
        }
        for (i, task) in tasks.iter().enumerate() {
            if rule == Rule::Deferrable && now.is_multiple_of(task.period) {
                budget[i] = task.budget;
            }
            if now >= task.offset && (now - task.offset).is_multiple_of(task.period) {
                let idle = head[i] == left[i].len();
                jobs[i].push((now * MS, None, None, false));
                left[i].push(task.execution);
                let (q, d) = server[i];
                let (big_q, big_t) = (task.budget * MS, server_period_ns(task, i));
                let arrival = now * MS;
                // q >= (d - r) Q / T, cross-multiplied.
                let keeps = d > arrival
                    && (q as u128) * (big_t as u128) < ((d - arrival) as u128) * (big_q as u128);
                if rule == Rule::SoftCbs && idle && !keeps {
                    server[i] = (big_q, arrival + big_t);
                }
            }
        }
        // The task that runs in [now, now + 1 ms): among those with an unfinished job (and
        // budget, under the deferrable rule), the most important, or the earliest deadline.
        // At the horizon it is dispatched and runs no further: its job has started then
        // (lib.rs, "Ties", 6).
        let eligible = (0..tasks.len())
            .filter(|&i| head[i] < left[i].len() && (rule != Rule::Deferrable || budget[i] > 0));
        let chosen = match rule {
            Rule::FixedPriority | Rule::Deferrable => eligible.max_by_key(|&i| {
                let place = woken.iter().position(|&t| t == i).expect("not suspended");
                (priorities[i], std::cmp::Reverse(place))
            }),
            Rule::Edf => eligible
                .min_by_key(|&i| (jobs[i][head[i]].0 + deadline_ns(&tasks[i]), activation[i])),
            Rule::SoftCbs => eligible.min_by_key(|&i| server[i].1),
        };
        let Some(i) = chosen else {
            continue;
        };
        let job = &mut jobs[i][head[i]];
        job.1.get_or_insert(now * MS);
        if now == horizon {
            break;
        }
        left[i][head[i]] -= 1;
        if rule == Rule::Deferrable {
            budget[i] -= 1;
        }
        if rule == Rule::SoftCbs {
            server[i].0 -= MS;
            if server[i].0 == 0 {
                server[i] = (
                    tasks[i].budget * MS,
                    server[i].1 + server_period_ns(&tasks[i], i),
                );
            }
        }
        if left[i][head[i]] == 0 {
            job.2 = Some((now + 1) * MS);
            head[i] += 1;
            let next_release = tasks[i].offset + jobs[i].len() as u64 * tasks[i].period;
            if head[i] == left[i].len() && next_release > now + 1 {
                suspended[i] = true;
                woken.retain(|&t| t != i);
                armed[i] = arming;
                arming += 1;
            } else {
                activation[i] = activating;
                activating += 1;
            }
        }
    }
    // A job misses when it completes after its deadline, or is unfinished at the end with
    // its deadline at or before the horizon.
    for (i, task) in tasks.iter().enumerate() {
        for job in &mut jobs[i] {
            let deadline = job.0 + deadline_ns(task);
            job.3 = match job.2 {
                Some(done) => done > deadline,
                None => deadline <= horizon * MS,
            };
        }
    }
    jobs
}

/// The same set on the machine, as a scenario built from model values.
fn machine(policy: PolicyKind, tasks: &[Drawn], priorities: &[u8], horizon: u64) -> Outcome {
    let specs: Vec<TaskSpec> = tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let priority = policy.has_priorities().then_some(priorities[i]);
            let mut spec = periodic(
                &format!("t{i}"),
                0,
                priority,
                ms(task.execution),
                ms(task.period),
                ms(task.offset),
            );
            spec.deadline = Some(Duration::from_nanos(deadline_ns(task)));
            spec.reservation = match policy {
                PolicyKind::FixedPriority | PolicyKind::Edf => None,
                PolicyKind::Cbs => Some(Reservation::new(
                    ms(task.budget),
                    Duration::from_nanos(server_period_ns(task, i)),
                )),
                _ => Some(Reservation::new(ms(task.budget), ms(task.period))),
            };
            spec
        })
        .collect();
    run_jobs(&scenario(policy, 1, ms(horizon), specs))
}

/// The machine's jobs of each task, as the reference's rows.
fn rows(outcome: &Outcome, tasks: usize) -> Vec<Vec<JobRow>> {
    let mut rows = vec![Vec::new(); tasks];
    let mut jobs: Vec<_> = outcome
        .jobs
        .as_ref()
        .expect("jobs recorded")
        .iter()
        .collect();
    jobs.sort_by_key(|j| (j.task, j.job));
    for job in jobs {
        let ns = |t: Option<Instant>| t.map(Instant::as_nanos);
        rows[job.task.index()].push((
            job.release.as_nanos(),
            ns(job.first_start),
            ns(job.completion),
            job.missed,
        ));
    }
    rows
}

/// Checks the machine's jobs and its per-task counts against the reference's.
fn agree(
    policy: PolicyKind,
    rule: Rule,
    tasks: &[Drawn],
    priorities: &[u8],
    horizon: u64,
) -> Result<(), TestCaseError> {
    let expected = reference(rule, tasks, priorities, horizon);
    let outcome = machine(policy, tasks, priorities, horizon);
    let got = rows(&outcome, tasks.len());
    for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
        prop_assert_eq!(got, expected, "task {} under {:?}", i, policy);
        let metrics = &outcome.tasks[i];
        prop_assert_eq!(metrics.jobs, expected.len() as u64);
        let completed = expected.iter().filter(|j| j.2.is_some()).count() as u64;
        prop_assert_eq!(metrics.completed, completed);
        let misses = expected.iter().filter(|j| j.3).count() as u64;
        prop_assert_eq!(metrics.misses, misses, "task {} under {:?}", i, policy);
    }
    Ok(())
}

/// Up to five tasks: periods 2-12 ms, executions up to the period (so overload is common),
/// offsets up to 6 ms, budgets 1 ms to the period.
fn drawn_tasks() -> impl Strategy<Value = Vec<Drawn>> {
    let task = (2u64..=12, 1u64..=12, 0u64..=6, 1u64..=12).prop_map(
        |(period, execution, offset, budget)| Drawn {
            period,
            execution: execution.min(period),
            offset,
            budget: budget.min(period),
            deadline_shift: 0,
        },
    );
    proptest::collection::vec(task, 1..=5)
}

/// Shifts task `i`'s deadline by `i` ns, so no two tasks' absolute deadlines are equal.
fn distinct_deadlines(tasks: Vec<Drawn>) -> Vec<Drawn> {
    tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| Drawn {
            deadline_shift: i as u64,
            ..task
        })
        .collect()
}

/// A task set with distinct priorities: a random order of importance.
fn task_set() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    drawn_tasks()
        .prop_map(distinct_deadlines)
        .prop_flat_map(|tasks| {
            let priorities: Vec<u8> = (1..=tasks.len() as u8).collect();
            (Just(tasks), Just(priorities).prop_shuffle())
        })
}

/// A task set whose priorities are 1 or 2, so most sets have ties.
fn tied_task_set() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    drawn_tasks().prop_flat_map(|tasks| {
        let n = tasks.len();
        (Just(tasks), proptest::collection::vec(1u8..=2, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_priority_schedules_as_the_reference((tasks, priorities) in task_set(), horizon in 1u64..=80) {
        agree(PolicyKind::FixedPriority, Rule::FixedPriority, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn fixed_priority_breaks_ties_as_the_reference(
        (tasks, priorities) in tied_task_set(),
        horizon in 1u64..=80,
    ) {
        agree(PolicyKind::FixedPriority, Rule::FixedPriority, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn edf_schedules_as_the_reference((tasks, priorities) in task_set(), horizon in 1u64..=80) {
        agree(PolicyKind::Edf, Rule::Edf, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn edf_breaks_ties_as_the_reference(tasks in drawn_tasks(), horizon in 1u64..=80) {
        let priorities = vec![0; tasks.len()];
        agree(PolicyKind::Edf, Rule::Edf, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn deferrable_servers_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        agree(PolicyKind::DeferrableServer, Rule::Deferrable, &tasks, &priorities, horizon)?;
        agree(PolicyKind::SprDeferrable, Rule::Deferrable, &tasks, &priorities, horizon)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn soft_constant_bandwidth_servers_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        // A budget below the period: the server's period is the task's less a few ns.
        let tasks: Vec<Drawn> = tasks
            .into_iter()
            .map(|task| Drawn { budget: task.budget.min(task.period - 1), ..task })
            .collect();
        agree(PolicyKind::Cbs, Rule::SoftCbs, &tasks, &priorities, horizon)?;
    }
}

/// The reference itself, on a set worked by hand: t0 (priority high, 2 ms every 4 ms) and
/// t1 (3 ms every 6 ms). Fixed priority: t0 runs 0-2, 4-6, 8-10; t1 runs 2-4 and 6-7, so
/// completes at 7 > 6 and misses; its second job (released 6) runs 7-8 and 10-12, completing
/// at 12 > 12 - 1 ns: a miss too.
#[test]
fn the_reference_runs_a_hand_worked_set() {
    let tasks = [
        Drawn {
            period: 4,
            execution: 2,
            offset: 0,
            budget: 4,
            deadline_shift: 0,
        },
        Drawn {
            period: 6,
            execution: 3,
            offset: 0,
            budget: 6,
            deadline_shift: 1,
        },
    ];
    let jobs = reference(Rule::FixedPriority, &tasks, &[2, 1], 12);
    assert_eq!(
        jobs[1],
        [
            (0, Some(2 * MS), Some(7 * MS), true),
            (6 * MS, Some(7 * MS), Some(12 * MS), true),
            (12 * MS, None, None, false),
        ]
    );
    assert_eq!(jobs[0].len(), 4);
    assert!(jobs[0].iter().all(|j| !j.3));
}
