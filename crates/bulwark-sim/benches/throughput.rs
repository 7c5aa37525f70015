//! Simulator throughput: machine events and jobs per second on generated EDF sets at
//! utilisation 0.9 over 100 s of simulated time, without trace or per-job records.

use bulwark_analysis::scenario::periodic_set;
use bulwark_core::Duration;
use bulwark_sim::{run, Options};
use bulwark_spec::PolicyKind;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate-100s-edf-u0.9");
    group.sample_size(10);
    for n in [10usize, 100] {
        let scenario = periodic_set(PolicyKind::Edf, n, 900_000_000, Duration::from_secs(100), 1);
        let once = run(&scenario, &Options::default()).expect("runs");
        let jobs: u64 = once.tasks.iter().map(|t| t.jobs).sum();
        // Criterion reports elements/s; run it once per unit so both rates are shown.
        group.throughput(Throughput::Elements(once.events));
        group.bench_function(format!("{n}-tasks/events"), |b| {
            b.iter(|| run(&scenario, &Options::default()).expect("runs").events)
        });
        group.throughput(Throughput::Elements(jobs));
        group.bench_function(format!("{n}-tasks/jobs"), |b| {
            b.iter(|| run(&scenario, &Options::default()).expect("runs").events)
        });
    }
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
