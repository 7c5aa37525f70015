//! Batch replenishment (SPR paper, Table II: 52-159 cycles for S = 1, 4, 16, 32): the cost of
//! the replenishment-queue walks on a queue of S entries that have all expired.
//!
//! - `activate_merge`: Algorithm 3, lines 1-5, [`ReplenishmentQueue::activate`], which merges
//!   the S - 1 expired entries behind the head into one head;
//! - `depletion_time`: Algorithm 2, lines 1-4, [`ReplenishmentQueue::depletion_time`], the
//!   early-replenishment walk, which counts all S - 1 of them.
//!
//! The queue is filled once per S through its public API (the way its unit tests do: splits
//! of one unit at increasing offsets) and cloned per iteration, untimed.

use std::hint::black_box;

use bulwark_core::reservation::replenishment::ReplenishmentQueue;
use bulwark_core::{Duration, Instant, Work};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

/// The queue capacities of Table II.
const CAPACITIES: [usize; 4] = [1, 4, 16, 32];
/// The reservation's budget, large enough to split 31 units off.
const BUDGET: u64 = 1_000;
/// When the walks happen: after every entry is due.
const NOW: u64 = 10_000;

/// A queue of `s` entries `(0, b - (s - 1)), (1, 1), (2, 1), ..., (s - 1, 1)`, all expired at
/// [`NOW`]: each split plans one used unit at `t_head + k`, so the entries stay in time order.
fn filled(s: usize) -> ReplenishmentQueue {
    let mut work = Work::default();
    let mut queue =
        ReplenishmentQueue::new(s, Duration::from_nanos(BUDGET), Instant::ZERO).expect("queue");
    for k in 1..s as u64 {
        let mut used = Duration::from_nanos(1);
        queue.split(&mut used, Duration::from_nanos(k), &mut work);
    }
    assert_eq!(queue.len(), s, "filled to S entries");
    assert!(queue.iter().all(|r| r.at.as_nanos() < NOW), "all expired");
    queue.check().expect("queue invariants");
    queue
}

fn batch_replenishment(c: &mut Criterion) {
    let now = Instant::from_nanos(NOW);
    let mut group = c.benchmark_group("replenishment");
    for s in CAPACITIES {
        let queue = filled(s);

        // Untimed checks that each walk covers all S entries, with its work on stderr.
        let mut merged = queue.clone();
        let mut w = Work::default();
        assert!(merged.activate(now, Instant::NEVER, &mut w), "budget due");
        assert_eq!(merged.len(), 1, "S = {s}: everything merged into the head");
        merged.check().expect("merged invariants");
        eprintln!(
            "work replenishment/activate_merge/{s}: replenishments_processed={}",
            w.replenishments_processed
        );
        let mut w = Work::default();
        let depletion = queue.depletion_time(now, Duration::ZERO, &mut w);
        assert_eq!(
            depletion,
            now.saturating_add(Duration::from_nanos(BUDGET)),
            "S = {s}: every entry replenished early"
        );
        eprintln!(
            "work replenishment/depletion_time/{s}: replenishments_processed={}",
            w.replenishments_processed
        );

        group.bench_with_input(BenchmarkId::new("activate_merge", s), &queue, |b, queue| {
            b.iter_batched_ref(
                || queue.clone(),
                |q| {
                    let mut work = Work::default();
                    let ready = q.activate(black_box(now), black_box(Instant::NEVER), &mut work);
                    (ready, work)
                },
                BatchSize::SmallInput,
            )
        });
        group.bench_with_input(BenchmarkId::new("depletion_time", s), &queue, |b, queue| {
            b.iter_batched_ref(
                || queue.clone(),
                |q| {
                    let mut work = Work::default();
                    let at = q.depletion_time(black_box(now), black_box(Duration::ZERO), &mut work);
                    (at, work)
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, batch_replenishment);
criterion_main!(benches);
