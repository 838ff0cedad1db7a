//! `storbench compare A B [C ...]`: B (and C...) against A, per job,
//! operation and sweep point, with confidence intervals and a verdict per
//! metric (see `storbench_report::compare`), as text, markdown or JSON, and
//! exit codes for CI gates.

use crate::cli::CompareArgs;
use crate::error::*;
use std::path::Path;
use storbench_model::sweep::{PointState, SweepIndex, INDEX_FILE};
use storbench_model::{RunResult, RunSet};
use storbench_report::compare::{compare as compare_sides, render, Judge, Metric, Row, Side, Verdict};

/// A compare gate failed (`--fail-if-slower`, `--fail-if-p99-worse`).
pub const EXIT_GATE: i32 = 4;

pub fn run(a: &CompareArgs) -> Result<i32, CliError> {
    if a.dirs.len() < 2 {
        return Err(CliError::usage("give two results directories or more: the first is the baseline"));
    }
    let loaded: Vec<Places> = a.dirs.iter().map(|d| load(d)).collect::<Result<_, _>>()?;
    let judge = Judge { min_effect_pct: a.min_effect, ..Judge::default() };
    // Sides by their directories' names (bobtail, cuttlefish), as the report's.
    let names = crate::commands::report::side_names(&a.dirs);
    let name = |i: usize| names[i].clone();
    let mut reports = Vec::new();
    for (i, other) in loaded.iter().enumerate().skip(1) {
        let rows = compare_places(&loaded[0], other, &judge);
        if rows.is_empty() {
            return Err(CliError::usage(format!(
                "{} and {} have no job, operation or sweep point in common to compare",
                a.dirs[0].display(),
                a.dirs[i].display()
            )));
        }
        reports.push((i, rows));
    }
    print_reports(a, &reports, &name)?;
    Ok(gates(a, &reports))
}

/// Runs by place: "" for a run (or a directory of repeats of it), the
/// point's values for a sweep, `phase=NAME` for a compatibility tool's phase.
/// In the order the places came in: a sweep's grid order, so its points
/// read by their values' meaning (bs=512 before bs=262144), not as strings.
#[derive(Default)]
pub(crate) struct Places(Vec<(String, Vec<RunResult>)>);

impl Places {
    fn entry(&mut self, place: String) -> &mut Vec<RunResult> {
        let i = match self.0.iter().position(|(p, _)| *p == place) {
            Some(i) => i,
            None => {
                self.0.push((place, Vec::new()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }

    fn get(&self, place: &str) -> Option<&Vec<RunResult>> {
        self.0.iter().find(|(p, _)| p == place).map(|(_, r)| r)
    }
}

pub(crate) fn load(dir: &Path) -> Result<Places, CliError> {
    if dir.join(storbench_model::slo::SLO_FILE).exists() {
        return Err(CliError::usage(format!(
            "{} is an SLO search (its runs are probes at different rates, not repeats): compare its probes' own directories",
            dir.display()
        )));
    }
    let set = RunSet::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    if !dir.join(INDEX_FILE).exists() {
        // A compatibility tool's phases (swift-bench's PUT, GET, DELETE) are
        // places of their own, never repeats of one another.
        let mut places = Places::default();
        for r in set.runs {
            places.entry(phase(&r.result)).push(r.result);
        }
        return Ok(places);
    }
    let index = SweepIndex::load(dir).map_err(|e| CliError::usage(e.to_string()))?;
    let mut places = Places::default();
    // Grid order, whatever order the points ran in (shuffled, resumed).
    let mut done: Vec<&storbench_model::sweep::SweepPoint> = index.points.iter().filter(|p| p.state == PointState::Done).collect();
    done.sort_by_key(|p| p.index);
    for p in done {
        let want = dir.join(&p.dir);
        if let Some(run) = set.runs.iter().find(|r| r.dir.as_deref() == Some(want.as_path())) {
            places.entry(index.label(&p.values)).push(run.result.clone());
        }
    }
    Ok(places)
}

/// `phase=get` for a compatibility tool's phase; empty for any other run.
fn phase(r: &RunResult) -> String {
    r.parameter("phase").map(|p| format!("phase={p}")).unwrap_or_default()
}

pub(crate) fn compare_places(a: &Places, b: &Places, judge: &Judge) -> Vec<Row> {
    let mut rows = Vec::new();
    for (place, runs_a) in &a.0 {
        if let Some(runs_b) = b.get(place) {
            let (sa, sb) = (Side { runs: runs_a.iter().collect() }, Side { runs: runs_b.iter().collect() });
            rows.extend(compare_sides(place, &sa, &sb, judge));
        }
    }
    rows
}

fn print_reports(a: &CompareArgs, reports: &[(usize, Vec<Row>)], name: &dyn Fn(usize) -> String) -> Result<(), CliError> {
    match a.format.as_str() {
        "json" => {
            let doc = serde_json::json!({
                "baseline": a.dirs[0],
                "min_effect_pct": a.min_effect,
                "comparisons": reports.iter().map(|(i, rows)| serde_json::json!({"against": a.dirs[*i], "rows": rows})).collect::<Vec<_>>(),
            });
            out!("{}", serde_json::to_string_pretty(&doc).expect("serializes"));
        }
        format => {
            let md = format == "markdown";
            for (i, rows) in reports {
                out!("{} (baseline) = {}\n{} = {}\n", name(0), a.dirs[0].display(), name(*i), a.dirs[*i].display());
                out_part!("{}", render(rows, (&name(0), &name(*i)), md));
                out!();
            }
            out!(
                "Differences are (other - baseline) / baseline with 95% confidence intervals (bootstrap: over runs with 3 repeats or more, \
                 else over blocks of per-second samples); a difference counts when its interval excludes 0 and it is at least {}%. \
                 \"no interval\": fewer than 3 runs and fewer than 4 measured seconds per run (p99.9: fewer than 3 runs).",
                a.min_effect
            );
        }
    }
    Ok(())
}

/// The exit code the gates give: 0, or [`EXIT_GATE`] naming what failed.
fn gates(a: &CompareArgs, reports: &[(usize, Vec<Row>)]) -> i32 {
    let mut failed = Vec::new();
    for r in reports.iter().flat_map(|(_, rows)| rows) {
        let gated = match r.metric {
            Metric::Iops | Metric::MibPerSec => a.fail_if_slower.map(|p| r.diff_pct <= -p),
            Metric::P99 => a.fail_if_p99_worse.map(|p| r.diff_pct >= p),
            _ => None,
        };
        let what = || format!("{} {} {} {} {:+.1}%", r.point, r.job, r.op, r.metric.name(), r.diff_pct).trim().to_string();
        match (gated, r.verdict) {
            (Some(true), Verdict::Worse) => failed.push(what()),
            // A gate that cannot judge fails rather than pass a regression unseen.
            (Some(_), Verdict::Unknown) => failed.push(format!("{} (no interval: runs of at least 4 s, or 3 repeats, are needed)", what())),
            _ => {}
        }
    }
    if failed.is_empty() {
        return 0;
    }
    say!("storbench: compare gate failed: {}", failed.join("; "));
    EXIT_GATE
}
