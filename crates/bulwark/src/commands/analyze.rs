//! `bulwark analyze`: the SPR admission test (Eq. 1) and overhead bound (Eq. 2) of every
//! reservation, core by core; for CBS, the EDF bandwidth test (and, on a core that
//! terminations may mask, the EDF demand test with the mask); for VBS, the caps test and
//! every action's response bound.

use crate::output::{out, outln};
use std::process::ExitCode;

use bulwark_analysis::admission::{
    preemptions_per_period, response_times_masked, Response, Server, Verdict,
};
use bulwark_analysis::bandwidth::{self, Bandwidth};
use bulwark_analysis::classic::{
    self,
    edf::{self, EdfAnalysis, EdfOutcome},
};
use bulwark_analysis::component_graph;
use bulwark_analysis::gates::CallDrains;
use bulwark_analysis::job_bound::{cbs_job_bound, job_bound, JobBound};
use bulwark_analysis::overhead::{overhead, work_per_invocation, Overhead, WorkBound};
use bulwark_analysis::rbf::ServerKind;
use bulwark_analysis::reclamation::{masks_by_place, scenario_terminations, stretches_at, Masked};
use bulwark_analysis::vbs::{Action as VbsAction, MaskedCore as VbsMaskedCore};
use bulwark_core::bandwidth::vbs::ReleaseStrategy;
use bulwark_core::Duration;
use bulwark_spec::component::ComponentSystem;
use bulwark_spec::{Behaviour, FileKind, PolicyKind, Scenario, Step, SystemFile, TaskSpec};
use serde_json::{json, Value};

use crate::cli::AnalyzeArgs;
use crate::{diagnostics, table};

pub fn run(args: &AnalyzeArgs) -> Result<ExitCode, String> {
    let Some(system) = super::load_system(&args.file) else {
        return Ok(crate::exit::bad_input());
    };
    super::components::refuse_overheads(&args.file, args.overheads, &system)?;
    super::components::refuse_component_flag(
        &args.file,
        args.camkes,
        "--camkes prints a component system's CAmkES configuration",
        &system,
    )?;
    let scenario = match system {
        SystemFile::McIpc(system) => return super::mcipc_analyze::analyze(&system, args.json),
        SystemFile::Components(located) => return Ok(components(&located.system, args)),
        SystemFile::Sweep(_) => {
            return Ok(super::wrong_kind(
                &args.file,
                FileKind::Sweep,
                "analyze",
                "a scenario, a component system or an MC-IPC system",
            ))
        }
        // The guard prints the warnings; it holds only when --deny-warnings stops the command.
        SystemFile::Scenario(_, warnings)
            if diagnostics::report_warnings(&warnings, args.deny_warnings) =>
        {
            return Ok(crate::exit::bad_input());
        }
        SystemFile::Scenario(scenario, _) => scenario,
    };
    if scenario.components.is_empty() {
        by_cores(&scenario, args)
    } else {
        composed(&scenario, args)
    }
}

/// The analysis of a scenario without a component system: its clusters, its policies' parts,
/// or its one policy.
fn by_cores(scenario: &Scenario, args: &AnalyzeArgs) -> Result<ExitCode, String> {
    gates::with_gate_bounds(scenario, args.json, || {
        terminations::with_masks(scenario, args.json, || {
            if !scenario.clusters.is_empty() {
                return clusters::clustered(scenario, args);
            }
            if scenario.is_mixed() {
                return mixed(scenario, &scenario.parts_by_policy(), args);
            }
            analyse_scenario(scenario, args)
        })
    })
}

/// A scenario with component systems, each on a core of its own: each such core by the
/// component analysis of its system (the configuration analyzer, then `B_i` with SPR's `I_i`
/// for tasks in reservations), the other cores by theirs, apart (partitioned cores share
/// nothing a per-core analysis sees). Text: each component core's section, by core, then the
/// others'. JSON: `{ "scenario", "components": { "core", "analysis" }, "component_systems":
/// [ { "core", "analysis" } ], "cores" }`: `component_systems` has one entry per component
/// core, by core, and `components` is its first (the only one in a file with one component
/// system); each analysis is the document its command prints alone (`cores` is null when no
/// other core has tasks). Exit: the worst of the parts' (2 if one could not be analysed,
/// else 1 if one admits not everything, else 0).
fn composed(scenario: &Scenario, args: &AnalyzeArgs) -> Result<ExitCode, String> {
    // The file's own tasks come first; the component systems' follow them.
    let mut rest = scenario.clone();
    rest.tasks.truncate(scenario.file_tasks());
    rest.cpis.clear();
    rest.components.clear();
    let mut codes = Vec::new();
    if args.json {
        let mut systems = Vec::new();
        for part in &scenario.components {
            let (text, code) = crate::output::capture(|| components(&part.system, args));
            codes.push(code);
            let analysis: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            systems.push(json!({ "core": part.core, "analysis": analysis }));
        }
        let mut cores = Value::Null;
        if !rest.tasks.is_empty() {
            let (text, code) = crate::output::capture(|| by_cores(&rest, args));
            codes.push(code?);
            cores = serde_json::from_str(&text).unwrap_or(Value::Null);
        }
        outln!(
            "{:#}",
            json!({
                "scenario": scenario.name,
                "components": systems[0],
                "component_systems": systems,
                "cores": cores,
            })
        );
    } else {
        for (index, part) in scenario.components.iter().enumerate() {
            if index > 0 {
                outln!("");
            }
            outln!("== core {}: components ==", part.core);
            codes.push(components(&part.system, args));
        }
        if !rest.tasks.is_empty() {
            outln!("");
            codes.push(by_cores(&rest, args)?);
        }
    }
    Ok(worst(&codes))
}

/// The worst of several parts' exit codes: 2, then 1, then 0.
fn worst(codes: &[ExitCode]) -> ExitCode {
    if codes.contains(&crate::exit::bad_input()) {
        crate::exit::bad_input()
    } else if codes.contains(&ExitCode::FAILURE) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// A scenario whose cores run different policies: each policy's cores analysed apart (the
/// cores are partitioned, so nothing one part's analysis sees depends on another part).
/// Text: one section per policy. JSON: `{ "scenario", "parts": [ { "policy", "cores",
/// "analysis" } ] }`, each `analysis` the document the policy's own analysis prints. Exit:
/// 2 if a part could not be analysed, else 1 if a part admits not everything, else 0.
/// `by_policy` are the scenario's [`Scenario::parts_by_policy`].
fn mixed(
    scenario: &Scenario,
    by_policy: &[Scenario],
    args: &AnalyzeArgs,
) -> Result<ExitCode, String> {
    let mut parts = Vec::new();
    let mut codes = Vec::new();
    for part in by_policy {
        // A cluster's cores are in no part (`policy_of` gives them the scenario's, unused).
        let cores: Vec<u16> = scenario
            .partitioned_cores()
            .filter(|&c| scenario.policy_of(c) == part.policy)
            .collect();
        let list = cores
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if part.tasks.is_empty() {
            continue;
        }
        if args.json {
            let (text, code) = crate::output::capture(|| analyse_scenario(part, args));
            let code = code?;
            let analysis: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            parts.push(json!({
                "policy": part.policy.name(),
                "cores": cores,
                "analysis": analysis,
            }));
            codes.push(code);
        } else {
            outln!("== cores {list}: {} ==", part.policy.name());
            codes.push(analyse_scenario(part, args)?);
            outln!("");
        }
    }
    if args.json {
        outln!(
            "{:#}",
            json!({ "scenario": scenario.name, "policy": scenario.policy_label(), "parts": parts })
        );
    }
    Ok(worst(&codes))
}

/// The analysis of a scenario whose cores all run `scenario.policy`.
fn analyse_scenario(scenario: &Scenario, args: &AnalyzeArgs) -> Result<ExitCode, String> {
    let scenario = scenario.clone();
    if matches!(scenario.policy, PolicyKind::Cbs | PolicyKind::HardCbs) {
        return Ok(bandwidth_servers(&scenario, args.json));
    }
    if scenario.policy == PolicyKind::Vbs {
        return Ok(vbs_processes(&scenario, args.json));
    }
    if matches!(scenario.policy, PolicyKind::FixedPriority | PolicyKind::Edf) {
        return Ok(super::analyze_classic::run(&scenario, args.json));
    }
    let Some(kind) = server_kind(scenario.policy) else {
        let servers: Vec<&str> = PolicyKind::ALL
            .iter()
            .filter(|(k, _)| {
                server_kind(*k).is_some()
                    || matches!(k, PolicyKind::Cbs | PolicyKind::HardCbs | PolicyKind::Vbs)
            })
            .map(|(_, name)| *name)
            .collect();
        return Err(format!(
            "{}: policy `{}` has no reservation servers to admit; analyze needs one of: {}",
            args.file.display(),
            scenario.policy.name(),
            servers.join(", ")
        ));
    };
    let cores = analyse(&scenario, kind);
    if args.json {
        outln!("{:#}", to_json(&scenario, kind, &cores));
    } else {
        out!("{}", to_text(&scenario, kind, &cores));
    }
    Ok(if all_admitted(&cores) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The request-bound function each reservation-server policy needs; `None` for policies
/// without servers.
fn server_kind(policy: PolicyKind) -> Option<ServerKind> {
    match policy {
        PolicyKind::DeferrableServer | PolicyKind::SprDeferrable => Some(ServerKind::Deferrable),
        PolicyKind::SporadicServer | PolicyKind::Spr => Some(ServerKind::Sporadic),
        PolicyKind::FixedPriority
        | PolicyKind::Edf
        | PolicyKind::Cbs
        | PolicyKind::HardCbs
        | PolicyKind::Vbs => None,
    }
}

fn kind_name(kind: ServerKind) -> &'static str {
    match kind {
        ServerKind::Sporadic => "sporadic",
        ServerKind::Deferrable => "deferrable",
    }
}

/// One core's servers, most important first (file order among equals), with their results.
struct CoreAnalysis {
    core: u16,
    work: WorkBound,
    servers: Vec<Server>,
    responses: Vec<Response>,
    overheads: Vec<Overhead>,
    /// What each admitted reservation's `R` says of its task's jobs, and their deadline.
    jobs: Vec<(JobBound, Option<Duration>)>,
}

impl CoreAnalysis {
    /// The bound on a job's response in the `index`th reservation: none if it is not
    /// admitted.
    fn job_response(&self, index: usize) -> Option<Duration> {
        let response = &self.responses[index];
        let reservation = self.servers[index].reservation;
        (response.admitted())
            .then(|| self.jobs[index].0.response(response.response, reservation))
            .flatten()
    }
}

/// What the scenario's terminations may mask each partitioned core for, in all: `Some(0)` on
/// a core none masks, `None` on one masked without bound.
pub(super) fn core_masks(scenario: &Scenario) -> impl Fn(u16) -> Option<Duration> {
    let masks = masks_by_place(&scenario_terminations(scenario));
    move |core| {
        (masks.iter())
            .find(|(place, _)| *place == Masked::Core(core))
            .map_or(Some(Duration::ZERO), |&(_, mask)| mask)
    }
}

fn analyse(scenario: &Scenario, kind: ServerKind) -> Vec<CoreAnalysis> {
    let masked_on = core_masks(scenario);
    let drains = CallDrains::of(scenario);
    (0..scenario.cores)
        .filter_map(|core| {
            let mut rows: Vec<(Server, (JobBound, Option<Duration>))> = scenario
                .tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| t.core == core)
                .filter_map(|(index, t)| {
                    let reservation = t.reservation?;
                    let server = Server::new(t.name.clone(), t.priority?, reservation, kind)
                        .with_deadline(given_deadline(t));
                    let drains = drains.of_task(scenario, index);
                    let jobs = job_bound(&t.behaviour, reservation, kind, &scenario.cost, &drains);
                    Some((server, (jobs, t.relative_deadline())))
                })
                .collect();
            if rows.is_empty() {
                return None;
            }
            rows.sort_by_key(|(s, _)| std::cmp::Reverse(s.priority));
            let (servers, jobs): (Vec<Server>, Vec<_>) = rows.into_iter().unzip();
            let work = work_per_invocation(scenario.policy, &servers)?;
            let responses = response_times_masked(&servers, masked_on(core));
            let overheads = servers
                .iter()
                .map(|s| overhead(s.reservation, &scenario.cost, work.units))
                .collect();
            Some(CoreAnalysis {
                core,
                work,
                servers,
                responses,
                overheads,
                jobs,
            })
        })
        .collect()
}

/// The task's deadline when it constrains admission: one shorter than the task's own period
/// (or inter-arrival time), which is the default; any deadline of a script.
fn given_deadline(task: &TaskSpec) -> Option<Duration> {
    let own = match &task.behaviour {
        Behaviour::Periodic { period, .. } => Some(*period),
        Behaviour::Sporadic {
            min_interarrival, ..
        } => Some(*min_interarrival),
        Behaviour::Script { .. } => None,
    };
    task.deadline.filter(|&d| own.is_none_or(|own| d < own))
}

fn all_admitted(cores: &[CoreAnalysis]) -> bool {
    cores
        .iter()
        .all(|c| c.responses.iter().all(Response::admitted))
}

/// EDF over CBS servers: per core, each server's bandwidth Q/T and the exact test
/// `sum Q/T <= 1` (Abeni and Buttazzo, Theorem 1). On a core that terminations may mask for
/// `M` in all, the servers are admitted when, as implicit-deadline tasks `(Q, T)`, they pass
/// the EDF demand test with that loss, `h(t) + M <= t` ([`edf::analyse_masked`]); a core
/// masked without bound admits nothing.
fn bandwidth_servers(scenario: &Scenario, json: bool) -> ExitCode {
    let masked_on = core_masks(scenario);
    let mut all_admitted = true;
    let mut text = format!(
        "{} ({}): admission by sum Q/T <= 1 per core (EDF over servers)\n",
        scenario.name,
        scenario.policy.name()
    );
    let mut cores_json = Vec::new();
    let drains = CallDrains::of(scenario);
    // Callers whose job bound counts what their calls drain: their waits are in it.
    let mut held: Vec<&str> = Vec::new();
    for core in 0..scenario.cores {
        // Each server, and what an admitted core gives its task: its jobs within P, or why
        // not.
        let (servers, jobs): (Vec<(&str, Duration, Duration)>, Vec<JobBound>) = scenario
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.core == core)
            .filter_map(|(index, t)| {
                let reservation = t.reservation?;
                let drains = drains.of_task(scenario, index);
                let jobs = cbs_job_bound(&t.behaviour, reservation, &scenario.cost, &drains);
                let server = (t.name.as_str(), reservation.budget, reservation.period);
                Some((server, jobs))
            })
            .unzip();
        if servers.is_empty() {
            continue;
        }
        let pairs: Vec<(Duration, Duration)> = servers.iter().map(|&(_, q, t)| (q, t)).collect();
        let verdict = bandwidth::admit(&pairs);
        let mask = masked_on(core);
        let mask_test = (mask != Some(Duration::ZERO)).then(|| MaskTest::of(&servers, mask));
        let admitted = verdict.admitted && mask_test.as_ref().is_none_or(MaskTest::admitted);
        all_admitted &= admitted;
        let job_response = |index: usize| match jobs[index] {
            JobBound::WithinR if admitted => Some(servers[index].2),
            _ => None,
        };
        let rows: Vec<Vec<String>> = servers
            .iter()
            .enumerate()
            .map(|(index, &(name, q, t))| {
                let u = Bandwidth::of(q, t).map_or(0.0, Bandwidth::as_f64);
                vec![
                    name.to_owned(),
                    q.to_string(),
                    t.to_string(),
                    format!("{u:.4}"),
                    job_response(index).map_or_else(|| "-".to_owned(), |d| d.to_string()),
                ]
            })
            .collect();
        let total = format!(
            "{}{}/{} = {:.6}",
            if verdict.exact { "" } else { "at most " },
            verdict.total.numerator,
            verdict.total.denominator,
            verdict.total.as_f64()
        );
        text.push_str(&format!("\ncore {core}:\n"));
        text.push_str(&table::render(
            &["server", "Q", "T", "Q/T", "job response"],
            &rows,
        ));
        text.push_str(&format!(
            "total bandwidth {total}: {}\n",
            if verdict.admitted {
                "admitted"
            } else {
                "NOT admitted"
            }
        ));
        if let Some(test) = &mask_test {
            text.push_str(&test.text());
        }
        if admitted {
            let names = servers.iter().map(|&(name, _, _)| name);
            text.push_str(&unbounded_job_notes(names.zip(&jobs)));
        }
        held.extend(
            (0..servers.len())
                .filter(|&index| job_response(index).is_some())
                .map(|index| servers[index].0),
        );
        let servers_json: Vec<Value> = servers
            .iter()
            .enumerate()
            .map(|(index, &(name, q, t))| {
                json!({
                    "name": name,
                    "budget_ns": q.as_nanos(),
                    "period_ns": t.as_nanos(),
                    "job_response_ns": nanos(job_response(index)),
                    "job_bound": if job_response(index).is_some() { "p" } else { "none" },
                })
            })
            .collect();
        cores_json.push(json!({
            "core": core,
            "servers": servers_json,
            "total_numerator": verdict.total.numerator.to_string(),
            "total_denominator": verdict.total.denominator.to_string(),
            "total": verdict.total.as_f64(),
            "exact": verdict.exact,
            "masked_ns": mask.map(Duration::as_nanos),
            "mask_test": mask_test.as_ref().map(MaskTest::to_json),
            "admitted": admitted,
        }));
    }
    if json {
        outln!(
            "{:#}",
            json!({
                "scenario": scenario.name,
                "policy": scenario.policy.name(),
                "admitted": all_admitted,
                "cores": cores_json,
                "costs_not_in_bounds": super::uncounted::kernel_costs(&scenario.cost),
                "gate_waits_not_in_bounds":
                    super::uncounted::gate_waits_besides(scenario, &held),
            })
        );
    } else {
        text.push_str(&super::uncounted::notes_besides(scenario, &held));
        text.push_str(&format!(
            "\nsummary: {}\n",
            if all_admitted {
                "every core admitted"
            } else {
                "NOT admitted on some core"
            }
        ));
        out!("{text}");
    }
    if all_admitted {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The EDF demand test of one core's CBS servers with the time its terminations may mask.
enum MaskTest {
    /// The mask is bounded: the test's result.
    Bounded(EdfAnalysis),
    /// Nothing bounds the mask.
    Unbounded,
}

impl MaskTest {
    /// The test of `servers` (name, Q, T) with `mask` (`None`: without bound).
    fn of(servers: &[(&str, Duration, Duration)], mask: Option<Duration>) -> MaskTest {
        let Some(mask) = mask else {
            return MaskTest::Unbounded;
        };
        let tasks: Vec<classic::Task> = servers
            .iter()
            .map(|&(name, q, t)| classic::Task::new(name, q.as_nanos(), t.as_nanos()))
            .collect();
        MaskTest::Bounded(edf::analyse_masked(&tasks, mask.as_nanos()))
    }

    fn admitted(&self) -> bool {
        matches!(self, MaskTest::Bounded(analysis) if analysis.schedulable())
    }

    /// One line under the core's total bandwidth.
    fn text(&self) -> String {
        let time = |nanos: u64| Duration::from_nanos(nanos).to_string();
        let analysis = match self {
            MaskTest::Unbounded => {
                return "with the terminations' mask, without bound: NOT admitted\n".into()
            }
            MaskTest::Bounded(analysis) => analysis,
        };
        let mask = time(analysis.masked);
        let why = match analysis.outcome {
            EdfOutcome::DemandMet { bound, .. } => format!(
                "h(t) + {mask} <= t at every server deadline up to {}: admitted",
                time(bound)
            ),
            EdfOutcome::DemandExceeds { deadline, demand } => format!(
                "h(t) + {mask} = {} + {mask} > t at t = {}: NOT admitted",
                time(demand),
                time(deadline)
            ),
            EdfOutcome::UtilisationAboveOne => "the bandwidth alone exceeds 1: NOT admitted".into(),
            EdfOutcome::EndlessBusyPeriod => "at total bandwidth 1 the busy period never ends, \
                 and the deadlines up to D_max + H are too many to check: NOT admitted"
                .into(),
            EdfOutcome::UtilisationAtMostOne => "bandwidth at most 1: admitted".into(),
        };
        format!("with the terminations' mask of at most {mask} (EDF demand, servers as (Q, T) tasks): {why}\n")
    }

    /// `{ "outcome", "bound_ns", "deadline_ns", "demand_ns" }`, the values that apply.
    fn to_json(&self) -> Value {
        let analysis = match self {
            MaskTest::Unbounded => return json!({ "outcome": "unbounded-mask" }),
            MaskTest::Bounded(analysis) => analysis,
        };
        match analysis.outcome {
            EdfOutcome::DemandMet { bound, .. } => {
                json!({ "outcome": "demand-met", "bound_ns": bound })
            }
            EdfOutcome::DemandExceeds { deadline, demand } => json!({
                "outcome": "demand-exceeds", "deadline_ns": deadline, "demand_ns": demand,
            }),
            EdfOutcome::UtilisationAboveOne => json!({ "outcome": "utilisation-above-one" }),
            EdfOutcome::EndlessBusyPeriod => json!({ "outcome": "no-verdict" }),
            EdfOutcome::UtilisationAtMostOne => json!({ "outcome": "utilisation-at-most-one" }),
        }
    }
}

/// The configuration analyzer (CAmkES paper, section 5): ceilings, pools, cycles; then, when
/// every body is given, the schedulability analysis (section 3.2). Exit 1 when a call loop is
/// certain or possible (a deadlock risk) or a task is not admitted, else 0; a cycle of
/// connections that the bodies show no request chain goes round is reported but not a
/// failure.
fn components(system: &ComponentSystem, args: &AnalyzeArgs) -> ExitCode {
    let analysis = component_graph::analyze(system);
    let schedulability =
        super::components::analyze_schedulability(system, &analysis, args.overheads);
    let rejected = schedulability.as_ref().is_ok_and(|s| !s.admitted());
    if args.json {
        let cpis: Vec<Value> = analysis
            .cpis
            .iter()
            .map(|c| {
                json!({
                    "component": c.component,
                    "interface": c.interface,
                    "protocol": format!("{:?}", c.protocol),
                    "tasks": c.tasks,
                    "minimum_priority": c.minimum.map(|p| p.0),
                    "ceiling": c.ceiling.map(|p| p.0),
                    "priority": c.priority.map(|p| p.0),
                    "concurrent_requests": c.concurrent,
                    "nest": c.nest,
                    "threads": c.threads,
                })
            })
            .collect();
        let warnings: Vec<String> = analysis.warnings.iter().map(|w| format!("{w:?}")).collect();
        let cycles: Vec<String> = analysis.cycles.iter().map(|c| format!("{c:?}")).collect();
        let schedulability = match &schedulability {
            Ok(s) => s.json(),
            Err(why) => json!({"not_analysed": why}),
        };
        outln!(
            "{:#}",
            json!({
                "cpis": cpis,
                "cycles": cycles,
                "warnings": warnings,
                "schedulability": schedulability,
            })
        );
    } else if args.camkes {
        out!("{}", component_graph::camkes_configuration(&analysis));
    } else {
        out!("{}", component_graph::render(&analysis));
        match &schedulability {
            Ok(s) => out!("{}", s.render()),
            Err(why) => outln!("\nschedulability: not analysed: {why}"),
        }
    }
    let loops = analysis
        .cycles
        .iter()
        .any(|c| c.kind != component_graph::CycleKind::ConnectionsOnly);
    if loops || rejected {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Every action step of a script, in order (loop bodies once).
fn actions(steps: &[Step], out: &mut Vec<(Duration, Duration, Duration)>) {
    for step in steps {
        match step {
            Step::Action {
                load,
                limit,
                period,
            } => out.push((*load, *limit, *period)),
            Step::Loop { body, .. } => actions(body, out),
            _ => {}
        }
    }
}

/// VBS: per core the caps' sum (Eq. 2, exact), and per action its response bound Eq. (1)
/// `ceil(l / lambda) pi + pi - 1` instants, and the late strategy's least response. On a core
/// that terminations may mask, each action's bound with the mask too
/// ([`VbsMaskedCore`]); a core masked without bound has none.
fn vbs_processes(scenario: &Scenario, json: bool) -> ExitCode {
    let Some(spec) = scenario.vbs.as_ref() else {
        eprintln!("error: a vbs scenario without its [vbs] table");
        return crate::exit::bad_input();
    };
    let masked_on = core_masks(scenario);
    let terminations = scenario_terminations(scenario);
    let q = spec.quantum.as_nanos().max(1);
    let instants = |d: Duration| d.as_nanos().div_ceil(q);
    let time = |n: u64| Duration::from_nanos(n.saturating_mul(q));
    let mut all_admitted = true;
    let mut text = format!(
        "{} (vbs, {:?} release, instants of {}): admission by sum of caps <= 1 (Eq. 2), \
         response bounds by Eq. (1)\n",
        scenario.name, spec.strategy, spec.quantum
    );
    let mut cores_json = Vec::new();
    for core in 0..scenario.cores {
        // The core's processes with their caps (every task of a vbs core has one).
        let members: Vec<(usize, (u64, u64))> = (0..scenario.tasks.len())
            .filter(|&i| scenario.tasks[i].core == core)
            .filter_map(|i| Some((i, spec.caps.get(i).copied().flatten()?)))
            .collect();
        if members.is_empty() {
            continue;
        }
        let caps: Vec<(Duration, Duration)> = members
            .iter()
            .map(|&(_, (n, d))| (Duration::from_nanos(n), Duration::from_nanos(d)))
            .collect();
        let verdict = bandwidth::admit(&caps);
        all_admitted &= verdict.admitted;
        let scripts: Vec<Vec<(Duration, Duration, Duration)>> = members
            .iter()
            .map(|&(i, _)| {
                let mut list = Vec::new();
                if let Behaviour::Script { steps, .. } = &scenario.tasks[i].behaviour {
                    actions(steps, &mut list);
                }
                list
            })
            .collect();
        let mask = masked_on(core);
        // `None`: no mask; `Some(None)`: a mask without bound.
        let masked = (mask != Some(Duration::ZERO)).then(|| {
            mask.map(|m| {
                let ratios: Vec<(u64, u64)> = members.iter().map(|&(_, cap)| cap).collect();
                let periods = scripts.iter().flatten().map(|&(_, _, pi)| instants(pi));
                let stretches = stretches_at(&terminations, Masked::Core(core));
                VbsMaskedCore::new(&ratios, periods, instants(m), stretches)
            })
        });
        let mut rows = Vec::new();
        let mut processes = Vec::new();
        for (&(i, (n, d)), list) in members.iter().zip(&scripts) {
            let task = &scenario.tasks[i];
            let mut actions_json = Vec::new();
            for (k, &(load, limit, period)) in list.iter().enumerate() {
                let bounds = VbsAction::new(instants(load), instants(limit), instants(period));
                let (bound, least) = bounds.map_or((None, None), |a| {
                    (Some(time(a.response_bound())), Some(time(a.late().lower)))
                });
                // With no mask the bound is Eq. (1)'s.
                let with_mask = match masked {
                    None => bound,
                    Some(None) => None,
                    Some(Some(core)) => {
                        bounds.map(|a| time(core.response_bound(&a, spec.strategy)))
                    }
                };
                let mut row = vec![
                    task.name.clone(),
                    format!("{n}/{d}"),
                    k.to_string(),
                    load.to_string(),
                    limit.to_string(),
                    period.to_string(),
                    or_unbounded(bound),
                    or_unbounded(least),
                ];
                if masked.is_some() {
                    row.push(or_unbounded(with_mask));
                }
                rows.push(row);
                actions_json.push(json!({
                    "load_ns": load.as_nanos(),
                    "limit_ns": limit.as_nanos(),
                    "period_ns": period.as_nanos(),
                    "response_bound_ns": nanos(bound),
                    "late_least_response_ns": nanos(least),
                    "masked_response_bound_ns": nanos(with_mask),
                }));
            }
            processes.push(json!({
                "name": task.name,
                "cap": format!("{n}/{d}"),
                "actions": actions_json,
            }));
        }
        let mut headers = vec![
            "process",
            "cap",
            "action",
            "load",
            "limit",
            "period",
            "bound Eq. (1)",
            "least (late)",
        ];
        if masked.is_some() {
            headers.push("bound with mask");
        }
        text.push_str(&format!("\ncore {core}:\n"));
        text.push_str(&table::render(&headers, &rows));
        text.push_str(&format!(
            "sum of caps {}/{} = {:.6}: {}\n",
            verdict.total.numerator,
            verdict.total.denominator,
            verdict.total.as_f64(),
            if verdict.admitted {
                "admitted"
            } else {
                "NOT admitted"
            }
        ));
        if let Some(masked) = masked {
            text.push_str(&vbs_mask_text(masked, mask, spec.strategy));
        }
        cores_json.push(json!({
            "core": core,
            "processes": processes,
            "caps_numerator": verdict.total.numerator.to_string(),
            "caps_denominator": verdict.total.denominator.to_string(),
            "admitted": verdict.admitted,
            "masked_ns": mask.map(Duration::as_nanos),
            "mask_within_slack": masked.flatten().map(|core| core.within_slack),
        }));
    }
    if json {
        outln!(
            "{:#}",
            json!({
                "scenario": scenario.name,
                "policy": "vbs",
                "admitted": all_admitted,
                "cores": cores_json,
                "costs_not_in_bounds": super::uncounted::kernel_costs(&scenario.cost),
                "gate_waits_not_in_bounds": super::uncounted::gate_waits(scenario),
            })
        );
    } else {
        text.push_str(&super::uncounted::notes(scenario));
        out!("{text}");
    }
    if all_admitted {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The line under a masked VBS core's table: what the "bound with mask" column adds.
fn vbs_mask_text(
    masked: Option<VbsMaskedCore>,
    mask: Option<Duration>,
    strategy: ReleaseStrategy,
) -> String {
    let (Some(core), Some(mask)) = (masked, mask) else {
        return "with the terminations' mask, without bound: no action has a bound\n".into();
    };
    let charge = match core.stretches {
        Some(n) => format!(
            "min({n}, ceil(M / lambda)) pi for the {n} masked stretch(es) charged to limits"
        ),
        None => "ceil(M / lambda) pi for the mask charged to limits".to_owned(),
    };
    let terms = if core.within_slack && strategy == ReleaseStrategy::Late {
        format!(
            "within the caps' slack of the shortest period, (1 - U) pi_min, so no period \
             instance is late: Eq. (1) + {charge}"
        )
    } else {
        format!(
            "Eq. (1) + {charge} + ceil(M / pi) pi for each period instance it may make late (at \
             most floor(M (2 - U) / ((1 - U) pi)) + 1 per stretch when U < 1)"
        )
    };
    format!(
        "with the terminations' mask of at most {mask} (M = {} instants): {terms}\n",
        core.masked
    )
}

fn verdict_text(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Admitted => "admitted",
        Verdict::ExceedsPeriod => "NOT admitted",
        Verdict::ExceedsDeadline => "NOT admitted (deadline)",
    }
}

fn verdict_key(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Admitted => "admitted",
        Verdict::ExceedsPeriod => "exceeds-period",
        Verdict::ExceedsDeadline => "exceeds-deadline",
    }
}

fn or_unbounded<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "unbounded".to_owned(), |v| v.to_string())
}

fn to_text(scenario: &Scenario, kind: ServerKind, cores: &[CoreAnalysis]) -> String {
    let mut out = format!(
        "{} ({}, {} servers): admission by SPR Eq. 1, overhead by Eq. 2\n",
        scenario.name,
        scenario.policy.name(),
        kind_name(kind)
    );
    let mut total = 0;
    let mut rejected: Vec<&str> = Vec::new();
    for c in cores {
        let work = match c.work.units {
            Some(w) => format!(
                "W = {w} work units per scheduler invocation ({})",
                c.work.reason
            ),
            None => format!("W unbounded ({})", c.work.reason),
        };
        out.push_str(&format!("\ncore {}: {work}\n", c.core));
        // The masked column only on a core that reclamations mask.
        let masked = c.responses.iter().any(|r| r.masked != Some(Duration::ZERO));
        let rows: Vec<Vec<String>> = c
            .servers
            .iter()
            .zip(&c.responses)
            .zip(&c.overheads)
            .enumerate()
            .map(|(index, ((s, r), o))| {
                let mut row = vec![
                    s.name.clone(),
                    s.priority.0.to_string(),
                    s.reservation.budget.to_string(),
                    s.reservation.period.to_string(),
                    s.reservation.non_preemptive.to_string(),
                    r.blocking.to_string(),
                ];
                if masked {
                    row.push(or_unbounded(r.masked));
                }
                row.extend([
                    r.response.to_string(),
                    verdict_text(r.verdict).to_owned(),
                    c.job_response(index)
                        .map_or_else(|| "-".to_owned(), |d| d.to_string()),
                    or_unbounded(preemptions_per_period(s.reservation)),
                    or_unbounded(o.preemption),
                    or_unbounded(o.lost_budget),
                    or_unbounded(o.cache_delay),
                ]);
                row
            })
            .collect();
        let mut header = vec!["reservation", "priority", "b", "p", "eta", "I"];
        if masked {
            header.push("masked");
        }
        header.extend([
            "R",
            "verdict",
            "job response",
            "preemptions/period",
            "O_pre",
            "L",
            "cache",
        ]);
        out.push_str(&table::render(&header, &rows));
        out.push_str(&job_notes(c));
        total += c.servers.len();
        rejected.extend(
            c.servers
                .iter()
                .zip(&c.responses)
                .filter(|(_, r)| !r.admitted())
                .map(|(s, _)| s.name.as_str()),
        );
    }
    out.push_str(&super::uncounted::gate_note(
        &super::uncounted::gate_waits_besides(scenario, &job_bounded(cores)),
    ));
    out.push('\n');
    let admitted = total - rejected.len();
    out.push_str(&match (rejected.is_empty(), total) {
        (true, 1) => "summary: the one reservation admitted\n".to_owned(),
        (true, _) => format!("summary: all {total} reservations admitted\n"),
        (false, 1) => format!(
            "summary: 0 of 1 reservation admitted; NOT admitted: {}\n",
            rejected[0]
        ),
        (false, _) => format!(
            "summary: {admitted} of {total} reservations admitted; NOT admitted: {}\n",
            rejected.join(", ")
        ),
    });
    out
}

/// Why an admitted reservation's job response is not its `R`: releases off a deferrable
/// reservation's grid, or jobs that need more than it gives.
fn job_notes(core: &CoreAnalysis) -> String {
    let mut out = String::new();
    for (index, (server, (jobs, deadline))) in core.servers.iter().zip(&core.jobs).enumerate() {
        if !core.responses[index].admitted() {
            continue;
        }
        if *jobs != JobBound::OffGrid {
            continue;
        }
        out.push_str(&format!(
            "  {}: its releases are off the multiples of p = {} at which its deferrable budget \
             is reset, so a job may wait up to p for the next reset: R + p",
            server.name, server.reservation.period
        ));
        let response = core.job_response(index);
        if let Some((response, deadline)) = response.zip(*deadline) {
            if response > deadline {
                out.push_str(&format!(
                    " = {response} > its deadline {deadline}: a job may miss it though the \
                     reservation is admitted"
                ));
            }
        }
        out.push('\n');
    }
    let admitted = (core.servers.iter().enumerate())
        .filter(|(index, _)| core.responses[*index].admitted())
        .map(|(index, server)| (server.name.as_str(), &core.jobs[index].0));
    out.push_str(&unbounded_job_notes(admitted));
    out
}

/// The reasons the tasks of admitted reservations have no job bound, one line per reason
/// with the tasks it holds for (a herd of attackers shares one).
fn unbounded_job_notes<'a>(jobs: impl Iterator<Item = (&'a str, &'a JobBound)>) -> String {
    let mut reasons: Vec<(&String, Vec<&str>)> = Vec::new();
    for (name, jobs) in jobs {
        if let JobBound::Unbounded(why) = jobs {
            match reasons.iter_mut().find(|(reason, _)| *reason == why) {
                Some((_, names)) => names.push(name),
                None => reasons.push((why, vec![name])),
            }
        }
    }
    reasons
        .iter()
        .map(|(why, names)| format!("  {}: job response {why}\n", names.join(", ")))
        .collect()
}

fn nanos(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_nanos()))
}

fn to_json(scenario: &Scenario, kind: ServerKind, cores: &[CoreAnalysis]) -> Value {
    let admitted = all_admitted(cores);
    let waits = super::uncounted::gate_waits_besides(scenario, &job_bounded(cores));
    let cores: Vec<Value> = cores
        .iter()
        .map(|c| {
            let reservations: Vec<Value> = c
                .servers
                .iter()
                .zip(&c.responses)
                .zip(&c.overheads)
                .enumerate()
                .map(|(index, ((s, r), o))| {
                    json!({
                        "name": s.name,
                        "priority": s.priority.0,
                        "budget_ns": s.reservation.budget.as_nanos(),
                        "period_ns": s.reservation.period.as_nanos(),
                        "non_preemptive_ns": s.reservation.non_preemptive.as_nanos(),
                        "blocking_ns": r.blocking.as_nanos(),
                        "masked_ns": nanos(r.masked),
                        "response_ns": r.response.as_nanos(),
                        "admitted": r.admitted(),
                        "verdict": verdict_key(r.verdict),
                        "job_response_ns": nanos(c.job_response(index)),
                        "job_bound": match (&c.jobs[index].0, c.job_response(index)) {
                            (_, None) | (JobBound::Unbounded(_), _) => "none",
                            (JobBound::WithinR, Some(_)) => "r",
                            (JobBound::OffGrid, Some(_)) => "r-plus-p",
                        },
                        "preemptions_per_period": preemptions_per_period(s.reservation),
                        "preemption_overhead_ns": nanos(o.preemption),
                        "lost_budget_ns": nanos(o.lost_budget),
                        "cache_delay_ns": nanos(o.cache_delay),
                    })
                })
                .collect();
            json!({
                "core": c.core,
                "work_units": c.work.units,
                "work_reason": c.work.reason,
                "reservations": reservations,
            })
        })
        .collect();
    json!({
        "scenario": scenario.name,
        "policy": scenario.policy.name(),
        "server_kind": kind_name(kind),
        "admitted": admitted,
        "cores": cores,
        "gate_waits_not_in_bounds": waits,
    })
}

/// The tasks of admitted reservations with a job bound: their calls' drains are in it.
fn job_bounded(cores: &[CoreAnalysis]) -> Vec<&str> {
    cores
        .iter()
        .flat_map(|core| {
            (0..core.servers.len())
                .filter(|&index| core.job_response(index).is_some())
                .map(|index| core.servers[index].name.as_str())
        })
        .collect()
}

mod appendix;
mod clusters;
mod gates;
mod terminations;
