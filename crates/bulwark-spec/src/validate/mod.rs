//! Raw file values to the typed model: every check runs and every error is kept, then the
//! model is built.
//!
//! Validate, then commit: each check reads raw values and either yields a typed piece or
//! records an error and yields `None`. Only when no error was recorded are the pieces put
//! together, so a `Scenario` exists only if the whole file is right, and one run reports
//! every problem in it, in file order.

mod cluster;
mod components;
pub(crate) mod cost;
pub(crate) mod script;
mod server;
mod task;
mod warnings;

use std::collections::HashMap;
use std::ops::Range;

use bulwark_core::{Duration, Priority};
use toml::Spanned;

use crate::diagnostic::{names_help, Source, SpecError};
use crate::model::{
    CostModel, GroupSpec, PolicyKind, ReleaseStrategy, Scenario, TaskSpec, VbsPlugin, VbsSpec,
};
use crate::raw::{RawCost, RawQuantity, RawScenario, RawTime};
use crate::units::{self, UnitError};

/// Most cores a scenario may have; enough for any machine we simulate, small enough that
/// per-core arrays stay cheap.
const MAX_CORES: u16 = 1024;

/// Checks a whole file; on failure, the errors sorted into file order.
/// The scenario with its warnings (see [`warnings`]), or every error.
pub(crate) fn validate(
    raw: &RawScenario,
    source: &Source,
) -> Result<(Scenario, Vec<SpecError>), Vec<SpecError>> {
    let mut checker = Checker {
        source,
        errors: Vec::new(),
        current_task: 0,
        terminations: Vec::new(),
        actions: Vec::new(),
        core_policies: Vec::new(),
        unknown_policy_cores: Vec::new(),
        server_names: Vec::new(),
        server_inherits: Vec::new(),
        server_mc_ipc: Vec::new(),
        server_one_run: Vec::new(),
        server_priorities: Vec::new(),
        invocations: Vec::new(),
        clusters: Vec::new(),
        cluster_members: Vec::new(),
        reservation_names: HashMap::new(),
    };
    let scenario = checker.scenario(raw);
    let scenario = source.finish(scenario, checker.errors)?;
    let warnings = warnings::warnings(raw, &scenario, source);
    Ok((scenario, warnings))
}

/// Collects errors while the checks run; each check yields `None` after reporting.
struct Checker<'a> {
    source: &'a Source,
    errors: Vec<SpecError>,
    /// The index of the task whose table is being checked.
    current_task: usize,
    /// Every `terminate` step seen, checked once all tasks are known.
    terminations: Vec<Termination>,
    /// Every `action` step seen, checked against its task's cap and the `[vbs]` time.
    actions: Vec<ActionRef>,
    /// The `[[core]]` policies, known before the tasks are checked against their core's.
    core_policies: Vec<(u16, PolicyKind)>,
    /// Cores whose `[[core]]` table names an unknown policy (reported): their tasks are not
    /// checked against any policy, rather than against the scenario's.
    unknown_policy_cores: Vec<u16>,
    /// Every `[[server]]` name, in file order, known before the tasks' `invoke` steps.
    server_names: Vec<String>,
    /// Whether each `[[server]]` inherits bandwidth, in file order.
    server_inherits: Vec<bool>,
    /// Whether each `[[server]]` has an `mc-ipc` gate, in file order.
    server_mc_ipc: Vec<bool>,
    /// Per server: its body is one run (`operation = ...`), so a call may ask for another.
    server_one_run: Vec<bool>,
    /// Each `[[server]]`'s priority as written, with where, in file order.
    server_priorities: Vec<Option<(i64, Range<usize>)>>,
    /// Every `invoke` step seen, checked once all tasks are known.
    invocations: Vec<server::Invocation>,
    /// The `[[cluster]]` tables, known before the tasks are checked against them.
    clusters: Vec<cluster::KnownCluster>,
    /// Each task checked into a cluster, in task order.
    cluster_members: Vec<cluster::Member>,
    /// Each named cluster reservation: its name, and its owner's index in `cluster_members`
    /// (so a sharer finds it in constant time: validation stays linear).
    reservation_names: HashMap<String, usize>,
}

/// An `action` step, as written.
struct ActionRef {
    task: usize,
    limit: Duration,
    period: Duration,
    span: Range<usize>,
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
        let core_policies = self.core_policies(raw, cores);
        let mut clusters = self.clusters(raw, cores);
        let duration = self.positive_time(&raw.duration, "duration");
        let cost = match &raw.cost {
            None => Some(CostModel::default()),
            Some(cost) => self.cost(cost.get_ref(), !raw.component.is_empty()),
        };
        let mut servers = self.servers(raw);
        let tasks = self.tasks(&raw.task, policy, cores, !raw.component.is_empty());
        let task_policies = self.task_policies(raw, policy, cores);
        if let Some(tasks) = &tasks {
            self.server_clients(tasks, &task_policies, servers.as_mut());
        }
        let groups = self.groups(raw, cost.as_ref());
        let vbs = self.vbs(raw, policy, &task_policies);
        if let (Some(tasks), Some(groups)) = (&tasks, &groups) {
            self.terminations(tasks, groups);
        }
        self.cluster_cycles(raw);
        if let Some(clusters) = clusters.as_mut() {
            self.add_members(clusters);
        }
        let components = self.component_parts(raw, policy, cores, cost.as_ref());
        Some(Scenario {
            name: name?,
            description,
            seed: seed?,
            duration: duration?,
            cores: cores?,
            policy: policy?,
            core_policies: core_policies?,
            clusters: clusters?,
            cost: cost?,
            tasks: tasks?,
            groups: groups?,
            servers: servers?,
            vbs: vbs?,
            cpis: Vec::new(),
            components: components?,
        })
    }

    /// The policy of each task's core, by task index: `None` where the core or the policy is
    /// wrong (already reported), and for a task in a cluster or on a cluster's core (which
    /// follow their cluster's rules, or are wrong).
    fn task_policies(
        &self,
        raw: &RawScenario,
        policy: Option<PolicyKind>,
        cores: Option<u16>,
    ) -> Vec<Option<PolicyKind>> {
        raw.task
            .iter()
            .map(|task| {
                if task.get_ref().cluster.is_some() {
                    return None;
                }
                let core = task.get_ref().core.as_ref().map_or(0, |c| *c.get_ref());
                let core = u16::try_from(core)
                    .ok()
                    .filter(|&c| cores.is_some_and(|n| c < n))
                    .filter(|&c| self.cluster_with(c).is_none())?;
                self.policy_of_core(core, policy)
            })
            .collect()
    }

    /// The policy `core` runs: its `[[core]]` table's, else the scenario's `policy`; `None`
    /// when its table names an unknown policy (already reported).
    fn policy_of_core(&self, core: u16, policy: Option<PolicyKind>) -> Option<PolicyKind> {
        if self.unknown_policy_cores.contains(&core) {
            return None;
        }
        self.core_policies
            .iter()
            .find(|(on, _)| *on == core)
            .map(|(_, p)| *p)
            .or(policy)
    }

    /// `[vbs]`, every task's `cap` and every `action` step: `Some(None)` when no core runs
    /// vbs. `task_policies` is the policy of each task's core: caps and actions belong to the
    /// tasks of vbs cores only, and the `[vbs]` table configures every vbs core.
    fn vbs(
        &mut self,
        raw: &RawScenario,
        policy: Option<PolicyKind>,
        task_policies: &[Option<PolicyKind>],
    ) -> Option<Option<VbsSpec>> {
        let is_vbs = |i: usize| task_policies.get(i).copied().flatten() == Some(PolicyKind::Vbs);
        let any_vbs = (0..raw.task.len()).any(is_vbs)
            || self
                .core_policies
                .iter()
                .any(|(_, p)| *p == PolicyKind::Vbs);
        let mut valid = true;
        for (i, task) in raw.task.iter().enumerate() {
            let (Some(cap), Some(other)) = (&task.get_ref().cap, task_policies[i]) else {
                continue;
            };
            if other != PolicyKind::Vbs {
                self.report(
                    cap.span(),
                    format!(
                        "a bandwidth cap is for vbs processes, but this task's core runs {}",
                        other.name()
                    ),
                    "allowed: cap on tasks of a core whose policy is vbs; remove cap, or put \
                     the task on a vbs core",
                );
                valid = false;
            }
        }
        let (vbs_actions, other_actions): (Vec<ActionRef>, Vec<ActionRef>) =
            std::mem::take(&mut self.actions)
                .into_iter()
                .partition(|a| is_vbs(a.task));
        for action in other_actions {
            if task_policies[action.task].is_some() {
                self.report(
                    action.span,
                    "an action step is for vbs processes, but this task's core runs another \
                     policy",
                    "allowed: action steps on tasks of a vbs core; use run steps here",
                );
                valid = false;
            }
        }
        if !any_vbs {
            if let Some(table) = &raw.vbs {
                // Unless the policy is wrong (reported already).
                if policy.is_some() {
                    self.report(
                        table.span(),
                        "a [vbs] table configures the vbs policy, but no core of this scenario \
                         runs it",
                        "set policy = \"vbs\" (or a [[core]] policy), or remove the [vbs] table",
                    );
                    valid = false;
                }
            }
            return valid.then_some(None);
        }
        self.actions = vbs_actions;
        let config = raw.vbs.as_ref().map(|t| t.get_ref());
        let strategy = match config.and_then(|c| c.strategy.as_ref()) {
            None => Some(ReleaseStrategy::Early),
            Some(s) => match s.get_ref().as_str() {
                "early" => Some(ReleaseStrategy::Early),
                "late" => Some(ReleaseStrategy::Late),
                other => {
                    self.report(
                        s.span(),
                        format!("unknown release strategy `{other}`"),
                        "allowed: early, late",
                    );
                    None
                }
            },
        };
        let plugin = match config.and_then(|c| c.plugin.as_ref()) {
            None => Some(VbsPlugin::Tree),
            Some(p) => match p.get_ref().as_str() {
                "list" => Some(VbsPlugin::List),
                "array" => Some(VbsPlugin::Array),
                "matrix" => Some(VbsPlugin::Matrix),
                "tree" => Some(VbsPlugin::Tree),
                other => {
                    self.report(
                        p.span(),
                        format!("unknown queue plugin `{other}`"),
                        "allowed: list, array, matrix, tree",
                    );
                    None
                }
            },
        };
        let quantum = match config.and_then(|c| c.quantum.as_ref()) {
            None => Some(Duration::from_micros(1)),
            Some(q) => self.positive_time(q, "quantum"),
        };
        let bits = match config.and_then(|c| c.resolution_bits.as_ref()) {
            None => Some(14),
            Some(b) => {
                let n = *b.get_ref();
                match u32::try_from(n) {
                    Ok(bits) if (4..=30).contains(&bits) => Some(bits),
                    _ => {
                        self.report(
                            b.span(),
                            format!("resolution-bits {n} is outside 4..=30"),
                            "allowed: 4..=30 (the scheduler tells 2^bits instants apart)",
                        );
                        None
                    }
                }
            }
        };
        if let (Some(VbsPlugin::Matrix), Some(bits), Some(p)) =
            (plugin, bits, config.and_then(|c| c.plugin.as_ref()))
        {
            if bits > 12 {
                self.report(
                    p.span(),
                    format!("the matrix plugin needs 2^{bits} x 2^{bits} queues at resolution-bits = {bits}"),
                    "allowed: matrix with resolution-bits <= 12, or plugin = \"tree\" (the same O(1) time in far less memory)",
                );
                valid = false;
            }
        }
        let mut caps = Vec::with_capacity(raw.task.len());
        for (i, task) in raw.task.iter().enumerate() {
            if !is_vbs(i) {
                // Tasks of other cores have no cap (checked above).
                caps.push(None);
                continue;
            }
            let t = task.get_ref();
            let cap = match &t.cap {
                None => {
                    self.report(
                        t.name.span(),
                        format!(
                            "task `{}` has no cap, but vbs needs one on every process",
                            t.name.get_ref()
                        ),
                        "add cap = \"1/2\" (its bandwidth cap, a fraction at most 1)",
                    );
                    None
                }
                Some(cap) => self.cap(cap),
            };
            let starts_with_action = t
                .script
                .as_ref()
                .is_some_and(|s| starts_with_action(s.get_ref()));
            if let (Some(script), false) = (&t.script, starts_with_action) {
                self.report(
                    script.span(),
                    format!(
                        "the script of `{}` does not start with an action",
                        t.name.get_ref()
                    ),
                    "allowed: a vbs process starts with its first action at time 0, like \
                     script = [{ action = \"5ms\", limit = \"2ms\", period = \"4ms\" }, ...]",
                );
                valid = false;
            }
            if let Some(offset) = &t.offset {
                self.report(
                    offset.span(),
                    "a vbs process starts with its first action at time 0",
                    "allowed: no offset; to arrive later, start with a short action and sleep",
                );
                valid = false;
            }
            if t.script.is_none() {
                self.report(
                    t.name.span(),
                    format!(
                        "task `{}` is not a script, but a vbs process runs a script of actions",
                        t.name.get_ref()
                    ),
                    "write script = [{ action = \"5ms\", limit = \"2ms\", period = \"4ms\" }, ...]",
                );
                valid = false;
            }
            // Pushed even when wrong, so that caps stay aligned with task indices.
            valid &= cap.is_some();
            caps.push(cap);
        }
        let (Some(strategy), Some(plugin), Some(quantum), Some(bits)) =
            (strategy, plugin, quantum, bits)
        else {
            return None;
        };
        let longest = quantum.as_nanos().saturating_mul((1u64 << bits) / 4);
        for a in std::mem::take(&mut self.actions) {
            let q = quantum.as_nanos();
            if a.limit.as_nanos() % q != 0 || a.period.as_nanos() % q != 0 {
                self.report(
                    a.span.clone(),
                    format!("limit and period must be whole quanta of {quantum}"),
                    "allowed: multiples of [vbs] quantum; change them or the quantum",
                );
                valid = false;
            } else if a.period.as_nanos() > longest {
                self.report(
                    a.span.clone(),
                    format!(
                        "period {} is longer than a quarter of the scheduler's horizon ({})",
                        a.period,
                        Duration::from_nanos(longest)
                    ),
                    "allowed: a shorter period, a longer [vbs] quantum or more resolution-bits",
                );
                valid = false;
            }
            if let Some(&Some((n, d))) = caps.get(a.task) {
                // limit / period <= n / d, exactly.
                if a.limit.as_nanos() as u128 * d as u128 > n as u128 * a.period.as_nanos() as u128
                {
                    self.report(
                        a.span,
                        format!(
                            "the resource {} per {} exceeds the process's cap {n}/{d}",
                            a.limit, a.period
                        ),
                        "allowed: limit / period at most the task's cap",
                    );
                    valid = false;
                }
            }
        }
        valid.then_some(Some(VbsSpec {
            strategy,
            plugin,
            quantum,
            resolution_bits: bits,
            caps,
        }))
    }

    /// `cap = "n/d"` with `0 < n <= d`.
    fn cap(&mut self, raw: &Spanned<String>) -> Option<(u64, u64)> {
        let parsed = raw.get_ref().split_once('/').and_then(|(n, d)| {
            let n: u64 = n.trim().parse().ok()?;
            let d: u64 = d.trim().parse().ok()?;
            (n > 0 && n <= d).then_some((n, d))
        });
        if parsed.is_none() {
            self.report(
                raw.span(),
                format!("cap `{}` is not a fraction between 0 and 1", raw.get_ref()),
                "allowed: \"n/d\" with whole numbers 0 < n <= d, like \"1/2\" or \"3/10\"",
            );
        }
        parsed
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
            let written = raw
                .group
                .iter()
                .any(|g| g.get_ref().name.get_ref() == group.get_ref());
            match groups.iter_mut().find(|g| &g.name == group.get_ref()) {
                Some(g) => g.members.push(index),
                // Its table is wrong, and reported there.
                None if written => all_valid = false,
                None => {
                    let names = (raw.group.iter()).map(|g| g.get_ref().name.get_ref().as_str());
                    self.report(
                        group.span(),
                        format!("no [[group]] is called `{}`", group.get_ref()),
                        names_help(names, "add a [[group]] table with this name and a quota"),
                    );
                    all_valid = false;
                }
            }
        }
        all_valid.then_some(groups)
    }

    /// Each `terminate` names another task where the caller runs (its core, or its cluster:
    /// reclamation runs on the caller's core), outside the caller's group; reclamation in
    /// steps needs the target in a group.
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
            // A member's core is its cluster's first core, which no other task has.
            let place = |task: usize| match self.cluster_of(task) {
                Some(cluster) => format!("in cluster `{}`", self.cluster_name(cluster)),
                None => format!("on core {}", tasks[task].core),
            };
            if target == t.caller {
                self.report(
                    t.span,
                    format!("task `{}` terminates itself", caller.name),
                    "allowed: another task; to end this one, end its script",
                );
            } else if tasks[target].core != caller.core {
                let (target_place, caller_place) = (place(target), place(t.caller));
                self.report(
                    t.span,
                    format!(
                        "task `{}` is {target_place}, but `{}` runs {caller_place}",
                        t.target, caller.name
                    ),
                    "allowed: a task on the caller's core, or in the caller's cluster \
                     (reclamation runs on the caller's core)",
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
        if let Some(error) = self.source.long_name(raw.span(), raw.get_ref(), what) {
            self.errors.push(error);
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

    /// `[[core]]` tables: each names a core of the scenario once and its policy (vbs cores
    /// share the one `[vbs]` table); sorted by core.
    fn core_policies(
        &mut self,
        raw: &RawScenario,
        cores: Option<u16>,
    ) -> Option<Vec<(u16, PolicyKind)>> {
        let mut found: Vec<(u16, PolicyKind)> = Vec::new();
        let mut all_valid = true;
        for table in &raw.core {
            let table = table.get_ref();
            let id = *table.id.get_ref();
            let core = match (u16::try_from(id), cores) {
                (Ok(core), Some(cores)) if core < cores => Some(core),
                (_, Some(cores)) => {
                    self.report(
                        table.id.span(),
                        format!("core {id} is not a core of this scenario"),
                        format!("allowed: 0..={} (cores = {cores})", cores - 1),
                    );
                    None
                }
                // `cores` is wrong and already reported: a table of a possible core still
                // says how that core's tasks are checked (not by the scenario's policy).
                (Ok(core), None) if core < MAX_CORES => Some(core),
                (_, None) => None,
            };
            let kind = self.policy(&table.policy);
            match (core, kind) {
                (Some(core), Some(_)) if found.iter().any(|(c, _)| *c == core) => {
                    self.report(
                        table.id.span(),
                        format!("core {core} has a [[core]] table already"),
                        "allowed: one [[core]] table per core",
                    );
                    all_valid = false;
                }
                (Some(core), Some(kind)) => found.push((core, kind)),
                (Some(core), None) => {
                    self.unknown_policy_cores.push(core);
                    all_valid = false;
                }
                _ => all_valid = false,
            }
        }
        found.sort_unstable_by_key(|(core, _)| *core);
        // The tasks are checked against the valid tables even when others are wrong.
        self.core_policies = found.clone();
        all_valid.then_some(found)
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

    /// The `[cost]` table; `[cost.ipc]` only `with_components` (`[[component]]` tables).
    fn cost(&mut self, raw: &RawCost, with_components: bool) -> Option<CostModel> {
        let text = self.source.text();
        let charged = if with_components {
            &cost::SCENARIO_WITH_COMPONENTS
        } else {
            &cost::SCENARIO
        };
        cost::cost_model(raw, charged, text, &mut |span, message, help| {
            self.report(span, message, help)
        })
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
        time_of(raw)
            .map_err(|e| self.report(span, e.message, e.help))
            .ok()
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

/// True when the first step a script runs is an action (perhaps the first of a loop's body).
fn starts_with_action(steps: &[Spanned<crate::raw::RawStep>]) -> bool {
    match steps.first().map(|s| s.get_ref()) {
        Some(step) if step.action.is_some() => true,
        Some(step) if step.repeat.is_some() => step
            .body
            .as_ref()
            .is_some_and(|body| starts_with_action(body.get_ref())),
        _ => false,
    }
}

/// The help of every priority out of range.
pub(crate) const PRIORITY_HELP: &str = "allowed: 0..=255, larger is more important";

/// A priority as a file writes it (an integer of any width the reader has), or the error for
/// one outside 0..=255.
pub(crate) fn priority_of<N>(n: N) -> Result<Priority, String>
where
    N: Copy + std::fmt::Display,
    u8: TryFrom<N>,
{
    u8::try_from(n)
        .map(Priority)
        .map_err(|_| format!("priority {n} is outside 0..=255"))
}

/// A time as a file writes it: a number with its unit, not a bare number.
pub(crate) fn time_of(raw: &RawTime) -> Result<Duration, UnitError> {
    match &raw.0 {
        RawQuantity::Text(text) => units::parse_time(text),
        RawQuantity::Integer(n) => Err(units::time_without_unit(&n.to_string())),
        RawQuantity::Float(x) => Err(bare_float(*x, units::time_without_unit, units::time_help)),
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
