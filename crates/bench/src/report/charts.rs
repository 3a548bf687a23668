//! Line and bar charts drawn with plotters' SVG backend into strings.
//!
//! This module knows nothing of benchmark results: the sections hand it series of points and
//! it returns an `<svg>` element. It owns the defences that keep plotters from panicking:
//! points that are NaN, infinite or absurdly large are dropped (plotters asserts on NaN ranges),
//! every axis range is padded so it is never empty, and a chart without a single drawable point
//! is not drawn at all.
//!
//! The x axis is either a row of evenly spaced categories (thread counts: 1, 2, 4 … 256 spread
//! evenly reads like a log axis without needing one) or seconds on a linear scale. Either way
//! the tick marks are computed here ([`TickedAxis`]), so plotters never has to guess labels for
//! a range like -0.5..0.5.

use std::error::Error;
use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::format;

/// Size of the main charts (QPS, latency and resources against threads), in pixels.
pub(super) const LARGE: (u32, u32) = (600, 340);
/// Size of the per-interval time series charts, in pixels.
pub(super) const SMALL: (u32, u32) = (460, 260);

/// Values beyond this magnitude are treated like infinities: padding them would overflow.
const LARGEST_PLOTTABLE: f64 = 1e100;
/// Height of one legend entry, in pixels (plotters' layout with 14 px labels).
const LEGEND_ENTRY_PIXELS: f64 = 15.0;
/// Height of the legend's padding, its offset from the plot's top and a gap below it, in pixels.
const LEGEND_FRAME_PIXELS: f64 = 28.0;
/// Margin around the chart, in pixels.
const MARGIN_PIXELS: u32 = 12;
/// Height of the x axis labels and description, in pixels.
const X_LABEL_AREA_PIXELS: u32 = 40;
/// Width of the y axis labels and description, in pixels.
const Y_LABEL_AREA_PIXELS: u32 = 58;
/// Number of tick marks aimed at on a linear x axis.
const LINEAR_TICKS: usize = 6;
/// Upper bound of tick marks on any axis, whatever the input.
const MOST_TICKS: usize = 64;
const FONT: &str = "sans-serif";
/// Font size of tick and legend labels; plotters writes 1/1.24 of it into the SVG.
const LABEL_FONT_SIZE: f64 = 14.0;
/// Font size of the axis descriptions.
const DESCRIPTION_FONT_SIZE: f64 = 15.0;

/// One colour per result (by index), so a result has the same colour in every chart.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The horizontal axis of a line chart.
pub(super) enum XAxis {
    /// Evenly spaced categories at x = 0, 1, 2 …, labelled with these names.
    Categories(Vec<String>),
    /// A linear scale, e.g. seconds since a run started.
    Linear,
}

/// One labelled line.
pub(super) struct Series {
    pub(super) label: String,
    /// Index of the result the series belongs to; picks its colour.
    pub(super) color: usize,
    /// `(x, y)` points in order; `None` (a missing or failed run) breaks the line.
    pub(super) points: Vec<Option<(f64, f64)>>,
}

/// A line chart with one line per series.
pub(super) struct LineChart {
    pub(super) x_axis: XAxis,
    pub(super) x_description: String,
    pub(super) y_description: String,
    pub(super) series: Vec<Series>,
    /// Whether every point gets a dot (few points) or only isolated ones (long time series).
    pub(super) markers: bool,
    pub(super) size: (u32, u32),
}

/// One labelled group of bars, one bar per category.
pub(super) struct BarSeries {
    pub(super) label: String,
    pub(super) color: usize,
    pub(super) values: Vec<Option<f64>>,
}

/// A grouped bar chart: for each category, one bar per series side by side.
pub(super) struct BarChart {
    pub(super) categories: Vec<String>,
    pub(super) y_description: String,
    pub(super) series: Vec<BarSeries>,
    pub(super) size: (u32, u32),
}

/// Draws a line chart; `None` when no series has a drawable point.
pub(super) fn line_chart(chart: &LineChart) -> Option<Result<String, String>> {
    let series: Vec<Vec<Vec<(f64, f64)>>> = chart.series.iter().map(segments).collect();
    let points = || series.iter().flatten().flatten();
    points().next()?;
    let x_range = match &chart.x_axis {
        XAxis::Categories(names) => -0.5..(names.len().max(1) as f64 - 0.5),
        XAxis::Linear => padded_range(points().map(|point| point.0), 0.0),
    };
    let headroom = headroom(chart.size, chart.series.len());
    let y_range = padded_range(points().map(|point| point.1), headroom);
    Some(draw_line_chart(chart, &series, x_range, y_range).map_err(|error| error.to_string()))
}

/// Draws a grouped bar chart; `None` when there is no category or no drawable value.
pub(super) fn bar_chart(chart: &BarChart) -> Option<Result<String, String>> {
    let values = || {
        chart
            .series
            .iter()
            .flat_map(|series| series.values.iter().flatten().copied())
            .filter(|value| plottable(*value))
    };
    if chart.categories.is_empty() || chart.series.is_empty() {
        return None;
    }
    values().next()?;
    let y_range = padded_range(values(), headroom(chart.size, chart.series.len()));
    Some(draw_bar_chart(chart, y_range).map_err(|error| error.to_string()))
}

fn draw_line_chart(
    chart: &LineChart,
    series: &[Vec<Vec<(f64, f64)>>],
    x_range: Range<f64>,
    y_range: Range<f64>,
) -> Result<String, Box<dyn Error>> {
    let (x_ticks, x_label): (Vec<f64>, AxisLabel<'_>) = match &chart.x_axis {
        XAxis::Categories(names) => (
            (0..names.len()).map(|index| index as f64).collect(),
            Box::new(|x: &f64| category_name(names, *x)),
        ),
        XAxis::Linear => (
            ticks(&x_range, LINEAR_TICKS),
            Box::new(|x: &f64| format::axis_value(*x)),
        ),
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size).into_drawing_area();
        root.fill(&WHITE)?;
        let mut context = ChartBuilder::on(&root)
            .margin(MARGIN_PIXELS)
            .x_label_area_size(X_LABEL_AREA_PIXELS)
            .y_label_area_size(Y_LABEL_AREA_PIXELS)
            .build_cartesian_2d(TickedAxis::new(x_range, x_ticks), y_range)?;
        context
            .configure_mesh()
            .x_desc(chart.x_description.as_str())
            .y_desc(chart.y_description.as_str())
            .x_label_formatter(&x_label)
            .y_label_formatter(&|y: &f64| format::axis_value(*y))
            .y_labels(6)
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.12))
            .label_style((FONT, LABEL_FONT_SIZE))
            .axis_desc_style((FONT, DESCRIPTION_FONT_SIZE))
            .draw()?;
        for (spec, segments) in chart.series.iter().zip(series) {
            let color = color(spec.color);
            for segment in segments {
                context.draw_series(LineSeries::new(
                    segment.iter().copied(),
                    color.stroke_width(2),
                ))?;
                if chart.markers || segment.len() == 1 {
                    context.draw_series(
                        segment
                            .iter()
                            .map(|&point| Circle::new(point, 3, color.filled())),
                    )?;
                }
            }
            if segments.iter().any(|segment| !segment.is_empty()) {
                legend_entry(&mut context, &spec.label, color, false)?;
            }
        }
        draw_legend(&mut context)?;
        root.present()?;
    }
    Ok(svg)
}

fn draw_bar_chart(chart: &BarChart, y_range: Range<f64>) -> Result<String, Box<dyn Error>> {
    let names = &chart.categories;
    let x_range = -0.5..(names.len() as f64 - 0.5);
    let x_ticks: Vec<f64> = (0..names.len()).map(|index| index as f64).collect();
    let group_width = 0.8;
    let bar_width = group_width / chart.series.len() as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, chart.size).into_drawing_area();
        root.fill(&WHITE)?;
        let mut context = ChartBuilder::on(&root)
            .margin(MARGIN_PIXELS)
            .x_label_area_size(X_LABEL_AREA_PIXELS)
            .y_label_area_size(Y_LABEL_AREA_PIXELS)
            .build_cartesian_2d(TickedAxis::new(x_range, x_ticks), y_range)?;
        context
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(chart.y_description.as_str())
            .x_label_formatter(&|x: &f64| category_name(names, *x))
            .y_label_formatter(&|y: &f64| format::axis_value(*y))
            .y_labels(6)
            .light_line_style(TRANSPARENT)
            .bold_line_style(BLACK.mix(0.12))
            .label_style((FONT, LABEL_FONT_SIZE))
            .axis_desc_style((FONT, DESCRIPTION_FONT_SIZE))
            .draw()?;
        for (index, series) in chart.series.iter().enumerate() {
            let color = color(series.color);
            let bars = series
                .values
                .iter()
                .enumerate()
                .filter_map(|(category, value)| {
                    let value = value.filter(|value| plottable(*value))?;
                    let left = category as f64 - group_width / 2.0 + index as f64 * bar_width;
                    Some(Rectangle::new(
                        [(left, 0.0), (left + bar_width, value)],
                        color.filled(),
                    ))
                });
            context.draw_series(bars)?;
            legend_entry(&mut context, &series.label, color, true)?;
        }
        draw_legend(&mut context)?;
        root.present()?;
    }
    Ok(svg)
}

/// Writes the label of an x axis tick.
type AxisLabel<'a> = Box<dyn Fn(&f64) -> String + 'a>;

/// A linear f64 axis whose tick marks are given rather than computed by plotters.
struct TickedAxis {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl TickedAxis {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Self {
        TickedAxis { range, ticks }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        let fraction = if span > 0.0 {
            (value - self.range.start) / span
        } else {
            0.5
        };
        let pixel = f64::from(limit.0) + fraction * f64::from(limit.1 - limit.0);
        // `as` saturates, so a point far outside the range lands on the border.
        pixel.round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light mesh lines would be drawn between the ticks; the axis has none.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

type Context<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<TickedAxis, RangedCoordf64>>;

/// Adds a legend entry through an empty series, so the legend does not depend on which
/// segment of a broken line was drawn first.
fn legend_entry<'a, 'b: 'a>(
    context: &mut Context<'a, 'b>,
    label: &str,
    color: RGBColor,
    bar: bool,
) -> Result<(), Box<dyn Error>> {
    let entry = context
        .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
        .label(label);
    if bar {
        entry.legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    } else {
        entry.legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
        });
    }
    Ok(())
}

fn draw_legend<'a, 'b: 'a>(context: &mut Context<'a, 'b>) -> Result<(), Box<dyn Error>> {
    context
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .label_font((FONT, LABEL_FONT_SIZE))
        .draw()?;
    Ok(())
}

/// Splits a series into runs of consecutive drawable points.
fn segments(series: &Series) -> Vec<Vec<(f64, f64)>> {
    let mut segments = vec![Vec::new()];
    for point in &series.points {
        match point {
            Some((x, y)) if plottable(*x) && plottable(*y) => {
                if let Some(segment) = segments.last_mut() {
                    segment.push((*x, *y));
                }
            }
            _ => {
                if segments.last().is_some_and(|segment| !segment.is_empty()) {
                    segments.push(Vec::new());
                }
            }
        }
    }
    segments.retain(|segment| !segment.is_empty());
    segments
}

fn plottable(value: f64) -> bool {
    value.is_finite() && value.abs() < LARGEST_PLOTTABLE
}

fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Returns the share of the y range to add above the highest value so that the legend, in the
/// upper left corner, sits above the lines and bars instead of on them.
fn headroom(size: (u32, u32), legend_entries: usize) -> f64 {
    let plot_pixels = f64::from(
        size.1
            .saturating_sub(2 * MARGIN_PIXELS + X_LABEL_AREA_PIXELS),
    );
    let legend_pixels = LEGEND_FRAME_PIXELS + LEGEND_ENTRY_PIXELS * legend_entries as f64;
    let share = (legend_pixels / plot_pixels.max(1.0)).min(0.6);
    share / (1.0 - share)
}

/// Returns a range that holds zero and every value, is never empty, and has `headroom` (a
/// share of its span) added above.
fn padded_range(values: impl Iterator<Item = f64>, headroom: f64) -> Range<f64> {
    let (low, high) = values
        .filter(|value| plottable(*value))
        .fold((0.0_f64, 0.0_f64), |(low, high), value| {
            (low.min(value), high.max(value))
        });
    let span = high - low;
    if span > 1e-9 {
        low..high + span * headroom
    } else {
        low..low + 1.0
    }
}

/// Returns round tick values (steps of 1, 2 or 5 × 10ⁿ) inside `range`, about `target` of them.
fn ticks(range: &Range<f64>, target: usize) -> Vec<f64> {
    let span = range.end - range.start;
    if !(span > 0.0 && span.is_finite()) {
        return vec![range.start];
    }
    let rough_step = span / target.max(1) as f64;
    let magnitude = 10f64.powf(rough_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|factor| factor * magnitude)
        .find(|step| *step >= rough_step)
        .unwrap_or(10.0 * magnitude);
    let first = (range.start / step).ceil() * step;
    (0..MOST_TICKS)
        .map(|index| first + index as f64 * step)
        .take_while(|value| *value <= range.end + step * 1e-9)
        .collect()
}

/// The name of the category at `x`, empty between categories.
fn category_name(names: &[String], x: f64) -> String {
    let index = x.round();
    if (x - index).abs() > 1e-6 || index < 0.0 {
        return String::new();
    }
    names.get(index as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(points: Vec<Option<(f64, f64)>>) -> Series {
        Series {
            label: "A <&> B".to_string(),
            color: 0,
            points,
        }
    }

    fn chart(x_axis: XAxis, series: Vec<Series>) -> LineChart {
        LineChart {
            x_axis,
            x_description: "threads".to_string(),
            y_description: "QPS".to_string(),
            series,
            markers: true,
            size: SMALL,
        }
    }

    #[test]
    fn a_single_category_and_zero_values_draw() {
        let svg = line_chart(&chart(
            XAxis::Categories(vec!["8".into()]),
            vec![series(vec![Some((0.0, 0.0))])],
        ))
        .expect("a point to draw")
        .expect("no drawing error");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(
            svg.contains("A &lt;&amp;&gt; B"),
            "the legend label is escaped"
        );
        assert!(
            svg.contains("\n8\n</text>"),
            "the category is labelled: {svg}"
        );
    }

    #[test]
    fn non_finite_points_are_dropped_and_empty_charts_skipped() {
        let nothing = chart(
            XAxis::Linear,
            vec![series(vec![
                Some((f64::NAN, 1.0)),
                Some((1.0, f64::INFINITY)),
                None,
                Some((2.0, 1e300)),
            ])],
        );
        assert!(line_chart(&nothing).is_none());
        assert!(line_chart(&chart(XAxis::Linear, vec![])).is_none());
        let some = chart(
            XAxis::Linear,
            vec![series(vec![Some((1.0, f64::NAN)), Some((1.0, 5.0))])],
        );
        assert!(line_chart(&some).expect("one point").is_ok());
    }

    #[test]
    fn gaps_split_lines() {
        let points = vec![Some((0.0, 1.0)), Some((1.0, 2.0)), None, Some((3.0, 1.0))];
        assert_eq!(
            segments(&series(points)),
            vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 1.0)]]
        );
    }

    #[test]
    fn bars_skip_missing_values() {
        let bars = BarChart {
            categories: vec!["new_order".into(), "payment".into()],
            y_description: "p95 (ms)".into(),
            series: vec![BarSeries {
                label: "A".into(),
                color: 1,
                values: vec![None, Some(f64::NAN)],
            }],
            size: SMALL,
        };
        assert!(bar_chart(&bars).is_none());
        let bars = BarChart {
            series: vec![BarSeries {
                label: "A".into(),
                color: 1,
                values: vec![Some(3.0), None],
            }],
            ..bars
        };
        let svg = bar_chart(&bars)
            .expect("one bar")
            .expect("no drawing error");
        assert!(svg.contains("new_order"));
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded_range([0.0, 0.0].into_iter(), 0.3), 0.0..1.0);
        assert!(headroom(LARGE, 2) > 0.2 && headroom(LARGE, 2) < 0.4);
        let most = headroom((10, 10), 50);
        assert!(
            (most - 1.5).abs() < 1e-9,
            "the legend never takes more than 60%: {most}"
        );
        assert_eq!(padded_range([10.0].into_iter(), 0.5), 0.0..15.0);
        assert_eq!(padded_range(std::iter::empty(), 0.5), 0.0..1.0);
        assert_eq!(
            ticks(&(0.0..60.0), 6),
            vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
        );
        assert_eq!(ticks(&(0.0..0.0), 6), vec![0.0]);
    }
}
