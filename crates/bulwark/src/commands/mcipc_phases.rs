//! `bulwark analyze` on an MC-IPC system with phases: each phase's per-invocation bounds
//! (`bulwark_analysis::mc_ipc_phases`), the text listing those that differ from the system's
//! own, the JSON every one.

use bulwark_analysis::mc_ipc::McIpcBounds;
use bulwark_analysis::mc_ipc_phases::{PhaseBounds, PhaseServerBounds};
use bulwark_core::Duration;
use serde_json::{json, Value};

use crate::table;

/// A PRIO-IPC bound as printed: `none` where a flood leaves it without bound.
fn prio_text(bound: Option<Duration>) -> String {
    bound.map_or_else(|| "none".to_string(), |bound| bound.to_string())
}

/// The section under the budget table: the bounds each phase changes, or a line saying no
/// phase changes any. Empty without phases.
pub fn render(system_bounds: &McIpcBounds, phases: &[PhaseBounds]) -> String {
    if phases.is_empty() {
        return String::new();
    }
    let mut rows = Vec::new();
    for (number, phase) in (1..).zip(phases) {
        for (own, client) in system_bounds.clients.iter().zip(&phase.clients) {
            for (own, bounds) in own.servers.iter().zip(&client.servers) {
                let same = (own.mc_ipc, own.fifo_ipc, Some(own.prio_ipc))
                    == (bounds.mc_ipc, bounds.fifo_ipc, bounds.prio_ipc);
                if !same {
                    rows.push(vec![
                        number.to_string(),
                        client.client.clone(),
                        bounds.server.clone(),
                        bounds.mc_ipc.to_string(),
                        bounds.fifo_ipc.to_string(),
                        prio_text(bounds.prio_ipc),
                    ]);
                }
            }
        }
    }
    let mut out = String::from(
        "\nper phase: the per-invocation bounds that differ from the first table, with the \
         phase's added tasks as clients (PRIO-IPC none: a client that can precede floods)\n",
    );
    for (number, phase) in (1..).zip(phases) {
        out.push_str(&format!("phase {number}: {}\n", phase.phase));
    }
    if rows.is_empty() {
        out.push_str("no phase changes any bound\n");
    } else {
        out.push_str(&table::render(
            &[
                "phase",
                "reservation",
                "server",
                "MC-IPC",
                "FIFO-IPC",
                "PRIO-IPC",
            ],
            &rows,
        ));
    }
    out
}

/// Every phase's bounds, for `--json`'s `phases` list.
pub fn to_json(phases: &[PhaseBounds]) -> Value {
    let server = |bounds: &PhaseServerBounds| {
        json!({
            "server": bounds.server,
            "mc_ipc_ns": bounds.mc_ipc.as_nanos(),
            "fifo_ipc_ns": bounds.fifo_ipc.as_nanos(),
            "prio_ipc_ns": bounds.prio_ipc.map(|bound| bound.as_nanos()),
        })
    };
    (phases.iter())
        .map(|phase| {
            let reservations: Vec<Value> = (phase.clients.iter())
                .map(|client| {
                    json!({
                        "reservation": client.client,
                        "servers": client.servers.iter().map(server).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({ "phase": phase.phase, "reservations": reservations })
        })
        .collect()
}
