//! The machine stepped by a platform whose real threads do the work
//! ([`Timing::Reported`](crate::Timing::Reported)):
//! the hosted runtime runs one real thread per task and per server, each spinning the
//! stretches the machine gives it, and steps this machine as its dispatcher. The kernel is
//! the simulator's, unchanged: the same schedulers, gates, notices and records. What differs
//! is who ends a stretch of work (the platform reports it, [`Machine::stretch_done`]) and
//! whose clock it is (the platform's, [`Machine::advance`]): an event is handled when the
//! platform's clock has reached it, at that clock's time, as a real kernel takes an interrupt
//! when it arrives.
//!
//! The kernel's own time is the platform's (the dispatcher's real work), so the scenario's
//! cost model must charge no cycles; allocation and termination steps, whose time is that
//! cost model's reclamation work, are refused.
//!
//! # A platform's loop
//!
//! An embedder's dispatcher settles the machine, gives the core to the stretch it runs, and
//! waits for the first of the machine's next event and that stretch's end. Here the "platform"
//! is exact (the stretch takes exactly its length), so the run is the simulator's:
//!
//! ```
//! use bulwark_core::Instant;
//! use bulwark_sim::{Machine, Options};
//!
//! let scenario = bulwark_spec::parse(
//!     r#"
//! name = "served"
//! policy = "fixed-priority"
//! duration = "30ms"
//!
//! [[server]]
//! name = "S"
//! gate = "fifo-ipc"
//! operation = "2ms"
//!
//! [[task]]
//! name = "client"
//! priority = 1
//! script = [{ loop = "forever", body = [{ run = "1ms" }, { invoke = "S" }, { sleep-until-next-release = "10ms" }] }]
//! "#,
//!     "served.toml",
//! )
//! .expect("valid");
//! let options = Options { record_jobs: true, ..Options::default() };
//! let mut machine = Machine::stepped(&scenario, &options, None).expect("steppable");
//! let mut now = Instant::ZERO;
//! while machine.settle().expect("runs") {
//!     // One core: its stretch (the client's computation, or the server's operation on
//!     // the client's context), if it runs one.
//!     let stretch = machine.stretch_on(0);
//!     let ends = stretch.map_or(Instant::NEVER, |s| now.saturating_add(s.remaining));
//!     now = machine.next_event().min(ends).min(Instant::from_nanos(30_000_000));
//!     machine.advance(now);
//!     if let Some(s) = stretch.filter(|_| ends <= now) {
//!         machine.stretch_done(s.worker, s.serial);
//!     }
//! }
//! let stepped = machine.finish_stepped();
//! assert_eq!(stepped, bulwark_sim::run(&scenario, &options).expect("runs"));
//! // Each job: 1 ms, then 2 ms of S, so it completes 3 ms after its release.
//! let completions: Vec<u64> = (stepped.jobs.iter().flatten())
//!     .filter_map(|job| job.completion.map(|at| at.as_nanos() / 1_000_000))
//!     .collect();
//! assert_eq!(completions, [3, 13, 23]);
//! ```

use bulwark_core::{Duration, Instant, TaskId};
use bulwark_spec::{Behaviour, CostModel, Scenario, Step};

use super::{Machine, Occupant};
use crate::record::Recorder;
use crate::{Options, Outcome, SimError};

/// Who does a stretch of work: a task's thread, or a server's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// The task with this index in the scenario.
    Task(usize),
    /// The server with this index in the scenario.
    Server(usize),
}

/// A stretch of work a core runs now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// Whose thread does it.
    pub worker: Worker,
    /// Its length: the execution, or the server's operation, the machine drew.
    pub remaining: Duration,
    /// Told apart from the worker's other stretches: a report names it.
    pub serial: u64,
}

/// The first kernel cost this machine would charge in `cost`, by its key in `[cost]`: a
/// scenario's clock and component IPC rows charge nothing here.
fn charged_cost(cost: &CostModel) -> Option<&'static str> {
    [
        ("timer-interrupt", cost.timer_interrupt),
        ("scheduler", cost.scheduler),
        ("per-work-unit", cost.per_work_unit),
        ("context-switch", cost.context_switch),
        ("cache-refill", cost.cache_refill),
        ("cache-flush", cost.cache_flush),
        ("reclaim-per-unit", cost.reclaim_per_unit),
    ]
    .into_iter()
    .find_map(|(key, cycles)| (cycles > 0).then_some(key))
}

/// Why a scenario cannot be stepped by a platform.
fn refuse_stepped(scenario: &Scenario) -> Result<(), String> {
    if let Some(key) = charged_cost(&scenario.cost) {
        return Err(format!(
            "its cost model charges `{key}` cycles, but on real threads the kernel's time is \
             the platform's own (set the scenario's `[cost]` cycles to 0, or remove it)"
        ));
    }
    for task in &scenario.tasks {
        if let Behaviour::Script { steps, .. } = &task.behaviour {
            if let Some(step) = reclamation_step(steps) {
                return Err(format!(
                    "task `{}` has {step} steps, whose time is the simulator's reclamation \
                     cost model; `bulwark simulate` runs them",
                    task.name
                ));
            }
        }
    }
    Ok(())
}

/// The first `allocate` or `terminate` step in `steps`, loops' bodies included.
fn reclamation_step(steps: &[Step]) -> Option<&'static str> {
    steps.iter().find_map(|step| match step {
        Step::Allocate { .. } => Some("`allocate`"),
        Step::Terminate { .. } => Some("`terminate`"),
        Step::Loop { body, .. } => reclamation_step(body),
        _ => None,
    })
}

impl<'a> Machine<'a> {
    /// A machine for a platform to step with reported timing,
    /// telling `recorder` everything as it happens. Refused (with the reason) when the
    /// scenario's kernel time or steps are the simulator's model.
    pub fn stepped(
        scenario: &'a Scenario,
        options: &Options,
        recorder: Option<&'a mut dyn Recorder>,
    ) -> Result<Self, SimError> {
        refuse_stepped(scenario).map_err(|reason| SimError::NotSteppable { reason })?;
        let mut machine = Machine::build(scenario, options, recorder, None)?;
        machine.reported = true;
        // The protocols' steps take the dispatcher's real time, not the cost table's.
        machine.free_protocol_steps();
        machine.serials = vec![0; scenario.tasks.len() + scenario.servers.len()];
        Ok(machine)
    }

    /// Handles everything due by the platform's clock, at that clock's time (booting
    /// first); false once the run's end is reached.
    pub fn settle(&mut self) -> Result<bool, SimError> {
        if !self.booted {
            self.boot()?;
        }
        let now = self.clock;
        while let Some((_, kind)) = self.queue.pop_until(now) {
            self.handle(now, kind)?;
        }
        self.check_bounds()?;
        Ok(now < self.until)
    }

    /// The platform's clock reached `to` (never past the run's end, never back).
    pub fn advance(&mut self, to: Instant) {
        self.clock = self.clock.max(to.min(self.until));
    }

    /// When the machine must be entered next, unless a stretch is reported done first
    /// ([`Instant::NEVER`] for never).
    pub fn next_event(&mut self) -> Instant {
        self.queue.next_at().unwrap_or(Instant::NEVER)
    }

    /// The stretch `core` runs now, if it runs one (not idle, in its kernel, or spinning for
    /// an operation another core runs).
    pub fn stretch_on(&self, core: u16) -> Option<Stretch> {
        let Occupant::Running { task, .. } = self.cores[usize::from(core)].occupant else {
            return None;
        };
        let run = &self.tasks[task.index()];
        if let Some(server) = run.lends_to {
            let operation =
                self.in_service[server].filter(|_| self.runs_operation(core, server))?;
            return (!operation.left.is_zero()).then(|| Stretch {
                worker: Worker::Server(server),
                remaining: operation.left,
                serial: self.serials[self.tasks.len() + server],
            });
        }
        let execution = run.executing.filter(|e| !e.left.is_zero())?;
        Some(Stretch {
            worker: Worker::Task(task.index()),
            remaining: execution.left,
            serial: self.serials[task.index()],
        })
    }

    /// `worker`'s stretch `serial` is done at the platform's clock: the core running it
    /// goes on then. A report of any other stretch (an earlier one, reported late) is
    /// ignored.
    pub fn stretch_done(&mut self, worker: Worker, serial: u64) {
        let slot = match worker {
            Worker::Task(task) => task,
            Worker::Server(server) => self.tasks.len() + server,
        };
        if self.serials.get(slot) != Some(&serial) {
            return;
        }
        let runner = match worker {
            Worker::Task(task) => {
                let Some(execution) = self.tasks[task].executing.as_mut() else {
                    return;
                };
                execution.left = Duration::ZERO;
                self.home(TaskId(task as u32)).map(usize::from)
            }
            Worker::Server(server) => {
                let Some(operation) = self.in_service[server].as_mut() else {
                    return;
                };
                operation.left = Duration::ZERO;
                operation.runner.map(usize::from)
            }
        };
        // Only a core running the stretch goes on, when its end comes in the instant's
        // order; one in its kernel, or running another thread, finds the stretch done when it
        // next continues it.
        let runs_it = |core: usize| match self.cores[core].occupant {
            Occupant::Running { task, .. } => match worker {
                Worker::Task(index) => task.index() == index,
                Worker::Server(server) => self.tasks[task.index()].lends_to == Some(server),
            },
            _ => false,
        };
        if let Some(core) = runner.filter(|&core| runs_it(core)) {
            self.queue.time_execution_end(core as u16, self.clock);
        }
    }

    /// How many tasks the machine runs (a CPI's pool threads are tasks): the workers
    /// `Worker::Task` names, before the servers.
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// The run's outcome, once the platform is done stepping it.
    pub fn finish_stepped(self) -> Outcome {
        self.finish()
    }
}
