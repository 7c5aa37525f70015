//! SPR on the machine, checked by hand: the non-preemptive regions of the paper's Fig. 6.

mod common;

use bulwark_core::TaskId;
use bulwark_sim::SliceKind;

/// Table I's tau_hi (b = 10, p = 30) waking every 2 ms for 1 ms, and tau_lo (b = 10, p = 60)
/// computing from 0 with non-preemptive regions of `eta` ms. Costs are zero.
fn fig_6(eta: u64) -> String {
    format!(
        r#"
name = "fig-6"
duration = "60ms"
policy = "spr"

[[task]]
name = "hi"
priority = 3
reservation = {{ budget = "10ms", period = "30ms" }}
script = [{{ loop = "forever", body = [{{ run = "1ms" }}, {{ sleep-for = "1ms" }}] }}]

[[task]]
name = "lo"
priority = 1
reservation = {{ budget = "10ms", period = "60ms", non-preemptive = "{eta}ms" }}
script = [{{ run = "100ms" }}]
"#
    )
}

fn lo_slices_ms(eta: u64) -> (Vec<(u64, u64)>, u64) {
    let scenario = bulwark_spec::parse(&fig_6(eta), "fig-6.toml").expect("valid");
    let o = common::run_jobs(&scenario);
    let trace = o.trace.as_ref().unwrap();
    let slices = trace
        .slices
        .iter()
        .filter(|s| s.task == Some(TaskId(1)) && s.kind == SliceKind::Task)
        .map(|s| (s.start.as_nanos() / 1_000_000, s.end.as_nanos() / 1_000_000))
        .collect();
    (slices, o.tasks[1].preemptions)
}

/// Fig. 6, right: with eta_lo = 6, hi runs [0, 1) and sleeps to 2; lo is dispatched at 1 and
/// keeps the processor to 7 although hi wakes at 2 (its wake-up is deferred to the end of the
/// region, Algorithm 2 line 6). hi runs [7, 8); lo gets a new region at 8 and spends its last
/// 4 ms by 12: its budget of 10 in two pieces, ceil(10 / 6) - 1 = 1 preemption.
#[test]
fn fig_6_a_region_of_6_allows_one_preemption() {
    let (slices, preemptions) = lo_slices_ms(6);
    assert_eq!(slices, [(1, 7), (8, 12)]);
    // The machine counts every loss of the processor that is not a suspension: the one
    // preemption at 7, and the depletion at 12.
    assert_eq!(preemptions, 1 + 1);
}

/// Fig. 6, left: with eta_lo = 0, hi preempts lo each time it wakes: lo runs [1, 2), [3, 4),
/// ... [19, 20), its 10 ms in ten pieces, preempted 9 times before it depletes.
#[test]
fn fig_6_without_regions_every_wake_up_preempts() {
    let (slices, preemptions) = lo_slices_ms(0);
    let expected: Vec<(u64, u64)> = (0..10).map(|k| (2 * k + 1, 2 * k + 2)).collect();
    assert_eq!(slices, expected);
    assert_eq!(
        preemptions,
        9 + 1,
        "nine preemptions, then the depletion at 20"
    );
}

/// A wake-up SPR defers (section III-D) gets the budget an on-time one would. `lo` (T 3,
/// C 1, b 2 per 5 ms, S 8) runs [0, 1) and blocks with 1 ms left: the 1 ms it used comes back
/// at 0 + 5, so its queue is (0, 1), (5, 1). It asks to wake at 3, when `hi` is released and
/// runs [3, 5), so SPR activates it at 5. Read at 3 (Algorithm 3, line 5's `min(now,
/// timeout)`) nothing else has expired: the head restarts at 3 and the queue is (3, 1),
/// (5, 1), as on the eager sporadic server. `lo` runs its jobs of 3 and 6 in [5, 7), the two
/// units coming back at 8 and 10; out of budget when it blocks at 7, its wake-up for the job
/// of 9 stays at 9 (the head is due by then) and it runs [9, 10). Merging (5, 1) at 5
/// instead made the head (5, 2), both units back at 10, so the wake-up was postponed to 10
/// and the job of 9 ran [10, 11).
#[test]
fn a_deferred_wake_up_merges_only_what_expired_when_it_was_due() {
    for policy in ["spr", "sporadic-server"] {
        let text = format!(
            r#"
name = "deferred-wake-up"
duration = "12ms"
policy = "{policy}"

[[task]]
name = "lo"
priority = 1
period = "3ms"
execution = "1ms"
reservation = {{ budget = "2ms", period = "5ms" }}

[[task]]
name = "hi"
priority = 2
offset = "3ms"
period = "100ms"
execution = "2ms"
reservation = {{ budget = "10ms", period = "100ms" }}
"#
        );
        let scenario = bulwark_spec::parse(&text, "deferred-wake-up.toml").expect("valid");
        let rows = common::rows_ms(&common::run_jobs(&scenario), 0);
        assert_eq!(
            rows[..4],
            [
                (0, Some(0), Some(1), false),
                (3, Some(5), Some(6), false),
                (6, Some(6), Some(7), false),
                (9, Some(9), Some(10), false),
            ],
            "{policy}"
        );
    }
}
