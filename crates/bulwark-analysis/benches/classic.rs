//! The classic tests on 10-task sets, per set: fixed-priority RTA of every task (rate
//! monotonic, implicit deadlines, utilisation 0.8) and the EDF test with QPA (constrained
//! deadlines drawn in [C + (T - C) / 2, T], utilisation 0.8, so QPA walks the demand).
//!
//! The sets (UUniFast utilisations, log-uniform periods 1-100 ms on a 1 us grid) are made
//! before timing; each timed call analyses the next set of a pool of 64, so no one set's
//! shape dominates. Nothing is cloned or allocated by the bench inside the timed region.
//!
//! `fp_rta_large`: every task of one large set (seven periods, 250 priority levels,
//! utilisation about 0.9; made before timing, warm cache) analysed two ways: each task
//! against the slice of every task above it (`response_time`, the cost of a per-task view),
//! and level by level against the rate sums of the levels above (`Levels` and
//! `response_time_among`, what `bulwark analyze` does). The two count equal priorities
//! differently (a slice holds only the earlier peers), so only their costs compare.

use std::hint::black_box;

use bulwark_analysis::classic::edf;
use bulwark_analysis::classic::fixed_point::Interferes;
use bulwark_analysis::classic::fixed_priority::{
    response_time, response_time_among, response_times,
};
use bulwark_analysis::classic::reference_sets::pool;
use bulwark_analysis::classic::Task;
use bulwark_analysis::levels::Levels;
use bulwark_core::Priority;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

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

/// `n` tasks on seven periods (10 ms to 1 s) over 250 priority levels, most important
/// first, at a total utilisation of about 0.9; each with its priority.
fn large_set(n: usize) -> (Vec<Task>, Vec<Priority>) {
    const PERIODS: [u64; 7] = [10, 20, 50, 100, 200, 500, 1000];
    let mut tasks: Vec<(Priority, Task)> = (0..n)
        .map(|i| {
            let period = PERIODS[i * 5 % PERIODS.len()] * 1_000_000;
            let wcet = (period * 9 / 10 / n as u64).max(1);
            let priority = Priority((250 - (i * 37 % 250)) as u8);
            (priority, Task::new(format!("t{i}"), wcet, period))
        })
        .collect();
    tasks.sort_by_key(|(priority, _)| std::cmp::Reverse(*priority));
    tasks.into_iter().map(|(p, t)| (t, p)).unzip()
}

fn fp_rta_large(c: &mut Criterion) {
    let mut group = c.benchmark_group("fp_rta_large");
    group.sample_size(10);
    for n in [1_000usize, 4_000] {
        let (tasks, priorities) = large_set(n);
        let levels = Levels::new(n, |i| priorities[i]);
        group.bench_with_input(BenchmarkId::new("per_task_slice", n), &tasks, |b, tasks| {
            b.iter(|| {
                (0..tasks.len())
                    .filter(|&i| response_time(tasks, i).is_some_and(|a| a.schedulable()))
                    .count()
            })
        });
        group.bench_with_input(BenchmarkId::new("level_sums", n), &tasks, |b, tasks| {
            b.iter(|| {
                let mut schedulable = 0usize;
                levels.with_interference(
                    |j| Some(tasks[j].term()),
                    |i, higher| {
                        schedulable +=
                            usize::from(response_time_among(&tasks[i], higher).schedulable());
                    },
                );
                black_box(schedulable)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, classic, fp_rta_large);
criterion_main!(benches);
