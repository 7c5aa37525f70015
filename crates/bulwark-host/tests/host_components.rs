//! Component systems on this machine's core 1: the component kernel as the dispatcher, real
//! threads doing the work. Each test runs a system on the host and in the simulator (zero
//! protocol costs: on the host the dispatcher's real time is the cost) and compares. They need
//! SCHED_FIFO (CI runs as root); without it each test says so and checks the error instead.
//! Runs are short (at most half a second) and watched by the runtime's watchdog.

mod common;

use common::managed_core;

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_host::HostConfig;
use bulwark_sim::components::{
    run, ComponentOutcome, ComponentSystemConfig, CpiProtocol, LoweredCpi, LoweredTask,
    ProtocolCosts, RunOptions, Step,
};

/// How much later than the simulator's a host job may complete: the dispatcher's entries
/// and the platform's wake-up latencies over one job (a few microseconds each here; a loaded
/// virtual machine can add a few hundred).
const SLACK: Duration = Duration::from_micros(1_500);

/// How much later than the simulator's a job may complete in a run whose timers were `stats`
/// late, when it waits for at most `timers` timer expirations (releases, replenishments):
/// [`SLACK`], plus each of those timers as late as the run's latest. A loaded machine can
/// deliver a timer milliseconds late, which no mechanism under test can make up for; what
/// the run measured is the tolerance, not a constant.
fn allowance(stats: &bulwark_host::HostStats, timers: u64) -> Duration {
    SLACK.saturating_add(Duration::from_nanos(
        stats.timer_lateness.max_ns.saturating_mul(timers),
    ))
}

/// How many times a real run may be made before its checks count as failed. A run on a
/// shared virtual machine can lose milliseconds to the hypervisor, which no mechanism under
/// test can make up for: the PIP test failed 1 run in 15 so, code unchanged, with every
/// timer on time; and once in a CI run all three back-to-back attempts lost the same 1.66 ms
/// (low's job at 15.66 ms against 14), the same binary then passing alone 3 times in 3.
const ATTEMPTS: usize = 5;

/// The pause between attempts, so that a slow stretch of the shared machine (seconds, at
/// times) is not met by every attempt.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(300);

/// Runs `attempt` until one passes, at most [`ATTEMPTS`] times; the last failure is the
/// test's.
fn in_attempts(attempt: impl Fn()) {
    for left in (0..ATTEMPTS).rev() {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&attempt)) {
            Ok(()) => return,
            Err(failure) if left == 0 => std::panic::resume_unwind(failure),
            Err(_) => {
                eprintln!("a real run failed its checks; {left} attempt(s) left");
                std::thread::sleep(PAUSE);
            }
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn config(until: Duration) -> HostConfig {
    HostConfig {
        until: Some(until),
        record_jobs: true,
        ..HostConfig::default()
    }
}

fn task(name: &str, priority: u8, period: u64, offset: u64, body: Vec<Step>) -> LoweredTask {
    LoweredTask {
        name: name.into(),
        priority: Priority(priority),
        period: ms(period),
        offset: ms(offset),
        body,
        reservation: None,
    }
}

fn simulate(system: &ComponentSystemConfig, until: Duration) -> ComponentOutcome {
    run(
        system,
        RunOptions {
            until: Instant::ZERO.saturating_add(until),
            record_jobs: true,
            record_trace: false,
        },
    )
    .expect("a valid system")
}

/// Every job's completion, in (release, task) order, from the host and the simulator.
fn completions(outcome: &ComponentOutcome) -> Vec<(Instant, usize, Option<Instant>)> {
    let mut all: Vec<_> = outcome
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            t.job_records
                .iter()
                .map(move |j| (j.release, i, j.completion))
        })
        .collect();
    all.sort();
    all
}

/// Half the smallest gap between two events whose order the classic schedule depends on:
/// `low` takes `A` 1 ms after its release, 1 ms before `high` arrives. A run whose timers
/// were later than this may legitimately run another schedule (`low`'s release late by 1 ms
/// lets `high` find `A` free), so it does not test the protocol.
const ORDER_MARGIN: Duration = Duration::from_micros(500);

/// Host runs of a test at most: a shared machine can deliver timers milliseconds late for
/// seconds at a time.
const RUNS: usize = 6;

/// Runs `system` on the host until one run's timers are all less than `margin` late, at most
/// [`RUNS`] times, and returns that run. A run that fails for any other reason is returned as
/// it is, for the test to judge; only the timers' measured lateness, which no mechanism
/// under test controls, makes a run inconclusive.
fn conclusive_run(
    system: &ComponentSystemConfig,
    until: Duration,
    margin: Duration,
) -> bulwark_host::HostComponentOutcome {
    let mut lateness = Vec::new();
    for _ in 0..RUNS {
        let host = bulwark_host::run_components(system, &config(until)).expect("the host run");
        if host.host.timer_lateness.max_ns < margin.as_nanos() {
            return host;
        }
        lateness.push(host.host.timer_lateness.max_ns);
    }
    panic!(
        "{RUNS} host runs had a timer {lateness:?} ns late, each at least the {} ns the \
         schedule's order allows: this machine cannot run the test",
        margin.as_nanos()
    );
}

/// The classic inversion of the component tests, every 50 ms: `low` (10) holds CPI `A`
/// (PIP, 4 ms) from 1 ms; `high` (20) asks for it at 2 ms; `mid` (15, 3 ms) arrives at 3 ms.
/// Worked by hand (the simulator's test of the same schedule): high completes at 10, mid at
/// 13, low at 14, in every period; high is inverted 3 ms (low's section, 2-5), mid 2 ms.
fn classic() -> ComponentSystemConfig {
    ComponentSystemConfig {
        tasks: vec![
            task(
                "low",
                10,
                50,
                0,
                vec![Step::Execute(ms(1)), Step::Request(0), Step::Execute(ms(1))],
            ),
            task(
                "high",
                20,
                50,
                2,
                vec![Step::Request(0), Step::Execute(ms(1))],
            ),
            task("mid", 15, 50, 3, vec![Step::Execute(ms(3))]),
        ],
        cpis: vec![LoweredCpi {
            name: "A".into(),
            protocol: CpiProtocol::Inherited,
            ceiling: Priority(20),
            threads: 3,
            body: vec![Step::Execute(ms(4))],
            task_bodies: Vec::new(),
        }],
        costs: ProtocolCosts::ZERO,
    }
}

#[test]
fn pip_on_real_threads_keeps_the_simulators_schedule_and_inversion() {
    let Some(_core) = managed_core() else {
        return;
    };
    in_attempts(|| {
        let system = classic();
        let until = ms(500);
        let simulated = simulate(&system, until);
        // The hand-worked schedule, first period: the simulator agrees before the host is judged.
        let first: Vec<_> = simulated
            .tasks
            .iter()
            .map(|t| t.job_records[0].completion)
            .collect();
        let at = |n| Some(Instant::ZERO.saturating_add(ms(n)));
        assert_eq!(first, [at(14), at(10), at(13)]);
        let host = conclusive_run(&system, until, ORDER_MARGIN);
        let outcome = &host.outcome;
        assert_eq!(outcome.protocol_errors, 0);
        assert_eq!(outcome.pool_exhausted, 0);
        let (real, model) = (completions(outcome), completions(&simulated));
        assert_eq!(real.len(), model.len(), "the same jobs are released");
        let end = Instant::ZERO.saturating_add(until);
        for (r, m) in real.iter().zip(&model) {
            assert_eq!((r.0, r.1), (m.0, m.1), "the same release");
            if r.0 == end {
                // Released at the (inclusive) end of the run: `low` at 500 ms, unfinished on
                // both.
                assert_eq!((r.2, m.2), (None, None));
                continue;
            }
            let (Some(done), Some(expected)) = (r.2, m.2) else {
                panic!("job of task {} released at {:?} did not complete", r.1, r.0);
            };
            // A period's three releases are the timers a job can wait for.
            let late = allowance(&host.host, 3);
            assert!(
                done >= expected && done <= expected.saturating_add(late),
                "task {} released at {:?}: completed at {:?}, the simulator at {:?}, the timers \
                 late by at most {} ns",
                r.1,
                r.0,
                done,
                expected,
                host.host.timer_lateness.max_ns
            );
        }
        // The protocol bounds inversion to low's one section, on real threads too.
        let high = &outcome.tasks[1];
        assert!(high.max_inversion >= ms(3), "{:?}", high.max_inversion);
        assert!(
            high.max_inversion <= ms(3).saturating_add(SLACK),
            "{:?}",
            high.max_inversion
        );
        assert_eq!(high.max_lower_jobs, 1);
        assert_eq!(outcome.misses(), 0);
        assert!(host.host.entries > 0);
    });
}

/// A task in an SPR reservation of 2 ms every 10 ms (S = 2) whose job needs 5 ms: the budget
/// is enforced for real. Worked by hand: it runs 0-2, is exhausted; the replenishment of the
/// 2 ms spent from 0 comes at 10, so 10-12, exhausted; 20-21 completes it at 21 ms. Without
/// enforcement it would complete at 5 ms.
#[test]
fn a_reservation_throttles_a_real_thread_at_its_budget() {
    let Some(_core) = managed_core() else {
        return;
    };
    in_attempts(|| {
        let system = ComponentSystemConfig {
            tasks: vec![LoweredTask {
                reservation: Some(Reservation {
                    budget: ms(2),
                    period: ms(10),
                    replenishments: 2,
                    non_preemptive: Duration::ZERO,
                }),
                ..task("greedy", 10, 50, 0, vec![Step::Execute(ms(5))])
            }],
            cpis: Vec::new(),
            costs: ProtocolCosts::ZERO,
        };
        let until = ms(200);
        let simulated = simulate(&system, until);
        let model = &simulated.tasks[0];
        assert_eq!(model.max_response, ms(21));
        assert_eq!(model.budget_exhaustions, 8);
        let host = bulwark_host::run_components(&system, &config(until)).expect("the host run");
        let real = &host.outcome.tasks[0];
        assert_eq!(real.jobs, model.jobs);
        assert_eq!(real.budget_exhaustions, model.budget_exhaustions);
        // Each exhaustion stopped the thread in its own code: the preemption signal parked it.
        assert!(host.host.preempt_signals >= model.budget_exhaustions);
        // The thread spins until it has had 5 ms of CPU. Until the late budget timer wakes the
        // dispatcher, it keeps running past its exhaustion (the kernel charges that to the budget
        // too), so each of a job's two exhaustions can bring its completion forward by as much as
        // a timer's lateness.
        let overrun = Duration::from_nanos(host.host.timer_lateness.max_ns.saturating_mul(2));
        // Releases at 0, 50, 100, 150 and at the run's (inclusive) end, 200 ms: that last job is
        // unfinished on both.
        assert_eq!(model.jobs, 5);
        let (finished, last) = real.job_records.split_at(4);
        assert_eq!(last[0].release, Instant::ZERO.saturating_add(until));
        assert_eq!(last[0].completion, None);
        for job in finished {
            let response = job
                .completion
                .expect("completed")
                .saturating_duration_since(job.release);
            // Its two replenishments, at 10 and 20 ms, are the timers it waits for.
            let late = allowance(&host.host, 2);
            assert!(
                response >= ms(21).saturating_sub(overrun)
                    && response <= ms(21).saturating_add(late),
                "{response:?}, the timer late by at most {} ns",
                host.host.timer_lateness.max_ns
            );
        }
    });
}

mod mc_ipc {
    use super::*;
    use bulwark_sim::Kept;
    use bulwark_spec::Scenario;

    /// One client in a sporadic reservation of 10 ms every 100 ms on a cluster of `cores`
    /// cores, and one MC-IPC server: each job computes 1 ms, invokes the server for 2 ms,
    /// computes 1 ms and sleeps. Worked by hand: the server runs the operation on the client's
    /// reservation from 1 to 3 ms, so every invocation's delay is 2 ms and every job
    /// completes 4 ms after its release.
    fn lone_client(cores: u16) -> Scenario {
        let list = (0..cores)
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let text = format!(
            "name = \"lone\"\npolicy = \"fixed-priority\"\ncores = {cores}\n\
             duration = \"300ms\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [{list}]\norder = \"fixed-priority\"\n\n\
             [[server]]\nname = \"S\"\ngate = \"mc-ipc\"\noperation = \"2ms\"\n\n\
             [[task]]\nname = \"client\"\ncluster = \"k\"\npriority = 1\n\
             reservation = {{ budget = \"10ms\", period = \"100ms\" }}\n\
             script = [{{ loop = \"forever\", body = [{{ run = \"1ms\" }}, \
             {{ invoke = \"S\" }}, {{ run = \"1ms\" }}, \
             {{ sleep-until-next-release = \"100ms\" }}] }}]\n"
        );
        bulwark_spec::parse(&text, "lone.toml").unwrap_or_else(|e| panic!("{}", e.plain()))
    }

    #[test]
    fn a_real_server_thread_serves_a_client_on_its_reservation() {
        let Some(_core) = managed_core() else {
            return;
        };
        in_attempts(|| {
            let mut invocations = Kept::default();
            let host =
                bulwark_host::run_machine(&lone_client(1), &config(ms(300)), &mut invocations)
                    .expect("the host run");
            let jobs = host.outcome.jobs.as_ref().expect("jobs recorded");
            // Releases at 0, 100 and 200 ms; the horizon at 300 ms is inclusive, so a fourth
            // job is released at the end itself and cannot have run.
            let done: Vec<_> = jobs
                .iter()
                .filter(|j| j.release < Instant::from_nanos(300_000_000))
                .collect();
            assert_eq!(done.len(), 3, "{jobs:?}");
            // Its release is the one timer a job waits for.
            let late = allowance(&host.host, 1);
            for job in done {
                let response = job
                    .completion
                    .expect("completed")
                    .saturating_duration_since(job.release);
                assert!(
                    response >= ms(4) && response <= ms(4).saturating_add(late),
                    "{response:?}, the timer late by at most {} ns",
                    host.host.timer_lateness.max_ns
                );
            }
            assert_eq!(invocations.invocations.len(), 3);
            for invocation in &invocations.invocations {
                let delay = invocation
                    .replied
                    .saturating_duration_since(invocation.invoked);
                assert!(
                    delay >= ms(2) && delay <= ms(2).saturating_add(SLACK),
                    "{delay:?}"
                );
            }
            // The server's 2 ms are its client's time, as in the simulator: 4 ms a job.
            let client = &host.outcome.tasks[0];
            assert!(client.executed_ns >= 12_000_000, "{client:?}");
            assert!(client.server_ns >= 6_000_000, "{client:?}");
            assert!(host.host.entries > 0);
        });
    }

    /// The runtime manages one core: a cluster of two cores is refused, saying why, before
    /// anything starts (no privilege needed to see it).
    #[test]
    fn a_system_of_more_than_one_core_is_refused() {
        let error =
            bulwark_host::run_machine(&lone_client(2), &config(ms(100)), &mut Kept::default())
                .unwrap_err();
        assert!(error.to_string().contains("one core"), "{error}");
    }

    /// Its kernel's time is the dispatcher's: a system with kernel costs is refused, saying
    /// which section to remove.
    #[test]
    fn a_system_with_kernel_costs_is_refused() {
        let mut scenario = lone_client(1);
        scenario.cost.scheduler = 100;
        let error = bulwark_host::run_machine(&scenario, &config(ms(100)), &mut Kept::default())
            .unwrap_err();
        assert!(
            error.to_string().contains("charges `scheduler` cycles"),
            "{error}"
        );
    }
}
