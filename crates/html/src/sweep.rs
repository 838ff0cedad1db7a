//! The report of a sweep: its table (knees and skipped points said), the
//! IOPS-latency ("hockey stick") curves with the knees marked, throughput
//! along the last dimension, and for a grid of two dimensions or more
//! heatmaps of IOPS and p99 over the last two: one per value of the
//! dimensions before them (a 3-D sweep's third dimension), and MiB/s beside
//! IOPS where an axis changes the block size (iozone's table). Swept sizes
//! read with their units on every axis and in the table.

use crate::charts::{self, Grid, Lines, Mark, Series};
use crate::page::Page;
use crate::{lat, provenance, Chart};
use std::path::Path;
use storbench_model::sweep::*;
use storbench_model::RunSet;
use storbench_report::fmt::{count, figure_cells, mib_per_s};

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
    let mut all = vec![hockey(index, &grid), along(index, &grid, &IOPS)];
    if storbench_workload::options::axis::sets_block_size(&index.dims[index.dims.len() - 1].option) {
        all.push(along(index, &grid, &MIBS));
    }
    page.h2("Charts");
    for c in &all {
        page.chart(c);
    }
    if index.dims.len() >= 2 && index.mode == SweepMode::Grid {
        let grids = slices(&mut page, index);
        for c in &grids {
            page.chart(c);
        }
        all.extend(grids);
    }
    all.extend(crate::point_timelines(&mut page, runs, &chosen(index)));
    // The first point's run, not the precondition or fill run before the points.
    let is_point = |r: &&storbench_model::Run| {
        r.dir.as_ref().and_then(|d| d.file_name()).is_some_and(|n| index.points.iter().any(|p| n == p.dir.as_str()))
    };
    if let Some(first) = runs.runs.iter().find(is_point).or(runs.runs.first()) {
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
        let labels: Vec<String> = index.dims.iter().zip(v).map(|(d, x)| label(&d.option, x)).collect();
        let mut row = labels.clone();
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
            let mut row = labels.clone();
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
        axis: None,
    });
    Chart {
        name: "sweep-hockey".into(),
        title: "IOPS against p99 latency, one curve per fixed value of the other dimensions; the knee marked".into(),
        svg,
    }
}

/// A figure charted along the varied dimension: its name, file-name part,
/// value and format.
struct Figure {
    name: &'static str,
    file: &'static str,
    of: fn(&PointFigures) -> f64,
    fmt: fn(f64) -> String,
}

const IOPS: Figure = Figure { name: "IOPS", file: "iops", of: |f| f.iops, fmt: count };
const MIBS: Figure = Figure { name: "MiB/s", file: "mibs", of: |f| f.bytes_per_sec, fmt: mib_per_s };

/// A figure along the varied dimension, by the position of its value
/// (values need not be numbers); one at a time, each dimension on its own
/// positions.
fn along(index: &SweepIndex, grid: &[Vec<String>], fig: &Figure) -> Chart {
    let last = &index.dims[index.dims.len() - 1];
    let pos = |dim: usize, v: &[String]| index.dims[dim].values.iter().position(|x| *x == v[dim]).unwrap_or(0) as f64;
    let series: Vec<Series> = curves(index, grid)
        .into_iter()
        .map(|(dim, label, pts)| Series {
            label: if label.is_empty() { fig.name.into() } else { label },
            points: pts.iter().filter_map(|v| Some((pos(dim, v), (fig.of)(&index.figures(index.index_of(v)?)?)))).collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let dim_of = |k: &Knee| index.dims.iter().position(|d| d.option == k.option).unwrap_or(index.dims.len() - 1);
    let marks = knee_marks(index, |k, f| (pos(dim_of(k), &k.values), (fig.of)(f)), true);
    // Value labels when one dimension is on the axis; positions otherwise.
    let named = index.dims.len() == 1 || index.mode == SweepMode::Grid;
    let label = |x: f64| match ((x - x.round()).abs() < 0.01, named) {
        (false, _) => String::new(),
        (true, true) => last.values.get(x.round() as usize).map(|v| label(&last.option, v)).unwrap_or_default(),
        (true, false) => format!("{}", x.round()),
    };
    let desc = if named { last.option.clone() } else { "position in each dimension's values".into() };
    let svg = charts::lines(&Lines {
        title: &format!("{} by {desc}", fig.name),
        x_desc: &desc,
        y_desc: fig.name,
        series: &series,
        log_y: false,
        y_fmt: &fig.fmt,
        x_fmt: Some(&label),
        marks: &marks,
        rule: None,
        points: true,
        axis: None,
    });
    Chart { name: format!("sweep-{}", fig.file), title: format!("{} along {desc}", fig.name), svg }
}

/// At most this many slices of a sweep of three dimensions or more get
/// their grids (each is a few charts); the table holds every point.
const MAX_SLICES: usize = 8;

/// The grids of a sweep over its last two dimensions: one set for a 2-D
/// sweep, one per combination of the dimensions before them otherwise (a
/// note says when some are left to the table).
fn slices(page: &mut Page, index: &SweepIndex) -> Vec<Chart> {
    let n = index.dims.len();
    let outer = grid(&index.dims[..n - 2], SweepMode::Grid);
    if outer.len() > MAX_SLICES {
        page.para(
            &format!(
                "Grids over {} and {} for the first {MAX_SLICES} of {} combinations of {}; the table has every point.",
                index.dims[n - 2].option,
                index.dims[n - 1].option,
                outer.len(),
                index.dims[..n - 2].iter().map(|d| d.option.as_str()).collect::<Vec<_>>().join(", ")
            ),
            "notes",
        );
    }
    outer.iter().take(MAX_SLICES).flat_map(|fixed| heatmaps(index, fixed)).collect()
}

/// The IOPS and p99 grids (and MiB/s where an axis sets the block size)
/// over the last two dimensions, the ones before them at `fixed`.
fn heatmaps(index: &SweepIndex, fixed: &[String]) -> Vec<Chart> {
    let n = index.dims.len();
    let (y, x) = (&index.dims[n - 2], &index.dims[n - 1]);
    let at = fixed.iter().zip(&index.dims).map(|(v, d)| format!("{}={}", d.option, label(&d.option, v))).collect::<Vec<_>>().join(" ");
    let (suffix, name) = if at.is_empty() { (String::new(), String::new()) } else { (format!(" at {at}"), format!("-{}", file_part(&at))) };
    let cell = |f: &dyn Fn(&PointFigures) -> f64| -> Vec<Vec<Option<f64>>> {
        y.values
            .iter()
            .map(|yv| {
                x.values
                    .iter()
                    .map(|xv| {
                        let values = [fixed.to_vec(), vec![yv.clone(), xv.clone()]].concat();
                        index.figures(index.index_of(&values)?).map(|fig| f(&fig))
                    })
                    .collect()
            })
            .collect()
    };
    let (x_values, y_values) = (labels(x), labels(y));
    let g = |title: &str, cells: &[Vec<Option<f64>>], fmt: &dyn Fn(f64) -> String, higher: bool| {
        charts::grid(&Grid {
            title: &format!("{title}{suffix}"),
            x_desc: &x.option,
            x_values: &x_values,
            y_desc: &y.option,
            y_values: &y_values,
            cells,
            fmt,
            higher_is_better: higher,
        })
    };
    let chart = |what: &str, title: &str, svg: Result<String, String>| Chart {
        name: format!("sweep-grid-{what}{name}"),
        title: format!("{title} by {} and {}{suffix}", y.option, x.option),
        svg,
    };
    let iops = cell(&|f| f.iops);
    let mut out = vec![chart("iops", "IOPS", g("IOPS", &iops, &|v| count(v), true))];
    // Along a block size IOPS falls as each I/O carries more: the bytes
    // moved are the figure that compares (iozone's table is in MB/s).
    if storbench_workload::options::axis::sets_block_size(&x.option) || storbench_workload::options::axis::sets_block_size(&y.option) {
        let mib = cell(&|f| f.bytes_per_sec);
        out.push(chart("mibs", "MiB/s", g("MiB/s", &mib, &|v| mib_per_s(v), true)));
    }
    out.push(chart("p99", "p99 latency", g("p99 latency", &cell(&|f| f.p99_ns as f64), &lat, false)));
    // A surface reads better than the grid once both dimensions have a
    // curve's worth of values (the Ceph report's volumes x QD).
    if x.values.len() >= 3 && y.values.len() >= 3 {
        let svg = charts::surface(&Grid {
            title: &format!("IOPS{suffix}"),
            x_desc: &x.option,
            x_values: &x_values,
            y_desc: &y.option,
            y_values: &y_values,
            cells: &iops,
            fmt: &|v| count(v),
            higher_is_better: true,
        });
        // Points skipped past knees can leave no quad to draw: the grids say it.
        if svg.is_ok() {
            out.push(Chart {
                name: format!("sweep-surface-iops{name}"),
                title: format!("IOPS as a surface over {} and {}{suffix}", y.option, x.option),
                svg,
            });
        }
    }
    out
}

/// A swept value as axes and tables write it (sizes with their units).
fn label(option: &str, value: &str) -> String {
    storbench_workload::options::axis::label(option, value)
}

fn labels(d: &Dimension) -> Vec<String> {
    d.values.iter().map(|v| label(&d.option, v)).collect()
}

/// `numjobs=2 bs=4KiB` as part of a file name: `numjobs-2_bs-4KiB`.
fn file_part(s: &str) -> String {
    s.replace('=', "-")
        .replace(' ', "_")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect()
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
                SweepPoint { index: i, repeat: 1, values, dir: format!("{i:03}"), state, figures: f, seconds: 1.0, ceiling: None }
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

    #[test]
    fn a_three_dimensional_sweep_has_grids_for_each_value_of_its_third_dimension() {
        let ix = index(SweepMode::Grid, &[("numjobs", &["1", "2", "4"]), ("iodepth", &["1", "2"]), ("bs", &["4096", "262144"])], &|v| {
            fig(v[0].parse::<f64>().unwrap() * 100.0)
        });
        let (_, charts) = page(Path::new("sw"), &ix, &RunSet::default());
        let names: Vec<&str> = charts.iter().filter(|c| c.svg.is_ok()).map(|c| c.name.as_str()).collect();
        for nj in ["1", "2", "4"] {
            for what in ["iops", "mibs", "p99"] {
                let n = format!("sweep-grid-{what}-numjobs-{nj}");
                assert!(names.contains(&n.as_str()), "{n} in {names:?}");
            }
        }
        let g = charts.iter().find(|c| c.name == "sweep-grid-iops-numjobs-2").unwrap().svg.as_ref().unwrap();
        assert!(g.contains("256KiB") && g.contains("4KiB") && !g.contains("262144"), "sizes with units on the axis");
        assert!(g.contains("at numjobs=2"));
    }
}
