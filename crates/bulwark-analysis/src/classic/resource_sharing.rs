//! Blocking terms from critical sections on one processor, for the fixed-priority tests
//! (Buttazzo, Hard Real-Time Computing Systems, 3rd ed., chapter 7):
//!
//! - **NPCS** (non-preemptive critical sections, section 7.4): any lower-priority critical
//!   section can block, once: `B_i = max { delta_{j,k} : j lower than i }`.
//! - **PIP** (priority inheritance, section 7.6.4): a task is blocked at most once per
//!   lower-priority task and at most once per semaphore, only by sections of semaphores whose
//!   ceiling is at least its priority: `B_i = min(B_i^l, B_i^s)` with
//!   `B_i^l = sum_{j lower} max_k { delta_{j,k} : C(S_k) >= P_i }` and
//!   `B_i^s = sum_k max_{j lower} { delta_{j,k} : C(S_k) >= P_i }` (the book's bound, for
//!   non-nested sections).
//! - **PCP** (priority ceiling, section 7.7.4) and **SRP** (section 7.8, which gives the same
//!   bound under fixed priorities): at most one section, of a lower-priority task, on a
//!   semaphore whose ceiling is at least `P_i`: `B_i = max { delta_{j,k} : j lower,
//!   C(S_k) >= P_i }`.
//!
//! Tasks are indexed most important first, as in [`super::fixed_priority`]; the ceiling of a
//! resource is the most important task that uses it. Lengths are the whole section
//! (continuous-time bounds; in integer time they are safe by one unit). The scenario format
//! has no syntax for critical sections of plain tasks yet; this API takes them directly.

/// One critical section: task `task` holds resource `resource` for at most `length`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CriticalSection {
    /// The task's index (0 = most important).
    pub task: usize,
    /// The resource (semaphore) it locks, by any numbering.
    pub resource: usize,
    /// The longest time it holds it.
    pub length: u64,
}

/// The resource-access protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Non-preemptive critical sections.
    Npcs,
    /// Priority inheritance.
    Pip,
    /// Priority ceiling (also the SRP bound under fixed priorities).
    Pcp,
}

/// `C(S_k)`: the index of the most important task using `resource` (`usize::MAX` if none).
fn ceiling(sections: &[CriticalSection], resource: usize) -> usize {
    sections
        .iter()
        .filter(|s| s.resource == resource)
        .map(|s| s.task)
        .min()
        .unwrap_or(usize::MAX)
}

/// Sections that can block task `index`: of a lower-priority task and (except under NPCS) on
/// a resource whose ceiling is at least `index`'s priority.
fn blockers(
    sections: &[CriticalSection],
    index: usize,
    protocol: Protocol,
) -> impl Iterator<Item = &CriticalSection> {
    sections.iter().filter(move |s| {
        s.task > index && (protocol == Protocol::Npcs || ceiling(sections, s.resource) <= index)
    })
}

/// `B_i` for every one of `tasks` tasks under `protocol`.
pub fn blocking_terms(tasks: usize, sections: &[CriticalSection], protocol: Protocol) -> Vec<u64> {
    (0..tasks)
        .map(|index| match protocol {
            Protocol::Npcs | Protocol::Pcp => blockers(sections, index, protocol)
                .map(|s| s.length)
                .max()
                .unwrap_or(0),
            Protocol::Pip => {
                let longest_per = |key: &dyn Fn(&CriticalSection) -> usize| -> u64 {
                    let mut best: Vec<(usize, u64)> = Vec::new();
                    for s in blockers(sections, index, protocol) {
                        match best.iter_mut().find(|(k, _)| *k == key(s)) {
                            Some((_, longest)) => *longest = (*longest).max(s.length),
                            None => best.push((key(s), s.length)),
                        }
                    }
                    best.iter().map(|&(_, l)| l).fold(0u64, u64::saturating_add)
                };
                let per_task = longest_per(&|s| s.task);
                let per_resource = longest_per(&|s| s.resource);
                per_task.min(per_resource)
            }
        })
        .collect()
}

/// `tasks` (most important first) with each blocking term set to the larger of its own and
/// the one `protocol` gives from `sections`, ready for [`super::fixed_priority`].
pub fn with_blocking(
    tasks: &[super::Task],
    sections: &[CriticalSection],
    protocol: Protocol,
) -> Vec<super::Task> {
    tasks
        .iter()
        .zip(blocking_terms(tasks.len(), sections, protocol))
        .map(|(task, blocking)| {
            let own = task.blocking;
            task.clone().with_blocking(own.max(blocking))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cs(task: usize, resource: usize, length: u64) -> CriticalSection {
        CriticalSection {
            task,
            resource,
            length,
        }
    }

    /// Three tasks (0 most important) and two semaphores, worked by hand:
    /// S_a used by tasks 0 (1) and 2 (4): ceiling 0. S_b used by tasks 1 (3) and 2 (5):
    /// ceiling 1.
    ///
    /// - NPCS: B_0 = max(3, 4, 5) = 5; B_1 = max(4, 5) = 5; B_2 = 0.
    /// - PCP: B_0: lower sections with ceiling <= 0: S_a by 2 (4) -> 4. B_1: lower sections
    ///   (task 2) with ceiling <= 1: S_a 4, S_b 5 -> 5. B_2 = 0.
    /// - PIP: B_0: blockers S_a by 2 (4) only (S_b's ceiling is 1): per task 4, per resource
    ///   4 -> 4. B_1: blockers S_a(2, 4), S_b(2, 5): per task max = 5 (one task), per
    ///   resource 4 + 5 = 9 -> min = 5.
    #[test]
    fn blocking_by_hand() {
        let sections = [cs(0, 0, 1), cs(2, 0, 4), cs(1, 1, 3), cs(2, 1, 5)];
        assert_eq!(blocking_terms(3, &sections, Protocol::Npcs), vec![5, 5, 0]);
        assert_eq!(blocking_terms(3, &sections, Protocol::Pcp), vec![4, 5, 0]);
        assert_eq!(blocking_terms(3, &sections, Protocol::Pip), vec![4, 5, 0]);
    }

    /// PIP can block once per lower task: task 0 shares S_a with task 1 (2) and S_b with
    /// task 2 (3): both lower tasks can hold a semaphore when 0 arrives, B_0 = 2 + 3 = 5 under
    /// PIP, but only the longer one, 3, under PCP.
    #[test]
    fn pip_chains_and_pcp_does_not() {
        let sections = [cs(0, 0, 1), cs(0, 1, 1), cs(1, 0, 2), cs(2, 1, 3)];
        assert_eq!(blocking_terms(3, &sections, Protocol::Pip)[0], 5);
        assert_eq!(blocking_terms(3, &sections, Protocol::Pcp)[0], 3);
    }
}
