//! The exact bounds against the number of tasks `n`, where their numbers grow with the set:
//! the hyperbolic bound of Eq. 4 (one product of `n` factors per task) and the EDF bandwidth
//! sum `sum Q_i / T_i <= 1` past `u128` (long, mostly coprime periods, summed as big-integer
//! fractions).
//!
//! The bandwidth sum is quadratic in `n` in limb steps, so 4x the tasks should cost about
//! 16x. Eq. 4's products on this star stay far below 2, so its verdicts come from the
//! level-wise `f64` products, clear of 2 by more than their rounding, in O(n log n); a set
//! with a product within that margin of 2 is decided by the exact integer products (a running
//! product, quadratic in limb steps), which the crate's tests exercise rather than this
//! bench.
//! The sets are made before timing and only borrowed by the timed call; each call allocates
//! its own big integers, which is part of what is measured.

use std::hint::black_box;

use bulwark_analysis::bandwidth::admit;
use bulwark_analysis::blocking::{hyperbolic_non_unique, TaskTiming};
use bulwark_core::{Duration, Priority};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const SIZES: [u64; 3] = [250, 1_000, 4_000];

/// `n` tasks of 1 us every `1 s + i ms` over 200 priority levels, rate-monotonic with equal
/// periods per level: the whole product stays far below 2, so no task's is cut short.
fn star(n: u64) -> Vec<TaskTiming> {
    (0..n)
        .map(|i| {
            let level = i * 200 / n;
            TaskTiming::new(
                Duration::from_micros(1),
                Duration::from_millis(1_000 + level),
                Priority(255 - level as u8),
            )
        })
        .collect()
}

/// `n` servers of 1 us every `1 s + i ns` (so many periods are coprime and the common
/// denominator leaves `u128` within a few terms).
fn servers(n: u64) -> Vec<(Duration, Duration)> {
    (0..n)
        .map(|i| {
            (
                Duration::from_micros(1),
                Duration::from_nanos(1_000_000_007 + i),
            )
        })
        .collect()
}

fn exact_bounds(c: &mut Criterion) {
    let mut group = c.benchmark_group("exact_bounds");
    group.sample_size(10);
    for n in SIZES {
        let tasks = star(n);
        assert!(
            hyperbolic_non_unique(&tasks).verdict.admitted(),
            "{n} tasks admitted"
        );
        group.bench_with_input(BenchmarkId::new("hyperbolic_eq4", n), &tasks, |b, tasks| {
            b.iter(|| black_box(hyperbolic_non_unique(black_box(tasks))))
        });
        let servers = servers(n);
        let admission = admit(&servers);
        assert!(admission.admitted && !admission.exact, "{n}: {admission:?}");
        group.bench_with_input(
            BenchmarkId::new("bandwidth_admit", n),
            &servers,
            |b, servers| b.iter(|| black_box(admit(black_box(servers)))),
        );
    }
    group.finish();
}

criterion_group!(benches, exact_bounds);
criterion_main!(benches);
