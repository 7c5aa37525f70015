//! What VBS processes did on the machine, from its own observations.
//!
//! From what the machine saw rather than from the scheduler's state, it records per action its
//! arrival, completion and termination (VBS paper, section III-B), per period instance the
//! time the process ran in it, and the schedule by action.
//!
//! The paper's definitions: an action *arrives* at the previous action's termination (the
//! first action at the process's first arrival); it *completes* when its load has been
//! executed, which the machine sees as the end of the execution before the process marks its
//! next switch (or exits); it *terminates* at `f = mπ`, the end of the period of its resource
//! containing the completion `c ∈ ((m-1)π, mπ]`. Its response time `s = f - a` is what
//! Eq. (1) bounds.
//!
//! `VbsLog` also holds the first arrivals after time zero, which the machine turns into
//! timer interrupts: a core's timer is the earlier of its policy's and its next arrival.

use bulwark_core::bandwidth::vbs::Resource;
use bulwark_core::{Duration, Instant, TaskId};

/// One completed action of a VBS process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionRecord {
    /// The process.
    pub task: TaskId,
    /// The index of the action in the process's script (0 for the first).
    pub action: usize,
    /// Its load `l`.
    pub load: Duration,
    /// Its resource `(λ, π)`.
    pub resource: Resource,
    /// `a`: arrival.
    pub arrival: Instant,
    /// `c`: completion.
    pub completion: Instant,
    /// `f`: termination.
    pub termination: Instant,
}

impl ActionRecord {
    /// The response time `s = f - a` (section III-B).
    pub fn response(&self) -> Duration {
        self.termination.saturating_duration_since(self.arrival)
    }
}

/// One period instance a VBS process ran in (what the paper calls a task in Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodRecord {
    /// The process.
    pub task: TaskId,
    /// The index of the action it served.
    pub action: usize,
    /// `r`: its release, as the scheduler set it.
    pub release: Instant,
    /// `d`: its deadline, as the scheduler set it.
    pub deadline: Instant,
    /// The time the process held the processor in it: from the end of the kernel entry that
    /// chose it to the next kernel entry on its core (its execution and any cache refill).
    pub executed: Duration,
}

/// A stretch of time one action of a VBS process held the processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionSlice {
    /// The process.
    pub task: TaskId,
    /// The index of its action.
    pub action: usize,
    /// Start (inclusive).
    pub start: Instant,
    /// End (exclusive).
    pub end: Instant,
}

/// The VBS records of a run ([`run_vbs`](crate::run_vbs)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VbsRecords {
    /// Every completed action, in order of completion.
    pub actions: Vec<ActionRecord>,
    /// Every period instance a process ran in, in order of first execution.
    pub periods: Vec<PeriodRecord>,
    /// The schedule by action, in the order the stretches ended (time order on one core),
    /// back-to-back stretches of one action merged.
    pub slices: Vec<ActionSlice>,
}

/// A run with its VBS records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VbsRun {
    /// What every run produces.
    pub outcome: crate::Outcome,
    /// The VBS processes' actions and period instances.
    pub records: VbsRecords,
}

/// A process's action in progress.
#[derive(Clone, Copy, Debug)]
struct Current {
    action: usize,
    load: Duration,
    resource: Resource,
    arrival: Instant,
}

/// One process's progress.
#[derive(Clone, Copy, Debug, Default)]
struct Progress {
    current: Option<Current>,
    /// Actions started so far.
    started: usize,
    /// The next action's arrival: the last termination.
    next_arrival: Option<Instant>,
    /// Its last period record.
    last_period: Option<usize>,
}

/// The process a core runs, in one period instance, since `since`.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    task: TaskId,
    action: usize,
    since: Instant,
    release: Instant,
    deadline: Instant,
}

/// The machine's VBS bookkeeping: pending first arrivals, and the records when kept.
#[derive(Clone, Debug)]
pub(crate) struct VbsLog {
    /// Keep records (else only arrivals are handled).
    keep: bool,
    records: VbsRecords,
    progress: Vec<Progress>,
    /// Per core, what runs now.
    running: Vec<Option<Stretch>>,
    /// Per core, first arrivals after time zero, latest first (the next is the last).
    arrivals: Vec<Vec<(Instant, TaskId)>>,
}

impl VbsLog {
    /// A log for `tasks` tasks on `cores` cores, keeping records if `keep`.
    pub(crate) fn new(tasks: usize, cores: usize, keep: bool) -> Self {
        VbsLog {
            keep,
            records: VbsRecords::default(),
            progress: if keep {
                vec![Progress::default(); tasks]
            } else {
                Vec::new()
            },
            running: vec![None; cores],
            arrivals: vec![Vec::new(); cores],
        }
    }

    /// `task` on `core` has its first action arrive at `at` (after time zero).
    pub(crate) fn arrive_later(&mut self, core: u16, task: TaskId, at: Instant) {
        let Some(pending) = self.arrivals.get_mut(core as usize) else {
            return;
        };
        pending.push((at, task));
        // Latest first; equal times in task order, so the first task pops first.
        pending.sort_by(|a, b| b.cmp(a));
    }

    /// A core's timer: the earlier of the policy's `timer` and the core's next arrival.
    pub(crate) fn timer(&self, core: u16, timer: Option<Instant>) -> Option<Instant> {
        let next = self
            .arrivals
            .get(core as usize)
            .and_then(|p| p.last())
            .map(|&(at, _)| at);
        match (timer, next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next process on `core` whose first action arrives by `now`, taken off the list.
    pub(crate) fn due(&mut self, core: u16, now: Instant) -> Option<TaskId> {
        let pending = self.arrivals.get_mut(core as usize)?;
        match pending.last() {
            Some(&(at, task)) if at <= now => {
                pending.pop();
                Some(task)
            }
            _ => None,
        }
    }

    /// `task` marks the switch to its next action, `(load, resource)`, at `now`; the action
    /// in progress, if any, completed at `now`.
    #[inline(never)]
    pub(crate) fn switch(
        &mut self,
        task: TaskId,
        now: Instant,
        load: Duration,
        resource: Resource,
    ) {
        if !self.keep {
            return;
        }
        self.complete(task, now);
        let Some(p) = self.progress.get_mut(task.index()) else {
            return;
        };
        p.current = Some(Current {
            action: p.started,
            load,
            resource,
            arrival: p.next_arrival.unwrap_or(now),
        });
        p.started += 1;
    }

    /// `task`'s action in progress, if any, completed at `now`: it terminates at the end of
    /// its resource's period containing `now`, `f = mπ` with `now ∈ ((m-1)π, mπ]`.
    #[inline(never)]
    pub(crate) fn complete(&mut self, task: TaskId, now: Instant) {
        if !self.keep {
            return;
        }
        let Some(p) = self.progress.get_mut(task.index()) else {
            return;
        };
        let Some(current) = p.current.take() else {
            return;
        };
        let period = current.resource.period.as_nanos().max(1);
        let termination =
            Instant::from_nanos(now.as_nanos().div_ceil(period).saturating_mul(period));
        p.next_arrival = Some(termination);
        self.records.actions.push(ActionRecord {
            task,
            action: current.action,
            load: current.load,
            resource: current.resource,
            arrival: current.arrival,
            completion: now,
            termination,
        });
    }

    /// The kernel is entered on `core` at `now`: whatever ran there stops.
    #[inline(never)]
    pub(crate) fn entered(&mut self, core: u16, now: Instant) {
        if !self.keep {
            return;
        }
        let Some(stretch) = self.running.get_mut(core as usize).and_then(Option::take) else {
            return;
        };
        let ran = now.saturating_duration_since(stretch.since);
        if ran.is_zero() {
            return;
        }
        match self.records.slices.last_mut() {
            Some(last)
                if last.task == stretch.task
                    && last.action == stretch.action
                    && last.end == stretch.since =>
            {
                last.end = now;
            }
            _ => self.records.slices.push(ActionSlice {
                task: stretch.task,
                action: stretch.action,
                start: stretch.since,
                end: now,
            }),
        }
        let Some(p) = self.progress.get_mut(stretch.task.index()) else {
            return;
        };
        let last = p.last_period.and_then(|k| self.records.periods.get_mut(k));
        match last {
            Some(r)
                if r.action == stretch.action
                    && r.release == stretch.release
                    && r.deadline == stretch.deadline =>
            {
                r.executed = r.executed.saturating_add(ran);
            }
            _ => {
                p.last_period = Some(self.records.periods.len());
                self.records.periods.push(PeriodRecord {
                    task: stretch.task,
                    action: stretch.action,
                    release: stretch.release,
                    deadline: stretch.deadline,
                    executed: ran,
                });
            }
        }
    }

    /// The kernel on `core` chose `task`, in the period instance `(release, deadline)`, to
    /// run from `since`.
    pub(crate) fn chosen(
        &mut self,
        core: u16,
        task: TaskId,
        since: Instant,
        period: Option<(Instant, Instant)>,
    ) {
        if !self.keep {
            return;
        }
        let (Some((release, deadline)), Some(p)) = (period, self.progress.get(task.index())) else {
            return;
        };
        let Some(current) = p.current else {
            return;
        };
        if let Some(slot) = self.running.get_mut(core as usize) {
            *slot = Some(Stretch {
                task,
                action: current.action,
                since,
                release,
                deadline,
            });
        }
    }

    /// The records, once every core stopped at the end of the run.
    pub(crate) fn finish(mut self, until: Instant) -> Option<VbsRecords> {
        if !self.keep {
            return None;
        }
        for core in 0..self.running.len() {
            self.entered(core as u16, until);
        }
        Some(self.records)
    }
}
