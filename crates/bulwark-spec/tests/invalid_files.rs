//! Every file in `tests/invalid/` is rejected with exactly the diagnostics written beside it.
//!
//! Each `NAME.toml` has a `NAME.expected` holding one `file:line:column: message` line per
//! error, in file order, worked out by hand from the file (lines and columns count from 1,
//! columns in characters).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use bulwark_spec::{load, parse, Diagnostics};
use common::*;

fn invalid_dir() -> PathBuf {
    crate_path("tests/invalid")
}

fn diagnostics_of(path: &Path) -> Diagnostics {
    rejection(path, parse)
}

#[test]
fn every_fixture_gives_exactly_its_expected_diagnostics() {
    assert_expected_diagnostics(fixtures(&invalid_dir(), "toml"), diagnostics_of);
}

#[test]
fn every_fixture_is_rejected_with_located_helpful_errors() {
    let paths = fixtures(&invalid_dir(), "toml");
    for diagnostics in assert_fixtures_rejected_helpfully(paths, 16, diagnostics_of) {
        assert_eq!(diagnostics.len(), diagnostics.errors().len());
    }
}

/// The help of the only (or first) error in a fixture.
fn first_help(name: &str) -> String {
    let diagnostics = diagnostics_of(&invalid_dir().join(name));
    diagnostics.errors()[0].help().to_owned()
}

#[test]
fn helps_say_what_is_allowed() {
    assert_eq!(
        first_help("unknown_policy.toml"),
        "allowed: fixed-priority, edf, deferrable-server, sporadic-server, spr, spr-deferrable, cbs, hard-cbs, vbs"
    );
    assert_eq!(
        first_help("unknown_field.toml"),
        "allowed: `name`, `core`, `cluster`, `priority`, `deadline`, `offset`, `period`, \
         `min-interarrival`, `jitter`, `script`, `execution`, `reservation`, `group`, `cap`"
    );
    assert_eq!(
        first_help("budget_larger_than_period.toml"),
        "a reservation's budget must be at most its period"
    );
    assert_eq!(
        first_help("priority_out_of_range.toml"),
        "allowed: 0..=255, larger is more important"
    );
    assert_eq!(
        first_help("missing_field.toml"),
        "add name = ... to this table"
    );
    assert_eq!(
        first_help("wrong_value_type.toml"),
        "allowed: a whole number, without quotes"
    );
    assert!(first_help("bad_unit.toml").contains("ns, us (or \u{b5}s), ms, s"));
    // Blank names (refused at their tables) are not offered to references.
    let blank = diagnostics_of(&invalid_dir().join("blank_names.toml"));
    let helps: Vec<&str> = blank.errors()[3..].iter().map(|e| e.help()).collect();
    assert_eq!(
        helps,
        [
            "add a [[group]] table with this name and a quota",
            "add a [[server]] table with this name, a gate and an operation",
            "add a [[cluster]] table with this name, its cores and its order",
        ]
    );
    assert!(first_help("missing_core.toml").contains("0..=1"));
    let reservation = diagnostics_of(&invalid_dir().join("budget_larger_than_period.toml"));
    let help = reservation.errors()[1].help();
    assert!(help.contains("reservation-server policy"), "{help}");
    assert!(
        help.contains("(deferrable-server, sporadic-server, spr, spr-deferrable, cbs, hard-cbs)"),
        "{help}"
    );
}

#[test]
fn reservation_fields_name_the_policies_that_allow_them() {
    assert_eq!(
        first_help("replenishments_under_deferrable_server.toml"),
        "replenishments needs a policy with a replenishment queue (sporadic-server, spr); \
         remove replenishments or change the policy"
    );
    assert_eq!(
        first_help("non_preemptive_under_sporadic_server.toml"),
        "non-preemptive needs a policy with non-preemptive regions (spr, spr-deferrable); \
         remove non-preemptive or change the policy"
    );
    assert_eq!(
        first_help("replenishments_out_of_range.toml"),
        "allowed: 1..=1024 pending replenishments"
    );
    assert_eq!(
        first_help("unknown_reservation_field.toml"),
        "allowed: `budget`, `period`, `replenishments`, `non-preemptive`, `replenishment`, \
         `criticality`, `low-budget`, `core`, `slots`, `name`, `best-effort`"
    );
    assert_eq!(
        first_help("flush_cache_false.toml"),
        "allowed: { flush-cache = true }; to not flush the cache, remove this step"
    );
}

/// `spr-deferrable` has non-preemptive regions but no replenishment queue; a policy without
/// reservations reports the reservation, not each of its fields; a bad value in an allowed
/// field is still judged.
#[test]
fn reservation_fields_are_checked_against_each_policy() {
    let file = |policy: &str, fields: &str| {
        format!(
            "name = \"s\"\npolicy = \"{policy}\"\nduration = \"10ms\"\n\n[[task]]\n\
             name = \"t\"\npriority = 1\nperiod = \"10ms\"\nexecution = \"1ms\"\n\
             reservation = {{ budget = \"2ms\", period = \"10ms\"{fields} }}\n"
        )
    };
    let errors = |policy: &str, fields: &str| -> Vec<String> {
        match parse(&file(policy, fields), "f.toml") {
            Ok(_) => Vec::new(),
            Err(d) => d.errors().iter().map(|e| e.to_string()).collect(),
        }
    };
    assert_eq!(
        errors(
            "spr-deferrable",
            ", replenishments = 2, non-preemptive = \"0ns\""
        ),
        ["f.toml:10:67: policy `spr-deferrable` keeps no replenishment queue"]
    );
    assert!(errors("spr-deferrable", ", non-preemptive = \"0ns\"").is_empty());
    assert!(errors("spr", ", replenishments = 1024, non-preemptive = \"1ms\"").is_empty());
    assert_eq!(
        errors(
            "fixed-priority",
            ", replenishments = 2, non-preemptive = \"1ms\""
        ),
        ["f.toml:10:15: policy `fixed-priority` has no reservation servers"]
    );
    assert_eq!(
        errors("spr", ", non-preemptive = \"1xs\""),
        ["f.toml:10:67: unknown unit `xs` in 1xs"]
    );
    assert_eq!(
        errors("sporadic-server", ", replenishments = 70000"),
        ["f.toml:10:67: replenishments 70000 is outside 1..=1024"]
    );
}

#[test]
fn plain_output_puts_the_help_after_the_message() {
    let diagnostics = diagnostics_of(&invalid_dir().join("unknown_policy.toml"));
    assert_eq!(
        diagnostics.plain(),
        "unknown_policy.toml:2:10: unknown policy `rm` (allowed: fixed-priority, edf, \
         deferrable-server, sporadic-server, spr, spr-deferrable, cbs, hard-cbs, vbs)\n"
    );
    assert_eq!(
        diagnostics.to_string(),
        "unknown_policy.toml: 1 error in scenario"
    );
    let many = diagnostics_of(&invalid_dir().join("many_errors.toml"));
    assert_eq!(many.to_string(), "many_errors.toml: 6 errors in scenario");
}

#[test]
fn diagnostics_render_through_miette() {
    use miette::Diagnostic;
    let diagnostics = diagnostics_of(&invalid_dir().join("bad_cost.toml"));
    let related: Vec<_> = diagnostics
        .related()
        .expect("errors are related diagnostics")
        .collect();
    assert_eq!(related.len(), 2);
    let first = related[0];
    assert_eq!(
        first.help().map(|h| h.to_string()),
        Some("allowed: a frequency above zero, like \"1GHz\"".to_owned())
    );
    let labels: Vec<_> = first.labels().expect("a label").collect();
    // `"0GHz"` on line 6: the label covers the quoted value.
    let source = fs::read_to_string(invalid_dir().join("bad_cost.toml")).unwrap();
    let at = labels[0].offset();
    assert_eq!(&source[at..at + labels[0].len()], "\"0GHz\"");
    assert!(first.source_code().is_some());
}

#[test]
fn load_reads_by_path_and_names_an_unreadable_file() {
    let path = invalid_dir().join("no_tasks.toml");
    let diagnostics = load(&path).expect_err("no tasks");
    assert_eq!(
        diagnostics.errors()[0].to_string(),
        format!("{}:1:1: this scenario has no tasks", path.display())
    );

    let missing = invalid_dir().join("there_is_no_such_file.toml");
    let diagnostics = load(&missing).expect_err("unreadable");
    assert_eq!(diagnostics.len(), 1);
    let error = &diagnostics.errors()[0];
    assert_eq!(error.file(), missing.display().to_string());
    assert_eq!(error.line(), None);
    assert!(
        error
            .to_string()
            .starts_with(&format!("{}: cannot read this file: ", missing.display())),
        "{error}"
    );
}
