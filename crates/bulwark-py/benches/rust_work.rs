//! The Rust work behind the EDF calls of the Python package, on the ten-task sets of
//! bulwark-analysis's `classic` bench (constrained deadlines), so that
//! `benches/call_overhead.py` can subtract it from the Python call's time:
//! `edf_utilisation_10_tasks` is `bulwark.edf_utilisation` (the exact `sum C/T` as a float)
//! and `edf_qpa_explained_10_tasks` is `bulwark.edf_qpa` (QPA, the exact utilisation and the
//! explanation sentence of its dict). `fp_rta_10_tasks` and `edf_qpa_10_tasks` (the lean
//! calls' work) are in bulwark-analysis's bench.
//!
//! The sets are made before timing; each timed call takes the next of a pool of 64.

use std::hint::black_box;

use bulwark_analysis::classic::edf;
use bulwark_analysis::classic::reference_sets::pool;
use bulwark_analysis::classic::Task;
use criterion::{criterion_group, criterion_main, Criterion};

const POOL: u64 = 64;

/// The constrained sets of bulwark-analysis's benches/classic.rs: the same pool.
fn constrained_sets() -> Vec<Vec<Task>> {
    pool(POOL, true)
}

fn rust_work(c: &mut Criterion) {
    let sets = constrained_sets();
    let mut next = 0usize;
    c.bench_function("edf_utilisation_10_tasks", |b| {
        b.iter(|| {
            next = (next + 1) % sets.len();
            black_box(edf::utilisation(black_box(&sets[next])).total.as_f64())
        })
    });
    let mut next = 0usize;
    c.bench_function("edf_qpa_explained_10_tasks", |b| {
        b.iter(|| {
            next = (next + 1) % sets.len();
            let tasks = black_box(&sets[next]);
            let (analysis, utilisation) = (edf::analyse(tasks), edf::utilisation(tasks));
            black_box((analysis.schedulable(), analysis.explain(&utilisation)))
        })
    });
}

criterion_group!(benches, rust_work);
criterion_main!(benches);
