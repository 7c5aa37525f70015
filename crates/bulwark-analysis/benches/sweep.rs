//! The sweep's unit of work: one 10-task set at utilisation 0.9 (UUniFast, log-uniform
//! periods 10 ms to 1 s, half the sets with constrained deadlines), per test, and the draw of
//! a set itself. The sets are drawn before timing; each timed call takes the next of a pool
//! of 64 so no one set's shape dominates.

use std::hint::black_box;

use bulwark_analysis::classic::Task;
use bulwark_analysis::sweep::{sets, verdict};
use bulwark_spec::sweep_toml::{Experiment, PeriodKind, UtilisationGenerator, SWEEP_TESTS};
use criterion::{criterion_group, criterion_main, Criterion};

const POOL: u64 = 64;
const UTILISATION_PPB: u64 = 900_000_000;

fn experiment() -> Experiment {
    Experiment {
        name: "bench".into(),
        seed: 1,
        sets_per_point: POOL,
        generator: UtilisationGenerator::UUniFast,
        period_kind: PeriodKind::LogUniform,
        period_min: 10_000_000,
        period_max: 1_000_000_000,
        constrained_fraction: 0.5,
        task_counts: vec![10],
        utilisations_ppb: vec![UTILISATION_PPB],
        tests: SWEEP_TESTS.iter().map(|s| s.to_string()).collect(),
        simulate: false,
        cost: None,
        non_preemptive: 0,
    }
}

fn bench(c: &mut Criterion) {
    let e = experiment();
    let pool: Vec<Vec<Task>> = (0..POOL)
        .map(|set| sets::draw(&e, 0, set, 10, UTILISATION_PPB))
        .collect();
    let mut group = c.benchmark_group("sweep-10-tasks-u0.9");
    for test in SWEEP_TESTS {
        let mut next = 0usize;
        group.bench_function(test, |b| {
            b.iter(|| {
                next = (next + 1) % pool.len();
                black_box(verdict::accepts(test, black_box(&pool[next])))
            })
        });
    }
    let mut set = 0u64;
    group.bench_function("draw", |b| {
        b.iter(|| {
            set += 1;
            black_box(sets::draw(&e, 0, black_box(set), 10, UTILISATION_PPB))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
