//! `run --preset train:... --rules mlperf --find-accelerators`: the
//! accelerator search under MLPerf Storage's rules. A submission reports
//! the largest accelerator count whose AU stays at or above the floor in
//! every measured run, with a dataset that holds 500 steps an epoch for
//! that many (training/README.md at 3a1e063).
//!
//! Each probe is one rules-checked run (its dataset judged for its count,
//! refused past the count the files hold unless --allow-invalid-params),
//! stepped as the plain search steps (`preset::bisect`). A warm-up and five
//! runs at every probe would make the search six times as long for the
//! same answer in the common case; instead the count found is verified by
//! the full sequence (a warm-up and five measured runs), and if one of the
//! five falls below the floor the next count down is verified in turn: the
//! count reported is always one whose five runs held the floor.

use super::preset::{bisect, MAX_ACCELERATORS};
use super::rules::{self, Dataset, Division, Issue, Setup};
use crate::error::*;
use crate::sources::preset as presets;
use serde::Serialize;

/// How the count was found, said in `mlperf.json`.
const METHOD: &str = "one measured run a probe (doubling, then halving the gap), the count found verified by a warm-up and \
                      five measured runs (and the next count down while one of the five falls below the floor): five runs \
                      at every probe would make the search six times as long";

/// One probe: a single measured run at a count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Probe {
    pub accelerators: u32,
    /// Its results directory, below the rules' own.
    pub run: String,
    pub complete: bool,
    pub au: f64,
    pub samples_per_sec: f64,
    /// Whole, and AU at or above the floor.
    pub passed: bool,
    /// The dataset's rules for its count (5x the memory, 500 steps an
    /// epoch for each accelerator): closed, or invalid past what the files hold.
    pub dataset: Division,
}

/// A count verified with the full sequence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verified {
    pub accelerators: u32,
    /// Five whole runs, each at or above the floor.
    pub held: bool,
    /// The lowest AU of its measured runs.
    pub au_min: f64,
}

/// `mlperf.json`'s `search`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Search {
    pub method: &'static str,
    /// The most accelerators tried, and why no more.
    pub limit: u32,
    pub limited_by: String,
    /// The most that passed in their probe, and the fewest above them that failed.
    pub max_passing: u32,
    pub first_failing: Option<u32>,
    pub probes: Vec<Probe>,
    pub verified: Vec<Verified>,
}

/// The most accelerators the search tries: one batch an epoch each, the
/// dataset's 500 steps an epoch (unless --allow-invalid-params: then the
/// probes past it are judged invalid), the search's own cap.
fn limit(s: &Setup) -> Result<(u32, String), CliError> {
    let (one, _) = s.checked(Some(1))?;
    let t = rules::training(&one)?;
    let batch = presets::max_accelerators(t);
    let steps = Dataset::of(t, 1, s.memory).most_accelerators();
    let mut bounds = vec![(batch, format!("the dataset holds a batch an epoch for at most {batch}"))];
    if !s.flags.allow_invalid_params {
        bounds.push((steps, format!("the dataset holds 500 steps an epoch for at most {steps} (the rules' minimum)")));
    }
    bounds.push((MAX_ACCELERATORS as u64, format!("the search tries at most {MAX_ACCELERATORS}")));
    let (n, why) = bounds.into_iter().min_by_key(|b| b.0).unwrap_or_default();
    Ok((n as u32, why))
}

pub fn search(s: &Setup) -> Result<i32, CliError> {
    let (limit, limited_by) = limit(s)?;
    let mut found =
        Search { method: METHOD, limit, limited_by, max_passing: 0, first_failing: None, probes: Vec::new(), verified: Vec::new() };
    let stepped = bisect(limit, |n| probe(s, n, &mut found.probes));
    found.probes.sort_by_key(|p| p.accelerators);
    let (pass, fail) = match stepped {
        Ok(answer) => answer,
        Err(e) => return stopped(s, found, e),
    };
    (found.max_passing, found.first_failing) = (pass, fail);
    verify(s, found)
}

/// One rules-checked run at `n` accelerators, in `probe-N`.
fn probe(s: &Setup, n: u32, probes: &mut Vec<Probe>) -> Result<bool, CliError> {
    let (specs, _) = s.checked(Some(n))?;
    let dataset = rules::division(&rules::dataset_issues(&Dataset::of(rules::training(&specs)?, n, s.memory)));
    let run = format!("probe-{n}");
    let (result, f) = rules::one(s, &specs, &s.base.join(&run), &run)?;
    let (au, samples_per_sec, floor) = f.train.as_ref().map_or((0.0, 0.0, 1.0), |t| (t.au, t.samples_per_sec, t.au_floor));
    let passed = f.complete && au >= floor;
    probes.push(Probe { accelerators: n, run, complete: f.complete, au, samples_per_sec, passed, dataset });
    if result.interrupted {
        return Err(CliError {
            message: format!("interrupted in probe-{n}: the search stopped (each probe's results are in its directory)"),
            code: EXIT_INTERRUPTED,
        });
    }
    Ok(passed)
}

/// The full sequence at the count found, then one fewer while a measured
/// run falls below the floor; the verdict is the last sequence's.
fn verify(s: &Setup, mut found: Search) -> Result<i32, CliError> {
    let mut n = found.max_passing;
    while n > 0 {
        let (report, before) = sequence(s, n, &mut found)?;
        if found.verified.last().is_some_and(|v| v.held) || n == 1 {
            return conclude(s, found, report, before, n);
        }
        n -= 1;
    }
    // Not even one accelerator passed its probe: nothing to verify.
    let (specs, before) = s.checked(Some(1))?;
    conclude(s, found, s.report(&specs)?, before, 0)
}

/// The verdict at `n` accelerators (0: none passed), printed and kept.
fn conclude(s: &Setup, found: Search, mut report: rules::Report, before: Vec<Issue>, n: u32) -> Result<i32, CliError> {
    let mut issues = vec![answer(&found, n, report.au_floor)];
    issues.extend(before);
    report.search = Some(found);
    rules::judge(&mut report, issues);
    rules::emit(s.flags, &s.base, &report)?;
    Ok(if report.valid { 0 } else { EXIT_IO_ERRORS })
}

/// A warm-up and five runs at `n` accelerators, in `accelerators-N`.
fn sequence(s: &Setup, n: u32, found: &mut Search) -> Result<(rules::Report, Vec<Issue>), CliError> {
    let (specs, before) = s.checked(Some(n))?;
    let mut report = s.report(&specs)?;
    let dir = s.base.join(format!("accelerators-{n}"));
    let outcome = rules::runs(s, &specs, &dir, &mut report);
    let au_min = report.runs.iter().map(|r| r.train.as_ref().map_or(0.0, |t| t.au)).fold(f64::INFINITY, f64::min);
    let held = report.runs.len() == rules::MEASURED_RUNS
        && report.runs.iter().all(|r| r.complete && r.train.as_ref().is_some_and(|t| t.au >= t.au_floor));
    found.verified.push(Verified { accelerators: n, held, au_min: if au_min.is_finite() { au_min } else { 0.0 } });
    if let Err(e) = outcome {
        report.search = Some(found.clone());
        rules::judge(&mut report, before);
        if report.warmup.is_some() {
            rules::emit(s.flags, &s.base, &report)?;
        }
        return Err(e);
    }
    Ok((report, before))
}

/// The search's own rule: the count reported is the largest whose five
/// runs held the floor (`n`; 0 when none did).
fn answer(found: &Search, n: u32, floor: f64) -> Issue {
    let held = n > 0 && found.verified.last().is_some_and(|v| v.held && v.accelerators == n);
    let au = |count: u32| found.probes.iter().find(|p| p.accelerators == count).map(|p| p.au * 100.0);
    let actual = match (held, found.first_failing.and_then(|f| au(f).map(|a| (f, a)))) {
        (true, Some((f, a))) => format!("{n} ({f} in its probe: AU {a:.1}%)"),
        (true, None) => n.to_string(),
        (false, _) if n == 0 => format!("none (1 in its probe: AU {:.1}%)", au(1).unwrap_or(0.0)),
        (false, _) => format!("none ({n} fell below the floor in a measured run)"),
    };
    rules::issue(
        held,
        Division::Invalid,
        "accelerators",
        "the most accelerators whose AU stays at or above the floor in every measured run",
        format!("AU >= {:.1}% in each of five runs", floor * 100.0),
        actual,
    )
}

/// An interrupted (or failed) search: the probes that ran are kept in
/// `mlperf.json` (no verdict: nothing was verified), then the error.
fn stopped(s: &Setup, found: Search, e: CliError) -> Result<i32, CliError> {
    if !found.probes.is_empty() {
        let (specs, before) = s.checked(Some(1))?;
        let mut report = s.report(&specs)?;
        report.search = Some(found);
        rules::judge(&mut report, before);
        rules::emit(s.flags, &s.base, &report)?;
    }
    Err(e)
}

/// The printed search: each probe, the count found, each verification.
pub fn table(s: &Search, floor: f64) -> String {
    let mut out = String::new();
    for p in &s.probes {
        let verdict = if p.passed { "pass" } else { "FAIL" };
        out.push_str(&format!(
            "  probe {:>4} accelerators: AU {:>5.1}% {verdict}, {:.1} samples/s ({})\n",
            p.accelerators,
            p.au * 100.0,
            p.samples_per_sec,
            p.run
        ));
    }
    out.push_str(&format!(
        "  at most {} accelerators keep AU >= {:.0}% in one run; tried up to {} ({})\n",
        s.max_passing,
        floor * 100.0,
        s.limit,
        s.limited_by
    ));
    for v in &s.verified {
        let held = if v.held { "held the floor" } else { "fell below the floor" };
        out.push_str(&format!(
            "  verified: {} accelerators, a warm-up and five runs (accelerators-{}): lowest AU {:.1}%, {held}\n",
            v.accelerators,
            v.accelerators,
            v.au_min * 100.0
        ));
    }
    out
}
