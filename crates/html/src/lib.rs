//! One self-contained HTML report for a run, a sweep, an SLO search or a
//! comparison: tables (warnings first), charts as inline SVG drawn with
//! plotters ([`charts`]), and where the numbers come from (provenance). No
//! script and no outside resource: it opens offline, from a file or a mail
//! attachment. The same charts can be written as SVG files for documents.

pub mod charts;
mod compare;
mod page;
mod run;
mod slo;
mod sweep;

use std::path::PathBuf;
use storbench_model::slo::SloIndex;
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
