//! `[[cluster]]` checks: a unique name, distinct cores of the scenario that no other cluster
//! and no `[[core]]` table has, and an order; and the tasks that run in a cluster (`cluster =
//! "name"`), each in a sporadic reservation of its own, replenished by the sporadic rule, a
//! constant-bandwidth server (EDF order) or an SPR server (fixed-priority order). Such a task
//! follows its cluster's rules, not the policy of a core.

use std::ops::Range;

use bulwark_core::reservation::clustered::{MAX_RESERVATIONS, MAX_SPR_SLOTS};
use bulwark_core::Priority;
use toml::Spanned;

use super::task::{Kind, Placement};
use super::{Checker, MAX_CORES};
use crate::model::{ClusterSpec, Replenishment, Reservation, SporadicOrder};
use crate::raw::{RawCluster, RawReservation, RawScenario, RawTask};

const ORDER_HELP: &str = "allowed: fixed-priority (the tasks' priorities, larger is more \
                          important) or edf (earliest deadline first)";
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
    /// `None`: wrong, already reported.
    order: Option<SporadicOrder>,
}

/// A cluster task's place: the task (by index), its cluster (by index) and its rule.
pub(super) struct Member {
    task: usize,
    cluster: usize,
    replenishment: Replenishment,
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
            self.clusters.push(KnownCluster {
                name: c.name.get_ref().clone(),
                cores: own.clone(),
                order,
            });
            match (name, cores_valid, order) {
                (Some(name), true, Some(order)) => clusters.push(ClusterSpec {
                    name,
                    cores: own,
                    order,
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
        let list = raw.cores.get_ref();
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

    /// True when task `task` was checked into a cluster.
    pub(super) fn is_cluster_member(&self, task: usize) -> bool {
        self.cluster_members.iter().any(|m| m.task == task)
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
            let names: Vec<&str> = self.clusters.iter().map(|c| c.name.as_str()).collect();
            let help = if names.is_empty() {
                "add a [[cluster]] table with this name, its cores and its order".to_owned()
            } else {
                format!("allowed: {}", names.join(", "))
            };
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
            self.report(
                script.span(),
                "scripts in a cluster are not supported yet",
                "allowed: a periodic (period) or sporadic (min-interarrival) task with an \
                 execution in a cluster, or the script on a core in no cluster",
            );
            valid = false;
        }
        if let Some(group) = &raw.group {
            self.report(
                group.span(),
                format!(
                    "task `{label}` runs in cluster `{name}`: reclamation groups are not \
                     supported yet in a cluster"
                ),
                "allowed: group on tasks of cores in no cluster; remove group",
            );
            valid = false;
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
        let priority = self.cluster_priority(raw, name, order, whole.clone());
        let reservation = match &raw.reservation {
            Some(reservation) => self.cluster_reservation(reservation, name, order),
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
        let (Some(cluster), Some((reservation, replenishment))) = (cluster, reservation) else {
            return Placement::WRONG;
        };
        let members = self
            .cluster_members
            .iter()
            .filter(|m| m.cluster == cluster)
            .count();
        if members == MAX_RESERVATIONS {
            self.report(
                key.span(),
                format!("cluster `{name}` has more than {MAX_RESERVATIONS} tasks"),
                format!("allowed: at most {MAX_RESERVATIONS} tasks in one cluster"),
            );
            return Placement::WRONG;
        }
        self.cluster_members.push(Member {
            task: self.current_task,
            cluster,
            replenishment,
        });
        if !valid {
            return Placement::WRONG;
        }
        Placement {
            core: self.clusters[cluster].cores.first().copied(),
            priority,
            reservation: Some(Some(reservation)),
        }
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

    /// A cluster task's reservation `(e, p)` and how it is replenished. `S` goes into the
    /// reservation's `replenishments` too for an SPR server.
    fn cluster_reservation(
        &mut self,
        spanned: &Spanned<RawReservation>,
        name: &str,
        order: Option<SporadicOrder>,
    ) -> Option<(Reservation, Replenishment)> {
        let raw = spanned.get_ref();
        let budget = self.positive_time(&raw.budget, "budget");
        let period = self.positive_time(&raw.period, "period");
        let mut valid = true;
        if let Some(eta) = &raw.non_preemptive {
            self.report(
                eta.span(),
                "the clustered scheduler has no non-preemptive regions",
                "allowed in the reservation of a task in a cluster: budget, period, \
                 replenishment and, with replenishment = \"spr\", replenishments",
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
        let (Some(budget), Some(period)) = (budget, period) else {
            return None;
        };
        if budget > period {
            self.report(
                raw.budget.span(),
                format!("budget {budget} is larger than its period {period}"),
                "a reservation's budget must be at most its period",
            );
            return None;
        }
        let (Some(rule), Some(slots), true) = (rule, slots, valid) else {
            return None;
        };
        let rule = match rule {
            Replenishment::Spr { .. } => Replenishment::Spr { slots },
            other => other,
        };
        Some((
            Reservation::new(budget, period).with_replenishments(slots),
            rule,
        ))
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

    /// The clusters' members, in task order, once every task is known.
    pub(super) fn add_members(&mut self, clusters: &mut [ClusterSpec]) {
        for member in std::mem::take(&mut self.cluster_members) {
            if let Some(cluster) = clusters.get_mut(member.cluster) {
                cluster.members.push((member.task, member.replenishment));
            }
        }
    }
}

/// An order as a file writes it.
fn order_name(order: SporadicOrder) -> &'static str {
    match order {
        SporadicOrder::FixedPriority => "fixed-priority",
        SporadicOrder::EarliestDeadlineFirst => "edf",
    }
}
