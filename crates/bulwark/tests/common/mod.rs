//! What every CLI test file needs: the repository root and the `bulwark` binary run from it,
//! as users run it. Each test file uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root, where `scenarios/` is.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs the `bulwark` binary with `args` from the repository's root.
pub fn bulwark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("bulwark runs")
}

/// Writes `contents` to `name` in a fresh directory; the directory lives as long as the
/// returned guard.
pub fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, contents).expect("write");
    (dir, path)
}

/// Output bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The example sweep experiment written into `dir` with 10 sets per point instead of 200, to
/// keep a test short; returns its path.
pub fn small_sweep_example(dir: &Path) -> String {
    let text = std::fs::read_to_string(root().join("scenarios/sweeps/fp-vs-edf.toml")).unwrap();
    assert!(text.contains("sets-per-point = 200"));
    let path = dir.join("small.toml");
    std::fs::write(
        &path,
        text.replace("sets-per-point = 200", "sets-per-point = 10"),
    )
    .unwrap();
    path.display().to_string()
}

/// Asserts that `text` (a command's output) contains `part`, showing the whole text if not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{text}");
}

/// Asserts that `text` (a command's output) ends with `end`, showing the whole text if not.
#[track_caller]
pub fn assert_ends_with(text: &str, end: &str) {
    assert!(text.ends_with(end), "{text}");
}

/// Runs `bulwark` with `args` and asserts that it exits with `code`, showing both outputs if
/// not.
#[track_caller]
pub fn output_of(args: &[&str], code: i32) -> Output {
    let out = bulwark(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(code), "{stdout}{stderr}");
    out
}

/// The standard output of [`output_of`].
#[track_caller]
pub fn stdout_of(args: &[&str], code: i32) -> String {
    text(&output_of(args, code).stdout)
}

/// The standard output of [`output_of`], read as JSON.
#[track_caller]
pub fn json_of(args: &[&str], code: i32) -> serde_json::Value {
    serde_json::from_slice(&output_of(args, code).stdout).expect("JSON")
}
