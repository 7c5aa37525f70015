//! The cost of our component-IPC protocol code (CAmkES paper, Table 2 and Fig. 6), on the
//! core's own state machines: what a CPI does on a request's call path and on its reply path,
//! per protocol, and the notification manager's push + pop against the number of waiters.
//!
//! Only the protocol steps are timed, not a kernel's IPC or `seL4_TCB_SetPriority` (the
//! effects are returned, not carried out): so these are the framework's own overheads, the
//! part the paper's Table 2 adds on top of the seL4 call and reply. Each timed call runs on a
//! fresh clone of a prepared state, made outside the timing; its outcome is checked once,
//! untimed, before the group runs.

use std::hint::black_box;
use std::time::Duration as WallDuration;

use bulwark_core::ipc::inherit::Admission;
use bulwark_core::ipc::notification::NotificationManager;
use bulwark_core::ipc::{CpiId, FixedCpi, InheritCpi, PropagateCpi, Request};
use bulwark_core::{Priority, TaskId, Work};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

fn req(priority: u8, task: u32) -> Request {
    Request {
        priority: Priority(priority),
        requestor: TaskId(task),
    }
}

const CEILING: Priority = Priority(50);

/// Call and reply paths per protocol.
fn protocols(c: &mut Criterion) {
    let mut g = c.benchmark_group("cpi_paths");
    g.measurement_time(WallDuration::from_secs(1))
        .warm_up_time(WallDuration::from_millis(300))
        .sample_size(30);

    let free = InheritCpi::new(CEILING, 4);
    let mut held = free.clone();
    held.request(0, req(10, 1), &mut Work::default()).unwrap();
    // Checked once: the free lock is acquired, the held one makes the caller wait.
    let mut probe = held.clone();
    let (a, e) = probe.request(1, req(30, 2), &mut Work::default()).unwrap();
    assert_eq!((a, e.len()), (Admission::Waiting, 1));

    g.bench_function("pip_call_unlocked", |b| {
        b.iter_batched_ref(
            || free.clone(),
            |cpi| cpi.request(0, black_box(req(10, 1)), &mut Work::default()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("pip_call_locked", |b| {
        b.iter_batched_ref(
            || held.clone(),
            |cpi| cpi.request(1, black_box(req(30, 2)), &mut Work::default()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("pip_reply_no_waiter", |b| {
        b.iter_batched_ref(
            || held.clone(),
            |cpi| cpi.finish(0, &mut Work::default()),
            BatchSize::SmallInput,
        )
    });
    let mut contended = held.clone();
    contended
        .request(1, req(30, 2), &mut Work::default())
        .unwrap();
    g.bench_function("pip_reply_wakes_waiter", |b| {
        b.iter_batched_ref(
            || contended.clone(),
            |cpi| cpi.finish(0, &mut Work::default()),
            BatchSize::SmallInput,
        )
    });

    // Nested PIP: the holder's nested request goes out (15-18) and comes back (19-20), and a
    // higher request pushes `nest` down to it.
    let mut nesting = held.clone();
    g.bench_function("pip_nested_begin_end", |b| {
        b.iter_batched_ref(
            || held.clone(),
            |cpi| {
                let out = cpi.begin_nested(0, CpiId(1));
                let back = cpi.end_nested(0);
                (out, back)
            },
            BatchSize::SmallInput,
        )
    });
    nesting.begin_nested(0, CpiId(1)).unwrap();
    let mut downstream = InheritCpi::new(CEILING, 4);
    downstream
        .request(0, req(5, 9), &mut Work::default())
        .unwrap();
    downstream
        .request(1, req(10, 1), &mut Work::default())
        .unwrap();
    g.bench_function("pip_nest_update", |b| {
        b.iter_batched_ref(
            || downstream.clone(),
            |cpi| cpi.nest(black_box(Priority(40)), TaskId(1), &mut Work::default()),
            BatchSize::SmallInput,
        )
    });

    let propagate = PropagateCpi::new(CEILING, 4);
    let mut serving = propagate.clone();
    let (thread, _) = serving.request(req(10, 1), &mut Work::default()).unwrap();
    g.bench_function("propagated_call", |b| {
        b.iter_batched_ref(
            || propagate.clone(),
            |cpi| cpi.request(black_box(req(10, 1)), &mut Work::default()),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("propagated_reply", |b| {
        b.iter_batched_ref(
            || serving.clone(),
            |cpi| cpi.finish(thread),
            BatchSize::SmallInput,
        )
    });

    for (name, fixed) in [
        ("ipcp", FixedCpi::ipcp(CEILING, 4)),
        ("npcs", FixedCpi::npcs(4)),
    ] {
        let mut busy = fixed.clone();
        busy.request(req(10, 1)).unwrap();
        g.bench_function(format!("{name}_call"), |b| {
            b.iter_batched_ref(
                || fixed.clone(),
                |cpi| cpi.request(black_box(req(10, 1))),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(format!("{name}_reply"), |b| {
            b.iter_batched_ref(|| busy.clone(), |cpi| cpi.finish(), BatchSize::SmallInput)
        });
    }
    g.finish();
}

/// Fig. 6: with n - 1 waiters of random priorities, one more waits (push) and the head is
/// woken (pop).
fn notification_manager(c: &mut Criterion) {
    let mut g = c.benchmark_group("notification_push_pop");
    g.measurement_time(WallDuration::from_secs(1))
        .warm_up_time(WallDuration::from_millis(300))
        .sample_size(30);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        // A 64-bit LCG (Knuth's constants): deterministic priorities without a dependency.
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as u8
    };
    for n in [1u32, 2, 5, 10, 20, 50, 100] {
        let mut m = NotificationManager::with_threads(n as usize);
        let mut w = Work::default();
        for t in 0..n - 1 {
            m.wait(t, req(next(), 1000 + t), &mut w).unwrap();
        }
        let newcomer = req(next(), 5000);
        // Checked once: the pop returns the maximum priority, earliest insertion.
        let mut probe = m.clone();
        probe.wait(n - 1, newcomer, &mut w).unwrap();
        let best = probe.peek().unwrap().request.priority;
        assert_eq!(probe.signal(&mut w).unwrap().request.priority, best);
        g.bench_with_input(BenchmarkId::from_parameter(n), &m, |b, m| {
            b.iter_batched_ref(
                || m.clone(),
                |m| {
                    let mut w = Work::default();
                    let _ = m.wait(n - 1, black_box(newcomer), &mut w);
                    m.signal(&mut w)
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, protocols, notification_manager);
criterion_main!(benches);
