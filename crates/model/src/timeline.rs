//! A run's whole timeline as long-format rows, for notebooks and
//! spreadsheets (`storbench export --series`): every job's per-second
//! figures, every host's, the cluster's and the exporters' seconds, and
//! each fault, on the one axis of the run (second 0: the first group's
//! start), a row per source, second, figure and labels. The figures of
//! runs of a sweep, an SLO search or a study come one run after another,
//! told apart by their directory.

use crate::result::RunResult;
use crate::tidy::TidyError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The columns, in order.
pub const COLUMNS: [&str; 8] = ["dir", "source", "kind", "t_s", "duration_s", "metric", "labels", "value"];

/// One figure of one second (or one fault).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineRow {
    /// The run's directory, relative to the one exported.
    pub dir: String,
    /// A job's name, a host's, the cluster's, an exporter's URL, or the
    /// fault as written.
    pub source: String,
    /// `job`, `client`, `watched`, `cluster`, `exporter` or `fault`.
    pub kind: String,
    /// The end of the second on the run's axis (a fault: when it was due).
    pub t_s: f64,
    /// How long the second was (a fault: how long it took).
    pub duration_s: f64,
    pub metric: String,
    /// `key=value` pairs joined by `;` (`op=read`, `disk=sda`).
    pub labels: String,
    pub value: f64,
}

/// Every row of one run: its jobs' seconds (warm-up left out), its
/// sources' seconds, then its faults.
pub fn run_rows(r: &RunResult) -> Vec<TimelineRow> {
    let mut out = Vec::new();
    job_rows(r, &mut out);
    source_rows(r, &mut out);
    fault_rows(r, &mut out);
    out
}

fn job_rows(r: &RunResult, out: &mut Vec<TimelineRow>) {
    let starts = r.telemetry.as_ref().map(|t| t.group_starts.as_slice()).unwrap_or_default();
    for j in &r.jobs {
        let offset = starts.get(j.group as usize).copied().unwrap_or(0.0);
        for p in j.series.iter().filter(|p| !p.warmup) {
            for o in &p.ops {
                let op = format!("op={}", o.op.name());
                let mut row = |metric: &str, labels: &str, value: f64| {
                    out.push(TimelineRow {
                        source: j.name.clone(),
                        kind: "job".into(),
                        t_s: round_ms(offset + p.t),
                        duration_s: p.duration,
                        metric: metric.into(),
                        labels: labels.into(),
                        value,
                        ..TimelineRow::default()
                    })
                };
                row("ops_per_s", &op, o.iops);
                row("mib_per_s", &op, o.bytes_per_sec / (1024.0 * 1024.0));
                row("mean_us", &op, o.mean_ns as f64 / 1e3);
                row("p99_us", &op, o.p99_ns as f64 / 1e3);
                row("errors", &op, o.errors as f64);
                for (kind, n) in &o.error_kinds {
                    row("errors_by_kind", &format!("{op};error={}", kind_word(kind)), *n as f64);
                }
            }
        }
    }
}

fn source_rows(r: &RunResult, out: &mut Vec<TimelineRow>) {
    for s in r.telemetry.iter().flat_map(|t| &t.sources) {
        let kind = kind_word(&s.kind);
        for series in &s.series {
            let labels: Vec<String> = series.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let labels = labels.join(";");
            for ((t, d), v) in s.t.iter().zip(&s.duration).zip(&series.values) {
                let Some(value) = v else { continue };
                out.push(TimelineRow {
                    source: s.name.clone(),
                    kind: kind.clone(),
                    t_s: *t,
                    duration_s: *d,
                    metric: series.metric.clone(),
                    labels: labels.clone(),
                    value: *value,
                    ..TimelineRow::default()
                });
            }
        }
    }
}

/// A fault is a row at the time it was due, lasting until it was done,
/// its outcome a label ([`FaultEvent::outcome`]).
fn fault_rows(r: &RunResult, out: &mut Vec<TimelineRow>) {
    for e in r.disruption.iter().flat_map(|d| &d.events) {
        out.push(TimelineRow {
            source: e.action.words(),
            kind: "fault".into(),
            t_s: e.at_s,
            duration_s: (e.done_s - e.at_s).max(0.0),
            metric: "fault".into(),
            labels: format!("outcome={}", e.outcome()),
            value: 1.0,
            ..TimelineRow::default()
        });
    }
}

/// A unit enum's name as it is written in results (`connection`, `client`).
fn kind_word<T: Serialize>(k: &T) -> String {
    serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Sums of offsets read as the millisecond they are (20.300000000000001 -> 20.3).
fn round_ms(t: f64) -> f64 {
    (t * 1e3).round() / 1e3
}

/// How deep below the directory given runs are looked for (a study's
/// steps hold sweeps, whose points hold runs).
const DEPTH: usize = 4;

/// The rows of every run in `dir` or below it (a sweep's points, an SLO
/// search's probes, a study's steps), in the order of their directories;
/// each row's `dir` relative to `dir`.
pub fn load(dir: &Path) -> Result<Vec<TimelineRow>, TidyError> {
    let mut out = Vec::new();
    let found = collect(dir, "", DEPTH, &mut out)?;
    if found == 0 {
        return Err(TidyError::NotResults(dir.to_path_buf()));
    }
    Ok(out)
}

/// The runs at and below `dir`, added to `out`; how many.
fn collect(dir: &Path, rel: &str, depth: usize, out: &mut Vec<TimelineRow>) -> Result<usize, TidyError> {
    if dir.join("result.json").is_file() {
        let set = crate::runset::RunSet::load(dir)?;
        for run in &set.runs {
            out.extend(run_rows(&run.result).into_iter().map(|mut r| {
                r.dir = rel.to_string();
                r
            }));
        }
        return Ok(set.runs.len());
    }
    if depth == 0 {
        return Ok(0);
    }
    let below = crate::tidy::subdirs(dir).map_err(|e| TidyError::Load(format!("cannot read {}: {e}", dir.display())))?;
    let mut n = 0;
    for (name, path) in below {
        n += collect(&path, &crate::tidy::join(rel, &name), depth - 1, out)?;
    }
    Ok(n)
}
