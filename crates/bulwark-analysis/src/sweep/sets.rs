//! One random task set of a sweep, drawn from its own seed.
//!
//! Steps: (1) utilisations `U_i` summing to the point's `U` by UUniFast or UUniSort (Bini and
//! Buttazzo 2005, see [`crate::generate::uunifast`] and [`crate::generate::uunisort`]) or by
//! Stafford's randfixedsum (each `U_i <= 1`, so `U` may exceed 1; see
//! [`crate::generate::randfixedsum`]), in parts per billion; (2) periods `T_i` log-uniform in `[min, max]` (Emberson, Stafford and Davis
//! 2010, section 3: `T = exp(U(ln min, ln max))`), uniform, or uniform over the harmonic chain;
//! (3) `C_i = round(U_i T_i)`, at least 1 ns; (4) for a fraction of the sets, constrained
//! deadlines `D_i` uniform in `[C_i, T_i]`.

use bulwark_core::Duration;
use bulwark_spec::sweep_toml::{Experiment, PeriodKind, UtilisationGenerator};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::classic::Task;
use crate::generate::{self, PPB};

/// The generator of set `set` at point `point`: a ChaCha8 key made of the experiment seed,
/// the point index and the set index, so no set depends on which thread or shard draws it.
pub fn set_rng(seed: u64, point: u64, set: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&point.to_le_bytes());
    key[16..24].copy_from_slice(&set.to_le_bytes());
    ChaCha8Rng::from_seed(key)
}

/// A period in `min..=max` (ns, `0 < min <= max`) of the given kind.
pub fn period(kind: PeriodKind, min: u64, max: u64, rng: &mut ChaCha8Rng) -> u64 {
    let (min, max) = (min.max(1), max.max(min.max(1)));
    match kind {
        PeriodKind::LogUniform => {
            let drawn = generate::log_uniform_period(
                Duration::from_nanos(min),
                Duration::from_nanos(max),
                Duration::from_nanos(1),
                rng,
            );
            // exp(ln max) may round just above max.
            drawn.as_nanos().clamp(min, max)
        }
        PeriodKind::Uniform => rng.random_range(min..=max),
        PeriodKind::Harmonic => {
            let chain =
                generate::harmonic_periods(Duration::from_nanos(min), Duration::from_nanos(max), 2);
            generate::pick_period(&chain, rng).map_or(min, |d| d.as_nanos())
        }
    }
}

/// `C = round(U T)` with `U` in ppb, at least 1 ns (a task with no work is no task).
pub fn wcet(utilisation_ppb: u64, period: u64) -> u64 {
    let exact = utilisation_ppb as u128 * period as u128;
    let rounded = (exact + (PPB as u128) / 2) / PPB as u128;
    u64::try_from(rounded).unwrap_or(u64::MAX).max(1)
}

/// Set `set` of point `point`: `tasks` tasks of total utilisation `utilisation_ppb`.
pub fn draw(
    experiment: &Experiment,
    point: u64,
    set: u64,
    tasks: usize,
    utilisation_ppb: u64,
) -> Vec<Task> {
    let mut rng = set_rng(experiment.seed, point, set);
    let shares = match experiment.generator {
        UtilisationGenerator::UUniFast => generate::uunifast(tasks, utilisation_ppb, &mut rng),
        UtilisationGenerator::UUniSort => generate::uunisort(tasks, utilisation_ppb, &mut rng),
        UtilisationGenerator::RandFixedSum => {
            generate::randfixedsum(tasks, utilisation_ppb, &mut rng)
        }
    };
    // Drawn whatever the fraction, so the rest of the stream does not depend on it.
    let constrained = rng.random::<f64>() < experiment.constrained_fraction;
    shares
        .into_iter()
        .enumerate()
        .map(|(i, share)| {
            let period = period(
                experiment.period_kind,
                experiment.period_min,
                experiment.period_max,
                &mut rng,
            );
            let wcet = wcet(share, period);
            let task = Task::new(format!("t{i}"), wcet, period);
            if constrained && wcet < period {
                let deadline = rng.random_range(wcet..=period);
                task.with_deadline(deadline)
            } else {
                task
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::sweep_toml::SWEEP_TESTS;

    /// randfixedsum sets above one processor: each task fits its period (`C <= T`, since each
    /// share is at most 1), and every uniprocessor test refuses them (`U > 1` overloads one
    /// processor, so a test that admitted one would be unsound).
    #[test]
    fn sets_above_one_processor_are_drawn_and_refused() {
        let experiment = Experiment {
            name: "multi".into(),
            seed: 3,
            sets_per_point: 20,
            generator: UtilisationGenerator::RandFixedSum,
            period_kind: PeriodKind::LogUniform,
            period_min: 1_000_000,
            period_max: 100_000_000,
            constrained_fraction: 0.5,
            task_counts: vec![4],
            utilisations_ppb: vec![2_500_000_000],
            tests: SWEEP_TESTS.iter().map(|s| s.to_string()).collect(),
            simulate: false,
            cost: None,
            non_preemptive: 0,
            vbs_periods_per_job: 4,
            mcipc_server: None,
            components: None,
            criticality: None,
            cores: None,
        };
        for set in 0..20 {
            let tasks = draw(&experiment, 0, set, 4, 2_500_000_000);
            assert_eq!(tasks.len(), 4);
            assert!(tasks.iter().all(|t| t.wcet <= t.period));
            let utilisation: f64 = tasks.iter().map(|t| t.wcet as f64 / t.period as f64).sum();
            assert!((utilisation - 2.5).abs() < 1e-3, "U = {utilisation}");
            for test in SWEEP_TESTS {
                assert!(!crate::sweep::verdict::accepts(test, &tasks), "{test}");
            }
        }
    }
}
