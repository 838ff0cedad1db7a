//! One self-contained HTML report for a run, a sweep, an SLO search, a
//! comparison or a study: tables (warnings first), charts as inline SVG drawn with
//! plotters ([`charts`]), and where the numbers come from (provenance). No
//! script and no outside resource: it opens offline, from a file or a mail
//! attachment. The same charts can be written as SVG files for documents.

pub mod charts;
mod compare;
mod disruption;
mod hosts;
mod page;
pub mod raster;
mod run;
mod slo;
mod study;
mod sweep;

use std::path::PathBuf;
use storbench_model::slo::SloIndex;
use storbench_model::study::StudyIndex;
use storbench_model::sweep::SweepIndex;
use storbench_model::{RunResult, RunSet};
use storbench_report::compare::Row;

/// What a report is about.
pub enum Report<'a> {
    Run {
        dir: PathBuf,
        run: &'a RunResult,
    },
    Sweep {
        dir: PathBuf,
        index: &'a SweepIndex,
        runs: &'a RunSet,
    },
    Slo {
        dir: PathBuf,
        index: &'a SloIndex,
        runs: &'a RunSet,
    },
    /// Sides in order (the first is the baseline) and the comparison rows of
    /// each later side against it.
    Compare {
        sides: Vec<(String, PathBuf, &'a RunSet)>,
        rows: Vec<Vec<Row>>,
    },
    /// A study: its index and each step's data, in the index's order.
    Study {
        dir: PathBuf,
        index: &'a StudyIndex,
        steps: &'a [StepData],
    },
}

/// What a study's step left in its directory.
pub enum StepData {
    Sweep {
        index: SweepIndex,
        runs: RunSet,
    },
    Slo {
        index: SloIndex,
        runs: RunSet,
    },
    /// A run, a ramp without its index, a baseline, a tool's run.
    Runs(RunSet),
    /// Nothing to read (not run yet, failed before writing): why.
    Missing(String),
}

/// One chart: a file-name-safe name, its title, and its SVG (or why not).
pub struct Chart {
    pub name: String,
    pub title: String,
    pub svg: Result<String, String>,
}

/// The page and its charts (also for `--charts DIR`).
pub fn build(r: &Report) -> (String, Vec<Chart>) {
    match r {
        Report::Run { dir, run } => run::page(dir, run),
        Report::Sweep { dir, index, runs } => sweep::page(dir, index, runs),
        Report::Slo { dir, index, runs } => slo::page(dir, index, runs),
        Report::Compare { sides, rows } => compare::page(sides, rows),
        Report::Study { dir, index, steps } => study::page(dir, index, steps),
    }
}

/// A name for files and ids: letters, digits, '-' and '_' only.
fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Latency in ns for axes and tables.
fn lat(v: f64) -> String {
    storbench_report::fmt::latency(v.max(0.0) as u64)
}

/// Where the numbers come from: version, command, host, kernel, targets, time.
fn provenance(page: &mut page::Page, run: &RunResult, what: &str) {
    page.h2(&format!("Provenance{what}"));
    let started = storbench_report::fmt::utc_time(run.started_unix);
    let targets: Vec<String> = run.jobs.iter().flat_map(|j| j.targets.iter().map(move |t| format!("{}: {t}", j.name))).collect();
    let rows = vec![
        vec!["storbench".to_string(), run.storbench_version.clone()],
        vec!["command".into(), if run.command.is_empty() { "(not recorded)".into() } else { run.command.join(" ") }],
        vec!["host".into(), run.hostname.clone()],
        vec!["kernel".into(), if run.kernel.is_empty() { "(not recorded)".into() } else { run.kernel.clone() }],
        vec!["started".into(), started],
        vec!["targets".into(), targets.join("; ")],
        vec!["jobs".into(), run.jobs.iter().map(|j| format!("{}: {}", j.name, j.description)).collect::<Vec<_>>().join("; ")],
    ];
    page.table("provenance", &["".into(), "value".into()], &rows, 2);
}

/// The per-second IOPS and latency of chosen runs of a sweep or search
/// (`picked`: each run's directory name and why it was chosen), so the
/// points a reader asks about (the knee, the answer) can be looked into
/// without opening each run's own report. Runs not found are left out.
fn point_timelines(page: &mut page::Page, runs: &RunSet, picked: &[(String, String)]) -> Vec<Chart> {
    let mut out = Vec::new();
    let named = |dir: &str| runs.runs.iter().find(|r| r.dir.as_ref().and_then(|d| d.file_name()).is_some_and(|n| n == dir));
    let found: Vec<_> = picked.iter().filter_map(|(dir, why)| named(dir).map(|r| (dir, why, r))).collect();
    if found.is_empty() {
        return out;
    }
    page.h2("Timelines of chosen points");
    for (dir, why, run) in found {
        page.h3(&format!("{dir} ({why})"));
        for j in &run.result.jobs {
            let tag = format!("{dir}-");
            let charts: Vec<Chart> = run::timelines(j, &tag)
                .into_iter()
                .filter(|c| (c.name.ends_with("-iops") || c.name.ends_with("-latency")) && c.svg.is_ok())
                .collect();
            if charts.is_empty() {
                page.para(&format!("job {}: no whole second was measured (a timeline needs runs of a second or more)", j.name), "notes");
            }
            for c in charts {
                page.chart(&c);
                out.push(c);
            }
        }
    }
    out
}
