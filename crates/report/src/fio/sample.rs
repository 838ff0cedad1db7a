//! A run with known latencies for the fio formats' tests.
//!
//! Group 0: "rr" (2 workers, qd 1, randread) did 1000 reads of 4 KiB in 2 s:
//! 950 at 40 us, 40 at 80 us, 9 at 600 us, 1 at 1.5 ms; per-second samples of
//! 480 and 520 IO/s. "rr2" (same group) did 3000 reads at 100 us in 2 s.
//! Group 1: "wsync" (qd 16, randwrite, described) did 500 writes of 8 KiB in
//! 1 s at 2 ms, 2 failed writes, and 4 fsyncs of 5 ms.

use super::plat::Plat;
use super::stats::{Dir, GroupDir, Lat, Samples};
use std::collections::BTreeMap;
use storbench_metrics::{CpuTimes, OpStats};
use storbench_model::{DiskUtil, JobResult, OpResult, RunResult, SeriesOp, SeriesPoint, SCHEMA_VERSION};
use storbench_workload::{apply_option, JobSpec, OpKind};

/// An operation with `(latency ns, count)` pairs of `bytes` each.
pub fn op(op: OpKind, lats: &[(u64, u64)], bytes: u64, runtime_ns: u64) -> OpResult {
    let mut s = OpStats::new(false);
    for (ns, n) in lats {
        for _ in 0..*n {
            s.record(bytes, *ns, *ns);
        }
    }
    OpResult::from_stats(op, &s, runtime_ns)
}

/// One-second points of `op` at these IO/s.
fn series(op: OpKind, bytes: u64, iops: &[f64]) -> Vec<SeriesPoint> {
    let point = |(i, v): (usize, &f64)| SeriesPoint {
        t: i as f64 + 1.0,
        duration: 1.0,
        warmup: false,
        ops: vec![SeriesOp {
            op,
            iops: *v,
            bytes_per_sec: v * bytes as f64,
            errors: 0,
            error_kinds: Default::default(),
            mean_ns: 0,
            p50_ns: 0,
            p99_ns: 0,
            max_ns: 0,
            buckets: vec![],
        }],
    };
    iops.iter().enumerate().map(point).collect()
}

pub fn job(name: &str, group: u32, opts: &[(&str, &str)], runtime_ns: u64, ops: Vec<OpResult>) -> JobResult {
    let mut spec = JobSpec::default();
    apply_option(&mut spec, "name", name).unwrap();
    for (k, v) in opts {
        apply_option(&mut spec, k, v).unwrap();
    }
    JobResult {
        name: name.into(),
        group,
        description: String::new(),
        engine: spec.ioengine.clone(),
        queue_depth: spec.iodepth,
        workers: spec.numjobs,
        targets: vec!["/data/f".into()],
        start_ns: 0,
        runtime_ns,
        ramp_ns: 0,
        rate_per_worker: None,
        ops,
        size_classes: vec![],
        priorities: vec![],
        series: vec![],
        worker_cpu: CpuTimes::default(),
        interrupted: false,
        failures: vec![],
        warnings: vec![],
        objects_left: 0,
        cut_off: 0,
        logs: vec![],
        hist_logs: vec![],
        steady_state: None,
        verify: None,
        fill: None,
        kind: None,
        per_agent: vec![],
        per_volume: vec![],
        per_worker: vec![],
        phases: vec![],
        depths: [0; 7],
        latency_depth: None,
        spec,
    }
}

pub fn run() -> RunResult {
    let s2 = 2_000_000_000;
    let rr_lat = [(40_000, 950), (80_000, 40), (600_000, 9), (1_500_000, 1)];
    let mut rr =
        job("rr", 0, &[("rw", "randread"), ("numjobs", "2"), ("ioengine", "psync")], s2, vec![op(OpKind::Read, &rr_lat, 4096, s2)]);
    rr.series = series(OpKind::Read, 4096, &[480.0, 520.0]);
    rr.worker_cpu = CpuTimes { user_ns: 100_000_000, sys_ns: 500_000_000, ..Default::default() };
    let mut rr2 = job("rr2", 0, &[("rw", "randread"), ("ioengine", "psync")], s2, vec![op(OpKind::Read, &[(100_000, 3000)], 4096, s2)]);
    rr2.series = series(OpKind::Read, 4096, &[1500.0, 1500.0]);
    let s1 = 1_000_000_000;
    let mut write = op(OpKind::Write, &[(2_000_000, 500)], 8192, s1);
    write.errors = BTreeMap::from([("ENOSPC (No space left on device)".to_string(), 2)]);
    let sync = op(OpKind::Sync, &[(5_000_000, 4)], 0, s1);
    let mut w = job(
        "wsync",
        1,
        &[("rw", "randwrite"), ("bs", "8k"), ("iodepth", "16"), ("ioengine", "io_uring"), ("stonewall", "1")],
        s1,
        vec![write, sync],
    );
    w.description = "beta job".into();
    RunResult {
        schema_version: SCHEMA_VERSION,
        storbench_version: "0.1.0".into(),
        started_unix: 1_795_368_035,
        hostname: "host".into(),
        kernel: String::new(),
        command: vec![],
        interrupted: false,
        jobs: vec![rr, rr2, w],
        cpu: CpuTimes::default(),
        warnings: vec![],
        parameters: Default::default(),
        notes: vec![],
        disk_util: vec![],
        agents: vec![],
        telemetry: None,
        disruption: None,
    }
}

/// A real fio 3.33 run (psync 4k randread, 1 s) with
/// `--output-format=terse,json+,normal`: the job line, the terse line, the
/// json+ document, then the normal output.
pub const REAL: &str = include_str!("testdata/fio-3.33-randread.terse+json+normal");

pub fn real_terse() -> &'static str {
    REAL.lines().find(|l| l.starts_with("3;")).unwrap()
}

pub fn real_json() -> serde_json::Value {
    let start = REAL.find("\n{\n").unwrap() + 1;
    let end = REAL.find("\n}\n").unwrap() + 2;
    serde_json::from_str(&REAL[start..end]).unwrap()
}

/// The normal output: everything after the JSON document.
pub fn real_normal() -> &'static str {
    &REAL[REAL.find("\n}\n").unwrap() + 3..]
}

/// fio's numbers for one direction of the real run, as a [`Dir`].
pub fn real_dir(d: &serde_json::Value) -> Dir {
    let u = |k: &str| d[k].as_u64().unwrap();
    let samples = |p: &str, dev: &str| Samples {
        n: u(&format!("{p}_samples")),
        min: u(&format!("{p}_min")),
        max: u(&format!("{p}_max")),
        mean: d[format!("{p}_mean")].as_f64().unwrap(),
        dev: d[dev].as_f64().unwrap(),
    };
    Dir {
        io_bytes: u("io_bytes"),
        runtime_ms: u("runtime"),
        total_ios: u("total_ios"),
        short_ios: u("short_ios"),
        slat: real_lat(&d["slat_ns"]),
        clat: real_lat(&d["clat_ns"]),
        lat: real_lat(&d["lat_ns"]),
        bw: samples("bw", "bw_dev"),
        iops: samples("iops", "iops_stddev"),
        prios: (d["prios"].as_array().into_iter().flatten())
            .map(|p| (p["prioclass"].as_u64().unwrap() as u8, p["prio"].as_u64().unwrap() as u8, real_lat(&p["clat_ns"])))
            .collect(),
    }
}

/// A disk as fio's `disk_util` entry `d` (a real document's) gives it.
pub fn real_disk(d: &serde_json::Value) -> DiskUtil {
    let u = |k: &str| d[k].as_u64().unwrap();
    DiskUtil {
        name: d["name"].as_str().unwrap().into(),
        read_ios: u("read_ios"),
        write_ios: u("write_ios"),
        read_merges: u("read_merges"),
        write_merges: u("write_merges"),
        read_ticks: u("read_ticks"),
        write_ticks: u("write_ticks"),
        in_queue: u("in_queue"),
        util: d["util"].as_f64().unwrap(),
    }
}

/// A second disk, with writes and merges and a utilisation above fio's cap.
pub fn busy_disk() -> DiskUtil {
    DiskUtil {
        name: "nvme0n1".into(),
        read_ios: 12,
        write_ios: 120_345,
        read_merges: 3,
        write_merges: 4567,
        read_ticks: 8,
        write_ticks: 98_765,
        in_queue: 99_001,
        util: 100.4,
    }
}

/// The group of a job alone in it.
pub fn real_group(d: &Dir) -> GroupDir {
    let bw = d.bw_bytes();
    GroupDir { io_bytes: d.io_bytes, agg: bw, min_bw: bw, max_bw: bw, min_run: d.runtime_ms, max_run: d.runtime_ms }
}

fn real_lat(l: &serde_json::Value) -> Lat {
    let bins = l.get("bins").and_then(|b| b.as_object()).into_iter().flatten();
    Lat {
        n: l["N"].as_u64().unwrap(),
        min: l["min"].as_u64().unwrap(),
        max: l["max"].as_u64().unwrap(),
        mean: l["mean"].as_f64().unwrap(),
        dev: l["stddev"].as_f64().unwrap(),
        plat: Plat::from_bins(bins.map(|(k, c)| (k.parse().unwrap(), c.as_u64().unwrap()))),
    }
}
