//! `bulwark sweep slurm`: the scripts it writes, run here without Slurm (each array task by
//! hand, then the merge), give the unsplit sweep's files byte for byte; submit.sh chains the
//! merge on the array with afterok; wrong arguments exit 2 and say what is allowed.

mod common;

use common::{assert_contains, bulwark, output_of, root};

use std::path::Path;
use std::process::{Command, Output};

fn bash(script: &Path, task: Option<u64>) -> Output {
    let mut command = Command::new("bash");
    command.arg(script).env_remove("SLURM_ARRAY_TASK_ID");
    if let Some(task) = task {
        command.env("SLURM_ARRAY_TASK_ID", task.to_string());
    }
    command.output().expect("bash runs")
}

fn assert_ok(output: &Output) {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `bulwark sweep slurm FILE --shards 3 --out DIR`.
fn write_scripts(file: &str, out: &Path) -> Output {
    bulwark(&[
        "sweep",
        "slurm",
        file,
        "--shards",
        "3",
        "--out",
        out.to_str().unwrap(),
    ])
}

fn small_example(dir: &Path) -> String {
    common::small_sweep_example(dir)
}

#[test]
fn array_tasks_run_here_then_merged_equal_the_unsplit_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_example(dir.path());
    let whole = dir.path().join("whole");
    assert_ok(&bulwark(&[
        "sweep",
        &file,
        "--out",
        whole.to_str().unwrap(),
    ]));

    let slurm = dir.path().join("slurm");
    let written = write_scripts(&file, &slurm);
    assert_ok(&written);
    let slurm = slurm.canonicalize().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&written.stdout),
        format!("bash '{}'\n", slurm.join("submit.sh").display())
    );
    let array = std::fs::read_to_string(slurm.join("sweep.sbatch")).unwrap();
    // Three shards are array tasks 0, 1 and 2.
    assert!(
        array.lines().any(|line| line == "#SBATCH --array=0-2"),
        "{array}"
    );
    assert_contains(&array, "--shard \"$SLURM_ARRAY_TASK_ID/3\"");

    // #SBATCH lines are comments to bash: run each array task as Slurm would, then the merge.
    for task in 0..3 {
        assert_ok(&bash(&slurm.join("sweep.sbatch"), Some(task)));
        assert!(slurm
            .join(format!("shards/shard-{task}-of-3.json"))
            .exists());
    }
    assert!(!slurm.join("results.csv").exists());
    assert_ok(&bash(&slurm.join("merge.sbatch"), None));
    for name in ["results.csv", "results.json"] {
        let merged = std::fs::read(slurm.join(name)).unwrap();
        let unsplit = std::fs::read(whole.join(name)).unwrap();
        assert!(merged == unsplit, "{name} differs from the unsplit run's");
    }
}

#[test]
fn an_array_task_without_its_index_and_a_merge_missing_a_shard_fail() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_example(dir.path());
    let slurm = dir.path().join("slurm");
    assert_ok(&write_scripts(&file, &slurm));
    let unset = bash(&slurm.join("sweep.sbatch"), None);
    assert_ne!(unset.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&unset.stderr).contains("SLURM_ARRAY_TASK_ID"));
    // Shards 0 and 2 only: the merge names all three files, so it fails instead of merging two.
    for task in [0, 2] {
        assert_ok(&bash(&slurm.join("sweep.sbatch"), Some(task)));
    }
    let merge = bash(&slurm.join("merge.sbatch"), None);
    assert_ne!(merge.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&merge.stderr).contains("shard-1-of-3.json"),
        "{}",
        String::from_utf8_lossy(&merge.stderr)
    );
    assert!(!slurm.join("results.csv").exists());
}

#[test]
fn submit_chains_the_merge_on_the_array_with_afterok() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_example(dir.path());
    let slurm = dir.path().join("slurm");
    assert_ok(&write_scripts(&file, &slurm));
    // A stand-in sbatch: logs its arguments and answers --parsable as Slurm does ("id;cluster").
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("sbatch.log");
    std::fs::write(
        bin.join("sbatch"),
        format!(
            "#!/bin/bash\necho \"$*\" >> '{}'\necho '4242;cluster'\n",
            log.display()
        ),
    )
    .unwrap();
    let status = Command::new("chmod")
        .arg("+x")
        .arg(bin.join("sbatch"))
        .status()
        .unwrap();
    assert!(status.success());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let submit = Command::new("bash")
        .arg(slurm.join("submit.sh"))
        .env("PATH", path)
        .output()
        .unwrap();
    assert_ok(&submit);
    let slurm = slurm.canonicalize().unwrap();
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls,
        [
            format!("--parsable {}", slurm.join("sweep.sbatch").display()),
            format!(
                "--dependency=afterok:4242 {}",
                slurm.join("merge.sbatch").display()
            ),
        ]
    );
    assert!(slurm.join("logs").is_dir());
}

#[test]
fn wrong_arguments_exit_2_and_say_what_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_example(dir.path());
    let out = dir.path().join("slurm");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--shards", "0", "--out", out],
            "--shards 0 is out of range (allowed: 1 to 100000)",
        ),
        (
            &["--shards", "100001", "--out", out],
            "--shards 100001 is out of range",
        ),
        (
            &["--shards", "2", "--out", out, "--bulwark", "target/bulwark"],
            "--bulwark target/bulwark is a relative path (allowed: an absolute path",
        ),
        (
            &["--shards", "2", "--out", "has blank"],
            "cannot hold (allowed: a path without blanks",
        ),
        (&["--shards", "two", "--out", out], "invalid value 'two'"),
    ];
    for (args, message) in cases {
        let mut full = vec!["sweep", "slurm", file.as_str()];
        full.extend_from_slice(args);
        let run = bulwark(&full);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // Nothing was written for a refused call.
    assert!(!Path::new(out).exists());
    assert!(!root().join("has blank").exists());

    // A missing experiment file is named, before any script is written.
    let missing = dir.path().join("missing.toml");
    let run = output_of(
        &[
            "sweep",
            "slurm",
            missing.to_str().unwrap(),
            "--shards",
            "2",
            "--out",
            out,
        ],
        2,
    );
    assert!(String::from_utf8_lossy(&run.stderr).contains("missing.toml"));
    assert!(!Path::new(out).exists());
}
