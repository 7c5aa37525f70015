//! The schedulability tests a sweep compares, each a yes/no on one task set.
//!
//! The exact tests call [`crate::classic`]; the two utilisation bounds for rate monotonic
//! are sufficient only, and only for implicit deadlines: on a set with a deadline shorter
//! than its period they answer no (not shown schedulable).

use num_bigint::BigUint;

use crate::bandwidth;
use crate::classic::{edf, fixed_priority, priority_assignment, Task};

/// Whether the test named `test` (one of [`bulwark_spec::sweep_toml::SWEEP_TESTS`]) accepts
/// `tasks`; an unknown name accepts nothing.
pub fn accepts(test: &str, tasks: &[Task]) -> bool {
    match test {
        "fp-rta-rm" => fixed_priority_with(tasks, &priority_assignment::rate_monotonic(tasks)),
        "fp-rta-dm" => fixed_priority_with(tasks, &priority_assignment::deadline_monotonic(tasks)),
        "fp-audsley" => priority_assignment::audsley(tasks).is_ok(),
        "edf-qpa" => edf::analyse(tasks).schedulable(),
        // Exact for implicit deadlines only (Liu and Layland 1973, Theorem 7).
        "edf-utilisation" => bandwidth::sum_at_most_one(tasks.iter().map(|t| (t.wcet, t.period))),
        "liu-layland" => implicit(tasks) && liu_layland(tasks),
        "hyperbolic" => implicit(tasks) && hyperbolic(tasks),
        _ => false,
    }
}

/// The scheduler a test's verdict speaks for: what a simulation must run to check it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Preemptive fixed priorities: task indices, most important first.
    FixedPriority(Vec<usize>),
    /// Preemptive EDF.
    Edf,
}

/// The scheduler `test` claims schedules `tasks` when it admits them: the fixed-priority tests
/// their own order (rate monotonic, deadline monotonic, or Audsley's assignment), the two
/// utilisation bounds rate monotonic, the EDF tests EDF. `None` for an unknown test, and for
/// fp-audsley when it finds no order (it then admits nothing either).
pub fn schedule(test: &str, tasks: &[Task]) -> Option<Schedule> {
    match test {
        "fp-rta-rm" | "liu-layland" | "hyperbolic" => Some(Schedule::FixedPriority(
            priority_assignment::rate_monotonic(tasks),
        )),
        "fp-rta-dm" => Some(Schedule::FixedPriority(
            priority_assignment::deadline_monotonic(tasks),
        )),
        "fp-audsley" => priority_assignment::audsley(tasks)
            .ok()
            .map(Schedule::FixedPriority),
        "edf-qpa" | "edf-utilisation" => Some(Schedule::Edf),
        _ => None,
    }
}

fn implicit(tasks: &[Task]) -> bool {
    tasks.iter().all(|t| t.deadline == t.period)
}

/// Exact response-time analysis with the priorities `order` (most important first).
fn fixed_priority_with(tasks: &[Task], order: &[usize]) -> bool {
    let ordered = priority_assignment::ordered(tasks, order);
    fixed_priority::response_times(&ordered)
        .iter()
        .all(|a| a.schedulable())
}

/// Liu and Layland 1973, Theorem 5: `U <= n (2^(1/n) - 1)`. The bound is irrational, so the
/// comparison is in floating point, with a relative margin of 1e-12 against the bound so
/// that rounding can only make this sufficient test more cautious, never wrong.
fn liu_layland(tasks: &[Task]) -> bool {
    let n = tasks.len() as f64;
    if tasks.is_empty() {
        return true;
    }
    let utilisation: f64 = tasks.iter().map(|t| t.wcet as f64 / t.period as f64).sum();
    let bound = n * (2f64.powf(1.0 / n) - 1.0);
    utilisation <= bound * (1.0 - 1e-12)
}

/// The hyperbolic bound (Bini, Buttazzo and Buttazzo 2003, Theorem 1): `prod (U_i + 1) <= 2`,
/// decided exactly as `prod (C_i + T_i) <= 2 prod T_i` in big integers.
fn hyperbolic(tasks: &[Task]) -> bool {
    let mut left = BigUint::from(1u8);
    let mut right = BigUint::from(2u8);
    for task in tasks {
        left *= BigUint::from(task.wcet) + BigUint::from(task.period);
        right *= BigUint::from(task.period);
    }
    left <= right
}
