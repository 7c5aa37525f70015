//! `bulwark sweep` beyond one processor and one analysis: randfixedsum sets above U = 1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn bulwark(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bulwark"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("bulwark runs")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const MULTI: &str = r#"name = "multi"
seed = 5
sets-per-point = 20
generator = "randfixedsum"
tasks = 4
tests = ["fp-rta-rm", "edf-qpa"]

[periods]
kind = "log-uniform"
min = "1ms"
max = "100ms"

[utilisation]
from = 0.5
to = 2.0
step = 0.5
"#;

/// Above one processor every uniprocessor test refuses every set; at U = 0.5 the exact EDF
/// test admits every implicit-deadline set (U <= 1 is exact for EDF, Liu and Layland).
#[test]
fn randfixedsum_sweeps_past_one_processor() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "multi.toml", MULTI);
    let run = bulwark(&["sweep", &file]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let csv = String::from_utf8_lossy(&run.stdout).into_owned();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        [
            "tasks,utilisation,sets,fp-rta-rm,edf-qpa",
            lines[1],
            lines[2],
            "4,1.5,20,0.000000,0.000000",
            "4,2,20,0.000000,0.000000",
        ]
    );
    assert!(lines[1].starts_with("4,0.5,20,") && lines[1].ends_with(",1.000000"));
    assert!(lines[2].starts_with("4,1,20,"));
}

#[test]
fn the_uniprocessor_generators_point_to_randfixedsum_above_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "bad.toml",
        &MULTI.replace("\"randfixedsum\"", "\"uunifast\""),
    );
    let run = bulwark(&["sweep", &file]);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    // Line 15 is `to = 2.0`, the value at column 6.
    assert!(
        stderr.contains("bad.toml:15:6: utilisation to is 2"),
        "{stderr}"
    );
    assert!(stderr.contains("randfixedsum"), "{stderr}");
}
