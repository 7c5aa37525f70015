//! Bounded resource reclamation (Reusch, section V, Figs. 6, 7 and 8): the real
//! [`CapabilityTree`] timed, with the baseline (objects reclaimed one by one) against
//! reclamation groups (scrub list, then the arena released in one step).
//!
//! - `terminate` (Fig. 8): terminating a process that holds n semaphores, n = 1 to 1,000,000.
//!   `baseline/n` is [`CapabilityTree::terminate_process`] of a process in no group: it revokes
//!   the n capabilities and frees the n objects one by one, 3n + 1 work units. `grouped/n` is
//!   [`CapabilityTree::terminate_group`] of a group whose one process holds the n semaphores
//!   (quota exactly what they charge): nothing leaves the group, so it only releases the
//!   arena, 1 unit whatever n. The tree is built once per (variant, n) and each timed
//!   iteration gets its own clone (`iter_batched_ref`: cloning is setup, and the clone is
//!   dropped after the timer stops, so the drop of a million records is not timed either).
//!   The clone leaves a small tree in cache and a large one mostly out of it, as a kernel's
//!   would be after a long-running process.
//! - `terminate_scrub` (the scrub list, Fig. 5): `grouped/k`, the same grouped termination of a
//!   process holding 10,000 semaphores of which k (0, 10, 100, 1,000) are shared with a service
//!   process outside the group by [`CapabilityTree::delegate`]. Each shared link is one scrub
//!   entry, detached at termination (2 units), so the time follows k, not the 10,000 objects.
//! - `create` (Figs. 6 and 7): `{ungrouped,grouped}/{semaphore,mapping,endpoint}` creates one
//!   object of a kind ([`CapabilityTree::create_object`]) in a process of no group or of a
//!   group (the quota check and charge are the difference); `{ungrouped,grouped}/startup` is a
//!   process start-up: [`CapabilityTree::create_process`], or [`CapabilityTree::create_group`]
//!   then [`CapabilityTree::spawn`] (the controller gives each application its own group), plus
//!   the same initial objects: 1 endpoint, 4 memory mappings and 2 semaphores. These use
//!   `iter_custom` on one long-lived tree in a steady state: a chunk of 64 creations (or
//!   start-ups) is timed, then undone outside the timer (revoke, terminate), so every
//!   creation reuses a free slot and no timed call allocates memory, in both variants.
//!
//! The work units of each case (deterministic, unlike the times) are printed on stderr once,
//! outside the timing, and the exact ones (3n + 1, 1, 2k + 1) are asserted.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bulwark_core::reclaim::{CapabilityId, GroupId, ProcessId};
use bulwark_core::reclaim::{CapabilityTree, ObjectKind, ReclaimWork};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, SamplingMode};

/// Semaphores held by the terminated process (Fig. 8 goes to 10,000; we go further).
const SIZES: [u64; 7] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000];
/// From this size on, one clone per timed iteration and few samples.
const LARGE: u64 = 100_000;
/// Semaphores in the group of the scrub-list bench.
const SCRUB_OBJECTS: u64 = 10_000;
/// Links leaving the group in the scrub-list bench.
const SCRUB_LINKS: [u64; 4] = [0, 10, 100, 1_000];
/// Creations (or start-ups) timed back to back before they are undone, untimed.
const CHUNK: u64 = 64;
/// A typical start-up's initial objects: 1 endpoint, 4 mappings, 2 semaphores.
const STARTUP_OBJECTS: [ObjectKind; 7] = [
    ObjectKind::Endpoint,
    ObjectKind::MemoryMapping,
    ObjectKind::MemoryMapping,
    ObjectKind::MemoryMapping,
    ObjectKind::MemoryMapping,
    ObjectKind::Semaphore,
    ObjectKind::Semaphore,
];

/// What a group charges: its arena, a process, and per semaphore the object and its root
/// capability, per shared link the capability and its scrub entry (the default cost table).
fn quota(semaphores: u64, shared: u64) -> u64 {
    let c = bulwark_core::reclaim::CostTable::DEFAULT;
    c.arena
        + c.process
        + semaphores * (c.semaphore + c.capability)
        + shared * (c.capability + c.scrub_entry)
}

/// A tree with one process of no group holding `n` semaphores.
fn baseline_tree(n: u64) -> (CapabilityTree, ProcessId) {
    let mut tree = CapabilityTree::default();
    let (p, _) = tree.create_process().expect("process");
    for _ in 0..n {
        tree.create_object(p, ObjectKind::Semaphore)
            .expect("semaphore");
    }
    (tree, p)
}

/// A tree with one group whose process holds `n` semaphores, `k` of them delegated to a
/// service process outside the group (the quota is exactly what this charges).
fn grouped_tree(n: u64, k: u64) -> (CapabilityTree, GroupId) {
    assert!(k <= n);
    let mut tree = CapabilityTree::default();
    let (service, _) = tree.create_process().expect("service");
    let (g, _) = tree.create_group(quota(n, k)).expect("group");
    let (p, _) = tree.spawn(g).expect("spawn");
    for i in 0..n {
        let (cap, _) = tree
            .create_object(p, ObjectKind::Semaphore)
            .expect("semaphore");
        if i < k {
            tree.delegate(cap, service).expect("delegate");
        }
    }
    assert_eq!(tree.charged(g), Ok(quota(n, k)));
    assert_eq!(tree.scrub_list_len(g), Ok(k as usize));
    (tree, g)
}

fn work_line(id: &str, work: ReclaimWork) {
    eprintln!("work {id}: units={} {work:?}", work.units());
}

fn batch_size(n: u64) -> BatchSize {
    match n {
        0..=1_000 => BatchSize::SmallInput,
        1_001..LARGE => BatchSize::NumIterations(8),
        _ => BatchSize::PerIteration,
    }
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, n: u64) {
    if n >= LARGE {
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(10);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(3));
    } else {
        group.sampling_mode(SamplingMode::Auto);
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_millis(1_200));
    }
}

fn terminate(c: &mut Criterion) {
    let mut group = c.benchmark_group("terminate");
    for n in SIZES {
        configure(&mut group, n);

        let (tree, p) = baseline_tree(n);
        let work = tree.clone().terminate_process(p).expect("terminate");
        assert_eq!(work.units(), 3 * n + 1, "baseline n = {n}");
        work_line(&format!("terminate/baseline/{n}"), work);
        group.bench_with_input(BenchmarkId::new("baseline", n), &tree, |b, tree| {
            b.iter_batched_ref(
                || tree.clone(),
                |t| t.terminate_process(black_box(p)),
                batch_size(n),
            )
        });
        drop(tree);

        let (tree, g) = grouped_tree(n, 0);
        let work = tree.clone().terminate_group(g).expect("terminate");
        assert_eq!(work.units(), 1, "grouped n = {n}");
        work_line(&format!("terminate/grouped/{n}"), work);
        group.bench_with_input(BenchmarkId::new("grouped", n), &tree, |b, tree| {
            b.iter_batched_ref(
                || tree.clone(),
                |t| t.terminate_group(black_box(g)),
                batch_size(n),
            )
        });
    }
    group.finish();
}

fn terminate_scrub(c: &mut Criterion) {
    let mut group = c.benchmark_group("terminate_scrub");
    configure(&mut group, SCRUB_OBJECTS);
    for k in SCRUB_LINKS {
        let (tree, g) = grouped_tree(SCRUB_OBJECTS, k);
        let work = tree.clone().terminate_group(g).expect("terminate");
        assert_eq!(work.units(), 2 * k + 1, "grouped with k = {k} shared links");
        work_line(&format!("terminate_scrub/grouped/{k}"), work);
        group.bench_with_input(BenchmarkId::new("grouped", k), &tree, |b, tree| {
            b.iter_batched_ref(
                || tree.clone(),
                |t| t.terminate_group(black_box(g)),
                batch_size(SCRUB_OBJECTS),
            )
        });
    }
    group.finish();
}

/// Times `iters` calls of `make` on `state`, `CHUNK` at a time, each chunk undone by `undo`
/// outside the timer.
fn chunked<S, T>(
    iters: u64,
    state: &mut S,
    mut make: impl FnMut(&mut S) -> T,
    mut undo: impl FnMut(&mut S, Vec<T>),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut done = 0;
    let mut made = Vec::with_capacity(CHUNK as usize);
    while done < iters {
        let chunk = CHUNK.min(iters - done);
        let start = Instant::now();
        for _ in 0..chunk {
            made.push(make(state));
        }
        total += start.elapsed();
        undo(state, std::mem::take(&mut made));
        made.reserve(CHUNK as usize);
        done += chunk;
    }
    total
}

/// A tree with a holder process, ungrouped or in a group, warmed so that `CHUNK` objects fit
/// in free slots.
fn creation_tree(grouped: bool) -> (CapabilityTree, ProcessId) {
    let mut tree = CapabilityTree::default();
    let p = if grouped {
        let (g, _) = tree.create_group(u64::MAX).expect("group");
        tree.spawn(g).expect("spawn").0
    } else {
        tree.create_process().expect("process").0
    };
    let caps: Vec<CapabilityId> = (0..CHUNK)
        .map(|_| {
            tree.create_object(p, ObjectKind::Semaphore)
                .expect("object")
                .0
        })
        .collect();
    for cap in caps {
        tree.revoke(cap).expect("revoke");
    }
    (tree, p)
}

/// One start-up: a process (in a fresh group if `grouped`) and its initial objects.
fn startup(tree: &mut CapabilityTree, grouped: bool) -> (Option<GroupId>, ProcessId, ReclaimWork) {
    let mut work = ReclaimWork::default();
    let (group, (p, w)) = if grouped {
        let (g, w) = tree.create_group(STARTUP_QUOTA).expect("group");
        work.add(w);
        (Some(g), tree.spawn(g).expect("spawn"))
    } else {
        (None, tree.create_process().expect("process"))
    };
    work.add(w);
    for kind in STARTUP_OBJECTS {
        work.add(tree.create_object(p, kind).expect("object").1);
    }
    (group, p, work)
}

/// A start-up group's quota: its arena, one process and the initial objects, with room to
/// spare for what the application would do next.
const STARTUP_QUOTA: u64 = 1_000;

/// Undoes start-ups, untimed.
fn shut_down(tree: &mut CapabilityTree, started: Vec<(Option<GroupId>, ProcessId, ReclaimWork)>) {
    for (group, p, _) in started {
        match group {
            Some(g) => tree.terminate_group(g).map(|_| ()),
            None => tree.terminate_process(p).map(|_| ()),
        }
        .expect("shut down");
    }
}

fn create(c: &mut Criterion) {
    let mut group = c.benchmark_group("create");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_millis(1_500));
    let kinds = [
        ("semaphore", ObjectKind::Semaphore),
        ("mapping", ObjectKind::MemoryMapping),
        ("endpoint", ObjectKind::Endpoint),
    ];
    for grouped in [false, true] {
        let variant = if grouped { "grouped" } else { "ungrouped" };
        for (name, kind) in kinds {
            let (mut tree, p) = creation_tree(grouped);
            let (cap, work) = tree.create_object(p, kind).expect("object");
            work_line(&format!("create/{variant}/{name}"), work);
            tree.revoke(cap).expect("revoke");
            group.bench_function(BenchmarkId::new(variant, name), |b| {
                b.iter_custom(|iters| {
                    chunked(
                        iters,
                        &mut tree,
                        |t| t.create_object(black_box(p), black_box(kind)),
                        |t, caps| {
                            for cap in caps {
                                t.revoke(cap.expect("object").0).expect("revoke");
                            }
                        },
                    )
                })
            });
        }

        let mut tree = CapabilityTree::default();
        // Warm: CHUNK start-ups undone, so the timed ones reuse slots (and group arenas).
        let warm: Vec<_> = (0..CHUNK).map(|_| startup(&mut tree, grouped)).collect();
        work_line(&format!("create/{variant}/startup"), warm[0].2);
        shut_down(&mut tree, warm);
        group.bench_function(BenchmarkId::new(variant, "startup"), |b| {
            b.iter_custom(|iters| {
                chunked(
                    iters,
                    &mut tree,
                    |t| startup(t, black_box(grouped)),
                    shut_down,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, terminate, terminate_scrub, create);
criterion_main!(benches);
