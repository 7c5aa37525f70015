//! Clusters of cores on the scenario machine: cores scheduled together by the MC-IPC paper's
//! clustered reservation scheduler (section III), each member task a thread bound to a
//! reservation of its own or to one it shares with earlier members.
//!
//! Every core of a cluster enters its own kernel as any core does, and hands its event to
//! the one scheduler of its cluster, whose decision names a reservation for every core. The
//! kernel resolves a reservation to the first of its threads (in task order) with a job
//! pending that is ready, else the first that lends it to a server, or to nothing while they
//! all wait at a server's gate without lending (blocked, or their requests pruned): the
//! core then idles and the reservation, selected, still drains (A2). A decision
//! that changes what another core of the cluster should run sends that core an
//! inter-processor interrupt (taken and charged as a timer interrupt; it then decides for
//! itself at the same instant). The cluster's one timer (its next budget event or timed
//! release) is programmed on its first core, by whichever core decided last, unless an
//! interrupt is already pending there, whose entry programs it. When it fires while that
//! core is in its kernel (interrupts masked: a reclamation, say), the first core of the
//! cluster that is not takes it: a cluster's timer is routed to its cores, so one core's long
//! kernel entry does not let a reservation on another core overrun its budget. An
//! interrupt sent to a core in its kernel is marked pending there and leaves its timer
//! programmed.
//!
//! A thread the decision moves to another core may still be running on the core it had, if
//! that core has not taken its interrupt yet: the deciding core takes it off that core first
//! (charged up to `now`, counted as preempted, so it refills its cache where it resumes).
//!
//! With slack reclamation (`slack-reclamation = true`), a core that resolves to nothing runs
//! the most urgent ready member whose reservation has budget but is not selected (the idle
//! cores take them in core order); that work drains no budget.
//!
//! Members call servers as any thread does (`servers.rs`). A member that blocks at a gate is
//! not reported to the scheduler (its job is still pending); when it is served, the core
//! whose decision selected its reservation takes an interrupt. The cluster's budget notices
//! are kept for the mc-ipc gates, each given to every thread bound to its reservation, and
//! after acting on them a member core resolves its thread again.
//!
//! A recorder that [`wants_mode_switches`](crate::Recorder::wants_mode_switches) hears of
//! every change of a cluster's criticality mode (Vestal's model, the MC-IPC paper's section
//! VII), read from the scheduler after each call; a run without one tests a flag per call.

use bulwark_core::reservation::clustered::{
    ClusterConfig, ClusteredScheduler, Mode, ReservationId, ReservationKind, Slot, Sporadic,
};
use bulwark_core::{
    ClusterScheduler, CoreDecision, Duration, Event, Instant, Notice, Notices, SchedulerError,
    TaskId, Wake, Work,
};
use bulwark_spec::{ClusterSpec, MemberKind, Scenario};

use super::{Machine, Occupant};
use crate::record::ModeSwitchRecord;
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
    /// The notices not acted on yet: kept for the machine's mc-ipc gates when it has any
    /// (they abort and reissue requests), else cleared at each call.
    notices: Notices,
    /// Some server has an mc-ipc gate: the notices are kept.
    keep_notices: bool,
    /// Idle cores run ready members that are not selected ([`ClusterSpec::slack_reclamation`]).
    slack: bool,
    /// The last decision, one entry per core of the cluster.
    decisions: Vec<CoreDecision>,
    /// The scenario's cores, by position in the cluster.
    cores: Vec<u16>,
    /// Per thread (a member, as the scheduler numbers it): its task.
    threads: Vec<TaskId>,
    /// Per reservation: its threads' ids, in task order (one, unless members share it).
    bound: Vec<Vec<u32>>,
    /// Per task of the scenario: its thread's id here (`u32::MAX`: not a member).
    thread_of: Vec<u32>,
    /// The criticality mode last recorded, when some recorder wants mode switches.
    recorded_mode: Mode,
    /// A server replied in the kernel entry whose decision is next: a cluster's timer due
    /// then keeps its place ([`Machine::answered_in_cluster`]).
    answered: bool,
}

impl ClusterRun {
    /// The scheduler of `spec`, with a reservation per member that has one of its own and a
    /// thread per member, bound to its own reservation or to the one it shares;
    /// `keep_notices` when some server's gate acts on budget notices.
    pub(super) fn build(
        scenario: &Scenario,
        spec: &ClusterSpec,
        keep_notices: bool,
    ) -> Result<Self, SimError> {
        let mut thread_of = vec![u32::MAX; scenario.tasks.len()];
        let mut kinds = Vec::with_capacity(spec.members.len());
        let mut threads = Vec::with_capacity(spec.members.len());
        let mut bindings: Vec<ReservationId> = Vec::with_capacity(spec.members.len());
        let mut bound: Vec<Vec<u32>> = Vec::with_capacity(spec.members.len());
        for (thread, member) in spec.members.iter().enumerate() {
            thread_of[member.task] = thread as u32;
            threads.push(TaskId(member.task as u32));
            if let MemberKind::Shared { owner } = member.kind {
                // Validation names an earlier member of this cluster; a hand-built scenario
                // naming another is refused by the scheduler (an unknown reservation).
                let reservation = thread_of
                    .get(owner)
                    .and_then(|&t| bindings.get(t as usize).copied())
                    .unwrap_or(ReservationId(u32::MAX));
                if let Some(sharing) = bound.get_mut(reservation.index()) {
                    sharing.push(thread as u32);
                }
                bindings.push(reservation);
                continue;
            }
            bindings.push(ReservationId(kinds.len() as u32));
            bound.push(vec![thread as u32]);
            kinds.push(reservation_kind(scenario, spec, member.task, &member.kind));
        }
        let config = ClusterConfig {
            cores: spec.cores.len(),
            cycle: spec.cycle,
            order: spec.order,
            reservations: kinds,
        };
        let scheduler = ClusteredScheduler::with_threads(&config, &bindings).map_err(|error| {
            SimError::Cluster {
                cluster: spec.name.clone(),
                task: error
                    .reservation
                    .and_then(|r| bound.get(r.index()))
                    .and_then(|sharing| sharing.first())
                    .map(|&t| scenario.tasks[threads[t as usize].index()].name.clone()),
                error: error.error,
            }
        })?;
        let notices = Notices::with_capacity(scheduler.notice_capacity());
        Ok(ClusterRun {
            decisions: vec![CoreDecision::default(); spec.cores.len()],
            cores: spec.cores.clone(),
            scheduler,
            notices,
            keep_notices,
            slack: spec.slack_reclamation,
            threads,
            bound,
            thread_of,
            recorded_mode: Mode::Low,
            answered: false,
        })
    }

    /// `event` with its thread named as the scheduler knows it (its id here). A thread that
    /// blocks for good (its script ended) ends its job: the clustered scheduler counts jobs,
    /// not its threads' states.
    fn local(&self, event: Event) -> Event {
        let thread = |task: TaskId| TaskId(self.thread_of[task.index()]);
        match event {
            Event::Activate { task, wake } => Event::Activate {
                task: thread(task),
                wake,
            },
            Event::Sleep { task, until, wake } => Event::Sleep {
                task: thread(task),
                until,
                wake,
            },
            Event::Block { task } => Event::Sleep {
                task: thread(task),
                until: Instant::NEVER,
                wake: Wake::NextJob {
                    deadline: Instant::NEVER,
                },
            },
            Event::SetPriority { task, priority } => Event::SetPriority {
                task: thread(task),
                priority,
            },
            Event::Reconfigure { task, change } => Event::Reconfigure {
                task: thread(task),
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
        if !self.keep_notices {
            self.notices.clear();
        }
        handled
    }

    /// The threads bound to the reservation `decision` selects that have a job pending, in
    /// task order.
    fn pending_threads(&self, decision: &CoreDecision) -> impl Iterator<Item = TaskId> + '_ {
        decision
            .next
            .and_then(|r| self.bound.get(r.index()))
            .into_iter()
            .flatten()
            .filter(|&&thread| self.scheduler.thread_is_pending(TaskId(thread)))
            .map(|&thread| self.threads[thread as usize])
    }

    /// True when member `task` has a job pending.
    fn is_pending(&self, task: TaskId) -> bool {
        self.scheduler
            .thread_is_pending(TaskId(self.thread_of[task.index()]))
    }

    /// True when notices wait to be taken.
    pub(super) fn has_notices(&self) -> bool {
        !self.notices.is_empty()
    }

    /// Appends the notices not taken yet to `into`, one for each thread bound to the
    /// reservation a notice names, and forgets them. A mode change comes as the threads'
    /// [`Notice::ModeChange`]; the cluster's own [`Notice::ModeSwitch`] is dropped (no
    /// kernel object acts on it; a recorder learns of switches from the mode itself).
    pub(super) fn take_notices(&mut self, into: &mut Vec<Notice>) {
        for notice in self.notices.iter() {
            let (reservation, notice_for): (TaskId, fn(TaskId) -> Notice) = match notice {
                Notice::BudgetExhausted { task } => (task, |task| Notice::BudgetExhausted { task }),
                Notice::Replenished { task } => (task, |task| Notice::Replenished { task }),
                Notice::ModeChange { task } => (task, |task| Notice::ModeChange { task }),
                Notice::ModeSwitch => continue,
            };
            let sharing = self.bound.get(reservation.index()).into_iter().flatten();
            into.extend(sharing.map(|&thread| notice_for(self.threads[thread as usize])));
        }
        self.notices.clear();
    }

    /// The reservation member `task` is bound to.
    fn reservation(&self, task: TaskId) -> ReservationId {
        self.scheduler
            .binding(TaskId(self.thread_of[task.index()]))
            .unwrap_or(ReservationId(u32::MAX))
    }

    /// Member `task`'s urgency at a gate (`ClusteredScheduler::urgency`).
    pub(super) fn urgency(&self, task: TaskId) -> u64 {
        self.scheduler
            .urgency(self.reservation(task))
            .unwrap_or(u64::MAX)
    }

    /// True when member `task`'s reservation is best-effort.
    pub(super) fn is_best_effort(&self, task: TaskId) -> bool {
        self.scheduler.is_best_effort(self.reservation(task))
    }

    /// True when member `task`'s reservation is active and has budget.
    pub(super) fn is_eligible(&self, task: TaskId) -> bool {
        self.scheduler.is_eligible(self.reservation(task))
    }

    /// The scenario core whose last decision selected member `task`'s reservation, if any.
    fn selected_on(&self, task: TaskId) -> Option<u16> {
        let reservation = TaskId(self.reservation(task).0);
        self.decisions
            .iter()
            .position(|d| d.next == Some(reservation))
            .map(|at| self.cores[at])
    }

    /// The budget left in `task`'s reservation.
    pub(super) fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        let thread = *self.thread_of.get(task.index())?;
        self.scheduler.remaining_budget(TaskId(thread), now)
    }

    /// The time `task`'s reservation has been selected by `now`, in all (A2).
    pub(super) fn drained(&self, task: TaskId, now: Instant) -> Duration {
        let reservation = self.reservation(task);
        self.scheduler
            .drained_at(reservation, now)
            .unwrap_or_default()
    }

    /// Checks the scheduler's invariants.
    pub(super) fn check_invariants(&self) -> Result<(), &'static str> {
        ClusterScheduler::check_invariants(&self.scheduler)
    }
}

impl Machine<'_> {
    /// Tells the recorder when `cluster`'s scheduler, just called at `now`, changed its
    /// criticality mode (MC-IPC paper, section VII). The mode is read after every call, as
    /// the scheduler notices only the switch to high mode ([`Notice::ModeSwitch`], and only
    /// to a caller that keeps notices): the return to low mode at an idle instant comes as
    /// demoted reservations' [`Notice::ModeChange`], and without any when none is demoted.
    #[cold]
    #[inline(never)]
    fn record_mode_switch(&mut self, cluster: u16, now: Instant) {
        let run = &mut self.clusters[cluster as usize];
        let mode = run.scheduler.mode();
        if mode == run.recorded_mode {
            return;
        }
        run.recorded_mode = mode;
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.mode_switch(&ModeSwitchRecord {
                cluster: usize::from(cluster),
                at: now,
                mode,
            });
        }
    }

    /// The thread core `core` runs, or will run when its kernel returns.
    fn heading(&self, core: u16) -> Option<TaskId> {
        match self.cores[core as usize].occupant {
            Occupant::Idle => None,
            Occupant::Kernel { next, .. } => next,
            Occupant::Running { task, .. } | Occupant::Dispatching { task } => Some(task),
        }
    }

    /// A server replied at `core`'s kernel entry: if `core` is a cluster's, a timer of that
    /// cluster due at the instant keeps its place among the instant's events at the entry's
    /// decision, rather than being armed again behind the interrupts the reply raised on
    /// other cores (a spinning lender's, to run the next request). So the instant's releases
    /// come before the caller the reply gives a core takes a step, even one of no time
    /// ("Ties", rules 1 and 8: releases due at an instant are made by the cluster's timer
    /// interrupt, and a thread given a core by a reply takes no step before them).
    pub(super) fn answered_in_cluster(&mut self, core: u16) {
        if let Some(member) = self.cores[usize::from(core)].membership {
            self.clusters[usize::from(member.cluster)].answered = true;
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
        let due = self.queue.timer_due(core, now);
        // After a reply, the cluster's timer programmed here and due now: the decision makes
        // no release timed at `now` (its timer interrupt does), so it may ask for it again.
        let answered = std::mem::take(&mut self.clusters[cluster as usize].answered);
        let programmed = self.cores[core as usize]
            .timer
            .filter(|&at| answered && due && at <= now);
        let run = &mut self.clusters[cluster as usize];
        run.scheduler
            .decide(now, &mut run.decisions, &mut run.notices, work)?;
        if !run.keep_notices {
            run.notices.clear();
        }
        let timer = run.decisions.first().and_then(|d| d.timer);
        let first = run.cores[0];
        if due && (programmed.is_none() || position != 0 || timer != programmed) {
            // An interrupt due now (another core's, or the cluster's timer) is served by
            // this entry's decision, or the timer it asks for replaces it.
            self.queue.cancel_timer(core);
            self.cores[core as usize].timer = None;
        }
        if self.recording_mode_switches {
            self.record_mode_switch(cluster, now);
        }
        let own = self.resolve(cluster, position);
        let decision = CoreDecision {
            next: own,
            timer: if position == 0 { timer } else { None },
        };
        if let Some(task) = own {
            self.take_off_other_cores(cluster, core, task, now);
        }
        if position != 0 {
            self.program_cluster_timer(first, timer, now);
        }
        if self.booting {
            // Every core decides at boot: none needs telling.
            return Ok(decision);
        }
        self.interrupt_changed_cores(cluster, core, now);
        Ok(decision)
    }

    /// Interrupts at `now` every core of `cluster` but `core` whose thread is no longer the
    /// one the last decision resolves to there.
    fn interrupt_changed_cores(&mut self, cluster: u16, core: u16, now: Instant) {
        // By position, without a copy of the decision: the kernel allocates nothing here.
        for at in 0..self.clusters[cluster as usize].cores.len() {
            let (other, thread) = (
                self.clusters[cluster as usize].cores[at],
                self.resolve(cluster, at as u16),
            );
            if other != core && self.heading(other) != thread {
                self.interrupt(other, now);
            }
        }
    }

    /// The thread the last decision of `cluster` runs on its core at `position`: the one
    /// bound to the reservation selected there, unless it waits at a gate without lending
    /// its context (blocked, or its request pruned). Then the core idles, and the selected
    /// reservation still drains (the MC-IPC paper's assumption A2), unless the cluster
    /// reclaims slack: then a core whose selected thread has nothing to run (it waits without
    /// lending, or lends to a server whose operation runs on another core or is not taken
    /// yet) runs a ready member that is not selected, if one is left; else its lender spins.
    pub(super) fn resolve(&self, cluster: u16, position: u16) -> Option<TaskId> {
        let selected = self.selected_thread(cluster, position);
        if !self.clusters[cluster as usize].slack || self.has_work(cluster, position, selected) {
            return selected;
        }
        // Slack reclamation: the cores that run nothing take, in core order, the ready
        // members that are not selected, most urgent first; so this core takes the one
        // after those of the idle cores before it.
        let earlier_idle = (0..position)
            .filter(|&at| !self.has_work(cluster, at, self.selected_thread(cluster, at)))
            .count();
        let mut taken = None;
        for _ in 0..=earlier_idle {
            match self.next_slack_member(cluster, taken) {
                Some(next) => taken = Some(next),
                None => return selected,
            }
        }
        taken.map(|(_, task)| task)
    }

    /// True when `thread`, resolved at `position` of `cluster`, has something to run there:
    /// it is ready, or it lends its context to a server whose operation in service no other
    /// core runs (section III: "unless S_q is suspended or already executing on another
    /// processor").
    fn has_work(&self, cluster: u16, position: u16, thread: Option<TaskId>) -> bool {
        let Some(thread) = thread else {
            return false;
        };
        let Some(server) = self.tasks[thread.index()].lends_to else {
            return true;
        };
        let core = self.clusters[cluster as usize].cores[position as usize];
        self.operation_free_for(server, core)
    }

    /// With slack reclamation, whether a lender has work depends on where its server's
    /// operation runs: when that changes, every core of such a cluster but `core` whose
    /// thread is no longer the one its cluster resolves to takes an interrupt at `now`.
    pub(super) fn reclaim_slack_again(&mut self, core: u16, now: Instant) {
        for cluster in 0..self.clusters.len() {
            if self.clusters[cluster].slack {
                self.interrupt_changed_cores(cluster as u16, core, now);
            }
        }
    }

    /// The thread bound to the reservation the last decision of `cluster` selected at
    /// `position`, if it can run: it does not wait at a gate without lending its context.
    fn selected_thread(&self, cluster: u16, position: u16) -> Option<TaskId> {
        let run = &self.clusters[cluster as usize];
        // The first ready thread of the reservation, in task order; else the first that
        // lends it to a server (bandwidth inheritance), its own request in service or not:
        // a thread that invoked waits for the reply (section III).
        let mut lender = None;
        for task in run.pending_threads(&run.decisions[position as usize]) {
            let t = &self.tasks[task.index()];
            if t.lends_to.is_some() {
                lender = lender.or(Some(task));
            } else if t.waiting.is_none() {
                return Some(task);
            }
        }
        lender
    }

    /// The most urgent member of `cluster` after `after` (by urgency, then task) that can
    /// take slack: its reservation has budget (best effort always has) but is selected on no
    /// core, and its thread is ready, at no gate (the MC-IPC paper, section III).
    fn next_slack_member(
        &self,
        cluster: u16,
        after: Option<(u64, TaskId)>,
    ) -> Option<(u64, TaskId)> {
        let run = &self.clusters[cluster as usize];
        run.threads
            .iter()
            .filter(|&&task| {
                let t = &self.tasks[task.index()];
                t.waiting.is_none()
                    && !t.killed
                    && run.is_pending(task)
                    && run.is_eligible(task)
                    && run.selected_on(task).is_none()
            })
            .map(|&task| (run.urgency(task), task))
            .filter(|&key| after.is_none_or(|after| key > after))
            .min()
    }

    /// The cluster member `task`, which waited at a gate without lending, may run again at
    /// `now`: the core whose decision selected its reservation decides anew (by an
    /// interrupt, unless it is `core`, whose kernel is deciding now); with slack
    /// reclamation, so does any core it may now take.
    pub(super) fn wake_member(&mut self, core: u16, cluster: u16, task: TaskId, now: Instant) {
        if self.clusters[cluster as usize].slack {
            self.interrupt_changed_cores(cluster, core, now);
            return;
        }
        if let Some(selected) = self.clusters[cluster as usize].selected_on(task) {
            if selected != core {
                self.interrupt(selected, now);
            }
        }
    }

    /// The core that runs cluster member `task`, or will when its kernel returns, if one
    /// does.
    pub(super) fn member_core(&self, cluster: u16, task: TaskId) -> Option<u16> {
        self.clusters[cluster as usize]
            .cores
            .iter()
            .copied()
            .find(|&core| self.heading(core) == Some(task))
    }

    /// `task` is to run on `core`: if another core of `cluster` still runs it (or is about
    /// to), it is taken off there and counted as preempted (it refills its cache where it
    /// resumes).
    pub(super) fn take_off_other_cores(
        &mut self,
        cluster: u16,
        core: u16,
        task: TaskId,
        now: Instant,
    ) {
        for at in 0..self.clusters[cluster as usize].cores.len() {
            let other = self.clusters[cluster as usize].cores[at];
            if other != core && self.heading(other) == Some(task) && self.take_off(other, task, now)
            {
                let t = &mut self.tasks[task.index()];
                t.needs_refill = true;
                t.metrics.preemptions += 1;
            }
        }
    }

    /// Takes `task` off core `other`, which runs it (or is about to), charged up to `now`,
    /// and interrupts that core to decide anew. True when it was running there.
    pub(super) fn take_off(&mut self, other: u16, task: TaskId, now: Instant) -> bool {
        let running = self.cores[other as usize].occupant;
        if let Occupant::Running { since, .. } = running {
            // Charged first: what it ran of its server's operation there counts.
            self.charge(other, task, since, now);
        }
        // A lender that ran its server's operation there stops it: the operation goes on
        // wherever a lender runs next.
        self.leave_operation(other, task, now);
        match self.cores[other as usize].occupant {
            Occupant::Running { .. } => {
                self.queue.cancel_processor(other);
                self.cores[other as usize].occupant = Occupant::Idle;
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
        matches!(running, Occupant::Running { .. })
    }

    /// The core to take the timer of `core`, in its kernel as the timer fires, if `core`
    /// holds its cluster's timer: the first core of the cluster not in its kernel. A
    /// cluster's timer is its cores' interrupt, taken by whichever can, so that one core's
    /// long kernel entry (a reclamation) holds up no budget or release of the others.
    pub(super) fn cluster_timer_taker(&self, core: u16) -> Option<u16> {
        let member = self.cores[core as usize].membership?;
        if member.position != 0 {
            return None;
        }
        self.clusters[member.cluster as usize]
            .cores
            .iter()
            .copied()
            .find(|&other| !matches!(self.cores[other as usize].occupant, Occupant::Kernel { .. }))
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
                let handled = self.clusters[member.cluster as usize].handle(now, event, work);
                if self.recording_mode_switches {
                    self.record_mode_switch(member.cluster, now);
                }
                return handled;
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

    /// True when `core`'s scheduler reported notices not taken yet (a cluster's are kept
    /// only when some gate acts on them).
    pub(super) fn scheduler_has_notices(&self, core: u16) -> bool {
        let c = &self.cores[core as usize];
        match c.membership {
            Some(member) => self.clusters[member.cluster as usize].has_notices(),
            None => c.scheduler.has_notices(),
        }
    }

    /// Appends `core`'s scheduler's notices not taken yet to `into`, each naming a thread.
    pub(super) fn scheduler_take_notices(&mut self, core: u16, into: &mut Vec<Notice>) {
        let c = &mut self.cores[core as usize];
        match c.membership {
            Some(member) => self.clusters[member.cluster as usize].take_notices(into),
            None => c.scheduler.take_notices(into),
        }
    }

    /// True when `task` is a best-effort cluster member.
    pub(super) fn member_is_best_effort(&self, task: TaskId) -> bool {
        self.member_of[task.index()]
            .is_some_and(|cluster| self.clusters[cluster as usize].is_best_effort(task))
    }

    /// True when `task` is a cluster member whose reservation is active and has budget.
    pub(super) fn member_is_eligible(&self, task: TaskId) -> bool {
        self.member_of[task.index()]
            .is_some_and(|cluster| self.clusters[cluster as usize].is_eligible(task))
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

/// The reservation of member `task` of `spec`, which has one of its own (not shared).
fn reservation_kind(
    scenario: &Scenario,
    spec: &ClusterSpec,
    task: usize,
    kind: &MemberKind,
) -> ReservationKind {
    let task_spec = &scenario.tasks[task];
    let priority = task_spec.priority.unwrap_or_default();
    match kind {
        MemberKind::Sporadic {
            replenishment,
            low_budget,
        } => {
            // Validation gives every sporadic member a reservation (and a priority under
            // fixed priority); a hand-built scenario without one is refused by the scheduler.
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
        // A shared reservation is its owner's (the caller binds the thread there).
        MemberKind::BestEffort | MemberKind::Shared { .. } => ReservationKind::BestEffort,
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
    }
}
