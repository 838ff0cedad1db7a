//! fio's command line (`storbench fio ...`, or this binary called as `fio`
//! through a link): job options as `--name=job --rw=randread ...` (options
//! before the first `--name` apply to every job) and job files, read with
//! fio's precedence; fio's output formats on standard output or `--output`;
//! fio's exit codes. A script or tool that runs fio runs storbench
//! unchanged: it reads the JSON it always read.

use crate::cli::FioFlags;
use crate::error::*;
use crate::session::{execute, RunSetup};
use crate::sources::fio::{self as fio_file, text, Line, Reading, NEXT_FILE};
use crate::words::{self, JobArgs};
use crate::{output, progress};
use clap::CommandFactory;
use std::io::Write;
use std::path::{Path, PathBuf};
use storbench_model::{RunResult, RunSet};
use storbench_workload::JobSpec;

/// The fio release whose command line and outputs these are; tools check it.
pub const FIO_VERSION: &str = "fio-3.33";

/// fio exits 1 on bad input, whatever the cause; runs exit as [`exit_code`] says.
pub fn run(words: &[String]) -> Result<i32, CliError> {
    run_fio(words).map_err(|mut e| {
        if e.code != EXIT_INTERRUPTED {
            e.code = 1;
        }
        e
    })
}

fn run_fio(words: &[String]) -> Result<i32, CliError> {
    let cmd = crate::cli::Cli::command().find_subcommand("fio").cloned().expect("fio is a command");
    let (own, jobs) = words::split(&cmd, &fio_words(&cmd, words))?;
    let flags: FioFlags = match crate::parse_command("fio", own)? {
        Ok(f) => f,
        Err(code) => return Ok(code),
    };
    if flags.version {
        out!("{FIO_VERSION}");
        return Ok(0);
    }
    let lines = job_lines(&jobs, &flags.job_files)?;
    if !lines.iter().any(|l| l.text.starts_with('[') && l.text != "[global]") {
        return Err(CliError::usage("No job(s) defined: give --name=JOB with job options, or a job file"));
    }
    // As in fio, the job names its target: writing to an existing file or an
    // idle device is what was asked (a device in use is still refused).
    let base = JobSpec { allow_overwrite: true, ..JobSpec::default() };
    let none = Vec::new();
    let reading =
        Reading { base: &base, cli_global: &none, allow_unsupported: flags.allow_unsupported, file_wins: true, sections: &flags.section };
    let parsed = fio_file::parse(lines, &reading)?;
    if flags.parse_only {
        storbench_runner::build_plan(parsed.specs)?;
        return Ok(0);
    }
    let formats = formats(&flags)?;
    let (dir, keep) = match &flags.results_dir {
        Some(d) => (d.clone(), true),
        None => (scratch_dir(), false),
    };
    let quiet = flags.eta.as_deref() != Some("always");
    let mut observer = progress::Live::new(quiet);
    let parameters = [("tool".to_string(), "fio".to_string())].into();
    let setup = RunSetup {
        notes: parsed.notes,
        results_dir: Some(dir),
        parameters,
        logs_outside: true,
        allow_exec: flags.allow_exec,
        ..RunSetup::default()
    };
    let (result, dir) = execute(parsed.specs, setup, &mut observer)?;
    // As fio, what ended a job is said on standard error, apart from the report.
    for j in &result.jobs {
        for f in &j.failures {
            say!("fio: job '{}': {f}", j.name);
        }
    }
    let written = write_report(&result, &formats, flags.output.as_deref());
    finish_dir(&dir, &result, keep || written.is_err())?;
    written?;
    // Where fio writes its logs: prefixes are relative to the current directory.
    output::write_fio_logs(Path::new("."), &result)?;
    Ok(exit_code(&result))
}

/// fio options that take no value on its command line: the word after
/// them is never theirs (`fio --thread job.fio`).
const SET_ONLY: &[&str] =
    &["group_reporting", "thread", "new_group", "exitall", "stonewall", "wait_for_previous", "time_based", "norandommap"];

/// fio takes `-name=x` as `--name=x`, and an option given bare (`--thread`,
/// `--group_reporting`) as set: spelled here so that the shared splitter,
/// which asks a bare option that is not a flag for a value, takes them.
fn fio_words(cmd: &clap::Command, words: &[String]) -> Vec<String> {
    let own: Vec<String> = cmd.get_arguments().filter_map(|a| a.get_long().map(str::to_string)).collect();
    let mut out = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let w = match w.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') && rest.len() > 1 => format!("--{rest}"),
            _ => w.clone(),
        };
        let key = w.strip_prefix("--").filter(|k| !k.contains('='));
        let next_is_option = words.get(i + 1).is_none_or(|n| n.starts_with('-'));
        match key {
            Some(k) if (next_is_option || SET_ONLY.contains(&k)) && !own.contains(&k.replace('_', "-")) => out.push(format!("{w}=1")),
            _ => out.push(w),
        }
    }
    out
}

/// The command line's jobs first, then each job file (each from fresh
/// defaults, the command line's global options kept, and a new group).
fn job_lines(jobs: &JobArgs, files: &[PathBuf]) -> Result<Vec<Line>, CliError> {
    let at = || "command line".to_string();
    let mut lines = vec![Line { at: at(), text: "[global]".into() }];
    let pair = |(k, v): &(String, String)| Line { at: at(), text: format!("{k}={v}") };
    lines.extend(jobs.global.iter().map(pair));
    for job in &jobs.jobs {
        let name = job.iter().find(|(k, _)| k == "name").map_or("job", |(_, v)| v.as_str());
        lines.push(Line { at: at(), text: format!("[{name}]") });
        lines.extend(job.iter().filter(|(k, _)| k != "name").map(pair));
    }
    for path in files {
        let body = storbench_workload::input::read_text(path, "job file", storbench_workload::input::JOB_FILE_LIMIT)
            .map_err(|e| CliError::usage(format!("unable to open '{}' job file: {e}", path.display())))?;
        lines.push(Line { at: at(), text: NEXT_FILE.into() });
        lines.extend(text::lines(&body, path)?);
    }
    Ok(lines)
}

fn formats(flags: &FioFlags) -> Result<Vec<&'static dyn storbench_report::Exporter>, CliError> {
    match (&flags.output_format, flags.minimal) {
        (_, true) => Ok(vec![fio_format("terse")?]),
        (Some(f), _) => f.0.iter().map(|n| storbench_report::find(n).ok_or_else(|| not_available(n))).collect(),
        (None, _) => Ok(vec![fio_format("normal")?]),
    }
}

fn not_available(name: &str) -> CliError {
    CliError::usage(format!("output format {name} is not available"))
}

/// The format fio calls `name` (its defaults: normal, and terse for --minimal).
fn fio_format(name: &str) -> Result<&'static dyn storbench_report::Exporter, CliError> {
    storbench_report::find_fio(name).ok_or_else(|| not_available(name))
}

/// Without --results-dir the run's directory is scratch, removed once the
/// report is out (kept, and named, if the report could not be written).
fn scratch_dir() -> PathBuf {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    std::env::temp_dir().join(format!("storbench-fio-{}-{}", output::utc_stamp(secs), std::process::id()))
}

fn write_report(r: &RunResult, formats: &[&'static dyn storbench_report::Exporter], to: Option<&Path>) -> Result<(), CliError> {
    let runs = RunSet::one(r.clone());
    let mut body = Vec::new();
    for f in formats {
        f.write(&runs, &mut body).map_err(|e| CliError::system(format!("cannot render {}: {e}", f.name())))?;
    }
    match to {
        Some(path) => std::fs::write(path, &body).map_err(|e| CliError::system(format!("cannot write --output {}: {e}", path.display()))),
        // A closed pipe must not turn a finished run into a failure; a full
        // disk under `> FILE` does (main's exit 3).
        None => {
            crate::streams::checked(crate::streams::Stream::Stdout, std::io::stdout().lock().write_all(&body));
            Ok(())
        }
    }
}

fn finish_dir(dir: &Path, r: &RunResult, keep: bool) -> Result<(), CliError> {
    if keep {
        output::write_all(dir, r)?;
        say!("storbench: results in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
}

/// As fio: the number of jobs that ended with an error (0 when none), 128
/// after an interrupt.
pub fn exit_code(r: &RunResult) -> i32 {
    if r.interrupted {
        return 128;
    }
    r.jobs.iter().filter(|j| j.failing_errors() > 0 || !j.failures.is_empty()).count().min(127) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn single_dash_and_bare_options_are_spelled_for_the_splitter() {
        let cmd = crate::cli::Cli::command().find_subcommand("fio").cloned().unwrap();
        let got = fio_words(&cmd, &w("-name=a --group_reporting --rw randread --minimal --thread job.fio --filesize 1m"));
        assert_eq!(got, w("--name=a --group_reporting=1 --rw randread --minimal --thread=1 job.fio --filesize 1m"));
    }
}
