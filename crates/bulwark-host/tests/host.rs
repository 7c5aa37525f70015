//! Integration tests of the hosted runtime on this machine's core 1. They need SCHED_FIFO
//! (CI runs as root); without the privilege each test says so and checks the error instead.
//! Every run is short (at most a second), watched by the runtime's watchdog, and the tests
//! run one at a time so that two runtimes never share the managed core.

mod common;

use common::managed_core;

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_host::{HostConfig, HostError};
use bulwark_sim::SliceKind;

fn config() -> HostConfig {
    HostConfig {
        record_jobs: true,
        record_trace: true,
        ..HostConfig::default()
    }
}

fn scenario(text: &str) -> bulwark_spec::Scenario {
    bulwark_spec::parse(text, "test.toml").expect("valid scenario")
}

/// The ids of this process's threads.
fn threads() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|e| e.ok()?.file_name().to_string_lossy().parse().ok())
        .collect()
}

fn any_real_time_thread() -> bool {
    threads().into_iter().any(|tid| {
        bulwark_host::sys::policy_of(tid)
            .is_ok_and(|p| p == libc::SCHED_FIFO || p == libc::SCHED_RR)
    })
}

/// No thread of this process is left under a real-time policy.
fn assert_no_real_time_thread() {
    for tid in threads() {
        if let Ok(policy) = bulwark_host::sys::policy_of(tid) {
            assert!(
                policy != libc::SCHED_FIFO && policy != libc::SCHED_RR,
                "thread {tid} is still real-time (policy {policy})"
            );
        }
    }
}

/// Completions in time order, as (task, job).
fn completion_order(jobs: &[bulwark_sim::JobRecord]) -> Vec<(TaskId, u64)> {
    let mut done: Vec<_> = jobs
        .iter()
        .filter_map(|j| j.completion.map(|at| (at, j.task, j.job)))
        .collect();
    done.sort();
    done.into_iter().map(|(_, t, j)| (t, j)).collect()
}

const TWO_TASKS: &str = r#"
name = "two-tasks"
policy = "fixed-priority"
duration = "1s"

[[task]]
name = "hi"
priority = 2
period = "10ms"
execution = "2ms"

[[task]]
name = "lo"
priority = 1
period = "25ms"
execution = "6ms"
"#;

#[test]
fn two_fixed_priority_tasks_complete_in_the_simulators_order() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(TWO_TASKS);
    let sim = bulwark_sim::run(
        &scenario,
        &bulwark_sim::Options {
            record_jobs: true,
            ..Default::default()
        },
    )
    .expect("simulation");
    let sim_order = completion_order(sim.jobs.as_deref().unwrap_or_default());
    // The core is shared: a timer woken late (the kernel's real-time throttling) or time
    // taken from the core (a hypervisor's steal, interrupts) can push a job past the other
    // task's next completion. Such a run is the machine's, not the runtime's: it is repeated,
    // at most six runs of one second each, and the last is judged (a clean-clone CI run once
    // had three in a row with timers 4 to 20 ms late). A runtime that gets the order wrong
    // gets it wrong every time.
    let mut host = bulwark_host::run(&scenario, &config()).expect("host run");
    for _ in 1..6 {
        let order = completion_order(host.outcome.jobs.as_deref().unwrap_or_default());
        let missed = host.outcome.tasks.iter().any(|task| task.misses > 0);
        if order == sim_order && !missed && !host.host.throttling_suspected {
            break;
        }
        eprintln!(
            "rerun: order as the simulator's: {}; a miss: {missed}; timers: {:?}",
            order == sim_order,
            host.host.timer_lateness
        );
        host = bulwark_host::run(&scenario, &config()).expect("host run");
    }
    let host_order = completion_order(host.outcome.jobs.as_deref().unwrap_or_default());
    // By hand: hi runs [0, 2), lo [2, 8) (hi's next release is at 10), hi [10, 12), hi [20,
    // 22), then lo's second job [25, 31) is preempted by hi at 30: hi [30, 32), lo [32, 33).
    let (hi, lo) = (TaskId(0), TaskId(1));
    assert_eq!(
        &host_order[..6],
        &[(hi, 0), (lo, 0), (hi, 1), (hi, 2), (hi, 3), (lo, 1)]
    );
    // Within one second: 100 jobs of hi and 40 of lo complete (U = 0.44, no misses), in the
    // same order as on the simulated machine.
    assert_eq!(host_order.len(), 140, "{host_order:?}");
    assert_eq!(host_order, sim_order, "{:?}", host.host);
    for task in &host.outcome.tasks {
        assert_eq!(task.misses, 0, "{}: {:?}", task.name, host.host);
    }
    // Kernel slices were measured, and the dispatcher's work is small beside the jobs.
    let trace = host.outcome.trace.as_ref().expect("trace");
    assert!(trace.slices.iter().any(|s| s.kind == SliceKind::Kernel));
    // (A tenth of the second: a few hundred entries of tens of microseconds each, with room
    // for a shared, loaded machine.)
    let kernel = host.outcome.cores[0].kernel_ns;
    assert!(kernel < 100_000_000, "kernel time {kernel} ns");
    assert_no_real_time_thread();
}

const ENDLESS: &str = r#"
name = "endless-in-a-reservation"
policy = "deferrable-server"
duration = "1s"

[[task]]
name = "endless"
priority = 1
reservation = { budget = "2ms", period = "10ms" }
script = [{ run = "10s" }]
"#;

#[test]
fn an_endless_task_gets_at_most_its_budget_plus_the_measured_overrun_per_period() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(ENDLESS);
    let host = bulwark_host::run(&scenario, &config()).expect("host run");
    let budget = Duration::from_millis(2).as_nanos();
    let period = Duration::from_millis(10).as_nanos();
    // The overrun is how late the budget timer woke the dispatcher: the task ran until then.
    let overrun = host.host.timer_lateness.max_ns;
    let trace = host.outcome.trace.as_ref().expect("trace");
    let mut per_period = vec![0u64; 100];
    for slice in trace
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Task && s.task == Some(TaskId(0)))
    {
        // Split each slice at the period boundaries (the deferrable server's replenishments).
        let mut start = slice.start.as_nanos();
        while start < slice.end.as_nanos() {
            let window = start / period;
            let end = slice.end.as_nanos().min((window + 1) * period);
            if let Some(total) = per_period.get_mut(window as usize) {
                *total += end - start;
            }
            start = end;
        }
    }
    for (k, &received) in per_period.iter().enumerate() {
        assert!(
            received <= budget + overrun,
            "period {k}: {received} ns > b + overrun = {budget} + {overrun}"
        );
    }
    // And the enforcement is not starvation: it is the only task, so in the full periods
    // after the first it gets its budget on average, and rarely much less (the machine is
    // shared: an interrupt or another core's work may cost a period some of it).
    let full = &per_period[1..99];
    let mean = full.iter().sum::<u64>() / full.len() as u64;
    assert!(mean >= budget * 9 / 10, "mean {mean}: {per_period:?}");
    let starved = full.iter().filter(|&&r| r < budget * 9 / 10).count();
    assert!(starved <= 5, "{starved} starved periods: {per_period:?}");
    assert_no_real_time_thread();
}

#[test]
fn a_user_closure_runs_under_a_reservation() {
    let Some(_core) = managed_core() else {
        return;
    };
    // The behaviour is a placeholder: the closure replaces it.
    let scenario = scenario(
        r#"
name = "closure"
policy = "spr-deferrable"
duration = "200ms"

[[task]]
name = "mine"
priority = 1
reservation = { budget = "1ms", period = "10ms" }
script = [{ run = "1ms" }]
"#,
    );
    let runs = std::sync::atomic::AtomicU64::new(0);
    let body: bulwark_host::Body = Box::new(|ctx| {
        let mut next = Instant::ZERO;
        loop {
            if ctx.run_for(Duration::from_micros(300)).is_err() {
                return;
            }
            runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            next = next.saturating_add(Duration::from_millis(10));
            if ctx.sleep_until(next).is_err() {
                return;
            }
        }
    });
    let host = bulwark_host::run_with(&scenario, &config(), vec![("mine".into(), body)])
        .expect("host run");
    // Twenty periods of 10 ms in 200 ms, each with one 300 us job well inside its 1 ms budget.
    let done = runs.load(std::sync::atomic::Ordering::Relaxed);
    assert!((19..=20).contains(&done), "{done}");
    assert!(host.outcome.tasks[0].completed >= 19);
    assert_no_real_time_thread();
}

#[test]
fn a_stalled_dispatcher_is_demoted_by_the_watchdog() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(ENDLESS);
    let config = HostConfig {
        until: Some(Duration::from_millis(500)),
        stall_dispatcher_at: Some(Duration::from_millis(50)),
        watchdog_timeout: Duration::from_millis(100),
        ..config()
    };
    let started = std::time::Instant::now();
    match bulwark_host::run(&scenario, &config) {
        Err(HostError::WatchdogFired {
            demoted,
            still_real_time,
            silent_for,
        }) => {
            // The dispatcher and the one task thread.
            assert_eq!(demoted, 2);
            assert_eq!(still_real_time, 0);
            assert!(silent_for >= Duration::from_millis(100));
        }
        other => panic!("expected the watchdog to fire, got {other:?}"),
    }
    // It fired long before the stalled dispatcher's own 3 s bound.
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_no_real_time_thread();
}

#[test]
fn the_platform_probe_spins_its_length_and_restores_its_thread() {
    let Some(_core) = managed_core() else {
        return;
    };
    let length = Duration::from_millis(100);
    let probe = bulwark_host::probe_platform(&config(), length).expect("probe");
    // It reads the clock until its length has passed: at most the last gap beyond it.
    assert!(probe.spun >= length, "{probe:?}");
    assert!(
        probe.spun
            <= length
                .saturating_add(probe.longest)
                .saturating_add(Duration::from_millis(1)),
        "{probe:?}"
    );
    // Every gap counted is over 1 ms and inside the time spun.
    assert!(probe.lost <= probe.spun, "{probe:?}");
    assert!(probe.lost.as_nanos() > probe.gaps * 1_000_000 || probe.gaps == 0);
    assert!(probe.longest <= probe.lost);
    assert_no_real_time_thread();
}

#[test]
fn a_missing_privilege_gives_the_documented_error() {
    // In a child process (the same test binary, this test only): lower RLIMIT_RTPRIO to 0 and
    // drop CAP_SYS_NICE, then ask for a run.
    if std::env::var_os("BULWARK_HOST_UNPRIVILEGED_CHILD").is_some() {
        let _ = bulwark_host::sys::set_rtprio_limit(0);
        let _ = bulwark_host::sys::drop_cap_sys_nice();
        let scenario = scenario(TWO_TASKS);
        match bulwark_host::run(&scenario, &config()) {
            Err(HostError::MissingPrivilege { what, how }) => {
                assert!(what.contains("CAP_SYS_NICE"), "{what}");
                assert!(what.contains("RLIMIT_RTPRIO is 0"), "{what}");
                assert!(how.contains("setcap cap_sys_nice+ep"), "{how}");
                assert!(how.contains("ulimit -r"), "{how}");
            }
            other => panic!("expected a missing privilege, got {other:?}"),
        }
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let status = std::process::Command::new(exe)
        .args([
            "--exact",
            "a_missing_privilege_gives_the_documented_error",
            "--test-threads=1",
        ])
        .env("BULWARK_HOST_UNPRIVILEGED_CHILD", "1")
        .status()
        .expect("child test");
    assert!(status.success(), "the unprivileged child failed: {status}");
}

#[test]
fn compute_and_flush_steps_run_for_real() {
    let Some(_core) = managed_core() else {
        return;
    };
    // One job: flush the cache, then 20 units of 200 us of matrix multiplies, then exit.
    // Alone on the core with no budget it finishes all 20 units well within 200 ms.
    let scenario = scenario(
        r#"
name = "real-work"
policy = "fixed-priority"
duration = "200ms"

[[task]]
name = "worker"
priority = 1
script = [{ flush-cache = true }, { compute = 20, each = "200us" }]
"#,
    );
    let host = bulwark_host::run(&scenario, &config()).expect("host run");
    let worker = &host.outcome.tasks[0];
    assert_eq!(worker.work_units, 20);
    assert_eq!(worker.completed, 1);
    // 20 units of at least 200 us of CPU each: at least 4 ms executed.
    assert!(worker.executed_ns >= 4_000_000, "{}", worker.executed_ns);
    assert!(host.host.matmul_ns > 0);
    assert_no_real_time_thread();
}

#[test]
fn ctrl_c_ends_the_run_and_restores_every_thread() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(ENDLESS);
    let result = std::thread::scope(|scope| {
        scope.spawn(|| {
            // Only once the run is under way (its threads are real-time), so that the
            // runtime's handler, not the default action, takes the signal.
            let waiting = std::time::Instant::now();
            while !any_real_time_thread() {
                if waiting.elapsed() > std::time::Duration::from_secs(10) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
            bulwark_host::sys::interrupt_self().expect("kill");
        });
        bulwark_host::run(&scenario, &config())
    });
    assert!(
        matches!(result, Err(HostError::Interrupted)),
        "expected an interrupted run, got {result:?}"
    );
    assert_no_real_time_thread();
}

#[test]
fn a_panicking_task_leaves_no_real_time_thread() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(
        r#"
name = "panics"
policy = "fixed-priority"
duration = "100ms"

[[task]]
name = "bad"
priority = 1
script = [{ run = "1ms" }]
"#,
    );
    let body: bulwark_host::Body = Box::new(|ctx| {
        let _ = ctx.run_for(Duration::from_millis(1));
        panic!("task code failed");
    });
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        bulwark_host::run_with(&scenario, &config(), vec![("bad".into(), body)])
    }));
    assert!(outcome.is_err(), "the task's panic reaches the caller");
    assert_no_real_time_thread();
}

#[test]
fn a_task_that_only_sleeps_into_the_past_still_ends_on_time() {
    let Some(_core) = managed_core() else {
        return;
    };
    // After 1 ms every sleep returns at once: the task makes requests back to back, and the
    // run must still end at 100 ms, not by the watchdog.
    let scenario = scenario(
        r#"
name = "busy-sleeper"
policy = "fixed-priority"
duration = "100ms"

[[task]]
name = "sleeper"
priority = 1
script = [{ loop = 1000000, body = [{ sleep-until = "1ms" }] }]
"#,
    );
    let started = std::time::Instant::now();
    let host = bulwark_host::run(&scenario, &config()).expect("host run, no watchdog");
    assert!(started.elapsed() < std::time::Duration::from_secs(1));
    // Every request is one job; there were many.
    assert!(
        host.outcome.tasks[0].jobs > 100,
        "{}",
        host.outcome.tasks[0].jobs
    );
    assert_no_real_time_thread();
}

/// A VBS controller (its code a closure) beside a busy VBS process.
const VBS_PAIR: &str = r#"
name = "vbs-pair"
policy = "vbs"
duration = "300ms"

[vbs]
strategy = "early"
plugin = "tree"
quantum = "10us"

[[task]]
name = "control"
cap = "1/5"
script = [{ loop = "forever", body = [
  { action = "600us", limit = "1ms", period = "5ms" },
  { action = "1200us", limit = "2ms", period = "10ms" },
] }]

[[task]]
name = "busy"
cap = "3/5"
script = [{ action = "10s", limit = "6ms", period = "10ms" }]
"#;

/// `kπ` with the scheduler's instant of `at` in `((k - 1)π, kπ]` (10 us instants).
fn termination_ns(at: Instant, period_ns: u64) -> u64 {
    let q = 10_000;
    let pi = period_ns / q;
    (at.as_nanos() / q).div_ceil(pi) * pi * q
}

/// Runs the VBS pair on the host; the controller's response per action, as `(action,
/// ns)`, from its switch times.
fn run_vbs_pair(
    scenario: &bulwark_spec::Scenario,
) -> (bulwark_host::HostOutcome, Vec<(usize, u64)>) {
    // The controller's actions as (load, limit, period), ns: its script's, run as code.
    let actions = [
        (600_000, 1_000_000, 5_000_000),
        (1_200_000, 2_000_000, 10_000_000),
    ];
    let responses = std::sync::Mutex::new(Vec::new());
    let body: bulwark_host::Body = Box::new(|ctx| {
        // The first action arrived at time zero, before this code runs.
        let mut arrival = 0;
        for index in 0.. {
            let (load, _, period) = actions[index % 2];
            let (_, limit, next_period) = actions[(index + 1) % 2];
            if ctx.run_for(Duration::from_nanos(load)).is_err() {
                return;
            }
            let Ok(at) = ctx.switch_action(
                Duration::from_nanos(limit),
                Duration::from_nanos(next_period),
            ) else {
                return;
            };
            let end = termination_ns(at, period);
            responses
                .lock()
                .expect("responses")
                .push((index % 2, end - arrival));
            arrival = end;
        }
    });
    let host = bulwark_host::run_with(scenario, &config(), vec![("control".into(), body)])
        .expect("host run");
    (host, responses.into_inner().expect("responses"))
}

#[test]
fn vbs_actions_switch_for_real_within_eq_1_and_limits_hold() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(VBS_PAIR);
    // Eq. (1), ceil(l / λ) π + π - 1 instant: one action fits one period's limit, so
    // 5 + 5 - 0.01 = 9.99 ms for the first and 10 + 10 - 0.01 = 19.99 ms for the second.
    // A pair takes about 5 + 10 ms, so 300 ms hold about twenty.
    let bounds = [9_990_000, 19_990_000];
    let within = |responses: &[(usize, u64)]| {
        responses.len() >= 20
            && responses
                .iter()
                .all(|&(action, response)| response > 0 && response <= bounds[action])
    };
    // A real clock on a shared machine: a dispatcher delayed past a period boundary costs a
    // whole period. Up to three runs (each bounded, each restoring its threads), as the
    // host-vbs experiment measures; the last one is judged.
    let mut attempt = 1;
    let (host, responses) = loop {
        let (host, responses) = run_vbs_pair(&scenario);
        if within(&responses) || attempt == 3 {
            break (host, responses);
        }
        eprintln!("attempt {attempt} outside Eq. (1): {responses:?}");
        attempt += 1;
    };
    assert!(responses.len() >= 20, "{responses:?}");
    for &(action, response) in &responses {
        assert!(response <= bounds[action], "{responses:?}");
        // At least the period the load starts in ends: never zero.
        assert!(response > 0, "{responses:?}");
    }
    // The busy process gets at most its limit per period of its resource (6 ms of every
    // 10 ms, instances aligned to zero), plus what the scheduler's whole instants may miss
    // (less than one 10 us instant per dispatch, each task slice being at most one) and the
    // budget timer's lateness.
    let overrun = host.host.timer_lateness.max_ns;
    let trace = host.outcome.trace.as_ref().expect("trace");
    let period = 10_000_000;
    let mut per_period = vec![(0u64, 0u64); 30];
    for slice in trace
        .slices
        .iter()
        .filter(|s| s.kind == SliceKind::Task && s.task == Some(TaskId(1)))
    {
        let mut start = slice.start.as_nanos();
        while start < slice.end.as_nanos() {
            let window = start / period;
            let end = slice.end.as_nanos().min((window + 1) * period);
            if let Some((total, slices)) = per_period.get_mut(window as usize) {
                *total += end - start;
                *slices += 1;
            }
            start = end;
        }
    }
    for (k, &(received, slices)) in per_period.iter().enumerate() {
        let bound = 6_000_000 + slices * 10_000 + overrun;
        assert!(received <= bound, "period {k}: {received} ns > {bound}");
    }
    // The caps sum to 80%: the busy process is never starved, and gets its limit in most
    // periods (the dispatcher's work is charged to it too).
    let mean = per_period.iter().map(|p| p.0).sum::<u64>() / 30;
    assert!(mean >= 5_000_000, "mean {mean}: {per_period:?}");
    assert_no_real_time_thread();
}

#[test]
fn a_vbs_script_must_start_with_an_action_and_actions_need_vbs() {
    let Some(_core) = managed_core() else {
        return;
    };
    let no_first_action = scenario(VBS_PAIR);
    let mut broken = no_first_action.clone();
    if let bulwark_spec::Behaviour::Script { steps, .. } = &mut broken.tasks[1].behaviour {
        steps.insert(
            0,
            bulwark_spec::Step::Run(bulwark_spec::Execution::Fixed(Duration::from_micros(10))),
        );
    }
    let error = bulwark_host::run(&broken, &config()).expect_err("refused");
    assert!(
        matches!(&error, HostError::Unsupported(m) if m.contains("`busy`") && m.contains("action")),
        "{error}"
    );
    let not_vbs = scenario(
        r#"
name = "actions-without-vbs"
policy = "fixed-priority"
duration = "10ms"

[[task]]
name = "a"
priority = 1
script = [{ run = "1ms" }]
"#,
    );
    let mut broken = not_vbs.clone();
    if let bulwark_spec::Behaviour::Script { steps, .. } = &mut broken.tasks[0].behaviour {
        steps.push(bulwark_spec::Step::Action {
            load: Duration::from_millis(1),
            limit: Duration::from_millis(1),
            period: Duration::from_millis(2),
        });
    }
    let error = bulwark_host::run(&broken, &config()).expect_err("refused");
    assert!(
        matches!(&error, HostError::Unsupported(m) if m.contains("vbs")),
        "{error}"
    );
    assert_no_real_time_thread();
}

/// A function-as-a-service node shortened from scenarios/faas-reclaim.toml: two rogue
/// functions each ask for 200,000 semaphores, one alone (the baseline: no reclamation
/// group), one in a group whose quota is 100 us of reclamation; a controller terminates both
/// at 250 ms (time enough for the allocations, in an unoptimised build on a loaded machine),
/// one after the other. The free rogue spins when it is killed; the grouped one sleeps, and
/// its wake-up at 300 ms, the policy's timer, comes after its death: it must not run then.
const FAAS_RECLAIM: &str = r#"
name = "faas-reclaim-short"
policy = "fixed-priority"
duration = "400ms"

[cost]
clock = "1GHz"
reclaim-per-unit = 13

[[group]]
name = "grouped-function"
quota = "100us"

[[task]]
name = "sensor"
priority = 30
period = "5ms"
execution = "500us"

[[task]]
name = "controller"
priority = 20
script = [
    { sleep-until = "250ms" },
    { terminate = "free-rogue" },
    { terminate = "grouped-rogue" },
    { sleep-until = "1s" },
]

[[task]]
name = "grouped-rogue"
priority = 11
group = "grouped-function"
script = [{ allocate = 200000, object = "semaphore" }, { sleep-until = "300ms" }, { run = "1s" }]

[[task]]
name = "free-rogue"
priority = 10
script = [{ allocate = 200000, object = "semaphore" }, { run = "1s" }]
"#;

/// A task outside any group asks for 2^24 + 1 semaphores: more than a run holds. As in the
/// simulator none is created and the run stops there and fails, naming the task and the
/// counts: a run of 8 s returns long before its end (the task would otherwise run for
/// ever after the step).
#[test]
fn an_allocation_past_the_kernel_objects_a_run_holds_fails_the_run() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(&format!(
        "name = \"hoarder\"\npolicy = \"fixed-priority\"\nduration = \"8s\"\n\n\
         [[task]]\nname = \"hoarder\"\npriority = 1\n\
         script = [{{ allocate = {} }}, {{ loop = \"forever\", body = [{{ run = \"1ms\" }}] }}]\n",
        (1u64 << 24) + 1
    ));
    let started = std::time::Instant::now();
    let result = bulwark_host::run(&scenario, &config());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the run went on after the limit: {:?}",
        started.elapsed()
    );
    match result {
        Err(HostError::Policy(bulwark_sim::SimError::Objects {
            task, count, live, ..
        })) => {
            assert_eq!(task, "hoarder");
            assert_eq!((count, live), ((1 << 24) + 1, 0));
        }
        Err(other) => panic!("the run fails at the limit, not with {other}"),
        Ok(_) => panic!("the run fails at the limit"),
    }
}

#[test]
fn terminate_reclaims_for_real_kills_the_rogue_and_the_group_bounds_it() {
    let Some(_core) = managed_core() else {
        return;
    };
    let scenario = scenario(FAAS_RECLAIM);
    let host = bulwark_host::run(&scenario, &config()).expect("host run");
    let sim = bulwark_sim::run(&scenario, &bulwark_sim::Options::default()).expect("simulation");
    let (controller, grouped, free) = (TaskId(1), TaskId(2), TaskId(3));
    let tasks = &host.outcome.tasks;

    // (a) The quota: 100 us at 1 GHz is 100,000 cycles, 7,692 whole units of 13 cycles. The
    // group's arena is charged 1 unit and the rogue's process 2 at creation; each semaphore
    // costs its object (1) and its capability (3): (7,692 - 3) / 4 = 1,922 semaphores, and
    // the other 198,078 are refused. The free rogue has no quota: all 200,000.
    assert_eq!(tasks[grouped.index()].objects_allocated, 1_922);
    assert_eq!(tasks[grouped.index()].allocations_refused, 198_078);
    assert_eq!(tasks[free.index()].objects_allocated, 200_000);
    assert_eq!(tasks[free.index()].allocations_refused, 0);
    // The store is the simulator's own code: the same counts.
    for rogue in [grouped, free] {
        let (h, s) = (&tasks[rogue.index()], &sim.tasks[rogue.index()]);
        assert_eq!(
            (h.objects_allocated, h.allocations_refused),
            (s.objects_allocated, s.allocations_refused),
            "{}",
            h.name
        );
    }

    // Two terminations, each ending one process, in the controller's order.
    let reclaimed = &host.host.reclamations;
    assert_eq!(reclaimed.len(), 2, "{reclaimed:?}");
    assert_eq!((reclaimed[0].by, reclaimed[0].target), (controller, free));
    assert_eq!(
        (reclaimed[1].by, reclaimed[1].target),
        (controller, grouped)
    );
    assert!(reclaimed.iter().all(|r| r.killed == 1), "{reclaimed:?}");
    // The baseline walks the process's holdings one by one (`terminate_process`): per
    // semaphore it unlinks the capability from its holder and frees the capability's and the
    // object's slots, 3 units, then frees the process, 1: 600,001 units. The group releases
    // its arena wholesale, 1 unit however much it holds.
    assert_eq!(reclaimed[0].units, 600_001);
    assert_eq!(reclaimed[1].units, 1);
    assert!(reclaimed[0].start >= Instant::from_nanos(250_000_000));

    // (b) Both rogues are killed: their current job ends neither completed nor missed, and
    // neither runs after the first termination started. The free rogue's only job was
    // spinning; the grouped rogue's first job completed when it slept, and its second (due
    // at 300 ms) is the one killed. The simulator counts the same.
    let counts = |m: &bulwark_sim::TaskMetrics| (m.killed_jobs, m.completed, m.misses);
    assert_eq!(counts(&tasks[free.index()]), (1, 0, 0));
    assert_eq!(counts(&tasks[grouped.index()]), (1, 1, 0));
    for rogue in [grouped, free] {
        assert_eq!(
            counts(&tasks[rogue.index()]),
            counts(&sim.tasks[rogue.index()])
        );
    }
    let trace = host.outcome.trace.as_ref().expect("trace");
    let after = reclaimed[0].start;
    for slice in &trace.slices {
        if matches!(slice.task, Some(t) if t == grouped || t == free) {
            assert!(
                slice.end <= after,
                "a killed rogue ran or was charged after {after}: {slice:?}"
            );
        }
    }
    // The free rogue spun until the controller preempted it at 250 ms: it did run.
    assert!(tasks[free.index()].executed_ns > 50_000_000);
    // The sensor kept its jobs after the rogues died (the run goes on for 150 ms more).
    assert!(host
        .outcome
        .jobs
        .as_deref()
        .unwrap_or_default()
        .iter()
        .any(|j| j.task == TaskId(0) && j.release > reclaimed[1].end && j.completion.is_some()));

    // (c) Measured in this one run: the baseline's reclamation of 200,000 semaphores takes
    // far longer than the group's, whose arena goes in one step (600,001 units against 1; a
    // factor of ten leaves room for a noisy machine).
    let (baseline, bounded) = (reclaimed[0].duration(), reclaimed[1].duration());
    assert!(
        baseline.as_nanos() > 10 * bounded.as_nanos().max(1),
        "baseline {baseline}, group {bounded}"
    );
    // The core records both as reclamation, part of its kernel time.
    let core = &host.outcome.cores[0];
    assert_eq!(core.reclaim_ns, baseline.as_nanos() + bounded.as_nanos());
    assert_eq!(core.max_reclaim_ns, baseline.as_nanos());
    assert!(core.kernel_ns >= core.reclaim_ns);
    eprintln!(
        "reclamation: baseline {baseline} ({} units), group {bounded} ({} units)",
        reclaimed[0].units, reclaimed[1].units
    );

    // (d) Every thread, the killed ones too, was joined and restored.
    assert_no_real_time_thread();
}
