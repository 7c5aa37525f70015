//! Scheduling contexts on the component machine: a task's SPR reservation `(b, p, S, eta)`
//! with the sporadic-server rule (SPR paper, sections III and IV), separate from the threads
//! that run on it.
//!
//! A task's context is the budget of every thread working for the task's job: its control
//! thread, and a pool thread while it serves a request the task originated (the context is
//! donated with the request, as an seL4 MCS passive server runs on its caller's scheduling
//! context). Thread priorities stay the protocols' business; the context decides only whether
//! its threads may run (budget) and for how long a dispatched one keeps the core (`eta`).
//!
//! The budget is the core's own [`ReplenishmentQueue`], driven by the steps of the paper's
//! algorithms: consumption (Algorithm 1, lines 1-4), the split when the task suspends
//! (lines 10-13), activation with merging (Algorithm 3) and the depletion time with early
//! replenishment (Algorithm 2, lines 1-4). So a context's threads run at most `b` in any
//! window of length `p`.

use bulwark_core::reservation::replenishment::ReplenishmentQueue;
use bulwark_core::{Duration, Instant, Work};

/// A task's reservation as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextConfig {
    /// The budget `b`.
    pub budget: Duration,
    /// The replenishment period `p`.
    pub period: Duration,
    /// The replenishment queue's capacity `S`.
    pub replenishments: u16,
    /// The non-preemptive region `eta`: a thread dispatched on this context keeps the core
    /// for `min(eta, remaining budget)` before anything may preempt it (section III-F).
    pub non_preemptive: Duration,
}

/// A context's state during a run.
#[derive(Clone, Debug)]
pub(super) struct Context {
    config: ContextConfig,
    queue: ReplenishmentQueue,
    /// `u`: budget consumed from the head and not yet planned for replenishment.
    used: Duration,
    /// Out of budget: its threads wait for the head's replenishment.
    pub(super) depleted: bool,
}

impl Context {
    /// A context with its whole budget available from time zero; `None` for a zero budget
    /// or capacity (validation refuses them).
    pub(super) fn new(config: ContextConfig) -> Option<Context> {
        let queue = ReplenishmentQueue::new(
            usize::from(config.replenishments),
            config.budget,
            Instant::ZERO,
        )
        .ok()?;
        Some(Context {
            config,
            queue,
            used: Duration::ZERO,
            depleted: false,
        })
    }

    /// The non-preemptive region `eta`.
    pub(super) fn non_preemptive(&self) -> Duration {
        self.config.non_preemptive
    }

    /// Charges `ran` of execution and plans the replenishment of every head it used up
    /// (Algorithm 1, lines 1-4). True while budget is left at `now` (line 15: `t_head <=
    /// t_now`, with `u` below the head's amount).
    pub(super) fn charge(&mut self, now: Instant, ran: Duration, work: &mut Work) -> bool {
        self.used = self.used.saturating_add(ran);
        self.queue.consume(&mut self.used, self.config.period, work);
        self.queue.head().at <= now
    }

    /// The task's job arrives with none pending (Algorithm 3): expired replenishments merge
    /// into the head, which restarts now if due. True when budget is available.
    pub(super) fn activate(&mut self, now: Instant, work: &mut Work) -> bool {
        let available = self.queue.activate(now, Instant::NEVER, work);
        self.depleted = !available;
        available
    }

    /// The task's last pending job completed (Algorithm 1, lines 10-13): with budget left,
    /// what it used is split off and planned one period after the head.
    pub(super) fn suspend(&mut self, now: Instant, work: &mut Work) {
        if self.charge(now, Duration::ZERO, work) {
            self.queue.split(&mut self.used, self.config.period, work);
        }
    }

    /// When a thread dispatched on this context at `now` runs out of budget, counting the
    /// replenishments due before then (Algorithm 2, lines 1-4).
    pub(super) fn depletion_time(&self, now: Instant, work: &mut Work) -> Instant {
        self.queue.depletion_time(now, self.used, work)
    }

    /// When the next budget arrives: the head's time.
    pub(super) fn replenishment_time(&self) -> Instant {
        self.queue.head().at
    }
}
