//! The hostile-input suite: every file in `tests/hostile/` run through the real `bulwark`
//! binary, as a user would, with the answer its `.expected` sidecar gives.
//!
//! A sidecar holds, one per line:
//! - `# ...`: how the location was worked out (by hand, from the file's text);
//! - `exit N`: the exit status every listed command must give (2 bad input, 0 accepted);
//! - `commands check simulate analyze`: the commands to run on the file;
//! - `error LINE:COLUMN FRAGMENT` or `warning LINE:COLUMN FRAGMENT`: a diagnostic that must
//!   appear on standard error as `FILE:LINE:COLUMN: ...FRAGMENT...` (warnings prefixed by
//!   `warning: `).
//!
//! Beyond the sidecar, every run must: not panic (no exit 101, no "panicked"), finish within
//! 10 seconds (it is killed and the test fails otherwise), and locate every diagnostic it
//! prints about the file (`FILE:LINE:COLUMN:`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest any one run may take.
const TIME_LIMIT: Duration = Duration::from_secs(10);

fn hostile_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// One expected diagnostic.
#[derive(Debug)]
struct Expected {
    warning: bool,
    line: usize,
    column: usize,
    fragment: String,
}

#[derive(Debug)]
struct Sidecar {
    exit: i32,
    commands: Vec<String>,
    diagnostics: Vec<Expected>,
}

fn sidecar(path: &Path) -> Result<Sidecar, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut exit = None;
    let mut commands = Vec::new();
    let mut diagnostics = Vec::new();
    for line in text.lines() {
        let bad = || format!("{}: cannot read `{line}`", path.display());
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (key, rest) = line.split_once(' ').ok_or_else(bad)?;
        match key {
            "exit" => exit = Some(rest.trim().parse::<i32>().map_err(|_| bad())?),
            "commands" => commands = rest.split_whitespace().map(str::to_owned).collect(),
            "error" | "warning" => {
                let (at, fragment) = rest.split_once(' ').unwrap_or((rest, ""));
                let (l, c) = at.split_once(':').ok_or_else(bad)?;
                diagnostics.push(Expected {
                    warning: key == "warning",
                    line: l.parse().map_err(|_| bad())?,
                    column: c.parse().map_err(|_| bad())?,
                    fragment: fragment.to_owned(),
                });
            }
            _ => return Err(bad()),
        }
    }
    let exit = exit.ok_or_else(|| format!("{}: no `exit` line", path.display()))?;
    if commands.is_empty() {
        return Err(format!("{}: no `commands` line", path.display()));
    }
    Ok(Sidecar {
        exit,
        commands,
        diagnostics,
    })
}

/// What one run gave: its exit status (`None` when killed by a signal), its standard error
/// and how long it took; `Err` when it ran over [`TIME_LIMIT`] and was killed.
fn run(command: &str, file: &Path) -> Result<(Option<i32>, String, Duration), String> {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .arg(command)
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start bulwark: {e}"))?;
    // Read standard error on its own thread so a full pipe cannot stall the child.
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => {
                let bytes = reader.join().unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes).into_owned();
                return Ok((status.code(), text, start.elapsed()));
            }
            None if start.elapsed() > TIME_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("ran over {TIME_LIMIT:?} and was killed"));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// `FILE:LINE:COLUMN: ` at the start of `line`, after `file`; `None` when not located.
fn location(line: &str, file: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix(file)?.strip_prefix(':')?;
    let mut parts = rest.splitn(3, ':');
    let l = parts.next()?.parse().ok()?;
    let c = parts.next()?.parse().ok()?;
    parts.next()?.starts_with(' ').then_some((l, c))
}

/// Every problem with one run, as text (empty when it behaved).
fn judge(name: &str, command: &str, file: &str, expected: &Sidecar) -> Vec<String> {
    let what = format!("{name} ({command})");
    let (code, stderr, took) = match run(command, Path::new(file)) {
        Ok(result) => result,
        Err(why) => return vec![format!("{what}: {why}")],
    };
    let mut problems = Vec::new();
    if code == Some(101) || stderr.contains("panicked") {
        problems.push(format!("{what}: panicked: {stderr}"));
    }
    if code != Some(expected.exit) {
        problems.push(format!(
            "{what}: exit {code:?}, expected {}: {stderr}",
            expected.exit
        ));
    }
    if took > TIME_LIMIT {
        problems.push(format!("{what}: took {took:?}"));
    }
    let mut located = 0;
    for line in stderr.lines() {
        let (body, _) = match line.strip_prefix("warning: ") {
            Some(rest) => (rest, true),
            None => (line, false),
        };
        if body.starts_with(file) {
            match location(body, file) {
                Some(_) => located += 1,
                None => problems.push(format!("{what}: not located: {line}")),
            }
        }
    }
    if expected.exit == 2 && located == 0 {
        problems.push(format!("{what}: no located error: {stderr}"));
    }
    for want in &expected.diagnostics {
        let prefix = if want.warning { "warning: " } else { "" };
        let found = stderr.lines().any(|line| {
            line.strip_prefix(prefix)
                .and_then(|body| location(body, file))
                .is_some_and(|at| at == (want.line, want.column))
                && line.contains(&want.fragment)
        });
        if !found {
            problems.push(format!(
                "{what}: missing {prefix}{file}:{}:{}: ...{}... in:\n{stderr}",
                want.line, want.column, want.fragment
            ));
        }
    }
    if expected.diagnostics.iter().all(|d| !d.warning) && expected.exit == 0 {
        if let Some(line) = stderr.lines().find(|l| !l.trim().is_empty()) {
            problems.push(format!("{what}: expected a quiet run, got: {line}"));
        }
    }
    problems
}

#[test]
fn every_hostile_file_gets_a_located_answer_in_bounded_time() {
    let dir = hostile_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/hostile exists")
        .map(|entry| entry.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "camkes"))
        .collect();
    files.sort();
    assert!(files.len() >= 100, "only {} hostile files", files.len());
    // Every file kind is covered: scenario, component and MC-IPC TOML, and CAmkES.
    for prefix in ["s_", "c_", "m_", "k_"] {
        let n = files
            .iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .count();
        assert!(n >= 20, "only {n} files of kind {prefix}");
    }
    let mut problems = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let expected = match sidecar(&path.with_extension("expected")) {
            Ok(e) => e,
            Err(why) => {
                problems.push(why);
                continue;
            }
        };
        let file = path.to_str().expect("UTF-8 path");
        for command in &expected.commands {
            problems.extend(judge(&name, command, file, &expected));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn locations_are_read_only_when_whole() {
    assert_eq!(location("f.toml:3:14: x", "f.toml"), Some((3, 14)));
    assert_eq!(location("f.toml: cannot read", "f.toml"), None);
    assert_eq!(location("f.toml:3: x", "f.toml"), None);
    assert_eq!(location("g.toml:3:1: x", "f.toml"), None);
}
