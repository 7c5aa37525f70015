"""Run a sweep's shards on a Dask cluster and merge them.

``run_sweep(client, experiment_toml, shards)`` maps ``bulwark.sweep_shard`` over the shard
indices on ``client`` (a ``dask.distributed.Client``), gathers the shards' JSON and merges
them with ``bulwark.sweep_merge``: the result is byte for byte the unsplit run's
``results.csv`` and ``results.json``.

A script that starts a ``LocalCluster`` of worker processes must do so under
``if __name__ == "__main__":``: the workers are spawned and import the script again.
"""

from . import sweep_merge, sweep_shard


def _shard(experiment_toml, index, count):
    # Imported on the worker, so the task pickles as a reference to this module.
    return sweep_shard(experiment_toml, index, count)


def shard_futures(client, experiment_toml, shards):
    """One future per shard ``0..shards``, each the shard's counts as JSON text."""
    if shards < 1:
        raise ValueError(f"shards = {shards} (allowed: 1 or more)")
    indices = list(range(shards))
    # pure=False: the same arguments are never deduplicated away by Dask's key hashing.
    return client.map(
        _shard,
        [experiment_toml] * shards,
        indices,
        [shards] * shards,
        pure=False,
    )


def run_sweep(client, experiment_toml, shards):
    """``{"csv": ..., "json": ...}`` of the experiment, computed as ``shards`` Dask tasks."""
    futures = shard_futures(client, experiment_toml, shards)
    return sweep_merge(client.gather(futures))
