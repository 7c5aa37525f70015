//! The kernel entries of the system calls a task makes now and then (a VBS action switch,
//! `invoke` and its reply, `terminate`), out of the line of the entries every job makes
//! (timer, sleep, exit): they are rare, and inlined they would crowd the hot loop.

use bulwark_core::{Event, Instant, TaskId, Work};

use super::{Completion, Entry, Machine};
use crate::SimError;

impl Machine<'_> {
    /// Carries out `entry` on `core` at `now`, before the scheduler decides: returns the
    /// kernel cycles it adds and the task it suspends, if any.
    #[cold]
    #[inline(never)]
    pub(super) fn system_call(
        &mut self,
        core: u16,
        now: Instant,
        entry: Entry,
        work: &mut Work,
    ) -> Result<(u64, Option<TaskId>), SimError> {
        match entry {
            Entry::Reconfigure { task, context } => {
                let event = Event::Reconfigure {
                    task,
                    change: context,
                };
                self.tell(core, now, "reconfigure", task, event, work)?;
                Ok((0, None))
            }
            // The thread switches to the server and back: a context switch each way.
            Entry::Invoke { task, server } => {
                let blocks = self.invoke(core, task, server, now, work)?;
                Ok((self.cost.context_switch, blocks.then_some(task)))
            }
            Entry::Reply { task, server } => {
                self.reply(core, task, server, now, work)?;
                Ok((self.cost.context_switch, None))
            }
            // The protocol's steps are the threads' own execution, at the ceiling.
            Entry::Cpi { task, op } => Ok((0, self.cpi_entry(core, now, task, op, work)?)),
            Entry::Reclaim { task, target, step } => {
                let reclaimed = self.objects.terminate(target, step);
                let cycles = self.objects.cycles(reclaimed.units);
                let time = self.cost.time_of(cycles).as_nanos();
                let m = &mut self.cores[core as usize].metrics;
                m.reclaim_ns += time;
                m.max_reclaim_ns = m.max_reclaim_ns.max(time);
                m.reclaims += 1;
                self.tasks[task.index()].reclaiming = (!reclaimed.done).then_some((target, step));
                for killed in reclaimed.killed {
                    self.kill(core, now, TaskId(killed as u32), work)?;
                }
                Ok((cycles, None))
            }
            Entry::Boot | Entry::Timer | Entry::Sleep { .. } | Entry::Exit { .. } => Ok((0, None)),
        }
    }

    /// `task`'s process was terminated at `now`: its job ends (killed, not missed), a ready
    /// task leaves the policy's run queue, and a suspended one exits when next dispatched
    /// (the policy owns its wake-up timer; `block` refuses a sleeping task, changing nothing).
    /// A member of `core`'s cluster running on another of its cores is taken off there
    /// first (charged up to `now`, so an operation it ran for a server keeps that progress;
    /// not counted as preempted). It leaves the server it waits for or is served by.
    fn kill(
        &mut self,
        core: u16,
        now: Instant,
        task: TaskId,
        work: &mut Work,
    ) -> Result<(), SimError> {
        let running_elsewhere = self.member_of[task.index()]
            .and_then(|cluster| self.member_core(cluster, task))
            .filter(|&other| other != core);
        if let Some(other) = running_elsewhere {
            self.take_off(other, task, now);
        }
        self.leave_server(core, task, now, work)?;
        // A job planned after the run's end is never released within it, so it does not
        // count ("Ties", 6): it is dropped, not closed as killed.
        let until = self.until;
        let t = &mut self.tasks[task.index()];
        if t.job.as_ref().is_some_and(|job| job.release > until) {
            t.job = None;
        } else {
            self.close_job(task, Completion::Killed);
        }
        let t = &mut self.tasks[task.index()];
        t.killed = true;
        t.executing = None;
        t.reclaiming = None;
        let _ = self.scheduler_handle::<true>(core, now, Event::Block { task }, work);
        Ok(())
    }

    /// Tells `core`'s scheduler `event`, the `call` of `task`, at `now`; a refusal is the
    /// run's error.
    pub(super) fn tell(
        &mut self,
        core: u16,
        now: Instant,
        call: &'static str,
        task: TaskId,
        event: Event,
        work: &mut Work,
    ) -> Result<(), SimError> {
        self.scheduler_handle::<true>(core, now, event, work)
            .map_err(|error| self.refused(call, task, now, error))
    }
}
