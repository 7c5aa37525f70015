"""Sweeps: the whole run equals its shards merged, in-process, on a Dask LocalCluster of two
worker processes, and from the CLI."""

import csv
import io
import subprocess

import pytest

import bulwark

SHARDS = 3


def merged_shards(experiment_text, shards):
    return bulwark.sweep_merge(
        [bulwark.sweep_shard(experiment_text, index, shards) for index in range(shards)]
    )


@pytest.fixture(scope="module")
def whole(experiment_text):
    return bulwark.sweep(experiment_text)


def test_whole_sweep_equals_three_shards_merged(experiment_text, whole):
    assert merged_shards(experiment_text, SHARDS) == whole
    # Merging is order-free: the shards carry their index.
    parts = [bulwark.sweep_shard(experiment_text, index, SHARDS) for index in range(SHARDS)]
    assert bulwark.sweep_merge(parts[::-1]) == whole


def test_sweep_results_respect_the_tests_dominance(whole):
    rows = list(csv.DictReader(io.StringIO(whole["csv"])))
    # small.toml: tasks 3 and 6 x U = 0.6, 0.7, 0.8, 0.9.
    assert [(row["tasks"], row["utilisation"]) for row in rows] == [
        (n, u) for n in ("3", "6") for u in ("0.6", "0.7", "0.8", "0.9")
    ]
    for row in rows:
        ratio = {name: float(value) for name, value in row.items()
                 if name not in ("tasks", "utilisation", "sets")}
        assert row["sets"] == "25"
        assert all(0.0 <= value <= 1.0 for value in ratio.values())
        # Per set: DM is the optimal fixed-priority order for D <= T (Leung and Whitehead),
        # Audsley's OPA finds one whenever any exists, and EDF is optimal on one processor;
        # the utilisation bounds are sufficient tests for RM. So the ratios are ordered.
        assert ratio["liu-layland"] <= ratio["hyperbolic"] <= ratio["fp-rta-rm"]
        assert ratio["fp-rta-rm"] <= ratio["fp-rta-dm"] <= ratio["fp-audsley"]
        assert ratio["fp-audsley"] <= ratio["edf-qpa"] <= ratio["edf-utilisation"]


def test_sweep_equals_the_cli(cli, experiment_path, whole, tmp_path):
    subprocess.run([cli, "sweep", str(experiment_path), "--out", str(tmp_path)], check=True,
                   stdout=subprocess.DEVNULL, timeout=120)
    assert (tmp_path / "results.csv").read_text() == whole["csv"]
    assert (tmp_path / "results.json").read_text() == whole["json"]


def test_shards_missing_or_out_of_range_are_value_errors(experiment_text):
    parts = [bulwark.sweep_shard(experiment_text, index, 4) for index in (0, 1, 3)]
    with pytest.raises(ValueError, match="shards missing: 2/4"):
        bulwark.sweep_merge(parts)
    with pytest.raises(ValueError, match="not i/N"):
        bulwark.sweep_shard(experiment_text, 4, 4)
    with pytest.raises(ValueError, match="not a shard's JSON"):
        bulwark.sweep_merge(["{}"])
    with pytest.raises(ValueError, match="<experiment>"):
        bulwark.sweep("name = 3")


@pytest.fixture(scope="module")
def dask_client():
    """A LocalCluster of two worker processes, closed however the tests end."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    try:
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


@pytest.mark.timeout(300)
def test_dask_local_cluster_equals_in_process(dask_client, experiment_text, whole):
    import bulwark.dask

    assert len(dask_client.scheduler_info()["workers"]) == 2
    assert bulwark.dask.run_sweep(dask_client, experiment_text, SHARDS) == whole
    # More shards than workers: still the same bytes.
    assert bulwark.dask.run_sweep(dask_client, experiment_text, 7) == whole
    with pytest.raises(ValueError, match="shards = 0"):
        bulwark.dask.run_sweep(dask_client, experiment_text, 0)
