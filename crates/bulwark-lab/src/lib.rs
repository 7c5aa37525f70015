//! Bulwark's lab: what people read and open after a run — trace export, SVG figures, metrics
//! JSON, the built-in scenarios, and the experiments that reproduce published results.
//!
//! Nothing here prints: every function returns text or writes the files it was asked to, and
//! the CLI decides what to show.

pub mod chrome;
pub mod component_measures;
pub mod component_system;
pub mod experiments;
pub mod gantt;
pub mod metrics_json;
pub mod plot;
pub mod report;
pub mod scenarios;

mod markup;
mod names;

#[cfg(test)]
mod test_support;
