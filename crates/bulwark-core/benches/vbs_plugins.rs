//! One VBS scheduler invocation per queue plugin against the number of processes (VBS paper,
//! section VI-A and Fig. 3; Table I's time column).
//!
//! The timed invocation is a *release storm*, the case the paper finds dominates the
//! scheduler's execution time (Fig. 4): every process is released at the same instant `T`.
//! Process `i` has one action of unknown load on `(λ, π)` with `π = T` for even `i` and
//! `T/2` for odd `i` (so releases and deadlines interleave in task order, the list plugin's
//! worst case), `λ` about `π/(2n)` and at least one instant, and the cap `λ/π`; the caps sum
//! to at most one. All actions arrive at 0; the scheduler is driven, as a kernel drives it,
//! through its periods until the core idles before `T`, with every process waiting for its
//! release at `T`. What is timed is `schedule(T)`: it releases all `n` processes (Blocked to
//! Ready) and dispatches the earliest deadline. Expected (Table I): the list plugin grows as
//! `n^2`, the array plugin as `n log(t)`, the matrix and tree plugins stay flat in `n`.
//!
//! Time resolution: `T` is a quarter of the horizon (the longest period the scheduler
//! accepts) and admission needs `n` caps of at least `1/T`, so 10,000 processes need
//! `T >= 10,000`: the list, array and tree plugins run at `2^16` instants (`T = 16,384`). The
//! matrix plugin needs `t^2` cells (16 GiB at `2^16`, 1 GiB at the paper's `2^14`), so it runs
//! at `2^10` (`T = 256`, 4 MiB), where admission allows at most 170 such processes: 10, 50 and
//! 100. The tree plugin is also run at `2^10` for comparison with the matrix.
//!
//! Each timed iteration gets its own clone of the prepared state (cloning is setup, not
//! measured), as in `reservations.rs`, whose notes on cache effects apply: clones are made in
//! batches just before the timed loop, so the invocation finds its lines warm for small
//! states and mostly out of L1/L2 for large ones (the tree's node pool at `n = 10,000` is
//! about 5 MB). Once per (plugin, resolution, n), untimed, the bench checks that the
//! invocation releases every process and dispatches one, and prints its `Work` and the
//! scheduler's memory on stderr; it also prints the memory of each plugin against the
//! resolution for 750 processes (Fig. 3(d)).

use std::hint::black_box;
use std::time::Duration as WallDuration;

use bulwark_core::bandwidth::vbs::{
    Action, ArrayQueue, BandwidthCap, ListQueue, MatrixQueue, ProcessPhase, ReleaseStrategy,
    Resource, TreeQueue, Vbs, VbsConfig, VbsQueue,
};
use bulwark_core::{Duration, Instant, Policy, TaskId, Work};
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion,
};

/// The process counts.
const PROCESSES: [usize; 7] = [10, 50, 100, 250, 500, 750, 10_000];
/// The process counts the matrix plugin can admit at its resolution.
const MATRIX_PROCESSES: [usize; 3] = [10, 50, 100];
/// One instant.
const QUANTUM: Duration = Duration::from_micros(1);

fn at(instants: u64) -> Instant {
    Instant::from_nanos(instants * QUANTUM.as_nanos())
}

/// The storm's processes at `2^bits` instants, driven until just before `T`.
fn prepared<Q: VbsQueue>(n: usize, bits: u32) -> (Vbs<Q>, u64) {
    let t = 1u64 << (bits - 2);
    let config = VbsConfig::new(ReleaseStrategy::Late)
        .with_quantum(QUANTUM)
        .with_horizon_bits(bits);
    let mut vbs = Vbs::<Q>::with_capacity(n, config).expect("scheduler");
    let mut w = Work::default();
    for i in 0..n {
        let period = if i % 2 == 0 { t } else { t / 2 };
        let limit = (period / (2 * n as u64)).max(1);
        let resource = Resource::new(
            QUANTUM.saturating_mul(limit),
            QUANTUM.saturating_mul(period),
        );
        let task = TaskId(i as u32);
        let cap = BandwidthCap::from_ratio(limit, period).expect("cap");
        vbs.add_process(task, cap).expect("admitted");
        vbs.switch_action(Instant::ZERO, task, Action::unknown_load(resource), &mut w)
            .expect("action");
    }
    // Drive it as a kernel would: invoke at every timer until the core idles before T.
    let mut now = 0;
    loop {
        let d = vbs.schedule(at(now), &mut w);
        let timer = d.timer.expect("a timer").as_nanos() / QUANTUM.as_nanos();
        if d.next.is_none() && timer == t {
            break;
        }
        assert!(timer < t, "every limit is used before T");
        now = timer;
    }
    vbs.check_invariants().expect("invariants before T");
    (vbs, t)
}

/// Checks, once and untimed, that the invocation at T releases everything, and reports.
fn verify<Q: VbsQueue>(prepared: &Vbs<Q>, n: usize, t: u64, id: &str) {
    let mut vbs = prepared.clone();
    let mut w = Work::default();
    let d = vbs.schedule(at(t), &mut w);
    assert!(d.next.is_some(), "{id}: a process is dispatched");
    let ready = (0..n as u32)
        .filter(|&i| vbs.process_state(TaskId(i)).map(|s| s.phase) == Some(ProcessPhase::Ready))
        .count();
    assert_eq!(ready, n - 1, "{id}: all released, one dispatched");
    vbs.check_invariants().expect("invariants after T");
    eprintln!(
        "work {id}: units={} examined={} moved={} releases={} memory={}B",
        w.units(),
        w.timeouts_examined,
        w.queue_entries_moved,
        w.replenishments_processed,
        prepared.memory_bytes(),
    );
}

fn bench_plugin<Q: VbsQueue>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    bits: u32,
    counts: &[usize],
) {
    for &n in counts {
        let (prepared, t) = prepared::<Q>(n, bits);
        let name = format!("{}@2^{bits}", Q::NAME);
        verify(&prepared, n, t, &format!("{name}/{n}"));
        let now = at(t);
        group.bench_with_input(BenchmarkId::new(name, n), &prepared, |b, prepared| {
            b.iter_batched_ref(
                || prepared.clone(),
                |vbs| {
                    let mut work = Work::default();
                    let d = vbs.schedule(black_box(now), &mut work);
                    (d, work)
                },
                BatchSize::SmallInput,
            )
        });
    }
}

fn release_storm(c: &mut Criterion) {
    let mut group = c.benchmark_group("vbs_release_storm");
    group
        .sample_size(10)
        .warm_up_time(WallDuration::from_millis(300))
        .measurement_time(WallDuration::from_millis(1200));
    bench_plugin::<ListQueue>(&mut group, 16, &PROCESSES);
    bench_plugin::<ArrayQueue>(&mut group, 16, &PROCESSES);
    bench_plugin::<TreeQueue>(&mut group, 16, &PROCESSES);
    bench_plugin::<MatrixQueue>(&mut group, 10, &MATRIX_PROCESSES);
    bench_plugin::<TreeQueue>(&mut group, 10, &MATRIX_PROCESSES);
    group.finish();
}

/// Fig. 3(d): memory per plugin for 750 processes against the resolution, computed from the
/// plugins' layouts without allocating.
fn memory_table(_: &mut Criterion) {
    eprintln!("memory for 750 processes (bytes): bits list array matrix tree");
    for bits in [8, 10, 12, 14, 16] {
        eprintln!(
            "memory 2^{bits}: {} {} {} {}",
            ListQueue::memory_bytes_for(750, bits),
            ArrayQueue::memory_bytes_for(750, bits),
            if bits <= MatrixQueue::MAX_HORIZON_BITS {
                MatrixQueue::memory_bytes_for(750, bits)
            } else {
                0
            },
            TreeQueue::memory_bytes_for(750, bits),
        );
    }
}

criterion_group!(benches, memory_table, release_storm);
criterion_main!(benches);
