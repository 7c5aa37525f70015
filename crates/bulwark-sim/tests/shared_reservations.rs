//! Several threads bound to one reservation of a cluster (`reservation = "R"` naming an
//! earlier member's `name = "R"`), checked against schedules worked out by hand: the
//! reservation runs the first of its threads (in file order) whose job is pending and ready,
//! and all of them draw on its one budget. A best-effort reservation is shared the same way
//! (`{ name = "bg", best-effort = true }`), with no budget to draw on.

mod common;

use bulwark_sim::Outcome;
use bulwark_spec::parse;

/// Runs the `[[task]]` and `[[server]]` tables `tables` on one cluster `C` of cores 0 to
/// `cores - 1`, which `policy` orders, for `duration`.
fn run_on_one_cluster(policy: &str, cores: u16, duration: &str, tables: &str) -> Outcome {
    let core_list: Vec<String> = (0..cores).map(|core| core.to_string()).collect();
    let source = format!(
        r#"
name = "shared"
policy = "{policy}"
cores = {cores}
duration = "{duration}"

[[cluster]]
name = "C"
cores = [{}]
order = "{policy}"
{tables}"#,
        core_list.join(", ")
    );
    common::run_jobs(&parse(&source, "shared.toml").expect("valid"))
}

/// Task S, `execution` every `period` on a reservation of `budget` per 10 ms, then B1 (5 ms)
/// and B2 (2 ms), both every `period` from 0, on the best-effort reservation `bg` they share.
fn reserved_task_and_best_effort_pair(budget: &str, period: &str, execution: &str) -> String {
    format!(
        r#"
[[task]]
name = "S"
cluster = "C"
priority = 1
reservation = {{ budget = "{budget}", period = "10ms" }}
period = "{period}"
execution = "{execution}"

[[task]]
name = "B1"
cluster = "C"
reservation = {{ name = "bg", best-effort = true }}
period = "{period}"
execution = "5ms"

[[task]]
name = "B2"
cluster = "C"
reservation = "bg"
period = "{period}"
execution = "2ms"
"#
    )
}

/// (release, first start, completion) of the first `n` jobs of `task`, in milliseconds.
fn jobs(outcome: &Outcome, task: u32, n: usize) -> Vec<(u64, Option<u64>, Option<u64>)> {
    let rows = common::rows_ms(outcome, task).into_iter().take(n);
    rows.map(|(release, start, completion, _)| (release, start, completion))
        .collect()
}

/// Each task's execution over the run, in whole milliseconds.
fn executed_ms(outcome: &Outcome) -> Vec<u64> {
    outcome
        .tasks
        .iter()
        .map(|t| t.executed_ns / 1_000_000)
        .collect()
}

/// One core under EDF: R (4 ms per 10 ms) carries A (3 ms) and B (2 ms), both every 10 ms;
/// X (5 ms per 10 ms) carries C (5 ms). R and X tie on deadlines and R, the earlier
/// reservation, goes first. Each period R runs A for 3 ms (first in file order), then B for
/// the 1 ms left, and is exhausted; X runs C for 5 ms. So B gets 1 ms per period of the 2 it
/// needs, and each of its jobs takes two periods: the first runs 3..4 and 13..14, the second
/// (released at 10 ms, behind the first) 23..24 and 33..34, the third 43..44 and 53..54.
/// Over 100 ms: A 30 ms, B 10 ms (R's 40 ms), C 50 ms.
#[test]
fn threads_of_one_reservation_share_its_budget() {
    let tables = r#"
[[task]]
name = "A"
cluster = "C"
reservation = { name = "R", budget = "4ms", period = "10ms" }
period = "10ms"
execution = "3ms"

[[task]]
name = "B"
cluster = "C"
reservation = "R"
period = "10ms"
execution = "2ms"

[[task]]
name = "C"
cluster = "C"
reservation = { budget = "5ms", period = "10ms" }
period = "10ms"
execution = "5ms"
"#;
    let outcome = run_on_one_cluster("edf", 1, "100ms", tables);
    assert_eq!(
        jobs(&outcome, 0, 3),
        vec![
            (0, Some(0), Some(3)),
            (10, Some(10), Some(13)),
            (20, Some(20), Some(23))
        ]
    );
    assert_eq!(
        jobs(&outcome, 1, 3),
        vec![
            (0, Some(3), Some(14)),
            (10, Some(23), Some(34)),
            (20, Some(43), Some(54))
        ]
    );
    assert_eq!(
        jobs(&outcome, 2, 3),
        vec![
            (0, Some(4), Some(9)),
            (10, Some(14), Some(19)),
            (20, Some(24), Some(29))
        ]
    );
    assert_eq!(executed_ms(&outcome), vec![30, 10, 50]);
}

/// One core under fixed priority: R (7 ms per 10 ms) carries B (4 ms every 10 ms from 0) and
/// its owner A (2 ms every 10 ms from 3 ms). B runs from 0; A's release at 3 ms makes A the
/// reservation's first ready thread, so it runs 3..5 and B resumes 5..6, preempted once.
/// R used 6 of its 7 ms; the next period repeats it from 10 ms.
#[test]
fn the_first_ready_thread_in_file_order_runs() {
    let tables = r#"
[[task]]
name = "A"
cluster = "C"
priority = 1
reservation = { name = "R", budget = "7ms", period = "10ms" }
period = "10ms"
offset = "3ms"
execution = "2ms"

[[task]]
name = "B"
cluster = "C"
reservation = "R"
period = "10ms"
execution = "4ms"
"#;
    let outcome = run_on_one_cluster("fixed-priority", 1, "20ms", tables);
    assert_eq!(
        jobs(&outcome, 0, 2),
        vec![(3, Some(3), Some(5)), (13, Some(13), Some(15))]
    );
    assert_eq!(
        jobs(&outcome, 1, 2),
        vec![(0, Some(0), Some(6)), (10, Some(10), Some(16))]
    );
    assert_eq!(outcome.tasks[1].preemptions, 2);
}

/// One core, one reservation R (3 ms per 3 ms) of two threads that call S (FIFO-IPC, with
/// bandwidth inheritance), each asking 1 ms: t0 only calls; t1 calls, then computes 2 ms.
/// A thread that invoked waits for its reply, so R runs its other ready thread first and
/// lends its core to S only when none is ready (section III): S serves t0 0..1 and t1 1..2
/// (both called at 0, t0 first); t1 computes 2..4, and t0's call at 3 does not stop it, so
/// S serves t0's second request 4..5, then t1's second (called at 4, behind it) 5..6, which
/// ends with the run. t1's second job, due at 3 behind its late first, is released at its
/// plan.
#[test]
fn a_thread_that_invoked_waits_while_its_reservation_runs_another() {
    let tables = r#"
[[server]]
name = "S"
gate = "fifo-ipc"
bandwidth-inheritance = true
operation = "5ms"

[[task]]
name = "t0"
cluster = "C"
priority = 1
reservation = { name = "R", budget = "3ms", period = "3ms" }
script = [{ loop = "forever", body = [{ invoke = "S", operation = "1ms" }, { sleep-until-next-release = "3ms" }] }]

[[task]]
name = "t1"
cluster = "C"
reservation = "R"
script = [{ loop = "forever", body = [{ invoke = "S", operation = "1ms" }, { run = "2ms" }, { sleep-until-next-release = "3ms" }] }]
"#;
    let outcome = run_on_one_cluster("fixed-priority", 1, "6ms", tables);
    let ends = |task| -> Vec<(u64, Option<u64>)> {
        jobs(&outcome, task, 2)
            .into_iter()
            .map(|(release, _, completion)| (release, completion))
            .collect()
    };
    assert_eq!(ends(0), vec![(0, Some(1)), (3, Some(5))]);
    assert_eq!(ends(1), vec![(0, Some(4)), (3, None)]);
}

/// One core under fixed priority: S (4 ms per 10 ms, sporadic rule) carries task S (6 ms
/// every 20 ms), and B1 names the best-effort reservation `bg` that B2 shares (B1 5 ms, B2
/// 2 ms, both every 20 ms, released at 0). The best-effort context runs only while S's
/// reservation is out of budget or inactive, and then its first ready thread in file order:
/// - 0..4: S's reservation runs S's job and is exhausted (replenished at 10); S is taken
///   off the core unfinished, its one preemption.
/// - 4..9: best-effort: B1, first in file order, runs its 5 ms and completes at 9.
/// - 9..10: B2, the context's only ready thread left, runs 1 of its 2 ms.
/// - 10..12: S's budget is back (4 ms): S preempts B2 (B2's one preemption; B1 has none)
///   and completes at 12; with no job pending the reservation is inactive and discards the
///   2 ms left (section III).
/// - 12..13: B2 resumes and completes at 13; nothing runs after it until 20.
#[test]
fn threads_of_a_named_best_effort_reservation_run_on_what_is_left() {
    let tables = reserved_task_and_best_effort_pair("4ms", "20ms", "6ms");
    let outcome = run_on_one_cluster("fixed-priority", 1, "20ms", &tables);
    assert_eq!(jobs(&outcome, 0, 1), vec![(0, Some(0), Some(12))]);
    assert_eq!(jobs(&outcome, 1, 1), vec![(0, Some(4), Some(9))]);
    assert_eq!(jobs(&outcome, 2, 1), vec![(0, Some(9), Some(13))]);
    assert_eq!(executed_ms(&outcome), vec![6, 5, 2]);
    let preemptions: Vec<u64> = outcome.tasks.iter().map(|t| t.preemptions).collect();
    assert_eq!(preemptions, vec![1, 0, 1]);
}

/// Two cores: S (2 ms per 10 ms) carries task S (2 ms), and B1 and B2 share the best-effort
/// reservation `bg` (B1 5 ms, B2 2 ms), all released at 0. S and `bg` are selected on the
/// two cores; S completes at 2 and leaves its core idle, since `bg` is one scheduling
/// context, selected on one core, and runs one thread at a time: B1 (first in file order)
/// 0..5, then B2 5..7. Had B2 a best-effort reservation of its own, it would run 2..4.
#[test]
fn a_shared_best_effort_reservation_runs_one_thread_at_a_time() {
    let tables = reserved_task_and_best_effort_pair("2ms", "10ms", "2ms");
    let outcome = run_on_one_cluster("fixed-priority", 2, "10ms", &tables);
    assert_eq!(jobs(&outcome, 0, 1), vec![(0, Some(0), Some(2))]);
    assert_eq!(jobs(&outcome, 1, 1), vec![(0, Some(0), Some(5))]);
    assert_eq!(jobs(&outcome, 2, 1), vec![(0, Some(5), Some(7))]);
}
