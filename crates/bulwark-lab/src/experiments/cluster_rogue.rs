//! Three papers' mechanisms composed on the one machine (`scenarios/cluster-rogue.toml`):
//! two clusters of the MC-IPC paper's clustered scheduler sharing an mc-ipc key server, with
//! a high-criticality time partition and constant-bandwidth servers, and a rogue in a
//! reclamation group that a watchdog terminates mid-run. The file's comments work out, by
//! hand, what the checks compare:
//!
//! - T1 (the partition) and T2 drain at most Theorem 1's `(1 + 2 m K) L` = 10 ms per request;
//! - the group's quota limits the rogue to 19,230 semaphores, and terminating the group masks
//!   core 0 for one unit (13 ns, within the quota): T1's slot of 500 ms opens on time, and
//!   every job of T1 completes within its slot;
//! - the watchdog, a CBS server with the earlier deadline, runs at its release;
//! - without the group, reclaiming a million semaphores one by one masks core 0 for
//!   39.000013 ms, so T1's job of 500 ms starts at 529.000013 ms.

use bulwark_core::{Duration, Instant};
use bulwark_sim::Outcome;

use super::outcomes::{built_in_scenario, jobs, recording_jobs, task};
use super::{Experiment, LabError};
use crate::report::{Check, ExperimentReport};

pub const EXPERIMENT: Experiment = Experiment {
    name: "cluster-rogue",
    title: "A partition, CBS servers and a key server in two clusters on the one machine, with \
            a rogue in a reclamation group terminated mid-run",
    run,
};

/// By hand: (1 ms / 13 ns - 1 - 2) / 4 semaphores fit the quota.
const ALLOCATED: u64 = 19_230;
const ASKED: u64 = 1_000_000;
/// The reclamation unit, 13 cycles at 1 GHz: a group is released in one.
const UNIT: Duration = Duration::from_nanos(13);
const QUOTA: Duration = Duration::from_millis(1);
/// Without the group: 3 * 10^6 + 1 units.
const BASELINE_MASK: Duration = Duration::from_nanos(39_000_013);
/// The termination, and the release of T1's job in the slot that follows it.
const TERMINATION: Instant = Instant::from_nanos(490_000_000);
const SLOT_OPENS: Instant = Instant::from_nanos(500_000_000);
const SLOT: Duration = Duration::from_millis(50);

/// Theorem 1 for `T1`, as the analysis reads it from the scenario (m = 1, K = 2, L = 2 ms).
fn theorem_1(scenario: &bulwark_spec::Scenario) -> Duration {
    bulwark_analysis::gates::client_bound(scenario, "key", "T1").expect("an mc-ipc client")
}

fn run() -> Result<ExperimentReport, LabError> {
    let scenario = built_in_scenario("cluster-rogue")?;
    let options = recording_jobs();
    let grouped = bulwark_sim::run(&scenario, &options)?;
    let mut ungrouped_scenario = scenario.clone();
    ungrouped_scenario.groups.clear();
    ungrouped_scenario.name = "cluster-rogue without the group".into();
    let ungrouped = bulwark_sim::run(&ungrouped_scenario, &options)?;
    let checks = vec![
        within_theorem_1(&grouped, theorem_1(&scenario)),
        quota(&grouped),
        slot_on_time(&grouped),
        watchdog_on_time(&grouped),
        baseline(&ungrouped),
    ];
    Ok(ExperimentReport {
        source: "MC-IPC paper, sections III (clustered reservations, time partitions) and V, \
                 Fig. 1, Theorem 1; CBS (Abeni and Buttazzo); reclamation paper (groups, \
                 bounded termination)"
            .into(),
        summary: "`scenarios/cluster-rogue.toml`: cluster C1 (core 0) holds a \
                  high-criticality time partition (T1, in [0, 50 ms) of every 100 ms), a \
                  rogue in a soft CBS server that allocates a million semaphores in a \
                  reclamation group with a 1 ms quota, calls the key server and spins, and a \
                  watchdog in a CBS server that terminates it at 490 ms; cluster C2 (core 1) \
                  holds T2 and a flooder that calls the key server for ever. The key server's \
                  mc-ipc gate prunes waiting requests whose callers' budgets run out. The \
                  same file without the group shows what the group's bound saves: the kernel \
                  frees the rogue's million semaphores one by one with core 0 masked."
            .into(),
        checks,
        tables: vec![
            super::textbook::summary_table(&grouped),
            super::textbook::summary_table(&ungrouped),
        ],
        ..EXPERIMENT.blank_report()
    })
}

fn within_theorem_1(outcome: &Outcome, bound: Duration) -> Check {
    let (t1, t2) = (task(outcome, "T1"), task(outcome, "T2"));
    Check {
        claim: format!(
            "T1 (the partition) and T2 drain at most Theorem 1's (1 + 2 m K) L = {bound} per \
             request (m = 1, K = 2), the flooder's requests pruned"
        ),
        expected: format!("max drain <= {bound}, flooder pruned"),
        measured: format!(
            "T1 {} requests, max {}; T2 {} requests, max {}; flooder pruned {}",
            t1.request_drain.count,
            Duration::from_nanos(t1.request_drain.max_ns),
            t2.request_drain.count,
            Duration::from_nanos(t2.request_drain.max_ns),
            task(outcome, "flooder").requests_aborted
        ),
        pass: t1.request_drain.count >= 10
            && t2.request_drain.count >= 50
            && t1.request_drain.max_ns <= bound.as_nanos()
            && t2.request_drain.max_ns <= bound.as_nanos()
            && task(outcome, "flooder").requests_aborted > 0,
    }
}

fn quota(outcome: &Outcome) -> Check {
    let rogue = task(outcome, "rogue");
    let core = &outcome.cores[0];
    Check {
        claim: "the group's 1 ms quota limits the rogue to 19,230 of its million semaphores, \
                and terminating the group masks core 0 for one unit, within the quota"
            .into(),
        expected: format!(
            "{ALLOCATED} allocated, {} refused, masked {UNIT} (<= {QUOTA}), the rogue's job \
             killed",
            ASKED - ALLOCATED
        ),
        measured: format!(
            "{} allocated, {} refused, masked {}, {} killed",
            rogue.objects_allocated,
            rogue.allocations_refused,
            Duration::from_nanos(core.max_reclaim_ns),
            rogue.killed_jobs
        ),
        pass: rogue.objects_allocated == ALLOCATED
            && rogue.allocations_refused == ASKED - ALLOCATED
            && core.max_reclaim_ns == UNIT.as_nanos()
            && core.reclaim_ns == UNIT.as_nanos()
            && rogue.killed_jobs == 1,
    }
}

fn slot_on_time(outcome: &Outcome) -> Check {
    let t1 = jobs(outcome, "T1");
    let at_slot = t1.iter().find(|j| j.release == SLOT_OPENS);
    // The job released at the horizon cannot complete within the run.
    let late = t1
        .iter()
        .filter(|j| {
            j.release < outcome.until
                && j.completion
                    .is_none_or(|done| done.saturating_duration_since(j.release) > SLOT)
        })
        .count();
    Check {
        claim: "T1's slot of 500 ms opens on time after the termination, and every job of T1 \
                completes within its 50 ms slot"
            .into(),
        expected: "job of 500 ms starts at 500 ms; 0 jobs past their slot".into(),
        measured: format!(
            "job of 500 ms starts at {}; {late} jobs past their slot",
            at_slot
                .and_then(|j| j.first_start)
                .map_or("never".into(), |t| format!("{t}"))
        ),
        pass: at_slot.and_then(|j| j.first_start) == Some(SLOT_OPENS) && late == 0,
    }
}

fn watchdog_on_time(outcome: &Outcome) -> Check {
    let start = jobs(outcome, "watchdog")
        .iter()
        .find(|j| j.release == TERMINATION)
        .and_then(|j| j.first_start);
    Check {
        claim: "the watchdog's CBS server, with the earlier deadline, runs at its release \
                although the rogue's soft CBS server has been running on idle time"
            .into(),
        expected: format!("starts at {TERMINATION}"),
        measured: format!(
            "starts at {}",
            start.map_or("never".into(), |t| format!("{t}"))
        ),
        pass: start == Some(TERMINATION),
    }
}

fn baseline(outcome: &Outcome) -> Check {
    let rogue = task(outcome, "rogue");
    let core = &outcome.cores[0];
    let unmasked = TERMINATION.saturating_add(BASELINE_MASK);
    let start = jobs(outcome, "T1")
        .iter()
        .find(|j| j.release == SLOT_OPENS)
        .and_then(|j| j.first_start);
    Check {
        claim: "without the group: the rogue gets its million semaphores, the kernel frees them \
                one by one, 3 * 10^6 + 1 units, and core 0 stays masked 39 ms, into T1's slot"
            .into(),
        expected: format!("masked {BASELINE_MASK}; T1's job of 500 ms starts at {unmasked}"),
        measured: format!(
            "{} allocated, masked {}; T1's job of 500 ms starts at {}",
            rogue.objects_allocated,
            Duration::from_nanos(core.max_reclaim_ns),
            start.map_or("never".into(), |t| format!("{t}"))
        ),
        pass: rogue.objects_allocated == ASKED
            && core.max_reclaim_ns == BASELINE_MASK.as_nanos()
            && start == Some(unmasked),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Theorem 1 for one core per cluster and two clusters: (1 + 2 * 1 * 2) * 2 ms = 10 ms.
    #[test]
    fn the_bound_is_theorem_1() {
        let scenario = built_in_scenario("cluster-rogue").expect("valid");
        assert_eq!(theorem_1(&scenario), Duration::from_millis(10));
    }

    /// 1 ms at 13 ns per unit is 76,923 units; less the arena and the process, 76,920; at 4
    /// units per semaphore, 19,230.
    #[test]
    fn the_quota_fits_19230_semaphores() {
        let units = QUOTA.as_nanos() / UNIT.as_nanos();
        assert_eq!(units, 76_923);
        assert_eq!((units - 3) / 4, ALLOCATED);
        assert_eq!((3 * ASKED + 1) * UNIT.as_nanos(), BASELINE_MASK.as_nanos());
    }
}
