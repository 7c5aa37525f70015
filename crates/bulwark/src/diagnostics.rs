//! Showing scenario errors: a rich rendering with the source on a terminal, and one plain
//! `file:line:column: message (help)` line per error otherwise, so scripts can read them.

use std::io::IsTerminal;

use bulwark_spec::Diagnostics;
use miette::{GraphicalReportHandler, GraphicalTheme};

/// Every warning in `warnings`, each line prefixed `warning: ` (plain) or rendered with a
/// warning severity (terminal).
pub fn render_warnings(warnings: &Diagnostics) -> String {
    warnings
        .errors()
        .iter()
        .map(|w| format!("warning: {}\n", w.plain()))
        .collect()
}

/// Every error in `diagnostics`, ready for standard error.
pub fn render(diagnostics: &Diagnostics) -> String {
    if !std::io::stderr().is_terminal() {
        return diagnostics.plain();
    }
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode());
    let mut out = String::new();
    for error in diagnostics {
        if handler.render_report(&mut out, error).is_err() {
            out.push_str(&error.plain());
        }
        out.push('\n');
    }
    out
}
