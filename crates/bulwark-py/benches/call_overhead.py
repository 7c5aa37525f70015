"""What a call from Python costs beyond the Rust work: the time per call of fp_rta on
ten-task sets, and of edf_utilisation on a one-task set (almost no Rust work), each over
many calls with the sets built before timing (warm cache). Compare the first with the
criterion figure of the Rust function alone (crates/bulwark-analysis/benches/classic.rs,
fp_rta_10_tasks); the difference is the per-call overhead of the binding.

    python crates/bulwark-py/benches/call_overhead.py --calls 100000
"""

import argparse
import time

import bulwark


def per_call_ns(function, arguments, calls):
    """Mean wall time per call, ns, cycling through the prepared arguments."""
    count = len(arguments)
    start = time.perf_counter_ns()
    for index in range(calls):
        function(arguments[index % count])
    return (time.perf_counter_ns() - start) / calls


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    sets = []
    for seed in range(64):
        tasks = bulwark.task_set(10, 0.7, seed)
        tasks.sort(key=lambda task: task["period"])
        sets.append(tasks)
    single = [[{"wcet": 1_000, "period": 10_000}]]
    empty_loop = per_call_ns(lambda _: None, sets, args.calls)
    print(f"empty Python call:           {empty_loop:8.0f} ns")
    print(f"fp_rta, 10 tasks:            {per_call_ns(bulwark.fp_rta, sets, args.calls):8.0f} ns")
    print(f"edf_utilisation, 1 task:     "
          f"{per_call_ns(bulwark.edf_utilisation, single, args.calls):8.0f} ns")


if __name__ == "__main__":
    main()
