//! Job sources: where jobs come from (flags, a TOML job file, a fio job
//! file, an ssbench scenario, the built-in quick suite). Each turns its input
//! into option lists, and [`build`] turns those into job specs through the one
//! shared option table.

pub mod fio;
pub mod preset;
pub mod ssbench;
pub mod suite;
pub mod toml;
pub mod vectordb;

use crate::error::CliError;
use storbench_workload::{apply_option, JobSpec};

pub type Pairs = Vec<(String, String)>;

/// A job file, scenario or list read whole, refused when it is not a
/// regular file or larger than any such file is (`/dev/zero` never ends):
/// "cannot read {what} {path}: {why}".
pub fn read_job_file(path: &std::path::Path, what: &'static str) -> Result<String, CliError> {
    use storbench_workload::input::{read_text, JOB_FILE_LIMIT};
    read_text(path, what, JOB_FILE_LIMIT).map_err(|e| CliError::usage(format!("cannot read {what} {}: {e}", path.display())))
}

/// Apply `global` then each job's own options to `base`. With no job lists,
/// the global options describe one job.
pub fn build(base: &JobSpec, global: &Pairs, jobs: &[Pairs]) -> Result<Vec<JobSpec>, CliError> {
    let mut g = base.clone();
    apply_all(&mut g, global, "global options")?;
    if jobs.is_empty() {
        return Ok(vec![g]);
    }
    jobs.iter()
        .enumerate()
        .map(|(i, pairs)| {
            let mut s = g.clone();
            s.name = pairs.iter().find(|(k, _)| k == "name").map(|(_, v)| v.clone()).unwrap_or(format!("job{}", i + 1));
            let context = format!("job '{}'", storbench_workload::shown(&s.name));
            apply_all(&mut s, pairs, &context)?;
            Ok(s)
        })
        .collect()
}

fn apply_all(spec: &mut JobSpec, pairs: &Pairs, context: &str) -> Result<(), CliError> {
    for (k, v) in pairs {
        apply_option(spec, k, v).map_err(|e| CliError::usage(format!("{context}: {e}")))?;
    }
    Ok(())
}
