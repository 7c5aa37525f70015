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
    // Below a billionth a value would be read as another: a `from` as utilisation 0, a
    // `step` as 1e-9.
    one_error(
        "from = 0.1",
        "from = 1e-12",
        "s.toml:14:8: utilisation from is 0.000000000001",
        "counts in billionths",
    );
    one_error(
        "step = 0.1",
        "step = 4e-10",
        "s.toml:16:8: utilisation step is 0.0000000004",
        "counts in billionths",
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

/// VALID with `vbs-eq2` listed and `line` added after the seed (so `line` is line 3).
fn with_vbs(line: &str) -> String {
    VALID
        .replace("\"hyperbolic\"]", "\"vbs-eq2\"]")
        .replace("seed = 1\n", &format!("seed = 1\n{line}\n"))
}

/// The single error of `text`, as `file:line:column: message` and its help.
fn only_error(text: &str) -> (String, String) {
    let errors = parse_sweep(text, "s.toml").unwrap_err();
    assert_eq!(errors.errors().len(), 1, "{}", errors.plain());
    let error = &errors.errors()[0];
    (error.to_string(), error.help().to_owned())
}

#[test]
fn vbs_periods_per_job_defaults_to_4_and_is_bounded() {
    let plain = parse_sweep(&with_vbs(""), "s.toml").unwrap();
    assert_eq!(plain.tests, ["edf-qpa", "vbs-eq2"]);
    assert_eq!(plain.vbs_periods_per_job, 4);
    let seven = parse_sweep(&with_vbs("vbs-periods-per-job = 7"), "s.toml").unwrap();
    assert_eq!(seven.vbs_periods_per_job, 7);
    // `vbs-periods-per-job = ` is 22 characters: the value starts at column 23 of line 3.
    for (value, shown) in [("0", "0"), ("-3", "-3"), ("1000001", "1000001")] {
        let (message, help) = only_error(&with_vbs(&format!("vbs-periods-per-job = {value}")));
        assert_eq!(
            message,
            format!("s.toml:3:23: vbs-periods-per-job is {shown}")
        );
        assert!(help.contains("1 to 1000000"), "{help}");
    }
    let (message, _) = only_error(&with_vbs("vbs-periods-per-job = \"four\""));
    assert!(message.starts_with("s.toml:3:23: "), "{message}");
    // Without the test it would mean nothing.
    let unused = VALID.replace("seed = 1\n", "seed = 1\nvbs-periods-per-job = 2\n");
    let (message, help) = only_error(&unused);
    assert_eq!(
        message,
        "s.toml:3:23: vbs-periods-per-job without the vbs-eq2 test"
    );
    assert!(help.contains("\"vbs-eq2\""), "{help}");
}

/// The simulation does not run VBS: asking for both is refused at the test's name, not
/// counted as checked. Line 7 is `tests = ["edf-qpa", "vbs-eq2"]`; "vbs-eq2" starts at
/// column 21.
#[test]
fn vbs_eq2_cannot_be_simulated() {
    let (message, help) = only_error(&with_vbs("simulate = true"));
    assert_eq!(message, "s.toml:7:21: test `vbs-eq2` cannot be simulated");
    assert!(help.contains("simulate = false"), "{help}");
}

/// VALID with `mcipc-budget` listed and `table` appended.
fn with_server(table: &str) -> String {
    VALID.replace("\"hyperbolic\"]", "\"mcipc-budget\"]") + table
}

#[test]
fn the_mcipc_server_table_reads_with_defaults() {
    // VALID ends on line 19; a blank line 20, the table header on 21.
    let e = parse_sweep(
        &with_server("\n[mcipc-server]\noperation-length = \"50us\"\n"),
        "s.toml",
    )
    .unwrap();
    let server = e.mcipc_server.unwrap();
    assert_eq!(
        (server.invocations, server.operation_length, server.clusters),
        (1, 50_000, 1)
    );
    let e = parse_sweep(
        &with_server(
            "\n[mcipc-server]\ninvocations = 3\noperation-length = \"0ns\"\nclusters = 4\n",
        ),
        "s.toml",
    )
    .unwrap();
    let server = e.mcipc_server.unwrap();
    assert_eq!(
        (server.invocations, server.operation_length, server.clusters),
        (3, 0, 4)
    );
    assert_eq!(parse_sweep(VALID, "s.toml").unwrap().mcipc_server, None);
}

#[test]
fn the_mcipc_server_table_is_checked() {
    // Line 6 is `tests = ["edf-qpa", "mcipc-budget"]`; the name starts at column 21.
    let (message, help) = only_error(&with_server(""));
    assert_eq!(
        message,
        "s.toml:6:21: test `mcipc-budget` without a [mcipc-server] table"
    );
    assert!(help.contains("operation-length"), "{help}");
    // The table without the test: at its header, line 21.
    let table = "\n[mcipc-server]\noperation-length = \"50us\"\n";
    let (message, help) = only_error(&(VALID.to_owned() + table));
    assert_eq!(
        message,
        "s.toml:21:1: a [mcipc-server] table without the mcipc-budget test"
    );
    assert!(help.contains("\"mcipc-budget\""), "{help}");
    // Line 22 holds the key under test; `invocations = ` is 14 characters, `clusters = ` 11.
    let (message, help) = only_error(&with_server(
        "\n[mcipc-server]\ninvocations = -1\noperation-length = \"50us\"\n",
    ));
    assert_eq!(message, "s.toml:22:15: invocations is -1");
    assert!(help.contains("0 to 1000000"), "{help}");
    let (message, help) = only_error(&with_server(
        "\n[mcipc-server]\nclusters = 0\noperation-length = \"50us\"\n",
    ));
    assert_eq!(message, "s.toml:22:12: clusters is 0");
    assert!(help.contains("1 to 4096"), "{help}");
    // `operation-length = ` is 19 characters.
    let (message, _) = only_error(&with_server(
        "\n[mcipc-server]\noperation-length = \"-5us\"\n",
    ));
    assert!(message.starts_with("s.toml:22:20: "), "{message}");
    let (message, _) = only_error(&with_server("\n[mcipc-server]\noperation-length = 50\n"));
    assert!(message.starts_with("s.toml:22:20: "), "{message}");
    // A missing key and an unknown key: located in the table.
    let (message, _) = only_error(&with_server("\n[mcipc-server]\ninvocations = 2\n"));
    assert!(message.starts_with("s.toml:21:1: "), "{message}");
    assert!(message.contains("operation-length"), "{message}");
    // mcipc-budget cannot be simulated either.
    let (message, _) = only_error(
        &with_server("\n[mcipc-server]\noperation-length = \"50us\"\n")
            .replace("seed = 1\n", "seed = 1\nsimulate = true\n"),
    );
    assert_eq!(
        message,
        "s.toml:7:21: test `mcipc-budget` cannot be simulated"
    );
}

/// VALID with `component-rta` listed and `table` appended.
fn with_components(table: &str) -> String {
    VALID.replace("\"hyperbolic\"]", "\"component-rta\"]") + table
}

#[test]
fn the_components_table_reads_with_defaults() {
    use bulwark_spec::sweep_toml::{ComponentSplit, Components};
    let e = parse_sweep(
        &with_components("\n[components]\nconfiguration = 3\n"),
        "s.toml",
    )
    .unwrap();
    assert_eq!(
        e.components,
        Some(Components {
            configuration: 3,
            split: ComponentSplit::Equal
        })
    );
    let e = parse_sweep(
        &with_components("\n[components]\nconfiguration = 4\nsplit = \"short-sections\"\n"),
        "s.toml",
    )
    .unwrap();
    assert_eq!(e.components.unwrap().split, ComponentSplit::ShortSections);
    assert_eq!(parse_sweep(VALID, "s.toml").unwrap().components, None);
}

#[test]
fn the_components_table_is_checked() {
    // Line 6 is `tests = ["edf-qpa", "component-rta"]`; the name starts at column 21.
    let (message, help) = only_error(&with_components(""));
    assert_eq!(
        message,
        "s.toml:6:21: test `component-rta` without a [components] table"
    );
    assert!(help.contains("configuration = 1"), "{help}");
    // The table without a component test: at its header, line 21.
    let (message, help) = only_error(&(VALID.to_owned() + "\n[components]\nconfiguration = 1\n"));
    assert_eq!(
        message,
        "s.toml:21:1: a [components] table without a component test"
    );
    assert!(help.contains("component-eq2"), "{help}");
    // Line 22 holds the key under test; `configuration = ` is 16 characters, `split = ` 8.
    for bad in [0, 5, -1] {
        let (message, help) = only_error(&with_components(&format!(
            "\n[components]\nconfiguration = {bad}\n"
        )));
        assert_eq!(message, format!("s.toml:22:17: configuration is {bad}"));
        assert!(help.contains("1, 2, 3 or 4"), "{help}");
    }
    let (message, help) = only_error(&with_components(
        "\n[components]\nsplit = \"halves\"\nconfiguration = 1\n",
    ));
    assert_eq!(message, "s.toml:22:9: unknown split `halves`");
    assert!(help.contains("\"short-sections\""), "{help}");
    // Not simulated: line 7 `simulate = true` after the tests, the error at the test name.
    let simulated = with_components("\n[components]\nconfiguration = 1\n")
        .replace("tests = [", "simulate = true\ntests = [");
    let (message, _) = only_error(&simulated);
    assert_eq!(
        message,
        "s.toml:7:21: test `component-rta` cannot be simulated"
    );
}

/// VALID with `amc-rtb-dm` listed and `table` appended.
fn with_criticality(table: &str) -> String {
    VALID.replace("\"hyperbolic\"]", "\"amc-rtb-dm\"]") + table
}

#[test]
fn the_criticality_table_reads_with_defaults_and_is_checked() {
    use bulwark_spec::sweep_toml::Criticality;
    let e = parse_sweep(&with_criticality("\n[criticality]\n"), "s.toml").unwrap();
    assert_eq!(
        e.criticality,
        Some(Criticality {
            factor_ppb: 2_000_000_000,
            high_ppb: 500_000_000
        })
    );
    let table = "\n[criticality]\nfactor = 1.5\nhigh-fraction = 0.25\n";
    let e = parse_sweep(&with_criticality(table), "s.toml").unwrap();
    let criticality = e.criticality.unwrap();
    assert_eq!(
        (criticality.factor_ppb, criticality.high_ppb),
        (1_500_000_000, 250_000_000)
    );
    assert_eq!(parse_sweep(VALID, "s.toml").unwrap().criticality, None);
    // Line 6 is `tests = ["edf-qpa", "amc-rtb-dm"]`; the name starts at column 21.
    let (message, help) = only_error(&with_criticality(""));
    assert_eq!(
        message,
        "s.toml:6:21: test `amc-rtb-dm` without a [criticality] table"
    );
    assert!(help.contains("factor = 2.0"), "{help}");
    let (message, _) = only_error(&(VALID.to_owned() + "\n[criticality]\n"));
    assert_eq!(
        message,
        "s.toml:21:1: a [criticality] table without a mixed-criticality test"
    );
    // Line 22 holds the key under test; `factor = ` is 9 characters, `high-fraction = ` 16.
    let (message, help) = only_error(&with_criticality("\n[criticality]\nfactor = 0.5\n"));
    assert_eq!(message, "s.toml:22:10: factor is 0.5");
    assert!(help.contains("from 1 to 100"), "{help}");
    let (message, _) = only_error(&with_criticality("\n[criticality]\nhigh-fraction = 1.5\n"));
    assert_eq!(message, "s.toml:22:17: high-fraction is 1.5");
    // Not simulated: the sweep's machine does not run the mode switch.
    let simulated = with_criticality("\n[criticality]\n")
        .replace("tasks = 4\n", "tasks = 4\nsimulate = true\n");
    let (message, _) = only_error(&simulated);
    assert!(message.contains("amc-rtb-dm"), "{message}");
    // The worst-case reservation tests read the same table, and are not simulated either.
    for test in ["wcr-rta-dm", "wcr-edf"] {
        let listed = VALID.replace("\"hyperbolic\"]", &format!("\"{test}\"]"));
        let e = parse_sweep(&(listed.clone() + "\n[criticality]\n"), "s.toml").unwrap();
        assert!(e.criticality.is_some(), "{test}");
        let (message, _) = only_error(&listed);
        assert_eq!(
            message,
            format!("s.toml:6:21: test `{test}` without a [criticality] table")
        );
        let simulated =
            (listed + "\n[criticality]\n").replace("tasks = 4\n", "tasks = 4\nsimulate = true\n");
        let (message, _) = only_error(&simulated);
        assert!(message.contains(test), "{message}");
    }
}

/// The global mixed-criticality tests read both tables: each one missing is named at the
/// test, and with both the file reads into its cores and criticality.
#[test]
fn the_global_mixed_criticality_tests_need_both_tables() {
    for test in ["global-amc-rtb-dm", "global-wcr-rta-dm"] {
        let listed = VALID.replace("\"hyperbolic\"]", &format!("\"{test}\"]"));
        let both = listed.clone() + "\n[criticality]\n\n[multiprocessor]\ncores = 2\n";
        let e = parse_sweep(&both, "s.toml").unwrap();
        assert_eq!(
            (e.cores, e.criticality.is_some()),
            (Some(2), true),
            "{test}"
        );
        let (message, _) = only_error(&(listed.clone() + "\n[criticality]\n"));
        assert_eq!(
            message,
            format!("s.toml:6:21: test `{test}` without a [multiprocessor] table")
        );
        let (message, _) = only_error(&(listed + "\n[multiprocessor]\ncores = 2\n"));
        assert_eq!(
            message,
            format!("s.toml:6:21: test `{test}` without a [criticality] table")
        );
    }
}

/// VALID with `global-edf-bcl` listed and `table` appended.
fn with_multiprocessor(table: &str) -> String {
    VALID.replace("\"hyperbolic\"]", "\"global-edf-bcl\"]") + table
}

#[test]
fn the_multiprocessor_table_gives_the_global_tests_their_cores() {
    let e = parse_sweep(
        &with_multiprocessor("\n[multiprocessor]\ncores = 4\n"),
        "s.toml",
    );
    assert_eq!(e.unwrap().cores, Some(4));
    assert_eq!(parse_sweep(VALID, "s.toml").unwrap().cores, None);
    // Line 6 is `tests = ["edf-qpa", "global-edf-bcl"]`; the name starts at column 21.
    let (message, help) = only_error(&with_multiprocessor(""));
    assert_eq!(
        message,
        "s.toml:6:21: test `global-edf-bcl` without a [multiprocessor] table"
    );
    assert!(help.contains("cores = 4"), "{help}");
    let (message, _) = only_error(&(VALID.to_owned() + "\n[multiprocessor]\ncores = 2\n"));
    assert_eq!(
        message,
        "s.toml:21:1: a [multiprocessor] table without a global test"
    );
    // Line 22 holds `cores = `, 8 characters.
    for bad in [0, -3, 1025, 70_000] {
        let (message, help) = only_error(&with_multiprocessor(&format!(
            "\n[multiprocessor]\ncores = {bad}\n"
        )));
        assert_eq!(message, format!("s.toml:22:9: cores is {bad}"));
        assert!(help.contains("from 1 to 1024"), "{help}");
    }
    let (message, _) = only_error(&with_multiprocessor("\n[multiprocessor]\nm = 2\n"));
    assert!(message.contains("unknown field `m`"), "{message}");
    // Not simulated: the sweep's machine runs one core.
    let simulated = with_multiprocessor("\n[multiprocessor]\ncores = 2\n")
        .replace("tasks = 4\n", "tasks = 4\nsimulate = true\n");
    let (message, _) = only_error(&simulated);
    assert!(message.contains("global-edf-bcl"), "{message}");
}
