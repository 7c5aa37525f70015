//! The global multiprocessor tests of a cluster's reservations from Python: Bertogna and
//! Cirinei's response-time analysis for global fixed priority (with SPR servers, and with
//! AMC-rtb's argument for Vestal's mode switch), Goossens, Funk and Baruah's
//! test and Bertogna, Cirinei and Lipari's interference test for global EDF, the last and the
//! first with cores that terminations mask (one core at a time, up to each mask).
//!
//! Tasks are tuples in integer nanoseconds: `(wcet, period)` for EDF (implicit deadlines),
//! `(wcet, period, priority)` for fixed priority (priority 0 to 255, larger more important;
//! equal priorities in list order). `masks` lists each termination's mask in ns, and
//! `partitions` each time partition as `(cycle, [(start, end), ...])` in ns: like a mask, one
//! more interfering entity on one core, at most `L - sbf(L)` of its slots in a window `L`.

use bulwark_analysis::global_fp::{self, FpTask};
use bulwark_analysis::slot_supply::SlotSupply;
use bulwark_analysis::{amc, global_edf};
use bulwark_core::{Duration, Priority};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::in_range;
use crate::one_core::{amc_dict, responses, supply_or_why, vestal_tasks};

/// `cores` as the tests take it, or a ValueError (1 to 65,535).
fn cores_of(cores: i128) -> PyResult<u16> {
    let cores = in_range("cores", cores, u64::from(u16::MAX))?;
    match u16::try_from(cores) {
        Ok(0) | Err(_) => Err(PyValueError::new_err(
            "cores = 0 is out of range (allowed: an integer from 1 to 65535)",
        )),
        Ok(cores) => Ok(cores),
    }
}

fn nanos(values: &[u64]) -> Vec<Duration> {
    values.iter().map(|&ns| Duration::from_nanos(ns)).collect()
}

/// Each partition's slots as a supply, or a ValueError naming the partition.
fn supplies(partitions: &[(u64, Vec<(u64, u64)>)]) -> PyResult<Vec<SlotSupply>> {
    partitions
        .iter()
        .enumerate()
        .map(|(index, (cycle, slots))| {
            supply_or_why(*cycle, slots)
                .map_err(|why| PyValueError::new_err(format!("partition {index}: {why}")))
        })
        .collect()
}

/// Global fixed priority (Bertogna and Cirinei, RTSS 2007) on `cores` cores, each mask one
/// more interfering entity `min(M, R - C + 1)` and each partition `min(W(R), R - C + 1)`:
/// `schedulable`, and per task in the order given
/// its `response` bound (ns; `None` unless bounded within its period) and `outcome`
/// (`bounded`, `exceeds` or `not-computed`, below a task that exceeded). The tasks whose
/// indices `servers` lists are SPR sporadic servers `(e, p)`: their workload reaches `R + e`
/// back.
#[pyfunction]
#[pyo3(signature = (tasks, cores, masks = Vec::new(), partitions = Vec::new(), servers = Vec::new()))]
pub fn global_fp_rta(
    py: Python<'_>,
    tasks: Vec<(u64, u64, u8)>,
    cores: i128,
    masks: Vec<u64>,
    partitions: Vec<(u64, Vec<(u64, u64)>)>,
    servers: Vec<usize>,
) -> PyResult<Py<PyDict>> {
    let cores = cores_of(cores)?;
    if let Some(&index) = servers.iter().find(|&&index| index >= tasks.len()) {
        return Err(PyValueError::new_err(format!(
            "servers lists task {index}, but there are {} tasks (allowed: indices of the \
             tasks list)",
            tasks.len()
        )));
    }
    let tasks: Vec<FpTask> = (tasks.iter().enumerate())
        .map(|(index, &(wcet, period, priority))| FpTask {
            budget: Duration::from_nanos(wcet),
            period: Duration::from_nanos(period),
            priority: Priority(priority),
            sporadic_server: servers.contains(&index),
        })
        .collect();
    let masks = nanos(&masks);
    let partitions = supplies(&partitions)?;
    let rta = py.detach(|| global_fp::rta_partitioned(&tasks, cores, &masks, &partitions));
    let (responses, outcomes) = responses(&rta.responses);
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "schedulable"), rta.schedulable)?;
    dict.set_item(intern!(py, "responses"), responses)?;
    dict.set_item(intern!(py, "outcomes"), outcomes)?;
    Ok(dict.unbind())
}

/// AMC-rtb's argument on Bertogna and Cirinei's analysis for Vestal's mode switch on `cores`
/// cores: tasks `(low_wcet, high_wcet or None, period, priority)` as [`crate::one_core::amc_rtb`]
/// takes them, masks and partitions as [`global_fp_rta`]; returns the same fields as
/// `amc_rtb` (below a task whose bound passes its period nothing is computed).
#[pyfunction]
#[pyo3(signature = (tasks, cores, masks = Vec::new(), partitions = Vec::new()))]
pub fn global_amc_rtb(
    py: Python<'_>,
    tasks: Vec<(u64, Option<u64>, u64, u8)>,
    cores: i128,
    masks: Vec<u64>,
    partitions: Vec<(u64, Vec<(u64, u64)>)>,
) -> PyResult<Py<PyDict>> {
    let cores = cores_of(cores)?;
    let tasks = vestal_tasks(&tasks)?;
    let masks = nanos(&masks);
    let partitions = supplies(&partitions)?;
    let bounds = py.detach(|| {
        global_fp::with_partitions(&partitions, |beside| {
            amc::rtb_global(&tasks, cores, &masks, beside)
        })
    });
    amc_dict(py, &bounds)
}

/// Goossens, Funk and Baruah's test `U <= m - (m - 1) U_max` for implicit-deadline tasks on
/// `cores` cores, decided exactly: `schedulable`, `utilisation` and `bound` (floats, for
/// reports).
#[pyfunction]
pub fn global_edf_gfb(py: Python<'_>, tasks: Vec<(u64, u64)>, cores: i128) -> PyResult<Py<PyDict>> {
    let cores = cores_of(cores)?;
    let pairs: Vec<(Duration, Duration)> = tasks
        .iter()
        .map(|&(wcet, period)| (Duration::from_nanos(wcet), Duration::from_nanos(period)))
        .collect();
    let test = py.detach(|| global_edf::gfb(&pairs, cores));
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "schedulable"), test.schedulable)?;
    dict.set_item(intern!(py, "utilisation"), test.total.as_f64())?;
    dict.set_item(intern!(py, "bound"), test.bound_as_f64())?;
    Ok(dict.unbind())
}

/// Bertogna, Cirinei and Lipari's interference test for implicit-deadline tasks on `cores`
/// cores, each mask and each partition one more interfering entity: `schedulable`, and
/// `failing`, the index of the first task whose condition fails (`None` when none does).
#[pyfunction]
#[pyo3(signature = (tasks, cores, masks = Vec::new(), partitions = Vec::new()))]
pub fn global_edf_bcl(
    py: Python<'_>,
    tasks: Vec<(u64, u64)>,
    cores: i128,
    masks: Vec<u64>,
    partitions: Vec<(u64, Vec<(u64, u64)>)>,
) -> PyResult<Py<PyDict>> {
    let cores = cores_of(cores)?;
    let pairs: Vec<(Duration, Duration)> = tasks
        .iter()
        .map(|&(wcet, period)| (Duration::from_nanos(wcet), Duration::from_nanos(period)))
        .collect();
    let masks = nanos(&masks);
    let partitions = supplies(&partitions)?;
    let test = py.detach(|| global_edf::bcl_partitioned(&pairs, cores, &masks, &partitions));
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "schedulable"), test.schedulable)?;
    dict.set_item(intern!(py, "failing"), test.failing)?;
    Ok(dict.unbind())
}
