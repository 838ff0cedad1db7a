//! `storbench cleanup`: remove the objects a run left behind (its cleanup
//! was cut short by a Ctrl-C, or the store failed during it). The run names
//! this command, with the engine options that say where, in its warnings.
//! Only names that start with the given prefix are touched; the prefix is
//! required and never empty. Ctrl-C stops it too.

use crate::error::*;
use crate::sources;
use crate::words;
use clap::CommandFactory;
use storbench_engine::{EngineOptions, TargetRequest};
use storbench_runner::interrupt::Scope;
use storbench_workload::JobSpec;

pub fn run(args: &[String]) -> Result<i32, CliError> {
    let cmd = crate::cli::Cli::command().find_subcommand("cleanup").cloned().expect("cleanup is a command");
    let (own, jobs) = words::split(&cmd, args)?;
    let _: crate::cli::CleanupArgs = match crate::parse_command("cleanup", own)? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if !jobs.jobs.is_empty() {
        return Err(CliError::usage("cleanup takes an engine and its options, not --name jobs"));
    }
    let mut spec = sources::build(&JobSpec::default(), &jobs.global, &[])?.remove(0);
    spec.name = "cleanup".into();
    let Some(prefix) = spec.objects.as_ref().and_then(|o| o.prefix.clone()) else {
        return Err(CliError::usage(
            "cleanup needs --object_prefix PREFIX: the objects whose names start with it are removed (the run's warning gives it)",
        ));
    };
    let factory = storbench_engine::find(&spec.ioengine).filter(|f| f.capabilities().objects).ok_or_else(|| {
        CliError::usage(format!("--ioengine {}: cleanup removes objects; give an object engine (rados, s3, swift)", spec.ioengine))
    })?;
    let options: EngineOptions = spec.engine_options.clone();
    let config = factory.configure(&options)?;
    let scope = Scope::begin();
    let tally = config.remove_objects(&prefix, &|| scope.interrupted())?;
    println!("removed {} objects whose names start with '{prefix}'", tally.removed);
    if tally.failed > 0 {
        let why = tally.first_failure.as_deref().unwrap_or("unknown");
        eprintln!("storbench: {} objects could not be removed (the first: {why}); run the command again", tally.failed);
    }
    if scope.interrupted() {
        eprintln!("storbench: interrupted: objects whose names start with '{prefix}' may remain; run the command again");
        return Ok(EXIT_INTERRUPTED);
    }
    if tally.failed > 0 || tally.stopped {
        return Ok(EXIT_IO_ERRORS);
    }
    // A bucket or container storbench created for the run goes once it is empty.
    let request = TargetRequest {
        size: None,
        writes: true,
        allow_overwrite: false,
        objects: spec.objects.as_ref(),
        object_prefix: Some(&prefix),
        written_before: false,
        verifies: false,
        transfers: None,
        stop: &|| scope.interrupted(),
    };
    if let Some(note) = config.finish_target(&request, true)? {
        eprintln!("storbench: {note}");
    }
    Ok(0)
}
