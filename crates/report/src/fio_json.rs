//! fio-compatible JSON (`--output-format fio-json`), shaped like fio 3.x's
//! `--output-format=json` so fio-plot, CBT and in-house scripts read it unchanged.
//!
//! Mapping: `lat_ns` is storbench's latency (from the intended start in
//! fixed-rate runs); `clat_ns` is the service time in fixed-rate runs and the
//! same latency otherwise; storbench has no separate submission phase, so
//! `slat_ns` is zero. Bandwidth and IOPS min/max/mean come from the per-second series.

use serde_json::{json, Map, Value};
use storbench_metrics::{LatencyHistogram, STANDARD_PERCENTILES};
use storbench_model::{JobResult, RunResult};
use storbench_workload::OpKind;

pub fn render(r: &RunResult) -> String {
    let jobs: Vec<Value> = r.jobs.iter().map(job).collect();
    let doc = json!({
        "fio version": format!("storbench-{}", r.storbench_version),
        "timestamp": r.started_unix,
        "timestamp_ms": r.started_unix * 1000,
        "time": "",
        "global options": {},
        "jobs": jobs,
        "disk_util": [],
    });
    let mut s = serde_json::to_string_pretty(&doc).expect("plain JSON values");
    s.push('\n');
    s
}

fn job(j: &JobResult) -> Value {
    let runtime_ms = j.runtime_ns / 1_000_000;
    let cpu_pct = |ns: u64| {
        if j.runtime_ns > 0 {
            ns as f64 / j.runtime_ns as f64 * 100.0
        } else {
            0.0
        }
    };
    let all = merged(j);
    json!({
        "jobname": j.name,
        "groupid": j.group,
        "error": if j.failures.is_empty() && j.total_errors() == 0 { 0 } else { 5 },
        "eta": 0,
        "elapsed": (j.runtime_ns + j.ramp_ns) / 1_000_000_000,
        "job options": job_options(j),
        "read": dir(j, OpKind::Read),
        "write": dir(j, OpKind::Write),
        "trim": empty_dir(),
        "sync": sync(j),
        "job_runtime": runtime_ms,
        "usr_cpu": cpu_pct(j.worker_cpu.user_ns),
        "sys_cpu": cpu_pct(j.worker_cpu.sys_ns),
        "ctx": 0,
        "majf": 0,
        "minf": 0,
        "iodepth_level": { "1": 0.0, "2": 0.0, "4": 0.0, "8": 0.0, "16": 0.0, "32": 0.0, ">=64": 0.0 },
        "latency_ns": buckets(&all, 1, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]),
        "latency_us": buckets(&all, 1_000, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]),
        "latency_ms": buckets(&all, 1_000_000, &["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"]),
        "latency_depth": j.queue_depth,
        "latency_target": 0,
        "latency_percentile": 100.0,
        "latency_window": 0,
    })
}

fn job_options(j: &JobResult) -> Value {
    let s = &j.spec;
    let mut m = Map::new();
    let mut put = |k: &str, v: String| {
        m.insert(k.into(), Value::String(v));
    };
    put("name", s.name.clone());
    put("rw", s.rw.name().into());
    put("bs", s.bs.describe());
    put("iodepth", s.iodepth.to_string());
    put("numjobs", s.numjobs.to_string());
    put("ioengine", j.engine.clone());
    put("direct", (s.direct as u8).to_string());
    if s.rw.is_mixed() {
        put("rwmixread", s.rwmixread.to_string());
    }
    if let Some(size) = s.size {
        put("size", size.to_string());
    }
    if let Some(rt) = s.runtime {
        put("runtime", rt.as_secs().to_string());
    }
    if !s.filenames.is_empty() {
        put("filename", s.filenames.join(":"));
    }
    Value::Object(m)
}

fn merged(j: &JobResult) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for o in &j.ops {
        h.add(&o.histogram);
    }
    h
}

fn stat(h: &LatencyHistogram, with_percentiles: bool) -> Value {
    let mut v = json!({
        "min": h.min(),
        "max": h.max(),
        "mean": if h.count() > 0 { h.mean() } else { 0.0 },
        "stddev": if h.count() > 0 { h.stdev() } else { 0.0 },
        "N": h.count(),
    });
    if with_percentiles && h.count() > 0 {
        let p: Map<String, Value> = STANDARD_PERCENTILES.iter().map(|p| (format!("{p:.6}"), json!(h.percentile(*p)))).collect();
        v["percentile"] = Value::Object(p);
    }
    v
}

fn empty_dir() -> Value {
    let zero = LatencyHistogram::new();
    json!({
        "io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
        "total_ios": 0, "short_ios": 0, "drop_ios": 0,
        "slat_ns": stat(&zero, false), "clat_ns": stat(&zero, false), "lat_ns": stat(&zero, false),
        "bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0, "bw_samples": 0,
        "iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0, "iops_samples": 0,
    })
}

fn dir(j: &JobResult, op: OpKind) -> Value {
    let Some(o) = j.op(op) else {
        return empty_dir();
    };
    let samples: Vec<(f64, f64)> = j
        .series
        .iter()
        .filter(|p| !p.warmup && p.duration > 0.5)
        .filter_map(|p| p.ops.iter().find(|s| s.op == op))
        .map(|s| (s.bytes_per_sec / 1024.0, s.iops))
        .collect();
    let (bw_min, bw_max, bw_mean, bw_dev) = spread(samples.iter().map(|s| s.0));
    let (iops_min, iops_max, iops_mean, iops_dev) = spread(samples.iter().map(|s| s.1));
    let clat = o.service_histogram.as_ref().unwrap_or(&o.histogram);
    let short = o.errors.get("short I/O").copied().unwrap_or(0);
    json!({
        "io_bytes": o.bytes,
        "io_kbytes": o.bytes / 1024,
        "bw_bytes": o.bytes_per_sec as u64,
        "bw": (o.bytes_per_sec / 1024.0) as u64,
        "iops": o.iops,
        "runtime": j.runtime_ns / 1_000_000,
        "total_ios": o.ios,
        "short_ios": short,
        "drop_ios": 0,
        "slat_ns": stat(&LatencyHistogram::new(), false),
        "clat_ns": stat(clat, true),
        "lat_ns": stat(&o.histogram, true),
        "bw_min": bw_min as u64,
        "bw_max": bw_max as u64,
        "bw_agg": 100.0,
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": samples.len(),
        "iops_min": iops_min as u64,
        "iops_max": iops_max as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": samples.len(),
    })
}

fn sync(j: &JobResult) -> Value {
    match j.op(OpKind::Sync) {
        Some(o) => json!({ "total_ios": o.ios, "lat_ns": stat(&o.histogram, true) }),
        None => json!({ "total_ios": 0, "lat_ns": stat(&LatencyHistogram::new(), false) }),
    }
}

fn spread(values: impl Iterator<Item = f64>) -> (f64, f64, f64, f64) {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    let min = v.iter().cloned().fold(f64::MAX, f64::min);
    let max = v.iter().cloned().fold(f64::MIN, f64::max);
    (min, max, mean, var.sqrt())
}

/// fio's latency distribution: percentage of I/Os in each bucket ending at
/// `key * unit` ns (a bucket holds values above the previous key).
fn buckets(h: &LatencyHistogram, unit: u64, keys: &[&str]) -> Value {
    let total = h.count().max(1) as f64;
    let mut m = Map::new();
    let mut low = if unit == 1 { 0 } else { unit };
    for k in keys {
        let count = if let Some(rest) = k.strip_prefix(">=") {
            let from: u64 = rest.parse::<u64>().unwrap_or(0) * unit;
            h.count_between(from, h.max().max(from))
        } else {
            let high = k.parse::<u64>().unwrap_or(0) * unit;
            let c = if high > low { h.count_between(low + 1, high) } else { 0 };
            low = high;
            c
        };
        m.insert(k.to_string(), json!(count as f64 * 100.0 / total));
    }
    Value::Object(m)
}

/// fio's JSON as a format.
pub struct FioJson;

impl crate::Exporter for FioJson {
    fn name(&self) -> &'static str {
        "fio-json"
    }
    fn describe(&self) -> &'static str {
        "fio's --output-format=json shape (as fio.json)"
    }
    fn file_name(&self) -> Option<&'static str> {
        Some("fio.json")
    }
    fn write(&self, runs: &storbench_model::RunSet, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        crate::export::each(runs, out, |r, out| out.write_all(render(r).as_bytes()))
    }
}
