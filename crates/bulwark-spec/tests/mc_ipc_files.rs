//! The TOML form of an MC-IPC system: the paper's case study and the module's example read
//! into the exact system they describe; every file in `tests/invalid_mc_ipc/` is rejected with
//! exactly the diagnostics written beside it.
//!
//! Each `NAME.toml` there has a `NAME.expected` holding one `file:line:column: message` line
//! per error, in file order, worked out by hand from the file (lines and columns count from 1,
//! columns in characters).

use std::fs;
use std::path::{Path, PathBuf};

use bulwark_core::{Duration, Priority};
use bulwark_spec::mc_ipc_toml::{
    Cluster, Criticality, Invocation, McIpcSystem, PerCriticality, Protocol, Reservation,
    ReservationKind, Server, Slot,
};
use bulwark_spec::{parse_mc_ipc, Diagnostics};
use proptest::prelude::*;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn invalid_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid_mc_ipc")
}

fn case_study_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/mcipc/case-study.toml")
}

/// The `.toml` fixtures, sorted by name.
fn fixtures() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(invalid_dir())
        .expect("tests/invalid_mc_ipc exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    paths
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("fixture has a file name")
        .to_string_lossy()
        .into_owned()
}

fn diagnostics_of(path: &Path) -> Diagnostics {
    let source = fs::read_to_string(path).expect("fixture is readable");
    match parse_mc_ipc(&source, &file_name(path)) {
        Ok(system) => panic!("{} was accepted: {system:#?}", path.display()),
        Err(diagnostics) => diagnostics,
    }
}

fn read(text: &str) -> McIpcSystem {
    match parse_mc_ipc(text, "f.toml") {
        Ok(system) => system,
        Err(d) => panic!("{}", d.plain()),
    }
}

fn errors(text: &str) -> Vec<String> {
    match parse_mc_ipc(text, "f.toml") {
        Ok(system) => panic!("accepted: {system:#?}"),
        Err(d) => d.errors().iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn every_fixture_gives_exactly_its_expected_diagnostics() {
    let mut mismatches = Vec::new();
    for path in fixtures() {
        let expected_path = path.with_extension("expected");
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let actual: String = diagnostics_of(&path)
            .errors()
            .iter()
            .map(|e| format!("{e}\n"))
            .collect();
        if actual != expected {
            mismatches.push(format!(
                "{}\n--- expected\n{expected}--- actual\n{actual}",
                file_name(&path)
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));
}

#[test]
fn every_fixture_is_rejected_with_located_helpful_errors() {
    let paths = fixtures();
    assert!(paths.len() >= 25, "only {} fixtures", paths.len());
    for path in paths {
        let diagnostics = diagnostics_of(&path);
        let name = file_name(&path);
        assert!(!diagnostics.is_empty(), "{name}: no errors");
        for error in &diagnostics {
            assert_eq!(error.file(), name);
            assert!(error.line().is_some_and(|l| l >= 1), "{error}");
            assert!(error.column().is_some_and(|c| c >= 1), "{error}");
            assert!(error.span().is_some(), "{error}");
            assert!(!error.message().is_empty(), "{error}");
            assert!(!error.help().is_empty(), "{error}: no help");
            assert!(!error.message().contains('\n') && !error.help().contains('\n'));
        }
        let starts: Vec<usize> = diagnostics
            .errors()
            .iter()
            .filter_map(|e| e.span().map(|s| s.start))
            .collect();
        assert!(
            starts.windows(2).all(|w| w[0] <= w[1]),
            "{name}: {starts:?}"
        );
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
        first_help("unknown_protocol.toml"),
        "allowed: mc-ipc, fifo-ipc, prio-ipc"
    );
    assert_eq!(first_help("unknown_criticality.toml"), "allowed: low, high");
    assert_eq!(
        first_help("unknown_key.toml"),
        "allowed: `name`, `cluster`, `criticality`, `priority`, `slots`, `budget`, `period`, \
         `execution`, `invokes`"
    );
    assert_eq!(
        first_help("unknown_level_key.toml"),
        "allowed: `low` or `high`"
    );
    assert_eq!(first_help("unknown_cluster.toml"), "allowed: C1, C2");
    assert_eq!(first_help("unknown_server.toml"), "allowed: key, log");
    assert_eq!(
        first_help("priority_out_of_range.toml"),
        "allowed: 0..=255, larger is more important"
    );
    assert_eq!(
        first_help("budget_larger_than_period.toml"),
        "a reservation's budget must be at most its period"
    );
    assert_eq!(
        first_help("missing_key.toml"),
        "add priority = ... to this table"
    );
    assert!(first_help("slots_without_cycle.toml").contains("cycle = \"100ms\""));
    assert!(first_help("overlapping_slots.toml").contains("section III"));
    assert!(first_help("bad_times.toml").contains("ns, us (or \u{b5}s), ms, s"));
    let plain = diagnostics_of(&invalid_dir().join("unknown_protocol.toml")).plain();
    assert_eq!(
        plain,
        "unknown_protocol.toml:1:12: unknown protocol `mcipc` (allowed: mc-ipc, fifo-ipc, \
         prio-ipc)\n"
    );
}

/// Section VI-A, as `scenarios/mcipc/case-study.toml` writes it.
fn case_study() -> McIpcSystem {
    let key = vec![Invocation {
        server: 0,
        count: 1,
    }];
    let partition = |name: &str, cluster: usize, priority: u8, from: u64, to: u64| Reservation {
        name: name.into(),
        cluster,
        criticality: Criticality::High,
        priority: Priority(priority),
        kind: ReservationKind::TableDriven {
            slots: vec![Slot::new(ms(from), ms(to))],
        },
        execution: PerCriticality::uniform(ms(2)),
        invocations: key.clone(),
    };
    let mut reservations = vec![
        partition("R1", 0, 1, 0, 50),
        partition("R2", 1, 2, 0, 50),
        partition("R3", 1, 3, 50, 100),
        partition("R4", 2, 4, 0, 50),
    ];
    for (cluster, first) in [(2, 5), (3, 10)] {
        for (number, period) in (first..).zip([100, 150, 250, 500, 1000]) {
            reservations.push(Reservation {
                name: format!("R{number}"),
                cluster,
                criticality: Criticality::Low,
                priority: Priority(0),
                kind: ReservationKind::Sporadic {
                    budget: ms(20),
                    period: ms(period),
                },
                execution: PerCriticality::uniform(ms(2)),
                invocations: key.clone(),
            });
        }
    }
    McIpcSystem {
        protocol: Some(Protocol::McIpc),
        cycle: Some(ms(100)),
        clusters: (1..=4)
            .map(|k| Cluster {
                name: format!("C{k}"),
                cores: 1,
            })
            .collect(),
        servers: vec![Server {
            name: "key".into(),
            operation_length: PerCriticality::uniform(ms(2)),
            invoking_clusters: PerCriticality::uniform(None),
        }],
        reservations,
    }
}

#[test]
fn the_case_study_reads_into_the_papers_system() {
    let text = fs::read_to_string(case_study_path()).expect("the case study file is readable");
    let system = read(&text);
    assert_eq!(system, case_study());
    assert_eq!(system.reservations.len(), 14);
}

/// The ```toml example of the module documentation, so that it stays valid.
fn documented_example() -> String {
    let source = include_str!("../src/mc_ipc_toml.rs");
    let mut lines = source
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.strip_prefix("//! ").unwrap_or(""))
        .skip_while(|line| *line != "```toml")
        .skip(1);
    let example: Vec<&str> = lines.by_ref().take_while(|line| *line != "```").collect();
    assert!(example.len() > 20, "no example found");
    example.join("\n") + "\n"
}

#[test]
fn the_documented_example_reads_into_its_system() {
    let system = read(&documented_example());
    let expected = McIpcSystem {
        protocol: Some(Protocol::McIpc),
        cycle: Some(ms(100)),
        clusters: vec![
            Cluster {
                name: "C1".into(),
                cores: 1,
            },
            Cluster {
                name: "C2".into(),
                cores: 2,
            },
        ],
        servers: vec![Server {
            name: "key".into(),
            operation_length: PerCriticality::uniform(ms(2)),
            invoking_clusters: PerCriticality {
                low: Some(1),
                high: Some(2),
            },
        }],
        reservations: vec![
            Reservation {
                name: "R1".into(),
                cluster: 0,
                criticality: Criticality::High,
                priority: Priority(2),
                kind: ReservationKind::TableDriven {
                    slots: vec![Slot::new(ms(0), ms(50))],
                },
                execution: PerCriticality {
                    low: ms(2),
                    high: ms(3),
                },
                invocations: vec![Invocation {
                    server: 0,
                    count: 1,
                }],
            },
            Reservation {
                name: "R2".into(),
                cluster: 1,
                criticality: Criticality::Low,
                priority: Priority(1),
                kind: ReservationKind::Sporadic {
                    budget: ms(20),
                    period: ms(100),
                },
                execution: PerCriticality::uniform(ms(5)),
                invocations: vec![Invocation {
                    server: 0,
                    count: 2,
                }],
            },
        ],
    };
    assert_eq!(system, expected);
}

const SMALL: &str = r#"
cycle = "100ms"

[[cluster]]
name = "C1"
cores = 1

[[cluster]]
name = "C2"
cores = 2

[[server]]
name = "key"
operation = "2ms"

[[server]]
name = "log"
operation = "500us"

[[reservation]]
name = "A"
cluster = "C1"
priority = 5
slots = [["50ms", "100ms"], ["0ms", "20ms"]]
execution = "1ms"

[[reservation]]
name = "B"
cluster = "C1"
priority = 6
slots = [["20ms", "50ms"]]
execution = "1ms"

[reservation.invokes]
log = 3
key = 1

[[reservation]]
name = "C"
cluster = "C2"
priority = 5
slots = [["0ms", "60ms"]]
execution = "1ms"

[[reservation]]
name = "D"
cluster = "C2"
priority = 5
slots = [["10ms", "100ms"]]
execution = "1ms"
"#;

#[test]
fn defaults_slot_order_and_invocation_order() {
    let system = read(SMALL);
    assert_eq!(system.protocol, None);
    let a = &system.reservations[0];
    assert_eq!(a.criticality, Criticality::Low);
    assert!(a.invocations.is_empty());
    // Slots stay in file order; slots that touch do not overlap.
    assert_eq!(
        a.kind,
        ReservationKind::TableDriven {
            slots: vec![Slot::new(ms(50), ms(100)), Slot::new(ms(0), ms(20))]
        }
    );
    // Invocations in file order, by server index.
    assert_eq!(
        system.reservations[1].invocations,
        [
            Invocation {
                server: 1,
                count: 3
            },
            Invocation {
                server: 0,
                count: 1
            },
        ]
    );
    // Two slots of a two-core cluster may overlap; a third may not.
    let third = SMALL.to_owned()
        + "\n[[reservation]]\nname = \"E\"\ncluster = \"C2\"\npriority = 7\n\
           slots = [[\"55ms\", \"56ms\"]]\nexecution = \"1ms\"\n";
    assert_eq!(
        errors(&third),
        ["f.toml:56:10: slot [55ms, 56ms) of `E` makes 3 slots overlap at 55ms on cluster `C2` (2 cores)"]
    );
    let after = third.replace("\"55ms\", \"56ms\"", "\"60ms\", \"61ms\"");
    assert_eq!(read(&after).reservations.len(), 5);
}

#[test]
fn one_clusters_value_is_both_levels_and_the_cycle_is_optional_without_slots() {
    let text = r#"
protocol = "prio-ipc"

[[cluster]]
name = "C1"
cores = 4

[[server]]
name = "key"
operation = { low = "1ms", high = "1ms" }
clusters = 1

[[reservation]]
name = "R"
cluster = "C1"
criticality = "high"
priority = 255
budget = "1ms"
period = "1ms"
execution = "1ms"
invokes = { key = 0 }
"#;
    let system = read(text);
    assert_eq!(system.protocol, Some(Protocol::PrioIpc));
    assert_eq!(system.cycle, None);
    assert_eq!(
        system.servers[0].invoking_clusters,
        PerCriticality::uniform(Some(1))
    );
    assert_eq!(
        system.reservations[0].invocations,
        [Invocation {
            server: 0,
            count: 0
        }]
    );
    assert_eq!(system.reservations[0].priority, Priority(255));
    assert_eq!(
        PerCriticality { low: 1, high: 2 }.at(Criticality::High),
        2,
        "at() picks the level"
    );
    for protocol in [Protocol::McIpc, Protocol::FifoIpc, Protocol::PrioIpc] {
        assert_eq!(Protocol::from_name(protocol.name()), Some(protocol));
    }
    for level in [Criticality::Low, Criticality::High] {
        assert_eq!(Criticality::from_name(level.name()), Some(level));
    }
}

#[test]
fn errors_are_collected_across_tables_in_file_order() {
    let text = r#"
protocol = "fifo"
cycle = "100ms"

[[cluster]]
name = "C1"
cores = 0

[[server]]
name = "key"
operation = "0ms"

[[reservation]]
name = "R1"
cluster = "C9"
criticality = "mid"
priority = 300
slots = [["60ms", "50ms"]]
execution = { low = "2ms", high = "1ms" }
invokes = { nope = 1 }
"#;
    assert_eq!(
        errors(text),
        [
            "f.toml:2:12: unknown protocol `fifo`",
            "f.toml:7:9: cores 0 is outside 1..=1024",
            "f.toml:11:13: operation length cannot be zero",
            "f.toml:15:11: no cluster is called `C9`",
            "f.toml:16:15: unknown criticality `mid`",
            "f.toml:17:12: priority 300 is outside 0..=255",
            "f.toml:18:10: slot [60ms, 50ms) ends before it starts",
            "f.toml:19:21: low execution 2ms is above high execution 1ms",
            "f.toml:20:13: no server is called `nope`",
        ]
    );
}

/// What a parsed system promises, checked from the outside.
fn invariant_violation(system: &McIpcSystem) -> Option<String> {
    let k = system.clusters.len() as u64;
    if k == 0 || system.reservations.is_empty() {
        return Some("no clusters or no reservations".into());
    }
    if system
        .clusters
        .iter()
        .any(|c| !(1..=1024).contains(&c.cores))
    {
        return Some("cores out of range".into());
    }
    for server in &system.servers {
        let l = server.operation_length;
        if l.low.is_zero() || l.low > l.high {
            return Some(format!("operation lengths of {}", server.name));
        }
        let c = server.invoking_clusters;
        if c.low.is_some() != c.high.is_some()
            || c.low > c.high
            || [c.low, c.high]
                .iter()
                .flatten()
                .any(|&n| !(1..=k).contains(&n))
        {
            return Some(format!("invoking clusters of {}", server.name));
        }
    }
    for r in &system.reservations {
        if r.cluster >= system.clusters.len()
            || r.invocations
                .iter()
                .any(|i| i.server >= system.servers.len())
            || r.execution.low.is_zero()
            || r.execution.low > r.execution.high
        {
            return Some(format!("reservation {}", r.name));
        }
        match &r.kind {
            ReservationKind::TableDriven { slots } => {
                let cycle = system.cycle?;
                if slots.is_empty() || slots.iter().any(|s| s.start >= s.end || s.end > cycle) {
                    return Some(format!("slots of {}", r.name));
                }
            }
            ReservationKind::Sporadic { budget, period } => {
                if budget.is_zero() || budget > period {
                    return Some(format!("budget of {}", r.name));
                }
            }
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_text_makes_the_parser_panic(text in "\\PC{0,200}") {
        let _ = parse_mc_ipc(&text, "f.toml");
    }

    /// Any one line of the case study replaced by another of its lines (or removed): the
    /// parser never panics, what it accepts keeps every promise, what it rejects is located.
    #[test]
    fn edits_of_the_case_study_are_judged(line in 0usize..200, with in 0usize..201) {
        let text = fs::read_to_string(case_study_path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let line = line % lines.len();
        let mut edited = lines.clone();
        if with >= lines.len() {
            edited.remove(line);
        } else {
            edited[line] = lines[with];
        }
        let edited = edited.join("\n");
        match parse_mc_ipc(&edited, "f.toml") {
            Ok(system) => prop_assert_eq!(invariant_violation(&system), None),
            Err(d) => {
                for e in &d {
                    prop_assert!(e.line().is_some() && !e.help().is_empty(), "{}", e);
                }
            }
        }
    }
}
