//! The terminations of a system and how long each can mask a core
//! ([`bulwark_analysis::reclamation`]), as `analyze` prints them for every file kind: a
//! table under the analysis, and one JSON object per termination.

use bulwark_analysis::reclamation::{Masked, Reclaimed, Termination};
use bulwark_core::Duration;
use serde_json::{json, Value};

use crate::table;

/// The names a termination's indices stand for.
pub struct Names<'a> {
    /// The tasks', then (in an MC-IPC system) its phases' terminating additions'
    /// ([`bulwark_analysis::reclamation::added_terminators`]).
    pub tasks: Vec<String>,
    pub groups: Vec<&'a str>,
    pub clusters: Vec<&'a str>,
}

/// A mask for a table: its length, or "unbounded".
pub fn mask_text(mask: Option<Duration>) -> String {
    mask.map_or_else(|| "unbounded".into(), |mask| mask.to_string())
}

/// A mask for a note: "at most" its length, or "without bound".
pub fn bound_text(mask: Option<Duration>) -> String {
    mask.map_or_else(|| "without bound".into(), |mask| format!("at most {mask}"))
}

/// Where a termination runs: its cluster's name, or "core N".
pub fn place(masked: Masked, names: &Names) -> String {
    match masked {
        Masked::Cluster(cluster) => names.clusters[cluster].to_owned(),
        Masked::Core(core) => format!("core {core}"),
    }
}

/// The terminations' table, with the rule it applies as its heading.
pub fn table(terminations: &[Termination], names: &Names) -> String {
    let rows: Vec<Vec<String>> = terminations
        .iter()
        .map(|t| {
            vec![
                names.tasks[t.terminator].clone(),
                names.tasks[t.target].clone(),
                place(t.masked, names),
                reclaimed_text(&t.reclaimed, names),
                mask_text(t.mask),
                t.first_mask.to_string(),
            ]
        })
        .collect();
    let mut out = String::from(
        "terminations: each masks its caller's core (a core of its cluster), a group at most its\n\
         quota, a process in no group every object it allocated, one by one (without bound\n\
         once it allocates again in a new job or an endless loop; `first` is what it\n\
         allocates before that):\n",
    );
    out.push_str(&table::render(
        &["terminator", "target", "masks", "reclaims", "mask", "first"],
        &rows,
    ));
    out
}

/// What a termination reclaims, for a table.
fn reclaimed_text(reclaimed: &Reclaimed, names: &Names) -> String {
    match reclaimed {
        Reclaimed::Group { group, quota } => {
            format!("group `{}` (quota {quota})", names.groups[*group])
        }
        Reclaimed::Process { objects, repeats } => format!(
            "its process, {objects} object(s){}, one by one",
            if *repeats { " and more" } else { "" }
        ),
    }
}

/// One termination in `--json`.
pub fn to_json(t: &Termination, names: &Names) -> Value {
    let (cluster, core) = match t.masked {
        Masked::Cluster(cluster) => (Some(names.clusters[cluster]), None),
        Masked::Core(core) => (None, Some(core)),
    };
    let (group, quota, objects, repeats) = match &t.reclaimed {
        Reclaimed::Group { group, quota } => (
            Some(names.groups[*group]),
            Some(quota.as_nanos()),
            None,
            None,
        ),
        Reclaimed::Process { objects, repeats } => (None, None, Some(*objects), Some(*repeats)),
    };
    json!({
        "terminator": names.tasks[t.terminator],
        "target": names.tasks[t.target],
        "cluster": cluster,
        "core": core,
        "group": group,
        "quota_ns": quota,
        "objects": objects,
        "repeats": repeats,
        "mask_ns": t.mask.map(|m| m.as_nanos()),
        "first_mask_ns": t.first_mask.as_nanos(),
    })
}
