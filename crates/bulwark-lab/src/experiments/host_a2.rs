//! Attack A2, coordinated timer interference, on this machine's real hardware (host group):
//! N low-priority sporadic-server attackers plant S replenishments each at distinct instants
//! inside a high-priority victim's long job, under the naive sporadic server and under SPR
//! (sporadic rule), both run by Bulwark's hosted runtime on core 1.
//!
//! The host scenario follows the simulated A2 ([`super::a2_timer_interference`]), with its
//! times fitted to a real core:
//! - the victim, priority 200, in a reservation `b = 500 ms` over a period longer than the
//!   run, is released once at [`VICTIM_RELEASE`]. Its code is a closure that spins reading
//!   CLOCK_MONOTONIC until it has executed [`VICTIM_EXECUTION`] of its own, and records every
//!   step between two consecutive reads longer than [`GAP_THRESHOLD`]: a stretch in which
//!   something else had the core (the dispatcher handling a timer, a host interrupt). The
//!   sum of those gaps is the job's interference (its response time minus its execution,
//!   as in the simulation), their number how often it was interrupted;
//! - N attackers, priority 1, in reservations `b = ATTACKER_BUDGET`, `p = ATTACKER_PERIOD`
//!   with a replenishment queue of capacity S; attacker `i` starts at `10 us x (i + 1)` and
//!   runs `loop S-1 { run 1us; sleep-for 50us }` then `loop forever { run 10ms }`, the
//!   simulated attackers' script with a longer suspension ([`FILL_SLEEP`]: a 1 us sleep is
//!   over before a real dispatcher handles it, and then suspends nothing). Each brief
//!   suspension plans the budget consumed since the
//!   attacker's last activation one attacker period after that activation, so the N attackers
//!   plant N x S replenishments at distinct instants, one attacker period after their
//!   activations: just after the victim's release, inside its job.
//!
//! The dispatcher owns the core's only timer. Under the naive sporadic server each planted
//! replenishment is a timer the policy arms while the victim runs: the dispatcher (at the
//! top real-time priority) wakes for it, does the policy's work and gives the core back, a
//! gap the victim sees. SPR defers the timeouts of reservations below the running priority,
//! so the victim's job sees the same gaps at every N: the dispatcher's heartbeat and the
//! machine's own interrupts. Each point is measured in [`ROUNDS`] interleaved rounds (every
//! point's round k after every point's round k - 1) and the median round reported, so that a
//! slow stretch of the shared machine falls on every point alike. Without the privileges the
//! experiment is skipped, with the reason, and checks nothing.

use std::sync::{Arc, Mutex};

use bulwark_core::{Duration, Instant};
use bulwark_host::{Body, HostConfig};
use bulwark_spec::{PolicyKind, Scenario};

use super::host_rounds::interleaved;
use super::{a2_timer_interference, Experiment, LabError};
use crate::report::{Check, ExperimentReport, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "host-a2-timer-interference",
    title: "Host A2: coordinated timer interference on this machine under SS and SPR",
    run,
};

/// The attacker counts measured.
pub const ATTACKERS: [usize; 4] = [0, 16, 64, 256];
/// The replenishment-queue capacities of the paper's Fig. 10.
pub const QUEUE_SIZES: [u16; 2] = a2_timer_interference::QUEUE_SIZES;
/// The policies compared: the naive sporadic server and SPR (sporadic rule).
pub const POLICIES: [PolicyKind; 2] = a2_timer_interference::POLICIES;
/// Rounds per point; the median round is reported. Five, so that the median absorbs two
/// slow rounds at one point: a clean-clone CI run here once had two of three rounds at SPR's
/// N = 256 point slowed to about 22 ms of gaps by the shared machine.
pub const ROUNDS: usize = 5;
/// A step between two consecutive clock reads of the victim longer than this is a gap:
/// the victim's own loop takes well under 100 ns per read, so 2 us is another thread or an
/// interrupt on the core, not the loop.
pub const GAP_THRESHOLD: Duration = Duration::from_micros(2);
/// The victim's own execution in its one job.
pub const VICTIM_EXECUTION: Duration = Duration::from_millis(200);
/// The victim's release: after every attacker, at the largest N and S, has planted its
/// replenishments and run out of budget.
pub const VICTIM_RELEASE: Duration = Duration::from_millis(300);
/// The victim's reservation: room for its job and the dispatcher's work charged to it.
const VICTIM_BUDGET: Duration = Duration::from_millis(500);
/// The victim's period: longer than the run, so it has one job.
const VICTIM_PERIOD: Duration = Duration::from_secs(2);
/// The attackers' period: their replenishments fall one period after their activations,
/// which start at 10 us, so the first lands 2 ms after the victim's release.
pub const ATTACKER_PERIOD: Duration = Duration::from_millis(302);
/// The attackers' budget per replenishment-queue entry: each brief activation is charged
/// its 1 us and the dispatcher's work around it (tens of microseconds on this machine), so
/// an attacker needs room for S of them before it runs out.
const ATTACKER_BUDGET_PER_ENTRY: Duration = Duration::from_micros(25);
/// Attacker `i` starts at `STAGGER x (i + 1)`, as in the simulation.
const STAGGER: Duration = Duration::from_micros(10);
/// Each brief execution of the filling phase, as in the simulation.
const CHUNK: Duration = Duration::from_micros(1);
/// Each brief suspension of the filling phase. The simulation's 1 us would be over before
/// the dispatcher handles the request on a real core (a futex wake and a context switch,
/// several microseconds here), and a sleep whose wake-up time is already past does not
/// suspend the task (`bulwark-core` `reservation/sporadic.rs`, `sleep`), so it would plant
/// nothing; 50 us outlasts the dispatcher's handling with a wide margin.
pub const FILL_SLEEP: Duration = Duration::from_micros(50);
/// The run: the victim's release, its job and the interference it may suffer.
const DURATION: Duration = Duration::from_millis(800);

/// The attackers' budget for queue capacity `replenishments`.
pub fn attacker_budget(replenishments: u16) -> Duration {
    ATTACKER_BUDGET_PER_ENTRY.saturating_mul(u64::from(replenishments))
}

/// The host scenario: the victim (task 0, its code given as a closure) and `attackers`
/// attackers with queues of capacity `replenishments`, under `policy`: the simulated A2's
/// scenario with times fitted to a real core and no modelled kernel costs (the real ones
/// apply).
pub fn scenario(policy: PolicyKind, replenishments: u16, attackers: usize) -> Scenario {
    let timing = a2_timer_interference::Timing {
        name: "host-a2",
        victim_release: VICTIM_RELEASE,
        // The closure replaces it; the simulator's equivalent.
        victim_execution: VICTIM_EXECUTION,
        victim_budget: VICTIM_BUDGET,
        victim_period: VICTIM_PERIOD,
        attacker_budget: attacker_budget(replenishments),
        attacker_period: ATTACKER_PERIOD,
        stagger: STAGGER,
        chunk: CHUNK,
        fill_sleep: FILL_SLEEP,
        duration: DURATION,
        cost: bulwark_spec::CostModel::default(),
        name_digits: 3,
    };
    a2_timer_interference::scenario_with(&timing, policy, replenishments, attackers)
}

/// What the victim saw in its job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gaps {
    /// Gaps longer than the threshold.
    pub count: u64,
    /// Their sum, ns: the job's interference.
    pub total_ns: u64,
    /// The longest, ns.
    pub max_ns: u64,
    /// Whether the job executed all of its time before the run ended.
    pub completed: bool,
}

impl Gaps {
    /// Counts the step `step_ns` between two clock reads; returns whether it was a gap.
    pub fn record(&mut self, step_ns: u64, threshold_ns: u64) -> bool {
        if step_ns <= threshold_ns {
            return false;
        }
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(step_ns);
        self.max_ns = self.max_ns.max(step_ns);
        true
    }
}

/// The victim's job: spins reading the clock until it has executed `execution` of its own
/// (every step up to `threshold`), counting the longer steps as gaps.
fn victim_body<'s>(result: Arc<Mutex<Gaps>>, execution: Duration, threshold: Duration) -> Body<'s> {
    Box::new(move |ctx| {
        let threshold_ns = threshold.as_nanos();
        let mut gaps = Gaps::default();
        let mut executed = 0u64;
        let mut last = ctx.now();
        while executed < execution.as_nanos() {
            if ctx.stopping() {
                break;
            }
            let now = ctx.now();
            let step = now.saturating_duration_since(last).as_nanos();
            last = now;
            if !gaps.record(step, threshold_ns) {
                executed += step;
            }
        }
        gaps.completed = executed >= execution.as_nanos();
        if let Ok(mut slot) = result.lock() {
            *slot = gaps;
        }
        // Ends the job; the run ends while it sleeps.
        let _ = ctx.sleep_until(Instant::ZERO.saturating_add(VICTIM_PERIOD));
    })
}

/// One host run: what the victim saw, and whether the host suspected throttling.
fn host_round(policy: PolicyKind, s: u16, attackers: usize) -> Result<(Gaps, bool), String> {
    let scenario = scenario(policy, s, attackers);
    let result = Arc::new(Mutex::new(Gaps::default()));
    let body = victim_body(Arc::clone(&result), VICTIM_EXECUTION, GAP_THRESHOLD);
    let outcome = bulwark_host::run_with(
        &scenario,
        &HostConfig::default(),
        vec![("victim".into(), body)],
    )
    .map_err(|e| e.to_string())?;
    let gaps = *result
        .lock()
        .map_err(|_| "the victim's record was poisoned".to_string())?;
    if !gaps.completed {
        return Err("the victim's job did not complete within the run".into());
    }
    Ok((gaps, outcome.host.throttling_suspected))
}

/// One column: a policy and a queue capacity.
#[derive(Clone, Copy, Debug)]
struct Column {
    policy: PolicyKind,
    s: u16,
}

impl Column {
    fn name(self) -> String {
        match self.policy {
            PolicyKind::SporadicServer => format!("SS S={}", self.s),
            _ => format!("SPR S={}", self.s),
        }
    }
}

/// A point's rounds, or its first failure.
type Rounds = Result<Vec<Gaps>, String>;

/// The round of median interference.
pub fn median_round(rounds: &[Gaps]) -> Gaps {
    let mut sorted = rounds.to_vec();
    sorted.sort_by_key(|g| g.total_ns);
    // The lower median for an even count: the ceil(n / 2)-th smallest.
    sorted
        .get(sorted.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

/// Where the results come from, for the report.
const SOURCE: &str = "SPR paper, section V-A, Figs. 9 and 10, on this machine";

fn run() -> Result<ExperimentReport, LabError> {
    // Up to ATTEMPTS measurements: the checks are far from the machine's noise, but a round
    // whose 500 ms window the shared machine stalls for 300 ms leaves the victim's job
    // unfinished (a clean-clone CI run here once lost one round of 80 so, at N = 64 under
    // SPR, while the same binary passed every round twice on a rerun). A victim a mechanism
    // starves fails every attempt.
    super::host_rounds::run_host(&EXPERIMENT, SOURCE, super::host_rounds::ATTEMPTS, measure)
}

/// One measurement of the whole experiment.
fn measure() -> Result<ExperimentReport, LabError> {
    let started = std::time::Instant::now();
    let columns: Vec<Column> = POLICIES
        .iter()
        .flat_map(|&policy| QUEUE_SIZES.iter().map(move |&s| Column { policy, s }))
        .collect();
    // Every (N, column) pair is a point, N major, as the rounds run them.
    let points: Vec<(usize, Column)> = ATTACKERS
        .iter()
        .flat_map(|&n| columns.iter().map(move |&column| (n, column)))
        .collect();
    let measured = interleaved(&points, ROUNDS, |&(n, column)| {
        host_round(column.policy, column.s, n)
    });
    let throttled = measured
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .flatten()
        .filter(|(_, suspected)| *suspected)
        .count();
    // rounds[column][point]; the first failure of a point stays.
    let mut rounds: Vec<Vec<Rounds>> = vec![vec![Ok(Vec::new()); ATTACKERS.len()]; columns.len()];
    for (k, result) in measured.into_iter().enumerate() {
        let (point, c) = (k / columns.len(), k % columns.len());
        rounds[c][point] = result.map(|all| all.into_iter().map(|(gaps, _)| gaps).collect());
    }
    let host_time = started.elapsed();
    let attackers: Vec<u32> = ATTACKERS.iter().map(|&n| n as u32).collect();
    let simulated = a2_timer_interference::sweep(&attackers)?;
    Ok(report(&columns, &rounds, &simulated, throttled, host_time))
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1_000.0)
}

/// The most SPR's interference may grow per attacker, from N = 0 to the largest N, and count
/// as flat, ns: 60 us, 15.4 ms at N = 256. On this shared virtual machine the victim's
/// 200 ms job sees 2 to 9 ms of gaps in a round with no attacker at all (host interrupts,
/// the dispatcher's heartbeat), now and then a round of 15 to 36 ms (the median of five
/// absorbs two), and medians of three rounds from 2.5 to 6.7 ms at any SPR point; in
/// four full runs SPR's growth at N = 256 was at most 8.5 us per attacker (2.2 ms). The
/// bound is more than twice the largest median seen, so that noise alone should not fail
/// it, and still under a third of the least the naive server showed per attacker at N = 256
/// (S = 16: 52.7 ms in its best round, 206 us per attacker).
pub const SPR_GROWTH_PER_ATTACKER_NS: u64 = 60_000;

fn report(
    columns: &[Column],
    rounds: &[Vec<Rounds>],
    simulated: &[a2_timer_interference::Point],
    throttled: usize,
    host_time: std::time::Duration,
) -> ExperimentReport {
    let median = |c: usize, i: usize| rounds[c][i].as_ref().ok().map(|r| median_round(r));
    let sim = |policy: PolicyKind, s: u16, n: usize| {
        simulated
            .iter()
            .find(|p| p.policy == policy.name() && p.replenishments == s && p.attackers == n as u32)
            .map(|p| p.interference_ns)
    };
    let mut rows = Vec::new();
    for (i, &n) in ATTACKERS.iter().enumerate() {
        let mut row = vec![n.to_string()];
        for (c, column) in columns.iter().enumerate() {
            row.push(match (&rounds[c][i], median(c, i)) {
                (Ok(all), Some(g)) => format!(
                    "{} / {} / {} [{}]",
                    us(g.total_ns),
                    g.count,
                    us(g.max_ns),
                    all.iter()
                        .map(|r| us(r.total_ns))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (Err(e), _) => format!("failed: {e}"),
                _ => "-".into(),
            });
            row.push(sim(column.policy, column.s, n).map_or_else(|| "-".into(), us));
        }
        rows.push(row);
    }
    let last = ATTACKERS.len() - 1;
    let nmax = ATTACKERS[last];
    let column_of = |policy: PolicyKind, s: u16| {
        columns
            .iter()
            .position(|c| c.policy == policy && c.s == s)
            .unwrap_or(0)
    };
    let total = |c: usize, i: usize| median(c, i).map(|g| g.total_ns);
    let mut checks = Vec::new();
    let all_ran = rounds
        .iter()
        .flatten()
        .all(|r| r.as_ref().is_ok_and(|all| all.len() == ROUNDS));
    checks.push(Check {
        claim: "every point ran on this machine, the victim completing its job in every round"
            .into(),
        expected: format!(
            "{ROUNDS} rounds at each of {} points",
            columns.len() * ATTACKERS.len()
        ),
        measured: if all_ran {
            "all ran".into()
        } else {
            rounds
                .iter()
                .flatten()
                .filter_map(|r| r.as_ref().err().cloned())
                .next()
                .unwrap_or_default()
        },
        pass: all_ran,
    });
    for s in QUEUE_SIZES {
        let c = column_of(PolicyKind::SporadicServer, s);
        let (measured, pass) = match (total(c, 0), total(c, last)) {
            (Some(a), Some(b)) => (format!("{} us -> {} us", us(a), us(b)), b > a),
            _ => ("failed".into(), false),
        };
        checks.push(Check {
            claim: format!(
                "naive sporadic server, S = {s}: the victim's interference grows with N"
            ),
            expected: format!("interference at N = {nmax} above N = 0"),
            measured,
            pass,
        });
    }
    let (small, large) = (
        column_of(PolicyKind::SporadicServer, QUEUE_SIZES[0]),
        column_of(PolicyKind::SporadicServer, QUEUE_SIZES[1]),
    );
    let (measured, pass) = match (total(small, last), total(large, last)) {
        (Some(a), Some(b)) => (format!("{} us vs {} us", us(b), us(a)), b > a),
        _ => ("failed".into(), false),
    };
    checks.push(Check {
        claim: format!(
            "naive sporadic server: S = {} causes more interference than S = {} at N = {nmax}",
            QUEUE_SIZES[1], QUEUE_SIZES[0]
        ),
        expected: "more".into(),
        measured,
        pass,
    });
    for s in QUEUE_SIZES {
        let c = column_of(PolicyKind::Spr, s);
        let (measured, pass) = match (total(c, 0), total(c, last)) {
            (Some(a), Some(b)) => {
                let growth = b.saturating_sub(a);
                (
                    format!(
                        "{} us -> {} us ({:.0} ns per attacker)",
                        us(a),
                        us(b),
                        growth as f64 / nmax as f64
                    ),
                    growth <= SPR_GROWTH_PER_ATTACKER_NS * nmax as u64,
                )
            }
            _ => ("failed".into(), false),
        };
        checks.push(Check {
            claim: format!("SPR (sporadic rule), S = {s}: the victim's interference stays flat"),
            expected: format!(
                "at N = {nmax} at most {SPR_GROWTH_PER_ATTACKER_NS} ns per attacker above N = 0"
            ),
            measured,
            pass,
        });
    }
    let mut header = vec!["N".to_string()];
    for column in columns {
        header.push(format!("host {}", column.name()));
        header.push(format!("sim {}", column.name()));
    }
    let summary = format!(
        "Coordinated timer interference measured on this machine's core 1: the victim's job \
         ({} of execution, released at {}) spins reading the clock and sums every step \
         longer than {} between two reads; N attackers plant S replenishments each inside it. \
         {ROUNDS} interleaved rounds per point, the median round reported; the host runs took \
         {:.1} s; {throttled} runs had a timer more than 1 ms late (suspected real-time \
         throttling). The attackers sleep 50 us, not the simulation's 1 us, between their \
         brief runs, so that each sleep is still in the future when the dispatcher handles \
         it. The simulator's columns are the simulated A2 at the same N and S with \
         the paper's platform costs, whose victim job is 250 ms.",
        VICTIM_EXECUTION,
        VICTIM_RELEASE,
        GAP_THRESHOLD,
        host_time.as_secs_f64(),
    );
    ExperimentReport {
        source: "SPR paper, section V-A, Figs. 9 and 10, on this machine".into(),
        summary,
        checks,
        tables: vec![Table {
            caption: "Victim interference on the host, median round: total (us) / gaps / \
                      longest gap (us) [every round's total, us]; simulated interference (us) \
                      beside"
                .into(),
            header,
            rows,
        }],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_only_steps_above_the_threshold() {
        let mut gaps = Gaps::default();
        // 2,000 is at the threshold, not above: not a gap; 2,001 and 9,000 are.
        for step in [50, 2_000, 2_001, 9_000, 100] {
            gaps.record(step, 2_000);
        }
        assert_eq!((gaps.count, gaps.total_ns, gaps.max_ns), (2, 11_001, 9_000));
    }

    #[test]
    fn median_round_is_the_middle_total() {
        let round = |total_ns| Gaps {
            total_ns,
            ..Gaps::default()
        };
        // Totals 30, 10, 20: the median is 20; of four, the lower middle (20 of 10..40).
        assert_eq!(
            median_round(&[round(30), round(10), round(20)]).total_ns,
            20
        );
        assert_eq!(
            median_round(&[round(40), round(10), round(30), round(20)]).total_ns,
            20
        );
        assert_eq!(median_round(&[]), Gaps::default());
    }

    #[test]
    fn replenishments_fall_inside_the_victims_job() {
        // The first attacker activation is at 10 us, so its replenishment is planned at
        // 10 us + the attacker period: after the victim's release.
        let first = STAGGER.saturating_add(ATTACKER_PERIOD);
        assert!(first > VICTIM_RELEASE);
        // An activation at t plants at t + the attacker period, inside the job's execution
        // (release + 200 ms) for every t before 300 + 200 - 302 = 198 ms: the attackers'
        // filling phase has that long, and later plants still fall inside the job while
        // interference stretches it.
        let inside_until = VICTIM_RELEASE
            .saturating_add(VICTIM_EXECUTION)
            .saturating_sub(ATTACKER_PERIOD);
        assert_eq!(inside_until, Duration::from_millis(198));
        for s in QUEUE_SIZES {
            let scenario = scenario(PolicyKind::SporadicServer, s, 3);
            assert_eq!(scenario.tasks.len(), 4);
            let attacker = &scenario.tasks[1];
            assert_eq!(
                attacker.reservation.as_ref().map(|r| r.budget),
                Some(Duration::from_micros(25 * u64::from(s)))
            );
        }
    }
}
