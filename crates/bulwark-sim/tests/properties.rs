//! Random scenarios: the machine never fails or panics on any valid scenario, and what it
//! records obeys the policy: under fixed priority no task executes while a higher-priority task
//! of its core has a pending job; under EDF no job executes while an earlier-deadline job of its
//! core is pending. Checked on the recorded slices and jobs, with a zero-cost machine so that
//! readiness is exactly [release, completion).

mod common;

use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::{JobRecord, Options, Outcome, SliceKind};
use bulwark_spec::{
    Behaviour, CostModel, Execution, PolicyKind, Reservation, Scenario, Step, TaskSpec,
};
use proptest::prelude::*;

fn execution() -> impl Strategy<Value = Execution> {
    prop_oneof![
        (1u64..3_000).prop_map(|c| Execution::Fixed(Duration::from_micros(c))),
        (1u64..1_000, 0u64..2_000).prop_map(|(a, b)| Execution::Uniform {
            min: Duration::from_micros(a),
            max: Duration::from_micros(a + b),
        }),
    ]
}

fn step(depth: u32) -> BoxedStrategy<Step> {
    let leaf = prop_oneof![
        (0u64..800).prop_map(|d| Step::Run(Execution::Fixed(Duration::from_micros(d)))),
        // A run drawn in [min, max] from the task's stream.
        (1u64..400, 0u64..400).prop_map(|(min, extra)| Step::Run(Execution::between(
            Duration::from_micros(min),
            Duration::from_micros(min + extra)
        ))),
        (1u64..5, 1u64..300).prop_map(|(n, e)| Step::Compute {
            count: n,
            each: Duration::from_micros(e),
        }),
        (0u64..3_000).prop_map(|d| Step::SleepFor(Duration::from_micros(d))),
        (0u64..20_000).prop_map(|d| Step::SleepUntil(Instant::from_nanos(d * 1_000))),
        (1u64..4_000).prop_map(|d| Step::SleepUntilAligned(Duration::from_micros(d))),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        3 => leaf,
        1 => (proptest::option::of(1u64..4), proptest::collection::vec(step(depth - 1), 1..4))
            .prop_map(|(count, mut body)| {
                // A loop that repeats for ever must let time pass, as validation demands.
                if count.is_none() {
                    body.push(Step::Run(Execution::Fixed(Duration::from_micros(50))));
                }
                Step::Loop { count, body }
            }),
    ]
    .boxed()
}

fn behaviour() -> impl Strategy<Value = Behaviour> {
    let offset = (0u64..5_000).prop_map(Duration::from_micros);
    prop_oneof![
        (1_000u64..10_000, offset.clone(), execution()).prop_map(|(p, offset, execution)| {
            Behaviour::Periodic {
                period: Duration::from_micros(p),
                offset,
                execution,
            }
        }),
        (1_000u64..10_000, 0u64..3_000, offset.clone(), execution()).prop_map(
            |(p, j, offset, execution)| Behaviour::Sporadic {
                min_interarrival: Duration::from_micros(p),
                jitter: Duration::from_micros(j),
                offset,
                execution,
            }
        ),
        (offset, proptest::collection::vec(step(2), 1..6))
            .prop_map(|(offset, steps)| Behaviour::Script { offset, steps }),
    ]
}

fn scenario(cost: bool) -> impl Strategy<Value = Scenario> {
    let task = (0u16..2, 0u8..6, 500u64..12_000, behaviour());
    (
        any::<bool>(),
        1u16..3,
        proptest::collection::vec(task, 1..7),
        any::<u64>(),
        proptest::array::uniform6(0u64..3_000),
    )
        .prop_map(move |(edf, cores, tasks, seed, c)| Scenario {
            seed,
            cost: if cost {
                CostModel {
                    reclaim_per_unit: 0,
                    clock_hz: 500_000_000 + c[0] * 1_000_000,
                    timer_interrupt: c[1],
                    scheduler: c[2],
                    per_work_unit: c[3] / 10,
                    context_switch: c[4],
                    cache_refill: c[5],
                    cache_flush: 0,
                    ..CostModel::FREE
                }
            } else {
                CostModel::default()
            },
            ..Scenario::new(
                "random",
                if edf {
                    PolicyKind::Edf
                } else {
                    PolicyKind::FixedPriority
                },
                cores,
                Duration::from_millis(40),
                tasks
                    .into_iter()
                    .enumerate()
                    .map(|(i, (core, priority, deadline, behaviour))| TaskSpec {
                        name: format!("t{i}"),
                        core: core % cores,
                        priority: (!edf).then_some(Priority(priority)),
                        reservation: None,
                        deadline: Some(Duration::from_micros(deadline)),
                        behaviour,
                    })
                    .collect(),
            )
        })
}

fn record(s: &Scenario) -> Outcome {
    let options = Options {
        record_trace: true,
        record_jobs: true,
        ..Options::default()
    };
    bulwark_sim::run(s, &options).expect("a valid scenario runs to the end")
}

/// The jobs of `task` pending (released, not completed) at some time in `[start, end)`: their
/// pending interval `[release, completion)` meets the slice in a non-empty interval.
fn pending_during(
    jobs: &[JobRecord],
    task: TaskId,
    start: Instant,
    end: Instant,
) -> impl Iterator<Item = &JobRecord> {
    jobs.iter().filter(move |j| {
        let until = j.completion.unwrap_or(Instant::NEVER);
        j.task == task && j.release.max(start) < until.min(end)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any scenario, with any cost model, runs to the end; time is fully accounted for.
    #[test]
    fn any_scenario_runs_to_the_end(s in scenario(true)) {
        let o = record(&s);
        let trace = o.trace.as_ref().unwrap();
        for core in 0..s.cores {
            let m = &o.cores[core as usize];
            prop_assert!(m.busy_ns + m.kernel_ns <= o.until.as_nanos() + 1);
            // Slices of one core never overlap.
            let mut slices: Vec<_> = trace.slices.iter().filter(|x| x.core == core).collect();
            slices.sort_by_key(|x| x.start);
            for w in slices.windows(2) {
                prop_assert!(w[0].end <= w[1].start, "{:?} overlaps {:?}", w[0], w[1]);
            }
        }
        for t in &o.tasks {
            prop_assert!(t.completed <= t.jobs);
            prop_assert!(t.misses <= t.jobs);
        }
    }

    /// Fixed priority never executes a task while a higher-priority task of its core is pending.
    #[test]
    fn fixed_priority_never_runs_below_a_pending_higher_priority(mut s in scenario(false)) {
        s.policy = PolicyKind::FixedPriority;
        for (i, t) in s.tasks.iter_mut().enumerate() {
            t.priority = Some(Priority(i as u8 * 7 % 11));
        }
        let o = record(&s);
        let jobs = o.jobs.as_ref().unwrap();
        for x in o.trace.as_ref().unwrap().slices.iter().filter(|x| x.kind == SliceKind::Task) {
            let running = x.task.unwrap();
            let mine = s.tasks[running.index()].priority;
            for (i, other) in s.tasks.iter().enumerate() {
                if other.core != x.core || other.priority <= mine {
                    continue;
                }
                let blocking = pending_during(jobs, TaskId(i as u32), x.start, x.end).next();
                prop_assert!(blocking.is_none(), "{} ran in {:?} while {} had {:?}", s.tasks[running.index()].name, x, other.name, blocking);
            }
        }
    }

    /// EDF never executes a job while an earlier-deadline job of its core is pending.
    #[test]
    fn edf_never_runs_a_later_deadline_job(mut s in scenario(false)) {
        s.policy = PolicyKind::Edf;
        for t in &mut s.tasks {
            t.priority = None;
        }
        let o = record(&s);
        let jobs = o.jobs.as_ref().unwrap();
        for x in o.trace.as_ref().unwrap().slices.iter().filter(|x| x.kind == SliceKind::Task) {
            let running = x.task.unwrap();
            // The job executing is the task's oldest pending one.
            let current = pending_during(jobs, running, x.start, x.end).min_by_key(|j| j.job).unwrap();
            for (i, other) in s.tasks.iter().enumerate() {
                if i == running.index() || other.core != x.core {
                    continue;
                }
                let earlier = pending_during(jobs, TaskId(i as u32), x.start, x.end)
                    .find(|j| j.deadline < current.deadline);
                prop_assert!(earlier.is_none(), "{:?} of {} ran in {:?} while {:?} was pending", current, s.tasks[running.index()].name, x, earlier);
            }
        }
    }

    /// Under the deferrable server no task executes more than its budget within any period
    /// window [kp, (k+1)p): budgets are reset at multiples of p and enforced by the policy's
    /// depletion timer (zero-cost machine, so enforcement is exact).
    #[test]
    fn a_deferrable_server_never_exceeds_its_budget_per_period(
        mut s in scenario(false),
        shares in proptest::collection::vec((1u64..=100, 500u64..6_000), 7),
    ) {
        s.policy = PolicyKind::DeferrableServer;
        for (i, t) in s.tasks.iter_mut().enumerate() {
            let (percent, period_us) = shares[i];
            let period = Duration::from_micros(period_us);
            t.priority = Some(Priority(i as u8 * 7 % 11));
            t.reservation = Some(Reservation::new(
                Duration::from_nanos((period.as_nanos() * percent / 100).max(1)),
                period,
            ));
        }
        let o = record(&s);
        let trace = o.trace.as_ref().unwrap();
        for (i, t) in s.tasks.iter().enumerate() {
            let r = t.reservation.unwrap();
            let p = r.period.as_nanos();
            let mut per_window: std::collections::BTreeMap<u64, u64> = Default::default();
            for x in trace.slices.iter().filter(|x| x.task == Some(TaskId(i as u32)) && x.kind == SliceKind::Task) {
                // Split the slice at period boundaries and add each piece to its window.
                let (mut a, b) = (x.start.as_nanos(), x.end.as_nanos());
                while a < b {
                    let k = a / p;
                    let end = b.min((k + 1) * p);
                    *per_window.entry(k).or_default() += end - a;
                    a = end;
                }
            }
            for (k, used) in per_window {
                prop_assert!(used <= r.budget.as_nanos(), "{} used {used} ns in window {k} of {p} ns, budget {}", t.name, r.budget.as_nanos());
            }
        }
    }

    /// The same scenario and seed give the same outcome, byte for byte.
    #[test]
    fn runs_are_deterministic(s in scenario(true)) {
        let a = serde_json::to_string(&record(&s)).unwrap();
        let b = serde_json::to_string(&record(&s)).unwrap();
        prop_assert_eq!(a, b);
    }
}
