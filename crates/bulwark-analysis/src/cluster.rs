//! The analysis of a scenario's clusters (`[[cluster]]`), the MC-IPC paper's clustered
//! reservation scheduler (section III): each member runs in a sporadic reservation `(e, p)` of
//! its own, and the `m` most important active reservations with budget run on the cluster's
//! `m` cores. What is analysed is the reservations, as implicit-deadline sporadic tasks
//! `(e, p)`: their total bandwidth against `m`, and under EDF order Goossens, Funk and
//! Baruah's test ([`crate::global_edf`]). Global fixed priority has no test here.

use bulwark_core::{Duration, Priority};
use bulwark_spec::{Behaviour, Replenishment, Reservation, Scenario, SporadicOrder};

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
    /// Fixed-priority order: no test for global fixed priority is implemented.
    NotAnalysed,
}

impl ClusterVerdict {
    /// `Some(true)` shown schedulable, `Some(false)` not shown, `None` not analysed.
    pub fn schedulable(&self) -> Option<bool> {
        match self {
            ClusterVerdict::Schedulable(_) => Some(true),
            ClusterVerdict::NotShownSchedulable(_) => Some(false),
            ClusterVerdict::NotAnalysed => None,
        }
    }

    /// The test's figures, when a test ran.
    pub fn test(&self) -> Option<&Gfb> {
        match self {
            ClusterVerdict::Schedulable(test) | ClusterVerdict::NotShownSchedulable(test) => {
                Some(test)
            }
            ClusterVerdict::NotAnalysed => None,
        }
    }
}

/// Why no test ran on a fixed-priority cluster, for reports.
pub const NO_GLOBAL_FIXED_PRIORITY_TEST: &str =
    "no schedulability test for global fixed priority is implemented: only the bandwidth is \
     reported";

/// One member task and its reservation.
#[derive(Clone, Debug)]
pub struct Member {
    /// The task's name.
    pub name: String,
    /// Its reservation `(e, p)`.
    pub reservation: Reservation,
    /// Its priority (fixed-priority order; `None` under EDF unless the file gives one).
    pub priority: Option<Priority>,
    /// How its reservation's budget comes back.
    pub replenishment: Replenishment,
    /// Whether the reservation can carry the task's jobs.
    pub fit: Fit,
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
                .map(|&(task, replenishment)| member(scenario, task, replenishment))
                .collect();
            let pairs: Vec<(Duration, Duration)> = members
                .iter()
                .map(|m| (m.reservation.budget, m.reservation.period))
                .collect();
            let cores = u16::try_from(cluster.cores.len()).unwrap_or(u16::MAX);
            let verdict = match cluster.order {
                SporadicOrder::EarliestDeadlineFirst => {
                    let test = global_edf::gfb(&pairs, cores);
                    if test.schedulable {
                        ClusterVerdict::Schedulable(test)
                    } else {
                        ClusterVerdict::NotShownSchedulable(test)
                    }
                }
                SporadicOrder::FixedPriority => ClusterVerdict::NotAnalysed,
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

fn member(scenario: &Scenario, task: usize, replenishment: Replenishment) -> Member {
    let spec = &scenario.tasks[task];
    // Validation gives every member a reservation; a zero one counts for nothing.
    let reservation = spec
        .reservation
        .unwrap_or(Reservation::new(Duration::ZERO, Duration::from_nanos(1)));
    Member {
        name: spec.name.clone(),
        reservation,
        priority: spec.priority,
        replenishment,
        fit: fit(&spec.behaviour, reservation),
    }
}

/// Whether `reservation` carries jobs of `behaviour`: the simple check of a job's execution
/// bound against the budget and its release spacing against the period.
pub fn fit(behaviour: &Behaviour, reservation: Reservation) -> Fit {
    let (spacing, execution) = match behaviour {
        Behaviour::Periodic {
            period, execution, ..
        } => (*period, execution.worst_case()),
        Behaviour::Sporadic {
            min_interarrival,
            execution,
            ..
        } => (*min_interarrival, execution.worst_case()),
        Behaviour::Script { .. } => {
            return Fit::Unchecked(
                "not checked: a script has no fixed execution time or period".to_owned(),
            )
        }
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
    use bulwark_spec::{ClusterSpec, CostModel, Execution, PolicyKind, TaskSpec};

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
                members: vec![
                    (1, Replenishment::Sporadic),
                    (2, Replenishment::Sporadic),
                    (3, Replenishment::ConstantBandwidth),
                ],
            }],
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
        assert_eq!(
            cluster.members[2].replenishment,
            Replenishment::ConstantBandwidth
        );
    }

    #[test]
    fn a_fixed_priority_cluster_is_not_analysed() {
        let clusters = analyse(&scenario(SporadicOrder::FixedPriority));
        assert_eq!(clusters[0].verdict, ClusterVerdict::NotAnalysed);
        assert_eq!(clusters[0].verdict.schedulable(), None);
        assert_eq!(clusters[0].bandwidth.total.as_f64(), 2.1);
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
