//! The costs a machine charges and an analysis leaves out, for every file kind, named in the
//! text (a note) and in `--json` (`costs_not_in_bounds`), so that a bound never omits a
//! charged cost unsaid.

use bulwark_spec::{CostModel, Scenario};

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

/// The tasks of `scenario` that invoke a server: a call that finds its server busy waits at
/// the gate, for as long as the request in service takes to be finished on its own caller's
/// context, and no scenario analysis has a term for that wait. Named in the text (a note)
/// and in `--json` (`gate_waits_not_in_bounds`).
pub fn gate_waits(scenario: &Scenario) -> Vec<&str> {
    let mut callers: Vec<usize> = scenario
        .servers
        .iter()
        .flat_map(|server| server.clients.iter().copied())
        .collect();
    callers.sort_unstable();
    callers.dedup();
    callers
        .into_iter()
        .filter_map(|task| scenario.tasks.get(task).map(|t| t.name.as_str()))
        .collect()
}

/// The callers of [`gate_waits`] but those in `held`, whose bounds count their waits (a job
/// bound that counts what each call drains from the caller's budget).
pub fn gate_waits_besides<'a>(scenario: &'a Scenario, held: &[&str]) -> Vec<&'a str> {
    let mut callers = gate_waits(scenario);
    callers.retain(|caller| !held.contains(caller));
    callers
}

/// The notes under a scenario analysis's table: the kernel costs and the gate waits its
/// bounds leave out (each empty when there are none), but those of the callers in `held`.
pub fn notes_besides(scenario: &Scenario, held: &[&str]) -> String {
    note(&kernel_costs(&scenario.cost)) + &gate_note(&gate_waits_besides(scenario, held))
}

/// The notes under a scenario analysis's table: the kernel costs and the gate waits its
/// bounds leave out (each empty when there are none).
pub fn notes(scenario: &Scenario) -> String {
    notes_besides(scenario, &[])
}

/// The note under a table whose bounds leave out `callers`' gate waits; empty when none.
pub fn gate_note(callers: &[&str]) -> String {
    if callers.is_empty() {
        return String::new();
    }
    let names: Vec<String> = callers.iter().map(|c| format!("`{c}`")).collect();
    format!(
        "note: {} invoke{} servers, and the bounds have no term for a call's wait at a busy \
         server's gate (without bandwidth inheritance a caller out of budget holds its server \
         until its replenishment; with it the waiting callers' budgets pay for the requests \
         ahead, and an mc-ipc gate aborts those whose callers' budgets ran out)\n",
        names.join(", "),
        if callers.len() == 1 { "s" } else { "" },
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

    #[test]
    fn callers_of_servers_are_named_once_in_task_order() {
        let text = r#"name = "s"
policy = "fixed-priority"
duration = "10ms"

[[server]]
name = "a"
gate = "fifo-ipc"
operation = "1ms"

[[server]]
name = "b"
gate = "fifo-ipc"
operation = "1ms"

[[task]]
name = "first"
priority = 1
script = [{ invoke = "b" }, { invoke = "a" }]

[[task]]
name = "second"
priority = 2
period = "5ms"
execution = "1ms"

[[task]]
name = "third"
priority = 3
script = [{ invoke = "a" }]
"#;
        let scenario = bulwark_spec::parse(text, "s.toml").expect("valid");
        assert_eq!(gate_waits(&scenario), ["first", "third"]);
        assert!(
            gate_note(&gate_waits(&scenario)).starts_with("note: `first`, `third` invoke servers,")
        );
        assert_eq!(gate_note(&[]), "");
    }
}
