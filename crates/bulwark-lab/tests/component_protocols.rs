//! The CAmkES protocols on the one machine, against the theory, on random systems over
//! the Fig. 7 topology (every CPI's protocol drawn from propagation, PIP, IPCP and NPCS):
//!
//! - no job suffers more priority inversion than its blocking term `B_i` allows (PIP: one
//!   section per lower task; IPCP and NPCS: one section);
//! - without PIP, a job is blocked by at most one lower job;
//! - every task exact response-time analysis admits responds within its bound, and a set it
//!   admits meets every deadline;
//! - no protocol step is refused and pools of one thread per task never run out.

use bulwark_analysis::component_lowering::ReservationTerms;
use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_lab::experiments::camkes_synthetic::{build, evaluate, Built, ChainTask};
use bulwark_sim::components::{
    run, ComponentOutcome, ComponentSystemConfig, CpiProtocol, ProtocolCosts, RunOptions,
};
use proptest::prelude::*;

fn protocol() -> impl Strategy<Value = CpiProtocol> {
    proptest::sample::select(CpiProtocol::ALL.to_vec())
}

/// A task: period 10, 20, 40 or 80 ms, priority 1-4 (ties allowed), work 0-3 ms per part in
/// steps of 250 us (coarse, so that steps often end just as jobs are released), at least
/// 250 us in its own component.
fn chain_task() -> impl Strategy<Value = ChainTask> {
    (0u32..4, 1u8..=4, proptest::array::uniform4(0u64..=12)).prop_map(|(k, p, work)| ChainTask {
        period: Duration::from_millis(10 << k),
        priority: Priority(p),
        // At least 250 us of own work: RTA's fixed point starts at C + B and says 0 for an
        // empty job, which still waits for the core to complete.
        work: [work[0].max(1), work[1], work[2], work[3]].map(|w| Duration::from_micros(250 * w)),
    })
}

/// A random system of `tasks` and `protocols`, with the paper's Table 2 costs when
/// `overheads`, its releases staggered by `offsets` steps of 250 us (up to 10 ms, so sections
/// overlap releases in many ways: synchronous release is the critical instant only without
/// blocking).
fn staggered(
    tasks: &[ChainTask; 4],
    protocols: [CpiProtocol; 5],
    overheads: bool,
    offsets: [u64; 4],
) -> Built {
    let costs = if overheads {
        ProtocolCosts::xeon_gold_6130_max()
    } else {
        ProtocolCosts::ZERO
    };
    let mut built = build(tasks, protocols, costs);
    for (t, o) in built.machine.tasks.iter_mut().zip(offsets) {
        t.offset = Duration::from_micros(250 * o);
    }
    built
}

/// 330 ms of `machine`: every task's releases over more than four of its longest periods.
fn run_330ms(machine: &ComponentSystemConfig) -> ComponentOutcome {
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(Duration::from_millis(330)),
        record_jobs: false,
        record_trace: false,
    };
    run(machine, options).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn the_protocols_keep_the_analysis_promises(
        tasks in proptest::array::uniform4(chain_task()),
        protocols in proptest::array::uniform5(protocol()),
        overheads in any::<bool>(),
        offsets in proptest::array::uniform4(0u64..=40),
    ) {
        let built = staggered(&tasks, protocols, overheads, offsets);
        let timings = built.analysis.timings();
        let outcome = run_330ms(&built.machine);
        prop_assert_eq!(outcome.protocol_errors, 0);
        prop_assert_eq!(outcome.pool_exhausted, 0);
        let pip = protocols.contains(&CpiProtocol::Inherited);
        for (i, (t, o)) in timings.iter().zip(&outcome.tasks).enumerate() {
            prop_assert!(o.max_inversion <= t.blocking,
                "t{}: inversion {} over B = {}", i + 1, o.max_inversion, t.blocking);
            if !pip {
                prop_assert!(o.max_lower_jobs <= 1, "t{}: {} lower jobs", i + 1, o.max_lower_jobs);
            }
        }
        // Every admitted task's simulated response is within its RTA bound, and a set
        // RTA admits misses nothing.
        let responses = bulwark_analysis::blocking::response_times(&timings);
        for (i, (r, o)) in responses.iter().zip(&outcome.tasks).enumerate() {
            if r.verdict.admitted() {
                prop_assert!(o.max_response <= r.response,
                    "t{}: response {} over RTA's {}", i + 1, o.max_response, r.response);
            }
        }
        if bulwark_analysis::blocking::schedulable(&timings) {
            prop_assert_eq!(outcome.misses(), 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The composed system of `component-spr`, on random systems over the Fig. 7 topology:
    /// every task in an SPR reservation (its whole period as budget, so no job waits for a
    /// replenishment) with a non-preemptive region of 0 to 1 ms, whatever the protocols,
    /// with and without the paper's Table 2 costs. A job's priority inversion stays within the component paper's `B_i` plus SPR Eq. 1's
    /// blocking term `I_i` (the longest region of a strictly lower-priority task), and every
    /// task the response-time analysis admits with that blocking responds within its bound,
    /// as `analyze` computes it ([`ReservationTerms::with_regions`]). A region defers only
    /// activations, so a job meets one region, at its release.
    #[test]
    fn a_job_meets_at_most_one_lower_region(
        tasks in proptest::array::uniform4(chain_task()),
        protocols in proptest::array::uniform5(protocol()),
        regions in proptest::array::uniform4(0u64..=4),
        offsets in proptest::array::uniform4(0u64..=40),
        overheads in any::<bool>(),
    ) {
        let mut built = staggered(&tasks, protocols, overheads, offsets);
        for (t, eta) in built.machine.tasks.iter_mut().zip(regions) {
            t.reservation = Some(
                Reservation::new(t.period, t.period)
                    .with_non_preemptive(Duration::from_micros(250 * eta)),
            );
        }
        let machine = &built.machine;
        let lower_regions: Vec<Duration> = machine.tasks.iter()
            .map(|task| machine.tasks.iter()
                .filter(|other| other.priority < task.priority)
                .filter_map(|other| other.reservation)
                .map(|r| r.non_preemptive)
                .max()
                .unwrap_or(Duration::ZERO))
            .collect();
        let terms = ReservationTerms {
            reservations: machine.tasks.iter().map(|t| t.reservation).collect(),
            regions: lower_regions.clone(),
            eq1: None,
        };
        let timings = built.analysis.timings();
        let outcome = run_330ms(machine);
        prop_assert_eq!(outcome.protocol_errors, 0);
        prop_assert_eq!(outcome.pool_exhausted, 0);
        let responses = bulwark_analysis::blocking::response_times(&terms.with_regions(&timings));
        for (i, ((t, o), r)) in timings.iter().zip(&outcome.tasks).zip(&responses).enumerate() {
            prop_assert_eq!(o.budget_exhaustions, 0, "t{}", i + 1);
            prop_assert!(o.max_inversion <= t.blocking.saturating_add(lower_regions[i]),
                "t{}: inversion {} over B + I = {} + {}",
                i + 1, o.max_inversion, t.blocking, lower_regions[i]);
            if r.verdict.admitted() {
                prop_assert!(o.max_response <= r.response,
                    "t{}: response {} over the bound {}", i + 1, o.max_response, r.response);
            }
        }
    }
}

/// The experiment's own driver on the same kind of system: the run is as long as asked.
#[test]
fn evaluate_runs_the_asked_hyperperiods() {
    let task = ChainTask {
        period: Duration::from_millis(20),
        priority: Priority(1),
        work: [Duration::from_millis(1); 4],
    };
    let built = build(&[task; 4], [CpiProtocol::Inherited; 5], ProtocolCosts::ZERO);
    let outcome = evaluate(&built, 3).unwrap();
    assert_eq!(
        outcome.until,
        Instant::ZERO.saturating_add(Duration::from_millis(60))
    );
    // 3 jobs each of 4 ms, all on one core: 48 of 60 ms busy, no miss. A fourth job of each
    // is released at the run's inclusive end, 60 ms, and is unfinished.
    assert_eq!(outcome.busy, Duration::from_millis(48));
    assert!(outcome.tasks.iter().all(|t| t.jobs == 4));
    assert_eq!(outcome.misses(), 0);
}
