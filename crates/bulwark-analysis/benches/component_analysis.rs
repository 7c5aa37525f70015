//! The component paper's analysis (section 3.2) of a star against its number of clients `n`:
//! `n` tasks over 200 priority levels, each requesting the one server CPI, as `analyze` runs
//! it on a component file.
//!
//! - `analyse/{protocol}`: WCETs (Eqs. 1, 7, 8) and blocking terms. Under PIP each `B_i` sums
//!   the lower tasks' sections, taken level by level (one running sum), so it should grow
//!   as `n log n` (the levels are sorted), not `n^2`; under IPCP each is one maximum.
//! - `response_times`: the response-time analysis with blocking on that result: the levels
//!   above a task are one list of terms kept from level to level, and most terms of this
//!   set are one job (no division).
//!
//! The systems and the analysis the second group reads are made before timing and only
//! borrowed by the timed call; the result's allocation is part of what is measured. The
//! caches are warm (the same system every iteration).

use std::hint::black_box;

use bulwark_analysis::blocking::{
    analyse, response_times, Cpi, CpiProtocol, Overheads, System, Task,
};
use bulwark_core::{Duration, Priority};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

const SIZES: [u32; 3] = [1_000, 5_000, 20_000];

/// `n` clients of 1 us every `1 s + level ms` over 200 levels, rate-monotonic, each calling
/// the server's CPI once (its procedure 1 us): a load far below 1.
fn star(n: u32, protocol: CpiProtocol) -> System {
    let server = bulwark_analysis::blocking::CpiId(0);
    let tasks = (0..n)
        .map(|i| {
            let level = u64::from(i) * 200 / u64::from(n);
            Task::new(
                format!("t{i}"),
                Duration::from_micros(1),
                Duration::from_millis(1_000 + level),
                Priority(255 - level as u8),
            )
            .requesting(&[server])
        })
        .collect();
    System {
        tasks,
        cpis: vec![Cpi::new("server", Duration::from_micros(1), protocol)],
    }
}

fn component_analysis(c: &mut Criterion) {
    let mut group = c.benchmark_group("component_analysis");
    group.sample_size(10);
    for n in SIZES {
        for (name, protocol) in [("pip", CpiProtocol::Inherited), ("ipcp", CpiProtocol::Ipcp)] {
            let system = star(n, protocol);
            let analysis = analyse(&system, &Overheads::ZERO).expect("a star has no cycle");
            // Checked once, untimed: the star is admitted, each lower section blocking once.
            let timings = analysis.timings();
            assert!(response_times(&timings)
                .iter()
                .all(|r| r.verdict.admitted()));
            group.bench_with_input(
                BenchmarkId::new(format!("analyse/{name}"), n),
                &system,
                |b, system| b.iter(|| black_box(analyse(black_box(system), &Overheads::ZERO))),
            );
            if protocol == CpiProtocol::Inherited {
                group.bench_with_input(
                    BenchmarkId::new("response_times", n),
                    &timings,
                    |b, timings| b.iter(|| black_box(response_times(black_box(timings)))),
                );
            }
        }
    }
    group.finish();
}

criterion_group!(benches, component_analysis);
criterion_main!(benches);
