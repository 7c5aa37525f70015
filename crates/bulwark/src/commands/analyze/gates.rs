//! The per-request budget bounds at a scenario's server gates ([`bulwark_analysis::gates`]),
//! after whatever the scenario's cores and clusters get: a section per server in text, a
//! `servers` array in `--json`. They inform; they do not change the exit code.

use std::process::ExitCode;

use bulwark_analysis::gates::{self, GateBounds};
use bulwark_spec::Scenario;
use serde_json::{json, Value};

use crate::table;

/// Runs `analysis` (which prints the rest of the analysis) and adds the gate bounds when the
/// scenario has servers; its exit code stands.
pub(super) fn with_gate_bounds(
    scenario: &Scenario,
    json: bool,
    analysis: impl FnOnce() -> Result<ExitCode, String>,
) -> Result<ExitCode, String> {
    if scenario.servers.is_empty() {
        return analysis();
    }
    let bounds = gates::analyse(scenario);
    let text: String = bounds.iter().map(|b| format!("\n{}", to_text(b))).collect();
    let value = bounds.iter().map(to_json).collect();
    super::appendix::with_section(json, analysis, &text, "servers", value)
}

fn to_text(server: &GateBounds) -> String {
    let operation = server
        .operation
        .map_or_else(|| "unknown".to_owned(), |l| l.to_string());
    let mut text = format!(
        "== server {} ({} gate, L = {operation}, K = {}): budget one request drains, {} ==\n",
        server.server,
        server.gate.name(),
        server.clusters,
        gates::formula(server.gate)
    );
    let rows: Vec<Vec<String>> = server
        .clients
        .iter()
        .map(|client| {
            vec![
                client.name.clone(),
                client.cores.to_string(),
                client
                    .bound
                    .as_ref()
                    .map_or_else(|_| "-".to_owned(), |bound| bound.to_string()),
            ]
        })
        .collect();
    text.push_str(&table::render(&["client", "m", "bound"], &rows));
    // The reasons, once each.
    let mut reasons: Vec<&str> = Vec::new();
    for client in &server.clients {
        if let Err(reason) = &client.bound {
            if !reasons.contains(&reason.as_str()) {
                reasons.push(reason);
            }
        }
    }
    for reason in reasons {
        text.push_str(&format!("  {reason}\n"));
    }
    text
}

fn to_json(server: &GateBounds) -> Value {
    let clients: Vec<Value> = server
        .clients
        .iter()
        .map(|client| {
            json!({
                "name": client.name,
                "cores": client.cores,
                "bound_ns": client.bound.as_ref().ok().map(|bound| bound.as_nanos()),
                "why_none": client.bound.as_ref().err(),
            })
        })
        .collect();
    json!({
        "name": server.server,
        "gate": server.gate.name(),
        "operation_ns": server.operation.map(|l| l.as_nanos()),
        "clusters": server.clusters,
        "rule": gates::formula(server.gate),
        "clients": clients,
    })
}
