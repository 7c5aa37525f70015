//! One loader for every Bulwark file: a scenario, a component system, an MC-IPC system or a
//! sweep experiment, told apart by the document's top-level keys rather than by searching
//! its text for header lines.
//!
//! A TOML file is parsed once as a plain document; each top-level key that belongs to one
//! file kind only (`policy` to a scenario, `component` to a component system, `protocol` to
//! an MC-IPC system, `generator` to a sweep, ...) names the kind. Keys more than one kind may
//! have (`name`, `seed`, `task`, `cost`, `group`, `server`, `cluster`, ...) decide nothing. A
//! file whose keys name two kinds is refused at the first key of the second kind, since no
//! loader would read all of it; the one exception is a scenario with a component system
//! beside its tasks: with scenario keys, `component` and `connection` are the scenario's
//! ([`ComponentPart`](crate::ComponentPart)). A file whose keys name none is read by its content when it
//! has `[[cluster]]` tables: as an MC-IPC system when the first cluster's `cores` is a count
//! (`cores = 2`, an MC-IPC cluster's `m`), as a scenario when it is an array of core ids
//! (`cores = [1, 2]`, a scenario's cluster), and as an MC-IPC system when it is anything else
//! or missing, whose validator then says what is wrong (`cluster` was an MC-IPC key before
//! scenarios had clusters). Any other file whose keys name no kind is read as a scenario,
//! whose validator then says what is missing. A `.camkes` file is CAmkES ADL, not TOML, and
//! is a component system by its extension.
//!
//! A header written any way TOML allows (`[[ component ]]`, `[["component"]]`,
//! `component = [{ ... }]`) is found, and a `[[component]]` inside a string is not.

use std::ops::Range;
use std::path::Path;

use crate::component::LocatedSystem;
use crate::diagnostic::{Diagnostics, Source};
use crate::mc_ipc_toml::McIpcSystem;
use crate::sweep_toml::Experiment;
use crate::{Scenario, SpecError};

/// What a file describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A scenario: tasks on cores under a policy (`bulwark simulate`, `analyze`, `run`).
    Scenario,
    /// A component system: components, CPIs and connections (CAmkES ADL or TOML).
    Components,
    /// An MC-IPC system: clusters, servers, reservations and phases.
    McIpc,
    /// A schedulability sweep experiment (`bulwark sweep`).
    Sweep,
}

impl FileKind {
    /// The kind's name in messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Scenario => "a scenario",
            FileKind::Components => "a component system",
            FileKind::McIpc => "an MC-IPC system",
            FileKind::Sweep => "a sweep experiment",
        }
    }
}

/// The top-level keys that belong to one kind only, as written in files. `server` and
/// `cluster` are shared: scenarios and MC-IPC systems both have servers and clusters.
const OWN_KEYS: [(FileKind, &[&str]); 4] = [
    (
        FileKind::Scenario,
        &[
            "policy",
            "duration",
            "cores",
            "vbs",
            "core",
            "component-core",
        ],
    ),
    (FileKind::Components, &["component", "connection"]),
    (
        FileKind::McIpc,
        &["reservation", "phase", "protocol", "cycle", "flood-gap"],
    ),
    (
        FileKind::Sweep,
        &[
            "sets-per-point",
            "generator",
            "tasks",
            "tests",
            "periods",
            "utilisation",
            "deadlines",
            "simulate",
            "non-preemptive",
        ],
    ),
];

/// The kind a top-level key names, if it names one.
fn kind_of_key(key: &str) -> Option<FileKind> {
    OWN_KEYS
        .iter()
        .find(|(_, keys)| keys.contains(&key))
        .map(|(kind, _)| *kind)
}

/// The kind of the TOML document `text`, named `file` in diagnostics. A text that is not TOML
/// is a scenario here: the scenario loader then reports where the syntax breaks.
pub fn kind_of(text: &str, file: &str) -> Result<FileKind, Diagnostics> {
    let Ok(document) = toml::de::DeTable::parse(text) else {
        return Ok(FileKind::Scenario);
    };
    // (kind, key, span) of the first key of each kind, in file order.
    let mut keys: Vec<(FileKind, String, Range<usize>)> = document
        .get_ref()
        .iter()
        .filter_map(|(key, _)| {
            let name = key.get_ref().as_ref();
            kind_of_key(name).map(|kind| (kind, name.to_string(), key.span()))
        })
        .collect();
    keys.sort_by_key(|(_, _, span)| span.start);
    // A scenario may carry a component system: beside scenario keys, `component` and
    // `connection` make a composed scenario, not a second kind. The first key names the
    // kind, or when it is a component key, the first scenario key if there is one.
    let Some(mut reference) = keys.first() else {
        return Ok(kind_by_clusters(document.get_ref()));
    };
    if reference.0 == FileKind::Components {
        if let Some(scenario) = keys.iter().find(|(kind, ..)| *kind == FileKind::Scenario) {
            reference = scenario;
        }
    }
    let (first, first_key, first_span) = reference.clone();
    let compatible = |kind: FileKind| {
        kind == first || (first == FileKind::Scenario && kind == FileKind::Components)
    };
    if let Some((other, key, span)) = keys.into_iter().find(|(kind, ..)| !compatible(*kind)) {
        let source = Source::new(file, text);
        let line = source.error(first_span, "", "").line().unwrap_or(1);
        let error = source.error(
            span,
            format!(
                "`{key}` belongs to {}, but `{first_key}` (line {line}) makes this file {}",
                other.describe(),
                first.describe()
            ),
            format!(
                "a file describes one system; allowed at the top level of {}: {}, and the \
                 shared keys{}",
                first.describe(),
                own_keys(first).join(", "),
                if first == FileKind::Scenario {
                    " (a component system's `component` and `connection` too)"
                } else {
                    ""
                }
            ),
        );
        return Err(Diagnostics::new(file, vec![error]));
    }
    Ok(first)
}

/// The kind of a file whose keys name none: by its first `[[cluster]]`'s `cores`, an array
/// of core ids in a scenario and a core count in an MC-IPC system; a scenario without
/// clusters.
fn kind_by_clusters(document: &toml::de::DeTable<'_>) -> FileKind {
    use toml::de::DeValue;
    let Some((_, clusters)) = document
        .iter()
        .find(|(key, _)| key.get_ref().as_ref() == "cluster")
    else {
        return FileKind::Scenario;
    };
    let first = match clusters.get_ref() {
        DeValue::Array(tables) => tables.first().map(|t| t.get_ref()),
        _ => None,
    };
    let cores = match first {
        Some(DeValue::Table(table)) => table
            .iter()
            .find(|(key, _)| key.get_ref().as_ref() == "cores")
            .map(|(_, value)| value.get_ref()),
        _ => None,
    };
    match cores {
        Some(DeValue::Array(_)) => FileKind::Scenario,
        _ => FileKind::McIpc,
    }
}

fn own_keys(kind: FileKind) -> &'static [&'static str] {
    OWN_KEYS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, keys)| keys)
}

/// A file read and validated as whatever kind it is.
pub enum SystemFile {
    /// A valid scenario and the warnings about it.
    Scenario(Scenario, Vec<SpecError>),
    /// A valid component system, with where each connection is declared.
    Components(LocatedSystem),
    /// A valid MC-IPC system.
    McIpc(McIpcSystem),
    /// A valid sweep experiment.
    Sweep(Experiment),
}

impl SystemFile {
    /// Its kind.
    pub fn kind(&self) -> FileKind {
        match self {
            SystemFile::Scenario(..) => FileKind::Scenario,
            SystemFile::Components(_) => FileKind::Components,
            SystemFile::McIpc(_) => FileKind::McIpc,
            SystemFile::Sweep(_) => FileKind::Sweep,
        }
    }
}

/// The kind of the file at `path` and its text (`None` for a `.camkes` file, which its own
/// front end reads); a file that cannot be read, or is not UTF-8, is one diagnostic.
pub fn read_kind(path: &Path) -> Result<(FileKind, Option<String>), Diagnostics> {
    if path.extension().is_some_and(|e| e == "camkes") {
        return Ok((FileKind::Components, None));
    }
    let text = crate::read_text(
        path,
        "a readable UTF-8 file: a TOML scenario, component system, MC-IPC system or sweep \
         experiment, or a .camkes file",
    )?;
    let kind = kind_of(&text, &path.display().to_string())?;
    Ok((kind, Some(text)))
}

/// Reads and validates the file at `path`, whatever its kind: the one entry point for every
/// command that takes a system file.
pub fn load(path: &Path) -> Result<SystemFile, Diagnostics> {
    load_with_text(path).map(|(system, _)| system)
}

/// [`load`], and the text it read (`None` for a `.camkes` file, which its front end reads):
/// for a caller that places more diagnostics in the file, so that it need not read the file
/// again (which may have changed since).
pub fn load_with_text(path: &Path) -> Result<(SystemFile, Option<String>), Diagnostics> {
    let file = path.display().to_string();
    let (kind, text) = read_kind(path)?;
    let Some(text) = text else {
        let system = crate::camkes::load_camkes_located(path).map(SystemFile::Components)?;
        return Ok((system, None));
    };
    let system = match kind {
        FileKind::Scenario => crate::parse_checked(&text, &file)
            .map(|(scenario, warnings)| SystemFile::Scenario(scenario, warnings)),
        FileKind::Components => crate::component_toml::parse_components_located(&text, &file)
            .map(SystemFile::Components),
        FileKind::McIpc => crate::parse_mc_ipc(&text, &file).map(SystemFile::McIpc),
        FileKind::Sweep => crate::sweep_toml::parse_sweep(&text, &file).map(SystemFile::Sweep),
    }?;
    Ok((system, Some(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Result<FileKind, String> {
        kind_of(text, "f.toml").map_err(|d| d.errors()[0].to_string())
    }

    #[test]
    fn each_kind_is_told_by_its_own_keys() {
        assert_eq!(
            kind("name = \"a\"\npolicy = \"edf\""),
            Ok(FileKind::Scenario)
        );
        assert_eq!(
            kind("[[component]]\nname = \"c\"\nkind = \"passive\""),
            Ok(FileKind::Components)
        );
        assert_eq!(
            kind("protocol = \"mc-ipc\"\n[[task]]\nname = \"t\""),
            Ok(FileKind::McIpc)
        );
        assert_eq!(
            kind("name = \"s\"\ngenerator = \"uunifast\""),
            Ok(FileKind::Sweep)
        );
    }

    #[test]
    fn headers_are_found_however_they_are_written_and_not_inside_strings() {
        // A spaced array-of-tables header, a quoted key and an inline array: all are
        // `component` keys.
        assert_eq!(
            kind("[[ component ]]\nname = \"c\""),
            Ok(FileKind::Components)
        );
        assert_eq!(
            kind("[[\"component\"]]\nname = \"c\""),
            Ok(FileKind::Components)
        );
        assert_eq!(
            kind("component = [{ name = \"c\" }]"),
            Ok(FileKind::Components)
        );
        // A header line inside a multi-line string is text, not a key.
        assert_eq!(
            kind("policy = \"edf\"\ndescription = \"\"\"\n[[cluster]]\n\"\"\""),
            Ok(FileKind::Scenario)
        );
    }

    #[test]
    fn shared_keys_alone_decide_nothing_and_are_read_as_a_scenario() {
        assert_eq!(kind("name = \"x\"\nseed = 3"), Ok(FileKind::Scenario));
        assert_eq!(kind("this is not toml ["), Ok(FileKind::Scenario));
    }

    #[test]
    fn reclamation_groups_decide_nothing() {
        // Scenarios and MC-IPC systems both have `[[group]]`: their other keys (here an MC-IPC
        // cluster's core count) tell them apart, whether the group comes first or last.
        let group = "[[group]]\nname = \"g\"\nquota = \"1ms\"\n";
        let cluster = "[[cluster]]\nname = \"C1\"\ncores = 1\n";
        assert_eq!(kind(&format!("{cluster}\n{group}")), Ok(FileKind::McIpc));
        assert_eq!(kind(&format!("{group}\n{cluster}")), Ok(FileKind::McIpc));
        let scenario = "policy = \"edf\"\nduration = \"1s\"\n";
        assert_eq!(
            kind(&format!("{scenario}\n{group}")),
            Ok(FileKind::Scenario)
        );
        // With nothing else, a file is read as a scenario, as a file of shared keys is.
        assert_eq!(kind(group), Ok(FileKind::Scenario));
    }

    #[test]
    fn keys_of_two_kinds_are_refused_at_the_second_kind_s_first_key() {
        let error = kind("policy = \"edf\"\nduration = \"1s\"\n\n[[reservation]]\nname = \"R1\"")
            .unwrap_err();
        assert_eq!(
            error,
            "f.toml:4:3: `reservation` belongs to an MC-IPC system, but `policy` (line 1) makes \
             this file a scenario"
        );
    }

    #[test]
    fn clusters_are_shared_and_other_keys_decide() {
        // A scenario's cluster beside scenario keys, whichever comes first.
        let scenario = "policy = \"edf\"\nduration = \"1s\"\n";
        let scenario_cluster = "[[cluster]]\nname = \"g\"\ncores = [0, 1]\norder = \"edf\"\n";
        assert_eq!(
            kind(&format!("{scenario}\n{scenario_cluster}")),
            Ok(FileKind::Scenario)
        );
        assert_eq!(
            kind(&format!("{scenario_cluster}\n{scenario}")),
            Ok(FileKind::Scenario)
        );
        // An MC-IPC cluster beside MC-IPC keys.
        let mc_ipc_cluster = "[[cluster]]\nname = \"C1\"\ncores = 2\n";
        assert_eq!(
            kind(&format!("{mc_ipc_cluster}\nprotocol = \"mc-ipc\"")),
            Ok(FileKind::McIpc)
        );
        // A cluster does not reconcile keys of two kinds.
        let error = kind(&format!(
            "{scenario}\n{scenario_cluster}\n[[reservation]]\nname = \"R1\""
        ))
        .unwrap_err();
        assert!(
            error.starts_with("f.toml:9:3: `reservation` belongs to an MC-IPC system"),
            "{error}"
        );
    }

    #[test]
    fn without_other_keys_the_first_cluster_s_cores_decide() {
        // An array of core ids: a scenario's cluster; a count: an MC-IPC cluster's m.
        assert_eq!(
            kind("[[cluster]]\nname = \"g\"\ncores = [1, 2]\n"),
            Ok(FileKind::Scenario)
        );
        assert_eq!(
            kind("[[cluster]]\nname = \"C1\"\ncores = 2\n"),
            Ok(FileKind::McIpc)
        );
        // However the table is written, and whatever later clusters have.
        assert_eq!(
            kind("cluster = [{ name = \"g\", cores = [0] }, { name = \"h\", cores = 1 }]"),
            Ok(FileKind::Scenario)
        );
        assert_eq!(
            kind("[[cluster]]\nname = \"C1\"\ncores = 1\n\n[[cluster]]\ncores = [1]\n"),
            Ok(FileKind::McIpc)
        );
        // Anything else (missing, a string) stays MC-IPC's, whose validator says what is wrong.
        assert_eq!(kind("[[cluster]]\nname = \"C1\"\n"), Ok(FileKind::McIpc));
        assert_eq!(
            kind("[[cluster]]\nname = \"C1\"\ncores = \"2\"\n"),
            Ok(FileKind::McIpc)
        );
        // Text that looks like a cluster, inside a string, is no cluster.
        assert_eq!(
            kind("description = \"\"\"\n[[cluster]]\ncores = 2\n\"\"\"\n"),
            Ok(FileKind::Scenario)
        );
    }
}
