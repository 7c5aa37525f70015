//! SVG Gantt charts in the style of real-time scheduling papers: a row per task, grouped by core.
//!
//! Execution is a box in the task's colour, cache refill a lighter box, kernel time charged to
//! the task a dark box on its row; an up-arrow marks a release, a down-arrow a deadline, a short
//! tick below the row a completion, and a red cross a deadline miss. Kernel time on behalf of
//! no task (the core then idles) is a thin dark band on the core's header.
//!
//! Output is byte-deterministic: x coordinates are computed in integer hundredths of a pixel
//! and printed with two decimals, y coordinates are whole pixels, and nothing iterates a hash.
//! To stay readable over thousands of slices, boxes of one kind on one row that are less than
//! half a pixel apart are merged, and a box narrower than half a pixel is widened to half a
//! pixel rather than dropped, so brief execution stays visible. Releases, completions and
//! deadlines that fall in the same pixel column of a row are drawn once; misses never merge.

use bulwark_core::{Duration, Instant};
use bulwark_sim::{MarkKind, Outcome, SliceKind};
use std::fmt::Write as _;

use crate::markup::escape;

/// Width of the label column, in pixels.
const LABEL_WIDTH: i64 = 150;
/// Width of the time axis, in pixels.
const PLOT_WIDTH: i64 = 940;
/// Space right of the plot, so the last tick label fits.
const RIGHT_MARGIN: i64 = 30;
/// Space above the first row, for the title.
const TITLE_HEIGHT: i64 = 40;
/// Height of a core's header row.
const CORE_HEADER_HEIGHT: i64 = 20;
/// Height of a task's row; its boxes span [`BOX_TOP`, `BOX_BOTTOM`) within it.
const ROW_HEIGHT: i64 = 34;
const BOX_TOP: i64 = 12;
const BOX_BOTTOM: i64 = 28;
/// Where arrows reach at the top of a row.
const ARROW_TOP: i64 = 2;
/// The narrowest box drawn, in hundredths of a pixel.
const MIN_BOX: i64 = 50;
/// Labels longer than this many characters are cut with an ellipsis.
const MAX_LABEL_CHARS: usize = 22;
/// At most this many tick intervals on the axis.
const MAX_TICKS: u64 = 10;

/// Kernel time: dark grey, whatever the task.
const KERNEL_COLOUR: &str = "#3a3a3a";
/// A server's operation run on the task's scheduling context: the same for every task, since
/// the work is the server's, the budget the task's.
const SERVER_COLOUR: &str = "#7a5195";
/// Deadline misses: red, which no task colour is.
const MISS_COLOUR: &str = "#d62728";
/// Task colours, chosen to be told apart and to avoid red; cycled past twelve tasks.
const PALETTE: [(u8, u8, u8); 12] = [
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0x59, 0xa1, 0x4f),
    (0xb0, 0x7a, 0xa1),
    (0x76, 0xb7, 0xb2),
    (0xed, 0xc9, 0x48),
    (0x9c, 0x75, 0x5f),
    (0xff, 0x9d, 0xa7),
    (0x49, 0x98, 0x94),
    (0x8c, 0xd1, 0x7d),
    (0xa0, 0xcb, 0xe8),
    (0xd4, 0xa6, 0xc8),
];

/// The trace between `from` and `to` as an SVG Gantt chart, or `None` when the run recorded no
/// trace or the window is empty (`to <= from`).
///
/// Deadline arrows need the per-job records: they are drawn only when `outcome.jobs` is
/// present. Trace entries for tasks the metrics do not list have no row and are left out.
pub fn gantt_svg(outcome: &Outcome, from: Instant, to: Instant) -> Option<String> {
    let trace = outcome.trace.as_ref()?;
    if to <= from {
        return None;
    }
    let scale = Scale {
        from: from.as_nanos(),
        to: to.as_nanos(),
    };
    let layout = Layout::new(outcome, trace);

    let mut rows: Vec<RowContent> = outcome
        .tasks
        .iter()
        .map(|_| RowContent::default())
        .collect();
    let mut idle_kernel: Vec<Vec<(u64, u64)>> = vec![Vec::new(); usize::from(layout.cores)];
    for slice in &trace.slices {
        let Some((start, end)) = scale.clip(slice.start.as_nanos(), slice.end.as_nanos()) else {
            continue;
        };
        match slice.task {
            Some(task) => {
                if let Some(row) = rows.get_mut(task.index()) {
                    let lane = match slice.kind {
                        SliceKind::Task => &mut row.execution,
                        // A lender's idle drain is drawn as a refill is: its budget goes, and
                        // nothing useful runs.
                        SliceKind::CacheRefill | SliceKind::Spin => &mut row.refill,
                        SliceKind::Kernel => &mut row.kernel,
                        SliceKind::Server => &mut row.server,
                    };
                    lane.push((start, end));
                }
            }
            None => {
                if let Some(band) = idle_kernel.get_mut(usize::from(slice.core)) {
                    band.push((start, end));
                }
            }
        }
    }
    for mark in &trace.marks {
        let at = mark.at.as_nanos();
        let Some(row) = rows.get_mut(mark.task.index()) else {
            continue;
        };
        if !scale.contains(at) {
            continue;
        }
        let x = scale.x(at);
        match mark.kind {
            MarkKind::Release => row.releases.push(x),
            MarkKind::Completion => row.completions.push(x),
            MarkKind::DeadlineMiss => row.misses.push(x),
            MarkKind::Suspend => {}
        }
    }
    let show_deadlines = outcome.jobs.is_some();
    for job in outcome.jobs.iter().flatten() {
        let (Some(deadline), Some(row)) = (job.deadline, rows.get_mut(job.task.index())) else {
            continue;
        };
        if scale.contains(deadline.as_nanos()) {
            row.deadlines.push(scale.x(deadline.as_nanos()));
        }
    }

    let mut svg = String::new();
    let width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN;
    let axis_y = layout.rows_bottom + 6;
    let height = axis_y + 64;
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(
        svg,
        "<rect width=\"{width}\" height=\"{height}\" fill=\"#ffffff\"/>"
    );
    let _ = writeln!(
        svg,
        "<text class=\"title\" x=\"{LABEL_WIDTH}\" y=\"24\" font-size=\"14\" font-weight=\"bold\">{}</text>",
        escape(&format!(
            "{} \u{2014} {} (seed {}), {} to {}",
            outcome.scenario,
            outcome.policy,
            outcome.seed,
            tick_label(scale.from),
            tick_label(scale.to),
        ))
    );

    let step = nice_step(scale.span());
    let ticks = tick_times(scale.from, scale.to, step);
    write_grid(&mut svg, &scale, &ticks, axis_y);

    let merge_gap = scale.span() / (PLOT_WIDTH as u64 * 2);
    // Written top to bottom, so the document reads in the order the chart does.
    for core in 0..layout.cores {
        let top = layout.core_tops[usize::from(core)];
        let mut band = std::mem::take(&mut idle_kernel[usize::from(core)]);
        // A cluster's cores say so: its tasks' rows sit under its first core.
        let cluster = (outcome.clusters.iter()).find(|cluster| cluster.cores.contains(&core));
        let label = match cluster {
            Some(cluster) => format!("core {core} (cluster {})", escape(&cluster.name)),
            None => format!("core {core}"),
        };
        let band = merged(&mut band, merge_gap);
        write_core_header(&mut svg, &scale, core, &label, top, band);
        for (task, row) in rows.iter_mut().enumerate() {
            let metrics = &outcome.tasks[task];
            if metrics.core == core {
                let top = layout.row_tops[task];
                write_row(&mut svg, &scale, task, &metrics.name, top, row, merge_gap);
            }
        }
    }

    write_axis(&mut svg, &scale, &ticks, axis_y);
    let shown = |kind: SliceKind| trace.slices.iter().any(|s| s.kind == kind);
    write_legend(
        &mut svg,
        axis_y + 44,
        show_deadlines,
        shown(SliceKind::Server),
        shown(SliceKind::Spin),
    );
    svg.push_str("</svg>\n");
    Some(svg)
}

/// The step between ticks: the smallest of 1, 2 or 5 x 10^k nanoseconds that cuts `span` into
/// at most ten intervals.
pub fn nice_step(span: u64) -> u64 {
    let mut magnitude: u64 = 1;
    loop {
        for multiple in [1, 2, 5] {
            let step = magnitude.saturating_mul(multiple);
            if step.saturating_mul(MAX_TICKS) >= span || step == u64::MAX {
                return step;
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// Multiples of `step` within `[from, to]`.
fn tick_times(from: u64, to: u64, step: u64) -> Vec<u64> {
    let mut ticks = Vec::new();
    let Some(mut tick) = from.div_ceil(step).checked_mul(step) else {
        return ticks;
    };
    while tick <= to {
        ticks.push(tick);
        match tick.checked_add(step) {
            Some(next) => tick = next,
            None => break,
        }
    }
    ticks
}

/// A tick's label: the exact time in the largest unit that keeps it short ("5ms", "250us",
/// "1.5ms"), and a bare "0" at the origin.
fn tick_label(ns: u64) -> String {
    if ns == 0 {
        "0".to_string()
    } else {
        Duration::from_nanos(ns).to_string()
    }
}

/// Maps times in the window to x coordinates in hundredths of a pixel.
struct Scale {
    from: u64,
    to: u64,
}

impl Scale {
    fn span(&self) -> u64 {
        self.to - self.from
    }

    fn contains(&self, at: u64) -> bool {
        self.from <= at && at <= self.to
    }

    /// `[start, end)` cut to the window, or `None` if nothing of it is inside.
    fn clip(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let start = start.max(self.from);
        let end = end.min(self.to);
        (start < end).then_some((start, end))
    }

    fn x(&self, at: u64) -> i64 {
        let offset = u128::from(at.clamp(self.from, self.to) - self.from);
        let scaled = offset * (PLOT_WIDTH as u128 * 100) / u128::from(self.span());
        // At most PLOT_WIDTH * 100, so it fits.
        LABEL_WIDTH * 100 + scaled as i64
    }
}

/// Where each core's header and each task's row start, in pixels.
struct Layout {
    cores: u16,
    core_tops: Vec<i64>,
    row_tops: Vec<i64>,
    rows_bottom: i64,
}

impl Layout {
    /// Cores in order, each followed by its tasks in id order; a core appears if the metrics
    /// list it, a task is on it, or the trace shows it.
    fn new(outcome: &Outcome, trace: &bulwark_sim::Trace) -> Layout {
        let from_metrics = u16::try_from(outcome.cores.len()).unwrap_or(u16::MAX);
        let from_tasks = outcome
            .tasks
            .iter()
            .map(|task| task.core.saturating_add(1))
            .max();
        let from_trace = trace
            .slices
            .iter()
            .map(|slice| slice.core.saturating_add(1))
            .max();
        let cores = from_metrics
            .max(from_tasks.unwrap_or(0))
            .max(from_trace.unwrap_or(0));
        let mut core_tops = Vec::with_capacity(usize::from(cores));
        let mut row_tops = vec![0; outcome.tasks.len()];
        let mut y = TITLE_HEIGHT;
        for core in 0..cores {
            core_tops.push(y);
            y += CORE_HEADER_HEIGHT;
            for (task, metrics) in outcome.tasks.iter().enumerate() {
                if metrics.core == core {
                    row_tops[task] = y;
                    y += ROW_HEIGHT;
                }
            }
        }
        Layout {
            cores,
            core_tops,
            row_tops,
            rows_bottom: y,
        }
    }
}

/// What one task's row shows, before merging; marks are x coordinates.
#[derive(Default)]
struct RowContent {
    execution: Vec<(u64, u64)>,
    server: Vec<(u64, u64)>,
    refill: Vec<(u64, u64)>,
    kernel: Vec<(u64, u64)>,
    releases: Vec<i64>,
    completions: Vec<i64>,
    deadlines: Vec<i64>,
    misses: Vec<i64>,
}

/// Sorts `spans` and joins those less than `gap` apart, so invisible gaps cost no elements.
fn merged(spans: &mut [(u64, u64)], gap: u64) -> Vec<(u64, u64)> {
    spans.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(spans.len());
    for &(start, end) in spans.iter() {
        match out.last_mut() {
            Some(last) if start <= last.1.saturating_add(gap) => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// Sorts x coordinates and keeps one per pixel column.
fn one_per_column(xs: &mut Vec<i64>) {
    xs.sort_unstable();
    xs.dedup_by_key(|x| *x / 100);
}

/// Hundredths of a pixel as a decimal with two places.
fn centi(value: i64) -> String {
    let sign = if value < 0 { "-" } else { "" };
    let magnitude = value.unsigned_abs();
    format!("{sign}{}.{:02}", magnitude / 100, magnitude % 100)
}

fn hex((red, green, blue): (u8, u8, u8)) -> String {
    format!("#{red:02x}{green:02x}{blue:02x}")
}

/// The colour mixed 55% of the way to white, for cache refill.
fn lighter((red, green, blue): (u8, u8, u8)) -> (u8, u8, u8) {
    let lift = |channel: u8| channel + ((255 - u16::from(channel)) * 55 / 100) as u8;
    (lift(red), lift(green), lift(blue))
}

fn task_colour(task: usize) -> (u8, u8, u8) {
    PALETTE[task % PALETTE.len()]
}

fn label(name: &str) -> String {
    if name.chars().count() > MAX_LABEL_CHARS {
        let mut cut: String = name.chars().take(MAX_LABEL_CHARS - 1).collect();
        cut.push('\u{2026}');
        cut
    } else {
        name.to_string()
    }
}

/// Boxes for `spans` between `top` and `bottom`, each at least [`MIN_BOX`] wide and kept inside
/// the plot.
fn write_boxes(svg: &mut String, scale: &Scale, spans: &[(u64, u64)], top: i64, bottom: i64) {
    let right = (LABEL_WIDTH + PLOT_WIDTH) * 100;
    for &(start, end) in spans {
        let mut x = scale.x(start);
        let width = (scale.x(end) - x).max(MIN_BOX);
        x = x.min(right - width);
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{top}\" width=\"{}\" height=\"{}\"/>",
            centi(x),
            centi(width),
            bottom - top
        );
    }
}

/// A group of boxes in one fill, or nothing if there are none.
fn write_lane(
    svg: &mut String,
    scale: &Scale,
    class: &str,
    fill: &str,
    spans: &[(u64, u64)],
    top: i64,
    bottom: i64,
) {
    if spans.is_empty() {
        return;
    }
    let _ = writeln!(svg, "<g class=\"{class}\" fill=\"{fill}\">");
    write_boxes(svg, scale, spans, top, bottom);
    svg.push_str("</g>\n");
}

fn write_grid(svg: &mut String, scale: &Scale, ticks: &[u64], axis_y: i64) {
    svg.push_str("<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n");
    for &tick in ticks {
        let x = centi(scale.x(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{TITLE_HEIGHT}\" x2=\"{x}\" y2=\"{axis_y}\"/>"
        );
    }
    svg.push_str("</g>\n");
}

fn write_core_header(
    svg: &mut String,
    scale: &Scale,
    core: u16,
    label: &str,
    top: i64,
    idle: Vec<(u64, u64)>,
) {
    let _ = writeln!(svg, "<g class=\"core\" data-core=\"{core}\">");
    let right = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN;
    let _ = writeln!(
        svg,
        "<line x1=\"0\" y1=\"{top}\" x2=\"{right}\" y2=\"{top}\" stroke=\"#bbbbbb\" stroke-width=\"1\"/>"
    );
    let _ = writeln!(
        svg,
        "<text x=\"8\" y=\"{}\" font-weight=\"bold\">{label}</text>",
        top + 15
    );
    write_lane(
        svg,
        scale,
        "kernel-idle",
        KERNEL_COLOUR,
        &idle,
        top + 9,
        top + 14,
    );
    svg.push_str("</g>\n");
}

fn write_row(
    svg: &mut String,
    scale: &Scale,
    task: usize,
    name: &str,
    top: i64,
    row: &mut RowContent,
    merge_gap: u64,
) {
    let colour = task_colour(task);
    let (box_top, box_bottom) = (top + BOX_TOP, top + BOX_BOTTOM);
    let _ = writeln!(svg, "<g class=\"task\" data-task=\"{task}\">");
    let _ = writeln!(
        svg,
        "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
        LABEL_WIDTH - 8,
        box_top + 12,
        escape(&label(name))
    );
    let _ = writeln!(
        svg,
        "<line x1=\"{LABEL_WIDTH}\" y1=\"{box_bottom}\" x2=\"{}\" y2=\"{box_bottom}\" stroke=\"#888888\" stroke-width=\"1\"/>",
        LABEL_WIDTH + PLOT_WIDTH
    );
    // Drawn in this order so kernel time shows on top of the execution around it.
    let execution = merged(&mut row.execution, merge_gap);
    write_lane(
        svg,
        scale,
        "execution",
        &hex(colour),
        &execution,
        box_top,
        box_bottom,
    );
    let server = merged(&mut row.server, merge_gap);
    if !server.is_empty() {
        write_lane(
            svg,
            scale,
            "server",
            SERVER_COLOUR,
            &server,
            box_top,
            box_bottom,
        );
    }
    let refill = merged(&mut row.refill, merge_gap);
    write_lane(
        svg,
        scale,
        "refill",
        &hex(lighter(colour)),
        &refill,
        box_top,
        box_bottom,
    );
    let kernel = merged(&mut row.kernel, merge_gap);
    write_lane(
        svg,
        scale,
        "kernel",
        KERNEL_COLOUR,
        &kernel,
        box_top,
        box_bottom,
    );

    one_per_column(&mut row.releases);
    one_per_column(&mut row.deadlines);
    one_per_column(&mut row.completions);
    row.misses.sort_unstable();
    let arrow_top = top + ARROW_TOP;
    for &x in &row.releases {
        write_arrow(svg, "release", &up_arrow(x, box_bottom, arrow_top));
    }
    for &x in &row.deadlines {
        write_arrow(svg, "deadline", &down_arrow(x, arrow_top, box_bottom));
    }
    for &x in &row.completions {
        write_completion(svg, x, box_bottom, box_bottom + 5);
    }
    for &x in &row.misses {
        write_cross(svg, &cross(x, (box_top + box_bottom) / 2));
    }
    svg.push_str("</g>\n");
}

fn write_arrow(svg: &mut String, class: &str, path: &str) {
    let _ = writeln!(
        svg,
        "<path class=\"{class}\" d=\"{path}\" fill=\"#000000\" stroke=\"#000000\" stroke-width=\"1\"/>"
    );
}

fn write_cross(svg: &mut String, path: &str) {
    let _ = writeln!(
        svg,
        "<path class=\"miss\" d=\"{path}\" fill=\"none\" stroke=\"{MISS_COLOUR}\" stroke-width=\"2\"/>"
    );
}

fn write_completion(svg: &mut String, x: i64, top: i64, bottom: i64) {
    let x = centi(x);
    let _ = writeln!(
        svg,
        "<line class=\"completion\" x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#000000\" stroke-width=\"1.5\"/>"
    );
}

/// A vertical arrow from `base` up to `tip`, head included, as one path.
fn up_arrow(x: i64, base: i64, tip: i64) -> String {
    format!(
        "M{} {base}V{}M{} {}L{} {tip}L{} {}Z",
        centi(x),
        tip + 5,
        centi(x - 300),
        tip + 5,
        centi(x),
        centi(x + 300),
        tip + 5
    )
}

/// A vertical arrow from `start` down to `tip`.
fn down_arrow(x: i64, start: i64, tip: i64) -> String {
    format!(
        "M{} {start}V{}M{} {}L{} {tip}L{} {}Z",
        centi(x),
        tip - 5,
        centi(x - 300),
        tip - 5,
        centi(x),
        centi(x + 300),
        tip - 5
    )
}

/// A cross centred on (`x`, `y`).
fn cross(x: i64, y: i64) -> String {
    format!(
        "M{} {}L{} {}M{} {}L{} {}",
        centi(x - 400),
        y - 4,
        centi(x + 400),
        y + 4,
        centi(x - 400),
        y + 4,
        centi(x + 400),
        y - 4
    )
}

fn write_axis(svg: &mut String, scale: &Scale, ticks: &[u64], axis_y: i64) {
    svg.push_str("<g class=\"axis\">\n");
    let _ = writeln!(
        svg,
        "<line x1=\"{LABEL_WIDTH}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\" stroke=\"#000000\" stroke-width=\"1\"/>",
        LABEL_WIDTH + PLOT_WIDTH
    );
    for &tick in ticks {
        let x = centi(scale.x(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{axis_y}\" x2=\"{x}\" y2=\"{}\" stroke=\"#000000\" stroke-width=\"1\"/>",
            axis_y + 5
        );
        let _ = writeln!(
            svg,
            "<text class=\"tick\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            axis_y + 18,
            tick_label(tick)
        );
    }
    svg.push_str("</g>\n");
}

/// What a legend entry shows beside its text.
enum Symbol {
    Swatch(String),
    Release,
    Deadline,
    Completion,
    Miss,
}

/// The legend, on one line below the axis; `top` is the text's baseline.
fn write_legend(
    svg: &mut String,
    top: i64,
    show_deadlines: bool,
    show_server: bool,
    show_spin: bool,
) {
    let refill = if show_spin {
        "refill or spin"
    } else {
        "cache refill"
    };
    let mut entries = vec![("execution", Symbol::Swatch(hex(PALETTE[0])))];
    if show_server {
        entries.push(("server", Symbol::Swatch(SERVER_COLOUR.to_string())));
    }
    entries.extend([
        (refill, Symbol::Swatch(hex(lighter(PALETTE[0])))),
        ("kernel", Symbol::Swatch(KERNEL_COLOUR.to_string())),
        ("release", Symbol::Release),
    ]);
    if show_deadlines {
        entries.push(("deadline", Symbol::Deadline));
    }
    entries.push(("completion", Symbol::Completion));
    entries.push(("deadline miss", Symbol::Miss));

    svg.push_str("<g class=\"legend\">\n");
    // 130 px an entry, closer when that would run past the plot (with a server lane).
    let step = 13_000.min(PLOT_WIDTH * 100 / entries.len() as i64);
    let mut x = LABEL_WIDTH * 100;
    for (text, symbol) in entries {
        let middle = x + 700;
        match symbol {
            Symbol::Swatch(fill) => {
                let _ = writeln!(
                    svg,
                    "<rect x=\"{}\" y=\"{}\" width=\"14.00\" height=\"10\" fill=\"{fill}\"/>",
                    centi(x),
                    top - 9
                );
            }
            Symbol::Release => write_arrow(svg, "release", &up_arrow(middle, top + 2, top - 12)),
            Symbol::Deadline => {
                write_arrow(svg, "deadline", &down_arrow(middle, top - 12, top + 2))
            }
            Symbol::Completion => write_completion(svg, middle, top - 6, top + 1),
            Symbol::Miss => write_cross(svg, &cross(middle, top - 4)),
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{top}\">{text}</text>",
            centi(x + 2000)
        );
        x += step;
    }
    svg.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{awkward_names, two_tasks_one_core, AWKWARD_NAME};
    use bulwark_core::TaskId;
    use bulwark_sim::{Mark, Slice, TaskMetrics};

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    /// The fixture over its whole run, 0 to 4 ms: 940 px for 4_000_000 ns, so x in hundredths
    /// of a pixel is 15_000 + t * 94_000 / 4_000_000, rounded down.
    fn whole_run() -> String {
        gantt_svg(&two_tasks_one_core(), at(0), at(4_000_000)).expect("a trace and a window")
    }

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("well-formed XML")
    }

    /// The rects of lane `class` on task `task`'s row, as (x, width) attribute strings.
    fn boxes(document: &roxmltree::Document<'_>, task: &str, class: &str) -> Vec<(String, String)> {
        document
            .descendants()
            .filter(|node| node.attribute("data-task") == Some(task))
            .flat_map(|row| row.children())
            .filter(|node| node.attribute("class") == Some(class))
            .flat_map(|lane| lane.children())
            .filter(|node| node.has_tag_name("rect"))
            .map(|rect| {
                (
                    rect.attribute("x").unwrap().to_string(),
                    rect.attribute("width").unwrap().to_string(),
                )
            })
            .collect()
    }

    fn marks(document: &roxmltree::Document<'_>, task: &str, class: &str) -> usize {
        document
            .descendants()
            .filter(|node| node.attribute("data-task") == Some(task))
            .flat_map(|row| row.children())
            .filter(|node| node.attribute("class") == Some(class))
            .count()
    }

    fn texts<'a>(document: &'a roxmltree::Document<'_>, class: &str) -> Vec<&'a str> {
        document
            .descendants()
            .filter(|node| node.has_tag_name("text") && node.attribute("class") == Some(class))
            .map(|node| node.text().unwrap_or(""))
            .collect()
    }

    #[test]
    fn nothing_to_draw_gives_none() {
        let mut outcome = two_tasks_one_core();
        assert_eq!(gantt_svg(&outcome, at(5), at(5)), None);
        assert_eq!(gantt_svg(&outcome, at(6), at(5)), None);
        outcome.trace = None;
        assert_eq!(gantt_svg(&outcome, at(0), at(5)), None);
    }

    #[test]
    fn nice_steps_are_one_two_five_times_a_power_of_ten() {
        assert_eq!(nice_step(1), 1);
        assert_eq!(nice_step(10), 1);
        assert_eq!(nice_step(11), 2);
        assert_eq!(nice_step(21), 5);
        assert_eq!(nice_step(51), 10);
        assert_eq!(nice_step(4_000_000), 500_000);
        assert_eq!(nice_step(20_000_000), 2_000_000);
        assert_eq!(nice_step(u64::MAX), 2_000_000_000_000_000_000);
        assert_eq!(tick_times(1_200, 4_100, 1_000), [2_000, 3_000, 4_000]);
        assert_eq!(
            tick_times(u64::MAX - 1, u64::MAX, 1),
            [u64::MAX - 1, u64::MAX]
        );
        // The next multiple of the step would overflow: no tick, rather than a wrong one.
        assert!(tick_times(u64::MAX - 1, u64::MAX, 2_000_000_000_000_000_000).is_empty());
    }

    #[test]
    fn axis_ticks_read_in_sensible_units() {
        let svg = whole_run();
        let document = parse(&svg);
        assert_eq!(
            texts(&document, "tick"),
            ["0", "500us", "1ms", "1.5ms", "2ms", "2.5ms", "3ms", "3.5ms", "4ms"]
        );
        // The 1 ms tick sits at 15_000 + 1_000_000 * 94_000 / 4_000_000 = 38_500.
        assert!(svg.contains("<text class=\"tick\" x=\"385.00\""));
    }

    #[test]
    fn boxes_sit_at_hand_computed_coordinates() {
        let svg = whole_run();
        let document = parse(&svg);
        // ctl executes 1_500..1_001_500: x = 15_000 + 35 (35.25 rounded down), end 38_535.
        assert_eq!(
            boxes(&document, "0", "execution"),
            [("150.35".into(), "235.00".into())]
        );
        // Kernel 0..1_500 is 0.35 px wide: widened to the 0.5 px minimum.
        assert_eq!(
            boxes(&document, "0", "kernel"),
            [("150.00".into(), "0.50".into())]
        );
        // log refills 1_002_250..1_052_250 (23_552 to 24_727) and executes to 3_000_000 (85_500).
        assert_eq!(
            boxes(&document, "1", "refill"),
            [("385.52".into(), "11.75".into())]
        );
        assert_eq!(
            boxes(&document, "1", "execution"),
            [("397.27".into(), "457.73".into())]
        );
        assert_eq!(
            boxes(&document, "1", "kernel"),
            [("385.35".into(), "0.50".into())]
        );
        assert!(boxes(&document, "0", "refill").is_empty());
        // The idle kernel time sits on the core's header band.
        let idle: Vec<_> = document
            .descendants()
            .filter(|node| node.attribute("class") == Some("kernel-idle"))
            .flat_map(|lane| lane.children())
            .filter(|node| node.has_tag_name("rect"))
            .map(|rect| rect.attribute("x").unwrap())
            .collect();
        assert_eq!(idle, ["855.00"]);
    }

    #[test]
    fn task_colours_differ_and_refill_is_lighter() {
        let svg = whole_run();
        assert!(svg.contains("<g class=\"execution\" fill=\"#4e79a7\">"));
        assert!(svg.contains("<g class=\"execution\" fill=\"#f28e2b\">"));
        // 0xf2 + (0xff - 0xf2) * 55 / 100 = 249, 0x8e + 0x71 * 0.55 = 204, 0x2b + 0xd4 * 0.55 = 159.
        assert!(svg.contains("<g class=\"refill\" fill=\"#f9cc9f\">"));
    }

    #[test]
    fn job_events_become_arrows_ticks_and_crosses() {
        let svg = whole_run();
        let document = parse(&svg);
        assert_eq!(marks(&document, "0", "release"), 1);
        assert_eq!(marks(&document, "1", "release"), 1);
        assert_eq!(marks(&document, "0", "completion"), 1);
        assert_eq!(marks(&document, "1", "completion"), 1);
        assert_eq!(marks(&document, "0", "deadline"), 1);
        assert_eq!(marks(&document, "1", "deadline"), 1);
        assert_eq!(marks(&document, "0", "miss"), 0);
        assert_eq!(marks(&document, "1", "miss"), 1);
        let miss = document
            .descendants()
            .find(|node| {
                node.attribute("class") == Some("miss")
                    && node.parent().unwrap().attribute("data-task").is_some()
            })
            .unwrap();
        // The deadline at 2 ms is x = 620.00; log's row starts at 40 + 20 + 34 = 94, boxes 106..122.
        assert_eq!(
            miss.attribute("d"),
            Some("M616.00 110L624.00 118M616.00 118L624.00 110")
        );
    }

    #[test]
    fn deadlines_need_job_records() {
        let mut outcome = two_tasks_one_core();
        outcome.jobs = None;
        let svg = gantt_svg(&outcome, at(0), at(4_000_000)).unwrap();
        let document = parse(&svg);
        assert_eq!(marks(&document, "0", "deadline"), 0);
        assert_eq!(marks(&document, "1", "deadline"), 0);
        assert_eq!(marks(&document, "1", "miss"), 1);
        assert!(!svg.contains(">deadline<"));
        assert!(whole_run().contains(">deadline<"));
    }

    #[test]
    fn window_clips_boxes_and_marks() {
        let outcome = two_tasks_one_core();
        let svg = gantt_svg(&outcome, at(1_000_000), at(2_000_000)).unwrap();
        let document = parse(&svg);
        // ctl's execution is cut to 1_000_000..1_001_500: 1_500 * 94_000 / 1_000_000 = 141.
        assert_eq!(
            boxes(&document, "0", "execution"),
            [("150.00".into(), "1.41".into())]
        );
        // log's execution, 1_052_250..3_000_000, starts at 15_000 + 52_250 * 0.094 = 19_911
        // (rounded down) and is cut at the window's end, 2 ms = 109_000.
        assert_eq!(
            boxes(&document, "1", "execution"),
            [("199.11".into(), "890.89".into())]
        );
        assert_eq!(marks(&document, "0", "release"), 0);
        assert_eq!(marks(&document, "1", "completion"), 0);
        // The miss is stamped exactly at the window's end, which is inside.
        assert_eq!(marks(&document, "1", "miss"), 1);
        assert_eq!(
            texts(&document, "tick"),
            [
                "1ms", "1.1ms", "1.2ms", "1.3ms", "1.4ms", "1.5ms", "1.6ms", "1.7ms", "1.8ms",
                "1.9ms", "2ms"
            ]
        );
    }

    /// `count` back-to-back execution slices of task 0, each `length` ns, after a gap of `gap`.
    fn dense(count: u64, length: u64, gap: u64) -> Outcome {
        let mut outcome = two_tasks_one_core();
        let trace = outcome.trace.as_mut().unwrap();
        trace.slices.clear();
        trace.marks.clear();
        for index in 0..count {
            let start = index * (length + gap);
            trace.slices.push(Slice {
                core: 0,
                task: Some(TaskId(0)),
                kind: SliceKind::Task,
                start: at(start),
                end: at(start + length),
            });
            for kind in [MarkKind::Release, MarkKind::DeadlineMiss] {
                trace.marks.push(Mark {
                    task: TaskId(0),
                    core: 0,
                    kind,
                    at: at(start),
                    job: index,
                });
            }
        }
        outcome.jobs = None;
        outcome
    }

    #[test]
    fn adjacent_and_sub_pixel_gaps_merge_but_misses_stay() {
        // 1_000 slices of 900 ns with 100 ns gaps over 1 ms: a pixel is about 1_064 ns.
        let outcome = dense(1_000, 900, 100);
        let svg = gantt_svg(&outcome, at(0), at(1_000_000)).unwrap();
        let document = parse(&svg);
        assert_eq!(
            boxes(&document, "0", "execution"),
            [("150.00".into(), "939.90".into())]
        );
        // All merge into 0..999_900 (x end 93_990). Release i is at 94 * i hundredths of a pixel:
        // one per pixel column keeps floor(0.94 * i), 940 distinct columns for i < 1_000.
        assert_eq!(marks(&document, "0", "release"), 940);
        assert_eq!(marks(&document, "0", "miss"), 1_000);
    }

    #[test]
    fn visible_gaps_keep_boxes_apart() {
        // 10 slices of 1 us with 9 us gaps over 100 us: 8.46 px gaps stay.
        let outcome = dense(10, 1_000, 9_000);
        let svg = gantt_svg(&outcome, at(0), at(100_000)).unwrap();
        let document = parse(&svg);
        let drawn = boxes(&document, "0", "execution");
        assert_eq!(drawn.len(), 10);
        assert_eq!(drawn[1], ("244.00".into(), "9.40".into()));
    }

    #[test]
    fn rows_are_grouped_by_core() {
        let mut outcome = two_tasks_one_core();
        outcome.tasks[0].core = 1;
        outcome.tasks.push(TaskMetrics {
            name: "third".into(),
            core: 0,
            ..TaskMetrics::default()
        });
        let svg = gantt_svg(&outcome, at(0), at(4_000_000)).unwrap();
        let document = parse(&svg);
        let order: Vec<_> = document
            .descendants()
            .filter(|node| node.has_tag_name("text"))
            .filter_map(|node| node.text())
            .filter(|text| text.starts_with("core ") || ["ctl", "log", "third"].contains(text))
            .collect();
        assert_eq!(order, ["core 0", "log", "third", "core 1", "ctl"]);
    }

    /// A core of a cluster names its cluster in its header (escaped); others do not.
    #[test]
    fn a_clusters_cores_name_their_cluster() {
        let plain = gantt_svg(&two_tasks_one_core(), at(0), at(4_000_000)).unwrap();
        assert!(plain.contains("font-weight=\"bold\">core 0</text>"));
        let mut outcome = two_tasks_one_core();
        outcome.clusters.push(bulwark_sim::ClusterMembers {
            name: "g<1>".into(),
            cores: vec![0],
            tasks: vec![0, 1],
            drained_ns: vec![0, 0],
        });
        let svg = gantt_svg(&outcome, at(0), at(4_000_000)).unwrap();
        assert!(svg.contains("font-weight=\"bold\">core 0 (cluster g&lt;1&gt;)</text>"));
        parse(&svg);
    }

    #[test]
    fn names_are_escaped_and_long_ones_cut() {
        let mut outcome = awkward_names();
        outcome.tasks[0].name = "a-very-long-task-name-that-overflows".into();
        let svg = gantt_svg(&outcome, at(0), at(4_000_000)).unwrap();
        let document = parse(&svg);
        assert_eq!(
            texts(&document, "label"),
            ["a-very-long-task-name\u{2026}", AWKWARD_NAME]
        );
        assert!(svg.contains("log&lt;&amp;&gt;&quot;"));
        assert_eq!(gantt_svg(&outcome, at(0), at(4_000_000)).unwrap(), svg);
    }

    #[test]
    fn title_and_legend_say_what_is_shown() {
        let svg = whole_run();
        let document = parse(&svg);
        assert_eq!(
            texts(&document, "title"),
            ["two-tasks \u{2014} fixed-priority (seed 42), 0 to 4ms"]
        );
        let legend: Vec<_> = document
            .descendants()
            .filter(|node| node.attribute("class") == Some("legend"))
            .flat_map(|legend| legend.children())
            .filter(|node| node.has_tag_name("text"))
            .filter_map(|node| node.text())
            .collect();
        assert_eq!(
            legend,
            [
                "execution",
                "cache refill",
                "kernel",
                "release",
                "deadline",
                "completion",
                "deadline miss"
            ]
        );
    }
}
