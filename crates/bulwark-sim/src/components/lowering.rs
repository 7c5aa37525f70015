//! A component system as a scenario of the one machine: one fixed-priority core; each task a
//! thread whose script loops over its job's steps (`run` and `call`) and sleeps until its
//! next release; each CPI a kernel object with its pool's threads, which wait for requests at
//! its ceiling; the protocol overheads as the cost table's IPC rows at a 1 GHz clock (a
//! cycle a nanosecond, so the configuration's times are kept exactly).

use bulwark_core::ipc::Cpi;
use bulwark_core::Duration;
use bulwark_spec::lowered::Step as CpiStep;
use bulwark_spec::{
    Behaviour, CallReplyCycles, CostModel, CpiSpec, Execution, IpcCosts, PolicyKind, Scenario,
    Step, TaskSpec,
};

use super::{
    validate, CallReply, ComponentConfigError, ComponentOutcome, ComponentSystemConfig,
    ProtocolCosts, RunOptions,
};
use crate::{Machine, Outcome};

/// The cost table whose IPC rows and context switch are `costs`, at 1 GHz.
fn cost_model(costs: &ProtocolCosts) -> CostModel {
    let cycles = |d: Duration| d.as_nanos();
    let row = |row: CallReply| CallReplyCycles {
        call: cycles(row.call),
        reply: cycles(row.reply),
    };
    CostModel {
        clock_hz: 1_000_000_000,
        context_switch: cycles(costs.context_switch),
        ipc: IpcCosts {
            propagated: row(costs.propagated),
            fixed: row(costs.fixed),
            inherited_unlocked: row(costs.inherited_unlocked),
            inherited_locked: row(costs.inherited_locked),
            pip_to_pip: row(costs.pip_to_pip),
            pip_to_propagated: row(costs.pip_to_propagated),
            nest_to_inherited: cycles(costs.nest.to_inherited),
            nest_to_propagated: cycles(costs.nest.to_propagated),
        },
        ..CostModel::FREE
    }
}

/// One step of a job's or a procedure's body, in the script language.
fn script_step(step: &CpiStep) -> Step {
    match *step {
        CpiStep::Execute(time) => Step::Run(Execution::Fixed(time)),
        CpiStep::Request(cpi) => Step::Call(cpi),
    }
}

/// `config` as a scenario of the one machine, to run for `duration`. Its tasks keep their
/// indices; the pool threads follow them, CPI by CPI.
pub fn scenario(config: &ComponentSystemConfig, duration: Duration) -> Scenario {
    let mut tasks: Vec<TaskSpec> = config
        .tasks
        .iter()
        .map(|task| {
            let mut body: Vec<Step> = task.body.iter().map(script_step).collect();
            body.push(Step::SleepUntilNextRelease(task.period));
            TaskSpec {
                name: task.name.clone(),
                core: 0,
                priority: Some(task.priority),
                reservation: task.reservation,
                deadline: Some(task.period),
                behaviour: Behaviour::Script {
                    offset: task.offset,
                    steps: vec![Step::Loop { count: None, body }],
                },
            }
        })
        .collect();
    let capacity = config.tasks.len().max(1);
    let cpis = config
        .cpis
        .iter()
        .map(|cpi| {
            let state = Cpi::new(cpi.protocol, cpi.ceiling, cpi.threads, capacity);
            let size = if state.is_pooled() { cpi.threads } else { 1 };
            let pool = (0..size)
                .map(|index| {
                    tasks.push(TaskSpec {
                        name: format!("{}.{index}", cpi.name),
                        core: 0,
                        priority: Some(state.waiting_priority()),
                        reservation: None,
                        deadline: None,
                        behaviour: Behaviour::Script {
                            offset: Duration::ZERO,
                            steps: Vec::new(),
                        },
                    });
                    tasks.len() - 1
                })
                .collect();
            CpiSpec {
                cpi: cpi.clone(),
                pool,
            }
        })
        .collect();
    Scenario {
        name: "components".into(),
        description: String::new(),
        seed: 0,
        duration,
        cores: 1,
        policy: PolicyKind::FixedPriority,
        core_policies: Vec::new(),
        cost: cost_model(&config.costs),
        tasks,
        groups: Vec::new(),
        servers: Vec::new(),
        vbs: None,
        clusters: Vec::new(),
        cpis,
        components: Vec::new(),
    }
}

/// Runs `config` on the one machine until `options.until` (inclusive: a job released then
/// counts).
pub fn run(
    config: &ComponentSystemConfig,
    options: RunOptions,
) -> Result<ComponentOutcome, ComponentConfigError> {
    validate(config)?;
    let scenario = scenario(config, options.duration());
    let machine = Machine::new(&scenario, &options.machine_options())
        .map_err(machine_error)?
        .measuring_inversion(options.record_jobs);
    let run = machine.run(&mut |_| {}).map_err(|error| match error {
        backlog @ crate::SimError::Backlog { .. } => ComponentConfigError::Stopped(backlog),
        other => machine_error(other),
    })?;
    Ok(outcome(config, run))
}

/// The component paper's measures of `config` from the one machine's outcome of its
/// [`scenario`] (run with [`Machine::measuring_inversion`]): per task its jobs from their
/// planned releases, their inversion and the lower jobs, per core its busy time (kernel
/// time included) and switches.
pub fn outcome(config: &ComponentSystemConfig, run: Outcome) -> ComponentOutcome {
    let records = run.components.unwrap_or_default();
    let core = run.cores.first().copied().unwrap_or_default();
    ComponentOutcome {
        until: run.until,
        tasks: (0..config.tasks.len())
            .map(|i| records.tasks.get(i).cloned().flatten().unwrap_or_default())
            .collect(),
        pool_exhausted: records.pool_exhausted,
        protocol_errors: records.protocol_errors,
        busy: Duration::from_nanos(core.busy_ns.saturating_add(core.kernel_ns)),
        context_switches: core.context_switches,
        trace: run.trace,
    }
}

fn machine_error(error: crate::SimError) -> ComponentConfigError {
    ComponentConfigError::Machine {
        reason: error.to_string(),
    }
}
