//! The machine against an independent reference *with kernel costs*: for random periodic task
//! sets on one core under preemptive fixed priority (distinct priorities, and priorities 1 or 2
//! so that ties are common) and EDF, with a drawn cost table (timer interrupt, scheduler,
//! context switch, cache refill; no per-work-unit cost; a 1 GHz clock, so a cycle is a
//! nanosecond), every job's release, first start, completion and miss, every task's
//! execution, kernel and refill time and preemptions, the core's busy and kernel time,
//! invocations, timer interrupts and context switches, and the trace's slices (task, refill
//! and kernel, each with the task it is charged to) must be those of an event-driven
//! simulation written here from the documented rules, sharing no code with the machine or
//! the policies (only the public types, to build the scenario and read the outcome).
//!
//! The rules the reference follows (ARCHITECTURE.md, "Where kernel time goes"; the machine's
//! module doc; lib.rs, "Ties"; `CostModel`):
//! - The kernel is entered by a timer interrupt (the earliest pending release of a sleeping
//!   task) and by a job's completion (the task's sleep until its next release, a system
//!   call). Each entry costs the scheduler, plus the interrupt for a timer, plus a context
//!   switch when a task is chosen that is not the one the core ran last (after an idle
//!   stretch, any task is switched to). Booting at time zero is free.
//! - The task that ran is charged up to the entry; the kernel's time runs after it and is
//!   charged, in full when the kernel is entered, to the task chosen, or to no task when the
//!   core then idles. An entry that costs nothing dispatches at once.
//! - Interrupts are masked in the kernel: a release that falls inside kernel time, or exactly
//!   at its end, is taken as one timer interrupt when the kernel would return, and the task
//!   it was returning to, which never ran, is neither preempted nor started.
//! - At one instant an execution that ends comes first, then the timer: a job ending at a
//!   release completes, and its system call wakes the released task with no interrupt.
//! - Every scheduler invocation wakes all sleepers due (the policies process timeouts
//!   eagerly), earliest first and, at one instant, in the order their timers were armed. A
//!   task whose next job is released by the time its job completes does not suspend: under
//!   fixed priority it keeps its place, under EDF it is activated again with the next job's
//!   deadline.
//! - Fixed priority: the highest priority runs; among equals the one that woke first (a
//!   preempted task keeps its place). EDF: the earliest absolute deadline; among equals the
//!   one activated first.
//! - A task the kernel takes the core from while it runs mid-job is preempted: when next
//!   dispatched it first refills its cache, the whole refill again if it is preempted during
//!   one. A task whose own completion entered the kernel is not preempted, even if its next
//!   job is already pending and another task is chosen (a reading: the docs charge a refill
//!   only after a preemption, and a job boundary is not one).
//! - The horizon is inclusive (events at it are handled); every job released by it counts,
//!   and an unfinished one misses when its deadline is at or before it. Slices are clipped
//!   to the horizon; kernel time entered before it counts in full.
//!
//! Not covered: more than one core, reservations and servers, scripts, cache flushes,
//! per-work-unit costs (the policies' work is not modelled here), clocks other than 1 GHz,
//! random execution times, trace marks, the outcome's event count, and the latency and
//! response statistics (derived from the job records compared here).
//!
//! Draws come in three grains. Fine: periods and offsets in whole microseconds, costs any
//! number of cycles up to 2,000. Aligned: periods in whole milliseconds, offsets and
//! execution times nudged off whole milliseconds by a few microseconds, costs of 0, 1,000 or
//! 2,000 cycles, so that completions, releases, kernel returns and the horizon often fall on
//! one instant. Clustered: offsets and most execution times of a few microseconds, so that
//! releases fall inside kernel time and cache refills. Overloaded sets are drawn on purpose.
//! A test checks that the draws reach every situation a rule is about ([`Sightings`]); three
//! hand-worked schedules pin the reference and the machine alike.

mod common;

use bulwark_core::Duration;
use bulwark_sim::{Outcome, SliceKind};
use bulwark_spec::{CostModel, PolicyKind, TaskSpec};
use common::{periodic, rows, run_jobs, scenario};
use proptest::prelude::*;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// One task of a set, times in nanoseconds.
#[derive(Clone, Copy, Debug)]
struct DrawnTask {
    period: u64,
    execution: u64,
    offset: u64,
    /// Relative deadline.
    deadline: u64,
    /// Under fixed priority (higher is more important).
    priority: u8,
}

/// The cost table, in cycles of a 1 GHz clock (so in nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Costs {
    timer_interrupt: u64,
    scheduler: u64,
    context_switch: u64,
    cache_refill: u64,
}

/// Which policy the reference follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    FixedPriority,
    Edf,
}

/// One job: (release, first start, completion, missed), in nanoseconds.
type JobRow = (u64, Option<u64>, Option<u64>, bool);

/// A slice of the core: (task charged, kind, start, end).
type Piece = (Option<usize>, SliceKind, u64, u64);

/// What one task was charged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct TaskTotals {
    jobs: u64,
    completed: u64,
    misses: u64,
    executed_ns: u64,
    kernel_ns: u64,
    refill_ns: u64,
    preemptions: u64,
}

/// What the core did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct CoreTotals {
    busy_ns: u64,
    kernel_ns: u64,
    invocations: u64,
    timer_interrupts: u64,
    context_switches: u64,
}

/// Everything compared, as the reference computes it or as read from the machine's outcome.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Observed {
    jobs: Vec<Vec<JobRow>>,
    tasks: Vec<TaskTotals>,
    core: CoreTotals,
    slices: Vec<Piece>,
}

/// Appends `piece` to `slices`, clipped to `horizon`, dropped when empty, and merged into the
/// last one when it continues it (same task and kind, starting where it ended): the trace's
/// own convention, applied to both sides so only the occupancy is compared.
fn push_piece(slices: &mut Vec<Piece>, piece: Piece, horizon: u64) {
    let (task, kind, start, end) = piece;
    let end = end.min(horizon);
    if end <= start {
        return;
    }
    if let Some(last) = slices.last_mut() {
        if last.0 == task && last.1 == kind && last.3 == start {
            last.3 = end;
            return;
        }
    }
    slices.push((task, kind, start, end));
}

/// What the core is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Occupancy {
    Idle,
    /// In the kernel until `leaves`, then `chosen` runs.
    Kernel {
        chosen: Option<usize>,
        leaves: u64,
    },
    Running {
        task: usize,
        since: u64,
    },
}

/// Why the kernel is entered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Entry {
    Boot,
    Timer,
    /// The task's job completed: it sleeps until its next release.
    Completion(usize),
}

/// The next thing that happens.
#[derive(Clone, Copy, Debug)]
enum Happening {
    Completes(usize),
    Interrupt,
    KernelReturns(Option<usize>),
}

/// One task in the reference.
struct TaskState {
    spec: DrawnTask,
    /// Its oldest unfinished job.
    current: usize,
    /// The current job's execution left.
    work_left: u64,
    refill_left: u64,
    /// Preempted mid-job since it last ran: it refills when next dispatched.
    owes_refill: bool,
    /// Asleep until its next release: (release, the order its timer was armed).
    asleep: Option<(u64, u64)>,
    /// Fixed priority: when it last woke (its place among its peers). EDF: when it was last
    /// activated (its place among equal deadlines).
    order: u64,
    /// Per job: first start and completion.
    starts: Vec<Option<u64>>,
    completions: Vec<Option<u64>>,
    totals: TaskTotals,
}

impl TaskState {
    fn release_of(&self, job: usize) -> u64 {
        self.spec.offset + job as u64 * self.spec.period
    }

    fn current_deadline(&self) -> u64 {
        self.release_of(self.current) + self.spec.deadline
    }
}

/// How often the reference met each situation one of its rules is about, so a test can
/// check that the draws reach them all.
#[derive(Clone, Copy, Debug, Default)]
struct Sightings {
    /// A job completed exactly when a sleeper was released.
    completion_at_release: u64,
    /// The kernel returned exactly when a sleeper was released.
    return_at_release: u64,
    /// A release fell inside kernel time, or exactly at its end.
    release_in_kernel: u64,
    /// Several sleepers woke in one invocation.
    woken_together: u64,
    /// A job completed with its next one already released.
    backlog: u64,
    /// A choice among peers: equal top priorities, or equal earliest deadlines.
    peers: u64,
    /// A task the kernel chose again after an entry that cost something.
    same_task_again: u64,
    /// A task preempted with a nonzero cache refill to pay.
    refill_owed: u64,
    /// A task preempted while still refilling its cache.
    preempted_while_refilling: u64,
    /// Kernel time charged to no task.
    idle_kernel: u64,
    /// Something happened at the horizon itself.
    event_at_horizon: u64,
    /// Kernel time entered before the horizon ran past it.
    kernel_past_horizon: u64,
}

impl Sightings {
    fn counts(&self) -> [(&'static str, u64); 12] {
        [
            ("completion at a release", self.completion_at_release),
            ("kernel return at a release", self.return_at_release),
            ("release inside kernel time", self.release_in_kernel),
            ("sleepers woken together", self.woken_together),
            ("next job already released", self.backlog),
            ("choice among peers", self.peers),
            ("same task chosen again", self.same_task_again),
            ("refill owed", self.refill_owed),
            ("preempted while refilling", self.preempted_while_refilling),
            ("kernel time for no task", self.idle_kernel),
            ("event at the horizon", self.event_at_horizon),
            ("kernel time past the horizon", self.kernel_past_horizon),
        ]
    }

    fn add(&mut self, other: &Sightings) {
        self.completion_at_release += other.completion_at_release;
        self.return_at_release += other.return_at_release;
        self.release_in_kernel += other.release_in_kernel;
        self.woken_together += other.woken_together;
        self.backlog += other.backlog;
        self.peers += other.peers;
        self.same_task_again += other.same_task_again;
        self.refill_owed += other.refill_owed;
        self.preempted_while_refilling += other.preempted_while_refilling;
        self.idle_kernel += other.idle_kernel;
        self.event_at_horizon += other.event_at_horizon;
        self.kernel_past_horizon += other.kernel_past_horizon;
    }
}

/// The reference simulation.
struct Reference {
    rule: Rule,
    costs: Costs,
    horizon: u64,
    tasks: Vec<TaskState>,
    occupancy: Occupancy,
    core: CoreTotals,
    slices: Vec<Piece>,
    sightings: Sightings,
    /// One counter for every order kept (arming, waking, activation): only numbers of one
    /// kind are ever compared.
    sequence: u64,
}

impl Reference {
    fn new(rule: Rule, tasks: &[DrawnTask], costs: Costs, horizon: u64) -> Self {
        let releases = |task: &DrawnTask| {
            if task.offset > horizon {
                0
            } else {
                ((horizon - task.offset) / task.period + 1) as usize
            }
        };
        Reference {
            rule,
            costs,
            horizon,
            tasks: tasks
                .iter()
                .map(|task| TaskState {
                    spec: *task,
                    current: 0,
                    work_left: task.execution,
                    refill_left: 0,
                    owes_refill: false,
                    asleep: None,
                    order: 0,
                    starts: vec![None; releases(task)],
                    completions: vec![None; releases(task)],
                    totals: TaskTotals::default(),
                })
                .collect(),
            occupancy: Occupancy::Idle,
            core: CoreTotals::default(),
            slices: Vec::new(),
            sightings: Sightings::default(),
            sequence: 0,
        }
    }

    fn next_order(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    /// Runs to the horizon.
    fn run(mut self) -> (Observed, Sightings) {
        // Time zero, in file order: a task released at once wakes, the others arm their
        // release timers.
        for index in 0..self.tasks.len() {
            let order = self.next_order();
            let task = &mut self.tasks[index];
            if task.spec.offset == 0 {
                task.order = order;
            } else {
                task.asleep = Some((task.spec.offset, order));
            }
        }
        self.enter(0, Entry::Boot);
        loop {
            // The one-shot timer is set for the earliest sleeper's release.
            let timer = self.tasks.iter().filter_map(|state| state.asleep).min();
            let timer = timer.map(|(at, _)| at);
            let (at, happening) = match self.occupancy {
                Occupancy::Running { task, since } => {
                    let state = &self.tasks[task];
                    let ends = since + state.refill_left + state.work_left;
                    self.sightings.completion_at_release += u64::from(timer == Some(ends));
                    // An execution ending at a release ends first.
                    match timer {
                        Some(at) if at < ends => (at, Happening::Interrupt),
                        _ => (ends, Happening::Completes(task)),
                    }
                }
                // A release inside kernel time, or at the kernel's return, is taken on the
                // way out, before the chosen task runs.
                Occupancy::Kernel { chosen, leaves } => {
                    self.sightings.return_at_release += u64::from(timer == Some(leaves));
                    match timer {
                        Some(at) if at <= leaves => {
                            self.sightings.release_in_kernel += 1;
                            (leaves, Happening::Interrupt)
                        }
                        _ => (leaves, Happening::KernelReturns(chosen)),
                    }
                }
                Occupancy::Idle => match timer {
                    Some(at) => (at, Happening::Interrupt),
                    None => break,
                },
            };
            if at > self.horizon {
                break;
            }
            self.sightings.event_at_horizon += u64::from(at == self.horizon);
            match happening {
                Happening::Completes(task) => self.enter(at, Entry::Completion(task)),
                Happening::Interrupt => self.enter(at, Entry::Timer),
                Happening::KernelReturns(chosen) => self.dispatch(at, chosen),
            }
        }
        if let Occupancy::Running { task, since } = self.occupancy {
            self.charge(task, since, self.horizon);
        }
        let sightings = self.sightings;
        (self.observed(), sightings)
    }

    /// The kernel is entered at `now`.
    fn enter(&mut self, now: u64, entry: Entry) {
        // The task that ran is charged up to `now`; one the kernel was returning to never ran.
        let (previous, ran) = match self.occupancy {
            Occupancy::Running { task, since } => {
                self.charge(task, since, now);
                (Some(task), true)
            }
            Occupancy::Kernel { chosen, .. } => (chosen, false),
            Occupancy::Idle => (None, false),
        };
        if let Entry::Completion(task) = entry {
            self.complete(task, now);
        }
        self.wake_due(now);
        let chosen = self.choose();
        self.core.invocations += 1;
        let mut cost = self.costs.scheduler;
        if entry == Entry::Timer {
            cost += self.costs.timer_interrupt;
            self.core.timer_interrupts += 1;
        }
        if chosen.is_some() && chosen != previous {
            cost += self.costs.context_switch;
            self.core.context_switches += 1;
        }
        if entry == Entry::Boot {
            cost = 0;
        }
        if let Some(previous) = previous.filter(|_| ran) {
            if entry != Entry::Completion(previous) && chosen != Some(previous) {
                let state = &mut self.tasks[previous];
                self.sightings.refill_owed += u64::from(self.costs.cache_refill > 0);
                self.sightings.preempted_while_refilling += u64::from(state.refill_left > 0);
                state.owes_refill = true;
                state.totals.preemptions += 1;
            }
        }
        if cost == 0 {
            self.dispatch(now, chosen);
            return;
        }
        self.core.kernel_ns += cost;
        self.sightings.idle_kernel += u64::from(chosen.is_none());
        self.sightings.same_task_again += u64::from(chosen.is_some() && chosen == previous);
        self.sightings.kernel_past_horizon += u64::from(now + cost > self.horizon);
        if let Some(task) = chosen {
            self.tasks[task].totals.kernel_ns += cost;
        }
        let piece = (chosen, SliceKind::Kernel, now, now + cost);
        push_piece(&mut self.slices, piece, self.horizon);
        self.occupancy = Occupancy::Kernel {
            chosen,
            leaves: now + cost,
        };
    }

    /// `task`'s current job completes at `now`; it sleeps until its next release, or, that
    /// release already past, goes on at once.
    fn complete(&mut self, task: usize, now: u64) {
        let order = self.next_order();
        let rule = self.rule;
        let state = &mut self.tasks[task];
        state.completions[state.current] = Some(now);
        state.current += 1;
        state.work_left = state.spec.execution;
        let release = state.release_of(state.current);
        self.sightings.backlog += u64::from(release <= now);
        if release > now {
            state.asleep = Some((release, order));
        } else if rule == Rule::Edf {
            state.order = order;
        }
    }

    /// Wakes every sleeper due by `now`, earliest first, then first armed.
    fn wake_due(&mut self, now: u64) {
        let mut due: Vec<(u64, u64, usize)> = self
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(index, state)| {
                state
                    .asleep
                    .filter(|&(at, _)| at <= now)
                    .map(|(at, armed)| (at, armed, index))
            })
            .collect();
        due.sort_unstable();
        self.sightings.woken_together += u64::from(due.len() > 1);
        for (_, _, index) in due {
            let order = self.next_order();
            let state = &mut self.tasks[index];
            state.asleep = None;
            state.order = order;
        }
    }

    /// The task that runs next: fixed priority, the highest priority, then the earliest
    /// place; EDF, the earliest deadline, then the earliest activation.
    fn choose(&mut self) -> Option<usize> {
        // Both as one key, least first: (rank, order).
        let key = |state: &TaskState| match self.rule {
            Rule::FixedPriority => (u64::from(u8::MAX - state.spec.priority), state.order),
            Rule::Edf => (state.current_deadline(), state.order),
        };
        let ready = || (0..self.tasks.len()).filter(|&index| self.tasks[index].asleep.is_none());
        let chosen = ready().min_by_key(|&index| key(&self.tasks[index]))?;
        let rank = key(&self.tasks[chosen]).0;
        let peers = ready()
            .filter(|&index| key(&self.tasks[index]).0 == rank)
            .count();
        self.sightings.peers += u64::from(peers > 1);
        Some(chosen)
    }

    /// The kernel returns to `chosen` at `now` (or the core idles).
    fn dispatch(&mut self, now: u64, chosen: Option<usize>) {
        let Some(task) = chosen else {
            self.occupancy = Occupancy::Idle;
            return;
        };
        let refill = self.costs.cache_refill;
        let state = &mut self.tasks[task];
        if state.owes_refill {
            state.owes_refill = false;
            state.refill_left = refill;
        }
        state.starts[state.current].get_or_insert(now);
        self.occupancy = Occupancy::Running { task, since: now };
    }

    /// Charges `task` for running from `since` to `now`: its cache refill first, then its job.
    fn charge(&mut self, task: usize, since: u64, now: u64) {
        let elapsed = now - since;
        let state = &mut self.tasks[task];
        let refill = state.refill_left.min(elapsed);
        let own = elapsed - refill;
        state.refill_left -= refill;
        state.work_left -= own;
        state.totals.refill_ns += refill;
        state.totals.executed_ns += own;
        self.core.busy_ns += elapsed;
        let split = since + refill;
        let horizon = self.horizon;
        push_piece(
            &mut self.slices,
            (Some(task), SliceKind::CacheRefill, since, split),
            horizon,
        );
        push_piece(
            &mut self.slices,
            (Some(task), SliceKind::Task, split, now),
            horizon,
        );
    }

    fn observed(self) -> Observed {
        let horizon = self.horizon;
        let mut observed = Observed {
            core: self.core,
            slices: self.slices,
            ..Observed::default()
        };
        for state in self.tasks {
            let mut totals = state.totals;
            let rows: Vec<JobRow> = (0..state.starts.len())
                .map(|job| {
                    let release = state.release_of(job);
                    let deadline = release + state.spec.deadline;
                    let completion = state.completions[job];
                    let missed = match completion {
                        Some(at) => at > deadline,
                        None => deadline <= horizon,
                    };
                    (release, state.starts[job], completion, missed)
                })
                .collect();
            totals.jobs = rows.len() as u64;
            totals.completed = rows.iter().filter(|row| row.2.is_some()).count() as u64;
            totals.misses = rows.iter().filter(|row| row.3).count() as u64;
            observed.jobs.push(rows);
            observed.tasks.push(totals);
        }
        observed
    }
}

/// The reference's view of `tasks` under `rule` with `costs`, up to `horizon` ns.
fn reference(rule: Rule, tasks: &[DrawnTask], costs: Costs, horizon: u64) -> Observed {
    Reference::new(rule, tasks, costs, horizon).run().0
}

/// The same set on the machine.
fn machine(rule: Rule, tasks: &[DrawnTask], costs: Costs, horizon: u64) -> Outcome {
    let nanos = Duration::from_nanos;
    let specs: Vec<TaskSpec> = tasks
        .iter()
        .enumerate()
        .map(|(index, task)| {
            let priority = (rule == Rule::FixedPriority).then_some(task.priority);
            let mut spec = periodic(
                &format!("t{index}"),
                0,
                priority,
                nanos(task.execution),
                nanos(task.period),
                nanos(task.offset),
            );
            spec.deadline = Some(nanos(task.deadline));
            spec
        })
        .collect();
    let policy = match rule {
        Rule::FixedPriority => PolicyKind::FixedPriority,
        Rule::Edf => PolicyKind::Edf,
    };
    let mut scenario = scenario(policy, 1, nanos(horizon), specs);
    scenario.cost = CostModel {
        timer_interrupt: costs.timer_interrupt,
        scheduler: costs.scheduler,
        context_switch: costs.context_switch,
        cache_refill: costs.cache_refill,
        ..CostModel::FREE
    };
    run_jobs(&scenario)
}

/// The machine's outcome in the reference's terms.
fn observe(outcome: &Outcome, horizon: u64) -> Observed {
    let jobs = rows(outcome, outcome.tasks.len());
    let tasks = outcome
        .tasks
        .iter()
        .map(|metrics| TaskTotals {
            jobs: metrics.jobs,
            completed: metrics.completed,
            misses: metrics.misses,
            executed_ns: metrics.executed_ns,
            kernel_ns: metrics.kernel_ns,
            refill_ns: metrics.refill_ns,
            preemptions: metrics.preemptions,
        })
        .collect();
    let core = &outcome.cores[0];
    let mut slices = Vec::new();
    for slice in outcome.trace.iter().flat_map(|trace| &trace.slices) {
        let piece = (
            slice.task.map(|task| task.index()),
            slice.kind,
            slice.start.as_nanos(),
            slice.end.as_nanos(),
        );
        push_piece(&mut slices, piece, horizon);
    }
    Observed {
        jobs,
        tasks,
        core: CoreTotals {
            busy_ns: core.busy_ns,
            kernel_ns: core.kernel_ns,
            invocations: core.invocations,
            timer_interrupts: core.timer_interrupts,
            context_switches: core.context_switches,
        },
        slices,
    }
}

/// Checks the machine against the reference, part by part (jobs first: the easiest to read).
fn agree(rule: Rule, tasks: &[DrawnTask], costs: Costs, horizon: u64) -> Result<(), TestCaseError> {
    let expected = reference(rule, tasks, costs, horizon);
    let got = observe(&machine(rule, tasks, costs, horizon), horizon);
    for (index, (got, expected)) in got.jobs.iter().zip(&expected.jobs).enumerate() {
        prop_assert_eq!(got, expected, "jobs of task {} under {:?}", index, rule);
    }
    prop_assert_eq!(&got.jobs, &expected.jobs);
    prop_assert_eq!(&got.tasks, &expected.tasks, "task totals under {:?}", rule);
    prop_assert_eq!(got.core, expected.core, "core totals under {:?}", rule);
    prop_assert_eq!(&got.slices, &expected.slices, "slices under {:?}", rule);
    Ok(())
}

/// A drawn set, with its costs and horizon (ns).
#[derive(Clone, Debug)]
struct Case {
    tasks: Vec<DrawnTask>,
    costs: Costs,
    horizon: u64,
}

/// An execution time of up to a quarter of the period or up to the whole of it, so that
/// light and overloaded sets are both common.
fn share() -> impl Strategy<Value = u64> {
    prop_oneof![1u64..=250, 1u64..=1000]
}

/// The kernel's costs, in cycles, drawn from one strategy each.
fn kernel_costs(
    timer_interrupt: impl Strategy<Value = u64>,
    scheduler: impl Strategy<Value = u64>,
    context_switch: impl Strategy<Value = u64>,
    cache_refill: impl Strategy<Value = u64>,
) -> impl Strategy<Value = Costs> {
    (timer_interrupt, scheduler, context_switch, cache_refill).prop_map(
        |(timer_interrupt, scheduler, context_switch, cache_refill)| Costs {
            timer_interrupt,
            scheduler,
            context_switch,
            cache_refill,
        },
    )
}

/// Fine grain: periods 1-20 ms and offsets up to 10 ms in whole microseconds, relative
/// deadlines from half the period to the period, costs any number of cycles up to 2,000
/// (zero a quarter of the time).
fn fine_case() -> impl Strategy<Value = Case> {
    let task = (1_000u64..=20_000, share(), 0u64..=10_000, 500u64..=1000).prop_map(
        |(period_us, share, offset_us, deadline_permille)| DrawnTask {
            period: period_us * US,
            execution: (period_us * share / 1000).max(1) * US,
            offset: offset_us * US,
            deadline: (period_us * deadline_permille / 1000).max(1) * US,
            priority: 0,
        },
    );
    let cost = || prop_oneof![1 => Just(0u64), 3 => 0u64..=2000];
    let costs = kernel_costs(cost(), cost(), cost(), cost());
    (
        proptest::collection::vec(task, 1..=5),
        costs,
        1u64..=100_000,
    )
        .prop_map(|(tasks, costs, horizon_us)| Case {
            tasks,
            costs,
            horizon: horizon_us * US,
        })
}

/// Aligned grain: periods 1-20 ms; execution times in whole milliseconds, tenths of one, or
/// 1-10 us (as short as the kernel's own work), nudged by up to 3 us either way; offsets of
/// 0-10 ms plus up to 10 us; deadlines the periods; costs 0 (half the time), 1,000 or 2,000
/// cycles; horizon whole milliseconds plus 0-3 us. Nudges are zero half the time, so
/// completions, releases, kernel returns and the horizon often fall on one instant, and
/// releases a few microseconds apart fall inside kernel time and cache refills.
fn aligned_case() -> impl Strategy<Value = Case> {
    let task = (1u64..=20).prop_flat_map(|period_ms| {
        let period = period_ms * MS;
        let execution = prop_oneof![
            share().prop_map(move |share| (period * share / 1000 / MS).max(1) * MS),
            share().prop_map(move |share| (period * share / 1000 / (MS / 10)).max(1) * MS / 10),
            (1u64..=10).prop_map(|micros| micros * US),
        ];
        let offset_us = prop_oneof![Just(0u64), 0u64..=3, 0u64..=10];
        let nudge_us = prop_oneof![Just(0i64), -3i64..=3];
        (execution, nudge_us, 0u64..=10, offset_us).prop_map(
            move |(execution, nudge_us, offset_ms, offset_us)| DrawnTask {
                period,
                execution: execution
                    .saturating_add_signed(nudge_us * US as i64)
                    .max(US),
                offset: offset_ms * MS + offset_us * US,
                deadline: period,
                priority: 0,
            },
        )
    });
    let cost = || prop::sample::select(vec![0u64, 0, 1000, 2000]);
    let costs = kernel_costs(cost(), cost(), cost(), cost());
    (
        proptest::collection::vec(task, 1..=5),
        costs,
        1u64..=100,
        0u64..=3,
    )
        .prop_map(|(tasks, costs, horizon_ms, horizon_us)| Case {
            tasks,
            costs,
            horizon: horizon_ms * MS + horizon_us * US,
        })
}

/// Clustered grain: periods of 1, 2, 4, 5, 10 or 20 ms, offsets of up to 20 us, execution
/// times mostly of 1-3 us (as short as the kernel's own work), 3-5 tasks, costs 0, 1,000 or
/// 2,000 cycles and a refill of 1,000 or 2,000: releases, kernel time and cache refills
/// interleave within microseconds of each millisecond, so that a release often falls inside
/// kernel time or a refill.
fn clustered_case() -> impl Strategy<Value = Case> {
    let periods = prop::sample::select(vec![1u64, 2, 4, 5, 10, 20]);
    let task = periods.prop_flat_map(|period_ms| {
        let period = period_ms * MS;
        let execution = prop_oneof![
            2 => (1u64..=3).prop_map(|micros| micros * US),
            1 => share().prop_map(move |share| (period * share / 1000 / US).max(1) * US),
        ];
        (execution, 0u64..=20).prop_map(move |(execution, offset_us)| DrawnTask {
            period,
            execution,
            offset: offset_us * US,
            deadline: period,
            priority: 0,
        })
    });
    let cost = || prop::sample::select(vec![0u64, 1000, 2000]);
    let refill = prop::sample::select(vec![1000u64, 2000]);
    let costs = kernel_costs(cost(), cost(), cost(), refill);
    (proptest::collection::vec(task, 3..=5), costs, 1u64..=40).prop_map(
        |(tasks, costs, horizon_ms)| Case {
            tasks,
            costs,
            horizon: horizon_ms * MS,
        },
    )
}

fn either_case() -> impl Strategy<Value = Case> {
    prop_oneof![fine_case(), aligned_case(), clustered_case()]
}

/// Gives the tasks distinct priorities in a random order of importance.
fn with_distinct_priorities(case: Case) -> impl Strategy<Value = Case> {
    let priorities: Vec<u8> = (1..=case.tasks.len() as u8).collect();
    (Just(case), Just(priorities).prop_shuffle())
        .prop_map(|(case, priorities)| with_priorities(case, priorities))
}

/// Gives the tasks priorities 1 or 2, so most sets have peers.
fn with_tied_priorities(case: Case) -> impl Strategy<Value = Case> {
    let count = case.tasks.len();
    (Just(case), proptest::collection::vec(1u8..=2, count))
        .prop_map(|(case, priorities)| with_priorities(case, priorities))
}

/// Gives task `i` the `i`-th priority.
fn with_priorities(mut case: Case, priorities: Vec<u8>) -> Case {
    for (task, priority) in case.tasks.iter_mut().zip(priorities) {
        task.priority = priority;
    }
    case
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_priority_with_costs_runs_as_the_reference(
        case in either_case().prop_flat_map(with_distinct_priorities),
    ) {
        agree(Rule::FixedPriority, &case.tasks, case.costs, case.horizon)?;
    }

    #[test]
    fn fixed_priority_with_costs_breaks_ties_as_the_reference(
        case in either_case().prop_flat_map(with_tied_priorities),
    ) {
        agree(Rule::FixedPriority, &case.tasks, case.costs, case.horizon)?;
    }

    #[test]
    fn edf_with_costs_runs_as_the_reference(case in either_case()) {
        agree(Rule::Edf, &case.tasks, case.costs, case.horizon)?;
    }
}

/// The draws reach every situation a rule of the reference is about, so the properties above
/// test each rule: 256 draws of each property's strategy, with proptest's fixed seed.
#[test]
fn the_draws_reach_every_situation_the_rules_are_about() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut total = Sightings::default();
    let mut sight = |rule: Rule, case: Case| {
        let (_, sightings) = Reference::new(rule, &case.tasks, case.costs, case.horizon).run();
        total.add(&sightings);
    };
    for _ in 0..256 {
        let distinct = either_case().prop_flat_map(with_distinct_priorities);
        let tied = either_case().prop_flat_map(with_tied_priorities);
        let draw_error = "a case is drawn";
        sight(
            Rule::FixedPriority,
            distinct.new_tree(&mut runner).expect(draw_error).current(),
        );
        sight(
            Rule::FixedPriority,
            tied.new_tree(&mut runner).expect(draw_error).current(),
        );
        sight(
            Rule::Edf,
            either_case()
                .new_tree(&mut runner)
                .expect(draw_error)
                .current(),
        );
    }
    for (situation, count) in total.counts() {
        assert!(count > 0, "no draw reached: {situation}");
    }
}

/// The cost table of the hand-worked cases: timer interrupt 200, scheduler 100, context
/// switch 50, cache refill 300 (cycles, so nanoseconds).
const HAND_COSTS: Costs = Costs {
    timer_interrupt: 200,
    scheduler: 100,
    context_switch: 50,
    cache_refill: 300,
};

/// A task of a hand-worked case: period and deadline 100 us (one job within the horizon).
fn hand_task(execution: u64, offset: u64, priority: u8) -> DrawnTask {
    DrawnTask {
        period: 100_000,
        execution,
        offset,
        deadline: 100_000,
        priority,
    }
}

/// Totals of a task whose jobs all completed and met their deadlines.
fn met(
    jobs: u64,
    executed_ns: u64,
    kernel_ns: u64,
    refill_ns: u64,
    preemptions: u64,
) -> TaskTotals {
    TaskTotals {
        jobs,
        completed: jobs,
        misses: 0,
        executed_ns,
        kernel_ns,
        refill_ns,
        preemptions,
    }
}

/// Checks the reference and the machine against a schedule worked by hand.
fn pin(rule: Rule, tasks: &[DrawnTask], horizon: u64, expected: &Observed) {
    assert_eq!(
        &reference(rule, tasks, HAND_COSTS, horizon),
        expected,
        "the reference"
    );
    let outcome = machine(rule, tasks, HAND_COSTS, horizon);
    assert_eq!(&observe(&outcome, horizon), expected, "the machine");
}

/// Fixed priority: lo (C = 10 us, priority 1, from 0), mid (2 us, 2, from 5 us), hi (1 us,
/// 3, from 5.35 us), late (1 us, 4, from 14.3 us), tail (1 us, 5, from 15.5 us); horizon
/// 20 us. Times in ns.
///
/// ```text
/// 0      boot (free): lo runs                                        [0, 5000)
/// 5000   timer: 200 + 100 + 50 = 350, charged to mid; lo preempted   [5000, 5350)
/// 5350   the kernel would return to mid as hi's timer fires: the
///        interrupt is taken first, so mid neither starts nor is
///        preempted: 200 + 100 + 50 = 350, charged to hi              [5350, 5700)
/// 5700   hi runs 1 us                                                [5700, 6700)
/// 6700   hi completes: 100 + 50 = 150, charged to mid                [6700, 6850)
/// 6850   mid runs 2 us (its first start; no refill)                  [6850, 8850)
/// 8850   mid completes: 150, charged to lo                           [8850, 9000)
/// 9000   lo refills 300, runs its last 5 us               [9000, 9300) [9300, 14300)
/// 14300  lo completes exactly at late's release: its system call wakes
///        late, no interrupt: 100 + 50 = 150, charged to late         [14300, 14450)
/// 14450  late runs 1 us                                              [14450, 15450)
/// 15450  late completes: 100, charged to no task, the core idles     [15450, 15550)
/// 15500  tail's release falls inside that kernel time: taken on the
///        way out, 200 + 100 + 50 = 350, charged to tail              [15550, 15900)
/// 15900  tail runs 1 us                                              [15900, 16900)
/// 16900  tail completes: 100, no task                                [16900, 17000)
/// ```
#[test]
fn fixed_priority_kernel_time_worked_by_hand() {
    let tasks = [
        hand_task(10_000, 0, 1),
        hand_task(2_000, 5_000, 2),
        hand_task(1_000, 5_350, 3),
        hand_task(1_000, 14_300, 4),
        hand_task(1_000, 15_500, 5),
    ];
    let (lo, mid, hi, late, tail) = (Some(0), Some(1), Some(2), Some(3), Some(4));
    let (run, kernel, refill) = (SliceKind::Task, SliceKind::Kernel, SliceKind::CacheRefill);
    let expected = Observed {
        jobs: vec![
            vec![(0, Some(0), Some(14_300), false)],
            vec![(5_000, Some(6_850), Some(8_850), false)],
            vec![(5_350, Some(5_700), Some(6_700), false)],
            vec![(14_300, Some(14_450), Some(15_450), false)],
            vec![(15_500, Some(15_900), Some(16_900), false)],
        ],
        tasks: vec![
            met(1, 10_000, 150, 300, 1),
            met(1, 2_000, 350 + 150, 0, 0),
            met(1, 1_000, 350, 0, 0),
            met(1, 1_000, 150, 0, 0),
            met(1, 1_000, 350, 0, 0),
        ],
        core: CoreTotals {
            busy_ns: 15_000 + 300,
            kernel_ns: 350 + 350 + 150 + 150 + 150 + 100 + 350 + 100,
            invocations: 9,
            timer_interrupts: 3,
            context_switches: 7,
        },
        slices: vec![
            (lo, run, 0, 5_000),
            (mid, kernel, 5_000, 5_350),
            (hi, kernel, 5_350, 5_700),
            (hi, run, 5_700, 6_700),
            (mid, kernel, 6_700, 6_850),
            (mid, run, 6_850, 8_850),
            (lo, kernel, 8_850, 9_000),
            (lo, refill, 9_000, 9_300),
            (lo, run, 9_300, 14_300),
            (late, kernel, 14_300, 14_450),
            (late, run, 14_450, 15_450),
            (None, kernel, 15_450, 15_550),
            (tail, kernel, 15_550, 15_900),
            (tail, run, 15_900, 16_900),
            (None, kernel, 16_900, 17_000),
        ],
    };
    pin(Rule::FixedPriority, &tasks, 20_000, &expected);
}

/// EDF: a (C = 6 us, T = D = 5 us, overloaded), b (1 us, 20 us), both from 0, and c (1 us,
/// 100 us, from 1 us); horizon 20.1 us. Times in ns.
///
/// ```text
/// 0      boot (free): a (deadline 5000) runs                         [0, 1000)
/// 1000   timer for c (deadline 101000): a goes on, 200 + 100 = 300
///        charged to a, no context switch, no preemption              [1000, 1300)
/// 1300   a runs its last 5 us                                        [1300, 6300)
/// 6300   a's job 0 completes (missed); job 1 was released at 5000, so
///        a does not suspend and is activated again (deadline 10000):
///        100 charged to a                                            [6300, 6400)
/// 6400   job 1 runs 6 us, completes (missed); again for job 2        [6400, 12400)
///        (deadline 15000): 100                                       [12400, 12500)
/// 12500  job 2 runs 6 us, completes at 18500 (missed)                [12500, 18500)
/// 18500  job 3's deadline 20000 equals b's: b was activated first and
///        wins; 100 + 50 = 150 charged to b                           [18500, 18650)
/// 18650  b runs 1 us, completes (met), sleeps until 20000            [18650, 19650)
/// 19650  150 charged to a, which pays no refill: its own completion
///        was not a preemption                                        [19650, 19800)
/// 19800  a's job 3 runs                                              [19800, 20000)
/// 20000  timer for b (deadline 40000): a goes on, 300 charged to a;
///        the horizon cuts the kernel's slice, not its cost           [20000, 20100)
/// ```
///
/// At the horizon a's job 3 is unfinished with its deadline 20000 passed (a miss), and a's
/// job 4 and b's job 1 (both released at 20000) and c's job 0 are unfinished, not missed.
#[test]
fn edf_kernel_time_worked_by_hand() {
    let task = |execution, period, offset| DrawnTask {
        period,
        execution,
        offset,
        deadline: period,
        priority: 0,
    };
    let tasks = [
        task(6_000, 5_000, 0),
        task(1_000, 20_000, 0),
        task(1_000, 100_000, 1_000),
    ];
    let (a, b) = (Some(0), Some(1));
    let (run, kernel) = (SliceKind::Task, SliceKind::Kernel);
    let expected = Observed {
        jobs: vec![
            vec![
                (0, Some(0), Some(6_300), true),
                (5_000, Some(6_400), Some(12_400), true),
                (10_000, Some(12_500), Some(18_500), true),
                (15_000, Some(19_800), None, true),
                (20_000, None, None, false),
            ],
            vec![
                (0, Some(18_650), Some(19_650), false),
                (20_000, None, None, false),
            ],
            vec![(1_000, None, None, false)],
        ],
        tasks: vec![
            TaskTotals {
                jobs: 5,
                completed: 3,
                misses: 4,
                executed_ns: 3 * 6_000 + 200,
                kernel_ns: 300 + 100 + 100 + 150 + 300,
                refill_ns: 0,
                preemptions: 0,
            },
            TaskTotals {
                jobs: 2,
                completed: 1,
                misses: 0,
                executed_ns: 1_000,
                kernel_ns: 150,
                refill_ns: 0,
                preemptions: 0,
            },
            TaskTotals {
                jobs: 1,
                ..TaskTotals::default()
            },
        ],
        core: CoreTotals {
            busy_ns: 3 * 6_000 + 200 + 1_000,
            kernel_ns: 300 + 100 + 100 + 150 + 150 + 300,
            invocations: 7,
            timer_interrupts: 2,
            context_switches: 3,
        },
        slices: vec![
            (a, run, 0, 1_000),
            (a, kernel, 1_000, 1_300),
            (a, run, 1_300, 6_300),
            (a, kernel, 6_300, 6_400),
            (a, run, 6_400, 12_400),
            (a, kernel, 12_400, 12_500),
            (a, run, 12_500, 18_500),
            (b, kernel, 18_500, 18_650),
            (b, run, 18_650, 19_650),
            (a, kernel, 19_650, 19_800),
            (a, run, 19_800, 20_000),
            (a, kernel, 20_000, 20_100),
        ],
    };
    pin(Rule::Edf, &tasks, 20_100, &expected);
}

/// Fixed priority with peers: a (C = 2 us) and b (1 us) at priority 1, both from 0; h1 (1 us,
/// from 1 us) and h2 (1 us, from 2.6 us) at priority 2; horizon 10 us. Times in ns.
///
/// ```text
/// 0      boot: a and b wake in file order; a runs                    [0, 1000)
/// 1000   timer: 350 charged to h1; a preempted                       [1000, 1350)
/// 1350   h1 runs, completes                                          [1350, 2350)
/// 2350   150 charged to a, which kept its place ahead of b           [2350, 2500)
/// 2500   a refills ...                                               [2500, 2600)
/// 2600   ... until h2's timer preempts it: 350 charged to h2         [2600, 2950)
/// 2950   h2 runs, completes                                          [2950, 3950)
/// 3950   150 charged to a                                            [3950, 4100)
/// 4100   a refills the whole 300 again, runs its last 1 us [4100, 4400) [4400, 5400)
/// 5400   150 charged to b                                            [5400, 5550)
/// 5550   b runs, completes                                           [5550, 6550)
/// 6550   100, no task: the core idles                                [6550, 6650)
/// ```
#[test]
fn fixed_priority_peers_and_a_preempted_refill_worked_by_hand() {
    let tasks = [
        hand_task(2_000, 0, 1),
        hand_task(1_000, 0, 1),
        hand_task(1_000, 1_000, 2),
        hand_task(1_000, 2_600, 2),
    ];
    let (a, b, h1, h2) = (Some(0), Some(1), Some(2), Some(3));
    let (run, kernel, refill) = (SliceKind::Task, SliceKind::Kernel, SliceKind::CacheRefill);
    let expected = Observed {
        jobs: vec![
            vec![(0, Some(0), Some(5_400), false)],
            vec![(0, Some(5_550), Some(6_550), false)],
            vec![(1_000, Some(1_350), Some(2_350), false)],
            vec![(2_600, Some(2_950), Some(3_950), false)],
        ],
        tasks: vec![
            met(1, 2_000, 150 + 150, 100 + 300, 2),
            met(1, 1_000, 150, 0, 0),
            met(1, 1_000, 350, 0, 0),
            met(1, 1_000, 350, 0, 0),
        ],
        core: CoreTotals {
            busy_ns: 5_000 + 400,
            kernel_ns: 350 + 150 + 350 + 150 + 150 + 100,
            invocations: 7,
            timer_interrupts: 2,
            context_switches: 6,
        },
        slices: vec![
            (a, run, 0, 1_000),
            (h1, kernel, 1_000, 1_350),
            (h1, run, 1_350, 2_350),
            (a, kernel, 2_350, 2_500),
            (a, refill, 2_500, 2_600),
            (h2, kernel, 2_600, 2_950),
            (h2, run, 2_950, 3_950),
            (a, kernel, 3_950, 4_100),
            (a, refill, 4_100, 4_400),
            (a, run, 4_400, 5_400),
            (b, kernel, 5_400, 5_550),
            (b, run, 5_550, 6_550),
            (None, kernel, 6_550, 6_650),
        ],
    };
    pin(Rule::FixedPriority, &tasks, 10_000, &expected);
}
