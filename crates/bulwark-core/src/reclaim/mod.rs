//! Bounded resource reclamation (Reusch): reclamation groups with quotas of reclamation time,
//! arenas released in one step, and scrub lists for the links that leave a group.
//!
//! The paper's study (section II, Fig. 2) shows that terminating a process can take seconds,
//! because the kernel frees the process's *reclamation tree* (its child processes, the
//! capabilities they hold and derived, the objects behind them; Fig. 4) one object at a time.
//! Its design (section III) makes reclamation time a resource: a controller gives each
//! *reclamation group* a quota, every allocation charges its anticipated reclamation cost, and
//! the group's objects live in an arena freed at once, so only the links leaving the group (its
//! *scrub list*) are unlinked one by one (Fig. 5, evaluated in Fig. 8).
//!
//! Both ways of reclaiming run on one object model, [`CapabilityTree`]:
//! - the baseline ([`CapabilityTree::terminate_process`], [`CapabilityTree::revoke`]) frees
//!   and unlinks object after object, as M3 and Linux do: its work grows with the tree;
//! - grouped termination ([`CapabilityTree::terminate_group`], or step by step with
//!   [`CapabilityTree::terminate_step`]) unlinks the scrub list and releases the arena: its
//!   work is at most the group's quota, whatever the group's processes did.
//!
//! Work is counted in units ([`ReclaimWork::units`]): one per slot taken or given back, per
//! link set or cut, per arena released. The quota and the [`CostTable`] use one currency, chosen
//! by the caller: work units by default (the defaults are the units this code spends), or
//! nanoseconds once calibrated. Either way [`CostTable::validate`] insists that a scrub entry
//! and an arena are charged at least the units their reclamation takes, which is what makes
//! "termination work <= charged <= quota" hold.
//!
//! Modules: [`captree`] (the kernel-object model and the baseline), [`arena`] (slab storage
//! released in one step), [`group`] (groups, quota, scrub list, the controller's API).

pub mod arena;
pub mod captree;
pub mod group;

pub use captree::CapabilityTree;
pub use group::Progress;

use core::fmt;

/// The most units one scrub-list entry takes at termination. Derived from the code: a received
/// capability costs its own entry (1), its holder link (1), its derivation link (1), the entry
/// its arena keeps for it (1) and its slot (1); a shared one at most 3 (see [`group`]).
pub const SCRUB_ENTRY_UNITS: u64 = 5;

/// Units to release an arena, however much it holds: its slabs are truncated, not walked.
pub const ARENA_RELEASE_UNITS: u64 = 1;

/// Units the baseline ([`CapabilityTree::terminate_process`]) spends on an object its process
/// created and holds alone: the holder link, the object's slot and its capability's slot.
pub const BASELINE_OBJECT_UNITS: u64 = 3;

/// Units the baseline spends on a root process itself, once what it holds is gone: its slot
/// (a root has no parent link to cut).
pub const BASELINE_ROOT_PROCESS_UNITS: u64 = 1;

/// How far one [`CapabilityTree::terminate_step`] may run past its budget: a step starts a
/// scrub entry while budget remains, so it ends at most one entry (less one unit) beyond it.
pub const STEP_OVERSHOOT_UNITS: u64 = SCRUB_ENTRY_UNITS - 1;

/// The kinds of kernel object a process can create (the paper's study and prototype use
/// semaphores and memory mappings; IPC endpoints are the usual link to a system service).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum ObjectKind {
    /// A counting semaphore, possibly shared with a service outside the group.
    Semaphore = 0,
    /// A mapping of a page into an address space (the paper's Fig. 2 maps one page many times).
    MemoryMapping = 1,
    /// An IPC endpoint: a channel to or from another process.
    Endpoint = 2,
}

impl ObjectKind {
    /// Every kind, for iteration in tests and tables.
    pub const ALL: [ObjectKind; 3] = [
        ObjectKind::Semaphore,
        ObjectKind::MemoryMapping,
        ObjectKind::Endpoint,
    ];
}

/// Why a call was refused. A refused call has changed nothing. Small and `repr(u8)` so a
/// kernel can return it in a register.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum ReclaimError {
    /// The id names something already freed, or an arena since released.
    StaleId = 1,
    /// The allocation's anticipated reclamation cost does not fit in the group's quota.
    QuotaExceeded = 2,
    /// The group is being terminated and takes no new work.
    GroupTerminating = 3,
    /// The new capability would be reclaimed one by one by two groups besides its own arena's
    /// (a chain of delegations leaving its object's group into a second group).
    CrossesTwoGroups = 4,
    /// A cost below what the reclamation it stands for takes (see [`CostTable::validate`]).
    InvalidParameter = 5,
    /// An arena, a scrub list or the group table has no slot left (2^32 - 1 of each).
    CapacityExhausted = 6,
}

impl fmt::Display for ReclaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReclaimError::StaleId => "stale id",
            ReclaimError::QuotaExceeded => "reclamation quota exceeded",
            ReclaimError::GroupTerminating => "reclamation group is terminating",
            ReclaimError::CrossesTwoGroups => "capability would be reclaimed by two outside groups",
            ReclaimError::InvalidParameter => "parameter out of range",
            ReclaimError::CapacityExhausted => "no slot left",
        })
    }
}

/// The anticipated reclamation cost of each kind of allocation, charged to a group's quota
/// when the allocation is made (section III, Fig. 3). Plain integers in the quota's currency.
///
/// The defaults are the work units this code spends reclaiming each thing one by one (so a
/// group's charge is what the baseline would spend on it), and the scrub-entry and arena
/// costs are what grouped termination spends; calibration will replace them with measured
/// nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CostTable {
    /// A process: unlink it from its parent, free its slot (default 2).
    pub process: u64,
    /// A semaphore object: free its slot (default 1).
    pub semaphore: u64,
    /// A memory-mapping object: free its slot (default 1).
    pub memory_mapping: u64,
    /// An endpoint object: free its slot (default 1).
    pub endpoint: u64,
    /// A capability: unlink it from its holder and its parent, free its slot (default 3).
    pub capability: u64,
    /// A scrub-list entry, at least [`SCRUB_ENTRY_UNITS`] (default 5).
    pub scrub_entry: u64,
    /// The group's arena, charged when the group is created, at least
    /// [`ARENA_RELEASE_UNITS`] (default 1).
    pub arena: u64,
}

impl CostTable {
    /// The defaults documented on each field.
    pub const DEFAULT: CostTable = CostTable {
        process: 2,
        semaphore: 1,
        memory_mapping: 1,
        endpoint: 1,
        capability: 3,
        scrub_entry: SCRUB_ENTRY_UNITS,
        arena: ARENA_RELEASE_UNITS,
    };

    /// The cost of an object of `kind` (its root capability is charged apart).
    pub const fn object(&self, kind: ObjectKind) -> u64 {
        match kind {
            ObjectKind::Semaphore => self.semaphore,
            ObjectKind::MemoryMapping => self.memory_mapping,
            ObjectKind::Endpoint => self.endpoint,
        }
    }

    /// Checks that a scrub entry and an arena cost at least the units their reclamation
    /// takes: grouped termination spends nothing else, so its work stays within what was
    /// charged. Other costs are free to choose (they bound how much a group may allocate).
    pub fn validate(&self) -> Result<(), ReclaimError> {
        if self.scrub_entry < SCRUB_ENTRY_UNITS || self.arena < ARENA_RELEASE_UNITS {
            return Err(ReclaimError::InvalidParameter);
        }
        Ok(())
    }
}

impl Default for CostTable {
    fn default() -> Self {
        CostTable::DEFAULT
    }
}

/// The work one call did, step by step; the simulator's cost model turns it into time.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ReclaimWork {
    /// Slots taken: a process, object, capability or scrub entry.
    pub allocated: u64,
    /// Links set between neighbours: process tree, derivation tree, holder list.
    pub linked: u64,
    /// Slots given back one at a time (including scrub entries).
    pub freed: u64,
    /// Links cut between neighbours.
    pub unlinked: u64,
    /// Arenas released wholesale, one unit each however much they held.
    pub arenas_released: u64,
}

impl ReclaimWork {
    /// What creating one object does: its slot and its capability's, and the capability
    /// linked into its holder's list. An analysis bounds an allocation's time by it.
    pub const OBJECT_CREATED: ReclaimWork = ReclaimWork {
        allocated: 2,
        linked: 1,
        freed: 0,
        unlinked: 0,
        arenas_released: 0,
    };

    /// Total units of work, each of which the cost model charges the same.
    pub const fn units(&self) -> u64 {
        self.allocated + self.linked + self.freed + self.unlinked + self.arenas_released
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: ReclaimWork) {
        self.allocated += other.allocated;
        self.linked += other.linked;
        self.freed += other.freed;
        self.unlinked += other.unlinked;
        self.arenas_released += other.arenas_released;
    }
}

/// Running totals since the model was made, so tests can assert that everything created was
/// freed exactly once and every link leaving a group was unlinked.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Counters {
    /// Processes created (roots, forks and spawns).
    pub processes_created: u64,
    /// Processes freed, one by one or in an arena.
    pub processes_freed: u64,
    /// Kernel objects created.
    pub objects_created: u64,
    /// Kernel objects freed, one by one or in an arena.
    pub objects_freed: u64,
    /// Capabilities created (roots, derived and delegated).
    pub capabilities_created: u64,
    /// Capabilities freed, one by one or in an arena.
    pub capabilities_freed: u64,
    /// Scrub-list entries recorded.
    pub scrub_entries_created: u64,
    /// Scrub-list entries unlinked by their own group's termination.
    pub scrub_entries_scrubbed: u64,
    /// Scrub-list entries dropped because their capability went first (revoked, or detached
    /// by the other group's termination).
    pub scrub_entries_removed: u64,
    /// Arenas released wholesale.
    pub arenas_released: u64,
    /// Processes, objects and capabilities freed by arena releases (included above).
    pub freed_in_bulk: u64,
}

/// Which arena, which incarnation of it, which slot, which incarnation of the slot: enough to
/// tell a live entity from a freed one without ever reading freed memory.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Handle {
    /// 0 for the baseline, otherwise the group's slot in the group table.
    pub(crate) arena: u32,
    /// The group's generation: bumped when its arena is released.
    pub(crate) arena_generation: u32,
    pub(crate) slot: u32,
    /// The slot's generation: bumped when the slot is freed.
    pub(crate) generation: u32,
}

/// A process. Stale once the process is terminated or its group's arena released.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ProcessId(pub(crate) Handle);

/// A kernel object (semaphore, memory mapping, endpoint). Stale once it is freed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ObjectId(pub(crate) Handle);

/// A capability: one process's access to one kernel object, a node of the derivation tree.
/// Stale once revoked.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CapabilityId(pub(crate) Handle);

/// A reclamation group. Stale once its termination is done.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct GroupId {
    pub(crate) arena: u32,
    pub(crate) generation: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn default_costs_cover_the_work_grouped_termination_does() {
        assert_eq!(CostTable::default().validate(), Ok(()));
        let cheap_entry = CostTable {
            scrub_entry: SCRUB_ENTRY_UNITS - 1,
            ..CostTable::DEFAULT
        };
        assert_eq!(cheap_entry.validate(), Err(ReclaimError::InvalidParameter));
        let free_arena = CostTable {
            arena: 0,
            ..CostTable::DEFAULT
        };
        assert_eq!(free_arena.validate(), Err(ReclaimError::InvalidParameter));
        // Calibrated nanoseconds are larger than units: still valid.
        let nanoseconds = CostTable {
            semaphore: 310,
            scrub_entry: 900,
            arena: 400,
            ..CostTable::DEFAULT
        };
        assert_eq!(nanoseconds.validate(), Ok(()));
        assert_eq!(nanoseconds.object(ObjectKind::Semaphore), 310);
    }

    #[test]
    fn errors_display_and_fit_a_register() {
        assert_eq!(ReclaimError::QuotaExceeded as u8, 2);
        assert_eq!(
            ReclaimError::QuotaExceeded.to_string(),
            "reclamation quota exceeded"
        );
        assert_eq!(core::mem::size_of::<ReclaimError>(), 1);
    }

    #[test]
    fn work_units_sum_every_step() {
        let mut work = ReclaimWork {
            allocated: 1,
            linked: 2,
            freed: 3,
            unlinked: 4,
            arenas_released: 5,
        };
        assert_eq!(work.units(), 15);
        work.add(work);
        assert_eq!(work.units(), 30);
    }
}
