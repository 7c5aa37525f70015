//! Random event sequences through [`ClusterScheduler`]: FP, EDF and SPR through the
//! [`PerCore`] adapter, and the clustered reservation scheduler. No call panics, invariants
//! hold after every call, the adapter answers as the wrapped policy does call for call, and
//! the clustered scheduler answers as its direct calls do under the documented mapping, with
//! notices exactly the counters' changes.

use bulwark_core::bandwidth::vbs::{BandwidthCap, ReleaseStrategy, TreeQueue, Vbs, VbsConfig};
use bulwark_core::bandwidth::{Cbs, CbsServer};
use bulwark_core::reservation::clustered::{
    ClusterConfig, ClusterError, ClusteredScheduler, ReservationId, ReservationKind, Slot,
    Sporadic, SporadicOrder,
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

/// A decision as the direct calls give it: the selection, and the cluster's next timer.
type Decided = (Vec<Option<ReservationId>>, Instant);

/// The clustered scheduler's documented mapping, called directly, with the threads' state it
/// owns kept here: thread `t` is bound to reservation `bindings[t]`, has `jobs[t]` jobs
/// pending, and `wakes[t]` is when its next job is released by a timed sleep
/// ([`Instant::NEVER`]: none), or taken, when `carried[t]`: a job due before its predecessor
/// completed, pending in its reservation all along.
struct Direct {
    scheduler: ClusteredScheduler,
    bindings: Vec<ReservationId>,
    jobs: Vec<u32>,
    wakes: Vec<Instant>,
    carried: Vec<bool>,
}

impl Direct {
    fn new(scheduler: ClusteredScheduler, bindings: &[ReservationId]) -> Self {
        Direct {
            scheduler,
            bindings: bindings.to_vec(),
            jobs: vec![0; bindings.len()],
            wakes: vec![Instant::NEVER; bindings.len()],
            carried: vec![false; bindings.len()],
        }
    }

    /// Releases every timed job due before `now` (or at it too, for the timer at `now`), in
    /// time order, then by thread id, each at its own time, as a job of the thread's
    /// reservation.
    fn release_due(&mut self, now: Instant, inclusive: bool) -> Result<(), TestCaseError> {
        loop {
            let due = (self.wakes.iter().enumerate())
                .filter(|(_, at)| **at < now || (inclusive && **at == now))
                .map(|(i, at)| (*at, i))
                .min();
            let Some((at, i)) = due else {
                return Ok(());
            };
            self.wakes[i] = Instant::NEVER;
            if std::mem::take(&mut self.carried[i]) {
                self.jobs[i] += 1;
                continue;
            }
            let at = at.max(self.scheduler.now());
            self.scheduler
                .release(at, self.bindings[i], &mut Work::default())
                .map_err(|e| refused(e.into()))?;
            self.jobs[i] += 1;
        }
    }

    /// Will thread `t` have a pending job at `now`, counting a timed release due before
    /// then (one at `now` waits for the timer)?
    fn active_by(&self, t: TaskId, now: Instant) -> bool {
        self.jobs[t.index()] > 0 || self.wakes[t.index()] < now
    }

    /// What [`ClusterScheduler::handle`] must answer for `event` at `now`, made with direct
    /// calls; `Err` is the refusal expected, with nothing changed.
    fn event(
        &mut self,
        now: Instant,
        event: Event,
    ) -> Result<Result<(), SchedulerError>, TestCaseError> {
        let bindings = self.bindings.clone();
        let reservation = |task: TaskId| bindings[task.index()];
        let known = |task: TaskId| task.index() < bindings.len();
        if now < self.scheduler.now() {
            return Ok(Err(ClusterError::TimeWentBackwards.into()));
        }
        // The refusals, checked before anything happens.
        let refusal: Option<SchedulerError> = match event {
            Event::Sleep {
                wake: Wake::SameJob,
                ..
            }
            | Event::Reconfigure { .. }
            | Event::SetPriority { .. } => Some(SchedulerError::Unsupported),
            Event::Sleep { task, .. } | Event::Activate { task, .. } | Event::Block { task }
                if !known(task) =>
            {
                Some(ClusterError::UnknownReservation.into())
            }
            Event::Sleep { task, until, .. } => {
                let i = task.index();
                if until != Instant::NEVER && self.wakes[i] != Instant::NEVER {
                    Some(ClusterError::AlreadySleeping.into())
                } else if until == Instant::NEVER && !self.active_by(task, now) {
                    Some(ClusterError::NotActive.into())
                } else {
                    None
                }
            }
            Event::Activate {
                wake: Wake::SameJob,
                task,
            }
            | Event::Block { task } => {
                (!self.active_by(task, now)).then_some(ClusterError::NotActive.into())
            }
            Event::Activate { .. } | Event::Timer => None,
        };
        if let Some(error) = refusal {
            return Ok(Err(error));
        }
        self.release_due(now, matches!(event, Event::Timer))?;
        let work = &mut Work::default();
        let done: Result<(), SchedulerError> = match event {
            Event::Activate {
                task,
                wake: Wake::NextJob { .. },
            } => {
                self.wakes[task.index()] = Instant::NEVER;
                if std::mem::take(&mut self.carried[task.index()]) {
                    self.jobs[task.index()] += 1;
                    return Ok(Ok(()));
                }
                let released = self.scheduler.release(now, reservation(task), work);
                if released.is_ok() {
                    self.jobs[task.index()] += 1;
                }
                released.map_err(Into::into)
            }
            Event::Sleep { task, until, .. } => {
                if self.jobs[task.index()] > 0 && until < now {
                    // Due before this job completed: pending in the reservation already, the
                    // thread takes it at the timer at `now`. Time is charged.
                    let mut cores = vec![CoreDecision::default(); self.scheduler.core_count()];
                    let mut scratch = Notices::with_capacity(self.scheduler.notice_capacity());
                    self.scheduler
                        .decide(now, &mut cores, &mut scratch, work)
                        .map_err(refused)?;
                    self.carried[task.index()] = true;
                    self.jobs[task.index()] -= 1;
                } else if self.jobs[task.index()] > 0 {
                    self.scheduler
                        .complete(now, reservation(task), work)
                        .map_err(|e| refused(e.into()))?;
                    self.jobs[task.index()] -= 1;
                }
                if until != Instant::NEVER {
                    self.wakes[task.index()] = until.max(now);
                }
                Ok(())
            }
            Event::Timer => self.scheduler.advance(now, work).map_err(Into::into),
            // Readiness is not the scheduler's business (A2): time is charged, as a
            // decision's first step does.
            _ => {
                let mut cores = vec![CoreDecision::default(); self.scheduler.core_count()];
                let mut scratch = Notices::with_capacity(self.scheduler.notice_capacity());
                self.scheduler
                    .decide(now, &mut cores, &mut scratch, work)
                    .map_err(refused)?;
                Ok(())
            }
        };
        Ok(done)
    }

    /// The selection and the timer a decision at `now` must give.
    fn decide(&mut self, now: Instant) -> Result<Result<Decided, SchedulerError>, TestCaseError> {
        if now < self.scheduler.now() {
            return Ok(Err(ClusterError::TimeWentBackwards.into()));
        }
        self.release_due(now, false)?;
        // A decision charges up to `now` without closing the instant: `select` at the
        // instant already reached would close it (a pending switch to high mode would
        // happen), and the direct calls made at it have chosen already.
        let (cores, next_event) = if now == self.scheduler.now() {
            (
                self.scheduler.selection().to_vec(),
                self.scheduler.next_event(),
            )
        } else {
            let selection = self
                .scheduler
                .select(now, &mut Work::default())
                .map_err(|e| refused(e.into()))?;
            (selection.cores.to_vec(), selection.next_event)
        };
        let timer = next_event.min(self.wakes.iter().copied().min().unwrap_or(Instant::NEVER));
        Ok(Ok((cores, timer)))
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
        shared in proptest::option::of(proptest::collection::vec(0usize..8, 1..=TASKS as usize)),
    ) {
        // One thread per reservation, or threads sharing reservations (section III's
        // reservations of several tasks).
        let bindings: Vec<ReservationId> = match &shared {
            None => (0..config.reservations.len()).map(|r| ReservationId(r as u32)).collect(),
            Some(drawn) => drawn
                .iter()
                .map(|r| ReservationId((r % config.reservations.len()) as u32))
                .collect(),
        };
        let mut s = ClusteredScheduler::with_threads(&config, &bindings).unwrap();
        prop_assert_eq!(s.thread_count(), bindings.len());
        let mut direct = Direct::new(s.clone(), &bindings);
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
                    let before_refusal = format!("{s:?}");
                    let through = s.handle(now, event, &mut notices, &mut work);
                    let straight = direct.event(now, event)?;
                    prop_assert_eq!(through, straight);
                    if through.is_err() {
                        prop_assert_eq!(format!("{s:?}"), before_refusal, "a refusal changes nothing");
                    }
                }
                Call::Decide => {
                    let mut cores = vec![CoreDecision::default(); s.core_count()];
                    let through = s.decide(now, &mut cores, &mut notices, &mut work);
                    let straight = direct.decide(now)?;
                    prop_assert_eq!(through.is_ok(), straight.is_ok());
                    if let (Ok(()), Ok((selection, timer))) = (through, straight) {
                        // The selection, and the next event (budget or timed release) on core
                        // 0 only.
                        for (c, decision) in cores.iter().enumerate() {
                            prop_assert_eq!(decision.next, selection[c].map(|r| TaskId(r.0)));
                            let expected = (c == 0 && timer != Instant::NEVER).then_some(timer);
                            prop_assert_eq!(decision.timer, expected);
                        }
                    }
                }
            }
            // The two schedulers stay the same.
            let twin = &direct.scheduler;
            prop_assert_eq!(s.now(), twin.now());
            prop_assert_eq!(s.mode(), twin.mode());
            prop_assert_eq!(s.selection(), twin.selection());
            prop_assert_eq!(counters(&s), counters(twin));
            for r in 0..s.reservation_count() {
                let r = ReservationId(r as u32);
                prop_assert_eq!(s.pending_jobs(r), twin.pending_jobs(r));
                // A reservation's pending jobs are its threads', those carried over included.
                let threads: u32 = (0..bindings.len())
                    .filter(|&t| bindings[t] == r)
                    .map(|t| direct.jobs[t] + u32::from(direct.carried[t]))
                    .sum();
                prop_assert_eq!(s.pending_jobs(r), threads);
            }
            for (t, &jobs) in direct.jobs.iter().enumerate() {
                prop_assert_eq!(s.thread_is_pending(TaskId(t as u32)), jobs > 0);
                prop_assert_eq!(s.binding(TaskId(t as u32)), Some(bindings[t]));
            }
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
