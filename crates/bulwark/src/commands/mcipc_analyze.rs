//! `bulwark analyze` on an MC-IPC system (TOML with `[[cluster]]`, `[[server]]` and
//! `[[reservation]]` tables): per reservation and server, the per-invocation bounds of
//! MC-IPC (Theorem 1), FIFO-IPC and PRIO-IPC, and the budgets sized from them.

use std::path::Path;
use std::process::ExitCode;

use bulwark_analysis::mc_ipc::{analyse, GateProtocol, McIpcBounds};
use bulwark_core::Duration;
use bulwark_spec::mc_ipc_toml::{McIpcSystem, ReservationKind};
use bulwark_spec::FileKind;
use serde_json::{json, Value};

use crate::output::{out, outln};
use crate::table;

/// The MC-IPC system in `file`, if it is one (TOML whose top-level keys are an MC-IPC
/// system's): `None` for another kind, an error for a file that cannot be read or mixes kinds.
pub fn load(file: &Path) -> Option<Result<McIpcSystem, bulwark_spec::Diagnostics>> {
    match bulwark_spec::system::read_kind(file) {
        Ok((FileKind::McIpc, Some(text))) => Some(bulwark_spec::parse_mc_ipc(
            &text,
            &file.display().to_string(),
        )),
        Ok(_) => None,
        Err(d) => Some(Err(d)),
    }
}

/// What the file provisions for a reservation per cycle or period: a sporadic budget, or the
/// total length of a partition's slots.
fn provisioned(kind: &ReservationKind) -> Duration {
    match kind {
        ReservationKind::Sporadic { budget, .. } => *budget,
        ReservationKind::TableDriven { slots } => slots.iter().fold(Duration::ZERO, |sum, s| {
            sum.saturating_add(s.end.saturating_sub(s.start))
        }),
    }
}

/// Prints the bounds; exit 1 when a reservation provisions less than its sized budget.
pub fn analyze(system: &McIpcSystem, json: bool) -> Result<ExitCode, String> {
    let sizing = system.protocol.unwrap_or(GateProtocol::McIpc);
    let bounds = analyse(system, sizing).map_err(|e| format!("{e:?}"))?;
    let short: Vec<bool> = system
        .reservations
        .iter()
        .zip(&bounds.clients)
        .map(|(r, b)| provisioned(&r.kind) < b.provisioned_budget())
        .collect();
    if json {
        outln!("{:#}", to_json(system, &bounds, &short));
    } else {
        out!("{}", render(system, &bounds, &short));
    }
    Ok(if short.iter().any(|s| *s) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn render(system: &McIpcSystem, bounds: &McIpcBounds, short: &[bool]) -> String {
    let mut rows = Vec::new();
    for (r, b) in system.reservations.iter().zip(&bounds.clients) {
        for s in &b.servers {
            rows.push(vec![
                b.client.clone(),
                b.cluster.clone(),
                format!("{:?}", b.criticality).to_lowercase(),
                s.server.clone(),
                s.invocations.to_string(),
                s.operation_length.to_string(),
                s.mc_ipc.to_string(),
                s.fifo_ipc.to_string(),
                s.prio_ipc.to_string(),
            ]);
        }
        if b.servers.is_empty() {
            rows.push(vec![
                b.client.clone(),
                b.cluster.clone(),
                format!("{:?}", r.criticality).to_lowercase(),
                "-".into(),
                "0".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
    }
    let mut out = String::from(
        "per invocation: the budget one invocation may drain (MC-IPC: Theorem 1, (1 + 2 m_k K) \
         L_q; FIFO-IPC: n L_q; PRIO-IPC: (h + 1 + b) L_q)\n",
    );
    out.push_str(&table::render(
        &[
            "reservation",
            "cluster",
            "crit",
            "server",
            "N",
            "L",
            "MC-IPC",
            "FIFO-IPC",
            "PRIO-IPC",
        ],
        &rows,
    ));
    let rows: Vec<Vec<String>> = system
        .reservations
        .iter()
        .zip(&bounds.clients)
        .zip(short)
        .map(|((r, b), &short)| {
            vec![
                b.client.clone(),
                b.budgets.low.to_string(),
                b.budgets.high.to_string(),
                provisioned(&r.kind).to_string(),
                if short { "too small" } else { "enough" }.to_string(),
            ]
        })
        .collect();
    out.push_str(&format!(
        "\nbudgets sized for {} (e_i + sum_q N_iq x bound; section VII's low and high levels):\n",
        bounds.protocol.label()
    ));
    out.push_str(&table::render(
        &["reservation", "low", "high", "provisioned", "verdict"],
        &rows,
    ));
    for cost in uncounted_costs(system) {
        out.push_str(&format!(
            "\nnote: the bounds take each operation length L_q as written; the file's `{cost}` \
             cost, which the simulator charges, is not in them: include it in L_q to bound it\n"
        ));
    }
    out
}

/// The costs of the file's `[cost]` table that the simulator charges and the bounds leave
/// out.
fn uncounted_costs(system: &McIpcSystem) -> Vec<&'static str> {
    super::uncounted::context_switch(system.cost.context_switch > 0)
}

fn to_json(system: &McIpcSystem, bounds: &McIpcBounds, short: &[bool]) -> Value {
    let reservations: Vec<Value> = system
        .reservations
        .iter()
        .zip(&bounds.clients)
        .zip(short)
        .map(|((r, b), &short)| {
            let servers: Vec<Value> = b
                .servers
                .iter()
                .map(|s| {
                    json!({
                        "server": s.server,
                        "invocations": s.invocations,
                        "operation_length_ns": s.operation_length.as_nanos(),
                        "mc_ipc_ns": s.mc_ipc.as_nanos(),
                        "fifo_ipc_ns": s.fifo_ipc.as_nanos(),
                        "prio_ipc_ns": s.prio_ipc.as_nanos(),
                    })
                })
                .collect();
            json!({
                "reservation": b.client,
                "cluster": b.cluster,
                "criticality": format!("{:?}", b.criticality).to_lowercase(),
                "servers": servers,
                "budget_low_ns": b.budgets.low.as_nanos(),
                "budget_high_ns": b.budgets.high.as_nanos(),
                "provisioned_ns": provisioned(&r.kind).as_nanos(),
                "enough": !short,
            })
        })
        .collect();
    json!({
        "protocol": bounds.protocol.label(),
        "reservations": reservations,
        "costs_not_in_bounds": uncounted_costs(system),
    })
}
