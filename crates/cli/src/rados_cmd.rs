//! `storbench rados bench|cleanup|load-gen`: the `rados` tool's benchmark
//! commands, run on the rados engine with the object workload model.
//!
//! `bench` keeps rados bench's conventions so the two tools interoperate:
//! objects `benchmark_data_<host>_<pid>_object<N>`, and a metadata object
//! (`benchmark_last_metadata`, or `--run-name`) holding object size, number of
//! writes, writer pid and op size, in rados bench's encoding. So `storbench
//! rados bench 10 seq` reads what `rados bench 10 write --no-cleanup` left, and
//! the other way round. The per-second table has rados bench's columns; "last
//! lat(s)" is the mean of that second (rados bench shows one sample), and the
//! summary adds latency percentiles and the results directory.

use crate::error::CliError;
use crate::output;
use crate::run::{execute, exit_code};
use std::cell::RefCell;
use std::collections::BTreeMap;
use storbench_engine::ceph::rados as engine;
use storbench_report::fmt;
use storbench_runner::{Observer, Progress, RunResult};
use storbench_workload::units::{parse_count, parse_size};
use storbench_workload::{apply_option, JobSpec, OpKind};

const METADATA: &str = "benchmark_last_metadata";
const PREFIX: &str = "benchmark_data";
/// Key space of a write benchmark without --max-objects (its bitmap is 1.2 MiB).
const WRITE_KEYS: u64 = 10_000_000;
const USAGE: &str = "usage: storbench rados bench <seconds> write|seq|rand -p POOL [-b SIZE] [-t N] [--no-cleanup] [--run-name NAME] [--max-objects N]\n       storbench rados cleanup -p POOL [--run-name NAME] [--prefix PREFIX]\n       storbench rados load-gen -p POOL [--num-objects N] [--min-object-size S] [--max-object-size S] [--min-op-len S] [--max-op-len S] [--max-ops N] [--read-percent P] [--target-throughput B/s] [--run-length SECS]";

pub fn rados(words: &[String]) -> Result<i32, CliError> {
    match words.first().map(String::as_str) {
        Some("bench") => bench(&words[1..]),
        Some("cleanup") => cleanup(&words[1..]),
        Some("load-gen") => load_gen(&words[1..]),
        _ => Err(CliError::usage(USAGE)),
    }
}

/// Flags every subcommand takes: connection, pool, results directory.
#[derive(Default)]
struct Common {
    conn: BTreeMap<String, String>,
    results_dir: Option<std::path::PathBuf>,
}

/// Split words into `--flag value` pairs (values looked up by the caller) and
/// positional words, handling the connection flags shared by all subcommands.
fn parse_flags(
    words: &[String],
    takes_value: &[&str],
    switches: &[&str],
) -> Result<(Common, BTreeMap<String, String>, Vec<String>), CliError> {
    let mut c = Common::default();
    let (mut flags, mut positional) = (BTreeMap::new(), Vec::new());
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let (key, inline) = w.split_once('=').map_or((w, None), |(k, v)| (k, Some(v.to_string())));
        let conn_key = match key {
            "-p" | "--pool" => Some("pool"),
            "-c" | "--conf" => Some("conf"),
            "--keyring" | "-k" => Some("keyring"),
            "--id" | "-n" | "--name" => Some("clientname"),
            "-N" | "--namespace" => Some("namespace"),
            _ => None,
        };
        let needs_value = conn_key.is_some() || key == "--results-dir" || takes_value.contains(&key);
        if !key.starts_with('-') || key == "-" {
            positional.push(w.to_string());
        } else if switches.contains(&key) {
            flags.insert(key.to_string(), "1".to_string());
        } else if needs_value {
            let v = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    words.get(i).cloned().ok_or_else(|| CliError::usage(format!("{key} needs a value")))?
                }
            };
            match (conn_key, key) {
                (Some("clientname"), _) => c.conn.insert("clientname".into(), v.trim_start_matches("client.").to_string()),
                (Some(k), _) => c.conn.insert(k.into(), v),
                (None, "--results-dir") => {
                    c.results_dir = Some(v.into());
                    None
                }
                (None, k) => flags.insert(k.to_string(), v),
            };
        } else {
            return Err(CliError::usage(format!("unknown option '{key}'\n{USAGE}")));
        }
        i += 1;
    }
    if !c.conn.contains_key("pool") {
        return Err(CliError::usage("name the pool with -p POOL"));
    }
    Ok((c, flags, positional))
}

fn size_flag(flags: &BTreeMap<String, String>, key: &str, default: u64) -> Result<u64, CliError> {
    flags.get(key).map_or(Ok(default), |v| parse_size(v).map_err(|e| CliError::usage(format!("{key}: {e}"))))
}

fn count_flag(flags: &BTreeMap<String, String>, key: &str, default: u64) -> Result<u64, CliError> {
    flags.get(key).map_or(Ok(default), |v| parse_count(v).map_err(|e| CliError::usage(format!("{key}: {e}"))))
}

fn spec_from(opts: &[(&str, String)], conn: &BTreeMap<String, String>) -> Result<JobSpec, CliError> {
    let mut s = JobSpec::default();
    for (k, v) in opts.iter().map(|(k, v)| (*k, v.as_str())).chain(conn.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        apply_option(&mut s, k, v).map_err(|e| CliError::usage(e.to_string()))?;
    }
    Ok(s)
}

fn engine_err(e: storbench_engine::EngineError) -> CliError {
    if e.is_user_error() {
        CliError::usage(e.to_string())
    } else {
        CliError::system(e.to_string())
    }
}

/// rados bench's metadata object: object size (u64), writes made (i32),
/// writer pid (i32), op size (u64), little-endian as Ceph encodes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchMeta {
    pub object_size: u64,
    pub num_ops: i32,
    pub pid: i32,
    pub op_size: u64,
}

impl BenchMeta {
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(24);
        b.extend_from_slice(&self.object_size.to_le_bytes());
        b.extend_from_slice(&self.num_ops.to_le_bytes());
        b.extend_from_slice(&self.pid.to_le_bytes());
        b.extend_from_slice(&self.op_size.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Option<BenchMeta> {
        let u64_at = |i: usize| b.get(i..i + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
        let i32_at = |i: usize| b.get(i..i + 4).map(|s| i32::from_le_bytes(s.try_into().expect("4 bytes")));
        let object_size = u64_at(0)?;
        // Old writers left out the op size: it was the object size.
        Some(BenchMeta { object_size, num_ops: i32_at(8)?, pid: i32_at(12)?, op_size: u64_at(16).unwrap_or(object_size) })
    }
}

/// rados bench's object prefix for a pid: host name cut at 29 bytes, as it does.
fn bench_prefix(pid: i32) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host: String = host.trim().chars().take(29).collect();
    format!("{PREFIX}_{host}_{pid}_object")
}

fn bench(words: &[String]) -> Result<i32, CliError> {
    let (c, flags, pos) = parse_flags(
        words,
        &["-b", "-t", "--run-name", "--max-objects", "-O", "--object-size"],
        &["--no-cleanup", "--no-verify", "--no-hints", "--reuse-bench", "--show-time"],
    )?;
    let [secs, mode] = pos.as_slice() else {
        return Err(CliError::usage(USAGE));
    };
    let secs = parse_count(secs).map_err(|e| CliError::usage(format!("seconds: {e}")))?;
    if flags.contains_key("--reuse-bench") {
        return Err(CliError::usage("--reuse-bench is not supported: write new objects, or read them with seq/rand"));
    }
    let op_size = size_flag(&flags, "-b", 4 << 20)?;
    let object_size = size_flag(&flags, "-O", size_flag(&flags, "--object-size", op_size)?)?;
    if object_size != op_size {
        return Err(CliError::usage("an object size (-O) different from the op size (-b) is not supported: objects are written whole"));
    }
    let threads = count_flag(&flags, "-t", 16)?.clamp(1, 65536);
    let run_name = flags.get("--run-name").cloned().unwrap_or_else(|| METADATA.to_string());
    let cluster = engine::connect(&c.conn).map_err(engine_err)?;
    match mode.as_str() {
        "write" => bench_write(&c, &flags, &cluster, secs, op_size, threads, &run_name),
        "seq" | "rand" => {
            let meta = match engine::read(&cluster, &run_name, 64).map_err(engine_err)?.and_then(|b| BenchMeta::decode(&b)) {
                Some(m) if m.num_ops > 0 => m,
                _ => {
                    let pool = &c.conn["pool"];
                    return Err(CliError::usage(format!(
                        "no benchmark data to read in pool '{pool}' (object '{run_name}' is missing or empty): \
                         run `storbench rados bench <seconds> write --no-cleanup -p {pool}` (or rados bench) first"
                    )));
                }
            };
            drop(cluster);
            bench_read(&c, secs, threads, meta, mode == "rand")
        }
        m => Err(CliError::usage(format!("'{m}' is not write, seq or rand\n{USAGE}"))),
    }
}

#[allow(clippy::too_many_arguments)]
fn bench_write(
    c: &Common,
    flags: &BTreeMap<String, String>,
    cluster: &storbench_engine::ceph::conn::Cluster,
    secs: u64,
    size: u64,
    threads: u64,
    run_name: &str,
) -> Result<i32, CliError> {
    let pid = std::process::id() as i32;
    let prefix = bench_prefix(pid);
    let max_objects = count_flag(flags, "--max-objects", 0)?;
    let keep = flags.contains_key("--no-cleanup");
    let mut opts = vec![
        ("name", "rados-bench-write".to_string()),
        ("ioengine", "rados".into()),
        ("objects", if max_objects > 0 { max_objects } else { WRITE_KEYS }.to_string()),
        ("object_size", size.to_string()),
        ("object_prefix", prefix.clone()),
        ("object_ops", "create:1".into()),
        ("rados_bench_data", "1".into()),
        ("iodepth", threads.to_string()),
        ("cleanup", (!keep as u8).to_string()),
    ];
    if secs > 0 {
        opts.push(("runtime", secs.to_string()));
    }
    if max_objects > 0 {
        opts.push(("number_ios", max_objects.to_string()));
    }
    let spec = spec_from(&opts, &c.conn)?;
    println!("Maintaining {threads} concurrent writes of {size} bytes to objects of size {size} for up to {secs} seconds or {max_objects} objects");
    println!("Object prefix: {}", prefix.trim_end_matches("_object"));
    let result = run_table(c, spec, size)?;
    let made = result.jobs.first().and_then(|j| j.op(OpKind::Create)).map_or(0, |o| o.ios);
    if keep {
        let meta = BenchMeta { object_size: size, num_ops: made.min(i32::MAX as u64) as i32, pid, op_size: size };
        engine::write_full(cluster, run_name, &meta.encode()).map_err(engine_err)?;
    }
    Ok(exit_code(&result))
}

fn bench_read(c: &Common, secs: u64, threads: u64, meta: BenchMeta, random: bool) -> Result<i32, CliError> {
    if meta.op_size != meta.object_size {
        return Err(CliError::usage(format!(
            "the benchmark data was written in {}-byte ops into {}-byte objects; storbench reads whole objects only",
            meta.op_size, meta.object_size
        )));
    }
    let size = meta.object_size;
    let mut opts = vec![
        ("name", format!("rados-bench-{}", if random { "rand" } else { "seq" })),
        ("ioengine", "rados".into()),
        ("objects", meta.num_ops.to_string()),
        ("object_size", size.to_string()),
        ("object_prefix", bench_prefix(meta.pid)),
        ("objects_exist", "1".into()),
        ("object_ops", "read:1".into()),
        ("rw", if random { "randread" } else { "read" }.into()),
        ("iodepth", threads.to_string()),
    ];
    if secs > 0 {
        opts.push(("runtime", secs.to_string()));
    }
    if !random {
        // seq reads each object once, as rados bench does.
        opts.push(("io_size", (meta.num_ops as u64 * size).to_string()));
    }
    let spec = spec_from(&opts, &c.conn)?;
    let result = run_table(c, spec, size)?;
    Ok(exit_code(&result))
}

/// rados bench's per-second table, kept as the run goes.
struct Table {
    threads: u64,
    size: f64,
    state: RefCell<TableState>,
}

#[derive(Default)]
struct TableState {
    printed: bool,
    finished: f64,
    lat_sum_s: f64,
    mb_per_s: Vec<f64>,
    iops: Vec<f64>,
}

const MB: f64 = 1024.0 * 1024.0;

impl Observer for Table {
    fn second(&self, p: &Progress) {
        let mut st = self.state.borrow_mut();
        let (mut ops, mut lat) = (0.0, 0.0);
        for o in &p.point.ops {
            let n = o.iops * p.point.duration;
            ops += n;
            lat += o.mean_ns as f64 / 1e9 * n;
        }
        st.finished += ops;
        st.lat_sum_s += lat;
        let cur = ops * self.size / MB / p.point.duration.max(1e-9);
        // The last interval of a run is usually a sliver: its rate says little,
        // so it stays out of the per-second statistics (and the table, if a
        // full second was shown).
        if p.point.duration < 0.5 {
            if st.printed {
                return;
            }
        } else {
            st.mb_per_s.push(cur);
            st.iops.push(ops / p.point.duration);
        }
        st.printed = true;
        let finished = st.finished.round() as u64;
        let last = if ops > 0.0 { format!("{:.6}", lat / ops) } else { "-".into() };
        let avg = if st.finished > 0.0 { st.lat_sum_s / st.finished } else { 0.0 };
        println!(
            "{:>5} {:>7} {:>9} {:>9} {:>9.4} {:>9.4} {:>11} {:>11.6}",
            p.elapsed_s.round() as u64,
            self.threads,
            finished + self.threads,
            finished,
            finished as f64 * self.size / MB / p.elapsed_s.max(1e-9),
            cur,
            last,
            avg
        );
    }
}

fn run_table(c: &Common, spec: JobSpec, size: u64) -> Result<RunResult, CliError> {
    println!("  sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)");
    let table = Table { threads: spec.iodepth as u64, size: size as f64, state: RefCell::default() };
    let (result, dir) = execute(vec![spec], &[], c.results_dir.clone(), &table)?;
    summary(&result, &table, size);
    output::write_all(&dir, &result, &[])?;
    eprintln!("storbench: results in {}", dir.display());
    Ok(result)
}

fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

fn summary(r: &RunResult, table: &Table, size: u64) {
    let Some(j) = r.jobs.first() else { return };
    let st = table.state.borrow();
    let secs = j.runtime_ns as f64 / 1e9;
    let (op, made, what) = match j.op(OpKind::Create).or_else(|| j.op(OpKind::Update)) {
        Some(o) => (o, "writes", "Write"),
        None => match j.op(OpKind::Read) {
            Some(o) => (o, "reads", "Read"),
            None => {
                println!("no operation completed");
                return;
            }
        },
    };
    let lat = &op.latency;
    let s = |ns: u64| ns as f64 / 1e9;
    // Runs shorter than a second have no full interval: the whole run is the one sample.
    let whole_mb = [op.bytes as f64 / MB / secs.max(1e-9)];
    let whole_iops = [op.ios as f64 / secs.max(1e-9)];
    let (mb_hist, iops_hist) = if st.iops.is_empty() { (&whole_mb[..], &whole_iops[..]) } else { (&st.mb_per_s[..], &st.iops[..]) };
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
        println!("{:<width$}{v}", format!("{k}:"));
    }
    let cells = fmt::latency_cells(lat);
    let parts: Vec<String> = fmt::LATENCY_COLUMNS.iter().zip(cells).map(|(c, v)| format!("{c} {v}")).collect();
    println!("Latency percentiles: {}", parts.join("  "));
    if j.total_errors() > 0 {
        let kinds: Vec<String> = j.ops.iter().flat_map(|o| o.errors.iter().map(|(k, n)| format!("{n} {k}"))).collect();
        println!("Errors: {} ({})", j.total_errors(), kinds.join(", "));
    }
    for w in j.warnings.iter().chain(&r.warnings) {
        println!("warning: {w}");
    }
}

fn cleanup(words: &[String]) -> Result<i32, CliError> {
    let (c, flags, pos) = parse_flags(words, &["--run-name", "--prefix"], &[])?;
    if !pos.is_empty() {
        return Err(CliError::usage(format!("cleanup takes no argument '{}'\n{USAGE}", pos[0])));
    }
    let cluster = engine::connect(&c.conn).map_err(engine_err)?;
    let run_name = flags.get("--run-name").cloned().unwrap_or_else(|| METADATA.to_string());
    let meta = engine::read(&cluster, &run_name, 64).map_err(engine_err)?.and_then(|b| BenchMeta::decode(&b));
    // Only benchmark objects: those of the recorded run, or the given prefix
    // (which must itself be a benchmark prefix), never anything else.
    let prefix = match (flags.get("--prefix"), meta) {
        (Some(p), _) if p.starts_with(PREFIX) => p.clone(),
        (Some(p), _) => return Err(CliError::usage(format!("--prefix '{p}' is not a benchmark prefix (it must start with {PREFIX})"))),
        (None, Some(m)) => bench_prefix(m.pid),
        (None, None) => format!("{PREFIX}_"),
    };
    let names = engine::list(&cluster, &prefix).map_err(engine_err)?;
    let mut removed = 0;
    for n in &names {
        removed += engine::remove(&cluster, n).map_err(engine_err)? as u64;
    }
    engine::remove(&cluster, &run_name).map_err(engine_err)?;
    println!("Removed {removed} objects");
    Ok(0)
}

fn load_gen(words: &[String]) -> Result<i32, CliError> {
    let (c, flags, pos) = parse_flags(
        words,
        &[
            "--num-objects",
            "--min-object-size",
            "--max-object-size",
            "--min-op-len",
            "--max-op-len",
            "--max-ops",
            "--max-backlog",
            "--read-percent",
            "--percent",
            "--target-throughput",
            "--run-length",
            "--offset-align",
        ],
        &[],
    )?;
    if let Some(p) = pos.first() {
        return Err(CliError::usage(format!("load-gen takes no argument '{p}'\n{USAGE}")));
    }
    let objects = count_flag(&flags, "--num-objects", 200)?.max(1);
    let min_obj = size_flag(&flags, "--min-object-size", 1 << 10)?;
    let max_obj = size_flag(&flags, "--max-object-size", 4 << 20)?;
    let min_op = size_flag(&flags, "--min-op-len", 1 << 10)?;
    let max_op = size_flag(&flags, "--max-op-len", 2 << 20)?.min(min_obj.max(1));
    let read_pct = count_flag(&flags, "--read-percent", count_flag(&flags, "--percent", 80)?)?.min(100);
    let mut opts = vec![
        ("name", "rados-load-gen".to_string()),
        ("ioengine", "rados".into()),
        ("objects", objects.to_string()),
        ("object_size", format!("{min_obj}-{max_obj}")),
        ("object_op_size", format!("{}-{max_op}", min_op.min(max_op))),
        ("object_ops", format!("read:{read_pct},write:{}", 100 - read_pct)),
        ("rw", "randrw".into()),
        ("prefill", "1".into()),
        ("iodepth", count_flag(&flags, "--max-ops", 16)?.max(1).to_string()),
        ("runtime", count_flag(&flags, "--run-length", 60)?.max(1).to_string()),
    ];
    if let Some(t) = flags.get("--target-throughput") {
        opts.push(("rate", t.clone()));
    }
    if flags.contains_key("--max-backlog") {
        eprintln!("storbench: --max-backlog ignored: in-flight work is bounded by --max-ops");
    }
    if flags.contains_key("--offset-align") {
        eprintln!("storbench: --offset-align ignored: op offsets are byte-granular");
    }
    let spec = spec_from(&opts, &c.conn)?;
    eprintln!("storbench: load-gen writes all {objects} objects first (not measured), and removes them at the end");
    crate::run::run_specs(vec![spec], c.results_dir.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_in_rados_bench_encoding() {
        // Bytes written by `rados bench 3 write -b 65536 --no-cleanup` (Ceph 16.2).
        let real = [0, 0, 1, 0, 0, 0, 0, 0, 0x46, 0x08, 0, 0, 0xa1, 0x6d, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        let m = BenchMeta::decode(&real).unwrap();
        assert_eq!(m, BenchMeta { object_size: 65536, num_ops: 2118, pid: 28065, op_size: 65536 });
        assert_eq!(m.encode(), real);
        assert_eq!(BenchMeta::decode(&real[..16]).unwrap().op_size, 65536);
        assert!(BenchMeta::decode(&real[..10]).is_none());
    }

    #[test]
    fn bench_prefix_matches_rados_bench() {
        let p = bench_prefix(42);
        assert!(p.starts_with("benchmark_data_") && p.ends_with("_42_object"), "{p}");
    }
}
