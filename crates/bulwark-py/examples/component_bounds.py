"""Acceptance ratio against utilisation of the CAmkES component-IPC paper's schedulability
tests (Sudvarg et al., section 6): the hyperbolic bound with blocking (Eq. 2, unique
priorities only), the bound for non-unique priorities (Eq. 4, Appendix A Theorem 2), Liu and
Layland with blocking (Eq. 3) and exact response-time analysis, on sets generated over the
Fig. 7 topology with one of Table 3's protocol configurations.

The sets are those of `bulwark reproduce camkes-sweep` (same generator, same seeds): with
--sets 2000 every ratio equals that report's table. In a notebook:

    import component_bounds as cb
    rows = cb.acceptance(configuration=1, split="short", sets=500)
    print(cb.table(rows)); cb.plot(rows)

From a shell:

    python crates/bulwark-py/examples/component_bounds.py --configuration 1 --split short \\
        --sets 2000 --plot acceptance.svg
"""

import argparse

import bulwark

#: The tests, as component_bounds names them, and their labels in the paper's terms.
TESTS = (("eq2", "Eq. 2"), ("eq4", "Eq. 4"), ("eq3", "Eq. 3"), ("rta", "RTA"))

#: The utilisation points of camkes-sweep, in hundredths: 0.05, 0.10, ..., 1.00.
HUNDREDTHS = tuple(range(5, 101, 5))


def first_seed(hundredths):
    """The seed of the first set at a point, as camkes-sweep draws them: set k at
    utilisation h / 100 has seed 0x5EE90000 + 100000 h + k."""
    return 0x5EE9_0000 + hundredths * 100_000


def acceptance(configuration=1, split="short", sets=200, hundredths=HUNDREDTHS):
    """One row per utilisation point: `utilisation`, `sets`, the count each test admits
    (`eq2`, `eq4`, `eq3`, `rta`) and the sets with `unique_priorities`."""
    rows = []
    for point in hundredths:
        counts = bulwark.component_bounds(configuration, split, point / 100, sets,
                                          first_seed(point))
        rows.append({"utilisation": point / 100, **counts})
    return rows


def table(rows):
    """The rows as a text table of acceptance ratios."""
    lines = [f"{'U':>5} {'sets':>6} " + " ".join(f"{label:>7}" for _, label in TESTS)]
    for row in rows:
        ratios = " ".join(f"{row[key] / row['sets']:7.3f}" for key, _ in TESTS)
        lines.append(f"{row['utilisation']:5.2f} {row['sets']:6d} {ratios}")
    return "\n".join(lines)


def plot(rows, path=None, title=None):
    """Acceptance ratio against utilisation, one line per test, with matplotlib: saved to
    `path` (its suffix picks SVG, PNG, ...) when given. Returns the figure, or None when
    matplotlib is not installed."""
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(figsize=(6, 4))
    utilisations = [row["utilisation"] for row in rows]
    for key, label in TESTS:
        axes.plot(utilisations, [row[key] / row["sets"] for row in rows], marker="o",
                  label=label)
    axes.set_xlabel("utilisation")
    axes.set_ylabel("acceptance ratio")
    axes.set_ylim(-0.02, 1.02)
    if title:
        axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    if path is not None:
        figure.savefig(path)
    return figure


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configuration", type=int, default=1, choices=(1, 2, 3, 4),
                        help="Table 3 row: the protocols of CPIs C, D and E")
    parser.add_argument("--split", default="short", choices=("equal", "short"),
                        help="each task's work: a quarter per component, or 85 %% in its own")
    parser.add_argument("--sets", type=int, default=200, help="sets per utilisation")
    parser.add_argument("--plot", metavar="FILE",
                        help="also draw the figure to FILE (.svg, .png), if matplotlib is "
                             "installed")
    args = parser.parse_args()

    rows = acceptance(args.configuration, args.split, args.sets)
    print(f"configuration {args.configuration}, {args.split} split: acceptance ratio")
    print(table(rows))
    # Every bound is a sufficient test (the paper's Theorem 2 for Eq. 4; Bini et al. for
    # Eq. 2; Sha et al. for Eq. 3), so none admits more sets than exact analysis at a point.
    for row in rows:
        for key, label in TESTS[:3]:
            if row[key] > row["rta"]:
                raise SystemExit(f"U = {row['utilisation']}: {label} admits more than RTA")
    if args.plot:
        title = f"Configuration {args.configuration}, {args.split} split, {args.sets} sets"
        if plot(rows, args.plot, title) is None:
            print("matplotlib is not installed: no plot")
        else:
            print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
