"""Acceptance ratio of fixed priorities (rate monotonic, exact response-time analysis) and
EDF (exact QPA) on random task sets drawn with UUniFast at a few total utilisations.

    python crates/bulwark-py/examples/schedulability.py --sets 500 --tasks 8
"""

import argparse

import bulwark

MS = 1_000_000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=200, help="task sets per utilisation")
    parser.add_argument("--tasks", type=int, default=8, help="tasks per set")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    print(f"{'U':>5} {'sets':>6} {'FP (RM)':>9} {'EDF':>9}")
    for step in range(6):
        utilisation = 0.75 + 0.05 * step
        fp_accepted = edf_accepted = 0
        for index in range(args.sets):
            # One seed per (utilisation, set): every row is reproducible on its own.
            seed = args.seed * 1_000_003 + step * args.sets + index
            tasks = bulwark.task_set(args.tasks, utilisation, seed,
                                     min_period=10 * MS, max_period=1000 * MS)
            # Rate monotonic: shorter period, higher priority (fp_rta wants that order).
            tasks.sort(key=lambda task: task["period"])
            fp = all(task["schedulable"] for task in bulwark.fp_rta(tasks))
            edf = bulwark.edf_qpa(tasks)["schedulable"]
            # EDF is optimal on one processor: a set FP schedules, EDF schedules too.
            if fp and not edf:
                raise SystemExit(f"U = {utilisation:.2f}, set {index}: FP yes but EDF no")
            fp_accepted += fp
            edf_accepted += edf
        print(f"{utilisation:5.2f} {args.sets:6d} {fp_accepted / args.sets:9.3f} "
              f"{edf_accepted / args.sets:9.3f}")


if __name__ == "__main__":
    main()
