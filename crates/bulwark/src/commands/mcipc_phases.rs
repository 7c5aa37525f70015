//! `bulwark analyze` on an MC-IPC system with phases: each phase's per-invocation bounds
//! (`bulwark_analysis::mc_ipc_phases`), the text listing those that differ from the system's
//! own, the JSON every one; and whether each reservation's supply covers the budget the
//! file's protocol needs in each phase. The new sporadic reservations a phase adds are listed
//! too, one row per addition and cluster, each copy's budget its supply.

use bulwark_analysis::mc_ipc::{GateProtocol, McIpcBounds};
use bulwark_analysis::mc_ipc_phases::{
    AddedClientBounds, PhaseBounds, PhaseClientBounds, PhaseServerBounds,
};
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

/// Every client of `phase` with its supply: the system's reservations (`supplies` per
/// reservation), then the phase's new reservations, each copy's budget.
fn with_supplies<'p>(
    phase: &'p PhaseBounds,
    supplies: &'p [Duration],
) -> impl Iterator<Item = (&'p PhaseClientBounds, Duration)> {
    let own = phase.clients.iter().zip(supplies.iter().copied());
    own.chain(
        phase
            .added
            .iter()
            .map(|added| (&added.bounds, added.budget)),
    )
}

/// Whether a reservation, or a phase's new one, is short in some phase; `supplies` per
/// reservation.
pub fn any_short(phases: &[PhaseBounds], protocol: GateProtocol, supplies: &[Duration]) -> bool {
    (phases.iter()).any(|phase| {
        with_supplies(phase, supplies).any(|(client, supply)| short(client, protocol, supply))
    })
}

/// A reservation's name, with the jobs per period of the tasks a phase adds into it when
/// there are any: `R4 (+15 added jobs)`.
fn own_name(client: &PhaseClientBounds) -> String {
    let added = client.added_jobs();
    if added == 0 {
        client.client.clone()
    } else {
        format!("{} (+{added} added jobs)", client.client)
    }
}

/// How a phase's new reservations are named: `addition K on C (N copies)`.
fn added_name(added: &AddedClientBounds, clusters: &[String]) -> String {
    let cluster = clusters.get(added.cluster).map_or("?", String::as_str);
    format!(
        "addition {} on {cluster} ({} copies)",
        added.addition + 1,
        added.copies
    )
}

/// The section under the budget table: the bounds each phase changes (or a line saying no
/// phase changes any), the phases' new reservations' bounds, then the reservations each
/// phase leaves short of the budget the system's protocol needs. Empty without phases.
/// `clusters` are the system's cluster names.
pub fn render(
    system_bounds: &McIpcBounds,
    phases: &[PhaseBounds],
    supplies: &[Duration],
    clusters: &[String],
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
    out.push_str(&render_added(phases, clusters));
    out.push_str(&render_verdicts(
        system_bounds.protocol,
        phases,
        supplies,
        clusters,
    ));
    out
}

/// The bounds of each copy of the phases' new reservations, and its budget; empty when no
/// phase adds one.
fn render_added(phases: &[PhaseBounds], clusters: &[String]) -> String {
    let mut rows = Vec::new();
    for (number, phase) in (1..).zip(phases) {
        for added in &phase.added {
            for bounds in &added.bounds.servers {
                rows.push(vec![
                    number.to_string(),
                    added_name(added, clusters),
                    added.budget.to_string(),
                    bounds.server.clone(),
                    bounds.mc_ipc.to_string(),
                    bounds.fifo_ipc.to_string(),
                    prio_text(bounds.prio_ipc),
                ]);
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "
the phases' new reservations as clients, one copy each (the others are its rivals):
{}",
        table::render(
            &[
                "phase",
                "reservation",
                "budget",
                "server",
                "MC-IPC",
                "FIFO-IPC",
                "PRIO-IPC",
            ],
            &rows,
        )
    )
}

/// The reservations each phase leaves short of the budget `protocol` needs with its bounds.
fn render_verdicts(
    protocol: GateProtocol,
    phases: &[PhaseBounds],
    supplies: &[Duration],
    clusters: &[String],
) -> String {
    let mut rows = Vec::new();
    for (number, phase) in (1..).zip(phases) {
        let names = (phase.clients.iter().map(own_name))
            .chain(phase.added.iter().map(|added| added_name(added, clusters)));
        for ((client, supply), name) in with_supplies(phase, supplies).zip(names) {
            if short(client, protocol, supply) {
                rows.push(vec![
                    number.to_string(),
                    name,
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
/// `--json`'s `phases` list; `clusters` are the system's cluster names.
pub fn to_json(
    phases: &[PhaseBounds],
    protocol: GateProtocol,
    supplies: &[Duration],
    clusters: &[String],
) -> Value {
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
                        "added_jobs": client.added_jobs(),
                        "budget_ns": client.budget(protocol).map(|b| b.as_nanos()),
                        "enough": !short(client, protocol, supply),
                    })
                })
                .collect();
            let added: Vec<Value> = (phase.added.iter())
                .map(|added| {
                    let client = &added.bounds;
                    json!({
                        "addition": added.addition + 1,
                        "cluster": clusters.get(added.cluster),
                        "copies": added.copies,
                        "servers": client.servers.iter().map(server).collect::<Vec<_>>(),
                        "budget_ns": client.budget(protocol).map(|b| b.as_nanos()),
                        "provisioned_ns": added.budget.as_nanos(),
                        "enough": !short(client, protocol, added.budget),
                    })
                })
                .collect();
            json!({ "phase": phase.phase, "reservations": reservations, "added": added })
        })
        .collect()
}
