//! The plots of the HTML pages, as inline SVG strings drawn by `plotters`.

use anyhow::{anyhow, Result};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One line of a line chart.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const WIDTH: u32 = 560;
const HEIGHT: u32 = 320;

/// Colours that stay apart in print and for the common colour blindnesses (Tableau 10).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x9c, 0x75, 0x5f),
];

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Axis labels and descriptions: plotters' default is too small to read on a page.
const LABELS: (&str, u32) = ("sans-serif", 13);

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// Run `draw` on a fresh SVG canvas of `size` and hand back the SVG text.
fn svg(size: (u32, u32), draw: impl FnOnce(&Area) -> DrawResult) -> Result<String> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("plotting: {e}"))?;
        draw(&root).map_err(|e| anyhow!("plotting: {e}"))?;
        root.present().map_err(|e| anyhow!("plotting: {e}"))?;
    }
    Ok(text)
}

/// A chart with the pages' caption and margins; `y_area` is the width of the y labels.
fn titled<'a, 'b>(root: &'a Area<'b>, title: &str, y_area: u32) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder.caption(title, ("sans-serif", 16)).margin(10).x_label_area_size(34).y_label_area_size(y_area);
    builder
}

/// Readable labels and no minor grid lines.
fn plain_mesh<'m, 'a, 'b, 'c, X, Y>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, SVGBackend<'c>>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
{
    mesh.label_style(LABELS).axis_desc_style(LABELS).light_line_style(WHITE.mix(0.0))
}

/// A range that holds `values` with a little room, and is never empty.
fn span(values: impl Iterator<Item = f64>, from_zero: bool) -> std::ops::Range<f64> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let room = if hi > lo { (hi - lo) * 0.05 } else { hi.abs().max(1.0) * 0.5 };
    (if from_zero && lo >= 0.0 { lo } else { lo - room })..hi + room
}

/// Lines over a shared x axis (time, evaluations), y from zero.
pub fn line_chart(title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<String> {
    let xs = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), true);
    let ys = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)), true);
    svg((WIDTH, HEIGHT), |root| draw_lines(root, title, x_desc, y_desc, series, xs, ys))
}

/// [`line_chart`] with a logarithmic y axis, for values that span orders of magnitude
/// (the scores of a ranking's first file and its followers); values at or below zero sit
/// on the axis's floor.
pub fn log_line_chart(title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<String> {
    let xs = span(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)), true);
    let positive = || series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|v| *v > 0.0);
    let hi = positive().fold(1.0, f64::max) * 1.5;
    let floor = positive().fold(hi, f64::min).min(hi / 10.0) / 1.5;
    let clamped: Vec<Series> = series
        .iter()
        .map(|s| Series { name: s.name.clone(), points: s.points.iter().map(|&(x, y)| (x, y.max(floor))).collect() })
        .collect();
    svg((WIDTH, HEIGHT), |root| draw_lines(root, title, x_desc, y_desc, &clamped, xs, (floor..hi).log_scale()))
}

fn draw_lines<Y>(
    root: &Area,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    xs: std::ops::Range<f64>,
    ys: Y,
) -> DrawResult
where
    Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
    <Y as plotters::coord::ranged1d::AsRangedCoord>::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
{
    let mut chart = titled(root, title, 56).build_cartesian_2d(xs, ys)?;
    plain_mesh(&mut chart.configure_mesh()).x_desc(x_desc).y_desc(y_desc).draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))?
            .label(s.name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    if series.len() > 1 {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()?;
    }
    Ok(())
}

/// Horizontal bars, one per (label, value), in the order given.
pub fn bar_chart(title: &str, x_desc: &str, bars: &[(String, f64)]) -> Result<String> {
    let n = bars.len().max(1);
    let height = (60 + 22 * n as u32).max(140);
    let xs = span(bars.iter().map(|b| b.1), true);
    let longest = bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(4) as u32;
    svg((WIDTH, height), |root| {
        let mut chart =
            titled(root, title, (longest * 8 + 12).min(300)).build_cartesian_2d(xs, (0..n).into_segmented())?;
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => bars.get(*i).map(|b| b.0.clone()).unwrap_or_default(),
            SegmentValue::Last => String::new(),
        };
        plain_mesh(&mut chart.configure_mesh())
            .disable_y_mesh()
            .x_desc(x_desc)
            .y_labels(n)
            .y_label_formatter(&label)
            .draw()?;
        chart.draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            let top = SegmentValue::Exact(i);
            let bottom = SegmentValue::Exact(i + 1);
            let mut bar = Rectangle::new([(0.0, top), (*v, bottom)], colour(0).filled());
            bar.set_margin(3, 3, 0, 0);
            bar
        }))?;
        Ok(())
    })
}

/// Points in the plane; the `selected` ones drawn large and coloured, the others small
/// and grey, so that a selection's spread shows against its pool.
pub fn scatter(title: &str, points: &[(f64, f64)], selected: &[bool]) -> Result<String> {
    let xs = span(points.iter().map(|p| p.0), false);
    let ys = span(points.iter().map(|p| p.1), false);
    svg((WIDTH, HEIGHT), |root| {
        let mut chart = titled(root, title, 48).build_cartesian_2d(xs, ys)?;
        plain_mesh(&mut chart.configure_mesh()).x_desc("first principal component").y_desc("second").draw()?;
        let is_selected = |i: usize| selected.get(i).copied().unwrap_or(false);
        let pool = points.iter().enumerate().filter(|(i, _)| !is_selected(*i));
        chart
            .draw_series(pool.map(|(_, p)| Circle::new(*p, 2, RGBColor(0x99, 0x99, 0x99).filled())))?
            .label("pool")
            .legend(|(x, y)| Circle::new((x + 8, y), 2, RGBColor(0x99, 0x99, 0x99).filled()));
        let chosen = points.iter().enumerate().filter(|(i, _)| is_selected(*i));
        chart
            .draw_series(chosen.map(|(_, p)| Circle::new(*p, 5, colour(2).filled())))?
            .label("selected")
            .legend(|(x, y)| Circle::new((x + 8, y), 5, colour(2).filled()));
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK.mix(0.3)).draw()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_chart_is_svg_with_its_title_axes_and_legend() {
        let series = vec![
            Series { name: "pairs/s".into(), points: vec![(0.0, 1.0), (10.0, 3.0)] },
            Series { name: "bugs".into(), points: vec![(0.0, 0.0), (10.0, 1.0)] },
        ];
        let svg = line_chart("Throughput", "seconds", "rate", &series).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for text in ["Throughput", "seconds", "rate", "pairs/s", "bugs", "<polyline"] {
            assert!(svg.contains(text), "{text} missing");
        }
    }

    #[test]
    fn a_bar_chart_names_every_bar_and_draws_one_rectangle_each() {
        let bars = vec![("licm".to_string(), 3.0), ("slp-vectorizer".to_string(), 7.0)];
        let svg = bar_chart("Failures by pass", "failures", &bars).unwrap();
        assert!(svg.contains("licm") && svg.contains("slp-vectorizer"), "{svg}");
        // One background rectangle plus one per bar.
        assert!(svg.matches("<rect").count() >= 3, "{svg}");
    }

    #[test]
    fn a_scatter_draws_selected_points_larger() {
        let points = vec![(0.0, 0.0), (1.0, 1.0), (2.0, 0.5)];
        let svg = scatter("Sequences", &points, &[false, true, false]).unwrap();
        assert_eq!(svg.matches("r=\"5\"").count(), 2, "one selected point and its legend mark: {svg}");
        assert!(svg.matches("r=\"2\"").count() >= 3, "two pool points and a legend mark: {svg}");
    }

    #[test]
    fn a_log_chart_keeps_zero_and_huge_values_on_its_axis() {
        let series = vec![
            Series { name: "big".into(), points: vec![(0.0, 7000.0), (1.0, 1500.0)] },
            Series { name: "none".into(), points: vec![(0.0, 0.0), (1.0, 2.0)] },
        ];
        let svg = log_line_chart("Scores", "seconds", "score", &series).unwrap();
        assert!(svg.contains("big") && svg.contains("none") && svg.matches("<polyline").count() >= 2, "{svg}");
    }

    #[test]
    fn empty_and_constant_data_still_plot() {
        assert!(line_chart("t", "x", "y", &[]).unwrap().contains("<svg"));
        let flat = vec![Series { name: "a".into(), points: vec![(5.0, 2.0), (5.0, 2.0)] }];
        assert!(line_chart("t", "x", "y", &flat).unwrap().contains("<svg"));
        assert!(bar_chart("t", "x", &[]).unwrap().contains("<svg"));
        assert!(scatter("t", &[], &[]).unwrap().contains("<svg"));
    }
}
