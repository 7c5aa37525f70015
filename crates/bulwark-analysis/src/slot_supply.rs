//! The supply time partitions leave on one core, and the sporadic reservations' tests against
//! it: the MC-IPC paper's clustered scheduler (section III) on a cluster of one core, where a
//! table-driven partition takes the core in each of its slots of every cycle `H` and the
//! sporadic reservations share what is left.
//!
//! **Supply bound.** With the slots of every partition on the core merged into busy intervals
//! of the cycle (`B` busy time per cycle), `sbf(t)` is the least time left to the
//! reservations in any window of length `t`: `t` minus the most slot time such a window can
//! hold. Partitions are taken as active in every slot (a partition idle in its slot leaves
//! the core to the reservations, which only adds supply). The window holding the most slot
//! time starts at a slot's start or ends at a slot's end (moving it any other way cannot add
//! slot time), so both families of windows are examined. `sbf` is non-decreasing, and
//! `sbf(t + H) = sbf(t) + (H - B)`.
//!
//! **EDF order** (each reservation an implicit-deadline sporadic task `(e, p)`): the
//! processor-demand criterion against the supply, `sum_i floor(t / p_i) e_i + M <= sbf(t)` at
//! every deadline `t` (the demand steps only there, and `sbf` never falls), the standard
//! hierarchical test (Shin and Lee, "Periodic resource model for compositional real-time
//! guarantees", RTSS 2003, Theorem 1, with this exact `sbf` in place of the periodic
//! resource's). With `P` the hyperperiod of the cycle and the periods, both sides grow by
//! `U P` and `(H - B) P / H` from `t` to `t + P`: when `U <= (H - B) / H` the deadlines in
//! `(0, P]` decide, and when it is above, the demand eventually passes the supply.
//!
//! **Fixed-priority order**: the response-time analysis against the supply (Shin and Lee,
//! Theorem 3; Almeida and Pedreiras), `R_i` the least fixed point of
//! `R = sbf^-1(C_i + M + sum_{j in hp(i)} ceil(R / T_j) C_j)`, `sbf^-1(x)` the least `t`
//! with `sbf(t) >= x`; shown when `R_i <= p_i`. Equal priorities go in member order, the
//! scheduler's tie rule.
//!
//! `M` is the terminations' masks added up (each masks the core once, for up to its length),
//! counted in every window as demand that cannot wait.

use bulwark_core::{Duration, Priority};

use crate::amc::McTask;
use crate::global_fp::Response;

/// The most deadlines the EDF test examines before it gives up (no verdict).
pub const MAX_DEADLINES: u64 = 4_000_000;

/// The supply the slots leave on one core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotSupply {
    /// `H`, ns.
    cycle: u64,
    /// Merged busy intervals `[start, end)` within `[0, H)`, sorted.
    busy: Vec<(u64, u64)>,
}

impl SlotSupply {
    /// The supply left by `slots` (every partition's, in any order, overlapping or not)
    /// repeating every `cycle`. `None` for a zero cycle.
    pub fn new(cycle: Duration, slots: &[(Duration, Duration)]) -> Option<SlotSupply> {
        let cycle = cycle.as_nanos();
        if cycle == 0 {
            return None;
        }
        let mut intervals: Vec<(u64, u64)> = slots
            .iter()
            .map(|(start, end)| (start.as_nanos().min(cycle), end.as_nanos().min(cycle)))
            .filter(|(start, end)| start < end)
            .collect();
        intervals.sort_unstable();
        let mut busy: Vec<(u64, u64)> = Vec::with_capacity(intervals.len());
        for (start, end) in intervals {
            match busy.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => busy.push((start, end)),
            }
        }
        Some(SlotSupply { cycle, busy })
    }

    /// The supply of `slots` themselves (a partition's, to its own task): everything outside
    /// them is busy. `None` for a zero cycle.
    pub fn within(cycle: Duration, slots: &[(Duration, Duration)]) -> Option<SlotSupply> {
        let others = SlotSupply::new(cycle, slots)?;
        let mut outside = Vec::with_capacity(others.busy.len() + 1);
        let mut from = 0;
        for &(start, end) in &others.busy {
            if from < start {
                outside.push((Duration::from_nanos(from), Duration::from_nanos(start)));
            }
            from = end;
        }
        if from < others.cycle {
            outside.push((
                Duration::from_nanos(from),
                Duration::from_nanos(others.cycle),
            ));
        }
        SlotSupply::new(cycle, &outside)
    }

    /// `H`.
    pub fn cycle(&self) -> Duration {
        Duration::from_nanos(self.cycle)
    }

    /// `H - B`: the time per cycle the slots leave.
    pub fn free_per_cycle(&self) -> Duration {
        Duration::from_nanos(self.cycle - self.busy_per_cycle())
    }

    fn busy_per_cycle(&self) -> u64 {
        self.busy.iter().map(|(start, end)| end - start).sum()
    }

    /// Slot time in `[0, x)`.
    fn busy_before(&self, x: u128) -> u128 {
        let cycle = u128::from(self.cycle);
        let (cycles, rest) = (x / cycle, x % cycle);
        let partial: u128 = self
            .busy
            .iter()
            .map(|&(start, end)| u128::from(end.min(rest as u64).saturating_sub(start)))
            .sum();
        cycles * u128::from(self.busy_per_cycle()) + partial
    }

    /// `t - sbf(t)`: the most time the slots take in any window of length `t`, ns (a time
    /// partition's most run in it, when these are its slots alone: its workload as an
    /// interfering entity in the global tests). Windows past `u64` ns count as that long.
    pub fn most_busy(&self, t: u128) -> u128 {
        let t = u64::try_from(t).unwrap_or(u64::MAX);
        u128::from(t - self.least_supply(t))
    }

    /// `sbf(t)`: the least time the slots leave in any window of length `t`.
    pub fn least_supply(&self, t: u64) -> u64 {
        let length = u128::from(t);
        let cycle = u128::from(self.cycle);
        let most_busy = self
            .busy
            .iter()
            .flat_map(|&(start, end)| {
                // A window from a slot's start, and one ending at a slot's end (shifted by
                // whole cycles so that it starts at or after 0).
                let shift = length.div_ceil(cycle) * cycle;
                [
                    u128::from(start),
                    (u128::from(end) + shift).saturating_sub(length),
                ]
            })
            .map(|from| self.busy_before(from + length) - self.busy_before(from))
            .max()
            .unwrap_or(0);
        u64::try_from(length - most_busy.min(length)).unwrap_or(u64::MAX)
    }

    /// `sbf^-1(x)`: the least `t` with `sbf(t) >= x`, `None` when the slots leave nothing
    /// (or past `u64::MAX`).
    pub fn time_to_supply(&self, x: u64) -> Option<u64> {
        let free = self.cycle - self.busy_per_cycle();
        if x == 0 {
            return Some(0);
        }
        if free == 0 {
            return None;
        }
        // sbf(t) >= t - (floor(t / H) + 1) B >= x once t >= (x + B) H / (H - B) + H: the
        // search's upper end.
        let upper = (u128::from(x) + u128::from(self.busy_per_cycle())) * u128::from(self.cycle)
            / u128::from(free)
            + u128::from(self.cycle);
        let mut high = u64::try_from(upper).ok()?;
        let mut low = x;
        if self.least_supply(high) < x {
            return None;
        }
        // Invariant: sbf(high) >= x, and every t < low has sbf(t) < x (sbf(t) <= t).
        while low < high {
            let middle = low + (high - low) / 2;
            if self.least_supply(middle) >= x {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        Some(high)
    }
}

/// One sporadic reservation as the tests take it: `C = e`, `T = D = p`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// `e`.
    pub budget: Duration,
    /// `p`.
    pub period: Duration,
    /// Its fixed priority (fixed-priority order).
    pub priority: Priority,
}

/// The EDF test's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdfOnSupply {
    /// Every deadline's demand within the supply.
    Schedulable,
    /// The demand with deadlines up to `at` passes `sbf(at)`.
    DemandExceeds {
        /// The deadline.
        at: Duration,
        /// The demand, `M` included.
        demand: Duration,
        /// `sbf(at)`.
        supply: Duration,
    },
    /// `U` exceeds `(H - B) / H`: in the long run the demand passes the supply.
    Overloaded,
    /// The hyperperiod holds more than [`MAX_DEADLINES`] deadlines (or passes `u64::MAX`):
    /// no verdict.
    TooManyDeadlines,
}

/// The processor-demand test of `reservations` under EDF order on `supply`, `masked` the
/// terminations' masks added up.
pub fn edf(reservations: &[Reservation], supply: &SlotSupply, masked: u64) -> EdfOnSupply {
    let tasks: Vec<(u64, u64)> = reservations
        .iter()
        .map(|r| (r.budget.as_nanos(), r.period.as_nanos().max(1)))
        .collect();
    let Some(hyperperiod) = tasks
        .iter()
        .try_fold(supply.cycle, |h, &(_, period)| lcm(h, period))
    else {
        return EdfOnSupply::TooManyDeadlines;
    };
    // U P against (H - B) P / H, in integers.
    let demand_per_hyperperiod: u128 = tasks
        .iter()
        .map(|&(budget, period)| u128::from(budget) * u128::from(hyperperiod / period))
        .sum();
    let supply_per_hyperperiod =
        u128::from(supply.free_per_cycle().as_nanos()) * u128::from(hyperperiod / supply.cycle);
    if demand_per_hyperperiod > supply_per_hyperperiod {
        return EdfOnSupply::Overloaded;
    }
    let deadlines: u64 = tasks
        .iter()
        .map(|&(_, period)| hyperperiod / period)
        .fold(0u64, u64::saturating_add);
    if deadlines > MAX_DEADLINES {
        return EdfOnSupply::TooManyDeadlines;
    }
    let mut points: Vec<u64> = tasks
        .iter()
        .flat_map(|&(_, period)| (1..=hyperperiod / period).map(move |k| k * period))
        .collect();
    points.sort_unstable();
    points.dedup();
    for t in points {
        let demand: u128 = tasks
            .iter()
            .map(|&(budget, period)| u128::from(t / period) * u128::from(budget))
            .sum::<u128>()
            + u128::from(masked);
        let available = supply.least_supply(t);
        if demand > u128::from(available) {
            return EdfOnSupply::DemandExceeds {
                at: Duration::from_nanos(t),
                demand: Duration::from_nanos(u64::try_from(demand).unwrap_or(u64::MAX)),
                supply: Duration::from_nanos(available),
            };
        }
    }
    EdfOnSupply::Schedulable
}

/// The response-time analysis of `reservations` under fixed-priority order on `supply`
/// (equal priorities in the order given), `masked` the masks added up: each reservation's
/// response, in the order given. It is AMC-rtb's low-mode bound with every task of low
/// criticality, so it runs through [`crate::amc::rtb_on_supply`].
pub fn fixed_priority(
    reservations: &[Reservation],
    supply: &SlotSupply,
    masked: u64,
) -> Vec<Response> {
    let tasks: Vec<McTask> = reservations
        .iter()
        .map(|r| McTask::low(r.budget, r.period, r.priority))
        .collect();
    crate::amc::rtb_on_supply(&tasks, &[Duration::from_nanos(masked)], supply).low
}

/// The least fixed point of `R = sbf^-1(own + constant + sum_{(C, T) in higher} ceil(R / T)
/// C)`, iterated from every higher task released once: bounded when it is at most
/// `deadline`, else a value past it.
pub fn response_on_supply(
    own: u64,
    constant: u64,
    higher: &[(u64, u64)],
    deadline: u64,
    supply: &SlotSupply,
) -> Response {
    let work = |window: u64| -> u128 {
        let interference: u128 = higher
            .iter()
            .map(|&(budget, period)| {
                u128::from(window.div_ceil(period.max(1))) * u128::from(budget)
            })
            .sum();
        u128::from(own) + u128::from(constant) + interference
    };
    let exceeds = |at: u64| Response::Exceeds(Duration::from_nanos(at.max(deadline + 1)));
    let mut response = 0u64;
    loop {
        let needed = work(response.max(1));
        let Some(next) = u64::try_from(needed)
            .ok()
            .and_then(|x| supply.time_to_supply(x))
        else {
            return exceeds(u64::MAX);
        };
        if next > deadline {
            return exceeds(next);
        }
        if next == response {
            return Response::Bounded(Duration::from_nanos(next));
        }
        response = next;
    }
}

fn lcm(a: u64, b: u64) -> Option<u64> {
    let gcd = {
        let (mut x, mut y) = (a, b);
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    (a / gcd.max(1)).checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(value: u64) -> Duration {
        Duration::from_millis(value)
    }

    fn supply(cycle: u64, slots: &[(u64, u64)]) -> SlotSupply {
        let slots: Vec<_> = slots.iter().map(|&(a, b)| (ms(a), ms(b))).collect();
        SlotSupply::new(ms(cycle), &slots).expect("a cycle")
    }

    fn reservation(budget: u64, period: u64, priority: u8) -> Reservation {
        Reservation {
            budget: ms(budget),
            period: ms(period),
            priority: Priority(priority),
        }
    }

    /// One slot [0, 50) of 100: the worst window starts at the slot, so sbf(t) is 0 up to
    /// 50, then rises to 50 at 100, stays flat to 150, and so on.
    #[test]
    fn one_slot_by_hand() {
        let s = supply(100, &[(0, 50)]);
        let sbf = |t: u64| s.least_supply(t * 1_000_000) / 1_000_000;
        assert_eq!(
            [0, 30, 50, 60, 100, 120, 150, 170, 200].map(sbf),
            [0, 0, 0, 10, 50, 50, 50, 70, 100]
        );
        assert_eq!(s.time_to_supply(ms(10).as_nanos()), Some(ms(60).as_nanos()));
        assert_eq!(
            s.time_to_supply(ms(60).as_nanos()),
            Some(ms(160).as_nanos())
        );
        assert_eq!(s.free_per_cycle(), ms(50));
    }

    /// Two slots [0, 10) and [30, 60) of 100, overlapping partitions merged: the longest
    /// blackout is 30 (from 30), and a window of 40 from 30 holds 30 of slot time; a window of
    /// 100 holds 40 wherever it starts.
    #[test]
    fn two_slots_by_hand() {
        let s = supply(100, &[(30, 50), (0, 10), (40, 60)]);
        let sbf = |t: u64| s.least_supply(t * 1_000_000) / 1_000_000;
        // 40 from 30: [30, 70) holds 30 of slot; 80 from 30: [30, 110) holds 30 + 10.
        assert_eq!([30, 40, 80, 100].map(sbf), [0, 10, 40, 60]);
        // The window ending at a slot's end: 50 ending at 110, [60, 110), holds 10; from 30
        // it holds 30 (the worse one): sbf(50) = 20.
        assert_eq!(sbf(50), 20);
    }

    /// A partition's own supply: its slot [10, 30) of 50, the worst window starting at the
    /// slot's end (30): nothing until 60, 20 by 80, still 20 by 110 (a window of 80), 40 by
    /// 130 (of 100).
    #[test]
    fn a_partitions_own_supply_is_its_slots() {
        let own = SlotSupply::within(ms(50), &[(ms(10), ms(30))]).expect("a cycle");
        let sbf = |t: u64| own.least_supply(t * 1_000_000) / 1_000_000;
        assert_eq!([30, 40, 50, 80, 100].map(sbf), [0, 10, 20, 20, 40]);
        assert_eq!(
            own.time_to_supply(ms(5).as_nanos()),
            Some(ms(35).as_nanos())
        );
    }

    /// A brute force over every window start (1 ms steps) agrees with the two families.
    #[test]
    fn least_supply_equals_a_brute_force() {
        let s = supply(20, &[(2, 5), (9, 10), (14, 18)]);
        let busy = |at: u64| {
            [(2, 5), (9, 10), (14, 18)]
                .iter()
                .any(|&(a, b)| at % 20 >= a && at % 20 < b)
        };
        for t in 0..=60u64 {
            let least = (0..20)
                .map(|from| (from..from + t).filter(|&x| !busy(x)).count() as u64)
                .min()
                .unwrap();
            assert_eq!(s.least_supply(t * 1_000_000), least * 1_000_000, "t = {t}");
        }
    }

    /// EDF on [0, 50) of 100: (20, 100) and (1, 100) need 21 by 100, where sbf = 50:
    /// schedulable. (30, 50): by 50 it needs 30 of sbf(50) = 0: fails at 50. With (10, 25)
    /// U = 0.4 <= 0.5, but by 25 it needs 10 of nothing. U = 0.6 > 0.5: overloaded.
    #[test]
    fn edf_by_hand() {
        let s = supply(100, &[(0, 50)]);
        assert_eq!(
            edf(&[reservation(20, 100, 0), reservation(1, 100, 0)], &s, 0),
            EdfOnSupply::Schedulable
        );
        assert_eq!(
            edf(&[reservation(10, 25, 0)], &s, 0),
            EdfOnSupply::DemandExceeds {
                at: ms(25),
                demand: ms(10),
                supply: ms(0)
            }
        );
        assert_eq!(
            edf(&[reservation(30, 50, 0)], &s, 0),
            EdfOnSupply::Overloaded
        );
        // A mask of 30 ms: 21 + 30 = 51 > 50 at 100.
        assert!(matches!(
            edf(&[reservation(20, 100, 0), reservation(1, 100, 0)], &s, ms(30).as_nanos()),
            EdfOnSupply::DemandExceeds { at, .. } if at == ms(100)
        ));
    }

    /// Fixed priority on [0, 50) of 100: `a` (10, 100) at 2: sbf^-1(10) = 60. `b` (20, 200)
    /// at 1: sbf^-1(30) = 80, then ceil(80/100) = 1 so 80. `c` (5, 60) at 3 above both:
    /// sbf^-1(5) = 55 <= 60; then `a` sees c twice once R > 60: sbf^-1(20) = 70, W(70) = 10 +
    /// 10 = 20: R = 70 <= 100.
    #[test]
    fn fixed_priority_by_hand() {
        let s = supply(100, &[(0, 50)]);
        let responses = fixed_priority(&[reservation(10, 100, 2), reservation(20, 200, 1)], &s, 0);
        assert_eq!(responses, [ms(60), ms(80)].map(Response::Bounded).to_vec());
        let responses = fixed_priority(&[reservation(10, 100, 2), reservation(5, 60, 3)], &s, 0);
        assert_eq!(responses, [ms(70), ms(55)].map(Response::Bounded).to_vec());
        // (15, 60) at 3: sbf^-1(15) = 65 > 60.
        let responses = fixed_priority(&[reservation(15, 60, 3)], &s, 0);
        assert_eq!(responses, vec![Response::Exceeds(ms(65))]);
    }
}
