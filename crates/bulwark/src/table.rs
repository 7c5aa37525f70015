//! The CLI's tables: numbers right-aligned, and statistics cells.

use bulwark_analysis::text_table::{self, Columns};

/// Renders `header` and `rows` with columns padded to their widest cell; the first column is
/// left-aligned, the others right-aligned (they hold numbers and times).
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    text_table::render(header, rows, Columns::Numbers)
}

/// A statistics cell, `min / mean / max` as times, or `-` when there were no samples.
pub fn min_mean_max(stats: &bulwark_sim::Stats) -> String {
    let time = |ns: u64| bulwark_core::Duration::from_nanos(ns).to_string();
    match stats.mean_ns() {
        None => "-".to_owned(),
        Some(mean) => format!(
            "{} / {} / {}",
            time(stats.min_ns),
            time(mean),
            time(stats.max_ns)
        ),
    }
}
