//! `bulwark check`: validate files of every kind: scenarios, component systems, MC-IPC
//! systems and sweep experiments.

use crate::output::outln;
use std::process::ExitCode;

use bulwark_spec::{Scenario, SporadicOrder, SystemFile};

use crate::cli::CheckArgs;
use crate::diagnostics;

pub fn run(args: &CheckArgs) -> Result<ExitCode, String> {
    let mut failed = false;
    for path in &args.files {
        let Some(system) = super::load_system(path) else {
            failed = true;
            continue;
        };
        match system {
            SystemFile::McIpc(s) => outln!(
                "{}: ok (MC-IPC system: {} clusters, {} servers, {} reservations)",
                path.display(),
                s.clusters.len(),
                s.servers.len(),
                s.reservations.len()
            ),
            SystemFile::Components(located) => {
                // The configuration analyzer's call loops are visible without running.
                let (errors, warnings) = super::components::call_loops(&located);
                let denied = diagnostics::report_warnings(&warnings, args.deny_warnings);
                failed |= denied;
                if errors.is_empty() && !denied {
                    let s = &located.system;
                    outln!(
                        "{}: ok (component system: {} components, {} connections)",
                        path.display(),
                        s.components.len(),
                        s.connections.len()
                    );
                } else if !errors.is_empty() {
                    failed = true;
                    eprint!("{}", diagnostics::render(&located.diagnostics(errors)));
                }
            }
            SystemFile::Sweep(e) => outln!(
                "{}: ok (sweep experiment: {} task count{}, {} set{} per point, {} test{})",
                path.display(),
                e.task_counts.len(),
                if e.task_counts.len() == 1 { "" } else { "s" },
                e.sets_per_point,
                if e.sets_per_point == 1 { "" } else { "s" },
                e.tests.len(),
                if e.tests.len() == 1 { "" } else { "s" }
            ),
            // The guard prints the warnings; it holds only when --deny-warnings denies them.
            SystemFile::Scenario(_, warnings)
                if diagnostics::report_warnings(&warnings, args.deny_warnings) =>
            {
                failed = true;
            }
            SystemFile::Scenario(s, _) => outln!(
                "{}: ok ({} tasks on {} core{}, {}, {}{}{})",
                path.display(),
                s.file_tasks(),
                s.cores,
                if s.cores == 1 { "" } else { "s" },
                s.policy_label(),
                s.duration,
                clusters(&s),
                components(&s)
            ),
        }
    }
    // An invalid file is bad input, whatever else was valid.
    Ok(if failed {
        crate::exit::bad_input()
    } else {
        ExitCode::SUCCESS
    })
}

/// The scenario's clusters for its summary line, `; clusters: g (cores 1, 2, edf, 2 tasks)`;
/// empty without any. Their cores run none of the policies the line names.
fn clusters(scenario: &Scenario) -> String {
    if scenario.clusters.is_empty() {
        return String::new();
    }
    let each: Vec<String> = scenario
        .clusters
        .iter()
        .map(|c| {
            let cores: Vec<String> = c.cores.iter().map(u16::to_string).collect();
            let order = match c.order {
                SporadicOrder::EarliestDeadlineFirst => "edf",
                SporadicOrder::FixedPriority => "fixed-priority",
            };
            format!(
                "{} (core{} {}, {order}, {} task{})",
                c.name,
                if c.cores.len() == 1 { "" } else { "s" },
                cores.join(", "),
                c.members.len(),
                if c.members.len() == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "; cluster{}: {}",
        if each.len() == 1 { "" } else { "s" },
        each.join(", ")
    )
}

/// `; component system on core N: ...` for each of a scenario's component systems.
fn components(s: &Scenario) -> String {
    s.components
        .iter()
        .map(|part| {
            let system = &part.system;
            format!(
                "; component system on core {}: {} components, {} tasks, {} CPIs, {} \
                 connections",
                part.core,
                system.components.len(),
                system.tasks().len(),
                system.cpis().len(),
                system.connections.len()
            )
        })
        .collect()
}
