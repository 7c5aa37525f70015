//! Reclamation masking (Bounded Resource Reclamation): how long the terminations of a system
//! (an MC-IPC system or a scenario) can keep a core in its kernel with interrupts masked, and
//! so how much of a time partition's slots they can take.
//!
//! A `terminate` step runs in the kernel of its caller's core, interrupts masked, until the
//! target is reclaimed (stepwise, `step`, in shorter spans of the same total). What it
//! reclaims sets how long:
//! - **a target in a reclamation group**: the whole group. Its termination work is at most
//!   what was charged to it, hence at most its quota (section III: "termination work <=
//!   charged <= quota", [`bulwark_core::reclaim::group`]), whatever its members allocated
//!   and in however many jobs. The mask is at most the quota.
//! - **a target in no group**: its process alone, one object at a time (the baseline, section
//!   II): [`BASELINE_OBJECT_UNITS`] per object it allocated and
//!   [`BASELINE_ROOT_PROCESS_UNITS`] for the process, at the file's `reclaim-per-unit`. An
//!   MC-IPC task that allocates in its jobs adds that much every job, and a scenario's script
//!   every pass of an endless loop that allocates, so nothing bounds the mask over a run: the
//!   analysis says so, with the mask of what it allocates before it repeats (its first job;
//!   a script with one pass of its endless loops).
//!
//! A process or group is reclaimed once: terminating it again finds nothing, so each target
//! (each group, for targets that share one) counts once. A termination masks its caller's
//! core, or a core of its caller's cluster; which one depends on the run, so every core of
//! the cluster is charged the whole. A time partition's supply in a cycle is its slots' length less what the
//! terminations of its cluster can mask of it, at most their total (MC-IPC paper, section
//! III: a table-driven reservation runs only in its slots). Budgeted reservations lose no
//! budget to the mask (their budgets drain only while they run) but wait for it, which budget
//! sizing does not cover.
//!
//! An MC-IPC system's phases' additions are read too: the copies of an addition whose script
//! terminates mask each cluster they are added on. Phases run one at a time, but their
//! terminations are taken together here (each target still once per place), which can only
//! lengthen a mask: a bound for every phase. [`added_terminators`] says which addition an
//! index past the system's tasks stands for.

use bulwark_core::reclaim::{BASELINE_OBJECT_UNITS, BASELINE_ROOT_PROCESS_UNITS};
use bulwark_core::Duration;
use bulwark_spec::mc_ipc_toml::{McIpcSystem, ScriptStep};
use bulwark_spec::{Behaviour, CostModel, GroupSpec, Scenario, Step};

/// What one termination reclaims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reclaimed {
    /// The target's reclamation group, at most its quota.
    Group {
        /// The group, an index into the system's groups.
        group: usize,
        /// Its quota.
        quota: Duration,
    },
    /// The target's process alone, one object at a time.
    Process {
        /// Objects the target allocates before it repeats: its first job (MC-IPC), or its
        /// script with one pass of each endless loop.
        objects: u64,
        /// It allocates again after those (in every job, or in an endless loop).
        repeats: bool,
    },
}

/// Where a termination runs, and so which core it masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Masked {
    /// A core of this cluster, an index into the system's clusters.
    Cluster(usize),
    /// This core (a scenario's partitioned task).
    Core(u16),
}

/// One target a task terminates, and how long reclaiming it can mask its caller's core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Termination {
    /// The task whose script terminates, an index into the system's tasks.
    pub terminator: usize,
    /// The task terminated.
    pub target: usize,
    /// Where it runs: the terminator's cluster, or its core.
    pub masked: Masked,
    /// What it reclaims.
    pub reclaimed: Reclaimed,
    /// The longest it can mask the core: `None` when nothing bounds it (a target in no group
    /// that repeats its allocations).
    pub mask: Option<Duration>,
    /// The mask of what the target allocates before it repeats ([`Reclaimed::Process`]'s
    /// `objects`): the bound when there is one, else where the unbounded mask starts.
    pub first_mask: Duration,
    /// The most kernel time per masked stretch when the reclamation is preemptible (the
    /// call's `step`); `None`: one stretch.
    pub step: Option<Duration>,
}

impl Termination {
    /// How many stretches it masks its place for: one, or `ceil(mask / step)` in steps;
    /// `None` when the mask is unbounded.
    pub fn stretches(&self) -> Option<u64> {
        match self.step {
            None => Some(1),
            Some(step) => {
                let mask = self.mask?.as_nanos();
                Some(mask.div_ceil(step.as_nanos().max(1)).max(1))
            }
        }
    }
}

/// Every termination of an MC-IPC `system` (one per target, or per group of targets, and per
/// cluster it may run on), in task order of the terminators, then those of its phases'
/// additions: the terminator `system.tasks.len() + k` is the copies of the `k`-th of
/// [`added_terminators`].
pub fn terminations(system: &McIpcSystem) -> Vec<Termination> {
    let mut found = Vec::new();
    for (terminator, task) in system.tasks.iter().enumerate() {
        let Some(cluster) = system.reservations.get(task.reservation).map(|r| r.cluster) else {
            continue;
        };
        record_script(system, terminator, &task.script, &[cluster], &mut found);
    }
    for (k, (phase, addition)) in added_terminators(system).into_iter().enumerate() {
        let addition = &system.phases[phase].additions[addition];
        let terminator = system.tasks.len() + k;
        record_script(
            system,
            terminator,
            &addition.task.script,
            &addition.clusters,
            &mut found,
        );
    }
    found
}

/// The phases' additions whose task terminates another, as `(phase, addition)` indices, in
/// phase order and then file order.
pub fn added_terminators(system: &McIpcSystem) -> Vec<(usize, usize)> {
    let terminates = |script: &[ScriptStep]| {
        script
            .iter()
            .any(|step| matches!(step, ScriptStep::Terminate { .. }))
    };
    let mut found = Vec::new();
    for (phase, spec) in system.phases.iter().enumerate() {
        for (addition, added) in spec.additions.iter().enumerate() {
            if terminates(&added.task.script) {
                found.push((phase, addition));
            }
        }
    }
    found
}

/// The terminations of `terminator`'s `script`, run on each of `clusters`.
fn record_script(
    system: &McIpcSystem,
    terminator: usize,
    script: &[ScriptStep],
    clusters: &[usize],
    found: &mut Vec<Termination>,
) {
    for step in script {
        let ScriptStep::Terminate { task: target } = *step else {
            continue;
        };
        let objects = system.tasks.get(target).map_or(0, |target| {
            target.script.iter().fold(0u64, |sum, step| match step {
                ScriptStep::Allocate { count, .. } => sum.saturating_add(*count),
                _ => sum,
            })
        });
        // Every job runs the script again.
        let allocations = Allocations {
            objects,
            repeats: objects > 0,
        };
        for &cluster in clusters {
            let call = Call::new(terminator, target, Masked::Cluster(cluster), &system.groups);
            call.record(found, allocations, &system.groups, &system.cost, None);
        }
    }
}

/// Every termination of `scenario`'s scripts (one per target, or per group of targets, and
/// per core or cluster it may run on), in task order of the terminators.
pub fn scenario_terminations(scenario: &Scenario) -> Vec<Termination> {
    let cluster_of = |task: usize| {
        scenario
            .clusters
            .iter()
            .position(|c| c.members.iter().any(|m| m.task == task))
    };
    let mut found = Vec::new();
    for (terminator, task) in scenario.tasks.iter().enumerate() {
        let Behaviour::Script { steps, .. } = &task.behaviour else {
            continue;
        };
        let at = cluster_of(terminator).map_or(Masked::Core(task.core), Masked::Cluster);
        let mut targets = Vec::new();
        visit_terminations(steps, &mut targets);
        for (name, step) in targets {
            let Some(target) = scenario.tasks.iter().position(|t| t.name == name) else {
                continue;
            };
            let allocations = match &scenario.tasks[target].behaviour {
                Behaviour::Script { steps, .. } => allocations(steps),
                _ => Allocations::default(),
            };
            let call = Call::new(terminator, target, at, &scenario.groups);
            call.record(
                &mut found,
                allocations,
                &scenario.groups,
                &scenario.cost,
                step,
            );
        }
    }
    found
}

/// The longest the terminations can mask a core of each of `clusters` clusters, by cluster
/// index: the sum of the masks of those that run there, `None` when one is unbounded.
pub fn cluster_masks(clusters: usize, terminations: &[Termination]) -> Vec<Option<Duration>> {
    let mut masks = vec![Some(Duration::ZERO); clusters];
    for (place, mask) in masks_by_place(terminations) {
        if let Masked::Cluster(cluster) = place {
            if let Some(slot) = masks.get_mut(cluster) {
                *slot = mask;
            }
        }
    }
    masks
}

/// Every place the terminations run, in order of first appearance, with the longest they can
/// mask a core there (`None`: unbounded).
pub fn masks_by_place(terminations: &[Termination]) -> Vec<(Masked, Option<Duration>)> {
    let mut places: Vec<(Masked, Option<Duration>)> = Vec::new();
    for termination in terminations {
        match places.iter_mut().find(|(at, _)| *at == termination.masked) {
            Some((_, total)) => *total = add_mask(*total, termination.mask),
            None => places.push((termination.masked, termination.mask)),
        }
    }
    places
}

/// How many masked stretches the terminations at `place` make in all (`None`: unbounded).
pub fn stretches_at(terminations: &[Termination], place: Masked) -> Option<u64> {
    terminations
        .iter()
        .filter(|t| t.masked == place)
        .try_fold(0u64, |sum, t| t.stretches().map(|n| sum.saturating_add(n)))
}

/// What a time partition with `slots_length` of slots per cycle keeps of them when a core of
/// its cluster can be masked for `mask` (`None`: without bound, so nothing is sure).
pub fn partition_supply(slots_length: Duration, mask: Option<Duration>) -> Duration {
    mask.map_or(Duration::ZERO, |mask| slots_length.saturating_sub(mask))
}

/// Two masks on one core, one after the other.
fn add_mask(sum: Option<Duration>, mask: Option<Duration>) -> Option<Duration> {
    sum.zip(mask).and_then(|(sum, mask)| sum.checked_add(mask))
}

/// What a target allocates: [`Reclaimed::Process`]'s fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Allocations {
    objects: u64,
    repeats: bool,
}

/// The objects `steps` allocate, loops multiplied out, an endless loop's body once (and then
/// it repeats if that body allocates).
fn allocations(steps: &[Step]) -> Allocations {
    steps.iter().fold(Allocations::default(), |sum, step| {
        let more = match step {
            Step::Allocate { count, .. } => Allocations {
                objects: *count,
                repeats: false,
            },
            Step::Loop { count, body } => {
                let once = allocations(body);
                match count {
                    Some(times) => Allocations {
                        objects: once.objects.saturating_mul(*times),
                        repeats: once.repeats,
                    },
                    None => Allocations {
                        objects: once.objects,
                        repeats: once.repeats || once.objects > 0,
                    },
                }
            }
            _ => Allocations::default(),
        };
        Allocations {
            objects: sum.objects.saturating_add(more.objects),
            repeats: sum.repeats || more.repeats,
        }
    })
}

/// The task names `steps` terminate, loops' bodies included.
fn visit_terminations<'a>(steps: &'a [Step], found: &mut Vec<(&'a str, Option<Duration>)>) {
    for step in steps {
        match step {
            Step::Terminate { task, step } => found.push((task, *step)),
            Step::Loop { body, .. } => visit_terminations(body, found),
            _ => {}
        }
    }
}

/// One `terminate` call, before its mask is worked out.
struct Call {
    terminator: usize,
    target: usize,
    at: Masked,
    /// The target's group, if it has one.
    group: Option<usize>,
}

impl Call {
    fn new(terminator: usize, target: usize, at: Masked, groups: &[GroupSpec]) -> Call {
        let group = groups.iter().position(|g| g.members.contains(&target));
        Call {
            terminator,
            target,
            at,
            group,
        }
    }

    /// Adds the call to `found`, unless the same group (or target outside groups) is already
    /// reclaimed there.
    fn record(
        self,
        found: &mut Vec<Termination>,
        allocations: Allocations,
        groups: &[GroupSpec],
        cost: &CostModel,
        step: Option<Duration>,
    ) {
        let seen = found.iter().any(|t| {
            t.masked == self.at
                && match (&t.reclaimed, self.group) {
                    (Reclaimed::Group { group, .. }, Some(other)) => *group == other,
                    _ => t.target == self.target,
                }
        });
        if seen {
            return;
        }
        let reclaimed = match self.group {
            Some(group) => Reclaimed::Group {
                group,
                quota: groups[group].quota,
            },
            None => Reclaimed::Process {
                objects: allocations.objects,
                repeats: allocations.repeats,
            },
        };
        let (mask, first_mask) = masks(cost, &reclaimed);
        found.push(Termination {
            terminator: self.terminator,
            target: self.target,
            masked: self.at,
            reclaimed,
            mask,
            first_mask,
            step,
        });
    }
}

/// The mask of `reclaimed` (`None`: unbounded) and that of what it allocates before it
/// repeats.
fn masks(cost: &CostModel, reclaimed: &Reclaimed) -> (Option<Duration>, Duration) {
    if cost.reclaim_per_unit == 0 {
        return (Some(Duration::ZERO), Duration::ZERO);
    }
    match *reclaimed {
        // Termination work <= charged <= quota, in units the quota converts to whole.
        Reclaimed::Group { quota, .. } => (Some(quota), quota),
        Reclaimed::Process { objects, repeats } => {
            let units = objects
                .saturating_mul(BASELINE_OBJECT_UNITS)
                .saturating_add(BASELINE_ROOT_PROCESS_UNITS);
            let first = cost.time_of(units.saturating_mul(cost.reclaim_per_unit));
            ((!repeats).then_some(first), first)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;
    use bulwark_core::criticality::Criticality;
    use bulwark_core::Priority;
    use bulwark_spec::mc_ipc_toml::{Cluster, Reservation, ReservationKind, Task};
    use bulwark_spec::ObjectKind;

    /// Two single-core clusters: on C1 the watchdog, which terminates `rogue`, `hoarder`, then
    /// `rogue` again; on C2 `rogue` (in group `g` when `rogue_group`), which allocates 1,000
    /// semaphores a job, and `hoarder` (in `g`), 10. Reclamation costs 13 ns a unit.
    fn system(rogue_group: bool) -> McIpcSystem {
        let reservation = |name: &str, cluster| {
            let kind = ReservationKind::sporadic(ms(10), ms(100));
            Reservation::new(name, cluster, Criticality::Low, Priority(0), kind, ms(1))
        };
        let mut system = McIpcSystem::new(
            vec![Cluster::new("C1", 1), Cluster::new("C2", 1)],
            Vec::new(),
            vec![
                reservation("W", 0),
                reservation("R", 1),
                reservation("H", 1),
            ],
        );
        let task = |name: &str, reservation, mut script: Vec<ScriptStep>| {
            script.push(ScriptStep::SleepUntilNextPeriod);
            Task {
                name: name.into(),
                reservation,
                period: ms(100),
                offset: Duration::ZERO,
                script,
            }
        };
        let allocate = |count| ScriptStep::Allocate {
            count,
            object: ObjectKind::Semaphore,
        };
        let terminate = |task| ScriptStep::Terminate { task };
        system.tasks = vec![
            task(
                "watchdog",
                0,
                vec![terminate(1), terminate(2), terminate(1)],
            ),
            task("rogue", 1, vec![allocate(1_000)]),
            task("hoarder", 2, vec![allocate(10)]),
        ];
        system.groups = vec![GroupSpec {
            name: "g".into(),
            quota: ms(1),
            members: if rogue_group { vec![1, 2] } else { vec![2] },
        }];
        system.cost = CostModel {
            reclaim_per_unit: 13,
            ..CostModel::FREE
        };
        system
    }

    #[test]
    fn a_grouped_target_masks_at_most_its_quota_once_for_all_its_members() {
        let system = system(true);
        let found = terminations(&system);
        // rogue and hoarder share group g: one reclamation, on C1 (the watchdog's cluster).
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].terminator, 0);
        assert_eq!(found[0].target, 1);
        assert_eq!(found[0].masked, Masked::Cluster(0));
        assert_eq!(
            found[0].reclaimed,
            Reclaimed::Group {
                group: 0,
                quota: Duration::from_millis(1)
            }
        );
        assert_eq!(found[0].mask, Some(Duration::from_millis(1)));
        let masks = cluster_masks(system.clusters.len(), &found);
        assert_eq!(
            masks,
            vec![Some(Duration::from_millis(1)), Some(Duration::ZERO)]
        );
        // A partition of 50 ms on C1 keeps 49.
        assert_eq!(
            partition_supply(Duration::from_millis(50), masks[0]),
            Duration::from_millis(49)
        );
    }

    #[test]
    fn a_target_in_no_group_that_allocates_is_unbounded_with_its_first_job_worked_out() {
        let system = system(false);
        let found = terminations(&system);
        // rogue alone (terminated twice, reclaimed once), then hoarder's group.
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[0].reclaimed,
            Reclaimed::Process {
                objects: 1000,
                repeats: true
            }
        );
        // By hand: 1,000 objects x 3 units + 1 for the process = 3,001 units of 13 ns.
        assert_eq!(found[0].first_mask, Duration::from_nanos(39_013));
        assert_eq!(found[0].mask, None);
        assert_eq!(found[1].mask, Some(Duration::from_millis(1)));
        let masks = cluster_masks(system.clusters.len(), &found);
        assert_eq!(masks, vec![None, Some(Duration::ZERO)]);
        assert_eq!(
            partition_supply(Duration::from_millis(50), masks[0]),
            Duration::ZERO
        );
    }

    /// `system` with a phase `kill` adding two best-effort copies on each cluster that
    /// terminate `rogue`.
    fn with_killing_phase(rogue_group: bool) -> McIpcSystem {
        use bulwark_spec::mc_ipc_toml::{AddedReservation, Addition, Phase, TaskTemplate};
        let mut system = system(rogue_group);
        system.phases = vec![Phase {
            name: "kill".into(),
            floods: Vec::new(),
            additions: vec![Addition {
                clusters: vec![0, 1],
                count: 2,
                reservation: AddedReservation::BestEffort,
                task: TaskTemplate {
                    period: ms(100),
                    offset: Duration::ZERO,
                    stagger: Duration::ZERO,
                    script: vec![
                        ScriptStep::Terminate { task: 1 },
                        ScriptStep::SleepUntilNextPeriod,
                    ],
                },
            }],
        }];
        system
    }

    /// The copies on C1 find `rogue` reclaimed there already (by the watchdog); those on C2
    /// add its reclamation there, named by the index past the three tasks.
    #[test]
    fn a_phases_added_terminators_mask_every_cluster_they_are_added_on() {
        let system = with_killing_phase(false);
        assert_eq!(added_terminators(&system), vec![(0, 0)]);
        let found = terminations(&system);
        assert_eq!(found.len(), 3);
        assert_eq!(found[2].terminator, 3);
        assert_eq!(found[2].target, 1);
        assert_eq!(found[2].masked, Masked::Cluster(1));
        assert_eq!(found[2].mask, None);
        assert_eq!(found[2].first_mask, Duration::from_nanos(39_013));
        assert_eq!(cluster_masks(2, &found), vec![None, None]);
        // Grouped: the group's quota, once on each cluster.
        let grouped = terminations(&with_killing_phase(true));
        assert_eq!(
            cluster_masks(2, &grouped),
            vec![
                Some(Duration::from_millis(1)),
                Some(Duration::from_millis(1))
            ]
        );
    }

    #[test]
    fn free_reclamation_masks_nothing() {
        // A file with a `terminate` needs a cost above zero; a system built in code need not.
        let mut system = system(false);
        system.cost.reclaim_per_unit = 0;
        let found = terminations(&system);
        assert!(found.iter().all(|t| t.mask == Some(Duration::ZERO)));
        assert_eq!(
            cluster_masks(system.clusters.len(), &found),
            vec![Some(Duration::ZERO), Some(Duration::ZERO)]
        );
    }

    #[test]
    fn a_mask_longer_than_the_slots_leaves_the_partition_nothing() {
        assert_eq!(
            partition_supply(Duration::from_millis(50), Some(Duration::from_millis(60))),
            Duration::ZERO
        );
    }

    fn scenario(file: &str, text: &str) -> Scenario {
        bulwark_spec::parse(text, file).expect("the built-in scenario parses")
    }

    /// `faas-reclaim.toml`: the controller (core 0) terminates the rogue, in group
    /// `rogue-function` (quota 1 ms); without the group, its one million semaphores are by
    /// hand 3,000,001 units of 13 ns, 39,000,013 ns, and its script allocates them once.
    #[test]
    fn a_scenarios_termination_masks_its_callers_core() {
        let text = include_str!("../../../scenarios/faas-reclaim.toml");
        let grouped = scenario("faas-reclaim.toml", text);
        let found = scenario_terminations(&grouped);
        assert_eq!(found.len(), 1);
        assert_eq!(grouped.tasks[found[0].terminator].name, "controller");
        assert_eq!(grouped.tasks[found[0].target].name, "rogue");
        assert_eq!(found[0].masked, Masked::Core(0));
        assert_eq!(found[0].mask, Some(Duration::from_millis(1)));
        assert_eq!(
            masks_by_place(&found),
            vec![(Masked::Core(0), Some(Duration::from_millis(1)))]
        );

        let baseline = scenario(
            "faas-reclaim.toml",
            &text.replace("group = \"rogue-function\"\n", ""),
        );
        let found = scenario_terminations(&baseline);
        assert_eq!(
            found[0].reclaimed,
            Reclaimed::Process {
                objects: 1_000_000,
                repeats: false
            }
        );
        assert_eq!(found[0].mask, Some(Duration::from_nanos(39_000_013)));
    }

    /// `cluster-rogue.toml`: the watchdog is a member of cluster C1, so the mask is C1's.
    #[test]
    fn a_cluster_members_termination_masks_its_cluster() {
        let text = include_str!("../../../scenarios/cluster-rogue.toml");
        let system = scenario("cluster-rogue.toml", text);
        let found = scenario_terminations(&system);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].masked, Masked::Cluster(0));
        assert_eq!(found[0].mask, Some(Duration::from_millis(1)));
        let masks = cluster_masks(system.clusters.len(), &found);
        assert_eq!(masks[0], Some(Duration::from_millis(1)));
        assert!(masks[1..].iter().all(|m| *m == Some(Duration::ZERO)));
    }

    /// Loops multiply what their bodies allocate; an endless one that allocates repeats.
    #[test]
    fn loops_multiply_allocations_and_an_endless_one_repeats() {
        let allocate = |count| Step::Allocate {
            count,
            object: bulwark_spec::ObjectKind::Semaphore,
        };
        let steps = [
            allocate(2),
            Step::Loop {
                count: Some(3),
                body: vec![
                    allocate(10),
                    Step::Run(bulwark_spec::Execution::Fixed(ms(1))),
                ],
            },
        ];
        assert_eq!(
            allocations(&steps),
            Allocations {
                objects: 32,
                repeats: false
            }
        );
        let endless = [
            allocate(1),
            Step::Loop {
                count: None,
                body: vec![Step::Loop {
                    count: Some(2),
                    body: vec![allocate(5)],
                }],
            },
        ];
        assert_eq!(
            allocations(&endless),
            Allocations {
                objects: 11,
                repeats: true
            }
        );
        let idle = [Step::Loop {
            count: None,
            body: vec![Step::Run(bulwark_spec::Execution::Fixed(ms(1)))],
        }];
        assert_eq!(allocations(&idle), Allocations::default());
    }

    /// A termination of no objects at `masked`, with `mask` and `step` as given.
    fn termination(masked: Masked, mask: Option<Duration>, step: Option<Duration>) -> Termination {
        Termination {
            terminator: 0,
            target: 1,
            masked,
            reclaimed: Reclaimed::Process {
                objects: 0,
                repeats: false,
            },
            mask,
            first_mask: Duration::ZERO,
            step,
        }
    }

    /// A termination masks in one stretch, or in `ceil(mask / step)` steps; a place adds its
    /// terminations' stretches up, and an unbounded stepped mask has no count.
    #[test]
    fn stretches_by_place() {
        let found = [
            termination(Masked::Core(0), Some(ms(5)), None),
            termination(Masked::Core(0), Some(ms(5)), Some(ms(2))),
            termination(Masked::Core(1), None, None),
            termination(Masked::Core(2), None, Some(ms(1))),
        ];
        assert_eq!(found[1].stretches(), Some(3));
        assert_eq!(stretches_at(&found, Masked::Core(0)), Some(4));
        assert_eq!(stretches_at(&found, Masked::Core(1)), Some(1));
        assert_eq!(stretches_at(&found, Masked::Core(2)), None);
        assert_eq!(stretches_at(&found, Masked::Core(3)), Some(0));
    }

    /// Two places add up apart; an unbounded mask makes its place's total unbounded.
    #[test]
    fn masks_add_up_by_place() {
        let termination = |masked, mask| termination(masked, mask, None);
        let found = [
            termination(Masked::Core(1), Some(ms(2))),
            termination(Masked::Cluster(0), Some(ms(1))),
            termination(Masked::Core(1), Some(ms(3))),
            termination(Masked::Cluster(0), None),
        ];
        assert_eq!(
            masks_by_place(&found),
            vec![(Masked::Core(1), Some(ms(5))), (Masked::Cluster(0), None)]
        );
        assert_eq!(cluster_masks(2, &found), vec![None, Some(Duration::ZERO)]);
    }
}
