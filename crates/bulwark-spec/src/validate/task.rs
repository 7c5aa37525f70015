//! Task checks: name, core, priority, kind, execution, jitter, deadline and reservation.

use std::collections::HashMap;
use std::ops::Range;

use bulwark_core::{Duration, Priority};
use toml::Spanned;

use super::{Checker, MAX_CORES};
use crate::model::{Behaviour, Execution, PolicyKind, Reservation, TaskSpec};
use crate::raw::{RawExecution, RawReservation, RawTask, RawTime};

/// Most pending replenishments a sporadic-server reservation may track: `S` is fixed at
/// configuration, as a kernel fixes it, and kept small enough to stay cheap per task.
const MAX_REPLENISHMENTS: u16 = 1024;

const KIND_HELP: &str =
    "allowed: exactly one of period (periodic), min-interarrival (sporadic) or script";
const EXECUTION_HELP: &str =
    "allowed: execution = \"2ms\" or execution = { uniform = [\"1ms\", \"2ms\"] }";

/// The three kinds of task, named by the key that chooses them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Periodic,
    Sporadic,
    Script,
}

impl Kind {
    fn adjective(self) -> &'static str {
        match self {
            Kind::Periodic => "periodic",
            Kind::Sporadic => "sporadic",
            Kind::Script => "script",
        }
    }
}

/// Where a task runs and what its scheduler needs of it; a `None` is wrong (reported).
pub(super) struct Placement {
    pub(super) core: Option<u16>,
    /// `Some(None)`: no priority, as the scheduler wants.
    pub(super) priority: Option<Option<Priority>>,
    /// `Some(None)`: no reservation, as the scheduler wants.
    pub(super) reservation: Option<Option<Reservation>>,
}

impl Placement {
    pub(super) const WRONG: Placement = Placement {
        core: None,
        priority: None,
        reservation: None,
    };
}

impl Checker<'_> {
    /// The scenario's `[[task]]` tables; there may be none when it has components
    /// (`has_components`), whose tasks run instead.
    pub(super) fn tasks(
        &mut self,
        raw: &[Spanned<RawTask>],
        policy: Option<PolicyKind>,
        cores: Option<u16>,
        has_components: bool,
    ) -> Option<Vec<TaskSpec>> {
        if raw.is_empty() && !has_components {
            self.report(
                0..0,
                "this scenario has no tasks",
                "allowed: one or more [[task]] tables, or [[component]] tables with tasks",
            );
            return None;
        }
        let mut first_line_of: HashMap<&str, usize> = HashMap::new();
        let mut tasks = Vec::with_capacity(raw.len());
        let mut all_valid = true;
        for (index, task) in raw.iter().enumerate() {
            self.current_task = index;
            let name = &task.get_ref().name;
            let unique = match first_line_of.get(name.get_ref().as_str()) {
                Some(line) => {
                    let message = format!(
                        "task name `{}` is already used on line {line}",
                        name.get_ref()
                    );
                    self.report(
                        name.span(),
                        message,
                        "allowed: a name no other task in this scenario has",
                    );
                    false
                }
                None => {
                    let line = self.source.line(name.span().start);
                    first_line_of.insert(name.get_ref().as_str(), line);
                    true
                }
            };
            match self.task(task, policy, cores) {
                Some(spec) if unique => tasks.push(spec),
                _ => all_valid = false,
            }
        }
        all_valid.then_some(tasks)
    }

    fn task(
        &mut self,
        spanned: &Spanned<RawTask>,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
    ) -> Option<TaskSpec> {
        let raw = spanned.get_ref();
        let whole = spanned.span();
        let label = raw.name.get_ref().as_str();
        let name = self.name(&raw.name, "a task name");
        // `None`: not given; `Some(None)`: given but wrong (already reported).
        let deadline = raw
            .deadline
            .as_ref()
            .map(|d| self.positive_time(d, "deadline"));
        let offset = match &raw.offset {
            None => Some(Duration::ZERO),
            Some(offset) => self.time(offset),
        };
        let kind = self.kind(raw, whole.clone());
        let period = raw
            .period
            .as_ref()
            .and_then(|p| self.positive_time(p, "period"));
        let min_interarrival = raw
            .min_interarrival
            .as_ref()
            .and_then(|m| self.positive_time(m, "min-interarrival"));
        let jitter = self.jitter(raw, kind, label);
        let execution = self.execution_for(raw, kind, label, whole.clone());
        // A task in a cluster follows its cluster's rules, not a core's policy.
        let placement = match &raw.cluster {
            Some(cluster) => self.cluster_placement(raw, cluster, kind, whole),
            None => self.core_placement(raw, policy, cores, kind, whole),
        };
        let steps = raw
            .script
            .as_ref()
            .and_then(|s| self.steps(s, "a script needs at least one step"));

        // Commit: every check above has run; put the pieces together.
        let offset = offset?;
        let (behaviour, default_deadline) = match kind? {
            Kind::Periodic => {
                let period = period?;
                let execution = execution?;
                let behaviour = Behaviour::Periodic {
                    period,
                    offset,
                    execution,
                };
                (behaviour, Some(period))
            }
            Kind::Sporadic => {
                let min_interarrival = min_interarrival?;
                let behaviour = Behaviour::Sporadic {
                    min_interarrival,
                    jitter: jitter?,
                    offset,
                    execution: execution?,
                };
                (behaviour, Some(min_interarrival))
            }
            Kind::Script => (
                Behaviour::Script {
                    offset,
                    steps: steps?,
                },
                None,
            ),
        };
        let deadline = match deadline {
            None => default_deadline,
            Some(given) => Some(given?),
        };
        Some(TaskSpec {
            name: name?,
            core: placement.core?,
            priority: placement.priority?,
            reservation: placement.reservation?,
            deadline,
            behaviour,
        })
    }

    /// Where a task with a core (given or the default, 0) runs: the checks of its core's
    /// policy, on a core in no cluster.
    fn core_placement(
        &mut self,
        raw: &RawTask,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
        kind: Option<Kind>,
        whole: Range<usize>,
    ) -> Placement {
        let label = raw.name.get_ref().as_str();
        let mut core = self.core(raw, cores);
        let cluster = core.and_then(|c| self.cluster_with(c));
        if let (Some(on), Some(cluster)) = (core, cluster) {
            let name = self.cluster_name(cluster).to_owned();
            let span = raw
                .core
                .as_ref()
                .map_or_else(|| whole.clone(), |c| c.span());
            self.report(
                span,
                format!("task `{label}` is on core {on}, which cluster `{name}` schedules"),
                format!(
                    "allowed: cluster = \"{name}\" (the task then runs in a reservation of its \
                     own in that cluster), or a core in no cluster"
                ),
            );
            core = None;
        }
        // The task is checked against its core's policy; a cluster's core has none (the
        // error above says so).
        let policy = match core {
            Some(core) => self.policy_of_core(core, policy),
            None => policy,
        }
        .filter(|_| cluster.is_none());
        let priority = self.priority(raw, policy, whole.clone());
        if kind == Some(Kind::Script) && policy == Some(PolicyKind::Edf) && raw.deadline.is_none() {
            self.report(
                whole.clone(),
                format!(
                    "script task `{label}` has no deadline, but edf needs a deadline for every job"
                ),
                "add deadline = ... to this script task, like deadline = \"10ms\"",
            );
        }
        // `Some(None)`: the policy has no reservations; `None`: an error was reported.
        let reservation = match (&raw.reservation, policy) {
            (Some(reservation), _) => self.reservation(reservation, policy).map(Some),
            (None, Some(p)) if p.has_reservations() => {
                self.report(
                    whole,
                    format!(
                        "task `{label}` has no reservation, but {} needs one on every task",
                        p.name()
                    ),
                    "add reservation = { budget = \"2ms\", period = \"10ms\" } (budget <= period)",
                );
                None
            }
            (None, _) => Some(None),
        };
        Placement {
            core,
            priority,
            reservation,
        }
    }

    fn core(&mut self, raw: &RawTask, cores: Option<u16>) -> Option<u16> {
        let Some(core) = &raw.core else {
            return Some(0);
        };
        let n = *core.get_ref();
        let label = raw.name.get_ref();
        let fits = |count: u16| u16::try_from(n).ok().filter(|c| *c < count);
        match cores {
            Some(count) => {
                let found = fits(count);
                if found.is_none() {
                    let last = count - 1;
                    let plural = if count == 1 { "core" } else { "cores" };
                    self.report(
                        core.span(),
                        format!(
                            "task `{label}` is on core {n}, but this scenario has {count} {plural} (0..={last})"
                        ),
                        format!("allowed: core = 0..={last}, or more cores with cores = ..."),
                    );
                }
                found
            }
            // The core count is wrong and already reported; still refuse impossible cores.
            None => {
                let found = fits(MAX_CORES);
                if found.is_none() {
                    self.report(
                        core.span(),
                        format!("core {n} is outside 0..={}", MAX_CORES - 1),
                        format!("allowed: 0..={}", MAX_CORES - 1),
                    );
                }
                found
            }
        }
    }

    /// `Some(priority)` when right for the policy (`Some(None)` under EDF), `None` if wrong.
    fn priority(
        &mut self,
        raw: &RawTask,
        policy: Option<PolicyKind>,
        whole: Range<usize>,
    ) -> Option<Option<Priority>> {
        match (policy, &raw.priority) {
            (Some(p), Some(priority)) if p.has_priorities() => {
                self.priority_value(priority).map(Some)
            }
            (Some(p), None) if p.has_priorities() => {
                self.report(
                    whole,
                    format!("task `{}` has no priority", raw.name.get_ref()),
                    format!(
                        "{} needs one on every task: allowed: priority = 0..=255, larger is more important",
                        p.name()
                    ),
                );
                None
            }
            (Some(p), Some(priority)) => {
                // Named by the task's own policy: edf, cbs, hard-cbs and vbs all order by
                // deadline.
                self.report(
                    priority.span(),
                    format!(
                        "{} orders jobs by deadline: a task's priority is not used",
                        p.name()
                    ),
                    "allowed: remove priority from this task, or use a policy with priorities \
                     (fixed-priority, deferrable-server, sporadic-server, spr, spr-deferrable)",
                );
                None
            }
            (Some(_), None) => Some(None),
            // The policy is wrong and already reported: still check what can be checked.
            (None, Some(priority)) => {
                self.priority_value(priority);
                None
            }
            (None, None) => None,
        }
    }

    pub(super) fn priority_value(&mut self, raw: &Spanned<i64>) -> Option<Priority> {
        super::priority_of(*raw.get_ref())
            .map_err(|message| self.report(raw.span(), message, super::PRIORITY_HELP))
            .ok()
    }

    /// The task's kind, from whichever one of `period`, `min-interarrival` and `script` it has.
    fn kind(&mut self, raw: &RawTask, whole: Range<usize>) -> Option<Kind> {
        let mut given: Vec<(Range<usize>, &str, Kind)> = [
            raw.period
                .as_ref()
                .map(|v| (v.span(), "period", Kind::Periodic)),
            raw.min_interarrival
                .as_ref()
                .map(|v| (v.span(), "min-interarrival", Kind::Sporadic)),
            raw.script
                .as_ref()
                .map(|v| (v.span(), "script", Kind::Script)),
        ]
        .into_iter()
        .flatten()
        .collect();
        given.sort_by_key(|(span, _, _)| span.start);
        let label = raw.name.get_ref();
        match given.as_slice() {
            [] => {
                self.report(whole, format!("task `{label}` has no kind"), KIND_HELP);
                None
            }
            [(_, _, kind)] => Some(*kind),
            [(_, first, _), rest @ ..] => {
                for (span, key, _) in rest {
                    self.report(
                        span.clone(),
                        format!("task `{label}` has both {first} and {key}"),
                        KIND_HELP,
                    );
                }
                None
            }
        }
    }

    /// Jitter: zero unless given, and only sporadic tasks may give it.
    fn jitter(&mut self, raw: &RawTask, kind: Option<Kind>, label: &str) -> Option<Duration> {
        let Some(jitter) = &raw.jitter else {
            return Some(Duration::ZERO);
        };
        match kind {
            Some(Kind::Sporadic) | None => self.time(jitter),
            Some(other) => {
                self.report(
                    jitter.span(),
                    format!(
                        "jitter is only for sporadic tasks, but `{label}` is {}",
                        other.adjective()
                    ),
                    "allowed: jitter only beside min-interarrival",
                );
                None
            }
        }
    }

    /// Execution: required for periodic and sporadic tasks, refused for scripts.
    fn execution_for(
        &mut self,
        raw: &RawTask,
        kind: Option<Kind>,
        label: &str,
        whole: Range<usize>,
    ) -> Option<Execution> {
        match (kind, &raw.execution) {
            (Some(Kind::Script), Some(execution)) => {
                self.report(
                    execution.span(),
                    format!("script task `{label}` cannot have an execution time: its steps say how long it runs"),
                    "allowed: remove execution; use run or compute steps",
                );
                None
            }
            (Some(kind @ (Kind::Periodic | Kind::Sporadic)), None) => {
                self.report(
                    whole,
                    format!("{} task `{label}` has no execution", kind.adjective()),
                    EXECUTION_HELP,
                );
                None
            }
            (_, Some(execution)) => self.execution(execution),
            (_, None) => None,
        }
    }

    pub(super) fn execution(&mut self, raw: &Spanned<RawExecution>) -> Option<Execution> {
        match raw.get_ref() {
            RawExecution::Fixed(time) => {
                let fixed = self.time_at(time, raw.span())?;
                if fixed.is_zero() {
                    self.report(raw.span(), "execution cannot be zero", EXECUTION_HELP);
                    return None;
                }
                Some(Execution::Fixed(fixed))
            }
            RawExecution::Uniform(list) => {
                let times: Vec<Option<Duration>> =
                    list.get_ref().iter().map(|t| self.time(t)).collect();
                let [min, max] = times.as_slice() else {
                    self.report(
                        list.span(),
                        format!(
                            "uniform execution needs two times, [min, max], but has {}",
                            times.len()
                        ),
                        EXECUTION_HELP,
                    );
                    return None;
                };
                let (min, max) = ((*min)?, (*max)?);
                if min > max {
                    self.report(
                        list.span(),
                        format!("uniform execution's min {min} is larger than its max {max}"),
                        "allowed: [min, max] with min <= max",
                    );
                    return None;
                }
                if max.is_zero() {
                    self.report(
                        list.span(),
                        "uniform execution's max cannot be zero",
                        "allowed: a max longer than zero, like [\"0ns\", \"2ms\"]",
                    );
                    return None;
                }
                Some(Execution::Uniform { min, max })
            }
        }
    }

    fn reservation(
        &mut self,
        spanned: &Spanned<RawReservation>,
        policy: Option<PolicyKind>,
    ) -> Option<Reservation> {
        let raw = spanned.get_ref();
        if let Some(named) = &raw.named {
            let help = if named == "best-effort" {
                "\"best-effort\" is for a task in a [[cluster]]; on a core of its own, give a table \
                 like { budget = \"2ms\", period = \"10ms\" }"
            } else {
                "allowed: a table like { budget = \"2ms\", period = \"10ms\" }, or, in a \
                 [[cluster]], \"best-effort\" or the name of a reservation to share"
            };
            self.report(
                spanned.span(),
                format!("reservation `{named}` is a name, but this task runs on a core of its own"),
                help,
            );
            return None;
        }
        // Outside a cluster the rule is the policy's; a cluster-only key must not be ignored.
        let rule_refused = self.cluster_only_keys(raw);
        let (budget, period) =
            if raw.core.is_some() || raw.slots.is_some() || raw.best_effort.is_some() {
                // Refused above as a partition's or a best-effort level's; a missing budget would
                // only repeat that.
                (
                    raw.budget
                        .as_ref()
                        .and_then(|b| self.positive_time(b, "budget")),
                    raw.period
                        .as_ref()
                        .and_then(|p| self.positive_time(p, "period")),
                )
            } else {
                self.budget_and_period(spanned)
            };
        // `None`: not given; `Some(None)`: given but wrong (already reported).
        let replenishments = raw
            .replenishments
            .as_ref()
            .map(|s| self.replenishments(s, policy));
        let non_preemptive = raw
            .non_preemptive
            .as_ref()
            .map(|eta| self.non_preemptive(eta, policy));
        let (Some(budget), Some(period), false) = (budget, period, rule_refused) else {
            return None;
        };
        if budget > period {
            self.report(
                budget_span(spanned),
                format!("budget {budget} is larger than its period {period}"),
                "a reservation's budget must be at most its period",
            );
            return None;
        }
        let policy = policy?;
        if policy.has_reservations() {
            let replenishments =
                replenishments.unwrap_or(Some(Reservation::DEFAULT_REPLENISHMENTS));
            let non_preemptive = non_preemptive.unwrap_or(Some(Duration::ZERO));
            return Some(
                Reservation::new(budget, period)
                    .with_replenishments(replenishments?)
                    .with_non_preemptive(non_preemptive?),
            );
        }
        // A reservation the policy would not enforce must not be silently ignored.
        self.report(
            spanned.span(),
            format!("policy `{}` has no reservation servers", policy.name()),
            format!(
                "reservations need a reservation-server policy ({}); remove reservation or change the policy",
                policies_where(PolicyKind::has_reservations)
            ),
        );
        None
    }

    /// A reservation's `budget` and `period`, each required and longer than zero.
    pub(super) fn budget_and_period(
        &mut self,
        spanned: &Spanned<RawReservation>,
    ) -> (Option<Duration>, Option<Duration>) {
        let raw = spanned.get_ref();
        let mut time = |key: &Option<Spanned<RawTime>>, what: &str, example: &str| match key {
            Some(time) => self.positive_time(time, what),
            None => {
                self.report(
                    spanned.span(),
                    format!("this reservation has no {what}"),
                    format!(
                        "add {what} = {example}: a reservation is a budget and a period, with \
                         0 < budget <= period"
                    ),
                );
                None
            }
        };
        let budget = time(&raw.budget, "budget", "\"2ms\"");
        let period = time(&raw.period, "period", "\"10ms\"");
        (budget, period)
    }

    /// Refuses `name`, `best-effort`, `replenishment`, `criticality`, `low-budget`, `core` and
    /// `slots`, which only a task of a [[cluster]] has a use for; true when one was given.
    fn cluster_only_keys(&mut self, raw: &RawReservation) -> bool {
        let keys = [
            (
                raw.name.as_ref().map(Spanned::span),
                "a reservation's name lets later tasks of its [[cluster]] share it; a task on a \
                 core of its own has its reservation to itself",
                "allowed: name only in the reservation of a task with cluster = ...; remove it",
            ),
            (
                raw.best_effort.as_ref().map(Spanned::span),
                "best-effort is a [[cluster]]'s lowest level, below its reservations; a task on \
                 a core of its own runs by its core's policy",
                "allowed: best-effort only in the reservation of a task with cluster = ...; on \
                 a core of its own, give a table like { budget = \"2ms\", period = \"10ms\" }",
            ),
            (
                raw.replenishment.as_ref().map(Spanned::span),
                "replenishment chooses how the reservation of a task in a [[cluster]] comes \
                 back; on a core in no cluster the core's policy decides",
                "allowed: replenishment only in the reservation of a task with cluster = ...; \
                 remove it, or choose the rule with the core's policy",
            ),
            (
                raw.criticality.as_ref().map(Spanned::span),
                "criticality is a [[cluster]]'s (Vestal's mode switch in the clustered \
                 scheduler); the policies of cores in no cluster have no use for it",
                "allowed: criticality only in the reservation of a task with cluster = ...; \
                 remove it",
            ),
            (
                raw.low_budget.as_ref().map(Spanned::span),
                "low-budget is a high-criticality reservation's in a [[cluster]]; the policies \
                 of cores in no cluster have no use for it",
                "allowed: low-budget only beside criticality = \"high\" in the reservation of \
                 a task with cluster = ...; remove it",
            ),
            (
                raw.core.as_ref().map(Spanned::span),
                "core in a reservation pins a [[cluster]]'s time partition to one of its \
                 cores; the policies of cores in no cluster have no use for it",
                "allowed: core and slots only in the reservation of a task with cluster = ...; \
                 remove it (the task's own core is core = ... beside reservation)",
            ),
            (
                raw.slots.as_ref().map(Spanned::span),
                "slots make a [[cluster]]'s time partition; the policies of cores in no \
                 cluster have no use for them",
                "allowed: core and slots only in the reservation of a task with cluster = ...; \
                 remove slots, or give the reservation a budget and a period",
            ),
        ];
        let mut refused = false;
        for (span, message, help) in keys {
            if let Some(span) = span {
                self.report(span, message, help);
                refused = true;
            }
        }
        refused
    }

    /// `S`, the replenishment-queue capacity: only where the policy keeps such a queue.
    fn replenishments(&mut self, raw: &Spanned<i64>, policy: Option<PolicyKind>) -> Option<u16> {
        if let Some(p) = policy.filter(|p| p.has_reservations() && !p.has_replenishment_queue()) {
            self.report(
                raw.span(),
                format!("policy `{}` keeps no replenishment queue", p.name()),
                format!(
                    "replenishments needs a policy with a replenishment queue ({}); remove replenishments or change the policy",
                    policies_where(PolicyKind::has_replenishment_queue)
                ),
            );
            return None;
        }
        let n = *raw.get_ref();
        let found = u16::try_from(n)
            .ok()
            .filter(|s| (1..=MAX_REPLENISHMENTS).contains(s));
        if found.is_none() {
            self.report(
                raw.span(),
                format!("replenishments {n} is outside 1..={MAX_REPLENISHMENTS}"),
                format!("allowed: 1..={MAX_REPLENISHMENTS} pending replenishments"),
            );
        }
        found
    }

    /// `eta`, the non-preemptive region: only where the policy has such regions.
    fn non_preemptive(
        &mut self,
        raw: &Spanned<RawTime>,
        policy: Option<PolicyKind>,
    ) -> Option<Duration> {
        if let Some(p) = policy.filter(|p| p.has_reservations() && !p.has_non_preemptive_regions())
        {
            self.report(
                raw.span(),
                format!("policy `{}` has no non-preemptive regions", p.name()),
                format!(
                    "non-preemptive needs a policy with non-preemptive regions ({}); remove non-preemptive or change the policy",
                    policies_where(PolicyKind::has_non_preemptive_regions)
                ),
            );
            return None;
        }
        self.time(raw)
    }
}

/// Where a reservation's budget is written, or the whole reservation when it is not.
pub(super) fn budget_span(spanned: &Spanned<RawReservation>) -> Range<usize> {
    spanned
        .get_ref()
        .budget
        .as_ref()
        .map_or_else(|| spanned.span(), Spanned::span)
}

/// The names of the policies for which `allows` holds, in [`PolicyKind::ALL`] order.
fn policies_where(allows: fn(PolicyKind) -> bool) -> String {
    PolicyKind::ALL
        .iter()
        .filter(|(kind, _)| allows(*kind))
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}
