//! The sweep table: one row per grid point (the median of its repeats),
//! its state, and the knees marked.

use storbench_model::sweep::*;
use storbench_report::fmt::{count, latency, mib_per_s};

/// `iodepth=8 numjobs=2`.
pub fn values(dims: &[Dimension], values: &[String]) -> String {
    dims.iter().zip(values).map(|(d, v)| format!("{}={v}", d.option)).collect::<Vec<_>>().join(" ")
}

pub fn render(index: &SweepIndex) -> String {
    let mut head: Vec<String> = index.dims.iter().map(|d| d.option.clone()).collect();
    head.extend(["IOPS", "MiB/s", "mean", "p50", "p99", "p99.9", "errors", ""].map(String::from));
    let mut rows = vec![head];
    let grid = super::dims::points(&index.dims, index.mode);
    for (i, values) in grid.iter().enumerate() {
        let mut row = values.clone();
        match index.figures(i) {
            Some(f) => row.extend([
                count(f.iops),
                mib_per_s(f.bytes_per_sec),
                latency(f.mean_ns as u64),
                latency(f.p50_ns),
                latency(f.p99_ns),
                latency(f.p999_ns),
                f.errors.to_string(),
            ]),
            None => row.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        row.push(note(index, i, values));
        rows.push(row);
    }
    let mut out = align(&rows);
    for k in &index.knees {
        out += &format!("knee of {}: {} ({})\n", k.option, self::values(&index.dims, &k.values), k.rule);
    }
    out
}

/// The knee mark, or why a point has no figures.
fn note(index: &SweepIndex, i: usize, values: &[String]) -> String {
    if index.knees.iter().any(|k| k.values == values) {
        return "<- knee".into();
    }
    let runs: Vec<&SweepPoint> = index.points.iter().filter(|p| p.index == i).collect();
    match runs.iter().map(|p| &p.state).find(|s| **s != PointState::Done) {
        Some(PointState::Skipped { .. }) => "skipped (past the knee)".into(),
        Some(PointState::Interrupted) => "interrupted".into(),
        Some(PointState::Failed { message }) => format!("failed: {message}"),
        Some(PointState::Pending) => "not run".into(),
        _ => String::new(),
    }
}

fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r.iter().enumerate().map(|(c, s)| format!("{s:>w$}", w = widths[c])).collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}
