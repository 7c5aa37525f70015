//! SVG line charts for parameter sweeps, in the style of the papers' evaluation figures.
//!
//! One polyline per series with a marker at every point, each series in its own colour and
//! marker shape; axes with ticks, tick labels and axis labels; a legend beside the plot. The x
//! axis can be logarithmic (sweeps over task counts double or quadruple N); the y axis is
//! linear and starts at zero when every value is non-negative, so flat and growing curves are
//! told apart at a glance.
//!
//! Output is byte-deterministic: coordinates are printed with two decimals and nothing
//! iterates a hash. Points that cannot be drawn (not finite, or `x <= 0` on a logarithmic
//! axis) are left out; an empty series still gets its (empty) polyline and legend entry.

use std::fmt::Write as _;

use crate::markup::escape;

/// One named curve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Shown in the legend.
    pub name: String,
    /// `(x, y)` points, drawn in the order given.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series called `name` through `points`.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            name: name.into(),
            points,
        }
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

/// A line chart of `series` as a standalone SVG document. With `log_x` the x axis is
/// logarithmic (base 2 ticks when the range spans at most twelve doublings, base 10 beyond),
/// and points with `x <= 0` are left out.
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
) -> String {
    let drawable = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (!log_x || x > 0.0);
    let points: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().copied().filter(drawable).collect())
        .collect();
    let all = || points.iter().flatten();
    let x_axis = if log_x {
        Axis::logarithmic(all().map(|p| p.0))
    } else {
        Axis::linear(all().map(|p| p.0), false)
    };
    let y_axis = Axis::linear(all().map(|p| p.1), true);
    let x = |value: f64| x_axis.position(value, PLOT_LEFT, PLOT_RIGHT);
    let y = |value: f64| y_axis.position(value, PLOT_BOTTOM, PLOT_TOP);
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let width = WIDTH.max((LEGEND_LEFT + 46.0 + CHARACTER_WIDTH * longest as f64).ceil());

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
        escape(title)
    );

    // Grid and ticks.
    svg.push_str("<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n");
    for &tick in &x_axis.ticks {
        let px = fixed(x(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{px}\" y1=\"{PLOT_TOP}\" x2=\"{px}\" y2=\"{PLOT_BOTTOM}\"/>"
        );
    }
    for &tick in &y_axis.ticks {
        let py = fixed(y(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{PLOT_LEFT}\" y1=\"{py}\" x2=\"{PLOT_RIGHT}\" y2=\"{py}\"/>"
        );
    }
    svg.push_str("</g>\n");

    svg.push_str("<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\">\n");
    let _ = writeln!(
        svg,
        "<line x1=\"{PLOT_LEFT}\" y1=\"{PLOT_BOTTOM}\" x2=\"{PLOT_RIGHT}\" y2=\"{PLOT_BOTTOM}\"/>"
    );
    let _ = writeln!(
        svg,
        "<line x1=\"{PLOT_LEFT}\" y1=\"{PLOT_TOP}\" x2=\"{PLOT_LEFT}\" y2=\"{PLOT_BOTTOM}\"/>"
    );
    for &tick in &x_axis.ticks {
        let px = fixed(x(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{px}\" y1=\"{PLOT_BOTTOM}\" x2=\"{px}\" y2=\"{}\"/>",
            PLOT_BOTTOM + TICK
        );
    }
    for &tick in &y_axis.ticks {
        let py = fixed(y(tick));
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{py}\" x2=\"{PLOT_LEFT}\" y2=\"{py}\"/>",
            PLOT_LEFT - TICK
        );
    }
    svg.push_str("</g>\n");

    svg.push_str("<g class=\"tick-labels\" fill=\"#333333\">\n");
    for &tick in &x_axis.ticks {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            fixed(x(tick)),
            PLOT_BOTTOM + TICK + 14.0,
            escape(&x_axis.label(tick))
        );
    }
    for &tick in &y_axis.ticks {
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            PLOT_LEFT - TICK - 3.0,
            fixed(y(tick) + 4.0),
            escape(&y_axis.label(tick))
        );
    }
    svg.push_str("</g>\n");

    let _ = writeln!(
        svg,
        "<text class=\"x-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        fixed((PLOT_LEFT + PLOT_RIGHT) / 2.0),
        PLOT_BOTTOM + 48.0,
        escape(x_label)
    );
    let y_middle = fixed((PLOT_TOP + PLOT_BOTTOM) / 2.0);
    let _ = writeln!(
        svg,
        "<text class=\"y-label\" x=\"20\" y=\"{y_middle}\" text-anchor=\"middle\" \
         transform=\"rotate(-90 20 {y_middle})\">{}</text>",
        escape(y_label)
    );

    // Series.
    for (index, (s, drawn)) in series.iter().zip(&points).enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let marker = MARKERS[index % MARKERS.len()];
        let _ = writeln!(
            svg,
            "<g class=\"series\" data-series=\"{index}\" data-name=\"{}\">",
            escape(&s.name)
        );
        let path: Vec<String> = drawn
            .iter()
            .map(|&(px, py)| format!("{},{}", fixed(x(px)), fixed(y(py))))
            .collect();
        let _ = writeln!(
            svg,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(px, py) in drawn {
            write_marker(&mut svg, marker, colour, x(px), y(py));
        }
        svg.push_str("</g>\n");
    }

    // Legend.
    svg.push_str("<g class=\"legend\">\n");
    for (index, s) in series.iter().enumerate() {
        let colour = COLOURS[index % COLOURS.len()];
        let marker = MARKERS[index % MARKERS.len()];
        let top = PLOT_TOP + 6.0 + 22.0 * index as f64;
        let _ = writeln!(
            svg,
            "<line x1=\"{LEGEND_LEFT}\" y1=\"{top}\" x2=\"{}\" y2=\"{top}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            LEGEND_LEFT + 28.0
        );
        write_marker(&mut svg, marker, colour, LEGEND_LEFT + 14.0, top);
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\">{}</text>",
            LEGEND_LEFT + 36.0,
            top + 4.0,
            escape(&s.name)
        );
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

/// A number with two decimals, the way every coordinate is printed.
fn fixed(value: f64) -> String {
    let text = format!("{value:.2}");
    // "-0.00" and "0.00" are the same place; print one of them.
    if text == "-0.00" {
        "0.00".to_string()
    } else {
        text
    }
}

fn write_marker(svg: &mut String, marker: Marker, colour: &str, cx: f64, cy: f64) {
    const R: f64 = 4.0;
    let (x, y) = (fixed(cx), fixed(cy));
    let _ = match marker {
        Marker::Circle => writeln!(
            svg,
            "<circle class=\"marker\" cx=\"{x}\" cy=\"{y}\" r=\"{R}\" fill=\"{colour}\"/>"
        ),
        Marker::Square => writeln!(
            svg,
            "<rect class=\"marker\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{colour}\"/>",
            fixed(cx - R),
            fixed(cy - R),
            2.0 * R,
            2.0 * R
        ),
        Marker::Triangle => writeln!(
            svg,
            "<polygon class=\"marker\" points=\"{},{} {},{} {},{}\" fill=\"{colour}\"/>",
            x,
            fixed(cy - R - 1.0),
            fixed(cx - R - 1.0),
            fixed(cy + R),
            fixed(cx + R + 1.0),
            fixed(cy + R)
        ),
        Marker::Diamond => writeln!(
            svg,
            "<polygon class=\"marker\" points=\"{x},{} {},{y} {x},{} {},{y}\" fill=\"{colour}\"/>",
            fixed(cy - R - 1.0),
            fixed(cx + R + 1.0),
            fixed(cy + R + 1.0),
            fixed(cx - R - 1.0)
        ),
        Marker::Cross => writeln!(
            svg,
            "<path class=\"marker\" d=\"M{},{}L{},{}M{},{}L{},{}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            fixed(cx - R),
            fixed(cy - R),
            fixed(cx + R),
            fixed(cy + R),
            fixed(cx - R),
            fixed(cy + R),
            fixed(cx + R),
            fixed(cy - R)
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

    /// A logarithmic axis over positive `values`, widened to whole powers of its base.
    fn logarithmic(values: impl Iterator<Item = f64>) -> Axis {
        let (low, high) = bounds(values).unwrap_or((1.0, 10.0));
        let doublings = (high / low).log2();
        let base: f64 = if doublings <= 12.0 { 2.0 } else { 10.0 };
        let mut first = low.log(base).floor();
        let mut last = high.log(base).ceil();
        if last <= first {
            first -= 1.0;
            last += 1.0;
        }
        let ticks = (first as i64..=last as i64)
            .map(|k| base.powi(k as i32))
            .collect();
        Axis {
            low: base.powf(first),
            high: base.powf(last),
            ticks,
            step: base,
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
            return compact(value, 0);
        }
        let decimals = if self.step >= 1.0 {
            0
        } else {
            (-self.step.log10()).ceil() as usize
        };
        compact(value, decimals)
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

/// `value` with `decimals` decimals; whole thousands and millions as "20k" and "3M".
fn compact(value: f64, decimals: usize) -> String {
    let magnitude = value.abs();
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
        let labels: Vec<&str> = document
            .descendants()
            .find(|n| n.attribute("class") == Some("tick-labels"))
            .unwrap()
            .children()
            .filter_map(|n| n.text())
            .collect();
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
}
