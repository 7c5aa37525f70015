//! Classic uniprocessor schedulability analysis of plain sporadic task sets: exact
//! fixed-priority response-time analysis ([`fixed_priority`]), priority assignment
//! ([`priority_assignment`]), the exact EDF processor-demand test with QPA ([`edf`]), and the
//! blocking terms of the resource-sharing protocols ([`resource_sharing`]) and of passive
//! servers' calls ([`server_calls`]).
//!
//! Time is an integer count of any unit (the CLI uses nanoseconds): parameters are `u64`,
//! intermediate sums `u128`, and no verdict ever depends on a float.

pub mod edf;
pub mod fixed_point;
pub mod fixed_priority;
pub mod priority_assignment;
pub mod reference_sets;
pub mod resource_sharing;
pub mod server_calls;

/// One sporadic task: a job of at most `wcet` released at least `period` apart, each with a
/// relative deadline `deadline` (any value: constrained or arbitrary), released up to
/// `jitter` after its arrival, and blocked for at most `blocking` by lower-priority tasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Name, for reports.
    pub name: String,
    /// `C`: worst-case execution time.
    pub wcet: u64,
    /// `T`: period or least inter-arrival time (positive).
    pub period: u64,
    /// `D`: relative deadline, from arrival (positive).
    pub deadline: u64,
    /// `J`: release jitter.
    pub jitter: u64,
    /// `B`: the longest blocking by lower-priority tasks (see [`resource_sharing`]).
    pub blocking: u64,
    /// `q`: the final non-preemptive region of each job (`0 < q <= C` for the
    /// limited-preemptive test; 0 means fully preemptive).
    pub final_region: u64,
}

impl Task {
    /// A task `(C, T)` with an implicit deadline `D = T` and no jitter or blocking.
    pub fn new(name: impl Into<String>, wcet: u64, period: u64) -> Self {
        Task {
            name: name.into(),
            wcet,
            period,
            deadline: period,
            jitter: 0,
            blocking: 0,
            final_region: 0,
        }
    }

    /// The same task with relative deadline `deadline`.
    pub fn with_deadline(mut self, deadline: u64) -> Self {
        self.deadline = deadline;
        self
    }

    /// The same task with release jitter `jitter`.
    pub fn with_jitter(mut self, jitter: u64) -> Self {
        self.jitter = jitter;
        self
    }

    /// The same task with blocking term `blocking`.
    pub fn with_blocking(mut self, blocking: u64) -> Self {
        self.blocking = blocking;
        self
    }

    /// The same task with final non-preemptive region `final_region`.
    pub fn with_final_region(mut self, final_region: u64) -> Self {
        self.final_region = final_region;
        self
    }

    /// A copy without the name, for an analysis that reads only the numbers: no allocation.
    pub fn timing(&self) -> Task {
        Task {
            name: String::new(),
            ..*self
        }
    }
}

/// What makes a task set unfit for analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidTask {
    /// `T = 0`.
    ZeroPeriod(String),
    /// `D = 0`.
    ZeroDeadline(String),
    /// `q > C`.
    RegionLongerThanJob(String),
}

impl std::fmt::Display for InvalidTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InvalidTask::ZeroPeriod(n) => write!(f, "task `{n}` has period 0; it must be positive"),
            InvalidTask::ZeroDeadline(n) => {
                write!(f, "task `{n}` has deadline 0; it must be positive")
            }
            InvalidTask::RegionLongerThanJob(n) => write!(
                f,
                "task `{n}` has a final non-preemptive region longer than its execution time"
            ),
        }
    }
}

impl std::error::Error for InvalidTask {}

/// The least common multiple of the periods, `None` past `u64`.
pub(crate) fn hyperperiod(tasks: &[Task]) -> Option<u64> {
    hyperperiod_of(tasks.iter().map(|task| task.period))
}

/// The least common multiple of `periods` (zero read as 1), `None` past `u64`.
pub(crate) fn hyperperiod_of(periods: impl IntoIterator<Item = u64>) -> Option<u64> {
    periods.into_iter().try_fold(1u64, |lcm, period| {
        let period = period.max(1);
        let (mut a, mut b) = (lcm, period);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        (lcm / a).checked_mul(period)
    })
}

/// Checks what every test here assumes: `T > 0`, `D > 0`, `q <= C`.
pub fn validate(tasks: &[Task]) -> Result<(), InvalidTask> {
    for task in tasks {
        if task.period == 0 {
            return Err(InvalidTask::ZeroPeriod(task.name.clone()));
        }
        if task.deadline == 0 {
            return Err(InvalidTask::ZeroDeadline(task.name.clone()));
        }
        if task.final_region > task.wcet {
            return Err(InvalidTask::RegionLongerThanJob(task.name.clone()));
        }
    }
    Ok(())
}
