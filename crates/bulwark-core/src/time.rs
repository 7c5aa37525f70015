//! Integer time: nanosecond instants and durations with checked and saturating arithmetic.
//!
//! Invariant: no operation here wraps. Every method is either `checked_*` (returns `None` on
//! overflow or underflow) or `saturating_*` (clamps at zero or at the maximum). There is no
//! floating point: a kernel's clock is a counter.

use core::fmt;

/// A point in time, in nanoseconds since the machine started.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Instant(u64);

/// A span of time, in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(transparent))]
pub struct Duration(u64);

impl Instant {
    /// The moment the machine starts.
    pub const ZERO: Instant = Instant(0);
    /// A time that never comes; used for "no timeout" and "no deadline".
    pub const NEVER: Instant = Instant(u64::MAX);

    /// The instant `nanos` nanoseconds after start.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// Nanoseconds since start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, or `None` on overflow.
    pub const fn checked_add(self, d: Duration) -> Option<Instant> {
        match self.0.checked_add(d.0) {
            Some(n) => Some(Instant(n)),
            None => None,
        }
    }

    /// `self + d`, clamped at [`Instant::NEVER`].
    pub const fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }

    /// `self - d`, clamped at [`Instant::ZERO`].
    pub const fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(d.0))
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is later.
    pub const fn checked_duration_since(self, earlier: Instant) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }

    /// The time from `earlier` to `self`, or zero if `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span (about 584 years).
    pub const MAX: Duration = Duration(u64::MAX);

    /// `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Duration {
        Duration(nanos)
    }

    /// `micros` microseconds, clamped at [`Duration::MAX`].
    pub const fn from_micros(micros: u64) -> Duration {
        Duration(micros.saturating_mul(1_000))
    }

    /// `millis` milliseconds, clamped at [`Duration::MAX`].
    pub const fn from_millis(millis: u64) -> Duration {
        Duration(millis.saturating_mul(1_000_000))
    }

    /// `secs` seconds, clamped at [`Duration::MAX`].
    pub const fn from_secs(secs: u64) -> Duration {
        Duration(secs.saturating_mul(1_000_000_000))
    }

    /// The span in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// True for the empty span.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self + other`, or `None` on overflow.
    pub const fn checked_add(self, other: Duration) -> Option<Duration> {
        match self.0.checked_add(other.0) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }

    /// `self - other`, or `None` if `other` is longer.
    pub const fn checked_sub(self, other: Duration) -> Option<Duration> {
        match self.0.checked_sub(other.0) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }

    /// `self * k`, or `None` on overflow.
    pub const fn checked_mul(self, k: u64) -> Option<Duration> {
        match self.0.checked_mul(k) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }

    /// `self + other`, clamped at [`Duration::MAX`].
    pub const fn saturating_add(self, other: Duration) -> Duration {
        Duration(self.0.saturating_add(other.0))
    }

    /// `self - other`, clamped at zero.
    pub const fn saturating_sub(self, other: Duration) -> Duration {
        Duration(self.0.saturating_sub(other.0))
    }

    /// `self * k`, clamped at [`Duration::MAX`].
    pub const fn saturating_mul(self, k: u64) -> Duration {
        Duration(self.0.saturating_mul(k))
    }
}

/// Writes `nanos` with the largest unit that keeps it exact: `3s`, `1.5ms`, `250us`, `7ns`.
fn write_exact(f: &mut fmt::Formatter<'_>, nanos: u64) -> fmt::Result {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
    if nanos == 0 {
        return f.write_str("0ns");
    }
    for (scale, unit) in UNITS {
        if nanos >= scale {
            let whole = nanos / scale;
            let frac = nanos % scale;
            if frac == 0 {
                return write!(f, "{whole}{unit}");
            }
            // Print the fraction without trailing zeros so the text reads back exactly.
            let digits = scale.ilog10() as usize;
            let mut frac_digits = frac;
            let mut width = digits;
            while frac_digits.is_multiple_of(10) {
                frac_digits /= 10;
                width -= 1;
            }
            return write!(f, "{whole}.{frac_digits:0width$}{unit}");
        }
    }
    write!(f, "{nanos}ns")
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_exact(f, self.0)
    }
}

impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Instant::NEVER {
            return f.write_str("never");
        }
        f.write_str("@")?;
        write_exact(f, self.0)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn arithmetic_never_wraps() {
        assert_eq!(Instant::NEVER.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(
            Instant::NEVER.saturating_add(Duration::from_nanos(1)),
            Instant::NEVER
        );
        assert_eq!(
            Instant::ZERO.saturating_sub(Duration::from_nanos(1)),
            Instant::ZERO
        );
        assert_eq!(
            Instant::from_nanos(5).checked_duration_since(Instant::from_nanos(6)),
            None
        );
        assert_eq!(Duration::MAX.checked_mul(2), None);
        assert_eq!(Duration::from_secs(u64::MAX), Duration::MAX);
        assert_eq!(
            Duration::from_nanos(3).checked_sub(Duration::from_nanos(4)),
            None
        );
    }

    #[test]
    fn display_is_exact_and_short() {
        assert_eq!(format!("{}", Duration::from_secs(3)), "3s");
        assert_eq!(format!("{}", Duration::from_micros(1500)), "1.5ms");
        assert_eq!(format!("{}", Duration::from_nanos(1_000_001)), "1.000001ms");
        assert_eq!(format!("{}", Duration::from_micros(250)), "250us");
        assert_eq!(format!("{}", Duration::from_nanos(7)), "7ns");
        assert_eq!(format!("{}", Duration::ZERO), "0ns");
        assert_eq!(format!("{}", Instant::from_nanos(2_000_000)), "@2ms");
        assert_eq!(format!("{}", Instant::NEVER), "never");
    }
}
