"""One core's reservation tests: AMC-rtb and the tests against time partitions' supply, by
hand and against plain-Python implementations written here from the equations."""

import math
import random

import pytest

import bulwark

MS = 1_000_000


def amc_oracle(tasks):
    """AMC-rtb from its equations on (C^L, C^H or None, T, priority), time in ms: per task
    (R^L or None, R^* or None), None when the iteration passes T."""

    def rta(own, higher, constant, deadline):
        response = own + constant + sum(c for c, _ in higher)
        while True:
            following = own + constant + sum(math.ceil(response / t) * c for c, t in higher)
            if following > deadline:
                return None
            if following == response:
                return response
            response = following

    order = sorted(range(len(tasks)), key=lambda i: -tasks[i][3])
    bounds = {}
    for rank, i in enumerate(order):
        low, high, period, _ = tasks[i]
        above = [tasks[j] for j in order[:rank]]
        low_response = rta(low, [(a[0], a[2]) for a in above], 0, period)
        high_response = None
        if high is not None and low_response is not None:
            before_switch = sum(
                math.ceil(low_response / a[2]) * a[0] for a in above if a[1] is None
            )
            high_response = rta(
                high, [(a[1], a[2]) for a in above if a[1] is not None], before_switch, period
            )
        bounds[i] = (low_response, high_response)
    return [bounds[i] for i in range(len(tasks))]


def test_amc_rtb_by_hand():
    # a low (2, 10): R^L = 2. b high (3, 6, 20): R^L = 3 + 2 = 5, R^* = 6 + ceil(5/10) 2 = 8.
    # c high (4, 10, 40): R^L = 4 + 2 + 3 = 9; R^* = 10 + ceil(9/10) 2 + ceil(R/20) 6 = 18.
    result = bulwark.amc_rtb(
        [(2 * MS, None, 10 * MS, 3), (3 * MS, 6 * MS, 20 * MS, 2), (4 * MS, 10 * MS, 40 * MS, 1)]
    )
    assert result["schedulable"]
    assert result["low_responses"] == [2 * MS, 5 * MS, 9 * MS]
    assert result["high_responses"] == [None, 8 * MS, 18 * MS]
    assert result["high_outcomes"] == [None, "bounded", "bounded"]


def test_amc_rtb_agrees_with_the_equations():
    rng = random.Random(7)
    shown = 0
    for _ in range(1500):
        tasks = []
        for _ in range(rng.randint(1, 6)):
            period = rng.choice([5, 8, 10, 20, 25, 40, 50, 100])
            low = rng.randint(1, max(1, period // 3))
            high = rng.randint(low, period) if rng.random() < 0.5 else None
            tasks.append((low, high, period, rng.randint(0, 3)))
        expected = amc_oracle(tasks)
        result = bulwark.amc_rtb(
            [(c * MS, None if h is None else h * MS, t * MS, p) for c, h, t, p in tasks]
        )
        for index, (low, high) in enumerate(expected):
            assert result["low_responses"][index] == (None if low is None else low * MS), tasks
            if tasks[index][1] is not None and low is not None:
                assert result["high_responses"][index] == (
                    None if high is None else high * MS
                ), tasks
        schedulable = all(
            low is not None and (task[1] is None or high is not None)
            for task, (low, high) in zip(tasks, expected)
        )
        assert result["schedulable"] == schedulable, tasks
        shown += schedulable
    assert 200 < shown < 1400


def test_amc_rtb_refuses_bad_tasks():
    with pytest.raises(ValueError, match="high_wcet 1 < low_wcet 2"):
        bulwark.amc_rtb([(2, 1, 10, 0)])
    with pytest.raises(ValueError, match="period 0"):
        bulwark.amc_rtb([(1, None, 0, 0)])


def brute_supply(cycle, slots, length):
    """The least free time in a window of `length` (ms), over every whole-ms start."""
    busy = [any(a <= x < b for a, b in slots) for x in range(cycle)]
    return min(
        sum(1 for x in range(start, start + length) if not busy[x % cycle])
        for start in range(cycle)
    )


def test_slot_supply_bound_agrees_with_a_brute_force():
    rng = random.Random(3)
    for _ in range(60):
        cycle = rng.choice([10, 20, 40])
        cuts = sorted(rng.sample(range(cycle + 1), rng.choice([2, 4])))
        slots = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2) if cuts[i] < cuts[i + 1]]
        windows = list(range(0, 3 * cycle))
        got = bulwark.slot_supply_bound(
            cycle * MS, [(a * MS, b * MS) for a, b in slots], [t * MS for t in windows]
        )
        assert got == [brute_supply(cycle, slots, t) * MS for t in windows], (cycle, slots)


def test_slot_supply_tests_by_hand():
    # The slot [0, 40) of 100 ms. Fixed priority: a (10, 50) at 5 has R = 50; b (15, 100) at
    # 4: 25 ms of supply by 65, a's second release adds 10: 35 by 75, R = 75.
    slots = [(0, 40 * MS)]
    result = bulwark.fp_rta_slot_supply(
        [(10 * MS, 50 * MS, 5), (15 * MS, 100 * MS, 4)], 100 * MS, slots
    )
    assert result["schedulable"] and result["responses"] == [50 * MS, 75 * MS]
    # EDF: 11 ms due at 50, where sbf(50) = 10.
    result = bulwark.edf_slot_supply([(11 * MS, 50 * MS), (15 * MS, 100 * MS)], 100 * MS, slots)
    assert result["verdict"] == "demand-exceeds"
    assert (result["at"], result["demand"], result["supply"]) == (50 * MS, 11 * MS, 10 * MS)
    # U = 0.7 > 0.6 left by the slot.
    assert bulwark.edf_slot_supply([(35 * MS, 50 * MS)], 100 * MS, slots)["verdict"] == "overloaded"
    with pytest.raises(ValueError, match="slot 0"):
        bulwark.edf_slot_supply([(1, 10)], 100, [(50, 150)])


def test_slot_supply_tests_agree_with_a_brute_force():
    rng = random.Random(11)
    for _ in range(200):
        cycle = rng.choice([10, 20, 50])
        cuts = sorted(rng.sample(range(cycle), 2))
        slots = [(cuts[0], cuts[1])]
        tasks = [
            (rng.randint(1, 6), rng.choice([10, 20, 25, 50]), rng.randint(0, 3))
            for _ in range(rng.randint(1, 3))
        ]
        hyperperiod = math.lcm(cycle, *[t for _, t, _ in tasks])
        supply = [brute_supply(cycle, slots, t) for t in range(hyperperiod + 1)]
        free = cycle - (cuts[1] - cuts[0])
        overloaded = sum(e * (hyperperiod // t) for e, t, _ in tasks) > free * (hyperperiod // cycle)
        demand_ok = all(
            sum((t // p) * e for e, p, _ in tasks) <= supply[t] for t in range(1, hyperperiod + 1)
        )
        ms_slots = [(a * MS, b * MS) for a, b in slots]
        edf = bulwark.edf_slot_supply([(e * MS, p * MS) for e, p, _ in tasks], cycle * MS, ms_slots)
        assert edf["schedulable"] == (not overloaded and demand_ok), (cycle, slots, tasks)
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i][2])
        expected = [None] * len(tasks)
        for rank, i in enumerate(order):
            e, p, _ = tasks[i]
            above = [tasks[j] for j in order[:rank]]
            expected[i] = next(
                (
                    t
                    for t in range(1, p + 1)
                    if supply[t] >= e + sum(math.ceil(t / q) * c for c, q, _ in above)
                ),
                None,
            )
        fp = bulwark.fp_rta_slot_supply([(e * MS, p * MS, q) for e, p, q in tasks], cycle * MS, ms_slots)
        assert fp["responses"] == [None if r is None else r * MS for r in expected], (
            cycle,
            slots,
            tasks,
        )
