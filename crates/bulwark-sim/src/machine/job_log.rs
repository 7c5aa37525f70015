//! The component paper's per-job measures on the machine: each periodic task's jobs from
//! their planned releases (also behind an unfinished predecessor), and the priority inversion
//! each suffers: the time work of a strictly lower-priority task (its own thread, or a pool
//! thread serving its request) ran while the job was pending, and the distinct lower jobs
//! that work was for.

use std::collections::VecDeque;

use bulwark_core::{Duration, Instant, Priority};
use bulwark_spec::{Behaviour, Step};

use super::cpis::{Components, Role};
use crate::components::{ComponentJob, ComponentRecords, ComponentTaskOutcome};

/// Most jobs a task's log keeps pending at once. Each is kept, with its measures, until it
/// completes, so a task whose jobs come faster than they complete would otherwise fill the
/// memory (48 bytes a job, and its lower jobs); at this many (400 MB for one task) the run
/// stops with [`crate::SimError::Backlog`]. A constant, not a share of this computer's
/// memory, so that a file and seed run the same everywhere.
pub(super) const MAX_PENDING: usize = 1 << 23;

/// A pending job of a periodic task.
#[derive(Clone, Debug)]
pub(super) struct PendingJob {
    release: Instant,
    seq: u64,
    inversion: Duration,
    lower: Vec<(usize, u64)>,
}

/// A periodic task's jobs, as the paper's measures count them.
#[derive(Clone, Debug)]
pub(super) struct JobLog {
    pub(super) priority: Priority,
    /// Its task's core: inversion is suffered from work on the same core only.
    pub(super) core: u16,
    offset: Instant,
    period: Duration,
    /// Jobs released so far (lazily: when a measure or a kernel entry needs them).
    released: u64,
    /// Its thread was woken for its pending jobs (and its context activated) at a kernel
    /// entry: from the first job released while it had none, to the completion leaving none.
    pub(super) active: bool,
    pub(super) pending: VecDeque<PendingJob>,
    /// When a job was due that the log had no room for ([`MAX_PENDING`]), and how many it
    /// held then: the run must stop.
    pub(super) full_at: Option<(Instant, usize)>,
    pub(super) outcome: ComponentTaskOutcome,
}

impl JobLog {
    /// The log of a task behaving as `behaviour` at `priority`, if it is a periodic script.
    pub(super) fn of(behaviour: &Behaviour, priority: Priority, core: u16) -> Option<JobLog> {
        let (offset, period) = periodic_script(behaviour)?;
        Some(JobLog {
            priority,
            core,
            offset: Instant::ZERO.saturating_add(offset),
            period,
            released: 0,
            active: false,
            pending: VecDeque::new(),
            full_at: None,
            outcome: ComponentTaskOutcome::default(),
        })
    }

    /// The next job's planned release.
    pub(super) fn next_release(&self) -> Instant {
        self.release_of(self.released)
    }

    fn release_of(&self, seq: u64) -> Instant {
        let since = self.period.saturating_mul(seq);
        self.offset.saturating_add(since)
    }

    /// Releases every job planned before `now` (at `now` too when `inclusive`), as long as
    /// the log has room ([`MAX_PENDING`]); marks it full at `now` when it has not.
    pub(super) fn release_until(&mut self, now: Instant, inclusive: bool) {
        while self.is_due(now, inclusive) {
            if self.pending.len() >= MAX_PENDING {
                self.full_at.get_or_insert((now, self.pending.len()));
                return;
            }
            let job = self.release_next();
            self.pending.push_back(job);
        }
    }

    /// Whether the next job is planned before `now` (at `now` too when `inclusive`).
    fn is_due(&self, now: Instant, inclusive: bool) -> bool {
        let release = self.next_release();
        let due = if inclusive {
            release <= now
        } else {
            release < now
        };
        due && !self.period.is_zero()
    }

    /// The next job, released.
    fn release_next(&mut self) -> PendingJob {
        let job = PendingJob {
            release: self.next_release(),
            seq: self.released,
            inversion: Duration::ZERO,
            lower: Vec::new(),
        };
        self.released += 1;
        self.outcome.jobs += 1;
        job
    }

    fn close(&mut self, job: PendingJob, completion: Option<Instant>, record: bool) {
        let out = &mut self.outcome;
        if let Some(at) = completion {
            let response = at.saturating_duration_since(job.release);
            out.max_response = out.max_response.max(response);
            if response > self.period {
                out.misses += 1;
            }
        }
        out.max_inversion = out.max_inversion.max(job.inversion);
        out.max_lower_jobs = out.max_lower_jobs.max(job.lower.len() as u32);
        if record {
            out.job_records.push(ComponentJob {
                release: job.release,
                completion,
                inversion: job.inversion,
                lower_jobs: job.lower.len() as u32,
            });
        }
    }
}

/// The period and first release of a script that loops for ever and ends each pass with
/// `sleep-until-next-release`: a periodic task whose body is the loop's.
fn periodic_script(behaviour: &Behaviour) -> Option<(Duration, Duration)> {
    let Behaviour::Script { offset, steps } = behaviour else {
        return None;
    };
    let [Step::Loop { count: None, body }] = steps.as_slice() else {
        return None;
    };
    match body.last() {
        Some(Step::SleepUntilNextRelease(period)) => Some((*offset, *period)),
        _ => None,
    }
}

impl Components {
    /// The task whose job thread `t` works for, and that job: its own (a task's thread), the
    /// originator of the request it serves (a pool thread); the oldest pending job.
    fn owner(&mut self, t: usize, now: Instant) -> Option<(usize, u64)> {
        let thread = self.threads.get(t)?;
        let task = match thread.role {
            Role::Task => t,
            Role::Pool { .. } => thread.serving?.request.requestor.index(),
        };
        self.release(task, now, true);
        let log = self.logs.get(task)?.as_ref()?;
        Some((task, log.pending.front()?.seq))
    }

    /// Thread `t` ran from `since` to `now`: every job of a strictly higher-priority task
    /// pending meanwhile suffered that much priority inversion (from its release, if later).
    pub(super) fn charge_inversion(&mut self, t: usize, since: Instant, now: Instant) {
        let Some((owner, seq)) = self.owner(t, since) else {
            return;
        };
        let Some((priority, core)) = self.logs[owner]
            .as_ref()
            .map(|log| (log.priority, log.core))
        else {
            return;
        };
        // Work on another core delays no job of this one (partitioned cores).
        for task in self.pending_above(core, priority, now) {
            let Some(log) = self.logs[task].as_mut() else {
                continue;
            };
            for job in log.pending.iter_mut() {
                let from = job.release.max(since);
                let overlap = now.saturating_duration_since(from);
                if overlap.is_zero() {
                    continue;
                }
                job.inversion = job.inversion.saturating_add(overlap);
                if !job.lower.contains(&(owner, seq)) {
                    job.lower.push((owner, seq));
                }
            }
        }
    }

    /// Task `t`'s job completed at `now`; true if it has no job pending (its thread then
    /// sleeps until its next release).
    pub(super) fn job_done(&mut self, t: usize, now: Instant) -> bool {
        let record = self.record_jobs;
        self.release(t, now, true);
        let Some(log) = self.logs.get_mut(t).and_then(Option::as_mut) else {
            return false;
        };
        if let Some(job) = log.pending.pop_front() {
            log.close(job, Some(now), record);
        }
        let idle = log.pending.is_empty();
        if idle {
            log.active = false;
            self.set_blocked(t, true);
            self.log_emptied(t);
        }
        idle
    }

    /// The slice a thread's time belongs to: the task it works for (a pool thread's time is
    /// its caller's task's), and whether it is kernel time (protocol steps).
    /// Whether thread `t`'s time is told apart here: a pool thread's, or a task's with a
    /// job log. Any other task (not periodic, or beside a component system on another core)
    /// runs its own code, as without components.
    pub(super) fn attributes(&self, t: usize) -> bool {
        let pool = self
            .threads
            .get(t)
            .is_some_and(|thread| thread.role != Role::Task);
        pool || self.logs.get(t).is_some_and(Option::is_some)
    }

    pub(super) fn slice_owner(&mut self, t: usize, now: Instant) -> (Option<usize>, bool) {
        let owner = self.owner(t, now).map(|(task, _)| task);
        let in_protocol = self
            .threads
            .get(t)
            .is_some_and(|thread| thread.in_protocol());
        (owner, in_protocol || owner.is_none())
    }

    /// The first task whose log had no room for a job due, and when ([`MAX_PENDING`]).
    pub(super) fn backlog_full(&self) -> Option<(usize, usize, Instant)> {
        self.logs.iter().enumerate().find_map(|(task, log)| {
            let (at, pending) = log.as_ref()?.full_at?;
            Some((task, pending, at))
        })
    }

    /// The records at the end of a run at `until`: every job released by then, a pending one
    /// a miss if its deadline is within the run. The jobs due since the last kernel entry are
    /// closed as they are released, not kept: nothing runs for them any more.
    pub(super) fn finish(mut self, until: Instant) -> ComponentRecords {
        let record = self.record_jobs;
        let tasks = self
            .logs
            .iter_mut()
            .map(|log| {
                let log = log.as_mut()?;
                let unfinished = |log: &JobLog, job: &PendingJob| {
                    job.release.saturating_add(log.period) <= until
                };
                while let Some(job) = log.pending.pop_front() {
                    log.outcome.misses += u64::from(unfinished(log, &job));
                    log.close(job, None, record);
                }
                while log.is_due(until, true) {
                    let job = log.release_next();
                    log.outcome.misses += u64::from(unfinished(log, &job));
                    log.close(job, None, record);
                }
                Some(std::mem::take(&mut log.outcome))
            })
            .collect();
        ComponentRecords {
            tasks,
            pool_exhausted: self.pool_exhausted,
            protocol_errors: self.protocol_errors,
        }
    }
}
