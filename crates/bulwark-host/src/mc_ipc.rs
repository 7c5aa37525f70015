//! MC-IPC systems on real threads: the cluster machine's kernel (the clustered reservation
//! scheduler, the IPC gates with bandwidth inheritance, aborts on exhaustion), stepped with
//! reported timing, as the dispatcher, and one real thread per client task and per server.
//!
//! A client's thread spins each computation of its script; a server's thread spins each
//! operation it serves, the length the kernel drew for the request: a fixed amount of real
//! work per request, done on the client's reservation (bandwidth inheritance), preempted when
//! that reservation's budget runs out or its slot ends. Invocations, replies, aborts,
//! releases and the reservations' budgets and slots are the kernel's, at kernel entries, as
//! in the simulator ([`crate::stretches`] runs the loop).
//!
//! The runtime manages one core, so a system runs here when it has one cluster of one core;
//! `allocate` and `terminate` steps run only in the simulator (their time is its
//! reclamation cost model).

use bulwark_core::{Duration, Instant};
use bulwark_sim::cluster::{ClusterOutcome, ClusterSimError, Config, Kernel, Timing, Worker};

use crate::stretches::{self, HostRun, SteppedKernel, Turn};
use crate::{HostConfig, HostError};

/// An MC-IPC system's run on this machine.
pub type HostClusterOutcome = HostRun<ClusterOutcome>;

/// How long a run lasts when `HostConfig::until` does not say.
pub const DEFAULT_RUN: Duration = Duration::from_secs(1);

/// Runs `config` on the managed core for `host.until` ([`DEFAULT_RUN`] when `None`; bounded
/// by `host.max_run`), its clients and servers real threads and its kernel the dispatcher.
/// `config.seed` draws the computations' and operations' lengths, as in the simulator.
pub fn run_mc_ipc(config: &Config, host: &HostConfig) -> Result<HostClusterOutcome, HostError> {
    let cores: usize = config.clusters.iter().map(|c| c.cores).sum();
    if cores != 1 {
        return Err(HostError::Unsupported(format!(
            "an MC-IPC system runs on this machine when it has one cluster of one core (the \
             runtime manages one core, core {}); this one has {} clusters and {cores} cores",
            host.core,
            config.clusters.len()
        )));
    }
    let until = Instant::ZERO.saturating_add(host.until.unwrap_or(DEFAULT_RUN).min(host.max_run));
    let build = || {
        Kernel::new(config, until, Timing::Reported, host.record_trace)
            .map(|kernel| Cluster {
                kernel,
                tasks: config.tasks.len(),
            })
            .map_err(refused)
    };
    // Refused before any thread starts.
    build()?;
    let workers: Vec<String> = (0..config.tasks.len())
        .map(|i| format!("task {i}"))
        .chain((0..config.servers.len()).map(|q| format!("server {q}")))
        .collect();
    stretches::run(host, &workers, until, build)
}

fn refused(error: ClusterSimError) -> HostError {
    HostError::Unsupported(format!("the MC-IPC system cannot run: {error}"))
}

/// The cluster kernel as the dispatcher's: workers are the tasks, then the servers.
struct Cluster {
    kernel: Kernel,
    tasks: usize,
}

impl SteppedKernel for Cluster {
    type Outcome = ClusterOutcome;

    fn settle(&mut self) -> Result<Option<Turn>, HostError> {
        let tasks = self.tasks;
        if self.kernel.settle().map_err(refused)?.is_none() {
            return Ok(None);
        }
        // One cluster of one core: its only core's stretch.
        let worker = self.kernel.stretch_on(0).map(|stretch| {
            let slot = match stretch.worker {
                Worker::Task(i) => i,
                Worker::Server(q) => tasks + q,
            };
            (slot, stretch.remaining, stretch.serial)
        });
        Ok(Some(Turn {
            worker,
            timer: self.kernel.timer(),
        }))
    }

    fn advance(&mut self, to: Instant) -> Result<(), HostError> {
        self.kernel.advance(to).map_err(refused)
    }

    fn stretch_done(&mut self, worker: usize, serial: u64) {
        let worker = match worker.checked_sub(self.tasks) {
            None => Worker::Task(worker),
            Some(server) => Worker::Server(server),
        };
        self.kernel.stretch_done(worker, serial);
    }

    fn finish(self) -> ClusterOutcome {
        self.kernel.finish()
    }
}
