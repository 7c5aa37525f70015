//! Component systems (the CAmkES paper's tasks calling component procedure interfaces,
//! CPIs) on the one machine: [`scenario`] lowers a system to a [`Scenario`](bulwark_spec::Scenario)
//! of one fixed-priority core, [`run`] runs it on [`Machine`](crate::Machine) and
//! [`outcome`] reads the paper's measures off the run.
//!
//! This is the platform of the paper's evaluation (Sudvarg et al., section 6): one core,
//! fixed-priority preemptive scheduling of threads, equal priorities first-in first-out and
//! run to completion. Every task is a thread at its priority whose script loops over its
//! job's steps (`run`, `call`) and sleeps until its next release; every CPI is a kernel
//! object (the protocol state of `bulwark_core::ipc`) with a pool of threads waiting at its
//! ceiling (one for IPCP and NPCS). A request carries the requester's priority and the
//! originating task; the machine carries out the [`Effect`](bulwark_core::ipc::Effect)s each
//! protocol step returns (priority changes, wake-ups, `nest` calls downstream) at kernel
//! entries (`machine/cpis.rs`). A task with a reservation is bound to a scheduling context
//! the kernel charges, which it donates with its requests (`machine/contexts.rs`).
//!
//! # Where overheads go
//!
//! Protocol steps run at the CPI's ceiling (Fig. 4 steps 1-13 and 21-24, Fig. 5 steps 1-5 and
//! 13-15): the cost of a call ([`ProtocolCosts`], the paper's Table 2, the cost table's IPC
//! rows) is spent by the serving pool thread at its ceiling before the procedure runs, and
//! the cost of a reply after it. The protocol's state changes when the request arrives (step
//! 1 looks at the lock then), so the cost is that of the state found (locked or unlocked). A
//! `nest` update costs the thread whose call caused it one [`ProtocolCosts::nest`] per hop.
//! A context switch is the cost table's, kernel time at the dispatch as for every system
//! (the boot's first dispatch is configuration, which takes none).
//!
//! # What is measured
//!
//! Per job: release (planned, also behind an unfinished predecessor), completion, response
//! time, deadline miss, and **priority inversion**: the time work of a strictly
//! lower-priority task (its own thread, or a pool thread serving its request) ran while the
//! job was pending, and how many distinct lower jobs that work belonged to. The analysis
//! bounds the first by `B_i`; under IPCP the second is at most one.

mod compose;
mod lowering;
mod validate;

pub use bulwark_core::ipc::CpiProtocol;
use bulwark_core::{Duration, Instant};
use bulwark_spec::{CallReplyCycles, CostModel};

pub use compose::{component_tasks, compose_lowered, compose_with};
pub use lowering::{outcome, run, scenario};
pub use validate::{validate, ComponentConfigError};

/// The machine runs the system file's lowered model as it is.
pub use bulwark_spec::lowered::{LoweredCpi, LoweredTask, Step};

pub use bulwark_core::ipc::CallReply;

/// Protocol overheads, by the rows of the paper's Table 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProtocolCosts {
    /// "Call / Reply, propagated".
    pub propagated: CallReply,
    /// "Call / Reply, fixed" (IPCP and NPCS).
    pub fixed: CallReply,
    /// "Call / Reply, inherited, unlocked".
    pub inherited_unlocked: CallReply,
    /// "Call / Reply, inherited, locked".
    pub inherited_locked: CallReply,
    /// "Call / Reply, PIP to PIP": a nested request from an inherited CPI to another.
    pub pip_to_pip: CallReply,
    /// "Call / Reply, PIP to propagated".
    pub pip_to_propagated: CallReply,
    /// "Nest, PIP to PIP" and "Nest, PIP to propagated": one `nest` hop, by the kind of CPI
    /// it reaches.
    pub nest: NestCost,
    /// One context switch.
    pub context_switch: Duration,
}

/// The cost of one `nest` hop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NestCost {
    /// To an inherited CPI.
    pub to_inherited: Duration,
    /// To a propagated CPI.
    pub to_propagated: Duration,
}

impl ProtocolCosts {
    /// The row of Table 2 a request to a CPI of `protocol` pays for its call and its reply:
    /// the "PIP to ..." row when it was sent by a thread of an inherited CPI (`from_pip`),
    /// else the protocol's own, for an inherited CPI the locked one when `contended` (the
    /// lock was held at the call, or the reply hands it to a waiter).
    pub fn row(&self, protocol: CpiProtocol, from_pip: bool, contended: bool) -> CallReply {
        match (protocol, from_pip, contended) {
            (CpiProtocol::Propagated, true, _) => self.pip_to_propagated,
            (CpiProtocol::Propagated, false, _) => self.propagated,
            (CpiProtocol::Inherited, true, _) => self.pip_to_pip,
            (CpiProtocol::Inherited, false, true) => self.inherited_locked,
            (CpiProtocol::Inherited, false, false) => self.inherited_unlocked,
            (CpiProtocol::Ipcp | CpiProtocol::Npcs, _, _) => self.fixed,
        }
    }

    /// Free protocols.
    pub const ZERO: ProtocolCosts = ProtocolCosts {
        propagated: CallReply::ZERO,
        fixed: CallReply::ZERO,
        inherited_unlocked: CallReply::ZERO,
        inherited_locked: CallReply::ZERO,
        pip_to_pip: CallReply::ZERO,
        pip_to_propagated: CallReply::ZERO,
        nest: NestCost {
            to_inherited: Duration::ZERO,
            to_propagated: Duration::ZERO,
        },
        context_switch: Duration::ZERO,
    };

    /// The costs of `cost`, turned from cycles into time at its clock (rounded up to whole
    /// nanoseconds): its Table 2 rows and its context switch.
    pub fn of(cost: &CostModel) -> ProtocolCosts {
        let time = |cycles| cost.time_of(cycles);
        let row = |cycles: CallReplyCycles| CallReply {
            call: time(cycles.call),
            reply: time(cycles.reply),
        };
        let ipc = &cost.ipc;
        ProtocolCosts {
            propagated: row(ipc.propagated),
            fixed: row(ipc.fixed),
            inherited_unlocked: row(ipc.inherited_unlocked),
            inherited_locked: row(ipc.inherited_locked),
            pip_to_pip: row(ipc.pip_to_pip),
            pip_to_propagated: row(ipc.pip_to_propagated),
            nest: NestCost {
                to_inherited: time(ipc.nest_to_inherited),
                to_propagated: time(ipc.nest_to_propagated),
            },
            context_switch: time(cost.context_switch),
        }
    }

    /// The maxima of Table 2 on the paper's Intel Xeon Gold 6130 (cycles at 2.1 GHz, rounded
    /// up to whole nanoseconds).
    pub fn xeon_gold_6130_max() -> ProtocolCosts {
        ProtocolCosts::of(&CostModel::XEON_GOLD_6130_MAX)
    }
}

/// A whole system to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentSystemConfig {
    /// The tasks, by index (the index is the requestor id requests carry).
    pub tasks: Vec<LoweredTask>,
    /// The CPIs, by index.
    pub cpis: Vec<LoweredCpi>,
    /// The protocol overheads.
    pub costs: ProtocolCosts,
}

impl ComponentSystemConfig {
    /// The longest task period (zero without tasks): with harmonic periods, the hyperperiod.
    pub fn longest_period(&self) -> Duration {
        self.tasks
            .iter()
            .map(|t| t.period)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

/// One job of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComponentJob {
    /// Its release.
    pub release: Instant,
    /// Its completion, if it completed before the run ended.
    pub completion: Option<Instant>,
    /// Time lower-priority work ran while it was pending.
    pub inversion: Duration,
    /// How many distinct lower-priority jobs that work belonged to.
    pub lower_jobs: u32,
}

/// A task's results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentTaskOutcome {
    /// Jobs released.
    pub jobs: u64,
    /// Jobs that completed after their deadline, or had not completed by a deadline within
    /// the run.
    pub misses: u64,
    /// The longest response time of a completed job.
    pub max_response: Duration,
    /// The longest priority inversion a job suffered.
    pub max_inversion: Duration,
    /// The most distinct lower jobs one job waited for.
    pub max_lower_jobs: u32,
    /// Every job, when asked for.
    pub job_records: Vec<ComponentJob>,
    /// Times its scheduling context ran out of budget and its threads waited for a
    /// replenishment.
    pub budget_exhaustions: u64,
}

/// What a run produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentOutcome {
    /// Where the run stopped.
    pub until: Instant,
    /// Per task, by index.
    pub tasks: Vec<ComponentTaskOutcome>,
    /// Requests that found no free pool thread and queued on the endpoint: zero when the
    /// pools are sized as the configuration analyzer says.
    pub pool_exhausted: u64,
    /// Protocol steps a CPI refused, and calls the scheduler refused: zero unless the machine,
    /// a CPI or the scheduler is wrong (or requests loop back to a CPI that serves them).
    pub protocol_errors: u64,
    /// Time the core ran threads, kernel overheads included.
    pub busy: Duration,
    /// Thread dispatches that switched threads: to a thread other than the one that ran last,
    /// or after the core idled.
    pub context_switches: u64,
    /// What ran when, when asked for: one slice per stretch a thread ran, under the task
    /// whose job it worked for (a server thread's time is its caller's task's; protocol
    /// steps are kernel time), and each job's release, completion and miss.
    pub trace: Option<crate::trace::Trace>,
}

impl ComponentOutcome {
    /// Deadline misses over all tasks.
    pub fn misses(&self) -> u64 {
        self.tasks.iter().map(|t| t.misses).sum()
    }
}

/// What a machine with CPIs holds at the end of a run, beside its [`Outcome`](crate::Outcome)'s
/// per-task aggregates: the component paper's per-job measures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ComponentRecords {
    /// Per task of the scenario: its jobs' measures, if it is a periodic script (a loop for
    /// ever that ends with `sleep-until-next-release`), counted from their planned releases.
    pub tasks: Vec<Option<ComponentTaskOutcome>>,
    /// Requests that found no free pool thread and queued on the endpoint.
    pub pool_exhausted: u64,
    /// Protocol steps a CPI refused.
    pub protocol_errors: u64,
}

/// How long to run, and what to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The end of the run.
    pub until: Instant,
    /// Keep every job's record.
    pub record_jobs: bool,
    /// Record a trace (memory grows with simulated time).
    pub record_trace: bool,
}

impl RunOptions {
    /// How long the run lasts, from time zero.
    pub fn duration(&self) -> Duration {
        self.until.saturating_duration_since(Instant::ZERO)
    }

    /// The same run as the machine's options for the system's [`scenario`].
    pub fn machine_options(&self) -> crate::Options {
        crate::Options {
            until: Some(self.duration()),
            seed: None,
            record_trace: self.record_trace,
            record_jobs: self.record_jobs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cycles become time at the cost table's clock, rounded up: at 2.1 GHz a cycle is
    /// 10/21 ns, so Table 2's propagated call of 6,830 cycles is 3,252.38 ns, 3,253 ns; its
    /// reply of 3,960 cycles is 1,885.71 ns, 1,886 ns; the 7,530-cycle nest hop to a
    /// propagated CPI is 3,585.71 ns, 3,586 ns. A 1,000-cycle context switch at 1 GHz is 1 us.
    #[test]
    fn table_2_cycles_become_time_at_the_clock() {
        let xeon = ProtocolCosts::xeon_gold_6130_max();
        assert_eq!(xeon.propagated.call, Duration::from_nanos(3_253));
        assert_eq!(xeon.propagated.reply, Duration::from_nanos(1_886));
        assert_eq!(xeon.nest.to_propagated, Duration::from_nanos(3_586));
        assert_eq!(xeon.context_switch, Duration::ZERO);
        let switching = CostModel {
            context_switch: 1_000,
            ..CostModel::FREE
        };
        let costs = ProtocolCosts::of(&switching);
        assert_eq!(costs.context_switch, Duration::from_micros(1));
        assert_eq!(
            ProtocolCosts {
                context_switch: Duration::ZERO,
                ..costs
            },
            ProtocolCosts::ZERO
        );
    }
}
