//! Chrome Trace Event Format export: a run's trace as JSON that Perfetto and chrome://tracing open.
//!
//! Layout: process 1 ("cores") has one thread per core, showing what occupied it; process 2
//! ("tasks") has one thread per task, showing its execution, the kernel and refill time charged
//! to it, and its job events as instants. Timestamps are microseconds (the format's unit),
//! written from integer nanoseconds as `{ns / 1000}.{ns % 1000:03}`: no floating point, so the
//! same outcome always gives the same bytes.
//!
//! [`chrome_trace_json`] writes a finished run's in-memory trace; [`ChromeStream`] writes the
//! same events to any `std::io::Write` while the run goes (a slice when it can no longer
//! grow, a job event when it happens), so memory stays flat however long the run. The
//! stream also draws each reservation's budget left as a counter track.

use bulwark_core::{Instant, TaskId};
use bulwark_sim::{
    BudgetSample, Mark, MarkKind, OpenSlices, Options, Outcome, Recorder, Slice, SliceKind,
};
use bulwark_spec::Scenario;
use serde_json::Value;
use std::fmt::Write as _;
use std::io;

use crate::names::task_name;

/// The process holding one track per core.
const CORES_PID: u32 = 1;
/// The process holding one track per task.
const TASKS_PID: u32 = 2;

/// The run's trace as a Chrome trace JSON object, or `None` when the run recorded no trace.
///
/// An outcome without a trace yields `None` rather than an empty document, so a caller cannot
/// mistake "not recorded" for "nothing happened".
pub fn chrome_trace_json(outcome: &Outcome) -> Option<String> {
    let trace = outcome.trace.as_ref()?;
    let mut events = Events::default();
    let names = |task: TaskId| task_name(outcome, task);

    let cores = core_count(outcome);
    let tasks = task_count(outcome);
    events.tracks(cores, tasks, &names);

    for slice in &trace.slices {
        events.slice(&names, slice);
    }
    for mark in &trace.marks {
        events.mark(mark);
    }

    let mut document = String::with_capacity(events.text.len() + 256);
    document.push_str(OPENING);
    document.push_str(&events.text);
    document.push_str(&closing(
        &outcome.scenario,
        &outcome.policy,
        outcome.seed,
        outcome.until,
    ));
    Some(document)
}

/// What comes before the first event.
const OPENING: &str = "{\"traceEvents\":[\n";

/// What comes after the last event: the run's identity.
fn closing(scenario: &str, policy: &str, seed: u64, until: Instant) -> String {
    let mut text = String::from("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
    // The seed is written as a string: trace viewers read numbers as doubles, which would
    // silently round a 64-bit seed.
    let _ = write!(
        text,
        "\"scenario\":{},\"policy\":{},\"seed\":{},\"until_ns\":{}",
        json_string(scenario),
        json_string(policy),
        json_string(&seed.to_string()),
        json_string(&until.as_nanos().to_string()),
    );
    text.push_str("}}\n");
    text
}

/// A Chrome trace written while the run goes: give it to `bulwark_sim::run_recorded`.
///
/// The opening and the track names are written at once; each slice when the machine moves its
/// core on to something else (only the last slice of each core is held back), each job event
/// when it happens, and each budget change of a reservation as a counter (`"ph":"C"`) named
/// `budget <task>`, in integer nanoseconds. The closing comes at the end of the run, so the
/// file is one valid JSON document. Apart from the counters, the events are those
/// [`chrome_trace_json`] writes for the same run, in another order (the format does not care).
///
/// Writes go straight to the writer, one per event: wrap a file in a `std::io::BufWriter`.
/// The first write error stops the stream; [`ChromeStream::into_inner`] returns it.
pub struct ChromeStream<W: io::Write> {
    writer: W,
    names: Vec<String>,
    events: Events,
    open: OpenSlices,
    closing: String,
    error: Option<io::Error>,
}

impl<W: io::Write> ChromeStream<W> {
    /// A stream for running `scenario` with `options`: writes the opening and the tracks.
    pub fn new(writer: W, scenario: &Scenario, options: &Options) -> ChromeStream<W> {
        let seed = options.seed.unwrap_or(scenario.seed);
        // The horizon as the machine computes it.
        let until = Instant::ZERO.saturating_add(options.until.unwrap_or(scenario.duration));
        let mut stream = ChromeStream {
            writer,
            names: scenario
                .tasks
                .iter()
                .map(|task| task.name.clone())
                .collect(),
            events: Events::default(),
            open: OpenSlices::default(),
            closing: closing(&scenario.name, &scenario.policy_label(), seed, until),
            error: None,
        };
        let tasks = u32::try_from(stream.names.len()).unwrap_or(u32::MAX);
        let names = stream.names.clone();
        stream
            .events
            .tracks(scenario.cores, tasks, &|task| name_of(&names, task));
        stream.write_raw(OPENING);
        stream.flush_events();
        stream
    }

    /// The writer, once the run has finished; the first write error, if any.
    pub fn into_inner(mut self) -> io::Result<W> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        self.writer.flush()?;
        Ok(self.writer)
    }

    /// Slices held back, at most one per core: what streaming keeps in memory.
    pub fn held_slices(&self) -> usize {
        self.open.held()
    }

    fn write_raw(&mut self, text: &str) {
        if self.error.is_none() {
            if let Err(error) = self.writer.write_all(text.as_bytes()) {
                self.error = Some(error);
            }
        }
    }

    fn flush_events(&mut self) {
        let text = std::mem::take(&mut self.events.text);
        self.write_raw(&text);
        // Reuse the allocation: one event's worth, not the whole trace.
        self.events.text = text;
        self.events.text.clear();
    }

    fn write_slice(&mut self, slice: &Slice) {
        let names = std::mem::take(&mut self.names);
        self.events.slice(&|task| name_of(&names, task), slice);
        self.names = names;
        self.flush_events();
    }
}

impl<W: io::Write> Recorder for ChromeStream<W> {
    fn wants_trace(&self) -> bool {
        true
    }

    fn slice(&mut self, piece: &Slice) {
        if let Some(closed) = self.open.push(piece) {
            self.write_slice(&closed);
        }
    }

    fn mark(&mut self, mark: &Mark) {
        self.events.mark(mark);
        self.flush_events();
    }

    fn budget(&mut self, sample: &BudgetSample) {
        let name = format!("budget {}", name_of(&self.names, sample.task));
        self.events.counter(&name, sample);
        self.flush_events();
    }

    fn finish(&mut self) {
        let open: Vec<Slice> = self.open.drain().collect();
        for slice in &open {
            self.write_slice(slice);
        }
        let closing = std::mem::take(&mut self.closing);
        self.write_raw(&closing);
    }
}

/// A task's name from the scenario's list, or `task N` past its end.
fn name_of(names: &[String], task: TaskId) -> String {
    names
        .get(task.index())
        .cloned()
        .unwrap_or_else(|| format!("task {}", task.0))
}

/// Nanoseconds as the format's microseconds, exactly: `1500` becomes `1.500`.
pub fn micros(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// Cores to give tracks: every core the metrics know, and any the trace mentions beyond them.
fn core_count(outcome: &Outcome) -> u16 {
    let known = u16::try_from(outcome.cores.len()).unwrap_or(u16::MAX);
    let seen = outcome
        .trace
        .iter()
        .flat_map(|trace| {
            let slices = trace.slices.iter().map(|slice| slice.core);
            let marks = trace.marks.iter().map(|mark| mark.core);
            slices.chain(marks)
        })
        .map(|core| core.saturating_add(1))
        .max()
        .unwrap_or(0);
    known.max(seen)
}

/// Tasks to give tracks, likewise.
fn task_count(outcome: &Outcome) -> u32 {
    let known = u32::try_from(outcome.tasks.len()).unwrap_or(u32::MAX);
    let seen = outcome
        .trace
        .iter()
        .flat_map(|trace| {
            let slices = trace.slices.iter().filter_map(|slice| slice.task);
            let marks = trace.marks.iter().map(|mark| mark.task);
            slices.chain(marks)
        })
        .map(|task| task.0.saturating_add(1))
        .max()
        .unwrap_or(0);
    known.max(seen)
}

/// A JSON string literal, escaped.
fn json_string(text: &str) -> String {
    Value::from(text).to_string()
}

/// The event list being written, one event per line.
#[derive(Default)]
struct Events {
    text: String,
    /// An event was written before (into `text`, or already streamed out of it).
    any: bool,
}

/// Task names by id.
type Names<'a> = dyn Fn(TaskId) -> String + 'a;

impl Events {
    fn start(&mut self) {
        if self.any {
            self.text.push_str(",\n");
        }
        self.any = true;
    }

    /// The two processes and their threads: one per core, one per task.
    fn tracks(&mut self, cores: u16, tasks: u32, names: &Names<'_>) {
        self.process(CORES_PID, "cores", 0);
        for core in 0..cores {
            self.thread(CORES_PID, u64::from(core), &format!("core {core}"));
        }
        self.process(TASKS_PID, "tasks", 1);
        for task in 0..tasks {
            self.thread(TASKS_PID, u64::from(task), &names(TaskId(task)));
        }
    }

    /// A slice on its core's track, and on its task's when it has one.
    fn slice(&mut self, names: &Names<'_>, slice: &Slice) {
        self.core_slice(names, slice);
        if let Some(task) = slice.task {
            self.task_slice(names, slice, task);
        }
    }

    /// A counter (`C`) sample of a reservation's budget left, in the tasks process.
    fn counter(&mut self, name: &str, sample: &BudgetSample) {
        self.start();
        let _ = write!(
            self.text,
            "{{\"name\":{},\"cat\":\"budget\",\"ph\":\"C\",\"ts\":{},\"pid\":{TASKS_PID},\"tid\":{},\"args\":{{\"remaining_ns\":{}}}}}",
            json_string(name),
            micros(sample.at.as_nanos()),
            sample.task.0,
            sample.remaining.as_nanos(),
        );
    }

    fn metadata(&mut self, what: &str, pid: u32, tid: u64, args: &str) {
        self.start();
        let _ = write!(
            self.text,
            "{{\"name\":\"{what}\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}"
        );
    }

    fn process(&mut self, pid: u32, name: &str, sort_index: u32) {
        self.metadata(
            "process_name",
            pid,
            0,
            &format!("\"name\":{}", json_string(name)),
        );
        self.metadata(
            "process_sort_index",
            pid,
            0,
            &format!("\"sort_index\":{sort_index}"),
        );
    }

    fn thread(&mut self, pid: u32, tid: u64, name: &str) {
        self.metadata(
            "thread_name",
            pid,
            tid,
            &format!("\"name\":{}", json_string(name)),
        );
        self.metadata(
            "thread_sort_index",
            pid,
            tid,
            &format!("\"sort_index\":{tid}"),
        );
    }

    /// A complete (`X`) event; `args` is the inside of the args object, possibly empty.
    fn complete(
        &mut self,
        name: &str,
        category: &str,
        slice: &Slice,
        pid: u32,
        tid: u64,
        args: &str,
    ) {
        let start = slice.start.as_nanos();
        let duration = slice.end.as_nanos().saturating_sub(start);
        self.start();
        let _ = write!(
            self.text,
            "{{\"name\":{},\"cat\":\"{category}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{pid},\"tid\":{tid},\"args\":{{{args}}}}}",
            json_string(name),
            micros(start),
            micros(duration),
        );
    }

    /// The slice on its core's track: the task's name when it executed, otherwise what the
    /// kernel or the refill did, naming the task charged.
    fn core_slice(&mut self, names: &Names<'_>, slice: &Slice) {
        let charged = slice.task.map(names);
        let charged_arg = |name: &str| format!("\"task\":{}", json_string(name));
        let (name, category, args) = match (slice.kind, charged.as_deref()) {
            (SliceKind::Task, Some(name)) => (name.to_string(), "task", String::new()),
            (SliceKind::Task, None) => ("unknown task".to_string(), "task", String::new()),
            (SliceKind::Kernel, Some(name)) => ("kernel".to_string(), "kernel", charged_arg(name)),
            (SliceKind::Kernel, None) => ("kernel (idle)".to_string(), "kernel", String::new()),
            (SliceKind::CacheRefill, Some(name)) => {
                ("refill".to_string(), "refill", charged_arg(name))
            }
            (SliceKind::CacheRefill, None) => ("refill".to_string(), "refill", String::new()),
            (SliceKind::Server, Some(name)) => ("server".to_string(), "server", charged_arg(name)),
            (SliceKind::Server, None) => ("server".to_string(), "server", String::new()),
            (SliceKind::Spin, Some(name)) => ("spin".to_string(), "spin", charged_arg(name)),
            (SliceKind::Spin, None) => ("spin".to_string(), "spin", String::new()),
        };
        self.complete(
            &name,
            category,
            slice,
            CORES_PID,
            u64::from(slice.core),
            &args,
        );
    }

    /// The slice on the track of the task it ran or was charged to.
    fn task_slice(&mut self, names: &Names<'_>, slice: &Slice, task: TaskId) {
        let (name, category) = match slice.kind {
            SliceKind::Task => (names(task), "task"),
            SliceKind::Kernel => ("kernel".to_string(), "kernel"),
            SliceKind::CacheRefill => ("refill".to_string(), "refill"),
            SliceKind::Server => ("server".to_string(), "server"),
            SliceKind::Spin => ("spin".to_string(), "spin"),
        };
        let args = format!("\"core\":{}", slice.core);
        self.complete(&name, category, slice, TASKS_PID, u64::from(task.0), &args);
    }

    /// A thread-scoped instant (`i`) on the task's track.
    fn mark(&mut self, mark: &Mark) {
        let name = match mark.kind {
            MarkKind::Release => "release",
            MarkKind::Completion => "completion",
            MarkKind::DeadlineMiss => "deadline miss",
            MarkKind::Suspend => "suspend",
        };
        self.start();
        let _ = write!(
            self.text,
            "{{\"name\":\"{name}\",\"cat\":\"job\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{TASKS_PID},\"tid\":{},\"args\":{{\"job\":{}}}}}",
            micros(mark.at.as_nanos()),
            mark.task.0,
            mark.job,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{awkward_names, two_tasks_one_core, AWKWARD_NAME};
    use serde_json::Value;

    fn parse(outcome: &Outcome) -> (String, Value) {
        let text = chrome_trace_json(outcome).expect("the fixture has a trace");
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        (text, value)
    }

    fn events<'a>(document: &'a Value, phase: &str) -> Vec<&'a Value> {
        document["traceEvents"]
            .as_array()
            .expect("an event array")
            .iter()
            .filter(|event| event["ph"] == phase)
            .collect()
    }

    #[test]
    fn micros_are_exact_integer_formatting() {
        assert_eq!(micros(0), "0.000");
        assert_eq!(micros(800), "0.800");
        assert_eq!(micros(1_500), "1.500");
        assert_eq!(micros(1_001_500), "1001.500");
        assert_eq!(micros(u64::MAX), "18446744073709551.615");
    }

    #[test]
    fn no_trace_gives_none() {
        let mut outcome = two_tasks_one_core();
        outcome.trace = None;
        assert_eq!(chrome_trace_json(&outcome), None);
    }

    #[test]
    fn metadata_names_processes_and_threads() {
        let (_, document) = parse(&two_tasks_one_core());
        let metadata = events(&document, "M");
        // 2 processes x (name, sort index) + (1 core + 2 tasks) x (name, sort index).
        assert_eq!(metadata.len(), 10);
        let named = |what: &str, pid: u64, tid: u64| {
            metadata
                .iter()
                .find(|event| event["name"] == what && event["pid"] == pid && event["tid"] == tid)
                .map(|event| event["args"].clone())
        };
        assert_eq!(named("process_name", 1, 0).unwrap()["name"], "cores");
        assert_eq!(named("process_name", 2, 0).unwrap()["name"], "tasks");
        assert_eq!(named("thread_name", 1, 0).unwrap()["name"], "core 0");
        assert_eq!(named("thread_name", 2, 0).unwrap()["name"], "ctl");
        assert_eq!(named("thread_name", 2, 1).unwrap()["name"], "log");
        assert_eq!(named("thread_sort_index", 2, 1).unwrap()["sort_index"], 1);
        assert_eq!(named("thread_name", 1, 1), None);
    }

    #[test]
    fn slices_land_on_core_and_task_tracks() {
        let (_, document) = parse(&two_tasks_one_core());
        let complete = events(&document, "X");
        // 6 slices on core 0, plus the 5 that have a task on its track.
        assert_eq!(complete.len(), 11);
        let on_core: Vec<_> = complete.iter().filter(|event| event["pid"] == 1).collect();
        let names: Vec<_> = on_core
            .iter()
            .map(|event| event["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["kernel", "ctl", "kernel", "refill", "log", "kernel (idle)"]
        );
        assert!(on_core.iter().all(|event| event["tid"] == 0));
        assert_eq!(on_core[2]["args"]["task"], "log");
        assert_eq!(on_core[3]["args"]["task"], "log");
        assert_eq!(on_core[0]["args"]["task"], "ctl");
        assert_eq!(on_core[5]["args"], serde_json::json!({}));

        let on_tasks: Vec<_> = complete.iter().filter(|event| event["pid"] == 2).collect();
        let placed: Vec<_> = on_tasks
            .iter()
            .map(|event| {
                (
                    event["name"].as_str().unwrap(),
                    event["tid"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            placed,
            [
                ("kernel", 0),
                ("ctl", 0),
                ("kernel", 1),
                ("refill", 1),
                ("log", 1)
            ]
        );
        assert_eq!(on_tasks[3]["args"]["core"], 0);
    }

    #[test]
    fn timestamps_are_written_exactly_in_microseconds() {
        let (text, document) = parse(&two_tasks_one_core());
        // The exact text, not just the parsed number.
        assert!(text.contains(
            "{\"name\":\"ctl\",\"cat\":\"task\",\"ph\":\"X\",\"ts\":1.500,\"dur\":1000.000,\"pid\":1,\"tid\":0,\"args\":{}}"
        ));
        assert!(text.contains("\"name\":\"refill\",\"cat\":\"refill\",\"ph\":\"X\",\"ts\":1002.250,\"dur\":50.000,\"pid\":1"));
        assert!(text.contains("\"name\":\"kernel (idle)\",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":3000.000,\"dur\":0.800,"));
        let complete = events(&document, "X");
        assert_eq!(complete[0]["ts"].as_f64(), Some(0.0));
        assert_eq!(complete[0]["dur"].as_f64(), Some(1.5));
    }

    #[test]
    fn marks_are_thread_instants_on_task_tracks() {
        let (text, document) = parse(&two_tasks_one_core());
        let instants = events(&document, "i");
        assert_eq!(instants.len(), 6);
        let seen: Vec<_> = instants
            .iter()
            .map(|event| {
                (
                    event["name"].as_str().unwrap(),
                    event["tid"].as_u64().unwrap(),
                    event["ts"].as_f64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("release", 0, 0.0),
                ("release", 1, 0.0),
                ("completion", 0, 1001.5),
                ("suspend", 0, 1001.5),
                ("deadline miss", 1, 2000.0),
                ("completion", 1, 3000.0),
            ]
        );
        assert!(instants
            .iter()
            .all(|event| event["pid"] == 2 && event["s"] == "t"));
        assert!(instants.iter().all(|event| event["args"]["job"] == 0));
        assert!(text.contains(
            "\"name\":\"deadline miss\",\"cat\":\"job\",\"ph\":\"i\",\"s\":\"t\",\"ts\":2000.000,"
        ));
    }

    #[test]
    fn document_carries_run_identity() {
        let (_, document) = parse(&two_tasks_one_core());
        assert_eq!(document["displayTimeUnit"], "ns");
        assert_eq!(document["otherData"]["scenario"], "two-tasks");
        assert_eq!(document["otherData"]["policy"], "fixed-priority");
        assert_eq!(document["otherData"]["seed"], "42");
        assert_eq!(document["otherData"]["until_ns"], "4000000");
    }

    #[test]
    fn names_are_escaped_and_output_is_deterministic() {
        let outcome = awkward_names();
        let (text, document) = parse(&outcome);
        let thread = events(&document, "M")
            .into_iter()
            .find(|event| event["name"] == "thread_name" && event["pid"] == 2 && event["tid"] == 1)
            .unwrap();
        assert_eq!(thread["args"]["name"], AWKWARD_NAME);
        assert_eq!(chrome_trace_json(&outcome).unwrap(), text);
    }

    #[test]
    fn tracks_exist_for_cores_and_tasks_the_metrics_do_not_know() {
        let mut outcome = two_tasks_one_core();
        let trace = outcome.trace.as_mut().unwrap();
        trace.slices[1].core = 2;
        trace.slices[1].task = Some(TaskId(4));
        let (_, document) = parse(&outcome);
        let metadata = events(&document, "M");
        let thread_names: Vec<_> = metadata
            .iter()
            .filter(|event| event["name"] == "thread_name")
            .map(|event| event["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            thread_names,
            ["core 0", "core 1", "core 2", "ctl", "log", "task 2", "task 3", "task 4"]
        );
        let moved = events(&document, "X")
            .into_iter()
            .find(|event| event["name"] == "task 4" && event["pid"] == 1)
            .unwrap();
        assert_eq!(moved["tid"], 2);
    }
}
