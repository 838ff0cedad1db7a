//! The report of a comparison: the table of differences with their
//! intervals and verdicts, and per job and operation the sides' latency
//! spectra and IOPS timelines overlaid. Sides are named by their
//! directories (in tables and legends), and each side's warnings are
//! folded under its name with their count.

use crate::charts::{self, Lines, Series};
use crate::page::Page;
use crate::{provenance, slug, Chart};
use std::path::PathBuf;
use storbench_model::{JobResult, RunSet};
use storbench_report::compare::{Row, Verdict};
use storbench_report::fmt::count;

pub fn page(sides: &[(String, PathBuf, &RunSet)], rows: &[Vec<Row>]) -> (String, Vec<Chart>) {
    let names: Vec<String> = sides.iter().map(|s| format!("{} = {}", s.0, s.1.display())).collect();
    let mut page = Page::new("storbench report: comparison", &names.join(", "));
    let warnings: Vec<(String, Vec<String>)> =
        sides.iter().map(|(n, _, set)| (n.clone(), crate::run::warnings_of(set.runs.iter().map(|r| &r.result)))).collect();
    page.folded_warnings(&warnings);
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
        &format!(
            "Differences are (other - {0}) / {0}, {0} being the baseline, with 95% bootstrap intervals (over runs with 3 repeats or more, else over blocks of per-second samples).",
            sides[0].0
        ),
        "notes",
    );
    let jobs = charted_jobs(sides, rows);
    let charts = overlays(sides, &jobs);
    page.h2("Charts");
    let total = sides[0].2.runs.first().map_or(0, |r| r.result.jobs.len());
    if jobs.len() < total {
        page.para(
            &format!(
                "Charts for {} of the baseline's {total} jobs: those with the largest differences that are not noise, then in job order.",
                jobs.len()
            ),
            "notes",
        );
    }
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

/// The baseline's jobs to chart (all of them up to [`crate::run::CHARTED_JOBS`]):
/// first those whose difference on some side is better or worse beyond the
/// noise, largest first, then the rest in job order.
fn charted_jobs<'a>(sides: &[(String, PathBuf, &'a RunSet)], rows: &[Vec<Row>]) -> Vec<&'a JobResult> {
    let Some(base) = sides[0].2.runs.first() else { return Vec::new() };
    let jobs = &base.result.jobs;
    if jobs.len() <= crate::run::CHARTED_JOBS {
        return jobs.iter().collect();
    }
    let mut changed: Vec<&Row> = rows.iter().flatten().filter(|r| matches!(r.verdict, Verdict::Better | Verdict::Worse)).collect();
    changed.sort_by(|a, b| b.diff_pct.abs().total_cmp(&a.diff_pct.abs()));
    let mut out: Vec<&JobResult> = Vec::new();
    let named = changed.iter().filter_map(|r| jobs.iter().find(|j| j.name == r.job));
    for j in named.chain(jobs.iter()) {
        if out.len() == crate::run::CHARTED_JOBS {
            break;
        }
        if !out.iter().any(|o| std::ptr::eq(*o, j)) {
            out.push(j);
        }
    }
    out
}

/// For each chosen job of the baseline's first run: spectra and IOPS per
/// second of every side's first run overlaid.
fn overlays(sides: &[(String, PathBuf, &RunSet)], jobs: &[&JobResult]) -> Vec<Chart> {
    let mut out = Vec::new();
    for j in jobs {
        let others: Vec<(&JobResult, &str)> = sides
            .iter()
            .filter_map(|(n, _, set)| {
                let r = &set.runs.first()?.result;
                let lone = if r.jobs.len() == 1 { r.jobs.first() } else { None };
                let job = r.jobs.iter().find(|x| x.name == j.name).or(lone)?;
                Some((job, n.as_str()))
            })
            .collect();
        out.push(Chart {
            name: slug(&format!("compare-{}-spectrum", j.name)),
            title: format!("{}: latency spectra", j.name),
            svg: crate::run::spectrum(&others),
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
            axis: None,
        });
        out.push(Chart { name: slug(&format!("compare-{}-iops", j.name)), title: format!("{}: IOPS per second", j.name), svg });
    }
    out
}
