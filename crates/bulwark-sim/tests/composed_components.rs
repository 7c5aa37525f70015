//! A component system lowered onto one core of a scenario (`components::compose_with`): its tasks
//! and pool threads join the scenario's after the file's own, on the part's core, and it runs
//! exactly as the same system lowered from a component file does, whatever the other cores
//! run. Worked by hand: `t1` (priority 10, period 10 ms) executes 1 ms and then requests the
//! server's inherited CPI, whose procedure executes 2 ms: every job completes 3 ms after its
//! release, nothing of lower priority shares core 0, so no job suffers any inversion, while
//! core 1's task (priority 1, a periodic script, so the machine keeps its job log as it does
//! a component task's) runs the first 2 ms of every 10, while `t1`'s job is pending.

mod common;

use bulwark_analysis::{component_graph, component_lowering};
use bulwark_core::{Duration, Instant};
use bulwark_sim::components::{
    component_tasks, compose_with, run as run_components, ComponentSystemConfig, ProtocolCosts,
    RunOptions,
};
use bulwark_sim::{Machine, Options, SimError};
use bulwark_spec::Scenario;

const FILE: &str = "name = \"composed\"\n\
                    policy = \"fixed-priority\"\n\
                    cores = 2\n\
                    duration = \"100ms\"\n\
                    [[task]]\n\
                    name = \"busy\"\n\
                    core = 1\n\
                    priority = 1\n\
                    deadline = \"10ms\"\n\
                    script = [{ loop = \"forever\", body = [{ run = \"2ms\" }, \
                    { sleep-until-next-release = \"10ms\" }] }]\n\
                    [[component]]\n\
                    name = \"client\"\n\
                    kind = \"active\"\n\
                    [[component.task]]\n\
                    name = \"t1\"\n\
                    priority = 10\n\
                    period = \"10ms\"\n\
                    body = [{ execute = \"1ms\" }, { request = \"server.i\" }]\n\
                    [[component]]\n\
                    name = \"server\"\n\
                    kind = \"passive\"\n\
                    [[component.cpi]]\n\
                    name = \"i\"\n\
                    protocol = \"inherited\"\n\
                    body = [{ execute = \"2ms\" }]\n\
                    [[connection]]\n\
                    from = \"client\"\n\
                    to = \"server.i\"\n";

fn file() -> Scenario {
    bulwark_spec::parse(FILE, "composed.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
}

/// The file's component system lowered as the front ends lower it: the configuration
/// analyzer settles ceilings and pools, the lowering resolves the bodies.
fn lowered(file: &Scenario) -> ComponentSystemConfig {
    let system = &file.components.first().expect("components").system;
    let (tasks, cpis) =
        component_lowering::lower(system, &component_graph::analyze(system)).expect("lowers");
    ComponentSystemConfig {
        tasks,
        cpis,
        costs: ProtocolCosts::of(&file.cost),
    }
}

/// `file` composed as `bulwark_lab::component_system::compose` does it.
fn compose(file: &Scenario) -> Scenario {
    compose_with(file.clone(), &[lowered(file)]).expect("composes")
}

fn ms(n: u64) -> Instant {
    Instant::ZERO.saturating_add(Duration::from_millis(n))
}

#[test]
fn the_system_joins_the_scenario_after_its_own_tasks_on_its_core() {
    let composed = compose(&file());
    let names: Vec<&str> = composed.tasks.iter().map(|t| t.name.as_str()).collect();
    // The file's task, the component task, then the CPI's pool (one thread: one requester).
    assert_eq!(names, ["busy", "t1", "server.i.0"]);
    assert_eq!(composed.tasks[1].core, 0);
    assert_eq!(composed.tasks[2].core, 0);
    assert_eq!(composed.cpis.len(), 1);
    assert_eq!(composed.cpis[0].pool, [2]);
    assert_eq!(
        component_tasks(&composed),
        vec![std::ops::Range { start: 1, end: 2 }]
    );
    let part = &composed.components[0];
    assert_eq!(part.lowered, Some(1..3));
    // Composing again changes nothing.
    assert_eq!(
        compose_with(composed.clone(), &[lowered(&file())]),
        Ok(composed)
    );
    // Before composing, the machine refuses the scenario rather than ignore its components.
    let refused = Machine::new(&file(), &Options::default()).err();
    assert_eq!(refused, Some(SimError::Uncomposed));
}

#[test]
fn it_runs_as_the_component_file_does_and_the_other_core_adds_no_inversion() {
    let file = file();
    let composed = compose(&file);
    let options = Options {
        record_jobs: true,
        ..Options::default()
    };
    let outcome = Machine::new(&composed, &options)
        .unwrap()
        .measuring_inversion(true)
        .run(&mut |_| {})
        .unwrap();
    let records = outcome.components.expect("measured");
    let t1 = records.tasks[1].clone().expect("t1 is periodic");
    // By hand: eleven jobs (the run's end is inclusive: one released at 100 ms, not done),
    // each done 3 ms after its release, no inversion.
    assert_eq!(t1.jobs, 11);
    assert_eq!(t1.misses, 0);
    assert_eq!(t1.max_response, Duration::from_millis(3));
    assert_eq!(t1.max_inversion, Duration::ZERO);
    let completions: Vec<Option<Instant>> = t1.job_records.iter().map(|j| j.completion).collect();
    let mut by_hand: Vec<Option<Instant>> = (0..10).map(|k| Some(ms(10 * k + 3))).collect();
    by_hand.push(None);
    assert_eq!(completions, by_hand);
    // The same system lowered as a component file is: the same jobs and measures.
    let alone = run_components(
        &lowered(&file),
        RunOptions {
            until: ms(100),
            record_jobs: true,
            record_trace: false,
        },
    )
    .unwrap();
    assert_eq!(alone.tasks[0], t1);
    // Core 1's task ran its 2 ms of every period beside it.
    assert_eq!(outcome.tasks[0].misses, 0);
    assert_eq!(outcome.tasks[0].response.max_ns, 2_000_000);
}

/// A scenario's `[cost.ipc]` prices its components' protocol steps, as a component file's
/// does. By hand, at 1 GHz: t1's request finds the inherited CPI unlocked, so each job is
/// 1 ms of its own work, the call steps' 1,000,000 cycles (1 ms), the procedure's 2 ms and
/// the reply steps' 500,000 cycles (0.5 ms): done 4.5 ms after its release.
#[test]
fn the_scenario_cost_table_prices_the_protocol_steps() {
    let text = format!(
        "{FILE}[cost]\nclock = \"1GHz\"\n[cost.ipc]\n\
         inherited-unlocked = {{ call = 1000000, reply = 500000 }}\n"
    );
    let file =
        bulwark_spec::parse(&text, "priced.toml").unwrap_or_else(|d| panic!("{}", d.plain()));
    let row = file.cost.ipc.inherited_unlocked;
    assert_eq!((row.call, row.reply), (1_000_000, 500_000));
    let options = Options {
        record_jobs: true,
        ..Options::default()
    };
    let outcome = Machine::new(&compose(&file), &options)
        .unwrap()
        .measuring_inversion(true)
        .run(&mut |_| {})
        .unwrap();
    let t1 = outcome.components.expect("measured").tasks[1]
        .clone()
        .expect("periodic");
    assert_eq!(t1.max_response, Duration::from_micros(4_500));
    assert_eq!(t1.misses, 0);
}

/// Random component systems lowered onto core 0 beside random periodic tasks on core 1.
mod beside_any_tasks {
    use bulwark_core::reservation::Reservation;
    use bulwark_core::Priority;
    use bulwark_sim::components::{compose_lowered, CpiProtocol, LoweredTask, Step as CpiStep};
    use bulwark_sim::SliceKind;
    use bulwark_spec::{Behaviour, PolicyKind, Step, TaskSpec};
    use proptest::prelude::*;

    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// A body of up to three steps: execute up to 1.5 ms, or request a CPI after `from` (so
    /// requests never loop).
    fn body(from: usize, cpis: usize) -> BoxedStrategy<Vec<CpiStep>> {
        let execute = (0u64..=1_500).prop_map(|n| CpiStep::Execute(us(n)));
        let step = if from < cpis {
            prop_oneof![execute, (from..cpis).prop_map(CpiStep::Request)].boxed()
        } else {
            execute.boxed()
        };
        proptest::collection::vec(step, 0..=3).boxed()
    }

    /// 1-3 tasks (periods 5-20 ms, half in an SPR reservation) over 1-3 CPIs of any
    /// protocol; free protocol steps.
    fn system() -> impl Strategy<Value = ComponentSystemConfig> {
        (1usize..=3, 1usize..=3).prop_flat_map(|(tasks, cpis)| {
            let task = (
                any::<u8>(),
                5u64..=20,
                body(0, cpis),
                proptest::option::of((500u64..=5_000, 0u64..=1_000)),
            );
            let cpi = |c: usize| {
                (
                    proptest::sample::select(CpiProtocol::ALL.to_vec()),
                    any::<u8>(),
                    1u32..=3,
                    body(c + 1, cpis),
                )
            };
            let cpis_drawn: Vec<_> = (0..cpis).map(cpi).collect();
            (proptest::collection::vec(task, tasks), cpis_drawn).prop_map(|(tasks, cpis)| {
                ComponentSystemConfig {
                    tasks: tasks
                        .into_iter()
                        .enumerate()
                        .map(|(i, (priority, period, body, context))| LoweredTask {
                            name: format!("t{i}"),
                            priority: Priority(priority),
                            period: Duration::from_millis(period),
                            offset: Duration::ZERO,
                            body,
                            reservation: context.map(|(budget, eta)| Reservation {
                                budget: us(budget),
                                period: Duration::from_millis(period),
                                replenishments: 4,
                                non_preemptive: us(eta),
                            }),
                        })
                        .collect(),
                    cpis: common::numbered_cpis(cpis),
                    costs: ProtocolCosts::ZERO,
                }
            })
        })
    }

    /// Core 1's tasks: periodic scripts (the machine keeps a job log of each, as of a
    /// component task) at any priority, running up to their whole period.
    fn others() -> impl Strategy<Value = Vec<(u8, u64, u64)>> {
        proptest::collection::vec((any::<u8>(), 2u64..=10, 1u64..=100), 0..=3)
    }

    /// Core `core`'s task slices by task name, and whether any was kernel time.
    fn slices(outcome: &bulwark_sim::Outcome, names: &[String], core: u16) -> Vec<String> {
        let trace = outcome.trace.as_ref().expect("traced");
        trace
            .slices
            .iter()
            .filter(|s| s.core == core)
            .map(|s| {
                let owner = s.task.map_or("-".into(), |t| names[t.index()].clone());
                let kind = if s.kind == SliceKind::Task {
                    ""
                } else {
                    " (kernel)"
                };
                format!("{owner}{kind} {}..{}", s.start, s.end)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever runs on core 1, the component system on core 0 runs exactly as it does
        /// alone: the same slices and the same per-job records, inversion included.
        #[test]
        fn the_component_core_runs_as_it_does_alone(config in system(), others in others()) {
            let until = Duration::from_millis(60);
            let alone = bulwark_sim::components::scenario(&config, until);
            let mut composed = Scenario::new(
                "beside",
                PolicyKind::FixedPriority,
                2,
                until,
                others
                    .iter()
                    .enumerate()
                    .map(|(i, &(priority, period, percent))| TaskSpec {
                        name: format!("other{i}"),
                        core: 1,
                        priority: Some(Priority(priority)),
                        reservation: None,
                        deadline: Some(Duration::from_millis(period)),
                        behaviour: Behaviour::Script {
                            offset: Duration::ZERO,
                            steps: vec![Step::Loop {
                                count: None,
                                body: vec![
                                    Step::Run(bulwark_spec::Execution::Fixed(us(period * 10 * percent))),
                                    Step::SleepUntilNextRelease(Duration::from_millis(period)),
                                ],
                            }],
                        },
                    })
                    .collect(),
            );
            composed.cost = alone.cost;
            let range = compose_lowered(&mut composed, 0, &config).expect("composes");
            prop_assert_eq!(range.len(), alone.tasks.len());
            let options = Options { record_trace: true, record_jobs: true, ..Options::default() };
            let run = |scenario: &Scenario| {
                Machine::new(scenario, &options).unwrap().measuring_inversion(true).run(&mut |_| {})
            };
            let (together, by_itself) = (run(&composed), run(&alone));
            let (Ok(together), Ok(by_itself)) = (together.clone(), by_itself.clone()) else {
                // A system the machine refuses alone is refused beside others too.
                prop_assert_eq!(together.err(), by_itself.err());
                return Ok(());
            };
            let names = |s: &Scenario| s.tasks.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
            prop_assert_eq!(
                slices(&together, &names(&composed), 0),
                slices(&by_itself, &names(&alone), 0)
            );
            let records = together.components.unwrap();
            let records_alone = by_itself.components.unwrap();
            prop_assert_eq!(&records.tasks[range.clone()], &records_alone.tasks[..]);
            prop_assert_eq!(records.pool_exhausted, records_alone.pool_exhausted);
            prop_assert_eq!(records.protocol_errors, records_alone.protocol_errors);
        }

        /// Two component systems, one per core: each core runs exactly as its system does
        /// alone, though the second's CPIs are numbered after the first's in the machine.
        #[test]
        fn two_component_cores_each_run_as_alone(first in system(), second in system()) {
            let until = Duration::from_millis(60);
            let alone = [
                bulwark_sim::components::scenario(&first, until),
                bulwark_sim::components::scenario(&second, until),
            ];
            let mut composed =
                Scenario::new("two", PolicyKind::FixedPriority, 2, until, Vec::new());
            composed.cost = alone[0].cost;
            let ranges = [
                compose_lowered(&mut composed, 0, &first).expect("composes"),
                compose_lowered(&mut composed, 1, &second).expect("composes"),
            ];
            prop_assert_eq!(composed.cpis.len(), first.cpis.len() + second.cpis.len());
            let options = Options { record_trace: true, record_jobs: true, ..Options::default() };
            let run = |scenario: &Scenario| {
                Machine::new(scenario, &options).unwrap().measuring_inversion(true).run(&mut |_| {})
            };
            let by_itself = [run(&alone[0]), run(&alone[1])];
            let together = run(&composed);
            let (Ok(together), [Ok(first_alone), Ok(second_alone)]) = (together.clone(), by_itself)
            else {
                // A system the machine refuses alone is refused beside another too.
                prop_assert!(together.is_err());
                return Ok(());
            };
            let names = |s: &Scenario| s.tasks.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
            let records = together.components.clone().unwrap();
            for (core, by_itself) in [first_alone, second_alone].into_iter().enumerate() {
                let traced = slices(&by_itself, &names(&alone[core]), 0);
                prop_assert_eq!(slices(&together, &names(&composed), core as u16), traced);
                let records_alone = by_itself.components.unwrap();
                prop_assert_eq!(&records.tasks[ranges[core].clone()], &records_alone.tasks[..]);
            }
        }
    }
}
