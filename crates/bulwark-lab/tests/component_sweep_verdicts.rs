//! The sweep's component tests against the lab's Fig. 7 build: for sets of 4 tasks with zero
//! overheads, `component-eq2`/`-eq3`/`-eq4`/`-rta` answer as `verdicts()` of the system the
//! lab builds from the same chain tasks (same chains, priorities and work split).

use bulwark_analysis::classic::Task;
use bulwark_analysis::generate::rate_monotonic_priorities;
use bulwark_analysis::sweep::papers::component_test;
use bulwark_core::Duration;
use bulwark_lab::experiments::camkes_synthetic::{
    build, protocols, verdicts, ChainTask, Split, TABLE_3,
};
use bulwark_sim::components::ProtocolCosts;
use bulwark_spec::sweep_toml::{ComponentSplit, Components};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_sweep_answers_as_the_lab_build(
        drawn in proptest::array::uniform4((1u64..=500, 0u32..7)),
        configuration in 0usize..4,
        short in any::<bool>(),
    ) {
        // Harmonic periods 10 ms .. 640 ms (the paper's), utilisation up to 0.5 each.
        let tasks: Vec<Task> = drawn
            .iter()
            .enumerate()
            .map(|(i, &(per_mille, k))| {
                let period = (10 * MS) << k;
                Task::new(format!("t{i}"), period / 1000 * per_mille, period)
            })
            .collect();
        let (split, sweep_split) = if short {
            (Split::ShortSections, ComponentSplit::ShortSections)
        } else {
            (Split::Equal, ComponentSplit::Equal)
        };
        let topology = Components {
            configuration: TABLE_3[configuration].number,
            split: sweep_split,
        };
        let periods: Vec<Duration> = tasks.iter().map(|t| Duration::from_nanos(t.period)).collect();
        let chain_tasks: Vec<ChainTask> = tasks
            .iter()
            .zip(rate_monotonic_priorities(&periods))
            .map(|(t, priority)| ChainTask {
                period: Duration::from_nanos(t.period),
                priority,
                work: split.divide(Duration::from_nanos(t.wcet)),
            })
            .collect();
        let built = build(
            &chain_tasks,
            protocols(TABLE_3[configuration]),
            ProtocolCosts::ZERO,
        );
        // verdicts(): Eq. 2, Eq. 4, Eq. 3, RTA.
        let [eq2, eq4, eq3, rta] = verdicts(&built.analysis.timings());
        prop_assert_eq!(component_test("component-eq2", &tasks, topology), eq2);
        prop_assert_eq!(component_test("component-eq3", &tasks, topology), eq3);
        prop_assert_eq!(component_test("component-eq4", &tasks, topology), eq4);
        prop_assert_eq!(component_test("component-rta", &tasks, topology), rta);
    }
}
