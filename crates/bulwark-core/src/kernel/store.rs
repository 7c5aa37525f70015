//! The object store behind `allocate` and `terminate` (reclamation paper): one process of
//! the [`CapabilityTree`] per thread, spawned into the thread's reclamation group when it has
//! one, so a thread's allocations charge its group's quota and terminating a group member
//! ends the whole group in at most the quota's work (section III).
//!
//! Quotas and work are in the tree's units ([`ReclaimWork::units`]); a platform turns them
//! into time with its own cost per unit.
//!
//! Invariants (checked by [`ObjectStore::check`]): the tree's own; every thread's group is
//! one of the store's groups, and a group lists exactly the threads whose group it is.

use alloc::vec;
use alloc::vec::Vec;

use super::{Kernel, Syscall, SyscallError};
use crate::reclaim::{
    CapabilityTree, GroupId, ObjectKind, ProcessId, Progress, ReclaimError, ReclaimWork,
};
use crate::{TaskId, Work};

/// Which part of a configuration the capability tree refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// A group, by index, and why.
    Group(usize, ReclaimError),
    /// A thread's process, by index, and why.
    Thread(usize, ReclaimError),
}

/// The capability tree, and each thread's process and group.
#[derive(Default)]
pub struct ObjectStore {
    tree: CapabilityTree,
    /// Each thread's process, `None` once terminated.
    process: Vec<Option<ProcessId>>,
    /// Each thread's group (index into `groups`).
    group_of: Vec<Option<usize>>,
    groups: Vec<GroupId>,
    /// Each group's threads, in thread order.
    members: Vec<Vec<TaskId>>,
}

impl ObjectStore {
    /// One process per thread, spawned into `group_of[thread]` (an index into `quotas`, each
    /// a quota in work units) when it has one (configuration time: allocates).
    pub fn new(quotas: &[u64], group_of: Vec<Option<usize>>) -> Result<Self, StoreError> {
        let mut tree = CapabilityTree::default();
        let mut groups = Vec::with_capacity(quotas.len());
        for (index, &quota) in quotas.iter().enumerate() {
            let (id, _) = tree
                .create_group(quota)
                .map_err(|error| StoreError::Group(index, error))?;
            groups.push(id);
        }
        let mut members = vec![Vec::new(); groups.len()];
        let mut process = Vec::with_capacity(group_of.len());
        for (thread, group) in group_of.iter().enumerate() {
            let id = group.and_then(|g| groups.get(g).copied());
            let created = match id {
                Some(id) => tree.spawn(id),
                None => tree.create_process(),
            };
            let (pid, _) = created.map_err(|error| StoreError::Thread(thread, error))?;
            if let (Some(g), Some(_)) = (*group, id) {
                members[g].push(TaskId(thread as u32));
            }
            process.push(Some(pid));
        }
        let group_of = group_of
            .into_iter()
            .map(|g| g.filter(|&g| g < groups.len()))
            .collect();
        Ok(ObjectStore {
            tree,
            process,
            group_of,
            groups,
            members,
        })
    }

    /// The threads of group `group`, in order.
    pub fn members(&self, group: usize) -> &[TaskId] {
        self.members.get(group).map_or(&[], Vec::as_slice)
    }

    /// Kernel objects alive now (created and not freed), in every group and outside any.
    pub fn live_objects(&self) -> u64 {
        let counters = self.tree.counters();
        counters
            .objects_created
            .saturating_sub(counters.objects_freed)
    }

    /// True when `thread` is in a reclamation group, whose quota bounds what it allocates.
    pub fn in_group(&self, thread: TaskId) -> bool {
        self.group_of
            .get(thread.index())
            .is_some_and(Option::is_some)
    }

    /// True while `thread`'s process exists.
    pub fn is_alive(&self, thread: TaskId) -> bool {
        self.process
            .get(thread.index())
            .is_some_and(Option::is_some)
    }

    /// Checks the invariants stated at the top of this module.
    pub fn check(&self) -> Result<(), &'static str> {
        self.tree.check()?;
        for (thread, group) in self.group_of.iter().enumerate() {
            let listed = |g: usize| self.members[g].contains(&TaskId(thread as u32));
            match group {
                Some(g) if *g >= self.groups.len() || !listed(*g) => {
                    return Err("a thread's group lists it")
                }
                _ => {}
            }
        }
        let listed: usize = self.members.iter().map(Vec::len).sum();
        if listed != self.group_of.iter().flatten().count() {
            return Err("a group lists exactly the threads whose group it is");
        }
        Ok(())
    }
}

/// `allocate`: `thread` creates `count` objects of `kind`, until its group's quota refuses
/// one; the rest are refused too (a refused creation changes nothing, so retrying it would
/// be refused again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocate {
    /// The allocating thread.
    pub thread: TaskId,
    /// What it creates.
    pub kind: ObjectKind,
    /// How many.
    pub count: u64,
}

/// What one `allocate` did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocation {
    /// Work units spent (refused creations cost nothing: they are refused before any change).
    pub units: u64,
    /// Objects created.
    pub created: u64,
    /// Objects refused because the group's quota was used up.
    pub refused: u64,
}

impl Syscall for Allocate {
    type Outcome = Allocation;

    /// A terminated thread allocates nothing (its process is gone).
    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<Allocation, SyscallError> {
        let store = &mut kernel.store;
        let Some(slot) = store.process.get(self.thread.index()) else {
            return Err(SyscallError::UnknownObject);
        };
        let mut result = Allocation::default();
        let Some(pid) = *slot else {
            return Ok(result);
        };
        for done in 0..self.count {
            match store.tree.create_object(pid, self.kind) {
                Ok((_, work)) => {
                    result.units += work.units();
                    result.created += 1;
                }
                Err(_) => {
                    result.refused = self.count - done;
                    break;
                }
            }
        }
        Ok(result)
    }
}

/// `terminate`: ends `thread`'s process. With a group, the whole group (Fig. 5): in one call,
/// or in steps of at most `budget` units (plus one scrub entry's overshoot) when given, so a
/// platform can bound how long it masks interrupts. Without one, the process alone, one
/// object at a time (the baseline).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terminate {
    /// A thread of the process (or group) to end.
    pub thread: TaskId,
    /// The most units one step may take, or `None` for the whole termination at once.
    pub budget: Option<u64>,
}

/// Whose processes a termination call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Nothing: the process was gone already, or the group's termination was under way.
    Nothing,
    /// Every member of group `.0` ([`ObjectStore::members`]).
    Group(usize),
    /// The one thread's process.
    Thread(TaskId),
}

/// What one termination call (or step of one) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Termination {
    /// Work units spent.
    pub units: u64,
    /// False while a stepwise termination has more to do.
    pub done: bool,
    /// Whose processes this call ended (on a group's first step: all its members).
    pub ended: Ended,
}

impl Syscall for Terminate {
    type Outcome = Termination;

    #[inline]
    fn commit(self, kernel: &mut Kernel, _: &mut Work) -> Result<Termination, SyscallError> {
        let store = &mut kernel.store;
        let Some(&group) = store.group_of.get(self.thread.index()) else {
            return Err(SyscallError::UnknownObject);
        };
        let mut result = Termination {
            units: 0,
            done: true,
            ended: Ended::Nothing,
        };
        match group {
            Some(g) => {
                let id = store.groups[g];
                let starting = !store.tree.is_terminating(id).unwrap_or(true);
                let work = match self.budget {
                    Some(budget) => match store.tree.terminate_step(id, budget.max(1)) {
                        Ok(Progress::Pending(work)) => {
                            result.done = false;
                            work
                        }
                        Ok(Progress::Done(work)) => work,
                        Err(_) => ReclaimWork::default(),
                    },
                    None => store.tree.terminate_group(id).unwrap_or_default(),
                };
                result.units = work.units();
                if starting {
                    for member in &store.members[g] {
                        store.process[member.index()] = None;
                    }
                    result.ended = Ended::Group(g);
                }
            }
            None => {
                if let Some(pid) = store.process[self.thread.index()].take() {
                    let work = store.tree.terminate_process(pid).unwrap_or_default();
                    result.units = work.units();
                    result.ended = Ended::Thread(self.thread);
                }
            }
        }
        Ok(result)
    }
}
