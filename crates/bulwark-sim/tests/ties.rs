//! The machine's tie-breaking rules, one hand-worked schedule each. The rules are stated in
//! one place, the "Ties" section of `bulwark_sim`'s crate documentation; every test here names
//! the rule it pins.

mod common;

use bulwark_core::Instant;
use bulwark_spec::PolicyKind;
use common::*;

/// Rule 1: an execution that ends exactly when a timer fires ends first. `low` (C = 2) ends at
/// 2 ms, exactly when `high` (offset 2 ms) is released: `low` completes at 2 and is not
/// preempted with no work left; `high` starts at 2.
#[test]
fn a_completion_at_a_release_completes_first() {
    let s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(10),
        vec![
            periodic("low", 0, Some(1), ms(2), ms(10), ms(0)),
            periodic("high", 0, Some(2), ms(1), ms(10), ms(2)),
        ],
    );
    let o = run_jobs(&s);
    assert_eq!(rows_ms(&o, 0)[0], (0, Some(0), Some(2), false));
    assert_eq!(rows_ms(&o, 1)[0], (2, Some(2), Some(3), false));
    assert_eq!(o.tasks[0].preemptions, 0, "low was never preempted");
}

/// Rule 2: equal fixed priorities run first-come first-served; tasks released at the same
/// instant come in the order of the file. `a` and `b` share priority 1 and are released
/// together: `a` runs [0,2), then `b` [2,4).
#[test]
fn equal_priorities_released_together_run_in_file_order() {
    let s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(10),
        vec![
            periodic("a", 0, Some(1), ms(2), ms(10), ms(0)),
            periodic("b", 0, Some(1), ms(2), ms(10), ms(0)),
        ],
    );
    let o = run_jobs(&s);
    assert_eq!(rows_ms(&o, 0)[0], (0, Some(0), Some(2), false));
    assert_eq!(rows_ms(&o, 1)[0], (0, Some(2), Some(4), false));
}

/// Rule 3: a preempted task keeps the head of its priority (POSIX `SCHED_FIFO`). `a` runs
/// [0,1), `high` preempts it for [1,2), then `a` resumes before its peer `b`: [2,3), and `b`
/// runs [3,5).
#[test]
fn a_preempted_task_resumes_before_its_peers() {
    let s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(10),
        vec![
            periodic("a", 0, Some(1), ms(2), ms(10), ms(0)),
            periodic("b", 0, Some(1), ms(2), ms(10), ms(0)),
            periodic("high", 0, Some(2), ms(1), ms(10), ms(1)),
        ],
    );
    let o = run_jobs(&s);
    assert_eq!(rows_ms(&o, 0)[0], (0, Some(0), Some(3), false));
    assert_eq!(rows_ms(&o, 1)[0], (0, Some(3), Some(5), false));
    assert_eq!(rows_ms(&o, 2)[0], (1, Some(1), Some(2), false));
}

/// Rule 4: under EDF equal absolute deadlines go to the earlier activation, so a running job
/// is never preempted by an equal deadline. `a` (C = 3, D = 6) runs from 0; `b` is released at
/// 2 with D = 4, absolute deadline 6 as well: `a` keeps the core to 3, `b` runs [3,5).
#[test]
fn edf_equal_deadlines_go_to_the_earlier_activation() {
    let mut b = periodic("b", 0, None, ms(2), ms(10), ms(2));
    b.deadline = Some(ms(4));
    let s = scenario(
        PolicyKind::Edf,
        1,
        ms(10),
        vec![periodic("a", 0, None, ms(3), ms(6), ms(0)), b],
    );
    let o = run_jobs(&s);
    assert_eq!(rows_ms(&o, 0)[0], (0, Some(0), Some(3), false));
    assert_eq!(rows_ms(&o, 1)[0], (2, Some(3), Some(5), false));
}

/// Rule 5: a job completing exactly at its deadline meets it. `a` (C = 2) is preempted by
/// `high` (C = 2, offset 0): `a` runs [2,4) and completes at 4, its deadline (T = D = 4).
#[test]
fn a_completion_at_the_deadline_meets_it() {
    let s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(8),
        vec![
            periodic("a", 0, Some(1), ms(2), ms(4), ms(0)),
            periodic("high", 0, Some(2), ms(2), ms(8), ms(0)),
        ],
    );
    let o = run_jobs(&s);
    assert_eq!(rows_ms(&o, 0)[0], (0, Some(2), Some(4), false));
    assert_eq!(o.tasks[0].misses, 0);
}

/// Rule 6: the horizon is inclusive. Events at the horizon are handled, a job released at the
/// horizon counts as released, and an unfinished job whose deadline is at or before the
/// horizon has missed it. `a` (C = 3, T = D = 5) over 10 ms: jobs released at 0, 5 and 10;
/// the third is unfinished with its deadline (15) beyond the run, so it is not a miss.
#[test]
fn the_horizon_is_inclusive() {
    let s = scenario(
        PolicyKind::FixedPriority,
        1,
        ms(10),
        vec![periodic("a", 0, Some(1), ms(3), ms(5), ms(0))],
    );
    let o = run_jobs(&s);
    assert_eq!(
        rows_ms(&o, 0),
        vec![
            (0, Some(0), Some(3), false),
            (5, Some(5), Some(8), false),
            (10, Some(10), None, false),
        ]
    );
    assert_eq!(o.tasks[0].jobs, 3);
    assert_eq!(o.until, Instant::from_nanos(10_000_000));
}
