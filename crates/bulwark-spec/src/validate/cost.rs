//! The `[cost]` table, one for every file kind: a clock (default 1 GHz) and cycle counts
//! (default 0), none negative. One check for all, each file reporting the problems its own
//! way and allowing only the costs its machine charges ([`Charged`]): a cost nothing would
//! charge is refused where it is written, never ignored.

use std::ops::Range;

use toml::Spanned;

use crate::model::{CallReplyCycles, CostModel, IpcCosts};
use crate::raw::{RawCallReply, RawCost, RawFrequency, RawIpcCosts, RawQuantity};
use crate::units;

/// The costs a file kind's machine charges: a key outside `keys` is refused as "`key` is not
/// a cost of {kind}: {why}".
pub(crate) struct Charged {
    /// The keys allowed, as written (`ipc` for `[cost.ipc]`).
    pub(crate) keys: &'static [&'static str],
    /// The file kind, as messages name it.
    pub(crate) kind: &'static str,
    /// Why its machine has no use for another cost.
    pub(crate) why: &'static str,
    /// What is allowed instead.
    pub(crate) help: &'static str,
}

/// Every cost a scenario with `[[component]]` tables charges: the machine's, then its
/// components' IPC steps (last, so the machine's alone are the rest).
const SCENARIO_KEYS: &[&str] = &[
    "clock",
    "timer-interrupt",
    "scheduler",
    "per-work-unit",
    "context-switch",
    "cache-refill",
    "cache-flush",
    "reclaim-per-unit",
    "ipc",
];

/// A scenario's or a sweep's machine without components: every cost but component IPC's.
pub(crate) const SCENARIO: Charged = Charged {
    keys: match SCENARIO_KEYS.split_last() {
        Some((_ipc, machine)) => machine,
        None => &[],
    },
    kind: "a scenario",
    why: "this file has no [[component]] tables, whose IPC steps it would price",
    help: "allowed: clock, timer-interrupt, scheduler, per-work-unit, context-switch, \
           cache-refill, cache-flush, reclaim-per-unit; [cost.ipc] with [[component]] tables",
};

/// A scenario with `[[component]]` tables: every cost, its components' IPC steps too.
pub(crate) const SCENARIO_WITH_COMPONENTS: Charged = Charged {
    keys: SCENARIO_KEYS,
    kind: "a scenario",
    why: "no machine charges it",
    help: "allowed: clock, timer-interrupt, scheduler, per-work-unit, context-switch, \
           cache-refill, cache-flush, reclaim-per-unit and [cost.ipc]",
};

/// The machine: IPC steps and context switches.
pub(crate) const COMPONENTS: Charged = Charged {
    keys: &["clock", "context-switch", "ipc"],
    kind: "a component system",
    why: "its machine charges IPC steps and context switches only",
    help: "allowed: clock, context-switch and [cost.ipc]",
};

/// An MC-IPC system, as the machine runs it: reclamation work and context switches.
pub(crate) const MC_IPC: Charged = Charged {
    keys: &["clock", "context-switch", "reclaim-per-unit"],
    kind: "an MC-IPC system",
    why: "its machine charges only reclamation work and context switches",
    help: "allowed: `clock`, `context-switch` and `reclaim-per-unit`",
};

/// Where the key of the value at `value` is written in `text` (`key = value`, the key bare or
/// quoted), so that a refused cost is pointed at by its name; the value's own span when no
/// key stands before it.
fn key_span(text: &str, value: Range<usize>) -> Range<usize> {
    let before = text.get(..value.start).unwrap_or("").trim_end();
    let Some(before) = before.strip_suffix('=') else {
        return value;
    };
    let before = before.trim_end();
    let end = before.len();
    let start = if let Some(quoted) = before.strip_suffix('"') {
        quoted.rfind('"').unwrap_or(end)
    } else {
        before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .map_or(0, |at| at + 1)
    };
    if start < end {
        start..end
    } else {
        value
    }
}

/// The keys `raw` sets, each with its value's span, in file order.
fn keys_set(raw: &RawCost) -> Vec<(&'static str, Range<usize>)> {
    let cycles = [
        ("timer-interrupt", &raw.timer_interrupt),
        ("scheduler", &raw.scheduler),
        ("per-work-unit", &raw.per_work_unit),
        ("context-switch", &raw.context_switch),
        ("cache-refill", &raw.cache_refill),
        ("cache-flush", &raw.cache_flush),
        ("reclaim-per-unit", &raw.reclaim_per_unit),
    ];
    let mut keys: Vec<(&'static str, Range<usize>)> = cycles
        .into_iter()
        .filter_map(|(key, value)| value.as_ref().map(|v| (key, v.span())))
        .collect();
    keys.extend(raw.clock.as_ref().map(|c| ("clock", c.span())));
    keys.extend(raw.ipc.as_ref().map(|ipc| ("ipc", ipc.span())));
    keys.sort_by_key(|(_, span)| span.start);
    keys
}

/// The cost model of `raw`, read from the file `text`, in which a file may set only what
/// `charged` allows; every problem goes to `report(span, message, help)`, all of them before
/// `None` is returned.
pub(crate) fn cost_model(
    raw: &RawCost,
    charged: &Charged,
    text: &str,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<CostModel> {
    let mut refused = false;
    for (key, span) in keys_set(raw) {
        if !charged.keys.contains(&key) {
            let at = key_span(text, span);
            let message = format!("`{key}` is not a cost of {}: {}", charged.kind, charged.why);
            report(at, message, charged.help.to_owned());
            refused = true;
        }
    }
    let clock_hz = match &raw.clock {
        None => Some(CostModel::default().clock_hz),
        Some(clock) => frequency(clock, report),
    };
    let mut cycles = |field: &Option<Spanned<i64>>, what: &str| optional_count(field, what, report);
    // Every field checked before any `?`, so each mistake is reported.
    let timer_interrupt = cycles(&raw.timer_interrupt, "timer-interrupt");
    let scheduler = cycles(&raw.scheduler, "scheduler");
    let per_work_unit = cycles(&raw.per_work_unit, "per-work-unit");
    let context_switch = cycles(&raw.context_switch, "context-switch");
    let cache_refill = cycles(&raw.cache_refill, "cache-refill");
    let cache_flush = cycles(&raw.cache_flush, "cache-flush");
    let reclaim_per_unit = cycles(&raw.reclaim_per_unit, "reclaim-per-unit");
    let ipc = match &raw.ipc {
        None => Some(IpcCosts::ZERO),
        Some(ipc) => ipc_costs(ipc.get_ref(), report),
    };
    if refused {
        return None;
    }
    Some(CostModel {
        clock_hz: clock_hz?,
        timer_interrupt: timer_interrupt?,
        scheduler: scheduler?,
        per_work_unit: per_work_unit?,
        context_switch: context_switch?,
        cache_refill: cache_refill?,
        cache_flush: cache_flush?,
        reclaim_per_unit: reclaim_per_unit?,
        ipc: ipc?,
    })
}

/// A count of cycles that may be left out (0), as [`count`] checks it.
fn optional_count(
    field: &Option<Spanned<i64>>,
    what: &str,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<u64> {
    field
        .as_ref()
        .map_or(Some(0), |value| count(value, what, report))
}

/// A count of cycles, 0 or more; a negative one is reported as `what`.
fn count(
    value: &Spanned<i64>,
    what: &str,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<u64> {
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

/// `[cost.ipc]`: Table 2's rows, each 0 or more cycles (default 0).
fn ipc_costs(
    raw: &RawIpcCosts,
    report: &mut impl FnMut(Range<usize>, String, String),
) -> Option<IpcCosts> {
    let mut row = |row: &Option<Spanned<RawCallReply>>, what: &str| match row {
        None => Some(CallReplyCycles::default()),
        Some(row) => {
            let RawCallReply { call, reply } = row.get_ref();
            let call = count(call, &format!("{what}'s call"), report);
            let reply = count(reply, &format!("{what}'s reply"), report);
            Some(CallReplyCycles::new(call?, reply?))
        }
    };
    // Every row checked before any `?`, so each mistake is reported.
    let propagated = row(&raw.propagated, "propagated");
    let fixed = row(&raw.fixed, "fixed");
    let inherited_unlocked = row(&raw.inherited_unlocked, "inherited-unlocked");
    let inherited_locked = row(&raw.inherited_locked, "inherited-locked");
    let pip_to_pip = row(&raw.pip_to_pip, "pip-to-pip");
    let pip_to_propagated = row(&raw.pip_to_propagated, "pip-to-propagated");
    let nest_to_inherited = optional_count(&raw.nest_to_inherited, "nest-to-inherited", report);
    let nest_to_propagated = optional_count(&raw.nest_to_propagated, "nest-to-propagated", report);
    Some(IpcCosts {
        propagated: propagated?,
        fixed: fixed?,
        inherited_unlocked: inherited_unlocked?,
        inherited_locked: inherited_locked?,
        pip_to_pip: pip_to_pip?,
        pip_to_propagated: pip_to_propagated?,
        nest_to_inherited: nest_to_inherited?,
        nest_to_propagated: nest_to_propagated?,
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
