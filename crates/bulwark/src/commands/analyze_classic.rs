//! `bulwark analyze` for plain task sets (`policy = "fixed-priority"` and `"edf"`): exact
//! response-time analysis and the exact EDF demand test, per core, each verdict with why.
//!
//! Exit codes: 0 every core schedulable, 1 some task or core not schedulable, 2 nothing
//! refuted but some task cannot be analysed (a script has no fixed execution time).
//!
//! A core that terminations may mask for `M` in all (a reclamation with interrupts masked)
//! counts it: under fixed priority as blocking added to every analysed task's `B` (time no
//! task of the core runs, once in any busy window, since `M` is the total over the run), under
//! EDF in the demand test, `h(t) + M <= t` ([`edf::analyse_masked`]).
//!
//! A script has no period, but when its work over the whole run is bounded and known
//! ([`script_work`]: no server call or endless loop with work), that total `W` can
//! delay any job by at most `W`, as a mask does. Under fixed priority a task is analysed when
//! every script of its priority or above has such a `W`, their sum added to its `B`; a script
//! below it delays it only by the masks it causes (and kernel costs, left out as everywhere).
//! Under EDF each script is its work `W_s` due at its deadline `D_s` wherever its release
//! falls, in the demand of every window at least `D_s` long, `h(t) + sum_{D_s <= t} W_s + M
//! <= t` ([`edf::analyse_with_one_shots`]; at `U = 1`, which leaves no slack, their work joins
//! `M` in every window instead): a script's jobs are released in order, each no earlier than
//! the one before (a sleep releases the next at its wake-up or, when that has passed, at
//! once; `sleep-until-next-release` a period after the last plan), and run one after the
//! other, which is what that test needs. The scripts are then analysed as well. This is
//! sufficient only: a task or core that fails with `W > 0` gets no verdict, not a refutation.
//!
//! A script that is one endless loop of a job's work and one sleep is a sporadic task
//! ([`script_task`]: `T` from the sleep, `C` the job's most work, `J` for a first release off
//! the grid of `sleep-until-aligned`) and is analysed as one, under either policy; without a
//! deadline it misses none (`D` unbounded), but its response is still computed. Only
//! `sleep-until-next-release` gives a periodic task's releases; a failure that another kind
//! takes part in is not shown schedulable. Under fixed priority a script of known work run
//! once through is analysed too: each of its jobs starts at its wake-up, its predecessor
//! done, so one job of its longest job's work ([`script_longest_job`]) with the other
//! scripts' work in `B` bounds them all; a failure is not shown schedulable.
//!
//! Under fixed priority a call to a passive server whose callers are all on the core runs its
//! operation on the caller's context, so it is the caller's work, and each task's `B` holds
//! the lower tasks' operations it may wait for ([`super::server_calls`]); a wait that a task
//! between two callers may stretch without bound (a priority inversion) leaves its tasks
//! without a verdict. Under EDF such a call runs on its caller's context too, and the demand's
//! `M` holds the later deadlines' operations a window's jobs may run (bandwidth inheritance);
//! a server without inheritance and with two callers leaves the core without a verdict.

use std::process::ExitCode;

use bulwark_analysis::bandwidth::Admission;
use bulwark_analysis::classic::edf::{self, EdfAnalysis, EdfOutcome, OneShot};
use bulwark_analysis::classic::fixed_point::{Interference, Interferes};
use bulwark_analysis::classic::fixed_priority::{self, Analysis, Outcome};
use bulwark_analysis::classic::server_calls::Unbounded;
use bulwark_analysis::classic::Task;
use bulwark_analysis::levels::Levels;
use bulwark_core::{Duration, Priority};
use bulwark_spec::{
    Behaviour, PolicyKind, Scenario, ScriptReading, ScriptTask, StepTimes, TaskSpec,
};
// The readings the docs here name.
#[cfg(doc)]
use bulwark_spec::{script_longest_job, script_task, script_work};
use serde_json::{json, Value};

use super::server_calls::Waits;
use crate::output::{out, outln};
use crate::table;

fn time(nanos: u64) -> String {
    if nanos == u64::MAX {
        "unbounded".to_owned()
    } else {
        Duration::from_nanos(nanos).to_string()
    }
}

/// A task's analysable parameters, with the sporadic task its script is when it is one
/// ([`script_task`]), or why it has none.
fn classic_task(
    spec: &TaskSpec,
    reading: Option<ScriptReading>,
    edf: bool,
) -> Result<(Task, Option<ScriptTask>), String> {
    let script = match reading {
        Some(ScriptReading::Sporadic(job)) => Some(job),
        _ => None,
    };
    let spacing = spec
        .behaviour
        .spacing_and_execution()
        .or(script.map(|job| (job.spacing, job.wcet)));
    let Some((period, execution)) = spacing else {
        return Err(format!(
            "task `{}` runs a script, which has no fixed execution time or period, so it \
             cannot be analysed (a task with `period` and `execution` instead of a script can, \
             and so can a script that is one endless loop of work and one sleep)",
            spec.name
        ));
    };
    if period.is_zero() {
        return Err(format!("task `{}` has period 0", spec.name));
    }
    // A script without a deadline misses none: its response is still bounded.
    let deadline = match (&script, spec.deadline) {
        (_, Some(deadline)) => deadline.as_nanos(),
        (Some(_), None) => u64::MAX,
        (None, None) => period.as_nanos(),
    };
    if deadline == 0 {
        return Err(format!("task `{}` has deadline 0", spec.name));
    }
    let mut task = Task::new(spec.name.clone(), execution.as_nanos(), period.as_nanos())
        .with_deadline(deadline);
    let jitter = script.map_or(0, |job| job.jitter.as_nanos());
    if edf {
        // The demand test has no jitter: releases after the first are `T` apart, and the
        // first is at least `T - J` before the second, so all are `T - J` apart at least.
        task.period -= jitter;
    } else {
        task.jitter = jitter;
    }
    Ok((task, script))
}

/// One task's row: parameters, priority and (fixed priority) its analysis.
struct Row {
    task: Task,
    priority: Option<Priority>,
    analysis: Option<Analysis>,
    /// Fixed priority: the work of the scripts at or above its priority, in its `B`.
    scripts_ns: u64,
    /// Fixed priority: lower tasks' server operations it may wait for, in its `B`
    /// ([`server_calls`](super::server_calls)), or why that wait has no bound.
    servers: Result<u64, Unbounded>,
    /// Fixed priority: its test is sufficient only, so a failure is no refutation: scripts'
    /// work is in its `B` as a lump, or a script at or above its priority (itself too) has
    /// releases that the sporadic model only bounds ([`bulwark_spec::JobSleep::periodic`]).
    sufficient: bool,
    /// How its script is read, when it runs one: a sporadic task, or (fixed priority) a
    /// script run once through ([`ScriptReading::Bounded`] with its longest job), analysed as
    /// one job of its longest job's work; to the others that one is a lump, as every such
    /// script is.
    reading: Option<ScriptReading>,
}

impl Row {
    /// The sporadic task its script is.
    fn sporadic(&self) -> Option<ScriptTask> {
        match self.reading {
            Some(ScriptReading::Sporadic(job)) => Some(job),
            _ => None,
        }
    }

    /// A script run once through, analysed as its longest job.
    fn once(&self) -> bool {
        matches!(self.reading, Some(ScriptReading::Bounded { .. }))
    }
}

/// A script on the core: what bounds its effect on the others, and its own deadline.
struct Script<'a> {
    name: &'a str,
    priority: Option<Priority>,
    deadline: Option<Duration>,
    /// Its work over the run ([`script_work`]); `None` when unbounded or unknown.
    work: Option<Duration>,
    /// Why it is not analysed when its work is known (a script has no period).
    why: String,
    /// Fixed priority: analysed as one job, its own row ([`Row::once`]).
    own_row: bool,
}

/// The scripts' work over the run, summed (saturating); scripts of unknown work add none.
fn total_work<'a>(scripts: impl Iterator<Item = &'a Script<'a>>) -> u64 {
    scripts
        .filter_map(|script| script.work)
        .fold(0u64, |sum, work| sum.saturating_add(work.as_nanos()))
}

/// A failure of a sufficient-only test ([`Row::sufficient`]): not a refutation.
fn shown_only(a: &Analysis, sufficient: bool) -> bool {
    sufficient && !a.schedulable() && a.outcome != Outcome::EndlessBusyWindow
}

/// A script row whose releases the sporadic model only bounds.
fn bounded_releases(row: &Row) -> bool {
    row.sporadic().is_some_and(|job| !job.sleep.periodic())
}

/// Why a script's work is not counted.
fn unbounded_script(name: &str) -> String {
    format!(
        "task `{name}` runs a script whose work over the run is unbounded or unknown (a server \
         call or an endless loop with work), so it cannot be analysed (a task with `period` \
         and `execution` instead of a script can)"
    )
}

/// One core's result.
struct Core {
    core: u16,
    /// What terminations may mask the core for in all: `Some(0)` none, `None` without bound.
    mask: Option<Duration>,
    rows: Vec<Row>,
    /// Tasks that cannot be analysed, with why; the core then has no verdict.
    unanalysable: Vec<String>,
    edf: Option<(EdfAnalysis, Admission)>,
    /// EDF: the scripts' work over the run counted in the demand (`Some(0)` for scripts that
    /// do no work), `None` when the core has no script or one of them is not bounded.
    scripts_ns: Option<u64>,
    /// EDF: the scripts whose deadline is below `M` and their own work, each with it.
    late_scripts: Vec<(String, Duration)>,
    /// EDF: the scripts' work was counted in every window, in `M` (`U = 1` leaves no slack
    /// for it to fall in), not as one job each at its deadline.
    scripts_lumped: bool,
    /// The servers whose calls the test holds here (every caller on this core), so their
    /// gate waits are in the bounds or refused.
    served: Vec<usize>,
    /// EDF: later deadlines' server operations a window may lose, in the demand's `M`.
    servers_ns: u64,
}

impl Core {
    /// `Some(true/false)` when decided, `None` when a task could not be analysed, or failed a
    /// test only with scripts' work counted as one lump (sufficient, so not a refutation).
    fn schedulable(&self) -> Option<bool> {
        let failed = |r: &Row| r.analysis.is_some_and(|a| !a.schedulable());
        let lumped = |r: &Row| {
            r.analysis
                .is_some_and(|a| a.outcome == Outcome::EndlessBusyWindow)
        };
        let edf_failed =
            self.edf.is_some_and(|(e, _)| !e.schedulable()) || !self.late_scripts.is_empty();
        let edf_lumped = self.scripts_ns.is_some_and(|w| w > 0)
            || self.servers_ns > 0
            || self.rows.iter().any(bounded_releases);
        let refuted = self
            .rows
            .iter()
            .any(|r| failed(r) && !lumped(r) && !r.sufficient)
            || (edf_failed && !edf_lumped);
        if refuted {
            Some(false)
        } else if !self.unanalysable.is_empty()
            || self.rows.iter().any(|r| failed(r) || lumped(r))
            || edf_failed
        {
            None
        } else {
            Some(true)
        }
    }
}

fn analyse_core(scenario: &Scenario, core: u16, mask: Option<Duration>) -> Option<Core> {
    let on_core: Vec<usize> = (0..scenario.tasks.len())
        .filter(|&task| scenario.tasks[task].core == core)
        .collect();
    if on_core.is_empty() {
        return None;
    }
    let mut unanalysable = Vec::new();
    let mut scripts: Vec<Script> = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    let edf = scenario.policy == PolicyKind::Edf;
    // A call to a passive server bounded here runs on its caller's context.
    let servers = super::server_calls::on_core(scenario, core, &on_core, edf);
    let operations = &servers.operations;
    let times = StepTimes::with_operations(&scenario.cost, operations);
    let served: Vec<usize> = (0..operations.len())
        .filter(|&server| operations[server].is_some())
        .filter(|&server| !scenario.servers[server].clients.is_empty())
        .collect();
    let edf_waits = match servers.waits {
        Waits::PerWindow(Err(server)) => {
            unanalysable.push(format!(
                "server `{}` has callers on this core and no bandwidth inheritance: a caller \
                 that finds it busy waits while the request in service runs at its own \
                 caller's deadline, behind every job due before that, which the demand test \
                 cannot bound (bandwidth-inheritance = true bounds it)",
                scenario.servers[server].name
            ));
            0
        }
        Waits::PerWindow(Ok(waits)) => waits,
        Waits::PerTask(_) => 0,
    };
    for (at, &task) in on_core.iter().enumerate() {
        let spec = &scenario.tasks[task];
        let reading = match &spec.behaviour {
            Behaviour::Script { offset, steps } => Some(ScriptReading::of(*offset, steps, &times)),
            _ => None,
        };
        let blocked = match &servers.waits {
            Waits::PerTask(blocking) => blocking[at],
            Waits::PerWindow(_) => Ok(0),
        };
        match classic_task(spec, reading, edf) {
            Ok((task, script)) => rows.push(Row {
                task,
                priority: spec.priority,
                analysis: None,
                scripts_ns: 0,
                servers: blocked,
                sufficient: false,
                reading: script.map(ScriptReading::Sporadic),
            }),
            Err(why) => match reading {
                Some(reading) => {
                    let longest = match reading {
                        ScriptReading::Bounded { longest, .. } => longest,
                        _ => None,
                    };
                    if let (Some(longest), false) = (longest, edf) {
                        // One job at most: no period. A script without a deadline misses none.
                        // A job of no work still needs the core for its step, after every
                        // job above it due by then: 1 ns bounds that wait.
                        let deadline = spec.deadline.map_or(u64::MAX, Duration::as_nanos);
                        let wcet = longest.as_nanos().max(1);
                        rows.push(Row {
                            task: Task::new(spec.name.clone(), wcet, u64::MAX)
                                .with_deadline(deadline),
                            priority: spec.priority,
                            analysis: None,
                            scripts_ns: 0,
                            servers: blocked,
                            sufficient: true,
                            reading: Some(reading),
                        });
                    }
                    scripts.push(Script {
                        name: &spec.name,
                        priority: spec.priority,
                        deadline: spec.deadline,
                        work: reading.work(),
                        why,
                        own_row: longest.is_some() && !edf,
                    });
                }
                None => unanalysable.push(why),
            },
        }
    }
    // Under EDF bounded scripts are analysed with the tasks; otherwise each says why not.
    let scripts_analysed = edf && scripts.iter().all(|script| script.work.is_some());
    if !scripts_analysed {
        for script in scripts.iter().filter(|script| !script.own_row) {
            unanalysable.push(match script.work {
                Some(_) => script.why.clone(),
                None => unbounded_script(script.name),
            });
        }
    }
    let Some(masked) = mask else {
        unanalysable
            .push("the terminations may mask this core without bound (see their table)".to_owned());
        return Some(Core {
            core,
            mask,
            rows,
            unanalysable,
            edf: None,
            scripts_ns: None,
            late_scripts: Vec::new(),
            scripts_lumped: false,
            served,
            servers_ns: edf_waits,
        });
    };
    let masked = masked.as_nanos();
    let mut edf_result = None;
    let mut scripts_ns = None;
    let mut late_scripts = Vec::new();
    let mut scripts_lumped = false;
    if scenario.policy == PolicyKind::Edf {
        if unanalysable.is_empty() && scripts_analysed {
            let load = total_work(scripts.iter());
            let lost = masked.saturating_add(edf_waits);
            // Each script is one job of its whole work, due at its deadline wherever its
            // release falls (validation gives every EDF script a deadline).
            let jobs: Vec<OneShot> = scripts
                .iter()
                .filter_map(|script| {
                    Some(OneShot {
                        work: script.work?.as_nanos(),
                        deadline: script.deadline?.as_nanos(),
                    })
                })
                .collect();
            // A script job cannot meet a deadline below the time lost and its own work.
            late_scripts = scripts
                .iter()
                .filter_map(|script| Some((script.name.to_owned(), script.deadline?, script.work?)))
                .filter(|(_, deadline, work)| {
                    deadline.as_nanos() < lost.saturating_add(work.as_nanos())
                })
                .map(|(name, deadline, _)| (name, deadline))
                .collect();
            let tasks: Vec<Task> = rows.iter().map(|r| r.task.clone()).collect();
            let analysis = edf::analyse_with_one_shots(&tasks, &jobs, lost);
            scripts_lumped = analysis.masked > lost;
            edf_result = Some((analysis, edf::utilisation(&tasks)));
            scripts_ns = (!scripts.is_empty()).then_some(load);
        }
    } else {
        for row in &mut rows {
            row.task.blocking = row.task.blocking.saturating_add(masked);
        }
        // Most important first (the report's order); equal priorities are FIFO, so each
        // counts the others of its priority as interference (conservative, exact when
        // priorities are distinct).
        rows.sort_by_key(|r| std::cmp::Reverse(r.priority));
        // A script whose releases the sporadic model only bounds leaves every test at or
        // below its priority sufficient only.
        let bounded_above = rows
            .iter()
            .filter(|r| bounded_releases(r))
            .map(|r| r.priority)
            .max();
        let mut analysed = vec![false; rows.len()];
        for index in 0..rows.len() {
            let own = rows[index].priority;
            // A script run once through is a lump to the others, and its own job to itself.
            let name = rows[index].task.name.as_str();
            let above = || {
                scripts
                    .iter()
                    .filter(|script| script.priority >= own && script.name != name)
            };
            if let Some(script) = above().find(|script| script.work.is_none()) {
                unanalysable.push(format!(
                    "task `{}` shares its core with script `{}` at its priority or above, \
                     whose work over the run is unbounded or unknown",
                    rows[index].task.name, script.name
                ));
                continue;
            }
            let waits = match rows[index].servers {
                Ok(waits) => waits,
                Err(unbounded) => {
                    unanalysable.push(format!(
                        "task `{}`: {}",
                        rows[index].task.name,
                        super::server_calls::why_unbounded(
                            scenario,
                            &on_core,
                            unbounded,
                            &rows[index].task.name
                        )
                    ));
                    continue;
                }
            };
            // Each such script delays a job by at most its whole work, once.
            let load = total_work(above());
            let row = &mut rows[index];
            row.scripts_ns = load;
            row.task.blocking = row.task.blocking.saturating_add(waits).saturating_add(load);
            row.sufficient |= load > 0 || waits > 0 || bounded_above.is_some_and(|p| p >= own);
            analysed[index] = true;
        }
        // Each task against the others at its priority or above, their terms kept summed by
        // rate from level to level (a view of every task above, per task, made analyze
        // quadratic in the tasks). A script run once through is in their B instead.
        let terms: Vec<Option<Interference>> = rows
            .iter()
            .map(|r| (!r.once()).then(|| r.task.term()))
            .collect();
        let mut analyses = vec![None; rows.len()];
        Levels::new(rows.len(), |i| rows[i].priority.unwrap_or(Priority::MIN)).with_interference(
            |j| terms[j],
            |i, higher| {
                if !analysed[i] {
                    return;
                }
                let mut own = rows[i].task.timing();
                if rows[i].sporadic().is_some() {
                    // A script job is released only once its predecessor has ended (a
                    // planned release aside, which has no jitter), and its deadline counts
                    // from that release: its J delays the others, not its own response.
                    own.jitter = 0;
                }
                analyses[i] = Some(fixed_priority::response_time_among(&own, higher));
            },
        );
        for (row, analysis) in rows.iter_mut().zip(analyses) {
            row.analysis = analysis;
        }
    }
    Some(Core {
        core,
        mask,
        rows,
        unanalysable,
        edf: edf_result,
        scripts_ns,
        late_scripts,
        scripts_lumped,
        served,
        servers_ns: edf_waits,
    })
}

/// A row's verdict word; a failure with scripts' work in `B` is "not shown schedulable".
fn fp_verdict(a: &Analysis, sufficient: bool) -> &'static str {
    if shown_only(a, sufficient) {
        return "not shown schedulable";
    }
    match a.outcome {
        Outcome::Schedulable => "schedulable",
        Outcome::Misses { .. } => "NOT schedulable",
        Outcome::Overloaded => "NOT schedulable (overload)",
        Outcome::EndlessBusyWindow => "no verdict",
    }
}

fn fp_key(a: &Analysis, sufficient: bool) -> &'static str {
    if shown_only(a, sufficient) {
        return "not-shown-schedulable";
    }
    match a.outcome {
        Outcome::Schedulable => "schedulable",
        Outcome::Misses { .. } => "misses-deadline",
        Outcome::Overloaded => "overloaded",
        Outcome::EndlessBusyWindow => "no-verdict",
    }
}

fn fp_why(task: &Task, a: &Analysis) -> String {
    match a.outcome {
        Outcome::Schedulable => format!(
            "critical instant: every higher priority released with job 0; {}; the worst is \
             job {} with R = {} <= D = {}",
            fixed_priority::window_text(a.busy_window, a.jobs_examined, time),
            a.worst_job,
            time(a.response),
            time(task.deadline)
        ),
        Outcome::Misses { job } => format!(
            "critical instant: every higher priority released with job 0; job {job} of the \
             busy window misses: its response reaches at least {} > D = {} ({} job(s) examined)",
            time(a.response),
            time(task.deadline),
            a.jobs_examined
        ),
        Outcome::Overloaded => {
            "the utilisation of this priority level and above exceeds 1: responses grow \
             without bound"
                .to_owned()
        }
        Outcome::EndlessBusyWindow => fixed_priority::ENDLESS.to_owned(),
    }
}

fn utilisation_text(u: &Admission) -> String {
    let (n, d) = (u.total.numerator, u.total.denominator);
    format!(
        "U = {}{n}/{d} = {:.4}",
        if u.exact { "" } else { "at most " },
        u.total.as_f64()
    )
}

fn edf_why(e: &EdfAnalysis, utilisation: &Admission) -> String {
    let u = utilisation_text(utilisation);
    match e.outcome {
        EdfOutcome::UtilisationAtMostOne => {
            format!("implicit deadlines and {u} <= 1 (Liu and Layland): schedulable")
        }
        EdfOutcome::DemandMet { bound, steps } if e.masked > 0 => format!(
            "{u} <= 1; processor demand h(t) + M <= t with M = {} at every deadline up to {}, \
             checked by QPA in {steps} steps: schedulable",
            time(e.masked),
            time(bound)
        ),
        EdfOutcome::DemandMet { bound, steps } => format!(
            "{u} <= 1; processor demand h(t) <= t at every deadline up to L = {} (the \
             synchronous busy period), checked by QPA in {steps} steps: schedulable",
            time(bound)
        ),
        EdfOutcome::UtilisationAboveOne => format!("{u} > 1: NOT schedulable"),
        EdfOutcome::DemandExceeds { deadline, demand } if e.masked > 0 => format!(
            "{u}; the first deadline where demand exceeds supply is t = {}: h(t) + M = {} + {} \
             > t: NOT schedulable",
            time(deadline),
            time(demand),
            time(e.masked)
        ),
        EdfOutcome::DemandExceeds { deadline, demand } => format!(
            "{u}; the first deadline where demand exceeds supply is t = {}: h(t) = {} > t: \
             NOT schedulable",
            time(deadline),
            time(demand)
        ),
        EdfOutcome::EndlessBusyPeriod => format!(
            "{u} = 1 and the core loses {} to masks: the busy period never ends, and the \
             deadlines up to D_max + H are too many to check: no verdict",
            time(e.masked)
        ),
    }
}

/// Analyses `scenario` (policy fixed-priority or edf) and prints the result.
pub fn run(scenario: &Scenario, json: bool) -> ExitCode {
    let masked_on = super::analyze::core_masks(scenario);
    let cores: Vec<Core> = (0..scenario.cores)
        .filter_map(|c| analyse_core(scenario, c, masked_on(c)))
        .collect();
    let verdicts: Vec<Option<bool>> = cores.iter().map(Core::schedulable).collect();
    let refuted = verdicts.contains(&Some(false));
    let undecided = verdicts.contains(&None);
    let overall = if refuted {
        Some(false)
    } else if undecided {
        None
    } else {
        Some(true)
    };
    if json {
        outln!("{:#}", to_json(scenario, &cores, overall));
    } else {
        out!("{}", to_text(scenario, &cores, overall));
    }
    for core in &cores {
        for why in &core.unanalysable {
            eprintln!("core {}: not analysable: {why}", core.core);
        }
    }
    match overall {
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::FAILURE,
        None => ExitCode::from(2),
    }
}

/// The callers of servers whose gate waits no core's test holds
/// ([`super::uncounted::gate_waits`], less [`Core::served`]'s callers).
fn gate_waits<'s>(scenario: &'s Scenario, cores: &[Core]) -> Vec<&'s str> {
    let served = |server: usize| cores.iter().any(|core| core.served.contains(&server));
    let mut callers: Vec<usize> = (0..scenario.servers.len())
        .filter(|&server| !served(server))
        .flat_map(|server| scenario.servers[server].clients.iter().copied())
        .collect();
    callers.sort_unstable();
    callers.dedup();
    callers
        .into_iter()
        .map(|task| scenario.tasks[task].name.as_str())
        .collect()
}

fn to_text(scenario: &Scenario, cores: &[Core], overall: Option<bool>) -> String {
    let fp = scenario.policy == PolicyKind::FixedPriority;
    let mut text = format!(
        "{} ({}): {}\n",
        scenario.name,
        scenario.policy.name(),
        if fp {
            "exact response-time analysis (constrained and arbitrary deadlines, busy window)"
        } else {
            "exact EDF test (utilisation for implicit deadlines, processor demand with QPA)"
        }
    );
    for core in cores {
        text.push_str(&format!("\ncore {}:\n", core.core));
        // Once per core: it reads every row, so once per row made the table quadratic.
        let verdict = core.schedulable();
        let rows: Vec<Vec<String>> = core
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.task.name.clone()];
                if fp {
                    row.push(r.priority.map_or("-".to_owned(), |p| p.0.to_string()));
                }
                row.extend([
                    time(r.task.wcet),
                    time(r.task.period),
                    time(r.task.deadline),
                    time(r.task.jitter),
                ]);
                match (&r.analysis, fp) {
                    (Some(a), true) => row.extend([
                        time(a.blocking),
                        time(a.response),
                        fp_verdict(a, r.sufficient).to_owned(),
                    ]),
                    _ => row.extend([
                        time(r.task.blocking),
                        "-".to_owned(),
                        match (&core.edf, fp, verdict) {
                            (Some((e, _)), false, _) if e.schedulable() => "schedulable".to_owned(),
                            (Some(_), false, None) => "not shown schedulable".to_owned(),
                            (Some(_), false, _) => "NOT schedulable".to_owned(),
                            _ => "not analysed".to_owned(),
                        },
                    ]),
                }
                row
            })
            .collect();
        let mut header = vec!["task"];
        if fp {
            header.push("priority");
        }
        header.extend(["C", "T", "D", "J", "B", "R", "verdict"]);
        text.push_str(&table::render(&header, &rows));
        for r in &core.rows {
            if let Some(job) = r.sporadic() {
                text.push_str(&format!(
                    "  {}: a script of one endless loop, a job of at most {} ended by `{}`, \
                     analysed as a sporadic task with these C, T and J\n",
                    r.task.name,
                    job.wcet,
                    job.sleep.name()
                ));
            }
            if r.once() {
                text.push_str(&format!(
                    "  {}: a script run once through, analysed as one job of its longest \
                     job's work (its jobs never wait for one another), the other scripts' \
                     work in B; sufficient only\n",
                    r.task.name
                ));
            }
            if let Some(a) = &r.analysis {
                text.push_str(&format!("  {}: {}\n", r.task.name, fp_why(&r.task, a)));
            }
        }
        if let Some((e, u)) = &core.edf {
            text.push_str(&format!(
                "  EDF (R is not computed by the demand test): {}\n",
                edf_why(e, u)
            ));
        }
        if let Some(load) = core.scripts_ns {
            text.push_str(&if core.scripts_lumped {
                format!(
                    "  the scripts' work over the run, W = {}, is in the demand's M as one lump \
                     (U = 1 leaves no slack for it to fall in)\n",
                    time(load)
                )
            } else {
                format!(
                    "  each script is in the demand h(t) as one job of its work over the run (W = \
                     {} in all), due at its deadline wherever its release falls; sufficient only\n",
                    time(load)
                )
            });
        }
        if core.servers_ns > 0 {
            text.push_str(&format!(
                "  later deadlines' server operations that a window's jobs may run (bandwidth \
                 inheritance: one request per task due after the first deadline), {}, are in \
                 the demand's M; sufficient only\n",
                time(core.servers_ns)
            ));
        }
        for (script, deadline) in &core.late_scripts {
            text.push_str(&format!(
                "  script `{script}`: its deadline {deadline} is below its own work and the time \
                 the core may lose\n"
            ));
        }
        if core.rows.iter().any(bounded_releases) {
            text.push_str(
                "  a script ended by `sleep-until-aligned` or `sleep-for` releases its jobs as \
                 its last ones end, which the sporadic model bounds but may not reach: a \
                 failure it takes part in is not shown schedulable, not a refutation\n",
            );
        }
        if core
            .rows
            .iter()
            .any(|r| r.analysis.is_some() && r.servers.is_ok_and(|waits| waits > 0))
        {
            text.push_str(
                "  B holds the server operations of lower tasks a task may wait for: one per \
                 lower task whose server a caller at or above it may wait at (bandwidth \
                 inheritance, or its own call without), and the longest one at a ceiling at or \
                 above it; sufficient only\n",
            );
        }
        if core.rows.iter().any(|r| r.scripts_ns > 0) {
            text.push_str(
                "  a task below scripts of bounded work has their whole work in its B, as one \
                 lump\n",
            );
        }
        match core.mask {
            Some(mask) if mask.is_zero() => {}
            Some(mask) if fp => text.push_str(&format!(
                "  the terminations' mask of at most {mask} is in every analysed task's B\n"
            )),
            Some(mask) if core.scripts_ns.is_some() => text.push_str(&format!(
                "  the terminations' mask of at most {mask} is in the demand's M\n"
            )),
            Some(mask) => text.push_str(&format!(
                "  the terminations' mask of at most {mask} is in the demand: h(t) + {mask} <= t\n"
            )),
            None => {}
        }
        for why in &core.unanalysable {
            text.push_str(&format!("  not analysable: {why}\n"));
        }
    }
    text.push_str(&super::uncounted::note(&super::uncounted::kernel_costs(
        &scenario.cost,
    )));
    text.push_str(&super::uncounted::gate_note(&gate_waits(scenario, cores)));
    text.push_str(&format!(
        "\nsummary: {}\n",
        match overall {
            Some(true) => "every core schedulable",
            Some(false) => "NOT schedulable on some core",
            None => "no verdict: some task could not be analysed",
        }
    ));
    text
}

fn to_json(scenario: &Scenario, cores: &[Core], overall: Option<bool>) -> Value {
    let waits = gate_waits(scenario, cores);
    let fp = scenario.policy == PolicyKind::FixedPriority;
    let cores: Vec<Value> = cores
        .iter()
        .map(|core| {
            let tasks: Vec<Value> = core
                .rows
                .iter()
                .map(|r| {
                    let mut task = json!({
                        "name": r.task.name,
                        "priority": r.priority.map(|p| p.0),
                        "wcet_ns": r.task.wcet,
                        "period_ns": r.task.period,
                        "deadline_ns": r.task.deadline,
                        "jitter_ns": r.task.jitter,
                        "blocking_ns": r.task.blocking,
                        "response_ns": Value::Null,
                    });
                    if let Some(job) = r.sporadic() {
                        task["script_sleep"] = json!(job.sleep.name());
                    }
                    if r.once() {
                        task["script_once"] = json!(true);
                    }
                    if let Some(a) = &r.analysis {
                        task["blocking_ns"] = json!(a.blocking);
                        task["response_ns"] = (a.response != u64::MAX).then_some(a.response).into();
                        task["schedulable"] = json!(a.schedulable());
                        task["verdict"] = json!(fp_key(a, r.sufficient));
                        task["scripts_ns"] = json!(r.scripts_ns);
                        task["servers_ns"] = json!(r.servers.unwrap_or(0));
                        task["busy_window_ns"] = json!(a.busy_window);
                        task["jobs_examined"] = json!(a.jobs_examined);
                        task["worst_job"] = json!(a.worst_job);
                        task["why"] = json!(fp_why(&r.task, a));
                    }
                    task
                })
                .collect();
            let mut value = json!({
                "core": core.core,
                "masked_ns": core.mask.map(Duration::as_nanos),
                "schedulable": core.schedulable(),
                "tasks": tasks,
                "not_analysable": core.unanalysable,
            });
            if !core.served.is_empty() && !fp {
                value["servers_ns"] = json!(core.servers_ns);
            }
            if let Some(load) = core.scripts_ns {
                value["scripts_work_ns"] = json!(load);
                value["late_scripts"] = core
                    .late_scripts
                    .iter()
                    .map(|(script, deadline)| json!({"name": script, "deadline_ns": deadline.as_nanos()}))
                    .collect();
            }
            if let Some((e, u)) = &core.edf {
                let (test, bound, first_miss, demand) = match e.outcome {
                    EdfOutcome::UtilisationAtMostOne | EdfOutcome::UtilisationAboveOne => {
                        ("utilisation", None, None, None)
                    }
                    EdfOutcome::DemandMet { bound, .. } => ("qpa", Some(bound), None, None),
                    EdfOutcome::DemandExceeds { deadline, demand } => {
                        ("qpa", None, Some(deadline), Some(demand))
                    }
                    EdfOutcome::EndlessBusyPeriod => ("qpa", None, None, None),
                };
                value["edf"] = json!({
                    "test": test,
                    "utilisation_numerator": u.total.numerator.to_string(),
                    "utilisation_denominator": u.total.denominator.to_string(),
                    "utilisation_exact": u.exact,
                    "checked_up_to_ns": bound,
                    "first_miss_ns": first_miss,
                    "demand_at_first_miss_ns": demand,
                    "why": edf_why(e, u),
                });
            }
            value
        })
        .collect();
    json!({
        "scenario": scenario.name,
        "policy": scenario.policy.name(),
        "schedulable": overall,
        "cores": cores,
        "costs_not_in_bounds": super::uncounted::kernel_costs(&scenario.cost),
        "gate_waits_not_in_bounds": waits,
    })
}
