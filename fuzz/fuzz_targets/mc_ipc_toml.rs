//! Fuzz target: any bytes, read as Bulwark reads an MC-IPC file (`text_of`, then
//! `parse_mc_ipc`), must never panic; every error must be located where its line and column
//! say, and a system that parses must keep the rules of its type and parse the same way
//! again.
#![no_main]

use bulwark_fuzz::{check_located, check_mc_ipc, text_or_checked_error};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.toml";

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_or_checked_error(data, FILE) else {
        return;
    };
    match bulwark_spec::parse_mc_ipc(&text, FILE) {
        Err(diagnostics) => check_located(&diagnostics, &text, FILE),
        Ok(system) => {
            check_mc_ipc(&system);
            let again = bulwark_spec::parse_mc_ipc(&text, FILE).expect("parses again");
            assert_eq!(again, system, "parsing is deterministic");
        }
    }
});
