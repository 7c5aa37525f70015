//! Component systems on the one machine, on schedules worked out by hand: PIP, IPCP, propagation, nested PIP
//! (to PIP and to propagated) and the protocol overheads. Times in milliseconds unless said.

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority, TaskId};
use bulwark_sim::components::{
    outcome, run, scenario, CallReply, ComponentConfigError, ComponentOutcome,
    ComponentSystemConfig, CpiProtocol, LoweredCpi, LoweredTask, ProtocolCosts, RunOptions, Step,
};

mod common;
use bulwark_sim::trace::{MarkKind, Trace};
use common::ms;

fn at(n: u64) -> Option<Instant> {
    Some(Instant::ZERO.saturating_add(ms(n)))
}

fn task(name: &str, priority: u8, offset: u64, body: Vec<Step>) -> LoweredTask {
    LoweredTask {
        name: name.into(),
        priority: Priority(priority),
        period: ms(100),
        offset: ms(offset),
        body,
        reservation: None,
    }
}

fn cpi(name: &str, protocol: CpiProtocol, ceiling: u8, body: Vec<Step>) -> LoweredCpi {
    LoweredCpi {
        name: name.into(),
        protocol,
        ceiling: Priority(ceiling),
        threads: 3,
        body,
        task_bodies: Vec::new(),
    }
}

fn simulate(config: &ComponentSystemConfig, until: u64) -> ComponentOutcome {
    let outcome = run(
        config,
        RunOptions {
            until: Instant::ZERO.saturating_add(ms(until)),
            record_jobs: true,
            record_trace: false,
        },
    )
    .unwrap();
    assert_eq!(outcome.protocol_errors, 0);
    assert_eq!(outcome.pool_exhausted, 0);
    outcome
}

/// First job's completion of each task.
fn completions(outcome: &ComponentOutcome) -> Vec<Option<Instant>> {
    outcome
        .tasks
        .iter()
        .map(|t| t.job_records[0].completion)
        .collect()
}

fn inversions(outcome: &ComponentOutcome) -> Vec<Duration> {
    outcome
        .tasks
        .iter()
        .map(|t| t.job_records[0].inversion)
        .collect()
}

/// The classic inversion: `low` (p 10) takes CPI `A` (4 ms) at 1; `high` (p 20) asks for it
/// at 2; `mid` (p 15, 3 ms, no request) arrives at 3.
fn classic(protocol: CpiProtocol) -> ComponentSystemConfig {
    let a = 0;
    ComponentSystemConfig {
        tasks: vec![
            task(
                "low",
                10,
                0,
                vec![Step::Execute(ms(1)), Step::Request(a), Step::Execute(ms(1))],
            ),
            task("high", 20, 2, vec![Step::Request(a), Step::Execute(ms(1))]),
            task("mid", 15, 3, vec![Step::Execute(ms(3))]),
        ],
        cpis: vec![cpi("A", protocol, 20, vec![Step::Execute(ms(4))])],
        costs: ProtocolCosts::ZERO,
    }
}

/// PIP (Fig. 4). 0-1 low; 1 low's request takes the free lock, the holder runs at 10; 2 high
/// preempts and calls: its thread waits, the holder inherits 20 (steps 2-4) and runs 2-5, so
/// mid (15, released at 3) cannot preempt it; 5 the holder finishes, signals the waiter
/// (steps 21-23) and replies; the woken thread serves high 5-9; high 9-10 (done at 10);
/// mid 10-13; low 13-14. High was inverted 2-5 (3 ms), mid 3-5 (2 ms), both by low's one
/// section.
#[test]
fn pip_bounds_the_inversion_to_the_lower_section() {
    let outcome = simulate(&classic(CpiProtocol::Inherited), 50);
    assert_eq!(completions(&outcome), [at(14), at(10), at(13)]);
    assert_eq!(inversions(&outcome), [ms(0), ms(3), ms(2)]);
    let lower: Vec<u32> = outcome.tasks.iter().map(|t| t.max_lower_jobs).collect();
    assert_eq!(lower, [0, 1, 1]);
    assert_eq!(outcome.misses(), 0);
}

/// IPCP: the single thread runs at the ceiling 20 from 1 to 5; high (20, equal) waits its
/// turn, FIFO; then the same schedule as PIP: high done at 10, mid 13, low 14.
#[test]
fn ipcp_runs_the_section_at_the_ceiling() {
    let outcome = simulate(&classic(CpiProtocol::Ipcp), 50);
    assert_eq!(completions(&outcome), [at(14), at(10), at(13)]);
    assert_eq!(inversions(&outcome), [ms(0), ms(3), ms(2)]);
}

/// NPCS: the section runs at 255: the same here, as nothing else runs above 20.
#[test]
fn npcs_runs_the_section_at_the_maximum() {
    let outcome = simulate(&classic(CpiProtocol::Npcs), 50);
    assert_eq!(completions(&outcome), [at(14), at(10), at(13)]);
}

/// Propagation (Fig. 5): reentrant, each request at its requester's priority. Low's request
/// runs 1-2 at 10; high's own thread serves it 2-6 at 20, high 6-7 (done at 7); mid 7-10;
/// low's request resumes 10-13, low 13-14. Nothing is inverted.
#[test]
fn propagation_serves_each_request_at_its_priority() {
    let outcome = simulate(&classic(CpiProtocol::Propagated), 50);
    assert_eq!(completions(&outcome), [at(14), at(7), at(10)]);
    assert_eq!(inversions(&outcome), [ms(0); 3]);
}

/// Without any protocol the section would run at 10 and mid would preempt it; shown by
/// giving the CPI a ceiling below mid: an IPCP thread at 12. 1-5 the section at 12 (high,
/// released at 2, preempts it: 20 > 12; calls A and queues behind it); at 2 high runs and
/// blocks; the section resumes 2-3; at 3 mid (15) preempts it and runs 3-6; the section
/// 6-8; high's request 8-12, high 12-13. High waited for mid: 6 ms of inversion (mid 3 ms,
/// low 3 ms), which a correct ceiling prevents.
#[test]
fn a_ceiling_too_low_lets_the_middle_task_in() {
    let mut config = classic(CpiProtocol::Ipcp);
    config.cpis[0].ceiling = Priority(12);
    let outcome = simulate(&config, 50);
    assert_eq!(completions(&outcome)[1], at(13));
    assert_eq!(inversions(&outcome)[1], ms(6));
    assert_eq!(outcome.tasks[1].max_lower_jobs, 2);
}

/// Nested PIP through `nest`. `low` (10) requests `A` (PIP, ceiling 30: 1 ms, request `B`,
/// 1 ms); `B` (ceiling 30) runs 4 ms; `high` (30) requests `A` at 2; `mid` (20) runs 4 ms
/// from 3 and requests nothing.
///
/// 0-1 A's holder serves low at 10; 1 it requests B (steps 15-18: it sits at the ceiling, the
/// request carries 10); B's thread runs at 10 from 1. 2 high calls A: its thread waits, A's
/// holder inherits 30 (steps 2-4) and, as it waits in B, `nest` raises low's request in B to
/// 30 (step 5 and 25); so B's thread runs 2-5 and mid (20) cannot preempt it. 5 B replies;
/// A's holder (steps 19-20, at 30) runs 5-6 and finishes, waking high's thread; that runs
/// 6-7, requests B at 30, B runs 7-11, A 11-12, high done at 12. Mid 12-16; low's job ends
/// at 16. High was inverted by low's section 2-6: 4 ms.
fn nested(downstream: CpiProtocol) -> ComponentSystemConfig {
    let (a, b) = (0, 1);
    ComponentSystemConfig {
        tasks: vec![
            task("low", 10, 0, vec![Step::Request(a)]),
            task("high", 30, 2, vec![Step::Request(a)]),
            task("mid", 20, 3, vec![Step::Execute(ms(4))]),
        ],
        cpis: vec![
            cpi(
                "A",
                CpiProtocol::Inherited,
                30,
                vec![Step::Execute(ms(1)), Step::Request(b), Step::Execute(ms(1))],
            ),
            cpi("B", downstream, 30, vec![Step::Execute(ms(4))]),
        ],
        costs: ProtocolCosts::ZERO,
    }
}

#[test]
fn nested_pip_to_pip_pushes_the_inherited_priority_down() {
    let outcome = simulate(&nested(CpiProtocol::Inherited), 50);
    assert_eq!(completions(&outcome), [at(16), at(12), at(16)]);
    assert_eq!(inversions(&outcome)[1], ms(4));
}

/// The same with `B` propagated: `nest` finds low's node in B's thread manager and raises its
/// thread (Fig. 5 steps 16-17); the schedule is the same.
#[test]
fn nested_pip_to_propagated_pushes_the_inherited_priority_down() {
    let outcome = simulate(&nested(CpiProtocol::Propagated), 50);
    assert_eq!(completions(&outcome), [at(16), at(12), at(16)]);
    assert_eq!(inversions(&outcome)[1], ms(4));
}

/// The waiters of a PIP lock are woken highest priority first, then first come first served
/// (the notification manager). `low` (10) holds A (5 ms) from 0; `b1` and `b2` (both 20) ask
/// at 1 and 2, `c` (25) at 3; each then runs 1 ms of its own. c's request runs 5-10, c 10-11;
/// b1's request 11-16. At 16 its thread signals b2's (step 23) before it replies to b1 (step
/// 24), so b2's request runs first, 16-21 (FIFO at 20), then b1 21-22, b2 22-23; low's job
/// (nothing after its request) ends at 23.
#[test]
fn waiters_are_woken_by_priority_then_in_arrival_order() {
    let a = 0;
    let then_work = vec![Step::Request(a), Step::Execute(ms(1))];
    let config = ComponentSystemConfig {
        tasks: vec![
            task("low", 10, 0, vec![Step::Request(a)]),
            task("b1", 20, 1, then_work.clone()),
            task("b2", 20, 2, then_work.clone()),
            task("c", 25, 3, then_work),
        ],
        cpis: vec![LoweredCpi {
            threads: 4,
            ..cpi("A", CpiProtocol::Inherited, 25, vec![Step::Execute(ms(5))])
        }],
        costs: ProtocolCosts::ZERO,
    };
    let outcome = simulate(&config, 50);
    assert_eq!(completions(&outcome), [at(23), at(22), at(23), at(11)]);
}

/// Overheads are spent by the serving thread: a call of 100 us before the procedure and a
/// reply of 50 us after it. A task (1 ms own, 1 ms in a propagated CPI) ends at 2.15 ms; the
/// same with PIP on a free lock (unlocked: 200 + 70 us) ends at 2.27 ms.
#[test]
fn protocol_overheads_are_charged_by_the_cost_model() {
    let us = Duration::from_micros;
    let mut costs = ProtocolCosts::ZERO;
    costs.propagated = CallReply {
        call: us(100),
        reply: us(50),
    };
    costs.inherited_unlocked = CallReply {
        call: us(200),
        reply: us(70),
    };
    for (protocol, end) in [
        (CpiProtocol::Propagated, 2150),
        (CpiProtocol::Inherited, 2270),
    ] {
        let config = ComponentSystemConfig {
            tasks: vec![task(
                "t",
                10,
                0,
                vec![Step::Execute(ms(1)), Step::Request(0)],
            )],
            cpis: vec![cpi("A", protocol, 10, vec![Step::Execute(ms(1))])],
            costs,
        };
        let outcome = simulate(&config, 10);
        assert_eq!(
            outcome.tasks[0].job_records[0].completion,
            Some(Instant::ZERO.saturating_add(us(end)))
        );
        assert_eq!(outcome.busy, us(end));
    }
}

/// A task whose job overruns its period misses, and its next job starts at once.
#[test]
fn an_overrun_is_a_miss_and_the_backlog_runs_next() {
    let config = ComponentSystemConfig {
        tasks: vec![LoweredTask {
            period: ms(3),
            ..task("t", 10, 0, vec![Step::Execute(ms(4))])
        }],
        cpis: Vec::new(),
        costs: ProtocolCosts::ZERO,
    };
    // Jobs released at 0, 3, 6, 9, 12 finish at 4, 8, 12; at 13 the fourth is running.
    let outcome = simulate(&config, 13);
    let t = &outcome.tasks[0];
    assert_eq!(t.jobs, 5);
    let done: Vec<_> = t.job_records.iter().map(|j| j.completion).collect();
    assert_eq!(done, [at(4), at(8), at(12), None, None]);
    // Deadlines 3, 6 and 9 passed late, 12 passed undone; 15 is beyond the run.
    assert_eq!(t.misses, 4);
}

#[test]
fn bad_configurations_are_refused() {
    let mut config = classic(CpiProtocol::Inherited);
    config.tasks[0].body.push(Step::Request(7));
    let err = run(
        &config,
        RunOptions {
            until: Instant::ZERO,
            record_jobs: false,
            record_trace: false,
        },
    )
    .unwrap_err();
    assert_eq!(
        err,
        ComponentConfigError::UnknownCpi {
            owner: "low".into(),
            cpi: 7,
            count: 1
        }
    );
    assert!(err.to_string().contains("only 1 CPIs"));
}

/// Equal priorities run first-in first-out to completion, and a preempted thread resumes
/// before the others of its priority: `a` and `b` (both 10, 4 ms) released at 0 and 1, `h`
/// (20, 1 ms) at 2. a 0-2, h 2-3, a 3-5 (not b: a was preempted, it keeps its place), b 5-9.
#[test]
fn equal_priorities_run_to_completion_in_arrival_order() {
    let config = ComponentSystemConfig {
        tasks: vec![
            task("a", 10, 0, vec![Step::Execute(ms(4))]),
            task("b", 10, 1, vec![Step::Execute(ms(4))]),
            task("h", 20, 2, vec![Step::Execute(ms(1))]),
        ],
        cpis: Vec::new(),
        costs: ProtocolCosts::ZERO,
    };
    let outcome = simulate(&config, 20);
    assert_eq!(completions(&outcome), [at(5), at(9), at(3)]);
    assert_eq!(outcome.context_switches, 4);
}

/// A job whose last step ends just as a higher-priority job is released completes then: low
/// (10) runs 0-2 and is done at 2, although high (20) is released at 2 and runs 2-3.
#[test]
fn a_job_ending_at_a_release_completes_before_the_preemption() {
    let config = ComponentSystemConfig {
        tasks: vec![
            task("low", 10, 0, vec![Step::Execute(ms(2))]),
            task("high", 20, 2, vec![Step::Execute(ms(1))]),
        ],
        cpis: Vec::new(),
        costs: ProtocolCosts::ZERO,
    };
    let outcome = simulate(&config, 10);
    assert_eq!(completions(&outcome), [at(2), at(3)]);
}

/// Dropping out of the protocol steps is a reschedule point, as a priority drop is in seL4.
/// `low` (10) calls `B` (propagated, ceiling 30; body: a nested request to `D`, IPCP at 30,
/// 4 ms). B's call steps cost 1 ms and its reply steps 0.5 ms, at the ceiling.
/// - 0-1 B's call steps for low at 30; `high` (20, 1 ms) is released at 0.5 and waits.
/// - 1: B's thread drops to 10 (Fig. 5 step 5): high runs 1-2.
/// - 2-6 B's nested request: D runs at 30; `mid` (20, 1 ms) is released at 3 and waits.
/// - 6: the reply; B's thread drops back to 10 (step 12): mid runs 6-7.
/// - 7-7.5 B's reply steps at 30; low's job ends at 7.5.
#[test]
fn a_priority_drop_is_a_reschedule_point() {
    let (b, d) = (0, 1);
    let mut costs = ProtocolCosts::ZERO;
    costs.propagated = CallReply {
        call: ms(1),
        reply: Duration::from_micros(500),
    };
    let config = ComponentSystemConfig {
        tasks: vec![
            task("low", 10, 0, vec![Step::Request(b)]),
            LoweredTask {
                offset: Duration::from_micros(500),
                ..task("high", 20, 0, vec![Step::Execute(ms(1))])
            },
            task("mid", 20, 3, vec![Step::Execute(ms(1))]),
        ],
        cpis: vec![
            cpi("B", CpiProtocol::Propagated, 30, vec![Step::Request(d)]),
            cpi("D", CpiProtocol::Ipcp, 30, vec![Step::Execute(ms(4))]),
        ],
        costs,
    };
    let outcome = simulate(&config, 20);
    assert_eq!(
        completions(&outcome),
        [
            Some(Instant::ZERO.saturating_add(Duration::from_micros(7_500))),
            at(2),
            at(7)
        ]
    );
}

mod any_system {
    use super::*;
    use proptest::prelude::*;

    fn protocol() -> impl Strategy<Value = CpiProtocol> {
        proptest::sample::select(CpiProtocol::ALL.to_vec())
    }

    /// A body of up to four steps: execute 0-2 ms, or request any of `cpis` CPIs (loops and
    /// self-requests included).
    fn body(cpis: usize) -> impl Strategy<Value = Vec<Step>> {
        proptest::collection::vec(
            prop_oneof![
                (0u64..=2_000).prop_map(|us| Step::Execute(Duration::from_micros(us))),
                (0..cpis).prop_map(Step::Request),
            ],
            0..=4,
        )
    }

    /// Systems of 1-4 tasks with periods of 1-30 ms and 1-4 CPIs; about half the tasks run
    /// in an SPR reservation of 0.1-5 ms per period with eta up to 2 ms and S of 1-4.
    pub(crate) fn system() -> impl Strategy<Value = ComponentSystemConfig> {
        (1usize..=4, 1usize..=4).prop_flat_map(|(tasks, cpis)| {
            (
                proptest::collection::vec(
                    (
                        any::<u8>(),
                        1u64..=30,
                        0u64..=10,
                        body(cpis),
                        proptest::option::of((100u64..=5_000, 0u64..=2_000, 1u16..=4)),
                    ),
                    tasks,
                ),
                proptest::collection::vec((protocol(), any::<u8>(), 1u32..=3, body(cpis)), cpis),
                any::<bool>(),
            )
                .prop_map(|(tasks, cpis, costly)| ComponentSystemConfig {
                    tasks: tasks
                        .into_iter()
                        .enumerate()
                        .map(|(i, (p, period, offset, body, context))| LoweredTask {
                            name: format!("t{i}"),
                            priority: Priority(p),
                            period: ms(period),
                            offset: ms(offset),
                            body,
                            reservation: context.map(|(budget, eta, slots)| Reservation {
                                budget: Duration::from_micros(budget),
                                period: ms(period),
                                replenishments: slots,
                                non_preemptive: Duration::from_micros(eta),
                            }),
                        })
                        .collect(),
                    cpis: common::numbered_cpis(cpis),
                    costs: if costly {
                        ProtocolCosts::xeon_gold_6130_max()
                    } else {
                        ProtocolCosts::ZERO
                    },
                })
        })
    }

    /// True when some CPI's requests lead back to it (depth-first search of the request
    /// graph, white-grey-black).
    fn requests_loop(config: &ComponentSystemConfig) -> bool {
        fn visit(config: &ComponentSystemConfig, cpi: usize, state: &mut [u8]) -> bool {
            match state[cpi] {
                1 => return true,
                2 => return false,
                _ => {}
            }
            state[cpi] = 1;
            let looped = config.cpis[cpi].body.iter().any(|step| match *step {
                Step::Request(next) => next < state.len() && visit(config, next, state),
                Step::Execute(_) => false,
            });
            state[cpi] = 2;
            looped
        }
        let mut state = vec![0u8; config.cpis.len()];
        (0..config.cpis.len()).any(|cpi| visit(config, cpi, &mut state))
    }

    /// How much of `slices` lies in `[start, start + length)`.
    fn covered(slices: &[(Instant, Instant)], start: Instant, length: Duration) -> Duration {
        let end = start.saturating_add(length);
        slices
            .iter()
            .map(|&(a, b)| b.min(end).saturating_duration_since(a.max(start)))
            .fold(Duration::ZERO, Duration::saturating_add)
    }

    /// The instants task `task` activated from idle: the releases of jobs whose predecessor
    /// had completed before then (and the first release). A job already due when its
    /// predecessor completes is marked released at that completion, and its task never
    /// idled: its context goes on, it does not activate.
    fn activations(trace: &Trace, task: u32) -> Vec<Instant> {
        let of = |kind: MarkKind| -> Vec<(u64, Instant)> {
            trace
                .marks
                .iter()
                .filter(|m| m.task == TaskId(task) && m.kind == kind)
                .map(|m| (m.job, m.at))
                .collect()
        };
        let completions = of(MarkKind::Completion);
        of(MarkKind::Release)
            .into_iter()
            .filter(|&(job, at)| {
                job == 0
                    || completions
                        .iter()
                        .any(|&(done, when)| done + 1 == job && when < at)
            })
            .map(|(_, at)| at)
            .collect()
    }

    /// Steps the system's scenario as a platform with real threads does, reporting each
    /// stretch's end ([`common::run_reported`]'s exact platform): the platform, not the
    /// kernel, knows when a stretch's work is done, so with free protocols it must give
    /// exactly `run`'s outcome.
    fn run_reported(config: &ComponentSystemConfig, options: RunOptions) -> ComponentOutcome {
        let scenario = scenario(config, options.duration());
        let stepping = options.machine_options();
        let record = options.record_jobs;
        let run = common::run_reported_with(&scenario, &stepping, |machine| {
            machine.measuring_inversion(record)
        });
        outcome(config, run)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Any system runs to the end without a panic, whatever its priorities (ceilings too
        /// low included), pools (too small included), request graph (loops, which deadlock,
        /// included) and reservations; no protocol step is refused unless requests loop (a
        /// task re-entering a CPI that serves it is refused, as the configuration analyzer
        /// refuses such a system); the core is never busier than the run is long; and two
        /// runs give the same outcome.
        #[test]
        fn any_system_runs_to_the_end(config in system()) {
            let options = RunOptions {
                until: Instant::ZERO.saturating_add(ms(100)),
                record_jobs: true,
                record_trace: false,
            };
            let outcome = run(&config, options).unwrap();
            if !requests_loop(&config) {
                prop_assert_eq!(outcome.protocol_errors, 0);
            }
            prop_assert!(outcome.busy <= ms(100));
            prop_assert_eq!(outcome.until, Instant::ZERO.saturating_add(ms(100)));
            for task in &outcome.tasks {
                prop_assert_eq!(task.job_records.len() as u64, task.jobs);
            }
            prop_assert_eq!(run(&config, options).unwrap(), outcome);
        }

        /// A platform that reports each stretch's end gets the simulator's outcome: the
        /// kernel's decisions depend on when stretches end, not on who measures it.
        #[test]
        fn reported_stretches_give_the_simulated_outcome(config in system()) {
            let config = ComponentSystemConfig { costs: ProtocolCosts::ZERO, ..config };
            let options = RunOptions {
                until: Instant::ZERO.saturating_add(ms(100)),
                record_jobs: true,
                record_trace: true,
            };
            prop_assert_eq!(run_reported(&config, options), run(&config, options).unwrap());
        }

        /// The sporadic-server guarantee, from the trace alone: from the instant a reserved
        /// task activates from idle, the threads working for it (its own, and servers on its
        /// requests, protocol steps included) run at most `b` in the next `p`. Algorithm 3
        /// restarts the budget's head then and every later entry is due after it, so each
        /// unit of budget is spent at most once in that window. (A window starting anywhere
        /// else may hold more: a job delayed by higher priorities spends its budget late, and
        /// the budget comes back one period after the activation, not after the spending.)
        #[test]
        fn a_context_s_threads_run_at_most_its_budget_in_the_period_after_an_activation(
            config in system()
        ) {
            let options = RunOptions {
                until: Instant::ZERO.saturating_add(ms(100)),
                record_jobs: false,
                record_trace: true,
            };
            let outcome = run(&config, options).unwrap();
            let trace = outcome.trace.as_ref().expect("recorded");
            for (i, task) in config.tasks.iter().enumerate() {
                let Some(context) = task.reservation else { continue };
                let slices: Vec<(Instant, Instant)> = trace
                    .slices
                    .iter()
                    .filter(|s| s.task == Some(TaskId(i as u32)))
                    .map(|s| (s.start, s.end))
                    .collect();
                for start in activations(trace, i as u32) {
                    let ran = covered(&slices, start, context.period);
                    prop_assert!(
                        ran <= context.budget,
                        "task {} ran {:?} in the {:?} after its activation at {:?}, with \
                         budget {:?}",
                        i, ran, context.period, start, context.budget
                    );
                }
            }
        }
    }
}

/// The trace of the PIP schedule above, worked by hand: a server thread's time is drawn on
/// the task whose job it serves, and back-to-back stretches of one task are one slice. Low
/// runs 0-1 and its section 1-5 (high's call at 2 takes no time with zero costs), the woken
/// thread serves high 5-9 and high ends 9-10, mid 10-13, low 13-14.
#[test]
fn the_trace_draws_server_time_on_the_callers_task() {
    use bulwark_sim::trace::{MarkKind, SliceKind};
    let outcome = run(
        &classic(CpiProtocol::Inherited),
        RunOptions {
            until: Instant::ZERO.saturating_add(ms(50)),
            record_jobs: false,
            record_trace: true,
        },
    )
    .unwrap();
    let trace = outcome.trace.expect("recorded");
    let slices: Vec<(u32, u64, u64)> = trace
        .slices
        .iter()
        .map(|s| {
            assert_eq!(s.kind, SliceKind::Task);
            let ms = |t: Instant| t.as_nanos() / 1_000_000;
            (s.task.expect("owned").0, ms(s.start), ms(s.end))
        })
        .collect();
    let (low, high, mid) = (0, 1, 2);
    assert_eq!(
        slices,
        [(low, 0, 5), (high, 5, 10), (mid, 10, 13), (low, 13, 14)]
    );
    let marks = |kind: MarkKind| -> Vec<(u32, Instant)> {
        trace
            .marks
            .iter()
            .filter(|m| m.kind == kind)
            .map(|m| (m.task.0, m.at))
            .collect()
    };
    let instant = |n: u64| Instant::ZERO.saturating_add(ms(n));
    assert_eq!(
        marks(MarkKind::Release),
        [(low, instant(0)), (high, instant(2)), (mid, instant(3))]
    );
    assert_eq!(
        marks(MarkKind::Completion),
        [(high, instant(10)), (mid, instant(13)), (low, instant(14))]
    );
    assert!(marks(MarkKind::DeadlineMiss).is_empty());
}

/// With call and reply costs, protocol steps show as kernel time; every slice of the trace
/// lies inside the run, slices never overlap, and the busy time is the slices' total.
#[test]
fn the_trace_covers_exactly_the_busy_time() {
    let mut config = classic(CpiProtocol::Inherited);
    config.costs = ProtocolCosts::xeon_gold_6130_max();
    let outcome = run(
        &config,
        RunOptions {
            until: Instant::ZERO.saturating_add(ms(250)),
            record_jobs: false,
            record_trace: true,
        },
    )
    .unwrap();
    let trace = outcome.trace.as_ref().expect("recorded");
    let mut total = 0;
    let mut last_end = 0;
    for slice in &trace.slices {
        assert!(slice.start.as_nanos() >= last_end, "{slice:?} overlaps");
        assert!(slice.end > slice.start);
        last_end = slice.end.as_nanos();
        total += slice.end.as_nanos() - slice.start.as_nanos();
    }
    assert!(last_end <= 250_000_000);
    assert_eq!(total, outcome.busy.as_nanos());
    assert!(trace
        .slices
        .iter()
        .any(|s| s.kind == bulwark_sim::trace::SliceKind::Kernel));
}

/// A late job gets a miss mark at its deadline: with high's period 7 ms, its first job
/// (released at 2, done at 10 as above) misses at 9; every miss counted has its mark.
#[test]
fn a_late_job_is_marked_at_its_deadline() {
    use bulwark_sim::trace::MarkKind;
    let mut config = classic(CpiProtocol::Inherited);
    config.tasks[1].period = ms(7);
    let outcome = run(
        &config,
        RunOptions {
            until: Instant::ZERO.saturating_add(ms(50)),
            record_jobs: false,
            record_trace: true,
        },
    )
    .unwrap();
    let trace = outcome.trace.as_ref().expect("recorded");
    let misses: Vec<(u32, u64, u64)> = trace
        .marks
        .iter()
        .filter(|m| m.kind == MarkKind::DeadlineMiss)
        .map(|m| (m.task.0, m.job, m.at.as_nanos()))
        .collect();
    assert_eq!(misses.first(), Some(&(1, 0, 9_000_000)));
    assert_eq!(misses.len() as u64, outcome.misses());
}

/// A core that idled switches to whoever runs next, as from the idle thread: a lone task
/// (4 ms every 100 ms) pays a 1 ms switch, as kernel time, at each of its jobs but the first,
/// whose switch is the boot's configuration, which takes no time (the machine's rule):
/// completions at 4 and 105. The run's end, 200 ms, is inclusive: the third job is released
/// and switched to then, and is unfinished; three switches.
#[test]
fn a_switch_from_an_idle_core_is_charged() {
    let config = ComponentSystemConfig {
        tasks: vec![task("lone", 10, 0, vec![Step::Execute(ms(4))])],
        cpis: Vec::new(),
        costs: ProtocolCosts {
            context_switch: ms(1),
            ..ProtocolCosts::ZERO
        },
    };
    let outcome = simulate(&config, 200);
    assert_eq!(outcome.context_switches, 3);
    let done: Vec<Option<Instant>> = outcome.tasks[0]
        .job_records
        .iter()
        .map(|j| j.completion)
        .collect();
    assert_eq!(done, [at(4), at(105), None]);
}
