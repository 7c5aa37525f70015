//! A plain text table with aligned columns, for the analyses' own reports and the CLI's.

/// How a table's columns after the first align (the first is always left-aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// Right-aligned: they hold numbers and times.
    Numbers,
    /// Left-aligned: they hold names and lists.
    Text,
}

/// Renders `header` and `rows` with columns padded to their widest cell, two spaces apart,
/// each line without trailing spaces.
pub fn render(header: &[&str], rows: &[Vec<String>], columns: Columns) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    // Padding is pushed by hand: `format!`'s width argument panics at 65,536 and more, and a
    // cell may be that wide (the tasks of a CPI that thousands of clients call).
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut out = String::new();
        for (i, (cell, &width)) in cells.zip(&widths).enumerate() {
            let padding = " ".repeat(width.saturating_sub(cell.chars().count()));
            if i > 0 {
                out.push_str("  ");
            }
            if i == 0 || columns == Columns::Text {
                out.push_str(cell);
                out.push_str(&padding);
            } else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align() {
        let rows = vec![
            vec!["t1".to_owned(), "5".to_owned(), "a".to_owned()],
            vec!["longer".to_owned(), "12".to_owned(), "bcd".to_owned()],
        ];
        assert_eq!(
            render(&["task", "jobs", "x"], &rows, Columns::Numbers),
            "task    jobs    x\nt1         5    a\nlonger    12  bcd\n"
        );
        assert_eq!(
            render(&["task", "jobs", "x"], &rows, Columns::Text),
            "task    jobs  x\nt1      5     a\nlonger  12    bcd\n"
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
        let text = render(&["task", "jobs"], &rows, Columns::Numbers);
        let lines: Vec<&str> = text.lines().collect();
        // Header: "task", 70,000 - 4 spaces, two spaces, "jobs" right-aligned in 4.
        assert_eq!(lines[0].len(), 70_000 + 2 + 4);
        assert_eq!(lines[1], format!("{wide}     1"));
        assert_eq!(lines[2], format!("t{}    22", " ".repeat(69_999)));
    }
}
