//! Sweep experiment files: a valid one reads into the expected axes, and each kind of
//! mistake gets one error at the offending value, with what is allowed.

use bulwark_spec::parse_sweep;
use bulwark_spec::sweep_toml::{PeriodKind, UtilisationGenerator};

const VALID: &str = r#"name = "s"
seed = 1
sets-per-point = 10
generator = "uunisort"
tasks = 4
tests = ["edf-qpa", "hyperbolic"]

[periods]
kind = "harmonic"
min = "1ms"
max = "64ms"

[utilisation]
from = 0.1
to = 0.3
step = 0.1

[deadlines]
constrained-fraction = 0.25
"#;

#[test]
fn a_valid_file_reads_into_its_axes() {
    let e = parse_sweep(VALID, "s.toml").unwrap();
    assert_eq!(e.generator, UtilisationGenerator::UUniSort);
    assert_eq!(e.period_kind, PeriodKind::Harmonic);
    assert_eq!((e.period_min, e.period_max), (1_000_000, 64_000_000));
    assert_eq!(e.task_counts, vec![4]);
    // 0.1, 0.2, 0.3 in ppb: integer steps, so 0.3 is reached despite 0.1 + 0.2 != 0.3 in f64.
    assert_eq!(
        e.utilisations_ppb,
        vec![100_000_000, 200_000_000, 300_000_000]
    );
    assert_eq!(e.constrained_fraction, 0.25);
    assert_eq!(e.tests, vec!["edf-qpa", "hyperbolic"]);
}

/// `replace` in VALID gives exactly one error, `expected` (`file:line:column: message`),
/// whose help contains `help`.
fn one_error(from: &str, to: &str, expected: &str, help: &str) {
    assert!(VALID.contains(from), "{from}");
    let errors = parse_sweep(&VALID.replace(from, to), "s.toml").unwrap_err();
    assert_eq!(errors.errors().len(), 1, "{}", errors.plain());
    assert_eq!(errors.errors()[0].to_string(), expected);
    assert!(
        errors.errors()[0].help().contains(help),
        "{}",
        errors.errors()[0].help()
    );
}

#[test]
fn each_mistake_is_located() {
    one_error(
        "sets-per-point = 10",
        "sets-per-point = 0",
        "s.toml:3:18: sets-per-point is 0",
        "allowed: 1 to",
    );
    one_error(
        "\"uunisort\"",
        "\"uunifast2\"",
        "s.toml:4:13: unknown generator `uunifast2`",
        "uunifast, uunisort",
    );
    one_error(
        "tasks = 4",
        "tasks = [4, 0]",
        "s.toml:5:9: tasks is [4, 0]",
        "each 1 to",
    );
    one_error(
        "\"hyperbolic\"]",
        "\"edf-qpa\"]",
        "s.toml:6:21: test `edf-qpa` is listed twice",
        "each test once",
    );
    one_error(
        "\"harmonic\"",
        "\"random\"",
        "s.toml:9:8: unknown period kind `random`",
        "log-uniform",
    );
    one_error(
        "max = \"64ms\"",
        "max = \"64us\"",
        "s.toml:11:7: max period 64000ns is below min period 1000000ns",
        "at least min",
    );
    one_error(
        "from = 0.1",
        "from = 0.0",
        "s.toml:14:8: utilisation from is 0",
        "above 0.0",
    );
    one_error(
        "to = 0.3",
        "to = 0.05",
        "s.toml:15:6: utilisation to (0.05) is below from (0.1)",
        "at least from",
    );
    one_error(
        "constrained-fraction = 0.25",
        "constrained-fraction = 2.0",
        "s.toml:19:24: constrained-fraction is 2",
        "0.0 to 1.0",
    );
    one_error(
        "seed = 1",
        "seed = 1\ncolour = 2",
        "s.toml:3:1: unknown field `colour`",
        "sets-per-point",
    );
}
