"""Generation, the classic tests and simulation from Python, against hand-worked values and
the CLI's own output."""

import json
import math
import subprocess

import pytest

import bulwark
from conftest import REPO

MS = 1_000_000


def implicit(*pairs):
    """Tasks from (C, T) pairs in ms, deadlines equal to periods, most important first."""
    return [{"wcet": c * MS, "period": t * MS} for c, t in pairs]


def test_fp_rta_by_hand():
    # C = (1, 2, 3), T = D = (4, 6, 12) ms, rate-monotonic order. R_i = C_i + sum_{j<i}
    # ceil(R_i / T_j) C_j, iterated from R_i = C_i + sum C_j (Joseph and Pandya):
    #   R1 = 1.
    #   R2: 3 -> 2 + ceil(3/4)*1 = 3. Fixed point, R2 = 3.
    #   R3: 6 -> 3 + ceil(6/4)*1 + ceil(6/6)*2 = 7 -> 3 + 2*1 + 2*2 = 9
    #       -> 3 + ceil(9/4)*1 + ceil(9/6)*2 = 3 + 3 + 4 = 10 -> 3 + 3 + 4 = 10. R3 = 10 <= 12.
    result = bulwark.fp_rta(implicit((1, 4), (2, 6), (3, 12)))
    assert [task["response"] for task in result] == [1 * MS, 3 * MS, 10 * MS]
    assert [task["deadline"] for task in result] == [4 * MS, 6 * MS, 12 * MS]
    assert all(task["schedulable"] and task["outcome"] == "schedulable" for task in result)
    assert [task["name"] for task in result] == ["task0", "task1", "task2"]


def test_fp_rta_miss_by_hand():
    # (C, T) = (2, 5), (4, 7) ms: R2: 6 -> 4 + ceil(6/5)*2 = 8 -> 4 + ceil(8/5)*2 = 8 > 7.
    first, second = bulwark.fp_rta(implicit((2, 5), (4, 7)))
    assert first["response"] == 2 * MS and first["schedulable"]
    assert second["response"] == 8 * MS and not second["schedulable"]
    assert second["outcome"] == "misses"


def test_fp_rta_on_tuples_by_hand():
    # The sets worked by hand above, as (C, T) and (C, T, D) tuples: the same response times
    # (1, 3, 10 ms; and 2 ms, then 8 > 7 ms), and the same dicts as from dict input.
    tuples = [(1 * MS, 4 * MS), (2 * MS, 6 * MS, 6 * MS), (3 * MS, 12 * MS)]
    assert bulwark.fp_rta_responses(tuples) == [1 * MS, 3 * MS, 10 * MS]
    assert bulwark.fp_rta(tuples) == bulwark.fp_rta(implicit((1, 4), (2, 6), (3, 12)))
    # A miss is None in the lean form (R2 = 8 ms > D2 = 7 ms).
    assert bulwark.fp_rta_responses([(2 * MS, 5 * MS), (4 * MS, 7 * MS)]) == [2 * MS, None]
    # Jitter and blocking by position: (C, T, D, J, B) = (1, 4, 4, 0, 1), (2, 6, 6, 1, 0).
    # R1 = B1 + C1 = 2. R2: w = 2 + ceil(w / 4) * 1 from w = 3 -> 2 + 1 = 3, fixed point;
    # R2 = w + J2 = 4 <= 6 (the task's jitter adds to its own response).
    jittered = [(1, 4, 4, 0, 1), (2, 6, 6, 1, 0)]
    assert bulwark.fp_rta_responses(jittered) == [2, 4]
    as_dicts = [{"wcet": 1, "period": 4, "blocking": 1}, {"wcet": 2, "period": 6, "jitter": 1}]
    assert bulwark.fp_rta_responses(as_dicts) == [2, 4]


def test_dict_keys_made_at_run_time_and_unknown_keys():
    # Keys not interned (joined at run time, or from JSON) and an unknown key: read by lookup,
    # with the same results as the hand-worked (1, 4), (2, 6) ms set above (R = 1, 3 ms).
    built = [{"".join(["wc", "et"]): 1 * MS, "per" + "iod": 4 * MS, "note": "first"},
             json.loads('{"wcet": 2000000, "period": 6000000, "name": "second"}')]
    assert bulwark.fp_rta_responses(built) == [1 * MS, 3 * MS]
    assert [task["name"] for task in bulwark.fp_rta(built)] == ["task0", "second"]
    named = [{"wcet": 1 * MS, "period": 4 * MS, "name": "first", "deadline": None}]
    assert bulwark.fp_rta(named)[0]["name"] == "first"
    assert bulwark.fp_rta(named)[0]["deadline"] == 4 * MS  # None: D = T
    # A name that is not a string is reported as its str(); None is no name.
    odd = [{"wcet": 1, "period": 4, "name": 5}, (1, 4), {"wcet": 1, "period": 4, "name": None}]
    assert [task["name"] for task in bulwark.fp_rta(odd)] == ["5", "task1", "task2"]


def test_lean_results_equal_the_full_ones_on_generated_sets():
    for seed in range(20):
        dicts = sorted(bulwark.task_set(10, 0.85, seed, min_period=MS, max_period=100 * MS),
                       key=lambda task: task["period"])
        tuples = [(t["wcet"], t["period"], t["deadline"]) for t in dicts]
        full = bulwark.fp_rta(dicts)
        expected = [t["response"] if t["schedulable"] else None for t in full]
        assert bulwark.fp_rta_responses(tuples) == expected
        assert bulwark.fp_rta_responses(dicts) == expected
        assert bulwark.fp_rta(tuples) == full
        assert bulwark.edf_qpa_schedulable(tuples) == bulwark.edf_qpa(dicts)["schedulable"]
        assert bulwark.edf_qpa(tuples) == bulwark.edf_qpa(dicts)
        assert bulwark.edf_utilisation(tuples) == bulwark.edf_utilisation(dicts)
        # The argument keeps its keyword name.
        assert bulwark.fp_rta(tasks=tuples) == full
        assert bulwark.fp_rta_responses(tasks=tuples) == expected
        # Mixed forms in one list.
        mixed = [task if index % 2 else tuples[index] for index, task in enumerate(dicts)]
        assert bulwark.fp_rta_responses(mixed) == expected


def test_edf_qpa_at_u_equal_one():
    # Implicit deadlines, U = 2/4 + 3/6 = 1: EDF-schedulable by Liu and Layland's U <= 1.
    verdict = bulwark.edf_qpa(implicit((2, 4), (3, 6)))
    assert verdict["schedulable"] and verdict["reason"] == "utilisation-at-most-one"
    assert verdict["first_failing_deadline"] is None
    assert bulwark.edf_utilisation(implicit((2, 4), (3, 6))) == pytest.approx(1.0, abs=1e-12)

    # U = 1/2 + 2/4 = 1 with constrained deadlines (C, T, D) = (1, 2, 2), (2, 4, 3): the
    # demand h(t) = (floor((t-2)/2)+1)*1 + (floor((t-3)/4)+1)*2 meets t exactly at
    # t = 4k+3 (2k+1 + 2k+2) and stays below it elsewhere, so the demand test passes.
    tight = [
        {"wcet": 1, "period": 2, "deadline": 2},
        {"wcet": 2, "period": 4, "deadline": 3},
    ]
    verdict = bulwark.edf_qpa(tight)
    assert verdict["schedulable"] and verdict["reason"] == "demand-met"

    # Same U = 1 with D = (1, 2): h(1) = 1 <= 1, h(2) = 1 + 2 = 3 > 2. The first failing
    # deadline is t = 2 with demand 3: U <= 1 is not enough when D < T.
    failing = [
        {"wcet": 1, "period": 2, "deadline": 1},
        {"wcet": 2, "period": 4, "deadline": 2},
    ]
    verdict = bulwark.edf_qpa(failing)
    assert not verdict["schedulable"] and verdict["reason"] == "demand-exceeds"
    assert verdict["first_failing_deadline"] == 2
    assert verdict["demand"] == 3
    # The same three sets as tuples, through the lean verdict.
    assert bulwark.edf_qpa_schedulable([(2, 4), (3, 6)])
    assert bulwark.edf_qpa_schedulable([(1, 2, 2), (2, 4, 3)])
    assert not bulwark.edf_qpa_schedulable([(1, 2, 1), (2, 4, 2)])


def test_edf_qpa_with_a_mask():
    # (2, 5), (4, 7), U = 34/35, on a processor that may lose M in all: h(t) + M <= t. By
    # hand: with M = 1, h(t) + 1 at the deadlines up to the busy period 35 never passes t
    # (7, 15, 21 and 35 exactly); with M = 2, h(7) + 2 = 8 > 7 while h(5) + 2 = 4 <= 5.
    # Units are nanoseconds, as `masked` is.
    pair = [(2, 5), (4, 7)]
    assert bulwark.edf_qpa(pair)["reason"] == "utilisation-at-most-one"
    met = bulwark.edf_qpa(pair, masked=1)
    assert met["schedulable"] and met["reason"] == "demand-met"
    late = bulwark.edf_qpa(pair, masked=2)
    assert not late["schedulable"] and late["reason"] == "demand-exceeds"
    assert (late["first_failing_deadline"], late["demand"]) == (7, 6)
    assert "h(t) + M = 6 + 2 > 7" in late["explanation"]


def test_edf_qpa_above_one():
    # U = 3/4 + 2/6 = 13/12 > 1: no EDF schedule exists (demand over the hyperperiod 12 is 13).
    tasks = implicit((3, 4), (2, 6))
    verdict = bulwark.edf_qpa(tasks)
    assert not verdict["schedulable"] and verdict["reason"] == "utilisation-above-one"
    assert bulwark.edf_utilisation(tasks) == pytest.approx(13 / 12)
    assert not bulwark.edf_qpa_schedulable([(3, 4), (2, 6)])
    assert bulwark.edf_utilisation([(3, 4), (2, 6)]) == pytest.approx(13 / 12)


@pytest.mark.parametrize("n,utilisation,seed", [(1, 0.3, 1), (5, 0.8, 2), (20, 0.95, 3),
                                                (50, 1.0, 4), (3, 0.0, 5)])
def test_uunifast_sums_to_u_and_each_share_is_a_utilisation(n, utilisation, seed):
    shares = bulwark.uunifast(n, utilisation, seed)
    assert len(shares) == n
    assert all(0.0 <= share <= 1.0 for share in shares)
    assert abs(math.fsum(shares) - utilisation) <= 1e-9
    assert bulwark.uunifast(n, utilisation, seed) == shares  # same seed, same draw
    if n > 1 and utilisation > 0:
        assert bulwark.uunifast(n, utilisation, seed + 100) != shares


def test_task_set_is_implicit_deadline_in_the_period_range():
    tasks = bulwark.task_set(10, 0.7, 42, min_period=10 * MS, max_period=100 * MS)
    assert len(tasks) == 10
    for task in tasks:
        assert 10 * MS <= task["period"] <= 100 * MS
        assert task["deadline"] == task["period"]
        assert 1 <= task["wcet"] <= task["period"]
    # Execution times are rounded to whole ns of periods >= 10 ms: U is within 10 * 1e-7.
    assert sum(t["wcet"] / t["period"] for t in tasks) == pytest.approx(0.7, abs=1e-6)


@pytest.mark.parametrize("scenario", ["textbook-rm.toml", "textbook-edf.toml",
                                      "cbs-isolation.toml", "passive-servers.toml",
                                      "components-beside-vbs.toml",
                                      "components-two-cores.toml"])
def test_simulate_equals_the_cli_json(cli, scenario):
    path = REPO / "scenarios" / scenario
    from_python = bulwark.simulate(path.read_text())
    run = subprocess.run([cli, "simulate", str(path), "--json"], capture_output=True,
                         text=True, timeout=60, check=True)
    from_cli = json.loads(run.stdout)
    # The CLI's --json adds the job records; every other field must be the same.
    from_cli.pop("jobs", None)
    assert from_python == from_cli


def test_simulate_measures_component_tasks_beside_their_bounds():
    # components-two-cores.toml, core 1: client three holds the server (IPCP, at one's
    # priority) from 9.5 to 10.5 ms when one's second job comes at 10 ms: 500 us of
    # inversion against B = 1 ms, the server's one section. A file without components has
    # no such key.
    metrics = bulwark.simulate((REPO / "scenarios" / "components-two-cores.toml").read_text())
    one = next(m for m in metrics["components"] if m["task"] == "one")
    assert (one["core"], one["jobs"], one["misses"]) == (1, 41, 0)
    assert one["max_inversion_ns"] == 500_000
    assert one["inversion_bound_ns"] == 1_000_000
    assert all(m["max_inversion_ns"] <= m["inversion_bound_ns"] for m in metrics["components"])
    plain = bulwark.simulate((REPO / "scenarios" / "textbook-rm.toml").read_text())
    assert "components" not in plain


def test_simulate_textbook_rm_by_hand():
    # (2, 5) and (4, 7) ms under RM: t1 runs 0..2, t2 2..5 (3 of its 4 ms), t1 preempts it
    # 5..7, t2 runs 7..8. At 7 ms, t2's deadline, it still has 1 ms left: its first miss.
    metrics = bulwark.simulate((REPO / "scenarios" / "textbook-rm.toml").read_text())
    tasks = {task["name"]: task for task in metrics["tasks"]}
    assert tasks["t2"]["first_miss_ns"] == 7 * MS
    assert tasks["t1"]["misses"] == 0
    # until_ns cuts the run short: by 6 ms no deadline of t2 has passed.
    text = (REPO / "scenarios" / "textbook-rm.toml").read_text()
    early = {task["name"]: task for task in bulwark.simulate(text, until_ns=6 * MS)["tasks"]}
    assert early["t2"]["misses"] == 0


def test_simulate_mc_ipc_reservations_by_hand():
    # The file works the SPR core out: every period the two waiting rogue requests are aborted
    # when their budgets run out, so the victim's context pays 0.5 ms of the request in service
    # and 2 ms of its own, within Theorem 1's 6 ms, and completes 5 ms into the period.
    metrics = bulwark.simulate((REPO / "scenarios" / "mc-ipc-reservations.toml").read_text())
    tasks = {task["name"]: task for task in metrics["tasks"]}
    assert tasks["victim"]["request_drain"]["count"] == 3
    assert tasks["victim"]["request_drain"]["max_ns"] == 2_500_000
    assert tasks["victim"]["request_drain"]["min_ns"] == 2_500_000
    assert tasks["victim"]["misses"] == 0
    assert [tasks[f"rogue{i}"]["requests_aborted"] for i in (1, 2, 3)] == [0, 3, 3]
    assert tasks["cbs-victim"]["request_drain"]["max_ns"] <= 6 * MS


def test_simulate_passive_servers_by_hand():
    # The file works the schedules out: on core 0 the victim waits for the rogue's
    # replenishment at 20 ms and the rest of its operation, (20 - 0.5) + (2 - 1) ms; on core 2,
    # with bandwidth inheritance, victim2's own context finishes the rogue's request, so its
    # waits are 1.5, 1.5 and 1 ms.
    metrics = bulwark.simulate((REPO / "scenarios" / "passive-servers.toml").read_text())
    tasks = {task["name"]: task for task in metrics["tasks"]}
    assert tasks["victim"]["gate_wait"]["max_ns"] == 20_500_000
    assert tasks["victim"]["misses"] == 1
    assert tasks["victim2"]["gate_wait"]["max_ns"] == 1_500_000
    assert tasks["victim2"]["gate_wait"]["count"] == 3
    assert tasks["victim2"]["misses"] == 0
    assert tasks["rogue"]["server_ns"] == 3 * MS


BAD_CALLS = [
    (lambda: bulwark.fp_rta([{"wcet": 1, "period": 2}, {"wcet": 1}]), "task 1 has no `period`"),
    (lambda: bulwark.edf_qpa([{"wcet": -1, "period": 2}]), "task 0: `wcet` = -1"),
    # The EDF test has no blocking term: refused, named, not ignored.
    (lambda: bulwark.edf_qpa([(1, 4), (1, 4, 4, 0, 2)]), "task `task1`: `blocking` = 2"),
    (lambda: bulwark.edf_qpa_schedulable([{"wcet": 1, "period": 4, "blocking": 1,
                                            "name": "cam"}]), "task `cam`: `blocking` = 1"),
    (lambda: bulwark.fp_rta([{"wcet": 1, "period": 0}]), "period"),
    (lambda: bulwark.fp_rta(["not a dict"]), "task 0 is not a dict"),
    (lambda: bulwark.fp_rta_responses([(1, 2), (1,)]), "task 1 is a tuple of 1 items"),
    (lambda: bulwark.fp_rta_responses([(1, 2, -3)]), "task 0: `deadline` = -3"),
    (lambda: bulwark.edf_qpa_schedulable([(None, 2)]), "task 0: `wcet` = None is not a time"),
    (lambda: bulwark.edf_utilisation([(1, 2.5)]), "task 0: `period` = 2.5 is not a time"),
    # Lean calls skip names, yet the error names the task (given, or task<index>).
    (lambda: bulwark.fp_rta_responses([(1, 2), (1, 0)]), "task1"),
    (lambda: bulwark.edf_qpa_schedulable([{"wcet": 1, "period": 0, "name": "cam"}]), "cam"),
    (lambda: bulwark.edf_utilisation([{"wcet": "1", "period": 2}]), "`wcet` = 1 is not a time"),
    (lambda: bulwark.uunifast(-1, 0.5, 1), "n = -1 is out of range"),
    (lambda: bulwark.uunifast(3, float("nan"), 1), "utilisation NaN is out of range"),
    (lambda: bulwark.uunifast(3, 0.5, -7), "seed = -7 is out of range"),
    (lambda: bulwark.task_set(3, 0.5, 1, min_period=0), "not a range"),
    (lambda: bulwark.simulate("this is = not a scenario"), "<scenario>"),
    (lambda: bulwark.simulate("", until_ns=0), "until_ns is zero"),
    (lambda: bulwark.simulate("", until_ns=-1), "until_ns = -1 is out of range"),
]


@pytest.mark.parametrize("call,message", BAD_CALLS)
def test_bad_input_is_a_value_error_naming_it(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert message in str(error.value)


def test_global_fp_rta_with_a_mask():
    # One core, (1, 4) at priority 2 above (2, 6) at 1, in ns: R = 1 and 3. A termination's
    # mask of 2 is one more interfering entity, min(M, R - C + 1): t1 iterates 1 -> 2 -> 3,
    # t2 2 -> 4 -> 5 -> 6 -> 6 (worked in bulwark-analysis's global_fp tests).
    pair = [(1, 4, 2), (2, 6, 1)]
    plain = bulwark.global_fp_rta(pair, 1)
    assert plain["schedulable"] and plain["responses"] == [1, 3]
    masked = bulwark.global_fp_rta(pair, 1, masks=[2])
    assert masked["responses"] == [3, 6] and masked["outcomes"] == ["bounded", "bounded"]
    # Two cores, one task: two masks of 5 may take both cores for 5 > 4 - 1.
    lost = bulwark.global_fp_rta([(1, 4, 1)], 2, masks=[5, 5])
    assert not lost["schedulable"] and lost["outcomes"] == ["exceeds"]
    with pytest.raises(ValueError, match="cores = 0"):
        bulwark.global_fp_rta(pair, 0)


def test_global_tests_beside_a_time_partition():
    # Two cores, (2, 10) at priority 2 above (3, 10), beside a partition whose slot [0, 4) of
    # a 100 cycle runs at most min(L, 4) of a window L: R2 = 3 + floor((2 + 3) / 2) = 5 (t1
    # on one core [0, 2), the partition on the other [0, 4): t2 runs [2, 5)); alone R2 = 3.
    partition = (100, [(0, 4)])
    pair = [(2, 10, 2), (3, 10, 1)]
    assert bulwark.global_fp_rta(pair, 2)["responses"] == [2, 3]
    assert bulwark.global_fp_rta(pair, 2, partitions=[partition])["responses"] == [2, 5]
    # EDF, (3, 10) and (9, 10) beside slots [0, 2) and [5, 8) of a 10 cycle (at most 5 of
    # any 10): for (9, 10) the slack is 2 and min(3, 2) + min(5, 2) = 4 is not < 4.
    slots = (10, [(0, 2), (5, 8)])
    assert bulwark.global_edf_bcl([(3, 10), (9, 10)], 2)["schedulable"]
    beside = bulwark.global_edf_bcl([(3, 10), (9, 10)], 2, partitions=[slots])
    assert not beside["schedulable"] and beside["failing"] == 1
    assert bulwark.global_edf_bcl([(3, 10), (7, 10)], 2, partitions=[slots])["schedulable"]
    with pytest.raises(ValueError, match="partition 0: slot 0"):
        bulwark.global_fp_rta(pair, 2, partitions=[(10, [(5, 11)])])


def test_global_fp_rta_with_spr_servers():
    # Two cores, (3, 10) twice above (5, 20), in ns: as sporadic tasks R = 3, 3, 8; as SPR
    # servers each workload reaches R + e = 6 back and the third's R is 11 (worked in
    # bulwark-analysis's global_fp tests).
    tasks = [(3, 10, 3), (3, 10, 2), (5, 20, 1)]
    assert bulwark.global_fp_rta(tasks, 2)["responses"] == [3, 3, 8]
    assert bulwark.global_fp_rta(tasks, 2, servers=[0, 1])["responses"] == [3, 3, 11]
    assert bulwark.global_fp_rta(tasks, 2, servers=[0])["responses"] == [3, 3, 8]
    with pytest.raises(ValueError, match="servers lists task 3, but there are 3 tasks"):
        bulwark.global_fp_rta(tasks, 2, servers=[3])


def test_global_amc_rtb_credits_the_switch():
    # Two cores, two low (2, 5) above a high task (C^L 1, C^H 6, 10), in ns: R^L = 2, 2, 3,
    # and R^* = 6 + 2 = 8, the low tasks counted within R^L = 3 only; at C^H in every
    # window (worst-case reservations) the plain analysis gives 10 (worked in
    # bulwark-analysis's amc tests).
    tasks = [(2, None, 5, 9), (2, None, 5, 8), (1, 6, 10, 1)]
    result = bulwark.global_amc_rtb(tasks, 2)
    assert result["schedulable"]
    assert result["low_responses"] == [2, 2, 3]
    assert result["high_responses"] == [None, None, 8]
    assert result["high_outcomes"] == [None, None, "bounded"]
    worst = bulwark.global_fp_rta([(2, 5, 9), (2, 5, 8), (6, 10, 1)], 2)
    assert worst["responses"] == [2, 2, 10]
    # A failure leaves the tasks below it uncomputed.
    failing = bulwark.global_amc_rtb([(9, 9, 10, 9), (9, None, 10, 8), (9, None, 10, 7)], 2)
    assert not failing["schedulable"]
    assert failing["low_outcomes"] == ["bounded", "bounded", "exceeds"]
    with pytest.raises(ValueError, match="task 0: high_wcet 1 < low_wcet 2"):
        bulwark.global_amc_rtb([(2, 1, 10, 1)], 2)
    with pytest.raises(ValueError, match="cores = 0"):
        bulwark.global_amc_rtb(tasks, 0)


def test_global_edf_gfb_and_bcl():
    # (3, 10) twice on two cores: U = 0.6 <= 2 - 0.3 = 1.7 (GFB). BCL: for either task the
    # slack D - C + 1 = 8 and the other's EDF workload in 10 is 3: 3 < 16; a mask of 20 adds
    # min(20, 8): 11 < 16; two add 16: 19 >= 16, failing at the first task.
    pair = [(3, 10), (3, 10)]
    gfb = bulwark.global_edf_gfb(pair, 2)
    assert gfb["schedulable"]
    assert gfb["utilisation"] == pytest.approx(0.6) and gfb["bound"] == pytest.approx(1.7)
    assert bulwark.global_edf_bcl(pair, 2)["schedulable"]
    assert bulwark.global_edf_bcl(pair, 2, masks=[20])["schedulable"]
    twice = bulwark.global_edf_bcl(pair, 2, masks=[20, 20])
    assert not twice["schedulable"] and twice["failing"] == 0
