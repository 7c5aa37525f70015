//! SVG line charts for parameter sweeps, and scatter charts of one point per job, in the
//! style of the papers' evaluation figures.
//!
//! One polyline per series with a marker at every point, each series in its own colour and
//! marker shape; axes with ticks, tick labels and axis labels; a legend beside the plot, never
//! over it, so no label can hide a point. Either axis of a line chart can be logarithmic
//! ([`Scale::Log`]): sweeps over task counts double or quadruple N, and latencies that span
//! decades are unreadable on a linear axis. A logarithmic axis ticks at powers of two when
//! every value is one (N = 1, 4, 16, ...), and at 1, 2 and 5 x 10^k otherwise. A linear y axis
//! starts at zero when every value is non-negative, so flat and growing curves are told apart
//! at a glance. Tick labels that would overlap are thinned to every second (third, ...) tick.
//! A scatter chart draws small markers only, on a linear or logarithmic y axis, with dashed
//! reference lines (a predicted bound, phase boundaries); a horizontal line is named in the
//! legend, a vertical one above the plot.
//!
//! Output is byte-deterministic: coordinates are printed with two decimals and nothing
//! iterates a hash. Points that cannot be drawn (not finite, or at or below zero on a
//! logarithmic axis) are left out; an empty series still gets its (empty) group and legend
//! entry.

use std::fmt::{Display, Write as _};

use crate::markup::escape;

/// One named curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// `(x, y)` points, drawn in the order given.
    pub points: Vec<(f64, f64)>,
    /// Drawn larger and outlined, for the few points a reader must not miss (a starved
    /// request among a thousand served ones).
    pub emphasised: bool,
}

impl Series {
    /// A series called `name` through `points`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
            emphasised: false,
        }
    }

    /// The same series, drawn larger and outlined.
    pub fn emphasised(mut self) -> Self {
        self.emphasised = true;
        self
    }
}

/// Total width, in pixels, at least: a long legend widens the figure.
const WIDTH: f64 = 760.0;
/// A generous estimate of a legend character's width at 12 px, so no name is cut.
const CHARACTER_WIDTH: f64 = 7.5;
/// Total height, in pixels.
const HEIGHT: f64 = 440.0;
/// The plot area's edges.
const PLOT_LEFT: f64 = 86.0;
const PLOT_RIGHT: f64 = 540.0;
const PLOT_TOP: f64 = 48.0;
const PLOT_BOTTOM: f64 = 370.0;
/// Where the legend starts.
const LEGEND_LEFT: f64 = 560.0;
/// At most this many intervals between linear ticks.
const MAX_TICKS: f64 = 8.0;
/// Tick length, in pixels.
const TICK: f64 = 5.0;
/// A tick label digit's width at 12 px, rounded up, and the least space between two labels.
const TICK_CHARACTER_WIDTH: f64 = 7.0;
const TICK_LABEL_GAP: f64 = 8.0;

/// Series colours: told apart easily, and cycled past eight series.
const COLOURS: [&str; 8] = [
    "#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#9c755f", "#edc948",
];

/// Marker shapes, cycled independently of colours so that neighbouring series differ in both.
#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    Cross,
}

const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::Cross,
];

/// How an axis maps values to positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Equal steps for equal differences; a y axis starts at zero when no value is negative.
    Linear,
    /// Equal steps for equal ratios; values at or below zero are left out.
    Log,
}

/// A line chart of `series` as a standalone SVG document, on a linear y axis. With `log_x`
/// the x axis is logarithmic and points with `x <= 0` are left out. The same as
/// [`line_plot_scaled`] with [`Scale::Linear`] for y.
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
) -> String {
    let x_scale = if log_x { Scale::Log } else { Scale::Linear };
    line_plot_scaled(title, x_label, y_label, series, x_scale, Scale::Linear)
}

/// A line chart of `series` as a standalone SVG document, each axis on its own [`Scale`]. A
/// logarithmic axis ticks at powers of two when every value on it is a power of two and they
/// span at most twelve doublings, at 1, 2 and 5 x 10^k otherwise; points at or below zero on
/// a logarithmic axis are left out.
pub fn line_plot_scaled(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    x_scale: Scale,
    y_scale: Scale,
) -> String {
    let fits =
        |value: f64, scale: Scale| value.is_finite() && (scale == Scale::Linear || value > 0.0);
    let drawable = |&(x, y): &(f64, f64)| fits(x, x_scale) && fits(y, y_scale);
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().copied().filter(drawable).collect())
        .collect();
    let all = || points.iter().flatten();
    let x_axis = match x_scale {
        Scale::Log => Axis::logarithmic(all().map(|p| p.0)),
        Scale::Linear => Axis::linear(all().map(|p| p.0), false),
    };
    let y_axis = match y_scale {
        Scale::Log => Axis::decades(all().map(|p| p.1), true),
        Scale::Linear => Axis::linear(all().map(|p| p.1), true),
    };
    let frame = Frame::new(title, x_label, y_label, x_axis, y_axis, series, &[]);
    let mut svg = frame.open();
    for (index, (s, drawn)) in series.iter().zip(&points).enumerate() {
        let (colour, marker) = style(index);
        frame.open_series(&mut svg, index, &s.name);
        let path: Vec<String> = drawn
            .iter()
            .map(|&(px, py)| format!("{},{}", fixed(frame.x(px)), fixed(frame.y(py))))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(px, py) in drawn {
            write_marker(&mut svg, marker, colour, frame.x(px), frame.y(py), MARKER);
        }
        svg.push_str("</g>\n");
    }
    frame.close(svg, series, true, &[])
}

/// A scatter chart of `series` as a standalone SVG document: small markers, no lines, as the
/// papers plot one point per job. With `log_y` the y axis is logarithmic in whole decades
/// (ticks at 1, 2 and 5 x 10^k over a few decades) and points with `y <= 0` are left out;
/// otherwise it is linear from zero. The x axis is linear. `horizontal` draws dashed
/// reference lines across the plot at those y values (a predicted bound), named in the
/// legend; `vertical` draws dashed lines at those x values (phase boundaries), labelled
/// above the plot. Both are kept inside the axes' ranges, and no label lies over the plot.
pub fn scatter_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_y: bool,
    horizontal: &[(f64, String)],
    vertical: &[(f64, String)],
) -> String {
    let drawable = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (!log_y || y > 0.0);
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().copied().filter(drawable).collect())
        .collect();
    let horizontal: Vec<&(f64, String)> = horizontal
        .iter()
        .filter(|(y, _)| y.is_finite() && (!log_y || *y > 0.0))
        .collect();
    let vertical: Vec<&(f64, String)> = vertical.iter().filter(|(x, _)| x.is_finite()).collect();
    let all = || points.iter().flatten();
    let x_axis = Axis::linear(
        all().map(|p| p.0).chain(vertical.iter().map(|v| v.0)),
        false,
    );
    let ys = || all().map(|p| p.1).chain(horizontal.iter().map(|h| h.0));
    let y_axis = if log_y {
        Axis::decades(ys(), true)
    } else {
        Axis::linear(ys(), true)
    };
    let references: Vec<String> = horizontal.iter().map(|h| h.1.clone()).collect();
    let frame = Frame::new(title, x_label, y_label, x_axis, y_axis, series, &references);
    let mut svg = frame.open();

    for (index, (s, drawn)) in series.iter().zip(&points).enumerate() {
        let (colour, marker) = style(index);
        frame.open_series(&mut svg, index, &s.name);
        if s.emphasised {
            svg.push_str("<g stroke=\"#000000\" stroke-width=\"1\">\n");
        }
        let radius = if s.emphasised {
            EMPHASISED_MARKER
        } else {
            SCATTER_MARKER
        };
        for &(px, py) in drawn {
            write_marker(&mut svg, marker, colour, frame.x(px), frame.y(py), radius);
        }
        if s.emphasised {
            svg.push_str("</g>\n");
        }
        svg.push_str("</g>\n");
    }

    // Over the points, so that a bound stays visible among a thousand of them.
    svg.push_str("<g class=\"reference\" font-size=\"10\">\n");
    for (x, label) in &vertical {
        let px = fixed(frame.x(*x));
        let _ = writeln!(
            svg,
            "<line x1=\"{px}\" y1=\"{PLOT_TOP}\" x2=\"{px}\" y2=\"{PLOT_BOTTOM}\" \
             stroke=\"#999999\" stroke-dasharray=\"4 3\"/>"
        );
        let _ = writeln!(
            svg,
            "<text x=\"{px}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666666\">{}</text>",
            PLOT_TOP - 4.0,
            escape(label)
        );
    }
    for (y, label) in &horizontal {
        let _ = writeln!(
            svg,
            "<line x1=\"{PLOT_LEFT}\" y1=\"{0}\" x2=\"{PLOT_RIGHT}\" y2=\"{0}\" \
             stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\">\
             <title>{1}</title></line>",
            fixed(frame.y(*y)),
            escape(label)
        );
    }
    svg.push_str("</g>\n");
    frame.close(svg, series, false, &references)
}

/// The colour of a horizontal reference line (a bound) and of its legend entry.
const REFERENCE_COLOUR: &str = "#8b0000";

/// Marker radius on line charts, in pixels.
const MARKER: f64 = 4.0;
/// Marker radius on scatter charts: many points, small markers.
const SCATTER_MARKER: f64 = 2.0;
/// Marker radius of an emphasised series on a scatter chart.
const EMPHASISED_MARKER: f64 = 5.0;

/// The colour and marker of series `index`.
fn style(index: usize) -> (&'static str, Marker) {
    (
        COLOURS[index % COLOURS.len()],
        MARKERS[index % MARKERS.len()],
    )
}

/// What every chart shares: the document, title, grid, axes, tick labels, axis labels and
/// legend, around the plot area where the series go.
struct Frame<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    x_axis: Axis,
    y_axis: Axis,
    width: f64,
}

impl<'a> Frame<'a> {
    fn new(
        title: &'a str,
        x_label: &'a str,
        y_label: &'a str,
        x_axis: Axis,
        y_axis: Axis,
        series: &[Series],
        references: &[String],
    ) -> Frame<'a> {
        let longest = series
            .iter()
            .map(|s| s.name.chars().count())
            .chain(references.iter().map(|r| r.chars().count()))
            .max()
            .unwrap_or(0);
        let width = WIDTH.max((LEGEND_LEFT + 46.0 + CHARACTER_WIDTH * longest as f64).ceil());
        Frame {
            title,
            x_label,
            y_label,
            x_axis,
            y_axis,
            width,
        }
    }

    fn x(&self, value: f64) -> f64 {
        self.x_axis.position(value, PLOT_LEFT, PLOT_RIGHT)
    }

    fn y(&self, value: f64) -> f64 {
        self.y_axis.position(value, PLOT_BOTTOM, PLOT_TOP)
    }

    /// The document up to the plot area: title, grid, axes, ticks and labels.
    fn open(&self) -> String {
        let width = self.width;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{HEIGHT}\" \
             viewBox=\"0 0 {width} {HEIGHT}\" font-family=\"sans-serif\" font-size=\"12\">"
        );
        let _ = writeln!(
            svg,
            "<rect width=\"{width}\" height=\"{HEIGHT}\" fill=\"#ffffff\"/>"
        );
        let _ = writeln!(
            svg,
            "<text class=\"title\" x=\"{PLOT_LEFT}\" y=\"28\" font-size=\"14\" font-weight=\"bold\">{}</text>",
            escape(self.title)
        );

        // Grid and ticks.
        svg.push_str("<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n");
        for &tick in &self.x_axis.ticks {
            let px = fixed(self.x(tick));
            line(&mut svg, &px, PLOT_TOP, &px, PLOT_BOTTOM);
        }
        for &tick in &self.y_axis.ticks {
            let py = fixed(self.y(tick));
            line(&mut svg, PLOT_LEFT, &py, PLOT_RIGHT, &py);
        }
        svg.push_str("</g>\n");

        svg.push_str("<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\">\n");
        line(&mut svg, PLOT_LEFT, PLOT_BOTTOM, PLOT_RIGHT, PLOT_BOTTOM);
        line(&mut svg, PLOT_LEFT, PLOT_TOP, PLOT_LEFT, PLOT_BOTTOM);
        for &tick in &self.x_axis.ticks {
            let px = fixed(self.x(tick));
            line(&mut svg, &px, PLOT_BOTTOM, &px, PLOT_BOTTOM + TICK);
        }
        for &tick in &self.y_axis.ticks {
            let py = fixed(self.y(tick));
            line(&mut svg, PLOT_LEFT - TICK, &py, PLOT_LEFT, &py);
        }
        svg.push_str("</g>\n");

        svg.push_str("<g class=\"tick-labels\" fill=\"#333333\">\n");
        for &tick in self.x_axis.ticks.iter().step_by(self.x_label_stride()) {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                fixed(self.x(tick)),
                PLOT_BOTTOM + TICK + 14.0,
                escape(&self.x_axis.label(tick))
            );
        }
        for &tick in &self.y_axis.ticks {
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
                PLOT_LEFT - TICK - 3.0,
                fixed(self.y(tick) + 4.0),
                escape(&self.y_axis.label(tick))
            );
        }
        svg.push_str("</g>\n");

        let _ = writeln!(
            svg,
            "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            fixed((PLOT_LEFT + PLOT_RIGHT) / 2.0),
            PLOT_BOTTOM + 48.0,
            escape(self.x_label)
        );
        let y_middle = fixed((PLOT_TOP + PLOT_BOTTOM) / 2.0);
        let _ = writeln!(
            svg,
            "<text class=\"y-label\" x=\"20\" y=\"{y_middle}\" text-anchor=\"middle\" \
             transform=\"rotate(-90 20 {y_middle})\">{}</text>",
            escape(self.y_label)
        );
        svg
    }

    /// Label every this many x ticks, so that no two labels overlap: the narrowest gap
    /// between neighbouring ticks must hold the widest label and some space.
    fn x_label_stride(&self) -> usize {
        let widest = self
            .x_axis
            .ticks
            .iter()
            .map(|&tick| self.x_axis.label(tick).chars().count())
            .max()
            .unwrap_or(0) as f64
            * TICK_CHARACTER_WIDTH
            + TICK_LABEL_GAP;
        let narrowest = self
            .x_axis
            .ticks
            .windows(2)
            .map(|pair| (self.x(pair[1]) - self.x(pair[0])).abs())
            .fold(f64::INFINITY, f64::min);
        if narrowest.is_finite() && narrowest > 0.0 {
            (widest / narrowest).ceil().max(1.0) as usize
        } else {
            1
        }
    }

    /// Starts series `index`'s group.
    fn open_series(&self, svg: &mut String, index: usize, name: &str) {
        let _ = writeln!(
            svg,
            "<g class=\"series\" data-series=\"{index}\" data-name=\"{}\">",
            escape(name)
        );
    }

    /// The legend (a line through each marker when `lines`), then a dashed entry per
    /// reference line, and the end of the document.
    fn close(
        &self,
        mut svg: String,
        series: &[Series],
        lines: bool,
        references: &[String],
    ) -> String {
        svg.push_str("<g class=\"legend\">\n");
        let row_top = |row: usize| PLOT_TOP + 6.0 + 22.0 * row as f64;
        for (index, s) in series.iter().enumerate() {
            let (colour, marker) = style(index);
            let top = row_top(index);
            if lines {
                let _ = writeln!(
                    svg,
                    "<line x1=\"{LEGEND_LEFT}\" y1=\"{top}\" x2=\"{}\" y2=\"{top}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                    LEGEND_LEFT + 28.0
                );
            }
            if s.emphasised {
                svg.push_str("<g stroke=\"#000000\" stroke-width=\"1\">\n");
                write_marker(&mut svg, marker, colour, LEGEND_LEFT + 14.0, top, MARKER);
                svg.push_str("</g>\n");
            } else {
                write_marker(&mut svg, marker, colour, LEGEND_LEFT + 14.0, top, MARKER);
            }
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                LEGEND_LEFT + 36.0,
                top + 4.0,
                escape(&s.name)
            );
        }
        for (offset, label) in references.iter().enumerate() {
            let top = row_top(series.len() + offset);
            let _ = writeln!(
                svg,
                "<line x1=\"{LEGEND_LEFT}\" y1=\"{top}\" x2=\"{}\" y2=\"{top}\" \
                 stroke=\"{REFERENCE_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                LEGEND_LEFT + 28.0
            );
            let _ = writeln!(
                svg,
                "<text x=\"{}\" y=\"{}\" fill=\"{REFERENCE_COLOUR}\">{}</text>",
                LEGEND_LEFT + 36.0,
                top + 4.0,
                escape(label)
            );
        }
        svg.push_str("</g>\n</svg>\n");
        svg
    }
}

/// A number with two decimals, the way every coordinate is printed.
/// A `<line>` from (`x1`, `y1`) to (`x2`, `y2`), styled by its group: the grid and the axes
/// draw every one of theirs so.
fn line(svg: &mut String, x1: impl Display, y1: impl Display, x2: impl Display, y2: impl Display) {
    let _ = writeln!(
        svg,
        "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\"/>"
    );
}

fn fixed(value: f64) -> String {
    let text = format!("{value:.2}");
    // "-0.00" and "0.00" are the same place; print one of them.
    if text == "-0.00" {
        "0.00".to_string()
    } else {
        text
    }
}

fn write_marker(svg: &mut String, marker: Marker, colour: &str, cx: f64, cy: f64, r: f64) {
    let (x, y) = (fixed(cx), fixed(cy));
    let _ = match marker {
        Marker::Circle => writeln!(
            svg,
            "<circle class=\"marker\" cx=\"{x}\" cy=\"{y}\" r=\"{r}\" fill=\"{colour}\"/>"
        ),
        Marker::Square => writeln!(
            svg,
            "<rect class=\"marker\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"/>",
            fixed(cx - r),
            fixed(cy - r),
            2.0 * r,
            2.0 * r
        ),
        Marker::Triangle => writeln!(
            svg,
            "<polygon class=\"marker\" points=\"{},{} {},{} {},{}\" fill=\"{colour}\"/>",
            x,
            fixed(cy - r - 1.0),
            fixed(cx - r - 1.0),
            fixed(cy + r),
            fixed(cx + r + 1.0),
            fixed(cy + r)
        ),
        Marker::Diamond => writeln!(
            svg,
            "<polygon class=\"marker\" points=\"{x},{} {},{y} {x},{} {},{y}\" fill=\"{colour}\"/>",
            fixed(cy - r - 1.0),
            fixed(cx + r + 1.0),
            fixed(cy + r + 1.0),
            fixed(cx - r - 1.0)
        ),
        Marker::Cross => writeln!(
            svg,
            "<path class=\"marker\" d=\"M{},{}L{},{}M{},{}L{},{}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            fixed(cx - r),
            fixed(cy - r),
            fixed(cx + r),
            fixed(cy + r),
            fixed(cx - r),
            fixed(cy + r),
            fixed(cx + r),
            fixed(cy - r)
        ),
    };
}

/// An axis: the range it shows, its ticks, and whether it is logarithmic.
struct Axis {
    low: f64,
    high: f64,
    ticks: Vec<f64>,
    /// The tick step of a linear axis (for labels), or the base of a logarithmic one.
    step: f64,
    log: bool,
}

impl Axis {
    /// A linear axis over `values`, widened to whole tick steps; from zero when `from_zero`
    /// and no value is negative. An empty or single-valued range gets a unit of room.
    fn linear(values: impl Iterator<Item = f64>, from_zero: bool) -> Axis {
        let (mut low, mut high) = bounds(values).unwrap_or((0.0, 1.0));
        if from_zero && low >= 0.0 {
            low = 0.0;
        }
        if high - low <= f64::EPSILON * high.abs().max(1.0) {
            // One value (or none): give it room around it, or above zero.
            let room = if high == 0.0 { 1.0 } else { high.abs() / 2.0 };
            if !(from_zero && low >= 0.0) {
                low -= room;
            }
            high += room;
        }
        let step = nice_step((high - low) / MAX_TICKS);
        let low = (low / step).floor() * step;
        let high = (high / step).ceil() * step;
        let mut ticks = Vec::new();
        let count = ((high - low) / step).round() as i64;
        for i in 0..=count {
            ticks.push(low + step * i as f64);
        }
        Axis {
            low,
            high,
            ticks,
            step,
            log: false,
        }
    }

    /// A logarithmic axis over positive `values`: in powers of two, widened to whole ones,
    /// when every value is a power of two spanning at most twelve doublings (N = 1, 4, 16, ...
    /// ticks at the points themselves); otherwise [`Axis::decades`].
    fn logarithmic(values: impl Iterator<Item = f64>) -> Axis {
        let values: Vec<f64> = values.collect();
        let Some((low, high)) = bounds(values.iter().copied()) else {
            return Axis::decades(std::iter::empty(), false);
        };
        let power_of_two = |value: f64| {
            let exponent = value.log2().round();
            (value - 2f64.powf(exponent)).abs() <= 1e-9 * value
        };
        if (high / low).log2() > 12.0 || !values.iter().all(|&value| power_of_two(value)) {
            return Axis::decades(values.into_iter(), false);
        }
        let mut first = low.log2().round();
        let mut last = high.log2().round();
        if last <= first {
            first -= 1.0;
            last += 1.0;
        }
        let ticks = (first as i64..=last as i64)
            .map(|k| 2f64.powi(k as i32))
            .collect();
        Axis {
            low: 2f64.powf(first),
            high: 2f64.powf(last),
            ticks,
            step: 2.0,
            log: true,
        }
    }

    /// A base-10 logarithmic axis over positive `values`, widened to whole decades: ticks at
    /// 1, 2 and 5 x 10^k when it spans at most three decades, at powers of ten beyond (every
    /// few decades when there are more than `MAX_TICKS` of them). With `headroom` (a y axis)
    /// the range reaches at least a tenth of a decade beyond the smallest and the largest
    /// value, so that no point sits on the plot's upper edge, under the labels above it, nor
    /// on the x axis, where a flat curve would read as zero.
    fn decades(values: impl Iterator<Item = f64>, headroom: bool) -> Axis {
        let (low, high) = bounds(values).unwrap_or((1.0, 10.0));
        let room = if headroom { 0.1 } else { 0.0 };
        let mut first = (low.log10() - room).floor() as i32;
        let mut last = (high.log10() + room).ceil() as i32;
        if last <= first {
            first -= 1;
            last += 1;
        }
        let span = last - first;
        let ticks = if span <= 3 {
            (first..last)
                .flat_map(|k| [1.0, 2.0, 5.0].map(|m| m * power_of_ten(k)))
                .chain([power_of_ten(last)])
                .collect()
        } else {
            let stride = (f64::from(span) / MAX_TICKS).ceil() as i32;
            // End on a tick.
            last = first + stride * ((span + stride - 1) / stride);
            (first..=last)
                .step_by(stride as usize)
                .map(power_of_ten)
                .collect()
        };
        Axis {
            low: power_of_ten(first),
            high: power_of_ten(last),
            ticks,
            step: 10.0,
            log: true,
        }
    }

    /// Where `value` lands between the pixel coordinates `from` (the low end) and `to`.
    fn position(&self, value: f64, from: f64, to: f64) -> f64 {
        let fraction = if self.log {
            (value.ln() - self.low.ln()) / (self.high.ln() - self.low.ln())
        } else {
            (value - self.low) / (self.high - self.low)
        };
        from + (to - from) * fraction
    }

    /// A tick's label: as short as the step allows, with k and M for large round numbers.
    fn label(&self, value: f64) -> String {
        if self.log {
            // Below one, as many decimals as the value needs (0.5, 0.25, 0.01).
            let decimals = (0..6)
                .find(|&d| {
                    let scaled = value * 10f64.powi(d as i32);
                    (scaled - scaled.round()).abs() < 1e-9 * scaled.abs().max(1.0)
                })
                .unwrap_or(6);
            return compact(value, decimals);
        }
        let decimals = if self.step >= 1.0 {
            0
        } else {
            (-self.step.log10()).ceil() as usize
        };
        compact(value, decimals)
    }
}

/// 10^k; a negative power as 1 / 10^-k, so that 10^-1 is the float nearest 0.1.
fn power_of_ten(k: i32) -> f64 {
    if k >= 0 {
        10f64.powi(k)
    } else {
        1.0 / 10f64.powi(-k)
    }
}

/// The smallest and largest of `values`, if any.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |range, v| match range {
        None => Some((v, v)),
        Some((low, high)) => Some((low.min(v), high.max(v))),
    })
}

/// The smallest of 1, 2 or 5 x 10^k at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// `value` with `decimals` decimals; whole thousands, millions and billions as "20k", "3M"
/// and "1G".
fn compact(value: f64, decimals: usize) -> String {
    let magnitude = value.abs();
    if decimals == 0 && magnitude >= 1e9 && (value / 1e9).fract() == 0.0 {
        return format!("{}G", value / 1e9);
    }
    if decimals == 0 && magnitude >= 1e6 && (value / 1e6).fract() == 0.0 {
        return format!("{}M", value / 1e6);
    }
    if decimals == 0 && magnitude >= 1e4 && (value / 1e3).fract() == 0.0 {
        return format!("{}k", value / 1e3);
    }
    let text = format!("{value:.decimals$}");
    if text.starts_with('-') && text.trim_start_matches(['-', '0', '.']).is_empty() {
        text[1..].to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_series() -> Vec<Series> {
        vec![
            Series::new(
                "DS",
                vec![(1.0, 2.0), (4.0, 3.0), (16.0, 5.0), (1024.0, 190.0)],
            ),
            Series::new("SPR", vec![(1.0, 2.0), (1024.0, 2.0)]),
        ]
    }

    fn parse(svg: &str) -> roxmltree::Document<'_> {
        roxmltree::Document::parse(svg).expect("well-formed SVG")
    }

    /// The texts of the tick labels, x axis first.
    fn tick_labels<'a>(document: &'a roxmltree::Document<'_>) -> Vec<&'a str> {
        document
            .descendants()
            .find(|n| n.attribute("class") == Some("tick-labels"))
            .unwrap()
            .children()
            .filter_map(|n| n.text())
            .collect()
    }

    #[test]
    fn one_polyline_per_series_with_a_marker_per_point() {
        let svg = line_plot("t", "x", "y", &two_series(), true);
        let document = parse(&svg);
        let polylines: Vec<_> = document
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .collect();
        assert_eq!(polylines.len(), 2);
        let counts: Vec<usize> = polylines
            .iter()
            .map(|p| p.attribute("points").unwrap().split(' ').count())
            .collect();
        assert_eq!(counts, [4, 2]);
        assert_ne!(
            polylines[0].attribute("stroke"),
            polylines[1].attribute("stroke"),
            "distinct colours"
        );
        let markers = document
            .descendants()
            .filter(|n| n.attribute("class") == Some("marker"))
            .count();
        assert_eq!(markers, 4 + 2 + 2, "every point, plus one per legend entry");
        assert_eq!(
            svg,
            line_plot("t", "x", "y", &two_series(), true),
            "deterministic"
        );
    }

    #[test]
    fn a_logarithmic_axis_has_power_ticks_and_spreads_points_evenly() {
        let svg = line_plot("t", "x", "y", &two_series(), true);
        let document = parse(&svg);
        let labels = tick_labels(&document);
        for power in ["1", "2", "4", "256", "512", "1024"] {
            assert!(labels.contains(&power), "{power} in {labels:?}");
        }
        // 1, 4 and 16 are two doublings apart: equal steps on the axis.
        let ds = document
            .descendants()
            .find(|n| n.has_tag_name("polyline"))
            .unwrap();
        let xs: Vec<f64> = ds
            .attribute("points")
            .unwrap()
            .split(' ')
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert!(((xs[1] - xs[0]) - (xs[2] - xs[1])).abs() < 0.02, "{xs:?}");
        assert_eq!(xs[0], PLOT_LEFT);
        assert_eq!(xs[3], PLOT_RIGHT);
    }

    #[test]
    fn linear_axes_start_at_zero_with_round_ticks() {
        let series = [Series::new("a", vec![(0.0, 13.0), (10.0, 87.0)])];
        let svg = line_plot("t", "x", "y", &series, false);
        assert!(svg.contains(">0</text>"));
        assert!(svg.contains(">90</text>") || svg.contains(">100</text>"));
        assert!(svg.contains(">10</text>"));
    }

    #[test]
    fn a_long_legend_widens_the_figure() {
        let short = line_plot("t", "x", "y", &[Series::new("a", vec![])], false);
        assert!(short.contains("width=\"760\""));
        let long = line_plot("t", "x", "y", &[Series::new("n".repeat(60), vec![])], false);
        assert!(long.contains("width=\"1056\""), "{long}");
    }

    #[test]
    fn text_is_escaped() {
        let series = [Series::new("SS <S=16> & \"more\"", vec![(1.0, 1.0)])];
        let svg = line_plot("A<1> & 'b'", "N <threads>", "us & more", &series, false);
        assert!(svg.contains("A&lt;1&gt; &amp; &#39;b&#39;"));
        assert!(svg.contains("N &lt;threads&gt;"));
        assert!(svg.contains("us &amp; more"));
        assert!(svg.contains("SS &lt;S=16&gt; &amp; &quot;more&quot;"));
        let document = parse(&svg);
        let title = document
            .descendants()
            .find(|n| n.attribute("class") == Some("title"))
            .unwrap();
        assert_eq!(title.text(), Some("A<1> & 'b'"));
    }

    #[test]
    fn empty_single_point_and_undrawable_series_do_not_panic() {
        let cases: Vec<(Vec<Series>, bool)> = vec![
            (vec![], false),
            (vec![], true),
            (vec![Series::new("empty", vec![])], true),
            (vec![Series::new("one", vec![(5.0, 7.0)])], false),
            (vec![Series::new("one", vec![(5.0, 7.0)])], true),
            (vec![Series::new("zero", vec![(0.0, 0.0)])], false),
            (vec![Series::new("negative", vec![(-3.0, -2.0)])], false),
            (
                vec![Series::new(
                    "odd",
                    vec![(f64::NAN, 1.0), (0.0, 1.0), (-1.0, f64::INFINITY)],
                )],
                true,
            ),
        ];
        for (series, log_x) in cases {
            let svg = line_plot("t", "x", "y", &series, log_x);
            let document = parse(&svg);
            let polylines = document
                .descendants()
                .filter(|n| n.has_tag_name("polyline"))
                .count();
            assert_eq!(polylines, series.len());
            assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        }
    }

    /// The y coordinate of the markers of series `index`, in drawing order.
    fn marker_ys(svg: &str, index: usize) -> Vec<f64> {
        let doc = parse(svg);
        let group = doc
            .descendants()
            .find(|n| n.attribute("data-series") == Some(&index.to_string()))
            .expect("the series group");
        group
            .children()
            .filter(|n| n.attribute("class") == Some("marker"))
            .map(|n| n.attribute("cy").expect("a circle").parse().unwrap())
            .collect()
    }

    /// On a logarithmic y axis 1 -> 10 spans as many pixels as 10 -> 100, higher values are
    /// drawn higher, points at or below zero are left out, and the reference lines and their
    /// labels are drawn.
    #[test]
    fn scatter_on_a_log_axis() {
        let series = vec![Series::new(
            "delays",
            vec![
                (0.0, 1.0),
                (1.0, 10.0),
                (2.0, 100.0),
                (3.0, 0.0),
                (4.0, -1.0),
            ],
        )];
        let svg = scatter_plot(
            "t",
            "x",
            "y",
            &series,
            true,
            &[(18.0, "bound 18 ms".into())],
            &[(1.5, "phase 2".into())],
        );
        let ys = marker_ys(&svg, 0);
        assert_eq!(ys.len(), 3, "y <= 0 left out");
        assert!(
            ys[0] > ys[1] && ys[1] > ys[2],
            "higher values drawn higher: {ys:?}"
        );
        // Each coordinate is rounded to 0.005, so two differences agree within 0.02.
        assert!(((ys[0] - ys[1]) - (ys[1] - ys[2])).abs() <= 0.02, "{ys:?}");
        assert!(svg.contains(">bound 18 ms</text>"));
        assert!(svg.contains(">phase 2</text>"));
        let doc = parse(&svg);
        let dashed = doc
            .descendants()
            .filter(|n| n.has_attribute("stroke-dasharray"))
            .count();
        assert_eq!(
            dashed, 3,
            "two lines in the plot and the bound's legend entry"
        );
        // The bound is named in the legend, right of the plot, not over the points; the
        // phase label is above the plot.
        let label = doc
            .descendants()
            .find(|n| n.has_tag_name("text") && n.text() == Some("bound 18 ms"))
            .unwrap();
        let label_x: f64 = label.attribute("x").unwrap().parse().unwrap();
        assert!(label_x > PLOT_RIGHT, "{label_x}");
        let phase = doc
            .descendants()
            .find(|n| n.has_tag_name("text") && n.text() == Some("phase 2"))
            .unwrap();
        let phase_y: f64 = phase.attribute("y").unwrap().parse().unwrap();
        assert!(phase_y < PLOT_TOP, "{phase_y}");
        // 1 to 100 with a tenth of a decade's room each side: 0.1 to 1000, four decades,
        // ticked at powers of ten.
        let labels = tick_labels(&doc);
        for tick in ["0.1", "1", "10", "100", "1000"] {
            assert!(labels.contains(&tick), "{tick} in {labels:?}");
        }
        // The same input gives the same bytes.
        let again = scatter_plot(
            "t",
            "x",
            "y",
            &series,
            true,
            &[(18.0, "bound 18 ms".into())],
            &[(1.5, "phase 2".into())],
        );
        assert_eq!(svg, again);
    }

    /// A reference line above every point stays inside the plot; empty series draw nothing
    /// and do not panic; a linear scatter starts at zero.
    #[test]
    fn scatter_edges() {
        let svg = scatter_plot(
            "t",
            "x",
            "y",
            &[
                Series::new("a", vec![(1.0, 2.0)]),
                Series::new("none", vec![]),
            ],
            false,
            &[(50.0, "bound".into())],
            &[],
        );
        let doc = parse(&svg);
        let line = doc
            .descendants()
            .find(|n| n.attribute("stroke") == Some("#8b0000"))
            .unwrap();
        let y: f64 = line.attribute("y1").unwrap().parse().unwrap();
        assert!((PLOT_TOP..=PLOT_BOTTOM).contains(&y), "{y}");
        assert!(marker_ys(&svg, 1).is_empty());
        assert!(svg.contains(">0</text>"), "a linear axis from zero");
        let empty = scatter_plot("t", "x", "y", &[], true, &[], &[]);
        assert!(parse(&empty).root_element().has_tag_name("svg"));
        let odd = scatter_plot(
            "t",
            "x",
            "y",
            &[Series::new(
                "odd",
                vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (2.0, 0.0)],
            )],
            true,
            &[(-5.0, "below".into()), (f64::NAN, "nan".into())],
            &[(f64::INFINITY, "far".into())],
        );
        parse(&odd);
        assert!(!odd.contains("NaN") && !odd.contains("inf"), "{odd}");
        assert!(marker_ys(&odd, 0).is_empty());
    }

    #[test]
    fn a_decade_axis_ticks_at_one_two_five() {
        let axis = Axis::decades([0.5, 18.0, 70.0].into_iter(), true);
        let labels: Vec<String> = axis.ticks.iter().map(|&t| axis.label(t)).collect();
        assert_eq!(
            labels,
            ["0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50", "100"]
        );
        assert_eq!((axis.low, axis.high), (0.1, 100.0));
        // Many decades: powers of ten only, no more than MAX_TICKS intervals, ending on a tick.
        let wide = Axis::decades([1e-3, 1e9].into_iter(), true);
        assert!(
            wide.ticks.len() as f64 <= MAX_TICKS + 1.0,
            "{:?}",
            wide.ticks
        );
        assert_eq!(wide.ticks.last(), Some(&wide.high));
        assert_eq!(wide.ticks.first(), Some(&wide.low));
        // One value, or none, still gets a range.
        let one = Axis::decades([10.0].into_iter(), true);
        assert!(
            one.low <= 10.0 && one.high > 10.0,
            "{} {}",
            one.low,
            one.high
        );
        // 9,999 is within a tenth of a decade of 10^4 (log10 3.99996 + 0.1 > 4): a y axis
        // goes on to 10^5, so the point is not drawn on the top edge. An x axis ends at the
        // decade that holds the largest value, with no empty decade after it.
        let near = Axis::decades([2.0, 9_999.0].into_iter(), true);
        assert_eq!(near.high, 1e5);
        let x = Axis::decades([1e3, 1e6].into_iter(), false);
        assert_eq!((x.low, x.high), (1e3, 1e6));
        // A y axis does not start at its smallest value either: 1.0 goes above the x axis.
        let floor = Axis::decades([1.0, 50.0].into_iter(), true);
        assert_eq!((floor.low, floor.high), (0.1, 100.0));
        let none = Axis::decades(std::iter::empty(), true);
        assert!(none.low < none.high);
    }

    /// A logarithmic y axis on a line chart: 1 us -> 10 us spans as many pixels as 10 us ->
    /// 100 us, so a flat curve near the floor and a growing one far above are both readable.
    #[test]
    fn a_line_chart_on_log_log_axes() {
        let series = [Series::new(
            "grows",
            vec![(1.0, 1.0), (16.0, 10.0), (256.0, 100.0), (512.0, -1.0)],
        )];
        let svg = line_plot_scaled("t", "x", "y", &series, Scale::Log, Scale::Log);
        let ys = marker_ys(&svg, 0);
        assert_eq!(ys.len(), 3, "y <= 0 left out on a log axis");
        assert!(((ys[0] - ys[1]) - (ys[1] - ys[2])).abs() <= 0.02, "{ys:?}");
        assert!(ys[0] > ys[1], "higher values drawn higher");
        // 1, 16 and 256 are powers of two: base-two ticks at the points.
        let doc = parse(&svg);
        let labels = tick_labels(&doc);
        for tick in ["1", "16", "256"] {
            assert!(labels.contains(&tick), "{tick} in {labels:?}");
        }
        // The top decade is strictly above the largest value: no point on the edge.
        assert!(ys.iter().all(|&y| y > PLOT_TOP), "{ys:?}");
    }

    /// Decimal sweeps (1,000 to 1,000,000) tick at powers of ten, not at 512, 1024, ...,
    /// 1048576, whose labels ran into each other; no two x labels overlap.
    #[test]
    fn decimal_sweeps_tick_in_decades_without_overlap() {
        let series = [Series::new(
            "n",
            vec![(1e3, 1.0), (1e4, 2.0), (1e5, 3.0), (1e6, 4.0)],
        )];
        let svg = line_plot("t", "x", "y", &series, true);
        let doc = parse(&svg);
        let group = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("tick-labels"))
            .unwrap();
        let x_labels: Vec<(f64, &str)> = group
            .children()
            .filter(|n| n.attribute("text-anchor") == Some("middle"))
            .map(|n| {
                (
                    n.attribute("x").unwrap().parse().unwrap(),
                    n.text().unwrap(),
                )
            })
            .collect();
        let texts: Vec<&str> = x_labels.iter().map(|l| l.1).collect();
        assert!(
            !texts.contains(&"1024") && !texts.contains(&"131072"),
            "{texts:?}"
        );
        for decade in ["1000", "10k", "100k", "1M"] {
            assert!(texts.contains(&decade), "{decade} in {texts:?}");
        }
        // Centred labels overlap when their centres are closer than their half-widths.
        for pair in x_labels.windows(2) {
            let room = (pair[0].1.len() + pair[1].1.len()) as f64 * TICK_CHARACTER_WIDTH / 2.0;
            assert!(pair[1].0 - pair[0].0 > room, "{pair:?}");
        }
    }

    /// Many tick labels in a narrow range are thinned so that they do not overlap.
    #[test]
    fn crowded_labels_are_thinned() {
        let series = [Series::new(
            "n",
            vec![(100_000_001.0, 1.0), (100_000_008.0, 2.0)],
        )];
        let svg = line_plot("t", "x", "y", &series, false);
        let doc = parse(&svg);
        let x_labels: Vec<(f64, String)> = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("tick-labels"))
            .unwrap()
            .children()
            .filter(|n| n.attribute("text-anchor") == Some("middle"))
            .map(|n| {
                (
                    n.attribute("x").unwrap().parse().unwrap(),
                    n.text().unwrap().to_string(),
                )
            })
            .collect();
        // Eight ticks, 100000001 to 100000008, over 454 px: 64.9 px apart, too close for
        // nine digits (63 px, 71 px with the gap), so every second one is labelled.
        assert_eq!(x_labels.len(), 4, "{x_labels:?}");
        for pair in x_labels.windows(2) {
            let room = (pair[0].1.len() + pair[1].1.len()) as f64 * TICK_CHARACTER_WIDTH / 2.0;
            assert!(pair[1].0 - pair[0].0 > room, "{pair:?}");
        }
    }

    #[test]
    fn log_labels_below_one_keep_their_digits() {
        let axis = Axis::logarithmic([0.25, 0.5, 1.0].into_iter());
        assert_eq!(axis.label(0.5), "0.5");
        assert_eq!(axis.label(0.25), "0.25");
        assert_eq!(axis.label(2.0), "2");
    }
}
