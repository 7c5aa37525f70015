//! The masks of a scenario's terminations ([`bulwark_analysis::reclamation`]), after the
//! rest of its analysis: a table in text, a `terminations` array in `--json`. The per-core
//! and per-cluster tests above leave the mask out; a note says which places it touches.

use std::process::ExitCode;

use bulwark_analysis::reclamation::{masks_by_place, scenario_terminations};
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
        tasks: scenario.tasks.iter().map(|t| t.name.as_str()).collect(),
        groups: scenario.groups.iter().map(|g| g.name.as_str()).collect(),
        clusters: scenario.clusters.iter().map(|c| c.name.as_str()).collect(),
    };
    let mut text = format!("\n{}", masks::table(&terminations, &names));
    for (place, mask) in masks_by_place(&terminations) {
        text.push_str(&format!(
            "note: {}: the tests above leave out this mask ({}): every task there may wait \
             that long, as behind a non-preemptive section, and a time partition may lose that \
             much of its slots\n",
            masks::place(place, &names),
            masks::bound_text(mask)
        ));
    }
    let value: Value = terminations
        .iter()
        .map(|t| masks::to_json(t, &names))
        .collect();
    super::appendix::with_section(json, analysis, &text, "terminations", value)
}
