//! `storbench swift-bench`: swift-bench's three phases (PUT n objects, GET m
//! of them at random, DELETE them) with swift-bench's options, on the swift
//! engine (or s3 with `--ioengine s3`). Each phase is its own run with its own
//! results directory (`put`, `get`, `delete` below the results directory);
//! each prints swift-bench's FINAL line plus latency percentiles
//! (`storbench_report::compat::swift_bench`).
//!
//! Whatever happens to the PUT phase (a failure, Ctrl-C), the DELETE phase
//! runs, as its own run, and removes what was written.

use super::spec_from;
use crate::cli::SwiftBenchArgs;
use crate::error::CliError;
use crate::session::{execute, exit_code, RunSetup};
use crate::sources::Pairs;
use crate::{output, words};
use clap::CommandFactory;
use storbench_model::RunResult;
use storbench_report::compat::swift_bench::{parameters, render, PHASES};
use storbench_runner::Silent;
use storbench_workload::{JobSpec, OpKind};

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let cmd = crate::cli::Cli::command().find_subcommand("swift-bench").cloned().expect("swift-bench is a command");
    let (own, extra) = words::split(&cmd, words)?;
    if !extra.jobs.is_empty() {
        return Err(CliError::usage("swift-bench takes engine options (--bucket, --container...), not --name jobs"));
    }
    let a: SwiftBenchArgs = match crate::parse_command("swift-bench", own)? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    bench(&a, &connection(&a, extra.global))
}

/// Engine options: -A/-U/-K and any other `--option value`.
fn connection(a: &SwiftBenchArgs, mut extra: Pairs) -> Pairs {
    let named = [("auth", &a.auth), ("user", &a.user), ("key", &a.key)];
    extra.extend(named.iter().filter_map(|(k, v)| Some((k.to_string(), (*v).clone()?))));
    extra
}

/// One phase as a job: PUT creates every object, GET reads at random, DELETE
/// removes each of the `objects` first keys once.
fn phase(a: &SwiftBenchArgs, conn: &Pairs, name: &str, prefix: &str, objects: u64) -> Result<JobSpec, CliError> {
    let (ops, rw, count, exist) = match name {
        "put" => ("create", "write", objects, false),
        "get" => ("read", "randread", a.num_gets, true),
        _ => ("delete", "write", objects, true),
    };
    let mut opts = vec![
        ("name", name.to_string()),
        ("ioengine", a.ioengine.clone()),
        ("objects", objects.max(1).to_string()),
        ("object_size", format!("{}-{}", a.object_size, a.object_size)),
        ("object_prefix", prefix.into()),
        ("iodepth", a.concurrency.to_string()),
        // After DELETE, cleanup finds no objects left and removes the
        // containers (or buckets) storbench created.
        ("cleanup", ((name == "delete") as u8).to_string()),
        ("object_ops", ops.into()),
        ("rw", rw.into()),
        ("number_ios", count.to_string()),
        ("objects_exist", (exist as u8).to_string()),
    ];
    let spread = if a.ioengine == "s3" { "buckets" } else { "containers" };
    if !conn.iter().any(|c| c.0 == spread) {
        opts.push((spread, a.num_containers.to_string()));
    }
    spec_from(&opts, conn).map_err(|e| CliError::usage(format!("swift-bench: {e}")))
}

fn bench(a: &SwiftBenchArgs, conn: &Pairs) -> Result<i32, CliError> {
    let prefix = format!("swiftbench_{}_", std::process::id());
    let base = a.results_dir.clone().unwrap_or_else(output::default_dir);
    let mut code = 0;
    let mut failed: Option<CliError> = None;
    // Keys the PUT phase reached (all, unless it was cut short).
    let mut written = a.num_objects;
    // A Ctrl-C at any time (even between phases) skips the GET phase; the
    // DELETE phase, a run of its own, still removes what was written.
    let command_scope = storbench_runner::interrupt::Scope::begin();
    for (name, _, _) in PHASES {
        let skip = match name {
            "put" => false,
            "get" => a.num_gets == 0 || failed.is_some() || code != 0 || command_scope.interrupted(),
            _ => a.no_delete,
        };
        if skip {
            continue;
        }
        let objects = if name == "put" { a.num_objects } else { written };
        let run = || -> Result<RunResult, CliError> {
            let setup = RunSetup { results_dir: Some(base.join(name)), parameters: parameters(name), ..RunSetup::default() };
            let (result, dir) = execute(vec![phase(a, conn, name, &prefix, objects)?], setup, &mut Silent)?;
            output::write_all(&dir, &result)?;
            out_part!("{}", render(&result).unwrap_or_default());
            Ok(result)
        };
        match run() {
            Ok(r) => {
                code = code.max(exit_code(&r));
                if name == "put" && r.interrupted {
                    written = attempted(&r).min(a.num_objects);
                }
            }
            Err(e) if failed.is_none() => failed = Some(e),
            Err(e) => say!("storbench: {e}"),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if command_scope.interrupted() {
        code = code.max(crate::error::EXIT_INTERRUPTED);
    }
    say!("storbench: results in {}", base.display());
    if a.no_delete {
        say!("storbench: objects kept (-x): prefix {prefix}");
    }
    Ok(code)
}

/// Keys an interrupted PUT phase sent (written or failed): they were taken
/// in order from the first, so the DELETE phase removes exactly those.
fn attempted(r: &RunResult) -> u64 {
    r.jobs.first().and_then(|j| j.op(OpKind::Create)).map_or(0, |o| o.ios + o.errors.values().sum::<u64>())
}
