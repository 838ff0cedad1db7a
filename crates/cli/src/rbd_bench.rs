//! `storbench rbd bench`: rbd bench's options, per-second lines and summary,
//! run on the rbd engine with the one workload model, plus the latency
//! percentiles rbd bench lacks and the usual results directory.
//!
//! Unlike `rbd bench`, writing to an image storbench did not create needs
//! `--allow-overwrite` (the image's data is destroyed).

use crate::error::CliError;
use crate::output;
use crate::run::{execute, exit_code};
use std::cell::Cell;
use storbench_report::fmt;
use storbench_runner::{Observer, Progress, RunResult};
use storbench_workload::units::{parse_count, parse_size};
use storbench_workload::{apply_option, JobSpec};

struct Args {
    io_type: String,
    io_size: u64,
    io_threads: u32,
    io_total: u64,
    pattern: String,
    mix_read: u32,
    image: Option<String>,
    pool: Option<String>,
    conn: Vec<(String, String)>,
    allow_overwrite: bool,
    results_dir: Option<std::path::PathBuf>,
}

pub fn rbd(words: &[String]) -> Result<i32, CliError> {
    match words.first().map(String::as_str) {
        Some("bench") => bench(&words[1..]),
        _ => Err(CliError::usage("usage: storbench rbd bench --io-type read|write|readwrite [--io-size N] [--io-threads N] [--io-total N] [--io-pattern seq|rand] [--rw-mix-read N] [POOL/]IMAGE")),
    }
}

fn parse(words: &[String]) -> Result<Args, CliError> {
    let mut a = Args {
        io_type: String::new(),
        io_size: 4096,
        io_threads: 16,
        io_total: 1 << 30,
        pattern: "seq".into(),
        mix_read: 50,
        image: None,
        pool: None,
        conn: Vec::new(),
        allow_overwrite: false,
        results_dir: None,
    };
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let (key, inline) = w.split_once('=').map_or((w, None), |(k, v)| (k, Some(v.to_string())));
        let mut value = || -> Result<String, CliError> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            words.get(i).cloned().ok_or_else(|| CliError::usage(format!("{key} needs a value")))
        };
        let bad = |what: &str, e: &dyn std::fmt::Display| CliError::usage(format!("{what}: {e}"));
        match key {
            "--io-type" => a.io_type = value()?,
            "--io-size" => a.io_size = parse_size(&value()?).map_err(|e| bad("--io-size", &e))?,
            "--io-threads" => a.io_threads = parse_count(&value()?).map_err(|e| bad("--io-threads", &e))?.clamp(1, 65536) as u32,
            "--io-total" => a.io_total = parse_size(&value()?).map_err(|e| bad("--io-total", &e))?,
            "--io-pattern" => a.pattern = value()?,
            "--rw-mix-read" => a.mix_read = parse_count(&value()?).map_err(|e| bad("--rw-mix-read", &e))?.min(100) as u32,
            "-p" | "--pool" => a.pool = Some(value()?),
            "--image" => a.image = Some(value()?),
            "-c" | "--conf" => a.conn.push(("conf".into(), value()?)),
            "--keyring" => a.conn.push(("keyring".into(), value()?)),
            "--id" => a.conn.push(("clientname".into(), value()?)),
            "-n" | "--name" => a.conn.push(("clientname".into(), value()?.trim_start_matches("client.").to_string())),
            "--allow-overwrite" | "--allow_overwrite" => a.allow_overwrite = true,
            "--rbd-cache" | "--rbd_cache" => a.conn.push(("rbd_cache".into(), value()?)),
            "--results-dir" => a.results_dir = Some(value()?.into()),
            k if k.starts_with('-') => return Err(CliError::usage(format!("rbd bench: unknown option '{k}'"))),
            spec => a.image = Some(spec.to_string()),
        }
        i += 1;
    }
    Ok(a)
}

fn to_spec(a: &Args) -> Result<JobSpec, CliError> {
    let image = a.image.as_deref().ok_or_else(|| CliError::usage("rbd bench: name the image ([POOL/]IMAGE or --image)"))?;
    let (pool, image) = match image.split_once('/') {
        Some((p, i)) => (p.to_string(), i.to_string()),
        None => (a.pool.clone().unwrap_or_else(|| "rbd".into()), image.to_string()),
    };
    let random = match a.pattern.as_str() {
        "seq" | "sequential" => false,
        "rand" | "random" => true,
        p => return Err(CliError::usage(format!("--io-pattern '{p}' is not seq or rand"))),
    };
    let rw = match (a.io_type.as_str(), random) {
        ("read", false) => "read",
        ("read", true) => "randread",
        ("write", false) => "write",
        ("write", true) => "randwrite",
        ("readwrite" | "rw", false) => "readwrite",
        ("readwrite" | "rw", true) => "randrw",
        ("", _) => return Err(CliError::usage("rbd bench: --io-type read|write|readwrite is required")),
        (t, _) => return Err(CliError::usage(format!("--io-type '{t}' is not read, write or readwrite"))),
    };
    let mut s = JobSpec::default();
    let mut opts: Vec<(String, String)> = vec![
        ("name".into(), format!("rbd-bench-{}", a.io_type)),
        ("ioengine".into(), "rbd".into()),
        ("pool".into(), pool),
        ("rbdname".into(), image),
        ("rw".into(), rw.into()),
        ("rwmixread".into(), a.mix_read.to_string()),
        ("bs".into(), a.io_size.to_string()),
        ("iodepth".into(), a.io_threads.to_string()),
        ("io_size".into(), a.io_total.to_string()),
        ("allow_overwrite".into(), (a.allow_overwrite as u8).to_string()),
    ];
    opts.extend(a.conn.iter().cloned());
    for (k, v) in &opts {
        apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("rbd bench: {e}")))?;
    }
    Ok(s)
}

/// rbd bench's per-second lines: cumulative ops, ops/s and bytes/s so far.
struct Lines {
    ops: Cell<u64>,
    bytes: Cell<f64>,
}

impl Observer for Lines {
    fn second(&self, p: &Progress) {
        let ops: f64 = p.point.ops.iter().map(|o| o.iops * p.point.duration).sum();
        let bytes: f64 = p.point.ops.iter().map(|o| o.bytes_per_sec * p.point.duration).sum();
        self.ops.set(self.ops.get() + ops.round() as u64);
        self.bytes.set(self.bytes.get() + bytes);
        let secs = p.elapsed_s.max(1e-9);
        println!(
            "{:>5} {:>9} {:>9.2} {:>9}",
            p.elapsed_s.round() as u64,
            self.ops.get(),
            self.ops.get() as f64 / secs,
            mib_s(self.bytes.get() / secs)
        );
    }
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

fn bench(words: &[String]) -> Result<i32, CliError> {
    let a = parse(words)?;
    let spec = to_spec(&a)?;
    let pattern = if spec.rw.is_random() { "random" } else { "sequential" };
    println!("bench  type {} io_size {} io_threads {} bytes {} pattern {}", a.io_type, a.io_size, a.io_threads, a.io_total, pattern);
    println!("  SEC       OPS   OPS/SEC   BYTES/SEC");
    let lines = Lines { ops: Cell::new(0), bytes: Cell::new(0.0) };
    let (result, dir) = execute(vec![spec], &[], a.results_dir.clone(), &lines)?;
    summary(&result);
    output::write_all(&dir, &result, &[])?;
    eprintln!("storbench: results in {}", dir.display());
    Ok(exit_code(&result))
}

fn summary(r: &RunResult) {
    let Some(j) = r.jobs.first() else { return };
    let secs = j.runtime_ns as f64 / 1e9;
    let ops = j.total_ios();
    let bytes: u64 = j.ops.iter().map(|o| o.bytes).sum();
    println!(
        "elapsed: {:.0}   ops: {}   ops/sec: {:.2}   bytes/sec: {}",
        secs,
        ops,
        ops as f64 / secs.max(1e-9),
        mib_s(bytes as f64 / secs.max(1e-9))
    );
    for o in &j.ops {
        let cells = fmt::latency_cells(&o.latency);
        let parts: Vec<String> = fmt::LATENCY_COLUMNS.iter().zip(cells).map(|(c, v)| format!("{c} {v}")).collect();
        println!("{} latency: {}", o.op.name(), parts.join("  "));
    }
    for w in j.warnings.iter().chain(&r.warnings) {
        println!("warning: {w}");
    }
    if j.total_errors() > 0 {
        println!("errors: {}", j.total_errors());
    }
}
