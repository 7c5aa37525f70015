//! Simulator throughput: machine events and jobs per second on generated EDF sets at
//! utilisation 0.9 over 100 s of simulated time, without trace or per-job records.
//!
//! Building the machine (allocating its cores, tasks and queue) is set-up and stays outside
//! the timed region; the timed region is the run from boot to the horizon. Each run starts
//! with the scenario's data warm in cache from the previous iteration.

use bulwark_analysis::scenario::periodic_set;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, Options};
use bulwark_spec::PolicyKind;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate-100s-edf-u0.9");
    group.sample_size(10);
    let options = Options::default();
    let run = |machine: Machine| machine.run(&mut |_: Instant| {}).expect("runs");
    for n in [10usize, 100] {
        let scenario = periodic_set(PolicyKind::Edf, n, 900_000_000, Duration::from_secs(100), 1);
        let build = || Machine::new(&scenario, &options).expect("builds");
        let once = run(build());
        let jobs: u64 = once.tasks.iter().map(|t| t.jobs).sum();
        // Criterion reports elements per second: the same run counted in events, then in jobs.
        group.throughput(Throughput::Elements(once.events));
        group.bench_function(format!("{n}-tasks/events"), |b| {
            b.iter_batched(build, |m| run(m).events, BatchSize::LargeInput)
        });
        group.throughput(Throughput::Elements(jobs));
        group.bench_function(format!("{n}-tasks/jobs"), |b| {
            b.iter_batched(
                build,
                |m| run(m).tasks.iter().map(|t| t.jobs).sum::<u64>(),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);
