//! One core's reservation tests from Python: AMC-rtb for Vestal's mode switch
//! ([`bulwark_analysis::amc`]) and the tests against the supply time partitions leave
//! ([`bulwark_analysis::slot_supply`]), each a sporadic reservation `(e, p)` with deadline `p`.
//!
//! Times are integer nanoseconds; priorities 0 to 255, larger more important, equal ones in
//! list order. `masks` lists each termination's mask, added to every window.

use bulwark_analysis::amc::{self, McTask};
use bulwark_analysis::global_fp::Response;
use bulwark_analysis::slot_supply::{self, EdfOnSupply, SlotSupply};
use bulwark_core::{Duration, Priority};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `(bound ns or None, outcome)` of each response.
pub(crate) fn responses(responses: &[Response]) -> (Vec<Option<u64>>, Vec<&'static str>) {
    responses
        .iter()
        .map(|r| {
            let outcome = match r {
                Response::Bounded(_) => "bounded",
                Response::Exceeds(_) => "exceeds",
                Response::NotComputed => "not-computed",
            };
            (r.bound().map(Duration::as_nanos), outcome)
        })
        .unzip()
}

fn positive_period(index: usize, period: u64) -> PyResult<Duration> {
    if period == 0 {
        return Err(PyValueError::new_err(format!(
            "task {index}: period 0 (allowed: a period above 0 ns)"
        )));
    }
    Ok(Duration::from_nanos(period))
}

fn masked(masks: &[u64]) -> u64 {
    masks
        .iter()
        .fold(0u64, |sum, &mask| sum.saturating_add(mask))
}

/// AMC-rtb (Baruah, Burns and Davis, RTSS 2011) on one core: tasks `(low_wcet, high_wcet,
/// period, priority)`, `high_wcet` `None` for a low-criticality task (`low_wcet <= high_wcet`).
/// Returns `schedulable`; per task `low_responses` (`R^L`, ns, `None` unless bounded within
/// the period) and `low_outcomes`; and `high_responses` / `high_outcomes` (`R^*`, `None` for
/// a low-criticality task).
#[pyfunction]
#[pyo3(signature = (tasks, masks = Vec::new()))]
pub fn amc_rtb(
    py: Python<'_>,
    tasks: Vec<(u64, Option<u64>, u64, u8)>,
    masks: Vec<u64>,
) -> PyResult<Py<PyDict>> {
    let tasks = vestal_tasks(&tasks)?;
    let masks: Vec<Duration> = masks.iter().map(|&m| Duration::from_nanos(m)).collect();
    let bounds = py.detach(|| amc::rtb(&tasks, &masks));
    amc_dict(py, &bounds)
}

/// Tasks `(low_wcet, high_wcet or None, period, priority)` as Vestal tasks with `D = T`, or
/// a ValueError naming the task.
pub(crate) fn vestal_tasks(tasks: &[(u64, Option<u64>, u64, u8)]) -> PyResult<Vec<McTask>> {
    tasks
        .iter()
        .enumerate()
        .map(|(index, &(low, high, period, priority))| {
            if high.is_some_and(|high| high < low) {
                return Err(PyValueError::new_err(format!(
                    "task {index}: high_wcet {} < low_wcet {low} (allowed: low_wcet <= \
                     high_wcet, the high-assurance bound being the larger)",
                    high.unwrap_or_default()
                )));
            }
            let period = positive_period(index, period)?;
            Ok(McTask {
                low_budget: Duration::from_nanos(low),
                high_budget: high.map(Duration::from_nanos),
                period,
                deadline: period,
                priority: Priority(priority),
                sporadic_server: false,
            })
        })
        .collect()
}

/// AMC-rtb's bounds as the Python functions return them.
pub(crate) fn amc_dict(py: Python<'_>, bounds: &amc::Amc) -> PyResult<Py<PyDict>> {
    let (low, low_outcomes) = responses(&bounds.low);
    let high_responses: Vec<Option<u64>> = (bounds.high.iter())
        .map(|r| r.and_then(|r| r.bound()).map(Duration::as_nanos))
        .collect();
    let high_outcomes: Vec<Option<&str>> = (bounds.high.iter())
        .map(|r| r.map(|r| responses(&[r]).1[0]))
        .collect();
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "schedulable"), bounds.schedulable)?;
    dict.set_item(intern!(py, "low_responses"), low)?;
    dict.set_item(intern!(py, "low_outcomes"), low_outcomes)?;
    dict.set_item(intern!(py, "high_responses"), high_responses)?;
    dict.set_item(intern!(py, "high_outcomes"), high_outcomes)?;
    Ok(dict.unbind())
}

/// The supply `slots` (`(start, end)` ns within `cycle`) leave, or a ValueError.
pub(crate) fn supply_of(cycle: u64, slots: &[(u64, u64)]) -> PyResult<SlotSupply> {
    supply_or_why(cycle, slots).map_err(PyValueError::new_err)
}

/// The supply `slots` leave every `cycle`, or what is wrong with them.
pub(crate) fn supply_or_why(cycle: u64, slots: &[(u64, u64)]) -> Result<SlotSupply, String> {
    for (index, &(start, end)) in slots.iter().enumerate() {
        if start >= end || end > cycle {
            return Err(format!(
                "slot {index}: [{start}, {end}) (allowed: start < end <= cycle = {cycle})"
            ));
        }
    }
    let slots: Vec<(Duration, Duration)> = slots
        .iter()
        .map(|&(start, end)| (Duration::from_nanos(start), Duration::from_nanos(end)))
        .collect();
    SlotSupply::new(Duration::from_nanos(cycle), &slots)
        .ok_or_else(|| "cycle = 0 (allowed: a cycle above 0 ns)".to_owned())
}

fn reservations(tasks: &[(u64, u64, u8)]) -> PyResult<Vec<slot_supply::Reservation>> {
    tasks
        .iter()
        .enumerate()
        .map(|(index, &(budget, period, priority))| {
            Ok(slot_supply::Reservation {
                budget: Duration::from_nanos(budget),
                period: positive_period(index, period)?,
                priority: Priority(priority),
            })
        })
        .collect()
}

/// `sbf(t)` for each of `windows`: the least time `slots` (`(start, end)` ns, repeating every
/// `cycle`) leave in any window of that length.
#[pyfunction]
pub fn slot_supply_bound(
    cycle: u64,
    slots: Vec<(u64, u64)>,
    windows: Vec<u64>,
) -> PyResult<Vec<u64>> {
    let supply = supply_of(cycle, &slots)?;
    Ok(windows.iter().map(|&t| supply.least_supply(t)).collect())
}

/// EDF on the supply `slots` leave: reservations `(budget, period)` (deadline = period),
/// the demand test at every deadline of the hyperperiod. Returns `verdict` (`schedulable`,
/// `demand-exceeds`, `overloaded` or `too-many-deadlines`) and, when the demand exceeds,
/// `at`, `demand` and `supply` (ns).
#[pyfunction]
#[pyo3(signature = (tasks, cycle, slots, masks = Vec::new()))]
pub fn edf_slot_supply(
    py: Python<'_>,
    tasks: Vec<(u64, u64)>,
    cycle: u64,
    slots: Vec<(u64, u64)>,
    masks: Vec<u64>,
) -> PyResult<Py<PyDict>> {
    let supply = supply_of(cycle, &slots)?;
    let tasks: Vec<(u64, u64, u8)> = tasks.iter().map(|&(e, p)| (e, p, 0)).collect();
    let reservations = reservations(&tasks)?;
    let verdict = py.detach(|| slot_supply::edf(&reservations, &supply, masked(&masks)));
    let dict = PyDict::new(py);
    let name = match verdict {
        EdfOnSupply::Schedulable => "schedulable",
        EdfOnSupply::DemandExceeds { at, demand, supply } => {
            dict.set_item(intern!(py, "at"), at.as_nanos())?;
            dict.set_item(intern!(py, "demand"), demand.as_nanos())?;
            dict.set_item(intern!(py, "supply"), supply.as_nanos())?;
            "demand-exceeds"
        }
        EdfOnSupply::Overloaded => "overloaded",
        EdfOnSupply::TooManyDeadlines => "too-many-deadlines",
    };
    dict.set_item(intern!(py, "verdict"), name)?;
    dict.set_item(
        intern!(py, "schedulable"),
        verdict == EdfOnSupply::Schedulable,
    )?;
    Ok(dict.unbind())
}

/// Fixed priority on the supply `slots` leave: reservations `(budget, period, priority)`,
/// `R = sbf^-1(e + M + sum_hp ceil(R / p_j) e_j)`. Returns `schedulable`, `responses` (ns,
/// `None` unless bounded within the period) and `outcomes`.
#[pyfunction]
#[pyo3(signature = (tasks, cycle, slots, masks = Vec::new()))]
pub fn fp_rta_slot_supply(
    py: Python<'_>,
    tasks: Vec<(u64, u64, u8)>,
    cycle: u64,
    slots: Vec<(u64, u64)>,
    masks: Vec<u64>,
) -> PyResult<Py<PyDict>> {
    let supply = supply_of(cycle, &slots)?;
    let reservations = reservations(&tasks)?;
    let bounds = py.detach(|| slot_supply::fixed_priority(&reservations, &supply, masked(&masks)));
    let (responses, outcomes) = responses(&bounds);
    let dict = PyDict::new(py);
    dict.set_item(
        intern!(py, "schedulable"),
        outcomes.iter().all(|&o| o == "bounded"),
    )?;
    dict.set_item(intern!(py, "responses"), responses)?;
    dict.set_item(intern!(py, "outcomes"), outcomes)?;
    Ok(dict.unbind())
}
