//! Cores running different policies (`[[core]]` tables): each core is scheduled by its own
//! policy, and partitioned cores with no kernel costs do not affect each other, so a mixed
//! run is, core by core, the single-policy runs of its parts.

use bulwark_core::Instant;
use bulwark_sim::{run, Options};
use bulwark_spec::PolicyKind;

fn load(name: &str) -> bulwark_spec::Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name);
    bulwark_spec::load(&path).expect("a valid built-in scenario")
}

#[test]
fn each_core_runs_its_own_policy() {
    let mixed = load("mixed-policies.toml");
    assert_eq!(mixed.policy_of(0), PolicyKind::FixedPriority);
    assert_eq!(mixed.policy_of(1), PolicyKind::Edf);
    let outcome = run(&mixed, &Options::default()).expect("runs");
    let by_name = |name: &str| {
        outcome
            .tasks
            .iter()
            .find(|t| t.name == name)
            .expect("task present")
    };
    // Core 0, rate monotonic: t2's first job completes at 8 > 7 (the schedule worked by hand
    // in hand_checked.rs), its first miss is at 7 ms.
    assert_eq!(
        by_name("t2").first_miss,
        Some(Instant::from_nanos(7_000_000))
    );
    // Core 1, the same pair under EDF: U = 34/35 <= 1, no miss over the hyperperiod.
    assert_eq!(by_name("u1").misses + by_name("u2").misses, 0);
    // Releases at 0, 7, ..., 35 ms: the horizon is inclusive (bulwark-sim's "Ties", rule 6).
    assert_eq!(by_name("u2").jobs, 6);
}

#[test]
fn a_mixed_run_is_its_parts_run_alone() {
    let mixed = load("mixed-policies.toml");
    let whole = run(&mixed, &Options::default()).expect("runs");
    let parts = mixed.parts_by_policy();
    assert_eq!(parts.len(), 2);
    assert_parts_run_as_in_the_whole(&parts, &whole);
    // And the parts are the textbook files: core 0 is textbook-rm, core 1 textbook-edf.
    let rm = run(&load("textbook-rm.toml"), &Options::default()).expect("runs");
    let t2 = whole.tasks.iter().find(|t| t.name == "t2").expect("t2");
    assert_eq!(
        (t2.jobs, t2.misses, t2.response.max_ns),
        (
            rm.tasks[1].jobs,
            rm.tasks[1].misses,
            rm.tasks[1].response.max_ns
        )
    );
}

/// A vbs core beside an spr core: the vbs part keeps its processes' caps in task order (caps
/// are by task index, and the spr tasks come first in the file), the spr part has no `[vbs]`.
#[test]
fn a_vbs_part_keeps_its_processes_caps() {
    let composed = load("spr-vbs-cores.toml");
    assert_eq!(composed.policy_of(0), PolicyKind::Spr);
    assert_eq!(composed.policy_of(1), PolicyKind::Vbs);
    let parts = composed.parts_by_policy();
    let spr = parts
        .iter()
        .find(|p| p.policy == PolicyKind::Spr)
        .expect("spr part");
    let vbs = parts
        .iter()
        .find(|p| p.policy == PolicyKind::Vbs)
        .expect("vbs part");
    assert!(spr.vbs.is_none());
    let names: Vec<&str> = vbs.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["control", "video", "logger"]);
    let caps = &vbs.vbs.as_ref().expect("[vbs] kept").caps;
    assert_eq!(caps, &[Some((3, 10)), Some((2, 5)), Some((1, 5))]);
    // Both parts run alone, and the whole runs: every part's task is in the whole.
    let whole = run(&composed, &Options::default()).expect("runs");
    assert_parts_run_as_in_the_whole(&parts, &whole);
}

/// Each part, run alone, is a single-policy scenario whose every task has exactly the
/// metrics it has in the whole run.
fn assert_parts_run_as_in_the_whole(
    parts: &[bulwark_spec::Scenario],
    whole: &bulwark_sim::Outcome,
) {
    for part in parts {
        assert!(!part.is_mixed());
        let alone = run(part, &Options::default()).expect("runs");
        for task in &alone.tasks {
            let same = whole
                .tasks
                .iter()
                .find(|t| t.name == task.name)
                .expect("every task of a part is in the whole");
            assert_eq!(same, task, "{} under {}", task.name, part.policy.name());
        }
    }
}
