//! The measuring shape of the host experiments: every point in several rounds, interleaved
//! (every point's round k after every point's round k - 1), so that a slow stretch of the
//! shared machine (another guest, a host interrupt storm) falls on every point alike instead
//! of on whichever point was running; a point keeps its first failure. And what the
//! platform took from the managed core during a run, which the runtime cannot see: the
//! hypervisor's steal time and the device interrupts the core handled. And how often a host
//! experiment measures: again when it misses, and apart when the platform disturbed the
//! attempt (its timing claims are then not judged rather than failed, if the platform
//! disturbed every attempt).

use super::{Experiment, LabError};
use crate::report::ExperimentReport;

/// A point's measurements over the rounds, or the first failure of one of its rounds.
pub type Rounds<T> = Result<Vec<T>, String>;

/// Measures every point of `points` in `rounds` interleaved rounds: `measure(point)` is one
/// round of one point. Returns one entry per point, in `points`' order; a point whose round
/// failed keeps that failure and is not measured again.
pub fn interleaved<P, T>(
    points: &[P],
    rounds: usize,
    mut measure: impl FnMut(&P) -> Result<T, String>,
) -> Vec<Rounds<T>> {
    let mut pooled: Vec<Rounds<T>> = points.iter().map(|_| Ok(Vec::new())).collect();
    for _round in 0..rounds {
        for (point, slot) in points.iter().zip(pooled.iter_mut()) {
            let Ok(all) = slot.as_mut() else {
                continue;
            };
            match measure(point) {
                Ok(value) => all.push(value),
                Err(e) => *slot = Err(e),
            }
        }
    }
    pooled
}

/// Runs the host experiment `experiment` (whose results come from `source`): when this
/// process may not use real-time scheduling, its skipped report with the reason (no checks,
/// so it passes nothing); else `measure`, up to `attempts` times ([`until_judged`]).
pub fn run_host(
    experiment: &Experiment,
    source: &str,
    attempts: usize,
    mut measure: impl FnMut() -> Result<ExperimentReport, LabError>,
) -> Result<ExperimentReport, LabError> {
    run_host_judged(experiment, source, attempts, &[], || {
        Ok(Attempt {
            report: measure()?,
            disturbed: None,
        })
    })
}

/// [`run_host`] for an experiment that tells when the platform disturbed an attempt, with
/// its timing checks numbered in `timing` ([`until_judged`]).
pub fn run_host_judged(
    experiment: &Experiment,
    source: &str,
    attempts: usize,
    timing: &[usize],
    measure: impl FnMut() -> Result<Attempt, LabError>,
) -> Result<ExperimentReport, LabError> {
    match bulwark_host::check_privileges(&bulwark_host::HostConfig::default()) {
        Err(e) => Ok(skipped(experiment, source, e.to_string())),
        Ok(()) => until_judged(attempts, timing, measure),
    }
}

/// The report of a host experiment that could not run here, saying why.
pub fn skipped(experiment: &Experiment, source: &str, reason: String) -> ExperimentReport {
    ExperimentReport {
        name: experiment.name.into(),
        title: format!("{} (skipped)", experiment.title),
        source: source.into(),
        summary: format!("skipped: {reason}"),
        ..ExperimentReport::default()
    }
}

/// How many times a host experiment with statistical checks may measure before its report
/// stands: the machine is shared, and another guest can slow the managed core by a third for
/// a few hundred milliseconds without any steal time to show for it. Five, not three: a CI
/// run once failed host-components' three attempts (t4 at 36.78 ms against 36 ms, where
/// standalone runs give 28.8 to 29.6 ms), and a clean-clone run failed host-vbs-isolation's
/// three with every round of two of them disturbed by steal time (80 ms of it in all) and
/// the third's α1 jitter at 8.02 ms against 7.1 ms, where the other nine levels gave 3.4 to
/// 3.8 ms. A mechanism that does not work fails every attempt all the same; a later attempt
/// only costs time when an earlier one missed.
pub const ATTEMPTS: usize = 5;

/// One measurement of a host experiment: its report, and whether the platform disturbed the
/// managed core while it measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attempt {
    /// The measurement's report.
    pub report: ExperimentReport,
    /// What the platform took from the managed core during the measurement (the
    /// hypervisor's steal, or timers over 1 ms late that a probe [`confirmed`] as the
    /// platform's), when it took anything; `None` when it left the core alone, or the
    /// experiment cannot tell.
    pub disturbed: Option<String>,
}

/// How many failing attempts the platform may disturb before a host experiment stops
/// measuring: with [`FIRST_PAUSE`] doubled between them, they span half a minute, longer than
/// the shared machine's slow stretches usually last (a clean-clone CI run saw every attempt of
/// two experiments disturbed over a minute or so).
pub const DISTURBED_ATTEMPTS: usize = 5;

/// The pause after the first disturbed attempt, doubled after each further one: time for the
/// platform's disturbance to pass rather than another measurement inside it.
pub const FIRST_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `measure` until every check of its report holds, at most `attempts` times, and keeps
/// the last report, whose summary then says which attempt it was and what the earlier ones
/// missed. A mechanism that does not work fails every attempt (the storm without a region
/// stays at a third of the baseline however often it is measured); what this absorbs is the
/// machine's noise around a threshold, and the report says so rather than hiding it.
///
/// For an experiment that can tell when the platform disturbed an attempt, the checks
/// numbered in `timing` are claims about timing that such a disturbance can break. A failing attempt counts against `attempts` unless the platform disturbed it and
/// only timing claims failed; such an attempt is measured again after a pause (see
/// [`DISTURBED_ATTEMPTS`]). When the platform disturbed every failing attempt up to that
/// limit, the timing claims the last one missed are not judged
/// ([`ExperimentReport::not_judged`]): a bound on scheduling is not a bound on the
/// hypervisor. Every other claim, and any miss of an undisturbed attempt, is judged as usual.
pub fn until_judged(
    attempts: usize,
    timing: &[usize],
    measure: impl FnMut() -> Result<Attempt, LabError>,
) -> Result<ExperimentReport, LabError> {
    judge(attempts, timing, measure, std::thread::sleep)
}

/// [`until_judged`] with its pauses taken by `pause`.
fn judge(
    attempts: usize,
    timing: &[usize],
    mut measure: impl FnMut() -> Result<Attempt, LabError>,
    mut pause: impl FnMut(std::time::Duration),
) -> Result<ExperimentReport, LabError> {
    let attempts = attempts.max(1);
    let mut missed: Vec<String> = Vec::new();
    let (mut failed, mut disturbed) = (0, 0);
    let mut wait = FIRST_PAUSE;
    loop {
        let Attempt {
            mut report,
            disturbed: platform,
        } = measure()?;
        let number = failed + disturbed + 1;
        let failing: Vec<usize> = (0..report.checks.len())
            .filter(|&i| !report.checks[i].pass)
            .collect();
        let described = failing
            .iter()
            .map(|&i| {
                let check = &report.checks[i];
                format!("{} (measured {})", check.claim, check.measured)
            })
            .collect::<Vec<_>>()
            .join("; ");
        let excused = platform.filter(|_| failing.iter().all(|i| timing.contains(i)));
        match excused {
            _ if failing.is_empty() => {}
            Some(taken) => {
                disturbed += 1;
                if disturbed < DISTURBED_ATTEMPTS {
                    missed.push(format!(
                        "(attempt {number}, the platform took {taken}) {described}"
                    ));
                    pause(wait);
                    wait = wait.saturating_mul(2);
                    continue;
                }
                if failed == 0 {
                    report.summary.push_str(&format!(
                        "\n\nThe platform disturbed every attempt to measure this: the last \
                         one, attempt {number}, lost {taken}. Its timing claims that missed \
                         are not judged (a bound on scheduling is no bound on the platform); \
                         the other claims are."
                    ));
                    let (kept, not_judged) = std::mem::take(&mut report.checks)
                        .into_iter()
                        .enumerate()
                        .partition::<Vec<_>, _>(|(i, _)| !failing.contains(i));
                    report.checks = kept.into_iter().map(|(_, check)| check).collect();
                    report.not_judged = not_judged.into_iter().map(|(_, check)| check).collect();
                }
            }
            None => {
                failed += 1;
                if failed < attempts {
                    missed.push(format!("(attempt {number}) {described}"));
                    continue;
                }
            }
        }
        if !missed.is_empty() {
            let also = if disturbed > 0 {
                format!(", besides at most {DISTURBED_ATTEMPTS} the platform disturbed")
            } else {
                String::new()
            };
            report.summary.push_str(&format!(
                "\n\nThis report is attempt {number} of at most {attempts}{also}: earlier \
                 attempts missed {}.",
                missed.join("; ")
            ));
        }
        return Ok(report);
    }
}

/// How long [`confirmed`] probes the managed core.
pub const PROBE: bulwark_core::Duration = bulwark_core::Duration::from_millis(300);

/// The evidence that the platform disturbed an attempt, confirmed. The hypervisor's steal
/// (`stolen`) is the platform's doing and stands. Late timers alone may be the dispatcher's
/// own: they stand only if a probe of the managed core now
/// ([`bulwark_host::probe_platform`], [`PROBE`] long) finds the platform taking it too, and
/// the probe's finding joins the evidence; else the attempt counts as undisturbed.
pub fn confirmed(evidence: Option<String>, stolen: bool, core: usize) -> Option<String> {
    let evidence = evidence?;
    if stolen {
        return Some(evidence);
    }
    let config = bulwark_host::HostConfig {
        core,
        ..bulwark_host::HostConfig::default()
    };
    let probe = bulwark_host::probe_platform(&config, PROBE).ok()?;
    probe.disturbed().then(|| {
        format!(
            "{evidence}; a probe of the core after it lost {} in {} gaps over 1 ms (the longest \
             {}) of {}",
            probe.lost, probe.gaps, probe.longest, probe.spun
        )
    })
}

/// The median of `values` (the lower middle one for an even count, the ceil(n / 2)-th
/// smallest); `None` when empty.
pub fn median(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().checked_sub(1)? / 2).copied()
}

/// What the platform took from a core over a stretch of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Disturbance {
    /// Time the hypervisor ran something else on the core's virtual processor (`steal` in
    /// `/proc/stat`, in ticks of USER_HZ, which Linux's ABI fixes at 100 a second: 10 ms
    /// each).
    pub steal_ms: u64,
    /// Device interrupts the core handled (the numbered lines of `/proc/interrupts`: disk,
    /// network; not the local timer, which the runtime's own timers raise).
    pub device_interrupts: u64,
}

impl Disturbance {
    /// The sum of two stretches.
    pub fn plus(self, other: Disturbance) -> Disturbance {
        Disturbance {
            steal_ms: self.steal_ms.saturating_add(other.steal_ms),
            device_interrupts: self
                .device_interrupts
                .saturating_add(other.device_interrupts),
        }
    }
}

/// Milliseconds per USER_HZ tick of `/proc/stat`.
const MS_PER_TICK: u64 = 10;

/// The counters of one core at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    core: usize,
    steal_ticks: u64,
    device_interrupts: u64,
}

impl Probe {
    /// Reads `core`'s counters now; `None` where `/proc` does not give them.
    pub fn start(core: usize) -> Option<Probe> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let interrupts = std::fs::read_to_string("/proc/interrupts").ok()?;
        Some(Probe {
            core,
            steal_ticks: steal_ticks(&stat, core)?,
            device_interrupts: device_interrupts(&interrupts, core)?,
        })
    }

    /// What the platform took from the core since [`start`](Self::start).
    pub fn stop(self) -> Option<Disturbance> {
        let now = Probe::start(self.core)?;
        Some(Disturbance {
            steal_ms: now.steal_ticks.saturating_sub(self.steal_ticks) * MS_PER_TICK,
            device_interrupts: now.device_interrupts.saturating_sub(self.device_interrupts),
        })
    }
}

/// The `steal` field (the eighth number) of the `cpu<core>` line of `/proc/stat`.
pub fn steal_ticks(stat: &str, core: usize) -> Option<u64> {
    let name = format!("cpu{core}");
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

/// The sum of `core`'s column over the numbered (device) lines of `/proc/interrupts`.
pub fn device_interrupts(text: &str, core: usize) -> Option<u64> {
    let mut lines = text.lines();
    let cores = lines.next()?.split_whitespace().count();
    if core >= cores {
        return None;
    }
    Some(
        lines
            .filter(|l| {
                l.split(':')
                    .next()
                    .is_some_and(|irq| irq.trim().parse::<u64>().is_ok())
            })
            .filter_map(|l| l.split_whitespace().nth(1 + core)?.parse::<u64>().ok())
            .sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(pass: bool) -> ExperimentReport {
        ExperimentReport {
            name: "x".into(),
            title: "x".into(),
            source: "x".into(),
            summary: "S".into(),
            checks: vec![crate::report::Check {
                claim: "c".into(),
                expected: "e".into(),
                measured: if pass { "good" } else { "bad" }.into(),
                pass,
            }],
            tables: Vec::new(),
            figures: Vec::new(),
            not_judged: Vec::new(),
        }
    }

    /// [`judge`] for an experiment that cannot tell the platform's disturbance.
    fn until_checks_hold(
        attempts: usize,
        mut measure: impl FnMut() -> Result<ExperimentReport, LabError>,
    ) -> Result<ExperimentReport, LabError> {
        let attempt = || {
            Ok(Attempt {
                report: measure()?,
                disturbed: None,
            })
        };
        judge(attempts, &[], attempt, |_| {
            panic!("no pause without disturbance")
        })
    }

    #[test]
    fn measures_again_until_the_checks_hold_and_says_so() {
        // Fails once, then holds: two measurements, the summary names the first miss.
        let mut outcomes = vec![false, true].into_iter();
        let mut runs = 0;
        let kept = until_checks_hold(3, || {
            runs += 1;
            Ok(report(outcomes.next().unwrap_or(true)))
        })
        .unwrap();
        assert_eq!(runs, 2);
        assert!(kept.checks[0].pass);
        assert!(
            kept.summary.contains("attempt 2 of at most 3"),
            "{}",
            kept.summary
        );
        assert!(kept.summary.contains("(attempt 1) c (measured bad)"));
        // Never holds: three measurements, the last failing report is kept.
        let mut runs = 0;
        let kept = until_checks_hold(3, || {
            runs += 1;
            Ok(report(false))
        })
        .unwrap();
        assert_eq!(runs, 3);
        assert!(!kept.checks[0].pass);
        // Holds at once: one measurement, the summary untouched.
        let kept = until_checks_hold(3, || Ok(report(true))).unwrap();
        assert_eq!(kept.summary, "S");
    }

    /// A report of two checks: a timing claim (0) and another (1), with the given verdicts.
    fn two(timing_holds: bool, other_holds: bool) -> ExperimentReport {
        let mut kept = report(timing_holds);
        let mut other = kept.checks[0].clone();
        other.claim = "other".into();
        other.pass = other_holds;
        kept.checks.push(other);
        kept
    }

    /// Runs [`judge`] over `outcomes` (timing verdict, other verdict, disturbed), then passing
    /// undisturbed attempts; returns the kept report, the measurements made and the pauses.
    fn judged(
        attempts: usize,
        outcomes: &[(bool, bool, bool)],
    ) -> (ExperimentReport, usize, Vec<std::time::Duration>) {
        let mut next = outcomes.iter().copied();
        let mut runs = 0;
        let mut pauses = Vec::new();
        let kept = judge(
            attempts,
            &[0],
            || {
                runs += 1;
                let (timing, other, disturbed) = next.next().unwrap_or((true, true, false));
                Ok(Attempt {
                    report: two(timing, other),
                    disturbed: disturbed.then(|| "20 ms of steal".to_string()),
                })
            },
            |wait| pauses.push(wait),
        )
        .unwrap();
        (kept, runs, pauses)
    }

    #[test]
    fn a_disturbed_attempt_does_not_count_and_is_measured_again_after_a_pause() {
        let disturbed_miss = (false, true, true);
        let (kept, runs, pauses) = judged(1, &[disturbed_miss, disturbed_miss]);
        // Two disturbed misses did not use the one attempt: the third measurement holds.
        assert_eq!(runs, 3);
        assert_eq!(pauses, [FIRST_PAUSE, FIRST_PAUSE * 2]);
        assert!(kept.checks.iter().all(|c| c.pass));
        assert!(kept.not_judged.is_empty());
        assert!(
            kept.summary
                .contains("(attempt 2, the platform took 20 ms of steal) c"),
            "{}",
            kept.summary
        );
        assert!(kept
            .summary
            .contains("attempt 3 of at most 1, besides at most 5"));
    }

    #[test]
    fn timing_claims_the_platform_disturbed_every_time_are_not_judged() {
        let disturbed_miss = (false, true, true);
        let (kept, runs, pauses) = judged(3, &[disturbed_miss; 10]);
        assert_eq!(runs, DISTURBED_ATTEMPTS);
        // Pauses of 2, 4, 8 and 16 s between the five: half a minute.
        assert_eq!(pauses.len(), DISTURBED_ATTEMPTS - 1);
        assert_eq!(pauses.iter().sum::<std::time::Duration>().as_secs(), 30);
        // The timing claim is neither passed nor failed; the other claim is judged.
        assert_eq!(kept.not_judged.len(), 1);
        assert_eq!(kept.not_judged[0].claim, "c");
        assert_eq!(kept.checks.len(), 1);
        assert!(kept.checks[0].pass && kept.checks[0].claim == "other");
        assert_eq!(
            crate::report::report_verdict(&kept),
            "1 of 1 checks pass, 1 not judged"
        );
        assert!(kept
            .summary
            .contains("The platform disturbed every attempt"));
    }

    #[test]
    fn a_claim_other_than_timing_is_judged_however_disturbed() {
        // The other claim misses in disturbed attempts: each counts, no pause, and it fails.
        let (kept, runs, pauses) = judged(2, &[(true, false, true); 10]);
        assert_eq!((runs, pauses.len()), (2, 0));
        assert_eq!(crate::report::failing_claims(&kept.checks), ["other"]);
        assert!(kept.not_judged.is_empty());
    }

    #[test]
    fn an_undisturbed_miss_keeps_the_timing_claim_judged() {
        // One undisturbed miss, then the platform disturbs every attempt: the claim fails.
        let mut outcomes = vec![(false, true, false)];
        outcomes.extend([(false, true, true); 10]);
        let (kept, runs, _) = judged(3, &outcomes);
        assert_eq!(runs, 1 + DISTURBED_ATTEMPTS);
        assert_eq!(crate::report::failing_claims(&kept.checks), ["c"]);
        assert!(kept.not_judged.is_empty());
        // Undisturbed misses count against the attempts as before.
        let (kept, runs, pauses) = judged(3, &[(false, true, false); 10]);
        assert_eq!((runs, pauses.len()), (3, 0));
        assert_eq!(crate::report::failing_claims(&kept.checks), ["c"]);
    }

    /// No evidence is nothing to confirm, and steal stands without a probe (neither branch
    /// probes the core, so this holds on any machine).
    #[test]
    fn steal_stands_and_no_evidence_is_no_disturbance() {
        assert_eq!(confirmed(None, true, 1), None);
        assert_eq!(confirmed(None, false, 1), None);
        assert_eq!(
            confirmed(Some("20 ms of steal".into()), true, 1).as_deref(),
            Some("20 ms of steal")
        );
    }

    const STAT: &str = "cpu  2217481 236908 381360 4219025 13384 0 2061 2236 0 0
cpu0 1120164 109051 160781 2140335 4159 0 125 1087 0 0
cpu1 1097317 127856 220578 2078689 9224 0 1936 1149 0 0
intr 1 2 3
";

    const INTERRUPTS: &str = "           CPU0       CPU1
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 36:          0    1360199  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
 42:         17      70789  PCI-MSIX-0000:00:04.0   2-edge      virtio3-tx
LOC:    6293747    7809298   Local timer interrupts
NMI:          0          0   Non-maskable interrupts
";

    #[test]
    fn steal_is_the_eighth_number_of_the_cores_line() {
        assert_eq!(steal_ticks(STAT, 1), Some(1149));
        assert_eq!(steal_ticks(STAT, 0), Some(1087));
        // `cpu` (all cores) is not core 1's line, and there is no core 2.
        assert_eq!(steal_ticks(STAT, 2), None);
        assert_eq!(steal_ticks("", 0), None);
    }

    #[test]
    fn device_interrupts_sum_the_numbered_lines_of_the_cores_column() {
        // Core 1: 0 + 1,360,199 + 70,789, not the local timer's 7,809,298.
        assert_eq!(device_interrupts(INTERRUPTS, 1), Some(1_430_988));
        assert_eq!(device_interrupts(INTERRUPTS, 0), Some(18));
        assert_eq!(device_interrupts(INTERRUPTS, 2), None);
        assert_eq!(device_interrupts("", 0), None);
    }

    #[test]
    fn disturbances_add() {
        let a = Disturbance {
            steal_ms: 10,
            device_interrupts: 3,
        };
        assert_eq!(
            a.plus(a),
            Disturbance {
                steal_ms: 20,
                device_interrupts: 6
            }
        );
    }

    #[test]
    fn rounds_interleave_and_keep_the_first_failure() {
        let mut order = Vec::new();
        let mut calls = 0;
        let pooled = interleaved(&['a', 'b', 'c'], 3, |&p| {
            order.push(p);
            calls += 1;
            // Point b fails in its second round: it is not measured again.
            if p == 'b' && calls > 3 {
                Err(format!("b failed at call {calls}"))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(order, ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'c']);
        assert_eq!(pooled[0], Ok(vec![1, 4, 7]));
        assert_eq!(pooled[1], Err("b failed at call 5".to_string()));
        assert_eq!(pooled[2], Ok(vec![3, 6, 8]));
    }

    #[test]
    fn median_is_the_lower_middle() {
        // 3, 1, 2 sorted is 1, 2, 3: the middle is 2; of four, the 2nd smallest.
        assert_eq!(median(&[3, 1, 2]), Some(2));
        assert_eq!(median(&[40, 10, 30, 20]), Some(20));
        assert_eq!(median(&[7]), Some(7));
        assert_eq!(median(&[]), None);
    }
}
