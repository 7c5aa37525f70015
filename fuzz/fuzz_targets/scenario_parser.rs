//! Fuzz target: any bytes, read as UTF-8 (lossily), must never make `parse` panic, and every
//! error it reports must point inside the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    if let Err(diagnostics) = bulwark_spec::parse(&source, "fuzz.toml") {
        assert!(!diagnostics.is_empty());
        for error in &diagnostics {
            let span = error.span().expect("every parse error is located");
            assert!(span.start <= span.end && span.end <= source.len());
            assert!(error.line().is_some() && error.column().is_some());
        }
    }
});
