//! Random task sets driven through the sporadic server and SPR by an exact, overhead-free
//! kernel loop: every task alternates runs and sleeps of random lengths; the loop dispatches
//! what the policy decides and calls it back at its timer or when the running task sleeps.
//!
//! After every invocation it checks the SPR paper's guarantees:
//! - budget: under the deferrable rule no task executes more than `b` in any period
//!   `[kp, (k+1)p)`; under the sporadic rule a task that is never kept waiting executes at most
//!   `b` in any window of length `p` (see `drive` for the others); the queue never holds more
//!   than `S` entries and sums to `b`, so budget is never amplified (the policy's own check);
//! - no starvation: no task with budget that has woken is left waiting while a less important
//!   task runs, except inside that task's non-preemptive region, and the timer is programmed
//!   no later than the moment such a task becomes eligible (or its region ends);
//! - bounded work (SPR): at most one timeout processed and at most two reservations touched
//!   per invocation, and the work within `work_bound(S, levels)`, with up to 1,024 tasks;
//! - eager work (naive sporadic server): every expired timer is processed in the invocation
//!   it expired in, so the work grows with the number of expired timers.

use bulwark_core::reservation::spr::work_bound;
use bulwark_core::reservation::{ReplenishmentRule, Reservation, SporadicServer, Spr};
use bulwark_core::{Duration, Instant, Policy, Priority, TaskId, Wake, Work};
use proptest::prelude::*;

const JOB: Wake = Wake::NextJob {
    deadline: Instant::NEVER,
};

#[derive(Clone, Debug)]
struct TaskPlan {
    priority: u8,
    budget: u64,
    period: u64,
    replenishments: u16,
    eta: u64,
    /// (run, sleep) pairs, repeated.
    pattern: Vec<(u64, u64)>,
}

fn task_plan() -> impl Strategy<Value = TaskPlan> {
    (
        0u8..6,
        1u64..40,
        0u64..80,
        1u16..6,
        0u64..12,
        proptest::collection::vec((1u64..30, 1u64..60), 1..4),
    )
        .prop_map(|(priority, budget, extra, s, eta, pattern)| TaskPlan {
            priority,
            budget,
            period: budget + extra,
            replenishments: s,
            eta,
            pattern,
        })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Spr(ReplenishmentRule),
    Sporadic,
}

/// What the driver knows about a task: what it is doing, not what the policy thinks.
struct Run {
    step: usize,
    left: u64,
    /// When its current sleep ends (0 when it is awake).
    wake: u64,
    slices: Vec<(u64, u64)>,
}

/// The policy's view of the budget a task could use from `t`.
trait Budgets: Policy {
    fn left(&self, task: TaskId, t: Instant) -> Duration;
    /// The times at which a suspended or depleted task's budget can grow.
    fn budget_times(&self, task: TaskId, now: u64, period: u64) -> Vec<u64>;
}

impl Budgets for Spr {
    fn left(&self, task: TaskId, t: Instant) -> Duration {
        self.remaining(task, t).unwrap()
    }
    fn budget_times(&self, task: TaskId, now: u64, period: u64) -> Vec<u64> {
        match self.replenishments(task) {
            Some(q) => q.iter().map(|r| r.at.as_nanos()).collect(),
            None => vec![(now / period + 1) * period],
        }
    }
}

impl Budgets for SporadicServer {
    fn left(&self, task: TaskId, t: Instant) -> Duration {
        self.remaining(task, t).unwrap()
    }
    fn budget_times(&self, task: TaskId, _: u64, _: u64) -> Vec<u64> {
        self.replenishments(task)
            .unwrap()
            .iter()
            .map(|r| r.at.as_nanos())
            .collect()
    }
}

fn drive<P: Budgets>(
    mut policy: P,
    kind: Kind,
    plans: &[TaskPlan],
    horizon: u64,
) -> Result<(), TestCaseError> {
    let n = plans.len();
    let levels = {
        let mut p: Vec<u8> = plans.iter().map(|t| t.priority).collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    };
    let max_s = plans.iter().map(|t| t.replenishments).max().unwrap_or(1) as usize;
    let mut runs: Vec<Run> = plans
        .iter()
        .map(|t| Run {
            step: 0,
            left: t.pattern[0].0,
            wake: 0,
            slices: Vec::new(),
        })
        .collect();
    let mut now = 0u64;
    let mut work = Work::default();
    for t in 0..n {
        policy
            .activate(Instant::ZERO, TaskId(t as u32), JOB, &mut work)
            .unwrap();
    }
    // The boot activations are not an invocation's work.
    work = Work::default();
    let mut previous: Option<usize> = None;
    let mut started = 0u64;
    while now < horizon {
        let decision = policy.schedule(Instant::from_nanos(now), &mut work);
        policy
            .check_invariants()
            .map_err(|e| TestCaseError::fail(format!("at {now}: {e}")))?;
        let nat = Instant::from_nanos(now);

        if let Kind::Spr(_) = kind {
            prop_assert!(work.timeouts_processed <= 1, "at {now}: {work:?}");
            prop_assert!(work.reservations_touched <= 2, "at {now}: {work:?}");
            prop_assert!(
                work.units() <= work_bound(max_s, levels),
                "at {now}: {} units > bound {}",
                work.units(),
                work_bound(max_s, levels)
            );
        } else {
            // Eager: nothing that has expired is left for later.
            prop_assert!(decision.timer.is_none_or(|t| t > nat), "at {now}");
            let woken = runs.iter().filter(|r| r.wake != 0 && r.wake <= now).count();
            prop_assert!(work.timeouts_processed as usize >= woken.min(1));
        }
        for r in runs.iter_mut() {
            if r.wake != 0 && r.wake <= now {
                r.wake = 0;
            }
        }
        let next = decision.next.map(|t| t.index());
        if next != previous && next.is_some() {
            started = now;
        }
        // No starvation: a more important task that is awake and has budget waits only
        // inside the chosen task's non-preemptive region, and the timer comes no later than
        // the moment one becomes eligible.
        let floor = next.map(|t| plans[t].priority);
        let region_end = next.map_or(0, |t| started + plans[t].eta);
        for y in 0..n {
            if floor.is_some_and(|f| plans[y].priority <= f) || Some(y) == next {
                continue;
            }
            let task = TaskId(y as u32);
            let from = now.max(runs[y].wake);
            let mut candidates = vec![from];
            candidates.extend(
                policy
                    .budget_times(task, from, plans[y].period)
                    .into_iter()
                    .filter(|&t| t > from),
            );
            candidates.sort_unstable();
            let eligible_at = candidates
                .into_iter()
                .find(|&t| !policy.left(task, Instant::from_nanos(t)).is_zero());
            let Some(e) = eligible_at else { continue };
            let allowed = e.max(region_end);
            if e <= now {
                prop_assert!(
                    now < region_end,
                    "at {now}: task {y} (priority {}) is eligible but {next:?} runs",
                    plans[y].priority
                );
            }
            prop_assert!(
                decision.timer.is_some_and(|t| t.as_nanos() <= allowed),
                "at {now}: timer {:?} misses task {y} eligible at {e}",
                decision.timer
            );
        }
        previous = next;
        work = Work::default();
        let timer = decision.timer.map(|t| t.as_nanos());
        let Some(r) = next else {
            prop_assert!(timer.is_some(), "idle with no timer at {now}");
            now = timer.unwrap_or(horizon).max(now);
            policy.timer_interrupt(Instant::from_nanos(now), &mut work);
            continue;
        };
        let done = now + runs[r].left;
        let until = timer.map_or(done, |t| t.min(done)).max(now);
        if until > now {
            runs[r].slices.push((now, until));
        }
        runs[r].left -= until - now;
        now = until;
        if runs[r].left == 0 {
            let plan = &plans[r];
            let (_, sleep) = plan.pattern[runs[r].step % plan.pattern.len()];
            runs[r].step += 1;
            runs[r].left = plan.pattern[runs[r].step % plan.pattern.len()].0;
            runs[r].wake = now + sleep;
            policy
                .sleep(
                    Instant::from_nanos(now),
                    TaskId(r as u32),
                    Instant::from_nanos(now + sleep),
                    JOB,
                    &mut work,
                )
                .unwrap();
        } else {
            policy.timer_interrupt(Instant::from_nanos(now), &mut work);
        }
    }
    let top = plans.iter().map(|t| t.priority).max();
    for (t, run) in runs.iter().enumerate() {
        let (b, p) = (plans[t].budget, plans[t].period);
        let deferrable = kind == Kind::Spr(ReplenishmentRule::Deferrable);
        // A sporadic server's budget is anchored at the activation that made it available,
        // not at the moment the task got the processor (Algorithm 3, line 5; Sprunt et al.).
        // A task kept waiting with budget by more important work plans its replenishments
        // from that early anchor, so once it runs they may already be due: it can run more
        // than b in a window of p, the server's backlog, which Eq. 1 accounts to the work
        // that delayed it, not to lower-priority tasks. A task never kept waiting (the only
        // one of the top priority, with no non-preemptive regions below it) runs at most b
        // in any window of p; under the deferrable rule every task runs at most b per period.
        let never_waits = Some(plans[t].priority) == top
            && plans.iter().filter(|o| Some(o.priority) == top).count() == 1
            && plans.iter().all(|o| o.eta == 0);
        if !(deferrable || never_waits) {
            continue;
        }
        check_budget(&run.slices, b, p, deferrable)
            .map_err(|e| TestCaseError::fail(format!("task {t}: {e}")))?;
    }
    Ok(())
}

/// Fails if a task executes more than `limit` in a window of length `p` (sliding, starting at
/// each slice start, where the maximum is reached), or in an aligned period for the
/// deferrable rule, whose budget is reset at multiples of `p`.
fn check_budget(slices: &[(u64, u64)], limit: u64, p: u64, aligned: bool) -> Result<(), String> {
    for &(s, _) in slices {
        let from = if aligned { s - s % p } else { s };
        let to = from + p;
        let used: u64 = slices
            .iter()
            .map(|&(a, z)| z.min(to).saturating_sub(a.max(from)))
            .sum();
        if used > limit {
            return Err(format!("ran {used} > {limit} in [{from}, {to})"));
        }
    }
    Ok(())
}

fn build_spr(rule: ReplenishmentRule, plans: &[TaskPlan]) -> Spr {
    let mut spr = Spr::with_capacity(plans.len(), rule);
    for (i, t) in plans.iter().enumerate() {
        let r = Reservation::new(
            Duration::from_nanos(t.budget),
            Duration::from_nanos(t.period),
        )
        .with_replenishments(t.replenishments)
        .with_non_preemptive(Duration::from_nanos(t.eta));
        spr.add_task(TaskId(i as u32), Priority(t.priority), r)
            .unwrap();
    }
    spr
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn spr_sporadic_rule_keeps_every_guarantee(plans in proptest::collection::vec(task_plan(), 1..8)) {
        drive(build_spr(ReplenishmentRule::Sporadic, &plans), Kind::Spr(ReplenishmentRule::Sporadic), &plans, 3_000)?;
    }

    #[test]
    fn spr_deferrable_rule_keeps_every_guarantee(plans in proptest::collection::vec(task_plan(), 1..8)) {
        drive(build_spr(ReplenishmentRule::Deferrable, &plans), Kind::Spr(ReplenishmentRule::Deferrable), &plans, 3_000)?;
    }

    #[test]
    fn naive_sporadic_server_keeps_budgets_and_processes_every_expired_timer(
        plans in proptest::collection::vec(task_plan(), 1..8)
    ) {
        let plans: Vec<TaskPlan> = plans.into_iter().map(|t| TaskPlan { eta: 0, ..t }).collect();
        let mut ss = SporadicServer::with_capacity(plans.len());
        for (i, t) in plans.iter().enumerate() {
            let r = Reservation::new(Duration::from_nanos(t.budget), Duration::from_nanos(t.period))
                .with_replenishments(t.replenishments);
            ss.add_task(TaskId(i as u32), Priority(t.priority), r).unwrap();
        }
        drive(ss, Kind::Sporadic, &plans, 3_000)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Hundreds of tasks of few priorities: SPR's per-invocation work stays bounded by S and
    /// the number of levels, whatever the number of tasks.
    #[test]
    fn spr_work_is_bounded_with_up_to_1024_tasks(
        n in prop_oneof![Just(64usize), Just(256), Just(1024)],
        template in proptest::collection::vec(task_plan(), 4),
    ) {
        let plans: Vec<TaskPlan> = (0..n)
            .map(|i| {
                let t = &template[i % template.len()];
                TaskPlan { period: t.period + 1000, ..t.clone() }
            })
            .collect();
        drive(build_spr(ReplenishmentRule::Sporadic, &plans), Kind::Spr(ReplenishmentRule::Sporadic), &plans, 4_000)?;
    }
}
