//! Located errors: which file, where in it, what is wrong and what is allowed.
//!
//! Each [`SpecError`] is a `miette` diagnostic (source, label, help) for fancy output, and its
//! plain `Display` is the one-line `file:line:column: message` that tests and logs compare.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use miette::{Diagnostic, NamedSource, SourceSpan};

/// One thing wrong with a scenario file.
#[derive(Debug, Diagnostic)]
pub struct SpecError {
    file: String,
    /// 1-based line and column (in characters); `None` when there is no text to point into,
    /// as for a file that cannot be read.
    location: Option<(usize, usize)>,
    message: String,
    #[help]
    help: String,
    #[source_code]
    source_code: NamedSource<Arc<str>>,
    #[label]
    span: Option<SourceSpan>,
}

impl SpecError {
    /// The file name, as given to [`crate::parse`] or [`crate::load`].
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line, if the error points into the text.
    pub fn line(&self) -> Option<usize> {
        self.location.map(|(line, _)| line)
    }

    /// The 1-based column, counted in characters, if the error points into the text.
    pub fn column(&self) -> Option<usize> {
        self.location.map(|(_, column)| column)
    }

    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What is allowed instead.
    pub fn help(&self) -> &str {
        &self.help
    }

    /// The byte range of the offending text, if any.
    pub fn span(&self) -> Option<Range<usize>> {
        self.span.map(|s| s.offset()..s.offset() + s.len())
    }

    /// The error on one line with its help: `file:line:column: message (help)`.
    pub fn plain(&self) -> String {
        format!("{self} ({})", self.help)
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.location {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

impl std::error::Error for SpecError {}

/// Every error found in one scenario file, in file order.
///
/// `Display` is a one-line summary; each error is a related diagnostic, so `miette` renders
/// them all with their source. [`Diagnostics::plain`] gives one line per error.
#[derive(Debug, Diagnostic)]
pub struct Diagnostics {
    file: String,
    #[related]
    errors: Vec<SpecError>,
}

impl Diagnostics {
    /// The errors, in file order.
    pub fn errors(&self) -> &[SpecError] {
        &self.errors
    }

    /// How many errors there are (at least one).
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// Always false: a `Diagnostics` holds at least one error. Here for clippy's sake.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// One `file:line:column: message (help)` line per error, each ending in a newline.
    pub fn plain(&self) -> String {
        self.errors.iter().map(|e| e.plain() + "\n").collect()
    }

    pub(crate) fn new(file: &str, errors: Vec<SpecError>) -> Diagnostics {
        Diagnostics {
            file: file.to_owned(),
            errors,
        }
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.len();
        let plural = if n == 1 { "" } else { "s" };
        write!(f, "{}: {n} error{plural} in scenario", self.file)
    }
}

impl std::error::Error for Diagnostics {}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a SpecError;
    type IntoIter = std::slice::Iter<'a, SpecError>;

    fn into_iter(self) -> Self::IntoIter {
        self.errors.iter()
    }
}

/// A file's text and name, which turn byte spans into located errors.
pub(crate) struct Source {
    file: String,
    text: Arc<str>,
    /// The byte offset where each line starts (the first is 0), built once so that locating
    /// an offset is a binary search rather than a rescan of the text before it: validation
    /// locates every task's name, and rescanning made it quadratic in the number of tasks.
    line_starts: Vec<usize>,
    /// Whether every byte is ASCII, so that a column is a byte difference and needs no count.
    ascii: bool,
}

impl Source {
    pub(crate) fn new(file: &str, text: &str) -> Source {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        scanned::add(text.len());
        Source {
            file: file.to_owned(),
            text: Arc::from(text),
            line_starts,
            ascii: text.is_ascii(),
        }
    }

    /// The text diagnostics point into.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The file name given to [`Source::new`].
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// An error at `span`, with its line and column worked out.
    pub(crate) fn error(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> SpecError {
        let start = self.char_boundary(span.start);
        let end = self.char_boundary(span.end.max(span.start));
        SpecError {
            file: self.file.clone(),
            location: Some(self.line_and_column(start)),
            message: one_line(message.into()),
            help: one_line(help.into()),
            source_code: self.named(),
            span: Some(SourceSpan::from(start..end)),
        }
    }

    /// The end of a validation: `value` when no check failed, else every error in file order
    /// (stable, so errors at one place keep the order they were found in). A check that
    /// yields `None` always records why; if none did, that is reported as an internal error
    /// rather than passed off as success.
    pub(crate) fn finish<T>(
        &self,
        value: Option<T>,
        mut errors: Vec<SpecError>,
    ) -> Result<T, Vec<SpecError>> {
        match value {
            Some(value) if errors.is_empty() => Ok(value),
            _ => {
                if errors.is_empty() {
                    errors.push(self.error(
                        0..0,
                        "internal error: a check failed without saying why",
                        "please report this file to the Bulwark developers",
                    ));
                }
                errors.sort_by_key(|e| e.span().map_or(0, |s| s.start));
                Err(errors)
            }
        }
    }

    /// An error at `span` when `text`, the name of `what`, is longer than
    /// [`crate::MAX_NAME_CHARS`]; the message gives its length, not the name itself.
    pub(crate) fn long_name(
        &self,
        span: Range<usize>,
        text: &str,
        what: &str,
    ) -> Option<SpecError> {
        let chars = text.chars().count();
        (chars > crate::MAX_NAME_CHARS).then(|| {
            self.error(
                span,
                format!("{what} is {chars} characters long"),
                format!(
                    "allowed: names of at most {} characters",
                    crate::MAX_NAME_CHARS
                ),
            )
        })
    }

    /// An error about the whole file that points at no text (it could not be read).
    pub(crate) fn unlocated(
        &self,
        message: impl Into<String>,
        help: impl Into<String>,
    ) -> SpecError {
        SpecError {
            file: self.file.clone(),
            location: None,
            message: one_line(message.into()),
            help: one_line(help.into()),
            source_code: self.named(),
            span: None,
        }
    }

    fn named(&self) -> NamedSource<Arc<str>> {
        NamedSource::new(&self.file, Arc::clone(&self.text)).with_language("toml")
    }

    /// `offset` clamped into the text and moved back onto a character boundary, so that no
    /// span from a parser can make slicing panic.
    fn char_boundary(&self, offset: usize) -> usize {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// The 1-based line `offset` is on.
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.line_and_column(self.char_boundary(offset)).0
    }

    /// The 1-based line and character column of `offset`, which is on a character boundary.
    fn line_and_column(&self, offset: usize) -> (usize, usize) {
        // The last line start at or before `offset`; `line_starts[0] == 0`, so one exists.
        let index = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1);
        let line_start = self.line_starts.get(index).copied().unwrap_or(0);
        let column = if self.ascii {
            offset.saturating_sub(line_start)
        } else {
            let prefix = self.text.get(line_start..offset).unwrap_or("");
            scanned::add(prefix.len());
            prefix.chars().count()
        };
        (index + 1, column + 1)
    }
}

/// The help of a reference that names no table of its kind: the names that could be meant,
/// each once, blank ones (refused at their tables) left out; or, with none, `add`.
pub(crate) fn names_help<'n>(names: impl IntoIterator<Item = &'n str>, add: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    let offered: Vec<&str> = (names.into_iter())
        .filter(|name| !name.trim().is_empty() && seen.insert(*name))
        .collect();
    if offered.is_empty() {
        add.to_owned()
    } else {
        format!("allowed: {}", offered.join(", "))
    }
}

/// How many bytes of source text were scanned to locate offsets, counted in tests only so
/// that a test can show that locating is linear in the file's size.
#[cfg(test)]
pub(crate) mod scanned {
    use std::cell::Cell;

    thread_local! {
        static BYTES: Cell<usize> = const { Cell::new(0) };
    }

    pub(crate) fn add(bytes: usize) {
        BYTES.with(|b| b.set(b.get() + bytes));
    }

    /// The bytes scanned on this thread since the last call, and a fresh start.
    pub(crate) fn take() -> usize {
        BYTES.with(|b| b.replace(0))
    }
}

#[cfg(not(test))]
mod scanned {
    /// Counting is for tests; elsewhere it compiles to nothing.
    #[inline(always)]
    pub(crate) fn add(_bytes: usize) {}
}

/// Messages are shown after `file:line:column:`, so they must stay on one line.
fn one_line(text: String) -> String {
    if text.contains(['\n', '\r']) {
        text.split(['\n', '\r'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_characters_from_one() {
        let source = Source::new("f.toml", "a = 1\nb = \"\u{b5}\u{b5}x\"\n");
        assert_eq!(source.line_and_column(0), (1, 1));
        assert_eq!(source.line_and_column(4), (1, 5));
        assert_eq!(source.line_and_column(6), (2, 1));
        // `x` is after two two-byte characters: byte 15, character column 8.
        let x = "a = 1\nb = \"\u{b5}\u{b5}".len();
        assert_eq!(source.line_and_column(x), (2, 8));
    }

    #[test]
    fn offsets_at_line_ends_and_past_the_last_newline() {
        let source = Source::new("f.toml", "ab\n\nc\n");
        assert_eq!(source.line_and_column(2), (1, 3)); // the newline ending line 1
        assert_eq!(source.line_and_column(3), (2, 1)); // the empty line 2
        assert_eq!(source.line_and_column(4), (3, 1));
        assert_eq!(source.line_and_column(6), (4, 1)); // the end, after the last newline
        assert_eq!(source.line(999), 4);
    }

    /// Validating n tasks locates every task's name. Rescanning the text before each name
    /// costs about n^2 / 2 task lengths; the line index costs one pass over the text plus,
    /// for non-ASCII text, the located lines. With 2,000 tasks the old way scans about 1,000
    /// times the file, so a bound of 3 times the file fails it and passes the index.
    #[test]
    fn validation_scans_the_text_a_bounded_number_of_times() {
        for accent in ["", "\u{e9}"] {
            let mut text =
                String::from("name = \"many\"\npolicy = \"fixed-priority\"\nduration = \"10ms\"\n");
            for i in 0..2_000 {
                text.push_str(&format!(
                    "\n[[task]] # t{accent}\nname = \"t{i}{accent}\"\npriority = 1\n\
                     period = \"{}ms\"\nexecution = \"1us\"\n",
                    1_000 + i
                ));
            }
            scanned::take();
            let scenario = crate::parse(&text, "many.toml").expect("valid");
            assert_eq!(scenario.tasks.len(), 2_000);
            let bytes = scanned::take();
            assert!(
                bytes <= 3 * text.len(),
                "scanned {bytes} bytes for a {}-byte file",
                text.len()
            );
            assert!(bytes >= text.len(), "the index reads the file once");
        }
    }

    #[test]
    fn spans_past_the_end_or_inside_a_character_do_not_panic() {
        let source = Source::new("f.toml", "\u{b5}");
        let e = source.error(1..99, "m", "h");
        assert_eq!(e.span(), Some(0..2));
        assert_eq!((e.line(), e.column()), (Some(1), Some(1)));
        assert_eq!(e.to_string(), "f.toml:1:1: m");
        assert_eq!(e.plain(), "f.toml:1:1: m (h)");
    }

    #[test]
    fn messages_stay_on_one_line() {
        let source = Source::new("f.toml", "");
        let e = source.error(0..0, "first\n  second\n", "h\r\ni");
        assert_eq!(e.message(), "first; second");
        assert_eq!(e.help(), "h; i");
    }

    #[test]
    fn unlocated_errors_name_the_file() {
        let e = Source::new("gone.toml", "").unlocated("cannot read it", "h");
        assert_eq!(e.to_string(), "gone.toml: cannot read it");
        assert_eq!(e.line(), None);
        let all = Diagnostics::new("gone.toml", vec![e]);
        assert_eq!(all.to_string(), "gone.toml: 1 error in scenario");
        assert_eq!(all.plain(), "gone.toml: cannot read it (h)\n");
    }
}
