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
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.zip(&widths).enumerate() {
            if i == 0 {
                out.push_str(&format!("{cell:<w$}"));
            } else {
                out.push_str(&format!("  {cell:>w$}"));
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
}
