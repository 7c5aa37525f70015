//! The textbook schedule that separates fixed priority from EDF: (C, T) = (2, 5), (4, 7) ms.
//!
//! Theory: U = 2/5 + 4/7 = 0.971 exceeds Liu and Layland's rate-monotonic bound for two tasks
//! (0.828), and rate monotonic indeed fails: t2's first job is preempted at 5 and completes at
//! 8, after its deadline at 7. EDF schedules any implicit-deadline set with U <= 1: over the
//! hyperperiod of 35 ms no deadline is missed and the processor idles only 1 ms. The job-level
//! EDF timeline below was worked out by hand (ties go to the earlier activation):
//! t1 completes at 2, 8, 14, 17, 22, 28, 34 and t2 at 6, 12, 20, 26, 32.

use bulwark_analysis::utilisation::{liu_layland_bound, utilisation};
use bulwark_core::{Duration, Instant, TaskId};
use bulwark_sim::Outcome;
use bulwark_spec::{Behaviour, Execution, Scenario};

use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::gantt::gantt_svg;
use crate::report::{headings, Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "textbook-fp-edf",
    title: "Rate monotonic misses where EDF does not: (2,5), (4,7)",
    run,
};

const EDF_COMPLETIONS_MS: [&[u64]; 2] = [&[2, 8, 14, 17, 22, 28, 34], &[6, 12, 20, 26, 32]];

fn run() -> Result<ExperimentReport, LabError> {
    let rm = built_in_scenario("textbook-rm")?;
    let edf = built_in_scenario("textbook-edf")?;
    let options = super::recording();
    let rm_run = bulwark_sim::run(&rm, &options)?;
    let edf_run = bulwark_sim::run(&edf, &options)?;

    let u = utilisation(&pairs(&rm));
    let bound = liu_layland_bound(rm.tasks.len());
    let ms = |t: Option<Instant>| {
        t.map_or("none".to_owned(), |t| {
            format!("{}ms", t.as_nanos() as f64 / 1e6)
        })
    };
    let misses = |o: &Outcome| o.tasks.iter().map(|t| t.misses).sum::<u64>();
    let checks = vec![
        Check {
            claim: "U = 2/5 + 4/7 exceeds the rate-monotonic bound 2(2^(1/2) - 1)".into(),
            expected: format!("U = 0.971 > {bound:.3}"),
            measured: format!("U = {u:.3}"),
            pass: (u - (0.4 + 4.0 / 7.0)).abs() < 1e-9 && u > bound,
        },
        Check {
            claim: "Rate monotonic: t2's first job misses its deadline at 7 ms".into(),
            expected: "first miss at 7ms".into(),
            measured: format!("first miss at {}", ms(rm_run.tasks[1].first_miss)),
            pass: rm_run.tasks[1].first_miss == Some(Instant::from_nanos(7_000_000))
                && rm_run.tasks[0].misses == 0,
        },
        Check {
            claim: "EDF meets every deadline when U <= 1".into(),
            expected: "0 misses over 35 ms".into(),
            measured: format!("{} misses", misses(&edf_run)),
            pass: misses(&edf_run) == 0,
        },
        Check {
            claim: "EDF timeline, by hand: completions of t1 and t2".into(),
            expected: format!("{:?} / {:?}", EDF_COMPLETIONS_MS[0], EDF_COMPLETIONS_MS[1]),
            measured: format!(
                "{:?} / {:?}",
                completions_ms(&edf_run, 0),
                completions_ms(&edf_run, 1)
            ),
            pass: (0..2).all(|t| completions_ms(&edf_run, t) == EDF_COMPLETIONS_MS[t as usize]),
        },
        Check {
            claim: "EDF keeps the processor busy 34 of 35 ms (U = 34/35)".into(),
            expected: "34ms busy".into(),
            measured: format!("{}ms busy", edf_run.cores[0].busy_ns as f64 / 1e6),
            pass: edf_run.cores[0].busy_ns == 34_000_000,
        },
    ];
    let span = Instant::ZERO.saturating_add(Duration::from_millis(35));
    let mut figures = Vec::new();
    for (file, caption, o) in [
        (
            "rm-gantt.svg",
            "Rate monotonic: t2 misses at 7 ms (red cross)",
            &rm_run,
        ),
        (
            "edf-gantt.svg",
            "EDF: every deadline met over the hyperperiod",
            &edf_run,
        ),
    ] {
        if let Some(svg) = gantt_svg(o, Instant::ZERO, span) {
            figures.push(Figure {
                file: file.into(),
                caption: caption.into(),
                svg,
            });
        }
    }
    Ok(ExperimentReport {
        source: "Liu and Layland (1973); Buttazzo, Hard Real-Time Computing Systems, ch. 4".into(),
        summary: "Two implicit-deadline periodic tasks with U = 0.971 on one core. Rate \
                  monotonic misses t2's first deadline at 7 ms; EDF meets every deadline. \
                  Both schedules come from `scenarios/textbook-rm.toml` and \
                  `scenarios/textbook-edf.toml` run on a zero-cost machine."
            .into(),
        checks,
        tables: vec![summary_table(&rm_run), summary_table(&edf_run)],
        figures,
        ..EXPERIMENT.blank_report()
    })
}

fn pairs(s: &Scenario) -> Vec<(Duration, Duration)> {
    s.tasks
        .iter()
        .filter_map(|t| match &t.behaviour {
            Behaviour::Periodic {
                period,
                execution: Execution::Fixed(c),
                ..
            } => Some((*c, *period)),
            _ => None,
        })
        .collect()
}

fn completions_ms(o: &Outcome, task: u32) -> Vec<u64> {
    let jobs = o.jobs.as_deref().unwrap_or_default();
    jobs.iter()
        .filter(|j| j.task == TaskId(task))
        .filter_map(|j| j.completion)
        .map(|c| c.as_nanos() / 1_000_000)
        .collect()
}

/// Per task: jobs, misses, the first miss and the longest response.
pub(super) fn summary_table(o: &Outcome) -> Table {
    Table {
        caption: format!("{} ({})", o.scenario, o.policy),
        header: headings(["task", "jobs", "misses", "first miss", "max response"]),
        rows: o
            .tasks
            .iter()
            .map(|t| {
                vec![
                    t.name.clone(),
                    t.jobs.to_string(),
                    t.misses.to_string(),
                    t.first_miss.map_or("-".into(), |m| m.to_string()),
                    Duration::from_nanos(t.response.max_ns).to_string(),
                ]
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_of_the_textbook_experiment_holds() {
        let report = run().expect("runs");
        crate::test_support::assert_every_check_passes(&report.checks);
        assert_eq!(report.figures.len(), 2);
    }
}
