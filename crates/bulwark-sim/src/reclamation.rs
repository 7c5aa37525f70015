//! A scenario's kernel objects: one process per task in `bulwark_core::reclaim`'s capability
//! tree, spawned into its reclamation group when it has one, so that `allocate` and
//! `terminate` steps run the real reclamation code. The simulator turns their work into time
//! through the cost model's `reclaim_per_unit`; the hosted runtime runs the same calls on its
//! threads and measures them on the real clock.

use bulwark_core::reclaim::{
    CapabilityTree, GroupId, ObjectKind, ProcessId, Progress, ReclaimError, ReclaimWork,
};
use bulwark_spec::Scenario;

use crate::SimError;

/// What one `allocate` step did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    /// Work units spent (the refused attempts cost nothing: they are refused before any
    /// change).
    pub units: u64,
    /// Objects created.
    pub created: u64,
    /// Objects refused because the group's quota was used up.
    pub refused: u64,
}

/// What one termination call (or step of one) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Termination {
    /// Work units spent.
    pub units: u64,
    /// False while a stepwise termination has more to do.
    pub done: bool,
    /// Tasks whose processes this call ended (on the first step of a group: all members).
    pub killed: Vec<usize>,
}

/// Which part of a configuration the capability tree refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// A group, by index.
    Group(usize),
    /// A task's process, by index.
    Task(usize),
}

/// The capability tree and which process and group belong to each task of a scenario: the
/// object store that `allocate` and `terminate` steps work on, shared by the simulator and
/// the hosted runtime so that both run the same reclamation code on the same objects.
pub struct Reclamation {
    tree: CapabilityTree,
    /// Each task's process, `None` once terminated.
    process: Vec<Option<ProcessId>>,
    /// Each task's group (index into the scenario's groups).
    group_of: Vec<Option<usize>>,
    groups: Vec<GroupId>,
    /// Cycles per unit and the clock, to turn time into units.
    per_unit: u64,
    clock_hz: u64,
}

impl Reclamation {
    /// One process per task; groups created with their quotas converted to work units.
    pub fn new(scenario: &Scenario) -> Result<Self, SimError> {
        let mut group_of = vec![None; scenario.tasks.len()];
        for (g, spec) in scenario.groups.iter().enumerate() {
            for &member in &spec.members {
                group_of[member] = Some(g);
            }
        }
        let quotas: Vec<_> = scenario.groups.iter().map(|g| g.quota).collect();
        Self::with_groups(
            scenario.cost.reclaim_per_unit,
            scenario.cost.clock_hz,
            &quotas,
            group_of,
        )
        .map_err(|(failed, error)| {
            let name = match failed {
                Failed::Group(g) => &scenario.groups[g].name,
                Failed::Task(t) => &scenario.tasks[t].name,
            };
            configuration(name, error)
        })
    }

    /// One process per task, spawned into `group_of[task]` (an index into `quotas`) when it
    /// has one; `per_unit` cycles per unit of work at `clock_hz`.
    pub fn with_groups(
        per_unit: u64,
        clock_hz: u64,
        quotas: &[bulwark_core::Duration],
        group_of: Vec<Option<usize>>,
    ) -> Result<Self, (Failed, ReclaimError)> {
        let mut tree = CapabilityTree::default();
        let mut groups = Vec::with_capacity(quotas.len());
        for (g, quota) in quotas.iter().enumerate() {
            let quota = units_in(quota.as_nanos(), per_unit, clock_hz);
            let (id, _) = tree
                .create_group(quota)
                .map_err(|error| (Failed::Group(g), error))?;
            groups.push(id);
        }
        let mut process = Vec::with_capacity(group_of.len());
        for (task, group) in group_of.iter().enumerate() {
            let created = match group.and_then(|g| groups.get(g)) {
                Some(&id) => tree.spawn(id),
                None => tree.create_process(),
            };
            let (pid, _) = created.map_err(|error| (Failed::Task(task), error))?;
            process.push(Some(pid));
        }
        Ok(Reclamation {
            tree,
            process,
            group_of,
            groups,
            per_unit,
            clock_hz,
        })
    }

    /// Cycles of `units` of reclamation work.
    pub fn cycles(&self, units: u64) -> u64 {
        self.per_unit.saturating_mul(units)
    }

    /// Nanoseconds of `units` of reclamation work at the clock (rounded up: work that takes
    /// any cycle takes time).
    pub fn nanos(&self, units: u64) -> u64 {
        let cycles = self.cycles(units) as u128;
        let hz = self.clock_hz.max(1) as u128;
        u64::try_from((cycles * 1_000_000_000).div_ceil(hz)).unwrap_or(u64::MAX)
    }

    /// `task` creates `count` objects of `kind`, until its group's quota refuses one; the
    /// rest are refused too (a refused call changes nothing, so retrying would be refused
    /// again).
    pub fn allocate(&mut self, task: usize, count: u64, kind: ObjectKind) -> Allocation {
        let mut result = Allocation::default();
        let Some(pid) = self.process[task] else {
            return result;
        };
        for done in 0..count {
            match self.tree.create_object(pid, kind) {
                Ok((_, work)) => {
                    result.units += work.units();
                    result.created += 1;
                }
                Err(_) => {
                    result.refused = count - done;
                    break;
                }
            }
        }
        result
    }

    /// Terminates `target`'s process: its whole group when it has one (in steps of at most
    /// `step` of kernel time when given), else the process alone, one object at a time.
    pub fn terminate(
        &mut self,
        target: usize,
        step: Option<bulwark_core::Duration>,
    ) -> Termination {
        let mut result = Termination {
            done: true,
            ..Termination::default()
        };
        match self.group_of[target] {
            Some(g) => {
                let group = self.groups[g];
                let starting = !self.tree.is_terminating(group).unwrap_or(true);
                let work = match step {
                    Some(step) => {
                        let budget = units_in(step.as_nanos(), self.per_unit, self.clock_hz);
                        match self.tree.terminate_step(group, budget.max(1)) {
                            Ok(Progress::Pending(work)) => {
                                result.done = false;
                                work
                            }
                            Ok(Progress::Done(work)) => work,
                            Err(_) => ReclaimWork::default(),
                        }
                    }
                    None => self.tree.terminate_group(group).unwrap_or_default(),
                };
                result.units = work.units();
                if starting {
                    let members = (0..self.process.len()).filter(|&t| self.group_of[t] == Some(g));
                    for member in members.collect::<Vec<_>>() {
                        if self.process[member].take().is_some() {
                            result.killed.push(member);
                        }
                    }
                }
            }
            None => {
                if let Some(pid) = self.process[target].take() {
                    let work: ReclaimWork = self.tree.terminate_process(pid).unwrap_or_default();
                    result.units = work.units();
                    result.killed.push(target);
                }
            }
        }
        result
    }
}

/// How many whole units of `per_unit` cycles fit in `nanos` at `clock_hz`.
fn units_in(nanos: u64, per_unit: u64, clock_hz: u64) -> u64 {
    if per_unit == 0 {
        return u64::MAX;
    }
    let cycles = nanos as u128 * clock_hz as u128 / 1_000_000_000;
    u64::try_from(cycles / per_unit as u128).unwrap_or(u64::MAX)
}

fn configuration(name: &str, error: ReclaimError) -> SimError {
    SimError::Reclamation {
        name: name.to_owned(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_convert_to_whole_units() {
        // 400 us at 1 GHz is 400,000 cycles; at 20 cycles per unit, 20,000 units.
        assert_eq!(units_in(400_000, 20, 1_000_000_000), 20_000);
        // 1 ns at 2 GHz is 2 cycles: no whole unit of 3 cycles.
        assert_eq!(units_in(1, 3, 2_000_000_000), 0);
        assert_eq!(units_in(5, 0, 1), u64::MAX);
    }
}
