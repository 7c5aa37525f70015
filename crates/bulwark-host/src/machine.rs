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
//! The runtime manages one core, so a system runs here when it has one core; its kernel's
//! time is the dispatcher's real time, so its cost model must be zero, and `allocate` and
//! `terminate` steps (whose time is the simulator's reclamation model) run only in the
//! simulator.

use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, Options, Outcome, Recorder, SimError, Worker};
use bulwark_spec::Scenario;

use crate::stretches::{self, HostRun, SteppedKernel, Turn};
use crate::{HostConfig, HostError};

/// How long a run lasts when `HostConfig::until` does not say.
pub const DEFAULT_RUN: Duration = Duration::from_secs(1);

/// Runs `scenario` on the managed core for `host.until` ([`DEFAULT_RUN`] when `None`; bounded
/// by `host.max_run`), its tasks and servers real threads and the simulator's machine the
/// dispatcher, telling `recorder` every job, invocation and (with `host.record_trace`) trace
/// event. `host.seed` (else the scenario's) draws the computations' and operations' lengths,
/// as in the simulator.
pub fn run_machine<R: Recorder + Send>(
    scenario: &Scenario,
    host: &HostConfig,
    recorder: &mut R,
) -> Result<HostRun<Outcome>, HostError> {
    if scenario.cores != 1 {
        return Err(HostError::Unsupported(format!(
            "a system runs on this machine when it has one core (the runtime manages one \
             core, core {}); this one has {} cores",
            host.core, scenario.cores
        )));
    }
    let length = host.until.unwrap_or(DEFAULT_RUN).min(host.max_run);
    let options = Options {
        until: Some(length),
        seed: host.seed,
        record_trace: host.record_trace,
        record_jobs: host.record_jobs,
    };
    // Refused before any thread starts.
    Machine::stepped(scenario, &options, None).map_err(refused)?;
    let tasks = scenario.tasks.len();
    let workers: Vec<String> = (scenario.tasks.iter().map(|t| format!("task {}", t.name)))
        .chain(
            scenario
                .servers
                .iter()
                .map(|s| format!("server {}", s.name)),
        )
        .collect();
    let until = Instant::ZERO.saturating_add(length);
    stretches::run(host, &workers, until, move || {
        Machine::stepped(scenario, &options, Some(recorder))
            .map(|machine| Stepped { machine, tasks })
            .map_err(refused)
    })
}

fn refused(error: SimError) -> HostError {
    HostError::Unsupported(format!("the system cannot run: {error}"))
}

/// The machine as the dispatcher's kernel: workers are the tasks, then the servers.
struct Stepped<'a> {
    machine: Machine<'a>,
    tasks: usize,
}

impl SteppedKernel for Stepped<'_> {
    type Outcome = Outcome;

    fn settle(&mut self) -> Result<Option<Turn>, HostError> {
        if !self.machine.settle().map_err(refused)? {
            return Ok(None);
        }
        // One core: its stretch.
        let worker = self.machine.stretch_on(0).map(|stretch| {
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
