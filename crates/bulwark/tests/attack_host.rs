//! `bulwark attack --host`, run as users run it: what it refuses (exit 2) and, where this
//! process may use real-time scheduling (root, as CI runs), a real run of the host A2.

mod common;

use common::{assert_contains, bulwark, output_of, text};

/// Every refusal is bad input (2) with a message naming what to drop, and none of them runs
/// anything on the host.
#[test]
fn host_refuses_what_it_cannot_do_with_exit_2() {
    for (args, says) in [
        (
            &["attack", "a3", "--host", "--attackers", "4"][..],
            "a3 has no attackers to count",
        ),
        (
            &["attack", "a3", "--host", "--svg", "/nonexistent/a3.svg"][..],
            "drop --svg",
        ),
        (
            &["attack", "a2", "--host", "--attackers", "4"][..],
            "drop --attackers",
        ),
        (
            &["attack", "a2", "--host", "--svg", "/nonexistent/a2.svg"][..],
            "drop --svg",
        ),
    ] {
        let out = output_of(args, 2);
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    }
}

/// The host A2 on this machine: a table with a row per attacker count (0, 16, 64, 256) and a
/// host and a simulated column per policy and queue size; the exit status is the checks'
/// verdict (0 or 1, never 2). Without real-time privileges it must refuse with exit 2,
/// naming what is missing.
#[test]
fn host_a2_prints_the_measured_table_or_names_the_missing_privilege() {
    let out = bulwark(&["attack", "a2", "--host"]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    if out.status.code() == Some(2) {
        assert_contains(&stderr, "missing privilege");
        return;
    }
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stdout}{stderr}");
    let header = stdout
        .lines()
        .find(|l| l.starts_with("N "))
        .unwrap_or_else(|| panic!("no table header: {stdout}"));
    for column in [
        "host SS S=16",
        "sim SS S=16",
        "host SS S=32",
        "host SPR S=16",
        "host SPR S=32",
        "sim SPR S=32",
    ] {
        assert_contains(header, column);
    }
    let counts: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("N "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(counts, ["0", "16", "64", "256"], "{stdout}");
    assert_contains(&stdout, "checks: ");
    assert_eq!(
        out.status.code() == Some(0),
        !stdout.contains("FAILS:"),
        "{stdout}"
    );
}
