//! A rogue contained by sporadic reservations under global EDF: the MC-IPC paper's clustered
//! reservation scheduler (section III) on a cluster of two cores (`[[cluster]]` in
//! `scenarios/global-reservations.toml`), beside a partitioned fixed-priority core 0.
//!
//! Theory: each member runs in a sporadic reservation `(e, p)` whose EDF deadline is its last
//! replenishment plus `p`; the reservations, read as implicit-deadline sporadic tasks, pass
//! Goossens, Funk and Baruah's test (`U = 13/10 <= 2 - 6/10`, `bulwark_analysis::global_edf`),
//! so each gets `e` within `p` of each replenishment. The victims' jobs fit their
//! reservations (`C <= e`, `T = p`), so each completes within `p` of its release; the rogue's
//! jobs need five times its budget, and it gets exactly `e` per replenishment, no more. The
//! file's comments work the cluster's first 50 ms out by hand (who runs on which core, each
//! completion); the checks compare the run with them, check the budgets, the cluster's
//! capacity and the partitioned core's independence from the cluster.

use bulwark_analysis::cluster::{self, ClusterVerdict};
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Outcome, SliceKind};
use bulwark_spec::{PolicyKind, Scenario};

use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::gantt::gantt_svg;
use crate::report::{headings, Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "global-reservations",
    title: "A rogue contained by sporadic reservations under global EDF on a cluster of two cores",
    run,
};

const MS: u64 = 1_000_000;
/// The window the file's comments work out by hand, `[0, 50)` ms.
const WINDOW_MS: u64 = 50;
/// By hand: each member's job completions in the window, in ms.
const HAND_COMPLETIONS: &[(&str, &[u64])] = &[
    ("rogue", &[42]),
    ("victim-a", &[5, 16, 26, 36, 46]),
    ("victim-b", &[11, 21, 31, 41]),
];
/// By hand: the cluster's schedule in the window as (core, task, start ms, end ms), core by
/// core in time order; victim-b's last slice on core 1 (45-51) is cut at the window's end.
const HAND_SCHEDULE: &[(u16, &str, u64, u64)] = &[
    (1, "rogue", 0, 2),
    (1, "victim-b", 5, 11),
    (1, "victim-a", 11, 16),
    (1, "rogue", 20, 22),
    (1, "victim-b", 25, 31),
    (1, "victim-a", 31, 36),
    (1, "rogue", 40, 42),
    (1, "victim-b", 45, 50),
    (2, "victim-a", 0, 5),
    (2, "rogue", 10, 12),
    (2, "victim-b", 15, 21),
    (2, "victim-a", 21, 26),
    (2, "rogue", 30, 32),
    (2, "victim-b", 35, 41),
    (2, "victim-a", 41, 46),
];
const ROGUE: &str = "rogue";
const VICTIMS: [&str; 2] = ["victim-a", "victim-b"];

/// Claims the tests name.
const CLAIM_COMPLETIONS: &str =
    "by hand: the members' job completions in [0, 50) ms are those the file works out";
const CLAIM_VICTIMS: &str = "GFB (bulwark_analysis::global_edf) admits the reservations and C \
                             <= e, T = p: every victim meets every deadline and responds within \
                             its reservation period";
const CLAIM_BUDGETS: &str = "sporadic rule (section III): no member executes more than e in \
                             [t, t + p) from any replenishment t";
const CLAIM_ROGUE: &str = "the rogue is contained: exactly its e = 2 ms in each replenishment \
                           window (at most e by the sporadic rule, all of e by GFB), and it \
                           migrates";
const CLAIM_ANALYSIS: &str =
    "bulwark_analysis::cluster: GFB's test shows the cluster's reservations schedulable";

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario("global-reservations")?;
    run_on(&scenario)
}

/// One member's figures from the run.
struct MemberRun {
    name: String,
    budget: u64,
    period: u64,
    /// Its execution in each replenishment window, in window order.
    windows: Vec<u64>,
    /// The cores it ran on.
    cores: Vec<u16>,
}

/// The experiment on `scenario` (the built-in file, or a test's broken copy of it).
fn run_on(scenario: &Scenario) -> Result<ExperimentReport, LabError> {
    let options = super::recording();
    let whole = bulwark_sim::run(scenario, &options)?;
    let parts = scenario.parts_by_policy();
    let partitioned = parts
        .iter()
        .find(|p| p.policy == PolicyKind::FixedPriority)
        .expect("the file has a fixed-priority core");
    let alone = bulwark_sim::run(partitioned, &options)?;

    let cluster_spec = scenario.clusters.first().expect("the file has a cluster");
    let cluster_cores = cluster_spec.cores.clone();
    let horizon = scenario.duration.as_nanos();
    let runs = merged(&task_slices(&whole));
    let members: Vec<MemberRun> = cluster_spec
        .members
        .iter()
        .map(|member| member_run(&whole, scenario, member.task, &runs, horizon))
        .collect();
    let member_ids: Vec<usize> = cluster_spec.members.iter().map(|m| m.task).collect();

    // Check 1: completions and the schedule against the hand-worked window.
    let window = WINDOW_MS * MS;
    let completions: Vec<(String, Vec<u64>)> = HAND_COMPLETIONS
        .iter()
        .map(|(name, _)| {
            let done = index_of(scenario, name)
                .map(|task| completions_before(&whole, task, window))
                .unwrap_or_default();
            (name.to_string(), done.iter().map(|ns| ns / MS).collect())
        })
        .collect();
    let completions_match = HAND_COMPLETIONS
        .iter()
        .zip(&completions)
        .all(|((_, hand), (_, measured))| *hand == measured.as_slice());
    let schedule = schedule_in(&runs, scenario, &cluster_cores, window);
    let hand_schedule: Vec<(u16, String, u64, u64)> = HAND_SCHEDULE
        .iter()
        .map(|&(core, name, start, end)| (core, name.to_owned(), start * MS, end * MS))
        .collect();
    let schedule_difference = first_difference(&hand_schedule, &schedule);

    // Check 3: the cluster's capacity and one core per task.
    let concurrency = most_at_once(&runs, &member_ids, &cluster_cores);
    let off_cluster = runs
        .iter()
        .filter(|r| member_ids.contains(&r.task) && !cluster_cores.contains(&r.core))
        .count();
    let doubled: Vec<String> = (0..scenario.tasks.len())
        .filter(|&task| runs_on_two_cores(&runs, task))
        .map(|task| scenario.tasks[task].name.clone())
        .collect();

    // Check 4: the victims.
    let victims: Vec<_> = VICTIMS
        .iter()
        .filter_map(|name| whole.tasks.iter().find(|t| t.name == *name))
        .collect();
    let victim_periods: Vec<u64> = VICTIMS
        .iter()
        .filter_map(|name| members.iter().find(|m| m.name == *name))
        .map(|m| m.period)
        .collect();
    let victims_hold = victims.len() == VICTIMS.len()
        && victim_periods.len() == VICTIMS.len()
        && victims
            .iter()
            .zip(&victim_periods)
            .all(|(v, &period)| v.misses == 0 && v.completed > 0 && v.response.max_ns <= period);

    // Check 5: the rogue.
    let rogue = members.iter().find(|m| m.name == ROGUE);
    let rogue_contained = rogue.is_some_and(|r| {
        // Its last window may run past the horizon: only whole windows must be full.
        let whole_windows = r.windows.len().saturating_sub(1);
        !r.windows.is_empty()
            && r.windows.iter().all(|&used| used <= r.budget)
            && r.windows[..whole_windows]
                .iter()
                .all(|&used| used == r.budget)
            && cluster_cores.iter().all(|core| r.cores.contains(core))
    });

    // Check 6: core 0 is the partitioned part's alone.
    let core0 = super::slices_by_name(&whole, scenario, 0);
    let core0_alone = super::slices_by_name(&alone, partitioned, 0);
    let core0_same = !core0.is_empty() && core0 == core0_alone;

    // The analysis of the cluster (GFB over the reservations).
    let analyses = cluster::analyse(scenario);
    let verdict = analyses.first().map(|a| a.verdict);
    let gfb = verdict.and_then(|v| v.test().copied());

    let budgets_hold = members
        .iter()
        .all(|m| !m.windows.is_empty() && m.windows.iter().all(|&used| used <= m.budget));
    let checks = vec![
        Check {
            claim: CLAIM_COMPLETIONS.into(),
            expected: completion_list(
                HAND_COMPLETIONS
                    .iter()
                    .map(|(name, done)| (name.to_string(), done.to_vec())),
            ),
            measured: completion_list(completions.iter().cloned()),
            pass: completions_match,
        },
        Check {
            claim: "by hand: who runs on which cluster core in [0, 50) ms is the file's schedule \
                    (the rogue on core 1, then core 2, in turn)"
                .into(),
            expected: format!("{} slices as worked out", hand_schedule.len()),
            measured: schedule_difference
                .clone()
                .unwrap_or_else(|| format!("{} slices, identical", schedule.len())),
            pass: schedule_difference.is_none(),
        },
        Check {
            claim: CLAIM_BUDGETS.into(),
            expected: members
                .iter()
                .map(|m| format!("{} <= {}", m.name, ms(m.budget)))
                .collect::<Vec<_>>()
                .join(", "),
            measured: members
                .iter()
                .map(|m| {
                    format!(
                        "{} at most {} in {} windows",
                        m.name,
                        ms(m.windows.iter().copied().max().unwrap_or(0)),
                        m.windows.len()
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
            pass: budgets_hold,
        },
        Check {
            claim: "section III: at most m = 2 members run at once, only on the cluster's cores, \
                    and no task runs on two cores at once"
                .into(),
            expected: "at most 2 at once, 0 off the cluster, none doubled".into(),
            measured: format!(
                "at most {concurrency} at once, {off_cluster} off the cluster, doubled: {}",
                if doubled.is_empty() {
                    "none".to_owned()
                } else {
                    doubled.join(", ")
                }
            ),
            pass: concurrency <= cluster_cores.len() && off_cluster == 0 && doubled.is_empty(),
        },
        Check {
            claim: CLAIM_VICTIMS.into(),
            expected: "0 misses, max response <= 10ms each".into(),
            measured: victims
                .iter()
                .map(|v| {
                    format!(
                        "{}: {} jobs, {} misses, max response {}",
                        v.name,
                        v.jobs,
                        v.misses,
                        ms(v.response.max_ns)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
            pass: victims_hold,
        },
        Check {
            claim: CLAIM_ROGUE.into(),
            expected: "2ms per window, on cores 1 and 2".into(),
            measured: rogue.map_or("no rogue".into(), |r| {
                format!(
                    "{:?} ms per window, on cores {:?}",
                    r.windows
                        .iter()
                        .map(|&ns| ns as f64 / 1e6)
                        .collect::<Vec<_>>(),
                    r.cores
                )
            }),
            pass: rogue_contained,
        },
        Check {
            claim: "core 0's schedule is the partitioned part's run alone, slice for slice".into(),
            expected: "identical".into(),
            measured: format!(
                "{} ({} slices)",
                if core0_same { "identical" } else { "different" },
                core0.len()
            ),
            pass: core0_same,
        },
        Check {
            claim: CLAIM_ANALYSIS.into(),
            expected: "schedulable: U = 13/10 <= m - (m - 1) U_max = 2 - 3/5 = 7/5".into(),
            measured: gfb.map_or("not analysed".into(), |test| {
                format!(
                    "{}: U = {}/{} against {}/{}",
                    if test.schedulable {
                        "schedulable"
                    } else {
                        "not shown schedulable"
                    },
                    test.total.numerator,
                    test.total.denominator,
                    test.bound_numerator,
                    test.largest.denominator
                )
            }),
            pass: matches!(verdict, Some(ClusterVerdict::Schedulable(_))),
        },
    ];

    let span = Instant::from_nanos(window);
    let figures = gantt_svg(&whole, Instant::ZERO, span)
        .map(|svg| Figure {
            file: "global-reservations-gantt.svg".into(),
            caption: "The first 50 ms: core 0 under fixed priority, cores 1 and 2 one EDF \
                      cluster of sporadic reservations (the rogue 2 ms per 10 ms, on alternate \
                      cores)"
                .into(),
            svg,
        })
        .into_iter()
        .collect();
    Ok(ExperimentReport {
        source: "MC-IPC paper, section III (clustered sporadic reservations); Goossens, Funk \
                 and Baruah's global EDF test (2003)"
            .into(),
        summary: "One system file, `scenarios/global-reservations.toml`: a `[[cluster]]` makes \
                  cores 1 and 2 one cluster whose members run in sporadic reservations under \
                  global EDF, beside a fixed-priority core 0. A rogue whose jobs need five \
                  times its budget shares the cluster with two victims; the file's comments \
                  work the first 50 ms out by hand, which the run must match. The rogue gets \
                  exactly its budget per replenishment and migrates between the cores, the \
                  victims respond within their periods, and core 0 runs as it would alone."
            .into(),
        checks,
        tables: vec![
            member_table(&members, &whole),
            super::textbook::summary_table(&whole),
        ],
        figures,
        ..EXPERIMENT.blank_report()
    })
}

/// Per member: its reservation, replenishment windows, most used in one, cores and jobs.
fn member_table(members: &[MemberRun], o: &Outcome) -> Table {
    Table {
        caption: "Cluster members: execution per replenishment window".into(),
        header: headings([
            "task",
            "reservation (e, p)",
            "windows",
            "most in one",
            "cores",
            "jobs completed",
            "misses",
        ]),
        rows: members
            .iter()
            .map(|m| {
                let metrics = o.tasks.iter().find(|t| t.name == m.name);
                vec![
                    m.name.clone(),
                    format!("({}, {})", ms(m.budget), ms(m.period)),
                    m.windows.len().to_string(),
                    ms(m.windows.iter().copied().max().unwrap_or(0)),
                    format!("{:?}", m.cores),
                    metrics.map_or("-".into(), |t| format!("{} of {}", t.completed, t.jobs)),
                    metrics.map_or("-".into(), |t| t.misses.to_string()),
                ]
            })
            .collect(),
    }
}

fn ms(ns: u64) -> String {
    Duration::from_nanos(ns).to_string()
}

fn index_of(scenario: &Scenario, name: &str) -> Option<usize> {
    scenario.tasks.iter().position(|t| t.name == name)
}

fn completion_list(lists: impl Iterator<Item = (String, Vec<u64>)>) -> String {
    lists
        .map(|(name, done)| format!("{name} {done:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One stretch of a task on a core, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stretch {
    core: u16,
    task: usize,
    start: u64,
    end: u64,
}

/// The trace's task slices (the file has no kernel costs: a member's time is all here),
/// empty ones left out.
fn task_slices(o: &Outcome) -> Vec<Stretch> {
    o.trace.as_ref().map_or_else(Vec::new, |trace| {
        trace
            .slices
            .iter()
            .filter(|s| s.kind == SliceKind::Task && s.end > s.start)
            .filter_map(|s| {
                Some(Stretch {
                    core: s.core,
                    task: s.task?.index(),
                    start: s.start.as_nanos(),
                    end: s.end.as_nanos(),
                })
            })
            .collect()
    })
}

/// `slices` by core and start, each task's abutting slices on one core joined (a decision
/// at an instant may split a slice without changing anything).
fn merged(slices: &[Stretch]) -> Vec<Stretch> {
    let mut sorted = slices.to_vec();
    sorted.sort_by_key(|s| (s.core, s.start));
    let mut out: Vec<Stretch> = Vec::with_capacity(sorted.len());
    for slice in sorted {
        match out.last_mut() {
            Some(last)
                if last.core == slice.core
                    && last.task == slice.task
                    && last.end == slice.start =>
            {
                last.end = slice.end;
            }
            _ => out.push(slice),
        }
    }
    out
}

/// The cluster's stretches before `end`, cut there, as (core, task name, start, end).
fn schedule_in(
    runs: &[Stretch],
    scenario: &Scenario,
    cores: &[u16],
    end: u64,
) -> Vec<(u16, String, u64, u64)> {
    runs.iter()
        .filter(|r| cores.contains(&r.core) && r.start < end)
        .map(|r| {
            let name = scenario.tasks[r.task].name.clone();
            (r.core, name, r.start, r.end.min(end))
        })
        .collect()
}

/// The first place the measured schedule departs from the hand-worked one, if any.
fn first_difference(
    hand: &[(u16, String, u64, u64)],
    measured: &[(u16, String, u64, u64)],
) -> Option<String> {
    let show = |s: Option<&(u16, String, u64, u64)>| {
        s.map_or("nothing".to_owned(), |(core, name, start, end)| {
            format!(
                "core {core}: {name} {}-{} ms",
                *start as f64 / 1e6,
                *end as f64 / 1e6
            )
        })
    };
    (0..hand.len().max(measured.len()))
        .find(|&k| hand.get(k) != measured.get(k))
        .map(|k| {
            format!(
                "slice {k}: {} by hand, {} measured",
                show(hand.get(k)),
                show(measured.get(k))
            )
        })
}

/// `task`'s job completions before `end`, in ns, in job order.
fn completions_before(o: &Outcome, task: usize, end: u64) -> Vec<u64> {
    let mut jobs: Vec<_> = o
        .jobs
        .iter()
        .flatten()
        .filter(|j| j.task.index() == task)
        .collect();
    jobs.sort_by_key(|j| j.job);
    jobs.iter()
        .filter_map(|j| j.completion.map(Instant::as_nanos))
        .filter(|&done| done < end)
        .collect()
}

/// A member's reservation, replenishment windows and cores, from the run.
fn member_run(
    o: &Outcome,
    scenario: &Scenario,
    task: usize,
    runs: &[Stretch],
    horizon: u64,
) -> MemberRun {
    let spec = &scenario.tasks[task];
    let (budget, period) = spec
        .reservation
        .map_or((0, 0), |r| (r.budget.as_nanos(), r.period.as_nanos()));
    let mut executed: Vec<(u64, u64)> = runs
        .iter()
        .filter(|r| r.task == task)
        .map(|r| (r.start, r.end))
        .collect();
    executed.sort_unstable();
    let mut cores: Vec<u16> = runs
        .iter()
        .filter(|r| r.task == task)
        .map(|r| r.core)
        .collect();
    cores.sort_unstable();
    cores.dedup();
    let jobs = effective_jobs(o, task);
    let windows = replenishments(&jobs, &executed, budget, period, horizon)
        .into_iter()
        .map(|start| executed_in(&executed, start, start.saturating_add(period)))
        .collect();
    MemberRun {
        name: spec.name.clone(),
        budget,
        period,
        windows,
        cores,
    }
}

/// `task`'s jobs as the reservation sees them, (release, completion) in ns: a job planned
/// while its predecessor is unfinished is released when that completes (it was due), and
/// jobs behind one that never completes are never released.
fn effective_jobs(o: &Outcome, task: usize) -> Vec<(u64, Option<u64>)> {
    let mut records: Vec<_> = o
        .jobs
        .iter()
        .flatten()
        .filter(|j| j.task.index() == task)
        .collect();
    records.sort_by_key(|j| j.job);
    let mut jobs: Vec<(u64, Option<u64>)> = Vec::with_capacity(records.len());
    for record in records {
        let planned = record.release.as_nanos();
        let release = match jobs.last() {
            None => planned,
            Some(&(_, Some(done))) => planned.max(done),
            Some(&(_, None)) => break,
        };
        jobs.push((release, record.completion.map(Instant::as_nanos)));
    }
    jobs
}

/// The replenishment times section III's sporadic rule gives a reservation `(budget,
/// period)` whose jobs are `jobs` and whose execution is `executed` (sorted, disjoint): the
/// budget is set at a release to an inactive reservation, no sooner than `period` after the
/// last replenishment; a still active reservation whose budget runs out is replenished then
/// or `period` after the last replenishment, whichever is later; a completion discards the
/// rest. Successive times are at least `period` apart, so the rule guarantees at most
/// `budget` of execution in `[t, t + period)` from each (a sliding window could see up to
/// twice that, across two replenishments): that is the window the checks count in.
fn replenishments(
    jobs: &[(u64, Option<u64>)],
    executed: &[(u64, u64)],
    budget: u64,
    period: u64,
    horizon: u64,
) -> Vec<u64> {
    let mut times = Vec::new();
    let mut last: Option<u64> = None;
    for &(release, completion) in jobs {
        let done = completion.unwrap_or(u64::MAX);
        let mut at = last.map_or(release, |l| release.max(l.saturating_add(period)));
        while at < done && at < horizon {
            times.push(at);
            last = Some(at);
            match exhausted_at(executed, at, budget) {
                // Out of budget with the job still pending.
                Some(out) if out < done => at = out.max(at.saturating_add(period)),
                _ => break,
            }
        }
    }
    times
}

/// When the execution from `from` on reaches `budget`, if it does.
fn exhausted_at(executed: &[(u64, u64)], from: u64, budget: u64) -> Option<u64> {
    let mut used = 0;
    for &(start, end) in executed {
        let start = start.max(from);
        if end <= start {
            continue;
        }
        if used + (end - start) >= budget {
            return Some(start + (budget - used));
        }
        used += end - start;
    }
    None
}

/// Execution within `[from, to)`.
fn executed_in(executed: &[(u64, u64)], from: u64, to: u64) -> u64 {
    executed
        .iter()
        .map(|&(start, end)| end.min(to).saturating_sub(start.max(from)))
        .sum()
}

/// The most member stretches on the cluster's cores at one instant.
fn most_at_once(runs: &[Stretch], members: &[usize], cores: &[u16]) -> usize {
    // Ends before starts at one instant: abutting stretches do not overlap.
    let mut edges: Vec<(u64, bool)> = runs
        .iter()
        .filter(|r| members.contains(&r.task) && cores.contains(&r.core))
        .flat_map(|r| [(r.start, true), (r.end, false)])
        .collect();
    edges.sort_unstable();
    let (mut now, mut most) = (0usize, 0usize);
    for (_, starts) in edges {
        if starts {
            now += 1;
            most = most.max(now);
        } else {
            now -= 1;
        }
    }
    most
}

/// True when two of `task`'s stretches (on any cores) overlap in time.
fn runs_on_two_cores(runs: &[Stretch], task: usize) -> bool {
    let mut own: Vec<(u64, u64)> = runs
        .iter()
        .filter(|r| r.task == task)
        .map(|r| (r.start, r.end))
        .collect();
    own.sort_unstable();
    own.windows(2).any(|pair| pair[1].0 < pair[0].1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::failing_claims;
    use bulwark_spec::Reservation;

    fn file() -> Scenario {
        built_in_scenario("global-reservations").expect("valid")
    }

    #[test]
    fn every_check_holds() {
        let report = run().expect("runs");
        crate::test_support::assert_every_check_passes(&report.checks);
        assert_eq!(report.figures.len(), 1);
    }

    /// The checks can fail: a rogue whose reservation is the whole period (budget = period)
    /// is no longer contained; GFB no longer admits the set (U = 21/10 > 2) and the rogue,
    /// running as an EDF task of utilisation 1, leaves the victims (11/10) less than a core.
    #[test]
    fn an_unlimited_rogue_breaks_the_victims() {
        let mut scenario = file();
        let rogue = scenario
            .tasks
            .iter_mut()
            .find(|t| t.name == ROGUE)
            .expect("rogue");
        rogue.reservation = Some(Reservation::new(
            Duration::from_millis(10),
            Duration::from_millis(10),
        ));
        let report = run_on(&scenario).expect("runs");
        let failing = failing_claims(&report.checks);
        for claim in [
            CLAIM_VICTIMS,
            CLAIM_ROGUE,
            CLAIM_ANALYSIS,
            CLAIM_COMPLETIONS,
        ] {
            assert!(failing.iter().any(|c| c == claim), "{claim}: {failing:?}");
        }
        // Its budget is still never exceeded: the rule holds, the reservation is too big.
        assert!(!failing.iter().any(|c| c == CLAIM_BUDGETS), "{failing:?}");
    }

    /// The budget check can fail: 3 ms executed on a 2 ms budget in one replenishment window
    /// is seen, and the next replenishment comes only `p` after the first.
    #[test]
    fn an_overrun_is_seen_in_its_replenishment_window() {
        let ms = |n: u64| n * MS;
        let executed = [(ms(0), ms(3)), (ms(10), ms(12))];
        let jobs = [(ms(0), None)];
        let times = replenishments(&jobs, &executed, ms(2), ms(10), ms(20));
        assert_eq!(times, [ms(0), ms(10)]);
        assert_eq!(executed_in(&executed, ms(0), ms(10)), ms(3));
    }

    /// Section III by hand: a job completing with budget left discards it, and the next
    /// release, 4 ms after the last replenishment, waits for it plus p.
    #[test]
    fn a_release_soon_after_a_replenishment_waits_a_period() {
        let ms = |n: u64| n * MS;
        let executed = [(ms(0), ms(1)), (ms(10), ms(12)), (ms(20), ms(21))];
        // Released at 0 (done at 1), at 4 (runs 10-12, 20-21: exhausted at 12, with 1 ms left).
        let jobs = [(ms(0), Some(ms(1))), (ms(4), Some(ms(21)))];
        let times = replenishments(&jobs, &executed, ms(2), ms(10), ms(50));
        assert_eq!(times, [ms(0), ms(10), ms(20)]);
    }

    /// The capacity check can fail: three members at once on two cores, and one task on two
    /// cores at once, are seen.
    #[test]
    fn too_many_at_once_and_a_doubled_task_are_seen() {
        let stretch = |core, task, start, end| Stretch {
            core,
            task,
            start,
            end,
        };
        let runs = [
            stretch(1, 1, 0, 10),
            stretch(2, 2, 5, 10),
            stretch(1, 3, 10, 20),
            stretch(2, 1, 8, 12),
        ];
        assert_eq!(most_at_once(&runs, &[1, 2, 3], &[1, 2]), 3);
        assert!(runs_on_two_cores(&runs, 1));
        assert!(!runs_on_two_cores(&runs, 3));
        // Abutting stretches do not overlap.
        assert_eq!(most_at_once(&runs[..3], &[1, 2, 3], &[1, 2]), 2);
    }
}
