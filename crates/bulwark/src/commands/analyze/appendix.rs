//! A section `analyze` adds after a scenario's analysis (the gate bounds, the terminations'
//! masks): text after its text, a key in its `--json` document. Sections inform; the
//! analysis's exit code stands.

use std::process::ExitCode;

use serde_json::Value;

use crate::output::{capture, out, outln};

/// Runs `analysis` (which prints the analysis), then adds `text` after its text, or `key:
/// value` to its JSON document.
pub(super) fn with_section(
    json: bool,
    analysis: impl FnOnce() -> Result<ExitCode, String>,
    text: &str,
    key: &str,
    value: Value,
) -> Result<ExitCode, String> {
    if !json {
        let code = analysis()?;
        out!("{text}");
        return Ok(code);
    }
    let (printed, code) = capture(analysis);
    let code = code?;
    match serde_json::from_str::<Value>(&printed) {
        Ok(mut document) if document.is_object() => {
            document[key] = value;
            outln!("{document:#}");
        }
        // Not one document (it should be): printed as it came, without the section.
        _ => out!("{printed}"),
    }
    Ok(code)
}
