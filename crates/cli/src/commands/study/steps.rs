//! A study's steps: each question on each of its configurations and lines
//! becomes one storbench command into its own directory,
//! `<question>/<config>/<line>`, with the seconds it is expected to take.

use super::file::{substitute, Checked, Config, StudyFile, DEFAULT_LINE};
use crate::error::CliError;
use std::collections::BTreeMap;
use std::time::Duration;
use storbench_model::study::{Ask, Step, StepState};
use storbench_workload::units;

/// A step's command: the real words (run) and their redacted copy (kept).
pub struct Planned {
    pub step: Step,
    pub words: Vec<String>,
}

pub fn plan(file: &StudyFile) -> Result<Vec<Planned>, CliError> {
    let mut out = Vec::new();
    for q in file.questions.iter().filter(|q| q.ask != Ask::Compare) {
        for key in &q.configs {
            let config = file.configs.iter().find(|c| &c.key == key).expect("configs checked when read");
            let vars = file.vars_for(config).map_err(|e| CliError::usage(format!("configuration {}: {e}", config.key)))?;
            for (line, line_args) in lines(q) {
                let dir = format!("{}/{}/{}", q.raw.id, config.key, line);
                let words = command(q, config, &line_args, &dir, &vars)
                    .map_err(|e| CliError::usage(format!("question {}, {} {line}: {}", q.raw.id, config.key, e.message)))?;
                let estimate = q.raw.estimate.unwrap_or_else(|| estimate(q.ask, &words, q.repeat));
                let step = Step {
                    question: q.raw.id.clone(),
                    config: config.key.clone(),
                    line,
                    dir,
                    command: crate::words::redacted(&words),
                    state: StepState::Pending,
                    seconds: 0.0,
                    estimate,
                };
                out.push(Planned { step, words });
            }
        }
    }
    Ok(out)
}

/// A question's lines with their words; one line named `all` when it has none.
pub fn lines(q: &Checked) -> Vec<(String, Vec<String>)> {
    if q.raw.line.is_empty() {
        return vec![(DEFAULT_LINE.to_string(), Vec::new())];
    }
    q.raw.line.iter().map(|l| (l.name.clone(), l.args.clone())).collect()
}

/// `storbench <ask> <config args> <question args> <line args> <extras>
/// --results-dir DIR --quiet`: the configuration's words first, as global
/// options, so a question's `--name` jobs all get them. A tool's words
/// begin with its command (`swift-bench ...`), so there the configuration's
/// words come after the question's, as options of that command, and the
/// results directory and `--quiet` only where the command takes them
/// (`cleanup` takes neither, `rados bench` no `--quiet`).
fn command(q: &Checked, config: &Config, line: &[String], dir: &str, vars: &BTreeMap<String, String>) -> Result<Vec<String>, CliError> {
    let mut words: Vec<String> = match q.ask {
        Ask::Sweep => vec!["sweep".into()],
        Ask::Slo => vec!["slo".into()],
        Ask::Baseline => vec!["baseline".into()],
        Ask::Run | Ask::Ramp => vec!["run".into()],
        Ask::Tool | Ask::Compare => Vec::new(),
    };
    let given: Vec<&String> = match q.ask {
        Ask::Tool => q.raw.args.iter().chain(&config.args).chain(line).collect(),
        _ => config.args.iter().chain(&q.raw.args).chain(line).collect(),
    };
    let mut after_secret_flag = false;
    for w in given {
        // A study keeps its variables (study.json, the report): a secret's
        // value never comes from one, in `--key=${v}` or `--key ${v}`.
        let flag = crate::words::secret_flag(w);
        if w.contains("${") && (after_secret_flag || flag.is_some_and(|f| w.len() > f.len())) {
            return Err(CliError::usage(format!(
                "'{w}': a secret's value cannot come from a study variable (study.json and the report keep variables); give it through the environment (AWS_SECRET_ACCESS_KEY, ST_KEY, OS_PASSWORD...)"
            )));
        }
        after_secret_flag = flag.is_some_and(|f| w.len() == f.len());
        words.push(substitute(w, vars)?);
    }
    if q.ask == Ask::Sweep {
        for s in &q.raw.sweep {
            words.push("--sweep".into());
            words.push(substitute(s, vars)?);
        }
        if q.repeat > 1 {
            words.push(format!("--repeat={}", q.repeat));
        }
    }
    // The study owns where results go and how quiet a step is.
    if let Some(w) = words.iter().find(|w| *w == "--results-dir" || w.starts_with("--results-dir=") || *w == "--output") {
        return Err(CliError::usage(format!("{w}: a study places every step's results itself; leave it out")));
    }
    let (results_dir, quiet) = match q.ask {
        Ask::Tool => (takes(&words, "results-dir"), takes(&words, "quiet")),
        _ => (true, true),
    };
    if results_dir {
        words.push("--results-dir".into());
        words.push(format!("<{dir}>"));
    }
    if quiet {
        words.push("--quiet".into());
    }
    Ok(words)
}

/// Whether the storbench command these words name takes `--LONG`: its
/// clap command found by the subcommand names among the words (`rados -p P
/// bench ...` is `rados bench`), global options included.
fn takes(words: &[String], long: &str) -> bool {
    use clap::CommandFactory;
    let mut root = crate::cli::Cli::command();
    root.build();
    let mut at = &root;
    for w in words {
        if let Some(sub) = at.find_subcommand(w) {
            at = sub;
        }
    }
    !std::ptr::eq(at, &root) && at.get_arguments().any(|a| a.get_long() == Some(long))
}

/// Where the results directory goes in a step's words (placed when run,
/// under the study's directory).
pub fn place(words: &[String], study_dir: &std::path::Path) -> Vec<String> {
    words
        .iter()
        .map(|w| match w.strip_prefix('<').and_then(|w| w.strip_suffix('>')) {
            Some(rel) => study_dir.join(rel).display().to_string(),
            None => w.clone(),
        })
        .collect()
}

/// Seconds a step should take, from its words: the points of a sweep times
/// each run's time (runtime and ramp_time, or the time a tool is given),
/// plus a couple of seconds each for setting up and cleaning up.
fn estimate(ask: Ask, words: &[String], repeat: u32) -> f64 {
    const SETUP: f64 = 2.0;
    let runtime = time_of(words, "runtime").unwrap_or(10.0) + time_of(words, "ramp_time").unwrap_or(0.0);
    match ask {
        Ask::Sweep => points(words) as f64 * repeat as f64 * (runtime + SETUP),
        Ask::Slo => {
            let probes = number_of(words, "max-probes").unwrap_or(10.0).min(12.0);
            probes * (time_of(words, "probe-time").unwrap_or(5.0) + SETUP)
        }
        Ask::Ramp => count_of(words, "users").max(1) as f64 * (runtime + SETUP),
        Ask::Baseline => 2.0 * (time_of(words, "runtime").unwrap_or(20.0) + 2.0 + SETUP),
        // A tool's time: the first bare number (rados bench SECONDS), else its runtime.
        Ask::Tool => words.iter().find_map(|w| w.parse::<f64>().ok()).unwrap_or(runtime) + SETUP,
        Ask::Run | Ask::Compare => runtime + SETUP,
    }
}

/// The value of `--NAME=V`, `--NAME V` or `NAME=V` among a command's words.
fn value_of<'a>(words: &'a [String], name: &str) -> Option<&'a str> {
    let flag = format!("--{name}");
    words.iter().enumerate().rev().find_map(|(i, w)| {
        let w = w.as_str();
        if w == flag {
            return words.get(i + 1).map(String::as_str);
        }
        w.strip_prefix(&format!("{flag}=")).or_else(|| w.strip_prefix(&format!("{name}=")))
    })
}

fn time_of(words: &[String], name: &str) -> Option<f64> {
    value_of(words, name).and_then(|v| units::parse_duration(v, Duration::from_secs(1)).ok()).map(|d| d.as_secs_f64())
}

fn number_of(words: &[String], name: &str) -> Option<f64> {
    value_of(words, name).and_then(|v| v.parse().ok())
}

fn count_of(words: &[String], name: &str) -> usize {
    value_of(words, name).map_or(1, |v| v.split(',').count())
}

/// A sweep's points: the product of its dimensions' value counts.
fn points(words: &[String]) -> usize {
    let mut n = 1;
    for (i, w) in words.iter().enumerate() {
        let spec = if w == "--sweep" { words.get(i + 1).map(String::as_str) } else { w.strip_prefix("--sweep=") };
        if let Some(d) = spec.and_then(|s| crate::commands::sweep::dimension(s).ok()) {
            n *= d.values.len().max(1);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn estimates_follow_the_words() {
        let sweep = words("sweep --runtime=3 --ramp_time 1 --sweep bs=4k,8k,16k --sweep iodepth=1,2");
        assert_eq!(estimate(Ask::Sweep, &sweep, 2), 6.0 * 2.0 * 6.0);
        assert_eq!(estimate(Ask::Tool, &words("rados bench 10 write"), 1), 12.0);
        assert_eq!(estimate(Ask::Ramp, &words("run --ssbench f.json --users 1,2,4 --runtime 5"), 1), 21.0);
        assert_eq!(estimate(Ask::Slo, &words("slo --probe-time 2 --max-probes 4"), 1), 16.0);
    }

    #[test]
    fn a_tool_gets_the_results_directory_and_quiet_only_where_its_command_takes_them() {
        assert!(takes(&words("rados -p rbd bench 10 write"), "results-dir"), "a global option of rados");
        assert!(!takes(&words("rados -p rbd bench 10 write"), "quiet"));
        assert!(takes(&words("swift-bench -c 4"), "results-dir"));
        assert!(takes(&words("run --name a"), "quiet") && takes(&words("baseline /dev/sdb"), "quiet"));
        assert!(!takes(&words("cleanup --ioengine=rbd --rbdname=a"), "results-dir"));
        assert!(!takes(&words("cleanup --ioengine=rbd --rbdname=a"), "quiet"));
        assert!(!takes(&words("no-such-command"), "results-dir"));
    }

    #[test]
    fn a_tool_takes_its_configuration_words_after_its_command() {
        let text = r#"
[study]
title = "t"
[configs.a]
args = ["--auth=${auth}"]
[vars]
auth = "http://a/auth/v1.0"
[[question]]
id = "sb"
title = "swift-bench"
ask = "tool"
args = ["swift-bench", "-c", "2"]
[[question]]
id = "c"
title = "cleanup"
ask = "tool"
args = ["cleanup", "--ioengine=rbd", "--rbdname=x"]
"#;
        let file = super::super::file::parse(text, &[], None).unwrap();
        let steps = plan(&file).unwrap();
        assert_eq!(steps[0].words, words("swift-bench -c 2 --auth=http://a/auth/v1.0 --results-dir <sb/a/all>"));
        assert_eq!(steps[1].words, words("cleanup --ioengine=rbd --rbdname=x --auth=http://a/auth/v1.0"));
    }
}
