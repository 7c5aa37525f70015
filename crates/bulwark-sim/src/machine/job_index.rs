//! Which periodic tasks' job logs a kernel entry has to look at. Per core and priority level,
//! the logs are kept by their next planned release, those with a job pending apart from the
//! quiet ones; the logs whose jobs wait for their thread's activation are a set of their own.
//! A charge of priority inversion then visits the logs above the charged work's priority that
//! have or are due a job, an activation the logs due a job, and the next-timer search the
//! first quiet log of each level: with thousands of component tasks on a core, the full scans
//! those did before made a run quadratic in the task count.
//!
//! Scheduling contexts have the same need, met in `cpis.rs`: the set of contexts out of
//! budget (the only ones a replenishment or its timer concerns) and that of the threads off
//! the run queue for want of budget.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use bulwark_core::{Instant, Priority};

use super::cpis::Components;
use super::job_log::JobLog;

/// A job log's place in the index: by next planned release, then task index.
type Key = (Instant, u32);

/// The job logs of one core.
#[derive(Clone, Debug, Default)]
struct CoreLogs {
    /// No job pending, by next release.
    quiet: BTreeSet<Key>,
    /// A job pending, by the release of the job after.
    busy: BTreeSet<Key>,
    /// The busy logs by priority level (no empty level kept).
    levels: BTreeMap<Priority, BTreeSet<u32>>,
    /// Busy logs whose thread was not activated for their jobs (as a component core
    /// without contexts never activates, there these are all the busy logs).
    unactivated: BTreeSet<u32>,
}

/// Per core: its job logs by next release and level.
#[derive(Clone, Debug, Default)]
pub(super) struct JobIndex {
    cores: Vec<CoreLogs>,
}

impl JobIndex {
    /// The index of `logs` (per task; `None` for a task without one), none of them with a
    /// job released yet, on `cores` cores.
    pub(super) fn new(logs: &[Option<JobLog>], cores: usize) -> JobIndex {
        let mut index = JobIndex {
            cores: vec![CoreLogs::default(); cores],
        };
        for (task, log) in logs.iter().enumerate() {
            if let Some((log, core)) = log.as_ref().and_then(|log| Some((log, index.core(log)?))) {
                core.quiet.insert((log.next_release(), task as u32));
            }
        }
        index
    }

    fn core(&mut self, log: &JobLog) -> Option<&mut CoreLogs> {
        self.cores.get_mut(usize::from(log.core))
    }

    /// Task `task`'s log released jobs: its next release was `was` (with none pending when
    /// `was_quiet`), and now `log` has a job pending.
    fn released(&mut self, log: &JobLog, task: usize, was: Instant, was_quiet: bool) {
        let Some(core) = self.core(log) else {
            return;
        };
        let id = task as u32;
        if was_quiet {
            core.quiet.remove(&(was, id));
            core.levels.entry(log.priority).or_default().insert(id);
        } else {
            core.busy.remove(&(was, id));
        }
        core.busy.insert((log.next_release(), id));
        if !log.active {
            core.unactivated.insert(id);
        }
    }

    /// Task `task`'s log completed its last pending job.
    fn emptied(&mut self, log: &JobLog, task: usize) {
        let Some(core) = self.core(log) else {
            return;
        };
        let id = task as u32;
        let key = (log.next_release(), id);
        core.busy.remove(&key);
        core.quiet.insert(key);
        if let Some(level) = core.levels.get_mut(&log.priority) {
            level.remove(&id);
            if level.is_empty() {
                core.levels.remove(&log.priority);
            }
        }
        core.unactivated.remove(&id);
    }

    /// The logs on `core` with a job planned before `now` (at `now` too when `inclusive`)
    /// not yet released.
    fn due(&self, core: u16, now: Instant, inclusive: bool) -> Vec<usize> {
        let Some(logs) = self.cores.get(usize::from(core)) else {
            return Vec::new();
        };
        let bound = if inclusive {
            Bound::Included((now, u32::MAX))
        } else {
            Bound::Excluded((now, 0))
        };
        let range = (Bound::Unbounded, bound);
        let quiet = logs.quiet.range(range);
        let busy = logs.busy.range(range);
        quiet.chain(busy).map(|&(_, task)| task as usize).collect()
    }

    /// The logs on `core` with a job pending at a level above `priority`.
    fn busy_above(&self, core: u16, priority: Priority) -> impl Iterator<Item = usize> + '_ {
        self.cores
            .get(usize::from(core))
            .into_iter()
            .flat_map(move |logs| {
                logs.levels
                    .range((Bound::Excluded(priority), Bound::Unbounded))
            })
            .flat_map(|(_, tasks)| tasks.iter().map(|&task| task as usize))
    }
}

impl Components {
    /// Releases task `task`'s jobs planned before `now` (at `now` too when `inclusive`),
    /// keeping the index.
    pub(super) fn release(&mut self, task: usize, now: Instant, inclusive: bool) {
        let Some(log) = self.logs.get_mut(task).and_then(Option::as_mut) else {
            return;
        };
        let (was, was_quiet) = (log.next_release(), log.pending.is_empty());
        log.release_until(now, inclusive);
        if log.next_release() != was {
            self.index.released(log, task, was, was_quiet);
        }
    }

    /// Task `task`'s log has no job pending any more.
    pub(super) fn log_emptied(&mut self, task: usize) {
        if let Some(log) = self.logs.get(task).and_then(Option::as_ref) {
            self.index.emptied(log, task);
        }
    }

    /// Releases the jobs of the logs on `core` planned before `now` (at `now` too when
    /// `inclusive`). Early for the logs no one looks at yet, but a job's release is its
    /// planned instant whenever it is entered, so nothing measured changes.
    fn release_due(&mut self, core: u16, now: Instant, inclusive: bool) {
        for task in self.index.due(core, now, inclusive) {
            self.release(task, now, inclusive);
        }
    }

    /// The logs on `core` above `priority` with a job pending by `now` (not at `now`), each
    /// with its jobs released: those whose jobs a lower task's work until `now` inverts.
    pub(super) fn pending_above(
        &mut self,
        core: u16,
        priority: Priority,
        now: Instant,
    ) -> Vec<usize> {
        self.release_due(core, now, false);
        self.index.busy_above(core, priority).collect()
    }

    /// Releases `core`'s jobs planned by `now` and marks active the logs that had none
    /// pending: their threads wake as a timer's wake-ups. Returns those tasks, in order.
    pub(super) fn activate_released(&mut self, core: u16, now: Instant) -> Vec<usize> {
        self.release_due(core, now, true);
        let Some(logs) = self.index.cores.get_mut(usize::from(core)) else {
            return Vec::new();
        };
        let woken: Vec<usize> = std::mem::take(&mut logs.unactivated)
            .into_iter()
            .map(|task| task as usize)
            .collect();
        for &task in &woken {
            if let Some(log) = self.logs[task].as_mut() {
                log.active = true;
            }
            self.set_blocked(task, false);
            self.threads[task].timer_woken = Some(now);
        }
        woken
    }

    /// The earliest planned release of a log on `core` whose thread is not active: the
    /// instant a release next wakes a thread there.
    pub(super) fn next_inactive_release(&self, core: u16) -> Instant {
        let Some(logs) = self.index.cores.get(usize::from(core)) else {
            return Instant::NEVER;
        };
        let quiet = logs
            .quiet
            .first()
            .map_or(Instant::NEVER, |&(release, _)| release);
        logs.unactivated
            .iter()
            .filter_map(|&task| self.logs[task as usize].as_ref())
            .map(JobLog::next_release)
            .fold(quiet, Instant::min)
    }
}

#[cfg(test)]
mod tests {
    //! The index against its definition, by full scans of the logs, after every step of
    //! random sequences of the calls the machine makes.

    use super::*;
    use proptest::prelude::*;

    /// Periodic script tasks: (core, priority, offset in us, period in us).
    fn scenario(tasks: &[(u16, u8, u64, u64)]) -> bulwark_spec::Scenario {
        let mut file = String::from(
            "name = \"index\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"1s\"\n",
        );
        for (i, (core, priority, offset, period)) in tasks.iter().enumerate() {
            file += &format!(
                "[[task]]\nname = \"t{i}\"\ncore = {core}\npriority = {priority}\n\
                 deadline = \"{period}us\"\noffset = \"{offset}us\"\n\
                 script = [{{ loop = \"forever\", body = [{{ run = \"1us\" }}, \
                 {{ sleep-until-next-release = \"{period}us\" }}] }}]\n"
            );
        }
        bulwark_spec::parse(&file, "index.toml").unwrap_or_else(|d| panic!("{}", d.plain()))
    }

    /// One call of the machine's, `now` advancing by `step` us first.
    #[derive(Clone, Debug)]
    enum Call {
        Release {
            task: usize,
            inclusive: bool,
        },
        Done {
            task: usize,
        },
        Activate {
            core: u16,
        },
        Charge {
            core: u16,
            priority: u8,
        },
        /// A protocol step blocks or wakes a thread.
        Block {
            task: usize,
            blocked: bool,
        },
        /// A protocol sets a thread's TCB priority, or it enters or leaves protocol steps.
        Priority {
            task: usize,
            priority: u8,
            in_protocol: bool,
        },
    }

    fn call() -> impl Strategy<Value = (u64, Call)> {
        let call = prop_oneof![
            (0..8usize, any::<bool>())
                .prop_map(|(task, inclusive)| Call::Release { task, inclusive }),
            (0..8usize).prop_map(|task| Call::Done { task }),
            (0..2u16).prop_map(|core| Call::Activate { core }),
            (0..2u16, 0..6u8).prop_map(|(core, priority)| Call::Charge { core, priority }),
            (0..8usize, any::<bool>()).prop_map(|(task, blocked)| Call::Block { task, blocked }),
            (0..8usize, 0..8u8, any::<bool>()).prop_map(|(task, priority, in_protocol)| {
                Call::Priority {
                    task,
                    priority,
                    in_protocol,
                }
            }),
        ];
        (0..40u64, call)
    }

    fn logs_on(comps: &Components, core: u16) -> impl Iterator<Item = (usize, &JobLog)> {
        let logs = comps.logs.iter().enumerate();
        logs.filter_map(move |(task, log)| {
            Some((task, log.as_ref()?)).filter(|(_, log)| log.core == core)
        })
    }

    /// The index holds exactly what its fields say, by a scan of every log (and the ready
    /// threads by a scan of every thread).
    fn agrees(comps: &Components) -> Result<(), TestCaseError> {
        for (core, logs) in comps.index.cores.iter().enumerate() {
            let core = core as u16;
            let key = |(task, log): (usize, &JobLog)| (log.next_release(), task as u32);
            let quiet: BTreeSet<Key> = logs_on(comps, core)
                .filter(|(_, l)| l.pending.is_empty())
                .map(key)
                .collect();
            let busy: BTreeSet<Key> = logs_on(comps, core)
                .filter(|(_, l)| !l.pending.is_empty())
                .map(key)
                .collect();
            let mut levels: BTreeMap<Priority, BTreeSet<u32>> = BTreeMap::new();
            for (task, log) in logs_on(comps, core).filter(|(_, l)| !l.pending.is_empty()) {
                levels.entry(log.priority).or_default().insert(task as u32);
            }
            let unactivated: BTreeSet<u32> = logs_on(comps, core)
                .filter(|(_, l)| !l.pending.is_empty() && !l.active)
                .map(|(task, _)| task as u32)
                .collect();
            prop_assert_eq!(&logs.quiet, &quiet);
            prop_assert_eq!(&logs.busy, &busy);
            prop_assert_eq!(&logs.levels, &levels);
            prop_assert_eq!(&logs.unactivated, &unactivated);
            // The ready threads above each priority, against a scan of every thread: the
            // priorities the calls set (below 8), and the top, above which nothing is.
            for priority in (0..=8).chain([u8::MAX]) {
                let priority = Priority(priority);
                let expected: Vec<usize> = (0..comps.threads.len())
                    .filter(|&t| {
                        let thread = &comps.threads[t];
                        thread.core == core && !thread.is_blocked() && thread.effective() > priority
                    })
                    .collect();
                let mut above: Vec<usize> = comps.ready_above(core, priority).collect();
                above.sort_unstable();
                prop_assert_eq!(above, expected);
            }
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn the_index_is_the_full_scan(
            tasks in prop::collection::vec((0..2u16, 0..6u8, 0..50u64, 1..60u64), 1..8),
            calls in prop::collection::vec(call(), 0..80),
        ) {
            let scenario = scenario(&tasks);
            let mut comps = Components::build(&scenario, false, true);
            let mut now = Instant::ZERO;
            agrees(&comps)?;
            for (step, call) in calls {
                now = now.saturating_add(bulwark_core::Duration::from_micros(step));
                match call {
                    Call::Release { task, inclusive } => comps.release(task % tasks.len(), now, inclusive),
                    Call::Done { task } => {
                        comps.job_done(task % tasks.len(), now);
                    }
                    Call::Activate { core } => {
                        // Those activated: every log of the core not active with a job due.
                        let expected: Vec<usize> = logs_on(&comps, core)
                            .filter(|(_, l)| !l.active && (!l.pending.is_empty() || l.next_release() <= now))
                            .map(|(task, _)| task)
                            .collect();
                        prop_assert_eq!(comps.activate_released(core, now), expected);
                        for (_, log) in logs_on(&comps, core) {
                            prop_assert!(log.next_release() > now);
                        }
                    }
                    Call::Block { task, blocked } => comps.set_blocked(task % tasks.len(), blocked),
                    Call::Priority { task, priority, in_protocol } => {
                        comps.set_priority(task % tasks.len(), Priority(priority), in_protocol);
                    }
                    Call::Charge { core, priority } => {
                        let priority = Priority(priority);
                        let expected: BTreeSet<usize> = logs_on(&comps, core)
                            .filter(|(_, l)| l.priority > priority && (!l.pending.is_empty() || l.next_release() < now))
                            .map(|(task, _)| task)
                            .collect();
                        let above: BTreeSet<usize> = comps.pending_above(core, priority, now).into_iter().collect();
                        prop_assert_eq!(above, expected);
                    }
                }
                agrees(&comps)?;
                for core in 0..2 {
                    let expected = logs_on(&comps, core)
                        .filter(|(_, l)| !l.active)
                        .map(|(_, l)| l.next_release())
                        .fold(Instant::NEVER, Instant::min);
                    prop_assert_eq!(comps.next_inactive_release(core), expected);
                }
            }
        }
    }
}
