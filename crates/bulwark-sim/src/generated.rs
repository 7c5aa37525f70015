//! Scenarios built from generated task sets, for benchmarks and long runs.

use bulwark_analysis::generate::{task_set, PPB};
use bulwark_core::{Duration, Priority};
use bulwark_spec::{Behaviour, CostModel, Execution, PolicyKind, Scenario, TaskSpec};

/// `n` implicit-deadline periodic tasks on one core at total utilisation `utilisation_ppb`
/// (parts per billion), periods log-uniform in 10..=100 ms, under `policy`. Fixed priorities
/// are rate monotonic.
pub fn periodic_set(
    policy: PolicyKind,
    n: usize,
    utilisation_ppb: u64,
    duration: Duration,
    seed: u64,
) -> Scenario {
    let set = task_set(
        n,
        utilisation_ppb.min(PPB * 4),
        Duration::from_millis(10),
        Duration::from_millis(100),
        seed,
    );
    let mut by_period: Vec<usize> = (0..set.len()).collect();
    by_period.sort_by_key(|&i| std::cmp::Reverse(set[i].period));
    let mut rank = vec![0u8; set.len()];
    for (r, &i) in by_period.iter().enumerate() {
        rank[i] = (r * 255 / set.len().max(1)) as u8;
    }
    Scenario {
        name: format!("generated-{n}"),
        description: format!("{n} generated periodic tasks"),
        seed,
        duration,
        cores: 1,
        policy,
        cost: CostModel::default(),
        tasks: set
            .iter()
            .enumerate()
            .map(|(i, t)| TaskSpec {
                name: format!("t{i}"),
                core: 0,
                priority: (policy == PolicyKind::FixedPriority).then_some(Priority(rank[i])),
                reservation: None,
                deadline: Some(t.period),
                behaviour: Behaviour::Periodic {
                    period: t.period,
                    offset: Duration::ZERO,
                    execution: Execution::Fixed(t.execution),
                },
            })
            .collect(),
    }
}
