//! `bulwark sweep`: the example experiment runs, shards merged through the CLI equal the
//! single run byte for byte, and bad input is located and exits 2.

mod common;

use common::{assert_contains, output_of, root};

use std::path::Path;

fn small_example(dir: &Path) -> String {
    common::small_sweep_example(dir)
}

#[test]
fn the_example_runs_and_shards_merge_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_example(dir.path());
    let whole_dir = dir.path().join("whole");
    let run = output_of(&["sweep", &file, "--out", whole_dir.to_str().unwrap()], 0);
    let csv = std::fs::read_to_string(whole_dir.join("results.csv")).unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "tasks,utilisation,sets,liu-layland,hyperbolic,fp-rta-rm,fp-rta-dm,fp-audsley,\
         edf-utilisation,edf-qpa"
    );
    // 2 task counts x 11 utilisations (0.5 to 1.0 by 0.05), plus the header.
    assert_eq!(lines.len(), 1 + 22);
    assert!(lines[1].starts_with("5,0.5,10,"));
    assert!(lines[22].starts_with("10,1,10,"));
    // Every ratio is in [0, 1].
    for line in &lines[1..] {
        for ratio in line.split(',').skip(3) {
            let ratio: f64 = ratio.parse().unwrap();
            assert!((0.0..=1.0).contains(&ratio), "{line}");
        }
    }
    let svg = std::fs::read_to_string(whole_dir.join("acceptance.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(whole_dir.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["points"].as_array().unwrap().len(), 22);

    let parts = dir.path().join("parts");
    let mut shard_files = Vec::new();
    for index in 0..3 {
        let shard = format!("{index}/3");
        output_of(
            &[
                "sweep",
                &file,
                "--shard",
                &shard,
                "--out",
                parts.to_str().unwrap(),
            ],
            0,
        );
        shard_files.push(
            parts
                .join(format!("shard-{index}-of-3.json"))
                .display()
                .to_string(),
        );
    }
    let merged_dir = dir.path().join("merged");
    let mut args = vec!["sweep", "merge"];
    args.extend(shard_files.iter().map(String::as_str));
    args.extend(["--out", merged_dir.to_str().unwrap()]);
    output_of(&args, 0);
    for name in ["results.csv", "results.json", "acceptance.svg"] {
        assert_eq!(
            std::fs::read(merged_dir.join(name)).unwrap(),
            std::fs::read(whole_dir.join(name)).unwrap(),
            "{name}"
        );
    }
    // Two of three shards: missing one, bad input.
    let incomplete = output_of(&["sweep", "merge", &shard_files[0], &shard_files[1]], 2);
    assert!(String::from_utf8_lossy(&incomplete.stderr).contains("shards missing: 2/3"));
}

#[test]
fn a_bad_file_is_located_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("scenarios/sweeps/fp-vs-edf.toml")).unwrap();
    // Line 12 of the example is `generator = "uunifast"`; the value starts at column 13.
    assert_eq!(text.lines().nth(11), Some("generator = \"uunifast\""));
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, text.replace("\"uunifast\"", "\"uunifastest\"")).unwrap();
    let run = output_of(&["sweep", path.to_str().unwrap()], 2);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_contains(&stderr, "bad.toml:12:13: unknown generator `uunifastest`");
    assert_contains(&stderr, "allowed: uunifast, uunisort");

    // An unknown key is refused, located at the key.
    std::fs::write(&path, format!("colour = 1\n{text}")).unwrap();
    let run = output_of(&["sweep", path.to_str().unwrap()], 2);
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("bad.toml:1:1: unknown field `colour`"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    // A wrong shard is a usage error.
    output_of(
        &["sweep", "scenarios/sweeps/fp-vs-edf.toml", "--shard", "3/3"],
        2,
    );
}
