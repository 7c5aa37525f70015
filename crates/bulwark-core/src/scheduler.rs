//! One scheduler interface for a cluster of `m >= 1` cores, as a kernel drives it.
//!
//! The shape is seL4 MCS's and the MC-IPC paper's (section III): the kernel reports *events*
//! (a thread is activated, sleeps, blocks; the one-shot timer fires; a scheduling context is
//! reconfigured), then asks for a *decision*: for each core of the cluster, the thread to run
//! next and when that core's one-shot timer must fire. On the way the scheduler reports
//! *notices* (a budget was exhausted or replenished, the cluster switched criticality mode)
//! that kernel objects act on: the MC-IPC gate aborts a client's request when its
//! reservation's budget is exhausted (MC-IPC paper, section IV-A).
//!
//! - A per-core [`Policy`] (FP, EDF, DS, SS, SPR, CBS, VBS) is a cluster of one through the
//!   [`PerCore`] adapter.
//! - The MC-IPC paper's clustered reservation scheduler implements [`ClusterScheduler`]
//!   directly (see [`crate::reservation::clustered`]).
//!
//! Every call takes `now` and a [`Work`] record, as [`Policy`] does, validates before it
//! changes anything (a call that returns `Err` has left the scheduler as it was) and never
//! panics. Decisions are written into a caller-owned slice and notices into a caller-owned
//! [`Notices`] record sized at configuration, so a scheduler invocation allocates nothing.
//!
//! Donation and return (bandwidth inheritance) are not events here yet: no implementor can
//! honour them today. The clustered scheduler's bandwidth inheritance is carried out by the
//! platform, which runs a server in the client's selected reservation (A2: a selected
//! reservation drains whether or not anything runs in it), so it needs no such event.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::reservation::clustered::ClusterError;
use crate::{ContextChange, CoreError, Duration, Instant, Policy, Priority, TaskId, Wake, Work};

/// What the kernel reports to the scheduler of a cluster.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Event {
    /// A suspended thread becomes ready, continuing its job or starting a new one.
    Activate {
        /// The thread.
        task: TaskId,
        /// What the wake-up starts.
        wake: Wake,
    },
    /// A ready thread suspends until `until` (a timed sleep hands its wake-up time to the
    /// scheduler, which owns every timer), then wakes as `wake` says.
    Sleep {
        /// The thread.
        task: TaskId,
        /// When it wakes ([`Instant::NEVER`]: only an [`Event::Activate`] wakes it).
        until: Instant,
        /// What the wake-up starts; [`Wake::NextJob`] also ends the current job.
        wake: Wake,
    },
    /// A ready thread suspends with no timeout.
    Block {
        /// The thread.
        task: TaskId,
    },
    /// The one-shot timer fired.
    Timer,
    /// A thread's priority changes (`seL4_TCB_SetPriority`, as the component protocols do
    /// when a request carries, inherits or gives back a priority).
    SetPriority {
        /// The thread.
        task: TaskId,
        /// Its new priority.
        priority: Priority,
    },
    /// A thread's scheduling context gets new parameters (seL4 MCS's
    /// `SchedControl_Configure`; VBS's action switch).
    Reconfigure {
        /// The thread.
        task: TaskId,
        /// The new parameters.
        change: ContextChange,
    },
}

/// One core's part of a decision.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct CoreDecision {
    /// The thread to run on this core, or `None` to idle.
    pub next: Option<TaskId>,
    /// When this core's one-shot timer must fire, or `None` to leave it disarmed.
    pub timer: Option<Instant>,
}

/// Something kernel objects must learn of, reported by the scheduler.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Notice {
    /// The thread's budget was exhausted (a partition: its slot ended while it was active).
    BudgetExhausted {
        /// The thread.
        task: TaskId,
    },
    /// The thread's budget was replenished (a partition: a slot started while it was
    /// active).
    Replenished {
        /// The thread.
        task: TaskId,
    },
    /// The thread's priority changed with the cluster's criticality mode (demoted on a switch
    /// to high mode, restored on the return): kernel objects treat it as an exhaustion
    /// (MC-IPC paper, section VII: "as if the reservations had exhausted their budget").
    ModeChange {
        /// The thread.
        task: TaskId,
    },
    /// The cluster switched to high-criticality mode (Vestal's model).
    ModeSwitch,
}

const EXHAUSTED: u8 = 1;
const REPLENISHED: u8 = 2;
const MODE_CHANGE: u8 = 4;

/// A caller-owned record of notices, bounded by its type: one flag per notice kind and
/// thread, sized for the thread ids `0..capacity` when it is made (the only allocation), plus
/// one flag for the mode switch. A notice reported twice before the caller clears the record
/// is one entry ("at least once since the last clear"), so the record can never overflow;
/// a scheduler refuses a call, before changing anything, when the record is too small for
/// its threads ([`SchedulerError::NoticeCapacity`]). The threads with a notice are also kept
/// in id order, so clearing, moving and reading the record cost the notices it holds, not
/// its capacity.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Notices {
    flags: Vec<u8>,
    /// The ids whose flags are not zero, ascending (room for every id is reserved).
    flagged: Vec<u32>,
    mode_switch: bool,
    count: usize,
}

impl Notices {
    /// An empty record for thread ids `0..capacity`.
    pub fn with_capacity(capacity: usize) -> Notices {
        Notices {
            flags: vec![0; capacity],
            flagged: Vec::with_capacity(capacity),
            mode_switch: false,
            count: 0,
        }
    }

    /// The thread ids the record can hold notices of: `0..capacity`.
    pub fn capacity(&self) -> usize {
        self.flags.len()
    }

    /// True when no notice is recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The number of distinct notices recorded.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Forgets every notice.
    pub fn clear(&mut self) {
        for &task in &self.flagged {
            self.flags[task as usize] = 0;
        }
        self.flagged.clear();
        self.mode_switch = false;
        self.count = 0;
    }

    /// True if `notice` is recorded.
    pub fn contains(&self, notice: Notice) -> bool {
        match Self::flag(notice) {
            None => self.mode_switch,
            Some((task, bit)) => self.flags.get(task.index()).is_some_and(|f| f & bit != 0),
        }
    }

    /// Records `notice`; a thread id beyond the capacity is refused and nothing changes.
    pub fn record(&mut self, notice: Notice) -> Result<(), SchedulerError> {
        match Self::flag(notice) {
            None => {
                if !self.mode_switch {
                    self.mode_switch = true;
                    self.count += 1;
                }
                Ok(())
            }
            Some((task, bit)) => self.set(task.0, bit),
        }
    }

    /// Sets `bits` of thread `task`'s flags.
    fn set(&mut self, task: u32, bits: u8) -> Result<(), SchedulerError> {
        let flags = self
            .flags
            .get_mut(task as usize)
            .ok_or(SchedulerError::NoticeCapacity)?;
        let new = bits & !*flags;
        if new == 0 {
            return Ok(());
        }
        if *flags == 0 {
            // Reserved for every id at construction: the insertion never allocates.
            let at = self.flagged.partition_point(|&t| t < task);
            self.flagged.insert(at, task);
        }
        *flags |= new;
        self.count += new.count_ones() as usize;
        Ok(())
    }

    /// Moves every notice of `other` into this record and clears `other`: a notice already
    /// recorded here stays one entry. Refused, with nothing moved, when `other` may name
    /// thread ids beyond this record's capacity.
    pub fn take_from(&mut self, other: &mut Notices) -> Result<(), SchedulerError> {
        if other.is_empty() {
            return Ok(());
        }
        if other.flags.len() > self.flags.len() {
            return Err(SchedulerError::NoticeCapacity);
        }
        for &task in &other.flagged {
            self.set(task, other.flags[task as usize])?;
        }
        if other.mode_switch && !self.mode_switch {
            self.mode_switch = true;
            self.count += 1;
        }
        other.clear();
        Ok(())
    }

    /// Records `notice` of a thread this record was sized for: a scheduler's own record of
    /// its own threads, which cannot refuse it.
    pub fn note(&mut self, notice: Notice) {
        let recorded = self.record(notice);
        debug_assert!(recorded.is_ok(), "the record holds every thread id");
    }

    /// Moves this record's notices into `into`, sized for at least as many threads (a
    /// policy's [`take_notices`](crate::Policy::take_notices), whose caller checked that).
    pub fn move_into(&mut self, into: &mut Notices) {
        let moved = into.take_from(self);
        debug_assert!(moved.is_ok(), "the caller's record holds every thread id");
    }

    /// The recorded notices: the mode switch first, then by thread id and kind.
    pub fn iter(&self) -> impl Iterator<Item = Notice> + '_ {
        let switch = self.mode_switch.then_some(Notice::ModeSwitch);
        let per_task = self.flagged.iter().flat_map(|&i| {
            let task = TaskId(i);
            let f = self.flags[i as usize];
            [
                (EXHAUSTED, Notice::BudgetExhausted { task }),
                (REPLENISHED, Notice::Replenished { task }),
                (MODE_CHANGE, Notice::ModeChange { task }),
            ]
            .into_iter()
            .filter(move |(bit, _)| f & bit != 0)
            .map(|(_, notice)| notice)
        });
        switch.into_iter().chain(per_task)
    }

    fn flag(notice: Notice) -> Option<(TaskId, u8)> {
        match notice {
            Notice::BudgetExhausted { task } => Some((task, EXHAUSTED)),
            Notice::Replenished { task } => Some((task, REPLENISHED)),
            Notice::ModeChange { task } => Some((task, MODE_CHANGE)),
            Notice::ModeSwitch => None,
        }
    }
}

/// Why a cluster scheduler refused a call; a refused call changed nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SchedulerError {
    /// A per-core policy refused the event.
    Policy(CoreError),
    /// The clustered scheduler refused the event.
    Cluster(ClusterError),
    /// The decision slice's length is not the cluster's core count.
    CoreCount,
    /// The notice record holds fewer thread ids than the scheduler has threads.
    NoticeCapacity,
    /// This scheduler has no meaning for the event (for instance a reconfiguration of a
    /// context fixed at configuration); see the implementor's documentation.
    Unsupported,
}

impl From<CoreError> for SchedulerError {
    fn from(error: CoreError) -> Self {
        SchedulerError::Policy(error)
    }
}

impl From<ClusterError> for SchedulerError {
    fn from(error: ClusterError) -> Self {
        SchedulerError::Cluster(error)
    }
}

impl fmt::Display for SchedulerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerError::Policy(error) => write!(f, "{error}"),
            SchedulerError::Cluster(error) => write!(f, "{error}"),
            SchedulerError::CoreCount => {
                f.write_str("the decision needs exactly one entry per core of the cluster")
            }
            SchedulerError::NoticeCapacity => {
                f.write_str("the notice record is smaller than the scheduler's thread ids")
            }
            SchedulerError::Unsupported => f.write_str("the scheduler does not support the event"),
        }
    }
}

/// The scheduler of one cluster of `m >= 1` cores, driven as a kernel drives it: one or more
/// [`Event`]s at an instant, then a [`decide`](ClusterScheduler::decide) at the same `now`.
///
/// `now` never goes backwards across calls. Every call validates before it changes anything
/// and never panics, whatever the sequence of calls. Notices of what happened during a call
/// are added to `notices`; the caller clears the record when it has acted on them.
pub trait ClusterScheduler {
    /// A short name for traces and reports, e.g. `"fixed-priority"`.
    fn name(&self) -> &'static str;

    /// `m`, the number of cores of the cluster (the length every decision slice must have).
    fn core_count(&self) -> usize;

    /// The thread ids `0..capacity` this scheduler may report notices of: a [`Notices`]
    /// record passed to it needs at least this capacity.
    fn notice_capacity(&self) -> usize;

    /// The kernel reports `event` at `now`.
    fn handle(
        &mut self,
        now: Instant,
        event: Event,
        notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError>;

    /// Chooses, from `now`, the thread each core runs and when its timer fires, writing entry
    /// `c` of `decisions` for core `c` (the slice has [`core_count`](Self::core_count)
    /// entries).
    fn decide(
        &mut self,
        now: Instant,
        decisions: &mut [CoreDecision],
        notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError>;

    /// Checks the scheduler's stated invariants; `Err` names the first found broken.
    fn check_invariants(&self) -> Result<(), &'static str>;

    /// The budget left in `thread`'s scheduling context at `now`, when its context has one
    /// (a reservation, a server); `None` for a context without a budget or a thread the
    /// scheduler does not know. Traces draw it as a counter; reading it changes nothing.
    fn remaining_budget(&self, thread: TaskId, now: Instant) -> Option<Duration>;
}

/// A per-core [`Policy`] as a cluster of one core.
///
/// Events map one to one onto the policy's calls (`Activate` to [`Policy::activate`], `Sleep`
/// to [`Policy::sleep`], `Block` to [`Policy::block`], `Timer` to
/// [`Policy::timer_interrupt`], `Reconfigure` to [`Policy::reconfigure`]) and
/// [`decide`](ClusterScheduler::decide) to [`Policy::schedule`], whose [`crate::Decision`] is
/// core 0's. The policy's budget notices ([`Policy::take_notices`]: a budget exhausted while
/// its task ran, a depleted budget replenished) are reported by `decide`, which follows every
/// event at the same instant, so a kernel object acts on them before anything runs.
///
/// Generic, so each policy's calls are monomorphised; `PerCore<Box<dyn Policy>>` works too.
#[derive(Clone, Debug)]
pub struct PerCore<P: Policy> {
    policy: P,
    /// The policy's notice capacity, read once: a policy fixes it at construction, and a
    /// policy without budgets (zero) is not asked for notices, which saves a boxed policy a
    /// dynamic call per decision.
    notice_capacity: usize,
}

impl<P: Policy> PerCore<P> {
    /// `policy` as a cluster of one.
    pub fn new(policy: P) -> Self {
        let notice_capacity = policy.notice_capacity();
        PerCore {
            policy,
            notice_capacity,
        }
    }

    /// The wrapped policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The wrapped policy, mutably (configuration: adding tasks).
    pub fn policy_mut(&mut self) -> &mut P {
        &mut self.policy
    }

    /// The wrapped policy, back.
    pub fn into_inner(self) -> P {
        self.policy
    }

    /// Moves the policy's notices into `notices`, out of line: the decision's hot path keeps
    /// only the test of whether the policy reports any.
    #[inline(never)]
    fn take_notices(&mut self, notices: &mut Notices) {
        self.policy.take_notices(notices);
    }
}

impl<P: Policy> ClusterScheduler for PerCore<P> {
    fn name(&self) -> &'static str {
        self.policy.name()
    }

    fn core_count(&self) -> usize {
        1
    }

    fn notice_capacity(&self) -> usize {
        self.notice_capacity
    }

    #[inline]
    fn handle(
        &mut self,
        now: Instant,
        event: Event,
        _notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        match event {
            Event::Activate { task, wake } => self.policy.activate(now, task, wake, work)?,
            Event::Sleep { task, until, wake } => {
                self.policy.sleep(now, task, until, wake, work)?
            }
            Event::Block { task } => self.policy.block(now, task, work)?,
            Event::Timer => self.policy.timer_interrupt(now, work),
            Event::SetPriority { task, priority } => {
                self.policy.set_priority(now, task, priority, work)?
            }
            Event::Reconfigure { task, change } => {
                self.policy.reconfigure(now, task, change, work)?
            }
        }
        Ok(())
    }

    #[inline]
    fn decide(
        &mut self,
        now: Instant,
        decisions: &mut [CoreDecision],
        notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        // Validate before scheduling: a refused call must leave the policy as it was.
        let [core] = decisions else {
            return Err(SchedulerError::CoreCount);
        };
        // A policy without budgets reports nothing: any record will do, and it is not asked.
        let reports = self.notice_capacity > 0;
        if reports && notices.capacity() < self.notice_capacity {
            return Err(SchedulerError::NoticeCapacity);
        }
        let decision = self.policy.schedule(now, work);
        *core = CoreDecision {
            next: decision.next,
            timer: decision.timer,
        };
        if reports {
            self.take_notices(notices);
        }
        Ok(())
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.policy.check_invariants()
    }

    #[inline]
    fn remaining_budget(&self, thread: TaskId, now: Instant) -> Option<Duration> {
        self.policy.remaining_budget(thread, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Decision, FixedPriority, Priority};
    use alloc::boxed::Box;

    fn at(n: u64) -> Instant {
        Instant::from_nanos(n)
    }

    const NEXT_JOB: Wake = Wake::NextJob {
        deadline: Instant::NEVER,
    };

    /// Two tasks under FP: task 0 at priority 2, task 1 at priority 1.
    fn two_tasks() -> FixedPriority {
        let mut fp = FixedPriority::with_capacity(2);
        fp.add_task(TaskId(0), Priority(2)).unwrap();
        fp.add_task(TaskId(1), Priority(1)).unwrap();
        fp
    }

    /// The timeline, by hand: both released at 0, task 0 (higher) runs with no timer armed
    /// (nobody sleeps); at 5 it sleeps until 10, so task 1 runs with the timer at 10; at 10
    /// the timer fires and task 0 is back, with nothing left to time.
    /// One instant: the time, the events, and the expected next task and timer.
    type Step = (u64, &'static [Event], Option<u32>, Option<u64>);

    const TIMELINE: [Step; 3] = [
        (
            0,
            &[
                Event::Activate {
                    task: TaskId(0),
                    wake: NEXT_JOB,
                },
                Event::Activate {
                    task: TaskId(1),
                    wake: NEXT_JOB,
                },
            ],
            Some(0),
            None,
        ),
        (
            5,
            &[Event::Sleep {
                task: TaskId(0),
                until: Instant::from_nanos(10),
                wake: NEXT_JOB,
            }],
            Some(1),
            Some(10),
        ),
        (10, &[Event::Timer], Some(0), None),
    ];

    #[test]
    fn a_two_task_fixed_priority_cluster_of_one_decides_as_the_policy() {
        let mut direct = two_tasks();
        let mut cluster = PerCore::new(two_tasks());
        let mut boxed = PerCore::new(Box::new(two_tasks()) as Box<dyn Policy>);
        let mut notices = Notices::with_capacity(0);
        for (t, events, next, timer) in TIMELINE {
            let now = at(t);
            let mut work = Work::default();
            for &event in events {
                cluster.handle(now, event, &mut notices, &mut work).unwrap();
                boxed.handle(now, event, &mut notices, &mut work).unwrap();
                match event {
                    Event::Activate { task, wake } => {
                        direct.activate(now, task, wake, &mut work).unwrap()
                    }
                    Event::Sleep { task, until, wake } => {
                        direct.sleep(now, task, until, wake, &mut work).unwrap()
                    }
                    Event::Timer => direct.timer_interrupt(now, &mut work),
                    _ => unreachable!("not in the timeline"),
                }
            }
            let mut decision = [CoreDecision::default()];
            let mut from_box = [CoreDecision::default()];
            cluster
                .decide(now, &mut decision, &mut notices, &mut work)
                .unwrap();
            boxed
                .decide(now, &mut from_box, &mut notices, &mut work)
                .unwrap();
            let expected = Decision {
                next: next.map(TaskId),
                timer: timer.map(at),
            };
            assert_eq!(direct.schedule(now, &mut work), expected, "at {t}");
            assert_eq!(
                decision[0],
                CoreDecision {
                    next: expected.next,
                    timer: expected.timer
                },
                "at {t}"
            );
            assert_eq!(from_box, decision, "at {t}");
            assert!(notices.is_empty(), "the adapter reports no notices");
            cluster.check_invariants().unwrap();
        }
    }

    #[test]
    fn a_decision_slice_of_the_wrong_length_is_refused_before_scheduling() {
        let mut cluster = PerCore::new(two_tasks());
        let mut notices = Notices::with_capacity(0);
        let mut work = Work::default();
        let activate = Event::Activate {
            task: TaskId(1),
            wake: NEXT_JOB,
        };
        cluster
            .handle(at(0), activate, &mut notices, &mut work)
            .unwrap();
        let mut two = [CoreDecision::default(); 2];
        assert_eq!(
            cluster.decide(at(0), &mut two, &mut notices, &mut work),
            Err(SchedulerError::CoreCount)
        );
        assert_eq!(
            cluster.decide(at(0), &mut [], &mut notices, &mut work),
            Err(SchedulerError::CoreCount)
        );
        // The policy was not scheduled by the refused calls: the task is still to be chosen.
        let mut one = [CoreDecision::default()];
        cluster
            .decide(at(0), &mut one, &mut notices, &mut work)
            .unwrap();
        assert_eq!(one[0].next, Some(TaskId(1)));
        // A policy error comes back as such, and changes nothing.
        assert_eq!(
            cluster.handle(at(0), activate, &mut notices, &mut work),
            Err(SchedulerError::Policy(CoreError::AlreadyReady))
        );
    }

    #[test]
    fn notices_coalesce_and_refuse_ids_beyond_their_capacity() {
        let mut notices = Notices::with_capacity(2);
        let exhausted = Notice::BudgetExhausted { task: TaskId(1) };
        notices.record(exhausted).unwrap();
        notices.record(exhausted).unwrap();
        notices.record(Notice::ModeSwitch).unwrap();
        notices
            .record(Notice::Replenished { task: TaskId(0) })
            .unwrap();
        assert_eq!(notices.len(), 3);
        assert_eq!(
            notices.record(Notice::ModeChange { task: TaskId(2) }),
            Err(SchedulerError::NoticeCapacity)
        );
        assert_eq!(notices.len(), 3);
        let listed: Vec<Notice> = notices.iter().collect();
        assert_eq!(
            listed,
            [
                Notice::ModeSwitch,
                Notice::Replenished { task: TaskId(0) },
                exhausted
            ]
        );
        assert!(notices.contains(exhausted));
        assert!(!notices.contains(Notice::ModeChange { task: TaskId(1) }));
        notices.clear();
        assert!(notices.is_empty());
        assert_eq!(notices.iter().count(), 0);
        assert!(!notices.contains(Notice::ModeSwitch));
    }
}
