//! EDF bandwidth servers: the constant-bandwidth server (CBS) and variable-bandwidth servers
//! (VBS), which give each server a share of the processor under EDF, whatever its tasks do.

pub mod cbs;
pub mod vbs;

pub use cbs::{Cbs, CbsServer};
