//! Raw file values to the typed model: every check runs and every error is kept, then the
//! model is built.
//!
//! Validate, then commit: each check reads raw values and either yields a typed piece or
//! records an error and yields `None`. Only when no error was recorded are the pieces put
//! together, so a `Scenario` exists only if the whole file is right, and one run reports
//! every problem in it, in file order.

mod script;
mod task;

use std::ops::Range;

use bulwark_core::Duration;
use toml::Spanned;

use crate::diagnostic::{Source, SpecError};
use crate::model::{CostModel, GroupSpec, PolicyKind, Scenario, TaskSpec};
use crate::raw::{RawCost, RawFrequency, RawQuantity, RawScenario, RawTime};
use crate::units::{self, UnitError};

/// Most cores a scenario may have; enough for any machine we simulate, small enough that
/// per-core arrays stay cheap.
const MAX_CORES: u16 = 1024;

/// Checks a whole file; on failure, the errors sorted into file order.
pub(crate) fn validate(raw: &RawScenario, source: &Source) -> Result<Scenario, Vec<SpecError>> {
    let mut checker = Checker {
        source,
        errors: Vec::new(),
        current_task: 0,
        terminations: Vec::new(),
    };
    let scenario = checker.scenario(raw);
    let mut errors = checker.errors;
    match scenario {
        Some(scenario) if errors.is_empty() => Ok(scenario),
        _ => {
            if errors.is_empty() {
                // Every check that yields `None` records why; this is a guard, not a path.
                errors.push(source.error(
                    0..0,
                    "internal error: a check failed without saying why",
                    "please report this file to the Bulwark developers",
                ));
            }
            // Stable, so errors at the same place keep the order they were found in.
            errors.sort_by_key(|e| e.span().map_or(0, |s| s.start));
            Err(errors)
        }
    }
}

/// Collects errors while the checks run; each check yields `None` after reporting.
struct Checker<'a> {
    source: &'a Source,
    errors: Vec<SpecError>,
    /// The index of the task whose table is being checked.
    current_task: usize,
    /// Every `terminate` step seen, checked once all tasks are known.
    terminations: Vec<Termination>,
}

/// A `terminate` step, as written.
struct Termination {
    caller: usize,
    target: String,
    span: Range<usize>,
    step: Option<Range<usize>>,
}

impl Checker<'_> {
    fn report(&mut self, span: Range<usize>, message: impl Into<String>, help: impl Into<String>) {
        let error = self.source.error(span, message, help);
        self.errors.push(error);
    }

    fn scenario(&mut self, raw: &RawScenario) -> Option<Scenario> {
        let name = self.name(&raw.name, "the scenario name");
        let description = raw
            .description
            .as_ref()
            .map_or_else(String::new, |d| d.get_ref().clone());
        let seed = match &raw.seed {
            None => Some(0),
            Some(seed) => self.non_negative(seed, "seed", "allowed: a whole number from 0 up"),
        };
        let cores = self.cores(raw.cores.as_ref());
        let policy = self.policy(&raw.policy);
        let duration = self.positive_time(&raw.duration, "duration");
        let cost = match &raw.cost {
            None => Some(CostModel::default()),
            Some(cost) => self.cost(cost.get_ref()),
        };
        let tasks = self.tasks(&raw.task, policy, cores);
        let groups = self.groups(raw, cost.as_ref());
        if let (Some(tasks), Some(groups)) = (&tasks, &groups) {
            self.terminations(tasks, groups);
        }
        Some(Scenario {
            name: name?,
            description,
            seed: seed?,
            duration: duration?,
            cores: cores?,
            policy: policy?,
            cost: cost?,
            tasks: tasks?,
            groups: groups?,
        })
    }

    /// `[[group]]` tables and the tasks' `group` keys.
    fn groups(&mut self, raw: &RawScenario, cost: Option<&CostModel>) -> Option<Vec<GroupSpec>> {
        let mut groups: Vec<GroupSpec> = Vec::new();
        let mut all_valid = true;
        for group in &raw.group {
            let g = group.get_ref();
            let name = self.name(&g.name, "a group name");
            if groups
                .iter()
                .any(|other| Some(&other.name) == name.as_ref())
            {
                self.report(
                    g.name.span(),
                    format!("group name `{}` is already used", g.name.get_ref()),
                    "allowed: a name no other group in this scenario has",
                );
                all_valid = false;
            }
            let quota = self.positive_time(&g.quota, "quota");
            match (name, quota) {
                (Some(name), Some(quota)) => groups.push(GroupSpec {
                    name,
                    quota,
                    members: Vec::new(),
                }),
                _ => all_valid = false,
            }
        }
        if let (Some(first), Some(cost)) = (raw.group.first(), cost) {
            if cost.reclaim_per_unit == 0 {
                self.report(
                    first.get_ref().quota.span(),
                    "a quota of reclamation time needs the cost of a unit of reclamation work",
                    "add reclaim-per-unit = ... (cycles, above zero) to [cost]",
                );
                all_valid = false;
            }
        }
        for (index, task) in raw.task.iter().enumerate() {
            let Some(group) = &task.get_ref().group else {
                continue;
            };
            match groups.iter_mut().find(|g| &g.name == group.get_ref()) {
                Some(g) => g.members.push(index),
                None => {
                    let names: Vec<&str> = raw
                        .group
                        .iter()
                        .map(|g| g.get_ref().name.get_ref().as_str())
                        .collect();
                    self.report(
                        group.span(),
                        format!("no [[group]] is called `{}`", group.get_ref()),
                        if names.is_empty() {
                            "add a [[group]] table with this name and a quota".to_owned()
                        } else {
                            format!("allowed: {}", names.join(", "))
                        },
                    );
                    all_valid = false;
                }
            }
        }
        all_valid.then_some(groups)
    }

    /// Each `terminate` names another task on the caller's core, outside the caller's group;
    /// reclamation in steps needs the target in a group.
    fn terminations(&mut self, tasks: &[TaskSpec], groups: &[GroupSpec]) {
        let group_of = |task: usize| groups.iter().position(|g| g.members.contains(&task));
        for t in std::mem::take(&mut self.terminations) {
            let Some(target) = tasks.iter().position(|s| s.name == t.target) else {
                self.report(
                    t.span,
                    format!("no task is called `{}`", t.target),
                    "allowed: the name of another task in this scenario",
                );
                continue;
            };
            let caller = &tasks[t.caller];
            if target == t.caller {
                self.report(
                    t.span,
                    format!("task `{}` terminates itself", caller.name),
                    "allowed: another task; to end this one, end its script",
                );
            } else if tasks[target].core != caller.core {
                self.report(
                    t.span,
                    format!(
                        "task `{}` is on core {}, but `{}` runs on core {}",
                        t.target, tasks[target].core, caller.name, caller.core
                    ),
                    "allowed: a task on the caller's core (reclamation runs on the caller's core)",
                );
            } else if group_of(target).is_some() && group_of(target) == group_of(t.caller) {
                self.report(
                    t.span,
                    format!(
                        "`{}` would terminate its own group with `{}`",
                        caller.name, t.target
                    ),
                    "allowed: a task outside the caller's reclamation group",
                );
            } else if let (Some(step), None) = (t.step, group_of(target)) {
                self.report(
                    step,
                    format!("`{}` is in no reclamation group, so it is reclaimed one object at a time, in one go", t.target),
                    "allowed: step only for a task in a [[group]]; remove step or add the task to a group",
                );
            }
        }
    }

    fn name(&mut self, raw: &Spanned<String>, what: &str) -> Option<String> {
        if raw.get_ref().trim().is_empty() {
            self.report(
                raw.span(),
                format!("{what} is empty"),
                "allowed: any name with at least one visible character, like \"tau1\"",
            );
            return None;
        }
        Some(raw.get_ref().clone())
    }

    fn cores(&mut self, raw: Option<&Spanned<i64>>) -> Option<u16> {
        let Some(raw) = raw else { return Some(1) };
        let n = *raw.get_ref();
        match u16::try_from(n) {
            Ok(cores) if (1..=MAX_CORES).contains(&cores) => Some(cores),
            _ => {
                self.report(
                    raw.span(),
                    format!("cores {n} is outside 1..={MAX_CORES}"),
                    format!("allowed: 1..={MAX_CORES} cores"),
                );
                None
            }
        }
    }

    fn policy(&mut self, raw: &Spanned<String>) -> Option<PolicyKind> {
        let found = PolicyKind::ALL
            .iter()
            .find(|(_, name)| name == raw.get_ref())
            .map(|(kind, _)| *kind);
        if found.is_none() {
            self.report(
                raw.span(),
                format!("unknown policy `{}`", raw.get_ref()),
                format!("allowed: {}", policy_names()),
            );
        }
        found
    }

    fn cost(&mut self, raw: &RawCost) -> Option<CostModel> {
        let defaults = CostModel::default();
        let clock_hz = match &raw.clock {
            None => Some(defaults.clock_hz),
            Some(clock) => self.clock(clock),
        };
        let mut cycles = |field: &Option<Spanned<i64>>, what: &str| match field {
            None => Some(0),
            Some(value) => self.non_negative(value, what, "allowed: 0 or more cycles"),
        };
        let timer_interrupt = cycles(&raw.timer_interrupt, "timer-interrupt");
        let scheduler = cycles(&raw.scheduler, "scheduler");
        let per_work_unit = cycles(&raw.per_work_unit, "per-work-unit");
        let context_switch = cycles(&raw.context_switch, "context-switch");
        let cache_refill = cycles(&raw.cache_refill, "cache-refill");
        let cache_flush = cycles(&raw.cache_flush, "cache-flush");
        let reclaim_per_unit = cycles(&raw.reclaim_per_unit, "reclaim-per-unit");
        Some(CostModel {
            clock_hz: clock_hz?,
            timer_interrupt: timer_interrupt?,
            scheduler: scheduler?,
            per_work_unit: per_work_unit?,
            context_switch: context_switch?,
            cache_refill: cache_refill?,
            cache_flush: cache_flush?,
            reclaim_per_unit: reclaim_per_unit?,
        })
    }

    fn clock(&mut self, raw: &Spanned<RawFrequency>) -> Option<u64> {
        let result = match &raw.get_ref().0 {
            RawQuantity::Text(text) => units::parse_frequency(text),
            RawQuantity::Integer(n) => Err(units::frequency_without_unit(&n.to_string())),
            RawQuantity::Float(x) => Err(bare_float(*x, units::frequency_without_unit, || {
                units::frequency_help()
            })),
        };
        match result {
            Ok(0) => {
                self.report(
                    raw.span(),
                    "clock cannot be zero",
                    "allowed: a frequency above zero, like \"1GHz\"",
                );
                None
            }
            Ok(hz) => Some(hz),
            Err(e) => {
                self.report(raw.span(), e.message, e.help);
                None
            }
        }
    }

    fn non_negative(&mut self, raw: &Spanned<i64>, what: &str, help: &str) -> Option<u64> {
        let n = *raw.get_ref();
        let value = u64::try_from(n).ok();
        if value.is_none() {
            self.report(raw.span(), format!("{what} {n} is negative"), help);
        }
        value
    }

    fn time(&mut self, raw: &Spanned<RawTime>) -> Option<Duration> {
        self.time_at(raw.get_ref(), raw.span())
    }

    fn time_at(&mut self, raw: &RawTime, span: Range<usize>) -> Option<Duration> {
        let result = match &raw.0 {
            RawQuantity::Text(text) => units::parse_time(text),
            RawQuantity::Integer(n) => Err(units::time_without_unit(&n.to_string())),
            RawQuantity::Float(x) => {
                Err(bare_float(*x, units::time_without_unit, units::time_help))
            }
        };
        match result {
            Ok(time) => Some(time),
            Err(e) => {
                self.report(span, e.message, e.help);
                None
            }
        }
    }

    fn positive_time(&mut self, raw: &Spanned<RawTime>, what: &str) -> Option<Duration> {
        let time = self.time(raw)?;
        if time.is_zero() {
            self.report(
                raw.span(),
                format!("{what} cannot be zero"),
                "allowed: a time longer than zero, like \"5ms\"",
            );
            return None;
        }
        Some(time)
    }
}

/// The error for a bare float such as `2.5`: "has no unit", unless it is not a number at all.
fn bare_float(x: f64, without_unit: fn(&str) -> UnitError, help: fn() -> String) -> UnitError {
    if x.is_finite() {
        without_unit(&x.to_string())
    } else {
        UnitError {
            message: format!("{x} is not a number"),
            help: help(),
        }
    }
}

/// The policy names a file may use, from [`PolicyKind::ALL`].
fn policy_names() -> String {
    PolicyKind::ALL
        .iter()
        .map(|(_, name)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}
