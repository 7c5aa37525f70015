//! Helpers shared by the file-format tests: time shorthands, reading MC-IPC texts, and the
//! harness that holds a directory of invalid fixtures to the diagnostics written beside them.
#![allow(dead_code)]

use std::fmt::Debug;
use std::fs;
use std::path::{Path, PathBuf};

use bulwark_core::Duration;
use bulwark_spec::Diagnostics;

pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub const fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// `relative` below this crate's directory.
pub fn crate_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The fixtures in `dir` with the given extension, sorted by name.
pub fn fixtures(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{} exists: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == extension))
        .collect();
    paths.sort();
    paths
}

pub fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("fixture has a file name")
        .to_string_lossy()
        .into_owned()
}

/// The diagnostics `parse` rejects the fixture at `path` with; panics if it accepts it.
pub fn rejection<T: Debug>(
    path: &Path,
    parse: impl FnOnce(&str, &str) -> Result<T, Diagnostics>,
) -> Diagnostics {
    let source = fs::read_to_string(path).expect("fixture is readable");
    match parse(&source, &file_name(path)) {
        Ok(accepted) => panic!("{} was accepted: {accepted:#?}", path.display()),
        Err(diagnostics) => diagnostics,
    }
}

/// The help of the error of a rejected file whose message contains `message`.
pub fn help_of<T: Debug>(result: Result<T, Diagnostics>, message: &str) -> String {
    let diagnostics = result.expect_err("rejected");
    let error = (diagnostics.errors().iter())
        .find(|e| e.plain().contains(message))
        .unwrap_or_else(|| panic!("no error says `{message}`: {}", diagnostics.plain()));
    error.help().to_owned()
}

/// The first error of a refused file, as `file:line:column: message`, and its help.
pub fn first_error<T>(result: Result<T, Diagnostics>) -> (String, String) {
    let diagnostics = result.err().expect("the file is refused");
    let error = &diagnostics.errors()[0];
    (error.to_string(), error.help().to_owned())
}

/// A component system: the active component `c` with one task (priority 10, period 10 ms,
/// then the lines `task_keys`, from line 9) calls the passive component `s`'s CPI `work`
/// (inherited priorities); `tail` follows the last line, 20 (or 19 plus `task_keys`' lines).
pub fn client_server_components(task_keys: &str, tail: &str) -> String {
    format!(
        r#"[[component]]
name = "c"
kind = "active"

[[component.task]]
name = "c"
priority = 10
period = "10ms"
{task_keys}
[[component]]
name = "s"
kind = "passive"

[[component.cpi]]
name = "work"
protocol = "inherited"

[[connection]]
from = "c"
to = "s.work"
{tail}"#
    )
}

/// One `file:line:column: message` line per error.
pub fn lines_of(diagnostics: &Diagnostics) -> String {
    diagnostics
        .errors()
        .iter()
        .map(|e| format!("{e}\n"))
        .collect()
}

/// Every fixture gives exactly the lines of the `.expected` file beside it.
pub fn assert_expected_diagnostics(
    paths: Vec<PathBuf>,
    diagnostics_of: impl Fn(&Path) -> Diagnostics,
) {
    let mut mismatches = Vec::new();
    for path in paths {
        let expected_path = path.with_extension("expected");
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        let actual = lines_of(&diagnostics_of(&path));
        if actual != expected {
            mismatches.push(format!(
                "{}\n--- expected\n{expected}--- actual\n{actual}",
                file_name(&path)
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));
}

/// Every error of the fixture `name` points into it (line, column and span) and has a help,
/// and the errors come in file order.
pub fn assert_located_in_file_order(diagnostics: &Diagnostics, name: &str) {
    for error in diagnostics {
        assert_eq!(error.file(), name);
        assert!(error.line().is_some_and(|l| l >= 1), "{error}");
        assert!(error.column().is_some_and(|c| c >= 1), "{error}");
        assert!(error.span().is_some(), "{error}");
        assert!(!error.help().is_empty(), "{error}: no help");
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

/// There are at least `at_least` fixtures, and each is rejected with errors that are located,
/// helpful and one line each (non-empty messages), in file order. Returns their diagnostics.
pub fn assert_fixtures_rejected_helpfully(
    paths: Vec<PathBuf>,
    at_least: usize,
    diagnostics_of: impl Fn(&Path) -> Diagnostics,
) -> Vec<Diagnostics> {
    assert!(paths.len() >= at_least, "only {} fixtures", paths.len());
    let mut all = Vec::new();
    for path in paths {
        let diagnostics = diagnostics_of(&path);
        let name = file_name(&path);
        assert!(!diagnostics.is_empty(), "{name}: no errors");
        for error in &diagnostics {
            assert!(!error.message().is_empty(), "{error}");
            assert!(!error.message().contains('\n') && !error.help().contains('\n'));
        }
        assert_located_in_file_order(&diagnostics, &name);
        all.push(diagnostics);
    }
    all
}

/// Reading and rejecting MC-IPC texts, all named `f.toml`.
pub mod mc_ipc {
    use bulwark_spec::mc_ipc_toml::McIpcSystem;
    use bulwark_spec::parse_mc_ipc;

    pub fn read(text: &str) -> McIpcSystem {
        match parse_mc_ipc(text, "f.toml") {
            Ok(system) => system,
            Err(d) => panic!("{}", d.plain()),
        }
    }

    pub fn errors(text: &str) -> Vec<String> {
        match parse_mc_ipc(text, "f.toml") {
            Ok(system) => panic!("accepted: {system:#?}"),
            Err(d) => d.errors().iter().map(|e| e.to_string()).collect(),
        }
    }

    /// The first error of a wrong text is `error`, with the help `help`.
    #[track_caller]
    pub fn assert_first_error(text: &str, error: &str, help: &str) {
        let (actual, actual_help) = super::first_error(parse_mc_ipc(text, "f.toml"));
        assert_eq!((actual.as_str(), actual_help.as_str()), (error, help));
    }
}
