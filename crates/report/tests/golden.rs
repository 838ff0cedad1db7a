//! Golden files for the human-readable renderers. A deliberate format change is
//! accepted by re-running with UPDATE_GOLDEN=1 and reviewing the diff.

use std::collections::BTreeMap;
use std::path::PathBuf;
use storbench_metrics::{CpuTimes, LatencySummary, OpStats};
use storbench_model::{DiskUtil, JobResult, OpResult, RunResult, SeriesOp, SeriesPoint, SizeClassResult, Warning, SCHEMA_VERSION};
use storbench_report::{csv, text};
use storbench_workload::{apply_option, JobSpec, OpKind};

fn stats(base_ns: u64, n: u64, bytes: u64) -> OpStats {
    let mut s = OpStats::new(false);
    for i in 0..n {
        // A spread from base to ~3x base, plus a tail.
        let v = base_ns + (i * 7919 % 1000) * base_ns * 2 / 1000 + if i % 500 == 0 { base_ns * 40 } else { 0 };
        s.record(bytes, v, v);
    }
    s
}

fn job(name: &str, opts: &[(&str, &str)], ops: &[(OpKind, u64, u64, u64)]) -> JobResult {
    let mut spec = JobSpec::default();
    apply_option(&mut spec, "name", name).unwrap();
    for (k, v) in opts {
        apply_option(&mut spec, k, v).unwrap();
    }
    let runtime_ns = 10_000_000_000;
    let ops: Vec<OpResult> =
        ops.iter().map(|(op, base, n, bytes)| OpResult::from_stats(*op, &stats(*base, *n, *bytes), runtime_ns)).collect();
    let series = (1..=2)
        .map(|t| SeriesPoint {
            t: t as f64,
            duration: 1.0,
            warmup: t == 1,
            ops: vec![SeriesOp {
                op: OpKind::Read,
                iops: 1000.0 * t as f64,
                bytes_per_sec: 4096000.0 * t as f64,
                errors: 0,
                error_kinds: Default::default(),
                mean_ns: 90_000,
                p50_ns: 85_000,
                p99_ns: 150_000,
                max_ns: 4_000_000,
                buckets: vec![],
            }],
        })
        .collect();
    JobResult {
        name: name.into(),
        group: 0,
        description: spec.describe(),
        engine: spec.ioengine.clone(),
        queue_depth: spec.iodepth,
        workers: spec.numjobs,
        targets: vec!["/data/storbench.dat".into()],
        start_ns: 0,
        runtime_ns,
        ramp_ns: 1_000_000_000,
        rate_per_worker: None,
        ops,
        size_classes: vec![],
        priorities: vec![],
        series,
        worker_cpu: CpuTimes { user_ns: 1_000_000_000, sys_ns: 2_000_000_000, ..Default::default() },
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

/// An object job with weighted sizes: its operations per size class too.
fn object_job() -> JobResult {
    let opts = [("ioengine", "null"), ("objects", "100"), ("object_size", "4k/90:4m/10"), ("object_ops", "create:1,read:3")];
    let mut j = job("objects", &opts, &[(OpKind::Create, 200_000, 5_000, 421_000), (OpKind::Read, 90_000, 15_000, 421_000)]);
    let class = |size: u64, base: u64, n: u64| SizeClassResult {
        size,
        ops: [OpKind::Create, OpKind::Read]
            .iter()
            .map(|op| OpResult::from_stats(*op, &stats(base * (1 + (*op == OpKind::Create) as u64), n, size), j.runtime_ns))
            .collect(),
    };
    j.size_classes = vec![class(4096, 80_000, 18_000), class(4 << 20, 900_000, 2_000)];
    // Large reads: the first byte long before the last.
    j.size_classes[1].ops[1].first_byte = Some(LatencySummary::of(&stats(100_000, 2_000, 0).latency));
    j
}

fn sample() -> RunResult {
    let mut jobs = vec![
        job("4k-randread-qd1", &[("rw", "randread"), ("ioengine", "io_uring")], &[(OpKind::Read, 85_000, 110_000, 4096)]),
        job(
            "8k-oltp",
            &[("rw", "randrw"), ("rwmixread", "70"), ("bs", "8k"), ("iodepth", "16"), ("ioengine", "io_uring")],
            &[(OpKind::Read, 370_000, 280_000, 8192), (OpKind::Write, 400_000, 120_000, 8192)],
        ),
    ];
    jobs.push(object_job());
    jobs[1].warnings.push(Warning::FewSamples { job: "8k-oltp".into(), op: "write".into(), ios: 999 });
    RunResult {
        schema_version: SCHEMA_VERSION,
        storbench_version: "0.1.0".into(),
        started_unix: 1_700_000_000,
        hostname: "host".into(),
        kernel: String::new(),
        command: vec![],
        interrupted: false,
        jobs,
        cpu: CpuTimes { user_ns: 630_000_000, sys_ns: 10_370_000_000, ..Default::default() },
        warnings: vec![],
        parameters: Default::default(),
        notes: vec![],
        disk_util: vec![DiskUtil {
            name: "nvme0n1".into(),
            read_ios: 281_204,
            write_ios: 120_310,
            read_merges: 0,
            write_merges: 12,
            read_ticks: 95_521,
            write_ticks: 41_873,
            in_queue: 137_402,
            util: 97.312468,
        }],
        agents: vec![],
        telemetry: None,
        disruption: None,
    }
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(actual, expected, "{name} differs from the golden file (UPDATE_GOLDEN=1 accepts a deliberate change)");
}

#[test]
fn human_summary_matches_golden() {
    check("summary.txt", &text::render(&sample()));
}

#[test]
fn series_csv_matches_golden() {
    check("series.csv", &csv::render(&sample()));
}

/// A run of one job with per-second points (a sliver last), as the
/// compatibility tools leave them, with the tool's parameters.
fn tool_run(op: OpKind, size: u64, parameters: BTreeMap<String, String>) -> RunResult {
    let mut r = sample();
    let mut j = job("tool", &[("ioengine", "null")], &[(op, 20_000_000, 600, size)]);
    j.runtime_ns = 3_200_000_000;
    j.ramp_ns = 0;
    j.ops[0] = OpResult::from_stats(op, &stats(20_000_000, 600, size), j.runtime_ns);
    j.series = [(1.0, 1.0, 180.0), (2.0, 1.0, 210.0), (3.0, 1.0, 195.0), (3.2, 0.2, 75.0)]
        .iter()
        .map(|&(t, duration, iops)| SeriesPoint {
            t,
            duration,
            warmup: false,
            ops: vec![SeriesOp {
                op,
                iops,
                bytes_per_sec: iops * size as f64,
                errors: 0,
                error_kinds: Default::default(),
                mean_ns: 21_000_000,
                p50_ns: 20_000_000,
                p99_ns: 60_000_000,
                max_ns: 80_000_000,
                buckets: vec![],
            }],
        })
        .collect();
    r.jobs = vec![j];
    r.parameters = parameters;
    r
}

fn render(format: &str, runs: &storbench_model::RunSet) -> String {
    let mut out = Vec::new();
    storbench_report::find(format).unwrap().write(runs, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn rados_bench_output_matches_golden() {
    let p = storbench_report::compat::rados_bench::Params {
        mode: "write".into(),
        seconds: 3,
        size: 4 << 20,
        threads: 16,
        max_objects: 0,
        prefix: "benchmark_data_host_4242".into(),
    };
    let r = tool_run(OpKind::Create, 4 << 20, p.parameters());
    check("rados-bench.txt", &render("rados-bench", &storbench_model::RunSet::one(r)));
}

#[test]
fn rbd_bench_output_matches_golden() {
    let p = storbench_report::compat::rbd_bench::Params {
        io_type: "write".into(),
        io_size: 65536,
        io_threads: 16,
        io_total: 1 << 30,
        pattern: "random".into(),
    };
    let r = tool_run(OpKind::Write, 65536, p.parameters());
    check("rbd-bench.txt", &render("rbd-bench", &storbench_model::RunSet::one(r)));
}

#[test]
fn swift_bench_output_matches_golden() {
    let mut runs = storbench_model::RunSet::default();
    for (phase, op) in [("put", OpKind::Create), ("get", OpKind::Read), ("delete", OpKind::Delete)] {
        let params = storbench_report::compat::swift_bench::parameters(phase);
        runs.push(tool_run(op, 4096, params), None);
    }
    check("swift-bench.txt", &render("swift-bench", &runs));
}

#[test]
fn ssbench_ramp_matches_golden() {
    let mut runs = storbench_model::RunSet::default();
    for (step, users) in [4u32, 8, 16].iter().enumerate() {
        let params = storbench_report::compat::ssbench::parameters("Small test scenario", *users, step);
        let mut r = tool_run(OpKind::Read, 4096, params);
        r.jobs[0].ops[0].iops = [180.0, 260.0, 240.0][step];
        runs.push(r, None);
    }
    check("ssbench-ramp.txt", &render("ssbench-ramp", &runs));
}

#[test]
fn a_run_not_made_by_a_tool_is_refused_in_its_format() {
    let mut out = Vec::new();
    let e = storbench_report::find("rados-bench").unwrap().write(&storbench_model::RunSet::one(sample()), &mut out).unwrap_err();
    assert!(e.to_string().contains("not made by `storbench rados bench`"), "{e}");
}
