//! A one-core system of VBS processes as a scenario for the machine.
//!
//! Each process has a cap, a first arrival and a script of actions of known load; the system
//! runs with no kernel costs unless given.
//!
//! Scenario files cannot say when a VBS process first arrives (validation starts every
//! process at time zero); a system built here can, as the paper's process sets do.

use bulwark_core::bandwidth::vbs::{Action, BandwidthCap, ReleaseStrategy};
use bulwark_core::{Duration, TaskId};
use bulwark_spec::{
    Behaviour, CostModel, PolicyKind, Scenario, Step, TaskSpec, VbsPlugin, VbsSpec,
};

/// One VBS process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VbsProcess {
    /// Its bandwidth cap.
    pub cap: BandwidthCap,
    /// When its first action arrives.
    pub arrival: Duration,
    /// Its actions, in order; every load must be known.
    pub actions: Vec<Action>,
}

/// A system of VBS processes on one core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VbsSystem {
    /// Early or late release.
    pub strategy: ReleaseStrategy,
    /// The queue plugin.
    pub plugin: VbsPlugin,
    /// One instant of the scheduler's time.
    pub quantum: Duration,
    /// The scheduler tells `2^horizon_bits` instants apart.
    pub horizon_bits: u32,
    /// How long to run at most.
    pub duration: Duration,
    /// What kernel work costs (none by default).
    pub cost: CostModel,
    /// The processes; process `i` is task `i`, named `p{i}`.
    pub processes: Vec<VbsProcess>,
}

/// Why a system is not a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VbsSystemError {
    /// An action has no load.
    #[error("action {action} of process {} has no load: the machine executes known loads", task.0)]
    MissingLoad {
        /// The process.
        task: TaskId,
        /// The action's index.
        action: usize,
    },
}

impl VbsSystem {
    /// An empty system: `strategy` on the tree plugin, no costs.
    pub fn new(
        strategy: ReleaseStrategy,
        quantum: Duration,
        horizon_bits: u32,
        duration: Duration,
    ) -> Self {
        VbsSystem {
            strategy,
            plugin: VbsPlugin::Tree,
            quantum,
            horizon_bits,
            duration,
            cost: CostModel::default(),
            processes: Vec::new(),
        }
    }

    /// The scenario: one core running VBS, process `i` as task `p{i}` whose script is its
    /// actions, started at its first arrival.
    pub fn scenario(&self) -> Result<Scenario, VbsSystemError> {
        let mut tasks = Vec::with_capacity(self.processes.len());
        for (i, process) in self.processes.iter().enumerate() {
            let mut steps = Vec::with_capacity(process.actions.len());
            for (k, action) in process.actions.iter().enumerate() {
                let load = action.load.ok_or(VbsSystemError::MissingLoad {
                    task: TaskId(i as u32),
                    action: k,
                })?;
                steps.push(Step::Action {
                    load,
                    limit: action.resource.limit,
                    period: action.resource.period,
                });
            }
            tasks.push(TaskSpec {
                name: format!("p{i}"),
                core: 0,
                priority: None,
                reservation: None,
                deadline: None,
                behaviour: Behaviour::Script {
                    offset: process.arrival,
                    steps,
                },
            });
        }
        Ok(Scenario {
            servers: Vec::new(),
            name: "vbs".to_owned(),
            description: String::new(),
            seed: 0,
            duration: self.duration,
            cores: 1,
            policy: PolicyKind::Vbs,
            core_policies: Vec::new(),
            clusters: Vec::new(),
            cost: self.cost,
            tasks,
            groups: Vec::new(),
            vbs: Some(VbsSpec {
                strategy: self.strategy,
                plugin: self.plugin,
                quantum: self.quantum,
                resolution_bits: self.horizon_bits,
                caps: self
                    .processes
                    .iter()
                    .map(|p| Some((p.cap.parts(), BandwidthCap::SCALE)))
                    .collect(),
            }),
            cpis: Vec::new(),
            components: Vec::new(),
        })
    }
}
