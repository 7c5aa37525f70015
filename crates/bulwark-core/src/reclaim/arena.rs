//! The group arena: slab storage for a group's processes, objects and capabilities, released in
//! one step.
//!
//! Section III of the paper proposes "some form of arena allocator for all objects inside the
//! reclamation tree": the group gets its memory, every object of its tree is allocated there,
//! and reclaiming the group releases that memory at once instead of freeing each object (Fig. 5;
//! Fig. 8 measures the effect). Here an `Arena` is three `Slab`s of plain-data records.
//! Releasing it truncates the three vectors: records have no destructors, so no slot is
//! visited, and the capacity stays for the next group that takes the same slot of the group
//! table. Ids stay safe across a release because each id also names the arena's generation,
//! which the release bumps.
//!
//! The baseline's entities live in an arena too; it is never released.
//!
//! Invariants (checked by `Slab::check`, which [`CapabilityTree::check`] calls):
//! - every slot is occupied or vacant; the vacant ones form the free list, each exactly once;
//! - `live` is the number of occupied slots;
//! - a slot's generation changes each time it is vacated, so an id taken before names nothing
//!   after (generations wrap after 2^32 reuses of one slot, which we accept);
//! - records are `Copy`, hence without destructors: `Slab::clear` is one store, not a walk.
//!
//! [`CapabilityTree::check`]: super::CapabilityTree::check

use alloc::vec;
use alloc::vec::Vec;

use super::captree::{Capability, Object, Process};

/// "No slot": the end of a list, a missing parent, an unused back-index.
pub(crate) const NONE: u32 = u32::MAX;

/// A place in some arena: which arena (0 for the baseline, else the group's slot) and which
/// slot of the relevant slab. Used for the links that may cross arenas (holder lists, scrub
/// entries); links inside one arena are bare slot numbers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Link {
    pub(crate) arena: u32,
    pub(crate) slot: u32,
}

impl Link {
    /// No place at all.
    pub(crate) const NONE: Link = Link {
        arena: NONE,
        slot: NONE,
    };

    pub(crate) const fn new(arena: u32, slot: u32) -> Link {
        Link { arena, slot }
    }

    pub(crate) const fn is_none(self) -> bool {
        self.slot == NONE
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Slot<T> {
    value: T,
    generation: u32,
    /// Next vacant slot while this one is vacant.
    next_free: u32,
    occupied: bool,
}

/// Vec-backed storage with a free list and a generation per slot.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Slab<T: Copy> {
    slots: Vec<Slot<T>>,
    free_head: u32,
    live: u32,
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Slab::new()
    }
}

impl<T: Copy> Slab<T> {
    pub(crate) const fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free_head: NONE,
            live: 0,
        }
    }

    /// Whether [`Slab::insert`] has a slot to give (slot numbers stop short of [`NONE`]).
    pub(crate) fn has_room(&self) -> bool {
        self.free_head != NONE || self.slots.len() < NONE as usize
    }

    /// Stores `value` in a vacant slot (the most recently freed first) and returns the slot
    /// and its generation. The caller has checked [`Slab::has_room`].
    pub(crate) fn insert(&mut self, value: T) -> (u32, u32) {
        self.live += 1;
        if self.free_head != NONE {
            let slot = self.free_head;
            let entry = &mut self.slots[slot as usize];
            self.free_head = entry.next_free;
            entry.value = value;
            entry.next_free = NONE;
            entry.occupied = true;
            return (slot, entry.generation);
        }
        let slot = self.slots.len() as u32;
        self.slots.push(Slot {
            value,
            generation: 0,
            next_free: NONE,
            occupied: true,
        });
        (slot, 0)
    }

    /// Vacates `slot` and bumps its generation; false if it was not occupied.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        let Some(entry) = self.slots.get_mut(slot as usize) else {
            return false;
        };
        if !entry.occupied {
            return false;
        }
        entry.occupied = false;
        entry.generation = entry.generation.wrapping_add(1);
        entry.next_free = self.free_head;
        self.free_head = slot;
        self.live -= 1;
        true
    }

    pub(crate) fn is_occupied(&self, slot: u32) -> bool {
        self.slots.get(slot as usize).is_some_and(|s| s.occupied)
    }

    /// Whether `slot` is occupied by the incarnation `generation`.
    pub(crate) fn contains(&self, slot: u32, generation: u32) -> bool {
        self.slots
            .get(slot as usize)
            .is_some_and(|s| s.occupied && s.generation == generation)
    }

    pub(crate) fn generation(&self, slot: u32) -> u32 {
        self.slots.get(slot as usize).map_or(0, |s| s.generation)
    }

    /// The record in `slot`, which the caller knows to be occupied.
    pub(crate) fn at(&self, slot: u32) -> &T {
        &self.slots[slot as usize].value
    }

    pub(crate) fn at_mut(&mut self, slot: u32) -> &mut T {
        &mut self.slots[slot as usize].value
    }

    pub(crate) fn live(&self) -> u32 {
        self.live
    }

    /// Vacates every slot at once. `T: Copy` has no destructor, so truncating the vector
    /// visits no slot: this is the "free in one step" of the arena.
    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.free_head = NONE;
        self.live = 0;
    }

    /// The occupied slots and their records, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.occupied)
            .map(|(i, s)| (i as u32, &s.value))
    }

    /// Checks the free list and the live count.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let occupied = self.slots.iter().filter(|s| s.occupied).count();
        if occupied != self.live as usize {
            return Err("slab live count disagrees with its slots");
        }
        let mut seen = vec![false; self.slots.len()];
        let mut free = self.free_head;
        let mut vacant = 0usize;
        while free != NONE {
            let Some(entry) = self.slots.get(free as usize) else {
                return Err("slab free list leaves the slab");
            };
            if entry.occupied || seen[free as usize] {
                return Err("slab free list holds an occupied or repeated slot");
            }
            seen[free as usize] = true;
            vacant += 1;
            free = entry.next_free;
        }
        if vacant + occupied != self.slots.len() {
            return Err("a vacant slab slot is missing from the free list");
        }
        Ok(())
    }
}

/// One group's storage (or the baseline's): its processes, kernel objects and capabilities.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub(crate) struct Arena {
    pub(crate) processes: Slab<Process>,
    pub(crate) objects: Slab<Object>,
    pub(crate) capabilities: Slab<Capability>,
}

impl Arena {
    pub(crate) const fn new() -> Self {
        Arena {
            processes: Slab::new(),
            objects: Slab::new(),
            capabilities: Slab::new(),
        }
    }

    /// Live entities of every kind.
    pub(crate) fn live(&self) -> u64 {
        self.processes.live() as u64 + self.objects.live() as u64 + self.capabilities.live() as u64
    }

    /// Frees everything in one step (section III): three truncations, whatever the arena
    /// holds. The caller has first cut every link from outside into it (the scrub list).
    pub(crate) fn release(&mut self) {
        self.processes.clear();
        self.objects.clear();
        self.capabilities.clear();
    }

    pub(crate) fn check(&self) -> Result<(), &'static str> {
        self.processes.check()?;
        self.objects.check()?;
        self.capabilities.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_are_reused_with_a_new_generation() {
        let mut slab = Slab::new();
        let (a, generation_a) = slab.insert(10u32);
        let (b, _) = slab.insert(20u32);
        assert_eq!((a, b, generation_a), (0, 1, 0));
        assert!(slab.remove(a));
        assert!(!slab.remove(a), "a vacant slot cannot be freed twice");
        assert!(!slab.contains(a, generation_a));
        let (c, generation_c) = slab.insert(30u32);
        // The freed slot comes back, one generation later: the old id stays stale.
        assert_eq!((c, generation_c), (a, 1));
        assert!(!slab.contains(a, generation_a));
        assert!(slab.contains(c, generation_c));
        assert_eq!(*slab.at(c), 30);
        assert_eq!(slab.live(), 2);
        assert_eq!(slab.check(), Ok(()));
        assert!(!slab.remove(99));
    }

    #[test]
    fn release_forgets_everything_and_keeps_the_capacity() {
        let mut slab = Slab::new();
        for i in 0..1000u32 {
            slab.insert(i);
        }
        slab.remove(7);
        let capacity = slab.slots.capacity();
        slab.clear();
        assert_eq!(slab.live(), 0);
        assert_eq!(slab.iter().count(), 0);
        assert_eq!(slab.slots.capacity(), capacity);
        assert_eq!(slab.check(), Ok(()));
        assert_eq!(slab.insert(5), (0, 0));
    }

    #[test]
    fn check_finds_a_broken_free_list() {
        let mut slab = Slab::new();
        slab.insert(1u8);
        slab.insert(2u8);
        slab.remove(0);
        slab.free_head = NONE;
        assert!(slab.check().is_err());
    }
}
