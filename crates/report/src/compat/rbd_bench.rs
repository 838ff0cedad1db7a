//! `rbd bench`'s output: its header, per-second lines (cumulative operations,
//! operations and bytes per second so far) and summary, plus the latency
//! percentiles rbd bench lacks.

use super::{num, percentiles};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use storbench_model::{RunResult, RunSet, SeriesPoint};

pub const HEADER: &str = "  SEC       OPS   OPS/SEC   BYTES/SEC";

/// What `storbench rbd bench` was asked, recorded in the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub io_type: String,
    pub io_size: u64,
    pub io_threads: u64,
    pub io_total: u64,
    /// sequential or random.
    pub pattern: String,
}

impl Params {
    pub fn parameters(&self) -> BTreeMap<String, String> {
        super::parameters([
            ("tool", "rbd bench".to_string()),
            ("io_type", self.io_type.clone()),
            ("io_size", self.io_size.to_string()),
            ("io_threads", self.io_threads.to_string()),
            ("io_total", self.io_total.to_string()),
            ("pattern", self.pattern.clone()),
        ])
    }

    pub fn of(r: &RunResult) -> Option<Params> {
        (r.parameter("tool") == Some("rbd bench")).then(|| Params {
            io_type: r.parameter("io_type").unwrap_or_default().to_string(),
            io_size: num(r, "io_size"),
            io_threads: num(r, "io_threads"),
            io_total: num(r, "io_total"),
            pattern: r.parameter("pattern").unwrap_or_default().to_string(),
        })
    }
}

/// The two lines before the per-second lines.
pub fn preamble(p: &Params) -> String {
    format!(
        "bench  type {} io_size {} io_threads {} bytes {} pattern {}\n{HEADER}\n",
        p.io_type, p.io_size, p.io_threads, p.io_total, p.pattern
    )
}

/// As rbd bench prints it: one decimal below 10, whole numbers above.
fn mib_s(bytes_per_sec: f64) -> String {
    let m = bytes_per_sec / (1024.0 * 1024.0);
    if m < 10.0 {
        format!("{m:.1} MiB/s")
    } else {
        format!("{} MiB/s", m.round() as u64)
    }
}

/// Operations and bytes so far.
#[derive(Default)]
pub struct Lines {
    ops: u64,
    bytes: f64,
}

impl Lines {
    pub fn line(&mut self, point: &SeriesPoint) -> String {
        let ops: f64 = point.ops.iter().map(|o| o.iops * point.duration).sum();
        let bytes: f64 = point.ops.iter().map(|o| o.bytes_per_sec * point.duration).sum();
        self.ops += ops.round() as u64;
        self.bytes += bytes;
        let secs = point.t.max(1e-9);
        format!("{:>5} {:>9} {:>9.2} {:>9}", point.t.round() as u64, self.ops, self.ops as f64 / secs, mib_s(self.bytes / secs))
    }
}

/// The summary after the lines.
pub fn summary(r: &RunResult) -> String {
    let mut out = String::new();
    let Some(j) = r.jobs.first() else { return out };
    let secs = j.runtime_ns as f64 / 1e9;
    let ops = j.total_ios();
    let bytes: u64 = j.ops.iter().map(|o| o.bytes).sum();
    let _ = writeln!(
        out,
        "elapsed: {:.0}   ops: {}   ops/sec: {:.2}   bytes/sec: {}",
        secs,
        ops,
        ops as f64 / secs.max(1e-9),
        mib_s(bytes as f64 / secs.max(1e-9))
    );
    for o in &j.ops {
        let _ = writeln!(out, "{} latency: {}", o.op.name(), percentiles(&o.latency));
    }
    for w in j.warnings.iter().chain(&r.warnings) {
        let _ = writeln!(out, "warning: {w}");
    }
    if j.total_errors() > 0 {
        let _ = writeln!(out, "errors: {}", j.total_errors());
    }
    out
}

/// Everything `storbench rbd bench` printed, from its results.
pub fn render(r: &RunResult) -> Option<String> {
    let p = Params::of(r)?;
    let mut out = preamble(&p);
    let mut lines = Lines::default();
    for point in r.jobs.first().map(|j| j.series.as_slice()).unwrap_or_default() {
        out.push_str(&lines.line(point));
        out.push('\n');
    }
    out.push_str(&summary(r));
    Some(out)
}

pub struct RbdBench;

impl crate::Exporter for RbdBench {
    fn name(&self) -> &'static str {
        "rbd-bench"
    }
    fn describe(&self) -> &'static str {
        "rbd bench's lines and summary (runs of storbench rbd bench)"
    }
    fn write(&self, runs: &RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::each(runs, out, |r, out| out.write_all(render(r).ok_or_else(|| super::not_from("rbd bench"))?.as_bytes()))
    }
}
