//! The kernel-object model: processes, kernel objects, and the capabilities that derive,
//! delegate and revoke access to them; and the baseline, which reclaims them one by one.
//!
//! This is the graph the paper finds in M3 (section IV): processes hold capabilities, which
//! point to kernel objects and form an inheritance (derivation) tree as processes derive and
//! exchange them; terminating a process frees its capabilities, everything derived from them,
//! the objects left without their root, and its child processes: its *reclamation tree*
//! (Fig. 4). The model, with the readings chosen where the paper leaves room:
//! - A process has a parent (none for a root: a system service, or a process a controller
//!   spawned into a group) and children. Terminating a process terminates its subtree.
//! - Creating an object gives its creator the object's root capability. [`derive`] makes a
//!   child capability held by the same holder, [`delegate`] one held by another process.
//!   [`revoke`] removes a capability and everything derived from it, wherever held; removing
//!   a root capability frees its object. So an object lives exactly as long as its root
//!   capability, and no capability outlives its object.
//! - The baseline, [`terminate_process`], revokes every capability the subtree's processes
//!   hold, recursively through derived capabilities, unlinking each from its neighbours, then
//!   frees the processes, as M3 and Linux do: its work grows with the tree (section II, Fig. 2).
//!   Walks are iterative, so a deep tree cannot overflow the kernel stack.
//! - Every entity lives in one arena, the baseline's or a group's (see [`group`](super::group)):
//!   a process in its group's (forks inherit it), an object in its creator's, a capability in
//!   its object's. So a derivation tree never spans two arenas and a group's release takes
//!   whole trees with it.
//! - A capability in one arena that a process of another group holds is in that group's
//!   reclamation tree too ("creates or inherits ... the group affiliation is inherited",
//!   section IV): that group is the capability's *reclaimer*; it is charged for it and keeps a
//!   scrub entry for it, and capabilities derived from it inherit the reclaimer. A chain may
//!   leave its object's arena into one group only ([`ReclaimError::CrossesTwoGroups`]): the
//!   reading that keeps one charge and one O(1) scrub entry per capability.
//!
//! Invariants (checked by [`CapabilityTree::check`], which property tests call after every
//! operation):
//! - every link names a live entity: parents and children, holders and held capabilities,
//!   objects and root capabilities, scrub entries and their capabilities, in both directions;
//! - the process tree and each derivation tree are trees (no cycles), within one arena; a
//!   capability without parent is its object's root and every other one shares its parent's
//!   object;
//! - every capability has a holder whose list holds it exactly once, except capabilities
//!   already detached by their terminating group;
//! - a capability's reclaimer is the group of its holder if that is neither its arena's group
//!   nor the baseline, else its parent's reclaimer; the two never disagree;
//! - group accounting and scrub lists as stated in [`group`](super::group);
//! - the counters agree with what is live: created - freed = live, for every kind.
//!
//! [`derive`]: CapabilityTree::derive
//! [`delegate`]: CapabilityTree::delegate
//! [`revoke`]: CapabilityTree::revoke
//! [`terminate_process`]: CapabilityTree::terminate_process

use alloc::vec;
use alloc::vec::Vec;

use super::arena::{Link, NONE};
use super::group::{Group, GroupState};
use super::{
    CapabilityId, CostTable, Counters, GroupId, Handle, ObjectId, ObjectKind, ProcessId,
    ReclaimError, ReclaimWork,
};

/// The arena of processes in no group: reclaimed one by one, never released.
pub(crate) const BASELINE: u32 = 0;

/// A process record. Its tree links stay in its arena; its capability list may reach into
/// any arena (it holds capabilities to other groups' objects).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Process {
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) next_sibling: u32,
    pub(crate) previous_sibling: u32,
    pub(crate) first_capability: Link,
}

/// A kernel-object record: its kind and its root capability (same arena).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Object {
    pub(crate) kind: ObjectKind,
    pub(crate) root: u32,
}

/// A capability record. Object and derivation links stay in its arena; the holder may be
/// anywhere.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Capability {
    pub(crate) object: u32,
    /// [`Link::NONE`] once detached by its terminating group.
    pub(crate) holder: Link,
    pub(crate) holder_next: Link,
    pub(crate) holder_previous: Link,
    pub(crate) parent: u32,
    pub(crate) first_child: u32,
    pub(crate) next_sibling: u32,
    pub(crate) previous_sibling: u32,
    /// The outside group that reclaims it one by one (its arena), or [`NONE`].
    pub(crate) reclaimer: u32,
    /// Its entry in its own arena's scrub list, if a link leaves that group.
    pub(crate) shared_entry: u32,
    /// Its entry in the reclaimer's scrub list.
    pub(crate) received_entry: u32,
}

/// The kernel's processes, objects and capabilities, in the baseline's arena and in one arena
/// per reclamation group. Every call either succeeds and reports its work, or is refused and
/// changes nothing. The controller's API (groups) is in [`group`](super::group).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CapabilityTree {
    /// Slot 0 is the baseline; the others are reclamation groups, live or free.
    pub(crate) groups: Vec<Group>,
    /// Free slots of the group table, through `Group::next_free`.
    pub(crate) free_group: u32,
    pub(crate) costs: CostTable,
    pub(crate) counters: Counters,
}

impl Default for CapabilityTree {
    fn default() -> Self {
        CapabilityTree {
            groups: vec![Group::baseline()],
            free_group: NONE,
            costs: CostTable::DEFAULT,
            counters: Counters::default(),
        }
    }
}

impl CapabilityTree {
    /// An empty model charging `costs`, which must pass [`CostTable::validate`].
    pub fn new(costs: CostTable) -> Result<Self, ReclaimError> {
        costs.validate()?;
        Ok(CapabilityTree {
            costs,
            ..CapabilityTree::default()
        })
    }

    /// The cost table, fixed for the model's life so refunds match charges.
    pub fn costs(&self) -> &CostTable {
        &self.costs
    }

    /// Running totals of what was created and freed.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// A root process in no group (a system service, a controller): reclaimed by the baseline.
    pub fn create_process(&mut self) -> Result<(ProcessId, ReclaimWork), ReclaimError> {
        self.add_process(BASELINE, NONE)
    }

    /// A child of `parent`, in `parent`'s group (section III: "reclamation budgets have to be
    /// inherited"), charged to it.
    pub fn fork(&mut self, parent: ProcessId) -> Result<(ProcessId, ReclaimWork), ReclaimError> {
        let parent = self.find_process(parent, true)?;
        self.add_process(parent.arena, parent.slot)
    }

    /// A new kernel object of `kind` in `process`'s arena, and its root capability, held by
    /// `process`. Charges the object and the capability to `process`'s group.
    pub fn create_object(
        &mut self,
        process: ProcessId,
        kind: ObjectKind,
    ) -> Result<(CapabilityId, ReclaimWork), ReclaimError> {
        let holder = self.find_process(process, true)?;
        let arena = holder.arena;
        let cost = self
            .costs
            .object(kind)
            .saturating_add(self.costs.capability);
        self.can_charge(arena, cost)?;
        let storage = &self.groups[arena as usize].arena;
        if !storage.objects.has_room() || !storage.capabilities.has_room() {
            return Err(ReclaimError::CapacityExhausted);
        }
        // Commit.
        let storage = &mut self.groups[arena as usize].arena;
        let (object, _) = storage.objects.insert(Object { kind, root: NONE });
        let (slot, _) = storage
            .capabilities
            .insert(Capability::new(object, NONE, NONE));
        storage.objects.at_mut(object).root = slot;
        let capability = Link::new(arena, slot);
        self.push_held(holder, capability);
        self.charge(arena, cost);
        self.counters.objects_created += 1;
        self.counters.capabilities_created += 1;
        Ok((self.capability_id(capability), ReclaimWork::OBJECT_CREATED))
    }

    /// A child of `capability` in the derivation tree, held by the same process.
    pub fn derive(
        &mut self,
        capability: CapabilityId,
    ) -> Result<(CapabilityId, ReclaimWork), ReclaimError> {
        let parent = self.find_capability(capability, true)?;
        let holder = self.capability(parent).holder;
        // Only a terminating group's capabilities are detached, and those were refused above.
        if holder.is_none() {
            return Err(ReclaimError::GroupTerminating);
        }
        if self.groups[holder.arena as usize].state == GroupState::Terminating {
            return Err(ReclaimError::GroupTerminating);
        }
        self.add_capability(parent, holder)
    }

    /// A child of `capability` in the derivation tree, held by `to`: sharing an object with
    /// another process. Across a group boundary this records scrub entries: the new
    /// capability is stored (and charged) in its object's arena and reclaimed one by one by
    /// `to`'s group, if that is another group.
    pub fn delegate(
        &mut self,
        capability: CapabilityId,
        to: ProcessId,
    ) -> Result<(CapabilityId, ReclaimWork), ReclaimError> {
        let parent = self.find_capability(capability, true)?;
        let holder = self.find_process(to, true)?;
        self.add_capability(parent, holder)
    }

    /// Removes `capability` and every capability derived from it, wherever held, one by one;
    /// a root capability takes its object with it (M3's revoke).
    pub fn revoke(&mut self, capability: CapabilityId) -> Result<ReclaimWork, ReclaimError> {
        let top = self.find_capability(capability, true)?;
        let mut work = ReclaimWork::default();
        self.revoke_subtree(top, &mut work);
        Ok(work)
    }

    /// The baseline: terminates `process` and its descendants, revoking everything they hold
    /// one by one and unlinking each capability and process from its neighbours. Works in any
    /// arena (a process of a group may exit alone); the work grows with the reclamation tree.
    pub fn terminate_process(&mut self, process: ProcessId) -> Result<ReclaimWork, ReclaimError> {
        let top = self.find_process(process, true)?;
        let arena = top.arena;
        let mut work = ReclaimWork::default();
        // Post-order walk: descend to a leaf, empty it, free it, climb to its parent.
        let mut node = top.slot;
        loop {
            let first_child = self.process(Link::new(arena, node)).first_child;
            if first_child != NONE {
                node = first_child;
                continue;
            }
            loop {
                let held = self.process(Link::new(arena, node)).first_capability;
                if held.is_none() {
                    break;
                }
                self.revoke_subtree(held, &mut work);
            }
            let parent = self.process(Link::new(arena, node)).parent;
            self.remove_process(Link::new(arena, node), &mut work);
            if node == top.slot {
                break;
            }
            node = parent;
        }
        Ok(work)
    }

    /// The process holding `capability`.
    pub fn holder(&self, capability: CapabilityId) -> Result<ProcessId, ReclaimError> {
        let link = self.find_capability(capability, false)?;
        let holder = self.capability(link).holder;
        if holder.is_none() {
            return Err(ReclaimError::GroupTerminating);
        }
        Ok(self.process_id(holder))
    }

    /// The object `capability` gives access to.
    pub fn object(&self, capability: CapabilityId) -> Result<ObjectId, ReclaimError> {
        let link = self.find_capability(capability, false)?;
        let slot = self.capability(link).object;
        let handle = Handle {
            arena: link.arena,
            arena_generation: self.groups[link.arena as usize].generation,
            slot,
            generation: self.groups[link.arena as usize]
                .arena
                .objects
                .generation(slot),
        };
        Ok(ObjectId(handle))
    }

    /// The kind of `object`.
    pub fn object_kind(&self, object: ObjectId) -> Result<ObjectKind, ReclaimError> {
        let handle = object.0;
        let group = self.find_group(handle.arena, handle.arena_generation, false)?;
        if !group.arena.objects.contains(handle.slot, handle.generation) {
            return Err(ReclaimError::StaleId);
        }
        Ok(group.arena.objects.at(handle.slot).kind)
    }

    /// The group `process` belongs to, or `None` for the baseline.
    pub fn process_group(&self, process: ProcessId) -> Result<Option<GroupId>, ReclaimError> {
        let link = self.find_process(process, false)?;
        Ok(self.group_id(link.arena))
    }

    /// The group whose arena stores `capability` (its object's group), or `None`.
    pub fn capability_group(
        &self,
        capability: CapabilityId,
    ) -> Result<Option<GroupId>, ReclaimError> {
        let link = self.find_capability(capability, false)?;
        Ok(self.group_id(link.arena))
    }

    /// The outside group that reclaims `capability` one by one, if any.
    pub fn reclaimer(&self, capability: CapabilityId) -> Result<Option<GroupId>, ReclaimError> {
        let link = self.find_capability(capability, false)?;
        let reclaimer = self.capability(link).reclaimer;
        Ok(if reclaimer == NONE {
            None
        } else {
            self.group_id(reclaimer)
        })
    }

    /// How many capabilities `process` holds (walks its list).
    pub fn capabilities_held(&self, process: ProcessId) -> Result<usize, ReclaimError> {
        let link = self.find_process(process, false)?;
        let mut count = 0;
        let mut held = self.process(link).first_capability;
        while !held.is_none() {
            count += 1;
            held = self.capability(held).holder_next;
        }
        Ok(count)
    }

    // ---- ids ----

    /// The group at `arena` if `generation` is its live incarnation; `open` also refuses a
    /// terminating group (it takes no new work, but can still be looked at).
    pub(crate) fn find_group(
        &self,
        arena: u32,
        generation: u32,
        open: bool,
    ) -> Result<&Group, ReclaimError> {
        let group = self
            .groups
            .get(arena as usize)
            .ok_or(ReclaimError::StaleId)?;
        if group.generation != generation {
            return Err(ReclaimError::StaleId);
        }
        match group.state {
            GroupState::Free => Err(ReclaimError::StaleId),
            GroupState::Terminating if open => Err(ReclaimError::GroupTerminating),
            _ => Ok(group),
        }
    }

    pub(crate) fn find_process(&self, id: ProcessId, open: bool) -> Result<Link, ReclaimError> {
        let handle = id.0;
        let group = self.find_group(handle.arena, handle.arena_generation, open)?;
        if !group
            .arena
            .processes
            .contains(handle.slot, handle.generation)
        {
            return Err(ReclaimError::StaleId);
        }
        Ok(Link::new(handle.arena, handle.slot))
    }

    fn find_capability(&self, id: CapabilityId, open: bool) -> Result<Link, ReclaimError> {
        let handle = id.0;
        let group = self.find_group(handle.arena, handle.arena_generation, open)?;
        if !group
            .arena
            .capabilities
            .contains(handle.slot, handle.generation)
        {
            return Err(ReclaimError::StaleId);
        }
        Ok(Link::new(handle.arena, handle.slot))
    }

    pub(crate) fn process_id(&self, link: Link) -> ProcessId {
        let group = &self.groups[link.arena as usize];
        ProcessId(Handle {
            arena: link.arena,
            arena_generation: group.generation,
            slot: link.slot,
            generation: group.arena.processes.generation(link.slot),
        })
    }

    fn capability_id(&self, link: Link) -> CapabilityId {
        let group = &self.groups[link.arena as usize];
        CapabilityId(Handle {
            arena: link.arena,
            arena_generation: group.generation,
            slot: link.slot,
            generation: group.arena.capabilities.generation(link.slot),
        })
    }

    pub(crate) fn group_id(&self, arena: u32) -> Option<GroupId> {
        (arena != BASELINE).then(|| GroupId {
            arena,
            generation: self.groups[arena as usize].generation,
        })
    }

    // ---- records ----

    pub(crate) fn process(&self, link: Link) -> &Process {
        self.groups[link.arena as usize]
            .arena
            .processes
            .at(link.slot)
    }

    fn process_mut(&mut self, link: Link) -> &mut Process {
        self.groups[link.arena as usize]
            .arena
            .processes
            .at_mut(link.slot)
    }

    pub(crate) fn capability(&self, link: Link) -> &Capability {
        self.groups[link.arena as usize]
            .arena
            .capabilities
            .at(link.slot)
    }

    pub(crate) fn capability_mut(&mut self, link: Link) -> &mut Capability {
        self.groups[link.arena as usize]
            .arena
            .capabilities
            .at_mut(link.slot)
    }

    fn capability_is_live(&self, link: Link) -> bool {
        self.groups.get(link.arena as usize).is_some_and(|g| {
            g.state != GroupState::Free && g.arena.capabilities.is_occupied(link.slot)
        })
    }

    fn process_is_live(&self, link: Link) -> bool {
        self.groups.get(link.arena as usize).is_some_and(|g| {
            g.state != GroupState::Free && g.arena.processes.is_occupied(link.slot)
        })
    }

    // ---- quota ----

    /// Whether `amount` more fits in the quota of the group at `arena` (the baseline has no
    /// quota: nothing bounds its reclamation, which is the paper's point).
    pub(crate) fn can_charge(&self, arena: u32, amount: u64) -> Result<(), ReclaimError> {
        if arena == BASELINE {
            return Ok(());
        }
        let group = &self.groups[arena as usize];
        match group.state {
            GroupState::Active => {}
            GroupState::Terminating => return Err(ReclaimError::GroupTerminating),
            GroupState::Free | GroupState::Baseline => return Err(ReclaimError::StaleId),
        }
        match group.charged.checked_add(amount) {
            Some(total) if total <= group.quota => Ok(()),
            _ => Err(ReclaimError::QuotaExceeded),
        }
    }

    pub(crate) fn charge(&mut self, arena: u32, amount: u64) {
        if arena != BASELINE {
            let group = &mut self.groups[arena as usize];
            group.charged = group.charged.saturating_add(amount);
        }
    }

    pub(crate) fn refund(&mut self, arena: u32, amount: u64) {
        if arena != BASELINE {
            let group = &mut self.groups[arena as usize];
            group.charged = group.charged.saturating_sub(amount);
        }
    }

    // ---- allocation (validate, then commit) ----

    /// A process in `arena`, child of `parent` (or a root if [`NONE`]).
    pub(crate) fn add_process(
        &mut self,
        arena: u32,
        parent: u32,
    ) -> Result<(ProcessId, ReclaimWork), ReclaimError> {
        let cost = self.costs.process;
        self.can_charge(arena, cost)?;
        if !self.groups[arena as usize].arena.processes.has_room() {
            return Err(ReclaimError::CapacityExhausted);
        }
        // Commit.
        let (slot, _) = self.groups[arena as usize]
            .arena
            .processes
            .insert(Process::new(parent));
        let mut work = ReclaimWork {
            allocated: 1,
            ..ReclaimWork::default()
        };
        if parent != NONE {
            self.link_child_process(arena, parent, slot);
            work.linked += 1;
        }
        self.charge(arena, cost);
        self.counters.processes_created += 1;
        Ok((self.process_id(Link::new(arena, slot)), work))
    }

    /// A child of `parent` held by `holder`, stored in `parent`'s arena (its object's).
    fn add_capability(
        &mut self,
        parent: Link,
        holder: Link,
    ) -> Result<(CapabilityId, ReclaimWork), ReclaimError> {
        let storage = parent.arena;
        let reclaimer = reclaimer_for(self.capability(parent).reclaimer, storage, holder.arena)?;
        // The storage group records the link when anything outside it refers to the capability.
        let shared = storage != BASELINE && (holder.arena != storage || reclaimer != NONE);
        let entry_cost = self.costs.scrub_entry;
        let storage_cost = if shared {
            self.costs.capability.saturating_add(entry_cost)
        } else {
            self.costs.capability
        };
        self.can_charge(storage, storage_cost)?;
        if reclaimer != NONE {
            self.can_charge(reclaimer, entry_cost)?;
        }
        let group = &self.groups[storage as usize];
        if !group.arena.capabilities.has_room()
            || (shared && !group.scrub.has_room())
            || (reclaimer != NONE && !self.groups[reclaimer as usize].scrub.has_room())
        {
            return Err(ReclaimError::CapacityExhausted);
        }
        // Commit.
        let object = self.capability(parent).object;
        let (slot, _) = self.groups[storage as usize]
            .arena
            .capabilities
            .insert(Capability::new(object, parent.slot, reclaimer));
        let capability = Link::new(storage, slot);
        self.link_child_capability(storage, parent.slot, slot);
        self.push_held(holder, capability);
        let mut work = ReclaimWork {
            allocated: 1,
            linked: 2,
            ..ReclaimWork::default()
        };
        if shared {
            let entry = self.groups[storage as usize].scrub.push_shared(capability);
            self.capability_mut(capability).shared_entry = entry;
            work.allocated += 1;
            self.counters.scrub_entries_created += 1;
        }
        if reclaimer != NONE {
            let entry = self.groups[reclaimer as usize]
                .scrub
                .push_received(capability);
            self.capability_mut(capability).received_entry = entry;
            self.charge(reclaimer, entry_cost);
            work.allocated += 1;
            self.counters.scrub_entries_created += 1;
        }
        self.charge(storage, storage_cost);
        self.counters.capabilities_created += 1;
        Ok((self.capability_id(capability), work))
    }

    // ---- reclamation one by one (the baseline's way) ----

    /// Removes `top` and its derivation subtree, leaves first. Iterative: each step either
    /// descends or frees a leaf, so the work is linear in the subtree and the stack is flat.
    pub(crate) fn revoke_subtree(&mut self, top: Link, work: &mut ReclaimWork) {
        let arena = top.arena;
        let mut node = top.slot;
        loop {
            let record = *self.capability(Link::new(arena, node));
            if record.first_child != NONE {
                node = record.first_child;
                continue;
            }
            self.remove_capability(Link::new(arena, node), work);
            if node == top.slot {
                break;
            }
            node = record.parent;
        }
    }

    /// Frees a capability without children, unlinking it from its holder, its parent and the
    /// scrub lists; a root capability frees its object too.
    fn remove_capability(&mut self, capability: Link, work: &mut ReclaimWork) {
        let record = *self.capability(capability);
        if !record.holder.is_none() {
            self.unlink_held(capability);
            work.unlinked += 1;
        }
        if record.parent != NONE {
            self.unlink_child_capability(capability.arena, capability.slot);
            work.unlinked += 1;
        }
        if record.shared_entry != NONE {
            self.drop_entry(capability.arena, record.shared_entry, false, work);
        }
        if record.received_entry != NONE {
            self.drop_entry(record.reclaimer, record.received_entry, false, work);
        }
        let arena = capability.arena;
        if record.parent == NONE {
            let objects = &mut self.groups[arena as usize].arena.objects;
            let kind = objects.at(record.object).kind;
            objects.remove(record.object);
            self.refund(arena, self.costs.object(kind));
            self.counters.objects_freed += 1;
            work.freed += 1;
        }
        self.groups[arena as usize]
            .arena
            .capabilities
            .remove(capability.slot);
        self.refund(arena, self.costs.capability);
        self.counters.capabilities_freed += 1;
        work.freed += 1;
    }

    /// Cuts every link from outside the capability's arena to it (holder, scrub entries) and
    /// leaves it in the arena, which is about to be released.
    pub(crate) fn detach_capability(&mut self, capability: Link, work: &mut ReclaimWork) {
        let record = *self.capability(capability);
        if !record.holder.is_none() {
            self.unlink_held(capability);
            work.unlinked += 1;
        }
        if record.shared_entry != NONE {
            self.drop_entry(capability.arena, record.shared_entry, false, work);
        }
        if record.received_entry != NONE {
            self.drop_entry(record.reclaimer, record.received_entry, false, work);
        }
        let detached = self.capability_mut(capability);
        detached.shared_entry = NONE;
        detached.received_entry = NONE;
        detached.reclaimer = NONE;
    }

    /// Removes entry `index` from the scrub list of the group at `arena` and refunds it;
    /// `scrubbed` when the group's own termination did it.
    pub(crate) fn drop_entry(
        &mut self,
        arena: u32,
        index: u32,
        scrubbed: bool,
        work: &mut ReclaimWork,
    ) {
        self.groups[arena as usize].scrub.remove(index);
        self.refund(arena, self.costs.scrub_entry);
        if scrubbed {
            self.counters.scrub_entries_scrubbed += 1;
        } else {
            self.counters.scrub_entries_removed += 1;
        }
        work.freed += 1;
    }

    /// Frees a process without children and without capabilities.
    fn remove_process(&mut self, process: Link, work: &mut ReclaimWork) {
        if self.process(process).parent != NONE {
            self.unlink_child_process(process.arena, process.slot);
            work.unlinked += 1;
        }
        self.groups[process.arena as usize]
            .arena
            .processes
            .remove(process.slot);
        self.refund(process.arena, self.costs.process);
        self.counters.processes_freed += 1;
        work.freed += 1;
    }

    // ---- intrusive lists ----

    fn link_child_process(&mut self, arena: u32, parent: u32, child: u32) {
        let processes = &mut self.groups[arena as usize].arena.processes;
        let first = processes.at(parent).first_child;
        let record = processes.at_mut(child);
        record.parent = parent;
        record.next_sibling = first;
        record.previous_sibling = NONE;
        if first != NONE {
            processes.at_mut(first).previous_sibling = child;
        }
        processes.at_mut(parent).first_child = child;
    }

    fn unlink_child_process(&mut self, arena: u32, child: u32) {
        let processes = &mut self.groups[arena as usize].arena.processes;
        let record = *processes.at(child);
        if record.previous_sibling != NONE {
            processes.at_mut(record.previous_sibling).next_sibling = record.next_sibling;
        } else {
            processes.at_mut(record.parent).first_child = record.next_sibling;
        }
        if record.next_sibling != NONE {
            processes.at_mut(record.next_sibling).previous_sibling = record.previous_sibling;
        }
        let record = processes.at_mut(child);
        record.parent = NONE;
        record.next_sibling = NONE;
        record.previous_sibling = NONE;
    }

    fn link_child_capability(&mut self, arena: u32, parent: u32, child: u32) {
        let capabilities = &mut self.groups[arena as usize].arena.capabilities;
        let first = capabilities.at(parent).first_child;
        let record = capabilities.at_mut(child);
        record.parent = parent;
        record.next_sibling = first;
        record.previous_sibling = NONE;
        if first != NONE {
            capabilities.at_mut(first).previous_sibling = child;
        }
        capabilities.at_mut(parent).first_child = child;
    }

    fn unlink_child_capability(&mut self, arena: u32, child: u32) {
        let capabilities = &mut self.groups[arena as usize].arena.capabilities;
        let record = *capabilities.at(child);
        if record.previous_sibling != NONE {
            capabilities.at_mut(record.previous_sibling).next_sibling = record.next_sibling;
        } else {
            capabilities.at_mut(record.parent).first_child = record.next_sibling;
        }
        if record.next_sibling != NONE {
            capabilities.at_mut(record.next_sibling).previous_sibling = record.previous_sibling;
        }
        // The parent link stays: it marks the capability as not a root until it is freed.
        let record = capabilities.at_mut(child);
        record.next_sibling = NONE;
        record.previous_sibling = NONE;
    }

    fn push_held(&mut self, holder: Link, capability: Link) {
        let first = self.process(holder).first_capability;
        let record = self.capability_mut(capability);
        record.holder = holder;
        record.holder_next = first;
        record.holder_previous = Link::NONE;
        if !first.is_none() {
            self.capability_mut(first).holder_previous = capability;
        }
        self.process_mut(holder).first_capability = capability;
    }

    fn unlink_held(&mut self, capability: Link) {
        let record = *self.capability(capability);
        if record.holder_previous.is_none() {
            self.process_mut(record.holder).first_capability = record.holder_next;
        } else {
            self.capability_mut(record.holder_previous).holder_next = record.holder_next;
        }
        if !record.holder_next.is_none() {
            self.capability_mut(record.holder_next).holder_previous = record.holder_previous;
        }
        let record = self.capability_mut(capability);
        record.holder = Link::NONE;
        record.holder_next = Link::NONE;
        record.holder_previous = Link::NONE;
    }

    // ---- the debug checker ----

    /// Checks every invariant of this module and of [`group`](super::group); property tests
    /// call it after every operation. Linear in the model's size times the depth of its trees.
    pub fn check(&self) -> Result<(), &'static str> {
        match self.groups.first() {
            Some(baseline) if baseline.state == GroupState::Baseline => {}
            _ => return Err("group slot 0 is not the baseline"),
        }
        let mut live = Counters::default();
        let mut held_in_lists = 0u64;
        let mut holders = 0u64;
        let mut free_slots = 0usize;
        for (index, group) in self.groups.iter().enumerate() {
            let arena = index as u32;
            group.arena.check()?;
            match group.state {
                GroupState::Free => {
                    free_slots += 1;
                    if group.arena.live() != 0 || group.scrub.len() != 0 || group.charged != 0 {
                        return Err("a free group slot holds something");
                    }
                    continue;
                }
                GroupState::Baseline if index != 0 => return Err("a second baseline"),
                GroupState::Active | GroupState::Terminating if index == 0 => {
                    return Err("the baseline became a group")
                }
                _ => {}
            }
            self.check_scrub_list(arena)?;
            self.check_charges(arena)?;
            held_in_lists += self.check_processes(arena)?;
            holders += self.check_capabilities(arena)?;
            self.check_objects(arena)?;
            live.processes_created += group.arena.processes.live() as u64;
            live.objects_created += group.arena.objects.live() as u64;
            live.capabilities_created += group.arena.capabilities.live() as u64;
            live.scrub_entries_created += group.scrub.len() as u64;
        }
        if held_in_lists != holders {
            return Err("a held capability is missing from its holder's list");
        }
        self.check_free_groups(free_slots)?;
        let c = &self.counters;
        let balanced = c.processes_created.checked_sub(c.processes_freed)
            == Some(live.processes_created)
            && c.objects_created.checked_sub(c.objects_freed) == Some(live.objects_created)
            && c.capabilities_created.checked_sub(c.capabilities_freed)
                == Some(live.capabilities_created)
            && c.scrub_entries_created
                .checked_sub(c.scrub_entries_scrubbed + c.scrub_entries_removed)
                == Some(live.scrub_entries_created);
        if !balanced {
            return Err("counters disagree with what is live: something freed twice or leaked");
        }
        Ok(())
    }

    /// Process tree and holder lists of one arena; returns how many capabilities the lists hold.
    fn check_processes(&self, arena: u32) -> Result<u64, &'static str> {
        let processes = &self.groups[arena as usize].arena.processes;
        let limit = processes.live() as usize;
        let mut parented = 0usize;
        let mut listed_children = 0usize;
        let mut held = 0u64;
        let capability_limit: u64 = self
            .groups
            .iter()
            .map(|g| g.arena.capabilities.live() as u64)
            .sum();
        for (slot, process) in processes.iter() {
            if process.parent != NONE {
                if !processes.is_occupied(process.parent) {
                    return Err("a process's parent is not live");
                }
                parented += 1;
            }
            let mut previous = NONE;
            let mut child = process.first_child;
            while child != NONE {
                if !processes.is_occupied(child) {
                    return Err("a child process is not live");
                }
                let record = processes.at(child);
                if record.parent != slot || record.previous_sibling != previous {
                    return Err("process tree links disagree");
                }
                listed_children += 1;
                if listed_children > limit {
                    return Err("process child lists loop");
                }
                previous = child;
                child = record.next_sibling;
            }
            let mut ancestor = process.parent;
            let mut steps = 0usize;
            while ancestor != NONE {
                steps += 1;
                if steps > limit || !processes.is_occupied(ancestor) {
                    return Err("the process tree has a cycle or a dead ancestor");
                }
                ancestor = processes.at(ancestor).parent;
            }
            let me = Link::new(arena, slot);
            let mut previous = Link::NONE;
            let mut capability = process.first_capability;
            while !capability.is_none() {
                if !self.capability_is_live(capability) {
                    return Err("a process holds a capability that is not live");
                }
                let record = self.capability(capability);
                if record.holder != me || record.holder_previous != previous {
                    return Err("holder list links disagree");
                }
                held += 1;
                if held > capability_limit {
                    return Err("holder lists loop");
                }
                previous = capability;
                capability = record.holder_next;
            }
        }
        if parented != listed_children {
            return Err("a process is missing from its parent's child list");
        }
        Ok(held)
    }

    /// Derivation trees, holders, reclaimers and scrub back-indices of one arena's
    /// capabilities; returns how many have a holder.
    fn check_capabilities(&self, arena: u32) -> Result<u64, &'static str> {
        let group = &self.groups[arena as usize];
        let capabilities = &group.arena.capabilities;
        let objects = &group.arena.objects;
        let terminating = group.state == GroupState::Terminating;
        let limit = capabilities.live() as usize;
        let mut parented = 0usize;
        let mut listed_children = 0usize;
        let mut holders = 0u64;
        for (slot, capability) in capabilities.iter() {
            let me = Link::new(arena, slot);
            if !objects.is_occupied(capability.object) {
                return Err("a capability's object is not live");
            }
            let root = objects.at(capability.object).root;
            if capability.parent == NONE {
                if root != slot {
                    return Err("a capability without parent is not its object's root");
                }
            } else {
                if !capabilities.is_occupied(capability.parent) {
                    return Err("a capability's parent is not live");
                }
                if capabilities.at(capability.parent).object != capability.object || root == slot {
                    return Err("a derived capability names another object, or is a root");
                }
                parented += 1;
            }
            let mut previous = NONE;
            let mut child = capability.first_child;
            while child != NONE {
                if !capabilities.is_occupied(child) {
                    return Err("a derived capability is not live");
                }
                let record = capabilities.at(child);
                if record.parent != slot || record.previous_sibling != previous {
                    return Err("derivation tree links disagree");
                }
                listed_children += 1;
                if listed_children > limit {
                    return Err("derivation child lists loop");
                }
                previous = child;
                child = record.next_sibling;
            }
            let mut ancestor = capability.parent;
            let mut steps = 0usize;
            while ancestor != NONE {
                steps += 1;
                if steps > limit || !capabilities.is_occupied(ancestor) {
                    return Err("a derivation tree has a cycle or a dead ancestor");
                }
                ancestor = capabilities.at(ancestor).parent;
            }
            if capability.holder.is_none() {
                if !terminating {
                    return Err("a capability outside a terminating group has no holder");
                }
            } else {
                if !self.process_is_live(capability.holder) {
                    return Err("a capability's holder is not live");
                }
                holders += 1;
            }
            if capability.reclaimer == NONE {
                if capability.received_entry != NONE {
                    return Err("a capability without reclaimer has a received entry");
                }
            } else {
                let reclaimer = self.groups.get(capability.reclaimer as usize);
                let live_group = reclaimer.is_some_and(|g| {
                    matches!(g.state, GroupState::Active | GroupState::Terminating)
                });
                if capability.reclaimer == arena || !live_group {
                    return Err("a capability's reclaimer is its own group or not a live group");
                }
                let entry = reclaimer.and_then(|g| g.scrub.entry(capability.received_entry));
                if !entry.is_some_and(|e| e.is_received() && e.capability == me) {
                    return Err(
                        "a reclaimed capability is missing from its reclaimer's scrub list",
                    );
                }
            }
            if capability.shared_entry != NONE {
                let entry = group.scrub.entry(capability.shared_entry);
                if arena == BASELINE
                    || !entry.is_some_and(|e| !e.is_received() && e.capability == me)
                {
                    return Err("a shared capability's scrub entry does not name it");
                }
            }
            if !terminating {
                // Group membership: who reclaims it follows from holder and parent.
                let inherited = if capability.parent == NONE {
                    NONE
                } else {
                    capabilities.at(capability.parent).reclaimer
                };
                let expected = reclaimer_for(inherited, arena, capability.holder.arena)
                    .map_err(|_| "a capability is reclaimed by two outside groups")?;
                if capability.reclaimer != expected {
                    return Err("a capability's reclaimer does not follow its holder and parent");
                }
                let must_share = arena != BASELINE
                    && (capability.holder.arena != arena || capability.reclaimer != NONE);
                if must_share != (capability.shared_entry != NONE) {
                    return Err("a link leaving a group has no scrub entry, or one is extra");
                }
            }
        }
        if parented != listed_children {
            return Err("a capability is missing from its parent's child list");
        }
        Ok(holders)
    }

    fn check_objects(&self, arena: u32) -> Result<(), &'static str> {
        let group = &self.groups[arena as usize];
        for (slot, object) in group.arena.objects.iter() {
            let capabilities = &group.arena.capabilities;
            if !capabilities.is_occupied(object.root) {
                return Err("an object's root capability is not live");
            }
            let root = capabilities.at(object.root);
            if root.object != slot || root.parent != NONE {
                return Err("an object's root capability does not name it");
            }
        }
        Ok(())
    }
}

/// Which outside group reclaims a capability stored in `storage`, held in `holder_arena`,
/// whose parent's reclaimer is `inherited`: the holder's group unless it is the storage's or
/// the baseline, else the inherited one; two different ones are refused.
pub(crate) fn reclaimer_for(
    inherited: u32,
    storage: u32,
    holder_arena: u32,
) -> Result<u32, ReclaimError> {
    let own = if holder_arena != BASELINE && holder_arena != storage {
        holder_arena
    } else {
        NONE
    };
    if inherited == NONE || inherited == own {
        Ok(own)
    } else if own == NONE {
        Ok(inherited)
    } else {
        Err(ReclaimError::CrossesTwoGroups)
    }
}

impl Process {
    fn new(parent: u32) -> Process {
        Process {
            parent,
            first_child: NONE,
            next_sibling: NONE,
            previous_sibling: NONE,
            first_capability: Link::NONE,
        }
    }
}

impl Capability {
    fn new(object: u32, parent: u32, reclaimer: u32) -> Capability {
        Capability {
            object,
            holder: Link::NONE,
            holder_next: Link::NONE,
            holder_previous: Link::NONE,
            parent,
            first_child: NONE,
            next_sibling: NONE,
            previous_sibling: NONE,
            reclaimer,
            shared_entry: NONE,
            received_entry: NONE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> CapabilityTree {
        CapabilityTree::default()
    }

    fn checked(tree: &CapabilityTree) {
        assert_eq!(tree.check(), Ok(()));
    }

    #[test]
    fn derive_delegate_and_revoke_walk_the_derivation_tree() {
        let mut tree = tree();
        let (owner, _) = tree.create_process().unwrap();
        let (service, _) = tree.create_process().unwrap();
        // Root capability: object and capability slots (2) + holder link (1).
        let (root, work) = tree.create_object(owner, ObjectKind::Semaphore).unwrap();
        assert_eq!(work.units(), 3);
        // A child: one slot, parent link and holder link.
        let (derived, work) = tree.derive(root).unwrap();
        assert_eq!(work.units(), 3);
        let (shared, _) = tree.delegate(derived, service).unwrap();
        let (further, _) = tree.derive(shared).unwrap();
        assert_eq!(tree.holder(further), Ok(service));
        assert_eq!(tree.holder(derived), Ok(owner));
        assert_eq!(tree.capabilities_held(owner), Ok(2));
        assert_eq!(tree.capabilities_held(service), Ok(2));
        assert_eq!(tree.object(further), tree.object(root));
        checked(&tree);

        // Revoking `derived` takes `shared` and `further` too: 3 leaves x (holder, parent, slot).
        let work = tree.revoke(derived).unwrap();
        assert_eq!(work.units(), 9);
        for gone in [derived, shared, further] {
            assert_eq!(tree.holder(gone), Err(ReclaimError::StaleId));
        }
        assert_eq!(tree.capabilities_held(service), Ok(0));
        checked(&tree);

        // Revoking the root frees the object: holder link, object slot, capability slot.
        let object = tree.object(root).unwrap();
        assert_eq!(tree.revoke(root).unwrap().units(), 3);
        assert_eq!(tree.object_kind(object), Err(ReclaimError::StaleId));
        let counters = tree.counters();
        assert_eq!(counters.objects_freed, 1);
        assert_eq!(counters.capabilities_created, 4);
        assert_eq!(counters.capabilities_freed, 4);
        checked(&tree);
    }

    #[test]
    fn terminate_process_recurses_through_children_and_derived_capabilities() {
        let mut tree = tree();
        let (a, _) = tree.create_process().unwrap();
        let (b, _) = tree.fork(a).unwrap();
        let (c, _) = tree.fork(b).unwrap();
        let (service, _) = tree.create_process().unwrap();
        let (semaphore, _) = tree.create_object(c, ObjectKind::Semaphore).unwrap();
        let (lent, _) = tree.delegate(semaphore, service).unwrap();
        let (lent_further, _) = tree.derive(lent).unwrap();
        let (endpoint, _) = tree.create_object(a, ObjectKind::Endpoint).unwrap();
        let (kept, _) = tree
            .create_object(service, ObjectKind::MemoryMapping)
            .unwrap();
        checked(&tree);

        // By hand: c's semaphore tree has 2 derived capabilities (3 units each: holder,
        // parent, slot) and the root (holder, object, slot: 3) = 9; c itself (parent link,
        // slot) = 2; b = 2; a's endpoint = 3; a, a root = 1. Total 17.
        let work = tree.terminate_process(a).unwrap();
        assert_eq!(work.units(), 17);
        assert_eq!(work.arenas_released, 0);
        for gone in [semaphore, lent, lent_further, endpoint] {
            assert_eq!(tree.holder(gone), Err(ReclaimError::StaleId));
        }
        for gone in [a, b, c] {
            assert_eq!(tree.fork(gone).unwrap_err(), ReclaimError::StaleId);
        }
        assert_eq!(tree.holder(kept), Ok(service));
        assert_eq!(tree.capabilities_held(service), Ok(1));
        let counters = tree.counters();
        assert_eq!(counters.processes_freed, 3);
        assert_eq!(counters.objects_freed, 2);
        assert_eq!(counters.capabilities_freed, 4);
        checked(&tree);
    }

    #[test]
    fn baseline_termination_work_grows_linearly_with_objects() {
        for objects in [1u64, 10, 100, 1000] {
            let mut tree = tree();
            let (process, _) = tree.create_process().unwrap();
            for i in 0..objects {
                let kind = ObjectKind::ALL[(i % 3) as usize];
                tree.create_object(process, kind).unwrap();
            }
            // Each object: holder link, object slot, capability slot; then the process slot.
            let work = tree.terminate_process(process).unwrap();
            assert_eq!(work.units(), 3 * objects + 1);
            assert_eq!(
                work.units(),
                crate::reclaim::BASELINE_OBJECT_UNITS * objects
                    + crate::reclaim::BASELINE_ROOT_PROCESS_UNITS
            );
            assert_eq!(tree.counters().objects_freed, objects);
            checked(&tree);
        }
    }

    #[test]
    fn stale_ids_are_refused_even_when_slots_are_reused() {
        let mut tree = tree();
        let (old, _) = tree.create_process().unwrap();
        let (capability, _) = tree.create_object(old, ObjectKind::Endpoint).unwrap();
        let object = tree.object(capability).unwrap();
        tree.terminate_process(old).unwrap();
        // The same slots come back with new generations.
        let (new, _) = tree.create_process().unwrap();
        let (fresh, _) = tree.create_object(new, ObjectKind::Endpoint).unwrap();
        assert_ne!(new, old);
        assert_ne!(fresh, capability);
        let before = tree.clone();
        assert_eq!(tree.fork(old).unwrap_err(), ReclaimError::StaleId);
        assert_eq!(
            tree.create_object(old, ObjectKind::Semaphore).unwrap_err(),
            ReclaimError::StaleId
        );
        assert_eq!(tree.derive(capability).unwrap_err(), ReclaimError::StaleId);
        assert_eq!(
            tree.delegate(fresh, old).unwrap_err(),
            ReclaimError::StaleId
        );
        assert_eq!(tree.revoke(capability).unwrap_err(), ReclaimError::StaleId);
        assert_eq!(
            tree.terminate_process(old).unwrap_err(),
            ReclaimError::StaleId
        );
        assert_eq!(tree.object_kind(object).unwrap_err(), ReclaimError::StaleId);
        assert!(tree == before, "refused calls changed the model");
        checked(&tree);
    }

    #[test]
    fn deep_trees_are_reclaimed_without_recursion() {
        let mut tree = tree();
        let (first, _) = tree.create_process().unwrap();
        let depth = 100_000u64;
        let mut process = first;
        for _ in 0..depth {
            process = tree.fork(process).unwrap().0;
        }
        let (mut capability, _) = tree.create_object(process, ObjectKind::Semaphore).unwrap();
        for _ in 0..depth {
            capability = tree.derive(capability).unwrap().0;
        }
        // Derived chain: depth x 3, root 3; forked chain: depth x 2, first process 1.
        let work = tree.terminate_process(first).unwrap();
        assert_eq!(work.units(), 3 * depth + 3 + 2 * depth + 1);
        let counters = tree.counters();
        assert_eq!(counters.processes_freed, depth + 1);
        assert_eq!(counters.capabilities_freed, depth + 1);
    }

    #[test]
    fn check_catches_a_dangling_holder_link() {
        let mut tree = tree();
        let (process, _) = tree.create_process().unwrap();
        tree.create_object(process, ObjectKind::Semaphore).unwrap();
        checked(&tree);
        // Corrupt: the process forgets the capability it holds.
        tree.groups[0].arena.processes.at_mut(0).first_capability = Link::NONE;
        assert!(tree.check().is_err());
    }
}
