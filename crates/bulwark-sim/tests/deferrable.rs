//! The deferrable server on the machine, checked by hand, from the built-in scenario file.

mod common;

use bulwark_core::{Instant, TaskId};
use bulwark_sim::SliceKind;
use common::rows_ms;

/// `scenarios/deferrable-double-hit.toml`: hi (b = 2, p = 5, priority 2) sleeps until 3 then
/// runs 10; lo (b = p = 5, priority 1) runs throughout. Budgets reset at multiples of 5.
///
/// ```text
/// t:   0    3    5    7    10   12   15   17   20   22   25
/// hi:       [---------)    [----)    [----)    [----)
/// lo:  [----)         [----)    [----)    [----)    [---------)
/// ```
/// hi wakes at 3 with its whole budget and runs to 5, is replenished at 5 and runs to 7: four
/// units in [3, 7), twice its budget within less than a period. It then gets 2 per period
/// (10-12, 15-17, 20-22) and finishes its 10 units at 22. lo takes every other slot.
#[test]
fn a_suspended_deferrable_server_hits_twice() {
    let source = include_str!("../../../scenarios/deferrable-double-hit.toml");
    let scenario = bulwark_spec::parse(source, "deferrable-double-hit.toml").expect("valid");
    let o = common::run_jobs(&scenario);
    let slices_ms = |task: u32| -> Vec<(u64, u64)> {
        let trace = o.trace.as_ref().unwrap();
        trace
            .slices
            .iter()
            .filter(|s| s.task == Some(TaskId(task)) && s.kind == SliceKind::Task)
            .map(|s| (s.start.as_nanos() / 1_000_000, s.end.as_nanos() / 1_000_000))
            .collect()
    };
    assert_eq!(slices_ms(0), [(3, 7), (10, 12), (15, 17), (20, 22)]);
    assert_eq!(
        slices_ms(1),
        [(0, 3), (7, 10), (12, 15), (17, 20), (22, 25)]
    );
    // Job 0 of hi ends at once with the sleep; job 1 is released at 3 and ends at 22.
    assert_eq!(
        rows_ms(&o, 0),
        vec![(0, Some(0), Some(0), false), (3, Some(3), Some(22), false)]
    );
    // The double hit: 4 ms of execution within [3, 7), a window shorter than p = 5 ms.
    let in_window: u64 = slices_ms(0)
        .iter()
        .map(|&(s, e)| e.min(7).saturating_sub(s.max(3)))
        .sum();
    assert_eq!(in_window, 4);
    assert_eq!(o.until, Instant::from_nanos(25_000_000));
}
