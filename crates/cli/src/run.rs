//! `storbench run`: resolve the jobs, check them, run them, write the results.

use crate::args::{parse_run, OutputFormat, RunArgs};
use crate::error::*;
use crate::{fiofile, jobfile, output, progress, specs, ssbench, suite};
use storbench_runner::{build_plan, plan, prepare_targets, run_plan, stop, RunResult};
use storbench_workload::JobSpec;

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let (words, use_suite) = take_suite_flag(words)?;
    let args = parse_run(&words)?;
    if let Some(path) = &args.ssbench {
        return run_ssbench(&args, path, use_suite);
    }
    if !args.users.is_empty() {
        return Err(CliError::usage("--users ramps an ssbench scenario: give --ssbench scenario.json"));
    }
    let (specs, notes) = resolve_specs(&args, use_suite)?;
    let observer = progress::Live::new(args.quiet);
    let (result, dir) = execute(specs, &notes, args.results_dir.clone(), &observer)?;
    finish(&args, &dir, &result, &notes)
}

/// Plan, prepare, run and clean up; the results are written by the caller.
/// Bad input is reported before anything is touched.
pub fn execute(
    specs: Vec<JobSpec>,
    notes: &[String],
    results_dir: Option<std::path::PathBuf>,
    observer: &dyn storbench_runner::Observer,
) -> Result<(RunResult, std::path::PathBuf), CliError> {
    let mut plan = build_plan(specs)?;
    let dir = results_dir.unwrap_or_else(output::default_dir);
    output::check_writable(&dir)?;
    for n in notes {
        eprintln!("storbench: {n}");
    }
    stop::install_handlers();
    if let Err(e) = prepare_targets(&mut plan) {
        // No partial writes: files made before the failure go too.
        for w in plan::remove_all_created(&plan) {
            eprintln!("storbench: warning: {w}");
        }
        return Err(e.into());
    }
    output::create(&dir)?;
    let mut result = run_plan(&plan, observer);
    for message in plan::cleanup(&plan) {
        result.warnings.push(storbench_runner::Warning::Cleanup { message });
    }
    Ok((result, dir))
}

/// `--suite quick` selects the built-in suite; no arguments at all means the same.
fn take_suite_flag(words: &[String]) -> Result<(Vec<String>, bool), CliError> {
    let mut out = Vec::new();
    let mut suite = words.is_empty();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        let value = if let Some(v) = w.strip_prefix("--suite=") {
            Some(v.to_string())
        } else if w == "--suite" {
            i += 1;
            Some(words.get(i).cloned().unwrap_or_default())
        } else {
            None
        };
        match value.as_deref() {
            Some("quick") => suite = true,
            Some(other) => return Err(CliError::usage(format!("--suite '{other}' is not a suite; the built-in suite is 'quick'"))),
            None => out.push(w.clone()),
        }
        i += 1;
    }
    Ok((out, suite))
}

fn resolve_specs(args: &RunArgs, use_suite: bool) -> Result<(Vec<JobSpec>, Vec<String>), CliError> {
    let base = JobSpec::default();
    let sources = [args.fio_file.is_some(), args.job_file.is_some(), use_suite].iter().filter(|b| **b).count();
    if sources > 1 {
        return Err(CliError::usage("give one of: a TOML job file, --fio FILE, or --suite quick"));
    }
    if let Some(f) = &args.fio_file {
        if !args.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with --fio; put them in the fio file"));
        }
        let parsed = fiofile::load(f, &base, &args.global, args.fio_allow_unsupported)?;
        return Ok((parsed.specs, parsed.notes));
    }
    if let Some(f) = &args.job_file {
        if !args.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with a job file; options before --name apply to the file's jobs"));
        }
        return Ok((jobfile::load(f, &base, &args.global)?, Vec::new()));
    }
    if use_suite {
        if !args.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with --suite"));
        }
        let cwd = std::env::current_dir().map_err(|e| CliError::system(format!("no current directory: {e}")))?;
        return suite::quick(&cwd, &args.global);
    }
    if !args.has_job_options() {
        return Err(CliError::usage("nothing to run; see `storbench help`"));
    }
    Ok((specs::build(&base, &args.global, &args.jobs)?, Vec::new()))
}

/// An ssbench scenario, once or over a `--users` ramp that stops when
/// throughput falls. Each step writes its own results directory.
fn run_ssbench(args: &RunArgs, path: &std::path::Path, use_suite: bool) -> Result<i32, CliError> {
    if use_suite || args.fio_file.is_some() || args.job_file.is_some() || !args.jobs.is_empty() {
        return Err(CliError::usage("--ssbench runs a scenario on its own: no job file, --fio, --suite or --name jobs with it"));
    }
    let sc = ssbench::load(path)?;
    let steps = if args.users.is_empty() { vec![sc.user_count] } else { args.users.clone() };
    let base_dir = args.results_dir.clone().unwrap_or_else(output::default_dir);
    let mut rows: Vec<(u32, f64, i32)> = Vec::new();
    let mut code = 0;
    for &users in &steps {
        let (specs, notes) = ssbench::specs(&sc, users, &JobSpec::default(), &args.global)?;
        let dir = if steps.len() > 1 { base_dir.join(format!("users-{users}")) } else { base_dir.clone() };
        if steps.len() > 1 {
            eprintln!("storbench: ssbench '{}' with {users} users", sc.name);
        }
        let observer = progress::Live::new(args.quiet);
        let (result, dir) = execute(specs, &notes, Some(dir), &observer)?;
        let step_code = finish(args, &dir, &result, &notes)?;
        code = code.max(step_code);
        let ops: f64 = result.jobs.iter().flat_map(|j| j.ops.iter()).map(|o| o.iops).sum();
        rows.push((users, ops, step_code));
        if result.interrupted {
            break;
        }
        if rows.len() > 1 && ops < rows[rows.len() - 2].1 {
            eprintln!(
                "storbench: throughput fell from {:.1} to {ops:.1} ops/s at {users} users: stopping the ramp",
                rows[rows.len() - 2].1
            );
            break;
        }
    }
    if steps.len() > 1 {
        println!("\nssbench ramp '{}':\n  users     ops/s", sc.name);
        let best = rows.iter().map(|r| r.1).fold(0.0, f64::max);
        for (u, ops, _) in &rows {
            println!("  {u:>5} {ops:>9.1}{}", if *ops == best { "  <- peak" } else { "" });
        }
    }
    Ok(code)
}

/// Run ready-made specs (compatibility modes) with the normal report.
pub fn run_specs(specs: Vec<JobSpec>, results_dir: Option<std::path::PathBuf>) -> Result<i32, CliError> {
    let observer = progress::Live::new(false);
    let (result, dir) = execute(specs, &[], results_dir, &observer)?;
    report(&dir, &result, &[], OutputFormat::Normal)
}

fn finish(args: &RunArgs, dir: &std::path::Path, r: &RunResult, notes: &[String]) -> Result<i32, CliError> {
    report(dir, r, notes, args.format.unwrap_or(OutputFormat::Normal))
}

fn report(dir: &std::path::Path, r: &RunResult, notes: &[String], format: OutputFormat) -> Result<i32, CliError> {
    output::write_all(dir, r, notes)?;
    // A closed pipe must not turn a finished run into a failure: the results
    // directory has everything.
    let _ = output::to_stdout(format, r);
    eprintln!("storbench: results in {}", dir.display());
    Ok(exit_code(r))
}

pub fn exit_code(r: &RunResult) -> i32 {
    if r.interrupted {
        return EXIT_INTERRUPTED;
    }
    let failed = r.jobs.iter().any(|j| j.total_errors() > 0 || !j.failures.is_empty());
    if failed {
        EXIT_IO_ERRORS
    } else {
        0
    }
}
