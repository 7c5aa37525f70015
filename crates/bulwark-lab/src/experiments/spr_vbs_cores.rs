//! Two reservation mechanisms composed in one system file: SPR reservations on core 0 and
//! variable-bandwidth servers on core 1 (`scenarios/spr-vbs-cores.toml`), run on one machine.
//!
//! Theory, worked by hand for core 0: the rogue (priority 20, `b = 2 ms`, `p = 10 ms`) runs
//! forever; SPR's sporadic rule gives its budget back one period after each activation, so it
//! runs exactly `[10k, 10k + 2)` ms. The victim (priority 10, `C = 3 ms`, `T = 10 ms`) runs
//! `[10k + 2, 10k + 5)`: every response is `2 + 3 = 5 ms`, within the SPR response bound
//! (Eq. 1 of the SPR paper over the reservations, `R = b_victim + b_rogue = 6 ms`). Core 1's
//! processes are those of `scenarios/vbs-processes.toml`, caps summing to 9/10 (Eq. 2 of the
//! VBS paper admits them). Partitioned cores share nothing, so each core's schedule must be
//! the one its policy gives alone: core 0's equals the SPR part run alone, core 1's equals
//! `vbs-processes.toml` run alone, slice for slice.

use bulwark_analysis::admission::response_times;
use bulwark_analysis::bandwidth;
use bulwark_analysis::rbf::ServerKind;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Outcome, SliceKind};
use bulwark_spec::{PolicyKind, Scenario};

use super::outcomes::built_in_scenario;
use super::{Experiment, LabError};
use crate::gantt::gantt_svg;
use crate::report::{Check, ExperimentReport, Figure};

pub const EXPERIMENT: Experiment = Experiment {
    name: "spr-vbs-cores",
    title: "SPR on one core, variable-bandwidth servers on the other, in one system file",
    run,
};

/// The rogue's budget and the victim's execution, from the file (checked against it).
const ROGUE_BUDGET: Duration = Duration::from_millis(2);
const VICTIM_EXECUTION: Duration = Duration::from_millis(3);
const PERIOD: Duration = Duration::from_millis(10);

fn run() -> Result<ExperimentReport, LabError> {
    let composed = built_in_scenario("spr-vbs-cores")?;
    let mut vbs_alone = built_in_scenario("vbs-processes")?;
    // Over the composed file's horizon (vbs-processes.toml runs 200 ms).
    vbs_alone.duration = composed.duration;
    let options = super::recording();
    let whole = bulwark_sim::run(&composed, &options)?;
    let parts = composed.parts_by_policy();
    let spr_part = parts
        .iter()
        .find(|p| p.policy == PolicyKind::Spr)
        .expect("the file has an spr core");
    let spr_alone = bulwark_sim::run(spr_part, &options)?;
    let vbs_run = bulwark_sim::run(&vbs_alone, &options)?;

    let task = |o: &Outcome, name: &str| o.tasks.iter().find(|t| t.name == name).cloned();
    let victim = task(&whole, "victim").expect("the file has a victim");
    let bound = spr_bound(spr_part, "victim");
    let rogue_windows = rogue_per_period(&whole, &composed);
    // Non-empty and equal: an empty trace would compare equal to another.
    let same = |a: Vec<(String, u64, u64)>, b: Vec<(String, u64, u64)>| !a.is_empty() && a == b;
    let core0_same = same(
        super::slices_by_name(&whole, &composed, 0),
        super::slices_by_name(&spr_alone, spr_part, 0),
    );
    let core1_same = same(
        super::slices_by_name(&whole, &composed, 1),
        super::slices_by_name(&vbs_run, &vbs_alone, 0),
    );
    // VBS Eq. 2 over the core's caps, exactly (the analysis `analyze` uses).
    let caps: Vec<(Duration, Duration)> = composed
        .vbs
        .iter()
        .flat_map(|spec| spec.caps.iter().flatten())
        .map(|&(n, d)| (Duration::from_nanos(n), Duration::from_nanos(d)))
        .collect();
    let admission = bandwidth::admit(&caps);
    let total = (admission.total.numerator, admission.total.denominator);
    let expected_response = ROGUE_BUDGET.saturating_add(VICTIM_EXECUTION);
    let checks = vec![
        Check {
            claim: "core 0 (SPR): the victim responds in 2 + 3 = 5 ms every period, no miss".into(),
            expected: format!("11 jobs, 0 misses, max response {expected_response}"),
            measured: format!(
                "{} jobs, {} misses, max response {}",
                victim.jobs,
                victim.misses,
                Duration::from_nanos(victim.response.max_ns)
            ),
            pass: victim.jobs == 11
                && victim.misses == 0
                && victim.response.max_ns == expected_response.as_nanos()
                && victim.response.min_ns == expected_response.as_nanos(),
        },
        Check {
            claim: "core 0 (SPR): the victim's response is within the SPR analysis bound".into(),
            expected: "max response <= R (Eq. 1 over the reservations, 6 ms by hand)".into(),
            measured: format!(
                "{} <= {}",
                Duration::from_nanos(victim.response.max_ns),
                bound.map_or("none".into(), |b| b.to_string())
            ),
            pass: bound.is_some_and(|b| {
                b == Duration::from_millis(6) && victim.response.max_ns <= b.as_nanos()
            }),
        },
        Check {
            claim: "core 0 (SPR): the rogue runs its budget, and no more, in every period".into(),
            expected: format!("{ROGUE_BUDGET} in each of the 10 periods of [0, 100) ms"),
            measured: format!(
                "{:?} ms",
                rogue_windows
                    .iter()
                    .map(|ns| *ns as f64 / 1e6)
                    .collect::<Vec<_>>()
            ),
            pass: rogue_windows.len() == 10
                && rogue_windows
                    .iter()
                    .all(|&ns| ns == ROGUE_BUDGET.as_nanos()),
        },
        Check {
            claim: "core 1 (VBS): the processes' caps are admitted (sum of caps <= 1, Eq. 2)"
                .into(),
            expected: "9/10".into(),
            measured: format!("{}/{}", total.0, total.1),
            pass: admission.exact && admission.admitted && total == (9, 10),
        },
        Check {
            claim: "core 0's schedule is the SPR part's run alone, slice for slice".into(),
            expected: "identical".into(),
            measured: if core0_same { "identical" } else { "different" }.into(),
            pass: core0_same,
        },
        Check {
            claim: "core 1's schedule is vbs-processes.toml's run alone (same horizon), slice for \
                    slice"
                .into(),
            expected: "identical".into(),
            measured: if core1_same { "identical" } else { "different" }.into(),
            pass: core1_same,
        },
    ];
    let span = Instant::ZERO.saturating_add(Duration::from_millis(30));
    let figures = gantt_svg(&whole, Instant::ZERO, span)
        .map(|svg| Figure {
            file: "spr-vbs-gantt.svg".into(),
            caption: "The first 30 ms: core 0 under SPR (rogue, victim), core 1 under VBS".into(),
            svg,
        })
        .into_iter()
        .collect();
    Ok(ExperimentReport {
        source: "SPR paper (sporadic rule, Eq. 1) and VBS paper (Eq. 2), composed per core".into(),
        summary: "One system file, `scenarios/spr-vbs-cores.toml`, whose `[[core]]` table gives \
                  core 1 the vbs policy while core 0 runs the scenario's spr. A rogue in an SPR \
                  reservation runs forever above a victim on core 0; variable-bandwidth \
                  processes switch actions on core 1. One machine runs both cores with no \
                  kernel costs; each core's schedule is checked against its policy's part run \
                  alone."
            .into(),
        checks,
        tables: vec![super::textbook::summary_table(&whole)],
        figures,
        ..EXPERIMENT.blank_report()
    })
}

/// The SPR response bound of `name` among its core's reservations (sporadic servers).
fn spr_bound(part: &Scenario, name: &str) -> Option<Duration> {
    let mut servers = super::a1_thundering_herd::servers(part, ServerKind::Sporadic);
    servers.sort_by_key(|s| std::cmp::Reverse(s.priority));
    let index = servers.iter().position(|s| s.name == name)?;
    let response = response_times(&servers).get(index).copied()?;
    response.admitted().then_some(response.response)
}

/// The rogue's execution in each whole period `[10k, 10k + 10)` ms before the horizon.
fn rogue_per_period(o: &Outcome, scenario: &Scenario) -> Vec<u64> {
    let Some(rogue) = scenario.tasks.iter().position(|t| t.name == "rogue") else {
        return Vec::new();
    };
    let horizon = scenario.duration.as_nanos();
    let period = PERIOD.as_nanos();
    let mut windows = vec![0u64; (horizon / period) as usize];
    for slice in task_slices(o) {
        if slice.0 != rogue {
            continue;
        }
        for (k, window) in windows.iter_mut().enumerate() {
            let (lo, hi) = (k as u64 * period, (k as u64 + 1) * period);
            *window += slice.2.min(hi).saturating_sub(slice.1.max(lo));
        }
    }
    windows
}

/// Task slices as (task index, start ns, end ns).
fn task_slices(o: &Outcome) -> Vec<(usize, u64, u64)> {
    o.trace.as_ref().map_or_else(Vec::new, |trace| {
        trace
            .slices
            .iter()
            .filter(|s| s.kind == SliceKind::Task)
            .filter_map(|s| Some((s.task?.index(), s.start.as_nanos(), s.end.as_nanos())))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_holds() {
        let report = run().expect("runs");
        crate::test_support::assert_every_check_passes(&report.checks);
    }

    /// The checks can fail: a rogue without SPR's confinement (a plain fixed-priority core)
    /// takes the whole core and the victim never runs.
    #[test]
    fn without_reservations_the_rogue_starves_the_victim() {
        let mut composed = built_in_scenario("spr-vbs-cores").expect("valid");
        composed.policy = PolicyKind::FixedPriority;
        for t in &mut composed.tasks {
            if t.core == 0 {
                t.reservation = None;
            }
        }
        let outcome = bulwark_sim::run(&composed, &bulwark_sim::Options::default()).expect("runs");
        let victim = super::super::outcomes::task(&outcome, "victim");
        assert_eq!(victim.response.count, 0);
        assert_eq!(victim.misses, 10);
    }
}
