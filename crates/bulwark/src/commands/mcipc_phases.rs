//! `bulwark analyze` on an MC-IPC system with phases: each phase's per-invocation bounds
//! (`bulwark_analysis::mc_ipc_phases`), the text listing those that differ from the system's
//! own, the JSON every one; and whether each reservation's supply covers the budget the
//! file's protocol needs in each phase.

use bulwark_analysis::mc_ipc::{GateProtocol, McIpcBounds};
use bulwark_analysis::mc_ipc_phases::{PhaseBounds, PhaseClientBounds, PhaseServerBounds};
use bulwark_core::Duration;
use serde_json::{json, Value};

use crate::table;

/// A PRIO-IPC bound as printed: `none` where a flood leaves it without bound.
fn prio_text(bound: Option<Duration>) -> String {
    bound.map_or_else(|| "none".to_string(), |bound| bound.to_string())
}

/// Whether `client` (whose reservation supplies `supply`) is short of the budget `protocol`
/// needs in its phase: a bound that is none leaves it short.
fn short(client: &PhaseClientBounds, protocol: GateProtocol, supply: Duration) -> bool {
    client.budget(protocol).is_none_or(|budget| supply < budget)
}

/// Whether a reservation is short in some phase; `supplies` per reservation.
pub fn any_short(phases: &[PhaseBounds], protocol: GateProtocol, supplies: &[Duration]) -> bool {
    (phases.iter()).any(|phase| {
        (phase.clients.iter().zip(supplies))
            .any(|(client, &supply)| short(client, protocol, supply))
    })
}

/// The section under the budget table: the bounds each phase changes (or a line saying no
/// phase changes any), then the reservations each phase leaves short of the budget the
/// system's protocol needs. Empty without phases.
pub fn render(
    system_bounds: &McIpcBounds,
    phases: &[PhaseBounds],
    supplies: &[Duration],
) -> String {
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
         phase's added tasks as clients (PRIO-IPC none: two or more that can precede flood)\n",
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
    out.push_str(&render_verdicts(system_bounds.protocol, phases, supplies));
    out
}

/// The reservations each phase leaves short of the budget `protocol` needs with its bounds.
fn render_verdicts(
    protocol: GateProtocol,
    phases: &[PhaseBounds],
    supplies: &[Duration],
) -> String {
    let mut rows = Vec::new();
    for (number, phase) in (1..).zip(phases) {
        for (client, &supply) in phase.clients.iter().zip(supplies) {
            if short(client, protocol, supply) {
                rows.push(vec![
                    number.to_string(),
                    client.client.clone(),
                    (client.budget(protocol)).map_or_else(|| "no bound".into(), |b| b.to_string()),
                    supply.to_string(),
                ]);
            }
        }
    }
    let label = protocol.label();
    if rows.is_empty() {
        return format!(
            "\nbudgets sized for {label} with each phase's bounds: every reservation's supply \
             is enough in every phase\n"
        );
    }
    format!(
        "\nbudgets sized for {label} with each phase's bounds: too small (exit 1)\n{}",
        table::render(&["phase", "reservation", "needs", "supplies"], &rows)
    )
}

/// Every phase's bounds, and each reservation's budget under `protocol` with them, for
/// `--json`'s `phases` list.
pub fn to_json(phases: &[PhaseBounds], protocol: GateProtocol, supplies: &[Duration]) -> Value {
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
            let reservations: Vec<Value> = (phase.clients.iter().zip(supplies))
                .map(|(client, &supply)| {
                    json!({
                        "reservation": client.client,
                        "servers": client.servers.iter().map(server).collect::<Vec<_>>(),
                        "budget_ns": client.budget(protocol).map(|b| b.as_nanos()),
                        "enough": !short(client, protocol, supply),
                    })
                })
                .collect();
            json!({ "phase": phase.phase, "reservations": reservations })
        })
        .collect()
}
