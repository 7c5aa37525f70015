//! `bulwark._bulwark`, the native half of the `bulwark` Python package: Bulwark's task-set
//! generators, classic schedulability tests, simulator and sharded sweeps on plain Python data
//! (lists, dicts, str, int, float).
//!
//! Times are integer nanoseconds, as in the CLI. Each function converts its arguments while it
//! holds the GIL, then runs the Rust work detached from the interpreter (`Python::detach`,
//! PyO3's name for `allow_threads` since 0.26), so Python threads and Dask's threaded workers
//! run Bulwark in parallel.

mod components;
mod global;
mod one_core;

use bulwark_analysis::classic::{self, edf, fixed_priority, Task};
use bulwark_analysis::generate::{self, PPB};
use bulwark_analysis::sweep::run::{self as sweep_run, Counts, Shard};
use bulwark_core::Duration;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The most tasks one generator call may draw: more is a mistake, not an experiment.
const MAX_GENERATED_TASKS: usize = 1_000_000;

/// A utilisation in parts per billion, or an error saying what is allowed.
fn utilisation_ppb(utilisation: f64) -> PyResult<u64> {
    // 10^9 processors is far past any experiment and keeps the product exact in a u64.
    if !utilisation.is_finite() || !(0.0..=1e9).contains(&utilisation) {
        return Err(PyValueError::new_err(format!(
            "utilisation {utilisation} is out of range (allowed: a finite number from 0 to 1e9, \
             like 0.75)"
        )));
    }
    Ok((utilisation * PPB as f64).round() as u64)
}

/// An integer argument in `0..=max`, or a ValueError naming it. Arguments arrive as `i128`
/// so that a negative number is this ValueError, not PyO3's OverflowError for unsigned types.
fn in_range(name: &str, value: i128, max: u64) -> PyResult<u64> {
    u64::try_from(value)
        .ok()
        .filter(|value| *value <= max)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{name} = {value} is out of range (allowed: an integer from 0 to {max})"
            ))
        })
}

fn task_count(n: i128) -> PyResult<usize> {
    let n = in_range("n", n, MAX_GENERATED_TASKS as u64)?;
    // At most MAX_GENERATED_TASKS, so it fits a usize.
    Ok(usize::try_from(n).unwrap_or(MAX_GENERATED_TASKS))
}

fn seed_of(seed: i128) -> PyResult<u64> {
    in_range("seed", seed, u64::MAX)
}

/// `n` utilisations summing to `utilisation`, uniform over the simplex, by UUniFast (Bini and
/// Buttazzo, 2005), drawn from `seed`; exact to a part per billion.
#[pyfunction]
fn uunifast(py: Python<'_>, n: i128, utilisation: f64, seed: i128) -> PyResult<Vec<f64>> {
    let (n, total, seed) = (
        task_count(n)?,
        utilisation_ppb(utilisation)?,
        seed_of(seed)?,
    );
    let shares = py.detach(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        generate::uunifast(n, total, &mut rng)
    });
    Ok(shares.into_iter().map(|u| u as f64 / PPB as f64).collect())
}

/// `n` implicit-deadline tasks of total utilisation `utilisation` (UUniFast), periods
/// log-uniform in `min_period..=max_period` ns on a 1 us grid, from `seed`: a list of
/// `{"wcet", "period", "deadline"}` dicts in ns.
#[pyfunction]
#[pyo3(signature = (n, utilisation, seed, min_period = 10_000_000, max_period = 1_000_000_000))]
fn task_set(
    py: Python<'_>,
    n: i128,
    utilisation: f64,
    seed: i128,
    min_period: i128,
    max_period: i128,
) -> PyResult<Py<PyList>> {
    let (n, total, seed) = (
        task_count(n)?,
        utilisation_ppb(utilisation)?,
        seed_of(seed)?,
    );
    let min_period = in_range("min_period", min_period, u64::MAX)?;
    let max_period = in_range("max_period", max_period, u64::MAX)?;
    if min_period == 0 || min_period > max_period {
        return Err(PyValueError::new_err(format!(
            "periods {min_period}..={max_period} ns are not a range (allowed: 0 < min_period \
             <= max_period)"
        )));
    }
    let tasks = py.detach(|| {
        generate::task_set(
            n,
            total,
            Duration::from_nanos(min_period),
            Duration::from_nanos(max_period),
            seed,
        )
    });
    let list = PyList::empty(py);
    for task in tasks {
        let dict = PyDict::new(py);
        // Interned keys: the analysis calls read such dicts by walking them (walk_fields).
        dict.set_item(intern!(py, "wcet"), task.execution.as_nanos())?;
        dict.set_item(intern!(py, "period"), task.period.as_nanos())?;
        dict.set_item(intern!(py, "deadline"), task.period.as_nanos())?;
        list.append(dict)?;
    }
    Ok(list.unbind())
}

/// Whether a conversion builds the tasks' names in Rust. Only error messages need them
/// ([`fp_rta`] takes its result names from the list itself), and a `String` per task on
/// every call is a cost the lean calls need not pay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Names {
    /// `name` from a dict, else `task<index>`.
    Fill,
    /// Empty names (no allocation); an invalid set is converted again with names, so the
    /// error still names its task.
    Skip,
}

/// The fields of a task, in tuple order: `(wcet, period, deadline, jitter, blocking)`.
const TUPLE_FIELDS: [&str; 5] = ["wcet", "period", "deadline", "jitter", "blocking"];

/// A time of task `index`, or a ValueError naming the field and what is allowed.
fn time_of(value: &Bound<'_, PyAny>, index: usize, key: &dyn std::fmt::Display) -> PyResult<u64> {
    value.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!(
            "task {index}: `{key}` = {value} is not a time (allowed: an integer number of \
             nanoseconds, 0 to 2^64 - 1)"
        ))
    })
}

/// An optional non-negative integer field of a task dict. Keys are interned strings
/// (`intern!`): making a key string per lookup took about a third of a 10-task `fp_rta` call.
fn field(
    task: &Bound<'_, PyDict>,
    index: usize,
    key: &Bound<'_, PyString>,
) -> PyResult<Option<u64>> {
    match task.get_item(key)? {
        None => Ok(None),
        Some(value) if value.is_none() => Ok(None),
        Some(value) => time_of(&value, index, key).map(Some),
    }
}

/// A task from a tuple `(wcet, period[, deadline[, jitter[, blocking]]])` in ns: the fast
/// form, read by position with no key lookup. `None` in an optional place means absent.
fn task_from_tuple(tuple: &Bound<'_, PyTuple>, index: usize, names: Names) -> PyResult<Task> {
    let length = tuple.len();
    if !(2..=TUPLE_FIELDS.len()).contains(&length) {
        return Err(PyValueError::new_err(format!(
            "task {index} is a tuple of {length} items (allowed: (wcet, period), (wcet, \
             period, deadline), (wcet, period, deadline, jitter) or (wcet, period, deadline, \
             jitter, blocking), in ns)"
        )));
    }
    // Places 2.. are optional: absent past the tuple's end, or None.
    let time = |place: usize| -> PyResult<Option<u64>> {
        if place >= length {
            return Ok(None);
        }
        let value = tuple.get_borrowed_item(place)?;
        if place >= 2 && value.is_none() {
            return Ok(None);
        }
        time_of(&value, index, &TUPLE_FIELDS[place]).map(Some)
    };
    let (wcet, period) = (time(0)?.unwrap_or(0), time(1)?.unwrap_or(0));
    let name = match names {
        Names::Fill => format!("task{index}"),
        Names::Skip => String::new(),
    };
    let mut task = Task::new(name, wcet, period);
    if let Some(deadline) = time(2)? {
        task = task.with_deadline(deadline);
    }
    Ok(task
        .with_jitter(time(3)?.unwrap_or(0))
        .with_blocking(time(4)?.unwrap_or(0)))
}

/// The fields of a task dict: times in [`TUPLE_FIELDS`] order, and the name when given.
struct DictFields<'py> {
    times: [Option<u64>; TUPLE_FIELDS.len()],
    name: Option<Bound<'py, PyAny>>,
}

/// The interned field names, in [`TUPLE_FIELDS`] order.
fn field_keys(py: Python<'_>) -> [&Bound<'_, PyString>; TUPLE_FIELDS.len()] {
    [
        intern!(py, "wcet"),
        intern!(py, "period"),
        intern!(py, "deadline"),
        intern!(py, "jitter"),
        intern!(py, "blocking"),
    ]
}

/// The fields read by walking the dict's items (three for a task of [`task_set`]) instead of
/// looking up all six names, when every key is one of the interned names itself: string
/// constants in Python source and [`task_set`]'s keys are. `None` when some key is not (a
/// key built at run time, or an unknown one): the caller then looks the fields up.
fn walk_fields<'py>(dict: &Bound<'py, PyDict>, index: usize) -> PyResult<Option<DictFields<'py>>> {
    let py = dict.py();
    let keys = field_keys(py);
    let mut fields = DictFields {
        times: [None; TUPLE_FIELDS.len()],
        name: None,
    };
    for (key, value) in dict.iter() {
        if key.is(intern!(py, "name")) {
            fields.name = Some(value).filter(|name| !name.is_none());
            continue;
        }
        let Some(place) = keys.iter().position(|field| key.is(*field)) else {
            return Ok(None);
        };
        if !value.is_none() {
            fields.times[place] = Some(time_of(&value, index, keys[place])?);
        }
    }
    Ok(Some(fields))
}

/// The fields by one lookup per name.
fn look_up_fields<'py>(
    dict: &Bound<'py, PyDict>,
    index: usize,
    names: Names,
) -> PyResult<DictFields<'py>> {
    let py = dict.py();
    let mut fields = DictFields {
        times: [None; TUPLE_FIELDS.len()],
        name: None,
    };
    for (time, key) in fields.times.iter_mut().zip(field_keys(py)) {
        *time = field(dict, index, key)?;
    }
    if names == Names::Fill {
        fields.name = dict
            .get_item(intern!(py, "name"))?
            .filter(|name| !name.is_none());
    }
    Ok(fields)
}

/// A task from a dict `{"wcet", "period", "deadline"?, "jitter"?, "blocking"?, "name"?}`.
fn task_from_dict(dict: &Bound<'_, PyDict>, index: usize, names: Names) -> PyResult<Task> {
    let fields = match walk_fields(dict, index)? {
        Some(fields) => fields,
        None => look_up_fields(dict, index, names)?,
    };
    let [wcet, period, deadline, jitter, blocking] = fields.times;
    let required = |time: Option<u64>, key: &str| {
        time.ok_or_else(|| {
            PyValueError::new_err(format!(
                "task {index} has no `{key}` (required: wcet and period, in ns)"
            ))
        })
    };
    let (wcet, period) = (required(wcet, "wcet")?, required(period, "period")?);
    let name = match (names, fields.name) {
        (Names::Skip, _) => String::new(),
        (Names::Fill, Some(name)) => name.str()?.to_string(),
        (Names::Fill, None) => format!("task{index}"),
    };
    let mut task = Task::new(name, wcet, period);
    if let Some(deadline) = deadline {
        task = task.with_deadline(deadline);
    }
    Ok(task
        .with_jitter(jitter.unwrap_or(0))
        .with_blocking(blocking.unwrap_or(0)))
}

fn convert(tasks: &Bound<'_, PyList>, names: Names) -> PyResult<Vec<Task>> {
    let mut out = Vec::with_capacity(tasks.len());
    for (index, item) in tasks.iter().enumerate() {
        // Exact types first: a tuple or a dict, as Python code writes them.
        let task = if let Ok(tuple) = item.cast_exact::<PyTuple>() {
            task_from_tuple(tuple, index, names)?
        } else if let Ok(dict) = item.cast::<PyDict>() {
            task_from_dict(dict, index, names)?
        } else if let Ok(tuple) = item.cast::<PyTuple>() {
            task_from_tuple(tuple, index, names)?
        } else {
            return Err(PyValueError::new_err(format!(
                "task {index} is not a dict or a tuple (allowed: {{\"wcet\": ns, \"period\": \
                 ns, \"deadline\": ns}} with deadline, jitter, blocking and name optional, or \
                 (wcet, period[, deadline[, jitter[, blocking]]]) in ns)"
            )));
        };
        out.push(task);
    }
    Ok(out)
}

/// Tasks from a list of dicts `{"wcet", "period", "deadline"?, "jitter"?, "blocking"?,
/// "name"?}` or tuples `(wcet, period[, deadline[, jitter[, blocking]]])` (ns; the two forms
/// may be mixed), checked as every classic test assumes (`T > 0`, `D > 0`).
fn tasks_from(tasks: &Bound<'_, PyList>) -> PyResult<Vec<Task>> {
    let converted = convert(tasks, Names::Skip)?;
    classic::validate(&converted).map_err(|error| {
        // The error path only: convert again with names so the message says which task.
        let named = match convert(tasks, Names::Fill) {
            Ok(named) => named,
            Err(error) => return error,
        };
        let error = classic::validate(&named).err().unwrap_or(error);
        PyValueError::new_err(error.to_string())
    })?;
    Ok(converted)
}

/// [`tasks_from`] for the EDF test, which has no blocking term: a task with `blocking` above
/// zero is refused, named, rather than analysed as if it had none.
fn edf_tasks_from(tasks: &Bound<'_, PyList>) -> PyResult<Vec<Task>> {
    let converted = tasks_from(tasks)?;
    let Some(index) = converted.iter().position(|task| task.blocking > 0) else {
        return Ok(converted);
    };
    let name = convert(tasks, Names::Fill)?.swap_remove(index).name;
    Err(PyValueError::new_err(format!(
        "task `{name}`: `blocking` = {} is not part of the EDF test (allowed: 0 or absent; \
         release jitter is, as D - J from the latest release)",
        converted[index].blocking
    )))
}

/// How many default names [`default_name`] keeps: ten-task sets and far larger ones.
const CACHED_NAMES: usize = 64;

/// `task0`, `task1`, ...: made once, not per call.
static DEFAULT_NAMES: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

/// `task<index>`, the name of a task given without one.
fn default_name(py: Python<'_>, index: usize) -> Bound<'_, PyString> {
    let cached = DEFAULT_NAMES.get_or_init(py, || {
        (0..CACHED_NAMES)
            .map(|i| PyString::new(py, &format!("task{i}")).unbind())
            .collect()
    });
    match cached.get(index) {
        Some(name) => name.bind(py).clone(),
        None => PyString::new(py, &format!("task{index}")),
    }
}

/// Task `index`'s name in [`fp_rta`]'s result: its dict's `name` (as `str`), else
/// `task<index>`. (Read again from the list: only this call needs names.)
fn result_name<'py>(list: &Bound<'py, PyList>, index: usize) -> PyResult<Bound<'py, PyString>> {
    let py = list.py();
    if let Ok(item) = list.get_item(index) {
        if let Ok(dict) = item.cast::<PyDict>() {
            if let Some(name) = dict.get_item(intern!(py, "name"))? {
                if !name.is_none() {
                    return name.str();
                }
            }
        }
    }
    Ok(default_name(py, index))
}

/// Exact fixed-priority response-time analysis (Joseph and Pandya; Audsley et al.; Lehoczky's
/// busy window for D > T), tasks most important first. One dict per task: `name`,
/// `response` (ns; `None` when unbounded), `deadline`, `schedulable`, `outcome`
/// (`schedulable`, `misses`, `overloaded`, or `endless-busy-window`: a level at utilisation
/// exactly 1 with blocking or jitter whose hyperperiod holds more than 65,536 of the task's
/// jobs; with fewer, those jobs decide, as their responses repeat).
/// [`fp_rta_responses`] gives the verdicts alone, several times faster.
#[pyfunction]
fn fp_rta(py: Python<'_>, tasks: &Bound<'_, PyList>) -> PyResult<Py<PyList>> {
    // The names go from the input to the result as Python strings, not through Rust.
    let list = tasks;
    let tasks = tasks_from(list)?;
    let analyses = py.detach(|| fixed_priority::response_times(&tasks));
    let mut dicts = Vec::with_capacity(analyses.len());
    for (index, (task, analysis)) in tasks.iter().zip(&analyses).enumerate() {
        let dict = PyDict::new(py);
        dict.set_item(intern!(py, "name"), result_name(list, index)?)?;
        let response = (analysis.response != u64::MAX).then_some(analysis.response);
        dict.set_item(intern!(py, "response"), response)?;
        dict.set_item(intern!(py, "deadline"), task.deadline)?;
        dict.set_item(intern!(py, "schedulable"), analysis.schedulable())?;
        // Interned: four fixed words, not a new string per task.
        let outcome = match analysis.outcome {
            fixed_priority::Outcome::Schedulable => intern!(py, "schedulable"),
            fixed_priority::Outcome::Misses { .. } => intern!(py, "misses"),
            fixed_priority::Outcome::Overloaded => intern!(py, "overloaded"),
            fixed_priority::Outcome::EndlessBusyWindow => intern!(py, "endless-busy-window"),
        };
        dict.set_item(intern!(py, "outcome"), outcome)?;
        dicts.push(dict);
    }
    // Sized once, not grown by appends.
    Ok(PyList::new(py, dicts)?.unbind())
}

/// [`fp_rta`]'s verdicts alone: per task, its worst-case response time (ns) when it meets its
/// deadline, `None` when it does not. The fast form for sweeps: with tasks given as tuples
/// `(wcet, period, deadline)` no key is looked up and no name or dict is made.
#[pyfunction]
fn fp_rta_responses(py: Python<'_>, tasks: &Bound<'_, PyList>) -> PyResult<Py<PyList>> {
    let tasks = tasks_from(tasks)?;
    let analyses = py.detach(|| fixed_priority::response_times(&tasks));
    let responses = analyses
        .iter()
        .map(|analysis| analysis.schedulable().then_some(analysis.response));
    Ok(PyList::new(py, responses)?.unbind())
}

/// The exact EDF test (processor demand, QPA by Zhang and Burns; a task's `jitter` is release
/// jitter, Spuri's, so its jobs have `D - J` from their latest release; `blocking` must be 0,
/// the test has no term for it): `schedulable`, `reason`,
/// and `first_failing_deadline` (ns from a synchronous release; `None` unless demand
/// exceeds supply there), `demand` at it (the tasks' `h(t)`), and the `explanation` sentence
/// of the CLI. `masked` (ns, default 0) is time the processor may lose in all, to a
/// reclamation with interrupts masked: the test is then `h(t) + masked <= t`, and `reason`
/// may be `no-verdict` (at U = 1, when the deadlines to check are too many).
/// [`edf_qpa_schedulable`] gives the verdict alone.
#[pyfunction]
#[pyo3(signature = (tasks, masked = 0))]
fn edf_qpa(py: Python<'_>, tasks: &Bound<'_, PyList>, masked: u64) -> PyResult<Py<PyDict>> {
    let tasks = edf_tasks_from(tasks)?;
    let (analysis, utilisation) = py.detach(|| {
        (
            edf::analyse_masked(&tasks, masked),
            edf::utilisation(&tasks),
        )
    });
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "schedulable"), analysis.schedulable())?;
    let (reason, deadline, demand) = match analysis.outcome {
        edf::EdfOutcome::UtilisationAtMostOne => ("utilisation-at-most-one", None, None),
        edf::EdfOutcome::DemandMet { .. } => ("demand-met", None, None),
        edf::EdfOutcome::UtilisationAboveOne => ("utilisation-above-one", None, None),
        edf::EdfOutcome::DemandExceeds { deadline, demand } => {
            ("demand-exceeds", Some(deadline), Some(demand))
        }
        edf::EdfOutcome::EndlessBusyPeriod => ("no-verdict", None, None),
    };
    dict.set_item(intern!(py, "reason"), reason)?;
    dict.set_item(intern!(py, "first_failing_deadline"), deadline)?;
    dict.set_item(intern!(py, "demand"), demand)?;
    dict.set_item(intern!(py, "explanation"), analysis.explain(&utilisation))?;
    Ok(dict.unbind())
}

/// [`edf_qpa`]'s verdict alone: `True` when the exact EDF test schedules the tasks.
#[pyfunction]
fn edf_qpa_schedulable(py: Python<'_>, tasks: &Bound<'_, PyList>) -> PyResult<bool> {
    let tasks = edf_tasks_from(tasks)?;
    Ok(py.detach(|| edf::analyse(&tasks).schedulable()))
}

/// `U = sum C_i / T_i` (a float; the EDF verdict `U <= 1` itself is decided exactly by
/// [`edf_qpa`]).
#[pyfunction]
fn edf_utilisation(py: Python<'_>, tasks: &Bound<'_, PyList>) -> PyResult<f64> {
    let tasks = tasks_from(tasks)?;
    Ok(py.detach(|| edf::utilisation(&tasks).total.as_f64()))
}

/// Simulates a scenario (TOML text, as `bulwark simulate` reads) and returns its metrics as
/// the dict `bulwark simulate --json` prints, for `until` ns (default: the scenario's
/// duration) and `seed` (default: the scenario's).
#[pyfunction]
#[pyo3(signature = (scenario_toml, until_ns = None, seed = None))]
fn simulate<'py>(
    py: Python<'py>,
    scenario_toml: &str,
    until_ns: Option<i128>,
    seed: Option<i128>,
) -> PyResult<Bound<'py, PyAny>> {
    let until_ns = until_ns
        .map(|until| in_range("until_ns", until, u64::MAX))
        .transpose()?;
    let seed = seed.map(seed_of).transpose()?;
    if until_ns == Some(0) {
        return Err(PyValueError::new_err(
            "until_ns is zero: a run must last longer than 0 (allowed: a positive ns count)",
        ));
    }
    let text = scenario_toml.to_owned();
    let metrics = py.detach(move || {
        let scenario = bulwark_spec::parse(&text, "<scenario>")
            .map_err(|d| PyValueError::new_err(d.plain()))?;
        // A component system in the scenario runs lowered onto its core.
        let scenario = bulwark_lab::component_system::compose(scenario)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let options = bulwark_sim::Options {
            until: until_ns.map(Duration::from_nanos),
            seed,
            record_trace: false,
            record_jobs: false,
        };
        let outcome = bulwark_sim::run(&scenario, &options)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok::<_, PyErr>(bulwark_lab::metrics_json::scenario_metrics_json(
            &scenario, &outcome,
        ))
    })?;
    py.import("json")?.call_method1("loads", (metrics,))
}

fn experiment(text: &str) -> PyResult<bulwark_spec::Experiment> {
    bulwark_spec::parse_sweep(text, "<experiment>").map_err(|d| PyValueError::new_err(d.plain()))
}

/// Runs shard `index` of `count` of a sweep experiment (TOML text, as `bulwark sweep` reads):
/// the sets whose global index is `index` mod `count`. Returns the shard's counts as the JSON
/// text `bulwark sweep --shard index/count` writes.
#[pyfunction]
fn sweep_shard(
    py: Python<'_>,
    experiment_toml: &str,
    index: i128,
    count: i128,
) -> PyResult<String> {
    let (index, count) = (
        in_range("index", index, u64::MAX)?,
        in_range("count", count, u64::MAX)?,
    );
    let shard = Shard::parse(&format!("{index}/{count}")).map_err(PyValueError::new_err)?;
    let experiment = experiment(experiment_toml)?;
    Ok(py.detach(|| sweep_run::run(&experiment, shard, &|_| ()).to_json()))
}

/// Merges every shard's JSON text of one sweep: `{"csv": ..., "json": ...}`, byte for byte
/// the `results.csv` and `results.json` of `bulwark sweep merge --out` (and of the unsplit
/// run).
#[pyfunction]
fn sweep_merge<'py>(py: Python<'py>, shards: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let (csv, json) = py.detach(|| {
        let mut parts = Vec::with_capacity(shards.len());
        for (position, text) in shards.iter().enumerate() {
            parts.push(Counts::from_json(text).map_err(|e| {
                PyValueError::new_err(format!(
                    "shard {position} of the list is not a shard's JSON from sweep_shard or \
                     `bulwark sweep --shard`: {e}"
                ))
            })?);
        }
        let merged = sweep_run::merge(&parts).map_err(PyValueError::new_err)?;
        if !merged.complete() {
            let missing: Vec<String> = (0..merged.shard_count)
                .filter(|i| !merged.shards.contains(i))
                .map(|i| format!("{i}/{}", merged.shard_count))
                .collect();
            return Err(PyValueError::new_err(format!(
                "shards missing: {}",
                missing.join(", ")
            )));
        }
        Ok((merged.csv(), merged.results_json()))
    })?;
    let dict = PyDict::new(py);
    dict.set_item("csv", csv)?;
    dict.set_item("json", json)?;
    Ok(dict)
}

/// Runs a whole sweep experiment in-process: `{"csv": ..., "json": ...}` as [`sweep_merge`].
#[pyfunction]
fn sweep<'py>(py: Python<'py>, experiment_toml: &str) -> PyResult<Bound<'py, PyDict>> {
    let experiment = experiment(experiment_toml)?;
    let counts = py.detach(|| sweep_run::run(&experiment, Shard::WHOLE, &|_| ()));
    let dict = PyDict::new(py);
    dict.set_item("csv", counts.csv())?;
    dict.set_item("json", counts.results_json())?;
    Ok(dict)
}

#[pymodule]
#[pyo3(name = "_bulwark")]
fn bulwark(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(uunifast, module)?)?;
    module.add_function(wrap_pyfunction!(task_set, module)?)?;
    module.add_function(wrap_pyfunction!(fp_rta, module)?)?;
    module.add_function(wrap_pyfunction!(fp_rta_responses, module)?)?;
    module.add_function(wrap_pyfunction!(edf_qpa, module)?)?;
    module.add_function(wrap_pyfunction!(edf_qpa_schedulable, module)?)?;
    module.add_function(wrap_pyfunction!(edf_utilisation, module)?)?;
    module.add_function(wrap_pyfunction!(global::global_fp_rta, module)?)?;
    module.add_function(wrap_pyfunction!(global::global_amc_rtb, module)?)?;
    module.add_function(wrap_pyfunction!(global::global_edf_gfb, module)?)?;
    module.add_function(wrap_pyfunction!(global::global_edf_bcl, module)?)?;
    module.add_function(wrap_pyfunction!(one_core::amc_rtb, module)?)?;
    module.add_function(wrap_pyfunction!(one_core::slot_supply_bound, module)?)?;
    module.add_function(wrap_pyfunction!(one_core::edf_slot_supply, module)?)?;
    module.add_function(wrap_pyfunction!(one_core::fp_rta_slot_supply, module)?)?;
    module.add_function(wrap_pyfunction!(components::component_set, module)?)?;
    module.add_function(wrap_pyfunction!(components::component_bounds, module)?)?;
    module.add_function(wrap_pyfunction!(simulate, module)?)?;
    module.add_function(wrap_pyfunction!(sweep_shard, module)?)?;
    module.add_function(wrap_pyfunction!(sweep_merge, module)?)?;
    module.add_function(wrap_pyfunction!(sweep, module)?)?;
    Ok(())
}
