//! Per-request budget bounds at a scenario's server gates, read from the scenario itself
//! (MC-IPC paper, sections IV-B and VI-B): how much of its reservation's budget one request
//! of a client can drain while it waits and is served, when waiting clients lend their
//! budgets to the request in service (bandwidth inheritance).
//!
//! - An mc-ipc gate: Theorem 1, `(1 + 2 m K) L`, with `m` the cores of the client's cluster
//!   (a core in no cluster is a cluster of one), `K` the gate clusters the server's clients
//!   sit in (each `[[cluster]]` once, each other core once) and `L` the longest operation.
//! - A fifo-ipc gate: `n L`, with `n` the server's clients (each has at most one request
//!   outstanding, its own included).
//!
//! No bound is given for a prio-ipc gate (its `h` needs every client's request rate), a
//! server without bandwidth inheritance (a caller then blocks and drains nothing, but waits
//! for as long as the callers ahead keep their budgets) or a body that calls another server
//! (its operation length depends on that server's queue).

use bulwark_core::ipc::GateProtocol;
use bulwark_core::Duration;
use bulwark_spec::model::visit_invocations;
use bulwark_spec::{Scenario, ServerSpec, ServerStep};

use crate::mc_ipc::{fifo_ipc_invocation_bound, invocation_budget_bound};

/// One server's gate and its clients' bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateBounds {
    /// The server's name.
    pub server: String,
    /// Its gate.
    pub gate: GateProtocol,
    /// `L`: the longest operation a request can ask for, if known.
    pub operation: Option<Duration>,
    /// `K`: the gate clusters its clients sit in.
    pub clusters: u64,
    /// Per client, in task order.
    pub clients: Vec<ClientBound>,
}

/// One client's bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientBound {
    /// The client task's name.
    pub name: String,
    /// `m`: the cores of its cluster (1 on a core in no cluster).
    pub cores: u64,
    /// The budget one of its requests drains at most, or why no bound is given.
    pub bound: Result<Duration, String>,
}

/// The bound's formula at `gate`, for reports.
pub fn formula(gate: GateProtocol) -> &'static str {
    match gate {
        GateProtocol::McIpc => "Theorem 1: (1 + 2 m K) L",
        GateProtocol::FifoIpc => "section VI-B: n L",
        GateProtocol::PrioIpc => "none",
    }
}

/// The bounds of every server of `scenario`, in file order.
pub fn analyse(scenario: &Scenario) -> Vec<GateBounds> {
    (0..scenario.servers.len())
        .map(|server| bounds(scenario, server))
        .collect()
}

/// The bound of client `task` at `server` (both by name), if there is one.
pub fn client_bound(scenario: &Scenario, server: &str, task: &str) -> Option<Duration> {
    let index = scenario.servers.iter().position(|s| s.name == server)?;
    let bounds = bounds(scenario, index);
    let client = bounds.clients.into_iter().find(|c| c.name == task)?;
    client.bound.ok()
}

/// What one call drains at most from its caller's reservation's budget, per task and server:
/// every gate's client bounds, read once for a scenario.
pub struct CallDrains {
    /// Per server (`Scenario::servers`), its bounds, clients in its `clients` order.
    bounds: Vec<GateBounds>,
}

impl CallDrains {
    /// The bounds of every server of `scenario`.
    pub fn of(scenario: &Scenario) -> CallDrains {
        CallDrains {
            bounds: analyse(scenario),
        }
    }

    /// Per server, what one call of task `task` (an index into `Scenario::tasks`) drains at
    /// most: its client bound there, or `None` where there is none (or it is no client).
    pub fn of_task(&self, scenario: &Scenario, task: usize) -> Vec<Option<Duration>> {
        (scenario.servers.iter().zip(&self.bounds))
            .map(|(spec, bounds)| {
                let at = spec.clients.iter().position(|&client| client == task)?;
                bounds.clients.get(at)?.bound.as_ref().ok().copied()
            })
            .collect()
    }
}

fn bounds(scenario: &Scenario, server: usize) -> GateBounds {
    let spec = &scenario.servers[server];
    let operation = longest_operation(scenario, server);
    let clusters = gate_clusters(scenario, spec);
    let clients = spec
        .clients
        .iter()
        .map(|&task| {
            let cores = scenario.cluster_of_task(task).map_or(1, |(cluster, _)| {
                scenario.clusters[cluster].cores.len() as u64
            });
            ClientBound {
                name: scenario.tasks[task].name.clone(),
                cores,
                bound: bound(spec, operation, cores, clusters),
            }
        })
        .collect();
    GateBounds {
        server: spec.name.clone(),
        gate: spec.gate,
        operation,
        clusters,
        clients,
    }
}

/// The bound for a client in a cluster of `cores` cores, or why there is none.
fn bound(
    spec: &ServerSpec,
    operation: Option<Duration>,
    cores: u64,
    clusters: u64,
) -> Result<Duration, String> {
    if !spec.bandwidth_inheritance {
        return Err(
            "no bound: without bandwidth inheritance a caller blocks and waits for \
                    the callers ahead, whose budgets bound nothing here"
                .to_owned(),
        );
    }
    let Some(operation) = operation else {
        return Err(
            "no bound: the body calls another server, so an operation's length depends on \
             that server's queue"
                .to_owned(),
        );
    };
    let overflow = || "no bound: it overflows 2^64 ns".to_owned();
    match spec.gate {
        // Theorem 1 (section IV-B).
        GateProtocol::McIpc => {
            invocation_budget_bound(cores, clusters, operation).ok_or_else(overflow)
        }
        // Section VI-B: each of the n clients has at most one request ahead.
        GateProtocol::FifoIpc => {
            fifo_ipc_invocation_bound(spec.clients.len() as u64, operation).ok_or_else(overflow)
        }
        GateProtocol::PrioIpc => Err("no bound: PRIO-IPC's (h + 1 + b) L needs how many \
                                      more urgent requests can come first, which a script \
                                      does not bound"
            .to_owned()),
    }
}

/// `K`: each `[[cluster]]` with a client counts once, and so does each other core with one.
fn gate_clusters(scenario: &Scenario, spec: &ServerSpec) -> u64 {
    let mut seen: Vec<(bool, usize)> = spec
        .clients
        .iter()
        .map(|&task| match scenario.cluster_of_task(task) {
            Some((cluster, _)) => (true, cluster),
            None => (false, usize::from(scenario.tasks[task].core)),
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len() as u64
}

/// `L`: the longest operation a request to `server` runs: its body's runs, or, for a body
/// of one run, the longest any client asks for (`invoke` with an `operation`) or the run
/// itself. `None` when the body calls another server.
fn longest_operation(scenario: &Scenario, server: usize) -> Option<Duration> {
    let spec = &scenario.servers[server];
    let mut body = Duration::ZERO;
    for step in &spec.body {
        match step {
            ServerStep::Run(run) => body = body.saturating_add(run.worst_case()),
            ServerStep::Invoke(_) => return None,
        }
    }
    if spec.body.len() != 1 {
        return Some(body);
    }
    // A one-run body: each call runs what it asks, or the body's run when it asks nothing.
    let mut longest = Duration::ZERO;
    for &task in &spec.clients {
        if let bulwark_spec::Behaviour::Script { steps, .. } = &scenario.tasks[task].behaviour {
            visit_invocations(steps, server, &mut |asked| {
                longest = longest.max(asked.map_or(body, |asked| asked.worst_case()));
            });
        }
    }
    // No client calls it (or none asks): the body's run.
    Some(if longest.is_zero() { body } else { longest })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;
    use bulwark_spec::parse;

    /// A two-core cluster and an SPR core call `key` (one run of 3 ms); `a` asks for 2 ms,
    /// `b` for 1-4 ms, `c` (on the SPR core) for nothing (the run's 3 ms).
    fn scenario(gate: &str, inherits: bool) -> Scenario {
        let source = format!(
            r#"
name = "gates"
policy = "fixed-priority"
cores = 3
duration = "100ms"

[[core]]
id = 2
policy = "spr"

[[cluster]]
name = "pair"
cores = [0, 1]
order = "edf"

[[server]]
name = "key"
gate = "{gate}"
bandwidth-inheritance = {inherits}
operation = "3ms"

[[task]]
name = "a"
cluster = "pair"
reservation = {{ budget = "20ms", period = "50ms" }}
script = [{{ loop = "forever", body = [{{ invoke = "key", operation = "2ms" }}, {{ sleep-until-next-release = "50ms" }}] }}]

[[task]]
name = "b"
cluster = "pair"
reservation = {{ budget = "20ms", period = "50ms" }}
script = [{{ invoke = "key", operation = {{ uniform = ["1ms", "4ms"] }} }}]

[[task]]
name = "c"
core = 2
priority = 1
reservation = {{ budget = "5ms", period = "50ms" }}
script = [{{ invoke = "key" }}]
"#
        );
        parse(&source, "gates.toml").expect("valid")
    }

    #[test]
    fn theorem_1_reads_m_k_and_l_from_the_scenario() {
        let [bounds] = analyse(&scenario("mc-ipc", true))
            .try_into()
            .expect("one server");
        // L = 4 ms (b's longest), K = 2 (the pair and core 2).
        assert_eq!((bounds.operation, bounds.clusters), (Some(ms(4)), 2));
        let found: Vec<(u64, Result<Duration, String>)> = bounds
            .clients
            .iter()
            .map(|c| (c.cores, c.bound.clone()))
            .collect();
        // (1 + 2 * 2 * 2) 4 ms = 36 ms in the pair; (1 + 2 * 1 * 2) 4 ms = 20 ms alone.
        assert_eq!(
            found,
            vec![(2, Ok(ms(36))), (2, Ok(ms(36))), (1, Ok(ms(20)))]
        );
    }

    #[test]
    fn fifo_ipc_is_n_operations_and_the_others_say_why_not() {
        let [fifo] = analyse(&scenario("fifo-ipc", true))
            .try_into()
            .expect("one");
        // n = 3 clients of L = 4 ms.
        assert!(fifo.clients.iter().all(|c| c.bound == Ok(ms(12))));
        let [prio] = analyse(&scenario("prio-ipc", true))
            .try_into()
            .expect("one");
        assert!(prio.clients.iter().all(|c| c.bound.is_err()));
        let [blocking] = analyse(&scenario("fifo-ipc", false))
            .try_into()
            .expect("one");
        let why = blocking.clients[0].bound.clone().unwrap_err();
        assert!(why.contains("bandwidth inheritance"), "{why}");
    }
}
