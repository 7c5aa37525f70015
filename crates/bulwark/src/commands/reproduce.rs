//! `bulwark reproduce`: run the built-in experiments and write the report.

use crate::output::outln;
use std::process::ExitCode;

use bulwark_lab::experiments::{self, Experiment};
use bulwark_lab::report::{prepare_report_dir, report_verdict, write_report};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::ReproduceArgs;

pub fn run(args: &ReproduceArgs) -> Result<ExitCode, String> {
    if args.list {
        for e in experiments::ALL {
            outln!("{:<24} {}", e.name, e.title);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let chosen: Vec<&Experiment> = match &args.name {
        None => experiments::ALL.iter().collect(),
        Some(name) => vec![experiments::find(name).ok_or_else(|| {
            let known: Vec<&str> = experiments::ALL.iter().map(|e| e.name).collect();
            format!("no experiment `{name}`; known: {}", known.join(", "))
        })?],
    };
    // A folder that cannot take the report fails now, not after the experiments' minutes.
    prepare_report_dir(&args.out).map_err(|e| {
        format!(
            "{}: cannot write the report here: {e} (allowed: a folder this user can create \
             and write, set with --out)",
            args.out.display()
        )
    })?;
    let bar = ProgressBar::new(chosen.len() as u64).with_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").map_err(|e| e.to_string())?,
    );
    let mut reports = Vec::new();
    for e in &chosen {
        bar.set_message(e.name);
        reports.push((e.run)().map_err(|err| format!("{}: {err}", e.name))?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    // The index lists every experiment in the folder, earlier runs' too, in `ALL`'s order.
    let order: Vec<&str> = experiments::ALL.iter().map(|e| e.name).collect();
    write_report(&args.out, &reports, &order)
        .map_err(|e| format!("{}: {e}", args.out.display()))?;
    let mut all_pass = true;
    for r in &reports {
        outln!("{:<24} {}", r.name, report_verdict(r));
        for c in r.checks.iter().filter(|c| !c.pass) {
            all_pass = false;
            outln!(
                "  FAILS: {} (expected {}, measured {})",
                c.claim,
                c.expected,
                c.measured
            );
        }
        // Neither passed nor failed: the platform disturbed every attempt (see its page).
        for c in &r.not_judged {
            outln!(
                "  NOT JUDGED (the platform disturbed every attempt): {} (expected {}, \
                 measured {})",
                c.claim,
                c.expected,
                c.measured
            );
        }
    }
    outln!("report: {}", args.out.join("index.html").display());
    Ok(if all_pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
