//! Schedulability sweeps: draw random task sets over a grid of (task count, utilisation)
//! points, run several schedulability tests on every set, and count how many each accepts.
//!
//! - [`sets`] draws one set from its seed (UUniFast / UUniSort utilisations, log-uniform,
//!   uniform or harmonic periods, optional constrained deadlines);
//! - [`verdict`] runs one named test on one set;
//! - [`papers`] maps a set onto another paper's mechanism for that paper's own test;
//! - [`run`] sweeps the grid with rayon, in shards if asked, and writes CSV and JSON.
//!
//! Every set is seeded from (experiment seed, point index, set index) alone, and counts are
//! sums, so the results do not depend on the thread count, the scheduling of the threads, or
//! how the work was split into shards.

pub mod multiprocessor;
pub mod papers;
pub mod run;
pub mod sets;
pub mod verdict;
