//! Passive-server calls on one core, for `analyze`'s response-time and demand tests: which
//! servers' calls are bounded there, what one operation runs on its caller's context, and the
//! blocking the core's tasks get from other tasks' operations (fixed priority: per task, from
//! lower ones; EDF: per window, from later deadlines)
//! ([`bulwark_analysis::classic::server_calls`]).

use bulwark_analysis::classic::server_calls::{
    edf_blocking, server_blocking, CallingTask, ServerRule, Unbounded,
};
use bulwark_core::Duration;
use bulwark_spec::{visit_invocations, Behaviour, Scenario, ServerSpec, StepTimes, TaskSpec};

/// The servers' calls as one core sees them.
pub struct CoreServers {
    /// Per server, one operation's time where its calls are bounded on this core
    /// ([`StepTimes::operations`]).
    pub operations: Vec<Option<Duration>>,
    /// What other tasks' operations may cost the core's jobs.
    pub waits: Waits,
}

/// Other tasks' operations that the core's jobs may wait for, in nanoseconds.
pub enum Waits {
    /// Fixed priority: per task of the core (in the order given), from lower tasks'
    /// operations, or why it has no bound.
    PerTask(Vec<Result<u64, Unbounded>>),
    /// EDF: per demand window, from later deadlines' operations, or the server that has no
    /// bound.
    PerWindow(Result<u64, usize>),
}

/// Whether `server`'s calls are bounded on `core`: every caller is a task of the core, and
/// its operation calls no other server (a nested call's wait is not analysed).
fn bounded_on(scenario: &Scenario, server: &ServerSpec, core: u16) -> Option<Duration> {
    let local = (server.clients.iter()).all(|&task| scenario.tasks[task].core == core);
    local.then(|| server.operation_time()).flatten()
}

fn rule(server: &ServerSpec) -> ServerRule {
    match (server.priority, server.bandwidth_inheritance) {
        (Some(ceiling), _) => ServerRule::Ceiling(ceiling.0),
        (None, true) => ServerRule::Inheritance,
        (None, false) => ServerRule::CallerOnly,
    }
}

/// Per server, one operation's time where its calls are bounded on `core`, and each of
/// `tasks`' calls to those servers.
fn calls_on(
    scenario: &Scenario,
    core: u16,
    tasks: &[usize],
) -> (Vec<Option<Duration>>, Vec<CallingTask>) {
    let operations: Vec<Option<Duration>> = (scenario.servers.iter())
        .map(|server| bounded_on(scenario, server, core))
        .collect();
    let times = StepTimes::with_operations(&scenario.cost, &operations);
    let calling = tasks
        .iter()
        .map(|&task| calling_task(&scenario.tasks[task], &times))
        .collect();
    (operations, calling)
}

/// The servers' calls on `core`, whose tasks are `tasks` (indices into `scenario.tasks`),
/// scheduled by EDF when `edf`, else by fixed priority.
pub fn on_core(scenario: &Scenario, core: u16, tasks: &[usize], edf: bool) -> CoreServers {
    let (operations, calling) = calls_on(scenario, core, tasks);
    let calls = calling.iter().any(|task| !task.calls.is_empty());
    let rules: Vec<ServerRule> = scenario.servers.iter().map(rule).collect();
    let waits = match (edf, calls) {
        (false, false) => Waits::PerTask(vec![Ok(0); tasks.len()]),
        (false, true) => Waits::PerTask(server_blocking(&calling, &rules)),
        (true, false) => Waits::PerWindow(Ok(0)),
        (true, true) => {
            // A script without a deadline is due at no time: always beyond a window.
            let deadlines: Vec<u64> = (tasks.iter())
                .map(|&task| {
                    (scenario.tasks[task].relative_deadline()).map_or(u64::MAX, Duration::as_nanos)
                })
                .collect();
            Waits::PerWindow(edf_blocking(&calling, &deadlines, &rules))
        }
    };
    CoreServers { operations, waits }
}

/// A task's priority and, per bounded server it calls, its longest call.
fn calling_task(spec: &TaskSpec, times: &StepTimes) -> CallingTask {
    let mut calls: Vec<(usize, u64)> = Vec::new();
    if let Behaviour::Script { steps, .. } = &spec.behaviour {
        for (server, _) in times.operations.iter().enumerate() {
            let mut longest = None;
            visit_invocations(steps, server, &mut |operation| {
                let time = times.operation(server, operation).map(Duration::as_nanos);
                longest = longest.max(time);
            });
            if let Some(longest) = longest {
                calls.push((server, longest));
            }
        }
    }
    CallingTask {
        priority: spec.priority.map_or(0, |p| p.0),
        calls,
    }
}

/// Why task `own` (a name) is not analysed, for `unbounded`; `tasks` as given to [`on_core`].
pub fn why_unbounded(
    scenario: &Scenario,
    tasks: &[usize],
    unbounded: Unbounded,
    own: &str,
) -> String {
    let name = |at: usize| scenario.tasks[tasks[at]].name.as_str();
    let server = &scenario.servers[unbounded.server].name;
    let (lower, between, upper) = (
        name(unbounded.lower),
        name(unbounded.between),
        name(unbounded.upper),
    );
    let wait = format!(
        "`{upper}` may wait at server `{server}` (no bandwidth inheritance, no priority) for \
         `{lower}`'s request, which runs at `{lower}`'s priority while `{between}`, above it, \
         runs first"
    );
    if own == upper {
        format!(
            "{wait}: a wait without bound (a priority inversion) that the response-time test \
             cannot hold; bandwidth-inheritance = true or a server priority bounds it"
        )
    } else {
        format!(
            "{wait}: `{upper}` then suspends and runs later, which may bring more of its work \
             into `{own}`'s window than the response-time test counts; bandwidth-inheritance = \
             true or a server priority bounds it"
        )
    }
}
