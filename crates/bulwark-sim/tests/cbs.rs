//! CBS on the machine, from the built-in scenario `scenarios/cbs-isolation.toml`: control
//! (2 ms every 10 ms, server (2, 10)), video (10 ms every 40 ms, server (10, 40)) and hog,
//! one endless job in a server (4, 10). Checked by hand against the CBS rules.

mod common;

use bulwark_core::Duration;
use bulwark_spec::PolicyKind;
use common::{ms, rows_ms};

fn scenario(policy: PolicyKind) -> bulwark_spec::Scenario {
    let source = include_str!("../../../scenarios/cbs-isolation.toml");
    let mut s = bulwark_spec::parse(source, "cbs-isolation.toml").expect("valid");
    s.policy = policy;
    if policy == PolicyKind::Edf {
        for t in &mut s.tasks {
            t.reservation = None;
        }
    }
    s
}

/// Soft CBS, by hand. At 0 all three servers start: deadlines control 10, hog 10 (assigned
/// after control), video 40. control [0, 2); hog [2, 6), depleted, d = 20: still before
/// video's 40, so hog [6, 10), d = 30. control [10, 12); hog [12, 16), d = 40, now behind
/// video (assigned 40 first): video [16, 20), control [20, 22) (d = 30 <= hog's 40), video
/// [22, 28) completes: video's first response is 28 ms. No control or video job misses;
/// hog takes all the slack: 200 - 20 * 2 - 5 * 10 = 110 ms.
#[test]
fn soft_cbs_isolates_and_lets_the_hog_reclaim_slack() {
    let o = common::run_jobs(&scenario(PolicyKind::Cbs));
    assert_eq!(o.tasks[0].misses, 0, "control");
    assert_eq!(o.tasks[1].misses, 0, "video");
    assert_eq!(rows_ms(&o, 1)[0], (0, Some(16), Some(28), false));
    assert_eq!(Duration::from_nanos(o.tasks[2].executed_ns), ms(110));
}

/// Hard CBS, by hand: hog runs 4 ms and is throttled to the end of its period every time,
/// control [0, 2), hog [2, 6), video [6, 10); control [10, 12), hog [12, 16), video
/// [16, 20); control [20, 22), hog [22, 26), video [26, 28) completes (response 28 again).
/// hog gets exactly 4 ms per 10 ms: 80 ms in 200 ms, and the processor idles in the slack.
#[test]
fn hard_cbs_throttles_the_hog_to_its_bandwidth() {
    let o = common::run_jobs(&scenario(PolicyKind::HardCbs));
    assert_eq!(o.tasks[0].misses, 0, "control");
    assert_eq!(o.tasks[1].misses, 0, "video");
    assert_eq!(rows_ms(&o, 1)[0], (0, Some(6), Some(28), false));
    assert_eq!(Duration::from_nanos(o.tasks[2].executed_ns), ms(80));
}

/// Plain EDF has no isolation: hog's job, due at 10 ms like control's first and released
/// after it, runs from 2 ms and never ends. control's second job (released at 10, due at 20)
/// and video's first (due at 40) never run: both miss, and neither task completes another
/// job.
#[test]
fn plain_edf_lets_the_hog_starve_everyone() {
    let o = common::run_jobs(&scenario(PolicyKind::Edf));
    let control = rows_ms(&o, 0);
    assert_eq!(control[0], (0, Some(0), Some(2), false));
    assert_eq!(control[1], (10, None, None, true));
    assert_eq!(rows_ms(&o, 1)[0], (0, None, None, true));
    assert_eq!((o.tasks[0].completed, o.tasks[1].completed), (1, 0));
}
