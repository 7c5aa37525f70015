//! Checks shared by the fuzz targets: bytes become text through `bulwark_spec::text_of`, and
//! every diagnostic a parser returns must point where an independent count of lines and
//! characters says it does.
//!
//! Each check panics on failure, which libFuzzer reports as a crash with the input saved.

use std::collections::HashSet;
use std::hash::Hash;

use bulwark_spec::component::{ComponentKind, ComponentSystem, ProcedureStep};
use bulwark_spec::mc_ipc_toml::{
    AddedReservation, Criticality, McIpcSystem, Replenishment, ReservationKind, ScriptStep,
};
use bulwark_spec::{
    Diagnostics, MemberKind, PolicyKind, Scenario, SpecError, SporadicOrder, MAX_NAME_CHARS,
};

/// `data` as text, as Bulwark reads any file; `None` (after checking the diagnostic) when
/// it is not UTF-8.
pub fn text_or_checked_error(data: &[u8], file: &str) -> Option<String> {
    match bulwark_spec::text_of(data.to_vec(), file) {
        Ok(text) => {
            assert_eq!(text.as_bytes(), data, "text_of must not change valid UTF-8");
            Some(text)
        }
        Err(diagnostics) => {
            let error = std::str::from_utf8(data).expect_err("text_of refused valid UTF-8");
            let lossy = String::from_utf8_lossy(data);
            assert_eq!(diagnostics.len(), 1, "one diagnostic for bad UTF-8");
            let only = &diagnostics.errors()[0];
            // The error sits at the first bad byte; the text before it is the same in the
            // lossy text, so the span indexes both.
            assert_eq!(
                only.span().map(|span| span.start),
                Some(error.valid_up_to())
            );
            assert!(only.message().contains("not UTF-8"), "{}", only.message());
            check_located(&diagnostics, &lossy, file);
            None
        }
    }
}

/// Every error in `diagnostics` names `file`, has a span inside `text`, and the line and
/// column that counting `\n` and characters before the span's start gives.
pub fn check_located(diagnostics: &Diagnostics, text: &str, file: &str) {
    assert!(
        !diagnostics.is_empty(),
        "an error result holds at least one error"
    );
    check_errors(diagnostics.errors(), text, file);
}

/// [`check_located`] for a list of errors or warnings (which may be empty).
pub fn check_errors(errors: &[SpecError], text: &str, file: &str) {
    let mut previous = 0;
    for error in errors {
        assert_eq!(error.file(), file);
        let span = error.span().expect("every error from text is located");
        assert!(
            span.start <= span.end && span.end <= text.len(),
            "{span:?} outside the text"
        );
        assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        let before = &text[..span.start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let column = before[line_start..].chars().count() + 1;
        assert_eq!(
            (error.line(), error.column()),
            (Some(line), Some(column)),
            "{error}"
        );
        assert!(!error.message().is_empty(), "{error}: empty message");
        assert!(!error.help().is_empty(), "{error}: empty help");
        let shown = error.plain();
        assert!(!shown.contains(['\n', '\r']), "{shown:?} is not one line");
        // Errors come in file order.
        assert!(span.start >= previous, "errors out of file order");
        previous = span.start;
    }
}

fn unique<T: Eq + Hash>(items: impl IntoIterator<Item = T>) -> bool {
    let mut seen = HashSet::new();
    items.into_iter().all(|item| seen.insert(item))
}

fn short_name(name: &str) -> bool {
    name.chars().count() <= MAX_NAME_CHARS
}

/// The rules `Scenario`'s documentation promises hold for every parsed scenario.
pub fn check_scenario(scenario: &Scenario) {
    assert!(
        !scenario.tasks.is_empty() || !scenario.components.is_empty(),
        "a scenario has tasks, or component systems whose tasks run"
    );
    assert!(scenario.cores >= 1);
    // One component system per core, by core, each on a fixed-priority core in no cluster.
    let component_cores: Vec<u16> = scenario.components.iter().map(|part| part.core).collect();
    assert!(component_cores.windows(2).all(|pair| pair[0] < pair[1]));
    for &core in &component_cores {
        assert!(core < scenario.cores, "component core {core}");
        assert_eq!(scenario.cluster_of(core), None);
        assert_eq!(scenario.policy_of(core), PolicyKind::FixedPriority);
        assert!(scenario.tasks.iter().all(|task| task.core != core));
    }
    assert!(unique(scenario.tasks.iter().map(|task| &task.name)));
    assert!(unique(scenario.groups.iter().map(|group| &group.name)));
    for (core, _) in &scenario.core_policies {
        assert!(*core < scenario.cores, "[[core]] {core}");
    }
    assert!(unique(scenario.core_policies.iter().map(|(core, _)| core)));
    check_clusters(scenario);
    for (index, task) in scenario.tasks.iter().enumerate() {
        assert!(short_name(&task.name));
        assert!(
            task.core < scenario.cores,
            "task {} on core {}",
            task.name,
            task.core
        );
        if scenario.cluster_of_task(index).is_some() {
            continue; // Checked with its cluster.
        }
        // A partitioned task follows its own core's policy, on a core in no cluster.
        assert_eq!(scenario.cluster_of(task.core), None, "{}", task.name);
        let policy = scenario.policy_of(task.core);
        assert_eq!(
            task.priority.is_some(),
            policy.has_priorities(),
            "{}",
            task.name
        );
        assert_eq!(
            task.reservation.is_some(),
            policy.has_reservations(),
            "{}",
            task.name
        );
    }
    for group in &scenario.groups {
        assert!(group
            .members
            .iter()
            .all(|&member| member < scenario.tasks.len()));
    }
    let any_vbs = scenario.policy == PolicyKind::Vbs
        || scenario
            .core_policies
            .iter()
            .any(|(_, policy)| *policy == PolicyKind::Vbs);
    assert_eq!(scenario.vbs.is_some(), any_vbs);
    if let Some(vbs) = &scenario.vbs {
        assert_eq!(vbs.caps.len(), scenario.tasks.len());
        // A cap exactly on the tasks of vbs cores.
        for (task, cap) in scenario.tasks.iter().zip(&vbs.caps) {
            let on_vbs = scenario.policy_of(task.core) == PolicyKind::Vbs;
            assert_eq!(cap.is_some(), on_vbs, "{}", task.name);
        }
    }
}

/// The rules `ClusterSpec`'s documentation promises: cores of the scenario, each in one
/// cluster and with no `[[core]]` table of its own; members listed once, placed on their
/// cluster's first core, with a priority exactly under fixed-priority order (none when
/// best-effort), a reservation exactly when sporadic, and partitions on a core of theirs with
/// sorted, disjoint slots within the cycle (zero exactly when there is no partition).
fn check_clusters(scenario: &Scenario) {
    assert!(unique(scenario.clusters.iter().map(|c| &c.name)));
    assert!(unique(scenario.clusters.iter().flat_map(|c| &c.cores)));
    assert!(unique(scenario.clusters.iter().flat_map(|c| &c.members).map(|m| m.task)));
    for cluster in &scenario.clusters {
        assert!(short_name(&cluster.name));
        assert!(!cluster.cores.is_empty(), "cluster {}", cluster.name);
        for core in &cluster.cores {
            assert!(*core < scenario.cores, "cluster {} core {core}", cluster.name);
            assert!(scenario.core_policies.iter().all(|(c, _)| c != core));
        }
        let mut partitions = 0;
        for member in &cluster.members {
            let task = &scenario.tasks[member.task];
            assert_eq!(task.core, cluster.cores[0], "{}", task.name);
            let named = matches!(member.kind, MemberKind::BestEffort | MemberKind::Shared { .. });
            assert_eq!(
                task.priority.is_some(),
                cluster.order == SporadicOrder::FixedPriority && !named,
                "{}",
                task.name
            );
            match &member.kind {
                MemberKind::Sporadic { low_budget, .. } => {
                    let reservation = task.reservation.expect("a sporadic member's reservation");
                    assert!(!reservation.budget.is_zero() && reservation.budget <= reservation.period);
                    if let Some(low) = low_budget {
                        assert!(!low.is_zero() && *low <= reservation.budget, "{}", task.name);
                    }
                }
                MemberKind::BestEffort => {
                    assert!(task.reservation.is_none(), "{}", task.name);
                }
                MemberKind::Shared { owner } => {
                    // An earlier member of the same cluster, with a reservation of its own.
                    assert!(task.reservation.is_none(), "{}", task.name);
                    let mut earlier = cluster.members.iter().take_while(|m| m.task != member.task);
                    let owner = earlier.find(|m| m.task == *owner);
                    let owner = owner.unwrap_or_else(|| panic!("{}: owner not earlier", task.name));
                    assert!(!matches!(owner.kind, MemberKind::Shared { .. }), "{}", task.name);
                }
                MemberKind::Partition { core, slots } => {
                    partitions += 1;
                    assert!(task.reservation.is_none(), "{}", task.name);
                    assert!(cluster.cores.contains(core), "{}", task.name);
                    assert!(!slots.is_empty(), "{}", task.name);
                    for (start, end) in slots {
                        assert!(start < end && *end <= cluster.cycle, "{}", task.name);
                    }
                    assert!(slots.windows(2).all(|w| w[0].1 < w[1].0), "{}", task.name);
                }
            }
        }
        assert_eq!(partitions > 0, !cluster.cycle.is_zero(), "cluster {}", cluster.name);
    }
}

/// The rules `ComponentSystem`'s documentation promises: indices in range, unique names,
/// active components with tasks and passive ones with CPIs.
pub fn check_components(system: &ComponentSystem) {
    let components = &system.components;
    assert!(unique(components.iter().map(|component| &component.name)));
    let mut task_names = Vec::new();
    let mut requestors = Vec::new();
    for component in components {
        assert!(short_name(&component.name));
        match &component.kind {
            ComponentKind::Active { tasks } => {
                assert!(!tasks.is_empty(), "active {} has no task", component.name);
                for task in tasks {
                    assert!(task.period > bulwark_core::Duration::ZERO);
                    task_names.push(&task.name);
                    requestors.push(task.requestor);
                    check_steps(system, task.body.as_deref());
                }
            }
            ComponentKind::Passive { cpis } => {
                assert!(!cpis.is_empty(), "passive {} has no CPI", component.name);
                assert!(unique(cpis.iter().map(|cpi| &cpi.name)));
                for cpi in cpis {
                    check_steps(system, cpi.body.as_deref());
                }
            }
        }
    }
    assert!(unique(task_names), "task names repeat");
    assert!(unique(requestors), "requestors repeat");
    for connection in &system.connections {
        assert!(connection.from < components.len());
        let ComponentKind::Passive { cpis } = &components[connection.to.component].kind else {
            panic!("connection {} ends at an active component", connection.name);
        };
        assert!(connection.to.cpi < cpis.len());
        if let Some(procedure) = connection.procedure {
            let ComponentKind::Passive { cpis } = &components[connection.from].kind else {
                panic!(
                    "connection {} sent by a CPI of an active component",
                    connection.name
                );
            };
            assert!(procedure < cpis.len());
        }
    }
}

fn check_steps(system: &ComponentSystem, body: Option<&[ProcedureStep]>) {
    for step in body.unwrap_or_default() {
        match step {
            ProcedureStep::Execute(time) => assert!(*time > bulwark_core::Duration::ZERO),
            ProcedureStep::Request(connection) => {
                assert!(connection.0 < system.connections.len())
            }
        }
    }
}

/// The rules `McIpcSystem`'s documentation promises: indices in range, unique names, slots
/// inside the cycle, budgets within periods, scripts that do something.
pub fn check_mc_ipc(system: &McIpcSystem) {
    let zero = bulwark_core::Duration::ZERO;
    assert!(!system.clusters.is_empty(), "a system has clusters");
    assert!(system.flood_gap > zero);
    assert!(unique(system.clusters.iter().map(|cluster| &cluster.name)));
    assert!(unique(system.servers.iter().map(|server| &server.name)));
    assert!(unique(
        system
            .reservations
            .iter()
            .map(|reservation| &reservation.name)
    ));
    assert!(unique(system.tasks.iter().map(|task| &task.name)));
    assert!(unique(system.phases.iter().map(|phase| &phase.name)));
    for cluster in &system.clusters {
        assert!(cluster.cores >= 1);
    }
    for server in &system.servers {
        let length = &server.operation_length;
        assert!(length.low > zero && length.low <= length.high);
    }
    for reservation in &system.reservations {
        assert!(reservation.cluster < system.clusters.len());
        let execution = &reservation.execution;
        assert!(execution.low > zero && execution.low <= execution.high);
        assert!(unique(
            reservation
                .invocations
                .iter()
                .map(|invocation| invocation.server)
        ));
        assert!(reservation
            .invocations
            .iter()
            .all(|invocation| invocation.server < system.servers.len()));
        match &reservation.kind {
            ReservationKind::TableDriven { slots } => {
                let cycle = system.cycle.expect("slots need a cycle");
                assert!(!slots.is_empty());
                for (index, slot) in slots.iter().enumerate() {
                    assert!(slot.start < slot.end && slot.end <= cycle, "{slot}");
                    assert!(slots[..index].iter().all(|other| !other.overlaps(*slot)));
                }
            }
            ReservationKind::Sporadic {
                budget,
                period,
                replenishment,
            } => {
                assert!(*budget > zero && budget <= period);
                // A constant-bandwidth server is of low criticality only.
                assert!(
                    *replenishment == Replenishment::Sporadic
                        || reservation.criticality == Criticality::Low
                );
            }
        }
    }
    assert!(system.groups.iter().all(|g| g.quota > zero));
    // Every member is a task, in at most one group.
    let mut members: Vec<usize> = system
        .groups
        .iter()
        .flat_map(|g| g.members.clone())
        .collect();
    let listed = members.len();
    members.sort_unstable();
    members.dedup();
    assert_eq!(members.len(), listed);
    assert!(members.iter().all(|&m| m < system.tasks.len()));
    for (index, task) in system.tasks.iter().enumerate() {
        assert!(task.reservation < system.reservations.len());
        assert!(task.period > zero);
        check_script(system, &task.script, Some(index));
    }
    let reclaims = !system.groups.is_empty()
        || system.tasks.iter().any(|t| {
            t.script.iter().any(|s| {
                matches!(
                    s,
                    ScriptStep::Allocate { .. } | ScriptStep::Terminate { .. }
                )
            })
        });
    assert!(
        !reclaims || system.cost.reclaim_per_unit > 0,
        "reclamation needs a cost"
    );
    for phase in &system.phases {
        assert!(phase.floods.iter().all(|&task| task < system.tasks.len()));
        for addition in &phase.additions {
            assert!(addition.count >= 1);
            assert!(!addition.clusters.is_empty());
            assert!(unique(&addition.clusters));
            assert!(addition.clusters.iter().all(|&c| c < system.clusters.len()));
            match &addition.reservation {
                AddedReservation::Existing(reservation) => {
                    assert!(*reservation < system.reservations.len());
                }
                AddedReservation::Sporadic {
                    budget,
                    period,
                    criticality,
                    replenishment,
                    ..
                } => {
                    assert!(*budget > zero && budget <= period);
                    assert!(
                        *replenishment == Replenishment::Sporadic
                            || *criticality == Criticality::Low
                    );
                }
                AddedReservation::BestEffort => {}
            }
            assert!(addition.task.period > zero);
            check_script(system, &addition.task.script, None);
        }
    }
}

/// `own` is the script's task, when it is a `[[task]]` (a phase's copies have none).
fn check_script(system: &McIpcSystem, script: &[ScriptStep], own: Option<usize>) {
    let zero = bulwark_core::Duration::ZERO;
    assert!(!script.is_empty(), "an empty script");
    assert!(
        script
            .iter()
            .any(|step| !matches!(step, ScriptStep::SleepUntilNextPeriod)),
        "a script that only sleeps"
    );
    for step in script {
        match step {
            ScriptStep::Compute(time) => {
                assert!(time.best_case() > zero && time.best_case() <= time.worst_case())
            }
            ScriptStep::Invoke { server, length } => {
                let server = system.servers.get(*server).expect("server in range");
                let (min, max) = (length.best_case(), length.worst_case());
                assert!(min > zero && min <= max && max <= server.operation_length.high);
            }
            ScriptStep::SleepUntilNextPeriod => {}
            ScriptStep::Allocate { count, .. } => assert!(*count >= 1),
            ScriptStep::Terminate { task } => {
                assert!(*task < system.tasks.len());
                assert_ne!(Some(*task), own, "a task terminating itself");
            }
        }
    }
}
