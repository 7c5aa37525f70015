//! A long run without trace, to measure peak memory (use `/usr/bin/time -v`):
//! `cargo run --release -p bulwark-sim --example long_run -- 3600 100`
//! simulates 3600 s of 100 generated EDF tasks at utilisation 0.9.

use bulwark_analysis::scenario::periodic_set;
use bulwark_core::Duration;
use bulwark_sim::{run, Options};
use bulwark_spec::PolicyKind;

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<u64>().expect("a number"));
    let seconds = args.next().unwrap_or(3600);
    let tasks = args.next().unwrap_or(100) as usize;
    let scenario = periodic_set(
        PolicyKind::Edf,
        tasks,
        900_000_000,
        Duration::from_secs(seconds),
        1,
    );
    let outcome = run(&scenario, &Options::default()).expect("runs");
    let jobs: u64 = outcome.tasks.iter().map(|t| t.jobs).sum();
    let misses: u64 = outcome.tasks.iter().map(|t| t.misses).sum();
    println!(
        "{seconds} s simulated, {tasks} tasks: {} events, {jobs} jobs, {misses} misses",
        outcome.events
    );
}
