//! The tests against the supply time partitions leave (`bulwark_analysis::slot_supply`, what
//! `bulwark analyze` runs on a cluster of one core with partitions) against the machine:
//! random one-core clusters with one or two partitions, each busy for ever (so it takes every
//! slot), and sporadic reservations whose tasks release a job per period of the reservation,
//! with work drawn up to the budget. Each job is one reservation job, released with its
//! replenishment, so under fixed-priority order it completes within its reservation's `R`,
//! and under EDF order within its period, whenever the analysis shows the cluster
//! schedulable.

use bulwark_analysis::cluster::{self, ClusterVerdict};
use proptest::prelude::*;

/// `(cycle ms, partition slots as (start, length) ms, reservations as (priority, period ms,
/// budget us, offset ms))`.
type Shape = (u64, Vec<(u64, u64)>, Vec<(u8, u64, u64, u64)>);

/// Without slots: a cluster of two cores and no partition (the global tests). With `two`,
/// slots too on two cores, the partitions on core 0.
fn scenario_text((cycle, slots, reservations): &Shape, order: &str, two: bool) -> String {
    let (cores, members) = match (slots.is_empty(), two) {
        (true, _) => (2, "[0, 1]".to_owned()),
        (false, true) => (2, format!("[0, 1]\ncycle = \"{cycle}ms\"")),
        (false, false) => (1, format!("[0]\ncycle = \"{cycle}ms\"")),
    };
    let mut text = format!(
        "name = \"slots\"\npolicy = \"fixed-priority\"\ncores = {cores}\nduration = \"2s\"\n\n\
         [[cluster]]\nname = \"k\"\norder = \"{order}\"\ncores = {members}\n"
    );
    let priority = |p: u8| match order {
        "fixed-priority" => format!("priority = {p}\n"),
        _ => String::new(),
    };
    for (index, (start, length)) in slots.iter().enumerate() {
        text.push_str(&format!(
            "\n[[task]]\nname = \"p{index}\"\ncluster = \"k\"\n{}\
             reservation = {{ core = 0, slots = [[\"{start}ms\", \"{}ms\"]] }}\n\
             script = [{{ loop = \"forever\", body = [{{ run = \"1s\" }}] }}]\n",
            priority(200),
            start + length
        ));
    }
    for (index, &(level, period, budget, offset)) in reservations.iter().enumerate() {
        let least = (budget / 4).max(1);
        text.push_str(&format!(
            "\n[[task]]\nname = \"r{index}\"\ncluster = \"k\"\n{}offset = \"{offset}ms\"\n\
             reservation = {{ budget = \"{budget}us\", period = \"{period}ms\" }}\n\
             script = [{{ loop = \"forever\", body = [{{ run = [\"{least}us\", \"{budget}us\"] }}, \
             {{ sleep-until-next-release = \"{period}ms\" }}] }}]\n",
            priority(level)
        ));
    }
    text
}

fn shape() -> impl Strategy<Value = Shape> {
    prop::sample::select(vec![20u64, 50, 100]).prop_flat_map(|cycle| {
        (
            Just(cycle),
            // One or two slots: cut points within the cycle, each slot [a, b) of cut pairs.
            prop::collection::btree_set(0..cycle, 2..5).prop_map(|cuts| {
                let cuts: Vec<u64> = cuts.into_iter().collect();
                cuts.chunks_exact(2).map(|c| (c[0], c[1] - c[0])).collect()
            }),
            prop::collection::vec(
                (
                    1u8..5,
                    prop::sample::select(vec![10u64, 20, 25, 50, 100]),
                    100u64..8_000,
                    0u64..30,
                ),
                1..4,
            ),
        )
    })
}

fn check(shape: &Shape, order: &str, seed: u64) -> Result<(), TestCaseError> {
    check_on(shape, order, false, seed)
}

fn check_on(shape: &Shape, order: &str, two: bool, seed: u64) -> Result<(), TestCaseError> {
    let text = scenario_text(shape, order, two);
    let scenario = bulwark_spec::parse(&text, "slots.toml")
        .unwrap_or_else(|e| panic!("{}\n{text}", e.plain()));
    let analysis = &cluster::analyse(&scenario)[0];
    prop_assume!(match (shape.1.is_empty(), two) {
        (false, false) => matches!(analysis.verdict, ClusterVerdict::SupplySchedulable(_)),
        _ => analysis.verdict.schedulable() == Some(true),
    });
    let options = bulwark_sim::Options {
        seed: Some(seed),
        ..bulwark_sim::Options::default()
    };
    let mut kept = bulwark_sim::Kept::default();
    bulwark_sim::run_recorded(&scenario, &options, &mut kept, &mut |_| {}).expect("runs");
    let partitions = shape.1.len();
    let mut checked = 0;
    for job in kept.jobs.iter().filter(|j| j.task.index() >= partitions) {
        let Some(completion) = job.completion else {
            continue;
        };
        let member = &analysis.members[job.task.index()];
        // Each task is alone in its reservation and fits it: its job bound is the
        // reservation's R (fixed priority) or p (EDF).
        let bound = member
            .job_response
            .and_then(|r| r.bound())
            .expect("a lone member that fits has a job bound");
        let reservation_bound = match member.response {
            Some(response) => response.bound().expect("schedulable"),
            None => {
                scenario.tasks[job.task.index()]
                    .reservation
                    .expect("a reservation")
                    .period
            }
        };
        prop_assert_eq!(bound, reservation_bound);
        let response = completion.saturating_duration_since(job.release);
        prop_assert!(
            response <= bound,
            "{} job {} released at {}: response {response} > {bound}\n{text}",
            member.name,
            job.job,
            job.release
        );
        checked += 1;
    }
    prop_assert!(checked > 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn fixed_priority_jobs_complete_within_their_bounds(shape in shape(), seed in any::<u64>()) {
        check(&shape, "fixed-priority", seed)?;
    }

    #[test]
    fn edf_jobs_complete_within_their_periods(shape in shape(), seed in any::<u64>()) {
        check(&shape, "edf", seed)?;
    }

    /// Two cores, a partition on core 0: under EDF order Bertogna, Cirinei and Lipari's
    /// test, under fixed priority Bertogna and Cirinei's response-time analysis, each with
    /// the partition as an interfering entity.
    #[test]
    fn jobs_beside_a_partition_on_two_cores_complete_within_their_bounds(
        shape in shape(),
        edf in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (cycle, slots, reservations) = shape;
        let order = if edf { "edf" } else { "fixed-priority" };
        check_on(&(cycle, slots, heavier(reservations)), order, true, seed)?;
    }

    /// The same on a two-core cluster without partitions: under Bertogna and Cirinei's
    /// analysis, and under GFB.
    #[test]
    fn global_jobs_complete_within_their_bounds(
        shape in shape(),
        edf in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (cycle, _, reservations) = shape;
        let order = if edf { "edf" } else { "fixed-priority" };
        check(&(cycle, Vec::new(), heavier(reservations)), order, seed)?;
    }
}

/// Three times the budgets (at most the period), so that two cores are needed.
fn heavier(mut reservations: Vec<(u8, u64, u64, u64)>) -> Vec<(u8, u64, u64, u64)> {
    for reservation in &mut reservations {
        reservation.2 = (reservation.2 * 3).min(reservation.1 * 1000);
    }
    reservations
}

/// One partition whose task releases a job of `work` us every `period` ms (from `offset`
/// ms), beside a reservation that keeps the core busy outside the slots.
fn partition_text(
    cycle: u64,
    (start, length): (u64, u64),
    (work, period, offset): (u64, u64, u64),
) -> String {
    format!(
        "name = \"own-slots\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"2s\"\n\n\
         [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\ncycle = \"{cycle}ms\"\n\n\
         [[task]]\nname = \"p\"\ncluster = \"k\"\npriority = 200\noffset = \"{offset}ms\"\n\
         reservation = {{ core = 0, slots = [[\"{start}ms\", \"{}ms\"]] }}\n\
         script = [{{ loop = \"forever\", body = [{{ run = [\"1us\", \"{work}us\"] }}, \
         {{ sleep-until-next-release = \"{period}ms\" }}] }}]\n\n\
         [[task]]\nname = \"busy\"\ncluster = \"k\"\npriority = 1\n\
         reservation = {{ budget = \"1ms\", period = \"2ms\" }}\n\
         script = [{{ loop = \"forever\", body = [{{ run = \"1s\" }}] }}]\n",
        start + length
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// A partition's task, fitting its slots by the analysis, completes every job within the
    /// bound its slots give (`job_response`).
    #[test]
    fn a_partitions_jobs_complete_within_their_slots_bound(
        cycle in prop::sample::select(vec![10u64, 20, 50]),
        slot in (0u64..1000, 1u64..1000),
        work in 100u64..20_000,
        period in prop::sample::select(vec![10u64, 20, 25, 40, 50, 100]),
        offset in 0u64..30,
        seed in any::<u64>(),
    ) {
        // The slot within the cycle: a start and a length in thousandths of it.
        let start = slot.0 * cycle / 1000;
        let length = (slot.1 * (cycle - start) / 1000).max(1);
        let text = partition_text(cycle, (start, length), (work, period, offset));
        let scenario = bulwark_spec::parse(&text, "own-slots.toml")
            .unwrap_or_else(|e| panic!("{}\n{text}", e.plain()));
        let analysis = &cluster::analyse(&scenario)[0];
        let member = &analysis.members[0];
        let bound = member.job_response.and_then(|r| r.bound());
        prop_assume!(bound.is_some());
        let bound = bound.expect("bounded");
        let options = bulwark_sim::Options {
            seed: Some(seed),
            ..bulwark_sim::Options::default()
        };
        let mut kept = bulwark_sim::Kept::default();
        bulwark_sim::run_recorded(&scenario, &options, &mut kept, &mut |_| {}).expect("runs");
        let mut checked = 0;
        for job in kept.jobs.iter().filter(|j| j.task.index() == 0) {
            let Some(completion) = job.completion else { continue };
            let response = completion.saturating_duration_since(job.release);
            prop_assert!(
                response <= bound,
                "job {} released at {}: response {response} > {bound}\n{text}",
                job.job,
                job.release
            );
            checked += 1;
        }
        prop_assert!(checked > 0);
    }
}
