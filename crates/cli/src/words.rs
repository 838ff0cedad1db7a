//! Setting fio-style job options apart from a command's own flags, before
//! clap parses the rest. Which words are the command's is read from its clap
//! definition; whether a job option may stand alone (`--time_based`) from the
//! option table's kinds. As in fio, `--name` starts a new job and options
//! before the first `--name` apply to every job.

use crate::error::CliError;
use crate::sources::Pairs;
use storbench_workload::options::{canonical_name, core, Kind};
use storbench_workload::units::parse_bool;

/// Job options from the command line.
#[derive(Debug, Default, PartialEq)]
pub struct JobArgs {
    /// Options before the first `--name`.
    pub global: Pairs,
    /// One list per `--name`.
    pub jobs: Vec<Pairs>,
}

/// The command's own words (for clap, with `_` in flag names turned into
/// `-`) and the job options among `words`.
pub fn split(command: &clap::Command, words: &[String]) -> Result<(Vec<String>, JobArgs), CliError> {
    // Built, so that clap's own --help is one of the command's flags.
    let mut command = command.clone();
    command.build();
    let command = &command;
    let mut own = Vec::new();
    let mut jobs = JobArgs::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        let Some(flag) = w.strip_prefix("--").filter(|f| !f.is_empty()) else {
            own.push(w.clone());
            continue;
        };
        let (key, inline) = match flag.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (flag, None),
        };
        if let Some(arg) = own_flag(command, key) {
            let long = key.replace('_', "-").to_ascii_lowercase();
            match arg {
                Own::Value | Own::Optional => {
                    let bare = inline.is_none();
                    own.push(inline.map_or_else(|| format!("--{long}"), |v| format!("--{long}={v}")));
                    // A value that may be left out (--watch-ceph's ceph.conf) is
                    // the next word only when it names one: `--watch-ceph jobs.toml`
                    // leaves the job file a job file; another name goes after '='.
                    let optional = matches!(arg, Own::Optional);
                    if bare && i < words.len() && (!optional || words[i].ends_with(".conf")) {
                        own.push(words[i].clone());
                        i += 1;
                    }
                }
                // A switch may be given a boolean, as job flags may: --quiet 0.
                Own::Switch => {
                    if let Some(n) = words.get(i).filter(|n| inline.is_none() && not_a_boolean(n)) {
                        return Err(CliError::usage(format!("--{key} is a flag: give 0 or 1 (or nothing for 1), not '{n}'")));
                    }
                    let value = match inline {
                        Some(v) => Some(v),
                        None if words.get(i).is_some_and(|n| parse_bool(n).is_ok()) => {
                            i += 1;
                            Some(words[i - 1].clone())
                        }
                        None => None,
                    };
                    let on = value.map_or(Ok(true), |v| parse_bool(&v)).map_err(|e| CliError::usage(format!("--{key}: {e}")))?;
                    if on {
                        own.push(format!("--{long}"));
                    }
                }
            }
            continue;
        }
        // Kept as spelled (aliases are resolved where options are applied),
        // so a front end whose names differ (fio's filesize) still sees it.
        let spelled = key.to_ascii_lowercase().replace('-', "_");
        let name = canonical_name(key);
        let value = match inline {
            Some(v) => v,
            None => take_value(&name, key, words, &mut i)?,
        };
        match (name.as_str(), jobs.jobs.last_mut()) {
            ("name", _) => jobs.jobs.push(vec![("name".into(), value)]),
            (_, Some(job)) => job.push((spelled, value)),
            (_, None) => jobs.global.push((spelled, value)),
        }
    }
    Ok((own, jobs))
}

/// One of the command's own flags: one that takes a value, one whose value
/// may be left out, or a switch.
enum Own {
    Value,
    Optional,
    Switch,
}

/// Whether `key` is one of the command's own long flags (any case, dashes or
/// underscores), and which kind.
fn own_flag(command: &clap::Command, key: &str) -> Option<Own> {
    let key = key.replace('_', "-").to_ascii_lowercase();
    command
        .get_arguments()
        .find(|a| a.get_long() == Some(key.as_str()) || a.get_all_aliases().is_some_and(|al| al.contains(&key.as_str())))
        .map(|a| match (a.get_action().takes_values(), a.get_num_args().is_some_and(|n| n.min_values() == 0)) {
            (true, true) => Own::Optional,
            (true, false) => Own::Value,
            (false, _) => Own::Switch,
        })
}

/// The value of option `name` given as `--key`: the next word, or for an
/// option that is a flag, 1 unless a boolean follows.
fn take_value(name: &str, key: &str, words: &[String], i: &mut usize) -> Result<String, CliError> {
    let flag = is_flag(name);
    let next = words.get(*i);
    if let Some(n) = next.filter(|n| flag && not_a_boolean(n)) {
        return Err(CliError::usage(format!("--{key} is a flag: give 0 or 1 (or nothing for 1), not '{n}'")));
    }
    let takes = match next {
        Some(n) if flag => parse_bool(n).is_ok() && !n.is_empty(),
        Some(n) => !n.starts_with("--"),
        None => false,
    };
    if takes {
        *i += 1;
        return Ok(words[*i - 1].clone());
    }
    if flag {
        return Ok("1".into());
    }
    Err(CliError::usage(format!("--{key} needs a value (e.g. --{key}=...)")))
}

/// A word after a flag that is meant as its value but is not a boolean (`2`,
/// `maybe`): not another option, not a path (a job file), not 0/1/yes/no.
fn not_a_boolean(word: &str) -> bool {
    !word.starts_with("--") && parse_bool(word).is_err() && !word.contains(['.', '/'])
}

/// Options that may stand alone on a command line: the table's flags, core
/// and engine options alike.
fn is_flag(name: &str) -> bool {
    if let Some(o) = core(name) {
        return o.info.kind == Kind::Flag;
    }
    storbench_engine::registry().iter().flat_map(|f| f.options()).any(|o| o.name == name && o.kind == Kind::Flag)
}

/// The command line with the values of secret options replaced: the index
/// keeps it for `--resume`, and secrets never reach the results.
pub fn redacted(words: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut hide_next = false;
    for w in words {
        if hide_next {
            out.push(REDACTED.to_string());
            hide_next = false;
            continue;
        }
        match secret_flag(w) {
            // `--secret_key=V`, `-KV`: the value is in the word.
            Some(flag) if w.len() > flag.len() => {
                out.push(format!("{flag}{}{REDACTED}", if w[flag.len()..].starts_with('=') { "=" } else { "" }))
            }
            Some(_) => {
                out.push(w.clone());
                hide_next = true;
            }
            None => out.push(w.clone()),
        }
    }
    out
}

/// Option names whose values are secrets: the engines' own, and fio's http
/// engine's (`storbench fio --http_s3_key=...`).
const SECRET_WORDS: &[&str] = &["http_s3_key", "http_swift_auth_token", "http_s3_security_token"];

/// The flag part of `w` when it names a secret (any case, dashes or
/// underscores; swift-bench's `-K`).
pub fn secret_flag(w: &str) -> Option<&str> {
    if let Some(rest) = w.strip_prefix("--") {
        let name = rest.split('=').next().unwrap_or("");
        let canon = name.to_ascii_lowercase().replace('-', "_");
        let secret = storbench_workload::spec::SECRET_OPTIONS.contains(&canon.as_str()) || SECRET_WORDS.contains(&canon.as_str());
        return secret.then(|| &w[..2 + name.len()]);
    }
    (w.starts_with("-K")).then(|| &w[..2])
}

pub const REDACTED: &str = "<redacted>";

/// The command a run records: the process's, or while a study runs one of
/// its steps in this process, the step's own (`storbench sweep ...`), so a
/// run's provenance names what made it.
static STEP_COMMAND: std::sync::Mutex<Option<Vec<String>>> = std::sync::Mutex::new(None);

pub fn command_line() -> Vec<String> {
    match STEP_COMMAND.lock().ok().and_then(|c| c.clone()) {
        Some(words) => std::iter::once("storbench".to_string()).chain(words).collect(),
        None => std::env::args().collect(),
    }
}

/// Set (or with `None` clear) the step a study is running.
pub fn set_step_command(words: Option<Vec<String>>) {
    if let Ok(mut c) = STEP_COMMAND.lock() {
        *c = words;
    }
}

#[cfg(test)]
mod redaction_tests {
    use super::*;

    #[test]
    fn secrets_in_any_spelling_are_replaced() {
        let w: Vec<String> =
            ["--Secret-Key", "S1", "--http_s3_key=S2", "-K", "S3", "-KS4", "--key=S5", "--bucket", "b", "--http_swift_auth_token", "S6"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        let r = redacted(&w).join(" ");
        for s in ["S1", "S2", "S3", "S4", "S5", "S6"] {
            assert!(!r.contains(s), "{s} in {r}");
        }
        assert!(r.contains("--bucket b") && r.contains("--http_s3_key=<redacted>") && r.contains("-K<redacted>"), "{r}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn run_command() -> clap::Command {
        crate::cli::Cli::command().find_subcommand("run").unwrap().clone()
    }

    #[test]
    fn global_options_then_jobs_by_name() {
        let (own, a) =
            split(&run_command(), &words("--ioengine=io_uring --runtime 5 --name a --rw randread --name b --time_based --bs 8k")).unwrap();
        assert!(own.is_empty());
        assert_eq!(a.global, vec![("ioengine".into(), "io_uring".into()), ("runtime".into(), "5".into())]);
        assert_eq!(a.jobs.len(), 2);
        assert_eq!(a.jobs[1], vec![("name".into(), "b".into()), ("time_based".into(), "1".into()), ("bs".into(), "8k".into())]);
    }

    #[test]
    fn own_flags_go_to_clap_in_either_spelling() {
        let (own, a) =
            split(&run_command(), &words("--output_format fio-json --results-dir out jobs.toml --direct 0 --time_based")).unwrap();
        assert_eq!(own, words("--output-format fio-json --results-dir out jobs.toml"));
        assert_eq!(a.global, vec![("direct".into(), "0".into()), ("time_based".into(), "1".into())]);
        assert!(split(&run_command(), &words("--bs")).is_err());
    }

    #[test]
    fn switches_take_a_boolean_as_job_flags_do() {
        let (own, _) = split(&run_command(), &words("--quiet 1 --fio-allow-unsupported=0 --Quiet jobs.toml")).unwrap();
        assert_eq!(own, words("--quiet --quiet jobs.toml"));
        let (own, _) = split(&run_command(), &words("--quiet 0 jobs.toml")).unwrap();
        assert_eq!(own, words("jobs.toml"));
    }

    #[test]
    fn a_flag_takes_only_a_boolean() {
        let e = split(&run_command(), &words("--direct 2 --name a")).unwrap_err();
        assert!(e.message.contains("--direct is a flag") && e.message.contains("'2'"), "{}", e.message);
    }

    #[test]
    fn engine_flags_may_stand_alone() {
        let (_, a) = split(&run_command(), &words("--registerfiles --insecure 0 --bucket b")).unwrap();
        assert_eq!(a.global, vec![("registerfiles".into(), "1".into()), ("insecure".into(), "0".into()), ("bucket".into(), "b".into())]);
    }
}
