//! Command-line flags, in two phases: raw words -> [`RunArgs`] (storbench's own
//! flags plus fio-style job options, unchecked) -> job specs (checked by the
//! shared option table). As in fio, `--name` starts a new job and options
//! before the first `--name` apply to every job.

use crate::error::CliError;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Normal,
    Json,
    FioJson,
}

/// Everything `storbench run` was told.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub format: Option<OutputFormat>,
    pub results_dir: Option<PathBuf>,
    pub fio_file: Option<PathBuf>,
    pub fio_allow_unsupported: bool,
    pub job_file: Option<PathBuf>,
    pub ssbench: Option<PathBuf>,
    /// `--users 4,8,16`: a ramp of user counts for an ssbench scenario.
    pub users: Vec<u32>,
    pub quiet: bool,
    /// Options before the first `--name`.
    pub global: Vec<(String, String)>,
    /// One list per `--name`.
    pub jobs: Vec<Vec<(String, String)>>,
}

impl RunArgs {
    pub fn has_job_options(&self) -> bool {
        !self.global.is_empty() || !self.jobs.is_empty()
    }
}

/// Job options that are flags: `--time_based` alone means 1.
const FLAG_OPTIONS: &[&str] = &[
    "time_based",
    "direct",
    "buffered",
    "zero_buffers",
    "allow_overwrite",
    "stonewall",
    "wait_for_previous",
    "unlink",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
];

pub fn parse_run(words: &[String]) -> Result<RunArgs, CliError> {
    let mut a = RunArgs::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if !w.starts_with("--") {
            if a.job_file.is_some() {
                return Err(CliError::usage(format!("unexpected argument '{w}': only one job file can be given")));
            }
            a.job_file = Some(PathBuf::from(w));
            continue;
        }
        let (key, inline) = match w[2..].split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (w[2..].to_string(), None),
        };
        let canon = key.replace('-', "_").to_ascii_lowercase();
        let mut value = |flag: bool| -> Result<String, CliError> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            let next = words.get(i);
            let takes = match next {
                Some(n) if flag => storbench_workload::units::parse_bool(n).is_ok() && !n.is_empty(),
                Some(n) => !n.starts_with("--"),
                None => false,
            };
            if takes {
                i += 1;
                return Ok(words[i - 1].clone());
            }
            if flag {
                return Ok("1".into());
            }
            Err(CliError::usage(format!("--{key} needs a value (e.g. --{key}=...)")))
        };
        match canon.as_str() {
            "output_format" => a.format = Some(parse_format(&value(false)?)?),
            "output" | "results_dir" | "output_dir" => a.results_dir = Some(value(false)?.into()),
            "fio" => a.fio_file = Some(value(false)?.into()),
            "fio_allow_unsupported" => a.fio_allow_unsupported = parse_flag(&key, &value(true)?)?,
            "job" | "jobfile" => a.job_file = Some(value(false)?.into()),
            "ssbench" => a.ssbench = Some(value(false)?.into()),
            "users" => a.users = parse_users(&value(false)?)?,
            "quiet" => a.quiet = parse_flag(&key, &value(true)?)?,
            "name" => a.jobs.push(vec![("name".into(), value(false)?)]),
            _ => {
                let v = value(FLAG_OPTIONS.contains(&canon.as_str()))?;
                match a.jobs.last_mut() {
                    Some(job) => job.push((canon, v)),
                    None => a.global.push((canon, v)),
                }
            }
        }
    }
    Ok(a)
}

fn parse_users(v: &str) -> Result<Vec<u32>, CliError> {
    let users: Vec<u32> = v
        .split(',')
        .map(|u| u.trim().parse::<u32>().ok().filter(|n| *n >= 1))
        .collect::<Option<_>>()
        .ok_or_else(|| CliError::usage(format!("--users '{v}' is not a list of user counts like 4,8,16")))?;
    if users.windows(2).any(|w| w[1] <= w[0]) {
        return Err(CliError::usage(format!("--users '{v}' must grow from one step to the next")));
    }
    Ok(users)
}

fn parse_flag(key: &str, v: &str) -> Result<bool, CliError> {
    storbench_workload::units::parse_bool(v).map_err(|e| CliError::usage(format!("--{key}: {e}")))
}

fn parse_format(v: &str) -> Result<OutputFormat, CliError> {
    match v {
        "normal" | "text" => Ok(OutputFormat::Normal),
        "json" => Ok(OutputFormat::Json),
        "fio-json" | "fio_json" | "fiojson" => Ok(OutputFormat::FioJson),
        _ => Err(CliError::usage(format!("--output-format '{v}' is not one of normal, json, fio-json"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn global_options_then_jobs_by_name() {
        let a = parse_run(&words("--ioengine=io_uring --runtime 5 --name a --rw randread --name b --time_based --bs 8k")).unwrap();
        assert_eq!(a.global, vec![("ioengine".into(), "io_uring".into()), ("runtime".into(), "5".into())]);
        assert_eq!(a.jobs.len(), 2);
        assert_eq!(a.jobs[1], vec![("name".into(), "b".into()), ("time_based".into(), "1".into()), ("bs".into(), "8k".into())]);
    }

    #[test]
    fn own_flags_and_formats() {
        let a = parse_run(&words("--output-format fio-json --results-dir out jobs.toml")).unwrap();
        assert_eq!(a.format, Some(OutputFormat::FioJson));
        assert_eq!(a.results_dir, Some(PathBuf::from("out")));
        assert_eq!(a.job_file, Some(PathBuf::from("jobs.toml")));
        assert!(parse_run(&words("--output-format xml")).is_err());
        assert!(parse_run(&words("--bs")).is_err());
        assert!(parse_run(&words("a.toml b.toml")).is_err());
    }

    #[test]
    fn flag_options_take_a_boolean_only() {
        let a = parse_run(&words("--direct 0 --time_based jobs.toml")).unwrap();
        assert_eq!(a.global, vec![("direct".into(), "0".into()), ("time_based".into(), "1".into())]);
        assert_eq!(a.job_file, Some(PathBuf::from("jobs.toml")));
    }
}
