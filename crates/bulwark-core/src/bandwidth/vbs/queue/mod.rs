//! The VBS queue plugins: one interface to the Blocked and Ready sets, four ways to keep time.
//!
//! The VBS scheduler (section IV) keeps two ordered sets of processes: **Blocked**, ordered by
//! release time, and **Ready**, ordered by deadline. Section V hides them behind one interface
//! with four implementations, which trade time for space (Table I; `n` processes, `t` time
//! instants the queues can tell apart, the *horizon*):
//!
//! | plugin | time per invocation | space |
//! | --- | --- | --- |
//! | [`ListQueue`]: doubly-linked lists | `O(n^2)` | `Θ(n)` |
//! | [`ArrayQueue`]: time-slot arrays of FIFO queues | `O(log(t) + n log(t))` | `Θ(t + n)` |
//! | [`MatrixQueue`]: a time-slot matrix of FIFO queues with bitmaps | `Θ(t)` | `O(t^2 + n)` |
//! | [`TreeQueue`]: the matrix kept in radix trees | `Θ(t)` | `O(t + n log(t))` |
//!
//! # Circular time
//!
//! Keys are absolute instants (`u64`, in the scheduler's time unit), but the array, matrix and
//! tree plugins index their slots by `instant mod t`, the circular time representation the
//! paper borrows from Buttazzo and Gai. That is unambiguous only while every queued key lies
//! in a window of `t` instants, the **horizon requirement**. With `base` the instant of the
//! last [`VbsQueue::release`] call and `q = t / 4`, a caller must keep:
//!
//! - every key with `release <= deadline <= release + q`;
//! - every inserted release at or after `base` (a release at `base` itself is due at once);
//! - every blocked release below `base + 2q`, and every deadline in `[base - q, base + 3q)`.
//!
//! The VBS scheduler keeps these by bounding every period by `q` and by re-keying overdue
//! processes (see the parent module); the list plugin, which stores keys whole, does not
//! need them. Within the window, circular order from `base - q` (deadlines) or from `base`
//! (releases) is time order, so wrap-around of `instant mod t` is invisible.
//!
//! # Order
//!
//! Ready is ordered by deadline, then by release time, then first-in first-out; Blocked by
//! release time, then first-in first-out. [`VbsQueue::requeue_front`] puts the preempted
//! process back ahead of its equals, so a running process is never preempted by an equal
//! deadline. The array plugin keeps one FIFO per deadline and relies on the scheduler's
//! discipline for the release-time tie-break: processes become ready in release order (every
//! entry goes through Blocked and `release` moves them in release order), and only the
//! process taken last by the scheduler is requeued at the front. Under that discipline (which
//! [`crate::bandwidth::vbs::Vbs`] follows and the property tests generate) all four plugins
//! give identical answers.
//!
//! # Work
//!
//! Each operation adds to the invocation's [`Work`]:
//! - `queue_entries_moved`: an entry linked into or unlinked from a list, slot or cell;
//! - `timeouts_examined`: a list node, bitmap word or tree node read or written while
//!   searching or updating the order (release times are the VBS's timeouts);
//! - `replenishments_processed`: a release applied to one process moved from Blocked to Ready
//!   (list, array) or to one column of processes released at once (matrix, tree).
//!
//! No operation allocates: every structure is sized at construction (a failed allocation
//! there is reported as [`CoreError::InvalidParameter`], not a panic). No operation panics,
//! whatever the arguments; a member id beyond the capacity or a second insertion is refused.

use alloc::vec::Vec;
use core::fmt::Debug;

use crate::{CoreError, Work};

pub mod array;
pub mod list;
pub mod matrix;
pub mod tree;

pub use array::ArrayQueue;
pub use list::ListQueue;
pub use matrix::MatrixQueue;
pub use tree::TreeQueue;

/// "No member" in the intrusive lists.
pub(crate) const NIL: u32 = u32::MAX;

/// The smallest horizon any plugin accepts: `2^4 = 16` instants, periods up to 4.
pub const MIN_HORIZON_BITS: u32 = 4;

/// A queued process's place in time, in instants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Key {
    /// When the process becomes ready (the paper's `r_i`).
    pub release: u64,
    /// Its current deadline (the paper's `d_i`), the end of its current period.
    pub deadline: u64,
}

/// The Blocked and Ready sets of the VBS scheduler, for members `0..capacity`.
///
/// A member is in at most one of the two sets. See the [module documentation](self) for the
/// order, the horizon requirement and what counts as work.
pub trait VbsQueue: Clone + Debug {
    /// The plugin's name, e.g. `"list"`.
    const NAME: &'static str;
    /// The name of a [`Vbs`](crate::bandwidth::vbs::Vbs) using this plugin, e.g. `"vbs-list"`.
    const POLICY_NAME: &'static str;
    /// The largest horizon (as a power of two) the plugin accepts.
    const MAX_HORIZON_BITS: u32;

    /// Empty sets for members `0..capacity`, telling `2^horizon_bits` instants apart.
    /// Allocates everything the plugin will ever use.
    fn new(capacity: usize, horizon_bits: u32) -> Result<Self, CoreError>;

    /// The bytes [`new`](VbsQueue::new) would allocate plus the structure itself, computed
    /// without allocating, so an experiment can chart memory against the time resolution.
    fn memory_bytes_for(capacity: usize, horizon_bits: u32) -> usize;

    /// The bytes this instance holds (its heap allocations and the structure itself).
    fn memory_bytes(&self) -> usize;

    /// How many members the sets can hold.
    fn capacity(&self) -> usize;

    /// Adds `member` to Blocked. It becomes ready at the first [`release`](VbsQueue::release)
    /// at or after `key.release` (at once if `key.release` is not after the last release
    /// instant: then the plugin may treat it as ready immediately). Returns false, changing
    /// nothing, for an id beyond the capacity or a member already queued.
    fn insert_blocked(&mut self, member: u32, key: Key, work: &mut Work) -> bool;

    /// Puts the process the scheduler took last (with
    /// [`earliest_ready`](VbsQueue::earliest_ready) and [`remove`](VbsQueue::remove)) back
    /// into Ready, ahead of every member with its deadline and release. `key.release` must
    /// not be after the last release instant. Returns false, changing nothing, as
    /// `insert_blocked` does.
    fn requeue_front(&mut self, member: u32, key: Key, work: &mut Work) -> bool;

    /// Takes `member` out of whichever set holds it; returns its key if it was queued.
    fn remove(&mut self, member: u32, work: &mut Work) -> Option<Key>;

    /// Step 2 of the algorithm: every member of Blocked with `release <= now` becomes ready,
    /// in release order. Records `now` as the last release instant; an earlier `now` than the
    /// last one changes nothing.
    fn release(&mut self, now: u64, work: &mut Work);

    /// The first member of Ready (earliest deadline, then earliest release, then first in).
    fn earliest_ready(&self, work: &mut Work) -> Option<(u32, Key)>;

    /// The earliest release time in Blocked (the paper's `t_r`).
    fn next_release(&self, work: &mut Work) -> Option<u64>;

    /// The key of `member` if it is queued.
    fn key(&self, member: u32) -> Option<Key>;

    /// The number of queued members.
    fn len(&self) -> usize;

    /// True when both sets are empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the plugin's internal invariants (stated at the top of its module).
    fn check(&self) -> Result<(), &'static str>;
}

/// A vector of `len` copies of `value`, or `InvalidParameter` if it cannot be allocated.
pub(crate) fn filled<T: Clone>(len: usize, value: T) -> Result<Vec<T>, CoreError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| CoreError::InvalidParameter)?;
    v.resize(len, value);
    Ok(v)
}

/// The heap bytes of a vector's elements.
pub(crate) fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * core::mem::size_of::<T>()
}

/// The number of 64-bit words holding `bits` bits (at least one).
pub(crate) const fn words_for(bits: usize) -> usize {
    if bits <= 64 {
        1
    } else {
        bits.div_ceil(64)
    }
}

/// Checks a requested horizon against a plugin's bounds.
pub(crate) fn check_horizon(horizon_bits: u32, max: u32) -> Result<(), CoreError> {
    if !(MIN_HORIZON_BITS..=max).contains(&horizon_bits) {
        return Err(CoreError::InvalidParameter);
    }
    Ok(())
}

/// Intrusive circular doubly-linked lists over members: each list is named by its head, the
/// tail is the head's predecessor, and an unlinked member has `NIL` links.
///
/// Invariant: `prev[m] == NIL` exactly when `next[m] == NIL`, exactly when `m` is in no list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl Links {
    pub(crate) fn new(capacity: usize) -> Result<Self, CoreError> {
        Ok(Links {
            prev: filled(capacity, NIL)?,
            next: filled(capacity, NIL)?,
        })
    }

    /// The heap bytes of `capacity` members' links.
    pub(crate) const fn bytes_for(capacity: usize) -> usize {
        2 * capacity * core::mem::size_of::<u32>()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        vec_bytes(&self.prev) + vec_bytes(&self.next)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.prev.len()
    }

    /// True when `m` is in a list (false for ids beyond the capacity).
    pub(crate) fn is_linked(&self, m: u32) -> bool {
        self.prev.get(m as usize).is_some_and(|&p| p != NIL)
    }

    pub(crate) fn next(&self, m: u32) -> u32 {
        self.next[m as usize]
    }

    pub(crate) fn prev(&self, m: u32) -> u32 {
        self.prev[m as usize]
    }

    /// The last member of the list headed by `head`.
    pub(crate) fn tail(&self, head: u32) -> u32 {
        if head == NIL {
            NIL
        } else {
            self.prev[head as usize]
        }
    }

    /// Links the unlinked `m` right before the linked `at` (the head is not changed, so
    /// before the head means at the tail).
    pub(crate) fn insert_before(&mut self, at: u32, m: u32) {
        let p = self.prev[at as usize];
        self.prev[m as usize] = p;
        self.next[m as usize] = at;
        self.next[p as usize] = m;
        self.prev[at as usize] = m;
    }

    /// Appends the unlinked `m` to the list headed by `*head`.
    pub(crate) fn push_back(&mut self, head: &mut u32, m: u32) {
        if *head == NIL {
            self.prev[m as usize] = m;
            self.next[m as usize] = m;
            *head = m;
        } else {
            self.insert_before(*head, m);
        }
    }

    /// Prepends the unlinked `m` to the list headed by `*head`.
    pub(crate) fn push_front(&mut self, head: &mut u32, m: u32) {
        self.push_back(head, m);
        *head = m;
    }

    /// Unlinks the linked `m` from the list headed by `*head`.
    pub(crate) fn unlink(&mut self, head: &mut u32, m: u32) {
        let (p, n) = (self.prev[m as usize], self.next[m as usize]);
        if n == m {
            *head = NIL;
        } else {
            self.next[p as usize] = n;
            self.prev[n as usize] = p;
            if *head == m {
                *head = n;
            }
        }
        self.prev[m as usize] = NIL;
        self.next[m as usize] = NIL;
    }

    /// Walks the list headed by `head`, checking the links both ways; returns its length.
    pub(crate) fn check_list(&self, head: u32) -> Result<usize, &'static str> {
        if head == NIL {
            return Ok(0);
        }
        let mut len = 0;
        let mut m = head;
        loop {
            if !self.is_linked(m) {
                return Err("a list holds an unlinked member");
            }
            let n = self.next[m as usize];
            if !self.is_linked(n) || self.prev[n as usize] != m {
                return Err("list links disagree");
            }
            len += 1;
            if len > self.capacity() {
                return Err("a list does not close");
            }
            m = n;
            if m == head {
                return Ok(len);
            }
        }
    }

    /// Checks that linked and unlinked members are told apart consistently.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        for (p, n) in self.prev.iter().zip(&self.next) {
            if (*p == NIL) != (*n == NIL) {
                return Err("a member is half linked");
            }
        }
        Ok(())
    }

    /// The number of linked members.
    pub(crate) fn linked(&self) -> usize {
        self.prev.iter().filter(|&&p| p != NIL).count()
    }
}

/// Which set a member of the list or array plugin is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    None,
    Blocked,
    Ready,
}

/// Checks the list and array plugins' `place` of each member against its links: a member
/// has a place exactly when it is linked.
pub(crate) fn check_places(links: &Links, place: &[Place]) -> Result<(), &'static str> {
    for (m, place) in place.iter().enumerate() {
        if (*place == Place::None) == links.is_linked(m as u32) {
            return Err("a member's place disagrees with its links");
        }
    }
    Ok(())
}

/// Sets bit `i` of a flat bitmap.
pub(crate) fn bit_set(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// Clears bit `i` of a flat bitmap.
pub(crate) fn bit_clear(words: &mut [u64], i: usize) {
    words[i / 64] &= !(1 << (i % 64));
}

/// Tests bit `i` of a flat bitmap.
pub(crate) fn bit_test(words: &[u64], i: usize) -> bool {
    words[i / 64] & (1 << (i % 64)) != 0
}

/// The first set bit of a flat bitmap at or after `start`, wrapping around once: circular
/// order from `start`. Reads at most one word more than the bitmap has, each counted as one
/// `timeouts_examined`.
pub(crate) fn first_set_circular(words: &[u64], start: usize, work: &mut Work) -> Option<usize> {
    let w0 = start / 64;
    let at_or_after = words[w0] & (!0u64 << (start % 64));
    work.timeouts_examined += 1;
    if at_or_after != 0 {
        return Some(w0 * 64 + at_or_after.trailing_zeros() as usize);
    }
    for (w, &word) in words
        .iter()
        .enumerate()
        .skip(w0 + 1)
        .chain(words.iter().enumerate().take(w0))
    {
        work.timeouts_examined += 1;
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
    }
    let before = words[w0] & !(!0u64 << (start % 64));
    work.timeouts_examined += 1;
    if before != 0 {
        return Some(w0 * 64 + before.trailing_zeros() as usize);
    }
    None
}

#[cfg(test)]
pub(crate) mod tests {
    //! A conformance suite every plugin runs: ordering, removal, wrap-around of circular time.

    use super::*;
    use alloc::vec;

    fn k(release: u64, deadline: u64) -> Key {
        Key { release, deadline }
    }

    /// The suite's tests for the plugin `$queue`, by the suite's names; `configuration` also
    /// runs the plugin's own `$extra` checks, if any.
    macro_rules! conformance_tests {
        ($queue:ty $(, configuration: $extra:block)?) => {
            $crate::bandwidth::vbs::queue::tests::conformance_tests!(
                @each $queue: orders_and_releases, requeue_and_remove, wraps_around
            );

            #[test]
            fn configuration() {
                $crate::bandwidth::vbs::queue::tests::configuration::<$queue>();
                $($extra)?
            }
        };
        (@each $queue:ty: $($test:ident),*) => {
            $(
                #[test]
                fn $test() {
                    $crate::bandwidth::vbs::queue::tests::$test::<$queue>();
                }
            )*
        };
    }
    pub(crate) use conformance_tests;

    /// 64 members, all released at 1 with deadlines 100 down to 37 (the reverse of their ids),
    /// inserted into `q` and then released: the work of that release.
    pub(crate) fn reverse_deadline_release_work<Q: VbsQueue>(mut q: Q) -> Work {
        let mut w = Work::default();
        for m in 0..64u32 {
            q.insert_blocked(m, k(1, 100 - u64::from(m)), &mut w);
        }
        let mut w = Work::default();
        q.release(1, &mut w);
        assert_eq!(w.replenishments_processed, 64);
        q.check().unwrap();
        w
    }

    /// Inserts, releases and reads back in the documented order.
    pub(crate) fn orders_and_releases<Q: VbsQueue>() {
        let mut w = Work::default();
        let mut q = Q::new(8, 6).unwrap(); // 64 instants, q = 16
        assert!(q.is_empty());
        assert!(q.insert_blocked(0, k(5, 20), &mut w));
        assert!(q.insert_blocked(1, k(3, 12), &mut w));
        assert!(q.insert_blocked(2, k(5, 12), &mut w));
        assert!(q.insert_blocked(3, k(3, 12), &mut w));
        assert!(
            !q.insert_blocked(3, k(4, 12), &mut w),
            "no second insertion"
        );
        assert!(
            !q.insert_blocked(8, k(4, 12), &mut w),
            "no id beyond capacity"
        );
        assert_eq!(q.len(), 4);
        assert_eq!(q.next_release(&mut w), Some(3));
        q.release(2, &mut w);
        assert_eq!(q.earliest_ready(&mut w), None);
        q.release(4, &mut w);
        // 1 and 3 released at 3 with deadline 12: first in, first out.
        assert_eq!(q.earliest_ready(&mut w), Some((1, k(3, 12))));
        assert_eq!(q.next_release(&mut w), Some(5));
        q.release(5, &mut w);
        assert_eq!(q.next_release(&mut w), None);
        // Deadline 12 before 20; among deadline 12, release 3 before release 5.
        let mut order = vec![];
        while let Some((m, key)) = q.earliest_ready(&mut w) {
            assert_eq!(q.remove(m, &mut w), Some(key));
            order.push(m);
            q.check().unwrap();
        }
        assert_eq!(order, [1, 3, 2, 0]);
        assert!(q.is_empty());
        q.check().unwrap();
    }

    /// `requeue_front` puts the taken member back ahead of its equals; removal from the
    /// middle of either set keeps the rest in order.
    pub(crate) fn requeue_and_remove<Q: VbsQueue>() {
        let mut w = Work::default();
        let mut q = Q::new(8, 6).unwrap();
        for m in 0..4 {
            q.insert_blocked(m, k(2, 10), &mut w);
        }
        q.insert_blocked(4, k(9, 14), &mut w);
        q.insert_blocked(5, k(9, 11), &mut w);
        q.release(2, &mut w);
        let (first, key) = q.earliest_ready(&mut w).unwrap();
        assert_eq!(first, 0);
        q.remove(first, &mut w);
        assert_eq!(q.earliest_ready(&mut w).map(|e| e.0), Some(1));
        assert!(q.requeue_front(first, key, &mut w));
        assert_eq!(q.earliest_ready(&mut w).map(|e| e.0), Some(0));
        assert_eq!(q.remove(2, &mut w), Some(k(2, 10)));
        assert_eq!(q.remove(2, &mut w), None);
        assert_eq!(q.remove(4, &mut w), Some(k(9, 14)), "removal from Blocked");
        assert_eq!(q.key(4), None);
        assert_eq!(q.key(5), Some(k(9, 11)));
        q.check().unwrap();
        q.release(9, &mut w);
        let mut order = vec![];
        while let Some((m, _)) = q.earliest_ready(&mut w) {
            q.remove(m, &mut w);
            order.push(m);
        }
        assert_eq!(order, [0, 1, 3, 5]);
        q.check().unwrap();
    }

    /// Keys cross several multiples of the horizon: circular slots wrap, order does not.
    pub(crate) fn wraps_around<Q: VbsQueue>() {
        let mut w = Work::default();
        let mut q = Q::new(4, 4).unwrap(); // 16 instants, q = 4
        let mut now = 0;
        for round in 0..20u64 {
            // Two processes released just before and just after a multiple of 16.
            let a = now + 3;
            let b = now + 5;
            assert!(q.insert_blocked(0, k(b, b + 4), &mut w));
            assert!(q.insert_blocked(1, k(a, a + 4), &mut w));
            assert_eq!(q.next_release(&mut w), Some(a), "round {round}");
            now = a;
            q.release(now, &mut w);
            assert_eq!(q.earliest_ready(&mut w), Some((1, k(a, a + 4))));
            assert_eq!(q.next_release(&mut w), Some(b));
            now = b;
            q.release(now, &mut w);
            // Deadline a + 4 = now + 2 before b + 4; the earlier one is now slightly overdue
            // relative to nothing, still within the window.
            assert_eq!(q.earliest_ready(&mut w), Some((1, k(a, a + 4))));
            q.remove(1, &mut w);
            assert_eq!(q.earliest_ready(&mut w), Some((0, k(b, b + 4))));
            q.remove(0, &mut w);
            q.check().unwrap();
            now += 1 + round % 5;
            q.release(now, &mut w);
        }
        // A deadline up to q behind the last release is still ordered first.
        q.insert_blocked(2, k(now, now + 3), &mut w);
        q.insert_blocked(3, k(now, now + 1), &mut w);
        q.release(now, &mut w);
        now += 5; // deadline now + 1 is 4 = q behind
        q.release(now, &mut w);
        q.insert_blocked(0, k(now, now + 4), &mut w);
        q.insert_blocked(1, k(now + 7, now + 9), &mut w);
        q.release(now, &mut w);
        let mut order = vec![];
        while let Some((m, _)) = q.earliest_ready(&mut w) {
            q.remove(m, &mut w);
            order.push(m);
        }
        assert_eq!(order, [3, 2, 0]);
        assert_eq!(q.next_release(&mut w), Some(now + 7));
        // A late release call (a gap longer than the horizon) releases everything due; the
        // released deadlines are then out of the window, which the scheduler re-keys.
        q.insert_blocked(2, k(now + 2, now + 3), &mut w);
        q.release(now + 100, &mut w);
        assert_eq!(q.next_release(&mut w), None);
        assert_eq!(q.len(), 2);
        assert_eq!(q.key(2), Some(k(now + 2, now + 3)));
        q.check().unwrap();
    }

    /// Rejects horizons out of range without panicking, and reports memory.
    pub(crate) fn configuration<Q: VbsQueue>() {
        assert!(Q::new(4, MIN_HORIZON_BITS - 1).is_err());
        assert!(Q::new(4, Q::MAX_HORIZON_BITS + 1).is_err());
        let q = Q::new(10, 6).unwrap();
        assert_eq!(q.capacity(), 10);
        assert_eq!(q.memory_bytes(), Q::memory_bytes_for(10, 6));
    }

    #[test]
    fn circular_scan_wraps() {
        let mut w = Work::default();
        let mut words = vec![0u64; 4];
        assert_eq!(first_set_circular(&words, 70, &mut w), None);
        bit_set(&mut words, 3);
        bit_set(&mut words, 130);
        assert_eq!(first_set_circular(&words, 70, &mut w), Some(130));
        assert_eq!(first_set_circular(&words, 131, &mut w), Some(3));
        assert_eq!(first_set_circular(&words, 3, &mut w), Some(3));
        bit_clear(&mut words, 130);
        assert_eq!(first_set_circular(&words, 4, &mut w), Some(3));
        assert!(bit_test(&words, 3));
        let mut one = vec![0u64; 1];
        bit_set(&mut one, 2);
        assert_eq!(first_set_circular(&one, 5, &mut w), Some(2));
    }

    #[test]
    fn links_form_circular_lists() {
        let mut l = Links::new(5).unwrap();
        let mut head = NIL;
        l.push_back(&mut head, 1);
        l.push_back(&mut head, 2);
        l.push_front(&mut head, 3);
        assert_eq!(l.check_list(head), Ok(3));
        assert_eq!((head, l.next(3), l.next(1), l.tail(head)), (3, 1, 2, 2));
        l.unlink(&mut head, 3);
        assert_eq!(head, 1);
        l.unlink(&mut head, 2);
        l.unlink(&mut head, 1);
        assert_eq!(head, NIL);
        assert_eq!(l.linked(), 0);
        l.check().unwrap();
    }
}
