//! Fuzz target: any bytes, read as Bulwark reads a component TOML file (`text_of`, then
//! `parse_components`), must never panic; every error must be located where its line and
//! column say, and a system that parses must keep the rules of its type and parse the same
//! way again.
#![no_main]

use bulwark_fuzz::{check_components, check_located, text_or_checked_error};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.toml";

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_or_checked_error(data, FILE) else {
        return;
    };
    match bulwark_spec::component_toml::parse_components_located(&text, FILE) {
        Err(diagnostics) => check_located(&diagnostics, &text, FILE),
        Ok(located) => {
            check_components(&located.system);
            // A problem found later is reported at a connection's declaration, located too.
            for connection in 0..located.system.connections.len() {
                let error = located.connection_error(connection, "m", "h");
                let diagnostics = located.diagnostics(vec![error]);
                check_located(&diagnostics, &text, FILE);
            }
            let again = bulwark_spec::parse_components(&text, FILE).expect("parses again");
            assert_eq!(again, located.system, "parsing is deterministic");
        }
    }
});
