//! The top-level scheduler of one cluster: time partitions, sporadic and best-effort reservations.
//!
//! MC-IPC paper, sections III and V. At each instant the scheduler selects the (up to) `m_k`
//! highest-priority reservations that are active and have budget (section III). Three kinds of
//! reservation, highest tier first:
//!
//! - a *time partition* (table-driven): slots `[start, end)` repeating with the cycle `H`,
//!   pinned to one core of the cluster. It has the highest priority, so it runs on its core
//!   whenever it is active during one of its slots. Slots of partitions on the same core never
//!   overlap (checked at construction);
//! - a *sporadic reservation* `(e, p)`: its budget is set to `e` when a job is released while
//!   the reservation is inactive, what is left is discarded when the job completes, and it is
//!   not replenished again until `p` after the release. Its priority is its fixed priority, or
//!   under EDF its deadline `t + p`: one ordering per cluster. Declared
//!   [`Replenishment::ConstantBandwidth`], it is a soft constant-bandwidth server instead
//!   (the case study's low-criticality reservations as CBS servers): it keeps its budget and
//!   deadline while idle, and at depletion postpones its deadline by `p` and is recharged at
//!   once, so it never waits for budget. Declared [`Replenishment::Spr`], it is an SPR
//!   sporadic server (SPR paper, section IV): its budget lives in a replenishment queue of
//!   `S` entries, each consumed chunk coming back `p` after the activation it was used from,
//!   so a client of an MC-IPC server can sit in the same reservation it has on one core;
//! - a *best-effort* reservation: lowest priority, no budget.
//!
//! The scheduler is driven as a kernel drives it: [`ClusteredScheduler::release`] (a job is
//! released), [`ClusteredScheduler::complete`] (a job completes), and
//! [`ClusteredScheduler::advance`] / [`ClusteredScheduler::select`] (time passes). Every entry
//! first charges the reservations selected so far up to `now`, processing on the way every
//! exhaustion, replenishment and slot boundary in time order (choosing anew at each), so the
//! selection it leaves is always the one the rules give for `now`. The caller learns when the
//! next such event is due from [`Selection::next_event`], and learns of exhaustions and
//! replenishments (to abort and reissue IPC requests) from the per-reservation counters
//! [`ClusteredScheduler::exhaustions`] and [`ClusteredScheduler::replenishments`].
//!
//! The two assumptions MC-IPC's analysis rests on (section III) hold by construction:
//! - A1: an active reservation's priority changes only when its budget is exhausted or
//!   replenished (an EDF deadline is set only at replenishment; fixed priorities never move).
//!   The one exception is Vestal's mode switch below, where the paper itself has the platform
//!   abort the affected requests as on an exhaustion;
//! - A2: a selected reservation's budget drains at unit speed while it is selected, whether
//!   or not anything runs in it: the scheduler is never told whether a client is ready, and
//!   "active" is all it needs ("ready" in this module means active with budget).
//!
//! Readings of the paper chosen here, each written where the code implements it:
//! - a time partition's budget is the time left until the end of its current slot, as the
//!   prototype does (section V), not a budget of the slot's length kept past the slot's end:
//!   a partition released in the middle of a slot gets the rest of the slot and never runs
//!   into another partition's slot. Reaching a slot's end while active counts as an
//!   exhaustion, a slot's start while active as a replenishment;
//! - a sporadic reservation still active (its job unfinished) `p` after its last replenishment
//!   is replenished only once its budget is exhausted (at that time or at the replenishment
//!   time, whichever is later), not refilled while it still has budget. Section III only says
//!   "not replenished again until `t + p`"; refilling a non-exhausted reservation would move
//!   its EDF priority without an exhaustion, which A1 forbids, and Lemma 2 relies on A1;
//! - a reservation counts its pending jobs: it is active while one is pending (section III:
//!   "active if (one of) the contained tasks has a pending job") and discards its budget when
//!   the last completes. A thread's job due before its predecessor completes (an overrun) is
//!   pending from then, so that completion leaves the reservation active with its budget;
//!   the thread takes the job at the cluster's timer at the completion's instant, after the
//!   instant's other completions, as a release then would be;
//! - cores: a partition always gets its own core; the other selected reservations take the
//!   free cores, each keeping the core it had while it stays selected, newcomers taking the
//!   lowest free core. Ties in priority are broken by reservation id (section III: "ties ...
//!   broken arbitrarily but consistently").
//!
//! Vestal's model (section VII): a sporadic reservation may be of high criticality, with the
//! budget `e^H` it is provisioned with and a low budget `e^L <= e^H` that it is expected to
//! stay within. In *low mode*, when a job of a high-criticality reservation has consumed its
//! low budget and is still pending, the cluster switches to *high mode*: every
//! low-criticality sporadic reservation is demoted to just above best-effort ("demoted to
//! (just above) best-effort status"), keeping its budget. The cluster returns to low mode at
//! its next idle instant: when no partition or sporadic reservation is active (best-effort
//! ones do not count). A demotion (and a return) changes a reservation's priority without an
//! exhaustion, so it is counted in [`ClusteredScheduler::mode_changes`]: the platform aborts
//! the reservation's pending requests "as if the reservations had exhausted their budget".
//! Readings chosen here: partitions are neither monitored nor demoted (section VII: "if all
//! high-criticality reservations are table-driven ... no action at runtime is required");
//! the switch happens only when the job is still pending once every call of the instant its
//! low budget ran out has been made (a job that completes having used exactly `e^L` did not
//! "consume more than `e^L`"): [`Selection::next_event`] is then `now`, and the next
//! [`ClusteredScheduler::advance`] at `now` closes the instant and switches; the switch is
//! per cluster.
//!
//! Invariants (checked by [`ClusteredScheduler::check_invariants`]):
//! - the selection has exactly `m_k` entries, no reservation twice, and each selected
//!   reservation records the core it is on;
//! - a selected reservation is active and has budget; a selected partition is on its core;
//! - an active partition inside one of its slots is selected on its core;
//! - no reservation that is not selected, active and has budget outranks a selected sporadic
//!   or best-effort reservation, and none waits while a core is free;
//! - a sporadic reservation's budget is at most `e`; an inactive one has none (a CBS or SPR
//!   server keeps what it has); an active one without budget waits for a replenishment still
//!   in the future; an SPR server's queue keeps its own invariants (entries sum to `e`);
//! - in low mode, no job of a high-criticality reservation has consumed more than `e^L`; in
//!   high mode, some partition or sporadic reservation is active;
//! - the counters last reported as [`ClusterScheduler`] notices are at most the counters.
//!
//! The scheduler also implements the one cluster interface, [`ClusterScheduler`]: how its
//! events map onto the calls above is written at the `impl`.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use super::replenishment::ReplenishmentQueue;
use crate::scheduler::{ClusterScheduler, CoreDecision, Event, Notice, Notices, SchedulerError};
use crate::{Duration, Instant, Priority, TaskId, Wake, Work};

/// A reservation of one cluster: an index into [`ClusterConfig::reservations`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct ReservationId(pub u32);

impl ReservationId {
    /// The id as an array index.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// How sporadic reservations are ordered in a cluster (section V: "either fixed or EDF-based
/// priorities").
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SporadicOrder {
    /// Earliest deadline first: the priority is the deadline `t + p` set at replenishment.
    EarliestDeadlineFirst,
    /// The fixed [`Sporadic::priority`] (larger is more important).
    FixedPriority,
}

/// One slot `[start, end)` of a time partition, as offsets within the cycle `H`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Slot {
    /// Where the slot starts, from the start of the cycle.
    pub start: Duration,
    /// Where it ends (exclusive), at most the cycle.
    pub end: Duration,
}

impl Slot {
    /// The slot `[start, end)`.
    pub const fn new(start: Duration, end: Duration) -> Slot {
        Slot { start, end }
    }

    /// True if the two slots share an instant.
    pub fn overlaps(self, other: Slot) -> bool {
        self.start < other.end && other.start < self.end
    }
}

impl core::fmt::Display for Slot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "[{}, {})", self.start, self.end)
    }
}

/// How a budgeted reservation's budget comes back.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Replenishment {
    /// Section III's rule: the budget is set to `e` at a release while inactive (no sooner
    /// than `p` after the last replenishment) and discarded when the last job completes.
    #[default]
    Sporadic,
    /// A soft constant-bandwidth server (Abeni and Buttazzo; the VBS paper, section II):
    /// the server keeps `(c, d)` while idle; a job arriving at `r` to an idle server keeps
    /// them if `c < (d - r) e / p`, else starts afresh with `d = r + p`, `c = e`; at
    /// depletion `d = d + p` and `c = e` at once. Its EDF priority therefore changes only
    /// at an exhaustion (which is also a replenishment) or while inactive, as A1 asks.
    ConstantBandwidth,
    /// An SPR sporadic server (SPR paper, section IV) with a replenishment queue of `slots`
    /// entries (`S`, 1 to [`MAX_SPR_SLOTS`]): budget consumed from an activation comes back
    /// `p` after it (Alg. 1), a suspension splits the head (Alg. 1, lines 10-13), and an
    /// activation merges every due entry (Alg. 3). Fixed priorities only, so A1 holds: its
    /// priority never moves. Of low criticality, like a constant-bandwidth server.
    Spr {
        /// `S`, the queue's capacity.
        slots: u16,
    },
}

/// The largest replenishment queue an SPR reservation may ask for.
pub const MAX_SPR_SLOTS: u16 = 256;

/// A sporadic reservation's parameters (section III).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Sporadic {
    /// The budget `e` (non-zero, at most the period).
    pub budget: Duration,
    /// The period `p` (non-zero): the least time between two replenishments.
    pub period: Duration,
    /// The fixed priority used under [`SporadicOrder::FixedPriority`] (larger is more
    /// important); ignored under EDF.
    pub priority: Priority,
    /// Its criticality (section VII); `budget` is `e^H` for a high-criticality reservation.
    pub criticality: SporadicCriticality,
    /// How its budget comes back. A constant-bandwidth or SPR server must be of low
    /// criticality: section VII's monitor needs the per-job budget of the sporadic rule.
    pub replenishment: Replenishment,
}

/// A sporadic reservation's criticality in Vestal's model with two levels (section VII),
/// with the low budget a high-criticality reservation is expected to stay within (the level
/// alone is [`crate::criticality::Criticality`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SporadicCriticality {
    /// Low: demoted to just above best-effort while the cluster is in high mode.
    Low,
    /// High, expected to stay within `low_budget` (`e^L`, non-zero, at most the budget
    /// `e^H`) per job: a job consuming it all switches the cluster to high mode.
    High {
        /// `e^L`.
        low_budget: Duration,
    },
}

/// A cluster's criticality mode (section VII).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Mode {
    /// Every reservation is scheduled by its own priority.
    Low,
    /// Low-criticality sporadic reservations are demoted to just above best-effort.
    High,
}

impl Sporadic {
    /// `(e, p)` of low criticality, with the lowest fixed priority.
    pub const fn new(budget: Duration, period: Duration) -> Sporadic {
        Sporadic {
            budget,
            period,
            priority: Priority::MIN,
            criticality: SporadicCriticality::Low,
            replenishment: Replenishment::Sporadic,
        }
    }

    /// The same reservation as a soft constant-bandwidth server of `e` per `p`.
    pub const fn with_constant_bandwidth(mut self) -> Sporadic {
        self.replenishment = Replenishment::ConstantBandwidth;
        self
    }

    const fn is_constant_bandwidth(&self) -> bool {
        matches!(self.replenishment, Replenishment::ConstantBandwidth)
    }

    /// The same reservation as an SPR sporadic server with a queue of `slots` entries.
    pub const fn with_spr(mut self, slots: u16) -> Sporadic {
        self.replenishment = Replenishment::Spr { slots };
        self
    }

    /// True for a server that keeps its budget while inactive (CBS and SPR).
    const fn keeps_budget(&self) -> bool {
        !matches!(self.replenishment, Replenishment::Sporadic)
    }

    /// The same reservation of high criticality, its budget being `e^H` and `low_budget`
    /// being `e^L`.
    pub const fn with_high_criticality(mut self, low_budget: Duration) -> Sporadic {
        self.criticality = SporadicCriticality::High { low_budget };
        self
    }

    /// The same reservation with fixed priority `priority`.
    pub const fn with_priority(mut self, priority: Priority) -> Sporadic {
        self.priority = priority;
        self
    }
}

/// What kind of reservation, with its parameters.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ReservationKind {
    /// A table-driven time partition on core `core` of the cluster, with slots disjoint and
    /// not touching, in any order. `priority` orders partitions among themselves (for an IPC
    /// gate's priority queue); every partition outranks every other kind.
    TimePartition {
        /// The core, `0..m_k`.
        core: usize,
        /// The partition's fixed priority among partitions (larger is more important).
        priority: Priority,
        /// The slots within the cycle.
        slots: Vec<Slot>,
    },
    /// A sporadic reservation.
    Sporadic(Sporadic),
    /// A best-effort reservation: lowest priority, no budget.
    BestEffort,
}

/// One cluster's configuration.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ClusterConfig {
    /// `m_k`, the number of cores (at least one).
    pub cores: usize,
    /// The cycle `H` of the partitions' table (non-zero when there is a partition).
    pub cycle: Duration,
    /// How sporadic reservations are ordered.
    pub order: SporadicOrder,
    /// The reservations; [`ReservationId`] `i` is the `i`-th.
    pub reservations: Vec<ReservationKind>,
}

/// Why the scheduler refused a configuration or a call; a refused call changed nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum ClusterError {
    /// A cluster needs at least one core.
    NoCores = 1,
    /// A sporadic budget or period is zero, the budget exceeds the period, or a low budget
    /// `e^L` is zero or exceeds the budget `e^H`.
    InvalidBudget = 2,
    /// A partition's core is not one of the cluster's.
    CoreOutOfRange = 3,
    /// A partition has no slot, a slot is empty or ends after the cycle, or the cycle is zero.
    InvalidSlot = 4,
    /// Two slots of one partition overlap or touch, or slots of two partitions on the same
    /// core overlap (section III: "must not overlap").
    OverlappingSlots = 5,
    /// The reservation id is not one of the cluster's.
    UnknownReservation = 6,
    /// `complete` for a reservation with no pending job.
    NotActive = 7,
    /// `now` is earlier than a time the scheduler has already seen.
    TimeWentBackwards = 8,
    /// A reservation already counts `u32::MAX` pending jobs.
    TooManyJobs = 9,
    /// More than [`MAX_RESERVATIONS`] reservations in one cluster.
    TooManyReservations = 10,
    /// A constant-bandwidth or SPR server of high criticality: Vestal's monitor (section
    /// VII) needs the sporadic rule's per-job budget.
    HighCriticalityServer = 11,
    /// An SPR server in a cluster ordered by EDF: SPR is a fixed-priority server.
    SprNeedsFixedPriority = 12,
    /// An SPR server's queue capacity `S` is zero or above [`MAX_SPR_SLOTS`].
    InvalidSprSlots = 13,
    /// A timed sleep for a reservation whose next release is already timed: its thread is
    /// asleep, so it cannot sleep again.
    AlreadySleeping = 14,
    /// More than [`MAX_THREADS`] threads bound to one cluster's reservations.
    TooManyThreads = 15,
}

/// The most reservations one cluster may have: a reservation's id fills the low 12 bits of
/// its [`ClusteredScheduler::urgency`], so that urgencies compare across clusters.
pub const MAX_RESERVATIONS: usize = 1 << URGENCY_ID_BITS;

const URGENCY_ID_BITS: u32 = 12;

/// The most threads one cluster may have: a release due scans every thread, so their number
/// bounds that work as the reservations' bounds a decision's.
pub const MAX_THREADS: usize = MAX_RESERVATIONS;

/// The urgency ([`ClusteredScheduler::urgency`]) of a sporadic reservation of id 0 at
/// `priority` under fixed-priority order: also how a thread on a core in no cluster ranks at a
/// gate beside a cluster's clients.
pub fn fixed_priority_urgency(priority: Priority) -> u64 {
    (256 + (255 - u64::from(priority.0))).saturating_mul(1 << URGENCY_ID_BITS)
}

/// The urgency of a sporadic reservation of id 0 with `deadline` under EDF order (see
/// [`fixed_priority_urgency`]).
pub fn deadline_urgency(deadline: Instant) -> u64 {
    512u64
        .saturating_add(deadline.as_nanos())
        .saturating_mul(1 << URGENCY_ID_BITS)
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClusterError::NoCores => "a cluster needs at least one core",
            ClusterError::InvalidBudget => "a sporadic reservation needs 0 < budget <= period",
            ClusterError::CoreOutOfRange => "a partition's core is outside the cluster",
            ClusterError::InvalidSlot => "a partition's slots must be non-empty and in the cycle",
            ClusterError::OverlappingSlots => "slots on one core overlap",
            ClusterError::UnknownReservation => "unknown reservation",
            ClusterError::NotActive => "the reservation has no pending job",
            ClusterError::TimeWentBackwards => "time went backwards",
            ClusterError::TooManyJobs => "too many pending jobs",
            ClusterError::TooManyReservations => "more than 4096 reservations in a cluster",
            ClusterError::HighCriticalityServer => {
                "a constant-bandwidth or SPR server must be of low criticality"
            }
            ClusterError::SprNeedsFixedPriority => {
                "an SPR server needs a cluster ordered by fixed priority"
            }
            ClusterError::InvalidSprSlots => "an SPR server needs 1 <= slots <= 256",
            ClusterError::AlreadySleeping => "the reservation's next release is already timed",
            ClusterError::TooManyThreads => "more than 4096 threads in a cluster",
        })
    }
}

/// A refused configuration: the reason, and the reservation at fault when there is one.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConfigurationError {
    /// Why.
    pub error: ClusterError,
    /// The reservation at fault (for overlapping slots, the later of the two).
    pub reservation: Option<ReservationId>,
}

impl fmt::Display for ConfigurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reservation {
            Some(r) => write!(f, "{} (reservation {})", self.error, r.0),
            None => write!(f, "{}", self.error),
        }
    }
}

/// What a scheduler invocation answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Selection<'a> {
    /// For each core of the cluster, the reservation selected on it, if any.
    pub cores: &'a [Option<ReservationId>],
    /// The next instant at which a budget is exhausted or replenished or a slot starts or
    /// ends for an active reservation ([`Instant::NEVER`] if none): call again by then.
    pub next_event: Instant,
}

/// A reservation's kind as the scheduler keeps it (slots flattened into one array).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Partition {
        core: usize,
        priority: Priority,
        /// The partition's slots are `slots[first..first + count]`, sorted by start.
        first: usize,
        count: usize,
    },
    Sporadic(Sporadic),
    BestEffort,
}

/// A reservation's changing state.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct State {
    /// Jobs released and not completed; active when non-zero.
    pending_jobs: u32,
    /// Sporadic only: the current budget `B_j`.
    budget: Duration,
    /// Sporadic only: the last replenishment time plus `p`. It is both the EDF priority
    /// `Y_j` (section III: "Y_j is set to t + p_i") and the earliest next replenishment
    /// ("not replenished again until time t + p_i").
    deadline: Instant,
    /// Sporadic only: `deadline` before the last replenishment, to undo a replenishment its
    /// instant's completion makes moot (see [`ClusteredScheduler::complete`]).
    previous_deadline: Instant,
    /// Sporadic only: budget consumed since the later of the job's release and the last
    /// replenishment (what section VII's monitor compares with `e^L`).
    consumed: Duration,
    /// The core the reservation is selected on.
    core: Option<usize>,
    /// Time it has been selected, in all (A2: what it drained, budgeted or not).
    drained: Duration,
    exhaustions: u64,
    replenishments: u64,
    mode_changes: u64,
}

/// The top-level scheduler of one cluster. See the module documentation.
#[derive(Clone, Debug)]
pub struct ClusteredScheduler {
    order: SporadicOrder,
    /// `H` in nanoseconds (non-zero whenever there is a partition).
    cycle: u64,
    kinds: Vec<Kind>,
    slots: Vec<Slot>,
    states: Vec<State>,
    /// The selection: one entry per core.
    cores: Vec<Option<ReservationId>>,
    /// Scratch space for choosing, allocated once.
    chosen: Vec<bool>,
    next_cores: Vec<Option<ReservationId>>,
    /// The time up to which budgets have been charged.
    now: Instant,
    mode: Mode,
    mode_switches: u64,
    /// Per reservation: an SPR server's replenishment queue and the budget `u` used from its
    /// head; `None` for every other kind.
    spr: Vec<Option<SprBudget>>,
    /// Per reservation: its counters as last reported through [`ClusterScheduler`] notices.
    reported: Vec<Counters>,
    /// [`Self::mode_switches`] as last reported through [`ClusterScheduler`] notices.
    reported_mode_switches: u64,
    /// Per thread: the reservation it is bound to (its scheduling context). Thread `n` is
    /// reservation `n` unless [`ClusteredScheduler::with_threads`] binds several threads to
    /// one reservation.
    bindings: Vec<ReservationId>,
    /// Per thread: its jobs released and not completed (its reservation's pending jobs are
    /// the sum over its threads, when driven through the cluster interface).
    thread_jobs: Vec<u32>,
    /// Per thread: when a timed [`Event::Sleep`] releases its next job ([`Instant::NEVER`]:
    /// no timed release). The scheduler owns these timers, as every policy owns its tasks'
    /// wake-ups.
    wakes: Vec<Instant>,
    /// Per thread: its timed release is a job already pending in its reservation (due
    /// before its predecessor completed), which the thread takes at that timer.
    carried: Vec<bool>,
    /// How many entries of `wakes` are timed, so that a cluster without any pays nothing.
    timed_wakes: usize,
}

/// A reservation's exhaustion, replenishment and mode-change counts.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct Counters {
    exhaustions: u64,
    replenishments: u64,
    mode_changes: u64,
}

/// An SPR server's budget: the queue `R_i` and the used budget `u` (SPR paper, section IV).
#[derive(Clone, Debug)]
struct SprBudget {
    queue: ReplenishmentQueue,
    used: Duration,
}

impl SprBudget {
    /// The budget available at `now`: what is left of the head if it is due, else none.
    fn available(&self, now: Instant) -> Duration {
        let head = self.queue.head();
        if head.at <= now {
            head.amount.saturating_sub(self.used)
        } else {
            Duration::ZERO
        }
    }
}

/// The CBS wake-up rule: a job arriving at `r` to an idle server keeps `(c, d)` only if the
/// remaining budget can be used before `d` at the server's bandwidth, `c < (d - r) Q / T`
/// (compared as `c T < (d - r) Q` in exact integers).
fn cbs_starts_afresh(server: Sporadic, state: &State, arrival: Instant) -> bool {
    let until_deadline = state.deadline.saturating_duration_since(arrival).as_nanos() as u128;
    let budget_left = state.budget.as_nanos() as u128;
    budget_left * server.period.as_nanos() as u128
        >= until_deadline * server.budget.as_nanos() as u128
}

/// Within a cycle of `cycle` nanoseconds, at time `t`: the end of the slot containing `t`, if
/// any, and the next slot start strictly after `t`. `slots` is sorted by start.
fn slot_window(slots: &[Slot], cycle: u64, t: Instant) -> (Option<Instant>, Instant) {
    let t = t.as_nanos();
    let offset = t % cycle.max(1);
    let base = t - offset;
    let mut current_end = None;
    let mut next_start = None;
    for slot in slots {
        let (start, end) = (slot.start.as_nanos(), slot.end.as_nanos());
        if start <= offset && offset < end {
            current_end = Some(Instant::from_nanos(base.saturating_add(end)));
        }
        if next_start.is_none() && start > offset {
            next_start = Some(base.saturating_add(start));
        }
    }
    let next_start = next_start.unwrap_or_else(|| {
        let first = slots.first().map_or(u64::MAX, |s| s.start.as_nanos());
        base.saturating_add(cycle).saturating_add(first)
    });
    (current_end, Instant::from_nanos(next_start))
}

impl ClusteredScheduler {
    /// A scheduler for `config`, every reservation inactive, at time zero, with one thread
    /// per reservation (thread `n` bound to reservation `n`). All memory is allocated here.
    pub fn new(config: &ClusterConfig) -> Result<Self, ConfigurationError> {
        let identity: Vec<ReservationId> = (0..config.reservations.len())
            .map(|i| ReservationId(i as u32))
            .collect();
        Self::with_threads(config, &identity)
    }

    /// A scheduler for `config` whose thread `t` (the [`TaskId`] of the cluster interface's
    /// events) is bound to reservation `bindings[t]`: several threads may share one
    /// reservation's budget (section III: a reservation is "active if (one of) the contained
    /// tasks has a pending job"). Each thread's timed releases are its own. A binding to a
    /// reservation `config` does not have is refused. Decisions and notices still name
    /// reservations.
    pub fn with_threads(
        config: &ClusterConfig,
        bindings: &[ReservationId],
    ) -> Result<Self, ConfigurationError> {
        // The reservations are checked first: `new` binds one thread to each.
        let mut scheduler = Self::build(config)?;
        if bindings.len() > MAX_THREADS {
            return Err(ConfigurationError {
                error: ClusterError::TooManyThreads,
                reservation: None,
            });
        }
        if let Some(&unknown) = bindings
            .iter()
            .find(|r| r.index() >= config.reservations.len())
        {
            return Err(ConfigurationError {
                error: ClusterError::UnknownReservation,
                reservation: Some(unknown),
            });
        }
        scheduler.bindings = bindings.to_vec();
        scheduler.thread_jobs = vec![0; bindings.len()];
        scheduler.wakes = vec![Instant::NEVER; bindings.len()];
        scheduler.carried = vec![false; bindings.len()];
        Ok(scheduler)
    }

    fn build(config: &ClusterConfig) -> Result<Self, ConfigurationError> {
        let refuse = |error, index: usize| ConfigurationError {
            error,
            reservation: Some(ReservationId(index as u32)),
        };
        if config.cores == 0 {
            return Err(ConfigurationError {
                error: ClusterError::NoCores,
                reservation: None,
            });
        }
        if config.reservations.len() > MAX_RESERVATIONS {
            return Err(refuse(ClusterError::TooManyReservations, MAX_RESERVATIONS));
        }
        let cycle = config.cycle.as_nanos();
        let mut kinds = Vec::with_capacity(config.reservations.len());
        let mut slots: Vec<Slot> = Vec::new();
        for (index, kind) in config.reservations.iter().enumerate() {
            kinds.push(match kind {
                ReservationKind::TimePartition {
                    core,
                    priority,
                    slots: own,
                } => {
                    if *core >= config.cores {
                        return Err(refuse(ClusterError::CoreOutOfRange, index));
                    }
                    // Section III: 0 <= t_1 < t_2 < ... < t_2r <= H.
                    if cycle == 0
                        || own.is_empty()
                        || own.iter().any(|s| s.start >= s.end || s.end > config.cycle)
                    {
                        return Err(refuse(ClusterError::InvalidSlot, index));
                    }
                    let first = slots.len();
                    slots.extend_from_slice(own);
                    slots[first..].sort_unstable_by_key(|s| s.start);
                    if slots[first..].windows(2).any(|w| w[1].start <= w[0].end) {
                        return Err(refuse(ClusterError::OverlappingSlots, index));
                    }
                    // Section III: slots of partitions on the same processor must not overlap.
                    for earlier in &kinds {
                        if let Kind::Partition {
                            core: c,
                            first: f,
                            count: n,
                            ..
                        } = *earlier
                        {
                            let overlap = |a: &Slot, b: &Slot| a.start < b.end && b.start < a.end;
                            if c == *core
                                && slots[f..f + n]
                                    .iter()
                                    .any(|a| slots[first..].iter().any(|b| overlap(a, b)))
                            {
                                return Err(refuse(ClusterError::OverlappingSlots, index));
                            }
                        }
                    }
                    Kind::Partition {
                        core: *core,
                        priority: *priority,
                        first,
                        count: own.len(),
                    }
                }
                ReservationKind::Sporadic(sporadic) => {
                    let low_budget_out_of_range = match sporadic.criticality {
                        SporadicCriticality::High { low_budget } => {
                            low_budget.is_zero() || low_budget > sporadic.budget
                        }
                        SporadicCriticality::Low => false,
                    };
                    if sporadic.budget.is_zero()
                        || sporadic.period.is_zero()
                        || sporadic.budget > sporadic.period
                        || low_budget_out_of_range
                    {
                        return Err(refuse(ClusterError::InvalidBudget, index));
                    }
                    if sporadic.keeps_budget() && sporadic.criticality != SporadicCriticality::Low {
                        return Err(refuse(ClusterError::HighCriticalityServer, index));
                    }
                    if let Replenishment::Spr { slots: capacity } = sporadic.replenishment {
                        if config.order != SporadicOrder::FixedPriority {
                            return Err(refuse(ClusterError::SprNeedsFixedPriority, index));
                        }
                        if capacity == 0 || capacity > MAX_SPR_SLOTS {
                            return Err(refuse(ClusterError::InvalidSprSlots, index));
                        }
                    }
                    Kind::Sporadic(*sporadic)
                }
                ReservationKind::BestEffort => Kind::BestEffort,
            });
        }
        let n = kinds.len();
        // Each SPR server's queue holds its whole budget, due at time zero (Fig. 8a).
        let spr = kinds
            .iter()
            .map(|kind| match kind {
                Kind::Sporadic(Sporadic {
                    budget,
                    replenishment: Replenishment::Spr { slots },
                    ..
                }) => ReplenishmentQueue::new(*slots as usize, *budget, Instant::ZERO)
                    .ok()
                    .map(|queue| SprBudget {
                        queue,
                        used: Duration::ZERO,
                    }),
                _ => None,
            })
            .collect();
        Ok(ClusteredScheduler {
            spr,
            order: config.order,
            cycle,
            kinds,
            slots,
            states: vec![State::default(); n],
            cores: vec![None; config.cores],
            chosen: vec![false; n],
            next_cores: vec![None; config.cores],
            now: Instant::ZERO,
            mode: Mode::Low,
            mode_switches: 0,
            reported: vec![Counters::default(); n],
            reported_mode_switches: 0,
            bindings: Vec::new(),
            thread_jobs: Vec::new(),
            wakes: Vec::new(),
            carried: Vec::new(),
            timed_wakes: 0,
        })
    }

    /// `m_k`.
    pub fn core_count(&self) -> usize {
        self.cores.len()
    }

    /// The number of reservations.
    pub fn reservation_count(&self) -> usize {
        self.kinds.len()
    }

    /// The time up to which budgets have been charged (the latest `now` seen).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The selection as of [`now`](Self::now): one entry per core.
    pub fn selection(&self) -> &[Option<ReservationId>] {
        &self.cores
    }

    /// The core `reservation` is selected on, if it is.
    pub fn core_of(&self, reservation: ReservationId) -> Option<usize> {
        self.states.get(reservation.index())?.core
    }

    /// True while `reservation` has a pending job.
    pub fn is_active(&self, reservation: ReservationId) -> bool {
        self.states
            .get(reservation.index())
            .is_some_and(|s| s.pending_jobs > 0)
    }

    /// The number of jobs released and not completed.
    pub fn pending_jobs(&self, reservation: ReservationId) -> u32 {
        self.states
            .get(reservation.index())
            .map_or(0, |s| s.pending_jobs)
    }

    /// True for a best-effort reservation.
    pub fn is_best_effort(&self, reservation: ReservationId) -> bool {
        matches!(self.kinds.get(reservation.index()), Some(Kind::BestEffort))
    }

    /// The current budget `B_j` at [`now`](Self::now): a partition's is the time left in its
    /// current slot; a best-effort reservation's is [`Duration::MAX`].
    pub fn budget(&self, reservation: ReservationId) -> Option<Duration> {
        let i = reservation.index();
        Some(match *self.kinds.get(i)? {
            Kind::Partition { .. } => self.partition_budget(i, self.now),
            Kind::Sporadic(_) => self.states[i].budget,
            Kind::BestEffort => Duration::MAX,
        })
    }

    /// `reservation`'s budget at `now`, no earlier than the scheduler's clock: what
    /// [`ClusteredScheduler::budget`] gives less what a selected sporadic reservation drains
    /// since the clock (A2: at unit speed). An SPR server's early replenishments due by `now`
    /// are not counted: they come with the next event.
    pub fn budget_at(&self, reservation: ReservationId, now: Instant) -> Option<Duration> {
        let i = reservation.index();
        Some(match *self.kinds.get(i)? {
            Kind::Partition { .. } => self.partition_budget(i, now.max(self.now)),
            Kind::Sporadic(_) => self.states[i]
                .budget
                .saturating_sub(self.drain_since_clock(i, now)),
            Kind::BestEffort => Duration::MAX,
        })
    }

    /// The time `reservation` has been selected up to `now` (no earlier than the
    /// scheduler's clock), in all: what it drained under A2, whatever ran in it.
    pub fn drained_at(&self, reservation: ReservationId, now: Instant) -> Option<Duration> {
        let i = reservation.index();
        let state = self.states.get(i)?;
        Some(state.drained.saturating_add(self.drain_since_clock(i, now)))
    }

    /// What reservation `i` drains from the scheduler's clock to `now`: all of it while it is
    /// active and selected (A2), else nothing.
    fn drain_since_clock(&self, i: usize, now: Instant) -> Duration {
        let state = &self.states[i];
        if state.pending_jobs > 0 && state.core.is_some() {
            now.saturating_duration_since(self.now)
        } else {
            Duration::ZERO
        }
    }

    /// True when `reservation` is active and has budget, so it competes for a core.
    pub fn is_eligible(&self, reservation: ReservationId) -> bool {
        reservation.index() < self.kinds.len() && self.eligible(reservation.index())
    }

    /// A sporadic reservation's deadline: its last replenishment plus `p`.
    pub fn deadline(&self, reservation: ReservationId) -> Option<Instant> {
        match self.kinds.get(reservation.index())? {
            Kind::Sporadic(_) => Some(self.states[reservation.index()].deadline),
            _ => None,
        }
    }

    /// How many times `reservation`'s budget was exhausted while it was active (a partition:
    /// reached a slot's end).
    pub fn exhaustions(&self, reservation: ReservationId) -> u64 {
        self.states
            .get(reservation.index())
            .map_or(0, |s| s.exhaustions)
    }

    /// How many times `reservation`'s budget was replenished while it was active (a
    /// partition: a slot started; a sporadic reservation: its budget was set to `e`).
    pub fn replenishments(&self, reservation: ReservationId) -> u64 {
        self.states
            .get(reservation.index())
            .map_or(0, |s| s.replenishments)
    }

    /// How many times `reservation`'s priority changed with the cluster's mode (demoted on a
    /// switch to high mode, restored on the return): the platform aborts its pending requests
    /// then, as on an exhaustion (section VII).
    pub fn mode_changes(&self, reservation: ReservationId) -> u64 {
        self.states
            .get(reservation.index())
            .map_or(0, |s| s.mode_changes)
    }

    /// The cluster's criticality mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How many times the cluster switched to high mode.
    pub fn mode_switches(&self) -> u64 {
        self.mode_switches
    }

    /// The current priority `Y_j` as an *urgency* for an IPC gate: smaller is more urgent.
    /// It is `key * 4096 + id`, the same scale in every cluster, so that one gate can order
    /// clients of several clusters (PRIO-IPC, and the global view of MC-IPC); within a
    /// cluster distinct reservations have distinct urgencies (ties broken by id) as long as
    /// EDF deadlines stay below `2^50 - 512` nanoseconds (13 days). Partitions come first (key
    /// `255 - priority`), then sporadic reservations (`256 + 255 - priority`, or `512 +
    /// deadline` under EDF), then demoted ones (`2^62` added), and best-effort reservations
    /// last at `u64::MAX`.
    pub fn urgency(&self, reservation: ReservationId) -> Option<u64> {
        let i = reservation.index();
        let within = |key: u64| {
            key.saturating_mul(1 << URGENCY_ID_BITS)
                .saturating_add(i as u64)
        };
        Some(match *self.kinds.get(i)? {
            Kind::Partition { priority, .. } => within(255 - priority.0 as u64),
            Kind::Sporadic(s) => {
                let urgency = match self.order {
                    SporadicOrder::FixedPriority => {
                        fixed_priority_urgency(s.priority).saturating_add(i as u64)
                    }
                    SporadicOrder::EarliestDeadlineFirst => {
                        deadline_urgency(self.states[i].deadline).saturating_add(i as u64)
                    }
                };
                if self.demoted(i) {
                    urgency.saturating_add(1 << 62).min(u64::MAX - 1)
                } else {
                    urgency
                }
            }
            Kind::BestEffort => u64::MAX,
        })
    }

    /// `reservation` releases a job at `now`. If it was inactive, a sporadic reservation's
    /// budget is set to `e` now, or at its replenishment time if that is later.
    pub fn release(
        &mut self,
        now: Instant,
        reservation: ReservationId,
        work: &mut Work,
    ) -> Result<(), ClusterError> {
        let i = self.known(reservation)?;
        self.not_before(now)?;
        if self.states[i].pending_jobs == u32::MAX {
            return Err(ClusterError::TooManyJobs);
        }
        self.run_until(now, false, work);
        let state = &mut self.states[i];
        if state.pending_jobs == 0 {
            // Section VII's monitor counts what each job consumes.
            state.consumed = Duration::ZERO;
            if let Some(server) = self.spr[i].as_mut() {
                // Alg. 3: the activation merges every due replenishment into the head and
                // restarts it now; the budget is the head's, if it is due.
                server.queue.activate(now, Instant::NEVER, work);
                state.budget = server.available(now);
            }
            if let Kind::Sporadic(s) = self.kinds[i] {
                if s.is_constant_bandwidth() && cbs_starts_afresh(s, state, now) {
                    // CBS wake-up rule: d = r + T, c = Q.
                    state.budget = s.budget;
                    state.deadline = now.saturating_add(s.period);
                    state.replenishments += 1;
                    work.replenishments_processed = work.replenishments_processed.saturating_add(1);
                }
            }
        }
        state.pending_jobs += 1;
        work.reservations_touched = work.reservations_touched.saturating_add(1);
        // Replenish (section III: "B_j is set to e_j") if due, and choose anew.
        self.run_until(now, false, work);
        Ok(())
    }

    /// A job of `reservation` completes at `now`. When it was the last pending one, the
    /// reservation becomes inactive and a sporadic reservation discards its remaining budget
    /// (section III: "R_j discards the remaining budget").
    pub fn complete(
        &mut self,
        now: Instant,
        reservation: ReservationId,
        work: &mut Work,
    ) -> Result<(), ClusterError> {
        let i = self.known(reservation)?;
        self.not_before(now)?;
        if self.states[i].pending_jobs == 0 {
            return Err(ClusterError::NotActive);
        }
        self.run_until(now, false, work);
        let keeps_budget = matches!(self.kinds[i], Kind::Sporadic(s) if s.keeps_budget());
        let state = &mut self.states[i];
        state.pending_jobs -= 1;
        if let (Kind::Sporadic(s), false, 0) = (self.kinds[i], keeps_budget, state.pending_jobs) {
            // A replenishment at this very instant (the budget ran out as the job completed,
            // and the still active reservation was replenished) is undone: a completion comes
            // first at its instant, so the reservation was inactive then and owed nothing.
            // Its budget goes with the job, and the next release, not that exhaustion,
            // starts the next period ("not replenished again until t + p"). The deadline is
            // always the last replenishment plus p, so it tells one made now. The counter
            // keeps it: it is what the notices report, and it only grows.
            if state.deadline == now.saturating_add(s.period) && state.replenishments > 0 {
                state.deadline = state.previous_deadline;
            }
        }
        // A constant-bandwidth server keeps (c, d) while idle, for the wake-up rule.
        if state.pending_jobs == 0 && !keeps_budget {
            state.budget = Duration::ZERO;
        }
        if state.pending_jobs == 0 {
            if let (Some(server), Kind::Sporadic(s)) = (self.spr[i].as_mut(), self.kinds[i]) {
                // Alg. 1, lines 10-13: suspended with budget left, the used part is planned
                // for t_head + p and the head keeps the rest.
                server.queue.split(&mut server.used, s.period, work);
                state.budget = server.available(now);
            }
        }
        work.reservations_touched = work.reservations_touched.saturating_add(1);
        self.run_until(now, false, work);
        Ok(())
    }

    /// Charges the selected reservations up to `now`, processing every exhaustion,
    /// replenishment and slot boundary on the way, in time order. Called with the current
    /// instant, it *closes* it: every call for this instant has been made, so a pending
    /// switch to high mode takes effect (see the module documentation). Work is
    /// proportional to the events between the last call and `now`.
    pub fn advance(&mut self, now: Instant, work: &mut Work) -> Result<(), ClusterError> {
        self.not_before(now)?;
        self.run_until(now, now == self.now, work);
        Ok(())
    }

    /// [`advance`](Self::advance) to `now`, then the selection and the next event.
    pub fn select(&mut self, now: Instant, work: &mut Work) -> Result<Selection<'_>, ClusterError> {
        self.advance(now, work)?;
        Ok(Selection {
            next_event: self.next_event(),
            cores: &self.cores,
        })
    }

    /// The next instant after [`now`](Self::now) at which the selection may change by itself:
    /// the earliest exhaustion of a selected reservation, replenishment of an active sporadic
    /// reservation without budget, slot boundary of an active partition, or (in low mode)
    /// exhaustion of a selected high-criticality reservation's low budget. It is `now` itself
    /// when a switch to high mode waits for the instant to be closed by
    /// [`advance`](Self::advance).
    pub fn next_event(&self) -> Instant {
        if self.switch_pending() {
            return self.now;
        }
        let mut next = Instant::NEVER;
        for (i, kind) in self.kinds.iter().enumerate() {
            let state = &self.states[i];
            if state.pending_jobs == 0 {
                continue;
            }
            let event = match *kind {
                Kind::Partition { first, count, .. } => {
                    let (end, start) =
                        slot_window(&self.slots[first..first + count], self.cycle, self.now);
                    end.map_or(start, |end| end.min(start))
                }
                Kind::Sporadic(s) if state.core.is_some() => {
                    let mut left = state.budget;
                    if let (Mode::Low, SporadicCriticality::High { low_budget }) =
                        (self.mode, s.criticality)
                    {
                        left = left.min(low_budget.saturating_sub(state.consumed));
                    }
                    self.now.saturating_add(left)
                }
                Kind::Sporadic(_) if state.budget.is_zero() => match &self.spr[i] {
                    // An SPR server's next replenishment is its queue's head.
                    Some(server) => server.queue.head().at,
                    None => state.deadline,
                },
                Kind::Sporadic(_) | Kind::BestEffort => Instant::NEVER,
            };
            next = next.min(event);
        }
        next
    }

    /// Thread `task` of the cluster interface and its reservation's index.
    fn thread(&self, task: TaskId) -> Result<(usize, usize), ClusterError> {
        let t = task.index();
        match self.bindings.get(t) {
            Some(reservation) => Ok((t, reservation.index())),
            None => Err(ClusterError::UnknownReservation),
        }
    }

    /// The reservation thread `task` is bound to.
    pub fn binding(&self, task: TaskId) -> Option<ReservationId> {
        self.bindings.get(task.index()).copied()
    }

    /// True while thread `task` has a job released and not completed.
    pub fn thread_is_pending(&self, task: TaskId) -> bool {
        self.thread_jobs
            .get(task.index())
            .is_some_and(|&jobs| jobs > 0)
    }

    /// The number of threads (one per reservation unless bound otherwise).
    pub fn thread_count(&self) -> usize {
        self.bindings.len()
    }

    fn known(&self, reservation: ReservationId) -> Result<usize, ClusterError> {
        let i = reservation.index();
        if i < self.kinds.len() {
            Ok(i)
        } else {
            Err(ClusterError::UnknownReservation)
        }
    }

    fn not_before(&self, now: Instant) -> Result<(), ClusterError> {
        if now < self.now {
            Err(ClusterError::TimeWentBackwards)
        } else {
            Ok(())
        }
    }

    fn partition_budget(&self, i: usize, t: Instant) -> Duration {
        match self.kinds[i] {
            Kind::Partition { first, count, .. } => {
                let (end, _) = slot_window(&self.slots[first..first + count], self.cycle, t);
                end.map_or(Duration::ZERO, |end| end.saturating_duration_since(t))
            }
            _ => Duration::ZERO,
        }
    }

    fn eligible(&self, i: usize) -> bool {
        let state = &self.states[i];
        state.pending_jobs > 0
            && match self.kinds[i] {
                Kind::Partition { .. } => !self.partition_budget(i, self.now).is_zero(),
                Kind::Sporadic(_) => !state.budget.is_zero(),
                Kind::BestEffort => true,
            }
    }

    /// True for a low-criticality sporadic reservation while the cluster is in high mode.
    fn demoted(&self, i: usize) -> bool {
        self.mode == Mode::High
            && matches!(
                self.kinds[i],
                Kind::Sporadic(Sporadic {
                    criticality: SporadicCriticality::Low,
                    ..
                })
            )
    }

    /// The order among the reservations that share cores: sporadic first, by priority, then
    /// demoted sporadic (section VII: "just above best-effort"), then best-effort; ties by id.
    /// Smaller is selected first.
    fn rank(&self, i: usize) -> (u8, u64, usize) {
        match self.kinds[i] {
            Kind::Partition { priority, .. } => (0, 255 - priority.0 as u64, i),
            Kind::Sporadic(s) => {
                let tier = if self.demoted(i) { 2 } else { 1 };
                match self.order {
                    SporadicOrder::FixedPriority => (tier, 255 - s.priority.0 as u64, i),
                    SporadicOrder::EarliestDeadlineFirst => {
                        (tier, self.states[i].deadline.as_nanos(), i)
                    }
                }
            }
            Kind::BestEffort => (3, 0, i),
        }
    }

    /// Section VII: in low mode, a job of a high-criticality reservation has consumed its
    /// whole low budget `e^L` and is still pending.
    fn switch_pending(&self) -> bool {
        self.mode == Mode::Low
            && self
                .kinds
                .iter()
                .zip(&self.states)
                .any(|(kind, state)| match kind {
                    Kind::Sporadic(Sporadic {
                        criticality: SporadicCriticality::High { low_budget },
                        ..
                    }) => state.pending_jobs > 0 && state.consumed >= *low_budget,
                    _ => false,
                })
    }

    /// Switches to high mode: low-criticality sporadic reservations are demoted.
    fn enter_high_mode(&mut self, work: &mut Work) {
        self.mode = Mode::High;
        self.mode_switches += 1;
        self.count_mode_change(work);
    }

    /// Section VII: back to low mode at an idle instant (no partition or sporadic
    /// reservation active).
    fn leave_high_mode_if_idle(&mut self, work: &mut Work) {
        let idle = self
            .kinds
            .iter()
            .zip(&self.states)
            .all(|(kind, state)| matches!(kind, Kind::BestEffort) || state.pending_jobs == 0);
        if self.mode == Mode::High && idle {
            self.mode = Mode::Low;
            self.count_mode_change(work);
        }
    }

    fn count_mode_change(&mut self, work: &mut Work) {
        for (kind, state) in self.kinds.iter().zip(self.states.iter_mut()) {
            if let Kind::Sporadic(Sporadic {
                criticality: SporadicCriticality::Low,
                ..
            }) = kind
            {
                state.mode_changes += 1;
                work.reservations_touched = work.reservations_touched.saturating_add(1);
            }
        }
    }

    /// Processes what is due at `self.now`, chooses, and moves time forward event by event
    /// until `now`, so the selection left is the rules' for `now`. Moving past an instant
    /// closes it, as `close` asks for `now` itself: a pending switch to high mode happens.
    fn run_until(&mut self, now: Instant, close: bool, work: &mut Work) {
        loop {
            self.leave_high_mode_if_idle(work);
            self.replenish_due(work);
            self.choose(work);
            if self.now >= now && !close {
                return;
            }
            if self.switch_pending() {
                self.enter_high_mode(work);
                self.choose(work);
            }
            if self.now >= now {
                return;
            }
            let step = self.next_event().min(now);
            if step <= self.now {
                // Only when time saturates at its maximum.
                return;
            }
            self.charge(step, work);
            self.now = step;
        }
    }

    /// Section III: an active sporadic reservation without budget is replenished (budget `e`,
    /// EDF priority `t + p`) once its replenishment time has come. One still holding budget
    /// at that time is left alone until exhausted (see the module's readings: A1). An active
    /// constant-bandwidth server is recharged at its depletion: `c = Q`, `d = d + T`.
    fn replenish_due(&mut self, work: &mut Work) {
        let now = self.now;
        for ((kind, state), spr) in self
            .kinds
            .iter()
            .zip(self.states.iter_mut())
            .zip(self.spr.iter_mut())
        {
            if let Some(server) = spr.as_mut() {
                // Alg. 3 at the replenishment: an exhausted, active server's due entries
                // merge into the head, which restarts now.
                if state.pending_jobs > 0 && state.budget.is_zero() && server.queue.head().at <= now
                {
                    server.queue.activate(now, Instant::NEVER, work);
                    state.budget = server.available(now);
                    state.replenishments += 1;
                    work.replenishments_processed = work.replenishments_processed.saturating_add(1);
                    work.reservations_touched = work.reservations_touched.saturating_add(1);
                }
                continue;
            }
            if let Kind::Sporadic(s) = kind {
                if s.is_constant_bandwidth() {
                    if state.pending_jobs > 0 && state.budget.is_zero() {
                        state.budget = s.budget;
                        state.consumed = Duration::ZERO;
                        state.deadline = state.deadline.saturating_add(s.period);
                        state.replenishments += 1;
                        work.replenishments_processed =
                            work.replenishments_processed.saturating_add(1);
                        work.reservations_touched = work.reservations_touched.saturating_add(1);
                    }
                    continue;
                }
                if state.pending_jobs > 0 && state.budget.is_zero() && state.deadline <= now {
                    state.budget = s.budget;
                    state.consumed = Duration::ZERO;
                    state.previous_deadline = state.deadline;
                    state.deadline = now.saturating_add(s.period);
                    state.replenishments += 1;
                    work.replenishments_processed = work.replenishments_processed.saturating_add(1);
                    work.reservations_touched = work.reservations_touched.saturating_add(1);
                }
            }
        }
    }

    /// Charges the selection from `self.now` to `step`, no later than the next event. A2: a
    /// selected sporadic reservation drains at unit speed whether or not anything runs in it.
    fn charge(&mut self, step: Instant, work: &mut Work) {
        let elapsed = step.saturating_duration_since(self.now);
        for i in 0..self.kinds.len() {
            let state = self.states[i];
            if state.pending_jobs == 0 {
                continue;
            }
            if state.core.is_some() {
                self.states[i].drained = state.drained.saturating_add(elapsed);
            }
            match self.kinds[i] {
                Kind::Sporadic(s) if state.core.is_some() => {
                    let mut left = state.budget.saturating_sub(elapsed);
                    if let Some(server) = self.spr[i].as_mut() {
                        // Alg. 1, lines 1-4: the used budget consumes whole heads, each
                        // planned for t_head + p; a next head already due carries on at once
                        // (early replenishment, Alg. 2), else the server is exhausted.
                        server.used = server.used.saturating_add(elapsed);
                        server.queue.consume(&mut server.used, s.period, work);
                        left = server.available(step);
                    }
                    self.states[i].budget = left;
                    self.states[i].consumed = state.consumed.saturating_add(elapsed);
                    if left.is_zero() {
                        self.states[i].exhaustions += 1;
                        work.timeouts_processed = work.timeouts_processed.saturating_add(1);
                    }
                }
                Kind::Partition { first, count, .. } => {
                    let (end, start) =
                        slot_window(&self.slots[first..first + count], self.cycle, self.now);
                    // A slot's end is the partition's exhaustion, a slot's start its
                    // replenishment (section III: "replenished to B_t = t_2x - t_2x-1 at each
                    // point in time t = l H + t_2x-1").
                    if end.is_some_and(|end| end <= step) {
                        self.states[i].exhaustions += 1;
                        work.timeouts_processed = work.timeouts_processed.saturating_add(1);
                    }
                    if start <= step {
                        self.states[i].replenishments += 1;
                        work.timeouts_processed = work.timeouts_processed.saturating_add(1);
                    }
                }
                Kind::Sporadic(_) | Kind::BestEffort => {}
            }
        }
    }

    /// Section III: the (up to) `m_k` highest-priority active reservations with budget.
    /// Partitions take their own cores; the others fill the free cores by rank, each keeping
    /// its core while it stays selected.
    fn choose(&mut self, work: &mut Work) {
        let cores = self.cores.len();
        self.next_cores.iter_mut().for_each(|c| *c = None);
        self.chosen.iter_mut().for_each(|c| *c = false);
        let mut free = cores;
        for i in 0..self.kinds.len() {
            if let Kind::Partition { core, .. } = self.kinds[i] {
                if self.eligible(i) {
                    self.next_cores[core] = Some(ReservationId(i as u32));
                    self.chosen[i] = true;
                    free = free.saturating_sub(1);
                }
            }
        }
        // The `free` best of the rest, by rank.
        for _ in 0..free {
            let best = (0..self.kinds.len())
                .filter(|&i| !self.chosen[i] && self.eligible(i))
                .min_by_key(|&i| self.rank(i));
            match best {
                Some(i) => self.chosen[i] = true,
                None => break,
            }
        }
        // Those already on a core that is still free stay there.
        for i in 0..self.kinds.len() {
            if self.chosen[i] && !matches!(self.kinds[i], Kind::Partition { .. }) {
                if let Some(core) = self.states[i].core {
                    if self.next_cores[core].is_none() {
                        self.next_cores[core] = Some(ReservationId(i as u32));
                        continue;
                    }
                }
                self.states[i].core = None;
            }
        }
        // Newcomers take the lowest free cores.
        for i in 0..self.kinds.len() {
            let placed = self.states[i]
                .core
                .is_some_and(|c| self.next_cores[c] == Some(ReservationId(i as u32)));
            let partition = matches!(self.kinds[i], Kind::Partition { .. });
            if self.chosen[i] && !placed && !partition {
                if let Some(core) = self.next_cores.iter().position(Option::is_none) {
                    self.next_cores[core] = Some(ReservationId(i as u32));
                }
            }
        }
        for core in 0..cores {
            if self.cores[core] != self.next_cores[core] {
                work.queue_entries_moved = work.queue_entries_moved.saturating_add(1);
            }
        }
        core::mem::swap(&mut self.cores, &mut self.next_cores);
        for state in &mut self.states {
            state.core = None;
        }
        for (core, selected) in self.cores.iter().enumerate() {
            if let Some(r) = selected {
                self.states[r.index()].core = Some(core);
            }
        }
    }

    /// Checks the invariants stated at the top of the module; tests call it after every
    /// operation. `Err` names the first invariant found broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        if self.cores.len() != self.next_cores.len() || self.states.len() != self.kinds.len() {
            return Err("the selection has one entry per core");
        }
        let timed = self
            .wakes
            .iter()
            .filter(|at| **at != Instant::NEVER)
            .count();
        if self.wakes.len() != self.bindings.len()
            || self.thread_jobs.len() != self.bindings.len()
            || self.carried.len() != self.bindings.len()
            || timed != self.timed_wakes
        {
            return Err("the timed releases are counted");
        }
        if (self.carried.iter().zip(&self.wakes))
            .any(|(&carried, &at)| carried && at == Instant::NEVER)
        {
            return Err("a job carried over waits for its thread's timer");
        }
        if self.bindings.iter().any(|r| r.index() >= self.kinds.len()) {
            return Err("every thread is bound to a reservation");
        }
        if self.wakes.iter().any(|at| *at < self.now) {
            return Err("no timed release is left behind the clock");
        }
        let overreported = self.reported.len() != self.states.len()
            || self.reported_mode_switches > self.mode_switches
            || self.reported.iter().zip(&self.states).any(|(seen, state)| {
                seen.exhaustions > state.exhaustions
                    || seen.replenishments > state.replenishments
                    || seen.mode_changes > state.mode_changes
            });
        if overreported {
            return Err("notices never report more than the counters counted");
        }
        let mut selected = vec![false; self.kinds.len()];
        for (core, entry) in self.cores.iter().enumerate() {
            if let Some(r) = entry {
                let i = r.index();
                if i >= self.kinds.len() || selected[i] {
                    return Err("no reservation is selected twice");
                }
                selected[i] = true;
                if self.states[i].core != Some(core) {
                    return Err("a selected reservation records its core");
                }
                if !self.eligible(i) {
                    return Err("a selected reservation is active and has budget");
                }
                if let Kind::Partition { core: own, .. } = self.kinds[i] {
                    if own != core {
                        return Err("a selected partition is on its own core");
                    }
                }
            }
        }
        let busy = self
            .kinds
            .iter()
            .zip(&self.states)
            .any(|(kind, state)| !matches!(kind, Kind::BestEffort) && state.pending_jobs > 0);
        if self.mode == Mode::High && !busy {
            return Err("in high mode some partition or sporadic reservation is active");
        }
        let free = self.cores.iter().any(Option::is_none);
        let worst_selected = (0..self.kinds.len())
            .filter(|&i| selected[i] && !matches!(self.kinds[i], Kind::Partition { .. }))
            .map(|i| self.rank(i))
            .max();
        for (i, kind) in self.kinds.iter().enumerate() {
            let state = &self.states[i];
            if !selected[i] && state.core.is_some() {
                return Err("a reservation records a core only while selected");
            }
            match *kind {
                Kind::Partition { .. } => {
                    if self.eligible(i) && !selected[i] {
                        return Err("an active partition inside a slot is selected on its core");
                    }
                }
                Kind::Sporadic(s) => {
                    if state.budget > s.budget {
                        return Err("a sporadic budget is at most e");
                    }
                    if state.pending_jobs == 0 && !state.budget.is_zero() && !s.keeps_budget() {
                        return Err("an inactive sporadic reservation has no budget");
                    }
                    if let Some(server) = &self.spr[i] {
                        server.queue.check()?;
                        if server.queue.head().amount <= server.used {
                            return Err("an SPR server's used budget is less than its head");
                        }
                        if state.pending_jobs > 0 && state.budget != server.available(self.now) {
                            return Err("an SPR server's budget is its due head's rest");
                        }
                    }
                    if s.is_constant_bandwidth() && state.pending_jobs > 0 && state.budget.is_zero()
                    {
                        return Err("an active constant-bandwidth server is never without budget");
                    }
                    if let (Mode::Low, SporadicCriticality::High { low_budget }) =
                        (self.mode, s.criticality)
                    {
                        if state.pending_jobs > 0 && state.consumed > low_budget {
                            return Err("in low mode no high-criticality job exceeds e^L");
                        }
                    }
                    let next_replenishment = self.spr[i]
                        .as_ref()
                        .map_or(state.deadline, |server| server.queue.head().at);
                    if state.pending_jobs > 0
                        && state.budget.is_zero()
                        && next_replenishment <= self.now
                    {
                        return Err(
                            "an exhausted sporadic reservation waits for a future replenishment",
                        );
                    }
                }
                Kind::BestEffort => {}
            }
            if !matches!(kind, Kind::Partition { .. }) && !selected[i] && self.eligible(i) {
                if free {
                    return Err("no eligible reservation waits while a core is free");
                }
                if worst_selected.is_some_and(|worst| self.rank(i) < worst) {
                    return Err("no waiting reservation outranks a selected one");
                }
            }
        }
        Ok(())
    }
}

/// The clustered scheduler through the one cluster interface. The interface's [`TaskId`]s are
/// threads, each bound to a reservation (its scheduling context): thread `n` to
/// [`ReservationId`] `n`, or as [`ClusteredScheduler::with_threads`] binds them, several to
/// one. Decisions and notices name reservations: section III has the reservation, not a
/// task, be what the scheduler selects, and the platform runs a thread bound to it.
///
/// - `Activate` with [`Wake::NextJob`] releases a job of the thread's reservation
///   ([`release`]); the deadline it carries is ignored, as a reservation's priority is its
///   own rule's (section III). Activating an active reservation counts one more pending job.
/// - `Sleep` with [`Wake::NextJob`] completes the thread's current job, if it has one, as a
///   job of its reservation ([`complete`]); a finite `until` times the thread's next release
///   (the scheduler owns these timers, one per thread). A `Sleep` with [`Wake::SameJob`] is
///   refused ([`SchedulerError::Unsupported`]).
/// - `Block`, and `Activate` with [`Wake::SameJob`], of a thread with a pending job change
///   nothing but charge time up to `now`: a reservation whose job is pending stays active
///   whether or not its thread is ready (A2: "the scheduler is never told whether a client
///   is ready"). Of a thread without one they are refused ([`ClusterError::NotActive`]).
/// - `Timer` is [`advance`]: at the instant already reached, it closes the instant (a pending
///   switch to high mode happens).
/// - `Reconfigure` is refused: reservations are fixed at configuration.
/// - [`decide`](ClusterScheduler::decide) charges up to `now` without closing the instant
///   and writes the selection, core by core; the cluster's next event is core 0's timer
///   (one timer per cluster; the other cores' are disarmed).
///
/// Notices report the changes of the per-reservation counters since the last call through
/// this interface: [`exhaustions`] as [`Notice::BudgetExhausted`], [`replenishments`] as
/// [`Notice::Replenished`], [`mode_changes`] as [`Notice::ModeChange`], and
/// [`mode_switches`] as [`Notice::ModeSwitch`].
///
/// [`release`]: ClusteredScheduler::release
/// [`complete`]: ClusteredScheduler::complete
/// [`advance`]: ClusteredScheduler::advance
/// [`exhaustions`]: ClusteredScheduler::exhaustions
/// [`replenishments`]: ClusteredScheduler::replenishments
/// [`mode_changes`]: ClusteredScheduler::mode_changes
/// [`mode_switches`]: ClusteredScheduler::mode_switches
impl ClusterScheduler for ClusteredScheduler {
    fn name(&self) -> &'static str {
        "clustered-reservations"
    }

    fn core_count(&self) -> usize {
        self.cores.len()
    }

    fn notice_capacity(&self) -> usize {
        self.kinds.len()
    }

    fn handle(
        &mut self,
        now: Instant,
        event: Event,
        notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        if notices.capacity() < self.kinds.len() {
            return Err(SchedulerError::NoticeCapacity);
        }
        self.not_before(now)?;
        // Every check comes before the timed releases due by `now` are processed, so that a
        // refused call changes nothing.
        match event {
            Event::Sleep {
                wake: Wake::SameJob,
                ..
            }
            | Event::Reconfigure { .. }
            | Event::SetPriority { .. } => return Err(SchedulerError::Unsupported),
            Event::Sleep { task, until, .. } => {
                let (t, _) = self.thread(task)?;
                if until != Instant::NEVER && self.wakes[t] != Instant::NEVER {
                    return Err(ClusterError::AlreadySleeping.into());
                }
                // An untimed sleep completes a job: one must be pending, or due before `now`.
                if until == Instant::NEVER && self.thread_jobs[t] == 0 && self.wakes[t] >= now {
                    return Err(ClusterError::NotActive.into());
                }
            }
            Event::Activate {
                task,
                wake: Wake::SameJob,
            }
            | Event::Block { task } => {
                // Active now, or by a release timed before `now` (one timed at `now` is made
                // by the timer at `now`).
                let (t, _) = self.thread(task)?;
                if self.thread_jobs[t] == 0 && self.wakes[t] >= now {
                    return Err(ClusterError::NotActive.into());
                }
            }
            Event::Activate { task, .. } => {
                let (t, i) = self.thread(task)?;
                if self.states[i].pending_jobs == u32::MAX || self.thread_jobs[t] == u32::MAX {
                    return Err(ClusterError::TooManyJobs.into());
                }
            }
            Event::Timer => {}
        }
        // Releases timed before `now` come first, each at its own time, so budgets are
        // charged and replenished in time order up to it. Those timed at `now` itself are
        // made by the timer interrupt at `now`, which a kernel takes after the instant's
        // completions on every core (a completion and a release at one instant: the
        // completion first, as for every policy).
        self.release_due(now, matches!(event, Event::Timer), work);
        match event {
            Event::Activate {
                task,
                wake: Wake::NextJob { .. },
            } => {
                let (t, i) = self.thread(task)?;
                // An activation replaces the thread's own timed wake-up, if it had one; a job
                // carried over is pending already, and the activation starts it.
                let carried = core::mem::take(&mut self.carried[t]);
                self.disarm(t);
                if !carried {
                    self.release(now, ReservationId(i as u32), work)?;
                }
                self.thread_jobs[t] += 1;
            }
            Event::Activate {
                wake: Wake::SameJob,
                ..
            }
            | Event::Block { .. } => self.run_until(now, false, work),
            Event::Sleep {
                task,
                until,
                wake: Wake::NextJob { .. },
            } => {
                let (t, i) = self.thread(task)?;
                if self.thread_jobs[t] > 0 && until < now {
                    // The next job has been pending since `until`, before this one completed
                    // (an overrun): the reservation stays active (section III: "active if
                    // (one of) the contained tasks has a pending job") and keeps its budget.
                    // The thread takes that job at the timer at `now`, as below.
                    self.run_until(now, false, work);
                    self.carried[t] = true;
                } else if self.thread_jobs[t] > 0 {
                    // A thread with a pending job ends it; one without (its first release is
                    // ahead) only times that release.
                    self.complete(now, ReservationId(i as u32), work)?;
                }
                self.thread_jobs[t] = self.thread_jobs[t].saturating_sub(1);
                if until != Instant::NEVER {
                    // A job due by now is released (or, carried over, taken) by the timer at
                    // `now`, after the instant's completions on every core.
                    self.wakes[t] = until.max(now);
                    self.timed_wakes += 1;
                }
            }
            Event::Sleep { .. } | Event::Reconfigure { .. } | Event::SetPriority { .. } => {
                return Err(SchedulerError::Unsupported)
            }
            Event::Timer => self.advance(now, work)?,
        }
        self.report(notices);
        Ok(())
    }

    fn decide(
        &mut self,
        now: Instant,
        decisions: &mut [CoreDecision],
        notices: &mut Notices,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        if decisions.len() != self.cores.len() {
            return Err(SchedulerError::CoreCount);
        }
        if notices.capacity() < self.kinds.len() {
            return Err(SchedulerError::NoticeCapacity);
        }
        self.not_before(now)?;
        // A release timed at `now` waits for the timer at `now`, which the decision asks for.
        self.release_due(now, false, work);
        self.run_until(now, false, work);
        let next_event = self.next_event().min(self.next_wake(work));
        for (core, (decision, selected)) in decisions.iter_mut().zip(&self.cores).enumerate() {
            *decision = CoreDecision {
                next: selected.map(|r| TaskId(r.0)),
                timer: (core == 0 && next_event != Instant::NEVER).then_some(next_event),
            };
        }
        self.report(notices);
        Ok(())
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        ClusteredScheduler::check_invariants(self)
    }

    /// A thread's budget is its reservation's at `now`, as [`ClusteredScheduler::budget_at`]
    /// gives it.
    fn remaining_budget(&self, thread: TaskId, now: Instant) -> Option<Duration> {
        self.budget_at(self.binding(thread)?, now)
    }
}

impl ClusteredScheduler {
    /// Releases, in time order (ties by thread id), every job whose timed release is before
    /// `now`, or at it too when `inclusive` (the timer at `now`), each at its own time, as a
    /// job of its thread's reservation. Each release found costs a scan of every thread,
    /// counted as examined timeouts: clusters are small, and the work is honest.
    fn release_due(&mut self, now: Instant, inclusive: bool, work: &mut Work) {
        while self.timed_wakes > 0 {
            work.timeouts_examined = work
                .timeouts_examined
                .saturating_add(self.wakes.len() as u32);
            let Some((at, i)) = self
                .wakes
                .iter()
                .enumerate()
                .filter(|(_, at)| **at < now || (inclusive && **at == now))
                .map(|(i, at)| (*at, i))
                .min()
            else {
                return;
            };
            self.disarm(i);
            work.timeouts_processed = work.timeouts_processed.saturating_add(1);
            if core::mem::take(&mut self.carried[i]) {
                // Pending in its reservation since its plan: the thread takes it.
                self.thread_jobs[i] = self.thread_jobs[i].saturating_add(1);
                continue;
            }
            // Cannot fail: the binding is known, `at` is not before the scheduler's clock (it
            // was timed after it), and a reservation counts fewer than `u32::MAX` jobs.
            let released = self.release(at.max(self.now), self.bindings[i], work);
            debug_assert!(released.is_ok(), "a timed release is always accepted");
            if released.is_ok() {
                self.thread_jobs[i] = self.thread_jobs[i].saturating_add(1);
            }
        }
    }

    /// The earliest timed release ([`Instant::NEVER`] if none).
    fn next_wake(&self, work: &mut Work) -> Instant {
        if self.timed_wakes == 0 {
            return Instant::NEVER;
        }
        work.timeouts_examined = work
            .timeouts_examined
            .saturating_add(self.wakes.len() as u32);
        self.wakes.iter().copied().min().unwrap_or(Instant::NEVER)
    }

    /// Forgets thread `i`'s timed release, if it had one.
    fn disarm(&mut self, i: usize) {
        if self.wakes[i] != Instant::NEVER {
            self.wakes[i] = Instant::NEVER;
            self.timed_wakes -= 1;
        }
    }
}

impl ClusteredScheduler {
    /// Adds to `notices` every counter change since the last report. The caller has checked
    /// that `notices` holds every reservation's id, so no notice is refused.
    fn report(&mut self, notices: &mut Notices) {
        for (i, (state, seen)) in self.states.iter().zip(&mut self.reported).enumerate() {
            let task = TaskId(i as u32);
            let now = Counters {
                exhaustions: state.exhaustions,
                replenishments: state.replenishments,
                mode_changes: state.mode_changes,
            };
            if now == *seen {
                continue;
            }
            let changes = [
                (
                    now.exhaustions,
                    seen.exhaustions,
                    Notice::BudgetExhausted { task },
                ),
                (
                    now.replenishments,
                    seen.replenishments,
                    Notice::Replenished { task },
                ),
                (
                    now.mode_changes,
                    seen.mode_changes,
                    Notice::ModeChange { task },
                ),
            ];
            for (count, reported, notice) in changes {
                if count != reported {
                    let recorded = notices.record(notice);
                    debug_assert!(recorded.is_ok(), "notice capacity checked by the caller");
                }
            }
            *seen = now;
        }
        if self.mode_switches != self.reported_mode_switches {
            let recorded = notices.record(Notice::ModeSwitch);
            debug_assert!(recorded.is_ok(), "a mode switch needs no capacity");
            self.reported_mode_switches = self.mode_switches;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;
    use proptest::prelude::*;

    fn at(n: u64) -> Instant {
        Instant::from_nanos(n)
    }

    fn d(n: u64) -> Duration {
        Duration::from_nanos(n)
    }

    fn r(i: u32) -> ReservationId {
        ReservationId(i)
    }

    fn sporadic(budget: u64, period: u64) -> ReservationKind {
        ReservationKind::Sporadic(Sporadic::new(d(budget), d(period)))
    }

    fn partition(core: usize, slots: &[(u64, u64)]) -> ReservationKind {
        ReservationKind::TimePartition {
            core,
            priority: Priority(1),
            slots: slots.iter().map(|&(s, e)| Slot::new(d(s), d(e))).collect(),
        }
    }

    fn scheduler(
        cores: usize,
        cycle: u64,
        order: SporadicOrder,
        kinds: Vec<ReservationKind>,
    ) -> ClusteredScheduler {
        ClusteredScheduler::new(&ClusterConfig {
            cores,
            cycle: d(cycle),
            order,
            reservations: kinds,
        })
        .unwrap()
    }

    /// Advances to `t` and returns the selection and the next event.
    fn step(s: &mut ClusteredScheduler, t: u64) -> (Vec<Option<ReservationId>>, Instant) {
        let mut w = Work::default();
        let selection = s.select(at(t), &mut w).unwrap();
        let out = (selection.cores.to_vec(), selection.next_event);
        s.check_invariants().unwrap();
        out
    }

    /// Drives `s` through [`ClusterScheduler`] with a `Timer` at `t` then a decision, as
    /// [`step`] does directly; returns the selection, the next event and the notices.
    fn step_through_trait(
        s: &mut ClusteredScheduler,
        t: u64,
    ) -> (Vec<Option<ReservationId>>, Instant, Vec<Notice>) {
        let mut w = Work::default();
        let mut notices = Notices::with_capacity(s.notice_capacity());
        s.handle(at(t), Event::Timer, &mut notices, &mut w).unwrap();
        let mut decisions = alloc::vec![CoreDecision::default(); s.core_count()];
        s.decide(at(t), &mut decisions, &mut notices, &mut w)
            .unwrap();
        ClusterScheduler::check_invariants(s).unwrap();
        let cores = decisions
            .iter()
            .map(|c| c.next.map(|task| r(task.0)))
            .collect();
        let next = decisions[0].timer.unwrap_or(Instant::NEVER);
        (cores, next, notices.iter().collect())
    }

    fn through_trait(s: &mut ClusteredScheduler, t: u64, event: Event) -> Vec<Notice> {
        let mut notices = Notices::with_capacity(s.notice_capacity());
        s.handle(at(t), event, &mut notices, &mut Work::default())
            .unwrap();
        notices.iter().collect()
    }

    fn release_event(i: u32) -> Event {
        Event::Activate {
            task: TaskId(i),
            wake: Wake::NextJob {
                deadline: Instant::NEVER,
            },
        }
    }

    /// Thread `i` ends its job, if it has one, and times its next release at `until`.
    fn sleep_until(i: u32, until: u64) -> Event {
        Event::Sleep {
            task: TaskId(i),
            until: at(until),
            wake: Wake::NextJob {
                deadline: Instant::NEVER,
            },
        }
    }

    fn complete_event(i: u32) -> Event {
        Event::Sleep {
            task: TaskId(i),
            until: Instant::NEVER,
            wake: Wake::NextJob {
                deadline: Instant::NEVER,
            },
        }
    }

    /// The EDF timeline above, worked by hand there, through [`ClusterScheduler`]: the same
    /// selections and next events as the direct calls, step by step, and the notices are the
    /// exhaustions and replenishments that timeline lists, each at the step it happens.
    #[test]
    fn the_edf_timeline_through_the_cluster_interface_equals_the_direct_calls() {
        let kinds = alloc::vec![sporadic(2, 5), sporadic(3, 10), ReservationKind::BestEffort];
        let mut direct = scheduler(1, 0, SporadicOrder::EarliestDeadlineFirst, kinds.clone());
        let mut s = scheduler(1, 0, SporadicOrder::EarliestDeadlineFirst, kinds);
        let mut w = Work::default();
        let exhausted = |i| Notice::BudgetExhausted { task: TaskId(i) };
        let replenished = |i| Notice::Replenished { task: TaskId(i) };
        let mut released = Vec::new();
        for i in 0..3 {
            direct.release(at(0), r(i), &mut w).unwrap();
            released.extend(through_trait(&mut s, 0, release_event(i)));
        }
        // R0 and R1 get their budgets at their releases; best effort has none to get.
        assert_eq!(released, [replenished(0), replenished(1)]);
        let lockstep = |direct: &mut ClusteredScheduler,
                        s: &mut ClusteredScheduler,
                        t: u64,
                        notices: &[Notice]| {
            let (cores, next) = step(direct, t);
            assert_eq!(
                step_through_trait(s, t),
                (cores, next, notices.to_vec()),
                "at {t}"
            );
        };
        lockstep(&mut direct, &mut s, 0, &[]);
        lockstep(&mut direct, &mut s, 2, &[exhausted(0)]);
        lockstep(&mut direct, &mut s, 5, &[replenished(0), exhausted(1)]);
        lockstep(&mut direct, &mut s, 7, &[exhausted(0)]);
        lockstep(&mut direct, &mut s, 10, &[replenished(0), replenished(1)]);
        direct.complete(at(11), r(0), &mut w).unwrap();
        assert_eq!(through_trait(&mut s, 11, complete_event(0)), []);
        lockstep(&mut direct, &mut s, 11, &[]);
        direct.release(at(13), r(0), &mut w).unwrap();
        assert_eq!(through_trait(&mut s, 13, release_event(0)), []);
        lockstep(&mut direct, &mut s, 13, &[]);
        lockstep(&mut direct, &mut s, 14, &[exhausted(1)]);
        lockstep(&mut direct, &mut s, 15, &[replenished(0)]);
        assert_eq!((s.replenishments(r(0)), s.exhaustions(r(0))), (4, 2));
    }

    /// Vestal's switch through [`ClusterScheduler`] (the timeline of the test above, by hand):
    /// closing t=2 with a `Timer` switches to high mode and demotes L (R0); L's restoration at
    /// the idle instant 6 is a mode change too.
    #[test]
    fn a_mode_switch_through_the_cluster_interface_is_noticed() {
        let mut s = vestal();
        let replenished = |i| Notice::Replenished { task: TaskId(i) };
        assert_eq!(through_trait(&mut s, 0, release_event(1)), [replenished(1)]);
        assert_eq!(through_trait(&mut s, 0, release_event(2)), []);
        assert_eq!(
            step_through_trait(&mut s, 0),
            (alloc::vec![Some(r(1))], at(2), alloc::vec![])
        );
        // Moving to 2 does not close it: the switch waits, the next event is now.
        assert_eq!(
            step_through_trait(&mut s, 2),
            (alloc::vec![Some(r(1))], at(2), alloc::vec![])
        );
        let change = Notice::ModeChange { task: TaskId(0) };
        assert_eq!(
            step_through_trait(&mut s, 2),
            (
                alloc::vec![Some(r(1))],
                at(8),
                alloc::vec![Notice::ModeSwitch, change]
            )
        );
        // L released at 3 gets its budget (a replenishment) while demoted.
        assert_eq!(through_trait(&mut s, 3, release_event(0)), [replenished(0)]);
        assert_eq!(through_trait(&mut s, 5, complete_event(1)), []);
        assert_eq!(through_trait(&mut s, 6, complete_event(0)), [change]);
        assert_eq!(s.mode(), Mode::Low);
    }

    /// A timed sleep hands the next release to the scheduler, which owns the timer: worked
    /// by hand for `(2, 5)` and `(1, 5)` under fixed priority on one core.
    /// - 0: both time their first release (A at 3, B at 3): nothing runs, the timer is 3;
    /// - 3: the timer releases both, in id order; A (priority 2) runs, its budget out at 5;
    /// - 4: A's job ends, its next release timed at 8; B runs until its budget is out at 5;
    /// - 5: B exhausted; it is replenished `p` after its budget was set, at 8; A's release
    ///   is also at 8: the decision at 5 asks for the timer at 8, and a decision at 8 without
    ///   that timer releases nothing (the timer's interrupt makes the releases of its
    ///   instant, after the instant's completions); at the timer A runs first.
    #[test]
    fn a_timed_sleep_times_the_next_release() {
        let high = Sporadic::new(d(2), d(5)).with_priority(Priority(2));
        let low = Sporadic::new(d(1), d(5)).with_priority(Priority(1));
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![
                ReservationKind::Sporadic(high),
                ReservationKind::Sporadic(low)
            ],
        );
        let sleep = |i: u32, until: u64| Event::Sleep {
            task: TaskId(i),
            until: at(until),
            wake: Wake::NextJob {
                deadline: Instant::NEVER,
            },
        };
        let decide = |s: &mut ClusteredScheduler, t: u64| {
            let mut decisions = [CoreDecision::default()];
            let mut notices = Notices::with_capacity(2);
            s.decide(at(t), &mut decisions, &mut notices, &mut Work::default())
                .unwrap();
            ClusterScheduler::check_invariants(s).unwrap();
            (decisions[0].next.map(|t| t.0), decisions[0].timer)
        };
        through_trait(&mut s, 0, sleep(0, 3));
        through_trait(&mut s, 0, sleep(1, 3));
        assert_eq!(decide(&mut s, 0), (None, Some(at(3))));
        through_trait(&mut s, 3, Event::Timer);
        assert_eq!(s.pending_jobs(r(0)), 1);
        assert_eq!(s.pending_jobs(r(1)), 1);
        assert_eq!(decide(&mut s, 3), (Some(0), Some(at(5))));
        through_trait(&mut s, 4, sleep(0, 8));
        assert_eq!(s.pending_jobs(r(0)), 0);
        // Asleep already: a second timed sleep is refused and changes nothing.
        let before = format!("{s:?}");
        let mut notices = Notices::with_capacity(2);
        assert_eq!(
            s.handle(at(4), sleep(0, 9), &mut notices, &mut Work::default()),
            Err(ClusterError::AlreadySleeping.into())
        );
        assert_eq!(format!("{s:?}"), before);
        assert_eq!(decide(&mut s, 4), (Some(1), Some(at(5))));
        through_trait(&mut s, 5, Event::Timer);
        assert_eq!(decide(&mut s, 5), (None, Some(at(8))));
        assert_eq!(decide(&mut s, 8), (Some(1), Some(at(8))));
        assert_eq!(s.pending_jobs(r(0)), 0);
        let mut work = Work::default();
        s.handle(at(8), Event::Timer, &mut notices, &mut work)
            .unwrap();
        assert_eq!(work.timeouts_processed, 1);
        assert_eq!(s.pending_jobs(r(0)), 1);
        assert_eq!(decide(&mut s, 8), (Some(0), Some(at(10))));
    }

    /// A sleep timed at `now` (the next release is due as this job completes) releases the
    /// next job at the timer at `now`, which the decision asks for: after the instant's
    /// other completions. An activation cancels a timed release.
    #[test]
    fn a_sleep_timed_now_releases_at_the_timer_and_an_activation_cancels_it() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![sporadic(2, 5)],
        );
        through_trait(&mut s, 0, release_event(0));
        let sleep = |until: u64| sleep_until(0, until);
        through_trait(&mut s, 1, sleep(1));
        assert_eq!(s.pending_jobs(r(0)), 0);
        let mut decisions = [CoreDecision::default()];
        let mut notices = Notices::with_capacity(1);
        s.decide(at(1), &mut decisions, &mut notices, &mut Work::default())
            .unwrap();
        assert_eq!(
            decisions[0],
            CoreDecision {
                next: None,
                timer: Some(at(1))
            }
        );
        through_trait(&mut s, 1, Event::Timer);
        assert_eq!(s.pending_jobs(r(0)), 1);
        through_trait(&mut s, 1, sleep(7));
        assert_eq!(s.pending_jobs(r(0)), 0);
        through_trait(&mut s, 2, release_event(0));
        assert_eq!(s.pending_jobs(r(0)), 1);
        ClusterScheduler::check_invariants(&s).unwrap();
        // The timer at 7 is gone: nothing more is released there.
        through_trait(&mut s, 9, Event::Timer);
        assert_eq!(s.pending_jobs(r(0)), 1);
    }

    /// A sleep timed before `now` (an overrun: the next job has been pending since then) does
    /// not complete the reservation's last job: a reservation (2 per 5) released at 0 whose
    /// job runs 0..1 and sleeps until 0 stays active with its 1 left. Its thread takes the
    /// job at the timer at `now`, which the decision asks for (after the instant's other
    /// completions, as a release then would be); then the budget runs out at 2. Timed at 1
    /// instead, the job completes and the budget goes with it (the test above).
    #[test]
    fn a_sleep_timed_before_now_keeps_the_reservation_active_with_its_budget() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![sporadic(2, 5)],
        );
        through_trait(&mut s, 0, release_event(0));
        through_trait(&mut s, 1, sleep_until(0, 0));
        assert_eq!(s.pending_jobs(r(0)), 1);
        assert!(!s.thread_is_pending(TaskId(0)));
        assert_eq!(s.budget_at(r(0), at(1)), Some(Duration::from_nanos(1)));
        let decide = |s: &mut ClusteredScheduler| {
            let mut decisions = [CoreDecision::default()];
            let mut notices = Notices::with_capacity(1);
            s.decide(at(1), &mut decisions, &mut notices, &mut Work::default())
                .unwrap();
            decisions[0]
        };
        assert_eq!(
            decide(&mut s),
            CoreDecision {
                next: Some(TaskId(0)),
                timer: Some(at(1))
            }
        );
        through_trait(&mut s, 1, Event::Timer);
        assert!(s.thread_is_pending(TaskId(0)));
        assert_eq!(s.pending_jobs(r(0)), 1);
        assert_eq!(s.budget_at(r(0), at(1)), Some(Duration::from_nanos(1)));
        assert_eq!(
            decide(&mut s),
            CoreDecision {
                next: Some(TaskId(0)),
                timer: Some(at(2))
            }
        );
        ClusterScheduler::check_invariants(&s).unwrap();
    }

    /// Two threads bound to one sporadic reservation (2 per 10) share its budget: the
    /// reservation is active while either has a pending job (section III), and its budget
    /// runs out at 2 whichever thread ran, with thread 1 still pending; at 10 it is back.
    /// Each thread's timed release is its own.
    #[test]
    fn threads_bound_to_one_reservation_share_its_budget() {
        let config = ClusterConfig {
            cores: 1,
            cycle: d(0),
            order: SporadicOrder::FixedPriority,
            reservations: alloc::vec![sporadic(2, 10)],
        };
        let mut s = ClusteredScheduler::with_threads(&config, &[r(0), r(0)]).unwrap();
        assert_eq!((s.thread_count(), s.binding(TaskId(1))), (2, Some(r(0))));
        through_trait(&mut s, 0, release_event(0));
        through_trait(&mut s, 0, release_event(1));
        assert_eq!(s.pending_jobs(r(0)), 2);
        assert!(s.thread_is_pending(TaskId(0)) && s.thread_is_pending(TaskId(1)));
        let mut decisions = [CoreDecision::default()];
        let mut notices = Notices::with_capacity(1);
        s.decide(at(0), &mut decisions, &mut notices, &mut Work::default())
            .unwrap();
        // The reservation is selected, its budget out at 2.
        assert_eq!(decisions[0].next, Some(TaskId(0)));
        assert_eq!(decisions[0].timer, Some(at(2)));
        // Thread 0's job ends at 1; thread 1's keeps the reservation active.
        through_trait(&mut s, 1, complete_event(0));
        assert!(!s.thread_is_pending(TaskId(0)));
        assert_eq!(s.pending_jobs(r(0)), 1);
        assert_eq!(s.budget(r(0)), Some(d(1)));
        assert_eq!(
            through_trait(&mut s, 2, Event::Timer),
            [Notice::BudgetExhausted { task: TaskId(0) }]
        );
        assert!(!s.is_eligible(r(0)) && s.thread_is_pending(TaskId(1)));
        // Thread 0 times its next release at 5: a job of the same reservation, still
        // without budget until 10.
        through_trait(&mut s, 3, sleep_until(0, 5));
        through_trait(&mut s, 5, Event::Timer);
        assert_eq!(s.pending_jobs(r(0)), 2);
        assert!(s.thread_is_pending(TaskId(0)));
        assert!(!s.is_eligible(r(0)));
        assert_eq!(
            through_trait(&mut s, 10, Event::Timer),
            [Notice::Replenished { task: TaskId(0) }]
        );
        assert!(s.is_eligible(r(0)));
        // A thread without a pending job cannot block; one bound nowhere is unknown.
        through_trait(&mut s, 10, complete_event(1));
        let mut notices = Notices::with_capacity(1);
        let block = Event::Block { task: TaskId(1) };
        assert_eq!(
            s.handle(at(10), block, &mut notices, &mut Work::default()),
            Err(ClusterError::NotActive.into())
        );
        let unknown = release_event(2);
        assert_eq!(
            s.handle(at(10), unknown, &mut notices, &mut Work::default()),
            Err(ClusterError::UnknownReservation.into())
        );
        ClusterScheduler::check_invariants(&s).unwrap();
    }

    /// A binding to a reservation the configuration does not have is refused, naming it.
    #[test]
    fn a_binding_to_an_unknown_reservation_is_refused() {
        let config = ClusterConfig {
            cores: 1,
            cycle: d(0),
            order: SporadicOrder::FixedPriority,
            reservations: alloc::vec![sporadic(2, 10)],
        };
        let refused = ClusteredScheduler::with_threads(&config, &[r(0), r(1)]).unwrap_err();
        assert_eq!(refused.error, ClusterError::UnknownReservation);
        assert_eq!(refused.reservation, Some(r(1)));
    }

    /// Events the clustered scheduler has no meaning for are refused and change nothing.
    #[test]
    fn unsupported_events_and_small_records_are_refused() {
        let mut s = scheduler(
            2,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![sporadic(2, 5)],
        );
        let before = s.clone();
        let mut w = Work::default();
        let mut notices = Notices::with_capacity(1);
        let self_suspension = Event::Sleep {
            task: TaskId(0),
            until: at(4),
            wake: Wake::SameJob,
        };
        let refusals = [
            (self_suspension, SchedulerError::Unsupported),
            (
                Event::SetPriority {
                    task: TaskId(0),
                    priority: crate::Priority(3),
                },
                SchedulerError::Unsupported,
            ),
            (
                Event::Reconfigure {
                    task: TaskId(0),
                    change: crate::ContextChange {
                        budget: d(1),
                        period: d(5),
                        load: None,
                    },
                },
                SchedulerError::Unsupported,
            ),
            (
                Event::Block { task: TaskId(0) },
                ClusterError::NotActive.into(),
            ),
            (complete_event(0), ClusterError::NotActive.into()),
            (release_event(1), ClusterError::UnknownReservation.into()),
        ];
        for (event, error) in refusals {
            assert_eq!(s.handle(at(1), event, &mut notices, &mut w), Err(error));
        }
        let mut small = Notices::with_capacity(0);
        assert_eq!(
            s.handle(at(1), release_event(0), &mut small, &mut w),
            Err(SchedulerError::NoticeCapacity)
        );
        let mut one = [CoreDecision::default()];
        assert_eq!(
            s.decide(at(1), &mut one, &mut notices, &mut w),
            Err(SchedulerError::CoreCount)
        );
        assert_eq!(format!("{s:?}"), format!("{before:?}"));
        assert!(notices.is_empty());
    }

    /// One core, EDF: R0 a constant-bandwidth server (Q 2, T 10), R1 sporadic (e 5, p 20),
    /// both released at 0. Worked by hand from the CBS rules.
    #[test]
    fn a_constant_bandwidth_server_postpones_its_deadline_and_keeps_it_while_idle() {
        let server =
            ReservationKind::Sporadic(Sporadic::new(d(2), d(10)).with_constant_bandwidth());
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::EarliestDeadlineFirst,
            alloc::vec![server, sporadic(5, 20)],
        );
        let mut w = Work::default();
        s.release(at(0), r(0), &mut w).unwrap();
        s.release(at(0), r(1), &mut w).unwrap();
        // d0 = 10 < d1 = 20: R0 runs until its budget of 2 is gone.
        assert_eq!(step(&mut s, 0), (alloc::vec![Some(r(0))], at(2)));
        // Depleted at 2: d0 = 10 + 10 = 20, c0 = 2 at once; the tie with R1 goes to R0.
        assert_eq!(step(&mut s, 2), (alloc::vec![Some(r(0))], at(4)));
        assert_eq!(s.deadline(r(0)), Some(at(20)));
        assert_eq!((s.exhaustions(r(0)), s.replenishments(r(0))), (1, 2));
        // Depleted again at 4: d0 = 30 > 20, so R1 runs for its 5.
        assert_eq!(step(&mut s, 4), (alloc::vec![Some(r(1))], at(9)));
        assert_eq!(s.deadline(r(0)), Some(at(30)));
        // R0's job completes while it waits: it keeps c = 2, d = 30.
        s.complete(at(4), r(0), &mut w).unwrap();
        assert_eq!(s.budget(r(0)), Some(d(2)));
        // A job at 6: c T = 20 < (d - r) Q = 24 * 2 = 48, so (c, d) stay.
        step(&mut s, 6);
        s.release(at(6), r(0), &mut w).unwrap();
        assert_eq!(s.deadline(r(0)), Some(at(30)));
        assert_eq!(s.budget(r(0)), Some(d(2)));
        // R1 is exhausted at 9 and waits for 20; R0 runs [9, 10) and completes with c = 1.
        assert_eq!(step(&mut s, 9), (alloc::vec![Some(r(0))], at(11)));
        step(&mut s, 10);
        s.complete(at(10), r(0), &mut w).unwrap();
        assert_eq!(s.budget(r(0)), Some(d(1)));
        // R1: replenished at 20 (d1 = 40), runs [20, 25), waits for 40.
        assert_eq!(step(&mut s, 20), (alloc::vec![Some(r(1))], at(25)));
        assert_eq!(step(&mut s, 25), (alloc::vec![None], at(40)));
        // A job at 28: c T = 10 >= (30 - 28) * 2 = 4, so the server starts afresh: d = 38,
        // c = 2.
        s.release(at(28), r(0), &mut w).unwrap();
        assert_eq!(s.deadline(r(0)), Some(at(38)));
        assert_eq!(s.budget(r(0)), Some(d(2)));
        assert_eq!(step(&mut s, 28), (alloc::vec![Some(r(0))], at(30)));
    }

    /// An SPR server (e 2, p 10, S = 2) on one core, worked by the SPR paper's algorithms:
    /// released at 0, it runs 1 and completes (Alg. 1, lines 10-13: the used 1 is planned for
    /// 0 + 10, the head keeps 1). Released again at 3 (Alg. 3: the head restarts at 3), it
    /// never completes: it runs [3, 4) and is exhausted (the head's 1 is planned for 13), is
    /// replenished at 10 with the entry (10, 1), runs [10, 11) (planned for 20), is
    /// replenished at 13, runs [13, 14), and so on: never more than 2 in any 10.
    #[test]
    fn an_spr_server_returns_each_chunk_a_period_after_its_activation() {
        let server = ReservationKind::Sporadic(Sporadic::new(d(2), d(10)).with_spr(2));
        let mut s = scheduler(1, 0, SporadicOrder::FixedPriority, alloc::vec![server]);
        let mut w = Work::default();
        s.release(at(0), r(0), &mut w).unwrap();
        assert_eq!(step(&mut s, 0), (alloc::vec![Some(r(0))], at(2)));
        step(&mut s, 1);
        s.complete(at(1), r(0), &mut w).unwrap();
        // Inactive, it keeps the head's rest.
        assert_eq!(s.budget(r(0)), Some(d(1)));
        assert!(s.check_invariants().is_ok());
        step(&mut s, 3);
        s.release(at(3), r(0), &mut w).unwrap();
        assert_eq!(step(&mut s, 3), (alloc::vec![Some(r(0))], at(4)));
        assert_eq!(step(&mut s, 4), (alloc::vec![None], at(10)));
        assert_eq!((s.exhaustions(r(0)), s.replenishments(r(0))), (1, 0));
        assert_eq!(step(&mut s, 10), (alloc::vec![Some(r(0))], at(11)));
        assert_eq!(step(&mut s, 11), (alloc::vec![None], at(13)));
        assert_eq!(step(&mut s, 13), (alloc::vec![Some(r(0))], at(14)));
        assert_eq!(step(&mut s, 14), (alloc::vec![None], at(20)));
        assert_eq!(step(&mut s, 20), (alloc::vec![Some(r(0))], at(21)));
        // Exhausted at 4, 11 and 14; replenished at 10, 13 and 20.
        assert_eq!((s.exhaustions(r(0)), s.replenishments(r(0))), (3, 3));
        assert!(s.check_invariants().is_ok());
    }

    /// SPR is a fixed-priority server of low criticality, with 1 to 256 queue entries.
    #[test]
    fn spr_servers_are_checked() {
        let refusal = |order, server: Sporadic| {
            ClusteredScheduler::new(&ClusterConfig {
                cores: 1,
                cycle: d(0),
                order,
                reservations: alloc::vec![ReservationKind::Sporadic(server)],
            })
            .err()
            .map(|e| e.error)
        };
        let spr = Sporadic::new(d(2), d(10)).with_spr(4);
        assert_eq!(refusal(SporadicOrder::FixedPriority, spr), None);
        assert_eq!(
            refusal(SporadicOrder::EarliestDeadlineFirst, spr),
            Some(ClusterError::SprNeedsFixedPriority)
        );
        assert_eq!(
            refusal(
                SporadicOrder::FixedPriority,
                spr.with_high_criticality(d(1))
            ),
            Some(ClusterError::HighCriticalityServer)
        );
        for slots in [0, MAX_SPR_SLOTS + 1] {
            assert_eq!(
                refusal(SporadicOrder::FixedPriority, spr.with_spr(slots)),
                Some(ClusterError::InvalidSprSlots)
            );
        }
    }

    #[test]
    fn a_constant_bandwidth_server_of_high_criticality_is_refused() {
        let server = Sporadic::new(d(2), d(10))
            .with_constant_bandwidth()
            .with_high_criticality(d(1));
        let refused = ClusteredScheduler::new(&ClusterConfig {
            cores: 1,
            cycle: d(0),
            order: SporadicOrder::EarliestDeadlineFirst,
            reservations: alloc::vec![sporadic(1, 5), ReservationKind::Sporadic(server)],
        });
        assert_eq!(
            refused.err(),
            Some(ConfigurationError {
                error: ClusterError::HighCriticalityServer,
                reservation: Some(r(1)),
            })
        );
    }

    /// One core, EDF: R0 = (e 2, p 5), R1 = (e 3, p 10), R2 best effort, all released at 0.
    #[test]
    fn edf_timeline_with_exhaustion_discard_and_early_release() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::EarliestDeadlineFirst,
            alloc::vec![sporadic(2, 5), sporadic(3, 10), ReservationKind::BestEffort],
        );
        let mut w = Work::default();
        for i in 0..3 {
            s.release(at(0), r(i), &mut w).unwrap();
        }
        // t=0: R0 B=2 D=0+5=5, R1 B=3 D=0+10=10; R0 first (5 < 10), exhausts at 0+2 = 2.
        assert_eq!(
            (s.deadline(r(0)), s.deadline(r(1))),
            (Some(at(5)), Some(at(10)))
        );
        assert_eq!(step(&mut s, 0), (alloc::vec![Some(r(0))], at(2)));
        // t=2: R0 exhausted, next replenishment at 5; R1 runs, exhausts at 2+3 = 5.
        assert_eq!(step(&mut s, 2), (alloc::vec![Some(r(1))], at(5)));
        assert_eq!((s.exhaustions(r(0)), s.budget(r(1))), (1, Some(d(3))));
        // t=5: R1 exhausted (due 10); R0 replenished: B=2, D=5+5=10; exhausts at 7.
        assert_eq!(step(&mut s, 5), (alloc::vec![Some(r(0))], at(7)));
        assert_eq!(s.deadline(r(0)), Some(at(10)));
        // t=7: both exhausted, both due at 10: the best-effort reservation runs.
        assert_eq!(step(&mut s, 7), (alloc::vec![Some(r(2))], at(10)));
        // t=10: R0 D=15, R1 D=20, both full: R0 first.
        assert_eq!(step(&mut s, 10), (alloc::vec![Some(r(0))], at(12)));
        // R0 completes at 11 with 2-1 = 1 left, discarded; R1 runs 11..11+3 = 14.
        s.complete(at(11), r(0), &mut w).unwrap();
        assert_eq!(s.budget(r(0)), Some(Duration::ZERO));
        assert_eq!(step(&mut s, 11), (alloc::vec![Some(r(1))], at(14)));
        // R0 released at 13, before its replenishment time 15: active, no budget yet.
        s.release(at(13), r(0), &mut w).unwrap();
        assert_eq!(step(&mut s, 13), (alloc::vec![Some(r(1))], at(14)));
        // t=14: R1 exhausted (due 20): best effort until R0's replenishment at 15.
        assert_eq!(step(&mut s, 14), (alloc::vec![Some(r(2))], at(15)));
        // t=15: R0 B=2 D=15+5=20, ties with R1's 20, but R1 has no budget.
        assert_eq!(step(&mut s, 15), (alloc::vec![Some(r(0))], at(17)));
        // R0 replenished at 0, 5, 10, 15 and exhausted at 2, 7; R1 at 0, 10 and 5, 14.
        assert_eq!((s.replenishments(r(0)), s.exhaustions(r(0))), (4, 2));
        assert_eq!((s.replenishments(r(1)), s.exhaustions(r(1))), (2, 2));
    }

    /// Two cores, fixed priorities, cycle 10: P = partition on core 0 in [0,4) and [6,8);
    /// A = (3, 10) priority 10; B = (5, 10) priority 5; C best effort. All released at 0.
    #[test]
    fn fixed_priority_timeline_with_a_partition_on_two_cores() {
        let mut s = scheduler(
            2,
            10,
            SporadicOrder::FixedPriority,
            alloc::vec![
                partition(0, &[(6, 8), (0, 4)]),
                ReservationKind::Sporadic(Sporadic::new(d(3), d(10)).with_priority(Priority(10))),
                ReservationKind::Sporadic(Sporadic::new(d(5), d(10)).with_priority(Priority(5))),
                ReservationKind::BestEffort,
            ],
        );
        let mut w = Work::default();
        for i in 0..4 {
            s.release(at(0), r(i), &mut w).unwrap();
        }
        // t=0: P on core 0 until 4; A beats B for core 1 and exhausts at 0+3 = 3.
        assert_eq!(
            step(&mut s, 0),
            (alloc::vec![Some(r(0)), Some(r(1))], at(3))
        );
        assert_eq!(s.budget(r(0)), Some(d(4)));
        // t=3: B takes core 1 (exhausts at 3+5 = 8); P's slot ends at 4.
        assert_eq!(
            step(&mut s, 3),
            (alloc::vec![Some(r(0)), Some(r(2))], at(4))
        );
        // t=4: P's slot ends; B keeps core 1 (budget 5-1 = 4), C takes core 0 until P's next
        // slot at 6.
        assert_eq!(
            step(&mut s, 4),
            (alloc::vec![Some(r(3)), Some(r(2))], at(6))
        );
        assert_eq!(s.budget(r(2)), Some(d(4)));
        // t=6: P's slot [6,8): P back on core 0; B (budget 4-2 = 2) exhausts at 8 too.
        assert_eq!(
            step(&mut s, 6),
            (alloc::vec![Some(r(0)), Some(r(2))], at(8))
        );
        // t=8: P's slot ends and B is exhausted: C alone, on the lowest free core; next:
        // P's slot at 10+0, and A's and B's replenishments at 0+10.
        assert_eq!(step(&mut s, 8), (alloc::vec![Some(r(3)), None], at(10)));
        // t=10: P again on core 0, A (replenished, 3) on core 1 until 13.
        assert_eq!(
            step(&mut s, 10),
            (alloc::vec![Some(r(0)), Some(r(1))], at(13))
        );
        // P: slot ends at 4 and 8, slot starts at 6 and 10 (0 was its release).
        assert_eq!((s.exhaustions(r(0)), s.replenishments(r(0))), (2, 2));
        assert_eq!((s.exhaustions(r(1)), s.replenishments(r(1))), (1, 2));
        assert_eq!((s.exhaustions(r(2)), s.replenishments(r(2))), (1, 2));
    }

    /// One core, cycle 10: P = partition in [2,5); S = EDF (4, 10).
    #[test]
    fn a_partition_released_mid_slot_gets_the_rest_of_the_slot() {
        let mut s = scheduler(
            1,
            10,
            SporadicOrder::EarliestDeadlineFirst,
            alloc::vec![partition(0, &[(2, 5)]), sporadic(4, 10)],
        );
        let mut w = Work::default();
        s.release(at(3), r(0), &mut w).unwrap();
        s.release(at(3), r(1), &mut w).unwrap();
        // t=3: P has 5-3 = 2 left; S (B=4, D=13) waits for the core.
        assert_eq!(s.budget(r(0)), Some(d(2)));
        assert_eq!(step(&mut s, 3), (alloc::vec![Some(r(0))], at(5)));
        // t=5: the slot ends; S runs until 5+4 = 9.
        assert_eq!(step(&mut s, 5), (alloc::vec![Some(r(1))], at(9)));
        s.complete(at(6), r(0), &mut w).unwrap();
        // Released at 7, outside its slot: no budget until the slot at 12.
        s.release(at(7), r(0), &mut w).unwrap();
        assert_eq!(s.budget(r(0)), Some(Duration::ZERO));
        assert_eq!(step(&mut s, 7), (alloc::vec![Some(r(1))], at(9)));
        // t=9: S exhausted (due 13); the core idles until the slot at 10+2 = 12.
        assert_eq!(step(&mut s, 9), (alloc::vec![None], at(12)));
        // t=12: P has the whole slot, 5-2 = 3, until 15.
        assert_eq!(step(&mut s, 12), (alloc::vec![Some(r(0))], at(13)));
        assert_eq!(s.budget(r(0)), Some(d(3)));
        assert_eq!((s.exhaustions(r(0)), s.replenishments(r(0))), (1, 1));
    }

    /// A2: a selected reservation drains whether or not anything runs in it; the scheduler
    /// has no notion of its client being blocked, so it stays selected and drains.
    #[test]
    fn a_selected_reservation_drains_at_unit_speed() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![sporadic(6, 20), ReservationKind::BestEffort],
        );
        let mut w = Work::default();
        s.release(at(1), r(0), &mut w).unwrap();
        s.release(at(1), r(1), &mut w).unwrap();
        // Advancing 1 -> 4 in one call charges 4-1 = 3.
        s.advance(at(4), &mut w).unwrap();
        assert_eq!(s.budget(r(0)), Some(d(3)));
        // Advancing past the exhaustion at 4+3 = 7 processes it on the way.
        s.advance(at(9), &mut w).unwrap();
        assert_eq!(
            (s.budget(r(0)), s.exhaustions(r(0))),
            (Some(Duration::ZERO), 1)
        );
        assert_eq!(s.selection(), &[Some(r(1))]);
        // Replenished at 1+20 = 21, found on the way to 30; drained 30-21 = 9 > 6, so
        // exhausted again at 21+6 = 27 and due at 41.
        s.advance(at(30), &mut w).unwrap();
        assert_eq!((s.replenishments(r(0)), s.exhaustions(r(0))), (2, 2));
        assert_eq!(s.deadline(r(0)), Some(at(41)));
        s.check_invariants().unwrap();
    }

    #[test]
    fn configurations_are_validated() {
        let config = |cores, cycle, kinds| ClusterConfig {
            cores,
            cycle: d(cycle),
            order: SporadicOrder::FixedPriority,
            reservations: kinds,
        };
        let refused = |error, i: Option<u32>| {
            Err(ConfigurationError {
                error,
                reservation: i.map(ReservationId),
            })
        };
        let new = |c: ClusterConfig| ClusteredScheduler::new(&c).map(|_| ());
        assert_eq!(
            new(config(0, 10, alloc::vec![])),
            refused(ClusterError::NoCores, None)
        );
        // Two partitions on core 0 overlapping in [4,5).
        assert_eq!(
            new(config(
                1,
                10,
                alloc::vec![partition(0, &[(0, 5)]), partition(0, &[(4, 6)])]
            )),
            refused(ClusterError::OverlappingSlots, Some(1))
        );
        // The same slots on different cores, or touching on one core, are fine.
        assert_eq!(
            new(config(
                2,
                10,
                alloc::vec![partition(0, &[(0, 5)]), partition(1, &[(4, 6)])]
            )),
            Ok(())
        );
        assert_eq!(
            new(config(
                1,
                10,
                alloc::vec![partition(0, &[(0, 5)]), partition(0, &[(5, 10)])]
            )),
            Ok(())
        );
        // One partition's own slots must not touch (section III: t_2 < t_3).
        assert_eq!(
            new(config(1, 10, alloc::vec![partition(0, &[(5, 7), (0, 5)])])),
            refused(ClusterError::OverlappingSlots, Some(0))
        );
        assert_eq!(
            new(config(
                1,
                10,
                alloc::vec![sporadic(1, 2), partition(0, &[(5, 11)])]
            )),
            refused(ClusterError::InvalidSlot, Some(1))
        );
        assert_eq!(
            new(config(1, 10, alloc::vec![partition(0, &[(3, 3)])])),
            refused(ClusterError::InvalidSlot, Some(0))
        );
        assert_eq!(
            new(config(1, 10, alloc::vec![partition(0, &[])])),
            refused(ClusterError::InvalidSlot, Some(0))
        );
        assert_eq!(
            new(config(1, 0, alloc::vec![partition(0, &[(0, 1)])])),
            refused(ClusterError::InvalidSlot, Some(0))
        );
        assert_eq!(
            new(config(2, 10, alloc::vec![partition(2, &[(0, 1)])])),
            refused(ClusterError::CoreOutOfRange, Some(0))
        );
        assert_eq!(
            new(config(1, 0, alloc::vec![sporadic(0, 5)])),
            refused(ClusterError::InvalidBudget, Some(0))
        );
        assert_eq!(
            new(config(
                1,
                0,
                alloc::vec![ReservationKind::BestEffort, sporadic(6, 5)]
            )),
            refused(ClusterError::InvalidBudget, Some(1))
        );
    }

    #[test]
    fn refused_calls_change_nothing() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::EarliestDeadlineFirst,
            alloc::vec![sporadic(2, 5)],
        );
        let mut w = Work::default();
        s.advance(at(5), &mut w).unwrap();
        let before = format!("{s:?}");
        assert_eq!(
            s.release(at(5), r(1), &mut w),
            Err(ClusterError::UnknownReservation)
        );
        assert_eq!(
            s.complete(at(5), r(0), &mut w),
            Err(ClusterError::NotActive)
        );
        assert_eq!(
            s.release(at(4), r(0), &mut w),
            Err(ClusterError::TimeWentBackwards)
        );
        assert_eq!(
            s.advance(at(4), &mut w),
            Err(ClusterError::TimeWentBackwards)
        );
        assert_eq!(before, format!("{s:?}"));
    }

    /// Urgencies: `key * 4096 + id`.
    #[test]
    fn urgencies_order_partitions_then_sporadic_then_best_effort() {
        let mut s = scheduler(
            1,
            10,
            SporadicOrder::EarliestDeadlineFirst,
            alloc::vec![
                ReservationKind::TimePartition {
                    core: 0,
                    priority: Priority(200),
                    slots: alloc::vec![Slot::new(d(0), d(1))],
                },
                sporadic(1, 7),
                ReservationKind::BestEffort,
            ],
        );
        // Partition: (255 - 200) * 4096 + 0 = 225280. Sporadic before any release: D = 0, so
        // (512 + 0) * 4096 + 1 = 2097153; after a release at 4: D = 11, (512 + 11) * 4096 + 1
        // = 2142209.
        assert_eq!(s.urgency(r(0)), Some(225_280));
        assert_eq!(s.urgency(r(1)), Some(2_097_153));
        s.release(at(4), r(1), &mut Work::default()).unwrap();
        assert_eq!(s.urgency(r(1)), Some(2_142_209));
        assert_eq!(s.urgency(r(2)), Some(u64::MAX));
        assert_eq!(s.urgency(r(3)), None);
    }

    /// Urgencies compare across clusters of different sizes: one gate orders the clients of
    /// every cluster. A partition of priority 4 in a cluster of six reservations is more
    /// urgent than one of priority 1 alone in its cluster, and both than any sporadic one.
    #[test]
    fn urgencies_compare_across_clusters() {
        let partition = |priority| ReservationKind::TimePartition {
            core: 0,
            priority: Priority(priority),
            slots: alloc::vec![Slot::new(d(0), d(5))],
        };
        let alone = scheduler(
            1,
            10,
            SporadicOrder::FixedPriority,
            alloc::vec![partition(1)],
        );
        let mut kinds = alloc::vec![partition(4)];
        kinds.extend((0..5).map(|_| sporadic(1, 10)));
        let crowded = scheduler(1, 10, SporadicOrder::EarliestDeadlineFirst, kinds);
        let (high, low) = (crowded.urgency(r(0)).unwrap(), alone.urgency(r(0)).unwrap());
        assert!(high < low, "{high} < {low}");
        assert!(low < crowded.urgency(r(5)).unwrap());
        let too_many = ClusterConfig {
            cores: 1,
            cycle: d(10),
            order: SporadicOrder::FixedPriority,
            reservations: alloc::vec![ReservationKind::BestEffort; MAX_RESERVATIONS + 1],
        };
        assert_eq!(
            ClusteredScheduler::new(&too_many)
                .map(|_| ())
                .unwrap_err()
                .error,
            ClusterError::TooManyReservations
        );
        // Threads are bounded as reservations are: one reservation may not carry more.
        let one = ClusterConfig {
            reservations: alloc::vec![ReservationKind::BestEffort],
            ..too_many
        };
        let bindings = alloc::vec![ReservationId(0); MAX_THREADS + 1];
        assert_eq!(
            ClusteredScheduler::with_threads(&one, &bindings)
                .map(|_| ())
                .unwrap_err()
                .error,
            ClusterError::TooManyThreads
        );
        let fits = &bindings[..MAX_THREADS];
        assert!(ClusteredScheduler::with_threads(&one, fits).is_ok());
    }

    /// Vestal's mode switch, one core, fixed priorities: L = low criticality (e 4, p 20,
    /// priority 20); H = high criticality (e^H 8, e^L 2, p 20, priority 10); B best effort.
    fn vestal() -> ClusteredScheduler {
        scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![
                ReservationKind::Sporadic(Sporadic::new(d(4), d(20)).with_priority(Priority(20))),
                ReservationKind::Sporadic(
                    Sporadic::new(d(8), d(20))
                        .with_priority(Priority(10))
                        .with_high_criticality(d(2))
                ),
                ReservationKind::BestEffort,
            ],
        )
    }

    /// Vestal's mode switch on [`vestal`]'s system, worked by hand below.
    #[test]
    fn a_high_criticality_overrun_demotes_low_criticality_reservations() {
        let mut s = vestal();
        let mut w = Work::default();
        s.release(at(0), r(1), &mut w).unwrap();
        s.release(at(0), r(2), &mut w).unwrap();
        // t=0: H runs; its low budget runs out at 0+2 = 2, before its budget (at 8).
        assert_eq!(step(&mut s, 0), (alloc::vec![Some(r(1))], at(2)));
        // t=2: H has consumed e^L = 2 and is pending: the switch waits for the instant to be
        // closed (next event = now).
        assert_eq!(step(&mut s, 2), (alloc::vec![Some(r(1))], at(2)));
        assert_eq!(s.mode(), Mode::Low);
        // Closing t=2: high mode; L is demoted. H's budget runs out at 2 + (8-2) = 8.
        assert_eq!(step(&mut s, 2), (alloc::vec![Some(r(1))], at(8)));
        assert_eq!(
            (s.mode(), s.mode_switches(), s.mode_changes(r(0))),
            (Mode::High, 1, 1)
        );
        // L released at 3 (priority 20 > 10, yet demoted) does not preempt H. Its urgency:
        // 2^62 + (256 + 255 - 20) * 4096 + 0 = 2^62 + 2011136.
        s.release(at(3), r(0), &mut w).unwrap();
        assert_eq!(step(&mut s, 3), (alloc::vec![Some(r(1))], at(8)));
        assert_eq!(s.urgency(r(0)), Some((1 << 62) + 2_011_136));
        // H completes at 5: L (demoted, still above best effort) runs until 5+4 = 9.
        s.complete(at(5), r(1), &mut w).unwrap();
        assert_eq!(step(&mut s, 5), (alloc::vec![Some(r(0))], at(9)));
        // L completes at 6: no partition or sporadic reservation is active, an idle instant:
        // back to low mode, L's priority restored (491 * 4096 = 2011136).
        s.complete(at(6), r(0), &mut w).unwrap();
        assert_eq!(step(&mut s, 6), (alloc::vec![Some(r(2))], Instant::NEVER));
        assert_eq!(
            (s.mode(), s.mode_changes(r(0)), s.urgency(r(0))),
            (Mode::Low, 2, Some(2_011_136))
        );
        // H's next job (replenished at 20, its deadline 0+20) uses exactly e^L = 2 and
        // completes at 22, within the instant: no switch.
        s.release(at(20), r(1), &mut w).unwrap();
        assert_eq!(step(&mut s, 20), (alloc::vec![Some(r(1))], at(22)));
        s.advance(at(22), &mut w).unwrap();
        s.complete(at(22), r(1), &mut w).unwrap();
        assert_eq!(step(&mut s, 22), (alloc::vec![Some(r(2))], Instant::NEVER));
        assert_eq!((s.mode(), s.mode_switches()), (Mode::Low, 1));
    }

    #[test]
    fn a_low_budget_must_fit_the_budget() {
        let config = |low| ClusterConfig {
            cores: 1,
            cycle: d(0),
            order: SporadicOrder::EarliestDeadlineFirst,
            reservations: alloc::vec![ReservationKind::Sporadic(
                Sporadic::new(d(5), d(10)).with_high_criticality(d(low))
            )],
        };
        let refused = Err(ConfigurationError {
            error: ClusterError::InvalidBudget,
            reservation: Some(r(0)),
        });
        assert_eq!(ClusteredScheduler::new(&config(0)).map(|_| ()), refused);
        assert_eq!(ClusteredScheduler::new(&config(6)).map(|_| ()), refused);
        assert!(ClusteredScheduler::new(&config(5)).is_ok());
    }

    /// A random cluster: 1-3 cores, a cycle, up to two partitions per core built from sorted
    /// distinct cut points (so slots never overlap), sporadic and best-effort reservations.
    fn cluster() -> impl Strategy<Value = ClusterConfig> {
        let core_slots =
            proptest::collection::btree_set(0u64..=30, 0..=6).prop_flat_map(|points| {
                let n = points.len() / 2;
                (Just(points), proptest::collection::vec(any::<bool>(), n))
            });
        (
            1usize..=3,
            proptest::collection::vec(core_slots, 3),
            proptest::collection::vec(
                (
                    1u64..=8,
                    0u64..=20,
                    any::<u8>(),
                    proptest::option::of(1u64..=8),
                ),
                0..=4,
            ),
            0usize..=2,
            any::<bool>(),
        )
            .prop_map(|(cores, per_core, sporadics, best_effort, edf)| {
                let mut reservations = Vec::new();
                for (core, (points, owners)) in per_core.into_iter().enumerate().take(cores) {
                    let points: Vec<u64> = points.into_iter().collect();
                    let mut own: [Vec<Slot>; 2] = [Vec::new(), Vec::new()];
                    for (pair, owner) in points.chunks_exact(2).zip(owners) {
                        own[usize::from(owner)].push(Slot::new(d(pair[0]), d(pair[1])));
                    }
                    for slots in own.into_iter().filter(|s| !s.is_empty()) {
                        // Two slots of one owner may touch only if consecutive cut points
                        // were paired apart, which distinct points prevent.
                        reservations.push(ReservationKind::TimePartition {
                            core,
                            priority: Priority(core as u8),
                            slots,
                        });
                    }
                }
                for (budget, slack, priority, low) in sporadics {
                    let mut sporadic = Sporadic::new(d(budget), d(budget + slack))
                        .with_priority(Priority(priority));
                    if let Some(low) = low {
                        sporadic = sporadic.with_high_criticality(d(low.min(budget)));
                    } else if priority % 3 == 0 {
                        // A third of the low-criticality ones are constant-bandwidth servers.
                        sporadic = sporadic.with_constant_bandwidth();
                    } else if priority % 3 == 1 && !edf {
                        // Under fixed priorities, another third are SPR servers, S = 1..4.
                        sporadic = sporadic.with_spr(u16::from(priority % 4) + 1);
                    }
                    reservations.push(ReservationKind::Sporadic(sporadic));
                }
                reservations.extend((0..best_effort).map(|_| ReservationKind::BestEffort));
                ClusterConfig {
                    cores,
                    cycle: d(30),
                    order: if edf {
                        SporadicOrder::EarliestDeadlineFirst
                    } else {
                        SporadicOrder::FixedPriority
                    },
                    reservations,
                }
            })
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Release(u32),
        Complete(u32),
        /// Move time forward by this much (never past the next event).
        Advance(u64),
        /// Try to move time backwards by this much (refused unless zero).
        Backwards(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u32..12).prop_map(Op::Release),
            (0u32..12).prop_map(Op::Complete),
            (0u64..12).prop_map(Op::Advance),
            (0u64..3).prop_map(Op::Backwards),
        ]
    }

    /// The partition owning `core` at `t`, from the configuration alone.
    fn partition_in_slot(config: &ClusterConfig, core: usize, t: u64) -> Option<u32> {
        let offset = t % config.cycle.as_nanos();
        config
            .reservations
            .iter()
            .enumerate()
            .find_map(|(i, kind)| match kind {
                ReservationKind::TimePartition { core: c, slots, .. }
                    if *c == core
                        && slots
                            .iter()
                            .any(|s| s.start.as_nanos() <= offset && offset < s.end.as_nanos()) =>
                {
                    Some(i as u32)
                }
                _ => None,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any call sequence: no panic, a refused call changes nothing, invariants after each
        /// call; time can always move on past a closed instant; at most m_k distinct
        /// reservations selected; an active partition inside its
        /// slot is selected on its core; and a sporadic reservation never drains more than
        /// `e` between two replenishments, which are at least `p` apart.
        #[test]
        fn the_cluster_scheduler_keeps_its_promises(
            config in cluster(),
            ops in proptest::collection::vec(op(), 0..120),
        ) {
            let mut s = ClusteredScheduler::new(&config).unwrap();
            let n = config.reservations.len();
            let mut drained = vec![0u64; n];
            let mut last_replenishment: Vec<Option<u64>> = vec![None; n];
            // The one before, for a replenishment undone by a completion at its instant.
            let mut previous_replenishment: Vec<Option<u64>> = vec![None; n];
            let mut replenishments = vec![0u64; n];
            // Per reservation: the spans it was selected over.
            let mut history: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
            let mut w = Work::default();
            for op in ops {
                let before = format!("{s:?}");
                let selected: Vec<Option<ReservationId>> = s.selection().to_vec();
                let t0 = s.now().as_nanos();
                let next = s.next_event().as_nanos();
                let (result, t1) = match op {
                    Op::Release(i) => (s.release(s.now(), r(i), &mut w), t0),
                    Op::Complete(i) => (s.complete(s.now(), r(i), &mut w), t0),
                    Op::Advance(dt) => {
                        let t1 = (t0 + dt).min(next);
                        (s.advance(at(t1), &mut w), t1)
                    }
                    Op::Backwards(dt) => (s.advance(at(t0.saturating_sub(dt)), &mut w), t0),
                };
                if result.is_err() {
                    prop_assert_eq!(&before, &format!("{s:?}"));
                    continue;
                }
                prop_assert!(s.check_invariants().is_ok(), "{:?}", s.check_invariants());
                if matches!(op, Op::Advance(_)) && t1 == t0 {
                    // Liveness: once an instant is closed (advanced to itself), time can move
                    // on.
                    prop_assert!(s.next_event() > s.now());
                }
                // The selection held over [t0, t1): charge it.
                for reservation in selected.iter().flatten() {
                    drained[reservation.index()] += t1 - t0;
                    if t1 > t0 {
                        history[reservation.index()].push((t0, t1));
                    }
                }
                let cores = s.selection();
                prop_assert_eq!(cores.len(), config.cores);
                let mut ids: Vec<u32> = cores.iter().flatten().map(|r| r.0).collect();
                ids.sort_unstable();
                ids.dedup();
                prop_assert_eq!(ids.len(), cores.iter().flatten().count());
                for (core, selected) in cores.iter().enumerate() {
                    if let Some(p) = partition_in_slot(&config, core, t1) {
                        if s.is_active(r(p)) {
                            prop_assert_eq!(*selected, Some(r(p)));
                        }
                    }
                }
                for (i, kind) in config.reservations.iter().enumerate() {
                    let ReservationKind::Sporadic(sp) = kind else { continue };
                    let (e, p) = (sp.budget.as_nanos(), sp.period.as_nanos());
                    if matches!(sp.replenishment, Replenishment::Spr { .. }) {
                        // SPR's promise is the sliding window checked after the run.
                        prop_assert!(s.budget(r(i as u32)).unwrap().as_nanos() <= e);
                        continue;
                    }
                    let server = sp.replenishment == Replenishment::ConstantBandwidth;
                    if server && s.is_active(r(i as u32)) {
                        // A CBS is recharged at its depletion: it never waits for budget.
                        prop_assert!(s.budget(r(i as u32)).is_some_and(|b| !b.is_zero()));
                    }
                    if s.replenishments(r(i as u32)) != replenishments[i] {
                        prop_assert_eq!(s.replenishments(r(i as u32)), replenishments[i] + 1);
                        if let (Some(last), false) = (last_replenishment[i], server) {
                            prop_assert!(t1 >= last + p, "replenished at {} after {}", t1, last);
                        }
                        prop_assert!(drained[i] <= e);
                        replenishments[i] += 1;
                        drained[i] = 0;
                        previous_replenishment[i] = last_replenishment[i];
                        last_replenishment[i] = Some(t1);
                    }
                    if matches!(op, Op::Complete(c) if c as usize == i)
                        && !server
                        && !s.is_active(r(i as u32))
                        && last_replenishment[i] == Some(t1)
                    {
                        // A completion at the instant of a replenishment (the budget ran out
                        // as the job completed) undoes it: nothing was drained from it.
                        prop_assert_eq!(drained[i], 0);
                        last_replenishment[i] = previous_replenishment[i];
                    }
                    let budget = s.budget(r(i as u32)).unwrap().as_nanos();
                    prop_assert!(
                        drained[i] + budget <= e,
                        "drained {} + budget {} > {}",
                        drained[i],
                        budget,
                        e
                    );
                }
            }
            // SPR (section IV): a chunk of budget used from an activation at `a` comes back
            // no sooner than `a + p`, and activations are at or after 0, so by any time `t`
            // each unit of `e` has been used at most `1 + floor((t - 1) / p)` times: no more
            // than a periodic task (e, p) released at 0 could run. There is no bound of 2e per
            // window of p: like a periodic task whose jobs were held back, a server kept from
            // its core while active keeps its activation time, so the chunks it then uses come
            // back at once. In one case found here (e = 1, p = 3), a server active with budget
            // from 42 but not selected until 48 ran [48, 51) back to back, as a periodic
            // task's jobs of 42, 45 and 48 would.
            for (i, kind) in config.reservations.iter().enumerate() {
                let ReservationKind::Sporadic(sp) = kind else { continue };
                if !matches!(sp.replenishment, Replenishment::Spr { .. }) {
                    continue;
                }
                let (e, p) = (sp.budget.as_nanos(), sp.period.as_nanos());
                let mut used = 0;
                for &(start, end) in &history[i] {
                    used += end - start;
                    prop_assert!(used <= e * (1 + (end - 1) / p), "{} by {} > e (1 + (t - 1) / p)", used, end);
                }
            }
        }
    }
    /// `budget_at` and `drained_at` look past the scheduler's clock: a selected sporadic
    /// reservation drains at unit speed (A2) until `now`, an unselected one keeps what it has,
    /// and the totals agree with the budgets once the clock gets there. One core, fixed
    /// priority: R0 (budget 4) above R1 (budget 6); both released at 0, so R0 is selected.
    #[test]
    fn budget_and_drain_at_an_instant_past_the_clock() {
        let mut s = scheduler(
            1,
            0,
            SporadicOrder::FixedPriority,
            alloc::vec![
                ReservationKind::Sporadic(Sporadic::new(d(4), d(20)).with_priority(Priority(2))),
                ReservationKind::Sporadic(Sporadic::new(d(6), d(20)).with_priority(Priority(1))),
            ],
        );
        let mut w = Work::default();
        s.release(at(0), r(0), &mut w).unwrap();
        s.release(at(0), r(1), &mut w).unwrap();
        assert_eq!(step(&mut s, 0), (alloc::vec![Some(r(0))], at(4)));
        // At 3, the clock still at 0: R0 has drained 3 of its 4, R1 nothing.
        assert_eq!(s.budget_at(r(0), at(3)), Some(d(1)));
        assert_eq!(s.drained_at(r(0), at(3)), Some(d(3)));
        assert_eq!(s.budget_at(r(1), at(3)), Some(d(6)));
        assert_eq!(s.drained_at(r(1), at(3)), Some(d(0)));
        // Past its exhaustion the budget stays at zero.
        assert_eq!(s.budget_at(r(0), at(9)), Some(d(0)));
        // At 4 R0 is out and R1 selected: the totals match the budgets charged.
        assert_eq!(step(&mut s, 4), (alloc::vec![Some(r(1))], at(10)));
        assert_eq!(s.budget(r(0)), Some(d(0)));
        assert_eq!(s.drained_at(r(0), at(4)), Some(d(4)));
        assert_eq!(s.drained_at(r(1), at(7)), Some(d(3)));
        assert_eq!(s.budget_at(r(1), at(7)), Some(d(3)));
        assert_eq!(s.budget_at(r(9), at(7)), None);
    }
}
