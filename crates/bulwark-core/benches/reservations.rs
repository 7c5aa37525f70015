//! The cost of one scheduler invocation under the Thundering Herd (SPR paper, sections III-E
//! and V-B), against the number of attackers N.
//!
//! N low-priority tasks (priority 1) have all run their budgets and are depleted, with their
//! replenishments due at the same instant T; a high-priority victim (priority 9) sleeps until
//! T. What is timed is the one `schedule(T)` that must dispatch the victim:
//!
//! - the naive deferrable and sporadic servers process every expired timer in it, so it grows
//!   with N;
//! - SPR (either replenishment rule) processes the victim's timeout only, so it must stay flat.
//!
//! The policy is driven up to just before T once per (policy, N), as
//! `tests/spr_examples.rs::one_timeout_per_invocation_however_many_expire` does; each timed
//! iteration gets its own clone of that prepared state (cloning is setup, not measured). Once
//! per (policy, N), outside the timing, the bench checks that the invocation dispatches the
//! victim and prints its `Work` (deterministic, unlike the times) on stderr.
//!
//! Three groups time the same invocation:
//! - `schedule_at_herd`: on clones made in batches just before the timed loop. Cloning the
//!   prepared state costs O(N) and so does its cache footprint, which leaves the invocation's
//!   lines warm for small N and mostly out of L1/L2 (and the TLB) for large N. SPR's
//!   instruction count per invocation is the same for every N, and so is the number of cache
//!   lines it touches (about eight: a few of the `Spr` value itself and two of the victim's
//!   task record; `examples/spr_herd_once.rs` counts them under valgrind). What still grows
//!   here is where those lines are: for small N a batch's clones are small and adjacent, for
//!   large N each clone's task records span a megabyte, so reading the victim's record costs
//!   a TLB miss and a miss to memory that the small clones do not;
//! - `schedule_at_herd_cold`: the same cache state for every N (L1/L2 evicted before each
//!   timed call), which separates work that grows with N from the clone's footprint;
//! - `schedule_at_herd_warm` (SPR only): the same invocation with the lines it touches warm,
//!   for every N. No clone: one prepared state is driven round a cycle in which, untimed, the
//!   victim sleeps until the next period, and then the timed `schedule` meets the herd again
//!   (the N attackers' replenishments expired and pending, the victim's wake-up due). The
//!   harness invokes the scheduler only at the victim's timer, not at the idle instant after
//!   its sleep, where SPR would start releasing attackers one per invocation: that keeps
//!   every timed call on the same herd. The naive servers process all N timeouts in the
//!   first invocation, so their herd does not come back and they are not in this group.

use std::hint::black_box;

#[path = "herd/mod.rs"]
mod herd;
use herd::{herd, AddTask, JOB, T};

use bulwark_core::reservation::{DeferrableServer, ReplenishmentRule, SporadicServer, Spr};
use bulwark_core::{Duration, Instant, TaskId, Work};
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion,
};

/// The attacker counts.
const ATTACKERS: [u32; 5] = [16, 64, 256, 1024, 4096];
/// Checks, once and untimed, that `schedule(T)` on the prepared state dispatches the victim,
/// and reports the work it did.
fn verify<P: AddTask>(prepared: &P, n: u32, id: &str) {
    let mut policy = prepared.clone();
    let mut w = Work::default();
    let d = policy.schedule(Instant::from_nanos(T), &mut w);
    assert_eq!(d.next, Some(TaskId(n)), "{id}: the victim is dispatched");
    policy.check_invariants().expect("invariants after T");
    if policy.name().starts_with("spr") {
        assert_eq!(w.timeouts_processed, 1, "{id}: SPR processes one timeout");
        assert!(w.reservations_touched <= 2, "{id}: {w:?}");
    } else {
        assert!(w.timeouts_processed > n, "{id}: naive servers process all");
    }
    eprintln!(
        "work {id}: units={} timeouts_examined={} timeouts_processed={} \
         replenishments_processed={} heap_operations={} queue_entries_moved={} \
         reservations_touched={}",
        w.units(),
        w.timeouts_examined,
        w.timeouts_processed,
        w.replenishments_processed,
        w.heap_operations,
        w.queue_entries_moved,
        w.reservations_touched,
    );
}

/// The cache state the timed invocation starts from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cache {
    /// Whatever cloning the prepared state left: batches of clones made just before the timed
    /// loop (`BatchSize::SmallInput`). The clone's footprint grows with N (about 1.2 MB for
    /// SPR at N = 4096, 256 bytes per task record), so this state is warmer for small N than
    /// for large N.
    AsCloned,
    /// The same for every N: after the clone, a buffer four times the L2 cache is read, so
    /// the invocation's code and data come from the last-level cache or memory. One clone
    /// per timed call (`BatchSize::PerIteration`), so the times include the timer's
    /// overhead (a few tens of ns), alike for every N.
    Evicted,
}

/// Bytes read to push the invocation's lines out of L1 and L2 (2 MB per core here).
const EVICTION_BYTES: usize = 8 << 20;

/// Reads `buffer` whole; its pages were written (not the shared zero page), so this really
/// displaces cache lines and TLB entries.
fn evict(buffer: &[u64]) {
    black_box(buffer.iter().fold(0u64, |a, &x| a ^ x));
}

fn bench_policy<P: AddTask>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    cache: Cache,
    with_capacity: fn(usize) -> P,
) {
    let eviction: Vec<u64> = (0..EVICTION_BYTES / 8).map(|i| i as u64 | 1).collect();
    for n in ATTACKERS {
        let prepared = herd(n, with_capacity);
        let name = prepared.name();
        if cache == Cache::AsCloned {
            verify(&prepared, n, &format!("schedule_at_herd/{name}/{n}"));
        }
        let now = Instant::from_nanos(T);
        let routine = |policy: &mut P| {
            let mut work = Work::default();
            let d = policy.schedule(black_box(now), &mut work);
            (d, work)
        };
        group.bench_with_input(BenchmarkId::new(name, n), &prepared, |b, prepared| {
            match cache {
                // SmallInput keeps a batch's clones (a tenth of a sample's iterations) in
                // memory at once. Since warm-up counts the clones' time, a sample's
                // iterations shrink as the prepared state grows, and so does a batch: a few
                // tens of MB at most for N = 4096.
                Cache::AsCloned => {
                    b.iter_batched_ref(|| prepared.clone(), routine, BatchSize::SmallInput)
                }
                Cache::Evicted => b.iter_batched_ref(
                    || {
                        let policy = prepared.clone();
                        evict(&eviction);
                        // Warm the clock's own code and data, which the eviction displaced.
                        black_box(std::time::Instant::now());
                        policy
                    },
                    routine,
                    BatchSize::PerIteration,
                ),
            }
        });
    }
}

fn run_group(c: &mut Criterion, group: &str, cache: Cache) {
    let mut group = c.benchmark_group(group);
    bench_policy(&mut group, cache, DeferrableServer::with_capacity);
    bench_policy(&mut group, cache, SporadicServer::with_capacity);
    bench_policy(&mut group, cache, |n| {
        Spr::with_capacity(n, ReplenishmentRule::Sporadic)
    });
    bench_policy(&mut group, cache, |n| {
        Spr::with_capacity(n, ReplenishmentRule::Deferrable)
    });
    group.finish();
}

/// The measurement asked for: each timed invocation on a fresh clone of the prepared state.
fn schedule_at_herd(c: &mut Criterion) {
    run_group(c, "schedule_at_herd", Cache::AsCloned);
}

/// The same invocation from the same (cold) cache state for every N, to tell the work that
/// grows with N from the cache misses that the clone's N-sized footprint causes.
fn schedule_at_herd_cold(c: &mut Criterion) {
    run_group(c, "schedule_at_herd_cold", Cache::Evicted);
}

/// One herd invocation of the warm cycle: `schedule(now)` must dispatch the victim after
/// processing its timeout alone; then, untimed in the benchmark, the victim sleeps one period.
fn herd_invocation<P: AddTask>(policy: &mut P, now: Instant) -> (bulwark_core::Decision, Work) {
    let mut work = Work::default();
    let decision = policy.schedule(now, &mut work);
    (decision, work)
}

/// The victim's sleep that closes a cycle: until the next period, so the next herd
/// invocation is at `now + T`.
fn victim_sleeps<P: AddTask>(policy: &mut P, victim: TaskId, now: Instant) -> Instant {
    let next = now.saturating_add(Duration::from_nanos(T));
    let mut work = Work::default();
    policy
        .sleep(now, victim, next, JOB, &mut work)
        .expect("the victim sleeps");
    next
}

/// Checks, untimed, that the warm cycle comes back to the herd: three cycles, each invocation
/// dispatching the victim with one timeout processed and at most two reservations touched.
fn verify_cycle<P: AddTask>(prepared: &P, n: u32, id: &str) {
    let mut policy = prepared.clone();
    let victim = TaskId(n);
    let mut now = Instant::from_nanos(T);
    for cycle in 0..3 {
        let (decision, work) = herd_invocation(&mut policy, now);
        assert_eq!(
            decision.next,
            Some(victim),
            "{id}: cycle {cycle} dispatches the victim"
        );
        assert_eq!(work.timeouts_processed, 1, "{id}: cycle {cycle}: {work:?}");
        assert!(
            work.reservations_touched <= 2,
            "{id}: cycle {cycle}: {work:?}"
        );
        policy.check_invariants().expect("invariants in the cycle");
        now = victim_sleeps(&mut policy, victim, now);
    }
}

fn bench_warm<P: AddTask>(group: &mut BenchmarkGroup<'_, WallTime>, with_capacity: fn(usize) -> P) {
    for n in ATTACKERS {
        let prepared = herd(n, with_capacity);
        let name = prepared.name();
        verify_cycle(&prepared, n, &format!("schedule_at_herd_warm/{name}/{n}"));
        let victim = TaskId(n);
        group.bench_with_input(BenchmarkId::new(name, n), &prepared, |b, prepared| {
            b.iter_custom(|iterations| {
                // Set-up, untimed: one clone per sample, then one cycle to warm its lines.
                let mut policy = prepared.clone();
                let mut now = Instant::from_nanos(T);
                black_box(herd_invocation(&mut policy, now));
                now = victim_sleeps(&mut policy, victim, now);
                let mut timed = std::time::Duration::ZERO;
                for _ in 0..iterations {
                    let start = std::time::Instant::now();
                    black_box(herd_invocation(&mut policy, black_box(now)));
                    timed += start.elapsed();
                    now = victim_sleeps(&mut policy, victim, now);
                }
                timed
            })
        });
    }
}

/// The herd invocation with its lines warm, for every N (SPR only; see the module's docs).
/// Each call is timed on its own, so the group also times an empty region the same way: the
/// clock's own cost, which every entry of the group includes.
fn schedule_at_herd_warm(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_at_herd_warm");
    group.bench_function("clock-only", |b| {
        b.iter_custom(|iterations| {
            let mut timed = std::time::Duration::ZERO;
            for _ in 0..iterations {
                let start = std::time::Instant::now();
                black_box(());
                timed += start.elapsed();
            }
            timed
        })
    });
    bench_warm(&mut group, |n| {
        Spr::with_capacity(n, ReplenishmentRule::Sporadic)
    });
    bench_warm(&mut group, |n| {
        Spr::with_capacity(n, ReplenishmentRule::Deferrable)
    });
    group.finish();
}

criterion_group!(
    benches,
    schedule_at_herd,
    schedule_at_herd_cold,
    schedule_at_herd_warm
);
criterion_main!(benches);
