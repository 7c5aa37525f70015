//! The analysis of a scenario's clusters (`[[cluster]]`), the MC-IPC paper's clustered
//! reservation scheduler (section III): each member runs in a sporadic reservation `(e, p)` of
//! its own, and the `m` most important active reservations with budget run on the cluster's
//! `m` cores. What is analysed is the reservations, as implicit-deadline sporadic tasks
//! `(e, p)`: their total bandwidth against `m`, and under EDF order Goossens, Funk and
//! Baruah's test ([`crate::global_edf`]). Global fixed priority has no test here, and neither
//! has a cluster with a time partition (its slots take a core from the reservations) or a
//! high-criticality reservation (Vestal's mode switch demotes the others): such a cluster's
//! bandwidth is reported, a partition counting its slots' time over the cycle, and no verdict.

use bulwark_core::{Duration, Priority};
use bulwark_spec::{Behaviour, MemberKind, Replenishment, Reservation, Scenario, SporadicOrder};

use crate::bandwidth::{self, Admission};
use crate::global_edf::{self, Gfb};

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
    /// No test applies; says why (one of [`NO_GLOBAL_FIXED_PRIORITY_TEST`],
    /// [`PARTITIONS_NOT_IN_GFB`] and [`HIGH_CRITICALITY_NOT_IN_GFB`]).
    NotAnalysed(&'static str),
}

impl ClusterVerdict {
    /// `Some(true)` shown schedulable, `Some(false)` not shown, `None` not analysed.
    pub fn schedulable(&self) -> Option<bool> {
        match self {
            ClusterVerdict::Schedulable(_) => Some(true),
            ClusterVerdict::NotShownSchedulable(_) => Some(false),
            ClusterVerdict::NotAnalysed(_) => None,
        }
    }

    /// The test's figures, when a test ran.
    pub fn test(&self) -> Option<&Gfb> {
        match self {
            ClusterVerdict::Schedulable(test) | ClusterVerdict::NotShownSchedulable(test) => {
                Some(test)
            }
            ClusterVerdict::NotAnalysed(_) => None,
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

/// Why no test ran on a fixed-priority cluster, for reports.
pub const NO_GLOBAL_FIXED_PRIORITY_TEST: &str =
    "no schedulability test for global fixed priority is implemented: only the bandwidth is \
     reported";

/// Why no test ran on a cluster with a time partition, for reports.
pub const PARTITIONS_NOT_IN_GFB: &str =
    "Goossens, Funk and Baruah's test covers sporadic reservations alone: time partitions take \
     cores during their slots";

/// Why no test ran on a cluster with a high-criticality reservation, for reports.
pub const HIGH_CRITICALITY_NOT_IN_GFB: &str =
    "Goossens, Funk and Baruah's test covers sporadic reservations alone: Vestal's mode switch \
     demotes low-criticality reservations";

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
    /// Its share of the cluster as the time pair `(x, y)` whose ratio it is: `(e, p)`, or a
    /// partition's slot time and the cycle.
    pub fn share(&self) -> (Duration, Duration) {
        match self {
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

/// Whether a reservation `(e, p)` gives a task's jobs what they need: each job at most `e`
/// of execution, released at most once per `p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Execution bound `C <= e` and period (or minimum inter-arrival time) `T >= p`.
    Carried,
    /// `C > e` or `T < p`: the task's jobs need more than its reservation gives, and a job
    /// may take several periods of the reservation. Says which.
    Exceeds(String),
    /// Not checked (a script has no fixed execution time or period). Says why.
    Unchecked(String),
}

/// Every cluster of `scenario`, in file order.
pub fn analyse(scenario: &Scenario) -> Vec<ClusterAnalysis> {
    scenario
        .clusters
        .iter()
        .map(|cluster| {
            let members: Vec<Member> = cluster
                .members
                .iter()
                .map(|m| member(scenario, m.task, &m.kind, cluster.cycle))
                .collect();
            let pairs: Vec<(Duration, Duration)> =
                members.iter().map(|m| m.reservation.share()).collect();
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
            let verdict = match cluster.order {
                SporadicOrder::FixedPriority => {
                    ClusterVerdict::NotAnalysed(NO_GLOBAL_FIXED_PRIORITY_TEST)
                }
                // GFB's tasks are the sporadic reservations alone, each always at its own
                // priority: neither holds with partitions or a mode switch.
                SporadicOrder::EarliestDeadlineFirst if has_partition => {
                    ClusterVerdict::NotAnalysed(PARTITIONS_NOT_IN_GFB)
                }
                SporadicOrder::EarliestDeadlineFirst if has_high_criticality => {
                    ClusterVerdict::NotAnalysed(HIGH_CRITICALITY_NOT_IN_GFB)
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
            ClusterAnalysis {
                name: cluster.name.clone(),
                cores: cluster.cores.clone(),
                order: cluster.order,
                members,
                bandwidth: bandwidth::admit(&pairs),
                verdict,
            }
        })
        .collect()
}

fn member(scenario: &Scenario, task: usize, kind: &MemberKind, cycle: Duration) -> Member {
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
            (sporadic, fit(&spec.behaviour, reservation))
        }
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
    }
}

/// Whether `reservation` carries jobs of `behaviour`: the simple check of a job's execution
/// bound against the budget and its release spacing against the period.
pub fn fit(behaviour: &Behaviour, reservation: Reservation) -> Fit {
    let Some((spacing, execution)) = behaviour.spacing_and_execution() else {
        return Fit::Unchecked(
            "not checked: a script has no fixed execution time or period".to_owned(),
        );
    };
    let (budget, period) = (reservation.budget, reservation.period);
    let mut short = Vec::new();
    if execution > budget {
        short.push(format!("a job needs up to {execution} > budget {budget}"));
    }
    if spacing < period {
        short.push(format!(
            "jobs come every {spacing} < reservation period {period}"
        ));
    }
    if short.is_empty() {
        Fit::Carried
    } else {
        Fit::Exceeds(format!(
            "{}: the task's jobs need more than its reservation gives, and a job may take \
             several periods of the reservation",
            short.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::{ClusterMember, ClusterSpec, CostModel, Execution, PolicyKind, TaskSpec};

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn periodic(period: u64, execution: u64) -> Behaviour {
        Behaviour::Periodic {
            period: ms(period),
            offset: Duration::ZERO,
            execution: Execution::Fixed(ms(execution)),
        }
    }

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
        Scenario {
            name: "global".to_owned(),
            description: String::new(),
            seed: 0,
            duration: ms(100),
            cores: 3,
            policy: PolicyKind::FixedPriority,
            core_policies: Vec::new(),
            cost: CostModel::default(),
            tasks: vec![
                task("p", 0, periodic(10, 1), 1, 10),
                task("a", 1, periodic(10, 2), 3, 10),
                task("b", 1, periodic(20, 9), 9, 10),
                task("c", 1, periodic(10, 10), 9, 10),
            ],
            groups: Vec::new(),
            servers: Vec::new(),
            vbs: None,
            clusters: vec![ClusterSpec {
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

    #[test]
    fn a_fixed_priority_cluster_is_not_analysed() {
        let clusters = analyse(&scenario(SporadicOrder::FixedPriority));
        assert_eq!(
            clusters[0].verdict,
            ClusterVerdict::NotAnalysed(NO_GLOBAL_FIXED_PRIORITY_TEST)
        );
        assert_eq!(clusters[0].verdict.schedulable(), None);
        assert_eq!(clusters[0].bandwidth.total.as_f64(), 2.1);
    }

    /// `b` becomes a partition on core 2 in [0, 2) and [5, 8) of a 10 ms cycle: share 5/10, so
    /// U = 3/10 + 5/10 + 9/10 = 17/10; GFB does not apply, and the partition is not checked
    /// against a budget.
    #[test]
    fn an_edf_cluster_with_a_partition_is_not_analysed() {
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
            ClusterVerdict::NotAnalysed(PARTITIONS_NOT_IN_GFB)
        );
        assert_eq!(cluster.verdict.test(), None);
        assert_eq!(cluster.verdict.reason(), Some(PARTITIONS_NOT_IN_GFB));
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
        assert!(matches!(partition.fit, Fit::Unchecked(_)));
    }

    /// `a` of high criticality, e^L = 1 ms of e^H = 3 ms: no test under EDF order; its
    /// bandwidth counts e^H. Fixed-priority order keeps its own reason.
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
            Some(NO_GLOBAL_FIXED_PRIORITY_TEST)
        );
    }

    #[test]
    fn releases_faster_than_the_reservation_do_not_fit_and_scripts_are_unchecked() {
        let reservation = Reservation::new(ms(2), ms(10));
        let Fit::Exceeds(why) = fit(&periodic(5, 1), reservation) else {
            panic!("every 5 ms against a 10 ms period");
        };
        assert!(why.starts_with("jobs come every 5ms < reservation period 10ms:"));
        let script = Behaviour::Script {
            offset: Duration::ZERO,
            steps: Vec::new(),
        };
        assert!(matches!(fit(&script, reservation), Fit::Unchecked(_)));
    }
}
