//! Systems with servers on real threads: the simulator's machine (the one kernel: its
//! schedulers and clusters, the IPC gates with bandwidth inheritance, aborts on exhaustion),
//! stepped with reported timing ([`Machine::stepped`]), as the dispatcher, and one real thread
//! per task and per server.
//!
//! A task's thread spins each computation of its script; a server's thread spins each
//! operation it serves, the length the kernel drew for the request: a fixed amount of real
//! work per request, done on the context the machine runs it on (its caller's, or under
//! bandwidth inheritance a lender's), preempted when that context's budget runs out or its
//! slot ends. Invocations, replies, aborts, releases and the contexts' budgets and slots are
//! the kernel's, at kernel entries, as in the simulator ([`crate::stretches`] runs the loop).
//!
//! The runtime manages one core, so a system runs here when its tasks are on one core; its kernel's
//! time is the dispatcher's real time, so its cost model must be zero, and `allocate` and
//! `terminate` steps (whose time is the simulator's reclamation model) run only in the
//! simulator.

use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, Options, Outcome, Recorder, SimError, Worker};
use bulwark_spec::Scenario;

use crate::stretches::{self, HostRun, SteppedKernel, Turn};
use crate::{HostConfig, HostError};

/// How long an MC-IPC system's phase runs on the host when `HostConfig::until` does not say.
pub const DEFAULT_RUN: Duration = Duration::from_secs(1);

/// Runs `scenario` on the managed core for `host.until` (its duration when `None`; at most
/// `host.max_run`), its tasks and servers real threads and the simulator's machine the
/// dispatcher, telling `recorder` every job, invocation and (with `host.record_trace`) trace
/// event. `host.seed` (else the scenario's) draws the computations' and operations' lengths,
/// as in the simulator.
pub fn run_machine<R: Recorder + Send>(
    scenario: &Scenario,
    host: &HostConfig,
    recorder: &mut R,
) -> Result<HostRun<Outcome>, HostError> {
    let core = managed_core(scenario, host)?;
    let length = host.until.unwrap_or(scenario.duration);
    if length > host.max_run {
        return Err(HostError::Unsupported(format!(
            "a host run of {length} is longer than the {} allowed; pass a shorter --until",
            host.max_run
        )));
    }
    let options = Options {
        until: Some(length),
        seed: host.seed,
        record_trace: host.record_trace,
        record_jobs: host.record_jobs,
    };
    // Refused before any thread starts.
    Machine::stepped(scenario, &options, None).map_err(refused)?;
    let workers: Vec<String> = (scenario.tasks.iter().map(|t| format!("task {}", t.name)))
        .chain(
            scenario
                .servers
                .iter()
                .map(|s| format!("server {}", s.name)),
        )
        .collect();
    let until = Instant::ZERO.saturating_add(length);
    let mut run = stretches::run(host, &workers, until, move || {
        Machine::stepped(scenario, &options, Some(recorder))
            .map(|machine| Stepped::new(machine, core))
            .map_err(refused)
    })?;
    // As the scenario runtime reports it, so `run` warns alike when it reaches the limit.
    run.host.nominal_load_ppm = crate::runtime::nominal_load_ppm(scenario);
    Ok(run)
}

/// The scenario core whose work the managed core runs: the one every task is on (a
/// cluster's members name its first core). A cluster of several cores, or tasks on several
/// cores, need as many managed cores.
fn managed_core(scenario: &Scenario, host: &HostConfig) -> Result<u16, HostError> {
    let several = |what: String| {
        HostError::Unsupported(format!(
            "{what}, but the runtime manages one core (core {}); `bulwark simulate` runs it",
            host.core
        ))
    };
    if let Some(cluster) = scenario.clusters.iter().find(|c| c.cores.len() > 1) {
        return Err(several(format!(
            "cluster `{}` schedules {} cores",
            cluster.name,
            cluster.cores.len()
        )));
    }
    let Some(first) = scenario.tasks.first() else {
        return Err(HostError::Unsupported(
            "the scenario has no task".to_owned(),
        ));
    };
    match scenario.tasks.iter().find(|t| t.core != first.core) {
        Some(other) => Err(several(format!(
            "task `{}` is on core {} and task `{}` on core {}",
            first.name, first.core, other.name, other.core
        ))),
        None => Ok(first.core),
    }
}

pub(crate) fn refused(error: SimError) -> HostError {
    HostError::Unsupported(format!("the system cannot run: {error}"))
}

/// The machine as the dispatcher's kernel: workers are the tasks, then the servers.
pub(crate) struct Stepped<'a> {
    machine: Machine<'a>,
    tasks: usize,
    /// The scenario core the managed core is.
    core: u16,
}

impl<'a> Stepped<'a> {
    /// The dispatcher's kernel for `machine`, whose core `core` is the managed core.
    pub(crate) fn new(machine: Machine<'a>, core: u16) -> Self {
        let tasks = machine.task_count();
        Stepped {
            machine,
            tasks,
            core,
        }
    }
}

impl SteppedKernel for Stepped<'_> {
    type Outcome = Outcome;

    fn settle(&mut self) -> Result<Option<Turn>, HostError> {
        if !self.machine.settle().map_err(refused)? {
            return Ok(None);
        }
        let worker = self.machine.stretch_on(self.core).map(|stretch| {
            let slot = match stretch.worker {
                Worker::Task(task) => task,
                Worker::Server(server) => self.tasks + server,
            };
            (slot, stretch.remaining, stretch.serial)
        });
        Ok(Some(Turn {
            worker,
            timer: self.machine.next_event(),
        }))
    }

    fn advance(&mut self, to: Instant) -> Result<(), HostError> {
        self.machine.advance(to);
        Ok(())
    }

    fn stretch_done(&mut self, worker: usize, serial: u64) {
        let worker = match worker.checked_sub(self.tasks) {
            None => Worker::Task(worker),
            Some(server) => Worker::Server(server),
        };
        self.machine.stretch_done(worker, serial);
    }

    fn finish(self) -> Outcome {
        self.machine.finish_stepped()
    }
}
