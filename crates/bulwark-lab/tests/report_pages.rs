//! The reproduction report as a reader meets it: real experiments written to a folder, one
//! after the other, as `bulwark reproduce NAME --out DIR` does.
//!
//! - every HTML page is rendered Markdown: no literal `**`, backtick pairs, `](`, `#`
//!   headings or `| ---` table rules in what the browser shows, and the pages are well-formed;
//! - the index links every experiment page present in the folder;
//! - a second experiment written into the same folder keeps the first one in the index;
//! - with Chromium installed, `scripts/screenshot-report.sh` renders the index and each page
//!   to a PNG of the window's size (skipped, saying so, without Chromium).

use std::path::{Path, PathBuf};
use std::process::Command;

use bulwark_lab::experiments;
use bulwark_lab::report::{write_report, ExperimentReport};

/// Two quick experiments with checks, tables, figures and Markdown summaries.
const FIRST: &str = "textbook-fp-edf";
const SECOND: &str = "deferrable-double-hit";

fn run(name: &str) -> ExperimentReport {
    let experiment = experiments::find(name).expect("a built-in experiment");
    (experiment.run)().expect("runs")
}

fn order() -> Vec<&'static str> {
    experiments::ALL.iter().map(|e| e.name).collect()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse(html: &str) -> roxmltree::Document<'_> {
    let options = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..roxmltree::ParsingOptions::default()
    };
    roxmltree::Document::parse_with_options(html, options).expect("well-formed page")
}

/// The text a reader sees: every text node outside `<style>` and `<title>`, one per line.
fn visible_text(document: &roxmltree::Document<'_>) -> Vec<String> {
    document
        .descendants()
        .filter(|node| node.is_text())
        .filter(|node| {
            !node
                .ancestors()
                .any(|a| a.has_tag_name("style") || a.has_tag_name("title"))
        })
        .filter_map(|node| node.text())
        .flat_map(|text| text.lines().map(str::to_owned).collect::<Vec<_>>())
        .collect()
}

/// The Markdown markers that must not survive rendering, with the line that shows one.
fn markers(lines: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    for line in lines {
        let trimmed = line.trim_start();
        let heading = trimmed.starts_with("# ") || trimmed.starts_with("## ");
        let code = line.matches('`').count() >= 2;
        if line.contains("**") || code || line.contains("](") || heading || line.contains("| ---") {
            found.push(line.clone());
        }
    }
    found
}

/// Every `index.html` of an experiment in `dir`.
fn experiment_pages(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut pages: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("index.html").is_file())
        .map(|path| {
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            (name, path.join("index.html"))
        })
        .collect();
    pages.sort();
    pages
}

/// The `href`s of the index's links.
fn index_links(dir: &Path) -> Vec<String> {
    let html = read(&dir.join("index.html"));
    let document = parse(&html);
    document
        .descendants()
        .filter(|node| node.has_tag_name("a"))
        .filter_map(|node| node.attribute("href"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn pages_show_no_markdown_and_the_index_keeps_every_experiment() {
    let temporary = tempfile::tempdir().unwrap();
    let dir = temporary.path();

    let first = run(FIRST);
    // The summaries are Markdown with bold and code: what the HTML must not show as text.
    assert!(first.summary.contains('`') || first.summary.contains("**"));
    write_report(dir, std::slice::from_ref(&first), &order()).unwrap();
    let links = index_links(dir);
    assert!(links.contains(&format!("{FIRST}/index.html")), "{links:?}");

    // A second run, of another experiment, into the same folder.
    write_report(dir, &[run(SECOND)], &order()).unwrap();
    let pages = experiment_pages(dir);
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, [SECOND, FIRST]);
    let links = index_links(dir);
    for (name, _) in &pages {
        assert!(
            links.contains(&format!("{name}/index.html")),
            "{name} not linked from the index: {links:?}"
        );
    }
    let index_md = read(&dir.join("index.md"));
    assert!(
        index_md.contains(&format!("({FIRST}/report.md)")),
        "{index_md}"
    );
    assert!(
        index_md.contains(&format!("({SECOND}/report.md)")),
        "{index_md}"
    );

    // No page shows a Markdown marker; each experiment page has its code as <code>, its
    // tables as tables, and links back to the index.
    let index_html = read(&dir.join("index.html"));
    let found = markers(&visible_text(&parse(&index_html)));
    assert!(found.is_empty(), "index.html shows Markdown: {found:?}");
    for (name, page) in &pages {
        let html = read(page);
        let document = parse(&html);
        let found = markers(&visible_text(&document));
        assert!(found.is_empty(), "{name}: shows Markdown: {found:?}");
        let count = |tag: &str| {
            document
                .descendants()
                .filter(|node| node.has_tag_name(tag))
                .count()
        };
        assert!(count("table") >= 1, "{name}: no table");
        assert!(count("h1") == 1, "{name}: one title");
        assert!(
            document
                .descendants()
                .any(|node| node.has_tag_name("a")
                    && node.attribute("href") == Some("../index.html")),
            "{name}: no link back to the index"
        );
        // Every figure shown is a file beside the page.
        for image in document.descendants().filter(|n| n.has_tag_name("img")) {
            let src = image.attribute("src").unwrap();
            assert!(page.parent().unwrap().join(src).is_file(), "{name}: {src}");
        }
    }
    let first_page = read(&dir.join(FIRST).join("index.html"));
    if first.summary.contains('`') {
        assert!(first_page.contains("<code>"), "{first_page}");
    }
}

/// The width and height a PNG file declares (its IHDR chunk), if it is a PNG.
fn png_size(path: &Path) -> Option<(u32, u32)> {
    let bytes = std::fs::read(path).ok()?;
    let signature = b"\x89PNG\r\n\x1a\n";
    if bytes.len() < 24 || &bytes[..8] != signature || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let word =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    Some((word(16), word(20)))
}

#[test]
fn the_screenshot_script_renders_every_page() {
    let chromium_present = Command::new("sh")
        .args(["-c", "command -v chromium"])
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false);
    if !chromium_present {
        println!(
            "skipped: chromium is not installed (apt-get install -y chromium); \
             scripts/screenshot-report.sh needs it"
        );
        return;
    }
    let temporary = tempfile::tempdir().unwrap();
    let dir = temporary.path().join("report");
    let shots = temporary.path().join("shots");
    write_report(&dir, &[run(FIRST), run(SECOND)], &order()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/screenshot-report.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .arg(&shots)
        .env("WINDOW_SIZE", "800,600")
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["index", FIRST, SECOND] {
        let png = shots.join(format!("{name}.png"));
        assert_eq!(png_size(&png), Some((800, 600)), "{}", png.display());
    }
}
