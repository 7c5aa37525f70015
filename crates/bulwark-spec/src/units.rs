//! Quantities with units written in the file: times (`"1.5ms"`) and clock frequencies (`"2.5GHz"`).
//!
//! Both are read exactly, in integer arithmetic: a decimal is accepted only when it names a
//! whole number of the base unit (nanoseconds, hertz), and anything that would not fit in a
//! `u64` is refused rather than clamped.

use bulwark_core::Duration;

/// What is wrong with a quantity, and what would be right.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UnitError {
    /// What is wrong, naming the text as written.
    pub(crate) message: String,
    /// What is allowed.
    pub(crate) help: String,
}

/// One family of units: their names and how many base units each is worth.
struct UnitTable {
    /// What the quantity is called in messages ("time", "frequency").
    what: &'static str,
    /// The same, plural.
    what_plural: &'static str,
    /// Accepted spellings, each with its value in base units.
    units: &'static [(&'static str, u64)],
    /// The list shown to people.
    listed: &'static str,
    /// An example of a correct value.
    example: &'static str,
    /// The unit suggested for a bare number.
    example_unit: &'static str,
    /// The base unit's name, for "is not a whole number of ..." messages.
    base_plural: &'static str,
}

const TIME: UnitTable = UnitTable {
    what: "time",
    what_plural: "times",
    units: &[
        ("ns", 1),
        ("us", 1_000),
        ("\u{b5}s", 1_000),  // micro sign
        ("\u{3bc}s", 1_000), // Greek small mu, which looks the same
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ],
    listed: "ns, us (or \u{b5}s), ms, s",
    example: "\"2ms\"",
    example_unit: "ms",
    base_plural: "nanoseconds",
};

const FREQUENCY: UnitTable = UnitTable {
    what: "frequency",
    what_plural: "frequencies",
    units: &[
        ("Hz", 1),
        ("kHz", 1_000),
        ("MHz", 1_000_000),
        ("GHz", 1_000_000_000),
    ],
    listed: "Hz, kHz, MHz, GHz",
    example: "\"1GHz\"",
    example_unit: "GHz",
    base_plural: "hertz",
};

/// The longest time, in words, for the overflow message.
const LONGEST_TIME: &str = "the longest time is 584 years (18446744073709551615ns)";

/// Reads a time such as `"2ms"`, `"1.5ms"`, `"250us"`, `"3s"` or `"7ns"`.
///
/// Units: `ns`, `us` (also `µs`), `ms`, `s`. Decimals are allowed when the result is a whole
/// number of nanoseconds. The error says what is wrong and what is allowed, in one line.
///
/// ```
/// use bulwark_core::Duration;
/// assert_eq!(bulwark_spec::parse_duration("1.5ms"), Ok(Duration::from_micros(1500)));
/// assert!(bulwark_spec::parse_duration("-1ms").unwrap_err().contains("negative"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    parse_time(text).map_err(|e| format!("{} ({})", e.message, e.help))
}

/// [`parse_duration`] with the message and the help kept apart, for diagnostics.
pub(crate) fn parse_time(text: &str) -> Result<Duration, UnitError> {
    parse_quantity(text, &TIME).map(Duration::from_nanos)
}

/// Reads a clock frequency such as `"1GHz"` or `"2.5GHz"` into hertz.
pub(crate) fn parse_frequency(text: &str) -> Result<u64, UnitError> {
    parse_quantity(text, &FREQUENCY)
}

/// The error for a number written without a unit (`duration = 35`).
pub(crate) fn time_without_unit(number: &str) -> UnitError {
    without_unit(number, &TIME)
}

/// The error for a frequency written without a unit (`clock = 1000000000`).
pub(crate) fn frequency_without_unit(number: &str) -> UnitError {
    without_unit(number, &FREQUENCY)
}

/// The help shared by every time error: what a time looks like.
pub(crate) fn time_help() -> String {
    allowed(&TIME)
}

/// The help shared by every frequency error.
pub(crate) fn frequency_help() -> String {
    allowed(&FREQUENCY)
}

fn allowed(table: &UnitTable) -> String {
    format!(
        "allowed: a number with a unit ({}), like {}",
        table.listed, table.example
    )
}

fn without_unit(number: &str, table: &UnitTable) -> UnitError {
    if number.starts_with('-') {
        return UnitError {
            message: format!("{} cannot be negative: {number}", table.what_plural),
            help: allowed(table),
        };
    }
    let unit = table.example_unit;
    UnitError {
        message: format!("{number} has no unit"),
        help: format!(
            "write a {} as a string with a unit, like \"{number}{unit}\" (units: {})",
            table.what, table.listed
        ),
    }
}

/// The parts of `<digits>[.<digits>]<unit>`.
struct Split<'a> {
    whole: &'a str,
    fraction: &'a str,
    unit: &'a str,
}

fn split(text: &str) -> Option<Split<'_>> {
    let number_end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_end);
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    // "1." and ".5" are refused: a number has digits on both sides of its point.
    let well_formed = !whole.is_empty()
        && digits_only(whole)
        && digits_only(fraction)
        && !(fraction.is_empty() && number.contains('.'));
    well_formed.then(|| Split {
        whole,
        fraction,
        unit: unit.trim_start(),
    })
}

/// Longest value, in characters, that a message repeats in full.
const SHOWN_CHARS: usize = 100;

/// `text` as a message shows it: cut after [`SHOWN_CHARS`] characters, so that a value of a
/// million digits gives a readable one-line error rather than a megabyte of it.
fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}... ({} characters)", &text[..end], text.chars().count()),
    }
}

fn parse_quantity(raw: &str, table: &UnitTable) -> Result<u64, UnitError> {
    let full = raw.trim();
    let text = shown(full);
    let text = text.as_str();
    let error = |message: String| UnitError {
        message,
        help: allowed(table),
    };
    if full.is_empty() {
        return Err(error(format!(
            "an empty {} has no number and no unit",
            table.what
        )));
    }
    if full.starts_with('-') {
        return Err(error(format!(
            "{} cannot be negative: {text}",
            table.what_plural
        )));
    }
    let Some(parts) = split(full) else {
        return Err(error(format!(
            "{text} is not a {}: it must start with a number",
            table.what
        )));
    };
    if parts.unit.is_empty() {
        return Err(without_unit(text, table));
    }
    let Some(&(_, scale)) = table.units.iter().find(|(name, _)| *name == parts.unit) else {
        return Err(UnitError {
            message: format!("unknown unit `{}` in {text}", shown(parts.unit)),
            help: format!("allowed units: {}", table.listed),
        });
    };
    let too_long = || {
        if table.what == "time" {
            error(format!("{text} is too long: {LONGEST_TIME}"))
        } else {
            error(format!(
                "{text} is too high: the highest {} is {}{}",
                table.what,
                u64::MAX,
                table.units[0].0
            ))
        }
    };
    // Trailing zeros of a fraction say nothing; what remains must fit the unit's scale.
    let fraction = parts.fraction.trim_end_matches('0');
    let scale_digits = scale.ilog10() as usize;
    if fraction.len() > scale_digits {
        return Err(UnitError {
            message: format!("{text} is not a whole number of {}", table.base_plural),
            help: format!(
                "allowed: whole {}; a decimal may have at most as many digits as its unit allows",
                table.base_plural
            ),
        });
    }
    let whole = decimal_value(parts.whole).ok_or_else(too_long)?;
    let fraction_value = decimal_value(fraction).unwrap_or(0);
    let fraction_scale = 10u128.pow((scale_digits - fraction.len()) as u32);
    let total = whole
        .checked_mul(u128::from(scale))
        .and_then(|w| w.checked_add(fraction_value * fraction_scale))
        .ok_or_else(too_long)?;
    u64::try_from(total).map_err(|_| too_long())
}

/// The value of a string of ASCII digits, or `None` if it does not fit a `u128`.
fn decimal_value(digits: &str) -> Option<u128> {
    digits.bytes().try_fold(0u128, |value, digit| {
        value.checked_mul(10)?.checked_add(u128::from(digit - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nanos(text: &str) -> u64 {
        match parse_duration(text) {
            Ok(d) => d.as_nanos(),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn message(text: &str) -> String {
        match parse_time(text) {
            Ok(d) => panic!("{text} read as {d}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn every_unit() {
        assert_eq!(nanos("7ns"), 7);
        assert_eq!(nanos("250us"), 250_000);
        assert_eq!(nanos("250\u{b5}s"), 250_000);
        assert_eq!(nanos("250\u{3bc}s"), 250_000);
        assert_eq!(nanos("35ms"), 35_000_000);
        assert_eq!(nanos("3s"), 3_000_000_000);
        assert_eq!(nanos("0ns"), 0);
        assert_eq!(nanos("0ms"), 0);
    }

    #[test]
    fn decimals_that_are_whole_nanoseconds() {
        assert_eq!(nanos("1.5ms"), 1_500_000);
        assert_eq!(nanos("1.000001ms"), 1_000_001);
        assert_eq!(nanos("0.000000001s"), 1);
        assert_eq!(nanos("2.500us"), 2_500);
        assert_eq!(nanos("3.0ns"), 3);
        assert_eq!(nanos("007ms"), 7_000_000);
    }

    #[test]
    fn whitespace_around_and_before_the_unit() {
        assert_eq!(nanos(" 2ms "), 2_000_000);
        assert_eq!(nanos("2 ms"), 2_000_000);
    }

    #[test]
    fn fractions_of_a_nanosecond_are_refused() {
        assert_eq!(
            message("1.0000001ns"),
            "1.0000001ns is not a whole number of nanoseconds"
        );
        assert_eq!(
            message("0.0000000001s"),
            "0.0000000001s is not a whole number of nanoseconds"
        );
        assert_eq!(
            message("1.5ns"),
            "1.5ns is not a whole number of nanoseconds"
        );
    }

    #[test]
    fn negative_times_are_refused() {
        assert_eq!(message("-1ms"), "times cannot be negative: -1ms");
        assert_eq!(message("-0ns"), "times cannot be negative: -0ns");
    }

    #[test]
    fn the_longest_time_and_one_past_it() {
        assert_eq!(nanos("18446744073709551615ns"), u64::MAX);
        assert_eq!(nanos("18446744073.709551615s"), u64::MAX);
        let too_long = "is too long: the longest time is 584 years (18446744073709551615ns)";
        assert_eq!(
            message("18446744073709551616ns"),
            format!("18446744073709551616ns {too_long}")
        );
        assert_eq!(
            message("600000000000s"),
            format!("600000000000s {too_long}")
        );
        // Past 100 characters a value is cut in the message, with its length.
        let digits = format!("{}s", "9".repeat(100_000));
        assert_eq!(
            message(&digits),
            format!("{}... (100001 characters) {too_long}", "9".repeat(100))
        );
        let huge = format!("{}s", "9".repeat(80));
        assert_eq!(message(&huge), format!("{huge} {too_long}"));
    }

    #[test]
    fn missing_or_unknown_units_list_the_allowed_ones() {
        let missing = parse_time("25").unwrap_err();
        assert_eq!(missing.message, "25 has no unit");
        assert!(missing.help.contains("\"25ms\""), "{}", missing.help);
        assert!(missing.help.contains("ns, us (or \u{b5}s), ms, s"));
        let unknown = parse_time("3xs").unwrap_err();
        assert_eq!(unknown.message, "unknown unit `xs` in 3xs");
        assert_eq!(unknown.help, "allowed units: ns, us (or \u{b5}s), ms, s");
        assert_eq!(message("5 min"), "unknown unit `min` in 5 min");
        assert_eq!(message("5MS"), "unknown unit `MS` in 5MS");
    }

    #[test]
    fn malformed_numbers() {
        assert_eq!(message(""), "an empty time has no number and no unit");
        assert_eq!(
            message("ms"),
            "ms is not a time: it must start with a number"
        );
        assert_eq!(
            message(".5ms"),
            ".5ms is not a time: it must start with a number"
        );
        assert_eq!(
            message("1.ms"),
            "1.ms is not a time: it must start with a number"
        );
        assert_eq!(
            message("1.2.3ms"),
            "1.2.3ms is not a time: it must start with a number"
        );
        assert_eq!(
            message("+1ms"),
            "+1ms is not a time: it must start with a number"
        );
    }

    #[test]
    fn the_public_helper_joins_message_and_help() {
        assert_eq!(
            parse_duration("4xs"),
            Err("unknown unit `xs` in 4xs (allowed units: ns, us (or \u{b5}s), ms, s)".into())
        );
    }

    #[test]
    fn display_reads_back() {
        for nanos in [
            0,
            1,
            7,
            999,
            1_000,
            1_500,
            250_000,
            1_000_001,
            3_000_000_000,
            u64::MAX,
        ] {
            let d = Duration::from_nanos(nanos);
            assert_eq!(parse_duration(&d.to_string()), Ok(d), "{d}");
        }
    }

    #[test]
    fn frequencies() {
        assert_eq!(parse_frequency("1GHz"), Ok(1_000_000_000));
        assert_eq!(parse_frequency("2.5GHz"), Ok(2_500_000_000));
        assert_eq!(parse_frequency("800MHz"), Ok(800_000_000));
        assert_eq!(parse_frequency("32.768kHz"), Ok(32_768));
        assert_eq!(parse_frequency("10Hz"), Ok(10));
        assert_eq!(parse_frequency("0Hz"), Ok(0)); // "must be above zero" is the caller's check
        let bad = parse_frequency("1.5Hz").unwrap_err();
        assert_eq!(bad.message, "1.5Hz is not a whole number of hertz");
        let unit = parse_frequency("1ghz").unwrap_err();
        assert_eq!(unit.help, "allowed units: Hz, kHz, MHz, GHz");
        assert_eq!(
            parse_frequency("20000000000GHz").unwrap_err().message,
            "20000000000GHz is too high: the highest frequency is 18446744073709551615Hz"
        );
        let bare = frequency_without_unit("1000");
        assert!(bare.help.contains("\"1000GHz\""), "{}", bare.help);
    }
}
