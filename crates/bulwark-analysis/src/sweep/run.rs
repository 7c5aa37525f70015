//! Running a sweep: the grid of points, shards of the (point, set) index space, per-point
//! acceptance counts, merging shards, and the CSV and JSON results.
//!
//! With `simulate = true` each set a test admits is also run by a [`Simulator`] under the
//! scheduler that test speaks for ([`verdict::schedule`]), and the sets that then miss a
//! deadline are counted per test (`admitted_but_missed`): a non-zero count shows the test
//! unsound. The simulator is passed in (the engine itself does not depend on one).
//!
//! The global index of set `s` at point `p` is `p * sets_per_point + s`; shard `i/N` runs the
//! indices congruent to `i` modulo `N` (so every shard gets a share of the slow, high-utilisation
//! points). Counts are sums, so a merge of all `N` shards equals a single run exactly.

use std::fmt::Write as _;

use bulwark_spec::sweep_toml::Experiment;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::sets;
use super::verdict::{self, Overheads, Schedule};
use crate::classic::Task;
use crate::generate::PPB;

/// Runs one set on one core from a synchronous release (every task's first job at 0), each
/// job executing its WCET: whether some job misses its deadline.
pub trait Simulator: Sync {
    /// True when a job of `tasks` scheduled by `schedule` misses its deadline.
    fn misses(&self, tasks: &[Task], schedule: &Schedule) -> bool;
}

/// For each test, whether it admitted `tasks` (`admitted[k]`) and the simulation under its
/// scheduler (with the file's `overheads` for `spr-eq1`) then missed a deadline. Each
/// distinct schedule is simulated once per set.
pub fn admitted_but_missed(
    tests: &[String],
    admitted: &[bool],
    tasks: &[Task],
    overheads: &Overheads,
    simulator: &dyn Simulator,
) -> Vec<bool> {
    let mut simulated: Vec<(Schedule, bool)> = Vec::new();
    tests
        .iter()
        .zip(admitted)
        .map(|(test, &yes)| {
            if !yes {
                return false;
            }
            // No schedule: fp-audsley without an order (it then admitted nothing), or a test
            // of unsimulated_tests(), which a file with `simulate = true` cannot list (the
            // spec refuses it at the test's name), so nothing admitted goes unchecked here.
            let Some(schedule) = verdict::schedule_with(test, tasks, overheads) else {
                return false;
            };
            if let Some(&(_, missed)) = simulated.iter().find(|(s, _)| *s == schedule) {
                return missed;
            }
            let missed = simulator.misses(tasks, &schedule);
            simulated.push((schedule, missed));
            missed
        })
        .collect()
}

/// One point of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Tasks per set.
    pub tasks: usize,
    /// Total utilisation, parts per billion.
    pub utilisation_ppb: u64,
}

/// The grid: every task count, and for each every utilisation, in file order.
pub fn points(experiment: &Experiment) -> Vec<Point> {
    experiment
        .task_counts
        .iter()
        .flat_map(|&tasks| {
            experiment
                .utilisations_ppb
                .iter()
                .map(move |&utilisation_ppb| Point {
                    tasks,
                    utilisation_ppb,
                })
        })
        .collect()
}

/// Shard `index` of `count` (`index < count`): the `i/N` of `--shard`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shard {
    /// `i`, from 0.
    pub index: u64,
    /// `N`, at least 1.
    pub count: u64,
}

impl Shard {
    /// The whole sweep: shard 0 of 1.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Reads `i/N` with `0 <= i < N`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let wrong = || format!("shard `{text}` is not i/N with 0 <= i < N, like 0/4");
        let (index, count) = text.split_once('/').ok_or_else(wrong)?;
        let index: u64 = index.trim().parse().map_err(|_| wrong())?;
        let count: u64 = count.trim().parse().map_err(|_| wrong())?;
        if index >= count {
            return Err(wrong());
        }
        Ok(Shard { index, count })
    }

    /// Whether the set with global index `global` belongs to this shard.
    pub fn owns(self, global: u64) -> bool {
        global % self.count.max(1) == self.index
    }
}

/// Acceptance counts at one point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointCounts {
    /// The point.
    pub point: Point,
    /// Sets drawn here (by this shard).
    pub sets: u64,
    /// Sets accepted, per test, in the experiment's test order.
    pub accepted: Vec<u64>,
    /// With `simulate = true`: per test, the sets it accepted whose simulation missed a
    /// deadline. Absent otherwise, so files without `simulate` read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted_but_missed: Option<Vec<u64>>,
}

/// The counts of a run or of one shard: what a shard writes and a merge reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// The experiment's name.
    pub name: String,
    /// The whole experiment as parsed, so a merge refuses shards of different experiments.
    pub experiment: String,
    /// The tests, in order.
    pub tests: Vec<String>,
    /// Which shards these counts cover: `[index]` of `count`; all of them after a merge.
    pub shards: Vec<u64>,
    /// `N`.
    pub shard_count: u64,
    /// One entry per point, in grid order.
    pub points: Vec<PointCounts>,
}

/// Runs the sets of `shard` on the current rayon pool; `progress(1)` after each set.
pub fn run(experiment: &Experiment, shard: Shard, progress: &(dyn Fn(u64) + Sync)) -> Counts {
    run_simulated(experiment, shard, progress, None)
}

/// Sets drawn, accepted per test and (when simulated) admitted-but-missed per test, at one
/// point.
#[derive(Clone)]
struct Slot {
    sets: u64,
    accepted: Vec<u64>,
    missed: Vec<u64>,
}

/// [`run`], and with a `simulator` also the [`admitted_but_missed`] counts.
pub fn run_simulated(
    experiment: &Experiment,
    shard: Shard,
    progress: &(dyn Fn(u64) + Sync),
    simulator: Option<&dyn Simulator>,
) -> Counts {
    let grid = points(experiment);
    let tests = &experiment.tests;
    let per_point = experiment.sets_per_point;
    let overheads = Overheads::of(experiment);
    let total = (grid.len() as u64).saturating_mul(per_point);
    let zero = || {
        let slot = Slot {
            sets: 0,
            accepted: vec![0; tests.len()],
            missed: vec![0; tests.len()],
        };
        vec![slot; grid.len()]
    };
    let sums = (0..total)
        .into_par_iter()
        .filter(|&global| shard.owns(global))
        .fold(zero, |mut acc, global| {
            let (point, set) = (global / per_point, global % per_point);
            let at = grid[point as usize];
            let tasks = sets::draw(experiment, point, set, at.tasks, at.utilisation_ppb);
            let admitted: Vec<bool> = tests
                .iter()
                .map(|t| verdict::accepts_with(t, &tasks, &overheads))
                .collect();
            let slot = &mut acc[point as usize];
            slot.sets += 1;
            for (count, &yes) in slot.accepted.iter_mut().zip(&admitted) {
                *count += u64::from(yes);
            }
            if let Some(simulator) = simulator {
                let missed = admitted_but_missed(tests, &admitted, &tasks, &overheads, simulator);
                for (count, yes) in slot.missed.iter_mut().zip(missed) {
                    *count += u64::from(yes);
                }
            }
            progress(1);
            acc
        })
        .reduce(zero, add);
    Counts {
        name: experiment.name.clone(),
        experiment: format!("{experiment:?}"),
        tests: tests.clone(),
        shards: vec![shard.index],
        shard_count: shard.count,
        points: grid
            .into_iter()
            .zip(sums)
            .map(|(point, slot)| PointCounts {
                point,
                sets: slot.sets,
                accepted: slot.accepted,
                admitted_but_missed: simulator.map(|_| slot.missed),
            })
            .collect(),
    }
}

fn add(mut left: Vec<Slot>, right: Vec<Slot>) -> Vec<Slot> {
    for (l, r) in left.iter_mut().zip(right) {
        l.sets += r.sets;
        for (a, b) in l.accepted.iter_mut().zip(r.accepted) {
            *a += b;
        }
        for (a, b) in l.missed.iter_mut().zip(r.missed) {
            *a += b;
        }
    }
    left
}

/// Sums shard counts of one experiment; an error says why they do not fit together
/// (different experiments, or a shard twice).
pub fn merge(parts: &[Counts]) -> Result<Counts, String> {
    let Some(first) = parts.first() else {
        return Err("no shard files to merge".to_owned());
    };
    let mut merged = first.clone();
    for part in &parts[1..] {
        if part.experiment != first.experiment
            || part.tests != first.tests
            || part.shard_count != first.shard_count
            || part.points.len() != first.points.len()
            || part.points.iter().zip(&first.points).any(|(a, b)| {
                a.point != b.point
                    || a.admitted_but_missed.is_some() != b.admitted_but_missed.is_some()
            })
        {
            return Err(format!(
                "shards of different experiments or splits: `{}` split {} ways and `{}` split {} ways",
                first.name, first.shard_count, part.name, part.shard_count
            ));
        }
        if let Some(twice) = part.shards.iter().find(|s| merged.shards.contains(s)) {
            return Err(format!(
                "shard {twice}/{} is given twice",
                first.shard_count
            ));
        }
        merged.shards.extend(&part.shards);
        for (into, from) in merged.points.iter_mut().zip(&part.points) {
            into.sets += from.sets;
            for (a, b) in into.accepted.iter_mut().zip(&from.accepted) {
                *a += b;
            }
            if let (Some(into), Some(from)) =
                (&mut into.admitted_but_missed, &from.admitted_but_missed)
            {
                for (a, b) in into.iter_mut().zip(from) {
                    *a += b;
                }
            }
        }
    }
    merged.shards.sort_unstable();
    Ok(merged)
}

impl Counts {
    /// Whether every shard of the split is here.
    pub fn complete(&self) -> bool {
        self.shards.len() as u64 == self.shard_count
            && self.shards.iter().enumerate().all(|(i, &s)| s == i as u64)
    }

    /// The partial counts as JSON, for `merge`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Reads what [`Counts::to_json`] wrote.
    pub fn from_json(text: &str) -> Result<Counts, String> {
        let counts: Counts = serde_json::from_str(text).map_err(|e| e.to_string())?;
        // A hand-edited file must not make the merge or the plot index out of range.
        let fits = |p: &PointCounts| {
            p.accepted.len() == counts.tests.len()
                && p.accepted.iter().all(|&a| a <= p.sets)
                && p.admitted_but_missed.as_ref().is_none_or(|missed| {
                    missed.len() == p.accepted.len()
                        && missed.iter().zip(&p.accepted).all(|(m, a)| m <= a)
                })
        };
        if counts.shard_count == 0 || !counts.points.iter().all(fits) {
            return Err(
                "the counts do not fit together (a test without a count, more sets \
                        accepted than drawn, more admitted-but-missed than accepted, or a \
                        split into 0 shards)"
                    .to_owned(),
            );
        }
        Ok(counts)
    }

    /// Whether these counts carry `admitted_but_missed` (the sweep was simulated).
    pub fn simulated(&self) -> bool {
        self.points
            .first()
            .is_some_and(|p| p.admitted_but_missed.is_some())
    }

    /// Per test, the sets it admitted that missed a deadline in simulation, over every point;
    /// all zero when not simulated.
    pub fn admitted_but_missed_totals(&self) -> Vec<(String, u64)> {
        self.tests
            .iter()
            .enumerate()
            .map(|(k, test)| {
                let total = self
                    .points
                    .iter()
                    .filter_map(|p| p.admitted_but_missed.as_ref()?.get(k).copied())
                    .sum();
                (test.clone(), total)
            })
            .collect()
    }

    /// One row per point: tasks, utilisation, sets, then each test's acceptance ratio; when
    /// simulated, then each test's admitted-but-missed count (`TEST:admitted_but_missed`).
    pub fn csv(&self) -> String {
        let mut out = String::from("tasks,utilisation,sets");
        for test in &self.tests {
            let _ = write!(out, ",{test}");
        }
        if self.simulated() {
            for test in &self.tests {
                let _ = write!(out, ",{test}:admitted_but_missed");
            }
        }
        out.push('\n');
        for p in &self.points {
            let _ = write!(
                out,
                "{},{},{}",
                p.point.tasks,
                decimal(p.point.utilisation_ppb),
                p.sets
            );
            for &accepted in &p.accepted {
                let _ = write!(out, ",{:.6}", ratio(accepted, p.sets));
            }
            for &missed in p.admitted_but_missed.iter().flatten() {
                let _ = write!(out, ",{missed}");
            }
            out.push('\n');
        }
        out
    }

    /// The results as JSON: per point the counts and ratios by test name.
    pub fn results_json(&self) -> String {
        let points: Vec<serde_json::Value> = self
            .points
            .iter()
            .map(|p| {
                let by_test = |f: &dyn Fn(u64) -> serde_json::Value| {
                    self.tests
                        .iter()
                        .zip(&p.accepted)
                        .map(|(t, &a)| (t.clone(), f(a)))
                        .collect::<serde_json::Map<_, _>>()
                };
                let mut point = serde_json::json!({
                    "tasks": p.point.tasks,
                    "utilisation": p.point.utilisation_ppb as f64 / PPB as f64,
                    "sets": p.sets,
                    "accepted": by_test(&|a| a.into()),
                    "ratio": by_test(&|a| ratio(a, p.sets).into()),
                });
                if let (Some(missed), Some(object)) =
                    (&p.admitted_but_missed, point.as_object_mut())
                {
                    let missed: serde_json::Map<_, _> = self
                        .tests
                        .iter()
                        .zip(missed)
                        .map(|(t, &m)| (t.clone(), m.into()))
                        .collect();
                    object.insert("admitted_but_missed".to_owned(), missed.into());
                }
                point
            })
            .collect();
        let value = serde_json::json!({
            "name": self.name,
            "tests": self.tests,
            "points": points,
        });
        serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
    }

    /// Per task count, the acceptance ratio of each test against utilisation: the curves of
    /// the plot, `(series name, [(U, ratio)])`.
    pub fn curves(&self) -> Vec<(String, Vec<(f64, f64)>)> {
        let mut counts: Vec<usize> = self.points.iter().map(|p| p.point.tasks).collect();
        counts.dedup();
        let many = counts.len() > 1;
        let mut curves = Vec::new();
        for &n in &counts {
            for (k, test) in self.tests.iter().enumerate() {
                let name = if many {
                    format!("{test} n={n}")
                } else {
                    test.clone()
                };
                let line = self
                    .points
                    .iter()
                    .filter(|p| p.point.tasks == n)
                    .map(|p| {
                        (
                            p.point.utilisation_ppb as f64 / PPB as f64,
                            ratio(p.accepted.get(k).copied().unwrap_or(0), p.sets),
                        )
                    })
                    .collect();
                curves.push((name, line));
            }
        }
        curves
    }
}

fn ratio(accepted: u64, sets: u64) -> f64 {
    if sets == 0 {
        0.0
    } else {
        accepted as f64 / sets as f64
    }
}

/// `ppb / 10^9` written exactly, without trailing zeros: 750000000 is `0.75`.
fn decimal(ppb: u64) -> String {
    let (whole, part) = (ppb / PPB, ppb % PPB);
    if part == 0 {
        return whole.to_string();
    }
    let digits = format!("{part:09}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::sweep_toml::{PeriodKind, UtilisationGenerator};

    /// A stand-in simulator with a verdict that depends on the set alone: "misses" when the
    /// first task's WCET is odd. Enough to follow the counts through threads and shards.
    struct OddFirstWcet;

    impl Simulator for OddFirstWcet {
        fn misses(&self, tasks: &[Task], _: &Schedule) -> bool {
            tasks.first().is_some_and(|t| t.wcet % 2 == 1)
        }
    }

    fn experiment() -> Experiment {
        Experiment {
            name: "simulated".into(),
            seed: 4,
            sets_per_point: 40,
            generator: UtilisationGenerator::UUniFast,
            period_kind: PeriodKind::LogUniform,
            period_min: 1_000_000,
            period_max: 100_000_000,
            constrained_fraction: 0.5,
            task_counts: vec![3, 5],
            utilisations_ppb: vec![400_000_000, 800_000_000],
            tests: vec!["fp-rta-rm".into(), "edf-qpa".into(), "spr-eq1".into()],
            simulate: true,
            cost: None,
            non_preemptive: 0,
            vbs_periods_per_job: 4,
            mcipc_server: None,
            components: None,
            criticality: None,
            cores: None,
        }
    }

    /// The admitted-but-missed counts are sums like the others: the same for 1 and 3 threads
    /// and for a merge of 3 shards, each at most the test's accepted count, and non-zero
    /// (about half the admitted sets have an odd first WCET).
    #[test]
    fn simulated_counts_do_not_depend_on_threads_or_shards() {
        let e = experiment();
        let in_pool = |threads: usize, shard: Shard| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| run_simulated(&e, shard, &|_| {}, Some(&OddFirstWcet)))
        };
        let whole = in_pool(1, Shard::WHOLE);
        assert_eq!(in_pool(3, Shard::WHOLE), whole);
        let parts: Vec<Counts> = (0..3)
            .map(|index| in_pool(2, Shard { index, count: 3 }))
            .collect();
        let merged = merge(&parts).unwrap();
        assert_eq!(merged.csv(), whole.csv());
        assert_eq!(merged.results_json(), whole.results_json());
        assert!(whole.simulated());
        let mut any = false;
        for p in &whole.points {
            let missed = p.admitted_but_missed.as_ref().unwrap();
            for (m, a) in missed.iter().zip(&p.accepted) {
                assert!(m <= a);
                any |= *m > 0;
            }
        }
        assert!(any);
        // A shard file round-trips with its counts; one without them cannot join it.
        let text = parts[0].to_json();
        assert_eq!(Counts::from_json(&text).unwrap(), parts[0]);
        let mut plain = parts[1].clone();
        for p in &mut plain.points {
            p.admitted_but_missed = None;
        }
        assert!(merge(&[parts[0].clone(), plain, parts[2].clone()]).is_err());
        // Without a simulator: no column, and the CSV header is the plain one.
        let unsimulated = run(&e, Shard::WHOLE, &|_| {});
        assert!(!unsimulated.simulated());
        assert_eq!(
            unsimulated.csv().lines().next(),
            Some("tasks,utilisation,sets,fp-rta-rm,edf-qpa,spr-eq1")
        );
    }
}
