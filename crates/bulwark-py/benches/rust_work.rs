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
use bulwark_analysis::classic::priority_assignment::{ordered, rate_monotonic};
use bulwark_analysis::classic::Task;
use bulwark_analysis::generate::task_set;
use bulwark_core::Duration;
use criterion::{criterion_group, criterion_main, Criterion};

const POOL: u64 = 64;

/// The constrained sets of bulwark-analysis's benches/classic.rs, built the same way:
/// UUniFast at U = 0.8, log-uniform periods 1-100 ms, deadlines spread between (C + T) / 2
/// and T by the task's index, rate-monotonic order.
fn constrained_sets() -> Vec<Vec<Task>> {
    (0..POOL)
        .map(|seed| {
            let raw = task_set(
                10,
                800_000_000,
                Duration::from_millis(1),
                Duration::from_millis(100),
                seed,
            );
            let tasks: Vec<Task> = raw
                .iter()
                .enumerate()
                .map(|(i, generated)| {
                    let (wcet, period) =
                        (generated.execution.as_nanos(), generated.period.as_nanos());
                    let slack = (period - wcet) / 2;
                    Task::new(format!("t{i}"), wcet, period)
                        .with_deadline(wcet + slack + slack * (i as u64 % 3) / 3)
                })
                .collect();
            ordered(&tasks, &rate_monotonic(&tasks))
        })
        .collect()
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
