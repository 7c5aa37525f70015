//! A deterministic one-core driver that runs VBS processes of known loads to completion, calling the scheduler as a kernel would.
//!
//! The driver is the platform: it keeps the clock, executes the chosen process, and calls
//! the scheduler at each event: a first action's arrival ([`Vbs::switch_action`]), the end
//! of a running action's load (the process marks the switch to its next action, or
//! [`Vbs::complete_action`] after its last), and the one-shot timer of the last
//! [`Decision`](crate::Decision), each followed by one [`schedule`](Policy::schedule). Time
//! advances to the earliest of these. Nothing here is on a scheduling path: it allocates its
//! records freely.
//!
//! It records what happened, from its own observations rather than the scheduler's state:
//! the execution slices, the period instances (release, deadline, executed time), and per
//! action its arrival `a` (the previous action's termination, or the first arrival), its
//! completion `c` (when its load was executed) and its termination `f` (the end of the
//! period of its resource containing `c`, section III-B), from which the response time
//! `s = f - a` of Eq. (1) follows.

use alloc::vec;
use alloc::vec::Vec;

use super::process::{Action, BandwidthCap, Resource};
use super::queue::VbsQueue;
use super::Vbs;
use crate::{CoreError, Duration, Instant, Policy, TaskId, Work};

/// One process to run: its cap, when its first action arrives, and its actions (all of
/// known load).
#[derive(Clone, Copy, Debug)]
pub struct ProcessScript<'a> {
    /// The task id the scheduler knows it by.
    pub task: TaskId,
    /// Its bandwidth cap.
    pub cap: BandwidthCap,
    /// When its first action arrives (a whole number of the scheduler's instants).
    pub arrival: Instant,
    /// Its actions, in order; every load must be known.
    pub actions: &'a [Action],
}

/// How to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Tell the scheduler each action's load (false: the scheduler sees unknown loads and
    /// learns of each completion only when the process marks it).
    pub disclose_loads: bool,
    /// Call [`Policy::check_invariants`] after every call, failing on the first broken one.
    pub check_invariants: bool,
    /// Give up (with [`RunError::TimeLimit`]) rather than run past this time.
    pub until: Instant,
}

impl RunOptions {
    /// Loads disclosed, no invariant checks, a time limit of `until`.
    pub const fn new(until: Instant) -> Self {
        RunOptions {
            disclose_loads: true,
            check_invariants: false,
            until,
        }
    }
}

/// A stretch of time one process's action ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// The process.
    pub task: TaskId,
    /// The index of its action.
    pub action: usize,
    /// Start (inclusive).
    pub start: Instant,
    /// End (exclusive).
    pub end: Instant,
}

/// One period instance of a process (what the paper calls a task in Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeriodRecord {
    /// The process.
    pub task: TaskId,
    /// The index of the action it served.
    pub action: usize,
    /// `r`: its release.
    pub release: Instant,
    /// `d`: its deadline.
    pub deadline: Instant,
    /// The time the process ran in it.
    pub executed: Duration,
}

/// One completed action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ActionRecord {
    /// The process.
    pub task: TaskId,
    /// The index of the action.
    pub action: usize,
    /// Its load.
    pub load: Duration,
    /// Its resource.
    pub resource: Resource,
    /// `a`: arrival.
    pub arrival: Instant,
    /// `c`: completion.
    pub completion: Instant,
    /// `f`: termination.
    pub termination: Instant,
}

impl ActionRecord {
    /// The response time `s = f - a`.
    pub fn response(&self) -> Duration {
        self.termination.saturating_duration_since(self.arrival)
    }
}

/// What a run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// The schedule, merged into maximal slices.
    pub slices: Vec<Slice>,
    /// Every period instance a process ran in, in order of first execution.
    pub periods: Vec<PeriodRecord>,
    /// Every completed action, in order of completion.
    pub actions: Vec<ActionRecord>,
    /// Scheduler invocations (`schedule` calls).
    pub invocations: u64,
    /// The work of all calls, summed.
    pub work: Work,
    /// The most units of work one event and its invocation took.
    pub max_units: u64,
}

/// Why a run stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The scheduler refused a call.
    Core(CoreError),
    /// An invariant broke (with invariant checks on).
    Invariant(&'static str),
    /// An action has no load.
    MissingLoad,
    /// Nothing is due, yet work remains.
    Stalled(Instant),
    /// The run reached [`RunOptions::until`].
    TimeLimit,
}

impl From<CoreError> for RunError {
    fn from(e: CoreError) -> Self {
        RunError::Core(e)
    }
}

fn add(total: &mut Work, w: &Work) {
    total.timeouts_examined += w.timeouts_examined;
    total.timeouts_processed += w.timeouts_processed;
    total.replenishments_processed += w.replenishments_processed;
    total.heap_operations += w.heap_operations;
    total.queue_entries_moved += w.queue_entries_moved;
    total.reservations_touched += w.reservations_touched;
}

/// One script's progress.
#[derive(Clone, Copy, Debug, Default)]
struct Progress {
    started: bool,
    /// The action being executed (== its count when done).
    next: usize,
    executed: u64,
    arrival: u64,
    last_period: Option<usize>,
}

/// Runs `scripts` on `vbs` (which must not know their tasks yet) until every action has
/// completed.
pub fn run<Q: VbsQueue>(
    vbs: &mut Vbs<Q>,
    scripts: &[ProcessScript<'_>],
    options: RunOptions,
) -> Result<Run, RunError> {
    if scripts
        .iter()
        .any(|s| s.actions.iter().any(|a| a.load.is_none()))
    {
        return Err(RunError::MissingLoad);
    }
    let check = |vbs: &Vbs<Q>| -> Result<(), RunError> {
        if options.check_invariants {
            vbs.check_invariants().map_err(RunError::Invariant)?;
        }
        Ok(())
    };
    let shown = |a: Action| {
        if options.disclose_loads {
            a
        } else {
            Action::unknown_load(a.resource)
        }
    };
    let load = |a: &Action| a.load.map_or(0, |l| l.as_nanos());
    for s in scripts {
        vbs.add_process(s.task, s.cap)?;
    }
    let mut out = Run::default();
    let mut progress = vec![Progress::default(); scripts.len()];
    let mut now = scripts
        .iter()
        .map(|s| s.arrival.as_nanos())
        .min()
        .unwrap_or(0);
    let mut running: Option<usize> = None;
    loop {
        let mut work = Work::default();
        // The running action's load is done: the process marks its next action.
        if let Some(i) = running {
            let (s, p) = (&scripts[i], &mut progress[i]);
            let action = s.actions[p.next];
            if p.executed >= load(&action) {
                let period = action.resource.period.as_nanos().max(1);
                let termination = now.div_ceil(period).saturating_mul(period);
                out.actions.push(ActionRecord {
                    task: s.task,
                    action: p.next,
                    load: Duration::from_nanos(load(&action)),
                    resource: action.resource,
                    arrival: Instant::from_nanos(p.arrival),
                    completion: Instant::from_nanos(now),
                    termination: Instant::from_nanos(termination),
                });
                p.next += 1;
                p.executed = 0;
                p.arrival = termination;
                let at = Instant::from_nanos(now);
                match s.actions.get(p.next) {
                    Some(next) => vbs.switch_action(at, s.task, shown(*next), &mut work)?,
                    None => vbs.complete_action(at, s.task, &mut work)?,
                }
                check(vbs)?;
            }
        }
        // First arrivals.
        for (s, p) in scripts.iter().zip(progress.iter_mut()) {
            if !p.started && s.arrival.as_nanos() == now {
                p.started = true;
                p.arrival = now;
                if let Some(first) = s.actions.first() {
                    vbs.switch_action(Instant::from_nanos(now), s.task, shown(*first), &mut work)?;
                    check(vbs)?;
                }
            }
        }
        let decision = vbs.schedule(Instant::from_nanos(now), &mut work);
        out.invocations += 1;
        check(vbs)?;
        add(&mut out.work, &work);
        out.max_units = out.max_units.max(work.units());
        running = decision
            .next
            .and_then(|t| scripts.iter().position(|s| s.task == t));
        if decision.next.is_some() && running.is_none() {
            return Err(RunError::Core(CoreError::UnknownTask));
        }
        let done = scripts
            .iter()
            .zip(&progress)
            .all(|(s, p)| p.started && p.next >= s.actions.len());
        if done && running.is_none() {
            return Ok(out);
        }
        // The next event.
        let mut next = decision.timer.map(|t| t.as_nanos());
        if let Some(i) = running {
            let p = &progress[i];
            let end = now + load(&scripts[i].actions[p.next]).saturating_sub(p.executed);
            next = Some(next.map_or(end, |t| t.min(end)));
        }
        for (s, p) in scripts.iter().zip(&progress) {
            if !p.started {
                let a = s.arrival.as_nanos();
                next = Some(next.map_or(a, |t| t.min(a)));
            }
        }
        let Some(next) = next.filter(|&t| t > now) else {
            return Err(RunError::Stalled(Instant::from_nanos(now)));
        };
        if next > options.until.as_nanos() {
            return Err(RunError::TimeLimit);
        }
        if let Some(i) = running {
            let task = scripts[i].task;
            let state = vbs.process_state(task).ok_or(CoreError::UnknownTask)?;
            let p = &mut progress[i];
            p.executed += next - now;
            let (start, end) = (Instant::from_nanos(now), Instant::from_nanos(next));
            match out.slices.last_mut() {
                Some(last) if last.task == task && last.action == p.next && last.end == start => {
                    last.end = end
                }
                _ => out.slices.push(Slice {
                    task,
                    action: p.next,
                    start,
                    end,
                }),
            }
            let ran = Duration::from_nanos(next - now);
            match p.last_period.and_then(|k| out.periods.get_mut(k)) {
                Some(r)
                    if r.action == p.next
                        && r.release == state.release
                        && r.deadline == state.deadline =>
                {
                    r.executed = r.executed.saturating_add(ran)
                }
                _ => {
                    p.last_period = Some(out.periods.len());
                    out.periods.push(PeriodRecord {
                        task,
                        action: p.next,
                        release: state.release,
                        deadline: state.deadline,
                        executed: ran,
                    });
                }
            }
        }
        now = next;
    }
}
