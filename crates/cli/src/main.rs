/// A line to standard output that never panics: `println!` panics when the
/// reader has gone (`storbench engines | head -1`, `storbench rados bench |
/// head`), which would end a measuring run mid-way. A line the reader no
/// longer takes is dropped (a run's results are in its directory); any other
/// failure (a full disk) is kept and ends the command with exit code 3
/// ([`streams`]).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::streams::checked($crate::streams::Stream::Stdout, writeln!(std::io::stdout(), $($arg)*));
    }};
}

/// [`out!`] without the line's end (`print!`'s place).
macro_rules! out_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::streams::checked($crate::streams::Stream::Stdout, write!(std::io::stdout(), $($arg)*));
    }};
}

/// [`out!`] for standard error (`eprintln!`'s place): a run piped with
/// `2>&1 | head` goes on when its reader has gone, and keeps its results.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::streams::checked($crate::streams::Stream::Stderr, writeln!(std::io::stderr(), $($arg)*));
    }};
}

/// [`say!`] without the line's end.
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::streams::checked($crate::streams::Stream::Stderr, write!(std::io::stderr(), $($arg)*));
    }};
}

mod ceilings;
mod cli;
mod commands;
mod compat;
mod disrupt;
mod error;
mod fleet;
mod journal;
mod k8s;
mod numbers;
mod output;
mod own_session;
mod precondition;
mod progress;
mod session;
mod sources;
mod streams;
mod watch;
mod words;

use clap::{CommandFactory, FromArgMatches};
use error::CliError;

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let as_fio = called_as_fio();
    // A measuring command measures in a session of its own, as fio's jobs do.
    own_session::measure_apart(as_fio, &words);
    let result = if as_fio { compat::fio::run(&words) } else { dispatch(&words) };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            // One line, always: scripts read the first line of stderr.
            let text = e.message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
            say!("storbench: error: {text}");
            e.code
        }
    };
    std::process::exit(with_streams(code));
}

/// A standard stream that could not be written (not a closed pipe) is a
/// system failure: said in one line, and a command that would have exited 0
/// exits 3 (another failure's code is kept: it says more).
fn with_streams(code: i32) -> i32 {
    let Some(what) = streams::failure() else { return code };
    say!("storbench: error: {what}: the output is incomplete (results already written to files stay)");
    if code == 0 {
        error::EXIT_SYSTEM
    } else {
        code
    }
}

/// Through a link named `fio` (fio's drop-in for tools that run fio), the
/// whole command line is fio's.
fn called_as_fio() -> bool {
    let argv0 = std::env::args_os().next().unwrap_or_default();
    std::path::Path::new(&argv0).file_name().is_some_and(|n| n == "fio")
}

pub(crate) fn dispatch(words: &[String]) -> Result<i32, CliError> {
    // `run` and `swift-bench` take job or engine options beside their own
    // flags: they set those apart before clap parses the rest.
    match words.first().map(String::as_str) {
        None => return commands::run::run(&[]),
        Some("run") => return commands::run::run(&words[1..]),
        Some("sweep") => return commands::sweep::run(&words[1..]),
        Some("replay") => return commands::replay::run(&words[1..]),
        Some("slo") => return commands::slo::run(&words[1..]),
        Some("swift-bench") => return compat::swift_bench::run(&words[1..]),
        Some("cleanup") => return commands::cleanup::run(&words[1..]),
        Some("fio") => return compat::fio::run(&words[1..]),
        _ => {}
    }
    let argv = std::iter::once("storbench".to_string()).chain(words.iter().cloned());
    let cli = match cli::Cli::command().try_get_matches_from(argv).and_then(|m| cli::Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidSubcommand => {
            let word = e.get(clap::error::ContextKind::InvalidSubcommand).map(|v| v.to_string()).unwrap_or_else(|| words[0].clone());
            return Err(unknown_command(&word, words));
        }
        Err(e) => return clap_failed(e, ""),
    };
    use cli::Command::*;
    match cli.command {
        None | Some(Run(_)) | Some(SwiftBench(_)) => commands::run::run(&[]),
        Some(Sweep(_)) => commands::sweep::run(&[]),
        Some(Study(a)) => commands::study::run(&a),
        Some(Replay(_)) => commands::replay::run(&[]),
        Some(Slo(_)) => commands::slo::run(&[]),
        Some(Fio(_)) => compat::fio::run(&[]),
        Some(Cleanup(_)) => commands::cleanup::run(&[]),
        Some(Show(a)) => commands::show::show(&a),
        Some(Export(a)) => commands::export::run(&a),
        Some(Compare(a)) => commands::compare::run(&a),
        Some(Efficiency(a)) => commands::efficiency::run(&a),
        Some(Baseline(a)) => commands::baseline::run(&a),
        Some(Report(a)) => commands::report::run(&a),
        Some(Rbd { command: cli::RbdCommand::Bench(a) }) => compat::rbd_bench::run(&a),
        Some(Rados(a)) => compat::rados(&a),
        Some(Help { topic }) => commands::help::help(&topic),
        Some(Agent(a)) => fleet::agent(&a),
        Some(Fleet { command: cli::FleetCommand::K8s(a) }) => k8s::run(&a),
        Some(Engines) => commands::help::engines(),
        Some(Version) => {
            out!("storbench {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
    }
}

/// Help and version are printed by clap (exit 0); errors become one line.
fn clap_failed(e: clap::Error, command: &str) -> Result<i32, CliError> {
    match error::from_clap(&e, command) {
        Some(err) => Err(err),
        None => {
            let _ = e.print();
            Ok(0)
        }
    }
}

/// An unknown command (or subcommand: `rados mkpool`), with the nearest known one.
fn unknown_command(word: &str, words: &[String]) -> CliError {
    let mut cmd = cli::Cli::command();
    // The command the unknown word was given to.
    for w in words.iter().take_while(|w| w.as_str() != word) {
        if let Some(sub) = cmd.find_subcommand(w).cloned() {
            cmd = sub;
        }
    }
    let names: Vec<String> = cmd.get_subcommands().map(|c| c.get_name().to_string()).collect();
    let hint = storbench_workload::options::suggest(word, names.iter().map(String::as_str))
        .map(|s| format!(" Did you mean '{s}'?"))
        .unwrap_or_default();
    CliError::usage(format!("unknown command '{word}'.{hint} See `storbench help`."))
}

/// A command that takes job options among its words (run, sweep, slo): its
/// own flags parsed by clap, and the job options set apart. `Err(code)`
/// inside: clap answered (help, version) and the command is done.
pub fn parse_with_jobs<T: FromArgMatches>(name: &str, words: &[String]) -> Result<Result<(T, words::JobArgs), i32>, CliError> {
    let cmd = cli::Cli::command().find_subcommand(name).cloned().expect("a command of the tree");
    let (own, jobs) = words::split(&cmd, words)?;
    Ok(parse_command::<T>(name, own)?.map(|flags| (flags, jobs)))
}

/// Parse a command's own words with its clap definition.
pub fn parse_command<T: FromArgMatches>(name: &str, own: Vec<String>) -> Result<Result<T, i32>, CliError> {
    let cmd = cli::Cli::command().find_subcommand(name).cloned().expect("a command of the tree").bin_name(format!("storbench {name}"));
    let argv = std::iter::once(name.to_string()).chain(own);
    match cmd.try_get_matches_from(argv).and_then(|m| T::from_arg_matches(&m)) {
        Ok(t) => Ok(Ok(t)),
        Err(e) => clap_failed(e, &format!("{name} ")).map(Err),
    }
}
