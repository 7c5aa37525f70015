"""Bulwark from Python.

Task-set generation (``uunifast``, ``task_set``), classic schedulability tests (``fp_rta``,
``edf_qpa``, ``edf_utilisation``, and the lean ``fp_rta_responses`` and ``edf_qpa_schedulable``),
simulation (``simulate``) and sweeps (``sweep``,
``sweep_shard``, ``sweep_merge``) on plain lists, dicts and strings; times in integer
nanoseconds. ``bulwark.dask`` runs a sweep's shards on a Dask cluster.

Every function releases the GIL while the Rust code runs.
"""

from ._bulwark import (
    edf_qpa,
    edf_qpa_schedulable,
    edf_utilisation,
    fp_rta,
    fp_rta_responses,
    simulate,
    sweep,
    sweep_merge,
    sweep_shard,
    task_set,
    uunifast,
)

__all__ = [
    "edf_qpa",
    "edf_qpa_schedulable",
    "edf_utilisation",
    "fp_rta",
    "fp_rta_responses",
    "simulate",
    "sweep",
    "sweep_merge",
    "sweep_shard",
    "task_set",
    "uunifast",
]
