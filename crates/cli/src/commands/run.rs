//! `storbench run`: resolve the jobs from their source, run them, write the
//! results.

use crate::cli::{JobSource, RunFlags};
use crate::error::*;
use crate::session::{execute, finish, RunSetup};
use crate::sources::{self, fio, ssbench, suite, toml};
use crate::words::JobArgs;
use crate::{output, progress};
use storbench_model::RunSet;
use storbench_report::compat::ssbench as ramp;
use storbench_workload::JobSpec;

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let (flags, jobs): (RunFlags, JobArgs) = match crate::parse_with_jobs("run", words)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    // No job source at all (storbench's own flags only): the quick suite.
    let no_source = flags.source.job_file.is_none() && flags.source.job.is_none() && flags.source.fio.is_none() && flags.ssbench.is_none();
    let use_suite = flags.source.suite.is_some() || (no_source && jobs.jobs.is_empty() && jobs.global.is_empty());
    if let Some(path) = &flags.ssbench {
        return run_ssbench(&flags, &jobs, path, use_suite);
    }
    if !flags.users.is_empty() {
        return Err(CliError::usage("--users ramps an ssbench scenario: give --ssbench scenario.json"));
    }
    if let Some(name) = &flags.preset {
        return crate::commands::preset::run(&flags, &jobs, name);
    }
    let (specs, notes) = resolve_specs(&flags.source, &jobs, use_suite)?;
    if let Some(target) = specs.iter().find_map(|s| s.latency_target) {
        return crate::commands::slo::latency_target(&flags.source, &jobs, &specs, target, words);
    }
    let specs = match (flags.precondition, flags.fill) {
        (true, _) => crate::precondition::prepend(specs)?,
        (false, Some(f)) => crate::precondition::prepend_with(specs, crate::precondition::Before::Fill(f))?,
        (false, None) => specs,
    };
    let mut observer = progress::Live::new(flags.source.quiet);
    let setup = RunSetup { notes, ..RunSetup::from_source(&flags.source)? };
    let (result, dir) = execute(specs, setup, &mut observer)?;
    finish(&dir, &result, Some(flags.format.as_deref().unwrap_or("normal")))
}

pub(crate) fn resolve_specs(flags: &JobSource, jobs: &JobArgs, use_suite: bool) -> Result<(Vec<JobSpec>, Vec<String>), CliError> {
    resolve(flags, jobs, use_suite, false)
}

/// As [`resolve_specs`]; a sweep's own job file may have a `[sweep]` table.
pub(crate) fn resolve(
    flags: &JobSource,
    jobs: &JobArgs,
    use_suite: bool,
    allow_sweep_table: bool,
) -> Result<(Vec<JobSpec>, Vec<String>), CliError> {
    let base = JobSpec::default();
    let job_file = flags.job_file.as_ref().or(flags.job.as_ref());
    let sources_given = [flags.fio.is_some(), job_file.is_some(), use_suite].iter().filter(|b| **b).count();
    if sources_given > 1 {
        return Err(CliError::usage("give one of: a TOML job file, --fio FILE, or --suite quick"));
    }
    if let Some(f) = &flags.fio {
        if !jobs.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with --fio; put them in the fio file"));
        }
        let parsed = fio::load(f, &fio::Reading::new(&base, &jobs.global, flags.fio_allow_unsupported))?;
        return Ok((parsed.specs, parsed.notes));
    }
    if let Some(f) = job_file {
        if !allow_sweep_table && !toml::sweep_dimensions(f)?.is_empty() {
            return Err(CliError::usage(format!("{} has a [sweep] table: run it with `storbench sweep {}`", f.display(), f.display())));
        }
        if !jobs.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with a job file; options before --name apply to the file's jobs"));
        }
        return Ok((toml::load(f, &base, &jobs.global)?, Vec::new()));
    }
    if use_suite {
        if !jobs.jobs.is_empty() {
            return Err(CliError::usage("--name jobs cannot be combined with --suite"));
        }
        let cwd = std::env::current_dir().map_err(|e| CliError::system(format!("no current directory: {e}")))?;
        return suite::quick(&cwd, &jobs.global);
    }
    Ok((sources::build(&base, &jobs.global, &jobs.jobs)?, Vec::new()))
}

/// An ssbench scenario, once or over a `--users` ramp that stops when
/// throughput falls. Each step writes its own results directory, and records
/// its users, so `storbench show DIR --format ssbench-ramp` prints the ramp again.
fn run_ssbench(flags: &RunFlags, jobs: &JobArgs, path: &std::path::Path, use_suite: bool) -> Result<i32, CliError> {
    if use_suite || flags.source.fio.is_some() || flags.source.job_file.is_some() || flags.source.job.is_some() || !jobs.jobs.is_empty() {
        return Err(CliError::usage("--ssbench runs a scenario on its own: no job file, --fio, --suite or --name jobs with it"));
    }
    if flags.users.windows(2).any(|w| w[1] <= w[0]) {
        let list: Vec<String> = flags.users.iter().map(u32::to_string).collect();
        return Err(CliError::usage(format!("--users '{}' must grow from one step to the next", list.join(","))));
    }
    let sc = ssbench::load(path)?;
    // The fleet (`--agents`) and metrics endpoint, one for every step.
    let shared = RunSetup::from_source(&flags.source)?;
    let steps = if flags.users.is_empty() { vec![sc.user_count] } else { flags.users.clone() };
    let base_dir = flags.source.results_dir.clone().unwrap_or_else(output::default_dir);
    let mut runs = RunSet::default();
    let mut code = 0;
    // A Ctrl-C between two steps (while one writes its results) ends the ramp too.
    let ramp_scope = storbench_runner::interrupt::Scope::begin();
    for (step, &users) in steps.iter().enumerate() {
        if ramp_scope.interrupted() {
            eprintln!("storbench: interrupted: stopping the ramp");
            code = code.max(EXIT_INTERRUPTED);
            break;
        }
        let (specs, notes) = ssbench::specs(&sc, users, &JobSpec::default(), &jobs.global)?;
        let dir = if steps.len() > 1 { base_dir.join(format!("users-{users}")) } else { base_dir.clone() };
        if steps.len() > 1 {
            eprintln!("storbench: ssbench '{}' with {users} users", sc.name);
        }
        let mut observer = progress::Live::new(flags.source.quiet);
        let setup = RunSetup {
            notes,
            results_dir: Some(dir),
            parameters: ramp::parameters(&sc.name, users, step),
            fleet: shared.fleet.clone(),
            metrics: shared.metrics.clone(),
            replace: shared.replace,
            logs_outside: false,
        };
        let (result, dir) = execute(specs, setup, &mut observer)?;
        code = code.max(finish(&dir, &result, Some(flags.format.as_deref().unwrap_or("normal")))?);
        let ops = ramp::ops_per_sec(&result);
        let interrupted = result.interrupted;
        let before = runs.runs.last().map(|r| ramp::ops_per_sec(&r.result));
        runs.push(result, Some(dir));
        if interrupted {
            break;
        }
        if let Some(before) = before.filter(|b| ops < *b) {
            eprintln!("storbench: throughput fell from {before:.1} to {ops:.1} ops/s at {users} users: stopping the ramp");
            break;
        }
    }
    if steps.len() > 1 {
        print!("{}", ramp::render(&runs).unwrap_or_default());
    }
    Ok(code)
}
