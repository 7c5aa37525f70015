//! The task side of the runtime: a task thread's requests to the dispatcher (sleep, exit,
//! switch, terminate), its gate, its allocations in the run's object store, and the script
//! interpreter that runs scenario steps for real.

use std::sync::atomic::Ordering;

use bulwark_core::reclaim::ObjectKind;
use bulwark_core::{Duration, Instant};
use bulwark_sim::behaviour::{Action, Program};
use rand_chacha::ChaCha8Rng;

use crate::runtime::{Request, Shared, Slot, GATE_STOP, WHOLE};
use crate::sys::{self, GATE_CLOSED};
use crate::work::{spin_cpu, FlushBuffer, Matmul};

/// Objects one batch of an allocation creates under the store's lock. The thread holds its
/// preemption back for the batch (see [`TaskContext::allocate`]), so this bounds how long a
/// preemption, or the dispatcher's wait for the lock, can be delayed: about a thousand
/// creations, tens of microseconds.
const ALLOCATION_BATCH: u64 = 1024;

/// The run is over: every runtime call answers this at once, and the task should return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the run is over")]
pub struct Stopped;

/// What a task's code may ask of the runtime. Handed to each task's closure.
pub struct TaskContext<'r> {
    pub(crate) shared: &'r Shared,
    pub(crate) index: usize,
}

impl TaskContext<'_> {
    fn slot(&self) -> &Slot {
        &self.shared.tasks[self.index]
    }

    /// The run's time: zero is the dispatcher's boot.
    pub fn now(&self) -> Instant {
        self.shared.now()
    }

    /// True once the run is over.
    pub fn stopping(&self) -> bool {
        self.shared.stopping.load(Ordering::Relaxed)
    }

    /// Executes for `time` of this thread's CPU time (preempted time does not count).
    pub fn run_for(&self, time: Duration) -> Result<(), Stopped> {
        if spin_cpu(time.as_nanos(), &self.shared.stopping) {
            Ok(())
        } else {
            Err(Stopped)
        }
    }

    /// Ends the current job and sleeps until `until`; the next job is released then (or now,
    /// for a time already past). The wake-up time goes to the policy: no kernel timer is armed
    /// by this thread.
    pub fn sleep_until(&self, until: Instant) -> Result<(), Stopped> {
        let now = self.now();
        self.request(Request::Sleep, until, until.max(now))
    }

    /// Ends the current job and sleeps for `time` from now.
    pub fn sleep_for(&self, time: Duration) -> Result<(), Stopped> {
        self.sleep_until(self.now().saturating_add(time))
    }

    /// Ends the current job and sleeps until `until`, releasing the next job at `release`
    /// (the planned period boundary of a periodic task, which may already be past).
    pub(crate) fn sleep_release(&self, until: Instant, release: Instant) -> Result<(), Stopped> {
        self.request(Request::Sleep, until, release)
    }

    /// Marks the switch to this task's next VBS action, on the virtual periodic resource of
    /// `limit` every `period` (VBS paper, section IV: marking a change of action forces a
    /// scheduler invocation). The current action completes here, its load unknown to the
    /// scheduler until now, as the simulator's `action` step; the next action's load is the
    /// code that runs after this call returns, when the scheduler releases it. The job goes
    /// on. Returns the time the scheduler took the switch (its `now`, from which it places
    /// the current action's termination at the end of that period of its resource).
    ///
    /// The task's first action comes from its scenario script (its first step, an `action`)
    /// and arrives at time zero, before the task's code runs: call this for the second
    /// action on. Under a policy other than VBS the run ends with the policy's refusal.
    pub fn switch_action(&self, limit: Duration, period: Duration) -> Result<Instant, Stopped> {
        let slot = self.slot();
        slot.limit.store(limit.as_nanos(), Ordering::Relaxed);
        slot.period.store(period.as_nanos(), Ordering::Relaxed);
        self.request(Request::Switch, Instant::ZERO, Instant::ZERO)?;
        Ok(Instant::from_nanos(slot.handled_at.load(Ordering::Relaxed)))
    }

    /// Creates `count` kernel objects of `kind` in this task's process, as the simulator's
    /// `allocate` step: until its group's quota refuses one, and then the rest are refused
    /// too (a refused call changes nothing). The work is real, on this thread, so on this
    /// task's own time and budget. The store is shared with the dispatcher, so the thread
    /// takes its lock for batches of [`ALLOCATION_BATCH`] objects with its preemption signal
    /// held back (a thread parked while holding it would stall the dispatcher): a preemption
    /// takes effect at the end of the batch, as a kernel finishes a short system call.
    /// Returns what was created and refused (also counted in the task's metrics).
    pub(crate) fn allocate(
        &self,
        count: u64,
        kind: ObjectKind,
    ) -> Result<bulwark_sim::Allocation, Stopped> {
        let mut total = bulwark_sim::Allocation::default();
        let slot = self.slot();
        let now = self.now();
        {
            // Outside a group nothing would stop objects past those a run holds: none is
            // created, and the run ends at once and fails (the simulator's rule).
            let mut objects = (self.shared.objects.lock()).unwrap_or_else(|e| e.into_inner());
            if let Some(store) = objects.as_mut() {
                if store.passes_limit(self.index, count, now) {
                    self.shared.stop_at_object_limit();
                    return Ok(total);
                }
            }
        }
        while total.created + total.refused < count {
            if self.stopping() {
                return Err(Stopped);
            }
            let batch = (count - total.created - total.refused).min(ALLOCATION_BATCH);
            let made = {
                // Holding the signal back cannot fail on Linux; were it to, a preemption inside
                // the batch would park the thread with the lock held until the watchdog ends
                // the run.
                let _held = sys::hold_preemption().ok();
                let mut objects = self
                    .shared
                    .objects
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let made = match objects.as_mut() {
                    Some(store) => {
                        let made = store.allocate_within_limit(self.index, batch, kind, now);
                        if store.over_limit().is_some() {
                            self.shared.stop_at_object_limit();
                        }
                        made
                    }
                    None => bulwark_sim::Allocation::default(),
                };
                // Counted before the lock is released: the dispatcher, waiting for it, takes
                // the core at once, and may kill this task before it runs another line.
                slot.objects_allocated
                    .fetch_add(made.created, Ordering::Relaxed);
                if made.refused > 0 {
                    // Refused once: every later object would be refused too (the
                    // simulator's rule).
                    slot.allocations_refused
                        .fetch_add(count - total.created - made.created, Ordering::Relaxed);
                }
                made
            };
            total.units += made.units;
            total.created += made.created;
            if made.refused > 0 {
                total.refused = count - total.created;
                break;
            }
            if made.created < batch {
                // The process is gone (terminated), or its group reached the objects a run
                // holds: the store neither creates nor refuses.
                break;
            }
        }
        Ok(total)
    }

    /// Terminates the process of task `target` (its whole group when it has one), all at
    /// once, or in steps of at most `step` of kernel time with the scheduler running between
    /// them; the dispatcher reclaims, the core masked, and kills the processes ended. The job
    /// goes on.
    pub(crate) fn terminate(&self, target: usize, step: Option<Duration>) -> Result<(), Stopped> {
        let slot = self.slot();
        slot.target.store(target as u64, Ordering::Relaxed);
        slot.step_ns.store(
            step.map_or(WHOLE, |s| s.as_nanos().min(WHOLE - 1)),
            Ordering::Relaxed,
        );
        loop {
            slot.reclaim_pending.store(false, Ordering::Relaxed);
            self.request(Request::Terminate, Instant::ZERO, Instant::ZERO)?;
            if !slot.reclaim_pending.load(Ordering::Relaxed) {
                return Ok(());
            }
        }
    }

    /// A component thread's stretch `serial` is done; parks until the core comes back.
    pub(crate) fn stretch_done(&self, serial: u64) -> Result<(), Stopped> {
        self.request(
            Request::StretchDone,
            Instant::from_nanos(serial),
            Instant::ZERO,
        )
    }

    /// Ends the task for good.
    pub(crate) fn exit(&self) {
        let _ = self.request(Request::Exit, Instant::ZERO, Instant::ZERO);
    }

    /// Posts a request to the dispatcher and parks until it gives the core back.
    ///
    /// The gate is closed before the request is posted, so that however the dispatcher and
    /// this thread interleave, the thread waits until the dispatcher has handled the request
    /// and chosen it again. Posting wakes the dispatcher, which (at the highest priority on this
    /// core) handles the request before this thread runs another instruction.
    fn request(&self, kind: Request, until: Instant, release: Instant) -> Result<(), Stopped> {
        if self.stopping() {
            return Err(Stopped);
        }
        let slot = self.slot();
        // The run may end between the check above and closing the gate: the dispatcher's
        // last act opens every gate for good (GATE_STOP). Closing by a swap sees that, and
        // puts it back, where a plain store would overwrite it and park this thread forever.
        if slot.gate.swap(GATE_CLOSED, Ordering::AcqRel) == GATE_STOP {
            slot.gate.store(GATE_STOP, Ordering::Release);
            return Err(Stopped);
        }
        slot.until.store(until.as_nanos(), Ordering::Relaxed);
        slot.release.store(release.as_nanos(), Ordering::Relaxed);
        slot.at.store(self.now().as_nanos(), Ordering::Relaxed);
        slot.request.store(kind as u32, Ordering::Release);
        self.shared
            .posted
            .store(self.index as u32 + 1, Ordering::Release);
        self.shared.doorbell.fetch_add(1, Ordering::Release);
        sys::futex_wake(&self.shared.doorbell, 1);
        if kind == Request::Exit {
            return Ok(());
        }
        self.wait_granted()
    }

    /// Parks until the gate opens; records the first start of a newly released job.
    pub(crate) fn wait_granted(&self) -> Result<(), Stopped> {
        let slot = self.slot();
        loop {
            match slot.gate.load(Ordering::Acquire) {
                GATE_CLOSED => {
                    sys::futex_wait(&slot.gate, GATE_CLOSED, None);
                }
                GATE_STOP => return Err(Stopped),
                _ => break,
            }
        }
        let job = slot.job_seq.load(Ordering::Acquire);
        if slot.started_job.load(Ordering::Relaxed) != job {
            slot.started_at
                .store(self.now().as_nanos(), Ordering::Relaxed);
            slot.started_job.store(job, Ordering::Release);
        }
        Ok(())
    }

    /// Counts one finished unit of `compute` work.
    fn count_unit(&self) {
        self.slot().work_units.fetch_add(1, Ordering::Relaxed);
    }
}

/// Real resources a script needs.
pub(crate) struct ScriptTools {
    pub matmul: Matmul,
    /// Matrix multiplies per nanosecond of a `compute` unit, as calibrated.
    pub matmul_ns: u64,
    pub flush: Option<FlushBuffer>,
}

/// Runs a scenario behaviour for real: `run` spins on the CPU clock, `compute` multiplies
/// matrices (one unit is as many multiplies as fit the unit's time on this core, counted only
/// when all are done), `flush-cache` writes through a buffer twice the last-level cache, every
/// sleep is a request to the dispatcher, and a VBS `action` is a switch request and then its
/// load, spun on the CPU clock. Under VBS (`vbs`), the first action arrived at boot: the
/// script starts in its load.
pub(crate) fn run_script(
    ctx: &TaskContext,
    mut program: Program<'_>,
    rng: &mut ChaCha8Rng,
    tools: &mut ScriptTools,
    vbs: bool,
) {
    let mut arrived_at_boot = vbs;
    // A script that loops without time passing (`Err`) ends, as the simulator refuses it.
    while let Ok(action) = program.next_action(ctx.now(), rng) {
        let first = std::mem::take(&mut arrived_at_boot);
        let done = match action {
            Action::Execute { time, each: None } => ctx.run_for(time),
            Action::Execute {
                time,
                each: Some(each),
            } => compute(ctx, time, each, tools),
            Action::Sleep { until, release } => ctx.sleep_release(until, release),
            Action::FlushCache => {
                if let Some(buffer) = tools.flush.as_mut() {
                    buffer.flush();
                }
                Ok(())
            }
            Action::Switch {
                load,
                limit,
                period,
            } => {
                if first {
                    ctx.run_for(load)
                } else {
                    ctx.switch_action(limit, period)
                        .and_then(|_| ctx.run_for(load))
                }
            }
            Action::Allocate { count, object } => ctx.allocate(count, object).map(|_| ()),
            Action::Terminate { task, step } => {
                // The scenario's validation made the target a task of this scenario.
                match ctx.shared.names.iter().position(|name| name == task) {
                    Some(target) => ctx.terminate(target, step),
                    None => Ok(()),
                }
            }
            // Systems with servers or CPIs run on the stepped machine, never here.
            Action::Invoke { .. } | Action::Call { .. } => break,
            Action::Exit => break,
        };
        if done.is_err() {
            return;
        }
    }
    ctx.exit();
}

fn compute(
    ctx: &TaskContext,
    time: Duration,
    each: Duration,
    tools: &mut ScriptTools,
) -> Result<(), Stopped> {
    let units = time.as_nanos() / each.as_nanos().max(1);
    let per_unit = (each.as_nanos() / tools.matmul_ns.max(1)).max(1);
    for _ in 0..units {
        for _ in 0..per_unit {
            if ctx.stopping() {
                return Err(Stopped);
            }
            tools.matmul.multiply();
        }
        ctx.count_unit();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// The run ends (every gate set to GATE_STOP) after a task thread checked `stopping` but
    /// before it closed its gate to post a request: the request must see the stop and return,
    /// not overwrite it and park forever. The request runs on its own thread so that a
    /// regression fails after two seconds instead of hanging the suite.
    #[test]
    fn a_request_racing_the_end_of_the_run_returns() {
        let (done, finished) = mpsc::channel();
        std::thread::spawn(move || {
            let shared = Shared {
                tasks: vec![Slot::default()],
                ..Shared::default()
            };
            // The state that interleaving leaves: gates stopped, the flag as read earlier.
            shared.tasks[0].gate.store(GATE_STOP, Ordering::Release);
            let ctx = TaskContext {
                shared: &shared,
                index: 0,
            };
            let answer = ctx.request(Request::Sleep, Instant::NEVER, Instant::NEVER);
            let gate = shared.tasks[0].gate.load(Ordering::Acquire);
            let _ = done.send((answer.is_err(), gate));
        });
        let (stopped, gate) = finished
            .recv_timeout(std::time::Duration::from_secs(2))
            .expect("the request returned instead of parking forever");
        assert!(stopped);
        assert_eq!(gate, GATE_STOP, "the stop stays visible to later calls");
    }
}
