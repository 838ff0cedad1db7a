//! `storbench swift-bench`: swift-bench's three phases (PUT n objects, GET m
//! of them at random, DELETE them) with swift-bench's options, on the swift
//! engine (or s3 with `--ioengine s3`), for direct comparison. Each phase is
//! its own run with its own results directory; a summary line per phase in
//! swift-bench's words, plus latency percentiles.

use crate::error::CliError;
use crate::output;
use crate::run::{execute, exit_code};
use storbench_report::fmt;
use storbench_runner::{RunResult, Silent};
use storbench_workload::units::{parse_count, parse_size};
use storbench_workload::{apply_option, JobSpec, OpKind};

const USAGE: &str = "usage: storbench swift-bench [-c CONCURRENCY] [-s OBJECT_SIZE] [-n NUM_OBJECTS] [-g NUM_GETS] [-C NUM_CONTAINERS] [-x] [-A AUTH -U USER -K KEY] [--ioengine swift|s3] [--results-dir DIR]";

struct Args {
    concurrency: u64,
    size: u64,
    objects: u64,
    gets: u64,
    containers: u64,
    delete: bool,
    engine: String,
    conn: Vec<(String, String)>,
    results_dir: Option<std::path::PathBuf>,
}

fn parse(words: &[String]) -> Result<Args, CliError> {
    let mut a = Args {
        concurrency: 10,
        size: 1,
        objects: 1000,
        gets: 10000,
        containers: 20,
        delete: true,
        engine: "swift".into(),
        conn: Vec::new(),
        results_dir: None,
    };
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let (key, inline) = w.split_once('=').map_or((w, None), |(k, v)| (k, Some(v.to_string())));
        if matches!(key, "-x" | "--no-delete") {
            a.delete = false;
            i += 1;
            continue;
        }
        let mut value = || -> Result<String, CliError> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            words.get(i).cloned().ok_or_else(|| CliError::usage(format!("{key} needs a value\n{USAGE}")))
        };
        let num = |v: String, what: &str| parse_count(&v).map_err(|e| CliError::usage(format!("{what}: {e}")));
        match key {
            "-c" | "--concurrency" => a.concurrency = num(value()?, "--concurrency")?.clamp(1, 65536),
            "-s" | "--object-size" => a.size = parse_size(&value()?).map_err(|e| CliError::usage(format!("--object-size: {e}")))?,
            "-n" | "--num-objects" => a.objects = num(value()?, "--num-objects")?.max(1),
            "-g" | "--num-gets" => a.gets = num(value()?, "--num-gets")?,
            "-C" | "--num-containers" => a.containers = num(value()?, "--num-containers")?.max(1),
            "-A" | "--auth" => a.conn.push(("auth".into(), value()?)),
            "-U" | "--user" => a.conn.push(("user".into(), value()?)),
            "-K" | "--key" => a.conn.push(("key".into(), value()?)),
            "--ioengine" => a.engine = value()?,
            "--results-dir" => a.results_dir = Some(value()?.into()),
            k if k.starts_with("--") => {
                // Any engine option (--bucket, --endpoint, --container...).
                let v = value()?;
                a.conn.push((k.trim_start_matches("--").replace('-', "_"), v));
            }
            k => return Err(CliError::usage(format!("unknown argument '{k}'\n{USAGE}"))),
        }
        i += 1;
    }
    if !matches!(a.engine.as_str(), "swift" | "s3") {
        return Err(CliError::usage(format!("--ioengine '{}': swift-bench runs on swift or s3", a.engine)));
    }
    Ok(a)
}

/// One phase as a job: PUT creates every object, GET reads at random, DELETE
/// removes each object once.
fn phase(a: &Args, name: &str, prefix: &str) -> Result<JobSpec, CliError> {
    let mut opts: Vec<(String, String)> = vec![
        ("name".into(), name.into()),
        ("ioengine".into(), a.engine.clone()),
        ("objects".into(), a.objects.to_string()),
        ("object_size".into(), format!("{}-{}", a.size, a.size)),
        ("object_prefix".into(), prefix.into()),
        ("iodepth".into(), a.concurrency.to_string()),
        // After DELETE, cleanup finds no objects left and removes the
        // containers (or buckets) storbench created.
        ("cleanup".into(), ((name == "delete") as u8).to_string()),
    ];
    let (ops, rw, count, exist) = match name {
        "put" => ("create", "write", a.objects, false),
        "get" => ("read", "randread", a.gets, true),
        _ => ("delete", "write", a.objects, true),
    };
    opts.extend([
        ("object_ops".into(), ops.into()),
        ("rw".into(), rw.into()),
        ("number_ios".into(), count.to_string()),
        ("objects_exist".into(), (exist as u8).to_string()),
    ]);
    let spread = if a.engine == "s3" { "buckets" } else { "containers" };
    if !a.conn.iter().any(|c| c.0 == spread) {
        opts.push((spread.into(), a.containers.to_string()));
    }
    opts.extend(a.conn.iter().cloned());
    let mut s = JobSpec::default();
    for (k, v) in &opts {
        apply_option(&mut s, k, v).map_err(|e| CliError::usage(format!("swift-bench: {e}")))?;
    }
    Ok(s)
}

pub fn swift_bench(words: &[String]) -> Result<i32, CliError> {
    let a = parse(words)?;
    let prefix = format!("swiftbench_{}_", std::process::id());
    let base = a.results_dir.clone().unwrap_or_else(output::default_dir);
    let mut phases = vec![("put", "PUTS", OpKind::Create), ("get", "GETS", OpKind::Read)];
    if a.delete {
        phases.push(("delete", "DEL", OpKind::Delete));
    }
    if a.gets == 0 {
        phases.retain(|p| p.0 != "get");
    }
    let mut code = 0;
    let mut failed: Option<CliError> = None;
    for (name, label, op) in phases {
        // After a failure only the DELETE phase runs, so nothing is left behind.
        if (failed.is_some() || code != 0) && name != "delete" {
            continue;
        }
        let run = || -> Result<i32, CliError> {
            let (result, dir) = execute(vec![phase(&a, name, &prefix)?], &[], Some(base.join(name)), &Silent)?;
            output::write_all(&dir, &result, &[])?;
            line(&result, label, op);
            Ok(exit_code(&result))
        };
        match run() {
            Ok(c) => code = code.max(c),
            Err(e) if failed.is_none() => failed = Some(e),
            Err(e) => eprintln!("storbench: {e}"),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    eprintln!("storbench: results in {}", base.display());
    if !a.delete {
        eprintln!("storbench: objects kept (-x): prefix {prefix}");
    }
    Ok(code)
}

/// swift-bench's final line for a phase, and the percentiles it lacks.
fn line(r: &RunResult, label: &str, op: OpKind) {
    let Some(j) = r.jobs.first() else { return };
    let Some(o) = j.op(op) else {
        println!("{label} **FINAL** no operation completed");
        return;
    };
    let failures: u64 = o.errors.values().sum();
    let secs = j.runtime_ns as f64 / 1e9;
    println!("{} {label} **FINAL** [{failures} failures], {:.1}/s", o.ios + failures, o.ios as f64 / secs.max(1e-9));
    let parts: Vec<String> = fmt::LATENCY_COLUMNS.iter().zip(fmt::latency_cells(&o.latency)).map(|(c, v)| format!("{c} {v}")).collect();
    println!("  {} latency: {}", label, parts.join("  "));
}
