//! `bulwark analyze` on an MC-IPC system (TOML with `[[cluster]]`, `[[server]]` and
//! `[[reservation]]` tables): per reservation and server, the per-invocation bounds of
//! MC-IPC (Theorem 1), FIFO-IPC and PRIO-IPC, and the budgets sized from them; with
//! `terminate` steps, how long each cluster's cores can be masked, which a time partition's
//! slots lose.

use std::path::Path;
use std::process::ExitCode;

use bulwark_analysis::mc_ipc::{analyse, GateProtocol, McIpcBounds};
use bulwark_analysis::mc_ipc_phases::{analyse_phases, PhaseBounds};
use bulwark_analysis::reclamation::{
    added_terminators, cluster_masks, partition_supply, terminations, Termination,
};
use bulwark_core::Duration;
use bulwark_spec::mc_ipc_toml::{McIpcSystem, ReservationKind};
use bulwark_spec::FileKind;
use serde_json::{json, Value};

use super::masks::{self, mask_text, Names};
use super::mcipc_phases;
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

/// What the analysis found: the bounds, each phase's, the terminations and each cluster's
/// mask.
struct Analysis {
    bounds: McIpcBounds,
    phases: Vec<PhaseBounds>,
    terminations: Vec<Termination>,
    /// The longest a core of each cluster can be masked (`None`: unbounded).
    masks: Vec<Option<Duration>>,
    /// Per reservation: what it supplies per cycle or period, less what a mask takes.
    supplies: Vec<Duration>,
    /// Per reservation: it provisions less than its sized budget.
    short: Vec<bool>,
}

impl Analysis {
    fn of(system: &McIpcSystem) -> Result<Analysis, String> {
        let sizing = system.protocol.unwrap_or(GateProtocol::McIpc);
        let bounds = analyse(system, sizing).map_err(|e| format!("{e:?}"))?;
        let phases = analyse_phases(system).map_err(|e| format!("{e:?}"))?;
        let terminations = terminations(system);
        let masks = cluster_masks(system.clusters.len(), &terminations);
        let supplies: Vec<Duration> = (system.reservations.iter())
            .map(|r| match r.kind {
                // A partition keeps its slots less what a termination can mask of them; a
                // budget is not drained by the mask.
                ReservationKind::TableDriven { .. } => {
                    partition_supply(provisioned(&r.kind), mask_of(&masks, r.cluster))
                }
                ReservationKind::Sporadic { .. } => provisioned(&r.kind),
            })
            .collect();
        let short = (supplies.iter().zip(&bounds.clients))
            .map(|(supply, b)| *supply < b.provisioned_budget())
            .collect();
        Ok(Analysis {
            bounds,
            phases,
            terminations,
            masks,
            supplies,
            short,
        })
    }
}

/// The mask of cluster `cluster` (an index the system validated).
fn mask_of(masks: &[Option<Duration>], cluster: usize) -> Option<Duration> {
    masks.get(cluster).copied().flatten()
}

/// Prints the bounds; exit 1 when a reservation provisions less than its sized budget, in the
/// system or in one of its phases.
pub fn analyze(system: &McIpcSystem, json: bool) -> Result<ExitCode, String> {
    let analysis = Analysis::of(system)?;
    if json {
        outln!("{:#}", to_json(system, &analysis));
    } else {
        out!("{}", render(system, &analysis));
    }
    let protocol = analysis.bounds.protocol;
    let phase_short = mcipc_phases::any_short(&analysis.phases, protocol, &analysis.supplies);
    Ok(if analysis.short.iter().any(|s| *s) || phase_short {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn render(system: &McIpcSystem, analysis: &Analysis) -> String {
    let bounds = &analysis.bounds;
    let masked = !analysis.terminations.is_empty();
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
        .zip(&analysis.short)
        .map(|((r, b), &short)| {
            let mut row = vec![
                b.client.clone(),
                b.budgets.low.to_string(),
                b.budgets.high.to_string(),
                provisioned(&r.kind).to_string(),
            ];
            if masked {
                row.push(mask_text(mask_of(&analysis.masks, r.cluster)));
            }
            row.push(if short { "too small" } else { "enough" }.to_string());
            row
        })
        .collect();
    out.push_str(&format!(
        "\nbudgets sized for {} (e_i + sum_q N_iq x bound; section VII's low and high levels):\n",
        bounds.protocol.label()
    ));
    let mut header = vec!["reservation", "low", "high", "provisioned"];
    if masked {
        header.push("masked");
    }
    header.push("verdict");
    out.push_str(&table::render(&header, &rows));
    out.push_str(&mcipc_phases::render(
        bounds,
        &analysis.phases,
        &analysis.supplies,
        &cluster_names(system),
    ));
    if masked {
        out.push_str(&render_terminations(system, analysis));
    }
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

fn to_json(system: &McIpcSystem, analysis: &Analysis) -> Value {
    let bounds = &analysis.bounds;
    let reservations: Vec<Value> = system
        .reservations
        .iter()
        .zip(&bounds.clients)
        .zip(&analysis.short)
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
                "masked_ns": mask_of(&analysis.masks, r.cluster).map(|m| m.as_nanos()),
                "enough": !short,
            })
        })
        .collect();
    let names = names(system);
    let terminations: Vec<Value> = (analysis.terminations.iter())
        .map(|t| masks::to_json(t, &names))
        .collect();
    json!({
        "protocol": bounds.protocol.label(),
        "reservations": reservations,
        "terminations": terminations,
        "phases": mcipc_phases::to_json(
            &analysis.phases,
            bounds.protocol,
            &analysis.supplies,
            &cluster_names(system),
        ),
        "costs_not_in_bounds": uncounted_costs(system),
    })
}

/// The system's cluster names, by index.
fn cluster_names(system: &McIpcSystem) -> Vec<String> {
    system.clusters.iter().map(|c| c.name.clone()).collect()
}

/// The names the terminations' indices stand for.
fn names(system: &McIpcSystem) -> Names<'_> {
    // A phase's terminating addition is named for its phase and its place there.
    let added = added_terminators(system)
        .into_iter()
        .map(|(phase, addition)| {
            format!("{}'s addition {}", system.phases[phase].name, addition + 1)
        });
    Names {
        tasks: system
            .tasks
            .iter()
            .map(|t| t.name.clone())
            .chain(added)
            .collect(),
        groups: system.groups.iter().map(|g| g.name.as_str()).collect(),
        clusters: system.clusters.iter().map(|c| c.name.as_str()).collect(),
    }
}

/// The terminations and each cluster's mask, under the budget table.
fn render_terminations(system: &McIpcSystem, analysis: &Analysis) -> String {
    let mut out = format!("\n{}", masks::table(&analysis.terminations, &names(system)));
    out.push_str("a partition keeps its slots less its cluster's mask (the masked column)\n");
    for (cluster, mask) in system.clusters.iter().zip(&analysis.masks) {
        if mask != &Some(Duration::ZERO) {
            out.push_str(&format!(
                "note: cluster {}: its budgeted reservations lose no budget to the mask ({}) but \
                 wait for it, which budget sizing does not cover\n",
                cluster.name,
                masks::bound_text(*mask)
            ));
        }
    }
    out
}
