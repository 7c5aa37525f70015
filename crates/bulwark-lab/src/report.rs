//! The reproduction report: every experiment's checks, tables and figures as Markdown and HTML,
//! one page per experiment and an index of every experiment in the directory.
//!
//! Layout of the directory written:
//!
//! ```text
//! dir/index.md            overall verdict and one row per experiment, linking its page
//! dir/index.html          the same, rendered, with each experiment's first figure
//! dir/NAME/report.md      one experiment: source, summary, checks, tables, figures
//! dir/NAME/index.html     the same, rendered (inline CSS, figures by path)
//! dir/NAME/summary.json   what the index says of it: title, source, verdict, first figure
//! dir/NAME/FILE           each figure's SVG
//! ```
//!
//! The index is rebuilt from every `summary.json` in the directory, so running one experiment
//! into an existing report adds or replaces its page and keeps every other one listed. The HTML
//! is the Markdown rendered by pulldown-cmark, so both show the same thing.
//!
//! Every name that becomes a path is checked before anything is written, so a bad report
//! leaves no half-written directory behind. All text is escaped for the format it lands in.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::markup::{escape, markdown_text, markdown_to_html};

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

/// The claims of the checks that failed, in order: what a test names when it expects some
/// checks to fail and the others to hold.
pub fn failing_claims(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.claim.clone())
        .collect()
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

/// Column headings as written.
pub fn headings<const N: usize>(names: [&str; N]) -> Vec<String> {
    names.map(String::from).to_vec()
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
    /// Claims this run could not judge, neither passed nor failed: a host experiment's timing
    /// claims when the platform (the hypervisor's steal, a timer over 1 ms late) disturbed
    /// every attempt to measure them. The summary says what the platform took.
    pub not_judged: Vec<Check>,
}

/// The report's heading, in both formats.
const TITLE: &str = "Bulwark reproduction report";

/// Each experiment's summary file, from which the index is rebuilt.
const SUMMARY_FILE: &str = "summary.json";

/// What the index says of one experiment, kept in `dir/NAME/summary.json` so that an index
/// can be rebuilt from every experiment in the directory, whichever run wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// The experiment's id and directory.
    pub name: String,
    /// Human title.
    pub title: String,
    /// Which paper, figure or textbook it reproduces.
    pub source: String,
    /// Checks that hold.
    pub passed: usize,
    /// Checks in all.
    pub total: usize,
    /// The claims of the checks that fail.
    pub failing: Vec<String>,
    /// The claims the run could not judge ([`ExperimentReport::not_judged`]); absent from
    /// summaries written before there were any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<String>,
    /// The first figure's file, shown small in the index, if the experiment has one.
    pub figure: Option<String>,
}

impl Summary {
    fn of(report: &ExperimentReport) -> Summary {
        Summary {
            name: report.name.clone(),
            title: report.title.clone(),
            source: report.source.clone(),
            passed: report.checks.iter().filter(|check| check.pass).count(),
            total: report.checks.len(),
            failing: failing_claims(&report.checks),
            not_judged: claims(&report.not_judged),
            figure: report.figures.first().map(|figure| figure.file.clone()),
        }
    }

    fn verdict(&self) -> String {
        with_not_judged(
            format!("{} of {} checks pass", self.passed, self.total),
            self.not_judged.len(),
        )
    }
}

/// Makes `dir` and checks that files can be written in it, so that a report or plots that
/// cannot be written are refused before the runs that make them (minutes), not after.
pub fn prepare_report_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(".bulwark-write-check");
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Writes `reports` into `dir` (created if missing), one page per experiment, then rebuilds
/// the index from every experiment's summary in `dir`, those of earlier runs included, and
/// returns every path written: for each experiment its figures, `report.md`, `index.html` and
/// `summary.json`, then `index.md` and `index.html`.
///
/// The index lists the experiments named in `order` first, in that order, then any others
/// found in `dir` by name. An experiment written again replaces its earlier pages.
///
/// Fails with [`io::ErrorKind::InvalidInput`] before writing anything if an experiment name or
/// figure file is not a plain file name of the allowed characters, or is used twice; with
/// [`io::ErrorKind::InvalidData`], naming the file, if a summary already in `dir` cannot be
/// read back.
pub fn write_report(
    dir: &Path,
    reports: &[ExperimentReport],
    order: &[&str],
) -> io::Result<Vec<PathBuf>> {
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
        let markdown = experiment_markdown(report);
        let path = experiment_dir.join("report.md");
        std::fs::write(&path, &markdown)?;
        written.push(path);
        let path = experiment_dir.join("index.html");
        std::fs::write(&path, experiment_page(report, &markdown))?;
        written.push(path);
        let path = experiment_dir.join(SUMMARY_FILE);
        let json = serde_json::to_string_pretty(&Summary::of(report)).map_err(io::Error::other)?;
        std::fs::write(&path, json + "\n")?;
        written.push(path);
    }
    let summaries = read_summaries(dir, order)?;
    let path = dir.join("index.md");
    std::fs::write(&path, index_markdown(&summaries, Links::Markdown))?;
    written.push(path);
    let path = dir.join("index.html");
    std::fs::write(&path, index_page(&summaries))?;
    written.push(path);
    Ok(written)
}

/// Every experiment's summary in `dir`: those named in `order` in that order, then the rest
/// by name. A subdirectory without a summary is not an experiment and is passed over.
pub fn read_summaries(dir: &Path, order: &[&str]) -> io::Result<Vec<Summary>> {
    let mut summaries = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let path = entry.path().join(SUMMARY_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        let summary: Summary = serde_json::from_str(&text).map_err(|error| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: line {}, column {}: {error}; delete the directory or run the \
                     experiment again",
                    path.display(),
                    error.line(),
                    error.column()
                ),
            )
        })?;
        // The summary names the directory it is in; anything else could link out of `dir`.
        if entry.file_name().to_str() != Some(summary.name.as_str()) || !is_id(&summary.name) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: name {:?} must be the directory's own name, of ASCII letters, digits, \
                     '-' or '_'",
                    path.display(),
                    summary.name
                ),
            ));
        }
        if let Some(figure) = summary
            .figure
            .as_deref()
            .filter(|file| !is_figure_file(file))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: figure {figure:?} must be a plain file name ending in .svg",
                    path.display()
                ),
            ));
        }
        summaries.push(summary);
    }
    let rank = |summary: &Summary| {
        order
            .iter()
            .position(|name| *name == summary.name)
            .unwrap_or(order.len())
    };
    summaries.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.name.cmp(&b.name)));
    Ok(summaries)
}

/// The claims of `checks`.
fn claims(checks: &[Check]) -> Vec<String> {
    checks.iter().map(|check| check.claim.clone()).collect()
}

/// `verdict` followed by ", K not judged" when the run could not judge K claims.
fn with_not_judged(verdict: String, not_judged: usize) -> String {
    if not_judged == 0 {
        verdict
    } else {
        format!("{verdict}, {not_judged} not judged")
    }
}

/// "N of M checks pass" over the report's checks, then ", K not judged" when the platform
/// kept it from judging K claims ([`ExperimentReport::not_judged`]).
pub fn report_verdict(report: &ExperimentReport) -> String {
    with_not_judged(verdict(&report.checks), report.not_judged.len())
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

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// ASCII letters, digits, `-` and `_`, at least one: safe as a path and in a URL.
fn is_id(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// A figure's file name: ASCII letters, digits, `-`, `_` and `.`, not hidden, ending in `.svg`
/// after at least one character.
fn is_figure_file(file: &str) -> bool {
    let file_character = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    file.chars().all(file_character)
        && !file.starts_with('.')
        && file.ends_with(".svg")
        && file.len() > ".svg".len()
}

/// Names become paths and URLs: keep them to characters that are safe in both, so no name can
/// climb out of `dir` or need percent-encoding.
fn validate(reports: &[ExperimentReport]) -> io::Result<()> {
    let mut names: Vec<&str> = Vec::with_capacity(reports.len());
    for report in reports {
        let name = report.name.as_str();
        if !is_id(name) {
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
            if !is_figure_file(file) {
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

/// A table row of plain-text cells.
fn markdown_row(out: &mut String, cells: impl IntoIterator<Item = String>) {
    out.push('|');
    for cell in cells {
        let _ = write!(out, " {} |", markdown_text(&cell));
    }
    out.push('\n');
}

/// One experiment as Markdown, its figures linked beside it. Its own text (the summary) is
/// Markdown; every other field is plain text and escaped.
fn experiment_markdown(report: &ExperimentReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", markdown_text(&report.title));
    let _ = writeln!(out, "*Source: {}*\n", markdown_text(&report.source));
    let summary = report.summary.trim();
    if !summary.is_empty() {
        let _ = writeln!(out, "{summary}\n");
    }
    if !report.checks.is_empty() || !report.not_judged.is_empty() {
        let _ = writeln!(out, "## Checks: {}\n", report_verdict(report));
        markdown_row(
            &mut out,
            ["claim", "expected", "measured", "result"].map(String::from),
        );
        out.push_str("| --- | --- | --- | --- |\n");
        for check in &report.checks {
            out.push('|');
            for cell in [&check.claim, &check.expected, &check.measured] {
                let _ = write!(out, " {} |", markdown_text(cell));
            }
            out.push_str(if check.pass {
                " pass |\n"
            } else {
                " **FAIL** |\n"
            });
        }
        for check in &report.not_judged {
            markdown_row(
                &mut out,
                [&check.claim, &check.expected, &check.measured, "not judged"].map(String::from),
            );
        }
        out.push('\n');
    }
    if !report.tables.is_empty() {
        out.push_str("## Results\n\n");
    }
    for table in &report.tables {
        let _ = writeln!(out, "**{}**\n", markdown_text(&table.caption));
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
        markdown_row(&mut out, padded(&table.header));
        let _ = writeln!(out, "|{}", " --- |".repeat(columns));
        for row in &table.rows {
            markdown_row(&mut out, padded(row));
        }
        out.push('\n');
    }
    if !report.figures.is_empty() {
        out.push_str("## Figures\n\n");
    }
    for figure in &report.figures {
        let caption = markdown_text(&figure.caption);
        let _ = writeln!(out, "![{caption}]({})\n", figure.file);
        let _ = writeln!(out, "*{caption}*\n");
    }
    out
}

/// Where the index's links go: the Markdown pages beside it, or the HTML ones.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Links {
    Markdown,
    Html,
}

impl Links {
    fn page(self, name: &str) -> String {
        match self {
            Links::Markdown => format!("{name}/report.md"),
            Links::Html => format!("{name}/index.html"),
        }
    }
}

/// Under `heading`, one line per claim `claims` picks from each summary, linked to its
/// experiment's page; nothing when there are none.
fn claim_list(
    out: &mut String,
    heading: &str,
    summaries: &[Summary],
    links: Links,
    claims: impl Fn(&Summary) -> &Vec<String>,
) {
    if summaries.iter().all(|s| claims(s).is_empty()) {
        return;
    }
    out.push_str(heading);
    for summary in summaries {
        for claim in claims(summary) {
            let _ = writeln!(
                out,
                "- [{}]({}): {}",
                markdown_text(&summary.name),
                links.page(&summary.name),
                markdown_text(claim)
            );
        }
    }
    out.push('\n');
}

/// "N of M checks pass" over every experiment of the index, then ", K not judged".
fn overall_verdict(summaries: &[Summary]) -> String {
    let passed: usize = summaries.iter().map(|s| s.passed).sum();
    let total: usize = summaries.iter().map(|s| s.total).sum();
    let not_judged: usize = summaries.iter().map(|s| s.not_judged.len()).sum();
    with_not_judged(format!("{passed} of {total} checks pass"), not_judged)
}

/// The index: the overall verdict (the HTML page shows it in its banner instead), then one
/// row per experiment with its verdict, and under the table every failing claim.
fn index_markdown(summaries: &[Summary], links: Links) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {TITLE}\n");
    let verdict = match links {
        Links::Markdown => format!("**{}** in ", overall_verdict(summaries)),
        Links::Html => String::new(),
    };
    let _ = writeln!(
        out,
        "{verdict}{} experiments. Each one's page has its claims, measurements, tables and \
         figures.\n",
        summaries.len()
    );
    if !summaries.is_empty() {
        out.push_str("| experiment | source | checks |\n| --- | --- | --- |\n");
        for summary in summaries {
            let checks = if summary.passed == summary.total {
                summary.verdict()
            } else {
                format!("**{}**", summary.verdict())
            };
            let _ = writeln!(
                out,
                "| [{}]({}) | {} | {checks} |",
                markdown_text(&summary.title),
                links.page(&summary.name),
                markdown_text(&summary.source),
            );
        }
        out.push('\n');
    }
    claim_list(&mut out, "## Failing checks\n\n", summaries, links, |s| {
        &s.failing
    });
    claim_list(
        &mut out,
        "## Checks not judged\n\nThe platform disturbed every attempt to measure them; each \
         experiment's page says what it took.\n\n",
        summaries,
        links,
        |s| &s.not_judged,
    );
    out
}

// ---------------------------------------------------------------- HTML

/// Page style: readable widths, visible pass and fail, figures that fit the column, wide
/// tables that scroll rather than overflow.
const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:68rem;margin:1.5rem auto;\
padding:0 1rem;color:#1d1d1d;line-height:1.5}\
nav.top{font-size:.95rem;margin-bottom:.5rem}\
h1{margin:.25rem 0 .5rem;line-height:1.2;font-size:1.75rem}\
h2{border-bottom:1px solid #ddd;padding-bottom:.25rem;margin-top:2rem}\
.verdict{font-size:1.1rem;font-weight:bold;padding:.4rem .75rem;border-radius:4px;display:inline-block}\
.verdict.pass{background:#e3f4e1;color:#1e6b1a}.verdict.fail{background:#fbe4e4;color:#9b1c1c}\
table{border-collapse:collapse;margin:.5rem 0 1.25rem;font-size:.9rem;display:block;overflow-x:auto}\
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td strong{color:#9b1c1c}tbody tr:nth-child(even){background:#fafafa}\
code{background:#f2f2f2;padding:0 .2em;border-radius:3px;font-size:.9em}\
p img{max-width:100%;height:auto;border:1px solid #e4e4e4}\
p em{color:#444}\
.index td:last-child{white-space:nowrap}\
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(20rem,1fr));gap:1rem;margin:1rem 0}\
.gallery a{display:block;border:1px solid #ddd;border-radius:4px;padding:.5rem;color:inherit;\
text-decoration:none;font-size:.85rem}\
.gallery a:hover{border-color:#4e79a7}.gallery img{width:100%;height:auto;display:block}";

/// `class` of a verdict: `pass` only when every check passes.
fn verdict_class(passed: usize, total: usize) -> &'static str {
    if passed == total {
        "pass"
    } else {
        "fail"
    }
}

/// A whole page: `top`, then `body` with `banner` just under its first heading. Written as
/// well-formed XML too (closed empty elements), so tools can parse it.
fn page(title: &str, top: &str, banner: &str, body: &str) -> String {
    let body = match body.find("</h1>\n") {
        Some(end) => {
            let (heading, rest) = body.split_at(end + "</h1>\n".len());
            format!("{heading}{banner}{rest}")
        }
        None => format!("{banner}{body}"),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{top}{body}</body>\n</html>\n",
        escape(title)
    )
}

/// One experiment's page: a link back to the index and its verdict above its Markdown,
/// rendered.
fn experiment_page(report: &ExperimentReport, markdown: &str) -> String {
    let passed = report.checks.iter().filter(|check| check.pass).count();
    let total = report.checks.len();
    let top = format!("<nav class=\"top\"><a href=\"../index.html\">&#8592; {TITLE}</a></nav>\n");
    let banner = format!(
        "<p class=\"verdict {}\">{}</p>\n",
        verdict_class(passed, total),
        report_verdict(report)
    );
    page(
        &format!("{} - {TITLE}", report.title),
        &top,
        &banner,
        &markdown_to_html(markdown),
    )
}

/// The index page: the index's Markdown rendered, then each experiment's first figure, small,
/// linking to its page.
fn index_page(summaries: &[Summary]) -> String {
    let passed: usize = summaries.iter().map(|s| s.passed).sum();
    let total: usize = summaries.iter().map(|s| s.total).sum();
    let banner = format!(
        "<p class=\"verdict {}\">{}</p>\n",
        verdict_class(passed, total),
        overall_verdict(summaries)
    );
    let mut body = String::from("<div class=\"index\">\n");
    body.push_str(&markdown_to_html(&index_markdown(summaries, Links::Html)));
    let with_figures: Vec<&Summary> = summaries.iter().filter(|s| s.figure.is_some()).collect();
    if !with_figures.is_empty() {
        body.push_str("<h2>Figures</h2>\n<div class=\"gallery\">\n");
        for summary in with_figures {
            let figure = summary.figure.as_deref().unwrap_or_default();
            let _ = writeln!(
                body,
                "<a href=\"{0}/index.html\"><img src=\"{0}/{1}\" alt=\"{2}\" loading=\"lazy\"/>{2}</a>",
                escape(&summary.name),
                escape(figure),
                escape(&summary.title),
            );
        }
        body.push_str("</div>\n");
    }
    body.push_str("</div>\n");
    page(TITLE, "", &banner, &body)
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
                not_judged: vec![],
            },
            ExperimentReport {
                name: "cbs_isolation".into(),
                title: "CBS isolation".into(),
                source: "Textbook".into(),
                summary: String::new(),
                checks: vec![check("no miss", "0", "0", true)],
                tables: vec![],
                figures: vec![],
                not_judged: vec![],
            },
        ]
    }

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).expect("written")
    }

    fn names() -> [&'static str; 2] {
        ["spr-overhead", "cbs_isolation"]
    }

    fn parse_html(html: &str) -> roxmltree::Document<'_> {
        let options = roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        };
        roxmltree::Document::parse_with_options(html, options).expect("well-formed")
    }

    #[test]
    fn writes_every_file_and_returns_the_paths() {
        let temporary = tempfile::tempdir().unwrap();
        let dir = temporary.path().join("out");
        let written = write_report(&dir, &sample(), &names()).unwrap();
        assert_eq!(
            written,
            [
                dir.join("spr-overhead/fp-gantt.svg"),
                dir.join("spr-overhead/report.md"),
                dir.join("spr-overhead/index.html"),
                dir.join("spr-overhead/summary.json"),
                dir.join("cbs_isolation/report.md"),
                dir.join("cbs_isolation/index.html"),
                dir.join("cbs_isolation/summary.json"),
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
        assert_eq!(verdict(&reports[0].checks), "1 of 2 checks pass");
        assert_eq!(verdict(&reports[1].checks), "1 of 1 checks pass");
        assert_eq!(verdict(&[]), "0 of 0 checks pass");
        let summary = Summary::of(&reports[0]);
        assert_eq!((summary.passed, summary.total), (1, 2));
        assert_eq!(summary.failing, ["response | bound"]);
        assert_eq!(summary.figure.as_deref(), Some("fp-gantt.svg"));
    }

    #[test]
    fn markdown_index_lists_every_experiment_with_its_verdict() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample(), &names()).unwrap();
        let index = read(&temporary.path().join("index.md"));
        assert!(index.starts_with("# Bulwark reproduction report\n\n**2 of 3 checks pass** in 2"));
        // The title's angle brackets and ampersand are escaped, so they stay text.
        assert!(index.contains(
            "| [SPR \\<overhead\\> \\& bounds](spr-overhead/report.md) | Paper A, Figure 3 | **1 of 2 checks pass** |\n"
        ), "{index}");
        assert!(index.contains(
            "| [CBS isolation](cbs_isolation/report.md) | Textbook | 1 of 1 checks pass |\n"
        ));
        assert!(index.find("spr-overhead/").unwrap() < index.find("cbs_isolation/").unwrap());
        assert!(index.contains(
            "## Failing checks\n\n- [spr-overhead](spr-overhead/report.md): response \\| bound\n"
        ));
    }

    #[test]
    fn experiment_markdown_has_checks_tables_and_figures_beside_it() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample(), &names()).unwrap();
        let report = read(&temporary.path().join("spr-overhead/report.md"));
        assert!(report.starts_with(
            "# SPR \\<overhead\\> \\& bounds\n\n*Source: Paper A, Figure 3*\n\nFirst paragraph."
        ), "{report}");
        assert!(report.contains("## Checks: 1 of 2 checks pass\n"));
        assert!(report.contains("| at most 2 reservations per invocation | \\<= 2 | 2 | pass |\n"));
        assert!(report.contains("| response \\| bound | 3ms | 4ms | **FAIL** |\n"));
        // The short row is padded to the header's two columns.
        assert!(report.contains("| task | misses |\n| --- | --- |\n| ctl | 0 |\n| log |  |\n"));
        assert!(report.contains("![Fixed priority \\[1 core\\]](fp-gantt.svg)"));
        assert!(!report.contains("CBS isolation"));
    }

    /// Each page is the Markdown rendered: elements, not markers; plain text escaped; the
    /// summary's own Markdown (here raw HTML) passes as CommonMark says.
    #[test]
    fn html_pages_are_rendered_well_formed_and_linked() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample(), &names()).unwrap();
        let page = read(&temporary.path().join("spr-overhead/index.html"));
        assert!(page.contains("<p class=\"verdict fail\">1 of 2 checks pass</p>"));
        assert!(
            page.contains("<h1>SPR &lt;overhead&gt; &amp; bounds</h1>"),
            "{page}"
        );
        assert!(
            page.contains(
                "<td>response | bound</td><td>3ms</td><td>4ms</td><td><strong>FAIL</strong></td>"
            ),
            "{page}"
        );
        assert!(page.contains("<td>&lt;= 2</td>"));
        assert!(page.contains("<a href=\"../index.html\">"));
        for marker in ["**", "](", "| ---", "\n# "] {
            assert!(!page.contains(marker), "{marker} in {page}");
        }
        let document = parse_html(&page);
        let image = document
            .descendants()
            .find(|node| node.has_tag_name("img"))
            .unwrap();
        assert_eq!(image.attribute("src"), Some("fp-gantt.svg"));
        assert_eq!(image.attribute("alt"), Some("Fixed priority [1 core]"));

        let index = read(&temporary.path().join("index.html"));
        assert!(index.contains("<p class=\"verdict fail\">2 of 3 checks pass</p>"));
        let document = parse_html(&index);
        let links: Vec<&str> = document
            .descendants()
            .filter(|node| node.has_tag_name("a"))
            .filter_map(|node| node.attribute("href"))
            .collect();
        for name in names() {
            assert!(
                links.contains(&format!("{name}/index.html").as_str()),
                "{links:?}"
            );
        }
        // The gallery shows the first figure of the experiments that have one.
        let images: Vec<&str> = document
            .descendants()
            .filter(|node| node.has_tag_name("img"))
            .filter_map(|node| node.attribute("src"))
            .collect();
        assert_eq!(images, ["spr-overhead/fp-gantt.svg"]);
    }

    /// Writing one experiment into a report that has others rebuilds the index from all of
    /// them; writing one again replaces its own entry.
    #[test]
    fn a_second_run_keeps_the_first_in_the_index() {
        let temporary = tempfile::tempdir().unwrap();
        let mut reports = sample();
        write_report(temporary.path(), &reports[1..], &names()).unwrap();
        write_report(temporary.path(), &reports[..1], &names()).unwrap();
        let index = read(&temporary.path().join("index.md"));
        assert!(index.contains("(cbs_isolation/report.md)"), "{index}");
        assert!(index.contains("(spr-overhead/report.md)"), "{index}");
        // In `order`'s order, whichever ran last.
        assert!(index.find("spr-overhead/").unwrap() < index.find("cbs_isolation/").unwrap());
        reports[0].checks.retain(|check| check.pass);
        write_report(temporary.path(), &reports[..1], &names()).unwrap();
        let index = read(&temporary.path().join("index.md"));
        assert!(index.contains("**2 of 2 checks pass**"), "{index}");
        assert_eq!(index.matches("(spr-overhead/report.md)").count(), 1);
        // Names not in `order` come last, by name; a folder without a summary is no
        // experiment.
        std::fs::create_dir(temporary.path().join("notes")).unwrap();
        let summaries = read_summaries(temporary.path(), &["cbs_isolation"]).unwrap();
        let listed: Vec<&str> = summaries.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(listed, ["cbs_isolation", "spr-overhead"]);
    }

    #[test]
    fn a_broken_summary_is_an_error_naming_its_file() {
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &sample(), &names()).unwrap();
        let path = temporary.path().join("cbs_isolation").join(SUMMARY_FILE);
        std::fs::write(&path, "{\n  \"name\": 3\n}").unwrap();
        let error = write_report(temporary.path(), &sample()[..1], &names()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        let message = error.to_string();
        assert!(
            message.contains("summary.json: line 2, column"),
            "{message}"
        );
        // A summary that names another directory could link anywhere: refused.
        let moved = Summary::of(&sample()[0]);
        std::fs::write(&path, serde_json::to_string(&moved).unwrap()).unwrap();
        let error = read_summaries(temporary.path(), &[]).unwrap_err();
        assert!(
            error.to_string().contains("directory's own name"),
            "{error}"
        );
        // So could a figure that is not a plain file name.
        let mut outside = Summary::of(&sample()[1]);
        outside.figure = Some("../../secret.svg".into());
        std::fs::write(&path, serde_json::to_string(&outside).unwrap()).unwrap();
        let error = read_summaries(temporary.path(), &[]).unwrap_err();
        assert!(error.to_string().contains("plain file name"), "{error}");
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
            let error = write_report(&dir, &reports, &[]).expect_err(&format!("case {index}"));
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "case {index}");
            assert!(!dir.exists(), "case {index} wrote something");
        }
    }

    #[test]
    fn an_empty_report_still_has_an_index() {
        let temporary = tempfile::tempdir().unwrap();
        let written = write_report(temporary.path(), &[], &[]).unwrap();
        assert_eq!(written.len(), 2);
        assert!(read(&written[0]).contains("**0 of 0 checks pass** in 0 experiments"));
        assert!(read(&written[1]).contains("<p class=\"verdict pass\">0 of 0 checks pass</p>"));
    }

    /// A claim the platform kept from being judged: counted apart in every verdict, listed
    /// on the page and in the index, kept in the summary; it neither passes nor fails.
    #[test]
    fn claims_not_judged_are_shown_apart_from_passes_and_failures() {
        let mut reports = sample();
        reports[1].not_judged = vec![check("response <= R", "<= 9ms", "31ms", false)];
        assert_eq!(
            report_verdict(&reports[1]),
            "1 of 1 checks pass, 1 not judged"
        );
        assert_eq!(report_verdict(&reports[0]), "1 of 2 checks pass");
        let temporary = tempfile::tempdir().unwrap();
        write_report(temporary.path(), &reports, &names()).unwrap();
        let page = read(&temporary.path().join("cbs_isolation/report.md"));
        assert!(
            page.contains("## Checks: 1 of 1 checks pass, 1 not judged\n"),
            "{page}"
        );
        assert!(page.contains("| response \\<= R | \\<= 9ms | 31ms | not judged |\n"));
        let index = read(&temporary.path().join("index.md"));
        assert!(
            index.contains("**2 of 3 checks pass, 1 not judged** in 2"),
            "{index}"
        );
        assert!(index.contains("| 1 of 1 checks pass, 1 not judged |"));
        assert!(index.contains(
            "## Checks not judged\n\nThe platform disturbed every attempt to measure them; \
             each experiment's page says what it took.\n\n\
             - [cbs\\_isolation](cbs_isolation/report.md): response \\<= R\n"
        ));
        // Not a failure: the page's banner stays a pass.
        let html = read(&temporary.path().join("cbs_isolation/index.html"));
        assert!(html.contains("<p class=\"verdict pass\">1 of 1 checks pass, 1 not judged</p>"));
        let summary = read(&temporary.path().join("cbs_isolation/summary.json"));
        assert!(
            summary.contains("\"not_judged\": [\n    \"response <= R\"\n  ]"),
            "{summary}"
        );
        // A summary of an experiment with every claim judged has no such field, and one
        // written before the field existed reads back with none.
        let other = read(&temporary.path().join("spr-overhead/summary.json"));
        assert!(!other.contains("not_judged"));
        let old: Summary = serde_json::from_str(
            r#"{"name":"x","title":"x","source":"x","passed":1,"total":1,"failing":[],"figure":null}"#,
        )
        .unwrap();
        assert!(old.not_judged.is_empty());
    }
}
