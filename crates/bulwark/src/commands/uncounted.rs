//! The costs a machine charges and an analysis leaves out, for every file kind, named in the
//! text (a note) and in `--json` (`costs_not_in_bounds`), so that a bound never omits a
//! charged cost unsaid.

use bulwark_spec::CostModel;

/// The kernel-entry and cache costs the scenario machine charges to every task (as the file
/// names them, those above zero), which the classic tests and the bandwidth admissions take
/// no account of: they analyse the execution times as written. `reclaim-per-unit` is not
/// among them: only `allocate` and `terminate` steps spend it, and a script task is not
/// analysable in the first place.
pub fn kernel_costs(cost: &CostModel) -> Vec<&'static str> {
    [
        ("timer-interrupt", cost.timer_interrupt),
        ("scheduler", cost.scheduler),
        ("per-work-unit", cost.per_work_unit),
        ("context-switch", cost.context_switch),
        ("cache-refill", cost.cache_refill),
        ("cache-flush", cost.cache_flush),
    ]
    .into_iter()
    .filter(|&(_, cycles)| cycles > 0)
    .map(|(name, _)| name)
    .collect()
}

/// What the component and MC-IPC analyses leave out of the costs their machines charge:
/// the context switch, when one is `charged`. The component paper's analysis (section 3.2)
/// adds Table 2's IPC rows to the WCETs but has no term for the switches preemptions and
/// blocking cause; Theorem 1 takes each `L_q` as written and has no bound on how many
/// switches a request causes (a server is switched in each time its client's reservation is
/// selected again).
pub fn context_switch(charged: bool) -> Vec<&'static str> {
    if charged {
        vec!["context-switch"]
    } else {
        Vec::new()
    }
}

/// The note under a table whose bounds leave `costs` out; empty when there are none.
pub fn note(costs: &[&str]) -> String {
    if costs.is_empty() {
        return String::new();
    }
    let names: Vec<String> = costs.iter().map(|c| format!("`{c}`")).collect();
    format!(
        "note: the bounds leave out the file's {} cost{}, which the simulator charges as \
         kernel time and cache refills: the response times and verdicts above do not include \
         {}\n",
        names.join(", "),
        if costs.len() == 1 { "" } else { "s" },
        if costs.len() == 1 { "it" } else { "them" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_charged_costs_above_zero_are_named() {
        assert!(kernel_costs(&CostModel::default()).is_empty());
        assert_eq!(note(&[]), "");
        let cost = CostModel {
            context_switch: 1,
            cache_refill: 2,
            reclaim_per_unit: 3,
            ..CostModel::default()
        };
        assert_eq!(kernel_costs(&cost), ["context-switch", "cache-refill"]);
        assert!(note(&kernel_costs(&cost)).starts_with(
            "note: the bounds leave out the file's `context-switch`, `cache-refill` costs,"
        ));
        assert!(note(&["scheduler"]).contains("`scheduler` cost, which"));
    }
}
