//! One module per subcommand. Each returns the exit code, or an error message for failures
//! outside the scenario (files that cannot be written).

pub mod analyze;
pub mod analyze_classic;
pub mod attack;
pub mod check;
pub mod components;
pub mod exports;
pub mod mcipc;
pub mod mcipc_analyze;
pub mod mcipc_run;
pub mod mcipc_trace;
pub mod reproduce;
pub mod run;
pub mod simulate;
pub mod sweep;
pub mod uncounted;

use std::path::Path;
use std::process::ExitCode;

use bulwark_spec::{FileKind, SystemFile};

/// The file at `path`, read and validated as whatever kind of system it is (one loader for
/// every command); `None`, with its diagnostics printed, when it cannot be read or is invalid.
pub fn load_system(path: &Path) -> Option<SystemFile> {
    bulwark_spec::system::load(path)
        .map_err(|d| eprint!("{}", crate::diagnostics::render(&d)))
        .ok()
}

/// Exit 2 for a valid file of a kind `command` does not take, naming the command that does.
pub fn wrong_kind(path: &Path, kind: FileKind, command: &str, takes: &str) -> ExitCode {
    let hint = match kind {
        FileKind::Sweep => "bulwark sweep",
        FileKind::Scenario => "bulwark simulate, analyze or run",
        FileKind::Components => "bulwark simulate or analyze",
        FileKind::McIpc => "bulwark simulate, analyze or mcipc-case-study",
    };
    eprintln!(
        "error: {}: this file is {}, and `bulwark {command}` takes {takes}; allowed for this \
         file: {hint}",
        path.display(),
        kind.describe()
    );
    crate::exit::bad_input()
}
