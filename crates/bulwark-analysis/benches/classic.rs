//! The classic tests on 10-task sets, per set: fixed-priority RTA of every task (rate
//! monotonic, implicit deadlines, utilisation 0.8) and the EDF test with QPA (constrained
//! deadlines drawn in [C + (T - C) / 2, T], utilisation 0.8, so QPA walks the demand).
//!
//! The sets (UUniFast utilisations, log-uniform periods 1-100 ms on a 1 us grid) are made
//! before timing; each timed call analyses the next set of a pool of 64, so no one set's
//! shape dominates. Nothing is cloned or allocated by the bench inside the timed region.

use std::hint::black_box;

use bulwark_analysis::classic::edf;
use bulwark_analysis::classic::fixed_priority::response_times;
use bulwark_analysis::classic::reference_sets::pool;
use bulwark_analysis::classic::Task;
use criterion::{criterion_group, criterion_main, Criterion};

const POOL: u64 = 64;

fn sets(constrained: bool) -> Vec<Vec<Task>> {
    pool(POOL, constrained)
}

fn classic(c: &mut Criterion) {
    let fp = sets(false);
    let schedulable = fp
        .iter()
        .filter(|s| response_times(s).iter().all(|a| a.schedulable()))
        .count();
    eprintln!("fp-rta: {schedulable} of {POOL} sets schedulable");
    let mut next = 0usize;
    c.bench_function("fp_rta_10_tasks", |b| {
        b.iter(|| {
            next = (next + 1) % fp.len();
            black_box(response_times(black_box(&fp[next])))
        })
    });
    let constrained = sets(true);
    let schedulable = constrained
        .iter()
        .filter(|s| edf::analyse(s).schedulable())
        .count();
    eprintln!("edf-qpa: {schedulable} of {POOL} sets schedulable");
    let mut next = 0usize;
    c.bench_function("edf_qpa_10_tasks", |b| {
        b.iter(|| {
            next = (next + 1) % constrained.len();
            black_box(edf::analyse(black_box(&constrained[next])))
        })
    });
}

criterion_group!(benches, classic);
criterion_main!(benches);
