//! `simulate` of a scenario with `[[component]]` tables: the table of its component tasks'
//! measures beside their inversion bounds ([`bulwark_lab::component_measures`] has them; a
//! component file's `simulate` prints its own table).

use bulwark_lab::component_measures::ComponentMeasure;

use crate::table;

/// The table `simulate` prints under the run's.
pub fn render(measures: &[ComponentMeasure]) -> String {
    let rows: Vec<Vec<String>> = measures
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
