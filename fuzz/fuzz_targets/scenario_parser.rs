//! Fuzz target: any bytes, read as Bulwark reads a scenario file (`text_of`, then the file-kind
//! loader's `kind_of`, then `parse_checked`), must never panic; every error and warning must be
//! located where its line and column say, and a scenario that parses must keep the rules of
//! its type and parse the same way again.
#![no_main]

use bulwark_fuzz::{check_errors, check_located, check_scenario, text_or_checked_error};
use libfuzzer_sys::fuzz_target;

const FILE: &str = "fuzz.toml";

fuzz_target!(|data: &[u8]| {
    let Some(text) = text_or_checked_error(data, FILE) else {
        return;
    };
    // Every command first tells the file's kind; a file mixing kinds is refused, located.
    if let Err(diagnostics) = bulwark_spec::system::kind_of(&text, FILE) {
        check_located(&diagnostics, &text, FILE);
    }
    match bulwark_spec::parse_checked(&text, FILE) {
        Err(diagnostics) => check_located(&diagnostics, &text, FILE),
        Ok((scenario, warnings)) => {
            check_errors(&warnings, &text, FILE);
            check_scenario(&scenario);
            let again = bulwark_spec::parse(&text, FILE).expect("parsed once, parses again");
            assert_eq!(again, scenario, "parsing is deterministic");
        }
    }
});
