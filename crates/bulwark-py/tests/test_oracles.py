"""The classic and global tests against textbook oracles written here from the papers'
equations, on many small random task sets in integer time units. Each oracle is the plainest
form of its test (brute force where one exists), sharing no code with the Rust crate, so a
wrong term, bound or rounding in either shows as a disagreement on some set."""

import json
import math
import random
import subprocess
from fractions import Fraction

import pytest

import bulwark

SETS = 3000


def lcm_of(numbers):
    result = 1
    for number in numbers:
        result = result * number // math.gcd(result, number)
    return result


# --- Uniprocessor fixed priority -----------------------------------------------------------


def fp_response(tasks, index):
    """Tindell, Burns and Wellings' arbitrary-deadline response-time analysis with jitter and
    blocking of `tasks[index]` below `tasks[:index]` (each `(C, T, D, B, J)`): jobs
    q = 0, 1, ... of the level-i busy window,
    `w_q = B + (q + 1) C + sum_j ceil((w_q + J_j) / T_j) C_j`, `R = max_q (w_q - q T + J)`,
    until a job ends before the next arrives, `w_q <= (q + 1) T - J`. `None` when the level-i
    utilisation exceeds 1 (unbounded). At level-i utilisation 1 with blocking or jitter the
    window never closes: then `("endless", R)` with `R` the worst response of the jobs in two
    hyperperiods."""
    c, t, d, b, jitter = tasks[index]
    higher = tasks[:index]
    level = Fraction(c, t) + sum(Fraction(cj, tj) for cj, tj, _, _, _ in higher)
    if level > 1:
        return None
    endless = level == 1 and (b > 0 or any(task[4] > 0 for task in tasks[: index + 1]))
    jobs = 2 * lcm_of([task[1] for task in tasks[: index + 1]]) // t
    worst = 0
    q = 0
    while True:
        w = b + (q + 1) * c
        while True:
            nxt = b + (q + 1) * c + sum(-(-(w + jj) // tj) * cj for cj, tj, _, _, jj in higher)
            if nxt == w:
                break
            w = nxt
        worst = max(worst, w - q * t + jitter)
        if endless and q + 1 == jobs:
            return ("endless", worst)
        if not endless and w <= (q + 1) * t - jitter:
            return worst
        q += 1


def random_fp_set(rng):
    """1 to 5 tasks `(C, T, D, B, J)`; one set in three gets a lowest task that fills the
    others' slack to utilisation 1 exactly, with blocking, so its busy window never ends."""
    tasks = []
    for _ in range(rng.randint(1, 5)):
        t = rng.randint(2, 24)
        c = rng.randint(1, max(1, t // 2))
        d = rng.choice([t, rng.randint(c, 2 * t + 3)])
        b = rng.choice([0, 0, rng.randint(0, 6)])
        jitter = rng.choice([0, 0, rng.randint(0, t // 2)])
        tasks.append((c, t, d, b, jitter))
    if rng.random() < 1 / 3:
        hyper = lcm_of([task[1] for task in tasks])
        slack = hyper - sum(c * (hyper // t) for c, t, _, _, _ in tasks)
        if slack > 0 and hyper <= 10_000:
            jobs = math.gcd(slack, hyper)
            period = hyper // jobs
            tasks.append((slack // jobs, period, rng.randint(period, 3 * period),
                          rng.randint(1, 4), 0))
    return tasks


def test_fp_rta_equals_tindells_analysis():
    rng = random.Random(1401)
    unschedulable = 0
    # Verdicts on tasks whose busy window never ends: (met, missed).
    endless = [0, 0]
    for _ in range(SETS):
        tasks = random_fp_set(rng)
        results = bulwark.fp_rta([{"wcet": c, "period": t, "deadline": d, "blocking": b,
                                   "jitter": jitter} for c, t, d, b, jitter in tasks])
        for index, result in enumerate(results):
            response = fp_response(tasks, index)
            if isinstance(response, tuple):
                # The window never ends; the jobs of one hyperperiod decide, as two show.
                response = response[1]
                endless[response > tasks[index][2]] += 1
            expected = response is not None and response <= tasks[index][2]
            assert result["schedulable"] == expected, (tasks, index, result, response)
            if expected:
                assert result["response"] == response, (tasks, index, result, response)
            else:
                unschedulable += 1
    # The sets reach both verdicts, with and without an endless busy window.
    assert 0 < unschedulable < SETS * 3
    assert min(endless) > 0, endless


# --- Uniprocessor EDF ----------------------------------------------------------------------


def demand(tasks, t):
    """`h(t) = sum over D_i <= t of (floor((t - D_i) / T_i) + 1) C_i`."""
    return sum((t - d) // p * c + c for c, p, d in tasks if d <= t)


def edf_first_miss(tasks, masked):
    """The first absolute deadline `t` of a synchronous release with `h(t) + masked > t`, by
    brute force over every deadline up to `D_max + H` (beyond it `t - h(t)` only grows when
    U <= 1); `None` when there is none. U > 1 is refuted separately."""
    horizon = max(d for _, _, d in tasks) + lcm_of([p for _, p, _ in tasks])
    deadlines = sorted({d + k * p for _, p, d in tasks for k in range((horizon - d) // p + 1)
                        if d + k * p <= horizon})
    for t in deadlines:
        if demand(tasks, t) + masked > t:
            return t
    return None


def random_edf_set(rng):
    tasks = []
    for _ in range(rng.randint(1, 4)):
        p = rng.randint(2, 20)
        c = rng.randint(1, max(1, p // 2))
        d = rng.randint(c, 2 * p)
        tasks.append((c, p, d))
    return tasks


def test_edf_qpa_equals_brute_force_demand():
    rng = random.Random(1402)
    refuted = 0
    for _ in range(SETS):
        tasks = random_edf_set(rng)
        masked = rng.choice([0, 0, rng.randint(1, 8)])
        result = bulwark.edf_qpa([(c, p, d) for c, p, d in tasks], masked)
        over = sum(Fraction(c, p) for c, p, _ in tasks) > 1
        miss = None if over else edf_first_miss(tasks, masked)
        expected = not over and miss is None
        assert result["schedulable"] == expected, (tasks, masked, result, miss)
        if miss is not None:
            refuted += 1
            # The first deadline that fails, with its demand.
            assert result["first_failing_deadline"] == miss, (tasks, masked, result)
            assert result["demand"] == demand(tasks, miss)
    assert refuted > 0


def jitter_demand(tasks, t):
    """Spuri's demand with release jitter: a job that arrives at `a` is released by `a + J` and
    due at `a + D`, so `h(t) = sum over t + J_i >= D_i of (floor((t + J_i - D_i) / T_i) + 1)
    C_i`."""
    return sum(((t + j - d) // p + 1) * c for c, p, d, j in tasks if t + j >= d)


def test_edf_qpa_with_release_jitter_equals_brute_force_demand():
    """With release jitter, the first instant `t` with `h(t) + masked > t`, checked where `h`
    steps up (at `D - J + k T`, and at 0 for a task whose jitter passes its deadline) up to
    `D_max + H`; U > 1 is refuted on its own."""
    rng = random.Random(1403)
    refuted = jittered = 0
    for _ in range(SETS):
        tasks = [(c, p, d, rng.choice([0, rng.randint(0, 2 * p)]))
                 for c, p, d in random_edf_set(rng)]
        jittered += any(j for _, _, _, j in tasks)
        masked = rng.choice([0, 0, rng.randint(1, 8)])
        result = bulwark.edf_qpa(tasks, masked)
        if sum(Fraction(c, p) for c, p, _, _ in tasks) > 1:
            assert not result["schedulable"], (tasks, result)
            continue
        horizon = max(d for _, _, d, _ in tasks) + lcm_of([p for _, p, _, _ in tasks])
        steps = {0 for _, _, d, j in tasks if j > d}
        steps |= {(d - j) % p + k * p if j > d else d - j + k * p
                  for _, p, d, j in tasks for k in range(horizon // p + 1)}
        miss = next((t for t in sorted(steps)
                     if t <= horizon and jitter_demand(tasks, t) + masked > t), None)
        assert result["schedulable"] == (miss is None), (tasks, masked, result, miss)
        if miss is not None:
            refuted += 1
            assert result["first_failing_deadline"] == miss, (tasks, masked, result)
            assert result["demand"] == jitter_demand(tasks, miss)
    assert refuted > 0 and jittered > SETS // 3


# --- Global EDF ----------------------------------------------------------------------------


def gfb(tasks, cores):
    """Goossens, Funk and Baruah: `U <= m - (m - 1) U_max`."""
    shares = [Fraction(c, t) for c, t in tasks]
    return sum(shares) <= cores - (cores - 1) * max(shares)


def most_busy(partition, length):
    """The most slot time of a time partition `(cycle, slots)` in any window of `length`, by
    trying every integer start in one cycle (slot ends and lengths are integers, so the
    busy time, piecewise linear in the start, peaks at one)."""
    cycle, slots = partition
    best = 0
    for start in range(cycle):
        end = start + length
        busy = 0
        for first in range(0, end, cycle):
            for a, b in slots:
                busy += max(0, min(end, first + b) - max(start, first + a))
        best = max(best, busy)
    return best


def random_partitions(rng):
    """None to two time partitions, each one or two slots of a cycle of 2 to 20."""
    partitions = []
    for _ in range(rng.choice([0, 0, 1, 2])):
        cycle = rng.randint(2, 20)
        cuts = sorted(rng.sample(range(cycle + 1), rng.choice([2, 4]) if cycle >= 3 else 2))
        partitions.append((cycle, [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts), 2)]))
    return partitions


def bcl(tasks, cores, masks, partitions=()):
    """Bertogna, Cirinei and Lipari's interference test (implicit deadlines): for every k,
    `sum_{i != k} min(J_i, D_k - C_k + 1) < m (D_k - C_k + 1)` with the workload
    `J_i = N_i C_i + min(C_i, max(0, D_k - N_i T_i))`, `N_i = floor((D_k - D_i) / T_i) + 1`
    (zero when D_k < D_i); each mask one more interferer `min(M, D_k - C_k + 1)`, each time
    partition `min(its most slot time in D_k, D_k - C_k + 1)`."""
    for k, (ck, dk) in enumerate(tasks):
        if ck > dk:
            return False
        slack = dk - ck + 1
        total = 0
        for i, (ci, ti) in enumerate(tasks):
            if i == k:
                continue
            jobs = (dk - ti) // ti + 1 if dk >= ti else 0
            total += min(jobs * ci + min(ci, max(0, dk - jobs * ti)), slack)
        total += sum(min(mask, slack) for mask in masks)
        total += sum(min(most_busy(partition, dk), slack) for partition in partitions)
        if not total < cores * slack:
            return False
    return True


def random_global_set(rng):
    tasks = []
    for _ in range(rng.randint(1, 7)):
        t = rng.randint(2, 30)
        tasks.append((rng.randint(1, t), t))
    return tasks


def test_global_edf_tests_equal_their_equations():
    rng = random.Random(1403)
    verdicts = {True: 0, False: 0}
    for _ in range(SETS):
        tasks = random_global_set(rng)
        cores = rng.randint(1, 4)
        masks = [rng.randint(0, 9) for _ in range(rng.choice([0, 0, 1, 2]))]
        partitions = random_partitions(rng)
        assert bulwark.global_edf_gfb(tasks, cores)["schedulable"] == gfb(tasks, cores), (
            tasks, cores)
        expected = bcl(tasks, cores, masks, partitions)
        verdicts[expected] += 1
        result = bulwark.global_edf_bcl(tasks, cores, masks, partitions=partitions)
        assert result["schedulable"] == expected, (tasks, cores, masks, partitions)
    assert min(verdicts.values()) > 0


# --- Global fixed priority -----------------------------------------------------------------


def global_fp(tasks, cores, masks, partitions=()):
    """Bertogna and Cirinei's response-time analysis (RTSS 2007), tasks `(C, T, priority)`
    with `D = T`, highest priority first (equal priorities in list order): for each task k,
    the least fixed point of `R = C_k + floor(sum_i min(W_i(R), R - C_k + 1) / m)` over the
    higher tasks i, `W_i(L) = N C_i + min(C_i, L + R_i - C_i - N T_i)`,
    `N = floor((L + R_i - C_i) / T_i)`, each mask one more interferer `min(M, R - C_k + 1)`
    and each time partition `min(its most slot time in R, R - C_k + 1)`. Returns the bounds in list order, `None` for a task whose iterate passed its deadline and
    for every task below it."""
    order = sorted(range(len(tasks)), key=lambda i: -tasks[i][2])
    responses = [None] * len(tasks)
    higher = []
    for k in order:
        ck, tk, _ = tasks[k]
        r = ck
        while True:
            total = sum(min(mask, r - ck + 1) for mask in masks)
            total += sum(min(most_busy(p, r), r - ck + 1) for p in partitions)
            for ci, ti, ri in higher:
                reach = r + ri - ci
                jobs = reach // ti
                total += min(jobs * ci + min(ci, reach - jobs * ti), r - ck + 1)
            nxt = ck + total // cores
            if nxt > tk:
                return responses
            if nxt == r:
                break
            r = nxt
        responses[k] = r
        higher.append((ck, tk, r))
    return responses


def test_global_fp_rta_equals_its_iteration():
    rng = random.Random(1404)
    bounded = 0
    for _ in range(SETS):
        tasks = [(c, t, rng.randint(0, 3)) for c, t in random_global_set(rng)]
        cores = rng.randint(1, 4)
        masks = [rng.randint(1, 9) for _ in range(rng.choice([0, 0, 1, 2]))]
        partitions = random_partitions(rng)
        expected = global_fp(tasks, cores, masks, partitions)
        result = bulwark.global_fp_rta(tasks, cores, masks, partitions=partitions)
        assert result["responses"] == expected, (tasks, cores, masks, partitions, result)
        assert result["schedulable"] == all(r is not None for r in expected)
        bounded += result["schedulable"]
    assert 0 < bounded < SETS


# --- The machine against a reference schedule -----------------------------------------------


class Outcomes:
    """Each task's jobs, completions, misses, first missed deadline and responses, as the
    machine's metrics count them."""

    def __init__(self, count):
        self.tasks = [dict(jobs=0, completed=0, misses=0, first=None, responses=[])
                      for _ in range(count)]

    def miss(self, index, deadline):
        task = self.tasks[index]
        task["misses"] += 1
        task["first"] = deadline if task["first"] is None else min(task["first"], deadline)

    def complete(self, index, release, deadline, now):
        self.tasks[index]["completed"] += 1
        self.tasks[index]["responses"].append(now - release)
        if now > deadline:
            self.miss(index, deadline)

    def summary(self, unfinished, horizon):
        """Per task `(jobs, completed, misses, first missed deadline, min and max response)`;
        each of `unfinished` (`(index, deadline)`) misses when its deadline is at or before
        the inclusive horizon."""
        for index, deadline in unfinished:
            if deadline <= horizon:
                self.miss(index, deadline)
        return [(t["jobs"], t["completed"], t["misses"], t["first"],
                 min(t["responses"], default=None), max(t["responses"], default=None))
                for t in self.tasks]


def assert_metrics_equal(metrics, expected, context):
    """The machine's per-task metrics (ns) equal the reference's (ms)."""
    def ns(value):
        return None if value is None else value * 1_000_000

    for task, (jobs, completed, misses, first, shortest, longest) in zip(
            metrics["tasks"], expected):
        got = (task["jobs"], task["completed"], task["misses"], task["first_miss_ns"],
               task["response"]["min_ns"], task["response"]["max_ns"])
        assert got == (jobs, completed, misses, ns(first), ns(shortest), ns(longest)), (
            context, task["name"])


def reference_schedule(tasks, policy, horizon):
    """Periodic tasks `(C, T, D, priority, offset)` released at offset, offset + T, ... up to
    the inclusive
    `horizon`, scheduled in unit steps: fixed priority (larger first) or EDF (earlier
    absolute deadline first), with the machine's documented ties. Equal priorities and equal
    deadlines go to the earlier activation. A job is activated at its release, in the order
    the tasks' timers were armed (at the previous job's completion; file order at time zero).
    Under EDF a job waiting behind its predecessor is activated at that one's completion, and
    so is one released at that very instant (completions come before releases). Under fixed
    priority such a task never suspends and keeps its place (first come, first served; a
    preempted task keeps the head). A job meets its deadline when it completes at or before
    it; one unfinished at the horizon misses when its deadline is at or before the horizon.
    Per task: `(jobs, completed, misses, first missed deadline, min and max response)`."""
    pending = [[] for _ in tasks]
    # When each task's release timer was armed: its last completion (-1 before the first).
    armed = [-1] * len(tasks)
    # Each task's place among its peers: its current job's activation.
    place = [None] * len(tasks)
    keeps_place = policy == "fixed-priority"
    outcomes = Outcomes(len(tasks))
    for now in range(horizon + 1):
        for index, (c, t, d, _, offset) in enumerate(tasks):
            if now >= offset and (now - offset) % t == 0:
                # Released at its own completion: the sleep returns at once.
                activation = None
                if not pending[index]:
                    if armed[index] != now:
                        activation = (now, 1, armed[index], index)
                    elif keeps_place:
                        activation = place[index]
                    else:
                        activation = (now, 0, 0, index)
                    place[index] = activation
                pending[index].append([now, c, now + d, activation])
                outcomes.tasks[index]["jobs"] += 1
        if now == horizon:
            break
        heads = [(index, queue[0]) for index, queue in enumerate(pending) if queue]
        if not heads:
            continue
        if policy == "fixed-priority":
            index, job = min(heads, key=lambda head: (-tasks[head[0]][3], head[1][3]))
        else:
            index, job = min(heads, key=lambda head: (head[1][2], head[1][3]))
        job[1] -= 1
        if job[1] == 0:
            release, _, deadline, _ = pending[index].pop(0)
            outcomes.complete(index, release, deadline, now + 1)
            armed[index] = now + 1
            if pending[index]:
                if not keeps_place:
                    place[index] = (now + 1, 0, 0, index)
                pending[index][0][3] = place[index]
    return outcomes.summary([(index, job[2]) for index, queue in enumerate(pending)
                             for job in queue], horizon)


def scenario_text(tasks, policy, horizon):
    lines = [f'name = "oracle"\npolicy = "{policy}"\nduration = "{horizon}ms"\n']
    for index, (c, t, d, priority, offset) in enumerate(tasks):
        # EDF refuses a priority.
        rank = f"priority = {priority}\n" if policy == "fixed-priority" else ""
        lines.append(f'[[task]]\nname = "t{index}"\nperiod = "{t}ms"\nexecution = "{c}ms"\n'
                     f'deadline = "{d}ms"\noffset = "{offset}ms"\n{rank}')
    return "\n".join(lines)


@pytest.mark.parametrize("policy", ["fixed-priority", "edf"])
def test_the_machine_equals_a_reference_schedule(policy):
    rng = random.Random(1405 if policy == "edf" else 1406)
    missed = 0
    for _ in range(SETS):
        count = rng.randint(1, 4)
        # Few priorities, so that equal ones are common.
        priorities = [rng.randint(1, 3) for _ in range(count)]
        tasks = []
        for priority in priorities:
            t = rng.randint(2, 12)
            c = rng.randint(1, t)
            tasks.append((c, t, rng.randint(c, 2 * t), priority,
                          rng.choice([0, rng.randint(0, 2 * t)])))
        horizon = rng.randint(10, 60)
        metrics = bulwark.simulate(scenario_text(tasks, policy, horizon))
        expected = reference_schedule(tasks, policy, horizon)
        assert_metrics_equal(metrics, expected, (policy, tasks, horizon))
        missed += sum(misses for _, _, misses, _, _, _ in expected)
    assert missed > 0


# --- SPR admission (Eq. 1) -------------------------------------------------------------------


def eq1_responses(reservations, double_hit):
    """The SPR paper's Eq. 1 for reservations `(b, p, priority, eta)` (distinct priorities):
    `R_i` is the least fixed point of `R = I_i + b_i + sum_h alpha_h(R) b_h` over the higher
    priorities `h`, `I_i` the longest non-preemptive region of a lower priority,
    `alpha_h(D) = ceil(D / p_h)` for sporadic servers and `ceil((D + p_h - b_h) / p_h)` for
    deferrable ones (the double hit). `None` where no fixed point is at most `p_i`."""
    responses = []
    for b, p, priority, _ in reservations:
        higher = [(bh, ph) for bh, ph, other, _ in reservations if other > priority]
        blocking = max([eta for _, _, other, eta in reservations if other < priority],
                       default=0)
        extra = (lambda bh, ph: ph - bh) if double_hit else (lambda bh, ph: 0)
        r = blocking + b
        while r <= p:
            nxt = blocking + b + sum(-(-(r + extra(bh, ph)) // ph) * bh for bh, ph in higher)
            if nxt == r:
                break
            r = nxt
        responses.append(r if r <= p else None)
    return responses


@pytest.mark.parametrize("policy", ["spr", "sporadic-server", "deferrable-server",
                                    "spr-deferrable"])
def test_spr_admission_equals_eq1(cli, tmp_path, policy):
    rng = random.Random(sum(map(ord, policy)))
    regions = policy.startswith("spr")
    verdicts = {True: 0, False: 0}
    for number in range(150):
        count = rng.randint(1, 5)
        reservations = []
        for priority in rng.sample(range(1, 60), count):
            p = rng.randint(2, 40)
            b = rng.randint(1, max(1, p // 2))
            eta = rng.randint(0, b) if regions else 0
            reservations.append((b, p, priority, eta))
        lines = [f'name = "eq1"\npolicy = "{policy}"\nduration = "1s"\n']
        for index, (b, p, priority, eta) in enumerate(reservations):
            region = f', non-preemptive = "{eta}ms"' if eta else ""
            lines.append(f'[[task]]\nname = "r{index}"\npriority = {priority}\n'
                         f'period = "{p}ms"\nexecution = "{b}ms"\n'
                         f'reservation = {{ budget = "{b}ms", period = "{p}ms"{region} }}\n')
        path = tmp_path / f"eq1-{number}.toml"
        path.write_text("\n".join(lines))
        run = subprocess.run([cli, "analyze", str(path), "--json"], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode in (0, 1), run.stderr
        rows = {row["name"]: row for row in json.loads(run.stdout)["cores"][0]["reservations"]}
        expected = eq1_responses(reservations, policy.endswith("deferrable")
                                 or policy == "deferrable-server")
        for index, response in enumerate(expected):
            row = rows[f"r{index}"]
            assert row["admitted"] == (response is not None), (policy, reservations, row)
            if response is not None:
                assert row["response_ns"] == response * 1_000_000, (policy, reservations, row)
            verdicts[response is not None] += 1
        assert run.returncode == (0 if all(r is not None for r in expected) else 1)
    assert min(verdicts.values()) > 0, verdicts


def job_bounds_held(cli, path, cbs):
    """The reservations (CBS servers when `cbs`) of the file at `path` to which `analyze`
    gives a job bound, each checked against the machine's worst response of its task."""
    core, machine = analysed_and_run(cli, path)
    rows = [row for row in core["servers" if cbs else "reservations"]
            if row["job_response_ns"] is not None]
    for row in rows:
        worst = machine[row["name"]]["response"]["max_ns"]
        assert worst is None or worst <= row["job_response_ns"], (row, path.read_text())
    return rows


@pytest.mark.parametrize("policy", ["spr", "spr-deferrable", "deferrable-server", "cbs",
                                    "hard-cbs"])
def test_reservation_job_bounds_are_sound(cli, tmp_path, policy):
    """Every job of a task in an admitted reservation completes within the job bound that
    `analyze` gives it (`job_response_ns`): R under the sporadic rule, R + p under the
    deferrable one when releases are off the multiples of p (the phase here is often off
    them), the server's period P under CBS. Tasks need at most b and come p or more apart;
    regions make the waits long. With R for every deferrable job, this fails."""
    rng = random.Random(sum(map(ord, policy)) + 77)
    cbs = policy.endswith("cbs")
    bounds = {"r": 0, "r-plus-p": 0, "p": 0}
    for number in range(400):
        lines = [f'name = "jobs"\npolicy = "{policy}"\nduration = "2s"\n']
        for index, priority in enumerate(rng.sample(range(1, 60), rng.randint(1, 5))):
            p = rng.randint(2, 40)
            b = rng.randint(1, max(1, p // rng.randint(2, 4)))
            c = rng.choice([b, rng.randint(1, b)])
            t = p if rng.random() < 0.6 else p + rng.randint(1, p)
            offset = rng.choice([0, rng.randint(0, p)])
            eta = rng.randint(0, b) if policy.startswith("spr") else 0
            region = f', non-preemptive = "{eta}ms"' if eta else ""
            rank = "" if cbs else f"priority = {priority}\n"
            lines.append(f'[[task]]\nname = "r{index}"\n{rank}'
                         f'period = "{t}ms"\nexecution = "{c}ms"\noffset = "{offset}ms"\n'
                         f'reservation = {{ budget = "{b}ms", period = "{p}ms"{region} }}\n')
        path = tmp_path / f"jobs-{number}.toml"
        path.write_text("\n".join(lines))
        for row in job_bounds_held(cli, path, cbs):
            bounds[row["job_bound"]] += 1
    assert bounds["p" if cbs else "r"] > 0, bounds
    # Only the deferrable rule resets on a grid that a release can miss.
    deferrable = policy in ("spr-deferrable", "deferrable-server")
    assert (bounds["r-plus-p"] > 0) == deferrable, bounds


def random_caller(rng, index, rank, p):
    """A task that calls server `s` once a job, at times asking for an operation of its own:
    some work before and after the call, one job per period of at least `p` (a caller's job
    bound counts what the call drains)."""
    before, after = rng.randint(0, 2), rng.randint(0, 2)
    call = ('{ invoke = "s" }' if rng.random() < 0.7
            else f'{{ invoke = "s", operation = "{rng.randint(1, 3)}ms" }}')
    body = ([f'{{ run = "{before}ms" }}'] if before else []) + [call] + (
        [f'{{ run = "{after}ms" }}'] if after else [])
    t = p if rng.random() < 0.7 else p + rng.randint(1, p)
    body.append(f'{{ sleep-until-next-release = "{t}ms" }}')
    return (f'[[task]]\nname = "c{index}"\n{rank}offset = "{rng.choice([0, rng.randint(0, p)])}ms"\n'
            f'script = [{{ loop = "forever", body = [{", ".join(body)}] }}]\n')


@pytest.mark.parametrize("policy", ["spr", "spr-deferrable", "cbs"])
def test_callers_job_bounds_are_sound(cli, tmp_path, policy):
    """Reservations whose tasks call a server behind an mc-ipc gate or a fifo-ipc one with
    bandwidth inheritance, beside endless callers and plain tasks: every job with a bound
    completes within it, the bound counting each call at what a request drains (n L or
    Theorem 1). Counting the call's own operation L instead fails here (checked)."""
    rng = random.Random(sum(map(ord, policy)) + 1407)
    cbs = policy == "cbs"
    callers = 0
    for number in range(250):
        gate = rng.choice(["fifo-ipc", "mc-ipc"])
        inherit = "bandwidth-inheritance = true\n" if gate == "fifo-ipc" else ""
        lines = [f'name = "calls"\npolicy = "{policy}"\nduration = "1s"\n',
                 f'[[server]]\nname = "s"\ngate = "{gate}"\n'
                 f'operation = "{rng.randint(1, 3)}ms"\n{inherit}']
        for index, priority in enumerate(rng.sample(range(1, 60), rng.randint(2, 5))):
            p = rng.randint(8, 60)
            b = rng.randint(1, max(1, p // rng.randint(2, 4)))
            rank = "" if cbs else f"priority = {priority}\n"
            kind = rng.random()
            if kind < 0.6:
                task = random_caller(rng, index, rank, p)
            elif kind < 0.72:
                task = (f'[[task]]\nname = "x{index}"\n{rank}'
                        'script = [{ loop = "forever", body = [{ invoke = "s" }] }]\n')
            else:
                task = (f'[[task]]\nname = "r{index}"\n{rank}period = "{p}ms"\n'
                        f'execution = "{rng.randint(1, b)}ms"\n')
            lines.append(task + f'reservation = {{ budget = "{b}ms", period = "{p}ms" }}\n')
        path = tmp_path / f"calls-{number}.toml"
        path.write_text("\n".join(lines))
        callers += sum(row["name"].startswith("c") for row in job_bounds_held(cli, path, cbs))
    assert callers > 50, callers


# --- CBS against a reference schedule --------------------------------------------------------


def reference_cbs(tasks, hard, horizon):
    """Periodic tasks `(C, T, D, Q, P)`, each served by its own constant-bandwidth server of
    budget `Q` per period `P` (Abeni and Buttazzo), EDF over the servers' deadlines, in unit
    steps. The rules: a job arriving at an idle server keeps its `(c, d)` unless
    `c >= (d - r) Q / P`, else `d = r + P, c = Q`; a job arriving while its predecessor is
    pending is served with the server as it is; a soft server whose budget runs out is
    recharged at once with `d + P`, a hard one is throttled until `d` and then recharged with
    `d + P`. Ties, as the machine documents them: equal deadlines go to the server queued
    first; at one instant a completion or exhaustion comes first, then arrivals in the order
    their timers were armed (the previous completion; file order at time zero), then hard
    recharges in the order the servers were throttled. Returns what `reference_schedule`
    does."""
    count = len(tasks)
    pending = [[] for _ in tasks]
    budget = [q for _, _, _, q, _ in tasks]
    deadline = [0] * count
    phase = ["idle"] * count
    key = [None] * count
    armed = [-1] * count
    throttled = []  # (since, index) in the order they were throttled
    sequence = [0]
    outcomes = Outcomes(count)

    def queue(index):
        sequence[0] += 1
        key[index] = sequence[0]
        phase[index] = "active"

    def throttle(index):
        phase[index] = "throttled"
        budget[index] = 0
        throttled.append(index)

    def wake_up(index, now):
        q, p = tasks[index][3], tasks[index][4]
        if now >= deadline[index] or budget[index] * p >= (deadline[index] - now) * q:
            deadline[index] = now + p
            budget[index] = q
        if budget[index] == 0:
            throttle(index)
        else:
            queue(index)

    def exhaust(index):
        if hard:
            throttle(index)
        else:
            deadline[index] += tasks[index][4]
            budget[index] = tasks[index][3]
            queue(index)

    def retire(index):
        if phase[index] == "throttled":
            throttled.remove(index)
        phase[index] = "idle"

    running = None
    for now in range(horizon + 1):
        woken = set()
        if running is not None:
            index = running
            budget[index] -= 1
            job = pending[index][0]
            job[1] -= 1
            if budget[index] == 0:
                exhaust(index)
            if job[1] == 0:
                release, _, due = pending[index].pop(0)
                outcomes.complete(index, release, due, now)
                armed[index] = now
                period = tasks[index][1]
                if not pending[index]:
                    retire(index)
                    if now % period == 0:
                        # The next job arrives at this very instant: at an idle server.
                        pending[index].append([now, tasks[index][0], now + tasks[index][2]])
                        outcomes.tasks[index]["jobs"] += 1
                        woken.add(index)
                        wake_up(index, now)
        arrivals = []
        for index, (c, t, d, _, _) in enumerate(tasks):
            if now % t == 0 and index not in woken:
                outcomes.tasks[index]["jobs"] += 1
                if not pending[index]:
                    arrivals.append((armed[index], index))
                pending[index].append([now, c, now + d])
        if now == horizon:
            break
        for _, index in sorted(arrivals):
            wake_up(index, now)
        for index in [i for i in throttled if deadline[i] == now]:
            throttled.remove(index)
            deadline[index] += tasks[index][4]
            budget[index] = tasks[index][3]
            queue(index)
        ready = [i for i in range(count) if phase[i] == "active" and pending[i]]
        running = min(ready, key=lambda i: (deadline[i], key[i])) if ready else None
    return outcomes.summary([(index, job[2]) for index, queue in enumerate(pending)
                             for job in queue], horizon)


@pytest.mark.parametrize("policy", ["cbs", "hard-cbs"])
def test_cbs_equals_a_reference_schedule(policy):
    rng = random.Random(1407 if policy == "cbs" else 1408)
    for _ in range(SETS):
        tasks = []
        share = Fraction(0)
        for _ in range(rng.randint(1, 4)):
            p = rng.randint(2, 12)
            q = rng.randint(1, p)
            if share + Fraction(q, p) > 1:
                break
            share += Fraction(q, p)
            t = rng.randint(2, 14)
            c = rng.randint(1, 2 * q)
            tasks.append((c, t, rng.randint(1, 2 * t), q, p))
        if not tasks:
            continue
        horizon = rng.randint(10, 60)
        lines = [f'name = "oracle"\npolicy = "{policy}"\nduration = "{horizon}ms"\n']
        for index, (c, t, d, q, p) in enumerate(tasks):
            lines.append(f'[[task]]\nname = "t{index}"\nperiod = "{t}ms"\nexecution = "{c}ms"\n'
                         f'deadline = "{d}ms"\n'
                         f'reservation = {{ budget = "{q}ms", period = "{p}ms" }}\n')
        metrics = bulwark.simulate("\n".join(lines))
        expected = reference_cbs(tasks, policy == "hard-cbs", horizon)
        assert_metrics_equal(metrics, expected, (policy, tasks, horizon))


# --- Fixed-priority reservations ---------------------------------------------------------------


def reference_deferrable(tasks, horizon):
    """Periodic tasks `(C, T, D, priority, Q, P)` with distinct priorities, each in a
    deferrable server whose budget is reset to `Q` at every multiple of `P`, used or not; the
    highest-priority task with a pending job and budget left runs, in unit steps. Returns what
    `reference_schedule` does."""
    count = len(tasks)
    pending = [[] for _ in tasks]
    used = [0] * count
    outcomes = Outcomes(count)
    running = None
    for now in range(horizon + 1):
        if running is not None:
            used[running] += 1
            job = pending[running][0]
            job[1] -= 1
            if job[1] == 0:
                release, _, deadline = pending[running].pop(0)
                outcomes.complete(running, release, deadline, now)
        for index, (c, t, d, _, _, p) in enumerate(tasks):
            if now % p == 0:
                used[index] = 0
            if now % t == 0:
                pending[index].append([now, c, now + d])
                outcomes.tasks[index]["jobs"] += 1
        if now == horizon:
            break
        ready = [i for i in range(count) if pending[i] and used[i] < tasks[i][4]]
        running = max(ready, key=lambda i: tasks[i][3]) if ready else None
    return outcomes.summary([(index, job[2]) for index, queue in enumerate(pending)
                             for job in queue], horizon)


def reference_sporadic(tasks, horizon):
    """Periodic tasks `(C, T, D, priority, Q, P, S[, eta])` with distinct priorities, each in a
    sporadic server with a replenishment queue of `S` entries (the SPR paper, section IV-A
    and Algorithm 1, after Stanovich et al.), in unit steps. A task activated at `r` merges
    every entry due by `r` into its head and restarts it at `r`, or waits for the head when
    none is due; consuming a head's amount plans it again at the head's time plus `P`, and
    the next head, if due, goes on at once (early replenishment); a task that suspends with
    budget left plans what it used of the head the same way and keeps the rest. An entry
    added to a full queue merges into the last one and postpones it. A task whose next job is
    due when its job completes never suspends. A task switched to at `x` with a
    non-preemptive region `eta` keeps the processor until `x + eta` while it is ready (SPR's
    next-task selection). Returns what `reference_schedule` does."""
    count = len(tasks)
    pending = [[] for _ in tasks]
    entries = [[[0, task[4]]] for task in tasks]
    used = [0] * count
    # "idle" (no job), "ready" (a job and budget) or "depleted" (a job, no budget yet).
    state = ["idle"] * count
    outcomes = Outcomes(count)

    def plan(index, at, amount):
        if len(entries[index]) >= tasks[index][6]:
            entries[index][-1][0] = at
            entries[index][-1][1] += amount
        else:
            entries[index].append([at, amount])

    def activate(index, now):
        while len(entries[index]) > 1 and entries[index][1][0] <= now:
            entries[index][1][1] += entries[index].pop(0)[1]
        head = entries[index][0]
        if head[0] > now:
            state[index] = "depleted"
        else:
            head[0] = now
            state[index] = "ready"

    regions = [task[7] if len(task) > 7 else 0 for task in tasks]
    running = None
    # When the running task was last switched to.
    switched = 0
    for now in range(horizon + 1):
        if running is not None:
            index = running
            period = tasks[index][5]
            used[index] += 1
            job = pending[index][0]
            job[1] -= 1
            while entries[index][0][1] <= used[index]:
                at, amount = entries[index].pop(0)
                used[index] -= amount
                plan(index, at + period, amount)
            if job[1] == 0:
                release, _, deadline = pending[index].pop(0)
                outcomes.complete(index, release, deadline, now)
            head = entries[index][0]
            if not pending[index] and now % tasks[index][1] != 0:
                if head[0] <= now and used[index] > 0:
                    plan(index, head[0] + period, used[index])
                    head[1] -= used[index]
                    used[index] = 0
                state[index] = "idle"
            elif head[0] > now:
                state[index] = "depleted"
        for index, (c, t, d, *_) in enumerate(tasks):
            if now % t == 0:
                pending[index].append([now, c, now + d])
                outcomes.tasks[index]["jobs"] += 1
                if state[index] == "idle":
                    activate(index, now)
        for index in range(count):
            if state[index] == "depleted" and entries[index][0][0] <= now:
                state[index] = "ready"
        if now == horizon:
            break
        ready = [i for i in range(count) if state[i] == "ready"]
        if running is not None and state[running] == "ready" \
                and now < switched + regions[running]:
            continue
        chosen = max(ready, key=lambda i: tasks[i][3]) if ready else None
        if chosen != running:
            switched = now
        running = chosen
    return outcomes.summary([(index, job[2]) for index, queue in enumerate(pending)
                             for job in queue], horizon)


def reserved_text(tasks, policy, horizon):
    """A scenario of `tasks` `(C, T, D, priority, Q, P[, S])` under `policy`."""
    lines = [f'name = "oracle"\npolicy = "{policy}"\nduration = "{horizon}ms"\n']
    for index, (c, t, d, priority, q, p, *queue) in enumerate(tasks):
        entries = f", replenishments = {queue[0]}" if queue else ""
        if len(queue) > 1 and queue[1] > 0:
            entries += f', non-preemptive = "{queue[1]}ms"'
        lines.append(f'[[task]]\nname = "t{index}"\npriority = {priority}\nperiod = "{t}ms"\n'
                     f'execution = "{c}ms"\ndeadline = "{d}ms"\n'
                     f'reservation = {{ budget = "{q}ms", period = "{p}ms"{entries} }}\n')
    return "\n".join(lines)


def random_reserved_set(rng):
    """1 to 4 periodic tasks `(C, T, D, priority, Q, P)` at distinct priorities, whose
    reservations and executions are drawn apart, so budgets run out and overloads happen."""
    tasks = []
    for priority in rng.sample(range(1, 50), rng.randint(1, 4)):
        p = rng.randint(2, 10)
        t = rng.randint(2, 12)
        c = rng.randint(1, t)
        tasks.append((c, t, rng.randint(1, 2 * t), priority, rng.randint(1, p), p))
    return tasks, rng.randint(10, 50)


def test_deferrable_servers_equal_a_reference_schedule():
    rng = random.Random(1409)
    for _ in range(SETS):
        tasks, horizon = random_reserved_set(rng)
        metrics = bulwark.simulate(reserved_text(tasks, "deferrable-server", horizon))
        assert_metrics_equal(metrics, reference_deferrable(tasks, horizon), (tasks, horizon))


@pytest.mark.parametrize("policy", ["sporadic-server", "spr"])
def test_sporadic_servers_equal_a_reference_schedule(policy):
    rng = random.Random(1411)
    for _ in range(SETS):
        tasks, horizon = random_reserved_set(rng)
        # Queues of 1, 2 and 8 entries (full queues merge often); under SPR, non-preemptive
        # regions up to the budget.
        tasks = [task + (rng.choice([1, 2, 8]),
                         rng.choice([0, rng.randint(0, task[4])]) if policy == "spr" else 0)
                 for task in tasks]
        metrics = bulwark.simulate(reserved_text(tasks, policy, horizon))
        assert_metrics_equal(metrics, reference_sporadic(tasks, horizon), (tasks, horizon))


@pytest.mark.parametrize("shielded,baseline", [("spr", "sporadic-server"),
                                                ("spr-deferrable", "deferrable-server")])
def test_spr_schedules_as_its_baseline_at_zero_cost(shielded, baseline):
    """SPR's techniques (the SPR paper, sections III-B to III-E) remove timer interrupts
    that switch no task and bound what one invocation processes; they do not change which
    task runs. So without kernel costs or non-preemptive regions each SPR policy must
    schedule every job as its baseline server does."""
    rng = random.Random(1410)
    for _ in range(SETS // 3):
        tasks, horizon = random_reserved_set(rng)
        runs = [bulwark.simulate(reserved_text(tasks, policy, horizon))["tasks"]
                for policy in (shielded, baseline)]
        for spr, base in zip(*runs):
            keys = ("jobs", "completed", "misses", "first_miss_ns", "response")
            assert {k: spr[k] for k in keys} == {k: base[k] for k in keys}, (tasks, horizon)


# --- Scripts counted as a lump: sound against the machine ------------------------------------


def shown_sound(core, machine, policy, text):
    """How many verdicts of `analyze`'s `core` say schedulable, each checked against the
    machine's tasks: an EDF core misses nothing; a fixed-priority task or script misses
    nothing and its worst response is within its R."""
    if policy == "edf":
        if core["schedulable"] is not True:
            return 0
        assert all(task["misses"] == 0 for task in machine.values()), text
        return 1
    shown = 0
    for task in core["tasks"]:
        if task.get("verdict") == "schedulable":
            shown += 1
            ran = machine[task["name"]]
            assert ran["misses"] == 0, text
            assert (ran["response"]["max_ns"] or 0) <= task["response_ns"], text
    return shown


def analysed_and_run(cli, path):
    """`analyze --json`'s first core for the file at `path` (a verdict or none: exit 0, 1 or
    2), and the machine's tasks by name."""
    run = subprocess.run([cli, "analyze", str(path), "--json"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode in (0, 1, 2), (run.stderr, path.read_text())
    machine = {task["name"]: task for task in bulwark.simulate(path.read_text())["tasks"]}
    return json.loads(run.stdout)["cores"][0], machine


def random_script(rng, policy, index):
    """A script of runs, computations and sleeps (at times in a counted loop): bounded work."""
    steps = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["run", "compute", "sleep-for", "sleep-until"])
        if kind == "run":
            steps.append(f'{{ run = "{rng.randint(1, 6)}ms" }}')
        elif kind == "compute":
            steps.append(f'{{ compute = {rng.randint(1, 4)}, each = "{rng.randint(1, 2)}ms" }}')
        elif kind == "sleep-for":
            steps.append(f'{{ sleep-for = "{rng.randint(1, 20)}ms" }}')
        else:
            steps.append(f'{{ sleep-until = "{rng.randint(1, 150)}ms" }}')
    if rng.random() < 0.5:
        steps = [f'{{ loop = {rng.randint(1, 3)}, body = [{", ".join(steps)}] }}']
    rank = f"priority = {rng.randint(5, 35)}\n" if policy == "fixed-priority" else ""
    # EDF requires a deadline; under fixed priority a script may have none.
    due = (f'deadline = "{rng.randint(5, 60)}ms"\n'
           if policy == "edf" or rng.random() < 0.3 else "")
    return f'[[task]]\nname = "s{index}"\n{rank}{due}script = [{", ".join(steps)}]\n'


@pytest.mark.parametrize("policy", ["fixed-priority", "edf"])
def test_scripts_counted_as_a_lump_are_sound(cli, tmp_path, policy):
    """`analyze` counts a script's work over the run beside the periodic tasks (under fixed
    priority as one lump in B, under EDF as one job due at the script's deadline), and under
    fixed priority analyses each script as one job of its longest job's work:
    whatever it calls schedulable (a fixed-priority task or script with its bound R, an EDF
    core with its scripts) must miss nothing in the machine, and a worst response must be
    within R."""
    rng = random.Random(1412 if policy == "edf" else 1413)
    shown = 0
    for number in range(150):
        lines = [f'name = "lump"\npolicy = "{policy}"\nduration = "200ms"\n']
        for index in range(rng.randint(1, 3)):
            t = rng.randint(5, 30)
            rank = f"priority = {rng.randint(10, 30)}\n" if policy == "fixed-priority" else ""
            lines.append(f'[[task]]\nname = "t{index}"\nperiod = "{t}ms"\n'
                         f'execution = "{rng.randint(1, max(1, t // 3))}ms"\n{rank}')
        lines += [random_script(rng, policy, index) for index in range(rng.randint(1, 2))]
        path = tmp_path / f"lump-{number}.toml"
        path.write_text("\n".join(lines))
        run = subprocess.run([cli, "analyze", str(path), "--json"], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode in (0, 1, 2), run.stderr
        core = json.loads(run.stdout)["cores"][0]
        simulated = subprocess.run([cli, "simulate", str(path), "--json"], capture_output=True,
                                   text=True, timeout=60)
        machine = {task["name"]: task for task in json.loads(simulated.stdout)["tasks"]}
        shown += shown_sound(core, machine, policy, path.read_text())
    assert shown > 0


# --- Scripts of one endless job: sporadic tasks, sound and (periodic) exact ----------------


def endless_script(rng, sleep, index, rank, exact):
    """A script that is one endless loop of a job's work and `sleep`, with a deadline (but at
    times none under fixed priority) and an offset; `exact` work never varies."""
    spacing = rng.randint(4, 30)
    low = rng.randint(1, max(1, spacing // 3))
    work = rng.choice([f'{{ run = "{low}ms" }}', f'{{ compute = {low}, each = "1ms" }}'])
    if not exact and rng.random() < 0.4:
        work = f'{{ run = ["{low}ms", "{low + rng.randint(0, 2)}ms"] }}'
    due = f'deadline = "{rng.randint(low, spacing)}ms"\n'
    if rank and not exact and rng.random() < 0.2:
        due = ""
    offset = 0 if exact else rng.choice([0, rng.randint(0, 12)])
    return (f'[[task]]\nname = "s{index}"\n{rank}{due}offset = "{offset}ms"\n'
            f'script = [{{ loop = "forever", body = [{work}, '
            f'{{ {sleep} = "{spacing}ms" }}] }}]\n')


def endless_file(rng, policy, exact):
    """Periodic tasks and endless scripts; distinct priorities when `exact` (the analysis
    counts equal ones as interference, the machine serves them first come, first served)."""
    count = rng.randint(2, 4)
    priorities = rng.sample(range(1, 40), count) if exact else [
        rng.randint(1, 4) for _ in range(count)]
    lines = [f'name = "endless"\npolicy = "{policy}"\nduration = "300ms"\n']
    for index, priority in enumerate(priorities):
        rank = f"priority = {priority}\n" if policy == "fixed-priority" else ""
        if rng.random() < 0.5:
            t = rng.randint(4, 30)
            c = rng.randint(1, max(1, t // 3))
            lines.append(f'[[task]]\nname = "t{index}"\nperiod = "{t}ms"\nexecution = "{c}ms"\n'
                         f'deadline = "{rng.randint(c, t)}ms"\n{rank}')
        else:
            sleeps = ["sleep-until-next-release"] if exact else [
                "sleep-until-next-release", "sleep-until-aligned", "sleep-for"]
            lines.append(endless_script(rng, rng.choice(sleeps), index, rank, exact))
    return "\n".join(lines)


@pytest.mark.parametrize("policy", ["fixed-priority", "edf"])
def test_endless_scripts_analysed_as_sporadic_tasks_are_sound(cli, tmp_path, policy):
    """A script that is one endless loop of work and a sleep is analysed as a sporadic task
    (`T` from the sleep, `J` for a first release off `sleep-until-aligned`'s grid): whatever
    `analyze` calls schedulable must miss nothing in the machine over 300 ms from any offset,
    and under fixed priority each task's worst response must be within its R."""
    rng = random.Random(1414 if policy == "edf" else 1415)
    shown = 0
    for number in range(200):
        path = tmp_path / f"endless-{number}.toml"
        path.write_text(endless_file(rng, policy, exact=False))
        # 2: a failure with a script whose releases the sporadic model only bounds.
        core, machine = analysed_and_run(cli, path)
        shown += shown_sound(core, machine, policy, path.read_text())
    assert shown > 0


def test_periodic_scripts_are_refuted_exactly(cli, tmp_path):
    """With distinct priorities, constrained deadlines, exact work and every release at 0, a
    script ended by `sleep-until-next-release` is a periodic task and 0 is the critical
    instant: a task that the analysis says misses must miss in the machine, and one that it
    says meets must have the machine's worst response equal to R (job 0's)."""
    rng = random.Random(1416)
    refuted = met = 0
    for number in range(200):
        path = tmp_path / f"periodic-{number}.toml"
        path.write_text(endless_file(rng, "fixed-priority", exact=True))
        run = subprocess.run([cli, "analyze", str(path), "--json"], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode in (0, 1), (run.stderr, path.read_text())
        machine = {task["name"]: task for task in bulwark.simulate(path.read_text())["tasks"]}
        for task in json.loads(run.stdout)["cores"][0]["tasks"]:
            ran = machine[task["name"]]
            if task["verdict"] == "schedulable":
                met += 1
                assert ran["response"]["max_ns"] == task["response_ns"], path.read_text()
            else:
                refuted += 1
                assert ran["misses"] > 0, path.read_text()
    assert refuted > 0 and met > 0


# --- Passive-server calls under fixed priority: waits for lower tasks' calls in B -----------


def server_file(rng, policy):
    """A core of periodic tasks and endless scripts (at times after a start of sleeps) that
    call one or two passive servers, each with bandwidth inheritance, a ceiling (fixed
    priority only) or neither, behind a FIFO or PRIO gate; calls ask for the server's
    operation or their own."""
    rules = ["inherit", "ceiling", "none"] if policy == "fixed-priority" else [
        "inherit", "inherit", "none"]
    servers = [{"name": f"v{s}", "rule": rng.choice(rules),
                "gate": rng.choice(["fifo-ipc", "prio-ipc"]), "operation": rng.randint(1, 3),
                "callers": []} for s in range(rng.randint(1, 2))]
    tasks = []
    for index in range(rng.randint(2, 5)):
        priority = rng.randint(1, 8)
        rank = f"priority = {priority}\n" if policy == "fixed-priority" else ""
        if rng.random() < 0.3:
            t = rng.randint(10, 40)
            tasks.append(f'[[task]]\nname = "t{index}"\n{rank}'
                         f'period = "{t}ms"\nexecution = "{rng.randint(1, max(1, t // 6))}ms"\n')
            continue
        body = []
        for server in rng.sample(servers, rng.randint(1, len(servers))):
            server["callers"].append(priority)
            own = f', operation = "{rng.randint(1, 3)}ms"' if rng.random() < 0.3 else ""
            body.append(f'{{ invoke = "{server["name"]}"{own} }}')
            if rng.random() < 0.5:
                body.append(f'{{ run = "{rng.randint(1, 2)}ms" }}')
        spacing = rng.randint(12, 50)
        sleep = rng.choice(["sleep-until-next-release", "sleep-until-aligned", "sleep-for"])
        body.append(f'{{ {sleep} = "{spacing}ms" }}')
        start = f'{{ sleep-until = "{rng.randint(1, 9)}ms" }}, ' if rng.random() < 0.3 else ""
        # EDF needs a script's deadline; fixed priority at times goes without.
        due = (f'deadline = "{rng.randint(5, spacing)}ms"\n'
               if rng.random() < 0.7 or policy == "edf" else "")
        tasks.append(f'[[task]]\nname = "s{index}"\n{rank}{due}'
                     f'offset = "{rng.randint(0, 5)}ms"\n'
                     f'script = [{start}{{ loop = "forever", body = [{", ".join(body)}] }}]\n')
    lines = [f'name = "calls"\npolicy = "{policy}"\nduration = "300ms"\n']
    for server in servers:
        rule = {"inherit": "bandwidth-inheritance = true\n", "none": "",
                "ceiling": f"priority = {max(server['callers'] or [1]) + rng.randint(0, 2)}\n"}
        lines.append(f'[[server]]\nname = "{server["name"]}"\ngate = "{server["gate"]}"\n'
                     f'operation = "{server["operation"]}ms"\n{rule[server["rule"]]}')
    return "\n".join(lines + tasks)


@pytest.mark.parametrize("policy", ["fixed-priority", "edf"])
def test_waits_for_other_tasks_server_calls_are_sound(cli, tmp_path, policy):
    """A passive server's call runs on its caller's context. Under fixed priority a task's B
    holds the lower tasks' operations it may wait for (bandwidth inheritance, a ceiling, or
    its own call at a server without either, when no task runs between); under EDF the
    demand's M holds one operation of each task due after the first deadline (bandwidth
    inheritance). Whatever `analyze` calls schedulable must miss nothing in the machine over
    300 ms, each fixed-priority worst response within its R; some of those verdicts must
    have had such a wait counted."""
    rng = random.Random(1417 if policy == "fixed-priority" else 1418)
    shown = waited = 0
    for number in range(300):
        path = tmp_path / f"calls-{number}.toml"
        path.write_text(server_file(rng, policy))
        core, machine = analysed_and_run(cli, path)
        shown += shown_sound(core, machine, policy, path.read_text())
        if policy == "edf":
            waited += core["schedulable"] is True and core.get("servers_ns", 0) > 0
        else:
            waited += sum(1 for task in core["tasks"]
                          if task.get("verdict") == "schedulable" and task["servers_ns"] > 0)
    assert shown > 0 and waited > 0, (shown, waited)
