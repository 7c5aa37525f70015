//! `[[server]]` checks: a unique name, a gate, an operation that always takes time
//! (`bandwidth-inheritance` is a plain boolean, off when left out but for an `mc-ipc` gate,
//! which always inherits); and, once every task is known, that each `invoke` step names a
//! server and that an `mc-ipc` gate's callers have budgets whose exhaustion their core's
//! policy reports. Callers may sit on any core, with or without inheritance.

use std::ops::Range;

use bulwark_core::ipc::GateProtocol;
use toml::Spanned;

use super::Checker;
use crate::diagnostic::names_help;
use crate::model::{Execution, PolicyKind, ServerSpec, ServerStep, TaskSpec};
use crate::raw::RawScenario;

/// What to add when an `invoke` names no server.
const ADD_SERVER: &str = "add a [[server]] table with this name, a gate and an operation";
const BODY_HELP: &str = "allowed: operation = \"2ms\" (or { uniform = [min, max] }), or body = \
                         [{ run = \"1ms\" }, { invoke = \"other\" }, ...]: runs and calls of \
                         other servers, in order";
const GATE_HELP: &str = "allowed: fifo-ipc (callers served in arrival order), prio-ipc (the \
                         most urgent caller first) or mc-ipc (the MC-IPC gate: a request is \
                         aborted when its caller's budget runs out)";

/// An `invoke` step, as written, with the server it named (an index into the servers).
pub(super) struct Invocation {
    pub(super) caller: usize,
    pub(super) server: usize,
    pub(super) span: Range<usize>,
}

impl Checker<'_> {
    /// The servers, checked before the tasks so that `invoke` steps can name them.
    pub(super) fn servers(&mut self, raw: &RawScenario) -> Option<Vec<ServerSpec>> {
        // Every name and flag first: a body may call a server declared after it.
        for server in &raw.server {
            let s = server.get_ref();
            self.server_names.push(s.name.get_ref().clone());
            // Fig. 1, line 19: an MC-IPC gate's waiting clients always lend their budgets.
            let mc_ipc = GateProtocol::from_name(s.gate.get_ref()) == Some(GateProtocol::McIpc);
            let inherits = s
                .bandwidth_inheritance
                .as_ref()
                .map_or(mc_ipc, |b| *b.get_ref());
            self.server_inherits.push(inherits);
            self.server_mc_ipc.push(mc_ipc);
            self.server_one_run
                .push(s.operation.is_some() && s.body.is_none());
            self.server_priorities
                .push(s.priority.as_ref().map(|p| (*p.get_ref(), p.span())));
        }
        let mut servers = Vec::with_capacity(raw.server.len());
        let mut calls: Vec<Vec<(usize, Range<usize>)>> = Vec::with_capacity(raw.server.len());
        let mut all_valid = true;
        for (index, server) in raw.server.iter().enumerate() {
            let s = server.get_ref();
            let name = self.name(&s.name, "a server name");
            if self.server_names[..index].contains(s.name.get_ref()) {
                self.report(
                    s.name.span(),
                    format!("server name `{}` is already used", s.name.get_ref()),
                    "allowed: a name no other server in this scenario has",
                );
                all_valid = false;
            }
            let inherits = self.server_inherits[index];
            let mut gate = self.gate(&s.gate);
            if let Some(off) = s.bandwidth_inheritance.as_ref().filter(|_| !inherits) {
                if gate == Some(GateProtocol::McIpc) {
                    self.report(
                        off.span(),
                        "an mc-ipc gate's waiting callers lend their budgets to the request in \
                         service (MC-IPC paper, Fig. 1, line 19)",
                        "allowed: bandwidth-inheritance = true, or left out, with an mc-ipc \
                         gate; fifo-ipc or prio-ipc without inheritance",
                    );
                    gate = None;
                }
            }
            let mut called = Vec::new();
            let body = self.server_body(index, server, &mut called);
            calls.push(called);
            let priority = match &s.priority {
                None => Some(None),
                Some(raw) if inherits => {
                    self.report(
                        raw.span(),
                        "a server with bandwidth inheritance runs its operation on the waiting \
                         callers' contexts too, at their own priorities",
                        "allowed: priority or bandwidth-inheritance = true, not both",
                    );
                    None
                }
                Some(raw) => self.priority_value(raw).map(Some),
            };
            let pruned = self.pruned(s.pruned.as_ref(), gate);
            match (name, gate, body, priority, pruned) {
                (Some(name), Some(gate), Some(body), Some(priority), Some(pruned)) => {
                    servers.push(ServerSpec {
                        name,
                        gate,
                        body,
                        bandwidth_inheritance: inherits,
                        priority,
                        pruned_to_background: pruned,
                        clients: Vec::new(),
                    })
                }
                _ => all_valid = false,
            }
        }
        all_valid &= self.no_call_cycles(&calls);
        all_valid.then_some(servers)
    }

    /// `pruned`: true for `"background"` (section V), false for `"reissue"` or left out
    /// (section IV-A); only an mc-ipc gate prunes, so only it takes the key.
    fn pruned(
        &mut self,
        raw: Option<&Spanned<String>>,
        gate: Option<GateProtocol>,
    ) -> Option<bool> {
        let Some(raw) = raw else {
            return Some(false);
        };
        let background = match raw.get_ref().as_str() {
            "reissue" => false,
            "background" => true,
            other => {
                self.report(
                    raw.span(),
                    format!("unknown pruned `{other}`"),
                    "allowed: reissue (a pruned request waits for its caller's budget) or \
                     background (it moves to the gate's background queue meanwhile)",
                );
                return None;
            }
        };
        match gate {
            Some(GateProtocol::McIpc) => Some(background),
            Some(other) => {
                self.report(
                    raw.span(),
                    format!(
                        "a {} gate prunes no request: only an mc-ipc gate aborts a waiting \
                         request when its caller's budget runs out",
                        other.name()
                    ),
                    "allowed: pruned only with gate = \"mc-ipc\"; remove it",
                );
                None
            }
            // The gate is wrong and already reported.
            None => None,
        }
    }

    /// What server `index` does per request: `operation = ...` (one run) or `body = [...]`
    /// (runs and calls of other servers, in order), exactly one of them. The calls it makes
    /// go into `called`, with where.
    fn server_body(
        &mut self,
        index: usize,
        server: &Spanned<crate::raw::RawServer>,
        called: &mut Vec<(usize, Range<usize>)>,
    ) -> Option<Vec<ServerStep>> {
        let s = server.get_ref();
        match (&s.operation, &s.body) {
            (Some(operation), None) => Some(vec![ServerStep::Run(self.operation(operation)?)]),
            (None, Some(body)) => {
                if body.get_ref().is_empty() {
                    self.report(
                        body.span(),
                        "a server's body needs at least one step",
                        BODY_HELP,
                    );
                    return None;
                }
                let steps: Vec<Option<ServerStep>> = body
                    .get_ref()
                    .iter()
                    .map(|step| self.server_step(index, step, called))
                    .collect();
                steps.into_iter().collect()
            }
            (Some(operation), Some(body)) => {
                let start = operation.span().start.max(body.span().start);
                self.report(
                    start..start,
                    format!(
                        "server `{}` has both an operation and a body",
                        s.name.get_ref()
                    ),
                    BODY_HELP,
                );
                None
            }
            (None, None) => {
                self.report(
                    server.span(),
                    format!("server `{}` has no operation", s.name.get_ref()),
                    BODY_HELP,
                );
                None
            }
        }
    }

    /// One step of a server's body: a run above zero, or a call of a server that neither
    /// inherits bandwidth nor has a priority, from a server that does not inherit bandwidth
    /// (a context waiting at this server must be able to run its request, which cannot wait
    /// at another gate meanwhile).
    fn server_step(
        &mut self,
        index: usize,
        spanned: &Spanned<crate::raw::RawStep>,
        called: &mut Vec<(usize, Range<usize>)>,
    ) -> Option<ServerStep> {
        let raw = spanned.get_ref();
        let action = self.action(raw, spanned.span());
        self.companions(raw, spanned.span());
        match action? {
            "run" => {
                let run = raw.run.as_ref()?;
                let crate::raw::RawRun::Fixed(time) = run.get_ref() else {
                    self.report(
                        run.span(),
                        "a server's run is one time: only a task's run is drawn in [min, max]",
                        "allowed: { run = \"2ms\" } in a server's body, longer than zero",
                    );
                    return None;
                };
                let time = self.time_at(time, run.span())?;
                if time.is_zero() {
                    self.report(
                        run.span(),
                        "run cannot be zero",
                        "allowed: a time longer than zero, like \"5ms\"",
                    );
                    return None;
                }
                Some(ServerStep::Run(Execution::Fixed(time)))
            }
            "invoke" => {
                let target = raw.invoke.as_ref()?;
                let Some(callee) = self.server_names.iter().position(|n| n == target.get_ref())
                else {
                    self.report(
                        target.span(),
                        format!("no [[server]] is called `{}`", target.get_ref()),
                        names_help(self.server_names.iter().map(String::as_str), ADD_SERVER),
                    );
                    return None;
                };
                if self.server_inherits[index] {
                    self.report(
                        target.span(),
                        format!(
                            "server `{}` inherits bandwidth, so its body cannot call another \
                             server",
                            self.server_names[index]
                        ),
                        "allowed: run steps only in the body of a server with \
                         bandwidth-inheritance",
                    );
                    return None;
                }
                if self.server_inherits[callee] || self.server_priorities[callee].is_some() {
                    self.report(
                        target.span(),
                        format!(
                            "server `{}` inherits bandwidth or has a priority, so only tasks call \
                             it",
                            target.get_ref()
                        ),
                        "allowed: calls from a body to servers without bandwidth-inheritance \
                         and without priority",
                    );
                    return None;
                }
                called.push((callee, target.span()));
                Some(ServerStep::Invoke(callee))
            }
            other => {
                let start = spanned.span().start;
                self.report(
                    start..start,
                    format!("a server's body runs and calls, but this step is {other}"),
                    BODY_HELP,
                );
                None
            }
        }
    }

    /// No server calls itself, directly or through others (its caller would wait for it at
    /// its own gate for ever). Reported at the call that closes a cycle.
    fn no_call_cycles(&mut self, calls: &[Vec<(usize, Range<usize>)>]) -> bool {
        let mut valid = true;
        for start in 0..calls.len() {
            // Depth-first from `start`, the path of servers so far.
            let mut path = vec![start];
            let mut stack = vec![(start, 0usize)];
            let mut seen = vec![false; calls.len()];
            seen[start] = true;
            while let Some((server, next)) = stack.pop() {
                let Some((callee, span)) = calls[server].get(next).cloned() else {
                    path.pop();
                    continue;
                };
                stack.push((server, next + 1));
                // A cycle is reported once, from its first server in file order.
                if callee == start && path.iter().all(|&s| s >= start) {
                    let names: Vec<&str> = path
                        .iter()
                        .chain(std::iter::once(&start))
                        .map(|&s| self.server_names[s].as_str())
                        .collect();
                    let message = format!(
                        "server `{}` would call itself: {}",
                        self.server_names[start],
                        names.join(" -> ")
                    );
                    self.report(
                        span,
                        message,
                        "allowed: calls that end; a server never waits at its own gate",
                    );
                    valid = false;
                    break;
                }
                if !seen[callee] {
                    seen[callee] = true;
                    path.push(callee);
                    stack.push((callee, 0));
                }
            }
        }
        valid
    }

    /// `gate = "fifo-ipc" | "prio-ipc" | "mc-ipc"`.
    fn gate(&mut self, raw: &Spanned<String>) -> Option<GateProtocol> {
        match GateProtocol::from_name(raw.get_ref()) {
            Some(gate) => Some(gate),
            None => {
                self.report(
                    raw.span(),
                    format!("unknown gate `{}`", raw.get_ref()),
                    GATE_HELP,
                );
                None
            }
        }
    }

    /// An operation's execution, whose shortest time is above zero: a loop of invocations
    /// then always lets time pass.
    pub(super) fn operation(
        &mut self,
        raw: &Spanned<crate::raw::RawExecution>,
    ) -> Option<Execution> {
        let operation = self.execution(raw)?;
        if let Execution::Uniform { min, .. } = operation {
            if min.is_zero() {
                self.report(
                    raw.span(),
                    "an operation that may take no time would let a loop of invocations spin",
                    "allowed: a time above zero, or { uniform = [min, max] } with min above zero",
                );
                return None;
            }
        }
        Some(operation)
    }

    /// The server an `invoke` step names, by index; recorded for the core check.
    pub(super) fn invoked(&mut self, raw: &Spanned<String>) -> Option<usize> {
        let Some(server) = self.server_names.iter().position(|n| n == raw.get_ref()) else {
            let help = names_help(self.server_names.iter().map(String::as_str), ADD_SERVER);
            self.report(
                raw.span(),
                format!("no [[server]] is called `{}`", raw.get_ref()),
                help,
            );
            return None;
        };
        self.invocations.push(Invocation {
            caller: self.current_task,
            server,
            span: raw.span(),
        });
        Some(server)
    }

    /// Each server's callers, in task order, into `servers` when they are valid, on any
    /// core: with bandwidth inheritance a waiting caller dispatched while the operation runs
    /// on another core spins (the machine runs it on one core at a time); without it a reply
    /// wakes the next caller on its own core.
    pub(super) fn server_clients(
        &mut self,
        tasks: &[TaskSpec],
        task_policies: &[Option<PolicyKind>],
        servers: Option<&mut Vec<ServerSpec>>,
    ) {
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); self.server_names.len()];
        let mut in_cluster = vec![false; tasks.len()];
        for member in &self.cluster_members {
            if let Some(flag) = in_cluster.get_mut(member.task) {
                *flag = true;
            }
        }
        for invocation in std::mem::take(&mut self.invocations) {
            let clients = &mut callers[invocation.server];
            let caller = &tasks[invocation.caller];
            if !clients.contains(&invocation.caller) {
                if let Some(policy) = task_policies[invocation.caller] {
                    self.ceiling(invocation.server, caller, policy);
                    self.noticed(&invocation, caller, policy);
                } else if in_cluster[invocation.caller] {
                    self.member_ceiling(invocation.server, caller);
                }
                clients.push(invocation.caller);
            }
        }
        if let Some(servers) = servers {
            for (server, clients) in servers.iter_mut().zip(callers) {
                server.clients = clients;
            }
        }
    }

    /// An `mc-ipc` gate aborts a request when its caller's budget runs out and reissues it
    /// when the budget is back (Fig. 1, `mc_abort`): its callers' cores must report both.
    fn noticed(&mut self, invocation: &Invocation, caller: &TaskSpec, policy: PolicyKind) {
        if !self.server_mc_ipc[invocation.server] || policy.reports_budget_notices() {
            return;
        }
        let message = format!(
            "server `{}` has an mc-ipc gate, which aborts a request when its caller's budget \
             runs out, but its caller `{}` is on core {}, which runs {}, whose budgets report \
             no exhaustion",
            self.server_names[invocation.server],
            caller.name,
            caller.core,
            policy.name()
        );
        let allowed: Vec<&str> = PolicyKind::ALL
            .iter()
            .filter(|(kind, _)| kind.reports_budget_notices())
            .map(|(_, name)| *name)
            .collect();
        self.report(
            invocation.span.clone(),
            message,
            format!(
                "allowed: callers of an mc-ipc gate on cores that run {}",
                allowed.join(", ")
            ),
        );
    }

    /// A server with a priority raises its caller's thread to it, but a cluster's scheduler
    /// orders reservations by their own priorities: a member calls servers without one.
    fn member_ceiling(&mut self, server: usize, caller: &TaskSpec) {
        let Some((priority, span)) = self.server_priorities[server].clone() else {
            return;
        };
        let name = &self.server_names[server];
        let message = format!(
            "server `{name}` runs at priority {priority}, but its caller `{}` runs in a \
             cluster, whose reservations keep their own priorities",
            caller.name
        );
        self.report(
            span,
            message,
            "allowed: priority on a server whose callers are all on fixed-priority cores in no \
             cluster; for a cluster's callers, bandwidth-inheritance = true or neither",
        );
    }

    /// A server's priority is a ceiling: the caller's core changes priorities (fixed
    /// priority), and the caller is no more important than the server.
    fn ceiling(&mut self, server: usize, caller: &TaskSpec, policy: PolicyKind) {
        let Some((priority, span)) = self.server_priorities[server].clone() else {
            return;
        };
        let name = &self.server_names[server];
        if policy != PolicyKind::FixedPriority {
            let message = format!(
                "server `{name}` runs at priority {priority}, but its caller `{}` is on core {}, \
                 which runs {}, where a thread's priority does not change",
                caller.name,
                caller.core,
                policy.name()
            );
            self.report(
                span,
                message,
                "allowed: priority on a server whose callers are all on fixed-priority cores",
            );
        } else if caller.priority.is_some_and(|p| i64::from(p.0) > priority) {
            let message = format!(
                "server `{name}` runs at priority {priority}, below its caller `{}` (priority \
                 {})",
                caller.name,
                caller.priority.map_or(0, |p| p.0)
            );
            self.report(
                span,
                message,
                "allowed: a priority at least every caller's (the ceiling), or no priority: \
                 the caller's",
            );
        }
    }
}
