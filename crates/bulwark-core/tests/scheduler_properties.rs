//! Random event sequences through [`ClusterScheduler`]: FP, EDF and SPR through the
//! [`PerCore`] adapter, and the clustered reservation scheduler. No call panics, invariants
//! hold after every call, the adapter answers as the wrapped policy does call for call, and
//! the clustered scheduler answers as its direct calls do under the documented mapping, with
//! notices exactly the counters' changes.

use bulwark_core::bandwidth::vbs::{BandwidthCap, ReleaseStrategy, TreeQueue, Vbs, VbsConfig};
use bulwark_core::bandwidth::{Cbs, CbsServer};
use bulwark_core::reservation::clustered::{
    ClusterConfig, ClusteredScheduler, ReservationId, ReservationKind, Slot, Sporadic,
    SporadicOrder,
};
use bulwark_core::reservation::{
    DeferrableServer, ReplenishmentRule, Reservation, SporadicServer, Spr,
};
use bulwark_core::{
    ClusterScheduler, CoreDecision, Duration, Edf, Event, FixedPriority, Instant, Notice, Notices,
    PerCore, Policy, Priority, SchedulerError, TaskId, Wake, Work,
};
use proptest::prelude::*;

const TASKS: u32 = 6;

/// One call of a kernel: an event, or a decision; time moves forward by `gap` first.
#[derive(Clone, Copy, Debug)]
enum Call {
    Event(Event),
    Decide,
}

fn wake() -> impl Strategy<Value = Wake> {
    prop_oneof![
        Just(Wake::SameJob),
        (0u64..400).prop_map(|d| Wake::NextJob {
            deadline: Instant::from_nanos(d)
        }),
        Just(Wake::NextJob {
            deadline: Instant::NEVER
        }),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    // Ids up to TASKS + 1 so unknown threads are exercised too.
    let task = (0..TASKS + 2).prop_map(TaskId);
    let until = prop_oneof![
        (0u64..400).prop_map(Instant::from_nanos),
        Just(Instant::NEVER)
    ];
    prop_oneof![
        3 => (task.clone(), wake()).prop_map(|(task, wake)| Event::Activate { task, wake }),
        3 => (task.clone(), until, wake())
            .prop_map(|(task, until, wake)| Event::Sleep { task, until, wake }),
        1 => task.clone().prop_map(|task| Event::Block { task }),
        2 => Just(Event::Timer),
        2 => (task.clone(), 0u8..4)
            .prop_map(|(task, priority)| Event::SetPriority { task, priority: Priority(priority) }),
        1 => (task, 1u64..50, 50u64..100).prop_map(|(task, budget, period)| {
            Event::Reconfigure {
                task,
                change: bulwark_core::ContextChange {
                    budget: Duration::from_nanos(budget),
                    period: Duration::from_nanos(period),
                    load: None,
                },
            }
        }),
    ]
}

fn calls() -> impl Strategy<Value = Vec<(u64, Call)>> {
    let call = prop_oneof![
        3 => event().prop_map(Call::Event),
        2 => Just(Call::Decide),
    ];
    proptest::collection::vec((0u64..30, call), 1..80)
}

/// Runs `calls` on `policy` directly and on a copy through the adapter, in lockstep.
fn adapter_answers_as_the_policy<P: Policy + Clone>(
    policy: P,
    calls: &[(u64, Call)],
) -> Result<(), TestCaseError> {
    let mut direct = policy.clone();
    let mut cluster = PerCore::new(policy);
    let mut notices = Notices::with_capacity(cluster.notice_capacity());
    let mut direct_notices = Notices::with_capacity(direct.notice_capacity());
    // The task the last decision chose: the only one whose budget can run out meanwhile.
    let mut ran: Option<TaskId> = None;
    let mut now = Instant::ZERO;
    for &(gap, call) in calls {
        now = now.saturating_add(Duration::from_nanos(gap));
        let mut work = Work::default();
        let mut direct_work = Work::default();
        match call {
            Call::Event(event) => {
                let through = cluster.handle(now, event, &mut notices, &mut work);
                let straight = match event {
                    Event::Activate { task, wake } => {
                        direct.activate(now, task, wake, &mut direct_work)
                    }
                    Event::Sleep { task, until, wake } => {
                        direct.sleep(now, task, until, wake, &mut direct_work)
                    }
                    Event::Block { task } => direct.block(now, task, &mut direct_work),
                    Event::Timer => {
                        direct.timer_interrupt(now, &mut direct_work);
                        Ok(())
                    }
                    Event::SetPriority { task, priority } => {
                        direct.set_priority(now, task, priority, &mut direct_work)
                    }
                    Event::Reconfigure { task, change } => {
                        direct.reconfigure(now, task, change, &mut direct_work)
                    }
                };
                prop_assert_eq!(through, straight.map_err(SchedulerError::Policy));
            }
            Call::Decide => {
                let mut decision = [CoreDecision::default()];
                cluster
                    .decide(now, &mut decision, &mut notices, &mut work)
                    .map_err(refused)?;
                let straight = direct.schedule(now, &mut direct_work);
                prop_assert_eq!(decision[0].next, straight.next);
                prop_assert_eq!(decision[0].timer, straight.timer);
                direct.take_notices(&mut direct_notices);
                prop_assert_eq!(&notices, &direct_notices);
                notices_mean_what_they_say(&direct, &notices, ran)?;
                notices.clear();
                direct_notices.clear();
                ran = straight.next;
            }
        }
        prop_assert_eq!(work, direct_work);
        // A per-core policy's notices come with the decision that follows the event.
        prop_assert!(notices.is_empty());
        cluster.check_invariants().map_err(TestCaseError::fail)?;
        direct.check_invariants().map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// An exhaustion is of the task that ran until `now`; a replenishment of a task the policy
/// reports on.
fn notices_mean_what_they_say<P: Policy>(
    policy: &P,
    notices: &Notices,
    ran: Option<TaskId>,
) -> Result<(), TestCaseError> {
    for notice in notices.iter() {
        match notice {
            Notice::BudgetExhausted { task } => {
                prop_assert_eq!(Some(task), ran, "only the running task exhausts its budget");
            }
            Notice::Replenished { task } => {
                // Of a task the policy reports on (an overrun the random calls allow may still
                // be owed, so the amount is not checked here).
                prop_assert!(task.index() < policy.notice_capacity());
            }
            other => prop_assert!(false, "a per-core policy reported {:?}", other),
        }
    }
    Ok(())
}

fn refused(error: SchedulerError) -> TestCaseError {
    TestCaseError::fail(format!("refused: {error}"))
}

fn fixed_priority(priorities: &[u8]) -> FixedPriority {
    let mut fp = FixedPriority::with_capacity(TASKS as usize);
    for (i, &p) in priorities.iter().enumerate() {
        fp.add_task(TaskId(i as u32), Priority(p)).unwrap();
    }
    fp
}

fn edf(count: usize) -> Edf {
    let mut edf = Edf::with_capacity(TASKS as usize);
    for i in 0..count {
        edf.add_task(TaskId(i as u32)).unwrap();
    }
    edf
}

fn spr(plans: &[(u8, u64, u64, u16)]) -> Spr {
    let mut spr = Spr::with_capacity(TASKS as usize, ReplenishmentRule::Sporadic);
    for (i, &(priority, budget, period, slots)) in plans.iter().enumerate() {
        let reservation = Reservation::new(
            Duration::from_nanos(budget.min(period)),
            Duration::from_nanos(period),
        )
        .with_replenishments(slots);
        spr.add_task(TaskId(i as u32), Priority(priority), reservation)
            .unwrap();
    }
    spr
}

/// A cluster of 1..=3 cores: sporadic reservations (some constant-bandwidth, SPR or of high
/// criticality), at most one partition on core 0, and a best-effort reservation.
fn cluster() -> impl Strategy<Value = ClusterConfig> {
    let sporadic =
        (1u64..40, 40u64..120, 0u8..5, 1u8..200).prop_map(|(budget, period, flavour, priority)| {
            let base = Sporadic::new(Duration::from_nanos(budget), Duration::from_nanos(period))
                .with_priority(Priority(priority));
            (flavour, base)
        });
    (
        1usize..=3,
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(sporadic, 1..5),
    )
        .prop_map(|(cores, edf, with_partition, sporadics)| {
            let order = if edf {
                SporadicOrder::EarliestDeadlineFirst
            } else {
                SporadicOrder::FixedPriority
            };
            let mut reservations: Vec<ReservationKind> = sporadics
                .into_iter()
                .map(|(flavour, s)| {
                    ReservationKind::Sporadic(match flavour {
                        1 => s.with_constant_bandwidth(),
                        2 if !edf => s.with_spr(2),
                        3 => s.with_high_criticality(Duration::from_nanos(
                            s.budget.as_nanos().div_ceil(2),
                        )),
                        _ => s,
                    })
                })
                .collect();
            if with_partition {
                reservations.push(ReservationKind::TimePartition {
                    core: 0,
                    priority: Priority(1),
                    slots: vec![Slot::new(
                        Duration::from_nanos(10),
                        Duration::from_nanos(30),
                    )],
                });
            }
            reservations.push(ReservationKind::BestEffort);
            ClusterConfig {
                cores,
                cycle: Duration::from_nanos(100),
                order,
                reservations,
            }
        })
}

/// The clustered scheduler's documented mapping, called directly.
fn direct_event(
    s: &mut ClusteredScheduler,
    now: Instant,
    event: Event,
    work: &mut Work,
) -> Result<(), SchedulerError> {
    let reservation = |task: TaskId| ReservationId(task.0);
    match event {
        Event::Activate {
            task,
            wake: Wake::NextJob { .. },
        } => Ok(s.release(now, reservation(task), work)?),
        Event::Sleep {
            task,
            until: Instant::NEVER,
            wake: Wake::NextJob { .. },
        } => Ok(s.complete(now, reservation(task), work)?),
        Event::Timer => Ok(s.advance(now, work)?),
        // The rest change nothing but the time charged, or are refused: checked by the
        // caller against the state before.
        _ => Ok(()),
    }
}

fn counters(s: &ClusteredScheduler) -> Vec<(u64, u64, u64)> {
    (0..s.reservation_count())
        .map(|i| {
            let r = ReservationId(i as u32);
            (s.exhaustions(r), s.replenishments(r), s.mode_changes(r))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_priority_through_the_adapter_answers_as_the_policy(
        priorities in proptest::collection::vec(0u8..4, 1..=TASKS as usize),
        calls in calls(),
    ) {
        adapter_answers_as_the_policy(fixed_priority(&priorities), &calls)?;
    }

    #[test]
    fn edf_through_the_adapter_answers_as_the_policy(
        count in 1..=TASKS as usize,
        calls in calls(),
    ) {
        adapter_answers_as_the_policy(edf(count), &calls)?;
    }

    #[test]
    fn spr_through_the_adapter_answers_as_the_policy(
        plans in proptest::collection::vec((0u8..4, 1u64..40, 20u64..100, 1u16..4), 1..=TASKS as usize),
        calls in calls(),
    ) {
        adapter_answers_as_the_policy(spr(&plans), &calls)?;
    }

    #[test]
    fn budget_policies_through_the_adapter_answer_as_the_policies(
        plans in proptest::collection::vec((0u8..4, 1u64..40, 20u64..100, 1u16..4), 1..=TASKS as usize),
        calls in calls(),
    ) {
        let mut deferrable = Spr::with_capacity(TASKS as usize, ReplenishmentRule::Deferrable);
        let mut soft = Cbs::with_capacity(TASKS as usize);
        let mut hard = Cbs::with_capacity(TASKS as usize);
        for (i, &(priority, budget, period, _)) in plans.iter().enumerate() {
            let (budget, period) = (Duration::from_nanos(budget.min(period)), Duration::from_nanos(period));
            let task = TaskId(i as u32);
            deferrable.add_task(task, Priority(priority), Reservation::new(budget, period)).unwrap();
            soft.add_server(task, CbsServer::new(budget, period)).unwrap();
            hard.add_server(task, CbsServer::new(budget, period).hard()).unwrap();
        }
        adapter_answers_as_the_policy(deferrable, &calls)?;
        let mut eager_deferrable = DeferrableServer::with_capacity(TASKS as usize);
        let mut eager_sporadic = SporadicServer::with_capacity(TASKS as usize);
        for (i, &(priority, budget, period, slots)) in plans.iter().enumerate() {
            let reservation = Reservation::new(
                Duration::from_nanos(budget.min(period)),
                Duration::from_nanos(period),
            )
            .with_replenishments(slots);
            let task = TaskId(i as u32);
            eager_deferrable.add_task(task, Priority(priority), reservation).unwrap();
            eager_sporadic.add_task(task, Priority(priority), reservation).unwrap();
        }
        adapter_answers_as_the_policy(eager_deferrable, &calls)?;
        adapter_answers_as_the_policy(eager_sporadic, &calls)?;
        // VBS: the random reconfigurations are its action switches.
        let config = VbsConfig::new(ReleaseStrategy::Early).with_quantum(Duration::from_nanos(1));
        let mut vbs = Vbs::<TreeQueue>::with_capacity(TASKS as usize, config).unwrap();
        for i in 0..plans.len() {
            let cap = BandwidthCap::from_ratio(1, TASKS as u64).unwrap();
            vbs.add_process(TaskId(i as u32), cap).unwrap();
        }
        adapter_answers_as_the_policy(vbs, &calls)?;
        adapter_answers_as_the_policy(soft, &calls)?;
        adapter_answers_as_the_policy(hard, &calls)?;
    }

    #[test]
    fn the_clustered_scheduler_through_the_interface_answers_as_its_calls(
        config in cluster(),
        calls in calls(),
    ) {
        let mut direct = ClusteredScheduler::new(&config).unwrap();
        let mut s = direct.clone();
        let mut notices = Notices::with_capacity(s.notice_capacity());
        let mut now = Instant::ZERO;
        for (gap, call) in calls {
            now = now.saturating_add(Duration::from_nanos(gap));
            let before = counters(&s);
            let switches_before = s.mode_switches();
            notices.clear();
            let mut work = Work::default();
            match call {
                Call::Event(event) => {
                    let through = s.handle(now, event, &mut notices, &mut work);
                    let passes_time = matches!(
                        event,
                        Event::Block { .. } | Event::Activate { wake: Wake::SameJob, .. }
                    );
                    if passes_time {
                        // No direct call: a reservation's readiness is not the scheduler's
                        // business (A2); accepted exactly for an active reservation.
                        let r = ReservationId(match event {
                            Event::Block { task } | Event::Activate { task, .. } => task.0,
                            _ => unreachable!("matched above"),
                        });
                        prop_assert_eq!(through.is_ok(), direct.is_active(r) && now >= direct.now());
                        if through.is_ok() {
                            // Charging time is what a decision does first.
                            let mut cores = vec![CoreDecision::default(); direct.core_count()];
                            let mut scratch = Notices::with_capacity(direct.notice_capacity());
                            direct
                                .decide(now, &mut cores, &mut scratch, &mut Work::default())
                                .map_err(refused)?;
                        }
                    } else {
                        let straight = direct_event(&mut direct, now, event, &mut Work::default());
                        let supported = match event {
                            Event::Sleep { until, wake, .. } => {
                                until == Instant::NEVER && matches!(wake, Wake::NextJob { .. })
                            }
                            Event::Reconfigure { .. } | Event::SetPriority { .. } => false,
                            _ => true,
                        };
                        if supported {
                            prop_assert_eq!(through, straight);
                        } else {
                            prop_assert_eq!(through, Err(SchedulerError::Unsupported));
                        }
                    }
                }
                Call::Decide => {
                    let mut cores = vec![CoreDecision::default(); s.core_count()];
                    let through = s.decide(now, &mut cores, &mut notices, &mut work);
                    let mut direct_cores = vec![CoreDecision::default(); direct.core_count()];
                    let mut scratch = Notices::with_capacity(direct.notice_capacity());
                    let straight = direct.decide(now, &mut direct_cores, &mut scratch, &mut Work::default());
                    prop_assert_eq!(through, straight);
                    if through.is_ok() {
                        // The selection, and the next event on core 0 only.
                        for (c, decision) in cores.iter().enumerate() {
                            prop_assert_eq!(decision.next, s.selection()[c].map(|r| TaskId(r.0)));
                            let timer = (c == 0 && s.next_event() != Instant::NEVER)
                                .then_some(s.next_event());
                            prop_assert_eq!(decision.timer, timer);
                        }
                    }
                }
            }
            // The two schedulers stay the same.
            prop_assert_eq!(s.now(), direct.now());
            prop_assert_eq!(s.mode(), direct.mode());
            prop_assert_eq!(s.selection(), direct.selection());
            prop_assert_eq!(counters(&s), counters(&direct));
            // Notices are exactly the counters that changed in this call.
            let after = counters(&s);
            for (i, (was, is)) in before.iter().zip(&after).enumerate() {
                let task = TaskId(i as u32);
                prop_assert_eq!(notices.contains(Notice::BudgetExhausted { task }), is.0 != was.0);
                prop_assert_eq!(notices.contains(Notice::Replenished { task }), is.1 != was.1);
                prop_assert_eq!(notices.contains(Notice::ModeChange { task }), is.2 != was.2);
            }
            prop_assert_eq!(notices.contains(Notice::ModeSwitch), s.mode_switches() != switches_before);
            ClusterScheduler::check_invariants(&s).map_err(TestCaseError::fail)?;
        }
    }
}
