//! `[[cluster]]` checks: a unique name, distinct cores of the scenario that no other cluster
//! and no `[[core]]` table has, an order and, exactly when a member is a time partition, a
//! cycle; and the tasks that run in a cluster (`cluster = "name"`), each in a reservation of
//! its own or sharing the one an earlier member named (`reservation = "R4"`): a sporadic
//! one, replenished by the sporadic rule, a constant-bandwidth server (EDF order) or an SPR
//! server (fixed-priority order), of low or (sporadic rule only) high criticality; a time
//! partition on one of the cluster's cores; or the best-effort level, with no budget
//! (`"best-effort"`, or `{ name = "bg", best-effort = true }` for later members to share it).
//! Such a task follows its cluster's rules, not the policy of a core. Every rule
//! `ClusteredScheduler::new` enforces is checked here, so that a valid file is never refused
//! by the scheduler.

use std::ops::Range;

use bulwark_core::reservation::clustered::{MAX_RESERVATIONS, MAX_SPR_SLOTS};
use bulwark_core::{Duration, Priority};
use toml::Spanned;

use super::task::{Kind, Placement};
use super::{Checker, MAX_CORES};
use crate::diagnostic::names_help;
use crate::model::{
    ClusterMember, ClusterSpec, MemberKind, Replenishment, Reservation, SporadicOrder,
};
use crate::raw::{
    RawCluster, RawClusterCores, RawReservation, RawScenario, RawSlots, RawStep, RawTask,
};

const ORDER_HELP: &str = "allowed: fixed-priority (the tasks' priorities, larger is more \
                          important) or edf (earliest deadline first)";
const CORES_HELP: &str = "allowed: cores = [0, 1] (distinct core ids, each in no other cluster)";
const CRITICALITY_HELP: &str = "allowed: low (the default) or high (Vestal's model: budget is \
                                e^H and low-budget e^L, 0 < low-budget <= budget)";
const PARTITION_HELP: &str = "allowed in a time partition's reservation: core (one of its \
                              cluster's cores) and slots; a sporadic reservation has budget \
                              and period instead";
const BEST_EFFORT_HELP: &str = "allowed beside best-effort = true: name (for later members of \
                                the cluster to share it); remove this key, or remove \
                                best-effort for a reservation with a budget and a period";
const REPLENISHMENT_HELP: &str = "allowed: sporadic (the MC-IPC paper's section III rule, the \
                                  default), cbs (a constant-bandwidth server, order = \"edf\" \
                                  only) or spr (an SPR sporadic server, order = \
                                  \"fixed-priority\" only)";

/// A `[[cluster]]` table as far as it is right, known before the tasks are checked.
pub(super) struct KnownCluster {
    /// As written, so that tasks find it even when the name itself is wrong.
    name: String,
    /// Its valid cores, in file order.
    cores: Vec<u16>,
    /// Every core it lists is valid: else a task's core missing from `cores` may be the one
    /// written wrong (already reported), and is not reported again.
    cores_complete: bool,
    /// `None`: wrong, already reported.
    order: Option<SporadicOrder>,
    /// `H`; `None`: not given, or wrong (already reported).
    cycle: Option<Duration>,
    /// The tasks placed in it so far, counted as they come so that the check against
    /// `MAX_RESERVATIONS` costs nothing per task.
    members: usize,
}

/// A slot `[start, end)` and where it is written.
type WrittenSlot = ((Duration, Duration), Range<usize>);

/// A cluster task's place: the task (by index and name), its cluster (by index) and its
/// reservation.
pub(super) struct Member {
    pub(super) task: usize,
    name: String,
    cluster: usize,
    kind: MemberKind,
    /// The name its reservation table gives, by which later members share it.
    reservation_name: Option<String>,
}

impl Checker<'_> {
    /// `[[cluster]]` tables, without their members (added once the tasks are checked).
    pub(super) fn clusters(
        &mut self,
        raw: &RawScenario,
        cores: Option<u16>,
    ) -> Option<Vec<ClusterSpec>> {
        let mut clusters = Vec::with_capacity(raw.cluster.len());
        let mut all_valid = true;
        for (index, table) in raw.cluster.iter().enumerate() {
            let c = table.get_ref();
            let name = self.name(&c.name, "a cluster name");
            if self.clusters[..index]
                .iter()
                .any(|other| &other.name == c.name.get_ref())
            {
                self.report(
                    c.name.span(),
                    format!("cluster name `{}` is already used", c.name.get_ref()),
                    "allowed: a name no other cluster in this scenario has",
                );
                all_valid = false;
            }
            let (own, cores_valid) = self.cluster_cores(c, cores);
            let order = self.order(&c.order);
            // `None`: not given (zero: no partition may need it); `Some(None)`: wrong.
            let cycle = c.cycle.as_ref().map(|h| self.positive_time(h, "cycle"));
            self.clusters.push(KnownCluster {
                name: c.name.get_ref().clone(),
                cores: own.clone(),
                cores_complete: cores_valid,
                order,
                cycle: cycle.flatten(),
                members: 0,
            });
            match (
                name,
                cores_valid,
                order,
                cycle.unwrap_or(Some(Duration::ZERO)),
            ) {
                (Some(name), true, Some(order), Some(cycle)) => clusters.push(ClusterSpec {
                    name,
                    cores: own,
                    order,
                    cycle,
                    slack_reclamation: c.slack_reclamation.as_ref().is_some_and(|on| *on.get_ref()),
                    members: Vec::new(),
                }),
                _ => all_valid = false,
            }
        }
        for table in &raw.core {
            let id = &table.get_ref().id;
            let Some(cluster) = u16::try_from(*id.get_ref())
                .ok()
                .and_then(|core| self.cluster_with(core))
            else {
                continue;
            };
            self.report(
                id.span(),
                format!(
                    "core {} is in cluster `{}`, whose scheduler runs it",
                    id.get_ref(),
                    self.clusters[cluster].name
                ),
                "allowed: [[core]] tables for cores in no cluster; remove this table or the \
                 core from the cluster's cores",
            );
            all_valid = false;
        }
        all_valid.then_some(clusters)
    }

    /// A cluster's cores, the valid ones in file order, and whether all are: at least one,
    /// each a core of the scenario, listed once and in no earlier cluster.
    fn cluster_cores(&mut self, raw: &RawCluster, cores: Option<u16>) -> (Vec<u16>, bool) {
        let label = raw.name.get_ref();
        let list = match raw.cores.get_ref() {
            RawClusterCores::Ids(list) => list,
            RawClusterCores::Count(n) => {
                self.report(
                    raw.cores.span(),
                    format!(
                        "cluster `{label}` gives `cores = {n}`, a count; in a scenario a \
                         cluster lists its cores' ids"
                    ),
                    CORES_HELP,
                );
                return (Vec::new(), false);
            }
        };
        if list.is_empty() {
            self.report(
                raw.cores.span(),
                format!("cluster `{label}` has no cores"),
                "allowed: one or more core ids, like cores = [1, 2]",
            );
            return (Vec::new(), false);
        }
        let mut own: Vec<u16> = Vec::with_capacity(list.len());
        let mut all_valid = true;
        for id in list {
            let n = *id.get_ref();
            let limit = cores.unwrap_or(MAX_CORES);
            let Some(core) = u16::try_from(n).ok().filter(|c| *c < limit) else {
                // With `cores` wrong (already reported), only impossible cores are refused.
                let help = match cores {
                    Some(count) => format!("allowed: 0..={} (cores = {count})", count - 1),
                    None => format!("allowed: 0..={}", MAX_CORES - 1),
                };
                self.report(
                    id.span(),
                    format!("core {n} is not a core of this scenario"),
                    help,
                );
                all_valid = false;
                continue;
            };
            if own.contains(&core) {
                self.report(
                    id.span(),
                    format!("core {core} is listed twice in cluster `{label}`"),
                    "allowed: each core once",
                );
                all_valid = false;
            } else if let Some(other) = self.cluster_with(core) {
                self.report(
                    id.span(),
                    format!(
                        "core {core} is in cluster `{}` already",
                        self.clusters[other].name
                    ),
                    "allowed: each core in one cluster at most",
                );
                all_valid = false;
            } else {
                own.push(core);
            }
        }
        (own, all_valid)
    }

    /// `order = "fixed-priority" | "edf"`.
    fn order(&mut self, raw: &Spanned<String>) -> Option<SporadicOrder> {
        match raw.get_ref().as_str() {
            "fixed-priority" => Some(SporadicOrder::FixedPriority),
            "edf" => Some(SporadicOrder::EarliestDeadlineFirst),
            other => {
                self.report(raw.span(), format!("unknown order `{other}`"), ORDER_HELP);
                None
            }
        }
    }

    /// The cluster that has `core`, if any (an index into the known clusters).
    pub(super) fn cluster_with(&self, core: u16) -> Option<usize> {
        self.clusters.iter().position(|c| c.cores.contains(&core))
    }

    /// The name of cluster `index`.
    pub(super) fn cluster_name(&self, index: usize) -> &str {
        &self.clusters[index].name
    }

    /// The cluster task `task` was checked into, if any.
    pub(super) fn cluster_of(&self, task: usize) -> Option<usize> {
        self.cluster_members
            .iter()
            .find(|m| m.task == task)
            .map(|m| m.cluster)
    }

    /// Where a task with `cluster = "name"` runs: the cluster's first core, with a priority
    /// under fixed-priority order and none under EDF, and a reservation it must have.
    pub(super) fn cluster_placement(
        &mut self,
        raw: &RawTask,
        key: &Spanned<String>,
        kind: Option<Kind>,
        whole: Range<usize>,
    ) -> Placement {
        let label = raw.name.get_ref();
        let cluster = self.clusters.iter().position(|c| &c.name == key.get_ref());
        if cluster.is_none() {
            let help = names_help(
                self.clusters.iter().map(|c| c.name.as_str()),
                "add a [[cluster]] table with this name, its cores and its order",
            );
            self.report(
                key.span(),
                format!("no [[cluster]] is called `{}`", key.get_ref()),
                help,
            );
        }
        let name = key.get_ref();
        let order = cluster.and_then(|c| self.clusters[c].order);
        let mut valid = cluster.is_some();
        if let Some(core) = &raw.core {
            self.report(
                core.span(),
                format!("task `{label}` runs in cluster `{name}`, so it has no core of its own"),
                "a task in a cluster runs on whichever of its cores the cluster's scheduler \
                 selects; remove core",
            );
            valid = false;
        }
        if let (Some(Kind::Script), Some(script)) = (kind, &raw.script) {
            valid &= self.cluster_steps(script.get_ref(), label, name);
        }
        if let Some(cap) = &raw.cap {
            self.report(
                cap.span(),
                format!(
                    "a bandwidth cap is for vbs processes, but task `{label}` runs in cluster \
                     `{name}`"
                ),
                "allowed: cap on tasks of a vbs core; remove cap",
            );
            valid = false;
        }
        let named = raw
            .reservation
            .as_ref()
            .is_some_and(|r| r.get_ref().named.is_some());
        // Best-effort and shared members have no priority of their own.
        let no_priority = named
            || raw
                .reservation
                .as_ref()
                .is_some_and(|r| r.get_ref().is_best_effort());
        let priority = if no_priority {
            self.named_priority(raw, name)
        } else {
            self.cluster_priority(raw, name, order, whole.clone())
        };
        let reservation_name = match raw
            .reservation
            .as_ref()
            .and_then(|r| r.get_ref().name.as_ref())
        {
            Some(written) => {
                valid &= self.reservation_name(written);
                Some(written.get_ref().clone())
            }
            None => None,
        };
        let reservation = match &raw.reservation {
            Some(reservation) if named => self.named_reservation(reservation, cluster, name),
            Some(reservation) if reservation.get_ref().best_effort.is_some() => {
                self.best_effort_table(reservation)
            }
            Some(reservation) => self.cluster_reservation(reservation, cluster, name, order),
            None => {
                self.report(
                    whole,
                    format!(
                        "task `{label}` runs in cluster `{name}`, but has no reservation: each \
                         task of a cluster runs in a sporadic reservation of its own"
                    ),
                    "add reservation = { budget = \"2ms\", period = \"10ms\" } (budget <= period)",
                );
                None
            }
        };
        let (Some(cluster), Some((reservation, kind))) = (cluster, reservation) else {
            return Placement::WRONG;
        };
        if self.clusters[cluster].members == MAX_RESERVATIONS {
            self.report(
                key.span(),
                format!("cluster `{name}` has more than {MAX_RESERVATIONS} tasks"),
                format!("allowed: at most {MAX_RESERVATIONS} tasks in one cluster"),
            );
            return Placement::WRONG;
        }
        self.clusters[cluster].members += 1;
        if let Some(name) = &reservation_name {
            // The first table with a name keeps it (a later clash is reported above).
            self.reservation_names
                .entry(name.clone())
                .or_insert(self.cluster_members.len());
        }
        self.cluster_members.push(Member {
            task: self.current_task,
            name: label.clone(),
            cluster,
            kind,
            reservation_name,
        });
        if !valid {
            return Placement::WRONG;
        }
        Placement {
            core: self.clusters[cluster].cores.first().copied(),
            priority,
            // A partition has no `(e, p)`: the task has no reservation in the model.
            reservation: Some(reservation),
        }
    }

    /// The steps of a script in cluster `cluster`: computing, sleeping, invoking servers and
    /// reclamation (`allocate`, `terminate`) are allowed; a step that acts on one core
    /// (`flush-cache`) or on a VBS context (`action`) is refused, at its key. False when one
    /// was refused.
    fn cluster_steps(&mut self, steps: &[Spanned<RawStep>], task: &str, cluster: &str) -> bool {
        let mut valid = true;
        for step in steps {
            let raw = step.get_ref();
            let refused = [
                raw.flush_cache.as_ref().map(|v| (v.span(), "flush-cache")),
                raw.action.as_ref().map(|v| (v.span(), "action")),
            ];
            for (span, key) in refused.into_iter().flatten() {
                self.report(
                    span,
                    format!(
                        "task `{task}` runs in cluster `{cluster}`, where a script cannot \
                         {key} yet"
                    ),
                    "allowed in a cluster's scripts: run, compute, sleep-for, sleep-until, \
                     sleep-until-aligned, sleep-until-next-release, invoke, allocate, terminate \
                     and loop; put the task on a core in no cluster for the others",
                );
                valid = false;
            }
            if let Some(body) = &raw.body {
                valid &= self.cluster_steps(body.get_ref(), task, cluster);
            }
        }
        valid
    }

    /// A named reservation: `"best-effort"`, the cluster's lowest level, with no budget
    /// (the MC-IPC paper's best-effort reservations, section III); or one an earlier member
    /// of the same cluster named (`name = "R4"` in its table), shared with it: the task is
    /// another thread bound to that scheduling context.
    fn named_reservation(
        &mut self,
        spanned: &Spanned<RawReservation>,
        cluster: Option<usize>,
        cluster_name: &str,
    ) -> Option<(Option<Reservation>, MemberKind)> {
        let named = spanned.get_ref().named.as_deref().unwrap_or_default();
        if named == "best-effort" {
            return Some((None, MemberKind::BestEffort));
        }
        let owner = self
            .reservation_names
            .get(named)
            .map(|&at| &self.cluster_members[at]);
        match owner {
            Some(owner) if Some(owner.cluster) == cluster => {
                Some((None, MemberKind::Shared { owner: owner.task }))
            }
            // The cluster is wrong and already reported.
            Some(_) if cluster.is_none() => None,
            Some(owner) => {
                let (task, elsewhere) = (owner.name.clone(), owner.cluster);
                self.report(
                    spanned.span(),
                    format!(
                        "reservation `{named}` is task `{task}`'s in cluster `{}`, but this task \
                         runs in cluster `{cluster_name}`",
                        self.clusters[elsewhere].name
                    ),
                    "allowed: sharing a reservation of the task's own cluster (its scheduler \
                     is the one that runs it)",
                );
                None
            }
            None => {
                let mut names: Vec<String> = self
                    .cluster_members
                    .iter()
                    .filter(|m| Some(m.cluster) == cluster)
                    .filter_map(|m| m.reservation_name.as_ref().map(|n| format!("\"{n}\"")))
                    .collect();
                names.push("\"best-effort\"".to_owned());
                self.report(
                    spanned.span(),
                    format!("no reservation is called `{named}`"),
                    format!(
                        "allowed: {}, the names given so far in cluster `{cluster_name}` (a \
                         reservation table named with name = ... before this task); or a table \
                         like {{ budget = \"2ms\", period = \"10ms\" }}",
                        names.join(", ")
                    ),
                );
                None
            }
        }
    }

    /// A reservation table's `name`: unique among the scenario's reservations, and not
    /// `best-effort`. False when it is wrong (reported).
    fn reservation_name(&mut self, written: &Spanned<String>) -> bool {
        let name = written.get_ref();
        let clash = self
            .reservation_names
            .get(name)
            .map(|&at| self.cluster_members[at].name.clone());
        let problem = if name == "best-effort" {
            Some("`best-effort` names the cluster's lowest level, not a reservation".to_owned())
        } else if name.is_empty() {
            Some("a reservation name cannot be empty".to_owned())
        } else {
            clash.map(|task| format!("reservation name `{name}` is task `{task}`'s already"))
        };
        let Some(problem) = problem else {
            return true;
        };
        self.report(
            written.span(),
            problem,
            "allowed: a name no other reservation in this scenario has, other than best-effort",
        );
        false
    }

    /// `{ best-effort = true }`, optionally with a `name` for later members to share it: the
    /// cluster's lowest level, so no budget, rule or partition key beside it. `best-effort =
    /// false` is refused rather than read as absent: a table says what it is by its keys.
    fn best_effort_table(
        &mut self,
        spanned: &Spanned<RawReservation>,
    ) -> Option<(Option<Reservation>, MemberKind)> {
        let raw = spanned.get_ref();
        let written = raw.best_effort.as_ref()?;
        if !*written.get_ref() {
            self.report(
                written.span(),
                "best-effort = false says nothing: a reservation is sporadic by its budget and \
                 period, or a time partition by its core and slots",
                "allowed: best-effort = true (with at most a name), or no best-effort key at all",
            );
            return None;
        }
        let extra = budget_keys(raw).into_iter().chain([
            ("core", raw.core.as_ref().map(Spanned::span)),
            ("slots", raw.slots.as_ref().map(Spanned::span)),
        ]);
        let mut valid = true;
        for (key, span) in extra {
            let Some(span) = span else { continue };
            self.report(
                span,
                format!(
                    "a best-effort reservation has no {key}: it runs below every reservation of \
                     its cluster, on no budget"
                ),
                BEST_EFFORT_HELP,
            );
            valid = false;
        }
        valid.then_some((None, MemberKind::BestEffort))
    }

    /// None: a best-effort member runs below every reservation of its cluster, at no
    /// priority of its own, and a member sharing a reservation runs at its owner's.
    fn named_priority(&mut self, raw: &RawTask, name: &str) -> Option<Option<Priority>> {
        let Some(priority) = &raw.priority else {
            return Some(None);
        };
        let (task, reservation) = (
            raw.name.get_ref(),
            raw.reservation
                .as_ref()
                .and_then(|r| r.get_ref().named.clone())
                .unwrap_or_default(),
        );
        // A sharer of a best-effort reservation is best-effort too: no priority to run at.
        let shares_best_effort = self
            .reservation_names
            .get(&reservation)
            .is_some_and(|&at| self.cluster_members[at].kind == MemberKind::BestEffort);
        let best_effort = shares_best_effort
            || raw
                .reservation
                .as_ref()
                .is_some_and(|r| r.get_ref().is_best_effort());
        let (message, help) = if best_effort {
            (
                format!(
                    "task `{task}` is best-effort in cluster `{name}`, below every reservation: \
                     it has no priority"
                ),
                "allowed: remove priority, or give the task a reservation table",
            )
        } else {
            (
                format!(
                    "task `{task}` shares reservation `{reservation}` in cluster `{name}`, and \
                     runs at that reservation's priority"
                ),
                "allowed: remove priority (set it on the task whose reservation table has the \
                 name), or give the task a reservation table of its own",
            )
        };
        self.report(priority.span(), message, help);
        None
    }

    /// A priority under fixed-priority order (required), none under EDF.
    fn cluster_priority(
        &mut self,
        raw: &RawTask,
        name: &str,
        order: Option<SporadicOrder>,
        whole: Range<usize>,
    ) -> Option<Option<Priority>> {
        match (order, &raw.priority) {
            (Some(SporadicOrder::FixedPriority), Some(priority)) => {
                self.priority_value(priority).map(Some)
            }
            (Some(SporadicOrder::FixedPriority), None) => {
                self.report(
                    whole,
                    format!("task `{}` has no priority", raw.name.get_ref()),
                    format!(
                        "cluster `{name}` orders its reservations by fixed priority: allowed: \
                         priority = 0..=255, larger is more important"
                    ),
                );
                None
            }
            (Some(SporadicOrder::EarliestDeadlineFirst), Some(priority)) => {
                self.report(
                    priority.span(),
                    format!(
                        "cluster `{name}` orders its reservations by deadline (edf); priority \
                         is only used under order = \"fixed-priority\""
                    ),
                    "allowed: remove priority from this task, or order = \"fixed-priority\" in \
                     the cluster",
                );
                None
            }
            (Some(SporadicOrder::EarliestDeadlineFirst), None) => Some(None),
            // The cluster or its order is wrong and already reported.
            (None, Some(priority)) => {
                self.priority_value(priority);
                None
            }
            (None, None) => None,
        }
    }

    /// A cluster task's reservation: a time partition when it has `core` or `slots`, else a
    /// sporadic `(e, p)` (the model's reservation; `S` goes into its `replenishments` too for
    /// an SPR server) with its rule and criticality.
    fn cluster_reservation(
        &mut self,
        spanned: &Spanned<RawReservation>,
        cluster: Option<usize>,
        name: &str,
        order: Option<SporadicOrder>,
    ) -> Option<(Option<Reservation>, MemberKind)> {
        let raw = spanned.get_ref();
        if raw.core.is_some() || raw.slots.is_some() {
            return self
                .partition(spanned, cluster, name)
                .map(|kind| (None, kind));
        }
        let (budget, period) = self.budget_and_period(spanned);
        let mut valid = true;
        if let Some(eta) = &raw.non_preemptive {
            self.report(
                eta.span(),
                "the clustered scheduler has no non-preemptive regions",
                "allowed in the reservation of a task in a cluster: budget, period, \
                 replenishment and, with replenishment = \"spr\", replenishments; \
                 criticality and low-budget; or core and slots for a time partition",
            );
            valid = false;
        }
        let rule = match &raw.replenishment {
            None => Some(Replenishment::Sporadic),
            Some(rule) => self.replenishment_rule(rule, name, order),
        };
        let slots = match (&raw.replenishments, rule) {
            (None, _) => Some(Reservation::DEFAULT_REPLENISHMENTS),
            (Some(slots), Some(Replenishment::Spr { .. }) | None) => self.spr_slots(slots),
            (Some(slots), Some(_)) => {
                self.report(
                    slots.span(),
                    "replenishments is the queue capacity of an SPR server, but this \
                     reservation has no queue",
                    "allowed: replenishments only with replenishment = \"spr\"; remove it, or \
                     add replenishment = \"spr\" (order = \"fixed-priority\" only)",
                );
                None
            }
        };
        let high = self.criticality(raw, rule);
        let (Some(budget), Some(period)) = (budget, period) else {
            return None;
        };
        if budget > period {
            self.report(
                super::task::budget_span(spanned),
                format!("budget {budget} is larger than its period {period}"),
                "a reservation's budget must be at most its period",
            );
            return None;
        }
        // `e^L` against `e^H`, once both are known.
        let low_budget = match (high?, &raw.low_budget) {
            (Some(low_budget), Some(written)) if low_budget > budget => {
                self.report(
                    written.span(),
                    format!("low-budget {low_budget} is larger than the budget {budget}"),
                    "allowed: 0 < low-budget <= budget (e^L <= e^H: the high-assurance budget is \
                     the larger)",
                );
                return None;
            }
            (low_budget, _) => low_budget,
        };
        let (Some(rule), Some(slots), true) = (rule, slots, valid) else {
            return None;
        };
        let rule = match rule {
            Replenishment::Spr { .. } => Replenishment::Spr { slots },
            other => other,
        };
        Some((
            Some(Reservation::new(budget, period).with_replenishments(slots)),
            MemberKind::Sporadic {
                replenishment: rule,
                low_budget,
            },
        ))
    }

    /// `criticality` and `low-budget`: `Some(None)` of low criticality, `Some(Some(e^L))` of
    /// high, `None` wrong. High criticality needs the sporadic rule (`rule`, if right): a
    /// constant-bandwidth or SPR server keeps its budget across jobs, and Vestal's monitor
    /// needs the per-job budget.
    fn criticality(
        &mut self,
        raw: &RawReservation,
        rule: Option<Replenishment>,
    ) -> Option<Option<Duration>> {
        let high = match &raw.criticality {
            None => false,
            Some(level) => match level.get_ref().as_str() {
                "low" => false,
                "high" => true,
                other => {
                    self.report(
                        level.span(),
                        format!("unknown criticality `{other}`"),
                        CRITICALITY_HELP,
                    );
                    // Still read low-budget, to report what is wrong with it.
                    if let Some(low_budget) = &raw.low_budget {
                        self.positive_time(low_budget, "low-budget");
                    }
                    return None;
                }
            },
        };
        if !high {
            if let Some(low_budget) = &raw.low_budget {
                self.report(
                    low_budget.span(),
                    "low-budget is a high-criticality reservation's e^L, but this reservation \
                     is of low criticality",
                    "allowed: low-budget only beside criticality = \"high\"; remove it, or add \
                     criticality = \"high\"",
                );
                return None;
            }
            return Some(None);
        }
        let level = raw
            .criticality
            .as_ref()
            .map(Spanned::span)
            .unwrap_or_default();
        let mut valid = true;
        if let (Some(written), Some(rule)) = (&raw.replenishment, rule) {
            if rule != Replenishment::Sporadic {
                self.report(
                    written.span(),
                    format!(
                        "{} server is of low criticality only, but this reservation is of high \
                         criticality",
                        if matches!(rule, Replenishment::Spr { .. }) {
                            "an SPR"
                        } else {
                            "a constant-bandwidth"
                        }
                    ),
                    "allowed: replenishment = \"sporadic\" at high criticality (Vestal's \
                     monitor, section VII, needs the sporadic rule's per-job budget); or \
                     criticality = \"low\"",
                );
                valid = false;
            }
        }
        let low_budget = match &raw.low_budget {
            Some(low_budget) => self.positive_time(low_budget, "low-budget"),
            None => {
                self.report(
                    level,
                    "a high-criticality reservation needs a low-budget",
                    "add low-budget = \"1ms\": e^L, with 0 < low-budget <= budget (the budget \
                     being e^H)",
                );
                None
            }
        };
        let low_budget = low_budget?;
        valid.then_some(Some(low_budget))
    }

    /// A time partition's `core` and `slots`, and nothing else: its core one of cluster
    /// `cluster`'s, its slots `[start, end)` non-empty, within the cycle, apart from each
    /// other (the scheduler refuses touching slots of one partition) and clear of the slots
    /// of the cluster's earlier partitions on the same core (section III).
    fn partition(
        &mut self,
        spanned: &Spanned<RawReservation>,
        cluster: Option<usize>,
        name: &str,
    ) -> Option<MemberKind> {
        let raw = spanned.get_ref();
        let extra = budget_keys(raw);
        let mut valid = true;
        for (key, span) in extra {
            if let Some(span) = span {
                self.report(
                    span,
                    format!(
                        "a time partition (core and slots) has no {key}: it runs in its slots, \
                         with no budget"
                    ),
                    PARTITION_HELP,
                );
                valid = false;
            }
        }
        let known = cluster.map(|c| (self.clusters[c].cores.clone(), self.clusters[c].cycle));
        let cores_complete = cluster.is_none_or(|c| self.clusters[c].cores_complete);
        let core = match &raw.core {
            None => {
                self.report(
                    spanned.span(),
                    "this time partition has slots but no core",
                    format!(
                        "add core = ..., the core of cluster `{name}` it runs on{}",
                        known
                            .as_ref()
                            .map(|(cores, _)| format!(" (allowed: {})", list(cores)))
                            .unwrap_or_default()
                    ),
                );
                None
            }
            Some(core) => {
                let n = *core.get_ref();
                let found = u16::try_from(n)
                    .ok()
                    .filter(|c| known.as_ref().is_none_or(|(cores, _)| cores.contains(c)));
                if found.is_none() && cores_complete {
                    let cores = known.as_ref().map_or_else(String::new, |(c, _)| list(c));
                    self.report(
                        core.span(),
                        format!("core {n} is not a core of cluster `{name}`"),
                        format!("allowed: one of the cluster's cores: {cores}"),
                    );
                }
                found
            }
        };
        let cycle = known.and_then(|(_, cycle)| cycle);
        let slots = match &raw.slots {
            None => {
                self.report(
                    spanned.span(),
                    "this time partition has a core but no slots",
                    "add slots = [[\"0ms\", \"5ms\"]]: [start, end) within the cluster's \
                     cycle, when the partition runs on its core",
                );
                None
            }
            Some(slots) => self.slots(slots, cycle, name),
        };
        let (Some(core), Some(slots), Some(cluster), true) = (core, slots, cluster, valid) else {
            return None;
        };
        // Section III: slots of partitions on one core must not overlap.
        let clash = self.cluster_members.iter().find_map(|earlier| {
            let MemberKind::Partition {
                core: other_core,
                slots: other_slots,
            } = &earlier.kind
            else {
                return None;
            };
            if earlier.cluster != cluster || *other_core != core {
                return None;
            }
            slots.iter().find_map(|(own, span)| {
                other_slots
                    .iter()
                    .find(|other| own.0 < other.1 && other.0 < own.1)
                    .map(|other| (*own, *other, span.clone(), earlier.name.clone()))
            })
        });
        if let Some((own, other, span, other_task)) = clash {
            self.report(
                span,
                format!(
                    "slot {} overlaps slot {} of task `{other_task}`'s partition on core {core}",
                    slot_text(own),
                    slot_text(other)
                ),
                "allowed: partitions on one core whose slots do not overlap (they may touch); \
                 move one, or pin it to another core",
            );
            return None;
        }
        Some(MemberKind::Partition {
            core,
            slots: slots.into_iter().map(|(slot, _)| slot).collect(),
        })
    }

    /// `slots = [["0ms", "5ms"], ...]`, sorted by start, each with where it is written.
    fn slots(
        &mut self,
        raw: &Spanned<RawSlots>,
        cycle: Option<Duration>,
        name: &str,
    ) -> Option<Vec<WrittenSlot>> {
        if raw.get_ref().is_empty() {
            self.report(
                raw.span(),
                "a time partition needs at least one slot",
                "allowed: slots = [[\"0ms\", \"5ms\"], ...], each [start, end) within the \
                 cluster's cycle",
            );
            return None;
        }
        let mut found = Vec::with_capacity(raw.get_ref().len());
        let mut valid = true;
        for slot in raw.get_ref() {
            let times: Vec<Option<Duration>> =
                slot.get_ref().iter().map(|t| self.time(t)).collect();
            let [start, end] = times.as_slice() else {
                self.report(
                    slot.span(),
                    format!(
                        "a slot needs two times, [start, end), but has {}",
                        times.len()
                    ),
                    "allowed: a slot like [\"0ms\", \"5ms\"], start before end",
                );
                valid = false;
                continue;
            };
            let (Some(start), Some(end)) = (*start, *end) else {
                valid = false;
                continue;
            };
            if start >= end {
                self.report(
                    slot.span(),
                    format!("slot [{start}, {end}) is empty: it must start before it ends"),
                    "allowed: a slot [start, end) with start < end",
                );
                valid = false;
            } else if let Some(cycle) = cycle.filter(|h| end > *h) {
                self.report(
                    slot.span(),
                    format!(
                        "slot [{start}, {end}) ends after the cycle {cycle} of cluster `{name}`"
                    ),
                    format!("allowed: slots within [0, {cycle}), the cycle they repeat with"),
                );
                valid = false;
            } else {
                found.push(((start, end), slot.span()));
            }
        }
        found.sort_by_key(|((start, _), _)| *start);
        // The scheduler refuses slots of one partition that overlap or touch.
        for pair in found.windows(2) {
            let (((start, end), _), ((next_start, next_end), span)) = (&pair[0], &pair[1]);
            if *next_start <= *end {
                let how = if next_start == end {
                    "touch"
                } else {
                    "overlap"
                };
                self.report(
                    span.clone(),
                    format!(
                        "slots [{start}, {end}) and [{next_start}, {next_end}) of one partition \
                         {how}"
                    ),
                    "allowed: one partition's slots apart from each other, with a gap between \
                     them; merge slots that meet into one",
                );
                valid = false;
            }
        }
        valid.then_some(found)
    }

    /// `replenishment = "sporadic" | "cbs" | "spr"`, each only under the orders that keep a
    /// reservation's priority still while it runs (the scheduler's A1).
    fn replenishment_rule(
        &mut self,
        raw: &Spanned<String>,
        name: &str,
        order: Option<SporadicOrder>,
    ) -> Option<Replenishment> {
        let (rule, needs) = match raw.get_ref().as_str() {
            "sporadic" => return Some(Replenishment::Sporadic),
            "cbs" => (
                Replenishment::ConstantBandwidth,
                SporadicOrder::EarliestDeadlineFirst,
            ),
            "spr" => (
                Replenishment::Spr {
                    slots: Reservation::DEFAULT_REPLENISHMENTS,
                },
                SporadicOrder::FixedPriority,
            ),
            other => {
                self.report(
                    raw.span(),
                    format!("unknown replenishment `{other}`"),
                    REPLENISHMENT_HELP,
                );
                return None;
            }
        };
        match order {
            Some(order) if order != needs => {
                let (ordered_by, allowed) = match order {
                    SporadicOrder::FixedPriority => ("fixed priority", "sporadic, spr"),
                    SporadicOrder::EarliestDeadlineFirst => ("deadline (edf)", "sporadic, cbs"),
                };
                self.report(
                    raw.span(),
                    format!(
                        "replenishment `{}` needs order = \"{}\", but cluster `{name}` orders \
                         its reservations by {ordered_by}",
                        raw.get_ref(),
                        order_name(needs)
                    ),
                    format!("allowed under order = \"{}\": {allowed}", order_name(order)),
                );
                None
            }
            _ => Some(rule),
        }
    }

    /// `S`, an SPR server's queue capacity: 1 to the clustered scheduler's largest.
    fn spr_slots(&mut self, raw: &Spanned<i64>) -> Option<u16> {
        let n = *raw.get_ref();
        let found = u16::try_from(n)
            .ok()
            .filter(|s| (1..=MAX_SPR_SLOTS).contains(s));
        if found.is_none() {
            self.report(
                raw.span(),
                format!("replenishments {n} is outside 1..={MAX_SPR_SLOTS}"),
                format!(
                    "allowed: 1..={MAX_SPR_SLOTS} pending replenishments for an SPR server in \
                     a cluster"
                ),
            );
        }
        found
    }

    /// `cycle` in each `[[cluster]]`: required when one of its tasks' reservations is a time
    /// partition (as written, so that a wrong partition does not make it look unused),
    /// refused otherwise.
    pub(super) fn cluster_cycles(&mut self, raw: &RawScenario) {
        // A partition naming no [[cluster]] (reported there) may be meant for any of them:
        // no cluster's cycle is then called unused.
        let partition_astray = raw.task.iter().any(|task| {
            let task = task.get_ref();
            let astray = task.cluster.as_ref().is_some_and(|k| {
                !raw.cluster
                    .iter()
                    .any(|c| c.get_ref().name.get_ref() == k.get_ref())
            });
            astray && (task.reservation.as_ref()).is_some_and(|r| r.get_ref().is_time_partition())
        });
        for table in &raw.cluster {
            let c = table.get_ref();
            let name = c.name.get_ref();
            let partition = raw.task.iter().find(|task| {
                let task = task.get_ref();
                task.cluster.as_ref().is_some_and(|k| k.get_ref() == name)
                    && (task.reservation.as_ref()).is_some_and(|r| r.get_ref().is_time_partition())
            });
            match (&c.cycle, partition) {
                (None, Some(task)) => self.report(
                    c.name.span(),
                    format!(
                        "cluster `{name}` has no cycle, but task `{}` in it is a time partition",
                        task.get_ref().name.get_ref()
                    ),
                    "add cycle = \"20ms\" to the cluster: H, the cycle its partitions' slots \
                     repeat with (every slot ends within it)",
                ),
                (Some(cycle), None) if !partition_astray => self.report(
                    cycle.span(),
                    format!(
                        "cluster `{name}` has a cycle, but none of its tasks is a time partition"
                    ),
                    "allowed: cycle only in a cluster with a time partition (a task whose \
                     reservation is { core = ..., slots = [...] }); remove it",
                ),
                _ => {}
            }
        }
    }

    /// The clusters' members, in task order, once every task is known.
    pub(super) fn add_members(&mut self, clusters: &mut [ClusterSpec]) {
        for member in std::mem::take(&mut self.cluster_members) {
            if let Some(cluster) = clusters.get_mut(member.cluster) {
                cluster.members.push(ClusterMember {
                    task: member.task,
                    kind: member.kind,
                });
            }
        }
    }
}

/// The keys of a reservation that runs on a budget, each with where it is written: what a
/// time partition or a best-effort reservation must not have.
fn budget_keys(raw: &RawReservation) -> [(&'static str, Option<Range<usize>>); 7] {
    [
        ("budget", raw.budget.as_ref().map(Spanned::span)),
        ("period", raw.period.as_ref().map(Spanned::span)),
        (
            "replenishment",
            raw.replenishment.as_ref().map(Spanned::span),
        ),
        (
            "replenishments",
            raw.replenishments.as_ref().map(Spanned::span),
        ),
        (
            "non-preemptive",
            raw.non_preemptive.as_ref().map(Spanned::span),
        ),
        ("criticality", raw.criticality.as_ref().map(Spanned::span)),
        ("low-budget", raw.low_budget.as_ref().map(Spanned::span)),
    ]
}

/// `[start, end)`.
fn slot_text((start, end): (Duration, Duration)) -> String {
    format!("[{start}, {end})")
}

/// Core ids as a list for people: `1, 2`.
fn list(cores: &[u16]) -> String {
    cores
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// An order as a file writes it.
fn order_name(order: SporadicOrder) -> &'static str {
    match order {
        SporadicOrder::FixedPriority => "fixed-priority",
        SporadicOrder::EarliestDeadlineFirst => "edf",
    }
}
