//! The sweep's unit of work: one 10-task set at utilisation 0.9 (UUniFast, log-uniform
//! periods 10 ms to 1 s, half the sets with constrained deadlines), per test (the plain-set
//! tests and the SPR paper's Eq. 1 over one reservation per task, without and with Eq. 2's
//! overheads; the VBS paper's Eq. (2) and the MC-IPC paper's budget sizing), and the draw of a set itself, by UUniFast and by Stafford's randfixedsum. The
//! sets are drawn before timing; each timed call takes the next of a pool of 64 so no one
//! set's shape dominates. The pool stays warm in cache across calls.

use std::hint::black_box;

use bulwark_analysis::classic::Task;
use bulwark_analysis::sweep::verdict::Overheads;
use bulwark_analysis::sweep::{sets, verdict};
use bulwark_core::Duration;
use bulwark_spec::sweep_toml::{
    ComponentSplit, Components, Experiment, McIpcServer, PeriodKind, UtilisationGenerator,
    PAPER_TESTS, SWEEP_TESTS,
};
use bulwark_spec::CostModel;
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
        vbs_periods_per_job: 4,
        mcipc_server: None,
        components: None,
        criticality: None,
        cores: None,
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
    // spr-eq1 without overheads, and with a [cost] table at 1 GHz (2,000 cycles of interrupt,
    // 1,000 of scheduler, 100 per work unit, 2,000 of context switch, 10,000 of cache refill)
    // and eta = 200 us, which sizes every budget by Eq. 2.
    let costly = Overheads {
        cost: Some(CostModel {
            clock_hz: 1_000_000_000,
            timer_interrupt: 2_000,
            scheduler: 1_000,
            per_work_unit: 100,
            context_switch: 2_000,
            cache_refill: 10_000,
            ..CostModel::default()
        }),
        non_preemptive: Duration::from_micros(200),
        ..Overheads::default()
    };
    for (name, overheads) in [("spr-eq1", Overheads::default()), ("spr-eq1-eq2", costly)] {
        let mut next = 0usize;
        group.bench_function(name, |b| {
            b.iter(|| {
                next = (next + 1) % pool.len();
                black_box(verdict::accepts_with(
                    "spr-eq1",
                    black_box(&pool[next]),
                    &overheads,
                ))
            })
        });
    }
    // The other papers' tests: vbs-eq2 with k = 4, and mcipc-budget with a server invoked
    // twice per job for 50 us operations from 4 clusters (the example papers.toml).
    let papers = Overheads {
        mcipc_server: Some(McIpcServer {
            invocations: 2,
            operation_length: 50_000,
            clusters: 4,
        }),
        components: Some(Components {
            configuration: 1,
            split: ComponentSplit::Equal,
        }),
        ..Overheads::default()
    };
    for test in PAPER_TESTS {
        let mut next = 0usize;
        group.bench_function(test, |b| {
            b.iter(|| {
                next = (next + 1) % pool.len();
                black_box(verdict::accepts_with(test, black_box(&pool[next]), &papers))
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
    let stafford = Experiment {
        generator: UtilisationGenerator::RandFixedSum,
        ..experiment()
    };
    let mut set = 0u64;
    group.bench_function("draw-randfixedsum", |b| {
        b.iter(|| {
            set += 1;
            black_box(sets::draw(
                &stafford,
                0,
                black_box(set),
                10,
                UTILISATION_PPB,
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
