//! A core's scheduler as the machines and the hosted runtime drive it: the core's policy as
//! a cluster of one ([`PerCore`]) behind the one scheduler interface ([`ClusterScheduler`]),
//! with its notice record. The scenario machine builds it from the scenario's `policy` or
//! the core's `[[core]]` table; a component system's core is fixed priority.
//!
//! The adapter is static and the policy boxed (`PerCore<Box<dyn Policy>>`): the adapter's
//! match on the event folds away where the machine names the event, leaving one dynamic call
//! to the policy per kernel call. Boxing the adapter instead (`Box<dyn ClusterScheduler>`)
//! moved that match behind the dynamic call and cost the 100-task EDF run 7.5 % more
//! instructions.

use bulwark_core::bandwidth::vbs::{
    ArrayQueue, BandwidthCap, ListQueue, MatrixQueue, TreeQueue, Vbs, VbsConfig, VbsQueue,
};
use bulwark_core::bandwidth::{Cbs, CbsServer};
use bulwark_core::reservation::{
    DeferrableServer, ReplenishmentRule, Reservation, SporadicServer, Spr,
};
use bulwark_core::{
    ClusterScheduler, CoreDecision, CoreError, Duration, Edf, Event, FixedPriority, Instant,
    Notice, Notices, PerCore, Policy, Priority, SchedulerError, TaskId, Work,
};
use bulwark_spec::{PolicyKind, Scenario, TaskSpec, VbsPlugin, VbsSpec};

use crate::SimError;

/// One core's scheduler and the notices it reports (budget exhaustions and replenishments,
/// from the policies with budgets that report them). The policy is boxed where it is chosen
/// at run time (the default) and concrete where the machine fixes it.
pub struct CoreScheduler<P: Policy = Box<dyn Policy>> {
    scheduler: PerCore<P>,
    notices: Notices,
}

impl<P: Policy> core::fmt::Debug for CoreScheduler<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CoreScheduler")
            .field("scheduler", &self.scheduler.name())
            .finish()
    }
}

impl CoreScheduler {
    /// The scheduler of `core`: its policy (the scenario's, or its `[[core]]` table's),
    /// configured with the tasks partitioned onto it.
    pub fn build(scenario: &Scenario, core: u16) -> Result<Self, SimError> {
        Ok(Self::new(build_policy(scenario, core)?))
    }
}

impl<P: Policy> CoreScheduler<P> {
    /// Drives `policy` as a cluster of one core.
    pub fn new(policy: P) -> Self {
        let scheduler = PerCore::new(policy);
        let notices = Notices::with_capacity(scheduler.notice_capacity());
        CoreScheduler { scheduler, notices }
    }

    /// The scheduler's name, e.g. `"edf"`.
    pub fn name(&self) -> &'static str {
        self.scheduler.name()
    }

    /// Reports `event` at `now`; a refusal changes nothing.
    #[inline]
    pub fn handle(
        &mut self,
        now: Instant,
        event: Event,
        work: &mut Work,
    ) -> Result<(), SchedulerError> {
        self.scheduler.handle(now, event, &mut self.notices, work)
    }

    /// The thread the core runs from `now` and when its timer fires.
    #[inline]
    pub fn decide(
        &mut self,
        now: Instant,
        work: &mut Work,
    ) -> Result<CoreDecision, SchedulerError> {
        let mut decisions = [CoreDecision::default()];
        self.scheduler
            .decide(now, &mut decisions, &mut self.notices, work)?;
        let [decision] = decisions;
        Ok(decision)
    }

    /// True when the scheduler reported notices that were not taken yet.
    #[inline]
    pub fn has_notices(&self) -> bool {
        !self.notices.is_empty()
    }

    /// Appends the notices not taken yet to `into`, in the record's order, and forgets them.
    pub fn take_notices(&mut self, into: &mut Vec<Notice>) {
        into.extend(self.notices.iter());
        self.notices.clear();
    }

    /// The budget left in `task`'s context at `now`, if it has one.
    pub fn remaining_budget(&self, task: TaskId, now: Instant) -> Option<Duration> {
        self.scheduler.remaining_budget(task, now)
    }

    /// Checks the scheduler's invariants.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.scheduler.check_invariants()
    }

    /// The window `(start, deadline)` by whose deadline the policy schedules `task`, for
    /// policies that have them (CBS, VBS), as of the last decision.
    pub fn scheduling_window(&self, task: TaskId) -> Option<(Instant, Instant)> {
        self.scheduler.policy().scheduling_window(task)
    }
}

/// Adds one task, given its id and its specification, to the policy being built.
type AddTask<'a> = Box<dyn FnMut(TaskId, &TaskSpec) -> Result<(), CoreError> + 'a>;

/// The policy of core `core` (the scenario's, or its `[[core]]` table's), configured with the
/// tasks partitioned onto it.
fn build_policy(scenario: &Scenario, core: u16) -> Result<Box<dyn Policy>, SimError> {
    let count = scenario.tasks.len();
    let on_core = || {
        scenario
            .tasks
            .iter()
            .enumerate()
            .filter(move |(_, spec)| spec.core == core)
            .map(|(i, spec)| (TaskId(i as u32), spec))
    };
    // Adds every task of the core with `add`, naming the task a refusal is about.
    let add_each = |mut add: AddTask<'_>| {
        on_core().try_for_each(|(id, spec)| {
            add(id, spec).map_err(|error| SimError::Configuration {
                task: spec.name.clone(),
                error,
            })
        })
    };
    let policy_kind = scenario.policy_of(core);
    Ok(match policy_kind {
        PolicyKind::FixedPriority => {
            let mut policy = FixedPriority::with_capacity(count);
            add_each(Box::new(|id, spec| {
                policy.add_task(id, spec.priority.unwrap_or_default())
            }))?;
            Box::new(policy)
        }
        PolicyKind::Edf => {
            let mut policy = Edf::with_capacity(count);
            add_each(Box::new(|id, _| policy.add_task(id)))?;
            Box::new(policy)
        }
        PolicyKind::DeferrableServer => {
            let mut policy = DeferrableServer::with_capacity(count);
            add_each(server_adder(|id, p, r| policy.add_task(id, p, r)))?;
            Box::new(policy)
        }
        PolicyKind::SporadicServer => {
            let mut policy = SporadicServer::with_capacity(count);
            add_each(server_adder(|id, p, r| policy.add_task(id, p, r)))?;
            Box::new(policy)
        }
        PolicyKind::Spr | PolicyKind::SprDeferrable => {
            let rule = if policy_kind == PolicyKind::Spr {
                ReplenishmentRule::Sporadic
            } else {
                ReplenishmentRule::Deferrable
            };
            let mut policy = Spr::with_capacity(count, rule);
            add_each(server_adder(|id, p, r| policy.add_task(id, p, r)))?;
            Box::new(policy)
        }
        PolicyKind::Vbs => build_vbs(scenario, core)?,
        PolicyKind::Cbs | PolicyKind::HardCbs => {
            let mut policy = Cbs::with_capacity(count);
            add_each(server_adder(|id, _, reservation| {
                let server = CbsServer::new(reservation.budget, reservation.period);
                let server = if policy_kind == PolicyKind::HardCbs {
                    server.hard()
                } else {
                    server
                };
                policy.add_server(id, server)
            }))?;
            Box::new(policy)
        }
    })
}

/// Adds a task of a reservation-server policy with the priority and reservation that
/// validation gave it.
fn server_adder<'a>(
    mut add: impl FnMut(TaskId, Priority, Reservation) -> Result<(), CoreError> + 'a,
) -> AddTask<'a> {
    Box::new(move |id, spec| {
        let (priority, reservation) = server(spec)?;
        add(id, priority, reservation)
    })
}

/// The VBS policy of `core` with its plugin, every process added with its cap.
fn build_vbs(scenario: &Scenario, core: u16) -> Result<Box<dyn Policy>, SimError> {
    fn with<Q: VbsQueue + 'static>(
        scenario: &Scenario,
        core: u16,
        spec: &VbsSpec,
    ) -> Result<Box<dyn Policy>, SimError> {
        let config = VbsConfig::new(spec.strategy)
            .with_quantum(spec.quantum)
            .with_horizon_bits(spec.resolution_bits);
        let count = scenario.tasks.len();
        let first = || {
            scenario
                .tasks
                .first()
                .map_or_else(String::new, |t| t.name.clone())
        };
        let mut policy =
            Vbs::<Q>::with_capacity(count, config).map_err(|error| SimError::Configuration {
                task: first(),
                error,
            })?;
        for (i, task) in scenario.tasks.iter().enumerate() {
            if task.core != core {
                continue;
            }
            let (n, d) = spec.caps.get(i).copied().flatten().unwrap_or((1, 1));
            let refused = |error| SimError::Configuration {
                task: task.name.clone(),
                error,
            };
            let cap = BandwidthCap::from_ratio(n, d).map_err(refused)?;
            policy.add_process(TaskId(i as u32), cap).map_err(refused)?;
        }
        Ok(Box::new(policy))
    }
    let Some(spec) = scenario.vbs.as_ref() else {
        return Err(SimError::Configuration {
            task: String::new(),
            error: CoreError::InvalidParameter,
        });
    };
    match spec.plugin {
        VbsPlugin::List => with::<ListQueue>(scenario, core, spec),
        VbsPlugin::Array => with::<ArrayQueue>(scenario, core, spec),
        VbsPlugin::Matrix => with::<MatrixQueue>(scenario, core, spec),
        VbsPlugin::Tree => with::<TreeQueue>(scenario, core, spec),
    }
}

/// A server's priority and reservation; validation gives both to every task of a
/// reservation-server policy.
fn server(spec: &TaskSpec) -> Result<(Priority, Reservation), CoreError> {
    let reservation = spec.reservation.ok_or(CoreError::InvalidParameter)?;
    Ok((spec.priority.unwrap_or_default(), reservation))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Validation lets mc-ipc callers sit only under policies that report budget notices
    /// (`PolicyKind::reports_budget_notices`); this is what the built schedulers do.
    #[test]
    fn the_policies_said_to_report_notices_are_those_that_do() {
        for (kind, name) in PolicyKind::ALL {
            let priority = if kind.has_priorities() {
                "priority = 1\n"
            } else {
                ""
            };
            let task = match kind {
                PolicyKind::Vbs => "cap = \"1/2\"\nscript = [{ action = \"1ms\", limit = \"1ms\", period = \"2ms\" }]",
                PolicyKind::FixedPriority | PolicyKind::Edf => "period = \"10ms\"\nexecution = \"1ms\"",
                _ => "period = \"10ms\"\nexecution = \"1ms\"\nreservation = { budget = \"1ms\", period = \"10ms\" }",
            };
            let vbs = if kind == PolicyKind::Vbs {
                "[vbs]\nstrategy = \"early\"\nplugin = \"tree\"\nquantum = \"10us\"\n"
            } else {
                ""
            };
            let source = format!(
                "name = \"n\"\npolicy = \"{name}\"\nduration = \"10ms\"\n{vbs}\n[[task]]\nname = \"t\"\n{priority}{task}\n"
            );
            let scenario = bulwark_spec::parse(&source, "n.toml").expect(name);
            let scheduler = CoreScheduler::build(&scenario, 0).expect(name);
            let reports = scheduler.scheduler.notice_capacity() > 0;
            assert_eq!(reports, kind.reports_budget_notices(), "{name}");
        }
    }
}
