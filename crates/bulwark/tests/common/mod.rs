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
