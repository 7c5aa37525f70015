//! The analysis of a scenario's clusters (`[[cluster]]`), the MC-IPC paper's clustered
//! reservation scheduler (section III): each member runs in a sporadic reservation `(e, p)` of
//! its own, and the `m` most important active reservations with budget run on the cluster's
//! `m` cores. What is analysed is the reservations, as implicit-deadline sporadic tasks
//! `(e, p)`: their total bandwidth against `m`, under EDF order Goossens, Funk and Baruah's
//! test ([`crate::global_edf`]), and under fixed-priority order Bertogna and Cirinei's
//! response-time analysis ([`crate::global_fp`]), each reservation a sporadic task `C = e`,
//! `T = D = p` at its member's priority (equal priorities in member order, as the scheduler
//! breaks ties by reservation id). A fixed-priority cluster of one core with a
//! high-criticality reservation (Vestal's mode switch, section VII) gets AMC-rtb instead
//! ([`crate::amc`]): each reservation `C^L = e^L` (a low one's `e`), `C^H = e^H`. On a
//! cluster of one core with time partitions, the sporadic reservations are tested against the
//! supply the slots leave ([`crate::slot_supply`]): the demand test under EDF order, the
//! response-time analysis under fixed priority. On more cores a partition takes one core
//! during its slots, at most `L - sbf(L)` of its slots alone in any window of length `L`:
//! Bertogna, Cirinei and Lipari's test (EDF order) and Bertogna and Cirinei's response-time
//! analysis (fixed priority) count it as one more interfering entity, like a mask. No test
//! covers a high-criticality reservation under EDF order or on more cores (the mode switch
//! demotes the others), and the response-time analyses do not cover SPR servers (they keep
//! budget across a suspension): such a cluster's bandwidth is reported, a partition counting
//! its slots' time over the cycle, and no verdict. A best-effort member runs below
//! every reservation on no budget: it takes nothing from them, gets no guarantee, and is left
//! out of the bandwidth and the tests. A termination run in a cluster masks one of its cores
//! for up to its mask ([`crate::reclamation`]): the response-time analysis counts each as
//! interference on one core ([`global_fp::rta_masked`]); GFB has no such term, so under EDF
//! order a cluster with terminations gets Bertogna, Cirinei and Lipari's interference test
//! instead, with the masks ([`global_edf::bcl`]).

use bulwark_core::{Duration, Priority};
use bulwark_spec::{MemberKind, Replenishment, Reservation, Scenario, SporadicOrder};

use crate::amc;
use crate::bandwidth::{self, Admission};
use crate::fit::{demand, fit, Fit, SCRIPT_UNCHECKED};
use crate::gates::CallDrains;
use crate::global_edf::{self, Bcl, Gfb};
use crate::global_fp::{self, FpTask, Response};
use crate::reclamation::{self, Masked};
use crate::shared_reservation::{self, Sharer, Supply};
use crate::slot_supply::{self, SlotSupply};

/// One cluster's analysis.
#[derive(Clone, Debug)]
pub struct ClusterAnalysis {
    /// The cluster's name.
    pub name: String,
    /// Its cores, in file order (`m` is their count).
    pub cores: Vec<u16>,
    /// How its reservations are ordered.
    pub order: SporadicOrder,
    /// Its members, in file order.
    pub members: Vec<Member>,
    /// The reservations' total bandwidth `U = sum e_i / p_i` (its `admitted`, `U <= 1`, is
    /// of no use here: the cluster has `m` cores).
    pub bandwidth: Admission,
    /// The verdict on the reservations.
    pub verdict: ClusterVerdict,
    /// The terminations' masks the verdict counts, one per termination in the cluster that
    /// masks for some time (`Duration::MAX` when unbounded): empty when there are none, or
    /// when no test ran.
    pub masks: Vec<Duration>,
}

/// What the analysis says of a cluster's reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClusterVerdict {
    /// EDF order and Goossens, Funk and Baruah's test holds: every reservation gets its
    /// budget `e` within `p` of each replenishment.
    Schedulable(Gfb),
    /// EDF order and the test fails; it is sufficient only, so the set may still be
    /// schedulable, but nothing here shows it.
    NotShownSchedulable(Gfb),
    /// EDF order on cores that terminations mask, and Bertogna, Cirinei and Lipari's test
    /// holds with the masks ([`ClusterAnalysis::masks`]): every reservation gets its budget
    /// `e` within `p` of each replenishment.
    BclSchedulable(Bcl),
    /// EDF order with masks and that test fails (sufficient only).
    BclNotShownSchedulable(Bcl),
    /// Fixed-priority order and Bertogna and Cirinei's response-time analysis (on one core,
    /// the exact uniprocessor one: [`FP_RTA_TEST`]) bounds every reservation's response
    /// within its period: every reservation gets its budget `e` within `p` of each
    /// replenishment. Each member's bound is its [`Member::response`].
    RtaSchedulable(FixedPriorityRta),
    /// Fixed-priority order and some reservation's iteration passed its period; the analysis
    /// is sufficient only, so the set may still be schedulable, but nothing here shows it.
    RtaNotShownSchedulable(FixedPriorityRta),
    /// Fixed-priority order on one core with high-criticality reservations, and AMC-rtb
    /// ([`crate::amc`]) bounds every reservation's low-mode response `R^L` (its
    /// [`Member::low_mode_response`]) and every high-criticality one's `R^*` (its
    /// [`Member::response`]) within its period: while every job stays within `e^L`, every
    /// reservation gets its budget within `p` of each replenishment, and a high-criticality
    /// one always does.
    AmcSchedulable(FixedPriorityRta),
    /// The same test and some bound passed its period (sufficient only).
    AmcNotShownSchedulable(FixedPriorityRta),
    /// One core with time partitions, and the sporadic reservations pass their test against
    /// the supply the slots leave ([`crate::slot_supply`]): every reservation gets its budget
    /// `e` within `p` of each replenishment (a partition runs in its slots).
    SupplySchedulable(SupplyTest),
    /// The same test fails (sufficient only).
    SupplyNotShownSchedulable(SupplyTest),
    /// No test applies; says why (one of [`PARTITIONS_NOT_IN_GFB`],
    /// [`HIGH_CRITICALITY_NOT_IN_GFB`], [`HIGH_CRITICALITY_NOT_IN_GLOBAL_FP_RTA`] and [`SERVERS_NOT_IN_GLOBAL_FP_RTA`]).
    NotAnalysed(&'static str),
}

/// The test of a one-core cluster's sporadic reservations against the supply its time
/// partitions leave ([`crate::slot_supply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupplyTest {
    /// The cycle `H`.
    pub cycle: Duration,
    /// `H - B`: what the slots leave per cycle.
    pub free_per_cycle: Duration,
    /// The terminations' masks added up, counted in every window (`Duration::MAX`:
    /// unbounded).
    pub masked: Duration,
    /// EDF order: the demand test's verdict.
    pub edf: Option<slot_supply::EdfOnSupply>,
    /// Fixed-priority order: the response-time analysis's summary (the members' bounds are
    /// their [`Member::response`]).
    pub rta: Option<FixedPriorityRta>,
}

/// What a response-time analysis (Bertogna and Cirinei's, or AMC-rtb) found for a
/// fixed-priority cluster; the per-member figures are the members' [`Member::response`] (and
/// [`Member::low_mode_response`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedPriorityRta {
    /// The cores, `m`.
    pub cores: u16,
    /// The member (index into [`ClusterAnalysis::members`]) whose iteration passed its period,
    /// if one did (the first in file order under AMC-rtb); under Bertogna and Cirinei's
    /// analysis the members below it in priority are not computed.
    pub not_shown: Option<usize>,
}

impl ClusterVerdict {
    /// `Some(true)` shown schedulable, `Some(false)` not shown, `None` not analysed.
    pub fn schedulable(&self) -> Option<bool> {
        match self {
            ClusterVerdict::Schedulable(_)
            | ClusterVerdict::BclSchedulable(_)
            | ClusterVerdict::RtaSchedulable(_)
            | ClusterVerdict::AmcSchedulable(_)
            | ClusterVerdict::SupplySchedulable(_) => Some(true),
            ClusterVerdict::NotShownSchedulable(_)
            | ClusterVerdict::BclNotShownSchedulable(_)
            | ClusterVerdict::RtaNotShownSchedulable(_)
            | ClusterVerdict::AmcNotShownSchedulable(_)
            | ClusterVerdict::SupplyNotShownSchedulable(_) => Some(false),
            ClusterVerdict::NotAnalysed(_) => None,
        }
    }

    /// Goossens, Funk and Baruah's figures, when that test ran (EDF order); `None` for the
    /// response-time analysis too (see [`ClusterVerdict::rta`] and
    /// [`ClusterVerdict::test_name`]).
    pub fn test(&self) -> Option<&Gfb> {
        match self {
            ClusterVerdict::Schedulable(test) | ClusterVerdict::NotShownSchedulable(test) => {
                Some(test)
            }
            _ => None,
        }
    }

    /// The response-time analysis's summary, when one ran (fixed-priority order: Bertogna
    /// and Cirinei's or AMC-rtb).
    pub fn rta(&self) -> Option<&FixedPriorityRta> {
        match self {
            ClusterVerdict::RtaSchedulable(rta)
            | ClusterVerdict::RtaNotShownSchedulable(rta)
            | ClusterVerdict::AmcSchedulable(rta)
            | ClusterVerdict::AmcNotShownSchedulable(rta) => Some(rta),
            ClusterVerdict::SupplySchedulable(test)
            | ClusterVerdict::SupplyNotShownSchedulable(test) => test.rta.as_ref(),
            _ => None,
        }
    }

    /// Bertogna, Cirinei and Lipari's verdict, when that test ran (EDF order with masks).
    pub fn bcl(&self) -> Option<&Bcl> {
        match self {
            ClusterVerdict::BclSchedulable(test) | ClusterVerdict::BclNotShownSchedulable(test) => {
                Some(test)
            }
            _ => None,
        }
    }

    /// Which test ran, for reports: [`GFB_TEST`], [`BCL_TEST`], [`GLOBAL_FP_RTA_TEST`],
    /// [`AMC_RTB_TEST`], or `None`.
    pub fn test_name(&self) -> Option<&'static str> {
        match self {
            ClusterVerdict::Schedulable(_) | ClusterVerdict::NotShownSchedulable(_) => {
                Some(GFB_TEST)
            }
            ClusterVerdict::BclSchedulable(_) | ClusterVerdict::BclNotShownSchedulable(_) => {
                Some(BCL_TEST)
            }
            ClusterVerdict::RtaSchedulable(rta) | ClusterVerdict::RtaNotShownSchedulable(rta) => {
                Some(match rta.cores {
                    1 => FP_RTA_TEST,
                    _ => GLOBAL_FP_RTA_TEST,
                })
            }
            ClusterVerdict::AmcSchedulable(_) | ClusterVerdict::AmcNotShownSchedulable(_) => {
                Some(AMC_RTB_TEST)
            }
            ClusterVerdict::SupplySchedulable(test)
            | ClusterVerdict::SupplyNotShownSchedulable(test) => Some(match test.rta {
                Some(_) => SLOT_SUPPLY_RTA_TEST,
                None => SLOT_SUPPLY_EDF_TEST,
            }),
            ClusterVerdict::NotAnalysed(_) => None,
        }
    }

    /// The slot-supply test, when it ran.
    pub fn supply(&self) -> Option<&SupplyTest> {
        match self {
            ClusterVerdict::SupplySchedulable(test)
            | ClusterVerdict::SupplyNotShownSchedulable(test) => Some(test),
            _ => None,
        }
    }

    /// Why no test ran, when none did.
    pub fn reason(&self) -> Option<&'static str> {
        match self {
            ClusterVerdict::NotAnalysed(reason) => Some(reason),
            _ => None,
        }
    }
}

/// The name of Goossens, Funk and Baruah's test in reports (`test` in JSON).
pub const GFB_TEST: &str = "gfb";

/// The name of Bertogna, Cirinei and Lipari's test in reports (`test` in JSON).
pub const BCL_TEST: &str = "global-edf-bcl";

/// The name of Bertogna and Cirinei's response-time analysis in reports.
pub const GLOBAL_FP_RTA_TEST: &str = "global-fp-rta";

/// The name of the exact uniprocessor response-time analysis a fixed-priority cluster of one
/// core gets instead, in reports.
pub const FP_RTA_TEST: &str = "fp-rta";

/// The name of AMC-rtb ([`crate::amc`]) in reports.
pub const AMC_RTB_TEST: &str = "amc-rtb";

/// The name of the EDF demand test against the slots' supply in reports.
pub const SLOT_SUPPLY_EDF_TEST: &str = "edf-slot-supply";

/// The name of the response-time analysis against the slots' supply in reports.
pub const SLOT_SUPPLY_RTA_TEST: &str = "fp-rta-slot-supply";

/// Why no test ran on a one-core cluster with time partitions whose hyperperiod holds too
/// many deadlines.
pub const SLOT_SUPPLY_TOO_MANY_DEADLINES: &str =
    "the demand test against the slots' supply would examine more than 4,000,000 deadlines \
     in the hyperperiod of the cycle and the periods";

/// No longer given: fixed-priority clusters of sporadic reservations now get Bertogna and
/// Cirinei's response-time analysis, and the others one of the `*_NOT_IN_GLOBAL_FP_RTA`
/// reasons. Kept for callers that compare against it.
pub const NO_GLOBAL_FIXED_PRIORITY_TEST: &str =
    "no schedulability test for global fixed priority is implemented: only the bandwidth is \
     reported";

/// Why no test ran on a fixed-priority cluster of more than one core with a
/// high-criticality reservation.
pub const HIGH_CRITICALITY_NOT_IN_GLOBAL_FP_RTA: &str =
    "Bertogna and Cirinei's response-time analysis covers sporadic reservations alone: \
     Vestal's mode switch demotes low-criticality reservations (AMC-rtb covers a cluster of \
     one core)";

/// Why no test ran on a fixed-priority cluster with an SPR (or constant-bandwidth) server.
pub const SERVERS_NOT_IN_GLOBAL_FP_RTA: &str =
    "Bertogna and Cirinei's response-time analysis covers reservations under section III's \
     sporadic rule alone: an SPR server keeps its budget across a suspension and spends it \
     later, which the sporadic task model does not allow";

/// Why no test ran on a cluster with a time partition, for reports.
pub const PARTITIONS_NOT_IN_GFB: &str =
    "Goossens, Funk and Baruah's test covers sporadic reservations alone: time partitions take \
     cores during their slots";

/// Why no test ran on a cluster with a high-criticality reservation, for reports.
pub const HIGH_CRITICALITY_NOT_IN_GFB: &str =
    "Goossens, Funk and Baruah's test covers sporadic reservations alone: Vestal's mode switch \
     demotes low-criticality reservations (AMC-rtb needs fixed-priority order: under EDF order \
     the switch moves no deadline, so a high-criticality job past e^L may be due before its \
     remaining e^H - e^L can run)";

/// One member task and its reservation.
#[derive(Clone, Debug)]
pub struct Member {
    /// The task's name.
    pub name: String,
    /// Its reservation.
    pub reservation: MemberReservation,
    /// Its priority (fixed-priority order; `None` under EDF unless the file gives one).
    pub priority: Option<Priority>,
    /// Whether the reservation can carry the task's jobs.
    pub fit: Fit,
    /// The response-time bound of its reservation (from a replenishment to the budget's
    /// end), when a response-time analysis ran (fixed-priority order); `None` otherwise.
    /// Under AMC-rtb: a high-criticality reservation's `R^*` (it holds in either mode), a
    /// low one's `R^L` (it holds in low mode only).
    pub response: Option<Response>,
    /// Under AMC-rtb, a high-criticality reservation's low-mode bound `R^L`; `None`
    /// otherwise.
    pub low_mode_response: Option<Response>,
    /// For a task bound to a reservation with others (its owner or a sharer), the bound on
    /// its jobs' response times from their joint demand ([`crate::shared_reservation`]),
    /// when it was computed; `None` otherwise.
    pub job_response: Option<Response>,
}

/// A member's reservation, as the analysis reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemberReservation {
    /// A sporadic reservation `(e, p)`.
    Sporadic {
        /// `(e, p)`; `e` is `e^H` for a high-criticality reservation.
        reservation: Reservation,
        /// How its budget comes back.
        replenishment: Replenishment,
        /// `e^L` of a high-criticality reservation; `None`: low criticality.
        low_budget: Option<Duration>,
    },
    /// A best-effort reservation: below every other, no budget and no guarantee; it takes
    /// nothing from the reservations, so it is left out of the tests.
    BestEffort,
    /// The reservation of an earlier member, shared with it: counted once, as its owner's.
    Shared {
        /// The owner's name.
        owner: String,
    },
    /// A time partition on one core of the cluster, running in its slots of every cycle.
    Partition {
        /// The scenario core.
        core: u16,
        /// Its slots `[start, end)` within the cycle.
        slots: Vec<(Duration, Duration)>,
        /// The cluster's cycle `H`.
        cycle: Duration,
    },
}

impl MemberReservation {
    /// A sporadic reservation (any replenishment rule): the tests' tasks. A time partition
    /// enters them as an interfering entity instead.
    pub fn is_sporadic(&self) -> bool {
        matches!(self, MemberReservation::Sporadic { .. })
    }

    /// False for a best-effort reservation (it has no share, takes nothing from the others
    /// and gets no guarantee) and for a shared one (tested as its owner's), so the tests
    /// leave them out.
    pub fn is_tested(&self) -> bool {
        !matches!(
            self,
            MemberReservation::BestEffort | MemberReservation::Shared { .. }
        )
    }

    /// Its share of the cluster as the time pair `(x, y)` whose ratio it is: `(e, p)`, or a
    /// partition's slot time and the cycle; none (`0 / 1 ns`) for a best-effort or shared
    /// one.
    pub fn share(&self) -> (Duration, Duration) {
        match self {
            MemberReservation::BestEffort | MemberReservation::Shared { .. } => {
                (Duration::ZERO, Duration::from_nanos(1))
            }
            MemberReservation::Sporadic { reservation, .. } => {
                (reservation.budget, reservation.period)
            }
            MemberReservation::Partition { slots, cycle, .. } => {
                let busy = slots
                    .iter()
                    .map(|(start, end)| end.as_nanos() - start.as_nanos())
                    .sum();
                (Duration::from_nanos(busy), *cycle)
            }
        }
    }
}

/// Every cluster of `scenario`, in file order.
pub fn analyse(scenario: &Scenario) -> Vec<ClusterAnalysis> {
    let terminations = reclamation::scenario_terminations(scenario);
    let drains = CallDrains::of(scenario);
    scenario
        .clusters
        .iter()
        .enumerate()
        .map(|(index, cluster)| {
            let masks: Vec<Duration> = terminations
                .iter()
                .filter(|t| t.masked == Masked::Cluster(index))
                .map(|t| t.mask.unwrap_or(Duration::MAX))
                // Reclamation at no cost masks nothing: GFB stays the EDF test then.
                .filter(|mask| !mask.is_zero())
                .collect();
            let mut members: Vec<Member> = cluster
                .members
                .iter()
                .map(|m| member(scenario, &drains, m.task, &m.kind, cluster.cycle))
                .collect();
            // The reservations with a share; best-effort ones have none.
            let pairs: Vec<(Duration, Duration)> = members
                .iter()
                .filter(|m| m.reservation.is_tested())
                .map(|m| m.reservation.share())
                .collect();
            let cores = u16::try_from(cluster.cores.len()).unwrap_or(u16::MAX);
            let has_partition = cluster
                .members
                .iter()
                .any(|m| matches!(m.kind, MemberKind::Partition { .. }));
            let has_high_criticality = cluster.members.iter().any(|m| {
                matches!(
                    m.kind,
                    MemberKind::Sporadic {
                        low_budget: Some(_),
                        ..
                    }
                )
            });
            // Only section III's rule makes a reservation a sporadic task: an SPR (or CBS)
            // server keeps budget while inactive.
            let has_server = cluster.members.iter().any(|m| {
                matches!(
                    m.kind,
                    MemberKind::Sporadic {
                        replenishment: Replenishment::Spr { .. } | Replenishment::ConstantBandwidth,
                        ..
                    }
                )
            });
            let verdict = match cluster.order {
                // One core: the reservations share what the slots leave.
                _ if has_partition && cores == 1 && !has_high_criticality => match cluster.order {
                    SporadicOrder::FixedPriority if has_server => {
                        ClusterVerdict::NotAnalysed(SERVERS_NOT_IN_GLOBAL_FP_RTA)
                    }
                    order => on_slot_supply(&mut members, order, cluster.cycle, &masks),
                },
                // AMC-rtb on one core, on what the slots leave when there are partitions.
                SporadicOrder::FixedPriority
                    if has_high_criticality && cores == 1 && !has_server =>
                {
                    mixed_criticality(&mut members, &masks, cluster.cycle)
                }
                // More cores: no mode switch in BC07, nor servers.
                SporadicOrder::FixedPriority if has_high_criticality && cores != 1 => {
                    ClusterVerdict::NotAnalysed(HIGH_CRITICALITY_NOT_IN_GLOBAL_FP_RTA)
                }
                SporadicOrder::FixedPriority if has_server => {
                    ClusterVerdict::NotAnalysed(SERVERS_NOT_IN_GLOBAL_FP_RTA)
                }
                // With time partitions on more cores, each one more interfering entity.
                SporadicOrder::FixedPriority => {
                    fixed_priority(&mut members, cores, &masks, cluster.cycle)
                }
                // More cores beside partitions: Bertogna, Cirinei and Lipari's test with each
                // partition one more interfering entity.
                SporadicOrder::EarliestDeadlineFirst if has_partition && !has_high_criticality => {
                    bcl_beside_partitions(&members, cores, &masks, cluster.cycle)
                }
                // GFB's and BCL's tasks each keep their own deadline: a mode switch
                // demotes some, with or without partitions.
                SporadicOrder::EarliestDeadlineFirst if has_high_criticality => {
                    ClusterVerdict::NotAnalysed(HIGH_CRITICALITY_NOT_IN_GFB)
                }
                // GFB has no term for a masked core; the interference test has.
                SporadicOrder::EarliestDeadlineFirst if !masks.is_empty() => {
                    let test = global_edf::bcl(&pairs, cores, &masks);
                    if test.schedulable {
                        ClusterVerdict::BclSchedulable(test)
                    } else {
                        ClusterVerdict::BclNotShownSchedulable(test)
                    }
                }
                SporadicOrder::EarliestDeadlineFirst => {
                    let test = global_edf::gfb(&pairs, cores);
                    if test.schedulable {
                        ClusterVerdict::Schedulable(test)
                    } else {
                        ClusterVerdict::NotShownSchedulable(test)
                    }
                }
            };
            // After the verdict: a reservation's response bounds when its budget is served.
            fit_shared(scenario, &drains, &cluster.members, &mut members);
            fit_partitions(scenario, &drains, &cluster.members, &mut members, &masks);
            if verdict.schedulable() == Some(true) {
                bound_lone_members(scenario, &drains, &cluster.members, &mut members);
            }
            let counted =
                verdict.rta().is_some() || verdict.bcl().is_some() || verdict.supply().is_some();
            ClusterAnalysis {
                name: cluster.name.clone(),
                cores: cluster.cores.clone(),
                order: cluster.order,
                members,
                bandwidth: bandwidth::admit(&pairs),
                verdict,
                masks: if counted { masks } else { Vec::new() },
            }
        })
        .collect()
}

fn member(
    scenario: &Scenario,
    drains: &CallDrains,
    task: usize,
    kind: &MemberKind,
    cycle: Duration,
) -> Member {
    let spec = &scenario.tasks[task];
    let (reservation, fit) = match kind {
        MemberKind::Sporadic {
            replenishment,
            low_budget,
        } => {
            // Validation gives every sporadic member a reservation; a zero one counts for
            // nothing.
            let reservation = spec
                .reservation
                .unwrap_or(Reservation::new(Duration::ZERO, Duration::from_nanos(1)));
            let sporadic = MemberReservation::Sporadic {
                reservation,
                replenishment: *replenishment,
                low_budget: *low_budget,
            };
            let drains = drains.of_task(scenario, task);
            (
                sporadic,
                fit(&spec.behaviour, reservation, &scenario.cost, &drains),
            )
        }
        MemberKind::BestEffort => (
            MemberReservation::BestEffort,
            Fit::Unchecked(
                "not checked: a best-effort reservation has no budget; it runs on what the \
                 reservations leave"
                    .to_owned(),
            ),
        ),
        MemberKind::Shared { owner } => (
            MemberReservation::Shared {
                owner: scenario.tasks[*owner].name.clone(),
            },
            Fit::Unchecked(format!(
                "not checked: the task shares the reservation of `{}`",
                scenario.tasks[*owner].name
            )),
        ),
        MemberKind::Partition { core, slots } => (
            MemberReservation::Partition {
                core: *core,
                slots: slots.clone(),
                cycle,
            },
            // A job's share depends on where its release falls among the slots.
            Fit::Unchecked(
                "not checked: a time partition runs in its slots, not on a budget per period"
                    .to_owned(),
            ),
        ),
    };
    Member {
        name: spec.name.clone(),
        reservation,
        priority: spec.priority,
        fit,
        response: None,
        low_mode_response: None,
        job_response: None,
    }
}

/// Tasks bound to one reservation (its owner and the members sharing it) are checked
/// together: their jobs use its one budget. Under section III's sporadic rule their joint
/// demand is analysed against the reservation's least supply ([`crate::shared_reservation`]),
/// in file order (the order the reservation runs its threads in), with the budget served
/// within the reservation's response bound when the response-time analysis gave one and
/// within its period otherwise. Every task of such a group gets that fit, not the one-task
/// check; a script, and every task after it in the group, is not checked (a script has no
/// fixed demand), nor is a group on a server, a partition or a best-effort reservation.
fn fit_shared(
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
fn fit_partitions(
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

/// The job bound of each task alone in a reservation under section III's sporadic rule that
/// carries it (`C <= e`, `T >= p`), once the cluster's test holds. Its releases are at least
/// `p` apart, so every replenishment comes at a release: the first when the reservation
/// starts with its deadline passed, and each later one because the previous came `T >= p`
/// before. So a job gets `e >= C` within the reservation's bound (its `R`, else `p`) of its
/// release, and that is its [`Member::job_response`] (bounded when within its deadline and
/// spacing).
fn bound_lone_members(
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
            replenishment: Replenishment::Sporadic,
            ..
        } = &member.reservation
        else {
            continue;
        };
        if owners.contains(&spec.task) || member.fit != Fit::Carried {
            continue;
        }
        let task = &scenario.tasks[spec.task];
        let calls = drains.of_task(scenario, spec.task);
        let Some((spacing, _)) = demand(&task.behaviour, &scenario.cost, &calls) else {
            continue;
        };
        let served_within = served_within(member.response, reservation.period);
        let limit = task.deadline.unwrap_or(spacing).min(spacing);
        member.job_response = Some(if served_within <= limit {
            Response::Bounded(served_within)
        } else {
            Response::Exceeds(served_within)
        });
    }
}

/// When a reservation of `period` has its budget after each replenishment: within its
/// bound `response` when one was shown, else within the period (the EDF tests' guarantee).
fn served_within(response: Option<Response>, period: Duration) -> Duration {
    match response {
        Some(Response::Bounded(response)) => response.min(period),
        _ => period,
    }
}

/// The terminations' masks added up (`Duration::MAX` when one is unbounded).
fn masks_added(masks: &[Duration]) -> Duration {
    masks
        .iter()
        .fold(Duration::ZERO, |sum, mask| sum.saturating_add(*mask))
}

/// The least supply of `owner`'s reservation to its threads, if it follows section III's
/// sporadic rule.
fn shared_supply(owner: &Member) -> Option<Supply> {
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
fn fit_group(
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

/// Bertogna and Cirinei's response-time analysis of a fixed-priority cluster's sporadic
/// reservations (the caller has checked that every member is one, under section III's rule
/// and of low criticality): each a sporadic task `C = e`, `T = D = p` at its member's
/// priority, which is its reservation's, as the simulator builds it (`unwrap_or_default`:
/// validation gives every member of a fixed-priority cluster a priority). The analysis
/// orders equal priorities by position, the members' file order, which is the clustered
/// scheduler's tie rule: its rank is `(255 - priority, reservation id)` and a cluster's
/// reservation ids are its members in order. The terminations' `masks` are interference on
/// one core each ([`global_fp::rta_masked`]). On one core the exact uniprocessor analysis
/// runs instead (its workloads need no carry-in: the critical instant releases every
/// reservation together), the masks added to every window. Records each member's response
/// and gives the verdict.
fn fixed_priority(
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
            }
        })
        .collect();
    let (responses, schedulable) = if cores == 1 {
        // One core: the exact uniprocessor analysis (the critical instant releases every
        // reservation together), tighter than BC07's carry-in workloads; the masks added to
        // every window. AMC-rtb with every task of low criticality is exactly that.
        let one_core: Vec<amc::McTask> = tasks
            .iter()
            .map(|t| amc::McTask {
                low_budget: t.budget,
                high_budget: None,
                period: t.period,
                deadline: t.period,
                priority: t.priority,
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
fn on_slot_supply(
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
/// time partitions ([`global_edf::bcl_beside`]): each partition runs on its own core at most
/// its most slot time in any window of the job's length (`L - sbf(L)` of its slots alone),
/// one more interfering entity like a mask.
fn bcl_beside_partitions(
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
fn partition_supplies(members: &[Member], cycle: Duration) -> Vec<SlotSupply> {
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
fn partitions_supply(members: &[Member], cycle: Duration) -> Option<SlotSupply> {
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

/// AMC-rtb ([`crate::amc`]) on a fixed-priority cluster of one core whose sporadic
/// reservations (section III's rule) include high-criticality ones: each a task `C^L = e^L`
/// (a low one's `e`), `C^H = e^H`, `T = D = p` at its member's priority, equal priorities in
/// member order as in [`fixed_priority`], on the supply time partitions' slots leave when
/// the cluster has partitions ([`amc::rtb_on_supply`]; they are neither monitored nor
/// demoted). The terminations' `masks` are counted in every window. Records each member's
/// bounds and gives the verdict.
fn mixed_criticality(
    members: &mut [Member],
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
            }
        })
        .collect();
    let bounds = match partitions_supply(members, cycle) {
        Some(supply) => amc::rtb_on_supply(&tasks, masks, &supply),
        None => amc::rtb(&tasks, masks),
    };
    let tested = members.iter_mut().filter(|m| sporadic(m));
    for (member, (low, high)) in tested.zip(bounds.low.iter().zip(&bounds.high)) {
        member.response = Some(high.unwrap_or(*low));
        member.low_mode_response = high.map(|_| *low);
    }
    let summary = FixedPriorityRta {
        cores: 1,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::Bandwidth;
    use crate::test_support::{ms, periodic};
    use bulwark_spec::{Behaviour, ClusterMember, ClusterSpec, PolicyKind, TaskSpec};

    fn task(name: &str, core: u16, behaviour: Behaviour, budget: u64, period: u64) -> TaskSpec {
        TaskSpec {
            name: name.to_owned(),
            core,
            priority: Some(Priority(1)),
            reservation: Some(Reservation::new(ms(budget), ms(period))),
            deadline: None,
            behaviour,
        }
    }

    /// Core 0 partitioned (task `p`); cores 1 and 2 a cluster of `a` (3, 10), `b` (9, 10)
    /// and `c` (9, 10), `c`'s jobs needing 10 ms each.
    fn scenario(order: SporadicOrder) -> Scenario {
        let tasks = vec![
            task("p", 0, periodic(10, 1), 1, 10),
            task("a", 1, periodic(10, 2), 3, 10),
            task("b", 1, periodic(20, 9), 9, 10),
            task("c", 1, periodic(10, 10), 9, 10),
        ];
        Scenario {
            clusters: vec![ClusterSpec {
                slack_reclamation: false,
                name: "g".to_owned(),
                cores: vec![1, 2],
                order,
                cycle: Duration::ZERO,
                members: vec![
                    sporadic(1, Replenishment::Sporadic, None),
                    sporadic(2, Replenishment::Sporadic, None),
                    sporadic(3, Replenishment::ConstantBandwidth, None),
                ],
            }],
            ..Scenario::new("global", PolicyKind::FixedPriority, 3, ms(100), tasks)
        }
    }

    fn sporadic(
        task: usize,
        replenishment: Replenishment,
        low_budget: Option<Duration>,
    ) -> ClusterMember {
        ClusterMember {
            task,
            kind: MemberKind::Sporadic {
                replenishment,
                low_budget,
            },
        }
    }

    /// U = 3/10 + 9/10 + 9/10 = 21/10 > 2 - 9/10 = 11/10: not shown schedulable; `a` and `b`
    /// fit their reservations, `c` needs 10 ms of a 9 ms budget.
    #[test]
    fn an_edf_cluster_is_tested_by_gfb_and_its_members_checked() {
        let clusters = analyse(&scenario(SporadicOrder::EarliestDeadlineFirst));
        assert_eq!(clusters.len(), 1);
        let cluster = &clusters[0];
        assert_eq!(cluster.cores, [1, 2]);
        assert_eq!(
            (
                cluster.bandwidth.total.numerator,
                cluster.bandwidth.total.denominator
            ),
            (21, 10)
        );
        assert_eq!(cluster.verdict.schedulable(), Some(false));
        let names: Vec<&str> = cluster.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(cluster.members[0].fit, Fit::Carried);
        assert_eq!(cluster.members[1].fit, Fit::Carried);
        let Fit::Exceeds(why) = &cluster.members[2].fit else {
            panic!("c needs more than 9 ms: {:?}", cluster.members[2].fit);
        };
        assert!(
            why.starts_with("a job needs up to 10ms > budget 9ms:"),
            "{why}"
        );
        assert!(matches!(
            cluster.members[2].reservation,
            MemberReservation::Sporadic {
                replenishment: Replenishment::ConstantBandwidth,
                low_budget: None,
                ..
            }
        ));
    }

    /// `c` is a constant-bandwidth server (refused by validation under fixed priority, but
    /// an SPR server is not): it keeps budget while inactive, so the response-time analysis
    /// does not cover it.
    #[test]
    fn a_fixed_priority_cluster_with_a_server_is_not_analysed() {
        let clusters = analyse(&scenario(SporadicOrder::FixedPriority));
        assert_eq!(
            clusters[0].verdict,
            ClusterVerdict::NotAnalysed(SERVERS_NOT_IN_GLOBAL_FP_RTA)
        );
        assert_eq!(clusters[0].verdict.schedulable(), None);
        assert_eq!(clusters[0].verdict.test_name(), None);
        assert_eq!(clusters[0].bandwidth.total.as_f64(), 2.1);
        assert!(clusters[0].members.iter().all(|m| m.response.is_none()));
        let mut spr = scenario(SporadicOrder::FixedPriority);
        spr.clusters[0].members[2] = sporadic(3, Replenishment::Spr { slots: 4 }, None);
        assert_eq!(
            analyse(&spr)[0].verdict.reason(),
            Some(SERVERS_NOT_IN_GLOBAL_FP_RTA)
        );
    }

    /// `c` in a sporadic (1 ms, 10 ms) reservation at priority 3, `a` (3, 10) and `b`
    /// (9, 10) at priority 1: the order c, a, b (a before b: the tie goes to the earlier
    /// member, as the scheduler's to the lower reservation id). On m = 2, R_c = 1 ms and
    /// R_a = 3 ms (fewer than m above them). b (C = 9 ms): at R = 9 ms both terms are
    /// capped at 1 ns (W_c = min(1, 9) = 1 ms, W_a = min(3, 9) = 3 ms), the least is 1 ms, so
    /// R = 10 ms; there W_c(10 ms) = 1 * 1 ms + min(1 ms, 0) = 1 ms < 1 ms + 1 ns, and
    /// W_a(10 ms) = 3 ms is capped at 1 ms + 1 ns: R = 9 ms + floor((2 ms + 1 ns) / 2) =
    /// 10 ms, converged, <= 10 ms: schedulable. b's budget 1 ns more: not shown, b named.
    #[test]
    fn a_fixed_priority_cluster_of_sporadic_reservations_gets_the_response_time_analysis() {
        let mut scenario = scenario(SporadicOrder::FixedPriority);
        scenario.tasks[3].reservation = Some(Reservation::new(ms(1), ms(10)));
        scenario.tasks[3].priority = Some(Priority(3));
        scenario.clusters[0].members[2] = sporadic(3, Replenishment::Sporadic, None);
        let cluster = &analyse(&scenario)[0];
        assert_eq!(
            cluster.verdict,
            ClusterVerdict::RtaSchedulable(FixedPriorityRta {
                cores: 2,
                not_shown: None
            })
        );
        assert_eq!(cluster.verdict.schedulable(), Some(true));
        assert_eq!(cluster.verdict.test_name(), Some(GLOBAL_FP_RTA_TEST));
        assert_eq!(cluster.verdict.test(), None);
        let responses: Vec<Option<Response>> = cluster.members.iter().map(|m| m.response).collect();
        assert_eq!(
            responses,
            [
                Some(Response::Bounded(ms(3))),
                Some(Response::Bounded(ms(10))),
                Some(Response::Bounded(ms(1)))
            ]
        );
        scenario.tasks[2].reservation =
            Some(Reservation::new(Duration::from_nanos(9_000_001), ms(10)));
        let cluster = &analyse(&scenario)[0];
        assert_eq!(
            cluster.verdict,
            ClusterVerdict::RtaNotShownSchedulable(FixedPriorityRta {
                cores: 2,
                not_shown: Some(1)
            })
        );
        assert_eq!(cluster.verdict.schedulable(), Some(false));
        assert!(matches!(
            cluster.members[1].response,
            Some(Response::Exceeds(r)) if r > ms(10)
        ));
    }

    /// `b` becomes a partition on core 2 in [0, 2) and [5, 8) of a 10 ms cycle: share 5/10, so
    /// U = 3/10 + 5/10 + 9/10 = 17/10; GFB does not apply, and Bertogna, Cirinei and
    /// Lipari's test runs with the partition as an entity of at most 5 ms in any 10 ms. For
    /// `a` (3, 10): slack 8, `c` min(9, 8) + the partition min(5, 8) = 13 < 2 * 8. For `c`
    /// (9, 10): slack 2, `a` min(3, 2) + min(5, 2) = 4, not < 2 * 2: not shown, at `c`
    /// (second of the sporadic reservations). The partition's own task (9 ms every
    /// 20 ms) is checked against its slots: from a slot's end at 2 ms, 3 + 2 + 3 ms of slot by
    /// 18 ms and the ninth at 21 ms, a window of 19 ms (from 8 ms too: 2 + 3 + 2 + 2 by 27):
    /// R = 19 ms <= 20 ms, it fits.
    #[test]
    fn an_edf_cluster_with_a_partition_gets_bcl_with_the_partition_as_an_entity() {
        let mut scenario = scenario(SporadicOrder::EarliestDeadlineFirst);
        let slots = vec![(ms(5), ms(8)), (ms(0), ms(2))];
        scenario.tasks[2].reservation = None;
        scenario.clusters[0].cycle = ms(10);
        scenario.clusters[0].members[1].kind = MemberKind::Partition {
            core: 2,
            slots: slots.clone(),
        };
        let cluster = &analyse(&scenario)[0];
        assert_eq!(
            cluster.verdict,
            ClusterVerdict::BclNotShownSchedulable(Bcl {
                cores: 2,
                failing: Some(1),
                schedulable: false
            })
        );
        // With `c` lighter, (7, 10): slack 4, min(3, 4) + min(5, 4) = 7 < 8; `a`: slack 8,
        // min(7, 8) + min(5, 8) = 12 < 16.
        let mut lighter = scenario.clone();
        lighter.tasks[3].reservation = Some(Reservation::new(ms(7), ms(10)));
        assert!(matches!(
            analyse(&lighter)[0].verdict,
            ClusterVerdict::BclSchedulable(_)
        ));
        assert_eq!(
            (
                cluster.bandwidth.total.numerator,
                cluster.bandwidth.total.denominator
            ),
            (17, 10)
        );
        let partition = &cluster.members[1];
        assert_eq!(
            partition.reservation,
            MemberReservation::Partition {
                core: 2,
                slots,
                cycle: ms(10)
            }
        );
        assert_eq!(partition.reservation.share(), (ms(5), ms(10)));
        assert_eq!(partition.fit, Fit::Carried);
        assert_eq!(partition.job_response, Some(Response::Bounded(ms(19))));
        // Fixed priority, `c` a sporadic reservation (a server is not in the analysis), all
        // priorities equal so `a` is above `c`. `a`: one above it (the partition) on two
        // cores, R = C = 3 ms. `c` (9, 10): x = 0 finds `a`'s W(9) = 3 ms and the
        // partition's most slot time in 9 ms, 5 ms ([0, 9) or [5, 14)), both capped at 1 ns,
        // so x skips to the lesser, 3 ms: R = 12 ms > 10 ms, not shown.
        scenario.clusters[0].order = SporadicOrder::FixedPriority;
        scenario.clusters[0].members[2] = sporadic(3, Replenishment::Sporadic, None);
        let fixed = &analyse(&scenario)[0];
        assert_eq!(fixed.members[0].response, Some(Response::Bounded(ms(3))));
        assert_eq!(fixed.members[2].response, Some(Response::Exceeds(ms(12))));
        assert!(matches!(
            fixed.verdict,
            ClusterVerdict::RtaNotShownSchedulable(FixedPriorityRta {
                cores: 2,
                not_shown: Some(2)
            })
        ));
        // `c` (4, 10): x = 0 skips to 3 ms; at x = 3 ms (L = 7 ms) `a`'s W(7) = 3 ms is not
        // capped at 3 ms + 1 ns, the partition's 5 ms ([5, 12)) is: floor((6 ms + 1 ns) / 2)
        // = 3 ms, the fixed point, R = 7 ms <= 10 ms.
        let mut lighter = scenario.clone();
        lighter.tasks[3].reservation = Some(Reservation::new(ms(4), ms(10)));
        let lighter = &analyse(&lighter)[0];
        assert_eq!(lighter.members[2].response, Some(Response::Bounded(ms(7))));
        assert!(matches!(lighter.verdict, ClusterVerdict::RtaSchedulable(_)));
        // The partition has no response of the cluster's test, only its own task's bound.
        assert_eq!(lighter.members[1].response, None);
        assert_eq!(
            lighter.members[1].job_response,
            Some(Response::Bounded(ms(19)))
        );
    }

    /// `a` of high criticality, e^L = 1 ms of e^H = 3 ms: no test under EDF order; its
    /// bandwidth counts e^H. Fixed-priority order: no test either, with its own reason.
    #[test]
    fn a_cluster_with_high_criticality_is_not_analysed() {
        let mut scenario = scenario(SporadicOrder::EarliestDeadlineFirst);
        scenario.clusters[0].members[0] = sporadic(1, Replenishment::Sporadic, Some(ms(1)));
        let cluster = &analyse(&scenario)[0];
        assert_eq!(
            cluster.verdict,
            ClusterVerdict::NotAnalysed(HIGH_CRITICALITY_NOT_IN_GFB)
        );
        assert_eq!(cluster.bandwidth.total.as_f64(), 2.1);
        assert!(matches!(
            cluster.members[0].reservation,
            MemberReservation::Sporadic {
                low_budget: Some(low_budget),
                ..
            } if low_budget == ms(1)
        ));
        assert_eq!(cluster.members[0].fit, Fit::Carried);
        scenario.clusters[0].order = SporadicOrder::FixedPriority;
        assert_eq!(
            analyse(&scenario)[0].verdict.reason(),
            Some(HIGH_CRITICALITY_NOT_IN_GLOBAL_FP_RTA)
        );
    }

    /// R (3 ms per 10 ms) carries a and b; c has 2 ms per 10 ms of its own. The cluster's
    /// bandwidth is R's and c's once each: 5/10, not 8/10; b is listed as sharing a's, and
    /// neither a's nor b's fit is judged against one task's jobs.
    #[test]
    fn a_shared_reservation_counts_once() {
        let scenario = bulwark_spec::parse(
            r#"
name = "shared"
policy = "edf"
cores = 1
duration = "1s"

[[cluster]]
name = "k"
cores = [0]
order = "edf"

[[task]]
name = "a"
cluster = "k"
reservation = { name = "R", budget = "3ms", period = "10ms" }
period = "10ms"
execution = "1ms"

[[task]]
name = "b"
cluster = "k"
reservation = "R"
period = "10ms"
execution = "1ms"

[[task]]
name = "c"
cluster = "k"
reservation = { budget = "2ms", period = "10ms" }
period = "10ms"
execution = "1ms"
"#,
            "shared.toml",
        )
        .expect("valid");
        let [cluster] = analyse(&scenario).try_into().expect("one cluster");
        assert_eq!(
            Some(cluster.bandwidth.total),
            Bandwidth::of(ms(5), ms(10)),
            "R and c once each"
        );
        assert_eq!(
            cluster.members[1].reservation,
            MemberReservation::Shared { owner: "a".into() }
        );
        assert!(!cluster.members[1].reservation.is_tested());
        // Jointly, a job of `a` may wait for R's blackout, 10 + 10 - 3 = 17 ms, and 1 ms
        // more: past its 10 ms deadline, so `b`'s bound is not computed.
        let Fit::Exceeds(why) = &cluster.members[0].fit else {
            panic!("a's fit: {:?}", cluster.members[0].fit);
        };
        assert!(why.contains("a job may take 18ms > 10ms"), "{why}");
        assert_eq!(
            cluster.members[0].job_response,
            Some(Response::Exceeds(ms(18)))
        );
        assert!(matches!(cluster.members[1].fit, Fit::Unchecked(_)));
        assert_eq!(cluster.members[1].job_response, Some(Response::NotComputed));
        assert_eq!(cluster.members[2].fit, Fit::Carried);
        // `c` alone in its own reservation, served within p under GFB.
        assert_eq!(
            cluster.members[2].job_response,
            Some(Response::Bounded(ms(10)))
        );
        assert!(matches!(cluster.verdict, ClusterVerdict::Schedulable(_)));
    }

    /// The same reservation `(3, 10)` carrying `a` and `b` with jobs every 40 ms fits them
    /// both: `a` within the blackout 17 and its 1 ms, `b` behind one job of `a`, 19. Under
    /// fixed priority the response-time analysis serves R's budget within 3 + 2 = 5 ms (c's
    /// reservation is above it), so the blackout is 10 + 5 - 3 = 12: `a` 13, `b` 14. A script
    /// sharing it is not checked, and neither is the task after it.
    #[test]
    fn tasks_sharing_a_reservation_fit_on_their_joint_demand() {
        let shared = |order: &str, script: &str| {
            // Priorities go on the reservations' owners, under fixed priority only.
            let priority = |level: u8| {
                if order == "edf" {
                    String::new()
                } else {
                    format!("priority = {level}")
                }
            };
            let (high, low) = (priority(2), priority(1));
            let source = format!(
                r#"
name = "shared"
policy = "{order}"
cores = 1
duration = "1s"

[[cluster]]
name = "k"
cores = [0]
order = "{order}"

[[task]]
name = "c"
cluster = "k"
{high}
reservation = {{ budget = "2ms", period = "10ms" }}
period = "10ms"
execution = "1ms"

[[task]]
name = "a"
cluster = "k"
{low}
reservation = {{ name = "R", budget = "3ms", period = "10ms" }}
period = "40ms"
execution = "1ms"

[[task]]
name = "b"
cluster = "k"
reservation = "R"
period = "40ms"
execution = "1ms"
{script}"#
            );
            let scenario = bulwark_spec::parse(&source, "shared.toml").expect("valid");
            let [cluster] = analyse(&scenario).try_into().expect("one cluster");
            cluster
        };
        let bounds = |cluster: &ClusterAnalysis| -> Vec<Option<Response>> {
            cluster.members.iter().map(|m| m.job_response).collect()
        };
        // `c`, alone in its reservation: served within p = 10 ms under EDF (GFB), within its
        // R = 2 ms at the top priority.
        let edf = shared("edf", "");
        assert_eq!(
            bounds(&edf),
            vec![
                Some(Response::Bounded(ms(10))),
                Some(Response::Bounded(ms(18))),
                Some(Response::Bounded(ms(19)))
            ]
        );
        assert!(edf.members.iter().all(|m| m.fit == Fit::Carried));
        let fixed = shared("fixed-priority", "");
        assert!(matches!(fixed.verdict, ClusterVerdict::RtaSchedulable(_)));
        assert_eq!(fixed.members[1].response, Some(Response::Bounded(ms(5))));
        assert_eq!(
            bounds(&fixed),
            vec![
                Some(Response::Bounded(ms(2))),
                Some(Response::Bounded(ms(13))),
                Some(Response::Bounded(ms(14)))
            ]
        );
        let script = r#"
[[task]]
name = "s"
cluster = "k"
reservation = "R"
script = [{ run = "1ms" }, { sleep-for = "30ms" }]

[[task]]
name = "d"
cluster = "k"
reservation = "R"
period = "40ms"
execution = "1ms"
"#;
        let with_script = shared("edf", script);
        assert_eq!(with_script.members[2].fit, Fit::Carried);
        let Fit::Unchecked(why) = &with_script.members[3].fit else {
            panic!("s: {:?}", with_script.members[3].fit);
        };
        assert!(why.contains("a script has no fixed"), "{why}");
        let Fit::Unchecked(why) = &with_script.members[4].fit else {
            panic!("d: {:?}", with_script.members[4].fit);
        };
        assert!(why.contains("`s`, before it"), "{why}");
        assert_eq!(with_script.members[4].job_response, None);
    }
}
