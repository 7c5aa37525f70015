//! Builders for small scenarios written directly as validated model values, so these tests
//! do not depend on the scenario parser.
#![allow(dead_code)]

use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::{JobRecord, Options, Outcome, VbsOptions};
use bulwark_spec::{Behaviour, Execution, PolicyKind, Scenario, Step, TaskSpec};

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

pub fn scenario(
    policy: PolicyKind,
    cores: u16,
    duration: Duration,
    tasks: Vec<TaskSpec>,
) -> Scenario {
    Scenario::new("test", policy, cores, duration, tasks)
}

/// A periodic task (deadline = period) with a fixed execution time.
pub fn periodic(
    name: &str,
    core: u16,
    priority: Option<u8>,
    execution: Duration,
    period: Duration,
    offset: Duration,
) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        core,
        priority: priority.map(Priority),
        reservation: None,
        deadline: Some(period),
        behaviour: Behaviour::Periodic {
            period,
            offset,
            execution: Execution::Fixed(execution),
        },
    }
}

pub fn script(
    name: &str,
    core: u16,
    priority: Option<u8>,
    deadline: Option<Duration>,
    steps: Vec<Step>,
) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        core,
        priority: priority.map(Priority),
        reservation: None,
        deadline,
        behaviour: Behaviour::Script {
            offset: Duration::ZERO,
            steps,
        },
    }
}

pub fn run_jobs(scenario: &Scenario) -> Outcome {
    let options = Options {
        record_jobs: true,
        record_trace: true,
        ..Options::default()
    };
    bulwark_sim::run(scenario, &options).expect("the run completes")
}

/// `scenario` run with every scheduler's invariants checked after every call: a broken one
/// fails the run, and so the test.
pub fn run_checked(scenario: &Scenario, options: &Options) -> Outcome {
    let checked = VbsOptions {
        check_invariants: true,
        ..VbsOptions::default()
    };
    bulwark_sim::run_vbs(scenario, options, checked)
        .unwrap_or_else(|error| panic!("{error}"))
        .outcome
}

/// (release, first start, completion, missed) of one job.
pub type Row = (u64, Option<u64>, Option<u64>, bool);

/// The rows of every job of `task`, in milliseconds.
pub fn rows_ms(outcome: &Outcome, task: u32) -> Vec<Row> {
    let to_ms = |t: Instant| {
        assert_eq!(
            t.as_nanos() % 1_000_000,
            0,
            "hand-checked times are whole milliseconds"
        );
        t.as_nanos() / 1_000_000
    };
    let mut jobs: Vec<&JobRecord> = outcome
        .jobs
        .as_ref()
        .expect("jobs were recorded")
        .iter()
        .filter(|j| j.task == TaskId(task))
        .collect();
    jobs.sort_by_key(|j| j.job);
    for (i, j) in jobs.iter().enumerate() {
        assert_eq!(j.job, i as u64, "job indices are dense");
    }
    jobs.iter()
        .map(|j| {
            (
                to_ms(j.release),
                j.first_start.map(to_ms),
                j.completion.map(to_ms),
                j.missed,
            )
        })
        .collect()
}

/// Every job of each of the `tasks` tasks, in job order, as (release, first start,
/// completion, missed) in nanoseconds: the rows the references compare.
pub fn rows(outcome: &Outcome, tasks: usize) -> Vec<Vec<Row>> {
    let mut rows = vec![Vec::new(); tasks];
    let mut jobs: Vec<&JobRecord> = outcome
        .jobs
        .as_ref()
        .expect("jobs recorded")
        .iter()
        .collect();
    jobs.sort_by_key(|j| (j.task, j.job));
    for job in jobs {
        let ns = |t: Option<Instant>| t.map(Instant::as_nanos);
        rows[job.task.index()].push((
            job.release.as_nanos(),
            ns(job.first_start),
            ns(job.completion),
            job.missed,
        ));
    }
    rows
}

/// Runs `scenario` stepped with reported timing ([`bulwark_sim::Machine::stepped`]) by an
/// exact platform: every worker spins each stretch it is given for exactly its length,
/// keeping its progress across preemptions, and reports it done the instant it ends; the
/// clock moves to the next stretch end or the machine's next event, whichever is first. So
/// it must give the simulated run's outcome.
pub fn run_reported(scenario: &Scenario, options: &Options) -> Outcome {
    run_reported_with(scenario, options, |machine| machine)
}

/// [`run_reported`] on the stepped machine as `prepare` makes it (say, measuring inversion).
pub fn run_reported_with<'a>(
    scenario: &'a Scenario,
    options: &Options,
    prepare: impl FnOnce(bulwark_sim::Machine<'a>) -> bulwark_sim::Machine<'a>,
) -> Outcome {
    use bulwark_sim::{Machine, Stretch};
    let mut machine = prepare(
        Machine::stepped(scenario, options, None).unwrap_or_else(|error| panic!("{error}")),
    );
    let until = Instant::ZERO.saturating_add(options.until.unwrap_or(scenario.duration));
    let workers = scenario.tasks.len() + scenario.servers.len();
    // Per worker: the serial of the stretch it spins, and how much of it it has done.
    let mut spinning: Vec<(u64, Duration)> = vec![(0, Duration::ZERO); workers];
    let slot = |stretch: &Stretch| match stretch.worker {
        bulwark_sim::Worker::Task(task) => task,
        bulwark_sim::Worker::Server(server) => scenario.tasks.len() + server,
    };
    let mut now = Instant::ZERO;
    let mut entries = 0u64;
    while machine.settle().unwrap_or_else(|error| panic!("{error}")) {
        entries += 1;
        assert!(entries < 10_000_000, "the stepped run does not end");
        let running: Vec<Stretch> = (0..scenario.cores)
            .filter_map(|core| machine.stretch_on(core))
            .collect();
        let mut next = machine.next_event().min(until);
        for stretch in &running {
            let spin = &mut spinning[slot(stretch)];
            if spin.0 != stretch.serial {
                *spin = (stretch.serial, Duration::ZERO);
            }
            let left = stretch.remaining.saturating_sub(spin.1);
            next = next.min(now.saturating_add(left));
        }
        let elapsed = next.saturating_duration_since(now);
        now = next;
        machine.advance(now);
        for stretch in &running {
            let spin = &mut spinning[slot(stretch)];
            spin.1 = spin.1.saturating_add(elapsed);
            if spin.1 >= stretch.remaining {
                machine.stretch_done(stretch.worker, stretch.serial);
            }
        }
    }
    machine.finish_stepped()
}

/// A platform's move when it steps the machine ([`run_jittered`]).
#[derive(Clone, Copy, Debug)]
pub enum Move {
    /// The next timer comes this many microseconds late.
    LateTimer(u32),
    /// Time passes this many microseconds with nothing reported.
    Pass(u32),
    /// Each running stretch is reported done at once, however much of it ran.
    ReportEarly,
    /// Each running stretch's previous serial is reported (a late report of an old stretch).
    ReportStale,
}

/// Up to 24 platform moves, each as likely as the others: what [`run_jittered`] cycles
/// through.
pub fn platform_moves() -> impl proptest::strategy::Strategy<Value = Vec<Move>> {
    use proptest::prelude::*;
    let one = prop_oneof![
        (0u32..3_000).prop_map(Move::LateTimer),
        (1u32..5_000).prop_map(Move::Pass),
        Just(Move::ReportEarly),
        Just(Move::ReportStale),
    ];
    proptest::collection::vec(one, 1..24)
}

/// Steps `scenario` as a careless platform does, cycling through `moves`: timers taken late,
/// stretches reported early or stale, time passing in arbitrary amounts (at least 1 us a
/// step, so the run ends). Panics if the machine refuses or fails.
pub fn run_jittered(scenario: &Scenario, moves: &[Move]) -> Outcome {
    use bulwark_sim::Machine;
    let options = Options::default();
    let mut machine =
        Machine::stepped(scenario, &options, None).unwrap_or_else(|error| panic!("{error}"));
    let mut now = Instant::ZERO;
    let mut step = 0usize;
    while machine.settle().unwrap_or_else(|error| panic!("{error}")) {
        let running: Vec<_> = (0..scenario.cores)
            .filter_map(|core| machine.stretch_on(core))
            .collect();
        let next = machine.next_event();
        let (to, report): (Instant, Option<bool>) = match moves[step % moves.len()] {
            Move::LateTimer(late) => {
                let at = next.max(now.saturating_add(us(1)));
                (at.saturating_add(us(u64::from(late))), None)
            }
            Move::Pass(micros) => (now.saturating_add(us(u64::from(micros.max(1)))), None),
            Move::ReportEarly => (now.saturating_add(us(1)), Some(true)),
            Move::ReportStale => (now.saturating_add(us(1)), Some(false)),
        };
        step += 1;
        now = to;
        machine.advance(now);
        for stretch in &running {
            match report {
                Some(true) => machine.stretch_done(stretch.worker, stretch.serial),
                Some(false) => machine.stretch_done(stretch.worker, stretch.serial.wrapping_sub(1)),
                None => {}
            }
        }
    }
    machine.finish_stepped()
}

/// Random CPIs as the properties draw them, (protocol, ceiling, pool size, body), named
/// `c0`, `c1`, ... in order.
pub fn numbered_cpis(
    cpis: Vec<(
        bulwark_sim::components::CpiProtocol,
        u8,
        u32,
        Vec<bulwark_sim::components::Step>,
    )>,
) -> Vec<bulwark_sim::components::LoweredCpi> {
    cpis.into_iter()
        .enumerate()
        .map(
            |(c, (protocol, ceiling, threads, body))| bulwark_sim::components::LoweredCpi {
                name: format!("c{c}"),
                protocol,
                ceiling: Priority(ceiling),
                threads,
                body,
                task_bodies: Vec::new(),
            },
        )
        .collect()
}
