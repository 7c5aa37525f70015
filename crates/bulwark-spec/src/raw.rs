//! The file as written: serde types that keep every value's byte span and check nothing else.
//!
//! Unknown keys are refused here (`deny_unknown_fields` lists the allowed ones), and required
//! keys must be present; every other rule is `validate.rs`'s job. So values that people get
//! wrong in many ways (times, counts, priorities) are read loosely, as text or as a plain
//! integer, and judged later, where all errors are collected instead of only the first.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

/// A scenario file.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a scenario: key = value lines and [[task]] tables"
)]
pub(crate) struct RawScenario {
    pub(crate) name: Spanned<String>,
    pub(crate) description: Option<Spanned<String>>,
    pub(crate) seed: Option<Spanned<i64>>,
    pub(crate) cores: Option<Spanned<i64>>,
    pub(crate) policy: Spanned<String>,
    pub(crate) duration: Spanned<RawTime>,
    pub(crate) cost: Option<Spanned<RawCost>>,
    /// `[[task]]` tables; missing means none (an error reported by validation).
    #[serde(default)]
    pub(crate) task: Vec<Spanned<RawTask>>,
    /// `[[group]]` tables: reclamation groups.
    #[serde(default)]
    pub(crate) group: Vec<Spanned<RawGroup>>,
    /// `[[server]]` tables: passive servers that `invoke` steps call.
    #[serde(default)]
    pub(crate) server: Vec<Spanned<RawServer>>,
    /// `[vbs]`: the variable-bandwidth servers' scheduler.
    pub(crate) vbs: Option<Spanned<RawVbs>>,
    /// `[[core]]` tables: cores that run another policy than the scenario's.
    #[serde(default)]
    pub(crate) core: Vec<Spanned<RawCore>>,
    /// `[[cluster]]` tables: cores scheduled together by the clustered reservation scheduler.
    #[serde(default)]
    pub(crate) cluster: Vec<Spanned<RawCluster>>,
    /// `[[component]]` tables: a component system beside the tasks (the component file's
    /// form, `component_toml.rs`).
    #[serde(default)]
    pub(crate) component: Vec<Spanned<crate::component_toml::RawComponent>>,
    /// `[[connection]]` tables of that component system.
    #[serde(default)]
    pub(crate) connection: Vec<Spanned<crate::component_toml::RawConnection>>,
    /// The core the component system runs on (default 0).
    pub(crate) component_core: Option<Spanned<i64>>,
}

/// One `[[cluster]]` table: cores whose tasks' reservations are scheduled globally.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[cluster]] table, like { name = \"global\", cores = [1, 2], order = \"edf\" }"
)]
pub(crate) struct RawCluster {
    pub(crate) name: Spanned<String>,
    pub(crate) cores: Spanned<RawClusterCores>,
    pub(crate) order: Spanned<String>,
    /// `H`, the cycle of its time partitions' slots (only with a partition).
    pub(crate) cycle: Option<Spanned<RawTime>>,
    /// Idle cores run members that have budget but are not selected (section III).
    pub(crate) slack_reclamation: Option<Spanned<bool>>,
}

/// One `[[core]]` table: the policy of one core, where it differs from the scenario's.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[core]] table, like { id = 1, policy = \"edf\" }"
)]
pub(crate) struct RawCore {
    pub(crate) id: Spanned<i64>,
    pub(crate) policy: Spanned<String>,
}

/// `[vbs]`: release strategy, queue plugin and time representation.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [vbs] table, like { strategy = \"early\", plugin = \"tree\" }"
)]
pub(crate) struct RawVbs {
    pub(crate) strategy: Option<Spanned<String>>,
    pub(crate) plugin: Option<Spanned<String>>,
    pub(crate) quantum: Option<Spanned<RawTime>>,
    pub(crate) resolution_bits: Option<Spanned<i64>>,
}

/// One `[[group]]` table: a reclamation group and its quota.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[group]] table, like { name = \"functions\", quota = \"500us\" }"
)]
pub(crate) struct RawGroup {
    pub(crate) name: Spanned<String>,
    pub(crate) quota: Spanned<RawTime>,
}

/// One `[[server]]` table: a passive server, its gate and its operation.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[server]] table, like { name = \"log\", gate = \"fifo-ipc\", operation = \"2ms\" }"
)]
pub(crate) struct RawServer {
    pub(crate) name: Spanned<String>,
    pub(crate) gate: Spanned<String>,
    pub(crate) operation: Option<Spanned<RawExecution>>,
    pub(crate) body: Option<Spanned<Vec<Spanned<RawStep>>>>,
    pub(crate) bandwidth_inheritance: Option<Spanned<bool>>,
    pub(crate) priority: Option<Spanned<i64>>,
    /// What becomes of an mc-ipc gate's pruned requests: `reissue` or `background`.
    pub(crate) pruned: Option<Spanned<String>>,
}

/// `[cost]`: the clock and the cycles each kind of kernel work takes.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [cost] table, like { clock = \"1GHz\", context-switch = 200 }"
)]
pub(crate) struct RawCost {
    pub(crate) clock: Option<Spanned<RawFrequency>>,
    pub(crate) timer_interrupt: Option<Spanned<i64>>,
    pub(crate) scheduler: Option<Spanned<i64>>,
    pub(crate) per_work_unit: Option<Spanned<i64>>,
    pub(crate) context_switch: Option<Spanned<i64>>,
    pub(crate) cache_refill: Option<Spanned<i64>>,
    pub(crate) cache_flush: Option<Spanned<i64>>,
    pub(crate) reclaim_per_unit: Option<Spanned<i64>>,
    /// `[cost.ipc]`: component IPC, Table 2's rows (component systems only).
    pub(crate) ipc: Option<Spanned<RawIpcCosts>>,
}

/// `[cost.ipc]`: the cycles of each component IPC step, by the rows of the component paper's
/// Table 2.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [cost.ipc] table, like { propagated = { call = 6830, reply = 3960 } }"
)]
pub(crate) struct RawIpcCosts {
    pub(crate) propagated: Option<Spanned<RawCallReply>>,
    pub(crate) fixed: Option<Spanned<RawCallReply>>,
    pub(crate) inherited_unlocked: Option<Spanned<RawCallReply>>,
    pub(crate) inherited_locked: Option<Spanned<RawCallReply>>,
    pub(crate) pip_to_pip: Option<Spanned<RawCallReply>>,
    pub(crate) pip_to_propagated: Option<Spanned<RawCallReply>>,
    pub(crate) nest_to_inherited: Option<Spanned<i64>>,
    pub(crate) nest_to_propagated: Option<Spanned<i64>>,
}

/// One row of Table 2: the cycles of a call and of its reply.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a call and its reply in cycles, like { call = 6830, reply = 3960 }"
)]
pub(crate) struct RawCallReply {
    pub(crate) call: Spanned<i64>,
    pub(crate) reply: Spanned<i64>,
}

/// One `[[task]]` table. Its kind (periodic, sporadic, script) is whichever of `period`,
/// `min-interarrival` and `script` is present; validation insists on exactly one.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a [[task]] table"
)]
pub(crate) struct RawTask {
    pub(crate) name: Spanned<String>,
    pub(crate) core: Option<Spanned<i64>>,
    /// The `[[cluster]]` the task runs in, instead of a `core`.
    pub(crate) cluster: Option<Spanned<String>>,
    pub(crate) priority: Option<Spanned<i64>>,
    pub(crate) deadline: Option<Spanned<RawTime>>,
    pub(crate) offset: Option<Spanned<RawTime>>,
    pub(crate) period: Option<Spanned<RawTime>>,
    pub(crate) min_interarrival: Option<Spanned<RawTime>>,
    pub(crate) jitter: Option<Spanned<RawTime>>,
    pub(crate) script: Option<Spanned<Vec<Spanned<RawStep>>>>,
    pub(crate) execution: Option<Spanned<RawExecution>>,
    pub(crate) reservation: Option<Spanned<RawReservation>>,
    pub(crate) group: Option<Spanned<String>>,
    pub(crate) cap: Option<Spanned<String>>,
}

/// `reservation = { budget = "2ms", period = "10ms" }`, optionally with `replenishments = 16`
/// (sporadic-server rules), `non-preemptive = "1ms"` (SPR) and, in a cluster,
/// `replenishment = "cbs"` or `criticality = "high", low-budget = "1ms"`; or, in a cluster, a
/// time partition `{ core = 2, slots = [["0ms", "5ms"]] }`. Every key is optional here so
/// that validation can say which kind is meant and what is missing or extra.
///
/// A cluster member may instead name its reservation: `reservation = "best-effort"`, or the
/// `name` an earlier member of its cluster gave its reservation table, to share it. A
/// best-effort reservation that later members share is a table, `{ name = "bg", best-effort =
/// true }`.
#[derive(Debug, Default, Deserialize)]
#[serde(
    remote = "Self",
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a reservation, like { budget = \"2ms\", period = \"10ms\" }"
)]
pub(crate) struct RawReservation {
    /// The name written instead of a table (every other key then absent).
    #[serde(skip)]
    pub(crate) named: Option<String>,
    pub(crate) budget: Option<Spanned<RawTime>>,
    pub(crate) period: Option<Spanned<RawTime>>,
    pub(crate) replenishments: Option<Spanned<i64>>,
    pub(crate) non_preemptive: Option<Spanned<RawTime>>,
    /// How a cluster task's reservation is replenished: `sporadic`, `cbs` or `spr`.
    pub(crate) replenishment: Option<Spanned<String>>,
    /// A cluster task's criticality, `low` or `high` (Vestal's model).
    pub(crate) criticality: Option<Spanned<String>>,
    /// `e^L`, a high-criticality cluster task's low budget.
    pub(crate) low_budget: Option<Spanned<RawTime>>,
    /// A time partition's core, one of its cluster's.
    pub(crate) core: Option<Spanned<i64>>,
    /// A time partition's slots `[start, end)` within its cluster's cycle.
    pub(crate) slots: Option<Spanned<RawSlots>>,
    /// A cluster reservation's name, by which later members of its cluster share it.
    pub(crate) name: Option<Spanned<String>>,
    /// `true`: the cluster's lowest level, with no budget (a table form of `"best-effort"`
    /// that can carry a `name`).
    pub(crate) best_effort: Option<Spanned<bool>>,
}

impl RawReservation {
    /// Best-effort, written either way: `"best-effort"` or `{ best-effort = true }`.
    pub(crate) fn is_best_effort(&self) -> bool {
        self.named.as_deref() == Some("best-effort")
            || self.best_effort.as_ref().is_some_and(|on| *on.get_ref())
    }

    /// A time partition as written (a core or slots, not best-effort), whether or not its
    /// values are valid.
    pub(crate) fn is_time_partition(&self) -> bool {
        // A best-effort table with core or slots is refused as such.
        !self.is_best_effort() && (self.core.is_some() || self.slots.is_some())
    }
}

struct ReservationVisitor;

impl<'de> Visitor<'de> for ReservationVisitor {
    type Value = RawReservation;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a reservation, like { budget = \"2ms\", period = \"10ms\" }, \"best-effort\" or \
             the name of a shared one",
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawReservation, E> {
        Ok(RawReservation {
            named: Some(v.to_owned()),
            ..RawReservation::default()
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawReservation, A::Error> {
        // The table's derived reading (`remote = "Self"`), with its own errors.
        RawReservation::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

impl<'de> Deserialize<'de> for RawReservation {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ReservationVisitor)
    }
}

/// `slots = [["0ms", "5ms"], ...]`: each slot as written, its times judged later.
pub(crate) type RawSlots = Vec<Spanned<Vec<Spanned<RawTime>>>>;

/// One script step. Every key is optional here so that validation can say which step keys
/// clash, or which one is missing, instead of serde's generic "no variant matched".
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    rename_all = "kebab-case",
    expecting = "a script step, like { run = \"1ms\" }"
)]
pub(crate) struct RawStep {
    pub(crate) run: Option<Spanned<RawRun>>,
    pub(crate) compute: Option<Spanned<i64>>,
    pub(crate) each: Option<Spanned<RawTime>>,
    pub(crate) sleep_for: Option<Spanned<RawTime>>,
    pub(crate) sleep_until: Option<Spanned<RawTime>>,
    pub(crate) sleep_until_aligned: Option<Spanned<RawTime>>,
    pub(crate) sleep_until_next_release: Option<Spanned<RawTime>>,
    pub(crate) flush_cache: Option<Spanned<bool>>,
    pub(crate) allocate: Option<Spanned<i64>>,
    pub(crate) object: Option<Spanned<String>>,
    pub(crate) terminate: Option<Spanned<String>>,
    pub(crate) step: Option<Spanned<RawTime>>,
    pub(crate) invoke: Option<Spanned<String>>,
    pub(crate) operation: Option<Spanned<RawExecution>>,
    pub(crate) action: Option<Spanned<RawTime>>,
    pub(crate) limit: Option<Spanned<RawTime>>,
    pub(crate) period: Option<Spanned<RawTime>>,
    #[serde(rename = "loop")]
    pub(crate) repeat: Option<Spanned<RawLoopCount>>,
    pub(crate) body: Option<Spanned<Vec<Spanned<RawStep>>>>,
}

/// A number as written: a string with its unit, or a bare number that lacks one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawQuantity {
    /// `"2ms"`, `"1GHz"`: read by `units.rs`.
    Text(String),
    /// `2`: an error, but a helpful one ("write a unit").
    Integer(i64),
    /// `2.5`: likewise.
    Float(f64),
}

/// A time: `"2ms"`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawTime(pub(crate) RawQuantity);

/// A frequency: `"1GHz"`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawFrequency(pub(crate) RawQuantity);

/// `loop = 3` or `loop = "forever"`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawLoopCount {
    Count(i64),
    Word(String),
}

/// A `[[cluster]]`'s `cores = [1, 2]`, its cores' ids; or `cores = 2`, a count as an MC-IPC
/// system's cluster writes it: an error, but a helpful one ("list the ids").
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawClusterCores {
    Ids(Vec<Spanned<i64>>),
    Count(i64),
}

/// `execution = "2ms"` or `execution = { uniform = ["1ms", "2ms"] }`.
#[derive(Debug)]
pub(crate) enum RawExecution {
    Fixed(RawTime),
    Uniform(Spanned<Vec<Spanned<RawTime>>>),
}

/// `run = "2ms"`, one time, or `run = ["1ms", "1500us"]`, a `[min, max]` to draw from.
#[derive(Debug)]
pub(crate) enum RawRun {
    Fixed(RawTime),
    Range(Vec<Spanned<RawTime>>),
}

/// Reads a string or a bare number into a [`RawQuantity`]; anything else is a type error
/// that says what was expected.
struct QuantityVisitor {
    expecting: &'static str,
}

impl<'de> Visitor<'de> for QuantityVisitor {
    type Value = RawQuantity;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawQuantity, E> {
        Ok(RawQuantity::Text(v.to_owned()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawQuantity, E> {
        Ok(RawQuantity::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawQuantity, E> {
        Ok(RawQuantity::Integer(i64::try_from(v).unwrap_or(i64::MAX)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawQuantity, E> {
        Ok(RawQuantity::Float(v))
    }
}

const TIME_EXPECTED: &str = "a time with a unit, like \"2ms\"";
const FREQUENCY_EXPECTED: &str = "a frequency with a unit, like \"1GHz\"";

impl<'de> Deserialize<'de> for RawTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: TIME_EXPECTED,
        })
        .map(RawTime)
    }
}

impl<'de> Deserialize<'de> for RawFrequency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(QuantityVisitor {
            expecting: FREQUENCY_EXPECTED,
        })
        .map(RawFrequency)
    }
}

struct LoopCountVisitor;

impl<'de> Visitor<'de> for LoopCountVisitor {
    type Value = RawLoopCount;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a count like 3, or \"forever\"")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawLoopCount, E> {
        Ok(RawLoopCount::Count(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawLoopCount, E> {
        Ok(RawLoopCount::Count(i64::try_from(v).unwrap_or(i64::MAX)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawLoopCount, E> {
        Ok(RawLoopCount::Word(v.to_owned()))
    }
}

impl<'de> Deserialize<'de> for RawLoopCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LoopCountVisitor)
    }
}

struct ClusterCoresVisitor;

impl<'de> Visitor<'de> for ClusterCoresVisitor {
    type Value = RawClusterCores;

    /// As serde's own for a `Vec`, so that other wrong types read as they did before counts
    /// were read here.
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawClusterCores, E> {
        Ok(RawClusterCores::Count(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawClusterCores, E> {
        Ok(RawClusterCores::Count(i64::try_from(v).unwrap_or(i64::MAX)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawClusterCores, A::Error> {
        let mut ids = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(id) = seq.next_element::<Spanned<i64>>()? {
            ids.push(id);
        }
        Ok(RawClusterCores::Ids(ids))
    }
}

impl<'de> Deserialize<'de> for RawClusterCores {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ClusterCoresVisitor)
    }
}

struct ExecutionVisitor;

impl<'de> Visitor<'de> for ExecutionVisitor {
    type Value = RawExecution;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a time like \"2ms\", or { uniform = [\"1ms\", \"2ms\"] }")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawExecution, E> {
        Ok(RawExecution::Fixed(RawTime(RawQuantity::Text(
            v.to_owned(),
        ))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawExecution, E> {
        Ok(RawExecution::Fixed(RawTime(RawQuantity::Integer(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawExecution, E> {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        Ok(RawExecution::Fixed(RawTime(RawQuantity::Integer(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawExecution, E> {
        Ok(RawExecution::Fixed(RawTime(RawQuantity::Float(v))))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawExecution, A::Error> {
        const FIELDS: &[&str] = &["uniform"];
        let mut uniform = None;
        while let Some(key) = map.next_key::<String>()? {
            if key != "uniform" {
                return Err(de::Error::unknown_field(&key, FIELDS));
            }
            if uniform.is_some() {
                return Err(de::Error::duplicate_field("uniform"));
            }
            uniform = Some(map.next_value::<Spanned<Vec<Spanned<RawTime>>>>()?);
        }
        uniform
            .map(RawExecution::Uniform)
            .ok_or_else(|| de::Error::missing_field("uniform"))
    }
}

impl<'de> Deserialize<'de> for RawExecution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ExecutionVisitor)
    }
}

struct RunVisitor;

impl<'de> Visitor<'de> for RunVisitor {
    type Value = RawRun;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a time like \"2ms\", or [min, max] like [\"1ms\", \"1500us\"]")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawRun, E> {
        Ok(RawRun::Fixed(RawTime(RawQuantity::Text(v.to_owned()))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawRun, E> {
        Ok(RawRun::Fixed(RawTime(RawQuantity::Integer(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawRun, E> {
        let v = i64::try_from(v).unwrap_or(i64::MAX);
        Ok(RawRun::Fixed(RawTime(RawQuantity::Integer(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawRun, E> {
        Ok(RawRun::Fixed(RawTime(RawQuantity::Float(v))))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawRun, A::Error> {
        let mut times = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(16));
        while let Some(time) = seq.next_element::<Spanned<RawTime>>()? {
            times.push(time);
        }
        Ok(RawRun::Range(times))
    }
}

impl<'de> Deserialize<'de> for RawRun {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RunVisitor)
    }
}
