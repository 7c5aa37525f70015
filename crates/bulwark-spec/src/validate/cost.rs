//! The `[cost]` table, as scenario files and sweep files write it: a clock (default 1 GHz)
//! and cycle counts (default 0), none negative. One check for both, each file reporting the
//! problems its own way.

use std::ops::Range;

use toml::Spanned;

use crate::model::{CostModel, IpcCosts};
use crate::raw::{RawCost, RawFrequency, RawQuantity};
use crate::units;

/// The cost model of `raw`; every problem goes to `report(span, message, help)`, all of them
/// before `None` is returned.
pub(crate) fn cost_model(
    raw: &RawCost,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<CostModel> {
    let clock_hz = match &raw.clock {
        None => Some(CostModel::default().clock_hz),
        Some(clock) => frequency(clock, report),
    };
    let mut cycles = |field: &Option<Spanned<i64>>, what: &str| match field {
        None => Some(0),
        Some(value) => {
            let n = *value.get_ref();
            let cycles = u64::try_from(n).ok();
            if cycles.is_none() {
                report(
                    value.span(),
                    format!("{what} {n} is negative"),
                    "allowed: 0 or more cycles".to_owned(),
                );
            }
            cycles
        }
    };
    // Every field checked before any `?`, so each mistake is reported.
    let timer_interrupt = cycles(&raw.timer_interrupt, "timer-interrupt");
    let scheduler = cycles(&raw.scheduler, "scheduler");
    let per_work_unit = cycles(&raw.per_work_unit, "per-work-unit");
    let context_switch = cycles(&raw.context_switch, "context-switch");
    let cache_refill = cycles(&raw.cache_refill, "cache-refill");
    let cache_flush = cycles(&raw.cache_flush, "cache-flush");
    let reclaim_per_unit = cycles(&raw.reclaim_per_unit, "reclaim-per-unit");
    Some(CostModel {
        clock_hz: clock_hz?,
        timer_interrupt: timer_interrupt?,
        scheduler: scheduler?,
        per_work_unit: per_work_unit?,
        context_switch: context_switch?,
        cache_refill: cache_refill?,
        cache_flush: cache_flush?,
        reclaim_per_unit: reclaim_per_unit?,
        // No `[cost]` key sets them: component systems take their IPC costs from the command
        // line (`--overheads`).
        ipc: IpcCosts::ZERO,
    })
}

/// A clock frequency with its unit, above zero.
fn frequency(
    raw: &Spanned<RawFrequency>,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<u64> {
    let result = match &raw.get_ref().0 {
        RawQuantity::Text(text) => units::parse_frequency(text),
        RawQuantity::Integer(n) => Err(units::frequency_without_unit(&n.to_string())),
        RawQuantity::Float(x) => Err(super::bare_float(
            *x,
            units::frequency_without_unit,
            units::frequency_help,
        )),
    };
    match result {
        Ok(0) => {
            report(
                raw.span(),
                "clock cannot be zero".to_owned(),
                "allowed: a frequency above zero, like \"1GHz\"".to_owned(),
            );
            None
        }
        Ok(hz) => Some(hz),
        Err(e) => {
            report(raw.span(), e.message, e.help);
            None
        }
    }
}
