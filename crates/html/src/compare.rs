//! The report of a comparison: the table of differences with their
//! intervals and verdicts, and per job and operation the sides' latency
//! spectra and IOPS timelines overlaid.

use crate::charts::{self, Lines, Series};
use crate::page::Page;
use crate::{provenance, slug, Chart};
use std::path::PathBuf;
use storbench_model::{JobResult, RunSet};
use storbench_report::compare::Row;
use storbench_report::fmt::count;

pub fn page(sides: &[(String, PathBuf, &RunSet)], rows: &[Vec<Row>]) -> (String, Vec<Chart>) {
    let names: Vec<String> = sides.iter().map(|s| format!("{} = {}", s.0, s.1.display())).collect();
    let mut page = Page::new("storbench report: comparison", &names.join(", "));
    let warnings: Vec<String> = sides
        .iter()
        .flat_map(|(n, _, set)| crate::run::warnings_of(set.runs.iter().map(|r| &r.result)).into_iter().map(move |w| format!("{n}: {w}")))
        .collect();
    page.warnings(&warnings);
    for (i, r) in rows.iter().enumerate() {
        let (a, b) = (&sides[0].0, &sides[i + 1].0);
        page.h2(&format!("{b} against {a}"));
        let points = r.iter().any(|x| !x.point.is_empty());
        let mut head: Vec<String> = ["point", "job", "op", "metric", a, b, "diff", "95% CI", "verdict"].map(String::from).into();
        let table: Vec<Vec<String>> = r
            .iter()
            .map(|x| {
                let mut row = x.cells();
                if points {
                    row.insert(0, x.point.clone());
                }
                row
            })
            .collect();
        if !points {
            head.remove(0);
        }
        page.table(&format!("compare-{}", slug(b)), &head, &table, if points { 4 } else { 3 });
    }
    page.para(
        "Differences are (B - A) / A with 95% bootstrap intervals (over runs with 3 repeats or more, else over blocks of per-second samples).",
        "notes",
    );
    let charts = overlays(sides);
    page.h2("Charts");
    for c in &charts {
        page.chart(c);
    }
    for (n, _, set) in sides {
        if let Some(first) = set.runs.first() {
            provenance(&mut page, &first.result, &format!(" of {n}"));
        }
    }
    (page.render(), charts)
}

/// For each job of the baseline's first run: spectra and IOPS per second of
/// every side's first run overlaid.
fn overlays(sides: &[(String, PathBuf, &RunSet)]) -> Vec<Chart> {
    let first = |set: &RunSet| set.runs.first().map(|r| r.result.clone());
    let Some(base) = first(sides[0].2) else { return Vec::new() };
    let mut out = Vec::new();
    for j in &base.jobs {
        let others: Vec<(JobResult, String)> = sides
            .iter()
            .filter_map(|(n, _, set)| {
                let r = first(set)?;
                let lone = if r.jobs.len() == 1 { r.jobs.first() } else { None };
                let job = r.jobs.iter().find(|x| x.name == j.name).or(lone)?.clone();
                Some((job, n.clone()))
            })
            .collect();
        let pairs: Vec<(&JobResult, &str)> = others.iter().map(|(j, n)| (j, n.as_str())).collect();
        out.push(Chart {
            name: slug(&format!("compare-{}-spectrum", j.name)),
            title: format!("{}: latency spectra", j.name),
            svg: crate::run::spectrum(&pairs),
        });
        let series: Vec<Series> = others
            .iter()
            .flat_map(|(job, n)| {
                job.ops.iter().map(move |o| Series {
                    label: format!("{n} {}", o.op.name()),
                    points: job
                        .series
                        .iter()
                        .filter(|p| !p.warmup && p.duration > 0.5)
                        .filter_map(|p| p.ops.iter().find(|s| s.op == o.op).map(|s| (p.t, s.iops)))
                        .collect(),
                })
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let svg = charts::lines(&Lines {
            title: "IOPS per second",
            x_desc: "seconds",
            y_desc: "IOPS",
            series: &series,
            log_y: false,
            y_fmt: &|v| count(v),
            x_fmt: None,
            marks: &[],
            rule: None,
            points: false,
        });
        out.push(Chart { name: slug(&format!("compare-{}-iops", j.name)), title: format!("{}: IOPS per second", j.name), svg });
    }
    out
}
