//! The reproduction report: every experiment's checks, tables and figures as Markdown and HTML.
//!
//! Layout of the directory written:
//!
//! ```text
//! dir/index.md            overall verdict, a summary table, then every experiment in full
//! dir/index.html          the same as one self-contained page (inline CSS, figures by path)
//! dir/NAME/report.md      one experiment on its own
//! dir/NAME/FILE           each figure's SVG
//! ```
//!
//! Every name that becomes a path is checked before anything is written, so a bad report
//! leaves no half-written directory behind. All text is escaped for the format it lands in.

use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::markup::escape;

/// A figure: an SVG written beside the report and shown in it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Figure {
    /// File name within the experiment's directory, e.g. `fp-gantt.svg`: ASCII letters, digits,
    /// `-`, `_` and `.`, ending in `.svg`.
    pub file: String,
    /// What the figure shows.
    pub caption: String,
    /// The SVG document.
    pub svg: String,
}

/// One claim checked against a measurement.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What the paper or the theory says.
    pub claim: String,
    /// The value or bound expected.
    pub expected: String,
    /// What the run measured.
    pub measured: String,
    /// Whether the measurement agrees.
    pub pass: bool,
}

/// A table of results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Table {
    /// What the table shows.
    pub caption: String,
    /// Column headings.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// One experiment's results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ExperimentReport {
    /// Kebab-case id, used as its directory name: ASCII letters, digits, `-` and `_`.
    pub name: String,
    /// Human title.
    pub title: String,
    /// Which paper, figure or textbook it reproduces.
    pub source: String,
    /// A Markdown paragraph (or several, separated by blank lines).
    pub summary: String,
    /// Claims checked.
    pub checks: Vec<Check>,
    /// Tables of results.
    pub tables: Vec<Table>,
    /// Figures.
    pub figures: Vec<Figure>,
}

/// The report's heading, in both formats.
const TITLE: &str = "Bulwark reproduction report";

/// Writes the report for `reports` into `dir` (created if missing) and returns every path
/// written: each experiment's figures and `report.md`, then `index.md` and `index.html`.
///
/// Fails with [`io::ErrorKind::InvalidInput`] before writing anything if an experiment name or
/// figure file is not a plain file name of the allowed characters, or is used twice.
pub fn write_report(dir: &Path, reports: &[ExperimentReport]) -> io::Result<Vec<PathBuf>> {
    validate(reports)?;
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for report in reports {
        let experiment_dir = dir.join(&report.name);
        std::fs::create_dir_all(&experiment_dir)?;
        for figure in &report.figures {
            let path = experiment_dir.join(&figure.file);
            std::fs::write(&path, &figure.svg)?;
            written.push(path);
        }
        let path = experiment_dir.join("report.md");
        std::fs::write(&path, experiment_markdown(report))?;
        written.push(path);
    }
    let path = dir.join("index.md");
    std::fs::write(&path, index_markdown(reports))?;
    written.push(path);
    let path = dir.join("index.html");
    std::fs::write(&path, index_html(reports))?;
    written.push(path);
    Ok(written)
}

/// "N of M checks pass" over `checks`.
pub fn verdict<'a>(checks: impl IntoIterator<Item = &'a Check>) -> String {
    let (passed, total) = checks
        .into_iter()
        .fold((0usize, 0usize), |(passed, total), check| {
            (passed + usize::from(check.pass), total + 1)
        });
    format!("{passed} of {total} checks pass")
}

fn all_checks(reports: &[ExperimentReport]) -> impl Iterator<Item = &Check> {
    reports.iter().flat_map(|report| &report.checks)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Names become paths and URLs: keep them to characters that are safe in both, so no name can
/// climb out of `dir` or need percent-encoding.
fn validate(reports: &[ExperimentReport]) -> io::Result<()> {
    let id_character = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    let file_character = |c: char| id_character(c) || c == '.';
    let mut names: Vec<&str> = Vec::with_capacity(reports.len());
    for report in reports {
        let name = report.name.as_str();
        if name.is_empty() || !name.chars().all(id_character) {
            return Err(invalid(format!(
                "experiment name {name:?} must be non-empty ASCII letters, digits, '-' or '_'"
            )));
        }
        if names.contains(&name) {
            return Err(invalid(format!("experiment name {name:?} is used twice")));
        }
        names.push(name);
        let mut files: Vec<&str> = Vec::with_capacity(report.figures.len());
        for figure in &report.figures {
            let file = figure.file.as_str();
            let plain = file.chars().all(file_character) && !file.starts_with('.');
            if !plain || !file.ends_with(".svg") || file.len() <= ".svg".len() {
                return Err(invalid(format!(
                    "figure file {file:?} of {name:?} must be a plain name ending in .svg"
                )));
            }
            if files.contains(&file) {
                return Err(invalid(format!(
                    "figure file {file:?} of {name:?} is used twice"
                )));
            }
            files.push(file);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- Markdown

/// Text on one line: Markdown tables and headings end at a newline.
fn markdown_line(text: &str) -> String {
    text.split(['\r', '\n'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A table cell: one line, with pipes escaped so they do not split the cell.
fn markdown_cell(text: &str) -> String {
    markdown_line(text).replace('|', "\\|")
}

fn markdown_row(out: &mut String, cells: impl IntoIterator<Item = String>) {
    out.push('|');
    for cell in cells {
        let _ = write!(out, " {} |", markdown_cell(&cell));
    }
    out.push('\n');
}

/// One experiment's body below its heading; figures are linked as `figure_prefix` + file.
fn experiment_body(out: &mut String, report: &ExperimentReport, figure_prefix: &str) {
    let _ = writeln!(out, "Source: {}\n", markdown_line(&report.source));
    let summary = report.summary.trim();
    if !summary.is_empty() {
        let _ = writeln!(out, "{summary}\n");
    }
    if !report.checks.is_empty() {
        let _ = writeln!(out, "**Checks: {}.**\n", verdict(&report.checks));
        markdown_row(
            out,
            ["claim", "expected", "measured", "result"].map(String::from),
        );
        out.push_str("| --- | --- | --- | --- |\n");
        for check in &report.checks {
            let result = if check.pass { "pass" } else { "**FAIL**" };
            markdown_row(
                out,
                [
                    check.claim.clone(),
                    check.expected.clone(),
                    check.measured.clone(),
                    result.to_string(),
                ],
            );
        }
        out.push('\n');
    }
    for table in &report.tables {
        let _ = writeln!(out, "**{}**\n", markdown_line(&table.caption));
        let columns = table
            .header
            .len()
            .max(table.rows.iter().map(Vec::len).max().unwrap_or(0));
        // Pad short rows: a Markdown table row needs every column.
        let padded = |cells: &[String]| -> Vec<String> {
            let mut cells = cells.to_vec();
            cells.resize(columns, String::new());
            cells
        };
        markdown_row(out, padded(&table.header));
        let _ = writeln!(out, "|{}", " --- |".repeat(columns));
        for row in &table.rows {
            markdown_row(out, padded(row));
        }
        out.push('\n');
    }
    for figure in &report.figures {
        let alt = markdown_line(&figure.caption)
            .replace('[', "\\[")
            .replace(']', "\\]");
        let _ = writeln!(out, "![{alt}]({figure_prefix}{})\n", figure.file);
        let _ = writeln!(out, "*{}*\n", markdown_line(&figure.caption));
    }
}

fn experiment_markdown(report: &ExperimentReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", markdown_line(&report.title));
    experiment_body(&mut out, report, "");
    out
}

fn index_markdown(reports: &[ExperimentReport]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {TITLE}\n");
    let _ = writeln!(out, "**{}.**\n", verdict(all_checks(reports)));
    if !reports.is_empty() {
        markdown_row(
            &mut out,
            ["experiment", "source", "checks"].map(String::from),
        );
        out.push_str("| --- | --- | --- |\n");
        for report in reports {
            let link = format!(
                "[{}]({}/report.md)",
                markdown_line(&report.title)
                    .replace('[', "\\[")
                    .replace(']', "\\]"),
                report.name
            );
            markdown_row(
                &mut out,
                [link, report.source.clone(), verdict(&report.checks)],
            );
        }
        out.push('\n');
    }
    for report in reports {
        let _ = writeln!(out, "## {}\n", markdown_line(&report.title));
        experiment_body(&mut out, report, &format!("{}/", report.name));
    }
    out
}

// ---------------------------------------------------------------- HTML

/// Page style: readable widths, visible pass and fail, figures that fit the column.
const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:72rem;margin:2rem auto;\
padding:0 1rem;color:#1d1d1d;line-height:1.5}\
h1{margin-bottom:.25rem}h2{border-bottom:1px solid #ddd;padding-bottom:.25rem;margin-top:2.5rem}\
.verdict{font-size:1.2rem;font-weight:bold;padding:.5rem .75rem;border-radius:4px;display:inline-block}\
.verdict.pass{background:#e3f4e1;color:#1e6b1a}.verdict.fail{background:#fbe4e4;color:#9b1c1c}\
.source{color:#555;font-style:italic}\
table{border-collapse:collapse;margin:1rem 0;font-size:.95rem}\
caption{text-align:left;font-weight:bold;padding-bottom:.25rem}\
th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}\
th{background:#f3f3f3}tr.pass td.result{color:#1e6b1a;font-weight:bold}\
tr.fail td.result{color:#9b1c1c;font-weight:bold}tr.fail{background:#fdf1f1}\
figure{margin:1.5rem 0}figure img{max-width:100%;height:auto;border:1px solid #e4e4e4}\
figcaption{color:#444;font-size:.95rem}";

/// `class` of a verdict: `pass` only when every check passes.
fn verdict_class<'a>(checks: impl IntoIterator<Item = &'a Check>) -> &'static str {
    if checks.into_iter().all(|check| check.pass) {
        "pass"
    } else {
        "fail"
    }
}

fn html_row(out: &mut String, cell: &str, cells: &[String]) {
    out.push_str("<tr>");
    for text in cells {
        let _ = write!(out, "<{cell}>{}</{cell}>", escape(text));
    }
    out.push_str("</tr>\n");
}

fn experiment_html(out: &mut String, report: &ExperimentReport) {
    let _ = writeln!(out, "<section id=\"{}\">", escape(&report.name));
    let _ = writeln!(out, "<h2>{}</h2>", escape(&report.title));
    let _ = writeln!(
        out,
        "<p class=\"source\">Source: {}</p>",
        escape(&report.source)
    );
    for paragraph in report.summary.split("\n\n").map(str::trim) {
        if !paragraph.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", escape(paragraph));
        }
    }
    if !report.checks.is_empty() {
        let _ = writeln!(
            out,
            "<table class=\"checks\">\n<caption>Checks: {}</caption>",
            verdict(&report.checks)
        );
        out.push_str(
            "<thead><tr><th>claim</th><th>expected</th><th>measured</th><th>result</th></tr></thead>\n<tbody>\n",
        );
        for check in &report.checks {
            let (class, result) = if check.pass {
                ("pass", "pass")
            } else {
                ("fail", "FAIL")
            };
            let _ = writeln!(
                out,
                "<tr class=\"{class}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"result\">{result}</td></tr>",
                escape(&check.claim),
                escape(&check.expected),
                escape(&check.measured),
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    for table in &report.tables {
        let _ = writeln!(
            out,
            "<table>\n<caption>{}</caption>",
            escape(&table.caption)
        );
        out.push_str("<thead>");
        html_row(out, "th", &table.header);
        out.push_str("</thead>\n<tbody>\n");
        for row in &table.rows {
            html_row(out, "td", row);
        }
        out.push_str("</tbody>\n</table>\n");
    }
    for figure in &report.figures {
        let _ = writeln!(
            out,
            "<figure><img src=\"{}/{}\" alt=\"{}\"/><figcaption>{}</figcaption></figure>",
            escape(&report.name),
            escape(&figure.file),
            escape(&figure.caption),
            escape(&figure.caption),
        );
    }
    out.push_str("</section>\n");
}

/// The page; written as well-formed XML too (closed empty elements), so tools can parse it.
fn index_html(reports: &[ExperimentReport]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n");
    let _ = writeln!(
        out,
        "<title>{TITLE}</title>\n<style>{STYLE}</style>\n</head>\n<body>"
    );
    let _ = writeln!(out, "<h1>{TITLE}</h1>");
    let _ = writeln!(
        out,
        "<p class=\"verdict {}\">{}</p>",
        verdict_class(all_checks(reports)),
        verdict(all_checks(reports))
    );
    if !reports.is_empty() {
        out.push_str("<nav>\n<ul>\n");
        for report in reports {
            let _ = writeln!(
                out,
                "<li><a href=\"#{}\">{}</a>: {}</li>",
                escape(&report.name),
                escape(&report.title),
                verdict(&report.checks)
            );
        }
        out.push_str("</ul>\n</nav>\n");
    }
    for report in reports {
        experiment_html(&mut out, report);
    }
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(claim: &str, expected: &str, measured: &str, pass: bool) -> Check {
        Check {
            claim: claim.into(),
            expected: expected.into(),
            measured: measured.into(),
            pass,
        }
    }

    fn sample() -> Vec<ExperimentReport> {
        vec![
            ExperimentReport {
                name: "spr-overhead".into(),
                title: "SPR <overhead> & bounds".into(),
                source: "Paper A, Figure 3".into(),
                summary: "First paragraph.\n\nSecond <b>paragraph</b>.".into(),
                checks: vec![
                    check("at most 2 reservations per invocation", "<= 2", "2", true),
                    check("response | bound", "3ms", "4ms", false),
                ],
                tables: vec![Table {
                    caption: "Per-task results".into(),
                    header: vec!["task".into(), "misses".into()],
                    rows: vec![vec!["ctl".into(), "0".into()], vec!["log".into()]],
                }],
                figures: vec![Figure {
                    file: "fp-gantt.svg".into(),
                    caption: "Fixed priority [1 core]".into(),
                    svg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>".into(),
                }],
            },
            ExperimentReport {
                name: "cbs_isolation".into(),
                title: "CBS isolation".into(),
                source: "Textbook".into(),
                summary: String::new(),
                checks: vec![check("no miss", "0", "0", true)],
                tables: vec![],
                figures: vec![],
            },
        ]
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).expect("written")
    }

    #[test]
    fn writes_every_file_and_returns_the_paths() {
        let temporary = tempfile::tempdir().unwrap();
        let dir = temporary.path().join("out");
        let written = write_report(&dir, &sample()).unwrap();
        assert_eq!(
            written,
            [
                dir.join("spr-overhead/fp-gantt.svg"),
                dir.join("spr-overhead/report.md"),
                dir.join("cbs_isolation/report.md"),
                dir.join("index.md"),
                dir.join("index.html"),
            ]
        );
        assert!(written.iter().all(|path| path.is_file()));
        assert_eq!(
            read(&dir.join("spr-overhead/fp-gantt.svg")),
            "<svg xmlns=\"http://www.w3.org/2000/svg\"/>"
        );
    }

    #[test]
    fn verdict_counts_passing_checks() {
        let reports = sample();
        assert_eq!(verdict(all_checks(&reports)), "2 of 3 checks pass");
        assert_eq!(verdict(&reports[1].checks), "1 of 1 checks pass");
        assert_eq!(verdict(&[]), "0 of 0 checks pass");
    }

    #[test]
    fn markdown_index_has_verdict_checks_tables_and_figures() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample()).unwrap();
        let index = read(&temporary.path().join("index.md"));
        assert!(index.starts_with("# Bulwark reproduction report\n\n**2 of 3 checks pass.**\n"));
        assert!(index.contains(
            "| [SPR <overhead> & bounds](spr-overhead/report.md) | Paper A, Figure 3 | 1 of 2 checks pass |\n"
        ));
        assert!(index.contains("| at most 2 reservations per invocation | <= 2 | 2 | pass |\n"));
        assert!(index.contains("| response \\| bound | 3ms | 4ms | **FAIL** |\n"));
        // The short row is padded to the header's two columns.
        assert!(index.contains("| task | misses |\n| --- | --- |\n| ctl | 0 |\n| log |  |\n"));
        assert!(index.contains("![Fixed priority \\[1 core\\]](spr-overhead/fp-gantt.svg)"));
        assert!(index.contains("## CBS isolation\n"));
        assert!(index.find("## SPR").unwrap() < index.find("## CBS").unwrap());
    }

    #[test]
    fn experiment_markdown_links_figures_beside_it() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample()).unwrap();
        let report = read(&temporary.path().join("spr-overhead/report.md"));
        assert!(report.starts_with("# SPR <overhead> & bounds\n\nSource: Paper A, Figure 3\n"));
        assert!(report.contains("**Checks: 1 of 2 checks pass.**\n"));
        assert!(report.contains("![Fixed priority \\[1 core\\]](fp-gantt.svg)"));
        assert!(!report.contains("CBS isolation"));
    }

    #[test]
    fn html_is_escaped_well_formed_and_complete() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample()).unwrap();
        let html = read(&temporary.path().join("index.html"));
        assert!(html.contains("<p class=\"verdict fail\">2 of 3 checks pass</p>"));
        assert!(html.contains("<h2>SPR &lt;overhead&gt; &amp; bounds</h2>"));
        assert!(html.contains("<p>Second &lt;b&gt;paragraph&lt;/b&gt;.</p>"));
        assert!(!html.contains("<b>"));
        assert!(html.contains(
            "<tr class=\"fail\"><td>response | bound</td><td>3ms</td><td>4ms</td><td class=\"result\">FAIL</td></tr>"
        ));
        assert!(html.contains("<td>&lt;= 2</td>"));

        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        };
        let document =
            roxmltree::Document::parse_with_options(&html, options).expect("well-formed");
        let sections: Vec<_> = document
            .descendants()
            .filter(|node| node.has_tag_name("section"))
            .map(|node| node.attribute("id").unwrap())
            .collect();
        assert_eq!(sections, ["spr-overhead", "cbs_isolation"]);
        let check_rows = document
            .descendants()
            .filter(|node| node.has_tag_name("tr") && node.attribute("class").is_some())
            .count();
        assert_eq!(check_rows, 3);
        let image = document
            .descendants()
            .find(|node| node.has_tag_name("img"))
            .unwrap();
        assert_eq!(image.attribute("src"), Some("spr-overhead/fp-gantt.svg"));
        assert_eq!(image.attribute("alt"), Some("Fixed priority [1 core]"));
        let caption = document
            .descendants()
            .find(|node| node.has_tag_name("figcaption"))
            .unwrap();
        assert_eq!(caption.text(), Some("Fixed priority [1 core]"));
    }

    #[test]
    fn all_passing_verdict_is_marked_pass() {
        let temporary = tempfile::tempdir().unwrap();
        let reports = &sample()[1..];
        write_report(temporary.path(), reports).unwrap();
        let html = read(&temporary.path().join("index.html"));
        assert!(html.contains("<p class=\"verdict pass\">1 of 1 checks pass</p>"));
    }

    #[test]
    fn unsafe_or_repeated_names_are_refused_before_writing() {
        let cases: Vec<fn(&mut Vec<ExperimentReport>)> = vec![
            |reports| reports[0].name = "../escape".into(),
            |reports| reports[0].name = String::new(),
            |reports| reports[0].name = "has space".into(),
            |reports| reports[1].name = "spr-overhead".into(),
            |reports| reports[0].figures[0].file = "../x.svg".into(),
            |reports| reports[0].figures[0].file = "figure.png".into(),
            |reports| reports[0].figures[0].file = ".svg".into(),
            |reports| {
                let again = reports[0].figures[0].clone();
                reports[0].figures.push(again);
            },
        ];
        for (index, break_it) in cases.iter().enumerate() {
            let temporary = tempfile::tempdir().unwrap();
            let dir = temporary.path().join("out");
            let mut reports = sample();
            break_it(&mut reports);
            let error = write_report(&dir, &reports).expect_err(&format!("case {index}"));
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "case {index}");
            assert!(!dir.exists(), "case {index} wrote something");
        }
    }

    #[test]
    fn an_empty_report_still_has_an_index() {
        let temporary = tempfile::tempdir().unwrap();
        let written = write_report(temporary.path(), &[]).unwrap();
        assert_eq!(written.len(), 2);
        assert!(read(&written[0]).contains("**0 of 0 checks pass.**"));
    }
}
