//! Scenarios built from generated task sets, for benchmarks, long runs and sweeps.

use crate::generate::{task_set, PPB};
use bulwark_core::{Duration, Priority};
use bulwark_spec::{Behaviour, Execution, PolicyKind, Scenario, TaskSpec};

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
    let tasks = set
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
        .collect();
    Scenario {
        description: format!("{n} generated periodic tasks"),
        seed,
        ..Scenario::new(format!("generated-{n}"), policy, 1, duration, tasks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_set_is_rate_monotonic_at_the_requested_utilisation() {
        let s = periodic_set(
            PolicyKind::FixedPriority,
            20,
            900_000_000,
            Duration::from_secs(1),
            3,
        );
        assert_eq!(s.tasks.len(), 20);
        let mut u = 0.0;
        let period = |t: &TaskSpec| match t.behaviour {
            Behaviour::Periodic {
                period,
                execution: Execution::Fixed(c),
                ..
            } => {
                u += c.as_nanos() as f64 / period.as_nanos() as f64;
                period
            }
            _ => panic!("periodic tasks only"),
        };
        let periods: Vec<Duration> = s.tasks.iter().map(period).collect();
        assert!((u - 0.9).abs() < 1e-4, "utilisation {u}");
        for (a, b) in s
            .tasks
            .iter()
            .zip(&periods)
            .flat_map(|x| s.tasks.iter().zip(&periods).map(move |y| (x, y)))
        {
            if a.1 < b.1 {
                assert!(
                    a.0.priority >= b.0.priority,
                    "a shorter period never has a lower priority"
                );
            }
        }
        let edf = periodic_set(PolicyKind::Edf, 5, 500_000_000, Duration::from_secs(1), 3);
        assert!(edf
            .tasks
            .iter()
            .all(|t| t.priority.is_none() && t.reservation.is_none()));
    }
}
