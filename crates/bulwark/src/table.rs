//! A plain text table with aligned columns.

/// Renders `header` and `rows` with columns padded to their widest cell; the first column is
/// left-aligned, the others right-aligned (they hold numbers and times).
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Padding is pushed by hand: `format!`'s width argument panics at 65,536 and more, and a
    // cell may be that wide.
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, (cell, &width)) in cells.zip(&widths).enumerate() {
            let padding = " ".repeat(width.saturating_sub(cell.chars().count()));
            if i == 0 {
                out.push_str(cell);
                out.push_str(&padding);
            } else {
                out.push_str("  ");
                out.push_str(&padding);
                out.push_str(cell);
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(&mut header.iter().copied());
    for row in rows {
        out.push_str(&line(&mut row.iter().map(String::as_str)));
    }
    out
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

#[cfg(test)]
mod tests {
    #[test]
    fn columns_align() {
        let rows = vec![
            vec!["t1".to_owned(), "5".to_owned()],
            vec!["longer".to_owned(), "12".to_owned()],
        ];
        assert_eq!(
            super::render(&["task", "jobs"], &rows),
            "task    jobs\nt1         5\nlonger    12\n"
        );
    }

    /// `format!("{:<w$}")` panics for w >= 65,536; padding by hand does not.
    #[test]
    fn cells_wider_than_formatting_allows_are_padded() {
        let wide = "x".repeat(70_000);
        let rows = vec![
            vec![wide.clone(), "1".to_owned()],
            vec!["t".to_owned(), "22".to_owned()],
        ];
        let text = super::render(&["task", "jobs"], &rows);
        let lines: Vec<&str> = text.lines().collect();
        // Header: "task", 70,000 - 4 spaces, two spaces, "jobs" right-aligned in 4.
        assert_eq!(lines[0].len(), 70_000 + 2 + 4);
        assert_eq!(lines[1], format!("{wide}     1"));
        assert_eq!(lines[2], format!("t{}    22", " ".repeat(69_999)));
    }
}
