//! The masks of a scenario's terminations ([`bulwark_analysis::reclamation`]), after the
//! rest of its analysis: a table in text, a `terminations` array in `--json`. A partitioned
//! core's SPR Eq. 1 counts its mask (`admission::response_times_masked`), and so does a CBS
//! core's EDF demand test (`edf::analyse_masked`), a VBS core's masked response bounds
//! (`vbs::MaskedCore`), and a fixed-priority or EDF core's classic test (`analyze_classic`);
//! clusters leave it out. A note per
//! place says which.

use std::process::ExitCode;

use bulwark_analysis::reclamation::{masks_by_place, scenario_terminations, Masked};
use bulwark_spec::{PolicyKind, Scenario};
use serde_json::Value;

use crate::commands::masks::{self, Names};

/// Runs `analysis` and adds the terminations' masks when the scenario has any.
pub(super) fn with_masks(
    scenario: &Scenario,
    json: bool,
    analysis: impl FnOnce() -> Result<ExitCode, String>,
) -> Result<ExitCode, String> {
    let terminations = scenario_terminations(scenario);
    if terminations.is_empty() {
        return analysis();
    }
    let names = Names {
        tasks: scenario.tasks.iter().map(|t| t.name.clone()).collect(),
        groups: scenario.groups.iter().map(|g| g.name.as_str()).collect(),
        clusters: scenario.clusters.iter().map(|c| c.name.as_str()).collect(),
    };
    let mut text = format!("\n{}", masks::table(&terminations, &names));
    for (place, mask) in masks_by_place(&terminations) {
        let (place_name, bound) = (masks::place(place, &names), masks::bound_text(mask));
        text.push_str(&if let Some((test, term)) = counted(scenario, place) {
            format!(
                "note: {place_name}: {test} this mask ({bound}) in {term}, as time nothing \
                 else runs\n"
            )
        } else {
            format!(
                "note: {place_name}: the tests above leave out this mask ({bound}): every task \
                 there may wait that long, as behind a non-preemptive section, and a time \
                 partition may lose that much of its slots\n"
            )
        });
    }
    let value: Value = terminations
        .iter()
        .map(|t| masks::to_json(t, &names))
        .collect();
    super::appendix::with_section(json, analysis, &text, "terminations", value)
}

/// Which of the analysis's tests count the mask at `place`, and in what, if any: on a
/// partitioned core, SPR's Eq. 1 for reservation servers, the EDF demand test for CBS
/// servers, the masked response bounds for VBS processes, and the classic tests (blocking
/// under fixed priority, demand under EDF).
fn counted(scenario: &Scenario, place: Masked) -> Option<(&'static str, &'static str)> {
    let core = match place {
        Masked::Core(core) => core,
        // A cluster's test counts them when one ran (the response-time analysis, or the
        // interference test under EDF).
        Masked::Cluster(index) => {
            let counted = bulwark_analysis::cluster::analyse(scenario)
                .get(index)
                .is_some_and(|cluster| !cluster.masks.is_empty());
            return counted.then_some((
                "the cluster's test above counts",
                "every reservation's interference, one core at a time",
            ));
        }
    };
    if scenario.clusters.iter().any(|c| c.cores.contains(&core)) {
        return None;
    }
    let policy = scenario.policy_of(core);
    if super::server_kind(policy).is_some() {
        Some(("the response bounds above count", "every reservation's"))
    } else if matches!(policy, PolicyKind::Cbs | PolicyKind::HardCbs) {
        Some(("the admission above counts", "the CBS servers' EDF demand"))
    } else if policy == PolicyKind::FixedPriority {
        Some((
            "the response bounds above count",
            "every analysed task's blocking B",
        ))
    } else if policy == PolicyKind::Edf {
        Some(("the EDF demand test above counts", "the demand"))
    } else if policy == PolicyKind::Vbs {
        Some((
            "the \"bound with mask\" column above counts",
            "every action's bound",
        ))
    } else {
        None
    }
}
