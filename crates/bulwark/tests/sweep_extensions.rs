//! `bulwark sweep` beyond one processor and one analysis: randfixedsum sets above U = 1.

mod common;

use common::{assert_contains, bulwark, output_of, stdout_of};

use std::path::Path;

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
    let csv = stdout_of(&["sweep", &file], 0);
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
    let run = output_of(&["sweep", &file], 2);
    let stderr = String::from_utf8_lossy(&run.stderr);
    // Line 15 is `to = 2.0`, the value at column 6.
    assert_contains(&stderr, "bad.toml:15:6: utilisation to is 2");
    assert_contains(&stderr, "randfixedsum");
}

const SIMULATED: &str = r#"name = "simulated"
seed = 9
sets-per-point = 12
generator = "uunifast"
tasks = 4
tests = ["liu-layland", "hyperbolic", "fp-rta-rm", "fp-rta-dm", "fp-audsley", "edf-utilisation", "edf-qpa"]
simulate = true

[periods]
kind = "log-uniform"
min = "1ms"
max = "10ms"

[utilisation]
from = 0.6
to = 1.0
step = 0.1

[deadlines]
constrained-fraction = 0.5
"#;

/// Every exact test is sound, and so are the two sufficient bounds: no set they admit misses
/// a deadline when simulated under their scheduler. edf-utilisation (U <= 1) is exact only
/// for implicit deadlines; on the constrained-deadline half of the sets it admits sets whose
/// demand exceeds a deadline, and the simulation catches it: the sweep exits 1 naming only
/// that test. Shards merge to the same bytes.
#[test]
fn a_simulated_sweep_finds_the_exact_tests_sound() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "simulated.toml", SIMULATED);
    let whole = dir.path().join("whole");
    let run = bulwark(&["sweep", &file, "--out", whole.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches(" admitted ").count(), 1, "{stderr}");
    assert_contains(&stderr, "edf-utilisation admitted");
    let csv = std::fs::read_to_string(whole.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    assert_eq!(header.len(), 3 + 7 + 7, "{}", lines[0]);
    assert_eq!(header[10], "liu-layland:admitted_but_missed");
    assert_eq!(header[15], "edf-utilisation:admitted_but_missed");
    assert_eq!(header[16], "edf-qpa:admitted_but_missed");
    assert_eq!(lines.len(), 1 + 5);
    let mut edf_utilisation_missed = 0;
    for line in &lines[1..] {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(&cells[10..15], ["0"; 5], "{line}");
        assert_eq!(cells[16], "0", "{line}");
        edf_utilisation_missed += cells[15].parse::<u64>().unwrap();
    }
    assert!(edf_utilisation_missed > 0);
    // At U = 0.6 something is admitted, so the simulation had work to check.
    let first: Vec<f64> = lines[1]
        .split(',')
        .skip(3)
        .take(7)
        .map(|r| r.parse().unwrap())
        .collect();
    assert!(first.iter().all(|&r| r > 0.0), "{}", lines[1]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(whole.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["points"][0]["admitted_but_missed"]["fp-audsley"], 0);

    // Two shards, merged: the same three files, and the same exit status.
    let parts = dir.path().join("parts");
    for index in 0..2 {
        let shard = format!("{index}/2");
        let part = bulwark(&[
            "sweep",
            &file,
            "--shard",
            &shard,
            "--out",
            parts.to_str().unwrap(),
        ]);
        assert!(part.status.code() == Some(0) || part.status.code() == Some(1));
    }
    let (zero, one) = (
        parts.join("shard-0-of-2.json"),
        parts.join("shard-1-of-2.json"),
    );
    let merged = dir.path().join("merged");
    output_of(
        &[
            "sweep",
            "merge",
            zero.to_str().unwrap(),
            one.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
        ],
        1,
    );
    for name in ["results.csv", "results.json", "acceptance.svg"] {
        assert_eq!(
            std::fs::read(merged.join(name)).unwrap(),
            std::fs::read(whole.join(name)).unwrap(),
            "{name}"
        );
    }

    // A shard whose fp-rta-rm count is made non-zero: the merge names fp-rta-rm too.
    let mut shard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&zero).unwrap()).unwrap();
    let point = &mut shard["points"][0];
    assert!(point["accepted"][2].as_u64().unwrap() > 0);
    point["admitted_but_missed"][2] = 1.into();
    let forged = dir.path().join("forged.json");
    std::fs::write(&forged, serde_json::to_string(&shard).unwrap()).unwrap();
    let merge = output_of(
        &[
            "sweep",
            "merge",
            forged.to_str().unwrap(),
            one.to_str().unwrap(),
        ],
        1,
    );
    let stderr = String::from_utf8_lossy(&merge.stderr);
    assert_contains(
        &stderr,
        "fp-rta-rm admitted 1 set(s) that missed a deadline in simulation",
    );
}

/// Without edf-utilisation every count is 0 and the sweep exits 0.
#[test]
fn a_simulated_sweep_of_sound_tests_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let text = SIMULATED.replace("\"edf-utilisation\", ", "");
    let file = write(dir.path(), "sound.toml", &text);
    let csv = stdout_of(&["sweep", &file], 0);
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(&cells[3 + 6..], ["0"; 6], "{line}");
    }
}

const SERVERS: &str = r#"name = "servers"
seed = 21
sets-per-point = 25
generator = "uunifast"
tasks = 4
tests = ["fp-rta-rm", "spr-eq1"]
simulate = true

[periods]
kind = "log-uniform"
min = "1ms"
max = "20ms"

[utilisation]
from = 0.3
to = 0.9
step = 0.2

[deadlines]
constrained-fraction = 0.5
"#;

/// The acceptance ratios of fp-rta-rm and spr-eq1 per point, and spr-eq1's
/// admitted_but_missed counts; asserts the sweep exited 0 with exactly those columns.
fn ratios(file: &str) -> Vec<(f64, f64, u64)> {
    ratios_by_test(file)
        .into_iter()
        .map(|(_, columns)| {
            let mut names: Vec<&str> = columns.keys().map(String::as_str).collect();
            names.sort_unstable();
            assert_eq!(
                names,
                [
                    "fp-rta-rm",
                    "fp-rta-rm:admitted_but_missed",
                    "spr-eq1",
                    "spr-eq1:admitted_but_missed"
                ]
            );
            (
                columns["fp-rta-rm"],
                columns["spr-eq1"],
                columns["spr-eq1:admitted_but_missed"] as u64,
            )
        })
        .collect()
}

/// Without overheads and with fully preemptive servers (eta = 0), a sporadic server of
/// budget C and period T serves its task exactly as the task alone, and Eq. 1 is the
/// rate-monotonic RTA (log-uniform periods in ns, so no two periods tie): the same ratios.
/// With eta = 200 us and the a3 attack's costs, blocking and overheads only add to every
/// response time, so spr-eq1's ratio is at most fp-rta-rm's, and at U = 0.9 below it; every
/// set it admits runs under SPR with those costs without a miss.
#[test]
fn spr_eq1_is_rm_without_overheads_and_sound_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let free = write(dir.path(), "free.toml", SERVERS);
    for (rm, spr, missed) in ratios(&free) {
        assert_eq!(rm, spr);
        assert_eq!(missed, 0);
    }
    let costly = SERVERS.replace(
        "simulate = true\n",
        "simulate = true\nnon-preemptive = \"200us\"\n",
    ) + "\n[cost]\nclock = \"1GHz\"\ntimer-interrupt = 1000\nscheduler = 300\n\
           per-work-unit = 30\ncontext-switch = 500\ncache-refill = 3000\ncache-flush = 5000\n";
    let costly = write(dir.path(), "costly.toml", &costly);
    let points = ratios(&costly);
    assert_eq!(points.len(), 4);
    for &(rm, spr, missed) in &points {
        assert!(spr <= rm, "{points:?}");
        assert_eq!(missed, 0);
    }
    assert!(points[0].1 > 0.0, "{points:?}");
    assert!(points[3].1 < points[3].0, "{points:?}");
}

/// Per point (in file order): the utilisation and the acceptance ratio of each test, by the
/// CSV header's names. Asserts the sweep exited 0.
fn ratios_by_test(file: &str) -> Vec<(f64, std::collections::HashMap<String, f64>)> {
    let csv = stdout_of(&["sweep", file], 0);
    let mut lines = csv.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            let by_test = header[3..]
                .iter()
                .zip(&cells[3..])
                .map(|(test, cell)| (test.clone(), cell.parse().unwrap()))
                .collect();
            (cells[1].parse().unwrap(), by_test)
        })
        .collect()
}

/// scenarios/sweeps/papers.toml with 20 sets per point.
fn small_papers(dir: &Path, edit: impl Fn(String) -> String) -> String {
    let text =
        std::fs::read_to_string(common::root().join("scenarios/sweeps/papers.toml")).unwrap();
    assert!(text.contains("sets-per-point = 200"));
    write(
        dir,
        "papers.toml",
        &edit(text.replace("sets-per-point = 200", "sets-per-point = 20")),
    )
}

/// The example comparison of the papers' tests, shortened. Theory on every point, whatever
/// the deadlines: vbs-eq2's caps are each at least the task's density C / D (its resource
/// has lambda >= C / k and pi <= (D + 1) / (k + 1) with D >= k), so a set it admits has
/// total density at most 1 and EDF admits it; spr-eq1 without overheads is rate-monotonic
/// RTA, and EDF is optimal on one processor. So both admit at most as many sets as edf-qpa,
/// and vbs-eq2 at most as many as edf-utilisation. mcipc-budget's budgets are at least the
/// WCETs and EDF's demand grows with them, so it admits at most what edf-qpa admits; with
/// operations of length 0 its budgets are the WCETs and its counts are edf-qpa's.
///
/// With implicit deadlines only (k = 4, periods of at least 10 ms): each cap is at least
/// ceil(C/4) / floor((T+1)/5) >= 1.25 C / (T + 1), so at U >= 0.9 the caps sum above 1.12
/// and nothing is admitted; each cap is at most (C/4 + 1) / ((T+1)/5 - 1), within 1e-5 of
/// 1.25 C / T, so at U <= 0.6 they sum below 0.76 and every task has lambda <= pi
/// (U_i <= 0.6 < 0.8): every set is admitted.
#[test]
fn the_papers_tests_sit_below_edf() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_papers(dir.path(), |t| t);
    let points = ratios_by_test(&file);
    assert_eq!(points.len(), 10);
    for (u, r) in &points {
        assert!(r["vbs-eq2"] <= r["edf-qpa"], "U = {u}: {r:?}");
        assert!(r["vbs-eq2"] <= r["edf-utilisation"], "U = {u}: {r:?}");
        assert!(r["spr-eq1"] <= r["edf-qpa"], "U = {u}: {r:?}");
        assert!(r["mcipc-budget"] <= r["edf-qpa"], "U = {u}: {r:?}");
    }
    // Something admitted, something refused: the relations above had sets to bite on.
    assert!(points[0].1["mcipc-budget"] > 0.0, "{points:?}");
    assert!(points[9].1["mcipc-budget"] < points[9].1["edf-qpa"] || points[9].1["edf-qpa"] == 0.0);
    let free = small_papers(dir.path(), |t| {
        t.replace("operation-length = \"50us\"", "operation-length = \"0ns\"")
    });
    for (u, r) in ratios_by_test(&free) {
        assert_eq!(r["mcipc-budget"], r["edf-qpa"], "U = {u}: {r:?}");
    }
    let implicit = small_papers(dir.path(), |t| {
        t.replace("constrained-fraction = 0.5", "constrained-fraction = 0.0")
    });
    for (u, r) in ratios_by_test(&implicit) {
        assert!(r["vbs-eq2"] <= r["edf-utilisation"], "U = {u}: {r:?}");
        if u <= 0.6 {
            assert_eq!(r["vbs-eq2"], 1.0, "U = {u}: {r:?}");
        }
        if u >= 0.9 {
            assert_eq!(r["vbs-eq2"], 0.0, "U = {u}: {r:?}");
        }
    }
}

/// The papers' tests are sums like the others: two shards of papers.toml merge into the
/// unsplit run's CSV byte for byte.
#[test]
fn the_papers_sweep_shards_merge_to_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_papers(dir.path(), |t| t);
    let whole = output_of(&["sweep", &file], 0);
    let parts = dir.path().join("parts");
    for shard in ["0/2", "1/2"] {
        output_of(
            &[
                "sweep",
                &file,
                "--shard",
                shard,
                "--out",
                parts.to_str().unwrap(),
            ],
            0,
        );
    }
    let merged = output_of(
        &[
            "sweep",
            "merge",
            parts.join("shard-0-of-2.json").to_str().unwrap(),
            parts.join("shard-1-of-2.json").to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(merged.stdout, whole.stdout);
    assert!(String::from_utf8_lossy(&whole.stdout).starts_with(
        "tasks,utilisation,sets,edf-qpa,edf-utilisation,spr-eq1,vbs-eq2,mcipc-budget\n"
    ));
}

/// vbs-eq2 cannot be simulated: the sweep refuses the file (exit 2) at the test's name.
#[test]
fn simulating_vbs_eq2_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_papers(dir.path(), |t| {
        t.replace(
            "vbs-periods-per-job = 4\n",
            "vbs-periods-per-job = 4\nsimulate = true\n",
        )
    });
    let run = output_of(&["sweep", &file], 2);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let tests_line = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("tests = "))
        .unwrap()
        + 1;
    let column = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .nth(tests_line - 1)
        .unwrap()
        .find("\"vbs-eq2\"")
        .unwrap()
        + 1;
    assert_contains(
        &stderr,
        &format!("papers.toml:{tests_line}:{column}: test `vbs-eq2` cannot be simulated"),
    );
}

/// The CAmkES component tests on scenarios/sweeps/components.toml, shortened to 40 sets per
/// point. Theory on every point (each implication holds set by set, so it holds for the
/// counts): Eqs. 2, 3 and 4 are sufficient for exact RTA, so none admits more than
/// component-rta; Eq. 2 refuses sets with shared priorities and equals Eq. 4 on the others,
/// so it admits at most what Eq. 4 does.
#[test]
fn the_component_tests_keep_the_theory_relations_per_point() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(common::root().join("scenarios/sweeps/components.toml")).unwrap();
    assert!(text.contains("sets-per-point = 200"));
    let file = write(
        dir.path(),
        "components.toml",
        &text.replace("sets-per-point = 200", "sets-per-point = 40"),
    );
    let points = ratios_by_test(&file);
    assert_eq!(points.len(), 10);
    for (u, r) in &points {
        for bound in ["component-eq2", "component-eq3", "component-eq4"] {
            assert!(r[bound] <= r["component-rta"], "{bound}, U = {u}: {r:?}");
        }
        assert!(r["component-eq2"] <= r["component-eq4"], "U = {u}: {r:?}");
    }
    // The relations had sets to bite on: admissions at 0.1, refusals at 1.0.
    assert!(points[0].1["component-eq4"] > 0.0, "{points:?}");
    assert!(points[9].1["component-rta"] < 1.0, "{points:?}");
}

/// scenarios/sweeps/global.toml with 20 sets per point, edited.
fn small_global(dir: &Path, edit: impl Fn(String) -> String) -> String {
    let text =
        std::fs::read_to_string(common::root().join("scenarios/sweeps/global.toml")).unwrap();
    assert!(text.contains("sets-per-point = 200"));
    write(
        dir,
        "global.toml",
        &edit(text.replace("sets-per-point = 200", "sets-per-point = 20")),
    )
}

/// The global tests against theory. Eight tasks on four cores: GFB admits every set with
/// U <= 1 (then m - (m - 1) U_max >= m - (m - 1) = 1 >= U). Four tasks on four cores (each
/// task a core of its own): BCL's sum has three terms each at most the slack, below four
/// slacks, and BC07 gives R = C (fewer than m above each): both admit every set, at every
/// utilisation; GFB admits nothing at U = 4 (every U_i = 1: 4 > 4 - 3). On one core GFB is
/// U <= 1, edf-utilisation's exact test, set for set.
#[test]
fn the_global_tests_follow_theory() {
    let dir = tempfile::tempdir().unwrap();
    let file = small_global(dir.path(), |t| t);
    let points = ratios_by_test(&file);
    assert_eq!(points.len(), 10);
    for (u, r) in points.iter().filter(|(u, _)| *u <= 1.0) {
        assert_eq!(r["global-edf-gfb"], 1.0, "U = {u}: {r:?}");
    }
    // Something refused at the top: the tests are not vacuous.
    let top = &points[9].1;
    assert!(top.values().all(|&ratio| ratio < 1.0), "{top:?}");
    let one_each = small_global(dir.path(), |t| t.replace("tasks = 8", "tasks = 4"));
    let points = ratios_by_test(&one_each);
    for (u, r) in &points {
        assert_eq!(r["global-edf-bcl"], 1.0, "U = {u}: {r:?}");
        assert_eq!(r["global-fp-rta-dm"], 1.0, "U = {u}: {r:?}");
    }
    assert_eq!(points[9].1["global-edf-gfb"], 0.0, "{points:?}");
    let one_core = small_global(dir.path(), |t| {
        t.replace("cores = 4", "cores = 1")
            .replace(
                "\"global-edf-gfb\",",
                "\"global-edf-gfb\", \"edf-utilisation\",",
            )
            .replace("to = 4.0", "to = 1.0")
            .replace("step = 0.4", "step = 0.1")
            .replace("from = 0.4", "from = 0.1")
    });
    let points = ratios_by_test(&one_core);
    assert_eq!(points.len(), 10);
    for (u, r) in &points {
        assert_eq!(r["global-edf-gfb"], r["edf-utilisation"], "U = {u}: {r:?}");
    }
}
