//! Reclamation on the machine: `allocate` and `terminate` steps run the real capability tree
//! (`bulwark_core::reclaim`), and the work becomes time through `reclaim-per-unit`. Checked by
//! hand from the unit counts the core's own tests establish: the baseline frees n objects in
//! 3n + 1 units, a group is released in 1 unit, and a semaphore is charged 1 (object) + 3
//! (its capability) to its group's quota.

mod common;

use bulwark_core::{Instant, TaskId};
use bulwark_sim::SliceKind;
use bulwark_spec::{parse, Scenario};

/// sensor (1 ms every 5 ms, top priority); controller terminates rogue at 51 ms; rogue
/// allocates `objects` semaphores at once, in group `g` when `grouped`.
fn scenario(objects: u64, grouped: bool, step: Option<&str>) -> Scenario {
    let group = if grouped { "group = \"g\"" } else { "" };
    let step = step.map_or(String::new(), |s| format!(", step = \"{s}\""));
    let source = format!(
        r#"
name = "reclaim"
policy = "fixed-priority"
duration = "80ms"

[cost]
clock = "1GHz"
reclaim-per-unit = 8

[[group]]
name = "g"
quota = "1ms"

[[task]]
name = "sensor"
priority = 30
period = "5ms"
execution = "1ms"

[[task]]
name = "controller"
priority = 20
script = [{{ sleep-until = "51ms" }}, {{ terminate = "rogue"{step} }}, {{ sleep-until = "1s" }}]

[[task]]
name = "rogue"
priority = 10
{group}
script = [{{ allocate = {objects} }}, {{ run = "1s" }}]
"#
    );
    parse(&source, "reclaim.toml").expect("valid")
}

/// (release, first start, completion, missed) of every job of `task`, in nanoseconds.
fn rows_ns(o: &bulwark_sim::Outcome, task: u32) -> Vec<(u64, Option<u64>, Option<u64>, bool)> {
    let mut jobs: Vec<_> = o
        .jobs
        .as_ref()
        .unwrap()
        .iter()
        .filter(|j| j.task == TaskId(task))
        .collect();
    jobs.sort_by_key(|j| j.job);
    jobs.iter()
        .map(|j| {
            (
                j.release.as_nanos(),
                j.first_start.map(|t| t.as_nanos()),
                j.completion.map(|t| t.as_nanos()),
                j.missed,
            )
        })
        .collect()
}

fn last_rogue_slice_end(o: &bulwark_sim::Outcome) -> Instant {
    o.trace
        .as_ref()
        .unwrap()
        .slices
        .iter()
        .filter(|s| s.task == Some(TaskId(2)) && s.kind == SliceKind::Task)
        .map(|s| s.end)
        .max()
        .unwrap()
}

/// Baseline, 500,000 semaphores: terminating takes 3 * 500,000 + 1 units of 8 ns, 12 ms
/// and 8 ns of kernel time from 51 ms with interrupts masked, so until 63.000008 ms. The
/// sensor's job released at 55 ms (due 60) starts then and misses; the one released at 60
/// (due 65) runs [64.000008, 65.000008) and misses by 8 ns; the one at 65 starts when that
/// one ends, 8 ns late, and is on time.
#[test]
fn baseline_termination_masks_the_core_for_the_whole_tree() {
    let o = common::run_jobs(&scenario(500_000, false, None));
    let core = &o.cores[0];
    assert_eq!(core.reclaim_ns, 12_000_008);
    assert_eq!(core.max_reclaim_ns, 12_000_008);
    let sensor = rows_ns(&o, 0);
    const END: u64 = 63_000_008;
    assert_eq!(
        sensor[11],
        (55_000_000, Some(END), Some(END + 1_000_000), true)
    );
    assert_eq!(
        sensor[12],
        (
            60_000_000,
            Some(END + 1_000_000),
            Some(END + 2_000_000),
            true
        )
    );
    assert_eq!(
        sensor[13],
        (
            65_000_000,
            Some(END + 2_000_000),
            Some(END + 3_000_000),
            false
        )
    );
    assert_eq!(o.tasks[2].objects_allocated, 500_000);
    assert_eq!(o.tasks[2].killed_jobs, 1);
    assert_eq!(o.tasks[2].misses, 0, "a killed job is not a miss");
    assert!(last_rogue_slice_end(&o) <= Instant::from_nanos(51_000_000));
}

/// In a group with a 1 ms quota at 8 ns per unit, 125,000 units: the group's arena (1) and
/// the rogue's process (2) leave 124,997, so 31,249 semaphores at 4 units each, and the rest
/// are refused. Terminating releases the arena in one unit: 8 ns, and no sensor job misses.
#[test]
fn grouped_termination_takes_one_unit_whatever_was_allocated() {
    let o = common::run_jobs(&scenario(500_000, true, None));
    assert_eq!(o.tasks[2].objects_allocated, 31_249);
    assert_eq!(o.tasks[2].allocations_refused, 500_000 - 31_249);
    assert_eq!(o.cores[0].reclaim_ns, 8);
    assert_eq!(o.tasks[0].misses, 0);
    assert_eq!(o.tasks[2].killed_jobs, 1);
    assert!(last_rogue_slice_end(&o) <= Instant::from_nanos(51_000_000));
}

/// The same group terminated in steps of 1 us: the arena goes in the first step, so one
/// step, the same 8 ns.
#[test]
fn stepwise_termination_of_a_group() {
    let o = common::run_jobs(&scenario(1_000, true, Some("1us")));
    assert_eq!(o.tasks[2].objects_allocated, 1_000);
    assert_eq!(o.cores[0].reclaim_ns, 8);
    assert_eq!(o.tasks[0].misses, 0);
}

/// The controller's own timing: the baseline's 12 ms of kernel time are charged to it (it
/// is the task the kernel returns to), the grouped termination's 8 ns likewise.
#[test]
fn the_kernel_time_of_a_termination_is_charged_to_the_caller() {
    let baseline = common::run_jobs(&scenario(500_000, false, None));
    let grouped = common::run_jobs(&scenario(500_000, true, None));
    assert!(baseline.tasks[1].kernel_ns >= 12_000_008);
    assert!(grouped.tasks[1].kernel_ns < 1_000);
}
