//! Scheduling contexts of component systems on the one machine: SPR reservations whose budget every thread
//! working for a task spends (its own, and a server's while it serves the task's request),
//! and their non-preemptive regions, on schedules worked out by hand (the property over random
//! systems is with the machine's other properties, in `components.rs`).

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::components::{
    run, CallReply, ComponentOutcome, ComponentSystemConfig, CpiProtocol, LoweredCpi, LoweredTask,
    ProtocolCosts, RunOptions, Step,
};
use bulwark_sim::trace::Trace;

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn at_us(n: u64) -> Instant {
    Instant::ZERO.saturating_add(us(n))
}

fn reservation(budget: u64, period: u64, eta: u64) -> Option<Reservation> {
    Some(Reservation::new(us(budget), us(period)).with_non_preemptive(us(eta)))
}

fn task(name: &str, priority: u8, period: u64, offset: u64, body: Vec<Step>) -> LoweredTask {
    LoweredTask {
        name: name.into(),
        priority: Priority(priority),
        period: us(period),
        offset: us(offset),
        body,
        reservation: None,
    }
}

fn system(tasks: Vec<LoweredTask>, cpis: Vec<LoweredCpi>) -> ComponentSystemConfig {
    ComponentSystemConfig {
        tasks,
        cpis,
        costs: ProtocolCosts::ZERO,
    }
}

/// A propagated CPI `name` of one thread waiting at `ceiling`, whose procedure runs `work`
/// microseconds.
fn propagated(name: &str, ceiling: u8, work: u64) -> LoweredCpi {
    LoweredCpi {
        name: name.into(),
        protocol: CpiProtocol::Propagated,
        ceiling: Priority(ceiling),
        threads: 1,
        body: vec![Step::Execute(us(work))],
        task_bodies: Vec::new(),
    }
}

fn simulate(config: &ComponentSystemConfig, until_us: u64) -> (ComponentOutcome, Trace) {
    let mut outcome = run(
        config,
        RunOptions {
            until: at_us(until_us),
            record_jobs: true,
            record_trace: true,
        },
    )
    .unwrap();
    assert_eq!(outcome.protocol_errors, 0);
    let trace = outcome.trace.take().expect("recorded");
    (outcome, trace)
}

/// `(start, end)` in microseconds of `task`'s slices.
fn slices_of(trace: &Trace, task: u32) -> Vec<(u64, u64)> {
    trace
        .slices
        .iter()
        .filter(|s| s.task == Some(TaskId(task)))
        .map(|s| (s.start.as_nanos() / 1_000, s.end.as_nanos() / 1_000))
        .collect()
}

/// An endless job in a reservation of 2 ms every 10 ms runs exactly 2 ms per period: from
/// each replenishment (at 0, 10, 20 ms: the sporadic rule plans the used 2 ms one period
/// after the activation at 0, then after each restart) to its depletion.
#[test]
fn an_endless_job_runs_its_budget_per_period_and_no_more() {
    let mut endless = task(
        "endless",
        10,
        100_000,
        0,
        vec![Step::Execute(us(1_000_000))],
    );
    endless.reservation = reservation(2_000, 10_000, 0);
    let (outcome, trace) = simulate(&system(vec![endless], vec![]), 35_000);
    assert_eq!(
        slices_of(&trace, 0),
        [
            (0, 2_000),
            (10_000, 12_000),
            (20_000, 22_000),
            (30_000, 32_000)
        ]
    );
    assert_eq!(outcome.tasks[0].budget_exhaustions, 4);
    assert_eq!(outcome.busy, us(8_000));
}

/// A server's time is its caller's budget: a client with 3 ms per 10 ms calls a server whose
/// procedure runs 5 ms. The client runs 1 ms, the server 2 ms on the client's budget, then
/// both wait for the replenishment at 10 ms; the server's 3 ms left take the whole second
/// budget (10-13), and the client's last 1 ms waits for the third (20-21).
#[test]
fn a_server_spends_its_caller_s_budget() {
    let mut client = task(
        "client",
        10,
        100_000,
        0,
        vec![
            Step::Execute(us(1_000)),
            Step::Request(0),
            Step::Execute(us(1_000)),
        ],
    );
    client.reservation = reservation(3_000, 10_000, 0);
    let server = propagated("server", 10, 5_000);
    let (outcome, trace) = simulate(&system(vec![client], vec![server]), 50_000);
    assert_eq!(
        slices_of(&trace, 0),
        [(0, 3_000), (10_000, 13_000), (20_000, 21_000)]
    );
    assert_eq!(
        outcome.tasks[0].job_records[0].completion,
        Some(at_us(21_000))
    );
    assert_eq!(outcome.tasks[0].budget_exhaustions, 2);
}

/// A low-priority task dispatched at 0 with eta = 1 ms keeps the core when a high-priority
/// job arrives at 0.4 ms, until its region ends at 1 ms: the high job waits 0.6 ms, all of
/// it inversion, and completes at 1 + 0.5 = 1.5 ms. With eta = 0 it preempts at once.
#[test]
fn a_non_preemptive_region_defers_a_preemption_to_its_end() {
    let build = |eta: u64| {
        let mut low = task("low", 1, 100_000, 0, vec![Step::Execute(us(5_000))]);
        low.reservation = reservation(10_000, 100_000, eta);
        let high = task("high", 9, 100_000, 400, vec![Step::Execute(us(500))]);
        system(vec![low, high], vec![])
    };
    let (shielded, _) = simulate(&build(1_000), 20_000);
    let high = &shielded.tasks[1].job_records[0];
    assert_eq!(high.completion, Some(at_us(1_500)));
    assert_eq!(high.inversion, us(600));
    let (plain, _) = simulate(&build(0), 20_000);
    let high = &plain.tasks[1].job_records[0];
    assert_eq!(high.completion, Some(at_us(900)));
    assert_eq!(high.inversion, Duration::ZERO);
}

/// The region is bounded by the budget (Algorithm 2, line 6: min(t_d, ...)): with 0.7 ms of
/// budget and eta = 1 ms the low task leaves the core at 0.7 ms, and the high job runs then.
#[test]
fn a_region_ends_when_the_budget_does() {
    let mut low = task("low", 1, 100_000, 0, vec![Step::Execute(us(5_000))]);
    low.reservation = reservation(700, 100_000, 1_000);
    let high = task("high", 9, 100_000, 400, vec![Step::Execute(us(500))]);
    let (outcome, _) = simulate(&system(vec![low, high], vec![]), 20_000);
    let high = &outcome.tasks[1].job_records[0];
    assert_eq!(high.completion, Some(at_us(1_200)));
    assert_eq!(high.inversion, us(300));
}

/// A region belongs to the context, not the thread (Algorithm 2, line 5: `x_n <- t_now`
/// only when another reservation ran before). `low` (eta 1 ms) is dispatched at 0 and calls
/// CPI `A` at 0.1 ms; the server thread that takes its context continues the region begun at
/// 0, it does not start one of its own, so `high`, released at 1.05 ms, preempts at once:
/// it completes at 1.55 ms with no inversion. (Were the region restarted at the call, it
/// would last until 1.1 ms and `high` would complete at 1.6 ms.) The same when `A` replies
/// at 0.4 ms and `low` runs on: its thread takes back a region that still ends at 1 ms
/// (restarted at the reply, it would last until 1.4 ms, and `high` complete at 1.9 ms).
#[test]
fn a_server_thread_continues_its_caller_s_region() {
    let a = 0;
    // (A's procedure, what `low` does after the reply.)
    for (procedure, after) in [(2_000, 0), (300, 2_000)] {
        let mut body = vec![Step::Execute(us(100)), Step::Request(a)];
        if after > 0 {
            body.push(Step::Execute(us(after)));
        }
        let mut low = task("low", 1, 100_000, 0, body);
        low.reservation = reservation(10_000, 100_000, 1_000);
        let high = task("high", 9, 100_000, 1_050, vec![Step::Execute(us(500))]);
        let cpis = vec![propagated("A", 1, procedure)];
        let (outcome, _) = simulate(&system(vec![low, high], cpis), 20_000);
        let high = &outcome.tasks[1].job_records[0];
        assert_eq!(
            high.completion,
            Some(at_us(1_550)),
            "procedure {procedure} us"
        );
        assert_eq!(high.inversion, Duration::ZERO);
    }
}

/// A region defers activations that come during it, not a thread that was ready before it
/// (SPR section III-F). `low` (eta 0.4 ms) calls CPI `A` at 0, whose server thread spends
/// 0.6 ms of call steps at A's ceiling 9; its region ends at 0.4, so `top` (priority 10,
/// released at 0.5) preempts it, and `high` (9, released at 0.55) queues behind it at 9.
/// At 0.7 `top` is done and the preempted server resumes first (the head of its priority),
/// starting a new region until 1.1; its call steps end at 0.8 and it drops to `low`'s
/// priority. `high` was ready before that region began, so it preempts then: it runs
/// 0.8-1.3, its inversion the 0.1 ms of call steps. (Were every ready thread deferred until
/// the region's end, `high` would wait until 1.1 and complete at 1.6, 0.4 ms inverted.)
#[test]
fn a_region_does_not_defer_a_thread_ready_before_it() {
    let a = 0;
    let mut low = task("low", 1, 100_000, 0, vec![Step::Request(a)]);
    low.reservation = reservation(10_000, 100_000, 400);
    let top = task("top", 10, 100_000, 500, vec![Step::Execute(us(200))]);
    let high = task("high", 9, 100_000, 550, vec![Step::Execute(us(500))]);
    let cpis = vec![propagated("A", 9, 1_000)];
    let config = ComponentSystemConfig {
        costs: ProtocolCosts {
            propagated: CallReply::new(us(600), Duration::ZERO),
            ..ProtocolCosts::ZERO
        },
        ..system(vec![low, top, high], cpis)
    };
    let (outcome, _) = simulate(&config, 20_000);
    assert_eq!(outcome.tasks[1].job_records[0].completion, Some(at_us(700)));
    let high = &outcome.tasks[2].job_records[0];
    assert_eq!(high.completion, Some(at_us(1_300)));
    assert_eq!(high.inversion, us(100));
}
