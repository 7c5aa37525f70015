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
pub mod mc_ipc_toml;
pub mod model;

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
pub use units::parse_duration;

use diagnostic::Source;

/// Reads a scenario from `source`, naming it `file_name` in diagnostics.
pub fn parse(source: &str, file_name: &str) -> Result<Scenario, Diagnostics> {
    let located = Source::new(file_name, source);
    let raw: raw::RawScenario = toml::from_str(source)
        .map_err(|e| Diagnostics::new(file_name, vec![toml_error::located(&located, &e)]))?;
    validate::validate(&raw, &located).map_err(|errors| Diagnostics::new(file_name, errors))
}

/// Reads the scenario file at `path`; a file that cannot be read is one diagnostic naming it.
pub fn load(path: &Path) -> Result<Scenario, Diagnostics> {
    let file_name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &file_name),
        Err(e) => {
            let error = Source::new(&file_name, "").unlocated(
                format!("cannot read this file: {e}"),
                "allowed: a readable UTF-8 TOML scenario file",
            );
            Err(Diagnostics::new(&file_name, vec![error]))
        }
    }
}
