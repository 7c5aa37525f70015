//! The machine's `allocate` and `terminate` steps against an independent, microsecond-stepped
//! reference of their *timing*, sharing no code with the machine or `bulwark-core` (only the
//! public types, to build the scenario and read the outcome).
//!
//! The system: one core, preemptive fixed priority (distinct priorities drawn in any order),
//! a 1 GHz clock, every kernel cost zero except `reclaim_per_unit` (1,000 to 3,000 cycles, so
//! a unit is a whole number of microseconds). Tasks: a periodic `sensor`; two `victim`
//! scripts, each looping `allocate n; run r; sleep until the next multiple of its period`
//! (deadline = period, a drawn offset), in no group, one group, both in one group or one group
//! each; a `controller` script that, once or twice, sleeps until a drawn time, terminates a
//! victim (with a `step` when it has a group) and runs a little, then exits.
//!
//! The rules the reference follows (the store's and the tree's module docs, `Step::Allocate`
//! and `Step::Terminate`, the machine's module doc, `kill` in `machine/calls.rs`):
//! - A group's quota is `quota_ns * clock / 1e9 / reclaim_per_unit` whole units. Creating it
//!   charges its arena (1) and each member's process (2). Each object created charges 4
//!   (the object 1, its capability 3); one that does not fit is refused, and so is the rest
//!   of that `allocate`. Without a group nothing is refused.
//! - Creating an object is 3 units of work, spent as the allocating task's own, preemptible
//!   execution; refused ones cost nothing.
//! - Terminating a task without a group frees its process one object at a time: 3n + 1 units
//!   for n objects, and it kills that task alone. Terminating a group member releases the
//!   group's arena, 1 unit (there is no scrub list here: nothing is shared), within the quota
//!   whatever was allocated, in one step whatever `step` is, and kills every member.
//!   Terminating what is already gone is 0 units.
//! - The termination is kernel time on the caller's core from the call, interrupts masked: no
//!   task runs during it, a release inside it waits for its end, and the kernel time is
//!   charged to the task chosen when it is entered (the highest ready then).
//! - A killed task's current job ends, neither completed nor missed, and it never runs or is
//!   released again. A reading: a victim killed between jobs (or before its first) has the
//!   job its sleep scheduled as its current one, so that job is the killed one, with its
//!   planned release (the machine opens a script's next job when the sleep starts), unless
//!   it is planned after the horizon: only jobs released by the horizon count ("Ties", 6).
//! - At one instant, a task whose execution ends goes on to its next steps before a release
//!   at that instant can preempt it (so its `terminate` or `allocate` happens first); a sleep
//!   into the past ends the job and releases the next at once.
//! - The horizon is inclusive; jobs released by it count, an unfinished one misses when its
//!   deadline is at or before it; a periodic job's successors already due count unstarted.
//!
//! Compared: every job's release, first start, completion and miss; each task's jobs,
//! completions, misses, killed jobs, objects allocated, allocations refused, executed and
//! kernel time; the core's busy, kernel, reclamation and longest reclamation time; the trace's
//! kernel slices (start, end, task charged).
//!
//! Not covered: more than one core, kernel costs other than `reclaim_per_unit` (so the zero-
//! time kernel entries of timers and sleeps are invisible), clocks other than 1 GHz, unit
//! costs that are not whole microseconds (so the rounding up of cycles to nanoseconds),
//! shared or delegated capabilities (so scrub lists and a stepwise termination taking more
//! than one step), forks, other policies, preemption counts and the other trace slices and
//! marks.
//!
//! Two hand-worked schedules pin the reference and the machine alike: a baseline termination
//! masking the core over a higher-priority release, and a group's quota refusals and
//! one-unit termination killing both members.

mod common;

use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::{Options, Outcome, SliceKind};
use bulwark_spec::{
    Behaviour, CostModel, Execution, GroupSpec, ObjectKind, PolicyKind, Scenario, Step, TaskSpec,
};
use proptest::prelude::*;

const US: u64 = 1_000;
const SENSOR: usize = 0;
const CONTROLLER: usize = 1;
/// Task indices of the two victims.
const VICTIMS: [usize; 2] = [2, 3];
const NAMES: [&str; 4] = ["sensor", "controller", "victim-a", "victim-b"];

/// One victim: `allocate count; run run_us; sleep until the next multiple of period_us`.
#[derive(Clone, Debug)]
struct Victim {
    offset_us: u64,
    period_us: u64,
    run_us: u64,
    count: u64,
    object: ObjectKind,
}

/// One termination by the controller.
#[derive(Clone, Debug)]
struct Kill {
    at_us: u64,
    /// 0 or 1: which victim.
    victim: usize,
    /// The step, used only when the victim has a group.
    step_ns: Option<u64>,
}

#[derive(Clone, Debug)]
struct Drawn {
    unit_us: u64,
    /// Sensor, controller, victims.
    priorities: Vec<u8>,
    sensor_period_us: u64,
    sensor_execution_us: u64,
    sensor_offset_us: u64,
    victims: [Victim; 2],
    /// Each victim's group: `None`, or 0 or 1.
    group_of: [Option<usize>; 2],
    /// Each group's quota in nanoseconds.
    quotas_ns: [u64; 2],
    kills: Vec<Kill>,
    controller_run_us: u64,
    horizon_us: u64,
}

impl Drawn {
    fn groups(&self) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = vec![Vec::new(); 2];
        for (v, g) in self.group_of.iter().enumerate() {
            if let Some(g) = g {
                groups[*g].push(VICTIMS[v]);
            }
        }
        groups.retain(|members| !members.is_empty());
        groups
    }
}

fn scenario(d: &Drawn) -> Scenario {
    let us = |n: u64| Duration::from_micros(n);
    let mut tasks = vec![common::periodic(
        NAMES[SENSOR],
        0,
        Some(d.priorities[0]),
        us(d.sensor_execution_us),
        us(d.sensor_period_us),
        us(d.sensor_offset_us),
    )];
    let mut steps = Vec::new();
    for kill in &d.kills {
        steps.push(Step::SleepUntil(Instant::from_nanos(kill.at_us * US)));
        let grouped = d.group_of[kill.victim].is_some();
        steps.push(Step::Terminate {
            task: NAMES[VICTIMS[kill.victim]].into(),
            step: kill.step_ns.filter(|_| grouped).map(Duration::from_nanos),
        });
        steps.push(Step::Run(Execution::Fixed(us(d.controller_run_us))));
    }
    tasks.push(common::script(
        NAMES[CONTROLLER],
        0,
        Some(d.priorities[1]),
        None,
        steps,
    ));
    for (v, victim) in d.victims.iter().enumerate() {
        tasks.push(TaskSpec {
            name: NAMES[VICTIMS[v]].into(),
            core: 0,
            priority: Some(Priority(d.priorities[2 + v])),
            reservation: None,
            deadline: Some(us(victim.period_us)),
            behaviour: Behaviour::Script {
                offset: us(victim.offset_us),
                steps: vec![Step::Loop {
                    count: None,
                    body: vec![
                        Step::Allocate {
                            count: victim.count,
                            object: victim.object,
                        },
                        Step::Run(Execution::Fixed(us(victim.run_us))),
                        Step::SleepUntilAligned(us(victim.period_us)),
                    ],
                }],
            },
        });
    }
    let mut s = common::scenario(PolicyKind::FixedPriority, 1, us(d.horizon_us), tasks);
    s.cost = CostModel {
        reclaim_per_unit: d.unit_us * US,
        ..CostModel::default()
    };
    // Group indices are renumbered in `groups()` order; quotas follow the drawn index.
    let mut quotas = Vec::new();
    for g in 0..2 {
        if d.group_of.contains(&Some(g)) {
            quotas.push(d.quotas_ns[g]);
        }
    }
    s.groups = d
        .groups()
        .into_iter()
        .zip(quotas)
        .enumerate()
        .map(|(i, (members, quota))| GroupSpec {
            name: format!("g{i}"),
            quota: Duration::from_nanos(quota),
            members,
        })
        .collect();
    s
}

// ---- the reference ----

#[derive(Clone, Copy, Debug)]
enum Op {
    Run(u64),
    Allocate(u64),
    SleepUntil(u64),
    SleepAligned(u64),
    /// A periodic task's job ends; the next is released at the planned boundary.
    NextPeriod,
    Terminate(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    Sleeping(u64),
    Done,
    Killed,
}

#[derive(Clone, Copy, Debug)]
struct Job {
    index: u64,
    release: u64,
    first_start: Option<u64>,
}

/// (release, first start, completion, missed), in microseconds.
type Row = (u64, Option<u64>, Option<u64>, bool);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Totals {
    jobs: u64,
    completed: u64,
    misses: u64,
    killed_jobs: u64,
    objects_allocated: u64,
    allocations_refused: u64,
    executed_ns: u64,
    kernel_ns: u64,
}

struct Task {
    priority: u8,
    ops: Vec<Op>,
    looping: bool,
    next_op: usize,
    period: u64,
    offset: u64,
    deadline: Option<u64>,
    state: State,
    job: Option<Job>,
    left: u64,
    /// Objects its process holds (without a group).
    objects: u64,
    group: Option<usize>,
    rows: Vec<Row>,
    totals: Totals,
    horizon: u64,
}

struct Group {
    quota: u64,
    charged: u64,
    terminated: bool,
    members: Vec<usize>,
}

#[derive(Debug, PartialEq, Eq)]
struct Expected {
    rows: Vec<Vec<Row>>,
    totals: Vec<Totals>,
    busy_ns: u64,
    kernel_ns: u64,
    reclaim_ns: u64,
    max_reclaim_ns: u64,
    /// (start, end, task charged) in microseconds.
    kernel_slices: Vec<(u64, u64, Option<usize>)>,
}

/// What a task's zero-time steps led to.
enum Next {
    /// It has execution left.
    Executes,
    /// It slept, exited or re-released itself: choose again.
    Choose,
    /// It entered the kernel for this long.
    Kernel(u64),
}

struct Reference {
    unit_us: u64,
    horizon: u64,
    tasks: Vec<Task>,
    groups: Vec<Group>,
    kernel_until: u64,
    out: Expected,
}

impl Reference {
    fn new(d: &Drawn) -> Self {
        let sensor = Task::new(
            d.priorities[0],
            vec![Op::Run(d.sensor_execution_us), Op::NextPeriod],
            true,
            d.sensor_offset_us,
            Some(d.sensor_period_us),
        )
        .with_period(d.sensor_period_us);
        let controller_ops = d
            .kills
            .iter()
            .flat_map(|k| {
                [
                    Op::SleepUntil(k.at_us),
                    Op::Terminate(VICTIMS[k.victim]),
                    Op::Run(d.controller_run_us),
                ]
            })
            .collect();
        let mut tasks = vec![
            sensor,
            Task::new(d.priorities[1], controller_ops, false, 0, None),
        ];
        for (v, victim) in d.victims.iter().enumerate() {
            let ops = vec![
                Op::Allocate(victim.count),
                Op::Run(victim.run_us),
                Op::SleepAligned(victim.period_us),
            ];
            tasks.push(Task::new(
                d.priorities[2 + v],
                ops,
                true,
                victim.offset_us,
                Some(victim.period_us),
            ));
        }
        for t in &mut tasks {
            t.horizon = d.horizon_us;
        }
        let unit_ns = d.unit_us * US;
        let mut groups = Vec::new();
        for g in 0..2 {
            let members: Vec<usize> = (0..2)
                .filter(|&v| d.group_of[v] == Some(g))
                .map(|v| VICTIMS[v])
                .collect();
            if members.is_empty() {
                continue;
            }
            for &m in &members {
                tasks[m].group = Some(groups.len());
            }
            groups.push(Group {
                quota: d.quotas_ns[g] / unit_ns,
                charged: 1 + 2 * members.len() as u64,
                terminated: false,
                members,
            });
        }
        Reference {
            unit_us: d.unit_us,
            horizon: d.horizon_us,
            tasks,
            groups,
            kernel_until: 0,
            out: Expected {
                rows: Vec::new(),
                totals: Vec::new(),
                busy_ns: 0,
                kernel_ns: 0,
                reclaim_ns: 0,
                max_reclaim_ns: 0,
                kernel_slices: Vec::new(),
            },
        }
    }

    fn highest_ready(&self) -> Option<usize> {
        (0..self.tasks.len())
            .filter(|&i| self.tasks[i].state == State::Ready)
            .max_by_key(|&i| self.tasks[i].priority)
    }

    fn wake(&mut self, now: u64) {
        for t in &mut self.tasks {
            if matches!(t.state, State::Sleeping(at) if at <= now) {
                t.state = State::Ready;
            }
        }
    }

    fn run(mut self) -> Expected {
        // The task that executed in the last microsecond.
        let mut last: Option<usize> = None;
        for now in 0..=self.horizon {
            if now < self.kernel_until {
                continue; // masked: releases wait for the kernel's end
            }
            // A task whose execution ends now takes its next steps before any release now.
            if let Some(i) = last.take().filter(|&i| self.tasks[i].left == 0) {
                if let Next::Kernel(length) = self.advance(i, now) {
                    self.wake(now);
                    self.enter_kernel(now, length);
                    continue;
                }
            }
            self.wake(now);
            while let Some(i) = self.highest_ready() {
                let t = &mut self.tasks[i];
                if let Some(job) = t.job.as_mut() {
                    job.first_start.get_or_insert(now);
                }
                match self.advance(i, now) {
                    Next::Choose => continue,
                    Next::Kernel(length) => {
                        self.enter_kernel(now, length);
                        break;
                    }
                    Next::Executes => {
                        if now < self.horizon {
                            let t = &mut self.tasks[i];
                            t.left -= 1;
                            t.totals.executed_ns += US;
                            self.out.busy_ns += US;
                            last = Some(i);
                        }
                        break;
                    }
                }
            }
        }
        self.finish()
    }

    fn enter_kernel(&mut self, now: u64, length: u64) {
        let chosen = self.highest_ready();
        let ns = length * US;
        if let Some(c) = chosen {
            self.tasks[c].totals.kernel_ns += ns;
        }
        self.out.kernel_ns += ns;
        self.kernel_until = now + length;
        let end = self.kernel_until.min(self.horizon);
        if end > now {
            self.out.kernel_slices.push((now, end, chosen));
        }
    }

    /// Task `i`'s zero-time steps at `now`, up to execution, a sleep or a kernel entry.
    fn advance(&mut self, i: usize, now: u64) -> Next {
        loop {
            let t = &mut self.tasks[i];
            if t.left > 0 {
                return Next::Executes;
            }
            if t.next_op == t.ops.len() {
                if !t.looping {
                    t.close_job(Some(now));
                    t.state = State::Done;
                    return Next::Choose;
                }
                t.next_op = 0;
            }
            let op = t.ops[t.next_op];
            t.next_op += 1;
            match op {
                Op::Run(length) => t.left = length,
                Op::Allocate(count) => {
                    let created = match t.group {
                        Some(g) => {
                            let group = &mut self.groups[g];
                            let fit = (group.quota - group.charged) / 4;
                            let created = count.min(fit);
                            group.charged += 4 * created;
                            created
                        }
                        None => count,
                    };
                    let t = &mut self.tasks[i];
                    t.objects += created;
                    t.totals.objects_allocated += created;
                    t.totals.allocations_refused += count - created;
                    t.left = 3 * created * self.unit_us;
                }
                Op::SleepUntil(_) | Op::SleepAligned(_) | Op::NextPeriod => {
                    let index = t.job.map_or(0, |j| j.index) + 1;
                    let (until, release) = match op {
                        Op::SleepUntil(at) => (at, at.max(now)),
                        Op::SleepAligned(p) => {
                            let next = (now / p + 1) * p;
                            (next, next)
                        }
                        _ => {
                            let planned = t.offset + index * t.period;
                            (planned, planned)
                        }
                    };
                    t.close_job(Some(now));
                    t.job = Some(Job {
                        index,
                        release,
                        first_start: None,
                    });
                    if until > now {
                        t.state = State::Sleeping(until);
                    }
                    return Next::Choose;
                }
                Op::Terminate(target) => {
                    let units = self.terminate(target);
                    if units > 0 {
                        let ns = units * self.unit_us * US;
                        self.out.reclaim_ns += ns;
                        self.out.max_reclaim_ns = self.out.max_reclaim_ns.max(ns);
                        return Next::Kernel(units * self.unit_us);
                    }
                }
            }
        }
    }

    /// Kills `target` (and the rest of its group); returns the units of work.
    fn terminate(&mut self, target: usize) -> u64 {
        match self.tasks[target].group {
            Some(g) => {
                let group = &mut self.groups[g];
                if group.terminated {
                    return 0;
                }
                group.terminated = true;
                for m in group.members.clone() {
                    self.tasks[m].kill();
                }
                1
            }
            None => {
                let t = &mut self.tasks[target];
                if t.state == State::Killed {
                    return 0;
                }
                t.kill();
                3 * t.objects + 1
            }
        }
    }

    fn finish(mut self) -> Expected {
        let horizon = self.horizon;
        for t in &mut self.tasks {
            let Some(job) = t.job.filter(|j| j.release <= horizon) else {
                continue;
            };
            t.close_job(None);
            // A periodic task's successors already due count, unstarted.
            let mut index = job.index + 1;
            while t.period > 0 && t.offset + index * t.period <= horizon {
                t.job = Some(Job {
                    index,
                    release: t.offset + index * t.period,
                    first_start: None,
                });
                t.close_job(None);
                index += 1;
            }
        }
        self.out.rows = self.tasks.iter().map(|t| t.rows.clone()).collect();
        self.out.totals = self.tasks.iter().map(|t| t.totals.clone()).collect();
        self.out
    }
}

impl Task {
    fn new(priority: u8, ops: Vec<Op>, looping: bool, offset: u64, deadline: Option<u64>) -> Self {
        Task {
            priority,
            ops,
            looping,
            next_op: 0,
            period: 0,
            offset,
            deadline,
            state: if offset > 0 {
                State::Sleeping(offset)
            } else {
                State::Ready
            },
            job: Some(Job {
                index: 0,
                release: offset,
                first_start: None,
            }),
            left: 0,
            objects: 0,
            group: None,
            rows: Vec::new(),
            totals: Totals::default(),
            horizon: 0,
        }
    }

    fn with_period(mut self, period: u64) -> Self {
        self.period = period;
        self
    }

    /// Ends the current job: completed at `at`, or unfinished at the horizon.
    fn close_job(&mut self, at: Option<u64>) {
        let Some(job) = self.job.take() else {
            return;
        };
        let deadline = self.deadline.map(|d| job.release + d);
        let missed = deadline.is_some_and(|d| at.map_or(d <= self.horizon, |at| at > d));
        self.totals.jobs += 1;
        self.totals.completed += u64::from(at.is_some());
        self.totals.misses += u64::from(missed);
        self.rows.push((job.release, job.first_start, at, missed));
    }

    /// Its process is gone: its job ends, neither completed nor missed, and it never runs
    /// again.
    fn kill(&mut self) {
        let planned_after_end = self.job.is_some_and(|job| job.release > self.horizon);
        if let Some(job) = self.job.take().filter(|_| !planned_after_end) {
            self.totals.jobs += 1;
            self.totals.killed_jobs += 1;
            self.rows.push((job.release, job.first_start, None, false));
        }
        self.state = State::Killed;
        self.left = 0;
    }
}

// ---- the machine ----

fn observe(o: &Outcome) -> Expected {
    let to_us = |t: Instant| {
        assert_eq!(t.as_nanos() % US, 0, "every time is a whole microsecond");
        t.as_nanos() / US
    };
    let rows = common::rows(o, o.tasks.len())
        .into_iter()
        .map(|jobs| {
            let us = |ns: u64| to_us(Instant::from_nanos(ns));
            jobs.into_iter()
                .map(|(release, start, done, missed)| {
                    (us(release), start.map(us), done.map(us), missed)
                })
                .collect()
        })
        .collect();
    let totals = o
        .tasks
        .iter()
        .map(|m| Totals {
            jobs: m.jobs,
            completed: m.completed,
            misses: m.misses,
            killed_jobs: m.killed_jobs,
            objects_allocated: m.objects_allocated,
            allocations_refused: m.allocations_refused,
            executed_ns: m.executed_ns,
            kernel_ns: m.kernel_ns,
        })
        .collect();
    let kernel_slices = o
        .trace
        .as_ref()
        .expect("a trace was recorded")
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Kernel)
        .map(|s| (to_us(s.start), to_us(s.end), s.task.map(TaskId::index)))
        .collect();
    let core = &o.cores[0];
    Expected {
        rows,
        totals,
        busy_ns: core.busy_ns,
        kernel_ns: core.kernel_ns,
        reclaim_ns: core.reclaim_ns,
        max_reclaim_ns: core.max_reclaim_ns,
        kernel_slices,
    }
}

fn machine(d: &Drawn) -> Expected {
    let options = Options {
        record_jobs: true,
        record_trace: true,
        ..Options::default()
    };
    let outcome = bulwark_sim::run(&scenario(d), &options).expect("the run completes");
    observe(&outcome)
}

fn reference(d: &Drawn) -> Expected {
    Reference::new(d).run()
}

// ---- draws ----

fn victim() -> impl Strategy<Value = Victim> {
    (
        prop_oneof![Just(0u64), 1u64..=3_000],
        500u64..=5_000,
        10u64..=800,
        0u64..=40,
        prop::sample::select(ObjectKind::ALL.to_vec()),
    )
        .prop_map(|(offset_us, period_us, run_us, count, object)| Victim {
            offset_us,
            period_us,
            run_us,
            count,
            object,
        })
}

fn kill() -> impl Strategy<Value = Kill> {
    (0u64..=12_000, 0usize..2, prop::option::of(1u64..=5_000)).prop_map(
        |(at_us, victim, step_ns)| Kill {
            at_us,
            victim,
            step_ns,
        },
    )
}

/// A group's quota: what its members' processes and arena take, room for `objects` more,
/// `slack` units that fit none, and a remainder short of a unit.
fn quota_ns(unit_us: u64, members: u64, objects: u64, slack: u64, remainder: u64) -> u64 {
    let unit_ns = unit_us * US;
    (1 + 2 * members + 4 * objects + slack) * unit_ns + remainder % unit_ns
}

fn drawn() -> impl Strategy<Value = Drawn> {
    let groups = prop_oneof![
        Just([None, None]),
        Just([Some(0), None]),
        Just([None, Some(0)]),
        Just([Some(0), Some(0)]),
        Just([Some(0), Some(1)]),
    ];
    (
        1u64..=3,
        Just(vec![10u8, 20, 30, 40]).prop_shuffle(),
        (300u64..=4_000, 20u64..=600, 0u64..=3_000),
        [victim(), victim()],
        groups,
        [
            (0u64..=60, 0u64..4, 0u64..3_000),
            (0u64..=60, 0u64..4, 0u64..3_000),
        ],
        prop::collection::vec(kill(), 1..=2),
        10u64..=400,
        5_000u64..=15_000,
    )
        .prop_map(
            |(unit_us, priorities, sensor, victims, group_of, quotas, kills, run, horizon)| {
                let members = |g| group_of.iter().filter(|&&x| x == Some(g)).count() as u64;
                let quotas_ns = [0, 1].map(|g| {
                    let (objects, slack, remainder) = quotas[g];
                    quota_ns(unit_us, members(g), objects, slack, remainder)
                });
                Drawn {
                    unit_us,
                    priorities,
                    sensor_period_us: sensor.0,
                    sensor_execution_us: sensor.1.min(sensor.0),
                    sensor_offset_us: sensor.2,
                    victims,
                    group_of,
                    quotas_ns,
                    kills,
                    controller_run_us: run,
                    horizon_us: horizon,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_machine_reclaims_as_the_reference_does(d in drawn()) {
        prop_assert_eq!(machine(&d), reference(&d));
    }
}

// ---- hand-worked cases ----

/// Sensor 100 us every 1 ms (priority 40), controller (30), victim A (20) and B (10), each
/// victim every `period_us` with the given allocation and run; no other draws.
#[allow(clippy::too_many_arguments)]
fn hand(
    unit_us: u64,
    victims: [(u64, u64, u64); 2],
    group_of: [Option<usize>; 2],
    quota_ns: u64,
    kill: Kill,
    horizon_us: u64,
) -> Drawn {
    Drawn {
        unit_us,
        priorities: vec![40, 30, 20, 10],
        sensor_period_us: 1_000,
        sensor_execution_us: 100,
        sensor_offset_us: 0,
        victims: victims.map(|(count, run_us, period_us)| Victim {
            offset_us: 0,
            period_us,
            run_us,
            count,
            object: ObjectKind::Semaphore,
        }),
        group_of,
        quotas_ns: [quota_ns, quota_ns],
        kills: vec![kill],
        controller_run_us: 50,
        horizon_us,
    }
}

/// No group, 1 us a unit: A allocates 100 semaphores a job (300 us), and is terminated at
/// 2.5 ms holding 200: 3 * 200 + 1 = 601 units, the core masked over [2500, 3101). The
/// sensor's release at 3000 waits for the end; A, killed mid-job, is not released at 4000.
///
/// ```text
///  us     0    100       400   700 710  1000 1100  2000 2100  2400 2500       3101 3201 3251  4000 4100
///  S      [run)                          [run)      [run)                         [run)            [run)
///  C          |slept                                                   [kernel....)     [run)
///  A          [alloc....)[run..)                          [alloc)[run)x killed
///  B                             [run)
/// ```
#[test]
fn baseline_termination_masks_the_core_for_its_3n_plus_1_units() {
    let d = hand(
        1,
        [(100, 300, 2_000), (0, 10, 5_000)],
        [None, None],
        0,
        Kill {
            at_us: 2_500,
            victim: 0,
            step_ns: None,
        },
        4_500,
    );
    let r = reference(&d);
    let m = machine(&d);
    for got in [&r, &m] {
        let sensor = &got.rows[SENSOR];
        assert_eq!(sensor[3], (3_000, Some(3_101), Some(3_201), false));
        assert_eq!(sensor.len(), 5);
        assert_eq!(
            got.rows[CONTROLLER],
            vec![
                (0, Some(100), Some(100), false),
                (2_500, Some(2_500), Some(3_251), false)
            ]
        );
        assert_eq!(
            got.rows[VICTIMS[0]],
            vec![
                (0, Some(100), Some(700), false),
                (2_000, Some(2_100), None, false)
            ]
        );
        assert_eq!(got.rows[VICTIMS[1]], vec![(0, Some(700), Some(710), false)]);
        let a = &got.totals[VICTIMS[0]];
        assert_eq!((a.objects_allocated, a.killed_jobs, a.misses), (200, 1, 0));
        assert_eq!(a.executed_ns, 1_000 * US);
        assert_eq!((got.reclaim_ns, got.max_reclaim_ns), (601 * US, 601 * US));
        assert_eq!(got.totals[CONTROLLER].kernel_ns, 601 * US);
        assert_eq!(got.kernel_slices, vec![(2_500, 3_101, Some(CONTROLLER))]);
    }
    assert_eq!(m, r);
}

/// Both victims in one group, 2 us a unit, quota 45 us: each allocates 3 semaphores a job,
/// runs 100 us every 1 ms, and B is terminated at 1.5 ms in 1 ns steps.
fn group_termination(horizon_us: u64) -> Drawn {
    let kill = Kill {
        at_us: 1_500,
        victim: 1,
        step_ns: Some(1),
    };
    let victims = [(3, 100, 1_000), (3, 100, 1_000)];
    hand(2, victims, [Some(0), Some(0)], 45_000, kill, horizon_us)
}

/// Both victims in one group, 2 us a unit, quota 45 us: 22 units, 5 taken by the arena and
/// the two processes. A's 3 semaphores charge 12 (17); B gets 1 of 3 (21); every later one
/// is refused. Terminating B at 1.5 ms in 1 ns steps releases the arena: 1 unit, 2 us, and
/// kills A as well. Both are asleep with their next jobs planned at 2 ms: those are the jobs
/// killed (the reading stated above), and neither runs again.
///
/// ```text
///  us     0   100 118  218 224  324  1000 1100 1200 1300  1500 1502 1552  2000 2100
///  S      [run)                      [run)                                [run)
///  C          |slept                                      [k)  [run)
///  A          [a)[run)                    [run)           x killed (job released 2000)
///  B                   [a)[run)                [run)      x killed (job released 2000)
/// ```
#[test]
fn group_termination_takes_one_unit_and_kills_every_member() {
    let d = group_termination(2_500);
    let r = reference(&d);
    let m = machine(&d);
    for got in [&r, &m] {
        assert_eq!(
            got.rows[VICTIMS[0]],
            vec![
                (0, Some(100), Some(218), false),
                (1_000, Some(1_100), Some(1_200), false),
                (2_000, None, None, false)
            ]
        );
        assert_eq!(
            got.rows[VICTIMS[1]],
            vec![
                (0, Some(218), Some(324), false),
                (1_000, Some(1_200), Some(1_300), false),
                (2_000, None, None, false)
            ]
        );
        assert_eq!(
            got.rows[CONTROLLER][1],
            (1_500, Some(1_500), Some(1_552), false)
        );
        assert_eq!(
            got.rows[SENSOR][2],
            (2_000, Some(2_000), Some(2_100), false)
        );
        let (a, b) = (&got.totals[VICTIMS[0]], &got.totals[VICTIMS[1]]);
        assert_eq!((a.objects_allocated, a.allocations_refused), (3, 3));
        assert_eq!((b.objects_allocated, b.allocations_refused), (1, 5));
        assert_eq!((a.killed_jobs, b.killed_jobs), (1, 1));
        assert_eq!(got.reclaim_ns, 2 * US);
        assert_eq!(got.kernel_slices, vec![(1_500, 1_502, Some(CONTROLLER))]);
    }
    assert_eq!(m, r);
}

/// The previous case with the horizon at 1.8 ms: the killed victims' next jobs were planned
/// for 2 ms, after it. Only jobs released by the horizon count ("Ties", 6), so neither has a
/// third job. The machine used to count one each, killed, released at 2 ms.
#[test]
fn a_job_planned_after_the_horizon_is_not_counted_when_its_task_is_killed() {
    let d = group_termination(1_800);
    let m = machine(&d);
    for v in VICTIMS {
        assert_eq!(m.rows[v].len(), 2, "{:?}", m.rows[v]);
        assert_eq!((m.totals[v].jobs, m.totals[v].killed_jobs), (2, 0));
    }
    assert_eq!(m, reference(&d));
}
