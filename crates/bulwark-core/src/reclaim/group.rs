//! Reclamation groups: a controller's quota of reclamation time, the scrub list of links that
//! leave the group, and termination bounded by the quota, whole or step by step.
//!
//! Section III: a controller creates groups of processes and bounds how long reclaiming each
//! may take. Every allocation charges its anticipated reclamation cost to the group and is
//! refused once the quota would be exceeded (Fig. 3); forked children and whatever the group's
//! processes create or receive join the group (section IV). The group's objects live in its
//! arena; the links that leave the group are recorded in its *scrub list* (Fig. 5) and charged
//! like allocations (the paper leaves that accounting to future work; here it is done).
//! Terminating the group unlinks the scrub list entry by entry, then releases the arena in one
//! step: the work is at most what was charged, hence at most the quota, whatever the processes
//! did.
//!
//! A link leaves the group in two ways, one scrub entry each:
//! - *shared*: a capability in the group's arena that something outside refers to: an outside
//!   holder (a semaphore shared with a system service) or another group's scrub list;
//! - *received*: a capability in another arena that this group reclaims one by one: one its
//!   process received from outside, derived from such a one, or passed on. The group pays
//!   the entry, which covers revoking that capability; its slot is charged to its own arena.
//!
//! Termination takes the entries newest first:
//! - shared: the capability is detached: unlinked from its holder and from the other group's
//!   scrub list (it stays in the arena until the release); at most 3 units;
//! - received: the capability is revoked, and by then it is a leaf, because everything derived
//!   from it entered the list after it and has been taken already; at most
//!   [`SCRUB_ENTRY_UNITS`]. If its own arena is being released too, it is only detached.
//!
//! then releases the arena ([`ARENA_RELEASE_UNITS`]) and bumps the group's generation, so every
//! id of its processes, objects and capabilities is stale. [`CostTable::validate`] makes a scrub
//! entry and an arena cost at least their units, so **the work of terminating a group is at
//! most its `charged`, which is at most its quota** (constant zero). Step by step
//! ([`CapabilityTree::terminate_step`]), a step starts an entry while its budget lasts, so it
//! does at most the budget plus [`STEP_OVERSHOOT_UNITS`], and a termination of `W` units takes
//! at most `ceil(W / budget)` steps; a terminating group refuses new work, so it can be
//! scheduled like any other work instead of blocking the core.
//!
//! Invariants (checked by [`CapabilityTree::check`]):
//! - `charged` = the arena's cost + the costs of the live processes, objects and capabilities in
//!   the arena + the scrub-entry cost per entry, and `charged <= quota`;
//! - every scrub entry names a live capability that names it back; a shared entry's capability
//!   is in this group's arena, a received entry's in another arena with this group as reclaimer;
//! - newest first reaches leaves: every capability derived from a received entry's capability
//!   (unless that one's arena is being released) has a received entry here, newer;
//! - a free slot of the group table has an empty arena, an empty scrub list and nothing
//!   charged, and is on the free list exactly once.
//!
//! [`CostTable::validate`]: super::CostTable::validate
//! [`STEP_OVERSHOOT_UNITS`]: super::STEP_OVERSHOOT_UNITS

use alloc::vec;

use super::arena::{Arena, Link, Slab, NONE};
use super::captree::{CapabilityTree, BASELINE};
use super::{
    GroupId, ProcessId, ReclaimError, ReclaimWork, ARENA_RELEASE_UNITS, SCRUB_ENTRY_UNITS,
};

/// What became of a step of termination.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Progress {
    /// Scrub-list entries remain (or the release): call again.
    Pending(ReclaimWork),
    /// The arena is released and every id of the group is stale.
    Done(ReclaimWork),
}

impl Progress {
    /// The work this step did.
    pub const fn work(&self) -> ReclaimWork {
        match self {
            Progress::Pending(work) | Progress::Done(work) => *work,
        }
    }

    /// Whether the group is gone.
    pub const fn is_done(&self) -> bool {
        matches!(self, Progress::Done(_))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GroupState {
    /// Slot 0: processes in no group, reclaimed one by one, never released.
    Baseline,
    /// Takes new processes and allocations within its quota.
    Active,
    /// Being terminated: refuses new work; its scrub list drains, then its arena goes.
    Terminating,
    /// Not in use; on the free list.
    Free,
}

/// One slot of the group table: a reclamation group, its arena and its scrub list.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Group {
    /// Bumped when the arena is released, so the group's ids go stale.
    pub(crate) generation: u32,
    pub(crate) state: GroupState,
    pub(crate) quota: u64,
    pub(crate) charged: u64,
    pub(crate) arena: Arena,
    pub(crate) scrub: ScrubList,
    pub(crate) next_free: u32,
}

impl Group {
    pub(crate) const fn baseline() -> Group {
        Group {
            generation: 0,
            state: GroupState::Baseline,
            quota: 0,
            charged: 0,
            arena: Arena::new(),
            scrub: ScrubList::new(),
            next_free: NONE,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct ScrubEntry {
    received: bool,
    pub(crate) capability: Link,
    older: u32,
    newer: u32,
}

impl ScrubEntry {
    pub(crate) const fn is_received(&self) -> bool {
        self.received
    }
}

/// A group's links that leave it, in a doubly linked list over a slab: O(1) to record, to
/// drop when the capability goes first, and to take the newest.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct ScrubList {
    entries: Slab<ScrubEntry>,
    oldest: u32,
    newest: u32,
}

impl ScrubList {
    pub(crate) const fn new() -> ScrubList {
        ScrubList {
            entries: Slab::new(),
            oldest: NONE,
            newest: NONE,
        }
    }

    pub(crate) fn len(&self) -> u32 {
        self.entries.live()
    }

    pub(crate) fn has_room(&self) -> bool {
        self.entries.has_room()
    }

    pub(crate) fn push_shared(&mut self, capability: Link) -> u32 {
        self.push(false, capability)
    }

    pub(crate) fn push_received(&mut self, capability: Link) -> u32 {
        self.push(true, capability)
    }

    fn push(&mut self, received: bool, capability: Link) -> u32 {
        let (index, _) = self.entries.insert(ScrubEntry {
            received,
            capability,
            older: self.newest,
            newer: NONE,
        });
        if self.newest != NONE {
            self.entries.at_mut(self.newest).newer = index;
        } else {
            self.oldest = index;
        }
        self.newest = index;
        index
    }

    pub(crate) fn remove(&mut self, index: u32) {
        if !self.entries.is_occupied(index) {
            return;
        }
        let entry = *self.entries.at(index);
        if entry.older != NONE {
            self.entries.at_mut(entry.older).newer = entry.newer;
        } else {
            self.oldest = entry.newer;
        }
        if entry.newer != NONE {
            self.entries.at_mut(entry.newer).older = entry.older;
        } else {
            self.newest = entry.older;
        }
        self.entries.remove(index);
    }

    pub(crate) fn entry(&self, index: u32) -> Option<&ScrubEntry> {
        self.entries
            .is_occupied(index)
            .then(|| self.entries.at(index))
    }

    fn newest(&self) -> Option<(u32, ScrubEntry)> {
        (self.newest != NONE).then(|| (self.newest, *self.entries.at(self.newest)))
    }

    fn clear(&mut self) {
        self.entries.clear();
        self.oldest = NONE;
        self.newest = NONE;
    }

    /// The list's links, and the position of every entry (oldest is 0) by index.
    fn check(&self) -> Result<vec::Vec<u32>, &'static str> {
        self.entries.check()?;
        let mut position = vec![
            NONE;
            self.entries
                .iter()
                .map(|(i, _)| i as usize + 1)
                .max()
                .unwrap_or(0)
        ];
        let mut previous = NONE;
        let mut index = self.oldest;
        let mut count = 0u32;
        while index != NONE {
            let Some(entry) = self.entry(index) else {
                return Err("scrub list names a vacant entry");
            };
            if entry.older != previous || position[index as usize] != NONE {
                return Err("scrub list links disagree");
            }
            position[index as usize] = count;
            count += 1;
            previous = index;
            index = entry.newer;
        }
        if previous != self.newest || count != self.len() {
            return Err("scrub list misses entries or its newest end");
        }
        Ok(position)
    }
}

impl CapabilityTree {
    /// A reclamation group whose termination may take at most `quota` (in the cost table's
    /// currency). Its arena's release is charged at once, so a quota below
    /// [`CostTable::arena`](super::CostTable::arena) is refused.
    pub fn create_group(&mut self, quota: u64) -> Result<(GroupId, ReclaimWork), ReclaimError> {
        let arena_cost = self.costs.arena;
        if arena_cost > quota {
            return Err(ReclaimError::QuotaExceeded);
        }
        if self.free_group == NONE && self.groups.len() >= NONE as usize {
            return Err(ReclaimError::CapacityExhausted);
        }
        // Commit: reuse a free slot (and its arena's capacity), or add one.
        let arena = if self.free_group != NONE {
            let arena = self.free_group;
            self.free_group = self.groups[arena as usize].next_free;
            arena
        } else {
            let mut group = Group::baseline();
            group.state = GroupState::Free;
            self.groups.push(group);
            (self.groups.len() - 1) as u32
        };
        let group = &mut self.groups[arena as usize];
        group.state = GroupState::Active;
        group.quota = quota;
        group.charged = arena_cost;
        group.next_free = NONE;
        let id = GroupId {
            arena,
            generation: group.generation,
        };
        let work = ReclaimWork {
            allocated: 1,
            ..ReclaimWork::default()
        };
        Ok((id, work))
    }

    /// A root process in `group`, charged to it. Its children and everything they create or
    /// receive join the group.
    pub fn spawn(&mut self, group: GroupId) -> Result<(ProcessId, ReclaimWork), ReclaimError> {
        self.find_group(group.arena, group.generation, true)?;
        self.add_process(group.arena, NONE)
    }

    /// Terminates `group` in one call: its scrub list, then its arena. At most the group's
    /// `charged` units (see [`CapabilityTree::termination_bound`]).
    pub fn terminate_group(&mut self, group: GroupId) -> Result<ReclaimWork, ReclaimError> {
        self.terminate_step(group, u64::MAX)
            .map(|progress| progress.work())
    }

    /// Does at most `max_units` (plus [`STEP_OVERSHOOT_UNITS`](super::STEP_OVERSHOOT_UNITS)) of `group`'s termination; a
    /// budget of zero counts as one, so every step progresses. The first step marks the group
    /// terminating: from then on it refuses new work, while the rest of the system goes on.
    pub fn terminate_step(
        &mut self,
        group: GroupId,
        max_units: u64,
    ) -> Result<Progress, ReclaimError> {
        let arena = group.arena;
        self.find_group(arena, group.generation, false)?;
        if arena == BASELINE {
            return Err(ReclaimError::StaleId);
        }
        self.groups[arena as usize].state = GroupState::Terminating;
        let budget = max_units.max(1);
        let mut work = ReclaimWork::default();
        while work.units() < budget {
            let Some((index, entry)) = self.groups[arena as usize].scrub.newest() else {
                self.release_arena(arena, &mut work);
                return Ok(Progress::Done(work));
            };
            self.scrub(arena, index, entry, &mut work);
        }
        Ok(Progress::Pending(work))
    }

    /// Unlinks one scrub entry of the terminating group at `arena` (section IV: "the objects in
    /// the scrub list are unlinked first").
    fn scrub(&mut self, arena: u32, index: u32, entry: ScrubEntry, work: &mut ReclaimWork) {
        let capability = entry.capability;
        self.drop_entry(arena, index, true, work);
        if !entry.received {
            self.capability_mut(capability).shared_entry = NONE;
            self.detach_capability(capability, work);
            return;
        }
        self.capability_mut(capability).received_entry = NONE;
        if self.groups[capability.arena as usize].state == GroupState::Terminating {
            // Its own arena goes too: cutting our links is enough.
            self.detach_capability(capability, work);
        } else {
            // A leaf by now (see the module's invariants), so this frees one capability.
            self.revoke_subtree(capability, work);
        }
    }

    /// Frees the terminating group's arena in one step and retires the group's ids.
    fn release_arena(&mut self, arena: u32, work: &mut ReclaimWork) {
        let group = &mut self.groups[arena as usize];
        let processes = group.arena.processes.live() as u64;
        let objects = group.arena.objects.live() as u64;
        let capabilities = group.arena.capabilities.live() as u64;
        group.arena.release();
        group.scrub.clear();
        group.state = GroupState::Free;
        group.generation = group.generation.wrapping_add(1);
        group.quota = 0;
        group.charged = 0;
        group.next_free = self.free_group;
        self.free_group = arena;
        let counters = &mut self.counters;
        counters.processes_freed += processes;
        counters.objects_freed += objects;
        counters.capabilities_freed += capabilities;
        counters.freed_in_bulk += processes + objects + capabilities;
        counters.arenas_released += 1;
        work.arenas_released += ARENA_RELEASE_UNITS;
    }

    /// The group's quota.
    pub fn quota(&self, group: GroupId) -> Result<u64, ReclaimError> {
        Ok(self.find_group(group.arena, group.generation, false)?.quota)
    }

    /// How much of the quota the group's allocations and scrub entries hold now.
    pub fn charged(&self, group: GroupId) -> Result<u64, ReclaimError> {
        Ok(self
            .find_group(group.arena, group.generation, false)?
            .charged)
    }

    /// How many links leaving the group its scrub list records.
    pub fn scrub_list_len(&self, group: GroupId) -> Result<usize, ReclaimError> {
        Ok(self
            .find_group(group.arena, group.generation, false)?
            .scrub
            .len() as usize)
    }

    /// The most units the group's termination can take from now: [`SCRUB_ENTRY_UNITS`] per
    /// scrub entry plus the arena's release. Never above `charged`, hence never above the quota.
    pub fn termination_bound(&self, group: GroupId) -> Result<u64, ReclaimError> {
        let group = self.find_group(group.arena, group.generation, false)?;
        Ok((group.scrub.len() as u64)
            .saturating_mul(SCRUB_ENTRY_UNITS)
            .saturating_add(ARENA_RELEASE_UNITS))
    }

    /// Whether the group's termination has started.
    pub fn is_terminating(&self, group: GroupId) -> Result<bool, ReclaimError> {
        Ok(self.find_group(group.arena, group.generation, false)?.state == GroupState::Terminating)
    }

    // ---- checks (called by `CapabilityTree::check`) ----

    /// The scrub list's links, its back-indices and the newest-first-reaches-leaves order.
    pub(crate) fn check_scrub_list(&self, arena: u32) -> Result<(), &'static str> {
        let group = &self.groups[arena as usize];
        let position = group.scrub.check()?;
        if arena == BASELINE && group.scrub.len() != 0 {
            return Err("the baseline keeps no scrub list");
        }
        for (index, entry) in group.scrub.entries.iter() {
            let link = entry.capability;
            let Some(owner) = self.groups.get(link.arena as usize) else {
                return Err("a scrub entry names no arena");
            };
            if owner.state == GroupState::Free || !owner.arena.capabilities.is_occupied(link.slot) {
                return Err("a scrub entry names a capability that is not live");
            }
            let capability = self.capability(link);
            if !entry.received {
                if link.arena != arena || capability.shared_entry != index {
                    return Err("a shared scrub entry and its capability disagree");
                }
                continue;
            }
            if link.arena == arena
                || capability.reclaimer != arena
                || capability.received_entry != index
            {
                return Err("a received scrub entry and its capability disagree");
            }
            if owner.state == GroupState::Terminating {
                continue;
            }
            let mut child = capability.first_child;
            let mut steps = 0u32;
            while child != NONE {
                steps += 1;
                if steps > owner.arena.capabilities.live()
                    || !owner.arena.capabilities.is_occupied(child)
                {
                    return Err("a received capability's children are not a live list");
                }
                let record = owner.arena.capabilities.at(child);
                let later = record.reclaimer == arena
                    && record.received_entry != NONE
                    && position
                        .get(record.received_entry as usize)
                        .copied()
                        .unwrap_or(NONE)
                        != NONE
                    && position[record.received_entry as usize] > position[index as usize];
                if !later {
                    return Err(
                        "a capability derived from a received one is not newer in the scrub list",
                    );
                }
                child = record.next_sibling;
            }
        }
        Ok(())
    }

    /// `charged` is the sum of what is live in the group, and within the quota.
    pub(crate) fn check_charges(&self, arena: u32) -> Result<(), &'static str> {
        let group = &self.groups[arena as usize];
        if arena == BASELINE {
            return if group.charged == 0 {
                Ok(())
            } else {
                Err("the baseline is charged")
            };
        }
        let costs = &self.costs;
        // Saturating: a true sum never overflows, since it equals a charge kept <= quota.
        let mut expected = costs.arena;
        let live = &group.arena;
        expected =
            expected.saturating_add((live.processes.live() as u64).saturating_mul(costs.process));
        for (_, object) in live.objects.iter() {
            expected = expected.saturating_add(costs.object(object.kind));
        }
        expected = expected
            .saturating_add((live.capabilities.live() as u64).saturating_mul(costs.capability));
        expected =
            expected.saturating_add((group.scrub.len() as u64).saturating_mul(costs.scrub_entry));
        if expected != group.charged {
            return Err("a group's charge is not the sum of what it holds");
        }
        if group.charged > group.quota {
            return Err("a group is charged beyond its quota");
        }
        Ok(())
    }

    /// The free list of the group table holds exactly the free slots.
    pub(crate) fn check_free_groups(&self, free_slots: usize) -> Result<(), &'static str> {
        let mut seen = vec![false; self.groups.len()];
        let mut slot = self.free_group;
        let mut count = 0usize;
        while slot != NONE {
            let Some(group) = self.groups.get(slot as usize) else {
                return Err("the free group list leaves the table");
            };
            if group.state != GroupState::Free || seen[slot as usize] {
                return Err("the free group list holds a used or repeated slot");
            }
            seen[slot as usize] = true;
            count += 1;
            slot = group.next_free;
        }
        if count != free_slots {
            return Err("a free group slot is missing from the free list");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CapabilityId, CostTable, ObjectKind, STEP_OVERSHOOT_UNITS};
    use super::*;

    fn checked(tree: &CapabilityTree) {
        assert_eq!(tree.check(), Ok(()));
    }

    /// Steps `group` to the end with `budget`; returns (steps, total units).
    fn step_through(tree: &mut CapabilityTree, group: GroupId, budget: u64) -> (u64, u64) {
        let mut steps = 0;
        let mut units = 0;
        loop {
            let progress = tree.terminate_step(group, budget).unwrap();
            steps += 1;
            units += progress.work().units();
            assert!(progress.work().units() <= budget.max(1) + STEP_OVERSHOOT_UNITS);
            checked(tree);
            if progress.is_done() {
                return (steps, units);
            }
        }
    }

    #[test]
    fn forks_and_received_capabilities_join_the_group() {
        let mut tree = CapabilityTree::default();
        let (service, _) = tree.create_process().unwrap();
        let (endpoint, _) = tree.create_object(service, ObjectKind::Endpoint).unwrap();
        let (group, _) = tree.create_group(1000).unwrap();
        let (parent, _) = tree.spawn(group).unwrap();
        let (child, _) = tree.fork(parent).unwrap();
        assert_eq!(tree.process_group(child), Ok(Some(group)));
        assert_eq!(tree.process_group(service), Ok(None));

        // Created by a forked child: in the group's arena, charged to it.
        let (semaphore, _) = tree.create_object(child, ObjectKind::Semaphore).unwrap();
        assert_eq!(tree.capability_group(semaphore), Ok(Some(group)));
        // arena 1 + processes 2 x 2 + semaphore 1 + capability 3 = 9.
        assert_eq!(tree.charged(group), Ok(9));

        // Received from the service: stored with its object (baseline), reclaimed by the
        // group: one received entry (5), and the slot, parent and holder links.
        let (received, work) = tree.delegate(endpoint, child).unwrap();
        assert_eq!(work.units(), 4);
        assert_eq!(tree.capability_group(received), Ok(None));
        assert_eq!(tree.reclaimer(received), Ok(Some(group)));
        assert_eq!(tree.charged(group), Ok(14));
        // Derived inside the group, passed to the parent: the reclaimer is inherited.
        let (passed, _) = tree.delegate(received, parent).unwrap();
        assert_eq!(tree.reclaimer(passed), Ok(Some(group)));
        assert_eq!(tree.scrub_list_len(group), Ok(2));
        assert_eq!(tree.charged(group), Ok(19));
        checked(&tree);
    }

    #[test]
    fn the_quota_refuses_exactly_the_allocation_that_would_exceed_it() {
        let mut tree = CapabilityTree::default();
        // arena 1 + process 2 + 3 semaphores x (1 + 3) = 15.
        let (group, _) = tree.create_group(15).unwrap();
        let (process, _) = tree.spawn(group).unwrap();
        let mut semaphores = [None; 3];
        for semaphore in &mut semaphores {
            *semaphore = Some(
                tree.create_object(process, ObjectKind::Semaphore)
                    .unwrap()
                    .0,
            );
        }
        assert_eq!(tree.charged(group), Ok(15));
        let before = tree.clone();
        assert_eq!(
            tree.create_object(process, ObjectKind::Semaphore)
                .unwrap_err(),
            ReclaimError::QuotaExceeded
        );
        assert_eq!(
            tree.derive(semaphores[0].unwrap()).unwrap_err(),
            ReclaimError::QuotaExceeded
        );
        assert_eq!(tree.fork(process).unwrap_err(), ReclaimError::QuotaExceeded);
        assert_eq!(tree.spawn(group).unwrap_err(), ReclaimError::QuotaExceeded);
        assert!(tree == before, "a refused allocation changed the model");
        checked(&tree);
        // Revoking one refunds 4; the same allocation fits again, to the unit.
        tree.revoke(semaphores[2].unwrap()).unwrap();
        assert_eq!(tree.charged(group), Ok(11));
        tree.create_object(process, ObjectKind::Endpoint).unwrap();
        assert_eq!(tree.charged(group), Ok(15));
        checked(&tree);

        // A delegation out of a full group is refused too: it needs a capability and a
        // shared entry (3 + 5).
        let (service, _) = tree.create_process().unwrap();
        let before = tree.clone();
        assert_eq!(
            tree.delegate(semaphores[0].unwrap(), service).unwrap_err(),
            ReclaimError::QuotaExceeded
        );
        assert!(tree == before);
        // And the arena's own cost must fit.
        assert_eq!(
            tree.create_group(0).unwrap_err(),
            ReclaimError::QuotaExceeded
        );
    }

    #[test]
    fn delegation_and_revocation_across_groups_keep_the_scrub_lists() {
        let mut tree = CapabilityTree::default();
        let (first, _) = tree.create_group(1000).unwrap();
        let (second, _) = tree.create_group(1000).unwrap();
        let (third, _) = tree.create_group(1000).unwrap();
        let (owner, _) = tree.spawn(first).unwrap();
        let (borrower, _) = tree.spawn(second).unwrap();
        let (stranger, _) = tree.spawn(third).unwrap();
        let (service, _) = tree.create_process().unwrap();
        let (semaphore, _) = tree.create_object(owner, ObjectKind::Semaphore).unwrap();
        let first_before = tree.charged(first).unwrap();
        let second_before = tree.charged(second).unwrap();

        // Into another group: stored and charged in the first (3 + shared entry 5), the
        // second reclaims it (received entry 5).
        let (lent, _) = tree.delegate(semaphore, borrower).unwrap();
        assert_eq!(tree.scrub_list_len(first), Ok(1));
        assert_eq!(tree.scrub_list_len(second), Ok(1));
        assert_eq!(tree.charged(first), Ok(first_before + 8));
        assert_eq!(tree.charged(second), Ok(second_before + 5));
        // The borrower deriving from it spends the first group's quota too.
        let (lent_further, _) = tree.derive(lent).unwrap();
        assert_eq!(tree.scrub_list_len(first), Ok(2));
        assert_eq!(tree.scrub_list_len(second), Ok(2));
        // Passing it on to a third group would make two groups reclaim it: refused.
        let before = tree.clone();
        assert_eq!(
            tree.delegate(lent, stranger).unwrap_err(),
            ReclaimError::CrossesTwoGroups
        );
        assert!(tree == before);
        // To a service in no group: still reclaimed by the second group only.
        let (relayed, _) = tree.delegate(lent_further, service).unwrap();
        assert_eq!(tree.reclaimer(relayed), Ok(Some(second)));
        assert_eq!(tree.scrub_list_len(first), Ok(3));
        assert_eq!(tree.scrub_list_len(second), Ok(3));
        checked(&tree);

        // Revoking from the owner's side drops every entry on both sides and refunds both.
        tree.revoke(lent).unwrap();
        assert_eq!(tree.scrub_list_len(first), Ok(0));
        assert_eq!(tree.scrub_list_len(second), Ok(0));
        assert_eq!(tree.charged(first), Ok(first_before));
        assert_eq!(tree.charged(second), Ok(second_before));
        assert_eq!(tree.counters().scrub_entries_removed, 6);
        assert_eq!(tree.capabilities_held(service), Ok(0));
        checked(&tree);
    }

    #[test]
    fn termination_leaves_nothing_behind() {
        let mut tree = CapabilityTree::default();
        let (service, _) = tree.create_process().unwrap();
        let (service_endpoint, _) = tree.create_object(service, ObjectKind::Endpoint).unwrap();
        let (other, _) = tree.create_group(1000).unwrap();
        let (neighbour, _) = tree.spawn(other).unwrap();
        let (neighbour_mapping, _) = tree
            .create_object(neighbour, ObjectKind::MemoryMapping)
            .unwrap();
        let (group, _) = tree.create_group(10_000).unwrap();
        let (root, _) = tree.spawn(group).unwrap();
        let (child, _) = tree.fork(root).unwrap();
        let mut shared = [None; 2];
        for (i, kind) in ObjectKind::ALL.into_iter().enumerate() {
            let (capability, _) = tree.create_object(child, kind).unwrap();
            let (derived, _) = tree.derive(capability).unwrap();
            if i < 2 {
                // Shared with the service and with the neighbour group.
                let to = if i == 0 { service } else { neighbour };
                shared[i] = Some(tree.delegate(derived, to).unwrap().0);
            }
        }
        let (received, _) = tree.delegate(service_endpoint, child).unwrap();
        let (received_mapping, _) = tree.delegate(neighbour_mapping, root).unwrap();
        let (passed_on, _) = tree.delegate(received, service).unwrap();
        checked(&tree);
        let bound = tree.termination_bound(group).unwrap();
        let charged = tree.charged(group).unwrap();
        let created = tree.counters();

        let work = tree.terminate_group(group).unwrap();
        assert!(work.units() <= bound && bound <= charged && charged <= 10_000);
        checked(&tree);
        // The outside world no longer refers to anything of the group's.
        assert_eq!(tree.capabilities_held(service), Ok(1)); // its own endpoint
        assert_eq!(tree.capabilities_held(neighbour), Ok(1)); // its own mapping
        for gone in [
            shared[0].unwrap(),
            shared[1].unwrap(),
            received,
            received_mapping,
            passed_on,
        ] {
            assert_eq!(tree.holder(gone), Err(ReclaimError::StaleId));
        }
        assert_eq!(tree.process_group(root), Err(ReclaimError::StaleId));
        assert_eq!(tree.charged(group), Err(ReclaimError::StaleId));
        // The neighbour got its quota back for the entry it kept for the shared capability.
        assert_eq!(tree.scrub_list_len(other), Ok(0));
        assert_eq!(tree.charged(other), Ok(1 + 2 + 1 + 3));
        // Every entry was unlinked exactly once, everything of the group freed exactly once.
        let counters = tree.counters();
        assert_eq!(
            counters.scrub_entries_scrubbed + counters.scrub_entries_removed,
            counters.scrub_entries_created
        );
        assert_eq!(counters.processes_freed, 2);
        assert_eq!(counters.objects_freed, 3);
        assert_eq!(
            counters.capabilities_freed,
            created.capabilities_created - 2
        );
        assert_eq!(counters.arenas_released, 1);
        // Then everything else, and nothing is left.
        tree.terminate_group(other).unwrap();
        tree.terminate_process(service).unwrap();
        let counters = tree.counters();
        assert_eq!(counters.processes_created, counters.processes_freed);
        assert_eq!(counters.objects_created, counters.objects_freed);
        assert_eq!(counters.capabilities_created, counters.capabilities_freed);
        checked(&tree);
    }

    /// `objects` semaphores in one process, `shared` of them shared with a service in no group.
    fn populate(
        tree: &mut CapabilityTree,
        process: ProcessId,
        objects: u64,
        shared: u64,
    ) -> ProcessId {
        let (service, _) = tree.create_process().unwrap();
        for i in 0..objects {
            let (capability, _) = tree.create_object(process, ObjectKind::Semaphore).unwrap();
            if i < shared {
                tree.delegate(capability, service).unwrap();
            }
        }
        service
    }

    #[test]
    fn grouped_termination_is_bounded_while_the_baseline_grows() {
        for objects in [1u64, 10, 1000, 10_000] {
            let mut tree = CapabilityTree::default();
            let (baseline, _) = tree.create_process().unwrap();
            populate(&mut tree, baseline, objects, 0);
            let (group, _) = tree.create_group(u64::MAX).unwrap();
            let (grouped, _) = tree.spawn(group).unwrap();
            populate(&mut tree, grouped, objects, 0);
            // Baseline: 3 per object + the process. Grouped: the arena release, whatever n is.
            assert_eq!(
                tree.terminate_process(baseline).unwrap().units(),
                3 * objects + 1
            );
            assert_eq!(
                tree.terminate_group(group).unwrap().units(),
                ARENA_RELEASE_UNITS
            );
            assert_eq!(tree.counters().freed_in_bulk, 2 * objects + 1);
            checked(&tree);
        }
        // With links leaving the group, only they are unlinked: each shared capability costs
        // its entry and its holder link (2), then the release (1).
        for shared in [1u64, 10, 100] {
            let mut tree = CapabilityTree::default();
            let (group, _) = tree.create_group(u64::MAX).unwrap();
            let (grouped, _) = tree.spawn(group).unwrap();
            let service = populate(&mut tree, grouped, 1000, shared);
            assert_eq!(tree.scrub_list_len(group), Ok(shared as usize));
            let work = tree.terminate_group(group).unwrap();
            assert_eq!(work.units(), 2 * shared + 1);
            assert!(work.units() <= SCRUB_ENTRY_UNITS * shared + ARENA_RELEASE_UNITS);
            assert_eq!(tree.capabilities_held(service), Ok(0));
            checked(&tree);
        }
    }

    #[test]
    fn stepwise_termination_takes_ceil_of_work_over_budget() {
        // 10 shared entries of 2 units and the release: 21 units.
        for budget in [2u64, 4, 6, 8, 20, 22] {
            let mut tree = CapabilityTree::default();
            let (group, _) = tree.create_group(u64::MAX).unwrap();
            let (process, _) = tree.spawn(group).unwrap();
            populate(&mut tree, process, 50, 10);
            let (steps, units) = step_through(&mut tree, group, budget);
            assert_eq!(units, 21);
            assert_eq!(steps, 21u64.div_ceil(budget), "budget {budget}");
        }
        // Uneven budgets overshoot by less than one entry, so never take more steps.
        for budget in [0u64, 1, 3, 5, 7] {
            let mut tree = CapabilityTree::default();
            let (group, _) = tree.create_group(u64::MAX).unwrap();
            let (process, _) = tree.spawn(group).unwrap();
            populate(&mut tree, process, 50, 10);
            let (steps, units) = step_through(&mut tree, group, budget);
            assert_eq!(units, 21);
            assert!(steps <= 21u64.div_ceil(budget.max(1)), "budget {budget}");
        }
    }

    #[test]
    fn received_chains_are_reclaimed_leaf_first_one_entry_per_step() {
        let mut tree = CapabilityTree::default();
        let (service, _) = tree.create_process().unwrap();
        let (endpoint, _) = tree.create_object(service, ObjectKind::Endpoint).unwrap();
        let (group, _) = tree.create_group(u64::MAX).unwrap();
        let (process, _) = tree.spawn(group).unwrap();
        let (mut capability, _) = tree.delegate(endpoint, process).unwrap();
        for _ in 0..9 {
            capability = tree.derive(capability).unwrap().0;
        }
        assert_eq!(tree.scrub_list_len(group), Ok(10));
        // Newest first, each is a leaf when its turn comes: its entry, holder link, parent
        // link and slot (4 units; the baseline keeps no entry for it). Taken oldest first,
        // the first step would revoke the whole chain and blow its budget.
        let (steps, units) = step_through(&mut tree, group, 1);
        assert_eq!(units, 10 * 4 + ARENA_RELEASE_UNITS);
        assert_eq!(steps, 11);
        assert_eq!(tree.capabilities_held(service), Ok(1));
        assert_eq!(tree.counters().scrub_entries_scrubbed, 10);
    }

    #[test]
    fn a_terminating_group_refuses_work_while_others_go_on() {
        let mut tree = CapabilityTree::default();
        let (group, _) = tree.create_group(u64::MAX).unwrap();
        let (process, _) = tree.spawn(group).unwrap();
        let service = populate(&mut tree, process, 20, 5);
        let (semaphore, _) = tree.create_object(process, ObjectKind::Semaphore).unwrap();
        let progress = tree.terminate_step(group, 2).unwrap();
        assert!(!progress.is_done());
        assert_eq!(tree.is_terminating(group), Ok(true));
        let before = tree.clone();
        assert_eq!(
            tree.spawn(group).unwrap_err(),
            ReclaimError::GroupTerminating
        );
        assert_eq!(
            tree.fork(process).unwrap_err(),
            ReclaimError::GroupTerminating
        );
        assert_eq!(
            tree.derive(semaphore).unwrap_err(),
            ReclaimError::GroupTerminating
        );
        assert_eq!(
            tree.delegate(semaphore, service).unwrap_err(),
            ReclaimError::GroupTerminating
        );
        assert!(tree == before);
        // The service exits meanwhile: its capabilities into the group go one by one.
        tree.terminate_process(service).unwrap();
        checked(&tree);
        let (other, _) = tree.create_process().unwrap();
        tree.create_object(other, ObjectKind::Endpoint).unwrap();
        step_through(&mut tree, group, 3);
        assert_eq!(
            tree.terminate_step(group, 3).unwrap_err(),
            ReclaimError::StaleId
        );
        checked(&tree);
    }

    #[test]
    fn both_sides_of_a_shared_capability_terminate_in_either_order() {
        for order in 0..4 {
            let mut tree = CapabilityTree::default();
            let (first, _) = tree.create_group(u64::MAX).unwrap();
            let (second, _) = tree.create_group(u64::MAX).unwrap();
            let (owner, _) = tree.spawn(first).unwrap();
            let (borrower, _) = tree.spawn(second).unwrap();
            let (service, _) = tree.create_process().unwrap();
            let (service_endpoint, _) = tree.create_object(service, ObjectKind::Endpoint).unwrap();
            let mut lent: [Option<CapabilityId>; 4] = [None; 4];
            for slot in &mut lent {
                let (capability, _) = tree.create_object(owner, ObjectKind::Semaphore).unwrap();
                let (borrowed, _) = tree.delegate(capability, borrower).unwrap();
                let (again, _) = tree.derive(borrowed).unwrap();
                *slot = Some(tree.delegate(again, owner).unwrap().0);
            }
            let (received, _) = tree.delegate(service_endpoint, borrower).unwrap();
            // Into the owner's group it would have two reclaimers; to the service, one.
            assert_eq!(
                tree.delegate(received, owner).unwrap_err(),
                ReclaimError::CrossesTwoGroups
            );
            tree.delegate(received, service).unwrap();
            checked(&tree);
            // Interleave steps of both, one of them first, or finish one outright.
            let (a, b) = if order % 2 == 0 {
                (first, second)
            } else {
                (second, first)
            };
            let mut done = (false, false);
            while !(done.0 && done.1) {
                if !done.0 {
                    done.0 = tree.terminate_step(a, 1 + order as u64).unwrap().is_done();
                    checked(&tree);
                }
                if !done.1 && (order < 2 || done.0) {
                    done.1 = tree.terminate_step(b, 2).unwrap().is_done();
                    checked(&tree);
                }
            }
            assert_eq!(tree.capabilities_held(service), Ok(1));
            let counters = tree.counters();
            assert_eq!(
                counters.capabilities_created - counters.capabilities_freed,
                1
            );
            assert_eq!(
                counters.scrub_entries_created,
                counters.scrub_entries_scrubbed + counters.scrub_entries_removed
            );
        }
    }

    #[test]
    fn group_slots_are_reused_and_old_ids_stay_stale() {
        let mut tree = CapabilityTree::new(CostTable::DEFAULT).unwrap();
        let (old, _) = tree.create_group(100).unwrap();
        let (old_process, _) = tree.spawn(old).unwrap();
        let (old_capability, _) = tree
            .create_object(old_process, ObjectKind::Semaphore)
            .unwrap();
        tree.terminate_group(old).unwrap();
        let (new, _) = tree.create_group(100).unwrap();
        assert_eq!(new.arena, old.arena);
        assert_ne!(new, old);
        let (new_process, _) = tree.spawn(new).unwrap();
        assert_eq!(tree.spawn(old).unwrap_err(), ReclaimError::StaleId);
        assert_eq!(tree.fork(old_process).unwrap_err(), ReclaimError::StaleId);
        assert_eq!(
            tree.revoke(old_capability).unwrap_err(),
            ReclaimError::StaleId
        );
        assert_eq!(
            tree.terminate_group(old).unwrap_err(),
            ReclaimError::StaleId
        );
        assert_eq!(tree.process_group(new_process), Ok(Some(new)));
        assert_eq!(tree.charged(new), Ok(3));
        checked(&tree);
        let cheap = CostTable {
            scrub_entry: 1,
            ..CostTable::DEFAULT
        };
        assert_eq!(
            CapabilityTree::new(cheap).unwrap_err(),
            ReclaimError::InvalidParameter
        );
    }
}
