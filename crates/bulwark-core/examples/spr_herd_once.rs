//! The SPR Thundering-Herd invocation of `benches/reservations.rs`, run outside Criterion so
//! that a simulator (valgrind's callgrind or cachegrind) can count its instructions and cache
//! misses at a given number of attackers N.
//!
//! The herd is the bench's: attackers `0..N` (priority 1) depleted with their replenishments
//! due at T, the victim `N` (priority 9) asleep until T, the core idle. The example prepares it
//! once, makes `CLONES` clones of it (like a batch of the bench's `schedule_at_herd` group:
//! every clone is made before the first invocation), then calls the one `schedule(T)` on each
//! clone in turn, through [`herd_schedule`], which is never inlined so a tool can count that
//! call alone. Each invocation is checked to dispatch the victim after one timeout.
//!
//! ```text
//! cargo build --profile bench -p bulwark-core --example spr_herd_once
//! valgrind --tool=callgrind --cache-sim=yes --D1=49152,12,64 --LL=2097152,16,64 \
//!     --toggle-collect='*herd_schedule*' --dump-instr=yes \
//!     target/release/examples/spr_herd_once 4096 64 sporadic
//! callgrind_annotate --auto=yes callgrind.out.<pid>
//! ```
//!
//! Arguments, all optional: N (default 4096), the number of clones (default 64), the rule,
//! `sporadic` (default) or `deferrable`, and a number of rounds: with it, the example times
//! that many batches instead (see [`time_batches`]; Criterion's numbers are the reference).
//! A fifth argument, `cold`, times the bench's cold pattern instead, at N = 16 and at N in
//! turn, and prints the ratios of their medians and middle means (see [`time_cold`]).
//!
//! The `--LL` above models the 2 MiB L2 of the machine the bench was written on: the
//! invocation's lines then miss it when the clones made since pushed them out, as in the
//! bench. Divide the counts by the number of clones for one invocation. With the bench's
//! largest batches (2000 clones at N = 16, 20 at N = 4096), one invocation of the sporadic
//! rule took 579 instructions and 7 L1 data misses at both sizes (612 and about 15 before
//! the timer heaps and the task record were laid out for it, 8 before the `Spr` value was);
//! the deferrable rule 414 (478 before), with the same misses. The misses are the same lines
//! at both sizes: five of the `Spr` value and two of the victim's record. The simulator has
//! no TLB, so it does not show what still differs: at N = 4096 the victim's record is a
//! megabyte away in each clone.

use std::hint::black_box;

use bulwark_core::reservation::{ReplenishmentRule, Spr};
use bulwark_core::{Decision, Instant, Policy, TaskId, Work};

#[path = "../benches/herd/mod.rs"]
mod herd;
use herd::{herd, T};

/// The Thundering Herd just before T, as the bench prepares it.
fn prepared(n: u32, rule: ReplenishmentRule) -> Spr {
    herd(n, |capacity| Spr::with_capacity(capacity, rule))
}

/// The invocation the bench times, alone in its own function.
#[inline(never)]
fn herd_schedule(policy: &mut Spr, work: &mut Work) -> Decision {
    policy.schedule(black_box(Instant::from_nanos(T)), work)
}

/// A rough timing of the bench's `schedule_at_herd` pattern, for quick comparisons (the bench
/// is the reference): `rounds` batches of `clones` clones, each batch made and then
/// invoked in turn, one clock reading around the invocations of a batch. Prints the mean
/// time of one invocation and the lowest batch mean.
fn time_batches(prepared: &Spr, n: u32, clones: usize, rounds: u32) {
    let mut total = std::time::Duration::ZERO;
    let mut best = std::time::Duration::MAX;
    for _ in 0..rounds {
        let mut batch: Vec<Spr> = (0..clones).map(|_| prepared.clone()).collect();
        let mut work = Work::default();
        let start = std::time::Instant::now();
        for policy in &mut batch {
            black_box(herd_schedule(policy, &mut work));
        }
        let elapsed = start.elapsed();
        total += elapsed;
        best = best.min(elapsed);
        drop(black_box(batch));
    }
    let per = |d: std::time::Duration, k: u32| d.as_nanos() as f64 / f64::from(k);
    let calls = rounds * clones as u32;
    println!(
        "N={n} clones={clones}: mean {:.1} ns, best batch {:.1} ns per invocation",
        per(total, calls),
        per(best, clones as u32)
    );
}

/// Bytes read to push the invocation's lines out of L1 and L2, as the bench's cold group does.
const EVICTION_BYTES: usize = 8 << 20;

/// The bench's `schedule_at_herd_cold` pattern, for quick comparisons: `rounds` times, for
/// each prepared state in turn (interleaved, so that both see the same machine), a clone,
/// then the eviction buffer read whole, then one timed invocation. Prints the median,
/// quartiles and mean of the middle half of each one's times (with the clock's own cost), and
/// the ratios of those.
fn time_cold(prepared: &[(u32, Spr)], rounds: u32) {
    let eviction: Vec<u64> = (0..EVICTION_BYTES / 8).map(|i| i as u64 | 1).collect();
    let mut times: Vec<Vec<u128>> = vec![Vec::with_capacity(rounds as usize); prepared.len()];
    for _ in 0..rounds {
        for ((_, state), samples) in prepared.iter().zip(&mut times) {
            let mut policy = state.clone();
            black_box(eviction.iter().fold(0u64, |a, &x| a ^ x));
            black_box(std::time::Instant::now());
            let mut work = Work::default();
            let start = std::time::Instant::now();
            black_box(herd_schedule(&mut policy, &mut work));
            samples.push(start.elapsed().as_nanos());
            drop(black_box(policy));
        }
    }
    // The clock reads in steps of about 10 ns here, so the medians move in steps too; the mean
    // of the middle half moves less and still ignores the outliers.
    let mut summaries = Vec::new();
    for ((n, _), samples) in prepared.iter().zip(&mut times) {
        samples.sort_unstable();
        let at = |q: usize| samples[(samples.len() - 1) * q / 4];
        let middle = &samples[samples.len() / 4..samples.len() * 3 / 4];
        let mean = middle.iter().sum::<u128>() as f64 / middle.len().max(1) as f64;
        println!(
            "N={n} cold: median {} ns, quartiles {} / {} ns, mean of the middle half {mean:.1} ns",
            at(2),
            at(1),
            at(3)
        );
        summaries.push((at(2) as f64, mean));
    }
    if let [first, .., last] = summaries[..] {
        println!(
            "cold ratios, last / first: medians {:.2}, middle means {:.2}",
            last.0 / first.0,
            last.1 / first.1
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u32 = args.next().map_or(4096, |a| a.parse().expect("N"));
    let clones: usize = args.next().map_or(64, |a| a.parse().expect("clones"));
    let rule = match args.next().as_deref() {
        None | Some("sporadic") => ReplenishmentRule::Sporadic,
        Some("deferrable") => ReplenishmentRule::Deferrable,
        Some(other) => panic!("unknown rule {other}: sporadic or deferrable"),
    };
    let state = prepared(n, rule);
    if let Some(rounds) = args.next() {
        let rounds: u32 = rounds.parse().expect("rounds");
        if args.next().as_deref() == Some("cold") {
            let reference = prepared(16, rule);
            time_cold(&[(16, reference), (n, state)], rounds);
        } else {
            time_batches(&state, n, clones, rounds);
        }
        return;
    }
    let mut batch: Vec<Spr> = (0..clones).map(|_| state.clone()).collect();
    let mut work = Work::default();
    for policy in &mut batch {
        work = Work::default();
        let decision = black_box(herd_schedule(policy, &mut work));
        assert_eq!(decision.next, Some(TaskId(n)), "the victim is dispatched");
        assert_eq!(work.timeouts_processed, 1, "one timeout processed");
    }
    for policy in &batch {
        policy.check_invariants().expect("invariants after T");
    }
    println!(
        "N={n} clones={clones} rule={rule:?} units={} reservations_touched={}",
        work.units(),
        work.reservations_touched
    );
}
