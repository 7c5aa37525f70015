//! Warnings: a valid scenario that is almost surely not what its author meant, located like
//! errors. None of them stops a run; `--deny-warnings` on the command line makes them errors.
//!
//! - a core whose tasks' utilisation (sum of worst-case execution over period or minimum
//!   inter-arrival time, Liu and Layland's U) is above 1: no policy can meet every deadline
//!   (a cluster's tasks count for no core);
//! - a cluster whose reservations' bandwidth (sum of budget over period, a time partition
//!   counting its slots' time over the cycle) is above its number of cores: its reservations
//!   cannot all have their budgets;
//! - a task whose worst-case execution is longer than its period or minimum inter-arrival
//!   time: every job overruns into the next;
//! - a sporadic task whose jitter is above its minimum inter-arrival time;
//! - a task whose first release (offset) is after the end of the run (`duration`);
//! - a reservation whose non-preemptive region (eta) is longer than its budget;
//! - a server that neither a task's script nor another server's body invokes.

use std::collections::BTreeMap;
use std::ops::Range;

use bulwark_core::Duration;

use crate::diagnostic::{Source, SpecError};
use crate::model::{Behaviour, MemberKind, Scenario};
use crate::raw::{RawScenario, RawTask};

/// Every warning about `scenario`, which was validated from `raw`, in file order.
pub(crate) fn warnings(raw: &RawScenario, scenario: &Scenario, source: &Source) -> Vec<SpecError> {
    let mut found = Vec::new();
    // Per core: the utilisation so far, and whether the warning was given.
    let mut cores: BTreeMap<u16, (f64, bool)> = BTreeMap::new();
    // Per cluster: the bandwidth so far, exactly, and whether the warning was given.
    let mut clusters: BTreeMap<usize, (Bandwidth, bool)> = BTreeMap::new();
    let by_task = scenario.clusters_by_task();
    for (index, (spanned, task)) in raw.task.iter().zip(&scenario.tasks).enumerate() {
        let cluster = by_task[index].map(|(cluster, _)| cluster);
        let raw_task = spanned.get_ref();
        let whole = spanned.span();
        let name = &task.name;
        let at = |field: Option<Range<usize>>| field.unwrap_or_else(|| whole.clone());
        let (separation, word, jitter, offset, execution) = match &task.behaviour {
            Behaviour::Periodic {
                period,
                offset,
                execution,
            } => (
                *period,
                "period",
                None,
                *offset,
                Some(execution.worst_case()),
            ),
            Behaviour::Sporadic {
                min_interarrival,
                jitter,
                offset,
                execution,
            } => (
                *min_interarrival,
                "minimum inter-arrival time",
                Some(*jitter),
                *offset,
                Some(execution.worst_case()),
            ),
            Behaviour::Script { offset, .. } => (Duration::ZERO, "", None, *offset, None),
        };
        if offset > scenario.duration {
            found.push(source.error(
                at(raw_task.offset.as_ref().map(|o| o.span())),
                format!(
                    "task `{name}` is first released at {offset}, after the run ends at {}: it \
                     never runs",
                    scenario.duration
                ),
                "allowed: an offset within the run's duration, or a longer duration",
            ));
        }
        if let Some(jitter) = jitter.filter(|j| *j > separation) {
            found.push(source.error(
                at(raw_task.jitter.as_ref().map(|j| j.span())),
                format!(
                    "task `{name}`'s jitter {jitter} is above its minimum inter-arrival time \
                     {separation}"
                ),
                "allowed: jitter at most the minimum inter-arrival time (a release delayed by \
                 more than the separation overlaps the next)",
            ));
        }
        if let Some(execution) = execution {
            if execution > separation {
                found.push(source.error(
                    at(raw_task.execution.as_ref().map(|e| e.span())),
                    format!(
                        "task `{name}` executes up to {execution}, longer than its {word} \
                         {separation}: every such job overruns into the next"
                    ),
                    format!("allowed: a worst-case execution at most the {word}"),
                ));
            }
        }
        // A cluster's tasks run in reservations (counted below), on no core of their own.
        if let (Some(execution), None) = (execution, cluster) {
            // Liu and Layland's utilisation U = sum C_i / T_i; f64 is exact enough here, as
            // only a sum clearly above 1 is worth a warning.
            let share = execution.as_nanos() as f64 / separation.as_nanos().max(1) as f64;
            let (sum, warned) = cores.entry(task.core).or_insert((0.0, false));
            *sum += share;
            if *sum > 1.0 + 1e-9 && !*warned {
                *warned = true;
                found.push(source.error(
                    at(raw_task.execution.as_ref().map(|e| e.span())),
                    format!(
                        "core {}'s utilisation reaches {sum:.3} with task `{name}` (sum of \
                         worst-case execution over {word}): the core is overloaded",
                        task.core
                    ),
                    "allowed: a utilisation of at most 1 per core; spread the tasks over more \
                     cores or lengthen their periods",
                ));
            }
        }
        eta_above_budget(raw_task, task, source, &mut found);
        // A reservation's share is e / p; a time partition's, its slots' time over the cycle.
        let share = match by_task[index] {
            Some((cluster, MemberKind::Partition { slots, .. })) => {
                let busy: u64 = slots
                    .iter()
                    .map(|(start, end)| end.as_nanos() - start.as_nanos())
                    .sum();
                Some((cluster, busy, scenario.clusters[cluster].cycle.as_nanos()))
            }
            Some((cluster, MemberKind::Sporadic { .. })) => task
                .reservation
                .map(|r| (cluster, r.budget.as_nanos(), r.period.as_nanos())),
            // No budget: it takes only what the reservations leave; or counted as its
            // reservation's owner.
            Some((_, MemberKind::BestEffort | MemberKind::Shared { .. })) | None => None,
        };
        if let Some((cluster, numerator, denominator)) = share {
            let spec = &scenario.clusters[cluster];
            let (sum, warned) = clusters.entry(cluster).or_insert((Bandwidth::ZERO, false));
            sum.add(numerator, denominator);
            let count = spec.cores.len();
            if sum.above(count as u64) && !*warned {
                *warned = true;
                // Once per cluster: a scan of its members per task made validation quadratic.
                let has_partition = spec
                    .members
                    .iter()
                    .any(|m| matches!(m.kind, MemberKind::Partition { .. }));
                let plural = if count == 1 { "core" } else { "cores" };
                found.push(source.error(
                    at(raw_task.reservation.as_ref().map(|r| r.span())),
                    format!(
                        "cluster `{}`'s bandwidth reaches {:.3} with task `{name}` (sum of \
                         budget over period{}), above its {count} {plural}: the cluster is \
                         overloaded",
                        spec.name,
                        sum.approximate(),
                        if has_partition {
                            ", and of slot time over cycle"
                        } else {
                            ""
                        }
                    ),
                    "allowed: a bandwidth of at most the cluster's number of cores; shorten \
                     budgets, lengthen periods or give the cluster more cores",
                ));
            }
        }
    }
    for (index, (spanned, server)) in raw.server.iter().zip(&scenario.servers).enumerate() {
        let call = crate::model::ServerStep::Invoke(index);
        let called_by_a_server = scenario
            .servers
            .iter()
            .any(|other| other.body.contains(&call));
        if server.clients.is_empty() && !called_by_a_server {
            found.push(source.error(
                spanned.get_ref().name.span(),
                format!("nothing invokes server `{}`", server.name),
                format!(
                    "allowed: a script step {{ invoke = \"{}\" }} in a task that calls it, or \
                     no [[server]] table",
                    server.name
                ),
            ));
        }
    }
    found.sort_by_key(|w| w.span().map_or(0, |s| s.start));
    found
}

/// A sum of bandwidths `budget / period`, as the exact fraction `numerator / denominator`
/// while it fits in 128 bits (always for periods of whole microseconds or coarser with few
/// distinct prime factors), else approximately.
#[derive(Clone, Copy)]
enum Bandwidth {
    Exact { numerator: u128, denominator: u128 },
    Approximate(f64),
}

impl Bandwidth {
    const ZERO: Bandwidth = Bandwidth::Exact {
        numerator: 0,
        denominator: 1,
    };

    fn add(&mut self, budget: u64, period: u64) {
        let (budget, period) = (u128::from(budget), u128::from(period.max(1)));
        *self = match *self {
            Bandwidth::Exact {
                numerator,
                denominator,
            } => {
                // a/b + c/d = (a (l/b) + c (l/d)) / l with l = lcm(b, d), then reduced.
                let exact = (|| {
                    let common = denominator.checked_mul(period / gcd(denominator, period))?;
                    let left = numerator.checked_mul(common / denominator)?;
                    let right = budget.checked_mul(common / period)?;
                    let sum = left.checked_add(right)?;
                    let divisor = gcd(sum, common);
                    Some(Bandwidth::Exact {
                        numerator: sum / divisor,
                        denominator: common / divisor,
                    })
                })();
                exact.unwrap_or(Bandwidth::Approximate(
                    self.approximate() + budget as f64 / period as f64,
                ))
            }
            Bandwidth::Approximate(sum) => {
                Bandwidth::Approximate(sum + budget as f64 / period as f64)
            }
        };
    }

    /// True when the sum is above `cores`.
    fn above(self, cores: u64) -> bool {
        match self {
            Bandwidth::Exact {
                numerator,
                denominator,
            } => numerator > u128::from(cores).saturating_mul(denominator),
            Bandwidth::Approximate(sum) => sum > cores as f64 + 1e-9,
        }
    }

    fn approximate(self) -> f64 {
        match self {
            Bandwidth::Exact {
                numerator,
                denominator,
            } => numerator as f64 / denominator as f64,
            Bandwidth::Approximate(sum) => sum,
        }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// A reservation's eta above its budget: the server cannot run a region that long at once.
fn eta_above_budget(
    raw: &RawTask,
    task: &crate::model::TaskSpec,
    source: &Source,
    found: &mut Vec<SpecError>,
) {
    let (Some(reservation), Some(raw_reservation)) = (&task.reservation, &raw.reservation) else {
        return;
    };
    if reservation.non_preemptive > reservation.budget {
        let span = raw_reservation
            .get_ref()
            .non_preemptive
            .as_ref()
            .map_or_else(|| raw_reservation.span(), |eta| eta.span());
        found.push(source.error(
            span,
            format!(
                "task `{}`'s non-preemptive region {} is longer than its reservation's budget {}",
                task.name, reservation.non_preemptive, reservation.budget
            ),
            "allowed: non-preemptive at most the budget (eta <= b, as the SPR paper assumes)",
        ));
    }
}
