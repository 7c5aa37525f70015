//! The built-in scenarios: the files under the repository's `scenarios/`, embedded so that
//! `bulwark reproduce` needs nothing but the binary.

use bulwark_spec::{Diagnostics, Scenario};

/// A built-in scenario file: its name (the file stem) and its text.
#[derive(Clone, Copy, Debug)]
pub struct BuiltIn {
    /// The file stem, e.g. `"textbook-rm"`.
    pub name: &'static str,
    /// The TOML text.
    pub source: &'static str,
}

macro_rules! built_in {
    ($($name:literal),* $(,)?) => {
        &[$(BuiltIn {
            name: $name,
            source: include_str!(concat!("../../../scenarios/", $name, ".toml")),
        }),*]
    };
}

/// Every built-in scenario, in a fixed order.
pub const BUILT_IN: &[BuiltIn] = built_in![
    "textbook-rm",
    "textbook-edf",
    "mixed-policies",
    "spr-vbs-cores",
    "components-beside-vbs",
    "components-two-cores",
    "global-reservations",
    "passive-servers",
    "shared-server",
    "mc-ipc-reservations",
    "key-server-cluster",
    "cluster-rogue",
    "partitions-two-cores",
    "kernel-costs",
    "deferrable-double-hit",
    "table-i",
    "attack-a1",
    "attack-a2",
    "attack-a3",
    "cbs-isolation",
    "faas-reclaim",
    "vbs-processes",
    "vestal-mode-switch",
    "mixed-criticality-two-cores",
    "spr-servers-two-cores",
];

impl BuiltIn {
    /// The scenario, parsed and validated; diagnostics name `scenarios/NAME.toml`.
    pub fn scenario(&self) -> Result<Scenario, Diagnostics> {
        bulwark_spec::parse(self.source, &format!("scenarios/{}.toml", self.name))
    }
}

/// The built-in scenario called `name`.
pub fn built_in(name: &str) -> Option<&'static BuiltIn> {
    BUILT_IN.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_scenario_is_valid() {
        for b in BUILT_IN {
            let s = b.scenario().unwrap_or_else(|e| panic!("{}: {e}", b.name));
            assert_eq!(s.name, b.name, "a scenario's name is its file stem");
        }
    }

    #[test]
    fn every_file_under_scenarios_is_built_in() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .expect("scenarios/ exists")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter_map(|n| n.strip_suffix(".toml").map(str::to_owned))
            .collect();
        on_disk.sort();
        let mut built: Vec<String> = BUILT_IN.iter().map(|b| b.name.to_owned()).collect();
        built.sort();
        assert_eq!(on_disk, built);
    }
}
