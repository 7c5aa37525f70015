//! Bulwark's lab: what people read and open after a run — trace export, SVG figures, metrics
//! JSON and the reproduction report.
//!
//! Nothing here prints: every function returns text or writes the files it was asked to, and
//! the CLI decides what to show.

pub mod chrome;
pub mod gantt;
pub mod metrics_json;
pub mod report;

mod markup;
mod names;

#[cfg(test)]
mod test_support;
