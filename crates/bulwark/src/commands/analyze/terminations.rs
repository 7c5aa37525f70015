//! The masks of a scenario's terminations ([`bulwark_analysis::reclamation`]), after the
//! rest of its analysis: a table in text, a `terminations` array in `--json`. A partitioned
//! core's SPR Eq. 1 counts its mask (`admission::response_times_masked`); the other tests
//! leave it out. A note per place says which.

use std::process::ExitCode;

use bulwark_analysis::reclamation::{masks_by_place, scenario_terminations, Masked};
use bulwark_spec::Scenario;
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
        text.push_str(&if counted(scenario, place) {
            format!(
                "note: {place_name}: the response bounds above count this mask ({bound}) in \
                 every reservation's, as time nothing else runs\n"
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

/// Whether the analysis above counts the mask at `place`: a partitioned core whose policy's
/// servers SPR's Eq. 1 admits.
fn counted(scenario: &Scenario, place: Masked) -> bool {
    match place {
        Masked::Core(core) => {
            scenario.clusters.iter().all(|c| !c.cores.contains(&core))
                && super::server_kind(scenario.policy_of(core)).is_some()
        }
        Masked::Cluster(_) => false,
    }
}
