//! Clusters of cores on the scenario machine: cores scheduled together by the MC-IPC paper's
//! clustered reservation scheduler (section III), each member task in a sporadic reservation
//! of its own.
//!
//! Every core of a cluster enters its own kernel as any core does, and hands its event to
//! the one scheduler of its cluster, whose decision names a reservation for every core. The
//! kernel resolves a reservation to the one thread bound to it. A decision that changes what
//! another core of the cluster should run sends that core an inter-processor interrupt (taken
//! and charged as a timer interrupt; it then decides for itself at the same instant). The
//! cluster's one timer (its next budget event or timed release) is programmed on its first
//! core, by whichever core decided last, unless an interrupt is already pending there, whose
//! entry programs it.
//!
//! A thread the decision moves to another core may still be running on the core it had, if
//! that core has not taken its interrupt yet: the deciding core takes it off that core first
//! (charged up to `now`, counted as preempted, so it refills its cache where it resumes).

use bulwark_core::reservation::clustered::{
    ClusterConfig, ClusteredScheduler, ReservationKind, Slot, Sporadic,
};
use bulwark_core::{
    ClusterScheduler, CoreDecision, Duration, Event, Instant, Notices, SchedulerError, TaskId,
    Wake, Work,
};
use bulwark_spec::{ClusterSpec, MemberKind, Scenario};

use super::{Machine, Occupant};
use crate::SimError;

/// Where a core of a cluster sits in it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Membership {
    /// The cluster, an index into the machine's clusters.
    pub(super) cluster: u16,
    /// The core's position in the cluster (its core `0` holds the cluster's timer).
    pub(super) position: u16,
}

/// The own scheduler of a core of a cluster: never asked (its cluster's scheduler decides
/// for it), and idle if it were. It keeps the per-core path free of a test on every call:
/// a run with clusters always enters the kernel with its extras, which ask the cluster.
pub(super) fn idle_scheduler() -> crate::core_scheduler::CoreScheduler {
    crate::core_scheduler::CoreScheduler::new(Box::new(bulwark_core::FixedPriority::with_capacity(
        0,
    )))
}

/// One cluster's scheduler and what the kernel keeps beside it.
pub(super) struct ClusterRun {
    scheduler: ClusteredScheduler,
    /// The notices of the call under way: no kernel object acts on them in a cluster (no
    /// server is invoked from one), so each call's are cleared.
    notices: Notices,
    /// The last decision, one entry per core of the cluster.
    decisions: Vec<CoreDecision>,
    /// The scenario's cores, by position in the cluster.
    cores: Vec<u16>,
    /// Per reservation: its one thread.
    threads: Vec<TaskId>,
    /// Per task of the scenario: its reservation's id here (`u32::MAX`: not a member).
    reservations: Vec<u32>,
}

impl ClusterRun {
    /// The scheduler of `spec`, with one reservation per member task.
    pub(super) fn build(scenario: &Scenario, spec: &ClusterSpec) -> Result<Self, SimError> {
        let mut reservations = vec![u32::MAX; scenario.tasks.len()];
        let mut kinds = Vec::with_capacity(spec.members.len());
        let mut threads = Vec::with_capacity(spec.members.len());
        for (id, member) in spec.members.iter().enumerate() {
            let task_spec = &scenario.tasks[member.task];
            let priority = task_spec.priority.unwrap_or_default();
            kinds.push(match &member.kind {
                MemberKind::Sporadic {
                    replenishment,
                    low_budget,
                } => {
                    // Validation gives every sporadic member a reservation (and a priority
                    // under fixed priority); a hand-built scenario without one is refused by
                    // the scheduler.
                    let (budget, period) = task_spec
                        .reservation
                        .map_or((Duration::ZERO, Duration::ZERO), |r| (r.budget, r.period));
                    let mut sporadic = Sporadic::new(budget, period).with_priority(priority);
                    sporadic.replenishment = *replenishment;
                    if let Some(low_budget) = low_budget {
                        sporadic = sporadic.with_high_criticality(*low_budget);
                    }
                    ReservationKind::Sporadic(sporadic)
                }
                MemberKind::Partition { core, slots } => ReservationKind::TimePartition {
                    // A core outside the cluster is refused by the scheduler.
                    core: spec
                        .cores
                        .iter()
                        .position(|c| c == core)
                        .unwrap_or(spec.cores.len()),
                    priority,
                    slots: slots
                        .iter()
                        .map(|&(start, end)| Slot::new(start, end))
                        .collect(),
                },
            });
            threads.push(TaskId(member.task as u32));
            reservations[member.task] = id as u32;
        }
        let config = ClusterConfig {
            cores: spec.cores.len(),
            cycle: spec.cycle,
            order: spec.order,
            reservations: kinds,
        };
        let scheduler = ClusteredScheduler::new(&config).map_err(|error| SimError::Cluster {
            cluster: spec.name.clone(),
            task: error
                .reservation
                .and_then(|r| threads.get(r.index()))
                .map(|t| scenario.tasks[t.index()].name.clone()),
            error: error.error,
        })?;
        let notices = Notices::with_capacity(scheduler.notice_capacity());
        Ok(ClusterRun {
            decisions: vec![CoreDecision::default(); spec.cores.len()],
            cores: spec.cores.clone(),
            scheduler,
            notices,
            threads,
            reservations,
        })
    }

    /// `event` with its thread named as the scheduler knows it (its reservation). A thread
    /// that blocks for good (its script ended) ends its job: the clustered scheduler counts a
    /// reservation's jobs, not its threads' states.
    fn local(&self, event: Event) -> Event {
        let reservation = |task: TaskId| TaskId(self.reservations[task.index()]);
        match event {
            Event::Activate { task, wake } => Event::Activate {
                task: reservation(task),
                wake,
            },
            Event::Sleep { task, until, wake } => Event::Sleep {
                task: reservation(task),
                until,
                wake,
            },
            Event::Block { task } => Event::Sleep {
                task: reservation(task),
                until: Instant::NEVER,
                wake: Wake::NextJob {
                    deadline: Instant::NEVER,
                },
            },
            Event::SetPriority { task, priority } => Event::SetPriority {
                task: reservation(task),
                priority,
            },
            Event::Reconfigure { task, change } => Event::Reconfigure {
                task: reservation(task),
                change,
            },
            Event::Timer => Event::Timer,
        }
    }

    /// Reports `event` at `now`; a refusal changes nothing.
    pub(super) fn handle(
        &mut self,
        now: Instant,
        event: Event,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        let event = self.local(event);
        let handled = self.scheduler.handle(now, event, &mut self.notices, work);
        self.notices.clear();
        handled
    }

    /// The thread that runs `reservation`, if any.
    fn thread(&self, decision: &CoreDecision) -> Option<TaskId> {
        decision.next.map(|r| self.threads[r.index()])
    }

    /// The budget left in `task`'s reservation.
    pub(super) fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        let reservation = *self.reservations.get(task.index())?;
        self.scheduler.remaining_budget(TaskId(reservation), now)
    }

    /// Checks the scheduler's invariants.
    pub(super) fn check_invariants(&self) -> Result<(), &'static str> {
        ClusterScheduler::check_invariants(&self.scheduler)
    }
}

impl Machine<'_> {
    /// The thread core `core` runs, or will run when its kernel returns.
    fn heading(&self, core: u16) -> Option<TaskId> {
        match self.cores[core as usize].occupant {
            Occupant::Idle => None,
            Occupant::Kernel { next, .. } => next,
            Occupant::Running { task, .. } | Occupant::Dispatching { task } => Some(task),
        }
    }

    /// Core `core`, a `member` of a cluster, asks its cluster's scheduler for a decision at
    /// `now`: returns its own part, and interrupts the cluster's other
    /// cores whose part changed (see the module documentation).
    #[inline(never)]
    pub(super) fn decide_in_cluster(
        &mut self,
        core: u16,
        member: Membership,
        now: Instant,
        work: &mut Work,
    ) -> Result<CoreDecision, SchedulerError> {
        let Membership { cluster, position } = member;
        if self.queue.timer_due(core, now) {
            // An interrupt due now (another core's, or the cluster's timer) is served by
            // this entry's decision.
            self.queue.cancel_timer(core);
            self.cores[core as usize].timer = None;
        }
        let run = &mut self.clusters[cluster as usize];
        run.scheduler
            .decide(now, &mut run.decisions, &mut run.notices, work)?;
        run.notices.clear();
        let own = run.thread(&run.decisions[position as usize]);
        let timer = run.decisions.first().and_then(|d| d.timer);
        let first = run.cores[0];
        let decision = CoreDecision {
            next: own,
            timer: if position == 0 { timer } else { None },
        };
        if let Some(task) = own {
            self.take_off_other_cores(cluster, core, task, now);
        }
        if self.booting {
            // Every core decides at boot: none needs telling.
            return Ok(decision);
        }
        if position != 0 {
            self.program_cluster_timer(first, timer, now);
        }
        // By position, without a copy of the decision: the kernel allocates nothing here.
        for at in 0..self.clusters[cluster as usize].cores.len() {
            let run = &self.clusters[cluster as usize];
            let (other, thread) = (run.cores[at], run.thread(&run.decisions[at]));
            if other != core && self.heading(other) != thread {
                self.interrupt(other, now);
            }
        }
        Ok(decision)
    }

    /// `task` is to run on `core`: if another core of `cluster` still runs it (or is about
    /// to), it is taken off there, charged up to `now` and counted as preempted, and that core is
    /// interrupted to decide anew.
    fn take_off_other_cores(&mut self, cluster: u16, core: u16, task: TaskId, now: Instant) {
        for at in 0..self.clusters[cluster as usize].cores.len() {
            let other = self.clusters[cluster as usize].cores[at];
            if other == core || self.heading(other) != Some(task) {
                continue;
            }
            match self.cores[other as usize].occupant {
                Occupant::Running { since, .. } => {
                    self.charge(other, task, since, now);
                    self.queue.cancel_processor(other);
                    self.cores[other as usize].occupant = Occupant::Idle;
                    let t = &mut self.tasks[task.index()];
                    t.needs_refill = true;
                    t.metrics.preemptions += 1;
                }
                Occupant::Kernel { entered, .. } => {
                    self.cores[other as usize].occupant = Occupant::Kernel {
                        next: None,
                        entered,
                    };
                }
                Occupant::Dispatching { .. } | Occupant::Idle => {
                    self.cores[other as usize].occupant = Occupant::Idle;
                }
            }
            self.interrupt(other, now);
        }
    }

    /// Programs the cluster's timer, held on its first core `first`, to `timer`, unless an
    /// interrupt is pending there at `now` (that core's entry programs it).
    fn program_cluster_timer(&mut self, first: u16, timer: Option<Instant>, now: Instant) {
        if self.queue.timer_due(first, now) || self.cores[first as usize].timer == timer {
            return;
        }
        self.cores[first as usize].timer = timer;
        match timer {
            Some(at) => self
                .queue
                .set(at.max(now), super::EventKind::Timer { core: first }),
            None => self.queue.cancel_timer(first),
        }
    }
}

/// A core's calls to its scheduler: its own, or its cluster's. `CLUSTERS` is false only on
/// the kernel entry without extras, which a run with clusters never takes, so the per-core
/// path does not test for a cluster.
impl Machine<'_> {
    /// Reports `event` at `now` to `core`'s scheduler; a refusal changes nothing.
    #[inline(always)]
    pub(super) fn scheduler_handle<const CLUSTERS: bool>(
        &mut self,
        core: u16,
        now: Instant,
        event: Event,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        let c = &mut self.cores[core as usize];
        if CLUSTERS {
            if let Some(member) = c.membership {
                return self.clusters[member.cluster as usize].handle(now, event, work);
            }
        }
        c.scheduler.handle(now, event, work)
    }

    /// The thread `core` runs from `now` and when its timer fires.
    #[inline(always)]
    pub(super) fn scheduler_decide<const CLUSTERS: bool>(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<CoreDecision, SchedulerError> {
        let c = &mut self.cores[core as usize];
        if CLUSTERS {
            if let Some(member) = c.membership {
                return self.decide_in_cluster(core, member, now, work);
            }
        }
        c.scheduler.decide(now, work)
    }

    /// True when `core`'s scheduler reported notices not taken yet (a cluster's are
    /// cleared at each call: nothing in a cluster acts on them).
    pub(super) fn scheduler_has_notices(&self, core: u16) -> bool {
        let c = &self.cores[core as usize];
        c.membership.is_none() && c.scheduler.has_notices()
    }

    /// The budget left in `task`'s context, as `core`'s scheduler keeps it.
    pub(super) fn remaining_budget(
        &self,
        core: u16,
        task: TaskId,
        now: Instant,
    ) -> Option<Duration> {
        let c = &self.cores[core as usize];
        match c.membership {
            Some(member) => self.clusters[member.cluster as usize].remaining_budget(task, now),
            None => c.scheduler.remaining_budget(task, now),
        }
    }

    /// Checks `core`'s scheduler's invariants.
    pub(super) fn scheduler_invariants(&self, core: u16) -> Result<(), &'static str> {
        let c = &self.cores[core as usize];
        match c.membership {
            Some(member) => self.clusters[member.cluster as usize].check_invariants(),
            None => c.scheduler.check_invariants(),
        }
    }
}
