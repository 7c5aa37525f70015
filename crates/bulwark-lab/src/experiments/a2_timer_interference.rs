//! Attack A2, coordinated timer interference (SPR paper, section V-A, Figs. 9 and 10): N
//! low-priority sporadic servers fill their replenishment queues so that N x S replenishments
//! fall, each at its own instant, inside a high-priority task's long job. A naive sporadic
//! server takes a timer interrupt for each; SPR defers them all until the victim is done.
//!
//! The scenario (one core, the cost model of [`platform::PAPER_PLATFORM`]):
//! - the victim, priority 200: one job of 250 ms released at 1 s (a periodic task of period
//!   1 s), in a reservation `b = 500 ms, p = 1 s`;
//! - N attackers, priority 1, in reservations `b = 180 us, p = 1 s` with a replenishment
//!   queue of capacity S; attacker `i` starts at `10 us x (i + 1)` and runs
//!   `loop S-1 { run 1us; sleep-for 1us }` then `loop forever { run 10ms }`. Each brief
//!   suspension splits off the budget consumed since the attacker's last activation, planned
//!   one period after that activation; the final depletion plans the rest. So each attacker
//!   leaves S replenishments at S distinct instants, one period after its S activations, and
//!   the N attackers' activations interleave: N x S distinct instants in
//!   `[1 s, 1 s + N x 180 us]`, inside the victim's job for every N up to 1024.
//!
//! Every reservation passes SPR's admission test (Eq. 1) at every N swept: the attackers' 1 s
//! period leaves room for the victim's whole budget, so what the victim suffers is not an
//! overload the analysis would have refused.
//!
//! The paper's attackers are woken by an auxiliary thread; here they sleep 1 us, which
//! plants the same replenishments.
//!
//! Interference is the victim's response time minus its execution time: everything the
//! kernel did while the victim's job was pending. Timer interrupts taken during the job are
//! counted by running the same scenario to the victim's release and to its completion (runs
//! are deterministic, so a shorter run is a prefix of a longer one).
//!
//! Worked out by hand from the code (`bulwark-core/src/reservation/{sporadic,spr}.rs`, the
//! timer queue and the machine's kernel entry), with the costs of the paper's platform:
//! - the victim's own release, on an idle core: interrupt entry, scheduler and context switch
//!   (1,000 + 300 + 500 cycles) plus the policy's work. The naive sporadic server does 9 units
//!   (a failed look for an expired replenishment; the wake-up: examine, pop, count, queue; a
//!   failed look for another; the victim's one-entry queue for its depletion time; the two
//!   timer queues' tops for the next interrupt): 2,070 ns. SPR does 4 (examine the top of the
//!   victim's level, cancel its timeout, count it processed, queue it): 1,920 ns;
//! - each attacker replenishment under the naive sporadic server is its own timer interrupt
//!   while the victim runs: 1,000 + 300 cycles, no context switch, and 10 units on average (the
//!   expired timer: examine, pop, count, count the replenishment, re-arm the attacker's next
//!   one; a failed look for another; no wake-up due, 1; the victim's depletion time, 1; the
//!   two timer queues' tops, 2; the attacker's first replenishment also queues it, +1, and its
//!   last re-arms nothing, -1): 1,600 ns. So `2,070 + 1,600 N S` ns in all;
//! - under SPR no attacker timeout is due above the victim's priority, so none interrupts it:
//!   1,920 ns, whatever N and S.
//!
//! Two replenishments whose instants fall within one interrupt's kernel time share it: the
//! second then costs 1,450 ns less (no interrupt entry nor scheduler; of its 10 units only the
//! 5 spent on its own timer remain). That is the whole difference between the naive server's
//! measurement and `2,070 + 1,600 N S`, and a check holds the measurement to it exactly.

use bulwark_analysis::rbf::ServerKind;
use bulwark_core::{Duration, Instant, Priority};
use bulwark_sim::Options;
use bulwark_spec::{
    Behaviour, CostModel, Execution, PolicyKind, Reservation, Scenario, Step, TaskSpec,
};
use serde::Serialize;

use super::a1_thundering_herd::{admitted, error_percent, ns};
use super::{platform, Experiment, LabError};
use crate::plot::{line_plot_scaled, Scale, Series};
use crate::report::{headings, Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "a2-timer-interference",
    title: "A2 coordinated timer interference: interference vs. attackers under SS and SPR",
    run,
};

/// The attacker counts of the paper's Fig. 10.
pub const DEFAULT_ATTACKERS: &[u32] = &[1, 4, 16, 64, 256, 1024];

/// The two policies compared: the naive sporadic server and SPR (sporadic rule).
pub const POLICIES: [PolicyKind; 2] = [PolicyKind::SporadicServer, PolicyKind::Spr];

/// The replenishment-queue capacities of the paper's Fig. 10.
pub const QUEUE_SIZES: [u16; 2] = [16, 32];

/// The victim's release and its job's execution time.
const VICTIM_RELEASE: Duration = Duration::from_secs(1);
const VICTIM_EXECUTION: Duration = Duration::from_millis(250);
/// The victim's reservation: room for its job and any interference charged to it.
const VICTIM_BUDGET: Duration = Duration::from_millis(500);
const VICTIM_PERIOD: Duration = Duration::from_secs(1);
/// The attackers' reservation.
const ATTACKER_BUDGET: Duration = Duration::from_micros(180);
const ATTACKER_PERIOD: Duration = Duration::from_secs(1);
/// Attacker `i` starts at `STAGGER x (i + 1)`.
const STAGGER: Duration = Duration::from_micros(10);
/// Each brief execution and suspension of the filling phase.
const CHUNK: Duration = Duration::from_micros(1);
/// How long a run lasts: the victim completes by 1.31 s at N = 1024, S = 32.
const DURATION: Duration = Duration::from_millis(1_450);
const VICTIM_PRIORITY: Priority = Priority(200);
const ATTACKER_PRIORITY: Priority = Priority(1);

/// One run: a policy and a queue capacity facing `attackers` attackers.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The policy's scenario name (`sporadic-server` or `spr`).
    pub policy: &'static str,
    /// S, the attackers' replenishment-queue capacity.
    pub replenishments: u16,
    /// N, the number of attackers.
    pub attackers: u32,
    /// The victim's response time minus its execution time, ns.
    pub interference_ns: u64,
    /// Timer interrupts taken while the victim's job was pending (from its release to its
    /// completion, both included).
    pub timer_interrupts: u64,
    /// The interference worked out by hand ([`expected_interference_ns`]), ns.
    pub expected_ns: u64,
    /// Whether every reservation passes SPR's admission test (Eq. 1, sporadic-server
    /// request-bound functions).
    pub admitted: bool,
}

/// The times and costs of an A2 scenario: the simulated platform's ([`SIMULATED`]), or those
/// fitted to a real core (the host experiment's).
#[derive(Clone, Debug)]
pub struct Timing {
    /// The scenario's name.
    pub name: &'static str,
    /// The victim's release, job execution, reservation and period.
    pub victim_release: Duration,
    pub victim_execution: Duration,
    pub victim_budget: Duration,
    pub victim_period: Duration,
    /// The attackers' reservation.
    pub attacker_budget: Duration,
    pub attacker_period: Duration,
    /// Attacker `i` starts at `stagger x (i + 1)`.
    pub stagger: Duration,
    /// Each brief execution and each suspension of the filling phase.
    pub chunk: Duration,
    pub fill_sleep: Duration,
    /// How long a run lasts.
    pub duration: Duration,
    /// What kernel work costs.
    pub cost: bulwark_spec::CostModel,
    /// Digits of the attackers' numbers in their names.
    pub name_digits: usize,
}

/// The simulated A2: the paper's platform costs, a 250 ms victim job released at 1 s.
pub const SIMULATED: Timing = Timing {
    name: "attack-a2",
    victim_release: VICTIM_RELEASE,
    victim_execution: VICTIM_EXECUTION,
    victim_budget: VICTIM_BUDGET,
    victim_period: VICTIM_PERIOD,
    attacker_budget: ATTACKER_BUDGET,
    attacker_period: ATTACKER_PERIOD,
    stagger: STAGGER,
    chunk: CHUNK,
    fill_sleep: CHUNK,
    duration: DURATION,
    cost: platform::PAPER_PLATFORM,
    name_digits: 2,
};

/// The scenario: the victim and `attackers` attackers with queues of capacity
/// `replenishments`, under `policy`. Task 0 is the victim; attacker `i` is task `i + 1`.
pub fn scenario(policy: PolicyKind, replenishments: u16, attackers: u32) -> Scenario {
    scenario_with(&SIMULATED, policy, replenishments, attackers as usize)
}

/// [`scenario`] with the times and costs of `timing`.
pub fn scenario_with(
    timing: &Timing,
    policy: PolicyKind,
    replenishments: u16,
    attackers: usize,
) -> Scenario {
    let victim = TaskSpec {
        name: "victim".into(),
        core: 0,
        priority: Some(VICTIM_PRIORITY),
        reservation: Some(Reservation::new(timing.victim_budget, timing.victim_period)),
        deadline: Some(timing.victim_period),
        behaviour: Behaviour::Periodic {
            period: timing.victim_period,
            offset: timing.victim_release,
            execution: Execution::Fixed(timing.victim_execution),
        },
    };
    let attacker = |i: usize| TaskSpec {
        name: format!("attacker-{i:0width$}", width = timing.name_digits),
        core: 0,
        priority: Some(ATTACKER_PRIORITY),
        reservation: Some(
            Reservation::new(timing.attacker_budget, timing.attacker_period)
                .with_replenishments(replenishments),
        ),
        deadline: None,
        behaviour: Behaviour::Script {
            offset: timing.stagger.saturating_mul(i as u64 + 1),
            steps: vec![
                Step::Loop {
                    count: Some(u64::from(replenishments.saturating_sub(1))),
                    body: vec![
                        Step::Run(Execution::Fixed(timing.chunk)),
                        Step::SleepFor(timing.fill_sleep),
                    ],
                },
                Step::Loop {
                    count: None,
                    body: vec![Step::Run(Execution::Fixed(Duration::from_millis(10)))],
                },
            ],
        },
    };
    let tasks = std::iter::once(victim)
        .chain((0..attackers).map(attacker))
        .collect();
    Scenario {
        description: format!(
            "Coordinated timer interference: {attackers} attackers plant {replenishments} \
             replenishments each inside a victim's job"
        ),
        cost: timing.cost,
        ..Scenario::new(timing.name, policy, 1, timing.duration, tasks)
    }
}

/// The interference worked out by hand (see the module documentation), ns.
pub fn expected_interference_ns(
    policy: PolicyKind,
    replenishments: u16,
    attackers: u32,
    cost: &CostModel,
) -> u64 {
    let release = cost.timer_interrupt + cost.scheduler + cost.context_switch;
    match policy {
        PolicyKind::SporadicServer => {
            let wake_up = cost.time_of(release + 9 * cost.per_work_unit);
            let each =
                cost.time_of(cost.timer_interrupt + cost.scheduler + 10 * cost.per_work_unit);
            let planted = u64::from(attackers) * u64::from(replenishments);
            wake_up
                .saturating_add(each.saturating_mul(planted))
                .as_nanos()
        }
        _ => cost.time_of(release + 4 * cost.per_work_unit).as_nanos(),
    }
}

/// What a replenishment saves under the naive sporadic server when it expires within an
/// earlier one's kernel time and is processed by the same interrupt: the interrupt entry, the
/// scheduler invocation and 5 units of work (see the module documentation), ns.
pub fn shared_interrupt_saving_ns(cost: &CostModel) -> u64 {
    cost.time_of(cost.timer_interrupt + cost.scheduler + 5 * cost.per_work_unit)
        .as_nanos()
}

/// Runs every policy and queue capacity against every attacker count, in the order policy,
/// S, N.
pub fn sweep(attackers: &[u32]) -> Result<Vec<Point>, LabError> {
    let mut points = Vec::new();
    for policy in POLICIES {
        for s in QUEUE_SIZES {
            for &n in attackers {
                points.push(measure(policy, s, n)?);
            }
        }
    }
    Ok(points)
}

/// One point: a full run for the victim's response time, then two prefixes of it for the
/// timer interrupts taken during its job.
fn measure(policy: PolicyKind, s: u16, n: u32) -> Result<Point, LabError> {
    let scenario = scenario(policy, s, n);
    let outcome = bulwark_sim::run(&scenario, &Options::default())?;
    let victim = &outcome.tasks[0];
    let response = if victim.completed == 1 {
        Duration::from_nanos(victim.response.max_ns)
    } else {
        // Unfinished by the end of the run: at least the whole run since its release.
        Duration::from_nanos(outcome.until.as_nanos()).saturating_sub(VICTIM_RELEASE)
    };
    let release = Instant::ZERO.saturating_add(VICTIM_RELEASE);
    let completion = release.saturating_add(response);
    let interrupts_until = |until: Instant| -> Result<u64, LabError> {
        let options = Options {
            until: Some(Duration::from_nanos(until.as_nanos())),
            ..Options::default()
        };
        Ok(bulwark_sim::run(&scenario, &options)?.cores[0].timer_interrupts)
    };
    let before = interrupts_until(release.saturating_sub(Duration::from_nanos(1)))?;
    let through = interrupts_until(completion)?;
    Ok(Point {
        policy: policy.name(),
        replenishments: s,
        attackers: n,
        interference_ns: response.saturating_sub(VICTIM_EXECUTION).as_nanos(),
        timer_interrupts: through - before,
        expected_ns: expected_interference_ns(policy, s, n, &scenario.cost),
        admitted: admitted(&scenario, ServerKind::Sporadic),
    })
}

fn run() -> Result<ExperimentReport, LabError> {
    let points = sweep(DEFAULT_ATTACKERS)?;
    Ok(report(&points))
}

/// The interference the paper reports for 64 attackers under the sporadic server (section
/// V-A: "even with only 64 threads, delays under the SS policy reach already about 2.5 ms").
pub const PAPER_SS_AT_64_NS: u64 = 2_500_000;

/// Where the paper's values for A2 come from, and what they are not.
pub const PAPER_NOTE: &str = "SPR paper, section V-A on Fig. 10: SS interference grows \
     \"proportionally\" with N and S, \"about 2.5 ms\" at 64 threads (S not stated); SPR's \
     \"flat, N-invariant\". The text gives the figure's shape and this one magnitude, not its \
     points (measured on Composite, 0.8-1.1 GHz).";

/// What the SPR paper reports for the victim's interference under `policy` with `attackers`
/// attackers (section V-A, on Fig. 10): under the sporadic server it "increases
/// proportionally" with N and S_i, and "even with only 64 threads, delays under the SS policy
/// reach already about 2.5 ms"; under SPR the trend is "flat, N-invariant". The figure's
/// points are not in the paper's text, so no other number can be quoted.
pub fn paper_value(policy: PolicyKind, attackers: u32) -> &'static str {
    match policy {
        PolicyKind::SporadicServer if attackers == 64 => "about 2.5 ms",
        PolicyKind::SporadicServer => "grows with N and S",
        _ => "flat",
    }
}

/// The checks of a sweep's points; they adapt to the attacker counts swept, so a reduced sweep
/// is checked the same way.
pub fn checks(points: &[Point]) -> Vec<Check> {
    let of = |policy: PolicyKind, s: u16| -> Vec<&Point> {
        points
            .iter()
            .filter(|p| p.policy == policy.name() && p.replenishments == s)
            .collect()
    };
    let ss: Vec<&Point> = points
        .iter()
        .filter(|p| p.policy == PolicyKind::SporadicServer.name())
        .collect();
    let spr: Vec<&Point> = points
        .iter()
        .filter(|p| p.policy == PolicyKind::Spr.name())
        .collect();
    let mut checks = Vec::new();

    // 1. SS matches the hand derivation everywhere; the brief's reference point called out.
    let worst = ss
        .iter()
        .map(|p| error_percent(p.interference_ns, p.expected_ns))
        .fold(0.0, f64::max);
    checks.push(Check {
        claim: "SS: interference is 2,070 ns + N x S x 1,600 ns (one timer interrupt, scheduler \
                and 10 units of work per planted replenishment), at every N and S"
            .into(),
        expected: "within 5% at every point".into(),
        measured: format!("largest deviation {worst:.2}%"),
        pass: !ss.is_empty() && worst <= 5.0,
    });
    if let Some(p) = ss
        .iter()
        .find(|p| p.attackers == 64 && p.replenishments == 32)
    {
        checks.push(Check {
            claim: "SS, N = 64, S = 32: interference close to the hand-derived \
                    N x S x (interrupt + scheduler + work)"
                .into(),
            expected: format!("{} within 5%", ns(p.expected_ns)),
            measured: ns(p.interference_ns),
            pass: error_percent(p.interference_ns, p.expected_ns) <= 5.0,
        });
    }

    // 2. Each planted replenishment is its own interrupt under SS (Fig. 9).
    let fewest = ss
        .iter()
        .map(|p| {
            let planted = u64::from(p.attackers) * u64::from(p.replenishments) + 1;
            p.timer_interrupts as f64 / planted as f64
        })
        .fold(f64::INFINITY, f64::min);
    checks.push(Check {
        claim: "SS: almost every planted replenishment takes its own timer interrupt during \
                the victim's job (N x S of them, plus the victim's release)"
            .into(),
        expected: "at least 95% of N x S + 1 at every point".into(),
        measured: format!("at least {:.1}%", fewest * 100.0),
        pass: !ss.is_empty() && fewest >= 0.95,
    });

    // 2b. The deviation from the derivation is exactly the shared interrupts.
    let cost = platform::PAPER_PLATFORM;
    let saving = shared_interrupt_saving_ns(&cost);
    let off = ss
        .iter()
        .map(|p| {
            let planted = u64::from(p.attackers) * u64::from(p.replenishments) + 1;
            let shared = planted.saturating_sub(p.timer_interrupts);
            let exact = p.expected_ns.saturating_sub(saving * shared);
            p.interference_ns.abs_diff(exact)
        })
        .max()
        .unwrap_or(u64::MAX);
    checks.push(Check {
        claim: format!(
            "SS: the derivation is exact once the replenishments that shared an interrupt \
             are counted ({} less each: no interrupt entry or scheduler, 5 units fewer)",
            ns(saving)
        ),
        expected: "0ns off at every point".into(),
        measured: format!("at most {} off", ns(off)),
        pass: off == 0,
    });

    // 3. More queue entries, more interference.
    let pairs: Vec<(&Point, &Point)> = of(PolicyKind::SporadicServer, QUEUE_SIZES[0])
        .into_iter()
        .zip(of(PolicyKind::SporadicServer, QUEUE_SIZES[1]))
        .collect();
    let least_ratio = pairs
        .iter()
        .map(|(small, large)| large.interference_ns as f64 / small.interference_ns.max(1) as f64)
        .fold(f64::INFINITY, f64::min);
    checks.push(Check {
        claim: format!(
            "SS: S = {} causes more interference than S = {} at every N",
            QUEUE_SIZES[1], QUEUE_SIZES[0]
        ),
        expected: "more, at every N".into(),
        measured: format!("at least {least_ratio:.2}x as much"),
        pass: !pairs.is_empty() && least_ratio > 1.0,
    });

    // 4. SS grows with N.
    let growing = QUEUE_SIZES.iter().all(|&s| {
        of(PolicyKind::SporadicServer, s).windows(2).all(|w| {
            w[0].attackers >= w[1].attackers || w[0].interference_ns < w[1].interference_ns
        })
    });
    checks.push(Check {
        claim: "SS: interference grows with N, for both S".into(),
        expected: "strictly increasing".into(),
        measured: if growing {
            "increasing"
        } else {
            "not increasing"
        }
        .into(),
        pass: growing,
    });

    // 5. SPR is flat, at the hand-derived constant, and takes no attacker interrupt.
    if let (Some(low), Some(high)) = (
        spr.iter().map(|p| p.interference_ns).min(),
        spr.iter().map(|p| p.interference_ns).max(),
    ) {
        let expected = spr[0].expected_ns;
        let first = spr.iter().map(|p| p.attackers).min().unwrap_or(0);
        let last = spr.iter().map(|p| p.attackers).max().unwrap_or(0);
        checks.push(Check {
            claim: format!(
                "SPR: interference does not depend on N or S (attacker timeouts deferred), \
                 N = {first} to {last}"
            ),
            expected: format!("{} (by hand) at every point, within 1%", ns(expected)),
            measured: format!("{} to {}", ns(low), ns(high)),
            pass: error_percent(low, expected) <= 1.0 && error_percent(high, expected) <= 1.0,
        });
        let most = spr.iter().map(|p| p.timer_interrupts).max().unwrap_or(0);
        checks.push(Check {
            claim: "SPR: the only timer interrupt during the victim's job is its own release"
                .into(),
            expected: "1".into(),
            measured: most.to_string(),
            pass: most == 1,
        });
    }

    // 6. Admission is not what breaks.
    let refused: Vec<String> = points
        .iter()
        .filter(|p| !p.admitted)
        .map(|p| format!("{} S = {} N = {}", p.policy, p.replenishments, p.attackers))
        .collect();
    checks.push(Check {
        claim: "Every reservation (victim and attackers) passes SPR's admission test, Eq. 1 \
                with sporadic-server RBFs, at every N and S"
            .into(),
        expected: "admitted everywhere".into(),
        measured: if refused.is_empty() {
            "admitted everywhere".into()
        } else {
            format!("refused: {}", refused.join(", "))
        },
        pass: !points.is_empty() && refused.is_empty(),
    });

    // 7. The paper's magnitude at 64 threads.
    let at_64: Vec<&&Point> = ss.iter().filter(|p| p.attackers == 64).collect();
    if !at_64.is_empty() {
        let within = at_64.iter().all(|p| {
            p.interference_ns * 2 >= PAPER_SS_AT_64_NS && p.interference_ns <= PAPER_SS_AT_64_NS * 2
        });
        checks.push(Check {
            claim: "SS, N = 64: the same magnitude as the paper's \"about 2.5 ms\" (section V-A)"
                .into(),
            expected: "within a factor of 2 of 2.5 ms, for S = 16 and S = 32".into(),
            measured: at_64
                .iter()
                .map(|p| format!("S = {}: {}", p.replenishments, ns(p.interference_ns)))
                .collect::<Vec<_>>()
                .join(", "),
            pass: within,
        });
    }
    checks
}

/// The report of a sweep's points.
pub fn report(points: &[Point]) -> ExperimentReport {
    let rows = points
        .iter()
        .map(|p| {
            vec![
                p.policy.to_string(),
                p.replenishments.to_string(),
                p.attackers.to_string(),
                ns(p.interference_ns),
                p.timer_interrupts.to_string(),
                ns(p.expected_ns),
                if p.admitted { "yes" } else { "no" }.to_string(),
                POLICIES
                    .into_iter()
                    .find(|policy| policy.name() == p.policy)
                    .map_or("-", |policy| paper_value(policy, p.attackers))
                    .to_string(),
            ]
        })
        .collect();
    let mut series = Vec::new();
    for policy in POLICIES {
        for s in QUEUE_SIZES {
            let drawn: Vec<&Point> = points
                .iter()
                .filter(|p| p.policy == policy.name() && p.replenishments == s)
                .collect();
            // SPR's curve is flat and S does not change it: the legend gives its value, and
            // says that the two SPR curves lie on each other.
            let name = match policy {
                PolicyKind::SporadicServer => format!("SS, S = {s}"),
                _ => match (
                    drawn.iter().map(|p| p.interference_ns).min(),
                    drawn.iter().map(|p| p.interference_ns).max(),
                ) {
                    (Some(low), Some(high)) if low == high => {
                        format!("SPR, S = {s}: {} at every N", ns(low))
                    }
                    (Some(low), Some(high)) => {
                        format!("SPR, S = {s}: {} to {}", ns(low), ns(high))
                    }
                    _ => format!("SPR, S = {s}"),
                },
            };
            series.push(Series::new(
                name,
                drawn
                    .iter()
                    .map(|p| (f64::from(p.attackers), p.interference_ns as f64 / 1e6))
                    .collect(),
            ));
        }
    }
    // Log-log: SPR's microseconds and SS's tens of milliseconds are five decades apart; on a
    // linear y axis SPR's curve lay on the zero line.
    let svg = line_plot_scaled(
        "Interference from lower-priority replenishment timers (cf. SPR paper Fig. 10)",
        "attacking tasks N (log scale)",
        "victim interference (ms, log scale)",
        &series,
        Scale::Log,
        Scale::Log,
    );
    let at = |policy: PolicyKind, s: u16, n: u32| {
        points
            .iter()
            .find(|p| p.policy == policy.name() && p.replenishments == s && p.attackers == n)
            .map_or_else(|| "-".to_string(), |p| ns(p.interference_ns))
    };
    let ss = PolicyKind::SporadicServer;
    let summary = format!(
        "N low-priority attackers in sporadic-server reservations (b = 180 us, p = 1 s, a \
         replenishment queue of S entries) each suspend for 1 us S - 1 times, then run until \
         depleted. Every suspension plans the budget consumed since the attacker's last \
         activation one period after that activation, so the attackers plant N x S \
         replenishments at distinct instants inside the victim's 250 ms job, released at \
         1 s at priority 200 (b = 500 ms, p = 1 s). Every reservation passes SPR's admission \
         test (Eq. 1) at every N. Interference is the victim's response time minus its 250 ms \
         of execution, on the paper's platform costs (table below).\n\n\
         Under the naive sporadic server (SS) every replenishment has its own timer, armed \
         whatever the task's priority, so the victim takes one interrupt per planted \
         replenishment: 1.6 us each, worked out by hand in the module documentation and \
         matched by the measurement. At N = 64 that is {} for S = 16 and {} for S = 32; the \
         paper reports about 2.5 ms at 64 threads (Fig. 10). At N = 1024 it reaches {} and {}: \
         the victim loses a tenth to a fifth of its 250 ms of execution again to kernel work \
         on behalf of tasks it outranks. Under SPR the attackers' timeouts are never due \
         above the victim's priority, so none interrupts it: the interference is its own \
         release, {}, whatever N and S, which is the flat curve of the paper's Fig. 10.\n\n\
         Our absolute values come from the calibrated costs, whose reasons are given in \
         `crates/bulwark-lab/src/experiments/platform.rs`; the paper measured its Composite \
         kernel on a 0.8-1.1 GHz core with an rdtsc loop. Interrupts counted in the table \
         include the victim's own release; a few SS replenishments fall within an earlier \
         one's kernel time and share its interrupt.",
        at(ss, 16, 64),
        at(ss, 32, 64),
        at(ss, 16, 1024),
        at(ss, 32, 1024),
        at(PolicyKind::Spr, 32, 1024),
    );
    ExperimentReport {
        source: "SPR paper, section V-A, Figs. 9 and 10 (attack A2)".into(),
        summary,
        checks: checks(points),
        tables: vec![
            Table {
                caption: format!(
                    "Victim interference by policy, queue capacity S and attackers N (worked \
                     out by hand in the module documentation). Paper: {PAPER_NOTE}"
                ),
                header: headings([
                    "policy",
                    "S",
                    "N",
                    "interference",
                    "timer interrupts during the job",
                    "by hand",
                    "admitted (Eq. 1)",
                    "paper (V-A, Fig. 10)",
                ]),
                rows,
            },
            platform::cost_table(),
        ],
        figures: vec![Figure {
            file: "interference.svg".into(),
            caption: "Victim interference vs. attackers N, both axes logarithmic: under the \
                      naive SS it grows in proportion to N x S, under SPR it is flat at the \
                      victim's own release, five decades lower, for both S (the two SPR curves \
                      coincide) (cf. the paper's Fig. 10)"
                .into(),
            svg,
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::outcomes::built_in_scenario;

    #[test]
    fn a_reduced_sweep_has_the_papers_shape_and_every_check_holds() {
        let points = sweep(&[1, 16, 64]).expect("runs");
        assert_eq!(points.len(), 12);
        let checks = checks(&points);
        assert_eq!(checks.len(), 10);
        crate::test_support::assert_every_check_passes(&checks);
    }

    /// The paper's values stand beside ours: section V-A says SS reaches "about 2.5 ms" at
    /// 64 threads and grows with N and S, and SPR is flat.
    #[test]
    fn the_report_quotes_the_paper_beside_each_row() {
        assert_eq!(paper_value(PolicyKind::SporadicServer, 64), "about 2.5 ms");
        assert_eq!(
            paper_value(PolicyKind::SporadicServer, 4),
            "grows with N and S"
        );
        assert_eq!(paper_value(PolicyKind::Spr, 64), "flat");
        let points = sweep(&[64]).expect("runs");
        let report = report(&points);
        let table = &report.tables[0];
        let column = table
            .header
            .iter()
            .position(|h| h.starts_with("paper"))
            .expect("a paper column");
        for row in &table.rows {
            let expected = if row[0] == PolicyKind::SporadicServer.name() {
                "about 2.5 ms"
            } else {
                "flat"
            };
            assert_eq!(row[column], expected, "{row:?}");
        }
        assert!(table.caption.contains("about 2.5 ms"));
    }

    #[test]
    fn the_sweep_is_deterministic() {
        let a = serde_json::to_string(&sweep(&[4]).unwrap()).unwrap();
        let b = serde_json::to_string(&sweep(&[4]).unwrap()).unwrap();
        assert_eq!(a, b);
    }

    /// `scenarios/attack-a2.toml` is this scenario with N = 16 and S = 16, under the naive
    /// sporadic server.
    #[test]
    fn the_scenario_file_is_the_sixteen_attacker_case() {
        let file = built_in_scenario("attack-a2").unwrap();
        let code = scenario(PolicyKind::SporadicServer, 16, 16);
        assert_eq!(file.policy, code.policy);
        assert_eq!(file.cost, code.cost);
        assert_eq!(file.duration, code.duration);
        assert_eq!(file.cores, code.cores);
        assert_eq!(file.tasks, code.tasks);
    }
}
