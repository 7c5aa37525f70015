//! Component systems on the command line: reading them, their schedulability (`analyze`) and
//! running them on the machine (`simulate`).

use std::process::ExitCode;

use bulwark_analysis::blocking::{
    hyperbolic, hyperbolic_non_unique, liu_layland, response_times, Analysis, BlockingRule,
    Inapplicable, Response, TaskTiming, Verdict,
};
use bulwark_analysis::component_graph::CycleKind;
use bulwark_analysis::component_graph::{self, ComponentAnalysis};
use bulwark_core::{Duration, Instant};
use bulwark_lab::component_system::{
    lower, reservation_terms, schedulability, with_regions, LowerError, Lowered, ReservationTerms,
};
use bulwark_sim::components::{run, ComponentOutcome, ProtocolCosts, RunOptions};
use bulwark_spec::component::{ComponentSystem, Connection, CpiId, LocatedSystem};
use bulwark_spec::{CostModel, FileKind, SpecError, SystemFile};
use serde_json::{json, Value};

use crate::cli::{ProtocolOverheads, RunArgs, SimulateArgs};
use crate::output::{out, outln};
use crate::table;

/// The configuration analyzer's call loops (CAmkES paper, section 4.1), located at the
/// connection that closes each loop: certain loops (a deadlock) as errors, loops that depend
/// on procedures without bodies as warnings. A cycle of connections that the bodies show no
/// request chain goes round is neither.
pub fn call_loops(located: &LocatedSystem) -> (Vec<SpecError>, Vec<SpecError>) {
    let system = &located.system;
    let analysis = component_graph::analyze(system);
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for cycle in &analysis.cycles {
        let help = match cycle.kind {
            CycleKind::ConnectionsOnly => continue,
            CycleKind::CallLoop => {
                "allowed: connections whose request chains never come back to a CPI they are in; \
                 remove a connection or a request on the loop"
            }
            CycleKind::PossibleCallLoop => {
                "give the CPIs on the loop bodies (<cpi>_body) to decide, or remove a connection"
            }
        };
        let connection = closing_connection(system, cycle.cpis.first(), cycle.cpis.last());
        let mut path = cycle.cpis.clone();
        path.extend(cycle.cpis.first().cloned());
        let (path, components) = (path.join(" -> "), cycle.components.join(", "));
        let message = if cycle.kind == CycleKind::CallLoop {
            format!(
                "call loop {path} (components {components}): a request chain can come back to \
                 a CPI it is already in and wait for itself (deadlock)"
            )
        } else {
            format!(
                "possible call loop {path} (components {components}): if the procedures \
                 without bodies send these requests, a request chain comes back to a CPI it \
                 is already in (deadlock)"
            )
        };
        let error = located.connection_error(connection, message, help);
        match cycle.kind {
            CycleKind::CallLoop => errors.push(error),
            _ => warnings.push(error),
        }
    }
    (errors, warnings)
}

/// Why `located`'s system cannot be lowered, printed: a task or requested CPI without a body
/// at its component's declaration, as every other error in a file; a call loop (which
/// [`call_loops`] reports at a connection first) at the file.
pub fn report_lowering(file: &std::path::Path, located: &LocatedSystem, error: &LowerError) {
    let Some(component) = error.component() else {
        eprintln!("error: {}: {error}", file.display());
        return;
    };
    let message = format!("the component system cannot run: {error}");
    let help = "allowed: a body for every task, and for every CPI a task's requests reach";
    let diagnostic = located.component_error(component, message, help);
    eprint!(
        "{}",
        crate::diagnostics::render(&located.diagnostics(vec![diagnostic]))
    );
}

/// The connection from the component of the loop's last CPI to its first (the last CPI
/// requests the first); else any connection to the first CPI; else the first connection.
fn closing_connection(
    system: &ComponentSystem,
    first: Option<&String>,
    last: Option<&String>,
) -> usize {
    let cpi_name = |id: CpiId| {
        system.components.get(id.component).map(|c| {
            let cpi = c.cpis().get(id.cpi).map_or("", |cpi| cpi.name.as_str());
            format!("{}.{cpi}", c.name)
        })
    };
    let from_component = last.and_then(|l| l.split_once('.')).map(|(c, _)| c);
    let to_first = |c: &&Connection| cpi_name(c.to).as_ref() == first;
    let connections = &system.connections;
    connections
        .iter()
        .position(|c| {
            to_first(&c) && system.components.get(c.from).map(|f| f.name.as_str()) == from_component
        })
        .or_else(|| connections.iter().position(|c| to_first(&c)))
        .unwrap_or(0)
}

/// The protocol costs of `system`: the cost table `--overheads` names, else its file's.
pub fn costs(overheads: Option<ProtocolOverheads>, system: &ComponentSystem) -> ProtocolCosts {
    let table = match overheads {
        None => system.cost,
        Some(ProtocolOverheads::None) => CostModel::FREE,
        Some(ProtocolOverheads::Xeon) => CostModel::XEON_GOLD_6130_MAX,
    };
    ProtocolCosts::of(&table)
}

/// `--overheads` prices component IPC: on any other file it would be ignored, so it is
/// refused.
pub fn refuse_overheads(
    file: &std::path::Path,
    overheads: Option<ProtocolOverheads>,
    system: &SystemFile,
) -> Result<(), String> {
    refuse_component_flag(
        file,
        overheads.is_some(),
        "--overheads prices the IPC of a component system",
        system,
    )
}

/// A flag that only a component system's file reads (`doing` says what it does), given for
/// another kind of file: refused rather than ignored.
pub fn refuse_component_flag(
    file: &std::path::Path,
    given: bool,
    doing: &str,
    system: &SystemFile,
) -> Result<(), String> {
    if !given || system.kind() == FileKind::Components {
        return Ok(());
    }
    Err(format!(
        "{}: {doing}, and this file is {}; leave it out",
        file.display(),
        system.kind().describe()
    ))
}

/// The schedulability of a lowered system: WCETs, blocking, response times, bounds.
pub struct Schedulability {
    analysis: Analysis,
    responses: Vec<Response>,
    names: Vec<String>,
    bounds: [(&'static str, Verdict); 3],
    /// What SPR reservations add, when a task has one: the response times and bounds above
    /// then count each task's `I_i` in its blocking.
    terms: Option<ReservationTerms>,
    /// The costs of the cost table in use that the machine charges and the bounds leave out
    /// ([`super::uncounted::context_switch`]).
    uncounted: Vec<&'static str>,
}

impl Schedulability {
    /// Of `lowered`, the lowering of `system`; `None` if its requests loop.
    pub fn of(lowered: &Lowered, system: &ComponentSystem) -> Option<Schedulability> {
        let analysis = schedulability(lowered)?;
        let terms = reservation_terms(system);
        let timings = match &terms {
            Some(terms) => terms.with_regions(&analysis.timings()),
            None => analysis.timings(),
        };
        Some(Schedulability {
            uncounted: super::uncounted::context_switch(
                !lowered.machine.costs.context_switch.is_zero(),
            ),
            terms,
            responses: response_times(&timings),
            names: lowered
                .system
                .tasks
                .iter()
                .map(|t| t.name.clone())
                .collect(),
            bounds: [
                (
                    "hyperbolic with blocking (Eq. 2)",
                    hyperbolic(&timings).verdict,
                ),
                (
                    "hyperbolic, non-unique priorities (Eq. 4)",
                    hyperbolic_non_unique(&timings).verdict,
                ),
                (
                    "Liu-Layland with blocking (Eq. 3)",
                    liu_layland(&timings).verdict,
                ),
            ],
            analysis,
        })
    }

    /// True when exact response-time analysis admits every task and, with reservations,
    /// every budget covers its job (`C_i <= b_i`) and SPR Eq. 1 admits the reservations.
    pub fn admitted(&self) -> bool {
        self.responses.iter().all(|r| r.verdict.admitted())
            && self.terms.as_ref().is_none_or(|terms| {
                self.budgets_cover(terms)
                    && terms
                        .eq1
                        .as_ref()
                        .is_none_or(|eq1| eq1.iter().all(|r| r.admitted()))
            })
    }

    fn budgets_cover(&self, terms: &ReservationTerms) -> bool {
        self.analysis
            .tasks
            .iter()
            .zip(&terms.reservations)
            .all(|(t, r)| r.is_none_or(|r| t.timing.execution <= r.budget))
    }

    /// The tables.
    pub fn render(&self) -> String {
        let rows: Vec<Vec<String>> = self
            .analysis
            .tasks
            .iter()
            .zip(&self.responses)
            .zip(&self.names)
            .enumerate()
            .map(|(i, ((t, r), name))| {
                let mut row = vec![
                    name.clone(),
                    t.timing.priority.0.to_string(),
                    t.timing.period.to_string(),
                    t.timing.execution.to_string(),
                    t.timing.blocking.to_string(),
                ];
                if let Some(terms) = &self.terms {
                    row.push(terms.regions[i].to_string());
                }
                row.extend([
                    rule(t.rule).to_string(),
                    response(r),
                    verdict(r.verdict).to_string(),
                ]);
                row
            })
            .collect();
        let mut out = String::from("\nschedulability (CAmkES paper, section 3.2):\n");
        let header: &[&str] = if self.terms.is_some() {
            &[
                "task", "prio", "T", "C", "B", "I", "blocking", "R (RTA)", "verdict",
            ]
        } else {
            &[
                "task", "prio", "T", "C", "B", "blocking", "R (RTA)", "verdict",
            ]
        };
        out.push_str(&table::render(header, &rows));
        for (name, v) in &self.bounds {
            out.push_str(&format!("{name}: {}\n", verdict(*v)));
        }
        if let Some(terms) = &self.terms {
            out.push_str(&self.render_reservations(terms));
        }
        for cost in &self.uncounted {
            out.push_str(&format!(
                "note: the bounds leave out the `{cost}` cost, which the simulator charges at \
                 every switch between threads: the response times and verdicts above do not \
                 include it\n"
            ));
        }
        out
    }

    /// The reservations' table: budget against the job's demand, and SPR Eq. 1.
    fn render_reservations(&self, terms: &ReservationTerms) -> String {
        let rows: Vec<Vec<String>> = self
            .names
            .iter()
            .zip(&self.analysis.tasks)
            .zip(&terms.reservations)
            .enumerate()
            .map(|(i, ((name, t), r))| match r {
                None => vec![name.clone(), "-".into(), "-".into(), "-".into(), "-".into()],
                Some(r) => {
                    let eq1 = terms.eq1.as_ref().and_then(|eq1| eq1.get(i));
                    vec![
                        name.clone(),
                        r.budget.to_string(),
                        r.non_preemptive.to_string(),
                        if t.timing.execution <= r.budget {
                            "yes"
                        } else {
                            "no"
                        }
                        .into(),
                        eq1.map_or("-".into(), |e| {
                            format!(
                                "{} ({})",
                                e.response,
                                if e.admitted() {
                                    "admitted"
                                } else {
                                    "not admitted"
                                }
                            )
                        }),
                    ]
                }
            })
            .collect();
        let mut out = String::from(
            "\nreservations (SPR paper: budget every period, eta; I above is Eq. 1's blocking \
             term, the longest eta of a lower priority, counted in the response times):\n",
        );
        out.push_str(&table::render(
            &["task", "budget", "eta", "C <= budget", "Eq. 1 R"],
            &rows,
        ));
        if terms.eq1.is_none() {
            out.push_str("Eq. 1: not applied (it needs every task in a reservation)\n");
        }
        out
    }

    /// The same as JSON (integer nanoseconds).
    pub fn json(&self) -> Value {
        let tasks: Vec<Value> = self
            .analysis
            .tasks
            .iter()
            .zip(&self.responses)
            .zip(&self.names)
            .enumerate()
            .map(|(i, ((t, r), name))| {
                let terms = self.terms.as_ref();
                let reservation = terms.and_then(|terms| terms.reservations[i]).map(|res| {
                    let eq1 = terms.and_then(|terms| terms.eq1.as_ref()?.get(i).copied());
                    json!({
                        "budget_ns": res.budget.as_nanos(),
                        "period_ns": res.period.as_nanos(),
                        "non_preemptive_ns": res.non_preemptive.as_nanos(),
                        "eq1_response_ns": eq1.map(|e| e.response.as_nanos()),
                        "eq1_admitted": eq1.map(|e| e.admitted()),
                    })
                });
                json!({
                    "reservation": reservation,
                    "regions_ns": terms.map(|terms| terms.regions[i].as_nanos()),
                    "task": name,
                    "priority": t.timing.priority.0,
                    "period_ns": t.timing.period.as_nanos(),
                    "execution_ns": t.timing.execution.as_nanos(),
                    "blocking_ns": t.timing.blocking.as_nanos(),
                    "blocking_rule": rule(t.rule),
                    "response_ns": r.verdict.admitted().then(|| r.response.as_nanos()),
                    "admitted": r.verdict.admitted(),
                })
            })
            .collect();
        let bounds: Vec<Value> = self
            .bounds
            .iter()
            .map(|(name, v)| json!({"bound": name, "verdict": verdict(*v)}))
            .collect();
        json!({
            "tasks": tasks,
            "bounds": bounds,
            "admitted": self.admitted(),
            "costs_not_in_bounds": self.uncounted,
        })
    }
}

fn rule(rule: BlockingRule) -> &'static str {
    match rule {
        BlockingRule::None => "none",
        BlockingRule::Ceiling => "one section (Eq. 5/6)",
        BlockingRule::Inheritance => "PIP, one per lower task",
    }
}

fn response(r: &Response) -> String {
    if r.verdict.admitted() {
        r.response.to_string()
    } else if r.response == Duration::MAX {
        "unbounded".into()
    } else {
        format!("> {}", r.response)
    }
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Admitted => "admitted",
        Verdict::Rejected => "not admitted",
        Verdict::NotApplicable(Inapplicable::SharedPriority) => {
            "does not apply (shared priorities)"
        }
        Verdict::NotApplicable(Inapplicable::NotRateMonotonic) => {
            "does not apply (priorities not rate-monotonic)"
        }
        Verdict::NotApplicable(Inapplicable::ZeroPeriod) => "does not apply (zero period)",
    }
}

/// The schedulability part of `bulwark analyze` on a component system: the lowered system's
/// report, or why it cannot be lowered.
pub fn analyze_schedulability(
    system: &ComponentSystem,
    analysis: &ComponentAnalysis,
    overheads: Option<ProtocolOverheads>,
) -> Result<Schedulability, String> {
    let lowered = lower(system, analysis, costs(overheads, system)).map_err(|e| e.to_string())?;
    Schedulability::of(&lowered, system).ok_or_else(|| "request chains loop".to_string())
}

/// A component system's run keeps its trace to the end, and --json keeps each job as a JSON
/// value. Over `scenarios/components/fig7.camkes --until 200s` (37,504 jobs, 5,988 kB peak
/// RSS without either), --json took 60,212 kB more, 1,644 bytes a job, and --trace 52,512
/// kB more, 1,434 bytes a job.
const COMPONENT_KEEPING: super::simulate::Keeping = super::simulate::Keeping {
    job_bytes: 1_644,
    trace_bytes: 1_434,
    streams: false,
};

/// `bulwark simulate` on a component system.
pub fn simulate(located: &LocatedSystem, args: &SimulateArgs) -> Result<ExitCode, String> {
    let system = &located.system;
    let analysis = component_graph::analyze(system);
    let lowered = match lower(system, &analysis, costs(args.overheads, system)) {
        Ok(l) => l,
        Err(error) => {
            report_lowering(&args.file, located, &error);
            return Ok(crate::exit::bad_input());
        }
    };
    // Default: ten times the longest period (ten hyperperiods for harmonic periods).
    let until = args
        .until
        .unwrap_or(lowered.machine.longest_period().saturating_mul(10));
    let options = RunOptions {
        until: Instant::ZERO.saturating_add(until),
        record_jobs: args.json,
        record_trace: args.trace.is_some() || args.svg.is_some(),
    };
    // The same warnings and refusal as a scenario's run, from the jobs of the scenario the
    // system lowers to; a component system has no `duration` to point at.
    let scenario = bulwark_sim::components::scenario(&lowered.machine, until);
    let location = args.file.display().to_string();
    let size = super::simulate::check_size(
        args,
        &scenario,
        &options.machine_options(),
        &location,
        COMPONENT_KEEPING,
    );
    if let Some(stop) = size {
        return stop;
    }
    let outcome =
        run(&lowered.machine, options).map_err(|e| format!("{}: {e}", args.file.display()))?;
    let bounds = Bounds::of(&lowered, system);
    write_exports(args, &lowered, &outcome)?;
    if args.json {
        outln!("{:#}", outcome_json(&lowered, &outcome, &bounds));
    } else {
        out!(
            "{}",
            summary(&lowered, &outcome, &bounds, &format!("{until} simulated"))
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `--trace` and `--svg`: one row per task on core 0, a server thread's time drawn on the
/// row of the task whose job it serves.
fn write_exports(
    args: &SimulateArgs,
    lowered: &Lowered,
    outcome: &ComponentOutcome,
) -> Result<(), String> {
    write_recorded(
        &args.file,
        args.trace.as_deref(),
        args.svg.as_deref(),
        lowered,
        outcome,
    )
}

fn write_recorded(
    file: &std::path::Path,
    trace_path: Option<&std::path::Path>,
    svg_path: Option<&std::path::Path>,
    lowered: &Lowered,
    outcome: &ComponentOutcome,
) -> Result<(), String> {
    let Some(trace) = outcome.trace.clone() else {
        return Ok(());
    };
    super::exports::write_to(
        file,
        trace_path,
        svg_path,
        super::exports::Recorded {
            policy: "fixed-priority (component IPC)".into(),
            seed: 0,
            until: outcome.until,
            tasks: lowered
                .machine
                .tasks
                .iter()
                .map(|task| (task.name.clone(), 0))
                .collect(),
            cores: 1,
            trace,
        },
    )
}

/// `bulwark run` on a component system: its threads real on the managed core, the component
/// kernel the dispatcher, with zero protocol costs in the model (the dispatcher's real time
/// is the cost); `--compare` also simulates it with zero costs.
pub fn run_on_host(located: &LocatedSystem, args: &RunArgs) -> Result<ExitCode, String> {
    // A call loop deadlocks the kernel: say where, before any thread starts.
    let (errors, _) = call_loops(located);
    if !errors.is_empty() {
        eprint!(
            "{}",
            crate::diagnostics::render(&located.diagnostics(errors))
        );
        return Ok(crate::exit::bad_input());
    }
    let system = &located.system;
    if args.seed.is_some() {
        return Err(format!(
            "{}: --seed does not apply to a component system (nothing in it is drawn); \
             leave it out",
            args.file.display()
        ));
    }
    let analysis = component_graph::analyze(system);
    let lowered = match lower(system, &analysis, ProtocolCosts::ZERO) {
        Ok(lowered) => lowered,
        Err(error) => {
            report_lowering(&args.file, located, &error);
            return Ok(crate::exit::bad_input());
        }
    };
    let until = args
        .until
        .unwrap_or(lowered.machine.longest_period().saturating_mul(10));
    let config = bulwark_host::HostConfig {
        core: args.core,
        watchdog_core: args.watchdog_core,
        until: Some(until),
        record_trace: args.trace.is_some(),
        record_jobs: args.json,
        ..bulwark_host::HostConfig::default()
    };
    super::exports::check_writable(args.trace.as_deref())?;
    let host = bulwark_host::run_components(&lowered.machine, &config)
        .map_err(|e| format!("{}: {e}", args.file.display()))?;
    let simulated = if args.compare {
        let options = RunOptions {
            until: Instant::ZERO.saturating_add(until),
            record_jobs: args.json,
            record_trace: false,
        };
        Some(run(&lowered.machine, options).map_err(|e| format!("{}: {e}", args.file.display()))?)
    } else {
        None
    };
    let bounds = Bounds::of(&lowered, system);
    write_recorded(
        &args.file,
        args.trace.as_deref(),
        None,
        &lowered,
        &host.outcome,
    )?;
    if args.json {
        let mut root = outcome_json(&lowered, &host.outcome, &bounds);
        let h = &host.host;
        let stats = super::run::stats;
        if let Some(map) = root.as_object_mut() {
            map.insert(
                "host".to_owned(),
                json!({
                    "core": h.core,
                    "entries": h.entries,
                    "entry_cost": stats(&host.entry_cost),
                    "timer_lateness": stats(&h.timer_lateness),
                    "late_timers": h.late_timers,
                    "preempt_signals": h.preempt_signals,
                    "rt_runtime_us": h.rt_runtime_us,
                    "rt_period_us": h.rt_period_us,
                    "throttling_suspected": h.throttling_suspected,
                }),
            );
            if let Some(sim) = &simulated {
                map.insert("simulated".to_owned(), outcome_json(&lowered, sim, &bounds));
            }
        }
        outln!("{root:#}");
    } else {
        let ran = format!("{until} on core {} of this machine", host.host.core);
        out!("{}", summary(&lowered, &host.outcome, &bounds, &ran));
        let cost = &host.entry_cost;
        outln!(
            "host: core {}, {} dispatcher entries ({} each on average, at most {}), {} \
             preemption signals, {} late timers",
            host.host.core,
            host.host.entries,
            Duration::from_nanos(cost.mean_ns().unwrap_or(0)),
            Duration::from_nanos(cost.max_ns),
            host.host.preempt_signals,
            host.host.late_timers
        );
        if host.host.throttling_suspected {
            outln!(
                "warning: {} timer wake-ups came more than 1 ms late: the machine was busy or \
                 real-time throttling stopped the core; this run's figures are not meaningful",
                host.host.late_timers
            );
        }
        if let Some(sim) = &simulated {
            out!("\n{}", compare(&lowered, &host.outcome, sim));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Host and simulator side by side, per task.
fn compare(lowered: &Lowered, host: &ComponentOutcome, sim: &ComponentOutcome) -> String {
    let pair = |a: String, b: String| format!("{a} / {b}");
    let rows: Vec<Vec<String>> = lowered
        .machine
        .tasks
        .iter()
        .zip(host.tasks.iter().zip(&sim.tasks))
        .map(|(t, (h, s))| {
            vec![
                t.name.clone(),
                pair(h.jobs.to_string(), s.jobs.to_string()),
                pair(h.misses.to_string(), s.misses.to_string()),
                pair(h.max_response.to_string(), s.max_response.to_string()),
                pair(h.max_inversion.to_string(), s.max_inversion.to_string()),
                pair(
                    h.budget_exhaustions.to_string(),
                    s.budget_exhaustions.to_string(),
                ),
            ]
        })
        .collect();
    let mut out = "host / simulator (zero protocol costs):\n".to_owned();
    out.push_str(&table::render(
        &[
            "task",
            "jobs",
            "misses",
            "max response",
            "max inversion",
            "exhaustions",
        ],
        &rows,
    ));
    out
}

/// What the analysis bounds for each task, beside a run's measures: its blocking term
/// `B_i` (`blocking_ns`), and the bound on its priority inversion, `B_i` plus SPR's `I_i`
/// in a reservation (`inversion_bound_ns`, the table's "bound"); empty when the system is
/// not analysable (a call loop).
struct Bounds {
    blocking: Vec<Duration>,
    inversion: Vec<Duration>,
}

impl Bounds {
    /// The blocking analysis's terms, and with each reservation's `I_i` added
    /// ([`with_regions`], as `simulate` of a scenario's components reports them); the
    /// analysis runs once for both.
    fn of(lowered: &Lowered, system: &ComponentSystem) -> Bounds {
        let Some(timings) = schedulability(lowered).map(|a| a.timings()) else {
            return Bounds {
                blocking: Vec::new(),
                inversion: Vec::new(),
            };
        };
        let blocking = |timings: &[TaskTiming]| timings.iter().map(|t| t.blocking).collect();
        Bounds {
            blocking: blocking(&timings),
            inversion: blocking(&with_regions(system, timings)),
        }
    }
}

fn summary(lowered: &Lowered, outcome: &ComponentOutcome, bounds: &Bounds, ran: &str) -> String {
    let rows: Vec<Vec<String>> = lowered
        .machine
        .tasks
        .iter()
        .zip(&outcome.tasks)
        .enumerate()
        .map(|(i, (t, o))| {
            vec![
                t.name.clone(),
                t.priority.0.to_string(),
                o.jobs.to_string(),
                o.misses.to_string(),
                o.max_response.to_string(),
                o.max_inversion.to_string(),
                bounds
                    .inversion
                    .get(i)
                    .map_or("-".into(), |b| b.to_string()),
            ]
        })
        .collect();
    let mut out = format!(
        "machine: {} tasks, {} CPIs, {ran}, core busy {}, {} context switches\n",
        lowered.machine.tasks.len(),
        lowered.machine.cpis.len(),
        outcome.busy,
        outcome.context_switches,
    );
    out.push_str(&table::render(
        &[
            "task",
            "prio",
            "jobs",
            "misses",
            "max response",
            "max inversion",
            "bound (B + I)",
        ],
        &rows,
    ));
    if outcome.pool_exhausted > 0 {
        out.push_str(&format!(
            "warning: {} requests found no free pool thread and queued on the endpoint; \
             the pools are smaller than the analyzer's sizes\n",
            outcome.pool_exhausted
        ));
    }
    out
}

fn outcome_json(lowered: &Lowered, outcome: &ComponentOutcome, bounds: &Bounds) -> Value {
    let tasks: Vec<Value> = lowered
        .machine
        .tasks
        .iter()
        .zip(&outcome.tasks)
        .enumerate()
        .map(|(i, (t, o))| {
            let jobs: Vec<Value> = o
                .job_records
                .iter()
                .map(|j| {
                    json!({
                        "release_ns": j.release.as_nanos(),
                        "completion_ns": j.completion.map(|c| c.as_nanos()),
                        "inversion_ns": j.inversion.as_nanos(),
                        "lower_jobs": j.lower_jobs,
                    })
                })
                .collect();
            json!({
                "task": t.name,
                "priority": t.priority.0,
                "jobs": o.jobs,
                "misses": o.misses,
                "max_response_ns": o.max_response.as_nanos(),
                "max_inversion_ns": o.max_inversion.as_nanos(),
                "blocking_ns": bounds.blocking.get(i).map(|b| b.as_nanos()),
                "inversion_bound_ns": bounds.inversion.get(i).map(|b| b.as_nanos()),
                "job_records": jobs,
            })
        })
        .collect();
    json!({
        "until_ns": outcome.until.as_nanos(),
        "busy_ns": outcome.busy.as_nanos(),
        "context_switches": outcome.context_switches,
        "pool_exhausted": outcome.pool_exhausted,
        "tasks": tasks,
    })
}
