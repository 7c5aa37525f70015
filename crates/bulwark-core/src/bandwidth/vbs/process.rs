//! Virtual periodic resources, actions, bandwidth caps, and the release arithmetic of sections III-IV.
//!
//! Periods are aligned to time zero, as in the paper: the `k`-th period of a resource
//! `(λ, π)` is `((k - 1)π, kπ]`, so "the end of the period containing `t`" is
//! `ceil(t / π) π` (`period_end`). All arithmetic here is on integer instants and
//! saturates instead of wrapping.

use crate::{CoreError, Duration};

/// A virtual periodic resource `R = (λ, π)` (section III-A): at most `limit` of processor
/// time in every period of `period`, periods aligned to time zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Resource {
    /// `λ`, non-zero and at most the period.
    pub limit: Duration,
    /// `π`, non-zero.
    pub period: Duration,
}

impl Resource {
    /// The resource `(limit, period)`.
    pub const fn new(limit: Duration, period: Duration) -> Self {
        Resource { limit, period }
    }

    /// Checks `0 < λ <= π`.
    pub fn validate(&self) -> Result<(), CoreError> {
        if self.limit.is_zero() || self.limit > self.period {
            return Err(CoreError::InvalidParameter);
        }
        Ok(())
    }
}

/// An action `α = (l, R)` (section III-A): `load` of work on `resource`. A load of `None` is
/// unknown in advance: the process then marks its completion itself
/// ([`Vbs::switch_action`](super::Vbs::switch_action) or
/// [`Vbs::complete_action`](super::Vbs::complete_action)), and no response bound applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    /// `l`: the exact work of the action, if known.
    pub load: Option<Duration>,
    /// `R`: the resource the action runs on.
    pub resource: Resource,
}

impl Action {
    /// An action of known `load` on `resource`.
    pub const fn new(load: Duration, resource: Resource) -> Self {
        Action {
            load: Some(load),
            resource,
        }
    }

    /// An action whose load is not known in advance.
    pub const fn unknown_load(resource: Resource) -> Self {
        Action {
            load: None,
            resource,
        }
    }
}

/// The bandwidth cap `u` of a VBS (section III-A): every resource the process uses has
/// utilization `λ/π <= u`, and admission (Eq. 2) asks that the caps sum to at most one.
///
/// Stored as parts of [`BandwidthCap::SCALE`], rounded up, which is divisible by
/// `2^14 · 3^3 · 5^4 · 7 · 11 · 13`: caps such as 1/2, 1/3, 1/7, 1/100, 1/10000 or
/// 1/16384 are exact, so sets of them that sum to exactly one are admitted. A cap that is not
/// exact is rounded up, which only makes admission more conservative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BandwidthCap(pub(crate) u64);

impl BandwidthCap {
    /// The parts of the whole processor.
    pub const SCALE: u64 = 276_756_480_000;
    /// The whole processor.
    pub const FULL: BandwidthCap = BandwidthCap(Self::SCALE);

    /// The cap `numerator / denominator`, rounded up to a part; `0 < numerator <=
    /// denominator`.
    pub fn from_ratio(numerator: u64, denominator: u64) -> Result<Self, CoreError> {
        if numerator == 0 || numerator > denominator {
            return Err(CoreError::InvalidParameter);
        }
        let parts =
            (u128::from(numerator) * u128::from(Self::SCALE)).div_ceil(u128::from(denominator));
        Ok(BandwidthCap(parts as u64))
    }

    /// The utilization `λ/π` of `resource` as a cap.
    pub fn of(resource: Resource) -> Result<Self, CoreError> {
        resource.validate()?;
        Self::from_ratio(resource.limit.as_nanos(), resource.period.as_nanos())
    }

    /// A cap of `parts` of [`SCALE`](Self::SCALE); `0 < parts <= SCALE`.
    pub fn from_parts(parts: u64) -> Result<Self, CoreError> {
        if parts == 0 || parts > Self::SCALE {
            return Err(CoreError::InvalidParameter);
        }
        Ok(BandwidthCap(parts))
    }

    /// The cap in parts of [`SCALE`](Self::SCALE).
    pub const fn parts(self) -> u64 {
        self.0
    }

    /// True when `resource` has utilization at most this cap: `λ · SCALE <= parts · π`.
    pub fn admits(self, resource: Resource) -> bool {
        u128::from(resource.limit.as_nanos()) * u128::from(Self::SCALE)
            <= u128::from(self.0) * u128::from(resource.period.as_nanos())
    }
}

/// How an action that arrives in the middle of a period of its resource is released
/// (section III-C).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ReleaseStrategy {
    /// Released at arrival, with the limit scaled to what is left of the current period,
    /// `floor((d - r) λ / π)` (akin to a deferrable server).
    #[default]
    Early,
    /// Released at the next period instance after arrival, with the full limit (a polling
    /// server).
    Late,
}

/// A resource in the scheduler's instants.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Periodic {
    pub(crate) limit: u64,
    pub(crate) period: u64,
}

/// One period instance of an action: the paper's `(r_i, d_i, λ^c_i)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) release: u64,
    pub(crate) deadline: u64,
    pub(crate) limit: u64,
}

/// `kπ` with `t ∈ ((k - 1)π, kπ]`: the end of the period containing `t` (`t` itself when it
/// is a period boundary).
pub(crate) fn period_end(t: u64, period: u64) -> u64 {
    t.div_ceil(period.max(1)).saturating_mul(period)
}

/// `floor((to - from) λ / π)`: the share of `resource` in `[from, to)`.
pub(crate) fn scaled_limit(from: u64, to: u64, resource: Periodic) -> u64 {
    let span = u128::from(to.saturating_sub(from));
    (span * u128::from(resource.limit) / u128::from(resource.period.max(1))) as u64
}

/// The late strategy from `base` (section IV, completion case): `r = kπ`, `d = (k + 1)π`,
/// the full limit, with `base ∈ ((k - 1)π, kπ]`. The limit case uses the same values.
pub(crate) fn late(base: u64, resource: Periodic) -> Budget {
    let release = period_end(base, resource.period);
    Budget {
        release,
        deadline: release.saturating_add(resource.period),
        limit: resource.limit,
    }
}

/// The early strategy from `base` (section IV): `r = base`, `d = kπ` with
/// `base ∈ ((k - 1)π, kπ]`, and the limit `floor((d - r) λ / π)`.
///
/// Reading chosen where the paper is silent: when that limit is zero (the rest of the period
/// is too short for one instant of budget, including `base` on a period boundary, where
/// `d = r`), the release is useless and would give a zero-length deadline; the late values
/// are used instead. That keeps the utilization at most `λ/π` in every window and the Eq. (1)
/// bound, since the late strategy meets it.
pub(crate) fn early(base: u64, resource: Periodic) -> Budget {
    let deadline = period_end(base, resource.period);
    let limit = scaled_limit(base, deadline, resource);
    if limit == 0 {
        return late(base, resource);
    }
    Budget {
        release: base,
        deadline,
        limit,
    }
}

/// The release of an action arriving at `base` under `strategy`.
pub(crate) fn release_for(strategy: ReleaseStrategy, base: u64, resource: Periodic) -> Budget {
    match strategy {
        ReleaseStrategy::Early => early(base, resource),
        ReleaseStrategy::Late => late(base, resource),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Periodic = Periodic {
        limit: 2,
        period: 4,
    };

    #[test]
    fn periods_are_aligned_to_zero() {
        assert_eq!(period_end(10, 4), 12);
        assert_eq!(period_end(12, 4), 12, "a boundary ends its own period");
        assert_eq!(period_end(13, 4), 16);
        assert_eq!(period_end(0, 4), 0);
    }

    /// Fig. 1: the action (5, (2, 4)) arriving at 10.
    #[test]
    fn figure_one_releases() {
        assert_eq!(
            early(10, R),
            Budget {
                release: 10,
                deadline: 12,
                limit: 1
            }
        );
        assert_eq!(
            late(10, R),
            Budget {
                release: 12,
                deadline: 16,
                limit: 2
            }
        );
        // Early on a boundary, or too close to it for one instant, falls back to late.
        assert_eq!(early(12, R), late(12, R));
        assert_eq!(
            early(
                11,
                Periodic {
                    limit: 1,
                    period: 4
                }
            ),
            late(
                11,
                Periodic {
                    limit: 1,
                    period: 4
                }
            )
        );
    }

    #[test]
    fn caps_are_exact_for_common_ratios() {
        let half = BandwidthCap::from_ratio(1, 2).unwrap();
        assert_eq!(half.parts() * 2, BandwidthCap::SCALE);
        for d in [3, 7, 100, 10_000, 16_384] {
            let c = BandwidthCap::from_ratio(1, d).unwrap();
            assert_eq!(c.parts() * d, BandwidthCap::SCALE, "1/{d}");
        }
        let r = Resource::new(Duration::from_secs(1), Duration::from_secs(2));
        assert!(half.admits(r));
        assert!(!BandwidthCap::from_ratio(1, 3).unwrap().admits(r));
        assert_eq!(BandwidthCap::of(r), Ok(half));
        assert!(BandwidthCap::from_ratio(0, 1).is_err());
        assert!(BandwidthCap::from_ratio(3, 2).is_err());
        assert!(BandwidthCap::from_parts(BandwidthCap::SCALE + 1).is_err());
    }
}
