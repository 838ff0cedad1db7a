//! The sweep table: one row per grid point (the median of its repeats),
//! its state, and the knees marked; a point whose run had several groups
//! (one after another) has a row per group below it. Swept sizes read with
//! their units (256KiB, not 262144).

use storbench_model::sweep::*;
use storbench_report::fmt::figure_cells;

pub fn render(index: &SweepIndex) -> String {
    let mut head: Vec<String> = index.dims.iter().map(|d| d.option.clone()).collect();
    head.extend(["IOPS", "MiB/s", "mean", "p50", "p99", "p99.9", "errors", ""].map(String::from));
    let mut rows = vec![head];
    let grid = index.grid();
    for (i, values) in grid.iter().enumerate() {
        let labels = labels(index, values);
        let mut row = labels.clone();
        let figures = index.figures(i);
        match &figures {
            Some(f) => row.extend(figure_cells(f)),
            None => row.extend(std::iter::repeat_n("-".to_string(), 7)),
        }
        let note = if index.is_knee(values) { "<- knee".into() } else { index.note(i).unwrap_or_default() };
        let scope = figures.as_ref().map(|f| f.scope()).unwrap_or_default();
        row.push([note, scope].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("; "));
        rows.push(row);
        // Groups ran one after another: each its own row, never added up.
        for g in figures.iter().flat_map(|f| &f.groups) {
            let mut row = labels.clone();
            row.extend(figure_cells(&g.figures));
            row.push(g.label());
            rows.push(row);
        }
    }
    let mut out = align(&rows);
    for k in &index.knees {
        out += &format!("knee of {}: {} ({})\n", k.option, index.label(&k.values), k.rule);
    }
    out
}

/// A point's values as people read them.
fn labels(index: &SweepIndex, values: &[String]) -> Vec<String> {
    index.dims.iter().zip(values).map(|(d, v)| storbench_workload::options::axis::label(&d.option, v)).collect()
}

fn align(rows: &[Vec<String>]) -> String {
    let widths = storbench_report::fmt::column_widths(rows);
    let mut out = String::new();
    for r in rows {
        // The note, last, is left as it is (a group's name reads from its start).
        let last = r.len().saturating_sub(1);
        let cells: Vec<String> =
            r.iter().enumerate().map(|(c, s)| if c == last { s.clone() } else { storbench_report::fmt::pad_left(s, widths[c]) }).collect();
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}
