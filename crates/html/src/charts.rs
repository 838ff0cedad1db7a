//! The report's charts as SVG, drawn with plotters (its SVG backend only:
//! text stays text, nothing is rasterised, no font files are needed). Each
//! function returns the SVG of one chart, or why it has nothing to draw.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 300;

/// Colours of successive series (colour-blind friendly, Okabe-Ito).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// A marked point (the knee, the SLO answer) with its label.
#[derive(Clone, Debug)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub label: String,
}

/// A line chart: x linear, y linear or logarithmic.
pub struct Lines<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub series: &'a [Series],
    pub log_y: bool,
    pub y_fmt: &'a dyn Fn(f64) -> String,
    pub x_fmt: Option<&'a dyn Fn(f64) -> String>,
    pub marks: &'a [Mark],
    /// A horizontal line (a bound), with its label.
    pub rule: Option<(f64, String)>,
    pub points: bool,
    /// The run's time axis, shared by the charts stacked on it.
    pub axis: Option<&'a Axis>,
}

/// One x range for every chart of a run's timeline, with what happened on
/// it: the faults (a dashed line each) and the seconds a limit was named
/// (shaded), so a dip in one chart lines up with its cause in another.
#[derive(Clone, Debug, Default)]
pub struct Axis {
    pub from: f64,
    pub to: f64,
    pub events: Vec<(f64, String)>,
    pub bands: Vec<(f64, f64, String)>,
}

type Fail = String;

fn fail<E: std::fmt::Debug>(e: E) -> Fail {
    format!("{e:?}")
}

/// A surface needs more height than a line chart to read.
pub const SURFACE_HEIGHT: u32 = 420;

/// Draw into a new SVG string.
fn svg(draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Fail>) -> Result<String, Fail> {
    svg_sized((WIDTH, HEIGHT), draw)
}

fn svg_sized(size: (u32, u32), draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), Fail>) -> Result<String, Fail> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(fail)?;
        draw(&root)?;
        root.present().map_err(fail)?;
    }
    Ok(out)
}

fn bounds(series: &[Series], marks: &[Mark], rule: Option<f64>) -> Option<(f64, f64, f64, f64)> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).chain(marks.iter().map(|m| m.x));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).chain(marks.iter().map(|m| m.y)).chain(rule);
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    (x0 <= x1 && y0 <= y1).then_some((x0, x1, y0, y1))
}

pub fn lines(c: &Lines) -> Result<String, Fail> {
    // A log axis has no place for zero (a probe that did nothing).
    if c.log_y && c.series.iter().any(|s| s.points.iter().any(|p| p.1 <= 0.0)) {
        let kept: Vec<Series> = c
            .series
            .iter()
            .map(|s| Series { label: s.label.clone(), points: s.points.iter().copied().filter(|p| p.1 > 0.0).collect() })
            .collect();
        return lines(&Lines { series: &kept, rule: c.rule.clone(), ..*c });
    }
    let (x0, x1, y0, y1) = bounds(c.series, c.marks, c.rule.as_ref().map(|r| r.0)).ok_or("no data")?;
    let (x0, x1) = c.axis.filter(|a| a.to > a.from).map_or((x0, x1), |a| (a.from, a.to));
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    // Room for the marks' labels on the right.
    let x1 = if c.marks.is_empty() { x1 } else { x1 + (x1 - x0) * 0.12 };
    svg(|root| {
        let mut b = ChartBuilder::on(root);
        b.caption(c.title, ("sans-serif", 15)).margin(10).x_label_area_size(34).y_label_area_size(70);
        if c.log_y {
            let lo = (y0.max(1.0) / 1.5).max(1.0);
            let mut chart = b.build_cartesian_2d(x0..x1, (lo..(y1.max(lo) * 1.5)).log_scale()).map_err(fail)?;
            mesh(&mut chart, c)?;
            draw_lines(&mut chart, c)
        } else {
            let top = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
            let mut chart = b.build_cartesian_2d(x0..x1, 0f64..top).map_err(fail)?;
            mesh(&mut chart, c)?;
            draw_lines(&mut chart, c)
        }
    })
}

fn mesh<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    c: &Lines,
) -> Result<(), Fail>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let y_fmt = |v: &f64| (c.y_fmt)(*v);
    let x_fmt = |v: &f64| c.x_fmt.map_or_else(|| trim_number(*v), |f| f(*v));
    chart
        .configure_mesh()
        .x_desc(c.x_desc)
        .y_desc(c.y_desc)
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&x_fmt)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(fail)
}

/// One series: its line with its legend key, and a dot per point if asked.
fn series_line<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    s: &Series,
    style: ShapeStyle,
    dots: bool,
) -> Result<(), Fail>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .draw_series(LineSeries::new(s.points.iter().copied(), style))
        .map_err(fail)?
        .label(s.label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], style));
    if dots {
        chart.draw_series(s.points.iter().map(|p| Circle::new(*p, 3, style.filled()))).map_err(fail)?;
    }
    Ok(())
}

fn draw_lines<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    c: &Lines,
) -> Result<(), Fail>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    if let Some(a) = c.axis {
        on_axis(chart, a)?;
    }
    for (i, s) in c.series.iter().enumerate() {
        series_line(chart, s, colour(i).stroke_width(2), c.points)?;
    }
    if let Some((y, label)) = &c.rule {
        let (xa, xb) = (chart.x_range().start, chart.x_range().end);
        let red = RGBColor(200, 0, 0);
        chart
            .draw_series(LineSeries::new([(xa, *y), (xb, *y)], red.stroke_width(1)))
            .map_err(fail)?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], red));
    }
    for m in c.marks {
        let red = RGBColor(200, 0, 0);
        chart.draw_series([Circle::new((m.x, m.y), 7, red.stroke_width(2))]).map_err(fail)?;
        chart.draw_series([Text::new(m.label.clone(), (m.x, m.y), ("sans-serif", 13).into_font().color(&red))]).map_err(fail)?;
    }
    if c.series.len() > 1 || c.rule.is_some() {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(RGBColor(180, 180, 180))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(fail)?;
    }
    Ok(())
}

/// The axis's shaded seconds under the lines, and its events over them.
fn on_axis<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    a: &Axis,
) -> Result<(), Fail>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (ya, yb) = (chart.y_range().start, chart.y_range().end);
    let shade = RGBColor(255, 160, 0).mix(0.15);
    for (from, to, label) in &a.bands {
        chart.draw_series([Rectangle::new([(*from, ya), (*to, yb)], shade.filled())]).map_err(fail)?;
        chart
            .draw_series([Text::new(label.clone(), (*from, yb), ("sans-serif", 11).into_font().color(&RGBColor(160, 90, 0)))])
            .map_err(fail)?;
    }
    let red = RGBColor(200, 0, 0);
    for (x, label) in &a.events {
        chart.draw_series(DashedLineSeries::new([(*x, ya), (*x, yb)], 5, 4, red.stroke_width(1))).map_err(fail)?;
        chart.draw_series([Text::new(label.clone(), (*x, yb), ("sans-serif", 12).into_font().color(&red))]).map_err(fail)?;
    }
    Ok(())
}

fn trim_number(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Latency over time: one column per second, one row per coarse latency
/// bucket, darker for more operations (log scale of counts).
/// One second of a heatmap: its start and end, and (bucket, count) pairs.
pub type Column = (f64, f64, Vec<(u16, u64)>);

pub fn time_heatmap(title: &str, columns: &[Column], y_fmt: &dyn Fn(f64) -> String) -> Result<String, Fail> {
    let max = columns.iter().flat_map(|c| c.2.iter().map(|b| b.1)).max().ok_or("no data")?;
    let low = |b: u16| storbench_metrics::hist::log_bucket_low(b);
    let b0 = columns.iter().flat_map(|c| c.2.iter().map(|b| b.0)).min().ok_or("no data")?;
    let b1 = columns.iter().flat_map(|c| c.2.iter().map(|b| b.0)).max().ok_or("no data")? + 1;
    let (t0, t1) = (columns.first().map_or(0.0, |c| c.0), columns.last().map_or(1.0, |c| c.1));
    svg(|root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 15))
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(70)
            .build_cartesian_2d(t0..t1.max(t0 + 1.0), (low(b0)..low(b1)).log_scale())
            .map_err(fail)?;
        let y_fmt = |v: &f64| y_fmt(*v);
        chart.configure_mesh().disable_mesh().x_desc("seconds").y_desc("latency").y_label_formatter(&y_fmt).draw().map_err(fail)?;
        let scale = (max as f64).ln().max(1e-9);
        let cells = columns.iter().flat_map(|(a, b, buckets)| {
            buckets.iter().map(move |(k, n)| {
                let shade = ((*n as f64).ln() / scale).clamp(0.0, 1.0);
                let c = RGBColor((235.0 - 215.0 * shade) as u8, (240.0 - 190.0 * shade) as u8, (255.0 - 110.0 * shade) as u8);
                Rectangle::new([(*a, low(*k)), (*b, low(*k + 1))], c.filled())
            })
        });
        chart.draw_series(cells).map_err(fail)?;
        Ok(())
    })
}

/// A two-dimensional sweep: one cell per (x, y) value pair, coloured by its
/// figure and labelled with it.
pub struct Grid<'a> {
    pub title: &'a str,
    pub x_desc: &'a str,
    pub x_values: &'a [String],
    pub y_desc: &'a str,
    pub y_values: &'a [String],
    /// cells[y][x]
    pub cells: &'a [Vec<Option<f64>>],
    pub fmt: &'a dyn Fn(f64) -> String,
    /// Darker is better when higher (throughput) or when lower (latency).
    pub higher_is_better: bool,
}

pub fn grid(g: &Grid) -> Result<String, Fail> {
    grid_sized(g, (WIDTH, HEIGHT))
}

/// A grid drawn at another size: half the width for grids read side by
/// side, so their text keeps its size on the page.
pub fn grid_sized(g: &Grid, size: (u32, u32)) -> Result<String, Fail> {
    let vals: Vec<f64> = g.cells.iter().flatten().flatten().copied().collect();
    let (lo, hi) = vals.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    cells_chart(g, size, &|v| {
        let share = goodness(v, lo, hi, g.higher_is_better);
        (grid_colour(share), share > 0.6)
    })
}

/// A chart's title and the room its axes' labels take.
fn framed<'a, 'b>(root: &'a DrawingArea<SVGBackend<'b>, Shift>, title: &str) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(root);
    b.caption(title, ("sans-serif", 15)).margin(10).x_label_area_size(34).y_label_area_size(70);
    b
}

/// A grid's cells, each filled with the colour `paint` gives its value
/// (and white text on the dark ones), labelled with its figure.
fn cells_chart(g: &Grid, size: (u32, u32), paint: &dyn Fn(f64) -> (RGBColor, bool)) -> Result<String, Fail> {
    if g.cells.iter().flatten().flatten().next().is_none() {
        return Err("no data".into());
    }
    let (nx, ny) = (g.x_values.len() as f64, g.y_values.len() as f64);
    svg_sized(size, |root| {
        let mut chart = framed(root, g.title).build_cartesian_2d(-0.5..nx - 0.5, -0.5..ny - 0.5).map_err(fail)?;
        let xl = |v: &f64| value_label(g.x_values, *v);
        let yl = |v: &f64| value_label(g.y_values, *v);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(g.x_desc)
            .y_desc(g.y_desc)
            .x_labels(g.x_values.len())
            .y_labels(g.y_values.len())
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .draw()
            .map_err(fail)?;
        for (yi, row) in g.cells.iter().enumerate() {
            for (xi, cell) in row.iter().enumerate() {
                let Some(v) = cell else { continue };
                let (c, dark) = paint(*v);
                let (x, y) = (xi as f64, yi as f64);
                chart.draw_series([Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], c.filled())]).map_err(fail)?;
                let text_colour = if dark { WHITE } else { BLACK };
                let style = ("sans-serif", 13).into_font().color(&text_colour).pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ));
                chart.draw_series([Text::new((g.fmt)(*v), (x, y), style)]).map_err(fail)?;
            }
        }
        Ok(())
    })
}

/// The value at a whole position of an axis of named values; nothing
/// between positions.
pub fn value_label(values: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 0.01 && i >= 0.0 {
        values.get(i as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// Where `v` lies between the worst and the best of a grid, 0..1.
fn goodness(v: f64, lo: f64, hi: f64, higher_is_better: bool) -> f64 {
    let share = if hi > lo { (v - lo) / (hi - lo) } else { 1.0 };
    if higher_is_better {
        share
    } else {
        1.0 - share
    }
}

/// Light for the worst cell of a grid, dark blue for the best.
fn grid_colour(share: f64) -> RGBColor {
    RGBColor((230.0 - 200.0 * share) as u8, (240.0 - 150.0 * share) as u8, (250.0 - 80.0 * share) as u8)
}

/// A two-dimensional sweep as a surface: the grid's cells as heights over
/// the plane of the two dimensions (by the position of their values),
/// coloured as the grid colours them. Where a point is missing (skipped past
/// a knee) the quads around it are left out rather than drawn at zero.
pub fn surface(g: &Grid) -> Result<String, Fail> {
    let vals: Vec<f64> = g.cells.iter().flatten().flatten().copied().collect();
    if vals.is_empty() {
        return Err("no data".into());
    }
    let (lo, hi) = vals.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let top = if hi > 0.0 { hi * 1.05 } else { 1.0 };
    let (nx, ny) = (g.x_values.len(), g.y_values.len());
    let at = |x: usize, y: usize| g.cells.get(y).and_then(|r| r.get(x)).copied().flatten();
    let mut quads: Vec<[(f64, f64, f64); 4]> = Vec::new();
    for y in 0..ny.saturating_sub(1) {
        for x in 0..nx.saturating_sub(1) {
            let corners = [(x, y), (x + 1, y), (x + 1, y + 1), (x, y + 1)];
            if let [Some(a), Some(b), Some(c), Some(d)] = corners.map(|(x, y)| at(x, y)) {
                let [p, q, r, t] = corners.map(|(x, y)| (x as f64, 0.0, y as f64));
                quads.push([(p.0, a, p.2), (q.0, b, q.2), (r.0, c, r.2), (t.0, d, t.2)]);
            }
        }
    }
    if quads.is_empty() {
        return Err("no two neighbouring rows and columns with figures".into());
    }
    svg_sized((WIDTH, SURFACE_HEIGHT), |root| {
        let caption = format!("{} by {} (to the left) and {} (to the right)", g.title, g.x_desc, g.y_desc);
        let mut chart = ChartBuilder::on(root)
            .caption(caption, ("sans-serif", 15))
            .margin(10)
            .build_cartesian_3d(0.0..(nx - 1) as f64, 0.0..top, 0.0..(ny - 1) as f64)
            .map_err(fail)?;
        // Seen from beyond the last values, so the first values of both
        // dimensions (the low corner) are nearest and nothing hides them.
        chart.with_projection(|mut pb| {
            pb.yaw = 0.6 + std::f64::consts::PI;
            pb.pitch = 0.3;
            pb.scale = 0.85;
            pb.into_matrix()
        });
        let xl = |v: &f64| value_label(g.x_values, *v);
        let zl = |v: &f64| value_label(g.y_values, *v);
        let yl = |v: &f64| (g.fmt)(*v);
        chart
            .configure_axes()
            .light_grid_style(BLACK.mix(0.1))
            .max_light_lines(2)
            .x_labels(nx)
            .z_labels(ny)
            .y_labels(5)
            .x_formatter(&xl)
            .z_formatter(&zl)
            .y_formatter(&yl)
            .draw()
            .map_err(fail)?;
        // Painter's order: the quads farthest from the viewer first.
        let coord = chart.as_coord_spec();
        let depth = |q: &[(f64, f64, f64); 4]| {
            let (x, y, z) = q.iter().fold((0.0, 0.0, 0.0), |a, p| (a.0 + p.0 / 4.0, a.1 + p.1 / 4.0, a.2 + p.2 / 4.0));
            coord.projected_depth(&x, &y, &z)
        };
        quads.sort_by_key(depth);
        for q in &quads {
            let c = grid_colour(goodness(q.iter().map(|p| p.1).sum::<f64>() / 4.0, lo, hi, g.higher_is_better));
            chart.draw_series([Polygon::new(q.to_vec(), c.filled())]).map_err(fail)?;
            chart
                .draw_series([PathElement::new([q[0], q[1], q[2], q[3], q[0]].to_vec(), RGBColor(60, 60, 60).stroke_width(1))])
                .map_err(fail)?;
        }
        Ok(())
    })
}

/// The difference of each cell of a grid against the same cell of another
/// (a study's later configuration against its first), in percent: blue where
/// the later one is better, orange where it is worse, white where they are
/// the same, as deep as the largest difference (diverging colours, so the
/// sign reads before the number).
pub fn difference_grid(g: &Grid) -> Result<String, Fail> {
    let widest = g.cells.iter().flatten().flatten().fold(1.0f64, |a, v| a.max(v.abs()));
    cells_chart(g, (WIDTH, HEIGHT), &|v| {
        let better = if g.higher_is_better { v } else { -v } / widest;
        (diverging(better), better.abs() > 0.6)
    })
}

/// White at 0, blue towards +1 (better), orange towards -1 (worse).
fn diverging(share: f64) -> RGBColor {
    let s = share.clamp(-1.0, 1.0);
    let mix = |to: (f64, f64, f64), t: f64| {
        RGBColor((255.0 + (to.0 - 255.0) * t) as u8, (255.0 + (to.1 - 255.0) * t) as u8, (255.0 + (to.2 - 255.0) * t) as u8)
    };
    if s >= 0.0 {
        mix((0.0, 90.0, 170.0), s)
    } else {
        mix((200.0, 80.0, 0.0), -s)
    }
}

/// Throughput against a count (agents, volumes) with each series' linear
/// scaling from its first point drawn thin in the series' colour: how far
/// a curve falls below its line is what the count did not buy.
pub fn scaling(title: &str, x_desc: &str, series: &[Series], y_fmt: &dyn Fn(f64) -> String) -> Result<String, Fail> {
    let ideal: Vec<Series> = series.iter().map(linear_from_first).collect();
    let all: Vec<Series> = series.iter().chain(&ideal).cloned().collect();
    let (x0, x1, _, y1) = bounds(&all, &[], None).ok_or("no data")?;
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    svg(|root| {
        let mut chart = framed(root, title).build_cartesian_2d(x0..x1, 0f64..(y1.max(1.0) * 1.1)).map_err(fail)?;
        let y_fmt = |v: &f64| y_fmt(*v);
        let x_fmt = |v: &f64| trim_number(*v);
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("IOPS")
            .y_label_formatter(&y_fmt)
            .x_label_formatter(&x_fmt)
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(fail)?;
        for (i, (s, line)) in series.iter().zip(&ideal).enumerate() {
            series_line(&mut chart, s, colour(i).stroke_width(2), true)?;
            series_line(&mut chart, line, colour(i).mix(0.5).stroke_width(1), false)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .border_style(RGBColor(180, 180, 180))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(fail)
    })
}

/// A series' linear scaling from its first point: y1 * x / x1.
pub fn linear_from_first(s: &Series) -> Series {
    let points = match s.points.first() {
        Some(&(x1, y1)) if x1 > 0.0 => s.points.iter().map(|p| (p.0, y1 * p.0 / x1)).collect(),
        _ => Vec::new(),
    };
    Series { label: if s.label.is_empty() { "linear".into() } else { format!("{}: linear", s.label) }, points }
}

/// The x position of percentile `p` on a "nines" axis: p50 -> 0.3, p90 ->
/// 1, p99 -> 2, p99.9 -> 3.
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The percentile label of a position on the nines axis.
pub fn nines_label(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    if (x - x.round()).abs() > 0.01 {
        return String::new();
    }
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nines_axis() {
        assert!((nines(99.0) - 2.0).abs() < 1e-9 && (nines(90.0) - 1.0).abs() < 1e-9);
        assert_eq!(
            (nines_label(1.0), nines_label(2.0), nines_label(3.0), nines_label(2.5)),
            ("p90".into(), "p99".into(), "p99.9".into(), String::new())
        );
    }

    #[test]
    fn a_surface_leaves_out_the_quads_around_a_missing_point() {
        let values: Vec<String> = ["1", "2", "3"].map(String::from).into();
        let xs: Vec<String> = ["1", "2", "4", "8"].map(String::from).into();
        let full: Vec<Vec<Option<f64>>> = (0..3).map(|y| (0..4).map(|x| Some((x * y) as f64 + 1.0)).collect()).collect();
        let fmt = |v: f64| format!("{v}");
        let g = Grid {
            title: "IOPS",
            x_desc: "iodepth",
            x_values: &xs,
            y_desc: "numjobs",
            y_values: &values,
            cells: &full,
            fmt: &fmt,
            higher_is_better: true,
        };
        let polygons = |svg: &str| svg.matches("<polygon").count();
        let all = surface(&g).unwrap();
        let mut holed = full.clone();
        holed[1][1] = None;
        let some = surface(&Grid { cells: &holed, ..g }).unwrap();
        // Six quads in a 4 x 3 grid; an inner point touches four of them.
        assert_eq!(polygons(&all) - polygons(&some), 4, "{} vs {}", polygons(&all), polygons(&some));
        assert!(all.contains("iodepth") && all.contains("numjobs"));
        let mut lone = vec![vec![None; 4]; 3];
        lone[0][0] = Some(5.0);
        assert!(surface(&Grid { cells: &lone, ..g }).is_err(), "one point is no surface");
    }

    #[test]
    fn charts_draw_their_data_or_say_there_is_none() {
        let s = [Series { label: "a".into(), points: vec![(0.0, 1.0), (1.0, 2.0)] }];
        let fmt = |v: f64| format!("{v}");
        let c = Lines {
            title: "t",
            x_desc: "x",
            y_desc: "y",
            series: &s,
            log_y: true,
            y_fmt: &fmt,
            x_fmt: None,
            marks: &[],
            rule: None,
            points: false,
            axis: None,
        };
        assert!(lines(&c).unwrap().contains("<polyline"));
        let empty = Lines { series: &[], rule: None, ..c };
        assert_eq!(lines(&empty).unwrap_err(), "no data");
        // On a run's axis: its faults and the seconds a limit was named drawn over the lines.
        let axis = Axis { from: 0.0, to: 10.0, events: vec![(5.0, "osd-out:2".into())], bands: vec![(2.0, 4.0, "disk vda".into())] };
        let on = lines(&Lines { axis: Some(&axis), log_y: false, rule: None, ..c }).unwrap();
        assert!(on.contains("osd-out:2") && on.contains("disk vda"), "{on}");
        assert!(
            on.matches("<rect").count() > lines(&Lines { log_y: false, rule: None, ..c }).unwrap().matches("<rect").count(),
            "the band shaded"
        );
        let cols = vec![(0.0, 1.0, vec![(40u16, 5u64), (41, 1)]), (1.0, 2.0, vec![(42, 3)])];
        assert!(time_heatmap("h", &cols, &fmt).unwrap().matches("<rect").count() >= 3);
    }

    #[test]
    fn a_difference_grid_colours_by_sign_and_says_when_empty() {
        let xs: Vec<String> = ["4KiB", "64KiB"].map(String::from).into();
        let ys: Vec<String> = ["1", "8"].map(String::from).into();
        let cells = vec![vec![Some(25.0), Some(-10.0)], vec![Some(0.0), None]];
        let fmt = |v: f64| format!("{v:+.0}%");
        let g = Grid {
            title: "IOPS on against off",
            x_desc: "bs",
            x_values: &xs,
            y_desc: "iodepth",
            y_values: &ys,
            cells: &cells,
            fmt: &fmt,
            higher_is_better: true,
        };
        let svg = difference_grid(&g).unwrap();
        assert!(svg.contains("+25%") && svg.contains("-10%") && svg.contains("64KiB"), "{svg}");
        assert_eq!(svg.matches("<rect").count() - 1, 3, "three cells (and the background); the missing one left out");
        assert!((diverging(1.0).2 > diverging(1.0).0) && (diverging(-1.0).0 > diverging(-1.0).2) && diverging(0.0) == WHITE);
        let none = vec![vec![None, None]];
        assert_eq!(difference_grid(&Grid { cells: &none, ..g }).unwrap_err(), "no data");
    }

    #[test]
    fn a_scaling_chart_draws_each_series_and_its_linear_line() {
        let s = [Series { label: "4k randread".into(), points: vec![(1.0, 1000.0), (2.0, 1900.0), (4.0, 3600.0)] }];
        let ideal = linear_from_first(&s[0]);
        assert_eq!(ideal.points, [(1.0, 1000.0), (2.0, 2000.0), (4.0, 4000.0)]);
        let fmt = |v: f64| format!("{v}");
        let svg = scaling("IOPS by agents", "agents", &s, &fmt).unwrap();
        assert_eq!(svg.matches("opacity=\"0.5\"").count(), 2, "the linear line and its legend key, drawn thin: {svg}");
        assert!(svg.contains("4k randread\n") && svg.contains("4k randread: linear\n") && svg.contains("agents"));
        assert_eq!(scaling("t", "agents", &[], &fmt).unwrap_err(), "no data");
    }
}
