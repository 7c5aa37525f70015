//! The analysis of a scenario's clusters (`[[cluster]]`), the MC-IPC paper's clustered
//! reservation scheduler (section III): each member runs in a sporadic reservation `(e, p)` of
//! its own, and the `m` most important active reservations with budget run on the cluster's
//! `m` cores. What is analysed is the reservations, as implicit-deadline sporadic tasks
//! `(e, p)`: their total bandwidth against `m`, under EDF order Goossens, Funk and Baruah's
//! test ([`crate::global_edf`]), and under fixed-priority order Bertogna and Cirinei's
//! response-time analysis ([`crate::global_fp`]), each reservation a sporadic task `C = e`,
//! `T = D = p` at its member's priority (equal priorities in member order, as the scheduler
//! breaks ties by reservation id). A fixed-priority cluster with a high-criticality
//! reservation (Vestal's mode switch, section VII) gets AMC-rtb instead ([`crate::amc`]; on
//! more cores its argument on Bertogna and Cirinei's analysis): each reservation `C^L = e^L`
//! (a low one's `e`), `C^H = e^H`. On a
//! cluster of one core with time partitions, the sporadic reservations are tested against the
//! supply the slots leave ([`crate::slot_supply`]): the demand test under EDF order, the
//! response-time analysis under fixed priority. On more cores a partition takes one core
//! during its slots, at most `L - sbf(L)` of its slots alone in any window of length `L`:
//! Bertogna, Cirinei and Lipari's test (EDF order) and Bertogna and Cirinei's response-time
//! analysis (fixed priority) count it as one more interfering entity, like a mask. A
//! high-criticality reservation under EDF order, or beside an SPR server on one core, is
//! counted at `e^H` in whichever of those tests applies (worst-case reservations,
//! [`Criticality`]): the mode
//! switch only demotes low-criticality reservations below every other, which takes
//! interference away from the rest, so the verdict holds for a high-criticality reservation
//! in either mode and for a low one in low mode; the switch is given no credit. On one
//! fixed-priority core an SPR server is a sporadic task `(e, p)` to the exact analysis, on
//! the slots' supply when there are partitions (Sprunt, Sha and Lehoczky: a sporadic server
//! interferes no more than one), beside high-criticality members with worst-case
//! reservations (AMC-rtb does not take them); on more cores Bertogna and Cirinei's analysis
//! counts its workload from `R + e` (its chunks may start up to `R` apart,
//! [`crate::global_fp`]). A
//! best-effort member runs below every reservation on no budget: it takes nothing from them,
//! gets no guarantee, and is left out of the bandwidth and the tests. A termination run in a
//! cluster masks one of its cores for up to its mask ([`crate::reclamation`]): the
//! response-time analysis counts each as interference on one core
//! ([`crate::global_fp::rta_masked`]); GFB has no such term, so under EDF order a cluster with
//! terminations gets Bertogna, Cirinei and Lipari's interference test instead, with the masks
//! ([`crate::global_edf::bcl`]).

use bulwark_core::{Duration, Priority};
use bulwark_spec::{MemberKind, Replenishment, Reservation, Scenario, SporadicOrder};

use crate::bandwidth::{self, Admission};
use crate::fit::{fit, Fit};
use crate::gates::CallDrains;
use crate::global_edf::{self, Bcl, Gfb};
use crate::global_fp::Response;
use crate::reclamation::{self, Masked};
use crate::slot_supply;

mod fits;
#[cfg(test)]
mod tests;
mod verdicts;

use fits::{bound_lone_members, fit_partitions, fit_shared};
use verdicts::{bcl_beside_partitions, fixed_priority, mixed_criticality, on_slot_supply};

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
    /// Fixed-priority order with high-criticality reservations, and AMC-rtb
    /// ([`crate::amc`]; on more cores [`crate::amc::rtb_global`]) bounds every
    /// reservation's low-mode response `R^L` (its [`Member::low_mode_response`]) and every
    /// high-criticality one's `R^*` (its
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
    /// [`SLOT_SUPPLY_TOO_MANY_DEADLINES`] and [`CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY`]).
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
            ClusterVerdict::AmcSchedulable(rta) | ClusterVerdict::AmcNotShownSchedulable(rta) => {
                Some(match rta.cores {
                    1 => AMC_RTB_TEST,
                    _ => GLOBAL_AMC_RTB_TEST,
                })
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

/// The name of AMC-rtb's argument on Bertogna and Cirinei's analysis, on more cores
/// ([`crate::amc::rtb_global`]), in reports.
pub const GLOBAL_AMC_RTB_TEST: &str = "global-amc-rtb";

/// The name of the EDF demand test against the slots' supply in reports.
pub const SLOT_SUPPLY_EDF_TEST: &str = "edf-slot-supply";

/// The name of the response-time analysis against the slots' supply in reports.
pub const SLOT_SUPPLY_RTA_TEST: &str = "fp-rta-slot-supply";

/// Why no test ran on a one-core cluster with time partitions whose hyperperiod holds too
/// many deadlines.
pub const SLOT_SUPPLY_TOO_MANY_DEADLINES: &str =
    "the demand test against the slots' supply would examine more than 4,000,000 deadlines \
     in the hyperperiod of the cycle and the periods";

/// Why no test ran on a fixed-priority cluster with a constant-bandwidth server (which
/// validation refuses; the analysis does not count on it).
pub const CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY: &str =
    "a constant-bandwidth server under fixed priority is recharged at once when its budget \
     runs out, so no response-time analysis bounds the interference it causes";

/// Why no test ran on a cluster with a time partition, for reports.
pub const PARTITIONS_NOT_IN_GFB: &str =
    "Goossens, Funk and Baruah's test covers sporadic reservations alone: time partitions take \
     cores during their slots";

/// How a verdict on a cluster with a high-criticality reservation (Vestal's model, the MC-IPC
/// paper's section VII) takes the mode switch into account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Criticality {
    /// AMC-rtb ([`crate::amc`]): the switch is credited, low-criticality releases counted
    /// only within a high-criticality reservation's `R^L`.
    AmcRtb,
    /// Worst-case reservations: every high-criticality reservation counted at `e^H` in both
    /// modes, the switch given no credit. Sound because the switch changes no budget and
    /// only demotes low-criticality reservations below every other one (just above
    /// best-effort), which interfere then with none of the others: a high-criticality
    /// reservation's guarantee holds in either mode, a low one's in low mode (while demoted
    /// it has none).
    WorstCaseReservations,
}

impl Criticality {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Criticality::AmcRtb => AMC_RTB_TEST,
            Criticality::WorstCaseReservations => "worst-case-reservations",
        }
    }
}

impl ClusterAnalysis {
    /// How the verdict treats the mode switch: `None` when no member is of high criticality
    /// or no test ran.
    pub fn criticality(&self) -> Option<Criticality> {
        let high = (self.members.iter()).any(|m| m.reservation.is_high_criticality());
        match self.verdict {
            _ if !high => None,
            ClusterVerdict::NotAnalysed(_) => None,
            ClusterVerdict::AmcSchedulable(_) | ClusterVerdict::AmcNotShownSchedulable(_) => {
                Some(Criticality::AmcRtb)
            }
            _ => Some(Criticality::WorstCaseReservations),
        }
    }
}

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

    /// A time partition.
    pub fn is_partition(&self) -> bool {
        matches!(self, MemberReservation::Partition { .. })
    }

    /// A sporadic reservation of high criticality (Vestal's model: it has a low budget `e^L`).
    pub fn is_high_criticality(&self) -> bool {
        matches!(
            self,
            MemberReservation::Sporadic {
                low_budget: Some(_),
                ..
            }
        )
    }

    /// An SPR server (a sporadic reservation under SPR's replenishment rule).
    pub fn is_spr_server(&self) -> bool {
        matches!(self.replenishment(), Some(Replenishment::Spr { .. }))
    }

    /// How a sporadic reservation's budget comes back; `None` for the other kinds.
    pub fn replenishment(&self) -> Option<Replenishment> {
        match self {
            MemberReservation::Sporadic { replenishment, .. } => Some(*replenishment),
            _ => None,
        }
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
            let any = |holds: &dyn Fn(&MemberReservation) -> bool| {
                members.iter().any(|m| holds(&m.reservation))
            };
            let has_partition = any(&MemberReservation::is_partition);
            let has_high_criticality = any(&MemberReservation::is_high_criticality);
            // An SPR (or CBS) server keeps budget while inactive: not a sporadic task.
            let has_server = any(&|r| {
                matches!(
                    r.replenishment(),
                    Some(Replenishment::Spr { .. } | Replenishment::ConstantBandwidth)
                )
            });
            let has_constant_bandwidth =
                any(&|r| r.replenishment() == Some(Replenishment::ConstantBandwidth));
            // AMC-rtb credits the mode switch under fixed priority (on one core on what the
            // slots leave when there are partitions, on more on BC07, where an SPR server's
            // workload reaches R + e back; on one core it does not take SPR servers), and
            // the other high-criticality clusters get worst-case reservations in the tests
            // below.
            let amc_rtb = cluster.order == SporadicOrder::FixedPriority
                && has_high_criticality
                && !has_constant_bandwidth
                && (cores != 1 || !has_server);
            let verdict = match cluster.order {
                _ if amc_rtb => mixed_criticality(&mut members, cores, &masks, cluster.cycle),
                // A constant-bandwidth server never waits for budget under fixed priority.
                SporadicOrder::FixedPriority if has_constant_bandwidth => {
                    ClusterVerdict::NotAnalysed(CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY)
                }
                // One core: the reservations share what the slots leave. An SPR server is a
                // sporadic task to that test too: the partitions only take supply, as higher
                // priorities would.
                order if has_partition && cores == 1 => {
                    on_slot_supply(&mut members, order, cluster.cycle, &masks)
                }
                // With time partitions on more cores, each one more interfering entity. A
                // high-criticality reservation counts at e^H (worst-case reservations). On one
                // core (no partition: those went to the slots' supply) an SPR server interferes
                // with the reservations below it no more than a sporadic task (e, p) would
                // (Sprunt, Sha and Lehoczky's theorem, which SPR's rule keeps: each consumed
                // chunk comes back p after the activation it was used from), so the exact
                // uniprocessor analysis covers it, as the SPR paper's Eq. 1 does on a core of
                // its own. On more cores its chunks may start up to its R apart, so its
                // workload counts from R + e (`global_fp`'s docs).
                SporadicOrder::FixedPriority => {
                    fixed_priority(&mut members, cores, &masks, cluster.cycle)
                }
                // More cores beside partitions: Bertogna, Cirinei and Lipari's test with each
                // partition one more interfering entity.
                SporadicOrder::EarliestDeadlineFirst if has_partition => {
                    bcl_beside_partitions(&members, cores, &masks, cluster.cycle)
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
