//! The CAmkES component-IPC paper's schedulability comparison (Sudvarg et al., section 6 and
//! Appendix A) from Python: sets generated over the Fig. 7 topology with Table 3's protocols,
//! judged by the hyperbolic bound with blocking (Eq. 2), Liu and Layland with blocking
//! (Eq. 3), the bound for non-unique priorities (Eq. 4) and exact response-time analysis.
//!
//! The sets and verdicts are those of `bulwark reproduce camkes-sweep` and
//! `camkes-synthetic` ([`camkes_synthetic::generate_ppb`], [`camkes_synthetic::verdicts`]):
//! the same seed gives the same set here and there.

use bulwark_analysis::blocking::TaskTiming;
use bulwark_core::Priority;
use bulwark_lab::experiments::camkes_synthetic::{self, Configuration, Split, TABLE_3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;

use crate::{in_range, seed_of, utilisation_ppb};

/// The most sets one call may analyse (about 10 us each).
const MAX_SETS: u64 = 100_000_000;

/// The names of the four verdicts, in [`camkes_synthetic::verdicts`]'s order.
const BOUNDS: [&str; 4] = ["eq2", "eq4", "eq3", "rta"];

/// A Table 3 configuration by its number, or a ValueError saying which exist.
fn configuration(number: i128) -> PyResult<Configuration> {
    TABLE_3
        .into_iter()
        .find(|c| i128::from(c.number) == number)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "configuration = {number} is not in Table 3 (allowed: 1, 2, 3 or 4)"
            ))
        })
}

/// A work split by name.
fn split(name: &str) -> PyResult<Split> {
    match name {
        "equal" => Ok(Split::Equal),
        "short" => Ok(Split::ShortSections),
        other => Err(PyValueError::new_err(format!(
            "split = {other:?} is not a work split (allowed: \"equal\", a quarter of each task's \
             work in its own component and in each CPI of its chain; \"short\", 85 % in its \
             own component and 5 % in each CPI)"
        ))),
    }
}

/// A total utilisation for these sets, in ppb: the paper's range, 0 to 1.
fn set_utilisation(utilisation: f64) -> PyResult<u64> {
    let ppb = utilisation_ppb(utilisation)?;
    if ppb > bulwark_analysis::generate::PPB {
        return Err(PyValueError::new_err(format!(
            "utilisation {utilisation} is above 1 (allowed: 0 to 1, one processor, as in the \
             paper's section 6)"
        )));
    }
    Ok(ppb)
}

/// True when no two tasks share a priority (Eq. 2's precondition).
fn unique_priorities(timings: &[TaskTiming]) -> bool {
    let priorities: Vec<Priority> = timings.iter().map(|t| t.priority).collect();
    (1..priorities.len()).all(|i| !priorities[..i].contains(&priorities[i]))
}

/// One generated set: its tasks as the analysis sees them (`wcet` = `C_i` with protocol
/// overheads by Eqs. 7 and 8, `period` = `T_i` = `D_i`, `priority` = `p_i`, larger is more
/// important, `blocking` = `B_i` by Eqs. 5 and 6 or PIP's bound; ns) and the verdicts `eq2`,
/// `eq4`, `eq3`, `rta`, with `unique_priorities`. `split` is `"equal"` or `"short"`.
#[pyfunction]
pub fn component_set<'py>(
    py: Python<'py>,
    configuration: i128,
    split: &str,
    utilisation: f64,
    seed: i128,
) -> PyResult<Bound<'py, PyDict>> {
    let (configuration, split) = (self::configuration(configuration)?, self::split(split)?);
    let (utilisation, seed) = (set_utilisation(utilisation)?, seed_of(seed)?);
    let (names, timings, admitted) = py.detach(|| {
        let built = camkes_synthetic::generate_ppb(configuration, split, utilisation, seed);
        let timings = built.analysis.timings();
        let names: Vec<String> = built.system.tasks.iter().map(|t| t.name.clone()).collect();
        let admitted = camkes_synthetic::verdicts(&timings);
        (names, timings, admitted)
    });
    let tasks = PyList::empty(py);
    for (name, timing) in names.iter().zip(&timings) {
        let task = PyDict::new(py);
        task.set_item("name", name)?;
        task.set_item("wcet", timing.execution.as_nanos())?;
        task.set_item("period", timing.period.as_nanos())?;
        task.set_item("priority", timing.priority.0)?;
        task.set_item("blocking", timing.blocking.as_nanos())?;
        tasks.append(task)?;
    }
    let set = PyDict::new(py);
    set.set_item("tasks", tasks)?;
    for (name, verdict) in BOUNDS.iter().zip(admitted) {
        set.set_item(name, verdict)?;
    }
    set.set_item("unique_priorities", unique_priorities(&timings))?;
    Ok(set)
}

/// Counts over `sets` generated sets at `utilisation` (seeds `seed`, `seed + 1`, ...):
/// `sets`, how many each test admits (`eq2`, `eq4`, `eq3`, `rta`) and how many have
/// `unique_priorities`. The sets are analysed in parallel with the GIL released; counts are
/// sums, so they do not depend on the thread count.
#[pyfunction]
pub fn component_bounds<'py>(
    py: Python<'py>,
    configuration: i128,
    split: &str,
    utilisation: f64,
    sets: i128,
    seed: i128,
) -> PyResult<Bound<'py, PyDict>> {
    let (configuration, split) = (self::configuration(configuration)?, self::split(split)?);
    let (utilisation, first_seed) = (set_utilisation(utilisation)?, seed_of(seed)?);
    let sets = in_range("sets", sets, MAX_SETS)?;
    if first_seed.checked_add(sets).is_none() {
        return Err(PyValueError::new_err(format!(
            "seeds {first_seed} + {sets} sets overflow (allowed: seed + sets <= 2^64 - 1)"
        )));
    }
    // [admitted by eq2, eq4, eq3, rta, unique priorities].
    let counts = py.detach(|| {
        (0..sets)
            .into_par_iter()
            .map(|k| {
                let built = camkes_synthetic::generate_ppb(
                    configuration,
                    split,
                    utilisation,
                    first_seed + k,
                );
                let timings = built.analysis.timings();
                let admitted = camkes_synthetic::verdicts(&timings);
                let mut count = [0u64; 5];
                for (slot, verdict) in count.iter_mut().zip(admitted) {
                    *slot = u64::from(verdict);
                }
                count[4] = u64::from(unique_priorities(&timings));
                count
            })
            .reduce(|| [0; 5], |a, b| std::array::from_fn(|i| a[i] + b[i]))
    });
    let result = PyDict::new(py);
    result.set_item("sets", sets)?;
    for (name, count) in BOUNDS.iter().zip(counts) {
        result.set_item(name, count)?;
    }
    result.set_item("unique_priorities", counts[4])?;
    Ok(result)
}
