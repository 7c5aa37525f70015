//! The members' fits and job bounds: shared reservations against their least supply, time
//! partitions' tasks against their own slots, and tasks alone in a reservation.

use bulwark_core::Duration;
use bulwark_spec::{MemberKind, Replenishment, Scenario};

use super::{Member, MemberReservation};
use crate::fit::{demand, Fit, SCRIPT_UNCHECKED};
use crate::gates::CallDrains;
use crate::global_fp::Response;
use crate::shared_reservation::{self, Sharer, Supply};
use crate::slot_supply::SlotSupply;

/// Tasks bound to one reservation (its owner and the members sharing it) are checked
/// together: their jobs use its one budget. Under section III's sporadic rule their joint
/// demand is analysed against the reservation's least supply ([`crate::shared_reservation`]),
/// in file order (the order the reservation runs its threads in), with the budget served
/// within the reservation's response bound when the response-time analysis gave one and
/// within its period otherwise. Every task of such a group gets that fit, not the one-task
/// check; a script, and every task after it in the group, is not checked (a script has no
/// fixed demand), nor is a group on a server, a partition or a best-effort reservation.
pub(super) fn fit_shared(
    scenario: &Scenario,
    drains: &CallDrains,
    specs: &[bulwark_spec::ClusterMember],
    members: &mut [Member],
) {
    // Each owner's group of member positions, owner first, gathered in one pass (a cluster
    // may have thousands of members).
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (at, spec) in specs.iter().enumerate() {
        if let MemberKind::Shared { owner } = spec.kind {
            groups.entry(owner).or_default().push(at);
        }
    }
    for (owner, sharers) in groups {
        let Some(first) = specs.iter().position(|spec| spec.task == owner) else {
            continue;
        };
        let group: Vec<usize> = std::iter::once(first).chain(sharers).collect();
        match shared_supply(&members[first]) {
            Some(supply) => fit_group(scenario, drains, specs, members, &group, &supply),
            None => {
                let others = group.len() - 1;
                let why = format!(
                    "not checked: the reservation is shared with {others} other task{}, whose \
                     jobs use its budget too; the joint demand is analysed under section III's \
                     sporadic rule only",
                    if others == 1 { "" } else { "s" }
                );
                for &at in &group {
                    members[at].fit = Fit::Unchecked(why.clone());
                }
            }
        }
    }
}

/// Each time partition's task against its own slots: a job of at most `C`, released at least
/// `T` apart (its demand as [`crate::fit`] reads it, server calls at what they drain), is
/// served only in the slots, so it completes within `R = sbf_P^-1(C + M)`, `sbf_P(t)` the
/// least slot time in any window of length `t` ([`SlotSupply::within`]) and `M` the
/// terminations' masks of the cluster added up. It fits when `R <= T` (no job waits behind
/// another); `R` is its [`Member::job_response`], bounded when also within its deadline.
pub(super) fn fit_partitions(
    scenario: &Scenario,
    drains: &CallDrains,
    specs: &[bulwark_spec::ClusterMember],
    members: &mut [Member],
    masks: &[Duration],
) {
    let masked = masks_added(masks);
    for (spec, member) in specs.iter().zip(members.iter_mut()) {
        let MemberReservation::Partition { slots, cycle, .. } = &member.reservation else {
            continue;
        };
        let task = &scenario.tasks[spec.task];
        let calls = drains.of_task(scenario, spec.task);
        let Some((spacing, execution)) = demand(&task.behaviour, &scenario.cost, &calls) else {
            member.fit = Fit::Unchecked(SCRIPT_UNCHECKED.to_owned());
            continue;
        };
        let Some(supply) = SlotSupply::within(*cycle, slots) else {
            continue;
        };
        let needed = execution.saturating_add(masked).as_nanos();
        let response = supply.time_to_supply(needed).map(Duration::from_nanos);
        let deadline = task.deadline.unwrap_or(spacing).min(spacing);
        member.job_response = Some(match response {
            Some(r) if r <= deadline => Response::Bounded(r),
            Some(r) => Response::Exceeds(r),
            None => Response::Exceeds(Duration::MAX),
        });
        member.fit = match response {
            Some(r) if r <= spacing => Fit::Carried,
            _ => Fit::Exceeds(format!(
                "a job needs up to {execution}{}, which the slots give only within {} > its \
                 releases' spacing {spacing}: jobs may wait behind one another",
                if masked.is_zero() {
                    String::new()
                } else {
                    format!(" (and the masks' {masked})")
                },
                response.map_or("no time".to_owned(), |r| r.to_string())
            )),
        };
    }
}

/// The job bound of each task alone in a reservation under section III's sporadic rule, once
/// the cluster's test holds. A job of `C` needs `k = ceil(C / e)` budgets; when its releases
/// are at least `k p` apart, every job finds the reservation replenished at its release (the
/// first when the reservation starts with its deadline passed, each later one because the
/// last replenishment for the job before came `(k - 1) p` after its release, so `p` before
/// the next). The job holds the reservation active, so each exhaustion is followed by a
/// replenishment `p` after the one before, and each budget is served within the
/// reservation's bound (its `R`, else `p`) of its replenishment: the job completes within
/// `(k - 1) p + R`, its [`Member::job_response`] (bounded when within its deadline and
/// spacing). With `k = 1` that is the task the reservation carries (`C <= e`, `T >= p`),
/// bounded by `R`.
///
/// An SPR server (which the analysis covers under fixed priority) gets the same bound: the
/// server is active from a job's release to its completion, and a job that starts with the
/// whole budget in one entry of its release's time spends it in rounds: each round's budget
/// comes back in one entry `p` after the round's (Alg. 1 plans a consumed head for `t_head +
/// p`, and Alg. 3 restarts it when it comes due to the exhausted server), and the last
/// round's part `p` after it, `k p <= T` after the release; by induction from the full queue
/// of the start, every job starts with the whole budget.
pub(super) fn bound_lone_members(
    scenario: &Scenario,
    drains: &CallDrains,
    specs: &[bulwark_spec::ClusterMember],
    members: &mut [Member],
) {
    let owners: std::collections::BTreeSet<usize> = specs
        .iter()
        .filter_map(|spec| match spec.kind {
            MemberKind::Shared { owner } => Some(owner),
            _ => None,
        })
        .collect();
    for (spec, member) in specs.iter().zip(members.iter_mut()) {
        let MemberReservation::Sporadic {
            reservation,
            replenishment: Replenishment::Sporadic | Replenishment::Spr { .. },
            ..
        } = &member.reservation
        else {
            continue;
        };
        if owners.contains(&spec.task) || matches!(member.fit, Fit::Unchecked(_)) {
            continue;
        }
        let task = &scenario.tasks[spec.task];
        let calls = drains.of_task(scenario, spec.task);
        let Some((spacing, execution)) = demand(&task.behaviour, &scenario.cost, &calls) else {
            continue;
        };
        let Some(bound) = rounds_bound(
            execution,
            spacing,
            reservation.budget,
            reservation.period,
            served_within(member.response, reservation.period),
        ) else {
            continue;
        };
        let limit = task.deadline.unwrap_or(spacing).min(spacing);
        member.job_response = Some(if bound <= limit {
            Response::Bounded(bound)
        } else {
            Response::Exceeds(bound)
        });
    }
}

/// `(k - 1) p + served_within`, `k = ceil(C / e)` budgets for a job of `execution`, when the
/// releases are at least `k p` apart; `None` otherwise (or on no budget, or overflow).
fn rounds_bound(
    execution: Duration,
    spacing: Duration,
    budget: Duration,
    period: Duration,
    served_within: Duration,
) -> Option<Duration> {
    if budget.is_zero() {
        return None;
    }
    let rounds = execution.as_nanos().div_ceil(budget.as_nanos()).max(1);
    let span = period.as_nanos().checked_mul(rounds)?;
    if spacing.as_nanos() < span {
        return None;
    }
    let waits = period.as_nanos().checked_mul(rounds - 1)?;
    waits
        .checked_add(served_within.as_nanos())
        .map(Duration::from_nanos)
}

/// When a reservation of `period` has its budget after each replenishment: within its
/// bound `response` when one was shown, else within the period (the EDF tests' guarantee).
pub(super) fn served_within(response: Option<Response>, period: Duration) -> Duration {
    match response {
        Some(Response::Bounded(response)) => response.min(period),
        _ => period,
    }
}

/// The terminations' masks added up (`Duration::MAX` when one is unbounded).
pub(super) fn masks_added(masks: &[Duration]) -> Duration {
    masks
        .iter()
        .fold(Duration::ZERO, |sum, mask| sum.saturating_add(*mask))
}

/// The least supply of `owner`'s reservation to its threads, if it follows section III's
/// sporadic rule.
pub(super) fn shared_supply(owner: &Member) -> Option<Supply> {
    let MemberReservation::Sporadic {
        reservation,
        replenishment: Replenishment::Sporadic,
        ..
    } = &owner.reservation
    else {
        return None;
    };
    let served_within = served_within(owner.response, reservation.period);
    Some(Supply::sporadic(
        reservation.budget,
        reservation.period,
        served_within,
    ))
}

/// The fits of one group of `members` (positions, owner first) against `supply`.
pub(super) fn fit_group(
    scenario: &Scenario,
    drains: &CallDrains,
    specs: &[bulwark_spec::ClusterMember],
    members: &mut [Member],
    group: &[usize],
    supply: &Supply,
) {
    // The tasks with a fixed demand, up to the first script.
    let sharers: Vec<Sharer> = group
        .iter()
        .map_while(|&at| {
            let spec = &scenario.tasks[specs[at].task];
            let drains = drains.of_task(scenario, specs[at].task);
            let (spacing, execution) = demand(&spec.behaviour, &scenario.cost, &drains)?;
            Some(Sharer {
                execution,
                spacing,
                deadline: spec.deadline.unwrap_or(spacing),
            })
        })
        .collect();
    let bounds = shared_reservation::responses(supply, &sharers);
    let tasks = group.len();
    let script = group.get(sharers.len()).map(|&at| members[at].name.clone());
    for (index, &at) in group.iter().enumerate() {
        members[at].fit = match (bounds.get(index), sharers.get(index)) {
            (Some(Response::Bounded(_)), _) => Fit::Carried,
            (Some(Response::Exceeds(window)), Some(sharer)) => Fit::Exceeds(format!(
                "with the {tasks} tasks bound to the reservation, a job may take {window} > \
                 {} (its deadline or period, whichever is shorter): their joint demand needs \
                 more than the reservation gives",
                sharer.deadline.min(sharer.spacing)
            )),
            (Some(_), _) => Fit::Unchecked(
                "not checked: a task before it in the shared reservation may miss its \
                 deadline, so its interference is not bounded"
                    .to_owned(),
            ),
            (None, _) if index == sharers.len() => Fit::Unchecked(SCRIPT_UNCHECKED.to_owned()),
            (None, _) => Fit::Unchecked(format!(
                "not checked: `{}`, before it in the shared reservation, is a script with no \
                 fixed demand",
                script.as_deref().unwrap_or_default()
            )),
        };
        members[at].job_response = bounds.get(index).copied();
    }
}
