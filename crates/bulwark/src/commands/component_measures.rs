//! `simulate` of a scenario with `[[component]]` tables: the component paper's measures of
//! each component task (its worst priority inversion, the distinct lower jobs behind it, its
//! context's budget exhaustions) beside the bound the analysis gives that inversion: `B_i`,
//! plus SPR's `I_i` when the task runs in a reservation (what `analyze` prints for the same
//! core). A component file's `simulate` prints its own table; this is the same for a core of
//! a scenario.

use bulwark_core::Duration;
use bulwark_sim::components::ComponentTaskOutcome;
use bulwark_sim::Outcome;
use bulwark_spec::Scenario;
use serde_json::{json, Value};

use crate::table;

/// One component task's measures.
struct Row {
    task: String,
    core: u16,
    measured: ComponentTaskOutcome,
    /// `B_i (+ I_i)`; `None` when the part's analysis does not apply (a call loop).
    bound: Option<Duration>,
}

/// The measures of every component task of a composed scenario, core by core.
pub struct ComponentMeasures {
    rows: Vec<Row>,
}

impl ComponentMeasures {
    /// The measures `outcome` recorded for `scenario`'s component tasks; `None` when it has
    /// no component system.
    pub fn of(scenario: &Scenario, outcome: &Outcome) -> Option<ComponentMeasures> {
        let records = outcome.components.as_deref()?;
        let mut rows = Vec::new();
        for part in &scenario.components {
            let Some(lowered_at) = part.lowered.as_ref() else {
                continue;
            };
            let bounds = bounds(part);
            for (i, (_, task)) in part.system.tasks().iter().enumerate() {
                let index = lowered_at.start + i;
                let Some(Some(measured)) = records.tasks.get(index) else {
                    continue;
                };
                rows.push(Row {
                    task: task.name.clone(),
                    core: part.core,
                    measured: measured.clone(),
                    bound: bounds.as_ref().and_then(|b| b.get(i).copied()),
                });
            }
        }
        (!scenario.components.is_empty()).then_some(ComponentMeasures { rows })
    }

    /// The table `simulate` prints under the run's.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                let m = &row.measured;
                vec![
                    row.task.clone(),
                    row.core.to_string(),
                    m.jobs.to_string(),
                    m.misses.to_string(),
                    m.max_response.to_string(),
                    m.max_inversion.to_string(),
                    m.max_lower_jobs.to_string(),
                    row.bound.map_or_else(|| "-".to_owned(), |b| b.to_string()),
                    m.budget_exhaustions.to_string(),
                ]
            })
            .collect();
        let mut out = String::from(
            "\ncomponent tasks (inversion: work of lower tasks while a job was pending; \
             bound: B_i, plus SPR's I_i in a reservation):\n",
        );
        out.push_str(&table::render(
            &[
                "task",
                "core",
                "jobs",
                "misses",
                "max response",
                "max inversion",
                "lower jobs",
                "bound (B + I)",
                "exhaustions",
            ],
            &rows,
        ));
        out
    }

    /// `--json`'s `components` array.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
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
}

/// Each task's inversion bound in `part`, in its system's task order, as `analyze` computes
/// it: the part lowered at the scenario's cost table, its blocking terms with each
/// reservation's `I_i` added.
fn bounds(part: &bulwark_spec::ComponentPart) -> Option<Vec<Duration>> {
    let system = &part.system;
    let analysis = bulwark_analysis::component_graph::analyze(system);
    let costs = super::components::costs(None, system);
    let lowered = bulwark_lab::component_system::lower(system, &analysis, costs).ok()?;
    super::components::Schedulability::of(&lowered, system).map(|s| s.inversion_bounds())
}
