//! One run of the throughput benchmark's 100-task EDF set at U = 0.9 over 100 s, for counting
//! instructions under callgrind (`valgrind --tool=callgrind`), where wall time is too noisy.
use bulwark_analysis::scenario::periodic_set;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, Options};
use bulwark_spec::PolicyKind;

fn main() {
    let scenario = periodic_set(
        PolicyKind::Edf,
        100,
        900_000_000,
        Duration::from_secs(100),
        1,
    );
    let machine = Machine::new(&scenario, &Options::default()).expect("builds");
    let outcome = machine.run(&mut |_: Instant| {}).expect("runs");
    println!("events {}", outcome.events);
}
