//! The kernel entry's extras (`enter_kernel::<true>`): VBS first arrivals, the VBS records'
//! hooks, and invariant checks after every scheduler call. A run without them never enters
//! the kernel through this code.

use bulwark_core::bandwidth::vbs::Resource;
use bulwark_core::{ContextChange, CoreError, Duration, Event, Instant, TaskId, Work};

use super::{Entry, Machine};
use crate::behaviour::Action;
use crate::event::EventKind;
use crate::SimError;

impl Entry {
    /// The scheduler call the entry makes, as invariant failures name it.
    pub(super) fn call(self) -> &'static str {
        match self {
            Entry::Boot => "boot",
            Entry::Timer => "timer",
            Entry::Sleep { .. } => "sleep",
            Entry::Exit { .. } | Entry::Reclaim { .. } => "block",
            Entry::Reconfigure { .. } => "reconfigure",
            Entry::Invoke { .. } => "invoke",
            Entry::Reply { .. } => "reply",
            Entry::Cpi { .. } => "cpi",
        }
    }
}

impl Machine<'_> {
    /// `task`'s first VBS action arrives at `now`: the process marks the switch to it.
    pub(super) fn first_action(
        &mut self,
        core: u16,
        task: TaskId,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let t = &mut self.tasks[task.index()];
        let first = t.program.next_action(now, &mut t.rng);
        let Ok(Action::Switch {
            load,
            limit,
            period,
        }) = first
        else {
            return Err(self.refused("reconfigure", task, now, CoreError::InvalidParameter));
        };
        let change = self.start_action(task, now, load, Resource::new(limit, period));
        self.tell(
            core,
            now,
            "reconfigure",
            task,
            Event::Reconfigure { task, change },
            work,
        )?;
        if self.check_invariants {
            self.check(core, "reconfigure", now)?;
        }
        Ok(())
    }

    /// `core`'s scheduler's invariants after `call` at `now` (with invariant checks on).
    #[cold]
    #[inline(never)]
    fn check(&self, core: u16, call: &'static str, now: Instant) -> Result<(), SimError> {
        self.scheduler_invariants(core)
            .map_err(|what| SimError::Invariant {
                core,
                call,
                at: now,
                what,
            })
    }

    /// `core`'s timer fired at `now`: the VBS first arrivals due come with it (see
    /// `VbsLog::timer`).
    #[inline(never)]
    pub(super) fn extras_timer(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<(), SimError> {
        while let Some(task) = self.vbs.as_deref_mut().and_then(|v| v.due(core, now)) {
            self.first_action(core, task, now, work)?;
        }
        Ok(())
    }

    /// The entry's scheduler `call` on `core` at `now` is done.
    #[inline(never)]
    pub(super) fn extras_called(
        &self,
        core: u16,
        call: &'static str,
        now: Instant,
    ) -> Result<(), SimError> {
        if self.check_invariants {
            self.check(core, call, now)?;
        }
        Ok(())
    }

    /// `core`'s scheduler decided at `now`: `next` runs after `overhead`, and the timer asked
    /// for, `timer`, is already programmed. The invariants are checked; the VBS log closes
    /// what ran until `now` and notes `next`'s period instance; the core's timer becomes the
    /// earlier of `timer` and the core's next VBS first arrival.
    #[inline(never)]
    pub(super) fn extras_scheduled(
        &mut self,
        core: u16,
        now: Instant,
        next: Option<TaskId>,
        timer: Option<Instant>,
        overhead: Duration,
    ) -> Result<(), SimError> {
        if self.check_invariants {
            self.check(core, "schedule", now)?;
        }
        if self.vbs.is_none() {
            return Ok(());
        }
        // Read before the log is borrowed.
        let window =
            next.and_then(|next| self.cores[core as usize].scheduler.scheduling_window(next));
        let Some(vbs) = self.vbs.as_deref_mut() else {
            return Ok(());
        };
        vbs.entered(core, now);
        if let Some(next) = next {
            vbs.chosen(core, next, now.saturating_add(overhead), window);
        }
        let c = &mut self.cores[core as usize];
        let timer = vbs.timer(core, timer);
        if timer != c.timer {
            c.timer = timer;
            match timer {
                Some(at) => self.queue.set(at.max(now), EventKind::Timer { core }),
                None => self.queue.cancel_timer(core),
            }
        }
        Ok(())
    }
}

/// A VBS action of `load` on `(limit, period)`. Unless `disclose`d, the scheduler is not told
/// the load: the next switch (or the end of the script) marks its completion.
pub(super) fn vbs_action(
    load: Duration,
    limit: Duration,
    period: Duration,
    disclose: bool,
) -> ContextChange {
    ContextChange {
        budget: limit,
        period,
        load: disclose.then_some(load),
    }
}
