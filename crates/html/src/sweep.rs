//! The report of a sweep: its table (knees and skipped points said), the
//! IOPS-latency ("hockey stick") curves with the knees marked, throughput
//! along the last dimension, and for two dimensions heatmaps of IOPS and p99.

use crate::charts::{self, Grid, Lines, Mark, Series};
use crate::page::Page;
use crate::{lat, provenance, Chart};
use std::path::Path;
use storbench_model::sweep::*;
use storbench_model::RunSet;
use storbench_report::fmt::{count, figure_cells};

pub fn page(dir: &Path, index: &SweepIndex, runs: &RunSet) -> (String, Vec<Chart>) {
    let grid = index.grid();
    let mut page = Page::new("storbench report: sweep", &format!("{} ({} points, {} runs)", dir.display(), grid.len(), index.points.len()));
    let mut warnings: Vec<String> = index
        .points
        .iter()
        .filter_map(|p| match &p.state {
            PointState::Failed { message } => Some(format!("run {} failed: {message}", p.dir)),
            PointState::Interrupted => Some(format!("run {} was interrupted", p.dir)),
            _ => None,
        })
        .collect();
    warnings.extend(crate::run::warnings_of(runs.runs.iter().map(|r| &r.result)));
    page.warnings(&warnings);
    page.h2("Points");
    table(&mut page, index, &grid);
    for k in &index.knees {
        page.para(&format!("Knee of {}: {} ({})", k.option, index.label(&k.values), k.rule), "notes");
    }
    let mut all = vec![hockey(index, &grid), along(index, &grid)];
    if index.dims.len() == 2 && index.mode == SweepMode::Grid {
        all.extend(heatmaps(index, &grid));
    }
    page.h2("Charts");
    for c in &all {
        page.chart(c);
    }
    all.extend(crate::point_timelines(&mut page, runs, &chosen(index)));
    if let Some(first) = runs.runs.first() {
        provenance(&mut page, &first.result, " (first point)");
    }
    (page.render(), all)
}

/// Runs whose timelines the report shows: every run of a small sweep; of a
/// larger one the knees and the first and last runs (a report of a
/// 100-point sweep stays a few hundred kB).
fn chosen(index: &SweepIndex) -> Vec<(String, String)> {
    const EVERY_UP_TO: usize = 12;
    let done: Vec<&SweepPoint> = index.points.iter().filter(|p| p.state == PointState::Done).collect();
    if done.len() <= EVERY_UP_TO {
        return done.iter().map(|p| (p.dir.clone(), index.label(&p.values))).collect();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    let mut add = |p: &SweepPoint, why: &str| {
        if !out.iter().any(|o| o.0 == p.dir) {
            out.push((p.dir.clone(), format!("{}: {why}", index.label(&p.values))));
        }
    };
    add(done[0], "first run");
    for k in &index.knees {
        if let Some(p) = done.iter().find(|p| p.values == k.values) {
            add(p, &format!("knee of {}", k.option));
        }
    }
    add(done[done.len() - 1], "last run");
    out
}

fn table(page: &mut Page, index: &SweepIndex, grid: &[Vec<String>]) {
    let mut head: Vec<String> = index.dims.iter().map(|d| d.option.clone()).collect();
    head.extend(["IOPS", "MiB/s", "mean", "p50", "p99", "p99.9", "errors", "runs", "note"].map(String::from));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for v in grid {
        let i = index.index_of(v);
        let figures = i.and_then(|i| index.figures(i));
        let mut row = v.clone();
        match &figures {
            Some(f) => row.extend(figure_cells(f)),
            None => row.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        let runs = index.points.iter().filter(|p| Some(p.index) == i).collect::<Vec<_>>();
        row.push(format!("{}/{}", runs.iter().filter(|p| p.state == PointState::Done).count(), runs.len()));
        let note = if index.is_knee(v) { Some("knee".to_string()) } else { i.and_then(|i| index.note(i)) };
        let scope = figures.as_ref().map(|f| f.scope()).unwrap_or_default();
        row.push([note.unwrap_or_default(), scope].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; "));
        rows.push(row);
        // Groups ran one after another: each its own row, never added up.
        for g in figures.iter().flat_map(|f| &f.groups) {
            let mut row = v.clone();
            row.extend(figure_cells(&g.figures));
            row.push(String::new());
            row.push(g.label());
            rows.push(row);
        }
    }
    page.table("points", &head, &rows, index.dims.len());
}

/// The curves, each with the dimension it varies: in a grid the last
/// dimension, the others fixed (one curve per combination of theirs); one
/// at a time, each dimension from the base point.
fn curves(index: &SweepIndex, grid: &[Vec<String>]) -> Vec<(usize, String, Vec<Vec<String>>)> {
    if index.mode == SweepMode::OneAtATime {
        let base: Vec<String> = index.dims.iter().map(|d| d.values[0].clone()).collect();
        return (0..index.dims.len())
            .map(|d| {
                let pts = grid.iter().filter(|v| v.iter().zip(&base).enumerate().all(|(i, (a, b))| i == d || a == b)).cloned().collect();
                (d, index.dims[d].option.clone(), pts)
            })
            .collect();
    }
    let last = index.dims.len() - 1;
    let mut out: Vec<(usize, String, Vec<Vec<String>>)> = Vec::new();
    for v in grid {
        let key = index.dims[..last].iter().zip(v).map(|(d, x)| format!("{}={x}", d.option)).collect::<Vec<_>>().join(" ");
        match out.iter_mut().find(|c| c.1 == key) {
            Some(c) => c.2.push(v.clone()),
            None => out.push((last, key, vec![v.clone()])),
        }
    }
    out
}

/// A mark per knee whose point has figures: `at` places it.
fn knee_marks(index: &SweepIndex, at: impl Fn(&Knee, &PointFigures) -> (f64, f64), long: bool) -> Vec<Mark> {
    index
        .knees
        .iter()
        .filter_map(|k| {
            let fig = index.figures(index.index_of(&k.values)?)?;
            let (x, y) = at(k, &fig);
            let label = if long { format!(" knee {}", index.label(&k.values)) } else { " knee".into() };
            Some(Mark { x, y, label })
        })
        .collect()
}

/// IOPS against p99: the hockey stick.
fn hockey(index: &SweepIndex, grid: &[Vec<String>]) -> Chart {
    let series: Vec<Series> = curves(index, grid)
        .into_iter()
        .map(|(dim, label, pts)| Series {
            label: if label.is_empty() { index.dims[dim].option.clone() } else { label },
            points: pts.iter().filter_map(|v| index.figures(index.index_of(v)?)).map(|f| (f.iops, f.p99_ns as f64)).collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let marks = knee_marks(index, |_, f| (f.iops, f.p99_ns as f64), false);
    let svg = charts::lines(&Lines {
        title: "p99 latency against IOPS",
        x_desc: "IOPS",
        y_desc: "p99 latency",
        series: &series,
        log_y: false,
        y_fmt: &lat,
        x_fmt: Some(&|v| count(v)),
        marks: &marks,
        rule: None,
        points: true,
    });
    Chart {
        name: "sweep-hockey".into(),
        title: "IOPS against p99 latency, one curve per fixed value of the other dimensions; the knee marked".into(),
        svg,
    }
}

/// IOPS along the varied dimension, by the position of its value (values
/// need not be numbers); one at a time, each dimension on its own positions.
fn along(index: &SweepIndex, grid: &[Vec<String>]) -> Chart {
    let last = &index.dims[index.dims.len() - 1];
    let pos = |dim: usize, v: &[String]| index.dims[dim].values.iter().position(|x| *x == v[dim]).unwrap_or(0) as f64;
    let series: Vec<Series> = curves(index, grid)
        .into_iter()
        .map(|(dim, label, pts)| Series {
            label: if label.is_empty() { "IOPS".into() } else { label },
            points: pts.iter().filter_map(|v| Some((pos(dim, v), index.figures(index.index_of(v)?)?.iops))).collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let dim_of = |k: &Knee| index.dims.iter().position(|d| d.option == k.option).unwrap_or(index.dims.len() - 1);
    let marks = knee_marks(index, |k, f| (pos(dim_of(k), &k.values), f.iops), true);
    // Value labels when one dimension is on the axis; positions otherwise.
    let named = index.dims.len() == 1 || index.mode == SweepMode::Grid;
    let label = |x: f64| match ((x - x.round()).abs() < 0.01, named) {
        (false, _) => String::new(),
        (true, true) => last.values.get(x.round() as usize).cloned().unwrap_or_default(),
        (true, false) => format!("{}", x.round()),
    };
    let desc = if named { last.option.clone() } else { "position in each dimension's values".into() };
    let svg = charts::lines(&Lines {
        title: &format!("IOPS by {desc}"),
        x_desc: &desc,
        y_desc: "IOPS",
        series: &series,
        log_y: false,
        y_fmt: &|v| count(v),
        x_fmt: Some(&label),
        marks: &marks,
        rule: None,
        points: true,
    });
    Chart { name: "sweep-iops".into(), title: format!("IOPS along {desc}"), svg }
}

fn heatmaps(index: &SweepIndex, _grid: &[Vec<String>]) -> Vec<Chart> {
    let (y, x) = (&index.dims[0], &index.dims[1]);
    let cell = |f: &dyn Fn(&PointFigures) -> f64| -> Vec<Vec<Option<f64>>> {
        y.values
            .iter()
            .map(|yv| x.values.iter().map(|xv| index.figures(index.index_of(&[yv.clone(), xv.clone()])?).map(|fig| f(&fig))).collect())
            .collect()
    };
    let iops = cell(&|f| f.iops);
    let p99 = cell(&|f| f.p99_ns as f64);
    let g = |title: &str, cells: &[Vec<Option<f64>>], fmt: &dyn Fn(f64) -> String, higher: bool| {
        charts::grid(&Grid {
            title,
            x_desc: &x.option,
            x_values: &x.values,
            y_desc: &y.option,
            y_values: &y.values,
            cells,
            fmt,
            higher_is_better: higher,
        })
    };
    let mut out = vec![
        Chart {
            name: "sweep-grid-iops".into(),
            title: format!("IOPS by {} and {}", y.option, x.option),
            svg: g("IOPS", &iops, &|v| count(v), true),
        },
        Chart {
            name: "sweep-grid-p99".into(),
            title: format!("p99 latency by {} and {}", y.option, x.option),
            svg: g("p99 latency", &p99, &lat, false),
        },
    ];
    // A surface reads better than the grid once both dimensions have a
    // curve's worth of values (the Ceph report's volumes x QD).
    if x.values.len() >= 3 && y.values.len() >= 3 {
        let svg = charts::surface(&Grid {
            title: "IOPS",
            x_desc: &x.option,
            x_values: &x.values,
            y_desc: &y.option,
            y_values: &y.values,
            cells: &iops,
            fmt: &|v| count(v),
            higher_is_better: true,
        });
        // Points skipped past knees can leave no quad to draw: the grids say it.
        if svg.is_ok() {
            out.push(Chart {
                name: "sweep-surface-iops".into(),
                title: format!("IOPS as a surface over {} and {}", y.option, x.option),
                svg,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(mode: SweepMode, dims: &[(&str, &[&str])], figures: &dyn Fn(&[String]) -> Option<PointFigures>) -> SweepIndex {
        let dims: Vec<Dimension> =
            dims.iter().map(|(o, v)| Dimension { option: o.to_string(), values: v.iter().map(|s| s.to_string()).collect() }).collect();
        let points = grid(&dims, mode)
            .into_iter()
            .enumerate()
            .map(|(i, values)| {
                let f = figures(&values);
                let state = if f.is_some() { PointState::Done } else { PointState::Skipped { reason: "past the knee".into() } };
                SweepPoint { index: i, repeat: 1, values, dir: format!("{i:03}"), state, figures: f, seconds: 1.0 }
            })
            .collect();
        SweepIndex { version: 1, command: vec![], dims, mode, repeat: 1, shuffle: None, knee_gain_pct: Some(5.0), points, knees: vec![] }
    }

    fn fig(iops: f64) -> Option<PointFigures> {
        Some(PointFigures {
            iops,
            bytes_per_sec: iops * 4096.0,
            mean_ns: 1e6,
            p50_ns: 900_000,
            p99_ns: 2_000_000,
            p999_ns: 3_000_000,
            errors: 0,
            groups: vec![],
        })
    }

    #[test]
    fn a_small_sweep_shows_every_runs_timelines_a_large_one_its_knees_and_ends() {
        let small = index(SweepMode::Grid, &[("iodepth", &["1", "2", "4"])], &|_| fig(100.0));
        assert_eq!(chosen(&small).len(), 3);
        let values: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
        let v: Vec<&str> = values.iter().map(String::as_str).collect();
        let mut large = index(SweepMode::Grid, &[("iodepth", &v)], &|v| (v[0].parse::<u32>().unwrap() <= 15).then(|| fig(1.0)).flatten());
        large.knees.push(Knee { option: "iodepth".into(), values: vec!["9".into()], rule: String::new() });
        let picked = chosen(&large);
        let dirs: Vec<&str> = picked.iter().map(|p| p.0.as_str()).collect();
        assert_eq!(dirs, ["000", "008", "014"], "first, the knee, the last run done: {picked:?}");
        assert!(picked[1].1.contains("knee of iodepth"));
    }

    #[test]
    fn a_surface_for_grids_of_three_values_or_more() {
        let ix = index(SweepMode::Grid, &[("numjobs", &["1", "2", "4"]), ("iodepth", &["1", "2", "4"])], &|_| fig(100.0));
        let (_, charts) = page(Path::new("sw"), &ix, &RunSet::default());
        assert!(charts.iter().any(|c| c.name == "sweep-surface-iops" && c.svg.is_ok()));
        let ix = index(SweepMode::Grid, &[("numjobs", &["1", "2"]), ("iodepth", &["1", "2", "4"])], &|_| fig(100.0));
        let (_, charts) = page(Path::new("sw"), &ix, &RunSet::default());
        assert!(!charts.iter().any(|c| c.name == "sweep-surface-iops"), "two values: the grid says it");
    }

    #[test]
    fn one_at_a_time_sweeps_chart_a_curve_per_dimension() {
        let ix = index(SweepMode::OneAtATime, &[("numjobs", &["1", "2", "4"]), ("iodepth", &["1", "8"])], &|v| {
            fig(1000.0 * v[0].parse::<f64>().unwrap() * v[1].parse::<f64>().unwrap())
        });
        let (html, charts) = page(Path::new("sw"), &ix, &RunSet::default());
        assert!(charts.iter().all(|c| c.svg.is_ok()), "{:?}", charts.iter().map(|c| c.svg.as_ref().err()).collect::<Vec<_>>());
        let along = charts.iter().find(|c| c.name == "sweep-iops").unwrap().svg.as_ref().unwrap();
        assert!(along.contains("numjobs") && along.contains("iodepth"), "a series per dimension");
        assert!(!charts.iter().any(|c| c.name.starts_with("sweep-grid")), "no grid for one at a time");
        assert!(html.contains("id=\"points\""));
    }

    #[test]
    fn a_two_dimensional_grid_with_skipped_points_and_a_knee() {
        let mut ix = index(SweepMode::Grid, &[("numjobs", &["1", "2"]), ("iodepth", &["1", "2", "4"])], &|v| {
            (v[1] != "4").then(|| fig(100.0)).flatten()
        });
        ix.knees.push(Knee { option: "iodepth".into(), values: vec!["1".into(), "2".into()], rule: "IOPS +1% (< 5%)".into() });
        let (html, charts) = page(Path::new("sw"), &ix, &RunSet::default());
        assert!(["sweep-hockey", "sweep-iops", "sweep-grid-iops", "sweep-grid-p99"]
            .iter()
            .all(|n| charts.iter().any(|c| c.name == *n && c.svg.is_ok())));
        assert!(html.contains("past the knee") && html.contains("Knee of iodepth"));
    }
}
