//! Showing scenario errors: a rich rendering with the source on a terminal, and one plain
//! `file:line:column: message (help)` line per error otherwise, so scripts can read them.

use std::io::IsTerminal;

use bulwark_spec::{Diagnostics, SpecError};
use miette::{GraphicalReportHandler, GraphicalTheme};

/// Prints `warnings` on standard error, one `warning: file:line:column: message (help)`
/// line each; with `deny` (`--deny-warnings`) they are errors instead, printed as errors
/// are. True when they must stop the command: denied, and at least one.
pub fn report_warnings(warnings: &[SpecError], deny: bool) -> bool {
    let mut out = String::new();
    for warning in warnings {
        if deny {
            out.push_str(&format!("{} [a warning, denied]\n", warning.plain()));
        } else {
            out.push_str(&format!("warning: {}\n", warning.plain()));
        }
    }
    eprint!("{out}");
    deny && !warnings.is_empty()
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
