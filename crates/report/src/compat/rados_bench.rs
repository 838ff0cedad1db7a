//! `rados bench`'s output: the preamble of a write, the per-second table
//! ("last lat(s)" is the mean of that second, where rados bench shows one
//! sample) and the summary, plus latency percentiles.

use super::{num, percentiles};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use storbench_model::{RunResult, RunSet, SeriesPoint};
use storbench_workload::OpKind;

pub const HEADER: &str = "  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)";
const MB: f64 = 1024.0 * 1024.0;

/// What `storbench rados bench` was asked, recorded in the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    /// write, seq or rand.
    pub mode: String,
    pub seconds: u64,
    /// Object (and operation) size in bytes.
    pub size: u64,
    pub threads: u64,
    pub max_objects: u64,
    /// rados bench's object prefix (without `_object`).
    pub prefix: String,
}

impl Params {
    pub fn parameters(&self) -> BTreeMap<String, String> {
        super::parameters([
            ("tool", "rados bench".to_string()),
            ("mode", self.mode.clone()),
            ("seconds", self.seconds.to_string()),
            ("size", self.size.to_string()),
            ("threads", self.threads.to_string()),
            ("max_objects", self.max_objects.to_string()),
            ("prefix", self.prefix.clone()),
        ])
    }

    pub fn of(r: &RunResult) -> Option<Params> {
        (r.parameter("tool") == Some("rados bench")).then(|| Params {
            mode: r.parameter("mode").unwrap_or_default().to_string(),
            seconds: num(r, "seconds"),
            size: num(r, "size"),
            threads: num(r, "threads"),
            max_objects: num(r, "max_objects"),
            prefix: r.parameter("prefix").unwrap_or_default().to_string(),
        })
    }
}

/// What a write prints before the table.
pub fn preamble(p: &Params) -> String {
    if p.mode != "write" {
        return String::new();
    }
    format!(
        "Maintaining {} concurrent writes of {} bytes to objects of size {} for up to {} seconds or {} objects\nObject prefix: {}\n",
        p.threads, p.size, p.size, p.seconds, p.max_objects, p.prefix
    )
}

/// The per-second table as it grows, and the per-second figures the
/// summary's stddev, max and min come from.
#[derive(Default)]
pub struct Table {
    printed: bool,
    finished: f64,
    lat_sum_s: f64,
    mb_per_s: Vec<f64>,
    iops: Vec<f64>,
}

impl Table {
    /// The line for one point of the series, if it gets one.
    pub fn line(&mut self, p: &Params, point: &SeriesPoint) -> Option<String> {
        let (mut ops, mut lat) = (0.0, 0.0);
        for o in &point.ops {
            let n = o.iops * point.duration;
            ops += n;
            lat += o.mean_ns as f64 / 1e9 * n;
        }
        self.finished += ops;
        self.lat_sum_s += lat;
        let size = p.size as f64;
        let cur = ops * size / MB / point.duration.max(1e-9);
        // The last interval of a run is usually a sliver: its rate says little,
        // so it stays out of the per-second statistics (and the table, if a
        // full second was shown).
        if point.duration < 0.5 {
            if self.printed {
                return None;
            }
        } else {
            self.mb_per_s.push(cur);
            self.iops.push(ops / point.duration);
        }
        self.printed = true;
        let finished = self.finished.round() as u64;
        let last = if ops > 0.0 { format!("{:.6}", lat / ops) } else { "-".into() };
        let avg = if self.finished > 0.0 { self.lat_sum_s / self.finished } else { 0.0 };
        Some(format!(
            "{:>5} {:>7} {:>9} {:>9} {:>9.4} {:>9.4} {:>11} {:>11.6}",
            point.t.round() as u64,
            p.threads,
            finished + p.threads,
            finished,
            finished as f64 * size / MB / point.t.max(1e-9),
            cur,
            last,
            avg
        ))
    }
}

fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// The summary after the table.
pub fn summary(r: &RunResult, table: &Table, size: u64) -> String {
    let mut out = String::new();
    let Some(j) = r.jobs.first() else { return out };
    let secs = j.runtime_ns as f64 / 1e9;
    let (op, made, what) = match j.op(OpKind::Create).or_else(|| j.op(OpKind::Update)) {
        Some(o) => (o, "writes", "Write"),
        None => match j.op(OpKind::Read) {
            Some(o) => (o, "reads", "Read"),
            None => return "no operation completed\n".into(),
        },
    };
    let lat = &op.latency;
    let s = |ns: u64| ns as f64 / 1e9;
    // Runs shorter than a second have no full interval: the whole run is the one sample.
    let whole_mb = [op.bytes as f64 / MB / secs.max(1e-9)];
    let whole_iops = [op.ios as f64 / secs.max(1e-9)];
    let (mb_hist, iops_hist) =
        if table.iops.is_empty() { (&whole_mb[..], &whole_iops[..]) } else { (&table.mb_per_s[..], &table.iops[..]) };
    let max_of = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let min_of = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut lines = vec![
        ("Total time run".to_string(), format!("{secs:.5}")),
        (format!("Total {made} made"), op.ios.to_string()),
        (format!("{what} size"), size.to_string()),
        ("Object size".into(), size.to_string()),
        ("Bandwidth (MB/sec)".into(), format!("{:.4}", op.bytes as f64 / MB / secs.max(1e-9))),
    ];
    if made == "writes" {
        lines.push(("Stddev Bandwidth".into(), format!("{:.4}", stddev(mb_hist))));
        lines.push(("Max bandwidth (MB/sec)".into(), format!("{:.4}", max_of(mb_hist))));
        lines.push(("Min bandwidth (MB/sec)".into(), format!("{:.4}", min_of(mb_hist))));
    }
    lines.extend([
        ("Average IOPS".into(), format!("{}", (op.ios as f64 / secs.max(1e-9)) as u64)),
        ("Stddev IOPS".into(), format!("{:.4}", stddev(iops_hist))),
        ("Max IOPS".into(), format!("{}", max_of(iops_hist).round())),
        ("Min IOPS".into(), format!("{}", min_of(iops_hist).round())),
        ("Average Latency(s)".into(), format!("{:.6}", lat.mean_ns / 1e9)),
    ]);
    if made == "writes" {
        lines.push(("Stddev Latency(s)".into(), format!("{:.6}", lat.stdev_ns / 1e9)));
    }
    lines.push(("Max latency(s)".into(), format!("{:.6}", s(lat.max_ns))));
    lines.push(("Min latency(s)".into(), format!("{:.6}", s(lat.min_ns))));
    let width = lines.iter().map(|l| l.0.len()).max().unwrap_or(0) + 2;
    for (k, v) in lines {
        let _ = writeln!(out, "{:<width$}{v}", format!("{k}:"));
    }
    let _ = writeln!(out, "Latency percentiles: {}", percentiles(lat));
    if j.total_errors() > 0 {
        let kinds: Vec<String> = j.ops.iter().flat_map(|o| o.errors.iter().map(|(k, n)| format!("{n} {k}"))).collect();
        let _ = writeln!(out, "Errors: {} ({})", j.total_errors(), kinds.join(", "));
    }
    for w in j.warnings.iter().chain(&r.warnings) {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// Everything `storbench rados bench` printed, from its results.
pub fn render(r: &RunResult) -> Option<String> {
    let p = Params::of(r)?;
    let mut out = preamble(&p);
    out.push_str(HEADER);
    out.push('\n');
    let mut table = Table::default();
    for point in r.jobs.first().map(|j| j.series.as_slice()).unwrap_or_default() {
        if let Some(line) = table.line(&p, point) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push_str(&summary(r, &table, p.size));
    Some(out)
}

pub struct RadosBench;

impl crate::Exporter for RadosBench {
    fn name(&self) -> &'static str {
        "rados-bench"
    }
    fn describe(&self) -> &'static str {
        "rados bench's table and summary (runs of storbench rados bench)"
    }
    fn write(&self, runs: &RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::each(runs, out, |r, out| out.write_all(render(r).ok_or_else(|| super::not_from("rados bench"))?.as_bytes()))
    }
}
