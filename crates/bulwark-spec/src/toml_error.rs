//! TOML syntax errors and serde's errors (unknown, missing or mistyped keys) as located errors.

use crate::diagnostic::{Source, SpecError};

/// The one error `toml` stopped at, split into what is wrong and what is allowed.
pub(crate) fn located(source: &Source, error: &toml::de::Error) -> SpecError {
    let span = error.span().unwrap_or(0..0);
    let (message, help) = split(error.message());
    source.error(span, message, help)
}

/// Splits messages such as "unknown field `x`, expected one of `a`, `b`" at "expected".
fn split(message: &str) -> (String, String) {
    let message = message.trim();
    if let Some((what, expected)) = message.split_once(", expected ") {
        let expected = expected.strip_prefix("one of ").unwrap_or(expected);
        return (
            what.to_owned(),
            format!("allowed: {}", plain_words(expected)),
        );
    }
    if let Some(field) = message.strip_prefix("missing field ") {
        return (
            message.to_owned(),
            format!("add {} = ... to this table", field.trim_matches('`')),
        );
    }
    if message.ends_with(", there are no fields") {
        let what = message.trim_end_matches(", there are no fields");
        return (what.to_owned(), "allowed: no keys in this table".to_owned());
    }
    let help = match message {
        "duplicate key" => "allowed: each key once per table",
        "string values must be quoted" => "allowed: strings in quotes, like \"2ms\"",
        "floating-point number overflowed" => {
            "allowed: numbers of at most about 1.8e308; times are \
             written in quotes with a unit, like \"5ms\""
        }
        "cannot recurse further; max recursion depth met" => {
            "allowed: arrays and tables nested less deeply"
        }
        _ => "allowed: TOML: key = value lines, [tables] and [[task]] tables",
    };
    (message.to_owned(), help.to_owned())
}

/// Serde's names for what it expected, in words people use.
fn plain_words(expected: &str) -> &str {
    match expected {
        "i64" | "u64" | "i32" | "u32" | "u16" | "u8" => "a whole number, without quotes",
        "a sequence" => "an array, like [ ... ]",
        "a string" => "text in quotes",
        "a boolean" => "true or false, without quotes",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_at_what_was_expected() {
        assert_eq!(
            split("unknown field `x`, expected one of `a`, `b`"),
            ("unknown field `x`".into(), "allowed: `a`, `b`".into())
        );
        assert_eq!(
            split("unknown field `x`, expected `a`"),
            ("unknown field `x`".into(), "allowed: `a`".into())
        );
        assert_eq!(
            split("invalid type: string \"1\", expected i64"),
            (
                "invalid type: string \"1\"".into(),
                "allowed: a whole number, without quotes".into()
            )
        );
        assert_eq!(
            split("missing field `name`"),
            (
                "missing field `name`".into(),
                "add name = ... to this table".into()
            )
        );
        assert_eq!(
            split("duplicate key"),
            (
                "duplicate key".into(),
                "allowed: each key once per table".into()
            )
        );
    }
}
