//! The machine against an independent reference: for random periodic task sets on one core
//! with zero kernel costs, every job's release, first start, completion and miss under fixed
//! priority, EDF, the deferrable-server rule (the eager deferrable server and SPR with that
//! rule), the sporadic-server rule (SPR and the eager sporadic server, with small queues that
//! fill) and soft and hard CBS must be those of a plain millisecond-by-millisecond simulation
//! written here from the textbook rules and the SPR paper's algorithms, sharing no code with
//! the machine or the policies.
//!
//! Every parameter is whole milliseconds and costs are zero, so every release, completion,
//! budget exhaustion and replenishment falls on a millisecond boundary, and stepping one
//! millisecond at a time is exact. Overloaded sets are drawn on purpose: they exercise jobs
//! queued behind an unfinished predecessor and the end-of-run rules (lib.rs, "Ties", 6).
//! Ties are either avoided by construction (distinct priorities; task `i`'s relative deadline
//! its period minus `i` ns) or drawn on purpose and broken as the "Ties" section documents
//! (equal priorities, equal EDF deadlines, equal CBS server deadlines).

mod common;
mod replenishment_queue;

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant};
use bulwark_sim::Outcome;
use bulwark_spec::{PolicyKind, TaskSpec};
use common::{ms, periodic, rows, run_jobs, scenario};
use proptest::prelude::*;
use replenishment_queue::Queue;

/// One task of a drawn set, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Drawn {
    period: u64,
    execution: u64,
    offset: u64,
    /// Its budget per server period under the rules with budgets.
    budget: u64,
    /// The period of its reservation or server (its own period unless drawn apart).
    server_period: u64,
    /// Nanoseconds its relative deadline falls short of its period: distinct per task to
    /// rule out equal deadlines, zero to have them.
    deadline_shift: u64,
    /// Its non-preemptive region under SPR (SPR paper, section III-F), in milliseconds.
    non_preemptive: u64,
    /// `S`, its replenishment queue's capacity under the sporadic-server rule.
    replenishments: u16,
}

/// One job as the reference sees it: (release, first start, completion, missed), with times
/// in nanoseconds.
type JobRow = (u64, Option<u64>, Option<u64>, bool);

/// Which rule the reference follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Preemptive fixed priority: the most important pending task runs.
    FixedPriority,
    /// Preemptive EDF: the pending job with the earliest absolute deadline runs; among
    /// equal deadlines, the task activated first ("Ties", 4): a task is activated when it
    /// wakes, and again when its job completes with the next one already released.
    Edf,
    /// Fixed priority, each task in a deferrable server: its budget is reset to `budget` at
    /// every multiple of its period, and it runs only while it has some left. A task
    /// switched to at `x` keeps the processor, while it has budget and work, until
    /// `x + non_preemptive` (SPR's non-preemptive region, section III-F).
    Deferrable,
    /// Fixed priority, each task in a sporadic server as the SPR paper's Algorithms 1 and 3
    /// state it (see [`Sporadic`]), with the same non-preemptive regions.
    Sporadic,
    /// EDF over constant-bandwidth servers (Abeni and Buttazzo, RTSS 1998), one per task,
    /// with budget `budget` and the task's period: see [`Cbs`].
    Cbs {
        /// Hard CBS: an exhausted server waits for its deadline instead of being
        /// recharged at once.
        hard: bool,
    },
}

const MS: u64 = 1_000_000;

/// A task's relative deadline in nanoseconds.
fn deadline_ns(task: &Drawn) -> u64 {
    task.period * MS - task.deadline_shift
}

/// Where a CBS server is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No pending job.
    Idle,
    /// A pending job and budget: it competes by (deadline, order).
    Active,
    /// Hard CBS: a pending job, no budget until its deadline.
    Throttled,
}

/// One constant-bandwidth server, as the CBS paper states its rules:
/// - a job arriving at `r` to an idle server keeps `(c, d)` while `c < (d - r) Q / T`, and
///   otherwise renews them, `d = r + T`, `c = Q`; a job arriving while the server is active
///   is queued and served with `(c, d)` as they are;
/// - an exhausted budget (soft) is recharged at once and the deadline postponed by `T`; or
///   (hard) the server waits until `d`, then gets `c = Q`, `d = d + T`.
///
/// Equal deadlines go in the order they were assigned (a server queued again gets a new
/// place, so a postponed server goes behind its peers); recharges due together, in the order
/// the servers were throttled. At one instant an exhaustion is handled first, then job
/// arrivals, then recharges.
#[derive(Clone, Copy, Debug)]
struct Cbs {
    budget: u64,
    deadline: u64,
    phase: Phase,
    /// When it was last queued (its place among equal deadlines).
    order: u64,
    /// When it was last throttled (its place among recharges due together).
    throttled: u64,
}

/// Where a sporadic server's task is (SPR paper, section IV-A, "Per-task data").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Standing {
    /// No pending job: it wakes at `at`, its timeout (its next release, or later if it
    /// blocked out of budget: Algorithm 1, line 8), processed on time.
    Blocked { at: u64 },
    /// Pending work and budget due.
    Ready,
    /// Pending work, no budget until the queue's head is due.
    Depleted,
}

/// One sporadic server: its replenishment queue and its task's standing.
#[derive(Clone, Debug)]
struct Sporadic {
    queue: Queue,
    standing: Standing,
}

impl Sporadic {
    /// Fig. 8a: the whole budget at the first activation; asleep until the first release.
    fn new(task: &Drawn) -> Self {
        Sporadic {
            queue: Queue::new(task.budget, task.replenishments),
            standing: Standing::Blocked { at: task.offset },
        }
    }

    /// Algorithm 1 for a task whose job completes at `now` and that sleeps until `wanted`:
    /// with budget due the used part is split off (lines 10-13); a head not due (then, or
    /// after a full queue merged the split into it) postpones the wake-up to it, which
    /// becomes the task's timeout (lines 7-9: `tau.timeout <- t_head`).
    fn block(&mut self, now: u64, wanted: u64, period: u64) {
        self.queue.suspend(now, period);
        let at = wanted.max(self.queue.head_time());
        self.standing = Standing::Blocked { at };
    }

    /// Algorithm 3 at `now`, the timeout: ready with budget due, else waiting for it.
    fn activate(&mut self, now: u64) {
        self.standing = if self.queue.activate(now, now) {
            Standing::Ready
        } else {
            Standing::Depleted
        };
    }
}

/// The reference simulation's state.
struct Reference<'a> {
    rule: Rule,
    tasks: &'a [Drawn],
    priorities: &'a [u8],
    /// Per task: every job released so far.
    jobs: Vec<Vec<JobRow>>,
    /// Per task: the index of its oldest unfinished job, and each job's work left (ms).
    head: Vec<usize>,
    left: Vec<Vec<u64>>,
    /// Per task: its deferrable-server budget left (ms).
    budget: Vec<u64>,
    /// Per task: its CBS server.
    servers: Vec<Cbs>,
    /// Per task: its sporadic server.
    sporadic: Vec<Sporadic>,
    /// Equal priorities (lib.rs, "Ties", 2 and 3): the tasks not suspended, in the order
    /// they last woke. A task suspends when its job completes before its next release,
    /// arming its release timer then (at boot, in file order); tasks released together wake
    /// in the order their timers were armed. A preempted task keeps its place, and so does
    /// one whose next job was released by the time its job completed: it never suspends.
    woken: Vec<usize>,
    suspended: Vec<bool>,
    armed: Vec<u64>,
    activation: Vec<u64>,
    /// The task that ran in the last millisecond, and per task when it was last switched to.
    previous: Option<usize>,
    switched: Vec<u64>,
    /// One counter for every order the rules keep (arming, activation, queueing): only
    /// comparisons between numbers of one kind matter.
    sequence: u64,
}

impl<'a> Reference<'a> {
    fn new(rule: Rule, tasks: &'a [Drawn], priorities: &'a [u8]) -> Self {
        let idle = Cbs {
            budget: 0,
            deadline: 0,
            phase: Phase::Idle,
            order: 0,
            throttled: 0,
        };
        Reference {
            rule,
            tasks,
            priorities,
            jobs: vec![Vec::new(); tasks.len()],
            head: vec![0; tasks.len()],
            left: vec![Vec::new(); tasks.len()],
            budget: tasks.iter().map(|t| t.budget).collect(),
            servers: vec![idle; tasks.len()],
            sporadic: tasks.iter().map(Sporadic::new).collect(),
            woken: Vec::new(),
            suspended: vec![true; tasks.len()],
            armed: (0..tasks.len() as u64).collect(),
            activation: vec![0; tasks.len()],
            previous: None,
            switched: vec![0; tasks.len()],
            sequence: tasks.len() as u64,
        }
    }

    fn next(&mut self) -> u64 {
        self.sequence += 1;
        self.sequence
    }

    fn released_at(&self, i: usize, now: u64) -> bool {
        let task = &self.tasks[i];
        now >= task.offset && (now - task.offset).is_multiple_of(task.period)
    }

    /// CBS: a job of task `i` arrives at its idle server at `now` ms.
    fn arrive(&mut self, i: usize, now: u64) {
        let (big_q, big_t) = (self.tasks[i].budget * MS, self.tasks[i].server_period * MS);
        let arrival = now * MS;
        let server = self.servers[i];
        // c >= (d - r) Q / T, cross-multiplied; a deadline passed always renews.
        let renews = arrival >= server.deadline
            || (server.budget as u128) * (big_t as u128)
                >= ((server.deadline - arrival) as u128) * (big_q as u128);
        if renews {
            self.servers[i].budget = big_q;
            self.servers[i].deadline = arrival + big_t;
        }
        if self.servers[i].budget == 0 {
            self.throttle(i);
        } else {
            self.queue(i);
        }
    }

    fn queue(&mut self, i: usize) {
        self.servers[i].order = self.next();
        self.servers[i].phase = Phase::Active;
    }

    fn throttle(&mut self, i: usize) {
        self.servers[i].throttled = self.next();
        self.servers[i].phase = Phase::Throttled;
        self.servers[i].budget = 0;
    }

    /// What happens at instant `now` before the choice: releases, then (hard CBS) recharges.
    fn release(&mut self, now: u64) {
        let mut waking: Vec<usize> = (0..self.tasks.len())
            .filter(|&i| self.suspended[i] && self.released_at(i, now))
            .collect();
        waking.sort_by_key(|&i| self.armed[i]);
        for &i in &waking {
            self.suspended[i] = false;
            self.woken.push(i);
            self.activation[i] = self.next();
        }
        for i in 0..self.tasks.len() {
            let task = self.tasks[i];
            if self.rule == Rule::Deferrable && now.is_multiple_of(task.server_period) {
                self.budget[i] = task.budget;
            }
            if self.released_at(i, now) {
                self.jobs[i].push((now * MS, None, None, false));
                self.left[i].push(task.execution);
            }
        }
        if self.rule == Rule::Sporadic {
            for server in &mut self.sporadic {
                match server.standing {
                    Standing::Blocked { at } if at <= now => server.activate(now),
                    // A depleted task's replenishment: it is ready again, nothing merged.
                    Standing::Depleted if server.queue.head_time() <= now => {
                        server.standing = Standing::Ready;
                    }
                    _ => {}
                }
            }
        }
        if matches!(self.rule, Rule::Cbs { .. }) {
            for &i in &waking {
                self.arrive(i, now);
            }
            let mut due: Vec<usize> = (0..self.tasks.len())
                .filter(|&i| {
                    let server = &self.servers[i];
                    server.phase == Phase::Throttled && server.deadline <= now * MS
                })
                .collect();
            due.sort_by_key(|&i| self.servers[i].throttled);
            for i in due {
                self.servers[i].budget = self.tasks[i].budget * MS;
                self.servers[i].deadline += self.tasks[i].server_period * MS;
                self.queue(i);
            }
        }
    }

    /// Whether task `i` may run: a pending job, and budget where the rule has one.
    fn eligible(&self, i: usize) -> bool {
        let pending = self.head[i] < self.left[i].len();
        pending
            && match self.rule {
                Rule::Deferrable => self.budget[i] > 0,
                Rule::Sporadic => self.sporadic[i].standing == Standing::Ready,
                Rule::Cbs { .. } => self.servers[i].phase == Phase::Active,
                Rule::FixedPriority | Rule::Edf => true,
            }
    }

    /// The task that runs from `now`.
    fn choose(&self, now: u64) -> Option<usize> {
        if let Some(p) = self.previous {
            let region_end = self.switched[p] + self.tasks[p].non_preemptive;
            let regions = matches!(self.rule, Rule::Deferrable | Rule::Sporadic);
            if regions && self.eligible(p) && now < region_end {
                return Some(p);
            }
        }
        let eligible = (0..self.tasks.len()).filter(|&i| self.eligible(i));
        match self.rule {
            Rule::FixedPriority | Rule::Deferrable | Rule::Sporadic => eligible.max_by_key(|&i| {
                let place = self.woken.iter().position(|&t| t == i);
                (self.priorities[i], std::cmp::Reverse(place))
            }),
            Rule::Edf => eligible.min_by_key(|&i| {
                let release = self.jobs[i][self.head[i]].0;
                (release + deadline_ns(&self.tasks[i]), self.activation[i])
            }),
            Rule::Cbs { .. } => {
                eligible.min_by_key(|&i| (self.servers[i].deadline, self.servers[i].order))
            }
        }
    }

    /// Task `i` runs from `now` for one millisecond.
    fn run(&mut self, i: usize, now: u64) {
        let job = self.head[i];
        self.left[i][job] -= 1;
        match self.rule {
            Rule::Deferrable => self.budget[i] -= 1,
            Rule::Sporadic => {
                // Accounting at the end of the millisecond: what the used budget covers is
                // planned (Algorithm 1, lines 1-4); a head not yet due depletes the task
                // (lines 14-18), unless its job completes now and it blocks instead.
                let server = &mut self.sporadic[i];
                server.queue.run(self.tasks[i].server_period);
                if server.queue.head_time() > now + 1 {
                    server.standing = Standing::Depleted;
                }
            }
            Rule::Cbs { hard } => {
                self.servers[i].budget -= MS;
                if self.servers[i].budget == 0 {
                    if hard {
                        self.throttle(i);
                    } else {
                        self.servers[i].budget = self.tasks[i].budget * MS;
                        self.servers[i].deadline += self.tasks[i].server_period * MS;
                        self.queue(i);
                    }
                }
            }
            Rule::FixedPriority | Rule::Edf => {}
        }
        if self.left[i][job] > 0 {
            return;
        }
        let done = now + 1;
        self.jobs[i][job].2 = Some(done * MS);
        self.head[i] += 1;
        let task = &self.tasks[i];
        let next_release = task.offset + self.jobs[i].len() as u64 * task.period;
        let backlog = self.head[i] < self.left[i].len();
        if !backlog && next_release > done {
            self.suspended[i] = true;
            self.woken.retain(|&t| t != i);
            self.armed[i] = self.next();
            if self.rule == Rule::Sporadic {
                self.sporadic[i].block(done, next_release, task.server_period);
            }
        } else {
            self.activation[i] = self.next();
        }
        if matches!(self.rule, Rule::Cbs { .. }) && !backlog {
            // The server goes idle; a job released exactly now arrives at once.
            self.servers[i].phase = Phase::Idle;
            if next_release == done {
                self.arrive(i, done);
            }
        }
    }

    /// Every job up to the horizon, with its miss: a job misses when it completes after its
    /// deadline, or is unfinished at the end with its deadline at or before the horizon.
    fn schedule(mut self, horizon: u64) -> Vec<Vec<JobRow>> {
        for now in 0..=horizon {
            self.release(now);
            // At the horizon the chosen task is dispatched and runs no further: its job has
            // started then (lib.rs, "Ties", 6).
            let chosen = self.choose(now);
            let previous = std::mem::replace(&mut self.previous, chosen);
            let Some(i) = chosen else {
                continue;
            };
            if previous != chosen {
                self.switched[i] = now;
            }
            self.jobs[i][self.head[i]].1.get_or_insert(now * MS);
            if now < horizon {
                self.run(i, now);
            }
        }
        for (i, task) in self.tasks.iter().enumerate() {
            for job in &mut self.jobs[i] {
                let deadline = job.0 + deadline_ns(task);
                job.3 = match job.2 {
                    Some(done) => done > deadline,
                    None => deadline <= horizon * MS,
                };
            }
        }
        self.jobs
    }
}

/// The reference schedule: every job of every task, in release order per task.
fn reference(rule: Rule, tasks: &[Drawn], priorities: &[u8], horizon: u64) -> Vec<Vec<JobRow>> {
    Reference::new(rule, tasks, priorities).schedule(horizon)
}

/// The same set on the machine, as a scenario built from model values.
fn machine(policy: PolicyKind, tasks: &[Drawn], priorities: &[u8], horizon: u64) -> Outcome {
    let specs: Vec<TaskSpec> = tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let priority = policy.has_priorities().then_some(priorities[i]);
            let mut spec = periodic(
                &format!("t{i}"),
                0,
                priority,
                ms(task.execution),
                ms(task.period),
                ms(task.offset),
            );
            spec.deadline = Some(Duration::from_nanos(deadline_ns(task)));
            spec.reservation = match policy {
                PolicyKind::FixedPriority | PolicyKind::Edf => None,
                _ => Some(
                    Reservation::new(ms(task.budget), ms(task.server_period))
                        .with_non_preemptive(ms(task.non_preemptive))
                        .with_replenishments(task.replenishments),
                ),
            };
            spec
        })
        .collect();
    run_jobs(&scenario(policy, 1, ms(horizon), specs))
}

/// Checks the machine's jobs and its per-task counts against the reference's.
fn agree(
    policy: PolicyKind,
    rule: Rule,
    tasks: &[Drawn],
    priorities: &[u8],
    horizon: u64,
) -> Result<(), TestCaseError> {
    let expected = reference(rule, tasks, priorities, horizon);
    let outcome = machine(policy, tasks, priorities, horizon);
    let got = rows(&outcome, tasks.len());
    for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
        prop_assert_eq!(got, expected, "task {} under {:?}", i, policy);
        let metrics = &outcome.tasks[i];
        prop_assert_eq!(metrics.jobs, expected.len() as u64);
        let completed = expected.iter().filter(|j| j.2.is_some()).count() as u64;
        prop_assert_eq!(metrics.completed, completed);
        let misses = expected.iter().filter(|j| j.3).count() as u64;
        prop_assert_eq!(metrics.misses, misses, "task {} under {:?}", i, policy);
    }
    Ok(())
}

/// Up to five tasks: periods 2-12 ms, executions up to the period (so overload is common),
/// offsets up to 6 ms, budgets 1 ms to the period.
fn drawn_tasks() -> impl Strategy<Value = Vec<Drawn>> {
    let task = (2u64..=12, 1u64..=12, 0u64..=6, 1u64..=12).prop_map(
        |(period, execution, offset, budget)| Drawn {
            period,
            execution: execution.min(period),
            offset,
            budget: budget.min(period),
            server_period: period,
            deadline_shift: 0,
            non_preemptive: 0,
            replenishments: Reservation::DEFAULT_REPLENISHMENTS,
        },
    );
    proptest::collection::vec(task, 1..=5)
}

/// Shifts task `i`'s deadline by `i` ns, so no two tasks' absolute deadlines are equal.
fn distinct_deadlines(tasks: Vec<Drawn>) -> Vec<Drawn> {
    tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| Drawn {
            deadline_shift: i as u64,
            ..task
        })
        .collect()
}

/// A task set with distinct priorities: a random order of importance.
fn task_set() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    drawn_tasks()
        .prop_map(distinct_deadlines)
        .prop_flat_map(|tasks| {
            let priorities: Vec<u8> = (1..=tasks.len() as u8).collect();
            (Just(tasks), Just(priorities).prop_shuffle())
        })
}

/// A task set whose priorities are 1 or 2, so most sets have ties.
fn tied_task_set() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    drawn_tasks().prop_flat_map(|tasks| {
        let n = tasks.len();
        (Just(tasks), proptest::collection::vec(1u8..=2, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fixed_priority_schedules_as_the_reference((tasks, priorities) in task_set(), horizon in 1u64..=80) {
        agree(PolicyKind::FixedPriority, Rule::FixedPriority, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn fixed_priority_breaks_ties_as_the_reference(
        (tasks, priorities) in tied_task_set(),
        horizon in 1u64..=80,
    ) {
        agree(PolicyKind::FixedPriority, Rule::FixedPriority, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn edf_schedules_as_the_reference((tasks, priorities) in task_set(), horizon in 1u64..=80) {
        agree(PolicyKind::Edf, Rule::Edf, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn spr_non_preemptive_regions_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        regions in proptest::collection::vec(0u64..=4, 5),
        horizon in 1u64..=80,
    ) {
        let tasks: Vec<Drawn> = tasks
            .into_iter()
            .zip(regions)
            .map(|(task, non_preemptive)| Drawn { non_preemptive, ..task })
            .collect();
        agree(PolicyKind::SprDeferrable, Rule::Deferrable, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn edf_breaks_ties_as_the_reference(tasks in drawn_tasks(), horizon in 1u64..=80) {
        let priorities = vec![0; tasks.len()];
        agree(PolicyKind::Edf, Rule::Edf, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn deferrable_servers_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        agree(PolicyKind::DeferrableServer, Rule::Deferrable, &tasks, &priorities, horizon)?;
        agree(PolicyKind::SprDeferrable, Rule::Deferrable, &tasks, &priorities, horizon)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn constant_bandwidth_servers_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        agree(PolicyKind::Cbs, Rule::Cbs { hard: false }, &tasks, &priorities, horizon)?;
        agree(PolicyKind::HardCbs, Rule::Cbs { hard: true }, &tasks, &priorities, horizon)?;
    }
}

/// What a sporadic-rule set draws beyond its tasks, per task: the queue capacity `S`, the
/// non-preemptive region (ms) and the server period (ms, drawn apart from the task's, so
/// activations fall out of step with replenishments and queues fill).
#[derive(Clone, Debug)]
struct ServerDraw {
    queues: Vec<u16>,
    regions: Vec<u64>,
    periods: Vec<u64>,
}

fn server_draw(regions: bool) -> impl Strategy<Value = ServerDraw> {
    let max_region = if regions { 4 } else { 0 };
    (
        proptest::collection::vec(1u16..=4, 5),
        proptest::collection::vec(0u64..=max_region, 5),
        proptest::collection::vec(2u64..=12, 5),
    )
        .prop_map(|(queues, regions, periods)| ServerDraw {
            queues,
            regions,
            periods,
        })
}

/// Gives task `i` the `i`-th of each drawn server parameter, its budget cut to its server
/// period.
fn with_servers(tasks: Vec<Drawn>, draw: &ServerDraw) -> Vec<Drawn> {
    tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| Drawn {
            replenishments: draw.queues[i],
            non_preemptive: draw.regions[i],
            server_period: draw.periods[i],
            budget: task.budget.min(draw.periods[i]),
            ..task
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Queues of 1 to 4 entries and server periods apart from the tasks' fill the queues and
    /// put activations between replenishments, so the merge into the last entry, the merge of
    /// expired entries on activation and a wake-up postponed to the head are all exercised.
    #[test]
    fn sporadic_servers_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        draw in server_draw(false),
        horizon in 1u64..=80,
    ) {
        let tasks = with_servers(tasks, &draw);
        agree(PolicyKind::Spr, Rule::Sporadic, &tasks, &priorities, horizon)?;
        agree(PolicyKind::SporadicServer, Rule::Sporadic, &tasks, &priorities, horizon)?;
    }

    #[test]
    fn spr_sporadic_non_preemptive_regions_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        draw in server_draw(true),
        horizon in 1u64..=80,
    ) {
        let tasks = with_servers(tasks, &draw);
        agree(PolicyKind::Spr, Rule::Sporadic, &tasks, &priorities, horizon)?;
    }

    /// Deferrable and constant-bandwidth servers whose periods are not their tasks'.
    #[test]
    fn servers_with_their_own_periods_schedule_as_the_reference(
        (tasks, priorities) in task_set(),
        draw in server_draw(false),
        horizon in 1u64..=80,
    ) {
        let tasks = with_servers(tasks, &draw);
        agree(PolicyKind::DeferrableServer, Rule::Deferrable, &tasks, &priorities, horizon)?;
        agree(PolicyKind::SprDeferrable, Rule::Deferrable, &tasks, &priorities, horizon)?;
        agree(PolicyKind::Cbs, Rule::Cbs { hard: false }, &tasks, &priorities, horizon)?;
        agree(PolicyKind::HardCbs, Rule::Cbs { hard: true }, &tasks, &priorities, horizon)?;
    }
}

/// Per task, each job's (release, completion) in nanoseconds.
type Completions = Vec<Vec<(u64, Option<u64>)>>;

/// The machine's jobs of a component system of each task, as (release, completion) in nanoseconds, and
/// its per-task misses: the same set as `tasks`, each job one `execute` step and no CPI.
fn component_machine(
    tasks: &[Drawn],
    priorities: &[u8],
    spr: bool,
    horizon: u64,
) -> (Completions, Vec<u64>) {
    use bulwark_sim::components::{run, ComponentSystemConfig, LoweredTask, ProtocolCosts};
    use bulwark_sim::components::{RunOptions, Step as ComponentStep};
    let system = ComponentSystemConfig {
        tasks: tasks
            .iter()
            .zip(priorities)
            .enumerate()
            .map(|(i, (task, &priority))| LoweredTask {
                name: format!("t{i}"),
                priority: bulwark_core::Priority(priority),
                period: ms(task.period),
                offset: ms(task.offset),
                body: vec![ComponentStep::Execute(ms(task.execution))],
                reservation: spr.then(|| Reservation::new(ms(task.budget), ms(task.period))),
            })
            .collect(),
        cpis: Vec::new(),
        costs: ProtocolCosts::ZERO,
    };
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(ms(horizon)),
        record_jobs: true,
        record_trace: false,
    };
    let outcome = run(&system, options).expect("a valid system");
    let jobs = outcome
        .tasks
        .iter()
        .map(|t| {
            t.job_records
                .iter()
                .map(|j| (j.release.as_nanos(), j.completion.map(Instant::as_nanos)))
                .collect()
        })
        .collect();
    (jobs, outcome.tasks.iter().map(|t| t.misses).collect())
}

/// The same tasks with their deadlines at their periods, as component systems have them.
fn period_deadlines(tasks: Vec<Drawn>) -> Vec<Drawn> {
    tasks
        .into_iter()
        .map(|task| Drawn {
            deadline_shift: 0,
            ..task
        })
        .collect()
}

/// The machine's rows without first starts and misses, to compare with the component
/// machine's records.
fn releases_and_completions(rows: &[Vec<JobRow>]) -> Completions {
    rows.iter()
        .map(|jobs| jobs.iter().map(|j| (j.0, j.2)).collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A component system on the one machine is a fixed-priority system: with no CPI it must release
    /// and complete every job as the reference does, and count the same misses (its
    /// deadlines are the periods).
    #[test]
    fn the_component_machine_without_cpis_schedules_as_the_reference(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        let tasks = period_deadlines(tasks);
        let expected = reference(Rule::FixedPriority, &tasks, &priorities, horizon);
        let (jobs, misses) = component_machine(&tasks, &priorities, false, horizon);
        prop_assert_eq!(&jobs, &releases_and_completions(&expected));
        let expected_misses: Vec<u64> = expected
            .iter()
            .map(|jobs| jobs.iter().filter(|j| j.3).count() as u64)
            .collect();
        prop_assert_eq!(misses, expected_misses);
    }

    /// And with each task in an SPR reservation (the scheduling
    /// contexts, sporadic rule), as the scenario machine's SPR.
    #[test]
    fn the_component_machine_in_reservations_schedules_as_the_scenario_machine(
        (tasks, priorities) in task_set(),
        horizon in 1u64..=80,
    ) {
        let tasks = period_deadlines(tasks);
        let scenario = machine(PolicyKind::Spr, &tasks, &priorities, horizon);
        let (jobs, _) = component_machine(&tasks, &priorities, true, horizon);
        prop_assert_eq!(jobs, releases_and_completions(&rows(&scenario, tasks.len())));
    }
}

/// The reference itself, on a set worked by hand: t0 (priority high, 2 ms every 4 ms) and
/// t1 (3 ms every 6 ms). Fixed priority: t0 runs 0-2, 4-6, 8-10; t1 runs 2-4 and 6-7, so
/// completes at 7 > 6 and misses; its second job (released 6) runs 7-8 and 10-12, completing
/// at 12 > 12 - 1 ns: a miss too.
#[test]
fn the_reference_runs_a_hand_worked_set() {
    let tasks = [
        Drawn {
            period: 4,
            execution: 2,
            offset: 0,
            budget: 4,
            server_period: 4,
            deadline_shift: 0,
            non_preemptive: 0,
            replenishments: Reservation::DEFAULT_REPLENISHMENTS,
        },
        Drawn {
            period: 6,
            execution: 3,
            offset: 0,
            budget: 6,
            server_period: 6,
            deadline_shift: 1,
            non_preemptive: 0,
            replenishments: Reservation::DEFAULT_REPLENISHMENTS,
        },
    ];
    let jobs = reference(Rule::FixedPriority, &tasks, &[2, 1], 12);
    assert_eq!(
        jobs[1],
        [
            (0, Some(2 * MS), Some(7 * MS), true),
            (6 * MS, Some(7 * MS), Some(12 * MS), true),
            (12 * MS, None, None, false),
        ]
    );
    assert_eq!(jobs[0].len(), 4);
    assert!(jobs[0].iter().all(|j| !j.3));
}
