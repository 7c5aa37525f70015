//! Simulator throughput: machine events and jobs per second on generated EDF sets at
//! utilisation 0.9 over 100 s of simulated time, without trace or per-job records; and the
//! end of a run in which many scripts are still executing (`unfinished-scripts`).
//!
//! Building the machine (allocating its cores, tasks and queue) is set-up and stays outside
//! the timed region; the timed region is the run from boot to the horizon. Each run starts
//! with the scenario's data warm in cache from the previous iteration.

use bulwark_analysis::scenario::periodic_set;
use bulwark_core::Priority;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, Options};
use bulwark_spec::{Behaviour, Execution, PolicyKind, Scenario, Step, TaskSpec};
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

/// `n` tasks of one fixed priority whose scripts run 10 ms chunks for ever, as A2's attackers
/// end: all but one are executing, unfinished, when the 5 ms run ends, and the end of the
/// run looks behind each for jobs queued by the horizon (none: it never sleeps).
fn unfinished(n: usize) -> Scenario {
    let task = |i: usize| TaskSpec {
        name: format!("spinner-{i}"),
        core: 0,
        priority: Some(Priority(1)),
        reservation: None,
        deadline: None,
        behaviour: Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Run(Execution::Fixed(Duration::from_millis(10)))],
            }],
        },
    };
    Scenario::new(
        "unfinished-scripts",
        PolicyKind::FixedPriority,
        1,
        Duration::from_millis(5),
        (0..n).map(task).collect(),
    )
}

/// The whole run of [`unfinished`], boot to the end-of-run accounting; the machine is built
/// outside the timed region.
fn unfinished_scripts(c: &mut Criterion) {
    let mut group = c.benchmark_group("unfinished-scripts");
    group.sample_size(10);
    let options = Options::default();
    for n in [16usize, 256] {
        let scenario = unfinished(n);
        let build = || Machine::new(&scenario, &options).expect("builds");
        let once = build().run(&mut |_: Instant| {}).expect("runs");
        assert_eq!(once.tasks.iter().map(|t| t.jobs).sum::<u64>(), n as u64);
        group.bench_function(format!("{n}-scripts"), |b| {
            b.iter_batched(
                build,
                |m| m.run(&mut |_: Instant| {}).expect("runs").events,
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, throughput, unfinished_scripts);
criterion_main!(benches);
