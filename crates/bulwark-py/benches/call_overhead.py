"""What a call from Python costs beyond the Rust work, per call, on the ten-task sets of the
criterion benchmark crates/bulwark-analysis/benches/classic.rs (the same 64 sets: UUniFast,
U = 0.8, log-uniform periods 1-100 ms, rate-monotonic order; for EDF the same constrained
deadlines), with tasks given as dicts and as tuples, and each result as the full dicts and
as the lean verdict. The sets are built before timing; each call takes the next set.

The overhead of a call is its time here minus the criterion time of its Rust work alone on
the same sets: fp_rta_10_tasks and edf_qpa_10_tasks (bulwark-analysis's classic bench) for
fp_rta, fp_rta_responses and edf_qpa_schedulable; edf_qpa_explained_10_tasks (QPA, the exact
utilisation and the explanation sentence) for edf_qpa; edf_utilisation_10_tasks for
edf_utilisation (bulwark-py's rust_work bench). Run criterion first, in the same session, and
this script reads its estimates from $CARGO_TARGET_DIR/criterion (or --criterion DIR):

    cargo bench -p bulwark-analysis --bench classic -- _10_tasks
    cargo bench -p bulwark-py --bench rust_work
    python crates/bulwark-py/benches/call_overhead.py --calls 200000
"""

import argparse
import json
import os
import pathlib
import time

import bulwark

MS = 1_000_000
POOL = 64


def run_ns(function, arguments, calls):
    """Mean wall time per call, ns, of one run of `calls` calls cycling through the prepared
    arguments."""
    count = len(arguments)
    start = time.perf_counter_ns()
    for index in range(calls):
        function(arguments[index % count])
    return (time.perf_counter_ns() - start) / calls


def best_ns(lines, calls, repeat):
    """For each (function, arguments), the best of `repeat` runs (as timeit advises). The
    runs go round the lines in turn, so that a burst of other work on a shared machine
    falls on all of them alike rather than on one."""
    best = [float("inf")] * len(lines)
    for _ in range(repeat):
        for position, (function, arguments) in enumerate(lines):
            best[position] = min(best[position], run_ns(function, arguments, calls))
    return best


def criterion_sets(constrained):
    """The criterion bench's sets, as dicts, most important (shortest period) first."""
    sets = []
    for seed in range(POOL):
        tasks = bulwark.task_set(10, 0.8, seed, min_period=1 * MS, max_period=100 * MS)
        if constrained:
            # classic.rs: a deterministic spread of deadlines between (C + T) / 2 and T, by
            # the task's index before the rate-monotonic sort.
            for index, task in enumerate(tasks):
                slack = (task["period"] - task["wcet"]) // 2
                task["deadline"] = task["wcet"] + slack + slack * (index % 3) // 3
        tasks.sort(key=lambda task: task["period"])  # stable, as classic.rs's sort_by_key
        sets.append(tasks)
    return sets


def as_tuples(sets):
    return [[(t["wcet"], t["period"], t["deadline"]) for t in tasks] for tasks in sets]


def criterion_ns(directory, name):
    """Criterion's headline time of its last run of `name` (the slope estimate it prints;
    the mean when there is no slope), ns; None when there is no run."""
    path = pathlib.Path(directory) / name / "new" / "estimates.json"
    try:
        estimates = json.loads(path.read_text())
        return (estimates.get("slope") or estimates["mean"])["point_estimate"]
    except (OSError, KeyError, TypeError, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000, help="calls per run")
    parser.add_argument("--repeat", type=int, default=7, help="runs; the best counts")
    target = os.environ.get("CARGO_TARGET_DIR", pathlib.Path(__file__).parents[3] / "target")
    parser.add_argument("--criterion", default=pathlib.Path(target) / "criterion",
                        help="criterion's output folder (default: $CARGO_TARGET_DIR/criterion)")
    args = parser.parse_args()

    fp_dicts = criterion_sets(constrained=False)
    fp_tuples = as_tuples(fp_dicts)
    edf_dicts = criterion_sets(constrained=True)
    edf_tuples = as_tuples(edf_dicts)
    single = [[(1_000, 10_000)]]
    benches = {
        "fp": "fp_rta_10_tasks",
        "edf": "edf_qpa_10_tasks",
        "edf-explained": "edf_qpa_explained_10_tasks",
        "utilisation": "edf_utilisation_10_tasks",
    }
    rust = {key: criterion_ns(args.criterion, name) for key, name in benches.items()}

    lines = [
        ("empty Python call", lambda _: None, fp_tuples, None),
        ("fp_rta, 10 dicts -> dicts", bulwark.fp_rta, fp_dicts, "fp"),
        ("fp_rta, 10 tuples -> dicts", bulwark.fp_rta, fp_tuples, "fp"),
        ("fp_rta_responses, 10 dicts -> list", bulwark.fp_rta_responses, fp_dicts, "fp"),
        ("fp_rta_responses, 10 tuples -> list", bulwark.fp_rta_responses, fp_tuples, "fp"),
        ("edf_qpa, 10 dicts -> dict", bulwark.edf_qpa, edf_dicts, "edf-explained"),
        ("edf_qpa, 10 tuples -> dict", bulwark.edf_qpa, edf_tuples, "edf-explained"),
        ("edf_qpa_schedulable, 10 dicts -> bool", bulwark.edf_qpa_schedulable, edf_dicts,
         "edf"),
        ("edf_qpa_schedulable, 10 tuples -> bool", bulwark.edf_qpa_schedulable, edf_tuples,
         "edf"),
        ("edf_utilisation, 10 dicts", bulwark.edf_utilisation, edf_dicts, "utilisation"),
        ("edf_utilisation, 10 tuples", bulwark.edf_utilisation, edf_tuples, "utilisation"),
        ("edf_utilisation, 1 tuple", bulwark.edf_utilisation, single, None),
    ]
    for key, name in benches.items():
        figure = f"{rust[key]:8.0f} ns" if rust[key] is not None else "(not found)"
        print(f"{'criterion ' + name:<44} {figure}")
    timed = best_ns([(function, arguments) for _, function, arguments, _ in lines],
                    args.calls, args.repeat)
    for (label, _, _, rust_key), python in zip(lines, timed):
        line = f"{label:<44} {python:8.0f} ns"
        if rust_key and rust[rust_key] is not None:
            line += f"   overhead {python - rust[rust_key]:6.0f} ns"
        print(line)

if __name__ == "__main__":
    main()
