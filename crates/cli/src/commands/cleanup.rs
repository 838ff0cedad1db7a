//! `storbench cleanup`: remove what a run left behind.
//!
//! `cleanup RESULTS_DIR` reads the run's journal (a sweep's directory: every
//! run's below it) and removes what it says the run made and did not remove,
//! even if the run was killed: files it laid out (if they still carry
//! storbench's mark), its objects, the buckets, containers and images it
//! created. A run still going is refused. What was removed is recorded, so a
//! second cleanup has nothing to do.
//!
//! `cleanup --ioengine E ... --object_prefix P` removes storbench's objects
//! under a prefix (the prefix is required and never empty);
//! `cleanup --ioengine rbd --pool P --rbdname A[:B]` removes the named
//! images storbench created (those carrying its mark). Either way only
//! objects carrying storbench's mark go; others under the prefix are kept
//! and counted, unless `--force`. Ctrl-C stops it.

use crate::cli::CleanupArgs;
use crate::error::*;
use crate::journal;
use crate::sources;
use crate::words;
use clap::CommandFactory;
use std::path::{Path, PathBuf};
use storbench_engine::{EngineConfig, Removed, TargetRequest, Which};
use storbench_model::journal::{Entry, Journal, Made, State, FILE};
use storbench_runner::interrupt::Scope;
use storbench_workload::JobSpec;

pub fn run(args: &[String]) -> Result<i32, CliError> {
    let cmd = crate::cli::Cli::command().find_subcommand("cleanup").cloned().expect("cleanup is a command");
    let (own, jobs) = words::split(&cmd, args)?;
    let a: CleanupArgs = match crate::parse_command("cleanup", own)? {
        Ok(a) => a,
        Err(code) => return Ok(code),
    };
    if !jobs.jobs.is_empty() {
        return Err(CliError::usage("cleanup takes a results directory, or an engine and its options, not --name jobs"));
    }
    let which = if a.force { Which::All } else { Which::Marked };
    match a.dir {
        Some(dir) if jobs.global.is_empty() => results_dir(&dir, which, Tell::Stdout),
        Some(dir) => Err(CliError::usage(format!(
            "cleanup {}: give a results directory or --ioengine ... --object_prefix PREFIX, not both",
            dir.display()
        ))),
        None => by_prefix(&jobs.global, which),
    }
}

/// `cleanup --ioengine E ... --object_prefix P`.
fn by_prefix(options: &sources::Pairs, which: Which) -> Result<i32, CliError> {
    let mut spec = sources::build(&JobSpec::default(), options, &[])?.remove(0);
    spec.name = "cleanup".into();
    let Some(prefix) = spec.objects.as_ref().and_then(|o| o.prefix.clone()) else {
        if let Some(code) = by_name(&spec)? {
            return Ok(code);
        }
        return Err(CliError::usage(
            "cleanup needs a results directory, or --object_prefix PREFIX: storbench's objects whose names start with it are removed (the run's warning gives it)",
        ));
    };
    let factory = storbench_engine::find(&spec.ioengine).filter(|f| f.capabilities().objects).ok_or_else(|| {
        // The object engines from the registry: a hand list here had drifted.
        let objects = storbench_engine::names_where(|f| f.capabilities().objects && f.capabilities().does_io).join(", ");
        CliError::usage(format!("--ioengine {}: cleanup removes objects; give an object engine ({objects})", spec.ioengine))
    })?;
    let config = factory.configure(&spec.engine_options)?;
    let scope = Scope::begin();
    let tally = config.remove_objects(&prefix, which, &|| scope.interrupted())?;
    say_removed(&tally, &prefix, "", Tell::Stdout);
    if let Some(code) = unfinished(&tally, &prefix, &scope) {
        return Ok(code);
    }
    // A bucket or container storbench created for the run goes once it is
    // empty (one holding objects just kept is not).
    if tally.kept > 0 {
        return Ok(0);
    }
    if let Some(note) = config.finish_target(&request(Some(&prefix), &|| scope.interrupted()), true)? {
        say!("storbench: {note}");
    }
    Ok(0)
}

/// `cleanup --ioengine rbd --pool P --rbdname A[:B]`: the named targets
/// of an engine that has them (RBD images), each only if storbench made it.
/// `None`: the engine has none (objects need a prefix).
fn by_name(spec: &JobSpec) -> Result<Option<i32>, CliError> {
    let Some(factory) = storbench_engine::find(&spec.ioengine).filter(|f| !f.capabilities().objects) else { return Ok(None) };
    let config = factory.configure(&spec.engine_options)?;
    let scope = Scope::begin();
    let Some(done) = config.remove_named(&|| scope.interrupted())? else { return Ok(None) };
    for r in &done.removed {
        out!("removed {r}");
    }
    for k in &done.kept {
        say!("storbench: {k}");
    }
    Ok(Some(0))
}

/// Where what was removed is said: standard output for `storbench
/// cleanup` (it is the command's result), standard error when a run cleans
/// up after itself (`--rules`: its standard output may be a JSON verdict).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tell {
    Stdout,
    Stderr,
}

impl Tell {
    fn line(self, text: std::fmt::Arguments) {
        match self {
            Tell::Stdout => out!("{text}"),
            Tell::Stderr => say!("storbench: {text}"),
        }
    }
}

/// What a removal by prefix did, on stdout; kept objects on stderr.
fn say_removed(tally: &Removed, prefix: &str, whose: &str, tell: Tell) {
    tell.line(format_args!("{whose}removed {} objects whose names start with '{prefix}'", tally.removed));
    if tally.kept > 0 {
        say!("storbench: {whose}{} objects under '{prefix}' were not written by storbench: kept; --force removes them too", tally.kept);
    }
}

/// An exit code if the removal did not finish (failures, a stop, Ctrl-C).
fn unfinished(tally: &Removed, prefix: &str, scope: &Scope) -> Option<i32> {
    if tally.failed > 0 {
        let why = tally.first_failure.as_deref().unwrap_or("unknown");
        say!("storbench: {} objects could not be removed (the first: {why}); run the command again", tally.failed);
    }
    if scope.interrupted() {
        say!("storbench: interrupted: objects whose names start with '{prefix}' may remain; run the command again");
        return Some(EXIT_INTERRUPTED);
    }
    (tally.failed > 0 || tally.stopped).then_some(EXIT_IO_ERRORS)
}

/// A target request that names only the prefix (what tearing down needs);
/// `stop` (a Ctrl-C) ends its waits on the storage.
fn request<'a>(prefix: Option<&'a str>, stop: &'a dyn Fn() -> bool) -> TargetRequest<'a> {
    TargetRequest {
        size: None,
        writes: true,
        allow_overwrite: false,
        objects: None,
        object_prefix: prefix,
        written_before: false,
        verifies: false,
        transfers: None,
        stop,
    }
}

/// `cleanup RESULTS_DIR`: every journal in it (a run's, or a sweep's runs').
pub fn results_dir(dir: &Path, which: Which, tell: Tell) -> Result<i32, CliError> {
    if !dir.is_dir() {
        return Err(CliError::usage(format!("cleanup {}: no such results directory", dir.display())));
    }
    let found = journals(dir);
    if found.is_empty() {
        return Err(CliError::usage(format!(
            "cleanup {}: no {FILE} in it or below (runs record what they make there); to remove objects by name give \
             --ioengine ... --object_prefix PREFIX",
            dir.display()
        )));
    }
    let mut docs = Vec::new();
    for path in found {
        let doc = journal::read(&path)?;
        if !doc.finished && journal::is_running(&doc.process) {
            return Err(CliError::usage(format!(
                "cleanup {}: its run is still going (pid {}): stop it first (Ctrl-C cleans up itself)",
                path.parent().unwrap_or(dir).display(),
                doc.process.pid
            )));
        }
        docs.push((path, doc));
    }
    let scope = Scope::begin();
    let mut code = 0;
    for (path, doc) in docs {
        code = code.max(clean_run(&path, doc, which, &scope, tell)?);
        if scope.interrupted() {
            return Ok(EXIT_INTERRUPTED);
        }
    }
    Ok(code)
}

/// Journals in `dir` and the directories below it (a sweep's points,
/// repeats), in order.
fn journals(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0)];
    while let Some((d, depth)) = stack.pop() {
        if d.join(FILE).is_file() {
            out.push(d.join(FILE));
        }
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        let mut below: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir() && !p.is_symlink()).collect();
        below.sort();
        // A sweep's runs are one or two levels down (points, repeats).
        if depth < 3 {
            stack.extend(below.into_iter().rev().map(|p| (p, depth + 1)));
        }
    }
    out
}

/// Clean up after one run; its journal records what went.
fn clean_run(path: &Path, mut doc: Journal, which: Which, scope: &Scope, tell: Tell) -> Result<i32, CliError> {
    let run = path.parent().map_or_else(|| path.display().to_string(), |p| p.display().to_string());
    if doc.clean() {
        tell.line(format_args!("{run}: nothing to do: nothing the run made is left"));
        return Ok(0);
    }
    let elsewhere = doc.process.host != storbench_runner::hostname();
    let mut code = 0;
    for i in 0..doc.entries.len() {
        if doc.entries[i].state == State::Done || scope.interrupted() {
            continue;
        }
        let (done, c) = match &doc.entries[i].made {
            Made::File { path } if elsewhere => {
                say!("storbench: {run}: {} is on {}: not removed from here", path.display(), doc.process.host);
                (false, EXIT_IO_ERRORS)
            }
            Made::File { path } => clean_file(&run, path, tell),
            Made::Store { .. } => clean_store(&run, &doc.entries[i], which, scope, tell)?,
        };
        if done {
            doc.entries[i].state = State::Done;
        }
        code = code.max(c);
        journal::write(path, &doc).map_err(|e| CliError::system(format!("cannot update {}: {e}", path.display())))?;
    }
    if scope.interrupted() {
        say!("storbench: {run}: interrupted: run the command again for what is left");
    }
    Ok(code)
}

/// A file the run laid out: removed if it still carries storbench's mark.
fn clean_file(run: &str, path: &Path, tell: Tell) -> (bool, i32) {
    if std::fs::symlink_metadata(path).is_err() {
        return (true, 0);
    }
    if !storbench_engine::files::is_marked(path) {
        say!("storbench: {run}: {} no longer carries storbench's mark: kept", path.display());
        return (true, 0);
    }
    match storbench_engine::files::remove_created(path) {
        Ok(()) => {
            tell.line(format_args!("{run}: removed {}", path.display()));
            (true, 0)
        }
        Err(e) => {
            say!("storbench: {run}: could not remove {}: {e}", path.display());
            (false, EXIT_IO_ERRORS)
        }
    }
}

/// An engine's own target: the run's objects, then what preparing made.
fn clean_store(run: &str, e: &Entry, which: Which, scope: &Scope, tell: Tell) -> Result<(bool, i32), CliError> {
    let Made::Store { engine, options, prefix, created } = &e.made else { return Ok((true, 0)) };
    let factory = storbench_engine::find(engine)
        .ok_or_else(|| CliError::usage(format!("{run}: the journal names engine '{engine}', unknown here")))?;
    let config = factory.configure(options).map_err(|err| CliError::usage(format!("{run}: {}: {err}", e.describe())))?;
    let whose = format!("{run}: job '{}'{}: ", e.job, e.agent.as_ref().map(|a| format!(" on agent {a}")).unwrap_or_default());
    if let Some(p) = prefix {
        let tally = config.remove_objects(p, which, &|| scope.interrupted())?;
        say_removed(&tally, p, &whose, tell);
        if let Some(code) = unfinished(&tally, p, scope) {
            return Ok((false, code));
        }
        if tally.kept > 0 {
            return Ok((true, 0));
        }
    }
    remove_created(&*config, &whose, prefix.as_deref(), created.as_deref(), scope, tell)
}

/// The buckets, containers and images preparing made (each engine keeps a
/// bucket or container that still holds anything).
fn remove_created(
    config: &dyn EngineConfig,
    whose: &str,
    prefix: Option<&str>,
    created: Option<&[String]>,
    scope: &Scope,
    tell: Tell,
) -> Result<(bool, i32), CliError> {
    let notes = config.remove_created(&request(prefix, &|| scope.interrupted()), created)?;
    for n in &notes {
        say!("storbench: {whose}{n}");
    }
    if notes.is_empty() {
        for c in created.into_iter().flatten() {
            tell.line(format_args!("{whose}removed {c}"));
        }
    }
    Ok((true, 0))
}
