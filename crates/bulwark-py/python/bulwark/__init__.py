"""Bulwark from Python.

Task-set generation (``uunifast``, ``task_set``), classic schedulability tests (``fp_rta``,
``edf_qpa``, ``edf_utilisation``, and the lean ``fp_rta_responses`` and
``edf_qpa_schedulable``), global multiprocessor tests with cores that terminations mask
and time partitions take (``global_fp_rta``, ``global_edf_gfb``, ``global_edf_bcl``; tasks
as tuples), reservations under Vestal's mode switch (``amc_rtb`` on one core,
``global_amc_rtb`` on more), one core's reservations beside
time partitions (``slot_supply_bound``, ``edf_slot_supply``, ``fp_rta_slot_supply``), the
CAmkES component paper's bounds on generated sets (``component_set``,
``component_bounds``), simulation (``simulate``) and sweeps (``sweep``,
``sweep_shard``, ``sweep_merge``) on plain lists, tuples, dicts and strings; times in integer
nanoseconds. ``bulwark.dask`` runs a sweep's shards on a Dask cluster.

Tasks are dicts ``{"wcet", "period", "deadline"?, "jitter"?, "blocking"?, "name"?}`` or,
faster, tuples ``(wcet, period[, deadline[, jitter[, blocking]]])``. ``jitter`` is release
jitter: Tindell's in ``fp_rta``, Spuri's in ``edf_qpa`` (a job has ``D - J`` from its latest
release); the EDF test has no blocking term, so it refuses a task with ``blocking`` above 0.

Every function releases the GIL while the Rust code runs.
"""

from ._bulwark import (
    amc_rtb,
    component_bounds,
    component_set,
    edf_qpa,
    edf_qpa_schedulable,
    edf_slot_supply,
    edf_utilisation,
    fp_rta,
    fp_rta_responses,
    fp_rta_slot_supply,
    global_amc_rtb,
    global_edf_bcl,
    global_edf_gfb,
    global_fp_rta,
    simulate,
    slot_supply_bound,
    sweep,
    sweep_merge,
    sweep_shard,
    task_set,
    uunifast,
)

__all__ = [
    "amc_rtb",
    "component_bounds",
    "component_set",
    "edf_qpa",
    "edf_qpa_schedulable",
    "edf_slot_supply",
    "edf_utilisation",
    "fp_rta",
    "fp_rta_responses",
    "fp_rta_slot_supply",
    "global_amc_rtb",
    "global_edf_bcl",
    "global_edf_gfb",
    "global_fp_rta",
    "simulate",
    "slot_supply_bound",
    "sweep",
    "sweep_merge",
    "sweep_shard",
    "task_set",
    "uunifast",
]
