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
                    if !warnings.is_empty() {
                        eprint!(
                            "{}",
                            diagnostics::render_warnings(&located.diagnostics(warnings))
                        );
                    }
                    if errors.is_empty() {
                        let s = &located.system;
                        outln!(
                            "{}: ok (component system: {} components, {} connections)",
                            path.display(),
                            s.components.len(),
                            s.connections.len()
                        );
                    } else {
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
        match bulwark_spec::load(path) {
            Ok(s) => outln!(
                "{}: ok ({} tasks on {} core{}, {}, {})",
                path.display(),
                s.tasks.len(),
                s.cores,
                if s.cores == 1 { "" } else { "s" },
                s.policy.name(),
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
