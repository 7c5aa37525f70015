//! Schedulability of tasks that call component procedure interfaces (CPIs): WCET composition,
//! blocking terms and bounds of the CAmkES paper (section 3.2 and Appendix A), and
//! response-time analysis with blocking (exact for distinct priorities and for the paper's
//! ties).
//!
//! # Model
//!
//! A [`System`] is a set of [`Task`]s `tau_i = (C(c_i), T_i, p_i)` (implicit deadlines,
//! `D_i = T_i`; larger priority is more important, possibly shared) and a set of [`Cpi`]s. A
//! task's job runs `C(c_i)` in its originating component and makes requests to CPIs; a CPI's
//! procedure runs `C(c)` and may itself make nested requests. Every CPI has a [`CpiProtocol`]:
//! `propagated` (reentrant, section 3.2.1), `inherited` (PIP, section 3.2.3) or `fixed` (one
//! thread at a fixed priority: IPCP at the CPI's ceiling, or NPCS at 255; section 3.2.2).
//! Requests form a directed acyclic graph (a cycle is a [`ModelError::Cycle`], the deadlock
//! the paper's parser warns about). [`Overheads`] holds the measured protocol costs (Table 2).
//!
//! # How the equations are read
//!
//! - **Ceilings.** A CPI's threads wait at its ceiling: the highest priority any request to it
//!   can carry. A task's request carries the task's priority; a nested request carries the
//!   priority the calling CPI's thread runs at, at most that CPI's ceiling (section 4.1: a
//!   fixed CPI passes its thread's priority, not the task's). So the ceiling is the highest
//!   requesting task's priority `p_max(c)`, except downstream of an NPCS CPI, where it is 255.
//!   NPCS CPIs themselves have ceiling 255. Eq. 5's `p_max(c)` is read as this ceiling: it is
//!   never lower, so no blocking is missed.
//! - **Eq. 1 and 7** (`C_i`). `c_i` and `C(c)` as in the paper; the set `ĉ_i` of CPIs a task
//!   executes across is read as the multiset of requests one job makes, nested ones included:
//!   the paper allows a job to request the same CPI more than once (section 3.1), and counting
//!   each request never underestimates `C_i`. Each request adds `C(c)` and its protocol's
//!   overhead: `C_prop = send + reply`, `C_fix = send + reply`, and for inherited CPIs Eq. 8,
//!   which the paper defines but does not write into Eq. 7.
//! - **Eq. 8** (PIP overhead per request): `max{C^unlocked, C^locked + C^locked(c) +
//!   l(c) * C_up}`. The extraction writes the overheads with a subscript `i`
//!   ("`C_i^unlocked`"); it is read as "inherited", since the text says they depend on the lock
//!   state and the CPI, not on the task. `C^unlocked` and `C^locked` are call + reply on a free
//!   and on a held lock, `C^locked(c)` is [`Overheads::queue`] (the notification manager's
//!   full-heap cost), `l(c)` is the longest chain of nested requests rooted at `c` in hops
//!   (zero when `c` requests nothing). Every hop counts, although `nest` updates stop at fixed
//!   CPIs: an over-count, on the safe side.
//! - **`B(c)`** (section 3.2.2): `max(C_prop_send, C_prop_reply)` for a propagated CPI; the
//!   whole cost of one request (its overhead, `C(c)` and every nested request with their
//!   overheads) for a fixed or an inherited CPI.
//! - **Eq. 5** (IPCP; the paper's Eq. 5 is the ceiling term, not a PIP one):
//!   `B_i = max{B(c) | p_min(c) < p_i <= ceiling(c)}`, where `p_min(c)` is the lowest priority
//!   of a task whose job reaches `c`. A task may run a different `C(c)` in each CPI
//!   ([`Task::procedure_times`], the evaluation's per-CPI subtasks); then `B(c)` is taken over
//!   the requests of the strictly lower tasks that reach `c`, each with its own times. **Eq. 6** (NPCS) is the same term with ceiling 255.
//!   A strictly lower task is needed: an equal-priority task is counted whole as interference.
//! - **PIP blocking.** The paper says only that PIP can block for several critical sections.
//!   When an inherited CPI can block `tau_i` (same condition as Eq. 5), `B_i` is Sha, Rajkumar
//!   and Lehoczky's (1990) bound for the basic inheritance protocol: every strictly lower task
//!   blocks a job at most once, for at most one outermost critical section, here its longest
//!   request that can run at `p_i` or above (ceiling at least `p_i`): `B_i = sum_{j: p_j < p_i} max{B(c) | c reached by tau_j, ceiling(c) >= p_i}`.
//!   This also covers fixed and propagated CPIs mixed with PIP. With no such inherited CPI
//!   Eq. 5 applies (at most one lower job can be inside a section at `p_i` or above).
//! - **Eq. 2** (hyperbolic with blocking, Bini et al. 2003), **Eq. 4** (the paper's bound for
//!   non-unique priorities, Appendix A Theorem 2) and **Eq. 3** (Liu and Layland with
//!   blocking, Sha et al. Corollary 17) are rate-monotonic results: they only hold when every
//!   task of higher (Eq. 2) or higher-or-equal (Eqs. 3, 4, other than `tau_i`) priority has a
//!   period no longer than `T_i`. (A long-period task above a short one breaks them: `(4, 10)`
//!   above `(1, 4)` passes Eq. 2, `1.4 * 1.25 = 1.75 <= 2`, yet the short task finishes at 5.)
//!   So equal priorities must go with equal periods, as the paper assigns them. Eq. 2 also
//!   needs unique priorities. A set outside these conditions gets
//!   [`Verdict::NotApplicable`], never an admission.
//!
//! # Equal priorities in the response-time analysis
//!
//! Equal priorities run first-in first-out to completion (section 6: the round-robin time
//! slice is effectively infinite) and are preempted only by strictly higher priorities. The
//! analysis is `R_i = C_i + B_i + sum_{j != i, p_j >= p_i} ceil(R_i / T_j) C_j`: equal
//! priorities are counted like higher ones. Derivation:
//!
//! - A job `J` of `tau_i` released at offset `x` into a level-`i` busy period waits for
//!   higher-priority jobs released before it completes, and for the jobs of each equal-priority
//!   `tau_k` released no later than `J` (later ones queue behind it): at most
//!   `floor(x / T_k) + 1` of them, which is at most `ceil(w / T_k)` for any `w > x`, so the
//!   formula never under-counts and its least fixed point bounds `J`'s completion.
//! - If that `R_i <= T_i`, `R_i` is also a fixed point of the busy-period equation
//!   `L = B_i + sum_{p_j >= p_i} ceil(L / T_j) C_j` (`tau_i` included, `ceil(R_i / T_i) = 1`),
//!   so busy periods are at most `R_i <= T_i` long and only `tau_i`'s first job in one needs
//!   checking.
//! - Whenever `R_i <= T_k` this counts exactly **one job of each** equal-priority task, and
//!   synchronous release with those jobs queued first reaches it: exact, in particular for
//!   the paper's ties (equal priority for equal periods, so `R_i <= T_i = T_k` when
//!   admitted). An equal-priority task with a shorter period is counted `ceil(R_i / T_k)`
//!   times, **plus** `ceil(R_i / T_k) - 1` jobs that FIFO may not really put ahead of `tau_i`:
//!   safe, possibly pessimistic (tested by hand: 6 where the FIFO schedule gives 5).
//!
//! With distinct priorities this is the classic analysis.
//!
//! # Arithmetic
//!
//! Durations are `u64` nanoseconds; WCETs and blocking terms saturate at [`Duration::MAX`]
//! (584 years: no shorter period can admit a saturated term, so saturation only rejects). Response times are summed
//! in `u128`. The hyperbolic products are decided exactly, by comparing the integers
//! `prod (T_j + C_j) * (T_i + C_i + B_i)` and `2 * prod T_j * T_i`; the `f64` product is only
//! reported. Eq. 3 needs `2^(1/n)`, so it is decided in `f64` with a margin: admitted only if
//! the left side is at most the bound minus [`LIU_LAYLAND_MARGIN`], far above the rounding
//! error of the sums (about `n * 1e-16` for `n` tasks), so `f64` never admits a set exact
//! math rejects (the price: a set within `1e-9` of the bound is rejected).

use core::cmp::Ordering;

pub use bulwark_core::ipc::{CallReply, CpiProtocol};
use bulwark_core::{Duration, Priority};
use bulwark_spec::lowered::{LoweredCpi, LoweredTask, Step};

use crate::classic::fixed_point::{least_fixed_point, FixedPoint, Interference};
use crate::levels::Levels;
use crate::utilisation::liu_layland_bound;

/// How far below `n(2^(1/n) - 1)` Eq. 3's left side must stay to be admitted.
pub const LIU_LAYLAND_MARGIN: f64 = 1e-9;

/// A CPI's index in [`System::cpis`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpiId(pub usize);

/// A component procedure interface hosted by a passive component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpi {
    /// Its name, for reports.
    pub name: String,
    /// `C(c)`: the procedure's worst-case execution time, nested requests excluded.
    pub execution: Duration,
    /// Its protocol.
    pub protocol: CpiProtocol,
    /// The nested requests one run of the procedure makes (repeat an id to request it twice).
    pub requests: Vec<CpiId>,
}

impl Cpi {
    /// A CPI making no nested request.
    pub fn new(name: impl Into<String>, execution: Duration, protocol: CpiProtocol) -> Self {
        Cpi {
            name: name.into(),
            execution,
            protocol,
            requests: Vec::new(),
        }
    }

    /// The same CPI, making `requests` as nested requests.
    pub fn requesting(mut self, requests: &[CpiId]) -> Self {
        self.requests = requests.to_vec();
        self
    }
}

/// A periodic task originating in an active component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// Its name, for reports.
    pub name: String,
    /// `C(c_i)`: worst-case execution time in the originating component.
    pub execution: Duration,
    /// `T_i`, also its relative deadline.
    pub period: Duration,
    /// `p_i` (larger is more important; may be shared).
    pub priority: Priority,
    /// The requests one job makes from its originating component.
    pub requests: Vec<CpiId>,
    /// `C(c)` for this task's requests to CPI `c`, where it differs from [`Cpi::execution`]:
    /// the evaluation decomposes each task into subtasks, one per CPI it runs in (section
    /// 6.2), so a shared procedure runs for a different time per requesting task.
    pub procedure_times: Vec<(CpiId, Duration)>,
}

impl Task {
    /// A task making no request.
    pub fn new(
        name: impl Into<String>,
        execution: Duration,
        period: Duration,
        priority: Priority,
    ) -> Self {
        Task {
            name: name.into(),
            execution,
            period,
            priority,
            requests: Vec::new(),
            procedure_times: Vec::new(),
        }
    }

    /// The same task, making `requests`.
    pub fn requesting(mut self, requests: &[CpiId]) -> Self {
        self.requests = requests.to_vec();
        self
    }

    /// The same task, whose requests run `time` in CPI `cpi`'s procedure (nested requests
    /// excluded) instead of the CPI's own `C(c)`.
    pub fn with_procedure_time(mut self, cpi: CpiId, time: Duration) -> Self {
        self.procedure_times.retain(|(c, _)| *c != cpi);
        self.procedure_times.push((cpi, time));
        self
    }

    /// `C(c)` of this task's requests to `cpi`.
    fn procedure_time(&self, cpi: CpiId, cpis: &[Cpi]) -> Duration {
        self.procedure_times
            .iter()
            .find(|(c, _)| *c == cpi)
            .map_or(cpis[cpi.0].execution, |(_, d)| *d)
    }
}

/// Tasks and the CPIs they request, on one core.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct System {
    /// The tasks.
    pub tasks: Vec<Task>,
    /// The CPIs, indexed by [`CpiId`].
    pub cpis: Vec<Cpi>,
}

impl System {
    /// The system a lowered component system describes, read from the very bodies the
    /// machine runs: `C(c_i)` is the sum of a task body's `execute` steps and its
    /// requests are the body's `request` steps, in order; `C(c)` and a CPI's nested requests
    /// are those of its shared body. A per-task body gives that task's procedure time in the
    /// CPI (its requests are taken to be the shared body's).
    pub fn lowered(tasks: &[LoweredTask], cpis: &[LoweredCpi]) -> System {
        let execution = |body: &[Step]| {
            body.iter().fold(Duration::ZERO, |sum, step| match *step {
                Step::Execute(time) => sum.saturating_add(time),
                Step::Request(_) => sum,
            })
        };
        let requests = |body: &[Step]| -> Vec<CpiId> {
            body.iter()
                .filter_map(|step| match *step {
                    Step::Request(cpi) => Some(CpiId(cpi)),
                    Step::Execute(_) => None,
                })
                .collect()
        };
        System {
            tasks: tasks
                .iter()
                .enumerate()
                .map(|(index, task)| {
                    let mut analysed = Task::new(
                        &task.name,
                        execution(&task.body),
                        task.period,
                        task.priority,
                    )
                    .requesting(&requests(&task.body));
                    for (cpi, lowered) in cpis.iter().enumerate() {
                        if let Some((_, body)) =
                            lowered.task_bodies.iter().find(|(t, _)| *t == index)
                        {
                            analysed = analysed.with_procedure_time(CpiId(cpi), execution(body));
                        }
                    }
                    analysed
                })
                .collect(),
            cpis: cpis
                .iter()
                .map(|cpi| {
                    Cpi::new(&cpi.name, execution(&cpi.body), cpi.protocol)
                        .requesting(&requests(&cpi.body))
                })
                .collect(),
        }
    }
}

/// Worst-case protocol overheads (the paper's Table 2 maxima, converted to time). For nested
/// requests from an inherited CPI, Table 2 measures separate "PIP to PIP" and "PIP to
/// propagated" rows; give the larger of the direct and nested values here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overheads {
    /// `C_prop_send`, `C_prop_reply`.
    pub propagated: CallReply,
    /// `C_fix_send`, `C_fix_reply` (IPCP and NPCS).
    pub fixed: CallReply,
    /// Call and reply on an inherited CPI whose lock is free (`C^unlocked`).
    pub inherited_unlocked: CallReply,
    /// Call and reply on an inherited CPI whose lock is held (`C^locked`).
    pub inherited_locked: CallReply,
    /// `C^locked(c)`: the notification manager's priority queue when full (Fig. 6).
    pub queue: Duration,
    /// `C_up`: one nested priority-inheritance update (`nest`).
    pub nest: Duration,
}

impl Overheads {
    /// A platform with free protocols.
    pub const ZERO: Overheads = Overheads {
        propagated: CallReply::ZERO,
        fixed: CallReply::ZERO,
        inherited_unlocked: CallReply::ZERO,
        inherited_locked: CallReply::ZERO,
        queue: Duration::ZERO,
        nest: Duration::ZERO,
    };
}

/// Eq. 8: the worst-case overhead of one request to an inherited CPI whose longest nested
/// request chain is `chain` hops long.
pub fn inherited_overhead(overheads: &Overheads, chain: usize) -> Duration {
    let locked = overheads
        .inherited_locked
        .total()
        .saturating_add(overheads.queue)
        .saturating_add(overheads.nest.saturating_mul(chain as u64));
    overheads.inherited_unlocked.total().max(locked)
}

/// The overhead one request to a CPI adds to a WCET: `C_prop` (Eq. 1), `C_fix` (Eq. 7) or
/// Eq. 8.
pub fn request_overhead(protocol: CpiProtocol, overheads: &Overheads, chain: usize) -> Duration {
    match protocol {
        CpiProtocol::Propagated => overheads.propagated.total(),
        CpiProtocol::Ipcp | CpiProtocol::Npcs => overheads.fixed.total(),
        CpiProtocol::Inherited => inherited_overhead(overheads, chain),
    }
}

/// Why a system cannot be analysed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// A request names a CPI that does not exist.
    UnknownCpi {
        /// Who makes the request.
        requester: Requester,
        /// The missing id.
        cpi: CpiId,
    },
    /// Nested requests loop back to `cpi`: a possible deadlock, and an unbounded WCET.
    Cycle {
        /// A CPI on the cycle.
        cpi: CpiId,
    },
}

/// Who makes a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requester {
    /// The task at this index of [`System::tasks`].
    Task(usize),
    /// A CPI, by a nested request.
    Cpi(CpiId),
}

/// What the analysis found for one CPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpiAnalysis {
    /// `p_min(c)`: the lowest priority of a task whose job reaches it; `None` if none does.
    pub lowest: Option<Priority>,
    /// `p_max(c)`: the highest such priority; `None` if no task's job reaches it.
    pub highest: Option<Priority>,
    /// The priority its threads wait at (see the module notes); `Priority::MIN` if unused,
    /// 255 for NPCS.
    pub ceiling: Priority,
    /// `l(c)`: the longest chain of nested requests rooted at it, in hops.
    pub chain: usize,
    /// The overhead one request to it adds: `C_prop`, `C_fix` or Eq. 8.
    pub overhead: Duration,
    /// The whole cost of one request: overhead, `C(c)` and every nested request.
    pub request: Duration,
    /// `B(c)`: the longest it can block a task of higher priority than its requester.
    pub blocking: Duration,
}

/// Which blocking term a task got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockingRule {
    /// No CPI reached by a lower task can run at the task's priority or above: `B_i = 0`.
    None,
    /// Eq. 5 (and Eq. 6 for NPCS): the longest single section.
    Ceiling,
    /// An inherited CPI can block: once per lower task (Sha et al., 1990).
    Inheritance,
}

/// The timing parameters the bounds and the response-time analysis take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskTiming {
    /// `C_i`.
    pub execution: Duration,
    /// `T_i = D_i`.
    pub period: Duration,
    /// `p_i`.
    pub priority: Priority,
    /// `B_i`.
    pub blocking: Duration,
}

impl TaskTiming {
    /// A task `(C, T)` at `priority`, without blocking.
    pub const fn new(execution: Duration, period: Duration, priority: Priority) -> Self {
        TaskTiming {
            execution,
            period,
            priority,
            blocking: Duration::ZERO,
        }
    }

    /// The same task with blocking term `blocking`.
    pub const fn with_blocking(mut self, blocking: Duration) -> Self {
        self.blocking = blocking;
        self
    }
}

/// What the analysis found for one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskAnalysis {
    /// `C_i` by Eq. 7 (Eq. 1 when every CPI is propagated), `T_i`, `p_i` and `B_i`.
    pub timing: TaskTiming,
    /// Which rule gave `B_i`.
    pub rule: BlockingRule,
}

/// WCETs and blocking terms of a [`System`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// One entry per CPI, in [`System::cpis`] order.
    pub cpis: Vec<CpiAnalysis>,
    /// One entry per task, in [`System::tasks`] order.
    pub tasks: Vec<TaskAnalysis>,
}

impl Analysis {
    /// The tasks' timing parameters, for the bounds and the response-time analysis.
    pub fn timings(&self) -> Vec<TaskTiming> {
        self.tasks.iter().map(|t| t.timing).collect()
    }
}

/// WCETs (Eqs. 1, 7, 8) and blocking terms (Eqs. 5, 6 and PIP) of every task of `system`.
pub fn analyse(system: &System, overheads: &Overheads) -> Result<Analysis, ModelError> {
    check_ids(system)?;
    let cpis = &system.cpis;
    let order = callees_first(cpis)?;

    let mut chain = vec![0usize; cpis.len()];
    let mut overhead = vec![Duration::ZERO; cpis.len()];
    for &c in &order {
        chain[c] = cpis[c]
            .requests
            .iter()
            .map(|d| chain[d.0] + 1)
            .max()
            .unwrap_or(0);
        overhead[c] = request_overhead(cpis[c].protocol, overheads, chain[c]);
    }
    // The whole cost of one request to each CPI: with the CPIs' own `C(c)`, and for each
    // task with its procedure times.
    let defaults = request_costs(cpis, &order, &overhead, |c| cpis[c].execution);
    let per_task: Vec<Vec<Duration>> = system
        .tasks
        .iter()
        .map(|t| {
            request_costs(cpis, &order, &overhead, |c| {
                t.procedure_time(CpiId(c), cpis)
            })
        })
        .collect();
    // `B(c)` of one request of a task: the whole request for an exclusive CPI, the longer
    // protocol step at the ceiling for a propagated one.
    let blocking_of = |c: usize, request: Duration| match cpis[c].protocol {
        CpiProtocol::Propagated => overheads.propagated.longer(),
        CpiProtocol::Inherited | CpiProtocol::Ipcp | CpiProtocol::Npcs => request,
    };
    let per_task_blocking: Vec<Vec<Duration>> = per_task
        .iter()
        .map(|costs| {
            costs
                .iter()
                .enumerate()
                .map(|(c, &r)| blocking_of(c, r))
                .collect()
        })
        .collect();

    let ceiling = ceilings(system, &order);
    let reach: Vec<Vec<bool>> = system.tasks.iter().map(|t| reached(cpis, t)).collect();
    let analysed: Vec<CpiAnalysis> = (0..cpis.len())
        .map(|c| {
            let users = system
                .tasks
                .iter()
                .zip(&reach)
                .filter(|(_, r)| r[c])
                .map(|(t, _)| t.priority);
            // The longest request any task reaching it makes (its own `C(c)` if none does).
            let request = per_task
                .iter()
                .zip(&reach)
                .filter(|(_, r)| r[c])
                .map(|(costs, _)| costs[c])
                .max()
                .unwrap_or(defaults[c]);
            CpiAnalysis {
                lowest: users.clone().min(),
                highest: users.max(),
                ceiling: ceiling[c].unwrap_or(Priority::MIN),
                chain: chain[c],
                overhead: overhead[c],
                request,
                blocking: blocking_of(c, request),
            }
        })
        .collect();

    // `B_i` depends on the task's priority alone: worked out once per priority level (once
    // per task, it read every lower task's requests for each task).
    let mut by_priority: [Option<(Duration, BlockingRule)>; 256] = [None; 256];
    let tasks = system
        .tasks
        .iter()
        .zip(&per_task)
        .map(|(task, costs)| {
            let execution = task
                .requests
                .iter()
                .fold(task.execution, |sum, d| sum.saturating_add(costs[d.0]));
            let (blocking, rule) =
                *by_priority[usize::from(task.priority.0)].get_or_insert_with(|| {
                    task_blocking(system, &analysed, &per_task_blocking, &reach, task.priority)
                });
            TaskAnalysis {
                timing: TaskTiming {
                    execution,
                    period: task.period,
                    priority: task.priority,
                    blocking,
                },
                rule,
            }
        })
        .collect();
    Ok(Analysis {
        cpis: analysed,
        tasks,
    })
}

/// The whole cost of one request to each CPI (overhead, `C(c)` from `time`, and every nested
/// request), callees settled first.
fn request_costs(
    cpis: &[Cpi],
    callees_first: &[usize],
    overhead: &[Duration],
    time: impl Fn(usize) -> Duration,
) -> Vec<Duration> {
    let mut request = vec![Duration::ZERO; cpis.len()];
    for &c in callees_first {
        request[c] = cpis[c]
            .requests
            .iter()
            .fold(overhead[c].saturating_add(time(c)), |sum, d| {
                sum.saturating_add(request[d.0])
            });
    }
    request
}

/// True when `c` can block a task of priority `p`: a strictly lower task reaches it and it can
/// run at `p` or above (the condition of Eqs. 5 and 6).
fn can_block(c: &CpiAnalysis, p: Priority) -> bool {
    c.lowest.is_some_and(|low| low < p) && p <= c.ceiling
}

/// Eqs. 5 and 6: `max{B(c) | p_min(c) < p <= ceiling(c)}`, zero when no CPI qualifies.
pub fn ceiling_blocking(cpis: &[CpiAnalysis], priority: Priority) -> Duration {
    cpis.iter()
        .filter(|c| can_block(c, priority))
        .map(|c| c.blocking)
        .max()
        .unwrap_or(Duration::ZERO)
}

/// `B_i` for a task of `priority`, and the rule that gave it.
fn task_blocking(
    system: &System,
    cpis: &[CpiAnalysis],
    blocking: &[Vec<Duration>],
    reach: &[Vec<bool>],
    priority: Priority,
) -> (Duration, BlockingRule) {
    let inherited = system
        .cpis
        .iter()
        .zip(cpis)
        .any(|(cpi, c)| cpi.protocol == CpiProtocol::Inherited && can_block(c, priority));
    if inherited {
        // Once per strictly lower task, its longest request that can run at `priority` or above.
        let sum = lower_sections(system, cpis, blocking, reach, priority, |c| {
            priority <= c.ceiling
        })
        .map(|sections| sections.max().unwrap_or(Duration::ZERO))
        .fold(Duration::ZERO, Duration::saturating_add);
        return (sum, BlockingRule::Inheritance);
    }
    if cpis.iter().any(|c| can_block(c, priority)) {
        // Eq. 5: the longest single section of a strictly lower task.
        let longest = lower_sections(system, cpis, blocking, reach, priority, |c| {
            can_block(c, priority)
        })
        .flatten()
        .max()
        .unwrap_or(Duration::ZERO);
        (longest, BlockingRule::Ceiling)
    } else {
        (Duration::ZERO, BlockingRule::None)
    }
}

/// For each task of lower priority than `priority`, the blocking terms of its requests to the
/// CPIs it reaches that pass `qualifies`.
fn lower_sections<'a>(
    system: &'a System,
    cpis: &'a [CpiAnalysis],
    blocking: &'a [Vec<Duration>],
    reach: &'a [Vec<bool>],
    priority: Priority,
    qualifies: impl Fn(&CpiAnalysis) -> bool + Copy + 'a,
) -> impl Iterator<Item = impl Iterator<Item = Duration> + 'a> + 'a {
    system
        .tasks
        .iter()
        .zip(reach)
        .zip(blocking)
        .filter(move |((t, _), _)| t.priority < priority)
        .map(move |((_, r), b)| {
            cpis.iter()
                .zip(r)
                .zip(b)
                .filter(move |((c, &reached), _)| reached && qualifies(c))
                .map(|(_, &d)| d)
        })
}

/// Every request names an existing CPI.
fn check_ids(system: &System) -> Result<(), ModelError> {
    let n = system.cpis.len();
    let requests = system
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (Requester::Task(i), &t.requests))
        .chain(
            system
                .cpis
                .iter()
                .enumerate()
                .map(|(c, cpi)| (Requester::Cpi(CpiId(c)), &cpi.requests)),
        );
    for (requester, ids) in requests {
        if let Some(&cpi) = ids.iter().find(|id| id.0 >= n) {
            return Err(ModelError::UnknownCpi { requester, cpi });
        }
    }
    Ok(())
}

/// The CPIs in an order where every CPI comes after all the CPIs it requests (a depth-first
/// post-order); a cycle is an error.
fn callees_first(cpis: &[Cpi]) -> Result<Vec<usize>, ModelError> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let mut mark = vec![Mark::New; cpis.len()];
    let mut order = Vec::with_capacity(cpis.len());
    for root in 0..cpis.len() {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::Open;
        let mut stack = vec![(root, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (c, next) = *top;
            match cpis[c].requests.get(next) {
                Some(&d) => {
                    top.1 += 1;
                    match mark[d.0] {
                        Mark::New => {
                            mark[d.0] = Mark::Open;
                            stack.push((d.0, 0));
                        }
                        Mark::Open => return Err(ModelError::Cycle { cpi: d }),
                        Mark::Done => {}
                    }
                }
                None => {
                    mark[c] = Mark::Done;
                    order.push(c);
                    stack.pop();
                }
            }
        }
    }
    Ok(order)
}

/// Each CPI's ceiling (see the module notes), `None` when nothing requests it; callers are
/// settled before their callees by walking `callees_first` backwards.
fn ceilings(system: &System, callees_first: &[usize]) -> Vec<Option<Priority>> {
    let mut ceiling: Vec<Option<Priority>> = vec![None; system.cpis.len()];
    for task in &system.tasks {
        for d in &task.requests {
            ceiling[d.0] = ceiling[d.0].max(Some(task.priority));
        }
    }
    for &c in callees_first.iter().rev() {
        let cpi = &system.cpis[c];
        if cpi.protocol == CpiProtocol::Npcs {
            ceiling[c] = Some(Priority::MAX);
        }
        if let Some(p) = ceiling[c] {
            for d in &cpi.requests {
                ceiling[d.0] = ceiling[d.0].max(Some(p));
            }
        }
    }
    ceiling
}

/// Which CPIs a job of `task` reaches, directly or through nested requests.
fn reached(cpis: &[Cpi], task: &Task) -> Vec<bool> {
    let mut seen = vec![false; cpis.len()];
    let mut stack: Vec<usize> = task.requests.iter().map(|d| d.0).collect();
    while let Some(c) = stack.pop() {
        if !core::mem::replace(&mut seen[c], true) {
            stack.extend(cpis[c].requests.iter().map(|d| d.0));
        }
    }
    seen
}

/// The outcome of a bound or of the response-time analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The set (or task) meets every deadline.
    Admitted,
    /// The test cannot show it does (for the response-time analysis: it does not).
    Rejected,
    /// The test's preconditions do not hold; treated as not admitted.
    NotApplicable(Inapplicable),
}

impl Verdict {
    /// True only for [`Verdict::Admitted`].
    pub fn admitted(self) -> bool {
        self == Verdict::Admitted
    }
}

/// Why a bound does not apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inapplicable {
    /// A task has a zero period.
    ZeroPeriod,
    /// Two tasks share a priority (Eq. 2 needs unique priorities).
    SharedPriority,
    /// A task of higher (or equal) priority has a longer period: not rate-monotonic.
    NotRateMonotonic,
}

/// One task's hyperbolic product.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperbolicTerm {
    /// `prod (C_j / T_j + 1) * ((C_i + B_i) / T_i + 1)`, in `f64` (reported only).
    pub product: f64,
    /// Whether the product is at most 2, decided in exact integer arithmetic.
    pub admitted: bool,
}

/// The outcome of Eq. 2 or Eq. 4.
#[derive(Clone, Debug, PartialEq)]
pub struct HyperbolicBound {
    /// Admitted when every task's product is at most 2 and the preconditions hold.
    pub verdict: Verdict,
    /// One product per task, in input order; empty when a period is zero.
    pub terms: Vec<HyperbolicTerm>,
}

/// Eq. 2: the hyperbolic bound with blocking, for unique rate-monotonic priorities:
/// `for all i: prod_{j: p_j > p_i} (C_j / T_j + 1) * ((C_i + B_i) / T_i + 1) <= 2`.
pub fn hyperbolic(tasks: &[TaskTiming]) -> HyperbolicBound {
    hyperbolic_with(tasks, false)
}

/// Eq. 4: the paper's hyperbolic bound for non-unique priorities (Appendix A, Theorem 2):
/// `for all i: prod_{j: p_j >= p_i, j != i} (C_j / T_j + 1) * ((C_i + B_i) / T_i + 1) <= 2`.
pub fn hyperbolic_non_unique(tasks: &[TaskTiming]) -> HyperbolicBound {
    hyperbolic_with(tasks, true)
}

fn hyperbolic_with(tasks: &[TaskTiming], equal_count: bool) -> HyperbolicBound {
    if tasks.iter().any(|t| t.period.is_zero()) {
        return HyperbolicBound {
            verdict: Verdict::NotApplicable(Inapplicable::ZeroPeriod),
            terms: Vec::new(),
        };
    }
    let levels = Levels::new(tasks.len(), |i| tasks[i].priority);
    let products = float_products(tasks, &levels, equal_count);
    let admitted = admissions(tasks, &levels, equal_count, &products);
    let terms: Vec<HyperbolicTerm> = (products.into_iter().zip(admitted))
        .map(|(product, admitted)| HyperbolicTerm { product, admitted })
        .collect();
    let verdict = match rate_monotonic(tasks, &levels, equal_count) {
        Err(why) => Verdict::NotApplicable(why),
        Ok(()) if terms.iter().all(|t| t.admitted) => Verdict::Admitted,
        Ok(()) => Verdict::Rejected,
    };
    HyperbolicBound { verdict, terms }
}

/// Each task's product in `f64` (reported only; the verdict is [`exact_admissions`]'), level
/// by level from the highest priority: one running product of the levels above, times (for
/// Eq. 4) the task's peers on its own level, a prefix and a suffix product so no factor is
/// divided out again, times its own `(T_i + C_i + B_i) / T_i`. One product per task over
/// every higher task, multiplied in input order, made a set of 20,000 tasks take seconds.
fn float_products(tasks: &[TaskTiming], levels: &Levels, equal_count: bool) -> Vec<f64> {
    let nanos = |d: Duration| d.as_nanos() as f64;
    let factor = |t: &TaskTiming| (nanos(t.period) + nanos(t.execution)) / nanos(t.period);
    let mut products = vec![0.0; tasks.len()];
    let mut above = 1.0;
    for level in levels.iter() {
        let factors: Vec<f64> = level.iter().map(|&i| factor(&tasks[i])).collect();
        // `after[k]`: the product of the level's factors from the `k`-th on.
        let mut after = vec![1.0; level.len() + 1];
        for k in (0..level.len()).rev() {
            after[k] = after[k + 1] * factors[k];
        }
        let mut before = 1.0;
        for (k, &i) in level.iter().enumerate() {
            let me = tasks[i];
            let own =
                (nanos(me.period) + nanos(me.execution) + nanos(me.blocking)) / nanos(me.period);
            let peers = if equal_count {
                before * after[k + 1]
            } else {
                1.0
            };
            products[i] = own * above * peers;
            before *= factors[k];
        }
        above *= after[0];
    }
    products
}

/// Whether each task's product is at most 2: from its `f64` product (`products`, from
/// [`float_products`]) when every product lies further from 2 than its rounding can reach,
/// otherwise for every task by [`exact_admissions`]. A product over `n` tasks takes at most
/// `6n + 8` roundings (three conversions, two additions and a division for the task's own
/// term; two conversions, an addition, a division and at most two multiplications for each
/// other factor; two to combine), so its relative error is at most
/// `gamma = k u / (1 - k u)` with `k = 6n + 8` and `u = 2^-53`; a product at most
/// `2 (1 - 2 gamma)` is exactly at most 2, and one at least `2 (1 + 2 gamma)` exactly over it
/// (an overflow to infinity included: its exact value is over `f64::MAX / (1 + gamma)`). The
/// exact products cost O(n^2) limb products; most sets never need them.
fn admissions(
    tasks: &[TaskTiming],
    levels: &Levels,
    equal_count: bool,
    products: &[f64],
) -> Vec<bool> {
    let roundings = (6 * tasks.len() + 8) as f64 * (f64::EPSILON / 2.0);
    let margin = 2.0 * roundings / (1.0 - roundings);
    let decided = |product: f64| {
        if product <= 2.0 * (1.0 - margin) {
            Some(true)
        } else if product >= 2.0 * (1.0 + margin) {
            Some(false)
        } else {
            None
        }
    };
    let by_float: Option<Vec<bool>> = if margin < 0.25 {
        products.iter().map(|&product| decided(product)).collect()
    } else {
        None
    };
    by_float.unwrap_or_else(|| exact_admissions(tasks, levels, equal_count))
}

/// Whether each task's product is at most 2, in exact integer arithmetic, with one running
/// product for the whole set rather than one per task: the products of a lower task contain
/// those of every higher one, so taking the tasks from the highest priority down, task `i`'s
/// Eq. 2 product is the running product `N / D` over the strictly higher tasks times its own
/// factor, `N (T_i + C_i + B_i) <= 2 D T_i`. For Eq. 4 the running product `N' / D'` also
/// takes in `i`'s own priority level, `i` included, so `i`'s factor `(T_i + C_i) / T_i` is
/// divided out again: `N' (T_i + C_i + B_i) <= 2 D' (T_i + C_i)` (both sides of Eq. 4's
/// comparison times `T_i + C_i > 0`). The limbs grow by one factor per task, so the whole set
/// costs O(n^2) limb products (one product per task cost O(n^3)). Once the running product
/// exceeds 2, every lower task's does too (each factor is at least 1).
fn exact_admissions(tasks: &[TaskTiming], levels: &Levels, equal_count: bool) -> Vec<bool> {
    let mut admitted = vec![false; tasks.len()];
    let mut numerator = Natural::from(1);
    let mut denominator = Natural::from(1);
    let nanos = |d: Duration| d.as_nanos() as u128;
    for level in levels.iter() {
        if numerator.compare(&denominator.times(2)) == Ordering::Greater {
            break; // Over 2 already: this level and every lower one stay rejected.
        }
        let (mut level_numerator, mut level_denominator) = (numerator.clone(), denominator.clone());
        for &i in level {
            let (c, p) = (nanos(tasks[i].execution), nanos(tasks[i].period));
            level_numerator = level_numerator.times(p + c);
            level_denominator = level_denominator.times(p);
        }
        for &i in level {
            let me = tasks[i];
            let own = nanos(me.period) + nanos(me.execution) + nanos(me.blocking);
            let (left, right) = if equal_count {
                (
                    level_numerator.times(own),
                    level_denominator.times(2 * (nanos(me.period) + nanos(me.execution))),
                )
            } else {
                (
                    numerator.times(own),
                    denominator.times(2 * nanos(me.period)),
                )
            };
            admitted[i] = left.compare(&right) != Ordering::Greater;
        }
        (numerator, denominator) = (level_numerator, level_denominator);
    }
    admitted
}

/// The bounds' precondition: every other task of higher priority (or of equal priority, which
/// Eq. 2 forbids and Eqs. 3 and 4 count as higher) has a period no longer than this one's.
/// Decided level by level from the highest priority: a level's periods must all be equal
/// (with `equal_allowed`; else a level of two tasks shares a priority) and none shorter than
/// the longest of the levels above. Only a set that breaks both rules needs
/// [`first_violation`] to say which one its first pair meets (a scan of every pair made
/// `analyze` of 20,000 tasks quadratic).
fn rate_monotonic(
    tasks: &[TaskTiming],
    levels: &Levels,
    equal_allowed: bool,
) -> Result<(), Inapplicable> {
    let (mut shared, mut unordered) = (false, false);
    let mut longest_above = Duration::ZERO;
    for level in levels.iter() {
        let periods = level.iter().map(|&i| tasks[i].period);
        let shortest = periods.clone().min().unwrap_or(Duration::ZERO);
        let longest = periods.max().unwrap_or(Duration::ZERO);
        if level.len() > 1 {
            if equal_allowed {
                unordered |= shortest != longest;
            } else {
                shared = true;
            }
        }
        unordered |= longest_above > shortest;
        longest_above = longest_above.max(longest);
    }
    match (shared, unordered) {
        (false, false) => Ok(()),
        (true, false) => Err(Inapplicable::SharedPriority),
        (false, true) => Err(Inapplicable::NotRateMonotonic),
        (true, true) => first_violation(tasks, equal_allowed),
    }
}

/// The rule the first pair of tasks `(i, j)`, `i < j`, breaks, in input order: a shared
/// priority (unless `equal_allowed`), or periods out of priority order.
fn first_violation(tasks: &[TaskTiming], equal_allowed: bool) -> Result<(), Inapplicable> {
    for (i, a) in tasks.iter().enumerate() {
        for b in &tasks[i + 1..] {
            if a.priority == b.priority && !equal_allowed {
                return Err(Inapplicable::SharedPriority);
            }
            let (high, low) = if a.priority >= b.priority {
                (a, b)
            } else {
                (b, a)
            };
            let tie_ok = a.priority != b.priority || a.period == b.period;
            if high.period > low.period || !tie_ok {
                return Err(Inapplicable::NotRateMonotonic);
            }
        }
    }
    Ok(())
}

/// The outcome of Eq. 3.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiuLaylandBound {
    /// Admitted when `utilisation + blocking_ratio <= bound - LIU_LAYLAND_MARGIN` and the
    /// preconditions hold.
    pub verdict: Verdict,
    /// `sum C_i / T_i`.
    pub utilisation: f64,
    /// `max B_i / T_i`.
    pub blocking_ratio: f64,
    /// `n(2^(1/n) - 1)`.
    pub bound: f64,
}

/// Eq. 3: Liu and Layland's bound with blocking (Sha et al. 1990, Corollary 17), valid with
/// equal priorities for equal periods: `sum C_i / T_i + max B_i / T_i <= n(2^(1/n) - 1)`.
pub fn liu_layland(tasks: &[TaskTiming]) -> LiuLaylandBound {
    let bound = liu_layland_bound(tasks.len());
    if tasks.iter().any(|t| t.period.is_zero()) {
        return LiuLaylandBound {
            verdict: Verdict::NotApplicable(Inapplicable::ZeroPeriod),
            utilisation: f64::INFINITY,
            blocking_ratio: f64::INFINITY,
            bound,
        };
    }
    let ratio = |d: Duration, t: &TaskTiming| d.as_nanos() as f64 / t.period.as_nanos() as f64;
    let utilisation: f64 = tasks.iter().map(|t| ratio(t.execution, t)).sum();
    let blocking_ratio = tasks
        .iter()
        .map(|t| ratio(t.blocking, t))
        .fold(0.0, f64::max);
    let levels = Levels::new(tasks.len(), |i| tasks[i].priority);
    let verdict = match rate_monotonic(tasks, &levels, true) {
        Err(why) => Verdict::NotApplicable(why),
        Ok(()) if utilisation + blocking_ratio <= bound - LIU_LAYLAND_MARGIN => Verdict::Admitted,
        Ok(()) => Verdict::Rejected,
    };
    LiuLaylandBound {
        verdict,
        utilisation,
        blocking_ratio,
        bound,
    }
}

/// The response-time analysis of one task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// `B_i`, as given.
    pub blocking: Duration,
    /// `R_i` when admitted; otherwise the search's first value past `T_i` (a lower bound on
    /// the real worst case), or [`Duration::MAX`] when the demand is unbounded.
    pub response: Duration,
    /// Admitted iff `R_i <= T_i`.
    pub verdict: Verdict,
}

/// `R_i = C_i + B_i + sum_{j != i, p_j >= p_i} ceil(R_i / T_j) C_j` for `tasks[index]` (see
/// the module notes on equal priorities); `None` for an index out of range.
pub fn response_time(tasks: &[TaskTiming], index: usize) -> Option<Response> {
    let me = *tasks.get(index)?;
    let interfering: Vec<Interference> = tasks
        .iter()
        .enumerate()
        .filter(|&(j, t)| j != index && t.priority >= me.priority)
        .filter_map(|(_, t)| demand(t))
        .collect();
    Some(response_with(me, &interfering))
}

/// The interference of a task that can delay another, if it has any demand at all.
fn demand(task: &TaskTiming) -> Option<Interference> {
    let execution = task.execution.as_nanos();
    (execution != 0).then_some(Interference {
        cost: execution,
        period: task.period.as_nanos(),
        jitter: 0,
    })
}

/// `me`'s response time against the tasks that can delay it: the least fixed point of
/// `R = C_i + B_i + sum ceil(R / T_j) C_j` (the classic search, exact however near 1 the
/// load), admitted when it is at most `T_i`.
fn response_with(me: TaskTiming, interfering: &[Interference]) -> Response {
    let mut response = Response {
        blocking: me.blocking,
        response: Duration::MAX,
        verdict: Verdict::Rejected,
    };
    if me.period.is_zero() {
        response.verdict = Verdict::NotApplicable(Inapplicable::ZeroPeriod);
        return response;
    }
    if interfering.iter().any(|term| term.period == 0) {
        return response; // Unbounded demand from a zero period.
    }
    let Some(own) = me.execution.as_nanos().checked_add(me.blocking.as_nanos()) else {
        return response; // Beyond any period.
    };
    let (r, verdict) = match least_fixed_point(own, interfering, own, me.period.as_nanos()) {
        FixedPoint::Found { value, .. } => (value, Verdict::Admitted),
        FixedPoint::Exceeds { value, .. } => (value, Verdict::Rejected),
    };
    response.response = Duration::from_nanos(r);
    response.verdict = verdict;
    response
}

/// `R_i` for every task, in input order. The tasks are taken from the highest priority down:
/// the levels above a task are one sum per period kept from level to level, and a task's
/// own level is its peers' sums less its own term (the fixed point sums its terms in any
/// order, and terms of one period add up). A list per task from the whole set made a
/// component star of 20,000 clients spend most of `analyze` there; one term per task kept
/// the search quadratic in the clients when they share a few hundred periods.
pub fn response_times(tasks: &[TaskTiming]) -> Vec<Response> {
    let mut responses: Vec<Option<Response>> = vec![None; tasks.len()];
    Levels::new(tasks.len(), |i| tasks[i].priority).with_interference(
        |j| demand(&tasks[j]),
        |i, terms| responses[i] = Some(response_with(tasks[i], terms)),
    );
    responses.into_iter().flatten().collect()
}

/// True when the response-time analysis admits every task.
pub fn schedulable(tasks: &[TaskTiming]) -> bool {
    response_times(tasks).iter().all(|r| r.verdict.admitted())
}

/// A natural number in little-endian 64-bit limbs: just enough to compare the hyperbolic
/// products exactly.
#[derive(Clone, Debug)]
struct Natural(Vec<u64>);

impl Natural {
    fn from(value: u128) -> Natural {
        Natural(vec![value as u64, (value >> 64) as u64])
    }

    /// `self * factor`, schoolbook.
    fn times(&self, factor: u128) -> Natural {
        let factor = [factor as u64, (factor >> 64) as u64];
        let mut out = vec![0u64; self.0.len() + factor.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in factor.iter().enumerate() {
                // At most (2^64 - 1) + (2^64 - 1)^2 + (2^64 - 1) = 2^128 - 1: no overflow.
                let cur = out[i + j] as u128 + a as u128 * b as u128 + carry;
                out[i + j] = cur as u64;
                carry = cur >> 64;
            }
            out[i + factor.len()] = carry as u64;
        }
        while out.len() > 1 && out.last() == Some(&0) {
            out.pop();
        }
        Natural(out)
    }

    fn significant(&self) -> &[u64] {
        let len = self.0.iter().rposition(|&l| l != 0).map_or(0, |p| p + 1);
        &self.0[..len]
    }

    fn compare(&self, other: &Natural) -> Ordering {
        let (a, b) = (self.significant(), other.significant());
        a.len()
            .cmp(&b.len())
            .then_with(|| a.iter().rev().cmp(b.iter().rev()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A load within 1e-5 of 1: task `fast` (99.999 us every 100 us) above `slow` (100 us
    /// every 20 s). By hand, `slow`'s R is 1e5 + 99,999 n ns with n = ceil(R / 1e5) jobs of
    /// `fast`, the least solution n = 1e5: R = 10 s, within its period. The iteration one
    /// job at a time needs 1e5 steps; the search with jumps finds it, where a cap on the
    /// steps rejected it (while Eq. 2, a sufficient test, admitted it).
    #[test]
    fn a_load_near_one_is_solved_exactly() {
        let fast = TaskTiming::new(
            Duration::from_nanos(99_999),
            Duration::from_micros(100),
            Priority(20),
        );
        let slow = TaskTiming::new(
            Duration::from_micros(100),
            Duration::from_secs(20),
            Priority(10),
        );
        let responses = response_times(&[fast, slow]);
        assert_eq!(responses[1].response, Duration::from_secs(10));
        assert!(responses[1].verdict.admitted());
        assert_eq!(response_time(&[fast, slow], 1), Some(responses[1]));
        // A period just short of it: rejected, with a lower bound past the period.
        let short = TaskTiming::new(
            Duration::from_micros(100),
            Duration::from_nanos(9_999_999_999),
            Priority(10),
        );
        let rejected = response_times(&[fast, short])[1];
        assert!(!rejected.verdict.admitted());
        assert!(rejected.response > short.period);
    }

    /// The tasks task `i`'s product runs over, in input order: those of higher priority, and
    /// of equal priority other than `i` when `equal_count`.
    fn counted(
        tasks: &[TaskTiming],
        i: usize,
        equal_count: bool,
    ) -> impl Iterator<Item = &TaskTiming> {
        let me = tasks[i];
        tasks.iter().enumerate().filter_map(move |(j, t)| {
            let counts =
                j != i && (t.priority > me.priority || (equal_count && t.priority == me.priority));
            counts.then_some(t)
        })
    }

    /// Task `i`'s exact verdict the direct way, one product per task (O(n) limbs each).
    fn admitted_one_by_one(tasks: &[TaskTiming], i: usize, equal_count: bool) -> bool {
        let me = tasks[i];
        let nanos = |d: Duration| d.as_nanos() as u128;
        let mut numerator =
            Natural::from(nanos(me.period) + nanos(me.execution) + nanos(me.blocking));
        let mut denominator = Natural::from(2 * nanos(me.period));
        for t in counted(tasks, i, equal_count) {
            numerator = numerator.times(nanos(t.period) + nanos(t.execution));
            denominator = denominator.times(nanos(t.period));
        }
        numerator.compare(&denominator) != Ordering::Greater
    }

    /// Small numbers and few priorities, so products of exactly 2 and shared priority levels
    /// are common; or periods near `u64::MAX` nanoseconds, so the limbs carry.
    fn task_set() -> impl Strategy<Value = Vec<TaskTiming>> {
        let small =
            (1u64..=12, 0u64..=12, 0u64..=6, 0u8..4).prop_map(|(t, c, b, p)| (t, c.min(t), b, p));
        let huge = (1u64..=8, 0u64..=8, 0u64..=8, 0u8..4).prop_map(|(t, c, b, p)| {
            let scale = u64::MAX / 16;
            (t * scale, c.min(t) * scale, b * scale / 8, p)
        });
        prop::collection::vec(prop_oneof![small, huge], 0..12).prop_map(|set| {
            set.into_iter()
                .map(|(t, c, b, p)| {
                    let nanos = Duration::from_nanos;
                    TaskTiming::new(nanos(c), nanos(t), Priority(p)).with_blocking(nanos(b))
                })
                .collect()
        })
    }

    proptest! {
        /// The running product decides every task as its own product does, for Eq. 2 and
        /// Eq. 4, ties and products of exactly 2 included.
        #[test]
        fn running_product_matches_one_product_per_task(tasks in task_set()) {
            let levels = Levels::new(tasks.len(), |i| tasks[i].priority);
            for equal_count in [false, true] {
                let running = exact_admissions(&tasks, &levels, equal_count);
                let products = float_products(&tasks, &levels, equal_count);
                let filtered = admissions(&tasks, &levels, equal_count, &products);
                for (i, &verdict) in running.iter().enumerate() {
                    let direct = admitted_one_by_one(&tasks, i, equal_count);
                    prop_assert_eq!(verdict, direct, "task {} equal_count {}", i, equal_count);
                    prop_assert_eq!(filtered[i], direct, "filtered: task {} equal_count {}", i, equal_count);
                }
            }
        }
    }

    proptest! {
        /// The level-wise `f64` products are each task's own product (its factor times those
        /// of the tasks it counts, multiplied in input order) up to rounding.
        #[test]
        fn level_products_match_one_product_per_task(tasks in task_set()) {
            prop_assume!(tasks.iter().all(|t| !t.period.is_zero()));
            let levels = Levels::new(tasks.len(), |i| tasks[i].priority);
            let nanos = |d: Duration| d.as_nanos() as f64;
            for equal_count in [false, true] {
                let products = float_products(&tasks, &levels, equal_count);
                for (i, &got) in products.iter().enumerate() {
                    let me = tasks[i];
                    let own = (nanos(me.period) + nanos(me.execution) + nanos(me.blocking))
                        / nanos(me.period);
                    let want = counted(&tasks, i, equal_count).fold(own, |product, t| {
                        product * ((nanos(t.period) + nanos(t.execution)) / nanos(t.period))
                    });
                    prop_assert!((got - want).abs() <= 1e-12 * want, "task {} equal_count {}: {} vs {}", i, equal_count, got, want);
                }
            }
        }
    }

    proptest! {
        /// The level-wise response times are each task's own analysis, in input order: shared
        /// levels, tasks without demand and zero periods included.
        #[test]
        fn level_response_times_match_one_analysis_per_task(
            set in prop::collection::vec((0u64..=12, 0u64..=6, 0u64..=3, 0u8..4), 0..12)
        ) {
            let nanos = Duration::from_nanos;
            let tasks: Vec<TaskTiming> = set
                .into_iter()
                .map(|(t, c, b, p)| TaskTiming::new(nanos(c), nanos(t), Priority(p)).with_blocking(nanos(b)))
                .collect();
            let direct: Vec<Response> =
                (0..tasks.len()).filter_map(|i| response_time(&tasks, i)).collect();
            prop_assert_eq!(response_times(&tasks), direct);
        }
    }

    proptest! {
        /// The level-wise precondition says what the scan of every pair says, for both rules
        /// and sets that break neither, one or both.
        #[test]
        fn level_precondition_matches_the_pair_scan(
            set in prop::collection::vec((1u64..=6, 0u8..4), 0..9)
        ) {
            let tasks: Vec<TaskTiming> = set
                .into_iter()
                .map(|(t, p)| TaskTiming::new(Duration::ZERO, Duration::from_nanos(t), Priority(p)))
                .collect();
            for equal_allowed in [false, true] {
                prop_assert_eq!(
                    rate_monotonic(&tasks, &Levels::new(tasks.len(), |i| tasks[i].priority), equal_allowed),
                    first_violation(&tasks, equal_allowed),
                    "equal_allowed {}", equal_allowed
                );
            }
        }
    }

    /// (C 7, T 11) above (C 2, T 9): the lower task's Eq. 2 product is exactly
    /// `(18 / 11) (11 / 9) = 2`, admitted, while its `f64` product rounds to
    /// 2.0000000000000004 (worked out with Python's floats, the same operations): within the
    /// rounding margin, so the exact products decide.
    #[test]
    fn a_product_of_exactly_two_rounded_above_two_is_admitted() {
        let task = |c, t, p| {
            TaskTiming::new(
                Duration::from_nanos(c),
                Duration::from_nanos(t),
                Priority(p),
            )
        };
        let tasks = [task(7, 11, 2), task(2, 9, 1)];
        let levels = Levels::new(tasks.len(), |i| tasks[i].priority);
        let products = float_products(&tasks, &levels, false);
        assert_eq!(products[1], 2.0000000000000004);
        assert_eq!(admissions(&tasks, &levels, false, &products), [true, true]);
    }

    #[test]
    fn natural_products_compare_exactly() {
        // (2^64 + 1) * (2^64 - 1) = 2^128 - 1 < 2^128 = 2^64 * 2^64.
        let big = 1u128 << 64;
        let a = Natural::from(1).times(big + 1).times(big - 1);
        let b = Natural::from(1).times(big).times(big);
        assert_eq!(a.compare(&b), Ordering::Less);
        assert_eq!(b.compare(&a), Ordering::Greater);
        // 3 * 7 * 11 = 231 both ways round.
        let c = Natural::from(3).times(7).times(11);
        let d = Natural::from(11).times(3).times(7);
        assert_eq!(c.compare(&d), Ordering::Equal);
        assert_eq!(
            Natural::from(0).compare(&Natural::from(0).times(5)),
            Ordering::Equal
        );
    }

    #[test]
    fn a_cycle_is_reported() {
        let system = System {
            tasks: vec![
                Task::new("t", Duration::ZERO, Duration::from_millis(1), Priority(1))
                    .requesting(&[CpiId(0)]),
            ],
            cpis: vec![
                Cpi::new("a", Duration::ZERO, CpiProtocol::Propagated).requesting(&[CpiId(1)]),
                Cpi::new("b", Duration::ZERO, CpiProtocol::Propagated).requesting(&[CpiId(0)]),
            ],
        };
        assert!(matches!(
            analyse(&system, &Overheads::ZERO),
            Err(ModelError::Cycle { .. })
        ));
    }
}
