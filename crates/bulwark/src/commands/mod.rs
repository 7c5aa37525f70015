//! One module per subcommand. Each returns the exit code, or an error message for failures
//! outside the scenario (files that cannot be written).

pub mod analyze;
pub mod analyze_classic;
pub mod attack;
pub mod check;
pub mod component_measures;
pub mod components;
pub mod exports;
pub mod masks;
pub mod mcipc;
pub mod mcipc_analyze;
pub mod mcipc_phases;
pub mod mcipc_run;
pub mod mcipc_size;
pub mod mcipc_trace;
pub mod reproduce;
pub mod run;
pub mod server_calls;
pub mod simulate;
pub mod sweep;
pub mod uncounted;

use std::path::Path;
use std::process::ExitCode;

use bulwark_lab::component_system::ComposeError;
use bulwark_spec::{FileKind, SystemFile};

/// The file at `path`, read and validated as whatever kind of system it is (one loader for
/// every command); `None`, with its diagnostics printed, when it cannot be read or is invalid.
/// A scenario that declares a component system comes back with it lowered onto its core
/// ([`bulwark_lab::component_system::compose`]), so that every command sees the tasks and CPIs the
/// machine runs; a call loop in it is an error at the connection that closes the loop.
pub fn load_system(path: &Path) -> Option<SystemFile> {
    load_system_with_text(path).map(|(system, _)| system)
}

/// [`load_system`], and the text it read (empty for a `.camkes` file), for a command that
/// places more warnings in the file.
pub fn load_system_with_text(path: &Path) -> Option<(SystemFile, String)> {
    let (system, text) = bulwark_spec::system::load_with_text(path)
        .map_err(|d| eprint!("{}", crate::diagnostics::render(&d)))
        .ok()?;
    let text = text.unwrap_or_default();
    let system = match system {
        SystemFile::Scenario(scenario, mut warnings) if !scenario.components.is_empty() => {
            let scenario = composed(path, &text, scenario, &mut warnings)?;
            SystemFile::Scenario(scenario, warnings)
        }
        other => other,
    };
    Some((system, text))
}

/// `scenario` (read from `text`) with its component systems lowered, or `None` with the
/// reason printed. A loop that only procedures without bodies may close joins `warnings`.
fn composed(
    path: &Path,
    text: &str,
    scenario: bulwark_spec::Scenario,
    warnings: &mut Vec<bulwark_spec::SpecError>,
) -> Option<bulwark_spec::Scenario> {
    let mut looping = false;
    let mut located = Vec::with_capacity(scenario.components.len());
    for part in &scenario.components {
        let system = part.located(&path.display().to_string(), text);
        let (loops, possible) = components::call_loops(&system);
        if !loops.is_empty() {
            eprint!("{}", crate::diagnostics::render(&system.diagnostics(loops)));
            looping = true;
        }
        warnings.extend(possible);
        located.push(system);
    }
    if looping {
        return None;
    }
    match bulwark_lab::component_system::compose(scenario) {
        Ok(composed) => Some(composed),
        Err(ComposeError::Lowering { part, error }) => {
            components::report_lowering(path, &located[part], &error);
            None
        }
        Err(error) => {
            eprintln!(
                "error: {}: the component system cannot run: {error}",
                path.display()
            );
            None
        }
    }
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
