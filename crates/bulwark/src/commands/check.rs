//! `bulwark check`: validate scenario files.

use crate::output::outln;
use std::process::ExitCode;

use crate::cli::CheckArgs;
use crate::diagnostics;

pub fn run(args: &CheckArgs) -> Result<ExitCode, String> {
    let mut failed = false;
    for path in &args.files {
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
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
