//! Script checks: one action per step, counts of at least one, loops that let time pass,
//! `flush-cache` only as `true`, `allocate` and `terminate` with their companions (the task
//! a `terminate` names is checked once every task is known, in `mod.rs`; the server an
//! `invoke` names, in `server.rs`).

use std::ops::Range;

use bulwark_core::{Duration, Instant};
use toml::Spanned;

use super::Checker;
use crate::model::{Execution, ObjectKind, Step};
use crate::raw::{RawLoopCount, RawRun, RawStep};

const STEP_HELP: &str = "allowed: exactly one of run, compute (with each), sleep-for, \
                         sleep-until, sleep-until-aligned, sleep-until-next-release, \
                         flush-cache, action (with limit and period), allocate (with object), \
                         terminate (with step), invoke (with operation), loop (with body)";
const OPERATION_HELP: &str = "allowed: { invoke = \"server\", operation = \"1ms\" } for a \
                              server with operation = ...; a server with a body does what its \
                              body says";
const ACTION_HELP: &str = "allowed: { action = \"5ms\", limit = \"2ms\", period = \"4ms\" }: \
                           the load, then the resource's limit per period (limit <= period)";
const OBJECT_HELP: &str = "allowed: { allocate = 1000, object = \"semaphore\" } with object one \
                           of semaphore, mapping, endpoint (semaphore when left out)";
const TERMINATE_HELP: &str = "allowed: { terminate = \"task\" }, or { terminate = \"task\", \
                              step = \"20us\" } for reclamation in steps";
const LOOP_HELP: &str =
    "allowed: { loop = 3, body = [...] } or { loop = \"forever\", body = [...] }";
const COMPUTE_HELP: &str = "allowed: { compute = 50, each = \"100us\" }";
const RUN_HELP: &str = "allowed: { run = \"2ms\" }, or { run = [\"1ms\", \"1500us\"] }: a time \
                        drawn uniformly in [min, max], 0 < min <= max";

impl Checker<'_> {
    pub(super) fn steps(
        &mut self,
        raw: &Spanned<Vec<Spanned<RawStep>>>,
        empty: &str,
    ) -> Option<Vec<Step>> {
        if raw.get_ref().is_empty() {
            self.report(raw.span(), empty, STEP_HELP);
            return None;
        }
        let steps: Vec<Option<Step>> = raw.get_ref().iter().map(|s| self.step(s)).collect();
        steps.into_iter().collect()
    }

    fn step(&mut self, spanned: &Spanned<RawStep>) -> Option<Step> {
        let raw = spanned.get_ref();
        let whole = spanned.span();
        let action = self.action(raw, whole.clone());
        // Check every value given, whichever key is the step's action, so all errors show.
        let run = raw.run.as_ref().and_then(|v| self.run(v));
        let compute = raw.compute.as_ref().and_then(|v| self.count(v, "compute"));
        let each = raw
            .each
            .as_ref()
            .and_then(|v| self.positive_time(v, "each"));
        let sleep_for = raw.sleep_for.as_ref().and_then(|v| self.time(v));
        let sleep_until = raw.sleep_until.as_ref().and_then(|v| self.time(v));
        let aligned = raw
            .sleep_until_aligned
            .as_ref()
            .and_then(|v| self.positive_time(v, "sleep-until-aligned"));
        let next_release = raw
            .sleep_until_next_release
            .as_ref()
            .and_then(|v| self.positive_time(v, "sleep-until-next-release"));
        let flush = raw.flush_cache.as_ref().and_then(|v| self.flush(v));
        let allocate = raw
            .allocate
            .as_ref()
            .and_then(|v| self.count(v, "allocate"));
        let object = match &raw.object {
            None => Some(ObjectKind::Semaphore),
            Some(v) => self.object(v),
        };
        let terminate = raw.terminate.as_ref().and_then(|v| {
            self.name(v, "the task to terminate")?;
            Some(v.get_ref().clone())
        });
        let step = raw.step.as_ref().map(|v| self.positive_time(v, "step"));
        let invoke = raw.invoke.as_ref().and_then(|v| self.invoked(v));
        // `None`: not given; `Some(None)`: given but wrong (reported).
        let operation = raw.operation.as_ref().map(|v| self.operation(v));
        let load = raw
            .action
            .as_ref()
            .and_then(|v| self.positive_time(v, "action"));
        let limit = raw
            .limit
            .as_ref()
            .and_then(|v| self.positive_time(v, "limit"));
        let period = raw
            .period
            .as_ref()
            .and_then(|v| self.positive_time(v, "period"));
        let repeat = raw.repeat.as_ref().and_then(|v| self.loop_count(v));
        let body = raw
            .body
            .as_ref()
            .and_then(|b| self.steps(b, "a loop body needs at least one step"));
        self.companions(raw, whole.clone());

        let step = match action? {
            "run" => Step::Run(run?),
            "compute" => Step::Compute {
                count: compute?,
                each: each?,
            },
            "sleep-for" => Step::SleepFor(sleep_for?),
            "sleep-until" => Step::SleepUntil(Instant::from_nanos(sleep_until?.as_nanos())),
            "sleep-until-aligned" => Step::SleepUntilAligned(aligned?),
            "sleep-until-next-release" => Step::SleepUntilNextRelease(next_release?),
            "flush-cache" => {
                flush?;
                Step::FlushCache
            }
            "action" => {
                let (load, limit, period) = (load?, limit?, period?);
                let limit_span = raw.limit.as_ref().map_or(whole.clone(), |l| l.span());
                if limit > period {
                    self.report(
                        limit_span,
                        format!("limit {limit} is longer than the period {period}"),
                        ACTION_HELP,
                    );
                    return None;
                }
                self.actions.push(super::ActionRef {
                    task: self.current_task,
                    limit,
                    period,
                    span: whole,
                });
                Step::Action {
                    load,
                    limit,
                    period,
                }
            }
            "allocate" => Step::Allocate {
                count: allocate?,
                object: object?,
            },
            "terminate" => {
                let task = terminate?;
                let step = match step {
                    None => None,
                    Some(time) => Some(time?),
                };
                let target = raw.terminate.as_ref().map_or(whole.clone(), |t| t.span());
                let step_span = raw.step.as_ref().map(|t| t.span());
                self.terminations.push(super::Termination {
                    caller: self.current_task,
                    target: task.clone(),
                    span: target,
                    step: step_span,
                });
                Step::Terminate { task, step }
            }
            "invoke" => {
                let server = invoke?;
                let operation = match (operation, &raw.operation) {
                    (None, _) => None,
                    (Some(given), Some(span)) => {
                        if !self.server_one_run[server] {
                            self.report(
                                span.span(),
                                format!(
                                    "server `{}` has a body, so a call cannot ask it for an \
                                     operation",
                                    self.server_names[server]
                                ),
                                OPERATION_HELP,
                            );
                            return None;
                        }
                        Some(given?)
                    }
                    (Some(_), None) => None,
                };
                Step::Invoke { server, operation }
            }
            _ => {
                let count = repeat?;
                let body = body?;
                if count.is_none() && !body.iter().any(takes_time) {
                    self.report(
                        whole,
                        "this loop would repeat forever without letting time pass",
                        "allowed: a body with a step that takes time (run or compute longer \
                         than zero, sleep-for longer than zero, sleep-until-aligned), or a \
                         count like loop = 3",
                    );
                    return None;
                }
                Step::Loop { count, body }
            }
        };
        Some(step)
    }

    /// The one key that says what a step does.
    pub(super) fn action(&mut self, raw: &RawStep, whole: Range<usize>) -> Option<&'static str> {
        fn at<T>(value: &Option<Spanned<T>>, key: &'static str) -> Option<(usize, &'static str)> {
            value.as_ref().map(|v| (v.span().start, key))
        }
        let mut given: Vec<(usize, &'static str)> = [
            at(&raw.run, "run"),
            at(&raw.compute, "compute"),
            at(&raw.sleep_for, "sleep-for"),
            at(&raw.sleep_until, "sleep-until"),
            at(&raw.sleep_until_aligned, "sleep-until-aligned"),
            at(&raw.sleep_until_next_release, "sleep-until-next-release"),
            at(&raw.flush_cache, "flush-cache"),
            at(&raw.action, "action"),
            at(&raw.allocate, "allocate"),
            at(&raw.terminate, "terminate"),
            at(&raw.invoke, "invoke"),
            at(&raw.repeat, "loop"),
        ]
        .into_iter()
        .flatten()
        .collect();
        given.sort_by_key(|(start, _)| *start);
        match given.as_slice() {
            [] => {
                self.report(whole, "this step does nothing", STEP_HELP);
                None
            }
            [(_, key)] => Some(key),
            [(_, first), rest @ ..] => {
                for (start, key) in rest {
                    self.report(
                        *start..*start,
                        format!("a step does one thing, but this one has both {first} and {key}"),
                        "allowed: one action per step; write two steps",
                    );
                }
                None
            }
        }
    }

    /// `each` goes with `compute` and `body` with `loop`, both ways.
    pub(super) fn companions(&mut self, raw: &RawStep, whole: Range<usize>) {
        match (&raw.compute, &raw.each) {
            (Some(_), None) => self.report(
                whole.clone(),
                "compute needs each, the time one unit of work takes",
                COMPUTE_HELP,
            ),
            (None, Some(each)) => {
                self.report(each.span(), "each only goes with compute", COMPUTE_HELP)
            }
            _ => {}
        }
        match (&raw.action, &raw.limit, &raw.period) {
            (Some(_), None, _) | (Some(_), _, None) => self.report(
                whole.clone(),
                "an action needs its resource: limit and period",
                ACTION_HELP,
            ),
            (None, Some(v), _) => self.report(v.span(), "limit only goes with action", ACTION_HELP),
            (None, _, Some(v)) => {
                self.report(v.span(), "period only goes with action", ACTION_HELP)
            }
            _ => {}
        }
        if let (None, Some(object)) = (&raw.allocate, &raw.object) {
            self.report(object.span(), "object only goes with allocate", OBJECT_HELP);
        }
        if let (None, Some(step)) = (&raw.terminate, &raw.step) {
            self.report(step.span(), "step only goes with terminate", TERMINATE_HELP);
        }
        if let (None, Some(operation)) = (&raw.invoke, &raw.operation) {
            self.report(
                operation.span(),
                "operation only goes with invoke",
                OPERATION_HELP,
            );
        }
        match (&raw.repeat, &raw.body) {
            (Some(_), None) => {
                self.report(whole, "loop needs a body, the steps to repeat", LOOP_HELP)
            }
            (None, Some(body)) => self.report(body.span(), "body only goes with loop", LOOP_HELP),
            _ => {}
        }
    }

    /// `run = "2ms"`, one time (zero allowed), or `run = ["1ms", "1500us"]`, a time drawn
    /// uniformly in `[min, max]` with `0 < min <= max`: fixed when the two meet, so that
    /// nothing is drawn for it (as [`Execution::between`] says).
    pub(super) fn run(&mut self, raw: &Spanned<RawRun>) -> Option<Execution> {
        let list = match raw.get_ref() {
            RawRun::Fixed(time) => return self.time_at(time, raw.span()).map(Execution::Fixed),
            RawRun::Range(list) => list,
        };
        let times: Vec<Option<Duration>> = list.iter().map(|t| self.time(t)).collect();
        let [min, max] = times.as_slice() else {
            self.report(
                raw.span(),
                format!(
                    "a drawn run needs two times, [min, max], but has {}",
                    times.len()
                ),
                RUN_HELP,
            );
            return None;
        };
        let (min, max) = ((*min)?, (*max)?);
        if min.is_zero() {
            self.report(list[0].span(), "a drawn run's min cannot be zero", RUN_HELP);
            return None;
        }
        if min > max {
            self.report(
                raw.span(),
                format!("a drawn run's min {min} is larger than its max {max}"),
                RUN_HELP,
            );
            return None;
        }
        Some(Execution::between(min, max))
    }

    /// `flush-cache = true`; `false` would be a step that does nothing.
    fn flush(&mut self, raw: &Spanned<bool>) -> Option<()> {
        if *raw.get_ref() {
            return Some(());
        }
        self.report(
            raw.span(),
            "flush-cache = false does nothing",
            "allowed: { flush-cache = true }; to not flush the cache, remove this step",
        );
        None
    }

    /// `object = "semaphore" | "mapping" | "endpoint"`.
    fn object(&mut self, raw: &Spanned<String>) -> Option<ObjectKind> {
        let kind = object_kind(raw.get_ref());
        if kind.is_none() {
            self.report(
                raw.span(),
                format!("unknown kernel object `{}`", raw.get_ref()),
                OBJECT_NAMES_HELP,
            );
        }
        kind
    }

    fn count(&mut self, raw: &Spanned<i64>, what: &str) -> Option<u64> {
        let n = *raw.get_ref();
        let found = u64::try_from(n).ok().filter(|c| *c >= 1);
        if found.is_none() {
            self.report(
                raw.span(),
                format!("{what} count {n} is less than 1"),
                "allowed: a count of 1 or more",
            );
        }
        found
    }

    /// `Some(Some(n))` for a count, `Some(None)` for forever, `None` if wrong.
    fn loop_count(&mut self, raw: &Spanned<RawLoopCount>) -> Option<Option<u64>> {
        match raw.get_ref() {
            RawLoopCount::Word(word) if word == "forever" => Some(None),
            RawLoopCount::Word(word) => {
                self.report(
                    raw.span(),
                    format!("loop count `{word}` is neither a number nor \"forever\""),
                    "allowed: a count of 1 or more, or \"forever\"",
                );
                None
            }
            RawLoopCount::Count(n) => {
                let found = u64::try_from(*n).ok().filter(|c| *c >= 1);
                if found.is_none() {
                    self.report(
                        raw.span(),
                        format!("loop count {n} is less than 1"),
                        "allowed: a count of 1 or more, or \"forever\"",
                    );
                }
                found.map(Some)
            }
        }
    }
}

/// True if running `step` makes time pass, so a loop around it cannot spin in zero time.
fn takes_time(step: &Step) -> bool {
    match step {
        Step::Run(time) => !time.best_case().is_zero(),
        Step::SleepFor(time) => !time.is_zero(),
        Step::Compute { count, each } => *count > 0 && !each.is_zero(),
        Step::SleepUntilAligned(period) => !period.is_zero(),
        // Each pass plans the next release a period later, so one soon lies ahead.
        Step::SleepUntilNextRelease(period) => !period.is_zero(),
        // Once its instant has passed, it returns at once.
        Step::SleepUntil(_) => false,
        // Their time comes from the cost model, which may make it zero.
        Step::FlushCache | Step::Allocate { .. } | Step::Terminate { .. } => false,
        Step::Action { load, .. } => !load.is_zero(),
        // A server's operation always takes time (validated).
        Step::Invoke { .. } => true,
        // A procedure may take no time, and its protocol steps' costs may be zero.
        Step::Call(_) => false,
        Step::Loop { body, .. } => body.iter().any(takes_time),
    }
}

/// What `object = ...` may name, in every file kind that allocates.
pub(crate) const OBJECT_NAMES_HELP: &str = "allowed: semaphore, mapping, endpoint";

/// The kernel object an `allocate` step's `object` names.
pub(crate) fn object_kind(name: &str) -> Option<ObjectKind> {
    match name {
        "semaphore" => Some(ObjectKind::Semaphore),
        "mapping" => Some(ObjectKind::MemoryMapping),
        "endpoint" => Some(ObjectKind::Endpoint),
        _ => None,
    }
}
