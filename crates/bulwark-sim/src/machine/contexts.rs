//! Scheduling contexts on a fixed-priority core with CPIs (seL4 MCS's shape, the CAmkES
//! paper's section 4 with the SPR paper's reservations): each task's thread is bound to a
//! context holding its reservation's budget ([`SchedContext`], the sporadic-server rule), a
//! pool thread runs on the context donated with the request it serves, and the kernel
//! charges the context of whichever thread runs. The core's scheduler stays plain fixed
//! priority; the kernel takes a thread whose context is out of budget off the run queue
//! until the replenishment (Algorithm 1, lines 7-9), activates a context with its task's
//! job (Algorithm 3) and suspends it with the last one (Algorithm 1, lines 10-13).
//!
//! A dispatch on a context that did not run just before opens its non-preemptive region of
//! `eta` (Algorithm 2, line 5): until its end the thread running on that context keeps the
//! core against every thread that outranks it only by a timer's wake-up since the region
//! began (a release, a replenishment: section III-F). The kernel then does not ask the
//! scheduler at all, so the releases it owns wait too; the region's end is a timer. A thread
//! ready before the region, or woken by the running thread's own call or reply, is no such
//! activation, and preempts as usual once it outranks the running thread.

use bulwark_core::kernel::ContextId;
use bulwark_core::reservation::SchedContext;
use bulwark_core::{CoreDecision, Instant, TaskId, Work};

use super::cpis::{At, Components, Region};
use super::Machine;
use crate::SimError;

impl Machine<'_> {
    /// Thread `task` ran from `since` to `now`: the jobs it inverted, and its context, are
    /// charged. Out of line: only component systems get here.
    #[cold]
    #[inline(never)]
    pub(super) fn charge_components(&mut self, task: TaskId, since: Instant, now: Instant) {
        let Some(comps) = self.cpis.as_deref_mut() else {
            return;
        };
        comps.charge_inversion(task.index(), since, now);
        if !comps.has_contexts {
            return;
        }
        let held = self.objects.kernel().context_of(task);
        let core = usize::from(comps.threads[task.index()].core);
        comps.ran[core] = (held.map(|id| id.0 as usize), now);
        if let Some(context) = held.and_then(|id| self.objects.context_mut(id)) {
            let ran = now.saturating_duration_since(since);
            context.charge(now, ran, &mut Work::default());
        }
    }

    /// Task `task`'s job completed at `now`: the job log closes it, and with no job left its
    /// context suspends (Algorithm 1, lines 10-13).
    #[cold]
    #[inline(never)]
    pub(super) fn job_done_components(&mut self, task: TaskId, now: Instant) {
        let Some(comps) = self.cpis.as_deref_mut() else {
            return;
        };
        let idle = comps.job_done(task.index(), now);
        if idle && comps.has_contexts {
            if let Some(context) = self.own_context_mut(task.index()) {
                context.suspend(now, &mut Work::default());
            }
        }
    }

    /// The context thread `t` runs on is out of budget.
    pub(super) fn context_depleted(&self, t: usize) -> bool {
        let held = self.objects.kernel().context_of(TaskId(t as u32));
        held.and_then(|id| self.objects.kernel().context(id))
            .is_some_and(SchedContext::is_depleted)
    }

    /// Task `i`'s own context, if it has one.
    fn own_context_mut(&mut self, i: usize) -> Option<&mut SchedContext> {
        self.objects.context_mut(ContextId(i as u32))
    }

    /// The decision of a kernel entry on a core whose threads have scheduling contexts:
    /// `previous` ran until `now`.
    #[cold]
    #[inline(never)]
    pub(super) fn decide_with_contexts(
        &mut self,
        core: u16,
        now: Instant,
        previous: Option<TaskId>,
        work: &mut Work,
    ) -> Result<CoreDecision, SimError> {
        let Some(mut comps) = self.cpis.take() else {
            return self.decide_plainly(core, now, work);
        };
        let mut at = At { core, now, work };
        let decided = self.contexts_decide(&mut comps, &mut at, previous.map(TaskId::index));
        self.cpis = Some(comps);
        decided
    }

    fn decide_plainly(
        &mut self,
        core: u16,
        now: Instant,
        work: &mut Work,
    ) -> Result<CoreDecision, SimError> {
        self.scheduler_decide::<true>(core, now, work)
            .map_err(|error| SimError::Scheduler {
                core,
                call: "schedule",
                at: now,
                error,
            })
    }

    fn contexts_decide(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        previous: Option<usize>,
    ) -> Result<CoreDecision, SimError> {
        let now = at.now;
        if let Some(r) = previous.filter(|&r| is_ready(comps, r)) {
            self.exhaust(comps, at, r)?;
        }
        self.activate_released(comps, at);
        self.replenish_due(comps, at)?;
        let kept = previous.filter(|&r| {
            is_ready(comps, r) && self.in_region(comps, r, now) && defers_all_above(comps, r)
        });
        let mut decision = match kept {
            // Algorithm 2, line 6: the region defers everything that outranks it now.
            Some(r) => CoreDecision {
                next: Some(TaskId(r as u32)),
                timer: None,
            },
            None => {
                // Each pass takes one thread off, so there are at most as many as threads.
                let mut passes = comps.threads.len() + 1;
                loop {
                    let decision = self.decide_plainly(at.core, now, at.work)?;
                    match decision.next {
                        // The scheduler woke a thread whose context has no budget (a release
                        // while depleted): off the run queue it goes, and the scheduler again.
                        Some(next) if passes > 0 && self.exhaust(comps, at, next.index())? => {
                            passes -= 1;
                        }
                        Some(_) if passes == 0 => {
                            return Err(SimError::Livelock {
                                core: at.core,
                                at: now,
                            })
                        }
                        _ => break decision,
                    }
                }
            }
        };
        if let Some(next) = decision.next.map(TaskId::index) {
            if Some(next) != previous {
                self.open_region(comps, next, now);
            }
            comps.threads[next].timer_woken = None;
        }
        let timer = self.next_context_event(comps, at.core, decision.next.map(TaskId::index), now);
        decision.timer = match (decision.timer, timer) {
            (Some(a), b) if b != Instant::NEVER => Some(a.min(b)),
            (None, b) if b != Instant::NEVER => Some(b),
            (kept, _) => kept,
        };
        Ok(decision)
    }

    /// Thread `r`, ready, may go on only while its context has budget at now: else it waits
    /// for the replenishment (Algorithm 1, lines 7-9). True if it was taken off.
    fn exhaust(
        &mut self,
        comps: &mut Components,
        at: &mut At<'_>,
        r: usize,
    ) -> Result<bool, SimError> {
        let Some(id) = self.objects.kernel().context_of(TaskId(r as u32)) else {
            return Ok(false);
        };
        let owner = id.0 as usize;
        let Some(context) = self.objects.context_mut(id) else {
            return Ok(false);
        };
        if !context.is_depleted() {
            if context.charge(at.now, bulwark_core::Duration::ZERO, at.work) {
                return Ok(false);
            }
            context.deplete();
            comps.note_depleted(id.0, true);
            if let Some(log) = comps.logs.get_mut(owner).and_then(Option::as_mut) {
                log.outcome.budget_exhaustions += 1;
            }
        }
        self.block(comps, at, r)?;
        comps.set_throttled(r, true);
        Ok(true)
    }

    /// Jobs released by now: a task with none pending before activates its context with
    /// the job (Algorithm 3), and its thread, which the scheduler wakes, is a timer's wake-up.
    fn activate_released(&mut self, comps: &mut Components, at: &mut At<'_>) {
        // Each core's decisions release its own tasks' jobs.
        for i in comps.activate_released(at.core, at.now) {
            if let Some(context) = self.own_context_mut(i) {
                let available = context.activate(at.now, at.work);
                comps.note_depleted(i as u32, !available);
                if !available {
                    comps.set_throttled(i, true);
                }
            }
        }
    }

    /// Gives back the budget of every depleted context whose replenishment is due (Algorithm
    /// 3), and its throttled threads the run queue, as a timer's wake-up.
    fn replenish_due(&mut self, comps: &mut Components, at: &mut At<'_>) -> Result<(), SimError> {
        // Replenishing one context changes no other, so the due ones can be listed first.
        let kernel = self.objects.kernel();
        let due: Vec<ContextId> = comps
            .depleted
            .iter()
            .map(|&id| ContextId(id))
            .filter(|id| {
                // A context is its task's (by index), replenished by that task's core.
                let owner_core = comps.threads.get(id.0 as usize).map(|t| t.core);
                let context = kernel.context(*id);
                owner_core == Some(at.core)
                    && context.is_some_and(|context| context.replenishment_time() <= at.now)
            })
            .collect();
        for id in due {
            let Some(context) = self.objects.context_mut(id) else {
                continue;
            };
            let available = context.activate(at.now, at.work);
            comps.note_depleted(id.0, !available);
            let kernel = self.objects.kernel();
            let waiting: Vec<usize> = comps
                .throttled
                .iter()
                .map(|&t| t as usize)
                .filter(|&t| kernel.context_of(TaskId(t as u32)) == Some(id))
                .collect();
            for t in waiting {
                comps.set_throttled(t, false);
                self.make_ready(comps, at, t)?;
                comps.threads[t].timer_woken = Some(at.now);
            }
        }
        Ok(())
    }

    /// True while thread `t` runs inside its context's non-preemptive region.
    fn in_region(&self, comps: &Components, t: usize, now: Instant) -> bool {
        let held = self.objects.kernel().context_of(TaskId(t as u32));
        comps.region_of(t).is_some_and(|region| {
            held.map(|id| id.0 as usize) == Some(region.context) && now < region.end
        })
    }

    /// Thread `next` is dispatched at `now`: on a context other than the one that ran last
    /// (or after the core idled) it opens that context's region (Algorithm 2, line 5: if
    /// `tau_p != tau_n` then `x_n <- t_now`); a thread of the same context continues it.
    fn open_region(&mut self, comps: &mut Components, next: usize, now: Instant) {
        let held = self.objects.kernel().context_of(TaskId(next as u32));
        let context = held.map(|id| id.0 as usize);
        let core = usize::from(comps.threads[next].core);
        let (ran_on, ran_until) = comps.ran[core];
        let ran_on = ran_on.filter(|_| ran_until == now);
        if context.is_some() && context == ran_on {
            return;
        }
        comps.regions[core] = held.and_then(|id| {
            let eta = self.objects.kernel().context(id)?.non_preemptive();
            (!eta.is_zero()).then(|| Region {
                context: id.0 as usize,
                start: now,
                end: now.saturating_add(eta),
            })
        });
    }

    /// The next instant a context changes the schedule: the depletion of the dispatched
    /// thread's context, the end of its region, a depleted context's replenishment.
    fn next_context_event(
        &mut self,
        comps: &Components,
        core: u16,
        next: Option<usize>,
        now: Instant,
    ) -> Instant {
        let mut at = Instant::NEVER;
        if let Some(r) = next {
            let held = self.objects.kernel().context_of(TaskId(r as u32));
            if let Some(context) = held.and_then(|id| self.objects.kernel().context(id)) {
                at = at.min(context.depletion_time(now, &mut Work::default()));
            }
            if self.in_region(comps, r, now) {
                at = at.min(
                    comps
                        .region_of(r)
                        .map_or(Instant::NEVER, |region| region.end),
                );
            }
        }
        // A release wakes its thread and activates its context at its instant, also while a
        // region keeps the scheduler from being asked.
        at = at.min(comps.next_inactive_release(core));
        for &id in &comps.depleted {
            if comps.threads.get(id as usize).map(|t| t.core) != Some(core) {
                continue;
            }
            if let Some(context) = self.objects.kernel().context(ContextId(id)) {
                at = at.min(context.replenishment_time());
            }
        }
        at.max(now)
    }
}

impl Components {
    /// The non-preemptive region open on thread `t`'s core, if any.
    fn region_of(&self, t: usize) -> Option<Region> {
        self.regions[usize::from(self.threads[t].core)]
    }
}

/// Thread `t` is ready in the scheduler and has budget.
fn is_ready(comps: &Components, t: usize) -> bool {
    let thread = &comps.threads[t];
    !thread.is_blocked() && !thread.is_throttled()
}

/// True when the region defers every ready thread that outranks `r`: threads a timer made
/// ready since it started. A thread that was ready before (which a thread raised to a
/// ceiling was dispatched ahead of), or that `r`'s own call or reply woke, is no
/// activation: once it outranks `r` it preempts as usual.
fn defers_all_above(comps: &Components, r: usize) -> bool {
    let Some(region) = comps.region_of(r) else {
        return false;
    };
    let (priority, core) = (comps.threads[r].effective(), comps.threads[r].core);
    // Only the ready threads above it: with thousands of component tasks, a scan of every
    // thread here at each kernel entry in a region was a third of a run.
    comps.ready_above(core, priority).all(|t| {
        let thread = &comps.threads[t];
        t == r || thread.is_throttled() || thread.timer_woken.is_some_and(|at| at >= region.start)
    })
}
