//! Bulwark scenario files: TOML read into raw serde types, validated into typed values with
//! located diagnostics.
//!
//! [`parse`] (or [`load`] for a path) is the whole interface: it returns a [`Scenario`] that is
//! valid by construction, or [`Diagnostics`] listing every error in the file, in file order,
//! each with its line, column, what is wrong and what is allowed.
//!
//! ```
//! let source = r#"
//! name = "rm-vs-edf"
//! policy = "edf"
//! duration = "35ms"
//!
//! [[task]]
//! name = "tau1"
//! period = "5ms"
//! execution = { uniform = ["1ms", "2ms"] }
//!
//! [[task]]
//! name = "tau2"
//! deadline = "10ms"
//! script = [{ loop = "forever", body = [{ run = "1ms" }, { sleep-for = "9ms" }] }]
//! "#;
//! let scenario = bulwark_spec::parse(source, "rm-vs-edf.toml").unwrap();
//! assert_eq!(scenario.tasks.len(), 2);
//!
//! let wrong = source.replace("\"edf\"", "\"rm\"");
//! let errors = bulwark_spec::parse(&wrong, "rm.toml").unwrap_err();
//! assert_eq!(errors.errors()[0].to_string(), "rm.toml:3:10: unknown policy `rm`");
//! assert_eq!(
//!     errors.errors()[0].help(),
//!     "allowed: fixed-priority, edf, deferrable-server, sporadic-server, spr, spr-deferrable, cbs, hard-cbs, vbs"
//! );
//! ```

pub mod camkes;
pub mod component;
pub mod component_toml;
pub mod lowered;
pub mod mc_ipc_scenario;
pub mod mc_ipc_toml;
pub mod model;
pub mod script_reading;
pub mod sweep_toml;
pub mod system;

mod diagnostic;
mod raw;
mod toml_error;
mod units;
mod validate;

use std::path::Path;

pub use camkes::parse_camkes;
pub use component_toml::parse_components;
pub use diagnostic::{Diagnostics, SpecError};
pub use mc_ipc_toml::parse_mc_ipc;
pub use model::*;
pub use script_reading::*;
pub use sweep_toml::{parse_sweep, Experiment};
pub use system::{FileKind, SystemFile};
pub use units::parse_duration;

use diagnostic::Source;

/// Reads a scenario from `source`, naming it `file_name` in diagnostics.
pub fn parse(source: &str, file_name: &str) -> Result<Scenario, Diagnostics> {
    parse_checked(source, file_name).map(|(scenario, _)| scenario)
}

/// [`parse`], with the warnings about the valid scenario, in file order: located like
/// errors, for things almost surely not meant (a core's utilisation above 1, execution
/// longer than the period, jitter above the minimum inter-arrival time, an offset after the
/// run, a non-preemptive region longer than the budget).
pub fn parse_checked(
    source: &str,
    file_name: &str,
) -> Result<(Scenario, Vec<SpecError>), Diagnostics> {
    let located = Source::new(file_name, source);
    let raw: raw::RawScenario = toml::from_str(source)
        .map_err(|e| Diagnostics::new(file_name, vec![toml_error::located(&located, &e)]))?;
    validate::validate(&raw, &located).map_err(|errors| Diagnostics::new(file_name, errors))
}

/// Reads the scenario file at `path`; a file that cannot be read is one diagnostic naming it.
pub fn load(path: &Path) -> Result<Scenario, Diagnostics> {
    load_checked(path).map(|(scenario, _)| scenario)
}

/// [`load`], with the warnings of [`parse_checked`].
pub fn load_checked(path: &Path) -> Result<(Scenario, Vec<SpecError>), Diagnostics> {
    let file_name = path.display().to_string();
    let text = read_text(path, "a readable UTF-8 TOML scenario file")?;
    parse_checked(&text, &file_name)
}

/// The text of the file at `path`, for any of Bulwark's file kinds: one unlocated
/// diagnostic when it cannot be read (`allowed` says what file was expected), one located at
/// the first offending byte when it is not UTF-8.
pub fn read_text(path: &Path, allowed: &str) -> Result<String, Diagnostics> {
    let file_name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        let error = Source::new(&file_name, "").unlocated(
            format!("cannot read this file: {e}"),
            format!("allowed: {allowed}"),
        );
        Diagnostics::new(&file_name, vec![error])
    })?;
    text_of(bytes, &file_name)
}

/// `bytes` as text, or a diagnostic at the first byte that is not UTF-8 (its line and
/// column are those of the text before it, which is valid).
pub fn text_of(bytes: Vec<u8>, file_name: &str) -> Result<String, Diagnostics> {
    String::from_utf8(bytes).map_err(|e| {
        let utf8 = e.utf8_error();
        let at = utf8.valid_up_to();
        let bytes = e.as_bytes();
        let message = match utf8.error_len() {
            Some(len) => {
                let shown: Vec<String> = bytes[at..at + len]
                    .iter()
                    .map(|b| format!("0x{b:02X}"))
                    .collect();
                format!(
                    "the file is not UTF-8: byte {} is not valid UTF-8 here",
                    shown.join(" ")
                )
            }
            None => "the file is not UTF-8: it ends inside a multi-byte character".to_owned(),
        };
        // The lossy text keeps every byte before `at` where it was, so the span points at
        // the replacement character standing for the bad byte.
        let lossy = String::from_utf8_lossy(bytes);
        let error = Source::new(file_name, &lossy).error(
            at..at + char::REPLACEMENT_CHARACTER.len_utf8(),
            message,
            "allowed: UTF-8 text only; re-save the file as UTF-8, re-encoding any Latin-1 or \
             Windows-1252 letter such as \u{e9}",
        );
        Diagnostics::new(file_name, vec![error])
    })
}
