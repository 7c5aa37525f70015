//! Text in the formats the lab writes: escaping for XML and HTML (SVG figures, the report's
//! page frame), escaping plain text for Markdown, and Markdown rendered to HTML.
//!
//! Markdown is rendered by pulldown-cmark (CommonMark with GitHub's tables), so that what a
//! reader sees in the HTML report is what a Markdown viewer shows for the `.md` files: bold,
//! code, links and tables, never their markers.

use pulldown_cmark::{html, Options, Parser};

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by entities, safe in element content and in
/// quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// Plain `text` as Markdown that shows exactly that text, on one line: every character that
/// could start emphasis, a link, raw HTML, an entity, a heading or a table cell is
/// backslash-escaped (CommonMark 2.4: any ASCII punctuation may be), and line breaks become
/// spaces, since table cells and headings end at a newline. The one markup kept is a code
/// span between two backticks (`memory_bytes_for`), which the experiments' texts use for
/// names from the code: it shows as code, its content as written (only a pipe is escaped, as
/// GitHub tables need inside code spans too). An unpaired backtick is escaped.
pub(crate) fn markdown_text(text: &str) -> String {
    let line = text
        .split(['\r', '\n'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let paired = line.matches('`').count() % 2 == 0;
    let mut escaped = String::with_capacity(line.len() + line.len() / 8);
    let mut in_code = false;
    for character in line.chars() {
        if character == '`' && paired {
            in_code = !in_code;
            escaped.push(character);
            continue;
        }
        let special = if in_code {
            character == '|'
        } else {
            matches!(
                character,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '|' | '#' | '!' | '~'
            )
        };
        if special {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

/// `markdown` rendered as an HTML fragment: CommonMark with GitHub-style tables. Raw HTML in
/// the input passes through, as CommonMark says; text the report did not write itself reaches
/// here through [`markdown_text`], which escapes it.
pub(crate) fn markdown_to_html(markdown: &str) -> String {
    let parser = Parser::new_ext(markdown, Options::ENABLE_TABLES);
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, parser);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_replaced() {
        assert_eq!(escape(r#"a<b>&"c'"#), "a&lt;b&gt;&amp;&quot;c&#39;");
        assert_eq!(escape("plain µs"), "plain µs");
    }

    /// Bold, code, links and tables become elements; none of their markers is left.
    #[test]
    fn markdown_becomes_elements() {
        let html = markdown_to_html(
            "# Title\n\nSee **this** and `code.rs`, [a link](x/report.md).\n\n\
             | a | b |\n| --- | --- |\n| 1 | 2 |\n",
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<strong>this</strong>"), "{html}");
        assert!(html.contains("<code>code.rs</code>"), "{html}");
        assert!(
            html.contains("<a href=\"x/report.md\">a link</a>"),
            "{html}"
        );
        assert!(
            html.contains("<th>a</th>") && html.contains("<td>2</td>"),
            "{html}"
        );
        for marker in ["**", "`", "](", "| ---", "# "] {
            assert!(!html.contains(marker), "{marker} in {html}");
        }
    }

    /// Escaped plain text shows every character as written, and makes no element.
    #[test]
    fn escaped_text_renders_literally() {
        let plain = "<b>x</b> & *not* [no](link) a|b #1 _u_ \\ ~s~ ! one ` tick";
        let html = markdown_to_html(&markdown_text(plain));
        assert_eq!(
            html,
            format!("<p>{}</p>\n", escape(plain)).replace("&#39;", "'")
        );
        // A pair of backticks is a code span, its content shown as written.
        let html = markdown_to_html(&markdown_text("what `memory_bytes_for` <computes>"));
        assert_eq!(
            html,
            "<p>what <code>memory_bytes_for</code> &lt;computes&gt;</p>\n"
        );
        let cell = format!("| {} |\n| --- |\n", markdown_text("`a|b` c"));
        let html = markdown_to_html(&cell);
        assert!(html.contains("<th><code>a|b</code> c</th>"), "{html}");
        // In a table cell, a pipe stays inside its cell.
        let table = format!("| {} | z |\n| --- | --- |\n", markdown_text("a | b"));
        let html = markdown_to_html(&table);
        assert!(html.contains("<th>a | b</th><th>z</th>"), "{html}");
        // Line breaks would end a cell or heading: they become spaces.
        assert_eq!(markdown_text("one\r\ntwo\n"), "one two");
    }
}
