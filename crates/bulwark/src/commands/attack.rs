//! `bulwark attack`: run one of the SPR paper's attacks (A1, A2, A3) and print its results
//! beside the paper's, with the experiment's checks deciding the exit status.

use crate::output::{out, outln};
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration as WallTime;

use bulwark_core::Duration;
use bulwark_host::HostConfig;
use bulwark_lab::experiments::{
    a1_thundering_herd as a1, a2_timer_interference as a2, a3_preemption_storm as a3, host_a1,
    host_a2, host_a3, LabError,
};
use bulwark_lab::report::{verdict, Check, ExperimentReport};
use bulwark_spec::PolicyKind;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{Attack, AttackArgs};
use crate::table;

/// What one attack produced, ready to show.
struct Results {
    /// The text table, with a heading line.
    text: String,
    /// The points or rows as JSON.
    json: String,
    /// The experiment's checks on these results.
    checks: Vec<Check>,
    /// The plot, for attacks that have one.
    svg: Option<String>,
}

pub fn run(args: &AttackArgs) -> Result<ExitCode, String> {
    if args.host {
        return run_host(args);
    }
    if args.attack == Attack::A3 {
        if args.svg.is_some() {
            return Err(
                "a3 has no plot to write: its result is a table (the paper's Table III); \
                        drop --svg, or run `bulwark reproduce a3-preemption-storm` for the full \
                        report"
                    .into(),
            );
        }
        if args.attackers.is_some() {
            eprintln!(
                "note: a3 has one attacker whose behaviour is the table's row; --attackers is \
                 ignored"
            );
        }
    }
    // The plot is written after the sweep: a path that cannot take it fails first.
    super::exports::check_writable(args.svg.as_deref())?;
    let attackers = args.attackers.as_ref().map(|given| {
        let mut counts = given.clone();
        counts.sort_unstable();
        counts.dedup();
        counts
    });
    let spinner = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})").map_err(|e| e.to_string())?,
    );
    spinner.enable_steady_tick(WallTime::from_millis(120));
    let results = match args.attack {
        Attack::A1 => {
            let counts = attackers.as_deref().unwrap_or(a1::DEFAULT_ATTACKERS);
            spinner.set_message(format!("a1: {} attacker counts x 2 policies", counts.len()));
            let points = a1::sweep(counts).map_err(|e| failed("a1", &e))?;
            a1_results(counts, &points)?
        }
        Attack::A2 => {
            let counts = attackers.as_deref().unwrap_or(a2::DEFAULT_ATTACKERS);
            spinner.set_message(format!(
                "a2: {} attacker counts x 2 policies x 2 queue sizes",
                counts.len()
            ));
            let points = a2::sweep(counts).map_err(|e| failed("a2", &e))?;
            a2_results(counts, &points)?
        }
        Attack::A3 => {
            spinner.set_message("a3: 3 workloads x 3 non-preemptive regions");
            let rows = a3::table().map_err(|e| failed("a3", &e))?;
            a3_results(&rows)?
        }
    };
    spinner.finish_and_clear();

    if let (Some(path), Some(svg)) = (&args.svg, &results.svg) {
        write(path, svg)?;
    }
    let passed = results.checks.iter().all(|c| c.pass);
    if args.json {
        outln!("{}", results.json);
        // Standard output stays JSON; failing checks go to standard error.
        for c in results.checks.iter().filter(|c| !c.pass) {
            eprintln!("{}", failure(c));
        }
    } else {
        out!("{}", results.text);
        outln!("\nchecks: {}", verdict(&results.checks));
        for c in results.checks.iter().filter(|c| !c.pass) {
            outln!("  {}", failure(c));
        }
    }
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `--host`: the attack's host experiment, run on this machine, its tables and checks shown.
fn run_host(args: &AttackArgs) -> Result<ExitCode, String> {
    let experiment = match args.attack {
        Attack::A1 => &host_a1::EXPERIMENT,
        Attack::A2 => &host_a2::EXPERIMENT,
        Attack::A3 => &host_a3::EXPERIMENT,
    };
    if args.attackers.is_some() && args.attack == Attack::A3 {
        return Err(
            "a3 has no attackers to count: its attacker is the table's row; drop \
                    --attackers"
                .into(),
        );
    }
    if args.attackers.is_some() {
        return Err(format!(
            "--host runs the host experiment with its own attacker counts ({}); drop \
             --attackers",
            match args.attack {
                Attack::A1 => join(&host_a1::ATTACKERS),
                _ => join(&host_a2::ATTACKERS),
            }
        ));
    }
    if args.svg.is_some() && args.attack != Attack::A1 {
        return Err(format!(
            "the host {} experiment draws no plot; drop --svg",
            if args.attack == Attack::A2 {
                "a2"
            } else {
                "a3"
            }
        ));
    }
    super::exports::check_writable(args.svg.as_deref())?;
    // Refused before any thread starts, saying what is missing and how to grant it.
    bulwark_host::check_privileges(&HostConfig::default()).map_err(|e| e.to_string())?;
    let spinner = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})").map_err(|e| e.to_string())?,
    );
    spinner.enable_steady_tick(WallTime::from_millis(120));
    spinner.set_message(format!("{}: on this machine's core 1", experiment.name));
    let report = (experiment.run)().map_err(|e| failed(experiment.name, &e))?;
    spinner.finish_and_clear();
    if let (Some(path), Some(figure)) = (&args.svg, report.figures.first()) {
        write(path, &figure.svg)?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        outln!("{json}");
        for c in report.checks.iter().filter(|c| !c.pass) {
            eprintln!("{}", failure(c));
        }
    } else {
        outln!("{}\n", report.title);
        for table in &report.tables {
            outln!("{}", table.caption);
            let header: Vec<&str> = table.header.iter().map(String::as_str).collect();
            out!("{}", table::render(&header, &table.rows));
            outln!("");
        }
        outln!("{}", report.summary);
        outln!("\nchecks: {}", verdict(&report.checks));
        for c in report.checks.iter().filter(|c| !c.pass) {
            outln!("  {}", failure(c));
        }
    }
    // A host experiment that ran always has checks; none would mean it was skipped.
    let passed = !report.checks.is_empty() && report.checks.iter().all(|c| c.pass);
    Ok(if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn join(counts: &[usize]) -> String {
    counts
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn failed(attack: &str, error: &LabError) -> String {
    format!("{attack}: {error}")
}

fn failure(check: &Check) -> String {
    format!(
        "FAILS: {} (expected {}, measured {})",
        check.claim, check.expected, check.measured
    )
}

fn write(path: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(path, contents).map_err(|e| format!("{}: {e}", path.display()))
}

/// The first figure of an experiment's report: its plot.
fn plot(report: ExperimentReport) -> Option<String> {
    report.figures.into_iter().next().map(|figure| figure.svg)
}

fn time(nanos: u64) -> String {
    Duration::from_nanos(nanos).to_string()
}

fn a1_results(counts: &[u32], points: &[a1::Point]) -> Result<Results, String> {
    let at = |policy: PolicyKind, n: u32| {
        points
            .iter()
            .find(|p| p.policy == policy.name() && p.attackers == n)
    };
    let rows: Vec<Vec<String>> = counts
        .iter()
        .map(|&n| {
            let mut row = vec![n.to_string()];
            for policy in a1::POLICIES {
                match at(policy, n) {
                    Some(p) => {
                        row.push(time(p.worst_latency_ns));
                        row.push(time(p.mean_latency_ns));
                    }
                    None => row.extend(["-".to_owned(), "-".to_owned()]),
                }
                row.push(a1::paper_value(policy, n).to_owned());
            }
            row
        })
        .collect();
    let text = format!(
        "A1 Thundering Herd: the victim's wake-up latency with N attackers, under the naive \
         deferrable server (DS) and SPR with the deferrable rule (SPR-DS), beside the paper's\n\n\
         {}\npaper: {}\n",
        table::render(
            &[
                "N",
                "DS worst",
                "DS mean",
                "paper DS",
                "SPR-DS worst",
                "SPR-DS mean",
                "paper SPR-DS",
            ],
            &rows
        ),
        a1::PAPER_NOTE
    );
    Ok(Results {
        text,
        json: serde_json::to_string_pretty(points).map_err(|e| e.to_string())?,
        checks: a1::checks(points),
        svg: plot(a1::report(points)),
    })
}

fn a2_results(counts: &[u32], points: &[a2::Point]) -> Result<Results, String> {
    let columns = [
        (PolicyKind::SporadicServer, 16),
        (PolicyKind::SporadicServer, 32),
        (PolicyKind::Spr, 16),
        (PolicyKind::Spr, 32),
    ];
    let rows: Vec<Vec<String>> = counts
        .iter()
        .map(|&n| {
            let mut row = vec![n.to_string()];
            for (policy, s) in columns {
                let point = points.iter().find(|p| {
                    p.policy == policy.name() && p.replenishments == s && p.attackers == n
                });
                row.push(point.map_or_else(|| "-".to_owned(), |p| time(p.interference_ns)));
                // The paper's value, once per policy, after its last S.
                if s == a2::QUEUE_SIZES[a2::QUEUE_SIZES.len() - 1] {
                    row.push(a2::paper_value(policy, n).to_owned());
                }
            }
            row
        })
        .collect();
    let text = format!(
        "A2 coordinated timer interference: the victim's interference with N attackers, under \
         the naive sporadic server (SS) and SPR, with replenishment queues of S entries, beside \
         the paper's\n\n{}\npaper: {}\n",
        table::render(
            &[
                "N",
                "SS S=16",
                "SS S=32",
                "paper SS",
                "SPR S=16",
                "SPR S=32",
                "paper SPR"
            ],
            &rows
        ),
        a2::PAPER_NOTE
    );
    Ok(Results {
        text,
        json: serde_json::to_string_pretty(points).map_err(|e| e.to_string())?,
        checks: a2::checks(points),
        svg: plot(a2::report(points)),
    })
}

fn a3_results(rows: &[a3::Row]) -> Result<Results, String> {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.workload.label().to_owned(),
                a3::show_eta(Duration::from_nanos(r.eta_ns)),
                r.units.to_string(),
                format!("{:.1}%", r.percent_of_baseline),
                r.preemptions_per_period
                    .iter()
                    .max()
                    .copied()
                    .unwrap_or(0)
                    .to_string(),
                r.preemption_bound
                    .map_or_else(|| "unbounded".to_owned(), |b| b.to_string()),
                r.paper_units.to_string(),
                format!("{:.1}%", r.paper_percent_of_baseline),
            ]
        })
        .collect();
    let periods = rows.first().map_or(0, |r| r.units_per_period.len());
    let text = format!(
        "A3 preemption storm under SPR: tau_l's useful units of {} per period (median of {periods} \
         periods), b = {}, p = {} (the paper's 1 s / 5 s scaled by 1/10), against tau_h's \
         {} timer flood, with non-preemptive regions eta_l; beside the paper's Table III\n\n{}",
        a3::UNIT,
        a3::BUDGET,
        a3::PERIOD,
        a3::FLOOD_SLEEP,
        table::render(
            &[
                "workload",
                "eta_l",
                "units/period",
                "% of baseline",
                "preemptions/period",
                "bound",
                "paper",
                "paper %",
            ],
            &cells
        )
    );
    Ok(Results {
        text,
        json: serde_json::to_string_pretty(rows).map_err(|e| e.to_string())?,
        checks: a3::report(rows).checks,
        svg: None,
    })
}
