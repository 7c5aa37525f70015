//! `bulwark attack`, run as users run it, with few attackers so that it stays quick.

mod common;

use common::{assert_contains, bulwark, output_of, text};

/// The cells of a table line after its first column (which may hold spaces).
fn cells_after<'a>(line: &'a str, first: &str) -> Vec<&'a str> {
    line[first.len()..].split_whitespace().collect()
}

/// Table III: three workloads, each at eta = 0, 1 ms and 2 ms, with units and their
/// percentage of the baseline; every check holds. `--attackers` means nothing to a3 and it
/// says so.
#[test]
fn a3_prints_table_iii_with_percentages_of_the_baseline() {
    let out = bulwark(&["attack", "a3", "--attackers", "4"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--attackers is ignored"));
    assert_contains(&stdout, "% of baseline");
    for workload in ["no interference", "timer flood", "cache attack"] {
        let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with(workload)).collect();
        assert_eq!(lines.len(), 3, "{workload}: {stdout}");
        let etas: Vec<&str> = lines.iter().map(|l| cells_after(l, workload)[0]).collect();
        assert_eq!(etas, ["0", "1ms", "2ms"], "{stdout}");
        for line in lines {
            let cells = cells_after(line, workload);
            let units: u64 = cells[1].parse().expect("units per period");
            assert!(units > 0, "{line}");
            assert!(cells[2].ends_with('%'), "{line}");
            let percent: f64 = cells[2].trim_end_matches('%').parse().unwrap();
            assert!((0.0..=100.0).contains(&percent), "{line}");
            if workload == "no interference" {
                assert_eq!(cells[2], "100.0%", "{line}");
            }
        }
    }
    let flood = stdout
        .lines()
        .find(|l| l.starts_with("timer flood"))
        .unwrap();
    let percent: f64 = cells_after(flood, "timer flood")[2]
        .trim_end_matches('%')
        .parse()
        .unwrap();
    assert!(percent <= 62.0, "the flood without a region: {flood}");
    assert_contains(&stdout, "checks: 10 of 10 checks pass");
}

#[test]
fn a3_refuses_an_svg_it_does_not_have() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a3.svg");
    let out = output_of(&["attack", "a3", "--svg", path.to_str().unwrap()], 2);
    assert!(
        text(&out.stderr).contains("a3 has no plot"),
        "{}",
        text(&out.stderr)
    );
    assert!(!path.exists());
}

/// Both policies, one row per attacker count (sorted), and every check holds.
#[test]
fn a1_prints_both_policies_for_each_attacker_count() {
    let out = bulwark(&["attack", "a1", "--attackers", "16,1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let header = stdout
        .lines()
        .find(|l| l.starts_with("N "))
        .expect("a header");
    for column in [
        "DS worst",
        "DS mean",
        "paper DS",
        "SPR-DS worst",
        "SPR-DS mean",
        "paper SPR-DS",
    ] {
        assert_contains(header, column);
    }
    // The paper's values beside ours (section V-B names no value below 64 attackers).
    let row = stdout.lines().find(|l| l.starts_with("16 ")).unwrap();
    assert!(
        row.contains("grows with N") && row.ends_with("constant"),
        "{row}"
    );
    assert_contains(&stdout, "\npaper: SPR paper, section V-B");
    let counts: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("N "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(counts, ["1", "16"], "{stdout}");
    assert_contains(&stdout, "checks: ");
}

#[test]
fn a1_json_has_a_point_per_policy_and_count() {
    let out = bulwark(&["attack", "a1", "--attackers", "1,16", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let points: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let points = points.as_array().expect("an array of points");
    assert_eq!(points.len(), 4);
    for policy in ["deferrable-server", "spr-deferrable"] {
        let mut counts: Vec<u64> = points
            .iter()
            .filter(|p| p["policy"] == policy)
            .map(|p| p["attackers"].as_u64().unwrap())
            .collect();
        counts.sort_unstable();
        assert_eq!(counts, [1, 16], "{policy}");
    }
    assert!(points.iter().all(|p| p["worst_latency_ns"].is_u64()));
}

#[test]
fn a1_writes_its_plot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("herd.svg");
    let out = bulwark(&[
        "attack",
        "a1",
        "--attackers",
        "1,4",
        "--svg",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(&path).expect("written");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a2_prints_both_policies_at_both_queue_sizes() {
    let out = bulwark(&["attack", "a2", "--attackers", "1,4"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let header = stdout.lines().find(|l| l.starts_with("N ")).unwrap();
    assert_eq!(
        header
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect::<Vec<_>>(),
        [
            "N",
            "SS S=16",
            "SS S=32",
            "paper SS",
            "SPR S=16",
            "SPR S=32",
            "paper SPR"
        ]
    );
    // The paper's values beside ours: its text gives SS's growth and SPR's flat line.
    let row = stdout.lines().find(|l| l.starts_with("4 ")).unwrap();
    assert!(
        row.contains("grows with N and S") && row.ends_with("flat"),
        "{row}"
    );
}

/// A bad `--attackers` value is refused before anything runs, saying what is wrong.
#[test]
fn bad_attacker_counts_are_refused_clearly() {
    for (value, message) in [
        ("1,x", "`x` is not an attacker count"),
        ("0", "0 attackers is outside 1..=65536"),
        ("1,,4", "an attacker count is missing"),
        ("-3", "not an attacker count"),
    ] {
        let out = output_of(&["attack", "a1", &format!("--attackers={value}")], 2);
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("invalid value") && stderr.contains("--attackers"),
            "{value}: {stderr}"
        );
        assert!(stderr.contains(message), "{value}: {stderr}");
        assert!(out.stdout.is_empty(), "{value}");
    }
}

#[test]
fn an_unknown_attack_is_refused() {
    let out = output_of(&["attack", "a4"], 2);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("a1") && stderr.contains("a3"), "{stderr}");
}
