//! Random sequences of kernel-object operations driven through the reclamation model, baseline
//! and grouped, with stale ids mixed in (every id ever returned stays in the pools).
//!
//! After every operation:
//! - nothing panicked, and [`CapabilityTree::check`] holds: no dangling link, trees are trees,
//!   group membership and scrub lists agree, each group's charge is the sum of what it holds
//!   and within its quota, and the counters balance (nothing freed twice, nothing leaked);
//! - a refused operation changed nothing (the whole model compares equal to before);
//! - grouped termination, whole or step by step, never does more than the group's
//!   termination bound, its charge and its quota (the constant is zero), and a step never more
//!   than its budget plus `STEP_OVERSHOOT_UNITS`.
//!
//! Besides, terminating a group reclaims exactly what the baseline would: the same script run
//! with the group's processes in no group, and those processes terminated one by one, leaves
//! the same processes and capabilities alive.

use std::collections::HashMap;

use bulwark_core::reclaim::{
    CapabilityId, CapabilityTree, CostTable, GroupId, ObjectKind, ProcessId, Progress,
    ReclaimError, STEP_OVERSHOOT_UNITS,
};
use proptest::prelude::*;
use proptest::sample::Index;

/// Which id a step uses: an index into a pool, among the live ids only (mostly) or among all
/// ids ever returned (stale ones included).
#[derive(Clone, Debug)]
struct Pick {
    index: Index,
    live_only: bool,
}

fn pick_strategy() -> impl Strategy<Value = Pick> {
    (any::<Index>(), prop::bool::weighted(0.85))
        .prop_map(|(index, live_only)| Pick { index, live_only })
}

#[derive(Clone, Debug)]
enum Step {
    CreateProcess,
    Fork(Pick),
    CreateGroup(u64),
    Spawn(Pick),
    CreateObject(Pick, usize),
    Derive(Pick),
    Delegate(Pick, Pick),
    /// A delegation to a process of another group than the holder's (or of no group).
    Share(Pick, Index),
    Revoke(Pick),
    TerminateProcess(Pick),
    TerminateGroup(Pick),
    TerminateWithin(Pick, u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => Just(Step::CreateProcess),
        3 => pick_strategy().prop_map(Step::Fork),
        // Quotas from "too small for the arena" to "never binding".
        2 => prop_oneof![1 => 0u64..60, 3 => 60u64..2000, 2 => Just(u64::MAX)].prop_map(Step::CreateGroup),
        5 => pick_strategy().prop_map(Step::Spawn),
        6 => (pick_strategy(), 0usize..3).prop_map(|(p, k)| Step::CreateObject(p, k)),
        5 => pick_strategy().prop_map(Step::Derive),
        4 => (pick_strategy(), pick_strategy()).prop_map(|(c, p)| Step::Delegate(c, p)),
        9 => (pick_strategy(), any::<Index>()).prop_map(|(c, p)| Step::Share(c, p)),
        2 => pick_strategy().prop_map(Step::Revoke),
        1 => pick_strategy().prop_map(Step::TerminateProcess),
        1 => pick_strategy().prop_map(Step::TerminateGroup),
        2 => (pick_strategy(), 0u64..12).prop_map(|(g, b)| Step::TerminateWithin(g, b)),
    ]
}

/// Every id the model ever returned, live or not.
#[derive(Default)]
struct Pools {
    processes: Vec<ProcessId>,
    capabilities: Vec<CapabilityId>,
    groups: Vec<GroupId>,
}

fn pick<T: Copy>(pool: &[T], index: &Index) -> Option<T> {
    (!pool.is_empty()).then(|| pool[index.index(pool.len())])
}

/// `pick` among the ids `live` accepts, or among all of them.
fn pick_where<T: Copy>(pool: &[T], pick: &Pick, live: impl Fn(T) -> bool) -> Option<T> {
    if !pick.live_only {
        return self::pick(pool, &pick.index);
    }
    let alive: Vec<T> = pool.iter().copied().filter(|&id| live(id)).collect();
    self::pick(&alive, &pick.index)
}

impl Pools {
    fn process(&self, tree: &CapabilityTree, pick: &Pick) -> Option<ProcessId> {
        pick_where(&self.processes, pick, |p| tree.process_group(p).is_ok())
    }

    fn capability(&self, tree: &CapabilityTree, pick: &Pick) -> Option<CapabilityId> {
        pick_where(&self.capabilities, pick, |c| {
            tree.capability_group(c).is_ok()
        })
    }

    fn group(&self, tree: &CapabilityTree, pick: &Pick) -> Option<GroupId> {
        pick_where(&self.groups, pick, |g| tree.quota(g).is_ok())
    }
}

/// What a group's termination may still cost, fixed when it starts.
struct Termination {
    charged: u64,
    quota: u64,
    bound: u64,
    spent: u64,
}

struct Driver {
    tree: CapabilityTree,
    pools: Pools,
    terminations: HashMap<GroupId, Termination>,
}

/// The default costs, or any valid table: cheap, calibrated-looking, or huge enough to overflow
/// a careless sum.
fn cost_table() -> impl Strategy<Value = CostTable> {
    let random = (
        0u64..10,
        0u64..10,
        0u64..10,
        0u64..10,
        0u64..10,
        5u64..12,
        1u64..5,
    )
        .prop_map(
            |(process, semaphore, memory_mapping, endpoint, capability, scrub_entry, arena)| {
                CostTable {
                    process,
                    semaphore,
                    memory_mapping,
                    endpoint,
                    capability,
                    scrub_entry,
                    arena,
                }
            },
        );
    let huge = CostTable {
        capability: u64::MAX / 3,
        ..CostTable::DEFAULT
    };
    prop_oneof![2 => Just(CostTable::DEFAULT), 2 => random, 1 => Just(huge)]
}

impl Driver {
    fn new(costs: CostTable) -> Self {
        Driver {
            tree: CapabilityTree::new(costs).unwrap(),
            pools: Pools::default(),
            terminations: HashMap::new(),
        }
    }

    fn run(&mut self, step: &Step) -> Result<(), TestCaseError> {
        let before = self.tree.clone();
        let outcome = self.apply(step)?;
        prop_assert_eq!(self.tree.check(), Ok(()), "after {:?}", step);
        if let Err(error) = outcome {
            prop_assert!(
                self.tree == before,
                "refused {:?} ({}) changed the model",
                step,
                error
            );
        }
        let counters = self.tree.counters();
        prop_assert!(counters.processes_freed <= counters.processes_created);
        prop_assert!(counters.objects_freed <= counters.objects_created);
        prop_assert!(counters.capabilities_freed <= counters.capabilities_created);
        Ok(())
    }

    /// Applies `step`; `Ok(Err(_))` is a refusal, `Err(_)` a failed property.
    fn apply(&mut self, step: &Step) -> Result<Result<(), ReclaimError>, TestCaseError> {
        let pools = &mut self.pools;
        let tree = &mut self.tree;
        let outcome = match step {
            Step::CreateProcess => tree.create_process().map(|(p, _)| pools.processes.push(p)),
            Step::Fork(p) => match pools.process(tree, p) {
                Some(p) => tree.fork(p).map(|(p, _)| pools.processes.push(p)),
                None => Ok(()),
            },
            Step::CreateGroup(quota) => {
                tree.create_group(*quota).map(|(g, _)| pools.groups.push(g))
            }
            Step::Spawn(g) => match pools.group(tree, g) {
                Some(g) => tree.spawn(g).map(|(p, _)| pools.processes.push(p)),
                None => Ok(()),
            },
            Step::CreateObject(p, kind) => match pools.process(tree, p) {
                Some(p) => tree
                    .create_object(p, ObjectKind::ALL[*kind])
                    .map(|(c, _)| pools.capabilities.push(c)),
                None => Ok(()),
            },
            Step::Derive(c) => match pools.capability(tree, c) {
                Some(c) => tree.derive(c).map(|(c, _)| pools.capabilities.push(c)),
                None => Ok(()),
            },
            Step::Delegate(c, p) => match (pools.capability(tree, c), pools.process(tree, p)) {
                (Some(c), Some(p)) => tree.delegate(c, p).map(|(c, _)| pools.capabilities.push(c)),
                _ => Ok(()),
            },
            Step::Share(c, p) => {
                let capability = pools.capability(tree, c);
                let home = capability.and_then(|c| tree.holder(c).ok());
                let home = home.and_then(|h| tree.process_group(h).ok());
                let strangers: Vec<ProcessId> = pools
                    .processes
                    .iter()
                    .copied()
                    .filter(|&q| tree.process_group(q).is_ok_and(|g| Some(g) != home))
                    .collect();
                match (capability, pick(&strangers, p)) {
                    (Some(c), Some(p)) => {
                        tree.delegate(c, p).map(|(c, _)| pools.capabilities.push(c))
                    }
                    _ => Ok(()),
                }
            }
            Step::Revoke(c) => match pools.capability(tree, c) {
                Some(c) => tree.revoke(c).map(drop),
                None => Ok(()),
            },
            Step::TerminateProcess(p) => match pools.process(tree, p) {
                Some(p) => tree.terminate_process(p).map(drop),
                None => Ok(()),
            },
            Step::TerminateGroup(g) => match pools.group(tree, g) {
                Some(g) => return self.terminate(g, None),
                None => Ok(()),
            },
            Step::TerminateWithin(g, budget) => match pools.group(tree, g) {
                Some(g) => return self.terminate(g, Some(*budget)),
                None => Ok(()),
            },
        };
        Ok(outcome)
    }

    /// One step of `group`'s termination (or all of it), checked against the quota.
    fn terminate(
        &mut self,
        group: GroupId,
        budget: Option<u64>,
    ) -> Result<Result<(), ReclaimError>, TestCaseError> {
        if let (Ok(charged), Ok(quota), Ok(bound)) = (
            self.tree.charged(group),
            self.tree.quota(group),
            self.tree.termination_bound(group),
        ) {
            prop_assert!(bound <= charged && charged <= quota);
            // Only the first step fixes the bound: later ones may only shrink what is left.
            self.terminations.entry(group).or_insert(Termination {
                charged,
                quota,
                bound,
                spent: 0,
            });
        }
        let progress = match budget {
            Some(budget) => self.tree.terminate_step(group, budget),
            None => self.tree.terminate_group(group).map(Progress::Done),
        };
        let progress = match progress {
            Ok(progress) => progress,
            Err(error) => return Ok(Err(error)),
        };
        let units = progress.work().units();
        if let Some(budget) = budget {
            prop_assert!(units <= budget.max(1) + STEP_OVERSHOOT_UNITS);
        }
        let Some(termination) = self.terminations.get_mut(&group) else {
            return Err(TestCaseError::fail(
                "a live group had no termination record",
            ));
        };
        termination.spent += units;
        prop_assert!(
            termination.spent <= termination.bound
                && termination.bound <= termination.charged
                && termination.charged <= termination.quota,
            "termination spent {} > bound {} / charged {} / quota {}",
            termination.spent,
            termination.bound,
            termination.charged,
            termination.quota
        );
        if progress.is_done() {
            prop_assert_eq!(self.tree.charged(group), Err(ReclaimError::StaleId));
        }
        Ok(Ok(()))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn random_operations_keep_the_model_consistent(
        steps in proptest::collection::vec(step(), 1..200),
        costs in cost_table(),
    ) {
        let mut driver = Driver::new(costs);
        for step in &steps {
            driver.run(step)?;
        }
        // Terminate what is left: every group, then every process; nothing may remain.
        for group in driver.pools.groups.clone() {
            let mut budget = 0;
            loop {
                budget += 1;
                match driver.terminate(group, Some(budget))? {
                    Ok(()) if driver.tree.charged(group).is_ok() => {}
                    _ => break,
                }
                prop_assert_eq!(driver.tree.check(), Ok(()));
            }
        }
        for process in driver.pools.processes.clone() {
            let _ = driver.tree.terminate_process(process);
            prop_assert_eq!(driver.tree.check(), Ok(()));
        }
        let counters = driver.tree.counters();
        prop_assert_eq!(counters.processes_created, counters.processes_freed);
        prop_assert_eq!(counters.objects_created, counters.objects_freed);
        prop_assert_eq!(counters.capabilities_created, counters.capabilities_freed);
        prop_assert_eq!(
            counters.scrub_entries_created,
            counters.scrub_entries_scrubbed + counters.scrub_entries_removed
        );
    }

    #[test]
    fn stepwise_termination_never_takes_more_than_ceil_of_work_over_budget(
        steps in proptest::collection::vec(step(), 1..120),
        budget in 1u64..16,
    ) {
        let mut driver = Driver::new(CostTable::DEFAULT);
        for step in &steps {
            // Let the random script build, but keep every group alive for the measurement.
            if !matches!(step, Step::TerminateGroup(_) | Step::TerminateWithin(..)) {
                driver.run(step)?;
            }
        }
        for group in driver.pools.groups.clone() {
            let Ok(bound) = driver.tree.termination_bound(group) else { continue };
            let mut steps_taken = 0u64;
            let mut total = 0u64;
            loop {
                let progress = driver.tree.terminate_step(group, budget);
                prop_assert!(progress.is_ok());
                let Ok(progress) = progress else { break };
                steps_taken += 1;
                total += progress.work().units();
                prop_assert!(progress.work().units() <= budget + STEP_OVERSHOOT_UNITS);
                prop_assert_eq!(driver.tree.check(), Ok(()));
                if progress.is_done() {
                    break;
                }
            }
            prop_assert!(total <= bound);
            // Every step but the last did at least the budget.
            prop_assert!(steps_taken <= total.div_ceil(budget).max(1));
        }
    }
}

/// One act of a script run twice: with the "inside" processes spawned into one group, and
/// with them as plain processes.
#[derive(Clone, Debug)]
enum Act {
    Outsider,
    Insider,
    Fork(Index),
    CreateObject(Index, usize),
    Derive(Index),
    Delegate(Index, Index),
    Revoke(Index),
    TerminateProcess(Index),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        2 => Just(Act::Outsider),
        2 => Just(Act::Insider),
        2 => any::<Index>().prop_map(Act::Fork),
        5 => (any::<Index>(), 0usize..3).prop_map(|(p, k)| Act::CreateObject(p, k)),
        4 => any::<Index>().prop_map(Act::Derive),
        6 => (any::<Index>(), any::<Index>()).prop_map(|(c, p)| Act::Delegate(c, p)),
        2 => any::<Index>().prop_map(Act::Revoke),
        1 => any::<Index>().prop_map(Act::TerminateProcess),
    ]
}

/// Runs `acts`, with insiders in a group if `grouped`, then reclaims the insiders: by
/// terminating the group, or each insider root one by one. Returns the model, the pools, and
/// which calls were refused.
fn script(acts: &[Act], grouped: bool) -> (CapabilityTree, Pools, Vec<bool>) {
    let mut tree = CapabilityTree::default();
    let (group, _) = tree.create_group(u64::MAX).unwrap();
    let mut pools = Pools::default();
    let mut insiders = Vec::new();
    let mut refused = Vec::new();
    for act in acts {
        let outcome = match act {
            Act::Outsider => tree.create_process().map(|(p, _)| pools.processes.push(p)),
            Act::Insider => {
                let made = if grouped {
                    tree.spawn(group)
                } else {
                    tree.create_process()
                };
                made.map(|(p, _)| {
                    pools.processes.push(p);
                    insiders.push(p);
                })
            }
            Act::Fork(p) => match pick(&pools.processes, p) {
                Some(p) => tree.fork(p).map(|(p, _)| pools.processes.push(p)),
                None => Ok(()),
            },
            Act::CreateObject(p, kind) => match pick(&pools.processes, p) {
                Some(p) => tree
                    .create_object(p, ObjectKind::ALL[*kind])
                    .map(|(c, _)| pools.capabilities.push(c)),
                None => Ok(()),
            },
            Act::Derive(c) => match pick(&pools.capabilities, c) {
                Some(c) => tree.derive(c).map(|(c, _)| pools.capabilities.push(c)),
                None => Ok(()),
            },
            Act::Delegate(c, p) => {
                match (pick(&pools.capabilities, c), pick(&pools.processes, p)) {
                    (Some(c), Some(p)) => {
                        tree.delegate(c, p).map(|(c, _)| pools.capabilities.push(c))
                    }
                    _ => Ok(()),
                }
            }
            Act::Revoke(c) => match pick(&pools.capabilities, c) {
                Some(c) => tree.revoke(c).map(drop),
                None => Ok(()),
            },
            Act::TerminateProcess(p) => match pick(&pools.processes, p) {
                Some(p) => tree.terminate_process(p).map(drop),
                None => Ok(()),
            },
        };
        refused.push(outcome.is_err());
    }
    if grouped {
        tree.terminate_group(group).unwrap();
    } else {
        for insider in insiders {
            let _ = tree.terminate_process(insider);
        }
    }
    (tree, pools, refused)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn group_termination_reclaims_what_the_baseline_reclaims(acts in proptest::collection::vec(act(), 1..150)) {
        let (grouped, grouped_pools, grouped_refused) = script(&acts, true);
        let (baseline, baseline_pools, baseline_refused) = script(&acts, false);
        prop_assert_eq!(grouped.check(), Ok(()));
        prop_assert_eq!(baseline.check(), Ok(()));
        prop_assert_eq!(grouped_refused, baseline_refused);
        prop_assert_eq!(grouped_pools.processes.len(), baseline_pools.processes.len());
        prop_assert_eq!(grouped_pools.capabilities.len(), baseline_pools.capabilities.len());
        for (g, b) in grouped_pools.processes.iter().zip(&baseline_pools.processes) {
            prop_assert_eq!(grouped.capabilities_held(*g).ok(), baseline.capabilities_held(*b).ok());
        }
        for (g, b) in grouped_pools.capabilities.iter().zip(&baseline_pools.capabilities) {
            prop_assert_eq!(grouped.holder(*g).is_ok(), baseline.holder(*b).is_ok());
        }
        let (g, b) = (grouped.counters(), baseline.counters());
        prop_assert_eq!(g.objects_created - g.objects_freed, b.objects_created - b.objects_freed);
        prop_assert_eq!(
            g.capabilities_created - g.capabilities_freed,
            b.capabilities_created - b.capabilities_freed
        );
    }
}
