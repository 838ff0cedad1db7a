//! `storbench replay TRACE`: a run of one job that replays the trace
//! (`read_iolog` and the `replay_*` options), with defaults that let a trace
//! keep its concurrency: io_uring at iodepth 32 where the kernel allows it.

use crate::cli::{JobSource, ReplayFlags};
use crate::error::*;
use crate::progress;
use crate::session::{execute, finish, RunSetup};
use crate::sources;
use crate::words::JobArgs;
use storbench_workload::JobSpec;

pub fn run(words: &[String]) -> Result<i32, CliError> {
    let (flags, jobs): (ReplayFlags, JobArgs) = match crate::parse_with_jobs("replay", words)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    let specs = sources::build(&JobSpec::default(), &global(&flags, &jobs), &jobs.jobs)?;
    let source = JobSource { results_dir: flags.results_dir.clone(), quiet: flags.quiet, force: flags.force, ..JobSource::default() };
    let mut observer = progress::Live::new(flags.quiet);
    let (result, dir) = execute(specs, RunSetup::from_source(&source)?, &mut observer)?;
    finish(&dir, &result, Some(flags.format.as_deref().unwrap_or("normal")))
}

/// The replay's options, then the user's (which win).
fn global(flags: &ReplayFlags, jobs: &JobArgs) -> sources::Pairs {
    let given = |k: &str| jobs.global.iter().chain(jobs.jobs.iter().flatten()).any(|(name, _)| name == k);
    let mut g: sources::Pairs = vec![("name".into(), "replay".into())];
    if !given("ioengine") && !given("iodepth") && storbench_engine::uring::available() {
        g.push(("ioengine".into(), "io_uring".into()));
        g.push(("iodepth".into(), "32".into()));
    }
    g.push(("read_iolog".into(), flags.trace.display().to_string()));
    g.push(("replay_time_scale".into(), format!("{}", flags.time_scale * 100.0)));
    if flags.no_stall {
        g.push(("replay_no_stall".into(), "1".into()));
    }
    g.extend(jobs.global.iter().cloned());
    g
}
