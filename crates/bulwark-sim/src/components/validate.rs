//! What a component system must be to run: every request names a CPI, every period and
//! pool is non-empty, every reservation has a budget.

use super::{ComponentSystemConfig, Step};

/// Why a configuration cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ComponentConfigError {
    /// A step requests a CPI that does not exist.
    #[error("{owner} requests CPI #{cpi}, but there are only {count} CPIs")]
    UnknownCpi {
        /// The task or CPI whose body it is.
        owner: String,
        /// The index it names.
        cpi: usize,
        /// How many CPIs there are.
        count: usize,
    },
    /// A task body given for a task that does not exist.
    #[error("CPI {cpi} has a body for task #{task}, but there are only {count} tasks")]
    UnknownTask {
        /// The CPI.
        cpi: String,
        /// The index it names.
        task: usize,
        /// How many tasks there are.
        count: usize,
    },
    /// A task with period zero.
    #[error("task {task} has period zero; a period must be positive")]
    ZeroPeriod {
        /// The task.
        task: String,
    },
    /// A CPI with an empty pool.
    #[error("CPI {cpi} has no threads; a pool needs at least one")]
    EmptyPool {
        /// The CPI.
        cpi: String,
    },
    /// The machine refused the lowered system: a bug of the lowering or the machine.
    #[error("the machine refused the system: {reason}")]
    Machine {
        /// What it said.
        reason: String,
    },
    /// The run stopped early ([`crate::SimError::Backlog`]: a task's jobs came faster than
    /// they completed for longer than a run keeps them).
    #[error("{0}")]
    Stopped(crate::SimError),
    /// A reservation with no budget or no replenishment slot.
    #[error("task {task} has a reservation with a zero budget or zero replenishment slots")]
    EmptyReservation {
        /// The task.
        task: String,
    },
}

/// Refuses a system the machine cannot run, naming what is wrong.
pub fn validate(config: &ComponentSystemConfig) -> Result<(), ComponentConfigError> {
    let count = config.cpis.len();
    let check = |owner: &str, body: &[Step]| {
        for step in body {
            if let Step::Request(cpi) = *step {
                if cpi >= count {
                    return Err(ComponentConfigError::UnknownCpi {
                        owner: owner.to_string(),
                        cpi,
                        count,
                    });
                }
            }
        }
        Ok(())
    };
    for task in &config.tasks {
        if task.period.is_zero() {
            return Err(ComponentConfigError::ZeroPeriod {
                task: task.name.clone(),
            });
        }
        check(&task.name, &task.body)?;
        if task
            .reservation
            .is_some_and(|r| r.budget.is_zero() || r.replenishments == 0)
        {
            return Err(ComponentConfigError::EmptyReservation {
                task: task.name.clone(),
            });
        }
    }
    for cpi in &config.cpis {
        if cpi.threads == 0 {
            return Err(ComponentConfigError::EmptyPool {
                cpi: cpi.name.clone(),
            });
        }
        check(&cpi.name, &cpi.body)?;
        for (task, body) in &cpi.task_bodies {
            if *task >= config.tasks.len() {
                return Err(ComponentConfigError::UnknownTask {
                    cpi: cpi.name.clone(),
                    task: *task,
                    count: config.tasks.len(),
                });
            }
            check(&cpi.name, body)?;
        }
    }
    Ok(())
}
