//! The simulator behind `simulate = true` in a sweep file: each set runs on Bulwark's machine
//! (bulwark-sim) on one core with zero kernel costs, every task released at 0 and then
//! periodically, every job executing exactly its WCET, under the scheduler a test speaks for.
//! `spr-eq1` runs under SPR, each task in its server, with the file's `[cost]` (zero
//! without one): the budgets it admitted must carry each job and what the kernel costs it.
//!
//! The horizon is the hyperperiod, capped at [`HORIZON_PERIODS`] times the longest period, and
//! never shorter than the longest deadline. For fixed priorities and constrained deadlines
//! the synchronous release is the critical instant (Liu and Layland 1973), so the first job
//! of each task, inside the horizon, already shows any miss. For EDF a miss shows within the
//! first synchronous busy period, which is at most the hyperperiod; when the cap cuts the
//! hyperperiod short, a miss past the cap goes unseen, so the counts are lower bounds. Under
//! SPR with kernel costs no critical-instant argument is made: the run to the horizon is a
//! check of the budgets, not a proof.

use bulwark_analysis::classic::Task;
use bulwark_analysis::sweep::run::Simulator;
use bulwark_analysis::sweep::verdict::Schedule;
use bulwark_core::{Duration, Priority};
use bulwark_sim::Options;
use bulwark_spec::{Behaviour, CostModel, Execution, PolicyKind, Scenario, TaskSpec};

/// The simulation stops after at most this many longest periods, even when the hyperperiod
/// is longer (log-uniform periods make hyperperiods of years).
pub const HORIZON_PERIODS: u64 = 100;

/// One simulated core of Bulwark's machine: zero kernel costs, except the `[cost]` of an SPR
/// schedule.
pub struct SimulatedCore;

impl Simulator for SimulatedCore {
    fn misses(&self, tasks: &[Task], schedule: &Schedule) -> bool {
        let scenario = scenario(tasks, schedule);
        let options = Options {
            until: Some(scenario.duration),
            ..Options::default()
        };
        match bulwark_sim::run(&scenario, &options) {
            Ok(outcome) => outcome.tasks.iter().any(|t| t.misses > 0),
            // The scenario is built valid, so a run that stops early is a fault; counting it
            // as a miss makes it show (the sweep then exits 1) instead of passing unseen.
            Err(_) => true,
        }
    }
}

/// The simulated time: `min(hyperperiod, HORIZON_PERIODS * longest period)`, at least the
/// longest deadline, in nanoseconds. The least common multiple is built one period at a time
/// in 128 bits and stops growing once past the cap, so it cannot overflow.
pub fn horizon(tasks: &[Task]) -> u64 {
    let longest_period = tasks.iter().map(|t| t.period).max().unwrap_or(0);
    let longest_deadline = tasks.iter().map(|t| t.deadline).max().unwrap_or(0);
    let cap = longest_period.saturating_mul(HORIZON_PERIODS);
    let mut hyperperiod: u128 = 1;
    for task in tasks {
        let period = u128::from(task.period.max(1));
        // Both factors are below 2^64, so the product fits in 128 bits.
        hyperperiod = hyperperiod / gcd(hyperperiod, period) * period;
        if hyperperiod > u128::from(cap) {
            break;
        }
    }
    let capped = u64::try_from(hyperperiod.min(u128::from(cap))).unwrap_or(cap);
    capped.max(longest_deadline)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// One core, each task periodic from 0 with a fixed execution time of its WCET. Under fixed
/// priorities the `k`-th task of the order (from 0) gets priority `n - k`: every task its own
/// level (the sweep file allows at most 254 tasks when simulating). Under SPR each task gets
/// its server's priority and reservation, and the machine the schedule's costs.
fn scenario(tasks: &[Task], schedule: &Schedule) -> Scenario {
    let n = tasks.len();
    let mut priorities = vec![None; n];
    let mut reservations = vec![None; n];
    let mut cost = CostModel::default();
    let policy = match schedule {
        Schedule::Edf => PolicyKind::Edf,
        Schedule::Spr {
            servers,
            cost: costs,
        } => {
            for ((priority, reservation), server) in
                priorities.iter_mut().zip(&mut reservations).zip(servers)
            {
                *priority = Some(server.priority);
                *reservation = Some(server.reservation);
            }
            cost = *costs;
            PolicyKind::Spr
        }
        Schedule::FixedPriority(order) => {
            for (rank, &index) in order.iter().enumerate() {
                if let Some(slot) = priorities.get_mut(index) {
                    let level = u8::try_from(n - rank).unwrap_or(u8::MAX - 1);
                    *slot = Some(Priority(level));
                }
            }
            PolicyKind::FixedPriority
        }
    };
    let specs = tasks
        .iter()
        .zip(priorities.into_iter().zip(reservations))
        .map(|(task, (priority, reservation))| TaskSpec {
            name: task.name.clone(),
            core: 0,
            priority,
            reservation,
            deadline: Some(Duration::from_nanos(task.deadline)),
            behaviour: Behaviour::Periodic {
                period: Duration::from_nanos(task.period),
                offset: Duration::ZERO,
                execution: Execution::Fixed(Duration::from_nanos(task.wcet)),
            },
        })
        .collect();
    let duration = Duration::from_nanos(horizon(tasks));
    Scenario {
        cost,
        ..Scenario::new("sweep-set", policy, 1, duration, specs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_analysis::sweep::run::admitted_but_missed;
    use bulwark_analysis::sweep::verdict::Overheads;

    /// Periods 4, 6, 10: hyperperiod lcm = 60 (below the cap 100 * 10).
    #[test]
    fn the_horizon_is_the_hyperperiod_below_the_cap() {
        let tasks = [
            Task::new("a", 1, 4),
            Task::new("b", 1, 6),
            Task::new("c", 1, 10),
        ];
        assert_eq!(horizon(&tasks), 60);
    }

    /// Coprime periods near 2^63: the hyperperiod would overflow 64 bits (and 128 after a few
    /// more tasks); the horizon is the cap, 100 longest periods, saturated at u64::MAX.
    #[test]
    fn huge_hyperperiods_are_capped_without_overflow() {
        let big = [
            Task::new("a", 1, (1 << 62) + 1),
            Task::new("b", 1, (1 << 62) + 3),
            Task::new("c", 1, (1 << 62) + 7),
        ];
        assert_eq!(horizon(&big), u64::MAX);
        // 7 ms and 11 ms: lcm 77 ms is below 100 * 11 ms.
        let ms = 1_000_000;
        assert_eq!(
            horizon(&[Task::new("a", 1, 7 * ms), Task::new("b", 1, 11 * ms)]),
            77 * ms
        );
        // 997 and 1009 (primes): lcm 1,005,973 is above 100 * 1009 = 100,900.
        assert_eq!(
            horizon(&[Task::new("a", 1, 997), Task::new("b", 1, 1009)]),
            100_900
        );
    }

    /// The textbook pair (2, 5), (4, 7), U = 0.971: rate monotonic misses at 7 (t2 gets only
    /// 3 of the first 7 units: t1 runs 0-2 and 5-7), EDF meets every deadline (U <= 1).
    #[test]
    fn the_machine_sees_the_rate_monotonic_miss_and_not_the_edf_one() {
        let tasks = [Task::new("t1", 2, 5), Task::new("t2", 4, 7)];
        let machine = SimulatedCore;
        assert!(machine.misses(&tasks, &Schedule::FixedPriority(vec![0, 1])));
        assert!(!machine.misses(&tasks, &Schedule::Edf));
    }

    /// A deliberately wrong test that admits everything, on sets at U = 1.2: an overloaded
    /// processor misses under any scheduler, so every admitted set is counted, for the
    /// fixed-priority and the EDF test alike; the sound verdicts (refusals) count nothing.
    #[test]
    fn a_test_that_admits_overloaded_sets_is_counted() {
        let tests = ["fp-rta-rm".to_owned(), "edf-qpa".to_owned()];
        let machine = SimulatedCore;
        let none = Overheads::default();
        // U = 0.6 + 0.6 = 1.2 with periods 10 and 15 (hyperperiod 30).
        let tasks = [Task::new("t1", 6, 10), Task::new("t2", 9, 15)];
        assert_eq!(
            admitted_but_missed(&tests, &[true, true], &tasks, &none, &machine),
            [true, true]
        );
        assert_eq!(
            admitted_but_missed(&tests, &[false, false], &tasks, &none, &machine),
            [false, false]
        );
        // A schedulable set (U = 0.5, RM-schedulable by Liu and Layland's bound) admitted:
        // nothing to count.
        let fine = [Task::new("t1", 2, 10), Task::new("t2", 4, 15)];
        assert_eq!(
            admitted_but_missed(&tests, &[true, true], &fine, &none, &machine),
            [false, false]
        );
    }
}
