//! CAmkES text to tokens, each with its byte span; comments and white space dropped.
//!
//! The C preprocessor is not run: a line starting with `#` is an error that says so.

use std::ops::Range;

use crate::diagnostic::{Source, SpecError};

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// A name or keyword: letters, digits and `_`, not starting with a digit.
    Name(String),
    /// A whole number as written (decimal or `0x` hexadecimal), at most `u64::MAX`.
    Integer(u64),
    /// A string's contents, escapes resolved.
    Text(String),
    /// One of `{ } ( ) [ ] ; , . = < > - / : * +`.
    Punct(char),
    /// The end of the file.
    End,
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) kind: TokenKind,
    pub(crate) span: Range<usize>,
}

impl TokenKind {
    /// The token as people would name it in "expected X, found Y".
    pub(crate) fn describe(&self) -> String {
        match self {
            TokenKind::Name(name) => format!("`{name}`"),
            TokenKind::Integer(n) => format!("the number {n}"),
            TokenKind::Text(_) => "a string".to_owned(),
            TokenKind::Punct(c) => format!("`{c}`"),
            TokenKind::End => "the end of the file".to_owned(),
        }
    }
}

const PUNCTUATION: &str = "{}()[];,.=<>-/:*+";

const ALLOWED_TEXT: &str = "allowed: names, numbers, \"strings\", // and /* */ comments, \
     and { } ( ) [ ] ; , . = < > - / : * +";

/// The tokens of `text`, ending with one `End` token; or the first lexical error.
pub(crate) fn tokens(source: &Source, text: &str) -> Result<Vec<Token>, Box<SpecError>> {
    let mut lexer = Lexer {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    let mut out = Vec::new();
    loop {
        lexer.skip_space_and_comments(source)?;
        let start = lexer.at;
        let Some(c) = lexer.peek_char() else {
            out.push(Token {
                kind: TokenKind::End,
                span: start..start,
            });
            return Ok(out);
        };
        let kind = if c == '_' || c.is_ascii_alphabetic() {
            lexer.name()
        } else if c.is_ascii_digit() {
            lexer.number(source)?
        } else if c == '"' {
            lexer.string(source)?
        } else if c == '#' {
            let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            return Err(Box::new(source.error(
                start..end,
                "preprocessor directives are not expanded here",
                "run the C preprocessor first (cpp -P), or write the values out",
            )));
        } else if PUNCTUATION.contains(c) {
            lexer.at += 1;
            TokenKind::Punct(c)
        } else {
            return Err(Box::new(source.error(
                start..start + c.len_utf8(),
                format!("unexpected character `{c}`"),
                ALLOWED_TEXT,
            )));
        };
        out.push(Token {
            kind,
            span: start..lexer.at,
        });
    }
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Lexer<'_> {
    fn peek_char(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn byte_at(&self, offset: usize) -> Option<u8> {
        self.bytes.get(offset).copied()
    }

    fn skip_space_and_comments(&mut self, source: &Source) -> Result<(), Box<SpecError>> {
        loop {
            match (self.byte_at(self.at), self.byte_at(self.at + 1)) {
                (Some(b), _) if b.is_ascii_whitespace() => self.at += 1,
                (Some(b'/'), Some(b'/')) => {
                    self.at = self.text[self.at..]
                        .find('\n')
                        .map_or(self.text.len(), |i| self.at + i);
                }
                (Some(b'/'), Some(b'*')) => match self.text[self.at + 2..].find("*/") {
                    Some(i) => self.at += 2 + i + 2,
                    None => {
                        return Err(Box::new(source.error(
                            self.at..self.at + 2,
                            "this comment has no closing */",
                            "allowed: /* comments */ closed before the end of the file",
                        )))
                    }
                },
                _ => return Ok(()),
            }
        }
    }

    fn name(&mut self) -> TokenKind {
        let start = self.at;
        while self
            .byte_at(self.at)
            .is_some_and(|b| b == b'_' || b.is_ascii_alphanumeric())
        {
            self.at += 1;
        }
        TokenKind::Name(self.text[start..self.at].to_owned())
    }

    fn number(&mut self, source: &Source) -> Result<TokenKind, Box<SpecError>> {
        let start = self.at;
        while self
            .byte_at(self.at)
            .is_some_and(|b| b == b'_' || b.is_ascii_alphanumeric())
        {
            self.at += 1;
        }
        let written = &self.text[start..self.at];
        let (digits, radix) = match written
            .strip_prefix("0x")
            .or_else(|| written.strip_prefix("0X"))
        {
            Some(hex) => (hex, 16),
            None => (written, 10),
        };
        let all_digits = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
        if !all_digits {
            return Err(Box::new(source.error(
                start..self.at,
                format!("`{written}` is not a number"),
                "allowed: a whole number, like 42 or 0x2a (times are strings, like \"10ms\")",
            )));
        }
        u64::from_str_radix(digits, radix)
            .map(TokenKind::Integer)
            .map_err(|_| {
                Box::new(source.error(
                    start..self.at,
                    format!("the number {written} is too large"),
                    "allowed: whole numbers up to 18446744073709551615",
                ))
            })
    }

    fn string(&mut self, source: &Source) -> Result<TokenKind, Box<SpecError>> {
        let start = self.at;
        self.at += 1;
        let mut contents = String::new();
        while let Some(c) = self.peek_char() {
            match c {
                '"' => {
                    self.at += 1;
                    return Ok(TokenKind::Text(contents));
                }
                '\n' => break,
                '\\' => {
                    let escaped = self.text[self.at + 1..].chars().next();
                    let resolved = match escaped {
                        Some('"') => '"',
                        Some('\\') => '\\',
                        Some('n') => '\n',
                        Some('t') => '\t',
                        _ => {
                            let width = 1 + escaped.map_or(0, char::len_utf8);
                            return Err(Box::new(source.error(
                                self.at..self.at + width,
                                "unknown escape in a string",
                                "allowed: \\\" \\\\ \\n \\t",
                            )));
                        }
                    };
                    contents.push(resolved);
                    self.at += 2;
                }
                _ => {
                    contents.push(c);
                    self.at += c.len_utf8();
                }
            }
        }
        Err(Box::new(source.error(
            start..self.at,
            "this string has no closing quote",
            "allowed: a string on one line, between double quotes",
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let source = Source::new("t.camkes", text);
        tokens(&source, text)
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn error(text: &str) -> String {
        let source = Source::new("t.camkes", text);
        tokens(&source, text).unwrap_err().to_string()
    }

    #[test]
    fn names_numbers_strings_and_punctuation() {
        use TokenKind::*;
        assert_eq!(
            kinds("a._priority = 0x10; // c\n/* x */ b.s = \"q\\\"\";"),
            vec![
                Name("a".into()),
                Punct('.'),
                Name("_priority".into()),
                Punct('='),
                Integer(16),
                Punct(';'),
                Name("b".into()),
                Punct('.'),
                Name("s".into()),
                Punct('='),
                Text("q\"".into()),
                Punct(';'),
                End,
            ]
        );
    }

    #[test]
    fn spans_cover_the_token() {
        let text = "  abc \"de\"";
        let source = Source::new("t.camkes", text);
        let t = tokens(&source, text).unwrap();
        assert_eq!(t[0].span, 2..5);
        assert_eq!(t[1].span, 6..10);
        assert_eq!(t[2].span, 10..10);
    }

    #[test]
    fn lexical_errors_are_located() {
        assert_eq!(error("a\n  @"), "t.camkes:2:3: unexpected character `@`");
        assert_eq!(
            error("x = \"abc\n"),
            "t.camkes:1:5: this string has no closing quote"
        );
        assert_eq!(
            error("/* never"),
            "t.camkes:1:1: this comment has no closing */"
        );
        assert_eq!(
            error("#define N 2\n"),
            "t.camkes:1:1: preprocessor directives are not expanded here"
        );
        assert_eq!(
            error("99999999999999999999"),
            "t.camkes:1:1: the number 99999999999999999999 is too large"
        );
        assert_eq!(error("12ab"), "t.camkes:1:1: `12ab` is not a number");
        assert_eq!(error("\"\\q\""), "t.camkes:1:2: unknown escape in a string");
    }
}
