//! The scenario machine's `[[cluster]]`s against an independent reference: global
//! scheduling of sporadic reservations on one cluster of one to three cores, by fixed
//! priority and by EDF, beside table-driven time partitions, with one periodic task per
//! reservation and no server. Every job's release and completion must be those of a plain
//! millisecond-by-millisecond simulation written here from the MC-IPC paper's section III
//! rules, sharing no code with the machine or the clustered scheduler:
//!
//! - a time partition runs on its own core whenever it is active (a pending job) during one
//!   of its slots, which repeat with the cycle `H`; it outranks every sporadic reservation;
//! - on the other cores, at each instant, the most important sporadic reservations that are
//!   active and have budget are selected, and each selected reservation's task runs (one task
//!   per reservation, so a selected reservation always has a ready task) and drains its
//!   budget; ties go to the lower reservation id;
//! - a reservation's budget is set to `e` when a job is released while it is inactive, at the
//!   earliest `p` after its last replenishment; what is left is discarded when the job
//!   completes; a reservation still active when its budget runs out is replenished then, or
//!   `p` after its last replenishment if that is later. Under EDF its deadline is the
//!   replenishment time plus `p`;
//! - a constant-bandwidth server (EDF only) instead keeps its budget `c` and deadline `d`
//!   while idle; a job released at `r` while it is idle keeps them if `c < (d - r) e / p`,
//!   else renews them (`d = r + p`, `c = e`); an exhausted budget is recharged at once and
//!   the deadline postponed by `p`;
//! - an SPR server (fixed priority only) keeps the SPR paper's replenishment queue: budget used
//!   from an activation comes back `p` after it, a completion splits the head, a release
//!   merges the due entries and restarts the head;
//! - a task's jobs never overlap: job `j` is released at `offset + j T`; if job `j - 1` is
//!   still running then, job `j` is pending from its release (section III: the reservation
//!   is "active if (one of) the contained tasks has a pending job"), so the reservation
//!   stays active with its budget through `j - 1`'s completion, and the task goes on with
//!   job `j` at once. A release at the very instant of the completion comes after it, to a
//!   reservation that was left inactive;
//! - Vestal's mode switch (section VII), for sporadic reservations of high criticality with a
//!   low budget `e^L`: in low mode, once such a reservation's job has consumed `e^L` since the
//!   later of its release and its last replenishment and is still pending when the instant's
//!   completions, releases and replenishments are done, the cluster switches to high mode,
//!   which ranks every low-criticality sporadic reservation (servers included) below every
//!   other one, keeping its budget and deadline. The cluster returns to low mode at the first
//!   instant at which no partition or sporadic reservation has a pending job, before that
//!   instant's releases. Partitions are neither monitored nor demoted.
//!
//! Every parameter is whole milliseconds and costs are zero, so stepping one millisecond at a
//! time is exact. The reference's run is exclusive of its end: nothing happens at the
//! horizon (see `scenario_machine` for how the scenario machine's run is read alike).

use bulwark_core::reservation::clustered::{Replenishment, SporadicOrder};
use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::Options;
use bulwark_spec::{
    Behaviour, ClusterMember, ClusterSpec, MemberKind, PolicyKind, Scenario, TaskSpec,
};
use proptest::prelude::*;
use replenishment_queue::Queue;

mod common;
mod replenishment_queue;

const MS: u64 = 1_000_000;

/// One reservation and its task, in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Drawn {
    budget: u64,
    server_period: u64,
    period: u64,
    execution: u64,
    offset: u64,
    /// A soft constant-bandwidth server instead of a sporadic reservation (EDF only).
    bandwidth: bool,
    /// An SPR server with a queue of this many entries instead (fixed priority only).
    spr: Option<u16>,
    /// Of high criticality with this low budget `e^L` (at most `budget`, which is then
    /// `e^H`; plain sporadic reservations only), instead of low criticality.
    low_budget: Option<u64>,
}

/// A partition's task, in milliseconds: the partition owns the milliseconds of the cycle
/// marked `owner` in its core's row of the [`Table`].
#[derive(Clone, Copy, Debug)]
struct Partitioned {
    core: usize,
    owner: u8,
    period: u64,
    execution: u64,
    offset: u64,
}

/// The partitions' table: the cycle `H` (ms) and, per core, each millisecond's owner (0:
/// none). A partition's slots are the runs of its owner on its core, so two of its slots
/// never touch.
#[derive(Clone, Debug, Default)]
struct Table {
    cycle: u64,
    owners: Vec<Vec<u8>>,
}

impl Table {
    fn owns(&self, partition: &Partitioned, now: u64) -> bool {
        self.owners[partition.core][(now % self.cycle) as usize] == partition.owner
    }

    /// The runs of `owner` on `core`, as `[start, end)` in ms within the cycle.
    fn slots(&self, core: usize, owner: u8) -> Vec<(u64, u64)> {
        let row = &self.owners[core];
        let mut slots = Vec::new();
        let mut start = None;
        for (ms, &o) in row.iter().enumerate().chain([(row.len(), &0)]) {
            match (o == owner, start) {
                (true, None) => start = Some(ms as u64),
                (false, Some(from)) => {
                    slots.push((from, ms as u64));
                    start = None;
                }
                _ => {}
            }
        }
        slots
    }
}

/// A cluster to run: sporadic reservations (ids `0..sets.len()`, their tasks first), then the
/// partitions.
#[derive(Clone, Debug)]
struct System {
    sets: Vec<Drawn>,
    priorities: Vec<u8>,
    edf: bool,
    cores: usize,
    table: Table,
    partitions: Vec<Partitioned>,
}

impl System {
    /// Per task, in task order: (period, execution, offset).
    fn shapes(&self) -> Vec<(u64, u64, u64)> {
        let sporadic = self.sets.iter().map(|s| (s.period, s.execution, s.offset));
        let partitions = (self.partitions.iter()).map(|p| (p.period, p.execution, p.offset));
        sporadic.chain(partitions).collect()
    }
}

/// One job: (release, completion), in milliseconds.
type JobRow = (u64, Option<u64>);

/// A reservation's budget under its rule, as the reference keeps it (milliseconds).
#[derive(Clone, Debug)]
enum Budget {
    /// Section III's sporadic reservation: the budget left, the last replenishment, the EDF
    /// deadline (the last replenishment plus `p`) and what section VII's monitor counts: the
    /// budget consumed since the later of the job's release and the last replenishment.
    Sporadic {
        left: u64,
        replenished: Option<u64>,
        deadline: u64,
        consumed: u64,
    },
    /// A soft constant-bandwidth server's `(c, d)`.
    Bandwidth { left: u64, deadline: u64 },
    /// An SPR server's replenishment queue.
    Spr(Queue),
}

impl Budget {
    fn new(set: &Drawn) -> Self {
        match (set.bandwidth, set.spr) {
            (true, _) => Budget::Bandwidth {
                left: 0,
                deadline: 0,
            },
            (false, Some(capacity)) => Budget::Spr(Queue::new(set.budget, capacity)),
            (false, None) => Budget::Sporadic {
                left: 0,
                replenished: None,
                deadline: 0,
                consumed: 0,
            },
        }
    }

    /// A job is released at `now` to the inactive reservation.
    fn release(&mut self, set: &Drawn, now: u64) {
        match self {
            // A job arriving at an idle server: keep (c, d) while c < (d - r) e / p.
            Budget::Bandwidth { left, deadline } => {
                let keeps =
                    now < *deadline && *left * set.server_period < (*deadline - now) * set.budget;
                if !keeps {
                    (*left, *deadline) = (set.budget, now + set.server_period);
                }
            }
            // Algorithm 3 at the release (an event: no wake-up time asked for).
            Budget::Spr(queue) => {
                queue.activate(now, u64::MAX);
            }
            // The budget is set, if `p` has passed since the last replenishment; the monitor
            // counts the new job from zero.
            Budget::Sporadic { consumed, .. } => {
                *consumed = 0;
                self.replenish(set, now);
            }
        }
    }

    /// At `now`, the reservation active: a sporadic one out of budget is replenished once
    /// `p` has passed since its last replenishment.
    fn replenish(&mut self, set: &Drawn, now: u64) {
        if let Budget::Sporadic {
            left,
            replenished,
            deadline,
            consumed,
        } = self
        {
            let allowed = replenished.is_none_or(|last| now >= last + set.server_period);
            if *left == 0 && allowed {
                (*left, *replenished, *consumed) = (set.budget, Some(now), 0);
                *deadline = now + set.server_period;
            }
        }
    }

    /// Whether budget is available at `now`.
    fn available(&self, now: u64) -> bool {
        match self {
            Budget::Sporadic { left, .. } | Budget::Bandwidth { left, .. } => *left > 0,
            // The budget in use is the head's, once it is due.
            Budget::Spr(queue) => queue.head_time() <= now,
        }
    }

    /// The EDF priority (SPR servers are under fixed priorities only).
    fn deadline(&self) -> u64 {
        match self {
            Budget::Sporadic { deadline, .. } | Budget::Bandwidth { deadline, .. } => *deadline,
            Budget::Spr(_) => u64::MAX,
        }
    }

    /// The reservation is selected for one millisecond.
    fn run(&mut self, set: &Drawn) {
        match self {
            Budget::Sporadic { left, consumed, .. } => {
                *left -= 1;
                *consumed += 1;
            }
            Budget::Bandwidth { left, deadline } => {
                *left -= 1;
                if *left == 0 {
                    // Recharged at once, the deadline postponed.
                    *left = set.budget;
                    *deadline += set.server_period;
                }
            }
            // Algorithm 1, lines 1-4: a consumed head comes back p after its time.
            Budget::Spr(queue) => queue.run(set.server_period),
        }
    }

    /// Section VII: a high-criticality reservation's pending job has consumed its low budget.
    fn overran(&self, set: &Drawn) -> bool {
        match (self, set.low_budget) {
            (Budget::Sporadic { consumed, .. }, Some(low_budget)) => *consumed >= low_budget,
            _ => false,
        }
    }

    /// The reservation's job completes at `done`, leaving it inactive.
    fn complete(&mut self, set: &Drawn, done: u64) {
        match self {
            // The budget is discarded with the job.
            Budget::Sporadic { left, .. } => *left = 0,
            // A server keeps (c, d).
            Budget::Bandwidth { .. } => {}
            // Algorithm 1, lines 10-13: the used part is split off the head.
            Budget::Spr(queue) => queue.suspend(done, set.server_period),
        }
    }
}

fn reference(system: &System, horizon: u64) -> Vec<Vec<JobRow>> {
    let sets = &system.sets;
    let n = sets.len();
    let tasks = n + system.partitions.len();
    let shape = system.shapes();
    let mut jobs: Vec<Vec<JobRow>> = vec![Vec::new(); tasks];
    let mut left: Vec<Option<u64>> = vec![None; tasks];
    let mut next_release: Vec<u64> = shape.iter().map(|s| s.2).collect();
    let mut budgets: Vec<Budget> = sets.iter().map(Budget::new).collect();
    let mut high_mode = false;
    for now in 0..horizon {
        // Back to low mode at an idle instant, before its releases.
        if left.iter().all(Option::is_none) {
            high_mode = false;
        }
        for i in 0..tasks {
            let released = left[i].is_none() && next_release[i] == now;
            if released {
                jobs[i].push((now, None));
                left[i] = Some(shape[i].1);
            }
            if i >= n {
                continue;
            }
            if released {
                budgets[i].release(&sets[i], now);
            } else if left[i].is_some() {
                budgets[i].replenish(&sets[i], now);
            }
        }
        // Once the instant's completions, releases and replenishments are done, a pending job
        // past its low budget switches the cluster to high mode.
        if (0..n).any(|i| left[i].is_some() && budgets[i].overran(&sets[i])) {
            high_mode = true;
        }
        let demoted = |i: usize| high_mode && sets[i].low_budget.is_none();
        // Partitions in their slots take their cores; the sporadic ones share the rest.
        let mut running: Vec<usize> = (0..system.partitions.len())
            .filter(|&k| left[n + k].is_some() && system.table.owns(&system.partitions[k], now))
            .map(|k| n + k)
            .collect();
        let free = system.cores - running.len();
        let mut ready: Vec<usize> = (0..n)
            .filter(|&i| left[i].is_some() && budgets[i].available(now))
            .collect();
        if system.edf {
            ready.sort_by_key(|&i| (demoted(i), budgets[i].deadline(), i));
        } else {
            ready.sort_by_key(|&i| (demoted(i), std::cmp::Reverse(system.priorities[i]), i));
        }
        for &i in ready.iter().take(free) {
            budgets[i].run(&sets[i]);
            running.push(i);
        }
        for i in running {
            let work = left[i].as_mut().expect("a pending job");
            *work -= 1;
            if *work == 0 {
                let done = now + 1;
                let job = jobs[i].len() as u64;
                jobs[i].last_mut().expect("its job").1 = Some(done);
                let (period, execution, offset) = shape[i];
                let next = offset + job * period;
                if next < done {
                    // Pending since its plan: the reservation stays active with its budget,
                    // and the task goes on with that job (unseen at the horizon).
                    if done < horizon {
                        jobs[i].push((next, None));
                        left[i] = Some(execution);
                    }
                    continue;
                }
                left[i] = None;
                if let Some(budget) = budgets.get_mut(i) {
                    budget.complete(&sets[i], done);
                }
                next_release[i] = next;
            }
        }
    }
    // Nothing happens at the horizon: a job completing exactly then is not seen complete.
    for rows in &mut jobs {
        for row in rows.iter_mut() {
            if row.1 == Some(horizon) {
                row.1 = None;
            }
        }
    }
    jobs
}

/// The same system as a scenario with one `[[cluster]]` on the scenario machine (sporadic,
/// constant-bandwidth, SPR and high-criticality reservations, time partitions), its jobs read
/// as the reference writes them. The scenario machine runs through the horizon itself, so a
/// job queued behind an unfinished one or released at the horizon is not the reference's,
/// and a completion at the horizon is not seen.
fn scenario_machine(system: &System, horizon: u64) -> Vec<Vec<JobRow>> {
    let ms = |n: u64| Duration::from_nanos(n * MS);
    let periodic = |(period, execution, offset): (u64, u64, u64)| Behaviour::Periodic {
        period: ms(period),
        offset: ms(offset),
        execution: bulwark_spec::Execution::Fixed(ms(execution)),
    };
    let shapes = system.shapes();
    let mut tasks = Vec::new();
    let mut members = Vec::new();
    for (i, (set, &priority)) in system.sets.iter().zip(&system.priorities).enumerate() {
        tasks.push(TaskSpec {
            name: format!("t{i}"),
            core: 0,
            priority: (!system.edf).then_some(Priority(priority)),
            reservation: Some(Reservation::new(ms(set.budget), ms(set.server_period))),
            deadline: None,
            behaviour: periodic(shapes[i]),
        });
        let replenishment = match (set.bandwidth, set.spr) {
            (true, _) => Replenishment::ConstantBandwidth,
            (false, Some(slots)) => Replenishment::Spr { slots },
            (false, None) => Replenishment::Sporadic,
        };
        members.push(ClusterMember {
            task: i,
            kind: MemberKind::Sporadic {
                replenishment,
                low_budget: set.low_budget.map(ms),
            },
        });
    }
    for (k, partition) in system.partitions.iter().enumerate() {
        let task = system.sets.len() + k;
        tasks.push(TaskSpec {
            name: format!("p{k}"),
            core: 0,
            priority: Some(Priority(partition.owner)),
            reservation: None,
            deadline: None,
            behaviour: periodic(shapes[task]),
        });
        let slots = system.table.slots(partition.core, partition.owner);
        members.push(ClusterMember {
            task,
            kind: MemberKind::Partition {
                core: partition.core as u16,
                slots: slots.into_iter().map(|(a, b)| (ms(a), ms(b))).collect(),
            },
        });
    }
    let cores = system.cores as u16;
    let scenario = Scenario {
        seed: 1,
        clusters: vec![ClusterSpec {
            slack_reclamation: false,
            name: "c".into(),
            cores: (0..cores).collect(),
            order: if system.edf {
                SporadicOrder::EarliestDeadlineFirst
            } else {
                SporadicOrder::FixedPriority
            },
            cycle: ms(system.table.cycle),
            members,
        }],
        ..Scenario::new(
            "cluster",
            PolicyKind::FixedPriority,
            cores,
            ms(horizon),
            tasks,
        )
    };
    let options = Options {
        record_jobs: true,
        ..Options::default()
    };
    let outcome = common::run_checked(&scenario, &options);
    let mut jobs: Vec<_> = outcome.jobs.expect("jobs were recorded");
    jobs.sort_by_key(|job| (job.task, job.job));
    let to_ms = |t: Instant| t.as_nanos() / MS;
    let mut rows = vec![Vec::new(); shapes.len()];
    for job in &jobs {
        let task_rows: &mut Vec<JobRow> = &mut rows[job.task.index()];
        // Queued behind an unfinished job: the reference never starts it.
        if matches!(task_rows.last(), Some(&(_, None))) {
            continue;
        }
        let release = to_ms(job.release);
        if release >= horizon {
            continue;
        }
        let completion = job.completion.map(to_ms).filter(|&done| done < horizon);
        task_rows.push((release, completion));
    }
    rows
}

/// Sporadic reservations alone, on `cores` cores.
fn sporadic_only(sets: Vec<Drawn>, priorities: Vec<u8>, edf: bool, cores: usize) -> System {
    System {
        sets,
        priorities,
        edf,
        cores,
        table: Table::default(),
        partitions: Vec::new(),
    }
}

/// Up to six reservations: budgets 1 ms to the server period, server periods and task
/// periods 2-12 ms, executions up to the task period (overloads included), offsets up to 6 ms.
fn drawn_sets() -> impl Strategy<Value = Vec<Drawn>> {
    let set = (1u64..=12, 2u64..=12, 2u64..=12, 1u64..=12, 0u64..=6).prop_map(
        |(budget, server_period, period, execution, offset)| Drawn {
            budget: budget.min(server_period),
            server_period,
            period,
            execution: execution.min(period),
            offset,
            bandwidth: false,
            spr: None,
            low_budget: None,
        },
    );
    proptest::collection::vec(set, 1..=6)
}

/// A set with priorities drawn from 1 to 3, so ties (broken by reservation id) are common.
fn prioritised_sets() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    with_priorities(drawn_sets())
}

/// Two to four reservations whose tasks execute at most half their periods, so that the
/// cluster has idle instants (and so returns to low mode) within the horizon.
fn light_sets() -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    let light = |set: Drawn| Drawn {
        execution: set.execution.min(set.period / 2).max(1),
        ..set
    };
    with_priorities(
        drawn_sets().prop_filter_map("two to four reservations", move |sets| {
            (2..=4)
                .contains(&sets.len())
                .then(|| sets.into_iter().map(light).collect())
        }),
    )
}

fn with_priorities(
    sets: impl Strategy<Value = Vec<Drawn>>,
) -> impl Strategy<Value = (Vec<Drawn>, Vec<u8>)> {
    sets.prop_flat_map(|sets| {
        let n = sets.len();
        (Just(sets), proptest::collection::vec(1u8..=3, n))
    })
}

/// `sets`, each given its own draw of `extras` by `give`.
fn each<T>(sets: Vec<Drawn>, extras: Vec<T>, give: impl Fn(Drawn, T) -> Drawn) -> Vec<Drawn> {
    sets.into_iter()
        .zip(extras)
        .map(|(set, extra)| give(set, extra))
        .collect()
}

/// A reservation's kind in Vestal's model: 0 low criticality, 1 high with the drawn low
/// budget (ms), 2 a server with the drawn queue capacity if SPR.
fn criticality() -> impl Strategy<Value = (u8, u64, u16)> {
    (0u8..3, 1u64..=12, 1u16..=4)
}

/// `sets` given their drawn kinds: servers are CBS under EDF and SPR under fixed priorities.
fn critical(sets: Vec<Drawn>, kinds: Vec<(u8, u64, u16)>, edf: bool) -> Vec<Drawn> {
    each(
        sets,
        kinds,
        |set, (kind, low_budget, capacity)| match kind {
            0 => set,
            1 => Drawn {
                low_budget: Some(low_budget.min(set.budget)),
                ..set
            },
            _ if edf => Drawn {
                bandwidth: true,
                ..set
            },
            _ => Drawn {
                spr: Some(capacity),
                ..set
            },
        },
    )
}

/// A table on `cores` cores (cycle 4-12 ms, each millisecond of each core owned by one of two
/// partitions of that core or by none), with a periodic task per partition present.
fn tables(cores: usize) -> impl Strategy<Value = (Table, Vec<Partitioned>)> {
    (4u64..=12).prop_flat_map(move |cycle| {
        let row = proptest::collection::vec(0u8..=2, cycle as usize);
        let shapes = proptest::collection::vec((2u64..=12, 1u64..=12, 0u64..=6), 2 * cores);
        (proptest::collection::vec(row, cores), shapes).prop_map(move |(owners, shapes)| {
            let mut partitions = Vec::new();
            for (core, row) in owners.iter().enumerate() {
                for owner in 1..=2u8 {
                    if row.contains(&owner) {
                        let (period, execution, offset) = shapes[2 * core + usize::from(owner) - 1];
                        partitions.push(Partitioned {
                            core,
                            owner,
                            period,
                            execution: execution.min(period),
                            offset,
                        });
                    }
                }
            }
            (Table { cycle, owners }, partitions)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn global_fixed_priority_reservations_schedule_as_the_reference(
        (sets, priorities) in prioritised_sets(),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let system = sporadic_only(sets, priorities, false, cores);
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    #[test]
    fn global_edf_reservations_schedule_as_the_reference(
        sets in drawn_sets(),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let priorities = vec![1; sets.len()];
        let system = sporadic_only(sets, priorities, true, cores);
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    /// About half the reservations are constant-bandwidth servers, under EDF with the rest.
    #[test]
    fn constant_bandwidth_servers_schedule_as_the_reference(
        sets in drawn_sets(),
        servers in proptest::collection::vec(any::<bool>(), 6),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let sets = each(sets, servers, |set, bandwidth| Drawn { bandwidth, ..set });
        let priorities = vec![1; sets.len()];
        let system = sporadic_only(sets, priorities, true, cores);
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    /// About half the reservations are SPR servers (queues of 1 to 4 entries), under fixed
    /// priorities with the rest.
    #[test]
    fn spr_servers_schedule_as_the_reference(
        (sets, priorities) in prioritised_sets(),
        queues in proptest::collection::vec(proptest::option::of(1u16..=4), 6),
        cores in 1usize..=3,
        horizon in 1u64..=80,
    ) {
        let sets = each(sets, queues, |set, spr| Drawn { spr, ..set });
        let system = sporadic_only(sets, priorities, false, cores);
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    /// Vestal's mode switch: each reservation of high criticality (low budget 1 ms up to its
    /// budget), of low criticality, or a server (CBS under EDF, SPR under fixed priorities),
    /// beside partitions on some draws.
    #[test]
    fn mode_switches_schedule_as_the_reference(
        (sets, priorities) in prioritised_sets(),
        kinds in proptest::collection::vec(criticality(), 6),
        ((table, partitions), cores) in (1usize..=3).prop_flat_map(|m| (tables(m), Just(m))),
        with_partitions in any::<bool>(),
        edf in any::<bool>(),
        horizon in 1u64..=80,
    ) {
        let mut system = sporadic_only(critical(sets, kinds, edf), priorities, edf, cores);
        if with_partitions {
            (system.table, system.partitions) = (table, partitions);
        }
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    /// The same on light sets, whose idle instants take the cluster back to low mode.
    #[test]
    fn returns_to_low_mode_schedule_as_the_reference(
        (sets, priorities) in light_sets(),
        kinds in proptest::collection::vec(criticality(), 4),
        cores in 1usize..=2,
        edf in any::<bool>(),
        horizon in 1u64..=80,
    ) {
        let system = sporadic_only(critical(sets, kinds, edf), priorities, edf, cores);
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }

    #[test]
    fn partitions_and_sporadic_reservations_schedule_as_the_reference(
        (sets, priorities) in prioritised_sets(),
        ((table, partitions), cores) in (1usize..=3).prop_flat_map(|m| (tables(m), Just(m))),
        edf in any::<bool>(),
        horizon in 1u64..=80,
    ) {
        let system = System { table, partitions, ..sporadic_only(sets, priorities, edf, cores) };
        prop_assert_eq!(scenario_machine(&system, horizon), reference(&system, horizon));
    }
}

/// A case worked by hand: two cores, three reservations of fixed priority 3, 2, 1 (A, B, C;
/// e = 2, p = 4 each), tasks with C = 3, T = 4, all released at 0. A and B run [0, 2) and
/// exhaust; C runs [2, 4) and exhausts too. At 4 all three are replenished (p after 0) and
/// their second jobs are pending, behind the first. A and B finish their first jobs at 5 and
/// go on with the second (still active, 1 left), exhausting at 6; C, selected at 6, finishes
/// its first job at 7 and its second runs [7, 8). At 8 A and B are back (p after 4): their
/// second jobs complete at 10 as the budget runs out, and the third ones (due at 8) wait for
/// 12. C, back at 8 too but below them, runs [10, 12) and completes its second job at 12.
/// From 12 A and B run their third jobs [12, 14) and C its third [14, 16): all unfinished
/// at the horizon, 16.
#[test]
fn the_reference_and_the_scenario_machine_run_a_hand_worked_set() {
    let set = Drawn {
        budget: 2,
        server_period: 4,
        period: 4,
        execution: 3,
        offset: 0,
        bandwidth: false,
        spr: None,
        low_budget: None,
    };
    let high = [(0, Some(5)), (4, Some(10)), (8, None)];
    let low = [(0, Some(7)), (4, Some(12)), (8, None)];
    let expected = vec![high.to_vec(), high.to_vec(), low.to_vec()];
    let system = sporadic_only(vec![set; 3], vec![3, 2, 1], false, 2);
    assert_eq!(reference(&system, 16), expected);
    assert_eq!(scenario_machine(&system, 16), expected);
}

/// A job that ends as its budget runs out: e = p = 3, C = T = 3, released at 2, one core.
/// The job runs [2, 5) and completes at 5 just as the budget is exhausted. A completion comes
/// first at its instant, so the reservation is inactive at 5, and the job released at 5
/// finds its last replenishment (at 2) p ago: budget 3, so it runs [5, 8), and so on. Taking
/// the reservation as still active at 5 would replenish it then, discard that budget with
/// the completed job, and make the next job wait until 8 (p after 5): one job per 6 ms.
#[test]
fn a_job_ending_with_its_budget_leaves_the_next_release_its_period() {
    let set = Drawn {
        budget: 3,
        server_period: 3,
        period: 3,
        execution: 3,
        offset: 2,
        bandwidth: false,
        spr: None,
        low_budget: None,
    };
    let expected = vec![vec![(2, Some(5)), (5, Some(8)), (8, Some(11)), (11, None)]];
    for edf in [false, true] {
        let system = sporadic_only(vec![set], vec![1], edf, 1);
        assert_eq!(reference(&system, 12), expected);
        assert_eq!(scenario_machine(&system, 12), expected, "edf: {edf}");
    }
}

/// Vestal's mode switch worked by hand, one core, fixed priorities: H of high criticality
/// (e^H = 6, e^L = 2, p = 10, priority 1) with C = 6, T = 10 from 0; L of low criticality
/// (e = 3, p = 10, priority 2) with C = 3, T = 10 from 3.
///
/// ```text
/// 0-2   H runs; at 2 its job has consumed e^L and is pending: high mode, L demoted
/// 3     L is released, below H now: H runs on                         H [2, 6)
/// 6     H completes (its budget runs out as it does); L is pending: still high mode
/// 6-9   L runs and completes; at 9 nothing is pending: low mode again   L [6, 9)
/// 10-20 the same again: H (10, 16), L (13, 19)
/// ```
///
/// Without the switch L, the more important, would run [3, 6) and H complete at 9.
#[test]
fn a_high_criticality_overrun_demotes_the_low_reservation() {
    let high = Drawn {
        budget: 6,
        server_period: 10,
        period: 10,
        execution: 6,
        offset: 0,
        bandwidth: false,
        spr: None,
        low_budget: Some(2),
    };
    let low = Drawn {
        budget: 3,
        execution: 3,
        offset: 3,
        low_budget: None,
        ..high
    };
    let expected = vec![
        vec![(0, Some(6)), (10, Some(16))],
        vec![(3, Some(9)), (13, Some(19))],
    ];
    let system = sporadic_only(vec![high, low], vec![1, 2], false, 1);
    assert_eq!(reference(&system, 20), expected);
    assert_eq!(scenario_machine(&system, 20), expected);
    // The same set with H of low criticality: L preempts H at 3.
    let plain = sporadic_only(
        vec![
            Drawn {
                low_budget: None,
                ..high
            },
            low,
        ],
        vec![1, 2],
        false,
        1,
    );
    let preempted = vec![
        vec![(0, Some(9)), (10, Some(19)), (20, None)],
        vec![(3, Some(6)), (13, Some(16))],
    ];
    assert_eq!(reference(&plain, 21), preempted);
    assert_eq!(scenario_machine(&plain, 21), preempted);
}
