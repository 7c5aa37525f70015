//! Task sets on the CAmkES paper's Fig. 7 topology (Sudvarg et al., section 6 and Appendix A),
//! as the analysis sees them: the chains of CPIs each task goes through, Table 3's protocol
//! configurations, how a task's work is divided among its subtasks, and the four tests the
//! paper compares (Eq. 2, Eq. 4, Eq. 3 and exact response-time analysis).
//!
//! The topology (reconstructed: the figure is missing from the text; see
//! `scenarios/components/fig7.camkes`): the first half of the tasks request CPI A, the rest B
//! (both PIP); A's procedure requests C, B's requests D, and C and D both request E. Table 3
//! varies the protocols of C, D and E.
//!
//! The machine's half of the same systems (which steps run where, the pools, the
//! costs) lives in the lab, beside the simulator; this module is what a schedulability test
//! needs and nothing more.

use bulwark_core::{Duration, Priority};

use crate::blocking::{
    analyse, hyperbolic, hyperbolic_non_unique, liu_layland, schedulable, Analysis, Cpi, CpiId,
    CpiProtocol, ModelError, Overheads, System, Task, TaskTiming,
};

/// CPI indices of the Fig. 7 topology.
pub const A: usize = 0;
/// CPI B.
pub const B: usize = 1;
/// CPI C.
pub const C: usize = 2;
/// CPI D.
pub const D: usize = 3;
/// CPI E.
pub const E: usize = 4;
/// Names, by index.
pub const CPI_NAMES: [&str; 5] = ["A", "B", "C", "D", "E"];

/// One row of Table 3: the protocols of CPIs C, D and E (A and B are always PIP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Configuration {
    /// Its number in Table 3.
    pub number: u8,
    /// Protocols of C, D and E.
    pub protocols: [CpiProtocol; 3],
}

/// Table 3.
pub const TABLE_3: [Configuration; 4] = {
    use CpiProtocol::{Inherited as Pip, Propagated as Prop};
    const IPCP: CpiProtocol = CpiProtocol::Ipcp;
    [
        Configuration {
            number: 1,
            protocols: [Pip, Prop, Pip],
        },
        Configuration {
            number: 2,
            protocols: [Pip, Prop, Prop],
        },
        Configuration {
            number: 3,
            protocols: [IPCP, Pip, Prop],
        },
        Configuration {
            number: 4,
            protocols: [IPCP, Prop, Pip],
        },
    ]
};

/// The protocols of A..E for a Table 3 configuration.
pub fn protocols(configuration: Configuration) -> [CpiProtocol; 5] {
    let [c, d, e] = configuration.protocols;
    [CpiProtocol::Inherited, CpiProtocol::Inherited, c, d, e]
}

/// How a task's workload is divided among its subtasks. The paper's page that gives its
/// split is missing from the text, so two are offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Split {
    /// A quarter in each of its own component, the first CPI, the second and E.
    Equal,
    /// 85 % in its own component, 5 % in each CPI.
    ShortSections,
}

impl Split {
    /// Both, in report order.
    pub const ALL: [Split; 2] = [Split::Equal, Split::ShortSections];

    /// Shares of own component, first CPI, second CPI and E, in percent.
    pub fn percent(self) -> [u64; 4] {
        match self {
            Split::Equal => [25, 25, 25, 25],
            Split::ShortSections => [85, 5, 5, 5],
        }
    }

    /// For reports.
    pub fn label(self) -> &'static str {
        match self {
            Split::Equal => "equal split",
            Split::ShortSections => "short sections",
        }
    }

    /// `work` divided by [`Split::percent`] into own, first, second and last (E) parts, each
    /// CPI's share rounded down; the rounding remainder stays in the task's own component, so
    /// the parts sum to `work` exactly.
    pub fn divide(self, work: Duration) -> [Duration; 4] {
        let total = work.as_nanos();
        // `total * p` cannot overflow for p <= 100 unless `total` is above 1.8e17 ns (5.8
        // years); divide first then, losing under 100 ns to the own component's remainder.
        let share = |p: u64| match total.checked_mul(p) {
            Some(scaled) => scaled / 100,
            None => total / 100 * p,
        };
        let [_, first, second, last] = self.percent().map(share);
        let own = total - first - second - last;
        [own, first, second, last].map(Duration::from_nanos)
    }
}

/// A task of the topology: its own work and its work in each CPI of its chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainTask {
    /// `T_i`.
    pub period: Duration,
    /// `p_i`.
    pub priority: Priority,
    /// Time in its own component, and in the first CPI (A or B), the second (C or D) and E.
    pub work: [Duration; 4],
}

/// The chain of CPIs task `index` (0-based) of `count` goes through: A-C-E for the first
/// half (rounded up, so tasks 0 and 1 of 4, and a lone task), B-D-E for the rest.
pub fn chain(index: usize, count: usize) -> [usize; 3] {
    if index < count.div_ceil(2) {
        [A, C, E]
    } else {
        [B, D, E]
    }
}

/// A system on the topology, as the analysis reads it.
#[derive(Clone, Debug)]
pub struct ComponentSet {
    /// Tasks t1..tn and CPIs A..E.
    pub system: System,
    /// WCETs (Eqs. 7 and 8) and blocking terms (Eqs. 5, 6 and PIP's bound).
    pub analysis: Analysis,
}

/// Builds the Fig. 7 system with `protocols` for A..E and `tasks` (t1..tn, chains by
/// [`chain`]), and analyses it with `overheads`.
pub fn build(
    tasks: &[ChainTask],
    protocols: [CpiProtocol; 5],
    overheads: &Overheads,
) -> Result<ComponentSet, ModelError> {
    let requests: [&[CpiId]; 5] = [&[CpiId(C)], &[CpiId(D)], &[CpiId(E)], &[CpiId(E)], &[]];
    let cpis: Vec<Cpi> = (0..5)
        .map(|cpi| {
            Cpi::new(CPI_NAMES[cpi], Duration::ZERO, protocols[cpi]).requesting(requests[cpi])
        })
        .collect();
    let system = System {
        tasks: tasks
            .iter()
            .enumerate()
            .map(|(index, task)| {
                let path = chain(index, tasks.len());
                Task::new(
                    format!("t{}", index + 1),
                    task.work[0],
                    task.period,
                    task.priority,
                )
                .requesting(&[CpiId(path[0])])
                .with_procedure_time(CpiId(path[0]), task.work[1])
                .with_procedure_time(CpiId(path[1]), task.work[2])
                .with_procedure_time(CpiId(path[2]), task.work[3])
            })
            .collect(),
        cpis,
    };
    let analysis = analyse(&system, overheads)?;
    Ok(ComponentSet { system, analysis })
}

/// The four tests' verdicts, in this order: Eq. 2 (hyperbolic with blocking, unique
/// priorities only), Eq. 4 (non-unique priorities), Eq. 3 (Liu and Layland with blocking)
/// and exact response-time analysis.
pub fn verdicts(timings: &[TaskTiming]) -> [bool; 4] {
    [
        hyperbolic(timings).verdict.admitted(),
        hyperbolic_non_unique(timings).verdict.admitted(),
        liu_layland(timings).verdict.admitted(),
        schedulable(timings),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;

    /// With no overheads, each task's `C_i` is the sum of its parts (1 + 2 + 3 + 4 = 10 ms);
    /// ceilings: A and C are requested by t1, t2 (priorities 4, 3), B and D by t3, t4 (2, 1),
    /// E by everyone.
    #[test]
    fn the_topology_is_built_as_fig_7_says() {
        let task = |p| ChainTask {
            period: ms(100),
            priority: Priority(p),
            work: [ms(1), ms(2), ms(3), ms(4)],
        };
        let tasks = [task(4), task(3), task(2), task(1)];
        let set = build(&tasks, protocols(TABLE_3[0]), &Overheads::ZERO).unwrap();
        let c: Vec<Duration> = set
            .analysis
            .tasks
            .iter()
            .map(|t| t.timing.execution)
            .collect();
        assert_eq!(c, [ms(10); 4]);
        let ceilings: Vec<u8> = set.analysis.cpis.iter().map(|c| c.ceiling.0).collect();
        assert_eq!(ceilings, [4, 2, 4, 2, 4]);
        assert_eq!([chain(0, 4), chain(1, 4)], [[A, C, E]; 2]);
        assert_eq!([chain(2, 4), chain(3, 4)], [[B, D, E]; 2]);
        assert_eq!(chain(0, 1), [A, C, E]);
        assert_eq!(chain(2, 5), [A, C, E]);
        assert_eq!(chain(3, 5), [B, D, E]);
    }

    /// 1,000,003 ns: 25 % is 250,000 (rounded down) per CPI, the own part takes the 3 ns
    /// left over; 85/5/5/5 gives 50,000 per CPI and 850,003 own.
    #[test]
    fn the_remainder_stays_in_the_own_component() {
        let work = Duration::from_nanos(1_000_003);
        let parts = |split: Split| split.divide(work).map(|d| d.as_nanos());
        assert_eq!(parts(Split::Equal), [250_003, 250_000, 250_000, 250_000]);
        assert_eq!(
            parts(Split::ShortSections),
            [850_003, 50_000, 50_000, 50_000]
        );
        let huge = Duration::from_nanos(u64::MAX);
        let sum: u64 = Split::Equal.divide(huge).iter().map(|d| d.as_nanos()).sum();
        assert_eq!(sum, u64::MAX);
    }
}
