//! Which test a cluster's reservations get, and its verdict: the response-time analyses
//! (on one core or global, beside time partitions), the tests against the slots' supply,
//! Bertogna, Cirinei and Lipari's test beside partitions, and AMC-rtb.

use bulwark_core::Duration;
use bulwark_spec::SporadicOrder;

use super::fits::masks_added;
use super::{
    ClusterVerdict, FixedPriorityRta, Member, MemberReservation, SupplyTest, PARTITIONS_NOT_IN_GFB,
    SLOT_SUPPLY_TOO_MANY_DEADLINES,
};
use crate::global_fp::{self, FpTask, Response};
use crate::slot_supply::{self, SlotSupply};
use crate::{amc, global_edf};

/// Bertogna and Cirinei's response-time analysis of a fixed-priority cluster's sporadic
/// reservations (the caller has checked that none is a constant-bandwidth server; a
/// high-criticality one counts at `e^H`, worst-case reservations), beside its time partitions
/// of `cycle`, each one more interfering entity on more cores
/// ([`global_fp::rta_partitioned`]): each reservation a sporadic task `C = e`, `T = D = p`
/// (an SPR server's workload reaching `R + e` back, [`FpTask::sporadic_server`]) at its
/// member's priority, which is its reservation's, as the simulator
/// builds it (`unwrap_or_default`: validation gives every member of a fixed-priority
/// cluster a priority). The analysis
/// orders equal priorities by position, the members' file order, which is the clustered
/// scheduler's tie rule: its rank is `(255 - priority, reservation id)` and a cluster's
/// reservation ids are its members in order. The terminations' `masks` are interference on
/// one core each ([`global_fp::rta_masked`]). On one core the exact uniprocessor analysis
/// runs instead (its workloads need no carry-in: the critical instant releases every
/// reservation together), the masks added to every window. Records each member's response
/// and gives the verdict.
pub(super) fn fixed_priority(
    members: &mut [Member],
    cores: u16,
    masks: &[Duration],
    cycle: Duration,
) -> ClusterVerdict {
    // Best-effort members run below every reservation: no interference, no bound. Time
    // partitions (on more cores only: one core's go to `on_slot_supply`) are entities.
    let tasks: Vec<FpTask> = members
        .iter()
        .filter(|m| m.reservation.is_sporadic())
        .map(|m| {
            let (budget, period) = m.reservation.share();
            FpTask {
                budget,
                period,
                priority: m.priority.unwrap_or_default(),
                sporadic_server: m.reservation.is_spr_server(),
            }
        })
        .collect();
    let (responses, schedulable) = if cores == 1 {
        // One core: the exact uniprocessor analysis (the critical instant releases every
        // reservation together), tighter than BC07's carry-in workloads; the masks added to
        // every window. AMC-rtb with every task of low criticality is exactly that, an SPR
        // server a sporadic task in it.
        let one_core: Vec<amc::McTask> = tasks
            .iter()
            .map(|t| amc::McTask {
                sporadic_server: t.sporadic_server,
                ..amc::McTask::low(t.budget, t.period, t.priority)
            })
            .collect();
        let bounds = amc::rtb(&one_core, masks);
        (bounds.low, bounds.schedulable)
    } else {
        let partitions = partition_supplies(members, cycle);
        let rta = global_fp::rta_partitioned(&tasks, cores, masks, &partitions);
        (rta.responses, rta.schedulable)
    };
    for (member, response) in members
        .iter_mut()
        .filter(|m| m.reservation.is_sporadic())
        .zip(&responses)
    {
        member.response = Some(*response);
    }
    let summary = FixedPriorityRta {
        cores,
        not_shown: members
            .iter()
            .position(|m| matches!(m.response, Some(Response::Exceeds(_)))),
    };
    if schedulable {
        ClusterVerdict::RtaSchedulable(summary)
    } else {
        ClusterVerdict::RtaNotShownSchedulable(summary)
    }
}

/// The test of a one-core cluster's sporadic reservations against the supply its partitions'
/// slots leave ([`crate::slot_supply`]): each reservation `C = e`, `T = D = p` (at its
/// member's priority under fixed-priority order, equal priorities in member order), the
/// terminations' `masks` added up and counted in every window. Records each member's bound
/// (fixed-priority order) and gives the verdict.
pub(super) fn on_slot_supply(
    members: &mut [Member],
    order: SporadicOrder,
    cycle: Duration,
    masks: &[Duration],
) -> ClusterVerdict {
    let Some(supply) = partitions_supply(members, cycle) else {
        return ClusterVerdict::NotAnalysed(PARTITIONS_NOT_IN_GFB);
    };
    let sporadic = |m: &Member| m.reservation.is_sporadic();
    let reservations: Vec<slot_supply::Reservation> = members
        .iter()
        .filter(|m| sporadic(m))
        .map(|m| {
            let (budget, period) = m.reservation.share();
            slot_supply::Reservation {
                budget,
                period,
                priority: m.priority.unwrap_or_default(),
            }
        })
        .collect();
    let masked = masks_added(masks);
    let mut test = SupplyTest {
        cycle: supply.cycle(),
        free_per_cycle: supply.free_per_cycle(),
        masked,
        edf: None,
        rta: None,
    };
    let schedulable = match order {
        SporadicOrder::EarliestDeadlineFirst => {
            let verdict = slot_supply::edf(&reservations, &supply, masked.as_nanos());
            if verdict == slot_supply::EdfOnSupply::TooManyDeadlines {
                return ClusterVerdict::NotAnalysed(SLOT_SUPPLY_TOO_MANY_DEADLINES);
            }
            test.edf = Some(verdict);
            verdict == slot_supply::EdfOnSupply::Schedulable
        }
        SporadicOrder::FixedPriority => {
            let responses = slot_supply::fixed_priority(&reservations, &supply, masked.as_nanos());
            for (member, response) in members.iter_mut().filter(|m| sporadic(m)).zip(&responses) {
                member.response = Some(*response);
            }
            test.rta = Some(FixedPriorityRta {
                cores: 1,
                not_shown: members
                    .iter()
                    .position(|m| matches!(m.response, Some(Response::Exceeds(_)))),
            });
            responses.iter().all(|r| matches!(r, Response::Bounded(_)))
        }
    };
    if schedulable {
        ClusterVerdict::SupplySchedulable(test)
    } else {
        ClusterVerdict::SupplyNotShownSchedulable(test)
    }
}

/// Bertogna, Cirinei and Lipari's test of an EDF cluster's sporadic reservations beside its
/// time partitions ([`global_edf::bcl_partitioned`]): each partition runs on its own core at most
/// its most slot time in any window of the job's length (`L - sbf(L)` of its slots alone),
/// one more interfering entity like a mask.
pub(super) fn bcl_beside_partitions(
    members: &[Member],
    cores: u16,
    masks: &[Duration],
    cycle: Duration,
) -> ClusterVerdict {
    let pairs: Vec<(Duration, Duration)> = members
        .iter()
        .filter(|m| m.reservation.is_sporadic())
        .map(|m| m.reservation.share())
        .collect();
    let partitions = partition_supplies(members, cycle);
    let test = global_edf::bcl_partitioned(&pairs, cores, masks, &partitions);
    if test.schedulable {
        ClusterVerdict::BclSchedulable(test)
    } else {
        ClusterVerdict::BclNotShownSchedulable(test)
    }
}

/// Each time partition among `members` alone, as the supply its slots leave.
pub(super) fn partition_supplies(members: &[Member], cycle: Duration) -> Vec<SlotSupply> {
    members
        .iter()
        .filter_map(|m| match &m.reservation {
            MemberReservation::Partition { slots, .. } => SlotSupply::new(cycle, slots),
            _ => None,
        })
        .collect()
}

/// The supply the partitions among `members` leave on their core, `None` when there are none
/// (or no cycle).
pub(super) fn partitions_supply(members: &[Member], cycle: Duration) -> Option<SlotSupply> {
    let slots: Vec<(Duration, Duration)> = members
        .iter()
        .filter_map(|m| match &m.reservation {
            MemberReservation::Partition { slots, .. } => Some(slots.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    if slots.is_empty() {
        return None;
    }
    SlotSupply::new(cycle, &slots)
}

/// AMC-rtb ([`crate::amc`]) on a fixed-priority cluster whose sporadic reservations
/// (section III's rule) include high-criticality ones: each a task `C^L = e^L` (a low one's
/// `e`), `C^H = e^H`, `T = D = p` at its member's priority, equal priorities in member order
/// as in [`fixed_priority`]. On one core, on the supply time partitions' slots leave when the
/// cluster has partitions ([`amc::rtb_on_supply`]; they are neither monitored nor demoted),
/// the terminations' `masks` counted in every window; on more cores, its argument on
/// Bertogna and Cirinei's analysis ([`amc::rtb_global`]), the partitions and masks each one
/// more interfering entity. Records each member's bounds and gives the verdict.
pub(super) fn mixed_criticality(
    members: &mut [Member],
    cores: u16,
    masks: &[Duration],
    cycle: Duration,
) -> ClusterVerdict {
    let sporadic = |m: &Member| m.reservation.is_sporadic();
    let tasks: Vec<amc::McTask> = members
        .iter()
        .filter(|m| sporadic(m))
        .map(|m| {
            let (budget, period) = m.reservation.share();
            let low_budget = match m.reservation {
                MemberReservation::Sporadic { low_budget, .. } => low_budget,
                _ => None,
            };
            amc::McTask {
                low_budget: low_budget.unwrap_or(budget),
                high_budget: low_budget.map(|_| budget),
                period,
                deadline: period,
                priority: m.priority.unwrap_or_default(),
                sporadic_server: m.reservation.is_spr_server(),
            }
        })
        .collect();
    let bounds = if cores == 1 {
        match partitions_supply(members, cycle) {
            Some(supply) => amc::rtb_on_supply(&tasks, masks, &supply),
            None => amc::rtb(&tasks, masks),
        }
    } else {
        // More cores: each time partition one more interfering entity, as in BC07.
        global_fp::with_partitions(&partition_supplies(members, cycle), |beside| {
            amc::rtb_global(&tasks, cores, masks, beside)
        })
    };
    let tested = members.iter_mut().filter(|m| sporadic(m));
    for (member, (low, high)) in tested.zip(bounds.low.iter().zip(&bounds.high)) {
        member.response = Some(high.unwrap_or(*low));
        member.low_mode_response = high.map(|_| *low);
    }
    let summary = FixedPriorityRta {
        cores,
        not_shown: members.iter().position(|m| {
            [m.response, m.low_mode_response]
                .iter()
                .flatten()
                .any(|r| !matches!(r, Response::Bounded(_)))
        }),
    };
    if bounds.schedulable {
        ClusterVerdict::AmcSchedulable(summary)
    } else {
        ClusterVerdict::AmcNotShownSchedulable(summary)
    }
}
