//! The chart of each kind a study question asks for (lines, iops-latency,
//! surfaces, scaling, ramp, table) and the answer it gives: one line with
//! its numbers and their scope, for the report's first screen.

use super::points::{curves, grid_points, scope, sweep_of, Axis, Curve, View};
use crate::charts::{self, Grid, Lines, Mark, Series};
use crate::{lat, slug, Chart, StepData};
use storbench_model::study::{Ask, Metric, QuestionInfo};
use storbench_model::sweep::{PointFigures, AGENTS};
use storbench_report::fmt::{count, mib_per_s};
use storbench_workload::options::axis;

/// What a question's chart gives the page.
#[derive(Default)]
pub struct Part {
    pub charts: Vec<Chart>,
    /// The answers' lines (one or a few).
    pub answers: Vec<String>,
    /// Tables of the chart's own (scaling efficiency, steps' figures).
    pub tables: Vec<(String, Vec<String>, Vec<Vec<String>>)>,
    /// Why a chart could not be drawn as asked (then another is).
    pub notes: Vec<String>,
    /// How many of the first charts are read across, side by side (a
    /// grid per configuration).
    pub side_by_side: usize,
}

pub fn value(m: Metric, f: &PointFigures) -> f64 {
    match m {
        Metric::Iops => f.iops,
        Metric::MibS => f.bytes_per_sec,
        Metric::Mean => f.mean_ns,
        Metric::P50 => f.p50_ns as f64,
        Metric::P99 => f.p99_ns as f64,
        Metric::P999 => f.p999_ns as f64,
    }
}

pub fn metric_name(m: Metric) -> &'static str {
    match m {
        Metric::Iops => "IOPS",
        Metric::MibS => "MiB/s",
        Metric::Mean => "mean latency",
        Metric::P50 => "p50 latency",
        Metric::P99 => "p99 latency",
        Metric::P999 => "p99.9 latency",
    }
}

pub fn metric_fmt(m: Metric) -> fn(f64) -> String {
    match m {
        Metric::Iops => count,
        Metric::MibS => mib_per_s,
        _ => lat,
    }
}

/// A figure with its unit: `12.3k IOPS`, `410 MiB/s`, `1.9ms`.
fn with_unit(m: Metric, v: f64) -> String {
    match m {
        Metric::Iops => format!("{} IOPS", count(v)),
        Metric::MibS => format!("{} MiB/s", mib_per_s(v)),
        _ => lat(v),
    }
}

fn metrics(q: &QuestionInfo) -> Vec<Metric> {
    if q.metrics.is_empty() {
        vec![Metric::Iops]
    } else {
        q.metrics.clone()
    }
}

/// Log y once the figures span more than 50x (a curve that stays low would
/// be a flat line at the bottom).
fn wide(series: &[Series]) -> bool {
    let ys: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|y| *y > 0.0).collect();
    let (lo, hi) = ys.iter().fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    !ys.is_empty() && hi / lo > 50.0
}

/// `(off)` after a value when the page has several steps.
fn who(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" ({label})")
    }
}

fn at(c: &Curve, value: &str) -> String {
    let v = format!("{}={}", c.option, axis::label(&c.option, value));
    if c.fixed.is_empty() {
        v
    } else {
        format!("{v} {}", c.fixed)
    }
}

/// A point's scope, from the run it came from: ` (total of 2 jobs
/// together)`, or nothing.
fn point_scope(views: &[View], c: &Curve, p: &super::points::Pt) -> String {
    let runs = sweep_of(&views[c.view]).map(|(_, r)| super::points::runs_by_dir(r));
    let run = runs.as_ref().zip(p.dir.as_ref()).and_then(|(r, d)| r.get(d)).copied();
    let agents = if c.option == AGENTS { p.value.parse().ok() } else { None };
    who(&scope(&p.fig, run, agents))
}

/// At most this many curves a chart: more are a tangle no one reads (the
/// points table has them all).
const MAX_SERIES: usize = 12;

/// How many of `n` curves a chart draws; a note when not all.
fn capped(n: usize, part: &mut Part) -> usize {
    if n > MAX_SERIES {
        part.notes.push(format!("the chart draws the first {MAX_SERIES} of {n} curves; the points table has every point"));
    }
    n.min(MAX_SERIES)
}

/// The option a question sweeps last (its `--sweep` word's, as in
/// `numjobs=1,2,4`), or `otherwise` (a ramp's users) before any point ran.
fn swept(q: &QuestionInfo, otherwise: &str) -> String {
    q.sweep.last().and_then(|w| w.split('=').next()).map_or_else(|| otherwise.to_string(), |o| o.trim().to_string())
}

/// The options the curves run along, in order of appearance.
fn options(cs: &[Curve]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in cs {
        if !out.contains(&c.option) {
            out.push(c.option.clone());
        }
    }
    out
}

/// lines: a chart per metric over the last swept option, a series per
/// step (configuration, line) and fixed values of the other options; the
/// answer is the best point of the first metric.
pub fn lines(q: &QuestionInfo, views: &[View]) -> Part {
    let cs = curves(views);
    let mut part = Part::default();
    if cs.is_empty() {
        part.answers.push("no swept points measured yet".into());
        return part;
    }
    let opts = options(&cs);
    for option in &opts {
        let mut mine: Vec<&Curve> = cs.iter().filter(|c| &c.option == option).collect();
        mine.truncate(capped(mine.len(), &mut part));
        let ax = Axis::of(option, &mine);
        for m in metrics(q) {
            let name = if opts.len() > 1 { format!("{}-{}-{}", q.id, m.name(), option) } else { format!("{}-{}", q.id, m.name()) };
            part.charts.push(along(&ax, &mine, m, &slug(&name), &format!("{} by {option}", metric_name(m))));
        }
    }
    let m = metrics(q)[0];
    let better = |a: f64, b: f64| if m.is_latency() { a < b } else { a > b };
    let mut best: Option<(&Curve, &super::points::Pt)> = None;
    for c in &cs {
        for p in &c.points {
            if best.is_none_or(|(_, b)| better(value(m, &p.fig), value(m, &b.fig))) {
                best = Some((c, p));
            }
        }
    }
    if let Some((c, p)) = best {
        let word = if m.is_latency() { "lowest" } else { "highest" };
        let by = if views.iter().any(|v| !v.label.is_empty()) { format!("{}: ", views[c.view].label) } else { String::new() };
        let (figure, place, scope) = (with_unit(m, value(m, &p.fig)), at(c, &p.value), point_scope(views, c, p));
        part.answers.push(format!("{word} {}: {by}{figure} at {place}{scope}", metric_name(m)));
    }
    part
}

/// One metric along an axis, a series per curve, knees marked.
fn along(ax: &Axis, cs: &[&Curve], m: Metric, name: &str, title: &str) -> Chart {
    let series: Vec<Series> = cs
        .iter()
        .map(|c| Series {
            label: c.label.clone(),
            points: c.points.iter().filter_map(|p| Some((ax.x(&p.value)?, value(m, &p.fig)))).collect(),
        })
        .collect();
    let marks: Vec<Mark> = cs
        .iter()
        .flat_map(|c| c.points.iter().filter(|p| c.knees.contains(&p.value)).filter_map(|p| Some((ax.x(&p.value)?, value(m, &p.fig)))))
        .map(|(x, y)| Mark { x, y, label: " knee".into() })
        .collect();
    let fmt = metric_fmt(m);
    let tick = |x: f64| ax.tick(x);
    let svg = charts::lines(&Lines {
        title,
        x_desc: &ax.desc(),
        y_desc: metric_name(m),
        series: &series,
        log_y: wide(&series),
        y_fmt: &fmt,
        x_fmt: Some(&tick),
        marks: &marks,
        rule: None,
        points: true,
        axis: None,
    });
    Chart { name: name.into(), title: format!("{title}, one line per configuration and line; knees marked"), svg }
}

/// iops-latency: latency (the question's first latency metric, p99 by
/// default) against IOPS, a curve per step and fixed values, knees marked;
/// an SLO search's probes as its curve, its bound as a rule, its answer
/// marked.
pub fn iops_latency(q: &QuestionInfo, views: &[View]) -> Part {
    let m = metrics(q).into_iter().find(|m| m.is_latency()).unwrap_or(Metric::P99);
    let cs = curves(views);
    let mut part = Part::default();
    let shown = &cs[..capped(cs.len(), &mut part)];
    let mut series: Vec<Series> = shown
        .iter()
        .map(|c| Series { label: c.label.clone(), points: c.points.iter().map(|p| (p.fig.iops, value(m, &p.fig))).collect() })
        .collect();
    let mut marks: Vec<Mark> = shown
        .iter()
        .flat_map(|c| {
            c.points.iter().filter(|p| c.knees.contains(&p.value)).map(|p| Mark {
                x: p.fig.iops,
                y: value(m, &p.fig),
                label: " knee".into(),
            })
        })
        .collect();
    let mut rule = None;
    let mut slo_answers: Vec<String> = Vec::new();
    for v in views {
        let StepData::Slo { index, .. } = v.data else { continue };
        let mut pts: Vec<(f64, f64)> =
            index.probes.iter().filter(|p| p.rate.is_some() || p.iodepth.is_some()).map(|p| (p.achieved_iops, p.value_ns as f64)).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series { label: if v.label.is_empty() { "probes".into() } else { v.label.clone() }, points: pts });
        let bound = format!("{}<={}", index.statistic(), lat(index.bound_ns as f64));
        rule.get_or_insert((index.bound_ns as f64, format!("bound {bound}")));
        let answer = index
            .probes
            .iter()
            .find(|p| (p.rate.is_some() && p.rate == index.answer) || (p.iodepth.is_some() && p.iodepth == index.answer_iodepth));
        if let Some(p) = answer {
            marks.push(Mark { x: p.achieved_iops, y: p.value_ns as f64, label: " answer".into() });
        }
        slo_answers.push(slo_answer(index, &bound) + &who(&v.label));
    }
    let title = format!("{} against IOPS", metric_name(m));
    let svg = charts::lines(&Lines {
        title: &title,
        x_desc: "IOPS",
        y_desc: metric_name(m),
        series: &series,
        log_y: wide(&series),
        y_fmt: &lat,
        x_fmt: Some(&|v| count(v)),
        marks: &marks,
        rule: rule.clone(),
        points: true,
        axis: None,
    });
    part.charts.push(Chart { name: slug(&format!("{}-iops-latency", q.id)), title: format!("{title}: knees and answers marked"), svg });
    part.answers.extend(slo_answers);
    let knees: Vec<String> = cs.iter().flat_map(|c| c.knees.iter().map(move |k| format!("{}{}", at(c, k), who(&c.label)))).collect();
    if !knees.is_empty() {
        part.answers.push(format!("knee at {}", knees.join(", ")));
    } else if !cs.is_empty() {
        let top = cs.iter().flat_map(|c| c.points.iter().map(move |p| (c, p))).max_by(|a, b| a.1.fig.iops.total_cmp(&b.1.fig.iops));
        if let Some((c, p)) = top {
            let place = if c.label.is_empty() { at(c, &p.value) } else { format!("{} at {}", c.label, at(c, &p.value)) };
            part.answers.push(format!(
                "no knee found; highest IOPS {} at {} {} ({place})",
                count(p.fig.iops),
                metric_name(m),
                lat(value(m, &p.fig))
            ));
        }
    }
    part
}

/// An SLO search's answer line, as its own report says it.
fn slo_answer(index: &storbench_model::slo::SloIndex, bound: &str) -> String {
    match (index.answer, index.answer_iodepth) {
        (Some(a), Some(d)) => format!("deepest queue at {bound}: iodepth {d}, {} IOPS{}", count(a), index.per_agent(a, count)),
        (Some(a), None) => format!("rate at {bound}: {} IOPS{}", count(a), index.per_agent(a, count)),
        _ => format!("nothing probed met {bound}"),
    }
}

/// surfaces: each step's grid over its last two swept options side by
/// side, and each later configuration's difference against the first's
/// (same line), in percent.
pub fn surfaces(q: &QuestionInfo, views: &[View]) -> Part {
    let m = metrics(q)[0];
    let grids: Vec<(usize, Cells)> = views.iter().enumerate().filter_map(|(i, v)| cells(v, m).map(|c| (i, c))).collect();
    if grids.is_empty() {
        let mut part = lines(q, views);
        part.notes.push("surfaces need a sweep of two options or more; drawn as lines".into());
        return part;
    }
    let mut part = Part::default();
    let fmt = metric_fmt(m);
    for (i, g) in &grids {
        let v = &views[*i];
        let title = format!("{} of {}{}", metric_name(m), v.label, g.note);
        // Two or more read across, each at half the width.
        let size = if grids.len() > 1 { (charts::WIDTH / 2, charts::HEIGHT) } else { (charts::WIDTH, charts::HEIGHT) };
        let svg = charts::grid_sized(&g.grid(&title, &fmt, !m.is_latency()), size);
        part.charts.push(Chart { name: slug(&format!("{}-grid-{}-{}", q.id, v.step.config, v.step.line)), title: title.clone(), svg });
        if let Some(best) = g.best(!m.is_latency()) {
            part.answers.push(format!(
                "{} {}: {} at {}{}",
                if m.is_latency() { "lowest" } else { "highest" },
                metric_name(m),
                with_unit(m, best.0),
                best.1,
                who(&v.label)
            ));
        }
    }
    part.side_by_side = part.charts.len();
    let first = views.first().map(|v| v.step.config.clone()).unwrap_or_default();
    for (i, g) in &grids {
        let v = &views[*i];
        if v.step.config == first {
            continue;
        }
        let Some((j, base)) = grids.iter().find(|(j, _)| views[*j].step.config == first && views[*j].step.line == v.step.line) else {
            continue;
        };
        let Some(diff) = g.against(base) else { continue };
        // Named by the step it is against: the same line on the first configuration.
        let against = &views[*j].label;
        let title = format!("{} of {} against {}, percent", metric_name(m), v.label, against);
        let pct = |x: f64| format!("{x:+.0}%");
        let svg = charts::difference_grid(&diff.grid(&title, &pct, !m.is_latency()));
        part.charts.push(Chart {
            name: slug(&format!("{}-difference-{}-{}", q.id, v.step.config, v.step.line)),
            title: title.clone(),
            svg,
        });
        if let Some(s) = diff.summary() {
            part.answers.push(format!("{} against {}: {} {s}", v.label, against, metric_name(m)));
        }
    }
    part
}

/// A step's grid of one metric over its last two swept options (the ones
/// before them at their first values).
struct Cells {
    x: (String, Vec<String>),
    y: (String, Vec<String>),
    cells: Vec<Vec<Option<f64>>>,
    note: String,
}

fn cells(v: &View, m: Metric) -> Option<Cells> {
    let (ix, _) = sweep_of(v)?;
    let n = ix.dims.len();
    if n < 2 {
        return None;
    }
    let fixed: Vec<String> = ix.dims[..n - 2].iter().map(|d| d.values.first().cloned().unwrap_or_default()).collect();
    let (yd, xd) = (&ix.dims[n - 2], &ix.dims[n - 1]);
    let known: std::collections::HashMap<Vec<String>, PointFigures> =
        grid_points(ix).into_iter().filter_map(|g| Some((g.values, g.figures?))).collect();
    let cells = yd
        .values
        .iter()
        .map(|yv| {
            xd.values
                .iter()
                .map(|xv| {
                    let values = [fixed.clone(), vec![yv.clone(), xv.clone()]].concat();
                    known.get(&values).map(|f| value(m, f))
                })
                .collect()
        })
        .collect();
    let note = ix.dims[..n - 2].iter().zip(&fixed).map(|(d, v)| format!(" at {}={}", d.option, axis::label(&d.option, v))).collect();
    let labels = |d: &storbench_model::sweep::Dimension| d.values.iter().map(|v| axis::label(&d.option, v)).collect();
    Some(Cells { x: (xd.option.clone(), labels(xd)), y: (yd.option.clone(), labels(yd)), cells, note })
}

impl Cells {
    fn grid<'a>(&'a self, title: &'a str, fmt: &'a dyn Fn(f64) -> String, higher: bool) -> Grid<'a> {
        Grid {
            title,
            x_desc: &self.x.0,
            x_values: &self.x.1,
            y_desc: &self.y.0,
            y_values: &self.y.1,
            cells: &self.cells,
            fmt,
            higher_is_better: higher,
        }
    }

    /// The best cell and where it is.
    fn best(&self, higher: bool) -> Option<(f64, String)> {
        let mut out: Option<(f64, String)> = None;
        for (yi, row) in self.cells.iter().enumerate() {
            for (xi, c) in row.iter().enumerate() {
                let Some(v) = *c else { continue };
                if out.as_ref().is_none_or(|(b, _)| if higher { v > *b } else { v < *b }) {
                    out = Some((v, format!("{}={} {}={}", self.y.0, self.y.1[yi], self.x.0, self.x.1[xi])));
                }
            }
        }
        out
    }

    /// Each cell against the same cell of `base`, percent; none when the
    /// grids are not over the same options and values.
    fn against(&self, base: &Cells) -> Option<Cells> {
        if self.x != base.x || self.y != base.y {
            return None;
        }
        let cells = self
            .cells
            .iter()
            .zip(&base.cells)
            .map(|(r, b)| r.iter().zip(b).map(|(v, b)| Some((v.as_ref()? - b.filter(|b| *b > 0.0)?) / b.as_ref()? * 100.0)).collect())
            .collect();
        Some(Cells { x: self.x.clone(), y: self.y.clone(), cells, note: self.note.clone() })
    }

    /// `+12% median over 9 points (from -3% to +25%)`.
    fn summary(&self) -> Option<String> {
        let mut v: Vec<f64> = self.cells.iter().flatten().flatten().copied().collect();
        v.sort_by(f64::total_cmp);
        let mid = *v.get(v.len() / 2)?;
        Some(format!("{mid:+.0}% median over {} points (from {:+.0}% to {:+.0}%)", v.len(), v[0], v[v.len() - 1]))
    }
}

/// scaling: IOPS against the swept count (agents, volumes), each series
/// with its linear scaling from its first point, and the efficiency of
/// each point: IOPS(n) / (n/n1 x IOPS(n1)).
pub fn scaling(q: &QuestionInfo, views: &[View]) -> Part {
    let cs = curves(views);
    let mut part = Part::default();
    // Counts are numbers: the axis is linear so the linear line is straight.
    let n = |v: &str| axis::magnitude(storbench_workload::options::Kind::Count, v);
    let series: Vec<Series> = cs
        .iter()
        .map(|c| Series {
            // A question of one step has no name to tell series apart: say what is drawn.
            label: if c.label.is_empty() { "IOPS".into() } else { c.label.clone() },
            points: c.points.iter().filter_map(|p| Some((n(&p.value)?, p.fig.iops))).collect(),
        })
        .collect();
    let option = cs.first().map_or_else(|| swept(q, "agents"), |c| c.option.clone());
    let title = format!("IOPS by {option}, against linear scaling from the first point");
    let shown = capped(series.len(), &mut part);
    let svg = charts::scaling(&title, &option, &series[..shown], &|v| count(v));
    part.charts.push(Chart { name: slug(&format!("{}-scaling", q.id)), title: title.clone(), svg });
    let mut rows = Vec::new();
    for (c, s) in cs.iter().zip(&series) {
        let Some(&(n1, y1)) = s.points.first() else { continue };
        for &(n, y) in &s.points {
            let eff = if n > 0.0 && y1 > 0.0 { y * n1 / (n * y1) } else { 0.0 };
            rows.push(vec![c.label.clone(), format!("{n}"), count(y), count(y1 * n / n1.max(1e-9)), format!("{:.0}%", eff * 100.0)]);
        }
        if let Some(&(n, y)) = s.points.last().filter(|_| s.points.len() > 1) {
            let eff = y * n1 / (n * y1).max(1e-9);
            part.answers.push(format!("scaling {n1}->{n} {option}: {:.1}x ({:.0}%){}", y / y1.max(1e-9), eff * 100.0, who(&c.label)));
        }
    }
    if part.answers.is_empty() {
        part.answers.push(format!("no two {option} counts measured yet"));
    }
    part.tables.push((
        slug(&format!("{}-efficiency", q.id)),
        vec!["series".into(), option.clone(), "IOPS".into(), "linear".into(), "efficiency".into()],
        rows,
    ));
    part
}

/// ramp: throughput (ops/s) against users, a series per step, the peak
/// marked.
pub fn ramp(q: &QuestionInfo, views: &[View]) -> Part {
    let cs = curves(views);
    let mut part = Part::default();
    let shown = &cs[..capped(cs.len(), &mut part)];
    let refs: Vec<&Curve> = shown.iter().collect();
    let option = cs.first().map_or_else(|| swept(q, "users"), |c| c.option.clone());
    let ax = Axis::of(&option, &refs);
    let series: Vec<Series> = shown
        .iter()
        .map(|c| Series { label: c.label.clone(), points: c.points.iter().filter_map(|p| Some((ax.x(&p.value)?, p.fig.iops))).collect() })
        .collect();
    let mut marks = Vec::new();
    for (i, c) in cs.iter().enumerate() {
        let Some(peak) = c.points.iter().max_by(|a, b| a.fig.iops.total_cmp(&b.fig.iops)) else { continue };
        if let Some(x) = ax.x(&peak.value).filter(|_| i < shown.len()) {
            marks.push(Mark { x, y: peak.fig.iops, label: " peak".into() });
        }
        part.answers.push(format!(
            "ramp peak: {} {option}, {} ops/s{}",
            axis::label(&option, &peak.value),
            count(peak.fig.iops),
            who(&c.label)
        ));
    }
    if part.answers.is_empty() {
        part.answers.push("no ramp step measured yet".into());
    }
    // Users come whole: no tick between two counts.
    let tick = |x: f64| Some(ax.tick(x)).filter(|t| !t.contains('.')).unwrap_or_default();
    let svg = charts::lines(&Lines {
        title: &format!("throughput by {option}"),
        x_desc: &ax.desc(),
        y_desc: "ops/s",
        series: &series,
        log_y: false,
        y_fmt: &|v| count(v),
        x_fmt: Some(&tick),
        marks: &marks,
        rule: None,
        points: true,
        axis: None,
    });
    part.charts.push(Chart {
        name: slug(&format!("{}-ramp", q.id)),
        title: format!("operations per second by {option}; the peak marked"),
        svg,
    });
    part
}

/// table: one row per step's run (baseline, run, tool), and per job when
/// it had several: IOPS, MiB/s, mean, p99.
pub fn table(q: &QuestionInfo, views: &[View]) -> Part {
    let mut part = Part::default();
    let mut rows = Vec::new();
    for v in views {
        let StepData::Runs(set) = v.data else { continue };
        for (i, r) in set.runs.iter().enumerate() {
            // A tool's phases (swift-bench's PUT, GET, DELETE) by their names.
            let part_name = super::points::phase(&r.result).unwrap_or_else(|| format!("#{}", i + 1));
            let name = if set.runs.len() > 1 { format!("{} {part_name}", v.label).trim().to_string() } else { v.label.clone() };
            let rows_of = super::points::run_rows(&r.result);
            // A baseline's jobs are each a ceiling of their own (4k random,
            // 1m sequential, one after another): they answer one by one.
            let answered = if q.ask == Ask::Baseline && rows_of.len() > 1 { &rows_of[1..] } else { &rows_of[..1] };
            for (scope_name, f) in answered {
                let s = if scope_name == "all" { scope(f, Some(&r.result), None) } else { String::new() };
                let who_ = match (name.is_empty(), scope_name.strip_prefix("job ")) {
                    (true, None) => "all".to_string(),
                    (true, Some(job)) => job.to_string(),
                    (false, None) => name.clone(),
                    (false, Some(job)) => format!("{name} {job}"),
                };
                let (iops, mib, p99) = (count(f.iops), mib_per_s(f.bytes_per_sec), lat(f.p99_ns as f64));
                part.answers.push(format!("{who_}: {iops} IOPS, {mib} MiB/s, p99 {p99}{}", who(&s)));
            }
            for (scope_name, f) in rows_of {
                rows.push(vec![name.clone(), scope_name, count(f.iops), mib_per_s(f.bytes_per_sec), lat(f.mean_ns), lat(f.p99_ns as f64)]);
            }
        }
    }
    if part.answers.is_empty() {
        // Steps that finished without results of their own (a cleanup) are done, not pending.
        let done = !views.is_empty() && views.iter().all(|v| v.step.state == storbench_model::study::StepState::Done);
        part.answers.push(if done { "done; its commands write no results" } else { "no run measured yet" }.into());
    }
    part.tables.push((slug(&format!("{}-steps", q.id)), ["step", "scope", "IOPS", "MiB/s", "mean", "p99"].map(String::from).into(), rows));
    part
}

/// A step's figures by point: a sweep's grid points (`bs=4KiB`), a run's
/// whole and its jobs; what a comparison matches across configurations.
fn figures_by_point(v: &View) -> Vec<(String, PointFigures)> {
    match v.data {
        StepData::Sweep { index, .. } => grid_points(index)
            .into_iter()
            .filter_map(|g| {
                let at = index.dims.iter().zip(&g.values).map(|(d, x)| format!("{}={}", d.option, axis::label(&d.option, x)));
                Some((at.collect::<Vec<_>>().join(" "), g.figures?))
            })
            .collect(),
        // A tool's phases (swift-bench's PUT, GET, DELETE) are points of their
        // own: each is matched with the same phase of the other configuration.
        StepData::Runs(set) => set
            .runs
            .iter()
            .flat_map(|r| {
                let phase = super::points::phase(&r.result);
                super::points::run_rows(&r.result).into_iter().map(move |(scope, f)| match &phase {
                    Some(p) => (format!("{p} {scope}"), f),
                    None => (scope, f),
                })
            })
            .collect(),
        StepData::Slo { .. } | StepData::Missing(_) => Vec::new(),
    }
}

/// compare: each later configuration's points against the same points of
/// the first configuration (same line), the question's first metric in
/// percent; the answer is each one's median difference and its range.
pub fn compare(q: &QuestionInfo, views: &[View]) -> Part {
    let m = metrics(q)[0];
    let mut part = Part::default();
    let first = views.first().map(|v| v.step.config.clone()).unwrap_or_default();
    let mut rows = Vec::new();
    let mut by_config: Vec<(String, String, Vec<f64>)> = Vec::new();
    for v in views.iter().filter(|v| v.step.config != first) {
        let Some(base) = views.iter().find(|b| b.step.config == first && b.step.line == v.step.line) else { continue };
        let theirs = figures_by_point(base);
        for (point, f) in figures_by_point(v) {
            let Some((_, b)) = theirs.iter().find(|(p, _)| *p == point) else { continue };
            let (now, was) = (value(m, &f), value(m, b));
            let pct = (was > 0.0).then(|| (now - was) / was * 100.0);
            rows.push(vec![
                v.step.line.clone(),
                point,
                base.label.clone(),
                with_unit(m, was),
                v.label.clone(),
                with_unit(m, now),
                pct.map_or("-".into(), |p| format!("{p:+.1}%")),
            ]);
            let (key, against) = (v.step.config.clone(), base.step.config.clone());
            let at = match by_config.iter_mut().position(|c| c.0 == key) {
                Some(i) => i,
                None => {
                    by_config.push((key, against, Vec::new()));
                    by_config.len() - 1
                }
            };
            by_config[at].2.extend(pct);
        }
    }
    for (config, against, mut pcts) in by_config {
        pcts.sort_by(f64::total_cmp);
        let Some(mid) = pcts.get(pcts.len() / 2) else { continue };
        let (lo, hi) = (pcts[0], pcts[pcts.len() - 1]);
        let (a, b) = (label_of(views, &config), label_of(views, &against));
        part.answers.push(format!(
            "{a} against {b}: {} {mid:+.0}% median over {} points (from {lo:+.0}% to {hi:+.0}%)",
            metric_name(m),
            pcts.len()
        ));
    }
    if part.answers.is_empty() {
        part.answers.push("no points measured on both configurations yet".into());
    }
    part.notes.push("differences of medians; storbench compare on two step directories judges them against their noise".into());
    let head = ["line", "point", "first", metric_name(m), "against", metric_name(m), "difference"].map(String::from).into();
    part.tables.push((slug(&format!("{}-differences", q.id)), head, rows));
    part
}

/// A configuration's legend name among the views (its key when no view
/// names it).
fn label_of(views: &[View], config: &str) -> String {
    views
        .iter()
        .find(|v| v.step.config == config)
        .map_or_else(|| config.to_string(), |v| v.label.split(" · ").next().unwrap_or_default().to_string())
}
