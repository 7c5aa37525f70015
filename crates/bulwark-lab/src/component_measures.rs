//! The component paper's measures of a scenario's component tasks after a run: each one's
//! worst priority inversion, the distinct lower jobs behind it, its context's budget
//! exhaustions, beside the bound the analysis gives that inversion: `B_i`, plus SPR's `I_i`
//! when the task runs in a reservation (what `analyze` prints for the same core). Every
//! front end reports them alike: the CLI's `simulate` (its table and `--json`) and the Python
//! package's `simulate`.

use bulwark_core::Duration;
use bulwark_sim::components::{ComponentTaskOutcome, ProtocolCosts};
use bulwark_sim::Outcome;
use bulwark_spec::{ComponentPart, Scenario};
use serde_json::{json, Value};

use crate::component_system::{lower, timings_with_regions};

/// One component task's measures.
#[derive(Clone, Debug)]
pub struct ComponentMeasure {
    /// The task's name.
    pub task: String,
    /// The core its system runs on.
    pub core: u16,
    /// What the run measured.
    pub measured: ComponentTaskOutcome,
    /// `B_i (+ I_i)`; `None` when its system's analysis does not apply (a call loop).
    pub bound: Option<Duration>,
}

/// The measures `outcome` recorded for the component tasks of `scenario` (composed, as
/// [`compose`](crate::component_system::compose) leaves it), core by core; `None` when it
/// has no component system.
pub fn component_measures(scenario: &Scenario, outcome: &Outcome) -> Option<Vec<ComponentMeasure>> {
    if scenario.components.is_empty() {
        return None;
    }
    let records = outcome.components.as_deref()?;
    let costs = ProtocolCosts::of(&scenario.cost);
    let mut measures = Vec::new();
    for part in &scenario.components {
        let Some(lowered_at) = part.lowered.as_ref() else {
            continue;
        };
        let bounds = bounds(part, costs);
        for (i, (_, task)) in part.system.tasks().iter().enumerate() {
            let Some(Some(measured)) = records.tasks.get(lowered_at.start + i) else {
                continue;
            };
            measures.push(ComponentMeasure {
                task: task.name.clone(),
                core: part.core,
                measured: measured.clone(),
                bound: bounds.as_ref().and_then(|b| b.get(i).copied()),
            });
        }
    }
    Some(measures)
}

/// The measures as `--json`'s `components` array.
pub fn measures_json(measures: &[ComponentMeasure]) -> Value {
    let rows: Vec<Value> = measures
        .iter()
        .map(|row| {
            let m = &row.measured;
            json!({
                "task": row.task,
                "core": row.core,
                "jobs": m.jobs,
                "misses": m.misses,
                "max_response_ns": m.max_response.as_nanos(),
                "max_inversion_ns": m.max_inversion.as_nanos(),
                "max_lower_jobs": m.max_lower_jobs,
                "inversion_bound_ns": row.bound.map(Duration::as_nanos),
                "budget_exhaustions": m.budget_exhaustions,
            })
        })
        .collect();
    Value::Array(rows)
}

/// Each task's inversion bound in `part`, in its system's task order, as `analyze`
/// computes it: the part lowered at the scenario's cost table, its blocking terms with each
/// reservation's `I_i` added.
fn bounds(part: &ComponentPart, costs: ProtocolCosts) -> Option<Vec<Duration>> {
    let analysis = bulwark_analysis::component_graph::analyze(&part.system);
    let lowered = lower(&part.system, &analysis, costs).ok()?;
    let timings = timings_with_regions(&part.system, &lowered)?;
    Some(timings.iter().map(|t| t.blocking).collect())
}
