//! The command line: subcommands, arguments and their help with examples.

use std::path::PathBuf;

use bulwark_core::ipc::GateProtocol;
use bulwark_core::Duration;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};

/// Temporal isolation you can attack, measure and admit: simulate scheduling policies on a
/// deterministic machine, check scenario files, and reproduce published results.
#[derive(Parser, Debug)]
#[command(name = "bulwark", version, propagate_version = true)]
#[command(
    after_help = "Exit status, the same for every command: 0 yes (success),
1 the verdict no (not admitted, a check that failed), 2 bad input or usage (a file that cannot
be read or is invalid, a wrong argument).

Examples:
  bulwark check scenarios/textbook-rm.toml
  bulwark simulate scenarios/textbook-edf.toml --svg edf.svg --trace edf.json
  bulwark analyze scenarios/table-i.toml
  bulwark attack a1 --attackers 1,16,256
  bulwark reproduce"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate scenario files (and component or MC-IPC systems); print every error with its
    /// file, line and column.
    #[command(
        after_help = "Warnings (`warning: file:line:column: ...`) flag valid files that are
almost surely not meant: a core's utilisation above 1, execution longer than the period,
jitter above the minimum inter-arrival time, an offset after the run, a non-preemptive region
longer than the budget, a possible call loop. --deny-warnings makes them errors.

Exit status: 0 when every file is valid (warnings allowed), 2 when one cannot be read or is
invalid (bad input; with --deny-warnings, also when one has a warning), or on a usage error.
check gives no verdict, so never 1.

Examples:
  bulwark check scenarios/*.toml"
    )]
    Check(CheckArgs),
    /// Run a scenario on the simulated machine and summarise every task.
    #[command(
        after_help = "Times carry a unit (ns, us, ms, s): 150us, 2ms, 1.5ms, 3s.

Warnings about the file (as `check` prints them) come first, then warnings about the run's
size: a trace estimated over 100 MB, a job list kept in memory estimated over 100 MB, or
billions of jobs or trace events (estimated from the tasks' periods over the horizon).
--deny-warnings stops on any of them.

--trace and --jobs stream: they write as the run goes, so memory stays flat however long the
run. --json alone keeps every job in memory for its `jobs` array; add --jobs FILE to stream
them instead (the document then has no `jobs` array).

Every file kind runs: a scenario on the machine; a component system (.camkes or TOML with
[[component]]) on the machine (--overheads); an MC-IPC system's phases on the
scenario machine under the protocol the file names (all three when it names none), each phase
--until long (default 10s), as `mcipc-case-study --file` prints them. --trace and --svg work
for every kind: for a component system a server thread's time is drawn on the row of the task
whose job it serves (its protocol steps as kernel time); for an MC-IPC system the phases are
laid end to end (phase k from (k-1) x --until), a server's operation drawn as its client's
time, and the file must name one protocol. --jobs is for scenarios only.

Exit status: 0 when the run completed (missed deadlines are reported, not a verdict), 2 when
the file cannot be read or is invalid (a call loop included; with --deny-warnings, a warning),
an argument is wrong (--until 0ns) or an output file cannot be written. simulate gives no
verdict, so never 1.

Examples:
  bulwark simulate scenarios/kernel-costs.toml
  bulwark simulate scenarios/textbook-rm.toml --until 70ms --svg rm.svg
  bulwark simulate scenarios/textbook-edf.toml --json > edf.json
  bulwark simulate scenarios/textbook-edf.toml --json --jobs jobs.jsonl > edf.json
  bulwark simulate scenarios/kernel-costs.toml --trace trace.json   # open in ui.perfetto.dev
  bulwark simulate scenarios/components/fig7.camkes --overheads xeon --until 1s"
    )]
    Simulate(SimulateArgs),
    /// Admission tests and bounds: reservations (SPR Eqs. 1, 2), CBS, VBS, component systems
    /// and MC-IPC systems.
    #[command(
        long_about = "Admission tests and bounds for a scenario, a component system or an MC-IPC system.

For reservation servers: the admission test (SPR paper, Eq. 1) and overhead bound (Eq. 2) of
every reservation.

Per core, each reservation's response bound R is the least fixed point of
R = I + b + sum of the higher-priority request-bound functions RBF(R), where I is the longest
non-preemptive region (eta) of a lower-priority reservation; a reservation is admitted when
R <= p. Reservations of equal priority count as interfering with each other. The overhead
columns: O_pre (one timer interrupt, one scheduler invocation with its work bound W, one
context switch) and L = ceil(b / eta) * O_pre, the budget lost per period; `unbounded` when
eta = 0 or when W has no bound (naive servers handle every expired timer at once).

For cbs and hard-cbs scenarios: the EDF bandwidth test sum Q/T <= 1, exactly. For vbs: the
caps test and every action's response bound (Eq. 1).

For a component system (.camkes, or TOML with [[component]] tables): the configuration
analyzer (each CPI's priority ceiling, minimum priority and thread pool; call loops flagged)
and, when every task and requested CPI has a body, the schedulability analysis of the CAmkES
paper: C_i by Eqs. 1, 7 and 8, B_i (Eq. 5, 6, or PIP's one section per lower task), exact
response times, and the verdicts of the hyperbolic (Eq. 2), non-unique (Eq. 4) and
Liu-Layland (Eq. 3) bounds. Exit 1 on a call loop or a task RTA does not admit.

For an MC-IPC system (TOML with [[cluster]], [[server]] and [[reservation]] tables): per
reservation and server, the per-invocation bounds of MC-IPC (Theorem 1, (1 + 2 m_k K) L_q),
FIFO-IPC (n L_q) and PRIO-IPC ((h + 1 + b) L_q), and the budgets sized from them at both
criticality levels beside what the file provisions. Exit 1 when a budget is too small.",
        after_help = "Times print with their unit; --json gives integer nanoseconds, null for unbounded.

Exit status: 0 when everything is admitted (every reservation, every task; no call loop; every
MC-IPC budget enough), 1 when something is not (the verdict no), 2 when the file cannot be read
or is invalid (with --deny-warnings, has a warning), when the scenario's policy has no
reservation servers, or on a usage error.

Examples:
  bulwark analyze scenarios/table-i.toml
  bulwark analyze scenarios/deferrable-double-hit.toml
  bulwark analyze scenarios/table-i.toml --json > admission.json
  bulwark analyze scenarios/components/fig7.camkes --overheads xeon
  bulwark analyze scenarios/mcipc/case-study.toml"
    )]
    Analyze(AnalyzeArgs),
    /// Run one of the SPR paper's attacks (A1, A2, A3) and print the results beside the paper's.
    #[command(
        long_about = "Run one of the SPR paper's attacks and print its results beside the paper's.

  a1  Thundering Herd (Fig. 12): N low-priority deferrable servers replenished at a
      high-priority task's release; the victim's wake-up latency under the naive deferrable
      server and under SPR (deferrable rule), for each N of --attackers.
  a2  coordinated timer interference (Fig. 10): N low-priority sporadic servers plant
      replenishment timers inside a victim's job; its interference under the naive sporadic
      server and under SPR, with replenishment queues of S = 16 and S = 32, for each N.
  a3  preemption storm (Table III): a 10 us timer flood and a cache attack against a
      low-priority reservation under SPR; its useful work per period with non-preemptive
      regions of 0, 1 ms and 2 ms. It has no attackers to count and no plot.

Every run uses the calibrated platform costs of `bulwark reproduce`. With --host, each attack
runs for real on this machine's core 1 under Bulwark's hosted runtime instead, and prints the
host experiment's table, the simulation beside (a3: real matrix multiplies against a real
timer flood and a real cache attack).",
        after_help = "Times print with their unit; --json gives integer nanoseconds.

Exit status: 0 when every check of the experiment holds on the sweep, 1 when one fails, 2 on
an invalid argument or a file that cannot be written.

Examples:
  bulwark attack a1
  bulwark attack a1 --attackers 1,16,256 --svg herd.svg
  bulwark attack a2 --attackers 4,64 --json > a2.json
  bulwark attack a2 --host
  bulwark attack a3
  bulwark attack a3 --host"
    )]
    Attack(AttackArgs),
    /// Run the built-in experiments and write a report (Markdown, HTML, SVG).
    #[command(
        after_help = "Exit status: 0 when every check holds, 1 when one fails, 2 for an
unknown experiment, a usage error or a report that cannot be written. A host experiment's
timing claim that the platform kept from being judged (it disturbed every attempt: steal
time, or a probe of the core losing time) prints as NOT JUDGED and is not a failure.

Examples:
  bulwark reproduce
  bulwark reproduce textbook-fp-edf --out /tmp/report
  bulwark reproduce --list"
    )]
    Reproduce(ReproduceArgs),
    /// The MC-IPC case study: T1's delay at a shared key server through eight phases of
    /// failures, under MC-IPC, FIFO-IPC and PRIO-IPC, against each protocol's bound.
    #[command(
        name = "mcipc-case-study",
        long_about = "The MC-IPC paper's case study (section VI) on the scenario machine.

Four cores (one cluster each), cycle H = 100 ms, fourteen reservations (four high-criticality
table-driven partitions, ten low-criticality sporadic ones) and a key server with L = 2 ms.
Eight phases, each run on its own: normal; a low-criticality task floods; 16 extra
low-criticality reservations per core; the highest-priority task floods; two tasks flood;
15 extra tasks in R4; those and a flood; 20 best-effort tasks per core. For each protocol and
phase it prints T1's longest delay (invoke to reply) against the predicted bound: 18 ms for
MC-IPC (Theorem 1), 28 ms for FIFO-IPC (n L), 8 ms for PRIO-IPC.",
        after_help = "Exit status: for the built-in study, 0 when every phase behaves as the paper
reports (MC-IPC never over its bound; FIFO-IPC over it in phases 3 and 8, PRIO-IPC in 5 to 7),
1 otherwise; for --file, 0 when the runs complete (no verdict, so never 1). 2 when the file
cannot be read, is invalid or is not an MC-IPC system, or for a wrong argument.

Examples:
  bulwark mcipc-case-study
  bulwark mcipc-case-study --protocol prio-ipc --phase 6
  bulwark mcipc-case-study --phase-length 60s --svg fig2
  bulwark mcipc-case-study --json > delays.json
  bulwark mcipc-case-study --file my-system.toml"
    )]
    McipcCaseStudy(CaseStudyArgs),
    /// Schedulability sweep: draw random task sets over a grid of task counts and
    /// utilisations, and compare the acceptance ratio of schedulability tests.
    #[command(
        args_conflicts_with_subcommands = true,
        after_help = "The experiment file names the seed, sets per point, the generator
(uunifast or uunisort; randfixedsum also draws utilisations above 1.0, up to the task count),
the periods (log-uniform, uniform or harmonic between min and max), the task counts, the
utilisation axis and the tests: fp-rta-rm, fp-rta-dm, fp-audsley, edf-qpa, edf-utilisation,
liu-layland, hyperbolic, and spr-eq1 (each task in an SPR sporadic-server reservation of
budget C and period T at rate-monotonic priorities, admitted by the SPR paper's Eq. 1; with a
[cost] table written as in scenario files and non-preemptive = \"ETA\", the budgets also pay
Eq. 2's overheads), vbs-eq2 (each task a VBS process on the least resource whose Eq. (1)
bound over vbs-periods-per-job = k periods, default 4, meets its deadline, admitted by Eq. (2))
and mcipc-budget (each task an MC-IPC client whose budget C + N (1 + 2K) L, Theorem 1, pays
for the server of the required [mcipc-server] table: operation-length L, invocations N,
clusters K; admitted by EDF's exact test), and the CAmkES component paper's component-eq2,
component-eq3, component-eq4 and component-rta (each set on the Fig. 7 topology with the
required [components] table: configuration = 1..4 from Table 3, split = \"equal\" or
\"short-sections\"; Eqs. 2, 3, 4 and exact RTA, zero protocol overheads). See
scenarios/sweeps/fp-vs-edf.toml, scenarios/sweeps/papers.toml and
scenarios/sweeps/components.toml.

Output: the CSV (one row per point: tasks, utilisation, sets, then each test's acceptance
ratio) on stdout, or the JSON with --json; --out DIR writes results.csv, results.json and
acceptance.svg there. The results depend only on the file: not on the thread count, nor on
how the sweep is split. --shard i/N runs one slice and writes its counts as JSON
(DIR/shard-i-of-N.json with --out, else stdout); `bulwark sweep merge` sums all N slices
into the results a single run writes, byte for byte.

With simulate = true in the file, every set is also simulated (one core, synchronous release,
each job its WCET) under the scheduler each test speaks for (RM, DM or Audsley's order, EDF;
SPR for spr-eq1, with the file's [cost], else zero kernel costs), up to the hyperperiod or 100
longest periods, and the CSV and JSON gain a TEST:admitted_but_missed count per test: the sets
it admitted that missed a deadline. vbs-eq2, mcipc-budget and the component tests cannot be
simulated (the simulation runs neither VBS, the MC-IPC server nor the components): a file
listing them with simulate = true is refused.

Exit status: 0 when the sweep ran (and, simulated, no test admitted a set that missed a
deadline), 1 when a simulated sweep, a shard of one or their merge found a test that admitted
a set that missed a deadline (the test is unsound there; each such test is named on stderr),
2 when a file cannot be read or is invalid, for shards that do not fit together or are
missing, or for a wrong argument.

Examples:
  bulwark sweep scenarios/sweeps/fp-vs-edf.toml --out sweep
  bulwark sweep scenarios/sweeps/fp-vs-edf.toml --shard 0/2 --out parts
  bulwark sweep scenarios/sweeps/fp-vs-edf.toml --shard 1/2 --out parts
  bulwark sweep merge parts/shard-0-of-2.json parts/shard-1-of-2.json --out sweep
  bulwark sweep slurm scenarios/sweeps/fp-vs-edf.toml --shards 64 --out sweep-slurm
  bulwark sweep scenarios/sweeps/million.toml --out million"
    )]
    Sweep(SweepArgs),
    /// Run a scenario for real on this machine: Bulwark's policy schedules real threads on
    /// one managed core (Linux, needs SCHED_FIFO).
    #[command(
        long_about = "Run a scenario for real on this machine.

The scenario's policy schedules real threads on one managed core (--core, default 1): a
dispatcher thread at the top SCHED_FIFO priority drives the policy, owns the core's one timer
and hands the core to the policy's choice; `run` steps spin on the thread's CPU clock,
`compute` multiplies matrices, `flush-cache` writes a buffer twice the last-level cache, and
every sleep goes through the policy. The dispatcher's own work is measured and shown as kernel
time. A watchdog on another core demotes every thread if the dispatcher stops answering.

Needs CAP_SYS_NICE (root) or an RLIMIT_RTPRIO of 99, and both cores in the affinity. Every
task must be on one core of the scenario; under vbs each `action` step is a switch request to
the policy, as in the simulator. `allocate` steps create objects for real in the scenario's
object store (the simulator's), on the task's own time; a `terminate` step makes the dispatcher
reclaim the target's objects (its group's arena, if it has one) with the core held, measure the
reclamation on the monotonic clock (the core's reclaim time, inside its kernel time) and kill the
target, which never runs again. Runs are limited to 10 s; Linux's real-time throttling
(sched_rt_runtime_us) applies, and timers that woke more than 1 ms late are reported.

A component system (.camkes or component TOML) runs with every task's control thread and CPI
pool thread a real thread spinning its work and the component kernel as the dispatcher
(--until defaults to ten longest periods; --seed is refused). An MC-IPC system of one cluster
of one core runs each phase (--until each, 1 s by default) with every client and server a real
thread and the scenario machine as the dispatcher, under the file's protocol; --trace draws
its phases end to end, as `simulate --trace` does.",
        after_help = "Times carry a unit (ns, us, ms, s). --json gives the same document as
`simulate --json`, plus a `host` object (and `simulated` with --compare); for an MC-IPC
system, {seed, core, runs: [{protocol, phase, name, bound_ns, host, simulated, entries,
late_timers}]} with T1's jobs, completed jobs, delays and invocations per side.

Exit status: 0 when the run completed (deadline misses are results, as in `simulate`), 2 when
the system file cannot be read or is invalid, on missing privileges, a system the host
cannot run, a run that failed or was interrupted, or a file that cannot be written.

Examples:
  bulwark run scenarios/textbook-rm.toml --until 1s
  bulwark run scenarios/textbook-rm.toml --until 1s --compare
  bulwark run scenarios/attack-a1.toml --until 500ms --json > host.json
  bulwark run scenarios/textbook-edf.toml --trace host-trace.json
  bulwark run scenarios/components/fig7-spr.camkes --until 400ms --compare
  bulwark run scenarios/mcipc/one-core.toml --until 2s --compare"
    )]
    Run(RunArgs),
}

#[derive(Args, Debug)]
pub struct CaseStudyArgs {
    /// Run only this protocol (default: all three).
    #[arg(long, value_parser = gate_protocol())]
    pub protocol: Option<GateProtocol>,
    /// Run only this phase, from 1 (default: all; the built-in study has 8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..))]
    pub phase: Option<u8>,
    /// Run this MC-IPC system with tasks and phases instead of the built-in case study
    /// (`scenarios/mcipc/case-study.toml`); T1 is its first task.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Simulated time per phase, more than 0 (default 10s: 100 jobs of T1; the paper ran
    /// 60s).
    #[arg(long, value_parser = parse_positive_time, default_value = "10s")]
    pub phase_length: Duration,
    /// Write one scatter plot per protocol (log scale, like the paper's Fig. 2) into this
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// Print every delay as JSON (integer nanoseconds) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Seed for every random draw (default: the case study's, printed with the results).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Scenario files (TOML).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Treat warnings as errors (exit 2).
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The scenario file (TOML), or a component system (`.camkes`, or TOML with
    /// `[[component]]` tables) whose tasks and CPIs have bodies.
    pub file: PathBuf,
    /// Simulated time to run, more than 0 (default: the scenario's `duration`).
    #[arg(long, value_parser = parse_positive_time)]
    pub until: Option<Duration>,
    /// Seed for every random draw (default: the scenario's `seed`; for an MC-IPC file, the
    /// case study's). Refused for a component system, which draws nothing.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write a Chrome trace (JSON) that opens in ui.perfetto.dev and chrome://tracing,
    /// streamed to the file as the run goes (memory stays flat), with a budget counter per
    /// reservation.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write an SVG Gantt chart of the run (kept in memory: for short runs).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Print metrics and every job as JSON (integer nanoseconds) instead of the table. The
    /// `jobs` array is kept in memory until the end; with --jobs FILE the jobs stream to the
    /// file instead and the document has no `jobs` array.
    #[arg(long)]
    pub json: bool,
    /// Stream every job to this file as JSON Lines while the run goes, one object per job
    /// (the fields of --json's `jobs` entries, integer nanoseconds); memory stays flat.
    #[arg(long, value_name = "FILE")]
    pub jobs: Option<PathBuf>,
    /// For a component system: the protocol overheads, in place of the file's `[cost]`
    /// (default: the file's, free without one).
    #[arg(long, value_enum)]
    pub overheads: Option<ProtocolOverheads>,
    /// Treat warnings as errors (exit 2) instead of running.
    #[arg(long)]
    pub deny_warnings: bool,
}

/// Protocol overheads for component systems.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtocolOverheads {
    /// Free protocol steps.
    None,
    /// The maxima of the CAmkES paper's Table 2 on an Intel Xeon Gold 6130 (2.1 GHz).
    Xeon,
}

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    /// The scenario file (TOML), or a component system (`.camkes`, or TOML with
    /// `[[component]]` tables).
    pub file: PathBuf,
    /// Print the analysis as JSON (integer nanoseconds, null for unbounded) instead of tables.
    #[arg(long)]
    pub json: bool,
    /// For a component system: print the CAmkES configuration lines the analyzer computed
    /// (priority ceilings, thread pools), for pasting back into the .camkes file (not with
    /// --json, which prints the analysis instead).
    #[arg(long, conflicts_with = "json")]
    pub camkes: bool,
    /// For a component system with bodies: the protocol overheads the schedulability
    /// analysis adds (Eqs. 1, 7 and 8), in place of the file's `[cost]` (default: the
    /// file's, free without one).
    #[arg(long, value_enum)]
    pub overheads: Option<ProtocolOverheads>,
    /// Treat warnings as errors (exit 2) instead of analysing.
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Args, Debug)]
pub struct AttackArgs {
    /// Which attack.
    #[arg(value_enum)]
    pub attack: Attack,
    /// Attacker counts to sweep, comma-separated, each 1 to 65536 (a1 and a2; default
    /// 1,4,16,64,256,1024, the paper's).
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        value_parser = parse_attackers
    )]
    pub attackers: Option<Vec<u32>>,
    /// Print the sweep's points (a1, a2) or the table's rows (a3) as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write the sweep's plot as SVG (a1 and a2; a3 has none).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Run the attack on this machine's core 1 with Bulwark's hosted runtime instead of
    /// simulating it: the host experiment of `bulwark reproduce` (host-a1-thundering-herd,
    /// host-a2-timer-interference, host-a3-preemption-storm) with its own attacker counts.
    /// Needs real-time privileges (root or CAP_SYS_NICE) and takes about a minute.
    #[arg(long)]
    pub host: bool,
}

/// The attacks of the SPR paper.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attack {
    /// Thundering Herd: simultaneous replenishments delay a victim's wake-up (Fig. 12).
    A1,
    /// Coordinated timer interference: replenishment timers inside a victim's job (Fig. 10).
    A2,
    /// Preemption storm: a timer flood and a cache attack against useful progress (Table III).
    A3,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The system file: a scenario, a component system or an MC-IPC system of one core.
    pub file: PathBuf,
    /// Time to run (default: the scenario's `duration`, ten longest periods of a component
    /// system, 1 s per phase of an MC-IPC system; at most 10 s).
    #[arg(long, value_parser = parse_positive_time)]
    pub until: Option<Duration>,
    /// Seed for every random draw (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The core the runtime manages.
    #[arg(long, default_value_t = 1)]
    pub core: usize,
    /// The core of the watchdog (must differ from --core).
    #[arg(long, default_value_t = 0)]
    pub watchdog_core: usize,
    /// Write a Chrome trace (JSON) of the run, kernel slices included.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Print metrics and every job as JSON (integer nanoseconds) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also simulate the scenario and show host and simulator side by side per task.
    #[arg(long)]
    pub compare: bool,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Run only this experiment (see --list).
    pub name: Option<String>,
    /// Where to write the report.
    #[arg(long, default_value = "report", value_name = "DIR")]
    pub out: PathBuf,
    /// List the experiments and exit (with no experiment or --out: they would be ignored).
    #[arg(long, conflicts_with_all = ["name", "out"])]
    pub list: bool,
}

/// The most attackers one sweep point may have: a run's time grows with N.
pub const MAX_ATTACKERS: u32 = 65_536;

fn parse_attackers(text: &str) -> Result<u32, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("an attacker count is missing (write counts like 1,4,16)".into());
    }
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_ATTACKERS).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} attackers is outside 1..={MAX_ATTACKERS}")),
        Err(_) => Err(format!(
            "`{text}` is not an attacker count (write whole numbers like 1,4,16)"
        )),
    }
}

/// A run's length: a time with its unit, more than zero, as a file's `duration` must be.
/// `--protocol`'s values: the names a system file uses for the gate protocols.
fn gate_protocol() -> impl TypedValueParser<Value = GateProtocol> {
    let described = [
        (GateProtocol::McIpc, "MC-IPC (Fig. 1)"),
        (GateProtocol::FifoIpc, "One FIFO queue"),
        (GateProtocol::PrioIpc, "One priority queue"),
    ]
    .map(|(protocol, help)| PossibleValue::new(protocol.name()).help(help));
    PossibleValuesParser::new(described).try_map(|name| {
        GateProtocol::from_name(&name)
            .ok_or_else(|| format!("allowed: {}", GateProtocol::NAMES.join(", ")))
    })
}

fn parse_positive_time(text: &str) -> Result<Duration, String> {
    let time = bulwark_spec::parse_duration(text)?;
    if time == Duration::ZERO {
        return Err(format!(
            "{text} is zero: a run must last longer than 0 (allowed: a positive time with its \
             unit, like 10ms)"
        ));
    }
    Ok(time)
}

/// `bulwark sweep`: run an experiment, or `merge` shard counts.
#[derive(Args, Debug)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// The experiment file (TOML).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Write results.csv, results.json and acceptance.svg (or a shard's counts) into this
    /// directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run only slice i of N (0 <= i < N) and write its counts as JSON for `merge`.
    #[arg(long, value_name = "i/N")]
    pub shard: Option<String>,
    /// Print the results as JSON instead of CSV.
    #[arg(long)]
    pub json: bool,
}

/// What `bulwark sweep` can do besides running a file.
#[derive(Subcommand, Debug)]
pub enum SweepCommand {
    /// Sum the counts of every shard of one sweep into its results.
    Merge(SweepMergeArgs),
    /// Write Slurm batch scripts that run the sweep as an array job of N shards, then merge.
    #[command(after_help = "Writes into DIR:
  sweep.sbatch  an array job (#SBATCH --array=0-(N-1)); array task i runs
                bulwark sweep FILE --shard i/N --out DIR/shards
  merge.sbatch  bulwark sweep merge DIR/shards/shard-{0..N-1}-of-N.json --out DIR
  submit.sh     submits sweep.sbatch, then merge.sbatch once every array task succeeded
                (sbatch --dependency=afterok)
and prints `bash DIR/submit.sh`. Paths in the scripts are absolute; the bulwark binary is
this one unless --bulwark names another (the path on the cluster's nodes). The scripts also
run without Slurm: SLURM_ARRAY_TASK_ID=i bash DIR/sweep.sbatch runs shard i here.

Exit status: 0 when the scripts were written, 2 when FILE cannot be read or is invalid, or
for a wrong argument.

Example:
  bulwark sweep slurm scenarios/sweeps/fp-vs-edf.toml --shards 64 --out sweep-slurm")]
    Slurm(SweepSlurmArgs),
}

/// `bulwark sweep slurm`.
#[derive(Args, Debug)]
pub struct SweepSlurmArgs {
    /// The experiment file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// How many shards (array tasks), 1 to 100000.
    #[arg(long, value_name = "N")]
    pub shards: u64,
    /// Where the scripts, the shards' counts and the merged results go.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The bulwark command the jobs run: an absolute path or a bare name on the nodes' PATH
    /// (default: the absolute path of this binary).
    #[arg(long, value_name = "PATH")]
    pub bulwark: Option<String>,
}

/// `bulwark sweep merge`.
#[derive(Args, Debug)]
pub struct SweepMergeArgs {
    /// The shard files written by `bulwark sweep --shard i/N`, all N of them.
    #[arg(value_name = "FILES", required = true)]
    pub files: Vec<PathBuf>,
    /// Write results.csv, results.json and acceptance.svg into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the results as JSON instead of CSV.
    #[arg(long)]
    pub json: bool,
}
