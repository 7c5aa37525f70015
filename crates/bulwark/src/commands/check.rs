//! `bulwark check`: validate scenario files, component systems and MC-IPC systems.

use crate::output::outln;
use std::process::ExitCode;

use crate::cli::CheckArgs;
use crate::diagnostics;

pub fn run(args: &CheckArgs) -> Result<ExitCode, String> {
    let mut failed = false;
    for path in &args.files {
        if let Some(system) = super::mcipc_analyze::load(path) {
            match system {
                Ok(s) => outln!(
                    "{}: ok (MC-IPC system: {} clusters, {} servers, {} reservations)",
                    path.display(),
                    s.clusters.len(),
                    s.servers.len(),
                    s.reservations.len()
                ),
                Err(d) => {
                    failed = true;
                    eprint!("{}", diagnostics::render(&d));
                }
            }
            continue;
        }
        if let Some(system) = super::components::load_located(path) {
            match system {
                Ok(located) => {
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
                Err(d) => {
                    failed = true;
                    eprint!("{}", diagnostics::render(&d));
                }
            }
            continue;
        }
        match bulwark_spec::load_checked(path) {
            // The guard prints the warnings; it holds only when --deny-warnings denies them.
            Ok((_, warnings)) if diagnostics::report_warnings(&warnings, args.deny_warnings) => {
                failed = true;
            }
            Ok((s, _)) => outln!(
                "{}: ok ({} tasks on {} core{}, {}, {})",
                path.display(),
                s.tasks.len(),
                s.cores,
                if s.cores == 1 { "" } else { "s" },
                s.policy_label(),
                s.duration
            ),
            Err(d) => {
                failed = true;
                eprint!("{}", diagnostics::render(&d));
            }
        }
    }
    // An invalid file is bad input, whatever else was valid.
    Ok(if failed {
        crate::exit::bad_input()
    } else {
        ExitCode::SUCCESS
    })
}
