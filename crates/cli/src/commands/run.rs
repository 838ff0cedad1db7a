//! `storbench run`: resolve the jobs from their source, run them, write the
//! results.

use crate::cli::{JobSource, RunFlags};
use crate::error::*;
use crate::progress;
use crate::session::{execute, finish, RunSetup};
use crate::sources::{self, fio, suite, toml};
use crate::words::JobArgs;
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
        return crate::commands::ramp::run(&flags, &jobs, path, use_suite);
    }
    if !flags.users.is_empty() {
        return Err(CliError::usage("--users ramps an ssbench scenario: give --ssbench scenario.json"));
    }
    if let Some(name) = &flags.preset {
        return crate::commands::preset::run(&flags, &jobs, name);
    }
    let (specs, notes) = resolve_specs(&flags.source, &jobs, use_suite)?;
    if specs.iter().any(|s| s.latency_target.is_some()) {
        return crate::commands::slo::latency_target(&flags.source, &jobs, &specs, words);
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
