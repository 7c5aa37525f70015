//! Scheduler overhead of variable-bandwidth servers per queue plugin (VBS paper, section VI-A,
//! Figs. 3 and 4), measured on the real scheduler of `bulwark-core` with the wall clock.
//!
//! **Workload.** `n` processes whose caps split 95% of the processor (weights uniform in
//! 0.9-1.1). Every process runs an endless sequence of actions, drawn from its own seeded
//! generator: a period that is a multiple of `g = t/64` instants (`t` the horizon) between the
//! shortest its cap allows one instant of limit in and the longest the scheduler accepts,
//! `t/4`; the limit `floor(cap · π)`; a load of 1 to 3 limits, disclosed. Periods on a grid of
//! `g` make releases coincide, as round periods do in practice: at 750 processes a period
//! boundary releases tens to hundreds of processes at once, the case the paper finds
//! dominates (Fig. 4(d)). Early release (the scheduler's default); one instant = 1 us.
//!
//! **Driver.** As a kernel would (and as the scenario machine does): all first actions arrive
//! at 0; then at every event (the running process's load done, or the scheduler's one-shot
//! timer), the process marks its next action if its load is done ([`Vbs::switch_action`]),
//! and the scheduler is invoked ([`Policy::schedule`]). One *invocation*, timed with the wall
//! clock, is that pair of calls: steps 1-3 of the paper's algorithm. The first `t/4` instants
//! (every process's first period) are not timed; then [`INVOCATIONS`] invocations are.
//!
//! **Noise.** The run is deterministic, so it is replayed [`REPLAYS`] times and each
//! invocation keeps the least of its times: an interrupt or a preemption of this VM's vCPU
//! hits the same invocation in every replay only by chance. Mean, standard deviation, maximum
//! and 99.9th percentile are of these per-invocation minima; the raw maximum (the largest
//! single reading) is reported beside them. Every plugin makes the same decisions (checked),
//! so all plugins time the same schedule.
//!
//! **Resolutions.** The list, array and tree plugins run at the paper's `t = 2^14` instants;
//! the matrix needs `t^2` cells (1 GiB at `2^14`), so it runs at `2^12` (64 MiB), with the
//! tree beside it at `2^12` for comparison; 10,000 processes need `t/4 >= 10,000` instants
//! per period, so list, array and tree run them at `2^16` (the matrix would need 16 GiB).

use std::hint::black_box;
use std::time::Instant as Clock;

use bulwark_core::bandwidth::vbs::{
    Action, ArrayQueue, BandwidthCap, ListQueue, MatrixQueue, ReleaseStrategy, Resource, TreeQueue,
    Vbs, VbsConfig, VbsQueue,
};
use bulwark_core::{Duration, Instant, Policy, TaskId, Work};

use super::reclaim_latency::show_ns;
use super::vbs_strategies::Rng;
use super::{Experiment, LabError};
use crate::plot::{line_plot_scaled, Scale, Series};
use crate::report::{headings, Check, ExperimentReport, Figure, Table};

pub const EXPERIMENT: Experiment = Experiment {
    name: "vbs-overhead",
    title: "Variable-bandwidth servers: scheduler time per invocation and memory, per queue \
            plugin",
    run,
};

/// The paper's process counts (Fig. 3).
pub const PROCESSES: [usize; 9] = [10, 25, 50, 75, 100, 150, 250, 500, 750];
/// Unoptimised builds (tests run `bulwark reproduce` that way) sweep these.
const DEBUG_PROCESSES: [usize; 3] = [10, 100, 750];
/// Timed invocations per configuration, and at [`LARGE`] processes.
pub const INVOCATIONS: usize = 30_000;
/// See [`INVOCATIONS`].
pub const LARGE_INVOCATIONS: usize = 10_000;
/// Replays of every configuration.
pub const REPLAYS: usize = 3;
/// Unoptimised builds time fewer invocations and replay them fewer times.
const DEBUG_INVOCATIONS: usize = 2_000;
/// See [`DEBUG_INVOCATIONS`].
const DEBUG_REPLAYS: usize = 2;
/// The large count, beyond the paper, in release builds.
pub const LARGE: usize = 10_000;
/// The histogram's process count (Fig. 4).
pub const HISTOGRAM_AT: usize = 750;
/// The paper's resolution.
pub const PAPER_BITS: u32 = 14;
/// The matrix's resolution (and the tree's beside it).
pub const MATRIX_BITS: u32 = 12;
/// The resolution for [`LARGE`].
pub const LARGE_BITS: u32 = 16;
/// Resolutions of the memory table (Fig. 3(d)).
pub const MEMORY_BITS: [u32; 7] = [10, 11, 12, 13, 14, 15, 16];
/// The caps' sum.
const UTILIZATION: f64 = 0.95;
/// One instant.
const QUANTUM: Duration = Duration::from_micros(1);
/// The workload's seed.
const SEED: u64 = 0x0B5F_E3F8;

/// The list's 99.9th percentile at [`HISTOGRAM_AT`] processes must be at least this factor of
/// its 99.9th percentile at 10 (release storms walk its sorted lists once per process).
pub const LIST_GROWTH: f64 = 10.0;
/// The list's mean at [`HISTOGRAM_AT`] must be at least this factor of its mean at 10: most
/// invocations touch the ends of its lists, so the mean grows far less than the tail.
pub const LIST_MEAN_GROWTH: f64 = 2.0;
/// The most work of one invocation at [`HISTOGRAM_AT`] against 10 processes (exact counts):
/// the list's grows at least this factor (release storms move each process through a sorted
/// list), the array's at least [`ARRAY_WORK_GROWTH`], the matrix's and the tree's at most
/// [`FLAT_WORK`].
pub const LIST_WORK_GROWTH: f64 = 100.0;
/// See [`LIST_WORK_GROWTH`].
pub const ARRAY_WORK_GROWTH: f64 = 5.0;
/// See [`LIST_WORK_GROWTH`].
pub const FLAT_WORK: f64 = 2.0;
/// The matrix's and the tree's mean at [`HISTOGRAM_AT`] must be within this factor of their
/// mean at 10 (constant-time operations; larger state costs cache misses only).
pub const FLAT_MARGIN: f64 = 5.0;
/// The goal for one invocation's worst case.
pub const GOAL_NS: f64 = 1_000.0;

/// The paper's worst cases at 750 processes (2 GHz AMD64, 2009; Fig. 4): list, array, matrix,
/// in microseconds; the tree "performs the same as the matrix up to 140 ns".
pub const PAPER_MAX_US: [(&str, f64); 3] = [("list", 350.0), ("array", 55.0), ("matrix", 20.0)];

/// Upper ends (exclusive) of the time histogram's buckets, ns.
pub const TIME_BUCKETS: [u64; 11] = [
    100,
    200,
    500,
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    u64::MAX,
];
/// Upper ends (inclusive) of the released-processes histogram's buckets.
pub const RELEASE_BUCKETS: [u64; 10] = [0, 1, 3, 7, 15, 31, 63, 127, 255, u64::MAX];

/// A queue plugin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plugin {
    /// [`ListQueue`].
    List,
    /// [`ArrayQueue`].
    Array,
    /// [`MatrixQueue`].
    Matrix,
    /// [`TreeQueue`].
    Tree,
}

impl Plugin {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Plugin::List => ListQueue::NAME,
            Plugin::Array => ArrayQueue::NAME,
            Plugin::Matrix => MatrixQueue::NAME,
            Plugin::Tree => TreeQueue::NAME,
        }
    }

    /// Its memory for `n` processes at `2^bits` instants, if it accepts that resolution.
    pub fn memory_for(self, n: usize, bits: u32) -> Option<usize> {
        let (bytes, max) = match self {
            Plugin::List => (
                ListQueue::memory_bytes_for(n, bits),
                ListQueue::MAX_HORIZON_BITS,
            ),
            Plugin::Array => (
                ArrayQueue::memory_bytes_for(n, bits),
                ArrayQueue::MAX_HORIZON_BITS,
            ),
            Plugin::Matrix => (
                MatrixQueue::memory_bytes_for(n, bits),
                MatrixQueue::MAX_HORIZON_BITS,
            ),
            Plugin::Tree => (
                TreeQueue::memory_bytes_for(n, bits),
                TreeQueue::MAX_HORIZON_BITS,
            ),
        };
        (bits <= max).then_some(bytes)
    }
}

/// A plugin at a resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sweep {
    /// The plugin.
    pub plugin: Plugin,
    /// `t = 2^bits` instants.
    pub bits: u32,
}

impl Sweep {
    /// "list @2^14".
    pub fn label(self) -> String {
        format!("{} @2^{}", self.plugin.name(), self.bits)
    }
}

/// The sweeps over [`PROCESSES`].
pub const SWEEPS: [Sweep; 5] = [
    Sweep {
        plugin: Plugin::List,
        bits: PAPER_BITS,
    },
    Sweep {
        plugin: Plugin::Array,
        bits: PAPER_BITS,
    },
    Sweep {
        plugin: Plugin::Tree,
        bits: PAPER_BITS,
    },
    Sweep {
        plugin: Plugin::Matrix,
        bits: MATRIX_BITS,
    },
    Sweep {
        plugin: Plugin::Tree,
        bits: MATRIX_BITS,
    },
];

/// The plugins run with [`LARGE`] processes at [`LARGE_BITS`].
pub const LARGE_PLUGINS: [Plugin; 3] = [Plugin::List, Plugin::Array, Plugin::Tree];

/// One configuration's measurements.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Point {
    /// The plugin's name.
    pub plugin: &'static str,
    /// `t = 2^bits`.
    pub bits: u32,
    /// Processes.
    pub n: usize,
    /// Timed invocations per replay.
    pub invocations: usize,
    /// Replays.
    pub replays: usize,
    /// Mean of the per-invocation minima, ns.
    pub mean_ns: f64,
    /// Their standard deviation, ns.
    pub std_ns: f64,
    /// Their maximum, ns.
    pub max_ns: f64,
    /// Their 99.9th percentile, ns.
    pub p999_ns: f64,
    /// The largest single reading, ns.
    pub raw_max_ns: f64,
    /// The most work units of one invocation.
    pub max_units: u64,
    /// The mean work units of one invocation.
    pub mean_units: f64,
    /// Timed invocations that ended an action and started the next (a switch).
    pub switches: u64,
    /// Counts of the per-invocation minima in [`TIME_BUCKETS`].
    pub histogram: Vec<u64>,
    /// Counts of invocations by processes released (list and array count each process; the
    /// matrix and the tree count columns) in [`RELEASE_BUCKETS`].
    pub released: Vec<u64>,
    /// The plugin's memory as measured on the instance.
    pub queue_bytes: usize,
    /// The plugin's memory as `memory_bytes_for` computes it.
    pub queue_bytes_expected: usize,
    /// The whole scheduler's memory.
    pub scheduler_bytes: usize,
    /// A hash of every decision (task and timer) of the timed invocations.
    pub decisions: u64,
    /// Why the run failed, if it did.
    pub error: Option<String>,
}

/// The workload of `n` processes at `2^bits` instants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// `t = 2^bits`.
    pub bits: u32,
    /// Every process's cap, in parts of [`BandwidthCap::SCALE`].
    pub caps: Vec<u64>,
    seed: u64,
}

/// One process's stream of actions.
struct Stream {
    rng: Rng,
    cap: u64,
    /// The shortest and longest period, in grid steps.
    steps: (u64, u64),
    grid: u64,
}

impl Stream {
    /// The next action and its load, in instants.
    fn next_action(&mut self) -> (Action, u64) {
        let period = self.grid * self.rng.range(self.steps.0, self.steps.1);
        let limit =
            (u128::from(self.cap) * u128::from(period) / u128::from(BandwidthCap::SCALE)) as u64;
        let load = self.rng.range(1, 3 * limit);
        let resource = Resource::new(
            QUANTUM.saturating_mul(limit),
            QUANTUM.saturating_mul(period),
        );
        (Action::new(QUANTUM.saturating_mul(load), resource), load)
    }
}

impl Workload {
    /// `n` processes at `2^bits` instants; fails if a cap is too small for one instant of
    /// limit in the longest period.
    pub fn new(n: usize, bits: u32, seed: u64) -> Result<Self, String> {
        let mut rng = Rng::new(seed ^ ((n as u64) << 20) ^ u64::from(bits));
        let weights: Vec<f64> = (0..n).map(|_| 0.9 + 0.2 * rng.unit()).collect();
        let sum: f64 = weights.iter().sum();
        let caps: Vec<u64> = weights
            .iter()
            .map(|w| (UTILIZATION * w / sum * BandwidthCap::SCALE as f64) as u64)
            .collect();
        let workload = Workload { bits, caps, seed };
        for i in 0..n {
            let (lo, hi) = workload.steps(i);
            if lo > hi {
                return Err(format!(
                    "{n} processes do not fit 2^{bits} instants: a period of {} needed",
                    lo * workload.grid()
                ));
            }
        }
        Ok(workload)
    }

    /// The longest period, `t/4` instants.
    pub fn longest(&self) -> u64 {
        1 << (self.bits - 2)
    }

    /// The period grid, `t/64` instants.
    pub fn grid(&self) -> u64 {
        1 << (self.bits - 6)
    }

    /// Process `i`'s periods in grid steps: the shortest that gives one instant of limit,
    /// to the longest.
    fn steps(&self, i: usize) -> (u64, u64) {
        let shortest = BandwidthCap::SCALE.div_ceil(self.caps[i].max(1));
        (
            shortest.div_ceil(self.grid()).max(1),
            self.longest() / self.grid(),
        )
    }

    fn streams(&self) -> Vec<Stream> {
        (0..self.caps.len())
            .map(|i| Stream {
                rng: Rng::new(self.seed.wrapping_mul(31).wrapping_add(i as u64)),
                cap: self.caps[i],
                steps: self.steps(i),
                grid: self.grid(),
            })
            .collect()
    }
}

/// What one replay saw besides its times.
struct Replay {
    decisions: u64,
    max_units: u64,
    total_units: u64,
    switches: u64,
    queue_bytes: usize,
    scheduler_bytes: usize,
    raw_max: u64,
}

fn fnv(hash: u64, value: u64) -> u64 {
    (hash ^ value).wrapping_mul(0x0000_0100_0000_01B3)
}

/// Drives `workload` on a fresh scheduler with plugin `Q`; keeps in `times[k]` the least of
/// its value and the `k`-th timed invocation's time, in `released[k]` its releases.
fn replay<Q: VbsQueue>(
    workload: &Workload,
    times: &mut [u64],
    released: &mut [u64],
) -> Result<Replay, String> {
    let n = workload.caps.len();
    let config = VbsConfig::new(ReleaseStrategy::Early)
        .with_quantum(QUANTUM)
        .with_horizon_bits(workload.bits);
    let err = |what: &str, e: bulwark_core::CoreError| format!("{what}: {e:?}");
    let mut vbs = Vbs::<Q>::with_capacity(n, config).map_err(|e| err("scheduler", e))?;
    let mut streams = workload.streams();
    let mut left = vec![0u64; n];
    let mut work = Work::default();
    for (i, stream) in streams.iter_mut().enumerate() {
        let task = TaskId(i as u32);
        let cap = BandwidthCap::from_parts(workload.caps[i]).map_err(|e| err("cap", e))?;
        vbs.add_process(task, cap)
            .map_err(|e| err("admission", e))?;
        let (action, load) = stream.next_action();
        left[i] = load;
        vbs.switch_action(Instant::ZERO, task, action, &mut work)
            .map_err(|e| err("first action", e))?;
    }
    let q = QUANTUM.as_nanos();
    let warm = workload.longest();
    let mut out = Replay {
        decisions: 0xCBF2_9CE4_8422_2325,
        max_units: 0,
        total_units: 0,
        switches: 0,
        queue_bytes: vbs.queue().memory_bytes(),
        scheduler_bytes: vbs.memory_bytes(),
        raw_max: 0,
    };
    let (mut now, mut running, mut k) = (0u64, None::<usize>, 0usize);
    while k < times.len() {
        let switching = running.is_some_and(|i| left[i] == 0);
        let switch = running.filter(|&i| left[i] == 0).map(|i| {
            let (action, load) = streams[i].next_action();
            left[i] = load;
            (TaskId(i as u32), action)
        });
        let mut work = Work::default();
        let at = Instant::from_nanos(now * q);
        let start = Clock::now();
        let switched = match switch {
            Some((task, action)) => vbs.switch_action(at, task, action, &mut work),
            None => Ok(()),
        };
        let decision = black_box(vbs.schedule(black_box(at), &mut work));
        let ns = start.elapsed().as_nanos() as u64;
        switched.map_err(|e| err("switch", e))?;
        running = decision.next.map(TaskId::index);
        let timer = decision.timer.map(|t| t.as_nanos() / q);
        if now >= warm {
            times[k] = times[k].min(ns);
            released[k] = u64::from(work.replenishments_processed);
            out.raw_max = out.raw_max.max(ns);
            out.max_units = out.max_units.max(work.units());
            out.total_units += work.units();
            out.switches += u64::from(switching);
            let task = decision.next.map_or(u64::MAX, |t| u64::from(t.0));
            out.decisions = fnv(fnv(out.decisions, task), timer.unwrap_or(u64::MAX));
            k += 1;
        }
        let end = running.map(|i| now + left[i]);
        let next = [timer, end].into_iter().flatten().min();
        let Some(next) = next.filter(|&t| t > now) else {
            return Err(format!("stalled at instant {now}"));
        };
        if let Some(i) = running {
            left[i] -= next - now;
        }
        now = next;
    }
    Ok(out)
}

/// Measures `Q` on `workload`: `invocations` timed invocations, `replays` times.
fn measure<Q: VbsQueue>(workload: &Workload, invocations: usize, replays: usize) -> Point {
    let n = workload.caps.len();
    let mut point = Point {
        plugin: Q::NAME,
        bits: workload.bits,
        n,
        invocations,
        replays,
        queue_bytes_expected: Q::memory_bytes_for(n, workload.bits),
        ..Point::default()
    };
    let mut times = vec![u64::MAX; invocations];
    let mut released = vec![0u64; invocations];
    for r in 0..replays {
        match replay::<Q>(workload, &mut times, &mut released) {
            Ok(replay) => {
                if r > 0 && replay.decisions != point.decisions {
                    point.error = Some("a replay made different decisions".into());
                }
                point.decisions = replay.decisions;
                point.max_units = replay.max_units;
                point.mean_units = replay.total_units as f64 / invocations.max(1) as f64;
                point.switches = replay.switches;
                point.queue_bytes = replay.queue_bytes;
                point.scheduler_bytes = replay.scheduler_bytes;
                point.raw_max_ns = point.raw_max_ns.max(replay.raw_max as f64);
            }
            Err(e) => {
                point.error = Some(e);
                return point;
            }
        }
    }
    summarise(&mut point, &mut times, &released);
    point
}

/// Fills in `point`'s statistics from the per-invocation minima (sorts `times`).
fn summarise(point: &mut Point, times: &mut [u64], released: &[u64]) {
    let len = times.len().max(1) as f64;
    let mean = times.iter().map(|&t| t as f64).sum::<f64>() / len;
    let variance = times
        .iter()
        .map(|&t| (t as f64 - mean).powi(2))
        .sum::<f64>()
        / len;
    point.mean_ns = mean;
    point.std_ns = variance.sqrt();
    point.histogram = histogram(times, &TIME_BUCKETS, false);
    point.released = histogram(released, &RELEASE_BUCKETS, true);
    times.sort_unstable();
    point.max_ns = times.last().copied().unwrap_or(0) as f64;
    let at = ((times.len() as f64 * 0.999).ceil() as usize).clamp(1, times.len().max(1)) - 1;
    point.p999_ns = times.get(at).copied().unwrap_or(0) as f64;
}

/// Counts of `values` per bucket (upper ends exclusive, or inclusive if `inclusive`).
fn histogram(values: &[u64], uppers: &[u64], inclusive: bool) -> Vec<u64> {
    let mut counts = vec![0; uppers.len()];
    for &v in values {
        let i = uppers
            .iter()
            .position(|&u| if inclusive { v <= u } else { v < u })
            .unwrap_or(uppers.len() - 1);
        counts[i] += 1;
    }
    counts
}

/// Measures `plugin` with `n` processes at `2^bits`.
pub fn measure_plugin(
    plugin: Plugin,
    n: usize,
    bits: u32,
    invocations: usize,
    replays: usize,
) -> Point {
    let workload = match Workload::new(n, bits, SEED) {
        Ok(w) => w,
        Err(e) => {
            return Point {
                plugin: plugin.name(),
                bits,
                n,
                error: Some(e),
                ..Point::default()
            }
        }
    };
    match plugin {
        Plugin::List => measure::<ListQueue>(&workload, invocations, replays),
        Plugin::Array => measure::<ArrayQueue>(&workload, invocations, replays),
        Plugin::Matrix => measure::<MatrixQueue>(&workload, invocations, replays),
        Plugin::Tree => measure::<TreeQueue>(&workload, invocations, replays),
    }
}

/// The cost of reading the clock twice (what every timed invocation includes): the median
/// of many empty measurements, ns.
pub fn clock_overhead() -> f64 {
    let mut samples: Vec<u64> = (0..10_001)
        .map(|_| {
            let start = Clock::now();
            black_box(());
            start.elapsed().as_nanos() as u64
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2] as f64
}

/// The whole sweep: `sizes` for every sweep, then [`LARGE`] if `large`.
pub fn sweep(
    sizes: &[usize],
    invocations: usize,
    large: Option<usize>,
    replays: usize,
) -> Vec<Point> {
    let mut points = Vec::new();
    for s in SWEEPS {
        for &n in sizes {
            points.push(measure_plugin(s.plugin, n, s.bits, invocations, replays));
        }
    }
    if let Some(invocations) = large {
        for plugin in LARGE_PLUGINS {
            points.push(measure_plugin(
                plugin,
                LARGE,
                LARGE_BITS,
                invocations,
                replays,
            ));
        }
    }
    points
}

fn run() -> Result<ExperimentReport, LabError> {
    let start = Clock::now();
    let clock = clock_overhead();
    let points = if cfg!(debug_assertions) {
        sweep(&DEBUG_PROCESSES, DEBUG_INVOCATIONS, None, DEBUG_REPLAYS)
    } else {
        sweep(&PROCESSES, INVOCATIONS, Some(LARGE_INVOCATIONS), REPLAYS)
    };
    Ok(report(&points, clock, start.elapsed().as_secs_f64()))
}

fn find<'a>(points: &'a [Point], plugin: &str, bits: u32, n: usize) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.plugin == plugin && p.bits == bits && p.n == n && p.error.is_none())
}

/// The ratio of `plugin`'s mean at `to` processes to its mean at `from`, if both ran.
fn growth(points: &[Point], plugin: &str, bits: u32, from: usize, to: usize) -> Option<f64> {
    let (a, b) = (
        find(points, plugin, bits, from)?,
        find(points, plugin, bits, to)?,
    );
    Some(b.mean_ns / a.mean_ns.max(1.0))
}

/// The largest process count measured (the histogram's, or less in a debug build's sweep).
fn top(points: &[Point]) -> usize {
    points
        .iter()
        .filter(|p| p.n <= HISTOGRAM_AT)
        .map(|p| p.n)
        .max()
        .unwrap_or(0)
}

/// The checks. Timing checks rest on ratios of means with wide margins.
pub fn checks(points: &[Point]) -> Vec<Check> {
    let mut checks = Vec::new();
    let errors: Vec<String> = points
        .iter()
        .filter_map(|p| {
            p.error
                .as_ref()
                .map(|e| format!("{} @2^{} n = {}: {e}", p.plugin, p.bits, p.n))
        })
        .collect();
    checks.push(Check {
        claim: "Every configuration runs its invocations with no scheduler error, and every \
                replay makes the same decisions"
            .into(),
        expected: "no error".into(),
        measured: if errors.is_empty() {
            format!("{} configurations", points.len())
        } else {
            format!("{} failed, first: {}", errors.len(), errors[0])
        },
        pass: !points.is_empty() && errors.is_empty(),
    });

    // The plugins agree: the same decisions at the same n and resolution.
    let mut disagree = Vec::new();
    let mut compared = 0;
    for p in points {
        for o in points {
            if p.n == o.n && p.bits == o.bits && p.plugin < o.plugin {
                compared += 1;
                if p.decisions != o.decisions || p.invocations != o.invocations {
                    disagree.push(format!(
                        "{} vs {} @2^{} n = {}",
                        p.plugin, o.plugin, p.bits, p.n
                    ));
                }
            }
        }
    }
    checks.push(Check {
        claim: "All plugins make the same scheduling decisions on the same workload, so they \
                are timed on the same schedule"
            .into(),
        expected: "identical decisions (task and timer) at every invocation".into(),
        measured: if disagree.is_empty() {
            format!("{compared} pairs of plugins agree")
        } else {
            format!("{} pairs differ: {}", disagree.len(), disagree.join(", "))
        },
        pass: compared > 0 && disagree.is_empty(),
    });

    let off: Vec<String> = points
        .iter()
        .filter(|p| p.error.is_none() && p.queue_bytes != p.queue_bytes_expected)
        .map(|p| {
            format!(
                "{} @2^{} n = {}: {} vs {}",
                p.plugin, p.bits, p.n, p.queue_bytes, p.queue_bytes_expected
            )
        })
        .collect();
    checks.push(Check {
        claim: "The memory each plugin holds is what `memory_bytes_for` computes (Fig. 3(d) \
                is computed from the plugins' layouts; the paper: \"our experiments confirm the \
                results\")"
            .into(),
        expected: "equal in every configuration".into(),
        measured: if off.is_empty() {
            format!("equal in {} configurations", points.len())
        } else {
            off.join(", ")
        },
        pass: !points.is_empty() && off.is_empty(),
    });

    let top = top(points);
    let ratio = |plugin: &str, bits: u32| growth(points, plugin, bits, PROCESSES[0], top);
    let show = |g: Option<f64>| g.map_or("not measured".to_string(), |g| format!("{g:.1}x"));
    let list_at = |n| find(points, ListQueue::NAME, PAPER_BITS, n);
    let list_tail = match (list_at(PROCESSES[0]), list_at(top)) {
        (Some(a), Some(b)) => Some(b.p999_ns / a.p999_ns.max(1.0)),
        _ => None,
    };
    let list_mean = ratio(ListQueue::NAME, PAPER_BITS);
    checks.push(Check {
        claim: format!(
            "The list plugin's time grows with the processes (every insertion walks a sorted \
             list, so a release storm costs O(n) per released process): {top} processes \
             against 10"
        ),
        expected: format!(
            "99.9th percentile at least {LIST_GROWTH:.0}x, mean at least {LIST_MEAN_GROWTH:.0}x"
        ),
        measured: format!(
            "99.9th percentile {}, mean {}",
            show(list_tail),
            show(list_mean)
        ),
        pass: top > PROCESSES[0]
            && list_tail.is_some_and(|g| g >= LIST_GROWTH)
            && list_mean.is_some_and(|g| g >= LIST_MEAN_GROWTH),
    });
    let flat = [
        (MatrixQueue::NAME, MATRIX_BITS),
        (TreeQueue::NAME, MATRIX_BITS),
        (TreeQueue::NAME, PAPER_BITS),
    ];
    let growths: Vec<(String, Option<f64>)> = flat
        .iter()
        .map(|&(plugin, bits)| (format!("{plugin} @2^{bits}"), ratio(plugin, bits)))
        .collect();
    checks.push(Check {
        claim: format!(
            "The matrix and tree plugins' time stays flat in the processes (constant-time \
             bitmap and radix-tree operations): mean at {top} processes against 10"
        ),
        expected: format!("within {FLAT_MARGIN:.0}x"),
        measured: growths
            .iter()
            .map(|(l, g)| format!("{l}: {}", show(*g)))
            .collect::<Vec<_>>()
            .join(", "),
        pass: top > PROCESSES[0]
            && growths
                .iter()
                .all(|(_, g)| g.is_some_and(|g| g <= FLAT_MARGIN)),
    });
    let units = |plugin: &str, bits: u32| {
        let (a, b) = (
            find(points, plugin, bits, PROCESSES[0])?,
            find(points, plugin, bits, top)?,
        );
        Some(b.max_units as f64 / a.max_units.max(1) as f64)
    };
    let work: Vec<(String, Option<f64>, bool)> = [
        (ListQueue::NAME, PAPER_BITS, LIST_WORK_GROWTH, true),
        (ArrayQueue::NAME, PAPER_BITS, ARRAY_WORK_GROWTH, true),
        (MatrixQueue::NAME, MATRIX_BITS, FLAT_WORK, false),
        (TreeQueue::NAME, MATRIX_BITS, FLAT_WORK, false),
        (TreeQueue::NAME, PAPER_BITS, FLAT_WORK, false),
    ]
    .iter()
    .map(|&(plugin, bits, factor, grows)| {
        let g = units(plugin, bits);
        let ok = g.is_some_and(|g| if grows { g >= factor } else { g <= factor });
        (format!("{plugin} @2^{bits}"), g, ok)
    })
    .collect();
    checks.push(Check {
        claim: format!(
            "The most work of one invocation (the plugins' exact counts of entries moved and \
             nodes or words touched) follows Table I: from 10 to {top} processes the list's \
             grows far faster than n (a release storm walks a list of up to n per released \
             process), the array's about with n (n log t), the matrix's and the tree's not at \
             all"
        ),
        expected: format!(
            "list at least {LIST_WORK_GROWTH:.0}x, array at least {ARRAY_WORK_GROWTH:.0}x, \
             matrix and tree at most {FLAT_WORK:.0}x"
        ),
        measured: work
            .iter()
            .map(|(l, g, _)| format!("{l}: {}", show(*g)))
            .collect::<Vec<_>>()
            .join(", "),
        pass: top > PROCESSES[0] && work.iter().all(|w| w.2),
    });
    checks.push(memory_check());
    checks
}

/// Fig. 3(d)'s shape, from the layouts: the list does not depend on the resolution, the
/// matrix quadruples with every bit, the array and the tree about double.
fn memory_check() -> Check {
    let n = HISTOGRAM_AT;
    let per_bit = |plugin: Plugin| -> Vec<f64> {
        MEMORY_BITS
            .windows(2)
            .filter_map(|w| {
                Some(plugin.memory_for(n, w[1])? as f64 / plugin.memory_for(n, w[0])? as f64)
            })
            .collect()
    };
    let list = per_bit(Plugin::List);
    let matrix = per_bit(Plugin::Matrix);
    let linear = [per_bit(Plugin::Array), per_bit(Plugin::Tree)].concat();
    let range = |v: &[f64]| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.2}-{hi:.2}")
    };
    Check {
        claim: format!(
            "Memory against the time resolution for {n} processes (Fig. 3(d)): the list's is \
             independent of it, the matrix's quadruples per bit (t^2), the array's and the \
             tree's at most double (t)"
        ),
        expected: "list x1, matrix about x4, array and tree x1-x2 per bit".into(),
        measured: format!(
            "per bit: list x{}, matrix x{}, array and tree x{}",
            range(&list),
            range(&matrix),
            range(&linear)
        ),
        pass: !list.is_empty()
            && !matrix.is_empty()
            && list.iter().all(|&r| r == 1.0)
            && matrix.iter().all(|&r| (3.5..=4.0).contains(&r))
            && linear.iter().all(|&r| (1.0..=2.0).contains(&r)),
    }
}

fn bytes(b: usize) -> String {
    let b = b as f64;
    match b {
        _ if b >= 1024.0 * 1024.0 * 1024.0 => format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0)),
        _ if b >= 1024.0 * 1024.0 => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
        _ if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
        _ => format!("{b:.0} B"),
    }
}

/// The labels of the sweeps present in `points`, in order, with their points.
fn series_of(points: &[Point]) -> Vec<(String, Vec<&Point>)> {
    let mut out: Vec<(String, Vec<&Point>)> = Vec::new();
    for s in SWEEPS {
        let of: Vec<&Point> = points
            .iter()
            .filter(|p| {
                p.error.is_none()
                    && p.plugin == s.plugin.name()
                    && (p.bits == s.bits
                        || (p.n == LARGE && p.bits == LARGE_BITS && s.bits == PAPER_BITS))
            })
            .collect();
        if !of.is_empty() {
            let label = if of.iter().any(|p| p.n == LARGE) {
                format!("{} (10,000 at 2^{LARGE_BITS})", s.label())
            } else {
                s.label()
            };
            out.push((label, of));
        }
    }
    out
}

fn plot_of(points: &[Point], title: &str, y: &str, value: fn(&Point) -> f64) -> String {
    let series: Vec<Series> = series_of(points)
        .into_iter()
        .map(|(label, of)| Series::new(label, of.iter().map(|p| (p.n as f64, value(p))).collect()))
        .collect();
    // Times span decades: real log axes, not log10 values on a linear one.
    line_plot_scaled(
        title,
        "processes (log scale)",
        y,
        &series,
        Scale::Log,
        Scale::Log,
    )
}

/// The report; `clock` is the clock's own cost, `seconds` the run time.
pub fn report(points: &[Point], clock: f64, seconds: f64) -> ExperimentReport {
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let err = p.error.is_some();
            let t = |v: f64| if err { "-".into() } else { show_ns(v) };
            vec![
                p.plugin.to_string(),
                format!("2^{}", p.bits),
                p.n.to_string(),
                t(p.mean_ns),
                t(p.std_ns),
                t(p.max_ns),
                t(p.p999_ns),
                t(p.raw_max_ns),
                format!("{:.0}", p.mean_units),
                p.max_units.to_string(),
                format!(
                    "{:.0}%",
                    p.switches as f64 * 100.0 / p.invocations.max(1) as f64
                ),
                bytes(p.scheduler_bytes),
                format!("{} x {}", p.invocations, p.replays),
            ]
        })
        .collect();
    let top = top(points);
    let at_top: Vec<&Point> = SWEEPS
        .iter()
        .filter_map(|s| find(points, s.plugin.name(), s.bits, top))
        .collect();
    let histogram_rows: Vec<Vec<String>> = TIME_BUCKETS
        .iter()
        .enumerate()
        .map(|(i, &upper)| {
            let lower = if i == 0 { 0 } else { TIME_BUCKETS[i - 1] };
            let range = if upper == u64::MAX {
                format!(">= {}", show_ns(lower as f64))
            } else {
                format!("{} - {}", show_ns(lower as f64), show_ns(upper as f64))
            };
            let mut row = vec![range];
            row.extend(at_top.iter().map(|p| p.histogram[i].to_string()));
            row
        })
        .collect();
    let list_top = find(points, ListQueue::NAME, PAPER_BITS, top);
    let released_rows: Vec<Vec<String>> = RELEASE_BUCKETS
        .iter()
        .enumerate()
        .map(|(i, &upper)| {
            let lower = if i == 0 {
                0
            } else {
                RELEASE_BUCKETS[i - 1] + 1
            };
            let range = match (lower, upper) {
                (l, u) if l == u => l.to_string(),
                (l, u64::MAX) => format!(">= {l}"),
                (l, u) => format!("{l} - {u}"),
            };
            vec![
                range,
                list_top.map_or("-".into(), |p| p.released[i].to_string()),
            ]
        })
        .collect();
    let memory_rows: Vec<Vec<String>> = MEMORY_BITS
        .iter()
        .map(|&bits| {
            let mut row = vec![format!("2^{bits} = {}", 1u64 << bits)];
            for plugin in [Plugin::List, Plugin::Array, Plugin::Matrix, Plugin::Tree] {
                row.push(plugin.memory_for(HISTOGRAM_AT, bits).map_or_else(
                    || format!("- (at most 2^{})", MatrixQueue::MAX_HORIZON_BITS),
                    bytes,
                ));
            }
            row
        })
        .collect();
    let paper_rows: Vec<Vec<String>> = SWEEPS
        .iter()
        .filter_map(|s| find(points, s.plugin.name(), s.bits, top))
        .map(|p| {
            let paper = PAPER_MAX_US
                .iter()
                .find(|(name, _)| *name == p.plugin)
                .map_or("as the matrix, up to 140 ns".to_string(), |(_, us)| {
                    format!("{us:.0} us")
                });
            vec![
                format!("{} @2^{}", p.plugin, p.bits),
                paper,
                show_ns(p.mean_ns),
                show_ns(p.max_ns),
                show_ns(p.raw_max_ns),
                if p.max_ns < GOAL_NS { "yes" } else { "no" }.into(),
            ]
        })
        .collect();

    let mean_svg = plot_of(
        points,
        "Mean scheduler invocation time vs processes (cf. VBS Fig. 3(b))",
        "mean time (ns, log scale)",
        |p| p.mean_ns,
    );
    let max_svg = plot_of(
        points,
        "Maximum scheduler invocation time vs processes (cf. VBS Fig. 3(a))",
        "maximum (ns, log scale; per-invocation minimum over replays)",
        |p| p.max_ns,
    );
    let std_svg = plot_of(
        points,
        "Standard deviation of the invocation time vs processes (cf. VBS Fig. 3(c))",
        "standard deviation (ns, log scale)",
        |p| p.std_ns,
    );
    let hist_series: Vec<Series> = at_top
        .iter()
        .map(|p| {
            Series::new(
                format!("{} @2^{}", p.plugin, p.bits),
                TIME_BUCKETS
                    .iter()
                    .enumerate()
                    .map(|(i, &u)| {
                        let upper = if u == u64::MAX { 200_000 } else { u };
                        // One more than the count, so that an empty bucket stays on the
                        // log axis, at 1.
                        (upper as f64, p.histogram[i] as f64 + 1.0)
                    })
                    .collect(),
            )
        })
        .collect();
    let hist_svg = line_plot_scaled(
        &format!("Invocation times at {top} processes (cf. VBS Fig. 4)"),
        "upper end of the time bucket, ns (log scale)",
        "1 + invocations in the bucket (log scale)",
        &hist_series,
        Scale::Log,
        Scale::Log,
    );
    let memory_series: Vec<Series> = [Plugin::List, Plugin::Array, Plugin::Matrix, Plugin::Tree]
        .iter()
        .map(|&plugin| {
            Series::new(
                plugin.name(),
                MEMORY_BITS
                    .iter()
                    .filter_map(|&bits| {
                        Some((
                            f64::from(bits),
                            plugin.memory_for(HISTOGRAM_AT, bits)? as f64,
                        ))
                    })
                    .collect(),
            )
        })
        .collect();
    // The x axis is already logarithmic in t: it counts the bits of the resolution.
    let memory_svg = line_plot_scaled(
        &format!("Plugin memory for {HISTOGRAM_AT} processes vs time resolution (cf. Fig. 3(d))"),
        "log2 of the distinguishable instants t",
        "bytes (log scale)",
        &memory_series,
        Scale::Linear,
        Scale::Log,
    );

    let describe = |plugin: &str, bits: u32| {
        let at = |n| find(points, plugin, bits, n);
        match (at(PROCESSES[0]), at(top)) {
            (Some(a), Some(b)) => format!(
                "{plugin} @2^{bits} {} to {} mean, {} max",
                show_ns(a.mean_ns),
                show_ns(b.mean_ns),
                show_ns(b.max_ns)
            ),
            _ => format!("{plugin} @2^{bits} not measured"),
        }
    };
    let large = LARGE_PLUGINS
        .iter()
        .filter_map(|p| find(points, p.name(), LARGE_BITS, LARGE))
        .map(|p| {
            format!(
                "{} {} mean, {} max",
                p.plugin,
                show_ns(p.mean_ns),
                show_ns(p.max_ns)
            )
        })
        .collect::<Vec<_>>();
    let invocations = points.first().map_or(0, |p| p.invocations);
    let replays = points.first().map_or(0, |p| p.replays);
    let summary = format!(
        "One scheduler invocation (the process's mark of its next action, if any, then \
         `schedule`: steps 1-3 of section IV) of the real VBS scheduler, timed with the wall \
         clock while a random admitted process set runs: caps splitting 95% of the processor, \
         endless random actions (periods on a grid of t/64 instants up to t/4, limit \
         floor(cap · π), loads of 1-3 limits), early release. {invocations} invocations are \
         timed per configuration after every process's first period, and the run is replayed \
         {replays} times; each invocation keeps its least time over the replays (the run is \
         deterministic, so this removes most interrupts and vCPU preemptions of this shared \
         VM), and mean, standard deviation, maximum and 99.9th percentile are of those. The raw \
         maximum is the largest single reading. Reading the clock costs about {} and is \
         included.\n\n\
         From 10 to {top} processes: {}; {}; {}; {}; {}. At {LARGE} processes (2^16 \
         instants): {}. The list's tail grows with n: a release storm (Fig. 4(d): up to \
         hundreds of processes released at one instant) walks its sorted lists once per \
         released process, while most invocations touch only the lists' ends, so its mean \
         grows far less. The matrix and the tree stay flat; the array's worst case grows with n \
         (n log t), its mean does not. The constant-time plugins are not faster at 10 \
         processes than at {top}: they do at least as much work there (mean work units per \
         invocation at 10 and {top} processes: {}), since their bitmaps and radix trees are \
         sparse and the search for the next set bit goes further; the rest is cache and \
         branch-prediction effects not isolated here (the paper, too, saw the matrix faster \
         at 750 processes than at 10). The paper's worst cases at 750 (2 GHz \
         AMD64, 2009) were 350 us (list), 55 us (array) and 20 us (matrix); the goal here is a \
         worst case under 1 us, which the second table reports per plugin without asserting \
         it: on this shared two-core VM a maximum over tens of thousands of invocations is not \
         reliable enough for a hard check (the raw maxima include vCPU preemptions of \
         milliseconds).\n\n\
         Deviations: {invocations} timed invocations per configuration instead of one million, \
         to keep the experiment short; the matrix at 2^12 instants instead of 2^14 (1 GiB), with \
         the tree beside it at 2^12 for a like-for-like comparison; the list, array and tree \
         at the paper's 2^14. Measured in {seconds:.1} s.",
        show_ns(clock),
        describe(ListQueue::NAME, PAPER_BITS),
        describe(ArrayQueue::NAME, PAPER_BITS),
        describe(TreeQueue::NAME, PAPER_BITS),
        describe(MatrixQueue::NAME, MATRIX_BITS),
        describe(TreeQueue::NAME, MATRIX_BITS),
        if large.is_empty() {
            "not measured in this build".to_string()
        } else {
            large.join("; ")
        },
        [
            (TreeQueue::NAME, PAPER_BITS),
            (TreeQueue::NAME, MATRIX_BITS),
            (MatrixQueue::NAME, MATRIX_BITS),
        ]
        .iter()
        .map(|&(plugin, bits)| {
            let units = |n| find(points, plugin, bits, n).map_or(f64::NAN, |p| p.mean_units);
            format!(
                "{plugin} @2^{bits} {:.0} and {:.0}",
                units(PROCESSES[0]),
                units(top)
            )
        })
        .collect::<Vec<_>>()
        .join("; "),
    );
    let mut histogram_header = vec!["time per invocation".to_string()];
    histogram_header.extend(at_top.iter().map(|p| format!("{} @2^{}", p.plugin, p.bits)));
    ExperimentReport {
        source: "Craciunas et al., Programmable Temporal Isolation through Variable-Bandwidth \
                 Servers, section VI-A, Figs. 3 and 4"
            .into(),
        summary,
        checks: checks(points),
        tables: vec![
            Table {
                caption: "Time of one scheduler invocation per plugin, resolution and process \
                          count (cf. Fig. 3(a)-(c)): statistics of the per-invocation minimum \
                          over the replays; the raw maximum is the largest single reading"
                    .into(),
                header: headings([
                    "plugin",
                    "instants t",
                    "processes",
                    "mean",
                    "std dev",
                    "max",
                    "99.9th pct",
                    "raw max",
                    "mean work units",
                    "most work units",
                    "with a switch",
                    "scheduler memory",
                    "invocations x replays",
                ]),
                rows,
            },
            Table {
                caption: format!(
                    "Worst cases at {top} processes against the paper's (Fig. 4, 2009 \
                     hardware) and the 1 us goal"
                ),
                header: headings([
                    "plugin",
                    "paper max",
                    "mean",
                    "max",
                    "raw max",
                    "max under 1 us",
                ]),
                rows: paper_rows,
            },
            Table {
                caption: format!(
                    "Histogram of the invocation times at {top} processes (cf. Fig. 4(a)-(c)): \
                     invocations per bucket"
                ),
                header: histogram_header,
                rows: histogram_rows,
            },
            Table {
                caption: format!(
                    "Processes released per invocation at {top} processes (cf. Fig. 4(d); the \
                     list plugin's count, one per process moved from Blocked to Ready; every \
                     plugin runs the same schedule)"
                ),
                header: headings(["processes released", "invocations"]),
                rows: released_rows,
            },
            Table {
                caption: format!(
                    "Memory of each plugin for {HISTOGRAM_AT} processes against the time \
                     resolution (cf. Fig. 3(d)), from `memory_bytes_for`"
                ),
                header: headings(["instants t", "list", "array", "matrix", "tree"]),
                rows: memory_rows,
            },
        ],
        figures: vec![
            Figure {
                file: "mean.svg".into(),
                caption: "Mean invocation time against processes, log-log (cf. Fig. 3(b))".into(),
                svg: mean_svg,
            },
            Figure {
                file: "max.svg".into(),
                caption: "Maximum invocation time against processes, log-log (cf. Fig. 3(a))"
                    .into(),
                svg: max_svg,
            },
            Figure {
                file: "std.svg".into(),
                caption: "Standard deviation of the invocation time against processes, \
                          log-log (cf. Fig. 3(c))"
                    .into(),
                svg: std_svg,
            },
            Figure {
                file: "histogram.svg".into(),
                caption: format!(
                    "Invocation times at {top} processes, both axes logarithmic (cf. Fig. 4)"
                ),
                svg: hist_svg,
            },
            Figure {
                file: "memory.svg".into(),
                caption: "Plugin memory against the time resolution in bits, y axis \
                          logarithmic (cf. Fig. 3(d))"
                    .into(),
                svg: memory_svg,
            },
        ],
        ..EXPERIMENT.blank_report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::failing_claims as failing;

    /// A synthetic sweep of the expected shape: list linear in n, the others flat.
    fn good_points() -> Vec<Point> {
        let mut points = Vec::new();
        for s in SWEEPS {
            for n in PROCESSES {
                let mean = match s.plugin {
                    Plugin::List => 50.0 + 2.0 * n as f64,
                    Plugin::Array => 80.0 + 0.2 * n as f64,
                    _ => 90.0,
                };
                let bytes = s.plugin.memory_for(n, s.bits).unwrap();
                points.push(Point {
                    plugin: s.plugin.name(),
                    bits: s.bits,
                    n,
                    invocations: 100,
                    replays: 3,
                    mean_ns: mean,
                    std_ns: mean / 4.0,
                    max_ns: mean * 4.0,
                    p999_ns: mean * 3.0,
                    raw_max_ns: mean * 40.0,
                    mean_units: 50.0,
                    max_units: match s.plugin {
                        Plugin::List => (n * n) as u64,
                        Plugin::Array => 2 * n as u64,
                        _ => 300,
                    },
                    switches: 10,
                    histogram: vec![10; TIME_BUCKETS.len()],
                    released: vec![10; RELEASE_BUCKETS.len()],
                    queue_bytes: bytes,
                    queue_bytes_expected: bytes,
                    scheduler_bytes: bytes + 1000,
                    decisions: (n as u64) << 8 | u64::from(s.bits),
                    error: None,
                });
            }
        }
        points
    }

    #[test]
    fn every_check_holds_on_data_of_the_expected_shape() {
        let checks = checks(&good_points());
        assert_eq!(checks.len(), 7);
        assert!(failing(&checks).is_empty(), "{:?}", failing(&checks));
        let report = report(&good_points(), 40.0, 1.0);
        assert_eq!(report.tables[0].rows.len(), SWEEPS.len() * PROCESSES.len());
        assert_eq!(report.tables[2].rows.len(), TIME_BUCKETS.len());
        assert_eq!(report.tables[2].header.len(), 1 + SWEEPS.len());
        assert_eq!(report.tables[4].rows.len(), MEMORY_BITS.len());
        assert!(report.tables[4].rows[6][3].starts_with("- (at most 2^14)"));
        assert_eq!(report.tables[4].rows[4][3], "1.06 GiB");
        assert!(report.figures.iter().all(|f| f.svg.starts_with("<svg")));
    }

    #[test]
    fn checks_fail_on_bad_data() {
        // A list that does not grow, a tree that does.
        let mut bad = good_points();
        for p in &mut bad {
            match (p.plugin, p.bits) {
                ("list", _) => p.mean_ns = 100.0,
                ("tree", MATRIX_BITS) => p.mean_ns = 50.0 + 10.0 * p.n as f64,
                _ => {}
            }
        }
        let failed = failing(&checks(&bad));
        assert_eq!(failed.len(), 2, "{failed:?}");
        assert!(failed[0].contains("list plugin"));
        assert!(failed[1].contains("flat"));

        // Plugins that disagree, memory that is not as computed, a failed run.
        let mut bad = good_points();
        bad[0].decisions ^= 1;
        bad[1].queue_bytes += 8;
        bad[2].error = Some("stalled at instant 7".into());
        let failed = failing(&checks(&bad));
        assert_eq!(failed.len(), 3, "{failed:?}");
        assert!(failed[0].contains("no scheduler error"));
        assert!(failed[1].contains("same scheduling decisions"));
        assert!(failed[2].contains("memory_bytes_for"));

        // Nothing measured, or only one size: the growth checks cannot pass.
        let failed = failing(&checks(&[]));
        assert_eq!(failed.len(), 6, "{failed:?}");
        let ten: Vec<Point> = good_points().into_iter().filter(|p| p.n == 10).collect();
        assert_eq!(failing(&checks(&ten)).len(), 3);

        // Work that does not follow Table I: a tree whose work grows, an array whose does not.
        let mut bad = good_points();
        for p in &mut bad {
            match p.plugin {
                "tree" => p.max_units = 10 * p.n as u64,
                "array" => p.max_units = 100,
                _ => {}
            }
        }
        let failed = failing(&checks(&bad));
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].contains("Table I"));

        // A list whose tail grows but whose mean does not.
        let mut bad = good_points();
        for p in bad.iter_mut().filter(|p| p.plugin == "list") {
            p.mean_ns = 100.0;
        }
        assert_eq!(failing(&checks(&bad)).len(), 1);
    }

    #[test]
    fn statistics_and_histograms() {
        let mut point = Point::default();
        let mut times = vec![100, 300, 100, 300, 5_000_000];
        summarise(&mut point, &mut times, &[0, 1, 2, 300, 300]);
        assert_eq!(point.mean_ns, 1_000_160.0);
        assert_eq!(point.max_ns, 5_000_000.0);
        assert_eq!(point.p999_ns, 5_000_000.0);
        assert_eq!(point.histogram, [0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(point.released, [1, 1, 1, 0, 0, 0, 0, 0, 0, 2]);
        let mut flat = Point::default();
        summarise(&mut flat, &mut [7, 7, 7], &[]);
        assert_eq!((flat.mean_ns, flat.std_ns), (7.0, 0.0));
    }

    #[test]
    fn workloads_fit_their_resolution() {
        for (n, bits) in [(10, 12), (750, 12), (750, 14), (LARGE, LARGE_BITS)] {
            let w = Workload::new(n, bits, SEED).unwrap();
            assert!(w.caps.iter().sum::<u64>() <= BandwidthCap::SCALE);
            for mut s in w.streams() {
                for _ in 0..20 {
                    let (a, load) = s.next_action();
                    assert!(load >= 1);
                    assert!(BandwidthCap::from_parts(s.cap).unwrap().admits(a.resource));
                    assert!(a.resource.limit >= QUANTUM);
                    assert!(a.resource.period <= QUANTUM.saturating_mul(w.longest()));
                }
            }
        }
        assert!(Workload::new(1000, 10, SEED).is_err());
    }

    /// The experiment as `bulwark reproduce` runs it in this build: every check that does not
    /// rest on timing passes (the timing checks are reported, not asserted here).
    #[test]
    fn every_untimed_check_passes_on_the_real_run() {
        let report = run().unwrap();
        let timed = ["list plugin's time", "time stays flat"];
        let failed: Vec<String> = failing(&report.checks)
            .into_iter()
            .filter(|c| !timed.iter().any(|t| c.contains(t)))
            .collect();
        assert_eq!(report.checks.len(), 7);
        assert!(failed.is_empty(), "{:?}", report.checks);
        assert!(report.tables[2]
            .rows
            .iter()
            .all(|r| r.len() == 1 + SWEEPS.len()));
    }

    /// The real code, small: every plugin runs, agrees with the others and holds the memory
    /// it computes. No timing is asserted.
    #[test]
    fn the_plugins_agree_on_a_small_run() {
        let points: Vec<Point> = [Plugin::List, Plugin::Array, Plugin::Matrix, Plugin::Tree]
            .iter()
            .map(|&p| measure_plugin(p, 25, 10, 300, 2))
            .collect();
        for p in &points {
            assert!(p.error.is_none(), "{p:?}");
            assert_eq!(p.queue_bytes, p.queue_bytes_expected);
            assert_eq!(p.histogram.iter().sum::<u64>(), 300);
            assert!(p.mean_ns > 0.0 && p.max_ns >= p.mean_ns);
            assert_eq!(p.decisions, points[0].decisions, "{}", p.plugin);
        }
        let checks = checks(&points);
        assert!(
            checks[0].pass && checks[1].pass && checks[2].pass,
            "{checks:?}"
        );
    }
}
