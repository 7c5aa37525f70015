//! A system's kernel objects on a platform: the core's [`Kernel`] (one process per task in
//! the capability tree, spawned into its reclamation group when it has one; the servers'
//! gates, server `i`'s as gate `i`, when the system has any), reached through its syscall layer, so that `allocate`
//! and `terminate` steps and IPC run the real kernel code. The simulator turns reclamation
//! work into time through the cost model's `reclaim_per_unit`; the hosted runtime runs the
//! same calls on its threads and measures them on the real clock.

use bulwark_core::ipc::{Cpi, Gate};
use bulwark_core::kernel::{
    self, ContextId, Contexts, Ended, Kernel, ObjectStore, StoreError, Syscall, SyscallError,
};
use bulwark_core::reclaim::{ObjectKind, ReclaimError};
use bulwark_core::reservation::SchedContext;
use bulwark_core::{Instant, TaskId, Work};
use bulwark_spec::Scenario;

use crate::SimError;

pub use bulwark_core::kernel::Allocation;

/// The most kernel objects a simulated run holds at once: about 88 bytes each were measured
/// (a million semaphores, 86 MB), so 1.5 GB. A fixed number, so that a file behaves the same
/// on every machine; a run that would hold more stops ([`SimError::Objects`]) instead of
/// filling the memory.
pub const MAX_OBJECTS: u64 = 1 << 24;

/// What one termination call (or step of one) did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Termination {
    /// Work units spent.
    pub units: u64,
    /// False while a stepwise termination has more to do.
    pub done: bool,
    /// Tasks whose processes this call ended (on the first step of a group: all members).
    pub killed: Vec<usize>,
}

/// An `allocate` step that would have taken the kernel objects alive past [`MAX_OBJECTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverLimit {
    /// The task (an index into the scenario's tasks).
    pub task: usize,
    /// The objects it asked for.
    pub count: u64,
    /// The objects alive then (after its group's share, in a group).
    pub live: u64,
    /// When.
    pub at: Instant,
}

impl OverLimit {
    /// The error that stops the run of `scenario`, naming the task.
    pub fn error(&self, scenario: &Scenario) -> SimError {
        SimError::Objects {
            task: scenario.tasks[self.task].name.clone(),
            count: self.count,
            live: self.live,
            at: self.at,
        }
    }
}

/// A system's kernel and the clock that turns its reclamation work into time, shared by the
/// simulator and the hosted runtime so that both run the same kernel code on the same
/// objects.
pub struct KernelObjects {
    kernel: Kernel,
    /// The first `allocate` step that would have passed [`MAX_OBJECTS`].
    over_limit: Option<OverLimit>,
    /// Cycles per unit and the clock, to turn time into units.
    per_unit: u64,
    clock_hz: u64,
}

/// The MC-IPC gate's clusters (the other gates have none), by their core counts: each core is
/// a cluster of one, numbered as the core, and each `[[cluster]]` `k` is one of its cores,
/// numbered `cores + k` ([`gate_cluster`]).
pub fn gate_clusters(scenario: &Scenario) -> Vec<usize> {
    let mut clusters = vec![1; usize::from(scenario.cores).max(1)];
    clusters.extend(scenario.clusters.iter().map(|c| c.cores.len().max(1)));
    clusters
}

/// The gate cluster of a thread on `core`, or of a member of `[[cluster]]` `member_of`.
pub fn gate_cluster(scenario: &Scenario, core: u16, member_of: Option<u16>) -> usize {
    match member_of {
        Some(cluster) => usize::from(scenario.cores) + usize::from(cluster),
        None => usize::from(core),
    }
}

impl KernelObjects {
    /// One process per task; groups created with their quotas converted to work units.
    pub fn new(scenario: &Scenario) -> Result<Self, SimError> {
        let mut group_of = vec![None; scenario.tasks.len()];
        for (g, spec) in scenario.groups.iter().enumerate() {
            for &member in &spec.members {
                group_of[member] = Some(g);
            }
        }
        let quotas: Vec<_> = scenario.groups.iter().map(|g| g.quota).collect();
        // Server `i` is gate `i`; every task may call it.
        let clusters = gate_clusters(scenario);
        let gates = scenario
            .servers
            .iter()
            .map(|server| Gate::new(server.gate, scenario.tasks.len(), &clusters))
            .collect();
        let objects = Self::with_groups(
            scenario.cost.reclaim_per_unit,
            scenario.cost.clock_hz,
            &quotas,
            group_of,
            gates,
        )
        .map_err(|refused| match refused {
            StoreError::Group(g, error) => configuration(&scenario.groups[g].name, error),
            StoreError::Thread(t, error) => configuration(&scenario.tasks[t].name, error),
        });
        let mut objects = objects?;
        // CPI `c` is `CpiId(c)`, with room for one outstanding request per task.
        let capacity = scenario.tasks.len().max(1);
        let cpis = (scenario.cpis.iter())
            .map(|spec| {
                let cpi = &spec.cpi;
                Cpi::new(cpi.protocol, cpi.ceiling, cpi.threads, capacity)
            })
            .collect();
        // A component system's task has a scheduling context of its own (context `i` is task
        // `i`'s), which the kernel charges; pool threads have none.
        let contexts: Vec<Option<SchedContext>> = (0..scenario.tasks.len())
            .map(|task| SchedContext::new(scenario.kernel_context(task)?).ok())
            .collect();
        let bound = (0..contexts.len())
            .map(|i| contexts[i].is_some().then_some(ContextId(i as u32)))
            .collect();
        objects.kernel = std::mem::take(&mut objects.kernel)
            .with_cpis(cpis)
            .with_contexts(Contexts::new(contexts, bound));
        Ok(objects)
    }

    /// Context `id`, to charge, deplete and replenish (the platform drives its clock).
    pub fn context_mut(&mut self, id: ContextId) -> Option<&mut SchedContext> {
        self.kernel.context_mut(id)
    }

    /// One process per task, spawned into `group_of[task]` (an index into `quotas`) when it
    /// has one, and the servers' `gates`; `per_unit` cycles per unit of work at `clock_hz`.
    pub fn with_groups(
        per_unit: u64,
        clock_hz: u64,
        quotas: &[bulwark_core::Duration],
        group_of: Vec<Option<usize>>,
        gates: Vec<Gate>,
    ) -> Result<Self, StoreError> {
        let quotas: Vec<u64> = quotas
            .iter()
            .map(|quota| units_in(quota.as_nanos(), per_unit, clock_hz))
            .collect();
        let store = ObjectStore::new(&quotas, group_of)?;
        Ok(KernelObjects {
            kernel: Kernel::new(Vec::new(), gates, store),
            over_limit: None,
            per_unit,
            clock_hz,
        })
    }

    /// Carries out one system call on the kernel's objects.
    pub fn call<S: Syscall>(
        &mut self,
        call: S,
        work: &mut Work,
    ) -> Result<S::Outcome, SyscallError> {
        self.kernel.call(call, work)
    }

    /// The kernel, to read its objects.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Cycles of `units` of reclamation work.
    pub fn cycles(&self, units: u64) -> u64 {
        self.per_unit.saturating_mul(units)
    }

    /// Nanoseconds of `units` of reclamation work at the clock (rounded up: work that takes
    /// any cycle takes time).
    pub fn nanos(&self, units: u64) -> u64 {
        let cycles = self.cycles(units) as u128;
        let hz = self.clock_hz.max(1) as u128;
        u64::try_from((cycles * 1_000_000_000).div_ceil(hz)).unwrap_or(u64::MAX)
    }

    /// `task` creates `count` objects of `kind` (the `allocate` call); a task beyond the
    /// system allocates nothing.
    pub fn allocate(&mut self, task: usize, count: u64, kind: ObjectKind) -> Allocation {
        let call = kernel::Allocate {
            thread: TaskId(task as u32),
            kind,
            count,
        };
        self.kernel
            .call(call, &mut Work::default())
            .unwrap_or_default()
    }

    /// [`allocate`](Self::allocate) at `at` within [`MAX_OBJECTS`]. Outside a group, `count`
    /// more objects that would take the objects alive past it are known before any is
    /// created ([`Self::passes_limit`]): none is. In one, the group's quota may refuse them
    /// first (then every later one is refused too, as [`Allocation::refused`] counts), so the
    /// objects up to the limit are created, and only if the quota has not stopped them is the
    /// limit passed. Passing it is kept ([`Self::over_limit`]) for the platform to stop its
    /// run.
    pub fn allocate_within_limit(
        &mut self,
        task: usize,
        count: u64,
        kind: ObjectKind,
        at: Instant,
    ) -> Allocation {
        if self.passes_limit(task, count, at) {
            return Allocation::default();
        }
        let room = MAX_OBJECTS.saturating_sub(self.kernel.store().live_objects());
        if count <= room {
            return self.allocate(task, count, kind);
        }
        let mut made = self.allocate(task, room, kind);
        if made.refused > 0 {
            made.refused = count - made.created;
            return made;
        }
        self.keep_over_limit(task, count, at);
        made
    }

    /// True (and kept, [`Self::over_limit`]) when `count` more objects for `task`, outside any
    /// group, would take the objects alive past [`MAX_OBJECTS`]: nothing would stop them.
    pub fn passes_limit(&mut self, task: usize, count: u64, at: Instant) -> bool {
        let store = self.kernel.store();
        let fits = store.live_objects().saturating_add(count) <= MAX_OBJECTS;
        if fits || store.in_group(TaskId(task as u32)) {
            return false;
        }
        self.keep_over_limit(task, count, at);
        true
    }

    /// Keeps the first step that passed [`MAX_OBJECTS`].
    fn keep_over_limit(&mut self, task: usize, count: u64, at: Instant) {
        let live = self.kernel.store().live_objects();
        self.over_limit.get_or_insert(OverLimit {
            task,
            count,
            live,
            at,
        });
    }

    /// The first `allocate` step that would have passed [`MAX_OBJECTS`], if any.
    pub fn over_limit(&self) -> Option<OverLimit> {
        self.over_limit
    }

    /// Terminates `target`'s process (the `terminate` call): its whole group when it has one
    /// (in steps of at most `step` of kernel time when given), else the process alone, one
    /// object at a time.
    pub fn terminate(
        &mut self,
        target: usize,
        step: Option<bulwark_core::Duration>,
    ) -> Termination {
        let call = kernel::Terminate {
            thread: TaskId(target as u32),
            budget: step.map(|step| units_in(step.as_nanos(), self.per_unit, self.clock_hz)),
        };
        let Ok(ended) = self.kernel.call(call, &mut Work::default()) else {
            return Termination {
                done: true,
                ..Termination::default()
            };
        };
        let killed = match ended.ended {
            Ended::Nothing => Vec::new(),
            Ended::Group(g) => self
                .kernel
                .store()
                .members(g)
                .iter()
                .map(|member| member.index())
                .collect(),
            Ended::Thread(thread) => vec![thread.index()],
        };
        Termination {
            units: ended.units,
            done: ended.done,
            killed,
        }
    }
}

/// How many whole units of `per_unit` cycles fit in `nanos` at `clock_hz`.
fn units_in(nanos: u64, per_unit: u64, clock_hz: u64) -> u64 {
    if per_unit == 0 {
        return u64::MAX;
    }
    let cycles = nanos as u128 * clock_hz as u128 / 1_000_000_000;
    u64::try_from(cycles / per_unit as u128).unwrap_or(u64::MAX)
}

fn configuration(name: &str, error: ReclaimError) -> SimError {
    SimError::Reclamation {
        name: name.to_owned(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_convert_to_whole_units() {
        // 400 us at 1 GHz is 400,000 cycles; at 20 cycles per unit, 20,000 units.
        assert_eq!(units_in(400_000, 20, 1_000_000_000), 20_000);
        // 1 ns at 2 GHz is 2 cycles: no whole unit of 3 cycles.
        assert_eq!(units_in(1, 3, 2_000_000_000), 0);
        assert_eq!(units_in(5, 0, 1), u64::MAX);
    }
}
