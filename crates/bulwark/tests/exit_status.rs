//! One meaning per exit status in every command: 0 yes, 1 the verdict no, 2 bad input or
//! usage. Each case is a file or argument whose kind (valid, rejected verdict, invalid) is
//! known by construction.

mod common;

use common::{bulwark, output_of, stdout_of, temp_file};

fn code(args: &[&str]) -> Option<i32> {
    bulwark(args).status.code()
}

/// A fixed-priority scenario with a `reservation` key: invalid (a reservation needs a
/// reservation-server policy), which `analyze` reported with exit 1, like a verdict.
const FIXED_PRIORITY_WITH_RESERVATION: &str = r#"name = "fp"
policy = "fixed-priority"
duration = "10ms"

[[task]]
name = "t"
priority = 1
period = "5ms"
execution = "1ms"
reservation = { budget = "1ms", period = "5ms" }
"#;

#[test]
fn an_invalid_file_is_bad_input_for_every_command() {
    let (_dir, file) = temp_file("fp.toml", FIXED_PRIORITY_WITH_RESERVATION);
    let file = file.to_str().unwrap();
    for command in ["check", "simulate", "analyze"] {
        let out = output_of(&[command, file], 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Located: `file:line:column:` (the reservation key is on line 10).
        assert!(
            stderr.contains(&format!("{file}:10:")),
            "{command}: {stderr}"
        );
    }
    assert_eq!(code(&["mcipc-case-study", "--file", file]), Some(2));
    assert_eq!(code(&["check", "no/such/file.toml"]), Some(2));
    assert_eq!(code(&["simulate", "no/such/file.toml"]), Some(2));
    assert_eq!(code(&["analyze", "no/such/file.camkes"]), Some(2));
}

#[test]
fn a_verdict_no_is_one_and_yes_is_zero() {
    // Table I: tau5's reservation is not admitted (the SPR paper's Table I), exit 1.
    assert_eq!(code(&["analyze", "scenarios/table-i.toml"]), Some(1));
    // The classic EDF test: U = 34/35 <= 1 with implicit deadlines, schedulable (exit 0);
    // rate monotonic on the same pair: R2 = 8 ms > T2 = 7 ms, not schedulable (exit 1).
    assert_eq!(code(&["analyze", "scenarios/textbook-edf.toml"]), Some(0));
    assert_eq!(code(&["analyze", "scenarios/textbook-rm.toml"]), Some(1));
    assert_eq!(code(&["check", "scenarios/textbook-rm.toml"]), Some(0));
    // rate monotonic misses at 7 ms; simulate reports it but gives no verdict.
    assert_eq!(code(&["simulate", "scenarios/textbook-rm.toml"]), Some(0));
}

#[test]
fn usage_errors_are_two() {
    assert_eq!(code(&["simulate"]), Some(2));
    assert_eq!(code(&["no-such-command"]), Some(2));
    assert_eq!(
        code(&["simulate", "scenarios/textbook-rm.toml", "--until", "0ns"]),
        Some(2)
    );
    assert_eq!(
        code(&["mcipc-case-study", "--phase-length", "0s", "--phase", "1"]),
        Some(2)
    );
    assert_eq!(code(&["reproduce", "no-such-experiment"]), Some(2));
}

#[test]
fn every_subcommand_help_says_what_its_exit_status_means() {
    for command in [
        "check",
        "simulate",
        "analyze",
        "attack",
        "reproduce",
        "mcipc-case-study",
    ] {
        let help = stdout_of(&[command, "--help"], 0);
        assert!(help.contains("Exit status:"), "{command}: {help}");
        assert!(
            help.contains(" 2 "),
            "{command} --help names exit 2: {help}"
        );
    }
}

/// A valid spr scenario with one warning: eta (2 ms) above the budget (1 ms).
const ETA_ABOVE_BUDGET: &str = r#"name = "w"
policy = "spr"
duration = "10ms"

[[task]]
name = "t"
priority = 1
period = "5ms"
execution = "1ms"
reservation = { budget = "1ms", period = "5ms", non-preemptive = "2ms" }
"#;

#[test]
fn warnings_are_shown_and_deny_warnings_makes_them_bad_input() {
    let (_dir, file) = temp_file("w.toml", ETA_ABOVE_BUDGET);
    let file = file.to_str().unwrap();
    // Column 66: see the hostile file s_warn_eta_above_budget.toml for the count.
    let warning = format!("warning: {file}:10:66: task `t`'s non-preemptive region 2ms");
    for command in ["check", "simulate", "analyze"] {
        let out = bulwark(&[command, file]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&warning), "{command}: {stderr}");
        // A warning is not bad input: check and simulate succeed, analyze gives its verdict.
        assert_ne!(out.status.code(), Some(2), "{command}: {stderr}");
        let denied = output_of(&[command, "--deny-warnings", file], 2);
        let stderr = String::from_utf8_lossy(&denied.stderr);
        assert!(
            stderr.contains(&format!("{file}:10:66: ")) && stderr.contains("denied"),
            "{command}: {stderr}"
        );
        // Denied: nothing was simulated or analysed.
        assert!(denied.stdout.is_empty(), "{command}");
    }
}
