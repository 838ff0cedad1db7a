//! The sweep table: one row per grid point (the median of its repeats),
//! its state, and the knees marked.

use storbench_model::sweep::*;
use storbench_report::fmt::figure_cells;

pub fn render(index: &SweepIndex) -> String {
    let mut head: Vec<String> = index.dims.iter().map(|d| d.option.clone()).collect();
    head.extend(["IOPS", "MiB/s", "mean", "p50", "p99", "p99.9", "errors", ""].map(String::from));
    let mut rows = vec![head];
    let grid = index.grid();
    for (i, values) in grid.iter().enumerate() {
        let mut row = values.clone();
        match index.figures(i) {
            Some(f) => row.extend(figure_cells(&f)),
            None => row.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        row.push(if index.is_knee(values) { "<- knee".into() } else { index.note(i).unwrap_or_default() });
        rows.push(row);
    }
    let mut out = align(&rows);
    for k in &index.knees {
        out += &format!("knee of {}: {} ({})\n", k.option, index.label(&k.values), k.rule);
    }
    out
}

fn align(rows: &[Vec<String>]) -> String {
    let widths = storbench_report::fmt::column_widths(rows);
    let mut out = String::new();
    for r in rows {
        let cells: Vec<String> = r.iter().enumerate().map(|(c, s)| storbench_report::fmt::pad_left(s, widths[c])).collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}
