//! Blocking by passive-server calls on one fixed-priority core: the `B` a task's response
//! time must hold for the operations of lower-priority tasks' calls, when every caller of each
//! server is on the core and an operation calls no other server.
//!
//! A call donates its caller's scheduling context to the server for one operation (seL4 MCS's
//! passive server), so the operation is its caller's own work, in its `C`. What a caller that
//! finds the server busy does is the server's rule ([`ServerRule`]), and so is the blocking:
//!
//! - **Ceiling** (the server's own priority, at least every caller's: the immediate ceiling
//!   protocol). An operation runs at the ceiling, so no caller finds the server busy, and a
//!   task is blocked at most once, by one lower task's operation on a server whose ceiling is
//!   at least its priority: the longest such.
//! - **Inheritance** (bandwidth inheritance: a waiting caller's context runs the operation in
//!   service, as under priority inheritance). A lower task's request runs at a higher
//!   priority only when a caller at that priority waits behind it, so it blocks the tasks at
//!   or below the highest waiting caller.
//! - **Caller only** (neither): the request in service runs on its own caller's context, at
//!   its priority, and a waiting caller blocks (suspends). A task `i` that calls the server
//!   waits for a lower caller `j`'s operation only while nothing between them runs: any other
//!   task strictly between `j` and `i` is a priority inversion without bound ([`Unbounded`]).
//!   A task between two callers (or at the upper one's priority) is not analysed either: the
//!   upper one may suspend while the lower one runs below it, and a suspension defers work
//!   into later windows, which the response-time test does not count.
//!
//! Each lower task adds at most one operation in a level-`i` busy period: it runs only
//! through its operation's request, on a higher context or (caller only) on its own while
//! `i` waits, and it issues no new call until the busy period ends. So
//! `B_i = max ceiling term + sum over lower tasks j of max_{S relevant} L_{j,S}`, with `S`
//! relevant when it inherits and a task at or above `i`'s priority calls it, or it is
//! caller-only and `i` calls it. Sufficient only: the worst blocking need not happen.

/// How a server runs a request while its callers wait ([`server_blocking`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerRule {
    /// Its operation runs at this priority, at least every caller's.
    Ceiling(u8),
    /// Waiting callers' contexts run the request in service.
    Inheritance,
    /// Only the request's own caller runs it; waiting callers block.
    CallerOnly,
}

/// A task of the core: its priority (larger is more important) and, per server it calls,
/// the longest operation one of its calls runs (`(server, L)`, a server once).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallingTask {
    /// Its priority.
    pub priority: u8,
    /// `(server, L_{task, server})`.
    pub calls: Vec<(usize, u64)>,
}

/// Why a task's blocking has no bound here: caller-only `server`'s lower caller `lower` may
/// hold it while task `between` runs, below `upper` (the task itself, or a caller it would
/// delay while that caller suspends).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unbounded {
    /// The server.
    pub server: usize,
    /// The lower caller whose request runs at its priority.
    pub lower: usize,
    /// The task strictly between that runs first.
    pub between: usize,
    /// The caller that waits.
    pub upper: usize,
}

/// Each task's `B` from lower tasks' operations (the module's rules), or why it has none.
/// `rules[s]` is server `s`'s; a call to a server past `rules` is ignored (it blocks nobody).
pub fn server_blocking(tasks: &[CallingTask], rules: &[ServerRule]) -> Vec<Result<u64, Unbounded>> {
    (0..tasks.len())
        .map(|task| blocking_of(task, tasks, rules))
        .collect()
}

fn calls(task: &CallingTask, server: usize) -> bool {
    task.calls.iter().any(|&(called, _)| called == server)
}

fn blocking_of(own: usize, tasks: &[CallingTask], rules: &[ServerRule]) -> Result<u64, Unbounded> {
    let level = tasks[own].priority;
    let at_or_above = |server: usize| {
        tasks
            .iter()
            .any(|t| t.priority >= level && calls(t, server))
    };
    // Caller-only servers: the caller above `level` (or `own`) waits while a lower one runs.
    for (server, rule) in rules.iter().enumerate() {
        if *rule != ServerRule::CallerOnly {
            continue;
        }
        // Another caller at or above `level`, which may wait for a lower one.
        let upper = (0..tasks.len()).find(|&upper| {
            upper != own && tasks[upper].priority >= level && calls(&tasks[upper], server)
        });
        for (lower, low) in tasks.iter().enumerate() {
            if low.priority >= level || !calls(low, server) {
                continue;
            }
            if let Some(upper) = upper {
                // `own` is between `lower` and `upper`: `upper` may suspend below it.
                return Err(Unbounded {
                    server,
                    lower,
                    between: own,
                    upper,
                });
            }
            if !calls(&tasks[own], server) {
                continue;
            }
            let between = (0..tasks.len()).find(|&between| {
                between != own
                    && between != lower
                    && tasks[between].priority > low.priority
                    && tasks[between].priority < level
            });
            if let Some(between) = between {
                return Err(Unbounded {
                    server,
                    lower,
                    between,
                    upper: own,
                });
            }
        }
    }
    let rule = |server: usize| rules.get(server).copied();
    // At most one lower operation at a ceiling at or above `level`, at the busy period's start.
    let ceiling = tasks
        .iter()
        .filter(|t| t.priority < level)
        .flat_map(|t| &t.calls)
        .filter(|&&(server, _)| matches!(rule(server), Some(ServerRule::Ceiling(c)) if c >= level))
        .map(|&(_, operation)| operation)
        .max()
        .unwrap_or(0);
    // One request per lower task, on a server that makes a caller at or above `level` wait.
    let inherited = tasks
        .iter()
        .filter(|t| t.priority < level)
        .map(|t| {
            t.calls
                .iter()
                .filter(|&&(server, _)| match rule(server) {
                    Some(ServerRule::Inheritance) => at_or_above(server),
                    Some(ServerRule::CallerOnly) => calls(&tasks[own], server),
                    _ => false,
                })
                .map(|&(_, operation)| operation)
                .max()
                .unwrap_or(0)
        })
        .fold(0u64, u64::saturating_add);
    Ok(ceiling.saturating_add(inherited))
}

/// EDF: the most a demand window of length `t >= D_min` may lose to operations of tasks whose
/// deadlines lie beyond it, run on the contexts of jobs due within it (bandwidth
/// inheritance, as under priority inheritance; Spuri's `B(t)`, taken at its largest, at
/// `D_min`): one request per task whose relative deadline `deadlines[j]` is above `D_min`, the
/// longest it makes to a server with another caller. `Err(server)`: a caller-only server with
/// two callers or more, whose waiting caller suspends while a later deadline's request runs
/// behind jobs due between them (an inversion without bound), or a ceiling, which no EDF core
/// has.
pub fn edf_blocking(
    tasks: &[CallingTask],
    deadlines: &[u64],
    rules: &[ServerRule],
) -> Result<u64, usize> {
    let callers = |server: usize| tasks.iter().filter(|t| calls(t, server)).count();
    for (server, rule) in rules.iter().enumerate() {
        if *rule != ServerRule::Inheritance && callers(server) > 1 {
            return Err(server);
        }
    }
    let first = deadlines.iter().copied().min().unwrap_or(0);
    let shared =
        |server: usize| rules.get(server) == Some(&ServerRule::Inheritance) && callers(server) > 1;
    Ok(tasks
        .iter()
        .zip(deadlines)
        .filter(|&(_, &deadline)| deadline > first)
        .map(|(task, _)| {
            (task.calls.iter())
                .filter(|&&(server, _)| shared(server))
                .map(|&(_, operation)| operation)
                .max()
                .unwrap_or(0)
        })
        .fold(0u64, u64::saturating_add))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(priority: u8, calls: &[(usize, u64)]) -> CallingTask {
        CallingTask {
            priority,
            calls: calls.to_vec(),
        }
    }

    /// By hand, one inheriting server: high (9) and low (1) call it for 2 and 3; mid (5)
    /// calls nothing. low's operation may run on high's context: it blocks high and mid by
    /// 3; low itself, the lowest, is blocked by nothing.
    #[test]
    fn inheritance_blocks_every_task_up_to_the_highest_caller() {
        let tasks = [task(9, &[(0, 2)]), task(5, &[]), task(1, &[(0, 3)])];
        let blocking = server_blocking(&tasks, &[ServerRule::Inheritance]);
        assert_eq!(blocking, vec![Ok(3), Ok(3), Ok(0)]);
        // Above every caller: nothing.
        let tasks = [task(12, &[]), task(9, &[(0, 2)]), task(1, &[(0, 3)])];
        let blocking = server_blocking(&tasks, &[ServerRule::Inheritance]);
        assert_eq!(blocking, vec![Ok(0), Ok(3), Ok(0)]);
    }

    /// By hand: two lower callers, each with one request, on two inheriting servers: high
    /// waits for both (FIFO: 3 + 4); a lower task that calls both counts its longer one once.
    #[test]
    fn inheritance_adds_one_request_per_lower_task() {
        let tasks = [
            task(9, &[(0, 1), (1, 1)]),
            task(3, &[(0, 3)]),
            task(2, &[(1, 4)]),
        ];
        let rules = [ServerRule::Inheritance, ServerRule::Inheritance];
        assert_eq!(server_blocking(&tasks, &rules)[0], Ok(7));
        let tasks = [task(9, &[(0, 1), (1, 1)]), task(3, &[(0, 3), (1, 5)])];
        assert_eq!(server_blocking(&tasks, &rules)[0], Ok(5));
    }

    /// By hand, ceilings: server 0 at 7 (callers 7 and 1, operations 2 and 4), server 1 at
    /// 3 (a caller at 2, 6): a task at 5 is blocked once, by the longest lower operation at a
    /// ceiling of 5 or more (4), not by server 1's (ceiling 3 < 5); a task at 3 by the longer
    /// of 4 and 6; a task at 8, above every ceiling, by nothing.
    #[test]
    fn a_ceiling_blocks_once_by_the_longest_lower_operation() {
        let tasks = [
            task(8, &[]),
            task(7, &[(0, 2)]),
            task(5, &[]),
            task(3, &[]),
            task(2, &[(1, 6)]),
            task(1, &[(0, 4)]),
        ];
        let rules = [ServerRule::Ceiling(7), ServerRule::Ceiling(3)];
        let blocking = server_blocking(&tasks, &rules);
        assert_eq!(blocking, vec![Ok(0), Ok(4), Ok(4), Ok(6), Ok(4), Ok(0)]);
    }

    /// By hand, caller only (passive-servers' core 1): high (9) and low (1) call it, mid (5)
    /// is between: high's wait for low's request has no bound (mid runs first), and mid is
    /// between two callers, so it is not analysed either; low is. Without mid, high is
    /// blocked by low's 2 and nothing else is.
    #[test]
    fn a_caller_only_server_has_no_bound_across_a_task_between() {
        let tasks = [task(9, &[(0, 2)]), task(5, &[]), task(1, &[(0, 2)])];
        let blocking = server_blocking(&tasks, &[ServerRule::CallerOnly]);
        let unbounded = Unbounded {
            server: 0,
            lower: 2,
            between: 1,
            upper: 0,
        };
        assert_eq!(blocking[0], Err(unbounded));
        assert_eq!(blocking[1], Err(unbounded));
        assert_eq!(blocking[2], Ok(0));
        let tasks = [task(9, &[(0, 2)]), task(1, &[(0, 2)])];
        let blocking = server_blocking(&tasks, &[ServerRule::CallerOnly]);
        assert_eq!(blocking, vec![Ok(2), Ok(0)]);
        // A task below both callers is not delayed by a suspension: the core stays busy.
        let tasks = [task(9, &[(0, 2)]), task(3, &[(0, 2)]), task(1, &[])];
        let blocking = server_blocking(&tasks, &[ServerRule::CallerOnly]);
        assert_eq!(blocking, vec![Ok(2), Ok(0), Ok(0)]);
    }

    /// By hand, EDF: tasks with deadlines 5, 10 and 20 ms; the first two call inheriting
    /// server 0 (2 and 3 ms), the third calls it (4 ms) and server 1 alone (6 ms). B = 3 + 4:
    /// every task above the least deadline, once each, a server of one caller not counted.
    /// A caller-only server with two callers has no bound; with one, no wait.
    #[test]
    fn edf_counts_one_request_per_task_due_after_the_first_deadline() {
        let tasks = [
            task(0, &[(0, 2)]),
            task(0, &[(0, 3)]),
            task(0, &[(0, 4), (1, 6)]),
        ];
        let rules = [ServerRule::Inheritance, ServerRule::Inheritance];
        assert_eq!(edf_blocking(&tasks, &[5, 10, 20], &rules), Ok(7));
        let rules = [ServerRule::CallerOnly, ServerRule::CallerOnly];
        assert_eq!(edf_blocking(&tasks, &[5, 10, 20], &rules), Err(0));
        let alone = [task(0, &[(1, 6)]), task(0, &[])];
        assert_eq!(edf_blocking(&alone, &[5, 10], &rules), Ok(0));
    }
}
