//! Reclamation masking (Bounded Resource Reclamation): how long the terminations of an MC-IPC
//! system can keep a core in its kernel with interrupts masked, and so how much of a time
//! partition's slots they can take.
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
//!   [`BASELINE_ROOT_PROCESS_UNITS`] for the process, at the file's `reclaim-per-unit`. A task
//!   that allocates in its jobs adds that much every job, so nothing bounds the mask over a
//!   run: the analysis says so, with what one job adds.
//!
//! A process or group is reclaimed once: terminating it again finds nothing, so each target
//! (each group, for targets that share one) counts once. A termination masks a core of its
//! caller's cluster; which one depends on the run, so every core of the cluster is charged
//! the whole. A time partition's supply in a cycle is its slots' length less what the
//! terminations of its cluster can mask of it, at most their total (MC-IPC paper, section
//! III: a table-driven reservation runs only in its slots). Budgeted reservations lose no
//! budget to the mask (their budgets drain only while they run) but wait for it, which budget
//! sizing does not cover.
//!
//! Only the system's own tasks are read, not its phases' additions, as [`crate::mc_ipc`]
//! reads only its reservations.

use bulwark_core::reclaim::{BASELINE_OBJECT_UNITS, BASELINE_ROOT_PROCESS_UNITS};
use bulwark_core::Duration;
use bulwark_spec::mc_ipc_toml::{McIpcSystem, ScriptStep};

/// What one termination reclaims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reclaimed {
    /// The target's reclamation group, at most its quota.
    Group {
        /// The group, an index into [`McIpcSystem::groups`].
        group: usize,
        /// Its quota.
        quota: Duration,
    },
    /// The target's process alone, one object at a time.
    Process {
        /// Objects one job of the target allocates.
        objects_per_job: u64,
    },
}

/// One target a task terminates, and how long reclaiming it can mask its caller's core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Termination {
    /// The task whose script terminates, an index into [`McIpcSystem::tasks`].
    pub terminator: usize,
    /// The task terminated.
    pub target: usize,
    /// The cluster whose core it masks: the terminator's reservation's.
    pub cluster: usize,
    /// What it reclaims.
    pub reclaimed: Reclaimed,
    /// The longest it can mask the core: `None` when nothing bounds it (a target in no group
    /// that allocates in its jobs).
    pub mask: Option<Duration>,
    /// The mask of the target's first job alone (its process and one job's objects): the
    /// bound when there is one, else what each job adds to it, and the first.
    pub first_job_mask: Duration,
}

/// Every termination of `system` (one per target, or per group of targets, and per cluster it
/// may run on), in task order of the terminators.
pub fn terminations(system: &McIpcSystem) -> Vec<Termination> {
    let group_of = system.groups_of_tasks();
    let mut found: Vec<Termination> = Vec::new();
    for (terminator, task) in system.tasks.iter().enumerate() {
        let Some(cluster) = system.reservations.get(task.reservation).map(|r| r.cluster) else {
            continue;
        };
        for step in &task.script {
            let ScriptStep::Terminate { task: target } = *step else {
                continue;
            };
            let reclaimed = match group_of.get(target).copied().flatten() {
                Some(group) => Reclaimed::Group {
                    group,
                    quota: system.groups[group].quota,
                },
                None => Reclaimed::Process {
                    objects_per_job: objects_per_job(system, target),
                },
            };
            // One reclamation per group, or per target outside groups, per cluster.
            let seen = found.iter().any(|t| {
                t.cluster == cluster
                    && match (&t.reclaimed, &reclaimed) {
                        (Reclaimed::Group { group: a, .. }, Reclaimed::Group { group: b, .. }) => {
                            a == b
                        }
                        _ => t.target == target,
                    }
            });
            if seen {
                continue;
            }
            let (mask, first_job_mask) = masks(system, &reclaimed);
            found.push(Termination {
                terminator,
                target,
                cluster,
                reclaimed,
                mask,
                first_job_mask,
            });
        }
    }
    found
}

/// The longest the terminations of `system` can mask a core of each cluster, by cluster
/// index: the sum of its terminations' masks, `None` when one of them is unbounded.
pub fn cluster_masks(system: &McIpcSystem, terminations: &[Termination]) -> Vec<Option<Duration>> {
    let mut masks = vec![Some(Duration::ZERO); system.clusters.len()];
    for termination in terminations {
        if let Some(total) = masks.get_mut(termination.cluster) {
            *total = total
                .zip(termination.mask)
                .and_then(|(sum, mask)| sum.checked_add(mask));
        }
    }
    masks
}

/// What a time partition with `slots_length` of slots per cycle keeps of them when a core of
/// its cluster can be masked for `mask` (`None`: without bound, so nothing is sure).
pub fn partition_supply(slots_length: Duration, mask: Option<Duration>) -> Duration {
    mask.map_or(Duration::ZERO, |mask| slots_length.saturating_sub(mask))
}

/// The objects one job of task `target` allocates (saturating).
fn objects_per_job(system: &McIpcSystem, target: usize) -> u64 {
    system.tasks.get(target).map_or(0, |task| {
        task.script.iter().fold(0u64, |sum, step| match step {
            ScriptStep::Allocate { count, .. } => sum.saturating_add(*count),
            _ => sum,
        })
    })
}

/// The mask of `reclaimed` (`None`: unbounded) and that of its first job alone.
fn masks(system: &McIpcSystem, reclaimed: &Reclaimed) -> (Option<Duration>, Duration) {
    let time_of_units = |units: u64| {
        system
            .cost
            .time_of(units.saturating_mul(system.cost.reclaim_per_unit))
    };
    match *reclaimed {
        // Termination work <= charged <= quota, in units the quota converts to whole: at
        // most the quota, or nothing when reclamation costs nothing.
        Reclaimed::Group { quota, .. } => {
            let mask = if system.cost.reclaim_per_unit == 0 {
                Duration::ZERO
            } else {
                quota
            };
            (Some(mask), mask)
        }
        Reclaimed::Process { objects_per_job } => {
            let first = time_of_units(
                objects_per_job
                    .saturating_mul(BASELINE_OBJECT_UNITS)
                    .saturating_add(BASELINE_ROOT_PROCESS_UNITS),
            );
            let bounded = objects_per_job == 0 || system.cost.reclaim_per_unit == 0;
            (bounded.then_some(first), first)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::parse_mc_ipc;

    /// Two single-core clusters: a partition on C1 in [0, 50 ms) of a 100 ms cycle, and on
    /// C1 the watchdog; `rogue` (in group `g` when `rogue_group`) allocates 1,000 semaphores
    /// a job and `hoarder` (in `g`) 10, both on C2. Reclamation costs 13 ns a unit.
    fn system(rogue_group: bool) -> McIpcSystem {
        let group = if rogue_group { "group = \"g\"" } else { "" };
        let text = format!(
            r#"
cycle = "100ms"
[cost]
clock = "1GHz"
reclaim-per-unit = 13
[[group]]
name = "g"
quota = "1ms"
[[cluster]]
name = "C1"
cores = 1
[[cluster]]
name = "C2"
cores = 1
[[reservation]]
name = "P"
cluster = "C1"
criticality = "high"
priority = 1
slots = [["0ms", "50ms"]]
execution = "2ms"
[[reservation]]
name = "W"
cluster = "C1"
priority = 0
budget = "1ms"
period = "100ms"
execution = "100us"
[[reservation]]
name = "R"
cluster = "C2"
priority = 0
budget = "10ms"
period = "100ms"
execution = "1ms"
[[reservation]]
name = "H"
cluster = "C2"
priority = 0
budget = "10ms"
period = "100ms"
execution = "1ms"
[[task]]
name = "watchdog"
reservation = "W"
period = "100ms"
script = [{{ terminate = "rogue" }}, {{ terminate = "hoarder" }}, {{ terminate = "rogue" }}, "sleep"]
[[task]]
name = "rogue"
reservation = "R"
{group}
period = "100ms"
script = [{{ allocate = 1000, object = "semaphore" }}, {{ compute = "1ms" }}, "sleep"]
[[task]]
name = "hoarder"
reservation = "H"
group = "g"
period = "100ms"
script = [{{ allocate = 10 }}, {{ compute = "1ms" }}, "sleep"]
"#
        );
        parse_mc_ipc(&text, "masking.toml").expect("the test system parses")
    }

    #[test]
    fn a_grouped_target_masks_at_most_its_quota_once_for_all_its_members() {
        let system = system(true);
        let found = terminations(&system);
        // rogue and hoarder share group g: one reclamation, on C1 (the watchdog's cluster).
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].terminator, 0);
        assert_eq!(found[0].target, 1);
        assert_eq!(found[0].cluster, 0);
        assert_eq!(
            found[0].reclaimed,
            Reclaimed::Group {
                group: 0,
                quota: Duration::from_millis(1)
            }
        );
        assert_eq!(found[0].mask, Some(Duration::from_millis(1)));
        let masks = cluster_masks(&system, &found);
        assert_eq!(
            masks,
            vec![Some(Duration::from_millis(1)), Some(Duration::ZERO)]
        );
        // The partition keeps 49 of its 50 ms.
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
                objects_per_job: 1000
            }
        );
        // By hand: 1,000 objects x 3 units + 1 for the process = 3,001 units of 13 ns.
        assert_eq!(found[0].first_job_mask, Duration::from_nanos(39_013));
        assert_eq!(found[0].mask, None);
        assert_eq!(found[1].mask, Some(Duration::from_millis(1)));
        let masks = cluster_masks(&system, &found);
        assert_eq!(masks, vec![None, Some(Duration::ZERO)]);
        assert_eq!(
            partition_supply(Duration::from_millis(50), masks[0]),
            Duration::ZERO
        );
    }

    #[test]
    fn free_reclamation_masks_nothing() {
        // A file with a `terminate` needs a cost above zero; a system built in code may not.
        let mut system = system(false);
        system.cost.reclaim_per_unit = 0;
        let found = terminations(&system);
        assert!(found.iter().all(|t| t.mask == Some(Duration::ZERO)));
        assert_eq!(
            cluster_masks(&system, &found),
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
}
