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
pub mod mcipc_trace;
pub mod reproduce;
pub mod run;
pub mod simulate;
pub mod sweep;
