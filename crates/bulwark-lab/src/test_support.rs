//! A small hand-built outcome the exporters' tests share, with every value chosen by hand.
//!
//! Story (one core, times in ns): `ctl` (id 0) and `log` (id 1) are both released at 0 with a
//! deadline of 2 ms. The kernel runs 0..1500 for `ctl`, which executes 1500..1_001_500 and
//! completes. The kernel then runs 1_001_500..1_002_250 for `log`, which refills its cache until
//! 1_052_250 and executes until 3_000_000, completing late: it misses its deadline at 2_000_000.
//! The kernel then runs 3_000_000..3_000_800 and the core idles.

use bulwark_core::{Instant, TaskId};
use bulwark_sim::{
    CoreMetrics, JobRecord, Mark, MarkKind, Outcome, Slice, SliceKind, Stats, TaskMetrics, Trace,
};

fn at(ns: u64) -> Instant {
    Instant::from_nanos(ns)
}

fn slice(task: Option<u32>, kind: SliceKind, start: u64, end: u64) -> Slice {
    Slice {
        core: 0,
        task: task.map(TaskId),
        kind,
        start: at(start),
        end: at(end),
    }
}

fn mark(task: u32, kind: MarkKind, time: u64) -> Mark {
    Mark {
        task: TaskId(task),
        core: 0,
        kind,
        at: at(time),
        job: 0,
    }
}

/// The name of task 1, with characters every output format must escape.
pub(crate) const AWKWARD_NAME: &str = "log<&>\"";

/// The outcome described at the top of this module.
pub(crate) fn two_tasks_one_core() -> Outcome {
    two_tasks_one_core_with_name("log")
}

/// The same outcome with task 1 named [`AWKWARD_NAME`].
pub(crate) fn awkward_names() -> Outcome {
    two_tasks_one_core_with_name(AWKWARD_NAME)
}

fn two_tasks_one_core_with_name(second: &str) -> Outcome {
    let slices = vec![
        slice(Some(0), SliceKind::Kernel, 0, 1_500),
        slice(Some(0), SliceKind::Task, 1_500, 1_001_500),
        slice(Some(1), SliceKind::Kernel, 1_001_500, 1_002_250),
        slice(Some(1), SliceKind::CacheRefill, 1_002_250, 1_052_250),
        slice(Some(1), SliceKind::Task, 1_052_250, 3_000_000),
        slice(None, SliceKind::Kernel, 3_000_000, 3_000_800),
    ];
    // Observation order, as the recorder would see it: the miss is stamped at the deadline.
    let marks = vec![
        mark(0, MarkKind::Release, 0),
        mark(1, MarkKind::Release, 0),
        mark(0, MarkKind::Completion, 1_001_500),
        mark(0, MarkKind::Suspend, 1_001_500),
        mark(1, MarkKind::DeadlineMiss, 2_000_000),
        mark(1, MarkKind::Completion, 3_000_000),
    ];
    let mut ctl_response = Stats::default();
    ctl_response.record(bulwark_core::Duration::from_nanos(1_001_500));
    let mut ctl_wakeup = Stats::default();
    ctl_wakeup.record(bulwark_core::Duration::from_nanos(1_500));
    let mut log_response = Stats::default();
    log_response.record(bulwark_core::Duration::from_nanos(3_000_000));
    let mut log_wakeup = Stats::default();
    log_wakeup.record(bulwark_core::Duration::from_nanos(1_002_250));
    Outcome {
        scenario: "two-tasks".to_string(),
        policy: "fixed-priority".into(),
        seed: 42,
        until: at(4_000_000),
        events: 17,
        tasks: vec![
            TaskMetrics {
                name: "ctl".to_string(),
                core: 0,
                jobs: 1,
                completed: 1,
                misses: 0,
                first_miss: None,
                response: ctl_response,
                wakeup_latency: ctl_wakeup,
                executed_ns: 1_000_000,
                kernel_ns: 1_500,
                refill_ns: 0,
                preemptions: 0,
                work_units: 10,
                ..TaskMetrics::default()
            },
            TaskMetrics {
                name: second.to_string(),
                core: 0,
                jobs: 1,
                completed: 1,
                misses: 1,
                first_miss: Some(at(2_000_000)),
                response: log_response,
                wakeup_latency: log_wakeup,
                executed_ns: 1_947_750,
                kernel_ns: 750,
                refill_ns: 50_000,
                preemptions: 0,
                work_units: 3,
                ..TaskMetrics::default()
            },
        ],
        cores: vec![CoreMetrics {
            busy_ns: 2_997_750,
            kernel_ns: 3_050,
            invocations: 3,
            timer_interrupts: 1,
            context_switches: 2,
            work_units: 5,
            max_work_units: 2,
            ..CoreMetrics::default()
        }],
        jobs: Some(vec![
            JobRecord {
                task: TaskId(0),
                job: 0,
                release: at(0),
                first_start: Some(at(1_500)),
                completion: Some(at(1_001_500)),
                deadline: Some(at(2_000_000)),
                missed: false,
            },
            JobRecord {
                task: TaskId(1),
                job: 0,
                release: at(0),
                first_start: Some(at(1_002_250)),
                completion: Some(at(3_000_000)),
                deadline: Some(at(2_000_000)),
                missed: true,
            },
        ]),
        trace: Some(Trace { slices, marks }),
        clusters: Vec::new(),
        components: None,
    }
}

/// Fails on the first check that does not pass, saying what it claimed, expected and measured.
pub fn assert_every_check_passes<'a>(checks: impl IntoIterator<Item = &'a crate::report::Check>) {
    for check in checks {
        assert!(
            check.pass,
            "{}: expected {}, measured {}",
            check.claim, check.expected, check.measured
        );
    }
}
